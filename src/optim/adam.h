/* rn_adam: Adam exactly as PyTorch's torch.optim.Adam (no weight decay, no
 * amsgrad), fused into one pass over ONE flat parameter buffer, ONE gradient
 * buffer and one buffer per moment, run by a device (nn/device.h's adam op)
 * on its memory. The step-dependent scalars (the schedule) are read by the
 * device from its own memory, so that a captured step (a graph) replays with
 * the current step's values:
 *
 *   rn_adam opt = rn_adam_default(1e-3);
 *   rn_adam_step(&opt, dev, p.param, p.grad, p.m, p.v, p.n_param, sched, NULL);   // opt.step++ inside
 *
 * or, split around a graph (train/step.c): rn_adam_next (host: step++ and the
 * schedule), an upload of the schedule before the graph, rn_adam_apply inside it.
 */
#ifndef RN_OPTIM_ADAM_H
#define RN_OPTIM_ADAM_H

#include <stddef.h>

#include "nn/device.h"

typedef struct rn_adam {
    double lr, beta1, beta2, eps;
    long step; /* completed steps; bias correction uses step + 1 on the next update */
} rn_adam;

rn_adam rn_adam_default(double lr);
/* The next update: opt->step++, and its schedule (rn_adam_args.sched) into sched:
 * lr / (1 - beta1^step), sqrt(1 - beta2^step), in double. */
void rn_adam_next(rn_adam *opt, double sched[2]);
/* Issues the update of n parameters on dev, which reads its schedule from sched (dev's memory,
 * 2 doubles) when it runs. finite: NULL, or dev's flag from unscale_check (optim/loss_scale.h):
 * the device skips the update when it holds 0, and the caller, once it has read the flag, undoes
 * opt->step with rn_adam_unstep. */
void rn_adam_apply(const rn_adam *opt, rn_device *dev, float *param /* (n) */, const float *grad /* (n) */,
                   float *m /* (n) */, float *v /* (n) */, size_t n, const double *sched /* device (2) */,
                   const int *finite /* device (1) */);
/* rn_adam_next, its schedule uploaded into sched, then rn_adam_apply. */
void rn_adam_step(rn_adam *opt, rn_device *dev, float *param /* (n) */, const float *grad /* (n) */,
                  float *m /* (n) */, float *v /* (n) */, size_t n, double *sched /* device (2) */,
                  const int *finite /* device (1) */);
/* Forgets the last rn_adam_next (its update was skipped on the device). */
void rn_adam_unstep(rn_adam *opt);

#endif
