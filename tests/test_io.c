/* Tests for src/io: tensor lists, .npy, safetensors, torch checkpoints.
 *
 * With no arguments: unit tests on files made here (values worked out by hand).
 * Tool modes used by tests/t_io.sh (files made by PyTorch/numpy):
 *   test_io dump IN OUT.safetensors   load IN (any format), write it as safetensors
 *   test_io dumpnpy IN DIR            load IN, write each tensor as DIR/<name>.npy (BF16 skipped)
 *   test_io fuzz IN SEED N            truncations and N random byte-flip runs on IN's image
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/afile.h"
#include "core/rng.h"
#include "io/file.h"
#include "io/pickle.h"
#include "io/tensors.h"

/* ---- tool modes ---- */

static int tool_dump(const char *in, const char *out)
{
    rn_tensors ts;
    rn_err err;
    if (rn_tensors_load(&ts, in, &err) || rn_safetensors_write(out, &ts, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%s: %d tensors\n", in, ts.n);
    rn_tensors_free(&ts);
    return 0;
}

static int tool_dumpnpy(const char *in, const char *dir)
{
    rn_tensors ts;
    rn_err err;
    if (rn_tensors_load(&ts, in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < ts.n && !rc; i++) {
        const rn_tensor *t = &ts.t[i];
        if (t->dtype == RN_BF16) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, t->name);
        rc = rn_npy_write(path, t->dtype, t->ndim, t->shape, t->data, &err);
    }
    if (rc) fprintf(stderr, "%s\n", err.msg);
    rn_tensors_free(&ts);
    return rc ? 1 : 0;
}

/* Parses a private heap copy of buf[0..n) so that ASan sees any overread. */
static int parse_copy(const uint8_t *buf, size_t n, rn_err *err, int *n_tensors)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, buf, n);
    rn_tensors ts;
    err->msg[0] = 0;
    int rc = rn_tensors_parse(&ts, copy, n, "fuzz.bin", err);
    *n_tensors = ts.n;
    rn_tensors_free(&ts);
    free(copy);
    return rc;
}

/* Every truncation of a small image (or 4000 spread over a large one) must fail
 * with a message; random byte flips may load or fail but never crash. */
static int fuzz_image(const uint8_t *buf, size_t size, uint64_t seed, int flips, int quiet)
{
    rn_err err;
    int nt, bad = 0, ok_flips = 0;
    size_t step = size > 4000 ? size / 4000 : 1;
    for (size_t cut = 0; cut < size; cut += (cut < 64 || size - cut < 64) ? 1 : step) {
        int rc = parse_copy(buf, cut, &err, &nt);
        if (rc == 0 || !err.msg[0] || !strstr(err.msg, "fuzz.bin")) {
            if (!quiet || bad < 5) fprintf(stderr, "truncation at %zu: rc %d msg '%s'\n", cut, rc, err.msg);
            bad++;
        }
    }
    rn_rng r;
    rn_rng_seed(&r, seed);
    uint8_t *m = malloc(size);
    for (int it = 0; it < flips; it++) {
        memcpy(m, buf, size);
        int k = 1 + (int)rn_rng_below(&r, 4);
        for (int j = 0; j < k; j++) m[rn_rng_below(&r, size)] ^= (uint8_t)(1 + rn_rng_below(&r, 255));
        int rc = parse_copy(m, size, &err, &nt);
        if (rc == 0) ok_flips++;
        else if (!err.msg[0] || !strstr(err.msg, "fuzz.bin")) {
            fprintf(stderr, "flip run %d: error without a message naming the file: '%s'\n", it, err.msg);
            bad++;
        }
    }
    free(m);
    if (!quiet) printf("fuzz: %zu bytes, %d flip runs loaded, %d rejected, %d bad\n", size, ok_flips, flips - ok_flips, bad);
    return bad;
}

static int tool_fuzz(const char *in, const char *seed, const char *n)
{
    rn_mapfile m;
    rn_err err;
    if (rn_mapfile_open(&m, in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int bad = fuzz_image(m.data, m.size, strtoull(seed, NULL, 10), atoi(n), 0);
    rn_mapfile_close(&m);
    return bad ? 1 : 0;
}

/* ---- helpers ---- */

static char g_dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    RN_ASSERT(f);
    if (n) RN_ASSERT(fwrite(data, 1, n, f) == n);
    fclose(f);
}

typedef struct bb {
    uint8_t *p;
    size_t n, cap;
} bb;

static void bb_put(bb *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        RN_ASSERT(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void bb_u8(bb *b, int v)
{
    uint8_t c = (uint8_t)v;
    bb_put(b, &c, 1);
}

static void bb_le(bb *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) bb_u8(b, (int)(v >> (8 * i)) & 0xff);
}

static void bb_cstr(bb *b, const char *s)
{
    bb_put(b, s, strlen(s));
}

#define bb_lit(b, s) bb_put((b), (s), sizeof(s) - 1)

static int has(const rn_err *e, const char *sub)
{
    return strstr(e->msg, sub) != NULL;
}

/* ---- dtypes, conversions, lists ---- */

static void test_dtypes(void)
{
    static const size_t sizes[RN_DTYPE_COUNT] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1};
    for (int d = 0; d < RN_DTYPE_COUNT; d++) {
        rn_dtype back;
        RN_CHECK(rn_dtype_size((rn_dtype)d) == sizes[d], "size of %s", rn_dtype_name((rn_dtype)d));
        RN_CHECK(rn_dtype_parse(&back, rn_dtype_name((rn_dtype)d)) == 0 && back == (rn_dtype)d, "parse %d", d);
    }
    rn_dtype x;
    RN_CHECK(rn_dtype_parse(&x, "F8_E4M3") == -1, "unknown dtype name rejected");
    RN_CHECK(rn_dtype_is_float(RN_BF16) && !rn_dtype_is_float(RN_I64), "is_float");
}

static void test_half(void)
{
    RN_CHECK(rn_f16_to_f32(0x3C00) == 1.0f, "f16 1");
    RN_CHECK(rn_f16_to_f32(0xC000) == -2.0f, "f16 -2");
    RN_CHECK(rn_f16_to_f32(0x7BFF) == 65504.0f, "f16 max");
    RN_CHECK(rn_f16_to_f32(0x0001) == 0x1p-24f, "f16 smallest subnormal");
    RN_CHECK(rn_f16_to_f32(0x03FF) == 1023 * 0x1p-24f, "f16 largest subnormal");
    RN_CHECK(rn_f16_to_f32(0x3555) == 0.333251953125f, "f16 1/3");
    float nz = rn_f16_to_f32(0x8000);
    RN_CHECK(nz == 0.0f && signbit(nz), "f16 -0");
    RN_CHECK(isinf(rn_f16_to_f32(0x7C00)) && rn_f16_to_f32(0xFC00) < 0, "f16 inf");
    RN_CHECK(isnan(rn_f16_to_f32(0x7E00)), "f16 nan");
    RN_CHECK(rn_bf16_to_f32(0x3F80) == 1.0f && rn_bf16_to_f32(0xC049) == -3.140625f, "bf16");
    RN_CHECK(isnan(rn_bf16_to_f32(0x7FC0)), "bf16 nan");
}

static void test_lists_and_f32(void)
{
    rn_tensors ts;
    rn_err err;
    rn_tensors_init(&ts);
    double d[3] = {1.5, -2.25, 1e300};
    uint16_t h[2] = {0x3C00, 0xC000}, bf[2] = {0x3F80, 0xC049};
    int32_t iv[2] = {1, 2};
    int64_t s3[1] = {3}, s2[1] = {2}, s12[2] = {1, 2};
    RN_CHECK(rn_tensors_add(&ts, "d", RN_F64, 1, s3, d, &err) == 0, "add d");
    RN_CHECK(rn_tensors_add(&ts, "h", RN_F16, 2, s12, h, &err) == 0, "add h");
    RN_CHECK(rn_tensors_add(&ts, "bf", RN_BF16, 1, s2, bf, &err) == 0, "add bf");
    RN_CHECK(rn_tensors_add(&ts, "i", RN_I32, 1, s2, iv, &err) == 0, "add i");
    RN_CHECK(rn_tensors_add(&ts, "h", RN_F32, 1, s2, NULL, &err) == -1 && has(&err, "duplicate"), "dup name");
    int64_t neg[1] = {-1};
    RN_CHECK(rn_tensors_add(&ts, "n", RN_F32, 1, neg, NULL, &err) == -1, "negative dim");
    RN_CHECK(rn_tensors_add(&ts, "n", RN_F32, 9, s3, NULL, &err) == -1, "too many dims");
    float f[3];
    RN_CHECK(rn_tensor_to_f32(f, rn_tensors_find(&ts, "d"), 3, &err) == 0 && f[0] == 1.5f && f[1] == -2.25f &&
                 isinf(f[2]), "f64 -> f32");
    RN_CHECK(rn_tensor_to_f32(f, rn_tensors_find(&ts, "h"), 2, &err) == 0 && f[0] == 1.0f && f[1] == -2.0f, "f16 -> f32");
    RN_CHECK(rn_tensor_to_f32(f, rn_tensors_find(&ts, "bf"), 2, &err) == 0 && f[1] == -3.140625f, "bf16 -> f32");
    RN_CHECK(rn_tensor_to_f32(f, rn_tensors_find(&ts, "d"), 2, &err) == -1 && has(&err, "d: has 3 elements"), "count mismatch");
    RN_CHECK(rn_tensor_to_f32(f, rn_tensors_find(&ts, "i"), 2, &err) == -1 && has(&err, "not a float"), "int rejected");
    int64_t want[2] = {2, 1};
    RN_CHECK(rn_tensor_check_shape(rn_tensors_find(&ts, "h"), 2, s12, &err) == 0, "shape ok");
    RN_CHECK(rn_tensor_check_shape(rn_tensors_find(&ts, "h"), 2, want, &err) == -1 && has(&err, "h: shape (1,2), expected (2,1)"),
             "shape mismatch message: %s", err.msg);
    RN_CHECK(rn_tensors_find(&ts, "nope") == NULL, "find missing");
    rn_tensors_set_meta(&ts, "a", "1");
    rn_tensors_set_meta(&ts, "a", "2");
    RN_CHECK(ts.n_meta == 1 && !strcmp(rn_tensors_get_meta(&ts, "a"), "2"), "meta replace");
    rn_tensors_free(&ts);
    RN_CHECK(ts.n == 0 && ts.t == NULL, "free empties");
}

static void test_many_names(void)
{
    rn_tensors ts;
    rn_err err;
    rn_tensors_init(&ts);
    int64_t v;
    int ok = 1;
    for (int i = 0; i < 20000 && ok; i++) {
        char name[48];
        snprintf(name, sizeof name, "optimizer.state.%d.exp_avg", i);
        v = i;
        ok = rn_tensors_add(&ts, name, RN_I64, 0, NULL, &v, &err) == 0;
    }
    RN_CHECK(ok && ts.n == 20000, "20000 distinct names added");
    for (int i = 0; i < 20000 && ok; i += 7) {
        char name[48];
        snprintf(name, sizeof name, "optimizer.state.%d.exp_avg", i);
        const rn_tensor *t = rn_tensors_find(&ts, name);
        ok = t && *(int64_t *)t->data == i && t == &ts.t[i];
    }
    RN_CHECK(ok, "every name found at its position");
    RN_CHECK(rn_tensors_find(&ts, "optimizer.state.20000.exp_avg") == NULL, "absent name");
    RN_CHECK(rn_tensors_add(&ts, "optimizer.state.123.exp_avg", RN_I64, 0, NULL, &v, &err) == -1, "duplicate among many");
    rn_tensors_free(&ts);
}

/* ---- .npy ---- */

static void test_npy_roundtrip(void)
{
    rn_err err;
    uint8_t src[96];
    for (int i = 0; i < 96; i++) src[i] = (uint8_t)(i * 37 + 5);
    for (int i = 0; i < 96; i++) src[i] &= 0xff;
    int64_t shape[3] = {2, 3, 2};
    for (int d = 0; d < RN_DTYPE_COUNT; d++) {
        uint8_t data[96];
        memcpy(data, src, sizeof data);
        if (d == RN_BOOL)
            for (int i = 0; i < 12; i++) data[i] &= 1;
        const char *p = tmp_path("rt.npy");
        int rc = rn_npy_write(p, (rn_dtype)d, 3, shape, data, &err);
        if (d == RN_BF16) {
            RN_CHECK(rc == -1 && has(&err, "no .npy"), "bf16 has no npy type");
            continue;
        }
        rn_tensor t;
        RN_CHECK(rc == 0 && rn_npy_read(&t, p, &err) == 0, "npy %s: %s", rn_dtype_name((rn_dtype)d), err.msg);
        RN_CHECK(t.dtype == (rn_dtype)d && t.ndim == 3 && t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 2 &&
                     t.nbytes == 12 * rn_dtype_size((rn_dtype)d) && !memcmp(t.data, data, t.nbytes),
                 "npy round trip %s", rn_dtype_name((rn_dtype)d));
        rn_tensor_free(&t);
    }
}

static void test_npy_header(void)
{
    rn_err err;
    float v[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3}, s1[1] = {6};
    const char *p = tmp_path("h.npy");
    RN_CHECK(rn_npy_write(p, RN_F32, 2, shape, v, &err) == 0, "write");
    rn_mapfile m;
    RN_CHECK(rn_mapfile_open(&m, p, &err) == 0, "map");
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    size_t hlen = m.data[8] | (size_t)m.data[9] << 8;
    RN_CHECK(!memcmp(m.data, "\x93NUMPY\x01\x00", 8) && (10 + hlen) % 64 == 0 && m.size == 10 + hlen + 24,
             "npy preamble and 64-byte alignment");
    RN_CHECK(!memcmp(m.data + 10, want, strlen(want)) && m.data[10 + hlen - 1] == '\n' && m.data[10 + hlen - 2] == ' ',
             "npy header text");
    RN_CHECK(!memcmp(m.data + 10 + hlen, v, 24), "npy data");
    rn_mapfile_close(&m);
    RN_CHECK(rn_npy_write(p, RN_F32, 1, s1, v, &err) == 0 && rn_mapfile_open(&m, p, &err) == 0, "write 1-d");
    RN_CHECK(strstr((const char *)m.data + 10, "'shape': (6,), }") != NULL, "1-d shape has a trailing comma");
    rn_mapfile_close(&m);
    RN_CHECK(rn_npy_write(p, RN_F32, 0, NULL, v, &err) == 0 && rn_mapfile_open(&m, p, &err) == 0, "write 0-d");
    RN_CHECK(strstr((const char *)m.data + 10, "'shape': (), }") != NULL && m.size % 64 == 4, "0-d shape");
    rn_mapfile_close(&m);
    RN_CHECK(rn_npy_write("/nonexistent-dir/x.npy", RN_F32, 1, s1, v, &err) == -1 && has(&err, "/nonexistent-dir/x.npy"),
             "write into a missing directory fails");
}

/* Builds an .npy image with the given version and header dict, then n data bytes. */
static bb npy_image(int major, const char *dict, const void *data, size_t n)
{
    bb b = {0};
    bb_lit(&b, "\x93NUMPY");
    bb_u8(&b, major);
    bb_u8(&b, 0);
    size_t hl = strlen(dict) + 1;
    bb_le(&b, hl, major == 1 ? 2 : 4);
    bb_cstr(&b, dict);
    bb_u8(&b, '\n');
    bb_put(&b, data, n);
    return b;
}

static void npy_expect_fail(const char *dict, size_t n, const char *sub, const char *what)
{
    uint8_t data[64] = {0};
    bb b = npy_image(1, dict, data, n);
    rn_tensor t;
    rn_err err;
    RN_CHECK(rn_npy_parse(&t, b.p, b.n, "bad.npy", &err) == -1 && has(&err, "bad.npy") && has(&err, sub),
             "%s: got '%s'", what, err.msg);
    free(b.p);
}

static void test_npy_versions_and_errors(void)
{
    int64_t v[3] = {-1, 2, 1ll << 40};
    rn_err err;
    rn_tensor t;
    for (int major = 2; major <= 3; major++) {
        bb b = npy_image(major, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", v, 24);
        RN_CHECK(rn_npy_parse(&t, b.p, b.n, "v.npy", &err) == 0 && t.dtype == RN_I64 && t.ndim == 1 &&
                     t.shape[0] == 3 && !memcmp(t.data, v, 24), "npy v%d.0: %s", major, err.msg);
        rn_tensor_free(&t);
        free(b.p);
    }
    npy_expect_fail("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, "fortran_order", "fortran order");
    npy_expect_fail("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian", "big endian");
    npy_expect_fail("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, "unsupported .npy dtype", "complex");
    npy_expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, "data is 12 bytes", "trailing data");
    npy_expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 4, "data is 4 bytes", "short data");
    npy_expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 0, "shape", "negative shape");
    npy_expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, "unknown key", "unknown key");
    npy_expect_fail("{'descr': '<f4', 'shape': (2,), }", 8, "lacks", "missing key");
    npy_expect_fail("garbage", 8, "not a dict", "not a dict");
    bb b = npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", v, 16);
    int bad = 0;
    for (size_t cut = 0; cut < b.n; cut++) {
        uint8_t *c = malloc(cut + 1);
        memcpy(c, b.p, cut);
        if (rn_npy_parse(&t, c, cut, "cut.npy", &err) == 0 || !has(&err, "cut.npy")) bad++;
        free(c);
    }
    RN_CHECK(bad == 0, "every truncation of an .npy fails with a message (%d did not)", bad);
    b.p[6] = 9;
    RN_CHECK(rn_npy_parse(&t, b.p, b.n, "ver.npy", &err) == -1 && has(&err, "version 9"), "unknown version");
    free(b.p);
}

/* ---- safetensors ---- */

static void fill_all_dtypes(rn_tensors *ts)
{
    rn_err err;
    uint8_t buf[256];
    for (int i = 0; i < 256; i++) buf[i] = (uint8_t)(i * 11 + 3);
    int64_t shape[2] = {3, 2};
    for (int d = 0; d < RN_DTYPE_COUNT; d++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d.%s", d, rn_dtype_name((rn_dtype)d));
        RN_ASSERT(rn_tensors_add(ts, name, (rn_dtype)d, 2, shape, buf, &err) == 0);
    }
    int64_t z[2] = {0, 4};
    RN_ASSERT(rn_tensors_add(ts, "empty", RN_F32, 2, z, NULL, &err) == 0);
    RN_ASSERT(rn_tensors_add(ts, "scalar", RN_I64, 0, NULL, buf, &err) == 0);
    rn_tensors_set_meta(ts, "format", "pt");
    rn_tensors_set_meta(ts, "epoch", "19");
}

static void test_safetensors_roundtrip(void)
{
    rn_tensors a, b;
    rn_err err;
    rn_tensors_init(&a);
    fill_all_dtypes(&a);
    const char *p = tmp_path("rt.safetensors");
    RN_CHECK(rn_safetensors_write(p, &a, &err) == 0, "write: %s", err.msg);
    RN_CHECK(rn_safetensors_read(&b, p, &err) == 0, "read: %s", err.msg);
    RN_CHECK(a.n == b.n && b.n_meta == 2 && !strcmp(rn_tensors_get_meta(&b, "epoch"), "19"), "count and metadata");
    for (int i = 0; i < a.n && i < b.n; i++) {
        const rn_tensor *x = &a.t[i], *y = &b.t[i];
        int same = !strcmp(x->name, y->name) && x->dtype == y->dtype && x->ndim == y->ndim &&
                   x->nbytes == y->nbytes && !memcmp(x->data, y->data, x->nbytes);
        for (int d = 0; same && d < x->ndim; d++) same = x->shape[d] == y->shape[d];
        RN_CHECK(same, "tensor %d (%s) round trips in order", i, x->name);
    }
    rn_tensors_free(&b);
    rn_tensors_free(&a);

    rn_tensors_init(&a);
    float v[2] = {1.5f, -2};
    int64_t s[1] = {2};
    rn_tensors_add(&a, "a", RN_F32, 1, s, v, &err);
    rn_tensors_set_meta(&a, "k", "v");
    RN_CHECK(rn_safetensors_write(p, &a, &err) == 0, "write small");
    a.t[0].shape[0] = 3;
    RN_CHECK(rn_safetensors_write(tmp_path("bad.safetensors"), &a, &err) == -1 && has(&err, "'a': dtype, shape and byte count"),
             "inconsistent tensor refused: %s", err.msg);
    rn_tensors_free(&a);
    rn_mapfile m;
    RN_CHECK(rn_mapfile_open(&m, p, &err) == 0, "map");
    const char *want = "{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    uint64_t hl = 0;
    memcpy(&hl, m.data, 8);
    RN_CHECK(hl % 8 == 0 && hl >= strlen(want) && hl < strlen(want) + 8 && m.size == 8 + hl + 8, "header length padded to 8");
    RN_CHECK(!memcmp(m.data + 8, want, strlen(want)) && m.data[8 + hl - 1] == ' ', "header JSON text");
    RN_CHECK(!memcmp(m.data + 8 + hl, v, 8), "data bytes");
    rn_mapfile_close(&m);
}

/* A safetensors image from a header string and n data bytes. */
static bb st_image(const char *json, size_t n)
{
    bb b = {0};
    bb_le(&b, strlen(json), 8);
    bb_cstr(&b, json);
    for (size_t i = 0; i < n; i++) bb_u8(&b, (int)i);
    return b;
}

static void st_expect_fail(const char *json, size_t n, const char *sub, const char *what)
{
    bb b = st_image(json, n);
    rn_tensors ts;
    rn_err err;
    RN_CHECK(rn_safetensors_parse(&ts, b.p, b.n, "bad.safetensors", &err) == -1 && has(&err, "bad.safetensors") &&
                 has(&err, sub), "%s: got '%s'", what, err.msg);
    RN_CHECK(ts.n == 0, "%s: nothing left loaded", what);
    free(b.p);
}

static void test_safetensors_errors(void)
{
    rn_tensors ts;
    rn_err err;
    const char *good = "{\"b\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    bb b = st_image(good, 12);
    RN_CHECK(rn_safetensors_parse(&ts, b.p, b.n, "ok.safetensors", &err) == 0 && ts.n == 2 &&
                 !strcmp(ts.t[0].name, "a") && !strcmp(ts.t[1].name, "b") && ((uint8_t *)ts.t[1].data)[0] == 8,
             "hand-made file loads in offset order: %s", err.msg);
    rn_tensors_free(&ts);
    b.p[0] = 0xff;
    b.p[1] = 0xff;
    RN_CHECK(rn_safetensors_parse(&ts, b.p, b.n, "len.safetensors", &err) == -1 && has(&err, "exceeds the file size"),
             "header length beyond the file: %s", err.msg);
    free(b.p);
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]", 8, "bad JSON", "unterminated JSON");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"a\":{}}", 8, "bad JSON", "duplicate key");
    st_expect_fail("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, "'a': unknown dtype 'F8_E4M3'", "unknown dtype");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "'a': data_offsets [0, 8] beyond", "offsets out of range");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "'a': data_offsets span 8 bytes, dtype x shape needs 12", "offsets vs shape");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   8, "overlaps", "overlapping offsets");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "'a': data_offsets begin at 4, expected 0 (gap", "gap");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "8 data bytes but tensors cover 4", "trailing bytes");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "begin <= end", "reversed offsets");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "'a': shape entry 0", "negative shape");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "'a': needs", "missing data_offsets");
    st_expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 4,
                   "shape too large", "shape overflow");
    st_expect_fail("{\"__metadata__\":{\"k\":1}}", 0, "__metadata__ value for 'k'", "non-string metadata");
    st_expect_fail("[1, 2, 3]", 0, "does not start with a JSON object", "header not an object");
}

/* ---- hand-made torch checkpoints ---- */

static void pk_str(bb *b, const char *s)
{
    bb_u8(b, 'X');
    bb_le(b, strlen(s), 4);
    bb_cstr(b, s);
}

static void pk_global(bb *b, const char *mod, const char *name)
{
    bb_u8(b, 'c');
    bb_cstr(b, mod);
    bb_u8(b, '\n');
    bb_cstr(b, name);
    bb_u8(b, '\n');
}

static void pk_float(bb *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    bb_u8(b, 'G');
    for (int i = 7; i >= 0; i--) bb_u8(b, (int)(u >> (8 * i)) & 0xff);
}

/* {'w': T(storage '0' (6 floats), offset 0, size (3,2), stride (1,3)),
 *  'sub': {'epoch': 7, 'lr': [0.5, 1], 'cfg': argparse.Namespace(), 'none': None},
 *  7: T(same storage via the memo, offset 1, size (2,), stride (2,))}  */
static bb main_pickle(int legacy)
{
    bb b = {0};
    bb_lit(&b, "\x80\x02}q\x00(");
    pk_str(&b, "w");
    pk_global(&b, "torch._utils", "_rebuild_tensor_v2");
    bb_lit(&b, "((");
    pk_str(&b, "storage");
    pk_global(&b, "torch", "FloatStorage");
    pk_str(&b, "0");
    pk_str(&b, "cpu");
    bb_lit(&b, "K\x06");
    if (legacy) bb_u8(&b, 'N');
    bb_lit(&b, "tq\x01QK\x00K\x03K\x02\x86K\x01K\x03\x86\x89");
    pk_global(&b, "collections", "OrderedDict");
    bb_lit(&b, ")RtR");
    pk_str(&b, "sub");
    bb_lit(&b, "}(");
    pk_str(&b, "epoch");
    bb_lit(&b, "K\x07");
    pk_str(&b, "lr");
    bb_lit(&b, "](");
    pk_float(&b, 0.5);
    bb_lit(&b, "K\x01" "e");
    pk_str(&b, "cfg");
    pk_global(&b, "argparse", "Namespace");
    bb_lit(&b, ")R");
    pk_str(&b, "none");
    bb_lit(&b, "NuK\x07");
    pk_global(&b, "torch._utils", "_rebuild_tensor_v2");
    bb_lit(&b, "(h\x01QK\x01K\x02\x85K\x02\x85\x89NtRu.");
    return b;
}

/* The legacy container around main; with_storage adds storage '0' (floats 0..5). */
static bb legacy_file(const bb *main, int with_storage)
{
    bb b = {0};
    static const uint8_t magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
    bb_put(&b, magic, sizeof magic);
    bb_lit(&b, "\x80\x02M\xe9\x03.\x80\x02}");
    pk_str(&b, "little_endian");
    bb_lit(&b, "\x88s.");
    bb_put(&b, main->p, main->n);
    bb_lit(&b, "\x80\x02](");
    if (with_storage) pk_str(&b, "0");
    bb_lit(&b, "e.");
    if (!with_storage) return b;
    bb_le(&b, 6, 8);
    for (int i = 0; i < 6; i++) {
        float f = (float)i;
        bb_put(&b, &f, 4);
    }
    return b;
}

typedef struct zentry {
    const char *name;
    const uint8_t *data;
    size_t n;
    int zip64; /* central entry stores sizes and offset in a zip64 extra field */
} zentry;

/* A stored-entries zip; zip64_end: zip64 end records with a saturated classic one. */
static bb zip_file(const zentry *e, int n, int zip64_end)
{
    bb b = {0}, cd = {0};
    for (int i = 0; i < n; i++) {
        uint64_t off = b.n;
        size_t nl = strlen(e[i].name);
        bb_le(&b, 0x04034b50, 4);
        bb_le(&b, 20, 2), bb_le(&b, 0, 2), bb_le(&b, 0, 2), bb_le(&b, 0, 4), bb_le(&b, 0, 4);
        bb_le(&b, e[i].n, 4), bb_le(&b, e[i].n, 4), bb_le(&b, nl, 2), bb_le(&b, 3, 2);
        bb_cstr(&b, e[i].name);
        bb_lit(&b, "FB");
        bb_u8(&b, 0);
        bb_put(&b, e[i].data, e[i].n);
        uint32_t sat = e[i].zip64 ? 0xffffffffu : 0;
        bb_le(&cd, 0x02014b50, 4);
        bb_le(&cd, 45, 2), bb_le(&cd, 45, 2), bb_le(&cd, 0, 2), bb_le(&cd, 0, 2), bb_le(&cd, 0, 4), bb_le(&cd, 0, 4);
        bb_le(&cd, sat ? sat : e[i].n, 4), bb_le(&cd, sat ? sat : e[i].n, 4), bb_le(&cd, nl, 2);
        bb_le(&cd, sat ? 28 : 0, 2), bb_le(&cd, 0, 2), bb_le(&cd, 0, 2), bb_le(&cd, 0, 2), bb_le(&cd, 0, 4);
        bb_le(&cd, sat ? sat : off, 4);
        bb_cstr(&cd, e[i].name);
        if (sat) {
            bb_le(&cd, 1, 2), bb_le(&cd, 24, 2);
            bb_le(&cd, e[i].n, 8), bb_le(&cd, e[i].n, 8), bb_le(&cd, off, 8);
        }
    }
    uint64_t cd_off = b.n;
    bb_put(&b, cd.p, cd.n);
    if (zip64_end) {
        uint64_t rec = b.n;
        bb_le(&b, 0x06064b50, 4), bb_le(&b, 44, 8), bb_le(&b, 45, 2), bb_le(&b, 45, 2), bb_le(&b, 0, 4), bb_le(&b, 0, 4);
        bb_le(&b, (uint64_t)n, 8), bb_le(&b, (uint64_t)n, 8), bb_le(&b, cd.n, 8), bb_le(&b, cd_off, 8);
        bb_le(&b, 0x07064b50, 4), bb_le(&b, 0, 4), bb_le(&b, rec, 8), bb_le(&b, 1, 4);
    }
    bb_le(&b, 0x06054b50, 4);
    bb_le(&b, 0, 2), bb_le(&b, 0, 2), bb_le(&b, zip64_end ? 0xffff : (uint64_t)n, 2), bb_le(&b, zip64_end ? 0xffff : (uint64_t)n, 2);
    bb_le(&b, zip64_end ? 0xffffffffu : cd.n, 4), bb_le(&b, zip64_end ? 0xffffffffu : cd_off, 4), bb_le(&b, 0, 2);
    free(cd.p);
    return b;
}

static bb torch_zip_file(int zip64_end)
{
    float st[6] = {0, 1, 2, 3, 4, 5};
    bb m = main_pickle(0);
    zentry e[3] = {{"archive/data.pkl", m.p, m.n, 0}, {"archive/data/0", (const uint8_t *)st, 24, 1},
                   {"archive/version", (const uint8_t *)"3\n", 2, 0}};
    bb z = zip_file(e, 3, zip64_end);
    free(m.p);
    return z;
}

static void check_hand_checkpoint(const uint8_t *buf, size_t n, const char *what)
{
    rn_tensors ts;
    rn_err err;
    RN_CHECK(rn_tensors_parse(&ts, buf, n, what, &err) == 0, "%s loads: %s", what, err.msg);
    const rn_tensor *w = rn_tensors_find(&ts, "w"), *s = rn_tensors_find(&ts, "7");
    const rn_tensor *ep = rn_tensors_find(&ts, "sub.epoch"), *lr = rn_tensors_find(&ts, "sub.lr");
    static const float wv[6] = {0, 3, 1, 4, 2, 5}, sv[2] = {1, 3};
    static const double lv[2] = {0.5, 1.0};
    RN_CHECK(ts.n == 4, "%s: 4 tensors (cfg and none skipped), got %d", what, ts.n);
    RN_CHECK(w && w->dtype == RN_F32 && w->ndim == 2 && w->shape[0] == 3 && w->shape[1] == 2 && !memcmp(w->data, wv, 24),
             "%s: transposed tensor copied contiguous", what);
    RN_CHECK(s && s->ndim == 1 && s->shape[0] == 2 && !memcmp(s->data, sv, 8), "%s: int key, offset and stride", what);
    RN_CHECK(ep && ep->dtype == RN_I64 && ep->ndim == 0 && *(int64_t *)ep->data == 7, "%s: epoch", what);
    RN_CHECK(lr && lr->dtype == RN_F64 && lr->ndim == 1 && !memcmp(lr->data, lv, 16), "%s: number list", what);
    rn_tensors_free(&ts);
}

static void test_hand_checkpoints(void)
{
    bb m = main_pickle(1), l = legacy_file(&m, 1), z = torch_zip_file(0), z64 = torch_zip_file(1);
    free(m.p);
    check_hand_checkpoint(l.p, l.n, "legacy.pth");
    check_hand_checkpoint(z.p, z.n, "zip.pth");
    check_hand_checkpoint(z64.p, z64.n, "zip64.pth");
    RN_CHECK(fuzz_image(z64.p, z64.n, 13, 500, 1) == 0, "zip64: truncations fail cleanly, flips never crash");
    free(z64.p);
    RN_CHECK(fuzz_image(l.p, l.n, 11, 1500, 1) == 0, "legacy: truncations fail cleanly, flips never crash");
    RN_CHECK(fuzz_image(z.p, z.n, 12, 1500, 1) == 0, "zip: truncations fail cleanly, flips never crash");
    rn_tensors ts;
    rn_err err;
    size_t at = 0;
    while (at + 8 <= l.n && memcmp(l.p + at, "FloatSto", 8)) at++;
    memcpy(l.p + at, "Comp", 4);
    RN_CHECK(rn_tensors_parse(&ts, l.p, l.n, "c.pth", &err) == -1 && has(&err, "c.pth: unsupported storage type torch.ComptStorage"),
             "unknown storage type: %s", err.msg);
    free(l.p);
    free(z.p);
    bb p = {0};
    bb_lit(&p, "\x80\x02]q\x00(h\x00N" "e.");
    l = legacy_file(&p, 0);
    RN_CHECK(rn_pth_parse(&ts, l.p, l.n, "cycle.pth", &err) == -1 && has(&err, "cycle.pth: nesting deeper"),
             "self-containing list: %s", err.msg);
    free(l.p);
    p.n = 0;
    bb_lit(&p, "\x80\x02}(K\x01\x8e");
    l = legacy_file(&p, 0);
    RN_CHECK(rn_pth_parse(&ts, l.p, l.n, "op.pth", &err) == -1 && has(&err, "op.pth: pickle: truncated"), "truncated opcode: %s", err.msg);
    free(l.p);
    p.n = 0;
    bb_lit(&p, "\x80\x02}q\x00(K\x01\xff");
    l = legacy_file(&p, 0);
    RN_CHECK(rn_pth_parse(&ts, l.p, l.n, "x.pth", &err) == -1 && has(&err, "unsupported opcode 0xff"), "unknown opcode: %s", err.msg);
    free(l.p);
    free(p.p);
}

/* Python 2 OrderedDict pickles (items as [[k, v], ...]) and tensor subclasses
 * rebuilt through torch._tensor._rebuild_from_type_v2. */
static void test_old_and_subclass_pickles(void)
{
    bb p = {0};
    bb_lit(&p, "\x80\x02}(");
    pk_str(&p, "od");
    pk_global(&p, "collections", "OrderedDict");
    bb_lit(&p, "(](](");
    pk_str(&p, "a");
    bb_lit(&p, "K\x05" "e](");
    pk_str(&p, "b");
    pk_float(&p, 2.5);
    bb_lit(&p, "e" "e" "tR");
    pk_str(&p, "p");
    pk_global(&p, "torch._tensor", "_rebuild_from_type_v2");
    bb_lit(&p, "(");
    pk_global(&p, "torch._utils", "_rebuild_tensor_v2");
    pk_global(&p, "torch.nn.parameter", "Parameter");
    bb_lit(&p, "((");
    pk_str(&p, "storage");
    pk_global(&p, "torch", "FloatStorage");
    pk_str(&p, "0");
    pk_str(&p, "cpu");
    bb_lit(&p, "K\x06NtQK\x04K\x02\x85K\x01\x85\x89)t}tR");
    pk_str(&p, "view"); /* pre-0.4 storage view: elements 2..4 of storage '0' */
    pk_global(&p, "torch._utils", "_rebuild_tensor");
    bb_lit(&p, "((");
    pk_str(&p, "storage");
    pk_global(&p, "torch", "FloatStorage");
    pk_str(&p, "0");
    pk_str(&p, "cpu");
    bb_lit(&p, "K\x06");
    pk_str(&p, "v1");
    bb_lit(&p, "K\x02K\x03\x87tQK\x00K\x03\x85K\x01\x85tRu.");
    bb l = legacy_file(&p, 1);
    rn_tensors ts;
    rn_err err;
    RN_CHECK(rn_pth_parse(&ts, l.p, l.n, "old.pth", &err) == 0, "old-style pickle loads: %s", err.msg);
    const rn_tensor *a = rn_tensors_find(&ts, "od.a"), *b = rn_tensors_find(&ts, "od.b"), *t = rn_tensors_find(&ts, "p");
    static const float tv[2] = {4, 5}, vv[3] = {2, 3, 4};
    const rn_tensor *vw = rn_tensors_find(&ts, "view");
    RN_CHECK(vw && vw->ndim == 1 && vw->shape[0] == 3 && !memcmp(vw->data, vv, 12), "legacy storage view");
    RN_CHECK(ts.n == 4 && a && *(int64_t *)a->data == 5 && b && *(double *)b->data == 2.5, "OrderedDict from item pairs");
    RN_CHECK(t && t->ndim == 1 && t->shape[0] == 2 && !memcmp(t->data, tv, 8), "tensor subclass rebuilt");
    rn_tensors_free(&ts);
    free(l.p);
    free(p.p);
}

/* Random streams of pickle opcodes (with small arguments) inside a legacy
 * container: the VM must answer every one with a result or a message. */
static void test_random_opcode_streams(void)
{
    static const char ops[] = "}])(tld\x85\x86\x87KNaesuqhQR0b12\x88\x89\x8f\x90\x91\x94\x81.";
    rn_rng r;
    rn_rng_seed(&r, 2024);
    int bad = 0, ok = 0;
    for (int it = 0; it < 3000; it++) {
        bb p = {0};
        bb_lit(&p, "\x80\x02");
        int n = 1 + (int)rn_rng_below(&r, 40);
        for (int i = 0; i < n; i++) {
            char op = ops[rn_rng_below(&r, sizeof ops - 1)];
            bb_u8(&p, op);
            if (op == 'K' || op == 'q' || op == 'h') bb_u8(&p, (int)rn_rng_below(&r, 4));
            if (rn_rng_below(&r, 8) == 0) pk_str(&p, "k");
            if (rn_rng_below(&r, 16) == 0) pk_global(&p, "torch._utils", "_rebuild_tensor_v2");
            if (rn_rng_below(&r, 16) == 0) pk_global(&p, "collections", "OrderedDict");
        }
        bb_lit(&p, ".");
        bb l = legacy_file(&p, 0);
        int nt;
        rn_err err;
        if (parse_copy(l.p, l.n, &err, &nt) == 0) ok++;
        else if (!has(&err, "fuzz.bin")) bad++;
        free(l.p);
        free(p.p);
    }
    RN_CHECK(bad == 0 && ok > 0, "random opcode streams: %d loaded, %d errors without the file name", ok, bad);
}

static int run_pickle(rn_pickle *vm, const bb *p, pk_val **root, rn_err *err)
{
    size_t used;
    rn_pickle_init(vm, NULL, NULL);
    return rn_pickle_run(vm, p->p, p->n, &used, root, "vm.pkl", err);
}

/* Values are freed when nothing holds them: popped ones at once, memoised ones
 * when the memo lets go; values caught in cycles count against a cap. */
static void test_pickle_memory(void)
{
    rn_pickle vm;
    pk_val *root = NULL;
    rn_err err = {{0}};
    bb p = {0};
    /* a list kept only by the memo outlives its stack slot: [5] */
    bb_lit(&p, "\x80\x02]q\x00K\x05" "a0h\x00.");
    RN_CHECK(run_pickle(&vm, &p, &root, &err) == 0 && root->kind == PK_LIST && root->n == 1 &&
                 root->items[0]->kind == PK_INT && root->items[0]->i == 5 && vm.n_live == 2,
             "memoised list after POP: %s (%zu alive)", err.msg, vm.n_live);
    rn_pickle_free(&vm);
    /* 10^5 x `)0` then {}: one value alive at the end, not 10^5 + 1 */
    p.n = 0;
    bb_lit(&p, "\x80\x02");
    for (int i = 0; i < 100000; i++) bb_lit(&p, ")0");
    bb_lit(&p, "}.");
    RN_CHECK(run_pickle(&vm, &p, &root, &err) == 0 && root->kind == PK_DICT && vm.n_live == 1,
             "popped values freed: %s (%zu alive)", err.msg, vm.n_live);
    rn_pickle_free(&vm);
    /* a self-containing list per 7 bytes, dropped by stack and memo: a cycle each, kept, so capped */
    p.n = 0;
    bb_lit(&p, "\x80\x02");
    for (int i = 0; i < 1100000; i++) bb_lit(&p, "]q\x00h\x00" "a0");
    bb_lit(&p, "}.");
    RN_CHECK(run_pickle(&vm, &p, &root, &err) == -1 && has(&err, "vm.pkl: pickle: more than 1048576 values alive"),
             "cyclic garbage capped: %s", err.msg);
    rn_pickle_free(&vm);
    free(p.p);
}

static void test_sniff(void)
{
    rn_tensors ts;
    rn_err err;
    const char *e = tmp_path("empty.bin"), *t = tmp_path("text.txt"), *n = tmp_path("weights.npy");
    write_file(e, "", 0);
    write_file(t, "hello, this is not a tensor file\n", 33);
    RN_CHECK(rn_tensors_load(&ts, e, &err) == -1 && has(&err, "empty.bin: empty file"), "empty: %s", err.msg);
    RN_CHECK(rn_tensors_load(&ts, t, &err) == -1 && has(&err, "text.txt: unrecognised format"), "text: %s", err.msg);
    RN_CHECK(rn_tensors_load(&ts, tmp_path("missing"), &err) == -1 && has(&err, "cannot open"), "missing: %s", err.msg);
    RN_CHECK(rn_tensors_load(&ts, g_dir, &err) == -1 && has(&err, "not a regular file"), "directory: %s", err.msg);
    int64_t s[1] = {2};
    float v[2] = {NAN, 1};
    RN_CHECK(rn_npy_write(n, RN_F32, 1, s, v, &err) == 0 && rn_tensors_load(&ts, n, &err) == 0 && ts.n == 1 &&
                 !strcmp(ts.t[0].name, "weights") && isnan(((float *)ts.t[0].data)[0]), "npy named by its stem, NaN kept");
    rn_tensors_free(&ts);
}

static void test_atomic_leaves_no_temp(void)
{
    rn_afile f;
    rn_err err;
    const char *p = tmp_path("atomic.bin");
    RN_CHECK(rn_afile_open(&f, p, &err) == 0 && rn_afile_write(&f, "abc", 3, &err) == 0, "open+write");
    RN_CHECK(access(p, F_OK) != 0, "target absent before commit");
    RN_CHECK(rn_afile_commit(&f, &err) == 0 && access(p, F_OK) == 0, "target present after commit");
    RN_CHECK(rn_afile_open(&f, tmp_path("aborted.bin"), &err) == 0, "open 2");
    rn_afile_abort(&f);
    rn_afile_abort(&f);
    RN_CHECK(access(tmp_path("aborted.bin"), F_OK) != 0, "abort leaves nothing");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", g_dir);
    RN_CHECK(system(cmd) != 0, "no temporary files left behind");
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "dump")) return tool_dump(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "dumpnpy")) return tool_dumpnpy(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "fuzz")) return tool_fuzz(argv[2], argv[3], argv[4]);
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/rn_test_io.XXXXXX", base);
    RN_ASSERT(mkdtemp(g_dir));
    test_dtypes();
    test_half();
    test_lists_and_f32();
    test_many_names();
    test_npy_roundtrip();
    test_npy_header();
    test_npy_versions_and_errors();
    test_safetensors_roundtrip();
    test_safetensors_errors();
    test_hand_checkpoints();
    test_old_and_subclass_pickles();
    test_random_opcode_streams();
    test_pickle_memory();
    test_sniff();
    test_atomic_leaves_no_temp();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
