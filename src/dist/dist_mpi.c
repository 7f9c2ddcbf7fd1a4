/* rn_dist on MPI: compiled only when the Makefile found mpicc (RN_HAVE_MPI). */
#ifdef RN_HAVE_MPI
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/profile.h"
#include "dist/dist.h"

#define MAX_BUCKETS 4096

struct rn_dist {
    int rank, size;
    int local_rank; /* among the ranks of this node (MPI_COMM_TYPE_SHARED) */
    /* watchdog */
    double timeout_s;
    pthread_t watchdog;
    int have_watchdog;
    atomic_int stop;
    atomic_llong busy_since_ns; /* 0: not inside a collective */
    const char *_Atomic busy_what;
    /* the device whose collectives reduce (held: rn_device_retain), or NULL: the host path */
    rn_device *comm_dev;
    /* gradient buckets, bucket b = grad[lo[b] .. hi[b]), b = 0 at the end of the buffer;
       reduced on comm_dev, else in host (= grad in place with host memory, else `staged`) */
    const rn_params *p;
    float *grad, *host, *staged; /* staged: a host copy of staged_n floats, or NULL */
    size_t n_grad, staged_n;
    int nb, started;
    size_t lo[MAX_BUCKETS], hi[MAX_BUCKETS];
    MPI_Request req[MAX_BUCKETS];
    size_t last_off;
    double comm_s;
    /* SyncBN's host copy on a device without host memory or collectives (bn_cap doubles) */
    double *bn_host;
    size_t bn_cap;
    /* first failure met by a hook */
    int failed;
    rn_err first;
};

int rn_dist_available(void) { return 1; }

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void busy_begin(rn_dist *d, const char *what)
{
    atomic_store(&d->busy_what, what);
    atomic_store(&d->busy_since_ns, now_ns());
}

static void busy_end(rn_dist *d) { atomic_store(&d->busy_since_ns, 0); }

static void *watchdog_main(void *arg)
{
    rn_dist *d = arg;
    long long limit = (long long)(d->timeout_s * 1e9);
    struct timespec tick = {0, 100 * 1000 * 1000};
    while (!atomic_load(&d->stop)) {
        nanosleep(&tick, NULL);
        long long t0 = atomic_load(&d->busy_since_ns);
        if (t0 && now_ns() - t0 > limit) {
            fprintf(stderr,
                    "rootnet: rank %d of %d: %s did not complete within %.0f s: another rank died or hangs; "
                    "ending this rank (exit 3) so that the job stops\n",
                    d->rank, d->size, atomic_load(&d->busy_what), d->timeout_s);
            fflush(stderr);
            _exit(3);
        }
    }
    return NULL;
}

static int mpi_fail(rn_dist *d, int rc, const char *what, rn_err *err)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    return rn_err_set(err, "rank %d of %d: %s failed: %s (another rank probably died)", d->rank, d->size, what, s);
}

/* This rank's index among the ranks of its node. */
static int local_rank_of(int rank)
{
    MPI_Comm node;
    int r = rank;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) return r;
    MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    return r;
}

int rn_dist_init(rn_dist **out, double timeout_s, rn_err *err)
{
    *out = NULL;
    int provided = 0, inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return rn_err_set(err, "MPI_Init_thread failed");
    rn_dist *d = rn_xcalloc(1, sizeof *d);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    d->local_rank = local_rank_of(d->rank);
    d->timeout_s = timeout_s;
    if (timeout_s > 0) {
        if (pthread_create(&d->watchdog, NULL, watchdog_main, d)) {
            free(d);
            MPI_Finalize();
            return rn_err_set(err, "cannot start the MPI watchdog thread");
        }
        d->have_watchdog = 1;
    }
    *out = d;
    return 0;
}

/* Drops the device collectives: the communicator, then dist's hold on the device. */
static void comm_release(rn_dist *d)
{
    if (!d->comm_dev) return;
    d->comm_dev->ops->comm_destroy(d->comm_dev);
    rn_device_destroy(d->comm_dev);
    d->comm_dev = NULL;
}

void rn_dist_finalize(rn_dist *d)
{
    if (!d) return;
    comm_release(d);
    if (d->have_watchdog) {
        atomic_store(&d->stop, 1);
        pthread_join(d->watchdog, NULL);
    }
    MPI_Finalize();
    free(d->staged);
    free(d->bn_host);
    free(d);
}

void rn_dist_abort(rn_dist *d, int code)
{
    if (d && d->size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

int rn_dist_rank(const rn_dist *d) { return d ? d->rank : 0; }
int rn_dist_size(const rn_dist *d) { return d ? d->size : 1; }
int rn_dist_local_rank(const rn_dist *d) { return d ? d->local_rank : 0; }
int rn_dist_device_collectives(const rn_dist *d) { return d && d->comm_dev; }

/* The first error the device's collectives met (their comm_check), kept as a hook failure. */
static int comm_errors(rn_dist *d, rn_err *err)
{
    if (d->comm_dev && !d->failed && d->comm_dev->ops->comm_check(d->comm_dev, &d->first)) d->failed = 1;
    return rn_dist_check(d, err);
}

static int allreduce(rn_dist *d, void *buf, int n, MPI_Datatype t, const char *what, rn_err *err)
{
    busy_begin(d, what);
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, n, t, MPI_SUM, MPI_COMM_WORLD);
    busy_end(d);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(d, rc, what, err);
}

int rn_dist_allreduce_sum(rn_dist *d, double *buf, int n, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (comm_errors(d, err)) return -1;
    return allreduce(d, buf, n, MPI_DOUBLE, "MPI_Allreduce", err);
}

int rn_dist_allreduce_mean(rn_dist *d, double *buf, int n, rn_err *err)
{
    if (rn_dist_allreduce_sum(d, buf, n, err)) return -1;
    for (int i = 0; d && i < n; i++) buf[i] /= d->size;
    return 0;
}

/* Broadcast of a large buffer in chunks that fit an int count. */
static int bcast(rn_dist *d, void *buf, size_t n, MPI_Datatype t, size_t elem, const char *what, rn_err *err)
{
    const size_t chunk = (size_t)1 << 28;
    for (size_t at = 0; at < n; at += chunk) {
        size_t c = n - at < chunk ? n - at : chunk;
        busy_begin(d, what);
        int rc = MPI_Bcast((char *)buf + at * elem, (int)c, t, 0, MPI_COMM_WORLD);
        busy_end(d);
        if (rc != MPI_SUCCESS) return mpi_fail(d, rc, what, err);
    }
    return 0;
}

/* 1 if p's arenas are host memory (none, or a device with host memory): MPI works on them in place. */
static int in_place(const rn_params *p) { return !p->dev || p->dev->host_memory; }

/* bcast of n floats of p's arenas at buf: on the device (its collectives), in place, or
 * through the host copy made by rn_dist_grads_setup (a temporary one before it). */
static int bcast_arena(rn_dist *d, rn_params *p, float *buf, size_t n, const char *what, rn_err *err)
{
    if (d->comm_dev && d->comm_dev == p->dev) {
        p->dev->ops->broadcast(p->dev, buf, n * sizeof *buf, 0);
        p->dev->ops->comm_wait(p->dev);
        return comm_errors(d, err);
    }
    if (in_place(p)) return bcast(d, buf, n, MPI_FLOAT, sizeof(float), what, err);
    int own = !(d->p == p && d->staged && n <= d->staged_n);
    float *h = own ? rn_xmalloc(n * sizeof *h + 1) : d->staged;
    rn_params_download(p, h, buf, n * sizeof *h);
    int rc = bcast(d, h, n, MPI_FLOAT, sizeof(float), what, err);
    if (!rc) rn_params_upload(p, buf, h, n * sizeof *h);
    if (own) free(h);
    return rc;
}

int rn_dist_bcast_stats(rn_dist *d, rn_params *p, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (bcast_arena(d, p, p->stats, p->n_stats, "MPI_Bcast of the BN statistics", err)) return -1;
    return bcast(d, p->nbt, p->n_nbt, MPI_INT64_T, sizeof(int64_t), "MPI_Bcast of the BN counters", err);
}

int rn_dist_bcast_params(rn_dist *d, rn_params *p, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (bcast_arena(d, p, p->param, p->n_param, "MPI_Bcast of the weights", err)) return -1;
    return rn_dist_bcast_stats(d, p, err);
}

int rn_dist_barrier(rn_dist *d, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (comm_errors(d, err)) return -1;
    busy_begin(d, "MPI_Barrier");
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    busy_end(d);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(d, rc, "MPI_Barrier", err);
}

/* ---- the device's collectives: chosen at setup, bootstrapped over MPI ---- */

#define ID_CHARS 256

/* Where this rank computes, as a string equal on two ranks exactly when they share a GPU
 * (as far as the host can tell): host name, device name and the visible-device list. */
static void device_identity(char *s, const rn_device *dev)
{
    char host[128] = "?";
    gethostname(host, sizeof host - 1);
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(s, ID_CHARS, "%s/%s/%s", host, dev->name, vis ? vis : "all");
}

/* 1 when two ranks report the same identity (NCCL refuses a communicator with two ranks on one
 * GPU); *a, *b name the first such pair. -1 on an MPI error. */
static int shared_device(rn_dist *d, const rn_device *dev, int *a, int *b, rn_err *err)
{
    char *ids = rn_xcalloc((size_t)d->size, ID_CHARS);
    char mine[ID_CHARS] = {0};
    device_identity(mine, dev);
    int rc = MPI_Allgather(mine, ID_CHARS, MPI_CHAR, ids, ID_CHARS, MPI_CHAR, MPI_COMM_WORLD);
    int dup = 0;
    for (int i = 0; rc == MPI_SUCCESS && !dup && i < d->size; i++)
        for (int j = i + 1; !dup && j < d->size; j++)
            if (!strncmp(ids + (size_t)i * ID_CHARS, ids + (size_t)j * ID_CHARS, ID_CHARS)) dup = 1, *a = i, *b = j;
    free(ids);
    return rc == MPI_SUCCESS ? dup : mpi_fail(d, rc, "MPI_Allgather of the device identities", err);
}

/* The communicator over every rank's dev: rank 0 makes its id, MPI_Bcast sends it, every rank
 * joins; a failure on any rank fails every rank (one line each, naming the failing rank's call). */
static int comm_bootstrap(rn_dist *d, rn_device *dev, rn_err *err)
{
    unsigned char id[RN_COMM_ID_BYTES] = {0};
    rn_err mine = {{0}};
    int len = d->rank == 0 ? (int)dev->ops->comm_id(dev, id, &mine) : 0;
    if (bcast(d, &len, 1, MPI_INT, sizeof len, "MPI_Bcast of the communicator id", err) ||
        bcast(d, id, RN_COMM_ID_BYTES, MPI_BYTE, 1, "MPI_Bcast of the communicator id", err))
        return -1;
    if (len <= 0 || len > RN_COMM_ID_BYTES)
        return d->rank == 0 ? rn_err_set(err, "%s", mine.msg)
                            : rn_err_set(err, "rank 0 could not make the device communicator's id");
    int failed = dev->ops->comm_init(dev, id, (size_t)len, d->rank, d->size, &mine) != 0;
    int any = failed;
    int rc = MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || any) dev->ops->comm_destroy(dev);
    if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Allreduce after the communicator's init", err);
    if (failed) return rn_err_set(err, "rank %d of %d: %s", d->rank, d->size, mine.msg);
    if (any) return rn_err_set(err, "rank %d of %d: another rank could not join the device communicator", d->rank,
                               d->size);
    return 0;
}

/* Chooses the path for p's device: its collectives when it has them and no two ranks share a
 * device, else the host path (one line on rank 0's stderr says why, when the device had them). */
static int comm_setup(rn_dist *d, rn_params *p, rn_err *err)
{
    rn_device *dev = p->dev;
    if (d->comm_dev == dev) return 0;
    comm_release(d);
    if (!dev || !dev->ops->comm_init) return 0;
    RN_ASSERT(dev->ops->comm_wait); /* the collectives come as a set (nn/device_ops.inc) */
    int a = 0, b = 0, dup = shared_device(d, dev, &a, &b, err);
    if (dup < 0) return -1;
    if (dup) {
        if (d->rank == 0)
            fprintf(stderr, "rootnet: ranks %d and %d share device %s on one node: its collectives (NCCL) refuse "
                            "that, so gradients and SyncBN sums are reduced through the host with MPI\n",
                    a, b, dev->name);
        return 0;
    }
    if (comm_bootstrap(d, dev, err)) return -1;
    rn_device_retain(dev);
    d->comm_dev = dev;
    return 0;
}

/* SyncBN's host copy, sized for p's widest BN: 2 C + 1 doubles <= n_stats + 1. */
static void bn_host_reserve(rn_dist *d, size_t n)
{
    if (n <= d->bn_cap) return;
    free(d->bn_host);
    d->bn_host = rn_xmalloc(n * sizeof *d->bn_host);
    d->bn_cap = n;
}

int rn_dist_grads_setup(rn_dist *d, rn_params *p, size_t bucket_floats, rn_err *err)
{
    if (!d) return 0;
    if (d->size > 1 && comm_setup(d, p, err)) return -1;
    size_t n = p->n_param;
    d->p = p;
    d->grad = p->grad;
    d->n_grad = n;
    free(d->staged);
    int staged = !in_place(p) && !d->comm_dev;
    d->staged_n = staged ? (n > p->n_stats ? n : p->n_stats) : 0;
    d->staged = staged ? rn_xmalloc(d->staged_n * sizeof *d->staged + 1) : NULL;
    if (staged) bn_host_reserve(d, p->n_stats + 1);
    d->host = d->staged ? d->staged : p->grad;
    if (bucket_floats == 0 || bucket_floats >= n) bucket_floats = n;
    size_t min_bucket = (n + MAX_BUCKETS - 1) / MAX_BUCKETS;
    if (bucket_floats < min_bucket) bucket_floats = min_bucket;
    d->nb = 0;
    for (size_t hi = n; hi > 0; d->nb++) {
        size_t lo = hi > bucket_floats ? hi - bucket_floats : 0;
        d->lo[d->nb] = lo, d->hi[d->nb] = hi;
        hi = lo;
    }
    d->started = 0;
    d->last_off = n;
    return 0;
}

static void fail_keep(rn_dist *d, int rc, const char *what)
{
    if (!d->failed) mpi_fail(d, rc, what, &d->first);
    d->failed = 1;
}

/* Bucket b on the host: download (no host memory), then MPI_Iallreduce in place; 0, or -1 (kept). */
static int host_bucket_start(rn_dist *d, int b)
{
    size_t lo = d->lo[b], n = d->hi[b] - d->lo[b];
    if (d->staged) rn_params_download(d->p, d->staged + lo, d->grad + lo, n * sizeof(float));
    int rc = MPI_Iallreduce(MPI_IN_PLACE, d->host + lo, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &d->req[b]);
    if (rc == MPI_SUCCESS) return 0;
    fail_keep(d, rc, "MPI_Iallreduce of a gradient bucket");
    return -1;
}

/* Starts every bucket lying wholly at offsets >= off: on the device, the mean in one
 * all-reduce each, beside the rest of backward until grads_finish's comm_wait; else on the host. */
static void start_buckets(rn_dist *d, size_t off)
{
    rn_device *dev = d->comm_dev;
    while (d->started < d->nb && d->lo[d->started] >= off && !d->failed) {
        int b = d->started++;
        if (dev)
            dev->ops->allreduce(dev, d->grad + d->lo[b], d->hi[b] - d->lo[b], RN_NUM_F32, 1.0f / (float)d->size);
        else if (host_bucket_start(d, b))
            d->started--; /* the failed bucket holds no request */
    }
}

static void grad_ready(void *ctx, size_t off)
{
    rn_dist *d = ctx;
    if (d->size == 1) return;
    RN_ASSERT(off <= d->last_off); /* one backward between two rn_dist_grads_finish */
    d->last_off = off;
    if (d->nb <= 1 || d->failed) return;
    double t0 = rn_prof_now();
    start_buckets(d, off);
    int flag = 0; /* lets the started all-reduces progress */
    if (!d->comm_dev && d->started > 0) MPI_Testall(d->started, d->req, &flag, MPI_STATUSES_IGNORE);
    d->comm_s += rn_prof_now() - t0;
}

/* The device path: the last buckets start, and the ops after (Adam) are ordered after every
 * bucket's all-reduce (comm_wait: until then they ran beside backward); nothing waits here. The
 * step's one wait (its loss) waits for them, so the watchdog watches from now until the next host
 * collective (the loss's mean over ranks, right after that wait): a dead peer that stalls the device
 * ends the rank. */
static int grads_finish_device(rn_dist *d, rn_err *err)
{
    start_buckets(d, 0);
    d->comm_dev->ops->comm_wait(d->comm_dev);
    d->started = 0, d->last_off = d->n_grad;
    if (rn_dist_check(d, err)) return -1;
    busy_begin(d, "the device's gradient all-reduce (waited for by the step's loss read)");
    return 0;
}

int rn_dist_grads_finish(rn_dist *d, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (rn_dist_check(d, err)) return -1;
    if (d->comm_dev) return grads_finish_device(d, err);
    double t0 = rn_prof_now();
    busy_begin(d, "the gradient all-reduce");
    start_buckets(d, 0);
    int rc = d->failed ? MPI_SUCCESS : MPI_Waitall(d->started, d->req, MPI_STATUSES_IGNORE);
    busy_end(d);
    d->comm_s += rn_prof_now() - t0;
    if (rn_dist_check(d, err)) return -1;
    d->started = 0, d->last_off = d->n_grad; /* ready for the next backward */
    if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Waitall of the gradient buckets", err);
    float inv = 1.0f / (float)d->size;
    for (size_t i = 0; i < d->n_grad; i++) d->host[i] *= inv;
    if (d->staged) rn_params_upload((rn_params *)d->p, d->grad, d->staged, d->n_grad * sizeof *d->staged);
    return 0;
}

double rn_dist_comm_seconds(rn_dist *d, int reset)
{
    if (!d) return 0.0;
    double s = d->comm_s;
    if (reset) d->comm_s = 0;
    return s;
}

/* SyncBN's sums: on the device (its all-reduce, in place, no wait), in place on device
 * memory that is host memory (cpu, ref), else through the host copy sized at setup. */
static int bn_reduce(void *ctx, rn_device *dev, void *buf, size_t n, rn_numtype t, rn_err *err)
{
    rn_dist *d = ctx;
    if (d->size == 1 || d->failed) return rn_dist_check(d, err);
    if (dev == d->comm_dev) {
        dev->ops->allreduce(dev, buf, n, t, 1.0f);
        dev->ops->comm_wait(dev); /* the forward reads the sums next */
        return 0;
    }
    RN_ASSERT(n <= INT32_MAX);
    size_t bytes = n * (t == RN_NUM_F64 ? sizeof(double) : sizeof(float));
    if (!dev->host_memory) bn_host_reserve(d, n); /* sized at setup: grows only if called before it */
    void *h = dev->host_memory ? buf : d->bn_host;
    if (h != buf) dev->ops->download(dev, h, buf, bytes);
    busy_begin(d, "MPI_Allreduce of SyncBN sums");
    int rc = MPI_Allreduce(MPI_IN_PLACE, h, (int)n, t == RN_NUM_F64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    busy_end(d);
    if (h != buf && rc == MPI_SUCCESS) dev->ops->upload(dev, buf, h, bytes);
    if (rc != MPI_SUCCESS) fail_keep(d, rc, "MPI_Allreduce of SyncBN sums");
    return rn_dist_check(d, err);
}

rn_device_reduce rn_dist_bn_reduce(rn_dist *d)
{
    return d ? (rn_device_reduce){bn_reduce, d, d->size} : (rn_device_reduce){0};
}

rn_model_grad_ready rn_dist_grad_ready(rn_dist *d)
{
    return d ? (rn_model_grad_ready){grad_ready, d} : (rn_model_grad_ready){0};
}

int rn_dist_check(rn_dist *d, rn_err *err)
{
    if (!d || !d->failed) return 0;
    *err = d->first;
    return -1;
}

#else
typedef int rn_dist_mpi_unused; /* ISO C: a translation unit is not empty */
#endif
