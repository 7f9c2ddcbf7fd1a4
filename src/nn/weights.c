#include "nn/weights.h"

#include "nn/net.h"

#include <math.h>
#include <string.h>

typedef enum { FILE_ROOTNET, FILE_TORCHVISION } file_kind;

/* A tensor's name with the wrappers the authors' files add stripped. */
static const char *canonical(const char *name)
{
    if (!strncmp(name, "network.", 8)) name += 8;
    if (!strncmp(name, "module.", 7)) name += 7;
    return name;
}

/* Entries of a snapshot that are not weights: the authors' "epoch" and
 * "optimizer.*", and rootnet's own "train.*" state. */
static int is_snapshot_extra(const char *name)
{
    return !strncmp(name, "optimizer.", 10) || !strncmp(name, "train.", 6) || !strcmp(name, "epoch");
}

static file_kind kind_of(const rn_tensors *ts)
{
    for (int i = 0; i < ts->n; i++)
        if (!strcmp(canonical(ts->t[i].name), "conv1.weight")) return FILE_TORCHVISION;
    return FILE_ROOTNET;
}

/* Maps a file name to a table name ("" for names to skip); NULL if unusable. */
static const char *table_name(char *buf, size_t len, const char *name, file_kind kind)
{
    const char *c = canonical(name);
    if (is_snapshot_extra(name)) return "";
    if (kind == FILE_ROOTNET) return c;
    if (!strncmp(c, "fc.", 3)) return "";
    snprintf(buf, len, "backbone.%s", c);
    return buf;
}

typedef struct has_ctx {
    const rn_tensors *ts;
    file_kind kind;
} has_ctx;

static int has_name(const char *name, void *vctx)
{
    const has_ctx *ctx = vctx;
    char buf[160];
    for (int i = 0; i < ctx->ts->n; i++) {
        const char *t = table_name(buf, sizeof buf, ctx->ts->t[i].name, ctx->kind);
        if (t && !strcmp(t, name)) return 1;
    }
    return 0;
}

/* The first dimension of the file's tensor that maps to name, -1 when none (rn_net_guess's rows). */
static long rows_of(const char *name, void *vctx)
{
    const has_ctx *ctx = vctx;
    char buf[160];
    for (int i = 0; i < ctx->ts->n; i++) {
        const char *t = table_name(buf, sizeof buf, ctx->ts->t[i].name, ctx->kind);
        if (t && !strcmp(t, name)) return ctx->ts->t[i].ndim ? (long)ctx->ts->t[i].shape[0] : 0;
    }
    return -1;
}

static int check_finite(const float *d, size_t n, const char *path, const char *name, rn_err *err)
{
    for (size_t j = 0; j < n; j++)
        if (!isfinite(d[j])) return rn_err_set(err, "%s: tensor '%s': element %zu is %g", path, name, j, (double)d[j]);
    return 0;
}

static int load_entry(rn_params *p, int i, const rn_tensor *t, const char *path, rn_err *err)
{
    const rn_param_entry *e = &p->e[i];
    if (e->kind == RN_P_BN_NBT) {
        if (rn_tensor_numel(t) != 1 || t->dtype != RN_I64)
            return rn_err_set(err, "%s: tensor '%s': expected an int64 scalar", path, t->name);
        memcpy(&p->nbt[e->offset], t->data, sizeof(int64_t));
        return 0;
    }
    if (!rn_dtype_is_float(t->dtype))
        return rn_err_set(err, "%s: tensor '%s': dtype %s, expected a float type", path, t->name,
                          rn_dtype_name(t->dtype));
    if (rn_tensor_check_shape(t, e->ndim, e->shape, err)) return rn_err_prefix(err, "%s", path);
    return rn_weights_tensor_in(p, rn_params_data(p, i), t, e->numel, 1, path, err);
}

int rn_weights_tensor_in(rn_params *p, float *dst, const rn_tensor *t, size_t n, int finite, const char *path,
                         rn_err *err)
{
    float *h = rn_xmalloc(n * sizeof *h + 1);
    int rc = rn_tensor_to_f32(h, t, n, err) ? rn_err_prefix(err, "%s", path)
             : finite                       ? check_finite(h, n, path, t->name, err)
                                            : 0;
    if (!rc) rn_params_upload(p, dst, h, n * sizeof *h);
    free(h);
    return rc;
}

/* A parameter of the net's own (deconvs, head), not of the backbone an ImageNet file holds. */
static int is_head(const char *name) { return strncmp(name, "backbone.", 9) != 0; }

int rn_weights_apply(rn_params *p, const rn_tensors *ts, const char *path, rn_rng *rng, rn_err *err)
{
    file_kind kind = kind_of(ts);
    char *seen = rn_xcalloc((size_t)p->n, 1);
    char buf[160];
    int rc = 0;
    for (int k = 0; k < ts->n && !rc; k++) {
        const char *name = table_name(buf, sizeof buf, ts->t[k].name, kind);
        if (!name[0]) continue;
        int i = rn_params_find(p, name);
        if (i < 0)
            rc = rn_err_set(err, "%s: unknown parameter '%s' for a ResNet-%d %s", path, ts->t[k].name, p->depth,
                            p->net->title);
        else if (seen[i])
            rc = rn_err_set(err, "%s: parameter '%s' given twice", path, name);
        else if (!(rc = load_entry(p, i, &ts->t[k], path, err)))
            seen[i] = 1;
    }
    if (!rc && kind == FILE_TORCHVISION) {
        /* The head is not in an ImageNet file: the authors' init, then the backbone again over it. */
        rn_params_init(p, rng);
        for (int k = 0; k < ts->n && !rc; k++) {
            const char *name = table_name(buf, sizeof buf, ts->t[k].name, kind);
            if (name[0]) rc = load_entry(p, rn_params_find(p, name), &ts->t[k], path, err);
        }
        for (int i = 0; i < p->n; i++)
            if (is_head(p->e[i].name)) seen[i] = 1;
    }
    for (int i = 0; i < p->n && !rc; i++)
        if (!seen[i]) rc = rn_err_set(err, "%s: missing parameter '%s'", path, p->e[i].name);
    free(seen);
    return rc;
}

int rn_weights_load(rn_params *p, const char *path, int depth, rn_rng *rng, rn_err *err)
{
    rn_tensors ts;
    if (rn_tensors_load(&ts, path, err)) return -1;
    int rc = rn_weights_from_tensors(p, &ts, path, depth, rng, err);
    rn_tensors_free(&ts);
    return rc;
}

int rn_weights_from_tensors(rn_params *p, const rn_tensors *ts, const char *path, int depth, rn_rng *rng, rn_err *err)
{
    return rn_weights_from_tensors_net(p, ts, path, depth, NULL, rng, err);
}

int rn_weights_load_net(rn_params *p, const char *path, int depth, const rn_net *want, rn_rng *rng, rn_err *err)
{
    rn_tensors ts;
    if (rn_tensors_load(&ts, path, err)) return -1;
    int rc = rn_weights_from_tensors_net(p, &ts, path, depth, want, rng, err);
    rn_tensors_free(&ts);
    return rc;
}

const rn_net *rn_weights_net(const rn_tensors *ts)
{
    has_ctx ctx = {ts, kind_of(ts)};
    return ctx.kind == FILE_TORCHVISION ? NULL : rn_net_guess(rows_of, &ctx);
}

/* The net the file's head is, or want for a torchvision file (the default without want); NULL with err set
 * when the file's head is no net's or not the one wanted. */
static const rn_net *file_net(const has_ctx *ctx, const char *path, const rn_net *want, rn_err *err)
{
    char nets[128];
    if (ctx->kind == FILE_TORCHVISION) return want ? want : rn_net_default();
    const rn_net *net = rn_net_guess(rows_of, (void *)ctx);
    if (!net) {
        long o = rows_of("head.final_layer.weight", (void *)ctx);
        if (o > 0)
            rn_err_set(err, "%s: a PoseNet of %ld outputs (%g joints x 64 depth bins): rootnet's PoseNet has the "
                       "joints of Human36M (18) or MuCo (21)", path, o, o / 64.0);
        else
            rn_err_set(err, "%s: holds no %s head (%s)", path, rn_net_names(nets, sizeof nets, 1),
                       "root.xy_layer / head.final_layer");
        return NULL;
    }
    if (want && net != want) {
        rn_err_set(err, "%s: holds a %s%s%s, but a %s%s%s is needed here", path, net->title,
                   net->skeleton ? " of " : "", net->skeleton ? net->skeleton : "", want->title,
                   want->skeleton ? " of " : "", want->skeleton ? want->skeleton : "");
        return NULL;
    }
    return net;
}

int rn_weights_from_tensors_net(rn_params *p, const rn_tensors *ts, const char *path, int depth, const rn_net *want,
                                rn_rng *rng, rn_err *err)
{
    has_ctx ctx = {ts, kind_of(ts)};
    int found = rn_params_guess_depth(has_name, &ctx);
    char nets[128];
    const rn_net *net = NULL;
    if (!found)
        return rn_err_set(err, "%s: not a %s or torchvision ResNet state_dict (no backbone layers found)", path,
                          rn_net_names(nets, sizeof nets, 1));
    if (depth && depth != found)
        return rn_err_set(err, "%s: holds a ResNet-%d backbone, but ResNet-%d was asked for", path, found, depth);
    if (!(net = file_net(&ctx, path, want, err))) return -1;
    if (rn_params_build_net(p, net, found, err)) return -1;
    int rc = rn_weights_apply(p, ts, path, rng, err);
    if (rc) rn_params_free(p);
    return rc;
}

/* Appends entry e's span src of p's arenas to ts as name (a host copy). */
static int add_span(rn_tensors *ts, const rn_params *p, const char *name, const rn_param_entry *e, const float *src,
                    rn_err *err)
{
    if (rn_tensors_add(ts, name, RN_F32, e->ndim, e->shape, NULL, err)) return -1;
    rn_params_download(p, ts->t[ts->n - 1].data, src, e->numel * sizeof *src);
    return 0;
}

int rn_weights_export(rn_tensors *ts, const rn_params *p, rn_err *err)
{
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        int rc = e->kind == RN_P_BN_NBT ? rn_tensors_add(ts, e->name, RN_I64, 0, e->shape, &p->nbt[e->offset], err)
                                        : add_span(ts, p, e->name, e, rn_params_data(p, i), err);
        if (rc) return -1;
    }
    return 0;
}

int rn_weights_export_buffer(rn_tensors *ts, const rn_params *p, const float *buf, const char *prefix, rn_err *err)
{
    char name[160];
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (!rn_param_trainable(e->kind)) continue;
        snprintf(name, sizeof name, "%s%s", prefix, e->name);
        if (add_span(ts, p, name, e, buf + e->offset, err)) return -1;
    }
    return 0;
}

static int save_tensors(rn_tensors *ts, const char *path, rn_err *err)
{
    int rc = rn_safetensors_write(path, ts, err);
    rn_tensors_free(ts);
    return rc;
}

int rn_weights_save(const rn_params *p, const char *path, const rn_tensors *extra, rn_err *err)
{
    rn_tensors ts;
    rn_tensors_init(&ts);
    int rc = rn_weights_export(&ts, p, err);
    for (int i = 0; !rc && extra && i < extra->n; i++) {
        const rn_tensor *t = &extra->t[i];
        rc = rn_tensors_add(&ts, t->name, t->dtype, t->ndim, t->shape, t->data, err);
    }
    for (int i = 0; !rc && extra && i < extra->n_meta; i++) rn_tensors_set_meta(&ts, extra->meta_key[i], extra->meta_val[i]);
    if (rc) {
        rn_tensors_free(&ts);
        return -1;
    }
    return save_tensors(&ts, path, err);
}

int rn_grads_save(const rn_params *p, const char *path, rn_err *err)
{
    rn_tensors ts;
    rn_tensors_init(&ts);
    if (rn_weights_export_buffer(&ts, p, p->grad, "", err)) {
        rn_tensors_free(&ts);
        return -1;
    }
    return save_tensors(&ts, path, err);
}
