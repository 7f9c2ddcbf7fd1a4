/* rn_augment: the authors' crop and augmentation (3DMPPE RootNet
 * data/dataset.py: get_aug_config, generate_patch_image, gen_trans_from_patch_cv,
 * trans_point2d), with a warp that reproduces OpenCV's warpAffine(INTER_LINEAR,
 * BORDER_CONSTANT 0) fixed-point arithmetic, fused colour scaling and
 * normalisation into a planar float tensor.
 *
 *   rn_crop_cfg cfg; rn_crop_cfg_default(&cfg);         // 256x256, authors' normalisation
 *   rn_crop_ctx ctx = {0};
 *   rn_aug aug; rn_aug_draw(&aug, &rng);                // or rn_aug_none(&aug)
 *   rn_crop_in in = {.path = p, .bbox = {x, y, w, h}, .root = {rx, ry}, .root_vis = 1};
 *   rn_crop_out out;
 *   if (rn_crop_sample(chw, &out, &ctx, &in, &aug, &cfg, &err)) ...   // chw: (3, H, W) floats
 *   rn_crop_ctx_free(&ctx);
 *
 * Normalisation: the authors feed float32 0..255 RGB to torchvision's ToTensor
 * (which only divides uint8 input by 255) and Normalize(mean, std), so the
 * network sees (v - 0.485) / 0.229 with v in 0..255. pixel_scale = 1 keeps
 * that (default, needed for the authors' weights); pixel_scale = 1/255 gives
 * textbook ImageNet normalisation on [0, 1].
 */
#ifndef RN_DATA_AUGMENT_H
#define RN_DATA_AUGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "core/status.h"
#include "data/image/image.h"
#include "data/image/prep.h"

typedef struct rn_aug {
    double rot;      /* degrees */
    int flip;        /* 1: horizontal flip */
    float color[3];  /* per-channel scale for R, G, B */
    double scale;    /* the box's size factor (PoseNet's; 1 for RootNet) */
    int occlude;     /* 1: PoseNet's synthetic occlusion, a rectangle of noise in the box (rn_crop_out.occ) */
    uint64_t occ_seed; /* its rectangle's draws and its noise */
} rn_aug;

/* Draws the authors' get_aug_config: rot = clip(N(0,1), -2, 2) * 30 with
 * probability 0.6 (the uniform is drawn first), flip with probability 0.5,
 * then three U(0.8, 1.2) colour scales. */
void rn_aug_draw(rn_aug *a, rn_rng *r);
/* PoseNet's get_aug_config (3DMPPE_POSENET_RELEASE data/dataset.py): first scale = clip(N(0,1), -1, 1)
 * * 0.25 + 1, then as rn_aug_draw, then the synthetic occlusion with probability 0.5 (its rectangle is
 * drawn by the crop, which knows the box and the image: their generate_patch_image's rule, area
 * U(0, 0.7) of the box, aspect U(0.3, 1/0.3), placed in the box until it lies inside the image, at
 * most RN_OCCLUDE_TRIES times; filled with uniform noise 0..255 before the warp). */
void rn_aug_draw_posenet(rn_aug *a, rn_rng *r);
#define RN_OCCLUDE_TRIES 1000
/* No augmentation: rot 0, no flip, colour 1, scale 1, no occlusion. */
void rn_aug_none(rn_aug *a);

/* gen_trans_from_patch_cv(inv=False): the 2x3 affine m (row-major) mapping a
 * box of centre (cx, cy) and size (bw, bh), rotated by rot degrees, onto an
 * out_w x out_h patch. Reproduces the float32 rounding of the authors' points.
 * Returns -1 (m unset) when that rounding collapses the box to a line: a box
 * far smaller than the float spacing at its centre (OpenCV would divide by 0). */
int rn_affine_from_box(double m[6], double cx, double cy, double bw, double bh, int out_w, int out_h, double rot);
/* Inverse of a 2x3 affine, computed as OpenCV's warpAffine does. */
void rn_affine_invert(double inv[6], const double m[6]);
/* (x, y) -> m * (x, y, 1). */
void rn_affine_apply(double *ox, double *oy, const double m[6], double x, double y);

/* Where each destination pixel samples: m maps (x, y) to source coordinates in
 * the "frame"; after OpenCV's quantisation to 1/32 px, X' = flip ? flip_q - X : X,
 * then X' -= off_x_q, Y -= off_y_q give 1/32 px coordinates in the buffer. */
typedef struct rn_warp_map {
    double m[6];
    int flip;
    int32_t flip_q, off_x_q, off_y_q;
} rn_warp_map;

/* Bilinear warp of an RGB u8 image with OpenCV's warpAffine fixed-point
 * arithmetic (INTER_BITS 5, 15-bit coefficients) and a constant 0 border.
 * scratch holds 2 * dw ints. */
void rn_warp_bilinear_u8(uint8_t *dst /* (dh, dw, 3) */, const uint8_t *src /* (sh, sw, 3), rows stride bytes */,
                         int32_t *scratch /* (2 * dw) */, const rn_warp_map *map, int sw, int sh, size_t stride,
                         int dw, int dh);

/* Colour scale, clip to [0, 255], (v * pixel_scale - mean) / std, HWC u8 -> CHW float. */
void rn_normalize_chw(float *dst /* (3, h, w) */, const uint8_t *src /* (h, w, 3) */, const float color[3],
                      float pixel_scale, const float mean[3], const float std[3], int w, int h);

typedef struct rn_crop_cfg {
    int in_w, in_h;     /* network input (256, 256) */
    int out_w, out_h;   /* output heatmap size (in / 4) */
    int fast_decode;    /* 1: decode JPEGs at 1/2, 1/4, 1/8 when the box is that much larger (faster, not
                         * the authors' pixels); 0 (default): always full size, as cv2.imread */
    const char *prep_dir; /* prepared frames (data/image/prep.h; rootnet dataset --prepare), used where one is
                           * there and up to date, the same pixels; NULL: off. Not with fast_decode. */
    int exif_orient;    /* 1: a JPEG's EXIF orientation applied first, as cv2.imread (predict, demo; the box
                         * is in displayed pixels; such an image is decoded whole, at full size); 0
                         * (default): ignored, as the authors' dataset loader (IMREAD_IGNORE_ORIENTATION) */
    float pixel_scale;  /* 1 (authors) or 1/255 */
    float mean[3], std[3];
} rn_crop_cfg;

/* 256x256 input, 64x64 output, full-size decoding, authors' normalisation. */
void rn_crop_cfg_default(rn_crop_cfg *cfg);

typedef struct rn_crop_in {
    const char *path;   /* image file */
    float bbox[4];      /* x, y, w, h in original pixels */
    int has_center;     /* 1: center is the box centre in float64 (the authors' numpy value); 0: the
                         * centre is taken from bbox */
    double center[2];
    int has_size;       /* 1: size is the box's w, h in float64 (the authors' value; scaled before it is
                         * rounded); 0: from bbox */
    double size[2];
    float root[2];      /* root x, y in original pixels */
    float root_vis;
} rn_crop_in;

typedef struct rn_crop_out {
    double trans[6];    /* authors' trans: (flipped) image -> input patch pixels */
    double inv[6];      /* input patch pixels -> original (unflipped) image pixels */
    float root[2];      /* root in output-space pixels */
    float root_vis;     /* root_vis, 0 when the root falls outside the patch */
    int img_w, img_h;   /* original image size */
    int scale;          /* JPEG DCT scale used (1, 2, 4, 8) */
    int occ[4];         /* the occlusion's rectangle x, y, w, h in original (unflipped) pixels; w = 0: none */
} rn_crop_out;

/* Stages of rn_crop_sample, timed into rn_crop_ctx.stage_s (seconds, summed over samples):
 * reading the file, the rows above the crop (skipped: entropy decoding only), the crop's rows
 * (entropy decoding of whole rows, IDCT, upsampling, colour conversion of the crop's columns;
 * from a prepared frame: IDCT, upsampling and colour of the crop's MCUs), a prepared frame's
 * entropy decoding of the crop's MCUs by rn_huff (HUFF, estimated: rn_image.entropy_s), the warp
 * and the normalisation. */
enum { RN_CROP_STAGE_READ, RN_CROP_STAGE_SKIP, RN_CROP_STAGE_ROWS, RN_CROP_STAGE_HUFF, RN_CROP_STAGE_WARP,
       RN_CROP_STAGE_NORM, RN_CROP_NSTAGES };

/* Per-thread scratch reused across samples. */
typedef struct rn_crop_ctx {
    rn_bytes file, sub; /* file: a source JPEG; sub: the crop's JPEG put together from a prepared frame */
    rn_prep_file pf;    /* the prepared frame, open during a sample */
    rn_image img;
    uint8_t *patch;     /* (in_h, in_w, 3) */
    int32_t *xy;        /* 2 * in_w */
    size_t patch_cap, xy_cap;
    double stage_s[RN_CROP_NSTAGES];  /* time per stage, summed over this context's samples */
    int64_t rows_skipped, rows_read;  /* image rows skipped and decoded from source files, summed */
    int64_t bytes_read;               /* file bytes read (sources, prepared frames), summed */
} rn_crop_ctx;

void rn_crop_ctx_free(rn_crop_ctx *ctx);

/* DCT scale for a box: 1 without fast_decode, else the largest s in {1,2,4,8}
 * with bw/s >= in_w and bh/s >= in_h. */
int rn_crop_pick_scale(const float bbox[4], const rn_crop_cfg *cfg);

/* Reads, decodes (only the region the patch needs), crops, augments and
 * normalises one sample into dst. Returns 0, or -1 with "path: problem". */
int rn_crop_sample(float *dst /* (3, in_h, in_w) */, rn_crop_out *out, rn_crop_ctx *ctx, const rn_crop_in *in,
                   const rn_aug *aug, const rn_crop_cfg *cfg, rn_err *err);
/* The same from an image already decoded in memory: img is the whole image at
 * full size (scale 1, x0 = y0 = 0, w = full_w, h = full_h; px borrowed) and
 * in->path only names it in messages. Gives what rn_crop_sample gives for the
 * file img was decoded from (with the same decoder settings) without fast_decode. */
int rn_crop_sample_decoded(float *dst /* (3, in_h, in_w) */, rn_crop_out *out, rn_crop_ctx *ctx, const rn_image *img,
                           const rn_crop_in *in, const rn_aug *aug, const rn_crop_cfg *cfg, rn_err *err);

#endif
