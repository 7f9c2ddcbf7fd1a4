/* Crop and augmentation: hand-worked values, and parity with the authors'
 * OpenCV + torchvision pipeline (tools/cv_ref.py run with $PY). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "data/load/augment.h"
#include "data/image/prep.h"

static char tmpdir[256];

static int read_raw(void *dst, size_t n, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(dst, 1, n, f);
    fclose(f);
    return got == n ? 0 : -1;
}

static void test_affine_by_hand(void)
{
    double m[6], inv[6], x, y;
    RN_CHECK(rn_affine_from_box(m, 150.0, 100.0, 64.0, 128.0, 256, 256, 0.0) == 0, "affine of an ordinary box");
    double want[6] = {4.0, 0.0, 128 - 150 * 4.0, 0.0, 2.0, 128 - 100 * 2.0};
    for (int k = 0; k < 6; k++) RN_CHECK(fabs(m[k] - want[k]) < 1e-9, "affine[%d] %g != %g", k, m[k], want[k]);
    rn_affine_invert(inv, m);
    rn_affine_apply(&x, &y, inv, 128, 128);
    RN_CHECK(fabs(x - 150) < 1e-9 && fabs(y - 100) < 1e-9, "inverse maps patch centre to box centre");
    /* 90 degrees: the box's down direction (0, h/2) rotates to (-h/2, 0) and maps to the patch's down. */
    rn_affine_from_box(m, 0.0, 0.0, 100.0, 100.0, 256, 256, 90.0);
    rn_affine_apply(&x, &y, m, -50.0, 0.0);
    RN_CHECK(fabs(x - 128) < 1e-4 && fabs(y - 256) < 1e-4, "rot 90 maps (-50,0) to (128,256): got %g %g", x, y);
    /* A box narrower than the float spacing at its centre (0.0039 at x = 60000): c0 + w/2 rounds to c0, the
     * points are collinear. It used to trip RN_ASSERT(det != 0); now it is refused. */
    RN_CHECK(rn_affine_from_box(m, 60000.5, 100.0, 0.001, 0.001, 256, 256, 0.0) == -1, "degenerate box refused");
    RN_CHECK(rn_affine_from_box(m, 60000.5, 100.0, 0.001, 0.001, 256, 256, 30.0) == -1, "degenerate box, rotated");
}

static void test_normalize_by_hand(void)
{
    uint8_t px[6] = {100, 200, 250, 0, 10, 255};
    float out[6], color[3] = {1.0f, 1.2f, 0.8f};
    float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
    rn_normalize_chw(out, px, color, 1.0f, mean, sd, 2, 1);
    /* planar: R = (100, 0), G = (200, 10) * 1.2 -> (240, 12), B = (250, 255) * 0.8 -> (200, 204) */
    float want[6] = {(100 - 0.485f) / 0.229f, (0 - 0.485f) / 0.229f, (240 - 0.456f) / 0.224f,
                     (12 - 0.456f) / 0.224f,  (200 - 0.406f) / 0.225f, (204 - 0.406f) / 0.225f};
    for (int k = 0; k < 6; k++) RN_CHECK(fabsf(out[k] - want[k]) < 1e-3f, "normalize[%d] %g != %g", k, out[k], want[k]);
    uint8_t hi[3] = {250, 250, 250};
    float o3[3], c3[3] = {1.2f, 1.2f, 1.2f};
    rn_normalize_chw(o3, hi, c3, 1.0f / 255, mean, sd, 1, 1);
    RN_CHECK(fabsf(o3[0] - (1.0f - 0.485f) / 0.229f) < 1e-5f, "colour clip at 255 then /255: %g", o3[0]);
}

/* The crop's matrix is cv2.getAffineTransform's to the last bit (tools/cv_ref.py
 * affine.f64: 2000 boxes over a 2048 x 2048 frame, rotated and not). */
static void test_affine_exact(void)
{
    enum { N = 2000, ROW = 11 };
    double *r = malloc(sizeof(double) * N * ROW);
    int bad = read_raw(r, sizeof(double) * N * ROW, tmpdir, "affine.f64");
    RN_CHECK(!bad, "affine.f64 reference");
    int differ = 0;
    double worst = 0;
    for (int i = 0; !bad && i < N; i++) {
        const double *c = r + (size_t)i * ROW;
        double m[6];
        RN_CHECK(rn_affine_from_box(m, c[0], c[1], c[2], c[3], 256, 256, c[4]) == 0, "affine case %d", i);
        differ += memcmp(m, c + 5, sizeof m) != 0;
        for (int k = 0; k < 6; k++) worst = fmax(worst, fabs(m[k] - c[5 + k]));
    }
    printf("affine: %d of %d matrices differ from cv2.getAffineTransform (max |diff| %.3g)\n", differ, N, worst);
    RN_CHECK(differ == 0, "%d of %d matrices differ from cv2.getAffineTransform", differ, N);
    free(r);
}

/* A box kept in float64 (rn_crop_in.center, as rn_sample.center from the readers
 * and predict) gives the authors' crop matrix to the bit: their centre is
 * x + 0.5 w in float64, rounded once to float32 (tools/cv_ref.py center.f64). */
static void test_center_exact(void)
{
    enum { N = 200, ROW = 10 };
    double *r = malloc(sizeof(double) * N * ROW);
    int bad = read_raw(r, sizeof(double) * N * ROW, tmpdir, "center.f64");
    RN_CHECK(!bad, "center.f64 reference");
    char path[1024];
    snprintf(path, sizeof path, "%s/img.jpg", tmpdir);
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    rn_aug aug;
    rn_aug_none(&aug);
    rn_crop_ctx ctx = {0};
    float *dst = malloc(sizeof(float) * 3 * 256 * 256);
    int differ = 0;
    for (int i = 0; !bad && i < N; i++) {
        const double *c = r + (size_t)i * ROW;
        rn_crop_in in = {.path = path, .has_center = 1, .center = {c[0] + 0.5 * c[2], c[1] + 0.5 * c[3]}};
        for (int k = 0; k < 4; k++) in.bbox[k] = (float)c[k];
        rn_crop_out out;
        rn_err err = {0};
        RN_CHECK(rn_crop_sample(dst, &out, &ctx, &in, &aug, &cfg, &err) == 0, "center case %d: %s", i, err.msg);
        differ += memcmp(out.trans, c + 4, sizeof out.trans) != 0;
    }
    printf("float64 box centres: %d of %d crop matrices differ from the authors'\n", differ, N);
    RN_CHECK(differ == 0, "%d of %d crop matrices differ from the authors' (float64 centre)", differ, N);
    free(dst);
    free(r);
    rn_crop_ctx_free(&ctx);
}

static void test_aug_draw(void)
{
    rn_rng r;
    rn_rng_seed(&r, 3);
    int n = 20000, rotated = 0, flipped = 0, bad = 0;
    double csum = 0;
    for (int i = 0; i < n; i++) {
        rn_aug a;
        rn_aug_draw(&a, &r);
        rotated += a.rot != 0;
        flipped += a.flip;
        bad += fabs(a.rot) > 60.0;
        for (int c = 0; c < 3; c++) {
            bad += a.color[c] < 0.8f || a.color[c] > 1.2f;
            csum += a.color[c];
        }
    }
    RN_CHECK(fabs(rotated / (double)n - 0.6) < 0.02, "rotation rate %g", rotated / (double)n);
    RN_CHECK(fabs(flipped / (double)n - 0.5) < 0.02, "flip rate %g", flipped / (double)n);
    RN_CHECK(fabs(csum / (3.0 * n) - 1.0) < 0.005, "colour mean %g", csum / (3.0 * n));
    RN_CHECK(bad == 0, "%d draws out of range", bad);
}

typedef struct ref_case {
    char name[64];
    rn_crop_in in;
    rn_aug aug;
} ref_case;

static int read_cases(ref_case *cs, int max, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    double v[12];
    while (n < max && fscanf(f, "%63s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", cs[n].name, &v[0], &v[1], &v[2],
                             &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) == 13) {
        cs[n].in = (rn_crop_in){0};
        for (int k = 0; k < 4; k++) cs[n].in.bbox[k] = (float)v[k];
        rn_aug_none(&cs[n].aug);
        cs[n].aug.rot = v[4];
        cs[n].aug.flip = (int)v[5];
        for (int c = 0; c < 3; c++) cs[n].aug.color[c] = (float)v[6 + c];
        cs[n].in.root[0] = (float)v[9], cs[n].in.root[1] = (float)v[10], cs[n].in.root_vis = (float)v[11];
        n++;
    }
    fclose(f);
    return n;
}

static void compare_case(int i, const ref_case *c, rn_crop_ctx *ctx, const rn_crop_cfg *cfg, int tol, long *near, long *total,
                         double *tensor_err)
{
    size_t np = 256 * 256 * 3;
    uint8_t *ref = malloc(np);
    float *reft = malloc(np * sizeof(float)), *got = malloc(np * sizeof(float));
    double root[3];
    char name[64], path[1024];
    snprintf(path, sizeof path, "%s/%.63s", tmpdir, c->name);
    rn_crop_in in = c->in;
    in.path = path;
    rn_crop_out out;
    rn_err err = {0};
    int rc = rn_crop_sample(got, &out, ctx, &in, &c->aug, cfg, &err);
    RN_CHECK(rc == 0, "case %d: %s", i, err.msg);
    snprintf(name, sizeof name, "case_%d.u8", i);
    int r1 = read_raw(ref, np, tmpdir, name);
    snprintf(name, sizeof name, "case_%d.f32", i);
    int r2 = read_raw(reft, np * sizeof(float), tmpdir, name);
    snprintf(name, sizeof name, "case_%d.root", i);
    int r3 = read_raw(root, sizeof root, tmpdir, name);
    RN_CHECK(!r1 && !r2 && !r3, "case %d: reference files", i);
    if (!rc && !r1 && !r2 && !r3) {
        for (size_t k = 0; k < np; k++) *near += abs((int)ctx->patch[k] - (int)ref[k]) <= tol;
        *total += (long)np;
        /* where the warped pixel agrees exactly, the normalised value must too */
        for (size_t k = 0; k < np; k++) {
            size_t ch = k / (256 * 256), px = k % (256 * 256);
            if (ctx->patch[px * 3 + ch] == ref[px * 3 + ch]) *tensor_err = fmax(*tensor_err, fabs(got[k] - reft[k]));
        }
        RN_CHECK(fabs(out.root[0] - root[0]) < 1e-3 && fabs(out.root[1] - root[1]) < 1e-3,
                 "case %d root (%g, %g) vs (%g, %g)", i, out.root[0], out.root[1], root[0], root[1]);
        RN_CHECK(out.root_vis == (float)root[2], "case %d vis %g vs %g", i, out.root_vis, root[2]);
    }
    free(ref), free(reft), free(got);
}

#define N_SMALL_CASES 26 /* cases on img.jpg/img.png; then N_BIG_CASES on big.jpg (boxes > 2x the input) */
#define N_BIG_CASES 2

static void test_opencv_parity(const ref_case *cs)
{
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    rn_crop_ctx ctx = {0};
    long near = 0, total = 0;
    double terr = 0;
    for (int i = 0; i < N_SMALL_CASES; i++) compare_case(i, &cs[i], &ctx, &cfg, 0, &near, &total, &terr);
    double frac = total ? near / (double)total : 0;
    printf("opencv parity: %.5f%% of pixel values equal; normalised max err %.2e\n", 100 * frac, terr);
    RN_CHECK(near == total, "only %.5f%% of pixel values equal cv2's (the matrix is cv2's to the bit)", 100 * frac);
    RN_CHECK(terr < 1e-5, "normalised values differ by %g where pixels agree", terr);
    rn_crop_ctx_free(&ctx);
}

/* Boxes 2.3x and 4.1x the input: the default decode is full size and matches
 * cv2.imread + warpAffine exactly (every pixel value); fast_decode takes the
 * DCT-scaled path there (scale > 1) and then differs from the reference. */
static void test_default_decode_exact(const ref_case *cs)
{
    rn_crop_cfg cfg, fast;
    rn_crop_cfg_default(&cfg);
    fast = cfg;
    fast.fast_decode = 1;
    rn_crop_ctx ctx = {0};
    long near = 0, total = 0, fnear = 0, ftotal = 0;
    double terr = 0;
    for (int i = N_SMALL_CASES; i < N_SMALL_CASES + N_BIG_CASES; i++) {
        RN_CHECK(rn_crop_pick_scale(cs[i].in.bbox, &fast) > 1, "case %d: a fast decode would scale this box", i);
        RN_CHECK(rn_crop_pick_scale(cs[i].in.bbox, &cfg) == 1, "case %d: the default decode is full size", i);
        compare_case(i, &cs[i], &ctx, &cfg, 0, &near, &total, &terr);
        compare_case(i, &cs[i], &ctx, &fast, 1, &fnear, &ftotal, &terr);
    }
    double frac = total ? near / (double)total : 0, ffrac = ftotal ? fnear / (double)ftotal : 0;
    printf("boxes > 2x the input: default decode %.5f%% of pixel values equal, fast decode %.5f%% within 1 grey level\n",
           100 * frac, 100 * ffrac);
    RN_CHECK(near == total, "default decode: only %.5f%% of pixel values equal cv2's", 100 * frac);
    RN_CHECK(ffrac < 0.99, "fast decode: %.5f%% within 1 grey level, the scaled path was not taken", 100 * ffrac);
    rn_crop_ctx_free(&ctx);
}

/* Rows of the decoded region (img at x0, y0) that differ from the whole-image
 * decode, leaving out its first and last column: jpeg_crop_scanline starts and
 * ends the region on an iMCU boundary, where chroma upsampling lacks the
 * neighbour beyond it (the crop's 4 px margin keeps the warp off them). */
static long region_diff(const rn_image *roi, const rn_image *full)
{
    long d = 0;
    for (int y = 0; y < roi->h && roi->w > 2; y++)
        d += memcmp(roi->px + (size_t)y * roi->stride + 3,
                    full->px + (size_t)(roi->y0 + y) * full->stride + 3 * (size_t)(roi->x0 + 1), 3 * (size_t)(roi->w - 2)) != 0;
    return d;
}

/* Pixels of the prepared-frame region rg against the whole-image decode full:
 * *near counts those within 2 px of a point the crop samples (out->inv of each
 * patch pixel; the bilinear taps are within 1 px) that differ or lie outside
 * rg; the return value counts the other pixels of rg that differ, but on
 * rg's edge (chroma upsampling lacks the neighbour there): the stand-in MCUs
 * where the warp reads nothing, and the pixels next to them. */
static long prep_region_diff(long *near, const rn_image *rg, const rn_image *full, const rn_crop_out *out)
{
    uint8_t *mark = calloc((size_t)rg->w * rg->h + 1, 1);
    for (int y = 0; y < 256; y++)
        for (int x = 0; x < 256; x++) {
            double px, py;
            rn_affine_apply(&px, &py, out->inv, x, y);
            int fx = (int)floor(px), fy = (int)floor(py);
            for (int v = fy - 2; v <= fy + 3; v++)
                for (int u = fx - 2; u <= fx + 3; u++) {
                    if (u < 0 || v < 0 || u >= full->w || v >= full->h) continue;
                    int ru = u - rg->x0, rv = v - rg->y0;
                    if (ru < 0 || rv < 0 || ru >= rg->w || rv >= rg->h) (*near)++;
                    else mark[(size_t)rv * rg->w + ru] = 1;
                }
        }
    long other = 0;
    for (int v = 0; v < rg->h; v++)
        for (int u = 0; u < rg->w; u++) {
            const uint8_t *a = rg->px + (size_t)v * rg->stride + 3 * (size_t)u;
            const uint8_t *b = full->px + (size_t)(rg->y0 + v) * full->stride + 3 * (size_t)(rg->x0 + u);
            if (memcmp(a, b, 3) == 0) continue;
            if (mark[(size_t)v * rg->w + u]) (*near)++;
            else other += u > 0 && v > 0 && u < rg->w - 1 && v < rg->h - 1;
        }
    free(mark);
    return other;
}

/* Prepared frames (data/image/prep.h): 40 random crops of name give rn_crop_sample's
 * tensor and root bit for bit with and without prep_dir, the decoded region
 * equals the whole-image decode near every point the crop samples, stand-in
 * MCUs (not decoded) fill the rest of the region in rotated crops, and the
 * prepared file was read (the crop's JPEG put together). */
static void test_prep_equals_source(const char *name, const char *src_dir, int w, int h, double box_max)
{
    char path[1024], prep_dir[1024], prep[4200];
    snprintf(path, sizeof path, "%s/%s", src_dir, name);
    snprintf(prep_dir, sizeof prep_dir, "%s/prep", tmpdir);
    mkdir(prep_dir, 0755);
    rn_prep_path(prep, sizeof prep, prep_dir, path);
    rn_prep_info info;
    rn_err err = {0};
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && info.built && info.w == w && info.h == h, "%s: %s", name,
             err.msg);
    rn_image full = {0};
    rn_bytes scratch = {0};
    RN_CHECK(rn_image_load(&full, &scratch, path, NULL, &err) == 0, "%s", err.msg);
    rn_crop_cfg cfg, pcfg;
    rn_crop_cfg_default(&cfg);
    pcfg = cfg;
    pcfg.prep_dir = prep_dir;
    rn_crop_ctx ctx = {0}, pctx = {0};
    float *t = malloc(sizeof(float) * 3 * 256 * 256), *t2 = malloc(sizeof(float) * 3 * 256 * 256);
    rn_rng r;
    rn_rng_seed(&r, 17);
    long diff = 0, near = 0, used = 0, standin = 0, rotated = 0;
    for (int i = 0; i < 40; i++) {
        rn_crop_in in = {.path = path, .root_vis = 1};
        in.bbox[2] = (float)(20 + (box_max - 20) * rn_rng_uniform(&r)), in.bbox[3] = in.bbox[2];
        in.bbox[0] = (float)(-100 + (w + 60) * rn_rng_uniform(&r)), in.bbox[1] = (float)(-100 + (h + 20) * rn_rng_uniform(&r));
        in.root[0] = in.bbox[0] + 7, in.root[1] = in.bbox[1] + 9;
        rn_aug aug;
        rn_aug_draw(&aug, &r);
        rn_crop_out a, b;
        pctx.sub.n = 0;
        RN_CHECK(rn_crop_sample(t, &a, &ctx, &in, &aug, &cfg, &err) == 0, "%s", err.msg);
        RN_CHECK(rn_crop_sample(t2, &b, &pctx, &in, &aug, &pcfg, &err) == 0, "%s", err.msg);
        used += pctx.sub.n > 0;
        diff += memcmp(t, t2, sizeof(float) * 3 * 256 * 256) != 0 || memcmp(a.inv, b.inv, sizeof a.inv) ||
                a.root[0] != b.root[0] || a.root[1] != b.root[1] || a.root_vis != b.root_vis;
        standin += prep_region_diff(&near, &pctx.img, &full, &b) > 0;
        rotated += aug.rot != 0;
    }
    printf("%s (%dx%d): prepared frame %.2f MB, 40 crops: %ld tensors differ, %ld pixels near the samples differ or "
           "are missing, %ld crops (%ld rotated) have stand-in MCUs, %ld read the prepared file\n", name, w, h,
           (double)info.bytes / 1e6, diff, near, standin, rotated, used);
    RN_CHECK(diff == 0, "%s: prepared-frame crops differ from the source's in %ld of 40", name, diff);
    RN_CHECK(near == 0, "%s: %ld prepared-frame pixels near the samples differ from the whole-image decode", name, near);
    if (w >= 256) RN_CHECK(standin > 0, "%s: no crop put stand-in MCUs where the warp reads nothing", name);
    RN_CHECK(used == 40, "%s: the prepared file served %ld of 40 crops", name, used);
    /* (a 16 x 12 frame's few MCUs take about as long as a reading of the clock) */
    if (w >= 256)
        RN_CHECK(pctx.stage_s[RN_CROP_STAGE_HUFF] > 0 && ctx.stage_s[RN_CROP_STAGE_HUFF] == 0,
                 "%s: rn_huff's time is counted for the prepared crops only: %g s, %g s from the source", name,
                 pctx.stage_s[RN_CROP_STAGE_HUFF], ctx.stage_s[RN_CROP_STAGE_HUFF]);
    free(t), free(t2);
    rn_image_free(&full), rn_bytes_free(&scratch);
    rn_crop_ctx_free(&ctx), rn_crop_ctx_free(&pctx);
}

/* Rewrites prep with its byte at i xor'd with x. */
static void flip_byte(const char *prep, const rn_bytes *good, size_t i, uint8_t x)
{
    good->p[i] ^= x;
    FILE *f = fopen(prep, "wb");
    RN_CHECK(f && fwrite(good->p, 1, good->n, f) == good->n && fclose(f) == 0, "damage %s", prep);
    good->p[i] ^= x;
}

/* One bit flipped in a prepared frame's JPEG tables (a DQT entry) or in one MCU's entropy-coded data (no
 * marker made or unmade): never decoded as if right. The tables are refused at load (their CRC), the MCU by
 * the crop that reads it (naming the prepared file); 0606e47 decoded both into other pixels. */
static void test_prep_flips(const char *path, const char *prep, rn_crop_ctx *ctx, const rn_crop_cfg *cfg)
{
    rn_bytes good = {0};
    rn_err err = {0};
    rn_prep_file file = {0};
    int w, h;
    RN_CHECK(rn_bytes_read(&good, prep, &err) == 0, "%s", err.msg);
    size_t dqt = 0, sos = 0;
    for (size_t i = 0; i + 1 < good.n && !sos; i++) {
        if (good.p[i] == 0xFF && good.p[i + 1] == 0xDB && !dqt) dqt = i;
        if (good.p[i] == 0xFF && good.p[i + 1] == 0xDA && dqt) sos = i;
    }
    RN_CHECK(dqt && sos, "the prepared frame's JPEG has DQT and SOS markers");
    flip_byte(prep, &good, dqt + 20, 0x01);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == -1 && strstr(err.msg, "CRC") && strstr(err.msg, prep),
             "a flipped quantisation table byte is refused: %s", err.msg);
    rn_prep_close(&file);
    /* a byte of entropy-coded data three quarters in, neither 0xFF nor next to one, becoming none */
    size_t at = good.n * 3 / 4;
    while (at + 2 < good.n && (good.p[at - 1] == 0xFF || good.p[at] == 0xFF || good.p[at] == 0xFE || good.p[at + 1] == 0xFF))
        at++;
    flip_byte(prep, &good, at, 0x01);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0, "the tables intact, it loads: %s", err.msg);
    rn_image img = {0};
    rn_bytes sub = {0};
    const int roi[4] = {0, 0, w, h};
    RN_CHECK(rn_prep_crop(&img, &sub, &file, roi, NULL, &err) == -1 && strstr(err.msg, "CRC mismatch in MCU"),
             "a flipped entropy-coded bit is refused by the crop: %s", err.msg);
    rn_prep_close(&file);
    float *t = malloc(sizeof(float) * 3 * 256 * 256);
    rn_crop_in in = {.path = path, .bbox = {0, 0, (double)w, (double)h}, .root = {900, 800}, .root_vis = 1};
    rn_aug aug;
    rn_aug_none(&aug);
    rn_crop_out out;
    RN_CHECK(rn_crop_sample(t, &out, ctx, &in, &aug, cfg, &err) == -1 && strstr(err.msg, prep) && strstr(err.msg, "CRC"),
             "the sample is refused naming the prepared file: %s", err.msg);
    free(t);
    rn_image_free(&img), rn_bytes_free(&sub), rn_bytes_free(&good), rn_prep_file_free(&file);
}

/* Prepared files: reused when up to date, refused when truncated or damaged
 * (never decoded), ignored when the source changed, rebuilt by rn_prep_build. */
static void test_prep_files(void)
{
    char path[1024], prep_dir[1024], prep[4200];
    snprintf(path, sizeof path, "%s/f2048.jpg", tmpdir);
    snprintf(prep_dir, sizeof prep_dir, "%s/prep", tmpdir);
    rn_prep_path(prep, sizeof prep, prep_dir, path);
    rn_prep_info info;
    rn_err err = {0};
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && !info.built, "an up-to-date file is reused: %s", err.msg);
    rn_bytes good = {0};
    rn_prep_file file = {0};
    RN_CHECK(rn_bytes_read(&good, prep, &err) == 0 && good.n == info.bytes, "%s", err.msg);
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    cfg.prep_dir = prep_dir;
    rn_crop_ctx ctx = {0};
    float *t = malloc(sizeof(float) * 3 * 256 * 256);
    rn_crop_in in = {.path = path, .bbox = {500, 400, 900, 900}, .root = {900, 800}, .root_vis = 1};
    rn_aug aug;
    rn_aug_none(&aug);
    rn_crop_out out;
    int w, h;
    /* a crop reads the header, the index and its own MCUs' rows, not the whole file */
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) == 0 && ctx.sub.n > 0, "prepared crop: %s", err.msg);
    RN_CHECK(ctx.bytes_read > 0 && ctx.bytes_read < (int64_t)good.n / 2, "a 900 px crop read %lld of the file's %zu bytes",
             (long long)ctx.bytes_read, good.n);
    /* cut short after it was opened (its header read and accepted): the crop's read comes short and is refused */
    rn_image img = {0};
    rn_bytes sub = {0};
    const int roi[4] = {500, 1400, 900, 600};
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0, "load: %s", err.msg);
    RN_CHECK(truncate(prep, (off_t)good.n / 2) == 0, "truncate %s", prep);
    RN_CHECK(rn_prep_crop(&img, &sub, &file, roi, NULL, &err) == -1 && strstr(err.msg, "ends early"),
             "cut short while open: %s", err.msg);
    rn_prep_close(&file);
    rn_image_free(&img), rn_bytes_free(&sub);
    FILE *f = fopen(prep, "wb");
    RN_CHECK(f && fwrite(good.p, 1, good.n / 2, f) == good.n / 2 && fclose(f) == 0, "truncate %s", prep);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == -1 && strstr(err.msg, "truncated"), "truncated: %s", err.msg);
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) == -1 && strstr(err.msg, prep), "truncated file refused "
             "by the crop: %s", err.msg);
    good.p[200] ^= 0x40; /* in the MCU index */
    f = fopen(prep, "wb");
    RN_CHECK(f && fwrite(good.p, 1, good.n, f) == good.n && fclose(f) == 0, "damage %s", prep);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == -1 && strstr(err.msg, "CRC"), "damaged: %s", err.msg);
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && info.built, "a damaged file is rebuilt: %s", err.msg);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0 && w == 2048, "rebuilt file loads: %s", err.msg);
    /* markers written over the MCU data of the file's second half (no CRC covers them): the crop of its rows is
     * refused, naming the prepared file and what to do */
    rn_prep_close(&file);
    RN_CHECK(rn_bytes_read(&good, prep, &err) == 0, "%s", err.msg);
    for (size_t i = good.n / 2; i + 2 < good.n; i += 2) good.p[i] = 0xFF, good.p[i + 1] = 0xD3;
    f = fopen(prep, "wb");
    RN_CHECK(f && fwrite(good.p, 1, good.n, f) == good.n && fclose(f) == 0, "damage %s", prep);
    in.bbox[1] = 1100;
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) == -1 && strstr(err.msg, prep) &&
                 strstr(err.msg, "corrupt prepared frame") && strstr(err.msg, "in MCU"),
             "damaged MCU data refused: %s", err.msg);
    in.bbox[1] = 400;
    unlink(prep);
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && info.built, "a deleted file is rebuilt: %s", err.msg);
    test_prep_flips(path, prep, &ctx, &cfg);
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && info.built, "a damaged file is rebuilt: %s", err.msg);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0, "rebuilt file loads: %s", err.msg);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    RN_CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0, "touch %s", path);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 1, "a changed source makes the file stale");
    ctx.sub.n = 0;
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) == 0 && ctx.sub.n == 0, "stale: the source is decoded");
    RN_CHECK(rn_prep_build(path, prep, &info, &err) == 0 && info.built, "a stale file is rebuilt: %s", err.msg);
    RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0, "rebuilt after the change: %s", err.msg);
    rn_prep_close(&file);
    /* the source replaced by other bytes of the same size and the same mtime: stale (0606e47 used it) */
    rn_bytes src = {0};
    RN_CHECK(rn_bytes_read(&src, path, &err) == 0, "%s", err.msg);
    for (int end = 0; end < 2; end++) {
        size_t at = end ? src.n - 3 : 100;
        src.p[at] ^= 0x01;
        f = fopen(path, "wb");
        RN_CHECK(f && fwrite(src.p, 1, src.n, f) == src.n && fclose(f) == 0, "rewrite %s", path);
        RN_CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0, "touch %s", path);
        RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 1,
                 "a source of the same size and mtime but another byte %zu is stale", at);
        src.p[at] ^= 0x01;
        f = fopen(path, "wb");
        RN_CHECK(f && fwrite(src.p, 1, src.n, f) == src.n && fclose(f) == 0, "restore %s", path);
        RN_CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0, "touch %s", path);
        RN_CHECK(rn_prep_load(&file, &w, &h, prep, path, &err) == 0, "the source restored: up to date: %s", err.msg);
        rn_prep_close(&file);
    }
    rn_bytes_free(&src);
    free(t);
    rn_bytes_free(&good), rn_prep_file_free(&file);
    rn_crop_ctx_free(&ctx);
}

/* The region-of-interest decode (rows above skipped, columns cropped) must give
 * the same patch as decoding the whole image, and the same pixels in every row
 * of its region; rn_crop_sample_decoded on the whole image gives
 * rn_crop_sample's tensor. name: an image in tmpdir, w wide; boxes up to
 * box_max px anywhere in it. */
static void test_roi_equals_full(const char *name, int w, int h, double box_max)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    rn_image full = {0};
    rn_bytes scratch = {0};
    rn_err err = {0};
    RN_CHECK(rn_image_load(&full, &scratch, path, NULL, &err) == 0, "%s", err.msg);
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    rn_crop_ctx ctx = {0}, ctx2 = {0};
    uint8_t *want = malloc(256 * 256 * 3);
    int32_t xy[512];
    float *t = malloc(sizeof(float) * 3 * 256 * 256), *t2 = malloc(sizeof(float) * 3 * 256 * 256);
    long diff_decoded = 0;
    rn_rng r;
    rn_rng_seed(&r, 11);
    long diff = 0, rows = 0;
    for (int i = 0; i < 40 && full.w; i++) {
        rn_crop_in in = {.path = path, .root_vis = 1};
        in.bbox[2] = (float)(20 + (box_max - 20) * rn_rng_uniform(&r)), in.bbox[3] = in.bbox[2];
        in.bbox[0] = (float)(-100 + (w + 60) * rn_rng_uniform(&r)), in.bbox[1] = (float)(-100 + (h + 20) * rn_rng_uniform(&r));
        rn_aug aug;
        rn_aug_draw(&aug, &r);
        rn_crop_out out;
        RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) == 0, "%s", err.msg);
        double inv[6];
        double cx = in.bbox[0] + 0.5 * in.bbox[2], cy = in.bbox[1] + 0.5 * in.bbox[3];
        if (aug.flip) cx = full.w - cx - 1;
        rn_affine_from_box(inv, cx, cy, in.bbox[2], in.bbox[3], 256, 256, aug.rot);
        rn_warp_map mp = {.flip = aug.flip, .flip_q = (full.w - 1) * 32};
        rn_affine_invert(mp.m, inv);
        rn_warp_bilinear_u8(want, full.px, xy, &mp, full.w, full.h, full.stride, 256, 256);
        for (int k = 0; k < 256 * 256 * 3; k++) diff += want[k] != ctx.patch[k];
        rows += region_diff(&ctx.img, &full);
        rn_crop_out out2;
        RN_CHECK(rn_crop_sample_decoded(t2, &out2, &ctx2, &full, &in, &aug, &cfg, &err) == 0, "%s", err.msg);
        diff_decoded += memcmp(t, t2, sizeof(float) * 3 * 256 * 256) != 0;
        diff_decoded += memcmp(out.trans, out2.trans, sizeof out.trans) || memcmp(out.inv, out2.inv, sizeof out.inv) ||
                        out.root[0] != out2.root[0] || out.root[1] != out2.root[1] || out.root_vis != out2.root_vis ||
                        out2.scale != 1 || out2.img_w != full.w || out2.img_h != full.h;
    }
    printf("%s: 40 crops, ROI decode vs whole-image decode: %ld patch values and %ld region rows differ\n", name, diff,
           rows);
    RN_CHECK(full.w == w && full.h == h && diff == 0, "%s: ROI decode differs from full decode in %ld values", name, diff);
    RN_CHECK(rows == 0, "%s: the decoded region differs from the whole-image decode in %ld rows", name, rows);
    RN_CHECK(diff_decoded == 0, "rn_crop_sample_decoded differs from rn_crop_sample in %ld of 40 crops", diff_decoded);
    free(want), free(t), free(t2);
    rn_image_free(&full), rn_bytes_free(&scratch), rn_crop_ctx_free(&ctx), rn_crop_ctx_free(&ctx2);
}

/* DCT-domain downscaling against full decoding, boxes 2x..5x the input: the
 * scaled decode low-passes before sampling, so it differs where full-res
 * bilinear aliases. Measured 1.79 mean levels, 2.6% of values > 8 apart. */
static void test_dct_bound(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/big.jpg", tmpdir);
    rn_crop_cfg full_cfg, dct_cfg;
    rn_crop_cfg_default(&full_cfg);
    full_cfg.fast_decode = 0;
    dct_cfg = full_cfg;
    dct_cfg.fast_decode = 1;
    rn_crop_ctx a = {0}, b = {0};
    float *ta = malloc(sizeof(float) * 3 * 256 * 256), *tb = malloc(sizeof(float) * 3 * 256 * 256);
    rn_rng r;
    rn_rng_seed(&r, 5);
    double sum = 0;
    long n = 0, over8 = 0, scaled = 0;
    rn_err err = {0};
    for (int i = 0; i < 24; i++) {
        rn_crop_in in = {.path = path, .root_vis = 1, .root = {960, 540}};
        in.bbox[2] = (float)(512 + 700 * rn_rng_uniform(&r)), in.bbox[3] = in.bbox[2];
        in.bbox[0] = (float)(1920 * rn_rng_uniform(&r) - in.bbox[2] / 2);
        in.bbox[1] = (float)(1080 * rn_rng_uniform(&r) - in.bbox[3] / 2);
        rn_aug aug;
        rn_aug_draw(&aug, &r);
        rn_crop_out oa, ob;
        RN_CHECK(!rn_crop_sample(ta, &oa, &a, &in, &aug, &full_cfg, &err), "%s", err.msg);
        RN_CHECK(!rn_crop_sample(tb, &ob, &b, &in, &aug, &dct_cfg, &err), "%s", err.msg);
        scaled += ob.scale > 1;
        RN_CHECK(oa.root[0] == ob.root[0] && oa.root_vis == ob.root_vis, "root independent of decode scale");
        for (int k = 0; k < 256 * 256 * 3; k++) {
            int d = abs((int)a.patch[k] - (int)b.patch[k]);
            sum += d;
            over8 += d > 8;
            n++;
        }
    }
    double mean = sum / (double)n, frac8 = over8 / (double)n;
    printf("dct-scaled vs full decode: mean |diff| %.3f grey levels, %.3f%% of values differ by > 8\n", mean,
           100 * frac8);
    RN_CHECK(scaled == 24, "all boxes took the DCT path (%ld)", scaled);
    RN_CHECK(mean < 2.5, "DCT path mean |diff| %.3f >= 2.5 grey levels", mean);
    RN_CHECK(frac8 < 0.05, "DCT path: %.3f%% of values differ by > 8 levels", 100 * frac8);
    free(ta), free(tb);
    rn_crop_ctx_free(&a), rn_crop_ctx_free(&b);
}

static void test_bad_input(void)
{
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    rn_crop_ctx ctx = {0};
    rn_aug aug;
    rn_aug_none(&aug);
    float *t = malloc(sizeof(float) * 3 * 256 * 256);
    rn_crop_out out;
    rn_err err = {0};
    char path[1024], bad[1024];
    snprintf(path, sizeof path, "%s/img.jpg", tmpdir);
    rn_crop_in in = {.path = path, .bbox = {10, 10, 0, 50}};
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) && strstr(err.msg, "empty bbox"), "empty box: %s",
             err.msg);
    in.bbox[2] = NAN;
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &in, &aug, &cfg, &err) && strstr(err.msg, "not finite"), "NaN box: %s",
             err.msg);
    snprintf(bad, sizeof bad, "%s/missing.jpg", tmpdir);
    rn_crop_in miss = {.path = bad, .bbox = {10, 10, 50, 50}};
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &miss, &aug, &cfg, &err) && strstr(err.msg, "missing.jpg"), "missing: %s",
             err.msg);
    /* a JPEG cut in half: libjpeg warns about premature end; that is an error, not a grey patch */
    snprintf(bad, sizeof bad, "%s/cut.jpg", tmpdir);
    rn_bytes b = {0};
    RN_CHECK(rn_bytes_read(&b, path, &err) == 0, "%s", err.msg);
    FILE *f = fopen(bad, "wb");
    fwrite(b.p, 1, b.n / 2, f);
    fclose(f);
    rn_crop_in cut = {.path = bad, .bbox = {0, 300, 600, 170}};
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &cut, &aug, &cfg, &err) && strstr(err.msg, "cut.jpg"), "truncated: %s",
             err.msg);
    f = fopen(bad, "wb");
    fwrite("hello", 1, 5, f);
    fclose(f);
    RN_CHECK(rn_crop_sample(t, &out, &ctx, &cut, &aug, &cfg, &err) && strstr(err.msg, "not a JPEG or PNG"),
             "not an image: %s", err.msg);
    rn_bytes_free(&b);
    free(t);
    rn_crop_ctx_free(&ctx);
}

/* PoseNet's draws: scale clip(N, -1, 1) * 0.25 + 1 (about 16 % at each bound), occlusion half the time,
 * the rest as RootNet's. */
static void test_aug_draw_posenet(void)
{
    rn_rng r;
    rn_rng_seed(&r, 5);
    int n = 20000, lo = 0, hi = 0, occ = 0, bad = 0, rotated = 0;
    for (int i = 0; i < n; i++) {
        rn_aug a;
        rn_aug_draw_posenet(&a, &r);
        bad += a.scale < 0.75 || a.scale > 1.25 || fabs(a.rot) > 60;
        lo += a.scale == 0.75, hi += a.scale == 1.25, occ += a.occlude, rotated += a.rot != 0;
    }
    RN_CHECK(!bad && fabs(lo / (double)n - 0.1587) < 0.015 && fabs(hi / (double)n - 0.1587) < 0.015 &&
                 fabs(occ / (double)n - 0.5) < 0.02 && fabs(rotated / (double)n - 0.6) < 0.02,
             "posenet draws: scale bounds %d %d, occlusion %d, rotated %d of %d", lo, hi, occ, rotated, n);
}

/* The synthetic occlusion: a rectangle by their rule (in the box, inside the image, at most 0.7 of the
 * box); patch pixels whose source lies 2 px or more outside it are those of the crop without it,
 * those 2 px or more inside it are noise (nearly all differ). Flipped and rotated, scale 1 and not. */
static void test_occlusion(const char *path)
{
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    rn_crop_ctx ctx = {0};
    size_t plane = (size_t)3 * cfg.in_w * cfg.in_h;
    float *a = malloc(sizeof(float) * plane), *b = malloc(sizeof(float) * plane);
    rn_crop_in in = {.path = path, .bbox = {200, 120, 240, 240}, .root = {320, 240}, .root_vis = 1};
    int rule = 1, outside_same = 1, inside = 0, inside_differ = 0, drawn = 0;
    for (int k = 0; k < 12; k++) {
        rn_aug aug;
        rn_aug_none(&aug);
        aug.rot = k % 3 ? 25.0 * (k % 3) : 0, aug.flip = k & 1, aug.scale = k % 4 == 3 ? 1.2 : 1.0;
        rn_crop_out oa, ob;
        rn_err err = {{0}};
        RN_CHECK(rn_crop_sample(a, &oa, &ctx, &in, &aug, &cfg, &err) == 0, "%s", err.msg);
        aug.occlude = 1, aug.occ_seed = 1000 + (uint64_t)k;
        RN_CHECK(rn_crop_sample(b, &ob, &ctx, &in, &aug, &cfg, &err) == 0, "%s", err.msg);
        const int *o = ob.occ;
        if (o[2] <= 0 || o[3] <= 0) continue;
        drawn++;
        /* xmin = U * (bw - w - 1) + bx: between bx and bx + bw - w - 1 (w may exceed the box's side) */
        rule &= o[0] >= fmin(200, 440 - o[2] - 2) - 1 && o[0] <= fmax(200, 440 - o[2] - 1) + 1 &&
                o[1] >= fmin(120, 360 - o[3] - 2) - 1 && o[1] <= fmax(120, 360 - o[3] - 1) + 1 && o[0] >= 0 &&
                o[1] >= 0 && o[0] + o[2] < 640 && o[1] + o[3] < 480 && (double)o[2] * o[3] <= 0.7 * 240 * 240;
        for (int y = 0; y < cfg.in_h; y++)
            for (int x = 0; x < cfg.in_w; x++) {
                double sx, sy;
                rn_affine_apply(&sx, &sy, ob.inv, x, y);
                double d = fmin(fmin(sx - o[0], o[0] + o[2] - 1 - sx), fmin(sy - o[1], o[1] + o[3] - 1 - sy));
                int same = 1;
                for (int c = 0; c < 3; c++) same &= a[(size_t)c * cfg.in_h * cfg.in_w + (size_t)y * cfg.in_w + x] ==
                                                   b[(size_t)c * cfg.in_h * cfg.in_w + (size_t)y * cfg.in_w + x];
                if (d <= -2) outside_same &= same;
                if (d >= 2) inside++, inside_differ += !same;
            }
    }
    RN_CHECK(drawn >= 10 && rule, "occlusion rectangles by their rule (%d drawn)", drawn);
    RN_CHECK(outside_same && inside > 1000 && inside_differ > 0.9 * inside,
             "occlusion painted where it is: outside unchanged %d, inside %d of %d differ", outside_same, inside_differ,
             inside);
    rn_aug aug;
    rn_aug_none(&aug);
    aug.occlude = 1;
    rn_crop_out o;
    rn_err err = {{0}};
    rn_image img = {.w = 8, .h = 8, .full_w = 8, .full_h = 8, .scale = 1, .stride = 24, .px = calloc(192, 1)};
    rn_crop_in small = {.path = "mem", .bbox = {1, 1, 4, 4}, .root_vis = 1};
    RN_CHECK(rn_crop_sample_decoded(a, &o, &ctx, &img, &small, &aug, &cfg, &err) == -1 && strstr(err.msg, "occlusion"),
             "occlusion of a borrowed image refused: %s", err.msg);
    free(img.px);
    rn_crop_ctx_free(&ctx);
    free(a), free(b);
}

int main(void)
{
    test_affine_by_hand();
    test_normalize_by_hand();
    test_aug_draw();
    test_aug_draw_posenet();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rn_aug_XXXXXX");
    RN_CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
    const char *py = getenv("PY") ? getenv("PY") : "/usr/bin/python3";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s tools/cv_ref.py cases %s", py, tmpdir);
    int rc = system(cmd);
    RN_CHECK(rc == 0, "reference generation failed: %s", cmd);
    ref_case cs[64];
    int n = rc == 0 ? read_cases(cs, 64, tmpdir) : 0;
    RN_CHECK(n == N_SMALL_CASES + N_BIG_CASES, "read %d reference cases", n);
    if (n == N_SMALL_CASES + N_BIG_CASES) {
        test_affine_exact();
        test_center_exact();
        test_opencv_parity(cs);
        test_default_decode_exact(cs);
        test_roi_equals_full("img.jpg", 640, 480, 420);
        snprintf(cmd, sizeof cmd, "%s/img.jpg", tmpdir);
        test_occlusion(cmd);
        snprintf(cmd, sizeof cmd, "%s -c \"import cv2, numpy as np; rs = np.random.RandomState(5)\n"
                 "b = cv2.resize(rs.rand(48, 48, 3).astype(np.float32) * 255, (2048, 2048), interpolation=cv2.INTER_CUBIC)\n"
                 "cv2.imwrite('%s/f2048.jpg', np.clip(b + rs.randn(2048, 2048, 3) * 8, 0, 255).astype(np.uint8), "
                 "[cv2.IMWRITE_JPEG_QUALITY, 90])\"", py, tmpdir);
        RN_CHECK(system(cmd) == 0, "2048x2048 frame: %s", cmd);
        test_roi_equals_full("f2048.jpg", 2048, 2048, 1600);
        test_prep_equals_source("f2048.jpg", tmpdir, 2048, 2048, 1600);
        test_prep_equals_source("img.jpg", tmpdir, 640, 480, 420);
        test_prep_equals_source("gray.jpg", "tests/fuzz/corpus/image", 16, 12, 30);
        test_prep_equals_source("progressive.jpg", "tests/fuzz/corpus/image", 16, 12, 30);
        test_prep_equals_source("synth.jpg", "tests/fuzz/corpus/image", 64, 64, 90);
        test_prep_files();
        test_dct_bound();
        test_bad_input();
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
