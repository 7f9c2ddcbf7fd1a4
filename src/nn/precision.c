#include "nn/precision.h"

#include <string.h>

static const rn_policy POLICIES[RN_PREC_COUNT] = {
    [RN_PREC_FP32] = {RN_PREC_FP32, "fp32", RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                      "fp32 convolutions are missing"},
    [RN_PREC_BF16] = {RN_PREC_BF16, "bf16", RN_NUM_BF16, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                      "it has no bf16 convolutions"},
    [RN_PREC_BF16_O2] = {RN_PREC_BF16_O2, "bf16-o2", RN_NUM_BF16, RN_NUM_BF16, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                         "it has no bf16 convolutions or bf16 activation storage"},
    [RN_PREC_FP16] = {RN_PREC_FP16, "fp16", RN_NUM_F16, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_DYNAMIC,
                      "fp16 compute needs a CUDA device"},
    [RN_PREC_FP16_O2] = {RN_PREC_FP16_O2, "fp16-o2", RN_NUM_F16, RN_NUM_F16, RN_NUM_F32, RN_NUM_F32,
                         RN_SCALE_DYNAMIC, "fp16 compute and fp16 activation storage need a CUDA device"},
};

int rn_precision_parse(const char *s, rn_precision *out, rn_err *err)
{
    for (int i = 0; i < RN_PREC_COUNT; i++)
        if (s && !strcmp(s, POLICIES[i].name)) {
            *out = (rn_precision)i;
            return 0;
        }
    return rn_err_set(err, "precision '%s': expected fp32, bf16, bf16-o2, fp16 or fp16-o2", s ? s : "(null)");
}

const rn_policy *rn_policy_get(rn_precision id)
{
    RN_ASSERT(id >= 0 && id < RN_PREC_COUNT);
    return &POLICIES[id];
}

const char *rn_numtype_name(rn_numtype t)
{
    static const char *names[] = {"f32", "bf16", "f16"};
    return t >= RN_NUM_F32 && t <= RN_NUM_F16 ? names[t] : "?";
}

static rn_compute compute_of(const rn_policy *pol)
{
    return pol->conv_compute == RN_NUM_BF16 ? RN_COMPUTE_BF16
           : pol->conv_compute == RN_NUM_F16 ? RN_COMPUTE_F16
                                             : RN_COMPUTE_F32;
}

static rn_act_type act_of(const rn_policy *pol)
{
    return pol->act_storage == RN_NUM_BF16 ? RN_ACT_BF16 : pol->act_storage == RN_NUM_F16 ? RN_ACT_F16 : RN_ACT_F32;
}


int rn_policy_check(const rn_policy *pol, rn_device *dev, rn_err *err)
{
    if (dev->ops->supports(dev, compute_of(pol), act_of(pol))) return 0;
    return rn_err_set(err, "precision %s: not available on device '%s': %s", pol->name, dev->name, pol->missing);
}

int rn_policy_check_device(const rn_policy *pol, const char *device, rn_err *err)
{
    rn_device *dev;
    if (rn_device_create(&dev, device, 1, err)) return -1;
    int rc = rn_policy_check(pol, dev, err);
    rn_device_destroy(dev);
    return rc;
}

void rn_policy_apply(const rn_policy *pol, rn_model_opts *o)
{
    o->compute = compute_of(pol);
    o->act = act_of(pol);
}
