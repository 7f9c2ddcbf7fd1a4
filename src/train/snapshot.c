/* Training snapshots: save, validate, load, find the newest complete one. */
#include "train/snapshot.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nn/net.h"
#include "nn/weights.h"

#define FORMAT_TAG "rootnet-snapshot-1"

void rn_train_state_init(rn_train_state *st, int64_t cap)
{
    memset(st, 0, sizeof *st);
    st->cap = cap > 0 ? cap : 1;
    st->loss = rn_xcalloc((size_t)st->cap, sizeof *st->loss);
}

void rn_train_state_free(rn_train_state *st)
{
    free(st->loss);
    st->loss = NULL;
}

void rn_snapshot_path(char *buf, size_t len, const char *dir, int epoch, int batch)
{
    if (batch)
        snprintf(buf, len, "%s/snapshot_%d_%d.safetensors", dir, epoch, batch);
    else
        snprintf(buf, len, "%s/snapshot_%d.safetensors", dir, epoch);
}

int rn_snapshot_parse_name(const char *name, int *key_epoch, int *key_batch, int *end_of_epoch)
{
    int e, b, n = 0;
    if (sscanf(name, "snapshot_%d_%d.safetensors%n", &e, &b, &n) == 2 && n && !name[n] && e >= 0 && b > 0) {
        *key_epoch = e, *key_batch = b, *end_of_epoch = 0;
        return 0;
    }
    n = 0;
    if (sscanf(name, "snapshot_%d.safetensors%n", &e, &n) == 1 && n && !name[n] && e >= 0) {
        *key_epoch = e + 1, *key_batch = 0, *end_of_epoch = 1;
        return 0;
    }
    return -1;
}

static int add_i64(rn_tensors *ts, const char *name, int64_t v, rn_err *err)
{
    return rn_tensors_add(ts, name, RN_I64, 0, NULL, &v, err);
}

static int export_state(rn_tensors *ts, const rn_params *p, const rn_train_state *st, rn_err *err)
{
    int64_t four = 4, n = st->iter;
    int64_t rng[4];
    for (int i = 0; i < 4; i++) rng[i] = (int64_t)st->rng.s[i];
    if (rn_weights_export(ts, p, err) || rn_weights_export_buffer(ts, p, p->m, "optimizer.exp_avg.", err) ||
        rn_weights_export_buffer(ts, p, p->v, "optimizer.exp_avg_sq.", err) ||
        add_i64(ts, "optimizer.step", st->adam_step, err) || add_i64(ts, "train.epoch", st->epoch, err) ||
        add_i64(ts, "train.loader_epoch", st->loader_epoch, err) ||
        add_i64(ts, "train.loader_batch", st->loader_batch, err) || add_i64(ts, "train.iter", st->iter, err) ||
        rn_tensors_add(ts, "train.rng", RN_I64, 1, &four, rng, err) ||
        rn_tensors_add(ts, "train.lr", RN_F64, 0, NULL, &st->lr, err) ||
        rn_tensors_add(ts, "train.loss", RN_F32, 1, &n, st->loss, err))
        return -1;
    if (!st->have_scaler) return 0;
    const rn_loss_scaler *ls = &st->scaler;
    int64_t six = 6, sc[6] = {ls->dynamic, ls->window, ls->clean, ls->steps, ls->skipped, ls->last_skipped};
    return rn_tensors_add(ts, "train.loss_scale", RN_F32, 0, NULL, &ls->scale, err) ||
                   rn_tensors_add(ts, "train.loss_scale_state", RN_I64, 1, &six, sc, err)
               ? -1
               : 0;
}

typedef struct hook_ctx {
    const rn_snapshot_hook *hook;
    int n;
} hook_ctx;

static void call_hook(void *ctx, int i)
{
    hook_ctx *h = ctx;
    h->hook->fn(h->hook->ctx, i, h->n);
}

int rn_snapshot_save(const char *path, const rn_params *p, const rn_train_state *st, const char *config_text,
                     const rn_snapshot_hook *hook, rn_err *err)
{
    rn_tensors ts;
    rn_tensors_init(&ts);
    int rc = export_state(&ts, p, st, err);
    if (!rc) {
        char buf[32];
        rn_tensors_set_meta(&ts, "format", FORMAT_TAG);
        snprintf(buf, sizeof buf, "%d", p->depth);
        rn_tensors_set_meta(&ts, "backbone", buf);
        rn_tensors_set_meta(&ts, "config", config_text ? config_text : "");
        snprintf(buf, sizeof buf, "%016" PRIx64, rn_tensors_checksum(&ts));
        rn_tensors_set_meta(&ts, "checksum", buf);
        hook_ctx hc = {hook, ts.n};
        rc = rn_safetensors_write_hook(path, &ts, hook && hook->fn ? call_hook : NULL, &hc, err);
    }
    rn_tensors_free(&ts);
    return rc;
}

static const char *REQUIRED[] = {"optimizer.step", "train.epoch", "train.loader_epoch", "train.loader_batch",
                                 "train.iter", "train.rng", "train.lr", "train.loss", NULL};

int rn_snapshot_read(rn_tensors *ts, const char *path, rn_err *err)
{
    if (rn_safetensors_read(ts, path, err)) return -1;
    const char *fmt = rn_tensors_get_meta(ts, "format"), *sum = rn_tensors_get_meta(ts, "checksum");
    char buf[32];
    int rc = 0;
    if (!fmt || strcmp(fmt, FORMAT_TAG))
        rc = rn_err_set(err, "%s: not a rootnet training snapshot (metadata format is not %s)", path, FORMAT_TAG);
    for (int i = 0; !rc && REQUIRED[i]; i++)
        if (!rn_tensors_find(ts, REQUIRED[i])) rc = rn_err_set(err, "%s: snapshot lacks '%s'", path, REQUIRED[i]);
    if (!rc) {
        snprintf(buf, sizeof buf, "%016" PRIx64, rn_tensors_checksum(ts));
        if (!sum || strcmp(sum, buf))
            rc = rn_err_set(err, "%s: checksum mismatch (file says %s, contents hash to %s)", path, sum ? sum : "none", buf);
    }
    if (rc) rn_tensors_free(ts);
    return rc;
}

static int get_i64(int64_t *out, const rn_tensors *ts, const char *name, const char *path, rn_err *err)
{
    const rn_tensor *t = rn_tensors_find(ts, name);
    if (!t || t->dtype != RN_I64 || rn_tensor_numel(t) != 1) return rn_err_set(err, "%s: '%s' is not an I64 scalar", path, name);
    memcpy(out, t->data, 8);
    return 0;
}

static int load_moment(rn_params *p, float *buf, const rn_tensors *ts, const char *prefix, const char *path, rn_err *err)
{
    char name[160];
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (!rn_param_trainable(e->kind)) continue;
        snprintf(name, sizeof name, "%s%s", prefix, e->name);
        const rn_tensor *t = rn_tensors_find(ts, name);
        if (!t) return rn_err_set(err, "%s: snapshot lacks '%s'", path, name);
        if (rn_tensor_check_shape(t, e->ndim, e->shape, err)) return rn_err_prefix(err, "%s", path);
        if (rn_weights_tensor_in(p, buf + e->offset, t, e->numel, 0, path, err)) return -1;
    }
    return 0;
}

/* The loss scaler's state where the snapshot holds it (have_scaler 0 where not: an older snapshot). */
static int load_scaler(rn_train_state *st, const rn_tensors *ts, const char *path, rn_err *err)
{
    const rn_tensor *sc = rn_tensors_find(ts, "train.loss_scale"), *t = rn_tensors_find(ts, "train.loss_scale_state");
    st->have_scaler = 0;
    if (!sc && !t) return 0;
    if (!sc || sc->dtype != RN_F32 || rn_tensor_numel(sc) != 1)
        return rn_err_set(err, "%s: train.loss_scale is not an F32 scalar", path);
    if (!t || t->dtype != RN_I64 || rn_tensor_numel(t) != 6)
        return rn_err_set(err, "%s: train.loss_scale_state is not I64[6]", path);
    int64_t v[6];
    memcpy(v, t->data, sizeof v);
    rn_loss_scaler *ls = &st->scaler;
    *ls = v[0] ? rn_loss_scaler_dynamic() : rn_loss_scaler_static(1.0f);
    memcpy(&ls->scale, sc->data, sizeof ls->scale);
    ls->window = (long)v[1], ls->clean = (long)v[2], ls->steps = (long)v[3], ls->skipped = (long)v[4];
    ls->last_skipped = v[5] != 0;
    if (!(ls->scale > 0) || !isfinite(ls->scale) || v[2] < 0 || v[3] < 0 || v[4] < 0 || v[4] > v[3])
        return rn_err_set(err, "%s: train.loss_scale holds an impossible state (scale %g, %lld of %lld steps skipped)",
                          path, (double)ls->scale, (long long)v[4], (long long)v[3]);
    st->have_scaler = 1;
    return 0;
}

static int load_state(rn_train_state *st, const rn_tensors *ts, const char *path, rn_err *err)
{
    int64_t ep = 0, le = 0, lb = 0;
    const rn_tensor *rng = rn_tensors_find(ts, "train.rng"), *loss = rn_tensors_find(ts, "train.loss"),
                    *lr = rn_tensors_find(ts, "train.lr");
    if (get_i64(&st->adam_step, ts, "optimizer.step", path, err) || get_i64(&ep, ts, "train.epoch", path, err) ||
        get_i64(&le, ts, "train.loader_epoch", path, err) || get_i64(&lb, ts, "train.loader_batch", path, err) ||
        get_i64(&st->iter, ts, "train.iter", path, err))
        return -1;
    if (rng->dtype != RN_I64 || rn_tensor_numel(rng) != 4) return rn_err_set(err, "%s: train.rng is not I64[4]", path);
    if (lr->dtype != RN_F64 || rn_tensor_numel(lr) != 1) return rn_err_set(err, "%s: train.lr is not an F64 scalar", path);
    if (loss->dtype != RN_F32 || rn_tensor_numel(loss) != st->iter || st->iter < 0)
        return rn_err_set(err, "%s: train.loss does not hold train.iter = %lld losses", path, (long long)st->iter);
    if (st->iter > st->cap) return rn_err_set(err, "%s: %lld iterations done, more than this run's %lld", path,
                                              (long long)st->iter, (long long)st->cap);
    memcpy(st->rng.s, rng->data, 32);
    memcpy(&st->lr, lr->data, 8);
    memcpy(st->loss, loss->data, loss->nbytes);
    st->epoch = (int)ep, st->loader_epoch = (int)le, st->loader_batch = (int)lb;
    return load_scaler(st, ts, path, err);
}

int rn_snapshot_load(const char *path, int depth, const rn_net *net, rn_params *p, rn_train_state *st, rn_err *err)
{
    rn_tensors ts;
    if (rn_snapshot_read(&ts, path, err)) return -1;
    const char *bb = rn_tensors_get_meta(&ts, "backbone");
    const rn_net *held = rn_weights_net(&ts);
    int have = bb ? atoi(bb) : 0, rc = 0;
    if (have != depth)
        rc = rn_err_set(err, "%s: snapshot holds a ResNet-%d %s but this run is --backbone %d", path, have,
                        held ? held->title : "network", depth);
    else if (held != net)
        rc = rn_err_set(err, "%s: snapshot holds a %s%s%s but this run trains a %s%s%s", path,
                        held ? held->title : "network of neither kind", held && held->skeleton ? " of " : "",
                        held && held->skeleton ? held->skeleton : "", net->title, net->skeleton ? " of " : "",
                        net->skeleton ? net->skeleton : "");
    if (!rc) rc = rn_params_build_net(p, net, depth, err);
    if (!rc) {
        rn_rng unused;
        rn_rng_seed(&unused, 0);
        rc = rn_weights_apply(p, &ts, path, &unused, err) ||
             load_moment(p, p->m, &ts, "optimizer.exp_avg.", path, err) ||
             load_moment(p, p->v, &ts, "optimizer.exp_avg_sq.", path, err) || load_state(st, &ts, path, err);
        if (rc) rn_params_free(p);
    }
    rn_tensors_free(&ts);
    return rc ? -1 : 0;
}

typedef struct snap_name {
    char name[256];
    int ke, kb, end;
} snap_name;

static int cmp_newest_first(const void *a, const void *b)
{
    const snap_name *x = a, *y = b;
    if (x->ke != y->ke) return y->ke - x->ke;
    return y->kb - x->kb;
}

/* Snapshot names in dir, newest first (NULL and n = 0 when dir cannot be read). */
static snap_name *list_snapshots(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    int cap = 16;
    snap_name *v = rn_xmalloc((size_t)cap * sizeof *v);
    for (struct dirent *de; (de = readdir(d));) {
        snap_name s;
        if (strlen(de->d_name) >= sizeof s.name) continue;
        if (rn_snapshot_parse_name(de->d_name, &s.ke, &s.kb, &s.end)) continue;
        snprintf(s.name, sizeof s.name, "%s", de->d_name);
        if (*n == cap) v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        RN_ASSERT(v);
        v[(*n)++] = s;
    }
    closedir(d);
    qsort(v, (size_t)*n, sizeof *v, cmp_newest_first);
    return v;
}

/* Removes the temporaries an interrupted snapshot write left in dir. */
static void remove_temporaries(const char *dir, FILE *warn)
{
    DIR *d = opendir(dir);
    char path[1400];
    for (struct dirent *de; d && (de = readdir(d));) {
        if (strncmp(de->d_name, "snapshot_", 9) || !strstr(de->d_name, ".safetensors.tmp")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (warn) fprintf(warn, "rootnet train: removing %s, left by an interrupted snapshot write\n", path);
        unlink(path);
    }
    if (d) closedir(d);
}

int rn_snapshot_dir_check(const char *dir, rn_err *err)
{
    int n;
    snap_name *v = list_snapshots(dir, &n);
    char path[1400];
    struct stat st;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        if (!stat(path, &st) && !S_ISREG(st.st_mode))
            rc = rn_err_set(err, "%s: not a regular file, so no snapshot can be read from or written to it; move it "
                            "away", path);
    }
    free(v);
    return rc;
}

/* A complete snapshot whose contents agree with its name. */
static int check_candidate(const char *path, const snap_name *s, rn_err *err)
{
    rn_tensors ts;
    if (rn_snapshot_read(&ts, path, err)) return -1;
    int64_t le = -1, lb = -1;
    int rc = get_i64(&le, &ts, "train.loader_epoch", path, err) || get_i64(&lb, &ts, "train.loader_batch", path, err);
    if (!rc && (le != s->ke || lb != s->kb))
        rc = rn_err_set(err, "%s: holds loader position (%lld, %lld), its name says (%d, %d)", path, (long long)le,
                        (long long)lb, s->ke, s->kb);
    rn_tensors_free(&ts);
    return rc ? -1 : 0;
}

/* Appends "name: problem" (the problem without its leading path) to a refusal being built in buf. */
static void note_problem(char *buf, size_t len, const char *path, const char *name, const char *msg)
{
    size_t at = strlen(buf), pl = strlen(path);
    if (!strncmp(msg, path, pl) && !strncmp(msg + pl, ": ", 2)) msg += pl + 2;
    if (snprintf(buf + at, len - at, "%s%s: %s", at ? "; " : "", name, msg) >= (int)(len - at))
        snprintf(buf + len - 4, 4, "...");
}

int rn_snapshot_find_latest(char *out, size_t len, const char *dir, FILE *warn, rn_err *err)
{
    int n;
    snap_name *v = list_snapshots(dir, &n);
    int found = 0;
    char path[1400], problems[sizeof err->msg] = "";
    for (int i = 0; i < n && !found; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        rn_err e = {{0}};
        if (check_candidate(path, &v[i], &e)) {
            note_problem(problems, sizeof problems, path, v[i].name, e.msg);
            if (warn) fprintf(warn, "rootnet train: warning: skipping incomplete snapshot: %s\n", e.msg);
            continue;
        }
        if (strlen(path) >= len) {
            free(v);
            return rn_err_set(err, "%s: path too long", path);
        }
        snprintf(out, len, "%s", path);
        found = 1;
    }
    free(v);
    if (n && !found)
        return rn_err_set(err, "no complete snapshot in %s, nothing changed (%s); to start over, move them away or "
                          "train without --continue", dir, problems);
    if (found || !n) remove_temporaries(dir, warn);
    return found;
}

/* 1 when the snapshot at dir/s->name is complete and agrees with its name. */
static int is_good(const char *dir, const snap_name *s)
{
    char path[1400];
    rn_err e = {{0}};
    snprintf(path, sizeof path, "%s/%s", dir, s->name);
    return !check_candidate(path, s, &e);
}

/* Removes the snapshots v[i] with pick(v[i]) set beyond the newest `keep` complete ones among them: a damaged
 * one never counts as kept (so no good one is removed for it) and is removed only once `keep` good ones are
 * newer. */
static void keep_newest_good(const char *dir, const snap_name *v, const unsigned char *pick, int n, int keep)
{
    int kept = 0;
    char path[1400];
    for (int i = 0; i < n; i++) {
        if (!pick[i]) continue;
        if (kept < keep) {
            kept += is_good(dir, &v[i]);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        unlink(path);
    }
}

void rn_snapshot_prune(const char *dir, int key_epoch, int key_batch, int keep)
{
    int n;
    snap_name *v = list_snapshots(dir, &n);
    unsigned char *pick = rn_xcalloc((size_t)n + 1, 1);
    for (int i = 0; i < n; i++)
        pick[i] = !v[i].end && (v[i].ke < key_epoch || (v[i].ke == key_epoch && v[i].kb < key_batch));
    keep_newest_good(dir, v, pick, n, keep - 1);
    free(pick);
    free(v);
}

void rn_snapshot_prune_epochs(const char *dir, int epoch, int keep)
{
    if (keep <= 0) return;
    int n;
    snap_name *v = list_snapshots(dir, &n);
    unsigned char *pick = rn_xcalloc((size_t)n + 1, 1);
    for (int i = 0; i < n; i++) pick[i] = v[i].end && v[i].ke - 1 <= epoch;
    keep_newest_good(dir, v, pick, n, keep);
    free(pick);
    free(v);
}
