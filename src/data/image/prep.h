/* rn_prep: prepared frames, a one-time lossless re-encoding of a JPEG frame
 * with a restart marker after every MCU and an index of where each MCU's
 * entropy-coded data starts (the DCT coefficients copied, never re-quantised).
 * A crop then reads and entropy-decodes only the MCUs of its own MCU-aligned
 * rectangle, instead of the whole file and every row above it: rn_huff
 * decodes each MCU from its own bytes and libjpeg does the rest
 * (rn_image_decode_mcus). The decoded pixels equal the frame's within the
 * region less its margin (see rn_prep_crop).
 *
 *   char p[4096]; rn_prep_path(p, sizeof p, prep_dir, src);
 *   rn_prep_build(src, p, &info, &err);                       // once: rootnet dataset --prepare
 *   rn_prep_file pf = {0};
 *   int w, h, rc = rn_prep_load(&pf, &w, &h, p, src, &err);   // 1: none or stale (decode src), -1 corrupt
 *   if (rc == 0 && rn_prep_crop(&img, &sub, &pf, roi, quad, &err)) ...
 *   rn_prep_close(&pf);                                        // rn_prep_file_free(&pf) at the end
 *
 * File (version 4): a fixed header (magic "RNPREP1\n", version, the source's
 * size, mtime and a hash of its first and last 4 KB, the frame and MCU sizes,
 * a CRC-32 of header, index, MCU CRCs and the JPEG header), the index (MCU
 * count + 1 offsets), a CRC-32 of each MCU's data, then the JPEG. A file whose
 * length, magic, CRC or index disagree is refused as corrupt, never decoded
 * (an MCU's CRC when a crop reads it); one whose source changed (size, mtime
 * or the hash) or of another version is stale and ignored.
 */
#ifndef RN_DATA_PREP_H
#define RN_DATA_PREP_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "data/image/image.h"

typedef struct rn_prep_info {
    int w, h;           /* frame size */
    int built;          /* 1: written by this call; 0: an up-to-date file was there */
    uint64_t bytes;     /* prepared file size */
} rn_prep_info;

/* prep_dir/<64-bit hash of src's real path (src itself if it has none) as hex>.rnp into out. */
void rn_prep_path(char *out, size_t len, const char *prep_dir, const char *src);

/* Writes the prepared file of the JPEG src at prep (temp file, then rename),
 * unless an intact (every MCU's CRC checked), up-to-date one is there. Fails on a PNG, a CMYK or
 * arithmetic-coded JPEG, or an unreadable/corrupt source. */
int rn_prep_build(const char *src, const char *prep, rn_prep_info *info, rn_err *err);

/* An open prepared frame: its header, index and JPEG header in memory, the
 * MCUs' data read by rn_prep_crop as it needs them. */
typedef struct rn_prep_file {
    int fd, open;      /* open: fd is open, from an accepting rn_prep_load to rn_prep_close ({0}: none) */
    rn_bytes head;     /* header, MCU index, the JPEG's bytes before its first MCU */
    uint32_t (*mcus)[2];          /* scratch: the crop's MCUs, offset and length in its data */
    size_t mcus_cap;
    struct rn_huff_table *tables; /* scratch: (8) decoding tables */
    uint64_t bytes;    /* bytes read by the last load and crop */
    double read_s;     /* seconds spent reading MCU data by the last crop */
} rn_prep_file;

/* Opens the prepared file prep of src into pf (closing what pf held), reads its
 * header and index and checks them; *w, *h: the frame's size. Returns 0 (pf
 * open); 1 when prep is missing or stale (src's size, mtime or head/tail hash changed: the
 * caller decodes src); -1 when prep is corrupt (message names prep and the
 * problem). Never reads more than the header, the index and the JPEG header. */
int rn_prep_load(rn_prep_file *pf, int *w, int *h, const char *prep, const char *src, rn_err *err);

/* Closes pf's file (none open: nothing); its buffers stay for the next load. */
void rn_prep_close(rn_prep_file *pf);

/* Closes and frees; pf is then {0}. */
void rn_prep_file_free(rn_prep_file *pf);

/* From a file rn_prep_load accepted (still open): the pixels of roi (x, y, w, h in frame
 * pixels, clipped; the region may come out larger) into img (x0, y0 in frame
 * pixels, full_w and full_h the frame's), equal to what rn_image_decode of the
 * source at scale 1 gives within roi less a margin of 2 px (roi holds what the
 * warp reads plus 4 px: its edge pixels lack the chroma neighbour beyond).
 * quad (x, y of 4 corners in order; NULL: all of roi): the convex region the
 * warp samples; an MCU farther than 4 px from it is not decoded but a
 * stand-in (all coefficients 0) takes its place, so its pixels are not the
 * frame's. Only the MCUs decoded are read from the file (one read a row of
 * MCUs). sub: reusable scratch. -1 when a read comes short (the file changed
 * since it was loaded) or an MCU's data are corrupt (its CRC or rn_huff). */
int rn_prep_crop(rn_image *img, rn_bytes *sub, rn_prep_file *pf, const int roi[4], const double quad[8], rn_err *err);

#endif
