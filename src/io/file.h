/* Whole-file read-only mappings, checked opens and mkdir -p. (Atomic file
 * writes, rn_afile, are core/afile.h.)
 *
 *   rn_mapfile m;
 *   if (rn_mapfile_open(&m, "w.safetensors", &err)) return -1;
 *   use m.data[0 .. m.size); rn_mapfile_close(&m);
 *   if (rn_mkdirs("out/log", &err)) return -1;
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

/* mkdir -p: creates path and its missing parents. 0, or -1 naming the part
 * that could not be created (or path, when it exists but is not a directory). */
int rn_mkdirs(const char *path, rn_err *err);

#endif
