/* Data-parallel hooks for the trainer over rn_dist. */
#include "train/train_dist.h"

#include <string.h>

#include "core/hash.h"

static void model_opts(void *ctx, rn_model_opts *o)
{
    rn_train_dist *td = ctx;
    if (td->sync_bn) o->reduce = rn_dist_bn_reduce(td->d);
    o->grad_ready = rn_dist_grad_ready(td->d);
}

/* rn_fnvx64 (only compared between the ranks of one run, never stored) over a host copy of n floats of p's arenas at buf. */
static uint64_t hash_arena(uint64_t h, const rn_params *p, const float *buf, size_t n)
{
    float *c = rn_xmalloc(n * sizeof *c + 1);
    rn_params_download(p, c, buf, n * sizeof *c);
    h = rn_fnvx64(h, c, n * sizeof *c);
    free(c);
    return h;
}

uint64_t rn_train_dist_state_hash(const rn_params *p)
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
    uint64_t h = rn_train_dist_state_hash(p);
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

static int on_start(void *ctx, rn_params *p, rn_err *err)
{
    rn_train_dist *td = ctx;
    if (rn_dist_grads_setup(td->d, p, td->bucket_floats, err)) return -1;
    return check_same_start(td->d, p, err) || rn_dist_bcast_params(td->d, p, err) ? -1 : 0;
}

rn_step_ctl rn_train_dist_ctl(const rn_train_dist *td, rn_loss_scaler *scaler)
{
    int many = td && rn_dist_size(td->d) > 1; /* one process: nothing to reduce */
    return (rn_step_ctl){.dist = many ? td->d : NULL, .bcast_stats = many && !td->sync_bn, .scaler = scaler};
}

rn_train_hooks rn_train_dist_hooks(rn_train_dist *td, rn_dist *d, rn_train_cfg *cfg)
{
    td->d = d;
    td->sync_bn = cfg->sync_bn;
    td->bucket_floats = rn_dist_bucket_floats(cfg->bucket_mb);
    cfg->rank = rn_dist_rank(d), cfg->world = rn_dist_size(d);
    return (rn_train_hooks){.ctx = td, .model_opts = model_opts, .on_start = on_start};
}
