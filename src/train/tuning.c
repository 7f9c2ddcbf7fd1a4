#include "train/tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/affinity.h"

#define PROFILE_SPANS (1u << 20)
#define PROFILE_DEVICE_MARKS 8192 /* device timestamps per step: 2 per layer span */


static int bind_setup(int threads, rn_err *err)
{
    int cores[1024];
    int n = rn_allowed_cores(cores, 1024);
    if (threads > 0 && threads < n) n = threads;
    return rn_bind_omp_threads(cores, n, threads, err);
}

static int scaler_setup(rn_tuning *t, const char *loss_scale, rn_err *err)
{
    if (loss_scale) {
        if (rn_loss_scale_parse(loss_scale, &t->scaler, err)) return -1;
        t->scaling = 1;
    } else if (t->policy->default_scaling == RN_SCALE_DYNAMIC) {
        t->scaler = rn_loss_scaler_dynamic();
        t->scaling = 1;
    }
    return 0;
}

/* The cuda device reads its conv settings from the environment when it opens (src/cuda/cuda_device.c:
 * RN_CUDA_BENCHMARK, RN_CUDA_WORKSPACE_MB): the flags set them for this process before it opens. */
static void device_env(const rn_tuning_flags *f)
{
    char mb[32];
    if (f->cudnn_benchmark) setenv("RN_CUDA_BENCHMARK", "1", 1);
    if (f->workspace_mb > 0) {
        snprintf(mb, sizeof mb, "%ld", f->workspace_mb);
        setenv("RN_CUDA_WORKSPACE_MB", mb, 1);
    }
}

int rn_tuning_setup(rn_tuning *t, const rn_tuning_flags *f, int threads, rn_err *err)
{
    memset(t, 0, sizeof *t);
    rn_precision id;
    t->device = f->device ? f->device : rn_device_default();
    unsigned accept = RN_PREC_ALL | (f->infer ? 1u << RN_PREC_INT8 : 0u);
    if (rn_precision_choose(f->precision, accept, t->device, &id, err)) return -1;
    t->policy = rn_policy_get(id);
    device_env(f);
    if (rn_device_create(&t->dev, t->device, threads, err)) return -1;
    if (rn_policy_check(t->policy, t->dev, err) || scaler_setup(t, f->loss_scale, err)) return -1;
    rn_policy_say_emulated(t->policy, t->device);
    if (f->lr_scale && rn_lr_rule_parse(f->lr_scale, &t->lr_rule, err)) return -1;
    t->bind_cores = f->bind_cores;
    t->graph = f->graph;
    t->no_prefetch = f->no_prefetch;
    if (t->bind_cores && bind_setup(threads, err)) return -1;
    if (f->autotune) {
        if (rn_autotune_open(&t->tune, f->autotune, err)) return -1;
        t->tuning = 1;
    }
    if (f->profile) {
        rn_profile_init(&t->profile, PROFILE_SPANS);
        t->prof = &t->profile;
        t->profile_path = f->profile;
    }
    return 0;
}

void rn_tuning_model_opts(rn_tuning *t, rn_model_opts *o)
{
    rn_policy_apply(t->policy, o);
    o->device = t->device;
    o->dev = t->dev;
    o->tune = t->tuning ? &t->tune : NULL;
    o->graph = t->graph;
    o->prefetch = !t->no_prefetch;
}

double rn_tuning_lr(const rn_tuning *t, double lr, long global_batch) { return rn_lr_scaled(lr, t->lr_rule, global_batch); }

void rn_tuning_attach(rn_tuning *t, rn_model *m)
{
    RN_ASSERT(t->n_models < (int)(sizeof t->models / sizeof t->models[0]));
    t->models[t->n_models++] = m;
    m->prof = t->prof;
    if (t->prof && !t->clock.dev && !rn_dev_clock_init(&t->clock, m->dev, PROFILE_DEVICE_MARKS)) {
        rn_prof_clock c = rn_dev_clock_get(&t->clock);
        rn_profile_set_clock(t->prof, &c);
    }
}

void rn_tuning_span_begin(void *ctx, const char *name)
{
    rn_tuning *t = ctx;
    int sp = rn_prof_begin(t->prof, name, "step", 0);
    if (t->depth < (int)(sizeof t->stack / sizeof t->stack[0])) t->stack[t->depth] = sp;
    t->depth++;
}

void rn_tuning_span_end(void *ctx, const char *name)
{
    (void)name;
    rn_tuning *t = ctx;
    if (t->depth <= 0) return;
    t->depth--;
    rn_prof_end(t->prof, t->depth < (int)(sizeof t->stack / sizeof t->stack[0]) ? t->stack[t->depth] : -1);
}

void rn_tuning_profile_reset(rn_tuning *t)
{
    if (t->prof) rn_profile_reset(t->prof);
}

int rn_tuning_finish(rn_tuning *t, FILE *f, rn_err *err)
{
    if (t->tuning && rn_autotune_save(&t->tune, err)) return -1;
    if (t->tuning)
        fprintf(f, "autotune: %d shape(s) timed, %d taken from %s\n", t->tune.timed, t->tune.reused, t->tune.path);
    if (t->scaling) rn_loss_scaler_log(&t->scaler, f);
    if (!t->prof) return 0;
    rn_profile_table(t->prof, f);
    if (rn_profile_write_chrome(t->prof, t->profile_path, err)) return -1;
    fprintf(f, "profile: %s\n", t->profile_path);
    return 0;
}

void rn_tuning_free(rn_tuning *t)
{
    if (t->prof) rn_profile_free(&t->profile);
    rn_dev_clock_free(&t->clock);
    if (t->tuning) rn_autotune_close(&t->tune);
    rn_device_destroy(t->dev);
    memset(t, 0, sizeof *t);

}
