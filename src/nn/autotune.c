#include "nn/autotune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/afile.h"
#include "core/profile.h"

#define HEADER "# rootnet autotune v1"

const char *rn_conv_algo_name(rn_conv_algo a) { return a == RN_ALGO_WINOGRAD ? "winograd" : "direct"; }

static int algo_parse(const char *s)
{
    for (int a = 0; a < RN_ALGO_COUNT; a++)
        if (!strcmp(s, rn_conv_algo_name((rn_conv_algo)a))) return a;
    return -1;
}

/* cpu's keys carry no device name (caches written before devices stay valid); others' start with "<name>:".
 * A fused inference conv's key ends in _e<epilogue> (its post-ops are part of what is timed). */
static void shape_key(char *k, const rn_device *dev, const rn_conv_shape *s)
{
    int pre = strcmp(dev->name, "cpu") ? snprintf(k, RN_TUNE_KEY_MAX, "%s:", dev->name) : 0;
    snprintf(k + pre, (size_t)(RN_TUNE_KEY_MAX - pre), "n%d_i%dx%dx%d_o%dx%dx%d_k%dx%d_s%dx%d_p%dx%d_t%d_sp%d_nb%d_fo%d_c%d", s->n, s->ic,
             s->ih, s->iw, s->oc, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->ph, s->pw, s->transposed, s->src_plain,
             s->no_bwd_data, s->forward_only, (int)s->compute);
    if (s->epilogue) {
        size_t l = strlen(k);
        snprintf(k + l, RN_TUNE_KEY_MAX - l, "_e%d", s->epilogue);
    }
}

static rn_tune_entry *entry_add(rn_autotune *t)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        rn_tune_entry *e = rn_xmalloc((size_t)t->cap * sizeof *e);
        if (t->n) memcpy(e, t->e, (size_t)t->n * sizeof *e);
        free(t->e);
        t->e = e;
    }
    memset(&t->e[t->n], 0, sizeof t->e[0]);
    return &t->e[t->n++];
}

static int parse_line(rn_autotune *t, char *line, int lineno, rn_err *err)
{
    char key[RN_TUNE_KEY_MAX], algo[16];
    double ms[2];
    char extra;
    if (sscanf(line, "%127s %15s %lf %lf %c", key, algo, &ms[0], &ms[1], &extra) != 4 || algo_parse(algo) < 0)
        return rn_err_set(err, "autotune cache %s: line %d: expected '<key> direct|winograd <ms> <ms>'", t->path,
                          lineno);
    rn_tune_entry *e = entry_add(t);
    snprintf(e->key, sizeof e->key, "%s", key);
    e->algo = algo_parse(algo);
    e->ms[0] = ms[0], e->ms[1] = ms[1];
    return 0;
}

static int load(rn_autotune *t, rn_err *err)
{
    FILE *f = fopen(t->path, "r");
    if (!f) return errno == ENOENT ? 0 : rn_err_set(err, "autotune cache %s: %s", t->path, strerror(errno));
    char line[512];
    int lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno == 1 && strncmp(line, HEADER, strlen(HEADER)))
            rc = rn_err_set(err, "autotune cache %s: line 1: not a rootnet autotune v1 file", t->path);
        else if (lineno > 1)
            rc = parse_line(t, line, lineno, err);
    }
    fclose(f);
    return rc;
}

int rn_autotune_open(rn_autotune *t, const char *path, rn_err *err)
{
    memset(t, 0, sizeof *t);
    t->iters = 3;
    if (!path) return 0;
    t->path = strdup(path);
    if (load(t, err)) {
        rn_autotune_close(t);
        return -1;
    }
    return 0;
}

void rn_autotune_close(rn_autotune *t)
{
    free(t->path);
    free(t->e);
    memset(t, 0, sizeof *t);
}

static int has_choice(const rn_conv_shape *s)
{
    return !s->transposed && s->kh == 3 && s->kw == 3 && s->sh == 1 && s->sw == 1 && s->compute == RN_NUM_F32;
}

/* Buffers for timing one shape: src, dst, diff_src, diff_dst, weights, diff weights. */
typedef struct tbufs {
    float *b[6];
} tbufs;

/* src, dst, diff_src, diff_dst, w, diff_w on dev, filled with a fixed pattern
 * (activation buffers as plain floats: the pattern's layout does not matter). */
static int tbufs_init(tbufs *tb, rn_device *dev, const rn_conv_shape *s, rn_err *err)
{
    rn_act_shape in = {s->n, s->ic, s->ih, s->iw, RN_NUM_F32}, out = {s->n, s->oc, s->oh, s->ow, RN_NUM_F32};
    size_t n[6] = {dev->ops->act_bytes(dev, &in), dev->ops->act_bytes(dev, &out), 0, 0,
                   (size_t)s->oc * s->ic * s->kh * s->kw * sizeof(float), 0};
    n[2] = n[0], n[3] = n[1], n[5] = n[4];
    memset(tb, 0, sizeof *tb);
    for (int i = 0; i < 6; i++) {
        size_t nf = n[i] / sizeof(float);
        float *h = rn_xmalloc(nf * sizeof *h);
        for (size_t j = 0; j < nf; j++) h[j] = (float)((j * 2654435761u) % 1000) * 1e-3f - 0.5f;
        tb->b[i] = dev->ops->alloc(dev, n[i]);
        if (tb->b[i]) dev->ops->upload(dev, tb->b[i], h, n[i]);
        free(h);
        if (!tb->b[i]) return rn_err_set(err, "autotune: out of device memory (%zu bytes)", n[i]);
    }
    return 0;
}

static void tbufs_free(tbufs *tb, rn_device *dev)
{
    for (int i = 0; i < 6; i++) dev->ops->free(dev, tb->b[i]);
}

static void run_once(rn_conv *c, const rn_conv_shape *s, tbufs *tb)
{
    if (s->epilogue) { /* a fused inference conv: its own forward, with the residual when it adds one */
        c->dev->ops->conv_forward_fused(c->dev, c, tb->b[1], tb->b[0], s->epilogue & RN_EPI_SUM ? tb->b[3] : NULL);
        return;
    }
    rn_conv_forward(c, tb->b[1], tb->b[0]);
    if (s->forward_only) return;
    if (!s->no_bwd_data && !s->src_plain) rn_conv_backward_data(c, tb->b[2], tb->b[3]);
    rn_conv_backward_weights(c, tb->b[5], tb->b[0], tb->b[3]);
}

/* Best-of-iters ms of one candidate on dev (a fresh device: its own scratch),
 * or -1 if the device cannot build it. */
static double time_algo(const rn_autotune *t, rn_device *dev, const rn_conv_shape *s, rn_conv_algo a, tbufs *tb)
{
    rn_conv_shape cs = *s;
    cs.algo = a;
    rn_conv *c;
    rn_err ignore = {{0}};
    double best = -1;
    if (!rn_conv_create(&c, dev, &cs, &ignore)) {
        if (s->epilogue) c->dev->ops->conv_set_weights_folded(dev, c, tb->b[4], NULL, tb->b[5]); /* bias: OC of b[5] */
        else rn_conv_set_weights(c, tb->b[4]);
        run_once(c, s, tb);
        for (int i = 0; i < t->iters; i++) {
            dev->ops->synchronize(dev);
            double t0 = rn_prof_now();
            run_once(c, s, tb);
            dev->ops->synchronize(dev);
            double ms = 1e3 * (rn_prof_now() - t0);
            if (best < 0 || ms < best) best = ms;
        }
        rn_conv_destroy(c);
    }
    return best;
}

/* Times every algorithm for s on dev (the model's own device: on a GPU a second device would be a
 * second context) with scratch buffers of its own, freed before it returns. */
static int tune_shape(rn_autotune *t, rn_device *dev, const rn_conv_shape *s, const char *key, rn_err *err)
{
    tbufs tb;
    if (tbufs_init(&tb, dev, s, err)) {
        tbufs_free(&tb, dev);
        return -1;
    }
    rn_tune_entry *e = entry_add(t);
    snprintf(e->key, sizeof e->key, "%s", key);
    e->algo = RN_ALGO_DIRECT;
    int rc = 0;
    for (int a = 0; a < RN_ALGO_COUNT && !rc; a++) {
        e->ms[a] = time_algo(t, dev, s, (rn_conv_algo)a, &tb);
        if (e->ms[a] >= 0 && (e->ms[e->algo] < 0 || e->ms[a] < e->ms[e->algo])) e->algo = a;
    }
    tbufs_free(&tb, dev);
    if (rc) t->n--;

    if (e->ms[RN_ALGO_DIRECT] < 0 && !rc) rc = rn_err_set(err, "autotune: the direct algorithm is unavailable");
    t->timed += !rc;
    t->dirty = 1;
    return rc;
}

int rn_autotune_choose(rn_autotune *t, rn_device *dev, rn_conv_shape *s, rn_err *err)
{
    s->algo = RN_ALGO_DIRECT;
    if (!has_choice(s)) return 0;
    char key[RN_TUNE_KEY_MAX];
    shape_key(key, dev, s);
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->e[i].key, key)) {
            s->algo = (rn_conv_algo)t->e[i].algo;
            t->reused++;
            return 0;
        }
    if (tune_shape(t, dev, s, key, err)) return -1;
    s->algo = (rn_conv_algo)t->e[t->n - 1].algo;
    return 0;
}

int rn_autotune_save(rn_autotune *t, rn_err *err)
{
    if (!t->path || !t->dirty) return 0;
    rn_afile f;
    if (rn_afile_open(&f, t->path, err)) return rn_err_prefix(err, "autotune cache");
    char line[512];
    int n = snprintf(line, sizeof line, "%s\n", HEADER);
    if (rn_afile_write(&f, line, (size_t)n, err)) return -1;
    for (int i = 0; i < t->n; i++) {
        const rn_tune_entry *e = &t->e[i];
        n = snprintf(line, sizeof line, "%s %s %.4f %.4f\n", e->key, rn_conv_algo_name((rn_conv_algo)e->algo),
                     e->ms[0], e->ms[1]);
        if (rn_afile_write(&f, line, (size_t)n, err)) return -1;
    }
    if (rn_afile_commit(&f, err)) return -1;
    t->dirty = 0;
    return 0;
}
