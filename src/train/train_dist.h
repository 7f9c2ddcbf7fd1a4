/* rn_train_dist: the trainer's hooks (train/trainer.h) for data-parallel
 * training over rn_dist (dist/dist.h); the first part of a hook chain
 * (train/hook_chain.h), so that the all-reduce comes before the loss-scale check.
 *
 *   rn_dist *d = ...;                               // NULL for one process
 *   rn_train_dist td;
 *   rn_train_hooks dist = rn_train_dist_hooks(&td, d, &cfg);
 *   ... chain dist with other parts into `all` ...
 *   rn_train_dist_spans(&td, &all);                 // where the "allreduce" span goes
 *   int rc = rn_trainer_run(&cfg, &all, stdout, &err);
 *
 * rn_train_dist_hooks sets cfg->rank and cfg->world from d (the loader then
 * shards by rank; rank 0 alone logs, evaluates and writes snapshots). The hooks:
 *   model_opts     SyncBN's reduction (cfg->sync_bn) and the gradient-ready
 *                  hook that starts the all-reduce buckets in backward
 *   on_start       the flat gradient buffer and its buckets (cfg->bucket_mb);
 *                  checks that every rank loaded the same state (weights, Adam
 *                  moments, BN buffers: the same snapshot under --continue) and
 *                  fails on every rank if not; broadcasts rank 0's weights
 *   on_grads       the gradient all-reduce (with more than one rank an
 *                  "allreduce" span, sent to the span hooks given to
 *                  rn_train_dist_spans), the loss's mean over ranks, rank 0's
 *                  BN buffers without SyncBN
 * td, d and the span hooks must outlive the run.
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
    const rn_train_hooks *spans; /* span_begin/span_end used; never NULL after rn_train_dist_hooks */
} rn_train_dist;

rn_train_hooks rn_train_dist_hooks(rn_train_dist *td, rn_dist *d, rn_train_cfg *cfg);
/* The hooks whose span_begin/span_end receive the "allreduce" span (NULL: none). */
void rn_train_dist_spans(rn_train_dist *td, const rn_train_hooks *spans);

/* 64-bit hash of the weights, Adam moments, BN statistics and counters. */
uint64_t rn_train_dist_state_hash(const rn_params *p);

#endif
