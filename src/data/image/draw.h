/* rn_rgb: an 8-bit RGB image and its PNG/JPEG writer (the pictures are drawn with cairo,
 * src/viz, and written through this).
 *
 *   rn_rgb img = {.px = pixels, .w = w, .h = h};           // (h, w, 3), rows 3*w bytes
 *   if (rn_rgb_write("out.png", &img, &err)) ...           // .png, or .jpg/.jpeg (quality 92)
 */
#ifndef RN_DATA_DRAW_H
#define RN_DATA_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_rgb {
    uint8_t *px; /* (h, w, 3) */
    int w, h;
} rn_rgb;

/* Writes img as PNG (.png) or JPEG (.jpg, .jpeg), chosen by the extension
 * (case-insensitive), atomically. Returns 0, or -1 naming the file. */
int rn_rgb_write(const char *path, const rn_rgb *img, rn_err *err);
/* Encodes img (w, h >= 1) as PNG (quality 0) or as a JPEG of quality 1..100 into a
 * malloc'd *out of *n bytes, for a caller that writes it its own way (the synthetic
 * sets' images). 0, or -1 (nothing to free). */
int rn_rgb_encode(unsigned char **out, size_t *n, const rn_rgb *img, int quality);
/* What rn_rgb_write checks before it draws anything: the extension, and that
 * the folder exists. 0, or -1 naming path. */
int rn_rgb_check_path(const char *path, rn_err *err);

#endif
