/* rn_train_tuning: rn_tuning (train/tuning.h: precision, loss scale,
 * profiler, autotune cache, core binding) as rootnet train's hooks.
 *
 *   rn_train_tuning tt;
 *   if (rn_train_tuning_setup(&tt, &cfg, rank, stdout, &err)) ...;  // bad precision, unreadable cache...
 *   rn_train_env env = rn_train_env_make(&tt.t, d, ...);   // the step's device, precision, scaler (train/assemble.h)
 *   rn_train_hooks h = rn_train_tuning_hooks(&tt);          // ctx = &tt
 *   rn_trainer_run(&cfg, &env, &h, stdout, &err);            // or chained (train/hook_chain.h)
 *   rn_train_tuning_free(&tt);
 *
 * The tuning itself (device, precision, autotune cache, profiler, loss
 * scaler, lr rule from cfg's lr-scale) goes into the step through
 * rn_train_assemble. The hooks: spans and per-layer spans into
 * the profile, one profile step per iteration (the trainer's "data" and the
 * step's spans, train/step.h; its per-epoch "snapshot" spans are left out);
 * log_values -> "loss_scale" and "skipped" (steps skipped so far) on every
 * step line when scaling; on_end -> autotune cache saved, the per-layer
 * table, the loss-scale line and the trace written (rank 0; other ranks
 * neither profile nor save the cache).
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

/* Resolves c's device, precision, loss-scale, lr-scale, profile (rank 0 only), autotune and
 * bind-cores; out may be NULL. Returns 0, or -1 with one line (then nothing to free). */
int rn_train_tuning_setup(rn_train_tuning *tt, const rn_train_cfg *c, int rank, FILE *out, rn_err *err);
rn_train_hooks rn_train_tuning_hooks(rn_train_tuning *tt);
void rn_train_tuning_free(rn_train_tuning *tt);

#endif
