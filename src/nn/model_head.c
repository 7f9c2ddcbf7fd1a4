/* The head layers of the net's description (nn/net.h) on the device's generic ops: a heat-map layer
 * (pointwise conv, soft-argmax) on the top deconv's output, a GAP layer (GAP, linear, times k) on the
 * backbone's output, each writing its columns of the (N, K, 3) output rows; the masked L1 loss over
 * those rows and its gradient back through the layers.
 */
#include "nn/model_int.h"

#include <string.h>

/* The model's heat-map and GAP layers (NULL where the net has none). */
static const rn_head_layer *heatmap(const rn_model *m) { return m->layer[RN_HEAD_HEATMAP]; }
static const rn_head_layer *gap_layer(const rn_model *m) { return m->layer[RN_HEAD_GAP_LINEAR]; }

/* Columns of one output row; the row stride of the (N, K, 3) output. */
#define COLS 3

/* The table index of a layer's weight (its bias the next entry), looked up once at create. */
static int find_weight(const rn_model *m, const rn_head_layer *l)
{
    char name[128];
    snprintf(name, sizeof name, "%s.weight", l->param);
    return rn_params_find(m->p, name);
}

int rn_model_head_build(rn_model *m, rn_err *err)
{
    const rn_net *net = m->p->net;
    m->K = net->K;
    for (int i = 0; i < net->nhead; i++) {
        const rn_head_layer *l = &net->head[i];
        int w = find_weight(m, l);
        if (w < 0) return rn_err_set(err, "internal: %s.weight missing from the table", l->param);
        if (l->kind == RN_HEAD_HEATMAP && l->groups != m->K)
            return rn_err_set(err, "internal: %s: %d heat maps for %d output rows", l->param, l->groups, m->K);
        m->layer[l->kind] = l, m->layer_w[l->kind] = w;
    }
    return 0;
}

/* The heat-map layer's channels: G groups of D bins. */
static int heat_channels(const rn_head_layer *l) { return l->groups * l->bins; }

/* The top deconv's output shape: the heat-map layer's input. */
static const rn_act_shape *top_shape(const rn_model *m) { return &m->head[m->ndeconv - 1].a; }

/* 1: the heat-map layer is the device's one op (heat_forward), with its own scratch in place of the logits. */
static int heat_fused(const rn_model *m) { return m->opts.inference && OP(m)->heat_forward; }

void rn_model_head_plan(rn_model *m, plan *pl)
{
    size_t n = (size_t)m->N, C = (size_t)m->p->feat_ch;
    const rn_head_layer *h = heatmap(m);
    m->feat = gap_layer(m) ? rn_plan_take(pl, RN_MEM_HEAD, n * C * sizeof(float)) : NULL;
    m->dfeat = gap_layer(m) && !m->opts.inference ? rn_plan_take(pl, RN_MEM_HEAD, n * C * sizeof(float)) : NULL;
    size_t logits = h ? n * heat_channels(h) * m->OH * m->OW * sizeof(float) : 0;
    if (h && heat_fused(m)) logits = OP(m)->heat_scratch(DEV(m), top_shape(m), h->groups, h->bins);
    m->logits = h ? rn_plan_take(pl, RN_MEM_HEAD, logits) : NULL;
    m->coord_dev = rn_plan_take(pl, RN_MEM_HEAD, n * m->K * COLS * sizeof(float));
    m->dcoord = rn_plan_take(pl, RN_MEM_HEAD, n * m->K * COLS * sizeof(float));
}

/* A layer's weight and bias on the device, and their gradients. */
static float *lw(const rn_model *m, const rn_head_layer *l) { return rn_params_data(m->p, m->layer_w[l->kind]); }
static float *lb(const rn_model *m, const rn_head_layer *l) { return rn_params_data(m->p, m->layer_w[l->kind] + 1); }
static float *lgw(const rn_model *m, const rn_head_layer *l) { return rn_params_grad(m->p, m->layer_w[l->kind]); }
static float *lgb(const rn_model *m, const rn_head_layer *l) { return rn_params_grad(m->p, m->layer_w[l->kind] + 1); }

void rn_model_head_forward(rn_model *m, const void *top, const void *backbone)
{
    rn_device *dev = DEV(m);
    const rn_head_layer *h = heatmap(m), *g = gap_layer(m);
    if (h) {
        int sp = rn_prof_begin(m->prof, h->param, "fwd", 0);
        if (heat_fused(m)) {
            OP(m)->heat_forward(dev, m->coord_dev, m->logits, top, lw(m, h), lb(m, h), top_shape(m), h->groups, h->bins,
                                COLS);
        } else {
            OP(m)->pointwise_forward(dev, m->logits, top, lw(m, h), lb(m, h), top_shape(m), heat_channels(h));
            float *prob = m->opts.inference ? NULL : m->logits; /* no backward: the probabilities are not kept */
            OP(m)->softargmax_forward(dev, m->coord_dev, prob, m->logits, m->N, h->groups, h->bins, m->OH, m->OW,
                                      COLS);
        }
        rn_model_span_end(m, sp);
    }
    if (g) {
        int sp = rn_prof_begin(m->prof, g->param, "fwd", 0);
        rn_act_shape ba = rn_model_backbone_shape(m);
        OP(m)->gap_forward(dev, m->feat, backbone, &ba);
        OP(m)->linear_forward(dev, m->coord_dev + g->col, m->feat, lw(m, g), lb(m, g), g->scale_k ? m->k : NULL, m->N,
                              m->p->feat_ch, g->groups, m->K * COLS);
        rn_model_span_end(m, sp);
    }
}

void rn_model_head_backward(rn_model *m, void *dtop)
{
    rn_device *dev = DEV(m);
    const rn_head_layer *h = heatmap(m), *g = gap_layer(m);
    int sp = rn_prof_begin(m->prof, "loss", "bwd", 0);
    OP(m)->l1_loss(dev, m->lossbuf, m->dcoord, m->coord_dev, m->target, m->vis, m->have_depth, m->loss_scale, m->N,
                   m->K);
    rn_model_span_end(m, sp);
    rn_model_poison(m, rn_t_bwd(m, rn_ph_head(m)));
    if (h) {
        sp = rn_prof_begin(m->prof, h->param, "bwd", 0);
        OP(m)->softargmax_backward(dev, m->logits, m->logits, m->dcoord, m->N, h->groups, h->bins, m->OH, m->OW, COLS);
        OP(m)->pointwise_backward(dev, dtop, lgw(m, h), lgb(m, h), m->logits, m->head[m->ndeconv - 1].y, lw(m, h),
                                  top_shape(m), heat_channels(h));
        rn_model_span_end(m, sp);
    } else {
        OP(m)->zero(dev, dtop, OP(m)->act_bytes(dev, top_shape(m)));
    }
    if (g) {
        sp = rn_prof_begin(m->prof, g->param, "bwd", 0);
        OP(m)->linear_backward(dev, m->dfeat, lgw(m, g), lgb(m, g), m->dcoord + g->col, m->feat, lw(m, g),
                               g->scale_k ? m->k : NULL, m->N, m->p->feat_ch, g->groups, m->K * COLS);
        rn_model_span_end(m, sp);
    }
}

void rn_model_head_backward_backbone(rn_model *m, void *dbb)
{
    const rn_head_layer *g = gap_layer(m);
    if (!g) return;
    int sp = rn_prof_begin(m->prof, g->param, "bwd", 0);
    rn_act_shape ba = rn_model_backbone_shape(m);
    OP(m)->gap_backward(DEV(m), dbb, m->dfeat, &ba);
    rn_model_span_end(m, sp);
}

const float *rn_model_coords(rn_model *m)
{
    OP(m)->download(DEV(m), m->coord, m->coord_dev, COLS * (size_t)m->N * m->K * sizeof *m->coord);
    return m->coord;
}

double rn_model_loss(const rn_model *m, const float *target, const float *vis, const float *have_depth)
{
    double loss;
    target = rn_model_place_input(m, 2, target), vis = rn_model_place_input(m, 3, vis);
    have_depth = rn_model_place_input(m, 4, have_depth);
    OP(m)->l1_loss(DEV(m), m->lossbuf, NULL, m->coord_dev, target, vis, have_depth, 1.0f, m->N, m->K);
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
