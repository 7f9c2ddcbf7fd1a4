/* torch.save checkpoints: the zip format (torch >= 1.6) and the legacy format. */
#include <inttypes.h>
#include <string.h>

#include "io/file.h"
#include "io/pickle.h"
#include "io/tensors.h"
#include "io/zip.h"

#define MAX_DEPTH 64
#define MAX_NAME 4096
/* Values the flattening walk may visit: shared (memoised) references turn the
 * pickle into a DAG, and 60 lists each holding the previous one twice would
 * otherwise make 2^60 visits. A ResNet-50 checkpoint with its optimizer
 * state has about 10^4. */
#define MAX_NODES (1u << 20)

typedef struct storage {
    char *key;
    rn_dtype dtype;
    uint64_t numel;
    const uint8_t *data; /* NULL until resolved (or when empty) */
    uint64_t nbytes;     /* bytes available at data */
    int resolved;
    int root;            /* legacy views: index of the root storage, else -1 */
    uint64_t view_off;   /* bytes into the root */
} storage;

typedef struct pth {
    const char *path;
    const uint8_t *buf;
    size_t size;
    int legacy;
    rn_zip zip;
    char prefix[256];    /* zip: "archive/" */
    storage *st;
    int n_st, cap_st;
} pth;

static const struct {
    const char *name;
    rn_dtype dtype;
} STORAGE_TYPES[] = {
    {"FloatStorage", RN_F32}, {"DoubleStorage", RN_F64}, {"HalfStorage", RN_F16},
    {"BFloat16Storage", RN_BF16}, {"LongStorage", RN_I64}, {"IntStorage", RN_I32},
    {"ShortStorage", RN_I16}, {"CharStorage", RN_I8}, {"ByteStorage", RN_U8}, {"BoolStorage", RN_BOOL},
};

const char *rn_pth_storage_type(rn_dtype dtype)
{
    for (size_t i = 0; i < sizeof STORAGE_TYPES / sizeof STORAGE_TYPES[0]; i++)
        if (STORAGE_TYPES[i].dtype == dtype) return STORAGE_TYPES[i].name;
    return NULL;
}

static int storage_dtype(const pk_val *g, rn_dtype *out)
{
    if (g->kind != PK_GLOBAL) return -1;
    int torch_mod = (g->len == 5 && !memcmp(g->s, "torch", 5)) || (g->len == 10 && !memcmp(g->s, "torch.cuda", 10));
    for (size_t i = 0; torch_mod && i < sizeof STORAGE_TYPES / sizeof STORAGE_TYPES[0]; i++)
        if (g->len2 == strlen(STORAGE_TYPES[i].name) && !memcmp(g->s2, STORAGE_TYPES[i].name, g->len2)) {
            *out = STORAGE_TYPES[i].dtype;
            return 0;
        }
    return -1;
}

static int find_storage(const pth *p, const char *key, size_t len)
{
    for (int i = 0; i < p->n_st; i++)
        if (strlen(p->st[i].key) == len && !memcmp(p->st[i].key, key, len)) return i;
    return -1;
}

/* Finds or adds the storage `key`; its dtype must agree with earlier references. */
static int get_storage(pth *p, const pk_val *key, rn_dtype dt, uint64_t numel, int *idx, rn_err *err)
{
    if (key->kind != PK_STR || key->len > 200) return rn_err_set(err, "storage key is not a short string");
    int i = find_storage(p, key->s, key->len);
    if (i >= 0) {
        if (p->st[i].dtype != dt || p->st[i].numel != numel)
            return rn_err_set(err, "storage '%s' referenced with two different types or sizes", p->st[i].key);
        *idx = i;
        return 0;
    }
    if (p->n_st == p->cap_st) {
        p->cap_st = p->cap_st ? 2 * p->cap_st : 64;
        storage *s = realloc(p->st, (size_t)p->cap_st * sizeof *s);
        RN_ASSERT(s);
        p->st = s;
    }
    storage *s = &p->st[p->n_st];
    memset(s, 0, sizeof *s);
    s->key = rn_xmalloc(key->len + 1);
    memcpy(s->key, key->s, key->len);
    s->key[key->len] = 0;
    s->dtype = dt;
    s->numel = numel;
    s->root = -1;
    *idx = p->n_st++;
    return 0;
}

static int resolve_zip_storage(pth *p, storage *s, rn_err *err)
{
    char name[512];
    snprintf(name, sizeof name, "%sdata/%s", p->prefix, s->key);
    const uint8_t *d;
    size_t n;
    if (rn_zip_find(&p->zip, name, &d, &n, err)) return -1;
    uint64_t want;
    if (__builtin_mul_overflow(s->numel, (uint64_t)rn_dtype_size(s->dtype), &want) || n < want)
        return rn_err_set(err, "storage '%s' holds %zu bytes, %" PRIu64 " elements of %s need more", s->key, n,
                          s->numel, rn_dtype_name(s->dtype));
    s->data = d;
    s->nbytes = n;
    s->resolved = 1;
    return 0;
}

/* Legacy view_metadata (view_key, offset, view_size): a second entry viewing root. */
static int legacy_view(pth *p, int root, const pk_val *vm, int *idx, rn_err *err)
{
    if (vm->kind != PK_TUPLE || vm->n != 3 || vm->items[1]->kind != PK_INT || vm->items[2]->kind != PK_INT ||
        vm->items[1]->i < 0 || vm->items[2]->i < 0)
        return rn_err_set(err, "bad storage view metadata");
    rn_dtype dt = p->st[root].dtype;
    if (get_storage(p, vm->items[0], dt, (uint64_t)vm->items[2]->i, idx, err)) return -1;
    storage *s = &p->st[*idx];
    if (*idx == root) return 0;
    s->root = root;
    s->view_off = (uint64_t)vm->items[1]->i * rn_dtype_size(dt);
    return 0;
}

static int persistent_load(void *ctx, const pk_val *pid, pk_val *out, rn_err *err)
{
    pth *p = ctx;
    if (pid->kind != PK_TUPLE || pid->n < 1) return rn_err_set(err, "persistent id is not a tuple");
    if (!pk_str_eq(pid->items[0], "storage")) {
        out->kind = PK_OBJ; /* e.g. ('module', ...): kept opaque */
        return 0;
    }
    if (pid->n != (p->legacy ? 6u : 5u)) return rn_err_set(err, "storage persistent id has %zu fields", pid->n);
    rn_dtype dt = RN_F32;
    if (storage_dtype(pid->items[1], &dt)) {
        const pk_val *g = pid->items[1];
        if (g->kind != PK_GLOBAL) return rn_err_set(err, "storage type is not a global");
        return rn_err_set(err, "unsupported storage type %.*s.%.*s", (int)g->len, g->s, (int)g->len2, g->s2);
    }
    if (pid->items[4]->kind != PK_INT || pid->items[4]->i < 0) return rn_err_set(err, "bad storage size");
    int idx = -1;
    if (get_storage(p, pid->items[2], dt, (uint64_t)pid->items[4]->i, &idx, err)) return -1;
    if (!p->legacy && !p->st[idx].resolved && resolve_zip_storage(p, &p->st[idx], err)) return -1;
    if (p->legacy && pid->items[5]->kind != PK_NONE && legacy_view(p, idx, pid->items[5], &idx, err)) return -1;
    out->kind = PK_STORAGE;
    out->i = idx;
    return 0;
}

/* ---- tensors out of storages ---- */

static void strided_copy(uint8_t *dst, const uint8_t *src, size_t es, int ndim, const int64_t *size,
                         const int64_t *stride, int64_t numel)
{
    int64_t idx[RN_TENSOR_MAXDIM] = {0};
    int64_t inner = size[ndim - 1], istride = stride[ndim - 1];
    for (int64_t o = 0; o < numel / inner; o++) {
        int64_t off = 0;
        for (int d = 0; d < ndim - 1; d++) off += idx[d] * stride[d];
        for (int64_t j = 0; j < inner; j++, dst += es) memcpy(dst, src + (size_t)(off + j * istride) * es, es);
        for (int d = ndim - 2; d >= 0; d--) {
            if (++idx[d] < size[d]) break;
            idx[d] = 0;
        }
    }
}

static int is_contiguous(const pk_tensor *t)
{
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->size[d] != 1 && t->stride[d] != expect) return 0;
        expect *= t->size[d];
    }
    return 1;
}

/* Checks the tensor's extent against its storage; *numel set. */
static int tensor_extent(const pth *p, const pk_tensor *t, int64_t *numel, rn_err *err)
{
    const storage *s = &p->st[t->storage];
    if (!s->resolved) return rn_err_set(err, "storage '%s' has no data", s->key);
    int64_t n = 1, last = t->offset;
    if (t->offset < 0) return rn_err_set(err, "negative storage offset");
    for (int d = 0; d < t->ndim; d++) {
        if (t->size[d] < 0 || t->stride[d] < 0) return rn_err_set(err, "negative size or stride");
        if (__builtin_mul_overflow(n, t->size[d], &n)) return rn_err_set(err, "size overflows");
    }
    for (int d = 0; n > 0 && d < t->ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(t->size[d] - 1, t->stride[d], &span) || __builtin_add_overflow(last, span, &last))
            return rn_err_set(err, "stride overflows");
    }
    uint64_t end;
    size_t es = rn_dtype_size(s->dtype);
    if (n > 0 && (__builtin_mul_overflow((uint64_t)last + 1, (uint64_t)es, &end) || end > s->nbytes))
        return rn_err_set(err, "reaches element %" PRId64 " of storage '%s' which has %" PRIu64 " bytes of %s", last,
                          s->key, s->nbytes, rn_dtype_name(s->dtype));
    *numel = n;
    return 0;
}

/* The walk's state: the dotted name being built and what it may still spend. */
typedef struct namebuf {
    char s[MAX_NAME];
    size_t len;
    size_t nodes;  /* values visited so far */
    uint64_t left; /* bytes the tensors made so far may still take */
} namebuf;

/* Output bytes allowed for a file of `size` bytes. Every tensor is copied out
 * into its own buffer, so an expanded view (stride 0, which torch.save keeps
 * as it is) is materialised in full, and one storage or list may be reached
 * through many shared references; tied weights reach it twice. 4x the file (a
 * 2-byte BININT1 becomes an 8-byte I64) plus 16 MiB is ample for real
 * checkpoints and bounds what a hostile one can make. */
static uint64_t output_budget(size_t size) { return 4 * (uint64_t)size + (16u << 20); }

/* Charges one new tensor of `bytes` data bytes, its name and its entry. */
static int spend(namebuf *nb, const pth *p, uint64_t bytes, const char *name, rn_err *err)
{
    uint64_t need;
    if (__builtin_add_overflow(bytes, strlen(name) + 1 + sizeof(rn_tensor), &need) || need > nb->left)
        return rn_err_set(err, "%s: tensor '%s': %" PRIu64 " more bytes would take the tensors past %" PRIu64
                          " (4x the file plus 16 MiB): an expanded (stride-0) view, or one value reached through "
                          "too many shared references", p->path, name, bytes, output_budget(p->size));
    nb->left -= need;
    return 0;
}

static int add_tensor(rn_tensors *out, const pth *p, const pk_tensor *t, namebuf *nb, const char *name, rn_err *err)
{
    int64_t numel = 0;
    if (tensor_extent(p, t, &numel, err)) return rn_err_prefix(err, "%s: tensor '%s'", p->path, name);
    const storage *s = &p->st[t->storage];
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)numel, rn_dtype_size(s->dtype), &bytes)) bytes = UINT64_MAX;
    if (spend(nb, p, bytes, name, err)) return -1;
    if (rn_tensors_add(out, name, s->dtype, t->ndim, t->size, NULL, err)) return rn_err_prefix(err, "%s", p->path);
    rn_tensor *dst = &out->t[out->n - 1];
    size_t es = rn_dtype_size(s->dtype);
    if (numel == 0) return 0;
    const uint8_t *src = s->data + (size_t)t->offset * es;
    if (is_contiguous(t)) memcpy(dst->data, src, dst->nbytes);
    else strided_copy(dst->data, src, es, t->ndim, t->size, t->stride, numel);
    return 0;
}

/* ---- flattening ---- */

static int numeric_list(const pk_val *v, int *has_float)
{
    *has_float = 0;
    if (v->n == 0) return 0;
    for (size_t i = 0; i < v->n; i++) {
        pk_kind k = v->items[i]->kind;
        if (k == PK_FLOAT) *has_float = 1;
        else if (k != PK_INT) return 0;
    }
    return 1;
}

static int add_numbers(rn_tensors *out, const pk_val *v, namebuf *nb, const pth *p, const char *name, rn_err *err)
{
    const char *path = p->path;
    int has_float;
    numeric_list(v, &has_float);
    if (spend(nb, p, 8 * (uint64_t)v->n, name, err)) return -1;
    int64_t shape[1] = {(int64_t)v->n};
    if (rn_tensors_add(out, name, has_float ? RN_F64 : RN_I64, 1, shape, NULL, err)) return rn_err_prefix(err, "%s", path);
    uint8_t *d = out->t[out->n - 1].data;
    for (size_t i = 0; i < v->n; i++) {
        const pk_val *x = v->items[i];
        if (has_float) {
            double f = x->kind == PK_FLOAT ? x->f : (double)x->i;
            memcpy(d + 8 * i, &f, 8);
        } else {
            memcpy(d + 8 * i, &x->i, 8);
        }
    }
    return 0;
}

static int add_scalar(rn_tensors *out, const pk_val *v, namebuf *nb, const pth *p, const char *name, rn_err *err)
{
    const char *path = p->path;
    if (spend(nb, p, 8, name, err)) return -1;
    rn_dtype dt = v->kind == PK_FLOAT ? RN_F64 : v->kind == PK_BOOL ? RN_BOOL : RN_I64;
    uint8_t b = (uint8_t)(v->i != 0);
    const void *src = v->kind == PK_FLOAT ? (const void *)&v->f : v->kind == PK_BOOL ? (const void *)&b : (const void *)&v->i;
    if (rn_tensors_add(out, name, dt, 0, NULL, src, err)) return rn_err_prefix(err, "%s", path);
    return 0;
}

static int flatten(rn_tensors *out, const pth *p, const pk_val *v, namebuf *nb, int depth, rn_err *err);

/* Appends ".key" (or "key" at the root) and flattens the child, then restores the name. */
static int flatten_child(rn_tensors *out, const pth *p, const pk_val *key, const pk_val *child, namebuf *nb,
                         int depth, rn_err *err)
{
    char k[64];
    const char *ks = k;
    int kl;
    if (key->kind == PK_STR) ks = key->s, kl = (int)key->len;
    else if (key->kind == PK_INT) kl = snprintf(k, sizeof k, "%" PRId64, key->i);
    else return 0; /* other key types are skipped */
    size_t old = nb->len;
    if (old + (size_t)kl + 2 > MAX_NAME) return rn_err_set(err, "%s: name too long under '%.64s'", p->path, nb->s);
    if (old) nb->s[nb->len++] = '.';
    memcpy(nb->s + nb->len, ks, (size_t)kl);
    nb->len += (size_t)kl;
    nb->s[nb->len] = 0;
    if (memchr(ks, 0, (size_t)kl)) return rn_err_set(err, "%s: NUL byte in a key under '%.64s'", p->path, nb->s);
    int rc = flatten(out, p, child, nb, depth + 1, err);
    nb->len = old;
    nb->s[old] = 0;
    return rc;
}

static int flatten(rn_tensors *out, const pth *p, const pk_val *v, namebuf *nb, int depth, rn_err *err)
{
    if (depth > MAX_DEPTH) return rn_err_set(err, "%s: nesting deeper than %d at '%.64s'", p->path, MAX_DEPTH, nb->s);
    if (++nb->nodes > MAX_NODES)
        return rn_err_set(err, "%s: more than %u values to walk at '%.64s' (shared references repeated too often)",
                          p->path, MAX_NODES, nb->s);
    const char *name = nb->len ? nb->s : "tensor";
    int has_float;
    switch (v->kind) {
    case PK_TENSOR: return add_tensor(out, p, v->t, nb, name, err);
    case PK_INT:
    case PK_FLOAT:
    case PK_BOOL: return add_scalar(out, v, nb, p, name, err);
    case PK_DICT:
        for (size_t i = 0; i + 1 < v->n; i += 2)
            if (flatten_child(out, p, v->items[i], v->items[i + 1], nb, depth, err)) return -1;
        return 0;
    case PK_LIST:
    case PK_TUPLE:
        if (numeric_list(v, &has_float)) return add_numbers(out, v, nb, p, name, err);
        for (size_t i = 0; i < v->n; i++) {
            pk_val key = {.kind = PK_INT, .i = (int64_t)i};
            if (flatten_child(out, p, &key, v->items[i], nb, depth, err)) return -1;
        }
        return 0;
    default: return 0;
    }
}

/* ---- the two container formats ---- */

static int find_prefix(pth *p, rn_err *err)
{
    for (size_t i = 0; i < p->zip.n; i++) {
        const rn_zip_entry *e = &p->zip.e[i];
        const char *slash = memchr(e->name, '/', e->name_len);
        if (!slash) continue;
        size_t pl = (size_t)(slash - e->name) + 1;
        if (pl + 8 == e->name_len && !memcmp(slash + 1, "data.pkl", 8) && pl < sizeof p->prefix) {
            memcpy(p->prefix, e->name, pl);
            p->prefix[pl] = 0;
            return 0;
        }
    }
    return rn_err_set(err, "%s: zip archive has no <name>/data.pkl: not a PyTorch checkpoint", p->path);
}

static int check_byteorder(pth *p)
{
    char name[300];
    snprintf(name, sizeof name, "%sbyteorder", p->prefix);
    const uint8_t *d;
    size_t n;
    rn_err ignore;
    if (rn_zip_find(&p->zip, name, &d, &n, &ignore)) return 0; /* absent: little-endian */
    return n == 6 && !memcmp(d, "little", 6) ? 0 : -1;
}

static int read_zip(pth *p, rn_pickle *vm, pk_val **root, rn_err *err)
{
    if (rn_zip_open(&p->zip, p->buf, p->size, p->path, err) || find_prefix(p, err)) return -1;
    if (check_byteorder(p)) return rn_err_set(err, "%s: big-endian checkpoints are not supported", p->path);
    char name[300];
    snprintf(name, sizeof name, "%sdata.pkl", p->prefix);
    const uint8_t *d;
    size_t n, used;
    if (rn_zip_find(&p->zip, name, &d, &n, err)) return -1;
    return rn_pickle_run(vm, d, n, &used, root, p->path, err);
}

static const uint8_t MAGIC[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

static int read_sys_info(pth *p, const pk_val *v, rn_err *err)
{
    if (v->kind != PK_DICT) return rn_err_set(err, "%s: legacy checkpoint: sys_info is not a dict", p->path);
    for (size_t i = 0; i + 1 < v->n; i += 2)
        if (pk_str_eq(v->items[i], "little_endian") && v->items[i + 1]->kind == PK_BOOL && !v->items[i + 1]->i)
            return rn_err_set(err, "%s: big-endian checkpoints are not supported", p->path);
    return 0;
}

/* After the pickles: for each key an int64 element count and the raw bytes. */
static int read_legacy_data(pth *p, const pk_val *keys, size_t pos, rn_err *err)
{
    if (keys->kind != PK_LIST) return rn_err_set(err, "%s: legacy checkpoint: storage key list is not a list", p->path);
    for (size_t i = 0; i < keys->n; i++) {
        const pk_val *k = keys->items[i];
        int idx = k->kind == PK_STR ? find_storage(p, k->s, k->len) : -1;
        if (idx < 0) return rn_err_set(err, "%s: legacy checkpoint: storage key %zu is not used by any tensor", p->path, i);
        storage *s = &p->st[idx];
        uint64_t count = 0, nbytes;
        if (p->size - pos < 8) return rn_err_set(err, "%s: truncated before storage '%s'", p->path, s->key);
        memcpy(&count, p->buf + pos, 8);
        pos += 8;
        if (__builtin_mul_overflow(count, (uint64_t)rn_dtype_size(s->dtype), &nbytes) || nbytes > p->size - pos)
            return rn_err_set(err, "%s: storage '%s' (%" PRIu64 " elements of %s) runs past the end of the file (truncated?)",
                              p->path, s->key, count, rn_dtype_name(s->dtype));
        s->data = p->buf + pos;
        s->nbytes = nbytes;
        s->resolved = 1;
        pos += nbytes;
    }
    return 0;
}

static int resolve_views(pth *p, rn_err *err)
{
    for (int i = 0; i < p->n_st; i++) {
        storage *s = &p->st[i];
        if (s->root < 0) continue;
        const storage *r = &p->st[s->root];
        uint64_t len = s->numel * rn_dtype_size(s->dtype);
        if (!r->resolved || s->view_off > r->nbytes || len > r->nbytes - s->view_off)
            return rn_err_set(err, "%s: storage view '%s' lies outside storage '%s'", p->path, s->key, r->key);
        s->data = r->data + s->view_off;
        s->nbytes = len;
        s->resolved = 1;
    }
    return 0;
}

static int read_legacy(pth *p, rn_pickle *vm, pk_val **root, rn_err *err)
{
    pk_val *magic, *proto, *sys, *keys;
    size_t pos = 0, used;
#define RUN(v) (rn_pickle_run(vm, p->buf + pos, p->size - pos, &used, &(v), p->path, err) ? -1 : (pos += used, 0))
    if (RUN(magic)) return -1;
    if (magic->kind != PK_BIGINT || magic->len != 10 || memcmp(magic->s, MAGIC, 10))
        return rn_err_set(err, "%s: legacy checkpoint: bad magic number", p->path);
    if (RUN(proto)) return -1;
    if (proto->kind != PK_INT || proto->i != 1001)
        return rn_err_set(err, "%s: legacy checkpoint: unsupported protocol version", p->path);
    if (RUN(sys) || read_sys_info(p, sys, err) || RUN(*root) || RUN(keys)) return -1;
#undef RUN
    return read_legacy_data(p, keys, pos, err) || resolve_views(p, err) ? -1 : 0;
}

int rn_pth_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    rn_tensors_init(out);
    pth p = {.path = path, .buf = buf, .size = size};
    if (size >= 4 && !memcmp(buf, "PK\x03\x04", 4)) p.legacy = 0;
    else if (size >= 2 && buf[0] == 0x80) p.legacy = 1;
    else return rn_err_set(err, "%s: not a PyTorch checkpoint", path);
    rn_pickle vm;
    rn_pickle_init(&vm, persistent_load, &p);
    pk_val *root = NULL;
    int rc = p.legacy ? read_legacy(&p, &vm, &root, err) : read_zip(&p, &vm, &root, err);
    namebuf *nb = rn_xcalloc(1, sizeof *nb);
    nb->left = output_budget(size);
    if (!rc) rc = flatten(out, &p, root, nb, 0, err);
    free(nb);
    rn_pickle_free(&vm);
    rn_zip_close(&p.zip);
    for (int i = 0; i < p.n_st; i++) free(p.st[i].key);
    free(p.st);
    if (rc) rn_tensors_free(out);
    return rc;
}

int rn_pth_read(rn_tensors *out, const char *path, rn_err *err)
{
    rn_mapfile m;
    rn_tensors_init(out);
    if (rn_mapfile_open(&m, path, err)) return -1;
    int rc = rn_pth_parse(out, m.data, m.size, path, err);
    rn_mapfile_close(&m);
    return rc;
}
