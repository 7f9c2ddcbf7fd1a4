/* Reference BatchNorm, ReLU, add, max-pool, GAP, head, loss and Adam (ref/ref.h). */
#include <math.h>
#include <string.h>

#include "ref/ref.h"

/* Element (n, c, p) of an (N, C, HW) array. */
static size_t at3(int C, int HW, int n, int c, int p) { return ((size_t)n * C + c) * HW + p; }

static double inv_std(float var) { return 1.0 / sqrt((double)var + RN_REF_BN_EPS); }

void rn_ref_bn_sums(double *sums, const float *x, int N, int C, int HW)
{
    for (int c = 0; c < C; c++) {
        double s = 0, ss = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) {
                double v = x[at3(C, HW, n, c, p)];
                s += v;
                ss += v * v;
            }
        sums[c] = s;
        sums[C + c] = ss;
    }
}

void rn_ref_bn_stats_from_sums(float *mean, float *var, const double *sums, double count, int C)
{
    for (int c = 0; c < C; c++) {
        double m = sums[c] / count, v = sums[C + c] / count - m * m;
        mean[c] = (float)m;
        var[c] = (float)(v > 0 ? v : 0);
    }
}

void rn_ref_bn_update_running(float *rmean, float *rvar, const float *mean, const float *var, double momentum,
                              double count, int C)
{
    double unbias = count > 1 ? count / (count - 1) : 1.0;
    for (int c = 0; c < C; c++) {
        rmean[c] = (float)((1 - momentum) * rmean[c] + momentum * mean[c]);
        rvar[c] = (float)((1 - momentum) * rvar[c] + momentum * var[c] * unbias);
    }
}

void rn_ref_bn_fold(float *scale, float *shift, const float *mean, const float *var, const float *gamma,
                    const float *beta, int C)
{
    for (int c = 0; c < C; c++) {
        double sc = gamma[c] * inv_std(var[c]);
        scale[c] = (float)sc;
        shift[c] = (float)(beta[c] - mean[c] * sc);
    }
}

static float relu(double v) { return v > 0 ? (float)v : 0.0f; }

void rn_ref_bn_apply(float *y, const float *x, const float *scale, const float *shift, int relu_after, int N, int C,
                     int HW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < HW; p++) {
                size_t i = at3(C, HW, n, c, p);
                double v = (double)x[i] * scale[c] + shift[c];
                y[i] = relu_after ? relu(v) : (float)v;
            }
}

void rn_ref_bn_add_relu(float *y, const float *x1, const float *s1, const float *h1, const float *x2, const float *s2,
                        const float *h2, const float *r, int N, int C, int HW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < HW; p++) {
                size_t i = at3(C, HW, n, c, p);
                double v = (double)x1[i] * s1[c] + h1[c];
                if (x2) v += (double)x2[i] * s2[c] + h2[c];
                if (r) v += r[i];
                y[i] = relu(v);
            }
}

/* dy masked by the ReLU after the BN, if any. */
static double bn_dz(const float *dy, const float *relu_out, size_t i)
{
    return relu_out && !(relu_out[i] > 0) ? 0.0 : dy[i];
}

void rn_ref_bn_backward_sums(double *sums, const float *dy, const float *relu_out, const float *x, const float *mean,
                             int N, int C, int HW)
{
    for (int c = 0; c < C; c++) {
        double sdz = 0, sdzx = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) {
                size_t i = at3(C, HW, n, c, p);
                double dz = bn_dz(dy, relu_out, i);
                sdz += dz;
                sdzx += dz * ((double)x[i] - mean[c]);
            }
        sums[c] = sdz;
        sums[C + c] = sdzx;
    }
}

void rn_ref_bn_backward_params(float *dgamma, float *dbeta, const double *sums, const float *var, int C)
{
    for (int c = 0; c < C; c++) {
        dgamma[c] += (float)(sums[C + c] * inv_std(var[c]));
        dbeta[c] += (float)sums[c];
    }
}

void rn_ref_bn_backward_data(float *dx, const float *dy, const float *relu_out, const float *x, const float *mean,
                             const float *var, const float *gamma, const double *sums, double count, int N, int C,
                             int HW)
{
    for (int c = 0; c < C; c++) {
        double is = inv_std(var[c]), mdz = sums[c] / count, mdzx = sums[C + c] / count;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) {
                size_t i = at3(C, HW, n, c, p);
                double xc = (double)x[i] - mean[c];
                dx[i] = (float)(gamma[c] * is * (bn_dz(dy, relu_out, i) - mdz - xc * is * is * mdzx));
            }
    }
}

void rn_ref_relu_forward(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = relu(x[i]);
}

void rn_ref_relu_backward(float *d, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(y[i] > 0)) d[i] = 0.0f;
}

void rn_ref_add(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

/* Index into the (H, W) plane of the first maximum of output (oh, ow)'s window. */
static size_t maxpool_arg(const float *plane /* (H, W) */, int H, int W, int oh, int ow)
{
    size_t arg = 0;
    int found = 0;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++) {
            int ih = 2 * oh - 1 + kh, iw = 2 * ow - 1 + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            size_t i = (size_t)ih * W + iw;
            if (!found || plane[i] > plane[arg]) arg = i;
            found = 1;
        }
    return arg;
}

void rn_ref_maxpool_forward(float *y, const float *x, int N, int C, int H, int W, int OH, int OW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            const float *plane = x + at3(C, H * W, n, c, 0);
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    y[at3(C, OH * OW, n, c, oh * OW + ow)] = plane[maxpool_arg(plane, H, W, oh, ow)];
        }
}

void rn_ref_maxpool_backward(float *dx, const float *dy, const float *x, int N, int C, int H, int W, int OH, int OW)
{
    memset(dx, 0, (size_t)N * C * H * W * sizeof *dx);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            const float *plane = x + at3(C, H * W, n, c, 0);
            float *dplane = dx + at3(C, H * W, n, c, 0);
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    dplane[maxpool_arg(plane, H, W, oh, ow)] += dy[at3(C, OH * OW, n, c, oh * OW + ow)];
        }
}

void rn_ref_gap_forward(float *out, const float *x, int N, int C, int HW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int p = 0; p < HW; p++) s += x[at3(C, HW, n, c, p)];
            out[(size_t)n * C + c] = (float)(s / HW);
        }
}

void rn_ref_gap_backward(float *dx, const float *dout, int N, int C, int HW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < HW; p++) {
                size_t i = at3(C, HW, n, c, p);
                dx[i] = (float)(dx[i] + (double)dout[(size_t)n * C + c] / HW);
            }
}

void rn_ref_pointwise_forward(float *y, const float *x, const float *w, const float *b, int N, int C, int HW, int O)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int p = 0; p < HW; p++) {
                double s = b[o];
                for (int c = 0; c < C; c++) s += (double)w[(size_t)o * C + c] * x[at3(C, HW, n, c, p)];
                y[at3(O, HW, n, o, p)] = (float)s;
            }
}

void rn_ref_pointwise_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int N,
                               int C, int HW, int O)
{
    for (int n = 0; n < N; n++)
        for (int p = 0; p < HW; p++)
            for (int c = 0; c < C; c++) {
                double s = (double)dy[at3(O, HW, n, 0, p)] * w[c];
                for (int o = 1; o < O; o++) s += (double)dy[at3(O, HW, n, o, p)] * w[(size_t)o * C + c];
                dx[at3(C, HW, n, c, p)] = (float)s;
            }
    for (int o = 0; o < O; o++) {
        double sb = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) sb += dy[at3(O, HW, n, o, p)];
        db[o] += (float)sb;
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int n = 0; n < N; n++)
                for (int p = 0; p < HW; p++) s += (double)dy[at3(O, HW, n, o, p)] * x[at3(C, HW, n, c, p)];
            dw[(size_t)o * C + c] += (float)s;
        }
    }
}

/* g . pos(p) of a D x H x W volume: g[0] column + g[1] row (+ g[2] depth bin when D > 1). */
static double gpos(const float *g, int p, int D, int H, int W)
{
    double s = (double)g[0] * (p % W) + (double)g[1] * (p / W % H);
    return D > 1 ? s + (double)g[2] * (p / (H * W)) : s;
}

void rn_ref_softargmax_forward(float *out, float *prob, const float *logits, int N, int G, int D, int H, int W, int os)
{
    int V = D * H * W;
    for (size_t r = 0; r < (size_t)N * G; r++) {
        const float *lg = logits + r * V;
        float *pr = prob ? prob + r * V : NULL;
        double mx = -INFINITY, z = 0, sx = 0, sy = 0, sz = 0;
        for (int p = 0; p < V; p++) mx = lg[p] > mx ? lg[p] : mx;
        for (int p = 0; p < V; p++) z += exp(lg[p] - mx);
        for (int p = 0; p < V; p++) {
            double e = exp(lg[p] - mx) / z;
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

void rn_ref_softargmax_backward(float *dlogits, const float *prob, const float *dout, int N, int G, int D, int H, int W,
                                int os)
{
    int V = D * H * W;
    for (size_t r = 0; r < (size_t)N * G; r++) {
        const float *pr = prob + r * V, *g = dout + r * os;
        float *dl = dlogits + r * V;
        double dot = 0;
        for (int p = 0; p < V; p++) dot += pr[p] * gpos(g, p, D, H, W);
        for (int p = 0; p < V; p++) dl[p] = (float)(pr[p] * (gpos(g, p, D, H, W) - dot));
    }
}

void rn_ref_linear_forward(float *y, const float *x, const float *w, const float *b, const float *rs, int N, int C,
                           int O, int ys)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            double s = b[o];
            for (int c = 0; c < C; c++) s += (double)w[(size_t)o * C + c] * x[(size_t)n * C + c];
            y[(size_t)n * ys + o] = (float)(rs ? s * rs[n] : s);
        }
}

/* dL/d(b + w . x) of sample n, output o: dy times the sample's factor, in double. */
static double linear_dg(const float *dy, const float *rs, int n, int o, int ys)
{
    return rs ? (double)dy[(size_t)n * ys + o] * rs[n] : dy[(size_t)n * ys + o];
}

void rn_ref_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                            const float *rs, int N, int C, int O, int ys)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            double s = linear_dg(dy, rs, n, 0, ys) * w[c];
            for (int o = 1; o < O; o++) s += linear_dg(dy, rs, n, o, ys) * w[(size_t)o * C + c];
            dx[(size_t)n * C + c] = (float)s;
        }
    for (int o = 0; o < O; o++) {
        double sb = 0;
        for (int n = 0; n < N; n++) sb += linear_dg(dy, rs, n, o, ys);
        db[o] += (float)sb;
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int n = 0; n < N; n++) s += linear_dg(dy, rs, n, o, ys) * x[(size_t)n * C + c];
            dw[(size_t)o * C + c] += (float)s;
        }
    }
}

static double sign(double x) { return (x > 0) - (x < 0); }

double rn_ref_l1_loss(float *dpred, const float *pred, const float *target, const float *vis, const float *have_depth,
                      float scale, int N, int K)
{
    double loss = 0;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) {
            size_t r = (size_t)n * K + k;
            double wt[3] = {vis[r], vis[r], (double)vis[r] * have_depth[n]};
            for (int j = 0; j < 3; j++) {
                double e = (double)pred[3 * r + j] - target[3 * r + j];
                loss += fabs(e) * wt[j] / (3.0 * N * K);
                if (dpred) dpred[3 * r + j] = (float)(sign(e) * wt[j] / (3.0 * N * K) * scale);
            }
        }
    return loss;
}

void rn_ref_adam(float *param, float *m, float *v, const float *grad, size_t n, double step_size, double bc2_sqrt,
                 double beta1, double beta2, double eps)
{
    for (size_t i = 0; i < n; i++) {
        double g = grad[i];
        double mi = beta1 * m[i] + (1 - beta1) * g, vi = beta2 * v[i] + (1 - beta2) * g * g;
        m[i] = (float)mi;
        v[i] = (float)vi;
        param[i] = (float)(param[i] - step_size * mi / (sqrt(vi) / bc2_sqrt + eps));
    }
}

int rn_ref_unscale_check(float *grad, size_t n, float inv_scale)
{
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        grad[i] *= inv_scale;
        finite &= isfinite(grad[i]) != 0;
    }
    return finite;
}
