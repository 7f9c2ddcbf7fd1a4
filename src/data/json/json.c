#include "data/json/json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "core/hash.h"
#include "io/file.h"

enum { MAX_DEPTH = 512, CHUNK = 32 << 20, HASH_MIN = 16 };

static inline size_t strhash(const char *s, size_t n)
{
    uint64_t h = rn_fnv1a64(RN_FNV_OFFSET, s, n);
    return (size_t)(h ^ (h >> 32));
}

/* Arena chunks are anonymous mappings with transparent huge pages: page
 * faults, not parsing, dominate a naive DOM on a 200 MB file. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap, map_len;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct parser {
    const char *name;
    const char *p, *end, *start;
    chunk *chunks;
    rn_jnode **stack; /* children of the open containers */
    size_t sp, scap;
    rn_err *err;
    int failed;
} parser;

static void *arena(parser *ps, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    chunk *c = ps->chunks;
    if (!c || c->used + n > c->cap) {
        size_t len = (n + sizeof *c > CHUNK ? n + sizeof *c + 4095 : CHUNK) & ~(size_t)4095;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "rootnet: out of memory mapping %zu bytes at %s:%d\n", len, __FILE__, __LINE__);
            abort();
        }
        madvise(m, len, MADV_HUGEPAGE);
        c = m;
        c->next = ps->chunks;
        c->used = 0;
        c->map_len = len;
        c->cap = len - sizeof *c;
        ps->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

static void fail(parser *ps, const char *at, const char *what)
{
    if (ps->failed) return;
    ps->failed = 1;
    int line = 1;
    const char *ls = ps->start;
    for (const char *q = ps->start; q < at && q < ps->end; q++)
        if (*q == '\n') line++, ls = q + 1;
    rn_err_set(ps->err, "%s:%d:%d: malformed JSON: %s", ps->name, line, (int)(at - ls) + 1, what);
}

static void skip_ws(parser *ps)
{
    const char *p = ps->p;
    while (p < ps->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    ps->p = p;
}

static void push(parser *ps, rn_jnode *v)
{
    if (ps->sp == ps->scap) {
        ps->scap = ps->scap ? ps->scap * 2 : 1024;
        rn_jnode **s = realloc(ps->stack, ps->scap * sizeof *s);
        RN_ASSERT(s);
        ps->stack = s;
    }
    ps->stack[ps->sp++] = v;
}

static rn_jnode *node(parser *ps, rn_jtype t)
{
    rn_jnode *v = arena(ps, sizeof *v);
    v->type = (uint32_t)t;
    v->n = 0;
    v->u.i = 0;
    return v;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static char *utf8(char *o, unsigned cp)
{
    if (cp < 0x80) *o++ = (char)cp;
    else if (cp < 0x800) *o++ = (char)(0xc0 | cp >> 6), *o++ = (char)(0x80 | (cp & 63));
    else if (cp < 0x10000)
        *o++ = (char)(0xe0 | cp >> 12), *o++ = (char)(0x80 | ((cp >> 6) & 63)), *o++ = (char)(0x80 | (cp & 63));
    else
        *o++ = (char)(0xf0 | cp >> 18), *o++ = (char)(0x80 | ((cp >> 12) & 63)),
        *o++ = (char)(0x80 | ((cp >> 6) & 63)), *o++ = (char)(0x80 | (cp & 63));
    return o;
}

/* One escape at *pp (after the backslash), written at *oo. */
static int unescape(parser *ps, const char **pp, char **oo)
{
    const char *p = *pp;
    char *o = *oo;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = p < ps->end && *p ? strchr(from, *p) : NULL;
    if (k) {
        *o++ = to[k - from];
        p++;
    } else if (p < ps->end && *p == 'u' && ps->end - p >= 5) {
        unsigned cp, lo;
        if (hex4(p + 1, &cp)) return fail(ps, p, "bad \\u escape"), -1;
        p += 5;
        if (cp >= 0xd800 && cp < 0xdc00 && ps->end - p >= 6 && p[0] == '\\' && p[1] == 'u' && !hex4(p + 2, &lo) &&
            lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p += 6;
        }
        o = utf8(o, cp);
    } else
        return fail(ps, p, "bad escape"), -1;
    *pp = p;
    *oo = o;
    return 0;
}

/* Strings are copied (unescaped, NUL-terminated) into the arena; an escape
 * never produces more bytes than it spans. */
static rn_jnode *parse_string(parser *ps)
{
    const char *s = ps->p + 1, *p = s;
    while (p < ps->end && *p != '"' && (unsigned char)*p >= 0x20) p += *p == '\\' && p + 1 < ps->end ? 2 : 1;
    if (p >= ps->end) return fail(ps, s - 1, "unterminated string"), NULL;
    if (*p != '"') return fail(ps, p, "control character in string"), NULL;
    char *out = arena(ps, (size_t)(p - s) + 1), *o = out;
    for (const char *q = s; q < p;) {
        const char *b = q;
        while (q < p && *q != '\\') q++;
        memcpy(o, b, (size_t)(q - b));
        o += q - b;
        if (q < p) {
            q++;
            if (unescape(ps, &q, &o)) return NULL;
        }
    }
    *o = '\0';
    ps->p = p + 1;
    rn_jnode *v = node(ps, RN_JSTR);
    v->u.s = out;
    v->n = (uint32_t)(o - out);
    return v;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Integers exactly; reals by the exact fast path (mantissa < 2^53, |exp| <= 22)
 * or strtod. */
static rn_jnode *parse_number(parser *ps)
{
    const char *p = ps->p, *s = p;
    int neg = *p == '-', digits = 0, frac = 0, real = 0;
    uint64_t m = 0;
    if (neg) p++;
    if (p >= ps->end || *p < '0' || *p > '9') return fail(ps, s, "bad number"), NULL;
    for (; p < ps->end && *p >= '0' && *p <= '9'; p++, digits++) m = m * 10 + (uint64_t)(*p - '0');
    if (p < ps->end && *p == '.') {
        real = 1;
        for (p++; p < ps->end && *p >= '0' && *p <= '9'; p++, frac++, digits++) m = m * 10 + (uint64_t)(*p - '0');
        if (frac == 0) return fail(ps, p, "bad number"), NULL;
    }
    int ex = 0, exneg = 0, exdig = 0;
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        real = 1;
        p++;
        if (p < ps->end && (*p == '+' || *p == '-')) exneg = *p++ == '-';
        for (; p < ps->end && *p >= '0' && *p <= '9'; p++, exdig++) ex = ex < 100000 ? ex * 10 + (*p - '0') : ex;
        if (exdig == 0) return fail(ps, p, "bad number"), NULL;
    }
    ps->p = p;
    if (!real && digits <= 18) {
        rn_jnode *v = node(ps, RN_JINT);
        v->u.i = neg ? -(int64_t)m : (int64_t)m;
        return v;
    }
    rn_jnode *v = node(ps, RN_JREAL);
    int e10 = (exneg ? -ex : ex) - frac;
    if (digits <= 15 && e10 >= -22 && e10 <= 22) {
        double d = (double)m;
        d = e10 < 0 ? d / POW10[-e10] : d * POW10[e10];
        v->u.d = neg ? -d : d;
    } else {
        char tmp[64], *end;
        size_t len = (size_t)(p - s);
        if (len >= sizeof tmp) return fail(ps, s, "number too long"), NULL;
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        v->u.d = strtod(tmp, &end);
    }
    return v;
}

static rn_jnode *parse_value(parser *ps, int depth);

/* Closes a container: copies its children from the stack into the arena. */
static rn_jnode *close_container(parser *ps, rn_jtype t, size_t base)
{
    size_t nk = ps->sp - base, n = t == RN_JOBJ ? nk / 2 : nk;
    size_t cap = 0;
    if (t == RN_JOBJ && n > HASH_MIN)
        for (cap = 32; cap < 2 * n; cap *= 2) {}
    rn_jnode **kids = arena(ps, nk * sizeof *kids + cap * sizeof(uint32_t));
    if (nk) memcpy(kids, ps->stack + base, nk * sizeof *kids); /* the stack is still NULL before the first value */
    rn_jnode *v = node(ps, t);
    v->n = (uint32_t)n;
    v->u.kids = kids;
    ps->sp = base;
    if (cap) {
        uint32_t *h = (uint32_t *)(kids + nk);
        memset(h, 0xff, cap * sizeof *h);
        for (size_t i = 0; i < n; i++) {
            const rn_jnode *k = kids[2 * i];
            size_t s = strhash(k->u.s, k->n) & (cap - 1);
            while (h[s] != UINT32_MAX && strcmp(kids[2 * h[s]]->u.s, k->u.s) != 0) s = (s + 1) & (cap - 1);
            h[s] = (uint32_t)i; /* a later duplicate replaces the earlier one */
        }
    }
    return v;
}

static rn_jnode *parse_container(parser *ps, int depth)
{
    int obj = *ps->p == '{';
    char close = obj ? '}' : ']';
    size_t base = ps->sp;
    if (depth > MAX_DEPTH) return fail(ps, ps->p, "nested too deeply"), NULL;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return close_container(ps, obj ? RN_JOBJ : RN_JARR, base);
    }
    for (;;) {
        skip_ws(ps);
        if (obj) {
            if (ps->p >= ps->end || *ps->p != '"') return fail(ps, ps->p, "expected a string key"), NULL;
            rn_jnode *k = parse_string(ps);
            if (!k) return NULL;
            push(ps, k);
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return fail(ps, ps->p, "expected ':'"), NULL;
            ps->p++;
        }
        rn_jnode *v = parse_value(ps, depth + 1);
        if (!v) return NULL;
        push(ps, v);
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return close_container(ps, obj ? RN_JOBJ : RN_JARR, base);
        }
        return fail(ps, ps->p, obj ? "expected ',' or '}'" : "expected ',' or ']'"), NULL;
    }
}

static int word(parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0) return 0;
    ps->p += n;
    return 1;
}

static rn_jnode *literal(parser *ps)
{
    rn_jnode *v = NULL;
    if (word(ps, "true")) v = node(ps, RN_JTRUE);
    else if (word(ps, "false")) v = node(ps, RN_JFALSE);
    else if (word(ps, "null")) v = node(ps, RN_JNULL);
    else if (word(ps, "NaN")) (v = node(ps, RN_JREAL))->u.d = NAN;
    else if (word(ps, "Infinity")) (v = node(ps, RN_JREAL))->u.d = INFINITY;
    else if (word(ps, "-Infinity")) (v = node(ps, RN_JREAL))->u.d = -INFINITY;
    else fail(ps, ps->p, "invalid token");
    return v;
}

static rn_jnode *parse_value(parser *ps, int depth)
{
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, ps->p, "unexpected end of input"), NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') return parse_container(ps, depth);
    if (c == '"') return parse_string(ps);
    if ((c == '-' && !(ps->p + 1 < ps->end && ps->p[1] == 'I')) || (c >= '0' && c <= '9')) return parse_number(ps);
    return literal(ps);
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *n = c->next;
        munmap(c, c->map_len);
        c = n;
    }
}

rn_jdoc *rn_jdoc_parse(const char *data, size_t len, const char *name, rn_err *err)
{
    parser ps = {.name = name, .p = data, .end = data + len, .start = data, .err = err};
    rn_jnode *root = parse_value(&ps, 0);
    skip_ws(&ps);
    if (root && ps.p != ps.end) fail(&ps, ps.p, "trailing characters after the JSON value");
    free(ps.stack);
    if (ps.failed || !root) {
        free_chunks(ps.chunks);
        return NULL;
    }
    rn_jdoc *d = rn_xmalloc(sizeof *d);
    d->root = root;
    d->chunks = ps.chunks;
    return d;
}

rn_jdoc *rn_jdoc_load(const char *path, rn_err *err)
{
    size_t len = 0;
    int fd = rn_file_open_read(path, SIZE_MAX, &len, err);
    if (fd < 0) return NULL;
    if (len == 0) {
        close(fd);
        rn_err_set(err, "%s: empty or unreadable file", path);
        return NULL;
    }
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        rn_err_set(err, "%s: mmap failed: %s", path, strerror(errno));
        return NULL;
    }
    madvise(m, len, MADV_SEQUENTIAL);
    rn_jdoc *d = rn_jdoc_parse(m, len, path, err);
    munmap(m, len);
    return d;
}

void rn_jdoc_free(rn_jdoc *d)
{
    if (!d) return;
    free_chunks(d->chunks);
    free(d);
}

size_t rn_jarray_size(const rn_jnode *v) { return rn_jis(v, RN_JARR) ? v->n : 0; }

const rn_jnode *rn_jarray_get(const rn_jnode *v, size_t i)
{
    return rn_jis(v, RN_JARR) && i < v->n ? v->u.kids[i] : NULL;
}

const rn_jnode *rn_jobject_get(const rn_jnode *v, const char *key)
{
    if (!rn_jis(v, RN_JOBJ)) return NULL;
    rn_jnode *const *kids = v->u.kids;
    if (v->n <= HASH_MIN) {
        const rn_jnode *hit = NULL;
        for (uint32_t i = 0; i < v->n; i++)
            if (strcmp(kids[2 * i]->u.s, key) == 0) hit = kids[2 * i + 1];
        return hit;
    }
    size_t cap = 32;
    while (cap < 2 * (size_t)v->n) cap *= 2;
    const uint32_t *h = (const uint32_t *)(kids + 2 * (size_t)v->n);
    for (size_t s = strhash(key, strlen(key)) & (cap - 1); h[s] != UINT32_MAX; s = (s + 1) & (cap - 1))
        if (strcmp(kids[2 * h[s]]->u.s, key) == 0) return kids[2 * h[s] + 1];
    return NULL;
}
