/* int8 fused inference convs on the cpu device (nn/device.h: RN_NUM_I8). Each shape RootNet runs in int8
 * (1x1, 3x3, 3x3 stride 2, the 4x4 stride-2 deconv as phase convs; with the residual sum and ReLU) is
 * checked against the fp32 fused conv fed the values int8 stands for, quantised here by hand: src as
 * min(round(x * (1 / in_scale)), 255) * in_scale, each output channel's folded weights as round(w / s) * s with
 * s = max|w| / 127. The sums are exact integers, so the two agree to fp32 rounding; and against the
 * unquantised fp32 conv within the quantisation's error. The NHWC and u8 layouts between int8 convs
 * (src_nhwc, src_u8, dst_nhwc, res_nhwc, out_scale) the same way, packed and read back by hand. Then whole
 * int8 models (ResNet-18 and -50, He-initialised, calibrated on their own batch) against the fp32 fold
 * model: the layouts each block hands on must agree, or the outputs are noise. RN_TEST_CPU_ONLY.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/cpu_isa.h"
#include "core/rng.h"
#include "infer/infer_model.h"
#include "nn/calib.h"
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

/* NCHW (host) <-> NHWC (the int8 convs' own layouts), fp32, or u8 at scale q (q > 0). */
static void to_nhwc(void *dst, const float *x, int n, int c, int hw, float q)
{
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++) {
                size_t at = ((size_t)i * hw + p) * c + ch;
                float v = x[((size_t)i * c + ch) * hw + p];
                if (q > 0) ((unsigned char *)dst)[at] = (unsigned char)fminf(nearbyintf(v * (1.0f / q)), 255.0f);
                else ((float *)dst)[at] = v;
            }
}

static void from_nhwc(float *y, const void *src, int n, int c, int hw, float q)
{
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++) {
                size_t at = ((size_t)i * hw + p) * c + ch;
                y[((size_t)i * c + ch) * hw + p] = q > 0 ? ((const unsigned char *)src)[at] * q : ((const float *)src)[at];
            }
}

/* y (host NCHW) = the int8 conv of s on x, its src, dst and res in the layouts s names. */
static int run_layouts(const rn_conv_shape *s, const io *t, float *y)
{
    rn_err err = {{0}};
    rn_conv *c;
    if (rn_conv_create(&c, dev, s, &err)) {
        RN_CHECK(0, "int8 conv in NHWC/u8 layouts: %s", err.msg);
        return -1;
    }
    rn_act_shape as = {.n = s->n, .c = s->ic, .h = s->ih, .w = s->iw}, ad = {.n = s->n, .c = s->oc, .h = s->oh, .w = s->ow};
    const int ihw = s->ih * s->iw, ohw = s->oh * s->ow;
    void *dx = malloc(t->nx * 4), *dy = malloc(t->ny * 4);
    if (s->src_u8 || s->src_nhwc) to_nhwc(dx, t->x, s->n, s->ic, ihw, s->src_u8 ? s->in_scale : 0);
    else dev->ops->act_upload(dev, dx, t->x, &as);
    if (s->epilogue & RN_EPI_SUM) {
        if (s->dst_nhwc || s->res_nhwc) to_nhwc(dy, t->res, s->n, s->oc, ohw, 0);
        else dev->ops->act_upload(dev, dy, t->res, &ad);
    }
    dev->ops->conv_set_weights_folded(dev, c, t->w, t->scale, t->bias);
    dev->ops->conv_forward_fused(dev, c, dy, dx, s->epilogue & RN_EPI_SUM ? dy : NULL);
    if (s->dst_nhwc || s->out_scale > 0) from_nhwc(y, dy, s->n, s->oc, ohw, s->out_scale);
    else dev->ops->act_download(dev, y, dy, &ad);
    free(dx), free(dy);
    rn_conv_destroy(c);
    return 0;
}

/* Each layout against the device-layout int8 conv of the same values (u8 out: within one step of out_scale). */
static void check_layouts(rn_conv_shape s, const char *what)
{
    io t;
    s.forward_only = 1, s.compute = RN_NUM_I8, s.in_scale = 1.5f / 255;
    fill(&t, &s);
    float *want = malloc(t.ny * 4), *got = malloc(t.ny * 4);
    rn_conv_shape base = s;
    base.src_nhwc = base.src_u8 = base.dst_nhwc = base.res_nhwc = 0, base.out_scale = 0;
    if (!run(&base, &t, t.x, t.w, t.scale, want) && !run_layouts(&s, &t, got)) {
        double worst = 0, big = 0;
        for (size_t i = 0; i < t.ny; i++) worst = fmax(worst, fabs((double)got[i] - want[i])), big = fmax(big, fabs(want[i]));
        double tol = s.out_scale > 0 ? 0.501 * s.out_scale + 1e-6 : 1e-6 * big;
        printf("int8 %s: worst %.3g (tolerance %.3g)\n", what, worst, tol);
        RN_CHECK(big > 0.1 && worst <= tol, "%s: worst %.3g of max %.3g, tolerance %.3g", what, worst, big, tol);
    }
    free(want), free(got);
    io_free(&t);
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

/* A whole int8 model against the fp32 fold model on one batch (calibrated on it): coords within frac of
 * their range. */
static void check_model(int depth, int size, int batch, double frac_xy, double frac_depth)
{
    rn_err err = {{0}};
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 11);
    if (rn_params_build(&p, depth, &err)) {
        RN_CHECK(0, "ResNet-%d: %s", depth, err.msg);
        return;
    }
    rn_params_init(&p, &rng);
    rn_params_init_backbone_he(&p, &rng);
    for (int i = 0; i < p.n; i++) /* the head's N(0, 0.001) weights give a flat heatmap: x, y would not move */
        if (!strncmp(p.e[i].name, "root.", 5) && p.e[i].ndim == 4)
            for (size_t j = 0; j < p.e[i].numel; j++) rn_params_data(&p, i)[j] *= 30.0f;
    size_t nx = (size_t)batch * 3 * size * size;
    float *x = malloc(nx * 4), k[8], *y[2];
    for (size_t i = 0; i < nx; i++) x[i] = (float)rn_rng_normal(&rng);
    for (int i = 0; i < batch; i++) k[i] = 5000.0f + 500.0f * (float)i;
    rn_calib cal;
    rn_calib_init(&cal, "rootnet");
    rn_infer_cfg c = {.base = {.dev = dev}, .precision = RN_PREC_FP32, .fold = 1, .batch = batch, .h = size, .w = size,
                      .observe = {rn_calib_observe, &cal}};
    rn_model m[2];
    int ok = !rn_infer_model_open(&m[0], &p, &c, &err);
    c.observe.fn = NULL, c.precision = RN_PREC_INT8, c.calib = &cal;
    if (ok) rn_model_forward(&m[0], x, k, 0);
    ok = ok && !rn_infer_model_open(&m[1], &p, &c, &err);
    RN_CHECK(ok, "ResNet-%d fp32 and int8 fold models: %s", depth, err.msg);
    rn_model un;
    c.base.int8_unchained = 1;
    ok = ok && !rn_infer_model_open(&un, &p, &c, &err);
    RN_CHECK(ok, "ResNet-%d unchained int8 model: %s", depth, err.msg);
    double worst[3] = {0}, range[3] = {0}, wu = 0;
    for (int j = 0; ok && j < 2; j++) {
        if (j) rn_model_forward(&m[1], x, k, 0);
        y[j] = malloc((size_t)batch * m[j].K * 3 * 4);
        memcpy(y[j], rn_model_coords(&m[j]), (size_t)batch * m[j].K * 3 * 4);
    }
    if (ok) { /* the hand-offs between int8 convs change the rounding of a few values (a u8 step here and
                 there, which this random net's depth magnifies to 0.7 %), nothing more */
        rn_model_forward(&un, x, k, 0);
        const float *yu = rn_model_coords(&un);
        for (int i = 0; i < batch * un.K * 3; i++) wu = fmax(wu, fabs((double)yu[i] - y[1][i]) / (fabs(yu[i]) + 1e-3));
        printf("int8 ResNet-%d: chained vs unchained worst relative %.3g\n", depth, wu);
        RN_CHECK(wu < 2e-2, "ResNet-%d: int8 with NHWC/u8 hand-offs vs without: worst relative %.3g", depth, wu);
        rn_model_destroy(&un);
    }
    for (int i = 0; ok && i < batch * m[0].K * 3; i++) {
        worst[i % 3] = fmax(worst[i % 3], fabs((double)y[1][i] - y[0][i]));
        range[i % 3] = fmax(range[i % 3], fabs((double)y[0][i]));
    }
    if (ok) {
        range[0] = m[0].OW, range[1] = m[0].OH;
        printf("int8 ResNet-%d %dx%d: worst |x| %.3g of %g, |y| %.3g of %g, |depth| %.3g of %.4g\n", depth, size, size,
               worst[0], range[0], worst[1], range[1], worst[2], range[2]);
        for (int a = 0; a < 3; a++)
            RN_CHECK(worst[a] <= (a < 2 ? frac_xy : frac_depth) * range[a] && worst[a] > 0,
                     "ResNet-%d coord %d: int8 off by %.3g of %.4g (> %g)", depth, a, worst[a], range[a],
                     a < 2 ? frac_xy : frac_depth);
        free(y[0]), free(y[1]);
        rn_model_destroy(&m[0]);
        rn_model_destroy(&m[1]);
    }
    rn_calib_free(&cal);
    free(x);
    rn_params_free(&p);
}

/* On a CPU with int8 dot products oneDNN runs its own int8 kernels, not the reference ones. */
static void check_not_reference(void)
{
    rn_cpu_isa isa;
    rn_cpu_isa_detect(&isa);
    if (!rn_cpu_isa_native_int8(&isa)) {
        printf("skipped: the CPU has no int8 dot products (impl check)\n");
        return;
    }
    rn_err err = {{0}};
    rn_conv *c;
    rn_conv_shape s = {.n = 1, .ic = 64, .ih = 16, .iw = 16, .oc = 64, .oh = 16, .ow = 16, .kh = 3, .kw = 3, .sh = 1,
                       .sw = 1, .ph = 1, .pw = 1, .forward_only = 1, .epilogue = RN_EPI_BIAS | RN_EPI_RELU,
                       .compute = RN_NUM_I8, .in_scale = 0.01f};
    if (rn_conv_create(&c, dev, &s, &err)) {
        RN_CHECK(0, "3x3 int8: %s", err.msg);
        return;
    }
    const char *impl = dev->ops->conv_impl_name(dev, c, 0);
    RN_CHECK(strncmp(impl, "ref", 3) != 0, "int8 conv runs %s, oneDNN's reference (a layout it has no kernel for)", impl);
    rn_conv_destroy(c);
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
    check_layouts((rn_conv_shape){.n = 2, .ic = 32, .ih = 6, .iw = 5, .oc = 48, .oh = 6, .ow = 5, .kh = 1, .kw = 1,
                                  .sh = 1, .sw = 1, .epilogue = B | R, .src_nhwc = 1, .out_scale = 4.0f / 255},
                  "src fp32 NHWC, dst u8 NHWC");
    check_layouts((rn_conv_shape){.n = 1, .ic = 32, .ih = 6, .iw = 6, .oc = 32, .oh = 6, .ow = 6, .kh = 3, .kw = 3,
                                  .sh = 1, .sw = 1, .ph = 1, .pw = 1, .epilogue = B | R, .src_u8 = 1, .out_scale = 3.0f / 255},
                  "src u8 NHWC, dst u8 NHWC");
    check_layouts((rn_conv_shape){.n = 2, .ic = 32, .ih = 6, .iw = 6, .oc = 64, .oh = 6, .ow = 6, .kh = 1, .kw = 1,
                                  .sh = 1, .sw = 1, .epilogue = B | S | R, .src_u8 = 1, .dst_nhwc = 1},
                  "src u8 NHWC, dst and residual fp32 NHWC");
    check_layouts((rn_conv_shape){.n = 2, .ic = 32, .ih = 6, .iw = 6, .oc = 64, .oh = 6, .ow = 6, .kh = 1, .kw = 1,
                                  .sh = 1, .sw = 1, .epilogue = B | S | R, .src_u8 = 1, .res_nhwc = 1},
                  "src u8 NHWC, residual fp32 NHWC, dst the device's");
    check_layouts((rn_conv_shape){.n = 2, .ic = 32, .ih = 8, .iw = 8, .oc = 64, .oh = 4, .ow = 4, .kh = 1, .kw = 1,
                                  .sh = 2, .sw = 2, .epilogue = B, .src_nhwc = 1, .dst_nhwc = 1},
                  "downsample: src and dst fp32 NHWC");
    check_not_reference();
    test_refusals();
    check_model(18, 64, 2, 0.05, 0.1);
    check_model(50, 96, 1, 0.05, 0.25);
    rn_device_destroy(dev);
    RN_CHECK_DONE();
}
