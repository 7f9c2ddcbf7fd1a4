/* rootnet step: training steps over .npy inputs (the model core's test interface; data parallel under mpirun). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dist_cli.h"
#include "cli/exit.h"
#include "cli/model_common.h"
#include "cli/tuning_flags.h"
#include "nn/net.h"
#include "nn/weights.h"
#include "train/assemble.h"

typedef struct step_data {
    rn_cli_input x, k, t, v, d;
    int64_t xd[3];
} step_data;

static void step_data_free(step_data *s)
{
    rn_cli_input_free(&s->x), rn_cli_input_free(&s->k), rn_cli_input_free(&s->t), rn_cli_input_free(&s->v), rn_cli_input_free(&s->d);
}

/* The images, k (when the net takes it: RootNet) and the targets of a net of K output rows. */
static int step_data_read(step_data *s, const char *const paths[5], const rn_net *net, rn_err *err)
{
    memset(s, 0, sizeof *s);
    int64_t want_x[3] = {3, -1, -1};
    int K = net->K, uses_k = rn_net_uses_k(net);
    if (uses_k != (paths[1] != NULL))
        return rn_err_set(err, "--k: %s %s", net->title, uses_k ? "needs k, the (N) depth factors" : "takes no k");
    int rc = rn_cli_input_read(&s->x, paths[0], "images", 3, want_x, s->xd, err) ||
             rn_cli_input_check_size(s->xd, paths[0], err) ||
             (uses_k && (rn_cli_input_read_vec(&s->k, paths[1], "k", err) ||
                         rn_cli_input_same_n(&s->x, &s->k, "k", paths[1], err) ||
                         rn_cli_input_check_k(&s->k, paths[1], err))) ||
             rn_cli_input_read_rows(&s->t, paths[2], "target", K, 3, err) ||
             rn_cli_input_same_n(&s->x, &s->t, "target", paths[2], err) ||
             rn_cli_input_read_rows(&s->v, paths[3], "vis", K, 1, err) ||
             rn_cli_input_same_n(&s->x, &s->v, "vis", paths[3], err) || rn_cli_input_read_vec(&s->d, paths[4], "have-depth", err) ||
             rn_cli_input_same_n(&s->x, &s->d, "have-depth", paths[4], err);
    if (rc) step_data_free(s);
    return rc ? -1 : 0;
}

static void gather(float *dst, const rn_cli_input *in, long first, int b)
{
    if (!in->d) return; /* an input the net does not take (k) */
    for (int j = 0; j < b; j++) {
        int64_t idx = (first + j) % in->n;
        memcpy(dst + (size_t)j * in->per, in->d + (size_t)idx * in->per, in->per * sizeof(float));
    }
}

static void batch_fill(rn_cli_batch *bt, const step_data *s, long first, int b)
{
    gather(bt->x, &s->x, first, b), gather(bt->k, &s->k, first, b), gather(bt->t, &s->t, first, b);
    gather(bt->v, &s->v, first, b), gather(bt->d, &s->d, first, b);
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
    double bucket_mb;  /* gradient bucket */
    long save_every;   /* write save_weights every this many steps, 0: only at the end */
    const char *save_weights;
} step_cfg;

/* One step's training state in this process. */
typedef struct stepper {
    rn_train_rig r;               /* the model, Adam, the step's controls and spans (train/assemble.h) */
    rn_cli_batch bt[64];          /* one per emulated replica (bt[0] only without) */
    rn_step_replicas rep;  /* with --emulate-replicas */
    const step_data *s;
    const step_cfg *c;
    rn_dist *d;
    rn_tuning *tn;
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
    rn_params *p = sp->r.m.p;
    rn_step_batch b[64];
    for (int e = 0; e < c->replicas; e++)
        b[e] = (rn_step_batch){sp->bt[e].x, sp->s->k.d ? sp->bt[e].k : NULL, sp->bt[e].t, sp->bt[e].v, sp->bt[e].d};
    for (long i = 0; i < c->steps; i++) {
        double loss;
        int applied;
        step_fill(sp, i);
        if (rn_train_step(&sp->r.m, &sp->r.opt, b, c->replicas > 1 ? &sp->rep : NULL, &sp->r.ctl, &sp->r.spans,
                          &loss, &applied, err))
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
    *sp = (stepper){.s = s, .c = c, .d = d, .tn = tn};
    rn_train_env env = rn_train_env_make(tn, d, (int)c->threads, c->sync_bn, c->bucket_mb);
    int E = c->replicas;
    rn_train_shape sh = {.batch = c->b, .h = (int)s->xd[1], .w = (int)s->xd[2], .replicas = E, .lr = c->lr};
    if (rn_train_assemble(&sp->r, &env, p, &sh, err)) {
        free(sp);
        return -1;
    }
    for (int e = 0; e < E; e++) sp->bt[e] = rn_cli_batch_alloc(c->b, s->x.per, p->net->K, NULL);
    if (E > 1) rn_step_replicas_init(&sp->rep, p, E);
    int rc = step_loop(sp, err);
    if (E > 1) rn_step_replicas_free(&sp->rep);
    for (int e = 0; e < E; e++) rn_cli_batch_free(&sp->bt[e]);
    /* before the model: spans borrow its names; rank 0 alone writes the cache, trace and table */
    if (!rc && rn_dist_rank(d) == 0) rc = rn_tuning_finish(tn, stdout, err);
    rn_train_rig_free(&sp->r);
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
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    if (rn_weights_load(&p, weights, (int)backbone, &rng, err)) return -1;
    step_data s;
    int rc = step_data_read(&s, paths, p.net, err);
    if (!rc) {
        c->b = c->b ? c->b : (int)s.x.n;
        rc = run_steps(&p, &s, c, d, tn, err);
        if (!rc && save_grads && rn_dist_rank(d) == 0) rc = rn_grads_save(&p, save_grads, err);
        if (!rc) rc = save_snapshot(&p, c, d, err);
        step_data_free(&s);
    }
    rn_params_free(&p);
    return rc ? -1 : 0;
}

int rn_cmd_step(int argc, char **argv)
{
    const char *paths[5] = {0}, *weights = NULL, *save_grads = NULL;
    step_cfg c = {.steps = 1, .lr = 1e-3, .replicas = 1};
    long b = 0, backbone = 0, replicas = 1;
    rn_tuning_flags tf = {0};
    char prec[256];
    rn_cli_precision_help(prec, sizeof prec);
    rn_cli_dist_flags df = RN_CLI_DIST_FLAGS_DEFAULT;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &weights, "initial weights (required)"),
        RN_FLAG_STR("--images", &paths[0], "(N,3,H,W) float32 .npy (required)"),
        RN_FLAG_STR("--k", &paths[1], "(N) or (N,1) .npy (required for RootNet; PoseNet takes none)"),
        RN_FLAG_STR("--target", &paths[2], "(N,3) .npy for RootNet: x, y on the output grid, depth; (N,J,3) for "
                    "PoseNet: x, y on the output grid, z in depth bins (required)"),
        RN_FLAG_STR("--vis", &paths[3], "(N,1) .npy, (N,J,1) for PoseNet (required)"),
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
        RN_TUNING_FLAGS(&tf, prec),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        {0}};
    const char *syn = "--snapshot W --images X [--k K] --target T --vis V --have-depth D [--lr] [--steps] [--batch] "
                      "[--sync-bn]   (mpirun -np K rootnet step ...: data parallel)";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    for (int i = 0; i < 5; i++)
        if ((!paths[i] && i != 1) || !weights)
            return rn_args_misuse(flags, argv, syn, "--snapshot, --images, --target, --vis and --have-depth are required "
                                                    "(and --k for RootNet)");
    c.replicas = (int)replicas, c.sync_bn = df.sync_bn, c.b = (int)b;
    if (step_check(&c, b, &df, rn_dist_launched())) return RN_EXIT_USAGE;
    c.bucket_mb = df.bucket_mb;
    rn_cli_run r;
    int rc = rn_cli_run_begin(&r, "step", c.sync_bn, df.timeout_s, &tf, (int)c.threads);
    if (rc) return rc;
    return rn_cli_run_end(&r, "step", step_main(paths, weights, backbone, save_grads, &c, r.d, &r.tn, &r.err), RN_EXIT_FAIL);
}
