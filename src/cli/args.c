#include "cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static rn_flag *find_flag(rn_flag *flags, const char *name, size_t len)
{
    for (rn_flag *f = flags; f->name; f++)
        if (strlen(f->name) == len && strncmp(f->name, name, len) == 0) return f;
    return NULL;
}

static int set_value(rn_flag *f, const char *v, rn_err *err)
{
    char *end = NULL;
    errno = 0;
    switch (f->kind) {
    case RN_ARG_STR: *(const char **)f->dst = v; return 0;
    case RN_ARG_I64: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end) return rn_err_set(err, "%s: '%s' is not an integer", f->name, v);
        *(long *)f->dst = x;
        return 0;
    }
    case RN_ARG_F64: {
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x))
            return rn_err_set(err, "%s: '%s' is not a finite number", f->name, v);
        *(double *)f->dst = x;
        return 0;
    }
    case RN_ARG_MULTI: {
        rn_multi *m = f->dst;
        if (m->n >= RN_ARGS_MULTI_MAX) return rn_err_set(err, "%s: given more than %d times", f->name, RN_ARGS_MULTI_MAX);
        m->v[m->n++] = v;
        return 0;
    }
    case RN_ARG_BOOL: break;
    }
    return rn_err_set(err, "%s: internal flag kind error", f->name);
}

int rn_args_parse(rn_flag *flags, int argc, char **argv, int first, rn_err *err)
{
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (strncmp(a, "--", 2) != 0) return rn_err_set(err, "unexpected argument '%s'", a);
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        rn_flag *f = find_flag(flags, a, len);
        if (!f) return rn_err_set(err, "unknown flag '%.*s'", (int)len, a);
        f->seen = 1;
        if (f->kind == RN_ARG_BOOL) {
            if (eq) return rn_err_set(err, "%s takes no value", f->name);
            *(int *)f->dst = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return rn_err_set(err, "%s needs a value", f->name);
        if (set_value(f, v, err)) return -1;
    }
    return 0;
}

void rn_args_usage(FILE *f, const char *cmd, const char *synopsis, const rn_flag *flags)
{
    fprintf(f, "usage: rootnet %s %s\n", cmd, synopsis ? synopsis : "");
    for (const rn_flag *g = flags; g->name; g++) fprintf(f, "  %-22s %s\n", g->name, g->help ? g->help : "");
}

int rn_args_seen(const rn_flag *flags, const char *name)
{
    for (const rn_flag *f = flags; f->name; f++)
        if (strcmp(f->name, name) == 0) return f->seen;
    return 0;
}

int rn_args_handle(rn_flag *flags, int argc, char **argv, const char *synopsis)
{
    rn_err err = {{0}};
    int rc = rn_args_parse(flags, argc, argv, 2, &err);
    if (rc == 0) return -1;
    if (rc == 1) {
        rn_args_usage(stdout, argv[1], synopsis, flags);
        return 0;
    }
    fprintf(stderr, "rootnet %s: %s\n", argv[1], err.msg);
    rn_args_usage(stderr, argv[1], synopsis, flags);
    return 2;
}
