/* safetensors reader and writer: u64 LE header length, JSON header, data. */
#include <jansson.h>
#include <string.h>

#include "core/afile.h"
#include "io/file.h"
#include "io/tensors.h"

#define MAX_HEADER (100u << 20)

typedef struct entry {
    const char *name;
    rn_dtype dtype;
    int ndim;
    int64_t shape[RN_TENSOR_MAXDIM];
    uint64_t begin, end;
} entry;

static int parse_u64(uint64_t *out, json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int parse_entry(entry *e, const char *name, json_t *v, const char *path, rn_err *err)
{
    e->name = name;
    if (!json_is_object(v)) return rn_err_set(err, "%s: tensor '%s': header entry is not an object", path, name);
    json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"), *of = json_object_get(v, "data_offsets");
    if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(of))
        return rn_err_set(err, "%s: tensor '%s': needs string dtype, array shape and array data_offsets", path, name);
    if (rn_dtype_parse(&e->dtype, json_string_value(dt)))
        return rn_err_set(err, "%s: tensor '%s': unknown dtype '%s'", path, name, json_string_value(dt));
    if (json_array_size(sh) > RN_TENSOR_MAXDIM)
        return rn_err_set(err, "%s: tensor '%s': %zu dimensions (at most %d)", path, name, json_array_size(sh), RN_TENSOR_MAXDIM);
    e->ndim = (int)json_array_size(sh);
    uint64_t nbytes = rn_dtype_size(e->dtype);
    for (int i = 0; i < e->ndim; i++) {
        uint64_t d;
        if (parse_u64(&d, json_array_get(sh, (size_t)i)) || d > INT64_MAX)
            return rn_err_set(err, "%s: tensor '%s': shape entry %d is not a non-negative integer", path, name, i);
        if (__builtin_mul_overflow(nbytes, d, &nbytes))
            return rn_err_set(err, "%s: tensor '%s': shape too large", path, name);
        e->shape[i] = (int64_t)d;
    }
    int64_t numel;
    if (rn_shape_numel(&numel, e->ndim, e->shape))
        return rn_err_set(err, "%s: tensor '%s': shape too large (element count overflows)", path, name);
    if (json_array_size(of) != 2 || parse_u64(&e->begin, json_array_get(of, 0)) ||
        parse_u64(&e->end, json_array_get(of, 1)) || e->end < e->begin)
        return rn_err_set(err, "%s: tensor '%s': data_offsets must be [begin, end] with begin <= end", path, name);
    if (e->end - e->begin != nbytes)
        return rn_err_set(err, "%s: tensor '%s': data_offsets span %llu bytes, dtype x shape needs %llu", path,
                          name, (unsigned long long)(e->end - e->begin), (unsigned long long)nbytes);
    return 0;
}

static int parse_metadata(rn_tensors *out, json_t *meta, const char *path, rn_err *err)
{
    if (!json_is_object(meta)) return rn_err_set(err, "%s: __metadata__ is not an object", path);
    const char *k;
    json_t *v;
    json_object_foreach(meta, k, v) {
        if (!json_is_string(v)) return rn_err_set(err, "%s: __metadata__ value for '%s' is not a string", path, k);
        rn_tensors_set_meta(out, k, json_string_value(v));
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Entries sorted by offset must tile the data exactly: no gap, overlap or tail. */
static int check_layout(entry *es, size_t n, uint64_t data_size, const char *path, rn_err *err)
{
    qsort(es, n, sizeof *es, cmp_entry);
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (es[i].end > data_size)
            return rn_err_set(err, "%s: tensor '%s': data_offsets [%llu, %llu] beyond the %llu data bytes", path,
                              es[i].name, (unsigned long long)es[i].begin, (unsigned long long)es[i].end,
                              (unsigned long long)data_size);
        if (es[i].begin != at)
            return rn_err_set(err, "%s: tensor '%s': data_offsets begin at %llu, expected %llu (%s)", path,
                              es[i].name, (unsigned long long)es[i].begin, (unsigned long long)at,
                              es[i].begin < at ? "overlaps the previous tensor" : "gap before it");
        at = es[i].end;
    }
    if (at != data_size)
        return rn_err_set(err, "%s: %llu data bytes but tensors cover %llu", path, (unsigned long long)data_size,
                          (unsigned long long)at);
    return 0;
}

static int parse_entries(rn_tensors *out, json_t *root, const uint8_t *data, uint64_t data_size,
                         const char *path, rn_err *err)
{
    size_t cap = json_object_size(root), n = 0;
    entry *es = rn_xcalloc(cap ? cap : 1, sizeof *es);
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(root, k, v) {
        if (!strcmp(k, "__metadata__")) rc = parse_metadata(out, v, path, err);
        else rc = parse_entry(&es[n++], k, v, path, err);
        if (rc) break;
    }
    if (!rc) rc = check_layout(es, n, data_size, path, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = rn_tensors_add(out, es[i].name, es[i].dtype, es[i].ndim, es[i].shape, data + es[i].begin, err);
    free(es);
    return rc;
}

int rn_safetensors_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    rn_tensors_init(out);
    if (size < 8) return rn_err_set(err, "%s: truncated safetensors file (%zu bytes)", path, size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    if (hlen > size - 8)
        return rn_err_set(err, "%s: header length %llu exceeds the file size %zu", path, (unsigned long long)hlen, size);
    if (hlen > MAX_HEADER) return rn_err_set(err, "%s: header length %llu is implausibly large", path, (unsigned long long)hlen);
    if (hlen < 2 || buf[8] != '{') return rn_err_set(err, "%s: header does not start with a JSON object", path);
    json_error_t je;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root) return rn_err_set(err, "%s: bad JSON header: %s (at byte %d)", path, je.text, je.position);
    int rc = json_is_object(root) ? parse_entries(out, root, buf + 8 + hlen, size - 8 - hlen, path, err)
                                  : rn_err_set(err, "%s: header is not a JSON object", path);
    json_decref(root);
    if (rc) rn_tensors_free(out);
    return rc;
}

int rn_safetensors_read(rn_tensors *out, const char *path, rn_err *err)
{
    rn_mapfile m;
    rn_tensors_init(out);
    if (rn_mapfile_open(&m, path, err)) return -1;
    int rc = rn_safetensors_parse(out, m.data, m.size, path, err);
    rn_mapfile_close(&m);
    return rc;
}

/* The JSON header in tensor order, or NULL when a name or value cannot be encoded. */
static json_t *build_header(const rn_tensors *ts)
{
    json_t *root = json_object();
    int bad = 0;
    if (ts->n_meta) {
        json_t *meta = json_object();
        for (int i = 0; i < ts->n_meta; i++)
            bad |= json_object_set_new(meta, ts->meta_key[i], json_string(ts->meta_val[i]));
        bad |= json_object_set_new(root, "__metadata__", meta);
    }
    uint64_t at = 0;
    for (int i = 0; i < ts->n; i++) {
        const rn_tensor *t = &ts->t[i];
        json_t *e = json_object(), *shape = json_array();
        for (int d = 0; d < t->ndim; d++) bad |= json_array_append_new(shape, json_integer(t->shape[d]));
        bad |= json_object_set_new(e, "dtype", json_string(rn_dtype_name(t->dtype)));
        bad |= json_object_set_new(e, "shape", shape);
        bad |= json_object_set_new(e, "data_offsets", json_pack("[II]", (json_int_t)at, (json_int_t)(at + t->nbytes)));
        bad |= json_object_set_new(root, t->name, e);
        at += t->nbytes;
    }
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int rn_safetensors_write(const char *path, const rn_tensors *ts, rn_err *err)
{
    return rn_safetensors_write_hook(path, ts, NULL, NULL, err);
}

int rn_safetensors_write_hook(const char *path, const rn_tensors *ts, void (*hook)(void *ctx, int i), void *ctx,
                              rn_err *err)
{
    for (int i = 0; i < ts->n; i++) {
        const rn_tensor *t = &ts->t[i];
        if (!t->name || !strcmp(t->name, "__metadata__"))
            return rn_err_set(err, "%s: tensor %d has no usable name", path, i);
        if ((unsigned)t->dtype >= RN_DTYPE_COUNT || t->ndim < 0 || t->ndim > RN_TENSOR_MAXDIM ||
            t->nbytes != (size_t)rn_tensor_numel(t) * rn_dtype_size(t->dtype) || (t->nbytes && !t->data))
            return rn_err_set(err, "%s: tensor '%s': dtype, shape and byte count disagree", path, t->name);
    }
    json_t *root = build_header(ts);
    char *js = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (!js) return rn_err_set(err, "%s: cannot encode the header (invalid UTF-8 in a name?)", path);
    size_t n = strlen(js), padded = (n + 7) / 8 * 8;
    uint8_t *head = rn_xmalloc(8 + padded);
    for (int i = 0; i < 8; i++) head[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(head + 8, js, n);
    memset(head + 8 + n, ' ', padded - n);
    free(js);
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, head, 8 + padded, err);
    free(head);
    for (int i = 0; !rc && i < ts->n; i++) {
        if (hook) hook(ctx, i);
        rc = rn_afile_write(&f, ts->t[i].data, ts->t[i].nbytes, err);
    }
    return rc ? -1 : rn_afile_commit(&f, err);
}
