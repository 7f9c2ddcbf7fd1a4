/* The model's memory plan (nn/model.h: every buffer with its lifetime in the step's phases, placed by
 * liveness) and the step's inputs on the device (one set, or two with prefetch). */
#include "nn/model_int.h"
#include "nn/net.h"

#include <stdlib.h>
#include <string.h>

/* What take plans next: activations or gradients live over [t0, t1]. */
void rn_plan_life(plan *pl, int t0, int t1) { pl->t0 = t0, pl->t1 = t1; }

void *rn_plan_take(plan *pl, rn_mem_kind kind, size_t bytes)
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
static void *take(plan *pl, size_t bytes) { return rn_plan_take(pl, RN_MEM_STATS, bytes); }

static float *take_f(plan *pl, size_t n) { return take(pl, n * sizeof(float)); }

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

/* An activation (n, c, h, w) of the planned type, live over the current rn_plan_life(). */
static void *take_act(plan *pl, int n, int c, int h, int w)
{
    return rn_plan_take(pl, RN_MEM_ACT, act_bytes(pl, n, c, h, w));
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
size_t rn_plan_place(rn_model_buf *b, int n)
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
size_t rn_plan_place_apart(rn_model_buf *b, int n)
{
    size_t end = 0;
    for (int i = 0; i < n; i++) b[i].off = end, end += b[i].bytes;
    return end;
}

/* The plan's invariant: every buffer inside the arena, no two that are live at one time overlapping. */
void rn_plan_check(const rn_model_buf *b, int n, size_t arena)
{
    for (int i = 0; i < n; i++) {
        RN_ASSERT(b[i].t0 <= b[i].t1 && b[i].off + b[i].bytes <= arena);
        for (int j = i + 1; j < n; j++) RN_ASSERT(!(lives_meet(&b[i], &b[j]) && bytes_meet(&b[i], &b[j])));
    }
}

/* The plan's costs: bytes by kind, the arena, the most bytes live at one time. */
rn_model_mem rn_plan_mem(const rn_model_buf *b, int n, size_t arena, int last)
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

/* Floats of input i: images (N, 3, H, W), k (N; none when the net takes no k), target (N, K, 3), vis (N, K),
 * have_depth (N). */
static size_t input_floats(const rn_model *m, int i)
{
    size_t n = (size_t)m->N;
    if (i == 1 && !rn_net_uses_k(m->p->net)) return 0;
    return i == 0 ? n * 3 * m->H * m->W : i == 2 ? 3 * n * m->K : i == 3 ? n * m->K : n;
}

/* Device copies of the inputs (images, k, target, vis, have_depth) where the
 * device's memory is not host memory, two sets of them with opts.prefetch; with
 * host memory they are used in place. */
static void plan_inputs(rn_model *m, plan *pl)
{
    int sets = m->opts.prefetch ? 2 : 1;
    for (int s = 0; s < sets; s++)
        for (int i = 0; i < 5; i++)
            m->in[s][i] = pl->dev->host_memory || !input_floats(m, i)
                              ? NULL
                              : rn_plan_take(pl, RN_MEM_INPUT, input_floats(m, i) * sizeof(float));
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
const float *rn_model_place_input(const rn_model *m, int i, const float *host)
{
    float *buf = m->in[m->cur][i];
    if (!host) return NULL; /* an input the net does not take (k), or a forward without targets */
    if (buf) upload_input(m, buf, i, host);
    return buf ? buf : host;
}

/* As place_input, but no upload where rn_model_prefetch put this very array into the current set. */
const float *rn_model_stage_input(rn_model *m, int i, const float *host)
{
    const float *at = m->ahead[i] == host && m->in[m->cur][i] ? m->in[m->cur][i] : rn_model_place_input(m, i, host);
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
        if (m->in[next][i] && host[i]) upload_input(m, m->in[next][i], i, host[i]);
        m->ahead[i] = host[i];
    }
    return 1;
}

/* The backbone's output and the shapes of the head's inputs. */
rn_act_shape rn_model_backbone_shape(const rn_model *m)
{
    return (rn_act_shape){m->N, m->p->feat_ch, m->FH, m->FW, m->opts.act};
}

static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

/* The lifetime of what phase ph writes: in training from its forward to the end of its backward (t1); in an
 * inference model only while it and the next phase run (the next reads it; the head's buffers live on). */
static void fwd_life(const rn_model *m, plan *pl, int ph, int t1)
{
    rn_plan_life(pl, ph, m->opts.inference ? ph + 1 : t1);
}

/* In an inference model, the last phase that reads the output of the blocks before block i (the pool's for
 * i = 0): a fold model's blocks without a downsample add their residual in place, so that output is every
 * later block's until the next block with a downsample reads it; after the last block, the head (GAP). */
static int chain_end(const rn_model *m, int i)
{
    for (; i < m->nblocks; i++)
        if (m->blocks[i].has_down) return PH_BLOCK(i);
    return rn_ph_head(m);
}

/* The forward activations: each phase's live from its forward to the end of its backward; a head deconv's
 * only until its BN's backward (t_bwd), so that the gradient of its input can take their memory. */
static void plan_forward(rn_model *m, plan *pl)
{
    int n = m->N;
    fwd_life(m, pl, PH_STEM, rn_t_bwd(m, PH_STEM) + 1);
    plan_cbn(pl, &m->stem, NULL, 0);
    if (m->opts.inference) rn_plan_life(pl, PH_STEM, chain_end(m, 0));
    m->pool = take_act(pl, n, 64, m->H / 4, m->W / 4);
    const void *in = m->pool;
    for (int i = 0; i < m->nblocks; i++) {
        rn_block *b = &m->blocks[i];
        fwd_life(m, pl, PH_BLOCK(i), rn_t_bwd(m, PH_BLOCK(i)) + 1);
        b->in = in;
        const void *x = in;
        for (int j = 0; j < b->nu; j++) {
            plan_cbn(pl, &b->u[j], x, j == b->nu - 1);
            x = b->u[j].y;
        }
        if (b->has_down) plan_cbn(pl, &b->d, in, 1);
        const rn_conv_shape *last = &b->u[b->nu - 1].s;
        if (m->opts.inference) rn_plan_life(pl, PH_BLOCK(i), chain_end(m, i + 1));
        b->out = take_act(pl, n, last->oc, last->oh, last->ow);
        in = b->out;
    }
    for (int i = 0; i < m->ndeconv; i++) {
        fwd_life(m, pl, rn_ph_deconv(m, i), rn_t_bwd(m, rn_ph_deconv(m, i)));
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
    int t = rn_t_bwd(m, PH_BLOCK(i)), prev = rn_t_bwd(m, i ? PH_BLOCK(i - 1) : PH_STEM) + 1;
    size_t big = block_max(pl, b);
    const rn_conv_shape *s0 = &b->u[0].s;
    rn_plan_life(pl, t, i ? t + 1 : prev);
    b->g[1] = rn_plan_take(pl, RN_MEM_GRAD, i ? big : max_z(big, shape_bytes(pl, &m->stem.a)));
    rn_plan_life(pl, t, t + 1);
    b->g[2] = rn_plan_take(pl, RN_MEM_GRAD, big);
    rn_plan_life(pl, t, prev);
    b->g[3] = rn_plan_take(pl, RN_MEM_GRAD, act_bytes(pl, s0->n, s0->ic, s0->ih, s0->iw));
}

/* Backward's gradient buffers. The deconvs' pair (rn_model_backward_ops): g[0] takes the head layers'
 * gradient of the top deconv's output, then each deconv's output gradient in turn; g[1] the top
 * deconv's input gradient (from its second time: over its activations), then the next's, alternating,
 * the last of them the backbone output's gradient, which the last block reads. Then each block's. */
static void plan_grads(rn_model *m, plan *pl)
{
    rn_act_shape bb = rn_model_backbone_shape(m);
    int top = m->ndeconv - 1;
    size_t g0 = 0, g1 = shape_bytes(pl, &bb);
    for (int i = 0; i < m->ndeconv; i++) /* the output gradients of top, top - 2, ... in g[0], the rest in g[1] */
        if ((top - i) % 2 == 0) g0 = max_z(g0, shape_bytes(pl, &m->head[i].a));
        else g1 = max_z(g1, shape_bytes(pl, &m->head[i].a));
    rn_plan_life(pl, rn_t_bwd(m, rn_ph_head(m)), rn_t_bwd(m, rn_ph_deconv(m, 0)) + 1);
    m->g[0] = rn_plan_take(pl, RN_MEM_GRAD, g0);
    rn_plan_life(pl, rn_t_bwd(m, rn_ph_deconv(m, top)) + 1, rn_t_bwd(m, PH_BLOCK(m->nblocks - 1)) + 1);
    m->g[1] = rn_plan_take(pl, RN_MEM_GRAD, g1);
    for (int i = m->nblocks - 1; i >= 0; i--) plan_block_grads(m, pl, i);
}

void rn_plan_all(rn_model *m, plan *pl)
{
    plan_forward(m, pl);
    rn_model_head_plan(m, pl);
    m->lossbuf = rn_plan_take(pl, RN_MEM_HEAD, 2 * sizeof(double));
    m->finite = m->lossbuf ? (int *)(m->lossbuf + 1) : NULL;
    m->sched = take(pl, 2 * sizeof(double));
    m->bnsum = take(pl, (2 * (size_t)(m->p->feat_ch > 256 ? m->p->feat_ch : 256) + 1) * sizeof(double));
    if (!m->opts.inference) plan_grads(m, pl);
    plan_inputs(m, pl);
}
