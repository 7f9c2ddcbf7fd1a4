/* rootnet forward | step | bench: the model core's debugging and test interface. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dist_cli.h"
#include "cli/tuning_flags.h"
#include "io/tensors.h"
#include "nn/model.h"
#include "nn/weights.h"
#include "optim/adam.h"
#include "train/step.h"

/* An input array read from .npy as float32, with its leading dimension N. */
typedef struct input {
    float *d;
    int64_t n;
    size_t per; /* floats per sample */
} input;

static void input_free(input *in) { free(in->d), in->d = NULL; }

/* Reads path as a float array of shape (N, rest...) where rest matches
 * want[0..nwant) (a -1 entry matches anything). Rejects NaN and Inf. */
static int input_read(input *in, const char *path, const char *what, int nwant, const int64_t *want, int64_t *dims,
                      rn_err *err)
{
    rn_tensor t;
    memset(in, 0, sizeof *in);
    if (rn_npy_read(&t, path, err)) return rn_err_prefix(err, "%s", what);
    int rc = 0;
    if (!rn_dtype_is_float(t.dtype))
        rc = rn_err_set(err, "%s: %s: dtype %s, expected float32", what, path, rn_dtype_name(t.dtype));
    else if (t.ndim != 1 + nwant || t.shape[0] < 1)
        rc = rn_err_set(err, "%s: %s: expected %d dimensions (N, ...) with N >= 1, got %d", what, path, 1 + nwant, t.ndim);
    for (int d = 0; !rc && d < nwant; d++)
        if (want[d] >= 0 && t.shape[d + 1] != want[d])
            rc = rn_err_set(err, "%s: %s: dimension %d is %lld, expected %lld", what, path, d + 1,
                            (long long)t.shape[d + 1], (long long)want[d]);
    if (!rc) {
        size_t count = (size_t)rn_tensor_numel(&t);
        in->n = t.shape[0];
        in->per = count / (size_t)in->n;
        in->d = rn_xmalloc(count * sizeof(float));
        for (int d = 0; d < nwant && dims; d++) dims[d] = t.shape[d + 1];
        rc = rn_tensor_to_f32(in->d, &t, count, err);
        for (size_t i = 0; !rc && i < count; i++)
            if (!isfinite(in->d[i]))
                rc = rn_err_set(err, "%s: %s: sample %zu holds %g (NaN or Inf)", what, path, i / in->per, (double)in->d[i]);
    }
    rn_tensor_free(&t);
    if (rc) input_free(in);
    return rc;
}

/* k, vis and have_depth are (N) or (N, 1). */
static int input_read_vec(input *in, const char *path, const char *what, rn_err *err)
{
    rn_tensor t;
    if (rn_npy_read(&t, path, err)) return rn_err_prefix(err, "%s", what);
    int ndim = t.ndim;
    int64_t last = ndim == 2 ? t.shape[1] : 1;
    rn_tensor_free(&t);
    if (ndim != 1 && !(ndim == 2 && last == 1))
        return rn_err_set(err, "%s: %s: expected shape (N) or (N, 1)", what, path);
    int64_t one = 1;
    return input_read(in, path, what, ndim - 1, &one, NULL, err);
}

static int same_n(const input *a, const input *b, const char *what, const char *path, rn_err *err)
{
    if (a->n != b->n)
        return rn_err_set(err, "%s: %s has %lld samples but the images have %lld", what, path, (long long)b->n,
                          (long long)a->n);
    return 0;
}

static int check_size(const int64_t *xd, const char *path, rn_err *err)
{
    if (xd[1] % 32 || xd[2] % 32)
        return rn_err_set(err, "images: %s: size %lldx%lld, height and width must be multiples of 32", path,
                          (long long)xd[1], (long long)xd[2]);
    return 0;
}

static int fail(const char *cmd, const rn_err *err)
{
    fprintf(stderr, "rootnet %s: %s\n", cmd, err->msg);
    return 1;
}

static int write_coords(const char *path, const float *coord, int n, rn_err *err)
{
    int64_t shape[2] = {n, 3};
    return rn_npy_write(path, RN_F32, 2, shape, coord, err);
}

static int check_k(const input *k, const char *path, rn_err *err)
{
    for (int64_t i = 0; i < k->n; i++)
        if (!(k->d[i] > 0))
            return rn_err_set(err, "k: %s: sample %lld has k = %g, must be > 0", path, (long long)i, (double)k->d[i]);
    return 0;
}

int rn_cmd_forward(int argc, char **argv)
{
    const char *weights = NULL, *images = NULL, *kpath = NULL, *out = NULL, *precision = "fp32", *device = NULL;
    int eval = 0, fold = 0;
    long threads = 0, backbone = 0;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &weights, "weights: safetensors or PyTorch .pth (required)"),
        RN_FLAG_BOOL("--eval", &eval, "use BN running statistics (default: batch statistics)"),
        RN_FLAG_BOOL("--fold", &fold, "with --eval: BN folded into the convs, fused epilogues (what demo/test run)"),
        RN_FLAG_STR("--images", &images, "(N,3,H,W) float32 .npy, normalised (required)"),
        RN_FLAG_STR("--k", &kpath, "(N) or (N,1) float32 .npy (required)"),
        RN_FLAG_STR("--output", &out, "output (N,3) .npy: x, y on the output grid, depth (required)"),
        RN_FLAG_RANGE("--backbone", &backbone, 0, 1000, "require this ResNet depth (default: from the weights)"),
        RN_FLAG_RANGE("--threads", &threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),
        RN_FLAG_STR("--device", &device, "cpu (default) | ref: the compute device"),
        RN_FLAG_STR("--precision", &precision,
                    "fp32 (default) | bf16: convs compute in bf16 | bf16-o2: activations stored in bf16 too"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot W [--eval] --images X.npy --k K.npy --output OUT.npy [--precision bf16|bf16-o2] "
                      "[--device cpu|ref]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    rn_err err = {{0}};
    if (!weights || !images || !kpath || !out)
        return rn_args_misuse(flags, argv, syn, "--snapshot, --images, --k and --output are required");
    if (fold && !eval) return rn_args_misuse(flags, argv, syn, "--fold needs --eval (folding uses the running statistics)");
    rn_precision prec;
    if (rn_precision_parse(precision, &prec, &err) || rn_policy_check_device(rn_policy_get(prec), device, &err))
        return fail("forward", &err);
    input x, k;
    int64_t xd[3], want[3] = {3, -1, -1};
    if (input_read(&x, images, "images", 3, want, xd, &err)) return fail("forward", &err);
    if (check_size(xd, images, &err) || input_read_vec(&k, kpath, "k", &err) || same_n(&x, &k, "k", kpath, &err) ||
        check_k(&k, kpath, &err)) {
        input_free(&x);
        return fail("forward", &err);
    }
    rn_params p;
    rn_model m;
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    int rc = rn_weights_load(&p, weights, (int)backbone, &rng, &err);
    if (!rc) {
        rn_model_opts mo = {.device = device, .threads = (int)threads, .compute = RN_COMPUTE_F32, .inference = 1};
        rn_policy_apply(rn_policy_get(prec), &mo);
        mo.fold = fold;
        rc = rn_model_create(&m, &p, (int)x.n, (int)xd[1], (int)xd[2], &mo, &err);
        if (!rc) {
            rn_model_sync_weights(&m);
            rn_model_forward(&m, x.d, k.d, !eval);
            rc = write_coords(out, rn_model_coords(&m), m.N, &err);
            rn_model_destroy(&m);
        }
        rn_params_free(&p);
    }
    input_free(&x);
    input_free(&k);
    return rc ? fail("forward", &err) : 0;
}

typedef struct step_data {
    input x, k, t, v, d;
    int64_t xd[3];
} step_data;

static void step_data_free(step_data *s)
{
    input_free(&s->x), input_free(&s->k), input_free(&s->t), input_free(&s->v), input_free(&s->d);
}

static int step_data_read(step_data *s, const char *const paths[5], rn_err *err)
{
    memset(s, 0, sizeof *s);
    int64_t want_x[3] = {3, -1, -1}, want_t[1] = {3};
    int rc = input_read(&s->x, paths[0], "images", 3, want_x, s->xd, err) ||
             check_size(s->xd, paths[0], err) || input_read_vec(&s->k, paths[1], "k", err) ||
             same_n(&s->x, &s->k, "k", paths[1], err) || check_k(&s->k, paths[1], err) ||
             input_read(&s->t, paths[2], "target", 1, want_t, NULL, err) ||
             same_n(&s->x, &s->t, "target", paths[2], err) || input_read_vec(&s->v, paths[3], "vis", err) ||
             same_n(&s->x, &s->v, "vis", paths[3], err) || input_read_vec(&s->d, paths[4], "have-depth", err) ||
             same_n(&s->x, &s->d, "have-depth", paths[4], err);
    if (rc) step_data_free(s);
    return rc ? -1 : 0;
}

/* Batch buffers, gathered from samples [first, first + B) mod N. */
typedef struct batch {
    float *x, *k, *t, *v, *d;
} batch;

static batch batch_alloc(int b, size_t per)
{
    return (batch){rn_xmalloc((size_t)b * per * sizeof(float)), rn_xmalloc((size_t)b * sizeof(float)),
                   rn_xmalloc((size_t)b * 3 * sizeof(float)), rn_xmalloc((size_t)b * sizeof(float)),
                   rn_xmalloc((size_t)b * sizeof(float))};
}

static void batch_free(batch *bt) { free(bt->x), free(bt->k), free(bt->t), free(bt->v), free(bt->d); }

static void gather(float *dst, const input *in, long first, int b)
{
    for (int j = 0; j < b; j++) {
        int64_t idx = (first + j) % in->n;
        memcpy(dst + (size_t)j * in->per, in->d + (size_t)idx * in->per, in->per * sizeof(float));
    }
}

static void batch_fill(batch *bt, const step_data *s, long first, int b)
{
    gather(bt->x, &s->x, first, b), gather(bt->k, &s->k, first, b), gather(bt->t, &s->t, first, b);
    gather(bt->v, &s->v, first, b), gather(bt->d, &s->d, first, b);
}

/* The model options of a training model: precision/autotune from the tuning,
 * SyncBN and the gradient buckets from the distribution (identity when d is NULL). */
static rn_model_opts train_opts(long threads, int sync_bn, rn_dist *d, rn_tuning *tn)
{
    rn_model_opts mo = {.threads = (int)threads, .compute = RN_COMPUTE_F32,
                        .reduce = sync_bn ? rn_dist_bn_reduce(d) : (rn_device_reduce){0},
                        .grad_ready = rn_dist_grad_ready(d)};
    rn_tuning_model_opts(tn, &mo);
    return mo;
}

/* The parts of a step/bench training step (train/step.h): with more than one rank the
 * gradient all-reduce (and the loss's mean over ranks, rank 0's BN buffers without SyncBN),
 * the tuning's loss scaler; spans into the tuning's profile. */
typedef struct cli_hooks {
    rn_tuning *tn;
    rn_step_ctl ctl;
} cli_hooks;

static cli_hooks cli_hooks_make(rn_dist *d, int sync_bn, rn_tuning *tn)
{
    int many = rn_dist_size(d) > 1;
    return (cli_hooks){tn, {.dist = many ? d : NULL, .bcast_stats = many && !sync_bn,
                            .scaler = tn->scaling ? &tn->scaler : NULL}};
}

static void cli_span_begin(void *ctx, const char *name) { rn_tuning_span_begin(((cli_hooks *)ctx)->tn, name); }
static void cli_span_end(void *ctx, const char *name) { rn_tuning_span_end(((cli_hooks *)ctx)->tn, name); }

static rn_train_hooks cli_step_hooks(cli_hooks *h)
{
    return (rn_train_hooks){.ctx = h, .span_begin = cli_span_begin, .span_end = cli_span_end};
}

/* rootnet step's settings. A step's global batch is ranks x replicas x b
 * samples; replica j of that batch (j = rank * replicas + e) takes its b
 * samples at offset j * b. */
typedef struct step_cfg {
    int b;             /* per-replica batch */
    long steps;
    double lr;
    long threads;
    int sync_bn;
    int replicas;      /* replicas emulated in this process (--emulate-replicas), 1: off */
    size_t bucket;     /* gradient bucket, floats */
    long save_every;   /* write save_weights every this many steps, 0: only at the end */
    const char *save_weights;
} step_cfg;

/* One step's training state in this process. */
typedef struct stepper {
    rn_model m;
    batch bt[64];          /* one per emulated replica (bt[0] only without) */
    rn_step_replicas rep;  /* with --emulate-replicas */
    rn_adam opt;
    const step_data *s;
    const step_cfg *c;
    rn_dist *d;
    rn_tuning *tn;
    cli_hooks h;
    rn_train_hooks hk;
} stepper;

/* Gathers step i's batches of this process's replicas. */
static void step_fill(stepper *sp, long i)
{
    const step_cfg *c = sp->c;
    int E = c->replicas;
    long global = (long)rn_dist_size(sp->d) * E * c->b;
    int s = rn_prof_begin(sp->tn->prof, "data", "step", 0);
    for (int e = 0; e < E; e++)
        batch_fill(&sp->bt[e], sp->s, i * global + (long)(rn_dist_rank(sp->d) * E + e) * c->b, c->b);
    rn_prof_end(sp->tn->prof, s);
}

static int save_snapshot(const rn_params *p, const step_cfg *c, rn_dist *d, rn_err *err)
{
    if (!c->save_weights || rn_dist_rank(d) != 0) return 0;
    return rn_weights_save(p, c->save_weights, NULL, err);
}

static void print_step(const stepper *sp, long i, double loss, int applied)
{
    const rn_tuning *tn = sp->tn;
    if (rn_dist_rank(sp->d) != 0) return;
    if (tn->scaling)
        printf("step %ld loss %.9g scale %g%s\n", i + 1, loss, (double)tn->scaler.scale, applied ? "" : " skipped");
    else
        printf("step %ld loss %.9g\n", i + 1, loss);
    fflush(stdout);
}

static int step_loop(stepper *sp, rn_err *err)
{
    const step_cfg *c = sp->c;
    rn_params *p = sp->m.p;
    rn_step_batch b[64];
    for (int e = 0; e < c->replicas; e++) b[e] = (rn_step_batch){sp->bt[e].x, sp->bt[e].k, sp->bt[e].t, sp->bt[e].v,
                                                                 sp->bt[e].d};
    for (long i = 0; i < c->steps; i++) {
        double loss;
        int applied;
        step_fill(sp, i);
        if (rn_train_step(&sp->m, &sp->opt, b, c->replicas > 1 ? &sp->rep : NULL, &sp->h.ctl, &sp->hk, &loss,
                          &applied, err))
            return -1;
        rn_profile_step_done(sp->tn->prof);
        print_step(sp, i, loss, applied);
        if (c->save_every > 0 && (i + 1) % c->save_every == 0 && save_snapshot(p, c, sp->d, err)) return -1;
    }
    return 0;
}

static int run_steps(rn_params *p, const step_data *s, const step_cfg *c, rn_dist *d, rn_tuning *tn, rn_err *err)
{
    stepper *sp = rn_xcalloc(1, sizeof *sp);
    *sp = (stepper){.s = s, .c = c, .d = d, .tn = tn, .h = cli_hooks_make(d, c->sync_bn, tn)};
    sp->hk = cli_step_hooks(&sp->h);
    rn_model_opts mo = train_opts(c->threads, c->sync_bn, d, tn);
    if (rn_model_create(&sp->m, p, c->b, (int)s->xd[1], (int)s->xd[2], &mo, err)) {
        free(sp);
        return -1;
    }
    rn_tuning_attach(tn, &sp->m);
    int E = c->replicas;
    for (int e = 0; e < E; e++) sp->bt[e] = batch_alloc(c->b, s->x.per);
    if (E > 1) rn_step_replicas_init(&sp->rep, p, E);
    sp->opt = rn_adam_default(rn_tuning_lr(tn, c->lr, (long)rn_dist_size(d) * E * c->b));
    rn_dist_grads_setup(d, p, c->bucket);
    int rc = rn_dist_bcast_params(d, p, err);
    if (!rc) rc = step_loop(sp, err);
    if (E > 1) rn_step_replicas_free(&sp->rep);
    for (int e = 0; e < E; e++) batch_free(&sp->bt[e]);
    /* before the model: spans borrow its names; rank 0 alone writes the cache, trace and table */
    if (!rc && rn_dist_rank(d) == 0) rc = rn_tuning_finish(tn, stdout, err);
    rn_model_destroy(&sp->m);
    free(sp);
    return rc ? -1 : 0;
}

static int step_check(const step_cfg *c, long b, const rn_cli_dist_flags *df, int launched)
{
    const char *msg = NULL;
    if (c->steps < 1 || b < 0 || c->lr <= 0) msg = "--steps must be >= 1, --batch >= 1 and --lr > 0";
    else if (c->replicas < 1 || c->replicas > 64) msg = "--emulate-replicas must be 1..64";
    else if (c->replicas > 1 && (c->sync_bn || launched))
        msg = "--emulate-replicas emulates per-replica BN in one process: not with --sync-bn or under mpirun";
    else if (c->save_every < 0) msg = "--save-every must be >= 0";
    else if (c->save_every > 0 && !c->save_weights) msg = "--save-every needs --save-weights";
    if (msg) fprintf(stderr, "rootnet step: %s\n", msg);
    return msg || rn_cli_dist_flags_check(df, "step") ? -1 : 0;
}

/* Reads the data and the weights, runs the steps, writes the outputs (rank 0). */
static int step_main(const char *const paths[5], const char *weights, long backbone, const char *save_grads,
                     step_cfg *c, rn_dist *d, rn_tuning *tn, rn_err *err)
{
    step_data s;
    if (step_data_read(&s, paths, err)) return -1;
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    int rc = rn_weights_load(&p, weights, (int)backbone, &rng, err);
    if (!rc) {
        c->b = c->b ? c->b : (int)s.x.n;
        rc = run_steps(&p, &s, c, d, tn, err);
        if (!rc && save_grads && rn_dist_rank(d) == 0) rc = rn_grads_save(&p, save_grads, err);
        if (!rc) rc = save_snapshot(&p, c, d, err);
        rn_params_free(&p);
    }
    step_data_free(&s);
    return rc ? -1 : 0;
}

int rn_cmd_step(int argc, char **argv)
{
    const char *paths[5] = {0}, *weights = NULL, *save_grads = NULL;
    step_cfg c = {.steps = 1, .lr = 1e-3, .replicas = 1};
    long b = 0, backbone = 0, replicas = 1;
    rn_tuning_flags tf = {0};
    rn_cli_dist_flags df = RN_CLI_DIST_FLAGS_DEFAULT;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &weights, "initial weights (required)"),
        RN_FLAG_STR("--images", &paths[0], "(N,3,H,W) float32 .npy (required)"),
        RN_FLAG_STR("--k", &paths[1], "(N) or (N,1) .npy (required)"),
        RN_FLAG_STR("--target", &paths[2], "(N,3) .npy: x, y on the output grid, depth (required)"),
        RN_FLAG_STR("--vis", &paths[3], "(N,1) .npy (required)"),
        RN_FLAG_STR("--have-depth", &paths[4], "(N,1) .npy (required)"),
        RN_FLAG_F64("--lr", &c.lr, "Adam learning rate (1e-3)"),
        RN_FLAG_RANGE("--steps", &c.steps, 1, LONG_MAX, "number of steps (1)"),
        RN_FLAG_RANGE("--batch", &b, 0, 4096, "batch per replica (default N); a step's G = ranks x replicas x B samples start "
                                   "at step * G mod N, replica j takes B of them from j * B"),
        RN_FLAG_STR("--save-grads", &save_grads, "write the last step's gradients (safetensors)"),
        RN_FLAG_STR("--save-weights", &c.save_weights, "write the weights after the last update (safetensors)"),
        RN_FLAG_RANGE("--save-every", &c.save_every, 0, LONG_MAX, "also write --save-weights every this many steps (atomically)"),
        RN_FLAG_RANGE("--backbone", &backbone, 0, 1000, "require this ResNet depth (default: from the weights)"),
        RN_FLAG_RANGE("--threads", &c.threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),
        RN_FLAG_FULL("--emulate-replicas", RN_ARG_I64, &replicas, 1, 64, 1, "test: run R replicas in this process, BN "
                     "per replica, gradients averaged: what mpirun -np R computes without --sync-bn (1)"),
        RN_CLI_DIST_FLAGS(&df),
        RN_TUNING_FLAGS(&tf),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        {0}};
    const char *syn = "--snapshot W --images X --k K --target T --vis V --have-depth D [--lr] [--steps] [--batch] "
                      "[--sync-bn]   (mpirun -np K rootnet step ...: data parallel)";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    for (int i = 0; i < 5; i++)
        if (!paths[i] || !weights)
            return rn_args_misuse(flags, argv, syn, "--snapshot, --images, --k, --target, --vis and --have-depth are required");
    c.replicas = (int)replicas, c.sync_bn = df.sync_bn, c.b = (int)b;
    if (step_check(&c, b, &df, rn_dist_launched())) return 2;
    c.bucket = rn_dist_bucket_floats(df.bucket_mb);
    rn_dist *d = NULL;
    if (rn_cli_dist_start(&d, "step", c.sync_bn, df.timeout_s)) return 1;
    rn_err err = {{0}};
    rn_tuning tn;
    int rc = rn_tuning_setup(&tn, &tf, (int)c.threads, &err) ||
             step_main(paths, weights, backbone, save_grads, &c, d, &tn, &err);
    rn_tuning_free(&tn);
    if (rc) return rn_cli_dist_fail(d, "step", &err);
    rn_dist_finalize(d);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *t, long n)
{
    double *sorted = rn_xmalloc((size_t)n * sizeof *sorted);
    memcpy(sorted, t, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    double med = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    free(sorted);
    return med;
}

typedef struct bench_cfg {
    const char *mode;
    long depth, size, b, iters, warmup, threads;
    int sync_bn, no_fold;
    size_t bucket;
} bench_cfg;

/* t: step times; comm: the gradient all-reduce's share of each (NULL for one process); dev: the model's
 * device (its peak memory where it counts it: a GPU's). */
static void print_bench(const bench_cfg *c, const rn_tuning *tn, rn_device *dev, const double *t, const double *comm,
                        int ranks)
{
    double med = median(t, c->iters);
    long global = c->b * ranks;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"mode\": \"%s\", \"fold\": %d, \"precision\": \"%s\", \"loss_scale\": %g, \"backbone\": %ld, \"size\": %ld, "
           "\"batch\": %ld, \"threads\": %ld, \"median_s\": %.6f, \"images_per_s\": %.4f, \"peak_rss_mb\": %.1f, ",
           c->mode, strcmp(c->mode, "train") && !c->no_fold, tn->policy->name, tn->scaling ? (double)tn->scaler.scale : 1.0, c->depth, c->size, global,
           c->threads, med, (double)global / med, ru.ru_maxrss / 1024.0);
    printf("\"device\": \"%s\", ", dev->name);
    if (dev->ops->mem_peak) printf("\"peak_device_mb\": %.1f, ", (double)dev->ops->mem_peak(dev) / 1048576.0);
    if (comm)
        printf("\"ranks\": %d, \"batch_per_rank\": %ld, \"allreduce_median_s\": %.6f, \"allreduce_share\": %.4f, ",
               ranks, c->b, median(comm, c->iters), median(comm, c->iters) / med);
    printf("\"steps_s\": [");
    for (long i = 0; i < c->iters; i++) printf("%s%.6f", i ? ", " : "", t[i]);
    printf("]}\n");
    fflush(stdout);
}

static void fill_inputs(batch *bt, rn_rng *rng, int b, size_t per, int oh, int ow)
{
    for (size_t i = 0; i < (size_t)b * per; i++) bt->x[i] = (float)rn_rng_normal(rng);
    for (int j = 0; j < b; j++) {
        bt->k[j] = 8000.0f + 4000.0f * (float)rn_rng_uniform(rng);
        bt->t[3 * j] = (float)(ow * rn_rng_uniform(rng));
        bt->t[3 * j + 1] = (float)(oh * rn_rng_uniform(rng));
        bt->t[3 * j + 2] = (float)(2000 + 4000 * rn_rng_uniform(rng));
        bt->v[j] = bt->d[j] = 1.0f;
    }
}

/* One benchmark step: a training step (train/step.h; under mpirun with the
 * gradient all-reduce) or an inference forward. */
static int bench_step(const bench_cfg *c, rn_tuning *tn, rn_model *m, rn_adam *opt, const batch *bt,
                      const rn_step_ctl *ctl, const rn_train_hooks *hk, rn_err *err)
{
    rn_profile *pr = tn->prof;
    if (strcmp(c->mode, "train")) {
        int sp = rn_prof_begin(pr, "forward", "step", 0);
        rn_model_forward(m, bt->x, bt->k, 0);
        (void)rn_model_coords(m); /* waits: an inference ends with its coordinates on the host */
        rn_prof_end(pr, sp);
        rn_profile_step_done(pr);
        return 0;
    }
    rn_step_batch b = {bt->x, bt->k, bt->t, bt->v, bt->d};
    double loss;
    int applied;
    if (rn_train_step(m, opt, &b, NULL, ctl, hk, &loss, &applied, err)) return -1;
    rn_profile_step_done(pr);
    return 0;
}

static int bench_loop(const bench_cfg *c, rn_tuning *tn, rn_model *m, const batch *bt, rn_dist *d, double *t,
                      double *comm, rn_err *err)
{
    rn_adam opt = rn_adam_default(rn_tuning_lr(tn, 1e-3, c->b * rn_dist_size(d)));
    cli_hooks h = cli_hooks_make(d, c->sync_bn, tn);
    rn_train_hooks hk = cli_step_hooks(&h);
    rn_dist_grads_setup(d, m->p, c->bucket);
    for (long i = 0; i < c->warmup + c->iters; i++) {
        if (i == c->warmup) rn_tuning_profile_reset(tn);
        if (rn_dist_barrier(d, err)) return -1;
        rn_dist_comm_seconds(d, 1);
        double t0 = now_s();
        if (bench_step(c, tn, m, &opt, bt, &h.ctl, &hk, err)) return -1;
        if (i >= c->warmup) t[i - c->warmup] = now_s() - t0, comm[i - c->warmup] = rn_dist_comm_seconds(d, 0);
    }
    return 0;
}

static int bench_model(const bench_cfg *c, rn_tuning *tn, rn_params *p, rn_rng *rng, rn_dist *d, rn_err *err)
{
    int train = !strcmp(c->mode, "train");
    rn_model m;
    rn_model_opts mo = train_opts(c->threads, c->sync_bn, d, tn);
    mo.inference = !train;
    mo.fold = !train && !c->no_fold;
    if (!train) mo.grad_ready = (rn_model_grad_ready){0};
    if (rn_model_create(&m, p, (int)c->b, (int)c->size, (int)c->size, &mo, err)) return -1;
    rn_tuning_attach(tn, &m);
    size_t per = 3 * (size_t)c->size * (size_t)c->size;
    batch bt = batch_alloc((int)c->b, per);
    fill_inputs(&bt, rng, (int)c->b, per, m.OH, m.OW);
    double *t = rn_xmalloc((size_t)c->iters * sizeof *t), *comm = rn_xmalloc((size_t)c->iters * sizeof *comm);
    int rc = rn_dist_bcast_params(d, p, err);
    rn_model_sync_weights(&m); /* inference; a training step syncs at its start */
    if (!rc) rc = bench_loop(c, tn, &m, &bt, d, t, comm, err);
    if (!rc && rn_dist_rank(d) == 0) {
        print_bench(c, tn, m.dev, t, d && train ? comm : NULL, rn_dist_size(d));
        rc = rn_tuning_finish(tn, stderr, err); /* before the model: spans borrow its names */
    }
    free(t), free(comm);
    batch_free(&bt);
    rn_model_destroy(&m);
    return rc;
}

static int bench_run(const bench_cfg *c, rn_tuning *tn, rn_dist *d, rn_err *err)
{
    rn_params p;
    if (rn_params_build(&p, (int)c->depth, err)) return -1;
    rn_rng rng;
    rn_rng_seed(&rng, 7 + (uint64_t)rn_dist_rank(d));
    rn_params_init(&p, &rng);
    int rc = bench_model(c, tn, &p, &rng, d, err);
    rn_params_free(&p);
    return rc;
}

int rn_cmd_bench(int argc, char **argv)
{
    bench_cfg c = {.mode = "train", .depth = 50, .size = 256, .b = 8, .iters = 5, .warmup = 1};
    rn_tuning_flags tf = {0};
    rn_cli_dist_flags df = RN_CLI_DIST_FLAGS_DEFAULT;
    rn_flag flags[] = {
        RN_FLAG_STR("--mode", &c.mode, "train | infer"),
        RN_FLAG_RANGE("--backbone", &c.depth, 0, 1000, "ResNet depth (50)"),
        RN_FLAG_RANGE("--input-size", &c.size, 32, 2048, "input size, a multiple of 32 (256)"),
        RN_FLAG_RANGE("--batch", &c.b, 1, 4096, "batch size (8); per rank under mpirun"),
        RN_FLAG_RANGE("--iters", &c.iters, 1, 1000000, "timed steps (5)"),
        RN_FLAG_RANGE("--warmup", &c.warmup, 0, 1000000, "untimed steps first (1)"),
        RN_FLAG_RANGE("--threads", &c.threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),
        RN_FLAG_BOOL("--no-fold", &c.no_fold, "infer: the unfused eval forward (default: BN folded, fused convs)"),
        RN_CLI_DIST_FLAGS(&df),
        RN_TUNING_FLAGS(&tf),
        RN_FLAG_ALIAS("--size", "--input-size"),
        {0}};
    const char *syn = "--mode train|infer [--backbone 50] [--input-size 256] [--batch N] [--iters K] [--warmup W] "
                      "[--precision fp32|bf16|bf16-o2] [--loss-scale N|dynamic] [--profile F]"
                      "   (mpirun -np K rootnet bench ...: data parallel, batch per rank)";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if ((strcmp(c.mode, "train") && strcmp(c.mode, "infer")) || c.iters < 1 || c.warmup < 0 || c.b < 1) {
        fprintf(stderr, "rootnet bench: --mode must be train or infer, --iters >= 1, --warmup >= 0, --batch >= 1\n");
        rn_args_usage(stderr, "bench", syn, flags);
        return 2;
    }
    if (rn_cli_dist_flags_check(&df, "bench")) return 2;
    c.sync_bn = df.sync_bn, c.bucket = rn_dist_bucket_floats(df.bucket_mb);
    rn_dist *d = NULL;
    if (rn_cli_dist_start(&d, "bench", c.sync_bn, df.timeout_s)) return 1;
    rn_err err = {{0}};
    rn_tuning tn;
    int rc = rn_tuning_setup(&tn, &tf, (int)c.threads, &err) || bench_run(&c, &tn, d, &err);
    rn_tuning_free(&tn);
    if (rc) return rn_cli_dist_fail(d, "bench", &err);
    rn_dist_finalize(d);
    return 0;
}

int rn_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    long backbone = 0, seed = 1;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &in, "input: safetensors, PyTorch .pth / authors' snapshot, torchvision ResNet (required)"),
        RN_FLAG_STR("--output", &out, "output safetensors with PyTorch state_dict names (required)"),
        RN_FLAG_RANGE("--backbone", &backbone, 0, 1000, "require this ResNet depth (default: from the file)"),
        RN_FLAG_I64("--seed", &seed, "seed of the authors' head init for a torchvision backbone file (1)"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot IN --output OUT.safetensors";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!in || !out) return rn_args_misuse(flags, argv, syn, "--snapshot and --output are required");
    rn_err err = {{0}};
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, (uint64_t)seed);
    if (rn_weights_load(&p, in, (int)backbone, &rng, &err)) return fail("convert", &err);
    int rc = rn_weights_save(&p, out, NULL, &err);
    rn_params_free(&p);
    return rc ? fail("convert", &err) : 0;
}
