/* rootnet train's settings: one key table drives flags, config files and the
 * snapshot's recorded config. */
#include "train/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "data/sets/descriptor.h"
#include "io/keyval.h"
#include "nn/precision.h"
#include "nn/run_settings.h"
#include "optim/loss_scale.h"
#include "optim/lr_scale.h"

typedef struct key_def {
    rn_train_key k;
    size_t off, size; /* field in rn_train_cfg */
} key_def;

#define F(field) offsetof(rn_train_cfg, field), sizeof(((rn_train_cfg *)0)->field)

static const key_def KEYS[] = {
    {{"--net", RN_TK_STR, "the network: rootnet | posenet (rootnet); PoseNet's joints are --trainset-3d's"}, F(net)},
    {{"--trainset-3d", RN_TK_STR, "3D training set: MuCo | Human36M (MuCo)"}, F(trainset_3d)},
    {{"--trainset-2d", RN_TK_SLIST, "2D training sets, comma-separated: MSCOCO,MPII; '' for none (MSCOCO)"}, F(trainset_2d)},
    {{"--testset", RN_TK_STR, "test set: MuPoTS | Human36M | PW3D (MuPoTS)"}, F(testset)},
    {{"--data-dir", RN_TK_STR, "data dir laid out as the authors' data/ (required)"}, F(data_dir)},
    {{"--backbone", RN_TK_INT, "ResNet depth 18 | 34 | 50 | 101 | 152 (50)"}, F(backbone)},
    {{"--input-size", RN_TK_INT, "square input size, a multiple of 32 (256)"}, F(input_size)},
    {{"--lr", RN_TK_F64, "Adam learning rate (1e-3)"}, F(lr)},
    {{"--lr-dec-epoch", RN_TK_ILIST, "epochs where lr is divided, comma-separated (17)"}, F(lr_dec_epoch)},
    {{"--lr-dec-factor", RN_TK_F64, "lr divisor at each decay epoch (10)"}, F(lr_dec_factor)},
    {{"--end-epoch", RN_TK_INT, "train epochs 0 .. end-epoch-1 (20)"}, F(end_epoch)},
    {{"--batch", RN_TK_INT, "batch size (32)"}, F(batch)},
    {{"--threads", RN_TK_INT, "compute threads (0: OMP_NUM_THREADS)"}, F(threads)},
    {{"--workers", RN_TK_INT, "loader threads (2; 0: one per allowed core)"}, F(workers)},
    {{"--seed", RN_TK_I64, "seed of the init, shuffling and augmentation (1)"}, F(seed)},
    {{"--output", RN_TK_STR, "output dir: model_dump/ snapshots, log/ logs and plot (output)"}, F(output)},
    {{"--continue", RN_TK_BOOL, "resume from the newest complete snapshot in the output dir"}, F(cont)},
    {{"--pretrained", RN_TK_STR, "ImageNet ResNet .pth (torchvision) or a RootNet weight file"}, F(pretrained)},
    {{"--augment", RN_TK_BOOL, "rotation/flip/colour augmentation (on; --no-augment turns it off)"}, F(augment)},
    {{"--fast-decode", RN_TK_BOOL, "decode JPEGs at 1/2, 1/4, 1/8 size when the box is that much larger than the input (faster, not the authors' pixels; off)"}, F(fast_decode)},
    {{"--prep-dir", RN_TK_STR, "prepared frames (rootnet dataset --prepare): the same pixels, only each crop entropy-decoded (default: off)"}, F(prep_dir)},
    {{"--cache-dir", RN_TK_STR, "dataset cache dir (default: next to the annotations, or the per-user cache when that is not writable)"}, F(cache_dir)},
    {{"--deterministic", RN_TK_BOOL, "bit-reproducible run: fixed compute threads (1 unless --threads), weight checksums logged"}, F(deterministic)},
    {{"--log-every", RN_TK_INT, "log line every N iterations (10)"}, F(log_every)},
    {{"--max-iters", RN_TK_I64, "stop after N iterations in total, with a snapshot (0: no limit)"}, F(max_iters)},
    {{"--snapshot-iters", RN_TK_INT, "also snapshot every N iterations within an epoch (0: off)"}, F(snapshot_iters)},
    {{"--keep-snapshots", RN_TK_INT, "mid-epoch snapshots kept (2)"}, F(keep_snapshots)},
    {{"--keep-epochs", RN_TK_INT, "end-of-epoch snapshots kept, newest first (0: all, the authors' behaviour)"}, F(keep_epochs)},
    {{"--dump-batches", RN_TK_STR, "debug: write the initial weights (DIR/w0.safetensors) and every batch (x, k, t, v, d, epoch) as DIR/batch_<iter>.safetensors"}, F(dump_batches)},
    {{"--kill-at-iter", RN_TK_I64, "test: SIGKILL itself before iteration N"}, F(kill_at_iter)},
    {{"--kill-in-snapshot", RN_TK_INT, "test: SIGKILL itself half-way through writing its N-th snapshot"}, F(kill_in_snapshot)},
    {{"--sync-bn", RN_TK_BOOL, "under mpirun: BN statistics over all ranks (one global batch)"}, F(sync_bn)},
    {{"--bucket-mb", RN_TK_F64, "under mpirun: gradient all-reduce bucket in MB, 0 = one after backward (25)"}, F(bucket_mb)},
    {{"--dist-timeout", RN_TK_F64, "under mpirun: end the job when a collective takes longer, seconds (300)"}, F(dist_timeout)},
    {{"--device", RN_TK_STR, "the compute device of training and evaluation: cpu (default), ref, cuda or cuda:N, those built in (rootnet --version lists them)"}, F(device)},
    {{"--precision", RN_TK_STR, "fp32 (default) | bf16 (convs in bf16) | bf16-o2 (+ bf16 activations) | fp16"}, F(precision)},
    {{"--loss-scale", RN_TK_STR, "N (static) | dynamic[:INIT[:WINDOW]] (default: none; fp16: dynamic)"}, F(loss_scale)},
    {{"--profile", RN_TK_STR, "write a Chrome-trace JSON here and print a per-layer table (rank 0)"}, F(profile)},
    {{"--autotune", RN_TK_STR, "conv algorithm cache file: time per shape once, reuse"}, F(autotune)},
    {{"--lr-scale", RN_TK_STR, "none (default) | linear: lr x global batch / 32 (batch x ranks)"}, F(lr_scale)},
    {{"--bind-cores", RN_TK_BOOL, "pin compute thread i to the i-th allowed core"}, F(bind_cores)},
    {{"--graph", RN_TK_BOOL, "each training step and inference batch as one captured device graph (cuda; off by default: unmeasured on a GPU)"}, F(graph)},
    {{"--no-prefetch", RN_TK_BOOL, "the next batch uploaded beside each step (cuda, from pinned memory; one batch of inputs more device memory): off"}, F(no_prefetch)},
    {{"--cudnn-benchmark", RN_TK_BOOL, "cuda: each conv's fastest measured algorithm, deterministic or not (PyTorch's cudnn.benchmark); breaks bit-identical resume"}, F(cudnn_benchmark)},
    {{"--workspace-mb", RN_TK_INT, "cuda: cap on cuDNN's workspace in MiB (1024)"}, F(workspace_mb)},
    {{"--eval-epoch", RN_TK_BOOL, "after each epoch: test on --testset (GT boxes), log the metric, keep snapshot_best"}, F(eval_epoch)},
};
#define N_KEYS ((int)(sizeof KEYS / sizeof KEYS[0]))

const rn_train_key *rn_train_key_at(int i) { return i >= 0 && i < N_KEYS ? &KEYS[i].k : NULL; }

void rn_train_cfg_default(rn_train_cfg *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->net, sizeof c->net, "rootnet");
    snprintf(c->trainset_3d, sizeof c->trainset_3d, "MuCo");
    snprintf(c->trainset_2d[0], sizeof c->trainset_2d[0], "MSCOCO");
    c->n_2d = 1;
    snprintf(c->testset, sizeof c->testset, "MuPoTS");
    snprintf(c->output, sizeof c->output, "output");
    c->backbone = 50, c->input_size = 256;
    c->lr = 1e-3, c->lr_dec_factor = 10;
    c->lr_dec_epoch[0] = 17, c->n_dec = 1;
    c->end_epoch = 20, c->batch = 32, c->workers = 2, c->seed = 1;
    c->augment = 1, c->log_every = 10, c->keep_snapshots = 2;
    snprintf(c->lr_scale, sizeof c->lr_scale, "none");
    c->bucket_mb = 25, c->dist_timeout = 300;
    snprintf(c->precision, sizeof c->precision, "fp32");
    snprintf(c->device, sizeof c->device, "%s", rn_device_default());
    snprintf(c->lr_scale, sizeof c->lr_scale, "none");
}

/* "lr_dec-epoch" and "--lr-dec-epoch" both name "--lr-dec-epoch". */
static const key_def *find_key(const char *key)
{
    for (int i = 0; i < N_KEYS; i++)
        if (rn_keyval_key_is(key, KEYS[i].k.flag + 2)) return &KEYS[i];
    return NULL;
}

/* Comma-separated items into n <= max slots; each item passed to put(i, item). */
static int split_list(const char *s, int max, int *n, const char *key, rn_err *err,
                      int (*put)(void *dst, int i, const char *item, const char *key, rn_err *err), void *dst)
{
    char buf[512];
    if (strlen(s) >= sizeof buf) return rn_err_set(err, "%s: value too long", key);
    snprintf(buf, sizeof buf, "%s", s);
    int count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        if (count == max) return rn_err_set(err, "%s: at most %d items", key, max);
        if (put(dst, count++, tok, key, err)) return -1;
    }
    *n = count;
    return 0;
}

static int put_set(void *dst, int i, const char *item, const char *key, rn_err *err)
{
    char(*sets)[32] = dst;
    if (strlen(item) >= 32) return rn_err_set(err, "%s: '%s' is too long", key, item);
    snprintf(sets[i], 32, "%s", item);
    return 0;
}

static int put_int(void *dst, int i, const char *item, const char *key, rn_err *err)
{
    return rn_keyval_int((int *)dst + i, item, key, err);
}

static int set_value(rn_train_cfg *c, const key_def *k, const char *v, rn_err *err)
{
    char *f = (char *)c + k->off;
    const char *name = k->k.flag + 2;
    double d;
    char *end;
    switch (k->k.kind) {
    case RN_TK_STR:
        if (strlen(v) >= k->size) return rn_err_set(err, "%s: value longer than %zu characters", name, k->size - 1);
        memcpy(f, v, strlen(v) + 1);
        return 0;
    case RN_TK_INT: return rn_keyval_int((int *)f, v, name, err);
    case RN_TK_I64: return rn_keyval_i64((int64_t *)f, v, name, err);
    case RN_TK_BOOL: return rn_keyval_bool((int *)f, v, name, err);
    case RN_TK_F64:
        errno = 0;
        d = strtod(v, &end);
        if (!*v || *end || errno || !isfinite(d)) return rn_err_set(err, "%s: '%s' is not a number", name, v);
        *(double *)f = d;
        return 0;
    case RN_TK_SLIST: return split_list(v, RN_TRAIN_MAX_2D, &c->n_2d, name, err, put_set, c->trainset_2d);
    case RN_TK_ILIST: return split_list(v, RN_TRAIN_MAX_DEC, &c->n_dec, name, err, put_int, c->lr_dec_epoch);
    }
    return rn_err_set(err, "%s: internal: unknown kind", name);
}

int rn_train_cfg_set(rn_train_cfg *c, const char *key, const char *value, rn_err *err)
{
    const key_def *k = find_key(key);
    if (!k) {
        rn_err_set(err, "unknown key '%s'", key);
        return 1;
    }
    return set_value(c, k, value, err) ? -1 : 0;
}

typedef struct load_ctx {
    rn_train_cfg *c;
    FILE *warn;
} load_ctx;

static int load_pair(void *ctx, const char *key, const char *value, const char *name, int line, rn_err *err)
{
    load_ctx *l = ctx;
    int rc = rn_train_cfg_set(l->c, key, value, err);
    if (rc == 1 && l->warn) fprintf(l->warn, "rootnet train: warning: %s:%d: unknown key '%s' ignored\n", name, line, key);
    return rc < 0 ? -1 : 0;
}

int rn_train_cfg_read(rn_train_cfg *c, FILE *f, const char *path, FILE *warn, rn_err *err)
{
    load_ctx l = {c, warn};
    return rn_keyval_read(f, path, load_pair, &l, err);
}

int rn_train_cfg_parse(rn_train_cfg *c, const char *text, const char *name, FILE *warn, rn_err *err)
{
    load_ctx l = {c, warn};
    return rn_keyval_parse(text, name, load_pair, &l, err);
}

int rn_train_cfg_load(rn_train_cfg *c, const char *path, FILE *warn, rn_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return rn_err_set(err, "%s: cannot open config file: %s", path, strerror(errno));
    int rc = rn_train_cfg_read(c, f, path, warn, err);
    fclose(f);
    return rc;
}

/* 0 when name is a set of the role, else -1: "FLAG: 'name' is not A, B or C". */
static int check_set(const char *flag, const char *name, unsigned role, rn_err *err)
{
    char names[128];
    if (rn_set_has_role(name, role)) return 0;
    return rn_err_set(err, "%s: '%s' is not %s", flag, name, rn_set_names(names, sizeof names, role, " or "));
}

/* --precision, --loss-scale, --lr-scale parse (whether the device runs the precision is rn_tuning_setup's). */
static int check_tuning(const rn_train_cfg *c, rn_err *err)
{
    rn_precision id;
    rn_loss_scaler ls;
    rn_lr_rule rule;
    if (strcmp(c->precision, "auto") && rn_precision_parse(c->precision, RN_PREC_ALL, &id, err))
        return -1;
    if (c->loss_scale[0] && rn_loss_scale_parse(c->loss_scale, &ls, err)) return -1;
    return rn_lr_rule_parse(c->lr_scale, &rule, err);
}

int rn_train_cfg_threads(const rn_train_cfg *c) { return c->deterministic && !c->threads ? 1 : c->threads; }

int rn_train_cfg_check(const rn_train_cfg *c, rn_err *err)
{
    if (!c->data_dir[0]) return rn_err_set(err, "--data-dir is required");
    if (check_set("--trainset-3d", c->trainset_3d, RN_SET_TRAIN_3D, err)) return -1;
    for (int i = 0; i < c->n_2d; i++)
        if (check_set("--trainset-2d", c->trainset_2d[i], RN_SET_TRAIN_2D, err)) return -1;
    if (check_set("--testset", c->testset, RN_SET_TEST, err)) return -1;
    if (!rn_input_size_ok(c->input_size))
        return rn_err_set(err, "--input-size: %d is not a multiple of 32 in 32..2048", c->input_size);
    if (c->batch < 1 || c->batch > 4096) return rn_err_set(err, "--batch: %d is not in 1..4096", c->batch);
    if (c->end_epoch < 1) return rn_err_set(err, "--end-epoch: %d must be >= 1", c->end_epoch);
    if (!(c->lr > 0) || !(c->lr_dec_factor > 0)) return rn_err_set(err, "--lr and --lr-dec-factor must be > 0");
    for (int i = 0; i < c->n_dec; i++)
        if (c->lr_dec_epoch[i] < 0 || (i && c->lr_dec_epoch[i] <= c->lr_dec_epoch[i - 1]))
            return rn_err_set(err, "--lr-dec-epoch: epochs must be >= 0 and increasing");
    if (c->threads < 0 || c->workers < 0 || c->log_every < 1 || c->max_iters < 0 || c->snapshot_iters < 0 ||
        c->keep_snapshots < 1 || c->keep_epochs < 0)
        return rn_err_set(err, "--threads >= 0, --workers >= 0 (0: one per core), --log-every >= 1, --max-iters >= 0, "
                               "--snapshot-iters >= 0, --keep-snapshots >= 1 and --keep-epochs >= 0 are required");
    if (!(c->bucket_mb >= 0) || !(c->dist_timeout > 0)) return rn_err_set(err, "--bucket-mb must be >= 0 and --dist-timeout > 0");
    return check_tuning(c, err);
}

static size_t put(char *buf, size_t len, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static size_t put(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    if (at >= len) return at;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    return n < 0 ? at : at + (size_t)n;
}

/* 1 when a string value would not read back as itself unquoted (io/keyval.c trims blanks around a value and
 * one pair of matching quotes): it starts or ends with a blank, or is quoted itself. */
static int needs_quotes(const char *v)
{
    size_t n = strlen(v);
    if (!n) return 0;
    int blank = v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r';
    return blank || (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]);
}

static size_t format_key(const rn_train_cfg *c, const key_def *k, char *buf, size_t len, size_t at)
{
    const char *f = (const char *)c + k->off;
    at = put(buf, len, at, "%s = ", k->k.flag + 2);
    switch (k->k.kind) {
    case RN_TK_STR: return put(buf, len, at, needs_quotes(f) ? "\"%s\"\n" : "%s\n", f);
    case RN_TK_INT: return put(buf, len, at, "%d\n", *(const int *)f);
    case RN_TK_BOOL: return put(buf, len, at, "%s\n", *(const int *)f ? "true" : "false");
    case RN_TK_I64: return put(buf, len, at, "%lld\n", (long long)*(const int64_t *)f);
    case RN_TK_F64: return put(buf, len, at, "%.17g\n", *(const double *)f);
    case RN_TK_SLIST:
        for (int i = 0; i < c->n_2d; i++) at = put(buf, len, at, "%s%s", i ? "," : "", c->trainset_2d[i]);
        return put(buf, len, at, "\n");
    case RN_TK_ILIST:
        for (int i = 0; i < c->n_dec; i++) at = put(buf, len, at, "%s%d", i ? "," : "", c->lr_dec_epoch[i]);
        return put(buf, len, at, "\n");
    }
    return at;
}

void rn_train_cfg_format(const rn_train_cfg *c, char *buf, size_t len)
{
    size_t at = 0;
    if (len) buf[0] = 0;
    for (int i = 0; i < N_KEYS; i++) at = format_key(c, &KEYS[i], buf, len, at);
}

double rn_train_lr(const rn_train_cfg *c, int epoch)
{
    int idx = 0;
    for (int i = 0; i < c->n_dec; i++)
        if (epoch >= c->lr_dec_epoch[i]) idx++;
    return c->lr / pow(c->lr_dec_factor, idx);
}
