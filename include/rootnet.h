/* rootnet.h: the C API of rootnet for embedding. A predictor holds a RootNet
 * snapshot's model; given a decoded RGB image, each person's box and the
 * camera intrinsics, it returns each person's root (the authors' demo.py),
 * and with a PoseNet attached (rootnet_set_pose, below) each person's joints.
 *
 *   #include <rootnet.h>
 *   rootnet_options o;
 *   rootnet_options_init(&o);                   // defaults; o.size = sizeof o
 *   o.threads = 2;
 *   char msg[256];
 *   rootnet_predictor *p;
 *   if (rootnet_create(&p, "snapshot.safetensors", &o, msg, sizeof msg)) { fprintf(stderr, "%s\n", msg); ... }
 *   rootnet_image img = {.rgb = pixels, .width = w, .height = h, .stride = 3 * w};   // RGB8, row-major
 *   rootnet_box boxes[2] = {{40, 30, 60, 150}, {200, 10, 90, 200}};                 // x, y, w, h in pixels
 *   rootnet_camera cam = {.focal = {1480, 1480}, .princpt = {w / 2.0, h / 2.0}, .has_princpt = 1};
 *   rootnet_root roots[2];
 *   if (rootnet_predict(p, &img, boxes, 2, &cam, roots, NULL))
 *       fprintf(stderr, "%s\n", rootnet_last_error(p));
 *   else
 *       printf("depth %.0f mm, camera X %.0f mm\n", roots[0].img[2], roots[0].cam[0]);
 *   rootnet_destroy(p);
 *
 * Build: cc app.c $(pkg-config --cflags --libs rootnet)
 *
 * Per box: the authors' process_bbox (clip to the image, square, x1.25),
 * k = sqrt(2000 * 2000 * fx * fy / area), the crop, the network, x, y mapped
 * back to the image, depth = gamma * k, camera X = (x - cx) / fx * Z, likewise Y.
 * Depth is tied to the focal length. Without one (camera NULL or focal 0) the
 * authors' 1500 px is used, which is right only for a camera of that focal:
 * depth_true = depth * sqrt(fx * fy) / 1500 (X, Y and Z scale alike).
 *
 * Threads: a predictor is used by one thread at a time (calls on one handle
 * must not overlap; its error message and buffers are per handle). A call
 * made while another is in flight on the same handle is refused with
 * ROOTNET_ERR_BUSY (an atomic flag), never run on the shared buffers. Different
 * predictors share nothing and may run concurrently on different threads:
 * the library keeps no global state. Compute threads (options.threads) are
 * set per call on the calling thread and restored afterwards.
 *
 * Ownership: everything passed in is borrowed for the call only (the pixels,
 * boxes, strings); results are written into the caller's arrays; a handle
 * is freed by rootnet_destroy. Strings returned by the library are constant
 * (version, status) or owned by the handle (last error, valid until the next
 * call on it). No call exits or prints; failures are a status and a message.
 * Running out of memory, or a broken internal invariant, aborts the process
 * (as everywhere in rootnet).
 *
 * ABI: the soname is librootnet.so.0. rootnet_options starts with its size,
 * so fields can be added at its end: a program built against an older header
 * passes the smaller size (the new fields take their defaults); a newer
 * program on an older library is refused only if it sets a field the library
 * does not know. The other structs are fixed; growth there comes as new calls.
 */
#ifndef ROOTNET_H
#define ROOTNET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ROOTNET_API __attribute__((visibility("default")))
#else
#define ROOTNET_API
#endif

/* Version of this header's API (the options struct and calls): 2. 1: the roots; 2: the PoseNet calls added
 * (rootnet_set_pose ... rootnet_predict_pose_file): a program using them checks rootnet_api_version() >= 2. */
#define ROOTNET_API_VERSION 2

typedef enum rootnet_status {
    ROOTNET_OK = 0,
    ROOTNET_ERR_ARGUMENT = 1, /* a NULL or malformed argument, an unknown option value */
    ROOTNET_ERR_SNAPSHOT = 2, /* the snapshot cannot be read or is not a RootNet (PoseNet: rootnet_set_pose) model */
    ROOTNET_ERR_INPUT = 3,    /* the image, a box or the intrinsics are unusable (the message names which) */
    ROOTNET_ERR_DEVICE = 4,   /* the device cannot run the model (unknown device, precision it lacks) */
    ROOTNET_ERR_BUSY = 5,     /* another thread's call on this predictor is in flight; nothing done, no message set */
} rootnet_status;

typedef struct rootnet_predictor rootnet_predictor; /* opaque */

typedef struct rootnet_options {
    size_t size;           /* sizeof(rootnet_options) as the caller was built: set by rootnet_options_init */
    const char *device;    /* "cpu" (NULL: the default) or "ref" (plain C, slow) */
    int threads;           /* compute threads; 0: OpenMP's setting (OMP_NUM_THREADS) */
    const char *precision; /* "fp32" (NULL: the default), "bf16" (conv math in bf16, where the CPU has it) or
                              "int8" (convs in int8, with the calibration SNAPSHOT.int8 of rootnet calibrate) */
    int input_size;        /* network input; 0: the snapshot's (256 for files without a config) */
    int backbone;          /* expected ResNet depth (18, 34, 50, ...); 0: whatever the snapshot holds */
} rootnet_options;

/* An 8-bit RGB image, row-major, pixel (x, y) channel c at rgb[y * stride + 3 * x + c],
 * upright as displayed: a JPEG's EXIF orientation already applied by the caller's
 * decoder (as cv2.imread does, and rootnet predict and demo do), boxes and
 * principal point in these pixels. */
typedef struct rootnet_image {
    const uint8_t *rgb;
    int width, height; /* 1..65535 each */
    size_t stride;     /* bytes per row, >= 3 * width */
} rootnet_image;

/* A person's box in pixels: top-left corner, width, height (xyxy: w = x2 - x1). */
typedef struct rootnet_box {
    double x, y, w, h;
} rootnet_box;

/* Intrinsics in pixels. focal {0, 0}: the authors' 1500; has_princpt 0: the image centre. */
typedef struct rootnet_camera {
    double focal[2];   /* fx, fy */
    double princpt[2]; /* cx, cy */
    int has_princpt;
} rootnet_camera;

typedef struct rootnet_root {
    double box[4];  /* the box as given: x, y, w, h */
    double bbox[4]; /* after the authors' process_bbox: what was cropped */
    double k;       /* the depth prior used */
    double img[3];  /* root x, y in pixels, depth in mm */
    double cam[3];  /* root in camera space: X, Y, Z in mm */
} rootnet_root;

/* What a call used (filled when a pointer is given). */
typedef struct rootnet_info {
    double focal[2], princpt[2];
    int default_focal;   /* 1: no focal given, the authors' 1500 was used (see above) */
    int default_princpt; /* 1: the image centre was used */
} rootnet_info;

/* Library version ("0.1.0-..." from git describe where built from a checkout), constant. */
ROOTNET_API const char *rootnet_version(void);
/* ROOTNET_API_VERSION of the library as built. */
ROOTNET_API int rootnet_api_version(void);
/* "ok", "bad argument", ...: a constant string for each status. */
ROOTNET_API const char *rootnet_status_string(rootnet_status s);

/* Fills o with the defaults and o->size = sizeof *o. */
ROOTNET_API void rootnet_options_init(rootnet_options *o);

/* Loads a snapshot (a rootnet .safetensors snapshot, or the authors' .pth.tar)
 * and builds the predictor in *out (NULL on failure). opts NULL: defaults.
 * On failure, a one-line message naming the file and the problem goes into
 * msg (msg_len bytes with its NUL, truncated; msg may be NULL). */
ROOTNET_API rootnet_status rootnet_create(rootnet_predictor **out, const char *snapshot, const rootnet_options *opts,
                                          char *msg, size_t msg_len);

/* Frees p and everything it holds; NULL is a no-op. */
ROOTNET_API void rootnet_destroy(rootnet_predictor *p);

/* The root of each of the n boxes (1..64) into out[0 .. n). camera NULL: the
 * authors' focal and the image centre. info may be NULL. The model is built
 * on the first call and kept; a call with more boxes than any before grows
 * it. On failure out is undefined and rootnet_last_error(p) says why; one
 * bad box fails the call (its number in the message, 1-based). */
ROOTNET_API rootnet_status rootnet_predict(rootnet_predictor *p, const rootnet_image *image, const rootnet_box *boxes,
                                           int n, const rootnet_camera *camera, rootnet_root *out,
                                           rootnet_info *info);

/* rootnet_predict on the image file at path (JPEG or PNG) loaded as `rootnet predict` loads it: a JPEG's EXIF
 * orientation applied (boxes and principal point in its upright pixels), and, when camera is NULL or its
 * focal 0, the focal from its EXIF (35 mm equivalent or focal-plane resolution; info->default_focal says when
 * none was found and 1500 was used). The same boxes give the same roots as rootnet predict. */
ROOTNET_API rootnet_status rootnet_predict_file(rootnet_predictor *p, const char *path, const rootnet_box *boxes,
                                                int n, const rootnet_camera *camera, rootnet_root *out,
                                                rootnet_info *info);

/* The message of p's last failed call, "" after a success; owned by p, valid
 * until its next call. */
ROOTNET_API const char *rootnet_last_error(const rootnet_predictor *p);

/* The network input size the predictor crops to (the snapshot's, or options.input_size). */
ROOTNET_API int rootnet_input_size(const rootnet_predictor *p);

/* PoseNet: each person's 3D joints, PoseNet's pose on the same crop placed at the RootNet's root, as the
 * authors' demo.py and `rootnet predict --pose-snapshot` do.
 *
 *   if (rootnet_set_pose(p, "posenet.safetensors")) fprintf(stderr, "%s\n", rootnet_last_error(p));
 *   int J = rootnet_pose_joints(p);                        // 18 for a Human3.6M PoseNet
 *   double *img = malloc(sizeof(double) * 2 * J * 3), *cam = malloc(sizeof(double) * 2 * J * 3);
 *   if (!rootnet_predict_pose(p, &image, boxes, 2, &cam_intr, roots, img, cam, NULL))
 *       printf("%s of person 1 at Z %.0f mm\n", rootnet_pose_joint_name(p, 0), cam[2]);
 *
 * Person i's joint j: img[(i * J + j) * 3 + 0..2] = x, y in pixels and the absolute depth in mm
 * ((z / 64 * 2 - 1) * 1000 + the root's depth); cam[...] = camera X, Y, Z in mm from the same intrinsics as
 * the roots. The same boxes and intrinsics give the same joints as rootnet predict and demo.
 *
 * Attaches the PoseNet snapshot at path (rootnet's .safetensors or the authors' .pth.tar) to p, replacing any
 * attached before; NULL detaches it. It is run at p's input size, device, threads and precision. A RootNet
 * snapshot, or a PoseNet trained at another input size: ROOTNET_ERR_SNAPSHOT, the message naming the file;
 * p keeps what it had. */
ROOTNET_API rootnet_status rootnet_set_pose(rootnet_predictor *p, const char *path);
/* Joints per person of the attached PoseNet (J); 0 with none (or p NULL). */
ROOTNET_API int rootnet_pose_joints(const rootnet_predictor *p);
/* The name of joint j (0 .. J - 1) in the authors' spelling ("Pelvis", "R_Hip", ...), constant while the
 * PoseNet is attached; NULL when j is out of range or none is. */
ROOTNET_API const char *rootnet_pose_joint_name(const rootnet_predictor *p, int j);
/* The bones drawn between the joints (the authors' skeleton): up to max pairs of joint indices into pairs
 * (2 * max ints; may be NULL with max 0); returns how many there are (0 without a PoseNet). */
ROOTNET_API int rootnet_pose_bones(const rootnet_predictor *p, int *pairs, int max);

/* rootnet_predict, and each person's joints into joints_img and joints_cam (n * J * 3 doubles each, as above).
 * Without a PoseNet attached: ROOTNET_ERR_ARGUMENT, nothing done. */
ROOTNET_API rootnet_status rootnet_predict_pose(rootnet_predictor *p, const rootnet_image *image,
                                                const rootnet_box *boxes, int n, const rootnet_camera *camera,
                                                rootnet_root *out, double *joints_img, double *joints_cam,
                                                rootnet_info *info);
/* rootnet_predict_file with the joints likewise. */
ROOTNET_API rootnet_status rootnet_predict_pose_file(rootnet_predictor *p, const char *path, const rootnet_box *boxes,
                                                     int n, const rootnet_camera *camera, rootnet_root *out,
                                                     double *joints_img, double *joints_cam, rootnet_info *info);

#ifdef __cplusplus
}
#endif

#endif
