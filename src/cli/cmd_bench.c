/* rootnet bench: training or inference steps on random inputs, timed, one JSON line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dist_cli.h"
#include "cli/exit.h"
#include "cli/model_common.h"
#include "cli/tuning_flags.h"
#include "core/cpu_isa.h"
#include "core/profile.h"
#include "infer/infer_model.h"
#include "nn/calib.h"
#include "nn/net.h"
#include "train/assemble.h"

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
    const char *net, *joints; /* --net, --joints (rn_cli_net_choose) */
    const char *init; /* "authors" (default) | "he": rn_params_init_backbone_he after the authors' init */
    long depth, size, b, iters, warmup, threads;
    int sync_bn, no_fold, convs, plan_only;
    double bucket_mb;
} bench_cfg;

/* Each step's loss and whether it was applied (0: skipped on inf/NaN gradients), warm-up included. */
typedef struct bench_losses {
    double *loss;
    int *applied;
} bench_losses;

/* ", \"losses\": [...], \"skipped_steps\": [...]" of a training run (every step, warm-up included). */
static void print_losses(const bench_cfg *c, const bench_losses *bl)
{
    long n = c->warmup + c->iters;
    printf("\"losses\": [");
    for (long i = 0; i < n; i++) printf("%s%.6g", i ? ", " : "", bl->loss[i]);
    printf("], \"skipped_steps\": [");
    for (long i = 0, k = 0; i < n; i++)
        if (!bl->applied[i]) printf("%s%ld", k++ ? ", " : "", i + 1);
    printf("], ");
}

static double mib(size_t bytes) { return (double)bytes / 1048576.0; }

/* "\"plan_mb\": {...}, ": the model's planned device memory (nn/model.h's memory plan), MiB: each kind, their sum
 * (no_reuse), the arena with reuse, the most live at one time, p's arenas, and arena + params. */
static void print_plan(const rn_model_mem *mem)
{
    size_t sum = 0;
    printf("\"plan_mb\": {");
    for (int k = 0; k < RN_MEM_KINDS; k++) {
        printf("\"%s\": %.1f, ", rn_mem_kind_name((rn_mem_kind)k), mib(mem->by_kind[k]));
        sum += mem->by_kind[k];
    }
    printf("\"no_reuse\": %.1f, \"arena\": %.1f, \"live_peak\": %.1f, \"params\": %.1f, \"total\": %.1f}, ", mib(sum),
           mib(mem->arena), mib(mem->live_peak), mib(mem->params), mib(mem->arena + mem->params));
}

/* t: step times; comm: the gradient all-reduce's share of each (NULL for one process); m: the model (its
 * device's peak memory where it counts it: a GPU's; its plan's memory; whether its steps ran as a graph);
 * bl: the training steps' losses (NULL: inference). */
static void print_bench(const bench_cfg *c, const rn_tuning *tn, const rn_model *m, const double *t, const double *comm,
                        const bench_losses *bl, int ranks)
{
    rn_device *dev = m->dev;
    double med = median(t, c->iters);
    long global = c->b * ranks;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"mode\": \"%s\", \"fold\": %d, \"precision\": \"%s\", \"loss_scale\": %g, \"backbone\": %ld, \"size\": %ld, "
           "\"batch\": %ld, \"threads\": %ld, \"median_s\": %.6f, \"images_per_s\": %.4f, \"peak_rss_mb\": %.1f, ",
           c->mode, strcmp(c->mode, "train") && !c->no_fold, tn->policy->name, tn->scaling ? (double)tn->scaler.scale : 1.0, c->depth, c->size, global,
           c->threads, med, (double)global / med, ru.ru_maxrss / 1024.0);
    printf("\"device\": \"%s\", \"graph\": %d, \"prefetch\": %d, ", dev->name,
           m->step_graph[0].g || m->step_graph[1].g || m->fwd_graph.g, m->opts.prefetch);
    rn_cpu_isa isa;
    char isa_line[128];
    rn_cpu_isa_detect(&isa);
    printf("\"net\": \"%s\", \"cpu\": \"%s\", \"isa\": \"%s\", ", m->p->net->name, isa.model,
           rn_cpu_isa_line(&isa, isa_line, sizeof isa_line));
    print_plan(&m->mem);
    if (dev->ops->mem_peak) { /* beyond the plan: the device's own (conv weights and workspace, kernel scratch) */
        size_t peak = dev->ops->mem_peak(dev), plan = m->mem.arena + m->mem.params;
        printf("\"peak_device_mb\": %.1f, \"device_own_mb\": %.1f, ", mib(peak), mib(peak) - mib(plan));
    }
    if (comm)
        printf("\"ranks\": %d, \"batch_per_rank\": %ld, \"allreduce_median_s\": %.6f, \"allreduce_share\": %.4f, ",
               ranks, c->b, median(comm, c->iters), median(comm, c->iters) / med);
    if (bl) print_losses(c, bl);
    printf("\"steps_s\": [");
    for (long i = 0; i < c->iters; i++) printf("%s%.6f", i ? ", " : "", t[i]);
    printf("]}\n");
    fflush(stdout);
}

/* Random inputs: normal images, k in [8000, 12000), each row's target inside the output grid, its third
 * column in the depth bins of a heat-map layer with bins (PoseNet), else a depth in [2000, 6000) mm. */
static void fill_inputs(rn_cli_batch *bt, rn_rng *rng, int b, size_t per, const rn_net *net, int OH, int OW)
{
    const rn_head_layer *h = rn_net_layer(net, RN_HEAD_HEATMAP);
    int bins = h && h->bins > 1 ? h->bins : 0, K = net->K;
    for (size_t i = 0; i < (size_t)b * per; i++) bt->x[i] = (float)rn_rng_normal(rng);
    for (int j = 0; j < b; j++) {
        bt->k[j] = 8000.0f + 4000.0f * (float)rn_rng_uniform(rng);
        bt->d[j] = 1.0f;
        for (int r = 0; r < K; r++) {
            float *t = bt->t + 3 * ((size_t)j * K + r);
            t[0] = (float)(OW * rn_rng_uniform(rng));
            t[1] = (float)(OH * rn_rng_uniform(rng));
            t[2] = (float)(bins ? bins * rn_rng_uniform(rng) : 2000 + 4000 * rn_rng_uniform(rng));
            bt->v[(size_t)j * K + r] = 1.0f;
        }
    }
}

/* The next batch of a benchmark (the same one again), uploaded beside the step (rn_model_prefetch). */
typedef struct bench_next {
    rn_model *m;
    const rn_cli_batch *bt;
} bench_next;

static int prefetch(void *ctx, rn_err *err)
{
    (void)err;
    const bench_next *n = ctx;
    rn_model_prefetch(n->m, n->bt->x, n->bt->k, n->bt->t, n->bt->v, n->bt->d);
    return 0;
}

/* One benchmark step: a training step (train/step.h; under mpirun with the
 * gradient all-reduce; the next batch prefetched where the model does) or an inference forward (r NULL). */
static int bench_step(rn_tuning *tn, rn_model *m, rn_train_rig *r, const rn_cli_batch *bt, double *loss, int *applied,
                      rn_err *err)
{
    rn_profile *pr = tn->prof;
    if (!r) {
        int sp = rn_prof_begin(pr, "forward", "step", 0);
        rn_model_forward(m, bt->x, bt->k, 0);
        (void)rn_model_coords(m); /* waits: an inference ends with its coordinates on the host */
        rn_prof_end(pr, sp);
        rn_profile_step_done(pr);
        return 0;
    }
    rn_step_batch b = {bt->x, bt->k, bt->t, bt->v, bt->d};
    bench_next nx = {m, bt};
    rn_step_ctl ctl = r->ctl;
    ctl.next = (rn_step_next){prefetch, &nx};
    if (rn_train_step(m, &r->opt, &b, NULL, &ctl, &r->spans, loss, applied, err)) return -1;
    rn_profile_step_done(pr);
    return 0;
}

static int bench_loop(const bench_cfg *c, rn_tuning *tn, rn_model *m, rn_train_rig *r, const rn_cli_batch *bt,
                      rn_dist *d, double *t, double *comm, bench_losses *bl, rn_err *err)
{
    for (long i = 0; i < c->warmup + c->iters; i++) {
        if (i == c->warmup) rn_tuning_profile_reset(tn);
        if (rn_dist_barrier(d, err)) return -1;
        rn_dist_comm_seconds(d, 1);
        double t0 = rn_prof_now();
        if (bench_step(tn, m, r, bt, &bl->loss[i], &bl->applied[i], err)) return -1;
        if (i >= c->warmup) t[i - c->warmup] = rn_prof_now() - t0, comm[i - c->warmup] = rn_dist_comm_seconds(d, 0);
    }
    return 0;
}

/* int8: the ranges of the conv inputs on the bench's own batch, from one forward of the fp32 fold model. */
static int bench_calibrate(rn_calib *cal, const rn_infer_cfg *ic, rn_params *p, const rn_cli_batch *bt, rn_err *err)
{
    rn_infer_cfg fc = *ic;
    rn_model fm;
    fc.precision = RN_PREC_FP32;
    fc.base.graph = 0;
    fc.base.tune = NULL;
    fc.observe = (rn_model_observe){rn_calib_observe, cal};
    rn_calib_init(cal, NULL);
    rn_calib_set_net(cal, p->net);
    if (rn_infer_model_open(&fm, p, &fc, err)) return -1;
    rn_model_forward(&fm, bt->x, bt->k, 0);
    rn_model_coords(&fm);
    rn_model_destroy(&fm);
    cal->images = fc.batch;
    return 0;
}

/* The inference model (infer/infer_model.h) on the training step's device, tuning and threads
 * (train/assemble.h), with rank 0's weights; int8 calibrated on bt first. */
static int infer_model(rn_model *m, const bench_cfg *c, const rn_train_env *env, rn_params *p, const rn_cli_batch *bt,
                       rn_err *err)
{
    rn_infer_cfg ic = {.base = rn_train_env_model_opts(env), .precision = env->tn->policy->id, .fold = !c->no_fold,
                       .batch = (int)c->b, .h = (int)c->size, .w = (int)c->size};
    ic.base.pinned_inputs = rn_train_env_pin(env) != NULL;
    if (rn_dist_bcast_params(env->dist, p, err)) return -1;
    rn_calib cal = {0};
    int i8 = ic.precision == RN_PREC_INT8;
    if (i8 && bench_calibrate(&cal, &ic, p, bt, err)) return -1;
    ic.calib = i8 ? &cal : NULL;
    int rc = rn_infer_model_open(m, p, &ic, err);
    rn_calib_free(&cal);
    if (rc) return -1;
    rn_tuning_attach(env->tn, m);
    return 0;
}

/* --plan-only: the memory plan of the model the run would build, one JSON line; nothing allocated on the device. */
static int bench_plan(const bench_cfg *c, const rn_train_env *env, rn_params *p, rn_err *err)
{
    rn_model_opts mo = rn_train_env_model_opts(env);
    mo.inference = strcmp(c->mode, "train") != 0;
    mo.fold = mo.inference && !c->no_fold;
    rn_model_mem mem;
    if (rn_model_plan(&mem, p, (int)c->b, (int)c->size, (int)c->size, &mo, err)) return -1;
    if (env->rank) return 0;
    printf("{\"mode\": \"%s\", \"fold\": %d, \"precision\": \"%s\", \"backbone\": %ld, "
           "\"size\": %ld, \"batch\": %ld, \"device\": \"%s\", ", c->mode, mo.fold, env->tn->policy->name, c->depth,
           c->size, c->b, p->dev->name);
    print_plan(&mem);
    printf("\"plan_only\": 1}\n");
    return 0;
}

static int bench_model(const bench_cfg *c, rn_tuning *tn, rn_params *p, rn_rng *rng, rn_dist *d, rn_err *err)
{
    int train = !strcmp(c->mode, "train");
    rn_train_env env = rn_train_env_make(tn, d, (int)c->threads, c->sync_bn, c->bucket_mb);
    if (c->plan_only) return bench_plan(c, &env, p, err);
    rn_device *pin = rn_train_env_pin(&env);
    rn_train_shape sh = {.batch = (int)c->b, .h = (int)c->size, .w = (int)c->size, .pinned_inputs = pin != NULL,
                         .lr = 1e-3};
    rn_train_rig r;
    rn_model im;
    size_t per = 3 * (size_t)c->size * (size_t)c->size;
    rn_cli_batch bt = rn_cli_batch_alloc((int)c->b, per, p->net->K, pin);
    fill_inputs(&bt, rng, (int)c->b, per, p->net, (int)c->size / 4, (int)c->size / 4);
    if (train ? rn_train_assemble(&r, &env, p, &sh, err) : infer_model(&im, c, &env, p, &bt, err)) {
        rn_cli_batch_free(&bt);
        return -1;
    }
    rn_model *m = train ? &r.m : &im;
    double *t = rn_xmalloc((size_t)c->iters * sizeof *t), *comm = rn_xmalloc((size_t)c->iters * sizeof *comm);
    size_t steps = (size_t)(c->warmup + c->iters);
    bench_losses bl = {rn_xmalloc(steps * sizeof *bl.loss), rn_xmalloc(steps * sizeof *bl.applied)};
    for (size_t i = 0; i < steps; i++) bl.loss[i] = 0, bl.applied[i] = 1;
    int rc = bench_loop(c, tn, m, train ? &r : NULL, &bt, d, t, comm, &bl, err);
    if (!rc && env.rank == 0) {
        print_bench(c, tn, m, t, d && train ? comm : NULL, train ? &bl : NULL, env.world);
        if (c->convs) rn_model_print_convs(m, stderr);
        rc = rn_tuning_finish(tn, stderr, err); /* before the model: spans borrow its names */
    }
    free(t), free(comm), free(bl.loss), free(bl.applied);
    rn_cli_batch_free(&bt);
    if (train) rn_train_rig_free(&r);
    else rn_model_destroy(&im);
    return rc;
}

static int bench_run(const bench_cfg *c, rn_tuning *tn, rn_dist *d, rn_err *err)
{
    rn_params p;
    const rn_net *net;
    if (rn_cli_net_choose(&net, c->net, c->joints, err) || rn_params_build_net(&p, net, (int)c->depth, err)) return -1;
    rn_rng rng;
    rn_rng_seed(&rng, 7 + (uint64_t)rn_dist_rank(d));
    rn_params_init(&p, &rng);
    if (!strcmp(c->init, "he")) rn_params_init_backbone_he(&p, &rng);
    int rc = bench_model(c, tn, &p, &rng, d, err);
    rn_params_free(&p);
    return rc;
}

int rn_cmd_bench(int argc, char **argv)
{
    bench_cfg c = {.mode = "train", .net = "rootnet", .init = "authors", .depth = 50, .size = 256, .b = 8, .iters = 5, .warmup = 1};
    rn_tuning_flags tf = {0};
    char prec[256];
    rn_cli_precision_help(prec, sizeof prec);
    rn_cli_dist_flags df = RN_CLI_DIST_FLAGS_DEFAULT;
    rn_flag flags[] = {
        RN_FLAG_STR("--mode", &c.mode, "train | infer"),
        RN_FLAG_STR("--net", &c.net, "rootnet (default) | posenet"),
        RN_FLAG_STR("--joints", &c.joints, "posenet: the joints of Human36M (18, default) | MuCo (21)"),
        RN_FLAG_RANGE("--backbone", &c.depth, 0, 1000, "ResNet depth (50)"),
        RN_FLAG_RANGE("--input-size", &c.size, 32, 2048, "input size, a multiple of 32 (256)"),
        RN_FLAG_RANGE("--batch", &c.b, 1, 4096, "batch size (8); per rank under mpirun"),
        RN_FLAG_RANGE("--iters", &c.iters, 1, 1000000, "timed steps (5)"),
        RN_FLAG_RANGE("--warmup", &c.warmup, 0, 1000000, "untimed steps first (1)"),
        RN_FLAG_RANGE("--threads", &c.threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),
        RN_FLAG_STR("--init", &c.init, "authors (default: every conv N(0, 0.001)) | he: backbone convs He-normal, as pretrained weights' scale (nn/params.h)"),
        RN_FLAG_BOOL("--no-fold", &c.no_fold, "infer: the unfused eval forward (default: BN folded, fused convs)"),
        RN_FLAG_BOOL("--convs", &c.convs, "print each conv's shape and the implementation chosen (stderr)"),
        RN_FLAG_BOOL("--plan-only", &c.plan_only, "print the model's memory plan (plan_mb) and run nothing"),
        RN_CLI_DIST_FLAGS(&df),
        RN_TUNING_FLAGS(&tf, prec),
        RN_FLAG_ALIAS("--size", "--input-size"),
        {0}};
    const char *syn = "--mode train|infer [--net rootnet|posenet] [--backbone 50] [--input-size 256] [--batch N] [--iters K] [--warmup W] "
                      "[--precision fp32|bf16|bf16-o2|int8 (infer)|auto] [--loss-scale N|dynamic] [--profile F]"
                      "   (mpirun -np K rootnet bench ...: data parallel, batch per rank)";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if ((strcmp(c.mode, "train") && strcmp(c.mode, "infer")) || c.iters < 1 || c.warmup < 0 || c.b < 1 ||
        (strcmp(c.init, "authors") && strcmp(c.init, "he"))) {
        fprintf(stderr, "rootnet bench: --mode must be train or infer, --init authors or he, --iters >= 1, --warmup >= 0, "
                        "--batch >= 1\n");
        rn_args_usage(stderr, "bench", syn, flags);
        return RN_EXIT_USAGE;
    }
    if (rn_cli_dist_flags_check(&df, "bench")) return RN_EXIT_USAGE;
    c.sync_bn = df.sync_bn, c.bucket_mb = df.bucket_mb;
    tf.infer = !strcmp(c.mode, "infer");
    rn_cli_run r;
    int rc = rn_cli_run_begin(&r, "bench", c.sync_bn, df.timeout_s, &tf, (int)c.threads);
    if (rc) return rc;
    return rn_cli_run_end(&r, "bench", bench_run(&c, &r.tn, r.d, &r.err), RN_EXIT_FAIL);
}
