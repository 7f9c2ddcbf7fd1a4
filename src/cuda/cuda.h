/* The CUDA device's private header: the device struct shared by cuda_device.c
 * (buffers, streams, the op table) and cuda_conv.c (cuDNN convolutions), and
 * the check macros every CUDA and cuDNN call goes through. The calls run one
 * way: cuda_device.c -> cuda_conv.c -> cuda_mem.c (the GPU made current, device
 * memory) -> cuda_check.c (the checks); only cuda_comm.c calls back into
 * cuda_device.c, for its state (rn_cuda_device_comm).
 *
 *   rn_cuda_device *d = rn_cuda(dev);               // also makes d's GPU current
 *   RN_CUDA_CHECK(cudaMemsetAsync(p, 0, n, d->stream));   // aborts naming call, status, file:line
 *   if (!RN_CUDA_OK(cudaStreamCreate(&s), err)) goto fail; // create paths: one line in err
 *   rn_cuda_kernels(&d->k, ...); rn_cuda_launched(d, "bn_sums");  // after every launcher
 *
 * Ops return nothing, so a failing call inside an op aborts with one line
 * ("rootnet: CUDA error at file:line: call: status"), except inside a graph capture,
 * where it is recorded and fails graph_end (the model then runs without graphs); calls that can fail for
 * a reason the caller can act on (create, conv_create) return it in an rn_err.
 * Kernels run asynchronously: a kernel's fault surfaces at the next call that
 * waits; with RN_CUDA_SYNC=1 every op waits for its own work, so the first
 * failing op is named.
 */
#ifndef RN_CUDA_CUDA_H
#define RN_CUDA_CUDA_H

#include <cuda_runtime.h>
#include <cudnn.h>

#include "cuda/cuda_comm.h"
#include "cuda/kernels.h"
#include "nn/device.h"

/* A measured cuDNN algorithm choice for one conv shape (per direction: 0 fwd, 1 bwd-data, 2 bwd-filter,
 * in cuDNN's terms; -1 when the direction is never run), cached per device. */
typedef struct rn_cuda_algos {
    int key[20];
    int algo[3];
    cudnnMathType_t math[3];
    float ms[3];
    size_t mem[3]; /* the workspace each needs */
} rn_cuda_algos;

typedef struct rn_cuda_alloc {
    void *p;
    size_t bytes;
} rn_cuda_alloc;

typedef struct rn_cuda_device {
    rn_device base; /* first */
    char name[24];  /* "cuda:N" */
    int ordinal;
    cudaStream_t stream;      /* every op */
    cudaStream_t copy_stream; /* upload_async */
    cudaEvent_t copied;       /* the last upload_async, waited on by stream */
    cudnnHandle_t cudnn;
    rn_cuda_kctx k;           /* the kernels' stream (= stream) and scratch */
    void *workspace;          /* cuDNN's: grown by conv_create to the most its chosen algorithms need */
    size_t ws_bytes;
    size_t ws_cap;            /* the most it may grow to (RN_CUDA_WORKSPACE_MB, 1024) */
    float *stage;             /* act_upload/act_download staging (fp32 NCHW), grown when too small */
    size_t stage_bytes;
    void *tmp;                /* a fused conv's output before its epilogue, grown by conv_create */
    size_t tmp_bytes;
    void *mx, *my;            /* a mixed conv's (fp32 activations, bf16/fp16 compute) x and y in its compute */
    size_t mx_bytes, my_bytes; /* type, grown by conv_create */
    void *dw;                 /* a backward-filter result before it is added into the gradient (one for every conv: */
    size_t dw_bytes;          /* on the one stream each is added before the next is formed), grown by conv_create */
    int graphs;               /* instantiated graphs alive (graph_end .. graph_destroy) */
    void **retired;           /* shared buffers replaced while a graph lived: a graph may still read them, */
    size_t nretired, cap_retired; /* so they are freed once no graph lives (rn_cuda_release) */
    rn_cuda_alloc *allocs;    /* every cudaMalloc held, for mem_peak */
    size_t nallocs, cap_allocs, held, peak;
    rn_cuda_algos *algos;     /* measured choices, one per conv shape */
    int nalgos, cap_algos;
    rn_cuda_comm comm;        /* NCCL collectives (cuda_comm.h) on stream */
    int tf32;                 /* RN_CUDA_TF32=1: fp32 convs may use TF32 tensor cores */
    int find;                 /* RN_CUDA_FIND=1: conv algorithms by measurement (cudnnFind*), not cuDNN's
                                 heuristics: faster, but another process may measure another choice */
    int benchmark;            /* RN_CUDA_BENCHMARK=1 (--cudnn-benchmark): measured, and the fastest algorithm
                                 chosen deterministic or not (PyTorch's cudnn.benchmark): no bit-identical resume */

    int sync_each;            /* RN_CUDA_SYNC=1: every op waits for its work (names the failing op) */
    int verbose;              /* RN_CUDA_VERBOSE: 1 the GPU and libraries, 2 also each conv's algorithms */
} rn_cuda_device;

/* cuda_check.c: the checks behind the macros below. */
void rn_cuda_check_at(cudaError_t e, const char *call, const char *file, int line);
void rn_cudnn_check_at(cudnnStatus_t s, const char *call, const char *file, int line);
int rn_cuda_ok_at(cudaError_t e, const char *call, const char *file, int line, rn_err *err);
int rn_cudnn_ok_at(cudnnStatus_t s, const char *call, const char *file, int line, rn_err *err);
#define RN_CUDA_CHECK(call) rn_cuda_check_at((call), #call, __FILE__, __LINE__)
#define RN_CUDNN_CHECK(call) rn_cudnn_check_at((call), #call, __FILE__, __LINE__)
/* 1 if the call succeeded, else 0 with one line in err. */
#define RN_CUDA_OK(call, err) rn_cuda_ok_at((call), #call, __FILE__, __LINE__, (err))
#define RN_CUDNN_OK(call, err) rn_cudnn_ok_at((call), #call, __FILE__, __LINE__, (err))

/* A graph capture on the calling thread (cuda_device.c's graph_begin .. graph_end; the capture mode is
 * CUDA's thread-local one, and the checks take no device, so the record is the thread's): between start
 * and stop a failing check above (RN_CUDA_CHECK, RN_CUDNN_CHECK, rn_cuda_launched) does not abort but
 * records its line, and stop returns the first one (-1 with err; 0 when none failed). capture_fail records
 * a failure of the device's own (a buffer that would have to grow inside the capture). */
void rn_cuda_capture_start(void);
int rn_cuda_capture_stop(rn_err *err);
int rn_cuda_capturing(void);
void rn_cuda_capture_fail(const char *what);

/* After a kernel launcher: checks the launch (and with sync_each the work), naming op. */
void rn_cuda_launched_at(rn_cuda_device *d, const char *op, const char *file, int line);
#define rn_cuda_launched(d, op) rn_cuda_launched_at((d), (op), __FILE__, __LINE__)

/* cuda_mem.c: dev as the CUDA device, its GPU made current for the calling thread. */
rn_cuda_device *rn_cuda(rn_device *dev);
/* Device memory counted in mem_peak: NULL when out of memory. */
void *rn_cuda_malloc(rn_cuda_device *d, size_t bytes);
void rn_cuda_free(rn_cuda_device *d, void *p);
/* A shared buffer (workspace, staging, a conv's shared ones) being replaced: freed now when no graph
 * lives, else kept until the last graph is destroyed (rn_cuda_graphs_add), so that no graph is left
 * on freed memory. */
void rn_cuda_release(rn_cuda_device *d, void *p);
/* The live graph count changed by delta (+1 instantiated, -1 destroyed); at 0 the retired buffers go. */
void rn_cuda_graphs_add(rn_cuda_device *d, int delta);

/* cuda_conv.c: the conv ops of the table. */
int rn_cuda_conv_create(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err);
void rn_cuda_conv_destroy(rn_device *dev, rn_conv *c);
void rn_cuda_conv_set_weights(rn_device *dev, rn_conv *c, const float *w);
void rn_cuda_conv_forward(rn_device *dev, rn_conv *c, void *dst, const void *src);
void rn_cuda_conv_backward_data(rn_device *dev, rn_conv *c, void *diff_src, const void *diff_dst);
void rn_cuda_conv_backward_weights(rn_device *dev, rn_conv *c, float *diff_w, const void *src, const void *diff_dst);
void rn_cuda_conv_set_weights_folded(rn_device *dev, rn_conv *c, const float *w, const float *scale,
                                     const float *bias);
void rn_cuda_conv_forward_fused(rn_device *dev, rn_conv *c, void *dst, const void *src, const void *res);
const char *rn_cuda_conv_impl_name(rn_device *dev, const rn_conv *c, int direction);
/* Frees the algorithm cache and the fused convs' shared output (at destroy). */
void rn_cuda_conv_release(rn_cuda_device *d);

#endif
