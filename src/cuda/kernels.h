/* The CUDA device's own kernels: one launcher per nn/device.h op that is not a
 * convolution, plus the layout conversions the device needs around cuDNN.
 *
 *   rn_cuda_kctx k = {.stream = s, .scratch = buf, .scratch_bytes = rn_cuda_kctx_scratch_bytes(),
 *                     .sm_count = 132};                  // scratch: cudaMalloc'd once, at create
 *   rn_cuda_bn_sums(&k, sums, x, &a);                     // the op's arguments minus dev
 *   if (cudaGetLastError() != cudaSuccess) ...;           // the caller checks launches
 *
 * Every launcher enqueues its kernels on k->stream and returns at once
 * (nothing waits, nothing is allocated); it returns nothing: the caller checks
 * cudaGetLastError() after it. Every pointer is device memory unless marked
 * "host"; n == 0 or an empty shape launches nothing. The arguments and the
 * contracts are exactly those of the nn/device.h op of the same name
 * (overwrites unless it says accumulates), except where a comment here says
 * more.
 *
 * Layout. Activations ("act", void *) are NHWC, element (n, c, h, w) at
 * ((n * H + h) * W + w) * C + c, of type a->type: float (RN_NUM_F32), bf16
 * (RN_NUM_BF16) or IEEE half (RN_NUM_F16), 2 bytes each for the last two;
 * act bytes = N*H*W*C * rn_numtype_size(type), no padding, 16-byte aligned base
 * (alloc gives 64). Everything else is plain float, sums double.
 *
 * Numerics (src/nn/kernel_math.h holds every kernel's per-element arithmetic,
 * compiled by nvcc here and by the C compiler in tests/test_kernel_math.c):
 * activations are widened to float exactly, every written activation is
 * rounded once to its type (nearest even); elementwise ops compute as the ref
 * device does (ref/ref_ops.c, in double) so that fp32 results equal ref's bit
 * for bit; Adam and unscale_check compute as the cpu device and PyTorch do (float).
 * Reductions (BN sums, GAP, the heads' sums, the loss) are deterministic: a
 * fixed partition that depends only on the shape (never on sm_count or
 * timing), partial sums in double, then a fixed-order final pass; no float
 * atomics. The same inputs give the same bits on every run.
 *
 * fp16 is converted by the hardware on the device (the same bits as the host
 * code, except perhaps a NaN's payload).
 *
 * BUILD: compile the k_*.cu files with -fmad=false (no a*b+c contraction into
 * FMA, so that the device computes exactly what the host test checked; these
 * kernels are memory-bound, it costs nothing). Nothing here needs -rdc.
 * Checked and timed on a GPU by bench/cuda_kernels.cu (every launcher against
 * ref; its header says how to build it): on the H200, 2.3-4 TB/s on a
 * 128x256x64x64 activation in fp32/bf16/fp16.
 */
#ifndef RN_CUDA_KERNELS_H
#define RN_CUDA_KERNELS_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "nn/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What every launcher needs: its stream, a scratch buffer of
 * rn_cuda_kctx_scratch_bytes() bytes (cudaMalloc'd once, used only by
 * launchers on this stream, in order), and the device's SM count (grid
 * sizing of the elementwise kernels only; never changes a result). */
typedef struct rn_cuda_kctx {
    cudaStream_t stream;
    void *scratch;
    size_t scratch_bytes;
    int sm_count;
} rn_cuda_kctx;

/* Bytes of scratch the launchers need (a constant: the BN/head partial sums). */
size_t rn_cuda_kctx_scratch_bytes(void);

/* ---- buffers ---- */
void rn_cuda_fill(const rn_cuda_kctx *k, float *buf, float value, size_t n);

/* ---- BatchNorm ---- */
/* sums (2C + 1) double, sums[2C] = N*H*W. Two-level: per-block partials (scratch), fixed-order final pass. */
void rn_cuda_bn_sums(const rn_cuda_kctx *k, double *sums, const void *x, const rn_act_shape *a);
void rn_cuda_bn_stats(const rn_cuda_kctx *k, float *mean, float *var, const double *sums, double count, int C);
void rn_cuda_bn_update_running(const rn_cuda_kctx *k, float *rmean, float *rvar, const float *mean,
                               const float *var, double momentum, long count, int C);
void rn_cuda_bn_fold(const rn_cuda_kctx *k, float *scale, float *shift, const float *mean, const float *var,
                     const float *gamma, const float *beta, int C);
/* y may equal x. */
void rn_cuda_bn_apply(const rn_cuda_kctx *k, void *y, const void *x, const float *scale, const float *shift,
                      int relu, const rn_act_shape *a);
/* y may equal x or r. */
void rn_cuda_bn_add_relu(const rn_cuda_kctx *k, void *y, const void *x, const float *scale, const float *shift,
                         const void *r, const rn_act_shape *a);
/* y may equal x1 or x2. */
void rn_cuda_bn2_add_relu(const rn_cuda_kctx *k, void *y, const void *x1, const float *s1, const float *h1,
                          const void *x2, const float *s2, const float *h2, const rn_act_shape *a);
/* sums (2C) double; relu_out may be NULL. Two-level like bn_sums. */
void rn_cuda_bn_backward_sums(const rn_cuda_kctx *k, double *sums, const void *dy, const void *relu_out,
                              const void *x, const float *mean, const rn_act_shape *a);
void rn_cuda_bn_backward_params(const rn_cuda_kctx *k, float *dgamma, float *dbeta, const double *sums,
                                const float *var, int C);
/* dx may equal dy. */
void rn_cuda_bn_backward_data(const rn_cuda_kctx *k, void *dx, const void *dy, const void *relu_out, const void *x,
                              const float *mean, const float *var, const float *gamma, const double *sums,
                              double count, const rn_act_shape *a);

/* ---- elementwise, pooling ---- */
void rn_cuda_relu_backward(const rn_cuda_kctx *k, void *d, const void *y, const rn_act_shape *a);
void rn_cuda_add(const rn_cuda_kctx *k, void *y, const void *x, const rn_act_shape *a);
/* y: act (N, C, oh, ow) of a->type. */
void rn_cuda_maxpool_forward(const rn_cuda_kctx *k, void *y, const void *x, const rn_act_shape *a, int oh, int ow);
/* dx: act shape a; a gather (each input sums the outputs it wins, in scan order): no atomics. */
void rn_cuda_maxpool_backward(const rn_cuda_kctx *k, void *dx, const void *dy, const void *x, const rn_act_shape *a,
                              int oh, int ow);
void rn_cuda_gap_forward(const rn_cuda_kctx *k, float *out, const void *x, const rn_act_shape *a);
void rn_cuda_gap_backward(const rn_cuda_kctx *k, void *dx, const float *dout, const rn_act_shape *a);

/* ---- heat-map heads (generic: nn/device_ops.inc) ---- */
void rn_cuda_pointwise_forward(const rn_cuda_kctx *k, float *y, const void *x, const float *w, const float *b,
                               const rn_act_shape *a, int O);
void rn_cuda_pointwise_backward(const rn_cuda_kctx *k, void *dx, float *dw, float *db, const float *dy, const void *x,
                                const float *w, const rn_act_shape *a, int O);
void rn_cuda_softargmax_forward(const rn_cuda_kctx *k, float *out, float *prob, const float *logits, int N, int G, int D,
                                int H, int W, int os);
void rn_cuda_softargmax_backward(const rn_cuda_kctx *k, float *dlogits, const float *prob, const float *dout, int N,
                                 int G, int D, int H, int W, int os);
void rn_cuda_linear_forward(const rn_cuda_kctx *k, float *y, const float *x, const float *w, const float *b,
                            const float *rs, int N, int C, int O, int ys);
void rn_cuda_linear_backward(const rn_cuda_kctx *k, float *dx, float *dw, float *db, const float *dy, const float *x,
                             const float *w, const float *rs, int N, int C, int O, int ys);
/* loss: device double (1). */
void rn_cuda_l1_loss(const rn_cuda_kctx *k, double *loss, float *dpred, const float *pred, const float *target,
                     const float *vis, const float *have_depth, float scale, int N, int K);

/* ---- optimizer ---- */
/* h: host struct, read at the call (its scalars are passed by value); h->finite: device int or NULL. */
void rn_cuda_adam(const rn_cuda_kctx *k, float *param, const float *grad, float *m, float *v, size_t n,
                  const rn_adam_args *h);
/* finite: device int, written every call (1 or 0). */
void rn_cuda_unscale_check(const rn_cuda_kctx *k, float *grad, size_t n, float inv_scale, int *finite);

/* ---- layout conversions ---- */
/* An activation from plain NCHW fp32 (device memory: the staging buffer act_upload fills)
 * into the device layout: dst act (N, cpad, H, W) NHWC of type t, channels c..cpad-1 = 0
 * (cpad >= c; cpad = c normally, more to pad the network input for cuDNN). */
void rn_cuda_act_from_nchw(const rn_cuda_kctx *k, void *dst, rn_numtype t, int cpad,
                           const float *src /* (N, C, H, W) fp32 */, int N, int C, int H, int W);
/* The inverse (act_download's device half): dst plain NCHW fp32 from act (N, C, H, W) of type a->type. */
void rn_cuda_act_to_nchw(const rn_cuda_kctx *k, float *dst /* (N, C, H, W) fp32 */, const void *src,
                         const rn_act_shape *a);
/* dst[i] = src[i] rounded to t (F32: a copy), n elements. */
void rn_cuda_cast_f32(const rn_cuda_kctx *k, void *dst, rn_numtype t, const float *src, size_t n);
/* PyTorch weights to cuDNN's NHWC filter (KRSC), type t: w is (D0, D1, KH, KW) -- (OC, IC, KH, KW)
 * for a Conv2d, (IC, OC, KH, KW) for a ConvTranspose2d, which cuDNN runs as the backward-data of a
 * conv with K = D0 = IC and C = D1 = OC; dst is (D0, KH, KW, d1pad), dst[a][r][s][b] = w[a][b][r][s],
 * b >= D1 zero (d1pad >= D1). scale: NULL, or the folded BN's (output channel) scale: each weight
 * is first multiplied by scale[oc] in float (oc = a for a Conv2d, b when transposed), as
 * conv_set_weights_folded says. */
void rn_cuda_weight_to_krsc(const rn_cuda_kctx *k, void *dst, rn_numtype t, const float *w, const float *scale,
                            int transposed, int D0, int D1, int KH, int KW, int d1pad);
/* diff_w (D0, D1, KH, KW) PyTorch layout fp32 += g (D0, KH, KW, d1pad) KRSC of type gt (a cuDNN
 * backward-filter result formed at 1 / scale) times scale (rn_km_wgrad_restore), channels b >= D1
 * ignored. Accumulates: each element read, widened, multiplied, added in float, written once. */
void rn_cuda_weight_grad_add(const rn_cuda_kctx *k, float *diff_w, const void *g, rn_numtype gt, float scale, int D0,
                             int D1, int KH, int KW, int d1pad);
/* A fused inference conv's epilogue when cuDNN's own cannot be used: y = x + bias[c] (+ r if r)
 * (then ReLU if relu), summed in double as ref's rn_ref_bias_add_relu, rounded once to a->type;
 * y may equal x or r. x, r, y: act shape a. */
void rn_cuda_bias_add_relu(const rn_cuda_kctx *k, void *y, const void *x, const float *bias, const void *r, int relu,
                           const rn_act_shape *a);

#ifdef __cplusplus
}
#endif

#endif
