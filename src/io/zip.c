#include "io/zip.h"

#include <string.h>

#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define SIG_CEN 0x02014b50u
#define SIG_LOCAL 0x04034b50u

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

typedef struct cdir {
    uint64_t count, offset, size;
} cdir;

static int find_eocd(const rn_zip *z, size_t *at)
{
    if (z->size < 22) return -1;
    size_t lo = z->size > 22 + 65535 ? z->size - 22 - 65535 : 0;
    for (size_t i = z->size - 22 + 1; i-- > lo;)
        if (le(z->buf + i, 4) == SIG_EOCD && i + 22 + le(z->buf + i + 20, 2) == z->size) {
            *at = i;
            return 0;
        }
    return -1;
}

static int read_zip64_eocd(const rn_zip *z, size_t eocd, cdir *cd, rn_err *err)
{
    if (eocd < 20 || le(z->buf + eocd - 20, 4) != SIG_LOC64)
        return rn_err_set(err, "%s: zip: 32-bit end record is saturated but no zip64 locator", z->path);
    uint64_t off = le(z->buf + eocd - 20 + 8, 8);
    if (z->size < 56 || off > z->size - 56 || le(z->buf + off, 4) != SIG_EOCD64)
        return rn_err_set(err, "%s: zip: bad zip64 end of central directory record", z->path);
    cd->count = le(z->buf + off + 32, 8);
    cd->size = le(z->buf + off + 40, 8);
    cd->offset = le(z->buf + off + 48, 8);
    return 0;
}

static int read_cdir(const rn_zip *z, cdir *cd, rn_err *err)
{
    size_t eocd = 0;
    if (find_eocd(z, &eocd)) return rn_err_set(err, "%s: zip: end of central directory not found (truncated?)", z->path);
    const uint8_t *p = z->buf + eocd;
    cd->count = le(p + 10, 2);
    cd->size = le(p + 12, 4);
    cd->offset = le(p + 16, 4);
    if (cd->count == 0xffff || cd->size == 0xffffffffu || cd->offset == 0xffffffffu)
        if (read_zip64_eocd(z, eocd, cd, err)) return -1;
    if (cd->offset > z->size || cd->size > z->size - cd->offset || cd->count > cd->size / 46)
        return rn_err_set(err, "%s: zip: central directory out of range", z->path);
    return 0;
}

/* Applies the zip64 extra field (0x0001) to the saturated 32-bit values. */
static int apply_zip64(const uint8_t *x, size_t xlen, uint64_t *usize, uint64_t *csize, uint64_t *loff)
{
    while (xlen >= 4) {
        uint64_t id = le(x, 2), n = le(x + 2, 2);
        if (n > xlen - 4) return -1;
        if (id == 1) {
            const uint8_t *q = x + 4, *end = x + 4 + n;
            uint64_t *vals[3] = {usize, csize, loff};
            for (int i = 0; i < 3; i++) {
                if (*vals[i] != 0xffffffffu) continue;
                if (end - q < 8) return -1;
                *vals[i] = le(q, 8);
                q += 8;
            }
            return 0;
        }
        x += 4 + n;
        xlen -= 4 + n;
    }
    return 0;
}

static int read_entry(rn_zip *z, size_t *pos, uint64_t cd_end, rn_zip_entry *e, rn_err *err)
{
    const uint8_t *p = z->buf + *pos;
    if (cd_end - *pos < 46 || le(p, 4) != SIG_CEN)
        return rn_err_set(err, "%s: zip: bad central directory entry at byte %zu", z->path, *pos);
    uint64_t nlen = le(p + 28, 2), xlen = le(p + 30, 2), clen = le(p + 32, 2);
    if (46 + nlen + xlen + clen > cd_end - *pos)
        return rn_err_set(err, "%s: zip: central directory entry at byte %zu overruns", z->path, *pos);
    uint64_t csize = le(p + 20, 4), usize = le(p + 24, 4), loff = le(p + 42, 4);
    if (apply_zip64(p + 46 + nlen, xlen, &usize, &csize, &loff))
        return rn_err_set(err, "%s: zip: bad zip64 extra field at byte %zu", z->path, *pos);
    e->name = (const char *)p + 46;
    e->name_len = nlen;
    e->method = (int)le(p + 10, 2);
    e->size = csize;
    *pos += 46 + nlen + xlen + clen;
    if (loff > z->size || z->size - loff < 30 || le(z->buf + loff, 4) != SIG_LOCAL)
        return rn_err_set(err, "%s: zip: entry '%.*s': bad local header offset", z->path, (int)nlen, e->name);
    uint64_t data = loff + 30 + le(z->buf + loff + 26, 2) + le(z->buf + loff + 28, 2);
    if (data > z->size || csize > z->size - data)
        return rn_err_set(err, "%s: zip: entry '%.*s': data beyond the end of the file (truncated?)", z->path,
                          (int)nlen, e->name);
    if (e->method == 0 && csize != usize)
        return rn_err_set(err, "%s: zip: entry '%.*s': stored with different sizes", z->path, (int)nlen, e->name);
    e->offset = data;
    return 0;
}

int rn_zip_open(rn_zip *z, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    memset(z, 0, sizeof *z);
    z->buf = buf;
    z->size = size;
    z->path = path;
    cdir cd = {0, 0, 0};
    if (read_cdir(z, &cd, err)) return -1;
    z->e = rn_xcalloc(cd.count ? cd.count : 1, sizeof *z->e);
    size_t pos = cd.offset;
    for (uint64_t i = 0; i < cd.count; i++) {
        if (read_entry(z, &pos, cd.offset + cd.size, &z->e[i], err)) {
            rn_zip_close(z);
            return -1;
        }
        z->n++;
    }
    return 0;
}

int rn_zip_find(const rn_zip *z, const char *name, const uint8_t **data, size_t *size, rn_err *err)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < z->n; i++) {
        const rn_zip_entry *e = &z->e[i];
        if (e->name_len != n || memcmp(e->name, name, n)) continue;
        if (e->method != 0)
            return rn_err_set(err, "%s: zip: entry '%s' is compressed (method %d); only stored entries are supported",
                              z->path, name, e->method);
        *data = z->buf + e->offset;
        *size = (size_t)e->size;
        return 0;
    }
    return rn_err_set(err, "%s: zip: no entry '%s'", z->path, name);
}

void rn_zip_close(rn_zip *z)
{
    free(z->e);
    z->e = NULL;
    z->n = 0;
}
