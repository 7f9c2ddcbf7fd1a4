#include "nn/precision.h"

#include <stdio.h>
#include <string.h>

#include "core/cpu_isa.h"

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
    [RN_PREC_INT8] = {RN_PREC_INT8, "int8", RN_NUM_I8, RN_NUM_F32, RN_NUM_F32, RN_NUM_F32, RN_SCALE_NONE,
                      "it has no int8 convolutions"},
};

/* "fp32, bf16 or bf16-o2": the names of the policies in accept. */
static void accepted_names(char *buf, size_t len, unsigned accept)
{
    int last = 0;
    for (int i = 0; i < RN_PREC_COUNT; i++)
        if (accept >> i & 1u) last = i;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < RN_PREC_COUNT && used < len; i++) {
        if (!(accept >> i & 1u)) continue;
        int w = snprintf(buf + used, len - used, "%s%s", !used ? "" : i == last ? " or " : ", ", POLICIES[i].name);
        if (w < 0) return;
        used += (size_t)w;
    }
}

int rn_precision_parse(const char *s, unsigned accept, rn_precision *out, rn_err *err)
{
    if (!s) s = POLICIES[RN_PREC_FP32].name;
    for (int i = 0; i < RN_PREC_COUNT; i++)
        if ((accept >> i & 1u) && !strcmp(s, POLICIES[i].name)) {
            *out = (rn_precision)i;
            return 0;
        }
    char names[128];
    accepted_names(names, sizeof names, accept);
    return rn_err_set(err, "precision '%s': expected %s", s, names);
}

int rn_precision_choose(const char *s, unsigned accept, const char *device, rn_precision *out, rn_err *err)
{
    if (!s || strcmp(s, "auto") != 0) return rn_precision_parse(s, accept, out, err);
    const char *name = device ? device : rn_device_default();
    rn_cpu_isa isa;
    rn_cpu_isa_detect(&isa);
    int cpu = !strcmp(name, "cpu"), cuda = !strncmp(name, "cuda", 4);
    int bf16 = (accept >> RN_PREC_BF16 & 1u) && (cuda || (cpu && rn_cpu_isa_native_bf16(&isa)));
    *out = bf16 ? RN_PREC_BF16 : RN_PREC_FP32;
    char line[128];
    fprintf(stderr, "rootnet: --precision auto: %s on device %s (%s)\n", POLICIES[*out].name, name,
            cuda ? "bf16 tensor cores" : cpu ? rn_cpu_isa_line(&isa, line, sizeof line) : "the reference device computes fp32");
    return 0;
}

const rn_policy *rn_policy_get(rn_precision id)
{
    RN_ASSERT(id >= 0 && id < RN_PREC_COUNT);
    return &POLICIES[id];
}

int rn_policy_check(const rn_policy *pol, rn_device *dev, rn_err *err)
{
    if (dev->ops->supports(dev, pol->conv_compute, pol->act_storage)) return 0;
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

int rn_policy_say_emulated(const rn_policy *pol, const char *device)
{
    const char *name = device ? device : rn_device_default();
    if ((pol->conv_compute != RN_NUM_BF16 && pol->conv_compute != RN_NUM_I8) || strcmp(name, "cpu") != 0) return 0;
    rn_cpu_isa isa;
    rn_cpu_isa_detect(&isa);
    if (pol->conv_compute == RN_NUM_I8) {
        if (rn_cpu_isa_native_int8(&isa)) return 0;
        fprintf(stderr,
                "rootnet: precision int8 on this CPU (%s%s) is emulated: it has no int8 dot products (AVX512_VNNI, "
                "AVX-VNNI or AMX-INT8), so oneDNN multiplies bytes and adds 16-bit pairs in several instructions; "
                "expect it no faster than fp32 (not measured: no such CPU here); --precision fp32 keeps the exact "
                "answers\n",
                isa.model, isa.forced ? ", RN_CPU_ISA" : "");
        return 1;
    }
    if (rn_cpu_isa_native_bf16(&isa)) return 0;
    fprintf(stderr,
            "rootnet: precision %s on this CPU (%s%s) is emulated: it has no bf16 dot products (AVX512_BF16 or "
            "AMX-BF16), so oneDNN computes bf16 in fp32; expect it about 3.7x slower than fp32 for inference and "
            "2.6x for training (measured on an Ice Lake Xeon, README Benchmarks); --precision fp32 is faster here\n",
            pol->name, isa.model, isa.forced ? ", RN_CPU_ISA" : "");
    return 1;
}

void rn_policy_apply(const rn_policy *pol, rn_model_opts *o)
{
    o->compute = pol->conv_compute;
    o->act = pol->act_storage;
}
