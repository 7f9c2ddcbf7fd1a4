/* rn_draw against hand-drawn expectations: rectangle, cross and clipping
 * pixel by pixel; rn_predict_box on hand-worked boxes. */
#include <string.h>

#include "check.h"
#include "data/draw.h"
#include "train/predict.h"

static int is(const rn_rgb *img, int x, int y, const uint8_t c[3])
{
    return !memcmp(img->px + 3 * ((size_t)y * img->w + x), c, 3);
}

static int count(const rn_rgb *img, const uint8_t c[3])
{
    int n = 0;
    for (int y = 0; y < img->h; y++)
        for (int x = 0; x < img->w; x++) n += is(img, x, y, c);
    return n;
}

static void test_shapes(void)
{
    static const uint8_t g[3] = {0, 255, 0};
    uint8_t px[3 * 20 * 10];
    memset(px, 0, sizeof px);
    rn_rgb img = {px, 20, 10};
    rn_draw_rect(&img, 2, 1, 11, 6, 2, g);   /* 10 x 6 outer, 6 x 2 hole */
    RN_CHECK(count(&img, g) == 10 * 6 - 6 * 2, "rect pixels %d", count(&img, g));
    RN_CHECK(is(&img, 2, 1, g) && is(&img, 11, 6, g) && is(&img, 3, 3, g) && !is(&img, 4, 3, g), "rect corners/hole");
    memset(px, 0, sizeof px);
    rn_draw_cross(&img, 5, 5, 3, 1, g);       /* 7 + 7 - 1 */
    RN_CHECK(count(&img, g) == 13, "cross pixels %d", count(&img, g));
    RN_CHECK(is(&img, 2, 5, g) && is(&img, 8, 5, g) && is(&img, 5, 2, g) && is(&img, 5, 8, g), "cross arms");
    memset(px, 0, sizeof px);
    rn_draw_rect(&img, -5, -5, 100, 100, 1, g);   /* entirely outside: nothing */
    rn_draw_cross(&img, -10, 4, 3, 1, g);
    RN_CHECK(count(&img, g) == 0, "clipped shapes drew %d pixels", count(&img, g));
    rn_draw_fill(&img, 18, 8, 25, 30, g);          /* partly inside: 2 x 2 */
    RN_CHECK(count(&img, g) == 4, "clipped fill %d", count(&img, g));
}

static void test_boxes(void)
{
    rn_err err = {{0}};
    double out[4];
    const double b1[4] = {100, 50, 80, 180};   /* x2 = 179, y2 = 229 -> w 79, h 179 -> 179 x 179 * 1.25 */
    RN_CHECK(rn_predict_box(out, b1, 256, 256, &err) == 0, "%s", err.msg);
    RN_CHECK(out[2] == 223.75 && out[3] == 223.75 && out[0] == 139.5 - 111.875 && out[1] == 139.5 - 111.875,
             "process_bbox %g %g %g %g", out[0], out[1], out[2], out[3]);
    const double outside[4] = {300, 10, 20, 20}, empty[4] = {10, 10, 0, 20}, left[4] = {-50, 0, 50, 10};
    RN_CHECK(rn_predict_box(out, outside, 256, 256, &err) && strstr(err.msg, "outside"), "%s", err.msg);
    RN_CHECK(rn_predict_box(out, empty, 256, 256, &err) && strstr(err.msg, "empty"), "%s", err.msg);
    RN_CHECK(rn_predict_box(out, left, 256, 256, &err) && strstr(err.msg, "outside"), "%s", err.msg);
}

int main(void)
{
    test_shapes();
    test_boxes();
    RN_CHECK_DONE();
}
