/* test_kernel_math: the CUDA device's kernel arithmetic (src/nn/kernel_math.h),
 * compiled by the C compiler, against the ref device's math (src/ref) on the
 * op tests' shapes (tests/test_backend_ops.c).
 *
 * Each op is replayed here as its kernel runs it: NHWC activations of type
 * fp32, bf16 or fp16, the same per-element functions, and the reductions in
 * the kernels' own fixed partitions (rn_km_red_plan's chunks, the head
 * kernels' 256-thread trees). fp32 results that ref computes in the same
 * order must match it bit for bit ("bits" lines: the count of differing
 * elements, 0 allowed); the others, and every bf16/fp16 result, must lie
 * within the op tests' bounds. The storage conversions are checked against
 * core/bf16.h, hand-worked values (from numpy's float16) and exhaustively
 * over all 2^16 halves; Adam also bit for bit against the cpu device's
 * (PyTorch's single-tensor Adam with float scalars), where cpu is built in.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bf16.h"
#include "core/rng.h"
#include "core/status.h"
#include "nn/device.h"
#include "nn/kernel_math.h"
#include "ref/ref.h"

#define U32 (1.0 / 16777216.0) /* fp32 unit roundoff, 2^-24 */

/* Partial-sum room of the CUDA device's scratch (src/cuda/k_common.cuh: 32 MiB less the 1 MiB small region). */
#define RED_CAP ((((size_t)32 << 20) - ((size_t)1 << 20)) / sizeof(double))

typedef struct ty {
    rn_numtype t;
    const char *name;
    double u; /* unit roundoff of the storage type (0: fp32, judged as U32 multiples) */
} ty;

static const ty TYPES[] = {{RN_NUM_F32, "fp32", 0}, {RN_NUM_BF16, "bf16", 1.0 / 256}, {RN_NUM_F16, "fp16", 1.0 / 2048}};

static void report(const char *op, const char *shape, const char *prec, double err, double tol, const char *what)
{
    int ok = err <= tol;
    printf("%-4s %-28s %-16s %-5s %-6s %-10.3g tol %.3g\n", ok ? "ok" : "FAIL", op, shape, prec, what, err, tol);
    RN_CHECK(ok, "%s %s %s: %s %g above %g", op, shape, prec, what, err, tol);
}

/* max |got - want| / max |want|; NaN fails. */
static double scaled_err(const float *got, const float *want, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= num)) num = d;
        if (fabs(want[i]) > den) den = fabs(want[i]);
    }
    return num / den;
}

static size_t bit_diffs(const float *got, const float *want, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += memcmp(got + i, want + i, sizeof(float)) != 0;
    return d;
}

/* fp32: every element bit-equal to ref's; else within k32 float roundings plus one rounding to the type
 * when out_act. */
static void judge(const ty *y, int exact, const char *op, const char *shape, const float *got, const float *want,
                  size_t n, double k32, int out_act)
{
    if (y->t == RN_NUM_F32 && exact) report(op, shape, y->name, (double)bit_diffs(got, want, n), 0, "bits");
    else report(op, shape, y->name, scaled_err(got, want, n), k32 * U32 + (out_act ? y->u : 0), "err");
}

static float *fvec(size_t n) { return rn_xcalloc(n ? n : 1, sizeof(float)); }

/* n values ~ N(mean, sd), each exactly representable in t. */
static float *act_rand(size_t n, double mean, double sd, rn_numtype t, rn_rng *r)
{
    float *v = fvec(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = (float)(mean + sd * rn_rng_normal(r));
        if (t == RN_NUM_BF16) v[i] = rn_bf16_to_f32(rn_bf16_from_f32(v[i]));
        if (t == RN_NUM_F16) v[i] = rn_km_f16_to_f32(rn_km_f32_to_f16(v[i]));
    }
    return v;
}

static float *randn(size_t n, double sd, rn_rng *r)
{
    float *v = fvec(n);
    for (size_t i = 0; i < n; i++) v[i] = (float)(sd * rn_rng_normal(r));
    return v;
}

/* ---- NHWC activations of type t on the host ---- */

typedef struct shp {
    int n, c, h, w;
} shp;

static size_t elems(shp a) { return (size_t)a.n * a.c * a.h * a.w; }

static const char *label(char *buf, shp a)
{
    snprintf(buf, 48, "%dx%dx%dx%d", a.n, a.c, a.h, a.w);
    return buf;
}

/* The NHWC index of NCHW element (n, c, p). */
static size_t nhwc(shp a, size_t i_nchw)
{
    size_t hw = (size_t)a.h * a.w, p = i_nchw % hw, c = i_nchw / hw % a.c, n = i_nchw / hw / a.c;
    return (n * hw + p) * a.c + c;
}

static void *to_act(const float *nchw, shp a, rn_numtype t)
{
    void *d = rn_xcalloc(elems(a) ? elems(a) : 1, rn_numtype_size(t));
    for (size_t i = 0; i < elems(a); i++) rn_km_st_f32(d, t, nhwc(a, i), nchw[i]);
    return d;
}

static float *from_act(const void *d, shp a, rn_numtype t)
{
    float *v = fvec(elems(a));
    for (size_t i = 0; i < elems(a); i++) v[i] = rn_km_ld(d, t, nhwc(a, i));
    return v;
}

/* ---- the kernels' reductions, replayed ---- */

/* k_bn.cu's two-level reduction: s0, s1 (C) per channel. */
static void red_replay(double *s0, double *s1, int mode, const void *x, const void *dy, const void *ro,
                       const float *aux, rn_numtype t, size_t rows, int C)
{
    int P;
    size_t per;
    rn_km_red_plan(&P, &per, rows, C, RED_CAP);
    double *ca = rn_xmalloc((size_t)P * sizeof *ca), *cb = rn_xmalloc((size_t)P * sizeof *cb);
    for (int c = 0; c < C; c++) {
        for (int p = 0; p < P; p++) {
            size_t r0 = (size_t)p * per, r1 = r0 + per < rows ? r0 + per : rows;
            double pa = 0, pb = 0;
            for (int ty = 0; ty < RN_KM_RED_TY; ty++) {
                double u = 0, v = 0;
                for (size_t r = r0 + ty; r < r1; r += RN_KM_RED_TY) {
                    size_t i = r * C + c;
                    float dyv = mode == RN_KM_RED_BNB ? rn_km_ld(dy, t, i) : 0.0f;
                    float rov = mode == RN_KM_RED_BNB && ro ? rn_km_ld(ro, t, i) : 0.0f;
                    float auxv = mode == RN_KM_RED_BNB ? aux[c] : mode == RN_KM_RED_PWDW ? aux[r] : 0.0f;
                    rn_km_red_step(&u, &v, mode, rn_km_ld(x, t, i), dyv, rov, ro != NULL, auxv);
                }
                pa += u, pb += v;
            }
            ca[p] = pa, cb[p] = pb;
        }
        double la[32] = {0}, lb[32] = {0};
        for (int p = 0; p < P; p++) la[p % 32] += ca[p], lb[p % 32] += cb[p];
        for (int off = 16; off > 0; off >>= 1)
            for (int l = 0; l < off; l++) la[l] += la[l + off], lb[l] += lb[l + off];
        s0[c] = la[0];
        if (s1) s1[c] = lb[0];
    }
    free(ca), free(cb);
}

/* The head kernels' block tree over RN_KM_HEAD_THREADS partials (destroys v). */
static double tree(double *v)
{
    for (int s = RN_KM_HEAD_THREADS / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; t++) v[t] += v[t + s];
    return v[0];
}

/* ---- BatchNorm ---- */

static void bn_stats(const ty *y, shp a, rn_rng *r)
{
    char sh[48];
    label(sh, a);
    size_t n = elems(a), rows = n / a.c;
    int C = a.c;
    float *x = act_rand(n, 0.7, 1.5, y->t, r), *rm = randn(C, 0.2, r), *rv = randn(C, 0.2, r);
    float *gamma = randn(C, 1, r), *beta = randn(C, 1, r);
    for (int c = 0; c < C; c++) rv[c] = 1 + fabsf(rv[c]);
    void *ax = to_act(x, a, y->t);
    double *want = rn_xmalloc(2 * (size_t)C * sizeof *want), *got = rn_xmalloc(2 * (size_t)C * sizeof *got);
    rn_ref_bn_sums(want, x, a.n, C, a.h * a.w);
    red_replay(got, got + C, RN_KM_RED_BN, ax, NULL, NULL, NULL, y->t, rows, C);
    float *fw = fvec(8 * (size_t)C), *fg = fvec(8 * (size_t)C); /* sums, mean, var, rmean, rvar, scale, shift */
    for (int i = 0; i < 2 * C; i++) fw[i] = (float)want[i], fg[i] = (float)got[i];
    judge(y, 0, "bn_sums", sh, fg, fw, 2 * (size_t)C, 4, 0);
    /* the per-channel ops from the same sums: ref's order, bit for bit */
    double count = (double)rows;
    rn_ref_bn_stats_from_sums(fw + 2 * C, fw + 3 * C, want, count, C);
    memcpy(fw + 4 * C, rm, C * sizeof(float)), memcpy(fw + 5 * C, rv, C * sizeof(float));
    memcpy(fg + 4 * C, rm, C * sizeof(float)), memcpy(fg + 5 * C, rv, C * sizeof(float));
    rn_ref_bn_update_running(fw + 4 * C, fw + 5 * C, fw + 2 * C, fw + 3 * C, 0.1, count, C);
    rn_ref_bn_fold(fw + 6 * C, fw + 7 * C, fw + 2 * C, fw + 3 * C, gamma, beta, C);
    double unbias = rn_km_bn_unbias(count);
    for (int c = 0; c < C; c++) {
        rn_km_bn_stats(fg + 2 * C + c, fg + 3 * C + c, want[c], want[C + c], count);
        rn_km_bn_update_running(fg + 4 * C + c, fg + 5 * C + c, fg[2 * C + c], fg[3 * C + c], 0.1, unbias);
        rn_km_bn_fold(fg + 6 * C + c, fg + 7 * C + c, fg[2 * C + c], fg[3 * C + c], gamma[c], beta[c]);
    }
    const ty *f32 = &TYPES[0];
    judge(f32, 1, "bn_stats mean,var", sh, fg + 2 * C, fw + 2 * C, 2 * (size_t)C, 8, 0);
    judge(f32, 1, "bn_update_running", sh, fg + 4 * C, fw + 4 * C, 2 * (size_t)C, 8, 0);
    judge(f32, 1, "bn_fold scale,shift", sh, fg + 6 * C, fw + 6 * C, 2 * (size_t)C, 8, 0);
    free(x), free(rm), free(rv), free(gamma), free(beta), free(ax), free(want), free(got), free(fw), free(fg);
}

/* The elementwise ops: bn_apply (+relu), bn_add_relu, bn2_add_relu, relu_backward, add. */
static void bn_apply(const ty *y, shp a, rn_rng *r)
{
    char sh[48];
    label(sh, a);
    size_t n = elems(a);
    int C = a.c, HW = a.h * a.w;
    rn_numtype t = y->t;
    float *x1 = act_rand(n, 0, 1, t, r), *x2 = act_rand(n, 0, 1, t, r), *res = act_rand(n, 0, 1, t, r);
    float *sc = randn(2 * (size_t)C, 1, r), *sf = randn(2 * (size_t)C, 0.5, r), *d0 = act_rand(n, 0, 1, t, r);
    float *yr = act_rand(n, 0, 1, t, r), *want = fvec(n);
    for (size_t i = 0; i < n; i++) yr[i] = yr[i] > 0.3f ? yr[i] : 0;
    void *a1 = to_act(x1, a, t), *a2 = to_act(x2, a, t), *ar = to_act(res, a, t), *ayr = to_act(yr, a, t);
    void *out = to_act(x1, a, t);
    const char *names[6] = {"bn_apply", "bn_apply +relu", "bn_add_relu", "bn2_add_relu", "relu_backward", "add"};
    const double k32[6] = {8, 8, 8, 16, 0, 1};
    for (int op = 0; op < 6; op++) {
        switch (op) {
        case 0: case 1: rn_ref_bn_apply(want, x1, sc, sf, op, a.n, C, HW); break;
        case 2: rn_ref_bn_add_relu(want, x1, sc, sf, NULL, NULL, NULL, res, a.n, C, HW); break;
        case 3: rn_ref_bn_add_relu(want, x1, sc, sf, x2, sc + C, sf + C, NULL, a.n, C, HW); break;
        case 4: memcpy(want, d0, n * sizeof(float)), rn_ref_relu_backward(want, yr, n); break;
        default: memcpy(want, d0, n * sizeof(float)), rn_ref_add(want, res, n); break;
        }
        if (op >= 4) {
            free(out);
            out = to_act(d0, a, t);
        }
        for (size_t i = 0; i < n; i++) {
            int c = (int)(i % C);
            float v1 = rn_km_ld(a1, t, i);
            switch (op) {
            case 0: case 1: rn_km_st(out, t, i, rn_km_bn_apply(v1, sc[c], sf[c], op)); break;
            case 2: rn_km_st(out, t, i, rn_km_bn_add_relu(v1, sc[c], sf[c], rn_km_ld(ar, t, i))); break;
            case 3:
                rn_km_st(out, t, i, rn_km_bn2_add_relu(v1, sc[c], sf[c], rn_km_ld(a2, t, i), sc[C + c], sf[C + c]));
                break;
            case 4:
                if (rn_km_relu_masked(rn_km_ld(ayr, t, i))) rn_km_st(out, t, i, 0.0);
                break;
            default: rn_km_st(out, t, i, rn_km_add(rn_km_ld(out, t, i), rn_km_ld(ar, t, i))); break;
            }
        }
        float *got = from_act(out, a, t);
        judge(y, 1, names[op], sh, got, want, n, k32[op], 1);
        free(got);
    }
    free(x1), free(x2), free(res), free(sc), free(sf), free(d0), free(yr), free(want);
    free(a1), free(a2), free(ar), free(ayr), free(out);
}

/* Training BN backward (+ReLU): sums (the kernel's partition), params and data from the same sums. */
static void bn_backward(const ty *y, shp a, int relu, rn_rng *r)
{
    char sh[64], lab[48];
    snprintf(sh, sizeof sh, "%s%s", label(lab, a), relu ? " +relu" : "");
    size_t n = elems(a), rows = n / a.c;
    int C = a.c, HW = a.h * a.w;
    rn_numtype t = y->t;
    float *x = act_rand(n, 0.5, 1.5, t, r), *dy = act_rand(n, 0, 1, t, r), *gamma = randn(C, 1, r);
    float *mean = fvec(C), *var = fvec(C), *dg0 = randn(C, 1, r), *db0 = randn(C, 1, r), *ro = fvec(n);
    double *hs = rn_xmalloc(2 * (size_t)C * sizeof *hs), *gs = rn_xmalloc(2 * (size_t)C * sizeof *gs);
    rn_ref_bn_sums(hs, x, a.n, C, HW);
    rn_ref_bn_stats_from_sums(mean, var, hs, (double)rows, C);
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i / HW % C);
        float v = (float)((x[i] - mean[c]) / sqrt(var[c] + RN_KM_BN_EPS) * gamma[c]);
        ro[i] = v > 0 ? v : 0;
        if (t == RN_NUM_BF16) ro[i] = rn_bf16_to_f32(rn_bf16_from_f32(ro[i]));
        if (t == RN_NUM_F16) ro[i] = rn_km_f16_to_f32(rn_km_f32_to_f16(ro[i]));
    }
    void *ax = to_act(x, a, t), *ady = to_act(dy, a, t), *aro = relu ? to_act(ro, a, t) : NULL, *adx = to_act(x, a, t);
    const float *rop = relu ? ro : NULL;
    rn_ref_bn_backward_sums(hs, dy, rop, x, mean, a.n, C, HW);
    red_replay(gs, gs + C, RN_KM_RED_BNB, ax, ady, aro, mean, t, rows, C);
    float *fw = fvec(4 * (size_t)C), *fg = fvec(4 * (size_t)C);
    for (int i = 0; i < 2 * C; i++) fw[i] = (float)hs[i], fg[i] = (float)gs[i];
    judge(y, 0, "bn_backward_sums", sh, fg, fw, 2 * (size_t)C, 4, 0);
    /* params and data from ref's sums, so that each is judged on its own */
    memcpy(fw + 2 * C, dg0, C * sizeof(float)), memcpy(fw + 3 * C, db0, C * sizeof(float));
    memcpy(fg + 2 * C, dg0, C * sizeof(float)), memcpy(fg + 3 * C, db0, C * sizeof(float));
    rn_ref_bn_backward_params(fw + 2 * C, fw + 3 * C, hs, var, C);
    for (int c = 0; c < C; c++) rn_km_bn_backward_params(fg + 2 * C + c, fg + 3 * C + c, hs[c], hs[C + c], var[c]);
    judge(&TYPES[0], 1, "bn_backward_params", sh, fg + 2 * C, fw + 2 * C, 2 * (size_t)C, 4, 0);
    float *want = fvec(n);
    rn_ref_bn_backward_data(want, dy, rop, x, mean, var, gamma, hs, (double)rows, a.n, C, HW);
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i % C);
        rn_km_bnb b = rn_km_bn_backward_coef(var[c], gamma[c], hs[c], hs[C + c], (double)rows);
        double dz = rn_km_bn_dz(rn_km_ld(ady, t, i), aro ? rn_km_ld(aro, t, i) : 0.0f, aro != NULL);
        rn_km_st(adx, t, i, rn_km_bn_backward_data(&b, dz, rn_km_ld(ax, t, i), mean[c]));
    }
    float *got = from_act(adx, a, t);
    judge(y, 1, "bn_backward_data", sh, got, want, n, 16, 1);
    free(x), free(dy), free(gamma), free(mean), free(var), free(dg0), free(db0), free(ro), free(hs), free(gs);
    free(ax), free(ady), free(aro), free(adx), free(fw), free(fg), free(want), free(got);
}

/* ---- pooling ---- */

static void maxpool(const ty *y, shp a, rn_rng *r)
{
    char sh[48];
    label(sh, a);
    int OH = (a.h - 1) / 2 + 1, OW = (a.w - 1) / 2 + 1, C = a.c;
    shp ao = {a.n, C, OH, OW};
    size_t n = elems(a), no = elems(ao);
    rn_numtype t = y->t;
    float *x = act_rand(n, 0, 1, t, r), *dy = act_rand(no, 0, 1, t, r), *wy = fvec(no), *wdx = fvec(n);
    for (size_t i = 0; i < n; i++) x[i] = roundf(x[i] * 2) / 2; /* ties in most windows */
    rn_ref_maxpool_forward(wy, x, a.n, C, a.h, a.w, OH, OW);
    rn_ref_maxpool_backward(wdx, dy, x, a.n, C, a.h, a.w, OH, OW);
    void *ax = to_act(x, a, t), *ady = to_act(dy, ao, t), *ay = to_act(dy, ao, t), *adx = to_act(x, a, t);
    for (size_t i = 0; i < no; i++) {
        int c = (int)(i % C), ow = (int)(i / C % OW), oh = (int)(i / C / OW % OH), nn = (int)(i / C / OW / OH);
        int arg = rn_km_maxpool_arg(ax, t, nn, c, C, a.h, a.w, oh, ow);
        rn_km_st_f32(ay, t, i, rn_km_ld(ax, t, ((size_t)nn * a.h * a.w + arg) * C + c));
    }
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i % C), iw = (int)(i / C % a.w), ih = (int)(i / C / a.w % a.h), nn = (int)(i / C / a.w / a.h);
        rn_km_st_f32(adx, t, i, rn_km_maxpool_backward(ady, ax, t, nn, c, C, a.h, a.w, OH, OW, ih, iw));
    }
    float *gy = from_act(ay, ao, t), *gdx = from_act(adx, a, t);
    judge(y, 1, "maxpool_forward", sh, gy, wy, no, 0, 1);
    judge(y, 1, "maxpool_backward (ties)", sh, gdx, wdx, n, 2, 1);
    free(x), free(dy), free(wy), free(wdx), free(ax), free(ady), free(ay), free(adx), free(gy), free(gdx);
}

static void gap(const ty *y, shp a, rn_rng *r)
{
    char sh[48];
    label(sh, a);
    int C = a.c, HW = a.h * a.w;
    size_t n = elems(a), nc = (size_t)a.n * C;
    rn_numtype t = y->t;
    float *x = act_rand(n, 0.5, 1, t, r), *dout = randn(nc, 1, r), *dx0 = act_rand(n, 0, 1, t, r);
    float *wo = fvec(nc), *go = fvec(nc), *wdx = fvec(n);
    rn_ref_gap_forward(wo, x, a.n, C, HW);
    memcpy(wdx, dx0, n * sizeof(float));
    rn_ref_gap_backward(wdx, dout, a.n, C, HW);
    void *ax = to_act(x, a, t), *adx = to_act(dx0, a, t);
    for (size_t i = 0; i < nc; i++) {
        size_t nn = i / C, c = i % C;
        double s = 0;
        for (int p = 0; p < HW; p++) s += rn_km_ld(ax, t, (nn * HW + p) * C + c);
        go[i] = rn_km_gap_mean(s, HW);
    }
    for (size_t i = 0; i < n; i++)
        rn_km_st(adx, t, i, rn_km_gap_backward(rn_km_ld(adx, t, i), dout[i / C / HW * C + i % C], HW));
    float *gdx = from_act(adx, a, t);
    judge(&TYPES[0], 1, "gap_forward", sh, go, wo, nc, 4, 0);
    judge(y, 1, "gap_backward (+=)", sh, gdx, wdx, n, 4, 1);
    free(x), free(dout), free(dx0), free(wo), free(go), free(wdx), free(ax), free(adx), free(gdx);
}

/* ---- the heads and the loss ---- */

/* k_head.cu's pointwise forward and soft-argmax forward on the host: logits per row and output, then
 * each heat map's softmax in the kernel's tree. y: (N, P, HW); rows of 3. */
static void heat_forward_replay(float *rows, float *prob, const void *ax, rn_numtype t, const float *w, const float *b,
                                shp a, int G, int D)
{
    int C = a.c, HW = a.h * a.w, P = G * D, T = RN_KM_HEAD_THREADS, V = D * HW;
    for (size_t row = 0; row < (size_t)a.n * HW; row++)
        for (int o = 0; o < P; o++) {
            double s = b[o];
            for (int c = 0; c < C; c++) s = rn_km_dot_step(s, w[(size_t)o * C + c], rn_km_ld(ax, t, row * C + c));
            prob[((row / HW) * P + o) * HW + row % HW] = (float)s;
        }
    double v[3][RN_KM_HEAD_THREADS];
    for (int m = 0; m < a.n * G; m++) {
        float *pr = prob + (size_t)m * V;
        double mx = -INFINITY;
        for (int p = 0; p < V; p++) mx = pr[p] > mx ? pr[p] : mx;
        for (int th = 0; th < T; th++) {
            v[0][th] = 0;
            for (int p = th; p < V; p += T) v[0][th] += rn_km_softmax_exp(pr[p], mx);
        }
        double z = tree(v[0]);
        for (int th = 0; th < T; th++) {
            v[0][th] = v[1][th] = v[2][th] = 0;
            for (int p = th; p < V; p += T) {
                double e = rn_km_softmax_exp(pr[p], mx) / z;
                pr[p] = (float)e;
                for (int j = 0; j < 3; j++) v[j][th] += e * rn_km_sa_pos(p, j, a.h, a.w);
            }
        }
        for (int j = 0; j < (D > 1 ? 3 : 2); j++) rows[3 * m + j] = (float)tree(v[j]);
    }
}

/* k_head.cu's soft-argmax backward (prob := dlogits) and pointwise backward on the host. */
static void heat_backward_replay(void *da, float *dw, float *db, const float *drows, float *prob, const void *ax,
                                 rn_numtype t, const float *w, shp a, int G, int D)
{
    int C = a.c, HW = a.h * a.w, P = G * D, T = RN_KM_HEAD_THREADS, V = D * HW;
    double v[RN_KM_HEAD_THREADS];
    for (int m = 0; m < a.n * G; m++) {
        float *pr = prob + (size_t)m * V;
        for (int th = 0; th < T; th++) {
            v[th] = 0;
            for (int p = th; p < V; p += T) v[th] += pr[p] * rn_km_sa_gpos(drows + 3 * m, p, D, a.h, a.w);
        }
        double dot = tree(v);
        for (int p = 0; p < V; p++) pr[p] = rn_km_sa_dlogit(pr[p], rn_km_sa_gpos(drows + 3 * m, p, D, a.h, a.w), dot);
    }
    for (size_t i = 0; i < elems(a); i++) {
        size_t row = i / C, n = row / HW, p = row % HW;
        int c = (int)(i % C);
        double o = rn_km_pw_da(prob[n * P * HW + p], w[c]);
        for (int q = 1; q < P; q++) o += rn_km_pw_da(prob[(n * P + q) * HW + p], w[(size_t)q * C + c]);
        rn_km_st(da, t, i, o);
    }
    double *s = rn_xmalloc((size_t)C * sizeof *s);
    if (P == 1) {
        red_replay(s, NULL, RN_KM_RED_PWDW, ax, NULL, NULL, prob, t, elems(a) / C, C);
        for (int c = 0; c < C; c++) dw[c] += (float)s[c];
    } else {
        for (int q = 0; q < P; q++)
            for (int c = 0; c < C; c++) {
                double acc = 0;
                for (size_t row = 0; row < elems(a) / C; row++)
                    acc += (double)prob[((row / HW) * P + q) * HW + row % HW] * rn_km_ld(ax, t, row * C + c);
                dw[(size_t)q * C + c] += (float)acc;
            }
    }
    for (int q = 0; q < P; q++) {
        double sb = 0;
        for (int n = 0; n < a.n; n++) {
            for (int th = 0; th < T; th++) {
                v[th] = 0;
                for (int p = th; p < HW; p += T) v[th] += prob[((size_t)n * P + q) * HW + p];
            }
            sb += tree(v);
        }
        db[q] += (float)sb;
    }
    free(s);
}

static void heat(const ty *y, shp a, int G, int D, rn_rng *r)
{
    char sh[64];
    label(sh, a);
    snprintf(sh + strlen(sh), sizeof sh - strlen(sh), " G=%d D=%d", G, D);
    int C = a.c, P = G * D;
    size_t n = elems(a), np = (size_t)a.n * P * a.h * a.w, R = 3 * (size_t)a.n * G;
    rn_numtype t = y->t;
    float *x = act_rand(n, 0, 1, t, r), *w = randn((size_t)P * C, 2 / sqrt(C), r), *b = randn(P, 1, r);
    float *dc = randn(R, 1, r), *dw0 = randn((size_t)P * C, 1, r), *db0 = randn(P, 1, r);
    /* rows (R), prob (np), da (n), dw (PC), db (P), dlogits (np) */
    size_t len = R + np + n + (size_t)P * C + P + np;
    float *o[2] = {fvec(len), fvec(len)};
    for (int k = 0; k < 2; k++) {
        float *rows = o[k], *prob = rows + R, *da = prob + np, *dw = da + n, *db = dw + (size_t)P * C, *dl = db + P;
        memcpy(dw, dw0, (size_t)P * C * sizeof(float)), memcpy(db, db0, P * sizeof(float));
        if (k) {
            rn_ref_pointwise_forward(prob, x, w, b, a.n, C, a.h * a.w, P);
            rn_ref_softargmax_forward(rows, prob, prob, a.n, G, D, a.h, a.w, 3);
            memcpy(dl, prob, np * sizeof(float));
            rn_ref_softargmax_backward(dl, dl, dc, a.n, G, D, a.h, a.w, 3);
            rn_ref_pointwise_backward(da, dw, db, dl, x, w, a.n, C, a.h * a.w, P);
            continue;
        }
        void *ax = to_act(x, a, t), *ada = to_act(x, a, t);
        heat_forward_replay(rows, prob, ax, t, w, b, a, G, D);
        memcpy(dl, prob, np * sizeof(float));
        heat_backward_replay(ada, dw, db, dc, dl, ax, t, w, a, G, D);
        float *g = from_act(ada, a, t);
        memcpy(da, g, n * sizeof(float));
        free(g), free(ax), free(ada);
    }
    const char *names[6] = {"softargmax_forward rows", "softargmax_forward prob", "pointwise_backward dx",
                            "pointwise_backward dw (+=)", "pointwise_backward db (+=)", "softargmax_backward"};
    const size_t lens[6] = {R, np, n, (size_t)P * C, (size_t)P, np};
    size_t off = 0;
    for (int j = 0; j < 6; j++) {
        judge(y, 0, names[j], sh, o[0] + off, o[1] + off, lens[j], 64, j == 2);
        off += lens[j];
    }
    free(x), free(w), free(b), free(dc), free(dw0), free(db0), free(o[0]), free(o[1]);
}

/* k_head.cu's linear forward and backward on the host (rows of ys, output o at column o). */
static void linear_replay(float *yv, float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                          const float *b, const float *rs, int N, int C, int O, int ys)
{
    double v[RN_KM_HEAD_THREADS];
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            for (int th = 0; th < RN_KM_HEAD_THREADS; th++) {
                v[th] = 0;
                for (int c = th; c < C; c += RN_KM_HEAD_THREADS)
                    v[th] = rn_km_dot_step(v[th], w[(size_t)o * C + c], x[(size_t)n * C + c]);
            }
            yv[(size_t)n * ys + o] = rn_km_linear_out(b[o] + tree(v), rs, n);
        }
    for (size_t i = 0; i < (size_t)N * C; i++) {
        int n = (int)(i / C), c = (int)(i % C);
        double s = rn_km_linear_dg(dy[(size_t)n * ys], rs, n) * w[c];
        for (int o = 1; o < O; o++) s += rn_km_linear_dg(dy[(size_t)n * ys + o], rs, n) * w[(size_t)o * C + c];
        dx[i] = (float)s;
    }
    for (int o = 0; o < O; o++)
        for (int c = 0; c <= C; c++) {
            double s = 0;
            for (int n = 0; n < N; n++) {
                double dg = rn_km_linear_dg(dy[(size_t)n * ys + o], rs, n);
                s += c < C ? dg * x[(size_t)n * C + c] : dg;
            }
            if (c < C) dw[(size_t)o * C + c] += (float)s;
            else db[o] += (float)s;
        }
}

/* The linear layer (times k) and the masked L1 loss over K rows (fp32 only: no activations). */
static void linear_loss(int N, int C, int O, int K, float scale, rn_rng *r)
{
    const ty *y = &TYPES[0];
    char sh[64];
    snprintf(sh, sizeof sh, "N=%d C=%d O=%d K=%d s=%g", N, C, O, K, scale);
    int ys = O + 1;
    size_t nc = (size_t)N * C, oc = (size_t)O * C, ny = (size_t)N * ys, nr = 3 * (size_t)N * K;
    float *feat = randn(nc, 1, r), *w = randn(oc, 1 / sqrt(C), r), *b = randn(O, 1, r), *k = randn(N, 3, r);
    float *dy = randn(ny, 1, r), *dw0 = randn(oc, 1, r), *db0 = randn(O, 1, r);
    float *pred = randn(nr, 5, r), *tgt = randn(nr, 5, r), *vis = fvec((size_t)N * K), *hd = fvec(N);
    for (int i = 0; i < N * K; i++) vis[i] = i % 3 != 1;
    for (int n = 0; n < N; n++) hd[n] = n % 4 != 2;
    tgt[0] = pred[0]; /* one coordinate equal: sign(0) = 0 */
    /* y (ny), dx (NC), dw (OC), db (O), loss (1), dpred (nr) */
    size_t len = ny + nc + oc + O + 1 + nr;
    float *o[2] = {fvec(len), fvec(len)};
    for (int j = 0; j < 2; j++) {
        float *yv = o[j], *dx = yv + ny, *dw = dx + nc, *db = dw + oc, *loss = db + O, *gp = loss + 1;
        memcpy(dw, dw0, oc * sizeof(float)), memcpy(db, db0, O * sizeof(float));
        if (j) {
            rn_ref_linear_forward(yv, feat, w, b, k, N, C, O, ys);
            rn_ref_linear_backward(dx, dw, db, dy, feat, w, k, N, C, O, ys);
            loss[0] = (float)rn_ref_l1_loss(gp, pred, tgt, vis, hd, scale, N, K);
            continue;
        }
        linear_replay(yv, dx, dw, db, dy, feat, w, b, k, N, C, O, ys);
        double l = 0;
        for (int q = 0; q < N * K; q++)
            l = rn_km_l1(l, gp + 3 * q, pred + 3 * q, tgt + 3 * q, vis[q], hd[q / K], scale, N * K);
        loss[0] = (float)l;
    }
    for (int n = 0; n < N; n++) o[0][(size_t)n * ys + O] = o[1][(size_t)n * ys + O] = 0; /* the column not written */
    /* linear_forward's channel sum runs in the kernel's tree, not ref's order: bounds; the rest bit for bit */
    const char *names[6] = {"linear_forward", "linear_backward dx", "linear_backward dw (+=)",
                            "linear_backward db (+=)", "l1_loss", "l1_loss gradient"};
    const size_t lens[6] = {ny, nc, oc, (size_t)O, 1, nr};
    const int exact[6] = {0, 1, 1, 1, 1, 1};
    size_t off = 0;
    for (int j = 0; j < 6; j++) {
        judge(y, exact[j], names[j], sh, o[0] + off, o[1] + off, lens[j], 8, 0);
        off += lens[j];
    }
    free(feat), free(w), free(b), free(k), free(dy), free(dw0), free(db0), free(pred), free(tgt), free(vis), free(hd);
    free(o[0]), free(o[1]);
}

/* ---- optimizer ---- */

/* The cpu device's Adam (PyTorch's single-tensor Adam with float scalars, the contract the kernel
 * follows) on the same step: its param, m and v must equal the kernel's bit for bit. */
static void adam_vs_cpu(rn_device *cpu, float *p, float *m, float *v, const float *g, size_t n, int t, const float *pg,
                        const float *mg, const float *vg, const char *sh)
{
    if (!cpu) return;
    double s[2] = {1e-2 / (1 - pow(0.9, t)), sqrt(1 - pow(0.999, t))};
    rn_adam_args h = {.beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .sched = s};
    cpu->ops->adam(cpu, p, g, m, v, n, &h);
    size_t bad = bit_diffs(pg, p, n) + bit_diffs(mg, m, n) + bit_diffs(vg, v, n);
    report("adam = cpu device's", sh, "fp32", (double)bad, 0, "bits");
}

static void adam(size_t n, rn_rng *r)
{
    float *p0 = randn(n, 1, r), *pw = fvec(n), *mw = fvec(n), *vw = fvec(n), *pg = fvec(n), *mg = fvec(n), *vg = fvec(n);
    float *pc = fvec(n), *mc = fvec(n), *vc = fvec(n);
    memcpy(pw, p0, n * sizeof(float)), memcpy(pg, p0, n * sizeof(float)), memcpy(pc, p0, n * sizeof(float));
    rn_device *cpu = NULL;
    rn_err err = {0};
    if (rn_device_create(&cpu, "cpu", 1, &err)) {
        printf("skipped: adam against the cpu device (%s)\n", err.msg);
        cpu = NULL;
    } else {
        RN_ASSERT(cpu->host_memory);
    }
    char sh[48];
    for (int t = 1; t <= 3; t++) {
        float *g = randn(n, 1e-2, r);
        double s[2] = {1e-2 / (1 - pow(0.9, t)), sqrt(1 - pow(0.999, t))};
        rn_ref_adam(pw, mw, vw, g, n, s[0], s[1], 0.9, 0.999, 1e-8);
        rn_km_adam a = rn_km_adam_scalars(0.9, 0.999, 1e-8, s);
        for (size_t i = 0; i < n; i++) pg[i] = rn_km_adam_update(&a, pg[i], g[i], mg + i, vg + i);
        snprintf(sh, sizeof sh, "n=%zu step %d", n, t);
        adam_vs_cpu(cpu, pc, mc, vc, g, n, t, pg, mg, vg, sh);
        judge(&TYPES[0], 0, "adam param", sh, pg, pw, n, 8, 0);
        judge(&TYPES[0], 0, "adam m", sh, mg, mw, n, 8, 0);
        judge(&TYPES[0], 0, "adam v", sh, vg, vw, n, 8, 0);
        if (t == 1) {
            /* by hand: bias-corrected, the first step is -lr g / (|g| + eps), about -lr sign(g) */
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)pg[i] - (p0[i] - 1e-2 * g[i] / (fabs(g[i]) + 1e-8)));
                worst = d > worst ? d : worst;
            }
            report("adam step 1 by hand", sh, "fp32", worst, 1e-6, "err");
        }
        free(g);
    }
    free(p0), free(pw), free(mw), free(vw), free(pg), free(mg), free(vg), free(pc), free(mc), free(vc);
    rn_device_destroy(cpu);
}

static void unscale(size_t n, rn_rng *r)
{
    float *g = randn(n, 100, r), *w = fvec(n), *k = fvec(n);
    const float inv[4] = {1.0f / 1024, 1.0f, 0.5f, 0.5f};
    int agree = 0;
    char sh[48];
    snprintf(sh, sizeof sh, "n=%zu", n);
    for (int j = 0; j < 4; j++) {
        memcpy(w, g, n * sizeof(float)), memcpy(k, g, n * sizeof(float));
        if (j >= 2) w[n / 2 + j] = k[n / 2 + j] = j == 2 ? INFINITY : NAN;
        int fw = rn_ref_unscale_check(w, n, inv[j]), fk = 1;
        for (size_t i = 0; i < n; i++) {
            if (inv[j] != 1.0f) k[i] = rn_km_unscale(k[i], inv[j]);
            fk &= rn_km_finite(k[i]);
        }
        agree += fw == fk && fk == (j < 2);
        if (j < 2) report(j ? "unscale_check 1" : "unscale_check 1/1024", sh, "fp32", (double)bit_diffs(k, w, n), 0, "bits");
    }
    report("unscale_check finite flags", "finite x2, Inf, NaN", "fp32", 4 - agree, 0, "wrong");
    free(g), free(w), free(k);
}

/* ---- storage conversions ---- */

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f16 by formula (an independent decoder): sign, ldexp of the significand. */
static double f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

static void conversions(void)
{
    /* bf16: rn_km's rounding equals core/bf16.h's on every upper half with the critical low halves */
    size_t bad = 0;
    const uint32_t lows[6] = {0, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1234};
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (int j = 0; j < 6; j++) {
            float f = fbits(hi << 16 | lows[j]);
            bad += rn_km_f32_to_bf16(f) != rn_bf16_from_f32(f);
            bad += bits(rn_km_bf16_to_f32((uint16_t)hi)) != bits(rn_bf16_to_f32((rn_bf16)hi));
        }
    report("bf16 round/widen = core/bf16", "2^16 x 6 patterns", "bf16", (double)bad, 0, "wrong");
    /* f16: widen every half against the formula; narrow back; midpoints tie to even, just off them round
     * to the nearer; NaN stays a quiet NaN */
    size_t wbad = 0, rbad = 0, mbad = 0, nbad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = rn_km_f16_to_f32((uint16_t)h);
        int e = (h >> 10) & 31;
        if (e == 31) {
            int nan = (h & 1023) != 0;
            nbad += nan ? !(f != f) || (rn_km_f32_to_f16(f) & 0x7e00) != 0x7e00 : !isinf(f) || rn_km_f32_to_f16(f) != h;
            continue;
        }
        wbad += (double)f != f16_value((uint16_t)h);
        rbad += rn_km_f32_to_f16(f) != h;
        if ((h & 0x7fff) == 0x7bff) continue; /* the top: next is Inf, checked by hand below */
        float up = rn_km_f16_to_f32((uint16_t)(h + 1)), mid = (float)(((double)f + up) / 2);
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        mbad += rn_km_f32_to_f16(mid) != even;
        mbad += rn_km_f32_to_f16(nextafterf(mid, f)) != h;
        mbad += rn_km_f32_to_f16(nextafterf(mid, up)) != (uint16_t)(h + 1);
    }
    report("fp16 widen = formula", "all 2^16 halves", "fp16", (double)wbad, 0, "wrong");
    report("fp16 narrow(widen(h)) = h", "all finite halves", "fp16", (double)rbad, 0, "wrong");
    report("fp16 midpoints, ties to even", "all finite halves", "fp16", (double)mbad, 0, "wrong");
    report("fp16 Inf and NaN", "exponent 31", "fp16", (double)nbad, 0, "wrong");
    /* by hand, from numpy: np.float32(v).astype(np.float16).view(np.uint16) */
    const struct { float v; uint16_t h; } hand[] = {
        {0.1f, 0x2e66},          {1.0f / 3, 0x3555},   {65519.99f, 0x7bff}, {65520.0f, 0x7c00},
        {5.9604645e-8f, 0x0001}, {2.9802322e-8f, 0x0000}, {4.4703484e-8f, 0x0001}, {6.1e-5f, 0x03ff},
        {-0.0f, 0x8000},         {1e-3f, 0x1419},      {2049.0f, 0x6800},   {2051.0f, 0x6802},
        {4095.0f, 0x6c00},       {1e30f, 0x7c00},      {-1e30f, 0xfc00},    {1.0f, 0x3c00},
    };
    size_t hbad = 0;
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) hbad += rn_km_f32_to_f16(hand[i].v) != hand[i].h;
    report("fp16 hand-worked (numpy)", "16 values", "fp16", (double)hbad, 0, "wrong");
    /* a double rounds once: just above a bf16/fp16 midpoint goes up (through float it would tie to even) */
    double mid16 = 1.0 + 1.0 / 256, above = mid16 + ldexp(1, -40), mid11 = 1.0 + 1.0 / 2048;
    size_t obad = 0;
    obad += rn_km_to16(RN_NUM_BF16, above) != 0x3f81;
    obad += rn_km_to16(RN_NUM_BF16, mid16) != 0x3f80;
    obad += rn_km_to16(RN_NUM_BF16, mid16 - ldexp(1, -40)) != 0x3f80;
    obad += rn_km_to16(RN_NUM_F16, mid11 + ldexp(1, -40)) != 0x3c01;
    obad += rn_km_to16(RN_NUM_F16, mid11) != 0x3c00;
    obad += rn_km_to16(RN_NUM_F16, -(mid11 + ldexp(1, -40))) != 0xbc01;
    obad += rn_km_to16(RN_NUM_BF16, 1e300) != 0x7f80;
    obad += rn_km_to16(RN_NUM_F16, 1e-300) != 0;
    report("double rounds once (round to odd)", "8 hand values", "16-bit", (double)obad, 0, "wrong");
}

/* A 16-bit conv's weight gradient (cuDNN's backward-filter, emulated: an fp32 sum times alpha, rounded once
 * to fp16) then added to the fp32 gradient: with the loss scale S carried by diff_dst it must come out as
 * S times the unscaled gradient rounded to fp16, finite, at every dynamic scale. The values: ResNet-50's
 * largest unscaled weight gradients at rootnet's initialisation (tools/fp16_ranges.py: conv1 2.66e4,
 * layer1.0.conv1 1.63e4) and smaller ones down to fp16's normal range. A gradient stored at the scale
 * (alpha 1) overflows for S >= 4: every fp16-o2 step skipped on the H200. */
static void wgrad16(void)
{
    const float g[] = {26616.543f, -16328.047f, 1.0f, 3.1e-3f, -7.3e-5f, 0.0f};
    const float sc[] = {1.0f, 2.0f, 8.0f, 1024.0f, 65536.0f, 16777216.0f};
    size_t bad = 0, n = 0;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        for (size_t j = 0; j < sizeof sc / sizeof sc[0]; j++, n++) {
            float acc = g[i] * sc[j]; /* exact: a power of two */
            uint16_t stored = rn_km_f32_to_f16(acc * rn_km_wgrad_alpha(sc[j]));
            float dw = 0.5f + rn_km_wgrad_restore(rn_km_f16_to_f32(stored), sc[j]);
            float want = 0.5f + (float)(f16_value(rn_km_f32_to_f16(g[i])) * sc[j]);
            bad += !isfinite(dw) || bits(dw) != bits(want);
        }
    char sh[48];
    snprintf(sh, sizeof sh, "%zu gradients x scales 1..2^24", n);
    report("weight gradient through fp16 at the loss scale", sh, "fp16", (double)bad, 0, "wrong");
}

int main(void)
{
    rn_rng r;
    rn_rng_seed(&r, 21);
    conversions();
    const shp acts[] = {{2, 64, 13, 10}, {1, 128, 5, 3}, {2, 256, 6, 10}, {1, 512, 3, 2}, {2, 1024, 3, 3}, {1, 2048, 2, 3}};
    for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++) {
        const ty *y = &TYPES[k];
        printf("---- %s activations ----\n", y->name);
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
            bn_stats(y, acts[i], &r);
            bn_apply(y, acts[i], &r);
            bn_backward(y, acts[i], (int)i % 2, &r);
        }
        bn_backward(y, (shp){1, 64, 3, 3}, 1, &r);
        maxpool(y, (shp){2, 64, 13, 10}, &r);
        maxpool(y, (shp){1, 64, 8, 7}, &r);
        gap(y, (shp){2, 512, 3, 4}, &r);
        gap(y, (shp){1, 2048, 2, 3}, &r);
        heat(y, (shp){2, 256, 6, 5}, 1, 1, &r);
        heat(y, (shp){1, 256, 4, 7}, 1, 1, &r);
        heat(y, (shp){2, 32, 5, 6}, 3, 4, &r);
    }
    printf("---- no activations ----\n");
    linear_loss(2, 512, 1, 1, 1, &r);
    linear_loss(5, 2048, 1, 1, 1024, &r);
    linear_loss(3, 64, 3, 4, 2, &r);
    adam(5003, &r);
    unscale(4099, &r);
    wgrad16();
    RN_CHECK_DONE();
}
