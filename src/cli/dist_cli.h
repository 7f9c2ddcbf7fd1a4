/* The CLI's side of data parallelism: start MPI when launched by mpirun, and
 * the flags every distributed command shares.
 *
 *   rn_cli_dist_flags df = RN_CLI_DIST_FLAGS_DEFAULT;
 *   rn_flag flags[] = {..., RN_CLI_DIST_FLAGS(&df), {0}};
 *   if (rn_cli_dist_flags_check(&df, "step")) return 2;                // message printed
 *   rn_dist *d = NULL;
 *   if (rn_cli_dist_start(&d, "step", df.sync_bn, df.timeout_s)) return 1;   // message printed
 *   device = rn_cli_dist_device(d, device, buf, sizeof buf);    // --device cuda: one GPU per rank
 *   if (rn_dist_grads_setup(d, &p, rn_dist_bucket_floats(df.bucket_mb), &err)) fail;
 *   ... rn_dist_rank(d) == 0 prints and writes files ...
 *   rn_dist_finalize(d);                          // or: return rn_cli_dist_fail(d, "step", &err);
 */
#ifndef RN_CLI_DIST_CLI_H
#define RN_CLI_DIST_CLI_H

#include <stddef.h>

#include "cli/args.h"
#include "dist/dist.h"

typedef struct rn_cli_dist_flags {
    int sync_bn;      /* --sync-bn */
    double bucket_mb; /* --bucket-mb: gradient all-reduce bucket, MB (0: one all-reduce after backward) */
    double timeout_s; /* --dist-timeout: the collective watchdog's limit, seconds */
} rn_cli_dist_flags;

#define RN_CLI_DIST_FLAGS_DEFAULT {0, 25.0, 300.0}

#define RN_CLI_DIST_FLAGS(df)                                                                                      \
    RN_FLAG_BOOL("--sync-bn", &(df)->sync_bn, "under mpirun: BN statistics over all ranks (one global batch)"),   \
        RN_FLAG_F64("--bucket-mb", &(df)->bucket_mb, "under mpirun: gradient all-reduce bucket in MB, 0 = one (25)"), \
        RN_FLAG_F64("--dist-timeout", &(df)->timeout_s,                                                            \
                    "under mpirun: end the job when a collective takes longer (300 s)")

/* 0, or -1 after one line on stderr: --bucket-mb < 0 or --dist-timeout <= 0. */
int rn_cli_dist_flags_check(const rn_cli_dist_flags *f, const char *cmd);
/* Leaves *d NULL for a plain single process. Fails (one line on stderr) when
 * launched by mpirun or asked for --sync-bn in a build without MPI. */
int rn_cli_dist_start(rn_dist **d, const char *cmd, int sync_bn, double timeout_s);
/* The device of this rank: under mpirun "cuda" means "cuda:<local rank % GPUs>" (one GPU per
 * rank, rn_dist_device_name), written into buf; any other name (NULL too) is returned as it is. */
const char *rn_cli_dist_device(const rn_dist *d, const char *name, char *buf, size_t cap);
/* Prints "rootnet CMD: MSG" and returns 1 after rn_dist_finalize; across
 * several ranks prints "rootnet CMD: rank R: MSG" and aborts the whole job
 * (the other ranks may wait in a collective) without returning. */
int rn_cli_dist_fail(rn_dist *d, const char *cmd, const rn_err *err);

#endif
