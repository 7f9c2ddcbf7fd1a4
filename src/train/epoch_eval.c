/* Per-epoch test-set evaluation and the best snapshot. */
#include "train/epoch_eval.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/afile.h"
#include "data/json/json.h"
#include "io/file.h"

void rn_epoch_eval_init(rn_epoch_eval *ev, const rn_train_cfg *cfg, int rank, FILE *out)
{
    memset(ev, 0, sizeof *ev);
    ev->cfg = cfg, ev->out = out;
    ev->active = cfg->eval_epoch && rank == 0;
    ev->best_epoch = -1;
    ev->best_score = ev->best_metric = NAN;
    snprintf(ev->result_dir, sizeof ev->result_dir, "%s/result", cfg->output);
}

static void dump_path(char *buf, size_t len, const rn_train_cfg *c, const char *name)
{
    snprintf(buf, len, "%s/model_dump/%s", c->output, name);
}

/* A number member; null (no value, written for NaN) reads as NaN, and so does an older file's bare NaN. */
static int number(const rn_jnode *obj, const char *key, double *out)
{
    const rn_jnode *v = rn_jobject_get(obj, key);
    if (rn_jis(v, RN_JNULL)) *out = NAN;
    else if (rn_jis_real(v)) *out = v->u.d;
    else if (rn_jis_integer(v)) *out = (double)v->u.i;
    else return 0;
    return 1;
}

/* The best so far of an earlier run into this output dir (--continue). */
static int load_best(rn_epoch_eval *ev, rn_err *err)
{
    char path[RN_TRAIN_PATH + 32];
    struct stat sb;
    dump_path(path, sizeof path, ev->cfg, "best.json");
    if (stat(path, &sb)) return 0;
    rn_jdoc *d = rn_jdoc_load(path, err);
    if (!d) return -1;
    const rn_jnode *e = rn_jobject_get(d->root, "epoch");
    int ok = rn_jis_integer(e) && number(d->root, "score", &ev->best_score) && number(d->root, "metric", &ev->best_metric) &&
             number(d->root, "mrpe", &ev->best_mrpe);
    if (ok) ev->best_epoch = (int)e->u.i;
    rn_jdoc_free(d);
    return ok ? 0 : rn_err_set(err, "%s: expected numbers \"epoch\", \"score\", \"metric\" and \"mrpe\"", path);
}

static int ev_on_start(void *ctx, rn_params *p, rn_err *err)
{
    rn_epoch_eval *ev = ctx;
    if (!ev->active) return 0;
    const rn_train_cfg *c = ev->cfg;
    mkdir(ev->result_dir, 0777);
    rn_test_opts o;
    rn_test_opts_default(&o);
    o.testset = c->testset, o.data_dir = c->data_dir, o.result_dir = ev->result_dir;
    o.input_size = c->input_size, o.threads = rn_train_cfg_threads(c), o.device = c->device;
    o.fast_decode = c->fast_decode, o.cache_dir = c->cache_dir[0] ? c->cache_dir : NULL;
    o.progress = 0;
    if (rn_tester_create(&ev->tester, p, &o, err)) return rn_err_prefix(err, "--eval-epoch on %s", c->testset);
    return load_best(ev, err);
}

static int copy_file(const char *from, const char *to, rn_err *err)
{
    rn_mapfile m;
    if (rn_mapfile_open(&m, from, err)) return -1;
    rn_afile f;
    int rc = rn_afile_open(&f, to, err) || rn_afile_write(&f, m.data, m.size, err) || rn_afile_commit(&f, err) ? -1 : 0;
    rn_mapfile_close(&m);
    return rc;
}

static int write_best(const rn_epoch_eval *ev, const char *snapshot, const char *name, rn_err *err)
{
    char path[RN_TRAIN_PATH + 32], buf[RN_TRAIN_PATH * 2 + 256], mrpe[32] = "null";
    dump_path(path, sizeof path, ev->cfg, "best.json");
    if (isfinite(ev->best_mrpe)) snprintf(mrpe, sizeof mrpe, "%.17g", ev->best_mrpe);
    int n = snprintf(buf, sizeof buf,
                     "{\"epoch\": %d, \"metric\": %.17g, \"name\": \"%s\", \"score\": %.17g, \"mrpe\": %s, "
                     "\"snapshot\": \"%s\"}\n",
                     ev->best_epoch, ev->best_metric, name, ev->best_score, mrpe, snapshot);
    rn_afile f;
    if (rn_afile_open(&f, path, err) || rn_afile_write(&f, buf, (size_t)n, err) || rn_afile_commit(&f, err)) return -1;
    return 0;
}

/* Higher score (AP_root, or -MRPE); equal AP_root (e.g. 0 early on): lower MRPE. */
static int better(const rn_epoch_eval *ev, const rn_test_result *r)
{
    if (ev->best_epoch < 0 || r->score > ev->best_score) return 1;
    return r->score == ev->best_score && r->have_ap && r->have_mrpe && r->mrpe.total < ev->best_mrpe;
}

static const char *metric_name(const rn_test_result *r) { return r->have_ap ? "AP_root" : "MRPE"; }

static int ev_on_epoch(void *ctx, int epoch, const char *snapshot, const rn_params *p, double *metric, rn_err *err)
{
    (void)p;
    rn_epoch_eval *ev = ctx;
    if (!ev->active) return 0;
    rn_test_result *r = &ev->last;
    if (rn_tester_run(ev->tester, r, err)) return rn_err_prefix(err, "evaluating epoch %d", epoch);
    ev->have_last = 1;
    *metric = r->have_ap ? r->ap.ap : r->mrpe.total;
    if (ev->out) {
        fprintf(ev->out, "epoch %d on %s (%zu predictions, %.1f s):\n", epoch, ev->cfg->testset, r->n, r->seconds);
        rn_test_result_print(ev->out, r);
    }
    if (!better(ev, r)) return 0;
    ev->best_epoch = epoch, ev->best_score = r->score, ev->best_metric = *metric;
    ev->best_mrpe = r->have_mrpe ? r->mrpe.total : NAN;
    char best[RN_TRAIN_PATH + 48];
    dump_path(best, sizeof best, ev->cfg, "snapshot_best.safetensors");
    if (copy_file(snapshot, best, err) || write_best(ev, snapshot, metric_name(r), err))
        return rn_err_prefix(err, "keeping the best snapshot");
    return 0;
}

static int ev_log_values(void *ctx, int at_epoch, const char **name, double *value, int max)
{
    rn_epoch_eval *ev = ctx;
    if (!at_epoch || !ev->have_last || max < 4) return 0;
    int n = 0;
    if (ev->last.have_ap) name[n] = "AP_root", value[n++] = ev->last.ap.ap;
    if (ev->last.have_mrpe) name[n] = "MRPE", value[n++] = ev->last.mrpe.total;
    name[n] = "best_epoch", value[n++] = ev->best_epoch;
    name[n] = "best_metric", value[n++] = ev->best_metric;
    return n;
}

rn_train_hooks rn_epoch_eval_hooks(rn_epoch_eval *ev)
{
    return (rn_train_hooks){
        .ctx = ev, .on_start = ev_on_start, .on_epoch = ev_on_epoch, .log_values = ev_log_values};
}

void rn_epoch_eval_free(rn_epoch_eval *ev)
{
    if (ev->tester) rn_tester_free(ev->tester);
    ev->tester = NULL;
}
