/* Whole-file read-only mappings and atomic file writes.
 *
 *   rn_mapfile m;
 *   if (rn_mapfile_open(&m, "w.safetensors", &err)) return -1;
 *   use m.data[0 .. m.size); rn_mapfile_close(&m);
 *
 *   rn_afile f;
 *   if (rn_afile_open(&f, "out.npy", &err)) return -1;
 *   if (rn_afile_write(&f, buf, n, &err)) return -1;   // aborts f on error
 *   return rn_afile_commit(&f, &err);                    // fsync + rename
 */
#ifndef RN_IO_FILE_H
#define RN_IO_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_mapfile {
    const uint8_t *data; /* NULL for an empty file */
    size_t size;
} rn_mapfile;

/* Opens path read-only and checks it before any read: a regular file (a FIFO
 * is refused at once, never waited on) of at most max_bytes. The descriptor
 * (>= 0, blocking, caller closes) with *size its size, or -1 with err naming
 * path and the problem. */
int rn_file_open_read(const char *path, size_t max_bytes, size_t *size, rn_err *err);
/* Maps a regular file read-only (an empty file gives data NULL, size 0); a
 * FIFO, device or directory is refused before any read. */
int rn_mapfile_open(rn_mapfile *m, const char *path, rn_err *err);
/* Unmaps; safe on a zeroed or already closed mapping. */
void rn_mapfile_close(rn_mapfile *m);

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

/* mkdir -p: creates path and its missing parents. 0, or -1 naming the part
 * that could not be created (or path, when it exists but is not a directory). */
int rn_mkdirs(const char *path, rn_err *err);

#endif
