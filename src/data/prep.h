/* rn_prep: prepared frames, a one-time lossless re-encoding of a JPEG frame
 * with a restart marker after every MCU and an index of where each MCU's
 * entropy-coded data starts. Any MCU-aligned rectangle of the frame is then a
 * small JPEG put together from the index (the DCT coefficients copied, never
 * re-quantised), so a crop entropy-decodes only its own MCUs instead of every
 * row above it and the full width of its rows. The decoded pixels equal the
 * frame's: the rectangle keeps one MCU beyond the region on each side (chroma
 * upsampling reads one neighbour), and where it meets the frame's edge it is
 * the frame's edge.
 *
 *   char p[4096]; rn_prep_path(p, sizeof p, prep_dir, src);
 *   rn_prep_build(src, p, &info, &err);                       // once: rootnet dataset --prepare
 *   int w, h, rc = rn_prep_load(&file, &w, &h, p, src, &err);  // 1: none or stale (decode src), -1 corrupt
 *   if (rc == 0 && rn_prep_crop(&img, &sub, &file, roi, &err)) ...
 *
 * File: a fixed header (magic "RNPREP1\n", version, the source's size and
 * mtime, the frame and MCU sizes, a CRC-32 of header and index), the index
 * (MCU count + 1 offsets), then the JPEG. A file whose length, magic, version,
 * CRC or index disagree is refused as corrupt, never decoded; one whose
 * source changed (size or mtime) is stale and ignored.
 */
#ifndef RN_DATA_PREP_H
#define RN_DATA_PREP_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "data/image.h"

typedef struct rn_prep_info {
    int w, h;           /* frame size */
    int built;          /* 1: written by this call; 0: an up-to-date file was there */
    uint64_t bytes;     /* prepared file size */
} rn_prep_info;

/* prep_dir/<64-bit hash of src's real path (src itself if it has none) as hex>.rnp into out. */
void rn_prep_path(char *out, size_t len, const char *prep_dir, const char *src);

/* Writes the prepared file of the JPEG src at prep (temp file, then rename),
 * unless an intact, up-to-date one is there. Fails on a PNG, a CMYK or
 * arithmetic-coded JPEG, or an unreadable/corrupt source. */
int rn_prep_build(const char *src, const char *prep, rn_prep_info *info, rn_err *err);

/* Reads the prepared file prep of src into file and checks it; *w, *h: the
 * frame's size. Returns 0; 1 when prep is missing or stale (src's size or
 * mtime changed: the caller decodes src); -1 when prep is corrupt (message
 * names prep and the problem). */
int rn_prep_load(rn_bytes *file, int *w, int *h, const char *prep, const char *src, rn_err *err);

/* From a file rn_prep_load accepted: the pixels of roi (x, y, w, h in frame
 * pixels, clipped; the region may come out larger) into img (x0, y0 in frame
 * pixels, full_w and full_h the frame's), equal to what rn_image_decode of the
 * source at scale 1 gives within roi less a margin of 2 px (roi holds what the
 * warp reads plus 4 px: its edge pixels lack the chroma neighbour beyond).
 * quad (x, y of 4 corners in order; NULL: all of roi): the convex region the
 * warp samples; an MCU farther than 4 px from it is not decoded but a
 * stand-in (all coefficients 0) takes its place, so its pixels are not the
 * frame's. sub: reusable scratch. -1 when the JPEG put together fails to decode. */
int rn_prep_crop(rn_image *img, rn_bytes *sub, const rn_bytes *file, const int roi[4], const double quad[8], rn_err *err);

#endif
