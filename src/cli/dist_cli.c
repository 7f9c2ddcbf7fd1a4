#include "cli/dist_cli.h"

#include <stdio.h>

int rn_cli_dist_flags_check(const rn_cli_dist_flags *f, const char *cmd)
{
    if (f->bucket_mb >= 0 && f->timeout_s > 0) return 0;
    fprintf(stderr, "rootnet %s: --bucket-mb must be >= 0 and --dist-timeout > 0 seconds\n", cmd);
    return -1;
}

int rn_cli_dist_start(rn_dist **d, const char *cmd, int sync_bn, double timeout_s)
{
    rn_err err = {{0}};
    *d = NULL;
    if (!rn_dist_launched() && !(sync_bn && !rn_dist_available())) return 0;
    if (!rn_dist_available()) {
        const char *why = rn_dist_launched() ? "started by mpirun" : "--sync-bn given";
        rn_dist_init(d, timeout_s, &err);
        fprintf(stderr, "rootnet %s: %s, but %s\n", cmd, why, err.msg);
        return -1;
    }
    if (timeout_s <= 0) {
        fprintf(stderr, "rootnet %s: --dist-timeout must be > 0 seconds\n", cmd);
        return -1;
    }
    if (rn_dist_init(d, timeout_s, &err)) {
        fprintf(stderr, "rootnet %s: %s\n", cmd, err.msg);
        return -1;
    }
    return 0;
}

const char *rn_cli_dist_device(const rn_dist *d, const char *name, char *buf, size_t cap)
{
    if (!name || rn_dist_device_name(d, name, buf, cap)) return name;
    return buf;
}

int rn_cli_dist_fail(rn_dist *d, const char *cmd, const rn_err *err)
{
    if (rn_dist_size(d) > 1) {
        fprintf(stderr, "rootnet %s: rank %d: %s\n", cmd, rn_dist_rank(d), err->msg);
        fflush(stderr);
        rn_dist_abort(d, 1);
    }
    fprintf(stderr, "rootnet %s: %s\n", cmd, err->msg);
    rn_dist_finalize(d);
    return 1;
}
