/* The reference backend's math: plain C11 over plain NCHW float arrays,
 * obvious loops, every sum in double, no threads. It is the oracle every
 * faster backend is tested against (tests/test_backend_ops.c), so it favours
 * being evidently right over being fast.
 *
 *   rn_ref_conv_dims d = {.n = 1, .ic = 64, .ih = 8, .iw = 8, .oc = 64, .oh = 8, .ow = 8,
 *                         .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
 *   rn_ref_conv_forward(y, x, w, &d);                 // y = conv(x, w)
 *   rn_ref_bn_sums(sums, y, 1, 64, 64);               // then stats, fold, apply ...
 *
 * ref_device.c puts these behind nn/device.h's op table as the "ref" device
 * (rn_device_create(&dev, "ref", 1, &err)): malloc'd host buffers, activations
 * plain NCHW fp32.
 *
 * Conventions. Outputs come first. Parameter gradients (conv weights, BN gamma
 * and beta, the heads' w and b) and GAP's backward accumulate (+=); every
 * other output is overwritten. Weights are
 * in PyTorch's layout: Conv2d (OC, IC, KH, KW), ConvTranspose2d (IC, OC, KH, KW);
 * no bias. BatchNorm is PyTorch's: biased variance to normalise, eps 1e-5;
 * the running variance takes the unbiased one.
 */
#ifndef RN_REF_REF_H
#define RN_REF_REF_H

#include <stddef.h>

#define RN_REF_BN_EPS 1e-5

/* One Conv2d or ConvTranspose2d (output_padding 0). For a Conv2d input pixel
 * ih = oh*sh - ph + kh; for a ConvTranspose2d output pixel oh = ih*sh - ph + kh. */
typedef struct rn_ref_conv_dims {
    int n, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw;
} rn_ref_conv_dims;

/* Conv2d. y, dx overwritten; dw accumulated. */
void rn_ref_conv_forward(float *y /* (N, OC, OH, OW) */, const float *x /* (N, IC, IH, IW) */,
                         const float *w /* (OC, IC, KH, KW) */, const rn_ref_conv_dims *d);
void rn_ref_conv_backward_data(float *dx /* (N, IC, IH, IW) */, const float *dy /* (N, OC, OH, OW) */,
                               const float *w /* (OC, IC, KH, KW) */, const rn_ref_conv_dims *d);
void rn_ref_conv_backward_weights(float *dw /* (OC, IC, KH, KW) */, const float *x /* (N, IC, IH, IW) */,
                                  const float *dy /* (N, OC, OH, OW) */, const rn_ref_conv_dims *d);
/* ConvTranspose2d, the same three directions. */
void rn_ref_deconv_forward(float *y /* (N, OC, OH, OW) */, const float *x /* (N, IC, IH, IW) */,
                           const float *w /* (IC, OC, KH, KW) */, const rn_ref_conv_dims *d);
void rn_ref_deconv_backward_data(float *dx /* (N, IC, IH, IW) */, const float *dy /* (N, OC, OH, OW) */,
                                 const float *w /* (IC, OC, KH, KW) */, const rn_ref_conv_dims *d);
void rn_ref_deconv_backward_weights(float *dw /* (IC, OC, KH, KW) */, const float *x /* (N, IC, IH, IW) */,
                                    const float *dy /* (N, OC, OH, OW) */, const rn_ref_conv_dims *d);

/* An eval BatchNorm folded into the conv before it: wf = w * scale[oc] per output
 * channel (float products). w, wf: (OC, IC, KH, KW), or (IC, OC, KH, KW) when transposed. */
void rn_ref_conv_fold_weights(float *wf, const float *w, const float *scale /* (OC) */, const rn_ref_conv_dims *d,
                              int transposed);
/* A fused conv's epilogue: y = x + bias[c] (+ r if r) (then ReLU if relu), summed in double;
 * y may equal x or r. */
void rn_ref_bias_add_relu(float *y /* (N, C, HW) */, const float *x /* (N, C, HW) */, const float *bias /* (C) */,
                          const float *r /* (N, C, HW) or NULL */, int relu, int N, int C, int HW);

/* BatchNorm statistics, split for SyncBN: per-replica sums, an all-reduce of
 * them (and of the count), then the statistics from the global sums. */
/* sums[c] = sum of x, sums[C + c] = sum of x^2, over N*HW values. */
void rn_ref_bn_sums(double *sums /* (2C) */, const float *x /* (N, C, HW) */, int N, int C, int HW);
/* mean = sum / count; biased var = sumsq / count - mean^2, clamped at 0. */
void rn_ref_bn_stats_from_sums(float *mean /* (C) */, float *var /* (C) */, const double *sums /* (2C) */,
                               double count, int C);
/* running = (1 - momentum) running + momentum batch, with var * count / (count - 1). */
void rn_ref_bn_update_running(float *rmean /* (C) */, float *rvar /* (C) */, const float *mean /* (C) */,
                              const float *var /* (C) */, double momentum, double count, int C);
/* BN as y = x * scale + shift: scale = gamma / sqrt(var + eps), shift = beta - mean * scale
 * (train: the batch statistics, eval: the running ones). */
void rn_ref_bn_fold(float *scale /* (C) */, float *shift /* (C) */, const float *mean /* (C) */,
                    const float *var /* (C) */, const float *gamma /* (C) */, const float *beta /* (C) */, int C);
/* y = x * scale + shift, then ReLU if relu. y may equal x. */
void rn_ref_bn_apply(float *y /* (N, C, HW) */, const float *x /* (N, C, HW) */, const float *scale /* (C) */,
                     const float *shift /* (C) */, int relu, int N, int C, int HW);
/* A residual block's end: y = ReLU(x1 * s1 + h1 + x2 * s2 + h2 + r), where the
 * second BN is left out when x2 is NULL and the residual r when r is NULL. */
void rn_ref_bn_add_relu(float *y /* (N, C, HW) */, const float *x1 /* (N, C, HW) */, const float *s1 /* (C) */,
                        const float *h1 /* (C) */, const float *x2 /* (N, C, HW) or NULL */, const float *s2,
                        const float *h2, const float *r /* (N, C, HW) or NULL */, int N, int C, int HW);
/* Training-mode BatchNorm backward in three steps (SyncBN all-reduces the
 * sums between the second and the third). dz = dy, masked by relu_out > 0
 * when relu_out is not NULL (a ReLU after the BN).
 * sums[c] = sum dz, sums[C + c] = sum dz (x - mean). */
void rn_ref_bn_backward_sums(double *sums /* (2C) */, const float *dy /* (N, C, HW) */,
                             const float *relu_out /* (N, C, HW) or NULL */, const float *x /* (N, C, HW) BN input */,
                             const float *mean /* (C) */, int N, int C, int HW);
/* dgamma += sum dz (x - mean) / sqrt(var + eps); dbeta += sum dz. */
void rn_ref_bn_backward_params(float *dgamma /* (C) */, float *dbeta /* (C) */, const double *sums /* (2C) */,
                               const float *var /* (C) */, int C);
/* dx = gamma istd (dz - sum dz / count - (x - mean) istd^2 sum dz (x - mean) / count). dx may equal dy. */
void rn_ref_bn_backward_data(float *dx /* (N, C, HW) */, const float *dy /* (N, C, HW) */,
                             const float *relu_out /* (N, C, HW) or NULL */, const float *x /* (N, C, HW) */,
                             const float *mean /* (C) */, const float *var /* (C) */, const float *gamma /* (C) */,
                             const double *sums /* (2C) */, double count, int N, int C, int HW);

/* y = max(x, 0); y may equal x. */
void rn_ref_relu_forward(float *y /* (n) */, const float *x /* (n) */, size_t n);
/* d = 0 where y <= 0: ReLU backward from the ReLU's output. */
void rn_ref_relu_backward(float *d /* (n) */, const float *y /* (n) */, size_t n);
/* y += x */
void rn_ref_add(float *y /* (n) */, const float *x /* (n) */, size_t n);

/* 3x3, stride 2, padding 1 max-pool. The first maximum in scan order (row,
 * then column) takes the gradient, as PyTorch. dx overwritten. */
void rn_ref_maxpool_forward(float *y /* (N, C, OH, OW) */, const float *x /* (N, C, H, W) */, int N, int C, int H,
                            int W, int OH, int OW);
void rn_ref_maxpool_backward(float *dx /* (N, C, H, W) */, const float *dy /* (N, C, OH, OW) */,
                             const float *x /* (N, C, H, W) */, int N, int C, int H, int W, int OH, int OW);
/* out[n, c] = mean over HW; backward: dx += dout / HW. */
void rn_ref_gap_forward(float *out /* (N, C) */, const float *x /* (N, C, HW) */, int N, int C, int HW);
void rn_ref_gap_backward(float *dx /* (N, C, HW) */, const float *dout /* (N, C) */, int N, int C, int HW);

/* The heat-map heads' generic ops (nn/device_ops.inc): a 1x1 conv with bias into float logits
 * y[n, o, p] = b[o] + sum_c w[o, c] x[n, c, p] (double, channels in order); its backward (dx overwritten,
 * dw and db accumulated). */
void rn_ref_pointwise_forward(float *y /* (N, O, HW) */, const float *x /* (N, C, HW) */, const float *w /* (O, C) */,
                              const float *b /* (O) */, int N, int C, int HW, int O);
void rn_ref_pointwise_backward(float *dx /* (N, C, HW) */, float *dw /* (O, C) */, float *db /* (O) */,
                               const float *dy /* (N, O, HW) */, const float *x /* (N, C, HW) */,
                               const float *w /* (O, C) */, int N, int C, int HW, int O);
/* Softmax over each group's D*H*W logits and the expected (column, row[, bin]) into rows of os floats;
 * prob may equal logits. Backward: dlogits = prob (dout . pos - E[dout . pos]); may equal prob. */
void rn_ref_softargmax_forward(float *out /* (N*G, os) */, float *prob /* (N, G, D*H*W) */,
                               const float *logits /* (N, G, D*H*W) */, int N, int G, int D, int H, int W, int os);
void rn_ref_softargmax_backward(float *dlogits /* (N, G, D*H*W) */, const float *prob /* (N, G, D*H*W) */,
                                const float *dout /* (N*G, os) */, int N, int G, int D, int H, int W, int os);
/* y[n*ys + o] = (b[o] + w[o] . x[n]) rs[n] (rs NULL: 1), in double; backward: dx overwritten, dw, db accumulated. */
void rn_ref_linear_forward(float *y /* (N, ys) */, const float *x /* (N, C) */, const float *w /* (O, C) */,
                           const float *b /* (O) */, const float *rs /* (N) or NULL */, int N, int C, int O, int ys);
void rn_ref_linear_backward(float *dx /* (N, C) */, float *dw /* (O, C) */, float *db /* (O) */,
                            const float *dy /* (N, ys) */, const float *x /* (N, C) */, const float *w /* (O, C) */,
                            const float *rs /* (N) or NULL */, int N, int C, int O, int ys);
/* loss = mean over n, k of (|x - tx| v + |y - ty| v + |z - tz| v d) / 3, returned; unless dpred is NULL
 * its gradient times scale (the loss scale); sign(0) = 0. */
double rn_ref_l1_loss(float *dpred /* (N, K, 3) or NULL */, const float *pred /* (N, K, 3) */,
                      const float *target /* (N, K, 3) */, const float *vis /* (N, K) */,
                      const float *have_depth /* (N) */, float scale, int N, int K);

/* PyTorch's Adam (no weight decay) for the t-th update (t >= 1), step_size = lr / (1 - b1^t),
 * bc2_sqrt = sqrt(1 - b2^t) (nn/device.h: rn_adam_args.sched):
 * m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
 * param -= step_size * m / (sqrt(v) / bc2_sqrt + eps). */
void rn_ref_adam(float *param /* (n) */, float *m /* (n) */, float *v /* (n) */, const float *grad /* (n) */,
                 size_t n, double step_size, double bc2_sqrt, double beta1, double beta2, double eps);
/* grad *= inv_scale; returns 1 if every result is finite, else 0. */
int rn_ref_unscale_check(float *grad /* (n) */, size_t n, float inv_scale);

/* What a ref-guard device has served so far (tests): its waiting calls (nn/device_ops.inc's WAIT
 * entries: download, act_download, synchronize, event_elapsed_ms), its alloc calls and its
 * graph launches. */
struct rn_device;
long rn_ref_guard_waits(const struct rn_device *dev);
long rn_ref_guard_allocs(const struct rn_device *dev);
long rn_ref_guard_launches(const struct rn_device *dev);

#endif
