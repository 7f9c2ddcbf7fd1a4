/* Per-box root prediction on one image (the authors' demo.py). */
#include "infer/predict.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/image/exif_focal.h"
#include "data/image/image.h"
#include "data/load/augment.h"
#include "data/load/loader.h"
#include "data/sets/bbox.h"
#include "data/sets/skeleton.h"
#include "eval/metrics.h"
#include "eval/pose_metrics.h"
#include "infer/infer_model.h"
#include "nn/model.h"
#include "nn/net.h"

static int probe(rn_predict_info *info, const rn_predict_in *in, rn_err *err)
{
    info->orientation = 1;
    if (in->pixels) {
        info->width = in->pixels->w, info->height = in->pixels->h;
        return 0;
    }
    const char *path = in->image;
    rn_bytes b = {0};
    rn_image_info ii;
    int rc = rn_bytes_read(&b, path, err);
    if (!rc && rn_image_probe(&ii, b.p, b.n, err)) rc = rn_err_prefix(err, "%s", path);
    if (!rc && ii.is_jpeg) info->orientation = rn_exif_orientation(b.p, b.n);
    rn_bytes_free(&b);
    if (rc) return -1;
    int swap = info->orientation >= 5;
    info->width = swap ? ii.h : ii.w, info->height = swap ? ii.w : ii.h;
    return 0;
}

static void intrinsics(rn_predict_info *info, const rn_predict_in *in)
{
    info->default_focal = !(in->f[0] > 0 && in->f[1] > 0);
    info->f[0] = info->default_focal ? RN_DEMO_FOCAL : in->f[0];
    info->f[1] = info->default_focal ? RN_DEMO_FOCAL : in->f[1];
    info->default_c = !in->have_c;
    info->c[0] = in->have_c ? in->c[0] : info->width / 2.0;
    info->c[1] = in->have_c ? in->c[1] : info->height / 2.0;
}

/* Crops every box into x (n, 3, S, S) and fills box, bbox and k. */
static int crop_all(float *x, float *k, rn_crop_ctx *ctx, rn_person_root *out, const rn_predict_info *info,
                    const rn_predict_in *in, rn_err *err)
{
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    cfg.in_w = cfg.in_h = in->input_size;
    cfg.out_w = cfg.out_h = in->input_size / 4;
    cfg.fast_decode = in->fast_decode;
    cfg.exif_orient = 1;
    rn_aug aug;
    rn_aug_none(&aug);
    size_t plane = (size_t)3 * in->input_size * in->input_size;
    int rc = 0;
    for (int i = 0; !rc && i < in->n; i++) {
        rn_person_root *o = &out[i];
        memcpy(o->box, in->boxes[i], sizeof o->box);
        if (rn_predict_box(o->bbox, o->box, info->width, info->height, err)) {
            rc = rn_err_prefix(err, "%s: box %d", in->image, i + 1);
            break;
        }
        o->k = rn_bbox_k(2000.0, 2000.0, info->f[0], info->f[1], o->bbox[2] * o->bbox[3]);
        if (!(o->k <= FLT_MAX)) {
            rc = rn_err_set(err, "%s: box %d: k = %g is beyond float range (focal %g, %g)", in->image, i + 1, o->k,
                            info->f[0], info->f[1]);
            break;
        }
        k[i] = (float)o->k;
        rn_crop_in ci = {.path = in->image, .root_vis = 0};
        for (int j = 0; j < 4; j++) ci.bbox[j] = (float)o->bbox[j];
        ci.center[0] = o->bbox[0] + 0.5 * o->bbox[2], ci.center[1] = o->bbox[1] + 0.5 * o->bbox[3];
        ci.has_center = 1;
        rn_crop_out co;
        float *dst = x + (size_t)i * plane;
        rc = in->pixels ? rn_crop_sample_decoded(dst, &co, ctx, in->pixels, &ci, &aug, &cfg, err)
                        : rn_crop_sample(dst, &co, ctx, &ci, &aug, &cfg, err);
    }
    return rc;
}

/* Input buffers for at least in->n crops at in's input size (kept when they fit). */
static void reserve_inputs(rn_predictor *pr, const rn_predict_in *in)
{
    if (pr->rows >= in->n && pr->size == in->input_size) return;
    free(pr->x);
    free(pr->k);
    pr->rows = in->n, pr->size = in->input_size;
    pr->x = rn_xcalloc((size_t)pr->rows * 3 * pr->size * pr->size, sizeof *pr->x);
    pr->k = rn_xcalloc((size_t)pr->rows, sizeof *pr->k);
}

/* A model for the input buffers' batch and size with in's device, threads,
 * precision and folding: the one held when it matches, else a new one. */
static int ensure_model(rn_predictor *pr, const rn_predict_in *in, rn_err *err)
{
    const char *dev = in->device ? in->device : "";
    if (pr->cap == pr->rows && pr->m.H == pr->size && !strcmp(pr->device, dev) &&
        pr->m.opts.threads == in->threads && pr->precision == in->precision && pr->m.opts.fold == !in->no_fold)
        return 0;
    if (pr->cap) rn_model_destroy(&pr->m);
    pr->cap = 0;
    if (strlen(dev) >= sizeof pr->device) return rn_err_set(err, "device '%s': unknown", dev);
    rn_infer_cfg c = {.base = {.device = in->device, .threads = in->threads}, .precision = in->precision,
                      .fold = !in->no_fold, .batch = pr->rows, .h = pr->size, .w = pr->size, .calib = in->calib};
    if (rn_infer_model_open(&pr->m, pr->p, &c, err)) return -1;
    pr->precision = in->precision;
    snprintf(pr->device, sizeof pr->device, "%s", dev);
    pr->m.opts.device = pr->device;
    pr->cap = pr->rows;
    return 0;
}

/* The PoseNet model for the RootNet's (pr->m's) batch, size and settings: the one held when it matches. */
static int ensure_pose_model(rn_predictor *pr, rn_err *err)
{
    if (pr->pose_cap == pr->cap && pr->pm.H == pr->m.H && pr->pm.opts.threads == pr->m.opts.threads &&
        pr->pm.opts.fold == pr->m.opts.fold && pr->pose_prec == pr->precision && !strcmp(pr->pose_dev, pr->device))
        return 0;
    if (pr->pose_cap) rn_model_destroy(&pr->pm);
    pr->pose_cap = 0;
    /* no int8 calibration of a PoseNet: beside an int8 RootNet it runs in fp32 */
    rn_infer_cfg c = {.base = {.device = pr->device[0] ? pr->device : NULL, .threads = pr->m.opts.threads},
                      .precision = pr->precision == RN_PREC_INT8 ? RN_PREC_FP32 : pr->precision,
                      .fold = pr->m.opts.fold, .batch = pr->cap, .h = pr->size, .w = pr->size};
    if (rn_infer_model_open(&pr->pm, pr->pose, &c, err)) return -1;
    snprintf(pr->pose_dev, sizeof pr->pose_dev, "%s", pr->device);
    pr->pm.opts.device = pr->pose_dev;
    pr->pose_prec = pr->precision;
    pr->pose_cap = pr->cap;
    return 0;
}

void rn_predict_place_pose(double *img, double *cam, const rn_model *pm, int i, const float box[4], double root_z,
                           const double f[2], const double c[2])
{
    int J = pm->K;
    RN_ASSERT(J <= RN_SKELETON_MAX);
    rn_pose_cam_in in = {.bbox = {box[0], box[1], box[2], box[3]}, .root_z = root_z, .f = {f[0], f[1]},
                         .c = {c[0], c[1]}, .out_w = pm->OW, .out_h = pm->OH,
                         .depth_dim = rn_net_layer(pm->p->net, RN_HEAD_HEATMAP)->bins, .bbox_3d = RN_POSE_DEPTH_RANGE};
    double o[3 * RN_SKELETON_MAX];
    for (int k = 0; k < 3 * J; k++) o[k] = pm->coord[(size_t)i * 3 * J + k];
    rn_pose_output_to_cam(img, cam, o, J, &in);
}

/* PoseNet over the crops in pr->x; person i's joints placed at out[i]'s root. */
static int run_pose(rn_predictor *pr, const rn_person_root *out, double *jimg, double *jcam,
                    const rn_predict_info *info, const rn_predict_in *in, rn_err *err)
{
    if (ensure_pose_model(pr, err)) return RN_PREDICT_EMODEL;
    rn_model_forward(&pr->pm, pr->x, pr->k, 0);
    (void)rn_model_coords(&pr->pm);
    int J = pr->pm.K;
    for (int i = 0; i < in->n; i++) {
        float bb[4];
        for (int j = 0; j < 4; j++) bb[j] = (float)out[i].bbox[j];
        rn_predict_place_pose(jimg + (size_t)i * 3 * (size_t)J, jcam + (size_t)i * 3 * (size_t)J, &pr->pm, i, bb,
                              out[i].img[2], info->f, info->c);
    }
    return 0;
}

static int run_model(rn_person_root *out, const rn_predict_info *info, rn_model *m, const rn_predict_in *in,
                     rn_err *err)
{
    int rc = 0;
    for (int i = 0; i < in->n && !rc; i++) {
        float bb[4];
        for (int j = 0; j < 4; j++) bb[j] = (float)out[i].bbox[j];
        rn_eval_output_to_image(out[i].img, m->coord + 3 * i, bb, m->OW, m->OH);
        rn_eval_image_to_cam(out[i].cam, out[i].img, info->f, info->c);
        for (int j = 0; j < 3 && !rc; j++)
            if (!isfinite(out[i].img[j]) || !isfinite(out[i].cam[j]))
                rc = rn_err_set(err, "%s: box %d: the root is not finite (focal %g, %g, principal point %g, %g)",
                                in->image, i + 1, info->f[0], info->f[1], info->c[0], info->c[1]);
    }
    return rc;
}

/* Focal and principal point as given: finite, within float range (k and the
 * camera coordinates are computed from them), focal > 0. */
static int check_intrinsics(const rn_predict_in *in, rn_err *err)
{
    int have_f = in->f[0] != 0 || in->f[1] != 0;
    if (have_f && rn_focal_check(in->f, err)) return -1;
    if (in->have_c && rn_princpt_check(in->c, err)) return -1;
    return 0;
}

void rn_predictor_init(rn_predictor *pr, rn_params *p)
{
    *pr = (rn_predictor){.p = p};
}

void rn_predictor_set_pose(rn_predictor *pr, rn_params *pose)
{
    if (pr->pose_cap) rn_model_destroy(&pr->pm);
    pr->pose_cap = 0;
    pr->pose = pose;
}

void rn_predictor_free(rn_predictor *pr)
{
    if (pr->pose_cap) rn_model_destroy(&pr->pm);
    if (pr->cap) rn_model_destroy(&pr->m);
    rn_crop_ctx_free(&pr->ctx);
    free(pr->x);
    free(pr->k);
    *pr = (rn_predictor){0};
}

int rn_predictor_run(rn_predictor *pr, rn_person_root *out, rn_predict_info *info, const rn_predict_in *in,
                     rn_err *err)
{
    return rn_predictor_run_pose(pr, out, NULL, NULL, info, in, err);
}

int rn_predictor_run_pose(rn_predictor *pr, rn_person_root *out, double *jimg, double *jcam, rn_predict_info *info,
                          const rn_predict_in *in, rn_err *err)
{
    rn_predict_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (in->n < 1 || in->n > RN_PREDICT_MAX_BOXES)
        return rn_err_set(err, "%d boxes: need 1..%d", in->n, RN_PREDICT_MAX_BOXES);
    if (in->input_size < 32 || in->input_size % 32)
        return rn_err_set(err, "input size %d: must be a positive multiple of 32", in->input_size);
    if (check_intrinsics(in, err) || probe(info, in, err)) return -1;
    intrinsics(info, in);
    reserve_inputs(pr, in);
    if (crop_all(pr->x, pr->k, &pr->ctx, out, info, in, err)) return -1;
    rn_batch_pad(pr->x, pr->k, in->n, pr->rows, (size_t)3 * pr->size * pr->size);
    if (ensure_model(pr, in, err)) return RN_PREDICT_EMODEL;
    rn_model_forward(&pr->m, pr->x, pr->k, 0);
    (void)rn_model_coords(&pr->m); /* pr->m.coord: the host copy */
    int rc = run_model(out, info, &pr->m, in, err);
    return rc || !pr->pose || !jimg || !jcam ? rc : run_pose(pr, out, jimg, jcam, info, in, err);
}

int rn_predict_roots(rn_person_root *out, rn_predict_info *info, rn_params *p, const rn_predict_in *in, rn_err *err)
{
    rn_predictor pr;
    rn_predictor_init(&pr, p);
    int rc = rn_predictor_run(&pr, out, info, in, err);
    rn_predictor_free(&pr);
    return rc;
}

/* v rounded to float (stored through a float, so that no optimisation keeps the double). */
static double as_float(double v)
{
    volatile float x = (float)v;
    return x;
}

int rn_predict_exif_focal(double f[2], const char *path, rn_err *err)
{
    rn_bytes b = {0};
    rn_image_info ii;
    int found = 0;
    if (rn_bytes_read(&b, path, err) || rn_image_probe(&ii, b.p, b.n, err)) {
        rn_bytes_free(&b);
        return rn_err_prefix(err, "%s", path);
    }
    if (ii.is_jpeg) {
        int swap = rn_exif_orientation(b.p, b.n) >= 5;
        rn_exif_focal ef;
        rn_err e = {{0}};
        if (!rn_exif_focal_read(&ef, b.p, b.n, swap ? ii.h : ii.w, swap ? ii.w : ii.h, &e) && !rn_focal_check(ef.f, &e))
            f[0] = as_float(ef.f[swap]), f[1] = as_float(ef.f[!swap]), found = 1; /* floats, as predict holds them */
    }
    rn_bytes_free(&b);
    return found;
}
