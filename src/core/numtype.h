/* rn_numtype: the one set of number types a model computes and stores in,
 * for conv/deconv compute, activation storage and every type a precision
 * policy names (nn/precision.h), and of the sums a collective reduces (F64, F32:
 * nn/device.h's reduce hook and allreduce op). File dtypes are io/tensors.h's rn_dtype.
 *
 *   rn_act_shape a = {.n = 2, .c = 64, .h = 48, .w = 32, .type = RN_NUM_BF16};
 *   size_t bytes = (size_t)a.n * a.c * a.h * a.w * rn_numtype_size(a.type);  // 2 bytes each
 *
 * RN_NUM_F32 is 0, so a zeroed option struct means fp32. This header is C and C++ (the CUDA kernels).
 */
#ifndef RN_CORE_NUMTYPE_H
#define RN_CORE_NUMTYPE_H

#include <stddef.h>

/* RN_NUM_F16 (IEEE binary16) is a CUDA device's (fp16, fp16-o2); cpu and ref neither compute nor store it. */
typedef enum {
    RN_NUM_F32 = 0,  /* IEEE binary32 */
    RN_NUM_BF16 = 1, /* bfloat16: the top 16 bits of a binary32 (core/bf16.h) */
    RN_NUM_F16 = 2,  /* IEEE binary16 */
    RN_NUM_F64 = 3,  /* IEEE binary64: statistic sums and their reductions only, never an activation or a conv */
    RN_NUM_I8 = 4,   /* int8 inference convs (compute only, fused convs on cpu): src quantised to u8 with a
                        per-tensor scale (rn_conv_shape.in_scale), weights to s8 per output channel, int32
                        sums, the result scaled back to float; never an activation's storage */
} rn_numtype;

/* Bytes of one element. */
static inline size_t rn_numtype_size(rn_numtype t)
{
    return t == RN_NUM_F64 ? 8 : t == RN_NUM_F32 ? 4 : t == RN_NUM_I8 ? 1 : 2;
}

#endif
