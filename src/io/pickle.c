/* A bounded pickle VM for torch checkpoints. Every read is range-checked;
 * stack, mark and memo sizes and the values alive are capped, and values are
 * freed when nothing holds them, so hostile input cannot exhaust memory. */
#include "io/pickle.h"

#include <string.h>

#define MAX_STACK (1u << 22)
#define MAX_MEMO (1u << 24)
/* A ResNet-50 checkpoint with its optimizer state holds about 3 * 10^4. */
#define MAX_LIVE (1u << 20)
#define MAX_POPS 4 /* values one opcode pops off the stack */

typedef struct run {
    rn_pickle *vm;
    const uint8_t *buf;
    size_t size, pos, op_pos;
    const char *path;
    rn_err *err;
    pk_val *popped[MAX_POPS]; /* released after the opcode */
    int n_popped;
} run;

static int fail(run *r, const char *what)
{
    return rn_err_set(r->err, "%s: pickle: %s (opcode at byte %zu)", r->path, what, r->op_pos);
}

void rn_pickle_init(rn_pickle *vm, rn_pickle_persistent_fn persistent, void *ctx)
{
    memset(vm, 0, sizeof *vm);
    vm->persistent = persistent;
    vm->ctx = ctx;
}

static void destroy(pk_val *v)
{
    free(v->items);
    free(v->t);
    free(v);
}

void rn_pickle_free(rn_pickle *vm)
{
    for (pk_val *v = vm->all, *next; v; v = next) {
        next = v->next;
        destroy(v);
    }
    free(vm->stack);
    free(vm->marks);
    free(vm->memo);
    free(vm->roots);
    free(vm->dead);
    rn_pickle_init(vm, vm->persistent, vm->ctx);
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    RN_ASSERT(q);
    *cap = c;
    return q;
}

pk_val *pk_new(rn_pickle *vm, pk_kind kind)
{
    pk_val *v = rn_xcalloc(1, sizeof *v);
    v->kind = kind;
    v->next = vm->all;
    if (vm->all) vm->all->prev = v;
    vm->all = v;
    vm->n_live++;
    return v;
}

static pk_val *hold(pk_val *v)
{
    v->refs++;
    return v;
}

/* Lets go of one slot's hold on v: frees v once nothing holds it, and then
 * whatever only v held (a work list, not recursion: nesting may be deep). */
static void release(rn_pickle *vm, pk_val *v)
{
    RN_ASSERT(v->refs > 0);
    if (--v->refs) return;
    size_t n = 0;
    vm->dead = grow(vm->dead, &vm->cap_dead, 1, sizeof *vm->dead);
    vm->dead[n++] = v;
    while (n) {
        pk_val *d = vm->dead[--n];
        for (size_t i = 0; i < d->n; i++)
            if (--d->items[i]->refs == 0) {
                vm->dead = grow(vm->dead, &vm->cap_dead, n + 1, sizeof *vm->dead);
                vm->dead[n++] = d->items[i];
            }
        if (d->prev) d->prev->next = d->next;
        else vm->all = d->next;
        if (d->next) d->next->prev = d->prev;
        vm->n_live--;
        destroy(d);
    }
}

int pk_str_eq(const pk_val *v, const char *s)
{
    return v && v->kind == PK_STR && v->len == strlen(s) && !memcmp(v->s, s, v->len);
}

static void pk_push_item(pk_val *c, pk_val *item)
{
    c->items = grow(c->items, &c->cap, c->n + 1, sizeof *c->items);
    c->items[c->n++] = hold(item);
}

/* ---- reading the byte stream ---- */

static int need(run *r, size_t n)
{
    if (n > r->size - r->pos) return fail(r, "truncated");
    return 0;
}

static uint64_t rd_le(run *r, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | r->buf[r->pos + (size_t)i];
    r->pos += (size_t)n;
    return v;
}

/* ---- the stack ---- */

static int push(run *r, pk_val *v)
{
    rn_pickle *vm = r->vm;
    if (vm->sp >= MAX_STACK) return fail(r, "stack too deep");
    vm->stack = grow(vm->stack, &vm->cap_stack, vm->sp + 1, sizeof *vm->stack);
    vm->stack[vm->sp++] = hold(v);
    return 0;
}

/* Drops the stack down to `first` items, releasing the rest. */
static void drop_to(rn_pickle *vm, size_t first)
{
    while (vm->sp > first) release(vm, vm->stack[--vm->sp]);
}

static size_t floor_sp(const rn_pickle *vm)
{
    return vm->n_marks ? vm->marks[vm->n_marks - 1] : 0;
}

/* The top value, off the stack; the stack's hold is released after the opcode. */
static int pop(run *r, pk_val **out)
{
    if (r->vm->sp <= floor_sp(r->vm)) return fail(r, "stack underflow");
    RN_ASSERT(r->n_popped < MAX_POPS);
    *out = r->popped[r->n_popped++] = r->vm->stack[--r->vm->sp];
    return 0;
}

static int top(run *r, pk_val **out)
{
    if (r->vm->sp <= floor_sp(r->vm)) return fail(r, "stack underflow");
    *out = r->vm->stack[r->vm->sp - 1];
    return 0;
}

/* Items above the last mark: *first is their index in the stack, the mark is popped. */
static int pop_mark(run *r, size_t *first)
{
    rn_pickle *vm = r->vm;
    if (!vm->n_marks) return fail(r, "no MARK on the stack");
    *first = vm->marks[--vm->n_marks];
    return 0;
}

static int push_new(run *r, pk_kind kind, pk_val **out)
{
    *out = pk_new(r->vm, kind);
    return push(r, *out);
}

/* ---- opcodes ---- */

static int op_int(run *r, int nbytes, int is_signed)
{
    if (need(r, (size_t)nbytes)) return -1;
    uint64_t u = rd_le(r, nbytes);
    pk_val *v = NULL;
    if (push_new(r, PK_INT, &v)) return -1;
    v->i = is_signed ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
    return 0;
}

static int op_long(run *r, int lenbytes)
{
    if (need(r, (size_t)lenbytes)) return -1;
    uint64_t n = rd_le(r, lenbytes);
    if (need(r, n)) return -1;
    pk_val *v = NULL;
    if (push_new(r, PK_INT, &v)) return -1;
    if (n > 8) { /* kept as raw little-endian bytes */
        v->kind = PK_BIGINT;
        v->s = (const char *)r->buf + r->pos;
        v->len = n;
        r->pos += n;
        return 0;
    }
    uint64_t u = n ? rd_le(r, (int)n) : 0;
    if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~0ull << (8 * n); /* sign-extend */
    v->i = (int64_t)u;
    return 0;
}

static int op_float(run *r)
{
    if (need(r, 8)) return -1;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u = u << 8 | r->buf[r->pos + (size_t)i];
    r->pos += 8;
    pk_val *v = NULL;
    if (push_new(r, PK_FLOAT, &v)) return -1;
    memcpy(&v->f, &u, 8);
    return 0;
}

static int op_bytes(run *r, int lenbytes, pk_kind kind)
{
    if (need(r, (size_t)lenbytes)) return -1;
    uint64_t n = rd_le(r, lenbytes);
    if (need(r, n)) return -1;
    pk_val *v = NULL;
    if (push_new(r, kind, &v)) return -1;
    v->s = (const char *)r->buf + r->pos;
    v->len = n;
    r->pos += n;
    return 0;
}

static int read_line(run *r, const char **s, size_t *len)
{
    const uint8_t *start = r->buf + r->pos, *nl = memchr(start, '\n', r->size - r->pos);
    if (!nl) return fail(r, "unterminated line");
    *s = (const char *)start;
    *len = (size_t)(nl - start);
    r->pos += *len + 1;
    return 0;
}

static int op_global(run *r)
{
    pk_val *v = pk_new(r->vm, PK_GLOBAL);
    if (read_line(r, &v->s, &v->len) || read_line(r, &v->s2, &v->len2)) return -1;
    return push(r, v);
}

static int op_stack_global(run *r)
{
    pk_val *mod = NULL, *name = NULL;
    if (pop(r, &name) || pop(r, &mod)) return -1;
    if (mod->kind != PK_STR || name->kind != PK_STR) return fail(r, "STACK_GLOBAL needs two strings");
    pk_val *v = pk_new(r->vm, PK_GLOBAL);
    v->s = mod->s, v->len = mod->len, v->s2 = name->s, v->len2 = name->len;
    return push(r, v);
}

static int op_collect(run *r, pk_kind kind)
{
    size_t first = 0;
    if (pop_mark(r, &first)) return -1;
    rn_pickle *vm = r->vm;
    pk_val *v = pk_new(vm, kind);
    if (kind == PK_DICT && (vm->sp - first) % 2) return fail(r, "odd number of items for DICT");
    for (size_t i = first; i < vm->sp; i++) pk_push_item(v, vm->stack[i]);
    drop_to(vm, first);
    return push(r, v);
}

static int op_tuple_n(run *r, size_t n)
{
    if (r->vm->sp < floor_sp(r->vm) + n) return fail(r, "stack underflow");
    pk_val *v = pk_new(r->vm, PK_TUPLE);
    for (size_t i = r->vm->sp - n; i < r->vm->sp; i++) pk_push_item(v, r->vm->stack[i]);
    drop_to(r->vm, r->vm->sp - n);
    return push(r, v);
}

static int keys_equal(const pk_val *a, const pk_val *b)
{
    if (a == b) return 1;
    if (a->kind != b->kind) return 0;
    if (a->kind == PK_INT || a->kind == PK_BOOL) return a->i == b->i;
    if (a->kind == PK_STR || a->kind == PK_BYTES) return a->len == b->len && !memcmp(a->s, b->s, a->len);
    return 0;
}

static void dict_set(rn_pickle *vm, pk_val *d, pk_val *k, pk_val *v)
{
    for (size_t i = 0; i < d->n; i += 2)
        if (keys_equal(d->items[i], k)) {
            pk_val *old = d->items[i + 1];
            d->items[i + 1] = hold(v);
            release(vm, old);
            return;
        }
    pk_push_item(d, k);
    pk_push_item(d, v);
}

static int op_setitems(run *r, int many)
{
    rn_pickle *vm = r->vm;
    size_t first = vm->sp >= 2 ? vm->sp - 2 : 0;
    if (many && pop_mark(r, &first)) return -1;
    if (first == 0 || first < floor_sp(vm) + 1 || (vm->sp - first) % 2) return fail(r, "bad SETITEM(S) stack");
    pk_val *d = vm->stack[first - 1];
    if (d->kind == PK_DICT)
        for (size_t i = first; i < vm->sp; i += 2) dict_set(vm, d, vm->stack[i], vm->stack[i + 1]);
    else if (d->kind != PK_OBJ)
        return fail(r, "SETITEM on something that is not a dict");
    drop_to(vm, first);
    return 0;
}

static int op_appends(run *r, int many)
{
    rn_pickle *vm = r->vm;
    size_t first = vm->sp >= 1 ? vm->sp - 1 : 0;
    if (many && pop_mark(r, &first)) return -1;
    if (first == 0 || first < floor_sp(vm) + 1) return fail(r, "bad APPEND(S) stack");
    pk_val *l = vm->stack[first - 1];
    if (l->kind == PK_LIST)
        for (size_t i = first; i < vm->sp; i++) pk_push_item(l, vm->stack[i]);
    else if (l->kind != PK_OBJ)
        return fail(r, "APPEND on something that is not a list");
    drop_to(vm, first);
    return 0;
}

static int op_memo_put(run *r, uint64_t idx)
{
    rn_pickle *vm = r->vm;
    pk_val *v = NULL;
    if (idx >= MAX_MEMO || idx > r->size) return fail(r, "memo index too large");
    if (top(r, &v)) return -1;
    size_t old_cap = vm->cap_memo;
    vm->memo = grow(vm->memo, &vm->cap_memo, (size_t)idx + 1, sizeof *vm->memo);
    if (vm->cap_memo > old_cap) memset(vm->memo + old_cap, 0, (vm->cap_memo - old_cap) * sizeof *vm->memo);
    pk_val *old = vm->memo[idx];
    vm->memo[idx] = hold(v);
    if (old) release(vm, old);
    else vm->n_memo++;
    return 0;
}

static int op_memo_get(run *r, uint64_t idx)
{
    if (idx >= r->vm->cap_memo || !r->vm->memo[idx]) return fail(r, "memo entry missing");
    return push(r, r->vm->memo[idx]);
}

static int op_persid(run *r)
{
    pk_val *pid = NULL;
    if (pop(r, &pid)) return -1;
    if (!r->vm->persistent) return fail(r, "unexpected persistent id");
    pk_val *v = pk_new(r->vm, PK_NONE);
    if (r->vm->persistent(r->vm->ctx, pid, v, r->err)) return rn_err_prefix(r->err, "%s", r->path);
    return push(r, v);
}

static int global_is(const pk_val *g, const char *mod, const char *name)
{
    return g->kind == PK_GLOBAL && g->len == strlen(mod) && !memcmp(g->s, mod, g->len) &&
           g->len2 == strlen(name) && !memcmp(g->s2, name, g->len2);
}

static int int_tuple(const pk_val *v, int64_t *out, int *n)
{
    if (v->kind != PK_TUPLE || v->n > RN_TENSOR_MAXDIM) return -1;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != PK_INT) return -1;
        out[i] = v->items[i]->i;
    }
    *n = (int)v->n;
    return 0;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, ...) */
static int rebuild_tensor(run *r, const pk_val *args, pk_val **out)
{
    if (args->n < 4 || args->items[0]->kind != PK_STORAGE || args->items[1]->kind != PK_INT)
        return fail(r, "_rebuild_tensor: bad arguments");
    pk_tensor *t = rn_xcalloc(1, sizeof *t);
    pk_val *v = pk_new(r->vm, PK_TENSOR);
    v->t = t;
    int ns;
    t->storage = (int)args->items[0]->i;
    t->offset = args->items[1]->i;
    if (int_tuple(args->items[2], t->size, &t->ndim) || int_tuple(args->items[3], t->stride, &ns) || ns != t->ndim)
        return fail(r, "_rebuild_tensor: size/stride must be int tuples of equal length (at most 8)");
    *out = v;
    return 0;
}

/* OrderedDict(items) / dict(items): Python 2 pickles pass [[k, v], ...]. */
static int new_dict(run *r, const pk_val *args, pk_val **out)
{
    pk_val *d = pk_new(r->vm, PK_DICT);
    const pk_val *items = args->n == 1 ? args->items[0] : NULL;
    if (items && items->kind == PK_DICT)
        for (size_t i = 0; i + 1 < items->n; i += 2) dict_set(r->vm, d, items->items[i], items->items[i + 1]);
    if (items && (items->kind == PK_LIST || items->kind == PK_TUPLE))
        for (size_t i = 0; i < items->n; i++) {
            const pk_val *kv = items->items[i];
            if ((kv->kind != PK_LIST && kv->kind != PK_TUPLE) || kv->n != 2) return fail(r, "OrderedDict: item is not a pair");
            dict_set(r->vm, d, kv->items[0], kv->items[1]);
        }
    *out = d;
    return 0;
}

/* fn(*args) for the few callables understood; anything else is an opaque object. */
static int call(run *r, pk_val *fn, pk_val *args, int depth, pk_val **out)
{
    if (args->kind != PK_TUPLE) return fail(r, "call arguments are not a tuple");
    if (global_is(fn, "collections", "OrderedDict") || global_is(fn, "builtins", "dict"))
        return new_dict(r, args, out);
    if (global_is(fn, "collections", "defaultdict")) {
        *out = pk_new(r->vm, PK_DICT);
        return 0;
    }
    if (global_is(fn, "torch._utils", "_rebuild_tensor_v2") || global_is(fn, "torch._utils", "_rebuild_tensor"))
        return rebuild_tensor(r, args, out);
    if (global_is(fn, "torch._utils", "_rebuild_parameter") ||
        global_is(fn, "torch._utils", "_rebuild_parameter_with_state")) {
        if (args->n < 1 || args->items[0]->kind != PK_TENSOR) return fail(r, "_rebuild_parameter: bad arguments");
        *out = args->items[0];
        return 0;
    }
    if (global_is(fn, "torch._tensor", "_rebuild_from_type_v2") && depth == 0) {
        if (args->n < 3) return fail(r, "_rebuild_from_type_v2: bad arguments");
        return call(r, args->items[0], args->items[2], 1, out); /* the subclass itself is dropped */
    }
    pk_val *v = pk_new(r->vm, PK_OBJ);
    pk_push_item(v, fn);
    pk_push_item(v, args);
    *out = v;
    return 0;
}

static int op_reduce(run *r)
{
    pk_val *fn = NULL, *args = NULL, *v = NULL;
    if (pop(r, &args) || pop(r, &fn)) return -1;
    return call(r, fn, args, 0, &v) || push(r, v);
}

static int op_newobj(run *r)
{
    pk_val *cls = NULL, *args = NULL;
    if (pop(r, &args) || pop(r, &cls)) return -1;
    if (global_is(cls, "collections", "OrderedDict")) return push_new(r, PK_DICT, &args);
    pk_val *v = pk_new(r->vm, PK_OBJ);
    pk_push_item(v, cls);
    pk_push_item(v, args);
    return push(r, v);
}

static int op_newobj_ex(run *r)
{
    pk_val *kw = NULL;
    if (pop(r, &kw)) return -1;
    return op_newobj(r);
}

static int op_build(run *r)
{
    pk_val *state = NULL, *obj = NULL;
    return pop(r, &state) || top(r, &obj); /* state (attributes) ignored */
}

static int op_mark(run *r)
{
    rn_pickle *vm = r->vm;
    if (vm->n_marks >= MAX_STACK) return fail(r, "too many MARKs");
    vm->marks = grow(vm->marks, &vm->cap_marks, vm->n_marks + 1, sizeof *vm->marks);
    vm->marks[vm->n_marks++] = vm->sp;
    return 0;
}

static int op_pop_mark(run *r)
{
    size_t first = 0;
    if (pop_mark(r, &first)) return -1;
    drop_to(r->vm, first);
    return 0;
}

static int op_arg(run *r, int n, uint64_t *out)
{
    if (need(r, (size_t)n)) return -1;
    *out = rd_le(r, n);
    return 0;
}

static int op(run *r, int *stop);

/* One opcode, then the values it popped are let go; *stop set at STOP. */
static int step(run *r, int *stop)
{
    r->n_popped = 0;
    int rc = op(r, stop);
    while (r->n_popped) release(r->vm, r->popped[--r->n_popped]);
    if (!rc && r->vm->n_live > MAX_LIVE) return fail(r, "more than 1048576 values alive");
    return rc;
}

static int op(run *r, int *stop)
{
    pk_val *v = NULL;
    uint64_t a = 0;
    if (need(r, 1)) return -1;
    r->op_pos = r->pos;
    uint8_t op = r->buf[r->pos++];
    switch (op) {
    case 0x80: return op_arg(r, 1, &a) || (a > 5 ? fail(r, "unsupported protocol") : 0);
    case 0x95: return op_arg(r, 8, &a);                        /* FRAME */
    case '.': *stop = 1; return 0;                             /* STOP */
    case '(': return op_mark(r);
    case '0': return pop(r, &v);                               /* POP */
    case '1': return op_pop_mark(r);
    case '2': return top(r, &v) || push(r, v);                 /* DUP */
    case '}': return push_new(r, PK_DICT, &v);
    case ']': return push_new(r, PK_LIST, &v);
    case ')': return push_new(r, PK_TUPLE, &v);
    case 0x8f: return push_new(r, PK_LIST, &v);                /* EMPTY_SET */
    case 0x90: return op_appends(r, 1);                        /* ADDITEMS */
    case 0x91: return op_collect(r, PK_TUPLE);                 /* FROZENSET */
    case 't': return op_collect(r, PK_TUPLE);
    case 'l': return op_collect(r, PK_LIST);
    case 'd': return op_collect(r, PK_DICT);
    case 0x85: return op_tuple_n(r, 1);
    case 0x86: return op_tuple_n(r, 2);
    case 0x87: return op_tuple_n(r, 3);
    case 'J': return op_int(r, 4, 1);                          /* BININT */
    case 'K': return op_int(r, 1, 0);                          /* BININT1 */
    case 'M': return op_int(r, 2, 0);                          /* BININT2 */
    case 0x8a: return op_long(r, 1);                           /* LONG1 */
    case 0x8b: return op_long(r, 4);                           /* LONG4 */
    case 'G': return op_float(r);                              /* BINFLOAT */
    case 'N': return push_new(r, PK_NONE, &v);
    case 0x88: return push_new(r, PK_BOOL, &v) || (v->i = 1, 0);
    case 0x89: return push_new(r, PK_BOOL, &v);
    case 0x8c: return op_bytes(r, 1, PK_STR);                  /* SHORT_BINUNICODE */
    case 'X': return op_bytes(r, 4, PK_STR);                   /* BINUNICODE */
    case 0x8d: return op_bytes(r, 8, PK_STR);                  /* BINUNICODE8 */
    case 'U': return op_bytes(r, 1, PK_STR);                   /* SHORT_BINSTRING */
    case 'T': return op_bytes(r, 4, PK_STR);                   /* BINSTRING */
    case 'C': return op_bytes(r, 1, PK_BYTES);                 /* SHORT_BINBYTES */
    case 'B': return op_bytes(r, 4, PK_BYTES);                 /* BINBYTES */
    case 0x8e: return op_bytes(r, 8, PK_BYTES);                /* BINBYTES8 */
    case 'c': return op_global(r);
    case 0x93: return op_stack_global(r);
    case 'R': return op_reduce(r);
    case 'b': return op_build(r);
    case 0x81: return op_newobj(r);
    case 0x92: return op_newobj_ex(r);
    case 'q': return op_arg(r, 1, &a) || op_memo_put(r, a);    /* BINPUT */
    case 'r': return op_arg(r, 4, &a) || op_memo_put(r, a);    /* LONG_BINPUT */
    case 0x94: return op_memo_put(r, r->vm->n_memo);            /* MEMOIZE */
    case 'h': return op_arg(r, 1, &a) || op_memo_get(r, a);    /* BINGET */
    case 'j': return op_arg(r, 4, &a) || op_memo_get(r, a);    /* LONG_BINGET */
    case 'a': return op_appends(r, 0);
    case 'e': return op_appends(r, 1);
    case 's': return op_setitems(r, 0);
    case 'u': return op_setitems(r, 1);
    case 'Q': return op_persid(r);                             /* BINPERSID */
    default: {
        char msg[64];
        snprintf(msg, sizeof msg, "unsupported opcode 0x%02x", op);
        return fail(r, msg);
    }
    }
}

/* Empties the stack, marks and memo (a failed run may leave them full). */
static void reset(rn_pickle *vm)
{
    drop_to(vm, 0);
    vm->n_marks = 0;
    for (size_t i = 0; i < vm->cap_memo; i++)
        if (vm->memo[i]) release(vm, vm->memo[i]), vm->memo[i] = NULL;
    vm->n_memo = 0;
}

int rn_pickle_run(rn_pickle *vm, const uint8_t *buf, size_t size, size_t *used, pk_val **root,
                  const char *path, rn_err *err)
{
    run r = {.vm = vm, .buf = buf, .size = size, .path = path, .err = err};
    reset(vm);
    int stop = 0;
    while (!stop)
        if (step(&r, &stop)) return -1;
    if (vm->sp != 1 || vm->n_marks) return fail(&r, "STOP with a stack that does not hold exactly one value");
    vm->roots = grow(vm->roots, &vm->cap_roots, vm->n_roots + 1, sizeof *vm->roots);
    *root = vm->roots[vm->n_roots++] = vm->stack[0]; /* the stack's hold moves to roots */
    vm->sp = 0;
    reset(vm);
    *used = r.pos;
    return 0;
}
