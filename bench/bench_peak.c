/* The arithmetic limits of this CPU, measured: fp32 FMA (vfmadd231ps zmm), bf16 dot products
 * (vdpbf16ps zmm) and int8 dot products (vpdpbusd zmm with AVX512_VNNI, else ymm with AVX-VNNI) in
 * independent chains on T threads at once, so benchmarks judge against the machine they ran on
 * instead of a figure written down for another CPU. Prints one JSON line with the CPU and what it
 * computes natively (src/core/cpu_isa.h):
 *   build/bench_peak --threads 2
 *   {"bench": "peak", "threads": 2, "cpu": "AMD EPYC", "isa": "fp32 avx512, bf16 avx512_bf16, int8 avx512_vnni",
 *    "fp32_gflops": 190.3, "bf16_gflops": 151.8, "int8_gops": 601.2}
 * A figure is null where the CPU lacks the instruction (checked with cpuid, not assumed; RN_CPU_ISA
 * overrides the answer as for rootnet).
 * Each kernel runs ROUNDS times; the best round counts (the machines are shared and noisy). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cpu_isa.h"

enum { LOOPS = 20000000, CHAINS = 24, ROUNDS = 3, MAX_THREADS = 64 };

typedef void (*kernel_fn)(long loops);

#if defined(__x86_64__)
#define OP24(op)                                                                                     \
    op " %%zmm30,%%zmm31,%%zmm0\n" op " %%zmm30,%%zmm31,%%zmm1\n" op " %%zmm30,%%zmm31,%%zmm2\n"      \
    op " %%zmm30,%%zmm31,%%zmm3\n" op " %%zmm30,%%zmm31,%%zmm4\n" op " %%zmm30,%%zmm31,%%zmm5\n"      \
    op " %%zmm30,%%zmm31,%%zmm6\n" op " %%zmm30,%%zmm31,%%zmm7\n" op " %%zmm30,%%zmm31,%%zmm8\n"      \
    op " %%zmm30,%%zmm31,%%zmm9\n" op " %%zmm30,%%zmm31,%%zmm10\n" op " %%zmm30,%%zmm31,%%zmm11\n"    \
    op " %%zmm30,%%zmm31,%%zmm12\n" op " %%zmm30,%%zmm31,%%zmm13\n" op " %%zmm30,%%zmm31,%%zmm14\n"   \
    op " %%zmm30,%%zmm31,%%zmm15\n" op " %%zmm30,%%zmm31,%%zmm16\n" op " %%zmm30,%%zmm31,%%zmm17\n"   \
    op " %%zmm30,%%zmm31,%%zmm18\n" op " %%zmm30,%%zmm31,%%zmm19\n" op " %%zmm30,%%zmm31,%%zmm20\n"   \
    op " %%zmm30,%%zmm31,%%zmm21\n" op " %%zmm30,%%zmm31,%%zmm22\n" op " %%zmm30,%%zmm31,%%zmm23\n"
#define CLOBBER24                                                                                    \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",  \
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",     \
        "xmm22", "xmm23", "xmm30", "xmm31"

__attribute__((target("avx512f"))) static void kernel_fp32(long loops)
{
    __asm__ volatile("vpxord %%zmm30,%%zmm30,%%zmm30\n vpxord %%zmm31,%%zmm31,%%zmm31\n"
                     "1:\n" OP24("vfmadd231ps") "dec %0\n jnz 1b\n"
                     : "+r"(loops)::CLOBBER24);
}

__attribute__((target("avx512f,avx512bf16"))) static void kernel_bf16(long loops)
{
    __asm__ volatile("vpxord %%zmm30,%%zmm30,%%zmm30\n vpxord %%zmm31,%%zmm31,%%zmm31\n"
                     "1:\n" OP24("vdpbf16ps") "dec %0\n jnz 1b\n"
                     : "+r"(loops)::CLOBBER24);
}

__attribute__((target("avx512f,avx512vnni"))) static void kernel_int8(long loops)
{
    __asm__ volatile("vpxord %%zmm30,%%zmm30,%%zmm30\n vpxord %%zmm31,%%zmm31,%%zmm31\n"
                     "1:\n" OP24("vpdpbusd") "dec %0\n jnz 1b\n"
                     : "+r"(loops)::CLOBBER24);
}

#define YOP12(op)                                                                                    \
    op " %%ymm14,%%ymm15,%%ymm0\n" op " %%ymm14,%%ymm15,%%ymm1\n" op " %%ymm14,%%ymm15,%%ymm2\n"      \
    op " %%ymm14,%%ymm15,%%ymm3\n" op " %%ymm14,%%ymm15,%%ymm4\n" op " %%ymm14,%%ymm15,%%ymm5\n"      \
    op " %%ymm14,%%ymm15,%%ymm6\n" op " %%ymm14,%%ymm15,%%ymm7\n" op " %%ymm14,%%ymm15,%%ymm8\n"      \
    op " %%ymm14,%%ymm15,%%ymm9\n" op " %%ymm14,%%ymm15,%%ymm10\n" op " %%ymm14,%%ymm15,%%ymm11\n"

/* AVX-VNNI (ymm, VEX): 12 chains, run twice per loop so that a loop counts CHAINS instructions. */
__attribute__((target("avx2,avxvnni"))) static void kernel_int8_ymm(long loops)
{
    __asm__ volatile("vpxor %%ymm14,%%ymm14,%%ymm14\n vpxor %%ymm15,%%ymm15,%%ymm15\n"
                     "1:\n" YOP12("%{vex%} vpdpbusd") YOP12("%{vex%} vpdpbusd") "dec %0\n jnz 1b\n"
                     : "+r"(loops)::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                       "xmm10", "xmm11", "xmm14", "xmm15");
}
#else
static void kernel_fp32(long loops) { (void)loops; }
static void kernel_bf16(long loops) { (void)loops; }
static void kernel_int8(long loops) { (void)loops; }
static void kernel_int8_ymm(long loops) { (void)loops; }
#endif

typedef struct {
    kernel_fn fn;
    pthread_barrier_t *start;
} job;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run_job(void *arg)
{
    const job *j = arg;
    pthread_barrier_wait(j->start);
    j->fn(LOOPS);
    return NULL;
}

/* GFLOP/s of all threads together for one kernel (flops_per_op per instruction), best of ROUNDS;
 * -1 when a thread could not be started. */
static double measure(kernel_fn fn, double flops_per_op, int threads)
{
    double best = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t tid[MAX_THREADS];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
        job j = { fn, &start };
        int started = 0;
        for (; started < threads; started++)
            if (pthread_create(&tid[started], NULL, run_job, &j)) break;
        if (started < threads) return -1;
        double t0 = now_s();
        pthread_barrier_wait(&start);
        for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
        double dt = now_s() - t0;
        pthread_barrier_destroy(&start);
        double g = (double)threads * LOOPS * CHAINS * flops_per_op / dt * 1e-9;
        if (g > best) best = g;
    }
    return best;
}

static void print_figure(const char *name, int present, double g)
{
    if (!present) printf(", \"%s\": null", name);
    else printf(", \"%s\": %.1f", name, g);
}

int main(int argc, char **argv)
{
    int threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_peak [--threads T]   (T in 1..%d; default 2)\n", MAX_THREADS);
            return 2;
        }
    }
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "bench_peak: --threads %d: not in 1..%d\n", threads, MAX_THREADS);
        return 2;
    }
    /* zmm FMA: 16 lanes x 2 flops; vdpbf16ps: 16 lanes x 2 products x 2 flops; vpdpbusd: 16 (zmm) or
     * 8 (ymm) lanes x 4 products x 2 ops */
    rn_cpu_isa isa;
    rn_cpu_isa_detect(&isa);
    int f = isa.avx512, b = isa.bf16, i8 = isa.vnni || isa.avx_vnni;
    double gf = f ? measure(kernel_fp32, 32.0, threads) : 0;
    double gb = b ? measure(kernel_bf16, 64.0, threads) : 0;
    double gi = isa.vnni ? measure(kernel_int8, 128.0, threads) : isa.avx_vnni ? measure(kernel_int8_ymm, 64.0, threads) : 0;
    if (gf < 0 || gb < 0 || gi < 0) {
        fprintf(stderr, "bench_peak: could not start %d threads\n", threads);
        return 1;
    }
    char line[128];
    printf("{\"bench\": \"peak\", \"threads\": %d, \"cpu\": \"%s\", \"isa\": \"%s\"", threads, isa.model,
           rn_cpu_isa_line(&isa, line, sizeof line));
    print_figure("fp32_gflops", f, gf);
    print_figure("bf16_gflops", b, gb);
    print_figure("int8_gops", i8, gi);
    printf("}\n");
    return 0;
}
