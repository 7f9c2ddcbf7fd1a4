/* The narrow compute-backend interface: every convolution and deconvolution of
 * the model goes through these calls, and nothing else in rootnet names
 * oneDNN. A CUDA backend (cuDNN) implements the same calls later.
 *
 *   rn_backend *be; rn_backend_create(&be, threads, &err);
 *   rn_conv_shape s = {.n = 8, .ic = 64, .ih = 64, .iw = 64, .oc = 64, .oh = 64, .ow = 64,
 *                      .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
 *   rn_conv *c; rn_conv_create(&c, be, &s, &err);   // all primitives made here, once
 *   rn_conv_set_weights(c, w);                       // after every weight update
 *   rn_conv_forward(c, y, x);
 *   rn_conv_backward_data(c, dx, dy);
 *   rn_conv_backward_weights(c, dw, x, dy);         // dw += dL/dw
 *   rn_conv_destroy(c); rn_backend_destroy(be);
 *
 * Layouts. Activations and their gradients are blocked, nChw16c:
 *   element (n, c, h, w) lives at ((n * C/16 + c/16) * H * W + h * W + w) * 16 + c % 16,
 * with C a multiple of 16, in fp32 or, with s.act = RN_ACT_BF16, bf16. The one
 * exception is a conv with src_plain = 1 (the network input, C = 3), whose src
 * is plain NCHW fp32. Weights and weight gradients
 * are in PyTorch's layout: Conv2d (OC, IC, KH, KW), ConvTranspose2d
 * (IC, OC, KH, KW); the backend reorders internally. No bias: rootnet's convs
 * and deconvs have none.
 *
 * Memory. rn_conv_create allocates everything a conv needs (primitives,
 * reordered weights, its share of the one scratchpad shared by all convs of a
 * backend). The step calls allocate nothing. Because of the shared buffers,
 * the convs of one backend must not run concurrently (use one backend per
 * thread that runs convs).
 *
 * bf16 staging reuse. A training conv in bf16 keeps the bf16 copy of src
 * that forward staged and gives it to backward_weights when that is called
 * with the same src pointer; and backward_data called right after
 * backward_weights with the same diff_dst pointer reuses that call's staged
 * bf16 diff_dst. So: do not modify src between forward and backward_weights,
 * nor diff_dst between backward_weights and backward_data (the model never does).
 */
#ifndef RN_NN_BACKEND_H
#define RN_NN_BACKEND_H

#include <stddef.h>

#include "core/bf16.h"
#include "core/status.h"

typedef struct rn_backend rn_backend;
typedef struct rn_conv rn_conv;

typedef enum {
    RN_COMPUTE_F32 = 0,  /* fp32 everywhere */
    RN_COMPUTE_BF16 = 1, /* fp32 storage, convs compute in bf16 (AVX512-BF16) */
    RN_COMPUTE_F16 = 2,  /* fp32 storage, fp16 compute: CUDA backend only (oneDNN rejects it) */
} rn_compute;

typedef enum {
    RN_ALGO_DIRECT = 0,   /* the backend's default implementation */
    RN_ALGO_WINOGRAD = 1, /* Winograd (3x3 stride-1 Conv2d, fp32 only); may be unavailable */
    RN_ALGO_COUNT
} rn_conv_algo;

typedef struct rn_conv_shape {
    int n;              /* batch */
    int ic, ih, iw;     /* input channels and size */
    int oc, oh, ow;     /* output channels and size */
    int kh, kw, sh, sw, ph, pw;
    int transposed;     /* 1: ConvTranspose2d (output_padding 0), 0: Conv2d */
    int src_plain;      /* 1: src is plain NCHW (network input); never needs diff_src */
    int no_bwd_data;    /* 1: backward-data is never called (create no primitive for it) */
    int forward_only;   /* 1: inference; neither backward call is made (create only forward) */
    rn_compute compute;
    rn_act_type act;       /* storage of dst, diff_src, diff_dst and (unless src_plain) src:
                           RN_ACT_F32, or RN_ACT_BF16 (bf16-o2; needs RN_COMPUTE_BF16) */
    rn_conv_algo algo;  /* RN_ALGO_DIRECT unless autotuned (nn/autotune.h) */
} rn_conv_shape;

/* The output size of one spatial dim: Conv2d (in + 2 pad - k) / stride + 1,
 * ConvTranspose2d (in - 1) stride - 2 pad + k (output_padding 0). */
int rn_conv_out_dim(int in, int k, int stride, int pad, int transposed);
/* 0 if every backend can take s: sizes positive, channels multiples of 16
 * (ic exempt with src_plain, which needs a Conv2d), oh/ow as rn_conv_out_dim,
 * tensors under 2^34 elements; else -1 with a one-line message. */
int rn_conv_shape_check(const rn_conv_shape *s, rn_err *err);

/* threads: the OpenMP thread count for backend kernels (0 = leave as is). */
int rn_backend_create(rn_backend **out, int threads, rn_err *err);
void rn_backend_destroy(rn_backend *be);
/* Bytes held in the buffers shared by all convs of be (scratchpad, staged
 * bf16 activations, diff weights in primitive format); grows with each create. */
size_t rn_backend_shared_bytes(const rn_backend *be);
/* Human-readable name of the implementation chosen for each direction, e.g.
 * "jit:avx512_core", for logs and the profiler. */
const char *rn_conv_impl_name(const rn_conv *c, int direction /* 0 fwd, 1 bwd_data, 2 bwd_weights */);

int rn_conv_create(rn_conv **out, rn_backend *be, const rn_conv_shape *s, rn_err *err);
void rn_conv_destroy(rn_conv *c);

/* w: PyTorch layout, see above. Reorders into the primitives' own formats. */
void rn_conv_set_weights(rn_conv *c, const float *w);
/* dst: (N, OC/16, OH, OW, 16); src: (N, IC/16, IH, IW, 16) or (N, IC, IH, IW) if src_plain;
 * activations of the type s.act says (float or rn_bf16). */
void rn_conv_forward(rn_conv *c, void *dst, const void *src);
/* diff_src: (N, IC/16, IH, IW, 16); diff_dst: (N, OC/16, OH, OW, 16). Overwrites diff_src.
 * Not for a conv made with no_bwd_data, src_plain or forward_only (asserts). */
void rn_conv_backward_data(rn_conv *c, void *diff_src, const void *diff_dst);
/* diff_w: PyTorch layout, accumulated (+=); src, diff_dst as in forward.
 * Not for a conv made with forward_only (asserts). */
void rn_conv_backward_weights(rn_conv *c, float *diff_w, const void *src, const void *diff_dst);

#endif
