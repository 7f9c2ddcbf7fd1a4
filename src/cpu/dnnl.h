/* The cpu device's convolutions on oneDNN (private to src/cpu; everything
 * else reaches them through nn/device.h's conv ops).
 *
 *   rn_dnnl *be; rn_dnnl_create(&be, &err);
 *   rn_dnnl_conv *c; rn_dnnl_conv_create(&c, be, &s, &err);   // all primitives made here, once
 *   rn_dnnl_conv_set_weights(c, w);                            // after every weight update
 *   rn_dnnl_conv_forward(c, y, x);
 *   rn_dnnl_conv_backward_data(c, dx, dy);
 *   rn_dnnl_conv_backward_weights(c, dw, x, dy);               // dw += dL/dw
 *   rn_dnnl_conv_destroy(c); rn_dnnl_destroy(be);
 *
 * Layouts. Activations and their gradients are blocked, nChw16c:
 *   element (n, c, h, w) lives at ((n * C/16 + c/16) * H * W + h * W + w) * 16 + c % 16,
 * with C a multiple of 16, in fp32 or, with s.act = RN_NUM_BF16, bf16. The one
 * exception is a conv with src_plain = 1 (the network input, C = 3), whose src
 * is plain NCHW fp32. Weights and weight gradients are in PyTorch's layout
 * (nn/device.h); the convs reorder internally.
 *
 * Memory. rn_dnnl_conv_create allocates everything a conv needs (primitives,
 * reordered weights, its share of the one scratchpad shared by all convs of
 * an rn_dnnl). The step calls allocate nothing. Because of the shared
 * buffers, the convs of one rn_dnnl must not run concurrently. Threads: the
 * calling thread's OpenMP setting (the cpu device sets it around each call).
 *
 * bf16 staging reuse. A training conv in bf16 keeps the bf16 copy of src
 * that forward staged and gives it to backward_weights when that is called
 * with the same src pointer; and backward_data called right after
 * backward_weights with the same diff_dst pointer reuses that call's staged
 * bf16 diff_dst. So: do not modify src between forward and backward_weights,
 * nor diff_dst between backward_weights and backward_data (the model never does).
 */
#ifndef RN_CPU_DNNL_H
#define RN_CPU_DNNL_H

#include <stddef.h>

#include "nn/device.h"

typedef struct rn_dnnl rn_dnnl;
/* Starts with an rn_conv (nn/device.h): a pointer to one is a pointer to the other. */
typedef struct rn_dnnl_conv rn_dnnl_conv;

int rn_dnnl_create(rn_dnnl **out, rn_err *err);
void rn_dnnl_destroy(rn_dnnl *be);
/* Bytes held in the buffers shared by all convs of be (scratchpad, staged
 * bf16 activations, diff weights in primitive format); grows with each create. */
size_t rn_dnnl_shared_bytes(const rn_dnnl *be);
/* oneDNN's name of the implementation chosen per direction (0 fwd, 1 bwd_data, 2 bwd_weights). */
const char *rn_dnnl_conv_impl_name(const rn_dnnl_conv *c, int direction);

int rn_dnnl_conv_create(rn_dnnl_conv **out, rn_dnnl *be, const rn_conv_shape *s, rn_err *err);
void rn_dnnl_conv_destroy(rn_dnnl_conv *c);
void rn_dnnl_conv_set_weights(rn_dnnl_conv *c, const float *w);
/* dst: (N, OC/16, OH, OW, 16); src: (N, IC/16, IH, IW, 16) or (N, IC, IH, IW) if src_plain. */
void rn_dnnl_conv_forward(rn_dnnl_conv *c, void *dst, const void *src);
/* Fused inference convs (s.epilogue, nn/device.h): weights w * scale[oc] and bias; then
 * dst = [ReLU](conv(src) + bias [+ res]) with oneDNN post-ops (res copied into dst first
 * unless it is dst). */
void rn_dnnl_conv_set_weights_folded(rn_dnnl_conv *c, const float *w, const float *scale, const float *bias);
void rn_dnnl_conv_forward_fused(rn_dnnl_conv *c, void *dst, const void *src, const void *res);
/* Overwrites diff_src. Not for no_bwd_data, src_plain or forward_only (asserts). */
void rn_dnnl_conv_backward_data(rn_dnnl_conv *c, void *diff_src, const void *diff_dst);
/* diff_w accumulated (+=). Not for forward_only (asserts). */
void rn_dnnl_conv_backward_weights(rn_dnnl_conv *c, float *diff_w, const void *src, const void *diff_dst);

/* rn_dnnl_shared_bytes of a "cpu" device's convs (for tests). */
size_t rn_cpu_device_shared_bytes(const rn_device *dev);

#endif
