/* bench_convs: times fwd / bwd_data / bwd_weights (and the weight reorder of
 * set_weights) of every distinct ResNet-50 + RootNet-head conv shape at a
 * 256x256 input through the backend, in fp32 and bf16, and prints GFLOP/s and
 * % of this machine's peak. Ends with the whole-network totals per step (each
 * shape weighted by how often it occurs) and one JSON line per compute mode.
 *
 *   build/bench_convs --batch 8 --iters 3 --compute both
 */
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "core/profile.h"
#include "core/rng.h"
#include "nn/device.h"

/* Default peaks (GFLOP/s, 2 cores) from /work/shared/NOTES-cpu.md; --peak-f32/--peak-bf16 override. */
#define PEAK_F32 224.0
#define PEAK_BF16 448.0

typedef struct cfg {
    int n, iters;
    const char *only;
    double peak_f32, peak_bf16;
} cfg;

static double peak_of(const cfg *g, rn_numtype cm)
{
    return cm == RN_NUM_BF16 ? g->peak_bf16 : g->peak_f32;
}

typedef struct layer {
    const char *name;
    int count; /* occurrences in the network */
    int ic, ih, oc, oh, k, s, p, transposed, plain;
} layer;

static const layer LAYERS[] = {
    {"conv1 7x7/2 3->64", 1, 3, 256, 64, 128, 7, 2, 3, 0, 1},
    {"l1 1x1 64->64", 1, 64, 64, 64, 64, 1, 1, 0, 0, 0},
    {"l1 3x3 64->64", 3, 64, 64, 64, 64, 3, 1, 1, 0, 0},
    {"l1 1x1 64->256 (+ds)", 4, 64, 64, 256, 64, 1, 1, 0, 0, 0},
    {"l1 1x1 256->64", 2, 256, 64, 64, 64, 1, 1, 0, 0, 0},
    {"l2 1x1 256->128", 1, 256, 64, 128, 64, 1, 1, 0, 0, 0},
    {"l2 3x3/2 128->128", 1, 128, 64, 128, 32, 3, 2, 1, 0, 0},
    {"l2 ds 1x1/2 256->512", 1, 256, 64, 512, 32, 1, 2, 0, 0, 0},
    {"l2 1x1 128->512", 4, 128, 32, 512, 32, 1, 1, 0, 0, 0},
    {"l2 1x1 512->128", 3, 512, 32, 128, 32, 1, 1, 0, 0, 0},
    {"l2 3x3 128->128", 3, 128, 32, 128, 32, 3, 1, 1, 0, 0},
    {"l3 1x1 512->256", 1, 512, 32, 256, 32, 1, 1, 0, 0, 0},
    {"l3 3x3/2 256->256", 1, 256, 32, 256, 16, 3, 2, 1, 0, 0},
    {"l3 ds 1x1/2 512->1024", 1, 512, 32, 1024, 16, 1, 2, 0, 0, 0},
    {"l3 1x1 256->1024", 6, 256, 16, 1024, 16, 1, 1, 0, 0, 0},
    {"l3 1x1 1024->256", 5, 1024, 16, 256, 16, 1, 1, 0, 0, 0},
    {"l3 3x3 256->256", 5, 256, 16, 256, 16, 3, 1, 1, 0, 0},
    {"l4 1x1 1024->512", 1, 1024, 16, 512, 16, 1, 1, 0, 0, 0},
    {"l4 3x3/2 512->512", 1, 512, 16, 512, 8, 3, 2, 1, 0, 0},
    {"l4 ds 1x1/2 1024->2048", 1, 1024, 16, 2048, 8, 1, 2, 0, 0, 0},
    {"l4 1x1 512->2048", 3, 512, 8, 2048, 8, 1, 1, 0, 0, 0},
    {"l4 1x1 2048->512", 2, 2048, 8, 512, 8, 1, 1, 0, 0, 0},
    {"l4 3x3 512->512", 2, 512, 8, 512, 8, 3, 1, 1, 0, 0},
    {"deconv1 2048->256 8->16", 1, 2048, 8, 256, 16, 4, 2, 1, 1, 0},
    {"deconv2 256->256 16->32", 1, 256, 16, 256, 32, 4, 2, 1, 1, 0},
    {"deconv3 256->256 32->64", 1, 256, 32, 256, 64, 4, 2, 1, 1, 0},
    {"depth 1x1 2048->256 @1", 1, 2048, 1, 256, 1, 1, 1, 0, 0, 0},
};
#define N_LAYERS (sizeof LAYERS / sizeof LAYERS[0])

static rn_conv_shape layer_shape(const layer *l, int n, rn_numtype cm)
{
    return (rn_conv_shape){.n = n, .ic = l->ic, .ih = l->ih, .iw = l->ih, .oc = l->oc, .oh = l->oh, .ow = l->oh,
                           .kh = l->k, .kw = l->k, .sh = l->s, .sw = l->s, .ph = l->p, .pw = l->p,
                           .transposed = l->transposed, .src_plain = l->plain, .no_bwd_data = l->plain,
                           .compute = cm};
}

static double layer_flops(const layer *l, int n)
{
    double px = l->transposed ? (double)l->ih * l->ih : (double)l->oh * l->oh;
    return 2.0 * n * px * l->ic * l->oc * l->k * l->k;
}

typedef struct bufs {
    float *src, *dst, *dsrc, *ddst, *w, *dw;
} bufs;

static float *random_floats(size_t n, rn_rng *r)
{
    float *v = rn_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)(rn_rng_uniform(r) - 0.5);
    return v;
}

static void bufs_init(bufs *b, const rn_conv_shape *s, rn_rng *r)
{
    size_t nx = (size_t)s->n * s->ic * s->ih * s->iw, ny = (size_t)s->n * s->oc * s->oh * s->ow;
    size_t nw = (size_t)s->oc * s->ic * s->kh * s->kw;
    b->src = random_floats(nx, r);
    b->dsrc = random_floats(nx, r);
    b->dst = random_floats(ny, r);
    b->ddst = random_floats(ny, r);
    b->w = random_floats(nw, r);
    b->dw = random_floats(nw, r);
}

static void bufs_free(bufs *b)
{
    free(b->src); free(b->dst); free(b->dsrc); free(b->ddst); free(b->w); free(b->dw);
}

/* Best time in seconds of direction dir (0 fwd, 1 bwd_data, 2 bwd_weights, 3 set_weights). */
static double time_dir(rn_conv *c, bufs *b, int dir, int iters)
{
    double best = 1e30;
    for (int i = 0; i <= iters; i++) { /* first run is a warm-up */
        double t0 = rn_prof_now();
        if (dir == 0) rn_conv_forward(c, b->dst, b->src);
        else if (dir == 1) rn_conv_backward_data(c, b->dsrc, b->ddst);
        else if (dir == 2) rn_conv_backward_weights(c, b->dw, b->src, b->ddst);
        else rn_conv_set_weights(c, b->w);
        double t = rn_prof_now() - t0;
        if (i > 0 && t < best) best = t;
    }
    return best;
}

typedef struct totals {
    double t[4], flops[3];
} totals;

static int bench_layer(rn_device *be, const layer *l, const cfg *g, rn_numtype cm, totals *tot, rn_rng *r)
{
    int n = g->n;
    rn_conv_shape s = layer_shape(l, n, cm);
    rn_conv *c = NULL;
    rn_err err = {0};
    if (rn_conv_create(&c, be, &s, &err)) {
        fprintf(stderr, "bench_convs: %s: %s\n", l->name, err.msg);
        return -1;
    }
    bufs b;
    bufs_init(&b, &s, r);
    double peak = peak_of(g, cm), fl = layer_flops(l, n);
    printf("%-5s %-24s x%d", cm == RN_NUM_BF16 ? "bf16" : "fp32", l->name, l->count);
    for (int dir = 0; dir < 4; dir++) {
        if (dir == 1 && l->plain) {
            printf(" | %24s", "-");
            continue;
        }
        double t = time_dir(c, &b, dir, g->iters);
        tot->t[dir] += l->count * t;
        if (dir < 3) {
            tot->flops[dir] += l->count * fl;
            printf(" | %7.2f ms %6.1f GF %3.0f%%", 1e3 * t, fl / t * 1e-9, 100.0 * fl / t * 1e-9 / peak);
        } else {
            printf(" | %6.2f ms", 1e3 * t);
        }
    }
    printf("\n");
    fflush(stdout);
    bufs_free(&b);
    rn_conv_destroy(c);
    return 0;
}

static int bench_compute(rn_device *be, const cfg *g, rn_numtype cm, rn_rng *r)
{
    int n = g->n;
    totals tot = {0};
    printf("%-5s %-24s %-3s | %-24s | %-24s | %-24s | %s\n", "mode", "layer", "n", "forward", "backward_data",
           "backward_weights", "set_weights");
    for (size_t i = 0; i < N_LAYERS; i++) {
        if (g->only && !strstr(LAYERS[i].name, g->only)) continue;
        if (bench_layer(be, &LAYERS[i], g, cm, &tot, r)) return -1;
    }
    double peak = peak_of(g, cm);
    const char *names[3] = {"forward", "backward_data", "backward_weights"};
    for (int d = 0; d < 3; d++)
        printf("%s network %-16s %8.1f ms/step  %6.1f GFLOP/s  %3.0f%% of peak  (%.2f GMAC/img)\n",
               cm == RN_NUM_BF16 ? "bf16" : "fp32", names[d], 1e3 * tot.t[d], tot.flops[d] / tot.t[d] * 1e-9,
               100.0 * tot.flops[d] / tot.t[d] * 1e-9 / peak, tot.flops[d] / 2e9 / n);
    printf("%s network set_weights      %8.1f ms/step\n", cm == RN_NUM_BF16 ? "bf16" : "fp32", 1e3 * tot.t[3]);
    printf("%s network conv total       %8.1f ms/step (fwd + bwd_data + bwd_weights + set_weights, batch %d)\n",
           cm == RN_NUM_BF16 ? "bf16" : "fp32", 1e3 * (tot.t[0] + tot.t[1] + tot.t[2] + tot.t[3]), n);
    printf("{\"bench\": \"convs\", \"compute\": \"%s\", \"batch\": %d, \"fwd_ms\": %.2f, \"bwd_data_ms\": %.2f, "
           "\"bwd_weights_ms\": %.2f, \"set_weights_ms\": %.2f, \"fwd_gflops\": %.1f, \"bwd_data_gflops\": %.1f, "
           "\"bwd_weights_gflops\": %.1f}\n\n",
           cm == RN_NUM_BF16 ? "bf16" : "fp32", n, 1e3 * tot.t[0], 1e3 * tot.t[1], 1e3 * tot.t[2], 1e3 * tot.t[3],
           tot.flops[0] / tot.t[0] * 1e-9, tot.flops[1] / tot.t[1] * 1e-9, tot.flops[2] / tot.t[2] * 1e-9);
    return 0;
}

int main(int argc, char **argv)
{
    long batch = 32, iters = 3, threads = 0;
    double pf = PEAK_F32, pb = PEAK_BF16;
    const char *compute = "both", *only = NULL;
    rn_flag flags[] = {
        RN_FLAG_I64("--batch", &batch, "batch size (default 32)"),
        RN_FLAG_I64("--iters", &iters, "timed iterations after one warm-up; the best is reported (default 3)"),
        RN_FLAG_I64("--threads", &threads, "OpenMP threads (default: leave as is)"),
        RN_FLAG_STR("--compute", &compute, "fp32, bf16 or both (default both)"),
        RN_FLAG_STR("--only", &only, "only layers whose name contains this"),
        RN_FLAG_F64("--peak-f32", &pf, "fp32 peak GFLOP/s for the % column (default 224)"),
        RN_FLAG_F64("--peak-bf16", &pb, "bf16 peak GFLOP/s for the % column (default 448)"),
        {0}};
    rn_err err = {0};
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        rn_args_usage(stdout, "bench_convs", "", flags);
        return 0;
    }
    if (rn_args_parse(flags, argc, argv, 1, &err)) {
        fprintf(stderr, "bench_convs: %s\n", err.msg);
        rn_args_usage(stderr, "bench_convs", "", flags);
        return 2;
    }
    int do32 = !strcmp(compute, "fp32") || !strcmp(compute, "both");
    int do16 = !strcmp(compute, "bf16") || !strcmp(compute, "both");
    if (batch < 1 || batch > 1024 || iters < 1 || iters > 1000 || threads < 0 || threads > 1024 || !(do32 || do16) || !(pf > 0) || !(pb > 0)) {
        fprintf(stderr, "bench_convs: --batch 1..1024, --iters 1..1000, --threads 0..1024, --compute fp32|bf16|both, peaks > 0\n");
        return 2;
    }
    rn_device *be = NULL;
    if (rn_device_create(&be, "cpu", (int)threads, &err)) {
        fprintf(stderr, "bench_convs: %s\n", err.msg);
        return 1;
    }
    rn_rng r;
    rn_rng_seed(&r, 7);
    cfg g = {.n = (int)batch, .iters = (int)iters, .only = only, .peak_f32 = pf, .peak_bf16 = pb};
    printf("bench_convs: batch %d, 256x256 input, best of %d, peaks fp32 %.0f / bf16 %.0f GFLOP/s\n", g.n, g.iters,
           pf, pb);
    int rc = (do32 && bench_compute(be, &g, RN_NUM_F32, &r)) || (do16 && bench_compute(be, &g, RN_NUM_BF16, &r));
    rn_device_destroy(be);
    return rc ? 1 : 0;
}
