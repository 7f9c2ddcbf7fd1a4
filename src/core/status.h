/* rn status: library functions report errors through an rn_err and a return code.
 *
 *   rn_err err = {0};
 *   if (rn_npy_read(&arr, "x.npy", &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
 *
 * Library code never exits; only the CLI does. RN_ASSERT guards invariants
 * (always on, also in release builds) and aborts with file:line.
 */
#ifndef RN_CORE_STATUS_H
#define RN_CORE_STATUS_H

#include <stdio.h>
#include <stdlib.h>

typedef struct rn_err {
    char msg[1024]; /* one line, no trailing newline */
} rn_err;

/* Formats a message into err (if err is not NULL) and returns -1, so that
 * `return rn_err_set(err, "%s: bad header", path);` reads naturally. Control
 * characters (a newline quoted from a corrupt input) become '?': one line. */
int rn_err_set(rn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes an existing message: "ctx: old message". Returns -1. */
int rn_err_prefix(rn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define RN_ASSERT(cond)                                                              \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "rootnet: internal error at %s:%d: assertion '%s' failed\n", \
                    __FILE__, __LINE__, #cond);                                      \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* Allocation that aborts with file:line on failure (out of memory is not a
 * recoverable input error). */
void *rn_xmalloc_at(size_t n, const char *file, int line);
void *rn_xcalloc_at(size_t n, size_t sz, const char *file, int line);
char *rn_xstrdup_at(const char *s, const char *file, int line);
void *rn_xrealloc_at(void *p, size_t n, const char *file, int line);
#define rn_xmalloc(n) rn_xmalloc_at((n), __FILE__, __LINE__)
#define rn_xcalloc(n, sz) rn_xcalloc_at((n), (sz), __FILE__, __LINE__)
#define rn_xstrdup(s) rn_xstrdup_at((s), __FILE__, __LINE__)
#define rn_xrealloc(p, n) rn_xrealloc_at((p), (n), __FILE__, __LINE__)

#endif
