/* rn_tensors_load: picks the reader from the file's first bytes. */
#include <string.h>

#include "io/file.h"
#include "io/tensors.h"

/* torch's legacy MAGIC_NUMBER 0x1950a86a20f9469cfc6c as LONG1 little-endian bytes. */
static const uint8_t LEGACY_MAGIC[12] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

typedef enum { FMT_UNKNOWN, FMT_SAFETENSORS, FMT_ZIP, FMT_LEGACY, FMT_NPY } file_format;

static file_format sniff(const uint8_t *b, size_t n)
{
    if (n >= 6 && !memcmp(b, "\x93NUMPY", 6)) return FMT_NPY;
    if (n >= 4 && !memcmp(b, "PK\x03\x04", 4)) return FMT_ZIP;
    if (n >= 14 && b[0] == 0x80 && !memcmp(b + 2, LEGACY_MAGIC, sizeof LEGACY_MAGIC)) return FMT_LEGACY;
    if (n >= 9 && b[8] == '{') return FMT_SAFETENSORS;
    return FMT_UNKNOWN;
}

static int load_npy(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    rn_tensor t;
    if (rn_npy_parse(&t, buf, size, path, err)) return -1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".npy")) len -= 4;
    char *name = rn_xmalloc(len + 1);
    memcpy(name, base, len);
    name[len] = 0;
    int rc = rn_tensors_add(out, name, t.dtype, t.ndim, t.shape, t.data, err);
    free(name);
    rn_tensor_free(&t);
    return rc;
}

int rn_tensors_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err)
{
    rn_tensors_init(out);
    if (size == 0) return rn_err_set(err, "%s: empty file", path);
    int rc;
    switch (sniff(buf, size)) {
    case FMT_NPY: rc = load_npy(out, buf, size, path, err); break;
    case FMT_ZIP:
    case FMT_LEGACY: rc = rn_pth_parse(out, buf, size, path, err); break;
    case FMT_SAFETENSORS:
        rc = rn_safetensors_parse(out, buf, size, path, err) || rn_tensors_verify_checksum(out, path, err) ? -1 : 0;
        break;
    default:
        rc = rn_err_set(err, "%s: unrecognised format (%zu bytes; not safetensors, a PyTorch "
                             "checkpoint or .npy)", path, size);
    }
    if (rc) rn_tensors_free(out);
    return rc;
}

int rn_tensors_load(rn_tensors *out, const char *path, rn_err *err)
{
    rn_tensors_init(out);
    rn_mapfile m;
    if (rn_mapfile_open(&m, path, err)) return -1;
    int rc = rn_tensors_parse(out, m.data, m.size, path, err);
    rn_mapfile_close(&m);
    return rc;
}
