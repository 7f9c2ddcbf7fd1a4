/* rn_epoch_eval: test-set evaluation after each epoch of rootnet train (rank
 * 0, cfg.eval_epoch), as trainer hooks, keeping the best snapshot.
 *
 *   rn_epoch_eval ev;
 *   rn_epoch_eval_init(&ev, &cfg, env.rank, stdout);
 *   rn_train_hooks h = rn_epoch_eval_hooks(&ev);   // ctx = &ev; chain it (train/hook_chain.h)
 *   rn_trainer_run(&cfg, &env, &h, stdout, &err);
 *   rn_epoch_eval_free(&ev);
 *
 * on_start: rn_tester_create once over the trainer's weights (cfg.testset
 * under cfg.data_dir, GT boxes, cfg.input_size, batch 16, fp32 compute, the
 * result file into <output>/result/), and the best so far from
 * <output>/model_dump/best.json when resuming. on_epoch: rn_tester_run;
 * *metric = AP_root (MuPoTS) or MRPE in mm (Human36M, PW3D); the metric lines
 * on out; when the epoch beats the best (higher AP_root, lower MRPE;
 * rn_test_result.score; equal AP_root: lower MRPE), its snapshot is copied byte for byte to
 * model_dump/snapshot_best.safetensors and model_dump/best.json written
 * ({"epoch", "metric", "name", "score", "mrpe", "snapshot"}), both atomically.
 * log_values on the epoch_end line: "AP_root" and/or "MRPE", "best_epoch",
 * "best_metric". Inactive (no hooks run) when cfg.eval_epoch is 0 or on
 * ranks other than 0 (rank: the run's, train/assemble.h).
 */
#ifndef RN_TRAIN_EPOCH_EVAL_H
#define RN_TRAIN_EPOCH_EVAL_H

#include <stdio.h>

#include "infer/tester.h"
#include "train/config.h"
#include "train/trainer.h"

typedef struct rn_epoch_eval {
    const rn_train_cfg *cfg; /* borrowed */
    FILE *out;
    int active;
    rn_tester *tester;
    rn_test_result last;
    int have_last;
    int best_epoch;          /* -1: none yet */
    double best_score, best_metric, best_mrpe;
    char result_dir[RN_TRAIN_PATH + 16];
} rn_epoch_eval;

void rn_epoch_eval_init(rn_epoch_eval *ev, const rn_train_cfg *cfg, int rank, FILE *out);
rn_train_hooks rn_epoch_eval_hooks(rn_epoch_eval *ev);
void rn_epoch_eval_free(rn_epoch_eval *ev);

#endif
