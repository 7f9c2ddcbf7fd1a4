/* rn_tensors: a list of named tensors, and the file formats that hold them
 * (.npy, safetensors, PyTorch checkpoints in the zip and the legacy format).
 *
 *   rn_tensors ts; rn_err err;
 *   if (rn_tensors_load(&ts, "snapshot_24.pth.tar", &err)) { puts(err.msg); return 1; }
 *   const rn_tensor *w = rn_tensors_find(&ts, "network.module.backbone.conv1.weight");
 *   float *buf = malloc(64 * 3 * 7 * 7 * sizeof *buf);
 *   if (!w || rn_tensor_to_f32(buf, w, 64 * 3 * 7 * 7, &err)) ...
 *   rn_safetensors_write("out.safetensors", &ts, &err);
 *   rn_tensors_free(&ts);
 *
 * Ownership: every tensor owns its name and its data (malloc'd, copied out of
 * the file, which is mapped read-only only while it is read). Data is
 * C-contiguous (row-major) little-endian. rn_tensors_free releases everything.
 */
#ifndef RN_IO_TENSORS_H
#define RN_IO_TENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/bf16.h"
#include "core/status.h"

typedef enum rn_dtype {
    RN_F64, RN_F32, RN_F16, RN_BF16, RN_I64, RN_I32, RN_I16, RN_I8, RN_U8, RN_BOOL,
    RN_DTYPE_COUNT
} rn_dtype;

#define RN_TENSOR_MAXDIM 8

typedef struct rn_tensor {
    char *name;
    rn_dtype dtype;
    int ndim;                         /* 0 for a scalar */
    int64_t shape[RN_TENSOR_MAXDIM];
    void *data;                       /* nbytes bytes, C-contiguous */
    size_t nbytes;                    /* numel * rn_dtype_size(dtype) */
} rn_tensor;

typedef struct rn_tensors {
    rn_tensor *t;
    int n, cap;
    char **meta_key, **meta_val;      /* safetensors __metadata__ string map */
    int n_meta, cap_meta;
    int *index, index_cap;            /* name hash (private); do not rename tensors in place */
} rn_tensors;

/* Bytes per element of a dtype. */
size_t rn_dtype_size(rn_dtype d);
/* safetensors name of a dtype ("F32", "BF16", "BOOL", ...). */
const char *rn_dtype_name(rn_dtype d);
/* Parses a safetensors dtype name; returns 0, or -1 for an unknown name. */
int rn_dtype_parse(rn_dtype *out, const char *name);
/* 1 for F64, F32, F16, BF16. */
int rn_dtype_is_float(rn_dtype d);

/* Element count of a shape into *numel (1 for ndim 0). Returns -1 for a
 * negative dimension or when the product of the non-zero dimensions exceeds
 * INT64_MAX (so [2^62, 3, 0] is refused although it holds no element). */
int rn_shape_numel(int64_t *numel, int ndim, const int64_t *shape);
/* Element count of a tensor (1 for a scalar); its shape passed rn_shape_numel. */
int64_t rn_tensor_numel(const rn_tensor *t);
/* Converts any float tensor to float32 in dst (count floats); fails when
 * count != numel or the dtype is not a float type. */
int rn_tensor_to_f32(float *dst, const rn_tensor *t, size_t count, rn_err *err);
/* Checks that t has exactly the given shape; the message names the tensor. */
int rn_tensor_check_shape(const rn_tensor *t, int ndim, const int64_t *shape, rn_err *err);
/* Converts IEEE half bits to float (bfloat16: rn_bf16_to_f32, core/bf16.h). */
float rn_f16_to_f32(uint16_t h);

/* An empty list. */
void rn_tensors_init(rn_tensors *ts);
/* Frees every tensor, name and metadata string; leaves ts empty. */
void rn_tensors_free(rn_tensors *ts);
/* Appends a tensor, copying name, shape and data (data NULL: zero-filled).
 * Fails on ndim > RN_TENSOR_MAXDIM, a negative dim, or a duplicate name. */
int rn_tensors_add(rn_tensors *ts, const char *name, rn_dtype dtype, int ndim,
                   const int64_t *shape, const void *data, rn_err *err);
/* The tensor with this exact name, or NULL (hashed); valid until the next add. */
const rn_tensor *rn_tensors_find(const rn_tensors *ts, const char *name);
/* Sets (or replaces) a metadata key. */
void rn_tensors_set_meta(rn_tensors *ts, const char *key, const char *val);
/* The metadata value for key, or NULL. */
const char *rn_tensors_get_meta(const rn_tensors *ts, const char *key);

/* The 64-bit hash a rootnet snapshot stores as its "checksum" metadata (16 hex digits): every tensor's name,
 * dtype, shape and bytes, in order. */
uint64_t rn_tensors_checksum(const rn_tensors *ts);
/* 0 when ts has no "checksum" metadata or it matches rn_tensors_checksum; else -1 with "path: damaged:
 * checksum mismatch ...". */
int rn_tensors_verify_checksum(const rn_tensors *ts, const char *path, rn_err *err);

/* Loads any supported file, sniffed by its first bytes: safetensors, PyTorch
 * zip checkpoint, PyTorch legacy checkpoint, .npy (one tensor named after the
 * file's stem). A safetensors file with a "checksum" (a rootnet snapshot) must
 * match it (rn_tensors_verify_checksum). out is initialised here; on error it
 * is left empty. */
int rn_tensors_load(rn_tensors *out, const char *path, rn_err *err);
/* Same, from a file image held in memory; path only names it in messages. */
int rn_tensors_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err);

/* .npy v1/v2/v3, little-endian <f8 <f4 <f2 <i8 <i4 <i2 |i1 |u1 |b1, C order. */
int rn_npy_read(rn_tensor *out, const char *path, rn_err *err);
/* Parses an .npy image held in memory; path only names it in messages. */
int rn_npy_parse(rn_tensor *out, const uint8_t *buf, size_t size, const char *path, rn_err *err);
/* Writes one array as .npy v1.0 (atomically). BF16 has no .npy type: error. */
int rn_npy_write(const char *path, rn_dtype dtype, int ndim, const int64_t *shape,
                 const void *data, rn_err *err);
/* Frees a tensor returned by rn_npy_read. */
void rn_tensor_free(rn_tensor *t);

/* Reads a safetensors file into out (initialised here), tensors in file order. */
int rn_safetensors_read(rn_tensors *out, const char *path, rn_err *err);
/* Parses a safetensors image held in memory; path only names it in messages. */
int rn_safetensors_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path,
                         rn_err *err);
/* Writes ts (in order, with its metadata) as safetensors, atomically. */
int rn_safetensors_write(const char *path, const rn_tensors *ts, rn_err *err);
/* Same, calling hook(ctx, i) before tensor i's bytes go to the temporary file
 * (tests use it to stop a writer part-way). */
int rn_safetensors_write_hook(const char *path, const rn_tensors *ts, void (*hook)(void *ctx, int i), void *ctx,
                              rn_err *err);

/* Reads a torch.save file (zip or legacy format) into out, nested dicts
 * flattened to dotted names (integer keys in decimal), int/float/bool values
 * as 0-d I64/F64/BOOL tensors, lists of numbers as 1-d tensors, other lists
 * indexed like dicts; strings, None and unknown objects are skipped. Every
 * tensor is copied out (an expanded, stride-0 view in full), so what the
 * tensors take is capped at 4x the file plus 16 MiB, and the walk at 2^20
 * values (shared references make the pickle a DAG): beyond, an error. */
int rn_pth_read(rn_tensors *out, const char *path, rn_err *err);
/* Same, from a file image held in memory. */
int rn_pth_parse(rn_tensors *out, const uint8_t *buf, size_t size, const char *path, rn_err *err);
/* torch's storage class for a dtype ("FloatStorage", "LongStorage", ...), NULL for none. */
const char *rn_pth_storage_type(rn_dtype dtype);

#endif
