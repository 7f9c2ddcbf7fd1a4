/* The cheap checks of the inference commands' shared flags (cli/eval_flags.h). */
#include "cli/eval_flags.h"

#include "infer/predict.h"
#include "nn/precision.h"
#include "nn/run_settings.h"

int rn_eval_flags_check(const rn_eval_flags *ev, rn_compute *compute, rn_err *err)
{
    if (ev->input_size && !rn_input_size_ok(ev->input_size))
        return rn_err_set(err, "--input-size %ld: must be a multiple of 32 in 32..2048", ev->input_size);
    *compute = RN_COMPUTE_F32;
    if (ev->precision && rn_predict_parse_precision(compute, ev->precision, err)) return -1;
    rn_precision id = *compute == RN_COMPUTE_BF16 ? RN_PREC_BF16 : RN_PREC_FP32;
    return rn_policy_check_device(rn_policy_get(id), ev->device, err);
}
