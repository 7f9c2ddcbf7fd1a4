/* CPU kernels for everything that is not a convolution: BatchNorm, ReLU,
 * residual adds, max-pool, global average pool, the xy soft-argmax head and
 * the loss. All activations are blocked nChw16c, written (N, C/16, HW, 16):
 * element (n, c, p) at ((n * C/16 + c/16) * HW + p) * 16 + c % 16, C % 16 == 0.
 *
 *   rn_bn_stats(mean, var, sums, c, N, C, HW);               // batch statistics
 *   // SyncBN: rn_bn_sums(sums, ...), all-reduce sums (and the count), rn_bn_stats_from_sums
 *   rn_bn_fold(scale, shift, mean, var, gamma, beta, C);     // y = x*scale + shift
 *   rn_bn_apply(y, c, scale, shift, 1, N, C, HW);            // BN + ReLU
 *
 * Sums are accumulated in double; every kernel allocates nothing and
 * parallelises with OpenMP over independent outputs, so results do not depend
 * on the thread count.
 *
 * bf16 activations (the bf16-o2 policy): each kernel that reads or writes an
 * activation has a _bf16 twin, declared at the end, with the same contract
 * and every activation pointer an rn_bf16 (core/bf16.h) instead of a float;
 * statistics, parameters and their gradients stay float. A twin computes in
 * fp32 what the float kernel computes on the widened inputs and rounds each
 * result once (both come from one source, kernels_act.inc).
 */
#ifndef RN_CPU_KERNELS_H
#define RN_CPU_KERNELS_H

#include <stddef.h>

#include "core/bf16.h"
#include "nn/device.h"

/* Per-channel sum and sum of squares over N*HW: sums[c] and sums[C + c]. */
void rn_bn_sums(double *sums /* (2C) */, const float *x /* (N, C/16, HW, 16) */, int N, int C, int HW);
/* mean = sum / count, biased var = sumsq / count - mean^2 (clamped at 0). */
void rn_bn_stats_from_sums(float *mean /* (C) */, float *var /* (C) */, const double *sums /* (2C) */, double count,
                           int C);
/* Per-channel mean and biased variance over N*HW; sums is scratch. */
void rn_bn_stats(float *mean /* (C) */, float *var /* (C) */, double *sums /* (2C) */,
                 const float *x /* (N, C/16, HW, 16) */, int N, int C, int HW);
/* scale = gamma / sqrt(var + eps), shift = beta - mean * scale. invstd optional (may be NULL). */
void rn_bn_fold(float *scale /* (C) */, float *shift /* (C) */, float *invstd /* (C) or NULL */,
                const float *mean /* (C) */, const float *var /* (C) */, const float *gamma /* (C) */,
                const float *beta /* (C) */, int C);
/* running = (1 - momentum) * running + momentum * batch; var uses the unbiased batch variance. */
void rn_bn_update_running(float *rmean /* (C) */, float *rvar /* (C) */, const float *mean /* (C) */,
                          const float *var /* (C) */, double momentum, long count, int C);
/* y = x * scale + shift, then ReLU if relu. y may equal x. */
void rn_bn_apply(float *y /* (N, C/16, HW, 16) */, const float *x /* (N, C/16, HW, 16) */,
                 const float *scale /* (C) */, const float *shift /* (C) */, int relu, int N, int C, int HW);
/* y = ReLU(x * scale + shift + r). */
void rn_bn_add_relu(float *y /* (N, C/16, HW, 16) */, const float *x, const float *scale, const float *shift,
                    const float *r /* (N, C/16, HW, 16) */, int N, int C, int HW);
/* y = ReLU(x1 * s1 + h1 + x2 * s2 + h2): a bottleneck's end with its downsample branch. */
void rn_bn2_add_relu(float *y /* (N, C/16, HW, 16) */, const float *x1, const float *s1, const float *h1,
                     const float *x2, const float *s2, const float *h2, int N, int C, int HW);
/* d *= (y > 0): ReLU backward from the ReLU's output. */
void rn_relu_backward(float *d /* (N, C/16, HW, 16) */, const float *y /* (N, C/16, HW, 16) */, size_t n);
/* Training-mode BatchNorm backward, with an optional ReLU after the BN
 * (relu_out != NULL: dy is masked by relu_out > 0). dx may equal dy.
 * dgamma, dbeta are accumulated (+=); sums is scratch. In three steps:
 * sums = (sum dz, sum dz*(x-mean)) per channel; the parameter gradients from
 * them; dx from them over count = N*HW values. SyncBN all-reduces the sums
 * (after the parameter step, which stays local) and passes the global count. */
void rn_bn_backward(float *dx /* (N, C/16, HW, 16) */, float *dgamma /* (C) */, float *dbeta /* (C) */,
                    double *sums /* (2C) */, const float *dy /* (N, C/16, HW, 16) */, const float *relu_out /* or NULL */,
                    const float *x /* BN input */, const float *mean /* (C) */, const float *var /* (C) */,
                    const float *gamma /* (C) */, int N, int C, int HW);
void rn_bn_backward_sums(double *sums /* (2C): sum dz, sum dz*(x-mean) */, const float *dy /* (N, C/16, HW, 16) */,
                         const float *relu_out /* or NULL */, const float *x /* BN input */, const float *mean /* (C) */,
                         int N, int C, int HW);
/* dgamma += sum dz*(x-mean) / sqrt(var + eps), dbeta += sum dz. */
void rn_bn_backward_params(float *dgamma /* (C) */, float *dbeta /* (C) */, const double *sums /* (2C) */,
                           const float *var /* (C) */, int C);
/* dx = gamma*invstd*(dz - sum dz/count - (x-mean)*invstd^2*sum dz*(x-mean)/count). dx may equal dy. */
void rn_bn_backward_data(float *dx /* (N, C/16, HW, 16) */, const float *dy /* (N, C/16, HW, 16) */,
                         const float *relu_out /* or NULL */, const float *x /* BN input */, const float *mean /* (C) */,
                         const float *var /* (C) */, const float *gamma /* (C) */, const double *sums /* (2C) */,
                         double count, int N, int C, int HW);
/* y += x */
void rn_add_inplace(float *y, const float *x, size_t n);
/* 3x3 stride-2 pad-1 max-pool (first maximum in scan order wins, as PyTorch). */
void rn_maxpool_forward(float *y /* (N, C/16, OH, OW, 16) */, const float *x /* (N, C/16, H, W, 16) */,
                        int N, int C, int H, int W, int OH, int OW);
/* dx = routed dy (dx overwritten). */
void rn_maxpool_backward(float *dx /* (N, C/16, H, W, 16) */, const float *dy /* (N, C/16, OH, OW, 16) */,
                         const float *x /* (N, C/16, H, W, 16) */, int N, int C, int H, int W, int OH, int OW);
/* out[n, c] = mean over HW. */
void rn_gap_forward(float *out /* (N, C) */, const float *x /* (N, C/16, HW, 16) */, int N, int C, int HW);
/* dx += dout / HW broadcast. */
void rn_gap_backward(float *dx /* (N, C/16, HW, 16) */, const float *dout /* (N, C) */, int N, int C, int HW);
/* A 1x1 conv with bias into float logits: y[n, o, p] = b[o] + sum_c x[n, c, p] w[o, c] (nn/device_ops.inc). */
void rn_pointwise_forward(float *y /* (N, O, HW) */, const float *x /* (N, C/16, HW, 16) */, const float *w /* (O, C) */,
                          const float *b /* (O) */, int N, int C, int HW, int O);
/* Its backward: dx overwritten, dw and db accumulated. */
void rn_pointwise_backward(float *dx /* (N, C/16, HW, 16) */, float *dw /* (O, C) */, float *db /* (O) */,
                           const float *dy /* (N, O, HW) */, const float *x /* (N, C/16, HW, 16) */,
                           const float *w /* (O, C) */, int N, int C, int HW, int O);
/* PoseNet's heat-map layer in inference (nn/device_ops.inc: heat_forward): softargmax_forward's rows of
 * pointwise_forward's logits (G*D outputs, C <= 256 channels, D <= 256), without the logits; part is
 * rn_heat_scratch_bytes(N, G, H, W) of scratch. */
void rn_heat_forward(float *out /* (N*G, os) */, double *part, const float *x /* (N, C/16, H*W, 16) */,
                     const float *w /* (G*D, C) */, const float *b /* (G*D) */, int N, int C, int H, int W, int G, int D,
                     int os);
void rn_heat_forward_bf16(float *out, double *part, const rn_bf16 *x, const float *w, const float *b, int N, int C,
                          int H, int W, int G, int D, int os);
size_t rn_heat_scratch_bytes(int N, int G, int H, int W);
/* Soft-argmax per group over D*H*W (prob may equal logits); backward: dlogits may equal prob. */
void rn_softargmax_forward(float *out /* (N*G, os) */, float *prob /* (N, G, D*H*W) */,
                           const float *logits /* (N, G, D*H*W) */, int N, int G, int D, int H, int W, int os);
void rn_softargmax_backward(float *dlogits /* (N, G, D*H*W) */, const float *prob /* (N, G, D*H*W) */,
                            const float *dout /* (N*G, os) */, int N, int G, int D, int H, int W, int os);
/* y[n*ys + o] = (b[o] + w[o] . x[n]) rs[n] (rs NULL: 1); backward: dx overwritten, dw and db accumulated. */
void rn_linear_forward(float *y /* (N, ys) */, const float *x /* (N, C) */, const float *w /* (O, C) */,
                       const float *b /* (O) */, const float *rs /* (N) or NULL */, int N, int C, int O, int ys);
void rn_linear_backward(float *dx /* (N, C) */, float *dw /* (O, C) */, float *db /* (O) */, const float *dy /* (N, ys) */,
                        const float *x /* (N, C) */, const float *w /* (O, C) */, const float *rs /* (N) or NULL */,
                        int N, int C, int O, int ys);
/* The masked L1 loss over (N, K, 3) (nn/device_ops.inc's l1_loss): returns it, and unless dpred is NULL
 * its gradient times scale. */
double rn_l1_loss(float *dpred /* (N, K, 3) or NULL */, const float *pred /* (N, K, 3) */,
                  const float *target /* (N, K, 3) */, const float *vis /* (N, K) */, const float *have_depth /* (N) */,
                  float scale, int N, int K);
/* One Adam update (nn/device.h's adam op). */
void rn_adam_update(float *param /* (n) */, const float *grad /* (n) */, float *m /* (n) */, float *v /* (n) */,
                    size_t n, const rn_adam_args *h);
/* buf[0 .. bytes) = 0, split over the threads in 4 KiB-aligned pieces (a 100 MB gradient arena is
 * bound by one core's store rate). */
void rn_zero_bytes(void *buf /* (bytes) */, size_t bytes);
/* grad *= inv_scale (skipped when 1); 1 if every element is finite (nn/device.h's unscale_check). */
int rn_unscale_check(float *grad /* (n) */, size_t n, float inv_scale);
/* The bf16 twins (see the top of this file). */
void rn_bn_sums_bf16(double *sums, const rn_bf16 *x, int N, int C, int HW);
void rn_bn_apply_bf16(rn_bf16 *y, const rn_bf16 *x, const float *scale, const float *shift, int relu, int N, int C,
                      int HW);
void rn_bn_add_relu_bf16(rn_bf16 *y, const rn_bf16 *x, const float *scale, const float *shift, const rn_bf16 *r, int N,
                         int C, int HW);
void rn_bn2_add_relu_bf16(rn_bf16 *y, const rn_bf16 *x1, const float *s1, const float *h1, const rn_bf16 *x2,
                          const float *s2, const float *h2, int N, int C, int HW);
void rn_relu_backward_bf16(rn_bf16 *d, const rn_bf16 *y, size_t n);
void rn_bn_backward_sums_bf16(double *sums, const rn_bf16 *dy, const rn_bf16 *relu_out, const rn_bf16 *x,
                              const float *mean, int N, int C, int HW);
void rn_bn_backward_data_bf16(rn_bf16 *dx, const rn_bf16 *dy, const rn_bf16 *relu_out, const rn_bf16 *x,
                              const float *mean, const float *var, const float *gamma, const double *sums, double count,
                              int N, int C, int HW);
void rn_add_inplace_bf16(rn_bf16 *y, const rn_bf16 *x, size_t n);
void rn_maxpool_forward_bf16(rn_bf16 *y, const rn_bf16 *x, int N, int C, int H, int W, int OH, int OW);
void rn_maxpool_backward_bf16(rn_bf16 *dx, const rn_bf16 *dy, const rn_bf16 *x, int N, int C, int H, int W, int OH,
                              int OW);
void rn_gap_forward_bf16(float *out, const rn_bf16 *x, int N, int C, int HW);
void rn_gap_backward_bf16(rn_bf16 *dx, const float *dout, int N, int C, int HW);
void rn_pointwise_forward_bf16(float *y, const rn_bf16 *x, const float *w, const float *b, int N, int C, int HW, int O);
void rn_pointwise_backward_bf16(rn_bf16 *dx, float *dw, float *db, const float *dy, const rn_bf16 *x, const float *w,
                                int N, int C, int HW, int O);

#endif
