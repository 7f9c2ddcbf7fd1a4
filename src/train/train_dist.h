/* rn_train_dist: the trainer's hooks (train/trainer.h) for data-parallel
 * training over rn_dist (dist/dist.h), in front of optional inner hooks
 * (precision, profiler, evaluation), which they call in turn.
 *
 *   rn_dist *d = ...;                               // NULL for one process
 *   rn_train_dist td;
 *   rn_train_hooks hooks = rn_train_dist_hooks(&td, d, &cfg, inner);   // inner may be NULL
 *   int rc = rn_trainer_run(&cfg, &hooks, stdout, &err);
 *
 * rn_train_dist_hooks sets cfg->rank and cfg->world from d (the loader then
 * shards by rank; rank 0 alone logs, evaluates and writes snapshots). The hooks:
 *   model_opts     inner's, then SyncBN's reduction (cfg->sync_bn) and the
 *                  gradient-ready hook that starts the all-reduce buckets in backward
 *   on_start       the flat gradient buffer and its buckets (cfg->bucket_mb);
 *                  checks that every rank loaded the same state (weights, Adam
 *                  moments, BN buffers: the same snapshot under --continue) and
 *                  fails on every rank if not; broadcasts rank 0's weights; inner's
 *   on_grads       the gradient all-reduce (an "allreduce" span), the loss's mean
 *                  over ranks, rank 0's BN buffers without SyncBN; then inner's
 *                  (e.g. unscale + overflow check), whose answer it returns
 *   model_created, span_begin, span_end, on_epoch: inner's
 * td, d and inner must outlive the run.
 */
#ifndef RN_TRAIN_TRAIN_DIST_H
#define RN_TRAIN_TRAIN_DIST_H

#include <stddef.h>

#include "dist/dist.h"
#include "train/config.h"
#include "train/trainer.h"

typedef struct rn_train_dist {
    rn_dist *d;
    int sync_bn;
    size_t bucket_floats;
    const rn_train_hooks *inner; /* never NULL after rn_train_dist_hooks (an empty set) */
} rn_train_dist;

rn_train_hooks rn_train_dist_hooks(rn_train_dist *td, rn_dist *d, rn_train_cfg *cfg, const rn_train_hooks *inner);

/* 64-bit hash of the weights, Adam moments, BN statistics and counters. */
uint64_t rn_train_dist_state_hash(const rn_params *p);

#endif
