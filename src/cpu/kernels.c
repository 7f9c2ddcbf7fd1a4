#include "cpu/kernels.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

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

#define ACT float
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define FN(name) name
#include "cpu/kernels_act.inc"
#undef ACT
#undef LD
#undef ST
#undef FN

#define ACT rn_bf16
#define LD(p, i) rn_bf16_to_f32((p)[i])
#define ST(p, i, v) ((p)[i] = rn_bf16_from_f32(v))
#define FN(name) name##_bf16
#include "cpu/kernels_act.inc"
#undef ACT
#undef LD
#undef ST
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

void rn_softargmax_forward(float *out, float *prob, const float *logits, int N, int G, int D, int H, int W, int os)
{
    int V = D * H * W;
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)N * G; r++) {
        const float *lg = logits + (size_t)r * V;
        float *pr = prob + (size_t)r * V;
        float mx = -INFINITY;
        for (int p = 0; p < V; p++) mx = lg[p] > mx ? lg[p] : mx;
        double s = 0;
        for (int p = 0; p < V; p++) s += exp((double)lg[p] - mx);
        double sx = 0, sy = 0, sz = 0;
        for (int p = 0; p < V; p++) {
            double e = exp((double)lg[p] - mx) / s;
            pr[p] = (float)e;
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
