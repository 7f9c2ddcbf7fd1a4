#include "io/pth_write.h"

#include <stdio.h>
#include <string.h>

#include "io/zip_write.h"

#define ARCHIVE "archive" /* the record prefix torch.save uses for a file object; torch.load takes any */

void rn_pthw_init(rn_pthw *w)
{
    memset(w, 0, sizeof *w);
    rn_pkw_init(&w->pk);
}

void rn_pthw_free(rn_pthw *w)
{
    rn_pkw_free(&w->pk);
    free(w->st);
    memset(w, 0, sizeof *w);
}

static void shape_tuple(rn_pkw *pk, int ndim, const int64_t *v)
{
    rn_pkw_begin(pk, RN_PKW_TUPLE);
    for (int d = 0; d < ndim; d++) rn_pkw_int(pk, v[d]);
    rn_pkw_end(pk, RN_PKW_TUPLE);
}

void rn_pthw_tensor(rn_pthw *w, rn_dtype dtype, int ndim, const int64_t *shape, const void *data)
{
    const char *type = rn_pth_storage_type(dtype);
    RN_ASSERT(type && ndim >= 0 && ndim <= RN_TENSOR_MAXDIM);
    int64_t numel = 0, stride[RN_TENSOR_MAXDIM];
    RN_ASSERT(!rn_shape_numel(&numel, ndim, shape));
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) stride[d] = s, s *= shape[d];
    if (w->n_st == w->cap_st) {
        w->cap_st = w->cap_st ? 2 * w->cap_st : 256;
        rn_pthw_storage *st = realloc(w->st, (size_t)w->cap_st * sizeof *st);
        RN_ASSERT(st);
        w->st = st;
    }
    w->st[w->n_st] = (rn_pthw_storage){data, (size_t)numel * rn_dtype_size(dtype)};
    char key[32];
    snprintf(key, sizeof key, "%d", w->n_st++);
    rn_pkw *pk = &w->pk;
    rn_pkw_global(pk, "torch._utils", "_rebuild_tensor_v2");
    rn_pkw_begin(pk, RN_PKW_TUPLE);
    rn_pkw_begin(pk, RN_PKW_TUPLE); /* ('storage', torch.FloatStorage, key, 'cpu', numel) */
    rn_pkw_str(pk, "storage");
    rn_pkw_global(pk, "torch", type);
    rn_pkw_str(pk, key);
    rn_pkw_str(pk, "cpu");
    rn_pkw_int(pk, numel);
    rn_pkw_end(pk, RN_PKW_TUPLE);
    rn_pkw_persid(pk);
    rn_pkw_int(pk, 0); /* storage offset */
    shape_tuple(pk, ndim, shape);
    shape_tuple(pk, ndim, stride);
    rn_pkw_bool(pk, 0); /* requires_grad */
    rn_pkw_ordered_dict(pk); /* backward hooks */
    rn_pkw_end(pk, RN_PKW_TUPLE);
    rn_pkw_reduce(pk);
}

int rn_pthw_write(rn_pthw *w, const char *path, rn_err *err)
{
    rn_pkw_stop(&w->pk);
    rn_zipw z;
    if (rn_zipw_open(&z, path, err) || rn_zipw_add(&z, ARCHIVE "/data.pkl", w->pk.b, w->pk.n, err)) return -1;
    for (int i = 0; i < w->n_st; i++) {
        char name[64];
        snprintf(name, sizeof name, ARCHIVE "/data/%d", i);
        if (rn_zipw_add(&z, name, w->st[i].data, w->st[i].nbytes, err)) return -1;
    }
    if (rn_zipw_add(&z, ARCHIVE "/version", "3\n", 2, err)) return -1;
    return rn_zipw_commit(&z, err);
}
