/* The one place that turns an error into a message and an exit code. */
#include "cli/exit.h"

#include <stdio.h>

int rn_cli_fail(const char *cmd, int code, const rn_err *err)
{
    fprintf(stderr, "rootnet %s: %s\n", cmd, err->msg);
    return code;
}
