/* The RootNet head (cuda/kernels.h): the xy soft-argmax, the depth head,
 * coords and the loss. Per-sample sums are block reductions in a fixed tree
 * order; the per-channel dw of the xy head is k_bn.cu's two-level reduction.
 */
#include <float.h>

#include "cuda/k_common.cuh"

#define HEAD_THREADS RN_KM_HEAD_THREADS

/* Sum of every thread's v over the block (HEAD_THREADS), a fixed tree; the result in every thread. */
__device__ static double block_sum(double v, double *sh)
{
    int t = threadIdx.x;
    __syncthreads();
    sh[t] = v;
    __syncthreads();
    for (int s = HEAD_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    return sh[0];
}

__device__ static double block_max(double v, double *sh)
{
    int t = threadIdx.x;
    __syncthreads();
    sh[t] = v;
    __syncthreads();
    for (int s = HEAD_THREADS / 2; s > 0; s >>= 1) {
        if (t < s && sh[t + s] > sh[t]) sh[t] = sh[t + s];
        __syncthreads();
    }
    return sh[0];
}

/* logits[row] = b + w . a[row], channels in order (ref's order), one thread per row. */
template <int T, int V>
__global__ void k_xy_logits(float *prob, const void *a, const float *w, const float *b, size_t rows, int C)
{
    for (size_t r = RN_K_TID(); r < rows; r += RN_K_STRIDE()) {
        double s = b[0];
        for (int c = 0; c < C; c += V) {
            float v[V];
            rn_k_ldv<T, V>(v, a, r * C + c);
            for (int j = 0; j < V; j++) s = rn_km_dot_step(s, w[c + j], v[j]);
        }
        prob[r] = (float)s;
    }
}

/* One block per sample: softmax of its logits (in prob) and the expected column and row. */
__global__ void k_xy_softmax(float *coord, float *prob, int HW, int W)
{
    __shared__ double sh[HEAD_THREADS];
    float *pr = prob + (size_t)blockIdx.x * HW;
    double mx = -DBL_MAX, z = 0, sx = 0, sy = 0;
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) mx = pr[p] > mx ? pr[p] : mx;
    mx = block_max(mx, sh);
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) z += rn_km_softmax_exp(pr[p], mx);
    z = block_sum(z, sh);
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) {
        double e = rn_km_softmax_exp(pr[p], mx) / z;
        pr[p] = (float)e;
        sx += e * (p % W);
        sy += e * (p / W);
    }
    sx = block_sum(sx, sh);
    sy = block_sum(sy, sh);
    if (threadIdx.x == 0) coord[2 * blockIdx.x] = (float)sx, coord[2 * blockIdx.x + 1] = (float)sy;
}

extern "C" void rn_cuda_xy_forward(const rn_cuda_kctx *k, float *coord, float *prob, const void *a_in, const float *w,
                                   const float *b, const rn_act_shape *a)
{
    size_t rows = (size_t)a->n * a->h * a->w;
    if (!rows) return;
    int vec = rn_k_vec8(a->c, a_in, NULL, NULL, NULL);
    RN_K_LAUNCH_TV(a->type, vec, k_xy_logits, rn_k_grid(k, rows), RN_K_THREADS, k, prob, a_in, w, b, rows, a->c);
    k_xy_softmax<<<a->n, HEAD_THREADS, 0, k->stream>>>(coord, prob, a->h * a->w, a->w);
}

/* One block per sample: prob := the logits' gradient; dbp[n] = its sum. */
__global__ void k_xy_dlogits(float *prob, double *dbp, const float *dcoord, int HW, int W)
{
    __shared__ double sh[HEAD_THREADS];
    float *pr = prob + (size_t)blockIdx.x * HW;
    float g0 = dcoord[2 * blockIdx.x], g1 = dcoord[2 * blockIdx.x + 1];
    double dot = 0, sb = 0;
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) dot += pr[p] * rn_km_xy_gpos(g0, g1, p, W);
    dot = block_sum(dot, sh);
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) {
        float dl = rn_km_xy_dlogit(pr[p], rn_km_xy_gpos(g0, g1, p, W), dot);
        pr[p] = dl;
        sb += dl;
    }
    sb = block_sum(sb, sh);
    if (threadIdx.x == 0) dbp[blockIdx.x] = sb;
}

/* da[row, c] = dl[row] w[c]. */
template <int T, int V>
__global__ void k_xy_da(void *da, const float *dl, const float *w, size_t packs, int C)
{
    for (size_t q = RN_K_TID(); q < packs; q += RN_K_STRIDE()) {
        size_t i0 = q * V, row = i0 / (size_t)C;
        int c0 = (int)(i0 - row * C);
        double out[V];
        for (int j = 0; j < V; j++) out[j] = rn_km_xy_da(dl[row], w[c0 + j]);
        rn_k_stv<T, V>(da, i0, out);
    }
}

/* db[0] += the per-sample sums, in sample order. */
__global__ void k_sum_into(float *db, const double *part, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += part[i];
    db[0] += (float)s;
}

extern "C" void rn_cuda_xy_backward(const rn_cuda_kctx *k, void *da, float *dw, float *db, const float *dcoord,
                                    float *prob, const void *a_in, const float *w, const rn_act_shape *a)
{
    size_t rows = (size_t)a->n * a->h * a->w, n = rows * a->c;
    if (!rows) return;
    double *dbp = rn_k_small(k);
    k_xy_dlogits<<<a->n, HEAD_THREADS, 0, k->stream>>>(prob, dbp, dcoord, a->h * a->w, a->w);
    int vec = rn_k_vec8(a->c, da, NULL, NULL, NULL);
    size_t packs = vec ? n / 8 : n;
    RN_K_LAUNCH_TV(a->type, vec, k_xy_da, rn_k_grid(k, packs), RN_K_THREADS, k, da, prob, w, packs, a->c);
    rn_k_channel_reduce(k, RED_XYDW, a->type, NULL, dw, a_in, NULL, NULL, prob, rows, a->c);
    k_sum_into<<<1, 1, 0, k->stream>>>(db, dbp, a->n);
}

/* One block per sample: gamma = b + w . feat (a fixed tree over the channels), depth = gamma k. */
__global__ void k_depth_forward(float *depth, float *gamma, const float *feat, const float *w, const float *b,
                                const float *kk, int C)
{
    __shared__ double sh[HEAD_THREADS];
    int n = blockIdx.x;
    double s = 0;
    for (int c = threadIdx.x; c < C; c += HEAD_THREADS) s = rn_km_dot_step(s, w[c], feat[(size_t)n * C + c]);
    s = block_sum(s, sh);
    if (threadIdx.x == 0) depth[n] = rn_km_depth(gamma + n, b[0] + s, kk[n]);
}

extern "C" void rn_cuda_depth_forward(const rn_cuda_kctx *k, float *depth, float *gamma, const float *feat,
                                      const float *w, const float *b, const float *kk, int N, int C)
{
    if (N <= 0) return;
    k_depth_forward<<<N, HEAD_THREADS, 0, k->stream>>>(depth, gamma, feat, w, b, kk, C);
}

__global__ void k_depth_dfeat(float *dfeat, const float *ddepth, const float *w, const float *kk, int N, int C)
{
    for (size_t i = RN_K_TID(); i < (size_t)N * C; i += RN_K_STRIDE()) {
        size_t n = i / C, c = i % C;
        dfeat[i] = (float)(rn_km_depth_dg(ddepth[n], kk[n]) * w[c]);
    }
}

/* Thread c < C: dw[c] += sum_n dg[n] feat[n, c] in sample order; thread C: db += sum_n dg[n]. */
__global__ void k_depth_dw(float *dw, float *db, const float *ddepth, const float *feat, const float *kk, int N,
                           int C)
{
    for (size_t c = RN_K_TID(); c <= (size_t)C; c += RN_K_STRIDE()) {
        double s = 0;
        for (int n = 0; n < N; n++) {
            double dg = rn_km_depth_dg(ddepth[n], kk[n]);
            s += c < (size_t)C ? dg * feat[(size_t)n * C + c] : dg;
        }
        if (c < (size_t)C) dw[c] += (float)s;
        else db[0] += (float)s;
    }
}

extern "C" void rn_cuda_depth_backward(const rn_cuda_kctx *k, float *dfeat, float *dw, float *db, const float *ddepth,
                                       const float *feat, const float *w, const float *kk, int N, int C)
{
    if (N <= 0 || C <= 0) return;
    k_depth_dfeat<<<rn_k_grid(k, (size_t)N * C), RN_K_THREADS, 0, k->stream>>>(dfeat, ddepth, w, kk, N, C);
    k_depth_dw<<<rn_k_grid(k, (size_t)C + 1), RN_K_THREADS, 0, k->stream>>>(dw, db, ddepth, feat, kk, N, C);
}

__global__ void k_coords(float *coord, const float *xy, const float *depth, int N)
{
    for (size_t n = RN_K_TID(); n < (size_t)N; n += RN_K_STRIDE()) {
        coord[3 * n] = xy[2 * n];
        coord[3 * n + 1] = xy[2 * n + 1];
        coord[3 * n + 2] = depth[n];
    }
}

extern "C" void rn_cuda_coords(const rn_cuda_kctx *k, float *coord, const float *xy, const float *depth, int N)
{
    if (N <= 0) return;
    k_coords<<<rn_k_grid(k, (size_t)N), RN_K_THREADS, 0, k->stream>>>(coord, xy, depth, N);
}

/* One thread, the samples in order (ref's order; N is the batch). */
__global__ void k_loss(double *loss, float *dxy, float *ddepth, const float *coord, const float *target,
                       const float *vis, const float *have_depth, float scale, int N)
{
    double l = 0;
    for (int n = 0; n < N; n++) {
        float g[3];
        l = rn_km_loss(l, dxy ? g : NULL, coord + 3 * n, target + 3 * n, vis[n], have_depth[n], scale, N);
        if (!dxy) continue;
        dxy[2 * n] = g[0];
        dxy[2 * n + 1] = g[1];
        ddepth[n] = g[2];
    }
    loss[0] = l;
}

extern "C" void rn_cuda_loss(const rn_cuda_kctx *k, double *loss, float *dxy, float *ddepth, const float *coord,
                             const float *target, const float *vis, const float *have_depth, float scale, int N)
{
    k_loss<<<1, 1, 0, k->stream>>>(loss, dxy, ddepth, coord, target, vis, have_depth, scale, N);
}
