/* Which weights file a command uses: --snapshot FILE, or --epoch N --output DIR.
 *
 *   char path[4096];
 *   if (rn_snapshot_resolve(path, sizeof path, snapshot, output, epoch, &err)) ... // "no snapshot ..."
 *
 * With --epoch, the first existing of DIR/snapshot_N.safetensors,
 * DIR/model_dump/snapshot_N.safetensors, DIR/snapshot_N.pth.tar and
 * DIR/model_dump/snapshot_N.pth.tar (the authors' name) is used.
 */
#ifndef RN_CLI_SNAPSHOT_PATH_H
#define RN_CLI_SNAPSHOT_PATH_H

#include <stddef.h>

#include "core/status.h"

/* epoch < 0: not given. Returns 0 with path set, or -1 with a one-line reason. */
int rn_snapshot_resolve(char *path, size_t len, const char *snapshot, const char *output, long epoch, rn_err *err);

#endif
