/* Max-pool and global average pool over NHWC activations (cuda/kernels.h).
 * Max-pool: a thread per output pack (8 channels, 16-byte loads); the
 * backward gathers (each input pack sums, in output scan order, the
 * gradients of the windows it wins), so nothing is added atomically.
 */
#include "cuda/k_common.cuh"

/* The window argmax of output (oh, ow) for the V channels c0.. of image n: arg[j] = pixel index,
 * best[j] its value (rn_km_maxpool_arg's rule, V channels at a time). */
template <int T, int V>
__device__ __forceinline__ void pool_window(int *arg, float *best, const void *x, size_t img, int c0, int C, int H,
                                            int W, int oh, int ow)
{
    for (int j = 0; j < V; j++) arg[j] = -1, best[j] = 0.0f;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++) {
            int ih = rn_km_pool_lo(oh) + kh, iw = rn_km_pool_lo(ow) + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            float v[V];
            rn_k_ldv<T, V>(v, x, (img + (size_t)ih * W + iw) * C + c0);
            for (int j = 0; j < V; j++)
                if (rn_km_max_takes(v[j], best[j], arg[j] >= 0)) arg[j] = ih * W + iw, best[j] = v[j];
        }
}

/* Thread per output pack of V channels. */
template <int T, int V>
__global__ void k_maxpool_forward(void *y, const void *x, int N, int C, int H, int W, int OH, int OW)
{
    size_t total = (size_t)N * OH * OW * C / V;
    for (size_t q = RN_K_TID(); q < total; q += RN_K_STRIDE()) {
        size_t i0 = q * V, pix = i0 / C;
        int c0 = (int)(i0 - pix * C), ow = (int)(pix % OW), oh = (int)(pix / OW % OH), n = (int)(pix / OW / OH);
        int arg[V];
        float best[V];
        double out[V];
        pool_window<T, V>(arg, best, x, (size_t)n * H * W, c0, C, H, W, oh, ow);
        for (int j = 0; j < V; j++) out[j] = best[j]; /* exact: a value of type T */
        rn_k_stv<T, V>(y, i0, out);
    }
}

extern "C" void rn_cuda_maxpool_forward(const rn_cuda_kctx *k, void *y, const void *x, const rn_act_shape *a, int oh,
                                        int ow)
{
    size_t n = (size_t)a->n * oh * ow * a->c;
    if (!n) return;
    int vec = rn_k_vec8(a->c, y, x, NULL, NULL);
    size_t packs = vec ? n / 8 : n;
    RN_K_LAUNCH_TV(a->type, vec, k_maxpool_forward, rn_k_grid(k, packs), RN_K_THREADS, k, y, x, a->n, a->c, a->h,
                   a->w, oh, ow);
}

/* Thread per input pack: the sum, in output scan order, of dy over the windows whose first maximum it
 * is (rn_km_maxpool_backward, V channels at a time). */
template <int T, int V>
__global__ void k_maxpool_backward(void *dx, const void *dy, const void *x, int N, int C, int H, int W, int OH, int OW)
{
    size_t total = (size_t)N * H * W * C / V;
    for (size_t q = RN_K_TID(); q < total; q += RN_K_STRIDE()) {
        size_t i0 = q * V, pix = i0 / C;
        int c0 = (int)(i0 - pix * C), iw = (int)(pix % W), ih = (int)(pix / W % H), n = (int)(pix / W / H);
        int oh0, oh1, ow0, ow1;
        rn_km_maxpool_range(&oh0, &oh1, ih, OH);
        rn_km_maxpool_range(&ow0, &ow1, iw, OW);
        float acc[V];
        for (int j = 0; j < V; j++) acc[j] = 0.0f;
        for (int oh = oh0; oh <= oh1; oh++)
            for (int ow = ow0; ow <= ow1; ow++) {
                int arg[V];
                float best[V], g[V];
                pool_window<T, V>(arg, best, x, (size_t)n * H * W, c0, C, H, W, oh, ow);
                rn_k_ldv<T, V>(g, dy, (((size_t)n * OH + oh) * OW + ow) * C + c0);
                for (int j = 0; j < V; j++)
                    if (arg[j] == ih * W + iw) acc[j] += g[j];
            }
        double out[V];
        for (int j = 0; j < V; j++) out[j] = acc[j];
        rn_k_stv<T, V>(dx, i0, out);
    }
}

extern "C" void rn_cuda_maxpool_backward(const rn_cuda_kctx *k, void *dx, const void *dy, const void *x,
                                         const rn_act_shape *a, int oh, int ow)
{
    size_t n = (size_t)a->n * a->h * a->w * a->c;
    if (!n) return;
    int vec = rn_k_vec8(a->c, dx, dy, x, NULL);
    size_t packs = vec ? n / 8 : n;
    RN_K_LAUNCH_TV(a->type, vec, k_maxpool_backward, rn_k_grid(k, packs), RN_K_THREADS, k, dx, dy, x, a->n, a->c,
                   a->h, a->w, oh, ow);
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
