/* Loss curve PNG: a tiny RGB canvas, Bresenham lines, libpng output. */
#include "train/plot.h"

#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

typedef struct canvas {
    uint8_t *px; /* (H, W, 3) */
    int w, h;
} canvas;

static void dot(canvas *c, int x, int y, const uint8_t rgb[3])
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    memcpy(c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3, rgb, 3);
}

static void line(canvas *c, int x0, int y0, int x1, int y1, const uint8_t rgb[3])
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (;;) {
        dot(c, x0, y0, rgb);
        if (x0 == x1 && y0 == y1) return;
        int e2 = 2 * e;
        if (e2 >= dy) e += dy, x0 += sx;
        if (e2 <= dx) e += dx, y0 += sy;
    }
}

static void square(canvas *c, int x, int y, const uint8_t rgb[3])
{
    for (int j = -3; j <= 3; j++)
        for (int i = -3; i <= 3; i++) dot(c, x + i, y + j, rgb);
}

typedef struct axes {
    int x0, y0, x1, y1; /* plot area, y0 top */
    double lo, hi;      /* log10 loss range */
    int64_t n;
} axes;

static int px_x(const axes *a, double i) { return a->x0 + (int)lround((a->x1 - a->x0) * (a->n > 1 ? i / (double)(a->n - 1) : 0.5)); }

static int px_y(const axes *a, double loss)
{
    double l = log10(loss > 1e-12 ? loss : 1e-12), t = a->hi > a->lo ? (l - a->lo) / (a->hi - a->lo) : 0.5;
    return a->y1 - (int)lround((a->y1 - a->y0) * t);
}

static void draw_series(canvas *c, const axes *a, const float *loss, int64_t n, int64_t win, const uint8_t rgb[3])
{
    double sum = 0;
    int px = -1, py = -1;
    for (int64_t i = 0; i < n; i++) {
        sum += loss[i];
        if (i >= win) sum -= loss[i - win];
        int64_t cnt = i + 1 < win ? i + 1 : win;
        int x = px_x(a, (double)i), y = px_y(a, sum / (double)cnt);
        if (px >= 0) line(c, px, py, x, y, rgb);
        px = x, py = y;
    }
}

static void draw_epochs(canvas *c, const axes *a, const float *loss, int64_t n, int ipe, const double *metric, int nm)
{
    static const uint8_t grey[3] = {200, 200, 200}, red[3] = {220, 30, 30}, green[3] = {20, 160, 40};
    for (int64_t e = 0; ipe > 0 && e * ipe < n; e++) {
        int64_t end = (e + 1) * ipe < n ? (e + 1) * ipe : n;
        double sum = 0;
        for (int64_t i = e * ipe; i < end; i++) sum += loss[i];
        int x = px_x(a, (double)(end - 1));
        line(c, x, a->y0, x, a->y1, grey);
        square(c, x, px_y(a, sum / (double)(end - e * ipe)), red);
        if (metric && e < nm && isfinite(metric[e]))
            square(c, x, a->y1 - (int)lround((a->y1 - a->y0) * fmin(fmax(metric[e], 0), 1)), green);
    }
}

static int write_png(const char *path, const canvas *c, rn_err *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return rn_err_set(err, "%s: cannot write", tmp);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        unlink(tmp);
        return rn_err_set(err, "%s: libpng failed", path);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < c->h; y++) png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fflush(f) || fsync(fileno(f)) || fclose(f)) {
        unlink(tmp);
        return rn_err_set(err, "%s: write failed", tmp);
    }
    if (rename(tmp, path)) {
        unlink(tmp);
        return rn_err_set(err, "%s: cannot rename into place", path);
    }
    return 0;
}

int rn_plot_train_png(const char *path, const float *loss, int64_t n, int itr_per_epoch, const double *metric,
                      int n_metric, rn_err *err)
{
    canvas c = {rn_xmalloc((size_t)RN_PLOT_W * RN_PLOT_H * 3), RN_PLOT_W, RN_PLOT_H};
    memset(c.px, 255, (size_t)RN_PLOT_W * RN_PLOT_H * 3);
    axes a = {RN_PLOT_MARGIN, RN_PLOT_MARGIN, RN_PLOT_W - RN_PLOT_MARGIN, RN_PLOT_H - RN_PLOT_MARGIN, 0, 0, n};
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double l = log10(loss[i] > 1e-12 ? loss[i] : 1e-12);
        lo = fmin(lo, l), hi = fmax(hi, l);
    }
    a.lo = n ? lo : 0, a.hi = n ? hi : 1;
    static const uint8_t black[3] = {0, 0, 0}, light[3] = {160, 190, 240}, dark[3] = {20, 40, 160};
    line(&c, a.x0, a.y1, a.x1, a.y1, black);
    line(&c, a.x0, a.y0, a.x0, a.y1, black);
    draw_epochs(&c, &a, loss, n, itr_per_epoch, metric, n_metric);
    draw_series(&c, &a, loss, n, 1, light);
    draw_series(&c, &a, loss, n, n / 50 > 1 ? n / 50 : 1, dark);
    int rc = write_png(path, &c, err);
    free(c.px);
    return rc;
}
