/* The "cpu" device (nn/device.h): oneDNN convolutions (cpu/dnnl.h) and the
 * OpenMP kernels (cpu/kernels.h) on host memory, activations nChw16c.
 *
 * Threads: every op runs with the device's thread count set for the calling
 * thread around the call (and the caller's setting restored after), so two
 * devices with different counts do not disturb each other or the process.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dnnl.h"
#include "cpu/kernels.h"

#define L 16 /* channel block of nChw16c */

typedef struct cpu_device {
    rn_device base; /* first */
    rn_dnnl *dnnl;
} cpu_device;

static cpu_device *cpu(rn_device *dev) { return (cpu_device *)dev; }

/* Runs stmt with dev's thread count. */
#define WITH_THREADS(dev, stmt)                  \
    do {                                         \
        int prev_ = omp_get_max_threads();       \
        omp_set_num_threads((dev)->threads);     \
        stmt;                                    \
        omp_set_num_threads(prev_);              \
    } while (0)

/* The float kernel fn or its bf16 twin fn##_bf16, by the activation type of a. */
#define ACT_CALL(dev, a, fn, ...) \
    WITH_THREADS(dev, (a)->type == RN_NUM_BF16 ? fn##_bf16(__VA_ARGS__) : fn(__VA_ARGS__))

static size_t numel(const rn_act_shape *a) { return (size_t)a->n * a->c * a->h * a->w; }

/* ---- capabilities, buffers ---- */

static void cpu_destroy(rn_device *dev)
{
    rn_dnnl_destroy(cpu(dev)->dnnl);
    free(dev);
}

static int cpu_supports(rn_device *dev, rn_numtype compute, rn_numtype act)
{
    (void)dev;
    if (compute == RN_NUM_F16 || compute == RN_NUM_F64) return 0;
    return act == RN_NUM_F32 || compute == RN_NUM_BF16;
}

static void *cpu_alloc(rn_device *dev, size_t bytes)
{
    (void)dev;
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 64) ? NULL : p;
}

static void cpu_free(rn_device *dev, void *buf)
{
    (void)dev;
    free(buf);
}

static size_t cpu_act_bytes(rn_device *dev, const rn_act_shape *a)
{
    (void)dev;
    size_t ch = a->c, cp = (ch + L - 1) / L * L;
    return (size_t)a->n * cp * a->h * a->w * rn_numtype_size(a->type);
}

static void cpu_copy(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    (void)dev;
    if (dst != src) memcpy(dst, src, bytes);
}

static void cpu_download(rn_device *dev, void *dst, const void *src, size_t bytes) { cpu_copy(dev, dst, src, bytes); }

static void cpu_zero(rn_device *dev, void *buf, size_t bytes) { WITH_THREADS(dev, rn_zero_bytes(buf, bytes)); }

static void cpu_fill(rn_device *dev, float *buf, float value, size_t n)
{
    (void)dev;
    for (size_t i = 0; i < n; i++) buf[i] = value;
}

/* Offset of element (n, c, p) of a in nChw16c, p = h * W + w. */
static size_t blk(const rn_act_shape *a, int n, int c, size_t p)
{
    size_t ch = a->c, cb = (ch + L - 1) / L, hw = (size_t)a->h * a->w;
    return (((size_t)n * cb + (size_t)c / L) * hw + p) * L + (size_t)c % L;
}

static void cpu_act_upload(rn_device *dev, void *dst, const float *src, const rn_act_shape *a)
{
    cpu_zero(dev, dst, cpu_act_bytes(dev, a)); /* the padding channels */
    size_t hw = (size_t)a->h * a->w;
    for (int n = 0; n < a->n; n++)
        for (int c = 0; c < a->c; c++)
            for (size_t p = 0; p < hw; p++) {
                float v = src[((size_t)n * a->c + c) * hw + p];
                if (a->type == RN_NUM_BF16) ((rn_bf16 *)dst)[blk(a, n, c, p)] = rn_bf16_from_f32(v);
                else ((float *)dst)[blk(a, n, c, p)] = v;
            }
}

static void cpu_act_download(rn_device *dev, float *dst, const void *src, const rn_act_shape *a)
{
    (void)dev;
    size_t hw = (size_t)a->h * a->w;
    for (int n = 0; n < a->n; n++)
        for (int c = 0; c < a->c; c++)
            for (size_t p = 0; p < hw; p++) {
                size_t i = blk(a, n, c, p);
                dst[((size_t)n * a->c + c) * hw + p] =
                    a->type == RN_NUM_BF16 ? rn_bf16_to_f32(((const rn_bf16 *)src)[i]) : ((const float *)src)[i];
            }
}

static void cpu_synchronize(rn_device *dev) { (void)dev; }

/* ---- convolutions ---- */

static int cpu_conv_create(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err)
{
    rn_dnnl_conv *c = NULL;
    *out = NULL;
    int rc;
    WITH_THREADS(dev, rc = rn_dnnl_conv_create(&c, cpu(dev)->dnnl, s, err));
    if (rc) return -1;
    *out = (rn_conv *)c;
    (*out)->dev = dev;
    return 0;
}

static void cpu_conv_destroy(rn_device *dev, rn_conv *c)
{
    (void)dev;
    rn_dnnl_conv_destroy((rn_dnnl_conv *)c);
}

static void cpu_conv_set_weights(rn_device *dev, rn_conv *c, const float *w)
{
    WITH_THREADS(dev, rn_dnnl_conv_set_weights((rn_dnnl_conv *)c, w));
}

static void cpu_conv_forward(rn_device *dev, rn_conv *c, void *dst, const void *src)
{
    WITH_THREADS(dev, rn_dnnl_conv_forward((rn_dnnl_conv *)c, dst, src));
}

static void cpu_conv_set_weights_folded(rn_device *dev, rn_conv *c, const float *w, const float *scale,
                                        const float *bias)
{
    WITH_THREADS(dev, rn_dnnl_conv_set_weights_folded((rn_dnnl_conv *)c, w, scale, bias));
}

static void cpu_conv_forward_fused(rn_device *dev, rn_conv *c, void *dst, const void *src, const void *res)
{
    WITH_THREADS(dev, rn_dnnl_conv_forward_fused((rn_dnnl_conv *)c, dst, src, res));
}

static void cpu_conv_backward_data(rn_device *dev, rn_conv *c, void *diff_src, const void *diff_dst)
{
    WITH_THREADS(dev, rn_dnnl_conv_backward_data((rn_dnnl_conv *)c, diff_src, diff_dst));
}

static void cpu_conv_backward_weights(rn_device *dev, rn_conv *c, float *diff_w, const void *src, const void *diff_dst)
{
    WITH_THREADS(dev, rn_dnnl_conv_backward_weights((rn_dnnl_conv *)c, diff_w, src, diff_dst));
}

static const char *cpu_conv_impl_name(rn_device *dev, const rn_conv *c, int direction)
{
    (void)dev;
    return rn_dnnl_conv_impl_name((const rn_dnnl_conv *)c, direction);
}

/* ---- BatchNorm ---- */

static void cpu_bn_sums(rn_device *dev, double *sums, const void *x, const rn_act_shape *a)
{
    int HW = a->h * a->w;
    ACT_CALL(dev, a, rn_bn_sums, sums, x, a->n, a->c, HW);
    sums[2 * a->c] = (double)a->n * HW;
}

static void cpu_bn_stats(rn_device *dev, float *mean, float *var, const double *sums, double count, int C)
{
    (void)dev;
    rn_bn_stats_from_sums(mean, var, sums, count, C);
}

static void cpu_bn_update_running(rn_device *dev, float *rmean, float *rvar, const float *mean, const float *var,
                                  double momentum, long count, int C)
{
    (void)dev;
    rn_bn_update_running(rmean, rvar, mean, var, momentum, count, C);
}

static void cpu_bn_fold(rn_device *dev, float *scale, float *shift, const float *mean, const float *var,
                        const float *gamma, const float *beta, int C)
{
    (void)dev;
    rn_bn_fold(scale, shift, NULL, mean, var, gamma, beta, C);
}

static void cpu_bn_apply(rn_device *dev, void *y, const void *x, const float *scale, const float *shift, int relu,
                         const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_bn_apply, y, x, scale, shift, relu, a->n, a->c, a->h * a->w);
}

static void cpu_bn_add_relu(rn_device *dev, void *y, const void *x, const float *scale, const float *shift,
                            const void *r, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_bn_add_relu, y, x, scale, shift, r, a->n, a->c, a->h * a->w);
}

static void cpu_bn2_add_relu(rn_device *dev, void *y, const void *x1, const float *s1, const float *h1,
                             const void *x2, const float *s2, const float *h2, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_bn2_add_relu, y, x1, s1, h1, x2, s2, h2, a->n, a->c, a->h * a->w);
}

static void cpu_bn_backward_sums(rn_device *dev, double *sums, const void *dy, const void *relu_out, const void *x,
                                 const float *mean, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_bn_backward_sums, sums, dy, relu_out, x, mean, a->n, a->c, a->h * a->w);
}

static void cpu_bn_backward_params(rn_device *dev, float *dgamma, float *dbeta, const double *sums, const float *var,
                                   int C)
{
    (void)dev;
    rn_bn_backward_params(dgamma, dbeta, sums, var, C);
}

static void cpu_bn_backward_data(rn_device *dev, void *dx, const void *dy, const void *relu_out, const void *x,
                                 const float *mean, const float *var, const float *gamma, const double *sums,
                                 double count, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_bn_backward_data, dx, dy, relu_out, x, mean, var, gamma, sums, count, a->n, a->c,
             a->h * a->w);
}

/* ---- elementwise, pooling ---- */

static void cpu_relu_backward(rn_device *dev, void *d, const void *y, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_relu_backward, d, y, numel(a));
}

static void cpu_add(rn_device *dev, void *y, const void *x, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_add_inplace, y, x, numel(a));
}

static void cpu_maxpool_forward(rn_device *dev, void *y, const void *x, const rn_act_shape *a, int oh, int ow)
{
    ACT_CALL(dev, a, rn_maxpool_forward, y, x, a->n, a->c, a->h, a->w, oh, ow);
}

static void cpu_maxpool_backward(rn_device *dev, void *dx, const void *dy, const void *x, const rn_act_shape *a,
                                 int oh, int ow)
{
    ACT_CALL(dev, a, rn_maxpool_backward, dx, dy, x, a->n, a->c, a->h, a->w, oh, ow);
}

static void cpu_gap_forward(rn_device *dev, float *out, const void *x, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_gap_forward, out, x, a->n, a->c, a->h * a->w);
}

static void cpu_gap_backward(rn_device *dev, void *dx, const float *dout, const rn_act_shape *a)
{
    ACT_CALL(dev, a, rn_gap_backward, dx, dout, a->n, a->c, a->h * a->w);
}

/* ---- heat-map heads, loss ---- */

static void cpu_pointwise_forward(rn_device *dev, float *y, const void *x, const float *w, const float *b,
                                  const rn_act_shape *a, int O)
{
    ACT_CALL(dev, a, rn_pointwise_forward, y, x, w, b, a->n, a->c, a->h * a->w, O);
}

static void cpu_pointwise_backward(rn_device *dev, void *dx, float *dw, float *db, const float *dy, const void *x,
                                   const float *w, const rn_act_shape *a, int O)
{
    ACT_CALL(dev, a, rn_pointwise_backward, dx, dw, db, dy, x, w, a->n, a->c, a->h * a->w, O);
}

static void cpu_softargmax_forward(rn_device *dev, float *out, float *prob, const float *logits, int N, int G, int D,
                                   int H, int W, int os)
{
    WITH_THREADS(dev, rn_softargmax_forward(out, prob, logits, N, G, D, H, W, os));
}

/* 1 where rn_heat_forward takes the shapes (PoseNet's volumes), 0 for the two ops (RootNet's maps, others). */
static int heat_fused(const rn_act_shape *a, int D) { return D > 1 && D <= 256 && a->c <= 256 && a->c % 16 == 0; }

static size_t cpu_heat_scratch(rn_device *dev, const rn_act_shape *a, int G, int D)
{
    (void)dev;
    if (heat_fused(a, D)) return rn_heat_scratch_bytes(a->n, G, a->h, a->w);
    return (size_t)a->n * G * D * a->h * a->w * sizeof(float);
}

static void cpu_heat_forward(rn_device *dev, float *out, void *scratch, const void *x, const float *w, const float *b,
                             const rn_act_shape *a, int G, int D, int os)
{
    if (!heat_fused(a, D)) {
        cpu_pointwise_forward(dev, scratch, x, w, b, a, G * D);
        cpu_softargmax_forward(dev, out, NULL, scratch, a->n, G, D, a->h, a->w, os);
        return;
    }
    ACT_CALL(dev, a, rn_heat_forward, out, scratch, x, w, b, a->n, a->c, a->h, a->w, G, D, os);
}

static void cpu_softargmax_backward(rn_device *dev, float *dlogits, const float *prob, const float *dout, int N, int G,
                                    int D, int H, int W, int os)
{
    WITH_THREADS(dev, rn_softargmax_backward(dlogits, prob, dout, N, G, D, H, W, os));
}

static void cpu_linear_forward(rn_device *dev, float *y, const float *x, const float *w, const float *b,
                               const float *rs, int N, int C, int O, int ys)
{
    (void)dev;
    rn_linear_forward(y, x, w, b, rs, N, C, O, ys);
}

static void cpu_linear_backward(rn_device *dev, float *dx, float *dw, float *db, const float *dy, const float *x,
                                const float *w, const float *rs, int N, int C, int O, int ys)
{
    (void)dev;
    rn_linear_backward(dx, dw, db, dy, x, w, rs, N, C, O, ys);
}

static void cpu_l1_loss(rn_device *dev, double *loss, float *dpred, const float *pred, const float *target,
                        const float *vis, const float *have_depth, float scale, int N, int K)
{
    (void)dev;
    loss[0] = rn_l1_loss(dpred, pred, target, vis, have_depth, scale, N, K);
}

/* ---- optimizer ---- */

static void cpu_adam(rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n,
                     const rn_adam_args *h)
{
    if (h->finite && !*h->finite) return;
    WITH_THREADS(dev, rn_adam_update(param, grad, m, v, n, h));
}

static void cpu_unscale_check(rn_device *dev, float *grad, size_t n, float inv_scale, int *finite)
{
    WITH_THREADS(dev, *finite = rn_unscale_check(grad, n, inv_scale));
}

static const rn_device_ops CPU_OPS = {
    .destroy = cpu_destroy,
    .supports = cpu_supports,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .act_bytes = cpu_act_bytes,
    .upload = cpu_copy,
    .download = cpu_download,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .fill = cpu_fill,
    .act_upload = cpu_act_upload,
    .act_download = cpu_act_download,
    .synchronize = cpu_synchronize,
    .conv_create = cpu_conv_create,
    .conv_destroy = cpu_conv_destroy,
    .conv_set_weights = cpu_conv_set_weights,
    .conv_forward = cpu_conv_forward,
    .conv_backward_data = cpu_conv_backward_data,
    .conv_backward_weights = cpu_conv_backward_weights,
    .conv_impl_name = cpu_conv_impl_name,
    .conv_set_weights_folded = cpu_conv_set_weights_folded,
    .conv_forward_fused = cpu_conv_forward_fused,
    .bn_sums = cpu_bn_sums,
    .bn_stats = cpu_bn_stats,
    .bn_update_running = cpu_bn_update_running,
    .bn_fold = cpu_bn_fold,
    .bn_apply = cpu_bn_apply,
    .bn_add_relu = cpu_bn_add_relu,
    .bn2_add_relu = cpu_bn2_add_relu,
    .bn_backward_sums = cpu_bn_backward_sums,
    .bn_backward_params = cpu_bn_backward_params,
    .bn_backward_data = cpu_bn_backward_data,
    .relu_backward = cpu_relu_backward,
    .add = cpu_add,
    .maxpool_forward = cpu_maxpool_forward,
    .maxpool_backward = cpu_maxpool_backward,
    .gap_forward = cpu_gap_forward,
    .gap_backward = cpu_gap_backward,
    .pointwise_forward = cpu_pointwise_forward,
    .pointwise_backward = cpu_pointwise_backward,
    .softargmax_forward = cpu_softargmax_forward,
    .heat_scratch = cpu_heat_scratch,
    .heat_forward = cpu_heat_forward,
    .softargmax_backward = cpu_softargmax_backward,
    .linear_forward = cpu_linear_forward,
    .linear_backward = cpu_linear_backward,
    .l1_loss = cpu_l1_loss,
    .adam = cpu_adam,
    .unscale_check = cpu_unscale_check,
};

int rn_cpu_device_create(rn_device **out, int threads, rn_err *err)
{
    *out = NULL;
    if (threads < 0) return rn_err_set(err, "device cpu: thread count %d is negative", threads);
    cpu_device *d = rn_xcalloc(1, sizeof *d);
    d->base = (rn_device){.ops = &CPU_OPS, .name = "cpu", .threads = threads ? threads : omp_get_max_threads(),
                          .host_memory = 1};
    if (rn_dnnl_create(&d->dnnl, err)) {
        free(d);
        return -1;
    }
    *out = &d->base;
    return 0;
}

size_t rn_cpu_device_shared_bytes(const rn_device *dev)
{
    return rn_dnnl_shared_bytes(((const cpu_device *)dev)->dnnl);
}
