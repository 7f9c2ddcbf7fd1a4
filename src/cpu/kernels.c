#include "cpu/kernels.h"

#include <math.h>
#include <string.h>

#include "core/status.h"

#define L 16 /* channel block */

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

void rn_depth_forward(float *depth, float *gamma, const float *feat, const float *w, const float *b, const float *k,
                      int N, int C)
{
    for (int n = 0; n < N; n++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += (double)feat[(size_t)n * C + c] * w[c];
        gamma[n] = (float)(s + b[0]);
        depth[n] = gamma[n] * k[n];
    }
}

void rn_depth_backward(float *dfeat, float *dw, float *db, const float *ddepth, const float *feat, const float *w,
                       const float *k, int N, int C)
{
    for (int n = 0; n < N; n++) {
        float dg = ddepth[n] * k[n];
        db[0] += dg;
        for (int c = 0; c < C; c++) {
            dw[c] += dg * feat[(size_t)n * C + c];
            dfeat[(size_t)n * C + c] = dg * w[c];
        }
    }
}

static float sgn(float x) { return (float)((x > 0) - (x < 0)); }

double rn_loss_forward_backward(float *dcoord, const float *coord, const float *target, const float *vis,
                                const float *have_depth, int N)
{
    double loss = 0;
    for (int n = 0; n < N; n++) {
        const float *c = coord + 3 * n, *t = target + 3 * n;
        loss += (fabs((double)c[0] - t[0]) * vis[n] + fabs((double)c[1] - t[1]) * vis[n] +
                 fabs((double)c[2] - t[2]) * vis[n] * have_depth[n]) / 3.0;
        if (dcoord) {
            float s = 1.0f / (3.0f * (float)N);
            dcoord[3 * n] = sgn(c[0] - t[0]) * vis[n] * s;
            dcoord[3 * n + 1] = sgn(c[1] - t[1]) * vis[n] * s;
            dcoord[3 * n + 2] = sgn(c[2] - t[2]) * vis[n] * have_depth[n] * s;
        }
    }
    return loss / N;
}
