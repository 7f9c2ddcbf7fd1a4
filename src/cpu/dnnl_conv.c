/* The cpu device's convolutions on oneDNN 2.6 (cpu/dnnl.h). Every oneDNN
 * call of rootnet lives in this file and dnnl_prim.c.
 *
 * Each rn_dnnl_conv owns its primitives (fwd, bwd_data, bwd_weights), the weight
 * reorders (user -> fwd format, user -> bwd_data format, diff weights ->
 * user layout with a sum post-op so that it accumulates) and, when a
 * primitive wants its activations in another type or format than the user's
 * (bf16), reorders that stage them. Per-conv persistent data (reordered
 * weights) is owned by the conv; transient data (scratchpad, staged bf16
 * activations, diff weights in primitive format) lives in buffers shared by
 * every conv of a backend, grown at create time. Those shared buffers mean
 * that the convs of one backend must not run concurrently. A stride-2 4x4
 * pad-1 deconvolution runs its forward as four convolutions (rn_phases). The backend, its buffers,
 * primitives and staging are dnnl_prim.c's.
 */
#include "cpu/dnnl_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- descriptors ---- */

typedef struct rn_mds {
    dnnl_memory_desc_t src, dst, w;         /* user layouts (activations in s->act) */
    dnnl_memory_desc_t p_src, p_dst, p_w;   /* requested of the primitives (type, any) */
    dnnl_memory_desc_t p_dsrc, p_ddst, p_dw;
    dnnl_memory_desc_t bias;                /* (OC) f32, for a fused epilogue */
    dnnl_memory_desc_t ph_wu, ph_w, ph_out; /* phase convs (rn_phases): user weights, requested, output */
    dnnl_memory_desc_t ph_blk;              /* a phase's output dims in nChw16c, the base of its view of dst */
} rn_mds;

static int mds_init(rn_mds *d, const rn_conv_shape *s, rn_err *err)
{
    const dnnl_dims_t src = {s->n, s->ic, s->ih, s->iw}, dst = {s->n, s->oc, s->oh, s->ow};
    const dnnl_dims_t w = {s->oc, s->ic, s->kh, s->kw};
    const int i8 = s->compute == RN_NUM_I8;
    const dnnl_data_type_t ct = s->compute == RN_NUM_BF16 ? dnnl_bf16 : dnnl_f32;
    const dnnl_data_type_t at = s->act == RN_NUM_BF16 ? dnnl_bf16 : dnnl_f32;
    const dnnl_data_type_t st = i8 ? dnnl_u8 : ct, wt = i8 ? dnnl_s8 : ct;
    /* oneDNN 2.6's int8 convs (brgconv) take src and dst in nhwc only (nChw16c gets ref_int8, ~100x slower) */
    const dnnl_format_tag_t stag = s->src_plain ? dnnl_nchw : i8 ? dnnl_nhwc : dnnl_nChw16c;
    const dnnl_format_tag_t ptag = i8 ? dnnl_nhwc : dnnl_nChw16c;
    const dnnl_data_type_t ust = s->src_plain ? dnnl_f32 : s->src_u8 ? dnnl_u8 : at;
    const dnnl_data_type_t udt = s->out_scale > 0 ? dnnl_u8 : at;
    const dnnl_format_tag_t ustag = s->src_plain ? dnnl_nchw : s->src_u8 || s->src_nhwc ? dnnl_nhwc : dnnl_nChw16c;
    const int dst_nhwc = s->dst_nhwc || s->out_scale > 0;
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->src, 4, src, ust, ustag), "src md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->dst, 4, dst, udt, dst_nhwc ? dnnl_nhwc : dnnl_nChw16c), "dst md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->w, 4, w, dnnl_f32, s->transposed ? dnnl_iohw : dnnl_oihw), "weights md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_src, 4, src, st, stag), "src md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_dst, 4, dst, udt, ptag), "dst md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_w, 4, w, wt, dnnl_format_tag_any), "weights md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_dsrc, 4, src, at, dnnl_nChw16c), "diff_src md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_ddst, 4, dst, ct, dnnl_nChw16c), "diff_dst md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->p_dw, 4, w, dnnl_f32, dnnl_format_tag_any), "diff_weights md");
    const dnnl_dims_t b = {s->oc};
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->bias, 1, b, dnnl_f32, dnnl_x), "bias md");
    const dnnl_dims_t pw = {s->oc, s->ic, 2, 2}, po = {s->n, s->oc, s->ih, s->iw};
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->ph_wu, 4, pw, dnnl_f32, dnnl_iohw), "phase weights md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->ph_w, 4, pw, wt, dnnl_format_tag_any), "phase weights md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->ph_out, 4, po, at, ptag), "phase output md");
    RN_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->ph_blk, 4, po, at, dnnl_nChw16c), "phase output md");
    return 0;
}

/* Inits the op descriptor of direction dir (0 fwd, 1 bwd_data, 2 bwd_weights). */
static dnnl_status_t op_desc_init(dnnl_convolution_desc_t *od, const rn_conv_shape *s, const rn_mds *d, int dir)
{
    const dnnl_dims_t str = {s->sh, s->sw}, pad = {s->ph, s->pw};
    const dnnl_prop_kind_t fk = s->forward_only ? dnnl_forward_inference : dnnl_forward_training;
    const dnnl_memory_desc_t *bias = s->epilogue && !s->transposed ? &d->bias : NULL;
    if (s->transposed) {
        const dnnl_alg_kind_t a = dnnl_deconvolution_direct;
        if (dir == 0)
            return dnnl_deconvolution_forward_desc_init(od, fk, a, &d->p_src, &d->p_w, bias,
                                                        &d->p_dst, str, pad, pad);
        if (dir == 1)
            return dnnl_deconvolution_backward_data_desc_init(od, a, &d->p_dsrc, &d->p_w, &d->p_ddst, str, pad, pad);
        return dnnl_deconvolution_backward_weights_desc_init(od, a, &d->p_src, &d->p_dw, NULL, &d->p_ddst, str, pad,
                                                             pad);
    }
    const dnnl_alg_kind_t a = s->algo == RN_ALGO_WINOGRAD ? dnnl_convolution_winograd : dnnl_convolution_direct;
    if (dir == 0)
        return dnnl_convolution_forward_desc_init(od, fk, a, &d->p_src, &d->p_w, bias, &d->p_dst,
                                                  str, pad, pad);
    if (dir == 1) return dnnl_convolution_backward_data_desc_init(od, a, &d->p_dsrc, &d->p_w, &d->p_ddst, str, pad, pad);
    return dnnl_convolution_backward_weights_desc_init(od, a, &d->p_src, &d->p_dw, NULL, &d->p_ddst, str, pad, pad);
}

static const char *DIR_NAME[3] = {"forward", "backward_data", "backward_weights"};

/* Direction dir's primitive descriptor and, unless pd_only, its primitive. */
static int op_create(rn_dnnl_conv *c, const rn_mds *d, int dir, const_dnnl_primitive_attr_t attr, int pd_only,
                     rn_err *err)
{
    dnnl_convolution_desc_t od;
    dnnl_status_t st = op_desc_init(&od, &c->s, d, dir);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&c->op[dir].pd, &od, attr, c->be->eng, dir ? c->op[0].pd : NULL);
    if (st != dnnl_success)
        return rn_err_set(err, "oneDNN: no %s%s %s primitive for this shape: %s",
                          c->s.compute == RN_NUM_BF16 ? "bf16 " : c->s.compute == RN_NUM_I8 ? "int8 " : "", c->s.transposed ? "deconvolution" : "convolution",
                          DIR_NAME[dir], dnnl_status2str(st));
    return pd_only ? 0 : rn_dnnl_prim_finish(&c->op[dir], c->be, err);
}

static const dnnl_memory_desc_t *op_md(const rn_dnnl_conv *c, int dir, dnnl_query_t q)
{
    return dnnl_primitive_desc_query_md(c->op[dir].pd, q, 0);
}

/* Owned weights buffer of md want (zeroed) and the reorder from user md `from` into it. */
static int weights_owned(rn_dnnl *be, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *want, rn_prim *r,
                         dnnl_memory_t *m, void **buf, const_dnnl_primitive_attr_t attr, rn_err *err)
{
    if (rn_dnnl_reorder_create(r, be, from, want, attr, err)) return -1;
    *buf = rn_dnnl_aligned_bytes(dnnl_memory_desc_get_size(want));
    memset(*buf, 0, dnnl_memory_desc_get_size(want));
    RN_DNNL_TRY(dnnl_memory_create(m, want, be->eng, *buf), "weights memory");
    return 0;
}

/* Owned weights buffer in direction dir's format and the user->that reorder. */
static int weights_create(rn_dnnl_conv *c, const rn_mds *d, int dir, rn_prim *r, dnnl_memory_t *m, void **buf,
                          const_dnnl_primitive_attr_t attr, rn_err *err)
{
    return weights_owned(c->be, &d->w, op_md(c, dir, dnnl_query_weights_md), r, m, buf, attr, err);
}

/* bwd_weights: diff weights in the primitive's format (shared buffer) and
 * the accumulating reorder back into the user's layout. */
static int diff_weights_create(rn_dnnl_conv *c, const rn_mds *d, rn_err *err)
{
    const dnnl_memory_desc_t *dw = op_md(c, 2, dnnl_query_diff_weights_md);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success) st = dnnl_post_ops_create(&po);
    if (st == dnnl_success) st = dnnl_post_ops_append_sum(po, 1.0f);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
    int rc = st == dnnl_success ? rn_dnnl_reorder_create(&c->rdw, c->be, dw, &d->w, attr, err)
                                : rn_err_set(err, "oneDNN: accumulate attr: %s", dnnl_status2str(st));
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (rc) return -1;
    RN_DNNL_TRY(dnnl_memory_create(&c->m_dwp, dw, c->be->eng, DNNL_MEMORY_NONE), "diff weights memory");
    rn_dnnl_buf_grow(&c->be->buf[BUF_DW], dnnl_memory_desc_get_size(dw));
    return 0;
}

static int user_mems_create(rn_dnnl_conv *c, const rn_mds *d, rn_err *err)
{
    dnnl_engine_t e = c->be->eng;
    RN_DNNL_TRY(dnnl_memory_create(&c->m_src, &d->src, e, DNNL_MEMORY_NONE), "src memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_dst, &d->dst, e, DNNL_MEMORY_NONE), "dst memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_dsrc, &d->src, e, DNNL_MEMORY_NONE), "diff_src memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_ddst, &d->dst, e, DNNL_MEMORY_NONE), "diff_dst memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_wu, &d->w, e, DNNL_MEMORY_NONE), "weights memory");
    return 0;
}

/* A user-scratchpad attr; with post-ops for the fused epilogue (sum, then ReLU) when epi. */
static dnnl_status_t attr_create(dnnl_primitive_attr_t *attr, int epi)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st = dnnl_primitive_attr_create(attr);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    if (st != dnnl_success || !(epi & (RN_EPI_SUM | RN_EPI_RELU))) return st;
    st = dnnl_post_ops_create(&po);
    if (st == dnnl_success && (epi & RN_EPI_SUM)) st = dnnl_post_ops_append_sum(po, 1.0f);
    if (st == dnnl_success && (epi & RN_EPI_RELU)) st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(*attr, po);
    if (po) dnnl_post_ops_destroy(po);
    return st;
}

/* attr_create, and for an int8 conv its per-output-channel output scales (c->osc). */
static dnnl_status_t attr_create_fwd(dnnl_primitive_attr_t *attr, const rn_dnnl_conv *c, int epi)
{
    dnnl_status_t st = attr_create(attr, epi);
    if (st == dnnl_success && c->osc) st = dnnl_primitive_attr_set_output_scales(*attr, c->s.oc, 1 << 1, c->osc);
    return st;
}

/* ---- a deconvolution's forward as four phase convolutions (rn_phases) ---- */

/* 1 if s is a deconvolution whose forward runs as four phase convs. */
static int phases_fit(const rn_conv_shape *s)
{
    return s->transposed && s->kh == 4 && s->kw == 4 && s->sh == 2 && s->sw == 2 && s->ph == 1 && s->pw == 1;
}

/* Phase k's view of dst (nChw16c): its dims are the input's, its rows 2m+a and columns 2j+b of dst. */
static int phase_view_md(dnnl_memory_desc_t *v, const rn_mds *d, const rn_conv_shape *s, int k, rn_err *err)
{
    *v = d->ph_blk;
    if (v->format_kind != dnnl_blocked) return rn_err_set(err, "oneDNN: phase output md is not blocked");
    dnnl_dim_t *st = v->format_desc.blocking.strides, ow = s->ow, plane = (dnnl_dim_t)s->oh * ow * 16;
    st[0] = v->padded_dims[1] / 16 * plane;
    st[1] = plane;
    st[2] = 2 * ow * 16;
    st[3] = 2 * 16;
    v->offset0 = ((k >> 1) * ow + (k & 1)) * 16;
    return 0;
}

/* Phase k's conv primitive (attr: its post-ops and int8 output scales; bias when s.epilogue). */
static int phase_op_create(rn_dnnl_conv *c, const rn_mds *d, int k, const_dnnl_primitive_attr_t attr, rn_err *err)
{
    rn_phases *p = c->ph;
    const int a = k >> 1, b = k & 1;
    const dnnl_dims_t one = {1, 1}, lo = {1 - a, 1 - b}, hi = {a, b};
    const dnnl_memory_desc_t *bias = c->s.epilogue ? &d->bias : NULL;
    dnnl_convolution_desc_t od;
    RN_DNNL_TRY(dnnl_convolution_forward_desc_init(&od, dnnl_forward_inference, dnnl_convolution_direct, &d->p_src,
                                                   &d->ph_w, bias, &d->ph_out, one, lo, hi), "phase conv");
    RN_DNNL_TRY(dnnl_primitive_desc_create(&p->op[k].pd, &od, attr, c->be->eng, NULL), "phase conv");
    return rn_dnnl_prim_finish(&p->op[k], c->be, err);
}

/* The src md the forward wants: the deconvolution's, or for int8 phases (no deconvolution made) the phases'. */
static const dnnl_memory_desc_t *fwd_src_md(const rn_dnnl_conv *c, const rn_mds *d)
{
    return c->op[0].pd ? dnnl_primitive_desc_query_md(c->op[0].pd, dnnl_query_src_md, 0) : &d->p_src;
}

/* Phase k's conv, its weights and its put into dst. */
static int phase_create(rn_dnnl_conv *c, const rn_mds *d, int k, const_dnnl_primitive_attr_t attr,
                        const_dnnl_primitive_attr_t rattr, rn_err *err)
{
    rn_phases *p = c->ph;
    dnnl_memory_desc_t view;
    if (phase_op_create(c, d, k, attr, err)) return -1;
    if (!dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(p->op[k].pd, dnnl_query_src_md, 0), fwd_src_md(c, d)))
        return rn_err_set(err, "oneDNN: phase conv %d wants another src format than the deconvolution", k);
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(p->op[k].pd, dnnl_query_weights_md, 0);
    if (weights_owned(c->be, &d->ph_wu, want, &p->rw[k], &p->m_w[k], &p->w[k], rattr, err)) return -1;
    if (phase_view_md(&view, d, &c->s, k, err) || rn_dnnl_reorder_create(&p->put[k], c->be, &d->ph_out, &view, rattr, err))
        return -1;
    RN_DNNL_TRY(dnnl_memory_create(&p->m_view[k], &view, c->be->eng, DNNL_MEMORY_NONE), "phase view memory");
    return 0;
}

static int phases_build(rn_dnnl_conv *c, const rn_mds *d, const_dnnl_primitive_attr_t attr,
                        const_dnnl_primitive_attr_t rattr, rn_err *err)
{
    rn_phases *p = c->ph;
    for (int k = 0; k < 4; k++)
        if (phase_create(c, d, k, attr, rattr, err)) return -1;
    RN_DNNL_TRY(dnnl_memory_create(&p->m_wu, &d->ph_wu, c->be->eng, DNNL_MEMORY_NONE), "phase weights memory");
    RN_DNNL_TRY(dnnl_memory_create(&p->m_out, &d->ph_out, c->be->eng, DNNL_MEMORY_NONE), "phase output memory");
    rn_dnnl_buf_grow(&c->be->buf[BUF_WPHASE], 4 * dnnl_memory_desc_get_size(&d->ph_wu));
    rn_dnnl_buf_grow(&c->be->buf[BUF_PHASE], dnnl_memory_desc_get_size(&d->ph_out));
    const char *name = NULL;
    dnnl_primitive_desc_query(p->op[0].pd, dnnl_query_impl_info_str, 0, &name);
    snprintf(p->name, sizeof p->name, "phases:%s", name ? name : "unknown");
    return 0;
}

/* The four phase convs of c->ph, with the fused epilogue's bias and ReLU as post-ops. */
static int phases_create(rn_dnnl_conv *c, const rn_mds *d, rn_err *err)
{
    dnnl_primitive_attr_t attr = NULL, rattr = NULL;
    dnnl_status_t st = attr_create_fwd(&attr, c, c->s.epilogue & RN_EPI_RELU);
    if (st == dnnl_success) st = attr_create(&rattr, 0);
    int rc = st != dnnl_success ? rn_err_set(err, "oneDNN: attr: %s", dnnl_status2str(st))
                                : phases_build(c, d, attr, rattr, err);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (rattr) dnnl_primitive_attr_destroy(rattr);
    return rc;
}

static void phases_destroy(rn_phases *p)
{
    if (!p) return;
    for (int k = 0; k < 4; k++) {
        rn_dnnl_prim_destroy(&p->op[k]);
        rn_dnnl_prim_destroy(&p->rw[k]);
        rn_dnnl_prim_destroy(&p->put[k]);
        if (p->m_w[k]) dnnl_memory_destroy(p->m_w[k]);
        if (p->m_view[k]) dnnl_memory_destroy(p->m_view[k]);
        free(p->w[k]);
    }
    if (p->m_wu) dnnl_memory_destroy(p->m_wu);
    if (p->m_out) dnnl_memory_destroy(p->m_out);
    free(p);
}

/* g = the four phases' 2x2 weights of the deconv weights w, in one pass over w:
 * g(k, i, o, r, t) = w(i, o, 3-a-2r, 3-b-2t) for phase k = 2a+b. */
static void phase_weights_gather(float *g, const float *w, size_t ic_oc)
{
    /* g: (4, IC, OC, 2, 2); w: (IC, OC, 4, 4) */
#pragma omp parallel for
    for (size_t io = 0; io < ic_oc; io++)
        for (int k = 0; k < 4; k++)
            for (int r = 0; r < 2; r++)
                for (int t = 0; t < 2; t++)
                    g[((size_t)k * ic_oc + io) * 4 + r * 2 + t] = w[io * 16 + (3 - (k >> 1) - 2 * r) * 4 + 3 - (k & 1) - 2 * t];
}

/* Each phase conv's weights from the deconv weights w (IC, OC, 4, 4). */
static void phases_set_weights(rn_dnnl_conv *c, const float *w)
{
    rn_phases *p = c->ph;
    float *g = c->be->buf[BUF_WPHASE].p;
    const size_t ic_oc = (size_t)c->s.ic * c->s.oc;
    phase_weights_gather(g, w, ic_oc);
    for (int k = 0; k < 4; k++) {
        rn_dnnl_bind(p->m_wu, g + (size_t)k * ic_oc * 4);
        rn_dnnl_reorder_run(c->be, &p->rw[k], p->m_wu, p->m_w[k]);
    }
}

/* dst = the deconvolution of src (staged), phase by phase; with the bias (fused epilogue) when bias. */
static void phases_forward(rn_dnnl_conv *c, void *dst, dnnl_memory_t src, int bias)
{
    rn_phases *p = c->ph;
    rn_dnnl_bind(p->m_out, c->be->buf[BUF_PHASE].p);
    for (int k = 0; k < 4; k++) {
        dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->m_w[k]}, {DNNL_ARG_DST, p->m_out},
                                {DNNL_ARG_BIAS, c->m_bias}};
        rn_dnnl_prim_run(c->be, &p->op[k], bias ? 4 : 3, a);
        rn_dnnl_bind(p->m_view[k], dst);
        rn_dnnl_reorder_run(c->be, &p->put[k], p->m_out, p->m_view[k]);
    }
}

/* The forward's src staging: a reorder into the primitive's md; for int8 quantising to u8 (scale 1 / in_scale). */
static int fwd_stage_create(rn_dnnl_conv *c, const rn_mds *d, const_dnnl_primitive_attr_t attr, rn_err *err)
{
    if (c->s.compute != RN_NUM_I8)
        return rn_dnnl_stage_create(&c->st_fwd_src, c->be, &d->src, fwd_src_md(c, d), BUF_STAGE_SRC, attr, err);
    dnnl_primitive_attr_t q = NULL;
    const float inv = 1.0f / c->s.in_scale;
    dnnl_status_t st = attr_create(&q, 0);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_output_scales(q, 1, 0, &inv);
    int rc = st != dnnl_success ? rn_err_set(err, "oneDNN: quantising attr: %s", dnnl_status2str(st))
                                : rn_dnnl_stage_create(&c->st_fwd_src, c->be, &d->src, fwd_src_md(c, d), BUF_STAGE_SRC,
                                                       q, err);
    if (q) dnnl_primitive_attr_destroy(q);
    return rc;
}

/* fwd (with fattr: its post-ops) and its weights/staging; bwd_data (unless excluded) likewise. An int8
 * deconvolution makes no deconvolution primitive: its phase convs are its forward. */
static int fwd_bwd_data_create(rn_dnnl_conv *c, const rn_mds *d, const_dnnl_primitive_attr_t attr,
                               const_dnnl_primitive_attr_t fattr, rn_err *err)
{
    if (!(c->ph && c->osc) && op_create(c, d, 0, fattr, c->ph != NULL, err)) return -1;
    if (c->ph ? phases_create(c, d, err) : weights_create(c, d, 0, &c->rw_fwd, &c->m_wf, &c->wf, attr, err)) return -1;
    if (fwd_stage_create(c, d, attr, err)) return -1;
    if (c->s.no_bwd_data || c->s.src_plain || c->s.forward_only) return 0;
    if (op_create(c, d, 1, attr, 0, err)) return -1;
    if (weights_create(c, d, 1, &c->rw_bwd, &c->m_wb, &c->wb, attr, err)) return -1;
    return rn_dnnl_stage_create(&c->st_bwd_ddst, c->be, &d->dst, op_md(c, 1, dnnl_query_diff_dst_md), BUF_STAGE_DDST, attr,
                        err);
}

/* Staging shared between directions: forward's staged src kept for
 * bwd_weights (own buffer) when both want the same md; one staged diff_dst
 * for bwd_weights and the bwd_data call that follows it. */
static void staging_share(rn_dnnl_conv *c)
{
    if (c->st_fwd_src.r.p && c->st_bww_src.r.p &&
        dnnl_memory_desc_equal(op_md(c, 0, dnnl_query_src_md), op_md(c, 2, dnnl_query_src_md)))
        c->keep_src = rn_dnnl_aligned_bytes(dnnl_memory_desc_get_size(op_md(c, 0, dnnl_query_src_md)));
    c->ddst_shared = c->st_bwd_ddst.r.p && c->st_bww_ddst.r.p &&
                     dnnl_memory_desc_equal(op_md(c, 1, dnnl_query_diff_dst_md), op_md(c, 2, dnnl_query_diff_dst_md));
}

static int bwd_weights_create(rn_dnnl_conv *c, const rn_mds *d, const_dnnl_primitive_attr_t attr, rn_err *err)
{
    if (op_create(c, d, 2, attr, 0, err)) return -1;
    if (diff_weights_create(c, d, err)) return -1;
    if (rn_dnnl_stage_create(&c->st_bww_src, c->be, &d->src, op_md(c, 2, dnnl_query_src_md), BUF_STAGE_SRC, attr, err))
        return -1;
    if (rn_dnnl_stage_create(&c->st_bww_ddst, c->be, &d->dst, op_md(c, 2, dnnl_query_diff_dst_md), BUF_STAGE_DDST, attr,
                     err))
        return -1;
    staging_share(c);
    return 0;
}

/* int8 Conv2d: the reorders of its nhwc dst into the user's dst and of the residual into it. */
static int int8_dst_create(rn_dnnl_conv *c, const rn_mds *d, rn_err *err)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t st = attr_create(&attr, 0);
    int rc = st != dnnl_success ? rn_err_set(err, "oneDNN: attr: %s", dnnl_status2str(st))
             : rn_dnnl_reorder_create(&c->i8_out, c->be, &d->p_dst, &d->dst, attr, err) ? -1
             : (c->s.epilogue & RN_EPI_SUM)
                 ? rn_dnnl_reorder_create(&c->i8_in, c->be, c->s.res_nhwc ? &d->p_dst : &d->dst, &d->p_dst, attr, err)
                 : 0;
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (rc) return -1;
    RN_DNNL_TRY(dnnl_memory_create(&c->m_i8, &d->p_dst, c->be->eng, DNNL_MEMORY_NONE), "int8 dst memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_res, c->s.res_nhwc ? &d->p_dst : &d->dst, c->be->eng, DNNL_MEMORY_NONE),
                "residual memory");
    rn_dnnl_buf_grow(&c->be->buf[BUF_STAGE_DDST], dnnl_memory_desc_get_size(&d->p_dst));
    return 0;
}

/* Fused epilogue: the owned bias and the shared buffer the folded weights are made in. */
static int fold_create(rn_dnnl_conv *c, const rn_mds *d, rn_err *err)
{
    if (c->osc && !c->ph && !dnnl_memory_desc_equal(&d->p_dst, &d->dst) && int8_dst_create(c, d, err)) return -1;
    c->bias = rn_dnnl_aligned_bytes((size_t)c->s.oc * sizeof *c->bias);
    memset(c->bias, 0, (size_t)c->s.oc * sizeof *c->bias);
    RN_DNNL_TRY(dnnl_memory_create(&c->m_bias, &d->bias, c->be->eng, c->bias), "bias memory");
    RN_DNNL_TRY(dnnl_memory_create(&c->m_wfold, &d->w, c->be->eng, DNNL_MEMORY_NONE), "folded weights memory");
    rn_dnnl_buf_grow(&c->be->buf[BUF_WFOLD], dnnl_memory_desc_get_size(&d->w));
    return 0;
}

static int conv_build(rn_dnnl_conv *c, rn_err *err)
{
    rn_mds d;
    if (mds_init(&d, &c->s, err) || user_mems_create(c, &d, err)) return -1;
    dnnl_primitive_attr_t attr = NULL, fattr = NULL;
    dnnl_status_t st = attr_create(&attr, 0);
    /* A deconv's bias and ReLU run as a pass after it (deconv_epilogue): oneDNN 2.6's
     * deconvolution with a bias and post-ops measured 3.5x slower than without. (RootNet's
     * deconvs run as phase convs, rn_phases, which take them as post-ops.) */
    if (st == dnnl_success) st = attr_create_fwd(&fattr, c, c->s.transposed ? 0 : c->s.epilogue);
    int rc = st != dnnl_success                        ? rn_err_set(err, "oneDNN: attr: %s", dnnl_status2str(st))
             : fwd_bwd_data_create(c, &d, attr, fattr, err) ? -1
             : c->s.epilogue                                ? fold_create(c, &d, err)
             : c->s.forward_only                            ? 0
                                                            : bwd_weights_create(c, &d, attr, err);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (fattr) dnnl_primitive_attr_destroy(fattr);
    return rc;
}

int rn_dnnl_conv_create(rn_dnnl_conv **out, rn_dnnl *be, const rn_conv_shape *s, rn_err *err)
{
    *out = NULL;
    if (rn_conv_shape_check(s, err)) return -1;
    if (s->compute == RN_NUM_F16) return rn_err_set(err, "oneDNN backend: fp16 compute needs the CUDA backend");
    if (s->act == RN_NUM_BF16 && s->compute != RN_NUM_BF16)
        return rn_err_set(err, "oneDNN backend: bf16 activations need bf16 compute");
    if (s->algo == RN_ALGO_WINOGRAD && (s->transposed || s->compute != RN_NUM_F32))
        return rn_err_set(err, "oneDNN backend: Winograd is only for fp32 Conv2d");
    if (s->compute == RN_NUM_I8 && s->transposed && !phases_fit(s))
        return rn_err_set(err, "oneDNN backend: an int8 deconvolution must be stride 2, kernel 4, padding 1");
    rn_dnnl_conv *c = rn_xcalloc(1, sizeof *c);
    c->be = be;
    c->s = *s;
    c->base.s = *s;
    if (phases_fit(s)) c->ph = rn_xcalloc(1, sizeof *c->ph);
    if (s->compute == RN_NUM_I8) {
        c->osc = rn_xmalloc((size_t)s->oc * sizeof *c->osc);
        for (int i = 0; i < s->oc; i++) c->osc[i] = 1.0f;
    }
    if (conv_build(c, err)) {
        rn_dnnl_conv_destroy(c);
        return rn_err_prefix(err, "conv %dx%dx%d -> %dx%dx%d, kernel %dx%d", s->ic, s->ih, s->iw, s->oc, s->oh, s->ow,
                             s->kh, s->kw);
    }
    *out = c;
    return 0;
}

void rn_dnnl_conv_destroy(rn_dnnl_conv *c)
{
    if (!c) return;
    for (int i = 0; i < 3; i++) rn_dnnl_prim_destroy(&c->op[i]);
    phases_destroy(c->ph);
    rn_dnnl_prim_destroy(&c->rw_fwd);
    rn_dnnl_prim_destroy(&c->rw_bwd);
    rn_dnnl_prim_destroy(&c->rdw);
    rn_dnnl_prim_destroy(&c->i8_out);
    rn_dnnl_prim_destroy(&c->i8_in);
    rn_dnnl_stage_destroy(&c->st_fwd_src);
    rn_dnnl_stage_destroy(&c->st_bwd_ddst);
    rn_dnnl_stage_destroy(&c->st_bww_src);
    rn_dnnl_stage_destroy(&c->st_bww_ddst);
    dnnl_memory_t ms[] = {c->m_src, c->m_dst, c->m_dsrc, c->m_ddst, c->m_wu, c->m_wf, c->m_wb, c->m_dwp,
                          c->m_bias, c->m_wfold, c->m_i8, c->m_res};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        if (ms[i]) dnnl_memory_destroy(ms[i]);
    if (c->be && c->be->ddst_conv == c) c->be->ddst_conv = NULL;
    free(c->wf);
    free(c->wb);
    free(c->keep_src);
    free(c->bias);
    free(c->osc);
    free(c);
}

const char *rn_dnnl_conv_impl_name(const rn_dnnl_conv *c, int direction)
{
    if (direction == 0 && c->ph) return c->ph->name;
    if (direction < 0 || direction > 2 || !c->op[direction].pd) return "none";
    const char *name = NULL;
    if (dnnl_primitive_desc_query(c->op[direction].pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name)
        return "unknown";
    return name;
}

/* ---- step calls ---- */

void rn_dnnl_conv_set_weights(rn_dnnl_conv *c, const float *w)
{
    rn_dnnl_bind(c->m_wu, w);
    if (c->ph) phases_set_weights(c, w);
    else rn_dnnl_reorder_run(c->be, &c->rw_fwd, c->m_wu, c->m_wf);
    if (c->rw_bwd.p) rn_dnnl_reorder_run(c->be, &c->rw_bwd, c->m_wu, c->m_wb);
}

/* int8: f (folded weights, PyTorch layout) becomes round(f / ws[oc]) with ws[oc] = max|f[oc]| / 127 (1 where all
 * are 0), integers the weights' reorder takes to s8 exactly; the bias is divided by in_scale * ws[oc] (oneDNN 2.6
 * adds the bias to the int32 sums before the output scale) and osc[oc] = in_scale * ws[oc] [/ out_scale]. */
static void int8_quantise(rn_dnnl_conv *c, float *f)
{
    const rn_conv_shape *s = &c->s;
    const size_t kk = (size_t)s->kh * s->kw, outer = s->transposed ? (size_t)s->ic : (size_t)s->oc;
    const size_t inner = s->transposed ? (size_t)s->oc : (size_t)s->ic;
    for (int o = 0; o < s->oc; o++) c->osc[o] = 0;
    for (size_t a = 0; a < outer; a++)
        for (size_t b = 0; b < inner; b++)
            for (size_t i = 0; i < kk; i++) {
                float v = fabsf(f[(a * inner + b) * kk + i]), *m = &c->osc[s->transposed ? b : a];
                if (v > *m) *m = v;
            }
    for (int o = 0; o < s->oc; o++) c->osc[o] = c->osc[o] > 0 ? c->osc[o] / 127.0f : 1.0f;
    for (size_t a = 0; a < outer; a++)
        for (size_t b = 0; b < inner; b++)
            for (size_t i = 0; i < kk; i++) {
                float *v = &f[(a * inner + b) * kk + i];
                *v = fminf(fmaxf(nearbyintf(*v / c->osc[s->transposed ? b : a]), -127.0f), 127.0f);
            }
    for (int o = 0; o < s->oc; o++) {
        c->osc[o] *= s->in_scale;
        c->bias[o] /= c->osc[o];
        if (s->out_scale > 0) c->osc[o] /= s->out_scale;
    }
}

/* int8: the forward primitives again, with the output scales of the weights just set (their formats
 * do not depend on the scales' values). Aborts on failure: the same primitives were made at create. */
static void int8_rebuild(rn_dnnl_conv *c)
{
    rn_mds d;
    rn_err err = {0};
    dnnl_primitive_attr_t attr = NULL;
    RN_DNNL_CHECK(attr_create_fwd(&attr, c, c->s.transposed ? c->s.epilogue & RN_EPI_RELU : c->s.epilogue));
    int rc = mds_init(&d, &c->s, &err);
    for (int k = 0; !rc && k < (c->ph ? 4 : 1); k++) {
        rn_prim *p = c->ph ? &c->ph->op[k] : &c->op[0];
        const dnnl_memory_desc_t *was = dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0);
        dnnl_memory_desc_t w = *was;
        rn_dnnl_prim_destroy(p);
        rc = c->ph ? phase_op_create(c, &d, k, attr, &err) : op_create(c, &d, 0, attr, 0, &err);
        if (!rc && !dnnl_memory_desc_equal(&w, dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0)))
            rc = rn_err_set(&err, "oneDNN: the int8 weights' format changed with their scales");
    }
    dnnl_primitive_attr_destroy(attr);
    if (rc) {
        fprintf(stderr, "rootnet: internal error at %s:%d: %s\n", __FILE__, __LINE__, err.msg);
        abort();
    }
}

void rn_dnnl_conv_set_weights_folded(rn_dnnl_conv *c, const float *w, const float *scale, const float *bias)
{
    RN_ASSERT(c->s.epilogue);
    const rn_conv_shape *s = &c->s;
    float *f = c->be->buf[BUF_WFOLD].p;
    size_t kk = (size_t)s->kh * s->kw, outer = s->transposed ? (size_t)s->ic : (size_t)s->oc;
    size_t inner = s->transposed ? (size_t)s->oc : (size_t)s->ic;
    for (size_t a = 0; a < outer; a++)
        for (size_t b = 0; b < inner; b++) {
            float g = scale ? scale[s->transposed ? b : a] : 1.0f;
            const float *src = w + (a * inner + b) * kk;
            for (size_t i = 0; i < kk; i++) f[(a * inner + b) * kk + i] = src[i] * g;
        }
    memcpy(c->bias, bias, (size_t)s->oc * sizeof *bias);
    if (c->osc) {
        int8_quantise(c, f);
        int8_rebuild(c);
    }
    if (c->ph) {
        phases_set_weights(c, f);
        return;
    }
    rn_dnnl_bind(c->m_wfold, f);
    rn_dnnl_reorder_run(c->be, &c->rw_fwd, c->m_wfold, c->m_wf);
}

/* dst = ReLU(dst + bias) per channel (nChw16c, fp32 or bf16): a fused deconv's epilogue. */
static void deconv_epilogue(const rn_dnnl_conv *c, void *dst)
{
    const rn_conv_shape *s = &c->s;
    const long hw = (long)s->oh * s->ow, blocks = (long)s->n * (s->oc / 16);
    const int relu = (s->epilogue & RN_EPI_RELU) != 0, bf = s->act == RN_NUM_BF16;
#pragma omp parallel for
    for (long nb = 0; nb < blocks; nb++) {
        const float *b = c->bias + (nb % (s->oc / 16)) * 16;
        for (long p = 0; p < hw; p++) {
            size_t at = ((size_t)nb * hw + p) * 16;
            for (int l = 0; l < 16; l++) {
                float v = (bf ? rn_bf16_to_f32(((rn_bf16 *)dst)[at + l]) : ((float *)dst)[at + l]) + b[l];
                if (relu && v < 0) v = 0;
                if (bf) ((rn_bf16 *)dst)[at + l] = rn_bf16_from_f32(v);
                else ((float *)dst)[at + l] = v;
            }
        }
    }
}

/* An int8 Conv2d: straight into an NHWC dst (the residual copied there first unless it is dst), else into
 * its NHWC buffer (the residual put there first), then into dst. */
static void int8_forward(rn_dnnl_conv *c, dnnl_memory_t src, void *dst, const void *res)
{
    if (!c->i8_out.p) {
        const rn_conv_shape *s = &c->s;
        if (res && res != dst) memcpy(dst, res, (size_t)s->n * s->oc * s->oh * s->ow * sizeof(float));
        dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c->m_wf}, {DNNL_ARG_BIAS, c->m_bias},
                                {DNNL_ARG_DST, c->m_dst}};
        rn_dnnl_prim_run(c->be, &c->op[0], 4, a);
        return;
    }
    rn_dnnl_bind(c->m_i8, c->be->buf[BUF_STAGE_DDST].p);
    if (res) {
        rn_dnnl_bind(c->m_res, res);
        rn_dnnl_reorder_run(c->be, &c->i8_in, c->m_res, c->m_i8);
    }
    dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c->m_wf}, {DNNL_ARG_BIAS, c->m_bias},
                            {DNNL_ARG_DST, c->m_i8}};
    rn_dnnl_prim_run(c->be, &c->op[0], 4, a);
    rn_dnnl_reorder_run(c->be, &c->i8_out, c->m_i8, c->m_dst);
}

void rn_dnnl_conv_forward_fused(rn_dnnl_conv *c, void *dst, const void *src, const void *res)
{
    const rn_conv_shape *s = &c->s;
    RN_ASSERT(s->epilogue && !res == !(s->epilogue & RN_EPI_SUM));
    if (c->osc && !c->ph) {
        rn_dnnl_bind(c->m_src, src);
        rn_dnnl_bind(c->m_dst, dst);
        int8_forward(c, rn_dnnl_stage_run(c->be, &c->st_fwd_src, c->m_src), dst, res);
        return;
    }
    if (res && res != dst)
        memcpy(dst, res, (size_t)s->n * s->oc * s->oh * s->ow * (s->act == RN_NUM_BF16 ? 2 : 4));
    rn_dnnl_bind(c->m_src, src);
    rn_dnnl_bind(c->m_dst, dst);
    dnnl_memory_t sm = rn_dnnl_stage_run(c->be, &c->st_fwd_src, c->m_src);
    if (c->ph) {
        phases_forward(c, dst, sm, 1);
        return;
    }
    if (s->transposed) {
        dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, c->m_wf}, {DNNL_ARG_DST, c->m_dst}};
        rn_dnnl_prim_run(c->be, &c->op[0], 3, a);
        deconv_epilogue(c, dst);
        return;
    }
    dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, c->m_wf}, {DNNL_ARG_BIAS, c->m_bias},
                            {DNNL_ARG_DST, c->m_dst}};
    rn_dnnl_prim_run(c->be, &c->op[0], 4, a);
}

void rn_dnnl_conv_forward(rn_dnnl_conv *c, void *dst, const void *src)
{
    RN_ASSERT(!c->s.epilogue);
    rn_dnnl_bind(c->m_src, src);
    rn_dnnl_bind(c->m_dst, dst);
    dnnl_memory_t s = c->m_src;
    if (c->keep_src) {
        s = c->st_fwd_src.m;
        rn_dnnl_bind(s, c->keep_src);
        rn_dnnl_reorder_run(c->be, &c->st_fwd_src.r, c->m_src, s);
        c->kept_src_ptr = src;
    } else {
        s = rn_dnnl_stage_run(c->be, &c->st_fwd_src, c->m_src);
    }
    if (c->ph) {
        phases_forward(c, dst, s, 0);
        return;
    }
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, c->m_wf}, {DNNL_ARG_DST, c->m_dst}};
    rn_dnnl_prim_run(c->be, &c->op[0], 3, a);
}

void rn_dnnl_conv_backward_data(rn_dnnl_conv *c, void *diff_src, const void *diff_dst)
{
    RN_ASSERT(c->op[1].p);
    rn_dnnl_bind(c->m_ddst, diff_dst);
    rn_dnnl_bind(c->m_dsrc, diff_src);
    dnnl_memory_t dd;
    if (c->ddst_shared && c->be->ddst_conv == c && c->be->ddst_ptr == diff_dst) {
        dd = c->st_bww_ddst.m; /* still bound to BUF_STAGE_DDST, which holds this diff_dst */
    } else {
        dd = rn_dnnl_stage_run(c->be, &c->st_bwd_ddst, c->m_ddst);
        c->be->ddst_conv = NULL;
    }
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, c->m_wb}, {DNNL_ARG_DIFF_SRC, c->m_dsrc}};
    rn_dnnl_prim_run(c->be, &c->op[1], 3, a);
}

void rn_dnnl_conv_backward_weights(rn_dnnl_conv *c, float *diff_w, const void *src, const void *diff_dst)
{
    RN_ASSERT(c->op[2].p);
    rn_dnnl_bind(c->m_src, src);
    rn_dnnl_bind(c->m_ddst, diff_dst);
    rn_dnnl_bind(c->m_wu, diff_w);
    rn_dnnl_bind(c->m_dwp, c->be->buf[BUF_DW].p);
    dnnl_memory_t s;
    if (c->keep_src && c->kept_src_ptr == src) {
        s = c->st_fwd_src.m;
        rn_dnnl_bind(s, c->keep_src);
    } else {
        s = rn_dnnl_stage_run(c->be, &c->st_bww_src, c->m_src);
    }
    dnnl_memory_t dd = rn_dnnl_stage_run(c->be, &c->st_bww_ddst, c->m_ddst);
    c->be->ddst_conv = c->st_bww_ddst.r.p ? c : NULL;
    c->be->ddst_ptr = diff_dst;
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, c->m_dwp}};
    rn_dnnl_prim_run(c->be, &c->op[2], 3, a);
    rn_dnnl_reorder_run(c->be, &c->rdw, c->m_dwp, c->m_wu);
}
