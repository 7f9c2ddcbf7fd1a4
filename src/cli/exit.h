/* The exit codes of every rootnet command, one mapping (README, "Exit codes"):
 *
 *   return rn_cli_fail("forward", RN_EXIT_FAIL, &err);   // "rootnet forward: <err>" on stderr, 1
 *
 *   RN_EXIT_OK     0  done
 *   RN_EXIT_FAIL   1  the work failed: an input file unreadable or malformed, an output not
 *                     writable, the model could not run
 *   RN_EXIT_USAGE  2  the command line is wrong, found before any work: an unknown or missing
 *                     flag, a value out of range, flags that contradict each other or the
 *                     snapshot (--input-size), a device or precision not built in
 */
#ifndef RN_CLI_EXIT_H
#define RN_CLI_EXIT_H

#include "core/status.h"

enum { RN_EXIT_OK = 0, RN_EXIT_FAIL = 1, RN_EXIT_USAGE = 2 };

/* Prints "rootnet <cmd>: <err->msg>" on stderr; returns code. */
int rn_cli_fail(const char *cmd, int code, const rn_err *err);

#endif
