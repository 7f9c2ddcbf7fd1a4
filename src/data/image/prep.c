#include "data/image/prep.h"

#include <errno.h>
#include <fcntl.h>
#include <jpeglib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/hash.h"
#include "core/profile.h"
#include "data/image/huff.h"
#include "data/image/jpeg_err.h"
#include "io/file.h"

#define PREP_MAGIC "RNPREP1\n"
#define PREP_VERSION 4u
/* bytes of the source hashed at each end into src_sig */
#define PREP_SIG_BYTES 4096
/* frame pixels kept around what the warp samples: its second tap (1), chroma
 * upsampling's neighbour (1), the fixed point's rounding and slack */
#define PREP_MARGIN 4

typedef struct prep_header {
    char magic[8];
    uint32_t version, header_bytes;
    uint64_t src_size;
    int64_t src_mtime_ns;
    uint64_t file_size;
    uint64_t src_sig;            /* rn_hash64 of the source's first and last PREP_SIG_BYTES */
    uint32_t width, height, mcu_w, mcu_h, mcus_x, mcus_y;
    uint32_t jpeg_off, jpeg_len; /* the JPEG's place in the file */
    uint32_t hdr_len;            /* JPEG bytes before the first MCU's data (SOI .. SOS) */
    uint32_t sof_hw;             /* offset in the JPEG of SOF's height field (width follows) */
    uint32_t crc;                /* CRC-32 of this header (crc 0), the index, the MCU CRCs and the JPEG header */
    uint32_t zero;               /* no padding: the CRC covers every byte */
} prep_header;
_Static_assert(sizeof(prep_header) == 96, "prep_header has no padding");

void rn_prep_path(char *out, size_t len, const char *prep_dir, const char *src)
{
    char *real = realpath(src, NULL);
    const char *key = real ? real : src;
    snprintf(out, len, "%s/%016llx.rnp", prep_dir, (unsigned long long)rn_hash64(key, strlen(key), 0x9e37));
    free(real);
}

static int source_stat(uint64_t *size, int64_t *mtime_ns, const char *src, rn_err *err)
{
    struct stat st;
    if (stat(src, &st)) return rn_err_set(err, "%s: cannot stat: %s", src, strerror(errno));
    *size = (uint64_t)st.st_size;
    *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return 0;
}

/* The source's signature: its first and last PREP_SIG_BYTES hashed (a file of the same size and mtime but
 * other contents is told apart without reading it all). */
static int source_sig(uint64_t *sig, const char *src, uint64_t size, rn_err *err)
{
    uint8_t buf[2 * PREP_SIG_BYTES];
    size_t n = size < PREP_SIG_BYTES ? (size_t)size : PREP_SIG_BYTES;
    int fd = open(src, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rn_err_set(err, "%s: cannot open: %s", src, strerror(errno));
    int bad = pread(fd, buf, n, 0) != (ssize_t)n || pread(fd, buf + n, n, (off_t)(size - n)) != (ssize_t)n;
    close(fd);
    if (bad) return rn_err_set(err, "%s: cannot read (changed while read?)", src);
    *sig = rn_hash64(buf, 2 * n, size);
    return 0;
}

/* ---- building ---- */

/* The source's coefficients written again, baseline, a restart marker after each MCU. */
static int transcode(unsigned char **out, unsigned long *out_n, int mcu[2], const rn_bytes *src, rn_err *err)
{
    struct jpeg_decompress_struct di;
    struct jpeg_compress_struct ci;
    rn_jpeg_err je;
    di.err = rn_jpeg_err_init(&je);
    ci.err = &je.mgr;
    jpeg_create_decompress(&di);
    jpeg_create_compress(&ci);
    *out = NULL;
    if (setjmp(je.jb)) {
        jpeg_destroy_compress(&ci);
        jpeg_destroy_decompress(&di);
        free(*out);
        return rn_err_set(err, "corrupt or unsupported JPEG: %s", je.msg);
    }
    jpeg_mem_src(&di, src->p, (unsigned long)src->n);
    jpeg_read_header(&di, TRUE);
    if (di.jpeg_color_space == JCS_CMYK || di.jpeg_color_space == JCS_YCCK || di.arith_code) {
        snprintf(je.msg, sizeof je.msg, "CMYK or arithmetic-coded JPEG");
        longjmp(je.jb, 1);
    }
    jvirt_barray_ptr *coef = jpeg_read_coefficients(&di);
    if (je.warned) longjmp(je.jb, 1); /* corrupt data: libjpeg went on, the file is refused */
    jpeg_copy_critical_parameters(&di, &ci);
    ci.restart_interval = 1;
    ci.optimize_coding = TRUE;
    jpeg_mem_dest(&ci, out, out_n);
    jpeg_write_coefficients(&ci, coef);
    jpeg_finish_compress(&ci);
    int hmax = 1, vmax = 1;
    for (int c = 0; c < di.num_components; c++) {
        if (di.comp_info[c].h_samp_factor > hmax) hmax = di.comp_info[c].h_samp_factor;
        if (di.comp_info[c].v_samp_factor > vmax) vmax = di.comp_info[c].v_samp_factor;
    }
    mcu[0] = di.num_components == 1 ? 8 : 8 * hmax;
    mcu[1] = di.num_components == 1 ? 8 : 8 * vmax;
    jpeg_finish_decompress(&di);
    jpeg_destroy_compress(&ci);
    jpeg_destroy_decompress(&di);
    return 0;
}

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* Header length (through SOS) and SOF's height field; -1 if not a one-scan baseline JPEG. */
static int parse_markers(const uint8_t *j, size_t n, prep_header *h)
{
    size_t pos = 2;
    h->sof_hw = 0;
    while (pos + 4 <= n && j[pos] == 0xFF) {
        unsigned m = j[pos + 1], len = be16(j + pos + 2);
        if (m == 0xC0 || m == 0xC1) h->sof_hw = (uint32_t)(pos + 5);
        if (m == 0xDA) {
            h->hdr_len = (uint32_t)(pos + 2 + len);
            return h->sof_hw && h->hdr_len < n ? 0 : -1;
        }
        pos += 2 + len;
    }
    return -1;
}

/* Offsets of each MCU's data; off[count] is the end of the EOI marker. */
static int index_mcus(uint32_t *off, size_t count, const uint8_t *j, size_t n, size_t start)
{
    size_t k = 0, i = start;
    off[k++] = (uint32_t)start;
    while (i + 1 < n) {
        if (j[i] != 0xFF || j[i + 1] == 0x00) {
            i += j[i] == 0xFF ? 2 : 1;
            continue;
        }
        unsigned m = j[i + 1];
        if (m == 0xD9) {
            off[k] = (uint32_t)(i + 2);
            return k == count ? 0 : -1;
        }
        if (m < 0xD0 || m > 0xD7 || k >= count) return -1;
        off[k++] = (uint32_t)(i + 2);
        i += 2;
    }
    return -1;
}

typedef struct piece {
    const void *p;
    size_t n;
} piece;

static int write_atomic(const char *path, const piece *pc, int n, rn_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return rn_err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    int bad = 0;
    for (int i = 0; i < n; i++) bad |= fwrite(pc[i].p, 1, pc[i].n, f) != pc[i].n;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        unlink(tmp);
        return rn_err_set(err, "%s: cannot write", path);
    }
    return 0;
}

/* CRC-32 of the header (its crc 0) and then the pieces. */
static uint32_t header_crc(prep_header h, const piece *pc, int n)
{
    h.crc = 0;
    uLong c = crc32(0L, (const Bytef *)&h, sizeof h);
    for (int i = 0; i < n; i++) c = crc32(c, (const Bytef *)pc[i].p, (uInt)pc[i].n);
    return (uint32_t)c;
}

/* CRC-32 of MCU i's entropy-coded data (its restart marker left out), at p (where the JPEG's byte off[i] is). */
static uint32_t mcu_crc(const uint8_t *p, const uint32_t *off, size_t i)
{
    return (uint32_t)crc32(0L, p, (uInt)(off[i + 1] - 2 - off[i]));
}

static int read_at(rn_bytes *b, int fd, uint64_t off, size_t n);

/* 1 when every MCU's data in the open pf matches its CRC (the whole file read), else 0. */
static int mcus_intact(rn_prep_file *pf)
{
    prep_header hd;
    memcpy(&hd, pf->head.p, sizeof hd);
    size_t count = (size_t)hd.mcus_x * hd.mcus_y;
    rn_bytes all = {0};
    int ok = !read_at(&all, pf->fd, hd.jpeg_off, hd.jpeg_len);
    const uint32_t *off = (const uint32_t *)(pf->head.p + sizeof hd), *mcrc = off + count + 1;
    for (size_t i = 0; ok && i < count; i++) ok = mcu_crc(all.p + off[i], off, i) == mcrc[i];
    rn_bytes_free(&all);
    return ok;
}

int rn_prep_build(const char *src, const char *prep, rn_prep_info *info, rn_err *err)
{
    rn_prep_file pf = {0};
    int w, h;
    int rc = rn_prep_load(&pf, &w, &h, prep, src, err);
    if (rc == 0 && !mcus_intact(&pf)) rc = -1;
    if (rc == 0) {
        prep_header up;
        memcpy(&up, pf.head.p, sizeof up);
        *info = (rn_prep_info){.w = w, .h = h, .bytes = up.file_size};
    }
    rn_prep_file_free(&pf);
    if (rc == 0) return 0;
    rn_bytes file = {0};
    prep_header hd = {.version = PREP_VERSION, .header_bytes = sizeof hd};
    memcpy(hd.magic, PREP_MAGIC, 8);
    if (source_stat(&hd.src_size, &hd.src_mtime_ns, src, err) || rn_bytes_read(&file, src, err) ||
        source_sig(&hd.src_sig, src, hd.src_size, err)) {
        rn_bytes_free(&file);
        return -1;
    }
    unsigned char *j = NULL;
    unsigned long jn = 0;
    int mcu[2];
    rc = transcode(&j, &jn, mcu, &file, err);
    rn_bytes_free(&file);
    if (rc) return rn_err_prefix(err, "%s", src);
    if (parse_markers(j, jn, &hd)) {
        free(j);
        return rn_err_set(err, "%s: re-encoded JPEG has no single baseline scan", src);
    }
    hd.width = be16(j + hd.sof_hw + 2), hd.height = be16(j + hd.sof_hw);
    hd.mcu_w = (uint32_t)mcu[0], hd.mcu_h = (uint32_t)mcu[1];
    hd.mcus_x = (hd.width + hd.mcu_w - 1) / hd.mcu_w, hd.mcus_y = (hd.height + hd.mcu_h - 1) / hd.mcu_h;
    size_t count = (size_t)hd.mcus_x * hd.mcus_y;
    uint32_t *off = rn_xmalloc(sizeof *off * (count + 1));
    if (index_mcus(off, count, j, jn, hd.hdr_len)) {
        free(j), free(off);
        return rn_err_set(err, "%s: re-encoded JPEG has not one restart segment per MCU", src);
    }
    uint32_t *mcrc = rn_xmalloc(sizeof *mcrc * (count ? count : 1));
    for (size_t i = 0; i < count; i++) mcrc[i] = mcu_crc(j + off[i], off, i);
    hd.jpeg_off = (uint32_t)(sizeof hd + sizeof *off * (count + 1) + sizeof *mcrc * count);
    hd.jpeg_len = (uint32_t)jn;
    hd.file_size = hd.jpeg_off + (uint64_t)jn;
    piece pc[4] = {{&hd, sizeof hd}, {off, sizeof *off * (count + 1)}, {mcrc, sizeof *mcrc * count}, {j, jn}};
    piece hj = {j, hd.hdr_len};
    hd.crc = header_crc(hd, (piece[3]){pc[1], pc[2], hj}, 3);
    rc = write_atomic(prep, pc, 4, err);
    free(j), free(off), free(mcrc);
    *info = (rn_prep_info){.w = (int)hd.width, .h = (int)hd.height, .built = 1, .bytes = hd.file_size};
    return rc;
}

/* ---- reading ---- */

static void reserve(rn_bytes *b, size_t n)
{
    if (n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < n) cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    RN_ASSERT(q != NULL);
    b->p = q, b->cap = cap;
}

static void put(rn_bytes *b, const void *p, size_t n)
{
    reserve(b, b->n + n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* Appends n bytes at offset off of fd to b; -1 when the file ends first or a read fails. */
static int read_at(rn_bytes *b, int fd, uint64_t off, size_t n)
{
    reserve(b, b->n + n);
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(fd, b->p + b->n, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got, b->n += (size_t)got;
    }
    return 0;
}

/* The header against the file's size: 0 sound, 1 another version (stale), -1 corrupt. */
static int check_header(const prep_header *hd, uint64_t size, const char *prep, rn_err *err)
{
    if (memcmp(hd->magic, PREP_MAGIC, 8)) return rn_err_set(err, "%s: corrupt prepared frame: bad magic", prep);
    if (hd->version != PREP_VERSION) return 1; /* another version's layout: stale, rebuilt by --prepare */
    if (hd->header_bytes != sizeof *hd)
        return rn_err_set(err, "%s: corrupt prepared frame: inconsistent header", prep);
    if (hd->file_size != size)
        return rn_err_set(err, "%s: corrupt prepared frame: %llu bytes, its header says %llu (truncated?)", prep,
                          (unsigned long long)size, (unsigned long long)hd->file_size);
    size_t count = (size_t)hd->mcus_x * hd->mcus_y;
    if (!hd->mcu_w || !hd->mcu_h || hd->mcus_x != (hd->width + hd->mcu_w - 1) / hd->mcu_w ||
        hd->mcus_y != (hd->height + hd->mcu_h - 1) / hd->mcu_h ||
        (uint64_t)hd->jpeg_off != sizeof *hd + sizeof(uint32_t) * (2 * count + 1) ||
        hd->jpeg_off + (uint64_t)hd->jpeg_len != hd->file_size || hd->hdr_len > hd->jpeg_len ||
        hd->sof_hw + 4 > hd->hdr_len)
        return rn_err_set(err, "%s: corrupt prepared frame: inconsistent header", prep);
    return 0;
}

/* Header, index and JPEG header of the open fd into pf->head, checked: 0, 1 stale version, -1 corrupt. */
static int load_head(rn_prep_file *pf, int fd, uint64_t size, const char *prep, rn_err *err)
{
    prep_header hd;
    if (size < sizeof hd) return rn_err_set(err, "%s: corrupt prepared frame: %llu bytes, shorter than its header", prep,
                                            (unsigned long long)size);
    pf->head.n = 0;
    if (read_at(&pf->head, fd, 0, sizeof hd)) return rn_err_set(err, "%s: cannot read: %s", prep, strerror(errno));
    memcpy(&hd, pf->head.p, sizeof hd);
    int rc = check_header(&hd, size, prep, err);
    if (rc) return rc;
    if (read_at(&pf->head, fd, sizeof hd, (size_t)hd.jpeg_off + hd.hdr_len - sizeof hd))
        return rn_err_set(err, "%s: cannot read: %s", prep, strerror(errno));
    pf->bytes = pf->head.n;
    size_t count = (size_t)hd.mcus_x * hd.mcus_y;
    const uint32_t *off = (const uint32_t *)(pf->head.p + sizeof hd);
    piece rest = {pf->head.p + sizeof hd, pf->head.n - sizeof hd};
    if (header_crc(hd, &rest, 1) != hd.crc)
        return rn_err_set(err, "%s: corrupt prepared frame: CRC mismatch in its header, index or JPEG tables", prep);
    for (size_t i = 0; i < count; i++)
        if (off[i] + 2 >= off[i + 1] || off[i + 1] > hd.jpeg_len || off[0] != hd.hdr_len)
            return rn_err_set(err, "%s: corrupt prepared frame: MCU index out of order at %zu", prep, i);
    return 0;
}

int rn_prep_load(rn_prep_file *pf, int *w, int *h, const char *prep, const char *src, rn_err *err)
{
    rn_prep_close(pf);
    if (access(prep, F_OK)) return 1;
    size_t size = 0;
    int fd = rn_file_open_read(prep, (size_t)UINT32_MAX, &size, err);
    if (fd < 0) return -1;
    int rc = load_head(pf, fd, size, prep, err);
    uint64_t src_size = 0;
    int64_t mtime = 0;
    if (!rc && source_stat(&src_size, &mtime, src, err)) rc = -1;
    prep_header hd;
    if (!rc) memcpy(&hd, pf->head.p, sizeof hd);
    if (!rc && (src_size != hd.src_size || mtime != hd.src_mtime_ns)) rc = 1;
    uint64_t sig = 0;
    if (!rc && source_sig(&sig, src, src_size, err)) rc = -1;
    if (!rc && sig != hd.src_sig) rc = 1;
    if (rc) {
        close(fd);
        return rc;
    }
    pf->fd = fd, pf->open = 1;
    *w = (int)hd.width, *h = (int)hd.height;
    return 0;
}

void rn_prep_close(rn_prep_file *pf)
{
    if (pf->open) close(pf->fd);
    pf->open = 0;
}

void rn_prep_file_free(rn_prep_file *pf)
{
    rn_prep_close(pf);
    rn_bytes_free(&pf->head);
    free(pf->mcus);
    free(pf->tables);
    *pf = (rn_prep_file){0};
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* x-extent of the convex quad q (x, y of 4 corners in order) within rows
 * [ya, yb]; 0 when they do not meet. */
static int quad_span(double *xa, double *xb, const double q[8], double ya, double yb)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 4; k++) {
        double x0 = q[2 * k], y0 = q[2 * k + 1], x1 = q[(2 * k + 2) % 8], y1 = q[(2 * k + 3) % 8];
        if (y0 >= ya && y0 <= yb) lo = fmin(lo, x0), hi = fmax(hi, x0);
        for (int e = 0; e < 2; e++) {
            double yc = e ? yb : ya;
            if ((y0 - yc) * (y1 - yc) < 0) {
                double xc = x0 + (x1 - x0) * (yc - y0) / (y1 - y0);
                lo = fmin(lo, xc), hi = fmax(hi, xc);
            }
        }
    }
    *xa = lo, *xb = hi;
    return lo <= hi;
}

/* MCUs [*ka, *kb) of MCU row my that the warp may read (quad plus the margin). */
static void row_keep(int *ka, int *kb, const prep_header *hd, const double q[8], int my)
{
    double m = PREP_MARGIN, xa, xb;
    int mw = (int)hd->mcu_w, mh = (int)hd->mcu_h;
    if (!quad_span(&xa, &xb, q, (double)my * mh - m, (double)(my + 1) * mh - 1 + m)) {
        *ka = *kb = 0;
        return;
    }
    *ka = (int)fmax(0, fmin(hd->mcus_x, floor((xa - m) / mw)));
    *kb = (int)fmax(0, fmin(hd->mcus_x, floor((xb + m) / mw) + 1));
}

/* MCUs [ka, kb) of MCU row my read from the file and appended to sub, their
 * places in sub into mcu[0 .. mx1 - mx0) (the row's other MCUs in [mx0, mx1):
 * length 0, stand-ins). -1 when the file ends first. */
static int read_row(rn_bytes *sub, uint32_t (*mcu)[2], rn_prep_file *pf, const prep_header *hd, const uint32_t *off,
                    int my, int mx0, int mx1, int ka, int kb, rn_err *err)
{
    size_t row = (size_t)my * hd->mcus_x, base = sub->n;
    uint32_t a = off[row + (size_t)ka];
    if (ka < kb) {
        double t0 = rn_prof_now();
        if (read_at(sub, pf->fd, (uint64_t)hd->jpeg_off + a, off[row + (size_t)kb] - 2 - a))
            return rn_err_set(err, "prepared frame: MCU row %d: the file ends early (changed since it was opened?)", my);
        pf->read_s += rn_prof_now() - t0;
        pf->bytes += sub->n - base;
        const uint32_t *mcrc = off + (size_t)hd->mcus_x * hd->mcus_y + 1;
        for (int mx = ka; mx < kb; mx++)
            if (mcu_crc(sub->p + base + (off[row + (size_t)mx] - a), off, row + (size_t)mx) != mcrc[row + (size_t)mx])
                return rn_err_set(err, "corrupt prepared frame: CRC mismatch in MCU (%d, %d)'s data (delete it: rootnet "
                                  "dataset --prepare writes it again)", mx, my);
    }
    for (int mx = mx0; mx < mx1; mx++) {
        size_t i = row + (size_t)mx;
        int keep = mx >= ka && mx < kb;
        mcu[mx - mx0][0] = keep ? (uint32_t)(base + off[i] - a) : 0;
        mcu[mx - mx0][1] = keep ? off[i + 1] - 2 - off[i] : 0;
    }
    return 0;
}

int rn_prep_crop(rn_image *img, rn_bytes *sub, rn_prep_file *pf, const int roi[4], const double quad[8], rn_err *err)
{
    prep_header hd;
    memcpy(&hd, pf->head.p, sizeof hd);
    const uint32_t *off = (const uint32_t *)(pf->head.p + sizeof hd);
    const uint8_t *j = pf->head.p + hd.jpeg_off;
    pf->read_s = 0;
    int W = (int)hd.width, H = (int)hd.height, mw = (int)hd.mcu_w, mh = (int)hd.mcu_h;
    /* the region's MCUs: its margin keeps the warp off the edge pixels, whose
     * chroma upsampling lacks the neighbour beyond (but at the frame's edge) */
    int x0 = clampi(roi[0], 0, W - 1), y0 = clampi(roi[1], 0, H - 1);
    int x1 = clampi(roi[0] + roi[2], x0 + 1, W), y1 = clampi(roi[1] + roi[3], y0 + 1, H);
    int mx0 = x0 / mw, mx1 = (x1 + mw - 1) / mw, my0 = y0 / mh, my1 = (y1 + mh - 1) / mh;
    int sw = (mx1 * mw < W ? mx1 * mw : W) - mx0 * mw, sh = (my1 * mh < H ? my1 * mh : H) - my0 * mh;
    size_t cols = (size_t)(mx1 - mx0), count = cols * (size_t)(my1 - my0);
    if (count > pf->mcus_cap) {
        free(pf->mcus);
        pf->mcus = rn_xmalloc(sizeof *pf->mcus * count);
        pf->mcus_cap = count;
    }
    if (!pf->tables) pf->tables = rn_xmalloc(sizeof *pf->tables * 8);
    sub->n = 0;
    put(sub, j, hd.hdr_len);
    uint8_t hw[4] = {(uint8_t)(sh >> 8), (uint8_t)sh, (uint8_t)(sw >> 8), (uint8_t)sw};
    memcpy(sub->p + hd.sof_hw, hw, 4);
    for (int my = my0; my < my1; my++) {
        int ka = mx0, kb = mx1;
        if (quad) row_keep(&ka, &kb, &hd, quad, my);
        ka = ka < mx0 ? mx0 : ka, kb = kb > mx1 ? mx1 : kb;
        if (read_row(sub, pf->mcus + (size_t)(my - my0) * cols, pf, &hd, off, my, mx0, mx1, ka, kb, err)) return -1;
    }
    rn_jpeg_mcus m = {.data = sub->p, .mcu = (const uint32_t(*)[2])pf->mcus, .count = count, .tables = pf->tables};
    int rel[4] = {x0 - mx0 * mw, y0 - my0 * mh, x1 - x0, y1 - y0};
    if (rn_image_decode_mcus(img, sub->p, hd.hdr_len, &m, rel, err))
        return rn_err_prefix(err, "corrupt prepared frame (delete it: rootnet dataset --prepare writes it again)");
    img->x0 += mx0 * mw, img->y0 += my0 * mh;
    img->full_w = W, img->full_h = H;
    return 0;
}
