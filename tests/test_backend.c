/* The "cpu" device's convolutions (oneDNN, cpu/dnnl.h) against a naive
 * double-precision reference convolution (plain NCHW / OIHW / IOHW loops), in
 * fp32 and bf16, through the device's conv ops. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "cpu/dnnl.h"
#include "nn/device.h"

/* Plain NCHW -> nChw16c. blk: (N, C/16, H, W, 16); plain: (N, C, H, W). */
static void to_blocked(float *blk, const float *plain, int n, int c, int h, int w)
{
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < h * w; p++)
                blk[((size_t)(i * (c / 16) + ch / 16) * h * w + p) * 16 + ch % 16] = plain[((size_t)i * c + ch) * h * w + p];
}

/* nChw16c -> plain NCHW. plain: (N, C, H, W); blk: (N, C/16, H, W, 16). */
static void from_blocked(float *plain, const float *blk, int n, int c, int h, int w)
{
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < h * w; p++)
                plain[((size_t)i * c + ch) * h * w + p] = blk[((size_t)(i * (c / 16) + ch / 16) * h * w + p) * 16 + ch % 16];
}

/* Reference for all three directions at once, by enumerating every
 * (input pixel, output pixel, weight) triple the layer connects.
 * x: (N,IC,IH,IW); w: (OC,IC,KH,KW) or (IC,OC,KH,KW) if transposed; dy: (N,OC,OH,OW).
 * Outputs (zeroed here): y like dy, dx like x, dw like w. */
static void ref_conv(double *y, double *dx, double *dw, const float *x, const float *w, const float *dy,
                     const rn_conv_shape *s)
{
    size_t nx = (size_t)s->n * s->ic * s->ih * s->iw, ny = (size_t)s->n * s->oc * s->oh * s->ow;
    size_t nw = (size_t)s->oc * s->ic * s->kh * s->kw;
    memset(y, 0, ny * sizeof *y);
    memset(dx, 0, nx * sizeof *dx);
    memset(dw, 0, nw * sizeof *dw);
    for (int n = 0; n < s->n; n++)
        for (int ci = 0; ci < s->ic; ci++)
            for (int co = 0; co < s->oc; co++)
                for (int kh = 0; kh < s->kh; kh++)
                    for (int kw = 0; kw < s->kw; kw++) {
                        size_t wi = s->transposed ? (((size_t)ci * s->oc + co) * s->kh + kh) * s->kw + kw
                                                  : (((size_t)co * s->ic + ci) * s->kh + kh) * s->kw + kw;
                        /* conv: input = output*s - p + k; transposed: output = input*s - p + k */
                        int lh = s->transposed ? s->ih : s->oh, lw = s->transposed ? s->iw : s->ow;
                        for (int a = 0; a < lh; a++)
                            for (int b = 0; b < lw; b++) {
                                int ph = a * s->sh - s->ph + kh, pw = b * s->sw - s->pw + kw;
                                int hi = s->transposed ? a : ph, wi_ = s->transposed ? b : pw;
                                int ho = s->transposed ? ph : a, wo = s->transposed ? pw : b;
                                if (hi < 0 || hi >= s->ih || wi_ < 0 || wi_ >= s->iw) continue;
                                if (ho < 0 || ho >= s->oh || wo < 0 || wo >= s->ow) continue;
                                size_t xi = (((size_t)n * s->ic + ci) * s->ih + hi) * s->iw + wi_;
                                size_t yi = (((size_t)n * s->oc + co) * s->oh + ho) * s->ow + wo;
                                y[yi] += (double)x[xi] * w[wi];
                                dx[xi] += (double)dy[yi] * w[wi];
                                dw[wi] += (double)x[xi] * dy[yi];
                            }
                    }
}

static void fill(float *v, size_t n, rn_rng *r)
{
    for (size_t i = 0; i < n; i++) v[i] = (float)(2.0 * rn_rng_uniform(r) - 1.0);
}

/* max |got - (base + k*ref)| / max |k*ref|; base may be NULL. */
static double rel_err(const float *got, const double *ref, const float *base, double k, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double want = (base ? base[i] : 0.0) + k * ref[i];
        double d = fabs((double)got[i] - want);
        if (!(d <= num)) num = d; /* also catches NaN */
        if (fabs(k * ref[i]) > den) den = fabs(k * ref[i]);
    }
    return num / den;
}

static double rel_diff(const float *a, const float *b, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= num)) num = d;
        if (fabs(b[i]) > den) den = fabs(b[i]);
    }
    return num / den;
}

typedef struct results {
    float *y, *dx, *dw1, *dw2; /* plain layouts */
} results;

typedef struct tensors {
    size_t nx, ny, nw;
    float *x, *w, *dy, *dw0;    /* plain inputs, dw0: initial diff weights */
    float *bx, *bdy, *by, *bdx; /* blocked copies / outputs */
} tensors;

static void tensors_init(tensors *t, const rn_conv_shape *s, rn_rng *r)
{
    t->nx = (size_t)s->n * s->ic * s->ih * s->iw;
    t->ny = (size_t)s->n * s->oc * s->oh * s->ow;
    t->nw = (size_t)s->oc * s->ic * s->kh * s->kw;
    t->x = malloc(t->nx * sizeof(float));
    t->w = malloc(t->nw * sizeof(float));
    t->dy = malloc(t->ny * sizeof(float));
    t->dw0 = malloc(t->nw * sizeof(float));
    t->bx = malloc(t->nx * sizeof(float));
    t->bdx = malloc(t->nx * sizeof(float));
    t->bdy = malloc(t->ny * sizeof(float));
    t->by = malloc(t->ny * sizeof(float));
    fill(t->x, t->nx, r);
    fill(t->w, t->nw, r);
    fill(t->dy, t->ny, r);
    fill(t->dw0, t->nw, r);
    if (s->src_plain) memcpy(t->bx, t->x, t->nx * sizeof(float));
    else to_blocked(t->bx, t->x, s->n, s->ic, s->ih, s->iw);
    to_blocked(t->bdy, t->dy, s->n, s->oc, s->oh, s->ow);
}

static void tensors_free(tensors *t)
{
    free(t->x); free(t->w); free(t->dy); free(t->dw0);
    free(t->bx); free(t->bdx); free(t->bdy); free(t->by);
}

/* Runs all directions of c on t; results in plain layouts (dx NULL if no bwd_data). */
static void run_conv(results *o, rn_conv *c, const rn_conv_shape *s, tensors *t)
{
    o->y = malloc(t->ny * sizeof(float));
    o->dw1 = malloc(t->nw * sizeof(float));
    o->dw2 = malloc(t->nw * sizeof(float));
    o->dx = NULL;
    rn_conv_set_weights(c, t->w);
    for (size_t i = 0; i < t->ny; i++) t->by[i] = NAN;
    rn_conv_forward(c, t->by, t->bx);
    from_blocked(o->y, t->by, s->n, s->oc, s->oh, s->ow);
    if (!s->src_plain && !s->no_bwd_data) {
        o->dx = malloc(t->nx * sizeof(float));
        for (size_t i = 0; i < t->nx; i++) t->bdx[i] = NAN;
        rn_conv_backward_data(c, t->bdx, t->bdy);
        from_blocked(o->dx, t->bdx, s->n, s->ic, s->ih, s->iw);
    }
    memcpy(o->dw1, t->dw0, t->nw * sizeof(float));
    rn_conv_backward_weights(c, o->dw1, t->bx, t->bdy);
    memcpy(o->dw2, o->dw1, t->nw * sizeof(float));
    rn_conv_backward_weights(c, o->dw2, t->bx, t->bdy);
}

static void results_free(results *o)
{
    free(o->y); free(o->dx); free(o->dw1); free(o->dw2);
}

static const char *describe(const rn_conv_shape *s)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "%s n=%d %d->%d %dx%d->%dx%d k%dx%d s%d p%d%s", s->transposed ? "deconv" : "conv", s->n,
             s->ic, s->oc, s->ih, s->iw, s->oh, s->ow, s->kh, s->kw, s->sh, s->ph, s->src_plain ? " plain" : "");
    return buf;
}

/* A forward_only conv: forward as the reference, no backward primitives. */
static void check_forward_only(rn_device *be, rn_conv_shape s, tensors *t, const double *ry)
{
    const char *d = describe(&s);
    s.forward_only = 1;
    rn_conv *c = NULL;
    rn_err err = {0};
    int rc = rn_conv_create(&c, be, &s, &err);
    RN_CHECK(rc == 0, "%s: forward_only create failed: %s", d, err.msg);
    if (rc) return;
    RN_CHECK(!strcmp(rn_conv_impl_name(c, 1), "none") && !strcmp(rn_conv_impl_name(c, 2), "none"),
             "%s: forward_only has backward primitives", d);
    float *y = malloc(t->ny * sizeof(float));
    rn_conv_set_weights(c, t->w);
    for (size_t i = 0; i < t->ny; i++) t->by[i] = NAN;
    rn_conv_forward(c, t->by, t->bx);
    from_blocked(y, t->by, s.n, s.oc, s.oh, s.ow);
    double e;
    RN_CHECK((e = rel_err(y, ry, NULL, 1, t->ny)) < 1e-4, "%s: forward_only forward rel err %g", d, e);
    free(y);
    rn_conv_destroy(c);
}

/* fp32 against the reference, then bf16 against fp32. */
static void check_shape(rn_device *be, rn_conv_shape s, rn_rng *r)
{
    const char *d = describe(&s);
    tensors t;
    tensors_init(&t, &s, r);
    double *ry = malloc(t.ny * sizeof(double)), *rdx = malloc(t.nx * sizeof(double)), *rdw = malloc(t.nw * sizeof(double));
    ref_conv(ry, rdx, rdw, t.x, t.w, t.dy, &s);
    rn_err err = {0};
    rn_conv *c = NULL;
    s.compute = RN_NUM_F32;
    int rc = rn_conv_create(&c, be, &s, &err);
    RN_CHECK(rc == 0, "%s: create failed: %s", d, err.msg);
    if (rc) return;
    printf("%s: fwd %s, bwd_data %s, bwd_weights %s\n", d, rn_conv_impl_name(c, 0), rn_conv_impl_name(c, 1),
           rn_conv_impl_name(c, 2));
    RN_CHECK(strcmp(rn_conv_impl_name(c, 0), "none") && strcmp(rn_conv_impl_name(c, 2), "none"), "%s: impl names", d);
    RN_CHECK(!strcmp(rn_conv_impl_name(c, 1), "none") == (s.src_plain || s.no_bwd_data), "%s: bwd_data impl", d);
    RN_CHECK(!strcmp(rn_conv_impl_name(c, 3), "none"), "%s: impl name of direction 3", d);
    int phases = s.transposed && s.kh == 4 && s.sh == 2 && s.ph == 1; /* cpu/dnnl_conv.c: rn_phases */
    RN_CHECK((strncmp(rn_conv_impl_name(c, 0), "phases:", 7) == 0) == phases, "%s: forward as phase convs: %d", d, phases);
    results f;
    run_conv(&f, c, &s, &t);
    double e;
    RN_CHECK((e = rel_err(f.y, ry, NULL, 1, t.ny)) < 1e-4, "%s: forward rel err %g", d, e);
    if (f.dx) RN_CHECK((e = rel_err(f.dx, rdx, NULL, 1, t.nx)) < 1e-4, "%s: backward_data rel err %g", d, e);
    RN_CHECK((e = rel_err(f.dw1, rdw, t.dw0, 1, t.nw)) < 1e-4, "%s: backward_weights (once) rel err %g", d, e);
    RN_CHECK((e = rel_err(f.dw2, rdw, t.dw0, 2, t.nw)) < 1e-4, "%s: backward_weights (twice) rel err %g", d, e);

    check_forward_only(be, s, &t, ry);
    rn_conv *cb = NULL;
    s.compute = RN_NUM_BF16;
    rc = rn_conv_create(&cb, be, &s, &err);
    RN_CHECK(rc == 0, "%s: bf16 create failed: %s", d, err.msg);
    if (rc == 0) {
        printf("%s bf16: fwd %s, bwd_data %s, bwd_weights %s\n", d, rn_conv_impl_name(cb, 0), rn_conv_impl_name(cb, 1),
               rn_conv_impl_name(cb, 2));
        results b;
        run_conv(&b, cb, &s, &t);
        RN_CHECK((e = rel_diff(b.y, f.y, t.ny)) < 1e-2, "%s: bf16 forward rel diff %g", d, e);
        RN_CHECK(e > 0, "%s: bf16 forward is bit-identical to fp32, so it does not compute in bf16", d);
        if (f.dx) RN_CHECK((e = rel_diff(b.dx, f.dx, t.nx)) < 1e-2, "%s: bf16 backward_data rel diff %g", d, e);
        RN_CHECK((e = rel_err(b.dw2, rdw, t.dw0, 2, t.nw)) < 1e-2, "%s: bf16 backward_weights (twice) rel err %g", d, e);
        results_free(&b);
        rn_conv_destroy(cb);
    }
    /* The first conv must still work after later creates grew the shared buffers. */
    rn_conv *c2 = NULL;
    s.compute = RN_NUM_F32;
    rc = rn_conv_create(&c2, be, &(rn_conv_shape){.n = 8, .ic = 64, .ih = 32, .iw = 32, .oc = 64, .oh = 32, .ow = 32,
                                                   .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1}, &err);
    RN_CHECK(rc == 0, "big conv create: %s", err.msg);
    results f2;
    run_conv(&f2, c, &s, &t);
    RN_CHECK((e = rel_err(f2.y, ry, NULL, 1, t.ny)) < 1e-4, "%s: forward after growth rel err %g", d, e);
    RN_CHECK((e = rel_err(f2.dw2, rdw, t.dw0, 2, t.nw)) < 1e-4, "%s: backward_weights after growth rel err %g", d, e);
    results_free(&f2);
    rn_conv_destroy(c2);
    results_free(&f);
    rn_conv_destroy(c);
    free(ry); free(rdx); free(rdw);
    tensors_free(&t);
}

static rn_conv_shape shape(int n, int ic, int ih, int iw, int oc, int k, int st, int p, int transposed)
{
    rn_conv_shape s = {.n = n, .ic = ic, .ih = ih, .iw = iw, .oc = oc, .kh = k, .kw = k, .sh = st, .sw = st, .ph = p,
                       .pw = p, .transposed = transposed};
    s.oh = transposed ? (ih - 1) * st - 2 * p + k : (ih + 2 * p - k) / st + 1; /* by hand, not rn_conv_out_dim */
    s.ow = transposed ? (iw - 1) * st - 2 * p + k : (iw + 2 * p - k) / st + 1;
    return s;
}

static void check_bad(rn_device *be, rn_conv_shape s, const char *what)
{
    rn_err err = {0};
    rn_conv *c = (rn_conv *)&err; /* must be reset to NULL */
    int rc = rn_conv_create(&c, be, &s, &err);
    RN_CHECK(rc == -1 && c == NULL && err.msg[0], "%s: rc %d", what, rc);
    if (rc == -1) printf("%s -> %s\n", what, err.msg);
    if (rc == 0) rn_conv_destroy(c);
}

static void check_bad_shapes(rn_device *be)
{
    rn_conv_shape s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.ic = 3, s), "ic=3 without src_plain");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.oc = 8, s), "oc=8");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.n = 0, s), "n=0");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.ih = 0, s), "ih=0");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.oh = 9, s), "oh mismatch");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.sh = 0, s), "stride 0");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.ph = -1, s), "negative padding");
    s = shape(2, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.compute = (rn_numtype)7, s), "unknown compute");
    s = shape(2, 16, 4, 4, 16, 4, 2, 1, 1);
    check_bad(be, (s.ow = 9, s), "deconv ow mismatch (output_padding)");
    s = shape(2, 3, 8, 8, 16, 4, 2, 1, 1);
    check_bad(be, (s.src_plain = 1, s), "src_plain deconv");
    s = shape(1, 16, 2, 2, 16, 7, 1, 0, 0);
    check_bad(be, (s.oh = s.ow = 1, s), "kernel larger than input");
    s = shape(1, 16, 8, 8, 16, 3, 1, 1, 0);
    check_bad(be, (s.n = 1 << 30, s.ic = 1 << 20, s), "huge tensor");
    s = shape(1, 16, 1, 1, 16, 4, 2, 1, 1);
    check_bad(be, (s.ih = 1 << 20, s.sh = 1 << 16, s.oh = 16, s), "deconv output size overflowing int");
    RN_CHECK(rn_conv_out_dim(256, 7, 2, 3, 0) == 128 && rn_conv_out_dim(64, 1, 2, 0, 0) == 32 &&
                 rn_conv_out_dim(7, 3, 2, 1, 0) == 4 && rn_conv_out_dim(8, 4, 2, 1, 1) == 16,
             "rn_conv_out_dim");
    rn_err err = {0};
    rn_device *b1 = NULL;
    int before = omp_get_max_threads();
    RN_CHECK(rn_device_create(&b1, "cpu", before + 1, &err) == 0 && b1->threads == before + 1 &&
                 omp_get_max_threads() == before,
             "threads are the device's: OpenMP's setting untouched by create");
    rn_conv *c = NULL;
    s = shape(1, 16, 8, 8, 16, 3, 1, 1, 0);
    if (b1 && !rn_conv_create(&c, b1, &s, &err)) {
        float *x = calloc(16 * 64, sizeof *x), *y = calloc(16 * 64, sizeof *y), *w = calloc(16 * 16 * 9, sizeof *w);
        rn_conv_set_weights(c, w);
        rn_conv_forward(c, y, x);
        RN_CHECK(omp_get_max_threads() == before, "OpenMP's setting restored after an op");
        free(x), free(y), free(w);
        rn_conv_destroy(c);
    }
    rn_device_destroy(b1);
    rn_device *b2 = (rn_device *)&s;
    RN_CHECK(rn_device_create(&b2, "cpu", -1, &err) == -1 && b2 == NULL && err.msg[0], "negative threads");
    RN_CHECK(rn_device_create(&b2, "tpu", 0, &err) == -1 && b2 == NULL && strstr(err.msg, "'tpu' is not built in"),
             "unknown device: %s", err.msg);
}

int main(void)
{
    rn_rng r;
    rn_rng_seed(&r, 1234);
    rn_device *be = NULL;
    rn_err err = {0};
    if (rn_device_create(&be, "cpu", 0, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    check_shape(be, shape(1, 16, 8, 8, 32, 3, 1, 1, 0), &r);
    check_shape(be, shape(3, 32, 7, 5, 16, 3, 1, 1, 0), &r);
    check_shape(be, shape(3, 64, 6, 6, 32, 1, 1, 0, 0), &r);
    check_shape(be, shape(2, 32, 8, 8, 64, 1, 2, 0, 0), &r);
    check_shape(be, shape(1, 32, 7, 7, 32, 1, 2, 0, 0), &r);
    check_shape(be, shape(3, 16, 9, 8, 32, 3, 2, 1, 0), &r);
    rn_conv_shape c1 = shape(2, 3, 16, 16, 64, 7, 2, 3, 0);
    c1.src_plain = 1;
    check_shape(be, c1, &r);
    check_shape(be, shape(3, 32, 6, 4, 16, 4, 2, 1, 1), &r);
    check_shape(be, shape(1, 64, 4, 4, 32, 4, 2, 1, 1), &r);
    rn_conv_shape nb = shape(2, 32, 6, 6, 32, 3, 1, 1, 0);
    nb.no_bwd_data = 1;
    check_shape(be, nb, &r);
    check_bad_shapes(be);
    printf("shared buffers: %zu bytes\n", rn_cpu_device_shared_bytes(be));
    RN_CHECK(rn_cpu_device_shared_bytes(be) > 0, "shared buffers allocated");
    rn_device_destroy(be);
    RN_CHECK_DONE();
}
