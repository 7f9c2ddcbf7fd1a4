/* Real-photo JPEGs read as OpenCV reads them (tools/photo_ref.py run with $PY):
 *  - EXIF orientation 1..8: rn_image_load (demo) equals cv2.imread's default
 *    (orientation applied) pixel for pixel; rn_image_decode (datasets) equals
 *    IMREAD_IGNORE_ORIENTATION; a predict crop (rn_crop_sample with
 *    exif_orient) equals the crop of cv2's upright pixels, and without
 *    exif_orient the crop of the stored pixels;
 *  - CMYK JPEGs (Adobe-inverted, and without the Adobe marker) equal cv2.imread. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/load/augment.h"
#include "data/image/image.h"
#include "io/tensors.h"

static char dir[64];

/* 1 when img holds exactly the (h, w, 3) uint8 array in name. */
static int equals_npy(const rn_image *img, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rn_tensor t;
    rn_err err = {{0}};
    if (rn_npy_read(&t, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    int ok = t.dtype == RN_U8 && t.ndim == 3 && t.shape[0] == img->h && t.shape[1] == img->w && t.shape[2] == 3;
    size_t bad = 0;
    for (int y = 0; ok && y < img->h; y++)
        for (int x = 0; x < 3 * img->w; x++)
            bad += img->px[(size_t)y * img->stride + x] != ((uint8_t *)t.data)[((size_t)y * img->w) * 3 + x];
    if (ok && bad) fprintf(stderr, "%s: %zu of %d values differ\n", name, bad, img->w * img->h * 3);
    if (!ok) fprintf(stderr, "%s: shape differs from the %d x %d image\n", name, img->w, img->h);
    rn_tensor_free(&t);
    return ok && !bad;
}

static void test_orientation(void)
{
    rn_bytes file = {0};
    rn_image img = {0}, ref = {0};
    char path[256], name[64];
    for (int k = 1; k <= 8; k++) {
        snprintf(path, sizeof path, "%s/o%d.jpg", dir, k);
        rn_err err = {{0}};
        int o = 0;
        RN_CHECK(!rn_image_load(&img, &file, path, &o, &err), "load o%d: %s", k, err.msg);
        RN_CHECK(o == k, "o%d.jpg: orientation %d", k, o);
        snprintf(name, sizeof name, "o%d_cv.npy", k);
        RN_CHECK(equals_npy(&img, name), "o%d.jpg, orientation applied, equals cv2.imread", k);
        RN_CHECK(!rn_image_decode(&ref, file.p, file.n, 1, NULL, &err), "decode o%d: %s", k, err.msg);
        snprintf(name, sizeof name, "o%d_raw.npy", k);
        RN_CHECK(equals_npy(&ref, name), "o%d.jpg, orientation ignored, equals IMREAD_IGNORE_ORIENTATION", k);

        /* predict's crop of the file equals the crop of the upright pixels; a dataset's, of the stored ones */
        rn_crop_cfg cfg;
        rn_crop_cfg_default(&cfg);
        cfg.in_w = cfg.in_h = 32, cfg.out_w = cfg.out_h = 8;
        rn_aug aug;
        rn_aug_none(&aug);
        rn_crop_in in = {.path = path, .bbox = {3, 2, 14, 17}};
        float a[3 * 32 * 32], b[3 * 32 * 32];
        rn_crop_out oa, ob;
        rn_crop_ctx ctx = {0};
        for (int orient = 0; orient < 2; orient++) {
            cfg.exif_orient = orient;
            const rn_image *want = orient ? &img : &ref;
            int rc = rn_crop_sample(a, &oa, &ctx, &in, &aug, &cfg, &err) ||
                     rn_crop_sample_decoded(b, &ob, &ctx, want, &in, &aug, &cfg, &err);
            RN_CHECK(!rc && !memcmp(a, b, sizeof a) && oa.img_w == want->w && oa.img_h == want->h,
                     "o%d.jpg: crop with exif_orient %d equals the crop of the %s pixels (%s)", k, orient,
                     orient ? "upright" : "stored", err.msg);
        }
        rn_crop_ctx_free(&ctx);
    }
    rn_image_free(&img);
    rn_image_free(&ref);
    rn_bytes_free(&file);
}

static void test_cmyk(void)
{
    const char *names[2] = {"cmyk", "cmyk_noadobe"};
    rn_bytes file = {0};
    rn_image img = {0};
    char path[256], npy[64];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s.jpg", dir, names[i]);
        snprintf(npy, sizeof npy, "%s_cv.npy", names[i]);
        rn_err err = {{0}};
        RN_CHECK(!rn_image_load(&img, &file, path, NULL, &err), "%s: %s", path, err.msg);
        RN_CHECK(equals_npy(&img, npy), "%s equals cv2.imread", path);
    }
    rn_image_free(&img);
    rn_bytes_free(&file);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rn_photo_XXXXXX");
    RN_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    const char *py = getenv("PY") ? getenv("PY") : "/usr/bin/python3";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s tools/photo_ref.py %s", py, dir);
    int rc = system(cmd);
    RN_CHECK(rc == 0, "reference generation failed: %s", cmd);
    if (rc == 0) {
        test_orientation();
        test_cmyk();
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
