/* rn_train_step: one training update, the loop body of `rootnet train`
 * (train/trainer.h), `rootnet step` and `rootnet bench`.
 *
 *   rn_train_hooks hk = {...};           // on_grads, span_begin, span_end (train/trainer.h); all optional
 *   rn_step_batch b = {images, k, target, vis, have_depth};
 *   double loss; int applied;
 *   if (rn_train_step(&m, &opt, &b, NULL, &hk, &loss, &applied, &err)) ...;
 *
 * In order, each inside a span of that name: "sync_weights" (p's weights to
 * the model's convs), "zero_grad", "forward" (train-mode BN), "backward";
 * then hk->on_grads (gradient all-reduce, loss-scale check: 1 skips the
 * update, -1 fails); a non-finite loss fails; "optimizer": Adam on the
 * model's device, unless skipped. Nothing is allocated.
 *
 * Emulated replicas (rootnet step --emulate-replicas R): r holds R batches'
 * worth of per-replica state. b then points to R batches; each replica runs
 * forward and backward alone from the BN running statistics before the step
 * (the step ends with replica 0's, as DDP keeps rank 0's), and the gradients
 * and losses are averaged, as an all-reduce of R ranks would. The state is
 * host memory: host copies of the device's (rn_params_download/upload), as
 * the distribution's reduce on a device without host memory.
 */
#ifndef RN_TRAIN_STEP_H
#define RN_TRAIN_STEP_H

#include "nn/model.h"
#include "optim/adam.h"
#include "train/trainer.h"

/* One batch of the model's size; host arrays (model.h passes them in place). */
typedef struct rn_step_batch {
    const float *images;     /* (N, 3, H, W) */
    const float *k;          /* (N) */
    const float *target;     /* (N, 3) */
    const float *vis;        /* (N) */
    const float *have_depth; /* (N) */
} rn_step_batch;

typedef struct rn_step_replicas {
    int n;           /* replicas (>= 2) */
    float *stats;    /* BN running statistics before the step */
    int64_t *nbt;
    float *gsum;     /* gradient sum */
    float *grad;     /* one replica's gradient */
} rn_step_replicas;

void rn_step_replicas_init(rn_step_replicas *r, const rn_params *p, int n);
void rn_step_replicas_free(rn_step_replicas *r);

/* One update of m's parameters (m->p) on b (r NULL: one batch; else r->n batches).
 * *loss: the (replica-averaged, then on_grads-adjusted) loss; *applied: 1 if Adam ran.
 * Returns 0, or -1 with err (on_grads failed, or the loss is not finite). */
int rn_train_step(rn_model *m, rn_adam *opt, const rn_step_batch *b, rn_step_replicas *r, const rn_train_hooks *hk,
                  double *loss, int *applied, rn_err *err);

#endif
