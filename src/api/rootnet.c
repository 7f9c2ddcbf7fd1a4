/* The C API of include/rootnet.h over infer/predict (rn_predictor): argument
 * checks, options, snapshot loading and the per-handle error message. */
#include "rootnet.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "data/image/image.h"
#include "data/sets/skeleton.h"
#include "infer/predict.h"
#include "nn/calib.h"
#include "nn/net.h"
#include "nn/precision.h"
#include "nn/run_settings.h"

#ifndef RN_VERSION
#define RN_VERSION "0.1.0"
#endif

/* Largest options.size believed: beyond it the field was most likely never set. */
#define OPTIONS_MAX_SIZE 4096

struct rootnet_predictor {
    rn_params p;
    rn_params pose;         /* the PoseNet attached (sk != NULL) */
    const rn_skeleton *sk;  /* its joints, NULL: no PoseNet */
    rn_predictor pr;
    rn_predict_in base;     /* device, threads, precision, input size: copied into every call */
    rn_calib cal;           /* int8: the snapshot's calibration (SNAPSHOT.int8), base.calib points here */
    char device[32];
    rn_err err;             /* last call's message, "" after a success */
    atomic_int busy;        /* 1 while a rootnet_predict runs on this handle */
};

ROOTNET_API const char *rootnet_version(void)
{
    return RN_VERSION;
}

ROOTNET_API int rootnet_api_version(void)
{
    return ROOTNET_API_VERSION;
}

ROOTNET_API const char *rootnet_status_string(rootnet_status s)
{
    switch (s) {
    case ROOTNET_OK: return "ok";
    case ROOTNET_ERR_ARGUMENT: return "bad argument";
    case ROOTNET_ERR_SNAPSHOT: return "unusable snapshot";
    case ROOTNET_ERR_INPUT: return "unusable input";
    case ROOTNET_ERR_DEVICE: return "device cannot run the model";
    case ROOTNET_ERR_BUSY: return "predictor in use by another thread";
    }
    return "unknown status";
}

ROOTNET_API void rootnet_options_init(rootnet_options *o)
{
    if (o) *o = (rootnet_options){.size = sizeof *o};
}

static void copy_msg(char *msg, size_t len, const rn_err *err)
{
    if (msg && len) snprintf(msg, len, "%s", err->msg);
}

/* The caller's options over the defaults, as many bytes as it says it has. */
static rootnet_status read_options(rootnet_options *o, const rootnet_options *in, rn_err *err)
{
    rootnet_options_init(o);
    if (!in) return ROOTNET_OK;
    if (in->size < sizeof *o || in->size > OPTIONS_MAX_SIZE) {
        rn_err_set(err, "options.size %zu: expected %zu (set it with rootnet_options_init)", in->size, sizeof *o);
        return ROOTNET_ERR_ARGUMENT;
    }
    const unsigned char *extra = (const unsigned char *)in + sizeof *o;
    for (size_t i = 0; i < in->size - sizeof *o; i++)
        if (extra[i]) {
            rn_err_set(err, "options: a field at byte %zu is set, which this library (rootnet %s, API %d) does not "
                       "know; upgrade the library", sizeof *o + i, RN_VERSION, ROOTNET_API_VERSION);
            return ROOTNET_ERR_ARGUMENT;
        }
    *o = *in;
    o->size = sizeof *o;
    return ROOTNET_OK;
}

/* Device, threads, precision and input size into h->base. */
static rootnet_status apply_options(rootnet_predictor *h, const rootnet_options *o, rn_err *err)
{
    if (o->threads < 0 || o->backbone < 0 || o->input_size < 0) {
        rn_err_set(err, "options: threads %d, backbone %d, input_size %d: none may be negative", o->threads,
                   o->backbone, o->input_size);
        return ROOTNET_ERR_ARGUMENT;
    }
    if (o->device && strlen(o->device) >= sizeof h->device) {
        rn_err_set(err, "options.device '%.40s...': unknown device", o->device);
        return ROOTNET_ERR_DEVICE;
    }
    rn_precision prec;
    if (rn_precision_parse(o->precision, RN_PREC_INFER, &prec, err)) {
        rn_err_prefix(err, "options");
        return ROOTNET_ERR_ARGUMENT;
    }
    if (rn_policy_check_device(rn_policy_get(prec), o->device, err)) return ROOTNET_ERR_DEVICE;
    rn_policy_say_emulated(rn_policy_get(prec), o->device);
    if (o->device) snprintf(h->device, sizeof h->device, "%s", o->device);
    h->base.device = o->device ? h->device : NULL;
    h->base.threads = o->threads;
    h->base.precision = prec;
    return ROOTNET_OK;
}

static rootnet_status load(rootnet_predictor *h, const char *snapshot, const rootnet_options *o, rn_err *err)
{
    rn_run_settings s;
    int rc = rn_weights_load_eval(&h->p, &s, snapshot, o->backbone, o->input_size, 0, err);
    if (rc) return rc == RN_WEIGHTS_EMERGE ? ROOTNET_ERR_ARGUMENT : ROOTNET_ERR_SNAPSHOT;
    if (h->p.net->skeleton) {
        rn_err_set(err, "%s: a %s; rootnet_create takes a RootNet (attach a PoseNet with rootnet_set_pose)", snapshot,
                   h->p.net->title);
        rn_params_free(&h->p);
        return ROOTNET_ERR_SNAPSHOT;
    }
    h->base.input_size = s.input_size;
    if (h->base.precision == RN_PREC_INT8) {
        char path[4200];
        if (rn_calib_load(&h->cal, rn_calib_path(path, sizeof path, snapshot), err)) {
            rn_params_free(&h->p);
            rn_err_prefix(err, "precision int8 needs the calibration beside the snapshot (rootnet calibrate)");
            return ROOTNET_ERR_SNAPSHOT;
        }
        h->base.calib = &h->cal;
    }
    rn_predictor_init(&h->pr, &h->p);
    return ROOTNET_OK;
}

ROOTNET_API rootnet_status rootnet_create(rootnet_predictor **out, const char *snapshot, const rootnet_options *opts,
                                          char *msg, size_t msg_len)
{
    rn_err err = {{0}};
    if (msg && msg_len) msg[0] = '\0';
    if (!out || !snapshot) {
        rn_err_set(&err, "rootnet_create: %s is NULL", out ? "snapshot" : "out");
        copy_msg(msg, msg_len, &err);
        return ROOTNET_ERR_ARGUMENT;
    }
    *out = NULL;
    rootnet_options o;
    rootnet_predictor *h = rn_xcalloc(1, sizeof *h);
    atomic_init(&h->busy, 0);
    rootnet_status st = read_options(&o, opts, &err);
    if (!st) st = apply_options(h, &o, &err);
    if (!st) st = load(h, snapshot, &o, &err);
    if (st) {
        copy_msg(msg, msg_len, &err);
        free(h);
        return st;
    }
    *out = h;
    return ROOTNET_OK;
}

ROOTNET_API void rootnet_destroy(rootnet_predictor *h)
{
    if (!h) return;
    rn_predictor_free(&h->pr);
    rn_params_free(&h->p);
    if (h->base.calib) rn_calib_free(&h->cal);
    if (h->sk) rn_params_free(&h->pose);
    free(h);
}

ROOTNET_API const char *rootnet_last_error(const rootnet_predictor *h)
{
    return h ? h->err.msg : "rootnet_last_error: the predictor is NULL";
}

ROOTNET_API int rootnet_input_size(const rootnet_predictor *h)
{
    return h ? h->base.input_size : 0;
}

static rootnet_status check_call(const rootnet_image *im, const rootnet_box *boxes, int n, rootnet_root *out,
                                 rn_err *err)
{
    const char *null = !im ? "image" : !im->rgb ? "image.rgb" : !boxes ? "boxes" : !out ? "out" : NULL;
    if (null) rn_err_set(err, "rootnet_predict: %s is NULL", null);
    else if (im->width < 1 || im->height < 1 || im->width > RN_IMAGE_MAX_SIDE || im->height > RN_IMAGE_MAX_SIDE)
        rn_err_set(err, "image: %d x %d: each side must be 1..%d", im->width, im->height, RN_IMAGE_MAX_SIDE);
    else if (im->stride < (size_t)3 * (size_t)im->width)
        rn_err_set(err, "image: stride %zu is below 3 * width = %zu", im->stride, (size_t)3 * (size_t)im->width);
    else if (n < 1 || n > RN_PREDICT_MAX_BOXES)
        rn_err_set(err, "%d boxes: need 1..%d", n, RN_PREDICT_MAX_BOXES);
    else
        return ROOTNET_OK;
    return ROOTNET_ERR_ARGUMENT;
}

static void copy_results(rootnet_root *out, rootnet_info *info, const rn_person_root *r, int n,
                         const rn_predict_info *pi)
{
    for (int i = 0; i < n; i++) {
        memcpy(out[i].box, r[i].box, sizeof out[i].box);
        memcpy(out[i].bbox, r[i].bbox, sizeof out[i].bbox);
        out[i].k = r[i].k;
        memcpy(out[i].img, r[i].img, sizeof out[i].img);
        memcpy(out[i].cam, r[i].cam, sizeof out[i].cam);
    }
    if (!info) return;
    *info = (rootnet_info){.default_focal = pi->default_focal, .default_princpt = pi->default_c};
    memcpy(info->focal, pi->f, sizeof info->focal);
    memcpy(info->princpt, pi->c, sizeof info->princpt);
}

/* The call proper, on a handle this thread holds. */
static rootnet_status predict(rootnet_predictor *h, const rootnet_image *image, const rootnet_box *boxes, int n,
                              const rootnet_camera *camera, rootnet_root *out, double *jimg, double *jcam,
                              rootnet_info *info)
{
    h->err.msg[0] = '\0';
    rootnet_status st = check_call(image, boxes, n, out, &h->err);
    if (st) return st;
    /* The pixels are only read; rn_image's px is not const because decoding writes it. */
    rn_image view = {.w = image->width, .h = image->height, .stride = image->stride, .scale = 1,
                     .full_w = image->width, .full_h = image->height, .px = (uint8_t *)(uintptr_t)image->rgb};
    double b[RN_PREDICT_MAX_BOXES][4];
    for (int i = 0; i < n; i++) b[i][0] = boxes[i].x, b[i][1] = boxes[i].y, b[i][2] = boxes[i].w, b[i][3] = boxes[i].h;
    rn_predict_in in = h->base;
    in.image = "image";
    in.pixels = &view;
    in.boxes = (const double(*)[4])b;
    in.n = n;
    if (camera) {
        memcpy(in.f, camera->focal, sizeof in.f);
        memcpy(in.c, camera->princpt, sizeof in.c);
        in.have_c = camera->has_princpt != 0;
    }
    rn_person_root r[RN_PREDICT_MAX_BOXES];
    rn_predict_info pi;
    int rc = rn_predictor_run_pose(&h->pr, r, jimg, jcam, &pi, &in, &h->err);
    if (rc) return rc == RN_PREDICT_EMODEL ? ROOTNET_ERR_DEVICE : ROOTNET_ERR_INPUT;
    copy_results(out, info, r, n, &pi);
    return ROOTNET_OK;
}

/* rootnet_predict_file proper, on a handle this thread holds. */
static rootnet_status predict_file(rootnet_predictor *h, const char *path, const rootnet_box *boxes, int n,
                                   const rootnet_camera *camera, rootnet_root *out, double *jimg, double *jcam,
                                   rootnet_info *info)
{
    h->err.msg[0] = '\0';
    const char *null = !path ? "path" : !boxes ? "boxes" : !out ? "out" : NULL;
    if (null) rn_err_set(&h->err, "rootnet_predict_file: %s is NULL", null);
    else if (n < 1 || n > RN_PREDICT_MAX_BOXES) rn_err_set(&h->err, "%d boxes: need 1..%d", n, RN_PREDICT_MAX_BOXES);
    if (h->err.msg[0]) return ROOTNET_ERR_ARGUMENT;
    double b[RN_PREDICT_MAX_BOXES][4];
    for (int i = 0; i < n; i++) b[i][0] = boxes[i].x, b[i][1] = boxes[i].y, b[i][2] = boxes[i].w, b[i][3] = boxes[i].h;
    rn_predict_in in = h->base;
    in.image = path;
    in.pixels = NULL;
    in.boxes = (const double(*)[4])b;
    in.n = n;
    if (camera) {
        memcpy(in.f, camera->focal, sizeof in.f);
        memcpy(in.c, camera->princpt, sizeof in.c);
        in.have_c = camera->has_princpt != 0;
    }
    if (!(in.f[0] > 0 && in.f[1] > 0) && rn_predict_exif_focal(in.f, path, &h->err) < 0) return ROOTNET_ERR_INPUT;
    rn_person_root r[RN_PREDICT_MAX_BOXES];
    rn_predict_info pi;
    int rc = rn_predictor_run_pose(&h->pr, r, jimg, jcam, &pi, &in, &h->err);
    if (rc) return rc == RN_PREDICT_EMODEL ? ROOTNET_ERR_DEVICE : ROOTNET_ERR_INPUT;
    copy_results(out, info, r, n, &pi);
    return ROOTNET_OK;
}

/* Calls on one handle must not overlap: claim takes the handle (0 when another call holds it: that call is
 * refused, touching nothing, not even the message); release gives it back and passes st on. */
static int claim(rootnet_predictor *h) { return !atomic_exchange_explicit(&h->busy, 1, memory_order_acquire); }

static rootnet_status release(rootnet_predictor *h, rootnet_status st)
{
    atomic_store_explicit(&h->busy, 0, memory_order_release);
    return st;
}

ROOTNET_API rootnet_status rootnet_predict_file(rootnet_predictor *h, const char *path, const rootnet_box *boxes,
                                                int n, const rootnet_camera *camera, rootnet_root *out,
                                                rootnet_info *info)
{
    if (!h) return ROOTNET_ERR_ARGUMENT;
    if (!claim(h)) return ROOTNET_ERR_BUSY;
    return release(h, predict_file(h, path, boxes, n, camera, out, NULL, NULL, info));
}

ROOTNET_API rootnet_status rootnet_predict(rootnet_predictor *h, const rootnet_image *image, const rootnet_box *boxes,
                                           int n, const rootnet_camera *camera, rootnet_root *out,
                                           rootnet_info *info)
{
    if (!h) return ROOTNET_ERR_ARGUMENT;
    if (!claim(h)) return ROOTNET_ERR_BUSY;
    return release(h, predict(h, image, boxes, n, camera, out, NULL, NULL, info));
}

/* The PoseNet at path into h (the one held before freed), or h as it was with err set. */
static rootnet_status set_pose(rootnet_predictor *h, const char *path)
{
    h->err.msg[0] = '\0';
    rn_params q;
    rn_run_settings s;
    const rn_skeleton *sk = NULL;
    if (path) {
        int rc = rn_weights_load_eval(&q, &s, path, 0, h->base.input_size, 0, &h->err);
        if (rc) return ROOTNET_ERR_SNAPSHOT;
        sk = q.net->skeleton ? rn_skeleton_find(q.net->skeleton) : NULL;
        if (!sk || sk->J != q.net->K) {
            rn_err_set(&h->err, "%s: %s", path, q.net->skeleton ? "a PoseNet of an unknown joint set"
                                                              : "a RootNet; rootnet_set_pose takes a PoseNet");
            rn_params_free(&q);
            return ROOTNET_ERR_SNAPSHOT;
        }
    }
    rn_predictor_set_pose(&h->pr, NULL);
    if (h->sk) rn_params_free(&h->pose);
    h->sk = sk;
    if (sk) h->pose = q, rn_predictor_set_pose(&h->pr, &h->pose);
    return ROOTNET_OK;
}

ROOTNET_API rootnet_status rootnet_set_pose(rootnet_predictor *h, const char *path)
{
    if (!h) return ROOTNET_ERR_ARGUMENT;
    if (!claim(h)) return ROOTNET_ERR_BUSY;
    return release(h, set_pose(h, path));
}

ROOTNET_API int rootnet_pose_joints(const rootnet_predictor *h)
{
    return h && h->sk ? h->sk->J : 0;
}

ROOTNET_API const char *rootnet_pose_joint_name(const rootnet_predictor *h, int j)
{
    return h && h->sk && j >= 0 && j < h->sk->J ? h->sk->joints[j] : NULL;
}

ROOTNET_API int rootnet_pose_bones(const rootnet_predictor *h, int *pairs, int max)
{
    if (!h || !h->sk) return 0;
    for (int b = 0; pairs && b < max && b < h->sk->nbones; b++)
        pairs[2 * b] = h->sk->bones[b][0], pairs[2 * b + 1] = h->sk->bones[b][1];
    return h->sk->nbones;
}

/* The joints' arrays and the PoseNet are there: ROOTNET_OK, else why not in h->err. */
static rootnet_status check_pose(rootnet_predictor *h, const double *jimg, const double *jcam)
{
    h->err.msg[0] = '\0';
    if (!h->sk) rn_err_set(&h->err, "no PoseNet attached: call rootnet_set_pose first");
    else if (!jimg || !jcam) rn_err_set(&h->err, "rootnet_predict_pose: %s is NULL", !jimg ? "joints_img" : "joints_cam");
    return h->err.msg[0] ? ROOTNET_ERR_ARGUMENT : ROOTNET_OK;
}

ROOTNET_API rootnet_status rootnet_predict_pose(rootnet_predictor *h, const rootnet_image *image,
                                                const rootnet_box *boxes, int n, const rootnet_camera *camera,
                                                rootnet_root *out, double *joints_img, double *joints_cam,
                                                rootnet_info *info)
{
    if (!h) return ROOTNET_ERR_ARGUMENT;
    if (!claim(h)) return ROOTNET_ERR_BUSY;
    rootnet_status st = check_pose(h, joints_img, joints_cam);
    return release(h, st ? st : predict(h, image, boxes, n, camera, out, joints_img, joints_cam, info));
}

ROOTNET_API rootnet_status rootnet_predict_pose_file(rootnet_predictor *h, const char *path, const rootnet_box *boxes,
                                                     int n, const rootnet_camera *camera, rootnet_root *out,
                                                     double *joints_img, double *joints_cam, rootnet_info *info)
{
    if (!h) return ROOTNET_ERR_ARGUMENT;
    if (!claim(h)) return ROOTNET_ERR_BUSY;
    rootnet_status st = check_pose(h, joints_img, joints_cam);
    return release(h, st ? st : predict_file(h, path, boxes, n, camera, out, joints_img, joints_cam, info));
}
