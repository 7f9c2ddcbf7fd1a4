#include "data/json/jsonf.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int rn_jfail(const rn_jctx *c, const char *key, rn_err *err, const char *fmt, ...)
{
    char where[256] = "", msg[512];
    size_t at = 0;
    if (c->rec >= 0) at += (size_t)snprintf(where, sizeof where, ": %s %ld", c->what ? c->what : "record", c->rec);
    if (c->image_id >= 0 || c->ann_id >= 0) {
        at += (size_t)snprintf(where + at, sizeof where - at, " (");
        if (c->image_id >= 0) at += (size_t)snprintf(where + at, sizeof where - at, "image_id %ld", c->image_id);
        if (c->ann_id >= 0)
            at += (size_t)snprintf(where + at, sizeof where - at, "%sann id %ld", c->image_id >= 0 ? ", " : "",
                                   c->ann_id);
        if (at < sizeof where) snprintf(where + at, sizeof where - at, ")");
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (key) return rn_err_set(err, "%s%s: field '%s': %s", c->file, where, key, msg);
    return rn_err_set(err, "%s%s: %s", c->file, where, msg);
}

const rn_jnode *rn_jget(const rn_jctx *c, const rn_jnode *obj, const char *key, rn_err *err)
{
    const rn_jnode *v = rn_jis_object(obj) ? rn_jobject_get(obj, key) : NULL;
    if (!rn_jis_object(obj)) rn_jfail(c, NULL, err, "not a JSON object");
    else if (!v) rn_jfail(c, key, err, "missing");
    return v;
}

int rn_jnum(const rn_jctx *c, const rn_jnode *v, const char *key, double *out, rn_err *err)
{
    if (rn_jis_integer(v)) *out = (double)rn_jint(v);
    else if (rn_jis_real(v)) *out = rn_jreal(v);
    else if (rn_jis_boolean(v)) *out = rn_jis_true(v) ? 1.0 : 0.0;
    else return rn_jfail(c, key, err, "not a number");
    if (!isfinite(*out)) return rn_jfail(c, key, err, "%s", isnan(*out) ? "NaN" : "infinite");
    if (fabs(*out) > FLT_MAX) return rn_jfail(c, key, err, "%g is beyond float range", *out); /* records hold floats */
    return 0;
}

int rn_jget_num(const rn_jctx *c, const rn_jnode *obj, const char *key, double *out, rn_err *err)
{
    const rn_jnode *v = rn_jget(c, obj, key, err);
    return v ? rn_jnum(c, v, key, out, err) : -1;
}

int rn_jget_int(const rn_jctx *c, const rn_jnode *obj, const char *key, long *out, rn_err *err)
{
    const rn_jnode *v = rn_jget(c, obj, key, err);
    if (!v) return -1;
    if (rn_jis_integer(v)) {
        *out = (long)rn_jint(v);
        return 0;
    }
    if (rn_jis_boolean(v)) {
        *out = rn_jis_true(v);
        return 0;
    }
    double d;
    if (rn_jnum(c, v, key, &d, err)) return -1;
    if (d != floor(d) || fabs(d) > 9.0e15) return rn_jfail(c, key, err, "not an integer (%g)", d);
    *out = (long)d;
    return 0;
}

int rn_jget_str(const rn_jctx *c, const rn_jnode *obj, const char *key, const char **out, rn_err *err)
{
    const rn_jnode *v = rn_jget(c, obj, key, err);
    if (!v) return -1;
    if (!rn_jis_string(v)) return rn_jfail(c, key, err, "not a string");
    *out = rn_jstr(v);
    return 0;
}

int rn_jvec(const rn_jctx *c, const rn_jnode *v, const char *key, double *out, size_t n, int *integral, rn_err *err)
{
    if (!rn_jis_array(v)) return rn_jfail(c, key, err, "not an array");
    if (rn_jarray_size(v) != n)
        return rn_jfail(c, key, err, "has %zu values, expected %zu", rn_jarray_size(v), n);
    int all_int = 1;
    for (size_t i = 0; i < n; i++) {
        const rn_jnode *e = rn_jarray_get(v, i);
        all_int &= rn_jis_integer(e) ? 1 : 0;
        if (rn_jnum(c, e, key, &out[i], err)) return -1;
    }
    if (integral) *integral = all_int;
    return 0;
}

int rn_jget_vec(const rn_jctx *c, const rn_jnode *obj, const char *key, double *out, size_t n, int *integral,
                rn_err *err)
{
    const rn_jnode *v = rn_jget(c, obj, key, err);
    return v ? rn_jvec(c, v, key, out, n, integral, err) : -1;
}

int rn_jget_row(const rn_jctx *c, const rn_jnode *obj, const char *key, size_t row, size_t min_rows, double *out,
                size_t n, rn_err *err)
{
    const rn_jnode *v = rn_jget_array(c, obj, key, err);
    if (!v) return -1;
    if (rn_jarray_size(v) < min_rows || row >= rn_jarray_size(v))
        return rn_jfail(c, key, err, "has %zu rows, expected at least %zu", rn_jarray_size(v),
                        min_rows > row ? min_rows : row + 1);
    const rn_jnode *r = rn_jarray_get(v, row);
    if (n == 1 && !rn_jis_array(r)) return rn_jnum(c, r, key, out, err);
    return rn_jvec(c, r, key, out, n, NULL, err);
}

const rn_jnode *rn_jget_array(const rn_jctx *c, const rn_jnode *obj, const char *key, rn_err *err)
{
    const rn_jnode *v = rn_jget(c, obj, key, err);
    if (v && !rn_jis_array(v)) {
        rn_jfail(c, key, err, "not an array");
        return NULL;
    }
    return v;
}

static size_t idmap_slot(int64_t key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static void idmap_alloc(rn_idmap *m, size_t cap)
{
    m->cap = cap;
    m->n = 0;
    m->keys = rn_xmalloc(cap * sizeof *m->keys);
    m->vals = rn_xmalloc(cap * sizeof *m->vals);
    for (size_t i = 0; i < cap; i++) m->vals[i] = SIZE_MAX;
}

void rn_idmap_init(rn_idmap *m, size_t n_expected)
{
    size_t cap = 16;
    while (cap < 2 * n_expected + 1) cap *= 2;
    idmap_alloc(m, cap);
}

static void idmap_grow(rn_idmap *m)
{
    rn_idmap old = *m;
    idmap_alloc(m, 2 * old.cap);
    for (size_t i = 0; i < old.cap; i++)
        if (old.vals[i] != SIZE_MAX) rn_idmap_put(m, old.keys[i], old.vals[i]);
    rn_idmap_free(&old);
}

/* Grows first (a repeated key may grow it needlessly, which is harmless), then one probe. */
int rn_idmap_put(rn_idmap *m, int64_t key, size_t val)
{
    if (2 * (m->n + 1) + 1 > m->cap) idmap_grow(m);
    size_t i = idmap_slot(key, m->cap);
    while (m->vals[i] != SIZE_MAX) {
        if (m->keys[i] == key) return 1;
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    RN_ASSERT(2 * m->n < m->cap);
    return 0;
}

int rn_idmap_get(const rn_idmap *m, int64_t key, size_t *val)
{
    size_t i = idmap_slot(key, m->cap);
    while (m->vals[i] != SIZE_MAX) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return 0;
}

void rn_idmap_free(rn_idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
}
