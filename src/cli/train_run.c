/* rootnet train: the trainer on the tuning and the distribution, with its hook parts chained. */
#include "cli/train_run.h"

#include "train/assemble.h"
#include "train/epoch_eval.h"
#include "train/hook_chain.h"
#include "train/train_tuning.h"

int rn_train_run_parts(const rn_train_cfg *cfg, rn_dist *d, FILE *out, rn_err *err)
{
    rn_train_tuning tt;
    if (rn_train_tuning_setup(&tt, cfg, rn_dist_rank(d), out, err)) return -2;
    rn_train_env env = rn_train_env_make(&tt.t, d, rn_train_cfg_threads(cfg), cfg->sync_bn, cfg->bucket_mb);
    rn_epoch_eval ev;
    rn_epoch_eval_init(&ev, cfg, env.rank, out);
    rn_train_hooks tuning = rn_train_tuning_hooks(&tt), eval = rn_epoch_eval_hooks(&ev);
    rn_hook_chain ch;
    rn_hook_chain_init(&ch);
    rn_hook_chain_add(&ch, &tuning);
    rn_hook_chain_add(&ch, &eval);
    rn_train_hooks all = rn_hook_chain_hooks(&ch);
    int rc = rn_trainer_run(cfg, &env, &all, out, err);
    rn_epoch_eval_free(&ev);
    rn_train_tuning_free(&tt);
    return rc;
}
