/* rn_exif_focal: a camera's focal length in pixels from a JPEG's EXIF (libexif).
 *
 *   rn_exif_focal ef;
 *   int rc = rn_exif_focal_read(&ef, bytes, n, width, height, &err);
 *   if (rc == 0) printf("fx %g fy %g from %s\n", ef.f[0], ef.f[1], ef.source);
 *   else if (rc == 1) ...            // no EXIF focal: fall back
 *   else ...                         // rc == -1: broken EXIF, err says what
 *
 * Conventions (in this order):
 *   FocalLengthIn35mmFilm f35 (mm): the 35 mm equivalent refers to the 36 mm
 *     side of a 36 x 24 mm frame, laid along the image's long side:
 *     fx = fy = f35 / 36 * max(width, height). 0 means unknown (skipped).
 *   FocalLength f (mm) with FocalPlaneXResolution / FocalPlaneYResolution
 *     (pixels per unit) and FocalPlaneResolutionUnit (2 inch = 25.4 mm, the
 *     default; 3 cm; 4 mm; 5 um): fx = f * xres / unit_mm, fy likewise (Y
 *     missing: X). The resolution is the sensor's: a resized image gets a
 *     wrong focal from it (the 35 mm tag does not have that problem).
 * "Broken" is an Exif APP1 segment libexif cannot parse, or a focal tag of the
 * wrong type, with a zero denominator, or giving a non-finite or non-positive
 * focal. An image without an Exif segment (and every PNG) has none (rc 1).
 */
#ifndef RN_DATA_EXIF_FOCAL_H
#define RN_DATA_EXIF_FOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_exif_focal {
    double f[2];        /* fx, fy in pixels */
    const char *source; /* "exif-35mm" or "exif-focal-plane" */
} rn_exif_focal;

/* buf: the whole image file. Returns 0 (found), 1 (none) or -1 (broken, err
 * says which tag and why). */
int rn_exif_focal_read(rn_exif_focal *out, const uint8_t *buf, size_t n, int width, int height, rn_err *err);

/* The EXIF Orientation tag (IFD0) of a JPEG file: 1..8, 1 when there is none,
 * it is unreadable or out of range (as OpenCV's imread, which then leaves the
 * image as stored). */
int rn_exif_orientation(const uint8_t *buf, size_t n);

#endif
