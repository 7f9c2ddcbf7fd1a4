/* test_backend_ops: every op of the device interface, checked three ways.
 *
 * 1. The reference backend's own math (src/ref) against hand-worked values,
 *    directly and through the ref device's op table.
 * 2. Its backward ops against central finite differences of its forward ops
 *    (inputs chosen away from the ReLU and max-pool kinks; an entry whose
 *    perturbation flips a ReLU anyway is skipped and counted).
 * 3. Every other compiled backend against the reference, op by op, over the
 *    shapes and channel counts RootNet uses and every precision the backend
 *    supports. A device that is not built in is reported "skipped".
 *
 * Each line names the op, the shape and the precision, the worst error and
 * the tolerance; the run ends with "N passed, N failed".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "core/status.h"
#include "nn/device.h"
#include "nn/kernel_math.h"
#include "ref/ref.h"

/* One line per check, and the check itself. A NaN error fails. */
static void report(const char *op, const char *shape, const char *prec, double err, double tol)
{
    int ok = err <= tol;
    printf("%-4s %-26s %-40s %-8s worst %-10.3g tol %.3g\n", ok ? "ok" : "FAIL", op, shape, prec, err, tol);
    RN_CHECK(ok, "%s %s %s: worst error %g above tolerance %g", op, shape, prec, err, tol);
}

static float *fvec(size_t n) { return rn_xcalloc(n ? n : 1, sizeof(float)); }

static float *randn(size_t n, double sd, rn_rng *r)
{
    float *v = fvec(n);
    for (size_t i = 0; i < n; i++) v[i] = (float)(sd * rn_rng_normal(r));
    return v;
}

/* Uniform with standard deviation sd (cheaper than randn for the big weight tensors). */
static float *randu(size_t n, double sd, rn_rng *r)
{
    float *v = fvec(n);
    for (size_t i = 0; i < n; i++) v[i] = (float)(sd * sqrt(3.0) * (2 * rn_rng_uniform(r) - 1));
    return v;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* max |got - want| / max(|want|, floor): the error relative to the tensor's scale. */
static double scaled_err(const float *got, const double *want, size_t n, double floor)
{
    double num = 0, den = floor;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= num)) num = d; /* also catches NaN */
        if (fabs(want[i]) > den) den = fabs(want[i]);
    }
    return num / den;
}

/* ---- 1. hand-worked values ---- */

/* A hand case with `live` input channels and one output channel, run on device d as a
 * 16 -> 16 channel conv (s.ic = s.oc = 16) whose other channels and weights are 0:
 * x (live, IH, IW), w (live, KH, KW) = the live part of the PyTorch-layout weight,
 * dy (OH, OW); y (OH, OW), dx (live, IH, IW) overwritten, dw (live, KH, KW) accumulated.
 * Returns how many values outside the live channels came out non-zero. */
static int conv16(rn_device *d, const rn_conv_shape *s, int live, const float *x, const float *w, const float *dy,
                  float *y, float *dx, float *dw)
{
    size_t kk = (size_t)s->kh * s->kw, pin = (size_t)s->ih * s->iw, pout = (size_t)s->oh * s->ow;
    float *x16 = fvec(16 * pin), *w16 = fvec(256 * kk), *dy16 = fvec(16 * pout), *dw16 = fvec(256 * kk);
    float *y16 = fvec(16 * pout), *dx16 = fvec(16 * pin);
    memcpy(x16, x, live * pin * sizeof *x);
    memcpy(dy16, dy, pout * sizeof *dy);
    for (int c = 0; c < live; c++) { /* weight (0, c) of a Conv2d, (c, 0) of a ConvTranspose2d */
        size_t at = (s->transposed ? (size_t)c * 16 : (size_t)c) * kk;
        memcpy(w16 + at, w + c * kk, kk * sizeof *w);
        memcpy(dw16 + at, dw + c * kk, kk * sizeof *w);
    }
    rn_conv *c = NULL;
    rn_err err = {0};
    RN_ASSERT(!d->ops->conv_create(d, &c, s, &err));
    d->ops->conv_set_weights(d, c, w16);
    d->ops->conv_forward(d, c, y16, x16);
    d->ops->conv_backward_weights(d, c, dw16, x16, dy16);
    d->ops->conv_backward_data(d, c, dx16, dy16);
    d->ops->conv_destroy(d, c);
    int stray = 0;
    for (size_t i = pout; i < 16 * pout; i++) stray += y16[i] != 0;
    for (size_t i = live * pin; i < 16 * pin; i++) stray += dx16[i] != 0;
    for (int c = 0; c < live; c++) {
        size_t at = (s->transposed ? (size_t)c * 16 : (size_t)c) * kk;
        memcpy(dw + c * kk, dw16 + at, kk * sizeof *dw);
        memset(dw16 + at, 0, kk * sizeof *dw16);
    }
    for (size_t i = 0; i < 256 * kk; i++) stray += dw16[i] != 0;
    memcpy(y, y16, pout * sizeof *y);
    memcpy(dx, dx16, live * pin * sizeof *dx);
    free(x16), free(w16), free(dy16), free(dw16), free(y16), free(dx16);
    return stray;
}

static void hand_conv(rn_device *ref)
{
    /* 3x3 input 1..9, all-ones 3x3 kernel, stride 2, padding 1: each output sums a 2x2 corner. */
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[9], y[4];
    for (int i = 0; i < 9; i++) w[i] = 1;
    rn_ref_conv_dims d = {.n = 1, .ic = 1, .ih = 3, .iw = 3, .oc = 1, .oh = 2, .ow = 2, .kh = 3, .kw = 3,
                          .sh = 2, .sw = 2, .ph = 1, .pw = 1};
    rn_ref_conv_forward(y, x, w, &d);
    double want[4] = {12, 16, 24, 28};
    report("hand conv forward", "1x1x3x3 k3 s2 p1", "fp32", scaled_err(y, want, 4, 1), 0);
    /* Backward-data of dy = 1: each input counts the outputs whose window holds it. */
    float dy[4] = {1, 1, 1, 1}, dx[9];
    rn_ref_conv_backward_data(dx, dy, w, &d);
    double wdx[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    report("hand conv backward_data", "1x1x3x3 k3 s2 p1", "fp32", scaled_err(dx, wdx, 9, 1), 0);
    /* dw[kh][kw] += sum of the inputs under that tap over the 4 outputs, on top of dw = 1. */
    float dw[9];
    for (int i = 0; i < 9; i++) dw[i] = 1;
    rn_ref_conv_backward_weights(dw, x, dy, &d);
    double wdw[9] = {1 + 5, 1 + 4 + 6, 1 + 5, 1 + 2 + 8, 1 + 1 + 3 + 7 + 9, 1 + 2 + 8, 1 + 5, 1 + 4 + 6, 1 + 5};
    report("hand conv backward_weights", "1x1x3x3 k3 s2 p1 (+=)", "fp32", scaled_err(dw, wdw, 9, 1), 0);
    /* The same through the ref device's op table, as channel 0 of a 16-channel conv. */
    rn_conv_shape s = {.n = 1, .ic = 16, .ih = 3, .iw = 3, .oc = 16, .oh = 2, .ow = 2, .kh = 3, .kw = 3,
                       .sh = 2, .sw = 2, .ph = 1, .pw = 1};
    for (int i = 0; i < 9; i++) dw[i] = 1;
    int stray = conv16(ref, &s, 1, x, w, dy, y, dx, dw);
    double e = fmax(scaled_err(y, want, 4, 1), fmax(scaled_err(dx, wdx, 9, 1), scaled_err(dw, wdw, 9, 1)));
    report("hand conv on the ref device", "16x3x3 k3 s2 p1, channel 0", "fp32", e + stray, 0);
}

static void hand_deconv(rn_device *ref)
{
    /* ConvTranspose2d, 1x2 input [1, 10], 1x3 kernel [1, 2, 3], stride 2: the two copies overlap at column 2. */
    float x[2] = {1, 10}, w[3] = {1, 2, 3}, y[5];
    rn_ref_conv_dims d = {.n = 1, .ic = 1, .ih = 1, .iw = 2, .oc = 1, .oh = 1, .ow = 5, .kh = 1, .kw = 3,
                          .sh = 1, .sw = 2, .ph = 0, .pw = 0};
    rn_ref_deconv_forward(y, x, w, &d);
    double want[5] = {1, 2, 3 + 10, 20, 30};
    report("hand deconv forward", "1x1x1x2 k1x3 s2", "fp32", scaled_err(y, want, 5, 1), 0);
    /* With padding 1 the first and last columns are cut: [2, 13, 20]. */
    rn_ref_conv_dims dp = d;
    dp.pw = 1, dp.ow = 3;
    rn_ref_deconv_forward(y, x, w, &dp);
    double wantp[3] = {2, 13, 20};
    report("hand deconv forward", "1x1x1x2 k1x3 s2 p1", "fp32", scaled_err(y, wantp, 3, 1), 0);
    /* Two channels in, the weight is (IC, OC, KH, KW): channel 1's kernel is [4, 5, 6]. */
    float x2[4] = {1, 10, 2, 0}, w2[6] = {1, 2, 3, 4, 5, 6}, y2[5];
    rn_ref_conv_dims d2 = d;
    d2.ic = 2;
    rn_ref_deconv_forward(y2, x2, w2, &d2);
    double want2[5] = {1 + 8, 2 + 10, 13 + 12, 20, 30};
    report("hand deconv forward", "1x2x1x2 k1x3 s2 (IC,OC,K)", "fp32", scaled_err(y2, want2, 5, 1), 0);
    float dy[5] = {1, 0, 0, 0, 1}, dx[2];
    rn_ref_deconv_backward_data(dx, dy, w, &d);
    double wdx[2] = {1, 3};
    report("hand deconv backward_data", "1x1x1x2 k1x3 s2", "fp32", scaled_err(dx, wdx, 2, 1), 0);
    float dw[3] = {0, 0, 0};
    rn_ref_deconv_backward_weights(dw, x, dy, &d);
    double wdw[3] = {1, 0, 10};
    report("hand deconv backward_weights", "1x1x1x2 k1x3 s2", "fp32", scaled_err(dw, wdw, 3, 1), 0);
    /* The two-channel case through the ref device. dx: [1, 3] from channel 0's kernel and
     * [4, 6] from channel 1's; dw[c][kw] = sum over iw of x[c][iw] dy[2 iw + kw]. */
    rn_conv_shape s = {.n = 1, .ic = 16, .ih = 1, .iw = 2, .oc = 16, .oh = 1, .ow = 5, .kh = 1, .kw = 3,
                       .sh = 1, .sw = 2, .transposed = 1};
    float dx2[4], dw2[6] = {0};
    int stray = conv16(ref, &s, 2, x2, w2, dy, y2, dx2, dw2);
    double wdx2[4] = {1, 3, 4, 6}, wdw2[6] = {1, 0, 10, 2, 0, 0};
    double e = fmax(scaled_err(y2, want2, 5, 1), fmax(scaled_err(dx2, wdx2, 4, 1), scaled_err(dw2, wdw2, 6, 1)));
    report("hand deconv on the ref device", "16x1x2 k1x3 s2, channels 0-1", "fp32", e + stray, 0);
}

/* The ops below run on the ref device through its op table, on host arrays
 * (its memory is host memory), so its wrapper is checked along with the math. */
static void hand_bn(rn_device *d)
{
    const rn_device_ops *op = d->ops;
    /* One channel, x = 1, 2, 3, 4 as (N, C, H, W) = (2, 1, 1, 2): mean 2.5, biased var 1.25, unbiased 5/3. */
    rn_act_shape a = {2, 1, 1, 2, RN_NUM_F32};
    float x[4] = {1, 2, 3, 4}, mean, var, y[4];
    double sums[3];
    op->bn_sums(d, sums, x, &a);
    op->bn_stats(d, &mean, &var, sums, sums[2], 1);
    double ms[2] = {2.5, 1.25};
    float got[2] = {mean, var};
    report("hand bn sums + stats", "2x1x1x2", "fp32", scaled_err(got, ms, 2, 1) + fabs(sums[2] - 4), 0);
    float rm = 0, rv = 1;
    op->bn_update_running(d, &rm, &rv, &mean, &var, 0.1, 4, 1);
    double rs[2] = {0.25, 0.9 + 0.1 * 5.0 / 3.0};
    float rgot[2] = {rm, rv};
    report("hand bn running update", "momentum 0.1, count 4", "fp32", scaled_err(rgot, rs, 2, 1), 1e-7);
    float g = 2, b = 1;
    float scale, shift;
    op->bn_fold(d, &scale, &shift, &mean, &var, &g, &b, 1);
    op->bn_apply(d, y, x, &scale, &shift, 0, &a);
    double is = 1 / sqrt(1.25 + 1e-5), wy[4] = {1 - 3 * is, 1 - is, 1 + is, 1 + 3 * is};
    report("hand bn fold + apply", "gamma 2 beta 1", "fp32", scaled_err(y, wy, 4, 1), 1e-7);
    op->bn_apply(d, y, x, &scale, &shift, 1, &a);
    double wyr[4] = {0, 1 - is, 1 + is, 1 + 3 * is};
    report("hand bn apply + relu", "gamma 2 beta 1", "fp32", scaled_err(y, wyr, 4, 1), 1e-7);
    /* Block ends: ReLU(x s + h + r) and ReLU(x s + h + x2 s2 + h2), scale 2, shift -5. */
    float s2 = 2, h2 = -5, r[4] = {10, -1, 0.5f, 0}, x2[4] = {0, 1, 2, 3};
    op->bn_add_relu(d, y, x, &s2, &h2, r, &a);
    double wa[4] = {7, 0, 1.5, 3};
    report("hand bn add relu", "residual", "fp32", scaled_err(y, wa, 4, 1), 0);
    op->bn2_add_relu(d, y, x, &s2, &h2, x2, &s2, &h2, &a);
    double wa2[4] = {0, 0, 0, 4};
    report("hand bn2 add relu", "downsample branch", "fp32", scaled_err(y, wa2, 4, 1), 0);
    /* dy = (1, 0, 0, 0): sum dz = 1, sum dz (x - mean) = -1.5; dgamma = -1.5 is, dbeta = 1. */
    float dy[4] = {1, 0, 0, 0}, dx[4], dg = 0, db = 0;
    op->bn_backward_sums(d, sums, dy, NULL, x, &mean, &a);
    op->bn_backward_params(d, &dg, &db, sums, &var, 1);
    op->bn_backward_data(d, dx, dy, NULL, x, &mean, &var, &g, sums, 4, &a);
    float pg[2] = {dg, db};
    double wp[2] = {-1.5 * is, 1};
    report("hand bn backward params", "dy = e0", "fp32", scaled_err(pg, wp, 2, 1), 1e-7);
    double wdx[4];
    for (int i = 0; i < 4; i++) wdx[i] = 2 * is * ((i == 0) - 0.25 - (x[i] - 2.5) * is * is * -1.5 / 4);
    report("hand bn backward data", "dy = e0", "fp32", scaled_err(dx, wdx, 4, 1), 1e-7);
    /* A ReLU after the BN that was off at element 0 stops its gradient entirely. */
    float relu_out[4] = {0, 1, 1, 1};
    op->bn_backward_sums(d, sums, dy, relu_out, x, &mean, &a);
    double wz[2] = {0, 0};
    float zs[2] = {(float)sums[0], (float)sums[1]};
    report("hand bn backward relu mask", "relu_out[0] = 0", "fp32", scaled_err(zs, wz, 2, 1), 0);
}

static void hand_pool_gap(rn_device *d)
{
    const rn_device_ops *op = d->ops;
    rn_act_shape a = {1, 1, 3, 3, RN_NUM_F32};
    /* All-equal 3x3 input: PyTorch routes each output's gradient to the first
     * element of its window in scan order: (0,0), (0,1), (1,0), (1,1). */
    float x[9], y[4], dy[4] = {1, 2, 3, 4}, dx[9];
    for (int i = 0; i < 9; i++) x[i] = 5;
    op->maxpool_forward(d, y, x, &a, 2, 2);
    double wy[4] = {5, 5, 5, 5};
    report("hand maxpool forward", "ties 1x1x3x3", "fp32", scaled_err(y, wy, 4, 1), 0);
    op->maxpool_backward(d, dx, dy, x, &a, 2, 2);
    double wdx[9] = {1, 2, 0, 3, 4, 0, 0, 0, 0};
    report("hand maxpool backward", "ties: first max", "fp32", scaled_err(dx, wdx, 9, 1), 0);
    /* All negative: the padding is not a 0 that could win. */
    float x2[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    op->maxpool_forward(d, y, x2, &a, 2, 2);
    double wy2[4] = {-1, -2, -4, -5};
    report("hand maxpool forward", "negative 1x1x3x3", "fp32", scaled_err(y, wy2, 4, 1), 0);
    float g[2], gx[6] = {1, 2, 3, 4, 5, 6}, gd[2] = {3, 6}, gdx[6] = {1, 1, 1, 1, 1, 1};
    rn_act_shape ag = {2, 1, 1, 3, RN_NUM_F32};
    op->gap_forward(d, g, gx, &ag);
    double wg[2] = {2, 5};
    report("hand gap forward", "2x1x3", "fp32", scaled_err(g, wg, 2, 1), 0);
    op->gap_backward(d, gdx, gd, &ag);
    double wgd[6] = {2, 2, 2, 3, 3, 3};
    report("hand gap backward", "2x1x3 (+=)", "fp32", scaled_err(gdx, wgd, 6, 1), 0);
}

/* The heat-map heads' generic ops by hand (nn/device_ops.inc): pointwise + soft-argmax (2D, then a
 * 3D volume), a two-output pointwise conv, the linear layer with and without a per-sample factor,
 * the masked L1 loss with one and two rows per sample. */
static void hand_heatmap(rn_device *d)
{
    const rn_device_ops *op = d->ops;
    rn_act_shape a2 = {2, 1, 2, 3, RN_NUM_F32};
    /* a = 0: uniform softmax over a 2x3 grid, x = mean column = 1, y = mean row = 0.5. */
    float a[12] = {0}, w = 1, b = 3, out[6] = {0, 0, 7, 0, 0, 7}, lg[12];
    a[6 + 2] = 40; /* sample 1, channel 0, position (0, 2): dominates */
    op->pointwise_forward(d, lg, a, &w, &b, &a2, 1);
    op->softargmax_forward(d, out, lg, lg, 2, 1, 1, 2, 3, 3);
    double wc[6] = {1, 0.5, 7, 2, 0, 7}; /* the third column untouched (D = 1) */
    report("hand softargmax forward", "2x1x2x3 D=1 in place", "fp32", scaled_err(out, wc, 6, 1), 1e-7);
    /* d x / d logit_p = prob_p (col_p - x): at a uniform 2x3 softmax, (c - 1) / 6; sample 1 gets no gradient. */
    float dc[6] = {1, 0, 0, 0, 0, 0}, da[12], dw = 0, db = 0;
    op->softargmax_backward(d, lg, lg, dc, 2, 1, 1, 2, 3, 3);
    op->pointwise_backward(d, da, &dw, &db, lg, a, &w, &a2, 1);
    double wda[12] = {-1 / 6.0, 0, 1 / 6.0, -1 / 6.0, 0, 1 / 6.0};
    report("hand pointwise+softargmax bwd", "uniform softmax", "fp32", scaled_err(da, wda, 12, 1), 1e-7);
    /* two groups of 2 bins x 1 x 2: group 0 uniform (0.5, 0, 0.5); group 1 dominated by bin 1, column 0 */
    float v[8] = {0, 0, 0, 0, 0, 0, 50, 0}, pv[8], o3[6];
    op->softargmax_forward(d, o3, pv, v, 1, 2, 2, 1, 2, 3);
    double w3[6] = {0.5, 0, 0.5, 0, 0, 1};
    report("hand softargmax forward", "G=2 D=2 1x2", "fp32", scaled_err(o3, w3, 6, 1), 1e-7);
    /* d z / d logit_p = prob_p (bin_p - z) = (bin - 0.5) / 4 in group 0 (dout (0, 0, 1)) */
    float g3[6] = {0, 0, 1, 0, 0, 0};
    op->softargmax_backward(d, pv, pv, g3, 1, 2, 2, 1, 2, 3);
    double wdl[4] = {-0.125, -0.125, 0.125, 0.125};
    report("hand softargmax backward", "G=2 D=2 dz", "fp32", scaled_err(pv, wdl, 4, 1), 1e-7);
    /* pointwise with two outputs at one position: y = (1 + 2, 0.5 - 2 + 1) */
    rn_act_shape a1 = {1, 2, 1, 1, RN_NUM_F32};
    float x2[2] = {1, 2}, w2[4] = {1, 1, 0.5f, -1}, b2[2] = {0, 1}, y2[2], dy2[2] = {1, 2}, dx2[2];
    float dw2[4] = {0}, db2[2] = {0};
    op->pointwise_forward(d, y2, x2, w2, b2, &a1, 2);
    double wy2[2] = {3, -0.5};
    report("hand pointwise forward", "O=2", "fp32", scaled_err(y2, wy2, 2, 1), 0);
    op->pointwise_backward(d, dx2, dw2, db2, dy2, x2, w2, &a1, 2);
    double wg2[8] = {2, -1, 1, 2, 2, 4, 1, 2}; /* dx, dw (+=), db (+=) */
    float gg2[8] = {dx2[0], dx2[1], dw2[0], dw2[1], dw2[2], dw2[3], db2[0], db2[1]};
    report("hand pointwise backward", "O=2", "fp32", scaled_err(gg2, wg2, 8, 1), 0);
}

static void hand_linear_loss(rn_device *d)
{
    const rn_device_ops *op = d->ops;
    float feat[4] = {1, 2, 3, 4}, dwt[2] = {0.5f, -1}, dbias = 2, k[2] = {10, 100}, rows[6] = {0};
    op->linear_forward(d, rows + 2, feat, dwt, &dbias, k, 2, 2, 1, 3);
    double wd[6] = {0, 0, (0.5 - 2 + 2) * 10, 0, 0, (1.5 - 4 + 2) * 100};
    report("hand linear forward", "2x2 times k, col 2 of 3", "fp32", scaled_err(rows, wd, 6, 1), 0);
    float w2[4] = {0.5f, -1, 1, 1}, b2[2] = {2, 0}, y2[4];
    op->linear_forward(d, y2, feat, w2, b2, NULL, 2, 2, 2, 2);
    double wy2[4] = {0.5, 3, -0.5, 7};
    report("hand linear forward", "2x2 O=2", "fp32", scaled_err(y2, wy2, 4, 1), 0);
    /* dy (1, 2; 3, 4): dx = dy w, dw += dy^T x, db += column sums */
    float dy2[4] = {1, 2, 3, 4}, dx2[4], dw2[4] = {0}, db2[2] = {0};
    op->linear_backward(d, dx2, dw2, db2, dy2, feat, w2, NULL, 2, 2, 2, 2);
    double wg[10] = {2.5, 1, 5.5, 1, 10, 14, 14, 20, 4, 6};
    float gg[10] = {dx2[0], dx2[1], dx2[2], dx2[3], dw2[0], dw2[1], dw2[2], dw2[3], db2[0], db2[1]};
    report("hand linear backward", "2x2 O=2", "fp32", scaled_err(gg, wg, 10, 1), 0);
    /* loss: sample 0 off by (1, -2, 3) visible with depth, sample 1 off by (4, 0, 5) invisible. */
    float c[6] = {1, -2, 3, 4, 0, 5}, t[6] = {0}, vis[2] = {1, 0}, hd[2] = {1, 1}, g[6];
    double loss;
    op->l1_loss(d, &loss, g, c, t, vis, hd, 2, 2, 1);
    float lf = (float)loss;
    double wl = (1 + 2 + 3) / 3.0 / 2;
    report("hand l1 loss", "N=2 K=1", "fp32", scaled_err(&lf, &wl, 1, 1), 1e-7);
    /* Gradient sign(e) v / (3N), times the loss scale 2. */
    double wgl[6] = {2 / 6.0, -2 / 6.0, 2 / 6.0, 0, 0, 0};
    report("hand l1 loss gradient", "N=2 K=1 scale 2", "fp32", scaled_err(g, wgl, 6, 1), 1e-7);
    /* the same rows as one sample of two rows: the mean over 2 rows, have_depth the sample's */
    float hd0 = 0;
    op->l1_loss(d, &loss, g, c, t, vis, &hd0, 1, 1, 2);
    lf = (float)loss;
    wl = (1 + 2) / 3.0 / 2;
    double wgk[6] = {1 / 6.0, -1 / 6.0, 0, 0, 0, 0};
    report("hand l1 loss", "N=1 K=2 no depth", "fp32", fmax(scaled_err(&lf, &wl, 1, 1), scaled_err(g, wgk, 6, 1)),
           1e-7);
}

static void hand_adam(rn_device *d)
{
    const rn_device_ops *op = d->ops;
    /* the schedule by hand: lr / (1 - 0.9^t), sqrt(1 - 0.999^t) */
    double s1[2] = {0.1 / (1 - 0.9), sqrt(1 - 0.999)}, s2[2] = {0.1 / (1 - 0.81), sqrt(1 - 0.998001)};
    double s3[2] = {0.1 / (1 - 0.729), sqrt(1 - 0.997002999)};
    rn_adam_args h = {.beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .sched = s1};
    /* Step 1 from zero moments: m = 0.1 g, v = 0.001 g^2, both bias corrections
     * undo the betas exactly, so the update is lr * g / (|g| + eps). */
    float p[2] = {1, -1}, m[2] = {0, 0}, v[2] = {0, 0}, g[2] = {0.5f, -4};
    op->adam(d, p, g, m, v, 2, &h);
    double wp[2] = {1 - 0.1 * 0.5 / (0.5 + 1e-8), -1 + 0.1 * 4 / (4 + 1e-8)};
    report("hand adam step 1", "n=2", "fp32", scaled_err(p, wp, 2, 1), 1e-7);
    /* Step 2 with the same g: m = 0.19 g, v = 0.001999 g^2, corrections 0.19 and 0.001999. */
    h.sched = s2;
    op->adam(d, p, g, m, v, 2, &h);
    double wp2[2] = {wp[0] - 0.1 * 0.5 / (0.5 + 1e-8), wp[1] + 0.1 * 4 / (4 + 1e-8)};
    report("hand adam step 2", "n=2", "fp32", scaled_err(p, wp2, 2, 1), 1e-7);
    double wm[2] = {0.19 * 0.5, 0.19 * -4}, wv[2] = {0.001999 * 0.25, 0.001999 * 16};
    report("hand adam moments", "n=2", "fp32", fmax(scaled_err(m, wm, 2, 1e-30), scaled_err(v, wv, 2, 1e-30)), 1e-7);
    float gs[3] = {2, -4, 8};
    int fin = -1, fi = -1, fn = -1;
    op->unscale_check(d, gs, 3, 0.25f, &fin);
    double wg[3] = {0.5, -1, 2};
    report("hand unscale", "finite", "fp32", scaled_err(gs, wg, 3, 1) + (fin != 1), 0);
    float gi[3] = {1, INFINITY, 2}, gn[2] = {NAN, 0};
    op->unscale_check(d, gi, 3, 1.0f, &fi);
    op->unscale_check(d, gn, 2, 0.5f, &fn);
    report("hand unscale", "inf, nan -> not finite", "fp32", (fi != 0) + (fn != 0), 0);
    /* Adam told by the flag that the gradients overflowed writes nothing. */
    float keep[6] = {p[0], p[1], m[0], m[1], v[0], v[1]};
    h.sched = s3, h.finite = &fi;
    op->adam(d, p, g, m, v, 2, &h);
    float now[6] = {p[0], p[1], m[0], m[1], v[0], v[1]};
    report("hand adam skipped", "finite flag 0", "fp32", memcmp(keep, now, sizeof keep) != 0, 0);
}

/* ---- 2. finite differences of the reference's own ops ---- */

/* The loss whose gradient is checked, evaluated at the current inputs; sig
 * is a signature of the kinks (ReLU pattern) the evaluation went through. */
typedef double (*fd_loss)(void *ctx, unsigned long *sig);

#define FD_SAMPLES 24

/* Worst |central difference - analytic| over up to FD_SAMPLES random entries
 * of v, relative to max |analytic|. Entries whose +-h evaluations cross a
 * kink (signature changes) are skipped and counted in *skipped. */
static double fd_check(float *v, size_t n, const float *an, double h, fd_loss f, void *ctx, rn_rng *r, int *skipped)
{
    unsigned long s0, sp, sm;
    f(ctx, &s0);
    double worst = 0, scale = 1e-30;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(an[i]));
    for (int k = 0; k < FD_SAMPLES; k++) {
        size_t i = rn_rng_below(r, n);
        float keep = v[i], hi = (float)(keep + h), lo = (float)(keep - h);
        v[i] = hi;
        double lp = f(ctx, &sp);
        v[i] = lo;
        double lm = f(ctx, &sm);
        v[i] = keep;
        if (sp != s0 || sm != s0) {
            (*skipped)++;
            continue;
        }
        double fd = (lp - lm) / ((double)hi - lo), d = fabs(fd - an[i]);
        if (!(d <= worst)) worst = d;
    }
    return worst / scale;
}

static unsigned long relu_sig(const float *y, size_t n)
{
    unsigned long s = 1469598103934665603ul;
    for (size_t i = 0; i < n; i++) s = (s ^ (y[i] > 0)) * 1099511628211ul;
    return s;
}

typedef struct conv_fd {
    rn_ref_conv_dims d;
    int transposed;
    float *x, *w, *y, *r;
} conv_fd;

static size_t conv_nx(const rn_ref_conv_dims *d) { return (size_t)d->n * d->ic * d->ih * d->iw; }
static size_t conv_ny(const rn_ref_conv_dims *d) { return (size_t)d->n * d->oc * d->oh * d->ow; }
static size_t conv_nw(const rn_ref_conv_dims *d) { return (size_t)d->oc * d->ic * d->kh * d->kw; }

static double conv_loss(void *ctx, unsigned long *sig)
{
    conv_fd *c = ctx;
    (c->transposed ? rn_ref_deconv_forward : rn_ref_conv_forward)(c->y, c->x, c->w, &c->d);
    *sig = 0;
    return dot(c->r, c->y, conv_ny(&c->d));
}

static void fd_conv(rn_ref_conv_dims d, int transposed, const char *shape, rn_rng *r)
{
    conv_fd c = {.d = d, .transposed = transposed};
    size_t nx = conv_nx(&d), ny = conv_ny(&d), nw = conv_nw(&d);
    c.x = randn(nx, 1, r), c.w = randn(nw, 1, r), c.y = fvec(ny), c.r = randn(ny, 1, r);
    float *dx = fvec(nx), *dw = fvec(nw);
    if (transposed) {
        rn_ref_deconv_backward_data(dx, c.r, c.w, &d);
        rn_ref_deconv_backward_weights(dw, c.x, c.r, &d);
    } else {
        rn_ref_conv_backward_data(dx, c.r, c.w, &d);
        rn_ref_conv_backward_weights(dw, c.x, c.r, &d);
    }
    int sk = 0;
    char op[64];
    snprintf(op, sizeof op, "fd %s backward_data", transposed ? "deconv" : "conv");
    report(op, shape, "fp32", fd_check(c.x, nx, dx, 1e-2, conv_loss, &c, r, &sk), 1e-4);
    snprintf(op, sizeof op, "fd %s backward_weights", transposed ? "deconv" : "conv");
    report(op, shape, "fp32", fd_check(c.w, nw, dw, 1e-2, conv_loss, &c, r, &sk), 1e-4);
    free(c.x), free(c.w), free(c.y), free(c.r), free(dx), free(dw);
}

typedef struct bn_fd {
    int N, C, HW, relu;
    float *x, *gamma, *beta, *y, *r, *mean, *var, *scale, *shift;
    double *sums;
} bn_fd;

static double bn_loss(void *ctx, unsigned long *sig)
{
    bn_fd *b = ctx;
    size_t n = (size_t)b->N * b->C * b->HW;
    rn_ref_bn_sums(b->sums, b->x, b->N, b->C, b->HW);
    rn_ref_bn_stats_from_sums(b->mean, b->var, b->sums, (double)b->N * b->HW, b->C);
    rn_ref_bn_fold(b->scale, b->shift, b->mean, b->var, b->gamma, b->beta, b->C);
    rn_ref_bn_apply(b->y, b->x, b->scale, b->shift, b->relu, b->N, b->C, b->HW);
    *sig = b->relu ? relu_sig(b->y, n) : 0;
    return dot(b->r, b->y, n);
}

/* Train-mode BN (+ReLU): dx, dgamma, dbeta against finite differences. */
static void fd_bn(int N, int C, int H, int W, int relu, rn_rng *r)
{
    int HW = H * W;
    size_t n = (size_t)N * C * HW;
    bn_fd b = {.N = N, .C = C, .HW = HW, .relu = relu};
    b.x = randn(n, 2, r), b.gamma = randn(C, 1, r), b.beta = randn(C, 0.5, r), b.y = fvec(n), b.r = randn(n, 1, r);
    b.mean = fvec(C), b.var = fvec(C), b.scale = fvec(C), b.shift = fvec(C);
    b.sums = rn_xmalloc(2 * (size_t)C * sizeof *b.sums);
    for (size_t i = 0; i < n; i++) b.x[i] += 3; /* an offset the mean must remove */
    unsigned long sig;
    bn_loss(&b, &sig);
    float *dx = fvec(n), *dg = fvec(C), *db = fvec(C);
    rn_ref_bn_backward_sums(b.sums, b.r, relu ? b.y : NULL, b.x, b.mean, N, C, HW);
    rn_ref_bn_backward_params(dg, db, b.sums, b.var, C);
    rn_ref_bn_backward_data(dx, b.r, relu ? b.y : NULL, b.x, b.mean, b.var, b.gamma, b.sums, (double)N * HW, N, C, HW);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d%s", N, C, H, W, relu ? " +relu" : "");
    int sk = 0;
    report("fd bn backward_data", shape, "fp32", fd_check(b.x, n, dx, 1e-3, bn_loss, &b, r, &sk), 2e-3);
    report("fd bn backward gamma", shape, "fp32", fd_check(b.gamma, C, dg, 1e-3, bn_loss, &b, r, &sk), 2e-3);
    report("fd bn backward beta", shape, "fp32", fd_check(b.beta, C, db, 1e-3, bn_loss, &b, r, &sk), 2e-3);
    if (sk) printf("     (fd bn %s: %d entries skipped, their +-h crossed a ReLU kink)\n", shape, sk);
    free(b.x), free(b.gamma), free(b.beta), free(b.y), free(b.r), free(b.mean), free(b.var), free(b.sums);
    free(b.scale), free(b.shift);
    free(dx), free(dg), free(db);
}

typedef struct pool_fd {
    int N, C, H, W, OH, OW;
    float *x, *y, *r;
} pool_fd;

static double pool_loss(void *ctx, unsigned long *sig)
{
    pool_fd *p = ctx;
    rn_ref_maxpool_forward(p->y, p->x, p->N, p->C, p->H, p->W, p->OH, p->OW);
    *sig = 0;
    return dot(p->r, p->y, (size_t)p->N * p->C * p->OH * p->OW);
}

/* Max-pool on distinct values at least 0.01 apart, perturbed by 1e-3: no kink is crossed. */
static void fd_pool(int N, int C, int H, int W, rn_rng *r)
{
    pool_fd p = {.N = N, .C = C, .H = H, .W = W, .OH = (H - 1) / 2 + 1, .OW = (W - 1) / 2 + 1};
    size_t n = (size_t)N * C * H * W, ny = (size_t)N * C * p.OH * p.OW;
    p.x = fvec(n), p.y = fvec(ny), p.r = randn(ny, 1, r);
    for (size_t i = 0; i < n; i++) p.x[i] = (float)(0.01 * i);
    for (size_t i = n - 1; i > 0; i--) { /* shuffle */
        size_t j = rn_rng_below(r, i + 1);
        float t = p.x[i];
        p.x[i] = p.x[j], p.x[j] = t;
    }
    float *dx = fvec(n);
    rn_ref_maxpool_backward(dx, p.r, p.x, N, C, H, W, p.OH, p.OW);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d", N, C, H, W);
    int sk = 0;
    report("fd maxpool backward", shape, "fp32", fd_check(p.x, n, dx, 1e-3, pool_loss, &p, r, &sk), 1e-3);
    free(p.x), free(p.y), free(p.r), free(dx);
}

typedef struct head_fd {
    int N, C, H, W, G, D;
    float *a, *w, *b, *out, *prob, *r; /* pointwise + softargmax */
    float *feat, *lw, *lb, *k, *y, *rl; /* linear */
    int O;
} head_fd;

static double heat_loss(void *ctx, unsigned long *sig)
{
    head_fd *h = ctx;
    rn_ref_pointwise_forward(h->prob, h->a, h->w, h->b, h->N, h->C, h->H * h->W, h->G * h->D);
    rn_ref_softargmax_forward(h->out, h->prob, h->prob, h->N, h->G, h->D, h->H, h->W, 3);
    *sig = 0;
    return dot(h->r, h->out, 3 * (size_t)h->N * h->G);
}

static double linear_loss(void *ctx, unsigned long *sig)
{
    head_fd *h = ctx;
    rn_ref_linear_forward(h->y, h->feat, h->lw, h->lb, h->k, h->N, h->C, h->O, h->O + 1);
    *sig = 0;
    return dot(h->rl, h->y, (size_t)h->N * (h->O + 1));
}

/* Finite differences of pointwise + softargmax (G groups of D bins: each group's D channels of H x W
 * logits one volume) and of the linear layer times k, writing O of each row's O + 1 columns. */
static void fd_head(int N, int C, int H, int W, int G, int D, int O, rn_rng *r)
{
    head_fd h = {.N = N, .C = C, .H = H, .W = W, .G = G, .D = D, .O = O};
    int HW = H * W, P = G * D;
    size_t na = (size_t)N * C * HW, rows = (size_t)N * G;
    h.a = randn(na, 1, r), h.w = randn((size_t)P * C, 1.0 / sqrt(C), r), h.b = randn(P, 1, r);
    h.out = fvec(3 * rows), h.prob = fvec((size_t)N * P * HW), h.r = randn(3 * rows, 1, r);
    if (D == 1)
        for (size_t i = 0; i < rows; i++) h.r[3 * i + 2] = 0; /* no third column */
    unsigned long sig;
    heat_loss(&h, &sig);
    float *da = fvec(na), *dw = fvec((size_t)P * C), *db = fvec(P);
    rn_ref_softargmax_backward(h.prob, h.prob, h.r, N, G, D, H, W, 3);
    rn_ref_pointwise_backward(da, dw, db, h.prob, h.a, h.w, N, C, HW, P);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d G=%d D=%d", N, C, H, W, G, D);
    int sk = 0;
    report("fd heatmap backward dx", shape, "fp32", fd_check(h.a, na, da, 1e-3, heat_loss, &h, r, &sk), 2e-3);
    report("fd heatmap backward dw", shape, "fp32", fd_check(h.w, (size_t)P * C, dw, 1e-3, heat_loss, &h, r, &sk), 2e-3);
    if (D == 1) /* The softmax ignores a shift of every logit, so d/db is exactly 0. */
        report("heatmap backward db = 0", shape, "fp32", fabs(dot(db, db, P)), 1e-12);
    else
        report("fd heatmap backward db", shape, "fp32", fd_check(h.b, P, db, 1e-3, heat_loss, &h, r, &sk), 2e-3);

    h.feat = randn((size_t)N * C, 1, r), h.lw = randn((size_t)O * C, 1, r), h.lb = randn(O, 1, r);
    h.k = randn(N, 3, r), h.y = fvec((size_t)N * (O + 1)), h.rl = randn((size_t)N * (O + 1), 1, r);
    float *dfeat = fvec((size_t)N * C), *ldw = fvec((size_t)O * C), *ldb = fvec(O);
    rn_ref_linear_backward(dfeat, ldw, ldb, h.rl, h.feat, h.lw, h.k, N, C, O, O + 1);
    snprintf(shape, sizeof shape, "%dx%d O=%d times k", N, C, O);
    report("fd linear backward dx", shape, "fp32", fd_check(h.feat, (size_t)N * C, dfeat, 1e-2, linear_loss, &h, r, &sk), 1e-4);
    report("fd linear backward dw", shape, "fp32", fd_check(h.lw, (size_t)O * C, ldw, 1e-2, linear_loss, &h, r, &sk), 1e-4);
    report("fd linear backward db", shape, "fp32", fd_check(h.lb, O, ldb, 1e-2, linear_loss, &h, r, &sk), 1e-4);
    free(h.a), free(h.w), free(h.b), free(h.out), free(h.prob), free(h.r), free(da), free(dw), free(db);
    free(h.feat), free(h.lw), free(h.lb), free(h.k), free(h.y), free(h.rl), free(dfeat), free(ldw), free(ldb);
}

typedef struct simple_fd {
    int N, C, HW;
    float *x, *y, *r;
    float *target, *vis, *hd; /* loss */
} simple_fd;

static double gap_loss(void *ctx, unsigned long *sig)
{
    simple_fd *s = ctx;
    rn_ref_gap_forward(s->y, s->x, s->N, s->C, s->HW);
    *sig = 0;
    return dot(s->r, s->y, (size_t)s->N * s->C);
}

static double relu_loss(void *ctx, unsigned long *sig)
{
    simple_fd *s = ctx;
    size_t n = (size_t)s->N * s->C * s->HW;
    rn_ref_relu_forward(s->y, s->x, n);
    *sig = relu_sig(s->y, n);
    return dot(s->r, s->y, n);
}

static double l1_loss(void *ctx, unsigned long *sig)
{
    simple_fd *s = ctx;
    *sig = 0;
    return rn_ref_l1_loss(NULL, s->x, s->target, s->vis, s->hd, 1, s->N / 2, 2);
}

static void fd_simple(int N, int C, int HW, rn_rng *r)
{
    size_t n = (size_t)N * C * HW;
    simple_fd s = {.N = N, .C = C, .HW = HW};
    s.x = randn(n, 1, r), s.y = fvec(n), s.r = randn(n, 1, r);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d", N, C, HW);
    int sk = 0;
    float *dx = fvec(n);
    rn_ref_gap_backward(dx, s.r, N, C, HW);
    report("fd gap backward", shape, "fp32", fd_check(s.x, n, dx, 1e-2, gap_loss, &s, r, &sk), 1e-4);
    for (size_t i = 0; i < n; i++) s.x[i] += s.x[i] < 0 ? -0.05f : 0.05f; /* away from the kink */
    rn_ref_relu_forward(s.y, s.x, n);
    memcpy(dx, s.r, n * sizeof *dx);
    rn_ref_relu_backward(dx, s.y, n);
    report("fd relu backward", shape, "fp32", fd_check(s.x, n, dx, 1e-3, relu_loss, &s, r, &sk), 1e-3);
    free(s.x), free(s.y), free(s.r), free(dx);

    /* L1 loss over N rows (N / 2 samples of 2), every error at least 0.05 from 0; vis and have_depth in {0, 1}. */
    s.x = randn(3 * (size_t)N, 1, r), s.target = fvec(3 * (size_t)N), s.vis = fvec(N), s.hd = fvec(N);
    for (int i = 0; i < 3 * N; i++) s.target[i] = s.x[i] + (i % 2 ? 0.05f : -0.07f) * (1 + i % 5);
    for (int i = 0; i < N; i++) s.vis[i] = i % 3 != 1, s.hd[i] = i % 4 != 2;
    float *dc = fvec(3 * (size_t)N);
    rn_ref_l1_loss(dc, s.x, s.target, s.vis, s.hd, 1, N / 2, 2);
    snprintf(shape, sizeof shape, "N=%d K=2", N / 2);
    report("fd l1 loss gradient", shape, "fp32", fd_check(s.x, 3 * (size_t)N, dc, 1e-3, l1_loss, &s, r, &sk), 1e-3);
    free(s.x), free(s.target), free(s.vis), free(s.hd), free(dc);
}

static void finite_differences(rn_rng *r)
{
    /* n, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw: the stem, a 3x3 block conv, a 1x1 downsample,
     * a strided 3x3 and a transposed (upsampling) conv. */
    static const struct {
        rn_ref_conv_dims d;
        int transposed;
        const char *shape;
    } convs[] = {
        {{2, 3, 13, 10, 4, 7, 5, 7, 7, 2, 2, 3, 3}, 0, "2x3x13x10 -> 4 k7 s2 p3"},
        {{1, 5, 7, 6, 6, 7, 6, 3, 3, 1, 1, 1, 1}, 0, "1x5x7x6 -> 6 k3 s1 p1"},
        {{2, 6, 7, 5, 8, 4, 3, 1, 1, 2, 2, 0, 0}, 0, "2x6x7x5 -> 8 k1 s2"},
        {{1, 4, 9, 8, 5, 5, 4, 3, 3, 2, 2, 1, 1}, 0, "1x4x9x8 -> 5 k3 s2 p1"},
        {{2, 4, 3, 5, 3, 6, 10, 4, 4, 2, 2, 1, 1}, 1, "2x4x3x5 -> 3 k4 s2 p1"},
    };
    for (size_t i = 0; i < sizeof convs / sizeof *convs; i++)
        fd_conv(convs[i].d, convs[i].transposed, convs[i].shape, r);
    fd_bn(2, 3, 5, 3, 0, r);
    fd_bn(1, 4, 3, 7, 1, r);
    fd_pool(2, 3, 7, 6, r);
    fd_pool(1, 2, 8, 5, r);
    fd_head(2, 5, 3, 4, 1, 1, 1, r);
    fd_head(1, 7, 5, 2, 1, 1, 2, r);
    fd_head(2, 4, 6, 3, 2, 3, 1, r);
    fd_simple(4, 4, 5, r);
}

/* ---- 3. every compiled device against the reference device ---- */

#define U32 (1.0 / 16777216.0) /* fp32 unit roundoff, 2^-24 */
#define U16 (1.0 / 256.0)      /* bf16 unit roundoff, 2^-8 */
#define U11 (1.0 / 2048.0)     /* fp16 unit roundoff, 2^-11 */

typedef struct prec {
    const char *name;
    rn_numtype compute;
    rn_numtype act;
} prec;

static const prec PRECS[] = {
    {"fp32", RN_NUM_F32, RN_NUM_F32},
    {"bf16", RN_NUM_BF16, RN_NUM_F32},
    {"bf16-o2", RN_NUM_BF16, RN_NUM_BF16},
    {"fp16", RN_NUM_F16, RN_NUM_F32},    /* CUDA only: cpu and ref say skipped */
    {"fp16-o2", RN_NUM_F16, RN_NUM_F16},
};

/* The unit roundoff of storing in t (0 for fp32). */
static double unit_of(rn_numtype t) { return t == RN_NUM_BF16 ? U16 : t == RN_NUM_F16 ? U11 : 0; }

/* The unit roundoff of a conv's compute type. */
static double unit_of_compute(rn_numtype c) { return c == RN_NUM_BF16 ? U16 : c == RN_NUM_F16 ? U11 : 0; }

/* v rounded to nearest even in t (itself for fp32). */
static float round_to(rn_numtype t, float v)
{
    if (t == RN_NUM_BF16) return rn_bf16_to_f32(rn_bf16_from_f32(v));
    if (t == RN_NUM_F16) return rn_km_f16_to_f32(rn_km_f32_to_f16(v));
    return v;
}

/* The device under test in one precision, and the reference device (fp32). */
typedef struct pair {
    rn_device *dev, *ref;
    prec p;
} pair;

/* Tolerance of an op that computes in fp32 (k32 float roundings' worth) and
 * rounds what it writes once to the activation type when out_act. */
static double tol_op(const pair *pr, double k32, int out_act)
{
    return k32 * U32 + (out_act ? unit_of(pr->p.act) : 0);
}

/* Tolerance of a conv output: in bf16 (fp16) compute each product has up to two
 * roundings (input, weight) of 2^-8 (2^-11) with random signs, and the worst element
 * of the tensor gets a margin of 2: 4 units. */
static double tol_conv(const pair *pr, double k32, int out_act)
{
    double u = unit_of_compute(pr->p.compute);
    return (u ? 4 * u : k32 * U32) + (out_act ? unit_of(pr->p.act) : 0);
}

static double scaled_err_f(const float *got, const float *want, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= num)) num = d;
        if (fabs(want[i]) > den) den = fabs(want[i]);
    }
    return num / den;
}

static void cmp(const pair *pr, const char *op, const char *shape, const float *got, const float *want, size_t n,
                double tol)
{
    report(op, shape, pr->p.name, scaled_err_f(got, want, n), tol);
}

/* Device k of the pair (0 under test, 1 reference) and the activation type it runs. */
static rn_device *pick(const pair *pr, int k) { return k ? pr->ref : pr->dev; }
static rn_numtype pick_act(const pair *pr, int k) { return k ? RN_NUM_F32 : pr->p.act; }

/* n values ~ N(mean, sd), each exactly representable in t (both devices see the same input). */
static float *act_rand(size_t n, double mean, double sd, rn_numtype t, rn_rng *r)
{
    float *v = randn(n, sd, r);
    for (size_t i = 0; i < n; i++) {
        v[i] += (float)mean;
        v[i] = round_to(t, v[i]);
    }
    return v;
}

static size_t act_n(const rn_act_shape *a) { return (size_t)a->n * a->c * a->h * a->w; }

static const char *act_label(char *buf, size_t len, const rn_act_shape *a)
{
    snprintf(buf, len, "%dx%dx%dx%d", a->n, a->c, a->h, a->w);
    return buf;
}

/* Device buffers of one run, freed together. */
#define DM_MAX 20
typedef struct dmem {
    rn_device *dev;
    void *p[DM_MAX];
    int n;
} dmem;

static void *dm_alloc(dmem *m, size_t bytes)
{
    RN_ASSERT(m->n < DM_MAX);
    void *p = m->dev->ops->alloc(m->dev, bytes);
    RN_ASSERT(p);
    return m->p[m->n++] = p;
}

static void *dm_put(dmem *m, const void *host, size_t bytes)
{
    void *p = dm_alloc(m, bytes);
    m->dev->ops->upload(m->dev, p, host, bytes);
    return p;
}

/* An activation of shape a (type t), uploaded from host NCHW fp32 unless host is NULL. */
static void *dm_act(dmem *m, const float *host, const rn_act_shape *a)
{
    void *p = dm_alloc(m, m->dev->ops->act_bytes(m->dev, a));
    if (host) m->dev->ops->act_upload(m->dev, p, host, a);
    return p;
}

static void dm_free(dmem *m)
{
    for (int i = 0; i < m->n; i++) m->dev->ops->free(m->dev, m->p[i]);
    m->n = 0;
}

static void get(dmem *m, void *host, const void *buf, size_t bytes) { m->dev->ops->download(m->dev, host, buf, bytes); }
static void get_act(dmem *m, float *host, const void *buf, const rn_act_shape *a)
{
    m->dev->ops->act_download(m->dev, host, buf, a);
}

/* The conv of shape s on device k of the pair in its precision, or NULL (a failed check). */
static rn_conv *conv_for(const pair *pr, int k, const rn_conv_shape *s, const char *kind, const char *shape)
{
    rn_device *d = pick(pr, k);
    rn_conv_shape sk = *s;
    sk.compute = k ? RN_NUM_F32 : pr->p.compute;
    sk.act = pick_act(pr, k);
    rn_conv *c = NULL;
    rn_err err = {0};
    if (d->ops->conv_create(d, &c, &sk, &err)) {
        RN_CHECK(0, "%s %s %s on %s: conv_create failed: %s", kind, shape, pr->p.name, d->name, err.msg);
        return NULL;
    }
    return c;
}

/* Conv2d / ConvTranspose2d: forward, backward-data (unless src_plain), backward-weights (+=).
 * In fp16 compute diff_dst carries a loss scale of 4096 (rn_conv.grad_scale on the device under
 * test): the weight gradient's sums then reach past fp16's 65504, as ResNet-50's do in training
 * (nn/kernel_math.h: rn_km_wgrad_alpha), and must still come out finite and right. */
static void x_conv(const pair *pr, rn_conv_shape s, rn_rng *r)
{
    size_t nx = (size_t)s.n * s.ic * s.ih * s.iw, ny = (size_t)s.n * s.oc * s.oh * s.ow;
    size_t nw = (size_t)s.oc * s.ic * s.kh * s.kw;
    int fan_in = (s.transposed ? s.oc : s.ic) * s.kh * s.kw;
    float gs = pr->p.compute == RN_NUM_F16 ? 4096.0f : 1.0f;
    float *x = s.src_plain ? randn(nx, 1, r) : act_rand(nx, 0, 1, pr->p.act, r), *w = randu(nw, 1 / sqrt(fan_in), r);
    float *dy = act_rand(ny, 0, 1, pr->p.act, r), *dw0 = randu(nw, 0.5, r);
    for (size_t i = 0; i < ny; i++) dy[i] *= gs; /* exact: a power of two */
    float *y[2] = {fvec(ny), fvec(ny)}, *dx[2] = {fvec(nx), fvec(nx)}, *dw[2] = {fvec(nw), fvec(nw)};
    char shape[96];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d->%d k%d s%d p%d%s", s.n, s.ic, s.ih, s.iw, s.oc, s.kh, s.sh, s.ph,
             s.src_plain ? " plain" : "");
    const char *kind = s.transposed ? "deconv" : "conv";
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        dmem m = {.dev = pick(pr, k)};
        rn_act_shape ain = {s.n, s.ic, s.ih, s.iw, pick_act(pr, k)}, aout = {s.n, s.oc, s.oh, s.ow, pick_act(pr, k)};
        rn_conv *c = conv_for(pr, k, &s, kind, shape);
        if (!c) {
            ok = 0;
            break;
        }
        void *dsrc = s.src_plain ? dm_put(&m, x, nx * sizeof *x) : dm_act(&m, x, &ain);
        void *ddst = dm_act(&m, NULL, &aout), *ddy = dm_act(&m, dy, &aout), *ddx = dm_act(&m, NULL, &ain);
        float *ddw = dm_put(&m, dw0, nw * sizeof *dw0), *dwt = dm_put(&m, w, nw * sizeof *w);
        m.dev->ops->conv_set_weights(m.dev, c, dwt);
        m.dev->ops->conv_forward(m.dev, c, ddst, dsrc);
        if (!k) c->grad_scale = gs;
        m.dev->ops->conv_backward_weights(m.dev, c, ddw, dsrc, ddy);
        if (!s.src_plain) m.dev->ops->conv_backward_data(m.dev, c, ddx, ddy);
        get_act(&m, y[k], ddst, &aout);
        if (!s.src_plain) get_act(&m, dx[k], ddx, &ain);
        get(&m, dw[k], ddw, nw * sizeof *dw[k]);
        m.dev->ops->conv_destroy(m.dev, c);
        dm_free(&m);
    }
    char op[48];
    if (ok) {
        snprintf(op, sizeof op, "%s forward", kind);
        cmp(pr, op, shape, y[0], y[1], ny, tol_conv(pr, 64, 1));
        if (!s.src_plain) {
            snprintf(op, sizeof op, "%s backward_data", kind);
            cmp(pr, op, shape, dx[0], dx[1], nx, tol_conv(pr, 64, 1));
        }
        snprintf(op, sizeof op, "%s backward_weights", kind);
        cmp(pr, op, shape, dw[0], dw[1], nw, tol_conv(pr, 64, 0));
    }
    free(x), free(w), free(dy), free(dw0);
    for (int k = 0; k < 2; k++) free(y[k]), free(dx[k]), free(dw[k]);
}

/* A fused inference conv (BN folded: weights times a per-output-channel scale, a bias;
 * then the residual sum and ReLU as s.epilogue says), in place (dst = res) when inplace. */
static void x_conv_fused(const pair *pr, rn_conv_shape s, int inplace, rn_rng *r)
{
    size_t nx = (size_t)s.n * s.ic * s.ih * s.iw, ny = (size_t)s.n * s.oc * s.oh * s.ow;
    size_t nw = (size_t)s.oc * s.ic * s.kh * s.kw;
    int fan_in = (s.transposed ? s.oc : s.ic) * s.kh * s.kw;
    float *x = s.src_plain ? randn(nx, 1, r) : act_rand(nx, 0, 1, pr->p.act, r), *w = randu(nw, 1 / sqrt(fan_in), r);
    float *res = act_rand(ny, 0, 1, pr->p.act, r), *scale = fvec((size_t)s.oc), *bias = randn((size_t)s.oc, 0.5, r);
    for (int i = 0; i < s.oc; i++) scale[i] = (float)(0.5 + rn_rng_uniform(r));
    float *y[2] = {fvec(ny), fvec(ny)};
    int sum = (s.epilogue & RN_EPI_SUM) != 0;
    char shape[112];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d->%d k%d s%d%s%s%s%s", s.n, s.ic, s.ih, s.iw, s.oc, s.kh, s.sh,
             s.transposed ? " T" : "", s.src_plain ? " plain" : "", sum ? (inplace ? " +res(in place)" : " +res") : "",
             s.epilogue & RN_EPI_RELU ? " relu" : "");
    s.forward_only = 1;
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        dmem m = {.dev = pick(pr, k)};
        rn_act_shape ain = {s.n, s.ic, s.ih, s.iw, pick_act(pr, k)}, aout = {s.n, s.oc, s.oh, s.ow, pick_act(pr, k)};
        rn_conv *c = conv_for(pr, k, &s, "fused conv", shape);
        if (!c) {
            ok = 0;
            break;
        }
        void *dsrc = s.src_plain ? dm_put(&m, x, nx * sizeof *x) : dm_act(&m, x, &ain);
        void *dres = sum ? dm_act(&m, res, &aout) : NULL, *ddst = inplace && sum ? dres : dm_act(&m, NULL, &aout);
        float *dsc = dm_put(&m, scale, (size_t)s.oc * sizeof *scale), *db = dm_put(&m, bias, (size_t)s.oc * sizeof *bias);
        float *dwt = dm_put(&m, w, nw * sizeof *w);
        m.dev->ops->conv_set_weights_folded(m.dev, c, dwt, dsc, db);
        m.dev->ops->conv_forward_fused(m.dev, c, ddst, dsrc, dres);
        get_act(&m, y[k], ddst, &aout);
        m.dev->ops->conv_destroy(m.dev, c);
        dm_free(&m);
    }
    if (ok) cmp(pr, "conv_forward_fused", shape, y[0], y[1], ny, tol_conv(pr, 64, 1));
    free(x), free(w), free(res), free(scale), free(bias), free(y[0]), free(y[1]);
}

/* The fused convs of a folded ResNet and its head: stem, 1x1 / 3x3 (+ReLU), a block's
 * last conv with the residual (+ReLU, also in place), the downsample (bias only), a deconv. */
static void fused_convs(const pair *pr)
{
    rn_rng own; /* its own stream: the inputs of the checks after it stay as they were */
    rn_rng *r = &own;
    rn_rng_seed(r, 13 + (uint64_t)pr->p.compute + 2 * (uint64_t)pr->p.act);
    enum { B = RN_EPI_BIAS, S = RN_EPI_SUM, R = RN_EPI_RELU };
    const rn_conv_shape convs[] = {
        {.n = 2, .ic = 3, .ih = 13, .iw = 10, .oc = 64, .oh = 7, .ow = 5, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .ph = 3,
         .pw = 3, .src_plain = 1, .epilogue = B | R},
        {.n = 1, .ic = 64, .ih = 7, .iw = 5, .oc = 64, .oh = 7, .ow = 5, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1,
         .pw = 1, .epilogue = B | R},
        {.n = 2, .ic = 64, .ih = 9, .iw = 6, .oc = 256, .oh = 9, .ow = 6, .kh = 1, .kw = 1, .sh = 1, .sw = 1,
         .epilogue = B | S | R},
        {.n = 1, .ic = 128, .ih = 5, .iw = 3, .oc = 256, .oh = 3, .ow = 2, .kh = 1, .kw = 1, .sh = 2, .sw = 2,
         .epilogue = B},
        {.n = 2, .ic = 64, .ih = 9, .iw = 6, .oc = 128, .oh = 5, .ow = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1,
         .pw = 1, .epilogue = B | S | R},
        {.n = 2, .ic = 512, .ih = 3, .iw = 2, .oc = 256, .oh = 6, .ow = 4, .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1,
         .pw = 1, .transposed = 1, .epilogue = B | R},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        x_conv_fused(pr, convs[i], 0, r);
        if (convs[i].epilogue & S) x_conv_fused(pr, convs[i], 1, r);
    }
}

/* The stride-2 4x4 pad-1 ConvTranspose2d of RootNet's head, which the cpu device computes as four
 * 2x2 convs, one per output phase (cpu/dnnl_conv.c: rn_phases): batch 1 and 3, channel counts that
 * are odd multiples of 16 (the cpu device's layout needs 16 | C), 1-pixel and non-square inputs; training (forward, both backwards) and the
 * fused inference forward (bias, with and without ReLU). */
static void deconv_phases(const pair *pr)
{
    rn_rng own; /* its own stream: the inputs of the checks after it stay as they were */
    rn_rng *r = &own;
    rn_rng_seed(r, 17 + (uint64_t)pr->p.compute + 2 * (uint64_t)pr->p.act);
    enum { B = RN_EPI_BIAS, R = RN_EPI_RELU };
    const int sizes[][5] = {/* n, ic, ih, iw, oc */
                            {1, 48, 4, 7, 80}, {3, 48, 5, 1, 16}, {1, 16, 1, 1, 272}, {2, 2048, 2, 2, 256},
                            {1, 256, 6, 6, 256}, {2, 80, 3, 8, 48}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int *z = sizes[i];
        rn_conv_shape s = {.n = z[0], .ic = z[1], .ih = z[2], .iw = z[3], .oc = z[4], .oh = 2 * z[2], .ow = 2 * z[3],
                           .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .transposed = 1};
        x_conv(pr, s, r);
        s.epilogue = i % 2 ? B : B | R;
        x_conv_fused(pr, s, 0, r);
    }
}

/* BN training statistics: sums, stats, running update, fold. */
static void x_bn_stats(const pair *pr, rn_act_shape a, rn_rng *r)
{
    size_t n = act_n(&a);
    int C = a.c;
    long count = (long)a.n * a.h * a.w;
    float *x = act_rand(n, 0.7, 1.5, pr->p.act, r), *rm0 = randn(C, 0.2, r), *rv0 = randn(C, 0.2, r);
    float *gamma = randn(C, 1, r), *beta = randn(C, 1, r);
    for (int c = 0; c < C; c++) rv0[c] = 1 + fabsf(rv0[c]);
    /* per device: sums (2C + 1, as floats), mean, var, rmean, rvar, scale, shift */
    float *out[2] = {fvec(8 * (size_t)C + 1), fvec(8 * (size_t)C + 1)};
    double *sums = rn_xmalloc((2 * (size_t)C + 1) * sizeof *sums);
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        const rn_device_ops *op = m.dev->ops;
        rn_act_shape ak = a;
        ak.type = pick_act(pr, k);
        void *dx = dm_act(&m, x, &ak);
        double *ds = dm_alloc(&m, (2 * (size_t)C + 1) * sizeof *ds);
        float *st = dm_alloc(&m, 6 * (size_t)C * sizeof(float)); /* mean, var, rmean, rvar, scale, shift */
        op->upload(m.dev, st + 2 * C, rm0, C * sizeof(float));
        op->upload(m.dev, st + 3 * C, rv0, C * sizeof(float));
        float *dg = dm_put(&m, gamma, C * sizeof(float)), *db = dm_put(&m, beta, C * sizeof(float));
        op->bn_sums(m.dev, ds, dx, &ak);
        op->bn_stats(m.dev, st, st + C, ds, (double)count, C);
        op->bn_update_running(m.dev, st + 2 * C, st + 3 * C, st, st + C, 0.1, count, C);
        op->bn_fold(m.dev, st + 4 * C, st + 5 * C, st, st + C, dg, db, C);
        get(&m, sums, ds, (2 * (size_t)C + 1) * sizeof *sums);
        for (int i = 0; i < 2 * C + 1; i++) out[k][i] = (float)sums[i];
        get(&m, out[k] + 2 * C + 1, st, 6 * (size_t)C * sizeof(float));
        dm_free(&m);
    }
    char shape[64];
    act_label(shape, sizeof shape, &a);
    const char *names[4] = {"bn_stats mean,var", "bn_update_running", "bn_fold scale,shift", NULL};
    cmp(pr, "bn_sums (+count)", shape, out[0], out[1], 2 * (size_t)C + 1, tol_op(pr, 4, 0));
    for (int j = 0; j < 3; j++) {
        size_t off = 2 * (size_t)C + 1 + 2 * (size_t)j * C;
        cmp(pr, names[j], shape, out[0] + off, out[1] + off, 2 * (size_t)C, tol_op(pr, 8, 0));
    }
    free(x), free(rm0), free(rv0), free(gamma), free(beta), free(sums), free(out[0]), free(out[1]);
}

/* bn_apply (with and without ReLU), bn_add_relu, bn2_add_relu, relu_backward, add. */
static void x_bn_apply(const pair *pr, rn_act_shape a, rn_rng *r)
{
    size_t n = act_n(&a);
    int C = a.c;
    rn_numtype t = pr->p.act;
    float *x1 = act_rand(n, 0, 1, t, r), *x2 = act_rand(n, 0, 1, t, r), *res = act_rand(n, 0, 1, t, r);
    float *sc = randn(2 * (size_t)C, 1, r), *sh = randn(2 * (size_t)C, 0.5, r), *d0 = act_rand(n, 0, 1, t, r);
    float *yrelu = act_rand(n, 0, 1, t, r);
    for (size_t i = 0; i < n; i++) yrelu[i] = yrelu[i] > 0.3f ? yrelu[i] : 0; /* a ReLU output: exact zeros */
    float *out[2] = {fvec(6 * n), fvec(6 * n)};
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        const rn_device_ops *op = m.dev->ops;
        rn_act_shape ak = a;
        ak.type = pick_act(pr, k);
        void *dx1 = dm_act(&m, x1, &ak), *dx2 = dm_act(&m, x2, &ak), *dr = dm_act(&m, res, &ak);
        void *dd = dm_act(&m, d0, &ak), *dyr = dm_act(&m, yrelu, &ak), *dadd = dm_act(&m, d0, &ak);
        void *y = dm_act(&m, NULL, &ak);
        float *dsc = dm_put(&m, sc, 2 * (size_t)C * sizeof(float)), *dsh = dm_put(&m, sh, 2 * (size_t)C * sizeof(float));
        op->bn_apply(m.dev, y, dx1, dsc, dsh, 0, &ak);
        get_act(&m, out[k], y, &ak);
        op->bn_apply(m.dev, y, dx1, dsc, dsh, 1, &ak);
        get_act(&m, out[k] + n, y, &ak);
        op->bn_add_relu(m.dev, y, dx1, dsc, dsh, dr, &ak);
        get_act(&m, out[k] + 2 * n, y, &ak);
        op->bn2_add_relu(m.dev, y, dx1, dsc, dsh, dx2, dsc + C, dsh + C, &ak);
        get_act(&m, out[k] + 3 * n, y, &ak);
        op->relu_backward(m.dev, dd, dyr, &ak);
        get_act(&m, out[k] + 4 * n, dd, &ak);
        op->add(m.dev, dadd, dr, &ak);
        get_act(&m, out[k] + 5 * n, dadd, &ak);
        dm_free(&m);
    }
    char shape[64];
    act_label(shape, sizeof shape, &a);
    const char *names[6] = {"bn_apply", "bn_apply +relu", "bn_add_relu", "bn2_add_relu", "relu_backward", "add"};
    const double k32[6] = {8, 8, 8, 16, 0, 1};
    for (int j = 0; j < 6; j++) cmp(pr, names[j], shape, out[0] + j * n, out[1] + j * n, n, tol_op(pr, k32[j], 1));
    free(x1), free(x2), free(res), free(sc), free(sh), free(d0), free(yrelu), free(out[0]), free(out[1]);
}

/* Training BN backward (+ an optional ReLU after it): sums, params (+=), data. */
static void x_bn_backward(const pair *pr, rn_act_shape a, int relu, rn_rng *r)
{
    size_t n = act_n(&a);
    int C = a.c, HW = a.h * a.w;
    rn_numtype t = pr->p.act;
    float *x = act_rand(n, 0.5, 1.5, t, r), *dy = act_rand(n, 0, 1, t, r), *gamma = randn(C, 1, r);
    float *mean = fvec(C), *var = fvec(C), *dg0 = randn(C, 1, r), *db0 = randn(C, 1, r), *ro = fvec(n);
    double *hs = rn_xmalloc(2 * (size_t)C * sizeof *hs);
    rn_ref_bn_sums(hs, x, a.n, C, HW);
    rn_ref_bn_stats_from_sums(mean, var, hs, (double)a.n * HW, C);
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i / HW % C);
        float v = (float)((x[i] - mean[c]) / sqrt(var[c] + RN_BN_EPS) * gamma[c]);
        ro[i] = round_to(t, v > 0 ? v : 0);
    }
    float *out[2] = {fvec(n + 4 * (size_t)C), fvec(n + 4 * (size_t)C)}; /* dx, sums (2C), dgamma, dbeta */
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        const rn_device_ops *op = m.dev->ops;
        rn_act_shape ak = a;
        ak.type = pick_act(pr, k);
        void *dx_in = dm_act(&m, x, &ak), *ddy = dm_act(&m, dy, &ak), *dro = relu ? dm_act(&m, ro, &ak) : NULL;
        void *ddx = dm_act(&m, NULL, &ak);
        float *dmean = dm_put(&m, mean, C * sizeof(float)), *dvar = dm_put(&m, var, C * sizeof(float));
        float *dgam = dm_put(&m, gamma, C * sizeof(float));
        float *dg = dm_put(&m, dg0, C * sizeof(float)), *db = dm_put(&m, db0, C * sizeof(float));
        double *ds = dm_alloc(&m, 2 * (size_t)C * sizeof *ds);
        op->bn_backward_sums(m.dev, ds, ddy, dro, dx_in, dmean, &ak);
        op->bn_backward_params(m.dev, dg, db, ds, dvar, C);
        op->bn_backward_data(m.dev, ddx, ddy, dro, dx_in, dmean, dvar, dgam, ds, (double)a.n * HW, &ak);
        get_act(&m, out[k], ddx, &ak);
        get(&m, hs, ds, 2 * (size_t)C * sizeof *hs);
        for (int i = 0; i < 2 * C; i++) out[k][n + i] = (float)hs[i];
        get(&m, out[k] + n + 2 * C, dg, C * sizeof(float));
        get(&m, out[k] + n + 3 * C, db, C * sizeof(float));
        dm_free(&m);
    }
    char shape[96], lab[64];
    snprintf(shape, sizeof shape, "%s%s", act_label(lab, sizeof lab, &a), relu ? " +relu" : "");
    cmp(pr, "bn_backward_sums", shape, out[0] + n, out[1] + n, 2 * (size_t)C, tol_op(pr, 4, 0));
    cmp(pr, "bn_backward_params", shape, out[0] + n + 2 * C, out[1] + n + 2 * C, 2 * (size_t)C, tol_op(pr, 4, 0));
    cmp(pr, "bn_backward_data", shape, out[0], out[1], n, tol_op(pr, 16, 1));
    free(x), free(dy), free(gamma), free(mean), free(var), free(dg0), free(db0), free(ro), free(hs);
    free(out[0]), free(out[1]);
}

/* Max-pool forward and backward; values on a coarse grid so that most windows hold ties. */
static void x_maxpool(const pair *pr, rn_act_shape a, rn_rng *r)
{
    size_t n = act_n(&a);
    int oh = (a.h - 1) / 2 + 1, ow = (a.w - 1) / 2 + 1;
    rn_act_shape ao = {a.n, a.c, oh, ow, a.type};
    size_t no = act_n(&ao);
    float *x = act_rand(n, 0, 1, pr->p.act, r), *dy = act_rand(no, 0, 1, pr->p.act, r);
    for (size_t i = 0; i < n; i++) x[i] = roundf(x[i] * 2) / 2;
    float *out[2] = {fvec(no + n), fvec(no + n)};
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        rn_act_shape ak = a, aok = ao;
        ak.type = aok.type = pick_act(pr, k);
        void *dx = dm_act(&m, x, &ak), *y = dm_act(&m, NULL, &aok), *ddy = dm_act(&m, dy, &aok);
        void *ddx = dm_act(&m, NULL, &ak);
        m.dev->ops->maxpool_forward(m.dev, y, dx, &ak, oh, ow);
        m.dev->ops->maxpool_backward(m.dev, ddx, ddy, dx, &ak, oh, ow);
        get_act(&m, out[k], y, &aok);
        get_act(&m, out[k] + no, ddx, &ak);
        dm_free(&m);
    }
    char shape[64];
    act_label(shape, sizeof shape, &a);
    cmp(pr, "maxpool_forward", shape, out[0], out[1], no, tol_op(pr, 0, 1));
    /* An element can be the first maximum of up to 4 windows; a device may add each window's
     * gradient into the bf16 dx in turn (cpu does), rounding up to 3 partial sums. */
    double bf16_adds = 2 * unit_of(pr->p.act);
    cmp(pr, "maxpool_backward (ties)", shape, out[0] + no, out[1] + no, n, tol_op(pr, 2, 1) + bf16_adds);
    free(x), free(dy), free(out[0]), free(out[1]);
}

/* GAP forward and backward (+=). */
static void x_gap(const pair *pr, rn_act_shape a, rn_rng *r)
{
    size_t n = act_n(&a), nc = (size_t)a.n * a.c;
    float *x = act_rand(n, 0.5, 1, pr->p.act, r), *dout = randn(nc, 1, r), *dx0 = act_rand(n, 0, 1, pr->p.act, r);
    float *out[2] = {fvec(nc + n), fvec(nc + n)};
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        rn_act_shape ak = a;
        ak.type = pick_act(pr, k);
        void *dx = dm_act(&m, x, &ak), *ddx = dm_act(&m, dx0, &ak);
        float *o = dm_alloc(&m, nc * sizeof(float)), *dd = dm_put(&m, dout, nc * sizeof(float));
        m.dev->ops->gap_forward(m.dev, o, dx, &ak);
        m.dev->ops->gap_backward(m.dev, ddx, dd, &ak);
        get(&m, out[k], o, nc * sizeof(float));
        get_act(&m, out[k] + nc, ddx, &ak);
        dm_free(&m);
    }
    char shape[64];
    act_label(shape, sizeof shape, &a);
    cmp(pr, "gap_forward", shape, out[0], out[1], nc, tol_op(pr, 4, 0));
    cmp(pr, "gap_backward (+=)", shape, out[0] + nc, out[1] + nc, n, tol_op(pr, 4, 1));
    free(x), free(dout), free(dx0), free(out[0]), free(out[1]);
}

/* A heat-map layer: pointwise forward (logits), softargmax forward (rows, softmax) and backward
 * (dlogits), pointwise backward (dx, dw +=, db +=); G groups of D bins on activation a. */
static void x_heat(const pair *pr, rn_act_shape a, int G, int D, rn_rng *r)
{
    size_t n = act_n(&a), P = (size_t)G * D, np = (size_t)a.n * P * a.h * a.w, rows = (size_t)a.n * G;
    int C = a.c;
    float *x = act_rand(n, 0, 1, pr->p.act, r), *w = randn(P * C, 2 / sqrt(C), r), *b = randn(P, 1, r);
    float *dc = randn(3 * rows, 1, r), *dw0 = randn(P * C, 1, r), *db0 = randn(P, 1, r);
    /* per device: logits (np), rows (3 rows), prob (np), dlogits (np), dx (n), dw (PC), db (P), rows with the
     * probabilities not kept (3 rows), heat_forward's rows (its fallback where the device has none) */
    size_t len = np + 3 * rows + np + np + n + P * C + P + 3 * rows + 3 * rows;
    float *out[2] = {fvec(len), fvec(len)};
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        const rn_device_ops *op = m.dev->ops;
        rn_act_shape ak = a;
        ak.type = pick_act(pr, k);
        void *dx = dm_act(&m, x, &ak), *dda = dm_act(&m, NULL, &ak);
        float *dwt = dm_put(&m, w, P * C * sizeof(float)), *dbias = dm_put(&m, b, P * sizeof(float));
        float *lg = dm_alloc(&m, np * sizeof(float)), *rw = dm_put(&m, dc, 3 * rows * sizeof(float));
        float *prob = dm_alloc(&m, np * sizeof(float)), *ddc = dm_put(&m, dc, 3 * rows * sizeof(float));
        float *ddw = dm_put(&m, dw0, P * C * sizeof(float)), *ddb = dm_put(&m, db0, P * sizeof(float));
        float *o = out[k];
        op->pointwise_forward(m.dev, lg, dx, dwt, dbias, &ak, (int)P);
        get(&m, o, lg, np * sizeof(float));
        op->softargmax_forward(m.dev, rw, prob, lg, a.n, G, D, a.h, a.w, 3);
        get(&m, o + np, rw, 3 * rows * sizeof(float));
        get(&m, o + np + 3 * rows, prob, np * sizeof(float));
        op->softargmax_backward(m.dev, prob, prob, ddc, a.n, G, D, a.h, a.w, 3);
        get(&m, o + 2 * np + 3 * rows, prob, np * sizeof(float));
        op->pointwise_backward(m.dev, dda, ddw, ddb, prob, dx, dwt, &ak, (int)P);
        get_act(&m, o + 3 * np + 3 * rows, dda, &ak);
        get(&m, o + 3 * np + 3 * rows + n, ddw, P * C * sizeof(float));
        get(&m, o + 3 * np + 3 * rows + n + P * C, ddb, P * sizeof(float));
        float *rw2 = dm_put(&m, dc, 3 * rows * sizeof(float));
        op->pointwise_forward(m.dev, lg, dx, dwt, dbias, &ak, (int)P);
        op->softargmax_forward(m.dev, rw2, NULL, lg, a.n, G, D, a.h, a.w, 3);
        get(&m, o + 3 * np + 3 * rows + n + P * C + P, rw2, 3 * rows * sizeof(float));
        float *rw3 = dm_put(&m, dc, 3 * rows * sizeof(float));
        if (op->heat_forward) {
            size_t sb = op->heat_scratch(m.dev, &ak, G, D);
            RN_CHECK(sb > 0 && sb <= np * sizeof(float), "heat_scratch %zu bytes, at most the logits' %zu", sb,
                     np * sizeof(float));
            void *scr = dm_alloc(&m, sb);
            op->heat_forward(m.dev, rw3, scr, dx, dwt, dbias, &ak, G, D, 3);
        } else {
            op->pointwise_forward(m.dev, lg, dx, dwt, dbias, &ak, (int)P);
            op->softargmax_forward(m.dev, rw3, NULL, lg, a.n, G, D, a.h, a.w, 3);
        }
        get(&m, o + 3 * np + 3 * rows + n + P * C + P + 3 * rows, rw3, 3 * rows * sizeof(float));
        dm_free(&m);
    }
    char shape[80];
    act_label(shape, sizeof shape, &a);
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " G=%d D=%d", G, D);
    size_t off = 0;
    const char *names[9] = {"pointwise_forward", "softargmax_forward rows", "softargmax_forward prob",
                            "softargmax_backward", "pointwise_backward dx", "pointwise_backward dw (+=)",
                            "pointwise_backward db (+=)", "softargmax_forward rows, prob NULL",
                            "heat_forward rows"};
    const size_t lens[9] = {np, 3 * rows, np, np, n, P * C, P, 3 * rows, 3 * rows};
    const int is_act[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    /* Each device's float softmax carries its own rounding, and the backward multiplies it by
     * (dout . position - sum prob dout . position), which cancels: 64 roundings' worth. The rows' third
     * column (D = 1) is the untouched input on both. */
    for (int j = 0; j < 9; j++) {
        cmp(pr, names[j], shape, out[0] + off, out[1] + off, lens[j], tol_op(pr, 64, is_act[j]));
        off += lens[j];
    }
    free(x), free(w), free(b), free(dc), free(dw0), free(db0), free(out[0]), free(out[1]);
}

/* The linear layer (times k, into column `col` of rows of O + 1) and the masked L1 loss over K rows
 * (no activations: fp32 in every precision). */
static void x_linear_loss(const pair *pr, int N, int C, int O, int K, float scale, rn_rng *r)
{
    int ys = O + 1;
    size_t nr = (size_t)N * K * 3, ny = (size_t)N * ys;
    float *feat = randn((size_t)N * C, 1, r), *w = randn((size_t)O * C, 1 / sqrt(C), r), *b = randn(O, 1, r);
    float *k = randn(N, 3, r), *dy = randn(ny, 1, r), *dw0 = randn((size_t)O * C, 1, r), *db0 = randn(O, 1, r);
    float *pred = randn(nr, 5, r), *tgt = randn(nr, 5, r), *vis = fvec((size_t)N * K), *hd = fvec(N);
    for (int i = 0; i < N * K; i++) vis[i] = i % 3 != 1;
    for (int n = 0; n < N; n++) hd[n] = n % 4 != 2;
    tgt[0] = pred[0]; /* a target equal to the prediction in one coordinate: the gradient's sign(0) = 0 */
    /* per device: y (ny), dx (NC), dw (OC), db (O), loss (1), dpred (nr) */
    size_t len = ny + (size_t)N * C + (size_t)O * C + O + 1 + nr;
    float *out[2] = {fvec(len), fvec(len)};
    for (int j = 0; j < 2; j++) {
        dmem m = {.dev = pick(pr, j)};
        const rn_device_ops *op = m.dev->ops;
        size_t fb = (size_t)N * C * sizeof(float), wb = (size_t)O * C * sizeof(float);
        float *dfeat = dm_put(&m, feat, fb), *dw = dm_put(&m, w, wb), *dbias = dm_put(&m, b, O * sizeof(float));
        float *dk = dm_put(&m, k, N * sizeof(float)), *ddy = dm_put(&m, dy, ny * sizeof(float));
        float *ddw = dm_put(&m, dw0, wb), *ddb = dm_put(&m, db0, O * sizeof(float));
        float *yy = dm_put(&m, dy, ny * sizeof(float)), *dgf = dm_alloc(&m, fb);
        float *dp = dm_put(&m, pred, nr * sizeof(float)), *dt = dm_put(&m, tgt, nr * sizeof(float));
        float *dv = dm_put(&m, vis, (size_t)N * K * sizeof(float)), *dh = dm_put(&m, hd, N * sizeof(float));
        float *gp = dm_alloc(&m, nr * sizeof(float));
        double *dl = dm_alloc(&m, sizeof(double)), loss;
        float *o = out[j];
        op->linear_forward(m.dev, yy + 1, dfeat, dw, dbias, dk, N, C, O, ys);
        op->linear_backward(m.dev, dgf, ddw, ddb, ddy + 1, dfeat, dw, dk, N, C, O, ys);
        op->l1_loss(m.dev, dl, gp, dp, dt, dv, dh, scale, N, K);
        get(&m, o, yy, ny * sizeof(float));
        get(&m, o + ny, dgf, fb);
        get(&m, o + ny + (size_t)N * C, ddw, wb);
        get(&m, o + ny + (size_t)N * C + (size_t)O * C, ddb, O * sizeof(float));
        float *tail = o + ny + (size_t)N * C + (size_t)O * C + O;
        get(&m, &loss, dl, sizeof loss);
        tail[0] = (float)loss;
        get(&m, tail + 1, gp, nr * sizeof(float));
        dm_free(&m);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "N=%d C=%d O=%d K=%d scale %g", N, C, O, K, scale);
    const char *names[6] = {"linear_forward (col 1..)", "linear_backward dx", "linear_backward dw (+=)",
                            "linear_backward db (+=)", "l1_loss", "l1_loss gradient"};
    const size_t lens[6] = {ny, (size_t)N * C, (size_t)O * C, (size_t)O, 1, nr};
    size_t off = 0;
    for (int j = 0; j < 6; j++) {
        cmp(pr, names[j], shape, out[0] + off, out[1] + off, lens[j], tol_op(pr, 8, 0));
        off += lens[j];
    }
    free(feat), free(w), free(b), free(k), free(dy), free(dw0), free(db0), free(pred), free(tgt), free(vis), free(hd);
    free(out[0]), free(out[1]);
}

/* Three consecutive Adam updates of one flat buffer; param, m and v after each. */
static void x_adam(const pair *pr, size_t n, rn_rng *r)
{
    float *p0 = randn(n, 1, r), *g[3] = {randn(n, 1e-2, r), randn(n, 1e-2, r), randn(n, 1e-2, r)};
    float *out[2] = {fvec(9 * n), fvec(9 * n)};
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        const rn_device_ops *op = m.dev->ops;
        float *dp = dm_put(&m, p0, n * sizeof(float)), *dm = dm_alloc(&m, n * sizeof(float));
        float *dv = dm_alloc(&m, n * sizeof(float)), *dg = dm_alloc(&m, n * sizeof(float));
        op->zero(m.dev, dm, n * sizeof(float));
        op->zero(m.dev, dv, n * sizeof(float));
        for (int t = 0; t < 3; t++) {
            double s[2] = {1e-2 / (1 - pow(0.9, t + 1)), sqrt(1 - pow(0.999, t + 1))};
            rn_adam_args h = {.beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .sched = dm_put(&m, s, sizeof s)};
            op->upload(m.dev, dg, g[t], n * sizeof(float));
            op->adam(m.dev, dp, dg, dm, dv, n, &h);
            get(&m, out[k] + 3 * t * n, dp, n * sizeof(float));
            get(&m, out[k] + (3 * t + 1) * n, dm, n * sizeof(float));
            get(&m, out[k] + (3 * t + 2) * n, dv, n * sizeof(float));
        }
        dm_free(&m);
    }
    char shape[64];
    for (int t = 0; t < 3; t++) {
        snprintf(shape, sizeof shape, "n=%zu step %d", n, t + 1);
        cmp(pr, "adam param", shape, out[0] + 3 * t * n, out[1] + 3 * t * n, n, tol_op(pr, 8, 0));
        cmp(pr, "adam m,v", shape, out[0] + (3 * t + 1) * n, out[1] + (3 * t + 1) * n, 2 * n, tol_op(pr, 8, 0));
    }
    free(p0), free(g[0]), free(g[1]), free(g[2]), free(out[0]), free(out[1]);
}

/* unscale_check on finite gradients (inv_scale 1/1024 and 1) and with one Inf or NaN. */
static void x_unscale(const pair *pr, size_t n, rn_rng *r)
{
    float *g = randn(n, 100, r);
    const float inv[4] = {1.0f / 1024, 1.0f, 0.5f, 0.5f};
    float *out[2] = {fvec(2 * n), fvec(2 * n)};
    int fin[2][4];
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        float *dg = dm_alloc(&m, n * sizeof(float));
        int *df = dm_alloc(&m, sizeof(int));
        for (int j = 0; j < 4; j++) {
            m.dev->ops->upload(m.dev, dg, g, n * sizeof(float));
            float bad = j == 2 ? INFINITY : NAN;
            if (j >= 2) m.dev->ops->upload(m.dev, dg + n / 2 + j, &bad, sizeof bad);
            m.dev->ops->unscale_check(m.dev, dg, n, inv[j], df);
            get(&m, &fin[k][j], df, sizeof(int));
            if (j < 2) get(&m, out[k] + j * n, dg, n * sizeof(float));
        }
        dm_free(&m);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "n=%zu", n);
    cmp(pr, "unscale_check 1/1024", shape, out[0], out[1], n, tol_op(pr, 0, 0));
    cmp(pr, "unscale_check 1", shape, out[0] + n, out[1] + n, n, tol_op(pr, 0, 0));
    int agree = 0;
    for (int j = 0; j < 4; j++) agree += fin[0][j] == fin[1][j] && fin[1][j] == (j < 2);
    report("unscale_check finite flags", "finite x2, Inf, NaN", pr->p.name, 4 - agree, 0);
    free(g), free(out[0]), free(out[1]);
}

/* zero over n floats but the last 5 (a few MB, not a multiple of a page: a threaded device splits it),
 * on each device of the pair: the values it clears and the ones after, which it must keep. */
static void x_zero_big(const pair *pr, size_t n)
{
    float *ones = fvec(n), *got = fvec(n);
    for (size_t i = 0; i < n; i++) ones[i] = 1.0f;
    for (int k = 0; k < 2; k++) {
        dmem m = {.dev = pick(pr, k)};
        float *b = dm_put(&m, ones, n * sizeof(float));
        m.dev->ops->zero(m.dev, b, (n - 5) * sizeof(float));
        get(&m, got, b, n * sizeof(float));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += got[i] != (i + 5 < n ? 0.0f : 1.0f);
        char shape[64];
        snprintf(shape, sizeof shape, "n=%zu, the last 5 kept", n);
        report("zero (large)", shape, m.dev->name, (double)bad, 0);
        dm_free(&m);
    }
    free(ones), free(got);
}

/* Buffers: upload, copy, download, zero, fill, and the activation round trip. */
static void x_buffers(const pair *pr, rn_act_shape a, rn_rng *r)
{
    size_t n = act_n(&a);
    float *x = randn(n, 1, r), *want = fvec(n), *got = fvec(n);
    for (size_t i = 0; i < n; i++)
        want[i] = round_to(pr->p.act, x[i]);
    dmem m = {.dev = pr->dev};
    const rn_device_ops *op = m.dev->ops;
    rn_act_shape ak = a;
    ak.type = pr->p.act;
    void *da = dm_act(&m, x, &ak);
    get_act(&m, got, da, &ak);
    char shape[64];
    act_label(shape, sizeof shape, &a);
    report("act_upload/act_download", shape, pr->p.name, scaled_err_f(got, want, n), 0);
    float *b1 = dm_put(&m, x, n * sizeof(float)), *b2 = dm_alloc(&m, n * sizeof(float));
    op->copy(m.dev, b2, b1, n * sizeof(float));
    get(&m, got, b2, n * sizeof(float));
    report("upload/copy/download", shape, pr->p.name, scaled_err_f(got, x, n), 0);
    op->fill(m.dev, b2, 0.25f, n - 1);
    op->zero(m.dev, b1, n * sizeof(float));
    get(&m, got, b2, n * sizeof(float));
    for (size_t i = 0; i < n; i++) want[i] = i + 1 < n ? 0.25f : x[i];
    report("fill", shape, pr->p.name, scaled_err_f(got, want, n), 0);
    get(&m, got, b1, n * sizeof(float));
    memset(want, 0, n * sizeof *want);
    report("zero", shape, pr->p.name, scaled_err_f(got, want, n), 0);
    dm_free(&m);
    free(x), free(want), free(got);
}

static void cross_precision(const pair *pr, rn_rng *r)
{
    const rn_conv_shape convs[] = {
        {.n = 2, .ic = 3, .ih = 13, .iw = 10, .oc = 64, .oh = 7, .ow = 5, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .ph = 3,
         .pw = 3, .src_plain = 1, .no_bwd_data = 1},
        {.n = 1, .ic = 64, .ih = 7, .iw = 5, .oc = 64, .oh = 7, .ow = 5, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1},
        {.n = 2, .ic = 64, .ih = 9, .iw = 6, .oc = 128, .oh = 5, .ow = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1},
        {.n = 1, .ic = 128, .ih = 5, .iw = 3, .oc = 256, .oh = 3, .ow = 2, .kh = 1, .kw = 1, .sh = 2, .sw = 2},
        {.n = 1, .ic = 256, .ih = 3, .iw = 2, .oc = 256, .oh = 3, .ow = 2, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1},
        {.n = 2, .ic = 512, .ih = 3, .iw = 2, .oc = 2048, .oh = 3, .ow = 2, .kh = 1, .kw = 1, .sh = 1, .sw = 1},
        {.n = 1, .ic = 1024, .ih = 3, .iw = 3, .oc = 2048, .oh = 2, .ow = 2, .kh = 1, .kw = 1, .sh = 2, .sw = 2},
        {.n = 1, .ic = 2048, .ih = 2, .iw = 2, .oc = 512, .oh = 2, .ow = 2, .kh = 1, .kw = 1, .sh = 1, .sw = 1},
        {.n = 1, .ic = 512, .ih = 3, .iw = 2, .oc = 256, .oh = 6, .ow = 4, .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1,
         .pw = 1, .transposed = 1},
        {.n = 2, .ic = 2048, .ih = 1, .iw = 1, .oc = 256, .oh = 2, .ow = 2, .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1,
         .pw = 1, .transposed = 1},
        {.n = 1, .ic = 256, .ih = 5, .iw = 3, .oc = 256, .oh = 10, .ow = 6, .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1,
         .pw = 1, .transposed = 1},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) x_conv(pr, convs[i], r);
    fused_convs(pr);
    deconv_phases(pr);
    if (pr->p.compute != RN_NUM_F32 && pr->p.act == RN_NUM_F32) {
        printf("     (%s: fp32 activations, so every op but the convs is the fp32 call checked above)\n", pr->p.name);
        return;
    }
    const rn_act_shape acts[] = {{2, 64, 13, 10, 0}, {1, 128, 5, 3, 0},  {2, 256, 6, 10, 0},
                                 {1, 512, 3, 2, 0},  {2, 1024, 3, 3, 0}, {1, 2048, 2, 3, 0}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        x_bn_stats(pr, acts[i], r);
        x_bn_apply(pr, acts[i], r);
        x_bn_backward(pr, acts[i], (int)i % 2, r);
    }
    x_bn_backward(pr, (rn_act_shape){1, 64, 3, 3, 0}, 1, r);
    x_maxpool(pr, (rn_act_shape){2, 64, 13, 10, 0}, r);
    x_maxpool(pr, (rn_act_shape){1, 64, 8, 7, 0}, r);
    x_gap(pr, (rn_act_shape){2, 512, 3, 4, 0}, r);
    x_gap(pr, (rn_act_shape){1, 2048, 2, 3, 0}, r);
    x_heat(pr, (rn_act_shape){2, 256, 6, 5, 0}, 1, 1, r);
    x_heat(pr, (rn_act_shape){1, 256, 4, 7, 0}, 1, 1, r);
    x_heat(pr, (rn_act_shape){2, 32, 5, 6, 0}, 3, 4, r);
    /* many outputs (PoseNet's head, cpu's register tiles): whole tiles, then tails of outputs, positions,
     * channel blocks, and more channels (outputs) than one stack tile holds */
    x_heat(pr, (rn_act_shape){2, 32, 8, 8, 0}, 3, 64, r);
    x_heat(pr, (rn_act_shape){1, 256, 8, 8, 0}, 3, 64, r);
    x_heat(pr, (rn_act_shape){2, 48, 7, 5, 0}, 1, 20, r);
    x_heat(pr, (rn_act_shape){1, 288, 5, 7, 0}, 3, 100, r);
    /* cpu's volume soft-argmax (D > 1): PoseNet-like planes of 16 x 16 (whole vectors), and rows wider
     * than its column tile (SA_WB = 256) */
    x_heat(pr, (rn_act_shape){2, 64, 16, 16, 0}, 3, 16, r);
    x_heat(pr, (rn_act_shape){1, 16, 3, 261, 0}, 2, 3, r);
    x_buffers(pr, (rn_act_shape){2, 64, 5, 3, 0}, r);
}

/* Every precision device `name` supports, op by op, against the reference. A cuda device that
 * cannot open here (no GPU, driver or library) is skipped unless must_open. */
static void cross_device(const char *name, int must_open, rn_rng *r)
{
    rn_device *dev = NULL, *ref = NULL;
    rn_err err = {0};
    if (rn_device_create(&dev, name, 2, &err) && !must_open && !strncmp(name, "cuda", 4)) {
        printf("skipped: device %s cannot open on this machine: %s\n", name, err.msg);
        return;
    }
    if (!dev || rn_device_create(&ref, "ref", 1, &err)) {
        RN_CHECK(0, "device %s or ref: %s", name, err.msg);
        rn_device_destroy(dev);
        return;
    }
    printf("---- device %s against ref ----\n", name);
    for (size_t i = 0; i < sizeof PRECS / sizeof PRECS[0]; i++) {
        pair pr = {.dev = dev, .ref = ref, .p = PRECS[i]};
        if (!dev->ops->supports(dev, pr.p.compute, pr.p.act)) {
            printf("skipped: device %s does not support %s\n", name, pr.p.name);
            continue;
        }
        cross_precision(&pr, r);
        if (i) continue;
        /* no activations: the same float computation in every precision */
        x_linear_loss(&pr, 2, 512, 1, 1, 1, r);
        x_linear_loss(&pr, 5, 2048, 1, 1, 1024, r);
        x_linear_loss(&pr, 3, 64, 3, 4, 2, r);
        x_adam(&pr, 5003, r);
        x_unscale(&pr, 4099, r);
        x_zero_big(&pr, ((size_t)3 << 20) / 4 + 1027);
    }
    rn_device_destroy(dev);
    rn_device_destroy(ref);
}

/* Each device built in besides ref, or the devices RN_TEST_DEVICES names (e.g. "cuda:0", as
 * bench/device_check.sh runs it; "ref" in its dry run), which must then open; "skipped" when there is none. */
static void cross_devices(rn_rng *r)
{
    const char *want = getenv("RN_TEST_DEVICES");
    int must = want && *want;
    char names[128];
    snprintf(names, sizeof names, "%s", must ? want : rn_device_names());
    int others = 0;
    for (char *save = NULL, *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (must || strcmp(t, "ref")) cross_device(t, must, r), others++; /* named: even ref (a dry run) */
    if (!others) printf("skipped: no device built in besides ref (built in: %s), nothing to compare it with\n", rn_device_names());
}

int main(void)
{
    rn_rng r;
    rn_rng_seed(&r, 11);
    rn_device *ref = NULL;
    rn_err err = {0};
    if (rn_device_create(&ref, "ref", 1, &err)) {
        RN_CHECK(0, "the ref device: %s", err.msg);
        RN_CHECK_DONE();
    }
    RN_ASSERT(ref->host_memory);
    hand_conv(ref);
    hand_deconv(ref);
    hand_bn(ref);
    hand_pool_gap(ref);
    hand_heatmap(ref);
    hand_linear_loss(ref);
    hand_adam(ref);
    rn_device_destroy(ref);
    finite_differences(&r);
    cross_devices(&r);
    RN_CHECK_DONE();
}
