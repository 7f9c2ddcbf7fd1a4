/* rn_hook_chain: several rn_train_hooks (train/trainer.h) run as one, so that
 * independent parts (precision/profiling, per-epoch evaluation) each keep
 * their own hooks and context.
 *
 *   rn_hook_chain ch;
 *   rn_hook_chain_init(&ch);
 *   rn_hook_chain_add(&ch, &tuning_hooks);
 *   rn_hook_chain_add(&ch, &eval_hooks);
 *   rn_train_hooks all = rn_hook_chain_hooks(&ch);   // ctx = &ch: ch must outlive the run
 *   rn_trainer_run(&cfg, &env, &all, stdout, &err);
 *
 * Each hook calls the parts in the order they were added (span_end and on_end
 * in reverse, so that spans nest). The first part that fails (-1) stops the
 * hook with its err. on_epoch: every part gets the same
 * *metric and may set it (the last writer wins). log_values: the parts' pairs
 * concatenated.
 */
#ifndef RN_TRAIN_HOOK_CHAIN_H
#define RN_TRAIN_HOOK_CHAIN_H

#include "train/trainer.h"

#define RN_HOOK_CHAIN_MAX 8

typedef struct rn_hook_chain {
    rn_train_hooks part[RN_HOOK_CHAIN_MAX];
    int n;
} rn_hook_chain;

void rn_hook_chain_init(rn_hook_chain *ch);
/* Copies *h in (NULL: nothing). Asserts fewer than RN_HOOK_CHAIN_MAX parts. */
void rn_hook_chain_add(rn_hook_chain *ch, const rn_train_hooks *h);
/* Hooks that call every part; ctx borrows ch. */
rn_train_hooks rn_hook_chain_hooks(rn_hook_chain *ch);

#endif
