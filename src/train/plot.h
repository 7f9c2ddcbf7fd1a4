/* rn_plot: the training curve log/loss.png, drawn with cairo (viz/canvas.h).
 *
 *   rn_plot_train_in in = {.loss = st.loss, .n = st.iter, .itr_per_epoch = ipe,
 *                          .metric = ap, .n_metric = n_epochs, .metric_name = "AP_root",
 *                          .lr = lr_per_epoch, .n_lr = n_epochs};
 *   if (rn_plot_train_png("out/log/loss.png", &in, &err)) ...
 *
 * RN_PLOT_W x RN_PLOT_H pixels, white. x: iteration (0 .. n), ticked, with
 * epoch boundaries as light grey lines numbered along the top. Left axis:
 * loss on a log scale with ticks and values: each iteration's loss (light
 * blue), its running mean over n/50 iterations (at least min(5, n/4), at
 * least 1; dark blue, RGB 20, 40, 160), each epoch's mean loss (red squares). Right axis, its own scale: the
 * per-epoch metric (green diamonds joined by a line; 0..1 when it lies there,
 * e.g. AP_root, else its own range, e.g. MRPE in mm), when any is finite.
 * Learning-rate drops (lr[e] < lr[e-1]) as dashed orange lines at the start
 * of epoch e, labelled with the new rate. A legend names every series drawn.
 */
#ifndef RN_TRAIN_PLOT_H
#define RN_TRAIN_PLOT_H

#include <stdint.h>

#include "core/status.h"

enum { RN_PLOT_W = 1000, RN_PLOT_H = 500 };

typedef struct rn_plot_train_in {
    const float *loss;       /* (n) per-iteration loss */
    int64_t n;
    int itr_per_epoch;
    const double *metric;    /* (n_metric) per-epoch metric, NAN for none; or NULL */
    int n_metric;
    const char *metric_name; /* right axis label, e.g. "AP_root (MuPoTS)"; NULL: "metric" */
    const double *lr;        /* (n_lr) learning rate per epoch; or NULL */
    int n_lr;
} rn_plot_train_in;

int rn_plot_train_png(const char *path, const rn_plot_train_in *in, rn_err *err);

#endif
