#include "cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/exit.h"

static rn_flag *find_name(rn_flag *flags, const char *name, size_t len)
{
    for (rn_flag *f = flags; f->name; f++)
        if (strlen(f->name) == len && strncmp(f->name, name, len) == 0) return f;
    return NULL;
}

/* The flag that name[0..len) stands for, following an alias to its target. */
static rn_flag *find_flag(rn_flag *flags, const char *name, size_t len)
{
    rn_flag *f = find_name(flags, name, len);
    if (!f || f->kind != RN_ARG_ALIAS) return f;
    rn_flag *t = find_name(flags, f->target, strlen(f->target));
    RN_ASSERT(t && t->kind != RN_ARG_ALIAS); /* an alias names a real flag of its table */
    return t;
}

static int range_error(const rn_flag *f, const char *as, const char *v, rn_err *err)
{
    rn_err_set(err, "%s %s: out of range, must be ", as, v);
    size_t n = strlen(err->msg);
    if (f->hi == LONG_MAX) snprintf(err->msg + n, sizeof err->msg - n, ">= %ld", f->lo);
    else snprintf(err->msg + n, sizeof err->msg - n, "%ld..%ld", f->lo, f->hi);
    return RN_ARGS_RANGE;
}

/* Stores v into f (reached as the spelling `as`). Returns 0 or an RN_ARGS_ code. */
static int set_value(rn_flag *f, const char *as, const char *v, rn_err *err)
{
    char *end = NULL;
    errno = 0;
    f->raw = v;
    switch (f->kind) {
    case RN_ARG_STR: *(const char **)f->dst = v; return 0;
    case RN_ARG_I64: {
        long x = strtol(v, &end, 10);
        if (end == v || *end || (errno && errno != ERANGE)) {
            rn_err_set(err, "%s: '%s' is not an integer", as, v);
            return RN_ARGS_MISUSE;
        }
        if (errno == ERANGE || x < f->lo || x > f->hi) return range_error(f, as, v, err);
        *(long *)f->dst = x;
        return 0;
    }
    case RN_ARG_F64: {
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x)) {
            rn_err_set(err, "%s: '%s' is not a finite number", as, v);
            return RN_ARGS_MISUSE;
        }
        *(double *)f->dst = x;
        return 0;
    }
    case RN_ARG_MULTI: {
        rn_multi *m = f->dst;
        if (m->n >= RN_ARGS_MULTI_MAX) {
            rn_err_set(err, "%s: given more than %d times", as, RN_ARGS_MULTI_MAX);
            return RN_ARGS_MISUSE;
        }
        m->v[m->n++] = v;
        return 0;
    }
    case RN_ARG_BOOL:
    case RN_ARG_ALIAS: break;
    }
    RN_ASSERT(!"flag kind without a value");
    return RN_ARGS_MISUSE;
}

int rn_args_parse(rn_flag *flags, int argc, char **argv, int first, rn_err *err)
{
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return RN_ARGS_HELP;
        if (strncmp(a, "--", 2) != 0) return rn_err_set(err, "unexpected argument '%s'", a), RN_ARGS_MISUSE;
        const char *eq = strchr(a, '=');
        int len = eq ? (int)(eq - a) : (int)strlen(a);
        rn_flag *f = find_flag(flags, a, (size_t)len);
        if (!f) return rn_err_set(err, "unknown flag '%.*s'", len, a), RN_ARGS_MISUSE;
        f->seen = 1;
        if (f->kind == RN_ARG_BOOL) {
            if (eq) return rn_err_set(err, "%.*s takes no value", len, a), RN_ARGS_MISUSE;
            *(int *)f->dst = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return rn_err_set(err, "%.*s needs a value", len, a), RN_ARGS_MISUSE;
        char as[128];
        snprintf(as, sizeof as, "%.*s", len, a);
        int rc = set_value(f, as, v, err);
        if (rc) return rc;
    }
    return 0;
}

void rn_args_usage(FILE *f, const char *cmd, const char *synopsis, const rn_flag *flags)
{
    fprintf(f, "usage: rootnet %s %s\n", cmd, synopsis ? synopsis : "");
    for (const rn_flag *g = flags; g->name; g++)
        if (g->kind != RN_ARG_ALIAS && !g->hidden) fprintf(f, "  %-22s %s\n", g->name, g->help ? g->help : "");
    fprintf(f, "  %-22s %s\n", "--help, -h", "show this help");
    int n = 0;
    for (const rn_flag *g = flags; g->name; g++)
        if (g->kind == RN_ARG_ALIAS) fprintf(f, "%s%s (= %s)", n++ ? ", " : "  aliases: ", g->name, g->target);
    if (n) fprintf(f, "\n");
}

int rn_args_seen(const rn_flag *flags, const char *name)
{
    for (const rn_flag *f = flags; f->name; f++)
        if (f->kind != RN_ARG_ALIAS && strcmp(f->name, name) == 0) return f->seen;
    return 0;
}

int rn_args_misuse(const rn_flag *flags, char **argv, const char *synopsis, const char *fmt, ...)
{
    fprintf(stderr, "rootnet %s: ", argv[1]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    rn_args_usage(stderr, argv[1], synopsis, flags);
    return RN_EXIT_USAGE;
}

int rn_args_handle(rn_flag *flags, int argc, char **argv, const char *synopsis)
{
    rn_err err = {{0}};
    int rc = rn_args_parse(flags, argc, argv, 2, &err);
    if (rc == 0) return -1;
    if (rc == RN_ARGS_HELP) {
        rn_args_usage(stdout, argv[1], synopsis, flags);
        return 0;
    }
    if (rc == RN_ARGS_RANGE) {
        return rn_cli_fail(argv[1], RN_EXIT_USAGE, &err);
    }
    return rn_args_misuse(flags, argv, synopsis, "%s", err.msg);
}
