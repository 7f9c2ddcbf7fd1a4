#include "io/zip_write.h"

#include <string.h>
#include <zlib.h>

#define ALIGN 64          /* torch.save's data alignment (PyTorchStreamWriter's kFieldAlignment) */
#define U32_LIMIT 0xffffffffu

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int emit(rn_zipw *z, const void *buf, size_t n, rn_err *err)
{
    if (rn_afile_write(&z->f, buf, n, err)) {
        rn_zipw_abort(z);
        return -1;
    }
    z->pos += n;
    return 0;
}

int rn_zipw_open(rn_zipw *z, const char *path, rn_err *err)
{
    memset(z, 0, sizeof *z);
    z->f.fd = -1;
    return rn_afile_open(&z->f, path, err);
}

/* The local header and its "FB" padding field so that the data lands on ALIGN. */
static size_t local_header(uint8_t *h, uint64_t pos, const char *name, size_t nlen, uint32_t crc, uint32_t size)
{
    size_t pad = (ALIGN - (pos + 30 + nlen + 4) % ALIGN) % ALIGN;
    put(h, 0x04034b50u, 4), put(h + 4, 20, 2), put(h + 6, 0, 2), put(h + 8, 0, 2);
    put(h + 10, 0, 2), put(h + 12, 0x21, 2); /* time 00:00, date 1980-01-01 */
    put(h + 14, crc, 4), put(h + 18, size, 4), put(h + 22, size, 4);
    put(h + 26, nlen, 2), put(h + 28, 4 + pad, 2);
    memcpy(h + 30, name, nlen);
    uint8_t *x = h + 30 + nlen;
    x[0] = 'F', x[1] = 'B';
    put(x + 2, pad, 2);
    memset(x + 4, 'Z', pad);
    return 30 + nlen + 4 + pad;
}

int rn_zipw_add(rn_zipw *z, const char *name, const void *data, size_t size, rn_err *err)
{
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > 0xffff) {
        rn_err_set(err, "%s: zip entry name of %zu bytes", z->f.path, nlen);
        rn_zipw_abort(z);
        return -1;
    }
    if (z->n >= 0xffff || size >= U32_LIMIT || z->pos + size + nlen + 30 + 4 + ALIGN >= U32_LIMIT) {
        rn_err_set(err, "%s: archive would pass 4 GiB or 65535 entries at '%s' (zip64 is not written)", z->f.path, name);
        rn_zipw_abort(z);
        return -1;
    }
    uint32_t crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), data, size);
    uint8_t *h = rn_xmalloc(30 + nlen + 4 + ALIGN);
    uint64_t at = z->pos;
    size_t hlen = local_header(h, at, name, nlen, crc, (uint32_t)size);
    int rc = emit(z, h, hlen, err);
    free(h);
    if (rc || (size && emit(z, data, size, err))) return -1;
    if (z->n == z->cap) {
        z->cap = z->cap ? 2 * z->cap : 64;
        rn_zipw_entry *e = realloc(z->e, z->cap * sizeof *e);
        RN_ASSERT(e);
        z->e = e;
    }
    rn_zipw_entry *e = &z->e[z->n++];
    e->name = rn_xmalloc(nlen + 1);
    memcpy(e->name, name, nlen + 1);
    e->crc = crc, e->size = (uint32_t)size, e->offset = (uint32_t)at;
    return 0;
}

static int central_entry(rn_zipw *z, const rn_zipw_entry *e, rn_err *err)
{
    size_t nlen = strlen(e->name);
    uint8_t *h = rn_xcalloc(1, 46 + nlen);
    put(h, 0x02014b50u, 4), put(h + 4, 0x0314, 2), put(h + 6, 20, 2); /* made by: unix, 2.0 */
    put(h + 12, 0, 2), put(h + 14, 0x21, 2);
    put(h + 16, e->crc, 4), put(h + 20, e->size, 4), put(h + 24, e->size, 4);
    put(h + 28, nlen, 2);
    put(h + 38, (uint64_t)0100644 << 16, 4); /* external attributes: a regular file, rw-r--r-- */
    put(h + 42, e->offset, 4);
    memcpy(h + 46, e->name, nlen);
    int rc = emit(z, h, 46 + nlen, err);
    free(h);
    return rc;
}

static void free_entries(rn_zipw *z)
{
    for (size_t i = 0; i < z->n; i++) free(z->e[i].name);
    free(z->e);
    z->e = NULL;
    z->n = z->cap = 0;
}

int rn_zipw_commit(rn_zipw *z, rn_err *err)
{
    uint64_t cd = z->pos;
    for (size_t i = 0; i < z->n; i++)
        if (central_entry(z, &z->e[i], err)) return -1;
    if (z->pos >= U32_LIMIT) {
        rn_err_set(err, "%s: archive passes 4 GiB (zip64 is not written)", z->f.path);
        rn_zipw_abort(z);
        return -1;
    }
    uint8_t end[22] = {0};
    put(end, 0x06054b50u, 4), put(end + 8, z->n, 2), put(end + 10, z->n, 2);
    put(end + 12, z->pos - cd, 4), put(end + 16, cd, 4);
    if (emit(z, end, sizeof end, err)) return -1;
    free_entries(z);
    return rn_afile_commit(&z->f, err);
}

void rn_zipw_abort(rn_zipw *z)
{
    rn_afile_abort(&z->f);
    free_entries(z);
}
