/* Max-pool and global average pool over NHWC activations (cuda/kernels.h).
 * Thread per output element; the backward gathers (each input element sums,
 * in output scan order, the gradients of the windows it wins), so nothing is
 * added atomically.
 */
#include "cuda/k_common.cuh"

template <int T>
__global__ void k_maxpool_forward(void *y, const void *x, int N, int C, int H, int W, int OH, int OW)
{
    size_t total = (size_t)N * OH * OW * C;
    for (size_t i = RN_K_TID(); i < total; i += RN_K_STRIDE()) {
        int c = (int)(i % C);
        size_t pix = i / C;
        int ow = (int)(pix % OW), oh = (int)(pix / OW % OH), n = (int)(pix / OW / OH);
        int arg = rn_km_maxpool_arg(x, T, n, c, C, H, W, oh, ow);
        rn_km_st_f32(y, T, i, rn_km_ld(x, T, ((size_t)n * H * W + arg) * C + c));
    }
}

extern "C" void rn_cuda_maxpool_forward(const rn_cuda_kctx *k, void *y, const void *x, const rn_act_shape *a, int oh,
                                        int ow)
{
    size_t n = (size_t)a->n * oh * ow * a->c;
    if (!n) return;
    RN_K_LAUNCH_T(a->type, k_maxpool_forward, rn_k_grid(k, n), RN_K_THREADS, k, y, x, a->n, a->c, a->h, a->w, oh, ow);
}

template <int T>
__global__ void k_maxpool_backward(void *dx, const void *dy, const void *x, int N, int C, int H, int W, int OH, int OW)
{
    size_t total = (size_t)N * H * W * C;
    for (size_t i = RN_K_TID(); i < total; i += RN_K_STRIDE()) {
        int c = (int)(i % C);
        size_t pix = i / C;
        int iw = (int)(pix % W), ih = (int)(pix / W % H), n = (int)(pix / W / H);
        rn_km_st_f32(dx, T, i, rn_km_maxpool_backward(dy, x, T, n, c, C, H, W, OH, OW, ih, iw));
    }
}

extern "C" void rn_cuda_maxpool_backward(const rn_cuda_kctx *k, void *dx, const void *dy, const void *x,
                                         const rn_act_shape *a, int oh, int ow)
{
    size_t n = (size_t)a->n * a->h * a->w * a->c;
    if (!n) return;
    RN_K_LAUNCH_T(a->type, k_maxpool_backward, rn_k_grid(k, n), RN_K_THREADS, k, dx, dy, x, a->n, a->c, a->h, a->w,
                  oh, ow);
}

/* out[n, c] = mean over the HW rows of image n, summed in order in double (ref's order). */
template <int T>
__global__ void k_gap_forward(float *out, const void *x, int N, int C, int HW)
{
    for (size_t i = RN_K_TID(); i < (size_t)N * C; i += RN_K_STRIDE()) {
        size_t n = i / C, c = i % C;
        double s = 0;
        for (int p = 0; p < HW; p++) s += rn_km_ld(x, T, (n * HW + p) * C + c);
        out[i] = rn_km_gap_mean(s, HW);
    }
}

extern "C" void rn_cuda_gap_forward(const rn_cuda_kctx *k, float *out, const void *x, const rn_act_shape *a)
{
    size_t n = (size_t)a->n * a->c;
    if (!n) return;
    RN_K_LAUNCH_T(a->type, k_gap_forward, rn_k_grid(k, n), RN_K_THREADS, k, out, x, a->n, a->c, a->h * a->w);
}
