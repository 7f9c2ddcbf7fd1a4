/* Reference Conv2d and ConvTranspose2d (ref/ref.h): every output element is
 * one double sum over the elements it depends on. */
#include <stddef.h>

#include "ref/ref.h"

static size_t at4(int d1, int d2, int d3, int i0, int i1, int i2, int i3)
{
    return (((size_t)i0 * d1 + i1) * d2 + i2) * d3 + i3;
}

void rn_ref_conv_forward(float *y, const float *x, const float *w, const rn_ref_conv_dims *d)
{
    for (int n = 0; n < d->n; n++)
        for (int oc = 0; oc < d->oc; oc++)
            for (int oh = 0; oh < d->oh; oh++)
                for (int ow = 0; ow < d->ow; ow++) {
                    double s = 0;
                    for (int ic = 0; ic < d->ic; ic++)
                        for (int kh = 0; kh < d->kh; kh++)
                            for (int kw = 0; kw < d->kw; kw++) {
                                int ih = oh * d->sh - d->ph + kh, iw = ow * d->sw - d->pw + kw;
                                if (ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) continue;
                                s += (double)x[at4(d->ic, d->ih, d->iw, n, ic, ih, iw)] *
                                     w[at4(d->ic, d->kh, d->kw, oc, ic, kh, kw)];
                            }
                    y[at4(d->oc, d->oh, d->ow, n, oc, oh, ow)] = (float)s;
                }
}

/* The output position o with o*stride - pad + k == i, or -1 if there is none. */
static int out_pos(int i, int k, int stride, int pad, int out)
{
    int t = i + pad - k;
    if (t < 0 || t % stride) return -1;
    return t / stride < out ? t / stride : -1;
}

/* The first tap k that can reach an output from input position i: k = i + pad (mod stride). */
static int first_tap(int i, int stride, int pad) { return (i + pad) % stride; }

void rn_ref_conv_backward_data(float *dx, const float *dy, const float *w, const rn_ref_conv_dims *d)
{
    for (int n = 0; n < d->n; n++)
        for (int ic = 0; ic < d->ic; ic++)
            for (int ih = 0; ih < d->ih; ih++)
                for (int iw = 0; iw < d->iw; iw++) {
                    double s = 0;
                    for (int oc = 0; oc < d->oc; oc++)
                        for (int kh = first_tap(ih, d->sh, d->ph); kh < d->kh; kh += d->sh)
                            for (int kw = first_tap(iw, d->sw, d->pw); kw < d->kw; kw += d->sw) {
                                int oh = out_pos(ih, kh, d->sh, d->ph, d->oh), ow = out_pos(iw, kw, d->sw, d->pw, d->ow);
                                if (oh < 0 || ow < 0) continue;
                                s += (double)dy[at4(d->oc, d->oh, d->ow, n, oc, oh, ow)] *
                                     w[at4(d->ic, d->kh, d->kw, oc, ic, kh, kw)];
                            }
                    dx[at4(d->ic, d->ih, d->iw, n, ic, ih, iw)] = (float)s;
                }
}

void rn_ref_conv_backward_weights(float *dw, const float *x, const float *dy, const rn_ref_conv_dims *d)
{
    for (int oc = 0; oc < d->oc; oc++)
        for (int ic = 0; ic < d->ic; ic++)
            for (int kh = 0; kh < d->kh; kh++)
                for (int kw = 0; kw < d->kw; kw++) {
                    double s = 0;
                    for (int n = 0; n < d->n; n++)
                        for (int oh = 0; oh < d->oh; oh++)
                            for (int ow = 0; ow < d->ow; ow++) {
                                int ih = oh * d->sh - d->ph + kh, iw = ow * d->sw - d->pw + kw;
                                if (ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) continue;
                                s += (double)x[at4(d->ic, d->ih, d->iw, n, ic, ih, iw)] *
                                     dy[at4(d->oc, d->oh, d->ow, n, oc, oh, ow)];
                            }
                    dw[at4(d->ic, d->kh, d->kw, oc, ic, kh, kw)] += (float)s;
                }
}

/* A ConvTranspose2d is the Conv2d that maps its output to its input: its
 * forward is that conv's backward-data and its backward-data that conv's
 * forward, and its (IC, OC, KH, KW) weight is that conv's (OC, IC, KH, KW). */
static rn_ref_conv_dims as_conv(const rn_ref_conv_dims *d)
{
    return (rn_ref_conv_dims){.n = d->n, .ic = d->oc, .ih = d->oh, .iw = d->ow, .oc = d->ic, .oh = d->ih, .ow = d->iw,
                              .kh = d->kh, .kw = d->kw, .sh = d->sh, .sw = d->sw, .ph = d->ph, .pw = d->pw};
}

void rn_ref_deconv_forward(float *y, const float *x, const float *w, const rn_ref_conv_dims *d)
{
    rn_ref_conv_dims c = as_conv(d);
    rn_ref_conv_backward_data(y, x, w, &c);
}

void rn_ref_deconv_backward_data(float *dx, const float *dy, const float *w, const rn_ref_conv_dims *d)
{
    rn_ref_conv_dims c = as_conv(d);
    rn_ref_conv_forward(dx, dy, w, &c);
}

void rn_ref_deconv_backward_weights(float *dw, const float *x, const float *dy, const rn_ref_conv_dims *d)
{
    rn_ref_conv_dims c = as_conv(d);
    rn_ref_conv_backward_weights(dw, dy, x, &c);
}

void rn_ref_conv_fold_weights(float *wf, const float *w, const float *scale, const rn_ref_conv_dims *d, int transposed)
{
    size_t kk = (size_t)d->kh * d->kw;
    for (int i = 0; i < d->ic; i++)
        for (int o = 0; o < d->oc; o++) {
            size_t at = (transposed ? (size_t)i * d->oc + o : (size_t)o * d->ic + i) * kk;
            for (size_t k = 0; k < kk; k++) wf[at + k] = w[at + k] * scale[o];
        }
}

void rn_ref_bias_add_relu(float *y, const float *x, const float *bias, const float *r, int relu, int N, int C, int HW)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < HW; p++) {
                size_t i = ((size_t)n * C + c) * HW + p;
                double v = (double)x[i] + bias[c] + (r ? r[i] : 0.0);
                y[i] = (float)(relu && v < 0 ? 0 : v);
            }
}
