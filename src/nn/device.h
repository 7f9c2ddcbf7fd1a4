/* rn_device: the compute-device interface. Every buffer and every operation of
 * a training or inference step goes through one op table, chosen by name at
 * run time; the model, trainer, optimizer and CLI call nothing else.
 *
 *   rn_device *dev;
 *   if (rn_device_create(&dev, "cpu", threads, &err)) ...;   // "cpu" (oneDNN) | "ref" (plain C) | "cuda[:N]"
 *   const rn_device_ops *op = dev->ops;
 *   rn_act_shape a = {.n = 2, .c = 64, .h = 48, .w = 32, .type = RN_NUM_F32};
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
 *
 * The ops, each with its contract, are one list: nn/device_ops.inc, which also
 * says which ops wait. Adding an op there adds it to the table below, to the
 * op names (rn_device_op_name), to the ref-guard device and, for a kernel op,
 * to the CUDA device's table (its launcher in cuda/kernels.h is still to write).
 */
#ifndef RN_NN_DEVICE_H
#define RN_NN_DEVICE_H

#include <stddef.h>

#include "core/bf16.h"
#include "core/numtype.h"
#include "core/status.h"

/* BatchNorm's epsilon (PyTorch's default). */
#define RN_BN_EPS 1e-5

/* The most bytes of a communicator's id (rn_device_ops.comm_id; NCCL's is 128). */
#define RN_COMM_ID_BYTES 256


typedef struct rn_device rn_device;
typedef struct rn_device_ops rn_device_ops;
typedef struct rn_conv rn_conv;

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
    rn_numtype compute; /* the math: RN_NUM_F32, RN_NUM_BF16 (inputs rounded to bf16), RN_NUM_F16 (a CUDA
                           device; cpu and ref reject it) or RN_NUM_I8 (a fused inference conv on a device
                           whose supports says so: cpu); storage stays as act says */
    rn_numtype act;     /* type of dst, diff_src, diff_dst and (unless src_plain) src:
                           RN_NUM_F32, or RN_NUM_BF16 (bf16-o2; needs compute RN_NUM_BF16) */
    rn_conv_algo algo;  /* RN_ALGO_DIRECT unless autotuned (nn/autotune.h) */
    int epilogue;       /* 0, or a fused inference conv (needs forward_only): RN_EPI_BIAS, optionally
                           | RN_EPI_SUM (Conv2d only) | RN_EPI_RELU; see conv_forward_fused */
    float in_scale;     /* RN_NUM_I8 only: src (>= 0, a ReLU's output; never src_plain) is quantised as
                           u8 = min(round(src * (1 / in_scale)), 255); weights per output channel as
                           s8 = round(w / (max|w| / 127)) when set (conv_set_weights_folded) */
    /* RN_NUM_I8 only, the layouts between two int8 convs (the model's int8 blocks): */
    int src_nhwc;       /* 1: src is fp32 NHWC (a previous block's dst_nhwc output), not the device's layout */
    int src_u8;         /* 1: src is u8 NHWC, already quantised at in_scale (a previous conv's out_scale output) */
    int dst_nhwc;       /* 1: dst and res are fp32 NHWC */
    int res_nhwc;       /* 1: res is fp32 NHWC, dst in the device's layout (RN_EPI_SUM, not dst_nhwc) */
    float out_scale;    /* > 0: dst is u8 NHWC, min(round(y / out_scale), 255) after the ReLU (needs RN_EPI_RELU,
                           not RN_EPI_SUM): the next conv's in_scale */
} rn_conv_shape;

/* The epilogue of a fused inference conv (rn_conv_shape.epilogue). */
enum { RN_EPI_BIAS = 1, RN_EPI_SUM = 2, RN_EPI_RELU = 4 };

/* An activation tensor: (n, c, h, w) of element type `type`, in the device's layout. */
typedef struct rn_act_shape {
    int n, c, h, w;
    rn_numtype type;
} rn_act_shape;

/* Adam's constant hyper-parameters for one update (PyTorch's torch.optim.Adam, no
 * weight decay, no amsgrad) and where the per-step values are: sched, device memory
 * (2 doubles): lr / (1 - beta1^step), sqrt(1 - beta2^step) for this update's 1-based
 * step (optim/adam.h: rn_adam_schedule). finite: NULL, or device memory (one int)
 * written by unscale_check: when it holds 0 the update writes nothing (an overflow
 * skips the step without a wait). */
typedef struct rn_adam_args {
    double beta1, beta2, eps;
    const double *sched;
    const int *finite;
} rn_adam_args;

/* The reduce hook: sums buf[0 .. n) (device memory of type t: RN_NUM_F64 or RN_NUM_F32) in place over all
 * replicas: MPI today (on host memory), NCCL later. Returns 0, or -1 with err.
 * The model calls it for SyncBN's sums, the distribution for gradient buckets.
 * replicas: how many models the sum runs over (each with the same batch size;
 * 0 counts as 1), so that the model knows SyncBN's count without reading it. */
typedef struct rn_device_reduce {
    int (*fn)(void *ctx, rn_device *dev, void *buf, size_t n, rn_numtype t, rn_err *err);
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

/* The op table: one member per entry of nn/device_ops.inc, where each op's contract is written. */
struct rn_device_ops {
#define RN_DEVICE_ENTRY(ret, name, params, args) ret(*name) params;
#include "nn/device_ops.inc"
};

/* The ops by index, in the table's order (RN_OP_destroy = 0 .. RN_OP_COUNT - 1), for logs, the
 * profiler and tests. */
enum {
#define RN_DEVICE_ENTRY(ret, name, params, args) RN_OP_##name,
#include "nn/device_ops.inc"
    RN_OP_COUNT
};
/* The name of op i ("bn_sums"), NULL when i is out of range. */
const char *rn_device_op_name(int i);
/* 1 if ops has op i (an optional op may be NULL), 0 if not or i is out of range. */
int rn_device_op_has(const rn_device_ops *ops, int i);
/* The arguments after the device, from an entry's args: RN_DEVICE_ARGS_REST (dev, x, a) is x, a. */
#define RN_DEVICE_ARGS_REST(dev, ...) __VA_ARGS__

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
