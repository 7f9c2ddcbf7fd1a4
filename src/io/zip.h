/* rn_zip: a read-only view of a zip archive held in memory (stored entries
 * only, zip64 aware), enough for torch.save's zip checkpoints.
 *
 *   rn_zip z;
 *   if (rn_zip_open(&z, buf, size, path, &err)) return -1;
 *   const uint8_t *p; size_t n;
 *   if (rn_zip_find(&z, "archive/data.pkl", &p, &n, &err)) ...
 *   rn_zip_close(&z);
 */
#ifndef RN_IO_ZIP_H
#define RN_IO_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_zip_entry {
    const char *name; /* points into the archive, not NUL-terminated */
    size_t name_len;
    uint64_t offset;  /* of the entry's data in the archive */
    uint64_t size;
    int method;       /* 0 = stored */
} rn_zip_entry;

typedef struct rn_zip {
    const uint8_t *buf;
    size_t size;
    const char *path;
    rn_zip_entry *e;
    size_t n;
} rn_zip;

/* Reads the central directory; every entry's local header and data range is checked. */
int rn_zip_open(rn_zip *z, const uint8_t *buf, size_t size, const char *path, rn_err *err);
/* The data of a stored entry by exact name; -1 with a message when absent or compressed. */
int rn_zip_find(const rn_zip *z, const char *name, const uint8_t **data, size_t *size, rn_err *err);
/* Frees the entry table. */
void rn_zip_close(rn_zip *z);

#endif
