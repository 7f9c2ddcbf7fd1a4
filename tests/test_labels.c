/* Label placement (viz/labels.h) on hand-worked layouts, nice ticks, and the
 * people picture (viz/people.h): five overlapping people in a 640 x 480 frame
 * get labels that do not overlap, stay in the image and are drawn where
 * reported (their fill is the person's colour). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "data/image/image.h"
#include "viz/canvas.h"
#include "viz/labels.h"
#include "viz/people.h"

static int pairwise_disjoint(const rn_rect *r, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (rn_rect_overlap(r[i], r[j])) return 0;
    return 1;
}

static int all_inside(const rn_rect *r, int n, rn_rect a)
{
    for (int i = 0; i < n; i++)
        if (r[i].x < a.x || r[i].y < a.y || r[i].x + r[i].w > a.x + a.w || r[i].y + r[i].h > a.y + a.h) return 0;
    return 1;
}

static void test_geometry(void)
{
    rn_rect a = {0, 0, 10, 10}, b = {10, 0, 5, 5}, c = {13, 14, 2, 2};
    RN_CHECK(!rn_rect_overlap(a, b) && rn_rect_overlap(a, (rn_rect){9.5, 9.5, 1, 1}), "overlap");
    RN_CHECK(rn_rect_dist(a, b) == 0 && rn_rect_dist(a, c) == 5, "dist %g", rn_rect_dist(a, c)); /* 3-4-5 */
    /* Free space above: the label sits right on top of its box, not moved. */
    rn_label_req one = {{100, 100, 50, 120}, 80, 20, 0};
    rn_rect out;
    int moved;
    RN_CHECK(rn_labels_place(&out, &moved, &one, 1, (rn_rect){0, 0, 640, 480}, NULL, 0) == 0, "one label");
    RN_CHECK(out.x == 100 && out.y == 80 && out.w == 80 && out.h == 20 && !moved, "above: %g %g", out.x, out.y);
    /* Box at the top edge: no room above, the label goes inside the top. */
    one.anchor.y = 0;
    rn_labels_place(&out, &moved, &one, 1, (rn_rect){0, 0, 640, 480}, NULL, 0);
    RN_CHECK(out.x == 100 && out.y == 0 && !moved, "inside top: %g %g", out.x, out.y);
}

static void test_crowd(void)
{
    /* Five nearly identical boxes: five labels, disjoint, inside. */
    rn_label_req req[64];
    rn_rect out[64], area = {0, 0, 640, 480};
    int moved[64];
    for (int i = 0; i < 5; i++) req[i] = (rn_label_req){{200 + 8 * i, 150 + 5 * i, 120, 300}, 90, 22, 0};
    RN_CHECK(rn_labels_place(out, moved, req, 5, area, NULL, 0) == 0, "five labels placed");
    RN_CHECK(pairwise_disjoint(out, 5) && all_inside(out, 5, area), "five labels disjoint and inside");
    /* 64 identical anchors: still disjoint, some moved away (leader lines). */
    for (int i = 0; i < 64; i++) req[i] = (rn_label_req){{300, 200, 40, 80}, 60, 18, 0};
    RN_CHECK(rn_labels_place(out, moved, req, 64, area, NULL, 0) == 0, "64 labels placed");
    int nm = 0;
    for (int i = 0; i < 64; i++) nm += moved[i];
    RN_CHECK(pairwise_disjoint(out, 64) && all_inside(out, 64, area) && nm > 0, "64 labels: disjoint, %d moved", nm);
    /* No room at all: reported, not hidden. */
    RN_CHECK(rn_labels_place(out, moved, req, 3, (rn_rect){0, 0, 100, 30}, NULL, 0) == 2, "no room counted");
}

static void test_ticks(void)
{
    double t[16];
    int n = rn_nice_ticks(t, 16, 0, 7.3, 6);
    RN_CHECK(n == 8 && t[0] == 0 && t[7] == 7, "ticks 0..7.3: %d", n);
    n = rn_nice_ticks(t, 16, 0.013, 0.087, 4);
    RN_CHECK(n == 4 && fabs(t[0] - 0.02) < 1e-12 && fabs(t[3] - 0.08) < 1e-12, "ticks 0.013..0.087: %d %g", n, t[0]);
    n = rn_nice_ticks(t, 16, -3.2, 3.2, 6);
    RN_CHECK(n == 7 && t[0] == -3 && t[6] == 3, "ticks -3.2..3.2: %d", n);
    char s[32];
    rn_tick_label(s, sizeof s, 0.25, 0.05);
    RN_CHECK(!strcmp(s, "0.25"), "label '%s'", s);
}

static void test_picture(void)
{
    enum { W = 640, H = 480, N = 5 };
    rn_rgb img = {rn_xmalloc(3 * W * H), W, H};
    for (int i = 0; i < 3 * W * H; i++) img.px[i] = (uint8_t)(i % 251);
    rn_person_root r[N];
    memset(r, 0, sizeof r);
    for (int i = 0; i < N; i++) {
        double *b = r[i].box;
        b[0] = 220 + 15 * i, b[1] = 100 + 6 * i, b[2] = 130, b[3] = 330;
        r[i].img[0] = b[0] + 65, r[i].img[1] = b[1] + 150, r[i].img[2] = 4000 + 150 * i;
        r[i].cam[0] = (r[i].img[0] - 320) / 1500 * r[i].img[2], r[i].cam[2] = r[i].img[2];
    }
    rn_predict_info info = {W, H, {1500, 1500}, {320, 240}, 1, 1, 1};
    rn_people_picture pic = {&img, r, N, &info, NULL};
    rn_person_label lab[N];
    rn_people_layout lay;
    char path[] = "/tmp/rn_test_labels_XXXXXX.png";
    int fd = mkstemps(path, 4);
    RN_CHECK(fd >= 0, "temp file");
    close(fd);
    rn_err err = {{0}};
    RN_CHECK(rn_draw_people(&pic, path, lab, &lay, &err) == 0, "%s", err.msg);
    RN_CHECK(lay.width > W && lay.height == H && lay.panel_x == W && lay.overlaps == 0, "layout %d x %d, %d overlaps",
             lay.width, lay.height, lay.overlaps);
    rn_rect rect[N];
    for (int i = 0; i < N; i++) rect[i] = (rn_rect){lab[i].rect[0], lab[i].rect[1], lab[i].rect[2], lab[i].rect[3]};
    RN_CHECK(pairwise_disjoint(rect, N) && all_inside(rect, N, (rn_rect){0, 0, W, H}), "picture labels overlap");
    rn_image out = {0};
    rn_bytes scratch = {0};
    RN_CHECK(rn_image_load(&out, &scratch, path, NULL, &err) == 0, "%s", err.msg);
    for (int i = 0; i < N && out.px; i++) {
        int x = (int)rect[i].x + 2, y = (int)rect[i].y + 2;
        const uint8_t *p = out.px + out.stride * (size_t)y + 3 * (size_t)x;
        RN_CHECK(!memcmp(p, lab[i].colour, 3) && !memcmp(lab[i].colour, rn_person_colour(i), 3) && rect[i].w > 40 &&
                     rect[i].h >= 12,
                 "label %d not drawn at its rectangle: %d %d %d", i + 1, p[0], p[1], p[2]);
        RN_CHECK(lab[i].dot_rect[2] > 0 && lab[i].dot_rect[0] >= W, "person %d missing from the bird's-eye view", i + 1);
    }
    rn_image_free(&out);
    rn_bytes_free(&scratch);
    unlink(path);
    free(img.px);
}

int main(void)
{
    test_geometry();
    test_crowd();
    test_ticks();
    test_picture();
    RN_CHECK_DONE();
}
