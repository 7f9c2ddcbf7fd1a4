#include "io/pickle_write.h"

#include <string.h>

#include "core/status.h"

/* Opcodes (Python's pickletools names). */
enum {
    OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_LONG1 = 0x8a,
    OP_BINFLOAT = 'G', OP_NONE = 'N', OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_BINUNICODE = 'X',
    OP_EMPTY_DICT = '}', OP_SETITEMS = 'u', OP_EMPTY_LIST = ']', OP_APPENDS = 'e', OP_TUPLE = 't',
    OP_EMPTY_TUPLE = ')', OP_GLOBAL = 'c', OP_REDUCE = 'R', OP_BINPERSID = 'Q', OP_PROTO = 0x80,
};

static void put(rn_pkw *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n) cap *= 2;
        uint8_t *b = realloc(w->b, cap);
        RN_ASSERT(b);
        w->b = b, w->cap = cap;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void op(rn_pkw *w, uint8_t o) { put(w, &o, 1); }

static void put_le(rn_pkw *w, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(w, b, (size_t)n);
}

void rn_pkw_init(rn_pkw *w)
{
    memset(w, 0, sizeof *w);
    op(w, OP_PROTO);
    op(w, 2);
}

void rn_pkw_free(rn_pkw *w)
{
    free(w->b);
    memset(w, 0, sizeof *w);
}

void rn_pkw_begin(rn_pkw *w, rn_pkw_kind k)
{
    if (k == RN_PKW_DICT) op(w, OP_EMPTY_DICT);
    if (k == RN_PKW_LIST) op(w, OP_EMPTY_LIST);
    op(w, OP_MARK);
}

void rn_pkw_end(rn_pkw *w, rn_pkw_kind k)
{
    op(w, k == RN_PKW_DICT ? OP_SETITEMS : k == RN_PKW_LIST ? OP_APPENDS : OP_TUPLE);
}

void rn_pkw_int(rn_pkw *w, int64_t v)
{
    if (v >= 0 && v < 256) {
        op(w, OP_BININT1), put_le(w, (uint64_t)v, 1);
    } else if (v >= 0 && v < 65536) {
        op(w, OP_BININT2), put_le(w, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        op(w, OP_BININT), put_le(w, (uint64_t)v, 4);
    } else { /* LONG1: 8 bytes of two's complement, little-endian */
        op(w, OP_LONG1), op(w, 8), put_le(w, (uint64_t)v, 8);
    }
}

void rn_pkw_float(rn_pkw *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(bits >> (56 - 8 * i)); /* big-endian */
    op(w, OP_BINFLOAT);
    put(w, b, 8);
}

void rn_pkw_bool(rn_pkw *w, int v) { op(w, v ? OP_NEWTRUE : OP_NEWFALSE); }
void rn_pkw_none(rn_pkw *w) { op(w, OP_NONE); }

void rn_pkw_str(rn_pkw *w, const char *s)
{
    size_t n = strlen(s);
    RN_ASSERT(n < UINT32_MAX);
    op(w, OP_BINUNICODE);
    put_le(w, n, 4);
    put(w, s, n);
}

void rn_pkw_global(rn_pkw *w, const char *module, const char *name)
{
    RN_ASSERT(!strchr(module, '\n') && !strchr(name, '\n'));
    op(w, OP_GLOBAL);
    put(w, module, strlen(module)), op(w, '\n');
    put(w, name, strlen(name)), op(w, '\n');
}

void rn_pkw_reduce(rn_pkw *w) { op(w, OP_REDUCE); }
void rn_pkw_persid(rn_pkw *w) { op(w, OP_BINPERSID); }

void rn_pkw_ordered_dict(rn_pkw *w)
{
    rn_pkw_global(w, "collections", "OrderedDict");
    op(w, OP_EMPTY_TUPLE);
    op(w, OP_REDUCE);
}

void rn_pkw_mark(rn_pkw *w) { op(w, OP_MARK); }
void rn_pkw_setitems(rn_pkw *w) { op(w, OP_SETITEMS); }
void rn_pkw_stop(rn_pkw *w) { op(w, OP_STOP); }
