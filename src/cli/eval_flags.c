/* The cheap checks of the inference commands' shared flags (cli/eval_flags.h). */
#include "cli/eval_flags.h"

#include "nn/precision.h"
#include "nn/run_settings.h"

int rn_eval_flags_check(const rn_eval_flags *ev, rn_precision *prec, rn_err *err)
{
    if (ev->input_size && !rn_input_size_ok(ev->input_size))
        return rn_err_set(err, "--input-size %ld: must be a multiple of 32 in 32..2048", ev->input_size);
    if (rn_precision_choose(ev->precision, RN_PREC_INFER, ev->device, prec, err)) return -1;
    if (rn_policy_check_device(rn_policy_get(*prec), ev->device, err)) return -1;
    rn_policy_say_emulated(rn_policy_get(*prec), ev->device);
    return 0;
}
