#include "nn/model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/autotune.h"

#define BN_MOMENTUM 0.1

/* The model's device and its op table. */
#define DEV(m) ((m)->dev)
#define OP(m) ((m)->dev->ops)

/* Planning walks the buffers twice in the same order: counting (base NULL) appends each to b, then
 * place() gives them offsets, then assigning hands out base + each one's offset. */
typedef struct plan {
    rn_device *dev;
    char *base;        /* NULL while counting */
    rn_model_buf *b;   /* the buffers in planning order */
    int n, cap;        /* counting: how many so far; assigning: the next to hand out */
    int t0, t1;        /* the lifetime of the activations and gradients planned now (life()) */
    int last;          /* the step's last time: statistics, head buffers and inputs live [0, last] */
    rn_act_type act;
} plan;

const char *rn_mem_kind_name(rn_mem_kind k)
{
    static const char *names[RN_MEM_KINDS] = {"act", "grad", "stats", "head", "inputs"};
    return k >= 0 && k < RN_MEM_KINDS ? names[k] : "?";
}

/* The step's phases (model.h's memory plan): the stem, each block, the head's deconvs, the xy and
 * depth heads. Backward gives each phase two times: t_bwd(ph) and, for the weights' and data's
 * gradient of a head deconv (after its BN's backward has read its activations), t_bwd(ph) + 1. */
static int phases(const rn_model *m) { return m->nblocks + 5; }
#define PH_STEM 0
#define PH_BLOCK(i) (1 + (i))
static int ph_head(const rn_model *m, int i) { return 1 + m->nblocks + i; }
static int ph_xy(const rn_model *m) { return 4 + m->nblocks; }
static int t_bwd(const rn_model *m, int ph) { return phases(m) + 2 * (phases(m) - 1 - ph); }
static int t_last(const rn_model *m) { return t_bwd(m, PH_STEM) + 1; }

/* What take plans next: activations or gradients live over [t0, t1]. */
static void life(plan *pl, int t0, int t1) { pl->t0 = t0, pl->t1 = t1; }

static void *take_kind(plan *pl, rn_mem_kind kind, size_t bytes)
{
    int whole = kind != RN_MEM_ACT && kind != RN_MEM_GRAD;
    rn_model_buf nb = {.bytes = (bytes + 63) & ~(size_t)63, .t0 = whole ? 0 : pl->t0,
                       .t1 = whole ? pl->last : pl->t1, .kind = kind};
    if (!pl->base) {
        if (pl->n == pl->cap) {
            pl->cap = pl->cap ? 2 * pl->cap : 256;
            pl->b = rn_xrealloc(pl->b, (size_t)pl->cap * sizeof *pl->b);
        }
        pl->b[pl->n++] = nb;
        return NULL;
    }
    const rn_model_buf *b = &pl->b[pl->n++];
    RN_ASSERT(b->bytes == nb.bytes && b->t0 == nb.t0 && b->t1 == nb.t1 && b->kind == kind);
    return pl->base + b->off;
}

/* A statistics buffer (whole step). */
static void *take(plan *pl, size_t bytes) { return take_kind(pl, RN_MEM_STATS, bytes); }

static float *take_f(plan *pl, size_t n) { return take(pl, n * sizeof(float)); }

static float *take_head(plan *pl, size_t n) { return take_kind(pl, RN_MEM_HEAD, n * sizeof(float)); }

static size_t shape_bytes(const plan *pl, const rn_act_shape *a)
{
    rn_act_shape t = *a;
    t.type = pl->act;
    return pl->dev->ops->act_bytes(pl->dev, &t);
}

static size_t act_bytes(const plan *pl, int n, int c, int h, int w)
{
    rn_act_shape a = {n, c, h, w, pl->act};
    return shape_bytes(pl, &a);
}

/* An activation (n, c, h, w) of the planned type, live over the current life(). */
static void *take_act(plan *pl, int n, int c, int h, int w)
{
    return take_kind(pl, RN_MEM_ACT, act_bytes(pl, n, c, h, w));
}

static int lives_meet(const rn_model_buf *a, const rn_model_buf *b) { return a->t0 <= b->t1 && b->t0 <= a->t1; }

static int bytes_meet(const rn_model_buf *a, const rn_model_buf *b)
{
    return a->off < b->off + b->bytes && b->off < a->off + a->bytes;
}

/* Larger first; equal sizes in planning order (their order in one array). */
static int by_size(const void *x, const void *y)
{
    const rn_model_buf *a = *(rn_model_buf *const *)x, *b = *(rn_model_buf *const *)y;
    return a->bytes != b->bytes ? (a->bytes < b->bytes) - (a->bytes > b->bytes) : (a > b) - (a < b);
}

static int by_off(const void *x, const void *y)
{
    const rn_model_buf *a = *(rn_model_buf *const *)x, *b = *(rn_model_buf *const *)y;
    return (a->off > b->off) - (a->off < b->off);
}

/* The lowest offset for b clear of every placed buffer live with it (placed[0 .. n), tmp: n slots). */
static size_t lowest_fit(const rn_model_buf *b, rn_model_buf *const *placed, int n, const rn_model_buf **tmp)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (lives_meet(b, placed[i])) tmp[k++] = placed[i];
    qsort(tmp, (size_t)k, sizeof *tmp, by_off);
    size_t off = 0;
    for (int i = 0; i < k && tmp[i]->off < off + b->bytes; i++)
        if (tmp[i]->off + tmp[i]->bytes > off) off = tmp[i]->off + tmp[i]->bytes;
    return off;
}

/* Offsets of b[0 .. n): largest first, each at the lowest offset clear of the buffers live with it.
 * Returns the arena's size. */
static size_t place(rn_model_buf *b, int n)
{
    rn_model_buf **placed = rn_xmalloc((size_t)(n ? n : 1) * sizeof *placed);
    const rn_model_buf **tmp = rn_xmalloc((size_t)(n ? n : 1) * sizeof *tmp);
    for (int i = 0; i < n; i++) placed[i] = &b[i];
    qsort(placed, (size_t)n, sizeof *placed, by_size); /* the placing order; placed[0 .. k) are placed */
    size_t end = 0;
    for (int k = 0; k < n; k++) {
        rn_model_buf *x = placed[k];
        x->off = lowest_fit(x, placed, k, tmp);
        if (x->off + x->bytes > end) end = x->off + x->bytes;
    }
    free(placed), free(tmp);
    return end;
}

/* opts.no_reuse: b[0 .. n) one after another. Returns the arena's size. */
static size_t place_apart(rn_model_buf *b, int n)
{
    size_t end = 0;
    for (int i = 0; i < n; i++) b[i].off = end, end += b[i].bytes;
    return end;
}

/* The plan's invariant: every buffer inside the arena, no two that are live at one time overlapping. */
static void plan_check(const rn_model_buf *b, int n, size_t arena)
{
    for (int i = 0; i < n; i++) {
        RN_ASSERT(b[i].t0 <= b[i].t1 && b[i].off + b[i].bytes <= arena);
        for (int j = i + 1; j < n; j++) RN_ASSERT(!(lives_meet(&b[i], &b[j]) && bytes_meet(&b[i], &b[j])));
    }
}

/* The plan's costs: bytes by kind, the arena, the most bytes live at one time. */
static rn_model_mem plan_mem(const rn_model_buf *b, int n, size_t arena, int last)
{
    rn_model_mem mem = {.arena = arena};
    for (int i = 0; i < n; i++) mem.by_kind[b[i].kind] += b[i].bytes;
    for (int t = 0; t <= last; t++) {
        size_t live = 0;
        for (int i = 0; i < n; i++) live += b[i].t0 <= t && t <= b[i].t1 ? b[i].bytes : 0;
        if (live > mem.live_peak) mem.live_peak = live;
    }
    return mem;
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
    const rn_conv_shape *s = &u->s;
    u->a = (rn_act_shape){s->n, s->oc, s->oh, s->ow, pl->act};
    u->x = x;
    u->c = take_act(pl, s->n, s->oc, s->oh, s->ow);
    u->y = fused ? NULL : take_act(pl, s->n, s->oc, s->oh, s->ow);
    u->mean = take_f(pl, (size_t)s->oc);
    u->var = take_f(pl, (size_t)s->oc);
    u->scale = take_f(pl, (size_t)s->oc);
    u->shift = take_f(pl, (size_t)s->oc);
}

/* Floats of input i: images (N, 3, H, W), k (N), target (N, 3), vis (N), have_depth (N). */
static size_t input_floats(const rn_model *m, int i)
{
    size_t n = (size_t)m->N;
    return i == 0 ? n * 3 * m->H * m->W : i == 2 ? 3 * n : n;
}

/* Device copies of the inputs (images, k, target, vis, have_depth) where the
 * device's memory is not host memory, two sets of them with opts.prefetch; with
 * host memory they are used in place. */
static void plan_inputs(rn_model *m, plan *pl)
{
    int sets = m->opts.prefetch ? 2 : 1;
    for (int s = 0; s < sets; s++)
        for (int i = 0; i < 5; i++)
            m->in[s][i] =
                pl->dev->host_memory ? NULL : take_kind(pl, RN_MEM_INPUT, input_floats(m, i) * sizeof(float));
}

/* Input i's host array into buf: beside the compute from pinned host memory, else a plain upload. */
static void upload_input(const rn_model *m, float *buf, int i, const float *host)
{
    size_t bytes = input_floats(m, i) * sizeof *host;
    if (m->opts.pinned_inputs && OP(m)->upload_async)
        OP(m)->upload_async(DEV(m), buf, host, bytes);
    else
        OP(m)->upload(DEV(m), buf, host, bytes);
}

/* Input i (plan_inputs) on the device: host in place with host memory, else uploaded into the current set. */
static const float *place_input(const rn_model *m, int i, const float *host)
{
    float *buf = m->in[m->cur][i];
    if (buf) upload_input(m, buf, i, host);
    return buf ? buf : host;
}

/* As place_input, but no upload where rn_model_prefetch put this very array into the current set. */
static const float *stage(rn_model *m, int i, const float *host)
{
    const float *at = m->ahead[i] == host && m->in[m->cur][i] ? m->in[m->cur][i] : place_input(m, i, host);
    m->ahead[i] = NULL;
    return at;
}

int rn_model_prefetch(rn_model *m, const float *images, const float *k, const float *target, const float *vis,
                      const float *have_depth)
{
    int next = !m->cur;
    if (!m->in[next][0]) return 0;
    const float *host[5] = {images, k, target, vis, have_depth};
    for (int i = 0; i < 5; i++) {
        upload_input(m, m->in[next][i], i, host[i]);
        m->ahead[i] = host[i];
    }
    return 1;
}

/* The backbone's output and the shapes of the head's inputs. */
static rn_act_shape backbone_shape(const rn_model *m)
{
    return (rn_act_shape){m->N, m->p->feat_ch, m->FH, m->FW, m->opts.act};
}

static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

/* The forward activations: each phase's live from its forward to the end of its backward; a head deconv's
 * only until its BN's backward (t_bwd), so that the gradient of its input can take their memory. */
static void plan_forward(rn_model *m, plan *pl)
{
    int n = m->N;
    life(pl, PH_STEM, t_bwd(m, PH_STEM) + 1);
    plan_cbn(pl, &m->stem, NULL, 0);
    m->pool = take_act(pl, n, 64, m->H / 4, m->W / 4);
    const void *in = m->pool;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        life(pl, PH_BLOCK(i), t_bwd(m, PH_BLOCK(i)) + 1);
        b->in = in;
        const void *x = in;
        for (int j = 0; j < b->nu; j++) {
            plan_cbn(pl, &b->u[j], x, j == b->nu - 1);
            x = b->u[j].y;
        }
        if (b->has_down) plan_cbn(pl, &b->d, in, 1);
        const rn_conv_shape *last = &b->u[b->nu - 1].s;
        b->out = take_act(pl, n, last->oc, last->oh, last->ow);
        in = b->out;
    }
    for (int i = 0; i < 3; i++) {
        life(pl, ph_head(m, i), t_bwd(m, ph_head(m, i)));
        plan_cbn(pl, &m->head[i], in, 0);
        in = m->head[i].y;
    }
}

/* The largest of block b's activations: its input, each unit's output. */
static size_t block_max(const plan *pl, const rn_block *b)
{
    const rn_conv_shape *s0 = &b->u[0].s;
    size_t big = act_bytes(pl, s0->n, s0->ic, s0->ih, s0->iw);
    for (int j = 0; j < b->nu; j++) big = max_z(big, shape_bytes(pl, &b->u[j].a));
    return b->has_down ? max_z(big, shape_bytes(pl, &b->d.a)) : big;
}

/* Block i's gradient buffers (block_backward): g[1] and g[2] for its own backward (block 0's g[1] also
 * for the stem's: rn_model_backward's dstem), g[3] its input's gradient, read by the block before it
 * (block 0's by the max-pool's backward) as its g[0]. */
static void plan_block_grads(rn_model *m, plan *pl, int i)
{
    rn_block *b = &m->blocks[i];
    int t = t_bwd(m, PH_BLOCK(i)), prev = t_bwd(m, i ? PH_BLOCK(i - 1) : PH_STEM) + 1;
    size_t big = block_max(pl, b);
    const rn_conv_shape *s0 = &b->u[0].s;
    life(pl, t, i ? t + 1 : prev);
    b->g[1] = take_kind(pl, RN_MEM_GRAD, i ? big : max_z(big, shape_bytes(pl, &m->stem.a)));
    life(pl, t, t + 1);
    b->g[2] = take_kind(pl, RN_MEM_GRAD, big);
    life(pl, t, prev);
    b->g[3] = take_kind(pl, RN_MEM_GRAD, act_bytes(pl, s0->n, s0->ic, s0->ih, s0->iw));
}

/* Backward's gradient buffers. The head's pair (head_backward): g[0] takes the xy head's gradient of
 * the top deconv's output, then head[1]'s of its input; g[1] head[2]'s of its input (from head[2]'s
 * second time: over head[2]'s activations), then head[0]'s: the backbone output's gradient, which the
 * last block reads. Then each block's. */
static void plan_grads(rn_model *m, plan *pl)
{
    rn_act_shape bb = backbone_shape(m);
    life(pl, t_bwd(m, ph_xy(m)), t_bwd(m, ph_head(m, 0)) + 1);
    m->g[0] = take_kind(pl, RN_MEM_GRAD, max_z(shape_bytes(pl, &m->head[2].a), shape_bytes(pl, &m->head[0].a)));
    life(pl, t_bwd(m, ph_head(m, 2)) + 1, t_bwd(m, PH_BLOCK(m->nblocks - 1)) + 1);
    m->g[1] = take_kind(pl, RN_MEM_GRAD, max_z(shape_bytes(pl, &m->head[1].a), shape_bytes(pl, &bb)));
    for (int i = m->nblocks - 1; i >= 0; i--) plan_block_grads(m, pl, i);
}

static void plan_all(rn_model *m, plan *pl)
{
    int n = m->N, C = m->p->feat_ch;
    plan_forward(m, pl);
    m->feat = take_head(pl, (size_t)n * C);
    m->dfeat = take_head(pl, (size_t)n * C);
    m->prob = take_head(pl, (size_t)n * m->OH * m->OW);
    m->xy = take_head(pl, 2 * (size_t)n);
    m->dxy = take_head(pl, 2 * (size_t)n);
    m->gamma = take_head(pl, (size_t)n);
    m->depth = take_head(pl, (size_t)n);
    m->ddepth = take_head(pl, (size_t)n);
    m->coord_dev = take_head(pl, 3 * (size_t)n);
    m->lossbuf = take_kind(pl, RN_MEM_HEAD, 2 * sizeof(double));
    m->finite = m->lossbuf ? (int *)(m->lossbuf + 1) : NULL;
    m->sched = take(pl, 2 * sizeof(double));
    m->bnsum = take(pl, (2 * (size_t)(m->p->feat_ch > 256 ? m->p->feat_ch : 256) + 1) * sizeof(double));
    if (!m->opts.inference) plan_grads(m, pl);
    plan_inputs(m, pl);
}

/* epi: the fused epilogue beyond the bias (RN_EPI_SUM, RN_EPI_RELU), used when folding. */
static int create_conv(rn_model *m, rn_cbn *u, int epi, rn_err *err)
{
    u->s.epilogue = m->opts.fold ? RN_EPI_BIAS | epi : 0;
    u->s.compute = m->opts.compute;
    u->s.act = m->opts.act;
    u->s.forward_only = m->opts.inference;
    if (m->opts.tune && rn_autotune_choose(m->opts.tune, m->dev, &u->s, err))
        return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    if (rn_conv_create(&u->conv, m->dev, &u->s, err)) return rn_err_prefix(err, "%s", m->p->e[u->pw].name);
    return 0;
}

static int create_convs(rn_model *m, rn_err *err)
{
    if (create_conv(m, &m->stem, RN_EPI_RELU, err)) return -1;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++)
            if (create_conv(m, &b->u[j], j == b->nu - 1 ? RN_EPI_SUM | RN_EPI_RELU : RN_EPI_RELU, err)) return -1;
        if (b->has_down && create_conv(m, &b->d, 0, err)) return -1;
    }
    for (int i = 0; i < 3; i++)
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
                              (int)o->compute, o->act == RN_ACT_BF16 ? "bf16" : "fp32");
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
    m->p = p;
    m->N = N, m->H = H, m->W = W;
    m->OH = H / 4, m->OW = W / 4, m->FH = H / 32, m->FW = W / 32;
    m->loss_scale = 1.0f;
    if (o->fold && !o->inference) return rn_err_set(err, "folded BN is for inference models only");
    if (o->fold && o->compute == RN_COMPUTE_BF16) m->opts.act = RN_ACT_BF16;
    if (open_device(m, err) || build_structure(m, err)) return -1;
    m->opts.prefetch = o->prefetch && o->pinned_inputs && !o->inference && OP(m)->upload_async; /* else no use */
    plan pl = {.dev = m->dev, .act = m->opts.act, .last = t_last(m)};
    plan_all(m, &pl);
    m->bufs = pl.b, m->nbufs = pl.n;
    m->arena_bytes = o->no_reuse ? place_apart(m->bufs, m->nbufs) : place(m->bufs, m->nbufs);
    plan_check(m->bufs, m->nbufs, m->arena_bytes);
    m->mem = plan_mem(m->bufs, m->nbufs, m->arena_bytes, pl.last);
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
    plan pl = {.dev = m->dev, .base = m->arena, .b = m->bufs, .act = m->opts.act, .last = t_last(m)};
    plan_all(m, &pl);
    RN_ASSERT(pl.n == m->nbufs);
    m->coord = rn_xmalloc(3 * (size_t)N * sizeof *m->coord);
    if (create_convs(m, err)) goto fail;
    return 0;
fail:
    rn_model_destroy(m);
    return -1;
}

/* fn(m, u, ctx) on every conv + BN unit in network order: the stem, each block's units and its
 * downsample, the head's three (also on a model whose create stopped part way). */
static void each_cbn(rn_model *m, void (*fn)(rn_model *m, rn_cbn *u, void *ctx), void *ctx)
{
    fn(m, &m->stem, ctx);
    for (int i = 0; m->blocks && i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        for (int j = 0; j < b->nu; j++) fn(m, &b->u[j], ctx);
        if (b->has_down) fn(m, &b->d, ctx);
    }
    for (int i = 0; i < 3; i++) fn(m, &m->head[i], ctx);
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
static void span_end(rn_model *m, int sp)
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
    if (m->opts.reduce.fn) (void)m->opts.reduce.fn(m->opts.reduce.ctx, m->dev, buf, n, RN_RED_F64, &ignore);
}

/* conv, then BN statistics (train) or running statistics (eval) folded into
 * scale/shift; applies BN(+ReLU) into u->y unless the BN is fused downstream. */
/* dst = the fused conv of u on src (+ res), BN folded in (fold models). */
static void cbn_fused(rn_model *m, rn_cbn *u, void *dst, const void *src, const void *res)
{
    int sp = rn_prof_begin(m->prof, m->p->e[u->pw].name, "fwd", conv_flops(&u->s));
    OP(m)->conv_forward_fused(DEV(m), u->conv, dst, src, res);
    span_end(m, sp);
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
    span_end(m, sp);
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
    span_end(m, sp);
}

static rn_act_shape stem_shape(const rn_model *m) { return m->stem.a; }

static void maxpool(rn_model *m, const void *stem_out)
{
    int sp = rn_prof_begin(m->prof, "backbone.maxpool", "fwd", 0);
    rn_act_shape sa = stem_shape(m);
    OP(m)->maxpool_forward(DEV(m), m->pool, stem_out, &sa, m->H / 4, m->W / 4);
    span_end(m, sp);
}

/* The xy and depth heads on the deconv head's output top and the backbone's output (k: m->k). */
static void heads_forward(rn_model *m, const void *top, const void *backbone)
{
    rn_params *p = m->p;
    rn_device *dev = DEV(m);
    int sp = rn_prof_begin(m->prof, "root.xy_depth", "fwd", 0);
    int xyw = rn_params_find(p, "root.xy_layer.weight"), dw = rn_params_find(p, "root.depth_layer.weight");
    RN_ASSERT(xyw >= 0 && dw >= 0);
    OP(m)->xy_forward(dev, m->xy, m->prob, top, rn_params_data(p, xyw), rn_params_data(p, xyw + 1), &m->head[2].a);
    rn_act_shape ba = backbone_shape(m);
    OP(m)->gap_forward(dev, m->feat, backbone, &ba);
    OP(m)->depth_forward(dev, m->depth, m->gamma, m->feat, rn_params_data(p, dw), rn_params_data(p, dw + 1), m->k, m->N,
                         p->feat_ch);
    OP(m)->coords(dev, m->coord_dev, m->xy, m->depth, m->N);
    span_end(m, sp);
}

const float *rn_model_coords(rn_model *m)
{
    OP(m)->download(DEV(m), m->coord, m->coord_dev, 3 * (size_t)m->N * sizeof *m->coord);
    return m->coord;
}

/* The eval forward of a fold model: fused convs only. */
static void forward_fused(rn_model *m, const float *images)
{
    cbn_fused(m, &m->stem, m->stem.c, images, NULL);
    maxpool(m, m->stem.c);
    void *x = m->pool;
    for (int i = 0; i < m->nblocks; i++) x = block_fused(m, &m->blocks[i], x);
    const void *h = x;
    for (int i = 0; i < 3; i++) {
        cbn_fused(m, &m->head[i], m->head[i].c, h, NULL);
        h = m->head[i].c;
    }
    heads_forward(m, h, x);
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
    m->stem.x = stage(m, 0, images);
    m->k = stage(m, 1, k);
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
    for (int i = 0; i < 3; i++) cbn_forward(m, &m->head[i], train);
    heads_forward(m, m->head[2].y, m->blocks[m->nblocks - 1].out);
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
    return o->graph && OP(m)->graph_begin && !m->prof && !o->reduce.fn && !o->grad_ready.fn && !gr->failed &&
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
    span_end(m, sp);
}

/* Backward-data of u's conv: dx from dy. */
static void cbn_backward_data(rn_model *m, rn_cbn *u, void *dx, const void *dy)
{
    int sp = rn_prof_begin(m->prof, m->p->e[u->pw].name, "bwd_data", conv_flops(&u->s));
    rn_conv_backward_data(u->conv, dx, dy);
    span_end(m, sp);
}

/* opts.poison: NaN (in float and in bf16) into every planned buffer that died at time t - 1 and every
 * one that comes to life at t, at the start of backward's time t (called at each time a buffer is
 * born at or dies just before, the stem's excepted). */
static void poison(rn_model *m, int t)
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
    poison(m, t_bwd(m, PH_BLOCK((int)(b - m->blocks))));
    g[1] = b->g[1], g[2] = b->g[2], g[3] = b->g[3]; /* the block's planned buffers; g[0]: the next block's g[3] */
    int sp = rn_prof_begin(m->prof, b->name, "bwd", 0);
    OP(m)->relu_backward(DEV(m), g[0], b->out, &b->u[b->nu - 1].a);
    span_end(m, sp);
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
    span_end(m, sp);
}

static void head_backward(rn_model *m, void **g)
{
    rn_params *p = m->p;
    rn_device *dev = DEV(m);
    int xyw = rn_params_find(p, "root.xy_layer.weight"), dw = rn_params_find(p, "root.depth_layer.weight");
    poison(m, t_bwd(m, ph_xy(m)));
    int sp = rn_prof_begin(m->prof, "root.xy_depth", "bwd", 0);
    OP(m)->xy_backward(dev, g[0], rn_params_grad(p, xyw), rn_params_grad(p, xyw + 1), m->dxy, m->prob, m->head[2].y,
                       rn_params_data(p, xyw), &m->head[2].a);
    OP(m)->depth_backward(dev, m->dfeat, rn_params_grad(p, dw), rn_params_grad(p, dw + 1), m->ddepth, m->feat,
                          rn_params_data(p, dw), m->k, m->N, p->feat_ch);
    span_end(m, sp);
    for (int i = 2; i >= 0; i--) {
        poison(m, t_bwd(m, ph_head(m, i)));
        cbn_backward_bn(m, &m->head[i], g[0], g[0]);
        poison(m, t_bwd(m, ph_head(m, i)) + 1);
        cbn_backward_data(m, &m->head[i], g[1], g[0]);
        void *t = g[0];
        g[0] = g[1], g[1] = t;
    }
    sp = rn_prof_begin(m->prof, "root.xy_depth", "bwd", 0);
    rn_act_shape ba = backbone_shape(m);
    OP(m)->gap_backward(dev, g[0], m->dfeat, &ba);
    span_end(m, sp);
}

double rn_model_loss(const rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    double loss;
    target = place_input(m, 2, target), vis = place_input(m, 3, vis), have_depth = place_input(m, 4, have_depth);
    OP(m)->loss(DEV(m), m->lossbuf, NULL, NULL, m->coord_dev, target, vis, have_depth, 1.0f, m->N);
    OP(m)->download(DEV(m), &loss, m->lossbuf, sizeof loss);
    return loss;
}

void rn_model_read_status(rn_model *m, double *loss, int *finite)
{
    double st[2];
    OP(m)->download(DEV(m), st, m->lossbuf, sizeof st);
    *loss = st[0];
    if (finite) memcpy(finite, &st[1], sizeof *finite);
}

double rn_model_loss_read(rn_model *m)
{
    double loss;
    rn_model_read_status(m, &loss, NULL);
    return loss;
}

void rn_model_stage_targets(rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    m->target = stage(m, 2, target), m->vis = stage(m, 3, vis), m->have_depth = stage(m, 4, have_depth);
}

void rn_model_backward_ops(rn_model *m)
{
    RN_ASSERT(m->last_train && !m->opts.inference);
    rn_device *dev = DEV(m);
    int sp = rn_prof_begin(m->prof, "loss", "bwd", 0);
    OP(m)->loss(dev, m->lossbuf, m->dxy, m->ddepth, m->coord_dev, m->target, m->vis, m->have_depth, m->loss_scale,
                m->N);
    span_end(m, sp);
    void *g[4] = {m->g[0], m->g[1], NULL, NULL}; /* g[1..3]: each block's own (block_backward) */
    head_backward(m, g);
    for (int i = m->nblocks - 1; i >= 0; i--) {
        block_backward(m, &m->blocks[i], g);
        void *t = g[0];
        g[0] = g[3], g[3] = t;
    }
    void *dstem = g[1];
    sp = rn_prof_begin(m->prof, "backbone.maxpool", "bwd", 0);
    rn_act_shape sa = stem_shape(m);
    OP(m)->maxpool_backward(dev, dstem, g[0], m->stem.y, &sa, m->H / 4, m->W / 4);
    span_end(m, sp);
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
