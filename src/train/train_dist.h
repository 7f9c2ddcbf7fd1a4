/* rn_train_dist: the trainer's hooks (train/trainer.h) for data-parallel
 * training over rn_dist (dist/dist.h); the first part of a hook chain
 * (train/hook_chain.h), and the step's distribution (train/step.h).
 *
 *   rn_dist *d = ...;                               // NULL for one process
 *   rn_train_dist td;
 *   rn_train_hooks dist = rn_train_dist_hooks(&td, d, &cfg);
 *   ... chain dist with other parts into `all` ...
 *   rn_step_ctl ctl = rn_train_dist_ctl(&td, scaler);   // the all-reduce in each step
 *   int rc = rn_trainer_run(&cfg, &all, &ctl, stdout, &err);
 *
 * rn_train_dist_hooks sets cfg->rank and cfg->world from d (the loader then
 * shards by rank; rank 0 alone logs, evaluates and writes snapshots). The hooks:
 *   model_opts     SyncBN's reduction (cfg->sync_bn) and the gradient-ready
 *                  hook that starts the all-reduce buckets in backward
 *   on_start       the flat gradient buffer and its buckets (cfg->bucket_mb);
 *                  checks that every rank loaded the same state (weights, Adam
 *                  moments, BN buffers: the same snapshot under --continue) and
 *                  fails on every rank if not; broadcasts rank 0's weights
 * rn_train_dist_ctl: with more than one rank, each step's gradient all-reduce,
 * the loss's mean over ranks and rank 0's BN buffers without SyncBN.
 * td, d and the span hooks must outlive the run.
 */
#ifndef RN_TRAIN_TRAIN_DIST_H
#define RN_TRAIN_TRAIN_DIST_H

#include <stddef.h>

#include "dist/dist.h"
#include "train/config.h"
#include "train/step.h"
#include "train/trainer.h"

typedef struct rn_train_dist {
    rn_dist *d;
    int sync_bn;
    size_t bucket_floats;
} rn_train_dist;

rn_train_hooks rn_train_dist_hooks(rn_train_dist *td, rn_dist *d, rn_train_cfg *cfg);
/* The step's parts for td (NULL: one process) with the loss scaler (NULL: none). */
rn_step_ctl rn_train_dist_ctl(const rn_train_dist *td, rn_loss_scaler *scaler);

/* 64-bit hash of the weights, Adam moments, BN statistics and counters. */
uint64_t rn_train_dist_state_hash(const rn_params *p);

#endif
