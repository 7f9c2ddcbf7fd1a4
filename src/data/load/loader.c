#include "data/load/loader.h"

#include "core/affinity.h"
#include "data/image/prep.h"
#include "data/load/joints.h"
#include "data/sets/skeleton.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct slot {
    rn_batch b;
    int64_t done;     /* batch number finished into this slot, -1 none */
    int64_t open;     /* batch number being filled into this slot, -1 none */
    int remaining;    /* samples of `open` not yet finished */
    int failed_at;    /* lowest failed sample index of `open`, batch size when none */
    rn_err err;       /* that sample's failure */
} slot;

typedef struct worker {
    struct rn_loader *ld;
    pthread_t th;
    int id;
    rn_crop_ctx ctx;
    int64_t samples;                   /* samples finished (guarded by the loader's mutex) */
    double stage_s[RN_CROP_NSTAGES];   /* ctx's stage times and rows, copied under the mutex */
    int64_t rows_skipped, rows_read, bytes_read;
} worker;

_Static_assert(RN_SKELETON_MAX <= RN_LOADER_MAX_K, "a joint set fits a sample's target rows");

/* PoseNet's targets: per set, its joint set and the map of the target set's rows onto it. */
typedef struct set_joints {
    const rn_skeleton *from;
    int map[RN_SKELETON_MAX];
    int f32; /* their Human36M reader's float32 arrays */
} set_joints;

struct rn_loader {
    rn_loader_cfg cfg;
    int K;                /* target rows */
    set_joints *sj;       /* (n_sets), with cfg.skeleton; NULL otherwise */
    int64_t L, S;         /* items per epoch; positions per rank */
    int64_t max_len;
    int nb;               /* batches per epoch on this rank */
    int32_t *perm;        /* (L) epoch order */
    slot *slots;
    worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_ready;
    int epoch, quit, stopping, active, peak_active;
    int64_t next_claim, next_consume, freed; /* next_claim: batch whose samples are being handed out */
    int next_sample;                         /* next sample of next_claim to hand out */
    atomic_llong skipped;
};

void rn_loader_cfg_default(rn_loader_cfg *cfg, const rn_dataset *const *sets, int n_sets, rn_split split)
{
    *cfg = (rn_loader_cfg){.sets = sets, .n_sets = n_sets, .split = split, .batch = 32, .workers = 2,
                           .prefetch = 4, .world = 1, .make_same_len = 1, .augment = split == RN_SPLIT_TRAIN,
                           .max_retries = 16, .depth_dim = 64};
    rn_crop_cfg_default(&cfg->crop);
}

void rn_loader_cfg_eval(rn_loader_cfg *cfg, const rn_dataset *const *set, int batch, int workers, int size,
                        int fast_decode)
{
    rn_loader_cfg_default(cfg, set, 1, RN_SPLIT_TEST);
    cfg->batch = batch;
    cfg->workers = workers;
    cfg->make_same_len = 0;
    cfg->augment = 0;
    cfg->crop.in_w = cfg->crop.in_h = size;
    cfg->crop.out_w = cfg->crop.out_h = size / 4;
    cfg->crop.fast_decode = fast_decode;
}

void rn_root_to_image(float *x_img, float *y_img, const float bbox[4], float x, float y, int out_w, int out_h)
{
    *x_img = x / out_w * bbox[2] + bbox[0];
    *y_img = y / out_h * bbox[3] + bbox[1];
}

int rn_bind_self(const int *cores, int n, rn_err *err)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n; i++) {
        if (cores[i] < 0 || cores[i] >= CPU_SETSIZE) return rn_err_set(err, "core %d out of range", cores[i]);
        CPU_SET(cores[i], &set);
    }
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    return rc ? rn_err_set(err, "cannot pin thread to %d core(s): %s", n, strerror(rc)) : 0;
}

static int last_allowed_core(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
    int last = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) last = c;
    return last;
}

int rn_loader_compute_cores(const rn_loader *ld, int *cores, int max)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return 0;
    if (ld->cfg.bind_cores)
        for (int i = 0; i < ld->cfg.n_loader_cores; i++) CPU_CLR(ld->cfg.loader_cores[i], &set);
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cores[n++] = c;
    return n;
}

/* ---- item space and order ---- */

static int64_t item_space(const rn_loader_cfg *cfg, int64_t *max_len)
{
    int64_t sum = 0, mx = 0;
    for (int i = 0; i < cfg->n_sets; i++) {
        sum += (int64_t)cfg->sets[i]->n;
        if ((int64_t)cfg->sets[i]->n > mx) mx = (int64_t)cfg->sets[i]->n;
    }
    *max_len = mx;
    return cfg->make_same_len ? mx * cfg->n_sets : sum;
}

/* Item c -> (set, record), the authors' MultipleDatasets rule. */
static void item_to_record(const rn_loader *ld, int64_t c, rn_rng *r, int *set, int64_t *rec)
{
    const rn_loader_cfg *cfg = &ld->cfg;
    if (!cfg->make_same_len) {
        int s = 0;
        while (c >= (int64_t)cfg->sets[s]->n) c -= (int64_t)cfg->sets[s++]->n;
        *set = s, *rec = c;
        return;
    }
    int s = (int)(c / ld->max_len);
    int64_t d = c % ld->max_len, len = (int64_t)cfg->sets[s]->n;
    *set = s;
    *rec = d >= len * (ld->max_len / len) ? (int64_t)rn_rng_below(r, (uint64_t)len) : d % len;
}

static void make_order(rn_loader *ld, int epoch)
{
    for (int64_t i = 0; i < ld->L; i++) ld->perm[i] = (int32_t)i;
    if (ld->cfg.split != RN_SPLIT_TRAIN) return;
    rn_rng r;
    rn_rng_seed2(&r, ld->cfg.seed ^ 0x5eedf00dULL, (uint64_t)epoch);
    for (int64_t i = ld->L - 1; i > 0; i--) {
        int64_t j = (int64_t)rn_rng_below(&r, (uint64_t)i + 1);
        int32_t t = ld->perm[i];
        ld->perm[i] = ld->perm[j];
        ld->perm[j] = t;
    }
}

/* ---- one sample ---- */

/* One sample's PoseNet targets (K rows) from the crop's affine (joints.h). */
static void sample_targets(float *target, float *vis, const set_joints *sj, int K, const rn_dataset *ds, size_t rec,
                           const rn_crop_out *out, int flip, const rn_crop_cfg *crop, int depth_dim)
{
    rn_joint_geom g = {.trans = out->trans, .img_w = out->img_w, .flip = flip, .in_w = crop->in_w,
                       .in_h = crop->in_h, .out_w = crop->out_w, .out_h = crop->out_h, .depth_dim = depth_dim,
                       .depth_half = ds->bbox_real[0] / 2.0, .f32 = sj->f32};
    rn_joint_targets(target, vis, rn_dataset_joints(ds, rec), ds->J, sj->from->flip, sj->from->nflip, sj->map, K,
                     &g);
}

static void joint_targets(rn_batch *b, int i, const rn_loader *ld, int set, int64_t rec, const rn_crop_out *out,
                          const rn_aug *aug)
{
    const rn_loader_cfg *cfg = &ld->cfg;
    sample_targets(b->target + (size_t)i * ld->K * 3, b->vis + (size_t)i * ld->K, &ld->sj[set], ld->K, cfg->sets[set],
                   (size_t)rec, out, aug->flip, &cfg->crop, cfg->depth_dim);
}

static int crop_record(rn_batch *b, int i, worker *w, int set, int64_t rec, rn_rng *r, rn_err *err)
{
    const rn_loader_cfg *cfg = &w->ld->cfg;
    const rn_dataset *ds = cfg->sets[set];
    const rn_sample *s = &ds->samples[rec];
    char path[8192];
    rn_dataset_image_path(ds, s, path, sizeof path);
    rn_crop_in in = {.path = path, .root_vis = s->root_vis};
    memcpy(in.bbox, s->bbox, sizeof in.bbox);
    in.has_center = rn_sample_center(s, in.center);
    in.has_size = rn_sample_size(s, in.size);
    in.root[0] = s->root_img[0], in.root[1] = s->root_img[1];
    rn_aug aug;
    if (cfg->augment && cfg->skeleton) rn_aug_draw_posenet(&aug, r);
    else if (cfg->augment) rn_aug_draw(&aug, r);
    else rn_aug_none(&aug);
    size_t plane = (size_t)3 * cfg->crop.in_w * cfg->crop.in_h;
    rn_crop_out out;
    if (rn_crop_sample(b->images + (size_t)i * plane, &out, &w->ctx, &in, &aug, &cfg->crop, err))
        return rn_err_prefix(err, "%s record %lld", ds->name, (long long)rec);
    b->k[i] = s->k;
    if (w->ld->sj) joint_targets(b, i, w->ld, set, rec, &out, &aug);
    else {
        b->target[3 * i] = out.root[0], b->target[3 * i + 1] = out.root[1], b->target[3 * i + 2] = s->root_img[2];
        b->vis[i] = out.root_vis;
    }
    b->have_depth[i] = (float)s->have_depth;
    b->set[i] = set;
    b->sample[i] = (int32_t)rec;
    memcpy(b->bbox + 4 * i, s->bbox, 4 * sizeof(float));
    memcpy(b->inv + 6 * i, out.inv, 6 * sizeof(double));
    return 0;
}

/* keep_going: the sample stays in its place with a zero patch, k 1 and its failure. */
static int flag_bad(rn_batch *b, int i, const rn_loader_cfg *cfg, int set, int64_t rec, const rn_err *err)
{
    size_t plane = (size_t)3 * cfg->crop.in_w * cfg->crop.in_h;
    memset(b->images + (size_t)i * plane, 0, plane * sizeof *b->images);
    b->k[i] = 1.0f;
    b->set[i] = set;
    b->sample[i] = (int32_t)rec;
    b->bad[i] = 1;
    size_t l = strnlen(err->msg, sizeof b->why[i] - 1);
    memcpy(b->why[i], err->msg, l);
    b->why[i][l] = '\0';
    return 0;
}

static int fill_sample(rn_batch *b, int i, worker *w, int64_t g, rn_err *err)
{
    rn_loader *ld = w->ld;
    int64_t c = ld->perm[g % ld->L];
    b->item[i] = (int32_t)c;
    b->pad[i] = g >= ld->L;
    b->replaced[i] = 0;
    b->bad[i] = 0;
    rn_rng r;
    rn_rng_seed2(&r, ld->cfg.seed, (uint64_t)ld->epoch * (uint64_t)ld->L + (uint64_t)c);
    for (int attempt = 0;; attempt++) {
        int set;
        int64_t rec;
        item_to_record(ld, c, &r, &set, &rec);
        if (!crop_record(b, i, w, set, rec, &r, err)) return 0;
        if (ld->cfg.split != RN_SPLIT_TRAIN && ld->cfg.keep_going) return flag_bad(b, i, &ld->cfg, set, rec, err);
        if (ld->cfg.split != RN_SPLIT_TRAIN) return -1;
        atomic_fetch_add(&ld->skipped, 1);
        if (!ld->cfg.quiet) fprintf(stderr, "rootnet: loader: skipping bad image: %s\n", err->msg);
        if (attempt >= ld->cfg.max_retries)
            return rn_err_prefix(err, "no good image after %d replacements", ld->cfg.max_retries);
        c = (int64_t)rn_rng_below(&r, (uint64_t)ld->L);
        b->replaced[i] = 1;
    }
}

/* ---- threads: samples are handed out one at a time, batch after batch, to at
 * most `prefetch` batches ahead of the consumer (the bounded queue) ---- */

static int64_t batch_size(const rn_loader *ld, int64_t bi)
{
    int64_t p0 = bi * ld->cfg.batch;
    return p0 + ld->cfg.batch < ld->S ? ld->cfg.batch : ld->S - p0;
}

static int can_claim(const rn_loader *ld)
{
    return !ld->stopping && ld->next_claim < ld->nb && ld->next_claim < ld->freed + ld->cfg.prefetch;
}

/* Under the mutex: the next (batch, sample) to fill, opening its slot on its first sample. */
static slot *claim(rn_loader *ld, int64_t *bi, int *i)
{
    *bi = ld->next_claim;
    *i = ld->next_sample++;
    slot *s = &ld->slots[*bi % ld->cfg.prefetch];
    int n = (int)batch_size(ld, *bi);
    if (*i == 0) {
        s->open = *bi;
        s->remaining = s->failed_at = n;
        s->b.n = n;
        s->b.epoch = ld->epoch;
        s->b.index = (int)*bi;
    }
    if (ld->next_sample == n) ld->next_claim++, ld->next_sample = 0;
    return s;
}

/* Under the mutex: sample i of s is finished (failed: with e). */
static void finish(rn_loader *ld, worker *w, slot *s, int i, int failed, const rn_err *e)
{
    if (failed && i < s->failed_at) s->failed_at = i, s->err = *e;
    w->samples++;
    memcpy(w->stage_s, w->ctx.stage_s, sizeof w->stage_s);
    w->rows_skipped = w->ctx.rows_skipped, w->rows_read = w->ctx.rows_read, w->bytes_read = w->ctx.bytes_read;
    if (--s->remaining == 0) {
        s->done = s->open;
        s->open = -1;
        pthread_cond_broadcast(&ld->cv_ready);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    rn_loader *ld = w->ld;
    if (ld->cfg.bind_cores) {
        rn_err e = {0};
        const int *core = &ld->cfg.loader_cores[w->id % ld->cfg.n_loader_cores];
        if (rn_bind_self(core, 1, &e)) fprintf(stderr, "rootnet: loader: %s\n", e.msg);
    }
    pthread_mutex_lock(&ld->mu);
    for (;;) {
        while (!ld->quit && !can_claim(ld)) pthread_cond_wait(&ld->cv_work, &ld->mu);
        if (ld->quit) break;
        int64_t bi;
        int i;
        slot *s = claim(ld, &bi, &i);
        if (++ld->active > ld->peak_active) ld->peak_active = ld->active;
        pthread_mutex_unlock(&ld->mu);
        rn_err e = {0};
        int failed = fill_sample(&s->b, i, w, ld->cfg.rank + (bi * ld->cfg.batch + i) * ld->cfg.world, &e) != 0;
        pthread_mutex_lock(&ld->mu);
        finish(ld, w, s, i, failed, &e);
        if (--ld->active == 0) pthread_cond_broadcast(&ld->cv_ready);
    }
    pthread_mutex_unlock(&ld->mu);
    return NULL;
}

static void *default_alloc(void *user, size_t bytes)
{
    (void)user;
    return rn_xmalloc(bytes);
}

static void default_free(void *user, void *p)
{
    (void)user;
    free(p);
}

static void *batch_array(const rn_loader_cfg *c, size_t bytes)
{
    void *p = c->buf_alloc(c->buf_user, bytes);
    RN_ASSERT(p != NULL);
    memset(p, 0, bytes);
    return p;
}

static void alloc_batch(rn_batch *b, const rn_loader_cfg *c, int K)
{
    size_t B = (size_t)c->batch;
    b->K = K;
    b->images = batch_array(c, sizeof(float) * B * 3 * (size_t)c->crop.in_w * (size_t)c->crop.in_h);
    b->k = batch_array(c, sizeof(float) * B);
    b->target = batch_array(c, sizeof(float) * 3 * B * (size_t)K);
    b->vis = batch_array(c, sizeof(float) * B * (size_t)K);
    b->have_depth = batch_array(c, sizeof(float) * B);
    b->item = batch_array(c, sizeof(int32_t) * B);
    b->set = batch_array(c, sizeof(int32_t) * B);
    b->sample = batch_array(c, sizeof(int32_t) * B);
    b->pad = batch_array(c, B);
    b->replaced = batch_array(c, B);
    b->bbox = batch_array(c, sizeof(float) * 4 * B);
    b->inv = batch_array(c, sizeof(double) * 6 * B);
    b->bad = batch_array(c, B);
    b->why = batch_array(c, B * sizeof *b->why);
}

static void free_batch(rn_batch *b, const rn_loader_cfg *c)
{
    void *arrays[] = {b->images, b->k,   b->target, b->vis,  b->have_depth, b->item, b->set,
                      b->sample, b->pad, b->replaced, b->bbox, b->inv,      b->bad,  b->why};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) c->buf_free(c->buf_user, arrays[i]);
}

static int check_cfg(const rn_loader_cfg *c, rn_err *err)
{
    if (c->n_sets < 1 || !c->sets) return rn_err_set(err, "loader: no dataset");
    if (c->split != RN_SPLIT_TRAIN && c->n_sets != 1) return rn_err_set(err, "loader: test split takes one dataset");
    for (int i = 0; i < c->n_sets; i++)
        if (!c->sets[i]->n) return rn_err_set(err, "loader: dataset %s is empty", c->sets[i]->name);
    if (c->batch < 1 || c->workers < 0 || c->prefetch < 1)
        return rn_err_set(err, "loader: batch and prefetch must be >= 1, workers >= 0 (0: one per core)");
    if (c->hold < 0 || c->hold > 1 || c->prefetch < 1 + c->hold)
        return rn_err_set(err, "loader: hold is 0 or 1, and hold 1 needs prefetch >= 2 (got hold %d, prefetch %d)",
                          c->hold, c->prefetch);
    if (!c->buf_alloc != !c->buf_free) return rn_err_set(err, "loader: buf_alloc and buf_free go together");
    if (c->world < 1 || c->rank < 0 || c->rank >= c->world) return rn_err_set(err, "loader: rank %d of world %d", c->rank, c->world);
    if (c->crop.in_w < 4 || c->crop.in_h < 4 || c->crop.out_w < 1 || c->crop.out_h < 1)
        return rn_err_set(err, "loader: bad input/output size");
    if (c->bind_cores && c->n_loader_cores < 1) return rn_err_set(err, "loader: bind_cores needs loader_cores");
    if (!c->skeleton && c->K > 1) return rn_err_set(err, "loader: K %d rows needs a skeleton (RootNet has 1)", c->K);
    if (c->skeleton && c->depth_dim < 1) return rn_err_set(err, "loader: depth_dim %d must be >= 1", c->depth_dim);
    return 0;
}

/* PoseNet: the target set and every set's joints onto it; NULL without a skeleton. K: the rows. */
static int plan_joints(set_joints **out, int *K, const rn_loader_cfg *c, rn_err *err)
{
    *out = NULL;
    *K = 1;
    if (!c->skeleton) return 0;
    char names[256];
    const rn_skeleton *to = rn_skeleton_find(c->skeleton);
    if (!to) return rn_err_set(err, "loader: unknown joint set '%s' (%s)", c->skeleton, rn_skeleton_names(names, sizeof names));
    if (c->K != 0 && c->K != to->J)
        return rn_err_set(err, "loader: K %d rows, but the joint set %s has %d joints", c->K, to->name, to->J);
    set_joints *sj = rn_xcalloc((size_t)c->n_sets, sizeof *sj);
    for (int i = 0; i < c->n_sets; i++) {
        const rn_dataset *ds = c->sets[i];
        sj[i].from = ds->J > 0 ? rn_skeleton_find(ds->skeleton) : NULL;
        if (!sj[i].from || sj[i].from->J != ds->J) {
            free(sj);
            return rn_err_set(err, "loader: dataset %s has no joints of a known joint set (J %d, '%s'): PoseNet's "
                              "targets need them", ds->name, ds->J, ds->skeleton);
        }
        rn_skeleton_map(sj[i].map, sj[i].from, to);
        sj[i].f32 = !strcmp(sj[i].from->name, "Human36M");
    }
    *out = sj;
    *K = to->J;
    return 0;
}

int rn_loader_joint_targets(float *target, float *vis, int *K, const rn_dataset *ds, size_t rec, const char *skeleton,
                            const rn_crop_out *out, int flip, const rn_crop_cfg *crop, int depth_dim, rn_err *err)
{
    const rn_dataset *sets[1] = {ds};
    rn_loader_cfg c = {.sets = sets, .n_sets = 1, .skeleton = skeleton, .depth_dim = depth_dim};
    set_joints *sj;
    if (!skeleton) return rn_err_set(err, "loader: no joint set for PoseNet's targets");
    if (plan_joints(&sj, K, &c, err)) return -1;
    sample_targets(target, vis, sj, *K, ds, rec, out, flip, crop, depth_dim);
    free(sj);
    return 0;
}

int rn_loader_create(rn_loader **out, const rn_loader_cfg *cfg, rn_err *err)
{
    rn_loader_cfg c = *cfg;
    int last_core[1] = {last_allowed_core()};
    if (c.bind_cores && !c.loader_cores) c.loader_cores = last_core, c.n_loader_cores = 1;
    if (check_cfg(&c, err)) return -1;
    set_joints *sj;
    int K;
    if (plan_joints(&sj, &K, &c, err)) return -1;
    if (!c.buf_alloc) c.buf_alloc = default_alloc, c.buf_free = default_free;
    if (c.workers == 0) c.workers = rn_loader_auto_workers();
    int64_t max_len, L = item_space(&c, &max_len);
    if (L > INT32_MAX) {
        free(sj);
        return rn_err_set(err, "loader: %lld items is too many", (long long)L);
    }
    rn_loader *ld = rn_xcalloc(1, sizeof *ld);
    ld->cfg = c;
    ld->sj = sj, ld->K = K;
    ld->L = L, ld->max_len = max_len;
    int nc = c.bind_cores ? c.n_loader_cores : 0;
    int *cores = rn_xcalloc((size_t)(nc ? nc : 1), sizeof(int));
    if (nc) memcpy(cores, c.loader_cores, sizeof(int) * (size_t)nc);
    ld->cfg.loader_cores = cores;
    ld->S = (ld->L + c.world - 1) / c.world;
    ld->nb = (int)((ld->S + c.batch - 1) / c.batch);
    ld->perm = rn_xmalloc(sizeof(int32_t) * (size_t)ld->L);
    ld->slots = rn_xcalloc((size_t)c.prefetch, sizeof(slot));
    for (int i = 0; i < c.prefetch; i++) alloc_batch(&ld->slots[i].b, &c, K), ld->slots[i].done = ld->slots[i].open = -1;
    pthread_mutex_init(&ld->mu, NULL);
    pthread_cond_init(&ld->cv_work, NULL);
    pthread_cond_init(&ld->cv_ready, NULL);
    ld->stopping = 1;
    ld->workers = rn_xcalloc((size_t)c.workers, sizeof(worker));
    for (int i = 0; i < c.workers; i++) {
        ld->workers[i] = (worker){.ld = ld, .id = i};
        RN_ASSERT(pthread_create(&ld->workers[i].th, NULL, worker_main, &ld->workers[i]) == 0);
    }
    *out = ld;
    return 0;
}

int rn_loader_start(rn_loader *ld, int epoch, int first, rn_err *err)
{
    if (epoch < 0 || first < 0 || first > ld->nb)
        return rn_err_set(err, "loader: cannot start at epoch %d batch %d (%d batches per epoch)", epoch, first, ld->nb);
    pthread_mutex_lock(&ld->mu);
    ld->stopping = 1;
    while (ld->active) pthread_cond_wait(&ld->cv_ready, &ld->mu);
    make_order(ld, epoch);
    ld->epoch = epoch;
    ld->next_claim = ld->next_consume = ld->freed = first;
    ld->next_sample = 0;
    for (int i = 0; i < ld->cfg.prefetch; i++) ld->slots[i].done = ld->slots[i].open = -1;
    ld->stopping = 0;
    pthread_cond_broadcast(&ld->cv_work);
    pthread_mutex_unlock(&ld->mu);
    return 0;
}

void rn_batch_pad(float *images, float *k, int n, int rows, size_t plane)
{
    if (n >= rows) return;
    memset(images + (size_t)n * plane, 0, (size_t)(rows - n) * plane * sizeof *images);
    for (int i = n; i < rows; i++) k[i] = 1.0f;
}

/* Rows b->n..batch-1 of a short batch: padding (rn_batch_pad; target, vis, have_depth 0). */
static void pad_short(rn_batch *b, const rn_loader_cfg *c)
{
    if (b->n >= c->batch) return;
    size_t n = (size_t)b->n, rest = (size_t)(c->batch - b->n);
    rn_batch_pad(b->images, b->k, b->n, c->batch, (size_t)3 * c->crop.in_w * c->crop.in_h);
    size_t K = (size_t)b->K;
    memset(b->target + 3 * n * K, 0, 3 * rest * K * sizeof *b->target);
    memset(b->vis + n * K, 0, rest * K * sizeof *b->vis);
    memset(b->have_depth + n, 0, rest * sizeof *b->have_depth);
}

int rn_loader_next(rn_loader *ld, const rn_batch **b, rn_err *err)
{
    pthread_mutex_lock(&ld->mu);
    ld->freed = ld->next_consume - ld->cfg.hold;
    pthread_cond_broadcast(&ld->cv_work);
    if (ld->stopping || ld->next_consume >= ld->nb) {
        pthread_mutex_unlock(&ld->mu);
        return 0;
    }
    slot *s = &ld->slots[ld->next_consume % ld->cfg.prefetch];
    while (s->done != ld->next_consume) pthread_cond_wait(&ld->cv_ready, &ld->mu);
    int failed = s->failed_at < s->b.n;
    if (failed) {
        if (err) *err = s->err;
        ld->stopping = 1;
    } else {
        ld->next_consume++;
        *b = &s->b;
    }
    pthread_mutex_unlock(&ld->mu);
    if (!failed) pad_short(&s->b, &ld->cfg); /* the consumer's slot now: no worker writes it */
    return failed ? -1 : 1;
}

void rn_loader_position(const rn_loader *ld, int *epoch, int *batch)
{
    *epoch = ld->epoch;
    *batch = (int)ld->next_consume;
}

int rn_loader_auto_workers(void)
{
    int cores[CPU_SETSIZE];
    int n = rn_allowed_cores(cores, CPU_SETSIZE);
    return n > 0 ? n : 1;
}

int rn_loader_stats_get(rn_loader *ld, rn_loader_stats *st, int64_t *samples, int max)
{
    pthread_mutex_lock(&ld->mu);
    *st = (rn_loader_stats){.workers = ld->cfg.workers, .peak_busy = ld->peak_active};
    for (int i = 0; i < ld->cfg.workers; i++) {
        const worker *w = &ld->workers[i];
        if (samples && i < max) samples[i] = w->samples;
        for (int k = 0; k < RN_CROP_NSTAGES; k++) st->stage_s[k] += w->stage_s[k];
        st->rows_skipped += w->rows_skipped, st->rows_read += w->rows_read, st->bytes_read += w->bytes_read;
    }
    pthread_mutex_unlock(&ld->mu);
    return ld->cfg.workers;
}

int rn_loader_batches(const rn_loader *ld) { return ld->nb; }
int64_t rn_loader_items(const rn_loader *ld) { return ld->L; }
int64_t rn_loader_skipped(const rn_loader *ld) { return atomic_load(&((rn_loader *)ld)->skipped); }

void rn_loader_free(rn_loader *ld)
{
    if (!ld) return;
    pthread_mutex_lock(&ld->mu);
    ld->quit = 1;
    pthread_cond_broadcast(&ld->cv_work);
    pthread_mutex_unlock(&ld->mu);
    for (int i = 0; i < ld->cfg.workers; i++) {
        pthread_join(ld->workers[i].th, NULL);
        rn_crop_ctx_free(&ld->workers[i].ctx);
    }
    for (int i = 0; i < ld->cfg.prefetch; i++) free_batch(&ld->slots[i].b, &ld->cfg);
    pthread_mutex_destroy(&ld->mu);
    pthread_cond_destroy(&ld->cv_work);
    pthread_cond_destroy(&ld->cv_ready);
    free((void *)ld->cfg.loader_cores);
    free(ld->slots), free(ld->workers), free(ld->perm), free(ld->sj), free(ld);
}

size_t rn_loader_prep_found(const rn_dataset *const *sets, int n_sets, const char *prep_dir, size_t *samples)
{
    size_t n = 0, found = 0;
    int have = 0;
    char src[8192], prep[4200];
    for (int s = 0; s < n_sets; s++) {
        const rn_dataset *ds = sets[s];
        for (size_t i = 0; i < ds->n; i++, n++) {
            const char *rel = ds->strings + ds->samples[i].path_off;
            if (!i || strcmp(rel, ds->strings + ds->samples[i - 1].path_off)) {
                snprintf(src, sizeof src, "%s/%s", ds->data_dir, rel);
                rn_prep_path(prep, sizeof prep, prep_dir, src);
                have = !access(prep, F_OK);
            }
            found += (size_t)have;
        }
    }
    *samples = n;
    return found;
}
