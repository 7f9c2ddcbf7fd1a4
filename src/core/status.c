#include "core/status.h"

#include <stdarg.h>
#include <string.h>

/* Keeps a message on one line: control characters (often quoted from a corrupt
 * input: a name, a flag value, a header) become '?'. */
static void one_line(char *msg)
{
    for (unsigned char *p = (unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f) *p = '?';
}

int rn_err_set(rn_err *err, const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err->msg);
    return -1;
}

int rn_err_prefix(rn_err *err, const char *fmt, ...)
{
    if (!err) return -1;
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    if (snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old) < 0) err->msg[0] = 0;
    one_line(err->msg);
    return -1;
}

void *rn_xmalloc_at(size_t n, const char *file, int line)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "rootnet: out of memory allocating %zu bytes at %s:%d\n", n, file, line);
        abort();
    }
    return p;
}

void *rn_xrealloc_at(void *p, size_t n, const char *file, int line)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "rootnet: out of memory allocating %zu bytes at %s:%d\n", n, file, line);
        abort();
    }
    return q;
}

char *rn_xstrdup_at(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *d = rn_xmalloc_at(n, file, line);
    memcpy(d, s, n);
    return d;
}

void *rn_xcalloc_at(size_t n, size_t sz, const char *file, int line)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "rootnet: out of memory allocating %zu x %zu bytes at %s:%d\n", n, sz, file, line);
        abort();
    }
    return p;
}
