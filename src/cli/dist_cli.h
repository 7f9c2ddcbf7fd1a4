/* The CLI's side of data parallelism: start MPI when launched by mpirun, and
 * the flags every distributed command shares.
 *
 *   rn_dist *d = NULL;
 *   if (rn_cli_dist_start(&d, "step", sync_bn, timeout_s)) return 1;   // message printed
 *   ... rn_dist_rank(d) == 0 prints and writes files ...
 *   rn_dist_finalize(d);                          // or: return rn_cli_dist_fail(d, "step", &err);
 */
#ifndef RN_CLI_DIST_CLI_H
#define RN_CLI_DIST_CLI_H

#include "dist/dist.h"

/* Leaves *d NULL for a plain single process. Fails (one line on stderr) when
 * launched by mpirun or asked for --sync-bn in a build without MPI. */
int rn_cli_dist_start(rn_dist **d, const char *cmd, int sync_bn, double timeout_s);
/* Prints "rootnet CMD: MSG" and returns 1 after rn_dist_finalize; across
 * several ranks prints "rootnet CMD: rank R: MSG" and aborts the whole job
 * (the other ranks may wait in a collective) without returning. */
int rn_cli_dist_fail(rn_dist *d, const char *cmd, const rn_err *err);

#endif
