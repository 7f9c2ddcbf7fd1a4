#include "core/cpu_isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* The OS saves the AMX tile state (XCR0 bits 17 and 18). */
static int os_amx(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & (3u << 17)) == (3u << 17);
}

static void detect_x86(rn_cpu_isa *isa)
{
    __builtin_cpu_init();
    isa->avx512 = __builtin_cpu_supports("avx512f");
    isa->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    isa->bf16 = isa->avx512 && __builtin_cpu_supports("avx512bf16");
    isa->vnni = isa->avx512 && __builtin_cpu_supports("avx512vnni");
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) isa->avx_vnni = isa->avx2 && (a & (1u << 4)) != 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && os_amx()) {
        isa->amx_bf16 = (d & (1u << 22)) && (d & (1u << 24));
        isa->amx_int8 = (d & (1u << 25)) && (d & (1u << 24));
    }
}
#else
static void detect_x86(rn_cpu_isa *isa) { (void)isa; }
#endif

static void read_model(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        colon += 1 + (colon[1] == ' ');
        snprintf(out, n, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    fclose(f);
}

/* The RN_CPU_ISA list in place of the detected flags. */
static void force(rn_cpu_isa *isa, const char *list)
{
    static const char *const NAMES[] = {"avx512", "avx2", "bf16", "amx-bf16", "vnni", "avx-vnni", "amx-int8"};
    int *flag[] = {&isa->avx512, &isa->avx2, &isa->bf16, &isa->amx_bf16, &isa->vnni, &isa->avx_vnni, &isa->amx_int8};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        size_t len = strlen(NAMES[i]);
        const char *p = list;
        *flag[i] = 0;
        while ((p = strstr(p, NAMES[i]))) {
            int starts = p == list || p[-1] == ',', ends = p[len] == 0 || p[len] == ',';
            if (starts && ends) *flag[i] = 1;
            p += len;
        }
    }
    isa->forced = 1;
}

void rn_cpu_isa_detect(rn_cpu_isa *isa)
{
    memset(isa, 0, sizeof *isa);
    read_model(isa->model, sizeof isa->model);
    detect_x86(isa);
    const char *env = getenv("RN_CPU_ISA");
    if (env) force(isa, env);
}

int rn_cpu_isa_native_bf16(const rn_cpu_isa *isa) { return isa->bf16 || isa->amx_bf16; }

int rn_cpu_isa_native_int8(const rn_cpu_isa *isa) { return isa->vnni || isa->avx_vnni || isa->amx_int8; }

const char *rn_cpu_isa_line(const rn_cpu_isa *isa, char *buf, size_t n)
{
    const char *fp32 = isa->avx512 ? "avx512" : isa->avx2 ? "avx2" : "sse";
    const char *bf16 = isa->amx_bf16 ? "amx_bf16" : isa->bf16 ? "avx512_bf16" : "emulated";
    const char *int8 = isa->amx_int8 ? "amx_int8" : isa->vnni ? "avx512_vnni" : isa->avx_vnni ? "avx_vnni" : "none";
    snprintf(buf, n, "fp32 %s, bf16 %s, int8 %s%s", fp32, bf16, int8, isa->forced ? " (RN_CPU_ISA)" : "");
    return buf;
}
