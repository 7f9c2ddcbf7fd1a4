/* rn_keyval: "key = value" text, one pair a line: the grammar of rootnet's
 * config files (train/config.h) and of a snapshot's "config" metadata
 * (nn/run_settings.h), so that both read the same text the same way.
 *
 *   static int put(void *ctx, const char *key, const char *value, const char *name, int line, rn_err *err)
 *   {
 *       if (rn_keyval_key_is(key, "input-size")) return rn_keyval_int(ctx, value, "input-size", err);
 *       return 0;                                        // other keys: the caller's choice
 *   }
 *   if (rn_keyval_parse(text, "snap.safetensors: config metadata", put, &size, &err)) ...
 *
 * A '#' starts a comment; blank lines are skipped; spaces and tabs around key
 * and value are trimmed, and a value in matching single or double quotes loses
 * them. A line without '=' and a line longer than 2046 characters are errors
 * naming "name:line"; so is a pair fn refuses (its message prefixed likewise).
 */
#ifndef RN_IO_KEYVAL_H
#define RN_IO_KEYVAL_H

#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

/* One pair of line `line` of name: 0, or -1 with err (prefixed "name:line" by the parser). */
typedef int (*rn_keyval_fn)(void *ctx, const char *key, const char *value, const char *name, int line, rn_err *err);

/* Every pair of text (in memory, lines split at '\n'), in order, to fn. */
int rn_keyval_parse(const char *text, const char *name, rn_keyval_fn fn, void *ctx, rn_err *err);
/* The same from an open stream; name only labels messages. */
int rn_keyval_read(FILE *f, const char *name, rn_keyval_fn fn, void *ctx, rn_err *err);

/* 1 when key names name ("input-size"): leading '-'s skipped, '_' standing for '-'. */
int rn_keyval_key_is(const char *key, const char *name);

/* Values: a decimal integer (int: within +-2147483647) and a boolean (1/0, true/false,
 * yes/no, on/off); errors start with key. */
int rn_keyval_i64(int64_t *out, const char *s, const char *key, rn_err *err);
int rn_keyval_int(int *out, const char *s, const char *key, rn_err *err);
int rn_keyval_bool(int *out, const char *s, const char *key, rn_err *err);

#endif
