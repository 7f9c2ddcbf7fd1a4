/* rootnet predict: roots of every detected person over many images (infer/predict_set.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "data/sets/bbox.h"
#include "cli/eval_flags.h"
#include "cli/exit.h"
#include "infer/predict.h"
#include "infer/predict_set.h"
#include "nn/calib.h"
#include "nn/net.h"
#include "nn/run_settings.h"

typedef struct predict_cli {
    const char *snapshot, *pose_snapshot, *boxes, *image_list, *image_dir, *coco_images, *intrinsics, *format, *focal, *princpt;
    const char *output, *draw;
    rn_eval_flags ev;
    rn_multi image;
    double score_thr;
    long batch, workers, log_every;
    int no_progress;
    int calibrate; /* rootnet calibrate --boxes: the fp32 fold model's conv input ranges into ev.calib (nn/calib.h) */
} predict_cli;

static volatile sig_atomic_t stop_flag; /* the signal that stops predict (on_stop) */

static int fill_opts(rn_pset_opts *o, const predict_cli *c, rn_err *err)
{
    rn_pset_opts_default(o);
    if (c->format && !strcmp(c->format, "xyxy")) o->xyxy = 1;
    else if (c->format && strcmp(c->format, "xywh"))
        return rn_err_set(err, "--bbox-format '%s': expected xywh or xyxy", c->format);
    if (rn_eval_flags_check(&c->ev, &o->precision, err)) return -1;
    if (c->focal && rn_predict_parse_numbers(o->f, 2, c->focal, "--focal", err)) return -1;
    if (c->focal && rn_focal_check(o->f, err)) return rn_err_prefix(err, "--focal");
    if (c->princpt && rn_predict_parse_numbers(o->c, 2, c->princpt, "--princpt", err)) return -1;
    if (c->princpt && rn_princpt_check(o->c, err)) return rn_err_prefix(err, "--princpt");
    if (c->focal && c->intrinsics) return rn_err_set(err, "--focal and --intrinsics exclude each other");
    if (!(c->score_thr >= 0 && c->score_thr <= 1e9)) return rn_err_set(err, "--score-thr %g: must be >= 0", c->score_thr);
    o->have_f = c->focal != NULL;
    o->have_c = c->princpt != NULL;
    o->boxes = c->boxes;
    o->images = c->image.v;
    o->n_images = c->image.n;
    o->image_list = c->image_list;
    o->image_dir = c->image_dir;
    o->coco_images = c->coco_images;
    o->intrinsics = c->intrinsics;
    o->score_thr = c->score_thr;
    o->batch = (int)c->batch;
    o->workers = (int)c->workers;
    o->threads = (int)c->ev.threads;
    o->device = c->ev.device;
    o->no_fold = c->ev.no_fold;
    o->output = c->output;
    o->draw = c->draw;
    o->progress = !c->no_progress;
    o->log_every = c->log_every;
    o->stop = &stop_flag;
    return 0;
}

static void on_stop(int sig) { stop_flag = sig; }

/* SIGTERM and SIGINT stop predict after the batch in flight (once: a second one kills it). */
static void catch_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

/* Everything cheap first (flags, device, the boxes and images, the output
 * folder), then the snapshots, then the models. */
static int run_opts(const predict_cli *c, const rn_pset_opts *o, rn_err *err);

static int run_predict(const predict_cli *c, rn_err *err)
{
    rn_pset_opts o;
    rn_calib cal;
    if (fill_opts(&o, c, err)) return RN_EXIT_USAGE;
    if (c->calibrate) {
        char path[4200];
        const char *out = c->ev.calib ? c->ev.calib : rn_calib_path(path, sizeof path, c->snapshot);
        rn_calib_init(&cal, "");
        o.observe = (rn_model_observe){rn_calib_observe, &cal};
        int rc = run_opts(c, &o, err);
        if (!rc && !cal.n) {
            rn_err_set(err, "no conv input was seen");
            rc = RN_EXIT_FAIL;
        }
        if (!rc && rn_calib_save(&cal, out, err)) rc = RN_EXIT_FAIL;
        if (!rc) printf("calibration: %d conv input ranges written to %s\n", cal.n, out);
        rn_calib_free(&cal);
        return rc;
    }
    if (rn_eval_calib_load(&c->ev, c->snapshot, &o.precision, &cal, &o.calib, err)) return RN_EXIT_FAIL;
    int rc = run_opts(c, &o, err);
    if (o.calib) rn_calib_free(&cal);
    return rc;
}

/* The run after the flags and any int8 calibration are checked. */
static int run_opts(const predict_cli *c, const rn_pset_opts *op, rn_err *err)
{
    rn_pset_opts o = *op;
    rn_pset_summary sum;
    rn_pset *ps;
    if (rn_pset_open(&ps, &sum, &o, err)) return RN_EXIT_FAIL;
    rn_params p, pp;
    rn_run_settings s;
    int lrc = rn_eval_load_nets(&p, &pp, &s, c->snapshot, c->pose_snapshot, &c->ev, err);
    if (lrc) {
        rn_pset_close(ps);
        return lrc;
    }
    if (c->calibrate) rn_calib_set_net(o.observe.ctx, p.net); /* run_predict's calibration */
    printf("predict: %s (ResNet-%d), input %d %s\n", c->snapshot, p.depth, s.input_size, rn_run_settings_size_note(&s));
    if (c->pose_snapshot)
        printf("predict: %s (PoseNet, ResNet-%d, %d joints of %s)\n", c->pose_snapshot, pp.depth, pp.net->K,
               pp.net->skeleton);
    fflush(stdout);
    catch_stop();
    if (c->pose_snapshot) rn_pset_set_pose(ps, &pp);
    int rc = rn_pset_predict(ps, &p, s.input_size, s.fast_decode, err);
    rn_params_free(&p);
    if (c->pose_snapshot) rn_params_free(&pp);
    rn_pset_close(ps);
    if (rc) return RN_EXIT_FAIL;
    rn_pset_summary_print(stdout, &sum);
    if (sum.interrupted) {
        rn_err_set(err, "interrupted by signal %d: %s and .csv hold the %zu of %zu people finished", (int)stop_flag,
                   sum.json_path, sum.people, sum.people_total);
        return RN_EXIT_FAIL;
    }
    if (sum.people) return RN_EXIT_OK;
    rn_err_set(err, "no usable person in %s (%zu detections, %zu images): the outputs hold no root", c->boxes,
               sum.detections, sum.images);
    return RN_EXIT_FAIL;
}

int rn_cmd_predict_main(int argc, char **argv, int calibrate)
{
    predict_cli c = {.batch = 16, .workers = 1, .log_every = 100, .calibrate = calibrate};
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &c.snapshot, "weights: a rootnet snapshot (safetensors) or the authors' .pth.tar"),
        RN_FLAG_STR("--pose-snapshot", &c.pose_snapshot, "a PoseNet snapshot (rootnet's or the authors' .pth.tar): each "
                    "person's 3D joints too, placed at RootNet's root"),
        RN_FLAG_STR("--boxes", &c.boxes, "detections: COCO results [{image_id, category_id, bbox, score}] or {\"file\": [[x, y, w, h, score], ...]}"),
        RN_FLAG_MULTI("--image", &c.image, "an image file (repeat); image_id = its 0-based position"),
        RN_FLAG_STR("--image-list", &c.image_list, "a file with one image per line; image_id = 0-based line order"),
        RN_FLAG_STR("--image-dir", &c.image_dir, "every .jpg/.jpeg/.png in it (sorted; image_id = position), and the folder relative names are in"),
        RN_FLAG_STR("--coco-images", &c.coco_images, "COCO file whose images [{id, file_name}] give the image ids"),
        RN_FLAG_STR("--bbox-format", &c.format, "xywh (default) or xyxy (x1,y1,x2,y2)"),
        RN_FLAG_F64("--score-thr", &c.score_thr, "keep detections with score >= this (default 0)"),
        RN_FLAG_STR("--intrinsics", &c.intrinsics, "JSON {\"file\": [fx, fy, cx, cy] or {\"focal\": [..], \"princpt\": [..]}}"),
        RN_FLAG_STR("--focal", &c.focal, "fx,fy in pixels for every image (default: per image from --intrinsics, the images file, EXIF, else 1500)"),
        RN_FLAG_STR("--princpt", &c.princpt, "cx,cy in pixels for every image (default: the image centre)"),
        RN_FLAG_STR("--output", &c.output, "output folder: bbox_root_output.json and .csv (default .)"),
        RN_FLAG_STR("--draw", &c.draw, "also draw each image's people into this folder (demo's picture, <image less .jpg>.png)"),
        RN_FLAG_RANGE("--batch", &c.batch, 1, 4096, "people per forward (default 16)"),
        RN_FLAG_RANGE("--workers", &c.workers, 1, 64, "decoding threads (default 1)"),
        RN_EVAL_FLAGS(&c.ev),
        RN_FLAG_RANGE("--log-every", &c.log_every, 0, 1L << 40, "without a terminal: a progress line every N images or 10 N people (default 100, 0: none)"),
        RN_FLAG_BOOL("--no-progress", &c.no_progress, "no progress bar or lines"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot FILE [--pose-snapshot FILE] --boxes DETS.json [--image IMG ... | --image-list F | --image-dir D | "
                      "--coco-images F] [--score-thr S] [--bbox-format xywh|xyxy] [--intrinsics F | --focal fx,fy] "
                      "[--princpt cx,cy] [--output DIR]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!c.snapshot || !c.boxes) return rn_args_misuse(flags, argv, syn, "--snapshot and --boxes are required");
    if (calibrate && ((c.ev.precision && strcmp(c.ev.precision, "fp32")) || c.ev.no_fold))
        return rn_args_misuse(flags, argv, syn, "calibrate runs the fp32 folded model: no --precision, no --no-fold");
    rn_err err = {{0}};
    int rc = run_predict(&c, &err);
    return rc ? rn_cli_fail(calibrate ? "calibrate" : "predict", rc, &err) : RN_EXIT_OK;
}

int rn_cmd_predict(int argc, char **argv) { return rn_cmd_predict_main(argc, argv, 0); }
