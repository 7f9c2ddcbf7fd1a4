/* rootnet train: the trainer with its hook parts chained. */
#include "cli/train_run.h"

#include "train/epoch_eval.h"
#include "train/hook_chain.h"
#include "train/train_tuning.h"

int rn_train_run_parts(const rn_train_cfg *cfg, const rn_train_hooks *first, rn_train_dist *td, FILE *out,
                       rn_err *err)
{
    rn_train_tuning tt;
    if (rn_train_tuning_setup(&tt, cfg, out, err)) return -2;
    rn_epoch_eval ev;
    rn_epoch_eval_init(&ev, cfg, out);
    rn_train_hooks tuning = rn_train_tuning_hooks(&tt), eval = rn_epoch_eval_hooks(&ev);
    rn_hook_chain ch;
    rn_hook_chain_init(&ch);
    rn_hook_chain_add(&ch, first);
    rn_hook_chain_add(&ch, &tuning);
    rn_hook_chain_add(&ch, &eval);
    rn_train_hooks all = rn_hook_chain_hooks(&ch);
    rn_step_ctl ctl = rn_train_dist_ctl(td, tt.t.scaling ? &tt.t.scaler : NULL);
    int rc = rn_trainer_run(cfg, &all, &ctl, out, err);
    rn_epoch_eval_free(&ev);
    rn_train_tuning_free(&tt);
    return rc;
}
