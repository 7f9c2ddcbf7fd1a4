/* Learning-rate scaling with the global batch.
 *
 *   rn_lr_rule r;
 *   if (rn_lr_rule_parse("linear", &r, &err)) ...;     // "none" | "linear"
 *   double lr = rn_lr_scaled(1e-3, r, 64);             // linear: 1e-3 * 64 / 32 = 2e-3
 */
#ifndef RN_OPTIM_LR_SCALE_H
#define RN_OPTIM_LR_SCALE_H

#include "core/status.h"

#define RN_LR_REFERENCE_BATCH 32 /* the authors' batch: lr is given for it */

typedef enum { RN_LR_NONE = 0, RN_LR_LINEAR = 1 } rn_lr_rule;

int rn_lr_rule_parse(const char *s, rn_lr_rule *out, rn_err *err);
/* linear: lr * global_batch / 32; none: lr. global_batch = per-rank batch x ranks. */
double rn_lr_scaled(double lr, rn_lr_rule rule, long global_batch);

#endif
