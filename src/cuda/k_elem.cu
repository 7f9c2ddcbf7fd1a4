/* Elementwise kernels over NHWC activations (cuda/kernels.h): BN apply and the
 * block ends, ReLU backward, add, GAP backward, the fused-conv epilogue, fill.
 * Each thread takes packs of V consecutive elements of one row (8 with 16-byte
 * loads, or 1). A kernel with per-channel parameters loads them once per
 * thread when the grid stride is a multiple of the packs per row (then every
 * pack of a thread has the same channels; C a power of two times 8 or 16).
 */
#include "cuda/k_common.cuh"

/* An elementwise launch over an activation: packs of 8 elements (vec) when C % 8 == 0 and every pointer
 * it touches is 16-byte aligned, else of 1. */
typedef struct elem_plan {
    size_t packs;
    int vec;
} elem_plan;

static elem_plan elem_plan_of(const rn_act_shape *a, const void *p0, const void *p1, const void *p2)
{
    size_t n = (size_t)a->n * a->h * a->w * a->c;
    int vec = rn_k_vec8(a->c, p0, p1, p2, NULL);
    return {vec ? n / 8 : n, vec};
}

/* kern<T, V> over the activation a as planned by e (nothing when a is empty); the arguments name e.packs. */
#define ELEM_LAUNCH(k, a, e, kern, ...)                                                                                \
    do {                                                                                                               \
        if ((e).packs)                                                                                                 \
            RN_K_LAUNCH_TV((a)->type, (e).vec, kern, rn_k_grid(k, (e).packs), RN_K_THREADS, k, __VA_ARGS__);           \
    } while (0)

/* Per-channel vectors (C) of an elementwise op, by value in its kernel's arguments. */
typedef struct chan_par {
    const float *v[4];
} chan_par;

/* Element j of a pack: OP 0 BN (+ ReLU if flag), 1 BN + residual b + ReLU, 2 two BNs (b the second
 * input) + ReLU, 3 bias + residual b (0 without one) (+ ReLU if flag), 4 ReLU backward (a the gradient,
 * b the ReLU's output), 5 a + b: nn/kernel_math.h's arithmetic. */
template <int OP, int V>
__device__ __forceinline__ double chan_apply(int j, float a, float b, const float (*pv)[V], int flag)
{
    if (OP == 0) return rn_km_bn_apply(a, pv[0][j], pv[1][j], flag);
    if (OP == 1) return rn_km_bn_add_relu(a, pv[0][j], pv[1][j], b);
    if (OP == 2) return rn_km_bn2_add_relu(a, pv[0][j], pv[1][j], b, pv[2][j], pv[3][j]);
    if (OP == 3) return rn_km_bias_add_relu(a, pv[0][j], b, flag);
    if (OP == 4) return rn_km_relu_masked(b) ? 0.0 : (double)a;
    return rn_km_add(a, b);
}

/* y = OP(x, x2) over the packs, with NP (0 to 4) per-channel vectors of p; x2 may be NULL (read as 0);
 * y may be x or x2. The one kernel of the elementwise ops: a thread loads its channels' vectors once
 * when all its packs have the same channels (RN_K_FIXED), else per pack. */
template <int T, int V, int OP, int NP>
__global__ void k_chan(void *y, const void *x, const void *x2, chan_par p, int flag, size_t packs, int C)
{
    size_t pr = (size_t)C / V;
    int fixed = RN_K_FIXED(pr), c0 = -1;
    float pv[NP > 0 ? NP : 1][V];
    for (size_t q = RN_K_TID(); q < packs; q += RN_K_STRIDE()) {
        size_t i0 = q * V;
        if (NP && (c0 < 0 || !fixed)) {
            c0 = (int)(q % pr) * V;
            for (int k = 0; k < NP; k++) rn_k_ldc<V>(pv[k], p.v[k], c0);
        }
        float a[V], b[V];
        double out[V];
        rn_k_ldv<T, V>(a, x, i0);
        if (x2) rn_k_ldv<T, V>(b, x2, i0);
        else for (int j = 0; j < V; j++) b[j] = 0.0f;
        for (int j = 0; j < V; j++) out[j] = chan_apply<OP, V>(j, a[j], b[j], pv, flag);
        rn_k_stv<T, V>(y, i0, out);
    }
}

/* k_chan<T, V, OP, NP> over the activation a (its type; packs of 8 where elem_plan_of allows), on k's stream. */
template <int OP, int NP>
static void chan_launch(const rn_cuda_kctx *k, const rn_act_shape *a, void *y, const void *x, const void *x2,
                        chan_par p, int flag)
{
    elem_plan e = elem_plan_of(a, y, x, x2);
    if (!e.packs) return;
    unsigned grid = rn_k_grid(k, e.packs);
    cudaStream_t s = k->stream;
    rn_numtype t = a->type;
    size_t n = e.packs;
    int C = a->c;
    if (e.vec && t == RN_NUM_BF16)
        k_chan<RN_NUM_BF16, 8, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
    else if (e.vec && t == RN_NUM_F16)
        k_chan<RN_NUM_F16, 8, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
    else if (e.vec) k_chan<RN_NUM_F32, 8, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
    else if (t == RN_NUM_BF16) k_chan<RN_NUM_BF16, 1, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
    else if (t == RN_NUM_F16) k_chan<RN_NUM_F16, 1, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
    else k_chan<RN_NUM_F32, 1, OP, NP><<<grid, RN_K_THREADS, 0, s>>>(y, x, x2, p, flag, n, C);
}

extern "C" void rn_cuda_bn_apply(const rn_cuda_kctx *k, void *y, const void *x, const float *scale,
                                 const float *shift, int relu, const rn_act_shape *a)
{
    chan_launch<0, 2>(k, a, y, x, NULL, chan_par{{scale, shift}}, relu);
}

extern "C" void rn_cuda_bn_add_relu(const rn_cuda_kctx *k, void *y, const void *x, const float *scale,
                                    const float *shift, const void *r, const rn_act_shape *a)
{
    chan_launch<1, 2>(k, a, y, x, r, chan_par{{scale, shift}}, 1);
}

extern "C" void rn_cuda_bn2_add_relu(const rn_cuda_kctx *k, void *y, const void *x1, const float *s1, const float *h1,
                                     const void *x2, const float *s2, const float *h2, const rn_act_shape *a)
{
    chan_launch<2, 4>(k, a, y, x1, x2, chan_par{{s1, h1, s2, h2}}, 1);
}

/* d = 0 where y <= 0 (8-wide: the pack is rewritten, the others unchanged). */
extern "C" void rn_cuda_relu_backward(const rn_cuda_kctx *k, void *d, const void *y, const rn_act_shape *a)
{
    chan_launch<4, 0>(k, a, d, d, y, chan_par{}, 0);
}

extern "C" void rn_cuda_add(const rn_cuda_kctx *k, void *y, const void *x, const rn_act_shape *a)
{
    chan_launch<5, 0>(k, a, y, y, x, chan_par{}, 0);
}

/* dx (N, HW, C) += dout (N, C) / HW. */
template <int T, int V>
__global__ void k_gap_backward(void *dx, const float *dout, size_t packs, int C, int HW)
{
    for (size_t q = RN_K_TID(); q < packs; q += RN_K_STRIDE()) {
        size_t i0 = q * V, row = i0 / (size_t)C;
        int c0 = (int)(i0 - row * C);
        const float *dn = dout + row / (size_t)HW * C;
        float xv[V];
        double out[V];
        rn_k_ldv<T, V>(xv, dx, i0);
        for (int j = 0; j < V; j++) out[j] = rn_km_gap_backward(xv[j], dn[c0 + j], HW);
        rn_k_stv<T, V>(dx, i0, out);
    }
}

extern "C" void rn_cuda_gap_backward(const rn_cuda_kctx *k, void *dx, const float *dout, const rn_act_shape *a)
{
    elem_plan e = elem_plan_of(a, dx, NULL, NULL);
    ELEM_LAUNCH(k, a, e, k_gap_backward, dx, dout, e.packs, a->c, a->h * a->w);
}

extern "C" void rn_cuda_bias_add_relu(const rn_cuda_kctx *k, void *y, const void *x, const float *bias,
                                      const void *r, int relu, const rn_act_shape *a)
{
    chan_launch<3, 1>(k, a, y, x, r, chan_par{{bias}}, relu);
}

__global__ void k_fill(float *buf, float value, size_t n)
{
    for (size_t i = RN_K_TID(); i < n; i += RN_K_STRIDE()) buf[i] = value;
}

extern "C" void rn_cuda_fill(const rn_cuda_kctx *k, float *buf, float value, size_t n)
{
    if (!n) return;
    k_fill<<<rn_k_grid(k, n), RN_K_THREADS, 0, k->stream>>>(buf, value, n);
}

template <int T>
__global__ void k_cast_f32(void *dst, const float *src, size_t n)
{
    for (size_t i = RN_K_TID(); i < n; i += RN_K_STRIDE()) rn_km_st_f32(dst, T, i, src[i]);
}

extern "C" void rn_cuda_cast_f32(const rn_cuda_kctx *k, void *dst, rn_numtype t, const float *src, size_t n)
{
    if (!n) return;
    RN_K_LAUNCH_T(t, k_cast_f32, rn_k_grid(k, n), RN_K_THREADS, k, dst, src, n);
}

size_t rn_cuda_kctx_scratch_bytes(void) { return RN_K_SCRATCH_BYTES; }
