/* The CUDA device's collectives over NCCL: the optional comm ops of rn_device_ops
 * (nn/device.h), for src/dist's device path.
 *
 *   static const rn_device_ops cuda_ops = {..., RN_CUDA_COMM_OPS, ...};
 *   // create:      rn_cuda_comm_attach(&cd->comm, cd->stream, cd->ordinal);
 *   // synchronize: rn_cuda_comm_wait(&cd->base), then the compute stream's
 *   // destroy:     rn_cuda_comm_destroy(&cd->base);   (before the stream is destroyed)
 *
 * Wiring (cuda_device.c): the CUDA device's struct (which starts with its rn_device)
 * gains one member `rn_cuda_comm comm;`; after it has made its compute stream and
 * chosen its GPU, create calls rn_cuda_comm_attach(&comm, compute_stream, device_ordinal)
 * (the stream every op of the device is issued on, and the CUDA ordinal N of "cuda:N" as
 * cudaSetDevice takes it, i.e. after CUDA_VISIBLE_DEVICES); cuda_device.c defines
 * rn_cuda_device_comm(dev), returning &that member of dev (the one function this file
 * needs from it); its op table takes RN_CUDA_COMM_OPS (the seven comm fields); its destroy
 * op calls rn_cuda_comm_destroy(dev) before destroying the stream (safe when no
 * communicator exists or src/dist already freed it). Build: this file and
 * cuda_comm_kern.cu go into the device library (Makefile: CUDA_COMM_SRC, CUDA_COMM_CU),
 * linked with -lnccl (CUDA_COMM_LIBS).
 *
 * Semantics: allreduce and broadcast are ncclAllReduce / ncclBroadcast on a stream of the
 * communicator's own (made by comm_init, of the greatest priority, as PyTorch's NCCL
 * process group has one): each waits for the compute stream's ops issued before it (an
 * event), then runs beside the compute ops issued after it, so that a gradient bucket's
 * all-reduce overlaps the rest of backward; comm_wait makes the compute stream wait for
 * every collective issued so far (an event; the host does not wait), and synchronize
 * calls it first. allreduce's scale != 1 multiplies the sum afterwards on the collectives'
 * stream (one small kernel: the sum times scale, as the host path computes it). Every CUDA and NCCL
 * call is checked; the first failure is kept (naming the call and ncclGetErrorString)
 * and later collectives are skipped; comm_check returns it, or the communicator's
 * asynchronous error (ncclCommGetAsyncError), without waiting.
 */
#ifndef RN_CUDA_CUDA_COMM_H
#define RN_CUDA_CUDA_COMM_H

#include <cuda_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sum *= scale on stream: buf is n floats (f64 = 0) or n doubles (f64 = 1). */
cudaError_t rn_cuda_comm_scale(void *buf, size_t n, int f64, float scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
#include <nccl.h>

#include "core/status.h"
#include "nn/device.h"

/* The communicator state inside the CUDA device. */
typedef struct rn_cuda_comm {
    ncclComm_t comm;        /* NULL: none */
    cudaStream_t compute;   /* the device's compute stream */
    cudaStream_t stream;    /* the collectives' own (comm_init makes it; NULL before) */
    cudaEvent_t fork, join; /* compute -> stream before each collective; stream -> compute at comm_wait */
    int pending;            /* collectives issued since the last comm_wait */
    int ordinal;         /* its CUDA device */
    int rank, size;
    int failed;          /* 1 after the first error (kept in first) */
    rn_err first;
} rn_cuda_comm;

/* Zeroes c and records the device's compute stream and CUDA ordinal (at device create). */
void rn_cuda_comm_attach(rn_cuda_comm *c, cudaStream_t stream, int ordinal);
/* Defined by cuda_device.c: the rn_cuda_comm inside a CUDA device. */
rn_cuda_comm *rn_cuda_device_comm(rn_device *dev);

/* The comm ops (contracts: nn/device.h). */
size_t rn_cuda_comm_id(rn_device *dev, void *id, rn_err *err);
int rn_cuda_comm_init(rn_device *dev, const void *id, size_t id_bytes, int rank, int size, rn_err *err);
void rn_cuda_comm_destroy(rn_device *dev);
void rn_cuda_allreduce(rn_device *dev, void *buf, size_t n, rn_numtype t, float scale);
void rn_cuda_broadcast(rn_device *dev, void *buf, size_t bytes, int root);
int rn_cuda_comm_check(rn_device *dev, rn_err *err);
void rn_cuda_comm_wait(rn_device *dev);

/* The seven comm fields of an rn_device_ops initializer. */
#define RN_CUDA_COMM_OPS                                                                                           \
    .comm_id = rn_cuda_comm_id, .comm_init = rn_cuda_comm_init, .comm_destroy = rn_cuda_comm_destroy,              \
    .allreduce = rn_cuda_allreduce, .broadcast = rn_cuda_broadcast, .comm_check = rn_cuda_comm_check,             \
    .comm_wait = rn_cuda_comm_wait
#endif

#endif
