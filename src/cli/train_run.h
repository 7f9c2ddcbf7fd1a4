/* rootnet train's run: the tuning (train/train_tuning.h) and the distribution d
 * (NULL: one process) make the step's environment (train/assemble.h); the
 * tuning's hooks and per-epoch evaluation (train/epoch_eval.h) are chained
 * (train/hook_chain.h).
 *
 *   int r = rn_train_run_parts(&cfg, NULL, stdout, &err);   // rn_trainer_run's codes
 */
#ifndef RN_CLI_TRAIN_RUN_H
#define RN_CLI_TRAIN_RUN_H

#include <stdio.h>

#include "dist/dist.h"
#include "train/trainer.h"

/* Returns rn_trainer_run's 0 / -1 / -2; -2 also when a switch is unusable
 * (precision not on this device, device not built in, unreadable autotune cache, bind failure). */
int rn_train_run_parts(const rn_train_cfg *cfg, rn_dist *d, FILE *out, rn_err *err);

#endif
