/* rn_pthw: writes a torch.save file (the zip format of torch >= 1.6, as
 * torch.load reads it): a protocol-2 pickle built with rn_pkw in which each
 * tensor is torch._utils._rebuild_tensor_v2 over its own storage, the
 * storages as archive/data/<i>, archive/version "3". Atomic (rn_zipw).
 *
 *   rn_pthw w;
 *   rn_pthw_init(&w);
 *   rn_pkw_begin(&w.pk, RN_PKW_DICT);
 *   rn_pkw_str(&w.pk, "weight");
 *   rn_pthw_tensor(&w, RN_F32, 2, (int64_t[]){3, 4}, data);   // data borrowed until rn_pthw_write
 *   rn_pkw_end(&w.pk, RN_PKW_DICT);
 *   int rc = rn_pthw_write(&w, "w.pth", &err);                // adds STOP
 *   rn_pthw_free(&w);
 */
#ifndef RN_IO_PTH_WRITE_H
#define RN_IO_PTH_WRITE_H

#include "core/status.h"
#include "io/pickle_write.h"
#include "io/tensors.h"

typedef struct rn_pthw_storage {
    const void *data;
    size_t nbytes;
} rn_pthw_storage;

typedef struct rn_pthw {
    rn_pkw pk;
    rn_pthw_storage *st;
    int n_st, cap_st;
} rn_pthw;

void rn_pthw_init(rn_pthw *w);
void rn_pthw_free(rn_pthw *w);
/* A contiguous CPU tensor (requires_grad False) with its own storage; dtype
 * one torch has a storage for (F32, F64, F16, BF16, I64, I32, I16, I8, U8, BOOL). */
void rn_pthw_tensor(rn_pthw *w, rn_dtype dtype, int ndim, const int64_t *shape, const void *data);
/* Ends the pickle and writes the archive to path atomically. */
int rn_pthw_write(rn_pthw *w, const char *path, rn_err *err);

#endif
