#include "data/image/image.h"

#include <errno.h>
#include <inttypes.h>
#include <jpeglib.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data/image/exif_focal.h"
#include "data/image/huff.h"
#include "data/image/jpeg_err.h"
#include "io/file.h"

#include "core/profile.h"

int rn_bytes_read(rn_bytes *b, const char *path, rn_err *err)
{
    size_t size = 0;
    int fd = rn_file_open_read(path, RN_IMAGE_MAX_FILE_BYTES, &size, err);
    if (fd < 0) return -1;
    if (size > b->cap || !b->p) {
        uint8_t *p = realloc(b->p, size ? size : 1);
        if (!p) {
            close(fd);
            return rn_err_set(err, "%s: out of memory reading %zu bytes", path, size);
        }
        b->p = p;
        b->cap = size ? size : 1;
    }
    b->n = 0;
    while (b->n < size) {
        ssize_t got = read(fd, b->p + b->n, size - b->n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        b->n += (size_t)got;
    }
    int e = b->n < size ? errno : 0;
    close(fd);
    if (b->n < size) return rn_err_set(err, "%s: read error: %s", path, e ? strerror(e) : "file shrank while read");
    return 0;
}

void rn_bytes_free(rn_bytes *b)
{
    free(b->p);
    *b = (rn_bytes){0};
}

void rn_image_free(rn_image *img)
{
    free(img->px);
    *img = (rn_image){0};
}

static void image_reserve(rn_image *img, int w, int h)
{
    img->w = w;
    img->h = h;
    img->stride = (size_t)w * 3;
    size_t need = img->stride * (size_t)(h > 0 ? h : 1);
    if (need > img->cap) {
        free(img->px);
        img->px = rn_xmalloc(need);
        img->cap = need;
    }
}

/* The decoded-size cap, checked from the header before anything is allocated. */
static int check_size(uint64_t w, uint64_t h, rn_err *err)
{
    if (w == 0 || h == 0) return rn_err_set(err, "image of %" PRIu64 " x %" PRIu64 " pixels is empty", w, h);
    if (w > RN_IMAGE_MAX_SIDE || h > RN_IMAGE_MAX_SIDE || w * h > RN_IMAGE_MAX_PIXELS)
        return rn_err_set(err, "image of %" PRIu64 " x %" PRIu64 " pixels is too large (at most %d a side and %d "
                          "pixels in all)", w, h, RN_IMAGE_MAX_SIDE, RN_IMAGE_MAX_PIXELS);
    return 0;
}

static int is_jpeg(const uint8_t *b, size_t n) { return n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF; }
static int is_png(const uint8_t *b, size_t n) { return n >= 8 && !png_sig_cmp((png_const_bytep)b, 0, 8); }

/* ---- JPEG ---- */

typedef struct jerr {
    rn_jpeg_err e;
    uint8_t *cmyk; /* one CMYK row while decoding a 4-channel JPEG; freed by jpeg_done */
} jerr;

/* The one set-up of a decompressor whose errors longjmp to je->e.jb (the caller's setjmp). */
static void jpeg_begin(struct jpeg_decompress_struct *ci, jerr *je)
{
    je->cmyk = NULL;
    ci->err = rn_jpeg_err_init(&je->e);
    jpeg_create_decompress(ci);
}

static void jpeg_done(struct jpeg_decompress_struct *ci, jerr *je)
{
    jpeg_destroy_decompress(ci);
    free(je->cmyk);
    je->cmyk = NULL;
}

/* As OpenCV's imread (icvCvt_CMYK2BGR_8u_C4C3R): the stored values are Adobe's
 * inverted CMYK, so R = K - (255 - C) * K / 256 (a shift, as OpenCV). */
static void cmyk_to_rgb(uint8_t *rgb, const uint8_t *cmyk, int w)
{
    for (int x = 0; x < w; x++, rgb += 3, cmyk += 4) {
        int k = cmyk[3];
        for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)(k - ((255 - cmyk[c]) * k >> 8));
    }
}

/* libjpeg's entropy decoder interface, as jpegint.h declares it (that header is
 * not installed; the interface is the same since libjpeg 6b and in every
 * libjpeg-turbo): rn_image_decode_mcus puts its own decode_mcu in. */
struct jpeg_entropy_decoder {
    void (*start_pass)(j_decompress_ptr cinfo);
    boolean (*decode_mcu)(j_decompress_ptr cinfo, JBLOCKROW *MCU_data);
    boolean insufficient_data;
};

/* libjpeg's inverse DCT interface, from jpegint.h as the entropy decoder's. */
typedef void (*idct_fn)(j_decompress_ptr cinfo, jpeg_component_info *comp, JCOEFPTR coef, JSAMPARRAY out,
                        JDIMENSION col);
struct jpeg_inverse_dct {
    void (*start_pass)(j_decompress_ptr cinfo);
    idct_fn inverse_DCT[MAX_COMPONENTS];
};

/* The MCUs libjpeg asks for, in order, and what went wrong (ci->client_data). */
typedef struct mcu_feed {
    const rn_jpeg_mcus *m;
    rn_huff_mcu layout;
    size_t next;
    size_t bad;                    /* 1 + the index of the first corrupt MCU; 0: none */
    idct_fn idct[MAX_COMPONENTS]; /* libjpeg's, for the blocks not all 0 */
    double entropy_s;             /* rn_huff's time, estimated from every FEED_TIMED-th MCU */
    double clock_s;               /* what a reading of the clock adds to a time (the least of a few) */
} mcu_feed;

/* One MCU in FEED_TIMED is timed: the clock costs under 0.5 % so (a reading about 25 ns, an MCU of a
 * noisy frame about 380), and its own cost is taken off each time. */
#define FEED_TIMED 16

/* An 8 x 8 block whose coefficients are all 0 (a stand-in's) is CENTERJSAMPLE
 * everywhere: what every inverse DCT gives, without its passes; other blocks
 * go to libjpeg's. */
static void idct_or_flat(j_decompress_ptr ci, jpeg_component_info *comp, JCOEFPTR coef, JSAMPARRAY out,
                         JDIMENSION col)
{
    uint64_t any = 0, w[DCTSIZE2 * sizeof(JCOEF) / sizeof(uint64_t)];
    memcpy(w, coef, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) any |= w[i];
    if (any) {
        const mcu_feed *f = ci->client_data;
        f->idct[comp->component_index](ci, comp, coef, out, col);
        return;
    }
    for (int r = 0; r < DCTSIZE; r++) memset(out[r] + col, CENTERJSAMPLE, DCTSIZE);
}

static boolean feed_mcu(j_decompress_ptr ci, JBLOCKROW *data)
{
    mcu_feed *f = ci->client_data;
    size_t i = f->next++;
    if (i >= f->m->count) {
        if (!f->bad) f->bad = i + 1;
        return TRUE;
    }
    const uint32_t *e = f->m->mcu[i];
    if (!e[1]) return TRUE;
    int16_t *blk[RN_HUFF_MAX_BLOCKS];
    for (int b = 0; data && b < f->layout.blocks; b++) blk[b] = data[b][0];
    int timed = i % FEED_TIMED == 0;
    double t0 = timed ? rn_prof_now() : 0;
    if (rn_huff_decode_mcu(data ? blk : NULL, &f->layout, f->m->data + e[0], e[1]) && !f->bad) f->bad = i + 1;
    if (timed) f->entropy_s += FEED_TIMED * fmax(0, rn_prof_now() - t0 - f->clock_s);
    return TRUE;
}

/* Builds f's tables and layout from ci (after jpeg_start_decompress) and puts
 * feed_mcu in libjpeg's place; -1 with a message when the JPEG is not a
 * baseline single-scan Huffman one whose MCU count is f's. */
static int feed_begin(mcu_feed *f, struct jpeg_decompress_struct *ci, rn_err *err)
{
    if (ci->progressive_mode || ci->arith_code || ci->data_precision != 8 || ci->comps_in_scan != ci->num_components ||
        ci->blocks_in_MCU > RN_HUFF_MAX_BLOCKS)
        return rn_err_set(err, "not a baseline single-scan Huffman JPEG");
    if ((size_t)ci->MCUs_per_row * ci->MCU_rows_in_scan != f->m->count)
        return rn_err_set(err, "%zu MCUs given for a JPEG of %u x %u MCUs", f->m->count, ci->MCUs_per_row,
                          ci->MCU_rows_in_scan);
    int built = 0;
    f->layout.blocks = ci->blocks_in_MCU;
    for (int b = 0; b < ci->blocks_in_MCU; b++) {
        const jpeg_component_info *c = ci->cur_comp_info[ci->MCU_membership[b]];
        JHUFF_TBL *d = ci->dc_huff_tbl_ptrs[c->dc_tbl_no], *a = ci->ac_huff_tbl_ptrs[c->ac_tbl_no];
        rn_huff_table *td = &f->m->tables[c->dc_tbl_no], *ta = &f->m->tables[4 + c->ac_tbl_no];
        if (!d || !a) return rn_err_set(err, "a Huffman table is missing");
        if (!(built >> c->dc_tbl_no & 1) && rn_huff_build(td, d->bits, d->huffval))
            return rn_err_set(err, "bad Huffman table");
        if (!(built >> (4 + c->ac_tbl_no) & 1) && rn_huff_build(ta, a->bits, a->huffval))
            return rn_err_set(err, "bad Huffman table");
        built |= 1 << c->dc_tbl_no | 1 << (4 + c->ac_tbl_no);
        f->layout.comp[b] = ci->MCU_membership[b];
        f->layout.dc[b] = td, f->layout.ac[b] = ta;
    }
    ci->client_data = f;
    ci->entropy->decode_mcu = feed_mcu;
    f->clock_s = INFINITY;
    for (int i = 0; i < 3; i++) {
        double t0 = rn_prof_now();
        f->clock_s = fmin(f->clock_s, rn_prof_now() - t0);
    }
    for (int c = 0; c < ci->num_components; c++) {
        if (ci->comp_info[c].DCT_scaled_size != DCTSIZE) continue;
        f->idct[c] = ci->idct->inverse_DCT[c];
        ci->idct->inverse_DCT[c] = idct_or_flat;
    }
    return 0;
}

static void clip_roi(int r[4], const int *roi, int w, int h)
{
    if (!roi) {
        r[0] = 0, r[1] = 0, r[2] = w, r[3] = h;
        return;
    }
    int x0 = roi[0] < 0 ? 0 : roi[0], y0 = roi[1] < 0 ? 0 : roi[1];
    int x1 = roi[0] + roi[2] > w ? w : roi[0] + roi[2];
    int y1 = roi[1] + roi[3] > h ? h : roi[1] + roi[3];
    r[0] = x0, r[1] = y0, r[2] = x1 > x0 ? x1 - x0 : 0, r[3] = y1 > y0 ? y1 - y0 : 0;
}

static int jpeg_rows(struct jpeg_decompress_struct *ci, rn_image *img, const int r[4], jerr *je)
{
    JDIMENSION xoff = (JDIMENSION)r[0], cw = (JDIMENSION)r[2];
    if (cw < ci->output_width) jpeg_crop_scanline(ci, &xoff, &cw);
    double t0 = rn_prof_now();
    if (r[1] > 0 && jpeg_skip_scanlines(ci, (JDIMENSION)r[1]) != (JDIMENSION)r[1]) return -1;
    img->skip_s = rn_prof_now() - t0;
    image_reserve(img, (int)ci->output_width, r[3]);
    img->x0 = (int)xoff;
    img->y0 = r[1];
    int cmyk = ci->out_color_space == JCS_CMYK;
    if (cmyk) je->cmyk = rn_xmalloc((size_t)4 * ci->output_width);
    for (int y = 0; y < r[3] && !je->e.warned; y++) {
        JSAMPROW row = cmyk ? je->cmyk : img->px + (size_t)y * img->stride;
        if (jpeg_read_scanlines(ci, &row, 1) != 1) return -1;
        if (cmyk) cmyk_to_rgb(img->px + (size_t)y * img->stride, je->cmyk, (int)ci->output_width);
    }
    return je->e.warned ? -1 : 0;
}

/* What runs on an open JPEG whose header is read; a libjpeg error longjmps out of it to jpeg_open. */
typedef int (*jpeg_body)(struct jpeg_decompress_struct *ci, jerr *je, void *arg, rn_err *err);

/* The one opening of a JPEG: a decompressor over buf whose libjpeg errors come back here as
 * "corrupt JPEG: ...", its header read, then body(arg); closed after. Returns body's status. */
static int jpeg_open(const uint8_t *buf, size_t n, jpeg_body body, void *arg, rn_err *err)
{
    struct jpeg_decompress_struct ci;
    jerr je;
    jpeg_begin(&ci, &je);
    if (setjmp(je.e.jb)) {
        jpeg_done(&ci, &je);
        return rn_err_set(err, "corrupt JPEG: %s", je.e.msg);
    }
    jpeg_mem_src(&ci, buf, (unsigned long)n);
    jpeg_read_header(&ci, TRUE);
    int rc = body(&ci, &je, arg, err);
    jpeg_done(&ci, &je);
    return rc;
}

/* A decode's request: scale 1, 2, 4 or 8; roi NULL for all; feed.m: the MCUs of a JPEG whose buf
 * holds only the markers (rn_image_decode_mcus), NULL: buf is the whole JPEG. */
typedef struct decode_req {
    rn_image *img;
    int scale;
    const int *roi;
    mcu_feed feed; /* outlives the decompressor, which points at it (feed_begin) */
} decode_req;

static int decode_body(struct jpeg_decompress_struct *ci, jerr *je, void *arg, rn_err *err)
{
    decode_req *q = arg;
    rn_image *img = q->img;
    if (check_size(ci->image_width, ci->image_height, err)) return -1;
    /* Corrupt already: stop before jpeg_start_decompress, which for a progressive
     * JPEG allocates and reads the whole image's coefficients (gigabytes near the cap). */
    if (je->e.warned) return rn_err_set(err, "corrupt JPEG: %s", je->e.msg);
    /* CMYK and YCCK (libjpeg turns YCCK into CMYK) are converted as OpenCV does. */
    int four = ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK;
    ci->out_color_space = four ? JCS_CMYK : JCS_RGB;
    ci->scale_num = 1;
    ci->scale_denom = (unsigned)q->scale;
    jpeg_start_decompress(ci);
    if (je->e.warned) return rn_err_set(err, "corrupt JPEG: %s", je->e.msg);
    mcu_feed *feed = &q->feed;
    if (feed->m && feed_begin(feed, ci, err)) return -1;
    int r[4];
    clip_roi(r, q->roi, (int)ci->output_width, (int)ci->output_height);
    img->scale = q->scale;
    img->full_w = (int)ci->image_width;
    img->full_h = (int)ci->image_height;
    int rc = 0;
    if (r[2] == 0 || r[3] == 0) {
        image_reserve(img, 0, 0);
        img->x0 = r[0], img->y0 = r[1];
    } else {
        rc = jpeg_rows(ci, img, r, je);
    }
    jpeg_abort_decompress(ci);
    img->entropy_s = feed->entropy_s;
    if (feed->bad) return rn_err_set(err, "corrupt JPEG data in MCU %zu", feed->bad - 1);
    if (rc) return rn_err_set(err, "corrupt JPEG: %s", je->e.warned ? je->e.msg : "short image data");
    return 0;
}

static int decode_jpeg(rn_image *img, const uint8_t *buf, size_t n, int scale, const int *roi, const rn_jpeg_mcus *mcus,
                       rn_err *err)
{
    decode_req q = {img, scale, roi, {.m = mcus}};
    return jpeg_open(buf, n, decode_body, &q, err);
}

/* ---- PNG ---- */

typedef struct png_src {
    const uint8_t *p;
    size_t n, at;
    char msg[256];
} png_src;

static void png_read_mem(png_structp ps, png_bytep out, size_t len)
{
    png_src *s = png_get_io_ptr(ps);
    if (s->n - s->at < len) png_error(ps, "truncated PNG data");
    memcpy(out, s->p + s->at, len);
    s->at += len;
}

static void png_on_error(png_structp ps, png_const_charp msg)
{
    png_src *s = png_get_error_ptr(ps);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(ps, 1);
}

static void png_on_warning(png_structp ps, png_const_charp msg)
{
    (void)ps;
    (void)msg;
}

static void png_set_rgb8(png_structp ps, png_infop pi)
{
    int ct = png_get_color_type(ps, pi);
    if (png_get_bit_depth(ps, pi) == 16) png_set_strip_16(ps);
    if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(ps);
    if (ct == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(ps, pi) < 8) png_set_expand_gray_1_2_4_to_8(ps);
    if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(ps);
    if (ct & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(ps);
    png_set_interlace_handling(ps);
    png_read_update_info(ps, pi);
}

static int decode_png(rn_image *img, const uint8_t *buf, size_t n, rn_err *err)
{
    png_src src = {.p = buf, .n = n};
    png_structp ps = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error, png_on_warning);
    png_infop pi = ps ? png_create_info_struct(ps) : NULL;
    if (!pi) {
        png_destroy_read_struct(&ps, NULL, NULL);
        return rn_err_set(err, "out of memory starting PNG decoder");
    }
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(ps))) {
        free(rows);
        png_destroy_read_struct(&ps, &pi, NULL);
        return rn_err_set(err, "corrupt PNG: %s", src.msg);
    }
    png_set_read_fn(ps, &src, png_read_mem);
    png_read_info(ps, pi);
    if (check_size(png_get_image_width(ps, pi), png_get_image_height(ps, pi), err)) {
        png_destroy_read_struct(&ps, &pi, NULL);
        return -1;
    }
    png_set_rgb8(ps, pi);
    int w = (int)png_get_image_width(ps, pi), h = (int)png_get_image_height(ps, pi);
    if (png_get_rowbytes(ps, pi) != (size_t)w * 3) png_error(ps, "unsupported pixel layout");
    image_reserve(img, w, h);
    rows = rn_xmalloc(sizeof(png_bytep) * (size_t)h);
    for (int y = 0; y < h; y++) rows[y] = img->px + (size_t)y * img->stride;
    png_read_image(ps, rows);
    free(rows);
    png_destroy_read_struct(&ps, &pi, NULL);
    img->x0 = img->y0 = 0;
    img->scale = 1;
    img->full_w = w;
    img->full_h = h;
    return 0;
}

static int probe_body(struct jpeg_decompress_struct *ci, jerr *je, void *arg, rn_err *err)
{
    (void)je, (void)err;
    rn_image_info *info = arg;
    info->w = (int)ci->image_width;
    info->h = (int)ci->image_height;
    info->is_jpeg = 1;
    return 0;
}

int rn_image_probe(rn_image_info *info, const uint8_t *buf, size_t n, rn_err *err)
{
    if (is_png(buf, n)) {
        if (n < 24 || memcmp(buf + 12, "IHDR", 4)) return rn_err_set(err, "corrupt PNG: no IHDR");
        uint32_t w = (uint32_t)buf[16] << 24 | (uint32_t)buf[17] << 16 | (uint32_t)buf[18] << 8 | buf[19];
        uint32_t h = (uint32_t)buf[20] << 24 | (uint32_t)buf[21] << 16 | (uint32_t)buf[22] << 8 | buf[23];
        if (check_size(w, h, err)) return -1;
        info->w = (int)w, info->h = (int)h;
        info->is_jpeg = 0;
        return 0;
    }
    if (!is_jpeg(buf, n)) return rn_err_set(err, "not a JPEG or PNG file");
    if (jpeg_open(buf, n, probe_body, info, err)) return -1;
    return check_size((uint64_t)info->w, (uint64_t)info->h, err);
}

int rn_image_decode(rn_image *img, const uint8_t *buf, size_t n, int scale, const int *roi, rn_err *err)
{
    RN_ASSERT(scale == 1 || scale == 2 || scale == 4 || scale == 8);
    img->skip_s = img->entropy_s = 0;
    if (is_jpeg(buf, n)) return decode_jpeg(img, buf, n, scale, roi, NULL, err);
    if (!is_png(buf, n)) return rn_err_set(err, "not a JPEG or PNG file");
    if (scale != 1) return rn_err_set(err, "PNG cannot be decoded at scale 1/%d", scale);
    return decode_png(img, buf, n, err);
}

int rn_image_decode_mcus(rn_image *img, const uint8_t *head, size_t n, const rn_jpeg_mcus *mcus, const int *roi,
                         rn_err *err)
{
    img->skip_s = img->entropy_s = 0;
    if (!is_jpeg(head, n)) return rn_err_set(err, "not a JPEG file");
    return decode_jpeg(img, head, n, 1, roi, mcus, err);
}

/* Where display pixel (x, y) of an image in EXIF orientation o reads the stored
 * (w, h) image: stored x = a[0] + a[1] x + a[2] y, stored y = a[3] + a[4] x + a[5] y. */
static void orient_map(int a[6], int o, int w, int h)
{
    static const int m[9][6] = {{0}, {0, 1, 0, 0, 0, 1}, {1, -1, 0, 0, 0, 1}, {1, -1, 0, 1, 0, -1},
                                {0, 1, 0, 1, 0, -1}, {0, 0, 1, 0, 1, 0}, {0, 0, 1, 1, -1, 0},
                                {1, 0, -1, 1, -1, 0}, {1, 0, -1, 0, 1, 0}};
    a[0] = m[o][0] * (w - 1), a[1] = m[o][1], a[2] = m[o][2];
    a[3] = m[o][3] * (h - 1), a[4] = m[o][4], a[5] = m[o][5];
}

void rn_image_orient(rn_image *img, int orientation)
{
    RN_ASSERT(img->scale == 1 && img->x0 == 0 && img->y0 == 0);
    if (orientation < 2 || orientation > 8 || !img->w || !img->h) return;
    int w = img->w, h = img->h, dw = orientation >= 5 ? h : w, dh = orientation >= 5 ? w : h, a[6];
    orient_map(a, orientation, w, h);
    size_t stride = (size_t)dw * 3;
    uint8_t *px = rn_xmalloc(stride * (size_t)dh);
    ptrdiff_t sx = (ptrdiff_t)a[1] * 3 + (ptrdiff_t)a[4] * (ptrdiff_t)img->stride;
    for (int y = 0; y < dh; y++) {
        const uint8_t *s = img->px + (size_t)(a[0] + a[2] * y) * 3 + (size_t)(a[3] + a[5] * y) * img->stride;
        uint8_t *d = px + (size_t)y * stride;
        for (int x = 0; x < dw; x++, s += sx, d += 3) d[0] = s[0], d[1] = s[1], d[2] = s[2];
    }
    free(img->px);
    img->px = px;
    img->cap = stride * (size_t)dh;
    img->w = img->full_w = dw;
    img->h = img->full_h = dh;
    img->stride = stride;
}

int rn_image_load(rn_image *img, rn_bytes *scratch, const char *path, int *orientation, rn_err *err)
{
    if (rn_bytes_read(scratch, path, err)) return -1;
    if (rn_image_decode(img, scratch->p, scratch->n, 1, NULL, err)) return rn_err_prefix(err, "%s", path);
    int o = is_jpeg(scratch->p, scratch->n) ? rn_exif_orientation(scratch->p, scratch->n) : 1;
    rn_image_orient(img, o);
    if (orientation) *orientation = o;
    return 0;
}
