/* rn_image: JPEG (libjpeg-turbo) and PNG (libpng) decoding into 8-bit RGB,
 * with DCT-domain downscaling (1/2, 1/4, 1/8) and region-of-interest decoding
 * for JPEG, so that only the part of the image under a box is decoded.
 *
 *   rn_bytes file = {0}; rn_image img = {0}; rn_image_info info;
 *   if (rn_bytes_read(&file, "a.jpg", &err)) ...
 *   if (rn_image_probe(&info, file.p, file.n, &err)) ...
 *   int roi[4] = {0, 0, 100, 50};                 // x, y, w, h at scale 2
 *   if (rn_image_decode(&img, file.p, file.n, 2, roi, &err)) ...
 *   // img.px[y * img.stride + 3 * x + c] is scaled-image pixel (img.x0 + x, img.y0 + y)
 *   rn_image_free(&img); rn_bytes_free(&file);
 *
 * Coordinates: scaled-image pixel u covers original pixels [s*u, s*u + s), so
 * its centre is at original coordinate s*u + (s - 1)/2.
 */
#ifndef RN_DATA_IMAGE_H
#define RN_DATA_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Largest image decoded: at most RN_IMAGE_MAX_SIDE pixels a side (JPEG's own
 * limit is 65500) and RN_IMAGE_MAX_PIXELS in all (2^28: 768 MiB of RGB), so
 * that a header declaring 10^6 x 10^6 pixels is refused before allocating. */
#define RN_IMAGE_MAX_SIDE 65535
#define RN_IMAGE_MAX_PIXELS (1 << 28)
/* Largest image file read: 512 MiB, checked from the file's size before any
 * byte is read (a real photo is well under 100 MiB). */
#define RN_IMAGE_MAX_FILE_BYTES ((size_t)512 << 20)

typedef struct rn_bytes {
    uint8_t *p;
    size_t n, cap;
} rn_bytes;

typedef struct rn_image_info {
    int w, h;    /* full image size in pixels */
    int is_jpeg; /* 1 JPEG, 0 PNG */
} rn_image_info;

typedef struct rn_image {
    int w, h;           /* decoded region size */
    size_t stride;      /* bytes per row of px */
    int x0, y0;         /* region's top-left in pixels of the scaled image */
    int scale;          /* 1, 2, 4 or 8 */
    int full_w, full_h; /* original image size */
    uint8_t *px;        /* (h, w, 3) RGB, rows stride bytes apart; reused across calls */
    double skip_s;      /* seconds the last decode spent skipping the rows above the region */
    double entropy_s;   /* rn_image_decode_mcus: seconds rn_huff took (from every 16th MCU timed), else 0 */
    size_t cap;
} rn_image;

/* Reads a whole regular file of at most RN_IMAGE_MAX_FILE_BYTES into b (buffer
 * reused); a FIFO, device or larger file is refused before any read. Returns
 * 0, or -1 naming the path and the problem. */
int rn_bytes_read(rn_bytes *b, const char *path, rn_err *err);
void rn_bytes_free(rn_bytes *b);

/* Reads the image size and kind from the header. Returns 0, or -1 when the
 * header is corrupt or the size is beyond the caps above. */
int rn_image_probe(rn_image_info *info, const uint8_t *buf, size_t n, rn_err *err);

/* Decodes buf into img as RGB. scale in {1,2,4,8} (JPEG only; PNG needs 1).
 * roi = {x, y, w, h} in scaled-image pixels (clipped; the decoded region may be
 * a little larger on the left/right, see img->x0), or NULL for the whole
 * image. Corrupt data (including libjpeg warnings) is an error. */
int rn_image_decode(rn_image *img, const uint8_t *buf, size_t n, int scale, const int *roi, rn_err *err);

/* A JPEG's entropy-coded data MCU by MCU, for rn_image_decode_mcus: MCU i
 * (raster order) is the bytes [mcu[i][0], mcu[i][0] + mcu[i][1]) of data, a
 * restart segment of its own (DC predictions 0, no marker inside); length 0:
 * every coefficient of that MCU is 0. tables: scratch for the decoding tables. */
typedef struct rn_jpeg_mcus {
    const uint8_t *data;
    const uint32_t (*mcu)[2]; /* (count, 2) offset, length */
    size_t count;
    struct rn_huff_table *tables; /* (8) */
} rn_jpeg_mcus;

/* As rn_image_decode at scale 1 of a baseline, single-scan Huffman JPEG whose
 * markers (SOI to the end of SOS) are head[0..n) and whose MCUs are mcus:
 * libjpeg does the rest as ever, but the entropy decoding is rn_huff's (the
 * same coefficients, faster). -1 when the JPEG is not of that kind, the MCU
 * count disagrees with its size, or an MCU's data are corrupt. */
int rn_image_decode_mcus(rn_image *img, const uint8_t *head, size_t n, const rn_jpeg_mcus *mcus, const int *roi,
                         rn_err *err);

/* Whole image at full size from a file, as displayed: a JPEG's EXIF
 * Orientation applied, as OpenCV's imread does by default (the demo and
 * predict; the datasets ignore it, as the authors' loader). *orientation (when
 * not NULL) gets the tag, 1..8. Errors name the path. */
int rn_image_load(rn_image *img, rn_bytes *scratch, const char *path, int *orientation, rn_err *err);

/* Turns a whole decoded image (scale 1, no region) from stored into displayed
 * order for EXIF orientation 1..8 (5..8 swap width and height); anything else
 * leaves it as is. */
void rn_image_orient(rn_image *img, int orientation);

void rn_image_free(rn_image *img);

#endif
