/* src/dist's device-collective path without a GPU (issue 23). A fake device here
 * is ref-guard with host-MPI-backed comm ops (comm_id, comm_init, allreduce,
 * broadcast, comm_check, comm_wait: download, MPI, upload), so that src/dist takes
 * the path it takes on cuda (NCCL) while every number stays ref's. A collective is
 * in flight until the next comm_wait, as on cuda's stream of its own: its buffer
 * holds NaN bytes until then and gets the result at the comm_wait, so an op that
 * reads or writes it before src/dist orders it after the collective changes the
 * numbers. Under mpirun -np 2
 * (this binary starts mpirun itself when run alone), ResNet-18 32x32, batch 2
 * per rank with rank-dependent data, 2 steps of rn_train_step with 0.5 MB
 * buckets, with and without SyncBN:
 *  - the device path equals the host path (plain ref-guard: download, MPI_Iallreduce,
 *    upload) bit for bit: losses, weights, Adam moments, BN running statistics;
 *  - it really ran on the device's ops: one F32 all-reduce per bucket per step (most
 *    issued inside the backward span, and in flight together until one comm_wait), two F64 all-reduces per train BN per step with
 *    SyncBN and none on the host path, the BN statistics broadcast through the device
 *    without SyncBN; the communicator id made by rank 0 reached rank 1 (each rank
 *    shows another CUDA_VISIBLE_DEVICES, as one GPU per rank would);
 *  - ranks that show the same device take the host path (NCCL would refuse them);
 *  - --device cuda means cuda:<local rank % visible GPUs> (rn_dist_device_name);
 *  - a device-path step waits once (the loss read), not counting the fake's own
 *    downloads; the host path waits more (the count is printed);
 *  - no allocation inside step 2 on either path (malloc, calloc and realloc
 *    of rootnet's code counted through the linker's --wrap; the Makefile links this test so).
 * Skipped (exit 77) when built without MPI or when mpirun is absent.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"
#include "nn/model.h"
#include "optim/adam.h"
#include "train/step.h"

/* Allocation counting: the linker routes rootnet's malloc/calloc/realloc here (a malloc
 * hook has no context argument, hence these two file-scope counters). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
static atomic_int counting;
static atomic_long allocations;

void *__wrap_malloc(size_t n)
{
    if (atomic_load(&counting)) atomic_fetch_add(&allocations, 1);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
    if (atomic_load(&counting)) atomic_fetch_add(&allocations, 1);
    return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (atomic_load(&counting)) atomic_fetch_add(&allocations, 1);
    return __real_realloc(p, n);
}

#ifdef RN_HAVE_MPI
#include <mpi.h>

#include "check.h"

enum { N = 2, S = 32, STEPS = 2, MAX_FLIGHT = 256 };
#define BUCKET_MB 0.5
#define ID_MAGIC "fake-comm"

/* A collective in flight: its result, at host + at, reaches buf at the next comm_wait. */
typedef struct flight {
    void *buf;
    size_t at, bytes;
} flight;

/* The fake device's op table: ref-guard's plus the comm ops below. It is the first member,
 * so that an op finds its fake from dev->ops. */
typedef struct fake {
    rn_device_ops ops;
    const rn_device_ops *guard; /* ref-guard's own */
    int rank, size, joined;
    long id_pid;                /* rank 0's pid, from the id */
    unsigned char *host;        /* the results in flight, one after another (grown on demand: the first step) */
    size_t cap, used;
    unsigned char *nan;         /* NaN bytes for a buffer in flight (grown likewise) */
    size_t nan_cap;
    flight fl[MAX_FLIGHT];
    int n_fl, most_fl;          /* in flight now; the most a comm_wait joined */
    long comm_waits;
    int in_backward;
    long ar32, ar32_in_bwd, ar64, bcast;
    long waits;                 /* waiting calls through this table (the fake's own go to guard) */
    int failed;
    rn_err first;
} fake;

#define FAKE(dev) ((fake *)(dev)->ops)

static size_t f_comm_id(rn_device *dev, void *id, rn_err *err)
{
    (void)dev, (void)err;
    long pid = (long)getpid();
    memcpy(id, ID_MAGIC, sizeof ID_MAGIC);
    memcpy((char *)id + sizeof ID_MAGIC, &pid, sizeof pid);
    return sizeof ID_MAGIC + sizeof pid;
}

static int f_comm_init(rn_device *dev, const void *id, size_t id_bytes, int rank, int size, rn_err *err)
{
    fake *f = FAKE(dev);
    if (id_bytes != sizeof ID_MAGIC + sizeof(long) || memcmp(id, ID_MAGIC, sizeof ID_MAGIC))
        return rn_err_set(err, "fake comm_init: not the id comm_id made");
    memcpy(&f->id_pid, (const char *)id + sizeof ID_MAGIC, sizeof f->id_pid);
    f->rank = rank, f->size = size, f->joined = 1;
    return 0;
}

static void f_comm_destroy(rn_device *dev) { FAKE(dev)->joined = 0; }

/* Room for one more result in flight: its offset in f->host. */
static size_t stash(fake *f, size_t bytes)
{
    size_t at = f->used;
    if (at + bytes > f->cap) {
        f->cap = at + bytes;
        f->host = rn_xrealloc(f->host, f->cap);
    }
    f->used += bytes;
    return at;
}

/* buf (bytes) holds NaN bytes until the comm_wait that gives it the result at f->host + at. */
static void take_off(fake *f, rn_device *dev, void *buf, size_t at, size_t bytes)
{
    RN_ASSERT(f->n_fl < MAX_FLIGHT);
    if (bytes > f->nan_cap) {
        free(f->nan);
        f->nan = rn_xmalloc(bytes);
        memset(f->nan, 0xff, bytes);
        f->nan_cap = bytes;
    }
    f->guard->upload(dev, buf, f->nan, bytes);
    f->fl[f->n_fl++] = (flight){buf, at, bytes};
}

static void f_comm_wait(rn_device *dev)
{
    fake *f = FAKE(dev);
    for (int i = 0; i < f->n_fl; i++) f->guard->upload(dev, f->fl[i].buf, f->host + f->fl[i].at, f->fl[i].bytes);
    if (f->n_fl > f->most_fl) f->most_fl = f->n_fl;
    f->n_fl = 0, f->used = 0;
    f->comm_waits++;
}

static void keep(fake *f, int rc, const char *what)
{
    if (rc != MPI_SUCCESS && !f->failed) f->failed = 1, rn_err_set(&f->first, "fake %s failed", what);
}

static void f_allreduce(rn_device *dev, void *buf, size_t n, rn_numtype t, float scale)
{
    fake *f = FAKE(dev);
    int f64 = t == RN_NUM_F64;
    size_t bytes = n * (f64 ? sizeof(double) : sizeof(float)), at = stash(f, bytes);
    unsigned char *h = f->host + at;
    RN_ASSERT(f->joined && n <= INT32_MAX);
    f->guard->download(dev, h, buf, bytes);
    keep(f, MPI_Allreduce(MPI_IN_PLACE, h, (int)n, f64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
         "MPI_Allreduce");
    for (size_t i = 0; scale != 1.0f && i < n; i++) {
        if (f64)
            ((double *)(void *)h)[i] *= (double)scale;
        else
            ((float *)(void *)h)[i] *= scale;
    }
    take_off(f, dev, buf, at, bytes);
    if (f64) f->ar64++;
    else f->ar32++, f->ar32_in_bwd += f->in_backward;
}

static void f_broadcast(rn_device *dev, void *buf, size_t bytes, int root)
{
    fake *f = FAKE(dev);
    size_t at = stash(f, bytes);
    unsigned char *h = f->host + at;
    RN_ASSERT(f->joined && bytes <= INT32_MAX);
    f->guard->download(dev, h, buf, bytes);
    keep(f, MPI_Bcast(h, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    take_off(f, dev, buf, at, bytes);
    f->bcast++;
}

static int f_comm_check(rn_device *dev, rn_err *err)
{
    fake *f = FAKE(dev);
    if (!f->failed) return 0;
    *err = f->first;
    return -1;
}

/* The waiting ops, counted (src/dist, the model and the step call these; the fake does not). */
static void w_download(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    FAKE(dev)->waits++;
    FAKE(dev)->guard->download(dev, dst, src, bytes);
}

static void w_act_download(rn_device *dev, float *dst, const void *src, const rn_act_shape *a)
{
    FAKE(dev)->waits++;
    FAKE(dev)->guard->act_download(dev, dst, src, a);
}

static void w_synchronize(rn_device *dev)
{
    FAKE(dev)->waits++;
    if (FAKE(dev)->joined) f_comm_wait(dev); /* waits for the collectives too */
    FAKE(dev)->guard->synchronize(dev);
}

static void span_begin(void *ctx, const char *name) { ((fake *)ctx)->in_backward |= !strcmp(name, "backward"); }
static void span_end(void *ctx, const char *name)
{
    if (!strcmp(name, "backward")) ((fake *)ctx)->in_backward = 0;
}

/* One path's run: its final state (host copies) and what it counted. */
typedef struct result {
    double loss[STEPS];
    float *w, *m, *v, *st;
    long waits;       /* waiting calls in the last step, not counting the fake's own */
    long allocations; /* in steps 2 .. STEPS */
    long nbn;         /* train BN layers */
    fake f;
} result;

/* This rank's batch: images, k and targets from a seed that depends on the rank. */
static void make_batch(float *x, float *k, float *t, float *v, float *d, int rank)
{
    rn_rng rng;
    rn_rng_seed2(&rng, 11, (uint64_t)rank + 1);
    for (size_t i = 0; i < (size_t)N * 3 * S * S; i++) x[i] = (float)rn_rng_normal(&rng);
    for (int n = 0; n < N; n++) {
        k[n] = 1500.0f + 500.0f * (float)(rank + n);
        t[3 * n] = 3.0f + (float)(5 * rank + n), t[3 * n + 1] = 5.0f + (float)n, t[3 * n + 2] = 2000.0f + 300.0f * (float)rank;
        v[n] = 1.0f, d[n] = (float)((rank + n) % 2);
    }
}

static long count_bns(const rn_params *p)
{
    long c = 0;
    for (int i = 0; i < p->n; i++) c += p->e[i].kind == RN_P_BN_MEAN;
    return c;
}

static int steps(result *r, rn_model *m, rn_dist *d, int sync_bn, fake *hkctx, rn_err *err)
{
    float *x = rn_xmalloc((size_t)N * 3 * S * S * sizeof *x), k[N], t[3 * N], v[N], dd[N];
    make_batch(x, k, t, v, dd, rn_dist_rank(d));
    rn_step_batch b = {x, k, t, v, dd};
    rn_adam opt = rn_adam_default(1e-4);
    rn_step_ctl ctl = {.dist = d, .bcast_stats = !sync_bn};
    rn_train_hooks hk = {.ctx = hkctx, .span_begin = span_begin, .span_end = span_end};
    int rc = 0;
    for (int s = 0; s < STEPS && !rc; s++) {
        long w0 = hkctx->waits;
        atomic_store(&allocations, 0);
        atomic_store(&counting, s > 0);
        int applied = 0;
        rc = rn_train_step(m, &opt, &b, NULL, &ctl, &hk, &r->loss[s], &applied, err);
        atomic_store(&counting, 0);
        if (s > 0) r->allocations += atomic_load(&allocations);
        r->waits = hkctx->waits - w0;
    }
    free(x);
    return rc;
}

/* p's arenas onto a fresh ref-guard whose op table is f's: the counted waits, and the comm
 * ops when device is 1. */
static int fake_params(rn_params *p, fake *f, int device, rn_err *err)
{
    rn_device *dev;
    if (rn_device_create(&dev, "ref-guard", 1, err)) return -1;
    f->guard = dev->ops;
    f->ops = *dev->ops;
    f->ops.download = w_download, f->ops.act_download = w_act_download, f->ops.synchronize = w_synchronize;
    if (device) {
        f->ops.comm_id = f_comm_id, f->ops.comm_init = f_comm_init, f->ops.comm_destroy = f_comm_destroy;
        f->ops.allreduce = f_allreduce, f->ops.broadcast = f_broadcast, f->ops.comm_check = f_comm_check;
        f->ops.comm_wait = f_comm_wait;
    }
    dev->ops = &f->ops;
    RN_ASSERT(!rn_params_to_device(p, dev, err));
    return 0;
}

/* Two ranks that report one device (the same host, device name and CUDA_VISIBLE_DEVICES)
 * take the host path, whatever ops the device has (NCCL would refuse them). */
static void check_shared_device(rn_dist *d)
{
    rn_params p;
    rn_err err = {{0}};
    fake f = {0};
    RN_ASSERT(!rn_params_build(&p, 18, &err));
    RN_ASSERT(!fake_params(&p, &f, 1, &err));
    int rc = rn_dist_grads_setup(d, &p, 0, &err);
    RN_CHECK(!rc && !rn_dist_device_collectives(d) && !f.joined,
             "ranks sharing a device fall back to the host path (setup %d, device collectives %d, joined %d)", rc,
             rn_dist_device_collectives(d), f.joined);
    rn_params_free(&p);
}

/* A run on ref-guard, with the fake's comm ops (device = 1) or without (the host path). */
static int run(result *r, rn_dist *d, int sync_bn, int device)
{
    rn_err err = {{0}};
    memset(r, 0, sizeof *r);
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 5);
    if (rn_params_build(&p, 18, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
    rn_params_init(&p, &rng);
    fake *f = &r->f;
    if (fake_params(&p, f, device, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
    if (device) setenv("CUDA_VISIBLE_DEVICES", rn_dist_rank(d) ? "1" : "0", 1); /* one "GPU" per rank */
    rn_model m;
    rn_model_opts o = {.threads = 1, .compute = RN_NUM_F32, .grad_ready = rn_dist_grad_ready(d),
                       .reduce = sync_bn ? rn_dist_bn_reduce(d) : (rn_device_reduce){0}};
    int rc = rn_model_create(&m, &p, N, S, S, &o, &err) || rn_dist_grads_setup(d, &p, rn_dist_bucket_floats(BUCKET_MB), &err) ||
             rn_dist_bcast_params(d, &p, &err);
    unsetenv("CUDA_VISIBLE_DEVICES");
    RN_CHECK(rn_dist_device_collectives(d) == device, "the path chosen: device collectives %d, want %d",
             rn_dist_device_collectives(d), device);
    if (!rc) rc = steps(r, &m, d, sync_bn, f, &err);
    if (rc) fprintf(stderr, "rank %d: %s\n", rn_dist_rank(d), err.msg);
    size_t nb = p.n_param * sizeof(float);
    r->w = rn_xmalloc(nb), r->m = rn_xmalloc(nb), r->v = rn_xmalloc(nb), r->st = rn_xmalloc(p.n_stats * sizeof(float) + 1);
    rn_params_download(&p, r->w, p.param, nb);
    rn_params_download(&p, r->m, p.m, nb);
    rn_params_download(&p, r->v, p.v, nb);
    rn_params_download(&p, r->st, p.stats, p.n_stats * sizeof(float));
    r->nbn = count_bns(&p);
    rn_model_destroy(&m);
    rn_params_free(&p);
    free(f->host), free(f->nan);
    return rc;
}

static long first_diff(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a)) return (long)i;
    return -1;
}

static void compare(const result *h, const result *g, size_t n_param, size_t n_stats, const char *mode)
{
    for (int s = 0; s < STEPS; s++)
        RN_CHECK(h->loss[s] == g->loss[s], "%s: step %d loss %.17g (host path) == %.17g (device path)", mode, s,
                 h->loss[s], g->loss[s]);
    const char *name[] = {"weights", "Adam m", "Adam v", "BN running statistics"};
    const float *a[] = {h->w, h->m, h->v, h->st}, *b[] = {g->w, g->m, g->v, g->st};
    for (int i = 0; i < 4; i++) {
        long at = first_diff(a[i], b[i], i == 3 ? n_stats : n_param);
        RN_CHECK(at < 0, "%s: %s equal bit for bit (first difference at %ld: %.9g vs %.9g)", mode, name[i], at,
                 at < 0 ? 0.0 : (double)a[i][at], at < 0 ? 0.0 : (double)b[i][at]);
    }
}

static void result_free(result *r) { free(r->w), free(r->m), free(r->v), free(r->st); }

/* h, g: the host and the device path's results, kept until after rn_dist_finalize (dist holds
 * the device of the last setup, whose op table lives in g's fake). */
static void one_mode(rn_dist *d, int sync_bn, result *hp, result *gp)
{
    const char *mode = sync_bn ? "SyncBN" : "DDP (rank 0's BN statistics broadcast)";
    rn_params p;
    rn_err err;
    RN_ASSERT(!rn_params_build(&p, 18, &err));
    size_t n_param = p.n_param, n_stats = p.n_stats;
    long buckets = (long)((n_param + rn_dist_bucket_floats(BUCKET_MB) - 1) / rn_dist_bucket_floats(BUCKET_MB));
    rn_params_free(&p);
    result *h = hp, *g = gp;
    int rh = run(h, d, sync_bn, 0), rg = run(g, d, sync_bn, 1);
    RN_CHECK(!rh && !rg, "%s: both paths trained %d steps", mode, STEPS);
    if (!rh && !rg) compare(h, g, n_param, n_stats, mode);
    RN_CHECK(g->f.id_pid > 0 && h->f.ar32 == 0 && h->f.ar64 == 0 && h->f.bcast == 0,
             "%s: the communicator id came from rank 0 (pid %ld); the host path made no device collective", mode,
             g->f.id_pid);
    RN_CHECK(g->f.ar32 == buckets * STEPS, "%s: %ld F32 device all-reduces = %ld buckets x %d steps", mode, g->f.ar32,
             buckets, STEPS);
    RN_CHECK(g->f.ar32_in_bwd >= (buckets - 1) * STEPS && buckets > 1,
             "%s: %ld of them started inside backward (want >= %ld)", mode, g->f.ar32_in_bwd, (buckets - 1) * STEPS);
    /* SyncBN's backward joins the buckets started before each of its all-reduces (one stream) */
    long want_fl = sync_bn ? 2 : buckets;
    RN_CHECK((sync_bn ? g->f.most_fl >= want_fl : g->f.most_fl == want_fl) && g->f.n_fl == 0,
             "%s: the buckets' all-reduces were in flight together, beside backward, until a comm_wait (at most "
             "%d joined at once, want %s%ld; %d left in flight)", mode, g->f.most_fl, sync_bn ? ">= " : "", want_fl,
             g->f.n_fl);
    long want_cw = 2 + STEPS * (1 + (sync_bn ? 2 * g->nbn : 1));
    RN_CHECK(g->f.comm_waits == want_cw, "%s: %ld comm_waits (one per step for the gradient, one after each "
             "broadcast and SyncBN all-reduce), want %ld", mode, g->f.comm_waits, want_cw);
    long want64 = sync_bn ? 2 * g->nbn * STEPS : 0, want_bc = 2 + (sync_bn ? 0 : STEPS);
    RN_CHECK(g->f.ar64 == want64, "%s: %ld F64 (SyncBN) device all-reduces, want %ld", mode, g->f.ar64, want64);
    RN_CHECK(g->f.bcast == want_bc, "%s: %ld device broadcasts (weights, statistics), want %ld", mode, g->f.bcast,
             want_bc);
    RN_CHECK(g->waits == 1, "%s: a device-path step waits once, the loss read (counted %ld; host path %ld)", mode,
             g->waits, h->waits);
    RN_CHECK(g->allocations == 0 && h->allocations == 0,
             "%s: no allocation in steps 2..%d (device path %ld, host path %ld)", mode, STEPS, g->allocations,
             h->allocations);
    if (rn_dist_rank(d) == 0)
        printf("%s: device path == host path over %d steps (%ld buckets, %ld F64 all-reduces); waits per step: "
               "device %ld, host %ld\n", mode, STEPS, buckets, g->f.ar64, g->waits, h->waits);
}

/* --device cuda under mpirun: one GPU per rank by local rank (both ranks run on this node). */
static void check_device_names(rn_dist *d)
{
    char out[32];
    int r = rn_dist_local_rank(d);
    setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
    RN_CHECK(!rn_dist_device_name(d, "cuda", out, sizeof out) && out[5] == '0' + r % 2 && !out[6],
             "local rank %d of 2 visible GPUs: cuda -> %s", r, out);
    setenv("CUDA_VISIBLE_DEVICES", "7", 1);
    RN_CHECK(!rn_dist_device_name(d, "cuda", out, sizeof out) && !strcmp(out, "cuda:0"),
             "2 ranks sharing 1 visible GPU: cuda -> %s", out);
    unsetenv("CUDA_VISIBLE_DEVICES");
    RN_CHECK(!rn_dist_device_name(d, "cuda:1", out, sizeof out) && !strcmp(out, "cuda:1"), "cuda:1 kept: %s", out);
    RN_CHECK(!rn_dist_device_name(d, "ref-guard", out, sizeof out) && !strcmp(out, "ref-guard"), "ref-guard kept");
    RN_CHECK(rn_dist_device_name(d, "ref-guard", out, 4) == -1, "a name longer than the buffer fails");
}

/* Run alone: start mpirun -np 2 on this binary. */
static int launch(char **argv)
{
    char *args[] = {"mpirun", "--oversubscribe", "-np", "2", argv[0], NULL, NULL};
    char *root[] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", argv[0], NULL};
    execvp("mpirun", getuid() == 0 ? root : args);
    printf("skipped: mpirun not found\n");
    return 77;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!rn_dist_launched()) return launch(argv);
    rn_dist *d;
    rn_err err = {{0}};
    if (rn_dist_init(&d, 120.0, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    RN_CHECK(rn_dist_size(d) == 2, "2 ranks (got %d)", rn_dist_size(d));
    static result r[4];
    check_device_names(d);
    check_shared_device(d);
    one_mode(d, 0, &r[0], &r[1]);
    one_mode(d, 1, &r[2], &r[3]);
    int bad = rn_check_failed, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rn_dist_finalize(d);
    for (int i = 0; i < 4; i++) result_free(&r[i]);
    if (any && !bad) fprintf(stderr, "FAIL: another rank failed\n");
    if (any && !bad) rn_check_failed++;
    RN_CHECK_DONE();
}
#else
int main(void)
{
    printf("skipped: built without MPI\n");
    return 77;
}
#endif
