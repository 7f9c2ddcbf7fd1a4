/* "key = value" lines (keyval.h). */
#include "io/keyval.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LINE 2048

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = 0;
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) s[n - 1] = 0, s++;
    return s;
}

static int one_line(char *line, const char *name, int ln, rn_keyval_fn fn, void *ctx, rn_err *err)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = trim(line);
    if (!*s) return 0;
    char *eq = strchr(s, '=');
    if (!eq) return rn_err_set(err, "%s:%d: expected 'key = value', got '%s'", name, ln, s);
    *eq = 0;
    if (fn(ctx, trim(s), trim(eq + 1), name, ln, err)) return rn_err_prefix(err, "%s:%d", name, ln);
    return 0;
}

int rn_keyval_read(FILE *f, const char *name, rn_keyval_fn fn, void *ctx, rn_err *err)
{
    char line[LINE];
    int ln = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        if (!strchr(line, '\n') && !feof(f))
            return rn_err_set(err, "%s:%d: line longer than %zu characters", name, ln + 1, sizeof line - 2);
        rc = one_line(line, name, ++ln, fn, ctx, err);
    }
    return rc;
}

int rn_keyval_parse(const char *text, const char *name, rn_keyval_fn fn, void *ctx, rn_err *err)
{
    char line[LINE];
    int ln = 0, rc = 0;
    for (const char *s = text; !rc && *s;) {
        size_t n = strcspn(s, "\n");
        if (n >= sizeof line) return rn_err_set(err, "%s:%d: line longer than %zu characters", name, ln + 1, sizeof line - 1);
        memcpy(line, s, n);
        line[n] = 0;
        rc = one_line(line, name, ++ln, fn, ctx, err);
        s += n + (s[n] == '\n');
    }
    return rc;
}

int rn_keyval_key_is(const char *key, const char *name)
{
    while (*key == '-') key++;
    while (*name && (*name == *key || (*name == '-' && *key == '_'))) name++, key++;
    return !*name && !*key;
}

int rn_keyval_i64(int64_t *out, const char *s, const char *key, rn_err *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) return rn_err_set(err, "%s: '%s' is not an integer", key, s);
    *out = v;
    return 0;
}

int rn_keyval_int(int *out, const char *s, const char *key, rn_err *err)
{
    int64_t v = 0;
    if (rn_keyval_i64(&v, s, key, err)) return -1;
    if (v < -2147483647 || v > 2147483647) return rn_err_set(err, "%s: %s is out of range", key, s);
    *out = (int)v;
    return 0;
}

int rn_keyval_bool(int *out, const char *s, const char *key, rn_err *err)
{
    static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcmp(s, yes[i])) return *out = 1, 0;
        if (!strcmp(s, no[i])) return *out = 0, 0;
    }
    return rn_err_set(err, "%s: '%s' is not a boolean (true/false, 1/0, yes/no, on/off)", key, s);
}
