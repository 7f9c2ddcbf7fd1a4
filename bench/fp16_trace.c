/* fp16_trace: what an fp16-o2 training step would store, over the steps, from a float32 run on the cpu
 * device with `rootnet bench`'s init and data (seed 7, every conv N(0, 0.001), one fixed random batch,
 * Adam at 1e-3). After each step it prints one JSON line: the loss, and the largest magnitude of the
 * forward activations, of their gradients (unscaled: an fp16 step stores them times the loss scale)
 * and of every conv's weight gradient (unscaled, as the fp16 path stores it: nn/kernel_math.h's
 * rn_km_wgrad_alpha), with the layers that hold them. The model plans without buffer reuse
 * (rn_model_opts.no_reuse), so after the step every activation and gradient buffer still holds its value.
 * One batch, so a step an fp16 device skips leaves the weights as they are and the next step sees the
 * same gradients: line j is what the step after j applied updates sees, whichever steps were skipped
 * (tools/fp16_sim.py replays the loss scaler over these lines).
 *
 *   build/fp16_trace --backbone 50 --size 256 --batch 32 --steps 30 --threads 2 [--he 1] > trace.jsonl
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "nn/model.h"
#include "nn/params.h"
#include "optim/adam.h"
#include "train/step.h"

typedef struct trace_cfg {
    long depth, size, batch, steps, threads, he; /* he: 1 for rootnet bench --init he */
} trace_cfg;

/* --name N pairs into c; 0, or -1 with a line on stderr. */
static int parse(int argc, char **argv, trace_cfg *c)
{
    const char *names[] = {"--backbone", "--size", "--batch", "--steps", "--threads", "--he"};
    long *vals[] = {&c->depth, &c->size, &c->batch, &c->steps, &c->threads, &c->he};
    for (int i = 1; i < argc; i += 2) {
        int k = 0;
        while (k < 6 && strcmp(argv[i], names[k])) k++;
        char *end = NULL;
        errno = 0;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
        if (k == 6 || i + 1 >= argc || !end || *end || errno || v < 0) {
            fprintf(stderr, "fp16_trace: bad argument %s (--backbone, --size, --batch, --steps, --threads N; --he 1: rootnet bench --init he)\n",
                    argv[i]);
            return -1;
        }
        *vals[k] = v;
    }
    return 0;
}

/* The largest |x| over n floats, and whether every one is finite. */
static float max_abs(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf(x[i]);
        if (!(a <= m)) m = a; /* NaN propagates */
    }
    return m;
}

/* The step's largest activation (kind RN_MEM_ACT) or activation gradient (RN_MEM_GRAD) in the arena. */
static float arena_max(const rn_model *m, rn_mem_kind kind)
{
    float mx = 0.0f;
    for (int i = 0; i < m->nbufs; i++) {
        const rn_model_buf *b = &m->bufs[i];
        if (b->kind != kind) continue;
        float v = max_abs((const float *)((const char *)m->arena + b->off), b->bytes / sizeof(float));
        if (!(v <= mx)) mx = v;
    }
    return mx;
}

int main(int argc, char **argv)
{
    trace_cfg c = {.depth = 50, .size = 256, .batch = 32, .steps = 30, .threads = 0};
    if (parse(argc, argv, &c)) return 2;
    rn_err err = {{0}};
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 7); /* rootnet bench's seed, init and inputs (src/cli/cmd_bench.c) */
    if (rn_params_build(&p, (int)c.depth, &err)) goto fail;
    rn_params_init(&p, &rng);
    if (c.he) rn_params_init_backbone_he(&p, &rng);
    rn_model m;
    rn_model_opts o = {.device = "cpu", .threads = (int)c.threads, .compute = RN_NUM_F32, .no_reuse = 1};
    if (rn_model_create(&m, &p, (int)c.batch, (int)c.size, (int)c.size, &o, &err)) goto fail;
    if (!m.dev->host_memory) {
        fprintf(stderr, "fp16_trace: the cpu device must have host memory\n");
        return 1;
    }
    int b = (int)c.batch, oh = m.OH, ow = m.OW;
    size_t per = (size_t)3 * c.size * c.size;
    float *x = rn_xmalloc((size_t)b * per * sizeof *x), *k = rn_xmalloc((size_t)b * sizeof *k);
    float *t = rn_xmalloc((size_t)b * 3 * sizeof *t), *one = rn_xmalloc((size_t)b * sizeof *one);
    for (size_t i = 0; i < (size_t)b * per; i++) x[i] = (float)rn_rng_normal(&rng);
    for (int j = 0; j < b; j++) {
        k[j] = 8000.0f + 4000.0f * (float)rn_rng_uniform(&rng);
        t[3 * j] = (float)(ow * rn_rng_uniform(&rng));
        t[3 * j + 1] = (float)(oh * rn_rng_uniform(&rng));
        t[3 * j + 2] = (float)(2000 + 4000 * rn_rng_uniform(&rng));
        one[j] = 1.0f;
    }
    rn_adam opt = rn_adam_default(1e-3);
    rn_step_batch sb = {x, k, t, one, one};
    printf("{\"backbone\": %ld, \"size\": %ld, \"batch\": %ld, \"steps\": %ld, \"init\": \"rootnet bench --init %s (seed 7)\"}\n",
           c.depth, c.size, c.batch, c.steps, c.he ? "he" : "authors");
    for (long s = 0; s < c.steps; s++) {
        double loss = 0;
        int applied = 0;
        if (rn_train_step(&m, &opt, &sb, NULL, NULL, NULL, &loss, &applied, &err)) goto fail;
        /* the weight gradients of the step just taken are still in p.grad (zeroed at the next step's start) */
        float wmax = 0.0f;
        const char *wname = "-";
        for (int i = 0; i < p.n; i++) {
            const rn_param_entry *e = &p.e[i];
            if (!rn_param_trainable(e->kind) || e->ndim != 4 || strstr(e->name, "xy_layer") || strstr(e->name, "depth_layer"))
                continue; /* the heads compute in fp32 (nn/precision.h) */
            float v = max_abs(p.grad + e->offset, e->numel);
            if (!(v <= wmax)) wmax = v, wname = e->name;
        }
        printf("{\"step\": %ld, \"loss\": %.6g, \"act\": %.6g, \"act_grad\": %.6g, \"wgrad\": %.6g, \"wgrad_at\": \"%s\"}\n",
               s + 1, loss, (double)arena_max(&m, RN_MEM_ACT), (double)arena_max(&m, RN_MEM_GRAD), (double)wmax,
               wname);
        fflush(stdout);
    }
    free(x), free(k), free(t), free(one);
    rn_model_destroy(&m);
    rn_params_free(&p);
    return 0;
fail:
    fprintf(stderr, "fp16_trace: %s\n", err.msg);
    return 1;
}
