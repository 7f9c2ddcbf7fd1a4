/* rn_net: a network as a description. Every network rootnet runs is the shared ResNet backbone
 * (nn/params.c: torchvision's names under "backbone."), a stack of deconvolutions (ConvTranspose2d
 * 4x4 stride 2 -> BN -> ReLU) and a head of generic layers after them; one file under src/nets/
 * describes each network, and nothing else knows its head. The model (nn/model.h), the memory
 * planner, the step, graph capture, prefetch and poisoning run any description; the devices run
 * the generic ops its layers name (nn/device_ops.inc: pointwise, softargmax, gap, linear, l1_loss).
 *
 *   const rn_net *net = rn_net_default();            // rn_net_guess for a weight file's
 *   rn_params p; rn_params_build_net(&p, net, 50, &err);
 *
 * The output of a network is (N, K, 3) per batch: K rows of three numbers per sample, each row
 * written by one head layer (its columns col ..), their meaning in `doc`. The loss is the masked
 * L1 loss of nn/device_ops.inc over those rows: target (N, K, 3), vis (N, K) masking all three
 * columns of a row, have_depth (N) masking the third column of every row of the sample.
 */
#ifndef RN_NN_NET_H
#define RN_NN_NET_H

#include <stddef.h>

#define RN_NET_MAX_DECONV 4

typedef enum rn_head_kind {
    /* pointwise conv with bias (deconv output, C -> groups * bins channels), then one soft-argmax
     * per group over its bins x H x W: the group's (column, row[, bin]) on the output grid */
    RN_HEAD_HEATMAP,
    /* global average pool of the backbone output, then a linear layer with bias (C -> groups
     * outputs, stored as a 1x1 conv), times the sample's k when scale_k */
    RN_HEAD_GAP_LINEAR,
    RN_HEAD_KINDS
} rn_head_kind;

typedef struct rn_head_layer {
    rn_head_kind kind;
    const char *param; /* its parameters: <param>.weight (O, C, 1, 1) and <param>.bias (O), the authors' names */
    int groups;        /* heatmap: heat maps G, each one output row (G == the net's K); linear: outputs O */
    int bins;          /* heatmap: depth bins D (1: a 2D heat map; the third column is left to another layer) */
    int scale_k;       /* linear: the output times k (N), the forward's per-sample input */
    int col;           /* heatmap: 0; linear: the column of each output row it writes (O == 1) */
} rn_head_layer;

typedef struct rn_net {
    const char *name;      /* "rootnet": the --net value and the snapshot's config key `net` */
    const char *title;     /* "RootNet": in messages */
    const char *doc;       /* what the output rows are */
    const char *deconv;    /* the deconv stack's prefix: <deconv>.<3i>.weight, its BN <deconv>.<3i+1> */
    int ndeconv;           /* 1 .. RN_NET_MAX_DECONV */
    int deconv_ch;         /* channels of every deconv */
    const rn_head_layer *head; /* at most one layer of each kind */
    int nhead;
    int K;                 /* output rows per sample */
    const char *const *row_names; /* K names, when no skeleton names them */
    const char *skeleton;  /* the joint set (data/sets/skeleton.h) whose joints the K rows are, or NULL */
    double init_std;       /* the deconvs' and head weights' N(0, init_std) (biases 0) */
} rn_net;

/* The default network (RootNet); every rn_params_build without a net uses it. */
const rn_net *rn_net_default(void);
/* Into buf (n bytes): every net's name ("rootnet"), or with titles its title ("RootNet"), joined by
 * " or ", for error lines; returns buf. */
const char *rn_net_names(char *buf, size_t n, int titles);
/* The network whose head a weight file holds: rows(name, ctx) gives the first dimension of the file's
 * tensor of that name, -1 when it has none; the first net (registry order) whose every head weight is
 * there with its output count (PoseNet on Human36M's 18 joints or MuCo's 21: J x 64) is it. NULL when
 * none matches. */
const rn_net *rn_net_guess(long (*rows)(const char *name, void *ctx), void *ctx);
/* The head layer of that kind, NULL if the net has none. */
const rn_head_layer *rn_net_layer(const rn_net *net, rn_head_kind kind);
/* The net named name ("rootnet", "posenet") whose rows are the joints of the skeleton named joints (NULL:
 * the net's first, e.g. PoseNet on Human36M); NULL when none. */
const rn_net *rn_net_find(const char *name, const char *joints);
/* 1 when a layer scales by k: the forward's per-sample input k (N) is then required. */
int rn_net_uses_k(const rn_net *net);

/* The networks' own files (src/nets/): the registry (nn/net.c) names them. */
const rn_net *rn_net_rootnet(void);
/* PoseNet on the joints of the skeleton at index i (0: Human36M, 1: MuCo), NULL past the last. */
const rn_net *rn_net_posenet(int i);

#endif
