/* Layout conversions (cuda/kernels.h): plain (B, R, S) fp32 <-> (B, S, Rp)
 * of an activation type, for activations (B = N, R = C, S = H*W) and for
 * weights (B = D0, R = D1, S = KH*KW: PyTorch's layout <-> cuDNN's KRSC).
 * One thread per destination element (a gather): the hot uses have small S
 * (filters) or small R (the 3-channel input), where that stays cache-friendly.
 */
#include "cuda/k_common.cuh"

/* dst (B, S, Rp) of type T = src (B, R, S) [times scale[b] (smode 1) or scale[r] (smode 2)], 0 for r >= R. */
template <int T>
__global__ void k_to_nhwc(void *dst, const float *src, const float *scale, int smode, size_t B, int R, int S, int Rp)
{
    size_t total = B * S * Rp;
    for (size_t i = RN_K_TID(); i < total; i += RN_K_STRIDE()) {
        int r = (int)(i % Rp);
        size_t bs = i / Rp, b = bs / S;
        int s = (int)(bs % S);
        float v = 0.0f;
        if (r < R) {
            v = src[(b * R + r) * S + s];
            if (smode == 1) v = v * scale[b];
            else if (smode == 2) v = v * scale[r];
        }
        rn_km_st_f32(dst, T, i, v);
    }
}

/* dst (B, R, S) fp32 = src (B, S, Rp) of type T, widened; with acc, dst += that times scale (a weight
 * gradient formed at 1 / scale: nn/kernel_math.h's rn_km_wgrad_restore). */
template <int T>
__global__ void k_from_nhwc(float *dst, const void *src, int acc, float scale, size_t B, int R, int S, int Rp)
{
    size_t total = B * R * S;
    for (size_t i = RN_K_TID(); i < total; i += RN_K_STRIDE()) {
        int s = (int)(i % S);
        size_t br = i / S, b = br / R;
        int r = (int)(br % R);
        float v = rn_km_ld(src, T, (b * S + s) * Rp + r);
        dst[i] = acc ? dst[i] + rn_km_wgrad_restore(v, scale) : v;
    }
}

extern "C" void rn_cuda_act_from_nchw(const rn_cuda_kctx *k, void *dst, rn_numtype t, int cpad, const float *src,
                                      int N, int C, int H, int W)
{
    size_t n = (size_t)N * H * W * cpad;
    if (!n) return;
    RN_K_LAUNCH_T(t, k_to_nhwc, rn_k_grid(k, n), RN_K_THREADS, k, dst, src, (const float *)NULL, 0, (size_t)N, C,
                  H * W, cpad);
}

extern "C" void rn_cuda_act_to_nchw(const rn_cuda_kctx *k, float *dst, const void *src, const rn_act_shape *a)
{
    size_t n = (size_t)a->n * a->h * a->w * a->c;
    if (!n) return;
    RN_K_LAUNCH_T(a->type, k_from_nhwc, rn_k_grid(k, n), RN_K_THREADS, k, dst, src, 0, 1.0f, (size_t)a->n, a->c,
                  a->h * a->w, a->c);
}

extern "C" void rn_cuda_weight_to_krsc(const rn_cuda_kctx *k, void *dst, rn_numtype t, const float *w,
                                       const float *scale, int transposed, int D0, int D1, int KH, int KW, int d1pad)
{
    size_t n = (size_t)D0 * KH * KW * d1pad;
    if (!n) return;
    int smode = scale ? (transposed ? 2 : 1) : 0;
    RN_K_LAUNCH_T(t, k_to_nhwc, rn_k_grid(k, n), RN_K_THREADS, k, dst, w, scale, smode, (size_t)D0, D1, KH * KW,
                  d1pad);
}

extern "C" void rn_cuda_weight_grad_add(const rn_cuda_kctx *k, float *diff_w, const void *g, rn_numtype gt,
                                        float scale, int D0, int D1, int KH, int KW, int d1pad)
{
    size_t n = (size_t)D0 * D1 * KH * KW;
    if (!n) return;
    RN_K_LAUNCH_T(gt, k_from_nhwc, rn_k_grid(k, n), RN_K_THREADS, k, diff_w, g, 1, scale, (size_t)D0, D1, KH * KW, d1pad);
}
