/* The guard device ("ref-guard", src/ref/ref_guard.c) catches host access to
 * device memory, and the model keeps its state on the device:
 *  - a child process that reads or writes a ref-guard buffer through its
 *    pointer dies; the same access to a host array, and download/upload, work;
 *  - a ResNet-18 RootNet on ref-guard: forward, backward and Adam give the ref
 *    device's numbers bit for bit (read back with rn_params_download), and a
 *    host read of any of its arenas (weights, gradients, moments, BN
 *    statistics) dies, while its host copy of the output (m.coord) reads fine;
 *  - a training step (train/step.h) waits for the device once and allocates
 *    nothing on it: ref-guard counts its waiting calls and its allocs, with and
 *    without loss scaling and profiling (a scaled step that overflows is
 *    skipped on the device, still with one wait);
 *  - the exporters read parameters through rn_params_download: ONNX and the
 *    authors' .pth.tar written from the ref-guard model's parameters are
 *    byte-equal to those written from the ref model's (a host read dies).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "export/export.h"
#include "nn/dev_clock.h"
#include "nn/model.h"

#include "optim/adam.h"
#include "ref/ref.h"
#include "train/step.h"

/* 1 if reading (write 0) or writing (write 1) *p in a child process kills it. */
static int access_dies(float *p, int write)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY); /* the sanitizers' report of the fault, if any */
        if (null >= 0) dup2(null, 2);
        volatile float *v = p;
        if (write)
            *v = 1.0f;
        else
            (void)*v;
        _exit(0);
    }
    int st = 0;
    RN_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_buffers(void)
{
    rn_device *dev;
    rn_err err = {{0}};
    RN_CHECK(!rn_device_create(&dev, "ref-guard", 1, &err), "ref-guard opens: %s", err.msg);
    RN_CHECK(!dev->host_memory, "ref-guard: not host memory");
    float host[64], back[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i - 7.5f;
    float *buf = dev->ops->alloc(dev, sizeof host);
    dev->ops->upload(dev, buf, host, sizeof host);
    dev->ops->download(dev, back, buf, sizeof back);
    RN_CHECK(!memcmp(host, back, sizeof host), "upload then download gives the data back");
    dev->ops->fill(dev, buf + 8, 3.0f, 4);
    dev->ops->download(dev, back, buf, sizeof back);
    RN_CHECK(back[7] == host[7] && back[8] == 3.0f && back[11] == 3.0f && back[12] == host[12], "an op on the buffer");
    RN_CHECK(access_dies(buf, 0), "a host read of a device buffer dies");
    RN_CHECK(access_dies(buf + 63, 1), "a host write into a device buffer dies");
    RN_CHECK(!access_dies(host, 0) && !access_dies(host, 1), "host arrays read and write fine (the check can pass)");
    dev->ops->free(dev, buf);
    rn_device_destroy(dev);
}

/* ref-guard's op table is ref's (nn/device_ops.inc, every entry) plus its own clock, graphs and pinned
 * host memory: each op ref has is there, and no other but the events, the graphs and the pinned memory. */
static void test_ops(void)
{
    rn_device *ref, *gd;
    rn_err err = {{0}};
    RN_CHECK(!rn_device_create(&ref, "ref", 1, &err) && !rn_device_create(&gd, "ref-guard", 1, &err), "%s", err.msg);
    int same = 0, events = 0, graphs = 0, pinned = 0;
    for (int i = 0; i < RN_OP_COUNT; i++) {
        int r = rn_device_op_has(ref->ops, i), g = rn_device_op_has(gd->ops, i);
        const char *name = rn_device_op_name(i);
        int clock = !strncmp(name, "event", 5), graph = !strncmp(name, "graph_", 6);
        int pin = !strcmp(name, "host_alloc") || !strcmp(name, "host_free") || !strcmp(name, "upload_async");
        same += r == g;
        events += clock && g && !r;
        graphs += graph && g && !r;
        pinned += pin && g && !r;
        if (r != g && !clock && !graph && !pin)
            printf("op %s: ref %s, ref-guard %s\n", rn_device_op_name(i), r ? "has" : "lacks", g ? "has" : "lacks");
    }
    RN_CHECK(same == RN_OP_COUNT - 11 && events == 4 && graphs == 4 && pinned == 3,
             "ref-guard: ref's ops (%d of %d the same), its own 4 event ops (%d), 4 graph ops (%d) and 3 pinned "
             "memory ops (%d)", same, RN_OP_COUNT, events, graphs, pinned);
    RN_CHECK(rn_device_op_has(gd->ops, RN_OP_conv_forward_fused) && !rn_device_op_has(gd->ops, RN_OP_allreduce),
             "ref-guard forwards conv_forward_fused (ref has it), not allreduce (ref lacks it)");
    RN_CHECK(!strcmp(rn_device_op_name(RN_OP_bn_sums), "bn_sums") && !strcmp(rn_device_op_name(0), "destroy") &&
                 !rn_device_op_name(RN_OP_COUNT) && !rn_device_op_name(-1),
             "op names by index");
    rn_device_destroy(gd);
    rn_device_destroy(ref);
}

enum { N = 2, S = 64 };

typedef struct run {
    rn_params p;
    rn_model m;
    float *w, *g, *mv, *st; /* host copies after one step */
    double loss;
    long waits, allocs;     /* ref-guard's waiting and alloc calls inside the step (-1 on another device) */
} run;

/* One forward, backward and Adam step of a ResNet-18 on device `name`. */
static int run_step(run *r, const char *name)
{
    rn_err err = {{0}};
    rn_rng rng;
    rn_rng_seed(&rng, 5);
    memset(r, 0, sizeof *r);
    if (rn_params_build(&r->p, 18, &err)) return -1;
    rn_params_init(&r->p, &rng);
    rn_model_opts o = {.device = name, .threads = 1, .compute = RN_NUM_F32};
    if (rn_model_create(&r->m, &r->p, N, S, S, &o, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        rn_params_free(&r->p);
        return -1;
    }
    float *x = rn_xmalloc((size_t)N * 3 * S * S * sizeof *x);
    for (size_t i = 0; i < (size_t)N * 3 * S * S; i++) x[i] = (float)rn_rng_normal(&rng);
    float k[N] = {1500.0f, 2500.0f}, t[3 * N] = {3.0f, 5.0f, 2000.0f, 11.0f, 7.0f, 3000.0f}, v[N] = {1, 1}, d[N] = {1, 0};
    rn_step_batch b = {x, k, t, v, d};
    rn_adam opt = rn_adam_default(1e-3);
    int guard = !strcmp(name, "ref-guard"), applied;
    long w0 = guard ? rn_ref_guard_waits(r->m.dev) : 0, a0 = guard ? rn_ref_guard_allocs(r->m.dev) : 0;
    int rc = rn_train_step(&r->m, &opt, &b, NULL, NULL, NULL, &r->loss, &applied, &err);
    r->waits = guard ? rn_ref_guard_waits(r->m.dev) - w0 : -1;
    r->allocs = guard ? rn_ref_guard_allocs(r->m.dev) - a0 : -1;
    (void)rn_model_coords(&r->m);
    rn_params *p = &r->p;
    size_t np = p->n_param * sizeof(float);
    r->g = rn_xmalloc(np), r->w = rn_xmalloc(np), r->mv = rn_xmalloc(2 * np), r->st = rn_xmalloc(p->n_stats * 4);
    rn_params_download(p, r->g, p->grad, np);
    RN_CHECK(!rc && applied, "%s: the step ran: %s", name, err.msg);
    rn_params_download(p, r->w, p->param, np);
    rn_params_download(p, r->mv, p->m, 2 * np);
    rn_params_download(p, r->st, p->stats, p->n_stats * sizeof(float));
    free(x);
    return 0;
}

static void run_free(run *r)
{
    rn_model_destroy(&r->m);
    rn_params_free(&r->p);
    free(r->w), free(r->g), free(r->mv), free(r->st);
}

/* The whole file into a malloc'ed buffer (*n bytes), or NULL. */
static unsigned char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = NULL;
    if (!fseek(f, 0, SEEK_END) && (*n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
        b = rn_xmalloc((size_t)*n);
        if (fread(b, 1, (size_t)*n, f) != (size_t)*n) free(b), b = NULL;
    }
    fclose(f);
    return b;
}

static int same_file(const char *a, const char *b)
{
    long na = 0, nb = 0;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, (size_t)na);
    free(x), free(y);
    return same;
}

/* Both exporters from the parameters (weights, moments, statistics) of ref and ref-guard. */
static void test_export(run *ref, run *gd)
{
    char dir[] = "/tmp/rn_test_guard_XXXXXX", path[2][2][64];
    RN_ASSERT(mkdtemp(dir));
    rn_export_optim o = {.adam = rn_adam_default(1e-3), .has_moments = 1};
    o.adam.step = 1;
    rn_err err = {{0}};
    int onnx = !rn_export_onnx_check(dir, &err);
    run *r[2] = {ref, gd};
    for (int i = 0; i < 2; i++) {
        snprintf(path[i][0], sizeof path[i][0], "%s/%d.pth.tar", dir, i);
        snprintf(path[i][1], sizeof path[i][1], "%s/%d.onnx", dir, i);
        RN_CHECK(!rn_export_authors_pth(&r[i]->p, 3, &o, path[i][0], &err), "pth export %d: %s", i, err.msg);
        if (onnx) RN_CHECK(!rn_export_onnx(&r[i]->p, S, S, path[i][1], &err), "onnx export %d: %s", i, err.msg);
    }
    RN_CHECK(same_file(path[0][0], path[1][0]), "authors' .pth.tar from ref-guard == from ref");
    if (onnx) RN_CHECK(same_file(path[0][1], path[1][1]), "ONNX from ref-guard == from ref");
    else printf("ONNX export not in this build: only the .pth.tar compared\n");
    for (int i = 0; i < 2; i++) remove(path[i][0]), remove(path[i][1]);
    rmdir(dir);
}

static void test_model(void)
{
    run ref, gd;
    int ok = !run_step(&ref, "ref") && !run_step(&gd, "ref-guard");
    RN_CHECK(ok, "a step on ref and on ref-guard");
    if (!ok) return;
    size_t np = ref.p.n_param * sizeof(float);
    RN_CHECK(ref.loss == gd.loss, "loss %.17g (ref) == %.17g (ref-guard)", ref.loss, gd.loss);
    RN_CHECK(gd.waits == 1, "a training step waits for the device once (ref-guard counted %ld)", gd.waits);
    RN_CHECK(gd.allocs == 0, "a training step allocates nothing on the device (ref-guard counted %ld)", gd.allocs);
    RN_CHECK(!memcmp(ref.m.coord, gd.m.coord, 3 * N * sizeof(float)), "output (host copy) bit-equal");
    RN_CHECK(!memcmp(ref.g, gd.g, np), "gradients bit-equal");
    RN_CHECK(!memcmp(ref.w, gd.w, np) && !memcmp(ref.mv, gd.mv, 2 * np), "weights and moments after Adam bit-equal");
    RN_CHECK(!memcmp(ref.st, gd.st, ref.p.n_stats * sizeof(float)), "BN running statistics bit-equal");
    rn_params *p = &gd.p;
    RN_CHECK(access_dies(p->param + 5, 0) && access_dies(p->grad, 0) && access_dies(p->m, 1) &&
                 access_dies(p->v + 17, 0) && access_dies(p->stats, 0),
             "host reads/writes of the weights, gradients, moments and BN statistics die");
    RN_CHECK(!access_dies(gd.m.coord, 0) && !access_dies(ref.p.param, 0), "the host output, and ref's host memory, read fine");
    test_export(&ref, &gd);
    run_free(&ref);
    run_free(&gd);
}

/* Steps with dynamic loss scaling on ref-guard: one wait each, a clean step applied, a step whose
 * gradients overflow (the scale 2^127 turns them to Inf) skipped with the weights untouched. */
static void test_scaled_waits(void)
{
    rn_err err = {{0}};
    rn_rng rng;
    rn_rng_seed(&rng, 9);
    rn_params p;
    rn_model m;
    RN_CHECK(!rn_params_build(&p, 18, &err), "params: %s", err.msg);
    rn_params_init(&p, &rng);
    rn_model_opts o = {.device = "ref-guard", .threads = 1, .compute = RN_NUM_F32};
    if (rn_model_create(&m, &p, N, S, S, &o, &err)) {
        RN_CHECK(0, "ref-guard model: %s", err.msg);
        rn_params_free(&p);
        return;
    }
    float *x = rn_xmalloc((size_t)N * 3 * S * S * sizeof *x);
    for (size_t i = 0; i < (size_t)N * 3 * S * S; i++) x[i] = (float)rn_rng_normal(&rng);
    float k[N] = {1500.0f, 2500.0f}, t[3 * N] = {3.0f, 5.0f, 2000.0f, 11.0f, 7.0f, 3000.0f}, v[N] = {1, 1}, d[N] = {1, 1};
    rn_step_batch b = {x, k, t, v, d};
    rn_adam opt = rn_adam_default(1e-3);
    rn_loss_scaler ls = rn_loss_scaler_dynamic();
    rn_step_ctl ctl = {.scaler = &ls};
    float *w0 = rn_xmalloc(p.n_param * sizeof *w0), *w1 = rn_xmalloc(p.n_param * sizeof *w1);
    const float scales[2] = {1024.0f, 0x1p127f};
    for (int i = 0; i < 2; i++) {
        double loss;
        int applied = -1;
        ls.scale = scales[i];
        rn_params_download(&p, w0, p.param, p.n_param * sizeof *w0);
        long before = rn_ref_guard_waits(m.dev), allocs = rn_ref_guard_allocs(m.dev);
        int rc = rn_train_step(&m, &opt, &b, NULL, &ctl, NULL, &loss, &applied, &err);
        long waits = rn_ref_guard_waits(m.dev) - before;
        allocs = rn_ref_guard_allocs(m.dev) - allocs;
        rn_params_download(&p, w1, p.param, p.n_param * sizeof *w1);
        int same = !memcmp(w0, w1, p.n_param * sizeof *w0);
        RN_CHECK(!rc && waits == 1, "scale %g: one wait per step (counted %ld): %s", (double)scales[i], waits,
                 rc ? err.msg : "");
        RN_CHECK(allocs == 0, "scale %g: no allocation in the step (counted %ld)", (double)scales[i], allocs);
        RN_CHECK(applied == (i == 0) && same == (i == 1) && opt.step == 1,
                 "scale %g: applied %d, weights %s, Adam step %ld", (double)scales[i], applied,
                 same ? "unchanged" : "changed", opt.step);
    }
    RN_CHECK(ls.skipped == 1 && ls.scale == 0x1p126f, "the overflow halved the scale (%g) and counted a skip (%ld)",
             (double)ls.scale, ls.skipped);
    /* Profiled on ref-guard's events (nn/dev_clock.h): the layer spans are timed without a wait in the step. */
    rn_profile prof;
    rn_profile_init(&prof, 4096);
    rn_dev_clock clk;
    RN_CHECK(!rn_dev_clock_init(&clk, m.dev, 1024), "ref-guard has events");
    rn_prof_clock pc = rn_dev_clock_get(&clk);
    rn_profile_set_clock(&prof, &pc);
    m.prof = &prof;
    double loss;
    int applied;
    long before = rn_ref_guard_waits(m.dev), allocs = rn_ref_guard_allocs(m.dev);
    int rc = rn_train_step(&m, &opt, &b, NULL, &ctl, NULL, &loss, &applied, &err);
    long waits = rn_ref_guard_waits(m.dev) - before;
    allocs = rn_ref_guard_allocs(m.dev) - allocs;
    rn_profile_step_done(&prof);
    int layers = 0, timed = 1;
    for (size_t i = 0; i < prof.n; i++) {
        const rn_prof_span *s = &prof.s[i];
        layers += !strcmp(s->cat, "fwd");
        timed &= s->e0 >= 0 && s->e1 >= 0 && s->t1 >= s->t0;
    }
    RN_CHECK(!rc && waits == 1, "a profiled step waits once (counted %ld)", waits);
    RN_CHECK(allocs == 0, "a profiled step allocates nothing (counted %ld)", allocs);
    RN_CHECK(layers > 20 && timed, "%d forward layer spans, each on the device clock", layers);
    m.prof = NULL;
    rn_dev_clock_free(&clk);
    rn_profile_free(&prof);

    free(x), free(w0), free(w1);
    rn_model_destroy(&m);
    rn_params_free(&p);
}


/* A ResNet-18 at GS x GS for the graph tests (the smallest input: ref is slow). */
enum { GS = 32 };
typedef struct gmodel {
    rn_params p;
    rn_model m;
} gmodel;

static int gmodel_make(gmodel *g, const char *dev, int graph, int fold)
{
    rn_err err = {{0}};
    rn_rng rng;
    rn_rng_seed(&rng, 13);
    if (rn_params_build(&g->p, 18, &err)) return -1;
    rn_params_init(&g->p, &rng);
    rn_model_opts o = {.device = dev, .threads = 1, .compute = RN_NUM_F32, .graph = graph, .inference = fold,
                       .fold = fold};
    if (!rn_model_create(&g->m, &g->p, N, GS, GS, &o, &err)) {
        if (fold) rn_model_sync_weights(&g->m);
        return 0;
    }
    RN_CHECK(0, "%s model: %s", dev, err.msg);
    rn_params_free(&g->p);
    return -1;
}

static void gmodel_free(gmodel *g)
{
    rn_model_destroy(&g->m);
    rn_params_free(&g->p);
}

/* Batch `step` (images and targets differ from step to step). */
static void graph_batch(float *x, float *k, float *t, int step)
{
    rn_rng rng;
    rn_rng_seed(&rng, 100 + (uint64_t)step);
    for (size_t i = 0; i < (size_t)N * 3 * GS * GS; i++) x[i] = (float)rn_rng_normal(&rng);
    for (int n = 0; n < N; n++) {
        k[n] = 1000.0f + 500.0f * (float)(n + step);
        t[3 * n] = (float)(3 + step), t[3 * n + 1] = (float)(5 + n), t[3 * n + 2] = 2000.0f + 100.0f * (float)step;
    }
}

/* 1 if a and b hold the same parameters, moments, BN statistics and counters, bit for bit. */
static int same_state(rn_params *a, rn_params *b)
{
    size_t np = a->n_param * sizeof(float), ns = a->n_stats * sizeof(float);
    float *x = rn_xmalloc(3 * np + ns), *y = rn_xmalloc(3 * np + ns);
    rn_params_download(a, x, a->param, np), rn_params_download(b, y, b->param, np);
    rn_params_download(a, x + a->n_param, a->m, 2 * np), rn_params_download(b, y + b->n_param, b->m, 2 * np);
    rn_params_download(a, x + 3 * a->n_param, a->stats, ns), rn_params_download(b, y + 3 * b->n_param, b->stats, ns);
    int same = !memcmp(x, y, 3 * np + ns) && !memcmp(a->nbt, b->nbt, a->n_nbt * sizeof *a->nbt);
    free(x), free(y);
    return same;
}

/* Training steps captured as a graph on ref-guard and replayed (nn/device_ops.inc) give the steps run
 * directly on ref, bit for bit, with a new batch, Adam step and BN count every step and the loss
 * scale changing twice (each change a new capture, an overflow skipped inside the graph); the
 * replayed steps still wait once and allocate nothing. */
static void test_graph_steps(void)
{
    enum { STEPS = 6 };
    const float scales[STEPS] = {1024, 1024, 1024, 0x1p127f, 256, 256};
    gmodel ref, gd;
    if (gmodel_make(&ref, "ref", 0, 0)) return;
    if (gmodel_make(&gd, "ref-guard", 1, 0)) {
        gmodel_free(&ref);
        return;
    }
    float *x = rn_xmalloc((size_t)N * 3 * GS * GS * sizeof *x), k[N], t[3 * N], v[N] = {1, 1}, d[N] = {1, 0};
    rn_adam opt[2] = {rn_adam_default(1e-3), rn_adam_default(1e-3)};
    rn_loss_scaler ls[2] = {rn_loss_scaler_dynamic(), rn_loss_scaler_dynamic()};
    rn_step_ctl ctl[2] = {{.scaler = &ls[0]}, {.scaler = &ls[1]}};
    gmodel *g[2] = {&ref, &gd};
    int same_loss = 1, same_applied = 1, one_wait = 1, no_alloc = 1, skipped = 0;
    for (int s = 0; s < STEPS; s++) {
        graph_batch(x, k, t, s);
        rn_step_batch b = {x, k, t, v, d};
        double loss[2];
        int applied[2], rc = 0;
        long w0 = rn_ref_guard_waits(gd.m.dev), a0 = rn_ref_guard_allocs(gd.m.dev);
        for (int i = 0; i < 2; i++) {
            rn_err err = {{0}};
            ls[i].scale = scales[s];
            rc |= rn_train_step(&g[i]->m, &opt[i], &b, NULL, &ctl[i], NULL, &loss[i], &applied[i], &err);
        }
        RN_CHECK(!rc, "step %d ran on both", s);
        same_loss &= !memcmp(&loss[0], &loss[1], sizeof loss[0]);
        same_applied &= applied[0] == applied[1];
        skipped += !applied[1];
        one_wait &= rn_ref_guard_waits(gd.m.dev) - w0 == 1;
        no_alloc &= rn_ref_guard_allocs(gd.m.dev) - a0 == 0;
    }
    long launches = rn_ref_guard_launches(gd.m.dev);
    RN_CHECK(launches == STEPS - 1, "steps 2-%d launched a graph (%ld launches)", STEPS, launches);
    RN_CHECK(same_loss && same_applied && skipped == 1, "graph steps' losses and skips = ref's (%d skipped)", skipped);
    RN_CHECK(same_state(&ref.p, &gd.p) && opt[0].step == opt[1].step,
             "after %d steps: weights, moments, BN statistics and counters bit-equal to ref's", STEPS);
    RN_CHECK(one_wait && no_alloc, "every graph step waits once and allocates nothing");
    free(x);
    gmodel_free(&ref);
    gmodel_free(&gd);
}

/* One pinned batch (host_alloc) of the prefetch test. */
typedef struct pbatch {
    float *x, *k, *t, *v, *d;
} pbatch;

static void pbatch_fill(rn_device *dev, pbatch *b, int step)
{
    if (!b->x) {
        b->x = dev->ops->host_alloc(dev, (size_t)N * 3 * GS * GS * sizeof(float));
        b->k = dev->ops->host_alloc(dev, N * sizeof(float)), b->t = dev->ops->host_alloc(dev, 3 * N * sizeof(float));
        b->v = dev->ops->host_alloc(dev, N * sizeof(float)), b->d = dev->ops->host_alloc(dev, N * sizeof(float));
    }
    graph_batch(b->x, b->k, b->t, step);
    for (int n = 0; n < N; n++) b->v[n] = 1, b->d[n] = (float)(n == 0);
}

static void pbatch_free(rn_device *dev, pbatch *b)
{
    dev->ops->host_free(dev, b->x), dev->ops->host_free(dev, b->k), dev->ops->host_free(dev, b->t);
    dev->ops->host_free(dev, b->v), dev->ops->host_free(dev, b->d);
}

/* What the prefetch test's rn_step_next does after step s: batch s + 1 into ring slot (s + 1) % 3 and
 * prefetched, except after step 2 (nothing: step 3 uploads, as the first batch of an epoch does) and
 * step 4 (a decoy batch prefetched from another array: step 5 stages its own and must upload it). */
typedef struct pnext {
    rn_model *m;
    pbatch *ring, *decoy;
    int s;
    long prefetched;
} pnext;

static int prefetch_next(void *ctx, rn_err *err)
{
    (void)err;
    pnext *c = ctx;
    rn_device *dev = c->m->dev;
    if (c->s == 2) return 0;
    pbatch *b = c->s == 4 ? c->decoy : &c->ring[(c->s + 1) % 3];
    pbatch_fill(dev, b, c->s == 4 ? 99 : c->s + 1);
    c->prefetched += rn_model_prefetch(c->m, b->x, b->k, b->t, b->v, b->d);
    return 0;
}

/* Training steps whose next batch is uploaded beside them (nn/model.h: rn_model_prefetch, into the
 * model's other input set; pinned batches; each set with its own graph) on ref-guard give ref's
 * steps, run directly from plain arrays, bit for bit, also where a step had nothing prefetched or
 * another batch than the one prefetched; each step waits once and allocates nothing. */
static void test_prefetch_steps(void)
{
    enum { STEPS = 7 };
    gmodel ref, gd;
    if (gmodel_make(&ref, "ref", 0, 0)) return;
    rn_err err = {{0}};
    rn_rng rng;
    rn_rng_seed(&rng, 13);
    RN_ASSERT(!rn_params_build(&gd.p, 18, &err));
    rn_params_init(&gd.p, &rng);
    rn_model_opts o = {.device = "ref-guard", .threads = 1, .compute = RN_NUM_F32, .graph = 1,
                       .pinned_inputs = 1, .prefetch = 1};
    RN_CHECK(!rn_model_create(&gd.m, &gd.p, N, GS, GS, &o, &err), "a prefetching model on ref-guard: %s", err.msg);
    RN_CHECK(gd.m.opts.prefetch && gd.m.in[1][0] && !ref.m.opts.prefetch, "two input sets on ref-guard, none on ref");
    rn_device *dev = gd.m.dev;
    pbatch ring[3] = {{0}}, decoy = {0};
    float *x = rn_xmalloc((size_t)N * 3 * GS * GS * sizeof *x), k[N], t[3 * N], v[N] = {1, 1}, d[N] = {1, 0};
    rn_adam opt[2] = {rn_adam_default(1e-3), rn_adam_default(1e-3)};
    pnext nx = {.m = &gd.m, .ring = ring, .decoy = &decoy};
    rn_step_ctl ctl[2] = {{0}, {.next = {prefetch_next, &nx}}};
    int same_loss = 1, one_wait = 1, no_alloc = 1, rc = 0;
    pbatch_fill(dev, &ring[0], 0);
    for (int s = 0; s < STEPS && !rc; s++) {
        graph_batch(x, k, t, s);
        pbatch *pb = &ring[s % 3];
        rn_step_batch b[2] = {{x, k, t, v, d}, {pb->x, pb->k, pb->t, pb->v, pb->d}};
        if (s == 3 || s == 5) pbatch_fill(dev, pb, s); /* not prefetched (3), or not the batch prefetched (5) */
        double loss[2];
        int applied[2];
        long w0 = rn_ref_guard_waits(dev), a0 = rn_ref_guard_allocs(dev);
        nx.s = s;
        for (int i = 0; i < 2; i++)
            rc |= rn_train_step(i ? &gd.m : &ref.m, &opt[i], &b[i], NULL, &ctl[i], NULL, &loss[i], &applied[i], &err);
        same_loss &= !memcmp(&loss[0], &loss[1], sizeof loss[0]);
        one_wait &= rn_ref_guard_waits(dev) - w0 == 1;
        no_alloc &= rn_ref_guard_allocs(dev) - a0 == 0;
    }
    RN_CHECK(!rc, "%d steps ran on both (%s)", STEPS, err.msg);
    RN_CHECK(nx.prefetched == STEPS - 1, "%ld of the %d next batches prefetched", nx.prefetched, STEPS - 1);
    RN_CHECK(gd.m.step_graph[0].g && gd.m.step_graph[1].g && rn_ref_guard_launches(dev) >= STEPS - 3,
             "each input set's steps replayed from its own graph (%ld launches)", rn_ref_guard_launches(dev));
    RN_CHECK(same_loss && same_state(&ref.p, &gd.p),
             "prefetched steps: losses, weights, moments, BN statistics and counters bit-equal to ref's");
    RN_CHECK(one_wait && no_alloc, "every prefetching step waits once and allocates nothing");
    for (int i = 0; i < 3; i++) pbatch_free(dev, &ring[i]);
    pbatch_free(dev, &decoy);
    free(x);
    gmodel_free(&ref);
    gmodel_free(&gd);
}

/* An inference model's forward as a graph: new images every batch, ref's coordinates bit for bit. */
static void test_graph_forward(void)
{
    gmodel ref, gd;
    if (gmodel_make(&ref, "ref", 0, 1)) return;
    if (gmodel_make(&gd, "ref-guard", 1, 1)) {
        gmodel_free(&ref);
        return;
    }
    float *x = rn_xmalloc((size_t)N * 3 * GS * GS * sizeof *x), k[N], t[3 * N];
    int same = 1;
    for (int s = 0; s < 3; s++) {
        graph_batch(x, k, t, s);
        rn_model_forward(&ref.m, x, k, 0);
        rn_model_forward(&gd.m, x, k, 0);
        same &= !memcmp(rn_model_coords(&ref.m), rn_model_coords(&gd.m), 3 * N * sizeof(float));
    }
    long launches = rn_ref_guard_launches(gd.m.dev);
    RN_CHECK(same && launches == 2, "3 folded forwards, the last 2 from a graph (%ld launches): ref's coords", launches);
    free(x);
    gmodel_free(&ref);
    gmodel_free(&gd);
}

/* A 3x3 conv shape for the capture tests. */
static rn_conv_shape small_conv(void)
{
    return (rn_conv_shape){.n = 1, .ic = 16, .ih = 8, .iw = 8, .oc = 16, .oh = 8, .ow = 8, .kh = 3, .kw = 3, .sh = 1,
                           .sw = 1, .ph = 1, .pw = 1, .compute = RN_NUM_F32, .act = RN_NUM_F32};
}

/* In a child: a graph captured and alive, then a conv created (conv = 1) or a buffer allocated (0);
 * 1 if the guard stopped the child with its one line (into *line). */
static int create_after_capture_dies(int conv, char *line, size_t len)
{
    char path[] = "/tmp/rn_guard_XXXXXX";
    int fd = mkstemp(path);
    RN_ASSERT(fd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        rn_device *dev;
        rn_err err = {{0}};
        if (rn_device_create(&dev, "ref-guard", 1, &err)) _exit(3);
        const rn_device_ops *op = dev->ops;
        float *buf = op->alloc(dev, 64);
        void *g = NULL;
        if (op->graph_begin(dev, &err)) _exit(4);
        op->fill(dev, buf, 1.0f, 4);
        if (op->graph_end(dev, &g, &err) || !g) _exit(5);
        rn_conv *c = NULL;
        rn_conv_shape cs = small_conv();
        if (conv)
            (void)op->conv_create(dev, &c, &cs, &err);
        else
            (void)op->alloc(dev, 64);
        _exit(0);
    }
    int st = 0;
    RN_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
    FILE *f = fopen(path, "r");
    line[0] = 0;
    if (f && !fgets(line, (int)len, f)) line[0] = 0;
    if (f) fclose(f);
    close(fd);
    unlink(path);
    return WIFSIGNALED(st) && strstr(line, "while 1 captured graph lives");
}

/* A conv or a buffer created while a captured graph lives stops the process with one line (on a GPU
 * it may move the buffers the graph holds); once the graph is destroyed both are fine. Inside a
 * capture, a conv_create fails the capture (graph_end). */
static void test_create_after_capture(void)
{
    char line[400];
    RN_CHECK(create_after_capture_dies(1, line, sizeof line), "conv after a capture stops the test: %s", line);
    RN_CHECK(create_after_capture_dies(0, line, sizeof line), "alloc after a capture stops the test: %s", line);
    rn_device *dev;
    rn_err err = {{0}};
    RN_CHECK(!rn_device_create(&dev, "ref-guard", 1, &err), "ref-guard opens: %s", err.msg);
    const rn_device_ops *op = dev->ops;
    float *buf = op->alloc(dev, 64);
    void *g = NULL;
    rn_conv *c = NULL;
    rn_conv_shape cs = small_conv();
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    RN_CHECK(!op->conv_create(dev, &c, &cs, &err), "conv_create: %s", err.msg);
    int rc = op->graph_end(dev, &g, &err);
    RN_CHECK(rc && !g && strstr(err.msg, "a conv_create inside a graph capture"), "a conv_create fails the capture: %s",
             err.msg);
    op->conv_destroy(dev, c);
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    op->fill(dev, buf, 2.0f, 4);
    RN_CHECK(!op->graph_end(dev, &g, &err) && g, "a fill captures: %s", err.msg);
    op->graph_destroy(dev, g);
    c = NULL;
    RN_CHECK(!op->conv_create(dev, &c, &cs, &err) && c, "a conv once the graph is destroyed: %s", err.msg);
    op->conv_destroy(dev, c);
    op->free(dev, buf);
    rn_device_destroy(dev);
}

/* The planted step: the model's forward, then a fill and a download (a waiting call: illegal in a capture). */
typedef struct planted {
    rn_device *dev;
    float *buf;
    float host;
    int step;
} planted;

static void planted_ops(rn_model *m, void *ctx)
{
    planted *pl = ctx;
    rn_model_forward_ops(m);
    pl->dev->ops->fill(pl->dev, pl->buf, (float)pl->step, 1);
    pl->dev->ops->download(pl->dev, &pl->host, pl->buf, sizeof pl->host);
}

/* An illegal call inside a capture: the model falls back to running without graphs with one line (every step's
 * ops ran, none from a graph, no second capture tried, the model's other graphs given up too). */
static void test_capture_fallback(void)
{
    gmodel gd;
    if (gmodel_make(&gd, "ref-guard", 1, 0)) return;
    rn_device *dev = gd.m.dev;
    planted pl = {.dev = dev, .buf = dev->ops->alloc(dev, 64)};
    float *x = rn_xcalloc((size_t)N * 3 * GS * GS, sizeof *x), k[N], t[N * 3];
    char path[] = "/tmp/rn_fallback_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    RN_ASSERT(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    int ran = 1;
    for (int s = 1; s <= 4; s++) {
        graph_batch(x, k, t, s);
        rn_model_stage(&gd.m, x, k, 1);
        pl.step = s;
        double key[2] = {1, 0};
        rn_model_run_graph(&gd.m, &gd.m.step_graph[s & 1], key, planted_ops, &pl);
        ran &= pl.host == (float)s;
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char line[600] = "", more[600];
    FILE *f = fopen(path, "r");
    int lines = 0;
    while (f && fgets(lines ? more : line, sizeof line, f)) lines++;
    if (f) fclose(f);
    close(fd);
    unlink(path);
    printf("fallback line: %s", line);
    RN_CHECK(lines == 1 && strstr(line, "graph capture failed, running without graphs") &&
                 strstr(line, "a waiting call (download) inside a graph capture"),
             "a planted download fails the capture: one line (%d): %s", lines, line);
    RN_CHECK(ran, "every step's ops ran (the fallback runs them without a graph)");
    RN_CHECK(!gd.m.step_graph[0].g && !gd.m.step_graph[1].g && rn_ref_guard_launches(dev) == 0,
             "no graph kept or launched (%ld launches)", rn_ref_guard_launches(dev));
    dev->ops->free(dev, pl.buf);
    free(x);
    gmodel_free(&gd);
}

/* What a capture refuses: a waiting call or an alloc inside it fails graph_end with one line. */
static void test_graph_refusals(void)
{
    rn_device *dev;
    rn_err err = {{0}};
    RN_CHECK(!rn_device_create(&dev, "ref-guard", 1, &err), "ref-guard opens: %s", err.msg);
    const rn_device_ops *op = dev->ops;
    float host[4] = {1, 2, 3, 4}, *buf = op->alloc(dev, sizeof host);
    void *g = NULL;
    op->upload(dev, buf, host, sizeof host);
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    op->download(dev, host, buf, sizeof host);
    int rc = op->graph_end(dev, &g, &err);
    RN_CHECK(rc && !g && strstr(err.msg, "waiting call (download)"), "a download fails the capture: %s", err.msg);
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    void *extra = op->alloc(dev, 64);
    rc = op->graph_end(dev, &g, &err);
    RN_CHECK(rc && strstr(err.msg, "an alloc"), "an alloc fails the capture: %s", err.msg);
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    op->upload(dev, buf, host, sizeof host);
    rc = op->graph_end(dev, &g, &err);
    RN_CHECK(rc && strstr(err.msg, "upload (pageable)"), "a pageable upload fails the capture: %s", err.msg);
    RN_CHECK(!op->graph_begin(dev, &err), "capture begins");
    op->fill(dev, buf, 7.0f, 4);
    RN_CHECK(!op->graph_end(dev, &g, &err) && g, "a fill captures: %s", err.msg);
    op->download(dev, host, buf, sizeof host);
    RN_CHECK(host[0] == 1.0f, "a captured op does not run at capture");
    op->graph_launch(dev, g);
    op->download(dev, host, buf, sizeof host);
    RN_CHECK(host[0] == 7.0f && host[3] == 7.0f, "it runs at launch");
    op->graph_destroy(dev, g);
    op->free(dev, extra);
    op->free(dev, buf);
    rn_device_destroy(dev);
}

int main(void)
{
    test_ops();
    test_buffers();
    test_model();
    test_scaled_waits();
    test_graph_refusals();
    test_create_after_capture();
    test_capture_fallback();
    test_graph_steps();
    test_prefetch_steps();
    test_graph_forward();
    RN_CHECK_DONE();
}
