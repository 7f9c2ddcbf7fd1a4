/* rn_args: a small, strict flag parser shared by every subcommand.
 *
 *   const char *snapshot = NULL; int eval = 0; double lr = 1e-3; long steps = 1, seed = 0;
 *   rn_flag flags[] = {
 *       RN_FLAG_STR("--snapshot", &snapshot, "safetensors or .pth file"),
 *       RN_FLAG_ALIAS("--weights", "--snapshot"),
 *       RN_FLAG_BOOL("--eval", &eval, "use running BN statistics"),
 *       RN_FLAG_F64("--lr", &lr, "learning rate"),
 *       RN_FLAG_RANGE("--steps", &steps, 1, 1000000, "number of steps"),
 *       RN_FLAG_I64("--seed", &seed, "random seed"),
 *       {0}};
 *   int h = rn_args_handle(flags, argc, argv, "--snapshot W [--eval]");
 *   if (h >= 0) return h;                         // --help (0) or misuse (2), already printed
 *   if (!snapshot) return rn_args_misuse(flags, argv, syn, "--snapshot is required");
 *
 * Accepts "--flag value" and "--flag=value". Unknown flags, missing values and
 * malformed numbers are misuse (the message and the usage); a number outside
 * its flag's range is one line. A flag given twice keeps the last. An alias
 * is another spelling of a flag of the same table; hidden flags (test and
 * debug switches) are accepted but not listed by --help.
 */
#ifndef RN_CLI_ARGS_H
#define RN_CLI_ARGS_H

#include <limits.h>
#include <stdio.h>

#include "core/status.h"

typedef enum { RN_ARG_STR, RN_ARG_BOOL, RN_ARG_I64, RN_ARG_F64, RN_ARG_MULTI, RN_ARG_ALIAS } rn_arg_kind;

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
    long lo, hi;        /* RN_ARG_I64: the accepted range */
    const char *target; /* RN_ARG_ALIAS: the flag this is another spelling of */
    int hidden;         /* accepted, not listed by --help */
    int seen;           /* set by the parser */
    const char *raw;    /* set by the parser: the value as given (last occurrence; NULL for BOOL) */
} rn_flag;

/* The general form; the short forms below cover the usual cases. */
#define RN_FLAG_FULL(n, k, p, l, u, hid, h) \
    {.name = (n), .kind = (k), .dst = (void *)(p), .help = (h), .lo = (l), .hi = (u), .hidden = (hid)}
#define RN_FLAG_STR(n, p, h) RN_FLAG_FULL(n, RN_ARG_STR, p, 0, 0, 0, h)
#define RN_FLAG_BOOL(n, p, h) RN_FLAG_FULL(n, RN_ARG_BOOL, p, 0, 0, 0, h)
#define RN_FLAG_I64(n, p, h) RN_FLAG_FULL(n, RN_ARG_I64, p, LONG_MIN, LONG_MAX, 0, h)
/* A long within lo..hi (so a cast to int is safe when the range fits). */
#define RN_FLAG_RANGE(n, p, l, u, h) RN_FLAG_FULL(n, RN_ARG_I64, p, l, u, 0, h)
#define RN_FLAG_F64(n, p, h) RN_FLAG_FULL(n, RN_ARG_F64, p, 0, 0, 0, h)
#define RN_FLAG_MULTI(n, p, h) RN_FLAG_FULL(n, RN_ARG_MULTI, p, 0, 0, 0, h)
#define RN_FLAG_ALIAS(n, of) {.name = (n), .kind = RN_ARG_ALIAS, .target = (of)}

/* What rn_args_parse returns besides 0. */
enum { RN_ARGS_HELP = 1, RN_ARGS_MISUSE = -1, RN_ARGS_RANGE = -2 };

/* Parses argv[first..argc). String destinations are `const char *` pointing
 * into argv, BOOL is int, I64 is long, F64 is double, MULTI is rn_multi.
 * Returns 0; RN_ARGS_HELP when --help or -h was given; or RN_ARGS_MISUSE /
 * RN_ARGS_RANGE with a one-line message in err. */
int rn_args_parse(rn_flag *flags, int argc, char **argv, int first, rn_err *err);

/* Prints "usage: rootnet <cmd> ..." and one line per listed flag to f, then
 * the aliases on one line. */
void rn_args_usage(FILE *f, const char *cmd, const char *synopsis, const rn_flag *flags);

/* Parses argv[2..) for the command argv[1]. Returns -1 to continue (all
 * parsed), otherwise the exit code the command should return: 0 after --help
 * (usage on stdout), 2 after misuse (message and usage on stderr) or a value
 * out of range (the message alone). */
int rn_args_handle(rn_flag *flags, int argc, char **argv, const char *synopsis);

/* Prints "rootnet <argv[1]>: MSG" and the usage on stderr; returns 2. For
 * misuse found after parsing (a required flag missing). */
int rn_args_misuse(const rn_flag *flags, char **argv, const char *synopsis, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Looks up whether a flag was given on the command line (under any alias). */
int rn_args_seen(const rn_flag *flags, const char *name);

#endif
