/* Cairo canvas helpers: text in DejaVu Sans, nice ticks, output. */
#include "viz/canvas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image/draw.h"

int rn_canvas_init(rn_canvas *c, int w, int h, rn_err *err)
{
    memset(c, 0, sizeof *c);
    if (w < 1 || h < 1 || w > 32767 || h > 32767) return rn_err_set(err, "picture size %d x %d: out of range", w, h);
    c->s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    if (cairo_surface_status(c->s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(c->s);
        c->s = NULL;
        return rn_err_set(err, "picture %d x %d: cairo cannot allocate it", w, h);
    }
    c->cr = cairo_create(c->s);
    c->w = w, c->h = h;
    return 0;
}

void rn_canvas_free(rn_canvas *c)
{
    if (c->cr) cairo_destroy(c->cr);
    if (c->s) cairo_surface_destroy(c->s);
    memset(c, 0, sizeof *c);
}

int rn_canvas_write(const rn_canvas *c, const char *path, rn_err *err)
{
    cairo_surface_flush(c->s);
    const uint8_t *src = cairo_image_surface_get_data(c->s);
    size_t stride = (size_t)cairo_image_surface_get_stride(c->s);
    rn_rgb img = {rn_xmalloc((size_t)c->w * (size_t)c->h * 3), c->w, c->h};
    for (int y = 0; y < c->h; y++) {
        const uint32_t *row = (const uint32_t *)(const void *)(src + stride * (size_t)y);
        uint8_t *d = img.px + (size_t)y * (size_t)c->w * 3;
        for (int x = 0; x < c->w; x++)
            d[3 * x] = (uint8_t)(row[x] >> 16), d[3 * x + 1] = (uint8_t)(row[x] >> 8), d[3 * x + 2] = (uint8_t)row[x];
    }
    int rc = rn_rgb_write(path, &img, err);
    free(img.px);
    return rc;
}

void rn_canvas_blit(rn_canvas *c, const uint8_t *px, int w, int h, size_t stride, int x0, int y0)
{
    cairo_surface_flush(c->s);
    uint8_t *dst = cairo_image_surface_get_data(c->s);
    size_t ds = (size_t)cairo_image_surface_get_stride(c->s);
    for (int y = 0; y < h; y++) {
        if (y0 + y < 0 || y0 + y >= c->h) continue;
        uint32_t *row = (uint32_t *)(void *)(dst + ds * (size_t)(y0 + y));
        const uint8_t *s = px + stride * (size_t)y;
        for (int x = 0; x < w; x++)
            if (x0 + x >= 0 && x0 + x < c->w)
                row[x0 + x] = 0xff000000u | (uint32_t)s[3 * x] << 16 | (uint32_t)s[3 * x + 1] << 8 | s[3 * x + 2];
    }
    cairo_surface_mark_dirty(c->s);
}

void rn_canvas_rgb(rn_canvas *c, const uint8_t rgb[3])
{
    cairo_set_source_rgb(c->cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
}

void rn_canvas_font(rn_canvas *c, double px, int bold)
{
    cairo_select_font_face(c->cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(c->cr, px);
}

double rn_canvas_text_w(rn_canvas *c, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(c->cr, s, &e);
    return e.x_advance;
}

double rn_canvas_line_h(rn_canvas *c)
{
    cairo_font_extents_t f;
    cairo_font_extents(c->cr, &f);
    return f.ascent + f.descent;
}

void rn_canvas_text(rn_canvas *c, double x, double y, const char *s, double ax, double ay, const uint8_t rgb[3])
{
    cairo_font_extents_t f;
    cairo_font_extents(c->cr, &f);
    double w = rn_canvas_text_w(c, s);
    rn_canvas_rgb(c, rgb);
    cairo_move_to(c->cr, x - ax * w, y - ay * (f.ascent + f.descent) + f.ascent);
    cairo_show_text(c->cr, s);
    cairo_new_path(c->cr);
}

void rn_canvas_text_up(rn_canvas *c, double x, double y, const char *s, const uint8_t rgb[3])
{
    cairo_save(c->cr);
    cairo_translate(c->cr, x, y);
    cairo_rotate(c->cr, -M_PI / 2);
    rn_canvas_text(c, 0, 0, s, 0.5, 0.5, rgb);
    cairo_restore(c->cr);
}

double rn_nice_step(double lo, double hi, int target)
{
    double span = hi - lo, raw = span / (target > 0 ? target : 1);
    if (!(raw > 0) || !isfinite(raw)) return 1;
    double p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

int rn_nice_ticks(double *t, int max, double lo, double hi, int target)
{
    double step = rn_nice_step(lo, hi, target);
    int n = 0;
    for (double k = ceil(lo / step - 1e-9); n < max && k * step <= hi + 1e-9 * step; k++) t[n++] = k * step;
    return n;
}

void rn_tick_label(char *buf, int n, double v, double step)
{
    if (fabs(v) < 1e-12 * step) v = 0;
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (v != 0 && (fabs(v) >= 1e5 || dec > 4)) snprintf(buf, (size_t)n, "%.0e", v);
    else snprintf(buf, (size_t)n, "%.*f", dec, v);
}
