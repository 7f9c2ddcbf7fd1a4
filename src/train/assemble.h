/* rn_train_assemble: the ONE assembly of a training step, for `rootnet train`
 * (train/trainer.h), `rootnet step` and `rootnet bench`: the model (or two:
 * the trainer's short last batch) over the caller's parameters on the
 * tuning's device with its precision and autotune cache, the distribution's
 * SyncBN reduce and gradient buckets, the profiler attached, Adam with the
 * tuning's lr rule, the step's controls (train/step.h: the all-reduce, rank
 * 0's BN buffers, the loss scaler), the gradient buffers set up and rank 0's
 * weights broadcast. What it derives (rank, world, the options, the scaled
 * lr) it returns; it writes to no config.
 *
 *   rn_tuning tn;  rn_tuning_setup(&tn, &flags, threads, &err);      // device, precision, scaler, profile
 *   rn_train_env env = rn_train_env_make(&tn, d, threads, sync_bn, bucket_mb);   // d: NULL for one process
 *   rn_train_shape sh = {.batch = 32, .h = 256, .w = 256, .lr = 1e-3};
 *   rn_train_rig r;
 *   if (rn_train_assemble(&r, &env, &p, &sh, &err)) ...;              // nothing held on failure
 *   loop: rn_train_step(&r.m, &r.opt, &b, NULL, &r.ctl, &r.spans, &loss, &applied, &err);
 *   rn_tuning_finish(&tn, stdout, &err);   // before the models: spans borrow their names
 *   rn_train_rig_free(&r);  rn_params_free(&p);  rn_tuning_free(&tn);
 */
#ifndef RN_TRAIN_ASSEMBLE_H
#define RN_TRAIN_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "dist/dist.h"
#include "nn/model.h"
#include "nn/params.h"
#include "optim/adam.h"
#include "train/step.h"
#include "train/tuning.h"

/* What every model and step of a run shares. */
typedef struct rn_train_env {
    rn_tuning *tn;         /* borrowed; NULL: the default device in fp32, no scaler, no profile */
    rn_dist *dist;         /* borrowed; NULL: one process */
    int rank, world;       /* this process's place (from dist: 0 and 1 without) */
    int threads;           /* compute threads of every model */
    int sync_bn;           /* with dist: BN statistics over all ranks */
    size_t bucket_floats;  /* the gradient all-reduce's bucket (rn_dist_bucket_floats) */
} rn_train_env;

rn_train_env rn_train_env_make(rn_tuning *tn, rn_dist *d, int threads, int sync_bn, double bucket_mb);
/* The options of env's models: threads; the tuning's device, precision and autotune cache; SyncBN's
 * reduce and the gradient-ready hook that starts the all-reduce buckets in backward. */
rn_model_opts rn_train_env_model_opts(const rn_train_env *e);
/* The tuning's device when a model on it should take its inputs from pinned host memory (no host
 * memory, host_alloc and upload_async: cuda), else NULL. */
rn_device *rn_train_env_pin(const rn_train_env *e);
/* lr under the tuning's lr rule (lr-scale) for a global batch of batch x world samples. */
double rn_train_env_lr(const rn_train_env *e, double lr, long batch);

typedef struct rn_train_shape {
    int batch, h, w;       /* the model's batch (per process) and input */
    int tail;              /* 0, or the rows of a short last batch (< batch): a second model for them */
    int replicas;          /* emulated replicas per process (rootnet step --emulate-replicas); 0: 1 */
    int pinned_inputs;     /* the inputs lie in rn_train_env_pin's pinned memory */
    double lr;             /* Adam's, before the lr rule (global batch: batch x replicas x world) */
    int same_start;        /* 1: fail on every rank unless every rank holds the same state (weights,
                            * Adam moments, BN buffers) before rank 0's is broadcast (train) */
} rn_train_shape;

typedef struct rn_train_rig {
    rn_model m, tail;      /* tail: only with shape.tail */
    int have_tail;
    rn_adam opt;
    rn_step_ctl ctl;       /* with more than one rank the all-reduce (and rank 0's BN buffers without
                            * SyncBN); the tuning's loss scaler */
    rn_train_hooks spans;  /* the step's spans into the tuning's profile */
} rn_train_rig;

/* Plans r's models over p (p's arenas move to the device), attaches the profiler, sets up Adam,
 * the controls, the gradient buffers and broadcasts rank 0's weights and BN buffers. 0, or -1
 * with err and nothing held (p is the caller's either way). */
int rn_train_assemble(rn_train_rig *r, const rn_train_env *e, rn_params *p, const rn_train_shape *s, rn_err *err);
void rn_train_rig_free(rn_train_rig *r);

/* 64-bit hash of the weights, Adam moments, BN statistics and counters. */
uint64_t rn_train_state_hash(const rn_params *p);

#endif
