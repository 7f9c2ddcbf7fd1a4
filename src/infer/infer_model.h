/* rn_infer_model: the one assembly of an inference model, for every path that
 * runs RootNet forward only: predict, demo and the C API (rn_predictor,
 * infer/predict.h), predict over a set (infer/predict_set.h), test and the
 * per-epoch evaluation (infer/tester.h), forward and bench --mode infer.
 *
 *   rn_infer_cfg c = {.base = {.device = "cpu", .threads = 2}, .precision = RN_PREC_BF16, .fold = 1,
 *                     .batch = 16, .h = 256, .w = 256};
 *   rn_model m;
 *   if (rn_infer_model_open(&m, &params, &c, &err)) ...;   // "device 'x' is not built in", ...
 *   rn_model_forward(&m, images, k, 0);                      // eval-mode BN
 *   const float *coord = rn_model_coords(&m);                // (batch, 3), waits
 *   rn_model_destroy(&m);                                    // params stay the caller's
 */
#ifndef RN_INFER_INFER_MODEL_H
#define RN_INFER_INFER_MODEL_H

#include "core/status.h"
#include "nn/model.h"
#include "nn/params.h"
#include "nn/precision.h"

typedef struct rn_infer_cfg {
    rn_model_opts base;     /* where it runs: .device by name (NULL: the default) or an open .dev, .threads
                               (0: OpenMP's); bench adds its tuning's .tune, .graph, .pinned_inputs. compute,
                               act, inference, fold and grad_ready are set from the fields below */
    rn_precision precision; /* the policy (nn/precision.h): conv compute and activation storage */
    int fold;               /* 1: eval forwards only, BN folded into the convs, fused epilogues (nn/model.h) */
    int batch, h, w;        /* inputs (batch, 3, h, w), h and w multiples of 32 */
    const struct rn_calib *calib; /* int8: the conv inputs' ranges (nn/calib.h), borrowed for the call */
    rn_model_observe observe;     /* told each conv's input (rootnet calibrate), or fn NULL */
} rn_infer_cfg;

/* Builds m on p (borrowed; its device is the one c names, nn/model.h): forward only, in c's policy,
 * folded when c->fold, for c->batch x 3 x c->h x c->w inputs, with p's weights synced into it (sync
 * again with rn_model_sync_weights after p changes). 0, or -1 with one line in err (a device not
 * built in or not running the policy, a bad size); m is then not held. */
int rn_infer_model_open(rn_model *m, rn_params *p, const rn_infer_cfg *c, rn_err *err);

#endif
