/* rn_policy: mixed-precision policies. A policy says, for each class of
 * tensor, which number type it is stored in and which the math runs in. The
 * model, the optimizer and the loss scaler read the policy; nothing else
 * decides a precision.
 *
 *   rn_precision id;
 *   if (rn_precision_parse("bf16", RN_PREC_ALL, &id, &err)) ...;  // fp32 | bf16 | bf16-o2 | fp16 | fp16-o2
 *   const rn_policy *pol = rn_policy_get(id);
 *   if (rn_policy_check_device(pol, "cpu", &err)) ...;        // can this device run it?
 *   rn_model_opts mo = {.threads = 2};
 *   rn_policy_apply(pol, &mo);                                // sets mo.compute and mo.act
 *   rn_loss_scaler ls = pol->default_scaling == RN_SCALE_DYNAMIC ? rn_loss_scaler_dynamic()
 *                                                              : rn_loss_scaler_static(1);
 *
 * Invariants of every policy: master weights, Adam moments, BatchNorm
 * statistics and running statistics, softmax, loss, k, camera values and
 * targets are fp32 (never quantised, never cast to an integer type).
 * fp16 is described here for a CUDA device (its exponent range makes a
 * dynamic loss scale mandatory); the cpu and ref devices reject it. Which
 * device runs which policy is the device's answer (rn_device_ops.supports).
 */
#ifndef RN_NN_PRECISION_H
#define RN_NN_PRECISION_H

#include "core/numtype.h"
#include "core/status.h"
#include "nn/model.h"

typedef enum {
    RN_PREC_FP32 = 0,
    RN_PREC_BF16 = 1,    /* O1: convs/deconvs compute in bf16, everything stored fp32 */
    RN_PREC_BF16_O2 = 2, /* O2: activations stored bf16 end to end */
    RN_PREC_FP16 = 3,    /* O1 with fp16 compute: a CUDA device only */
    RN_PREC_FP16_O2 = 4, /* O2 with fp16: activations stored fp16 end to end (CUDA), dynamic loss scale */
    RN_PREC_INT8 = 5,    /* inference only: convs in int8 (u8 x s8, nn/calib.h), activations fp32; needs a
                            calibration and the folded forward (cpu) */

    RN_PREC_COUNT
} rn_precision;

/* The policies a command accepts (rn_precision_parse), a mask of 1u << id: every training one (train, step,
 * bench, forward), or those that keep activations in fp32 (predict, test, demo, the C API) with int8. */
#define RN_PREC_ALL ((1u << RN_PREC_INT8) - 1u)
#define RN_PREC_INFER ((1u << RN_PREC_FP32) | (1u << RN_PREC_BF16) | (1u << RN_PREC_INT8))

typedef enum { RN_SCALE_NONE = 0, RN_SCALE_DYNAMIC = 1 } rn_scale_default;

typedef struct rn_policy {
    rn_precision id;
    const char *name;             /* as on the command line */
    rn_numtype conv_compute;      /* conv/deconv math (inputs rounded to this type) */
    rn_numtype act_storage;       /* activations and their gradients between layers */
    rn_numtype master;            /* weights, gradients, Adam moments: always F32 */
    rn_numtype norm;              /* BN statistics and math, softmax, loss, k: always F32 */
    rn_scale_default default_scaling; /* what --loss-scale defaults to */
    const char *missing;          /* why a device lacks it, for the error line */
} rn_policy;

/* The one parser of --precision (every command, the config file, the C API): s names a policy
 * ("fp32", "bf16", "bf16-o2", "fp16", "fp16-o2"; NULL: fp32) in accept (RN_PREC_ALL, RN_PREC_INFER);
 * else -1 with one line, "precision 'x': expected fp32 or bf16", listing accept. Whether a device
 * runs it is rn_policy_check's. */
int rn_precision_parse(const char *s, unsigned accept, rn_precision *out, rn_err *err);
const rn_policy *rn_policy_get(rn_precision id);
/* 0 if dev runs pol (its supports op), else -1 with one line saying why. */
int rn_policy_check(const rn_policy *pol, rn_device *dev, rn_err *err);
/* The same for the device of that name (NULL: the default), opened for the question;
 * also fails when the device is not built in. */
int rn_policy_check_device(const rn_policy *pol, const char *device, rn_err *err);
/* s as rn_precision_parse, and "auto": the fastest precision of accept that the device (NULL: the default
 * one) computes natively, said in one line on stderr: on cpu bf16 where the CPU has bf16 dot products
 * (core/cpu_isa.h), else fp32; on a cuda device bf16; on ref fp32. */
int rn_precision_choose(const char *s, unsigned accept, const char *device, rn_precision *out, rn_err *err);
/* When the policy's convs would be emulated on that device (NULL: the default one): bf16 compute on a
 * cpu device whose CPU lacks AVX512_BF16 and AMX-BF16, or int8 on one without VNNI or AMX-INT8
 * (core/cpu_isa.h), one line on stderr saying so and how much slower it is expected to run; returns 1
 * then, else 0 (nothing said). The run goes on: the user asked for it. */
int rn_policy_say_emulated(const rn_policy *pol, const char *device);
/* Sets the model options the policy controls (conv compute type, activation storage). */
void rn_policy_apply(const rn_policy *pol, rn_model_opts *o);

#endif
