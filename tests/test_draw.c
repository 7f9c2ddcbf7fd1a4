/* rn_rgb_write read back by libpng/libjpeg; rn_predict_box on hand-worked boxes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "data/image/draw.h"
#include "data/image/image.h"
#include "infer/predict.h"

/* rn_rgb_write read back through libpng / libjpeg (rn_image_load): PNG bit for bit, JPEG
 * (quality 92) within a few levels on a smooth picture; a bad extension or folder is refused. */
static void test_write(void)
{
    enum { W = 37, H = 23 };
    uint8_t px[3 * W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = px + 3 * (y * W + x);
            p[0] = (uint8_t)(x * 6), p[1] = (uint8_t)(y * 10), p[2] = (uint8_t)(128 + x - y);
        }
    rn_rgb img = {px, W, H};
    char dir[] = "/tmp/rn_draw_XXXXXX", path[64];
    RN_CHECK(mkdtemp(dir) != NULL, "temp folder");
    rn_err err = {{0}};
    const char *ext[2] = {"png", "JPG"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/a.%s", dir, ext[k]);
        rn_image im = {0};
        rn_bytes scratch = {0};
        int ok = !rn_rgb_write(path, &img, &err) && !rn_image_load(&im, &scratch, path, NULL, &err);
        RN_CHECK(ok && im.w == W && im.h == H, "%s written and read back %dx%d: %s", ext[k], im.w, im.h, err.msg);
        int worst = 0;
        for (int y = 0; ok && y < H; y++)
            for (int i = 0; i < 3 * W; i++) {
                int d = abs((int)im.px[(size_t)y * im.stride + i] - px[3 * y * W + i]);
                worst = d > worst ? d : worst;
            }
        RN_CHECK(ok && worst <= (k ? 8 : 0), "%s pixels within %d: worst %d", ext[k], k ? 8 : 0, worst);
        rn_image_free(&im);
        rn_bytes_free(&scratch);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/a.bmp", dir);
    RN_CHECK(rn_rgb_write(path, &img, &err) && strstr(err.msg, "a.bmp"), "unknown extension: %s", err.msg);
    snprintf(path, sizeof path, "%s/no/a.png", dir);
    RN_CHECK(rn_rgb_write(path, &img, &err) && strstr(err.msg, "no/a.png"), "missing folder: %s", err.msg);
    rmdir(dir);
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
    test_write();
    test_boxes();
    RN_CHECK_DONE();
}
