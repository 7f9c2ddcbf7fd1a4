/* rn_labels: greedy placement of text labels so that none overlaps another
 * or leaves its area (image labels of the demo/predict picture, dot labels
 * of the bird's-eye view). Geometry only; no drawing.
 *
 *   rn_label_req req[2] = {{.anchor = {40, 30, 60, 150}, .w = 80, .h = 20},
 *                          {.anchor = {50, 35, 60, 150}, .w = 80, .h = 20}};
 *   rn_rect out[2];
 *   int moved[2];
 *   int bad = rn_labels_place(out, moved, req, 2, (rn_rect){0, 0, 640, 480}, NULL, 0);
 *   // bad == 0: out[] are pairwise disjoint and inside the area; moved[i] = 1
 *   // when label i is not right above its anchor or inside its top (draw a
 *   // leader line to it)
 *
 * Each label tries positions beside its anchor (above, inside the top, below,
 * right, left; as is, then slid into the area), then every position of a grid
 * over the area (step h / 2), nearest the anchor first: first those clear of
 * the labels placed before it and of `avoid` (say, root markers), then those
 * clear of the labels only. A label with no free position at all keeps a
 * position beside its anchor and is counted in the return value.
 */
#ifndef RN_VIZ_LABELS_H
#define RN_VIZ_LABELS_H

typedef struct rn_rect {
    double x, y, w, h; /* top-left, size (pixels) */
} rn_rect;

typedef struct rn_label_req {
    rn_rect anchor; /* what the label names: a box, or a point (w = h = 0) */
    double w, h;    /* label size */
    double gap;     /* distance kept from a point anchor (pixels) */
} rn_label_req;

/* 1 when a and b share interior area (touching edges do not count). */
int rn_rect_overlap(rn_rect a, rn_rect b);
/* Distance between the nearest points of a and b (0 when they touch or overlap). */
double rn_rect_dist(rn_rect a, rn_rect b);

/* Places n labels (out: (n), moved: (n) or NULL; avoid: (n_avoid) or NULL).
 * Returns the number of labels that overlap another or the area's edge. */
int rn_labels_place(rn_rect *out, int *moved, const rn_label_req *req, int n, rn_rect area, const rn_rect *avoid,
                    int n_avoid);

#endif
