/* rn_loss_scaler: static or dynamic loss scaling, with the overflow check
 * fused into the one pass that unscales the flat gradient buffer.
 *
 *   rn_loss_scaler ls = rn_loss_scaler_dynamic();   // or rn_loss_scaler_static(128)
 *   m.loss_scale = ls.scale;                          // the model scales dL/dcoord
 *   rn_model_zero_grad(&m); forward; backward;
 *   int applied = rn_scaled_adam_step(&ls, &opt, m.dev, p.param, p.grad, p.m, p.v, p.n_param);
 *   // applied == 0: overflow, step skipped: weights, moments and opt.step untouched
 *
 * The step is two phases so that no weight is written before the check is
 * complete: phase 1 is one pass over the gradients that multiplies each by
 * 1/scale and accumulates g*0 (0 for finite g, NaN for Inf or NaN); phase 2
 * is Adam, run only if phase 1 found every gradient finite.
 *
 * Dynamic: start at 2^16; an overflow halves the scale (not below min) and
 * skips the step; `window` consecutive clean steps double it (not above
 * max). Static: the scale never changes; an overflow still skips the step.
 * A scale of 1 with a static scaler skips phase 1's multiply but still checks.
 */
#ifndef RN_OPTIM_LOSS_SCALE_H
#define RN_OPTIM_LOSS_SCALE_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"
#include "optim/adam.h"

typedef struct rn_loss_scaler {
    int dynamic;
    float scale;
    float min_scale, max_scale; /* dynamic bounds (1 and 2^24 by default) */
    long window;                /* clean steps before the scale doubles (2000) */
    long clean;                 /* clean steps since the last change */
    long steps, skipped;        /* steps seen, steps skipped */
    int last_skipped;           /* the last step was skipped */
} rn_loss_scaler;

rn_loss_scaler rn_loss_scaler_static(float scale);
rn_loss_scaler rn_loss_scaler_dynamic(void);
/* "dynamic" or a positive finite number ("128", "65536"); else -1, one line. */
int rn_loss_scale_parse(const char *s, rn_loss_scaler *out, rn_err *err);

/* Phase 1: grad *= inv_scale (skipped when inv_scale == 1); returns 1 if every
 * element of grad was finite, 0 otherwise. One pass on dev (its unscale_check op). */
int rn_grad_unscale_check(rn_device *dev, float *grad /* (n) */, size_t n, float inv_scale);
/* Records one step's outcome and updates the scale; returns finite. */
int rn_loss_scaler_update(rn_loss_scaler *s, int finite);
/* Phase 1 + the update of the scale + (only if finite) Adam. Returns 1 if
 * the step was applied, 0 if it was skipped. */
int rn_scaled_adam_step(rn_loss_scaler *s, rn_adam *opt, rn_device *dev, float *param /* (n) */, float *grad /* (n) */,
                        float *m /* (n) */, float *v /* (n) */, size_t n);
/* One log line: "loss scale S (dynamic), skipped K of N steps". */
void rn_loss_scaler_log(const rn_loss_scaler *s, FILE *f);

#endif
