/* rn_predict: roots of the people in one image from their boxes (the
 * authors' demo.py), with weights already in memory.
 *
 *   rn_predict_in in = {.image = "img.jpg", .boxes = boxes, .n = 2, .input_size = 256};
 *   in.f[0] = in.f[1] = 0;                       // 0: focal 1500, principal point at the centre
 *   rn_person_root out[2];
 *   if (rn_predict_roots(out, &params, &in, &err)) ...   // "img.jpg: box 2: ... outside the image"
 *   printf("x %.1f px, y %.1f px, depth %.0f mm\n", out[0].img[0], out[0].img[1], out[0].img[2]);
 *
 * Per box (x, y, w, h, pixels): the authors' process_bbox (clip to the image,
 * aspect ratio of the input, x1.25), k = sqrt(2000 * 2000 * fx * fy / area),
 * the crop without augmentation, an eval-mode forward, x, y mapped back
 * through the box, depth = gamma * k, camera X = (x - cx) / fx * Z, likewise Y.
 * Depth is tied to the focal length: with the default 1500 it is right only
 * for a camera of that focal; depth_true = depth * sqrt(fx * fy) / 1500.
 */
#ifndef RN_INFER_PREDICT_H
#define RN_INFER_PREDICT_H

#include "core/status.h"
#include "data/load/augment.h"
#include "data/sets/person_root.h"
#include "nn/device.h"
#include "nn/model.h"
#include "nn/params.h"
#include "nn/precision.h"

#define RN_DEMO_FOCAL 1500.0
#define RN_PREDICT_MAX_BOXES 64
/* Box coordinates beyond +-2^24 px are refused (images are at most 65535 px a
 * side; drawing converts corners to int). */
#define RN_PREDICT_MAX_COORD (1 << 24)

typedef struct rn_predict_in {
    const char *image;       /* JPEG or PNG; with pixels, only its name in messages */
    const rn_image *pixels;  /* NULL: read image; else this whole image, decoded at full size (borrowed) */
    const double (*boxes)[4];/* (n, 4) x, y, w, h in pixels */
    int n;                   /* 1..RN_PREDICT_MAX_BOXES */
    double f[2], c[2];       /* focal, principal point; f = 0: 1500, c = 0 with f = 0: image centre */
    int have_c;              /* 1: c is given (else the image centre) */
    int input_size;          /* network input (256), multiple of 32 */
    const char *device;      /* "cpu" (NULL) | "ref" */
    int threads;             /* compute threads, 0: OpenMP's setting */
    int fast_decode;         /* 1: JPEG decoded at 1/2..1/8 size for big boxes (rn_crop_cfg); 0: full size */
    rn_precision precision;  /* RN_PREC_FP32 (0) or RN_PREC_BF16 (rn_precision_parse with RN_PREC_INFER) */
    int no_fold;             /* 1: the unfused eval forward; 0: BN folded, fused convs (nn/model.h) */
    const struct rn_calib *calib; /* RN_PREC_INT8: the conv inputs' ranges (nn/calib.h) */
} rn_predict_in;

/* Predicts the root of every box. info may be NULL. Returns 0, or non-zero with
 * "image: problem" or "image: box i: problem" (1-based) in err (see rn_predictor_run). */
int rn_predict_roots(rn_person_root *out, rn_predict_info *info, rn_params *p, const rn_predict_in *in, rn_err *err);

/* Keeps a model, its input buffers and crop scratch between images, so that
 * a caller running many images builds the model once:
 *
 *   rn_predictor pr; rn_predictor_init(&pr, &params);
 *   for (...) if (rn_predictor_run(&pr, out, &info, &in, &err)) ...
 *   rn_predictor_free(&pr);
 *
 * The model is rebuilt only when in->n exceeds its batch (it grows to n), or
 * the device, threads, precision, folding or input size change; rows beyond n are padding
 * as a loader's short last batch's are (rn_batch_pad, data/loader.h: zero
 * images, k 1), their outputs ignored.
 * Borrows p (not freed; call rn_predictor_free and init again after changing
 * it). One thread at a time per predictor. */
typedef struct rn_predictor {
    rn_params *p;
    rn_params *pose;  /* NULL, or a PoseNet run on the same crops (rn_predictor_set_pose) */
    int pose_cap;     /* batch of pm, 0: no PoseNet model yet */
    char pose_dev[32];/* pm's device, precision */
    rn_precision pose_prec;
    rn_model pm;
    int cap;          /* batch of m, 0: no model yet */
    char device[32];  /* m's device as asked for ("" for the default) */
    rn_precision precision; /* m's policy */
    rn_model m;
    rn_crop_ctx ctx;
    int rows, size;   /* x and k hold rows crops of size x size (the model is built for them) */
    float *x, *k;     /* (rows, 3, size, size), (rows) */
} rn_predictor;

void rn_predictor_init(rn_predictor *pr, rn_params *p);
void rn_predictor_free(rn_predictor *pr);
/* rn_predict_roots with pr's model: 0, -1 (bad input), or RN_PREDICT_EMODEL
 * when the model cannot be built (device, precision), each with err set. */
#define RN_PREDICT_EMODEL (-2)
int rn_predictor_run(rn_predictor *pr, rn_person_root *out, rn_predict_info *info, const rn_predict_in *in,
                     rn_err *err);

/* With a PoseNet (borrowed; NULL: none), rn_predictor_run_pose gives each person's joints too. Its model is
 * built on the next run with the RootNet's batch, size, device, precision and folding. */
void rn_predictor_set_pose(rn_predictor *pr, rn_params *pose);
/* rn_predictor_run, and with a PoseNet set each person's joints from PoseNet on the same crop, placed at the
 * root as the authors' demo.py (and rootnet predict, infer/predict_set.h) does: jimg (n, J, 3) x, y in image
 * pixels and the absolute depth (z / bins * 2 - 1) * 1000 + the root's depth (mm); jcam (n, J, 3) camera X, Y,
 * Z (mm) from the intrinsics used (J: the PoseNet's net->K; jimg, jcam may be NULL without a PoseNet). */
int rn_predictor_run_pose(rn_predictor *pr, rn_person_root *out, double *jimg, double *jcam, rn_predict_info *info,
                          const rn_predict_in *in, rn_err *err);

/* Validates a box against a width x height image and applies process_bbox
 * (aspect 1 for a square input). Returns 0, or -1 saying why it is unusable. */
/* Person i of PoseNet model pm's last forward placed at root depth root_z as their demo.py and test
 * (eval/pose_metrics.h rn_pose_output_to_cam): img (J, 3) pixels and depth, cam (J, 3) camera mm; box is
 * the person's process_bbox box (x, y, w, h), f and c the image's focal length and principal point. */
void rn_predict_place_pose(double *img, double *cam, const rn_model *pm, int i, const float box[4], double root_z,
                           const double f[2], const double c[2]);

/* The focal of the image file at path from its EXIF, as rootnet predict reads it (upright axes, rounded to
 * float as predict holds it) into f: 1 found; 0 none or broken (f untouched); -1 unreadable (err names path). */
int rn_predict_exif_focal(double f[2], const char *path, rn_err *err);
int rn_predict_box(double out[4], const double box[4], int width, int height, rn_err *err);
/* The same with integral = 1 when the four numbers were integers (JSON
 * integers): process_bbox then truncates as numpy's integer array does. */
int rn_predict_box_int(double out[4], const double box[4], int integral, int width, int height, rn_err *err);

/* Parses "a,b,..." (exactly n finite numbers) into v; flag names the value in messages. */
int rn_predict_parse_numbers(double *v, int n, const char *s, const char *flag, rn_err *err);
/* Parses a --bbox value: "x,y,w,h", or with xyxy "x1,y1,x2,y2" (x2 >= x1,
 * y2 >= y1), converted to x, y, w, h. */
int rn_predict_parse_box(double out[4], const char *s, int xyxy, rn_err *err);

#endif
