/* rn_adam: Adam exactly as PyTorch's torch.optim.Adam (no weight decay, no
 * amsgrad), fused into one pass over ONE flat parameter buffer, ONE gradient
 * buffer and one buffer per moment, run by a device (nn/device.h's adam op)
 * on its memory.
 *
 *   rn_adam opt = rn_adam_default(1e-3);
 *   rn_adam_step(&opt, dev, p.param, p.grad, p.m, p.v, p.n_param, NULL);   // opt.step++ inside
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
/* One update of n parameters; every buffer is dev's memory. finite: NULL, or dev's flag from
 * unscale_check (optim/loss_scale.h): the device skips the update when it holds 0, and the
 * caller, once it has read the flag, undoes opt->step with rn_adam_unstep. */
void rn_adam_step(rn_adam *opt, rn_device *dev, float *param /* (n) */, const float *grad /* (n) */,
                  float *m /* (n) */, float *v /* (n) */, size_t n, const int *finite /* device (1) */);
/* Forgets the last rn_adam_step (its update was skipped on the device). */
void rn_adam_unstep(rn_adam *opt);

#endif
