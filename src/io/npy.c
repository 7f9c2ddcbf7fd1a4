/* .npy reader and writer (C order, little-endian). */
#include <ctype.h>
#include <string.h>

#include "core/afile.h"
#include "io/file.h"
#include "io/tensors.h"

static const struct {
    const char *descr;
    rn_dtype dtype;
} DESCRS[] = {
    {"<f8", RN_F64}, {"<f4", RN_F32}, {"<f2", RN_F16}, {"<i8", RN_I64}, {"<i4", RN_I32},
    {"<i2", RN_I16}, {"|i1", RN_I8},  {"<i1", RN_I8},  {"|u1", RN_U8},  {"<u1", RN_U8},
    {"|b1", RN_BOOL}, {"<b1", RN_BOOL},
};

typedef struct header {
    char descr[16];
    int fortran, ndim, have_descr, have_fortran, have_shape;
    int64_t shape[RN_TENSOR_MAXDIM];
} header;

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t')) c->p++;
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted Python string literal without escapes, into out (cap bytes). */
static int read_quoted(cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= cap || *c->p == '\\') return -1;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return -1;
    c->p++;
    out[n] = 0;
    return 0;
}

static int read_shape(cursor *c, header *h)
{
    if (!eat(c, '(')) return -1;
    h->ndim = 0;
    for (;;) {
        if (eat(c, ')')) return 0;
        skip_ws(c);
        if (c->p >= c->end || !isdigit((unsigned char)*c->p) || h->ndim == RN_TENSOR_MAXDIM) return -1;
        int64_t v = 0;
        while (c->p < c->end && isdigit((unsigned char)*c->p)) {
            if (v > (INT64_MAX - 9) / 10) return -1;
            v = 10 * v + (*c->p++ - '0');
        }
        h->shape[h->ndim++] = v;
        if (!eat(c, ',')) return eat(c, ')') ? 0 : -1;
    }
}

static int read_bool(cursor *c, int *out)
{
    skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && !memcmp(c->p, "True", 4)) { c->p += 4; *out = 1; return 0; }
    if (left >= 5 && !memcmp(c->p, "False", 5)) { c->p += 5; *out = 0; return 0; }
    return -1;
}

static int parse_header(header *h, const char *txt, size_t len, const char *path, rn_err *err)
{
    cursor c = {txt, txt + len};
    memset(h, 0, sizeof *h);
    if (!eat(&c, '{')) return rn_err_set(err, "%s: .npy header is not a dict", path);
    while (!eat(&c, '}')) {
        char key[32];
        if (read_quoted(&c, key, sizeof key) || !eat(&c, ':'))
            return rn_err_set(err, "%s: malformed .npy header", path);
        int bad;
        if (!strcmp(key, "descr")) bad = read_quoted(&c, h->descr, sizeof h->descr), h->have_descr = 1;
        else if (!strcmp(key, "fortran_order")) bad = read_bool(&c, &h->fortran), h->have_fortran = 1;
        else if (!strcmp(key, "shape")) bad = read_shape(&c, h), h->have_shape = 1;
        else return rn_err_set(err, "%s: unknown key '%s' in .npy header", path, key);
        if (bad) return rn_err_set(err, "%s: malformed value for '%s' in .npy header", path, key);
        if (!eat(&c, ',') && !(skip_ws(&c), c.p < c.end && *c.p == '}'))
            return rn_err_set(err, "%s: malformed .npy header", path);
    }
    if (!h->have_descr || !h->have_fortran || !h->have_shape)
        return rn_err_set(err, "%s: .npy header lacks descr, fortran_order or shape", path);
    return 0;
}

static int descr_dtype(rn_dtype *out, const char *descr, const char *path, rn_err *err)
{
    for (size_t i = 0; i < sizeof DESCRS / sizeof DESCRS[0]; i++)
        if (!strcmp(descr, DESCRS[i].descr)) {
            *out = DESCRS[i].dtype;
            return 0;
        }
    if (descr[0] == '>') return rn_err_set(err, "%s: big-endian .npy dtype '%s' is not supported", path, descr);
    return rn_err_set(err, "%s: unsupported .npy dtype '%s'", path, descr);
}

int rn_npy_parse(rn_tensor *out, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    memset(out, 0, sizeof *out);
    if (size < 10 || memcmp(buf, "\x93NUMPY", 6)) return rn_err_set(err, "%s: not an .npy file", path);
    int major = buf[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return rn_err_set(err, "%s: truncated .npy header", path);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        off = 12;
    } else {
        return rn_err_set(err, "%s: unsupported .npy version %d.%d", path, major, buf[7]);
    }
    if (hlen > size - off) return rn_err_set(err, "%s: truncated .npy header (%zu bytes claimed)", path, hlen);
    header h;
    if (parse_header(&h, (const char *)buf + off, hlen, path, err)) return -1;
    if (h.fortran) return rn_err_set(err, "%s: fortran_order True .npy files are not supported", path);
    rn_dtype dt = RN_F32;
    if (descr_dtype(&dt, h.descr, path, err)) return -1;
    size_t nbytes = rn_dtype_size(dt);
    int64_t numel;
    if (rn_shape_numel(&numel, h.ndim, h.shape) || __builtin_mul_overflow((uint64_t)numel, nbytes, &nbytes))
        return rn_err_set(err, "%s: .npy shape too large", path);
    off += hlen;
    if (size - off != nbytes)
        return rn_err_set(err, "%s: .npy data is %zu bytes, header says %zu", path, size - off, nbytes);
    out->name = NULL;
    out->dtype = dt;
    out->ndim = h.ndim;
    memcpy(out->shape, h.shape, sizeof h.shape);
    out->nbytes = nbytes;
    out->data = rn_xmalloc(nbytes);
    memcpy(out->data, buf + off, nbytes);
    return 0;
}

int rn_npy_read(rn_tensor *out, const char *path, rn_err *err)
{
    rn_mapfile m;
    memset(out, 0, sizeof *out);
    if (rn_mapfile_open(&m, path, err)) return -1;
    int rc = rn_npy_parse(out, m.data, m.size, path, err);
    rn_mapfile_close(&m);
    return rc;
}

static const char *dtype_descr(rn_dtype d)
{
    for (size_t i = 0; i < sizeof DESCRS / sizeof DESCRS[0]; i++)
        if (DESCRS[i].dtype == d) return DESCRS[i].descr;
    return NULL;
}

/* Formats the v1.0 preamble + header padded with spaces and '\n' to a multiple of 64. */
static size_t format_header(char *out, size_t cap, const char *descr, int ndim, const int64_t *shape)
{
    char dict[512];
    size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim; i++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%lld,%s", (long long)shape[i],
                              i + 1 < ndim ? " " : "");
    if (ndim > 1) n--; /* numpy writes (2, 3) but (3,) */
    n += (size_t)snprintf(dict + n, sizeof dict - n, "), }");
    size_t total = (10 + n + 1 + 63) / 64 * 64;
    RN_ASSERT(total <= cap);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    out[8] = (char)(hlen & 0xff);
    out[9] = (char)(hlen >> 8);
    memcpy(out + 10, dict, n);
    memset(out + 10 + n, ' ', total - 10 - n - 1);
    out[total - 1] = '\n';
    return total;
}

int rn_npy_write(const char *path, rn_dtype dtype, int ndim, const int64_t *shape,
                 const void *data, rn_err *err)
{
    const char *descr = (unsigned)dtype < RN_DTYPE_COUNT ? dtype_descr(dtype) : NULL;
    if (!descr) return rn_err_set(err, "%s: dtype has no .npy equivalent", path);
    if (ndim < 0 || ndim > RN_TENSOR_MAXDIM) return rn_err_set(err, "%s: %d dimensions", path, ndim);
    size_t nbytes = rn_dtype_size(dtype);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || __builtin_mul_overflow(nbytes, (size_t)shape[i], &nbytes))
            return rn_err_set(err, "%s: invalid shape", path);
    if (nbytes && !data) return rn_err_set(err, "%s: no data", path);
    char head[640];
    size_t hn = format_header(head, sizeof head, descr, ndim, shape);
    rn_afile f;
    if (rn_afile_open(&f, path, err)) return -1;
    if (rn_afile_write(&f, head, hn, err) || rn_afile_write(&f, data, nbytes, err)) return -1;
    return rn_afile_commit(&f, err);
}
