/* Atomic file writes: a temporary file beside the target, renamed onto it on
 * commit, so that a reader never sees a half-written file.
 *
 *   rn_afile f;
 *   if (rn_afile_open(&f, "out.npy", &err)) return -1;
 *   if (rn_afile_write(&f, buf, n, &err)) return -1;   // aborts f on error
 *   return rn_afile_commit(&f, &err);                    // fsync + rename
 *
 *   struct stat st; stat(path, &st);
 *   printf("%s is %s\n", path, rn_file_kind(st.st_mode)); // "a FIFO", "a directory", ...
 */
#ifndef RN_CORE_AFILE_H
#define RN_CORE_AFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "core/status.h"

typedef struct rn_afile {
    int fd;      /* -1 once committed or aborted */
    char *tmp;   /* temporary file in the target's directory; NULL when written in place */
    char *path;  /* final path */
} rn_afile;

/* Creates a temporary file next to path (a new path, a regular file, or the
 * regular file a symbolic link names). A character device or a FIFO with a
 * reader (/dev/null, a pipe) is written in place, never replaced; anything
 * else (a directory, a FIFO with no reader) is refused. */
int rn_afile_open(rn_afile *f, const char *path, rn_err *err);
/* Writes all n bytes; on failure aborts f (removes the temporary). */
int rn_afile_write(rn_afile *f, const void *buf, size_t n, rn_err *err);
/* fsyncs, closes and renames the temporary onto path, then fsyncs the directory
 * (written in place: closes, and reports a failed close). */
int rn_afile_commit(rn_afile *f, rn_err *err);
/* Closes and removes the temporary; safe to call twice. */
void rn_afile_abort(rn_afile *f);

/* What a file that is no regular file is, for messages: "a directory", "a FIFO",
 * "a character device", "a block device", "a socket", else "not a regular file". */
const char *rn_file_kind(mode_t mode);

#endif
