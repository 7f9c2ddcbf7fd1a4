/* rn_tuning: the precision/performance switches of a training or benchmark
 * run (--device, --precision, --loss-scale, --profile, --autotune,
 * --bind-cores, --lr-scale, --graph) resolved once.
 * Any command that trains (step, bench, train) uses it the same way:
 *
 *   rn_tuning_flags tf = {0};                      // strings from the command line
 *   rn_flag flags[] = {..., RN_TUNING_FLAGS(&tf), {0}};   (cli/tuning_flags.h)
 *   rn_tuning t;
 *   if (rn_tuning_setup(&t, &tf, threads, &err)) ...;  // parses, asks the device about the precision,
 *                                                       // binds cores, opens the autotune cache
 *   rn_model_opts mo = {.threads = threads};
 *   rn_tuning_model_opts(&t, &mo);                      // device, precision, autotune, graph, prefetch
 *   rn_model_create(&m, &p, B, H, W, &mo, &err);
 *   rn_tuning_attach(&t, &m);                           // profiler, loss scale
 *   rn_adam opt = rn_adam_default(rn_tuning_lr(&t, lr, global_batch));
 *   rn_step_ctl ctl = {.scaler = t.scaling ? &t.scaler : NULL};
 *   loop: rn_train_step(&m, &opt, &b, NULL, &ctl, &hooks, &loss, &applied, &err);   // train/step.h
 *         rn_profile_step_done(t.prof);
 *   rn_tuning_finish(&t, stdout, &err);   // autotune cache, trace, table, scale log: BEFORE
 *   rn_model_destroy(&m);                 // destroying the model or params (spans borrow their names)
 *   rn_tuning_free(&t);
 */
#ifndef RN_TRAIN_TUNING_H
#define RN_TRAIN_TUNING_H

#include <stdio.h>

#include "core/profile.h"
#include "nn/autotune.h"
#include "nn/dev_clock.h"

#include "nn/model.h"
#include "nn/precision.h"
#include "optim/adam.h"
#include "optim/loss_scale.h"
#include "optim/lr_scale.h"

typedef struct rn_tuning_flags {
    const char *device;     /* cpu (NULL, default) | ref: the models' device */
    const char *precision;  /* fp32 (default) | bf16 | bf16-o2 | fp16 | int8 (infer) | auto */
    const char *loss_scale; /* NULL: the policy's default; "dynamic" or a number */
    const char *profile;    /* Chrome-trace output path, or NULL */
    const char *autotune;   /* autotune cache path, or NULL (default algorithms) */
    const char *lr_scale;   /* none (default) | linear */
    int bind_cores;
    int graph;              /* 1: the models' opts.graph (nn/model.h) */
    int no_prefetch;        /* 1: no opts.prefetch (nn/model.h), which is on otherwise */
    int cudnn_benchmark;    /* 1: cuda: each conv's fastest measured algorithm, deterministic or not (as PyTorch's
                               cudnn.benchmark): faster, but a resumed run is no longer bit-identical */
    long workspace_mb;      /* > 0: cuda: cap on cuDNN's workspace, MiB (default 1024) */
    int infer;              /* 1: an inference run (bench --mode infer): --precision int8 accepted too */
} rn_tuning_flags;

typedef struct rn_tuning {
    const char *device;     /* the models' device's name */
    rn_device *dev;         /* that device, opened once here: every model of the run shares it */

    const rn_policy *policy;
    int scaling;            /* 1: loss scaler in use */
    rn_loss_scaler scaler;
    rn_lr_rule lr_rule;
    int bind_cores;
    int graph;
    int no_prefetch;
    rn_profile profile;
    rn_profile *prof;       /* &profile when profiling, else NULL */
    const char *profile_path;
    rn_autotune tune;
    int tuning;
    rn_dev_clock clock;     /* the profile's device clock, where the device has events */
    rn_model *models[4];    /* attached models */
    int n_models;
    int stack[16], depth;   /* open spans of the span hooks */
} rn_tuning;

int rn_tuning_setup(rn_tuning *t, const rn_tuning_flags *f, int threads, rn_err *err);
void rn_tuning_model_opts(rn_tuning *t, rn_model_opts *o);
double rn_tuning_lr(const rn_tuning *t, double lr, long global_batch);
/* Points m at the profiler (timing its layers on the device's events where it has them).
 * Up to 4 models. */
void rn_tuning_attach(rn_tuning *t, rn_model *m);

/* Span hooks for a training loop (train/trainer.h's rn_train_hooks), ctx = the
 * rn_tuning: they open and close "step" spans by name (nesting up to 16). */
void rn_tuning_span_begin(void *ctx, const char *name);
void rn_tuning_span_end(void *ctx, const char *name);
/* Drops profile spans so far (after warm-up). */
void rn_tuning_profile_reset(rn_tuning *t);
/* Saves the autotune cache, writes the trace and prints the table and the loss-scale log to f. */
int rn_tuning_finish(rn_tuning *t, FILE *f, rn_err *err);
void rn_tuning_free(rn_tuning *t);

#endif
