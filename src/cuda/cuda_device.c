/* The "cuda" device (nn/device.h) on one NVIDIA GPU: activations NHWC (fp32,
 * bf16 or fp16), convolutions through cuDNN (cuda_conv.c), every other op a
 * kernel of cuda/kernels.h, all on one compute stream; upload_async on a copy
 * stream with an event the compute stream waits on. Only download,
 * act_download, synchronize and event_elapsed_ms wait.
 *
 * Loaded at run time as librootnet-cuda.so (nn/device_lib.h): the registry
 * calls create() through rn_cuda_device_lib, the only exported symbol.
 *
 * Environment, read once at create: RN_CUDA_TF32=1 lets fp32 convs use TF32
 * (said on stderr; off by default), RN_CUDA_SYNC=1 waits after every op (the
 * first failing op is named), RN_CUDA_WORKSPACE_MB (default 1024) caps cuDNN's
 * workspace (grown to what the chosen algorithms need), RN_CUDA_VERBOSE=1 prints the GPU and
 * the library versions (2: also each conv's cuDNN candidates and choice); RN_CUDA_FUSED=0 (read
 * by conv_create) keeps inference convs off cuDNN's fused conv + bias + ReLU.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "nn/device_lib.h"

/* ---- checks ---- */

void rn_cuda_check_at(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "rootnet: CUDA error at %s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
            cudaGetErrorString(e));
    abort();
}

void rn_cudnn_check_at(cudnnStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUDNN_STATUS_SUCCESS) return;
    fprintf(stderr, "rootnet: cuDNN error at %s:%d: %s: %s\n", file, line, call, cudnnGetErrorString(s));
    abort();
}

int rn_cuda_ok_at(cudaError_t e, const char *call, const char *file, int line, rn_err *err)
{
    if (e == cudaSuccess) return 1;
    rn_err_set(err, "device cuda: %s failed at %s:%d: %s (%s)", call, file, line, cudaGetErrorName(e),
               cudaGetErrorString(e));
    return 0;
}

int rn_cudnn_ok_at(cudnnStatus_t s, const char *call, const char *file, int line, rn_err *err)
{
    if (s == CUDNN_STATUS_SUCCESS) return 1;
    rn_err_set(err, "device cuda: %s failed at %s:%d: %s", call, file, line, cudnnGetErrorString(s));
    return 0;
}

void rn_cuda_launched_at(rn_cuda_device *d, const char *op, const char *file, int line)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && d->sync_each) e = cudaStreamSynchronize(d->stream);
    if (e == cudaSuccess) return;
    fprintf(stderr, "rootnet: CUDA error in op %s at %s:%d: %s (%s)\n", op, file, line, cudaGetErrorName(e),
            cudaGetErrorString(e));
    abort();
}

rn_cuda_device *rn_cuda(rn_device *dev)
{
    rn_cuda_device *d = (rn_cuda_device *)dev;
    RN_CUDA_CHECK(cudaSetDevice(d->ordinal));
    return d;
}

/* ---- memory ---- */

void *rn_cuda_malloc(rn_cuda_device *d, size_t bytes)
{
    void *p = NULL;
    bytes = (bytes + 255) / 256 * 256 + 256 * !bytes;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* out of memory is the caller's to report, not a sticky error */
        return NULL;
    }
    if (d->nallocs == d->cap_allocs) {
        d->cap_allocs = d->cap_allocs ? 2 * d->cap_allocs : 256;
        rn_cuda_alloc *a = realloc(d->allocs, d->cap_allocs * sizeof *a);
        RN_ASSERT(a);
        d->allocs = a;
    }
    d->allocs[d->nallocs++] = (rn_cuda_alloc){p, bytes};
    d->held += bytes;
    if (d->held > d->peak) d->peak = d->held;
    return p;
}

void rn_cuda_free(rn_cuda_device *d, void *p)
{
    if (!p) return;
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].p == p) {
            d->held -= d->allocs[i].bytes;
            d->allocs[i] = d->allocs[--d->nallocs];
            RN_CUDA_CHECK(cudaFree(p));
            return;
        }
    RN_ASSERT(!"rn_cuda_free: not a buffer of this device");
}

/* ---- capabilities, buffers ---- */

/* fp32 activations with fp32, bf16 or fp16 convs; bf16/fp16 activations with convs of their own type. */
static int cuda_supports(rn_device *dev, rn_compute compute, rn_act_type act)
{
    (void)dev;
    return act == RN_ACT_F32 || (compute == RN_COMPUTE_BF16 && act == RN_ACT_BF16) ||
           (compute == RN_COMPUTE_F16 && act == RN_ACT_F16);
}

static void *cuda_alloc(rn_device *dev, size_t bytes) { return rn_cuda_malloc(rn_cuda(dev), bytes); }

static void cuda_free(rn_device *dev, void *buf) { rn_cuda_free(rn_cuda(dev), buf); }

static size_t numel(const rn_act_shape *a) { return (size_t)a->n * a->c * a->h * a->w; }

static size_t cuda_act_bytes(rn_device *dev, const rn_act_shape *a)
{
    (void)dev;
    return numel(a) * rn_act_size(a->type);
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

static void cuda_fill(rn_device *dev, float *buf, float value, size_t n)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_fill(&d->k, buf, value, n);
    rn_cuda_launched(d, "fill");
}

/* The staging buffer of at least bytes (growing it waits: cudaFree synchronizes). */
static float *stage(rn_cuda_device *d, size_t bytes)
{
    if (d->stage_bytes >= bytes) return d->stage;
    rn_cuda_free(d, d->stage);
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

/* ---- BatchNorm ---- */

static void bn_sums(rn_device *dev, double *sums, const void *x, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_sums(&d->k, sums, x, a);
    rn_cuda_launched(d, "bn_sums");
}

static void bn_stats(rn_device *dev, float *mean, float *var, const double *sums, double count, int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_stats(&d->k, mean, var, sums, count, C);
    rn_cuda_launched(d, "bn_stats");
}

static void bn_update_running(rn_device *dev, float *rmean, float *rvar, const float *mean, const float *var,
                              double momentum, long count, int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_update_running(&d->k, rmean, rvar, mean, var, momentum, count, C);
    rn_cuda_launched(d, "bn_update_running");
}

static void bn_fold(rn_device *dev, float *scale, float *shift, const float *mean, const float *var,
                    const float *gamma, const float *beta, int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_fold(&d->k, scale, shift, mean, var, gamma, beta, C);
    rn_cuda_launched(d, "bn_fold");
}

static void bn_apply(rn_device *dev, void *y, const void *x, const float *scale, const float *shift, int relu,
                     const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_apply(&d->k, y, x, scale, shift, relu, a);
    rn_cuda_launched(d, "bn_apply");
}

static void bn_add_relu(rn_device *dev, void *y, const void *x, const float *scale, const float *shift,
                        const void *r, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_add_relu(&d->k, y, x, scale, shift, r, a);
    rn_cuda_launched(d, "bn_add_relu");
}

static void bn2_add_relu(rn_device *dev, void *y, const void *x1, const float *s1, const float *h1, const void *x2,
                         const float *s2, const float *h2, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn2_add_relu(&d->k, y, x1, s1, h1, x2, s2, h2, a);
    rn_cuda_launched(d, "bn2_add_relu");
}

static void bn_backward_sums(rn_device *dev, double *sums, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_backward_sums(&d->k, sums, dy, relu_out, x, mean, a);
    rn_cuda_launched(d, "bn_backward_sums");
}

static void bn_backward_params(rn_device *dev, float *dgamma, float *dbeta, const double *sums, const float *var,
                               int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_backward_params(&d->k, dgamma, dbeta, sums, var, C);
    rn_cuda_launched(d, "bn_backward_params");
}

static void bn_backward_data(rn_device *dev, void *dx, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const float *var, const float *gamma, const double *sums,
                             double count, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_bn_backward_data(&d->k, dx, dy, relu_out, x, mean, var, gamma, sums, count, a);
    rn_cuda_launched(d, "bn_backward_data");
}

/* ---- elementwise, pooling ---- */

static void relu_backward(rn_device *dev, void *dd, const void *y, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_relu_backward(&d->k, dd, y, a);
    rn_cuda_launched(d, "relu_backward");
}

static void add(rn_device *dev, void *y, const void *x, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_add(&d->k, y, x, a);
    rn_cuda_launched(d, "add");
}

static void maxpool_forward(rn_device *dev, void *y, const void *x, const rn_act_shape *a, int oh, int ow)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_maxpool_forward(&d->k, y, x, a, oh, ow);
    rn_cuda_launched(d, "maxpool_forward");
}

static void maxpool_backward(rn_device *dev, void *dx, const void *dy, const void *x, const rn_act_shape *a, int oh,
                             int ow)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_maxpool_backward(&d->k, dx, dy, x, a, oh, ow);
    rn_cuda_launched(d, "maxpool_backward");
}

static void gap_forward(rn_device *dev, float *out, const void *x, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_gap_forward(&d->k, out, x, a);
    rn_cuda_launched(d, "gap_forward");
}

static void gap_backward(rn_device *dev, void *dx, const float *dout, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_gap_backward(&d->k, dx, dout, a);
    rn_cuda_launched(d, "gap_backward");
}

/* ---- the RootNet head ---- */

static void xy_forward(rn_device *dev, float *coord, float *prob, const void *a_in, const float *w, const float *b,
                       const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_xy_forward(&d->k, coord, prob, a_in, w, b, a);
    rn_cuda_launched(d, "xy_forward");
}

static void xy_backward(rn_device *dev, void *da, float *dw, float *db, const float *dcoord, float *prob,
                        const void *a_in, const float *w, const rn_act_shape *a)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_xy_backward(&d->k, da, dw, db, dcoord, prob, a_in, w, a);
    rn_cuda_launched(d, "xy_backward");
}

static void depth_forward(rn_device *dev, float *depth, float *gamma, const float *feat, const float *w,
                          const float *b, const float *k, int N, int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_depth_forward(&d->k, depth, gamma, feat, w, b, k, N, C);
    rn_cuda_launched(d, "depth_forward");
}

static void depth_backward(rn_device *dev, float *dfeat, float *dw, float *db, const float *ddepth, const float *feat,
                           const float *w, const float *k, int N, int C)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_depth_backward(&d->k, dfeat, dw, db, ddepth, feat, w, k, N, C);
    rn_cuda_launched(d, "depth_backward");
}

static void coords(rn_device *dev, float *coord, const float *xy, const float *depth, int N)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_coords(&d->k, coord, xy, depth, N);
    rn_cuda_launched(d, "coords");
}

static void loss(rn_device *dev, double *out, float *dxy, float *ddepth, const float *coord, const float *target,
                 const float *vis, const float *have_depth, float scale, int N)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_loss(&d->k, out, dxy, ddepth, coord, target, vis, have_depth, scale, N);
    rn_cuda_launched(d, "loss");
}

/* ---- optimizer ---- */

static void adam(rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n, const rn_adam_args *h)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_adam(&d->k, param, grad, m, v, n, h);
    rn_cuda_launched(d, "adam");
}

static void unscale_check(rn_device *dev, float *grad, size_t n, float inv_scale, int *finite)
{
    rn_cuda_device *d = rn_cuda(dev);
    rn_cuda_unscale_check(&d->k, grad, n, inv_scale, finite);
    rn_cuda_launched(d, "unscale_check");
}

/* ---- create, destroy ---- */

rn_cuda_comm *rn_cuda_device_comm(rn_device *dev) { return &((rn_cuda_device *)dev)->comm; }

static void cuda_destroy(rn_device *dev)
{
    rn_cuda_device *d = (rn_cuda_device *)dev;
    (void)cudaSetDevice(d->ordinal);
    if (d->stream) (void)cudaStreamSynchronize(d->stream);
    rn_cuda_comm_destroy(dev); /* before the stream; fine without a communicator */
    rn_cuda_conv_release(d);
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
    .fill = cuda_fill,
    .act_upload = cuda_act_upload,
    .act_download = cuda_act_download,
    .synchronize = cuda_synchronize,
    .events_create = cuda_events_create,
    .events_destroy = cuda_events_destroy,
    .event_record = cuda_event_record,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .mem_peak = cuda_mem_peak,
    .conv_create = rn_cuda_conv_create,
    .conv_destroy = rn_cuda_conv_destroy,
    .conv_set_weights = rn_cuda_conv_set_weights,
    .conv_forward = rn_cuda_conv_forward,
    .conv_backward_data = rn_cuda_conv_backward_data,
    .conv_backward_weights = rn_cuda_conv_backward_weights,
    .conv_set_weights_folded = rn_cuda_conv_set_weights_folded,
    .conv_forward_fused = rn_cuda_conv_forward_fused,
    .conv_impl_name = rn_cuda_conv_impl_name,
    .bn_sums = bn_sums,
    .bn_stats = bn_stats,
    .bn_update_running = bn_update_running,
    .bn_fold = bn_fold,
    .bn_apply = bn_apply,
    .bn_add_relu = bn_add_relu,
    .bn2_add_relu = bn2_add_relu,
    .bn_backward_sums = bn_backward_sums,
    .bn_backward_params = bn_backward_params,
    .bn_backward_data = bn_backward_data,
    .relu_backward = relu_backward,
    .add = add,
    .maxpool_forward = maxpool_forward,
    .maxpool_backward = maxpool_backward,
    .gap_forward = gap_forward,
    .gap_backward = gap_backward,
    .xy_forward = xy_forward,
    .xy_backward = xy_backward,
    .depth_forward = depth_forward,
    .depth_backward = depth_backward,
    .coords = coords,
    .loss = loss,
    .adam = adam,
    .unscale_check = unscale_check,
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
    d->find = env_long("RN_CUDA_FIND", 0) == 1;

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
