/* Greedy label placement: candidates beside the anchor, then a grid search. */
#include "viz/labels.h"

#include <math.h>
#include <stdlib.h>

#include "core/status.h"

int rn_rect_overlap(rn_rect a, rn_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

double rn_rect_dist(rn_rect a, rn_rect b)
{
    double dx = fmax(0, fmax(a.x - (b.x + b.w), b.x - (a.x + a.w)));
    double dy = fmax(0, fmax(a.y - (b.y + b.h), b.y - (a.y + a.h)));
    return hypot(dx, dy);
}

static int inside(rn_rect r, rn_rect area)
{
    return r.x >= area.x && r.y >= area.y && r.x + r.w <= area.x + area.w && r.y + r.h <= area.y + area.h;
}

static rn_rect slide_into(rn_rect r, rn_rect area)
{
    r.x = fmax(area.x, fmin(r.x, area.x + area.w - r.w));
    r.y = fmax(area.y, fmin(r.y, area.y + area.h - r.h));
    return r;
}

static int hits(rn_rect r, const rn_rect *set, int n)
{
    for (int i = 0; i < n; i++)
        if (rn_rect_overlap(r, set[i])) return 1;
    return 0;
}

enum { N_BESIDE = 12 };

/* Positions touching the anchor: the ones that need no leader line. */
static void beside(rn_rect *c, const rn_label_req *q, rn_rect area)
{
    rn_rect a = q->anchor;
    double w = q->w, h = q->h, g = a.w > 0 || a.h > 0 ? 0 : q->gap;
    const rn_rect raw[N_BESIDE / 2] = {
        {a.x, a.y - h - g, w, h},                       /* above, left-aligned */
        {a.x, a.y, w, h},                               /* inside the top */
        {a.x, a.y + a.h + g, w, h},                     /* below */
        {a.x + a.w + g, a.y + a.h / 2 - h / 2, w, h},   /* right */
        {a.x - w - g, a.y + a.h / 2 - h / 2, w, h},     /* left */
        {a.x + a.w - w, a.y - h - g, w, h},             /* above, right-aligned */
    };
    for (int i = 0; i < N_BESIDE / 2; i++) c[i] = raw[i], c[N_BESIDE / 2 + i] = slide_into(raw[i], area);
}

typedef struct spot {
    double d;
    rn_rect r;
} spot;

static int by_distance(const void *a, const void *b)
{
    double x = ((const spot *)a)->d, y = ((const spot *)b)->d;
    return (x > y) - (x < y);
}

/* Grid positions over the area, nearest the anchor first. Returns the count. */
static int grid(spot **out, const rn_label_req *q, rn_rect area)
{
    double step = fmax(2, q->h / 2);
    int nx = (int)floor((area.w - q->w) / step) + 1, ny = (int)floor((area.h - q->h) / step) + 1;
    if (nx < 1 || ny < 1) return 0;
    spot *s = rn_xmalloc((size_t)nx * (size_t)ny * sizeof *s);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            rn_rect r = {area.x + i * step, area.y + j * step, q->w, q->h};
            s[j * nx + i] = (spot){rn_rect_dist(r, q->anchor), r};
        }
    qsort(s, (size_t)nx * (size_t)ny, sizeof *s, by_distance);
    *out = s;
    return nx * ny;
}

/* The first free candidate; strict: also clear of avoid. -1 when none. */
static int first_free(const rn_rect *c, int n, const rn_rect *placed, int np, rn_rect area, const rn_rect *avoid,
                      int na, int strict)
{
    for (int i = 0; i < n; i++)
        if (inside(c[i], area) && !hits(c[i], placed, np) && !(strict && hits(c[i], avoid, na))) return i;
    return -1;
}

/* Candidates that need no leader line: above the anchor or inside its top, as is or slid into the area. */
static int at_home(int i) { return i % (N_BESIDE / 2) < 2; }

static int place_one(rn_rect *out, int *home, const rn_label_req *q, const rn_rect *placed, int np, rn_rect area,
                     const rn_rect *avoid, int na)
{
    rn_rect c[N_BESIDE];
    beside(c, q, area);
    spot *s = NULL;
    int ns = grid(&s, q, area), found = -1, beside_i = -1;
    rn_rect *g = rn_xmalloc((size_t)(ns > 0 ? ns : 1) * sizeof *g);
    for (int i = 0; i < ns; i++) g[i] = s[i].r;
    free(s);
    /* Clear of everything beside, then anywhere; then clear of labels only. */
    for (int strict = 1; strict >= 0 && found < 0 && beside_i < 0; strict--) {
        beside_i = first_free(c, N_BESIDE, placed, np, area, avoid, na, strict);
        if (beside_i < 0) found = first_free(g, ns, placed, np, area, avoid, na, strict);
    }
    *out = beside_i >= 0 ? c[beside_i] : found >= 0 ? g[found] : c[N_BESIDE / 2];
    *home = beside_i >= 0 && at_home(beside_i) && rn_rect_dist(*out, q->anchor) <= q->gap + 1;
    free(g);
    return beside_i >= 0 || found >= 0 ? 0 : 1;
}

int rn_labels_place(rn_rect *out, int *moved, const rn_label_req *req, int n, rn_rect area, const rn_rect *avoid,
                    int n_avoid)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int home;
        bad += place_one(&out[i], &home, &req[i], out, i, area, avoid, avoid ? n_avoid : 0);
        if (moved) moved[i] = !home;
    }
    return bad;
}
