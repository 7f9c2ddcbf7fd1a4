/* One assembly of a training step for train, step and bench (assemble.h). */
#include "train/assemble.h"

#include <string.h>

#include "core/hash.h"

rn_train_env rn_train_env_make(rn_tuning *tn, rn_dist *d, int threads, int sync_bn, double bucket_mb)
{
    return (rn_train_env){.tn = tn, .dist = d, .rank = rn_dist_rank(d), .world = rn_dist_size(d),
                          .threads = threads, .sync_bn = sync_bn, .bucket_floats = rn_dist_bucket_floats(bucket_mb)};
}

rn_model_opts rn_train_env_model_opts(const rn_train_env *e)
{
    rn_model_opts mo = {.threads = e->threads, .compute = RN_NUM_F32,
                        .reduce = e->sync_bn ? rn_dist_bn_reduce(e->dist) : (rn_device_reduce){0},
                        .grad_ready = rn_dist_grad_ready(e->dist)};
    if (e->tn) rn_tuning_model_opts(e->tn, &mo);
    return mo;
}

rn_device *rn_train_env_pin(const rn_train_env *e)
{
    rn_device *dev = e->tn ? e->tn->dev : NULL;
    return dev && !dev->host_memory && dev->ops->host_alloc && dev->ops->upload_async ? dev : NULL;
}

double rn_train_env_lr(const rn_train_env *e, double lr, long batch)
{
    return e->tn ? rn_tuning_lr(e->tn, lr, batch * e->world) : lr;
}

/* rn_fnvx64 (only compared between the ranks of one run, never stored) over a host copy of n floats of p's
 * arenas at buf. */
static uint64_t hash_arena(uint64_t h, const rn_params *p, const float *buf, size_t n)
{
    float *c = rn_xmalloc(n * sizeof *c + 1);
    rn_params_download(p, c, buf, n * sizeof *c);
    h = rn_fnvx64(h, c, n * sizeof *c);
    free(c);
    return h;
}

uint64_t rn_train_state_hash(const rn_params *p)
{
    size_t nf = p->n_param;
    uint64_t h = RN_FNV_OFFSET;
    h = hash_arena(h, p, p->param, nf), h = hash_arena(h, p, p->m, nf), h = hash_arena(h, p, p->v, nf);
    h = hash_arena(h, p, p->stats, p->n_stats);
    return rn_fnvx64(h, p->nbt, p->n_nbt * sizeof(int64_t));
}

/* 0 when every rank holds rank 0's state (compared by hash), else -1 on every rank. */
static int check_same_start(rn_dist *d, const rn_params *p, rn_err *err)
{
    uint64_t h = rn_train_state_hash(p);
    int r = rn_dist_rank(d);
    double part[4]; /* rank 0's hash in 16-bit parts: exact sums in double */
    for (int i = 0; i < 4; i++) part[i] = r == 0 ? (double)((h >> (16 * i)) & 0xffff) : 0.0;
    if (rn_dist_allreduce_sum(d, part, 4, err)) return -1;
    uint64_t h0 = 0;
    for (int i = 0; i < 4; i++) h0 |= (uint64_t)part[i] << (16 * i);
    if (!rn_dist_any(d, h != h0)) return 0;
    if (h != h0)
        return rn_err_set(err, "rank %d starts from other weights than rank 0 (state hash %016llx, rank 0 %016llx): "
                               "every rank must load the same snapshot or --pretrained file (with --continue: the "
                               "same --output directory, on a file system every machine shares)",
                          r, (unsigned long long)h, (unsigned long long)h0);
    return rn_err_set(err, "another rank starts from other weights than rank 0 (state hash %016llx): every rank must "
                           "load the same snapshot or --pretrained file", (unsigned long long)h0);
}

/* A model for batch rows on env's device, the profiler attached. */
static int make_model(rn_model *m, const rn_train_env *e, rn_params *p, int batch, const rn_train_shape *s,
                      rn_err *err)
{
    rn_model_opts mo = rn_train_env_model_opts(e);
    mo.pinned_inputs = s->pinned_inputs;
    if (rn_model_create(m, p, batch, s->h, s->w, &mo, err)) return -1;
    if (e->tn) rn_tuning_attach(e->tn, m);
    return 0;
}

static rn_step_ctl step_ctl(const rn_train_env *e)
{
    int many = e->world > 1; /* one process: nothing to reduce */
    rn_loss_scaler *ls = e->tn && e->tn->scaling ? &e->tn->scaler : NULL;
    return (rn_step_ctl){.dist = many ? e->dist : NULL, .bcast_stats = many && !e->sync_bn, .scaler = ls};
}

/* The gradient buffer and its buckets, the same-start check, rank 0's state to every rank. */
static int dist_start(const rn_train_env *e, rn_params *p, const rn_train_shape *s, rn_err *err)
{
    if (rn_dist_grads_setup(e->dist, p, e->bucket_floats, err)) return -1;
    if (s->same_start && check_same_start(e->dist, p, err)) return -1;
    return rn_dist_bcast_params(e->dist, p, err);
}

int rn_train_assemble(rn_train_rig *r, const rn_train_env *e, rn_params *p, const rn_train_shape *s, rn_err *err)
{
    memset(r, 0, sizeof *r);
    if (make_model(&r->m, e, p, s->batch, s, err)) return -1;
    if (s->tail && make_model(&r->tail, e, p, s->tail, s, err)) {
        rn_model_destroy(&r->m);
        return -1;
    }
    r->have_tail = s->tail != 0;
    if (dist_start(e, p, s, err)) {
        rn_train_rig_free(r);
        return -1;
    }
    long replicas = s->replicas > 1 ? s->replicas : 1;
    r->opt = rn_adam_default(rn_train_env_lr(e, s->lr, (long)s->batch * replicas));
    r->ctl = step_ctl(e);
    if (e->tn) r->spans = (rn_train_hooks){.ctx = e->tn, .span_begin = rn_tuning_span_begin,
                                           .span_end = rn_tuning_span_end};
    return 0;
}

void rn_train_rig_free(rn_train_rig *r)
{
    if (r->have_tail) rn_model_destroy(&r->tail);
    rn_model_destroy(&r->m);
    memset(r, 0, sizeof *r);
}
