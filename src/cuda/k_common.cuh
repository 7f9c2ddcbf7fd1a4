/* Shared pieces of the kernel files src/cuda/k_*.cu (not part of the interface:
 * cuda/kernels.h is). Grid sizing, the scratch layout, typed launches and the
 * vectorised activation loads and stores (8 elements, 16-byte accesses).
 */
#ifndef RN_CUDA_K_COMMON_CUH
#define RN_CUDA_K_COMMON_CUH

#include <stdint.h>

#include "cuda/kernels.h"
#include "nn/kernel_math.h"

#define RN_K_THREADS 256
/* Scratch: a small region (per-channel coefficients, per-sample partials) and the partial sums of
 * the two-level channel reductions. */
#define RN_K_SMALL_BYTES ((size_t)1 << 20)
#define RN_K_SCRATCH_BYTES ((size_t)32 << 20)

static inline double *rn_k_small(const rn_cuda_kctx *k) { return (double *)k->scratch; }
static inline double *rn_k_partial(const rn_cuda_kctx *k) { return (double *)((char *)k->scratch + RN_K_SMALL_BYTES); }
static inline size_t rn_k_partial_doubles(const rn_cuda_kctx *k)
{
    return (k->scratch_bytes - RN_K_SMALL_BYTES) / sizeof(double);
}

/* Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed.
 * (A grid-stride loop's result never depends on the grid.) */
static inline unsigned rn_k_grid(const rn_cuda_kctx *k, size_t n)
{
    size_t b = (n + RN_K_THREADS - 1) / RN_K_THREADS, cap = (size_t)(k->sm_count > 0 ? k->sm_count : 132) * 8;
    return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

#define RN_K_TID() ((size_t)blockIdx.x * blockDim.x + threadIdx.x)
#define RN_K_STRIDE() ((size_t)gridDim.x * blockDim.x)

/* kern<T>(args) on the stream for activation type t (RN_NUM_F32, RN_NUM_BF16 or RN_NUM_F16). */
#define RN_K_LAUNCH_T(t, kern, grid, block, k, ...)                                                   \
    do {                                                                                              \
        if ((t) == RN_NUM_BF16) kern<RN_NUM_BF16><<<(grid), (block), 0, (k)->stream>>>(__VA_ARGS__);  \
        else if ((t) == RN_NUM_F16) kern<RN_NUM_F16><<<(grid), (block), 0, (k)->stream>>>(__VA_ARGS__); \
        else kern<RN_NUM_F32><<<(grid), (block), 0, (k)->stream>>>(__VA_ARGS__);                     \
    } while (0)

/* kern<T, V> with V = 8 when vec (every pointer 16-byte aligned, C % 8 == 0), else V = 1. */
#define RN_K_LAUNCH_TV(t, vec, kern, grid, block, k, ...)                                                  \
    do {                                                                                                   \
        cudaStream_t s_ = (k)->stream;                                                                     \
        if ((vec) && (t) == RN_NUM_BF16) kern<RN_NUM_BF16, 8><<<(grid), (block), 0, s_>>>(__VA_ARGS__);    \
        else if ((vec) && (t) == RN_NUM_F16) kern<RN_NUM_F16, 8><<<(grid), (block), 0, s_>>>(__VA_ARGS__); \
        else if (vec) kern<RN_NUM_F32, 8><<<(grid), (block), 0, s_>>>(__VA_ARGS__);                        \
        else if ((t) == RN_NUM_BF16) kern<RN_NUM_BF16, 1><<<(grid), (block), 0, s_>>>(__VA_ARGS__);        \
        else if ((t) == RN_NUM_F16) kern<RN_NUM_F16, 1><<<(grid), (block), 0, s_>>>(__VA_ARGS__);          \
        else kern<RN_NUM_F32, 1><<<(grid), (block), 0, s_>>>(__VA_ARGS__);                                 \
    } while (0)

/* The two-level per-channel reduction over rows x C of the NHWC activation x (type t), k_bn.cu:
 * RED_BN: sums (2C + 1) = (sum x, sum x^2, rows); RED_BNB: sums (2C) = (sum dz, sum dz (x - aux[c]))
 * with dz = dy masked by ro > 0 when ro; RED_PWDW: dw[c] += sum aux[row] x. */
enum { RED_BN = RN_KM_RED_BN, RED_BNB = RN_KM_RED_BNB, RED_PWDW = RN_KM_RED_PWDW };
void rn_k_channel_reduce(const rn_cuda_kctx *k, int mode, int t, double *sums, float *dw, const void *x,
                         const void *dy, const void *ro, const float *aux, size_t rows, int C);

static inline int rn_k_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* 1 if the 8-wide path may run: C % 8 == 0 and each non-NULL pointer 16-byte aligned. */
static inline int rn_k_vec8(int C, const void *a, const void *b, const void *c, const void *d)
{
    return C % 8 == 0 && rn_k_aligned(a) && rn_k_aligned(b) && rn_k_aligned(c) && rn_k_aligned(d);
}

/* V elements of an activation of type T from element i0 (i0 % V == 0), widened. */
template <int T, int V>
__device__ __forceinline__ void rn_k_ldv(float *f, const void *p, size_t i0)
{
    if (V == 8 && T == RN_NUM_F32) {
        const float4 *q = (const float4 *)((const float *)p + i0);
        float4 a = q[0], b = q[1];
        f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
    } else if (V == 8) {
        uint4 u = *(const uint4 *)((const uint16_t *)p + i0);
        uint32_t w[4] = {u.x, u.y, u.z, u.w};
        for (int j = 0; j < 4; j++) {
            f[2 * j] = rn_km_from16(T, (uint16_t)(w[j] & 0xffffu));
            f[2 * j + 1] = rn_km_from16(T, (uint16_t)(w[j] >> 16));
        }
    } else {
        for (int j = 0; j < V; j++) f[j] = rn_km_ld(p, T, i0 + j);
    }
}

/* 1 when every pack of a thread has the same channels: the grid stride (in packs) is a multiple of pr,
 * the packs per row. */
#define RN_K_FIXED(pr) (RN_K_STRIDE() % (pr) == 0)

/* V per-channel floats from channel c0. */
template <int V>
__device__ __forceinline__ void rn_k_ldc(float *f, const float *p, int c0)
{
    for (int j = 0; j < V; j++) f[j] = p[c0 + j];
}

/* V values stored from element i0, each rounded once to T. */
template <int T, int V>
__device__ __forceinline__ void rn_k_stv(void *p, size_t i0, const double *d)
{
    if (V == 8 && T == RN_NUM_F32) {
        float4 *q = (float4 *)((float *)p + i0);
        q[0] = make_float4((float)d[0], (float)d[1], (float)d[2], (float)d[3]);
        q[1] = make_float4((float)d[4], (float)d[5], (float)d[6], (float)d[7]);
    } else if (V == 8) {
        uint32_t w[4];
        for (int j = 0; j < 4; j++)
            w[j] = (uint32_t)rn_km_to16(T, d[2 * j]) | (uint32_t)rn_km_to16(T, d[2 * j + 1]) << 16;
        *(uint4 *)((uint16_t *)p + i0) = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
        for (int j = 0; j < V; j++) rn_km_st(p, T, i0 + j, d[j]);
    }
}

#endif
