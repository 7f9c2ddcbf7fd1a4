/* rn_huff (data/image/huff.h) against libjpeg: JPEGs written by libjpeg with a
 * restart marker after every MCU (as prepared frames are), in every
 * subsampling and in 1 or 3 components, noisy and smooth, odd sizes, the
 * standard and optimised tables:
 *  - every MCU's coefficients equal jpeg_read_coefficients', block by block;
 *  - rn_image_decode_mcus (rn_huff in libjpeg's place) gives rn_image_decode's
 *    pixels bit for bit, whole and for a region, and with the MCUs whose
 *    coefficients are all 0 (flat grey 128) given as stand-ins of length 0;
 *  - corrupt data are refused, never decoded: each MCU cut by one byte, a
 *    marker inside, too many coefficients, inconsistent tables; random damage
 *    never crashes (run under make asan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "check.h"
#include "core/rng.h"
#include "data/image/huff.h"
#include "data/image/image.h"
#include "data/image/jpeg_err.h"

typedef struct jpeg_case {
    int w, h, comps, hs, vs; /* size, components, the first component's sampling factors */
    int quality, optimize, noise;
    int flat; /* the left third grey 128: MCUs whose coefficients are all 0 */
} jpeg_case;

/* A JPEG of c's kind into *out (malloc'd), a restart marker after every MCU. */
static size_t make_jpeg(unsigned char **out, const jpeg_case *c, rn_rng *r)
{
    struct jpeg_compress_struct ci;
    rn_jpeg_err je;
    ci.err = rn_jpeg_err_init(&je);
    jpeg_create_compress(&ci);
    unsigned long n = 0;
    *out = NULL;
    jpeg_mem_dest(&ci, out, &n);
    ci.image_width = (JDIMENSION)c->w, ci.image_height = (JDIMENSION)c->h;
    ci.input_components = c->comps;
    ci.in_color_space = c->comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, c->quality, TRUE);
    ci.comp_info[0].h_samp_factor = c->hs, ci.comp_info[0].v_samp_factor = c->vs;
    ci.restart_interval = 1;
    ci.optimize_coding = c->optimize;
    jpeg_start_compress(&ci, TRUE);
    unsigned char *row = malloc((size_t)c->w * c->comps);
    for (int y = 0; y < c->h; y++) {
        for (int x = 0; x < c->w * c->comps; x++) {
            int v = (x * 7 + y * 3) % 256;
            if (c->noise) v = (v + (int)(rn_rng_uniform(r) * c->noise)) % 256;
            if (c->flat && x < c->w * c->comps / 3) v = 128;
            row[x] = (unsigned char)v;
        }
        JSAMPROW rp = row;
        jpeg_write_scanlines(&ci, &rp, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    free(row);
    return n;
}

/* The markers' length (SOI to the end of SOS) and each MCU's data between the restart markers. */
static size_t split_mcus(uint32_t (*mcu)[2], size_t cap, size_t *head, const uint8_t *j, size_t n)
{
    size_t p = 2;
    while (p + 4 <= n && !(j[p] == 0xFF && j[p + 1] == 0xDA)) p += 2 + ((size_t)j[p + 2] << 8 | j[p + 3]);
    p += 2 + ((size_t)j[p + 2] << 8 | j[p + 3]);
    *head = p;
    size_t count = 0, start = p;
    for (size_t q = p; q + 1 < n && count < cap; q++) {
        if (j[q] != 0xFF || j[q + 1] == 0) continue;
        if (j[q + 1] < 0xD0 || j[q + 1] > 0xD9) break;
        mcu[count][0] = (uint32_t)start, mcu[count][1] = (uint32_t)(q - start);
        count++, q++, start = q + 1;
    }
    return count;
}

/* The decoding tables (t: 4 DC, 4 AC) and MCU layout of the JPEG ci has read the header of. */
static void layout_of(rn_huff_mcu *m, rn_huff_table t[8], struct jpeg_decompress_struct *ci)
{
    m->blocks = ci->blocks_in_MCU;
    for (int b = 0; b < ci->blocks_in_MCU; b++) {
        const jpeg_component_info *c = ci->cur_comp_info[ci->MCU_membership[b]];
        RN_CHECK(!rn_huff_build(&t[c->dc_tbl_no], ci->dc_huff_tbl_ptrs[c->dc_tbl_no]->bits,
                                ci->dc_huff_tbl_ptrs[c->dc_tbl_no]->huffval), "DC table");
        RN_CHECK(!rn_huff_build(&t[4 + c->ac_tbl_no], ci->ac_huff_tbl_ptrs[c->ac_tbl_no]->bits,
                                ci->ac_huff_tbl_ptrs[c->ac_tbl_no]->huffval), "AC table");
        m->comp[b] = ci->MCU_membership[b], m->dc[b] = &t[c->dc_tbl_no], m->ac[b] = &t[4 + c->ac_tbl_no];
    }
}

/* A decompressor on j with its header read. */
static void open_jpeg(struct jpeg_decompress_struct *ci, rn_jpeg_err *je, const uint8_t *j, size_t n)
{
    ci->err = rn_jpeg_err_init(je);
    jpeg_create_decompress(ci);
    jpeg_mem_src(ci, j, (unsigned long)n);
    jpeg_read_header(ci, TRUE);
}

/* Every MCU of j decoded by rn_huff against libjpeg's coefficients; returns the blocks that differ (-1: a decode
 * failed). zero[i]: whether MCU i's coefficients are all 0. */
static long coef_diff(uint8_t *zero, const uint8_t *j, size_t n, const uint32_t (*mcu)[2], size_t count)
{
    struct jpeg_decompress_struct ci;
    rn_jpeg_err je;
    open_jpeg(&ci, &je, j, n);
    jvirt_barray_ptr *coef = jpeg_read_coefficients(&ci);
    rn_huff_table t[8];
    rn_huff_mcu m;
    layout_of(&m, t, &ci);
    int one = ci.comps_in_scan == 1;
    size_t cols = ci.MCUs_per_row;
    long diff = 0;
    RN_CHECK(count == cols * ci.MCU_rows_in_scan, "%zu MCUs between markers, %zu expected", count,
             cols * ci.MCU_rows_in_scan);
    for (size_t i = 0; i < count && diff >= 0; i++) {
        int16_t blocks[RN_HUFF_MAX_BLOCKS][64], *blk[RN_HUFF_MAX_BLOCKS];
        memset(blocks, 0, sizeof blocks);
        for (int b = 0; b < RN_HUFF_MAX_BLOCKS; b++) blk[b] = blocks[b];
        if (rn_huff_decode_mcu(blk, &m, j + mcu[i][0], mcu[i][1])) {
            diff = -1;
            break;
        }
        zero[i] = 1;
        for (int b = 0; b < m.blocks; b++)
            for (int k = 0; k < 64; k++) zero[i] &= blocks[b][k] == 0;
        int mx = (int)(i % cols), my = (int)(i / cols), b = 0;
        for (int k = 0; k < ci.comps_in_scan; k++) {
            jpeg_component_info *c = ci.cur_comp_info[k];
            int hs = one ? 1 : c->h_samp_factor, vs = one ? 1 : c->v_samp_factor;
            JBLOCKARRAY rows = ci.mem->access_virt_barray((j_common_ptr)&ci, coef[c->component_index],
                                                          (JDIMENSION)(my * vs), (JDIMENSION)vs, FALSE);
            for (int yy = 0; yy < vs; yy++)
                for (int xx = 0; xx < hs; xx++, b++) diff += memcmp(rows[yy][mx * hs + xx], blocks[b], 128) != 0;
        }
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    return diff;
}

static int same_pixels(const rn_image *a, const rn_image *b)
{
    if (a->w != b->w || a->h != b->h || a->x0 != b->x0 || a->y0 != b->y0) return 0;
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->px + (size_t)y * a->stride, b->px + (size_t)y * b->stride, (size_t)a->w * 3)) return 0;
    return 1;
}

/* The MCUs whose coefficients are all 0 (zero) as stand-ins of length 0, as a prepared frame has them where
 * the crop does not reach: the same pixels as libjpeg's decode a, whose inverse DCT ran on them. */
static void check_stand_ins(const char *name, const rn_image *a, const uint8_t *j, size_t head, rn_jpeg_mcus m,
                            const uint8_t *zero, int flat)
{
    uint32_t(*sub)[2] = malloc(sizeof *sub * m.count);
    size_t stand_ins = 0;
    for (size_t i = 0; i < m.count; i++) {
        sub[i][0] = m.mcu[i][0], sub[i][1] = zero[i] ? 0 : m.mcu[i][1];
        stand_ins += zero[i];
    }
    if (flat) RN_CHECK(stand_ins > 0, "%s: a flat third gives MCUs whose coefficients are all 0", name);
    m.mcu = (const uint32_t(*)[2])sub;
    rn_image b = {0};
    rn_err err = {{0}};
    RN_CHECK(!rn_image_decode_mcus(&b, j, head, &m, NULL, &err), "%s: stand-ins: %s", name, err.msg);
    RN_CHECK(same_pixels(a, &b), "%s: the image with %zu stand-ins differs from libjpeg's", name, stand_ins);
    rn_image_free(&b);
    free(sub);
}

/* Whole image and a region: libjpeg's decode against rn_huff's MCUs in its place; stand-ins where the
 * coefficients are all 0. */
static void check_pixels(const char *name, const uint8_t *j, size_t n, const uint32_t (*mcu)[2], size_t count,
                         size_t head, const uint8_t *zero, const jpeg_case *k)
{
    int w = k->w, h = k->h;
    rn_huff_table tables[8];
    rn_jpeg_mcus m = {.data = j, .mcu = mcu, .count = count, .tables = tables};
    rn_image a = {0}, b = {0};
    rn_err err = {{0}};
    const int roi[4] = {w / 3, h / 4, w / 2, h / 2};
    for (int r = 0; r < 2; r++) {
        const int *ro = r ? roi : NULL;
        RN_CHECK(!rn_image_decode(&a, j, n, 1, ro, &err), "%s: libjpeg: %s", name, err.msg);
        RN_CHECK(!rn_image_decode_mcus(&b, j, head, &m, ro, &err), "%s: rn_huff: %s", name, err.msg);
        RN_CHECK(same_pixels(&a, &b), "%s: %s decoded through rn_huff differs from libjpeg's", name,
                 r ? "a region" : "the image");
        if (!r) check_stand_ins(name, &a, j, head, m, zero, k->flat);
    }
    m.count = count - 1;
    RN_CHECK(rn_image_decode_mcus(&b, j, head, &m, NULL, &err) == -1 && strstr(err.msg, "MCUs given"),
             "%s: one MCU short refused: %s", name, err.msg);
    rn_image_free(&a), rn_image_free(&b);
}

/* Each MCU cut by one byte, and a marker put in, is refused; random damage never crashes. */
static void check_corrupt(const char *name, const uint8_t *j, size_t n, const uint32_t (*mcu)[2], size_t count,
                          rn_rng *r)
{
    struct jpeg_decompress_struct ci;
    rn_jpeg_err je;
    open_jpeg(&ci, &je, j, n);
    rn_huff_table t[8];
    rn_huff_mcu m;
    jpeg_start_decompress(&ci);
    layout_of(&m, t, &ci);
    jpeg_abort_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    long cut_ok = 0, marker_ok = 0, damaged = 0;
    uint8_t buf[4096];
    for (size_t i = 0; i < count; i++) {
        size_t len = mcu[i][1];
        if (len + 2 > sizeof buf) continue;
        memcpy(buf, j + mcu[i][0], len);
        cut_ok += rn_huff_decode_mcu(NULL, &m, buf, len - 1) == 0;
        buf[len / 2] = 0xFF, buf[len / 2 + 1] = 0xD3;
        marker_ok += rn_huff_decode_mcu(NULL, &m, buf, len) == 0;
        for (int k = 0; k < 4; k++) {
            memcpy(buf, j + mcu[i][0], len);
            buf[(size_t)(rn_rng_uniform(r) * (double)len)] ^= (uint8_t)(1 + rn_rng_uniform(r) * 255);
            damaged += rn_huff_decode_mcu(NULL, &m, buf, len) != 0;
        }
    }
    RN_CHECK(cut_ok == 0, "%s: %ld MCUs cut by one byte decoded without an error", name, cut_ok);
    RN_CHECK(marker_ok == 0, "%s: %ld MCUs with a marker inside decoded without an error", name, marker_ok);
    printf("%s: %zu MCUs, %ld of %zu randomly damaged ones refused\n", name, count, damaged, 4 * count);
    RN_CHECK(rn_huff_decode_mcu(NULL, &m, j, RN_HUFF_MAX_MCU_BYTES + 1) == -1, "%s: an MCU too long refused", name);
}

static void test_tables(void)
{
    uint8_t bits[17] = {0}, vals[256] = {0};
    rn_huff_table t;
    bits[1] = 2; /* two codes of one bit: the all-ones code, refused as libjpeg does */
    RN_CHECK(rn_huff_build(&t, bits, vals) == -1, "two 1-bit codes refused");
    bits[1] = 0, bits[2] = 5;
    RN_CHECK(rn_huff_build(&t, bits, vals) == -1, "five 2-bit codes refused");
    memset(bits, 0, sizeof bits);
    bits[16] = 200, bits[15] = 100;
    RN_CHECK(rn_huff_build(&t, bits, vals) == -1, "300 symbols refused");
    memset(bits, 0, sizeof bits);
    bits[2] = 1, bits[3] = 1; /* codes 00 (symbol 0x00: EOB), 010 (symbol 0x01: run 0, size 1) */
    vals[0] = 0x00, vals[1] = 0x01;
    RN_CHECK(rn_huff_build(&t, bits, vals) == 0, "a small table builds");
    rn_huff_table dc;
    uint8_t dbits[17] = {0}, dvals[256] = {0};
    dbits[1] = 1; /* DC: code 0, size 0 */
    RN_CHECK(rn_huff_build(&dc, dbits, dvals) == 0, "a one-code DC table builds");
    rn_huff_mcu m = {.blocks = 1, .dc = {&dc}, .ac = {&t}};
    int16_t block[64] = {0}, *blk[1] = {block};
    /* by hand: DC "0" (size 0), then 63 x AC "010" + "1" (run 0, value 1) and no end of block needed */
    uint8_t data[32];
    memset(data, 0xAA, sizeof data);
    data[0] = 0x2A; /* 0 0101 010, then 1 0101 010 ... */
    RN_CHECK(rn_huff_decode_mcu(blk, &m, data, sizeof data) == 0 && block[0] == 0 && block[1] == 1 && block[8] == 1 &&
                 block[63] == 1,
             "63 coefficients decoded by hand: %d %d %d %d", block[0], block[1], block[8], block[63]);
    /* add "0110" for run 15, size 1: four of them ("0" 01101 x 4, padded) jump past the 63rd coefficient */
    bits[4] = 1, vals[2] = 0xF1;
    RN_CHECK(rn_huff_build(&t, bits, vals) == 0, "a table with a run of 15 builds");
    const uint8_t over[3] = {0x35, 0xAD, 0x6F};
    memset(block, 0, sizeof block);
    /* zigzag positions 16, 32, 48 are natural 12, 35, 58 (T.81 figure A.6) */
    RN_CHECK(rn_huff_decode_mcu(blk, &m, over, sizeof over) == -1 && block[12] == 1 && block[35] == 1 && block[58] == 1,
             "coefficients past the 63rd refused, after three at 16, 32, 48: %d %d %d", block[12], block[35], block[58]);
}

int main(void)
{
    const jpeg_case cases[] = {
        {203, 117, 3, 2, 2, 90, 0, 255, 0}, {203, 117, 3, 2, 2, 90, 1, 255, 0}, {2048, 64, 3, 2, 2, 95, 1, 120, 0},
        {161, 99, 3, 2, 1, 75, 1, 60, 0},   {161, 99, 3, 1, 1, 50, 0, 255, 0},  {161, 99, 3, 1, 2, 98, 1, 255, 0},
        {97, 53, 1, 1, 1, 90, 1, 255, 0},   {97, 53, 1, 1, 1, 30, 0, 0, 0},     {640, 48, 3, 2, 2, 100, 1, 255, 0},
        {203, 117, 3, 2, 2, 90, 0, 255, 1}, {161, 99, 3, 1, 1, 75, 1, 0, 1}, {97, 53, 1, 1, 1, 90, 0, 255, 1},
    };
    rn_rng r;
    rn_rng_seed(&r, 5);
    test_tables();
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const jpeg_case *k = &cases[c];
        char name[96];
        snprintf(name, sizeof name, "%dx%d, %d comp, %dx%d, q%d%s%s%s", k->w, k->h, k->comps, k->hs, k->vs,
                 k->quality, k->optimize ? ", optimised" : "", k->noise ? ", noisy" : "",
                 k->flat ? ", a flat third" : "");
        unsigned char *j;
        size_t n = make_jpeg(&j, k, &r), head = 0;
        size_t cap = (size_t)(k->w / 8 + 2) * (k->h / 8 + 2);
        uint32_t(*mcu)[2] = malloc(sizeof *mcu * cap);
        size_t count = split_mcus(mcu, cap, &head, j, n);
        uint8_t *zero = calloc(cap, 1);
        long diff = coef_diff(zero, j, n, (const uint32_t(*)[2])mcu, count);
        printf("%s: %zu bytes, %zu MCUs, %ld blocks differ from libjpeg's\n", name, n, count, diff);
        RN_CHECK(diff == 0, "%s: %ld blocks' coefficients differ from libjpeg's (-1: a decode failed)", name, diff);
        check_pixels(name, j, n, (const uint32_t(*)[2])mcu, count, head, zero, k);
        check_corrupt(name, j, n, (const uint32_t(*)[2])mcu, count, &r);
        free(zero);
        free(mcu);
        free(j);
    }
    RN_CHECK_DONE();
}
