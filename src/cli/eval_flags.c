/* The inference commands' shared flags (cli/eval_flags.h): their cheap checks, and the nets' loading. */
#include "cli/eval_flags.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu_isa.h"
#include "nn/calib.h"
#include "cli/exit.h"
#include "nn/net.h"
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

int rn_eval_calib_load(const rn_eval_flags *ev, const char *snapshot, rn_precision *prec, rn_calib *cal,
                       const rn_calib **use, rn_err *err)
{
    char path[4200];
    *use = NULL;
    const char *file = ev->calib ? ev->calib : rn_calib_path(path, sizeof path, snapshot);
    int is_auto = ev->precision && !strcmp(ev->precision, "auto");
    if (*prec != RN_PREC_INT8 && !is_auto) return 0;
    if (is_auto) {
        rn_cpu_isa isa;
        rn_cpu_isa_detect(&isa);
        const char *dev = ev->device ? ev->device : rn_device_default();
        if (strcmp(dev, "cpu") || !rn_cpu_isa_native_int8(&isa) || access(file, R_OK)) return 0;
        fprintf(stderr, "rootnet: --precision auto: int8 (the CPU has int8 dot products; calibration %s)\n", file);
        *prec = RN_PREC_INT8;
    }
    if (rn_calib_load(cal, file, err)) {
        if (!ev->calib && access(file, F_OK))
            return rn_err_set(err, "--precision int8: no calibration %s beside the snapshot: make one with rootnet "
                                   "calibrate, or name one with --calib", file);
        return -1;
    }
    *use = cal;
    return 0;
}

int rn_eval_load_nets(rn_params *p, rn_params *pp, rn_run_settings *s, const char *snapshot, const char *pose_snapshot,
                      const rn_eval_flags *ev, rn_err *err)
{
    rn_run_settings ps;
    int lrc = rn_weights_load_eval(p, s, snapshot, (int)ev->backbone, (int)ev->input_size, ev->fast_decode, err);
    if (lrc) return lrc == RN_WEIGHTS_EMERGE ? RN_EXIT_USAGE : RN_EXIT_FAIL;
    if (p->net->skeleton) {
        rn_err_set(err, "--snapshot %s: a %s; --snapshot takes a RootNet (a PoseNet goes to --pose-snapshot)",
                   snapshot, p->net->title);
        rn_params_free(p);
        return RN_EXIT_USAGE;
    }
    if (!pose_snapshot) return 0;
    lrc = rn_weights_load_eval(pp, &ps, pose_snapshot, 0, s->input_size, ev->fast_decode, err);
    const char *bad = lrc                           ? NULL
                      : !pp->net->skeleton          ? "a RootNet; --pose-snapshot takes a PoseNet"
                      : ps.input_size != s->input_size ? "trained at another input size than the RootNet"
                                                    : NULL;
    if (bad) rn_err_set(err, "--pose-snapshot %s: %s", pose_snapshot, bad);
    if (bad && !lrc) rn_params_free(pp);
    if (lrc || bad) rn_params_free(p);
    return lrc == RN_WEIGHTS_EMERGE || bad ? RN_EXIT_USAGE : lrc ? RN_EXIT_FAIL : 0;
}
