/* rn_draw: minimal raster drawing on 8-bit RGB images (box, cross) and PNG/JPEG
 * writing (the pictures themselves are drawn with cairo, src/viz).
 *
 *   rn_rgb img = {.px = pixels, .w = w, .h = h};           // (h, w, 3), rows 3*w bytes
 *   const uint8_t green[3] = {0, 255, 0};
 *   rn_draw_rect(&img, 10, 20, 110, 220, 2, green);        // x0, y0, x1, y1, thickness
 *   rn_draw_cross(&img, 60, 120, 6, 2, green);             // centre, half size, thickness
 *   if (rn_rgb_write("out.png", &img, &err)) ...           // .png, or .jpg/.jpeg (quality 92)
 *
 * Everything clips to the image; coordinates may be anywhere.
 */
#ifndef RN_DATA_DRAW_H
#define RN_DATA_DRAW_H

#include <stdint.h>

#include "core/status.h"

typedef struct rn_rgb {
    uint8_t *px; /* (h, w, 3) */
    int w, h;
} rn_rgb;

/* Pixel (x, y) = colour when inside the image. */
void rn_draw_pixel(rn_rgb *img, int x, int y, const uint8_t colour[3]);
/* Filled rectangle [x0, x1] x [y0, y1] (inclusive, any order). */
void rn_draw_fill(rn_rgb *img, int x0, int y0, int x1, int y1, const uint8_t colour[3]);
/* Rectangle outline, `thick` pixels wide, inside [x0, x1] x [y0, y1]. */
void rn_draw_rect(rn_rgb *img, int x0, int y0, int x1, int y1, int thick, const uint8_t colour[3]);
/* '+' of arms `half` pixels long about (x, y), `thick` wide. */
void rn_draw_cross(rn_rgb *img, int x, int y, int half, int thick, const uint8_t colour[3]);

/* Writes img as PNG (.png) or JPEG (.jpg, .jpeg), chosen by the extension
 * (case-insensitive), atomically. Returns 0, or -1 naming the file. */
int rn_rgb_write(const char *path, const rn_rgb *img, rn_err *err);

#endif
