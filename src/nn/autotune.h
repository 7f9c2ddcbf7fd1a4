/* rn_autotune: per-shape choice of a conv algorithm by timing, cached in a
 * text file and reused by later runs.
 *
 *   rn_autotune t;
 *   if (rn_autotune_open(&t, "build/autotune.txt", &err)) ...;  // loads the cache if present
 *   rn_model_opts o = {.threads = 2, .tune = &t};                // model create asks per conv
 *   rn_model_create(&m, &p, N, H, W, &o, &err);
 *   rn_autotune_save(&t, &err);                                  // atomic; only if something new
 *   rn_autotune_close(&t);
 *
 * Candidates today: oneDNN direct vs Winograd for fp32 3x3 stride-1 Conv2d
 * (other shapes have one candidate and are neither timed nor cached). Each
 * candidate is built in a temporary device and timed over its forward and,
 * unless the conv is forward-only, both backward directions (best of a few
 * runs); a candidate the device cannot build is skipped.
 *
 * File: a first line "# rootnet autotune v1", then one line per shape:
 *   <key> <algo> <ms direct> <ms winograd>      (ms -1: candidate unavailable)
 * where key spells every field of rn_conv_shape. A malformed line is an
 * error naming the file and line; delete the file to re-tune.
 */
#ifndef RN_NN_AUTOTUNE_H
#define RN_NN_AUTOTUNE_H

#include "core/status.h"
#include "nn/device.h"

#define RN_TUNE_KEY_MAX 128

typedef struct rn_tune_entry {
    char key[RN_TUNE_KEY_MAX];
    int algo;
    double ms[RN_ALGO_COUNT];
} rn_tune_entry;

typedef struct rn_autotune {
    char *path;          /* NULL: in memory only */
    rn_tune_entry *e;
    int n, cap;
    int timed, reused;   /* shapes timed in this run, shapes taken from the cache */
    int dirty;
    int iters;           /* timed runs per candidate (3) */
} rn_autotune;

/* path may be NULL (no file). A missing file is an empty cache. */
int rn_autotune_open(rn_autotune *t, const char *path, rn_err *err);
void rn_autotune_close(rn_autotune *t);
/* Sets s->algo from the cache, or by timing the candidates on a fresh device
 * like dev (same name and threads) and caches it. Keys of devices other than
 * "cpu" start with the device's name. */
int rn_autotune_choose(rn_autotune *t, rn_device *dev, rn_conv_shape *s, rn_err *err);
/* Writes the cache atomically if it changed (no-op without a path). */
int rn_autotune_save(rn_autotune *t, rn_err *err);
const char *rn_conv_algo_name(rn_conv_algo a);

#endif
