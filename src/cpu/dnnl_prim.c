/* The cpu device's oneDNN backend (cpu/dnnl.h): the engine and stream, the buffers shared by every
 * conv of a backend, primitives with their scratchpads, and the staging of user activations into a
 * primitive's own type or format (cpu/dnnl_int.h). The convolutions are dnnl_conv.c's.
 */
#include "cpu/dnnl_int.h"

#include <stdint.h>
#include <string.h>

/* ---- shared buffers ---- */

void *rn_dnnl_aligned_bytes(size_t n)
{
    void *p = NULL;
    size_t sz = (n + 63) / 64 * 64;
    if (posix_memalign(&p, 64, sz ? sz : 64)) {
        fprintf(stderr, "rootnet: out of memory allocating %zu bytes at %s:%d\n", n, __FILE__, __LINE__);
        abort();
    }
    return p;
}

void rn_dnnl_buf_grow(rn_buf *b, size_t n)
{
    if (n <= b->n) return;
    free(b->p);
    b->p = rn_dnnl_aligned_bytes(n);
    b->n = n;
}

/* ---- backend ---- */

int rn_dnnl_create(rn_dnnl **out, rn_err *err)
{
    *out = NULL;
    rn_dnnl *be = rn_xcalloc(1, sizeof *be);
    dnnl_status_t st = dnnl_engine_create(&be->eng, dnnl_cpu, 0);
    if (st == dnnl_success) st = dnnl_stream_create(&be->strm, be->eng, dnnl_stream_default_flags);
    if (st != dnnl_success) {
        rn_dnnl_destroy(be);
        return rn_err_set(err, "oneDNN: cannot create CPU engine/stream: %s", dnnl_status2str(st));
    }
    *out = be;
    return 0;
}

void rn_dnnl_destroy(rn_dnnl *be)
{
    if (!be) return;
    if (be->strm) dnnl_stream_destroy(be->strm);
    if (be->eng) dnnl_engine_destroy(be->eng);
    for (int i = 0; i < BUF_COUNT; i++) free(be->buf[i].p);
    free(be);
}

size_t rn_dnnl_shared_bytes(const rn_dnnl *be)
{
    size_t n = 0;
    for (int i = 0; i < BUF_COUNT; i++) n += be->buf[i].n;
    return n;
}

/* ---- primitives ---- */

/* Creates the primitive of p->pd and its scratchpad memory; grows the shared scratchpad. */
int rn_dnnl_prim_finish(rn_prim *p, rn_dnnl *be, rn_err *err)
{
    RN_DNNL_TRY(dnnl_primitive_create(&p->p, p->pd), "primitive creation");
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
    if (!md) return rn_err_set(err, "oneDNN: scratchpad query failed");
    RN_DNNL_TRY(dnnl_memory_create(&p->scratch, md, be->eng, DNNL_MEMORY_NONE), "scratchpad memory");
    rn_dnnl_buf_grow(&be->buf[BUF_SCRATCH], dnnl_memory_desc_get_size(md));
    return 0;
}

int rn_dnnl_reorder_create(rn_prim *p, rn_dnnl *be, const dnnl_memory_desc_t *from,
                          const dnnl_memory_desc_t *to, const_dnnl_primitive_attr_t attr, rn_err *err)
{
    RN_DNNL_TRY(dnnl_reorder_primitive_desc_create(&p->pd, from, be->eng, to, be->eng, attr), "reorder");
    return rn_dnnl_prim_finish(p, be, err);
}

void rn_dnnl_prim_destroy(rn_prim *p)
{
    if (p->scratch) dnnl_memory_destroy(p->scratch);
    if (p->p) dnnl_primitive_destroy(p->p);
    if (p->pd) dnnl_primitive_desc_destroy(p->pd);
    memset(p, 0, sizeof *p);
}

void rn_dnnl_bind(dnnl_memory_t m, const void *ptr)
{
    RN_DNNL_CHECK(dnnl_memory_set_data_handle(m, (void *)(uintptr_t)ptr));
}

/* Runs p with args (n of them, room for one more) plus the shared scratchpad. */
void rn_dnnl_prim_run(rn_dnnl *be, rn_prim *p, int n, dnnl_exec_arg_t *args)
{
    rn_dnnl_bind(p->scratch, be->buf[BUF_SCRATCH].p);
    args[n] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, p->scratch};
    RN_DNNL_CHECK(dnnl_primitive_execute(p->p, be->strm, n + 1, args));
    RN_DNNL_CHECK(dnnl_stream_wait(be->strm));
}

void rn_dnnl_reorder_run(rn_dnnl *be, rn_prim *p, dnnl_memory_t from, dnnl_memory_t to)
{
    dnnl_exec_arg_t a[3] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    rn_dnnl_prim_run(be, p, 2, a);
}

/* ---- staging of user activations into a primitive's md ---- */

int rn_dnnl_stage_create(rn_stage *st, rn_dnnl *be, const dnnl_memory_desc_t *user,
                        const dnnl_memory_desc_t *want, int buf, const_dnnl_primitive_attr_t attr,
                        rn_err *err)
{
    st->buf = buf;
    if (dnnl_memory_desc_equal(user, want)) return 0;
    if (rn_dnnl_reorder_create(&st->r, be, user, want, attr, err)) return -1;
    RN_DNNL_TRY(dnnl_memory_create(&st->m, want, be->eng, DNNL_MEMORY_NONE), "staging memory");
    rn_dnnl_buf_grow(&be->buf[buf], dnnl_memory_desc_get_size(want));
    return 0;
}

/* Returns the memory to hand to the primitive: user itself, or its staged copy. */
dnnl_memory_t rn_dnnl_stage_run(rn_dnnl *be, rn_stage *st, dnnl_memory_t user)
{
    if (!st->r.p) return user;
    rn_dnnl_bind(st->m, be->buf[st->buf].p);
    rn_dnnl_reorder_run(be, &st->r, user, st->m);
    return st->m;
}

void rn_dnnl_stage_destroy(rn_stage *st)
{
    rn_dnnl_prim_destroy(&st->r);
    if (st->m) dnnl_memory_destroy(st->m);
    st->m = NULL;
}

