/* bfloat16 storage: the top 16 bits of an IEEE fp32, as oneDNN and PyTorch
 * keep it. Widening is exact; narrowing rounds to nearest, ties to even, and
 * keeps NaN a (quiet) NaN.
 *
 *   rn_bf16 h = rn_bf16_from_f32(1.00390625f);   // a tie: rounds to 1.0f's pattern 0x3f80
 *   float f = rn_bf16_to_f32(h);                 // 1.0f
 *
 * Which number type a tensor holds is core/numtype.h's rn_numtype.
 */
#ifndef RN_CORE_BF16_H
#define RN_CORE_BF16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint16_t rn_bf16;

static inline float rn_bf16_to_f32(rn_bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline rn_bf16 rn_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t nan = (u & 0x7fffffffu) > 0x7f800000u;
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (rn_bf16)(nan ? (u >> 16) | 0x40u : rounded);
}

#endif
