/* rn_model: a network of nn/net.h (the ResNet backbone, its deconvs and head, as p->net describes
 * them) on a device, with every activation planned up front for one batch size and input size.
 *
 *   rn_params p; rn_params_build(&p, 50, &err); rn_params_init(&p, &rng);
 *   rn_model m;
 *   rn_model_opts o = {.device = "cpu", .threads = 2, .compute = RN_NUM_F32};  // .inference = 1: forward only
 *   rn_model_create(&m, &p, 32, 256, 256, &o, &err);
 *   rn_model_sync_weights(&m);                   // after loading or updating p
 *   rn_model_forward(&m, images, k, 1);          // 1: train-mode BN
 *   const float *coord = rn_model_coords(&m);    // (N, K, 3), waits (inference)
 *   rn_model_zero_grad(&m);
 *   rn_model_backward(&m, target, vis, have_depth);  // p.grad += dL/dp, no wait
 *   double loss = rn_model_loss_read(&m);        // the one wait of a step
 *   rn_model_destroy(&m);
 *
 * Device. The model runs every op on p's device (nn/params.h): the first
 * model made from p opens o.device by name and moves p's arenas there (p then
 * owns it); later models of the same p share it (their o.device, if set, must
 * name it). Activations, statistics and head buffers are device memory (one
 * arena), laid out as the device says; the parameters, gradients, Adam
 * moments and running statistics are p's device buffers. images, k and the
 * targets are host arrays: used in place on a device whose memory is host
 * memory (cpu, ref), else uploaded into the arena. Nothing in forward or
 * backward waits for the device (nn/device.h): the output and the loss stay
 * on it until rn_model_coords or rn_model_read_status reads them (one download
 * each). SyncBN's count is N*H*W times opts.reduce.replicas, known up front.
 *
 * Activations (every rn_cbn/rn_block buffer, pool, g) are stored in o.act:
 * float, or rn_bf16 under bf16-o2; statistics, head outputs and parameters
 * are always float.
 * Mixed precision: set o.compute and o.act from a policy (nn/precision.h). Loss
 * scaling: set m.loss_scale before backward; the gradients in p.grad are then
 * scaled by it (optim/loss_scale.h unscales them). Profiling: point m.prof at
 * an rn_profile (core/profile.h).
 * Data parallel (src/dist): .reduce = {fn, ctx} makes every train-mode BN
 * all-reduce (sum) its per-channel sums in forward and backward: SyncBN.
 * .grad_ready = {fn, ctx} is told during backward that every gradient at flat
 * offsets >= off is final (off only decreases), so buckets can start early.
 *
 * Fast inference (.inference = 1, .fold = 1): the eval forward runs one fused
 * conv per conv (BN folded in, bias + residual + ReLU as the conv's epilogue),
 * the residual added in place in the block's input; same result as the
 * unfused eval forward up to fp32 rounding (tests/t_fold.sh).
 *
 * Images are plain NCHW float32, already normalised. k is (N), given to the head layers that scale
 * by it. The output is the net's (N, K, 3) rows (RootNet: (x, y) on the output grid (input / 4)
 * and depth = gamma * k); the targets are (N, K, 3), vis (N, K), have_depth (N).
 * The model borrows p; it never frees it. Nothing is allocated after create.
 */
#ifndef RN_NN_MODEL_H
#define RN_NN_MODEL_H

#include <stdio.h>

#include "core/profile.h"
#include "nn/device.h"
#include "nn/net.h"
#include "nn/params.h"

struct rn_autotune;

/* Gradients at p->grad[off ..) are final for this backward. */
typedef struct rn_model_grad_ready {
    void (*fn)(void *ctx, size_t off);
    void *ctx;
} rn_model_grad_ready;

/* Told each conv's input in a fold model's forward (but the stem's, the images): the conv's weight
 * name, its input x (device memory) and x's shape; for calibrating int8 (nn/calib.h). */
typedef struct rn_model_observe {
    void (*fn)(void *ctx, rn_device *dev, const char *name, const void *x, const rn_act_shape *a);
    void *ctx;
} rn_model_observe;

struct rn_calib;

typedef struct rn_model_opts {
    const char *device; /* "cpu" (NULL) | "ref": the device the model opens */
    rn_device *dev;     /* or an open device to run on (the model holds it too); its name wins over .device */

    int threads;        /* compute threads of its device, 0 = OpenMP's default */
    rn_numtype compute; /* conv compute precision; RN_NUM_I8 (needs fold and calib): every conv but the
                           stem in int8, its input's scale from calib, activations stay fp32 */
    const struct rn_calib *calib; /* int8: the ranges of the conv inputs (nn/calib.h), borrowed until create returns */
    rn_model_observe observe;     /* fn NULL: none; else told each conv's input (fold models; no graph) */
    rn_numtype act;    /* activation storage: RN_NUM_F32, or RN_NUM_BF16 (bf16-o2; needs RN_NUM_BF16) */
    int inference;      /* 1: forward only (no backward primitives; train-mode BN still allowed) */
    int fold;           /* 1 (needs inference): eval forwards only, each BN folded into its conv's
                           weights and a bias, ReLU and the residual add fused into the conv
                           (the device's conv_forward_fused); with bf16 compute the activations
                           are stored in bf16 too. rn_model_sync_weights folds. */
    struct rn_autotune *tune; /* NULL: default conv algorithms; else chosen per shape (nn/autotune.h) */
    rn_device_reduce reduce;        /* fn NULL: BN statistics stay local (errors: the hook keeps them) */
    rn_model_grad_ready grad_ready; /* fn NULL: not told */
    int pinned_inputs;  /* 1: the host arrays given to forward/backward come from the device's host_alloc and
                           stay unchanged until the step's wait, so a device without host memory copies them
                           with upload_async, beside its compute (else a plain upload) */
    int prefetch;       /* 1 (with pinned_inputs, on a device without host memory and with upload_async): a second
                           set of input buffers, which rn_model_prefetch fills with the next batch while the step
                           in flight reads the other (one batch of inputs more device memory) */
    int graph;          /* 1: where the device has graphs (nn/device_ops.inc: graph_begin), a training step
                           (train/step.c) and an inference model's forward run as one captured graph,
                           replayed from the second run on (rn_model_run_graph) */
    int no_reuse;       /* diagnostics (bench/fp16_trace.c): no two planned buffers share memory, so after a step
                           each holds the last value written to it (the arena is the plan without reuse) */
    int int8_unchained; /* tests: int8 convs each reading and writing the device's layout (no NHWC or u8 hand-offs
                           between them): the same arithmetic but for the rounding of a hand-off, one pass more each */
    int poison;         /* tests: backward fills with NaN every planned buffer it has finished with, and
                           each of its gradient buffers as it comes to life (checks the plan's lifetimes) */

} rn_model_opts;

/* Memory plan. Every buffer of the arena is planned at create with a lifetime in the step's phases
 * (the stem with its max-pool, each block, the net's deconvs, the head layers: forward
 * runs phase ph at time ph, backward at two times per phase, in reverse). A forward activation lives
 * from its phase's forward to its phase's backward, a gradient buffer over the backward times that
 * write and read it; statistics, head buffers and inputs live the whole step. Buffers whose lifetimes do not
 * meet share memory (largest first, each at the lowest offset clear of those live with it); create
 * asserts that no two buffers live at one time overlap. */
typedef enum rn_mem_kind {
    RN_MEM_ACT,   /* forward-saved activations: conv and BN outputs, the max-pool's, block outputs */
    RN_MEM_GRAD,  /* backward's activation gradients (rn_model.g, rn_block.g) */
    RN_MEM_STATS, /* BN batch statistics, folded scale/shift, the BN sums scratch */
    RN_MEM_HEAD,  /* the head layers' logits and features, their gradients, the result, the loss */
    RN_MEM_INPUT, /* device copies of the step's inputs (none on a device with host memory) */
    RN_MEM_KINDS
} rn_mem_kind;

typedef struct rn_model_buf {
    size_t off, bytes; /* in the arena; bytes rounded up to 64 */
    int t0, t1;        /* live from phase time t0 to t1, both included */
    rn_mem_kind kind;
} rn_model_buf;

typedef struct rn_model_mem {
    size_t by_kind[RN_MEM_KINDS]; /* bytes planned of each kind; their sum is the arena without reuse */
    size_t arena;                 /* the arena's bytes, with reuse */
    size_t live_peak;             /* the most bytes live at one time: no arena of this plan can be smaller */
    size_t params;                /* p's device arenas: weights, gradients, Adam m and v, BN running statistics */
} rn_model_mem;

/* "act", "grad", "stats", "head", "inputs". */
const char *rn_mem_kind_name(rn_mem_kind k);

/* conv -> BatchNorm (-> ReLU) */
typedef struct rn_cbn {
    rn_conv *conv;
    rn_conv_shape s;
    int pw, pg, pb, pm, pv, pn; /* table indices: weight, gamma, beta, running mean/var, counter */
    int relu;                   /* ReLU right after the BN (not for a block's last conv) */
    rn_act_shape a;             /* conv output's shape (N, OC, OH, OW) */
    const void *x;              /* input activation (the images for the stem: plain fp32) */
    void *c;                    /* conv output */
    void *y;                    /* BN (+ReLU) output, or NULL when fused into the block's add */
    float *mean, *var;          /* (OC): batch statistics (train) or running statistics (eval) */
    float *scale, *shift;       /* (OC): folded BN */
    double count;               /* values per channel behind the last train statistics (all replicas) */
} rn_cbn;

typedef struct rn_block {
    rn_cbn u[3];
    int nu;       /* 2 (basic) or 3 (bottleneck) */
    int has_down; /* downsample branch d */
    rn_cbn d;
    const void *in;
    void *out;    /* (N, C, H, W) */
    void *g[4];   /* backward's gradient buffers g[1..3] (block_backward), planned for this block; NULL: inference */
    char name[64]; /* "backbone.layer1.0", for the profiler */
} rn_block;

/* A graph of the model's device captured from a run of ops, and what it was captured for. */
typedef struct rn_model_graph {
    void *g;          /* NULL: none yet */
    double key[2];    /* what the ops issued depend on beyond memory (the loss scale, the mode) */
    long direct;      /* runs issued without a graph so far (the first warms the device up) */
    int failed;       /* a capture failed: issued directly from then on */
} rn_model_graph;

typedef struct rn_model {
    rn_params *p;
    rn_device *dev;
    int N, H, W;          /* batch, input size */
    int OH, OW;           /* output grid: H/4, W/4 */
    int FH, FW;           /* backbone feature size: H/32, W/32 */
    rn_cbn stem;
    void *pool;           /* (N, 64, H/4, W/4) */
    rn_block *blocks;
    int nblocks;
    rn_cbn head[RN_NET_MAX_DECONV]; /* the net's deconvs */
    int ndeconv;
    int K;                /* output rows per sample (nn/net.h) */
    const rn_head_layer *layer[RN_HEAD_KINDS]; /* the net's heat-map and GAP layer by kind (NULL: none), and */
    int layer_w[RN_HEAD_KINDS]; /* the table index of each one's weight (its bias the next): model_head.c, at create */
    float *logits;        /* (N, G*D, OH*OW): the heat-map layer's logits, then softmax, then gradient (or NULL) */
    float *feat, *dfeat;  /* (N, feat_ch): GAP of the backbone output and its gradient (a GAP layer; or NULL) */
    float *coord_dev;     /* (N, K, 3): the result, on the device */
    float *coord;         /* (N, K, 3): host copy of the result, filled by rn_model_coords */
    float *dcoord;        /* (N, K, 3): the loss's gradient */
    double *lossbuf;      /* (2): the loss, then `finite` in the second slot's bytes */
    int *finite;          /* (1), device: the step's unscale_check flag (train/step.h) */
    double *sched;        /* (2), device: the step's Adam schedule (optim/adam.h), uploaded before its ops */
    void *g[2];           /* the deconvs' backward gradient pair g[0], g[1] (model_head.c); NULL: inference */
    const float *k;       /* the staged k, target, vis and have_depth (device copies, or the host */
    const float *target, *vis, *have_depth; /* arrays with host memory): rn_model_stage* */
    int last_train;       /* mode of the last forward */
    rn_model_opts opts;
    float loss_scale;     /* backward scales dL/dcoord by this (1 after create; see optim/loss_scale.h) */
    rn_profile *prof;     /* NULL, or spans of every layer's forward and backward are recorded here */
    void *arena;          /* device memory behind every buffer above */
    size_t arena_bytes;
    double *bnsum;        /* (2 * max channels + 1): BN sums scratch */
    float *in[2][5];      /* device copies of images, k, target, vis, have_depth: one set (in[1] NULL), two with
                             opts.prefetch; NULL with host memory */
    int cur;              /* the set the staged batch is in */
    const float *ahead[5]; /* the host arrays rn_model_prefetch put into the other set (NULL: none) */
    rn_model_graph step_graph[2]; /* train/step.c's, one per input set */
    rn_model_graph fwd_graph;  /* an inference model's forward */
    rn_model_buf *bufs;   /* the plan of the arena: every buffer above, in planning order */
    int nbufs;
    rn_model_mem mem;     /* what the plan costs */
} rn_model;


/* Builds the network for batch N and input H x W (multiples of 32). */
int rn_model_create(rn_model *m, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err);
/* The memory plan rn_model_create would make (*mem), without the arena or the convs: opens the device
 * as create does (p moves to it), allocates nothing on it. 0, or -1 with err. */
int rn_model_plan(rn_model_mem *mem, rn_params *p, int N, int H, int W, const rn_model_opts *o, rn_err *err);
void rn_model_destroy(rn_model *m);
/* Pushes p's weights (on the device) to the device's convs (weight reorders). Call after every change to p. */
void rn_model_sync_weights(rn_model *m);
/* train = 1: batch statistics, running statistics updated; 0: running statistics.
 * rn_model_stage(m, images, k, train), then rn_model_forward_ops(m) (as one graph with opts.graph
 * on an inference model). */
void rn_model_forward(rn_model *m, const float *images /* (N, 3, H, W) */, const float *k /* (N) */, int train);
/* The host side of a forward: its inputs onto the device (uploads; in place with host memory), its
 * mode, and with train every BN's num_batches_tracked advanced. */
void rn_model_stage(rn_model *m, const float *images /* (N, 3, H, W) */, const float *k /* (N) */, int train);
/* The host side of a backward: its targets onto the device. */
void rn_model_stage_targets(rn_model *m, const float *target /* (N, K, 3) */, const float *vis /* (N, K) */,
                            const float *have_depth /* (N) */);
/* With opts.prefetch: the next batch (host arrays from the device's host_alloc, unchanged until the wait
 * after the next step) into the input set the staged batch is not in, with upload_async, i.e. beside the
 * ops issued before it: call it after a step's ops and before that step's wait. The next rn_model_stage
 * given the same images switches to that set instead of uploading them (and takes k, and then
 * rn_model_stage_targets the targets, from it where their arrays are the same too); another batch is
 * uploaded as without it. Returns 1 when it uploaded, 0 when m does not prefetch (nothing done). */
int rn_model_prefetch(rn_model *m, const float *images /* (N, 3, H, W) */, const float *k /* (N) */,
                      const float *target /* (N, K, 3) */, const float *vis /* (N, K) */, const float *have_depth /* (N) */);
/* The device ops alone of a forward and a backward on what was staged: no upload, no wait, no host
 * state changed, so that a graph (rn_model_run_graph) can capture them. */
void rn_model_forward_ops(rn_model *m);
void rn_model_backward_ops(rn_model *m);
/* Runs ops(m, ctx) on m's device: as gr's graph when opts.graph and the device have graphs, the
 * profiler is off, and this run is not the first (warm-up) run: captured when gr has none or was
 * captured with another key, else replayed. A failed capture says so in one line on stderr and the
 * ops run directly from then on. ops must issue device ops only, the same ones for the same key. */
void rn_model_run_graph(rn_model *m, rn_model_graph *gr, const double key[2], void (*ops)(rn_model *m, void *ctx),
                        void *ctx);
/* The output of the last forward: a host (N, K, 3) array owned by m (one download: waits). */
const float *rn_model_coords(rn_model *m);
/* Loss of the last forward into m's device buffer, and its gradient accumulated into p->grad.
 * Needs a train forward. Waits for nothing. rn_model_stage_targets, then rn_model_backward_ops. */
void rn_model_backward(rn_model *m, const float *target /* (N, K, 3) */, const float *vis /* (N, K) */,
                       const float *have_depth /* (N) */);
/* The last backward's loss and the finite flag (*m->finite, set by the step's unscale_check;
 * finite may be NULL) in one download: the step's one wait. */
void rn_model_read_status(rn_model *m, double *loss, int *finite);
/* rn_model_read_status's loss alone. */
double rn_model_loss_read(rn_model *m);
/* Loss only (a forward's, without gradients); waits. */
double rn_model_loss(const rn_model *m, const float *target, const float *vis, const float *have_depth);
/* p.grad = 0 on the model's device. */
void rn_model_zero_grad(rn_model *m);
/* One line per conv into f: its weight's name, shape and the implementation the device chose for each
 * direction it runs (ops->conv_impl_name), e.g. "conv backbone.conv1.weight 7x7/2 3->64 at 256x256 fwd
 * cudnn:fwd:implicit_precomp_gemm ...". */
void rn_model_print_convs(rn_model *m, FILE *f);

#endif
