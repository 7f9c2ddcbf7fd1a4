/* Loss curve PNG: cairo axes, ticks, legend, metric axis, lr drops. */
#include "train/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/canvas.h"

static const uint8_t LIGHT[3] = {160, 190, 240}, DARK[3] = {20, 40, 160}, RED[3] = {220, 30, 30},
                     GREEN[3] = {20, 160, 40}, ORANGE[3] = {230, 120, 0}, RULE[3] = {225, 225, 225};
static const double FONT = 13;

typedef struct axes {
    double x0, y0, x1, y1; /* plot area, y0 top */
    double lo, hi;         /* log10 loss range */
    double mlo, mhi;       /* metric range */
    double n;              /* iterations on the x axis */
} axes;

static double px_x(const axes *a, double it) { return a->x0 + (a->x1 - a->x0) * (a->n > 0 ? it / a->n : 0.5); }

static double px_y(const axes *a, double loss)
{
    double l = log10(loss > 1e-12 ? loss : 1e-12);
    return a->y1 - (a->y1 - a->y0) * (l - a->lo) / (a->hi - a->lo);
}

static double px_m(const axes *a, double m) { return a->y1 - (a->y1 - a->y0) * (m - a->mlo) / (a->mhi - a->mlo); }

static void seg(rn_canvas *c, double x0, double y0, double x1, double y1)
{
    cairo_move_to(c->cr, x0, y0);
    cairo_line_to(c->cr, x1, y1);
    cairo_stroke(c->cr);
}

static void marker(rn_canvas *c, double x, double y, int diamond, const uint8_t rgb[3])
{
    double r = 4;
    if (diamond) {
        cairo_move_to(c->cr, x, y - r - 1), cairo_line_to(c->cr, x + r + 1, y);
        cairo_line_to(c->cr, x, y + r + 1), cairo_line_to(c->cr, x - r - 1, y), cairo_close_path(c->cr);
    } else {
        cairo_rectangle(c->cr, x - r, y - r, 2 * r, 2 * r);
    }
    rn_canvas_rgb(c, rgb);
    cairo_fill_preserve(c->cr);
    rn_canvas_rgb(c, RN_BLACK);
    cairo_set_line_width(c->cr, 1);
    cairo_stroke(c->cr);
}

/* Ticks of the log loss axis (values, not logs): 1-2-5 per decade over a few
 * decades, decades only over many, plain nice steps within one decade. */
static int log_ticks(double *t, int max, double lo, double hi)
{
    if (hi - lo < 1) return rn_nice_ticks(t, max, pow(10, lo), pow(10, hi), 5);
    static const double mult[3] = {1, 2, 5};
    int n = 0, per = hi - lo <= 2.5 ? 3 : 1;
    for (double d = floor(lo); d <= ceil(hi) && n < max; d++)
        for (int k = 0; k < per && n < max; k++) {
            double v = mult[k] * pow(10, d);
            if (log10(v) >= lo - 1e-9 && log10(v) <= hi + 1e-9) t[n++] = v;
        }
    return n;
}

static void axes_and_ticks(rn_canvas *c, const axes *a, int have_metric, const char *metric_name)
{
    double t[64];
    char s[32];
    rn_canvas_font(c, FONT, 0);
    cairo_set_line_width(c->cr, 1);
    int nx = rn_nice_ticks(t, 64, 0, a->n, 8);
    double step = rn_nice_step(0, a->n, 8);
    for (int i = 0; i < nx; i++) {
        double x = floor(px_x(a, t[i])) + 0.5;
        rn_canvas_rgb(c, RN_BLACK), seg(c, x, a->y1, x, a->y1 + 5);
        rn_tick_label(s, sizeof s, t[i], step < 1 ? 1 : step);
        rn_canvas_text(c, x, a->y1 + 7, s, 0.5, 0, RN_BLACK);
    }
    int ny = log_ticks(t, 64, a->lo, a->hi);
    for (int i = 0; i < ny; i++) {
        double y = floor(px_y(a, t[i])) + 0.5;
        rn_canvas_rgb(c, RULE), seg(c, a->x0, y, a->x1, y);
        rn_canvas_rgb(c, RN_BLACK), seg(c, a->x0 - 5, y, a->x0, y);
        snprintf(s, sizeof s, "%.4g", t[i]);
        rn_canvas_text(c, a->x0 - 8, y, s, 1, 0.5, RN_BLACK);
    }
    if (have_metric) {
        int nm = rn_nice_ticks(t, 64, a->mlo, a->mhi, 5);
        double ms = rn_nice_step(a->mlo, a->mhi, 5);
        for (int i = 0; i < nm; i++) {
            double y = floor(px_m(a, t[i])) + 0.5;
            rn_canvas_rgb(c, GREEN), seg(c, a->x1, y, a->x1 + 5, y);
            rn_tick_label(s, sizeof s, t[i], ms);
            rn_canvas_text(c, a->x1 + 8, y, s, 0, 0.5, GREEN);
        }
        rn_canvas_text_up(c, c->w - 14, (a->y0 + a->y1) / 2, metric_name, GREEN);
    }
    rn_canvas_rgb(c, RN_BLACK);
    cairo_rectangle(c->cr, floor(a->x0) + 0.5, floor(a->y0) + 0.5, floor(a->x1 - a->x0), floor(a->y1 - a->y0));
    cairo_stroke(c->cr);
    rn_canvas_text(c, (a->x0 + a->x1) / 2, c->h - 6, "iteration (batches since the start of training)", 0.5, 1, RN_BLACK);
    rn_canvas_text_up(c, 16, (a->y0 + a->y1) / 2, "training loss (L1, log scale)", RN_BLACK);
}

static void draw_series(rn_canvas *c, const axes *a, const float *loss, int64_t n, int64_t win, double lw,
                        const uint8_t rgb[3])
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        sum += loss[i];
        if (i >= win) sum -= loss[i - win];
        int64_t cnt = i + 1 < win ? i + 1 : win;
        double x = px_x(a, (double)(i + 1)), y = px_y(a, sum / (double)cnt);
        if (i) cairo_line_to(c->cr, x, y);
        else cairo_move_to(c->cr, x, y);
    }
    if (n == 1) cairo_line_to(c->cr, px_x(a, 1) + 1, px_y(a, loss[0]));
    rn_canvas_rgb(c, rgb);
    cairo_set_line_width(c->cr, lw);
    cairo_set_line_join(c->cr, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke(c->cr);
}

/* Epoch boundaries and numbers along the top; returns the number of lr drops drawn. */
static int draw_epochs(rn_canvas *c, const axes *a, const rn_plot_train_in *in)
{
    int64_t ipe = in->itr_per_epoch, n = in->n, ne = ipe > 0 ? (n + ipe - 1) / ipe : 0;
    double every = ne > 0 ? ceil(30.0 / ((a->x1 - a->x0) / (double)ne)) : 1;
    char s[48];
    int drops = 0;
    rn_canvas_font(c, FONT - 2, 0);
    rn_canvas_text(c, a->x0 - 8, a->y0 - 3, "epoch", 1, 1, RN_GREY);
    for (int64_t e = 0; e < ne; e++) {
        double xb = floor(px_x(a, (double)(e * ipe))) + 0.5, xe = px_x(a, (double)((e + 1) * ipe < n ? (e + 1) * ipe : n));
        rn_canvas_rgb(c, RULE);
        cairo_set_line_width(c->cr, 1);
        if (e) seg(c, xb, a->y0, xb, a->y1);
        if (e % (int64_t)every == 0) snprintf(s, sizeof s, "%lld", (long long)e), rn_canvas_text(c, (xb + xe) / 2, a->y0 - 3, s, 0.5, 1, RN_GREY);
        if (!in->lr || e == 0 || e >= in->n_lr || !(in->lr[e] < in->lr[e - 1])) continue;
        double dash[2] = {6, 4};
        cairo_set_dash(c->cr, dash, 2, 0);
        rn_canvas_rgb(c, ORANGE);
        cairo_set_line_width(c->cr, 2);
        seg(c, xb, a->y0, xb, a->y1);
        cairo_set_dash(c->cr, NULL, 0, 0);
        snprintf(s, sizeof s, "lr %.0e", in->lr[e]);
        rn_canvas_text(c, xb + 4, a->y1 - 4 - 16 * (drops % 2), s, 0, 1, ORANGE);
        drops++;
    }
    return drops;
}

static void epoch_points(rn_canvas *c, const axes *a, const rn_plot_train_in *in, int have_metric)
{
    int64_t ipe = in->itr_per_epoch, n = in->n;
    double px = 0, py = 0;
    int have_prev = 0;
    for (int64_t e = 0; ipe > 0 && e * ipe < n; e++) {
        int64_t end = (e + 1) * ipe < n ? (e + 1) * ipe : n;
        double sum = 0;
        for (int64_t i = e * ipe; i < end; i++) sum += in->loss[i];
        double x = px_x(a, (double)end);
        marker(c, x, px_y(a, sum / (double)(end - e * ipe)), 0, RED);
        if (!have_metric || e >= in->n_metric || !isfinite(in->metric[e])) continue;
        double y = px_m(a, in->metric[e]);
        if (have_prev) rn_canvas_rgb(c, GREEN), cairo_set_line_width(c->cr, 1.5), seg(c, px, py, x, y);
        marker(c, x, y, 1, GREEN);
        px = x, py = y, have_prev = 1;
    }
}

typedef enum sample { S_LINE, S_THICK, S_SQUARE, S_DIAMOND, S_DASH } sample;

static void legend(rn_canvas *c, const axes *a, const char **text, const sample *kind, const uint8_t (*rgb)[3], int n)
{
    rn_canvas_font(c, FONT, 0);
    double w = 0, lh = 19;
    for (int i = 0; i < n; i++) w = fmax(w, rn_canvas_text_w(c, text[i]));
    double bw = w + 52, bh = n * lh + 10, bx = a->x1 - bw - 10, by = a->y0 + 10;
    cairo_rectangle(c->cr, bx + 0.5, by + 0.5, bw, bh);
    cairo_set_source_rgba(c->cr, 1, 1, 1, 0.9);
    cairo_fill_preserve(c->cr);
    rn_canvas_rgb(c, RN_GREY);
    cairo_set_line_width(c->cr, 1);
    cairo_stroke(c->cr);
    for (int i = 0; i < n; i++) {
        double y = by + 5 + lh * (i + 0.5), x = bx + 8;
        if (kind[i] == S_SQUARE || kind[i] == S_DIAMOND) {
            marker(c, x + 15, y, kind[i] == S_DIAMOND, rgb[i]);
        } else {
            double dash[2] = {6, 4};
            if (kind[i] == S_DASH) cairo_set_dash(c->cr, dash, 2, 0);
            rn_canvas_rgb(c, rgb[i]);
            cairo_set_line_width(c->cr, kind[i] == S_LINE ? 1 : 2.5);
            seg(c, x, y, x + 30, y);
            cairo_set_dash(c->cr, NULL, 0, 0);
        }
        rn_canvas_text(c, x + 40, y, text[i], 0, 0.5, RN_BLACK);
    }
}

/* Loss range (log10, padded) and metric range; returns 1 when a metric is finite. */
static int ranges(axes *a, const rn_plot_train_in *in)
{
    double lo = INFINITY, hi = -INFINITY, mlo = INFINITY, mhi = -INFINITY;
    for (int64_t i = 0; i < in->n; i++) {
        double l = log10(in->loss[i] > 1e-12 ? in->loss[i] : 1e-12);
        if (isfinite(l)) lo = fmin(lo, l), hi = fmax(hi, l);
    }
    if (!(lo <= hi)) lo = -1, hi = 1;
    double pad = fmax(0.05 * (hi - lo), 0.05);
    a->lo = lo - pad, a->hi = hi + pad;
    for (int e = 0; in->metric && e < in->n_metric; e++)
        if (isfinite(in->metric[e])) mlo = fmin(mlo, in->metric[e]), mhi = fmax(mhi, in->metric[e]);
    if (!(mlo <= mhi)) return a->mlo = 0, a->mhi = 1, 0;
    if (mlo >= 0 && mhi <= 1) return a->mlo = 0, a->mhi = 1, 1;
    double mp = fmax(0.1 * (mhi - mlo), 0.05 * fmax(fabs(mhi), 1e-9));
    a->mlo = mlo - mp, a->mhi = mhi + mp;
    return 1;
}

int rn_plot_train_png(const char *path, const rn_plot_train_in *in, rn_err *err)
{
    rn_canvas c;
    if (rn_canvas_init(&c, RN_PLOT_W, RN_PLOT_H, err)) return -1;
    rn_canvas_rgb(&c, RN_WHITE);
    cairo_paint(c.cr);
    axes a = {80, 50, RN_PLOT_W - 80, RN_PLOT_H - 55, 0, 0, 0, 0, in->n > 0 ? (double)in->n : 1};
    int have_metric = ranges(&a, in);
    const char *mname = in->metric_name ? in->metric_name : "metric";
    rn_canvas_font(&c, FONT + 2, 1);
    rn_canvas_text(&c, a.x0, 8, "rootnet training", 0, 0, RN_BLACK);
    int drops = draw_epochs(&c, &a, in);
    axes_and_ticks(&c, &a, have_metric, mname);
    int64_t small = in->n / 4 < 5 ? in->n / 4 : 5, win = in->n / 50 > small ? in->n / 50 : small > 1 ? small : 1;
    draw_series(&c, &a, in->loss, in->n, 1, 1, LIGHT);
    draw_series(&c, &a, in->loss, in->n, win, 2.5, DARK);
    epoch_points(&c, &a, in, have_metric);
    char mean[64], metric[96];
    snprintf(mean, sizeof mean, "running mean (%lld iteration%s)", (long long)win, win > 1 ? "s" : "");
    snprintf(metric, sizeof metric, "%s per epoch (right axis)", mname);
    const char *text[5] = {"loss per iteration", mean, "mean loss per epoch", metric, "learning-rate drop"};
    const sample kind[5] = {S_LINE, S_THICK, S_SQUARE, S_DIAMOND, S_DASH};
    const uint8_t rgb[5][3] = {{160, 190, 240}, {20, 40, 160}, {220, 30, 30}, {20, 160, 40}, {230, 120, 0}};
    const char *t2[5];
    sample k2[5];
    uint8_t c2[5][3];
    int m = 0;
    for (int i = 0; i < 5; i++)
        if ((i != 3 || have_metric) && (i != 4 || drops)) t2[m] = text[i], k2[m] = kind[i], memcpy(c2[m], rgb[i], 3), m++;
    legend(&c, &a, t2, k2, (const uint8_t(*)[3])c2, m);
    int rc = rn_canvas_write(&c, path, err);
    rn_canvas_free(&c);
    return rc;
}
