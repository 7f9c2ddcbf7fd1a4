#include "nn/model.h"

#include <math.h>
#include <string.h>

#include "cpu/kernels.h"
#include "nn/autotune.h"

#define BN_MOMENTUM 0.1

/* A kernel on the model's activations: fn for float, fn##_bf16 for bf16 (cpu/kernels.h). */
#define ACT_CALL(m, fn, ...) ((m)->opts.act == RN_ACT_BF16 ? fn##_bf16(__VA_ARGS__) : fn(__VA_ARGS__))

typedef struct plan {
    float *base;   /* NULL while counting */
    size_t used;   /* floats */
    size_t max_act;
    rn_act_type act;
} plan;

static float *take(plan *pl, size_t n)
{
    float *r = pl->base ? pl->base + pl->used : NULL;
    pl->used += (n + 15) & ~(size_t)15;
    return r;
}

/* n activations of the planned type. */
static void *take_act(plan *pl, size_t n)
{
    return take(pl, pl->act == RN_ACT_BF16 ? (n + 1) / 2 : n);
}

static size_t out_elems(const rn_conv_shape *s) { return (size_t)s->n * s->oc * s->oh * s->ow; }

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
    for (int i = 0; i < 3; i++) {
        int ic = i == 0 ? p->feat_ch : 256, ih = m->FH << i, iw = m->FW << i;
        rn_conv_shape d = {.n = n, .ic = ic, .ih = ih, .iw = iw, .oc = 256, .oh = 2 * ih, .ow = 2 * iw,
                           .kh = 4, .kw = 4, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .transposed = 1};
        char conv[64], bn[64];
        snprintf(conv, sizeof conv, "root.deconv_layers.%d", 3 * i);
        snprintf(bn, sizeof bn, "root.deconv_layers.%d", 3 * i + 1);
        if (cbn_init(&m->head[i], p, conv, bn, &d, 1, err)) return -1;
    }
    return 0;
}

static void plan_cbn(plan *pl, rn_cbn *u, const void *x, int fused)
{
    size_t n = out_elems(&u->s);
    u->x = x;
    u->c = take_act(pl, n);
    u->y = fused ? NULL : take_act(pl, n);
    u->mean = take(pl, (size_t)u->s.oc);
    u->var = take(pl, (size_t)u->s.oc);
    u->scale = take(pl, (size_t)u->s.oc);
    u->shift = take(pl, (size_t)u->s.oc);
    if (n > pl->max_act) pl->max_act = n;
    size_t in = (size_t)u->s.n * u->s.ic * u->s.ih * u->s.iw;
    if (in > pl->max_act) pl->max_act = in;
}

static void plan_all(rn_model *m, plan *pl)
{
    int n = m->N, C = m->p->feat_ch;
    plan_cbn(pl, &m->stem, NULL, 0);
    m->pool = take_act(pl, (size_t)n * 64 * (m->H / 4) * (m->W / 4));
    const void *in = m->pool;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        b->in = in;
        const void *x = in;
        for (int j = 0; j < b->nu; j++) {
            plan_cbn(pl, &b->u[j], x, j == b->nu - 1);
            x = b->u[j].y;
        }
        if (b->has_down) plan_cbn(pl, &b->d, in, 1);
        b->out = take_act(pl, out_elems(&b->u[b->nu - 1].s));
        in = b->out;
    }
    for (int i = 0; i < 3; i++) {
        plan_cbn(pl, &m->head[i], in, 0);
        in = m->head[i].y;
    }
    m->feat = take(pl, (size_t)n * C);
    m->dfeat = take(pl, (size_t)n * C);
    m->prob = take(pl, (size_t)n * m->OH * m->OW);
    m->xy = take(pl, 2 * (size_t)n);
    m->dxy = take(pl, 2 * (size_t)n);
    m->gamma = take(pl, (size_t)n);
    m->depth = take(pl, (size_t)n);
    m->ddepth = take(pl, (size_t)n);
    m->coord = take(pl, 3 * (size_t)n);
    m->dcoord = take(pl, 3 * (size_t)n);
    for (int i = 0; i < 4; i++) m->g[i] = take_act(pl, pl->max_act);
}

static int create_conv(rn_model *m, rn_cbn *u, rn_err *err)
{
    u->s.compute = m->opts.compute;
    u->s.act = m->opts.act;
    u->s.forward_only = m->opts.inference;
    if (m->opts.tune && rn_autotune_choose(m->opts.tune, m->be, &u->s, err))
        return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    if (rn_conv_create(&u->conv, m->be, &u->s, err)) return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    return 0;
}

static int create_convs(rn_model *m, rn_err *err)
{
    if (create_conv(m, &m->stem, err)) return -1;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++)
            if (create_conv(m, &b->u[j], err)) return -1;
        if (b->has_down && create_conv(m, &b->d, err)) return -1;
    }
    for (int i = 0; i < 3; i++)
        if (create_conv(m, &m->head[i], err)) return -1;
    return 0;
}

int rn_model_create(rn_model *m, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err)
{
    memset(m, 0, sizeof *m);
    m->opts = *o;
    if (N < 1) return rn_err_set(err, "batch size %d must be at least 1", N);
    if (H < 32 || W < 32 || H % 32 || W % 32)
        return rn_err_set(err, "input size %dx%d must be a positive multiple of 32", H, W);
    m->p = p;
    m->N = N, m->H = H, m->W = W;
    m->OH = H / 4, m->OW = W / 4, m->FH = H / 32, m->FW = W / 32;
    m->loss_scale = 1.0f;
    if (build_structure(m, err)) goto fail;
    plan pl = {.act = o->act};
    plan_all(m, &pl);
    m->arena_floats = pl.used;
    m->arena = aligned_alloc(64, pl.used * sizeof(float));
    if (!m->arena) {
        rn_err_set(err, "cannot allocate %.1f MB of activations for batch %d at %dx%d", pl.used * 4.0 / 1e6, N, H, W);
        goto fail;
    }
    pl = (plan){.base = m->arena, .act = o->act};
    plan_all(m, &pl);
    RN_ASSERT(pl.used == m->arena_floats);
    m->bnsum = rn_xmalloc((2 * (size_t)(p->feat_ch > 256 ? p->feat_ch : 256) + 1) * sizeof *m->bnsum);
    if (rn_backend_create(&m->be, o->threads, err) || create_convs(m, err)) goto fail;
    return 0;
fail:
    rn_model_destroy(m);
    return -1;
}

static void cbn_destroy(rn_cbn *u)
{
    if (u->conv) rn_conv_destroy(u->conv);
    u->conv = NULL;
}

void rn_model_destroy(rn_model *m)
{
    cbn_destroy(&m->stem);
    for (int i = 0; m->blocks && i < m->nblocks; i++) {
        for (int j = 0; j < m->blocks[i].nu; j++) cbn_destroy(&m->blocks[i].u[j]);
        cbn_destroy(&m->blocks[i].d);
    }
    for (int i = 0; i < 3; i++) cbn_destroy(&m->head[i]);
    if (m->be) rn_backend_destroy(m->be);
    free(m->blocks);
    free(m->arena);
    free(m->bnsum);
    memset(m, 0, sizeof *m);
}

static void cbn_sync(rn_model *m, rn_cbn *u) { rn_conv_set_weights(u->conv, rn_params_data(m->p, u->pw)); }

void rn_model_sync_weights(rn_model *m)
{
    cbn_sync(m, &m->stem);
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++) cbn_sync(m, &b->u[j]);
        if (b->has_down) cbn_sync(m, &b->d);
    }
    for (int i = 0; i < 3; i++) cbn_sync(m, &m->head[i]);
}

/* conv, then BN statistics (train) or running statistics (eval) folded into
 * scale/shift; applies BN(+ReLU) into u->y unless the BN is fused downstream. */
static void cbn_forward(rn_model *m, rn_cbn *u, int train)
{
    rn_params *p = m->p;
    int C = u->s.oc, HW = u->s.oh * u->s.ow;
    int sp = rn_prof_begin(m->prof, p->e[u->pw].name, "fwd", conv_flops(&u->s));
    rn_conv_forward(u->conv, u->c, u->x);
    const float *mean = rn_params_data(p, u->pm), *var = rn_params_data(p, u->pv);
    if (train) {
        double *sums = m->bnsum;
        ACT_CALL(m, rn_bn_sums, sums, u->c, u->s.n, C, HW);
        sums[2 * C] = (double)u->s.n * HW;
        if (m->opts.reduce.fn) m->opts.reduce.fn(m->opts.reduce.ctx, sums, 2 * C + 1);
        u->count = sums[2 * C];
        rn_bn_stats_from_sums(u->mean, u->var, sums, u->count, C);
        rn_bn_update_running(rn_params_data(p, u->pm), rn_params_data(p, u->pv), u->mean, u->var, BN_MOMENTUM,
                             (long)u->count, C);
        p->nbt[p->e[u->pn].offset]++;
        mean = u->mean, var = u->var;
    } else {
        memcpy(u->mean, mean, (size_t)C * sizeof *mean);
        memcpy(u->var, var, (size_t)C * sizeof *var);
    }
    rn_bn_fold(u->scale, u->shift, NULL, mean, var, rn_params_data(p, u->pg), rn_params_data(p, u->pb), C);
    if (u->y) ACT_CALL(m, rn_bn_apply, u->y, u->c, u->scale, u->shift, u->relu, u->s.n, C, HW);
    rn_prof_end(m->prof, sp);
}

static void block_forward(rn_model *m, rn_block *b, int train)
{
    for (int j = 0; j < b->nu; j++) cbn_forward(m, &b->u[j], train);
    rn_cbn *last = &b->u[b->nu - 1];
    int C = last->s.oc, HW = last->s.oh * last->s.ow;
    if (b->has_down) cbn_forward(m, &b->d, train);
    int sp = rn_prof_begin(m->prof, b->name, "fwd", 0);
    if (b->has_down) {
        ACT_CALL(m, rn_bn2_add_relu, b->out, last->c, last->scale, last->shift, b->d.c, b->d.scale, b->d.shift, m->N,
                 C, HW);
    } else {
        ACT_CALL(m, rn_bn_add_relu, b->out, last->c, last->scale, last->shift, b->in, m->N, C, HW);
    }
    rn_prof_end(m->prof, sp);
}

void rn_model_forward(rn_model *m, const float *images, const float *k, int train)
{
    rn_params *p = m->p;
    m->stem.x = images;
    m->k = k;
    m->last_train = train;
    cbn_forward(m, &m->stem, train);
    int sp = rn_prof_begin(m->prof, "backbone.maxpool", "fwd", 0);
    ACT_CALL(m, rn_maxpool_forward, m->pool, m->stem.y, m->N, 64, m->stem.s.oh, m->stem.s.ow, m->H / 4, m->W / 4);
    rn_prof_end(m->prof, sp);
    for (int i = 0; i < m->nblocks; i++) block_forward(m, &m->blocks[i], train);
    for (int i = 0; i < 3; i++) cbn_forward(m, &m->head[i], train);
    sp = rn_prof_begin(m->prof, "root.xy_depth", "fwd", 0);
    const void *backbone = m->blocks[m->nblocks - 1].out;
    int xyw = rn_params_find(p, "root.xy_layer.weight"), dw = rn_params_find(p, "root.depth_layer.weight");
    RN_ASSERT(xyw >= 0 && dw >= 0);
    ACT_CALL(m, rn_xy_forward, m->xy, m->prob, m->head[2].y, rn_params_data(p, xyw), rn_params_data(p, xyw + 1),
             m->N, 256, m->OH, m->OW);
    ACT_CALL(m, rn_gap_forward, m->feat, backbone, m->N, p->feat_ch, m->FH * m->FW);
    rn_depth_forward(m->depth, m->gamma, m->feat, rn_params_data(p, dw), rn_params_data(p, dw + 1), k, m->N,
                     p->feat_ch);
    for (int n = 0; n < m->N; n++) {
        m->coord[3 * n] = m->xy[2 * n];
        m->coord[3 * n + 1] = m->xy[2 * n + 1];
        m->coord[3 * n + 2] = m->depth[n];
    }
    rn_prof_end(m->prof, sp);
}

/* BN backward of u from dy (masked by u->y when the BN has its own ReLU) into
 * dx (may equal dy), then the conv's weight gradient. With SyncBN the
 * parameter gradients use the local sums, dx the global ones. */
static void cbn_backward_bn(rn_model *m, rn_cbn *u, void *dx, const void *dy)
{
    rn_params *p = m->p;
    int sp = rn_prof_begin(m->prof, p->e[u->pw].name, "bwd", conv_flops(&u->s));
    int C = u->s.oc, HW = u->s.oh * u->s.ow;
    const void *relu_out = u->relu ? u->y : NULL;
    double *sums = m->bnsum;
    ACT_CALL(m, rn_bn_backward_sums, sums, dy, relu_out, u->c, u->mean, u->s.n, C, HW);
    rn_bn_backward_params(rn_params_grad(p, u->pg), rn_params_grad(p, u->pb), sums, u->var, C);
    if (m->opts.reduce.fn) m->opts.reduce.fn(m->opts.reduce.ctx, sums, 2 * C);
    ACT_CALL(m, rn_bn_backward_data, dx, dy, relu_out, u->c, u->mean, u->var, rn_params_data(p, u->pg), sums, u->count,
             u->s.n, C, HW);
    rn_conv_backward_weights(u->conv, rn_params_grad(p, u->pw), u->x, dx);
    if (m->opts.grad_ready.fn) m->opts.grad_ready.fn(m->opts.grad_ready.ctx, p->e[u->pw].offset);
    rn_prof_end(m->prof, sp);
}

/* Backward-data of u's conv: dx from dy. */
static void cbn_backward_data(rn_model *m, rn_cbn *u, void *dx, const void *dy)
{
    int sp = rn_prof_begin(m->prof, m->p->e[u->pw].name, "bwd_data", conv_flops(&u->s));
    rn_conv_backward_data(u->conv, dx, dy);
    rn_prof_end(m->prof, sp);
}

static size_t in_elems(const rn_conv_shape *s) { return (size_t)s->n * s->ic * s->ih * s->iw; }

/* Gradient of the block output in g[0]; leaves the gradient of its input in g[3]. */
static void block_backward(rn_model *m, rn_block *b, void **g)
{
    int sp = rn_prof_begin(m->prof, b->name, "bwd", 0);
    ACT_CALL(m, rn_relu_backward, g[0], b->out, out_elems(&b->u[b->nu - 1].s));
    rn_prof_end(m->prof, sp);
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
    ACT_CALL(m, rn_add_inplace, g[3], b->has_down ? other : g[0], in_elems(&b->u[0].s));
    rn_prof_end(m->prof, sp);
}

static void head_backward(rn_model *m, void **g)
{
    rn_params *p = m->p;
    int xyw = rn_params_find(p, "root.xy_layer.weight"), dw = rn_params_find(p, "root.depth_layer.weight");
    int sp = rn_prof_begin(m->prof, "root.xy_depth", "bwd", 0);
    ACT_CALL(m, rn_xy_backward, g[0], rn_params_grad(p, xyw), rn_params_grad(p, xyw + 1), m->dxy, m->prob,
             m->head[2].y, rn_params_data(p, xyw), m->N, 256, m->OH, m->OW);
    rn_depth_backward(m->dfeat, rn_params_grad(p, dw), rn_params_grad(p, dw + 1), m->ddepth, m->feat,
                      rn_params_data(p, dw), m->k, m->N, p->feat_ch);
    rn_prof_end(m->prof, sp);
    for (int i = 2; i >= 0; i--) {
        cbn_backward_bn(m, &m->head[i], g[0], g[0]);
        cbn_backward_data(m, &m->head[i], g[1], g[0]);
        void *t = g[0];
        g[0] = g[1], g[1] = t;
    }
    sp = rn_prof_begin(m->prof, "root.xy_depth", "bwd", 0);
    ACT_CALL(m, rn_gap_backward, g[0], m->dfeat, m->N, p->feat_ch, m->FH * m->FW);
    rn_prof_end(m->prof, sp);
}

double rn_model_loss(const rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    return rn_loss_forward_backward(NULL, m->coord, target, vis, have_depth, m->N);
}

double rn_model_backward(rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    RN_ASSERT(m->last_train && !m->opts.inference);
    int sp = rn_prof_begin(m->prof, "loss", "bwd", 0);
    double loss = rn_loss_forward_backward(m->dcoord, m->coord, target, vis, have_depth, m->N);
    const float ls = m->loss_scale;
    for (int n = 0; n < m->N; n++) {
        m->dxy[2 * n] = m->dcoord[3 * n] * ls;
        m->dxy[2 * n + 1] = m->dcoord[3 * n + 1] * ls;
        m->ddepth[n] = m->dcoord[3 * n + 2] * ls;
    }
    rn_prof_end(m->prof, sp);
    void *g[4] = {m->g[0], m->g[1], m->g[2], m->g[3]};
    head_backward(m, g);
    for (int i = m->nblocks - 1; i >= 0; i--) {
        block_backward(m, &m->blocks[i], g);
        void *t = g[0];
        g[0] = g[3], g[3] = t;
    }
    void *dstem = g[1];
    sp = rn_prof_begin(m->prof, "backbone.maxpool", "bwd", 0);
    ACT_CALL(m, rn_maxpool_backward, dstem, g[0], m->stem.y, m->N, 64, m->stem.s.oh, m->stem.s.ow, m->H / 4, m->W / 4);
    rn_prof_end(m->prof, sp);
    cbn_backward_bn(m, &m->stem, dstem, dstem);
    return loss;
}

void rn_params_zero_grad(rn_params *p) { memset(p->grad, 0, p->n_param * sizeof *p->grad); }
