/* rn_loss_scaler: static or dynamic loss scaling, with the overflow check
 * fused into the one pass that unscales the flat gradient buffer.
 *
 *   rn_loss_scaler ls = rn_loss_scaler_dynamic();   // or rn_loss_scaler_static(128)
 *   m.loss_scale = ls.scale;                          // the model scales dL/dcoord
 *   rn_model_zero_grad(&m); forward; backward;
 *   rn_grad_unscale_check(m.dev, p.grad, p.n_param, 1.0f / ls.scale, m.finite);   // no wait
 *   rn_adam_step(&opt, m.dev, p.param, p.grad, p.m, p.v, p.n_param, m.finite);   // skipped on the device if 0
 *   rn_model_read_status(&m, &loss, &finite);          // the step's one wait
 *   if (!rn_loss_scaler_update(&ls, finite)) rn_adam_unstep(&opt);   // overflow: nothing was written
 *
 * The step is two phases so that no weight is written before the check is
 * complete: phase 1 is one pass over the gradients that multiplies each by
 * 1/scale and accumulates g*0 (0 for finite g, NaN for Inf or NaN) into a flag
 * in device memory; phase 2 is Adam, which the device runs only if the flag
 * says every gradient was finite. The host reads the flag with the loss
 * (train/step.c), so the check costs no wait.
 *
 * Dynamic: start at 2^16 (or INIT); an overflow halves the scale (not below min) and
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
/* "dynamic", "dynamic:INIT" or "dynamic:INIT:WINDOW" (PyTorch GradScaler's init_scale and growth_interval;
 * an INIT above 2^24 raises the maximum to it), or a positive finite number ("128", "65536"); else -1, one line. */
int rn_loss_scale_parse(const char *s, rn_loss_scaler *out, rn_err *err);

/* Phase 1: grad *= inv_scale (skipped when inv_scale == 1); *finite (dev's memory) = 1 if every
 * element of grad was finite, 0 otherwise. One pass on dev (its unscale_check op), no wait. */
void rn_grad_unscale_check(rn_device *dev, float *grad /* (n) */, size_t n, float inv_scale, int *finite);
/* Records one step's outcome and updates the scale; returns finite. */
int rn_loss_scaler_update(rn_loss_scaler *s, int finite);
/* A resumed run (train/snapshot.h keeps the scaler): the counts (steps, skipped) from saved; when both
 * are dynamic also the scale (held to s's bounds) and the clean-step count (a static scale stays the
 * one configured). Returns 1 when the scale was taken over, 0 otherwise. */
int rn_loss_scaler_resume(rn_loss_scaler *s, const rn_loss_scaler *saved);
/* One log line: "loss scale S (dynamic), skipped K of N steps". */
void rn_loss_scaler_log(const rn_loss_scaler *s, FILE *f);

#endif
