/* Test-set evaluation: loader test mode -> eval-mode forward -> image ->
 * camera space -> the authors' result file and metrics. */
#include "infer/tester.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/profile.h"
#include "data/load/loader.h"
#include "data/sets/descriptor.h"
#include "eval/results.h"
#include "infer/infer_model.h"
#include "io/file.h"
#include "nn/model.h"

struct rn_tester {
    rn_test_opts o;
    char data_dir[4096], result_dir[4096], gt_path[4096];
    rn_params *p;
    rn_eval_kind kind;
    rn_dataset ds;
    const rn_dataset *sets[1]; /* the loader keeps this pointer */
    size_t n;              /* records evaluated (ds.n, or the limit) */
    size_t n_all;          /* ds.n as loaded, restored before freeing */
    rn_root_gt *gt_file;   /* MuPoTS: every GT root of MuPoTS-3D.json */
    size_t n_gt_file;
    rn_root_gt *gt;        /* (n) per-record GT */
    rn_root_pred *pred;    /* (n) */
    rn_model m;
    int have_model;
    rn_loader *ld;
};

void rn_test_opts_default(rn_test_opts *o)
{
    *o = (rn_test_opts){.input_size = 256, .batch = 16, .workers = 1, .precision = RN_PREC_FP32, .ap_thr = 250.0,
                        .progress = 1};
}

static int copy_str(char *dst, size_t cap, const char *src, const char *what, rn_err *err)
{
    if (!src) {
        dst[0] = '\0';
        return 0;
    }
    if (strlen(src) >= cap) return rn_err_set(err, "%s: path too long", what);
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

static int check_opts(const rn_test_opts *o, rn_err *err)
{
    char names[128];
    if (!o->testset)
        return rn_err_set(err, "no test set given (%s)", rn_set_names(names, sizeof names, RN_SET_TEST, " or "));
    if (!o->data_dir) return rn_err_set(err, "no data dir given");
    if (o->input_size < 32 || o->input_size % 32)
        return rn_err_set(err, "input size %d: must be a positive multiple of 32", o->input_size);
    if (o->batch < 1 || o->batch > 4096) return rn_err_set(err, "batch %d: must be 1..4096", o->batch);
    if (o->workers < 1 || o->workers > 64) return rn_err_set(err, "workers %d: must be 1..64", o->workers);
    if (!(o->ap_thr > 0) || !isfinite(o->ap_thr)) return rn_err_set(err, "AP threshold must be > 0");
    struct stat st;
    if (stat(o->data_dir, &st) || !S_ISDIR(st.st_mode))
        return rn_err_set(err, "data dir '%s': not a directory", o->data_dir);
    return 0;
}

/* MuPoTS GT boxes: record i is the i-th valid annotation of the GT file; take
 * its root in double precision (the records hold floats) when they line up. */
static void gt_roots_from_file(rn_tester *t)
{
    size_t i = 0;
    for (size_t a = 0; a < t->n_gt_file && i < t->n; a++) {
        if (!t->gt_file[a].is_valid) continue;
        if (t->gt_file[a].image_id != t->gt[i].image_id) return;
        i++;
    }
    if (i != t->n) return;
    i = 0;
    for (size_t a = 0; a < t->n_gt_file && i < t->n; a++)
        if (t->gt_file[a].is_valid) memcpy(t->gt[i++].root_cam, t->gt_file[a].root_cam, sizeof t->gt->root_cam);
}

static int load_set(rn_tester *t, rn_err *err)
{
    const rn_test_opts *o = &t->o;
    if (rn_eval_kind_parse(&t->kind, o->testset, err)) return -1;
    const rn_set_desc *set = rn_set_find(rn_eval_kind_name(t->kind));
    if (o->use_det_bbox && !set->det) return rn_err_set(err, "%s has no detector boxes", set->name);
    rn_dataset_opts dop = {.protocol = 2, .use_det_bbox = o->use_det_bbox, .input_w = o->input_size,
                           .input_h = o->input_size, .cache_dir = o->cache_dir, .warn = stderr};
    if (rn_dataset_load(&t->ds, rn_eval_kind_name(t->kind), o->data_dir, RN_SPLIT_TEST, &dop, err)) return -1;
    t->n_all = t->ds.n;
    if (o->limit && o->limit < t->ds.n) t->ds.n = o->limit;
    t->n = t->ds.n;
    if (t->n == 0) return rn_err_set(err, "%s test set under %s has no records", t->ds.name, o->data_dir);
    t->gt = rn_xcalloc(t->n, sizeof *t->gt);
    t->pred = rn_xcalloc(t->n, sizeof *t->pred);
    for (size_t i = 0; i < t->n; i++) rn_eval_gt_from_sample(&t->gt[i], &t->ds.samples[i]);
    if (t->kind != RN_EVAL_MUPOTS) return 0;
    if (!t->gt_path[0]) snprintf(t->gt_path, sizeof t->gt_path, "%s/%s", o->data_dir, set->test);
    if (rn_eval_gt_read(&t->gt_file, &t->n_gt_file, t->gt_path, err)) return -1;
    if (!o->use_det_bbox) gt_roots_from_file(t);
    return 0;
}

static int build_runtime(rn_tester *t, rn_err *err)
{
    const rn_test_opts *o = &t->o;
    int N = o->batch < (int)t->n ? o->batch : (int)t->n, S = o->input_size;
    rn_infer_cfg c = {.base = {.device = o->device, .threads = o->threads}, .precision = o->precision,
                      .fold = !o->no_fold, .batch = N, .h = S, .w = S, .calib = o->calib, .observe = o->observe};
    if (rn_infer_model_open(&t->m, t->p, &c, err)) return -1;
    t->have_model = 1;
    t->sets[0] = &t->ds;
    rn_loader_cfg cfg;
    rn_loader_cfg_eval(&cfg, t->sets, N, o->workers, S, o->fast_decode);
    return rn_loader_create(&t->ld, &cfg, err);
}

int rn_tester_create(rn_tester **out, rn_params *p, const rn_test_opts *o, rn_err *err)
{
    *out = NULL;
    if (check_opts(o, err)) return -1;
    rn_tester *t = rn_xcalloc(1, sizeof *t);
    t->o = *o;
    t->p = p;
    int rc = copy_str(t->data_dir, sizeof t->data_dir, o->data_dir, "data dir", err);
    if (!rc) rc = copy_str(t->result_dir, sizeof t->result_dir, o->result_dir, "result dir", err);
    if (!rc) rc = copy_str(t->gt_path, sizeof t->gt_path, o->gt_path, "GT path", err);
    t->o.data_dir = t->data_dir;
    t->o.result_dir = t->result_dir[0] ? t->result_dir : NULL;
    t->o.gt_path = t->gt_path[0] ? t->gt_path : NULL;
    if (!rc) rc = load_set(t, err);
    if (!rc) rc = build_runtime(t, err); /* first: a device that cannot open leaves no result dir behind */
    if (!rc && t->o.result_dir) rc = rn_mkdirs(t->o.result_dir, err);
    if (rc) {
        rn_tester_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void rn_tester_free(rn_tester *t)
{
    if (!t) return;
    if (t->ld) rn_loader_free(t->ld);
    if (t->have_model) rn_model_destroy(&t->m);
    t->ds.n = t->n_all;
    rn_dataset_free(&t->ds);
    free(t->gt_file);
    free(t->gt);
    free(t->pred);
    free(t);
}

static void progress(const rn_tester *t, size_t done, double t0, int final)
{
    if (!t->o.progress || !isatty(STDERR_FILENO)) return;
    const int width = 30;
    int fill = (int)((double)width * (double)done / (double)t->n);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
    bar[width] = '\0';
    double dt = rn_prof_now() - t0;
    fprintf(stderr, "\rtest %s [%s] %zu/%zu  %.1f img/s", t->ds.name, bar, done, t->n, dt > 0 ? (double)done / dt : 0.0);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

void rn_test_forward_batch(rn_model *m, const rn_batch *b)
{
    RN_ASSERT(b->n >= 1 && b->n <= m->N);
    rn_model_forward(m, b->images, b->k, 0);
    (void)rn_model_coords(m); /* m->coord: the host copy */
}

/* Runs one loader batch through the model; writes predictions of its records. */
static void predict_batch(rn_tester *t, const rn_batch *b)
{
    rn_model *m = &t->m;
    rn_test_forward_batch(m, b);
    for (int i = 0; i < b->n; i++) {
        if (b->pad[i]) continue;
        size_t rec = (size_t)b->sample[i];
        RN_ASSERT(rec < t->n);
        const rn_sample *s = &t->ds.samples[rec];
        double root_img[3];
        rn_eval_output_to_image(root_img, m->coord + 3 * i, s->bbox, m->OW, m->OH);
        rn_eval_pred_from_sample(&t->pred[rec], s, root_img);
    }
}

static int run_forward(rn_tester *t, rn_err *err)
{
    rn_model_sync_weights(&t->m);
    if (rn_loader_start(t->ld, 0, 0, err)) return -1;
    double t0 = rn_prof_now();
    size_t done = 0;
    const rn_batch *b;
    int rc;
    while ((rc = rn_loader_next(t->ld, &b, err)) == 1) {
        predict_batch(t, b);
        done += (size_t)b->n;
        progress(t, done < t->n ? done : t->n, t0, 0);
    }
    progress(t, done < t->n ? done : t->n, t0, 1);
    return rc < 0 ? -1 : 0;
}

static int score(rn_tester *t, rn_test_result *r, rn_err *err)
{
    if (t->kind == RN_EVAL_MUPOTS) {
        if (rn_eval_mupots_ap(&r->ap, t->pred, t->n, t->gt_file, t->n_gt_file, t->o.ap_thr, err))
            return rn_err_prefix(err, "AP against %s", t->gt_path);
        r->have_ap = 1;
        r->score = r->ap.ap;
        if (t->o.use_det_bbox) return 0;
    }
    if (t->kind == RN_EVAL_H36M) {
        if (rn_eval_h36m_mrpe(&r->h36m, t->pred, t->gt, NULL, t->n, err)) return -1;
        r->have_actions = 1;
        r->mrpe = r->h36m.all;
    } else if (rn_eval_mrpe(&r->mrpe, t->pred, t->gt, NULL, t->n, err)) {
        return -1;
    }
    r->have_mrpe = 1;
    if (!r->have_ap) r->score = -r->mrpe.total;
    return 0;
}

int rn_tester_run(rn_tester *t, rn_test_result *r, rn_err *err)
{
    memset(r, 0, sizeof *r);
    r->kind = t->kind;
    r->n = t->n;
    r->use_det_bbox = t->o.use_det_bbox;
    double t0 = rn_prof_now();
    if (run_forward(t, err)) return -1;
    r->seconds = rn_prof_now() - t0;
    if (t->o.result_dir) {
        int len = snprintf(r->result_path, sizeof r->result_path, "%s/%s", t->o.result_dir,
                           rn_eval_results_filename(t->kind));
        if (len < 0 || (size_t)len >= sizeof r->result_path) return rn_err_set(err, "result path too long");
        if (rn_eval_results_write(r->result_path, t->kind, t->pred, t->n, err)) return -1;
    }
    return score(t, r, err);
}

const rn_root_pred *rn_tester_preds(const rn_tester *t, size_t *n)
{
    *n = t->n;
    return t->pred;
}

int rn_test_run(rn_test_result *res, rn_params *p, const rn_test_opts *o, rn_err *err)
{
    rn_tester *t;
    if (rn_tester_create(&t, p, o, err)) return -1;
    int rc = rn_tester_run(t, res, err);
    rn_tester_free(t);
    return rc;
}

void rn_test_result_print(FILE *f, const rn_test_result *r)
{
    if (r->have_ap) rn_eval_ap_print(f, &r->ap, r->use_det_bbox ? "detector boxes" : "GT boxes");
    if (r->have_mrpe) rn_eval_mrpe_print(f, &r->mrpe, r->kind == RN_EVAL_PW3D ? "m" : "mm");
    if (r->have_actions) rn_eval_h36m_print(f, &r->h36m);
}
