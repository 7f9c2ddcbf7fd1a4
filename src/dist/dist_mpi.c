/* rn_dist on MPI: compiled only when the Makefile found mpicc (RN_HAVE_MPI). */
#ifdef RN_HAVE_MPI
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"

#define MAX_BUCKETS 4096

struct rn_dist {
    int rank, size;
    /* watchdog */
    double timeout_s;
    pthread_t watchdog;
    int have_watchdog;
    atomic_int stop;
    atomic_llong busy_since_ns; /* 0: not inside a collective */
    const char *_Atomic busy_what;
    /* gradient buckets, bucket b = grad[lo[b] .. hi[b]), b = 0 at the end of the buffer;
       reduced in host (= grad in place with host memory, else a host copy) */
    const rn_params *p;
    float *grad, *host, *staged;
    size_t n_grad;
    int nb, started;
    size_t lo[MAX_BUCKETS], hi[MAX_BUCKETS];
    MPI_Request req[MAX_BUCKETS];
    size_t last_off;
    double comm_s;
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

void rn_dist_finalize(rn_dist *d)
{
    if (!d) return;
    if (d->have_watchdog) {
        atomic_store(&d->stop, 1);
        pthread_join(d->watchdog, NULL);
    }
    MPI_Finalize();
    free(d->staged);
    free(d);
}

void rn_dist_abort(rn_dist *d, int code)
{
    if (d && d->size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

int rn_dist_rank(const rn_dist *d) { return d ? d->rank : 0; }
int rn_dist_size(const rn_dist *d) { return d ? d->size : 1; }

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

/* bcast of n floats of p's arenas at buf: in place, or through a host copy. */
static int bcast_arena(rn_dist *d, rn_params *p, float *buf, size_t n, const char *what, rn_err *err)
{
    if (in_place(p)) return bcast(d, buf, n, MPI_FLOAT, sizeof(float), what, err);
    float *h = rn_xmalloc(n * sizeof *h + 1);
    rn_params_download(p, h, buf, n * sizeof *h);
    int rc = bcast(d, h, n, MPI_FLOAT, sizeof(float), what, err);
    if (!rc) rn_params_upload(p, buf, h, n * sizeof *h);
    free(h);
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
    busy_begin(d, "MPI_Barrier");
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    busy_end(d);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(d, rc, "MPI_Barrier", err);
}

static double now_s(void) { return (double)now_ns() * 1e-9; }

void rn_dist_grads_setup(rn_dist *d, const rn_params *p, size_t bucket_floats)
{
    if (!d) return;
    size_t n = p->n_param;
    d->p = p;
    d->grad = p->grad;
    d->n_grad = n;
    free(d->staged);
    d->staged = in_place(p) ? NULL : rn_xmalloc(n * sizeof *d->staged + 1);
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
}

static void fail_keep(rn_dist *d, int rc, const char *what)
{
    if (!d->failed) mpi_fail(d, rc, what, &d->first);
    d->failed = 1;
}

/* Starts every bucket lying wholly at offsets >= off. */
static void start_buckets(rn_dist *d, size_t off)
{
    while (d->started < d->nb && d->lo[d->started] >= off && !d->failed) {
        int b = d->started++;
        if (d->staged)
            rn_params_download(d->p, d->staged + d->lo[b], d->grad + d->lo[b], (d->hi[b] - d->lo[b]) * sizeof(float));
        int rc = MPI_Iallreduce(MPI_IN_PLACE, d->host + d->lo[b], (int)(d->hi[b] - d->lo[b]), MPI_FLOAT, MPI_SUM,
                                MPI_COMM_WORLD, &d->req[b]);
        if (rc != MPI_SUCCESS) {
            d->started--;
            fail_keep(d, rc, "MPI_Iallreduce of a gradient bucket");
        }
    }
}

static void grad_ready(void *ctx, size_t off)
{
    rn_dist *d = ctx;
    if (d->size == 1) return;
    RN_ASSERT(off <= d->last_off); /* one backward between two rn_dist_grads_finish */
    d->last_off = off;
    if (d->nb <= 1 || d->failed) return;
    double t0 = now_s();
    start_buckets(d, off);
    int flag = 0; /* lets the started all-reduces progress */
    if (d->started > 0) MPI_Testall(d->started, d->req, &flag, MPI_STATUSES_IGNORE);
    d->comm_s += now_s() - t0;
}

int rn_dist_grads_finish(rn_dist *d, rn_err *err)
{
    if (!d || d->size == 1) return 0;
    if (rn_dist_check(d, err)) return -1;
    double t0 = now_s();
    busy_begin(d, "the gradient all-reduce");
    start_buckets(d, 0);
    int rc = d->failed ? MPI_SUCCESS : MPI_Waitall(d->started, d->req, MPI_STATUSES_IGNORE);
    busy_end(d);
    d->comm_s += now_s() - t0;
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

/* SyncBN's sums: in place on device memory that is host memory (cpu, ref),
 * else through a host copy (download, all-reduce, upload). */
static int bn_reduce(void *ctx, rn_device *dev, void *buf, size_t n, rn_red_type t, rn_err *err)
{
    rn_dist *d = ctx;
    if (d->size == 1 || d->failed) return d->failed ? rn_dist_check(d, err) : 0;
    RN_ASSERT(n <= INT32_MAX);
    size_t bytes = n * (t == RN_RED_F64 ? sizeof(double) : sizeof(float));
    void *h = dev->host_memory ? buf : rn_xmalloc(bytes);
    if (h != buf) dev->ops->download(dev, h, buf, bytes);
    busy_begin(d, "MPI_Allreduce of SyncBN sums");
    int rc = MPI_Allreduce(MPI_IN_PLACE, h, (int)n, t == RN_RED_F64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    busy_end(d);
    if (h != buf) {
        if (rc == MPI_SUCCESS) dev->ops->upload(dev, buf, h, bytes);
        free(h);
    }
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
