/* The reference device ("ref"): nn/device.h's op table over the plain math of
 * ref/ref.h. Buffers are malloc'd host memory, activations plain NCHW fp32,
 * one thread, fp32 only. */
#include <stdlib.h>
#include <string.h>

#include "nn/device.h"
#include "ref/ref.h"

typedef struct ref_conv {
    rn_conv base;
    rn_ref_conv_dims d;
    float *w; /* the weights as last set, PyTorch's layout */
    float *bias, *tmp; /* a fused conv's bias (OC) and its conv output (N, OC, OH, OW) */
} ref_conv;

/* Elements of an activation; the reference stores fp32 only. */
static size_t elems(const rn_act_shape *a)
{
    RN_ASSERT(a->type == RN_NUM_F32);
    return (size_t)a->n * a->c * a->h * a->w;
}

/* H * W of an fp32 activation. */
static int plane(const rn_act_shape *a)
{
    RN_ASSERT(a->type == RN_NUM_F32);
    return a->h * a->w;
}

static int supports(rn_device *dev, rn_numtype compute, rn_numtype act)
{
    (void)dev;
    return compute == RN_NUM_F32 && act == RN_NUM_F32;
}

static void *buf_alloc(rn_device *dev, size_t bytes)
{
    (void)dev;
    return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64 * !bytes);
}

static void buf_free(rn_device *dev, void *buf)
{
    (void)dev;
    free(buf);
}

static size_t act_bytes(rn_device *dev, const rn_act_shape *a)
{
    (void)dev;
    return elems(a) * sizeof(float);
}

static void buf_copy(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    (void)dev;
    memcpy(dst, src, bytes);
}

static void buf_zero(rn_device *dev, void *buf, size_t bytes)
{
    (void)dev;
    memset(buf, 0, bytes);
}

static void buf_fill(rn_device *dev, float *buf, float value, size_t n)
{
    (void)dev;
    for (size_t i = 0; i < n; i++) buf[i] = value;
}

static void act_upload(rn_device *dev, void *dst, const float *src, const rn_act_shape *a)
{
    (void)dev;
    memcpy(dst, src, elems(a) * sizeof(float));
}

static void act_download(rn_device *dev, float *dst, const void *src, const rn_act_shape *a)
{
    (void)dev;
    memcpy(dst, src, elems(a) * sizeof(float));
}

static void synchronize(rn_device *dev) { (void)dev; }

static size_t weight_elems(const rn_conv_shape *s) { return (size_t)s->oc * s->ic * s->kh * s->kw; }

static int conv_create(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err)
{
    *out = NULL;
    if (rn_conv_shape_check(s, err)) return -1;
    if (!supports(dev, s->compute, s->act)) return rn_err_set(err, "device ref: computes in fp32 only");
    if (s->algo != RN_ALGO_DIRECT) return rn_err_set(err, "device ref: has only the direct algorithm");
    ref_conv *c = rn_xcalloc(1, sizeof *c);
    c->base.s = *s;
    c->base.dev = dev;
    c->d = (rn_ref_conv_dims){.n = s->n, .ic = s->ic, .ih = s->ih, .iw = s->iw, .oc = s->oc, .oh = s->oh,
                              .ow = s->ow, .kh = s->kh, .kw = s->kw, .sh = s->sh, .sw = s->sw, .ph = s->ph, .pw = s->pw};
    c->w = rn_xcalloc(weight_elems(s), sizeof *c->w);
    if (s->epilogue) {
        c->bias = rn_xcalloc((size_t)s->oc, sizeof *c->bias);
        c->tmp = rn_xcalloc((size_t)s->n * s->oc * s->oh * s->ow, sizeof *c->tmp);
    }
    *out = &c->base;
    return 0;
}

static void conv_destroy(rn_device *dev, rn_conv *c)
{
    (void)dev;
    if (!c) return;
    free(((ref_conv *)c)->w);
    free(((ref_conv *)c)->bias);
    free(((ref_conv *)c)->tmp);
    free(c);
}

static void conv_set_weights(rn_device *dev, rn_conv *c, const float *w)
{
    (void)dev;
    memcpy(((ref_conv *)c)->w, w, weight_elems(&c->s) * sizeof *w);
}

static void conv_forward(rn_device *dev, rn_conv *conv, void *dst, const void *src)
{
    (void)dev;
    ref_conv *c = (ref_conv *)conv;
    RN_ASSERT(!conv->s.epilogue);
    (conv->s.transposed ? rn_ref_deconv_forward : rn_ref_conv_forward)(dst, src, c->w, &c->d);
}

static void conv_set_weights_folded(rn_device *dev, rn_conv *conv, const float *w, const float *scale,
                                    const float *bias)
{
    (void)dev;
    ref_conv *c = (ref_conv *)conv;
    RN_ASSERT(conv->s.epilogue);
    if (scale) rn_ref_conv_fold_weights(c->w, w, scale, &c->d, conv->s.transposed);
    else memcpy(c->w, w, weight_elems(&conv->s) * sizeof *w);
    memcpy(c->bias, bias, (size_t)conv->s.oc * sizeof *bias);
}

static void conv_forward_fused(rn_device *dev, rn_conv *conv, void *dst, const void *src, const void *res)
{
    (void)dev;
    ref_conv *c = (ref_conv *)conv;
    const rn_conv_shape *s = &conv->s;
    RN_ASSERT(s->epilogue && !res == !(s->epilogue & RN_EPI_SUM));
    (s->transposed ? rn_ref_deconv_forward : rn_ref_conv_forward)(c->tmp, src, c->w, &c->d);
    rn_ref_bias_add_relu(dst, c->tmp, c->bias, res, (s->epilogue & RN_EPI_RELU) != 0, s->n, s->oc, s->oh * s->ow);
}

static void conv_backward_data(rn_device *dev, rn_conv *conv, void *diff_src, const void *diff_dst)
{
    (void)dev;
    ref_conv *c = (ref_conv *)conv;
    RN_ASSERT(!conv->s.src_plain && !conv->s.no_bwd_data && !conv->s.forward_only);
    (conv->s.transposed ? rn_ref_deconv_backward_data : rn_ref_conv_backward_data)(diff_src, diff_dst, c->w, &c->d);
}

static void conv_backward_weights(rn_device *dev, rn_conv *conv, float *diff_w, const void *src, const void *diff_dst)
{
    (void)dev;
    ref_conv *c = (ref_conv *)conv;
    RN_ASSERT(!conv->s.forward_only);
    (conv->s.transposed ? rn_ref_deconv_backward_weights : rn_ref_conv_backward_weights)(diff_w, src, diff_dst, &c->d);
}

static const char *conv_impl_name(rn_device *dev, const rn_conv *c, int direction)
{
    (void)dev, (void)c, (void)direction;
    return "ref";
}

static void bn_sums(rn_device *dev, double *sums, const void *x, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_sums(sums, x, a->n, a->c, plane(a));
    sums[2 * a->c] = (double)a->n * a->h * a->w;
}

static void bn_stats(rn_device *dev, float *mean, float *var, const double *sums, double count, int C)
{
    (void)dev;
    rn_ref_bn_stats_from_sums(mean, var, sums, count, C);
}

static void bn_update_running(rn_device *dev, float *rmean, float *rvar, const float *mean, const float *var,
                              double momentum, long count, int C)
{
    (void)dev;
    rn_ref_bn_update_running(rmean, rvar, mean, var, momentum, (double)count, C);
}

static void bn_fold(rn_device *dev, float *scale, float *shift, const float *mean, const float *var,
                    const float *gamma, const float *beta, int C)
{
    (void)dev;
    rn_ref_bn_fold(scale, shift, mean, var, gamma, beta, C);
}

static void bn_apply(rn_device *dev, void *y, const void *x, const float *scale, const float *shift, int relu,
                     const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_apply(y, x, scale, shift, relu, a->n, a->c, plane(a));
}

static void bn_add_relu(rn_device *dev, void *y, const void *x, const float *scale, const float *shift,
                        const void *r, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_add_relu(y, x, scale, shift, NULL, NULL, NULL, r, a->n, a->c, plane(a));
}

static void bn2_add_relu(rn_device *dev, void *y, const void *x1, const float *s1, const float *h1, const void *x2,
                         const float *s2, const float *h2, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_add_relu(y, x1, s1, h1, x2, s2, h2, NULL, a->n, a->c, plane(a));
}

static void bn_backward_sums(rn_device *dev, double *sums, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_backward_sums(sums, dy, relu_out, x, mean, a->n, a->c, plane(a));
}

static void bn_backward_params(rn_device *dev, float *dgamma, float *dbeta, const double *sums, const float *var,
                               int C)
{
    (void)dev;
    rn_ref_bn_backward_params(dgamma, dbeta, sums, var, C);
}

static void bn_backward_data(rn_device *dev, void *dx, const void *dy, const void *relu_out, const void *x,
                             const float *mean, const float *var, const float *gamma, const double *sums,
                             double count, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_bn_backward_data(dx, dy, relu_out, x, mean, var, gamma, sums, count, a->n, a->c, plane(a));
}

static void relu_backward(rn_device *dev, void *d, const void *y, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_relu_backward(d, y, elems(a));
}

static void add(rn_device *dev, void *y, const void *x, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_add(y, x, elems(a));
}

static void maxpool_forward(rn_device *dev, void *y, const void *x, const rn_act_shape *a, int oh, int ow)
{
    (void)dev;
    RN_ASSERT(a->type == RN_NUM_F32);
    rn_ref_maxpool_forward(y, x, a->n, a->c, a->h, a->w, oh, ow);
}

static void maxpool_backward(rn_device *dev, void *dx, const void *dy, const void *x, const rn_act_shape *a, int oh,
                             int ow)
{
    (void)dev;
    RN_ASSERT(a->type == RN_NUM_F32);
    rn_ref_maxpool_backward(dx, dy, x, a->n, a->c, a->h, a->w, oh, ow);
}

static void gap_forward(rn_device *dev, float *out, const void *x, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_gap_forward(out, x, a->n, a->c, plane(a));
}

static void gap_backward(rn_device *dev, void *dx, const float *dout, const rn_act_shape *a)
{
    (void)dev;
    rn_ref_gap_backward(dx, dout, a->n, a->c, plane(a));
}

static void pointwise_forward(rn_device *dev, float *y, const void *x, const float *w, const float *b,
                              const rn_act_shape *a, int O)
{
    (void)dev;
    RN_ASSERT(a->type == RN_NUM_F32);
    rn_ref_pointwise_forward(y, x, w, b, a->n, a->c, plane(a), O);
}

static void pointwise_backward(rn_device *dev, void *dx, float *dw, float *db, const float *dy, const void *x,
                               const float *w, const rn_act_shape *a, int O)
{
    (void)dev;
    RN_ASSERT(a->type == RN_NUM_F32);
    rn_ref_pointwise_backward(dx, dw, db, dy, x, w, a->n, a->c, plane(a), O);
}

static void softargmax_forward(rn_device *dev, float *out, float *prob, const float *logits, int N, int G, int D,
                               int H, int W, int os)
{
    (void)dev;
    rn_ref_softargmax_forward(out, prob, logits, N, G, D, H, W, os);
}

static void softargmax_backward(rn_device *dev, float *dlogits, const float *prob, const float *dout, int N, int G,
                                int D, int H, int W, int os)
{
    (void)dev;
    rn_ref_softargmax_backward(dlogits, prob, dout, N, G, D, H, W, os);
}

static void linear_forward(rn_device *dev, float *y, const float *x, const float *w, const float *b, const float *rs,
                           int N, int C, int O, int ys)
{
    (void)dev;
    rn_ref_linear_forward(y, x, w, b, rs, N, C, O, ys);
}

static void linear_backward(rn_device *dev, float *dx, float *dw, float *db, const float *dy, const float *x,
                            const float *w, const float *rs, int N, int C, int O, int ys)
{
    (void)dev;
    rn_ref_linear_backward(dx, dw, db, dy, x, w, rs, N, C, O, ys);
}

static void l1_loss(rn_device *dev, double *out, float *dpred, const float *pred, const float *target,
                    const float *vis, const float *have_depth, float scale, int N, int K)
{
    (void)dev;
    *out = rn_ref_l1_loss(dpred, pred, target, vis, have_depth, scale, N, K);
}

static void adam(rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n, const rn_adam_args *h)
{
    (void)dev;
    if (h->finite && !*h->finite) return;
    rn_ref_adam(param, m, v, grad, n, h->sched[0], h->sched[1], h->beta1, h->beta2, h->eps);
}

static void unscale_check(rn_device *dev, float *grad, size_t n, float inv_scale, int *finite)
{
    (void)dev;
    *finite = rn_ref_unscale_check(grad, n, inv_scale);
}

static void destroy(rn_device *dev) { free(dev); }

static const rn_device_ops ref_ops = {
    .destroy = destroy,
    .supports = supports,
    .alloc = buf_alloc,
    .free = buf_free,
    .act_bytes = act_bytes,
    .upload = buf_copy,
    .download = buf_copy,
    .copy = buf_copy,
    .zero = buf_zero,
    .fill = buf_fill,
    .act_upload = act_upload,
    .act_download = act_download,
    .synchronize = synchronize,
    .conv_create = conv_create,
    .conv_destroy = conv_destroy,
    .conv_set_weights = conv_set_weights,
    .conv_forward = conv_forward,
    .conv_backward_data = conv_backward_data,
    .conv_backward_weights = conv_backward_weights,
    .conv_impl_name = conv_impl_name,
    .conv_set_weights_folded = conv_set_weights_folded,
    .conv_forward_fused = conv_forward_fused,
    .bn_sums = bn_sums,
    .bn_stats = bn_stats,
    .bn_update_running = bn_update_running,
    .bn_fold = bn_fold,
    .bn_apply = bn_apply,
    .bn_add_relu = bn_add_relu,
    .bn2_add_relu = bn2_add_relu,
    .bn_backward_sums = bn_backward_sums,
    .bn_backward_params = bn_backward_params,
    .bn_backward_data = bn_backward_data,
    .relu_backward = relu_backward,
    .add = add,
    .maxpool_forward = maxpool_forward,
    .maxpool_backward = maxpool_backward,
    .gap_forward = gap_forward,
    .gap_backward = gap_backward,
    .pointwise_forward = pointwise_forward,
    .pointwise_backward = pointwise_backward,
    .softargmax_forward = softargmax_forward,
    .softargmax_backward = softargmax_backward,
    .linear_forward = linear_forward,
    .linear_backward = linear_backward,
    .l1_loss = l1_loss,
    .adam = adam,
    .unscale_check = unscale_check,
};

int rn_ref_device_create(rn_device **out, int threads, rn_err *err)
{
    (void)threads, (void)err;
    rn_device *dev = rn_xcalloc(1, sizeof *dev);
    *dev = (rn_device){.ops = &ref_ops, .name = "ref", .threads = 1, .host_memory = 1};
    *out = dev;
    return 0;
}
