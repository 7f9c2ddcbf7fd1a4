/* rn_args: a small, strict flag parser shared by every subcommand.
 *
 *   const char *weights = NULL; int eval = 0; double lr = 1e-3; long steps = 1;
 *   rn_flag flags[] = {
 *       RN_FLAG_STR("--weights", &weights, "safetensors or .pth file"),
 *       RN_FLAG_BOOL("--eval", &eval, "use running BN statistics"),
 *       RN_FLAG_F64("--lr", &lr, "learning rate"),
 *       RN_FLAG_I64("--steps", &steps, "number of steps"),
 *       {0}};
 *   if (rn_args_parse(flags, argc, argv, &err)) -> print err.msg and usage
 *
 * Accepts "--flag value" and "--flag=value". Unknown flags, missing values and
 * malformed numbers are errors (never atoi). A flag given twice keeps the last.
 */
#ifndef RN_CLI_ARGS_H
#define RN_CLI_ARGS_H

#include <stdio.h>

#include "core/status.h"

typedef enum { RN_ARG_STR, RN_ARG_BOOL, RN_ARG_I64, RN_ARG_F64, RN_ARG_MULTI } rn_arg_kind;

/* For RN_ARG_MULTI: every occurrence is appended (up to RN_ARGS_MULTI_MAX). */
#define RN_ARGS_MULTI_MAX 64
typedef struct rn_multi {
    const char *v[RN_ARGS_MULTI_MAX];
    int n;
} rn_multi;

typedef struct rn_flag {
    const char *name;
    rn_arg_kind kind;
    void *dst;
    const char *help;
    int seen; /* set by the parser */
} rn_flag;

#define RN_FLAG_STR(n, p, h) {(n), RN_ARG_STR, (void *)(p), (h), 0}
#define RN_FLAG_BOOL(n, p, h) {(n), RN_ARG_BOOL, (void *)(p), (h), 0}
#define RN_FLAG_I64(n, p, h) {(n), RN_ARG_I64, (void *)(p), (h), 0}
#define RN_FLAG_F64(n, p, h) {(n), RN_ARG_F64, (void *)(p), (h), 0}
#define RN_FLAG_MULTI(n, p, h) {(n), RN_ARG_MULTI, (void *)(p), (h), 0}

/* Parses argv[first..argc). String destinations are `const char *` pointing
 * into argv, BOOL is int, I64 is long, F64 is double, MULTI is rn_multi.
 * Returns 0; 1 when --help or -h was given; or -1 with a one-line message in err. */
int rn_args_parse(rn_flag *flags, int argc, char **argv, int first, rn_err *err);

/* Prints "usage: rootnet <cmd> ..." and one line per flag to f. */
void rn_args_usage(FILE *f, const char *cmd, const char *synopsis, const rn_flag *flags);

/* Parses, and on error or --help prints the message and usage. Returns -1 to
 * continue (all parsed), otherwise the exit code the command should return
 * (0 after --help, 2 after an error). */
int rn_args_handle(rn_flag *flags, int argc, char **argv, const char *synopsis);

/* Looks up whether a flag was given on the command line. */
int rn_args_seen(const rn_flag *flags, const char *name);

#endif
