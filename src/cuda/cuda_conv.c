/* The CUDA device's convolutions: cuDNN's legacy API on NHWC tensors.
 *
 * A conv computes in the type of its compute (fp32, bf16, fp16; fp32
 * accumulation). With fp32 activations and bf16/fp16 compute (the "bf16" and
 * "fp16" precisions) each direction casts its inputs into the device's shared
 * mixed buffers and converts its output back (cudnnTransformTensor).
 *
 * A Conv2d is cuDNN's conv with x = src, y = dst. A ConvTranspose2d is run as
 * the conv it is the transpose of: x = its output (OC channels), y = its input
 * (IC channels), filter K = IC, C = OC -- PyTorch's (IC, OC, KH, KW) weight as
 * it is -- so its forward is cuDNN's backward-data, its backward-data cuDNN's
 * forward, and its weight gradient cuDNN's backward-filter of (x = diff_dst,
 * dy = src).
 *
 * Algorithms: conv_create asks cuDNN once per shape and device for each
 * direction it will run -- its heuristics by default (cudnnGet*_v7, the same
 * answer in every process, so a resumed run ends bit-identical), its
 * measurement with RN_CUDA_FIND=1 (cudnnFind*, faster picks that another
 * process may not repeat) -- and keeps the first that is deterministic and
 * fits the workspace allocated at create; nothing is allocated after conv_create.

 * fp32 convs use CUDNN_FMA_MATH (no TF32) unless RN_CUDA_TF32=1; bf16 and
 * fp16 convs accumulate in fp32 on tensor cores.
 *
 * Fused inference convs (BN folded) with a ReLU run as one cudnnConvolutionBiasActivationForward where
 * cuDNN takes it (not in place); the others as the conv into the device's shared output, then
 * rn_cuda_bias_add_relu.
 *
 * The network input (src_plain: plain NCHW fp32) is converted to NHWC of the
 * activation type with its channels padded to a multiple of 8 (zero weights
 * there) before the conv; backward-weights reuses that conversion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "nn/kernel_math.h"

typedef struct cuda_conv {
    rn_conv base;                     /* first */
    rn_numtype ct;                   /* the compute type: x, y, filter in cuDNN */
    int mixed;                        /* fp32 activations, ct bf16 or fp16 */
    cudnnTensorDescriptor_t xd, yd;   /* cuDNN's x and y (see the top), type ct */
    cudnnTensorDescriptor_t xa, ya;   /* the same in the activation type (mixed only) */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    int d0, d1, d1pad;                /* PyTorch weight (d0, d1, KH, KW); filter KRSC (d0, KH, KW, d1pad) */
    void *wk;                         /* the filter, activation type */
    void *in;                         /* src_plain: the input in NHWC, d1pad channels */
    float *bias;                      /* a fused conv's (OC) */
    int fuse;                         /* cuDNN's conv + bias (+ z) + ReLU runs it (see fused_cudnn) */
    cudnnTensorDescriptor_t bd;       /* the bias (1, OC, 1, 1) float, with fuse */
    cudnnActivationDescriptor_t ad;   /* ReLU, with fuse */
    rn_cuda_algos a;                  /* the measured choice, by cuDNN direction */
} cuda_conv;

static const float ONE = 1.0f, ZERO = 0.0f;

static cudnnDataType_t data_type(rn_numtype t)
{
    return t == RN_NUM_BF16 ? CUDNN_DATA_BFLOAT16 : t == RN_NUM_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

static size_t weight_bytes(const cuda_conv *c)
{
    const rn_conv_shape *s = &c->base.s;
    return (size_t)c->d0 * s->kh * s->kw * c->d1pad * rn_numtype_size(c->ct);
}

static rn_numtype compute_type(const rn_conv_shape *s)
{
    return s->compute == RN_NUM_BF16 ? RN_NUM_BF16 : s->compute == RN_NUM_F16 ? RN_NUM_F16 : s->act;
}

/* Which cuDNN directions s runs: 0 forward, 1 backward-data, 2 backward-filter. */
static void directions(const rn_conv_shape *s, int need[3])
{
    int train = !s->forward_only, bwd_data = train && !s->src_plain && !s->no_bwd_data;
    need[0] = s->transposed ? bwd_data : 1;
    need[1] = s->transposed ? 1 : bwd_data;
    need[2] = train;
}

/* fp32 without TF32 runs with FMA math only; half types on tensor cores. */
static cudnnMathType_t find_math(const rn_cuda_device *d, rn_numtype t)
{
    if (t != RN_NUM_F32) return CUDNN_TENSOR_OP_MATH;
    return d->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

/* One cuDNN result, whatever the direction. */
typedef struct cand {
    int algo;
    cudnnStatus_t status;
    cudnnDeterminism_t det;
    size_t mem;
    cudnnMathType_t math;
    float ms;
} cand;

/* A result usable here: it ran, within the workspace cap, the right math, deterministic unless any. */
static int usable(const rn_cuda_device *d, rn_numtype t, const cand *r, int any)
{
    if (r->status != CUDNN_STATUS_SUCCESS || (!any && r->det != CUDNN_DETERMINISTIC) || r->mem > d->ws_cap) return 0;
    return t != RN_NUM_F32 || d->tf32 || r->math == CUDNN_FMA_MATH || r->math == CUDNN_DEFAULT_MATH;
}

static cudnnMathType_t run_math(const rn_cuda_device *d, rn_numtype t, cudnnMathType_t m)
{
    return t == RN_NUM_F32 && !d->tf32 ? CUDNN_FMA_MATH : m;
}

static const char *DIR_NAME[3] = {"forward", "backward-data", "backward-filter"};

/* Direction dir's algorithms, best first, into r; the count. By default cuDNN's heuristics
 * (cudnnGet*_v7): a function of the shape, GPU and library, so every process (a resumed run, each
 * rank) picks the same algorithm and computes the same bits; with RN_CUDA_FIND=1 cudnnFind*'s
 * measurement (it allocates its own buffers), which another process may measure differently. */
static int find(rn_cuda_device *d, cuda_conv *c, int dir, cand r[8], rn_err *err)
{
    cudnnConvolutionFwdAlgoPerf_t pf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t pd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t pw[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    if (!RN_CUDNN_OK(cudnnSetConvolutionMathType(c->cd, find_math(d, c->ct)), err)) return -1;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (dir == 0)
        st = d->find ? cudnnFindConvolutionForwardAlgorithm(d->cudnn, c->xd, c->wd, c->cd, c->yd,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, pf)
                     : cudnnGetConvolutionForwardAlgorithm_v7(d->cudnn, c->xd, c->wd, c->cd, c->yd,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, pf);
    if (dir == 1)
        st = d->find ? cudnnFindConvolutionBackwardDataAlgorithm(d->cudnn, c->wd, c->yd, c->cd, c->xd,
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, pd)
                     : cudnnGetConvolutionBackwardDataAlgorithm_v7(d->cudnn, c->wd, c->yd, c->cd, c->xd,
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, pd);
    if (dir == 2)
        st = d->find ? cudnnFindConvolutionBackwardFilterAlgorithm(d->cudnn, c->xd, c->yd, c->cd, c->wd,
                                                                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, pw)
                     : cudnnGetConvolutionBackwardFilterAlgorithm_v7(d->cudnn, c->xd, c->yd, c->cd, c->wd,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, pw);
    if (!RN_CUDNN_OK(st, err)) return -1;

    for (int i = 0; i < n && i < 8; i++)
        r[i] = dir == 0   ? (cand){pf[i].algo, pf[i].status, pf[i].determinism, pf[i].memory, pf[i].mathType, pf[i].time}
               : dir == 1 ? (cand){pd[i].algo, pd[i].status, pd[i].determinism, pd[i].memory, pd[i].mathType, pd[i].time}
                          : (cand){pw[i].algo, pw[i].status, pw[i].determinism, pw[i].memory, pw[i].mathType, pw[i].time};
    return n < 8 ? n : 8;
}

static const char *algo_name(int dir, int algo);

/* RN_CUDA_VERBOSE=2: one line per conv shape and direction: cuDNN's candidates in its order, each with
 * its measured time (RN_CUDA_FIND or RN_CUDA_BENCHMARK; "-" from the heuristics), workspace and why it
 * was passed over, and the one chosen with its time and workspace (what tools/device_summary.py reads). */
static void log_choice(const rn_cuda_device *d, const cuda_conv *c, int dir, const cand *r, int n)
{
    const rn_conv_shape *s = &c->base.s;
    static const char *TYPE[] = {"fp32", "bf16", "fp16"};
    fprintf(stderr, "rootnet: device %s: algos %s%dx%d/%d %d->%d at %dx%d b%d %s %s: chose %s %.3fms %zuMiB%s;",
            d->name, s->transposed ? "deconv " : "", s->kh, s->kw, s->sh, s->ic, s->oc, s->ih, s->iw, s->n,
            TYPE[c->ct < 3 ? c->ct : 0], DIR_NAME[dir], algo_name(dir, c->a.algo[dir]),
            d->find ? (double)c->a.ms[dir] : -1.0, c->a.mem[dir] >> 20, d->benchmark ? " (benchmark)" : "");
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s %.3fms %zuMiB%s%s%s", algo_name(dir, r[i].algo), d->find ? (double)r[i].ms : -1.0,
                r[i].mem >> 20,
                r[i].status != CUDNN_STATUS_SUCCESS ? " (fails)" : "",
                r[i].det != CUDNN_DETERMINISTIC ? " (nondet)" : "", r[i].mem > d->ws_cap ? " (over cap)" : "");
    fputc('\n', stderr);
}

/* Measures direction dir of c into c->a: the fastest deterministic algorithm (a resumed run must end
 * bit-identical); where cuDNN has none for the shape, the fastest at all, said once on stderr; in
 * benchmark mode the fastest at all from the start. */
static int measure(rn_cuda_device *d, cuda_conv *c, int dir, rn_err *err)
{
    const rn_conv_shape *s = &c->base.s;
    cand r[8];
    int n = find(d, c, dir, r, err);
    if (n < 0) return -1;
    c->a.algo[dir] = -1;
    for (int any = d->benchmark; any < 2 && c->a.algo[dir] < 0; any++)
        for (int i = 0; i < n && c->a.algo[dir] < 0; i++)
            if (usable(d, c->ct, &r[i], any)) {
                c->a.algo[dir] = r[i].algo, c->a.math[dir] = run_math(d, c->ct, r[i].math), c->a.ms[dir] = r[i].ms;
                c->a.mem[dir] = r[i].mem;
                if (any && !d->benchmark)
                    fprintf(stderr, "rootnet: device %s: no deterministic cuDNN %s algorithm for the %s%dx%d %d->%d conv "
                                    "at %dx%d (batch %d): a non-deterministic one runs (repeated runs may differ)\n",
                            d->name, DIR_NAME[dir], s->transposed ? "transposed " : "", s->kh, s->kw, s->ic, s->oc,
                            s->ih, s->iw, s->n);
            }
    if (d->verbose >= 2) log_choice(d, c, dir, r, n);
    if (c->a.algo[dir] < 0)
        return rn_err_set(err, "device %s: no cuDNN %s algorithm for the %s%dx%d %d->%d conv at %dx%d (batch %d) within "
                               "the %zu MiB workspace (RN_CUDA_WORKSPACE_MB raises it)",
                          d->name, DIR_NAME[dir], s->transposed ? "transposed " : "", s->kh, s->kw, s->ic, s->oc, s->ih,
                          s->iw, s->n, d->ws_cap >> 20);
    return 0;
}

/* The measured algorithms for c's shape: from the device's cache, else measured and cached. */
static int choose(rn_cuda_device *d, cuda_conv *c, rn_err *err)
{
    const rn_conv_shape *s = &c->base.s;
    int need[3];
    directions(s, need);
    int key[20] = {s->n, c->d1pad, s->ih, s->iw, s->oc, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->ph, s->pw,
                   s->transposed, (int)c->ct, need[0], need[1], need[2], d->tf32, s->ic};
    for (int i = 0; i < d->nalgos; i++)
        if (!memcmp(d->algos[i].key, key, sizeof key)) {
            c->a = d->algos[i];
            return 0;
        }
    memcpy(c->a.key, key, sizeof key);
    for (int dir = 0; dir < 3; dir++) {
        c->a.algo[dir] = -1;
        if (need[dir] && measure(d, c, dir, err)) return -1;
    }
    if (d->nalgos == d->cap_algos) {
        d->cap_algos = d->cap_algos ? 2 * d->cap_algos : 64;
        rn_cuda_algos *a = realloc(d->algos, (size_t)d->cap_algos * sizeof *a);
        RN_ASSERT(a);
        d->algos = a;
    }
    d->algos[d->nalgos++] = c->a;
    return 0;
}

/* Descriptors in cuDNN's terms (see the top). */
static int describe(cuda_conv *c, rn_err *err)
{
    const rn_conv_shape *s = &c->base.s;
    cudnnDataType_t dt = data_type(c->ct);
    int xc = s->transposed ? s->oc : c->d1pad, xh = s->transposed ? s->oh : s->ih, xw = s->transposed ? s->ow : s->iw;
    int yc = s->transposed ? s->ic : s->oc, yh = s->transposed ? s->ih : s->oh, yw = s->transposed ? s->iw : s->ow;
    if (!RN_CUDNN_OK(cudnnCreateTensorDescriptor(&c->xd), err) || !RN_CUDNN_OK(cudnnCreateTensorDescriptor(&c->yd), err) ||
        !RN_CUDNN_OK(cudnnCreateFilterDescriptor(&c->wd), err) ||
        !RN_CUDNN_OK(cudnnCreateConvolutionDescriptor(&c->cd), err))
        return -1;
    if (!RN_CUDNN_OK(cudnnSetTensor4dDescriptor(c->xd, CUDNN_TENSOR_NHWC, dt, s->n, xc, xh, xw), err) ||
        !RN_CUDNN_OK(cudnnSetTensor4dDescriptor(c->yd, CUDNN_TENSOR_NHWC, dt, s->n, yc, yh, yw), err) ||
        !RN_CUDNN_OK(cudnnSetFilter4dDescriptor(c->wd, dt, CUDNN_TENSOR_NHWC, c->d0, c->d1pad, s->kh, s->kw), err) ||
        !RN_CUDNN_OK(cudnnSetConvolution2dDescriptor(c->cd, s->ph, s->pw, s->sh, s->sw, 1, 1, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                     err))
        return -1;
    if (c->mixed && (!RN_CUDNN_OK(cudnnCreateTensorDescriptor(&c->xa), err) ||
                     !RN_CUDNN_OK(cudnnCreateTensorDescriptor(&c->ya), err) ||
                     !RN_CUDNN_OK(cudnnSetTensor4dDescriptor(c->xa, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s->n, xc, xh, xw),
                                  err) ||
                     !RN_CUDNN_OK(cudnnSetTensor4dDescriptor(c->ya, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s->n, yc, yh, yw),
                                  err)))
        return -1;
    if (c->fuse && (!RN_CUDNN_OK(cudnnCreateTensorDescriptor(&c->bd), err) ||
                    !RN_CUDNN_OK(cudnnSetTensor4dDescriptor(c->bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, s->oc, 1, 1),
                                 err) ||
                    !RN_CUDNN_OK(cudnnCreateActivationDescriptor(&c->ad), err) ||
                    !RN_CUDNN_OK(cudnnSetActivationDescriptor(c->ad, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
                                 err)))
        return -1;
    return 0;
}

/* *buf of at least bytes (the device's shared buffers, grown here at create time). */
static int grow(rn_cuda_device *d, void **buf, size_t *have, size_t bytes)
{
    if (*have >= bytes) return 0;
    rn_cuda_release(d, *buf); /* a graph captured before may still read it */
    *have = 0;
    if (!(*buf = rn_cuda_malloc(d, bytes))) return -1;
    *have = bytes;
    return 0;
}

/* The buffers c needs, and the device's shared ones it uses grown to fit it (fused output, mixed x and y,
 * backward-filter result). */
static int buffers(rn_cuda_device *d, cuda_conv *c, rn_err *err)
{
    const rn_conv_shape *s = &c->base.s;
    size_t es = rn_numtype_size(c->ct), out = (size_t)s->n * s->oc * s->oh * s->ow;
    size_t in = (size_t)s->n * s->ic * s->ih * s->iw;
    c->wk = rn_cuda_malloc(d, weight_bytes(c));
    int ok = c->wk != NULL;
    if (!s->forward_only) ok = ok && !grow(d, &d->dw, &d->dw_bytes, weight_bytes(c));
    if (s->src_plain) ok = ok && (c->in = rn_cuda_malloc(d, (size_t)s->n * s->ih * s->iw * c->d1pad * es)) != NULL;
    if (s->epilogue) ok = ok && (c->bias = rn_cuda_malloc(d, (size_t)s->oc * sizeof(float))) != NULL;
    if (ok && s->epilogue) ok = !grow(d, &d->tmp, &d->tmp_bytes, out * rn_numtype_size(s->act));
    if (ok && c->mixed) /* cuDNN's x and y: the Conv2d's input and output, a ConvTranspose2d's the other way */
        ok = !grow(d, &d->mx, &d->mx_bytes, (s->transposed ? out : in) * es) &&
             !grow(d, &d->my, &d->my_bytes, (s->transposed ? in : out) * es);
    if (!ok) return rn_err_set(err, "device %s: out of GPU memory for a conv's buffers", d->name);
    if (s->src_plain) RN_CUDA_CHECK(cudaMemsetAsync(c->in, 0, (size_t)s->n * s->ih * s->iw * c->d1pad * es, d->stream));
    RN_CUDA_CHECK(cudaMemsetAsync(c->wk, 0, weight_bytes(c), d->stream));
    return 0;
}

/* The device's workspace grown to what c's chosen algorithms need (never past ws_cap: measure kept to it). */
static int workspace(rn_cuda_device *d, const cuda_conv *c, rn_err *err)
{
    size_t need = 0;
    for (int dir = 0; dir < 3; dir++)
        if (c->a.algo[dir] >= 0 && c->a.mem[dir] > need) need = c->a.mem[dir];
    if (!grow(d, &d->workspace, &d->ws_bytes, need)) return 0;
    return rn_err_set(err, "device %s: out of GPU memory for a %zu MiB cuDNN workspace (RN_CUDA_WORKSPACE_MB caps it)",
                      d->name, need >> 20);
}

void rn_cuda_conv_destroy(rn_device *dev, rn_conv *conv)
{
    if (!conv) return;
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    if (c->xd) (void)cudnnDestroyTensorDescriptor(c->xd);
    if (c->yd) (void)cudnnDestroyTensorDescriptor(c->yd);
    if (c->xa) (void)cudnnDestroyTensorDescriptor(c->xa);
    if (c->bd) (void)cudnnDestroyTensorDescriptor(c->bd);
    if (c->ad) (void)cudnnDestroyActivationDescriptor(c->ad);
    if (c->ya) (void)cudnnDestroyTensorDescriptor(c->ya);
    if (c->wd) (void)cudnnDestroyFilterDescriptor(c->wd);
    if (c->cd) (void)cudnnDestroyConvolutionDescriptor(c->cd);
    rn_cuda_free(d, c->wk);
    rn_cuda_free(d, c->in);
    rn_cuda_free(d, c->bias);
    free(c);
}

int rn_cuda_conv_create(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err)
{
    *out = NULL;
    rn_cuda_device *d = rn_cuda(dev);
    if (rn_conv_shape_check(s, err)) return -1;
    if (!dev->ops->supports(dev, s->compute, s->act))
        return rn_err_set(err, "device %s: convs compute in fp32, bf16 or fp16 with fp32 activations or activations "
                               "of their own type", d->name);
    if (s->algo != RN_ALGO_DIRECT)
        return rn_err_set(err, "device %s: picks cuDNN's algorithm by measurement; it has no %s choice", d->name,
                          s->algo == RN_ALGO_WINOGRAD ? "Winograd" : "other");
    if (s->epilogue && (!s->forward_only || !(s->epilogue & RN_EPI_BIAS) || (s->transposed && (s->epilogue & RN_EPI_SUM))))
        return rn_err_set(err, "device %s: a fused conv needs forward_only and a bias (a sum only on a Conv2d)", d->name);
    cuda_conv *c = calloc(1, sizeof *c);
    if (!c) return rn_err_set(err, "device %s: out of memory", d->name);
    c->base = (rn_conv){.s = *s, .dev = dev};
    c->ct = compute_type(s);
    c->mixed = c->ct != s->act;
    /* cuDNN's fused path: a Conv2d with a ReLU (with IDENTITY cuDNN takes one algorithm only) in its own type;
     * RN_CUDA_FUSED=0 leaves every fused conv to conv + rn_cuda_bias_add_relu */
    const char *fz = getenv("RN_CUDA_FUSED");
    c->fuse = (s->epilogue & RN_EPI_RELU) && !s->transposed && !c->mixed && !(fz && !strcmp(fz, "0"));
    c->d0 = s->transposed ? s->ic : s->oc;
    c->d1 = s->transposed ? s->oc : s->ic;
    c->d1pad = s->src_plain ? (s->ic + 7) / 8 * 8 : c->d1;
    if (describe(c, err) || buffers(d, c, err) || choose(d, c, err) || workspace(d, c, err)) {
        rn_cuda_conv_destroy(dev, &c->base);
        return -1;
    }
    *out = &c->base;
    return 0;
}

void rn_cuda_conv_set_weights(rn_device *dev, rn_conv *conv, const float *w)
{
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    const rn_conv_shape *s = &conv->s;
    rn_cuda_weight_to_krsc(&d->k, c->wk, c->ct, w, NULL, s->transposed, c->d0, c->d1, s->kh, s->kw, c->d1pad);
    rn_cuda_launched(d, "conv_set_weights");
}

void rn_cuda_conv_set_weights_folded(rn_device *dev, rn_conv *conv, const float *w, const float *scale,
                                     const float *bias)
{
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    const rn_conv_shape *s = &conv->s;
    RN_ASSERT(s->epilogue);
    rn_cuda_weight_to_krsc(&d->k, c->wk, c->ct, w, scale, s->transposed, c->d0, c->d1, s->kh, s->kw, c->d1pad);
    rn_cuda_launched(d, "conv_set_weights_folded");
    RN_CUDA_CHECK(cudaMemcpyAsync(c->bias, bias, (size_t)s->oc * sizeof(float), cudaMemcpyDeviceToDevice, d->stream));
}

/* Elements of cuDNN's x and y of c (see the top). */
static size_t x_elems(const rn_conv_shape *s)
{
    return s->transposed ? (size_t)s->n * s->oc * s->oh * s->ow : (size_t)s->n * s->ic * s->ih * s->iw;
}

static size_t y_elems(const rn_conv_shape *s)
{
    return s->transposed ? (size_t)s->n * s->ic * s->ih * s->iw : (size_t)s->n * s->oc * s->oh * s->ow;
}

/* An fp32 input of a mixed conv cast into buf (its compute type); else src as it is. */
static const void *cast_in(rn_cuda_device *d, const cuda_conv *c, void *buf, const void *src, size_t n)
{
    if (!c->mixed) return src;
    rn_cuda_cast_f32(&d->k, buf, c->ct, src, n);
    rn_cuda_launched(d, "conv (the input's cast to the compute type)");
    return buf;
}

/* cuDNN's forward: y = conv(x); x in the compute type already when x_ct. */
static void run_fwd(rn_cuda_device *d, cuda_conv *c, void *y, const void *x, int x_ct)
{
    const void *xc = x_ct ? x : cast_in(d, c, d->mx, x, x_elems(&c->base.s));
    void *yc = c->mixed ? d->my : y;
    RN_CUDNN_CHECK(cudnnSetConvolutionMathType(c->cd, c->a.math[0]));
    RN_CUDNN_CHECK(cudnnConvolutionForward(d->cudnn, &ONE, c->xd, xc, c->wd, c->wk, c->cd,
                                           (cudnnConvolutionFwdAlgo_t)c->a.algo[0], d->workspace, d->ws_bytes, &ZERO,
                                           c->yd, yc));
    if (c->mixed) RN_CUDNN_CHECK(cudnnTransformTensor(d->cudnn, &ONE, c->yd, yc, &ZERO, c->ya, y));
}

/* cuDNN's backward-data: dx = conv^T(dy). */
static void run_bwd_data(rn_cuda_device *d, cuda_conv *c, void *dx, const void *dy)
{
    const void *dyc = cast_in(d, c, d->my, dy, y_elems(&c->base.s));
    void *dxc = c->mixed ? d->mx : dx;
    RN_CUDNN_CHECK(cudnnSetConvolutionMathType(c->cd, c->a.math[1]));
    RN_CUDNN_CHECK(cudnnConvolutionBackwardData(d->cudnn, &ONE, c->wd, c->wk, c->yd, dyc, c->cd,
                                                (cudnnConvolutionBwdDataAlgo_t)c->a.algo[1], d->workspace, d->ws_bytes,
                                                &ZERO, c->xd, dxc));
    if (c->mixed) RN_CUDNN_CHECK(cudnnTransformTensor(d->cudnn, &ONE, c->xd, dxc, &ZERO, c->xa, dx));
}

/* The conv's own forward into dst (an act of the output shape). */
static void forward(rn_cuda_device *d, cuda_conv *c, void *dst, const void *src)
{
    const rn_conv_shape *s = &c->base.s;
    if (s->src_plain) {
        rn_cuda_act_from_nchw(&d->k, c->in, c->ct, c->d1pad, src, s->n, s->ic, s->ih, s->iw);
        rn_cuda_launched(d, "conv_forward (the input's conversion)");
    }
    if (s->transposed) run_bwd_data(d, c, dst, src);
    else run_fwd(d, c, dst, s->src_plain ? c->in : src, s->src_plain);
}

void rn_cuda_conv_forward(rn_device *dev, rn_conv *conv, void *dst, const void *src)
{
    rn_cuda_device *d = rn_cuda(dev);
    RN_ASSERT(!conv->s.epilogue);
    forward(d, (cuda_conv *)conv, dst, src);
    rn_cuda_launched(d, "conv_forward");
}

/* dst = ReLU(conv(src) + bias (+ res)) by cuDNN in one pass, rounded once; 0, or -1 (nothing written) where
 * cuDNN cannot run this conv so (its status says so at the call: c->fuse is then cleared). Not in place:
 * with an algorithm that runs the conv first cuDNN would overwrite res before reading it. */
static int fused_cudnn(rn_cuda_device *d, cuda_conv *c, void *dst, const void *src, const void *res)
{
    const rn_conv_shape *s = &c->base.s;
    if (!c->fuse || (res && res == dst)) return -1;
    if (s->src_plain) {
        rn_cuda_act_from_nchw(&d->k, c->in, c->ct, c->d1pad, src, s->n, s->ic, s->ih, s->iw);
        rn_cuda_launched(d, "conv_forward_fused (the input's conversion)");
        src = c->in;
    }
    RN_CUDNN_CHECK(cudnnSetConvolutionMathType(c->cd, c->a.math[0]));
    cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
        d->cudnn, &ONE, c->xd, src, c->wd, c->wk, c->cd, (cudnnConvolutionFwdAlgo_t)c->a.algo[0], d->workspace,
        d->ws_bytes, res ? &ONE : &ZERO, c->yd, res ? res : dst, c->bd, c->bias, c->ad, c->yd, dst);
    if (st == CUDNN_STATUS_SUCCESS) return 0;
    /* any NOT_SUPPORTED_* or BAD_PARAM_* (the H200 says NOT_SUPPORTED_DATA_TYPE for bf16): the kernel path */
    if (CUDNN_STATUS_CATEGORY(st) != CUDNN_STATUS_NOT_SUPPORTED && CUDNN_STATUS_CATEGORY(st) != CUDNN_STATUS_BAD_PARAM)
        RN_CUDNN_CHECK(st);
    c->fuse = 0;
    return -1;
}

void rn_cuda_conv_forward_fused(rn_device *dev, rn_conv *conv, void *dst, const void *src, const void *res)
{
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    const rn_conv_shape *s = &conv->s;
    RN_ASSERT(s->epilogue && !res == !(s->epilogue & RN_EPI_SUM));
    if (!fused_cudnn(d, c, dst, src, res)) {
        rn_cuda_launched(d, "conv_forward_fused");
        return;
    }
    forward(d, c, d->tmp, src);
    rn_act_shape a = {.n = s->n, .c = s->oc, .h = s->oh, .w = s->ow, .type = s->act};
    rn_cuda_bias_add_relu(&d->k, dst, d->tmp, c->bias, res, (s->epilogue & RN_EPI_RELU) != 0, &a);
    rn_cuda_launched(d, "conv_forward_fused");
}

void rn_cuda_conv_backward_data(rn_device *dev, rn_conv *conv, void *diff_src, const void *diff_dst)
{
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    RN_ASSERT(!conv->s.src_plain && !conv->s.no_bwd_data && !conv->s.forward_only);
    if (conv->s.transposed) run_fwd(d, c, diff_src, diff_dst, 0);
    else run_bwd_data(d, c, diff_src, diff_dst);
    rn_cuda_launched(d, "conv_backward_data");
}

void rn_cuda_conv_backward_weights(rn_device *dev, rn_conv *conv, float *diff_w, const void *src, const void *diff_dst)
{
    rn_cuda_device *d = rn_cuda(dev);
    cuda_conv *c = (cuda_conv *)conv;
    const rn_conv_shape *s = &conv->s;
    RN_ASSERT(!s->forward_only);
    const void *x = s->src_plain ? c->in : cast_in(d, c, d->mx, s->transposed ? diff_dst : src, x_elems(s));
    const void *dy = cast_in(d, c, d->my, s->transposed ? src : diff_dst, y_elems(s));
    /* a 16-bit weight gradient is formed unscaled (nn/kernel_math.h: rn_km_wgrad_alpha) */
    float scale = c->ct == RN_NUM_F32 ? 1.0f : conv->grad_scale, alpha = rn_km_wgrad_alpha(scale);
    RN_CUDNN_CHECK(cudnnSetConvolutionMathType(c->cd, c->a.math[2]));
    RN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(d->cudnn, &alpha, c->xd, x, c->yd, dy, c->cd,
                                                  (cudnnConvolutionBwdFilterAlgo_t)c->a.algo[2], d->workspace,
                                                  d->ws_bytes, &ZERO, c->wd, d->dw));
    rn_cuda_weight_grad_add(&d->k, diff_w, d->dw, c->ct, scale, c->d0, c->d1, s->kh, s->kw, c->d1pad);
    rn_cuda_launched(d, "conv_backward_weights");
}

static const char *FWD_NAME[] = {"cudnn:fwd:implicit_gemm", "cudnn:fwd:implicit_precomp_gemm", "cudnn:fwd:gemm",
                                 "cudnn:fwd:direct", "cudnn:fwd:fft", "cudnn:fwd:fft_tiling", "cudnn:fwd:winograd",
                                 "cudnn:fwd:winograd_nonfused"};
static const char *BWD_DATA_NAME[] = {"cudnn:bwd_data:algo_0", "cudnn:bwd_data:algo_1", "cudnn:bwd_data:fft",
                                      "cudnn:bwd_data:fft_tiling", "cudnn:bwd_data:winograd",
                                      "cudnn:bwd_data:winograd_nonfused"};
static const char *BWD_FILTER_NAME[] = {"cudnn:bwd_filter:algo_0", "cudnn:bwd_filter:algo_1", "cudnn:bwd_filter:fft",
                                        "cudnn:bwd_filter:algo_3", "cudnn:bwd_filter:winograd",
                                        "cudnn:bwd_filter:winograd_nonfused", "cudnn:bwd_filter:fft_tiling"};

/* cuDNN's direction dir (0 fwd, 1 bwd-data, 2 bwd-filter), algorithm algo: a static name. */
static const char *algo_name(int dir, int algo)
{
    if (algo < 0) return "none";
    if (dir == 0) return algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT ? FWD_NAME[algo] : "cudnn:fwd";
    if (dir == 1) return algo < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT ? BWD_DATA_NAME[algo] : "cudnn:bwd_data";
    return algo < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT ? BWD_FILTER_NAME[algo] : "cudnn:bwd_filter";
}

const char *rn_cuda_conv_impl_name(rn_device *dev, const rn_conv *conv, int direction)
{
    (void)dev;
    const cuda_conv *c = (const cuda_conv *)conv;
    int dir = direction == 2 ? 2 : conv->s.transposed ? 1 - direction : direction;
    return algo_name(dir, direction >= 0 && direction <= 2 ? c->a.algo[dir] : -1);
}

void rn_cuda_conv_release(rn_cuda_device *d)
{
    rn_cuda_free(d, d->tmp);
    rn_cuda_free(d, d->mx);
    rn_cuda_free(d, d->my);
    rn_cuda_free(d, d->dw);
    d->tmp = d->mx = d->my = d->dw = NULL;
    d->tmp_bytes = d->mx_bytes = d->my_bytes = d->dw_bytes = 0;
    free(d->algos);
    d->algos = NULL;
    d->nalgos = d->cap_algos = 0;
}
