/* rn_zipw: writes a zip archive of stored (uncompressed) entries, the layout
 * torch.save uses: each entry's data starts on a 64-byte boundary (the local
 * header's extra field "FB" pads it, as PyTorch's writer does), CRC-32 from
 * zlib. The archive goes to a temporary file renamed into place by commit,
 * so a failed or interrupted write never leaves a partial file at path.
 * No zip64: an archive past 4 GiB or 65535 entries is refused.
 *
 *   rn_zipw z;
 *   if (rn_zipw_open(&z, "out.pth.tar", &err)) return -1;
 *   if (rn_zipw_add(&z, "archive/data.pkl", buf, n, &err)) return -1;   // aborts z on error
 *   return rn_zipw_commit(&z, &err);                                     // central directory, rename
 */
#ifndef RN_IO_ZIP_WRITE_H
#define RN_IO_ZIP_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/afile.h"
#include "core/status.h"

typedef struct rn_zipw_entry {
    char *name;
    uint32_t crc, size, offset; /* offset of the local header */
} rn_zipw_entry;

typedef struct rn_zipw {
    rn_afile f;
    uint64_t pos; /* bytes written so far */
    rn_zipw_entry *e;
    size_t n, cap;
} rn_zipw;

/* Creates the temporary file next to path. */
int rn_zipw_open(rn_zipw *z, const char *path, rn_err *err);
/* Appends one stored entry (name: at most 65535 bytes). On error z is aborted. */
int rn_zipw_add(rn_zipw *z, const char *name, const void *data, size_t size, rn_err *err);
/* Writes the central directory and renames the file into place; z is freed either way. */
int rn_zipw_commit(rn_zipw *z, rn_err *err);
/* Removes the temporary file and frees z; safe after commit or a failed add. */
void rn_zipw_abort(rn_zipw *z);

#endif
