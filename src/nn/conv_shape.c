/* Backend-independent checks of rn_conv_shape (see nn/device.h). */
#include <stdint.h>

#include "nn/device.h"

#define RN_CONV_MAX_ELEMS ((int64_t)1 << 34)

static int64_t out_dim64(int64_t in, int64_t k, int64_t stride, int64_t pad, int transposed)
{
    if (transposed) return (in - 1) * stride - 2 * pad + k;
    return (in + 2 * pad - k) / stride + 1;
}

int rn_conv_out_dim(int in, int k, int stride, int pad, int transposed)
{
    int64_t o = out_dim64(in, k, stride, pad, transposed);
    return o > INT32_MAX ? INT32_MAX : o < INT32_MIN ? INT32_MIN : (int)o;
}

static int sizes_check(const rn_conv_shape *s, rn_err *err)
{
    const int v[] = {s->n, s->ic, s->ih, s->iw, s->oc, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] <= 0) return rn_err_set(err, "conv shape: sizes, kernel and stride must be positive");
    if (s->ph < 0 || s->pw < 0) return rn_err_set(err, "conv shape: padding %d,%d is negative", s->ph, s->pw);
    const int64_t nx = (int64_t)s->n * s->ic * s->ih * s->iw, ny = (int64_t)s->n * s->oc * s->oh * s->ow;
    const int64_t nw = (int64_t)s->oc * s->ic * s->kh * s->kw;
    if (nx > RN_CONV_MAX_ELEMS || ny > RN_CONV_MAX_ELEMS || nw > RN_CONV_MAX_ELEMS)
        return rn_err_set(err, "conv shape: a tensor has more than 2^34 elements");
    return 0;
}

static int kind_check(const rn_conv_shape *s, rn_err *err)
{
    if (s->compute != RN_NUM_F32 && s->compute != RN_NUM_BF16 && s->compute != RN_NUM_F16 && s->compute != RN_NUM_I8)
        return rn_err_set(err, "conv shape: unknown compute mode %d", (int)s->compute);
    if (s->compute == RN_NUM_I8 && (!s->epilogue || s->src_plain || s->act != RN_NUM_F32 || !(s->in_scale > 0)))
        return rn_err_set(err, "conv shape: int8 is for fused inference convs on fp32 activations, not the network "
                               "input, with a positive in_scale");
    int i8 = s->compute == RN_NUM_I8, u8_out = s->out_scale != 0;
    if ((s->src_nhwc || s->src_u8 || s->dst_nhwc || s->res_nhwc || u8_out) &&
        (!i8 || s->transposed || (s->src_nhwc && s->src_u8) || (s->dst_nhwc && u8_out) ||
         (s->res_nhwc && (s->dst_nhwc || u8_out || !(s->epilogue & RN_EPI_SUM))) ||
         (u8_out && (!(s->out_scale > 0) || !(s->epilogue & RN_EPI_RELU) || (s->epilogue & RN_EPI_SUM)))))
        return rn_err_set(err, "conv shape: NHWC and u8 layouts are for int8 Conv2d only, one of each side, u8 out "
                               "with a positive out_scale after a ReLU and without a residual");
    if (s->algo < RN_ALGO_DIRECT || s->algo >= RN_ALGO_COUNT)
        return rn_err_set(err, "conv shape: unknown algorithm %d", (int)s->algo);
    if (s->src_plain && s->transposed)
        return rn_err_set(err, "conv shape: src_plain needs a Conv2d, not a ConvTranspose2d");
    if (!s->src_plain && s->ic % 16)
        return rn_err_set(err, "conv shape: ic=%d is not a multiple of 16 (nChw16c)", s->ic);
    if (s->oc % 16) return rn_err_set(err, "conv shape: oc=%d is not a multiple of 16 (nChw16c)", s->oc);
    if (s->epilogue & ~(RN_EPI_BIAS | RN_EPI_SUM | RN_EPI_RELU))
        return rn_err_set(err, "conv shape: unknown epilogue flags %#x", (unsigned)s->epilogue);
    if (s->epilogue && (!(s->epilogue & RN_EPI_BIAS) || !s->forward_only))
        return rn_err_set(err, "conv shape: a fused epilogue needs RN_EPI_BIAS and forward_only");
    if ((s->epilogue & RN_EPI_SUM) && s->transposed)
        return rn_err_set(err, "conv shape: the residual sum epilogue is for a Conv2d, not a ConvTranspose2d");
    return 0;
}

int rn_conv_shape_check(const rn_conv_shape *s, rn_err *err)
{
    if (sizes_check(s, err) || kind_check(s, err)) return -1;
    if (!s->transposed && ((int64_t)s->ih + 2 * (int64_t)s->ph < s->kh || (int64_t)s->iw + 2 * (int64_t)s->pw < s->kw))
        return rn_err_set(err, "conv shape: kernel %dx%d larger than padded input", s->kh, s->kw);
    const int64_t eh = out_dim64(s->ih, s->kh, s->sh, s->ph, s->transposed);
    const int64_t ew = out_dim64(s->iw, s->kw, s->sw, s->pw, s->transposed);
    if (eh != s->oh || ew != s->ow)
        return rn_err_set(err,
                          "conv shape: output %dx%d does not match input %dx%d, kernel %dx%d, stride %d,%d, "
                          "padding %d,%d (expected %lldx%lld)",
                          s->oh, s->ow, s->ih, s->iw, s->kh, s->kw, s->sh, s->sw, s->ph, s->pw, (long long)eh, (long long)ew);
    return 0;
}
