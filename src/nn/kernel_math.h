/* The per-element arithmetic of the CUDA device's kernels (src/cuda/k_*.cu),
 * written once for both compilers: nvcc builds it into the kernels
 * (__host__ __device__), the C compiler into tests/test_kernel_math.c, which
 * checks it against the ref device on the op tests' shapes. Only arithmetic
 * lives here (no loops over tensors, no memory management), so that what the
 * host test runs is exactly what the GPU runs.
 *
 *   float x = rn_km_ld(src, RN_NUM_BF16, i);                // widen one activation element
 *   double v = rn_km_bn_apply(x, scale[c], shift[c], 1);     // BN + ReLU, in double as ref
 *   rn_km_st(dst, RN_NUM_BF16, i, v);                        // round once (nearest even)
 *
 * Storage types: float, bf16 (the top half of a float, core/bf16.h's rounding)
 * and IEEE binary16 ("f16"), both held as uint16_t. Conversions round to
 * nearest, ties to even, keep NaN a quiet NaN, overflow to Inf, and handle
 * subnormals (f16's below 2^-14) exactly; on the device fp16 uses the
 * hardware conversions (the same bits, except perhaps a NaN's payload). A value computed in double is
 * rounded to its storage type ONCE: through float with round-to-odd, which is
 * exact for a later rounding to a type with at most 22 significand bits.
 *
 * Numeric conventions: elementwise ops compute as ref/ref_ops.c does (double),
 * so fp32 results equal ref's bit for bit; Adam and unscale_check as the cpu
 * device and PyTorch do (float). nvcc must not contract a*b + c into an FMA
 * here (-fmad=false; see src/cuda/kernels.h).
 */
#ifndef RN_NN_KERNEL_MATH_H
#define RN_NN_KERNEL_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/bf16.h"
#include "core/numtype.h"

#ifdef __CUDACC__
#include <cuda_fp16.h>
#define RN_HD static inline __host__ __device__
#else
#define RN_HD static inline
#endif

/* BatchNorm's epsilon, as nn/device.h's RN_BN_EPS (PyTorch's default). */
#define RN_KM_BN_EPS 1e-5

/* ---- bits ---- */

RN_HD uint32_t rn_km_f32_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

RN_HD float rn_km_bits_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* 1 if f is neither Inf nor NaN (by its bits: exact under any compiler flags). */
RN_HD int rn_km_finite(float f) { return (rn_km_f32_bits(f) & 0x7f800000u) != 0x7f800000u; }

/* ---- conversions ---- */

RN_HD float rn_km_bf16_to_f32(uint16_t h) { return rn_km_bits_f32((uint32_t)h << 16); }

/* Nearest even; NaN stays a quiet NaN (core/bf16.h's rn_bf16_from_f32). */
RN_HD uint16_t rn_km_f32_to_bf16(float f)
{
    uint32_t u = rn_km_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

RN_HD float rn_km_f16_to_f32(uint16_t h)
{
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h)); /* exact: the same value (a NaN's payload may differ) */
#endif
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return rn_km_bits_f32(sign | 0x7f800000u | (m << 13)); /* Inf, NaN (payload kept) */
    if (e) return rn_km_bits_f32(sign | ((e + 112) << 23) | (m << 13));
    /* zero or subnormal: m * 2^-24, exact in float */
    return rn_km_bits_f32(sign | rn_km_f32_bits((float)m * 5.9604644775390625e-8f));
}

/* Nearest even; NaN stays a quiet NaN (top payload bits kept), beyond 65520 Inf. */
RN_HD uint16_t rn_km_f32_to_f16(float f)
{
    uint32_t u = rn_km_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(f)); /* IEEE nearest even: the same bits (a NaN's may differ) */
#endif
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a & 0x7fffffu) >> 13));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: rounds to Inf (Inf too) */
    if (a < 0x38800000u) {                                   /* below 2^-14: an f16 subnormal or 0 */
        if (a < 0x33000000u) return (uint16_t)sign;          /* <= 2^-25: rounds to 0 (a tie to even) */
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;                            /* m * 2^(e-150) in units of 2^-24 */
        uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        q += rest > half || (rest == half && (q & 1u));
        return (uint16_t)(sign | q);
    }
    uint32_t r = a - 0x38000000u; /* rebias the exponent: 127 - 15 = 112 */
    r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    return (uint16_t)(sign | r);
}

/* d rounded to float toward zero, its last bit set when inexact (round to odd). */
RN_HD float rn_km_f64_to_f32_odd(double d)
{
    float f = (float)d;
    if ((double)f == d || d != d) return f;
    uint32_t u = rn_km_f32_bits(f);
    if (fabs((double)f) > fabs(d)) u -= 1; /* one step toward zero (|f| > 0 here; Inf -> FLT_MAX) */
    return rn_km_bits_f32(u | 1u);
}

/* ---- activation elements ---- */

/* A 16-bit element (t: RN_NUM_BF16 or RN_NUM_F16) widened, and a double rounded once to one. */
RN_HD float rn_km_from16(int t, uint16_t h) { return t == RN_NUM_BF16 ? rn_km_bf16_to_f32(h) : rn_km_f16_to_f32(h); }
RN_HD uint16_t rn_km_to16(int t, double v)
{
    float f = rn_km_f64_to_f32_odd(v);
    return t == RN_NUM_BF16 ? rn_km_f32_to_bf16(f) : rn_km_f32_to_f16(f);
}

/* Element i of an activation of type t, widened to float (exact). */
RN_HD float rn_km_ld(const void *p, int t, size_t i)
{
    if (t == RN_NUM_F32) return ((const float *)p)[i];
    return rn_km_from16(t, ((const uint16_t *)p)[i]);
}

/* Stores a float value, rounded once to t. */
RN_HD void rn_km_st_f32(void *p, int t, size_t i, float v)
{
    if (t == RN_NUM_F32) ((float *)p)[i] = v;
    else ((uint16_t *)p)[i] = t == RN_NUM_BF16 ? rn_km_f32_to_bf16(v) : rn_km_f32_to_f16(v);
}

/* Stores a double value, rounded once to t. */
RN_HD void rn_km_st(void *p, int t, size_t i, double v)
{
    if (t == RN_NUM_F32) ((float *)p)[i] = (float)v;
    else ((uint16_t *)p)[i] = rn_km_to16(t, v);
}

/* ---- weight gradients of 16-bit convs ---- */

/* A conv that computes in a 16-bit type gets its weight gradient from cuDNN in that type, from a diff_dst
 * that carries the loss scale (rn_conv.grad_scale). fp16 holds at most 65504, and ResNet-50's unscaled
 * weight gradients reach 2.7e4 at rootnet's initialisation (tools/fp16_ranges.py), so a scaled one
 * overflows at any loss scale above 2 and every step is skipped. So the conv forms it times
 * rn_km_wgrad_alpha(scale) (cuDNN's alpha, applied in fp32 before the one rounding: the unscaled
 * gradient is what is stored) and the fp32 accumulation multiplies it back by rn_km_wgrad_restore: for
 * a power-of-two scale both steps are exact wherever the stored value is a normal number, so the sum is
 * what the scaled gradient rounded to 16 bits would give, without its overflow. */
RN_HD float rn_km_wgrad_alpha(float scale) { return 1.0f / scale; }
RN_HD float rn_km_wgrad_restore(float stored, float scale) { return stored * scale; }

/* ---- reductions: the fixed partitions of the kernels (the host test replays them) ---- */

/* The two-level per-channel reduction (src/cuda/k_bn.cu) over rows x C: P chunks of `per` rows,
 * each summed for a channel by RN_KM_RED_TY row-interleaved partials (row r0 + t, r0 + t + TY, ...),
 * added in t order; then the P chunk sums of a channel by a warp: lane l adds chunks l, l + 32, ...
 * in order, and lanes combine as v[l] += v[l + s] for s = 16, 8, 4, 2, 1 (the result in lane 0).
 * cap_doubles: the scratch's room for partials (2 C per chunk). Depends only on its arguments. */
#define RN_KM_RED_TX 32
#define RN_KM_RED_TY 8
RN_HD void rn_km_red_plan(int *P, size_t *per, size_t rows, int C, size_t cap_doubles)
{
    size_t ct = ((size_t)C + RN_KM_RED_TX - 1) / RN_KM_RED_TX, p = (1024 + ct - 1) / ct, most = (rows + 63) / 64;
    size_t cap = cap_doubles / (2 * (size_t)C);
    if (p > most) p = most;
    if (p > cap) p = cap;
    if (p < 1) p = 1;
    *per = (rows + p - 1) / p;
    if (!*per) *per = 1;
    *P = (int)((rows + *per - 1) / *per);
    if (*P < 1) *P = 1;
}

/* The per-sample block reductions of the head kernels: RN_KM_HEAD_THREADS threads, thread t summing
 * items t, t + RN_KM_HEAD_THREADS, ... in order, then a tree: v[t] += v[t + s] for s = half .. 1. */
#define RN_KM_HEAD_THREADS 256

/* The modes of the channel reduction and one row's step: RN_KM_RED_BN (sum x, sum x^2),
 * RN_KM_RED_BNB (sum dz, sum dz (x - aux)) with dz = dy masked by ro > 0 when has_ro, aux the
 * channel's mean; RN_KM_RED_PWDW (sum aux x), aux the row's logit gradient. */
enum { RN_KM_RED_BN = 0, RN_KM_RED_BNB = 1, RN_KM_RED_PWDW = 2 };

/* ---- BatchNorm ---- */

RN_HD double rn_km_relu(double v) { return v > 0 ? v : 0.0; }

/* x * scale + shift (then ReLU): ref's rn_ref_bn_apply. */
RN_HD double rn_km_bn_apply(float x, float scale, float shift, int relu)
{
    double v = (double)x * scale + shift;
    return relu ? rn_km_relu(v) : v;
}

/* ReLU(x * scale + shift + r): ref's rn_ref_bn_add_relu with one BN and a residual. */
RN_HD double rn_km_bn_add_relu(float x, float scale, float shift, float r)
{
    double v = (double)x * scale + shift;
    v += r;
    return rn_km_relu(v);
}

/* ReLU(x1 * s1 + h1 + x2 * s2 + h2): ref's rn_ref_bn_add_relu with two BNs. */
RN_HD double rn_km_bn2_add_relu(float x1, float s1, float h1, float x2, float s2, float h2)
{
    double v = (double)x1 * s1 + h1;
    v += (double)x2 * s2 + h2;
    return rn_km_relu(v);
}

/* The statistics from the sums: mean (out[0]) and biased variance (out[1]), ref's order. */
RN_HD void rn_km_bn_stats(float *mean, float *var, double s, double ss, double count)
{
    double m = s / count, v = ss / count - m * m;
    *mean = (float)m;
    *var = (float)(v > 0 ? v : 0);
}

/* The unbiased-variance factor of the running update. */
RN_HD double rn_km_bn_unbias(double count) { return count > 1 ? count / (count - 1) : 1.0; }

RN_HD void rn_km_bn_update_running(float *rmean, float *rvar, float mean, float var, double momentum, double unbias)
{
    *rmean = (float)((1 - momentum) * *rmean + momentum * mean);
    *rvar = (float)((1 - momentum) * *rvar + momentum * var * unbias);
}

RN_HD double rn_km_inv_std(float var) { return 1.0 / sqrt((double)var + RN_KM_BN_EPS); }

RN_HD void rn_km_bn_fold(float *scale, float *shift, float mean, float var, float gamma, float beta)
{
    double sc = gamma * rn_km_inv_std(var);
    *scale = (float)sc;
    *shift = (float)(beta - mean * sc);
}

/* dy masked by the ReLU after the BN (ro: its output; has_ro 0: no ReLU). */
RN_HD double rn_km_bn_dz(float dy, float ro, int has_ro) { return has_ro && !(ro > 0) ? 0.0 : (double)dy; }

/* The second backward sum's term dz (x - mean). */
RN_HD double rn_km_bn_dzx(double dz, float x, float mean) { return dz * ((double)x - mean); }

RN_HD void rn_km_bn_backward_params(float *dgamma, float *dbeta, double sdz, double sdzx, float var)
{
    *dgamma += (float)(sdzx * rn_km_inv_std(var));
    *dbeta += (float)sdz;
}

/* One channel's backward-data coefficients, computed once per channel. */
typedef struct rn_km_bnb {
    double is;   /* 1 / sqrt(var + eps) */
    double gis;  /* gamma * is */
    double mdz;  /* sum dz / count */
    double mdzx; /* sum dz (x - mean) / count */
} rn_km_bnb;

RN_HD rn_km_bnb rn_km_bn_backward_coef(float var, float gamma, double sdz, double sdzx, double count)
{
    rn_km_bnb b;
    b.is = rn_km_inv_std(var);
    b.gis = gamma * b.is;
    b.mdz = sdz / count;
    b.mdzx = sdzx / count;
    return b;
}

/* dx = gamma is (dz - mdz - (x - mean) is^2 mdzx): ref's rn_ref_bn_backward_data. */
RN_HD double rn_km_bn_backward_data(const rn_km_bnb *b, double dz, float x, float mean)
{
    double xc = (double)x - mean;
    return b->gis * (dz - b->mdz - xc * b->is * b->is * b->mdzx);
}

RN_HD void rn_km_red_step(double *s0, double *s1, int mode, float x, float dy, float ro, int has_ro, float aux)
{
    if (mode == RN_KM_RED_BN) {
        double v = x;
        *s0 += v;
        *s1 += v * v;
    } else if (mode == RN_KM_RED_BNB) {
        double dz = rn_km_bn_dz(dy, ro, has_ro);
        *s0 += dz;
        *s1 += rn_km_bn_dzx(dz, x, aux);
    } else {
        *s0 += (double)aux * x;
    }
}

/* ---- elementwise ---- */

/* y + x (exact in double; one rounding on store). */
RN_HD double rn_km_add(float y, float x) { return (double)y + x; }

/* 1 if ReLU backward zeroes this element (y is the ReLU's output). */
RN_HD int rn_km_relu_masked(float y) { return !(y > 0); }

/* A fused conv's epilogue: x + bias (+ r) (then ReLU), ref's rn_ref_bias_add_relu. */
RN_HD double rn_km_bias_add_relu(float x, float bias, float r, int relu)
{
    double v = (double)x + bias + r;
    return relu && v < 0 ? 0.0 : v;
}

/* ---- max-pool (3x3, stride 2, padding 1; NHWC, one channel) ---- */

/* 1 if window element v replaces the best so far (found: there is one): the first maximum in scan
 * order stays, as PyTorch's. */
RN_HD int rn_km_max_takes(float v, float best, int found) { return !found || v > best; }

/* The window of output (oh, ow) spans rows 2 oh - 1 .. 2 oh + 1 (and the same columns). */
RN_HD int rn_km_pool_lo(int o) { return 2 * o - 1; }

/* Pixel index (ih * W + iw) of the first maximum in scan order of output (oh, ow)'s window,
 * channel c of image n of x (N, H, W, C) of type t. */
RN_HD int rn_km_maxpool_arg(const void *x, int t, int n, int c, int C, int H, int W, int oh, int ow)
{
    int arg = -1;
    float best = 0;
    size_t img = (size_t)n * H * W;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++) {
            int ih = rn_km_pool_lo(oh) + kh, iw = rn_km_pool_lo(ow) + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            float v = rn_km_ld(x, t, (img + (size_t)ih * W + iw) * C + c);
            if (rn_km_max_takes(v, best, arg >= 0)) arg = ih * W + iw, best = v;
        }
    return arg;
}

/* The first and last output row (or column) whose window holds input row i: [*lo, *hi]. */
RN_HD void rn_km_maxpool_range(int *lo, int *hi, int i, int out)
{
    *lo = i / 2; /* window o spans 2o-1 .. 2o+1: it holds i for ceil((i-1)/2) <= o <= floor((i+1)/2) */
    *hi = (i + 1) / 2;
    if (*hi > out - 1) *hi = out - 1;
}

/* dx at input pixel (ih, iw), channel c: the sum, in output scan order, of dy over the windows
 * whose first maximum it is (float adds from 0, ref's order). dy (N, OH, OW, C) of type t. */
RN_HD float rn_km_maxpool_backward(const void *dy, const void *x, int t, int n, int c, int C, int H, int W, int OH,
                                   int OW, int ih, int iw)
{
    int oh0, oh1, ow0, ow1;
    rn_km_maxpool_range(&oh0, &oh1, ih, OH);
    rn_km_maxpool_range(&ow0, &ow1, iw, OW);
    float acc = 0.0f;
    for (int oh = oh0; oh <= oh1; oh++)
        for (int ow = ow0; ow <= ow1; ow++)
            if (rn_km_maxpool_arg(x, t, n, c, C, H, W, oh, ow) == ih * W + iw)
                acc += rn_km_ld(dy, t, (((size_t)n * OH + oh) * OW + ow) * C + c);
    return acc;
}

/* ---- GAP ---- */

RN_HD float rn_km_gap_mean(double sum, int HW) { return (float)(sum / HW); }

/* dx + dout / HW, ref's rn_ref_gap_backward. */
RN_HD double rn_km_gap_backward(float dx, float dout, int HW) { return dx + (double)dout / HW; }

/* ---- heat-map heads (nn/device_ops.inc: pointwise, softargmax, linear, l1_loss) ---- */

/* s + w a: one step of the heads' dot products (in channel order, from the bias, as ref). */
RN_HD double rn_km_dot_step(double s, float w, float a) { return s + (double)w * a; }

/* exp(logit - max) of the softmax, in double. */
RN_HD double rn_km_softmax_exp(float logit, double mx) { return exp((double)logit - mx); }

/* Position p of a D x H x W volume: 0 column, 1 row, 2 depth bin. */
RN_HD int rn_km_sa_pos(int p, int j, int H, int W) { return j == 0 ? p % W : j == 1 ? p / W % H : p / (H * W); }

/* g . position(p): g[0] column + g[1] row (+ g[2] depth bin when D > 1). */
RN_HD double rn_km_sa_gpos(const float *g, int p, int D, int H, int W)
{
    double s = (double)g[0] * rn_km_sa_pos(p, 0, H, W) + (double)g[1] * rn_km_sa_pos(p, 1, H, W);
    return D > 1 ? s + (double)g[2] * rn_km_sa_pos(p, 2, H, W) : s;
}

/* The logits' gradient prob (g . pos - dot), dot = sum_q prob[q] g . pos(q). */
RN_HD float rn_km_sa_dlogit(float prob, double gpos, double dot) { return (float)(prob * (gpos - dot)); }

/* One term of a pointwise conv's data gradient: dlogit * w[o, c]. */
RN_HD double rn_km_pw_da(float dl, float w) { return (double)dl * w; }

/* A linear output from its sum s = b + w . x and the sample's factor (rs NULL: 1). */
RN_HD float rn_km_linear_out(double s, const float *rs, int n) { return (float)(rs ? s * rs[n] : s); }

/* dL/d(b + w . x): dy times the sample's factor, in double. */
RN_HD double rn_km_linear_dg(float dy, const float *rs, int n) { return rs ? (double)dy * rs[n] : (double)dy; }

/* The loss summed so far plus one row's three terms (call in (n, k) order), and that row's three
 * scaled gradients, ref's rn_ref_l1_loss: c, t (3); g (3) written when not NULL; NK = N K rows. */
RN_HD double rn_km_l1(double loss, float *g, const float *c, const float *t, float vis, float have_depth, float scale,
                      int NK)
{
    double wt[3] = {vis, vis, (double)vis * have_depth};
    for (int j = 0; j < 3; j++) {
        double e = (double)c[j] - t[j];
        loss += fabs(e) * wt[j] / (3.0 * NK);
        if (g) g[j] = (float)((double)((e > 0) - (e < 0)) * wt[j] / (3.0 * NK) * scale);
    }
    return loss;
}

/* ---- optimizer ---- */

/* Adam's scalars for one step, rounded to float as PyTorch's kernels do (the cpu device's rn_adam_update);
 * sched as rn_adam_args.sched: lr / (1 - beta1^step), sqrt(1 - beta2^step). */
typedef struct rn_km_adam {
    float b1, b2, a1, a2, step_size, bc2_sqrt, eps;
} rn_km_adam;

RN_HD rn_km_adam rn_km_adam_scalars(double beta1, double beta2, double eps, const double *sched)
{
    rn_km_adam a;
    a.b1 = (float)beta1;
    a.b2 = (float)beta2;
    a.a1 = (float)(1.0 - beta1);
    a.a2 = (float)(1.0 - beta2);
    a.step_size = (float)sched[0];
    a.bc2_sqrt = (float)sched[1];
    a.eps = (float)eps;
    return a;
}

/* One element's update: m, v in place, returns the new parameter. */
RN_HD float rn_km_adam_update(const rn_km_adam *a, float param, float g, float *m, float *v)
{
    float mi = *m * a->b1 + a->a1 * g;
    float vi = *v * a->b2 + a->a2 * g * g;
    *m = mi;
    *v = vi;
    float denom = sqrtf(vi) / a->bc2_sqrt + a->eps;
    return param + (-a->step_size * mi) / denom;
}

/* grad * inv_scale (float). */
RN_HD float rn_km_unscale(float g, float inv_scale) { return g * inv_scale; }

#endif
