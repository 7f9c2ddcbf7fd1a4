/* The "cuda" device (nn/device.h) on one NVIDIA GPU: activations NHWC (fp32,
 * bf16 or fp16), convolutions through cuDNN (cuda_conv.c), every other op a
 * kernel of cuda/kernels.h, all on one compute stream; upload_async on a copy
 * stream with an event the compute stream waits on; the collectives on a stream
 * of their own until comm_wait (cuda_comm.h). Only download,
 * act_download, synchronize and event_elapsed_ms wait.
 *
 * Loaded at run time as librootnet-cuda.so (nn/device_lib.h): the registry
 * calls create() through rn_cuda_device_lib, the only exported symbol.
 *
 * Environment, read once at create (--cudnn-benchmark and --workspace-mb set the two: train/tuning.h):
 * RN_CUDA_BENCHMARK=1 measures every conv's algorithms and takes the fastest, deterministic or not
 * (PyTorch's cudnn.benchmark; a resumed run is then not bit-identical), RN_CUDA_TF32=1 lets fp32 convs use TF32
 * (said on stderr; off by default), RN_CUDA_SYNC=1 waits after every op (the
 * first failing op is named), RN_CUDA_WORKSPACE_MB (default 1024) caps cuDNN's
 * workspace (grown to what the chosen algorithms need), RN_CUDA_VERBOSE=1 prints the GPU and
 * the library versions (2: also each conv's cuDNN candidates and choice); RN_CUDA_FUSED=0 (read
 * by conv_create) keeps inference convs off cuDNN's fused conv + bias + ReLU.
 * Graphs (--graph): a step's ops captured from the compute stream and replayed (nn/device_ops.inc).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "nn/device_lib.h"

/* ---- capabilities, buffers ---- */

/* fp32 activations with fp32, bf16 or fp16 convs; bf16/fp16 activations with convs of their own type. */
static int cuda_supports(rn_device *dev, rn_numtype compute, rn_numtype act)
{
    (void)dev;
    return (act == RN_NUM_F32 && compute != RN_NUM_I8) || (compute == RN_NUM_BF16 && act == RN_NUM_BF16) ||
           (compute == RN_NUM_F16 && act == RN_NUM_F16);
}

static void *cuda_alloc(rn_device *dev, size_t bytes) { return rn_cuda_malloc(rn_cuda(dev), bytes); }

static void cuda_free(rn_device *dev, void *buf) { rn_cuda_free(rn_cuda(dev), buf); }

static size_t numel(const rn_act_shape *a) { return (size_t)a->n * a->c * a->h * a->w; }

static size_t cuda_act_bytes(rn_device *dev, const rn_act_shape *a)
{
    (void)dev;
    return numel(a) * rn_numtype_size(a->type);
}

/* From pageable memory cudaMemcpyAsync returns once src is staged; from pinned memory (host_alloc) the copy
 * reads src later, so it is waited for: src may be reused when upload returns. */
static void cuda_upload(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    rn_cuda_device *d = rn_cuda(dev);
    struct cudaPointerAttributes at;
    RN_CUDA_CHECK(cudaPointerGetAttributes(&at, src));
    RN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, d->stream));
    if (at.type == cudaMemoryTypeHost) RN_CUDA_CHECK(cudaStreamSynchronize(d->stream));
}

static void cuda_download(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, d->stream));
    RN_CUDA_CHECK(cudaStreamSynchronize(d->stream));
}

static void *cuda_host_alloc(rn_device *dev, size_t bytes)
{
    (void)rn_cuda(dev);
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 64, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

static void cuda_host_free(rn_device *dev, void *buf)
{
    (void)rn_cuda(dev);
    if (buf) RN_CUDA_CHECK(cudaFreeHost(buf));
}

/* On the copy stream, after what it copied before; the compute stream waits for it before its next op. */
static void cuda_upload_async(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, d->copy_stream));
    RN_CUDA_CHECK(cudaEventRecord(d->copied, d->copy_stream));
    RN_CUDA_CHECK(cudaStreamWaitEvent(d->stream, d->copied, 0));
}

static void cuda_copy(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    rn_cuda_device *d = rn_cuda(dev);
    if (dst != src) RN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d->stream));
}

static void cuda_zero(rn_device *dev, void *buf, size_t bytes)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_CUDA_CHECK(cudaMemsetAsync(buf, 0, bytes, d->stream));
}

/* The staging buffer of at least bytes (growing it waits: cudaFree synchronizes; inside a graph capture
 * it cannot grow: the capture fails, and the one buffer is returned for the ops it records, never run). */
static float *stage(rn_cuda_device *d, size_t bytes)
{
    if (d->stage_bytes >= bytes) return d->stage;
    if (rn_cuda_capturing()) {
        rn_cuda_capture_fail("the staging buffer's growth (an alloc)");
        return d->stage;
    }
    rn_cuda_release(d, d->stage);
    d->stage = rn_cuda_malloc(d, bytes);
    if (!d->stage) {
        fprintf(stderr, "rootnet: device %s: out of GPU memory for a %zu-byte staging buffer\n", d->name, bytes);
        abort();
    }
    d->stage_bytes = bytes;
    return d->stage;
}

static void cuda_act_upload(rn_device *dev, void *dst, const float *src, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    size_t bytes = numel(a) * sizeof(float);
    float *st = stage(d, bytes);
    RN_CUDA_CHECK(cudaMemcpyAsync(st, src, bytes, cudaMemcpyHostToDevice, d->stream));
    rn_cuda_act_from_nchw(&d->k, dst, a->type, a->c, st, a->n, a->c, a->h, a->w);
    rn_cuda_launched(d, "act_upload");
}

static void cuda_act_download(rn_device *dev, float *dst, const void *src, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    size_t bytes = numel(a) * sizeof(float);
    float *st = stage(d, bytes);
    rn_cuda_act_to_nchw(&d->k, st, src, a);
    rn_cuda_launched(d, "act_download");
    cuda_download(dev, dst, st, bytes);
}

static void cuda_synchronize(rn_device *dev)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_CUDA_CHECK(cudaStreamSynchronize(d->copy_stream));
    rn_cuda_comm_wait(dev); /* the collectives too (nn/device_ops.inc) */
    RN_CUDA_CHECK(cudaStreamSynchronize(d->stream));
}

/* ---- events, memory statistics ---- */

typedef struct events {
    int n;
    cudaEvent_t e[];
} events;

static void cuda_events_destroy(rn_device *dev, void *ev)
{
    (void)rn_cuda(dev);
    events *es = ev;
    if (!es) return;
    for (int i = 0; i < es->n; i++)
        if (es->e[i]) RN_CUDA_CHECK(cudaEventDestroy(es->e[i]));
    free(es);
}

static void *cuda_events_create(rn_device *dev, int n)
{
    (void)rn_cuda(dev);
    events *es = calloc(1, sizeof *es + (size_t)(n > 0 ? n : 1) * sizeof(cudaEvent_t));
    if (!es) return NULL;
    for (es->n = 0; es->n < n; es->n++)
        if (cudaEventCreate(&es->e[es->n]) != cudaSuccess) {
            (void)cudaGetLastError();
            cuda_events_destroy(dev, es);
            return NULL;
        }
    return es;
}

static void cuda_event_record(rn_device *dev, void *ev, int i)
{
    rn_cuda_device *d = rn_cuda(dev);
    events *es = ev;
    RN_ASSERT(i >= 0 && i < es->n);
    RN_CUDA_CHECK(cudaEventRecord(es->e[i], d->stream));
}

static double cuda_event_elapsed_ms(rn_device *dev, void *ev, int a, int b)
{
    (void)rn_cuda(dev);
    events *es = ev;
    RN_ASSERT(a >= 0 && a < es->n && b >= 0 && b < es->n);
    float ms = 0;
    RN_CUDA_CHECK(cudaEventSynchronize(es->e[b]));
    RN_CUDA_CHECK(cudaEventElapsedTime(&ms, es->e[a], es->e[b]));
    return ms;
}

static size_t cuda_mem_peak(rn_device *dev) { return ((rn_cuda_device *)dev)->peak; }

/* ---- graphs: the compute stream captured (thread-local mode: other threads' CUDA calls, such as a
 * loader's, do not break the capture), instantiated once, launched on the stream ---- */

static int cuda_graph_begin(rn_device *dev, rn_err *err)
{
    rn_cuda_device *d = rn_cuda(dev);
    if (d->sync_each) return rn_err_set(err, "device %s: RN_CUDA_SYNC=1 waits after every op, so no graphs", d->name);
    if (!RN_CUDA_OK(cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeThreadLocal), err)) return -1;
    rn_cuda_capture_start(); /* a failing call inside is recorded, not fatal */
    return 0;
}

/* A failed capture (a call CUDA forbids inside one, or any failing call of the ops captured: the first one's
 * line in err) leaves the stream out of capture mode and no sticky error. */
static int cuda_graph_end(rn_device *dev, void **graph, rn_err *err)
{
    rn_cuda_device *d = rn_cuda(dev);
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    *graph = NULL;
    int inside = rn_cuda_capture_stop(err); /* the first failure inside, before EndCapture's own */
    int ok = RN_CUDA_OK(cudaStreamEndCapture(d->stream, &g), inside ? &(rn_err){{0}} : err) && !inside &&
             RN_CUDA_OK(cudaGraphInstantiate(&ex, g, 0), err);
    if (g) (void)cudaGraphDestroy(g);
    if (!ok) {
        (void)cudaGetLastError();
        return -1;
    }
    *graph = ex;
    rn_cuda_graphs_add(d, 1);
    return 0;
}

static void cuda_graph_launch(rn_device *dev, void *graph)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)graph, d->stream));
    rn_cuda_launched(d, "graph_launch");
}

static void cuda_graph_destroy(rn_device *dev, void *graph)
{
    rn_cuda_device *d = rn_cuda(dev);
    if (!graph) return;
    RN_CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)graph));
    rn_cuda_graphs_add(d, -1);
}

/* ---- the kernel ops (nn/device_ops.inc's KERNEL entries): each runs its launcher of cuda/kernels.h,
 * which takes the op's arguments after the device, then checks the launch ---- */

#define RN_DEVICE_KERNEL(name, params, args)                                                                           \
    static void cuda_##name params                                                                                     \
    {                                                                                                                  \
        rn_cuda_device *cd_ = rn_cuda(dev);                                                                            \
        rn_cuda_##name(&cd_->k, RN_DEVICE_ARGS_REST args);                                                             \
        rn_cuda_launched(cd_, #name);                                                                                  \
    }
#include "nn/device_ops.inc"

/* ---- create, destroy ---- */

rn_cuda_comm *rn_cuda_device_comm(rn_device *dev) { return &((rn_cuda_device *)dev)->comm; }

static void cuda_destroy(rn_device *dev)
{
    rn_cuda_device *d = (rn_cuda_device *)dev;
    (void)cudaSetDevice(d->ordinal);
    if (d->stream) (void)cudaStreamSynchronize(d->stream);
    rn_cuda_comm_destroy(dev); /* before the stream; fine without a communicator */
    rn_cuda_conv_release(d);
    for (size_t i = 0; i < d->nretired; i++) rn_cuda_free(d, d->retired[i]);
    free(d->retired);
    rn_cuda_free(d, d->stage);
    rn_cuda_free(d, d->workspace);
    rn_cuda_free(d, d->k.scratch);
    if (d->cudnn) (void)cudnnDestroy(d->cudnn);
    if (d->copied) (void)cudaEventDestroy(d->copied);
    if (d->copy_stream) (void)cudaStreamDestroy(d->copy_stream);
    if (d->stream) (void)cudaStreamDestroy(d->stream);
    free(d->allocs);
    free(d);
}

static const rn_device_ops cuda_ops = {
    .destroy = cuda_destroy,
    .supports = cuda_supports,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .act_bytes = cuda_act_bytes,
    .upload = cuda_upload,
    .download = cuda_download,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .upload_async = cuda_upload_async,
    .copy = cuda_copy,
    .zero = cuda_zero,
    .act_upload = cuda_act_upload,
    .act_download = cuda_act_download,
    .synchronize = cuda_synchronize,
    .events_create = cuda_events_create,
    .events_destroy = cuda_events_destroy,
    .event_record = cuda_event_record,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .mem_peak = cuda_mem_peak,
    .graph_begin = cuda_graph_begin,
    .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    .conv_create = rn_cuda_conv_create,
    .conv_destroy = rn_cuda_conv_destroy,
    .conv_set_weights = rn_cuda_conv_set_weights,
    .conv_forward = rn_cuda_conv_forward,
    .conv_backward_data = rn_cuda_conv_backward_data,
    .conv_backward_weights = rn_cuda_conv_backward_weights,
    .conv_set_weights_folded = rn_cuda_conv_set_weights_folded,
    .conv_forward_fused = rn_cuda_conv_forward_fused,
    .conv_impl_name = rn_cuda_conv_impl_name,
#define RN_DEVICE_KERNEL(name, params, args) .name = cuda_##name,
#include "nn/device_ops.inc"
    RN_CUDA_COMM_OPS,
};

/* The GPU count, or -1 with one line naming why there is none to use. */
static int gpu_count(rn_err *err)
{
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!drv) return rn_err_set(err, "device cuda: no NVIDIA driver (libcuda.so.1 not found: %s)", dlerror());
    dlclose(drv);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) return rn_err_set(err, "device cuda: no CUDA GPU found");
    if (e == cudaErrorInsufficientDriver)
        return rn_err_set(err, "device cuda: the NVIDIA driver is older than this build's CUDA %d.%d runtime (%s)",
                          CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, cudaGetErrorString(e));
    if (e != cudaSuccess)
        return rn_err_set(err, "device cuda: no usable GPU: cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e),
                          cudaGetErrorString(e));
    return n;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : dflt;
    return v && *v && !*end && x >= 0 ? x : dflt;
}

/* Streams, handles and the buffers made once. 0, or -1 with err. */
static int cuda_open(rn_cuda_device *d, rn_err *err)
{
    struct cudaDeviceProp p;
    if (!RN_CUDA_OK(cudaSetDevice(d->ordinal), err) || !RN_CUDA_OK(cudaGetDeviceProperties(&p, d->ordinal), err))
        return -1;
    if (p.major < 9)
        return rn_err_set(err, "device %s: %s has compute capability %d.%d; this build runs on 9.0 or newer (sm_90)",
                          d->name, p.name, p.major, p.minor);
    if (cudnnGetVersion() / 10000 != CUDNN_MAJOR)
        return rn_err_set(err, "device %s: libcudnn %zu loaded, this build needs cuDNN %d", d->name, cudnnGetVersion(),
                          CUDNN_MAJOR);
    if (!RN_CUDA_OK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), err) ||
        !RN_CUDA_OK(cudaStreamCreateWithFlags(&d->copy_stream, cudaStreamNonBlocking), err) ||
        !RN_CUDA_OK(cudaEventCreateWithFlags(&d->copied, cudaEventDisableTiming), err) ||
        !RN_CUDNN_OK(cudnnCreate(&d->cudnn), err) || !RN_CUDNN_OK(cudnnSetStream(d->cudnn, d->stream), err))
        return -1;
    rn_cuda_comm_attach(&d->comm, d->stream, d->ordinal);
    d->ws_cap = (size_t)env_long("RN_CUDA_WORKSPACE_MB", 1024) << 20;
    d->k = (rn_cuda_kctx){.stream = d->stream, .scratch_bytes = rn_cuda_kctx_scratch_bytes(),
                          .sm_count = p.multiProcessorCount};
    d->k.scratch = rn_cuda_malloc(d, d->k.scratch_bytes);
    if (!d->k.scratch) return rn_err_set(err, "device %s: out of GPU memory for the kernels' scratch", d->name);
    d->tf32 = env_long("RN_CUDA_TF32", 0) == 1;
    d->benchmark = env_long("RN_CUDA_BENCHMARK", 0) == 1;
    d->find = env_long("RN_CUDA_FIND", 0) == 1 || d->benchmark;
    if (d->benchmark)
        fprintf(stderr, "rootnet: device %s: cuDNN benchmark mode (--cudnn-benchmark): each conv's fastest measured "
                        "algorithm, deterministic or not: repeated and resumed runs may differ\n", d->name);

    d->sync_each = env_long("RN_CUDA_SYNC", 0) == 1;
    d->verbose = (int)env_long("RN_CUDA_VERBOSE", 0);
    if (d->tf32)
        fprintf(stderr, "rootnet: device %s: TF32 allowed in fp32 convolutions (RN_CUDA_TF32=1): fp32 results "
                        "differ from the fp32 reference\n", d->name);
    if (d->verbose >= 1) {
        int drv = 0, rt = 0;
        (void)cudaDriverGetVersion(&drv), (void)cudaRuntimeGetVersion(&rt);
        size_t v = cudnnGetVersion();
        fprintf(stderr, "rootnet: device %s: %s (cc %d.%d, %d SMs, %.1f GiB), driver CUDA %d.%d, runtime %d.%d, "
                        "cuDNN %zu.%zu.%zu loaded (built with %d.%d.%d), workspace up to %zu MiB%s\n",
                d->name, p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0,
                drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, v / 10000, v % 10000 / 100, v % 100,
                CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL, d->ws_cap >> 20, d->sync_each ? ", RN_CUDA_SYNC=1" : "");
    }
    return 0;
}

static int cuda_create(rn_device **out, int ordinal, int threads, rn_err *err)
{
    *out = NULL;
    int n = gpu_count(err);
    if (n < 0) return -1;
    if (ordinal >= n)
        return rn_err_set(err, "device cuda:%d: out of range: this machine has %d GPU%s (cuda:0%s%.0d)", ordinal, n,
                          n == 1 ? "" : "s", n > 1 ? " .. cuda:" : "", n > 1 ? n - 1 : 0);
    rn_cuda_device *d = calloc(1, sizeof *d);
    if (!d) return rn_err_set(err, "device cuda: out of memory");
    d->ordinal = ordinal;
    snprintf(d->name, sizeof d->name, "cuda:%d", ordinal);
    d->base = (rn_device){.ops = &cuda_ops, .name = d->name, .threads = threads > 0 ? threads : 1, .host_memory = 0};
    if (cuda_open(d, err)) {
        cuda_destroy(&d->base);
        return -1;
    }
    *out = &d->base;
    return 0;
}

/* The library's one exported symbol (src/cuda/cuda.map; everything else is hidden). */
__attribute__((visibility("default"))) const rn_device_lib rn_cuda_device_lib = {
    .abi = RN_DEVICE_LIB_ABI,
    .ops_size = sizeof(rn_device_ops),
    .create = cuda_create,
};
