/* rootnet test: a snapshot on a test set -> the authors' result file and metrics. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/data_flags.h"
#include "cli/eval_flags.h"
#include "cli/exit.h"
#include "cli/snapshot_path.h"
#include "core/afile.h"
#include "eval/results.h"
#include "infer/predict.h"
#include "infer/pose_tester.h"
#include "infer/tester.h"
#include "nn/calib.h"
#include "nn/run_settings.h"

typedef struct test_cli {
    const char *snapshot, *output, *testset, *data_dir, *result_dir, *gt, *cache_dir, *metrics_json, *bbox_root;
    rn_eval_flags ev;
    long epoch, batch, workers, limit;
    double ap_thr;
    int gt_bbox, det_bbox, json, no_progress, no_flip_test, baseline;
    int calibrate;  /* rootnet calibrate: the fp32 fold model's conv input ranges into ev.calib (nn/calib.h) */
} test_cli;

static void print_json(FILE *f, const rn_test_result *r)
{
    fprintf(f, "{\"testset\": \"%s\", \"n\": %zu, \"det_bbox\": %d", rn_eval_kind_name(r->kind), r->n, r->use_det_bbox);
    if (r->have_ap)
        fprintf(f, ", \"ap\": {\"thr\": %.17g, \"ap\": %.17g, \"tp\": %zu, \"fp\": %zu, \"n_gt\": %zu, \"skipped\": %zu}",
               r->ap.thr, r->ap.ap, r->ap.n_tp, r->ap.n_fp, r->ap.n_gt, r->ap.n_skipped);
    if (r->have_mrpe)
        fprintf(f, ", \"mrpe\": {\"total\": %.17g, \"x\": %.17g, \"y\": %.17g, \"z\": %.17g, \"n\": %zu}", r->mrpe.total,
               r->mrpe.x, r->mrpe.y, r->mrpe.z, r->mrpe.n);
    if (r->have_actions) {
        fprintf(f, ", \"actions\": {");
        int first = 1;
        for (int a = 0; a < RN_H36M_ACTIONS; a++) {
            if (!r->h36m.action_n[a]) continue;
            fprintf(f, "%s\"%s\": {\"mrpe\": %.17g, \"n\": %zu}", first ? "" : ", ", rn_h36m_action_names[a],
                   r->h36m.action[a], r->h36m.action_n[a]);
            first = 0;
        }
        fprintf(f, "}");
    }
    fprintf(f, ", \"result\": \"%s\", \"seconds\": %.3f}\n", r->result_path, r->seconds);
}

/* The --json object (print(stream, r)) into a file, atomically. */
static int write_json_file(const char *path, void (*print)(FILE *, const void *), const void *r, rn_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return rn_err_set(err, "%s: out of memory", path);
    print(m, r);
    fclose(m);
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, buf, len, err) || rn_afile_commit(&f, err) ? -1 : 0;
    free(buf);
    return rc;
}

static void print_root_json(FILE *f, const void *r) { print_json(f, r); }
static void print_pose_json(FILE *f, const void *r) { rn_pose_test_result_json(f, r); }

static int fill_opts(rn_test_opts *o, const test_cli *c, rn_err *err)
{
    rn_test_opts_default(o);
    if (c->gt_bbox && c->det_bbox) return rn_err_set(err, "--use-gt-bbox and --det-bbox exclude each other");
    if (!(c->ap_thr > 0) || c->ap_thr > 1e9) return rn_err_set(err, "--ap-thr %g: must be > 0 (mm)", c->ap_thr);
    if (rn_eval_flags_check(&c->ev, &o->precision, err)) return -1;
    o->no_fold = c->ev.no_fold;
    o->testset = c->testset;
    o->data_dir = c->data_dir;
    o->use_det_bbox = c->det_bbox;
    o->batch = (int)c->batch;
    o->threads = (int)c->ev.threads;
    o->device = c->ev.device;
    o->workers = (int)c->workers;
    o->result_dir = c->result_dir;
    o->gt_path = c->gt;
    o->cache_dir = c->cache_dir;
    o->progress = !c->no_progress;
    o->limit = (size_t)c->limit;
    o->ap_thr = c->ap_thr;
    if (!o->result_dir) o->result_dir = c->output ? c->output : ".";
    return 0;
}

/* The data folder exists and the snapshot is found (before it is read). */
static int check_inputs(const test_cli *c, char *snap, size_t snap_len, rn_err *err)
{
    struct stat st;
    if (stat(c->data_dir, &st) || !S_ISDIR(st.st_mode))
        return rn_err_set(err, "--data-dir '%s': no such directory", c->data_dir);
    return rn_snapshot_resolve(snap, snap_len, c->snapshot, c->output, c->epoch, err);
}

/* PoseNet's test (infer/pose_tester.h); frees p. */
static int run_pose_test(const test_cli *c, rn_params *p, const rn_test_opts *o, const char *snap, rn_err *err)
{
    rn_pose_test_opts po = {.flip_test = !c->no_flip_test, .baseline = c->baseline, .bbox_root = c->bbox_root};
    if (!c->json)
        printf("test: %s (PoseNet of %s's %d joints, ResNet-%d) on %s, %s boxes, roots %s%s, input %d%s\n", snap,
               p->net->skeleton, p->net->K, p->depth, o->testset, o->use_det_bbox ? "detector" : "GT",
               c->bbox_root ? "from " : "of the ground truth", c->bbox_root ? c->bbox_root : "", o->input_size,
               po.flip_test ? ", flip test" : "");
    rn_pose_test_result r;
    int rc = rn_pose_test_run(&r, p, o, &po, err);
    rn_params_free(p);
    if (rc) return RN_EXIT_FAIL;
    if (c->metrics_json && write_json_file(c->metrics_json, print_pose_json, &r, err)) return RN_EXIT_FAIL;
    if (c->json) {
        rn_pose_test_result_json(stdout, &r);
        return 0;
    }
    rn_pose_test_result_print(stdout, &r);
    printf("%zu people in %.1f s\n", r.n, r.seconds);
    return 0;
}

static int run_loaded(const test_cli *c, const char *snap, rn_test_opts o, rn_err *err);

/* rootnet calibrate: the test set's first --limit records through the fp32 fold model, each conv's input
 * range kept (rn_calib_observe), written to --calib (default <snapshot>.int8). */
static int run_calibrate(const test_cli *c, const char *snap, rn_test_opts o, rn_err *err)
{
    char path[4200];
    rn_calib cal;
    rn_calib_init(&cal, "");
    const char *out = c->ev.calib ? c->ev.calib : rn_calib_path(path, sizeof path, snap);
    o.observe = (rn_model_observe){rn_calib_observe, &cal};
    o.result_dir = NULL;
    int rc = run_loaded(c, snap, o, err);
    if (!rc && cal.n == 0) {
        rn_err_set(err, "no conv input was seen");
        rc = RN_EXIT_FAIL;
    }
    if (!rc) {
        cal.images = c->limit;
        rc = rn_calib_save(&cal, out, err) ? RN_EXIT_FAIL : 0;
    }
    if (!rc) printf("calibration: %d conv input ranges written to %s\n", cal.n, out);
    rn_calib_free(&cal);
    return rc;
}

static int run_test(const test_cli *c, rn_err *err)
{
    char snap[4096];
    rn_test_opts o;
    rn_calib cal;
    if (fill_opts(&o, c, err)) return RN_EXIT_USAGE;
    if (check_inputs(c, snap, sizeof snap, err)) return RN_EXIT_FAIL;
    if (c->calibrate) return run_calibrate(c, snap, o, err);
    if (rn_eval_calib_load(&c->ev, snap, &o.precision, &cal, &o.calib, err)) return RN_EXIT_FAIL;
    int rc = run_loaded(c, snap, o, err);
    if (o.calib) rn_calib_free(&cal);
    return rc;
}

/* The run after the flags, the inputs and any int8 calibration are checked. */
static int run_loaded(const test_cli *c, const char *snap, rn_test_opts o, rn_err *err)
{
    rn_params p;
    rn_run_settings s;
    const rn_eval_flags *ev = &c->ev;
    int lrc = rn_weights_load_eval(&p, &s, snap, (int)ev->backbone, (int)ev->input_size, ev->fast_decode, err);
    if (lrc) return lrc == RN_WEIGHTS_EMERGE ? RN_EXIT_USAGE : RN_EXIT_FAIL;
    o.input_size = s.input_size;
    o.fast_decode = s.fast_decode;
    if (c->calibrate) rn_calib_set_net(o.observe.ctx, p.net); /* run_calibrate's calibration */
    if (p.net->skeleton) return run_pose_test(c, &p, &o, snap, err);
    if (c->bbox_root) {
        rn_params_free(&p);
        rn_err_set(err, "--bbox-root: RootNet's roots for a PoseNet's MuPoTS test, and %s is a RootNet (its test "
                        "writes them: bbox_root_mupots_output.json)", snap);
        return RN_EXIT_USAGE;
    }
    if (!c->json)
        printf("test: %s (ResNet-%d) on %s, %s boxes, input %d %s\n", snap, p.depth, o.testset,
               o.use_det_bbox ? "detector" : "GT", o.input_size, rn_run_settings_size_note(&s));
    rn_test_result r;
    int rc = rn_test_run(&r, &p, &o, err);
    rn_params_free(&p);
    if (rc) return RN_EXIT_FAIL;
    if (c->metrics_json && write_json_file(c->metrics_json, print_root_json, &r, err)) return RN_EXIT_FAIL;
    if (c->json) {
        print_json(stdout, &r);
        return 0;
    }
    rn_test_result_print(stdout, &r);
    printf("%zu predictions in %.1f s; result file: %s\n", r.n, r.seconds, r.result_path);
    return 0;
}

static int test_main(int argc, char **argv, int calibrate)
{
    test_cli c = {.epoch = -1, .batch = 16, .workers = 1, .ap_thr = 250.0, .limit = calibrate ? 512 : 0,
                  .calibrate = calibrate};
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &c.snapshot, "weights: a rootnet snapshot (safetensors) or the authors' .pth.tar"),
        RN_FLAG_RANGE("--epoch", &c.epoch, 0, INT_MAX, "instead of --snapshot: the snapshot of epoch N under --output"),
        RN_FLAG_STR("--output", &c.output, "training output dir (with --epoch); default result dir"),
        RN_FLAG_STR("--dataset", &c.testset, "the test set: MuPoTS, Human36M or PW3D"),
        RN_FLAG_STR("--data-dir", &c.data_dir, "data root in the authors' layout (D/MuPoTS/data/...)"),
        RN_FLAG_BOOL("--use-gt-bbox", &c.gt_bbox, "ground-truth boxes (default)"),
        RN_FLAG_BOOL("--det-bbox", &c.det_bbox, "detector boxes (MuPoTS, Human36M bbox/*.json)"),
        RN_FLAG_RANGE("--batch", &c.batch, 1, 4096, "samples per forward (default 16)"),
        RN_FLAG_RANGE("--workers", &c.workers, 1, 64, "image loader threads (default 1)"),
        RN_EVAL_FLAGS(&c.ev),
        RN_FLAG_ALIAS("--compute", "--precision"),
        RN_FLAG_STR("--result-dir", &c.result_dir, "where the result JSON (PoseNet on MuPoTS: the two .mat files) goes "
                    "(default --output, else .)"),
        RN_FLAG_STR("--gt", &c.gt, "MuPoTS ground truth (default D/MuPoTS/data/MuPoTS-3D.json)"),
        RN_CACHE_DIR_FLAG(&c.cache_dir),
        RN_FLAG_F64("--ap-thr", &c.ap_thr, "MuPoTS AP distance threshold in mm (default 250)"),
        RN_FLAG_RANGE("--limit", &c.limit, 0, LONG_MAX,
                      calibrate ? "calibrate on the first N records (default 512; 0: all)"
                                : "evaluate only the first N records (0: all)"),
        RN_FLAG_BOOL("--json", &c.json, "print the metrics as one JSON object (full precision)"),
        RN_FLAG_STR("--metrics-json", &c.metrics_json, "also write the --json object to this file"),
        RN_FLAG_BOOL("--no-progress", &c.no_progress, "no progress bar"),
        RN_FLAG_BOOL("--no-flip-test", &c.no_flip_test, "PoseNet: without the flipped crop (default: averaged with it, as the authors' test)"),
        RN_FLAG_BOOL("--baseline", &c.baseline, "PoseNet: also the MPJPE of always answering the training split's mean pose"),
        RN_FLAG_STR("--bbox-root", &c.bbox_root, "PoseNet on MuPoTS: the roots, RootNet's result for the same boxes "
                    "(bbox_root_mupots_output.json of rootnet test, or the authors'); default: the GT root (GT boxes)"),
        RN_FLAG_ALIAS("--testset", "--dataset"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--data", "--data-dir"),
        {0}};
    const char *syn = "(--snapshot FILE | --epoch N --output DIR) --dataset MuPoTS|Human36M|PW3D --data-dir D "
                      "[--use-gt-bbox|--det-bbox] [--bbox-root FILE] [--batch B] [--threads T] [--result-dir DIR]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!c.testset || !c.data_dir)
        return rn_args_misuse(flags, argv, syn, "--dataset (MuPoTS, Human36M or PW3D) and --data-dir are required");
    if (!c.snapshot && c.epoch < 0)
        return rn_args_misuse(flags, argv, syn, "--snapshot FILE (or --epoch N --output DIR) is required");
    if (calibrate && ((c.ev.precision && strcmp(c.ev.precision, "fp32")) || c.ev.no_fold))
        return rn_args_misuse(flags, argv, syn, "calibrate runs the fp32 folded model: no --precision, no --no-fold");
    rn_err err = {{0}};
    int rc = run_test(&c, &err);
    return rc ? rn_cli_fail(calibrate ? "calibrate" : "test", rc, &err) : RN_EXIT_OK;
}

int rn_cmd_test(int argc, char **argv) { return test_main(argc, argv, 0); }

int rn_cmd_calibrate(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--boxes") || !strncmp(argv[i], "--boxes=", 8)) return rn_cmd_predict_main(argc, argv, 1);
    return test_main(argc, argv, 1);
}
