/* rn_huff: baseline JPEG entropy decoding (ITU T.81 F.2.2) of one MCU whose
 * data stand alone: byte-aligned, every DC prediction 0 at its start, no
 * marker inside. That is a restart segment of one MCU, as a prepared frame
 * (rn_prep) stores them. The coefficients are the ones libjpeg decodes from
 * the same bytes (checked coefficient by coefficient in test_huff), found
 * with fewer steps: one table look-up gives the next one or two AC
 * coefficients whole (codes, runs and values) where they fit in 11 bits, the
 * MCU's bytes are unstuffed first so that the bit buffer takes 8 of them at a
 * time, and no restart marker is looked for.
 *
 *   rn_huff_table dc, ac;
 *   if (rn_huff_build(&dc, bits, vals) || rn_huff_build(&ac, bits2, vals2)) ...      // from a DHT
 *   rn_huff_mcu m = {.blocks = 6, .comp = {0, 0, 0, 0, 1, 2}, .dc = {&dc, ...}, .ac = {&ac, ...}};
 *   int16_t *blk[6] = {...};                  // each 64 coefficients in natural order, zeroed
 *   if (rn_huff_decode_mcu(blk, &m, data, n)) // corrupt
 */
#ifndef RN_DATA_HUFF_H
#define RN_DATA_HUFF_H

#include <stddef.h>
#include <stdint.h>

#define RN_HUFF_FAST_BITS 11
#define RN_HUFF_MAX_BLOCKS 10 /* blocks in an MCU (T.81 B.2.3) */
/* An MCU's data at most: 10 blocks of 64 codes of 16 + 11 bits, every byte stuffed */
#define RN_HUFF_MAX_MCU_BYTES (2 * 10 * 64 * 27 / 8)

/* One or two AC coefficients whose codes and values fit whole in the
 * FAST_BITS looked at (huff.c's pair_entry). */
typedef struct rn_huff_pair {
    uint8_t bits;          /* bits they take */
    uint8_t run;           /* zeros before the first */
    uint8_t step;          /* positions they advance the block by; 255: none fits */
    uint8_t pad;
    int16_t first, second; /* values */
} rn_huff_pair;

typedef struct rn_huff_table {
    uint16_t fast[1 << RN_HUFF_FAST_BITS]; /* next FAST_BITS bits -> code length << 8 | symbol; 0: a longer code */
    uint32_t ac[1 << RN_HUFF_FAST_BITS];   /* next FAST_BITS bits -> an AC code's length, run, size and value (huff.c) */
    rn_huff_pair ac2[1 << RN_HUFF_FAST_BITS];
    int32_t maxcode[18];                   /* largest code of each length, -1: none; [17] a sentinel */
    int32_t valoff[17];                    /* a code c of length l is symbol vals[c + valoff[l]] */
    uint8_t vals[256];
} rn_huff_table;

/* The decoding tables of a Huffman table given as in a DHT segment: bits[l]
 * codes of length l (l = 1..16, bits[0] unused), their symbols vals in order.
 * -1 when the counts exceed 256 symbols or the codes overflow their lengths. */
int rn_huff_build(rn_huff_table *t, const uint8_t bits[17], const uint8_t vals[256]);

/* An MCU's layout: its blocks in order, each block's component (in the scan)
 * and tables. */
typedef struct rn_huff_mcu {
    int blocks;
    int comp[RN_HUFF_MAX_BLOCKS];
    const rn_huff_table *dc[RN_HUFF_MAX_BLOCKS], *ac[RN_HUFF_MAX_BLOCKS];
} rn_huff_mcu;

/* Decodes the MCU in data[0..n) (no markers, DC predictions start at 0) into
 * blk[b] (64 coefficients in natural order each, zeroed by the caller; blk
 * NULL: decoded and dropped). -1 when the data are corrupt: an invalid code,
 * a 0xFF not followed by 0, coefficients past the 64th, bits needed beyond n,
 * or more than RN_HUFF_MAX_MCU_BYTES. */
int rn_huff_decode_mcu(int16_t *const *blk, const rn_huff_mcu *m, const uint8_t *data, size_t n);

#endif
