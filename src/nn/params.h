/* rn_params: the one table of RootNet's tensors and the arenas behind it.
 *
 *   rn_params p;
 *   rn_params_build(&p, 50);                 // table + zeroed arenas
 *   rn_params_init(&p, &rng);                // the authors' initialisation
 *   int i = rn_params_find(&p, "backbone.conv1.weight");
 *   float *w = rn_params_data(&p, i);        // PyTorch layout, in p's arena
 *   rn_params_upload(&p, w, host, n * sizeof *w);           // loading
 *   rn_params_to_device(&p, dev, &err);      // the arenas move to dev (rn_model_create does this)
 *   ... optimizer: one call over p.param[0 .. p.n_param) and p.grad[...], on p.dev ...
 *   rn_params_download(&p, host, p.grad, p.n_param * sizeof *host);  // snapshots, logs
 *   rn_params_free(&p);                      // frees the arenas and p.dev
 *
 * Every trainable tensor lives in ONE contiguous buffer `param`, its gradient
 * at the same offset in ONE buffer `grad`, and Adam's moments at the same
 * offset in `m` and `v` (one arena: v = m + n_param). BatchNorm running
 * statistics live in `stats` (not trained) and num_batches_tracked counters
 * in `nbt`. Names and layouts are PyTorch's state_dict (torchvision ResNet
 * under "backbone.", the authors' head under "root.").
 *
 * Memory. After build the arenas are host memory (p.dev NULL) so a file can
 * be loaded into them. rn_params_to_device moves param, grad, m/v and stats
 * into buffers of a device (nn/device.h), which p then owns: from then on
 * they are DEVICE memory, and the host reads or writes them only through
 * rn_params_download / rn_params_upload (snapshots, weight files, logs, the
 * distribution's copies), never through a pointer, whatever the device
 * (the device "ref-guard" faults on any such access). The counters in nbt
 * stay host memory (host bookkeeping, no device op reads them).
 */
#ifndef RN_NN_PARAMS_H
#define RN_NN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "core/status.h"

typedef enum {
    RN_P_CONV,     /* Conv2d weight (OC, IC, KH, KW), no bias */
    RN_P_DECONV,   /* ConvTranspose2d weight (IC, OC, KH, KW) */
    RN_P_HEADW,    /* a head layer's 1x1 Conv2d weight (O, C, 1, 1) (nn/net.h) */
    RN_P_HEADB,    /* its bias (O) */
    RN_P_BN_W,     /* BatchNorm weight (C) */
    RN_P_BN_B,     /* BatchNorm bias (C) */
    RN_P_BN_MEAN,  /* running_mean (C), in stats */
    RN_P_BN_VAR,   /* running_var (C), in stats */
    RN_P_BN_NBT,   /* num_batches_tracked, int64 scalar, in nbt */
} rn_param_kind;

#define RN_PARAM_NAME_MAX 96

typedef struct rn_param_entry {
    char name[RN_PARAM_NAME_MAX];
    rn_param_kind kind;
    int ndim;
    int64_t shape[4];
    size_t numel;
    size_t offset; /* into param/grad/m/v (trainable), stats (mean/var) or nbt (index) */
} rn_param_entry;

typedef struct rn_device rn_device;
typedef struct rn_net rn_net;

typedef struct rn_params {
    const rn_net *net;    /* the network whose table this is (nn/net.h) */
    int depth;            /* 18, 34, 50, 101, 152 */
    int bottleneck;       /* 1 for 50/101/152 */
    int blocks[4];        /* blocks per stage */
    int feat_ch;          /* backbone output channels: 512 or 2048 */
    rn_param_entry *e;
    int n, cap;
    size_t n_param, n_stats, n_nbt;
    float *param, *grad, *m, *v; /* n_param floats each, 64-byte aligned; m and v share one arena */
    float *stats;                /* n_stats floats */
    int64_t *nbt;                /* n_nbt counters, host memory */
    rn_device *dev;              /* NULL: the arenas are host memory; else dev's buffers (p owns dev) */
} rn_params;

/* The table of net (NULL: rn_net_default()) on a ResNet of that depth: the backbone's entries, then the
 * net's deconvs and head layers (nn/net.h). Returns 0, or -1 if depth is not one of 18, 34, 50, 101, 152. */
int rn_params_build_net(rn_params *p, const rn_net *net, int depth, rn_err *err);
/* rn_params_build_net with the default network. */
int rn_params_build(rn_params *p, int depth, rn_err *err);
/* Frees the arenas, and p->dev when set. */
void rn_params_free(rn_params *p);
/* Moves the arenas (param, grad, m/v, stats) into buffers of dev, contents kept;
 * on success p owns dev (rn_params_free destroys it). p->dev must be NULL.
 * Returns 0, or -1 (dev out of memory; p unchanged, dev not taken). */
int rn_params_to_device(rn_params *p, rn_device *dev, rn_err *err);
/* Host copies of arena spans: src (download) / dst (upload) point into p's
 * arenas (param, grad, m, v, stats), the other side is host memory. */
void rn_params_download(const rn_params *p, void *dst /* host */, const void *src, size_t bytes);
void rn_params_upload(rn_params *p, void *dst, const void *src /* host */, size_t bytes);
/* A host copy of p for code that reads values by pointer (the exporters):
 * dst gets p's table and counters, and its weights and BN statistics (with
 * moments = 1 also Adam's moments; else dst->m, dst->v are NULL) read once
 * through rn_params_download; no gradients (dst->grad NULL), no device.
 * Free with rn_params_free. */
void rn_params_host_copy(rn_params *dst, const rn_params *p, int moments);
/* The authors' init: N(0, 0.001) for every conv/deconv/head weight, head
 * biases 0, BN weight 1 and bias 0, running mean 0 and var 1, counters 0. */
void rn_params_init(rn_params *p, rn_rng *rng);
/* After rn_params_init: every backbone conv weight ("backbone.*") drawn again He-normal over its fan-out
 * (N(0, 2 / (out channels x kh x kw)), torchvision's ResNet init), the scale of the ImageNet weights the
 * authors start from; the head keeps the authors' N(0, 0.001). For benchmarks of realistic gradients
 * (rootnet bench --init he, bench/fp16_trace.c): with N(0, 0.001) everywhere BN amplifies the tiny conv
 * outputs' gradients, which fp16 cannot hold after the first update. */
void rn_params_init_backbone_he(rn_params *p, rn_rng *rng);
/* Index of the entry with this exact name, or -1. */
int rn_params_find(const rn_params *p, const char *name);
/* The entry's storage (param, stats: arena memory, see Memory); NULL for RN_P_BN_NBT. */
float *rn_params_data(const rn_params *p, int i);
/* The entry's gradient, or NULL for non-trainable entries. */
float *rn_params_grad(const rn_params *p, int i);
int rn_param_trainable(rn_param_kind k);
/* Depth that a table of names implies: counts blocks of layer3 and the kind of
 * block. Returns 0 when it cannot tell. `has(name, ctx)` answers presence. */
int rn_params_guess_depth(int (*has)(const char *name, void *ctx), void *ctx);

#endif
