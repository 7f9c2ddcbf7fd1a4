/* The CUDA device's collectives over NCCL (see cuda_comm.h). */
#include "cuda/cuda_comm.h"

#include <string.h>

void rn_cuda_comm_attach(rn_cuda_comm *c, cudaStream_t stream, int ordinal)
{
    memset(c, 0, sizeof *c);
    c->compute = stream, c->ordinal = ordinal;
}

/* Sets err from a failed NCCL call; returns -1. */
static int nccl_fail(rn_err *err, const char *call, ncclResult_t r)
{
    const char *last = ncclGetLastError(NULL);
    return rn_err_set(err, "%s failed: %s%s%s", call, ncclGetErrorString(r), last && *last ? ": " : "",
                      last ? last : "");
}

static int cuda_fail(rn_err *err, const char *call, cudaError_t e)
{
    return rn_err_set(err, "%s failed: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* Keeps the first error of an op that cannot return one (allreduce, broadcast). */
static void keep_nccl(rn_cuda_comm *c, const char *call, ncclResult_t r)
{
    if (r != ncclSuccess && !c->failed) c->failed = 1, nccl_fail(&c->first, call, r);
}

static void keep_cuda(rn_cuda_comm *c, const char *call, cudaError_t e)
{
    if (e != cudaSuccess && !c->failed) c->failed = 1, cuda_fail(&c->first, call, e);
}

size_t rn_cuda_comm_id(rn_device *dev, void *id, rn_err *err)
{
    (void)dev;
    _Static_assert(sizeof(ncclUniqueId) <= RN_COMM_ID_BYTES, "RN_COMM_ID_BYTES holds an ncclUniqueId");
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) {
        nccl_fail(err, "ncclGetUniqueId", r);
        return 0;
    }
    memcpy(id, &u, sizeof u);
    return sizeof u;
}

/* The collectives' stream (the greatest priority) and its two events, once. */
static int streams_create(rn_cuda_comm *c, rn_err *err)
{
    if (c->stream) return 0;
    int least = 0, greatest = 0;
    cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (e != cudaSuccess) return cuda_fail(err, "cudaDeviceGetStreamPriorityRange", e);
    e = cudaStreamCreateWithPriority(&c->stream, cudaStreamNonBlocking, greatest);
    if (e != cudaSuccess) {
        c->stream = NULL;
        return cuda_fail(err, "cudaStreamCreateWithPriority (the collectives' stream)", e);
    }
    if ((e = cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming)) != cudaSuccess ||
        (e = cudaEventCreateWithFlags(&c->join, cudaEventDisableTiming)) != cudaSuccess)
        return cuda_fail(err, "cudaEventCreateWithFlags (the collectives' events)", e);
    return 0;
}

int rn_cuda_comm_init(rn_device *dev, const void *id, size_t id_bytes, int rank, int size, rn_err *err)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (c->comm) return rn_err_set(err, "%s: a communicator exists already", dev->name);
    if (id_bytes != sizeof(ncclUniqueId))
        return rn_err_set(err, "%s: a communicator id of %zu bytes, NCCL's has %zu", dev->name, id_bytes,
                          sizeof(ncclUniqueId));
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    cudaError_t e = cudaSetDevice(c->ordinal);
    if (e != cudaSuccess) return cuda_fail(err, "cudaSetDevice", e);
    if (streams_create(c, err)) return -1;
    ncclResult_t r = ncclCommInitRank(&c->comm, size, u, rank);
    if (r != ncclSuccess) {
        c->comm = NULL;
        return nccl_fail(err, "ncclCommInitRank", r);
    }
    c->rank = rank, c->size = size, c->failed = 0;
    return 0;
}

/* The collectives' stream and events (after the communicator: an aborted one ends its kernels; the
 * stream's resources are freed once its work is done). */
static void streams_destroy(rn_cuda_comm *c)
{
    if (c->stream) (void)cudaStreamDestroy(c->stream);
    if (c->fork) (void)cudaEventDestroy(c->fork);
    if (c->join) (void)cudaEventDestroy(c->join);
    c->stream = NULL, c->fork = c->join = NULL, c->pending = 0;
}

void rn_cuda_comm_destroy(rn_device *dev)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (!c->comm) {
        streams_destroy(c);
        return;
    }
    (void)cudaSetDevice(c->ordinal);
    if (!c->failed) (void)cudaStreamSynchronize(c->stream); /* the collectives in flight end first */
    /* after an error peers may be gone: abort instead of the collective finalize */
    ncclResult_t r = c->failed ? ncclCommAbort(c->comm) : ncclCommDestroy(c->comm);
    if (r != ncclSuccess && !c->failed) {
        rn_err e;
        nccl_fail(&e, "ncclCommDestroy", r);
        fprintf(stderr, "rootnet: %s: %s\n", dev->name, e.msg);
    }
    c->comm = NULL;
    streams_destroy(c);
}

/* The collectives' stream, ordered after the compute ops issued so far (the fork event). */
static cudaStream_t fork_stream(rn_cuda_comm *c)
{
    keep_cuda(c, "cudaEventRecord (a collective's start)", cudaEventRecord(c->fork, c->compute));
    keep_cuda(c, "cudaStreamWaitEvent (a collective after the compute)", cudaStreamWaitEvent(c->stream, c->fork, 0));
    c->pending = 1;
    return c->stream;
}

void rn_cuda_comm_wait(rn_device *dev)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (!c->pending) return;
    c->pending = 0;
    keep_cuda(c, "cudaEventRecord (the collectives' end)", cudaEventRecord(c->join, c->stream));
    keep_cuda(c, "cudaStreamWaitEvent (the compute after the collectives)",
              cudaStreamWaitEvent(c->compute, c->join, 0));
}

void rn_cuda_allreduce(rn_device *dev, void *buf, size_t n, rn_numtype t, float scale)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (c->failed) return;
    if (!c->comm) {
        c->failed = 1, rn_err_set(&c->first, "%s: an all-reduce without a communicator (comm_init)", dev->name);
        return;
    }
    int f64 = t == RN_NUM_F64;
    cudaStream_t s = fork_stream(c);
    keep_nccl(c, "ncclAllReduce", ncclAllReduce(buf, buf, n, f64 ? ncclDouble : ncclFloat, ncclSum, c->comm, s));
    if (!c->failed && scale != 1.0f)
        keep_cuda(c, "the all-reduce's scale kernel (rn_cuda_comm_scale)", rn_cuda_comm_scale(buf, n, f64, scale, s));
}

void rn_cuda_broadcast(rn_device *dev, void *buf, size_t bytes, int root)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (c->failed) return;
    if (!c->comm) {
        c->failed = 1, rn_err_set(&c->first, "%s: a broadcast without a communicator (comm_init)", dev->name);
        return;
    }
    keep_nccl(c, "ncclBroadcast", ncclBroadcast(buf, buf, bytes, ncclUint8, root, c->comm, fork_stream(c)));
}

int rn_cuda_comm_check(rn_device *dev, rn_err *err)
{
    rn_cuda_comm *c = rn_cuda_device_comm(dev);
    if (!c->failed && c->comm) {
        ncclResult_t async = ncclSuccess;
        ncclResult_t r = ncclCommGetAsyncError(c->comm, &async);
        if (r != ncclSuccess)
            keep_nccl(c, "ncclCommGetAsyncError", r);
        else
            keep_nccl(c, "an NCCL collective (ncclCommGetAsyncError)", async);
    }
    if (!c->failed) return 0;
    return rn_err_set(err, "%s, rank %d of %d: %s", dev->name, c->rank, c->size, c->first.msg);
}
