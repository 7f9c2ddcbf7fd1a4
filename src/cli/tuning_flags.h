/* The flags of train/tuning.h, for any command's flag table:
 *
 *   rn_tuning_flags tf = {0};
 *   char prec[256]; rn_cli_precision_help(prec, sizeof prec);      // the precisions a built-in device runs
 *   rn_flag flags[] = {RN_FLAG_STR("--weights", &w, "..."), RN_TUNING_FLAGS(&tf, prec), {0}};
 */
#ifndef RN_CLI_TUNING_FLAGS_H
#define RN_CLI_TUNING_FLAGS_H

#include "cli/args.h"
#include "train/tuning.h"

#include <stddef.h>

/* The --precision help: the policies (nn/precision.h) that some device built
 * in runs, as its supports op answers, with a note each:
 * "fp32 (default) | bf16 (convs in bf16) | bf16-o2 (+ bf16 activations)"
 * where no device takes fp16. Truncated to len. */
void rn_cli_precision_help(char *buf, size_t len);

#define RN_TUNING_FLAGS(tf, precision_help)                                                                    \
    RN_FLAG_STR("--device", &(tf)->device, "the compute device: cpu (default), ref, cuda or cuda:N, those built in (rootnet --version lists them)"), \
        RN_FLAG_STR("--precision", &(tf)->precision, (precision_help)),                                       \
        RN_FLAG_STR("--loss-scale", &(tf)->loss_scale, "N (static) | dynamic[:INIT[:WINDOW]] (default: none; a dynamic one for a precision that needs it)"), \
        RN_FLAG_STR("--profile", &(tf)->profile, "write a Chrome-trace JSON here and print a per-layer table"), \
        RN_FLAG_STR("--autotune", &(tf)->autotune, "conv algorithm cache file: time per shape once, reuse"),  \
        RN_FLAG_STR("--lr-scale", &(tf)->lr_scale, "none (default) | linear: lr x global batch / 32"),        \
        RN_FLAG_BOOL("--bind-cores", &(tf)->bind_cores, "pin compute thread i to the i-th allowed core"),       \
        RN_FLAG_BOOL("--graph", &(tf)->graph, "each training step and inference batch as one captured device graph (cuda; off by default: unmeasured on a GPU)"), \
        RN_FLAG_BOOL("--no-prefetch", &(tf)->no_prefetch, "the next batch uploaded beside each step (cuda, from pinned memory; one batch of inputs more device memory): off"), \
        RN_FLAG_BOOL("--cudnn-benchmark", &(tf)->cudnn_benchmark, "cuda: each conv's fastest measured algorithm, deterministic or not (PyTorch's cudnn.benchmark); breaks bit-identical resume"), \
        RN_FLAG_RANGE("--workspace-mb", &(tf)->workspace_mb, 0, 1048576, "cuda: cap on cuDNN's workspace in MiB (1024)")

#endif
