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

void rn_ref_xy_forward(float *coord, float *prob, const float *a, const float *w, const float *b, int N, int C, int H,
                       int W)
{
    int HW = H * W;
    for (int n = 0; n < N; n++) {
        float *pr = prob + (size_t)n * HW;
        double mx = -INFINITY;
        for (int p = 0; p < HW; p++) {
            double s = b[0];
            for (int c = 0; c < C; c++) s += (double)w[c] * a[at3(C, HW, n, c, p)];
            pr[p] = (float)s;
            mx = s > mx ? s : mx;
        }
        double z = 0, sx = 0, sy = 0;
        for (int p = 0; p < HW; p++) z += exp(pr[p] - mx);
        for (int p = 0; p < HW; p++) {
            double e = exp(pr[p] - mx) / z;
            pr[p] = (float)e;
            sx += e * (p % W);
            sy += e * (p / W);
        }
        coord[2 * n] = (float)sx;
        coord[2 * n + 1] = (float)sy;
    }
}

/* prob[p] := dL/dlogit[p] = prob[p] (g . pos(p) - sum_q prob[q] g . pos(q)) for one sample, g = dcoord. */
static void xy_dlogits(float *pr /* (H*W) */, const float *g /* (2) */, int H, int W)
{
    double dot = 0;
    for (int p = 0; p < H * W; p++) dot += pr[p] * ((double)g[0] * (p % W) + (double)g[1] * (p / W));
    for (int p = 0; p < H * W; p++) pr[p] = (float)(pr[p] * ((double)g[0] * (p % W) + (double)g[1] * (p / W) - dot));
}

void rn_ref_xy_backward(float *da, float *dw, float *db, const float *dcoord, float *prob, const float *a,
                        const float *w, int N, int C, int H, int W)
{
    int HW = H * W;
    double sb = 0;
    for (int n = 0; n < N; n++) {
        float *dl = prob + (size_t)n * HW;
        xy_dlogits(dl, dcoord + 2 * n, H, W);
        for (int p = 0; p < HW; p++) {
            sb += dl[p];
            for (int c = 0; c < C; c++) da[at3(C, HW, n, c, p)] = (float)((double)dl[p] * w[c]);
        }
    }
    db[0] += (float)sb;
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) s += (double)prob[(size_t)n * HW + p] * a[at3(C, HW, n, c, p)];
        dw[c] += (float)s;
    }
}

void rn_ref_depth_forward(float *depth, float *gamma, const float *feat, const float *w, const float *b,
                          const float *k, int N, int C)
{
    for (int n = 0; n < N; n++) {
        double s = b[0];
        for (int c = 0; c < C; c++) s += (double)w[c] * feat[(size_t)n * C + c];
        gamma[n] = (float)s;
        depth[n] = (float)(s * k[n]);
    }
}

void rn_ref_depth_backward(float *dfeat, float *dw, float *db, const float *ddepth, const float *feat, const float *w,
                           const float *k, int N, int C)
{
    double sb = 0;
    for (int n = 0; n < N; n++) {
        double dg = (double)ddepth[n] * k[n];
        sb += dg;
        for (int c = 0; c < C; c++) dfeat[(size_t)n * C + c] = (float)(dg * w[c]);
    }
    db[0] += (float)sb;
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int n = 0; n < N; n++) s += (double)ddepth[n] * k[n] * feat[(size_t)n * C + c];
        dw[c] += (float)s;
    }
}

void rn_ref_coords(float *coord, const float *xy, const float *depth, int N)
{
    for (int n = 0; n < N; n++) {
        coord[3 * n] = xy[2 * n];
        coord[3 * n + 1] = xy[2 * n + 1];
        coord[3 * n + 2] = depth[n];
    }
}

static double sign(double x) { return (x > 0) - (x < 0); }

double rn_ref_loss(float *dxy, float *ddepth, const float *coord, const float *target, const float *vis,
                   const float *have_depth, float scale, int N)
{
    double loss = 0;
    for (int n = 0; n < N; n++) {
        double wt[3] = {vis[n], vis[n], (double)vis[n] * have_depth[n]}, g[3];
        for (int j = 0; j < 3; j++) {
            double e = (double)coord[3 * n + j] - target[3 * n + j];
            loss += fabs(e) * wt[j] / (3.0 * N);
            g[j] = sign(e) * wt[j] / (3.0 * N) * scale;
        }
        if (!dxy) continue;
        dxy[2 * n] = (float)g[0];
        dxy[2 * n + 1] = (float)g[1];
        ddepth[n] = (float)g[2];
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
