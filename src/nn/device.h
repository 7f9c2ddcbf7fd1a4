/* rn_device: the compute-device interface. Every buffer and every operation of
 * a training or inference step goes through one op table, chosen by name at
 * run time; the model, trainer, optimizer and CLI call nothing else.
 *
 *   rn_device *dev;
 *   if (rn_device_create(&dev, "cpu", threads, &err)) ...;   // "cpu" (oneDNN) | "ref" (plain C) | "cuda[:N]"
 *   const rn_device_ops *op = dev->ops;
 *   rn_act_shape a = {.n = 2, .c = 64, .h = 48, .w = 32, .type = RN_ACT_F32};
 *   void *x = op->alloc(dev, op->act_bytes(dev, &a));        // activations: the device's layout
 *   float *mean = op->alloc(dev, 64 * sizeof(float));        // everything else: plain arrays
 *   op->act_upload(dev, x, host_nchw, &a);                   // plain NCHW fp32 on the host
 *   op->bn_sums(dev, sums, x, &a);                           // ... the ops below ...
 *   op->download(dev, host, mean, 64 * sizeof(float));
 *   op->free(dev, x); rn_device_destroy(dev);
 *
 * Memory. Every pointer an op takes is DEVICE memory (from alloc, or an offset
 * into it) unless its comment says "host". With dev->host_memory = 1 (cpu,
 * ref) device memory is host memory: the host may read and write it directly
 * and may pass host arrays as device pointers (zero copy). Ops are ordered
 * (as one stream): each sees the results of the ones before. A device may
 * run them asynchronously (cuda): an op may return before its work is done,
 * and only the WAITING calls -- download, act_download, synchronize and
 * event_elapsed_ms -- return after everything issued before them. The host
 * may reuse a host buffer passed to upload (or act_upload) as soon as the
 * call returns; one passed to upload_async only after the next waiting call.
 * A training step waits once: when the host reads its loss.
 *
 * Layouts. Activations and their gradients ("act", void *) are (N, C, H, W)
 * tensors described by an rn_act_shape, stored in a layout the device owns
 * (cpu: nChw16c blocked, C % 16 == 0; ref: plain NCHW) and in the element type
 * of shape.type (float, rn_bf16 under bf16-o2, IEEE half under fp16-o2); act_bytes says how many
 * bytes one takes and act_upload/act_download convert from/to plain NCHW
 * fp32. Everything else is plain and float unless said otherwise: per-channel
 * vectors (C), GAP features (N, C), the head's (N, HW), (N, 2), (N, 3)
 * arrays, weights in PyTorch's layout. Statistic sums are double.
 *
 * Precision. Statistics, the softmax, the loss, parameters, gradients and
 * Adam's moments are float (sums double) in every precision; with bf16
 * activations an op computes in fp32 on the widened inputs and rounds each
 * activation it writes once (round to nearest even). Results must not depend
 * on the thread count.
 *
 * Threads. A device object uses `threads` compute threads for its own ops and
 * never changes the process's OpenMP setting; one device's ops must not run
 * concurrently (they share scratch buffers); use one device per thread.
 *
 * Write conventions: "overwrites" (=) unless an op says "accumulates" (+=).
 */
#ifndef RN_NN_DEVICE_H
#define RN_NN_DEVICE_H

#include <stddef.h>

#include "core/bf16.h"
#include "core/status.h"

/* BatchNorm's epsilon (PyTorch's default). */
#define RN_BN_EPS 1e-5

/* The most bytes of a communicator's id (rn_device_ops.comm_id; NCCL's is 128). */
#define RN_COMM_ID_BYTES 256


typedef struct rn_device rn_device;
typedef struct rn_device_ops rn_device_ops;
typedef struct rn_conv rn_conv;

typedef enum {
    RN_COMPUTE_F32 = 0,  /* fp32 everywhere */
    RN_COMPUTE_BF16 = 1, /* fp32 storage, convs compute in bf16 */
    RN_COMPUTE_F16 = 2,  /* fp32 storage, fp16 compute (a CUDA device; cpu and ref reject it) */
} rn_compute;

typedef enum {
    RN_ALGO_DIRECT = 0,   /* the device's default implementation */
    RN_ALGO_WINOGRAD = 1, /* Winograd (3x3 stride-1 Conv2d, fp32 only); conv_create may refuse it */
    RN_ALGO_COUNT
} rn_conv_algo;

typedef struct rn_conv_shape {
    int n;              /* batch */
    int ic, ih, iw;     /* input channels and size */
    int oc, oh, ow;     /* output channels and size */
    int kh, kw, sh, sw, ph, pw;
    int transposed;     /* 1: ConvTranspose2d (output_padding 0), 0: Conv2d */
    int src_plain;      /* 1: src is plain NCHW fp32 in every layout and precision (the network
                           input); a Conv2d that never needs diff_src */
    int no_bwd_data;    /* 1: backward-data is never called */
    int forward_only;   /* 1: inference; neither backward call is made */
    rn_compute compute;
    rn_act_type act;    /* type of dst, diff_src, diff_dst and (unless src_plain) src:
                           RN_ACT_F32, or RN_ACT_BF16 (bf16-o2; needs RN_COMPUTE_BF16) */
    rn_conv_algo algo;  /* RN_ALGO_DIRECT unless autotuned (nn/autotune.h) */
    int epilogue;       /* 0, or a fused inference conv (needs forward_only): RN_EPI_BIAS, optionally
                           | RN_EPI_SUM (Conv2d only) | RN_EPI_RELU; see conv_forward_fused */
} rn_conv_shape;

/* The epilogue of a fused inference conv (rn_conv_shape.epilogue). */
enum { RN_EPI_BIAS = 1, RN_EPI_SUM = 2, RN_EPI_RELU = 4 };

/* An activation tensor: (n, c, h, w) of element type `type`, in the device's layout. */
typedef struct rn_act_shape {
    int n, c, h, w;
    rn_act_type type;
} rn_act_shape;

/* Adam's hyper-parameters for one update (PyTorch's torch.optim.Adam, no
 * weight decay, no amsgrad); step is this update's 1-based index. finite:
 * NULL, or device memory (one int) written by unscale_check: when it holds 0
 * the update writes nothing (an overflow skips the step without a wait). */
typedef struct rn_adam_args {
    double lr, beta1, beta2, eps;
    long step;
    const int *finite;
} rn_adam_args;

typedef enum { RN_RED_F64 = 0, RN_RED_F32 = 1 } rn_red_type;

/* The reduce hook: sums buf[0 .. n) (device memory of type t) in place over all
 * replicas: MPI today (on host memory), NCCL later. Returns 0, or -1 with err.
 * The model calls it for SyncBN's sums, the distribution for gradient buckets.
 * replicas: how many models the sum runs over (each with the same batch size;
 * 0 counts as 1), so that the model knows SyncBN's count without reading it. */
typedef struct rn_device_reduce {
    int (*fn)(void *ctx, rn_device *dev, void *buf, size_t n, rn_red_type t, rn_err *err);
    void *ctx;
    int replicas;
} rn_device_reduce;

/* A convolution or transposed convolution with everything it needs built once
 * (ops->conv_create). A device extends it: its own struct starts with an rn_conv. */
struct rn_conv {
    rn_conv_shape s;  /* as created */
    rn_device *dev;   /* the device that made it */
    float grad_scale; /* the factor the diff_dst of backward_weights carries (the loss scale; 1 after
                         create): a device whose weight gradient passes through a narrow type (fp16)
                         forms it unscaled there (nn/kernel_math.h: rn_km_wgrad_alpha) */
};

/* A device extends this struct the same way (its own starts with an rn_device). */
struct rn_device {
    const rn_device_ops *ops;
    const char *name;  /* "cpu", "ref", "cuda:0" (the device's own string) */
    int threads;       /* compute threads of this device's ops (>= 1) */
    int host_memory;   /* 1: device memory is host memory (see the top) */
    int refs;          /* holders beyond the creator: rn_device_retain adds one, rn_device_destroy drops one */
};

struct rn_device_ops {
    void (*destroy)(rn_device *dev); /* frees the device; every conv and buffer must be freed first */

    /* ---- capabilities ---- */
    /* 1 if convs can compute in `compute` with activations stored as `act` (a precision
     * policy needs this pair; nn/precision.h asks); 0 otherwise. cpu: F32/F32,
     * BF16/F32, BF16/BF16; ref: F32/F32 at least. */
    int (*supports)(rn_device *dev, rn_compute compute, rn_act_type act);

    /* ---- buffers ---- */
    /* bytes of device memory, 64-byte aligned, contents undefined; NULL when out of memory. */
    void *(*alloc)(rn_device *dev, size_t bytes);
    void (*free)(rn_device *dev, void *buf); /* NULL is fine */
    /* Bytes of one activation of shape a in this device's layout (with any padding). */
    size_t (*act_bytes)(rn_device *dev, const rn_act_shape *a);
    /* Host to device; src may be reused when it returns (the copy itself may finish later). */
    void (*upload)(rn_device *dev, void *dst, const void *src /* host */, size_t bytes);
    void (*download)(rn_device *dev, void *dst /* host */, const void *src, size_t bytes); /* waits */
    /* Optional (NULL: use malloc/free and upload). Pinned host memory, 64-byte aligned, NULL when
     * out of memory; upload_async copies from it on the device's copy engine, overlapping the ops
     * issued before it; ops issued after it see the data; src must stay unchanged until the next
     * waiting call. */
    void *(*host_alloc)(rn_device *dev, size_t bytes);
    void (*host_free)(rn_device *dev, void *buf); /* NULL is fine */
    void (*upload_async)(rn_device *dev, void *dst, const void *src /* host, from host_alloc */, size_t bytes);
    void (*copy)(rn_device *dev, void *dst, const void *src, size_t bytes); /* device to device, no overlap */
    void (*zero)(rn_device *dev, void *buf, size_t bytes);                 /* all bits 0 (zero-grad) */
    void (*fill)(rn_device *dev, float *buf, float value, size_t n);       /* n floats = value */
    /* Activation from/to plain NCHW fp32 on the host (tests, debugging, the network input
     * when it is not src_plain); bf16 rounds to nearest even on upload, widens on download. */
    void (*act_upload)(rn_device *dev, void *dst, const float *src /* host (N, C, H, W) */, const rn_act_shape *a);
    void (*act_download)(rn_device *dev, float *dst /* host (N, C, H, W) */, const void *src, const rn_act_shape *a);
    void (*synchronize)(rn_device *dev); /* waits for every op issued */
    /* Optional timing and memory statistics (NULL on devices whose ops finish before they return:
     * the profiler then reads the host clock). events_create makes n timestamps (NULL on failure);
     * event_record(i) marks slot i after every op issued so far; event_elapsed_ms waits for slot b
     * and returns the milliseconds from a to b. mem_peak: the most bytes of alloc held at once. */
    void *(*events_create)(rn_device *dev, int n);
    void (*events_destroy)(rn_device *dev, void *ev); /* NULL is fine */
    void (*event_record)(rn_device *dev, void *ev, int i);
    double (*event_elapsed_ms)(rn_device *dev, void *ev, int a, int b);
    size_t (*mem_peak)(rn_device *dev);

    /* ---- collectives (optional; NULL: src/dist stages buffers through the host and MPI) ---- */
    /* A communicator over `size` replicas, one device each: rank 0 calls comm_id to make the
     * communicator's id (at most RN_COMM_ID_BYTES; returns its length, 0 with err on failure),
     * the caller sends those bytes to every rank (MPI_Bcast), then every rank calls comm_init. */
    size_t (*comm_id)(rn_device *dev, void *id /* host (RN_COMM_ID_BYTES) */, rn_err *err);
    int (*comm_init)(rn_device *dev, const void *id /* host */, size_t id_bytes, int rank, int size, rn_err *err);
    void (*comm_destroy)(rn_device *dev);
    /* In place over every replica, ordered after the ops issued before it and before those issued
     * after it, without waiting: buf[0 .. n) = the sum (RN_RED_F64/F32) over replicas, times
     * `scale` (1: the sum; 1/size: the mean) for float buffers. Errors are kept and returned by
     * comm_check (waits), so that a step can fail with one line. */
    void (*allreduce)(rn_device *dev, void *buf, size_t n, rn_red_type t, float scale);
    void (*broadcast)(rn_device *dev, void *buf, size_t bytes, int root);
    int (*comm_check)(rn_device *dev, rn_err *err);


    /* ---- convolutions (no bias) ---- */
    /* Builds everything s needs (primitives, reordered weights, scratch); the calls below
     * allocate nothing. Fails with one line for a shape or precision the device cannot run
     * (after rn_conv_shape_check), or an algorithm it lacks. */
    int (*conv_create)(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err);
    void (*conv_destroy)(rn_device *dev, rn_conv *c); /* NULL is fine */
    /* w: (OC, IC, KH, KW) for a Conv2d, (IC, OC, KH, KW) for a ConvTranspose2d, PyTorch's
     * layout. Takes the weights into the conv's own format; call after every weight change. */
    void (*conv_set_weights)(rn_device *dev, rn_conv *c, const float *w);
    /* dst = conv(src). dst: act (N, OC, OH, OW); src: act (N, IC, IH, IW), plain NCHW fp32 if src_plain. */
    void (*conv_forward)(rn_device *dev, rn_conv *c, void *dst, const void *src);
    /* diff_src = dL/dsrc (overwrites) from diff_dst; not for src_plain, no_bwd_data, forward_only. */
    void (*conv_backward_data)(rn_device *dev, rn_conv *c, void *diff_src, const void *diff_dst);
    /* diff_w += dL/dw (PyTorch layout, fp32); src as in forward. Not for forward_only.
     * src must be unchanged since forward, and diff_dst unchanged until the matching
     * backward_data (a device may reuse what it staged from them). */
    void (*conv_backward_weights)(rn_device *dev, rn_conv *c, float *diff_w, const void *src, const void *diff_dst);
    /* ---- fused inference convolutions (s.epilogue != 0; BN folded, see nn/model.h) ---- */
    /* Takes w * scale[oc] (each output channel's weights times its scale, rounded to float;
     * w as for conv_set_weights, scale NULL: 1) and bias (OC) into the conv's own format. */
    void (*conv_set_weights_folded)(rn_device *dev, rn_conv *c, const float *w, const float *scale,
                                    const float *bias);
    /* dst = conv(src) + bias, then + res (RN_EPI_SUM; else res must be NULL), then ReLU
     * (RN_EPI_RELU), each output rounded once to the activation type. res may equal dst (in
     * place: the residual is read, then overwritten). dst, res: act (N, OC, OH, OW); src as in
     * conv_forward. conv_forward is not for these convs. */
    void (*conv_forward_fused)(rn_device *dev, rn_conv *c, void *dst, const void *src, const void *res);
    /* The implementation chosen per direction (0 fwd, 1 bwd-data, 2 bwd-weights), e.g.
     * "jit:avx512_core", for logs and the profiler; a static string. */
    const char *(*conv_impl_name)(rn_device *dev, const rn_conv *c, int direction);

    /* ---- BatchNorm (training statistics over N*H*W per channel; count = values per channel) ---- */
    /* sums[c] = sum x, sums[C + c] = sum x^2 (c < C), sums[2C] = N*H*W. sums: double (2C + 1). */
    void (*bn_sums)(rn_device *dev, double *sums, const void *x, const rn_act_shape *a);
    /* mean = sums[c] / count, var = max(sums[C + c] / count - mean^2, 0) (biased). */
    void (*bn_stats)(rn_device *dev, float *mean /* (C) */, float *var /* (C) */, const double *sums /* (2C) */,
                     double count, int C);
    /* running = (1 - momentum) running + momentum batch; rvar takes the unbiased batch variance
     * var * count / (count - 1). */
    void (*bn_update_running)(rn_device *dev, float *rmean /* (C) */, float *rvar /* (C) */, const float *mean,
                              const float *var, double momentum, long count, int C);
    /* scale = gamma / sqrt(var + eps), shift = beta - mean * scale: BN as y = x * scale + shift. */
    void (*bn_fold)(rn_device *dev, float *scale /* (C) */, float *shift /* (C) */, const float *mean,
                    const float *var, const float *gamma, const float *beta, int C);
    /* y = x * scale + shift per channel, then ReLU if relu. y may equal x. Train and eval
     * (eval: fold the running statistics). */
    void (*bn_apply)(rn_device *dev, void *y, const void *x, const float *scale, const float *shift, int relu,
                     const rn_act_shape *a);
    /* y = ReLU(x * scale + shift + r): a basic/bottleneck block's end. */
    void (*bn_add_relu)(rn_device *dev, void *y, const void *x, const float *scale, const float *shift,
                        const void *r, const rn_act_shape *a);
    /* y = ReLU(x1 * s1 + h1 + x2 * s2 + h2): a block's end with its downsample branch. */
    void (*bn2_add_relu)(rn_device *dev, void *y, const void *x1, const float *s1, const float *h1, const void *x2,
                         const float *s2, const float *h2, const rn_act_shape *a);
    /* Backward of a training BN over x (its input) with an optional ReLU after it
     * (relu_out != NULL: dz = dy * (relu_out > 0), else dz = dy), in three steps so that
     * SyncBN can reduce the sums between the second and the third:
     * sums[c] = sum dz, sums[C + c] = sum dz * (x - mean). sums: double (2C). */
    void (*bn_backward_sums)(rn_device *dev, double *sums, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const rn_act_shape *a);
    /* dgamma += sums[C + c] / sqrt(var + eps), dbeta += sums[c] (accumulates; local sums). */
    void (*bn_backward_params)(rn_device *dev, float *dgamma /* (C) */, float *dbeta /* (C) */,
                               const double *sums, const float *var, int C);
    /* dx = gamma invstd (dz - sums[c] / count - (x - mean) invstd^2 sums[C + c] / count),
     * invstd = 1 / sqrt(var + eps); overwrites; dx may equal dy. */
    void (*bn_backward_data)(rn_device *dev, void *dx, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const float *var, const float *gamma, const double *sums,
                             double count, const rn_act_shape *a);

    /* ---- elementwise, pooling ---- */
    /* d *= (y > 0): ReLU backward from the ReLU's output y. */
    void (*relu_backward)(rn_device *dev, void *d, const void *y, const rn_act_shape *a);
    /* y += x (the residual branch's gradient). */
    void (*add)(rn_device *dev, void *y, const void *x, const rn_act_shape *a);
    /* 3x3, stride 2, padding 1 max-pool of x (shape a) into y (N, C, oh, ow); the first
     * maximum in scan order wins (PyTorch). */
    void (*maxpool_forward)(rn_device *dev, void *y, const void *x, const rn_act_shape *a, int oh, int ow);
    /* dx = dy routed to each window's first maximum (overwrites); x, a as in forward. */
    void (*maxpool_backward)(rn_device *dev, void *dx, const void *dy, const void *x, const rn_act_shape *a, int oh,
                             int ow);
    /* out (N, C) float = mean of x over H*W. */
    void (*gap_forward)(rn_device *dev, float *out, const void *x, const rn_act_shape *a);
    /* dx += dout / (H*W) broadcast over H*W (accumulates: dx already holds the head's gradient). */
    void (*gap_backward)(rn_device *dev, void *dx, const float *dout /* (N, C) */, const rn_act_shape *a);

    /* ---- the RootNet head ---- */
    /* xy: logits = 1x1 conv of a (C -> 1) with weight w (C) and bias b (1); prob = softmax
     * over all H*W positions; coord[n] = (sum p * col, sum p * row) on the H x W grid.
     * coord (N, 2), prob (N, H*W). */
    void (*xy_forward)(rn_device *dev, float *coord, float *prob, const void *a_in, const float *w, const float *b,
                       const rn_act_shape *a);
    /* Backward of xy_forward from dcoord (N, 2): da overwritten, dw (C) and db (1) accumulated;
     * prob: in the softmax, out the logits' gradient (overwritten). */
    void (*xy_backward)(rn_device *dev, void *da, float *dw, float *db, const float *dcoord, float *prob,
                        const void *a_in, const float *w, const rn_act_shape *a);
    /* gamma[n] = w . feat[n] + b[0]; depth[n] = gamma[n] * k[n]. feat (N, C), k, gamma, depth (N). */
    void (*depth_forward)(rn_device *dev, float *depth, float *gamma, const float *feat, const float *w,
                          const float *b, const float *k, int N, int C);
    /* dfeat (N, C) overwritten, dw (C) and db (1) accumulated, from ddepth (N). */
    void (*depth_backward)(rn_device *dev, float *dfeat, float *dw, float *db, const float *ddepth, const float *feat,
                           const float *w, const float *k, int N, int C);
    /* coord (N, 3) = (xy[n, 0], xy[n, 1], depth[n]). */
    void (*coords)(rn_device *dev, float *coord, const float *xy /* (N, 2) */, const float *depth /* (N) */, int N);
    /* The masked L1 loss of RootNet: loss[0] (double) = mean over n of
     * (|x - tx| v + |y - ty| v + |z - tz| v d) / 3, v = vis[n], d = have_depth[n], in double;
     * unless dxy is NULL also its gradient, split for the heads and times scale (the loss scale):
     * g = dL/dcoord in float (sign(x - tx) v / (3N), sign(y - ty) v / (3N), sign(z - tz) v d / (3N),
     * sign(0) = 0), then dxy[n] = (g0 * scale, g1 * scale), ddepth[n] = g2 * scale (float products).
     * coord, target (N, 3); vis, have_depth (N); dxy (N, 2); ddepth (N). */
    void (*loss)(rn_device *dev, double *loss, float *dxy, float *ddepth, const float *coord, const float *target,
                 const float *vis, const float *have_depth, float scale, int N);

    /* ---- optimizer (flat buffers of n floats) ---- */
    /* One Adam update, exactly PyTorch's single-tensor Adam with its scalars rounded to float:
     * m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
     * param += -(lr / (1 - b1^step)) m / (sqrt(v) / sqrt(1 - b2^step) + eps). */
    void (*adam)(rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n,
                 const rn_adam_args *h);
    /* grad *= inv_scale (not even read-modify-written when inv_scale == 1); *finite (device
     * memory, one int) = 1 if every element is finite, 0 if any is Inf or NaN. One pass; no wait:
     * the flag feeds adam (rn_adam_args.finite) and is read with the loss. */
    void (*unscale_check)(rn_device *dev, float *grad, size_t n, float inv_scale, int *finite);
};

/* Opens device `name` with `threads` compute threads (0: OpenMP's default,
 * read once here). Names: "cpu" and "ref", where built in; "cuda" or "cuda:N"
 * (GPU N, default 0) where the CUDA device library was built: it is loaded at
 * run time (librootnet-cuda.so beside the binary or library), so a machine
 * without a GPU, driver or CUDA libraries fails here with one line naming the
 * reason. Any other name, or a device not built in, fails with one line
 * ("device 'x' is not built in").
 * With ref, also "ref-guard" (tests only, not in rn_device_names): ref's
 * numbers behind memory that is not host memory to its users, every buffer
 * unreadable between ops, so any host access through a device pointer
 * faults (src/ref/ref_guard.c).
 * NULL: rn_device_default(). */
int rn_device_create(rn_device **out, const char *name, int threads, rn_err *err);
/* The default device: "cpu" when built in, else "ref". */
const char *rn_device_default(void);
/* Drops one hold on dev and frees it when none is left (the creator's, plus one per
 * rn_device_retain): a model and the parameters whose arenas live on the device each hold it,
 * so either may be freed first. NULL is fine. */
void rn_device_destroy(rn_device *dev);
void rn_device_retain(rn_device *dev);
/* The names built into this binary, e.g. "cpu ref" (for usage lines). */
const char *rn_device_names(void);

/* Backend entry points, for the registry (src/nn/device.c) only. */
int rn_cpu_device_create(rn_device **out, int threads, rn_err *err);
int rn_ref_device_create(rn_device **out, int threads, rn_err *err);
int rn_ref_guard_device_create(rn_device **out, int threads, rn_err *err);

/* Shorthands for the conv ops of c's device (c->dev); rn_conv_create fills c->s and c->dev. */
static inline int rn_conv_create(rn_conv **out, rn_device *dev, const rn_conv_shape *s, rn_err *err)
{
    if (dev->ops->conv_create(dev, out, s, err)) return -1;
    (*out)->s = *s;
    (*out)->dev = dev;
    (*out)->grad_scale = 1.0f;
    return 0;
}
static inline void rn_conv_destroy(rn_conv *c)
{
    if (c) c->dev->ops->conv_destroy(c->dev, c);
}
static inline void rn_conv_set_weights(rn_conv *c, const float *w) { c->dev->ops->conv_set_weights(c->dev, c, w); }
static inline void rn_conv_forward(rn_conv *c, void *dst, const void *src)
{
    c->dev->ops->conv_forward(c->dev, c, dst, src);
}
static inline void rn_conv_backward_data(rn_conv *c, void *diff_src, const void *diff_dst)
{
    c->dev->ops->conv_backward_data(c->dev, c, diff_src, diff_dst);
}
static inline void rn_conv_backward_weights(rn_conv *c, float *diff_w, const void *src, const void *diff_dst)
{
    c->dev->ops->conv_backward_weights(c->dev, c, diff_w, src, diff_dst);
}
static inline const char *rn_conv_impl_name(const rn_conv *c, int direction)
{
    return c->dev->ops->conv_impl_name(c->dev, c, direction);
}

/* The output size of one spatial dim: Conv2d (in + 2 pad - k) / stride + 1,
 * ConvTranspose2d (in - 1) stride - 2 pad + k (output_padding 0). */
int rn_conv_out_dim(int in, int k, int stride, int pad, int transposed);
/* 0 if s is a shape RootNet's devices take: sizes positive, channels multiples
 * of 16 (ic exempt with src_plain, which needs a Conv2d), oh/ow as
 * rn_conv_out_dim, tensors under 2^34 elements; else -1 with one line. */
int rn_conv_shape_check(const rn_conv_shape *s, rn_err *err);

#endif
