#include "optim/lr_scale.h"

#include <string.h>

int rn_lr_rule_parse(const char *s, rn_lr_rule *out, rn_err *err)
{
    if (s && !strcmp(s, "none")) *out = RN_LR_NONE;
    else if (s && !strcmp(s, "linear")) *out = RN_LR_LINEAR;
    else return rn_err_set(err, "lr scale '%s': expected none or linear", s ? s : "(null)");
    return 0;
}

double rn_lr_scaled(double lr, rn_lr_rule rule, long global_batch)
{
    return rule == RN_LR_LINEAR ? lr * (double)global_batch / RN_LR_REFERENCE_BATCH : lr;
}
