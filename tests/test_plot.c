/* log/loss.png (train/plot.h): the learning-rate drop drawn at its epoch's
 * column and nowhere else, the metric's right axis only when a metric is
 * finite, and edge cases (no iterations, one, non-finite losses, metrics
 * outside 0..1) drawn without failing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "data/image/image.h"
#include "train/plot.h"

static const uint8_t ORANGE[3] = {230, 120, 0}, GREEN[3] = {20, 160, 40};

static int column_count(const rn_image *im, int x, const uint8_t c[3])
{
    int n = 0;
    for (int y = 0; y < im->h; y++) n += !memcmp(im->px + im->stride * (size_t)y + 3 * (size_t)x, c, 3);
    return n;
}

static int count(const rn_image *im, const uint8_t c[3])
{
    int n = 0;
    for (int x = 0; x < im->w; x++) n += column_count(im, x, c);
    return n;
}

/* Plots in, reads it back into im. */
static int plot(rn_image *im, rn_bytes *scratch, const rn_plot_train_in *in)
{
    char path[] = "/tmp/rn_test_plot_XXXXXX.png";
    int fd = mkstemps(path, 4);
    if (fd < 0) return -1;
    close(fd);
    rn_err err = {{0}};
    int rc = rn_plot_train_png(path, in, &err) || rn_image_load(im, scratch, path, NULL, &err);
    RN_CHECK(rc == 0, "%s", err.msg);
    unlink(path);
    return rc;
}

int main(void)
{
    enum { N = 100, IPE = 20 };
    float loss[N];
    for (int i = 0; i < N; i++) loss[i] = 10.0f / (1.0f + 0.1f * (float)i);
    double lr[5] = {1e-3, 1e-3, 1e-3, 1e-4, 1e-4}, ap[5] = {0.1, 0.2, NAN, 0.4, 0.5};
    rn_image im = {0};
    rn_bytes scratch = {0};
    rn_plot_train_in in = {loss, N, IPE, ap, 5, "AP_root", lr, 5};
    if (plot(&im, &scratch, &in) == 0) {
        RN_CHECK(im.w == RN_PLOT_W && im.h == RN_PLOT_H, "size %d x %d", im.w, im.h);
        /* plot area x 80..920 over iterations 0..100: the drop at epoch 3 starts at iteration 60 */
        int x = (int)floor(80 + 840 * 60.0 / N);
        RN_CHECK(column_count(&im, x, ORANGE) > 100, "lr drop line at column %d: %d px", x, column_count(&im, x, ORANGE));
        int lines = 0;
        for (int c = 0; c < im.w; c++) lines += (c < x - 1 || c > x + 1) && column_count(&im, c, ORANGE) > 100;
        RN_CHECK(lines == 0, "%d other columns hold a vertical orange line", lines);
        RN_CHECK(count(&im, GREEN) > 50, "metric drawn");
    }
    /* No drop, no finite metric: neither orange nor green. */
    double flat[5] = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3}, none[5] = {NAN, NAN, NAN, NAN, NAN};
    in.lr = flat, in.metric = none;
    if (plot(&im, &scratch, &in) == 0)
        RN_CHECK(count(&im, ORANGE) == 0 && count(&im, GREEN) == 0, "orange %d green %d", count(&im, ORANGE),
                 count(&im, GREEN));
    /* Edge cases: MRPE in mm, no iterations, one, non-finite losses. */
    double mrpe[5] = {900, 700, 650, 400, 380};
    in.metric = mrpe, in.metric_name = "MRPE (mm)";
    RN_CHECK(plot(&im, &scratch, &in) == 0, "MRPE plot");
    in.n = 0;
    RN_CHECK(plot(&im, &scratch, &in) == 0, "empty plot");
    in.n = 1;
    RN_CHECK(plot(&im, &scratch, &in) == 0, "one iteration");
    loss[3] = NAN, loss[4] = INFINITY, loss[5] = 0, in.n = N;
    RN_CHECK(plot(&im, &scratch, &in) == 0, "non-finite losses");
    rn_image_free(&im);
    rn_bytes_free(&scratch);
    RN_CHECK_DONE();
}
