#include "cpu/kernels.h"

#include <math.h>
#include <string.h>

#include "core/status.h"

#define L 16 /* channel block */

void rn_bn_sums(double *sums, const float *x, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        double s[L] = {0}, ss[L] = {0};
        for (int n = 0; n < N; n++) {
            const float *xp = x + ((size_t)n * CB + cb) * HW * L;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) {
                    double v = xp[p * L + l];
                    s[l] += v;
                    ss[l] += v * v;
                }
        }
        for (int l = 0; l < L; l++) {
            sums[cb * L + l] = s[l];
            sums[C + cb * L + l] = ss[l];
        }
    }
}

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

void rn_bn_apply(float *y, const float *x, const float *scale, const float *shift, int relu, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            size_t base = ((size_t)n * CB + cb) * HW * L;
            const float *sc = scale + cb * L, *sh = shift + cb * L;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) {
                    float v = x[base + p * L + l] * sc[l] + sh[l];
                    y[base + p * L + l] = relu && v < 0 ? 0 : v;
                }
        }
}

void rn_bn_add_relu(float *y, const float *x, const float *scale, const float *shift, const float *r, int N, int C,
                    int HW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            size_t base = ((size_t)n * CB + cb) * HW * L;
            const float *sc = scale + cb * L, *sh = shift + cb * L;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) {
                    size_t i = base + p * L + l;
                    float v = (x[i] * sc[l] + sh[l]) + r[i];
                    y[i] = v < 0 ? 0 : v;
                }
        }
}

void rn_bn2_add_relu(float *y, const float *x1, const float *s1, const float *h1, const float *x2, const float *s2,
                     const float *h2, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            size_t base = ((size_t)n * CB + cb) * HW * L;
            const float *a1 = s1 + cb * L, *b1 = h1 + cb * L, *a2 = s2 + cb * L, *b2 = h2 + cb * L;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) {
                    size_t i = base + p * L + l;
                    float v = (x1[i] * a1[l] + b1[l]) + (x2[i] * a2[l] + b2[l]);
                    y[i] = v < 0 ? 0 : v;
                }
        }
}

void rn_relu_backward(float *d, const float *y, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        if (!(y[i] > 0)) d[i] = 0;
}

/* Sums of dz and dz * (x - mean) for one channel block; dz = dy masked by relu_out > 0. */
static void bn_backward_sums(double *sdz, double *sdzx, const float *dy, const float *relu_out, const float *x,
                             const float *mean, int N, int CB, int cb, int HW)
{
    for (int l = 0; l < L; l++) sdz[l] = sdzx[l] = 0;
    for (int n = 0; n < N; n++) {
        size_t base = ((size_t)n * CB + cb) * HW * L;
        for (int p = 0; p < HW; p++)
            for (int l = 0; l < L; l++) {
                size_t i = base + p * L + l;
                double dz = relu_out && !(relu_out[i] > 0) ? 0.0 : dy[i];
                sdz[l] += dz;
                sdzx[l] += dz * ((double)x[i] - mean[cb * L + l]);
            }
    }
}

void rn_bn_backward_sums(double *sums, const float *dy, const float *relu_out, const float *x, const float *mean,
                         int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        double sdz[L], sdzx[L];
        bn_backward_sums(sdz, sdzx, dy, relu_out, x, mean, N, CB, cb, HW);
        for (int l = 0; l < L; l++) {
            sums[cb * L + l] = sdz[l];
            sums[C + cb * L + l] = sdzx[l];
        }
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

void rn_bn_backward_data(float *dx, const float *dy, const float *relu_out, const float *x, const float *mean,
                         const float *var, const float *gamma, const double *sums, double count, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        float a[L], b[L], cc[L], mu[L];
        for (int l = 0; l < L; l++) {
            int c = cb * L + l;
            double is = 1.0 / sqrt((double)var[c] + RN_BN_EPS);
            /* dx = gamma*is*(dz - sdz/M - (x-mean)*is^2*sdzx/M) = a*dz + b*(x-mean) + cc */
            a[l] = (float)(gamma[c] * is);
            b[l] = (float)(-gamma[c] * is * is * is * sums[C + c] / count);
            cc[l] = (float)(-gamma[c] * is * sums[c] / count);
            mu[l] = mean[c];
        }
        for (int n = 0; n < N; n++) {
            size_t base = ((size_t)n * CB + cb) * HW * L;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) {
                    size_t i = base + p * L + l;
                    float dz = relu_out && !(relu_out[i] > 0) ? 0.0f : dy[i];
                    dx[i] = a[l] * dz + b[l] * (x[i] - mu[l]) + cc[l];
                }
        }
    }
}

void rn_bn_backward(float *dx, float *dgamma, float *dbeta, double *sums, const float *dy, const float *relu_out,
                    const float *x, const float *mean, const float *var, const float *gamma, int N, int C, int HW)
{
    rn_bn_backward_sums(sums, dy, relu_out, x, mean, N, C, HW);
    rn_bn_backward_params(dgamma, dbeta, sums, var, C);
    rn_bn_backward_data(dx, dy, relu_out, x, mean, var, gamma, sums, (double)N * HW, N, C, HW);
}

void rn_add_inplace(float *y, const float *x, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

void rn_maxpool_forward(float *y, const float *x, int N, int C, int H, int W, int OH, int OW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            const float *xp = x + ((size_t)n * CB + cb) * H * W * L;
            float *yp = y + ((size_t)n * CB + cb) * OH * OW * L;
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    float m[L];
                    for (int l = 0; l < L; l++) m[l] = -INFINITY;
                    for (int kh = 0; kh < 3; kh++) {
                        int ih = 2 * oh - 1 + kh;
                        if (ih < 0 || ih >= H) continue;
                        for (int kw = 0; kw < 3; kw++) {
                            int iw = 2 * ow - 1 + kw;
                            if (iw < 0 || iw >= W) continue;
                            const float *v = xp + ((size_t)ih * W + iw) * L;
                            for (int l = 0; l < L; l++) m[l] = v[l] > m[l] ? v[l] : m[l];
                        }
                    }
                    memcpy(yp + ((size_t)oh * OW + ow) * L, m, sizeof m);
                }
        }
}

void rn_maxpool_backward(float *dx, const float *dy, const float *x, int N, int C, int H, int W, int OH, int OW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            const float *xp = x + ((size_t)n * CB + cb) * H * W * L;
            const float *dyp = dy + ((size_t)n * CB + cb) * OH * OW * L;
            float *dxp = dx + ((size_t)n * CB + cb) * H * W * L;
            memset(dxp, 0, (size_t)H * W * L * sizeof *dxp);
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    float m[L];
                    int arg[L];
                    for (int l = 0; l < L; l++) m[l] = -INFINITY, arg[l] = -1;
                    for (int kh = 0; kh < 3; kh++) {
                        int ih = 2 * oh - 1 + kh;
                        if (ih < 0 || ih >= H) continue;
                        for (int kw = 0; kw < 3; kw++) {
                            int iw = 2 * ow - 1 + kw;
                            if (iw < 0 || iw >= W) continue;
                            int idx = ih * W + iw;
                            const float *v = xp + (size_t)idx * L;
                            for (int l = 0; l < L; l++)
                                if (v[l] > m[l] || arg[l] < 0) m[l] = v[l], arg[l] = idx;
                        }
                    }
                    const float *g = dyp + ((size_t)oh * OW + ow) * L;
                    for (int l = 0; l < L; l++) dxp[(size_t)arg[l] * L + l] += g[l];
                }
        }
}

void rn_gap_forward(float *out, const float *x, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            const float *xp = x + ((size_t)n * CB + cb) * HW * L;
            double s[L] = {0};
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) s[l] += xp[p * L + l];
            for (int l = 0; l < L; l++) out[(size_t)n * C + cb * L + l] = (float)(s[l] / HW);
        }
}

void rn_gap_backward(float *dx, const float *dout, int N, int C, int HW)
{
    int CB = C / L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            float *dp = dx + ((size_t)n * CB + cb) * HW * L;
            float g[L];
            for (int l = 0; l < L; l++) g[l] = dout[(size_t)n * C + cb * L + l] / (float)HW;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) dp[p * L + l] += g[l];
        }
}

/* logits for one sample: out[p] = b + sum_c a[c, p] w[c] */
static void xy_logits(float *out /* (HW) */, const float *a /* (C/16, HW, 16) */, const float *w, float b, int CB,
                      int HW)
{
    for (int p = 0; p < HW; p++) {
        float acc[L] = {0};
        for (int cb = 0; cb < CB; cb++) {
            const float *ap = a + ((size_t)cb * HW + p) * L;
            for (int l = 0; l < L; l++) acc[l] += ap[l] * w[cb * L + l];
        }
        float s = 0;
        for (int l = 0; l < L; l++) s += acc[l];
        out[p] = s + b;
    }
}

void rn_xy_forward(float *coord, float *prob, const float *a, const float *w, const float *b, int N, int C, int H,
                   int W)
{
    int HW = H * W, CB = C / L;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        float *pr = prob + (size_t)n * HW;
        xy_logits(pr, a + (size_t)n * CB * HW * L, w, b[0], CB, HW);
        float mx = -INFINITY;
        for (int p = 0; p < HW; p++) mx = pr[p] > mx ? pr[p] : mx;
        double s = 0;
        for (int p = 0; p < HW; p++) s += exp((double)pr[p] - mx);
        double sx = 0, sy = 0;
        for (int p = 0; p < HW; p++) {
            double e = exp((double)pr[p] - mx) / s;
            pr[p] = (float)e;
            sx += e * (p % W);
            sy += e * (p / W);
        }
        coord[2 * n] = (float)sx;
        coord[2 * n + 1] = (float)sy;
    }
}

void rn_xy_backward(float *da, float *dw, float *db, const float *dcoord, float *prob, const float *a, const float *w,
                    int N, int C, int H, int W)
{
    int HW = H * W, CB = C / L;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        float *pr = prob + (size_t)n * HW;
        double gx = dcoord[2 * n], gy = dcoord[2 * n + 1], dot = 0;
        for (int p = 0; p < HW; p++) dot += pr[p] * (gx * (p % W) + gy * (p / W));
        for (int p = 0; p < HW; p++) pr[p] = (float)(pr[p] * (gx * (p % W) + gy * (p / W) - dot));
    }
    double sb = 0;
    for (size_t i = 0; i < (size_t)N * HW; i++) sb += prob[i];
    db[0] += (float)sb;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        double acc[L] = {0};
        for (int n = 0; n < N; n++) {
            const float *ap = a + ((size_t)n * CB + cb) * HW * L;
            const float *g = prob + (size_t)n * HW;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) acc[l] += (double)g[p] * ap[p * L + l];
        }
        for (int l = 0; l < L; l++) dw[cb * L + l] += (float)acc[l];
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int cb = 0; cb < CB; cb++) {
            float *dp = da + ((size_t)n * CB + cb) * HW * L;
            const float *g = prob + (size_t)n * HW;
            for (int p = 0; p < HW; p++)
                for (int l = 0; l < L; l++) dp[p * L + l] = g[p] * w[cb * L + l];
        }
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
