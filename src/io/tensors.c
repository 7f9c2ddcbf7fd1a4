#include "io/tensors.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "io/file.h"

static const struct {
    const char *name;
    size_t size;
} DTYPES[RN_DTYPE_COUNT] = {
    [RN_F64] = {"F64", 8}, [RN_F32] = {"F32", 4}, [RN_F16] = {"F16", 2}, [RN_BF16] = {"BF16", 2},
    [RN_I64] = {"I64", 8}, [RN_I32] = {"I32", 4}, [RN_I16] = {"I16", 2}, [RN_I8] = {"I8", 1},
    [RN_U8] = {"U8", 1},   [RN_BOOL] = {"BOOL", 1},
};

size_t rn_dtype_size(rn_dtype d)
{
    RN_ASSERT((unsigned)d < RN_DTYPE_COUNT);
    return DTYPES[d].size;
}

const char *rn_dtype_name(rn_dtype d)
{
    RN_ASSERT((unsigned)d < RN_DTYPE_COUNT);
    return DTYPES[d].name;
}

int rn_dtype_parse(rn_dtype *out, const char *name)
{
    for (int i = 0; i < RN_DTYPE_COUNT; i++)
        if (!strcmp(name, DTYPES[i].name)) {
            *out = (rn_dtype)i;
            return 0;
        }
    return -1;
}

int rn_dtype_is_float(rn_dtype d)
{
    return d == RN_F64 || d == RN_F32 || d == RN_F16 || d == RN_BF16;
}

int rn_shape_numel(int64_t *numel, int ndim, const int64_t *shape)
{
    int64_t n = 1, nonzero = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] > 0 && __builtin_mul_overflow(nonzero, shape[i], &nonzero)) return -1;
        n = shape[i] ? n : 0;
    }
    *numel = n ? nonzero : 0;
    return 0;
}

int64_t rn_tensor_numel(const rn_tensor *t)
{
    int64_t n = 0;
    RN_ASSERT(rn_shape_numel(&n, t->ndim, t->shape) == 0); /* every loader checks shapes with rn_shape_numel */
    return n;
}

float rn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    uint32_t bits;
    if (e == 0x1f) {
        bits = sign | 0x7f800000u | (m << 13);
    } else if (e != 0) {
        bits = sign | ((e + 112) << 23) | (m << 13);
    } else {
        float v = (float)m * 0x1p-24f; /* subnormal (or zero): exact */
        memcpy(&bits, &v, 4);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}


int rn_tensor_to_f32(float *dst, const rn_tensor *t, size_t count, rn_err *err)
{
    const char *name = t->name ? t->name : "tensor";
    if (!rn_dtype_is_float(t->dtype))
        return rn_err_set(err, "%s: dtype %s is not a float type", name, rn_dtype_name(t->dtype));
    int64_t n = rn_tensor_numel(t);
    if ((uint64_t)n != count)
        return rn_err_set(err, "%s: has %lld elements, expected %zu", name, (long long)n, count);
    if (t->nbytes != count * rn_dtype_size(t->dtype))
        return rn_err_set(err, "%s: holds %zu bytes, expected %zu", name, t->nbytes,
                          count * rn_dtype_size(t->dtype));
    const uint8_t *src = t->data;
    switch (t->dtype) {
    case RN_F32: memcpy(dst, src, count * 4); break;
    case RN_F64:
#pragma omp parallel for if (count > (1 << 20))
        for (size_t i = 0; i < count; i++) {
            double v;
            memcpy(&v, src + 8 * i, 8);
            dst[i] = (float)v;
        }
        break;
    case RN_F16:
    case RN_BF16: {
        int half = t->dtype == RN_F16;
#pragma omp parallel for if (count > (1 << 20))
        for (size_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            dst[i] = half ? rn_f16_to_f32(h) : rn_bf16_to_f32(h);
        }
        break;
    }
    default: RN_ASSERT(0);
    }
    return 0;
}

int rn_tensor_check_shape(const rn_tensor *t, int ndim, const int64_t *shape, rn_err *err)
{
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (same) return 0;
    char got[160] = "", want[160] = "";
    size_t a = 0, b = 0;
    for (int i = 0; i < t->ndim && a < sizeof got - 24; i++)
        a += (size_t)snprintf(got + a, sizeof got - a, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    for (int i = 0; i < ndim && b < sizeof want - 24; i++)
        b += (size_t)snprintf(want + b, sizeof want - b, "%s%lld", i ? "," : "", (long long)shape[i]);
    return rn_err_set(err, "%s: shape (%s), expected (%s)", t->name ? t->name : "tensor", got, want);
}

void rn_tensors_init(rn_tensors *ts)
{
    memset(ts, 0, sizeof *ts);
}

void rn_tensor_free(rn_tensor *t)
{
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

void rn_tensors_free(rn_tensors *ts)
{
    for (int i = 0; i < ts->n; i++) rn_tensor_free(&ts->t[i]);
    for (int i = 0; i < ts->n_meta; i++) {
        free(ts->meta_key[i]);
        free(ts->meta_val[i]);
    }
    free(ts->t);
    free(ts->index);
    free(ts->meta_key);
    free(ts->meta_val);
    rn_tensors_init(ts);
}

static int shape_bytes(size_t *out, rn_dtype dtype, int ndim, const int64_t *shape)
{
    int64_t numel;
    if (rn_shape_numel(&numel, ndim, shape)) return -1;
    return __builtin_mul_overflow((uint64_t)numel, rn_dtype_size(dtype), out) ? -1 : 0;
}

static uint64_t name_hash(const char *s)
{
    return rn_fnv1a64(RN_FNV_OFFSET, s, strlen(s));
}

static void index_insert(rn_tensors *ts, int i)
{
    size_t mask = (size_t)ts->index_cap - 1, k = name_hash(ts->t[i].name) & mask;
    while (ts->index[k]) k = (k + 1) & mask;
    ts->index[k] = i + 1;
}

/* Keeps the open-addressing index at most half full. */
static void index_reserve(rn_tensors *ts, int n)
{
    if (ts->index_cap >= 2 * n) return;
    int cap = 64;
    while (cap < 2 * n) cap *= 2;
    free(ts->index);
    ts->index = rn_xcalloc((size_t)cap, sizeof *ts->index);
    ts->index_cap = cap;
    for (int i = 0; i < ts->n; i++) index_insert(ts, i);
}

int rn_tensors_add(rn_tensors *ts, const char *name, rn_dtype dtype, int ndim,
                   const int64_t *shape, const void *data, rn_err *err)
{
    size_t nbytes;
    if ((unsigned)dtype >= RN_DTYPE_COUNT) return rn_err_set(err, "%s: invalid dtype", name);
    if (ndim < 0 || ndim > RN_TENSOR_MAXDIM)
        return rn_err_set(err, "%s: %d dimensions (at most %d)", name, ndim, RN_TENSOR_MAXDIM);
    if (shape_bytes(&nbytes, dtype, ndim, shape))
        return rn_err_set(err, "%s: negative or too large shape", name);
    if (rn_tensors_find(ts, name)) return rn_err_set(err, "%s: duplicate tensor name", name);
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 16;
        rn_tensor *t = realloc(ts->t, (size_t)ts->cap * sizeof *t);
        RN_ASSERT(t);
        ts->t = t;
    }
    index_reserve(ts, ts->n + 1);
    rn_tensor *t = &ts->t[ts->n++];
    memset(t, 0, sizeof *t);
    t->name = rn_xstrdup(name);
    index_insert(ts, ts->n - 1);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->nbytes = nbytes;
    t->data = rn_xmalloc(nbytes);
    if (data) memcpy(t->data, data, nbytes);
    else memset(t->data, 0, nbytes);
    return 0;
}

const rn_tensor *rn_tensors_find(const rn_tensors *ts, const char *name)
{
    if (ts->index_cap) {
        size_t mask = (size_t)ts->index_cap - 1;
        for (size_t k = name_hash(name) & mask; ts->index[k]; k = (k + 1) & mask)
            if (!strcmp(ts->t[ts->index[k] - 1].name, name)) return &ts->t[ts->index[k] - 1];
        return NULL;
    }
    for (int i = 0; i < ts->n; i++)
        if (!strcmp(ts->t[i].name, name)) return &ts->t[i];
    return NULL;
}

void rn_tensors_set_meta(rn_tensors *ts, const char *key, const char *val)
{
    for (int i = 0; i < ts->n_meta; i++)
        if (!strcmp(ts->meta_key[i], key)) {
            free(ts->meta_val[i]);
            ts->meta_val[i] = rn_xstrdup(val);
            return;
        }
    if (ts->n_meta == ts->cap_meta) {
        ts->cap_meta = ts->cap_meta ? 2 * ts->cap_meta : 8;
        char **k = realloc(ts->meta_key, (size_t)ts->cap_meta * sizeof *k);
        RN_ASSERT(k);
        ts->meta_key = k;
        char **v = realloc(ts->meta_val, (size_t)ts->cap_meta * sizeof *v);
        RN_ASSERT(v);
        ts->meta_val = v;
    }
    ts->meta_key[ts->n_meta] = rn_xstrdup(key);
    ts->meta_val[ts->n_meta++] = rn_xstrdup(val);
}

const char *rn_tensors_get_meta(const rn_tensors *ts, const char *key)
{
    for (int i = 0; i < ts->n_meta; i++)
        if (!strcmp(ts->meta_key[i], key)) return ts->meta_val[i];
    return NULL;
}

uint64_t rn_tensors_checksum(const rn_tensors *ts)
{
    uint64_t h = RN_FNV_OFFSET; /* a snapshot's "checksum": never change it */
    for (int i = 0; i < ts->n; i++) {
        const rn_tensor *t = &ts->t[i];
        int32_t head[2] = {(int32_t)t->dtype, t->ndim};
        h = rn_fnvx64(h, t->name, strlen(t->name) + 1);
        h = rn_fnvx64(h, head, sizeof head);
        h = rn_fnvx64(h, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        h = rn_fnvx64(h, t->data, t->nbytes);
    }
    return h;
}

int rn_tensors_verify_checksum(const rn_tensors *ts, const char *path, rn_err *err)
{
    const char *sum = rn_tensors_get_meta(ts, "checksum");
    if (!sum) return 0;
    char buf[32];
    snprintf(buf, sizeof buf, "%016" PRIx64, rn_tensors_checksum(ts));
    if (strcmp(sum, buf))
        return rn_err_set(err, "%s: damaged: checksum mismatch (file says %s, contents hash to %s); nothing read from "
                          "it, use another copy or an older snapshot", path, sum, buf);
    return 0;
}
