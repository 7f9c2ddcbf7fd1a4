/* The heat-map heads' generic ops (cuda/kernels.h): the pointwise conv, the soft-argmax, the
 * linear layer and the masked L1 loss. Per-map sums are block reductions in a fixed tree order;
 * the per-channel dw of a one-output pointwise conv is k_bn.cu's two-level reduction.
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

/* y[n, o, p] = b[o] + w[o] . a[row] (row = n HW + p), channels in order (ref's order), one thread per row. */
template <int T, int V>
__global__ void k_pw_logits(float *y, const void *a, const float *w, const float *b, size_t rows, int C, int HW,
                            int O)
{
    for (size_t r = RN_K_TID(); r < rows; r += RN_K_STRIDE()) {
        size_t n = r / HW, p = r % HW;
        for (int o = 0; o < O; o++) {
            const float *wo = w + (size_t)o * C;
            double s = b[o];
            for (int c = 0; c < C; c += V) {
                float v[V];
                rn_k_ldv<T, V>(v, a, r * C + c);
                for (int j = 0; j < V; j++) s = rn_km_dot_step(s, wo[c + j], v[j]);
            }
            y[(n * O + o) * HW + p] = (float)s;
        }
    }
}

extern "C" void rn_cuda_pointwise_forward(const rn_cuda_kctx *k, float *y, const void *x, const float *w,
                                          const float *b, const rn_act_shape *a, int O)
{
    size_t rows = (size_t)a->n * a->h * a->w;
    if (!rows || O <= 0) return;
    int vec = rn_k_vec8(a->c, x, NULL, NULL, NULL);
    RN_K_LAUNCH_TV(a->type, vec, k_pw_logits, rn_k_grid(k, rows), RN_K_THREADS, k, y, x, w, b, rows, a->c, a->h * a->w,
                   O);
}

/* One block per heat map (sample n, group g): softmax of its V = D H W logits into prob and the expected
 * column, row (and depth bin when D > 1) into out's row. */
__global__ void k_softargmax(float *out, float *prob, const float *logits, int D, int H, int W, int os)
{
    __shared__ double sh[HEAD_THREADS];
    int V = D * H * W;
    const float *lg = logits + (size_t)blockIdx.x * V;
    float *pr = prob ? prob + (size_t)blockIdx.x * V : NULL;
    double mx = -DBL_MAX, z = 0, sx = 0, sy = 0, sz = 0;
    for (int p = threadIdx.x; p < V; p += HEAD_THREADS) mx = lg[p] > mx ? lg[p] : mx;
    mx = block_max(mx, sh);
    for (int p = threadIdx.x; p < V; p += HEAD_THREADS) z += rn_km_softmax_exp(lg[p], mx);
    z = block_sum(z, sh);
    for (int p = threadIdx.x; p < V; p += HEAD_THREADS) {
        double e = rn_km_softmax_exp(lg[p], mx) / z;
        if (pr) pr[p] = (float)e;
        sx += e * rn_km_sa_pos(p, 0, H, W);
        sy += e * rn_km_sa_pos(p, 1, H, W);
        sz += e * rn_km_sa_pos(p, 2, H, W);
    }
    sx = block_sum(sx, sh);
    sy = block_sum(sy, sh);
    if (D > 1) sz = block_sum(sz, sh);
    if (threadIdx.x) return;
    float *o = out + (size_t)blockIdx.x * os;
    o[0] = (float)sx, o[1] = (float)sy;
    if (D > 1) o[2] = (float)sz;
}

extern "C" void rn_cuda_softargmax_forward(const rn_cuda_kctx *k, float *out, float *prob, const float *logits, int N,
                                           int G, int D, int H, int W, int os)
{
    if (N <= 0 || G <= 0) return;
    k_softargmax<<<N * G, HEAD_THREADS, 0, k->stream>>>(out, prob, logits, D, H, W, os);
}

/* One block per heat map: dlogits = prob (g . pos - dot). */
__global__ void k_softargmax_bwd(float *dlogits, const float *prob, const float *dout, int D, int H, int W, int os)
{
    __shared__ double sh[HEAD_THREADS];
    int V = D * H * W;
    const float *pr = prob + (size_t)blockIdx.x * V, *g = dout + (size_t)blockIdx.x * os;
    float *dl = dlogits + (size_t)blockIdx.x * V;
    double dot = 0;
    for (int p = threadIdx.x; p < V; p += HEAD_THREADS) dot += pr[p] * rn_km_sa_gpos(g, p, D, H, W);
    dot = block_sum(dot, sh);
    for (int p = threadIdx.x; p < V; p += HEAD_THREADS) dl[p] = rn_km_sa_dlogit(pr[p], rn_km_sa_gpos(g, p, D, H, W), dot);
}

extern "C" void rn_cuda_softargmax_backward(const rn_cuda_kctx *k, float *dlogits, const float *prob, const float *dout,
                                            int N, int G, int D, int H, int W, int os)
{
    if (N <= 0 || G <= 0) return;
    k_softargmax_bwd<<<N * G, HEAD_THREADS, 0, k->stream>>>(dlogits, prob, dout, D, H, W, os);
}

/* da[row, c] = sum_o dl[n, o, p] w[o, c] (row = n HW + p). */
template <int T, int V>
__global__ void k_pw_da(void *da, const float *dl, const float *w, size_t packs, int C, int HW, int O)
{
    for (size_t q = RN_K_TID(); q < packs; q += RN_K_STRIDE()) {
        size_t i0 = q * V, row = i0 / (size_t)C, n = row / HW, p = row % HW;
        int c0 = (int)(i0 - row * C);
        const float *g = dl + n * O * HW + p;
        double out[V];
        for (int j = 0; j < V; j++) {
            out[j] = rn_km_pw_da(g[0], w[c0 + j]);
            for (int o = 1; o < O; o++) out[j] += rn_km_pw_da(g[(size_t)o * HW], w[(size_t)o * C + c0 + j]);
        }
        rn_k_stv<T, V>(da, i0, out);
    }
}

/* One block per (sample, output): part[n O + o] = the sum of its HW logit gradients (a fixed tree). */
__global__ void k_pw_dbp(double *part, const float *dl, int HW)
{
    __shared__ double sh[HEAD_THREADS];
    const float *g = dl + (size_t)blockIdx.x * HW;
    double s = 0;
    for (int p = threadIdx.x; p < HW; p += HEAD_THREADS) s += g[p];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

/* db[o] += the per-sample sums of output o, in sample order. */
__global__ void k_pw_db(float *db, const double *part, int N, int O)
{
    for (size_t o = RN_K_TID(); o < (size_t)O; o += RN_K_STRIDE()) {
        double s = 0;
        for (int n = 0; n < N; n++) s += part[(size_t)n * O + o];
        db[o] += (float)s;
    }
}

/* db[o] += sum of dl[n, o, p] in (n, p) order (when the per-sample partials do not fit the scratch). */
__global__ void k_pw_db_rows(float *db, const float *dl, int N, int HW, int O)
{
    for (size_t o = RN_K_TID(); o < (size_t)O; o += RN_K_STRIDE()) {
        double s = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) s += dl[((size_t)n * O + o) * HW + p];
        db[o] += (float)s;
    }
}

/* dw[o, c] += sum over rows of dl[n, o, p] x[row, c], rows in order (outputs beyond the first: O > 1). */
template <int T>
__global__ void k_pw_dw(float *dw, const float *dl, const void *x, size_t rows, int C, int HW, int O, int o0)
{
    for (size_t i = RN_K_TID(); i < (size_t)(O - o0) * C; i += RN_K_STRIDE()) {
        size_t o = o0 + i / C, c = i % C;
        double s = 0;
        for (size_t r = 0; r < rows; r++) {
            float v[1];
            rn_k_ldv<T, 1>(v, x, r * C + c);
            s += (double)dl[((r / HW) * O + o) * HW + r % HW] * v[0];
        }
        dw[o * C + c] += (float)s;
    }
}

extern "C" void rn_cuda_pointwise_backward(const rn_cuda_kctx *k, void *dx, float *dw, float *db, const float *dy,
                                           const void *x, const float *w, const rn_act_shape *a, int O)
{
    size_t rows = (size_t)a->n * a->h * a->w, n = rows * a->c;
    int HW = a->h * a->w;
    if (!rows || O <= 0) return;
    int vec = rn_k_vec8(a->c, dx, NULL, NULL, NULL);
    size_t packs = vec ? n / 8 : n;
    RN_K_LAUNCH_TV(a->type, vec, k_pw_da, rn_k_grid(k, packs), RN_K_THREADS, k, dx, dy, w, packs, a->c, HW, O);
    /* output 0's dw: the channel reduction with dl as each row's factor (O == 1: dy is (rows)) */
    if (O == 1) rn_k_channel_reduce(k, RED_PWDW, a->type, NULL, dw, x, NULL, NULL, dy, rows, a->c);
    else RN_K_LAUNCH_T(a->type, k_pw_dw, rn_k_grid(k, (size_t)O * a->c), RN_K_THREADS, k, dw, dy, x, rows, a->c, HW, O,
                       0);
    if ((size_t)a->n * O * sizeof(double) > RN_K_SMALL_BYTES) {
        k_pw_db_rows<<<rn_k_grid(k, (size_t)O), RN_K_THREADS, 0, k->stream>>>(db, dy, a->n, HW, O);
        return;
    }
    double *part = rn_k_small(k);
    k_pw_dbp<<<a->n * O, HEAD_THREADS, 0, k->stream>>>(part, dy, HW);
    k_pw_db<<<rn_k_grid(k, (size_t)O), RN_K_THREADS, 0, k->stream>>>(db, part, a->n, O);
}

/* One block per (sample, output): y = (b + w . x (a fixed tree over the channels)) times the sample's factor. */
__global__ void k_linear_forward(float *y, const float *x, const float *w, const float *b, const float *rs, int C, int O,
                                 int ys)
{
    __shared__ double sh[HEAD_THREADS];
    int n = blockIdx.x / O, o = blockIdx.x % O;
    double s = 0;
    for (int c = threadIdx.x; c < C; c += HEAD_THREADS) s = rn_km_dot_step(s, w[(size_t)o * C + c], x[(size_t)n * C + c]);
    s = block_sum(s, sh);
    if (threadIdx.x == 0) y[(size_t)n * ys + o] = rn_km_linear_out(b[o] + s, rs, n);
}

extern "C" void rn_cuda_linear_forward(const rn_cuda_kctx *k, float *y, const float *x, const float *w, const float *b,
                                       const float *rs, int N, int C, int O, int ys)
{
    if (N <= 0 || O <= 0) return;
    k_linear_forward<<<N * O, HEAD_THREADS, 0, k->stream>>>(y, x, w, b, rs, C, O, ys);
}

__global__ void k_linear_dx(float *dx, const float *dy, const float *w, const float *rs, int N, int C, int O, int ys)
{
    for (size_t i = RN_K_TID(); i < (size_t)N * C; i += RN_K_STRIDE()) {
        int n = (int)(i / C), c = (int)(i % C);
        double s = rn_km_linear_dg(dy[(size_t)n * ys], rs, n) * w[c];
        for (int o = 1; o < O; o++) s += rn_km_linear_dg(dy[(size_t)n * ys + o], rs, n) * w[(size_t)o * C + c];
        dx[i] = (float)s;
    }
}

/* Thread (o, c < C): dw[o, c] += sum_n dg[n, o] x[n, c] in sample order; thread (o, C): db[o] += sum_n dg[n, o]. */
__global__ void k_linear_dw(float *dw, float *db, const float *dy, const float *x, const float *rs, int N, int C, int O,
                            int ys)
{
    for (size_t i = RN_K_TID(); i < (size_t)O * (C + 1); i += RN_K_STRIDE()) {
        size_t o = i / (C + 1), c = i % (C + 1);
        double s = 0;
        for (int n = 0; n < N; n++) {
            double dg = rn_km_linear_dg(dy[(size_t)n * ys + o], rs, n);
            s += c < (size_t)C ? dg * x[(size_t)n * C + c] : dg;
        }
        if (c < (size_t)C) dw[o * C + c] += (float)s;
        else db[o] += (float)s;
    }
}

extern "C" void rn_cuda_linear_backward(const rn_cuda_kctx *k, float *dx, float *dw, float *db, const float *dy,
                                        const float *x, const float *w, const float *rs, int N, int C, int O, int ys)
{
    if (N <= 0 || C <= 0 || O <= 0) return;
    k_linear_dx<<<rn_k_grid(k, (size_t)N * C), RN_K_THREADS, 0, k->stream>>>(dx, dy, w, rs, N, C, O, ys);
    k_linear_dw<<<rn_k_grid(k, (size_t)O * (C + 1)), RN_K_THREADS, 0, k->stream>>>(dw, db, dy, x, rs, N, C, O, ys);
}

/* One thread, the rows in (n, k) order (ref's order). */
__global__ void k_l1_loss(double *loss, float *dpred, const float *pred, const float *target, const float *vis,
                          const float *have_depth, float scale, int N, int K)
{
    double l = 0;
    for (int r = 0; r < N * K; r++)
        l = rn_km_l1(l, dpred ? dpred + 3 * r : NULL, pred + 3 * r, target + 3 * r, vis[r], have_depth[r / K], scale,
                     N * K);
    loss[0] = l;
}

extern "C" void rn_cuda_l1_loss(const rn_cuda_kctx *k, double *loss, float *dpred, const float *pred,
                                const float *target, const float *vis, const float *have_depth, float scale, int N,
                                int K)
{
    k_l1_loss<<<1, 1, 0, k->stream>>>(loss, dpred, pred, target, vis, have_depth, scale, N, K);
}
