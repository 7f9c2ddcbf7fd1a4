/* Rendering of synthetic scenes (background, capsule figures) and JPEG output. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/rng.h"
#include "data/image/draw.h"
#include "data/synth/synth.h"

enum {
    J_HEAD_TOP, J_THORAX, J_RSHO, J_RELB, J_RWRI, J_LSHO, J_LELB, J_LWRI, J_RHIP, J_RKNE, J_RANK,
    J_LHIP, J_LKNE, J_LANK, J_PELVIS, J_SPINE, J_HEAD, J_RHAND, J_LHAND, J_RTOE, J_LTOE
};

/* Body parts: joints a-b, radius as a fraction of height, colour. */
typedef struct part {
    int a, b;
    float radius;
    unsigned char rgb[3];
} part;

static const part PARTS[] = {
    {J_THORAX, J_SPINE, 0.085f, {40, 70, 200}},   {J_SPINE, J_PELVIS, 0.075f, {40, 70, 200}},
    {J_RHIP, J_LHIP, 0.055f, {230, 0, 230}},      {J_PELVIS, J_PELVIS, 0.05f, {255, 40, 255}},
    {J_HEAD, J_HEAD, 0.065f, {235, 190, 150}},    {J_THORAX, J_HEAD, 0.03f, {235, 190, 150}},
    {J_RSHO, J_LSHO, 0.04f, {40, 70, 200}},       {J_RSHO, J_RELB, 0.032f, {220, 60, 40}},
    {J_RELB, J_RWRI, 0.027f, {240, 140, 40}},     {J_LSHO, J_LELB, 0.032f, {40, 170, 60}},
    {J_LELB, J_LWRI, 0.027f, {120, 220, 80}},     {J_RHIP, J_RKNE, 0.05f, {200, 40, 40}},
    {J_RKNE, J_RANK, 0.04f, {250, 200, 30}},      {J_LHIP, J_LKNE, 0.05f, {30, 150, 150}},
    {J_LKNE, J_LANK, 0.04f, {40, 220, 220}},      {J_RANK, J_RTOE, 0.025f, {60, 60, 60}},
    {J_LANK, J_LTOE, 0.025f, {60, 60, 60}},
};
enum { N_PARTS = sizeof PARTS / sizeof PARTS[0], PELVIS_PART = 3 };

/* Wall above the horizon, a checkered ground plane below it, per-pixel noise. */
static void background(unsigned char *rgb, const rn_synth_image *im, uint64_t seed, long i)
{
    rn_rng r;
    rn_rng_seed2(&r, seed ^ 0x5eedULL, (uint64_t)i);
    float wall[3], ground[3], tile = (float)(300 + 500 * rn_rng_uniform(&r));
    for (int k = 0; k < 3; k++) {
        wall[k] = (float)(60 + 150 * rn_rng_uniform(&r));
        ground[k] = (float)(50 + 120 * rn_rng_uniform(&r));
    }
    uint32_t salt = (uint32_t)rn_rng_u64(&r);
    int w = im->width, h = im->height;
    for (int y = 0; y < h; y++) {
        float dy = (float)(y - im->c[1]);
        for (int x = 0; x < w; x++) {
            float shade = 1.0f;
            const float *base = wall;
            if (dy > 1.0f) {
                float Z = (float)(im->f[1] * im->cam_height_mm) / dy;
                float X = (float)(x - im->c[0]) * Z / (float)im->f[0];
                int chk = ((int)floorf(X / tile) + (int)floorf(Z / tile)) & 1;
                shade = chk ? 0.8f : 1.0f;
                base = ground;
            } else {
                shade = 0.85f + 0.15f * (float)y / (float)h;
            }
            float n = (float)(rn_mix32((uint32_t)(y * w + x) ^ salt) & 31) - 16.0f;
            for (int k = 0; k < 3; k++) {
                float v = base[k] * shade + n * 0.6f;
                rgb[((size_t)y * w + x) * 3 + k] = (unsigned char)fminf(fmaxf(v, 0.0f), 255.0f);
            }
        }
    }
}

/* Fills the capsule a-b (pixels) of radius rad with a shaded colour. */
static void capsule(unsigned char *rgb, int w, int h, const double *a, const double *b, double rad,
                    const unsigned char *col)
{
    int x0 = (int)floor(fmin(a[0], b[0]) - rad), x1 = (int)ceil(fmax(a[0], b[0]) + rad);
    int y0 = (int)floor(fmin(a[1], b[1]) - rad), y1 = (int)ceil(fmax(a[1], b[1]) + rad);
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > w - 1 ? w - 1 : x1;
    y1 = y1 > h - 1 ? h - 1 : y1;
    double dx = b[0] - a[0], dy = b[1] - a[1], len2 = dx * dx + dy * dy, r2 = rad * rad;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            double px = x - a[0], py = y - a[1];
            double t = len2 > 0 ? fmin(fmax((px * dx + py * dy) / len2, 0.0), 1.0) : 0.0;
            double ex = px - t * dx, ey = py - t * dy, d2 = ex * ex + ey * ey;
            if (d2 > r2) continue;
            double shade = 1.0 - 0.4 * d2 / r2;
            unsigned char *p = rgb + ((size_t)y * w + x) * 3;
            for (int k = 0; k < 3; k++) p[k] = (unsigned char)(col[k] * shade);
        }
}

static void draw_person(unsigned char *rgb, const rn_synth_image *im, const rn_synth_person *p)
{
    int order[N_PARTS];
    double depth[N_PARTS];
    for (int k = 0; k < N_PARTS; k++) {
        order[k] = k;
        depth[k] = 0.5 * (p->cam[PARTS[k].a][2] + p->cam[PARTS[k].b][2]);
    }
    for (int k = 1; k < N_PARTS; k++) /* far first; insertion sort, stable */
        for (int m = k; m > 0 && depth[order[m]] > depth[order[m - 1]] + 1e-9; m--) {
            int t = order[m];
            order[m] = order[m - 1];
            order[m - 1] = t;
        }
    for (int k = 0; k < N_PARTS; k++) {
        if (order[k] == PELVIS_PART) continue;
        const part *q = &PARTS[order[k]];
        double rad = q->radius * p->height_mm * im->f[0] / depth[order[k]];
        capsule(rgb, im->width, im->height, p->img[q->a], p->img[q->b], rad, q->rgb);
    }
    /* the pelvis marker goes on top of its own figure, so the root is always locatable */
    const part *q = &PARTS[PELVIS_PART];
    capsule(rgb, im->width, im->height, p->img[q->a], p->img[q->b],
            q->radius * p->height_mm * im->f[0] / depth[PELVIS_PART], q->rgb);
}

void rn_synth_render(unsigned char *rgb, const rn_synth_image *im, uint64_t seed, long i)
{
    background(rgb, im, seed, i);
    int order[3] = {0, 1, 2};
    for (int a = 0; a < im->n_people; a++) /* far people first */
        for (int b = a + 1; b < im->n_people; b++)
            if (im->people[order[b]].cam[RN_SYNTH_ROOT][2] > im->people[order[a]].cam[RN_SYNTH_ROOT][2]) {
                int t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    for (int a = 0; a < im->n_people; a++) draw_person(rgb, im, &im->people[order[a]]);
}

int rn_synth_write_jpeg(const char *path, const unsigned char *rgb, int w, int h, rn_err *err)
{
    unsigned char *buf;
    size_t len;
    rn_rgb img = {.px = (uint8_t *)rgb, .w = w, .h = h};
    if (rn_rgb_encode(&buf, &len, &img, 90)) return rn_err_set(err, "%s: JPEG encoding failed", path);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(buf);
        return rn_err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    }
    int bad = fwrite(buf, 1, len, f) != len;
    free(buf);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        unlink(tmp);
        return rn_err_set(err, "%s: cannot write JPEG", path);
    }
    return 0;
}
