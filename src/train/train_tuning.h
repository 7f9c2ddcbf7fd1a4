/* rn_train_tuning: rn_tuning (train/tuning.h: precision, loss scale,
 * profiler, autotune cache, core binding) as rootnet train's hooks.
 *
 *   rn_train_tuning tt;
 *   if (rn_train_tuning_setup(&tt, &cfg, stdout, &err)) ...;  // bad precision, unreadable cache...
 *   rn_train_hooks h = rn_train_tuning_hooks(&tt);          // ctx = &tt
 *   rn_step_ctl ctl = {.scaler = tt.t.scaling ? &tt.t.scaler : NULL};   // the step's loss scaling
 *   rn_trainer_run(&cfg, &h, &ctl, stdout, &err);            // or chained (train/hook_chain.h)
 *   rn_train_tuning_free(&tt);
 *
 * The hooks: model_opts -> the precision's compute type and the autotune
 * cache; model_created -> profiler attached; spans and per-layer spans into
 * the profile, one profile step per iteration (the trainer's "data" and the
 * step's spans, train/step.h; its per-epoch "snapshot" spans are left out);
 * log_values -> "loss_scale" and "skipped" (steps skipped so far) on every
 * step line when scaling; on_end -> autotune cache saved, the per-layer
 * table, the loss-scale line and the trace written (rank 0; other ranks
 * neither profile nor save the cache). The lr scale is rn_train_lr's
 * (train/config.h), not a hook.
 */
#ifndef RN_TRAIN_TRAIN_TUNING_H
#define RN_TRAIN_TRAIN_TUNING_H

#include <stdio.h>

#include "train/config.h"
#include "train/trainer.h"
#include "train/tuning.h"

typedef struct rn_train_tuning {
    rn_tuning t;
    FILE *out; /* the table and the scale line on rank 0; NULL elsewhere */
    int main_rank;
} rn_train_tuning;

/* Resolves c's precision, loss-scale, profile, autotune and bind-cores; out
 * may be NULL. Returns 0, or -1 with one line (then nothing to free). */
int rn_train_tuning_setup(rn_train_tuning *tt, const rn_train_cfg *c, FILE *out, rn_err *err);
rn_train_hooks rn_train_tuning_hooks(rn_train_tuning *tt);
void rn_train_tuning_free(rn_train_tuning *tt);

#endif
