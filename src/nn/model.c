/* The model (nn/model.h): the network's structure from its parameter table (the ResNet backbone and
 * the net's deconvs), create and destroy, the backbone's and deconvs' forward and backward, graph
 * capture. The memory plan and the inputs are nn/model_plan.c's, the head layers nn/model_head.c's. */
#include "nn/model_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/autotune.h"
#include "nn/calib.h"

#define BN_MOMENTUM 0.1

const char *rn_mem_kind_name(rn_mem_kind k)
{
    static const char *names[RN_MEM_KINDS] = {"act", "grad", "stats", "head", "inputs"};
    return k >= 0 && k < RN_MEM_KINDS ? names[k] : "?";
}

/* Multiply-adds x 2 of one direction of the conv (the same for all three). */
static double conv_flops(const rn_conv_shape *s)
{
    double sp = s->transposed ? (double)s->ih * s->iw : (double)s->oh * s->ow;
    return 2.0 * s->n * sp * s->ic * s->oc * s->kh * s->kw;
}

static int find_or_fail(const rn_params *p, const char *name, rn_err *err)
{
    int i = rn_params_find(p, name);
    if (i < 0) rn_err_set(err, "internal: parameter '%s' missing from the table", name);
    return i;
}

static int cbn_init(rn_cbn *u, const rn_params *p, const char *conv, const char *bn, const rn_conv_shape *s, int relu,
                    rn_err *err)
{
    char name[128];
    memset(u, 0, sizeof *u);
    u->s = *s;
    u->relu = relu;
    snprintf(name, sizeof name, "%s.weight", conv);
    if ((u->pw = find_or_fail(p, name, err)) < 0) return -1;
    const char *suffix[5] = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"};
    int *dst[5] = {&u->pg, &u->pb, &u->pm, &u->pv, &u->pn};
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "%s.%s", bn, suffix[i]);
        if ((*dst[i] = find_or_fail(p, name, err)) < 0) return -1;
    }
    return 0;
}

static rn_conv_shape conv_shape(int n, int ic, int ih, int iw, int oc, int k, int stride, int pad)
{
    rn_conv_shape s = {.n = n, .ic = ic, .ih = ih, .iw = iw, .oc = oc, .kh = k, .kw = k,
                       .sh = stride, .sw = stride, .ph = pad, .pw = pad};
    s.oh = (ih + 2 * pad - k) / stride + 1;
    s.ow = (iw + 2 * pad - k) / stride + 1;
    return s;
}

static int build_block(rn_block *b, const rn_params *p, int stage, int idx, int n, int inplanes, int h, int w,
                       rn_err *err)
{
    int planes = 64 << stage, exp = p->bottleneck ? 4 : 1;
    int stride = (stage > 0 && idx == 0) ? 2 : 1;
    char pre[64], conv[96], bn[96];
    snprintf(pre, sizeof pre, "backbone.layer%d.%d", stage + 1, idx);
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", pre);
    b->nu = p->bottleneck ? 3 : 2;
    int ic = inplanes, ih = h, iw = w;
    for (int j = 0; j < b->nu; j++) {
        int last = j == b->nu - 1;
        int oc = last ? planes * exp : planes;
        int k = p->bottleneck ? (j == 1 ? 3 : 1) : 3;
        int st = (p->bottleneck ? j == 1 : j == 0) ? stride : 1;
        rn_conv_shape s = conv_shape(n, ic, ih, iw, oc, k, st, k / 2);
        snprintf(conv, sizeof conv, "%s.conv%d", pre, j + 1);
        snprintf(bn, sizeof bn, "%s.bn%d", pre, j + 1);
        if (cbn_init(&b->u[j], p, conv, bn, &s, !last, err)) return -1;
        ic = oc, ih = s.oh, iw = s.ow;
    }
    b->has_down = idx == 0 && (stage > 0 || inplanes != planes * exp);
    if (b->has_down) {
        rn_conv_shape s = conv_shape(n, inplanes, h, w, planes * exp, 1, stride, 0);
        snprintf(conv, sizeof conv, "%s.downsample.0", pre);
        snprintf(bn, sizeof bn, "%s.downsample.1", pre);
        if (cbn_init(&b->d, p, conv, bn, &s, 0, err)) return -1;
    }
    return 0;
}

static int build_structure(rn_model *m, rn_err *err)
{
    const rn_params *p = m->p;
    int n = m->N;
    rn_conv_shape s = conv_shape(n, 3, m->H, m->W, 64, 7, 2, 3);
    s.src_plain = 1;
    s.no_bwd_data = 1;
    if (cbn_init(&m->stem, p, "backbone.conv1", "backbone.bn1", &s, 1, err)) return -1;
    m->nblocks = p->blocks[0] + p->blocks[1] + p->blocks[2] + p->blocks[3];
    m->blocks = rn_xcalloc((size_t)m->nblocks, sizeof *m->blocks);
    int inplanes = 64, h = m->H / 4, w = m->W / 4, bi = 0;
    for (int st = 0; st < 4; st++)
        for (int i = 0; i < p->blocks[st]; i++, bi++) {
            rn_block *b = &m->blocks[bi];
            if (build_block(b, p, st, i, n, inplanes, h, w, err)) return -1;
            const rn_conv_shape *last = &b->u[b->nu - 1].s;
            inplanes = last->oc, h = last->oh, w = last->ow;
        }
    const rn_net *net = p->net;
    m->ndeconv = net->ndeconv;
    for (int i = 0; i < net->ndeconv; i++) {
        int ic = i == 0 ? p->feat_ch : net->deconv_ch, ih = m->FH << i, iw = m->FW << i;
        rn_conv_shape d = {.n = n, .ic = ic, .ih = ih, .iw = iw, .oc = net->deconv_ch, .oh = 2 * ih, .ow = 2 * iw,
                           .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .transposed = 1};
        char conv[64], bn[64];
        snprintf(conv, sizeof conv, "%s.%d", net->deconv, 3 * i);
        snprintf(bn, sizeof bn, "%s.%d", net->deconv, 3 * i + 1);
        if (cbn_init(&m->head[i], p, conv, bn, &d, 1, err)) return -1;
    }
    return rn_model_head_build(m, err);
}


/* int8: u's input scale from the calibration (amax / 255); the stem (the images, signed) stays fp32. */
static int int8_scale(rn_model *m, rn_cbn *u, rn_err *err)
{
    if (u->s.src_plain) return 0;
    const char *name = m->p->e[u->pw].name;
    const rn_calib_entry *e = m->opts.calib ? rn_calib_find(m->opts.calib, name) : NULL;
    if (!e)
        return rn_err_set(err, "int8: the calibration has no range for %s (made for another net? run rootnet calibrate)",
                          name);
    u->s.in_scale = e->amax > 0 ? e->amax / 255.0f : 1.0f;
    return 0;
}

/* epi: the fused epilogue beyond the bias (RN_EPI_SUM, RN_EPI_RELU), used when folding. */
static int create_conv(rn_model *m, rn_cbn *u, int epi, rn_err *err)
{
    u->s.epilogue = m->opts.fold ? RN_EPI_BIAS | epi : 0;
    u->s.compute = m->opts.compute == RN_NUM_I8 && u->s.src_plain ? RN_NUM_F32 : m->opts.compute;
    u->s.act = m->opts.act;
    u->s.forward_only = m->opts.inference;
    if (m->opts.tune && rn_autotune_choose(m->opts.tune, m->dev, &u->s, err))
        return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    if (rn_conv_create(&u->conv, m->dev, &u->s, err)) return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    return 0;
}

/* int8: every conv's input scale; inside a block each conv but the last hands the next its output in u8
 * NHWC at that conv's scale, and between blocks the output stays fp32 NHWC: the layouts oneDNN's int8 convs
 * take, without a pass between them. Not after the last block (the head reads its output: in the device's
 * layout, its residual NHWC), nor where the residual is in the device's layout: a block without a
 * downsample adds its input in place, so it keeps the layout its input came in (the max-pool's, until a
 * downsample block). */
static int int8_plan(rn_model *m, rn_err *err)
{
    int in_nhwc = 0;
    if (int8_scale(m, &m->stem, err)) return -1;
    for (int i = 0; i < m->ndeconv; i++)
        if (int8_scale(m, &m->head[i], err)) return -1;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++)
            if (int8_scale(m, &b->u[j], err)) return -1;
        if (b->has_down && int8_scale(m, &b->d, err)) return -1;
        if (m->opts.int8_unchained) continue;
        for (int j = 0; j + 1 < b->nu; j++) b->u[j].s.out_scale = b->u[j + 1].s.in_scale, b->u[j + 1].s.src_u8 = 1;
        int out_nhwc = i + 1 < m->nblocks && (b->has_down || in_nhwc);
        b->u[0].s.src_nhwc = b->d.s.src_nhwc = in_nhwc;
        b->u[b->nu - 1].s.dst_nhwc = b->d.s.dst_nhwc = out_nhwc;
        b->u[b->nu - 1].s.res_nhwc = !out_nhwc && !b->has_down && in_nhwc; /* the last block's input */
        in_nhwc = out_nhwc;
    }
    return 0;
}

static int create_convs(rn_model *m, rn_err *err)
{
    if (m->opts.compute == RN_NUM_I8 && int8_plan(m, err)) return -1;
    if (create_conv(m, &m->stem, RN_EPI_RELU, err)) return -1;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++)
            if (create_conv(m, &b->u[j], j == b->nu - 1 ? RN_EPI_SUM | RN_EPI_RELU : RN_EPI_RELU, err)) return -1;
        if (b->has_down && create_conv(m, &b->d, 0, err)) return -1;
    }
    for (int i = 0; i < m->ndeconv; i++)
        if (create_conv(m, &m->head[i], RN_EPI_RELU, err)) return -1;
    return 0;
}

/* The device of p (nn/params.h): p's own when it has one (m->opts.device must
 * name it, if set), else the device of m->opts, opened here and given to p
 * with its arenas. It must run the precision. */
static int open_device(rn_model *m, rn_err *err)
{
    const rn_model_opts *o = &m->opts;
    rn_params *p = m->p;
    const char *name = o->dev ? o->dev->name : o->device ? o->device : p->dev ? p->dev->name : rn_device_default();
    if (p->dev && (o->dev ? o->dev != p->dev : strcmp(name, p->dev->name) != 0))
        return rn_err_set(err, "device %s: the parameters live on device %s", name, p->dev->name);
    rn_device *dev = p->dev ? p->dev : o->dev;
    if (dev == o->dev && dev && !p->dev) rn_device_retain(dev); /* the opener's hold stays the opener's */
    if (!dev && rn_device_create(&dev, name, o->threads, err)) return -1;

    int rc = dev->ops->supports(dev, o->compute, o->act)
                 ? 0
                 : rn_err_set(err, "device %s: does not run this precision (conv compute %d, %s activations)", name,
                              (int)o->compute, o->act == RN_NUM_BF16 ? "bf16" : "fp32");
    if (!rc && !p->dev) rc = rn_params_to_device(p, dev, err);
    if (rc && !p->dev) rn_device_destroy(dev); /* not p's (yet) */
    if (rc) return -1;
    rn_device_retain(dev); /* p holds it too: either may be freed first */
    m->dev = dev;
    return 0;
}

/* p's arenas on its device: weights, gradients, Adam m and v, BN running statistics (nn/params.c). */
static size_t params_bytes(const rn_params *p) { return (4 * p->n_param + p->n_stats) * sizeof(float); }

/* The network on its device and its memory plan (m->bufs, m->arena_bytes, m->mem): create up to the arena. */
static int model_plan(rn_model *m, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err)
{
    memset(m, 0, sizeof *m);
    m->opts = *o;
    if (N < 1) return rn_err_set(err, "batch size %d must be at least 1", N);
    if (H < 32 || W < 32 || H % 32 || W % 32)
        return rn_err_set(err, "input size %dx%d must be a positive multiple of 32", H, W);
    if (p->net->ndeconv != 3) /* the backbone's stride 32 back to the output grid's 4 */
        return rn_err_set(err, "net %s: %d deconvs do not reach the output grid (input / 4)", p->net->name,
                          p->net->ndeconv);
    m->p = p;
    m->N = N, m->H = H, m->W = W;
    m->OH = H / 4, m->OW = W / 4, m->FH = H / 32, m->FW = W / 32;
    m->loss_scale = 1.0f;
    if (o->fold && !o->inference) return rn_err_set(err, "folded BN is for inference models only");
    if (o->compute == RN_NUM_I8 && (!o->fold || !o->calib))
        return rn_err_set(err, "int8 is for folded inference models with a calibration (rootnet calibrate)");
    if (o->fold && o->compute == RN_NUM_BF16) m->opts.act = RN_NUM_BF16;
    if (open_device(m, err) || build_structure(m, err)) return -1;
    m->opts.prefetch = o->prefetch && o->pinned_inputs && !o->inference && OP(m)->upload_async; /* else no use */
    plan pl = {.dev = m->dev, .act = m->opts.act, .last = rn_t_last(m)};
    rn_plan_all(m, &pl);
    m->bufs = pl.b, m->nbufs = pl.n;
    m->arena_bytes = o->no_reuse ? rn_plan_place_apart(m->bufs, m->nbufs) : rn_plan_place(m->bufs, m->nbufs);
    rn_plan_check(m->bufs, m->nbufs, m->arena_bytes);
    m->mem = rn_plan_mem(m->bufs, m->nbufs, m->arena_bytes, pl.last);
    m->mem.params = params_bytes(p);
    return 0;
}

int rn_model_plan(rn_model_mem *mem, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err)
{
    rn_model m;
    int rc = model_plan(&m, p, N, H, W, o, err);
    *mem = m.mem;
    rn_model_destroy(&m);
    return rc;
}

int rn_model_create(rn_model *m, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err)
{
    if (model_plan(m, p, N, H, W, o, err)) goto fail;
    m->arena = OP(m)->alloc(m->dev, m->arena_bytes);
    if (!m->arena) {
        rn_err_set(err, "device %s: cannot allocate %.1f MB of activations for batch %d at %dx%d", m->dev->name,
                   m->arena_bytes / 1e6, N, H, W);
        goto fail;
    }
    plan pl = {.dev = m->dev, .base = m->arena, .b = m->bufs, .act = m->opts.act, .last = rn_t_last(m)};
    rn_plan_all(m, &pl);
    RN_ASSERT(pl.n == m->nbufs);
    m->coord = rn_xmalloc(3 * (size_t)N * m->K * sizeof *m->coord);
    if (create_convs(m, err)) goto fail;
    return 0;
fail:
    rn_model_destroy(m);
    return -1;
}

/* fn(m, u, ctx) on every conv + BN unit in network order: the stem, each block's units and its
 * downsample, the deconvs (also on a model whose create stopped part way). */
static void each_cbn(rn_model *m, void (*fn)(rn_model *m, rn_cbn *u, void *ctx), void *ctx)
{
    fn(m, &m->stem, ctx);
    for (int i = 0; m->blocks && i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++) fn(m, &b->u[j], ctx);
        if (b->has_down) fn(m, &b->d, ctx);
    }
    for (int i = 0; i < m->ndeconv; i++) fn(m, &m->head[i], ctx);
}

static void cbn_destroy(rn_model *m, rn_cbn *u, void *ctx)
{
    (void)m, (void)ctx;
    if (u->conv) rn_conv_destroy(u->conv);
    u->conv = NULL;
}

void rn_model_destroy(rn_model *m)
{
    each_cbn(m, cbn_destroy, NULL);
    if (m->dev && OP(m)->graph_destroy) {
        OP(m)->graph_destroy(m->dev, m->step_graph[0].g);
        OP(m)->graph_destroy(m->dev, m->step_graph[1].g);
        OP(m)->graph_destroy(m->dev, m->fwd_graph.g);
    }
    if (m->dev) OP(m)->free(m->dev, m->arena);
    rn_device_destroy(m->dev);
    free(m->blocks);
    free(m->coord);
    free(m->bufs);
    memset(m, 0, sizeof *m);
}

/* The conv's weights; folded: with the BN's running statistics folded in (scale, bias = shift). */
static void cbn_sync(rn_model *m, rn_cbn *u, void *ctx)
{
    (void)ctx;
    rn_params *p = m->p;
    if (!m->opts.fold) {
        rn_conv_set_weights(u->conv, rn_params_data(p, u->pw));
        return;
    }
    OP(m)->bn_fold(DEV(m), u->scale, u->shift, rn_params_data(p, u->pm), rn_params_data(p, u->pv),
                   rn_params_data(p, u->pg), rn_params_data(p, u->pb), u->s.oc);
    OP(m)->conv_set_weights_folded(DEV(m), u->conv, rn_params_data(p, u->pw), u->scale, u->shift);
}

void rn_model_sync_weights(rn_model *m) { each_cbn(m, cbn_sync, NULL); }

/* Ends a profiler span: on the device's clock where the profile has one (no wait), else after
 * the device has finished the span's work. */
void rn_model_span_end(rn_model *m, int sp)
{
    if (!m->prof) return;
    if (!rn_profile_device_timed(m->prof)) OP(m)->synchronize(m->dev);
    rn_prof_end(m->prof, sp);
}


/* Values per channel behind a train-mode BN of shape a: this batch's, times the replicas SyncBN sums over. */
static double bn_count(const rn_model *m, const rn_act_shape *a)
{
    int r = m->opts.reduce.fn && m->opts.reduce.replicas > 1 ? m->opts.reduce.replicas : 1;
    return (double)a->n * a->h * a->w * r;
}

/* SyncBN: sums buf[0 .. n) over the replicas (a failure is kept by the hook, see model.h). */
static void bn_reduce(rn_model *m, double *buf, size_t n)
{
    rn_err ignore = {{0}};
    if (m->opts.reduce.fn) (void)m->opts.reduce.fn(m->opts.reduce.ctx, m->dev, buf, n, RN_NUM_F64, &ignore);
}

/* conv, then BN statistics (train) or running statistics (eval) folded into
 * scale/shift; applies BN(+ReLU) into u->y unless the BN is fused downstream. */
/* dst = the fused conv of u on src (+ res), BN folded in (fold models). */
static void cbn_fused(rn_model *m, rn_cbn *u, void *dst, const void *src, const void *res)
{
    if (m->opts.observe.fn && !u->s.src_plain) {
        rn_act_shape a = {.n = u->s.n, .c = u->s.ic, .h = u->s.ih, .w = u->s.iw, .type = m->opts.act};
        m->opts.observe.fn(m->opts.observe.ctx, DEV(m), m->p->e[u->pw].name, src, &a);
    }
    int sp = rn_prof_begin(m->prof, m->p->e[u->pw].name, "fwd", conv_flops(&u->s));
    OP(m)->conv_forward_fused(DEV(m), u->conv, dst, src, res);
    rn_model_span_end(m, sp);
}

/* A block of a fold model on in; returns its output: in itself (the residual added in
 * place) unless the block has a downsample branch, which writes b->out first. */
static void *block_fused(rn_model *m, rn_block *b, void *in)
{
    const void *x = in;
    for (int j = 0; j < b->nu - 1; j++) {
        cbn_fused(m, &b->u[j], b->u[j].c, x, NULL);
        x = b->u[j].c;
    }
    void *out = in;
    if (b->has_down) {
        out = b->out;
        cbn_fused(m, &b->d, out, in, NULL);
    }
    cbn_fused(m, &b->u[b->nu - 1], out, x, out);
    return out;
}

static void cbn_forward(rn_model *m, rn_cbn *u, int train)
{
    rn_params *p = m->p;
    rn_device *dev = DEV(m);
    int C = u->s.oc;
    int sp = rn_prof_begin(m->prof, p->e[u->pw].name, "fwd", conv_flops(&u->s));
    rn_conv_forward(u->conv, u->c, u->x);
    float *rmean = rn_params_data(p, u->pm), *rvar = rn_params_data(p, u->pv);
    if (train) {
        double *sums = m->bnsum;
        OP(m)->bn_sums(dev, sums, u->c, &u->a);
        bn_reduce(m, sums, 2 * (size_t)C + 1);
        u->count = bn_count(m, &u->a);
        OP(m)->bn_stats(dev, u->mean, u->var, sums, u->count, C);
        OP(m)->bn_update_running(dev, rmean, rvar, u->mean, u->var, BN_MOMENTUM, (long)u->count, C);
    } else {
        OP(m)->copy(dev, u->mean, rmean, (size_t)C * sizeof *rmean);
        OP(m)->copy(dev, u->var, rvar, (size_t)C * sizeof *rvar);
    }
    OP(m)->bn_fold(dev, u->scale, u->shift, u->mean, u->var, rn_params_data(p, u->pg), rn_params_data(p, u->pb), C);
    if (u->y) OP(m)->bn_apply(dev, u->y, u->c, u->scale, u->shift, u->relu, &u->a);
    rn_model_span_end(m, sp);
}

static void block_forward(rn_model *m, rn_block *b, int train)
{
    for (int j = 0; j < b->nu; j++) cbn_forward(m, &b->u[j], train);
    rn_cbn *last = &b->u[b->nu - 1];
    if (b->has_down) cbn_forward(m, &b->d, train);
    int sp = rn_prof_begin(m->prof, b->name, "fwd", 0);
    if (b->has_down)
        OP(m)->bn2_add_relu(DEV(m), b->out, last->c, last->scale, last->shift, b->d.c, b->d.scale, b->d.shift,
                            &last->a);
    else
        OP(m)->bn_add_relu(DEV(m), b->out, last->c, last->scale, last->shift, b->in, &last->a);
    rn_model_span_end(m, sp);
}

static rn_act_shape stem_shape(const rn_model *m) { return m->stem.a; }

static void maxpool(rn_model *m, const void *stem_out)
{
    int sp = rn_prof_begin(m->prof, "backbone.maxpool", "fwd", 0);
    rn_act_shape sa = stem_shape(m);
    OP(m)->maxpool_forward(DEV(m), m->pool, stem_out, &sa, m->H / 4, m->W / 4);
    rn_model_span_end(m, sp);
}

/* The eval forward of a fold model: fused convs only. */
static void forward_fused(rn_model *m, const float *images)
{
    cbn_fused(m, &m->stem, m->stem.c, images, NULL);
    maxpool(m, m->stem.c);
    void *x = m->pool;
    for (int i = 0; i < m->nblocks; i++) x = block_fused(m, &m->blocks[i], x);
    const void *h = x;
    for (int i = 0; i < m->ndeconv; i++) {
        cbn_fused(m, &m->head[i], m->head[i].c, h, NULL);
        h = m->head[i].c;
    }
    rn_model_head_forward(m, h, x);
}

/* A train forward's count of one BN (num_batches_tracked, host memory). */
static void cbn_count(rn_model *m, rn_cbn *u, void *ctx)
{
    (void)ctx;
    m->p->nbt[m->p->e[u->pn].offset]++;
}

void rn_model_stage(rn_model *m, const float *images, const float *k, int train)
{
    RN_ASSERT(!(train && m->opts.fold));
    if (m->ahead[0] && m->ahead[0] == images)
        m->cur = !m->cur; /* the batch rn_model_prefetch uploaded */
    else
        memset(m->ahead, 0, sizeof m->ahead);
    m->stem.x = rn_model_stage_input(m, 0, images);
    m->k = rn_model_stage_input(m, 1, k);
    m->last_train = train;
    if (train) each_cbn(m, cbn_count, NULL);
}

void rn_model_forward_ops(rn_model *m)
{
    int train = m->last_train;
    if (m->opts.fold) {
        forward_fused(m, m->stem.x);
        return;
    }
    cbn_forward(m, &m->stem, train);
    maxpool(m, m->stem.y);
    for (int i = 0; i < m->nblocks; i++) block_forward(m, &m->blocks[i], train);
    for (int i = 0; i < m->ndeconv; i++) cbn_forward(m, &m->head[i], train);
    rn_model_head_forward(m, m->head[m->ndeconv - 1].y, m->blocks[m->nblocks - 1].out);
}

static void forward_ops(rn_model *m, void *ctx)
{
    (void)ctx;
    rn_model_forward_ops(m);
}

void rn_model_forward(rn_model *m, const float *images, const float *k, int train)
{
    rn_model_stage(m, images, k, train);
    if (!m->opts.inference) {
        rn_model_forward_ops(m);
        return;
    }
    double key[2] = {train, 0};
    rn_model_run_graph(m, &m->fwd_graph, key, forward_ops, NULL);
}

/* Whether gr runs as a graph now (see rn_model_run_graph): not with the profiler's spans, nor with
 * the distribution's hooks, which call the host inside the ops. */
static int graph_on(const rn_model *m, const rn_model_graph *gr)
{
    const rn_model_opts *o = &m->opts;
    return o->graph && OP(m)->graph_begin && !m->prof && !o->reduce.fn && !o->grad_ready.fn && !o->observe.fn &&
           !gr->failed &&
           gr->direct > 0;
}

/* Captures ops into gr (its old graph dropped); 0, or -1 with err (nothing ran). */
static int graph_capture(rn_model *m, rn_model_graph *gr, const double key[2], void (*ops)(rn_model *m, void *ctx),
                         void *ctx, rn_err *err)
{
    OP(m)->graph_destroy(DEV(m), gr->g);
    gr->g = NULL;
    if (OP(m)->graph_begin(DEV(m), err)) return -1;
    ops(m, ctx);
    if (OP(m)->graph_end(DEV(m), &gr->g, err)) return -1;
    gr->key[0] = key[0], gr->key[1] = key[1];
    return 0;
}

void rn_model_run_graph(rn_model *m, rn_model_graph *gr, const double key[2], void (*ops)(rn_model *m, void *ctx),
                        void *ctx)
{
    if (!graph_on(m, gr)) {
        gr->direct++;
        ops(m, ctx);
        return;
    }
    rn_err err = {{0}};
    if ((!gr->g || gr->key[0] != key[0] || gr->key[1] != key[1]) && graph_capture(m, gr, key, ops, ctx, &err)) {
        fprintf(stderr, "rootnet: device %s: graph capture failed, running without graphs: %s\n", DEV(m)->name,
                err.msg);
        m->step_graph[0].failed = m->step_graph[1].failed = m->fwd_graph.failed = 1; /* one line, no retry */
        gr->failed = 1;
        ops(m, ctx);
        return;
    }
    OP(m)->graph_launch(DEV(m), gr->g);
}

/* BN backward of u from dy (masked by u->y when the BN has its own ReLU) into
 * dx (may equal dy), then the conv's weight gradient. With SyncBN the
 * parameter gradients use the local sums, dx the global ones. */
static void cbn_backward_bn(rn_model *m, rn_cbn *u, void *dx, const void *dy)
{
    rn_params *p = m->p;
    rn_device *dev = DEV(m);
    int sp = rn_prof_begin(m->prof, p->e[u->pw].name, "bwd", conv_flops(&u->s));
    int C = u->s.oc;
    const void *relu_out = u->relu ? u->y : NULL;
    double *sums = m->bnsum;
    OP(m)->bn_backward_sums(dev, sums, dy, relu_out, u->c, u->mean, &u->a);
    OP(m)->bn_backward_params(dev, rn_params_grad(p, u->pg), rn_params_grad(p, u->pb), sums, u->var, C);
    bn_reduce(m, sums, 2 * (size_t)C);
    OP(m)->bn_backward_data(dev, dx, dy, relu_out, u->c, u->mean, u->var, rn_params_data(p, u->pg), sums, u->count,
                            &u->a);
    u->conv->grad_scale = m->loss_scale;
    rn_conv_backward_weights(u->conv, rn_params_grad(p, u->pw), u->x, dx);
    if (m->opts.grad_ready.fn) m->opts.grad_ready.fn(m->opts.grad_ready.ctx, p->e[u->pw].offset);
    rn_model_span_end(m, sp);
}

/* Backward-data of u's conv: dx from dy. */
static void cbn_backward_data(rn_model *m, rn_cbn *u, void *dx, const void *dy)
{
    int sp = rn_prof_begin(m->prof, m->p->e[u->pw].name, "bwd_data", conv_flops(&u->s));
    rn_conv_backward_data(u->conv, dx, dy);
    rn_model_span_end(m, sp);
}

/* opts.poison: NaN (in float and in bf16) into every planned buffer that died at time t - 1 and every
 * one that comes to life at t, at the start of backward's time t (called at each time a buffer is
 * born at or dies just before, the stem's excepted). */
void rn_model_poison(rn_model *m, int t)
{
    if (!m->opts.poison) return;
    uint32_t bits = 0x7fc07fc0u;
    float nan;
    memcpy(&nan, &bits, sizeof nan);
    for (int i = 0; i < m->nbufs; i++) {
        const rn_model_buf *b = &m->bufs[i];
        if (b->t1 == t - 1 || b->t0 == t)
            OP(m)->fill(DEV(m), (float *)((char *)m->arena + b->off), nan, b->bytes / sizeof(float));
    }
}

/* Gradient of the block output in g[0]; leaves the gradient of its input in g[3]. */
static void block_backward(rn_model *m, rn_block *b, void **g)
{
    rn_model_poison(m, rn_t_bwd(m, PH_BLOCK((int)(b - m->blocks))));
    g[1] = b->g[1], g[2] = b->g[2], g[3] = b->g[3]; /* the block's planned buffers; g[0]: the next block's g[3] */
    int sp = rn_prof_begin(m->prof, b->name, "bwd", 0);
    OP(m)->relu_backward(DEV(m), g[0], b->out, &b->u[b->nu - 1].a);
    rn_model_span_end(m, sp);
    if (b->has_down) {
        cbn_backward_bn(m, &b->d, g[1], g[0]);
        cbn_backward_data(m, &b->d, g[3], g[1]);
    }
    void *cur = g[1], *other = g[2];
    cbn_backward_bn(m, &b->u[b->nu - 1], cur, g[0]);
    for (int j = b->nu - 1; j > 0; j--) {
        cbn_backward_data(m, &b->u[j], other, cur);
        cbn_backward_bn(m, &b->u[j - 1], other, other);
        void *t = cur;
        cur = other, other = t;
    }
    cbn_backward_data(m, &b->u[0], b->has_down ? other : g[3], cur);
    sp = rn_prof_begin(m->prof, b->name, "bwd", 0);
    const rn_conv_shape *s0 = &b->u[0].s;
    rn_act_shape in = {s0->n, s0->ic, s0->ih, s0->iw, m->opts.act};
    OP(m)->add(DEV(m), g[3], b->has_down ? other : g[0], &in);
    rn_model_span_end(m, sp);
}

void rn_model_stage_targets(rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    m->target = rn_model_stage_input(m, 2, target), m->vis = rn_model_stage_input(m, 3, vis), m->have_depth = rn_model_stage_input(m, 4, have_depth);
}

/* The deconvs' backward from the gradient of the top one's output in g[0]: leaves the backbone
 * output's gradient in g[0] (the pair swapped after each deconv, as planned). */
static void deconvs_backward(rn_model *m, void **g)
{
    for (int i = m->ndeconv - 1; i >= 0; i--) {
        rn_model_poison(m, rn_t_bwd(m, rn_ph_deconv(m, i)));
        cbn_backward_bn(m, &m->head[i], g[0], g[0]);
        rn_model_poison(m, rn_t_bwd(m, rn_ph_deconv(m, i)) + 1);
        cbn_backward_data(m, &m->head[i], g[1], g[0]);
        void *t = g[0];
        g[0] = g[1], g[1] = t;
    }
}

void rn_model_backward_ops(rn_model *m)
{
    RN_ASSERT(m->last_train && !m->opts.inference);
    rn_device *dev = DEV(m);
    void *g[4] = {m->g[0], m->g[1], NULL, NULL}; /* g[1..3]: each block's own (block_backward) */
    rn_model_head_backward(m, g[0]);
    deconvs_backward(m, g);
    rn_model_head_backward_backbone(m, g[0]);
    for (int i = m->nblocks - 1; i >= 0; i--) {
        block_backward(m, &m->blocks[i], g);
        void *t = g[0];
        g[0] = g[3], g[3] = t;
    }
    void *dstem = g[1];
    int sp = rn_prof_begin(m->prof, "backbone.maxpool", "bwd", 0);
    rn_act_shape sa = stem_shape(m);
    OP(m)->maxpool_backward(dev, dstem, g[0], m->stem.y, &sa, m->H / 4, m->W / 4);
    rn_model_span_end(m, sp);
    cbn_backward_bn(m, &m->stem, dstem, dstem);
}

void rn_model_backward(rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    rn_model_stage_targets(m, target, vis, have_depth);
    rn_model_backward_ops(m);
}

void rn_model_zero_grad(rn_model *m) { OP(m)->zero(DEV(m), m->p->grad, m->p->n_param * sizeof *m->p->grad); }

/* One conv's line of rn_model_print_convs into f (a FILE *). */
static void print_conv(rn_model *m, rn_cbn *u, void *f)
{
    const rn_conv_shape *s = &u->s;
    static const char *DIR[3] = {"fwd", "bwd-data", "bwd-weights"};
    fprintf(f, "conv %-40s %s%dx%d/%d %4d->%-4d at %3dx%-3d", m->p->e[u->pw].name, s->transposed ? "deconv " : "",
            s->kh, s->kw, s->sh, s->ic, s->oc, s->ih, s->iw);
    int dirs = s->forward_only ? 1 : 3;
    for (int d = 0; d < dirs; d++) fprintf(f, " %s %s", DIR[d], rn_conv_impl_name(u->conv, d));
    fputc('\n', f);
}

void rn_model_print_convs(rn_model *m, FILE *f) { each_cbn(m, print_conv, f); }
