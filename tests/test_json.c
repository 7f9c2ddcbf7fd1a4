/* rn_json: numbers against libc strtod (correctly rounded), escapes against
 * hand-written UTF-8, large-object lookups, and malformed input; the image-id map
 * (rn_idmap) far beyond its first size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "data/json/json.h"
#include "data/json/jsonf.h"

static rn_jdoc *parse(const char *s, rn_err *err) { return rn_jdoc_parse(s, strlen(s), "t.json", err); }

static void test_numbers(void)
{
    static const char *reals[] = {"0.1", "-0.0", "1e5", "1E+2", "2.5e-3", "1.7976931348623157e308", "5e-324",
                                  "123456789.123456789", "0.30000000000000004", "9007199254740993.0",
                                  "12345678901234567890", "1e-22", "1e22", "1e23", "-987.654321", "3.14159265358979"};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        rn_err err = {{0}};
        rn_jdoc *d = parse(reals[i], &err);
        RN_CHECK(d && rn_jis_real(d->root), "%s: %s", reals[i], err.msg);
        if (d) RN_CHECK(memcmp(&d->root->u.d, &(double){strtod(reals[i], NULL)}, 8) == 0, "%s -> %.17g", reals[i],
                        d->root->u.d);
        rn_jdoc_free(d);
    }
    static const char *ints[] = {"0", "-7", "123456789012345678", "-123456789012345678"};
    static const long long want[] = {0, -7, 123456789012345678LL, -123456789012345678LL};
    for (size_t i = 0; i < 4; i++) {
        rn_err err = {{0}};
        rn_jdoc *d = parse(ints[i], &err);
        RN_CHECK(d && rn_jis_integer(d->root) && rn_jint(d->root) == want[i], "int %s", ints[i]);
        rn_jdoc_free(d);
    }
    rn_err err = {{0}};
    rn_jdoc *d = parse("[NaN, Infinity, -Infinity, true, false, null]", &err);
    RN_CHECK(d && rn_jarray_size(d->root) == 6, "literals: %s", err.msg);
    if (d) {
        RN_CHECK(isnan(rn_jreal(rn_jarray_get(d->root, 0))) && rn_jreal(rn_jarray_get(d->root, 1)) == INFINITY &&
                     rn_jreal(rn_jarray_get(d->root, 2)) == -INFINITY,
                 "non-finite");
        RN_CHECK(rn_jis_true(rn_jarray_get(d->root, 3)) && rn_jis_boolean(rn_jarray_get(d->root, 4)) &&
                     rn_jis(rn_jarray_get(d->root, 5), RN_JNULL) && rn_jarray_get(d->root, 6) == NULL,
                 "true/false/null");
    }
    rn_jdoc_free(d);
}

static void test_strings_objects(void)
{
    rn_err err = {{0}};
    rn_jdoc *d = parse("{\"a\\\"b\": \"x\\\\y\\/z\\n\", \"u\": \"\\u00e9\\u20ac\\ud83d\\ude00\", \"k\": 1, \"k\": 2,"
                       " \"e\": {}, \"l\": []}",
                       &err);
    RN_CHECK(d != NULL, "strings: %s", err.msg);
    if (d) {
        const rn_jnode *r = d->root;
        RN_CHECK(rn_jis_string(rn_jobject_get(r, "a\"b")) && !strcmp(rn_jstr(rn_jobject_get(r, "a\"b")), "x\\y/z\n"),
                 "escapes");
        /* e-acute C3 A9, euro E2 82 AC, U+1F600 F0 9F 98 80 */
        RN_CHECK(!strcmp(rn_jstr(rn_jobject_get(r, "u")), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") &&
                     rn_jobject_get(r, "u")->n == 9,
                 "unicode");
        RN_CHECK(rn_jint(rn_jobject_get(r, "k")) == 2, "later duplicate wins");
        RN_CHECK(rn_jis_object(rn_jobject_get(r, "e")) && rn_jarray_size(rn_jobject_get(r, "l")) == 0 &&
                     rn_jobject_get(r, "zz") == NULL && rn_jobject_get(rn_jobject_get(r, "k"), "x") == NULL,
                 "empty containers, missing keys");
    }
    rn_jdoc_free(d);
    /* an empty container closed before any value was pushed (fuzz: memcpy from NULL under UBSan) */
    static const char *const empty[] = {"[]", "{}", "[[]]", " { } "};
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
        d = parse(empty[i], &err);
        RN_CHECK(d && (rn_jis_array(d->root) || rn_jis_object(d->root)) && d->root->n == (i == 2 ? 1u : 0u),
                 "empty container '%s': %s", empty[i], d ? "" : err.msg);
        rn_jdoc_free(d);
    }
    /* a 3000-member object uses the hash index; duplicates: the later wins */
    size_t cap = 3000 * 24 + 64, at = 0;
    char *big = malloc(cap);
    at += (size_t)snprintf(big + at, cap - at, "{");
    for (int i = 0; i < 3000; i++) at += (size_t)snprintf(big + at, cap - at, "%s\"%d\": %d", i ? ", " : "", i % 2500, i);
    snprintf(big + at, cap - at, "}");
    d = parse(big, &err);
    free(big);
    RN_CHECK(d && d->root->n == 3000, "big object");
    if (d) {
        int ok = 1;
        char key[16];
        for (int i = 0; i < 2500; i++) {
            snprintf(key, sizeof key, "%d", i);
            const rn_jnode *v = rn_jobject_get(d->root, key);
            ok &= v && rn_jint(v) == (i < 500 ? i + 2500 : i);
        }
        RN_CHECK(ok && rn_jobject_get(d->root, "2500") == NULL, "hash lookups");
    }
    rn_jdoc_free(d);
}

static void test_malformed(void)
{
    static const struct {
        const char *doc, *want;
    } bad[] = {
        {"", "t.json:1:1: malformed JSON: unexpected end of input"},
        {"{\"a\": 1,,}", "t.json:1:9: malformed JSON: expected a string key"},
        {"[1, 2", "t.json:1:6: malformed JSON: expected ',' or ']'"},
        {"{\"a\" 1}", "expected ':'"},
        {"[1]\n  x", "t.json:2:3: malformed JSON: trailing characters"},
        {"[\"abc]", "unterminated string"},
        {"[\"a\x01\"]", "control character in string"},
        {"[\"\\q\"]", "bad escape"},
        {"[\"\\u12g4\"]", "bad \\u escape"},
        {"[1.]", "bad number"},
        {"[-]", "bad number"},
        {"[1e]", "bad number"},
        {"[tru]", "invalid token"},
        {"{\"a\": nan}", "invalid token"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rn_err err = {{0}};
        rn_jdoc *d = parse(bad[i].doc, &err);
        RN_CHECK(d == NULL && strstr(err.msg, bad[i].want), "case %zu: want '%s', got '%s'", i, bad[i].want, err.msg);
        rn_jdoc_free(d);
    }
    char *deep = malloc(2001);
    memset(deep, '[', 1000);
    memset(deep + 1000, ']', 1000);
    deep[2000] = 0;
    rn_err err = {{0}};
    rn_jdoc *d = parse(deep, &err);
    RN_CHECK(d == NULL && strstr(err.msg, "nested too deeply"), "deep: %s", err.msg);
    free(deep);
    d = rn_jdoc_load("/nonexistent/x.json", &err);
    RN_CHECK(d == NULL && strstr(err.msg, "/nonexistent/x.json: cannot open"), "missing file: %s", err.msg);
}

/* Every prefix and many one-byte mutations of a document, each in an
 * exact-size heap buffer (ASan catches any read past the end): parse or fail
 * with a message, never crash. */
static void test_fuzz(void)
{
    const char *doc = "{\"images\": [{\"id\": 1, \"f\": [1.5e3, -2], \"s\": \"a\\u00e9\\n\"}], \"x\": [true, null, NaN, -Infinity]}";
    size_t len = strlen(doc);
    int ok = 1;
    uint64_t x = 88172645463325252ULL;
    for (size_t n = 0; n <= len; n++) {
        char *b = malloc(n ? n : 1);
        memcpy(b, doc, n);
        rn_err err = {{0}};
        rn_jdoc *d = rn_jdoc_parse(b, n, "f", &err);
        ok &= (d != NULL) == (n == len) && (d || strstr(err.msg, "malformed JSON"));
        rn_jdoc_free(d);
        for (int m = 0; m < 20 && n == len; m++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            char *c = malloc(len);
            memcpy(c, doc, len);
            c[x % len] = "{}[]\",:\\u0-eE.aN \x01"[(x >> 20) % 18];
            rn_jdoc_free(rn_jdoc_parse(c, len, "f", &err));
            free(c);
        }
        free(b);
    }
    RN_CHECK(ok, "prefixes fail cleanly, the whole parses");
}

/* Ids a detector's image list gives (sequential, strided by 256, negative, huge), put into a map
 * sized for 4: every id reads back its own index, a repeated id is refused and keeps its first
 * index, absent ids are absent. (The map once had a fixed size: the 257th id spun forever.) */
static int64_t idmap_key(size_t i, size_t n)
{
    int64_t j = (int64_t)(i / 4); /* the four forms take disjoint ranges */
    switch (i % 4) {
    case 0: return j;
    case 1: return (j + (int64_t)n) * 256;
    case 2: return -j - 1;
    default: return j * 1000003 + ((int64_t)1 << 40);
    }
}

static void test_idmap(void)
{
    enum { N = 20000 };
    rn_idmap m;
    rn_idmap_init(&m, 4);
    int fresh = 1, found = 1, dup = 1, absent = 1;
    for (size_t i = 0; i < N; i++) fresh &= rn_idmap_put(&m, idmap_key(i, N), i) == 0;
    for (size_t i = 0; i < N; i++) {
        size_t v = SIZE_MAX;
        found &= rn_idmap_get(&m, idmap_key(i, N), &v) == 1 && v == i;
        dup &= rn_idmap_put(&m, idmap_key(i, N), N + i) == 1;
    }
    for (size_t i = 0; i < N; i++) {
        size_t v = SIZE_MAX;
        dup &= rn_idmap_get(&m, idmap_key(i, N), &v) == 1 && v == i;
        absent &= rn_idmap_get(&m, (int64_t)(N + i) * 3 + ((int64_t)1 << 50), &v) == 0;
    }
    RN_CHECK(fresh, "idmap: %d distinct ids are all new", N);
    RN_CHECK(found, "idmap: each id reads back its index");
    RN_CHECK(dup, "idmap: a repeated id is refused and keeps its first index");
    RN_CHECK(absent, "idmap: ids never put are absent");
    RN_CHECK(m.n == N && m.cap > 2 * m.n, "idmap: %zu keys in %zu slots", m.n, m.cap);
    rn_idmap_free(&m);
}

int main(void)
{
    alarm(60); /* a map that cannot grow spins: fail by SIGALRM instead of hanging the suite */
    test_idmap();
    test_fuzz();
    test_numbers();
    test_strings_objects();
    test_malformed();
    RN_CHECK_DONE();
}
