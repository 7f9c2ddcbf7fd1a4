#include "train/step.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void rn_step_replicas_init(rn_step_replicas *r, const rn_params *p, int n)
{
    *r = (rn_step_replicas){.n = n,
                            .stats = rn_xmalloc(p->n_stats * sizeof(float) + 1),
                            .nbt = rn_xmalloc(p->n_nbt * sizeof(int64_t) + 1),
                            .gsum = rn_xmalloc(p->n_param * sizeof(float) + 1),
                            .grad = rn_xmalloc(p->n_param * sizeof(float) + 1)};
}

void rn_step_replicas_free(rn_step_replicas *r)
{
    free(r->stats), free(r->nbt), free(r->gsum), free(r->grad);
    memset(r, 0, sizeof *r);
}

static void span(const rn_train_hooks *hk, const char *name, int begin)
{
    if (begin && hk->span_begin) hk->span_begin(hk->ctx, name);
    if (!begin && hk->span_end) hk->span_end(hk->ctx, name);
}

static void forward_backward(rn_model *m, const rn_step_batch *b, const rn_train_hooks *hk)
{
    span(hk, "forward", 1);
    rn_model_forward(m, b->images, b->k, 1);
    span(hk, "forward", 0);
    span(hk, "backward", 1);
    rn_model_backward(m, b->target, b->vis, b->have_depth);
    span(hk, "backward", 0);
}

static void bn_state_copy(rn_params *p, rn_step_replicas *r, int save)
{
    if (save) {
        rn_params_download(p, r->stats, p->stats, p->n_stats * sizeof *p->stats);
        memcpy(r->nbt, p->nbt, p->n_nbt * sizeof *p->nbt);
    } else {
        rn_params_upload(p, p->stats, r->stats, p->n_stats * sizeof *p->stats);
        memcpy(p->nbt, r->nbt, p->n_nbt * sizeof *p->nbt);
    }
}

/* Replicas r->n - 1 .. 0 one after the other (see step.h); returns the mean loss. */
static double replicas_forward_backward(rn_model *m, const rn_step_batch *b, rn_step_replicas *r,
                                        const rn_train_hooks *hk)
{
    rn_params *p = m->p;
    RN_ASSERT(r->n >= 2);
    double loss = 0;
    bn_state_copy(p, r, 1);
    for (int e = r->n - 1; e >= 0; e--) {
        bn_state_copy(p, r, 0);
        rn_model_zero_grad(m);
        forward_backward(m, &b[e], hk);
        loss += rn_model_loss_read(m);
        rn_params_download(p, r->grad, p->grad, p->n_param * sizeof *r->grad);
        float *g = r->gsum;
        for (size_t j = 0; j < p->n_param; j++) g[j] = e == r->n - 1 ? r->grad[j] : g[j] + r->grad[j];
    }
    float inv = 1.0f / (float)r->n;
    for (size_t j = 0; j < p->n_param; j++) r->gsum[j] *= inv;
    rn_params_upload(p, p->grad, r->gsum, p->n_param * sizeof *r->gsum);
    return loss / r->n;
}

/* Unscale + check (with a scaler), then Adam, skipped on the device on overflow: no wait. Adam reads
 * its schedule from m->sched, uploaded before the step's ops. */
static void optimizer(rn_model *m, rn_adam *opt, const rn_loss_scaler *ls)
{
    rn_params *p = m->p;
    if (ls) rn_grad_unscale_check(m->dev, p->grad, p->n_param, 1.0f / ls->scale, m->finite);
    rn_adam_apply(opt, m->dev, p->param, p->grad, p->m, p->v, p->n_param, m->sched, ls ? m->finite : NULL);
}

/* What the step's ops need (step_ops' ctx). */
typedef struct step_ctx {
    const rn_step_batch *b;
    rn_step_replicas *r;
    rn_adam *opt;
    const rn_step_ctl *ctl;
    const rn_train_hooks *hk;
    double mean; /* with r: the replicas' mean loss */
    int rc;      /* -1: the all-reduce failed (err) */
    rn_err *err;
} step_ctx;

/* fn(m) inside a span named name. */
static void part(const rn_train_hooks *hk, const char *name, void (*fn)(rn_model *m), rn_model *m)
{
    span(hk, name, 1);
    fn(m);
    span(hk, name, 0);
}

/* The step's device ops, on the staged batch (a graph captures them when there is no r and no dist). */
static void step_ops(rn_model *m, void *ctx)
{
    step_ctx *c = ctx;
    const rn_train_hooks *hk = c->hk;
    part(hk, "sync_weights", rn_model_sync_weights, m);
    part(hk, "zero_grad", rn_model_zero_grad, m);
    if (c->r) {
        c->mean = replicas_forward_backward(m, c->b, c->r, hk);
    } else {
        part(hk, "forward", rn_model_forward_ops, m);
        part(hk, "backward", rn_model_backward_ops, m);
    }
    if (c->ctl->dist) {
        span(hk, "allreduce", 1);
        c->rc = rn_dist_grads_finish(c->ctl->dist, c->err);
        span(hk, "allreduce", 0);
        if (c->rc) return;
    }
    span(hk, "optimizer", 1);
    optimizer(m, c->opt, c->ctl->scaler);
    span(hk, "optimizer", 0);
}

/* After the step's one wait: the scale update (an overflow undoes Adam's step count). */
static int scaler_update(rn_loss_scaler *ls, rn_adam *opt, int finite)
{
    if (!ls) return 1;
    if (rn_loss_scaler_update(ls, finite)) return 1;
    rn_adam_unstep(opt);
    fprintf(stderr, "rootnet: step skipped, inf/NaN gradients: ");
    rn_loss_scaler_log(ls, stderr);
    return 0;
}

/* The loss's mean over ranks and rank 0's BN running statistics. */
static int dist_after_step(const rn_step_ctl *ctl, rn_params *p, double *loss, rn_err *err)
{
    if (!ctl->dist) return 0;
    if (rn_dist_allreduce_mean(ctl->dist, loss, 1, err)) return -1;
    return ctl->bcast_stats ? rn_dist_bcast_stats(ctl->dist, p, err) : 0;
}

/* The host side before the step's ops: the batch and Adam's schedule onto the device. */
static void stage(rn_model *m, rn_adam *opt, const rn_step_batch *b, const rn_step_replicas *r)
{
    double sched[2];
    rn_adam_next(opt, sched);
    m->dev->ops->upload(m->dev, m->sched, sched, sizeof sched);
    if (r) return; /* each replica stages its own batch */
    rn_model_stage(m, b->images, b->k, 1);
    rn_model_stage_targets(m, b->target, b->vis, b->have_depth);
}

int rn_train_step(rn_model *m, rn_adam *opt, const rn_step_batch *b, rn_step_replicas *r, const rn_step_ctl *ctl,
                  const rn_train_hooks *hk, double *loss, int *applied, rn_err *err)
{
    static const rn_train_hooks none = {0};
    static const rn_step_ctl no_ctl = {0};
    rn_params *p = m->p;
    hk = hk ? hk : &none;
    ctl = ctl ? ctl : &no_ctl;
    *applied = 0;
    m->loss_scale = ctl->scaler ? ctl->scaler->scale : 1.0f;
    stage(m, opt, b, r);
    step_ctx c = {.b = b, .r = r, .opt = opt, .ctl = ctl, .hk = hk, .err = err};
    double key[2] = {m->loss_scale, ctl->scaler != NULL};
    if (r || ctl->dist)
        step_ops(m, &c);
    else
        rn_model_run_graph(m, &m->step_graph[m->cur], key, step_ops, &c);
    if (c.rc) return -1;
    if (!r && ctl->next.fn && ctl->next.fn(ctl->next.ctx, err)) return -1;
    span(hk, "loss_read", 1);
    int finite = 1;
    rn_model_read_status(m, loss, ctl->scaler ? &finite : NULL);
    span(hk, "loss_read", 0);
    if (r) *loss = c.mean;
    *applied = scaler_update(ctl->scaler, opt, finite);
    if (dist_after_step(ctl, p, loss, err)) return -1;
    if (!isfinite(*loss)) return rn_err_set(err, "loss is %g", *loss);
    return 0;
}
