/* rn_json: a read-only JSON DOM for large annotation files. The file is
 * mmap'd (read-only, populated) and parsed in one pass; nodes (16 bytes),
 * unescaped NUL-terminated strings, child arrays and object hash indexes live
 * in a chunked huge-page arena: no per-value malloc. Numbers keep integer/real distinction. NaN, Infinity and -Infinity
 * (which Python's json.dump writes) are accepted as reals so the readers can
 * name the field that holds them.
 *
 *   rn_err err;
 *   rn_jdoc *d = rn_jdoc_load("a.json", &err);        // NULL: "a.json:3:14: problem"
 *   const rn_jnode *v = rn_jobject_get(d->root, "images");
 *   for (size_t i = 0; i < rn_jarray_size(v); i++) ... rn_jarray_get(v, i)
 *   rn_jdoc_free(d);
 */
#ifndef RN_DATA_JSON_H
#define RN_DATA_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef enum { RN_JNULL, RN_JFALSE, RN_JTRUE, RN_JINT, RN_JREAL, RN_JSTR, RN_JARR, RN_JOBJ } rn_jtype;

typedef struct rn_jnode {
    uint32_t type; /* rn_jtype */
    uint32_t n;    /* array: elements; object: members; string: bytes */
    union {
        double d;
        int64_t i;
        const char *s;              /* NUL-terminated */
        struct rn_jnode *const *kids; /* array: n nodes; object: n (key, value) pairs, then its hash index */
    } u;
} rn_jnode;

typedef struct rn_jdoc {
    const rn_jnode *root;
    void *chunks; /* arena */
} rn_jdoc;

/* Parses a file; NULL with "path:line:column: problem" in err. */
rn_jdoc *rn_jdoc_load(const char *path, rn_err *err);
/* Parses len bytes (not modified, not kept); name is used in messages. */
rn_jdoc *rn_jdoc_parse(const char *data, size_t len, const char *name, rn_err *err);
void rn_jdoc_free(rn_jdoc *d);

/* Accessors; all accept NULL and return NULL / 0 for a wrong type. */
size_t rn_jarray_size(const rn_jnode *v);
const rn_jnode *rn_jarray_get(const rn_jnode *v, size_t i);
/* Member of an object by key (hash index for large objects; a later
 * duplicate key wins, as in Python). */
const rn_jnode *rn_jobject_get(const rn_jnode *v, const char *key);
static inline int rn_jis(const rn_jnode *v, rn_jtype t) { return v && v->type == (uint32_t)t; }
static inline int rn_jis_array(const rn_jnode *v) { return rn_jis(v, RN_JARR); }
static inline int rn_jis_object(const rn_jnode *v) { return rn_jis(v, RN_JOBJ); }
static inline int rn_jis_integer(const rn_jnode *v) { return rn_jis(v, RN_JINT); }
static inline int rn_jis_real(const rn_jnode *v) { return rn_jis(v, RN_JREAL); }
static inline int rn_jis_string(const rn_jnode *v) { return rn_jis(v, RN_JSTR); }
static inline int rn_jis_true(const rn_jnode *v) { return rn_jis(v, RN_JTRUE); }
static inline int rn_jis_boolean(const rn_jnode *v) { return rn_jis(v, RN_JTRUE) || rn_jis(v, RN_JFALSE); }
/* Values of a node known to be of that type. */
static inline int64_t rn_jint(const rn_jnode *v) { return v->u.i; }
static inline double rn_jreal(const rn_jnode *v) { return v->u.d; }
static inline const char *rn_jstr(const rn_jnode *v) { return v->u.s; }

#endif
