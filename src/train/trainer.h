/* rn_trainer: the training loop of `rootnet train` as a library function.
 *
 *   rn_train_cfg cfg; rn_train_cfg_default(&cfg);
 *   snprintf(cfg.data_dir, sizeof cfg.data_dir, "data");
 *   rn_train_hooks hooks = {0};                  // all optional
 *   if (rn_trainer_run(&cfg, NULL, &hooks, stdout, &err)) { fprintf(stderr, "%s\n", err.msg); ... }
 *
 * One run: load the 3D set and the 2D sets (train split), a loader over them
 * (the authors' equal-length mixing, per-sample seeded augmentation), the
 * weights (newest complete snapshot with cfg.cont, else cfg.pretrained, else
 * the authors' init from cfg.seed), the step assembled by rn_train_assemble
 * (train/assemble.h: device, models, Adam, loss scaler, distribution, from
 * env), then for epoch = start .. end_epoch-1: lr = rn_train_lr(epoch) under
 * the lr rule; every batch: rn_train_step (train/step.h: forward, backward,
 * the all-reduce and loss-scale check, Adam); a log line every cfg.log_every iterations (and a progress bar when
 * `out` is a terminal); a snapshot (snapshot.h) at the end of each epoch, and
 * every cfg.snapshot_iters iterations; hooks->on_epoch (evaluation); the
 * loss plot; hooks->on_end. Hooks may add numbers to the log lines
 * (log_values: e.g. the loss scale, skipped steps, an epoch's AP_root).
 * Files, under cfg.output:
 *   model_dump/snapshot_<E>.safetensors   (and snapshot_<E>_<B>.safetensors inside an epoch)
 *   log/train.jsonl                       one JSON object per logged step and event
 *   log/train_log.txt                     the printed log lines
 *   log/loss.png                          loss curve and per-epoch metrics
 * Logging and snapshots happen on rank 0 only (env's rank and world shard the
 * loader). Nothing is allocated inside a training step (the debug batch dump
 * aside). A short last batch runs on a second model planned for its size:
 * the authors' DataLoader keeps it (no drop_last), and its BN statistics are
 * those of its own rows (the loader pads it to the batch, data/loader.h).
 */
#ifndef RN_TRAIN_TRAINER_H
#define RN_TRAIN_TRAINER_H

#include <stdio.h>

#include "core/status.h"
#include "nn/model.h"
#include "nn/params.h"
#include "train/config.h"

typedef struct rn_train_hooks {
    void *ctx;
    /* Once the step is assembled (the weights loaded or resumed and rank 0's
     * broadcast), before the first step (e.g. a tester over the weights).
     * Return 0, or -1 with err. */
    int (*on_start)(void *ctx, rn_params *p, rn_err *err);
    /* Profiling spans: "data", then the step's (train/step.h: "sync_weights", "zero_grad",
     * "forward", "backward", "allreduce" with distribution, "optimizer", "loss_read"), each
     * iteration in that order; "snapshot". */
    void (*span_begin)(void *ctx, const char *name);
    void (*span_end)(void *ctx, const char *name);
    /* After epoch `epoch`'s snapshot at `snapshot` (rank 0): evaluate, set
     * *metric (e.g. AP_root in 0..1; NAN for none) and return 0, or -1 with err. */
    int (*on_epoch)(void *ctx, int epoch, const char *snapshot, const rn_params *p, double *metric, rn_err *err);
    /* After each iteration's update (e.g. a profiler's step boundary). */
    void (*on_step)(void *ctx);
    /* Extra numbers for a log line: fills up to max (name, value) pairs and
     * returns how many; at_epoch 0: a step line, 1: the epoch_end line (after
     * on_epoch). Names are borrowed until the line is written. Rank 0 only. */
    int (*log_values)(void *ctx, int at_epoch, const char **name, double *value, int max);
    /* Once after the last step (end_epoch or max_iters), before the models are
     * destroyed: write traces and summaries. Return 0, or -1 with err. */
    int (*on_end)(void *ctx, rn_err *err);
} rn_train_hooks;

/* Trains as cfg says on env (train/assemble.h: the tuning and the distribution; NULL: one process
 * on the default device in fp32); progress and log lines go to out (NULL: silent).
 * Returns 0; -2 when the inputs are unusable before training starts (config,
 * data, weights, a snapshot of another backbone); -1 for a failure during
 * training. err holds one line naming the file/record at fault. */
struct rn_train_env;
int rn_trainer_run(const rn_train_cfg *cfg, const struct rn_train_env *env, const rn_train_hooks *hooks, FILE *out,
                   rn_err *err);

#endif
