/* int8 fused inference convs on the cpu device (nn/device.h: RN_NUM_I8). Each shape RootNet runs in int8
 * (1x1, 3x3, 3x3 stride 2, the 4x4 stride-2 deconv as phase convs; with the residual sum and ReLU) is
 * checked against the fp32 fused conv fed the values int8 stands for, quantised here by hand: src as
 * min(round(x * (1 / in_scale)), 255) * in_scale, each output channel's folded weights as round(w / s) * s with
 * s = max|w| / 127. The sums are exact integers, so the two agree to fp32 rounding; and against the
 * unquantised fp32 conv within the quantisation's error. RN_TEST_CPU_ONLY.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/device.h"

static rn_device *dev;

typedef struct io {
    float *x, *w, *scale, *bias, *res; /* host: src NCHW, weights (PyTorch layout), BN scale, bias, residual */
    size_t nx, ny, nw;
} io;

static void fill(io *t, const rn_conv_shape *s)
{
    t->nx = (size_t)s->n * s->ic * s->ih * s->iw, t->ny = (size_t)s->n * s->oc * s->oh * s->ow;
    t->nw = (size_t)s->oc * s->ic * s->kh * s->kw;
    t->x = malloc(t->nx * 4), t->w = malloc(t->nw * 4), t->res = malloc(t->ny * 4);
    t->scale = malloc((size_t)s->oc * 4), t->bias = malloc((size_t)s->oc * 4);
    for (size_t i = 0; i < t->nx; i++) t->x[i] = 1.7f * fabsf(sinf(0.37f * (float)i + 0.2f)); /* a ReLU's output */
    for (size_t i = 0; i < t->nw; i++) t->w[i] = 0.05f * sinf(0.91f * (float)i + 1.0f);
    for (size_t i = 0; i < t->ny; i++) t->res[i] = 0.5f * cosf(0.11f * (float)i);
    for (int i = 0; i < s->oc; i++) t->scale[i] = 0.5f + 0.03f * (float)(i % 7), t->bias[i] = 0.02f * (float)(i - 16);
}

static void io_free(io *t) { free(t->x), free(t->w), free(t->res), free(t->scale), free(t->bias); }

/* The values int8 computes with: x and the folded weights quantised and back (see the top). */
static void dequantised(const rn_conv_shape *s, const io *t, float *xq, float *wq)
{
    const float inv = 1.0f / s->in_scale;
    for (size_t i = 0; i < t->nx; i++) xq[i] = fminf(nearbyintf(t->x[i] * inv), 255.0f) * s->in_scale;
    size_t kk = (size_t)s->kh * s->kw, outer = s->transposed ? (size_t)s->ic : (size_t)s->oc;
    size_t inner = s->transposed ? (size_t)s->oc : (size_t)s->ic;
    float *m = calloc((size_t)s->oc, 4);
    for (size_t a = 0; a < outer; a++)
        for (size_t b = 0; b < inner; b++)
            for (size_t i = 0; i < kk; i++) {
                size_t o = s->transposed ? b : a, at = (a * inner + b) * kk + i;
                wq[at] = t->w[at] * t->scale[o];
                m[o] = fmaxf(m[o], fabsf(wq[at]));
            }
    for (size_t a = 0; a < outer; a++)
        for (size_t b = 0; b < inner; b++)
            for (size_t i = 0; i < kk; i++) {
                size_t o = s->transposed ? b : a, at = (a * inner + b) * kk + i;
                wq[at] = nearbyintf(wq[at] / (m[o] / 127.0f)) * (m[o] / 127.0f);
            }
    free(m);
}

/* y (host NCHW) = the fused conv of shape s on x with weights w (scale: the BN's, NULL: folded already). */
static int run(const rn_conv_shape *s, const io *t, const float *x, const float *w, const float *scale, float *y)
{
    rn_err err = {{0}};
    rn_conv *c;
    if (rn_conv_create(&c, dev, s, &err)) {
        RN_CHECK(0, "conv %dx%d %s: %s", s->kh, s->kw, s->compute == RN_NUM_I8 ? "int8" : "fp32", err.msg);
        return -1;
    }
    rn_act_shape as = {.n = s->n, .c = s->ic, .h = s->ih, .w = s->iw}, ad = {.n = s->n, .c = s->oc, .h = s->oh, .w = s->ow};
    void *dx = dev->ops->alloc(dev, dev->ops->act_bytes(dev, &as)), *dy = dev->ops->alloc(dev, dev->ops->act_bytes(dev, &ad));
    dev->ops->act_upload(dev, dx, x, &as);
    if (s->epilogue & RN_EPI_SUM) dev->ops->act_upload(dev, dy, t->res, &ad);
    dev->ops->conv_set_weights_folded(dev, c, w, scale, t->bias);
    dev->ops->conv_forward_fused(dev, c, dy, dx, s->epilogue & RN_EPI_SUM ? dy : NULL);
    dev->ops->act_download(dev, y, dy, &ad);
    dev->ops->free(dev, dx), dev->ops->free(dev, dy);
    rn_conv_destroy(c);
    return 0;
}

static double worst_rel(const float *a, const float *b, size_t n)
{
    double worst = 0, big = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i])), big = fmax(big, fabs((double)b[i]));
    return big > 0 ? worst / big : INFINITY;
}

static void check_shape(rn_conv_shape s, const char *what)
{
    io t;
    s.forward_only = 1;
    s.in_scale = 1.5f / 255; /* x reaches 1.7: the largest values saturate at 255 */
    fill(&t, &s);
    float *xq = malloc(t.nx * 4), *wq = malloc(t.nw * 4), *y8 = malloc(t.ny * 4), *yq = malloc(t.ny * 4);
    float *yf = malloc(t.ny * 4);
    dequantised(&s, &t, xq, wq);
    rn_conv_shape f = s;
    f.compute = RN_NUM_F32;
    s.compute = RN_NUM_I8;
    if (!run(&s, &t, t.x, t.w, t.scale, y8) && !run(&f, &t, xq, wq, NULL, yq) && !run(&f, &t, t.x, t.w, t.scale, yf)) {
        double eq = worst_rel(y8, yq, t.ny), ef = worst_rel(y8, yf, t.ny);
        printf("int8 %s: worst vs dequantised fp32 %.2e, vs fp32 %.2e (of the largest output)\n", what, eq, ef);
        RN_CHECK(eq < 2e-5, "%s: int8 vs the fp32 conv of the dequantised values: %.3g", what, eq);
        RN_CHECK(ef < 0.1 && ef > 1e-4, "%s: int8 vs fp32 within quantisation error (and not equal): %.3g", what, ef);
    }
    free(xq), free(wq), free(y8), free(yq), free(yf);
    io_free(&t);
}

static void test_refusals(void)
{
    rn_err err = {{0}};
    rn_conv *c = NULL;
    rn_conv_shape s = {.n = 1, .ic = 16, .ih = 8, .iw = 8, .oc = 16, .oh = 8, .ow = 8, .kh = 1, .kw = 1, .sh = 1,
                       .sw = 1, .forward_only = 1, .epilogue = RN_EPI_BIAS, .compute = RN_NUM_I8};
    RN_CHECK(rn_conv_create(&c, dev, &s, &err) && strstr(err.msg, "in_scale"), "int8 without in_scale: %s", err.msg);
    s.in_scale = 0.1f, s.epilogue = 0;
    RN_CHECK(rn_conv_create(&c, dev, &s, &err) && strstr(err.msg, "int8"), "int8 unfused: %s", err.msg);
    RN_CHECK(dev->ops->supports(dev, RN_NUM_I8, RN_NUM_F32) && !dev->ops->supports(dev, RN_NUM_I8, RN_NUM_BF16),
             "cpu supports int8 compute on fp32 activations only");
}

int main(void)
{
    rn_err err = {{0}};
    if (rn_device_create(&dev, "cpu", 0, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const int B = RN_EPI_BIAS, R = RN_EPI_RELU, S = RN_EPI_SUM;
    check_shape((rn_conv_shape){.n = 2, .ic = 64, .ih = 9, .iw = 7, .oc = 32, .oh = 9, .ow = 7, .kh = 1, .kw = 1,
                                .sh = 1, .sw = 1, .epilogue = B | R}, "1x1 relu");
    check_shape((rn_conv_shape){.n = 1, .ic = 32, .ih = 10, .iw = 12, .oc = 48, .oh = 10, .ow = 12, .kh = 3, .kw = 3,
                                .sh = 1, .sw = 1, .ph = 1, .pw = 1, .epilogue = B | R}, "3x3 relu");
    check_shape((rn_conv_shape){.n = 2, .ic = 32, .ih = 10, .iw = 12, .oc = 32, .oh = 5, .ow = 6, .kh = 3, .kw = 3,
                                .sh = 2, .sw = 2, .ph = 1, .pw = 1, .epilogue = B}, "3x3 stride 2, bias only");
    check_shape((rn_conv_shape){.n = 2, .ic = 32, .ih = 6, .iw = 6, .oc = 64, .oh = 6, .ow = 6, .kh = 1, .kw = 1,
                                .sh = 1, .sw = 1, .epilogue = B | S | R}, "1x1 + residual, relu");
    check_shape((rn_conv_shape){.n = 2, .ic = 64, .ih = 4, .iw = 5, .oc = 32, .oh = 8, .ow = 10, .kh = 4, .kw = 4,
                                .sh = 2, .sw = 2, .ph = 1, .pw = 1, .transposed = 1, .epilogue = B | R},
                "deconv 4x4 stride 2 relu");
    test_refusals();
    rn_device_destroy(dev);
    RN_CHECK_DONE();
}
