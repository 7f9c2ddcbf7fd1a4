/* BatchNorm kernels (cuda/kernels.h) and the deterministic two-level
 * per-channel reduction that BN's sums and a one-output pointwise conv's dw (k_head.cu) share.
 *
 * The reduction over the rows (N*H*W) of an NHWC activation, per channel:
 * block (ct, p) takes 32 (or 64: two a thread) channels and the p-th chunk of
 * rows; its 32 x 8 threads each sum every 8th row of the chunk in double, the
 * 8 row-partials are added in order, and the block writes one partial per
 * channel into scratch; a second kernel adds the P partials of a channel (a
 * warp: 32 in-order lane sums, then a fixed butterfly). P and the chunks
 * depend only on (rows, C); tests/test_kernel_math.c replays the order.
 */
#include "cuda/k_common.cuh"

enum { RED_TX = RN_KM_RED_TX, RED_TY = RN_KM_RED_TY };

/* CV consecutive channels of element i (i % CV == 0, 4- or 8-byte loads), widened. */
template <int T, int CV>
__device__ __forceinline__ void ld_chan(float *f, const void *p, size_t i)
{
    if (CV == 2 && T == RN_NUM_F32) {
        float2 v = *(const float2 *)((const float *)p + i);
        f[0] = v.x, f[1] = v.y;
    } else if (CV == 2) {
        uint32_t w = *(const uint32_t *)((const uint16_t *)p + i);
        f[0] = rn_km_from16(T, (uint16_t)(w & 0xffffu)), f[1] = rn_km_from16(T, (uint16_t)(w >> 16));
    } else {
        f[0] = rn_km_ld(p, T, i);
    }
}

/* part (P, 2, C): the block's chunk partials; each thread takes CV adjacent channels. */
template <int T, int MODE, int CV>
__global__ void k_red_partial(double *part, const void *x, const void *dy, const void *ro, const float *aux,
                              size_t rows, size_t per, int C)
{
    __shared__ double sh[2][RED_TY][RED_TX * CV];
    int tx = threadIdx.x, ty = threadIdx.y, c = (blockIdx.x * RED_TX + tx) * CV, p = blockIdx.y;
    size_t r0 = (size_t)p * per, r1 = r0 + per < rows ? r0 + per : rows;
    double s0[CV], s1[CV];
    float mean[CV];
    for (int j = 0; j < CV; j++) s0[j] = s1[j] = 0, mean[j] = MODE == RED_BNB && c < C ? aux[c + j] : 0.0f;
    if (c < C)
        for (size_t r = r0 + ty; r < r1; r += RED_TY) {
            size_t i = r * C + c;
            float xv[CV], dyv[CV], rov[CV];
            ld_chan<T, CV>(xv, x, i);
            for (int j = 0; j < CV; j++) dyv[j] = rov[j] = 0.0f;
            if (MODE == RED_BNB) ld_chan<T, CV>(dyv, dy, i);
            if (MODE == RED_BNB && ro) ld_chan<T, CV>(rov, ro, i);
            for (int j = 0; j < CV; j++)
                rn_km_red_step(&s0[j], &s1[j], MODE, xv[j], dyv[j], rov[j], ro != NULL,
                               MODE == RED_PWDW ? aux[r] : mean[j]);
        }
    for (int j = 0; j < CV; j++) sh[0][ty][tx * CV + j] = s0[j], sh[1][ty][tx * CV + j] = s1[j];
    __syncthreads();
    if (ty || c >= C) return;
    for (int j = 0; j < CV; j++) {
        double a = 0, b = 0;
        for (int y = 0; y < RED_TY; y++) a += sh[0][y][tx * CV + j], b += sh[1][y][tx * CV + j];
        part[((size_t)p * 2) * C + c + j] = a;
        part[((size_t)p * 2 + 1) * C + c + j] = b;
    }
}

/* The P partials of a channel: a warp per channel, lane l adding partials l, l + 32, ... in order,
 * then a butterfly (every lane ends with the same sum); sums (2C [+1]) for BN, dw += for a one-output pointwise conv. */
__global__ void k_red_final(double *sums, float *dw, const double *part, int P, int C, int mode, size_t rows)
{
    int lane = threadIdx.x % 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t c = RN_K_TID() / 32; c < (size_t)C; c += warps) {
        double a = 0, b = 0;
        for (int p = lane; p < P; p += 32) a += part[((size_t)p * 2) * C + c], b += part[((size_t)p * 2 + 1) * C + c];
        for (int off = 16; off > 0; off >>= 1) {
            a += __shfl_xor_sync(0xffffffffu, a, off);
            b += __shfl_xor_sync(0xffffffffu, b, off);
        }
        if (lane) continue;
        if (mode == RED_PWDW) {
            dw[c] += (float)a;
            continue;
        }
        sums[c] = a;
        sums[C + c] = b;
        if (mode == RED_BN && c == 0) sums[2 * C] = (double)rows;
    }
}

template <int MODE, int CV>
static void red_launch(const rn_cuda_kctx *k, int t, dim3 grid, double *part, const void *x, const void *dy,
                       const void *ro, const float *aux, size_t rows, size_t per, int C)
{
    dim3 block(RED_TX, RED_TY);
    if (t == RN_NUM_BF16)
        k_red_partial<RN_NUM_BF16, MODE, CV><<<grid, block, 0, k->stream>>>(part, x, dy, ro, aux, rows, per, C);
    else if (t == RN_NUM_F16)
        k_red_partial<RN_NUM_F16, MODE, CV><<<grid, block, 0, k->stream>>>(part, x, dy, ro, aux, rows, per, C);
    else
        k_red_partial<RN_NUM_F32, MODE, CV><<<grid, block, 0, k->stream>>>(part, x, dy, ro, aux, rows, per, C);
}

static int aligned8(const void *p) { return ((uintptr_t)p & 7u) == 0; }

/* Two channels a thread (4- or 8-byte loads) when C is even and the activations allow it: the
 * partition over the rows, hence every sum's order, is the same either way. */
void rn_k_channel_reduce(const rn_cuda_kctx *k, int mode, int t, double *sums, float *dw, const void *x,
                         const void *dy, const void *ro, const float *aux, size_t rows, int C)
{
    int P;
    size_t per;
    rn_km_red_plan(&P, &per, rows, C, rn_k_partial_doubles(k));
    int cv = C % 2 == 0 && aligned8(x) && aligned8(dy) && aligned8(ro) ? 2 : 1;
    size_t ct = ((size_t)C + RED_TX * cv - 1) / (RED_TX * cv);
    double *part = rn_k_partial(k);
    dim3 grid((unsigned)ct, (unsigned)P);
    if (cv == 2 && mode == RED_BN) red_launch<RED_BN, 2>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    else if (cv == 2 && mode == RED_BNB) red_launch<RED_BNB, 2>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    else if (cv == 2) red_launch<RED_PWDW, 2>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    else if (mode == RED_BN) red_launch<RED_BN, 1>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    else if (mode == RED_BNB) red_launch<RED_BNB, 1>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    else red_launch<RED_PWDW, 1>(k, t, grid, part, x, dy, ro, aux, rows, per, C);
    k_red_final<<<rn_k_grid(k, (size_t)C * 32), RN_K_THREADS, 0, k->stream>>>(sums, dw, part, P, C, mode, rows);
}

extern "C" void rn_cuda_bn_sums(const rn_cuda_kctx *k, double *sums, const void *x, const rn_act_shape *a)
{
    rn_k_channel_reduce(k, RED_BN, a->type, sums, NULL, x, NULL, NULL, NULL, (size_t)a->n * a->h * a->w, a->c);
}

extern "C" void rn_cuda_bn_backward_sums(const rn_cuda_kctx *k, double *sums, const void *dy, const void *relu_out,
                                         const void *x, const float *mean, const rn_act_shape *a)
{
    rn_k_channel_reduce(k, RED_BNB, a->type, sums, NULL, x, dy, relu_out, mean, (size_t)a->n * a->h * a->w, a->c);
}

/* ---- per-channel ---- */

__global__ void k_bn_stats(float *mean, float *var, const double *sums, double count, int C)
{
    for (size_t c = RN_K_TID(); c < (size_t)C; c += RN_K_STRIDE())
        rn_km_bn_stats(mean + c, var + c, sums[c], sums[C + c], count);
}

extern "C" void rn_cuda_bn_stats(const rn_cuda_kctx *k, float *mean, float *var, const double *sums, double count,
                                 int C)
{
    if (C <= 0) return;
    k_bn_stats<<<rn_k_grid(k, (size_t)C), RN_K_THREADS, 0, k->stream>>>(mean, var, sums, count, C);
}

__global__ void k_bn_update_running(float *rmean, float *rvar, const float *mean, const float *var, double momentum,
                                    double unbias, int C)
{
    for (size_t c = RN_K_TID(); c < (size_t)C; c += RN_K_STRIDE())
        rn_km_bn_update_running(rmean + c, rvar + c, mean[c], var[c], momentum, unbias);
}

extern "C" void rn_cuda_bn_update_running(const rn_cuda_kctx *k, float *rmean, float *rvar, const float *mean,
                                          const float *var, double momentum, long count, int C)
{
    if (C <= 0) return;
    k_bn_update_running<<<rn_k_grid(k, (size_t)C), RN_K_THREADS, 0, k->stream>>>(
        rmean, rvar, mean, var, momentum, rn_km_bn_unbias((double)count), C);
}

__global__ void k_bn_fold(float *scale, float *shift, const float *mean, const float *var, const float *gamma,
                          const float *beta, int C)
{
    for (size_t c = RN_K_TID(); c < (size_t)C; c += RN_K_STRIDE())
        rn_km_bn_fold(scale + c, shift + c, mean[c], var[c], gamma[c], beta[c]);
}

extern "C" void rn_cuda_bn_fold(const rn_cuda_kctx *k, float *scale, float *shift, const float *mean,
                                const float *var, const float *gamma, const float *beta, int C)
{
    if (C <= 0) return;
    k_bn_fold<<<rn_k_grid(k, (size_t)C), RN_K_THREADS, 0, k->stream>>>(scale, shift, mean, var, gamma, beta, C);
}

__global__ void k_bn_backward_params(float *dgamma, float *dbeta, const double *sums, const float *var, int C)
{
    for (size_t c = RN_K_TID(); c < (size_t)C; c += RN_K_STRIDE())
        rn_km_bn_backward_params(dgamma + c, dbeta + c, sums[c], sums[C + c], var[c]);
}

extern "C" void rn_cuda_bn_backward_params(const rn_cuda_kctx *k, float *dgamma, float *dbeta, const double *sums,
                                           const float *var, int C)
{
    if (C <= 0) return;
    k_bn_backward_params<<<rn_k_grid(k, (size_t)C), RN_K_THREADS, 0, k->stream>>>(dgamma, dbeta, sums, var, C);
}

/* ---- backward data: per-channel coefficients into scratch, then elementwise ---- */

__global__ void k_bn_backward_coef(rn_km_bnb *coef, const float *var, const float *gamma, const double *sums,
                                   double count, int C)
{
    for (size_t c = RN_K_TID(); c < (size_t)C; c += RN_K_STRIDE())
        coef[c] = rn_km_bn_backward_coef(var[c], gamma[c], sums[c], sums[C + c], count);
}

template <int T, int V>
__global__ void k_bn_backward_data(void *dx, const void *dy, const void *ro, const void *x, const float *mean,
                                   const rn_km_bnb *coef, size_t packs, int C)
{
    size_t pr = (size_t)C / V;
    int fixed = RN_K_FIXED(pr), c0 = -1;
    rn_km_bnb b[V];
    float mv[V];
    for (size_t q = RN_K_TID(); q < packs; q += RN_K_STRIDE()) {
        size_t i0 = q * V;
        if (c0 < 0 || !fixed) {
            c0 = (int)(q % pr) * V;
            for (int j = 0; j < V; j++) b[j] = coef[c0 + j];
            rn_k_ldc<V>(mv, mean, c0);
        }
        float dyv[V], rov[V], xv[V];
        double out[V];
        rn_k_ldv<T, V>(dyv, dy, i0);
        rn_k_ldv<T, V>(xv, x, i0);
        if (ro) rn_k_ldv<T, V>(rov, ro, i0);
        else for (int j = 0; j < V; j++) rov[j] = 0.0f;
        for (int j = 0; j < V; j++)
            out[j] = rn_km_bn_backward_data(&b[j], rn_km_bn_dz(dyv[j], rov[j], ro != NULL), xv[j], mv[j]);
        rn_k_stv<T, V>(dx, i0, out);
    }
}

extern "C" void rn_cuda_bn_backward_data(const rn_cuda_kctx *k, void *dx, const void *dy, const void *relu_out,
                                         const void *x, const float *mean, const float *var, const float *gamma,
                                         const double *sums, double count, const rn_act_shape *a)
{
    size_t n = (size_t)a->n * a->h * a->w * a->c;
    if (!n) return;
    rn_km_bnb *coef = (rn_km_bnb *)rn_k_small(k);
    k_bn_backward_coef<<<rn_k_grid(k, (size_t)a->c), RN_K_THREADS, 0, k->stream>>>(coef, var, gamma, sums, count,
                                                                                  a->c);
    int vec = rn_k_vec8(a->c, dx, dy, relu_out, x);
    size_t packs = vec ? n / 8 : n;
    RN_K_LAUNCH_TV(a->type, vec, k_bn_backward_data, rn_k_grid(k, packs), RN_K_THREADS, k, dx, dy, relu_out, x, mean,
                   coef, packs, a->c);
}
