/* rn_pickle: a small pickle virtual machine for what torch.save emits
 * (protocols 2-5). It never executes anything: globals become named values,
 * REDUCE of a known torch/collections global is interpreted, any other call
 * becomes an opaque object. Persistent ids are handed to a callback. Values
 * are reference counted (stack, memo and container slots each hold one), so
 * a value is freed once nothing holds it and memory follows the live data;
 * values left in cycles wait for rn_pickle_free, and at most 2^20 values may
 * be alive at once.
 *
 *   rn_pickle vm;
 *   rn_pickle_init(&vm, my_persistent_load, ctx);
 *   pk_val *root;
 *   size_t used;
 *   if (rn_pickle_run(&vm, buf, size, &used, &root, path, &err)) ...
 *   ... walk root ...
 *   rn_pickle_free(&vm);   // frees every value the VM made
 */
#ifndef RN_IO_PICKLE_H
#define RN_IO_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "io/tensors.h"

typedef enum pk_kind {
    PK_NONE, PK_BOOL, PK_INT, PK_BIGINT, PK_FLOAT, PK_STR, PK_BYTES,
    PK_TUPLE, PK_LIST, PK_DICT, PK_GLOBAL, PK_OBJ, PK_STORAGE, PK_TENSOR
} pk_kind;

typedef struct pk_tensor {
    int storage;        /* index given by the persistent-load callback */
    int64_t offset;     /* in elements */
    int ndim;
    int64_t size[RN_TENSOR_MAXDIM], stride[RN_TENSOR_MAXDIM];
} pk_tensor;

typedef struct pk_val pk_val;
struct pk_val {
    pk_kind kind;
    int64_t i;             /* BOOL, INT; STORAGE: callback's storage index */
    double f;              /* FLOAT */
    const char *s, *s2;    /* STR/BYTES/BIGINT(LE bytes): s; GLOBAL: module s, name s2 */
    size_t len, len2;
    pk_val **items;        /* TUPLE/LIST: items; DICT: key, value, key, value...;
                              OBJ: callable, args (state ignored) */
    size_t n, cap;
    pk_tensor *t;          /* TENSOR */
    size_t refs;           /* slots holding this value (private) */
    pk_val *prev, *next;   /* the VM's list of every value alive (private) */
};

/* Turns a persistent id (usually a tuple) into a value, normally PK_STORAGE. */
typedef int (*rn_pickle_persistent_fn)(void *ctx, const pk_val *pid, pk_val *out, rn_err *err);

typedef struct rn_pickle {
    rn_pickle_persistent_fn persistent;
    void *ctx;
    pk_val *all;               /* every value alive (linked), for freeing */
    size_t n_live;
    pk_val **roots;            /* each finished pickle's value, kept until rn_pickle_free */
    size_t n_roots, cap_roots;
    pk_val **dead;             /* work list of rn_pickle's release */
    size_t cap_dead;
    pk_val **stack;
    size_t sp, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    pk_val **memo;
    size_t cap_memo, n_memo;   /* n_memo: entries set, the next MEMOIZE index */
} rn_pickle;

/* Prepares an empty VM; persistent may be NULL (then persistent ids are errors). */
void rn_pickle_init(rn_pickle *vm, rn_pickle_persistent_fn persistent, void *ctx);
/* Runs one pickle from buf up to its STOP; *used = bytes consumed. The value
 * and what it holds stay valid (and may point into buf) until rn_pickle_free.
 * The stack and memo are reset first, so several pickles may be run in turn. */
int rn_pickle_run(rn_pickle *vm, const uint8_t *buf, size_t size, size_t *used, pk_val **root,
                  const char *path, rn_err *err);
/* Frees all values. */
void rn_pickle_free(rn_pickle *vm);
/* 1 when v is a PK_STR equal to s. */
int pk_str_eq(const pk_val *v, const char *s);
/* New value owned by the VM (for persistent-load callbacks); freed when the
 * last slot holding it lets go, or by rn_pickle_free. */
pk_val *pk_new(rn_pickle *vm, pk_kind kind);

#endif
