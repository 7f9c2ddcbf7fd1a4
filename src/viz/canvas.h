/* rn_canvas: a cairo RGB surface with DejaVu Sans text, nice axis ticks,
 * and PNG/JPEG output through rn_rgb_write (atomic). Used by the people
 * picture (viz/people.h) and the loss plot (train/plot.h).
 *
 *   rn_canvas c;
 *   if (rn_canvas_init(&c, 800, 400, &err)) return -1;
 *   rn_canvas_rgb(&c, RN_WHITE); cairo_paint(c.cr);
 *   rn_canvas_font(&c, 14, 0);
 *   rn_canvas_text(&c, 400, 20, "title", 0.5, 0, RN_BLACK);   // anchored at its top centre
 *   double t[16]; int nt = rn_nice_ticks(t, 16, 0.0, 7.3, 6);  // 0 1 2 ... 7
 *   int rc = rn_canvas_write(&c, "out.png", &err);
 *   rn_canvas_free(&c);
 */
#ifndef RN_VIZ_CANVAS_H
#define RN_VIZ_CANVAS_H

#include <cairo.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_canvas {
    cairo_surface_t *s;
    cairo_t *cr;
    int w, h;
} rn_canvas;

/* Colours as r, g, b in 0..255. */
#define RN_BLACK ((const uint8_t[3]){0, 0, 0})
#define RN_WHITE ((const uint8_t[3]){255, 255, 255})
#define RN_GREY ((const uint8_t[3]){128, 128, 128})

/* A black w x h surface (w, h in 1..32767). Returns 0, or -1 with err. */
int rn_canvas_init(rn_canvas *c, int w, int h, rn_err *err);
void rn_canvas_free(rn_canvas *c);
/* Writes the surface as PNG or JPEG (by extension) via rn_rgb_write. */
int rn_canvas_write(const rn_canvas *c, const char *path, rn_err *err);
/* Copies (h, w, 3) RGB pixels, rows `stride` bytes apart, to (x, y). */
void rn_canvas_blit(rn_canvas *c, const uint8_t *px, int w, int h, size_t stride, int x, int y);

void rn_canvas_rgb(rn_canvas *c, const uint8_t rgb[3]);
/* DejaVu Sans at `px` pixels (em size), bold or regular. */
void rn_canvas_font(rn_canvas *c, double px, int bold);
/* Width of s, and the font's line height (ascent + descent), in pixels. */
double rn_canvas_text_w(rn_canvas *c, const char *s);
double rn_canvas_line_h(rn_canvas *c);
/* Draws s with the point (ax, ay) of its box at (x, y): ax 0 left .. 1 right,
 * ay 0 top .. 1 bottom (the box is the advance width x the line height). */
void rn_canvas_text(rn_canvas *c, double x, double y, const char *s, double ax, double ay, const uint8_t rgb[3]);
/* The same, turned 90 degrees counter-clockwise (reads bottom to top), centred at (x, y). */
void rn_canvas_text_up(rn_canvas *c, double x, double y, const char *s, const uint8_t rgb[3]);

/* Up to max ticks at a 1, 2 or 5 x 10^k step covering [lo, hi] with about
 * `target` intervals; the ticks lie inside [lo, hi]. Returns the count. */
int rn_nice_ticks(double *t, int max, double lo, double hi, int target);
/* The step rn_nice_ticks would use. */
double rn_nice_step(double lo, double hi, int target);
/* A tick value as short text ("0", "0.25", "1e-04"). */
void rn_tick_label(char *buf, int n, double v, double step);

#endif
