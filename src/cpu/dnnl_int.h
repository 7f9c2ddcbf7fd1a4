/* Internal to the cpu device's oneDNN files: dnnl_prim.c (the backend, its shared buffers, primitives
 * and the staging of activations) and dnnl_conv.c (the convolutions on them). Not an interface: the
 * device includes cpu/dnnl.h.
 */
#ifndef RN_CPU_DNNL_INT_H
#define RN_CPU_DNNL_INT_H

#include <dnnl.h>
#include <dnnl_debug.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/dnnl.h"

enum { BUF_SCRATCH, BUF_STAGE_SRC, BUF_STAGE_DDST, BUF_DW, BUF_WFOLD, BUF_PHASE, BUF_WPHASE, BUF_COUNT };

typedef struct rn_buf {
    void *p;
    size_t n;
} rn_buf;

struct rn_dnnl {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    rn_buf buf[BUF_COUNT]; /* shared transient buffers, grown by rn_dnnl_conv_create */
    const rn_dnnl_conv *ddst_conv; /* whose diff_dst BUF_STAGE_DDST holds (bwd_weights), or NULL */
    const void *ddst_ptr;     /* and from which user pointer */
};

/* A primitive with its scratchpad memory (bound to the shared scratchpad). */
typedef struct rn_prim {
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    dnnl_memory_t scratch;
} rn_prim;

/* A user tensor staged into a primitive's own md in a shared buffer.
 * r.p == NULL when the primitive takes the user tensor as is. */
typedef struct rn_stage {
    rn_prim r;
    dnnl_memory_t m;
    int buf;
} rn_stage;

/* The forward of a stride-2 4x4 pad-1 deconvolution as four 2x2 stride-1 convolutions, one per
 * output phase (a, b) in {0,1}^2 (phases_fit): output pixel (2m+a, 2j+b) takes input rows m-1+a,
 * m+a and columns j-1+b, j+b only, with the deconv's taps 3-a-2r, 3-b-2t (r, t in {0,1}). Phase k =
 * 2a+b is a convolution with padding (1-a, 1-b) before and (a, b) after, weights gathered from the
 * deconv's; it writes the shared phase buffer, whose reorder puts it into dst's rows 2m+a and
 * columns 2j+b (a strided view of dst). oneDNN 2.6 runs these convs at ~95 % of the fp32 peak where
 * its deconvolution reaches 55-80 %, and takes their bias and ReLU as post-ops. */
typedef struct rn_phases {
    rn_prim op[4], rw[4], put[4];  /* convs, weights iohw -> conv format, phase buffer -> dst view */
    dnnl_memory_t m_w[4], m_view[4]; /* weights in conv format (owned), dst views (bound per call) */
    dnnl_memory_t m_wu, m_out;       /* one phase's gathered weights and output (shared buffers) */
    void *w[4];
    char name[96];                   /* impl name of the forward */
} rn_phases;

struct rn_dnnl_conv {
    rn_conv base;                    /* the device's view (nn/device.h); first */
    rn_dnnl *be;
    rn_conv_shape s;
    rn_prim op[3];                   /* fwd, bwd_data, bwd_weights; op[1].p NULL if not made */
    rn_prim rw_fwd, rw_bwd, rdw;     /* weights user->fwd, user->bwd_data, diff prim->user (+=) */
    rn_stage st_fwd_src, st_bwd_ddst, st_bww_src, st_bww_ddst;
    dnnl_memory_t m_src, m_dst, m_dsrc, m_ddst, m_wu; /* user buffers, bound per call */
    dnnl_memory_t m_wf, m_wb, m_dwp; /* weights fwd / bwd_data (owned), diff weights (shared) */
    void *wf, *wb;
    dnnl_memory_t m_bias, m_wfold;   /* fused epilogue: bias (owned), folded weights (shared, user layout) */
    float *bias;                     /* (OC) */
    void *keep_src;                  /* bf16 training: forward's staged src, owned, reused by bwd_weights */
    const void *kept_src_ptr;        /* user src pointer of the copy in keep_src */
    int ddst_shared;                 /* bwd_data and bwd_weights stage diff_dst identically */
    rn_phases *ph;                   /* the forward as four phase convs, or NULL (op[0] runs it) */
    rn_prim i8_out, i8_in;           /* int8 Conv2d: its nhwc dst (shared BUF_STAGE_DDST) -> dst, and the
                                        residual -> that nhwc buffer (RN_EPI_SUM) */
    dnnl_memory_t m_i8, m_res;       /* the nhwc dst (shared buffer), the residual (bound per call) */
    float *osc;                      /* int8 (s.compute RN_NUM_I8): per output channel, in_scale * the
                                        weights' scale, the forward's output scales (OC); else NULL */
};

/* Aborts on a failing oneDNN call in a step function: every shape and
 * format was validated at create time, so this is an invariant. */
#define RN_DNNL_CHECK(call)                                                                 \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) {                                                          \
            fprintf(stderr, "rootnet: internal error at %s:%d: %s failed: %s\n", __FILE__, \
                    __LINE__, #call, dnnl_status2str(st_));                                 \
            abort();                                                                        \
        }                                                                                   \
    } while (0)

#define RN_DNNL_TRY(call, what)                                                             \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) return rn_err_set(err, "oneDNN: %s: %s", (what),           \
                                                   dnnl_status2str(st_));                   \
    } while (0)

/* ---- dnnl_prim.c ---- */
/* 64-byte aligned bytes; aborts when out of memory. */
void *rn_dnnl_aligned_bytes(size_t n);
/* b at least n bytes (its contents lost when it grows). */
void rn_dnnl_buf_grow(rn_buf *b, size_t n);
/* Creates the primitive of p->pd and its scratchpad memory; grows the shared scratchpad. */
int rn_dnnl_prim_finish(rn_prim *p, rn_dnnl *be, rn_err *err);
int rn_dnnl_reorder_create(rn_prim *p, rn_dnnl *be, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                           const_dnnl_primitive_attr_t attr, rn_err *err);
void rn_dnnl_prim_destroy(rn_prim *p);
void rn_dnnl_bind(dnnl_memory_t m, const void *ptr);
/* Runs p with args (n of them, room for one more) plus the shared scratchpad. */
void rn_dnnl_prim_run(rn_dnnl *be, rn_prim *p, int n, dnnl_exec_arg_t *args);
void rn_dnnl_reorder_run(rn_dnnl *be, rn_prim *p, dnnl_memory_t from, dnnl_memory_t to);
/* A user activation staged into a primitive's md (want) in shared buffer buf, when the two differ. */
int rn_dnnl_stage_create(rn_stage *st, rn_dnnl *be, const dnnl_memory_desc_t *user, const dnnl_memory_desc_t *want,
                         int buf, const_dnnl_primitive_attr_t attr, rn_err *err);
/* The memory to hand to the primitive: user itself, or its staged copy. */
dnnl_memory_t rn_dnnl_stage_run(rn_dnnl *be, rn_stage *st, dnnl_memory_t user);
void rn_dnnl_stage_destroy(rn_stage *st);

#endif
