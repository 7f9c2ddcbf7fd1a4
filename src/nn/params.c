#include "nn/params.h"

#include "nn/device.h"
#include "nn/net.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

typedef struct arch {
    int depth, bottleneck, blocks[4];
} arch;

static const arch ARCHS[] = {
    {18, 0, {2, 2, 2, 2}},  {34, 0, {3, 4, 6, 3}},   {50, 1, {3, 4, 6, 3}},
    {101, 1, {3, 4, 23, 3}}, {152, 1, {3, 8, 36, 3}},
};

int rn_param_trainable(rn_param_kind k)
{
    return k != RN_P_BN_MEAN && k != RN_P_BN_VAR && k != RN_P_BN_NBT;
}

static void add_entry(rn_params *p, rn_param_kind kind, int ndim, const int64_t *shape, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void add_entry(rn_params *p, rn_param_kind kind, int ndim, const int64_t *shape, const char *fmt, ...)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        rn_param_entry *e = rn_xcalloc((size_t)p->cap, sizeof *e);
        if (p->n) memcpy(e, p->e, (size_t)p->n * sizeof *e);
        free(p->e);
        p->e = e;
    }
    rn_param_entry *e = &p->e[p->n++];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(e->name, sizeof e->name, fmt, ap);
    va_end(ap);
    RN_ASSERT(len > 0 && len < RN_PARAM_NAME_MAX);
    e->kind = kind;
    e->ndim = ndim;
    e->numel = 1;
    for (int d = 0; d < ndim; d++) {
        e->shape[d] = shape[d];
        e->numel *= (size_t)shape[d];
    }
    /* Trainable tensors start on a 16-float boundary so kernels can use aligned vectors. */
    if (kind == RN_P_BN_NBT) {
        e->offset = p->n_nbt++;
    } else if (rn_param_trainable(kind)) {
        e->offset = p->n_param;
        p->n_param += (e->numel + 15) & ~(size_t)15;
    } else {
        e->offset = p->n_stats;
        p->n_stats += (e->numel + 15) & ~(size_t)15;
    }
}

static void add_conv(rn_params *p, const char *prefix, int oc, int ic, int k)
{
    int64_t s[4] = {oc, ic, k, k};
    add_entry(p, RN_P_CONV, 4, s, "%s.weight", prefix);
}

static void add_bn(rn_params *p, const char *prefix, int c)
{
    int64_t s[1] = {c};
    add_entry(p, RN_P_BN_W, 1, s, "%s.weight", prefix);
    add_entry(p, RN_P_BN_B, 1, s, "%s.bias", prefix);
    add_entry(p, RN_P_BN_MEAN, 1, s, "%s.running_mean", prefix);
    add_entry(p, RN_P_BN_VAR, 1, s, "%s.running_var", prefix);
    add_entry(p, RN_P_BN_NBT, 0, s, "%s.num_batches_tracked", prefix);
}

static void add_block(rn_params *p, int stage, int b, int inplanes, int planes, int bottleneck, int down)
{
    char pre[64], name[96];
    snprintf(pre, sizeof pre, "backbone.layer%d.%d", stage + 1, b);
    int expansion = bottleneck ? 4 : 1;
    int nconv = bottleneck ? 3 : 2;
    for (int j = 0; j < nconv; j++) {
        int ic = j == 0 ? inplanes : planes;
        int oc = j == nconv - 1 ? planes * expansion : planes;
        int k = bottleneck ? (j == 1 ? 3 : 1) : 3;
        snprintf(name, sizeof name, "%s.conv%d", pre, j + 1);
        add_conv(p, name, oc, ic, k);
        snprintf(name, sizeof name, "%s.bn%d", pre, j + 1);
        add_bn(p, name, oc);
    }
    if (down) {
        snprintf(name, sizeof name, "%s.downsample.0", pre);
        add_conv(p, name, planes * expansion, inplanes, 1);
        snprintf(name, sizeof name, "%s.downsample.1", pre);
        add_bn(p, name, planes * expansion);
    }
}

/* The net's deconvs (weight (IC, OC, 4, 4), BN) and head layers (weight (O, C, 1, 1), bias (O)). */
static void add_head(rn_params *p)
{
    const rn_net *net = p->net;
    int in = p->feat_ch;
    for (int i = 0; i < net->ndeconv; i++) {
        int64_t s[4] = {in, net->deconv_ch, 4, 4};
        add_entry(p, RN_P_DECONV, 4, s, "%s.%d.weight", net->deconv, 3 * i);
        char bn[64];
        snprintf(bn, sizeof bn, "%s.%d", net->deconv, 3 * i + 1);
        add_bn(p, bn, net->deconv_ch);
        in = net->deconv_ch;
    }
    for (int i = 0; i < net->nhead; i++) {
        const rn_head_layer *l = &net->head[i];
        int64_t o = l->kind == RN_HEAD_HEATMAP ? (int64_t)l->groups * l->bins : l->groups;
        int64_t sw[4] = {o, l->kind == RN_HEAD_HEATMAP ? net->deconv_ch : p->feat_ch, 1, 1}, sb[1] = {o};
        add_entry(p, RN_P_HEADW, 4, sw, "%s.weight", l->param);
        add_entry(p, RN_P_HEADB, 1, sb, "%s.bias", l->param);
    }
}

static float *alloc_arena(size_t n)
{
    size_t bytes = ((n * sizeof(float)) + 63) & ~(size_t)63;
    float *a = aligned_alloc(64, bytes ? bytes : 64);
    RN_ASSERT(a != NULL);
    memset(a, 0, bytes ? bytes : 64);
    return a;
}

int rn_params_build(rn_params *p, int depth, rn_err *err) { return rn_params_build_net(p, NULL, depth, err); }

int rn_params_build_net(rn_params *p, const rn_net *net, int depth, rn_err *err)
{
    memset(p, 0, sizeof *p);
    p->net = net ? net : rn_net_default();
    const arch *a = NULL;
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (ARCHS[i].depth == depth) a = &ARCHS[i];
    if (!a) return rn_err_set(err, "backbone depth %d is not one of 18, 34, 50, 101, 152", depth);
    p->depth = depth;
    p->bottleneck = a->bottleneck;
    memcpy(p->blocks, a->blocks, sizeof p->blocks);
    p->feat_ch = a->bottleneck ? 2048 : 512;
    add_conv(p, "backbone.conv1", 64, 3, 7);
    add_bn(p, "backbone.bn1", 64);
    int inplanes = 64, expansion = a->bottleneck ? 4 : 1;
    for (int s = 0; s < 4; s++) {
        int planes = 64 << s;
        for (int b = 0; b < a->blocks[s]; b++) {
            int down = b == 0 && (s > 0 || inplanes != planes * expansion);
            add_block(p, s, b, inplanes, planes, a->bottleneck, down);
            inplanes = planes * expansion;
        }
    }
    add_head(p);
    p->param = alloc_arena(p->n_param);
    p->grad = alloc_arena(p->n_param);
    p->m = alloc_arena(2 * p->n_param);
    p->v = p->m + p->n_param;
    p->stats = alloc_arena(p->n_stats);
    p->nbt = rn_xcalloc(p->n_nbt, sizeof *p->nbt);
    return 0;
}

/* The arenas in one list: param, grad, m (with v), stats; floats of each. */
enum { N_ARENAS = 4 };

static void arenas(rn_params *p, float ***a, size_t *n)
{
    a[0] = &p->param, a[1] = &p->grad, a[2] = &p->m, a[3] = &p->stats;
    n[0] = n[1] = p->n_param, n[2] = 2 * p->n_param, n[3] = p->n_stats;
}

static void arena_free(rn_device *dev, float *a)
{
    if (dev)
        dev->ops->free(dev, a);
    else
        free(a);
}

void rn_params_free(rn_params *p)
{
    float **a[N_ARENAS];
    size_t n[N_ARENAS];
    arenas(p, a, n);
    for (int i = 0; i < N_ARENAS; i++) arena_free(p->dev, *a[i]);
    rn_device_destroy(p->dev);
    free(p->e);
    free(p->nbt);
    memset(p, 0, sizeof *p);
}

int rn_params_to_device(rn_params *p, rn_device *dev, rn_err *err)
{
    RN_ASSERT(!p->dev && dev);
    float **a[N_ARENAS], *d[N_ARENAS] = {NULL};
    size_t n[N_ARENAS], total = 0;
    arenas(p, a, n);
    int ok = 1;
    for (int i = 0; i < N_ARENAS; i++) {
        d[i] = dev->ops->alloc(dev, n[i] * sizeof(float));
        ok = ok && d[i];
        total += n[i] * sizeof(float);
    }
    if (!ok) {
        for (int i = 0; i < N_ARENAS; i++) dev->ops->free(dev, d[i]);
        return rn_err_set(err, "device %s: cannot allocate %.1f MB of parameters, gradients, moments and BN statistics",
                          dev->name, total / 1e6);
    }
    for (int i = 0; i < N_ARENAS; i++) {
        dev->ops->upload(dev, d[i], *a[i], n[i] * sizeof(float));
        free(*a[i]);
        *a[i] = d[i];
    }
    p->v = p->m + p->n_param;
    p->dev = dev;
    return 0;
}

void rn_params_download(const rn_params *p, void *dst, const void *src, size_t bytes)
{
    if (p->dev)
        p->dev->ops->download(p->dev, dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

void rn_params_host_copy(rn_params *dst, const rn_params *p, int moments)
{
    *dst = *p;
    dst->dev = NULL;
    dst->e = rn_xmalloc((size_t)p->cap * sizeof *dst->e);
    memcpy(dst->e, p->e, (size_t)p->n * sizeof *dst->e);
    dst->nbt = rn_xcalloc(p->n_nbt ? p->n_nbt : 1, sizeof *dst->nbt);
    memcpy(dst->nbt, p->nbt, p->n_nbt * sizeof *dst->nbt);
    dst->param = alloc_arena(p->n_param);
    dst->grad = NULL;
    dst->m = dst->v = NULL;
    dst->stats = alloc_arena(p->n_stats);
    rn_params_download(p, dst->param, p->param, p->n_param * sizeof(float));
    rn_params_download(p, dst->stats, p->stats, p->n_stats * sizeof(float));
    if (!moments) return;
    dst->m = alloc_arena(2 * p->n_param);
    dst->v = dst->m + p->n_param;
    rn_params_download(p, dst->m, p->m, 2 * p->n_param * sizeof(float));
}

void rn_params_upload(rn_params *p, void *dst, const void *src, size_t bytes)
{
    if (p->dev)
        p->dev->ops->upload(p->dev, dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

void rn_params_init_backbone_he(rn_params *p, rn_rng *rng)
{
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (e->kind != RN_P_CONV || strncmp(e->name, "backbone.", 9) || e->ndim != 4) continue;
        double sd = sqrt(2.0 / (double)(e->shape[0] * e->shape[2] * e->shape[3]));
        float *d = rn_xmalloc(e->numel * sizeof *d);
        for (size_t j = 0; j < e->numel; j++) d[j] = (float)(sd * rn_rng_normal(rng));
        rn_params_upload(p, rn_params_data(p, i), d, e->numel * sizeof *d);
        free(d);
    }
}

void rn_params_init(rn_params *p, rn_rng *rng)
{
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (e->kind == RN_P_BN_NBT) {
            p->nbt[e->offset] = 0;
            continue;
        }
        float *d = rn_xmalloc(e->numel * sizeof *d);
        switch (e->kind) {
        case RN_P_CONV:
            for (size_t j = 0; j < e->numel; j++) d[j] = (float)(0.001 * rn_rng_normal(rng));
            break;
        case RN_P_DECONV:
        case RN_P_HEADW:
            for (size_t j = 0; j < e->numel; j++) d[j] = (float)(p->net->init_std * rn_rng_normal(rng));
            break;
        case RN_P_BN_W:
        case RN_P_BN_VAR:
            for (size_t j = 0; j < e->numel; j++) d[j] = 1.0f;
            break;
        case RN_P_HEADB:
        case RN_P_BN_B:
        case RN_P_BN_MEAN:
            memset(d, 0, e->numel * sizeof *d);
            break;
        case RN_P_BN_NBT: break;
        }
        rn_params_upload(p, rn_params_data(p, i), d, e->numel * sizeof *d);
        free(d);
    }
}

int rn_params_find(const rn_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->e[i].name, name) == 0) return i;
    return -1;
}

float *rn_params_data(const rn_params *p, int i)
{
    const rn_param_entry *e = &p->e[i];
    if (e->kind == RN_P_BN_NBT) return NULL;
    return rn_param_trainable(e->kind) ? p->param + e->offset : p->stats + e->offset;
}

float *rn_params_grad(const rn_params *p, int i)
{
    const rn_param_entry *e = &p->e[i];
    return rn_param_trainable(e->kind) ? p->grad + e->offset : NULL;
}

/* Block i of a stage is present when any of its first tensors is. */
static int has_block(int (*has)(const char *name, void *ctx), void *ctx, int stage, int i)
{
    static const char *const parts[] = {"conv1.weight", "bn1.weight", "conv2.weight", "bn2.weight"};
    char name[96];
    for (size_t j = 0; j < sizeof parts / sizeof parts[0]; j++) {
        snprintf(name, sizeof name, "backbone.layer%d.%d.%s", stage, i, parts[j]);
        if (has(name, ctx)) return 1;
    }
    return 0;
}

int rn_params_guess_depth(int (*has)(const char *name, void *ctx), void *ctx)
{
    int bottleneck = has("backbone.layer1.0.conv3.weight", ctx) || has("backbone.layer1.0.bn3.weight", ctx);
    int n3 = 0, n2 = 0;
    while (has_block(has, ctx, 3, n3)) n3++;
    while (has_block(has, ctx, 2, n2)) n2++;
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (ARCHS[i].bottleneck == bottleneck && ARCHS[i].blocks[2] == n3 && ARCHS[i].blocks[1] == n2)
            return ARCHS[i].depth;
    return 0;
}
