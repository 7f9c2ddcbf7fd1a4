#include "nn/precision.h"

#include <string.h>

static const rn_policy POLICIES[RN_PREC_COUNT] = {
    [RN_PREC_FP32] = {RN_PREC_FP32, "fp32", RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                      RN_BACKEND_CPU | RN_BACKEND_CUDA, NULL},
    [RN_PREC_BF16] = {RN_PREC_BF16, "bf16", RN_NUM_BF16, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                      RN_BACKEND_CPU | RN_BACKEND_CUDA, NULL},
    [RN_PREC_BF16_O2] = {RN_PREC_BF16_O2, "bf16-o2", RN_NUM_BF16, RN_NUM_BF16, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                         RN_BACKEND_CPU, "bf16 activation storage is not in the CUDA backend yet"},
    [RN_PREC_FP16] = {RN_PREC_FP16, "fp16", RN_NUM_F16, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_DYNAMIC,
                      RN_BACKEND_CUDA, "fp16 compute needs the CUDA backend"},
};

int rn_precision_parse(const char *s, rn_precision *out, rn_err *err)
{
    for (int i = 0; i < RN_PREC_COUNT; i++)
        if (s && !strcmp(s, POLICIES[i].name)) {
            *out = (rn_precision)i;
            return 0;
        }
    return rn_err_set(err, "precision '%s': expected fp32, bf16, bf16-o2 or fp16", s ? s : "(null)");
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

int rn_policy_check(const rn_policy *pol, rn_backend_kind backend, rn_err *err)
{
    if (pol->backends & (int)backend) return 0;
    return rn_err_set(err, "precision %s: not available on the %s backend: %s", pol->name,
                      backend == RN_BACKEND_CPU ? "CPU (oneDNN)" : "CUDA", pol->missing ? pol->missing : "unsupported");
}

void rn_policy_apply(const rn_policy *pol, rn_model_opts *o)
{
    o->compute = pol->conv_compute == RN_NUM_BF16 ? RN_COMPUTE_BF16
                 : pol->conv_compute == RN_NUM_F16 ? RN_COMPUTE_F16
                                                   : RN_COMPUTE_F32;
    o->act = pol->act_storage == RN_NUM_BF16 ? RN_ACT_BF16 : RN_ACT_F32;
}
