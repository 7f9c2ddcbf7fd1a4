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

/* Removes the temporaries of path that writers now dead left ("path.tmp.PID" and "path.tmp.PID.*", PID no
 * live process; a killed writer's): returns how many. rn_afile_open calls it. */
int rn_stale_temps_remove(const char *path);
/* The same for every file in dir named "*<ext>.tmp.PID[.*]" (ext ".rnp": prepared frames). */
int rn_stale_temps_in(const char *dir, const char *ext);
/* Creates a temporary file ("path.tmp.PID.XXXXXX") next to path (a new path, a regular file, or the
 * regular file a symbolic link names), first removing path's stale temporaries. A character device or a FIFO with a
 * reader (/dev/null, a pipe) is written in place, never replaced; anything
 * else (a directory, a FIFO with no reader) is refused. */
int rn_afile_open(rn_afile *f, const char *path, rn_err *err);
/* Writes all n bytes; on failure aborts f (removes the temporary). */
int rn_afile_write(rn_afile *f, const void *buf, size_t n, rn_err *err);
/* fsyncs, closes and renames the temporary onto path, then fsyncs the directory
 * (written in place: closes, and reports a failed close). */
int rn_afile_commit(rn_afile *f, rn_err *err);
/* Commits two files together: both temporaries written and fsync'd first, then
 * renamed, a then b; when b's rename fails a's previous file is put back, so
 * both paths are replaced or neither (a killed process leaves its temporaries,
 * never one new file beside an old one). Aborts both on failure. */
int rn_afile_commit_pair(rn_afile *a, rn_afile *b, rn_err *err);
/* Closes and removes the temporary; safe to call twice. */
void rn_afile_abort(rn_afile *f);

/* What a file that is no regular file is, for messages: "a directory", "a FIFO",
 * "a character device", "a block device", "a socket", else "not a regular file". */
const char *rn_file_kind(mode_t mode);

#endif
