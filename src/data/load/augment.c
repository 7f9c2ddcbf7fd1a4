#include "data/load/augment.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/hash.h"
#include "core/profile.h"
#include "data/image/exif_focal.h"
#include "data/image/prep.h"

void rn_aug_draw(rn_aug *a, rn_rng *r)
{
    a->occlude = 0;
    a->occ_seed = 0;
    a->scale = 1.0;
    a->rot = 0;
    if (rn_rng_uniform(r) <= 0.6) {
        double g = rn_rng_normal(r);
        a->rot = (g < -2.0 ? -2.0 : g > 2.0 ? 2.0 : g) * 30.0;
    }
    a->flip = rn_rng_uniform(r) <= 0.5;
    for (int c = 0; c < 3; c++) a->color[c] = (float)(0.8 + 0.4 * rn_rng_uniform(r));
}

void rn_aug_draw_posenet(rn_aug *a, rn_rng *r)
{
    double g = rn_rng_normal(r);
    double scale = (g < -1.0 ? -1.0 : g > 1.0 ? 1.0 : g) * 0.25 + 1.0;
    rn_aug_draw(a, r);
    a->scale = scale;
    a->occlude = rn_rng_uniform(r) <= 0.5;
    a->occ_seed = rn_mix64(((uint64_t)rn_rng_below(r, 1ULL << 32) << 32) | rn_rng_below(r, 1ULL << 32));
}

/* Their occlusion rectangle in the box (x, y, w, h: float64) of a w_img x h_img image, into occ (w = 0:
 * none fitted in RN_OCCLUDE_TRIES). */
static void occlusion_rect(int occ[4], const double box[4], int w_img, int h_img, uint64_t seed)
{
    rn_rng r;
    rn_rng_seed2(&r, seed, 0);
    occ[0] = occ[1] = occ[2] = occ[3] = 0;
    for (int t = 0; t < RN_OCCLUDE_TRIES; t++) {
        double area = rn_rng_uniform(&r) * 0.7 * box[2] * box[3];
        double ratio = rn_rng_uniform(&r) * (1 / 0.3 - 0.3) + 0.3;
        double h = sqrt(area * ratio), w = sqrt(area / ratio);
        double xmin = rn_rng_uniform(&r) * (box[2] - w - 1) + box[0];
        double ymin = rn_rng_uniform(&r) * (box[3] - h - 1) + box[1];
        if (xmin >= 0 && ymin >= 0 && xmin + w < w_img && ymin + h < h_img) {
            occ[0] = (int)xmin, occ[1] = (int)ymin, occ[2] = (int)w, occ[3] = (int)h;
            return;
        }
    }
}

/* Noise 0..255 of original pixel (x, y), channel c: a hash, so any decoded region of the image gets
 * the same values. */
static uint8_t occlusion_noise(uint64_t seed, int x, int y, int c)
{
    uint64_t h = rn_mix64(seed ^ rn_mix64(((uint64_t)(uint32_t)y << 32 | (uint32_t)x) * 3 + (uint64_t)c));
    return (uint8_t)((h >> 11) * (1.0 / 9007199254740992.0) * 255);
}

/* Paints the rectangle into the decoded region (scale 1: pixel for pixel; a DCT-scaled region: the
 * rectangle's scaled pixels take the noise of their top-left original pixel). */
static void occlusion_paint(rn_image *img, const int occ[4], uint64_t seed)
{
    int s = img->scale;
    int x0 = occ[0] / s - img->x0, x1 = (occ[0] + occ[2] + s - 1) / s - img->x0;
    int y0 = occ[1] / s - img->y0, y1 = (occ[1] + occ[3] + s - 1) / s - img->y0;
    x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > img->w ? img->w : x1, y1 = y1 > img->h ? img->h : y1;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            for (int c = 0; c < 3; c++)
                img->px[(size_t)y * img->stride + 3 * (size_t)x + (size_t)c] =
                    occlusion_noise(seed, (x + img->x0) * s, (y + img->y0) * s, c);
}

void rn_aug_none(rn_aug *a)
{
    a->occlude = 0;
    a->occ_seed = 0;
    a->scale = 1.0;
    a->rot = 0;
    a->flip = 0;
    a->color[0] = a->color[1] = a->color[2] = 1.0f;
}

/* rotate_2d: double arithmetic on float32 inputs, result stored as float32. */
static void rotate_f32(float out[2], float x, float y, double rad)
{
    double sn = sin(rad), cs = cos(rad);
    out[0] = (float)((double)x * cs - (double)y * sn);
    out[1] = (float)((double)x * sn + (double)y * cs);
}

/* Solves a (6, 6) x = b in place (b becomes x) by Gaussian elimination with
 * partial pivoting, in the order of operations of OpenCV's cv::solve with
 * DECOMP_LU (OpenCV 4's LUImpl: rows scaled by -1/pivot, back substitution
 * divided by the pivot), so that the result is OpenCV's to the last bit.
 * Returns -1 when a pivot is below OpenCV's 100 * DBL_EPSILON (singular). */
static int lu_solve6(double a[6][6], double b[6])
{
    for (int i = 0; i < 6; i++) {
        int piv = i;
        for (int j = i + 1; j < 6; j++)
            if (fabs(a[j][i]) > fabs(a[piv][i])) piv = j;
        if (!(fabs(a[piv][i]) >= 100 * DBL_EPSILON)) return -1;
        if (piv != i) {
            for (int j = i; j < 6; j++) {
                double t = a[i][j];
                a[i][j] = a[piv][j], a[piv][j] = t;
            }
            double t = b[i];
            b[i] = b[piv], b[piv] = t;
        }
        double d = -1 / a[i][i];
        for (int j = i + 1; j < 6; j++) {
            double alpha = a[j][i] * d;
            for (int k = i + 1; k < 6; k++) a[j][k] += alpha * a[i][k];
            b[j] += alpha * b[i];
        }
    }
    for (int i = 5; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < 6; k++) s -= a[i][k] * b[k];
        b[i] = s / a[i][i];
    }
    return 0;
}

/* cv2.getAffineTransform: m * (s_i, 1) = d_i for the three point pairs, as the
 * (6, 6) system OpenCV builds, solved as OpenCV solves it (lu_solve6).
 * Returns -1 when the source points are collinear (or not finite). Not inlined:
 * GCC 12's SLP vectoriser at -O3 -march=native (AVX-512) folds the caller's
 * double -> float -> double round trip of the points away when it is, which
 * moved the matrix by ~1e-7 relative (test_augment's test_affine_exact). */
__attribute__((noinline)) static int affine_from_points(double m[6], const float s[3][2], const float d[3][2])
{
    double a[6][6] = {{0}}, b[6];
    for (int i = 0; i < 3; i++) {
        a[2 * i][0] = a[2 * i + 1][3] = s[i][0];
        a[2 * i][1] = a[2 * i + 1][4] = s[i][1];
        a[2 * i][2] = a[2 * i + 1][5] = 1;
        b[2 * i] = d[i][0];
        b[2 * i + 1] = d[i][1];
    }
    if (lu_solve6(a, b)) return -1;
    for (int k = 0; k < 6; k++)
        if (!isfinite(b[k])) return -1;
    memcpy(m, b, sizeof b);
    return 0;
}

int rn_affine_from_box(double m[6], double cx, double cy, double bw, double bh, int out_w, int out_h, double rot)
{
    double rad = M_PI * rot / 180.0;
    float down[2], right[2];
    rotate_f32(down, 0.0f, (float)(bh * 0.5), rad);
    rotate_f32(right, (float)(bw * 0.5), 0.0f, rad);
    float c0 = (float)cx, c1 = (float)cy;
    float s[3][2] = {{c0, c1}, {c0 + down[0], c1 + down[1]}, {c0 + right[0], c1 + right[1]}};
    float dc0 = (float)(out_w * 0.5), dc1 = (float)(out_h * 0.5);
    float d[3][2] = {{dc0, dc1}, {dc0, dc1 + (float)(out_h * 0.5)}, {dc0 + (float)(out_w * 0.5), dc1}};
    return affine_from_points(m, s, d);
}

void rn_affine_invert(double inv[6], const double m[6])
{
    double d = m[0] * m[4] - m[1] * m[3];
    d = d != 0 ? 1.0 / d : 0.0;
    inv[0] = m[4] * d;
    inv[1] = -m[1] * d;
    inv[3] = -m[3] * d;
    inv[4] = m[0] * d;
    inv[2] = -inv[0] * m[2] - inv[1] * m[5];
    inv[5] = -inv[3] * m[2] - inv[4] * m[5];
}

void rn_affine_apply(double *ox, double *oy, const double m[6], double x, double y)
{
    *ox = m[0] * x + m[1] * y + m[2];
    *oy = m[3] * x + m[4] * y + m[5];
}

static inline int tap(const uint8_t *src, int sw, int sh, size_t stride, int x, int y, int c)
{
    return (x < 0 || y < 0 || x >= sw || y >= sh) ? 0 : src[(size_t)y * stride + 3 * (size_t)x + (size_t)c];
}

static void warp_pixel_edge(uint8_t *d, const uint8_t *src, int sw, int sh, size_t stride, int X, int Y)
{
    int ix = X >> 5, iy = Y >> 5, fx = X & 31, fy = Y & 31;
    int w00 = (32 - fx) * (32 - fy), w01 = fx * (32 - fy), w10 = (32 - fx) * fy, w11 = fx * fy;
    for (int c = 0; c < 3; c++) {
        int s = tap(src, sw, sh, stride, ix, iy, c) * w00 + tap(src, sw, sh, stride, ix + 1, iy, c) * w01 +
                tap(src, sw, sh, stride, ix, iy + 1, c) * w10 + tap(src, sw, sh, stride, ix + 1, iy + 1, c) * w11;
        d[c] = (uint8_t)((s + 512) >> 10);
    }
}

/* Output row y's origin in the frame, 1/1024 px with OpenCV's rounding offset. */
static void warp_row_origin(int *X0, int *Y0, const double m[6], int y)
{
    *X0 = (int)lrint((m[1] * y + m[2]) * 1024) + 16;
    *Y0 = (int)lrint((m[4] * y + m[5]) * 1024) + 16;
}

/* Pixel x of the row at (X0, Y0): its position in the buffer, 1/32 px (flip and offsets of mp applied). */
static inline void warp_src(int *X, int *Y, const int32_t *ad, const int32_t *bd, const rn_warp_map *mp, int X0, int Y0,
                            int x)
{
    int sx = (X0 + ad[x]) >> 5;
    if (mp->flip) sx = mp->flip_q - sx;
    *X = sx - mp->off_x_q;
    *Y = ((Y0 + bd[x]) >> 5) - mp->off_y_q;
}

/* Output pixel x of the row at (X0, Y0) into d[0..3). */
static inline void warp_pixel(uint8_t *d, const uint8_t *src, const int32_t *ad, const int32_t *bd,
                              const rn_warp_map *mp, int X0, int Y0, int sw, int sh, size_t stride, int x)
{
    const unsigned w1 = sw > 1 ? (unsigned)sw - 1 : 0, h1 = sh > 1 ? (unsigned)sh - 1 : 0;
    int X, Y;
    warp_src(&X, &Y, ad, bd, mp, X0, Y0, x);
    int ix = X >> 5, iy = Y >> 5;
    if ((unsigned)ix < w1 && (unsigned)iy < h1) {
        int fx = X & 31, fy = Y & 31;
        int w00 = (32 - fx) * (32 - fy), w01 = fx * (32 - fy), w10 = (32 - fx) * fy, w11 = fx * fy;
        const uint8_t *p = src + (size_t)iy * stride + 3 * (size_t)ix, *q = p + stride;
        d[0] = (uint8_t)((p[0] * w00 + p[3] * w01 + q[0] * w10 + q[3] * w11 + 512) >> 10);
        d[1] = (uint8_t)((p[1] * w00 + p[4] * w01 + q[1] * w10 + q[4] * w11 + 512) >> 10);
        d[2] = (uint8_t)((p[2] * w00 + p[5] * w01 + q[2] * w10 + q[5] * w11 + 512) >> 10);
    } else if (ix >= sw || iy >= sh || ix < -1 || iy < -1) {
        d[0] = d[1] = d[2] = 0;
    } else {
        warp_pixel_edge(d, src, sw, sh, stride, X, Y);
    }
}

#ifdef __AVX2__
/* Channel c of 8 taps (p, q: 4 bytes gathered at a pixel and 2 bytes on, so c is
 * byte c of p and byte c + 1 of q) as p_c | q_c << 16 in each 32-bit lane. */
static inline __m256i tap_pair(__m256i p, __m256i q, int c)
{
    const char z = (char)0x80;
    __m256i sp = _mm256_setr_epi8((char)c, z, z, z, (char)(c + 4), z, z, z, (char)(c + 8), z, z, z, (char)(c + 12), z,
                                  z, z, (char)c, z, z, z, (char)(c + 4), z, z, z, (char)(c + 8), z, z, z,
                                  (char)(c + 12), z, z, z);
    __m256i sq = _mm256_setr_epi8(z, z, (char)(c + 1), z, z, z, (char)(c + 5), z, z, z, (char)(c + 9), z, z, z,
                                  (char)(c + 13), z, z, z, (char)(c + 1), z, z, z, (char)(c + 5), z, z, z,
                                  (char)(c + 9), z, z, z, (char)(c + 13), z);
    return _mm256_or_si256(_mm256_shuffle_epi8(p, sp), _mm256_shuffle_epi8(q, sq));
}

/* Output pixels x..x+7 of the row at (X0, Y0), as warp_pixel computes them
 * ((32 - fy)((32 - fx) p00 + fx p01) + fy((32 - fx) p10 + fx p11) is its sum of
 * four products, exactly), when all their taps lie inside; 0 (nothing written)
 * when one does not. The offsets of src must fit in 32 bits. */
static inline int warp_8(uint8_t *d, const uint8_t *src, const int32_t *ad, const int32_t *bd, const rn_warp_map *mp,
                         int X0, int Y0, int w1, int h1, int stride, int x)
{
    __m256i a = _mm256_loadu_si256((const void *)(ad + x)), b = _mm256_loadu_si256((const void *)(bd + x));
    __m256i sx = _mm256_srai_epi32(_mm256_add_epi32(_mm256_set1_epi32(X0), a), 5);
    if (mp->flip) sx = _mm256_sub_epi32(_mm256_set1_epi32(mp->flip_q), sx);
    __m256i X = _mm256_sub_epi32(sx, _mm256_set1_epi32(mp->off_x_q));
    __m256i Y = _mm256_sub_epi32(_mm256_srai_epi32(_mm256_add_epi32(_mm256_set1_epi32(Y0), b), 5),
                                 _mm256_set1_epi32(mp->off_y_q));
    __m256i ix = _mm256_srai_epi32(X, 5), iy = _mm256_srai_epi32(Y, 5);
    __m256i in = _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_min_epu32(ix, _mm256_set1_epi32(w1 - 1)), ix),
                                  _mm256_cmpeq_epi32(_mm256_min_epu32(iy, _mm256_set1_epi32(h1 - 1)), iy));
    if (_mm256_movemask_epi8(in) != -1) return 0;
    __m256i off = _mm256_add_epi32(_mm256_mullo_epi32(iy, _mm256_set1_epi32(stride)),
                                   _mm256_add_epi32(ix, _mm256_add_epi32(ix, ix)));
    const int *p0 = (const void *)src, *p1 = (const void *)(src + stride);
    const int *q0 = (const void *)(src + 2), *q1 = (const void *)(src + stride + 2);
    __m256i g00 = _mm256_i32gather_epi32(p0, off, 1), g01 = _mm256_i32gather_epi32(q0, off, 1);
    __m256i g10 = _mm256_i32gather_epi32(p1, off, 1), g11 = _mm256_i32gather_epi32(q1, off, 1);
    __m256i fx = _mm256_and_si256(X, _mm256_set1_epi32(31)), fy = _mm256_and_si256(Y, _mm256_set1_epi32(31));
    __m256i c32 = _mm256_set1_epi32(32);
    __m256i wx = _mm256_or_si256(_mm256_sub_epi32(c32, fx), _mm256_slli_epi32(fx, 16));
    __m256i wy = _mm256_or_si256(_mm256_sub_epi32(c32, fy), _mm256_slli_epi32(fy, 16));
    __m256i rgb = _mm256_setzero_si256();
    for (int c = 0; c < 3; c++) {
        __m256i h0 = _mm256_madd_epi16(tap_pair(g00, g01, c), wx), h1 = _mm256_madd_epi16(tap_pair(g10, g11, c), wx);
        __m256i v = _mm256_madd_epi16(_mm256_or_si256(h0, _mm256_slli_epi32(h1, 16)), wy);
        v = _mm256_srli_epi32(_mm256_add_epi32(v, _mm256_set1_epi32(512)), 10);
        rgb = _mm256_or_si256(rgb, _mm256_slli_epi32(v, 8 * c));
    }
    const char z = (char)0x80;
    __m256i pack = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, z, z, z, z, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12,
                                    13, 14, z, z, z, z);
    rgb = _mm256_shuffle_epi8(rgb, pack);
    __m128i lo = _mm256_castsi256_si128(rgb), hi = _mm256_extracti128_si256(rgb, 1);
    uint64_t a8, b8;
    uint32_t a4 = (uint32_t)_mm_extract_epi32(lo, 2), b4 = (uint32_t)_mm_extract_epi32(hi, 2);
    a8 = (uint64_t)_mm_cvtsi128_si64(lo), b8 = (uint64_t)_mm_cvtsi128_si64(hi);
    memcpy(d, &a8, 8), memcpy(d + 8, &a4, 4), memcpy(d + 12, &b8, 8), memcpy(d + 20, &b4, 4);
    return 1;
}
#endif

static void warp_row(uint8_t *d, const uint8_t *src, const int32_t *ad, const int32_t *bd, const rn_warp_map *mp,
                     int X0, int Y0, int sw, int sh, size_t stride, int dw)
{
    int x = 0;
#ifdef __AVX2__
    if (sw > 1 && sh > 1 && stride * (size_t)sh <= INT32_MAX - 8) {
        for (; x + 8 <= dw; x += 8) {
            if (warp_8(d + 3 * (size_t)x, src, ad, bd, mp, X0, Y0, sw - 1, sh - 1, (int)stride, x)) continue;
            for (int i = x; i < x + 8; i++) warp_pixel(d + 3 * (size_t)i, src, ad, bd, mp, X0, Y0, sw, sh, stride, i);
        }
    }
#endif
    for (; x < dw; x++) warp_pixel(d + 3 * (size_t)x, src, ad, bd, mp, X0, Y0, sw, sh, stride, x);
}

/* Rows ahead whose taps are prefetched: a rotated crop's row crosses many source rows, which the
 * hardware prefetcher does not follow, and the decoded region is larger than the L2 cache. */
#define WARP_AHEAD 3
#define WARP_PREFETCH_STEP 2 /* output pixels between prefetches (the crop samples ~4 px apart); 3 and 2 measured best */

static void prefetch_row(const uint8_t *src, const int32_t *ad, const int32_t *bd, const rn_warp_map *mp,
                         const double *m, int y, int sw, int sh, size_t stride, int dw)
{
    int X0, Y0;
    warp_row_origin(&X0, &Y0, m, y);
    for (int x = 0; x < dw; x += WARP_PREFETCH_STEP) {
        int X, Y;
        warp_src(&X, &Y, ad, bd, mp, X0, Y0, x);
        int ix = X >> 5, iy = Y >> 5;
        if (ix < 0 || iy < 0 || ix + 1 >= sw || iy + 1 >= sh) continue;
        const uint8_t *p = src + (size_t)iy * stride + 3 * (size_t)ix;
        __builtin_prefetch(p);
        __builtin_prefetch(p + stride);
    }
}

void rn_warp_bilinear_u8(uint8_t *dst, const uint8_t *src, int32_t *scratch, const rn_warp_map *map, int sw, int sh,
                         size_t stride, int dw, int dh)
{
    const double *m = map->m;
    int32_t *ad = scratch, *bd = scratch + dw;
    for (int x = 0; x < dw; x++) {
        ad[x] = (int32_t)lrint(m[0] * x * 1024);
        bd[x] = (int32_t)lrint(m[3] * x * 1024);
    }
    for (int y = 0; y < dh; y++) {
        int X0, Y0;
        warp_row_origin(&X0, &Y0, m, y);
        if (y + WARP_AHEAD < dh) prefetch_row(src, ad, bd, map, m, y + WARP_AHEAD, sw, sh, stride, dw);
        warp_row(dst + (size_t)y * dw * 3, src, ad, bd, map, X0, Y0, sw, sh, stride, dw);
    }
}

void rn_normalize_chw(float *dst, const uint8_t *src, const float color[3], float pixel_scale, const float mean[3],
                      const float std[3], int w, int h)
{
    size_t n = (size_t)w * h;
    for (int c = 0; c < 3; c++) {
        float *o = dst + (size_t)c * n;
        const float cs = color[c], sc = pixel_scale, mu = mean[c], sd = std[c];
        for (size_t i = 0; i < n; i++) {
            float v = (float)src[3 * i + (size_t)c] * cs;
            v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
            o[i] = (v * sc - mu) / sd;
        }
    }
}

void rn_crop_cfg_default(rn_crop_cfg *cfg)
{
    *cfg = (rn_crop_cfg){.in_w = 256, .in_h = 256, .out_w = 64, .out_h = 64, .pixel_scale = 1.0f,
                         .mean = {0.485f, 0.456f, 0.406f}, .std = {0.229f, 0.224f, 0.225f}};
}

void rn_crop_ctx_free(rn_crop_ctx *ctx)
{
    rn_bytes_free(&ctx->file);
    rn_bytes_free(&ctx->sub);
    rn_prep_file_free(&ctx->pf);
    rn_image_free(&ctx->img);
    free(ctx->patch);
    free(ctx->xy);
    *ctx = (rn_crop_ctx){0};
}

int rn_crop_pick_scale(const float bbox[4], const rn_crop_cfg *cfg)
{
    if (!cfg->fast_decode) return 1;
    double r = fmin(bbox[2] / (double)cfg->in_w, bbox[3] / (double)cfg->in_h);
    return r >= 8 ? 8 : r >= 4 ? 4 : r >= 2 ? 2 : 1;
}

static void ctx_reserve(rn_crop_ctx *ctx, const rn_crop_cfg *cfg)
{
    size_t np = (size_t)cfg->in_w * cfg->in_h * 3, nx = 2 * (size_t)cfg->in_w;
    if (np > ctx->patch_cap) {
        free(ctx->patch);
        ctx->patch = rn_xmalloc(np);
        ctx->patch_cap = np;
    }
    if (nx > ctx->xy_cap) {
        free(ctx->xy);
        ctx->xy = rn_xmalloc(nx * sizeof(int32_t));
        ctx->xy_cap = nx;
    }
}

/* Bounding box, in scaled-image pixels, of what the patch samples (with margin),
 * and quad: the patch's corners (one pixel beyond its samples) in frame pixels. */
static void source_roi(int roi[4], double quad[8], const double inv[6], int w_full, int flip, int scale,
                       const rn_crop_cfg *cfg)
{
    static const int order[4] = {0, 1, 3, 2}; /* corners around the patch */
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (int i = 0; i < 4; i++) {
        int k = order[i];
        double px, py;
        rn_affine_apply(&px, &py, inv, (k & 1) ? cfg->in_w : -1, (k & 2) ? cfg->in_h : -1);
        if (flip) px = w_full - 1 - px;
        quad[2 * i] = px, quad[2 * i + 1] = py;
        x0 = fmin(x0, px), x1 = fmax(x1, px), y0 = fmin(y0, py), y1 = fmax(y1, py);
    }
    const double margin = 4;
    double lim = 1e8;
    x0 = fmax(fmin(floor(x0 / scale) - margin, lim), -lim), y0 = fmax(fmin(floor(y0 / scale) - margin, lim), -lim);
    x1 = fmax(fmin(ceil(x1 / scale) + margin, lim), -lim), y1 = fmax(fmin(ceil(y1 / scale) + margin, lim), -lim);
    roi[0] = (int)x0, roi[1] = (int)y0, roi[2] = (int)(x1 - x0), roi[3] = (int)(y1 - y0);
}

/* Warp map from patch pixels to decoded-buffer pixels. Scale 1 stays exact in
 * OpenCV's fixed point (flip and offset are integer operations on 1/32 px). */
static void buffer_map(rn_warp_map *mp, const double inv[6], const rn_image *img, int flip)
{
    memcpy(mp->m, inv, sizeof mp->m);
    mp->flip = 0;
    mp->flip_q = 0;
    mp->off_x_q = img->x0 * 32;
    mp->off_y_q = img->y0 * 32;
    if (img->scale == 1) {
        mp->flip = flip;
        mp->flip_q = (img->full_w - 1) * 32;
        return;
    }
    double s = img->scale, h = (s - 1) / 2;
    double a[6];
    memcpy(a, inv, sizeof a);
    if (flip) a[0] = -a[0], a[1] = -a[1], a[2] = img->full_w - 1 - a[2];
    for (int k = 0; k < 6; k++) mp->m[k] = a[k] / s;
    mp->m[2] -= h / s;
    mp->m[5] -= h / s;
}

static void root_to_output(rn_crop_out *out, const rn_crop_in *in, int flip, const rn_crop_cfg *cfg)
{
    double rx = in->root[0], ry = in->root[1], px, py;
    if (flip) rx = out->img_w - rx - 1;
    rn_affine_apply(&px, &py, out->trans, rx, ry);
    int inside = px >= 0 && px < cfg->in_w && py >= 0 && py < cfg->in_h;
    out->root_vis = inside ? in->root_vis : 0.0f;
    out->root[0] = (float)(px / cfg->in_w * cfg->out_w);
    out->root[1] = (float)(py / cfg->in_h * cfg->out_h);
}

static int check_input(const rn_crop_in *in, rn_err *err)
{
    for (int k = 0; k < 4; k++)
        if (!isfinite(in->bbox[k])) return rn_err_set(err, "%s: bbox is not finite", in->path);
    if (!(in->bbox[2] > 0 && in->bbox[3] > 0)) return rn_err_set(err, "%s: empty bbox", in->path);
    if (!isfinite(in->root[0]) || !isfinite(in->root[1])) return rn_err_set(err, "%s: root is not finite", in->path);
    return 0;
}

/* The occlusion's rectangle for the sample (out->occ), from its float64 box as theirs. */
static void occlusion_plan(rn_crop_out *out, const rn_crop_in *in, const rn_aug *aug)
{
    memset(out->occ, 0, sizeof out->occ);
    if (!aug->occlude) return;
    double w = in->has_size ? in->size[0] : in->bbox[2], h = in->has_size ? in->size[1] : in->bbox[3];
    double box[4] = {in->has_center ? in->center[0] - 0.5 * w : in->bbox[0],
                     in->has_center ? in->center[1] - 0.5 * h : in->bbox[1], w, h};
    occlusion_rect(out->occ, box, out->img_w, out->img_h, aug->occ_seed);
}

/* The authors' trans for this sample and its inverse (into inv, and the
 * unflipped one into out->inv), for a w x h image; name is for messages. */
static int crop_affine(rn_crop_out *out, double inv[6], const rn_crop_in *in, const rn_aug *aug,
                       const rn_crop_cfg *cfg, int w, int h, rn_err *err)
{
    out->img_w = w, out->img_h = h;
    double cx = in->has_center ? in->center[0] : in->bbox[0] + 0.5 * in->bbox[2];
    double cy = in->has_center ? in->center[1] : in->bbox[1] + 0.5 * in->bbox[3];
    if (aug->flip) cx = w - cx - 1;
    double bw = (in->has_size ? in->size[0] : in->bbox[2]) * aug->scale;
    double bh = (in->has_size ? in->size[1] : in->bbox[3]) * aug->scale;
    if (rn_affine_from_box(out->trans, cx, cy, bw, bh, cfg->in_w, cfg->in_h, aug->rot))
        return rn_err_set(err, "%s: box (%g, %g, %g, %g) is too small for float precision at its position in the %d "
                          "x %d image", in->path, in->bbox[0], in->bbox[1], in->bbox[2], in->bbox[3], w, h);
    rn_affine_invert(inv, out->trans);
    memcpy(out->inv, inv, 6 * sizeof *inv);
    if (aug->flip) out->inv[0] = -inv[0], out->inv[1] = -inv[1], out->inv[2] = w - 1 - inv[2];
    occlusion_plan(out, in, aug);
    return 0;
}

/* Warp from the decoded img, colour, normalise into dst; the root into out. */
static void crop_finish(float *dst, rn_crop_out *out, rn_crop_ctx *ctx, const rn_image *img, const double inv[6],
                        const rn_crop_in *in, const rn_aug *aug, const rn_crop_cfg *cfg)
{
    ctx_reserve(ctx, cfg);
    rn_warp_map mp;
    buffer_map(&mp, inv, img, aug->flip);
    double t0 = rn_prof_now();
    rn_warp_bilinear_u8(ctx->patch, img->px, ctx->xy, &mp, img->w, img->h, img->stride, cfg->in_w, cfg->in_h);
    double t1 = rn_prof_now();
    rn_normalize_chw(dst, ctx->patch, aug->color, cfg->pixel_scale, cfg->mean, cfg->std, cfg->in_w, cfg->in_h);
    ctx->stage_s[RN_CROP_STAGE_WARP] += t1 - t0;
    ctx->stage_s[RN_CROP_STAGE_NORM] += rn_prof_now() - t1;
    root_to_output(out, in, aug->flip, cfg);
}

int rn_crop_sample(float *dst, rn_crop_out *out, rn_crop_ctx *ctx, const rn_crop_in *in, const rn_aug *aug,
                   const rn_crop_cfg *cfg, rn_err *err)
{
    if (check_input(in, err)) return -1;
    rn_image_info info = {0};
    double t0 = rn_prof_now();
    int from_src = 1;
    char prep[4200];
    prep[0] = '\0';
    if (cfg->prep_dir && !cfg->fast_decode && !cfg->exif_orient) {
        rn_prep_path(prep, sizeof prep, cfg->prep_dir, in->path);
        from_src = rn_prep_load(&ctx->pf, &info.w, &info.h, prep, in->path, err);
        if (from_src < 0) return -1;
    }
    if (from_src && rn_bytes_read(&ctx->file, in->path, err)) return -1;
    ctx->bytes_read += from_src ? (int64_t)ctx->file.n : 0;
    if (from_src && rn_image_probe(&info, ctx->file.p, ctx->file.n, err)) return rn_err_prefix(err, "%s", in->path);
    int orient = from_src && cfg->exif_orient && info.is_jpeg ? rn_exif_orientation(ctx->file.p, ctx->file.n) : 1;
    if (orient > 1) {
        if (rn_image_decode(&ctx->img, ctx->file.p, ctx->file.n, 1, NULL, err)) return rn_err_prefix(err, "%s", in->path);
        rn_image_orient(&ctx->img, orient);
        return rn_crop_sample_decoded(dst, out, ctx, &ctx->img, in, aug, cfg, err);
    }
    double t1 = rn_prof_now();
    double inv[6] = {0};
    if (crop_affine(out, inv, in, aug, cfg, info.w, info.h, err)) {
        rn_prep_close(&ctx->pf);
        return -1;
    }
    out->scale = info.is_jpeg ? rn_crop_pick_scale(in->bbox, cfg) : 1;
    int roi[4];
    double quad[8];
    source_roi(roi, quad, inv, info.w, aug->flip, out->scale, cfg);
    int rc = from_src ? rn_image_decode(&ctx->img, ctx->file.p, ctx->file.n, out->scale, roi, err)
                      : rn_prep_crop(&ctx->img, &ctx->sub, &ctx->pf, roi, quad, err);
    double read_s = from_src ? 0 : ctx->pf.read_s;
    if (!from_src) ctx->bytes_read += (int64_t)ctx->pf.bytes;
    rn_prep_close(&ctx->pf);
    if (rc) return rn_err_prefix(err, "%s", from_src ? in->path : prep);
    double t2 = rn_prof_now();
    ctx->stage_s[RN_CROP_STAGE_READ] += t1 - t0 + read_s;
    /* a prepared frame's skipped rows (within its first MCU row) are decoded, and timed in entropy_s */
    double skip_s = from_src ? ctx->img.skip_s : 0;
    ctx->stage_s[RN_CROP_STAGE_SKIP] += skip_s;
    ctx->stage_s[RN_CROP_STAGE_HUFF] += ctx->img.entropy_s;
    ctx->stage_s[RN_CROP_STAGE_ROWS] += t2 - t1 - skip_s - ctx->img.entropy_s - read_s;
    if (from_src) ctx->rows_skipped += ctx->img.y0, ctx->rows_read += ctx->img.h;
    if (out->occ[2] > 0 && out->occ[3] > 0) occlusion_paint(&ctx->img, out->occ, aug->occ_seed);
    crop_finish(dst, out, ctx, &ctx->img, inv, in, aug, cfg);
    return 0;
}

int rn_crop_sample_decoded(float *dst, rn_crop_out *out, rn_crop_ctx *ctx, const rn_image *img, const rn_crop_in *in,
                           const rn_aug *aug, const rn_crop_cfg *cfg, rn_err *err)
{
    RN_ASSERT(img->scale == 1 && img->x0 == 0 && img->y0 == 0 && img->w == img->full_w && img->h == img->full_h);
    if (check_input(in, err)) return -1;
    if (aug->occlude && img != &ctx->img)
        return rn_err_set(err, "%s: the synthetic occlusion paints the image: it needs one decoded by the crop",
                          in->path);
    double inv[6] = {0};
    if (crop_affine(out, inv, in, aug, cfg, img->w, img->h, err)) return -1;
    out->scale = 1;
    if (out->occ[2] > 0 && out->occ[3] > 0) occlusion_paint(&ctx->img, out->occ, aug->occ_seed);
    crop_finish(dst, out, ctx, img, inv, in, aug, cfg);
    return 0;
}
