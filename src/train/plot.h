/* rn_plot: the training curve as a PNG (libpng), drawn with plain lines.
 *
 *   rn_plot_train_png("out/log/loss.png", st.loss, st.iter, itr_per_epoch, ap, n_epochs, &err);
 *
 * Layout: 900 x 420 pixels, white. Plot area x = iterations (0 .. n), y =
 * log10(loss) from the smallest to the largest loss. Per-iteration loss in
 * light blue, its running mean over max(1, n/50) iterations in dark blue,
 * epoch boundaries in grey, each epoch's mean loss as a red square at the
 * epoch's end, and (if metric != NULL) a per-epoch metric in 0..1 (e.g.
 * AP_root) as green squares on a linear axis (bottom 0, top 1).
 * No text: the JSONL log holds the numbers.
 */
#ifndef RN_TRAIN_PLOT_H
#define RN_TRAIN_PLOT_H

#include <stdint.h>

#include "core/status.h"

enum { RN_PLOT_W = 900, RN_PLOT_H = 420, RN_PLOT_MARGIN = 30 };

int rn_plot_train_png(const char *path, const float *loss /* (n) */, int64_t n, int itr_per_epoch,
                      const double *metric /* (n_metric) or NULL */, int n_metric, rn_err *err);

#endif
