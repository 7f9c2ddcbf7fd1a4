/* rootnet's training loop: data, model, Adam, logs, snapshots, resume. */
#include "train/trainer.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/hash.h"
#include "core/profile.h"
#include "data/load/loader.h"
#include "data/sets/descriptor.h"
#include "io/file.h"
#include "nn/net.h"
#include "nn/model.h"
#include "nn/weights.h"
#include "train/assemble.h"
#include "train/plot.h"
#include "train/snapshot.h"

typedef struct timers {
    double t0, total, data, compute; /* sums over this run's iterations */
    int64_t n;
} timers;

typedef struct trainer {
    const rn_train_cfg *cfg;
    const rn_train_hooks *hk;
    rn_train_env env;
    int pinned; /* the loader's batches are the device's pinned memory */
    const rn_batch *ahead; /* the next batch, taken and uploaded beside the last step (fetch_next); NULL: none */
    double fetch_s;        /* the time fetch_next waited for the loader in the last step (data, not compute) */
    FILE *out, *jsonl, *txt;

    int main_rank, tty;
    rn_dataset sets[1 + RN_TRAIN_MAX_2D];
    const rn_dataset *set_ptr[1 + RN_TRAIN_MAX_2D]; /* the loader keeps this array */
    int n_sets;
    rn_loader *ld;
    int ipe, tail_n;
    rn_params p;
    int have_p;
    rn_train_rig rig; /* the models (a short last batch: rig.tail), Adam, the step's controls */
    int have_rig;
    rn_train_state st;
    double *metric; /* (end_epoch) per-epoch evaluation, NAN when none */
    int snapshots_written;
    timers tm;
    char dir_snap[RN_TRAIN_PATH + 16], dir_log[RN_TRAIN_PATH + 16];
    char resume_from[RN_TRAIN_PATH + 128]; /* --continue: the snapshot chosen before anything is written */
    int resume_found;
    char cfg_text[8192];
} trainer;

static void span(const trainer *t, const char *name, int begin)
{
    if (begin && t->hk->span_begin) t->hk->span_begin(t->hk->ctx, name);
    if (!begin && t->hk->span_end) t->hk->span_end(t->hk->ctx, name);
}

/* Before anything is written: no snapshot name may be a directory or another
 * non-file, and --continue finds its snapshot or refuses (never starts over
 * when snapshots are there but none is complete). */
static int check_snapshots(trainer *t, rn_err *err)
{
    snprintf(t->dir_snap, sizeof t->dir_snap, "%s/model_dump", t->cfg->output);
    snprintf(t->dir_log, sizeof t->dir_log, "%s/log", t->cfg->output);
    if (rn_snapshot_dir_check(t->dir_snap, err)) return -1;
    if (!t->cfg->cont) return 0;
    t->resume_found = rn_snapshot_find_latest(t->resume_from, sizeof t->resume_from, t->dir_snap,
                                              t->out ? stderr : NULL, err);
    return t->resume_found < 0 ? rn_err_prefix(err, "--continue") : 0;
}

static int open_outputs(trainer *t, rn_err *err)
{
    if (!t->main_rank) return 0;
    if (rn_mkdirs(t->dir_snap, err) || rn_mkdirs(t->dir_log, err)) return -1;
    char path[RN_TRAIN_PATH + 64];
    snprintf(path, sizeof path, "%s/train.jsonl", t->dir_log);
    if (!(t->jsonl = fopen(path, "a"))) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/train_log.txt", t->dir_log);
    if (!(t->txt = fopen(path, "a"))) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    return 0;
}

static int load_sets(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    rn_dataset_opts o = {.protocol = 2, .input_w = c->input_size, .input_h = c->input_size,
                         .cache_dir = c->cache_dir[0] ? c->cache_dir : NULL, .warn = stderr};
    const char *names[1 + RN_TRAIN_MAX_2D] = {c->trainset_3d};
    for (int i = 0; i < c->n_2d; i++) names[1 + i] = c->trainset_2d[i];
    for (int i = 0; i < 1 + c->n_2d; i++) {
        if (rn_dataset_load(&t->sets[i], names[i], c->data_dir, RN_SPLIT_TRAIN, &o, err))
            return rn_err_prefix(err, "loading %s from %s", names[i], c->data_dir);
        t->n_sets++;
        if (!t->sets[i].n) return rn_err_set(err, "%s: no training records in %s", names[i], c->data_dir);
    }
    return 0;
}

static void *pinned_alloc(void *dev, size_t bytes) { return ((rn_device *)dev)->ops->host_alloc(dev, bytes); }
static void pinned_free(void *dev, void *p) { ((rn_device *)dev)->ops->host_free(dev, p); }

/* On a device without host memory that has pinned memory (cuda) the loader writes its batches there, so that
 * the model copies them with upload_async beside its compute (rn_model_opts.pinned_inputs), and holds each
 * until the batch after the next is taken (the next one is taken, and uploaded, during its step). */
static void loader_buffers(trainer *t, rn_loader_cfg *lc)
{
    rn_device *dev = rn_train_env_pin(&t->env);
    if (!dev) return;
    lc->buf_alloc = pinned_alloc, lc->buf_free = pinned_free, lc->buf_user = dev;
    lc->hold = 1;
    if (lc->prefetch < 2) lc->prefetch = 2;
    t->pinned = 1;
}

/* The network c trains: RootNet, or PoseNet on the joints of c's 3D training set (the authors' first 3D set);
 * NULL with err naming --net or --trainset-3d when there is none. */
static const rn_net *train_net(const rn_train_cfg *c, rn_err *err)
{
    char names[64];
    const rn_net *any = rn_net_find(c->net, NULL);
    if (!any) {
        rn_err_set(err, "--net %s: not a network (%s)", c->net, rn_net_names(names, sizeof names, 0));
        return NULL;
    }
    if (!any->skeleton) return any;
    const rn_net *net = rn_net_find(c->net, c->trainset_3d);
    if (!net)
        rn_err_set(err, "--trainset-3d %s: %s learns the joints of its 3D training set, Human36M or MuCo",
                   c->trainset_3d, any->title);
    return net;
}

static int make_loader(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    for (int i = 0; i < t->n_sets; i++) t->set_ptr[i] = &t->sets[i];
    rn_loader_cfg lc;
    rn_loader_cfg_default(&lc, t->set_ptr, t->n_sets, RN_SPLIT_TRAIN);
    lc.batch = c->batch, lc.workers = c->workers, lc.seed = (uint64_t)c->seed;
    lc.rank = t->env.rank, lc.world = t->env.world, lc.augment = c->augment;
    const rn_net *net = train_net(c, err);
    if (!net) return -1;
    lc.skeleton = net->skeleton, lc.K = net->K;
    lc.crop.in_w = lc.crop.in_h = c->input_size;
    lc.crop.out_w = lc.crop.out_h = c->input_size / 4;
    lc.crop.fast_decode = c->fast_decode;
    lc.crop.prep_dir = c->prep_dir[0] ? c->prep_dir : NULL;
    loader_buffers(t, &lc);
    if (rn_loader_create(&t->ld, &lc, err)) return -1;
    t->ipe = rn_loader_batches(t->ld);
    int64_t per_rank = (rn_loader_items(t->ld) + t->env.world - 1) / t->env.world;
    t->tail_n = (int)(per_rank - (int64_t)(t->ipe - 1) * c->batch);
    return 0;
}

static int init_params(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    rn_rng_seed(&t->st.rng, (uint64_t)c->seed);
    const rn_net *net = train_net(c, err);
    if (!net) return -1;
    if (c->pretrained[0]) {
        if (rn_weights_load_net(&t->p, c->pretrained, c->backbone, net, &t->st.rng, err)) return -1;
    } else {
        if (rn_params_build_net(&t->p, net, c->backbone, err)) return -1;
        rn_params_init(&t->p, &t->st.rng);
    }
    t->have_p = 1;
    return 0;
}

static void emit(trainer *t, const char *line)
{
    if (t->out) {
        if (t->tty) fputs("\r\033[K", t->out);
        fprintf(t->out, "%s\n", line);
        fflush(t->out);
    }
    if (t->txt) fprintf(t->txt, "%s\n", line), fflush(t->txt);
}

static void jsonl(trainer *t, const char *obj)
{
    if (t->jsonl) fprintf(t->jsonl, "%s\n", obj), fflush(t->jsonl);
}

/* The per-epoch metrics of the epochs before a resume, from the epoch_end
 * events of log/train.jsonl (for the loss plot); unreadable lines are skipped. */
static void metrics_from_log(trainer *t)
{
    char path[RN_TRAIN_PATH + 32];
    snprintf(path, sizeof path, "%s/train.jsonl", t->dir_log);
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (!strstr(line, "\"epoch_end\"")) continue;
        json_t *o = json_loads(line, 0, NULL);
        json_t *e = json_object_get(o, "epoch"), *m = json_object_get(o, "metric");
        if (json_is_integer(e) && json_is_number(m) && json_integer_value(e) >= 0 &&
            json_integer_value(e) < t->st.loader_epoch && json_integer_value(e) < t->cfg->end_epoch)
            t->metric[json_integer_value(e)] = json_number_value(m);
        json_decref(o);
    }
    free(line);
    if (f) fclose(f);
}

static int resume(trainer *t, int *resumed, rn_err *err)
{
    char line[RN_TRAIN_PATH + 300];
    const char *path = t->resume_from;
    *resumed = 0;
    if (!t->resume_found) {
        snprintf(line, sizeof line, "--continue: no snapshot in %s, starting from scratch", t->dir_snap);
        emit(t, line);
        return 0;
    }
    const rn_net *net = train_net(t->cfg, err);
    if (!net || rn_snapshot_load(path, t->cfg->backbone, net, &t->p, &t->st, err)) return -1;
    t->have_p = 1, *resumed = 1;
    if (t->st.loader_batch > t->ipe)
        return rn_err_set(err, "%s: resumes at batch %d but an epoch has %d batches (different data or batch size?)",
                          path, t->st.loader_batch, t->ipe);
    metrics_from_log(t);
    snprintf(line, sizeof line, "resuming from %s: epoch %d batch %d, iteration %lld", path, t->st.loader_epoch,
             t->st.loader_batch, (long long)t->st.iter);
    emit(t, line);
    snprintf(line, sizeof line, "{\"event\": \"resume\", \"snapshot\": \"%s\", \"epoch\": %d, \"itr\": %d, \"iter\": %lld}",
             path, t->st.loader_epoch, t->st.loader_batch, (long long)t->st.iter);
    jsonl(t, line);
    return 0;
}

/* The model of batch b: the main one, or the short last batch's. */
static rn_model *model_of(trainer *t, const rn_batch *b) { return b->n == t->cfg->batch ? &t->rig.m : &t->rig.tail; }

/* The loader's next batch, inside a "data" span: 1, 0 at the epoch's end, or -1 with err. */
static int loader_next(trainer *t, const rn_batch **b, rn_err *err)
{
    span(t, "data", 1);
    int rc = rn_loader_next(t->ld, b, err);
    span(t, "data", 0);
    return rc;
}

/* rn_step_next: the loader's next batch of this epoch (none at its end), uploaded into its model's other
 * input set beside the step in flight. */
static int fetch_next(void *ctx, rn_err *err)
{
    trainer *t = ctx;
    double t0 = rn_prof_now();
    int rc = loader_next(t, &t->ahead, err);
    t->fetch_s = rn_prof_now() - t0;
    if (rc <= 0) t->ahead = NULL;
    if (rc < 0) return -1;
    if (t->ahead) {
        const rn_batch *b = t->ahead;
        rn_model_prefetch(model_of(t, b), b->images, b->k, b->target, b->vis, b->have_depth);
    }
    return 0;
}

/* The step (train/assemble.h): a short last batch (the authors' DataLoader keeps it) gets a model of its
 * own, whose BN statistics are those of its rows alone; every rank must start from the same state. */
static int assemble(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    rn_train_shape sh = {.batch = c->batch, .h = c->input_size, .w = c->input_size,
                         .tail = t->tail_n != c->batch ? t->tail_n : 0, .pinned_inputs = t->pinned, .lr = c->lr,
                         .same_start = 1};
    if (rn_train_assemble(&t->rig, &t->env, &t->p, &sh, err)) return -1;
    t->have_rig = 1;
    if (t->pinned) t->rig.ctl.next = (rn_step_next){fetch_next, t}; /* the next batch beside each step */
    t->rig.opt.step = t->st.adam_step;
    rn_loss_scaler *ls = t->rig.ctl.scaler;
    if (ls && t->st.have_scaler && rn_loss_scaler_resume(ls, &t->st.scaler)) {
        char line[160];
        snprintf(line, sizeof line, "resumed loss scale %g (%ld clean steps, %ld of %ld steps skipped)",
                 (double)ls->scale, ls->clean, ls->skipped, ls->steps);
        emit(t, line);
    }
    return 0;
}

/* Epoch e's lr: the authors' schedule under the lr rule (lr-scale, over batch x ranks). */
static double lr_at(const trainer *t, int e) { return rn_train_env_lr(&t->env, rn_train_lr(t->cfg, e), t->cfg->batch); }

/* --prep-dir names a folder, or the run is refused before anything is written. */
static int check_prep_dir(const trainer *t, rn_err *err)
{
    struct stat st;
    const char *dir = t->cfg->prep_dir;
    if (!dir[0] || (!stat(dir, &st) && S_ISDIR(st.st_mode))) return 0;
    return rn_err_set(err, "--prep-dir %s: no such folder (rootnet dataset --dataset NAME --prepare %s writes it; or "
                      "leave --prep-dir out)", dir, dir);
}

/* Says how many training samples have their prepared frame in --prep-dir (another set's folder: none). */
static void prep_report(trainer *t)
{
    const char *dir = t->cfg->prep_dir;
    if (!dir[0] || !t->main_rank) return;
    if (t->cfg->fast_decode) {
        fprintf(stderr, "rootnet train: warning: --prep-dir %s is not used with --fast-decode (frames decoded "
                "DCT-scaled from their sources)\n", dir);
        return;
    }
    size_t n = 0, found = rn_loader_prep_found(t->set_ptr, t->n_sets, dir, &n);
    char line[8400];
    if (found)
        snprintf(line, sizeof line, "--prep-dir %s: prepared frames for %zu of %zu training samples (the others decoded "
                 "from their sources)", dir, found, n);
    else
        snprintf(line, sizeof line, "warning: --prep-dir %s holds no prepared frame of this training set (another "
                 "set's, or not prepared yet): every frame is decoded from its source", dir);
    if (found) emit(t, line);
    else fprintf(stderr, "rootnet train: %s\n", line);
    if (!found && t->txt) fprintf(t->txt, "%s\n", line);
}

static int setup(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    if (check_prep_dir(t, err) || check_snapshots(t, err) || open_outputs(t, err) || load_sets(t, err) ||
        make_loader(t, err))
        return -1;
    prep_report(t);
    int64_t cap = (int64_t)c->end_epoch * t->ipe;
    rn_train_state_init(&t->st, cap);
    t->metric = rn_xmalloc((size_t)c->end_epoch * sizeof *t->metric);
    for (int e = 0; e < c->end_epoch; e++) t->metric[e] = NAN;
    int resumed = 0;
    if (c->cont && resume(t, &resumed, err)) return -1;
    if (!resumed && init_params(t, err)) return -1;
    rn_train_cfg_format(c, t->cfg_text, sizeof t->cfg_text);
    if (c->dump_batches[0] && !resumed) {
        char path[RN_TRAIN_PATH + 32];
        snprintf(path, sizeof path, "%s/w0.safetensors", c->dump_batches);
        if (rn_weights_save(&t->p, path, NULL, err)) return -1;
    }
    if (assemble(t, err)) return -1;
    return t->hk->on_start ? t->hk->on_start(t->hk->ctx, &t->p, err) : 0;
}

static void kill_hook(void *ctx, int i, int n)
{
    (void)ctx;
    if (i == n / 2) raise(SIGKILL);
}

static int save_snapshot(trainer *t, int epoch, int next_epoch, int next_batch, rn_err *err)
{
    if (!t->main_rank) return 0;
    char path[RN_TRAIN_PATH + 64];
    int batch_in_name = next_batch ? next_batch : 0;
    rn_snapshot_path(path, sizeof path, t->dir_snap, next_batch ? next_epoch : epoch, batch_in_name);
    t->st.epoch = epoch, t->st.loader_epoch = next_epoch, t->st.loader_batch = next_batch;
    t->st.adam_step = t->rig.opt.step;
    t->st.have_scaler = t->rig.ctl.scaler != NULL; /* the scaler's state, resumed by assemble() */
    if (t->st.have_scaler) t->st.scaler = *t->rig.ctl.scaler;
    rn_snapshot_hook hook = {NULL, NULL};
    if (++t->snapshots_written == t->cfg->kill_in_snapshot) hook.fn = kill_hook;
    span(t, "snapshot", 1);
    int rc = rn_snapshot_save(path, &t->p, &t->st, t->cfg_text, &hook, err);
    span(t, "snapshot", 0);
    if (rc) return -1;
    rn_snapshot_prune(t->dir_snap, next_epoch, next_batch, t->cfg->keep_snapshots);
    if (!next_batch) rn_snapshot_prune_epochs(t->dir_snap, epoch, t->cfg->keep_epochs);
    char line[RN_TRAIN_PATH + 200];
    snprintf(line, sizeof line, "{\"event\": \"snapshot\", \"path\": \"%s\", \"epoch\": %d, \"iter\": %lld}", path,
             epoch, (long long)t->st.iter);
    jsonl(t, line);
    return 0;
}

static int dump_batch(const trainer *t, const rn_batch *b, rn_err *err)
{
    /* RootNet's t (n, 3), v (n, 1); PoseNet's t (n, K, 3), v (n, K, 1): what rootnet step and PyTorch take */
    int64_t n = b->n, K = b->K, hw = t->cfg->input_size, sx[4] = {n, 3, hw, hw}, s1[2] = {n, 1}, s3[2] = {n, 3},
            sk3[3] = {n, K, 3}, sk1[3] = {n, K, 1};
    int kr = K > 1 ? 3 : 2;
    rn_tensors ts;
    rn_tensors_init(&ts);
    int rc = rn_tensors_add(&ts, "x", RN_F32, 4, sx, b->images, err) || rn_tensors_add(&ts, "k", RN_F32, 2, s1, b->k, err) ||
             rn_tensors_add(&ts, "t", RN_F32, kr, K > 1 ? sk3 : s3, b->target, err) ||
             rn_tensors_add(&ts, "v", RN_F32, kr, K > 1 ? sk1 : s1, b->vis, err) ||
             rn_tensors_add(&ts, "d", RN_F32, 2, s1, b->have_depth, err);
    int64_t ep = b->epoch;
    if (!rc) rc = rn_tensors_add(&ts, "epoch", RN_I64, 0, NULL, &ep, err);
    char path[RN_TRAIN_PATH + 64];
    snprintf(path, sizeof path, "%s/batch_%06lld.safetensors", t->cfg->dump_batches, (long long)t->st.iter);
    if (!rc) rc = rn_safetensors_write(path, &ts, err);
    rn_tensors_free(&ts);
    return rc ? -1 : 0;
}

/* One update on batch b (train/step.h); returns 0, or -1 with err on a hook failure or a non-finite loss. */
static int step(trainer *t, const rn_batch *b, double *loss, rn_err *err)
{
    rn_model *m = model_of(t, b);
    RN_ASSERT(b->n == m->N);
    rn_step_batch sb = {b->images, b->k, b->target, b->vis, b->have_depth};
    int applied;
    if (!rn_train_step(m, &t->rig.opt, &sb, NULL, &t->rig.ctl, t->hk, loss, &applied, err)) return 0;
    return isfinite(*loss) ? -1 : rn_err_prefix(err, "iteration %lld", (long long)t->st.iter);
}

static void progress(trainer *t, int epoch, int itr)
{
    if (!t->tty || !t->out) return;
    int width = 30, done = (int)((int64_t)width * itr / t->ipe);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < done ? '#' : '.';
    bar[width] = 0;
    double avg = t->tm.n ? t->tm.total / (double)t->tm.n : 0;
    fprintf(t->out, "\r\033[Kepoch %d [%s] %d/%d eta %.0fs", epoch, bar, itr, t->ipe, avg * (t->ipe - itr));
    fflush(t->out);
}

/* The hooks' extra numbers as ", \"name\": value" (json) and " name: value" (text). */
static void hook_values(const trainer *t, int at_epoch, char *json, size_t jn, char *text, size_t tn)
{
    const char *name[16];
    double value[16];
    int n = t->hk->log_values ? t->hk->log_values(t->hk->ctx, at_epoch, name, value, 16) : 0;
    size_t j = 0, x = 0;
    json[0] = text[0] = 0;
    for (int i = 0; i < n && j < jn && x < tn; i++) {
        if (isfinite(value[i])) j += (size_t)snprintf(json + j, jn - j, ", \"%s\": %.17g", name[i], value[i]);
        else j += (size_t)snprintf(json + j, jn - j, ", \"%s\": null", name[i]);
        x += (size_t)snprintf(text + x, tn - x, " %s: %.6g", name[i], value[i]);
    }
}

static void log_step(trainer *t, int epoch, int itr, double loss)
{
    double n = (double)(t->tm.n ? t->tm.n : 1), tot = t->tm.total / n, data = t->tm.data / n, comp = t->tm.compute / n;
    char stamp[32], line[1024], hj[512], ht[256];
    hook_values(t, 0, hj, sizeof hj, ht, sizeof ht);
    time_t now = time(NULL);
    struct tm lt;
    strftime(stamp, sizeof stamp, "%m-%d %H:%M:%S", localtime_r(&now, &lt));
    snprintf(line, sizeof line, "%s Epoch %d/%d itr %d/%d: lr: %g speed: %.2f(%.2fs r%.2f)s/itr %.2fh/epoch loss_coord: %.4f%s",
             stamp, epoch, t->cfg->end_epoch, itr, t->ipe, t->rig.opt.lr, tot, comp, data, tot / 3600.0 * t->ipe, loss, ht);
    emit(t, line);
    snprintf(line, sizeof line,
             "{\"epoch\": %d, \"itr\": %d, \"itr_per_epoch\": %d, \"iter\": %lld, \"lr\": %.17g, \"loss\": %.17g, "
             "\"s_per_itr\": %.6f, \"compute_s\": %.6f, \"data_s\": %.6f, \"h_per_epoch\": %.6f, \"time\": %lld%s}",
             epoch, itr, t->ipe, (long long)t->st.iter, t->rig.opt.lr, loss, tot, comp, data, tot / 3600.0 * t->ipe,
             (long long)now, hj);
    jsonl(t, line);
}

/* The epoch's next batch: the one the last step took (prefetched), else the loader's; 1, 0 at the
 * epoch's end, or -1 with err. */
static int next_batch(trainer *t, int prefetched, const rn_batch **b, rn_err *err)
{
    if (prefetched) {
        *b = t->ahead;
        t->ahead = NULL;
        return *b != NULL;
    }
    return loader_next(t, b, err);
}

/* Runs batches of `epoch` from the loader; returns 1 when max_iters stopped it inside the epoch. */
static int run_epoch(trainer *t, int epoch, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    const rn_batch *b;
    int prefetched = 0; /* 1: each step takes the next batch (fetch_next), after the first */
    for (;;) {
        double t0 = rn_prof_now();
        int rc = next_batch(t, prefetched, &b, err);
        if (rc <= 0) return rc;
        if (c->kill_at_iter && t->st.iter + 1 == c->kill_at_iter) raise(SIGKILL);
        double t1 = rn_prof_now(), loss = 0;
        int itr = b->index + 1; /* b may be reused once the step has taken the next batch */
        if ((c->dump_batches[0] && dump_batch(t, b, err)) || step(t, b, &loss, err)) return -1;
        prefetched = t->rig.ctl.next.fn != NULL;
        double t2 = rn_prof_now(), fetch = prefetched ? t->fetch_s : 0;
        t->tm.data += t1 - t0 + fetch, t->tm.compute += t2 - t1 - fetch, t->tm.total += t2 - t0, t->tm.n++;
        if (t->hk->on_step) t->hk->on_step(t->hk->ctx);
        t->st.loss[t->st.iter++] = (float)loss;
        if (itr % c->log_every == 0 || itr == t->ipe) log_step(t, epoch, itr, loss);
        progress(t, epoch, itr);
        int stop = c->max_iters && t->st.iter >= c->max_iters;
        int mid = c->snapshot_iters && t->st.iter % c->snapshot_iters == 0;
        if (itr == t->ipe) continue; /* the epoch's end: end_epoch snapshots */
        if ((stop || mid) && save_snapshot(t, epoch, epoch, itr, err)) return -1;
        if (stop) return 1;
    }
}

static double epoch_mean(const trainer *t, int epoch)
{
    int64_t a = (int64_t)epoch * t->ipe, z = a + t->ipe < t->st.iter ? a + t->ipe : t->st.iter;
    double s = 0;
    for (int64_t i = a; i < z; i++) s += t->st.loss[i];
    return z > a ? s / (double)(z - a) : NAN;
}

static uint64_t weights_hash(const rn_params *p)
{
    size_t bytes = p->n_param * sizeof(float);
    uint8_t *b = rn_xmalloc(bytes + 1);
    rn_params_download(p, b, p->param, bytes);
    uint64_t h = rn_fnv1a64(RN_FNV_OFFSET, b, bytes);
    free(b);
    return h;
}

static int end_epoch(trainer *t, int epoch, rn_err *err)
{
    if (save_snapshot(t, epoch, epoch + 1, 0, err)) return -1;
    if (!t->main_rank) return 0;
    char snap[RN_TRAIN_PATH + 64], line[RN_TRAIN_PATH + 1024], hj[512], ht[256];
    rn_snapshot_path(snap, sizeof snap, t->dir_snap, epoch, 0);
    if (t->hk->on_epoch && t->hk->on_epoch(t->hk->ctx, epoch, snap, &t->p, &t->metric[epoch], err)) return -1;
    hook_values(t, 1, hj, sizeof hj, ht, sizeof ht);
    double mean = epoch_mean(t, epoch);
    snprintf(line, sizeof line, "epoch %d done: mean loss %.4f, snapshot %s%s", epoch, mean, snap, ht);
    emit(t, line);
    char hash[40] = "";
    if (t->cfg->deterministic) snprintf(hash, sizeof hash, ", \"weights_fnv1a\": \"%016llx\"", (unsigned long long)weights_hash(&t->p));
    char metric[32] = "null", mean_s[32] = "null"; /* JSON has no NaN: no metric, or no iteration, this epoch */
    if (isfinite(t->metric[epoch])) snprintf(metric, sizeof metric, "%.6g", t->metric[epoch]);
    if (isfinite(mean)) snprintf(mean_s, sizeof mean_s, "%.9g", mean);
    snprintf(line, sizeof line, "{\"event\": \"epoch_end\", \"epoch\": %d, \"mean_loss\": %s, \"metric\": %s%s%s}",
             epoch, mean_s, metric, hash, hj);

    jsonl(t, line);
    return 0;
}

static int plot(trainer *t, rn_err *err)
{
    if (!t->main_rank) return 0;
    char path[RN_TRAIN_PATH + 64];
    snprintf(path, sizeof path, "%s/loss.png", t->dir_log);
    const rn_train_cfg *c = t->cfg;
    double *lr = rn_xmalloc((size_t)c->end_epoch * sizeof *lr);
    for (int e = 0; e < c->end_epoch; e++) lr[e] = lr_at(t, e);
    char name[64];
    const rn_set_desc *set = rn_set_find(c->testset);
    snprintf(name, sizeof name, set && set->metric == RN_SET_AP_ROOT ? "AP_root on %s (0-1)" : "MRPE on %s (mm)", c->testset);
    rn_plot_train_in in = {t->st.loss, t->st.iter, t->ipe, t->metric, c->end_epoch, name, lr, c->end_epoch};
    int rc = rn_plot_train_png(path, &in, err);
    free(lr);
    return rc;
}

static int train(trainer *t, rn_err *err)
{
    const rn_train_cfg *c = t->cfg;
    char line[256];
    snprintf(line, sizeof line, "training ResNet-%d %dx%d batch %d: %d iterations per epoch, epochs %d..%d", c->backbone,
             c->input_size, c->input_size, c->batch, t->ipe, t->st.loader_epoch, c->end_epoch - 1);
    emit(t, line);
    for (int epoch = t->st.loader_epoch; epoch < c->end_epoch; epoch++) {
        int first = epoch == t->st.loader_epoch ? t->st.loader_batch : 0;
        t->rig.opt.lr = t->st.lr = lr_at(t, epoch);
        if (rn_loader_start(t->ld, epoch, first, err)) return -1;
        int rc = run_epoch(t, epoch, err);
        if (rc < 0) return -1;
        if (rc == 1) return plot(t, err);
        if (end_epoch(t, epoch, err) || plot(t, err)) return -1;
        if (c->max_iters && t->st.iter >= c->max_iters) return 0;
    }
    return 0;
}

static void teardown(trainer *t)
{
    if (t->ld) rn_loader_free(t->ld);
    if (t->have_rig) rn_train_rig_free(&t->rig);
    if (t->have_p) rn_params_free(&t->p);
    for (int i = 0; i < t->n_sets; i++) rn_dataset_free(&t->sets[i]);
    rn_train_state_free(&t->st);
    free(t->metric);
    if (t->jsonl) fclose(t->jsonl);
    if (t->txt) fclose(t->txt);
}

int rn_trainer_run(const rn_train_cfg *cfg, const rn_train_env *env, const rn_train_hooks *hooks, FILE *out,
                   rn_err *err)
{
    static const rn_train_hooks none = {0};
    if (rn_train_cfg_check(cfg, err)) return -2;
    trainer *t = rn_xcalloc(1, sizeof *t);
    t->cfg = cfg, t->hk = hooks ? hooks : &none;
    t->env = env ? *env : rn_train_env_make(NULL, NULL, rn_train_cfg_threads(cfg), cfg->sync_bn, cfg->bucket_mb);
    t->main_rank = t->env.rank == 0;
    t->out = t->main_rank ? out : NULL;
    t->tty = t->out && isatty(fileno(t->out));
    t->tm.t0 = rn_prof_now();
    int rc = setup(t, err) ? -2 : train(t, err) ? -1 : 0;
    if (!rc && t->hk->on_end && t->hk->on_end(t->hk->ctx, err)) rc = -1;
    if (t->tty) fputs("\n", t->out);
    teardown(t);
    free(t);
    return rc;
}
