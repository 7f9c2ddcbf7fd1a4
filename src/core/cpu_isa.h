/* What this CPU computes natively, from cpuid (and the OS's saved state), for choosing and
 * naming a precision: fp32 (AVX-512 or AVX2 FMA), bf16 (AVX512_BF16, AMX-BF16), int8 dot
 * products (AVX512_VNNI, AVX-VNNI, AMX-INT8).
 *
 *   rn_cpu_isa isa; rn_cpu_isa_detect(&isa);
 *   if (!isa.bf16) ...;                       // bf16 convolutions would be emulated
 *   printf("%s: %s\n", isa.model, rn_cpu_isa_line(&isa, buf, sizeof buf));
 *
 * RN_CPU_ISA (environment) replaces the detected answer for tests and experiments: a comma list of
 * "avx512", "avx2", "bf16", "amx-bf16", "vnni", "avx-vnni", "amx-int8" (empty: none of them), so that
 * the behaviour on another CPU can be checked on this one.
 */
#ifndef RN_CORE_CPU_ISA_H
#define RN_CORE_CPU_ISA_H

#include <stddef.h>

typedef struct rn_cpu_isa {
    char model[96];    /* /proc/cpuinfo's "model name", or "unknown CPU" */
    int avx512, avx2;  /* fp32 FMA at 512 / 256 bits */
    int bf16, amx_bf16; /* vdpbf16ps (AVX512_BF16), AMX tiles in bf16 */
    int vnni, avx_vnni, amx_int8; /* vpdpbusd at 512 bits (AVX512_VNNI), 256 bits (AVX-VNNI), AMX int8 */
    int forced;        /* 1: RN_CPU_ISA gave the answer */
} rn_cpu_isa;

void rn_cpu_isa_detect(rn_cpu_isa *isa);
/* 1 when bf16 convolutions run natively (AVX512_BF16 or AMX-BF16), else 0 (emulated in fp32). */
int rn_cpu_isa_native_bf16(const rn_cpu_isa *isa);
/* 1 when int8 dot products run natively (any VNNI or AMX-INT8). */
int rn_cpu_isa_native_int8(const rn_cpu_isa *isa);
/* "fp32 avx512, bf16 avx512_bf16, int8 avx512_vnni" (each precision with the instructions that run it
 * natively, or "emulated") into buf; returns buf. */
const char *rn_cpu_isa_line(const rn_cpu_isa *isa, char *buf, size_t n);

#endif
