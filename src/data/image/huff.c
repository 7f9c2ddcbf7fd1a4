#include "data/image/huff.h"

#include <string.h>

/* T.81 F.1.2.1.2's zigzag order: the k-th coefficient of a block goes to natural position zigzag[k];
 * k past 63 (corrupt data: a run beyond the block's end) lands on 63 and the block is refused. */
static const uint8_t zigzag[80] = {0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
                                   12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
                                   35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
                                   58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
                                   63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

/* An rn_huff_table.ac entry: the bits to take (the code and its value where
 * both fit in the FAST_BITS looked at, AC_FITS, with the value; else the code
 * alone; 0: a longer code), the symbol's size and run, whether it ends the block. */
#define AC_LEN(e) ((int)((e) & 31))
#define AC_SIZE(e) ((int)((e) >> 5 & 15))
#define AC_RUN(e) ((int)((e) >> 9 & 15))
#define AC_EOB (1u << 13)
#define AC_FITS (1u << 14)
#define AC_VALUE(e) ((int)(int16_t)((e) >> 16))

/* The value of the s bits v of a coefficient (T.81 F.2.2.1's EXTEND). */
static int extend(int v, int s) { return v < (1 << (s - 1)) ? v - (1 << s) + 1 : v; }

/* Canonical codes (T.81 C.2), as libjpeg builds them: -1 when the table is
 * inconsistent (too many symbols, or a length's codes overflow it). */
static int make_codes(uint16_t code[256], uint8_t len[256], int *count, const uint8_t bits[17])
{
    int p = 0;
    uint32_t c = 0;
    for (int l = 1; l <= 16; l++) {
        if (p + bits[l] > 256) return -1;
        for (int i = 0; i < bits[l]; i++, p++, c++) code[p] = (uint16_t)c, len[p] = (uint8_t)l;
        if (bits[l] && c >= (1u << l)) return -1;
        c <<= 1;
    }
    *count = p;
    return 0;
}

static uint32_t ac_entry(int p, int l, int rs)
{
    int r = rs >> 4, sz = rs & 15;
    uint32_t e = (uint32_t)l | (uint32_t)sz << 5 | (uint32_t)r << 9;
    if (!sz && r != 15) return e | AC_EOB;
    if (l + sz > RN_HUFF_FAST_BITS) return e;
    int v = sz ? extend((p >> (RN_HUFF_FAST_BITS - l - sz)) & ((1 << sz) - 1), sz) : 0;
    return (uint32_t)(l + sz) | (uint32_t)sz << 5 | (uint32_t)r << 9 | AC_FITS | (uint32_t)(uint16_t)v << 16;
}

/* An rn_huff_table.ac2 entry: the one or two AC coefficients whose codes and
 * values fit whole in the FAST_BITS looked at, and the bits they take; step
 * 255 (never taken): none fits, or the first ends the block. A single
 * coefficient is written as a pair whose first is a 0 at the block's next
 * position (run 0): that write puts a 0 where nothing is yet, so the decoding
 * loop has no branch between one and two. */
static rn_huff_pair pair_entry(const rn_huff_table *t, int p)
{
    const int F = RN_HUFF_FAST_BITS;
    uint32_t a = t->ac[p];
    if (!(a & AC_FITS)) return (rn_huff_pair){.step = 255};
    int used = AC_LEN(a), r1 = AC_RUN(a);
    rn_huff_pair single = {.bits = (uint8_t)used, .step = (uint8_t)(r1 + 1), .second = (int16_t)AC_VALUE(a)};
    if (used >= F) return single;
    uint32_t b = t->ac[(p << used) & ((1 << F) - 1)];
    if (!(b & AC_FITS) || AC_LEN(b) > F - used) return single;
    return (rn_huff_pair){.bits = (uint8_t)(used + AC_LEN(b)), .run = (uint8_t)r1,
                          .step = (uint8_t)(r1 + 1 + AC_RUN(b) + 1), .first = (int16_t)AC_VALUE(a),
                          .second = (int16_t)AC_VALUE(b)};
}

static void build_ac(rn_huff_table *t)
{
    for (int p = 0; p < 1 << RN_HUFF_FAST_BITS; p++)
        t->ac[p] = t->fast[p] ? ac_entry(p, t->fast[p] >> 8, t->fast[p] & 255) : 0;
    for (int p = 0; p < 1 << RN_HUFF_FAST_BITS; p++) t->ac2[p] = pair_entry(t, p);
}

int rn_huff_build(rn_huff_table *t, const uint8_t bits[17], const uint8_t vals[256])
{
    uint16_t code[256];
    uint8_t len[256];
    int count;
    if (make_codes(code, len, &count, bits)) return -1;
    memset(t, 0, sizeof *t);
    memcpy(t->vals, vals, (size_t)count);
    for (int l = 1, p = 0; l <= 16; l++) {
        t->maxcode[l] = bits[l] ? code[p + bits[l] - 1] : -1;
        t->valoff[l] = bits[l] ? p - code[p] : 0;
        p += bits[l];
    }
    t->maxcode[17] = INT32_MAX;
    for (int i = 0; i < count && len[i] <= RN_HUFF_FAST_BITS; i++) {
        int shift = RN_HUFF_FAST_BITS - len[i];
        for (int j = 0; j < 1 << shift; j++) t->fast[(code[i] << shift) + j] = (uint16_t)(len[i] << 8 | vals[i]);
    }
    build_ac(t);
    return 0;
}

/* ---- decoding ---- */

/* The bit buffer: its top n bits are the next bits of the data (below them
 * may lie a part of the next byte: the same bits a refill puts there). */
typedef struct bitbuf {
    uint64_t acc;
    int n;
    int over; /* bytes past end taken as 0 */
    const uint8_t *p, *end;
} bitbuf;

static uint64_t load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* At least 57 bits in the buffer, 8 bytes at once (the data are unstuffed
 * and 8 bytes of 0 follow end); past end, 0s, counted in over. */
static inline void refill(bitbuf *b)
{
    if (__builtin_expect(b->p >= b->end, 0)) {
        b->over += (63 - b->n) >> 3;
        b->n |= 56;
        return;
    }
    b->acc |= load_be64(b->p) >> b->n;
    b->p += (63 - b->n) >> 3;
    b->n |= 56;
}

static inline unsigned take(bitbuf *b, int s)
{
    unsigned v = (unsigned)(b->acc >> (64 - s));
    b->acc <<= s;
    b->n -= s;
    return v;
}

/* The next symbol of table t (at least 16 bits in the buffer); -1: no code. */
static int decode_sym(bitbuf *b, const rn_huff_table *t)
{
    unsigned e = t->fast[b->acc >> (64 - RN_HUFF_FAST_BITS)];
    if (e) {
        take(b, (int)(e >> 8));
        return (int)(e & 255);
    }
    for (int l = RN_HUFF_FAST_BITS + 1; l <= 16; l++) {
        int32_t c = (int32_t)(b->acc >> (64 - l));
        if (c <= t->maxcode[l]) {
            take(b, l);
            return t->vals[c + t->valoff[l]];
        }
    }
    return -1;
}

/* The next one or two coefficients from the pair table into blk at k, while they
 * end within the block; else to the one-symbol way. At most FAST_BITS bits. */
#define PAIR_STEP(b, blk, t, k, slow)                                                                                  \
    do {                                                                                                               \
        const rn_huff_pair *e_ = &(t)->ac2[(b)->acc >> (64 - RN_HUFF_FAST_BITS)];                                      \
        if ((k) + e_->step > 64) goto slow;                                                                            \
        (blk)[zigzag[(k) + e_->run]] = e_->first;                                                                      \
        (k) += e_->step;                                                                                               \
        (blk)[zigzag[(k)-1]] = e_->second;                                                                             \
        take((b), e_->bits);                                                                                           \
    } while (0)

/* One block's 63 AC coefficients into blk; -1 corrupt. Mostly one look-up
 * gives the next one or two coefficients (ac2), four look-ups to a refill of
 * the bit buffer; an end of block, a pair that would pass the block's end and
 * a long code take the one-symbol way (ac, then the canonical decode). */
static int decode_ac(bitbuf *b, int16_t *blk, const rn_huff_table *t)
{
    int k = 1;
    for (;;) {
        refill(b);
        PAIR_STEP(b, blk, t, k, one);
        PAIR_STEP(b, blk, t, k, one);
        PAIR_STEP(b, blk, t, k, one);
        PAIR_STEP(b, blk, t, k, one);
        continue;
    one:
        if (k >= 64) break;
        refill(b);
        uint32_t e = t->ac[b->acc >> (64 - RN_HUFF_FAST_BITS)];
        if (__builtin_expect(e & AC_FITS, 1)) {
            take(b, AC_LEN(e));
            k += AC_RUN(e);
            blk[zigzag[k++]] = (int16_t)AC_VALUE(e);
            continue;
        }
        if (!e) {
            int rs = decode_sym(b, t);
            if (rs < 0) return -1;
            e = (uint32_t)rs >> 4 << 9 | (uint32_t)(rs & 15) << 5 | ((rs & 15) || rs >> 4 == 15 ? 0 : AC_EOB);
        } else {
            take(b, AC_LEN(e));
        }
        if (e & AC_EOB) break;
        int s = AC_SIZE(e);
        k += AC_RUN(e);
        blk[zigzag[k++]] = (int16_t)(s ? extend((int)take(b, s), s) : 0);
    }
    return k > 64 ? -1 : 0;
}

/* The MCU in data[0..n), 8 bytes of 0 after it. */
static int decode_mcu(int16_t *const *blk, const rn_huff_mcu *m, const uint8_t *data, size_t n)
{
    bitbuf b = {.p = data, .end = data + n};
    int pred[RN_HUFF_MAX_BLOCKS] = {0};
    int16_t drop[64];
    for (int i = 0; i < m->blocks; i++) {
        refill(&b);
        int s = decode_sym(&b, m->dc[i]);
        if (s < 0 || s > 15) return -1;
        int dc = pred[m->comp[i]] + (s ? extend((int)take(&b, s), s) : 0);
        pred[m->comp[i]] = dc;
        int16_t *out = blk ? blk[i] : drop;
        out[0] = (int16_t)dc;
        if (decode_ac(&b, out, m->ac[i])) return -1;
    }
    /* the bits taken end within the data (those past it read as 0) */
    return 8 * (b.p - data + b.over) - b.n > 8 * (ptrdiff_t)n ? -1 : 0;
}

int rn_huff_decode_mcu(int16_t *const *blk, const rn_huff_mcu *m, const uint8_t *data, size_t n)
{
    uint8_t pad[RN_HUFF_MAX_MCU_BYTES + 8];
    if (n > RN_HUFF_MAX_MCU_BYTES) return -1;
    size_t o = 0;
    for (const uint8_t *s = data, *e = data + n; s < e;) {
        const uint8_t *f = memchr(s, 0xFF, (size_t)(e - s));
        size_t seg = f ? (size_t)(f - s) + 1 : (size_t)(e - s);
        memcpy(pad + o, s, seg);
        o += seg;
        if (!f) break;
        if (f + 1 >= e || f[1]) return -1; /* a 0xFF not stuffed: a marker */
        s = f + 2;
    }
    memset(pad + o, 0, 8);
    return decode_mcu(blk, m, pad, o);
}
