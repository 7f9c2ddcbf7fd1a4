/* rn_train_step: one training update, the loop body of `rootnet train`
 * (train/trainer.h), `rootnet step` and `rootnet bench`. It reads top to
 * bottom, as llm.c's loop does:
 *
 *   stage          the batch and Adam's schedule (step++) onto the device
 *   sync_weights   p's weights to the model's convs
 *   zero_grad      p.grad = 0
 *   forward        train-mode BN
 *   backward       the loss (kept on the device) and p.grad
 *   allreduce      with ctl->dist: p.grad = its mean over ranks (buckets started in backward)
 *   optimizer      with ctl->scaler: unscale + inf/NaN check into a device flag;
 *                  Adam, which the device skips when the flag says overflow
 *   next           with ctl->next: the next batch's upload (rn_model_prefetch) beside the
 *                  ops above, into the model's other input set
 *   loss_read      the step's ONE wait: the loss and the flag in one download;
 *                  then the scale update (an overflow undoes Adam's step count),
 *                  with dist the loss's mean over ranks and (ctl->bcast_stats)
 *                  rank 0's BN running statistics
 *
 * The parts from sync_weights to optimizer are device ops only: with the
 * model's opts.graph on a device with graphs, they run as one graph, captured
 * on the second step and replayed after (again when the loss scale changes;
 * not with replicas or dist), one graph per input set of the model. Each part runs inside a span of that name (hk->span_begin/span_end; hooks
 * serve logging only). A non-finite loss fails. Nothing is allocated. Without
 * distribution the step waits for the device exactly once (tests/test_device_guard.c
 * counts it on ref-guard).
 *
 *   rn_step_ctl ctl = {.scaler = &ls};     // all optional
 *   rn_step_batch b = {images, k, target, vis, have_depth};
 *   double loss; int applied;
 *   if (rn_train_step(&m, &opt, &b, NULL, &ctl, &hk, &loss, &applied, &err)) ...;
 *
 * Emulated replicas (rootnet step --emulate-replicas R): r holds R batches'
 * worth of per-replica state. b then points to R batches; each replica runs
 * forward and backward alone from the BN running statistics before the step
 * (the step ends with replica 0's, as DDP keeps rank 0's), and the gradients
 * and losses are averaged, as an all-reduce of R ranks would. The state is
 * host memory: host copies of the device's (rn_params_download/upload), as
 * the distribution's reduce on a device without host memory (this mode waits
 * per replica).
 */
#ifndef RN_TRAIN_STEP_H
#define RN_TRAIN_STEP_H

#include "dist/dist.h"
#include "nn/model.h"
#include "optim/adam.h"
#include "optim/loss_scale.h"
#include "train/trainer.h"

/* Called once a step's device ops are issued and before its wait, so that the next batch's upload
 * (rn_model_prefetch) runs beside them; 0, or -1 with err (the step then fails). */
typedef struct rn_step_next {
    int (*fn)(void *ctx, rn_err *err);
    void *ctx;
} rn_step_next;

/* The parts of a step besides the model and Adam; each NULL / 0 when unused. */
typedef struct rn_step_ctl {
    rn_dist *dist;          /* the gradient all-reduce and the loss's mean over ranks */
    int bcast_stats;        /* with dist: rank 0's BN running statistics to every rank (no SyncBN) */
    rn_loss_scaler *scaler; /* loss scaling: m->loss_scale follows it; overflows skip the update */
    rn_step_next next;      /* the next batch's upload beside this step's ops (not with replicas) */
} rn_step_ctl;

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

/* One update of m's parameters (m->p) on b (r NULL: one batch; else r->n batches); ctl and hk
 * may be NULL. *loss: the (replica-averaged, rank-averaged) loss; *applied: 1 if Adam's update
 * was applied. Returns 0, or -1 with err (a collective failed, or the loss is not finite). */
int rn_train_step(rn_model *m, rn_adam *opt, const rn_step_batch *b, rn_step_replicas *r, const rn_step_ctl *ctl,
                  const rn_train_hooks *hk, double *loss, int *applied, rn_err *err);

#endif
