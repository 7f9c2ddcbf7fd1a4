#include "cpu/kernels.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "core/status.h"
#include "nn/kernel_math.h"

#define L 16 /* channel block */

/* take ? a : b, as a bit mask: the same value in a form GCC vectorises (it leaves
 * that ?: on floats scalar, "control flow in loop"). */
static inline float pick(float a, float b, int take)
{
    uint32_t ia, ib, mask = -(uint32_t)(take != 0);
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    ia = (ia & mask) | (ib & ~mask);
    memcpy(&a, &ia, sizeof a);
    return a;
}

/* ---- the pointwise conv of many outputs (PoseNet's head: 256 -> J x 64 channels) as register tiles ----
 * A tile is PW_MR rows (outputs, or input channels for dx) by PW_P positions (PW_NV vectors of 16);
 * every element is one running float sum in a fixed order, one fused multiply-add per term, so the
 * AVX-512 tile and its portable twin give the same bits whatever the thread count. */
#define PW_MIN_O 16 /* fewer outputs (RootNet's 1): the per-output loops below */
#define PW_MR 6     /* rows of a register tile ... */
#define PW_NV 4     /* ... by vectors of 16 positions */
#define PW_P (16 * PW_NV) /* positions of a tile */
#define PW_CC 256   /* input channels of a stack tile (xt, dxt) */
#define PW_OC 256   /* outputs of dx's staged dy tile */
#define PW_WR 6     /* dw register tile: outputs ... */
#define PW_WV 4     /* ... by channel blocks of 16 */
#define PW_WC 128   /* dw's stack tile: channels ... */
#define PW_WO 96    /* ... by outputs */
#define PW_WP 128   /* positions summed in float before the double tile */
/* Unrolls a loop over a register tile before GCC's scalar replacement, which then keeps the tile's
 * vectors in registers (a loop left rolled spills them to the stack at every step). */
#define PW_UNROLL _Pragma("GCC unroll 16")

static inline int pw_min(int a, int b) { return a < b ? a : b; }

/* out[r, j] = (load ? out[r, j] : 0) + sum_k a_r[k * aks] b[k * ldb + j] (+ bias[r]) for r < nr <= PW_MR,
 * j < np <= PW_P, where a_r = a + r * ars; the sum runs in k order, the bias is added last. */
#ifdef __AVX512F__
static void pw_tile(float *out /* (nr, ldo) */, size_t ldo, const float *a, size_t ars, size_t aks,
                    const float *b /* (K, ldb) */, size_t ldb, const float *bias /* (nr) or NULL */, int K, int nr,
                    int np, int load)
{
    __mmask16 m[PW_NV];
    PW_UNROLL
    for (int v = 0; v < PW_NV; v++) {
        int lo = 16 * v;
        m[v] = np >= lo + 16 ? 0xFFFF : np > lo ? (__mmask16)((1u << (np - lo)) - 1) : 0;
    }
    const float *ar[PW_MR];
    __m512 c[PW_MR][PW_NV];
    PW_UNROLL
    for (int r = 0; r < PW_MR; r++) {
        int rr = r < nr ? r : nr - 1; /* rows past nr repeat the last one and are not stored */
        ar[r] = a + rr * ars;
        PW_UNROLL
        for (int v = 0; v < PW_NV; v++)
            c[r][v] = load ? _mm512_maskz_loadu_ps(m[v], out + rr * ldo + 16 * v) : _mm512_setzero_ps();
    }
    for (int k = 0; k < K; k++) {
        __m512 bv[PW_NV];
        PW_UNROLL
        for (int v = 0; v < PW_NV; v++) bv[v] = _mm512_maskz_loadu_ps(m[v], b + k * ldb + 16 * v);
        PW_UNROLL
        for (int r = 0; r < PW_MR; r++) {
            __m512 av = _mm512_set1_ps(ar[r][k * aks]);
            PW_UNROLL
            for (int v = 0; v < PW_NV; v++) c[r][v] = _mm512_fmadd_ps(av, bv[v], c[r][v]);
        }
    }
    PW_UNROLL
    for (int r = 0; r < PW_MR; r++) {
        if (r >= nr) break;
        PW_UNROLL
        for (int v = 0; v < PW_NV; v++) {
            if (bias) c[r][v] = _mm512_add_ps(c[r][v], _mm512_set1_ps(bias[r]));
            _mm512_mask_storeu_ps(out + r * ldo + 16 * v, m[v], c[r][v]);
        }
    }
}
#else
static void pw_tile(float *out /* (nr, ldo) */, size_t ldo, const float *a, size_t ars, size_t aks,
                    const float *b /* (K, ldb) */, size_t ldb, const float *bias /* (nr) or NULL */, int K, int nr,
                    int np, int load)
{
    for (int r = 0; r < nr; r++) {
        float acc[PW_P];
        for (int j = 0; j < np; j++) acc[j] = load ? out[r * ldo + j] : 0.0f;
        for (int k = 0; k < K; k++) {
            float av = a[r * ars + k * aks];
            for (int j = 0; j < np; j++) acc[j] = fmaf(av, b[k * ldb + j], acc[j]);
        }
        for (int j = 0; j < np; j++) out[r * ldo + j] = bias ? acc[j] + bias[r] : acc[j];
    }
}
#endif

/* s[o] = sum over n and p of dy[n, o, p]: 16 float lanes per 256 positions, then double; db[o] += s. */
static void pw_bias_grad(float *db /* (O) */, const float *dy /* (N, O, HW) */, int N, int HW, int O)
{
#pragma omp parallel for schedule(static)
    for (int o = 0; o < O; o++) {
        double s = 0;
        for (int n = 0; n < N; n++) {
            const float *g = dy + ((size_t)n * O + o) * HW;
            for (int p0 = 0; p0 < HW; p0 += 256) {
                float lane[L] = {0};
                int pe = p0 + 256 < HW ? p0 + 256 : HW, p = p0;
                for (; p + L <= pe; p += L)
                    for (int l = 0; l < L; l++) lane[l] += g[p + l];
                for (; p < pe; p++) lane[0] += g[p];
                for (int l = 0; l < L; l++) s += lane[l];
            }
        }
        db[o] += (float)s;
    }
}

/* ---- soft-argmax over a volume (D > 1: PoseNet's D depth bins of H x W) ----
 * exp in float (sa_expf); the sums per column of a tile of SA_WB columns over the H rows of a plane, then
 * over the plane and the planes, in double; no per-element division or modulo. RootNet's maps (D = 1)
 * keep the loops of rn_softargmax_forward / _backward. Each row is one thread's, in a fixed order. */
#define SA_WB 256            /* columns of a stack tile */
#define SA_EXP_MIN (-87.33f) /* below: e^x < FLT_MIN, taken as 0 */
#define SA_LOG2E 1.44269504f
#define SA_SHIFT 12582912.0f /* 1.5 2^23: the low bits of x / ln2 + SA_SHIFT hold n = round(x / ln2) */
#define SA_LN2_HI 0.693359375f
#define SA_LN2_LO (-2.12194440e-4f)
/* Cephes' expf polynomial for e^r, the highest power's coefficient first */
static const float SA_EXP_P[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/* e^x for x <= 0 in float: x = n ln2 + r (Cody-Waite, ln2 in two parts, n exact), |r| <= ln2 / 2, and
 * Cephes' expf polynomial for e^r; 0 below SA_EXP_MIN, NaN for NaN. At most 0.98 ulp from e^x over every
 * float in [SA_EXP_MIN, 0] (checked against exp). No branch: GCC vectorises it. */
static inline float sa_expf(float x)
{
    float xc = pick(SA_EXP_MIN, x, x < SA_EXP_MIN);
    float t = xc * SA_LOG2E + SA_SHIFT;
    float n = t - SA_SHIFT;
    float r = (xc - n * SA_LN2_HI) - n * SA_LN2_LO;
    float p = SA_EXP_P[0];
    for (int i = 1; i < 6; i++) p = p * r + SA_EXP_P[i];
    p = p * (r * r) + r + 1.0f;
    int32_t ti;
    memcpy(&ti, &t, sizeof ti);
    uint32_t sb = (uint32_t)(ti - 0x4B400000 + 127) << 23; /* 2^n, n in [-126, 0] */
    float s;
    memcpy(&s, &sb, sizeof s);
    return pick(0.0f, p * s, x < SA_EXP_MIN);
}

#ifdef __AVX512F__
/* sa_expf on 16 lanes, the same operations in the same order (so the same bits). */
static inline __m512 sa_expf16(__m512 x)
{
    __mmask16 low = _mm512_cmp_ps_mask(x, _mm512_set1_ps(SA_EXP_MIN), _CMP_LT_OQ);
    __m512 xc = _mm512_mask_blend_ps(low, x, _mm512_set1_ps(SA_EXP_MIN));
    __m512 t = _mm512_add_ps(_mm512_mul_ps(xc, _mm512_set1_ps(SA_LOG2E)), _mm512_set1_ps(SA_SHIFT));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(SA_SHIFT));
    __m512 r = _mm512_sub_ps(_mm512_sub_ps(xc, _mm512_mul_ps(n, _mm512_set1_ps(SA_LN2_HI))),
                             _mm512_mul_ps(n, _mm512_set1_ps(SA_LN2_LO)));
    __m512 p = _mm512_set1_ps(SA_EXP_P[0]);
    for (int i = 1; i < 6; i++) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(SA_EXP_P[i]));
    p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), _mm512_set1_ps(1.0f));
    __m512i sb = _mm512_slli_epi32(
        _mm512_add_epi32(_mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4B400000)), _mm512_set1_epi32(127)),
        23);
    return _mm512_maskz_mov_ps((__mmask16)~low, _mm512_mul_ps(p, _mm512_castsi512_ps(sb)));
}

/* a[0..16) += u, b[0..16) += h u, in double, u's 16 floats. */
static inline void sa_acc16(double *a, double *b, __m512 u, __m512d h)
{
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(u));
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(u), 1)));
    _mm512_storeu_pd(a, _mm512_add_pd(_mm512_loadu_pd(a), lo));
    _mm512_storeu_pd(a + 8, _mm512_add_pd(_mm512_loadu_pd(a + 8), hi));
    _mm512_storeu_pd(b, _mm512_add_pd(_mm512_loadu_pd(b), _mm512_mul_pd(h, lo)));
    _mm512_storeu_pd(b + 8, _mm512_add_pd(_mm512_loadu_pd(b + 8), _mm512_mul_pd(h, hi)));
}
#endif

/* One row of nw columns: u = e^(v - mx) where ex (stored in eo unless NULL; eo may equal v), else v;
 * a[w] += u, b[w] += h u in double. The AVX-512 lanes and the scalar tail compute the same bits. */
static void sa_row(double *a /* (nw) */, double *b /* (nw) */, float *eo /* (nw) or NULL */, const float *v /* (nw) */,
                   float mx, int ex, int h, int nw)
{
    int w = 0;
#ifdef __AVX512F__
    __m512d hv = _mm512_set1_pd((double)h);
    for (; w + 16 <= nw; w += 16) {
        __m512 u = _mm512_loadu_ps(v + w);
        if (ex) u = sa_expf16(_mm512_sub_ps(u, _mm512_set1_ps(mx)));
        if (eo) _mm512_storeu_ps(eo + w, u);
        sa_acc16(a + w, b + w, u, hv);
    }
#endif
    for (; w < nw; w++) {
        float u = ex ? sa_expf(v[w] - mx) : v[w];
        if (eo) eo[w] = u;
        a[w] += u;
        b[w] += (double)h * u;
    }
}

/* The largest of v (the first 16 lanes' maxima combined; NaN never taken, as the D = 1 loop). */
static float sa_max(const float *v /* (V) */, size_t V)
{
    float m[16];
    for (int j = 0; j < 16; j++) m[j] = -INFINITY;
    size_t p = 0;
#ifdef __AVX512F__
    __m512 mv[4]; /* four running maxima: the compare-and-move chain of one would bound the loop */
    for (int j = 0; j < 4; j++) mv[j] = _mm512_set1_ps(-INFINITY);
    for (; p + 64 <= V; p += 64)
        for (int j = 0; j < 4; j++) {
            __m512 x = _mm512_loadu_ps(v + p + 16 * j);
            mv[j] = _mm512_mask_mov_ps(mv[j], _mm512_cmp_ps_mask(x, mv[j], _CMP_GT_OQ), x);
        }
    for (; p + 16 <= V; p += 16) {
        __m512 x = _mm512_loadu_ps(v + p);
        mv[0] = _mm512_mask_mov_ps(mv[0], _mm512_cmp_ps_mask(x, mv[0], _CMP_GT_OQ), x);
    }
    for (int j = 1; j < 4; j++) mv[0] = _mm512_mask_mov_ps(mv[0], _mm512_cmp_ps_mask(mv[j], mv[0], _CMP_GT_OQ), mv[j]);
    _mm512_storeu_ps(m, mv[0]);
#endif
    for (; p + 16 <= V; p += 16)
        for (int j = 0; j < 16; j++) m[j] = pick(v[p + j], m[j], v[p + j] > m[j]);
    float mx = -INFINITY;
    for (; p < V; p++) mx = v[p] > mx ? v[p] : mx;
    for (int j = 0; j < 16; j++) mx = m[j] > mx ? m[j] : mx;
    return mx;
}

/* ---- PoseNet's heat-map layer in inference: the 1x1 conv and the soft-argmax fused (rn_heat_forward) ----
 * Per sample and tile of PW_P positions, the logits of HEAT_ROWS / D groups at a time into a stack tile;
 * each group's tile gives its largest logit m and the sums of e^(v - m), times column, row and depth bin
 * (heat_tile); the tiles' sums are combined in tile order (heat_combine), whatever the thread count. */
#define HEAT_ROWS 256 /* logit rows of a stack tile */
#define HEAT_PART 5   /* per tile and group: m, sum e, sum e column, sum e row, sum e bin */

/* pt = {m, sums} of one group's tile yt (D rows of PW_P positions, the first np of them from p0 on). */
static void heat_tile(double *pt /* (HEAT_PART) */, const float *yt /* (D, PW_P) */, int D, int W, int p0, int np)
{
    float m = -INFINITY;
    for (int d = 0; d < D; d++) {
        float md = sa_max(yt + (size_t)d * PW_P, (size_t)np);
        m = md > m ? md : m;
    }
    double a[PW_P] = {0}, z[PW_P] = {0}; /* per position: sum e, sum e bin */
    for (int d = 0; d < D; d++) sa_row(a, z, NULL, yt + (size_t)d * PW_P, m, 1, d, np);
    double s = 0, sx = 0, sy = 0, sz = 0;
    for (int j = 0; j < np; j++) {
        int p = p0 + j;
        s += a[j];
        sx += (double)(p % W) * a[j];
        sy += (double)(p / W) * a[j];
        sz += z[j];
    }
    pt[0] = m, pt[1] = s, pt[2] = sx, pt[3] = sy, pt[4] = sz;
}

/* out[r * os + k] = (sum over tiles of sums[k + 1] e^(m - M)) / (the same of sum e), M the largest m. */
static void heat_combine(float *out /* (N*G, os) */, const double *part /* (N, T, G, HEAT_PART) */, int N, int G,
                         int T, int os)
{
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)N * G; r++) {
        const double *pr = part + ((size_t)(r / G) * T * G + r % G) * HEAT_PART;
        size_t ts = (size_t)G * HEAT_PART;
        double M = -INFINITY, s[4] = {0};
        for (int t = 0; t < T; t++) M = pr[t * ts] > M ? pr[t * ts] : M;
        for (int t = 0; t < T; t++) {
            const double *q = pr + t * ts;
            double f = exp(q[0] - M);
            for (int k = 0; k < 4; k++) s[k] += q[k + 1] * f;
        }
        for (int k = 0; k < 3; k++) out[r * os + k] = (float)(s[k + 1] / s[0]);
    }
}

size_t rn_heat_scratch_bytes(int N, int G, int H, int W)
{
    return (size_t)N * ((size_t)(H * W + PW_P - 1) / PW_P) * G * HEAT_PART * sizeof(double);
}

#define ACT float
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define LDV(p) _mm512_loadu_ps(p) /* 16 values as floats (AVX-512 only) */
#define FN(name) name
#include "cpu/kernels_act.inc"
#undef ACT
#undef LD
#undef ST
#undef LDV
#undef FN

#define ACT rn_bf16
#define LD(p, i) rn_bf16_to_f32((p)[i])
#define ST(p, i, v) ((p)[i] = rn_bf16_from_f32(v))
#define LDV(p)                                                                                                         \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define FN(name) name##_bf16
#include "cpu/kernels_act.inc"
#undef ACT
#undef LD
#undef ST
#undef LDV
#undef FN

void rn_bn_stats_from_sums(float *mean, float *var, const double *sums, double count, int C)
{
    for (int c = 0; c < C; c++) {
        double m = sums[c] / count, v = sums[C + c] / count - m * m;
        mean[c] = (float)m;
        var[c] = (float)(v > 0 ? v : 0);
    }
}

void rn_bn_stats(float *mean, float *var, double *sums, const float *x, int N, int C, int HW)
{
    rn_bn_sums(sums, x, N, C, HW);
    rn_bn_stats_from_sums(mean, var, sums, (double)N * HW, C);
}

void rn_bn_fold(float *scale, float *shift, float *invstd, const float *mean, const float *var, const float *gamma,
                const float *beta, int C)
{
    for (int c = 0; c < C; c++) {
        float is = (float)(1.0 / sqrt((double)var[c] + RN_BN_EPS));
        if (invstd) invstd[c] = is;
        scale[c] = gamma[c] * is;
        shift[c] = beta[c] - mean[c] * scale[c];
    }
}

void rn_bn_update_running(float *rmean, float *rvar, const float *mean, const float *var, double momentum, long count,
                          int C)
{
    double unbias = count > 1 ? (double)count / (double)(count - 1) : 1.0;
    for (int c = 0; c < C; c++) {
        rmean[c] = (float)((1 - momentum) * rmean[c] + momentum * mean[c]);
        rvar[c] = (float)((1 - momentum) * rvar[c] + momentum * var[c] * unbias);
    }
}

void rn_bn_backward_params(float *dgamma, float *dbeta, const double *sums, const float *var, int C)
{
    for (int c = 0; c < C; c++) {
        double is = 1.0 / sqrt((double)var[c] + RN_BN_EPS);
        dgamma[c] += (float)(sums[C + c] * is);
        dbeta[c] += (float)sums[c];
    }
}

void rn_bn_backward(float *dx, float *dgamma, float *dbeta, double *sums, const float *dy, const float *relu_out,
                    const float *x, const float *mean, const float *var, const float *gamma, int N, int C, int HW)
{
    rn_bn_backward_sums(sums, dy, relu_out, x, mean, N, C, HW);
    rn_bn_backward_params(dgamma, dbeta, sums, var, C);
    rn_bn_backward_data(dx, dy, relu_out, x, mean, var, gamma, sums, (double)N * HW, N, C, HW);
}

/* Sums of a D x H x W volume u: m[0] = sum u, m[1] = sum u column, m[2] = sum u row, m[3] = sum u depth bin;
 * u = v where ex is 0, else u = e^(v - mx), stored in e unless e is NULL (e may equal v). */
static void sa_moments(double m[4], float *e /* (D, H, W) or NULL */, const float *v /* (D, H, W) */, float mx,
                       int ex, int D, int H, int W)
{
    double s = 0, sx = 0, sy = 0, sz = 0;
    for (int d = 0; d < D; d++) {
        double sp = 0;
        for (int w0 = 0; w0 < W; w0 += SA_WB) {
            int nw = pw_min(SA_WB, W - w0);
            double a[SA_WB] = {0}, b[SA_WB] = {0}; /* per column: sum u, sum u row */
            for (int h = 0; h < H; h++) {
                size_t o = ((size_t)d * H + h) * W + w0;
                sa_row(a, b, ex && e ? e + o : NULL, v + o, mx, ex, h, nw);
            }
            for (int w = 0; w < nw; w++) {
                sp += a[w];
                sx += (double)(w0 + w) * a[w];
                sy += b[w];
            }
        }
        s += sp;
        sz += (double)d * sp;
    }
    m[0] = s, m[1] = sx, m[2] = sy, m[3] = sz;
}

static void sa_volume_forward(float *o /* (3) */, float *pr /* (D*H*W) or NULL */, const float *lg /* (D*H*W) */,
                              int D, int H, int W)
{
    size_t V = (size_t)D * H * W;
    double m[4];
    sa_moments(m, pr, lg, sa_max(lg, V), 1, D, H, W);
    double inv = 1 / m[0];
    if (pr)
        for (size_t p = 0; p < V; p++) pr[p] = (float)(pr[p] * inv);
    for (int j = 0; j < 3; j++) o[j] = (float)(m[j + 1] * inv);
}

/* dl = pr (g . pos - dot), dot = sum pr g . pos = g0 sum pr column + g1 sum pr row + g2 sum pr depth bin. */
static void sa_volume_backward(float *dl /* (D*H*W) */, const float *pr /* (D*H*W) */, const float *g /* (3) */,
                               int D, int H, int W)
{
    double m[4];
    sa_moments(m, NULL, pr, 0, 0, D, H, W);
    double g0 = g[0], dot = g0 * m[1] + (double)g[1] * m[2] + (double)g[2] * m[3];
    for (int d = 0; d < D; d++)
        for (int h = 0; h < H; h++) {
            size_t o = ((size_t)d * H + h) * W;
            double c = (double)g[1] * h + (double)g[2] * d - dot;
            for (int w = 0; w < W; w++) dl[o + w] = (float)(pr[o + w] * (g0 * w + c));
        }
}

void rn_softargmax_forward(float *out, float *prob, const float *logits, int N, int G, int D, int H, int W, int os)
{
    int V = D * H * W;
    if (D > 1) {
#pragma omp parallel for schedule(static)
        for (long r = 0; r < (long)N * G; r++)
            sa_volume_forward(out + r * os, prob ? prob + (size_t)r * V : NULL, logits + (size_t)r * V, D, H, W);
        return;
    }
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)N * G; r++) {
        const float *lg = logits + (size_t)r * V;
        float *pr = prob ? prob + (size_t)r * V : NULL;
        float mx = -INFINITY;
        for (int p = 0; p < V; p++) mx = lg[p] > mx ? lg[p] : mx;
        double s = 0;
        for (int p = 0; p < V; p++) s += exp((double)lg[p] - mx);
        double sx = 0, sy = 0, sz = 0;
        for (int p = 0; p < V; p++) {
            double e = exp((double)lg[p] - mx) / s;
            if (pr) pr[p] = (float)e;
            sx += e * (p % W);
            sy += e * (p / W % H);
            sz += e * (p / (H * W));
        }
        out[r * os] = (float)sx;
        out[r * os + 1] = (float)sy;
        if (D > 1) out[r * os + 2] = (float)sz;
    }
}

void rn_softargmax_backward(float *dlogits, const float *prob, const float *dout, int N, int G, int D, int H, int W,
                            int os)
{
    int V = D * H * W;
    if (D > 1) {
#pragma omp parallel for schedule(static)
        for (long r = 0; r < (long)N * G; r++)
            sa_volume_backward(dlogits + (size_t)r * V, prob + (size_t)r * V, dout + r * os, D, H, W);
        return;
    }
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)N * G; r++) {
        const float *pr = prob + (size_t)r * V;
        float *dl = dlogits + (size_t)r * V;
        const float *g = dout + r * os;
        double dot = 0;
        for (int p = 0; p < V; p++) dot += pr[p] * rn_km_sa_gpos(g, p, D, H, W);
        for (int p = 0; p < V; p++) dl[p] = (float)(pr[p] * (rn_km_sa_gpos(g, p, D, H, W) - dot));
    }
}

void rn_linear_forward(float *y, const float *x, const float *w, const float *b, const float *rs, int N, int C, int O,
                       int ys)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            double s = 0;
            for (int c = 0; c < C; c++) s += (double)x[(size_t)n * C + c] * w[(size_t)o * C + c];
            float pre = (float)(s + b[o]);
            y[(size_t)n * ys + o] = rs ? pre * rs[n] : pre;
        }
}

void rn_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                        const float *rs, int N, int C, int O, int ys)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            float dg = rs ? dy[(size_t)n * ys + o] * rs[n] : dy[(size_t)n * ys + o];
            db[o] += dg;
            for (int c = 0; c < C; c++) {
                dw[(size_t)o * C + c] += dg * x[(size_t)n * C + c];
                float v = dg * w[(size_t)o * C + c];
                dx[(size_t)n * C + c] = o ? dx[(size_t)n * C + c] + v : v;
            }
        }
}

static float sgn(float x) { return (float)((x > 0) - (x < 0)); }

double rn_l1_loss(float *dpred, const float *pred, const float *target, const float *vis, const float *have_depth,
                  float scale, int N, int K)
{
    double loss = 0;
    float s = 1.0f / (3.0f * (float)(N * K));
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) {
            size_t r = (size_t)n * K + k;
            const float *c = pred + 3 * r, *t = target + 3 * r;
            float v = vis[r];
            loss += (fabs((double)c[0] - t[0]) * v + fabs((double)c[1] - t[1]) * v +
                     fabs((double)c[2] - t[2]) * v * have_depth[n]) / 3.0;
            if (!dpred) continue;
            dpred[3 * r] = sgn(c[0] - t[0]) * v * s * scale;
            dpred[3 * r + 1] = sgn(c[1] - t[1]) * v * s * scale;
            dpred[3 * r + 2] = sgn(c[2] - t[2]) * v * have_depth[n] * s * scale;
        }
    return loss / ((double)N * K);
}

void rn_adam_update(float *param, const float *grad, float *m, float *v, size_t n, const rn_adam_args *h)
{
    /* PyTorch's single-tensor Adam, with its scalars rounded to float as its kernels do. */
    const float b1 = (float)h->beta1, b2 = (float)h->beta2;
    const float a1 = (float)(1.0 - h->beta1), a2 = (float)(1.0 - h->beta2);
    const float step_size = (float)h->sched[0], bc2_sqrt = (float)h->sched[1], eps = (float)h->eps;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = grad[i];
        float mi = m[i] * b1 + a1 * g;
        float vi = v[i] * b2 + a2 * g * g;
        m[i] = mi;
        v[i] = vi;
        float denom = sqrtf(vi) / bc2_sqrt + eps;
        param[i] = param[i] + (-step_size * mi) / denom;
    }
}

void rn_zero_bytes(void *buf, size_t bytes)
{
    enum { PAGE = 4096, MIN_SPLIT = 1 << 20 };
    if (bytes < MIN_SPLIT) {
        memset(buf, 0, bytes);
        return;
    }
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t piece = (bytes / nt + PAGE - 1) / PAGE * PAGE, lo = t * piece, hi = lo + piece;
        if (hi > bytes) hi = bytes;
        if (lo < hi) memset((char *)buf + lo, 0, hi - lo);
    }
}

int rn_unscale_check(float *grad, size_t n, float inv_scale)
{
    float acc = 0.0f;
    if (inv_scale == 1.0f) {
#pragma omp parallel for simd reduction(+ : acc) schedule(static)
        for (size_t i = 0; i < n; i++) acc += grad[i] * 0.0f;
    } else {
#pragma omp parallel for simd reduction(+ : acc) schedule(static)
        for (size_t i = 0; i < n; i++) {
            float g = grad[i] * inv_scale;
            grad[i] = g;
            acc += g * 0.0f;
        }
    }
    return acc == 0.0f;
}
