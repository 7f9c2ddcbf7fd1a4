/* rootnet train's run with its optional parts as chained hooks
 * (train/hook_chain.h): `first` (e.g. MPI's all-reduce; may be NULL), then the
 * precision/profiling toolkit (train/train_tuning.h), then per-epoch
 * evaluation (train/epoch_eval.h). With td (the data-parallel part whose hooks
 * `first` are; may be NULL), its "allreduce" span goes to the whole chain.
 *
 *   int r = rn_train_run_parts(&cfg, NULL, NULL, stdout, &err);   // rn_trainer_run's codes
 */
#ifndef RN_CLI_TRAIN_RUN_H
#define RN_CLI_TRAIN_RUN_H

#include <stdio.h>

#include "train/train_dist.h"
#include "train/trainer.h"

/* Returns rn_trainer_run's 0 / -1 / -2; -2 also when a switch is unusable
 * (precision not on this device, device not built in, unreadable autotune cache, bind failure). */
int rn_train_run_parts(const rn_train_cfg *cfg, const rn_train_hooks *first, rn_train_dist *td, FILE *out,
                       rn_err *err);

#endif
