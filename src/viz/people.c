/* The demo/predict picture: boxes, roots, placed labels, bird's-eye view. */
#include "viz/people.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image/exif_focal.h"
#include "data/image/image.h"
#include "viz/canvas.h"
#include "viz/labels.h"

static const uint8_t PALETTE[10][3] = {
    {0, 230, 118},   {255, 214, 0},   {64, 196, 255}, {255, 145, 0},  {234, 128, 252},
    {255, 82, 82},   {100, 255, 218}, {255, 128, 171}, {178, 255, 89}, {140, 158, 255},
};

const uint8_t *rn_person_colour(int i) { return PALETTE[(i < 0 ? -i : i) % 10]; }

static void fill(rn_canvas *c, double x, double y, double w, double h, const uint8_t rgb[3])
{
    rn_canvas_rgb(c, rgb);
    cairo_rectangle(c->cr, x, y, w, h);
    cairo_fill(c->cr);
}

/* Box outline `t` pixels thick inside [x0, x1] x [y0, y1] (inclusive pixels), as rn_draw_rect. */
static void box_outline(rn_canvas *c, long x0, long y0, long x1, long y1, int t, const uint8_t rgb[3])
{
    double w = (double)(x1 - x0 + 1), h = (double)(y1 - y0 + 1);
    fill(c, (double)x0, (double)y0, w, t, rgb);
    fill(c, (double)x0, (double)(y1 - t + 1), w, t, rgb);
    fill(c, (double)x0, (double)y0, t, h, rgb);
    fill(c, (double)(x1 - t + 1), (double)y0, t, h, rgb);
}

/* '+' centred on pixel (x, y): arms `half` long, `t` thick, outlined in black. */
static void cross(rn_canvas *c, long x, long y, int half, int t, const uint8_t rgb[3])
{
    double cx = (double)x + 0.5, cy = (double)y + 0.5;
    fill(c, cx - half - 1.5, cy - t / 2.0 - 1, 2 * half + 3, t + 2, RN_BLACK);
    fill(c, cx - t / 2.0 - 1, cy - half - 1.5, t + 2, 2 * half + 3, RN_BLACK);
    fill(c, cx - half - 0.5, cy - t / 2.0, 2 * half + 1, t, rgb);
    fill(c, cx - t / 2.0, cy - half - 0.5, t, 2 * half + 1, rgb);
}

/* Line from the label's nearest edge point to (px, py), outlined in black. */
static void leader(rn_canvas *c, rn_rect r, double px, double py, double lw, const uint8_t rgb[3])
{
    double lx = fmax(r.x, fmin(px, r.x + r.w)), ly = fmax(r.y, fmin(py, r.y + r.h));
    cairo_set_line_cap(c->cr, CAIRO_LINE_CAP_ROUND);
    for (int pass = 0; pass < 2; pass++) {
        rn_canvas_rgb(c, pass ? rgb : RN_BLACK);
        cairo_set_line_width(c->cr, pass ? lw : lw + 2);
        cairo_move_to(c->cr, lx, ly);
        cairo_line_to(c->cr, px, py);
        cairo_stroke(c->cr);
    }
}

/* A label: colour fill, black border, black text centred. */
static void label_box(rn_canvas *c, rn_rect r, const char *s, const uint8_t rgb[3])
{
    fill(c, r.x, r.y, r.w, r.h, rgb);
    rn_canvas_rgb(c, RN_BLACK);
    cairo_set_line_width(c->cr, 1);
    cairo_rectangle(c->cr, r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
    cairo_stroke(c->cr);
    rn_canvas_text(c, r.x + r.w / 2, r.y + r.h / 2, s, 0.5, 0.5, RN_BLACK);
}

static void set_rect(double *d, rn_rect r) { d[0] = r.x, d[1] = r.y, d[2] = r.w, d[3] = r.h; }

typedef struct style {
    double u;    /* font size (pixels) */
    int t, half; /* line thickness, cross arm */
} style;

static int finite2(const double *v) { return isfinite(v[0]) && isfinite(v[1]); }

/* Every person's bones (lines `t` thick) and joints (dots), outlined in black, in their colours: first all the
 * outlines, then the colours, so that each joint's own pixel keeps its person's colour. */
static void skeletons(rn_canvas *c, const rn_people_pose *q, int n, int t)
{
    double r = t > 2 ? t : 2;
    cairo_set_line_cap(c->cr, CAIRO_LINE_CAP_ROUND);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const double *im = q->img + 3 * (size_t)i * (size_t)q->J;
            rn_canvas_rgb(c, pass ? rn_person_colour(i) : RN_BLACK);
            cairo_set_line_width(c->cr, pass ? t : t + 2);
            for (int b = 0; b < q->nbones; b++) {
                const double *a = im + 3 * q->bones[b][0], *e = im + 3 * q->bones[b][1];
                if (!finite2(a) || !finite2(e)) continue;
                cairo_move_to(c->cr, lround(a[0]) + 0.5, lround(a[1]) + 0.5);
                cairo_line_to(c->cr, lround(e[0]) + 0.5, lround(e[1]) + 0.5);
                cairo_stroke(c->cr);
            }
        }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const double *im = q->img + 3 * (size_t)i * (size_t)q->J;
            rn_canvas_rgb(c, pass ? rn_person_colour(i) : RN_BLACK);
            for (int j = 0; j < q->J; j++) {
                if (!finite2(im + 3 * j) || fabs(im[3 * j]) > 1e6 || fabs(im[3 * j + 1]) > 1e6) continue;
                cairo_arc(c->cr, lround(im[3 * j]) + 0.5, lround(im[3 * j + 1]) + 0.5, pass ? r : r + 1, 0, 2 * M_PI);
                cairo_fill(c->cr);
            }
        }
}

/* Boxes, roots, skeletons (with a pose), labels and leaders over the image. Returns the overlap count. */
static int draw_image_part(rn_canvas *c, const rn_people_picture *p, style st, rn_person_label *lab)
{
    int n = p->n, W = p->image->w, H = p->image->h;
    rn_label_req *req = rn_xmalloc((size_t)n * sizeof *req);
    rn_rect *avoid = rn_xmalloc((size_t)n * sizeof *avoid), *out = rn_xmalloc((size_t)n * sizeof *out);
    int *moved = rn_xmalloc((size_t)n * sizeof *moved);
    char (*text)[48] = rn_xmalloc((size_t)n * sizeof *text);
    cairo_save(c->cr);
    cairo_rectangle(c->cr, 0, 0, W, H);
    cairo_clip(c->cr);
    cairo_set_antialias(c->cr, CAIRO_ANTIALIAS_NONE);
    rn_canvas_font(c, st.u, 1);
    double pad = 0.3 * st.u, lh = rn_canvas_line_h(c);
    for (int i = 0; i < n; i++) {
        const rn_person_root *r = &p->people[i];
        long x0 = lround(r->box[0]), y0 = lround(r->box[1]);
        box_outline(c, x0, y0, lround(r->box[0] + r->box[2]) - 1, lround(r->box[1] + r->box[3]) - 1, st.t,
                    rn_person_colour(i));
        double z = r->img[2] / 1000;
        if (isfinite(z)) snprintf(text[i], sizeof text[i], "%d: %.2f m", i + 1, z);
        else snprintf(text[i], sizeof text[i], "%d: ?", i + 1);
        req[i] = (rn_label_req){{(double)x0, (double)y0, r->box[2], r->box[3]}, rn_canvas_text_w(c, text[i]) + 2 * pad,
                                lh + pad, 0};
        avoid[i] = (rn_rect){r->img[0] - st.half - 2, r->img[1] - st.half - 2, 2 * st.half + 4, 2 * st.half + 4};
    }
    for (int i = 0; i < n; i++)
        cross(c, lround(p->people[i].img[0]), lround(p->people[i].img[1]), st.half, st.t, rn_person_colour(i));
    if (p->pose) skeletons(c, p->pose, n, st.t);
    int bad = rn_labels_place(out, moved, req, n, (rn_rect){0, 0, W, H}, avoid, n);
    cairo_set_antialias(c->cr, CAIRO_ANTIALIAS_DEFAULT);
    for (int i = 0; i < n; i++)
        if (moved[i])
            leader(c, out[i], fmax(0, fmin(p->people[i].img[0], W)), fmax(0, fmin(p->people[i].img[1], H)),
                   fmax(1.5, st.t * 0.75), rn_person_colour(i));
    for (int i = 0; i < n; i++) {
        label_box(c, out[i], text[i], rn_person_colour(i));
        if (lab) set_rect(lab[i].rect, out[i]), lab[i].moved = moved[i];
    }
    cairo_restore(c->cr);
    free(req), free(avoid), free(out), free(moved), free(text);
    return bad;
}

typedef struct view {
    rn_rect plot;          /* plot area in pixels */
    double x0, z1, scale;  /* X at the left edge, Z at the top (m); pixels per metre */
} view;

static double vx(const view *v, double x) { return v->plot.x + (x - v->x0) * v->scale; }
static double vz(const view *v, double z) { return v->plot.y + v->plot.h - z * v->scale; }

static int shown(const rn_person_root *r) { return isfinite(r->cam[0]) && isfinite(r->cam[2]) && r->cam[2] > 0; }

/* Equal-scale ranges covering the people and the camera, plot area filled. */
static view fit(const rn_people_picture *p, rn_rect plot, double fov_l, double fov_r)
{
    double zmax = 1, xmin = 0, xmax = 0;
    for (int i = 0; i < p->n; i++)
        if (shown(&p->people[i])) zmax = fmax(zmax, p->people[i].cam[2] / 1000 * 1.15);
    for (int i = 0; i < p->n; i++)
        if (shown(&p->people[i]))
            xmin = fmin(xmin, p->people[i].cam[0] / 1000 - 0.08 * zmax), xmax = fmax(xmax, p->people[i].cam[0] / 1000 + 0.08 * zmax);
    xmin = fmin(xmin, fmax(fov_l * zmax, -zmax)), xmax = fmax(xmax, fmin(fov_r * zmax, zmax));
    double s = fmin(plot.w / (xmax - xmin), plot.h / zmax), mid = (xmin + xmax) / 2;
    return (view){plot, mid - plot.w / s / 2, plot.h / s, s};
}

static void grid(rn_canvas *c, const view *v, double fp)
{
    double x1 = v->x0 + v->plot.w / v->scale, step = rn_nice_step(0, fmax(x1 - v->x0, v->z1), 6), t[64];
    char s[32];
    rn_canvas_font(c, fp, 0);
    cairo_set_line_width(c->cr, fmax(1, fp / 14));
    int nx = rn_nice_ticks(t, 64, v->x0, x1, (int)lround((x1 - v->x0) / step));
    for (int i = 0; i < nx; i++) {
        double x = floor(vx(v, t[i])) + 0.5;
        rn_canvas_rgb(c, fabs(t[i]) < 1e-9 ? (const uint8_t[3]){150, 150, 150} : (const uint8_t[3]){215, 215, 215});
        cairo_move_to(c->cr, x, v->plot.y), cairo_line_to(c->cr, x, v->plot.y + v->plot.h), cairo_stroke(c->cr);
        rn_tick_label(s, sizeof s, t[i], step);
        rn_canvas_text(c, x, v->plot.y + v->plot.h + 0.3 * fp, s, 0.5, 0, RN_BLACK);
    }
    int nz = rn_nice_ticks(t, 64, 0, v->z1, (int)lround(v->z1 / step));
    for (int i = 0; i < nz; i++) {
        double y = floor(vz(v, t[i])) + 0.5;
        rn_canvas_rgb(c, (const uint8_t[3]){215, 215, 215});
        cairo_move_to(c->cr, v->plot.x, y), cairo_line_to(c->cr, v->plot.x + v->plot.w, y), cairo_stroke(c->cr);
        rn_tick_label(s, sizeof s, t[i], step);
        rn_canvas_text(c, v->plot.x - 0.4 * fp, y, s, 1, 0.5, RN_BLACK);
    }
}

static void fov_and_camera(rn_canvas *c, const view *v, double fov_l, double fov_r, double fp)
{
    cairo_save(c->cr);
    cairo_rectangle(c->cr, v->plot.x, v->plot.y, v->plot.w, v->plot.h);
    cairo_clip(c->cr);
    double z = v->z1 * 2;
    cairo_move_to(c->cr, vx(v, 0), vz(v, 0));
    cairo_line_to(c->cr, vx(v, fov_l * z), vz(v, z));
    cairo_line_to(c->cr, vx(v, fov_r * z), vz(v, z));
    cairo_close_path(c->cr);
    cairo_set_source_rgb(c->cr, 0.93, 0.95, 1.0);
    cairo_fill(c->cr);
    cairo_restore(c->cr);
    double cx = vx(v, 0), cy = vz(v, 0), a = 0.6 * fp;
    cairo_move_to(c->cr, cx, cy - a);
    cairo_line_to(c->cr, cx - a * 0.8, cy);
    cairo_line_to(c->cr, cx + a * 0.8, cy);
    cairo_close_path(c->cr);
    rn_canvas_rgb(c, RN_BLACK);
    cairo_fill(c->cr);
}

static void frame_and_titles(rn_canvas *c, const view *v, rn_rect panel, double fp)
{
    rn_canvas_rgb(c, RN_BLACK);
    cairo_set_line_width(c->cr, fmax(1, fp / 14));
    cairo_rectangle(c->cr, floor(v->plot.x) + 0.5, floor(v->plot.y) + 0.5, floor(v->plot.w), floor(v->plot.h));
    cairo_stroke(c->cr);
    rn_canvas_font(c, fp, 1);
    rn_canvas_text(c, panel.x + panel.w / 2, panel.y + 0.4 * fp, "bird's-eye view (from above)", 0.5, 0, RN_BLACK);
    rn_canvas_font(c, fp, 0);
    rn_canvas_text(c, v->plot.x + v->plot.w / 2, panel.y + panel.h - 0.3 * fp, "camera X (m)", 0.5, 1, RN_BLACK);
    rn_canvas_text_up(c, panel.x + 0.9 * fp, v->plot.y + v->plot.h / 2, "depth Z (m)", RN_BLACK);
}

/* Dots and their labels (the camera's label placed first). */
static int dots(rn_canvas *c, const view *v, const rn_people_picture *p, double fp, rn_person_label *lab)
{
    int n = p->n + 1;
    rn_label_req *req = rn_xmalloc((size_t)n * sizeof *req);
    rn_rect *avoid = rn_xmalloc((size_t)n * sizeof *avoid), *out = rn_xmalloc((size_t)n * sizeof *out);
    int *moved = rn_xmalloc((size_t)n * sizeof *moved);
    double r = 0.45 * fp, pad = 0.25 * fp;
    rn_canvas_font(c, fp, 1);
    double lh = rn_canvas_line_h(c);
    req[0] = (rn_label_req){{vx(v, 0), vz(v, 0) - 0.6 * fp, 0, 0}, rn_canvas_text_w(c, "camera") + 2 * pad, lh + pad, r};
    avoid[0] = (rn_rect){vx(v, 0) - 0.5 * fp, vz(v, 0) - 0.6 * fp, fp, 0.6 * fp};
    char s[16];
    for (int i = 0; i < p->n; i++) {
        const rn_person_root *q = &p->people[i];
        double x = shown(q) ? vx(v, q->cam[0] / 1000) : 0, y = shown(q) ? vz(v, q->cam[2] / 1000) : 0;
        snprintf(s, sizeof s, "%d", i + 1);
        req[i + 1] = (rn_label_req){{x, y, 0, 0}, rn_canvas_text_w(c, s) + 2 * pad, lh + pad, r + 1};
        avoid[i + 1] = shown(q) ? (rn_rect){x - r, y - r, 2 * r, 2 * r} : (rn_rect){-1e9, -1e9, 0, 0};
    }
    int bad = rn_labels_place(out, moved, req, n, v->plot, avoid, n);
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < p->n; i++) {
            if (!shown(&p->people[i])) continue;
            double x = req[i + 1].anchor.x, y = req[i + 1].anchor.y;
            if (pass == 0 && moved[i + 1]) leader(c, out[i + 1], x, y, fmax(1.5, fp / 10), rn_person_colour(i));
            if (pass == 1) {
                cairo_arc(c->cr, x, y, r, 0, 2 * M_PI);
                rn_canvas_rgb(c, rn_person_colour(i));
                cairo_fill_preserve(c->cr);
                rn_canvas_rgb(c, RN_BLACK);
                cairo_set_line_width(c->cr, fmax(1.5, fp / 10));
                cairo_stroke(c->cr);
            }
            if (pass == 2) snprintf(s, sizeof s, "%d", i + 1), label_box(c, out[i + 1], s, rn_person_colour(i));
        }
    for (int i = 0; lab && i < p->n; i++) {
        memset(lab[i].dot_rect, 0, sizeof lab[i].dot_rect);
        if (shown(&p->people[i])) set_rect(lab[i].dot_rect, out[i + 1]);
    }
    rn_canvas_text(c, out[0].x + out[0].w / 2, out[0].y + out[0].h / 2, "camera", 0.5, 0.5, RN_BLACK);
    free(req), free(avoid), free(out), free(moved);
    return bad;
}

/* The note that the focal length was assumed, at the foot of the plot; its rectangle into rect. */
static void focal_note(rn_canvas *c, rn_rect plot, double fp, double rect[4])
{
    static const char *const lines[2] = {"focal 1500 px assumed (no --focal):", "depth_true = depth * sqrt(fx * fy) / 1500"};
    double f = 0.85 * fp;
    rn_canvas_font(c, f, 0);
    double w = fmax(rn_canvas_text_w(c, lines[0]), rn_canvas_text_w(c, lines[1])), lh = rn_canvas_line_h(c);
    double x = plot.x + plot.w / 2 - w / 2 - 0.3 * f, y = plot.y + plot.h - 2 * lh - 0.6 * f;
    fill(c, x, y, w + 0.6 * f, 2 * lh + 0.4 * f, RN_WHITE);
    for (int i = 0; i < 2; i++)
        rn_canvas_text(c, plot.x + plot.w / 2, y + 0.2 * f + i * lh, lines[i], 0.5, 0, (const uint8_t[3]){170, 0, 0});
    rect[0] = x, rect[1] = y, rect[2] = w + 0.6 * f, rect[3] = 2 * lh + 0.4 * f;
}

static void draw_panel(rn_canvas *c, const rn_people_picture *p, rn_rect panel, rn_person_label *lab, double note[4])
{
    double fp = fmax(12, 0.032 * panel.h);
    fill(c, panel.x, panel.y, panel.w, panel.h, RN_WHITE);
    rn_rect plot = {panel.x + 4.2 * fp, panel.y + 2.2 * fp, panel.w - 5.4 * fp, panel.h - 5.6 * fp};
    double fx = p->intr->f[0], cx = p->intr->c[0], W = p->image->w;
    double fov_l = fx > 0 ? (0 - cx) / fx : -1, fov_r = fx > 0 ? (W - cx) / fx : 1;
    view v = fit(p, plot, fov_l, fov_r);
    fov_and_camera(c, &v, fov_l, fov_r, fp);
    grid(c, &v, fp);
    frame_and_titles(c, &v, panel, fp);
    dots(c, &v, p, fp, lab);
    if (p->intr->default_focal) focal_note(c, plot, fp, note);
    int hidden = 0;
    for (int i = 0; i < p->n; i++) hidden += !shown(&p->people[i]);
    if (!hidden) return;
    char s[96];
    snprintf(s, sizeof s, "%d %s depth <= 0 not shown", hidden, hidden == 1 ? "person with" : "people with");
    rn_canvas_font(c, fp, 0);
    rn_canvas_text(c, plot.x + plot.w / 2, plot.y + 0.5 * fp, s, 0.5, 0, (const uint8_t[3]){200, 0, 0});
}

int rn_draw_people(const rn_people_picture *p, const char *out, rn_person_label *labels, rn_people_layout *layout,
                   rn_err *err)
{
    int W = p->image->w, H = p->image->h, ch = H > 360 ? H : 360;
    rn_canvas c;
    if (rn_canvas_init(&c, W + ch, ch, err)) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return rn_err_set(err, "%s: %s", out, msg);
    }
    fill(&c, 0, 0, c.w, c.h, (const uint8_t[3]){40, 40, 40});
    rn_canvas_blit(&c, p->image->px, W, H, (size_t)W * 3, 0, 0);
    double m = W < H ? W : H, u = fmax(12, 0.03 * m);
    style st = {u, (int)fmax(2, lround(u / 7)), 0};
    st.half = 3 * st.t;
    int bad = draw_image_part(&c, p, st, labels);
    double note[4] = {0, 0, 0, 0};
    draw_panel(&c, p, (rn_rect){W, 0, ch, ch}, labels, note);
    for (int i = 0; labels && i < p->n; i++) memcpy(labels[i].colour, rn_person_colour(i), 3);
    if (layout) *layout = (rn_people_layout){c.w, c.h, W, bad, {note[0], note[1], note[2], note[3]}};
    int rc = rn_canvas_write(&c, out, err);
    rn_canvas_free(&c);
    return rc;
}

/* The decoded image im shrunk by the whole factor r (a box average) into a new rgb. */
static rn_rgb shrink(const rn_image *im, int r)
{
    rn_rgb o = {.w = im->w / r > 0 ? im->w / r : 1, .h = im->h / r > 0 ? im->h / r : 1};
    o.px = rn_xmalloc((size_t)3 * o.w * o.h);
    uint32_t *acc = rn_xcalloc((size_t)3 * o.w, sizeof *acc);
    for (int y = 0; y < o.h; y++) {
        memset(acc, 0, sizeof *acc * 3 * (size_t)o.w);
        int n = 0;
        for (int yy = y * r; yy < (y + 1) * r && yy < im->h; yy++, n++) {
            const uint8_t *row = im->px + im->stride * (size_t)yy;
            for (int x = 0; x < o.w; x++)
                for (int xx = x * r; xx < (x + 1) * r && xx < im->w; xx++)
                    for (int c = 0; c < 3; c++) acc[3 * x + c] += row[3 * xx + c];
        }
        for (int x = 0; x < o.w; x++) {
            int cols = (x + 1) * r <= im->w ? r : im->w - x * r, cnt = cols * n;
            for (int c = 0; c < 3; c++) o.px[(size_t)3 * o.w * y + 3 * x + c] = (uint8_t)((acc[3 * x + c] + cnt / 2) / cnt);
        }
    }
    free(acc);
    return o;
}

/* The image file decoded for drawing, its longest side at most RN_DRAW_MAX_SIDE: a JPEG decoded at 1/2, 1/4
 * or 1/8 by libjpeg where that is enough, the rest by a box average; EXIF orientation applied. */
static int load_for_drawing(rn_rgb *out, const char *path, rn_err *err)
{
    rn_bytes file = {0};
    rn_image_info ii;
    rn_image im = {0};
    if (rn_bytes_read(&file, path, err)) return -1;
    if (rn_image_probe(&ii, file.p, file.n, err)) {
        rn_bytes_free(&file);
        return rn_err_prefix(err, "%s", path);
    }
    int f = 1;
    while ((ii.w > ii.h ? ii.w : ii.h) > RN_DRAW_MAX_SIDE * f) f *= 2;
    int js = ii.is_jpeg ? (f < 8 ? f : 8) : 1;
    int o = ii.is_jpeg ? rn_exif_orientation(file.p, file.n) : 1;
    int rc = rn_image_decode(&im, file.p, file.n, js, NULL, err);
    rn_bytes_free(&file);
    if (rc) return rn_err_prefix(err, "%s", path);
    im.scale = 1; /* the whole (scaled) image: oriented as a full one */
    rn_image_orient(&im, o);
    *out = shrink(&im, f / js);
    rn_image_free(&im);
    return 0;
}

int rn_draw_people_file(const char *image, const rn_person_root *people, int n, const rn_people_pose *pose,
                        const rn_predict_info *intr, const char *out, rn_person_label *labels, rn_people_layout *layout,
                        rn_err *err)
{
    rn_rgb img = {0};
    if (load_for_drawing(&img, image, err)) return -1;
    /* the people and intrinsics in the drawn image's pixels (depths and camera coordinates as they are) */
    double sx = intr->width > 0 ? (double)img.w / intr->width : 1, sy = intr->height > 0 ? (double)img.h / intr->height : 1;
    rn_person_root *q = rn_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    for (int i = 0; i < n; i++) {
        q[i] = people[i];
        q[i].box[0] *= sx, q[i].box[1] *= sy, q[i].box[2] *= sx, q[i].box[3] *= sy;
        q[i].bbox[0] *= sx, q[i].bbox[1] *= sy, q[i].bbox[2] *= sx, q[i].bbox[3] *= sy;
        q[i].img[0] *= sx, q[i].img[1] *= sy;
    }
    rn_predict_info in = *intr;
    in.f[0] *= sx, in.f[1] *= sy, in.c[0] *= sx, in.c[1] *= sy, in.width = img.w, in.height = img.h;
    size_t nj = pose ? (size_t)(n > 0 ? n : 1) * (size_t)pose->J * 3 : 0;
    double *jimg = pose ? rn_xmalloc(nj * sizeof *jimg) : NULL;
    for (size_t k = 0; pose && k < (size_t)n * (size_t)pose->J * 3; k++)
        jimg[k] = pose->img[k] * (k % 3 == 0 ? sx : k % 3 == 1 ? sy : 1);
    rn_people_pose qp = pose ? *pose : (rn_people_pose){0};
    qp.img = jimg;
    rn_people_picture pic = {.image = &img, .people = q, .n = n, .intr = &in, .pose = pose ? &qp : NULL};
    int rc = rn_draw_people(&pic, out, labels, layout, err);
    free(q);
    free(jimg);
    free(img.px);
    return rc;
}
