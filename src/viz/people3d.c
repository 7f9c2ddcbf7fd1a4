/* The 3D picture of predict/demo with a PoseNet: everyone's camera-space joints from above and from the side. */
#include <math.h>
#include <stdio.h>

#include "viz/canvas.h"
#include "viz/labels.h"
#include "viz/people.h"

/* One panel: its plot area and the mm at its left and top edges (h: right, v: down), pixels per mm shared. */
typedef struct proj {
    rn_rect plot;
    double h0, v0, scale;
    int ha, va;    /* the axes shown: 0 X, 1 Y, 2 Z */
    int v_up;      /* 1: v grows upwards (depth seen from above) */
} proj;

static double px_h(const proj *p, double mm) { return p->plot.x + (mm - p->h0) * p->scale; }
static double px_v(const proj *p, double mm)
{
    return p->v_up ? p->plot.y + p->plot.h - (mm - p->v0) * p->scale : p->plot.y + (mm - p->v0) * p->scale;
}

static int finite3(const double *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* The joints' range per axis (lo, hi); 0 when no joint is finite. */
static int extent(double lo[3], double hi[3], const rn_people_pose *q, int n)
{
    int any = 0;
    for (int a = 0; a < 3; a++) lo[a] = INFINITY, hi[a] = -INFINITY;
    for (size_t k = 0; k < (size_t)n * (size_t)q->J; k++) {
        const double *v = q->cam + 3 * k;
        if (!finite3(v)) continue;
        any = 1;
        for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], v[a]), hi[a] = fmax(hi[a], v[a]);
    }
    return any;
}

/* The two panels at one scale, each axis range centred in its plot with a margin. */
static void fit(proj p[2], const double lo[3], const double hi[3])
{
    double span[3], mid[3], big = 0;
    for (int a = 0; a < 3; a++) span[a] = hi[a] - lo[a], mid[a] = (lo[a] + hi[a]) / 2, big = fmax(big, span[a]);
    double pad = 0.08 * big + 150, s = INFINITY;
    for (int k = 0; k < 2; k++) {
        s = fmin(s, p[k].plot.w / (span[p[k].ha] + 2 * pad));
        s = fmin(s, p[k].plot.h / (span[p[k].va] + 2 * pad));
    }
    for (int k = 0; k < 2; k++) {
        p[k].scale = s;
        p[k].h0 = mid[p[k].ha] - p[k].plot.w / s / 2;
        p[k].v0 = mid[p[k].va] - p[k].plot.h / s / 2;
    }
}

/* A tick in whole mm ("-1500", "2218000"), or as rn_tick_label for steps below 1 mm. */
static void tick_mm(char *buf, int n, double v, double step)
{
    if (step >= 1) snprintf(buf, (size_t)n, "%.0f", fabs(v) < 0.5 ? 0.0 : v);
    else rn_tick_label(buf, n, v, step);
}

static void grid(rn_canvas *c, const proj *p, double step, double fp)
{
    double t[64], hi_h = p->h0 + p->plot.w / p->scale, hi_v = p->v0 + p->plot.h / p->scale;
    char s[32];
    rn_canvas_font(c, fp, 0);
    cairo_set_line_width(c->cr, 1);
    int nh = rn_nice_ticks(t, 64, p->h0, hi_h, (int)lround((hi_h - p->h0) / step));
    for (int i = 0; i < nh; i++) {
        double x = floor(px_h(p, t[i])) + 0.5;
        cairo_set_source_rgb(c->cr, 0.85, 0.85, 0.85);
        cairo_move_to(c->cr, x, p->plot.y), cairo_line_to(c->cr, x, p->plot.y + p->plot.h), cairo_stroke(c->cr);
        tick_mm(s, sizeof s, t[i], step);
        rn_canvas_text(c, x, p->plot.y + p->plot.h + 0.3 * fp, s, 0.5, 0, RN_BLACK);
    }
    int nv = rn_nice_ticks(t, 64, p->v0, hi_v, (int)lround((hi_v - p->v0) / step));
    for (int i = 0; i < nv; i++) {
        double y = floor(px_v(p, t[i])) + 0.5;
        cairo_set_source_rgb(c->cr, 0.85, 0.85, 0.85);
        cairo_move_to(c->cr, p->plot.x, y), cairo_line_to(c->cr, p->plot.x + p->plot.w, y), cairo_stroke(c->cr);
        tick_mm(s, sizeof s, t[i], step);
        rn_canvas_text(c, p->plot.x - 0.4 * fp, y, s, 1, 0.5, RN_BLACK);
    }
    rn_canvas_rgb(c, RN_BLACK);
    cairo_rectangle(c->cr, floor(p->plot.x) + 0.5, floor(p->plot.y) + 0.5, floor(p->plot.w), floor(p->plot.h));
    cairo_stroke(c->cr);
}

static void titles(rn_canvas *c, const proj *p, rn_rect panel, const char *title, double fp)
{
    static const char *const axis[3] = {"camera X (mm)", "camera Y (mm, down)", "depth Z (mm)"};
    rn_canvas_font(c, fp, 1);
    rn_canvas_text(c, panel.x + panel.w / 2, panel.y + 0.4 * fp, title, 0.5, 0, RN_BLACK);
    rn_canvas_font(c, fp, 0);
    rn_canvas_text(c, p->plot.x + p->plot.w / 2, panel.y + panel.h - 0.3 * fp, axis[p->ha], 0.5, 1, RN_BLACK);
    rn_canvas_text_up(c, panel.x + 0.9 * fp, p->plot.y + p->plot.h / 2, axis[p->va], RN_BLACK);
}

/* Person i's bones and joints in the panel (outlined in black) and their number beside the topmost joint. */
static void person(rn_canvas *c, const proj *p, const rn_people_pose *q, int i, double fp)
{
    const double *cam = q->cam + 3 * (size_t)i * (size_t)q->J;
    const uint8_t *rgb = rn_person_colour(i);
    cairo_set_line_cap(c->cr, CAIRO_LINE_CAP_ROUND);
    for (int pass = 0; pass < 2; pass++) {
        rn_canvas_rgb(c, pass ? rgb : RN_BLACK);
        cairo_set_line_width(c->cr, pass ? 3 : 5);
        for (int b = 0; b < q->nbones; b++) {
            const double *a = cam + 3 * q->bones[b][0], *e = cam + 3 * q->bones[b][1];
            if (!finite3(a) || !finite3(e)) continue;
            cairo_move_to(c->cr, px_h(p, a[p->ha]), px_v(p, a[p->va]));
            cairo_line_to(c->cr, px_h(p, e[p->ha]), px_v(p, e[p->va]));
            cairo_stroke(c->cr);
        }
        for (int j = 0; j < q->J; j++)
            if (finite3(cam + 3 * j)) {
                cairo_arc(c->cr, px_h(p, cam[3 * j + p->ha]), px_v(p, cam[3 * j + p->va]), pass ? 3.5 : 4.5, 0, 2 * M_PI);
                cairo_fill(c->cr);
            }
    }
    int top = -1;
    double ty = INFINITY;
    for (int j = 0; j < q->J; j++)
        if (finite3(cam + 3 * j) && px_v(p, cam[3 * j + p->va]) < ty) top = j, ty = px_v(p, cam[3 * j + p->va]);
    if (top < 0) return;
    char s[16];
    snprintf(s, sizeof s, "%d", i + 1);
    rn_canvas_font(c, fp, 1);
    rn_canvas_text(c, px_h(p, cam[3 * top + p->ha]), ty - 0.5 * fp, s, 0.5, 1, RN_BLACK);
}

static void panel(rn_canvas *c, const proj *p, rn_rect area, const char *title, const rn_people_pose *q, int n,
                  double step, double fp)
{
    cairo_save(c->cr);
    grid(c, p, step, fp);
    titles(c, p, area, title, fp);
    cairo_rectangle(c->cr, p->plot.x, p->plot.y, p->plot.w, p->plot.h);
    cairo_clip(c->cr);
    for (int i = 0; i < n; i++) person(c, p, q, i, fp);
    cairo_restore(c->cr);
}

static void notes(rn_canvas *c, const rn_predict_info *intr, int any, double fp)
{
    const char *s = !any ? "no person has finite joints"
                    : intr && intr->default_focal
                        ? "focal 1500 px assumed (no --focal): every coordinate scales by sqrt(fx * fy) / 1500"
                        : NULL;
    if (!s) return;
    rn_canvas_font(c, 0.85 * fp, 0);
    rn_canvas_text(c, c->w / 2.0, c->h - 0.2 * fp, s, 0.5, 1, (const uint8_t[3]){170, 0, 0});
}

int rn_draw_people_3d(const rn_people_pose *q, int n, const rn_predict_info *intr, const char *out, rn_err *err)
{
    rn_canvas c;
    if (rn_canvas_init(&c, RN_DRAW_3D_W, RN_DRAW_3D_H, err)) return rn_err_prefix(err, "%s", out);
    rn_canvas_rgb(&c, RN_WHITE);
    cairo_paint(c.cr);
    double fp = 14, half = RN_DRAW_3D_W / 2.0, ph = RN_DRAW_3D_H - 1.6 * fp; /* a line for the note below */
    rn_rect area[2] = {{0, 0, half, ph}, {half, 0, half, ph}};
    proj p[2];
    for (int k = 0; k < 2; k++) p[k] = (proj){.plot = {area[k].x + 6.2 * fp, 2.2 * fp, half - 7.2 * fp, ph - 5.2 * fp}};
    p[0].ha = 0, p[0].va = 2, p[0].v_up = 1;
    p[1].ha = 2, p[1].va = 1;
    double lo[3], hi[3];
    int any = extent(lo, hi, q, n);
    if (!any)
        for (int a = 0; a < 3; a++) lo[a] = -1000, hi[a] = 1000;
    fit(p, lo, hi);
    double step = rn_nice_step(0, fmax(p[0].plot.w, p[0].plot.h) / p[0].scale, 6);
    panel(&c, &p[0], area[0], "from above", q, any ? n : 0, step, fp);
    panel(&c, &p[1], area[1], "from the side", q, any ? n : 0, step, fp);
    notes(&c, intr, any, fp);
    int rc = rn_canvas_write(&c, out, err);
    rn_canvas_free(&c);
    return rc;
}
