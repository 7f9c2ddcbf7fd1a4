/* Mixed precision, loss scaling, profiler, autotune, lr scaling and core
 * binding: unit tests with hand-worked values, plus the model checks (bf16
 * forward against fp32, injected overflow, quantised k and targets).
 * RN_TEST_CPU_ONLY: runs on the "cpu" device (bf16, oneDNN's staging and
 * algorithms); built only with it (Makefile). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/affinity.h"
#include "core/profile.h"
#include "nn/autotune.h"
#include "nn/model.h"
#include "nn/precision.h"
#include "optim/loss_scale.h"
#include "optim/lr_scale.h"
#include "train/step.h"
#include "train/tuning.h"

#define NB 2
#define SZ 128

static rn_device *cpu_dev; /* the "cpu" device, for the unit tests of device ops */

static void test_policy(void)
{
    rn_precision id;
    rn_err err = {{0}};
    RN_CHECK(!rn_precision_parse("bf16", RN_PREC_ALL, &id, &err) && id == RN_PREC_BF16, "parse bf16");
    RN_CHECK(!rn_precision_parse("bf16-o2", RN_PREC_ALL, &id, &err) && id == RN_PREC_BF16_O2, "parse bf16-o2");
    RN_CHECK(!rn_precision_parse("fp16-o2", RN_PREC_ALL, &id, &err) && id == RN_PREC_FP16_O2, "parse fp16-o2");
    RN_CHECK(!rn_precision_parse(NULL, RN_PREC_INFER, &id, &err) && id == RN_PREC_FP32, "NULL: fp32");
    RN_CHECK(rn_precision_parse("fp8", RN_PREC_ALL, &id, &err) &&
                 !strcmp(err.msg, "precision 'fp8': expected fp32, bf16, bf16-o2, fp16 or fp16-o2"),
             "bad precision named: %s", err.msg);
    /* the inference commands' set: one message, listing what they take */
    RN_CHECK(!rn_precision_parse("bf16", RN_PREC_INFER, &id, &err) && id == RN_PREC_BF16, "infer: bf16");
    RN_CHECK(!rn_precision_parse("int8", RN_PREC_INFER, &id, &err) && id == RN_PREC_INT8, "infer: int8");
    RN_CHECK(rn_precision_parse("int8", RN_PREC_ALL, &id, &err), "training refuses int8: %s", err.msg);
    const char *not_infer[] = {"bf16-o2", "fp16", "fp16-o2", "BF16", ""};
    for (size_t i = 0; i < sizeof not_infer / sizeof not_infer[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "precision '%s': expected fp32, bf16 or int8", not_infer[i]);
        id = RN_PREC_COUNT;
        RN_CHECK(rn_precision_parse(not_infer[i], RN_PREC_INFER, &id, &err) && !strcmp(err.msg, want) &&
                     id == RN_PREC_COUNT,
                 "infer refuses '%s': %s", not_infer[i], err.msg);
    }
    RN_CHECK(rn_precision_parse("fp32", 1u << RN_PREC_BF16, &id, &err) &&
                 !strcmp(err.msg, "precision 'fp32': expected bf16"),
             "a set of one: %s", err.msg);
    for (int i = 0; i < RN_PREC_COUNT; i++) {
        const rn_policy *p = rn_policy_get((rn_precision)i);
        RN_CHECK(p->master == RN_NUM_F32 && p->norm == RN_NUM_F32, "%s keeps master weights and BN in f32", p->name);
    }
    RN_CHECK(!rn_policy_check(rn_policy_get(RN_PREC_BF16), cpu_dev, &err), "bf16 on CPU");
    RN_CHECK(!rn_policy_check_device(rn_policy_get(RN_PREC_BF16_O2), "cpu", &err), "bf16-o2 on CPU");
    RN_CHECK(rn_policy_check(rn_policy_get(RN_PREC_FP16), cpu_dev, &err) && strstr(err.msg, "CUDA"),
             "fp16 rejected on CPU: %s", err.msg);
    RN_CHECK(rn_policy_check_device(rn_policy_get(RN_PREC_FP32), "tpu", &err) && strstr(err.msg, "'tpu'"),
             "unknown device named: %s", err.msg);
    RN_CHECK(rn_policy_get(RN_PREC_FP16)->conv_compute == RN_NUM_F16 && strstr(rn_policy_get(RN_PREC_FP16)->missing, "CUDA"),
             "fp16 described for CUDA");
    RN_CHECK(rn_policy_get(RN_PREC_FP16)->default_scaling == RN_SCALE_DYNAMIC, "fp16 defaults to dynamic scaling");
    RN_CHECK(rn_policy_check(rn_policy_get(RN_PREC_FP16_O2), cpu_dev, &err) && strstr(err.msg, "CUDA"),
             "fp16-o2 rejected on CPU: %s", err.msg);
    rn_model_opts o16 = {0};
    rn_policy_apply(rn_policy_get(RN_PREC_FP16_O2), &o16);
    RN_CHECK(o16.compute == RN_NUM_F16 && o16.act == RN_NUM_F16, "fp16-o2: fp16 compute and fp16 activations");

    rn_model_opts o = {0};
    rn_policy_apply(rn_policy_get(RN_PREC_BF16), &o);
    RN_CHECK(o.compute == RN_NUM_BF16, "bf16 -> bf16 conv compute");
    rn_policy_apply(rn_policy_get(RN_PREC_FP32), &o);
    RN_CHECK(o.compute == RN_NUM_F32, "fp32 -> f32 conv compute");
    rn_conv_shape s = {.n = 1, .ic = 16, .ih = 8, .iw = 8, .oc = 16, .oh = 8, .ow = 8, .kh = 3, .kw = 3,
                       .sh = 1, .sw = 1, .ph = 1, .pw = 1, .compute = RN_NUM_F16};
    rn_conv *c = NULL;
    RN_CHECK(rn_conv_create(&c, cpu_dev, &s, &err) && strstr(err.msg, "CUDA") && !c, "oneDNN rejects f16: %s", err.msg);
}

/* unscale_check's flag on cpu (host memory: the flag is a host int). */
static int unscale_ok(float *g, size_t n, float inv_scale)
{
    int finite = -1;
    rn_grad_unscale_check(cpu_dev, g, n, inv_scale, &finite);
    return finite;
}

static void test_unscale_check(void)
{
    enum { N = 1003 };
    float *g = malloc(N * sizeof *g);
    for (int i = 0; i < N; i++) g[i] = (float)(i - 500) * 4.0f;
    RN_CHECK(unscale_ok(g, N, 0.25f) == 1, "finite buffer");
    int exact = 1;
    for (int i = 0; i < N; i++) exact &= g[i] == (float)(i - 500);
    RN_CHECK(exact, "unscaled by 1/4 exactly");
    const float bad[3] = {INFINITY, -INFINITY, NAN};
    const int where[3] = {N - 1, 0, 517};
    for (int b = 0; b < 3; b++) {
        g[where[b]] = bad[b];
        RN_CHECK(unscale_ok(g, N, 1.0f) == 0, "non-finite %d at %d found (scale 1)", b, where[b]);
        RN_CHECK(unscale_ok(g, N, 0.5f) == 0, "non-finite %d at %d found (scale 2)", b, where[b]);
        g[where[b]] = 1.0f;
    }
    g[3] = 3.0e38f;
    RN_CHECK(unscale_ok(g, N, 1.0f) == 1, "large finite is finite");
    free(g);
}

/* Hand-worked: window 3, start 8, bounds [1, 32]. Outcomes and the scale after each step. */
static void test_scaler_trace(void)
{
    rn_loss_scaler s = rn_loss_scaler_dynamic();
    RN_CHECK(s.scale == 65536.0f && s.window == 2000, "defaults: 2^16, window 2000");
    s.scale = 8, s.window = 3, s.max_scale = 32, s.min_scale = 1;
    const int ok[] = {1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
    const float want[] = {8, 8, 16, 8, 8, 8, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 16, 8, 4, 2, 1, 1};
    const long want_skipped[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 4, 5, 6, 7, 8};
    int n = (int)(sizeof ok / sizeof ok[0]);
    for (int i = 0; i < n; i++) {
        int r = rn_loss_scaler_update(&s, ok[i]);
        RN_CHECK(r == ok[i], "step %d applied = %d", i, r);
        RN_CHECK(s.scale == want[i], "step %d: scale %g, want %g", i, (double)s.scale, (double)want[i]);
        RN_CHECK(s.skipped == want_skipped[i], "step %d: skipped %ld, want %ld", i, s.skipped, want_skipped[i]);
    }
    rn_loss_scaler st = rn_loss_scaler_static(128);
    rn_loss_scaler_update(&st, 0);
    for (int i = 0; i < 5000; i++) rn_loss_scaler_update(&st, 1);
    RN_CHECK(st.scale == 128 && st.skipped == 1, "static scale never moves");
    rn_err err = {{0}};
    RN_CHECK(!rn_loss_scale_parse("128", &st, &err) && !st.dynamic && st.scale == 128, "parse 128");
    RN_CHECK(!rn_loss_scale_parse("dynamic", &st, &err) && st.dynamic, "parse dynamic");
    RN_CHECK(rn_loss_scale_parse("-2", &st, &err) && strstr(err.msg, "-2"), "reject -2: %s", err.msg);
    RN_CHECK(rn_loss_scale_parse("12x", &st, &err), "reject 12x");
    RN_CHECK(rn_loss_scale_parse("inf", &st, &err), "reject inf");
    RN_CHECK(!rn_loss_scale_parse("dynamic:1024:3", &st, &err) && st.dynamic && st.scale == 1024 && st.window == 3 &&
                 st.max_scale == 16777216.0f, "parse dynamic:1024:3");
    RN_CHECK(!rn_loss_scale_parse("dynamic:0x1p100", &st, &err) && st.scale == 0x1p100f && st.max_scale == 0x1p100f &&
                 st.window == 2000, "parse dynamic:2^100: the maximum follows");
    const char *bad[] = {"dynamic:", "dynamic:0", "dynamic:8:0", "dynamic:8:", "dynamic:8:2x", "dynamicx", "8:2"};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++)
        RN_CHECK(rn_loss_scale_parse(bad[i], &st, &err), "reject %s", bad[i]);
    /* resume: a dynamic scaler takes over scale, clean steps and counts; a static one the counts only */
    rn_loss_scaler saved = rn_loss_scaler_dynamic(), d = rn_loss_scaler_dynamic(), fixed = rn_loss_scaler_static(4);
    saved.scale = 256, saved.clean = 7, saved.steps = 30, saved.skipped = 9, saved.last_skipped = 1;
    RN_CHECK(rn_loss_scaler_resume(&d, &saved) == 1 && d.scale == 256 && d.clean == 7 && d.steps == 30 &&
                 d.skipped == 9 && d.last_skipped == 1, "resume dynamic");
    RN_CHECK(rn_loss_scaler_resume(&fixed, &saved) == 0 && fixed.scale == 4 && fixed.steps == 30 && fixed.skipped == 9,
             "resume static: the configured scale stays");
    saved.scale = 0x1p30f, d = rn_loss_scaler_dynamic();
    RN_CHECK(rn_loss_scaler_resume(&d, &saved) == 1 && d.scale == d.max_scale, "resume holds the scale to its bounds");
}

/* The step's optimizer phase (train/step.c): unscale + check into the flag, Adam skipped on
 * the device when it says overflow, the scale updated and the count undone once it is read. */
static int scaled_adam(rn_loss_scaler *s, rn_adam *a, float *p, float *g, float *m, float *v, size_t n)
{
    int finite = -1;
    double sched[2];
    rn_grad_unscale_check(cpu_dev, g, n, 1.0f / s->scale, &finite);
    rn_adam_step(a, cpu_dev, p, g, m, v, n, sched, &finite);
    if (rn_loss_scaler_update(s, finite)) return 1;
    rn_adam_unstep(a);
    return 0;
}

/* Skipped steps leave weights, moments and the step count alone; applied
 * steps equal plain Adam on the unscaled gradients. */
static void test_scaled_adam(void)
{
    enum { N = 64 };
    float p[N], g[N], m[N], v[N], p2[N], g2[N], m2[N], v2[N];
    for (int i = 0; i < N; i++) p[i] = p2[i] = 0.01f * (float)i, m[i] = m2[i] = v[i] = v2[i] = 0;
    rn_adam a = rn_adam_default(1e-2), b = rn_adam_default(1e-2);
    rn_loss_scaler s = rn_loss_scaler_dynamic();
    s.window = 2;
    for (int step = 0; step < 6; step++) {
        int inject = step == 2;
        for (int i = 0; i < N; i++) {
            g2[i] = 0.1f * sinf((float)(i + 7 * step));
            g[i] = g2[i] * s.scale;
        }
        if (inject) g[N / 2] = INFINITY;
        float before[N], mb[N], vb[N];
        memcpy(before, p, sizeof p), memcpy(mb, m, sizeof m), memcpy(vb, v, sizeof v);
        float scale = s.scale;
        long steps = a.step;
        int applied = scaled_adam(&s, &a, p, g, m, v, N);
        if (inject) {
            RN_CHECK(!applied, "overflow step skipped");
            RN_CHECK(!memcmp(before, p, sizeof p) && !memcmp(mb, m, sizeof m) && !memcmp(vb, v, sizeof v),
                     "weights and moments untouched");
            RN_CHECK(a.step == steps, "Adam step count untouched");
            RN_CHECK(s.scale == scale / 2, "scale halved: %g", (double)s.scale);
        } else {
            double sched[2];
            rn_adam_step(&b, cpu_dev, p2, g2, m2, v2, N, sched, NULL);
            RN_CHECK(applied && !memcmp(p, p2, sizeof p), "step %d equals unscaled Adam", step);
        }
    }
    /* 2^16 -> 2^17 after steps 0-1 -> 2^16 at the overflow (step 2) -> 2^17 after steps 3-4 */
    RN_CHECK(s.scale == 131072.0f, "final scale 2^17: %g", (double)s.scale);
}

static void fill_params(rn_params *p)
{
    rn_rng rng;
    rn_rng_seed(&rng, 11);
    rn_params_init(p, &rng);
    for (int i = 0; i < p->n; i++) {
        float *d = rn_params_data(p, i);
        if (p->e[i].kind == RN_P_BN_W)
            for (size_t j = 0; j < p->e[i].numel; j++) d[j] = 0.5f + (float)rn_rng_uniform(&rng);
        if (p->e[i].kind == RN_P_BN_B)
            for (size_t j = 0; j < p->e[i].numel; j++) d[j] = 0.2f * (float)rn_rng_normal(&rng);
        if (p->e[i].kind == RN_P_HEADW)
            for (size_t j = 0; j < p->e[i].numel; j++) d[j] *= 100.0f;
    }
}

typedef struct inputs {
    float x[NB * 3 * SZ * SZ], k[NB], t[NB * 3], v[NB], d[NB];
} inputs;

static void fill_inputs(inputs *in)
{
    rn_rng rng;
    rn_rng_seed(&rng, 5);
    for (size_t i = 0; i < sizeof in->x / sizeof in->x[0]; i++) in->x[i] = (float)rn_rng_normal(&rng);
    for (int n = 0; n < NB; n++) {
        in->k[n] = 3000.0f + 2000.0f * (float)rn_rng_uniform(&rng) + 0.37f;
        in->t[3 * n] = 3.3f + 9.0f * (float)rn_rng_uniform(&rng);
        in->t[3 * n + 1] = 2.6f + 10.0f * (float)rn_rng_uniform(&rng);
        in->t[3 * n + 2] = 4000.0f + 1000.0f * (float)rn_rng_uniform(&rng);
        in->v[n] = in->d[n] = 1.0f;
    }
}

static int make_model_n(rn_model *m, rn_params *p, int n, rn_numtype c, rn_numtype act, rn_profile *prof)
{
    rn_err err = {{0}};
    rn_model_opts o = {.threads = 0, .compute = c, .act = act};
    if (rn_model_create(m, p, n, SZ, SZ, &o, &err)) {
        fprintf(stderr, "model: %s\n", err.msg);
        return -1;
    }
    m->prof = prof;
    rn_model_sync_weights(m);
    return 0;
}

static int make_model_act(rn_model *m, rn_params *p, rn_numtype c, rn_numtype act, rn_profile *prof)
{
    return make_model_n(m, p, NB, c, act, prof);
}

static int make_model(rn_model *m, rn_params *p, rn_numtype c, rn_profile *prof)
{
    return make_model_act(m, p, c, RN_NUM_F32, prof);
}

static double rel_err(const float *a, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]), den += (double)ref[i] * ref[i];
    return sqrt(num / (den > 0 ? den : 1));
}

/* bf16 forward vs fp32 (ResNet-18, 128x128, batch 2, train-mode BN): stated
 * bounds, relative L2: 1e-2 for each output coordinate x, y, depth; 1.5e-2
 * for the pooled backbone features (measured: 8.7e-3 features, 7.4e-3 depth;
 * at 64x64 BN over 2x2 maps amplifies it to 1.7e-2). */
static void test_bf16_forward(rn_params *p, const inputs *in)
{
    rn_model a, b;
    if (make_model(&a, p, RN_NUM_F32, NULL) || make_model(&b, p, RN_NUM_BF16, NULL)) {
        RN_CHECK(0, "models");
        return;
    }
    rn_model_forward(&a, in->x, in->k, 1);
    rn_model_forward(&b, in->x, in->k, 1);
    (void)rn_model_coords(&a), (void)rn_model_coords(&b);
    double ef = rel_err(b.feat, a.feat, (size_t)NB * p->feat_ch);
    printf("bf16 vs fp32: features rel %.3g", ef);
    RN_CHECK(ef <= 1.5e-2 && ef > 1e-6, "bf16 features within 1.5e-2 of fp32 (and not bit-equal): %.3g", ef);
    for (int c = 0; c < 3; c++) {
        float ra[NB], rb[NB];
        for (int n = 0; n < NB; n++) ra[n] = a.coord[3 * n + c], rb[n] = b.coord[3 * n + c];
        double e = rel_err(rb, ra, NB);
        printf(", coord %d rel %.3g", c, e);
        RN_CHECK(e <= 1e-2, "bf16 coord %d within 1e-2 of fp32: %.3g", c, e);
    }
    printf("\n");
    rn_model_destroy(&a);
    rn_model_destroy(&b);
}

/* Worst and median relative L2 error over the parameter tensors of the
 * gradients g against ref (tensors with a zero reference skipped). */
static void grad_errors(const rn_params *p, const float *g, const float *ref, double *worst, double *median)
{
    double *e = malloc((size_t)p->n * sizeof *e);
    int n = 0;
    for (int i = 0; i < p->n; i++) {
        /* (running statistics: their offset is not into grad; xy_layer.bias: exactly zero, noise over noise) */
        if (!rn_param_trainable(p->e[i].kind) || strstr(p->e[i].name, "xy_layer.bias")) continue;
        const float *r = ref + p->e[i].offset;
        double den = 0;
        for (size_t j = 0; j < p->e[i].numel; j++) den += (double)r[j] * r[j];
        if (den > 0) e[n++] = rel_err(g + p->e[i].offset, r, p->e[i].numel);
    }
    *worst = 0;
    for (int i = 0; i < n; i++) *worst = e[i] > *worst ? e[i] : *worst;
    for (int i = 1; i < n; i++) /* insertion sort: ~60 tensors */
        for (int j = i; j > 0 && e[j] < e[j - 1]; j--) {
            double t = e[j];
            e[j] = e[j - 1], e[j - 1] = t;
        }
    *median = n ? e[n / 2] : 0;
    free(e);
}

/* Parameter tensors whose O2 gradient g2 is further from fp32 (ref) than
 * O2_TENSOR_FACTOR x O1's gradient g1 of the same tensor + O2_TENSOR_SLACK,
 * or than O2_TENSOR_CAP: their count; the first one's index in *at. (A zero,
 * a sign-flipped or a doubled tensor has error >= 1 > the cap.) The exactly-zero
 * gradient of xy_layer.bias is left out: its error is noise over noise. */
#define O2_TENSOR_FACTOR 2.0
#define O2_TENSOR_SLACK 0.05
#define O2_TENSOR_CAP 0.75
static int o2_tensors_beyond(const rn_params *p, const float *g2, const float *g1, const float *ref, int *at)
{
    int n = 0;
    *at = -1;
    for (int i = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (!rn_param_trainable(e->kind) || strstr(e->name, "xy_layer.bias")) continue;
        double e1 = rel_err(g1 + e->offset, ref + e->offset, e->numel);
        double e2 = rel_err(g2 + e->offset, ref + e->offset, e->numel);
        if (e2 <= O2_TENSOR_FACTOR * e1 + O2_TENSOR_SLACK && e2 <= O2_TENSOR_CAP) continue;
        if (!n++) *at = i;
        fprintf(stderr, "  %s: O2 %.3g from fp32, O1 %.3g\n", e->name, e2, e1);
    }
    return n;
}

/* One train-mode forward + backward of compute c / activations act; the
 * gradients are copied to g. Returns the loss, or NAN. */
static double grads_of(rn_params *p, const inputs *in, rn_numtype c, rn_numtype act, float *g, float *feat)
{
    rn_model m;
    if (make_model_act(&m, p, c, act, NULL)) return NAN;
    rn_model_zero_grad(&m);
    rn_model_forward(&m, in->x, in->k, 1);
    rn_model_backward(&m, in->t, in->v, in->d);
    double loss = rn_model_loss_read(&m);
    memcpy(g, p->grad, p->n_param * sizeof *g);
    memcpy(feat, m.feat, (size_t)NB * p->feat_ch * sizeof *feat);
    rn_model_destroy(&m);
    return loss;
}

/* bf16-o2 (activations stored in bf16 end to end) against fp32, next to
 * bf16 O1 (ResNet-18, 128x128, batch 2, train mode). Stated bounds, relative
 * L2: features 3e-2, loss 1e-2. Gradients through train-mode BN at batch 2
 * (layer4 normalises 32 values) are so ill-conditioned here that O1 itself
 * is 0.35 off fp32 in the median tensor (and stays so at batch 8 and 16, and
 * with targets on both sides of the predictions: no batch here makes it well
 * conditioned), so O2 is held to O1: its median and worst per-tensor errors
 * at most 2x O1's (measured: the printed line), and each tensor by itself
 * (o2_tensors_beyond), which a zeroed tensor fails. */
static void test_o2(rn_params *p, const inputs *in)
{
    size_t nf = (size_t)NB * p->feat_ch;
    float *g32 = malloc(p->n_param * sizeof *g32), *g1 = malloc(p->n_param * sizeof *g1);
    float *g2 = malloc(p->n_param * sizeof *g2), *f32 = malloc(nf * 4), *f1 = malloc(nf * 4), *f2 = malloc(nf * 4);
    double l32 = grads_of(p, in, RN_NUM_F32, RN_NUM_F32, g32, f32);
    double l1 = grads_of(p, in, RN_NUM_BF16, RN_NUM_F32, g1, f1);
    double l2 = grads_of(p, in, RN_NUM_BF16, RN_NUM_BF16, g2, f2);
    RN_CHECK(isfinite(l32) && isfinite(l1) && isfinite(l2), "o2 models: %g %g %g", l32, l1, l2);
    double w1, m1, w2, m2;
    grad_errors(p, g1, g32, &w1, &m1);
    grad_errors(p, g2, g32, &w2, &m2);
    double ef1 = rel_err(f1, f32, nf), ef2 = rel_err(f2, f32, nf);
    printf("vs fp32: features O1 %.3g O2 %.3g; loss O1 %.3g O2 %.3g; gradients median O1 %.3g O2 %.3g, "
           "worst O1 %.3g O2 %.3g\n", ef1, ef2, fabs(l1 - l32) / l32, fabs(l2 - l32) / l32, m1, m2, w1, w2);
    RN_CHECK(ef2 <= 3e-2 && ef2 > ef1, "O2 features within 3e-2 of fp32, and further than O1's: %.3g", ef2);
    RN_CHECK(fabs(l2 - l32) <= 1e-2 * l32, "O2 loss within 1e-2 of fp32");
    RN_CHECK(m2 <= 2 * m1 && w2 <= 2 * w1, "O2 gradient errors (median %.3g, worst %.3g) within 2x O1's (%.3g, %.3g)",
             m2, w2, m1, w1);
    RN_CHECK(m2 > 0 && m1 > 0, "gradients not bit-equal to fp32 (the comparison is not vacuous)");
    int at, n = o2_tensors_beyond(p, g2, g1, g32, &at);
    RN_CHECK(n == 0, "every O2 gradient tensor within %g x O1's error + %g and %g of fp32 (%d beyond)",
             O2_TENSOR_FACTOR, O2_TENSOR_SLACK, O2_TENSOR_CAP, n);
    const rn_param_entry *z = &p->e[rn_params_find(p, "backbone.layer3.0.conv1.weight")];
    memset(g2 + z->offset, 0, z->numel * sizeof *g2);
    RN_CHECK(o2_tensors_beyond(p, g2, g1, g32, &at) == n + 1 && at >= 0, "a zeroed O2 %s fails that check", z->name);
    free(g32), free(g1), free(g2), free(f32), free(f1), free(f2);
}

/* One training step as the commands run it (train/step.h) with the tuning's loss scaler:
 * backward at its scale, unscale + overflow check, Adam skipped on overflow. Returns 1 if
 * applied. */
static int scaled_step(rn_tuning *t, rn_model *m, rn_adam *opt, const inputs *in)
{
    rn_err err = {{0}};
    rn_step_ctl ctl = {.scaler = &t->scaler};
    rn_step_batch b = {in->x, in->k, in->t, in->v, in->d};
    double loss;
    int applied = 0;
    if (rn_train_step(m, opt, &b, NULL, &ctl, NULL, &loss, &applied, &err)) RN_CHECK(0, "step: %s", err.msg);
    return applied;
}

/* Loss scaling by a power of two is exact: unscaled gradients equal the
 * unscaled run's bit for bit. A huge scale overflows: the step is skipped,
 * weights and moments stay, the scale halves. */
static void test_model_scaling(rn_params *p, const inputs *in)
{
    rn_model m;
    if (make_model(&m, p, RN_NUM_F32, NULL)) return;
    float *g1 = malloc(p->n_param * sizeof *g1);
    rn_model_zero_grad(&m);
    rn_model_forward(&m, in->x, in->k, 1);
    rn_model_backward(&m, in->t, in->v, in->d);
    double l1 = rn_model_loss_read(&m);
    memcpy(g1, p->grad, p->n_param * sizeof *g1);
    m.loss_scale = 1024.0f;
    rn_model_zero_grad(&m);
    rn_model_forward(&m, in->x, in->k, 1);
    rn_model_backward(&m, in->t, in->v, in->d);
    double l2 = rn_model_loss_read(&m);
    RN_CHECK(l1 == l2, "loss is reported unscaled");
    RN_CHECK(unscale_ok(p->grad, p->n_param, 1.0f / 1024.0f) == 1, "finite at 1024");

    RN_CHECK(!memcmp(g1, p->grad, p->n_param * sizeof *g1), "scale 1024 then unscale == unscaled gradients");
    free(g1);

    rn_tuning_flags tf = {.loss_scale = "dynamic"};
    rn_tuning t;
    rn_err err = {{0}};
    RN_CHECK(!rn_tuning_setup(&t, &tf, 0, &err), "tuning: %s", err.msg);
    t.scaler.scale = 0x1p127f;
    float *w0 = malloc(p->n_param * sizeof *w0), *m0 = malloc(p->n_param * sizeof *m0);
    memcpy(w0, p->param, p->n_param * sizeof *w0);
    memcpy(m0, p->m, p->n_param * sizeof *m0);
    rn_adam opt = rn_adam_default(1e-3);
    rn_tuning_attach(&t, &m);
    int applied = scaled_step(&t, &m, &opt, in);
    RN_CHECK(!applied && t.scaler.skipped == 1, "2^127 overflows: step skipped");
    RN_CHECK(!memcmp(w0, p->param, p->n_param * sizeof *w0) && !memcmp(m0, p->m, p->n_param * sizeof *m0),
             "weights and moments unchanged after the overflow");
    RN_CHECK(t.scaler.scale == 0x1p126f && opt.step == 0, "scale halved to 2^126, no Adam step");
    t.scaler.scale = 65536.0f;
    applied = scaled_step(&t, &m, &opt, in);
    RN_CHECK(applied && opt.step == 1 && memcmp(w0, p->param, p->n_param * sizeof *w0),
             "2^16 is clean: weights updated");
    memcpy(p->param, w0, p->n_param * sizeof *w0);
    memset(p->m, 0, p->n_param * sizeof *p->m);
    memset(p->v, 0, p->n_param * sizeof *p->v);
    rn_tuning_free(&t);
    free(w0), free(m0);
    rn_model_destroy(&m);
}

/* k in the model stays fp32: depth is exactly linear in k, so k + 0.5
 * scales depth by (k + 0.5) / k; an integer cast anywhere on the path would
 * make depth(k + 0.5) equal depth(k) or depth(k + 1). */
static void test_k_not_quantised(rn_params *p, const inputs *in)
{
    rn_model m;
    if (make_model(&m, p, RN_NUM_F32, NULL)) return;
    inputs q = *in;
    for (int n = 0; n < NB; n++) q.k[n] = rintf(in->k[n]) + 0.5f;
    float d0[NB], base[NB];
    for (int n = 0; n < NB; n++) base[n] = rintf(in->k[n]);
    rn_model_forward(&m, in->x, base, 1);
    (void)rn_model_coords(&m);
    for (int n = 0; n < NB; n++) d0[n] = m.coord[3 * n + 2];
    rn_model_forward(&m, q.x, q.k, 1);
    (void)rn_model_coords(&m);

    for (int n = 0; n < NB; n++) {
        double want = (double)d0[n] * q.k[n] / base[n], got = m.coord[3 * n + 2];
        RN_CHECK(fabs(got - want) <= 4 * FLT_EPSILON * fabs(want), "depth(k+0.5) = depth(k) (k+0.5)/k: %.9g vs %.9g",
                 got, want);
    }
    rn_model_destroy(&m);
}

/* Quantising k (to integers) or the x, y targets (to whole output pixels)
 * worsens the result far beyond fp32 rounding. k: realistic values
 * sqrt(fx fy 2000^2 / area) over 1000 boxes; the depth error it causes at
 * 5 m, against the fp32 rounding of that depth. Targets: the x, y part of
 * the loss moves by a large fraction. (That the real path keeps them
 * unrounded, reader -> loader -> model, is tests/t_nocast.sh.) */
static void test_quantise(rn_params *p, const inputs *in)
{
    rn_rng rng;
    rn_rng_seed(&rng, 3);
    double err_mm = 0, noise_mm = 5000.0 * FLT_EPSILON / 2;
    for (int i = 0; i < 1000; i++) {
        double f = 1100 + 400 * rn_rng_uniform(&rng), side = 60 + 500 * rn_rng_uniform(&rng);
        float k = (float)sqrt(f * f * 2000.0 * 2000.0 / (side * side));
        float gamma = 5000.0f / k;
        err_mm += fabs((double)gamma * rintf(k) - (double)gamma * k) / 1000;
    }
    printf("rounding k: mean depth error %.4f mm at 5 m; fp32 rounding %.2g mm\n", err_mm, noise_mm);
    RN_CHECK(err_mm > 100 * noise_mm, "rounded k worsens depth by %.3g mm (> 100 x fp32's %.2g mm)", err_mm, noise_mm);
    rn_model m;
    if (make_model(&m, p, RN_NUM_F32, NULL)) return;
    inputs q = *in;
    for (int n = 0; n < NB; n++) q.d[n] = 0, q.t[3 * n] = rintf(in->t[3 * n]), q.t[3 * n + 1] = rintf(in->t[3 * n + 1]);
    rn_model_forward(&m, in->x, in->k, 1);
    double l0 = rn_model_loss(&m, in->t, in->v, q.d), lq = rn_model_loss(&m, q.t, in->v, q.d);
    double dl = fabs(lq - l0);
    printf("x, y loss %.6g, with integer targets %.6g\n", l0, lq);
    RN_CHECK(dl > 1e-2 * fabs(l0) && dl > 1e4 * FLT_EPSILON * fabs(l0), "rounding targets moves the x, y loss: %g -> %g",
             l0, lq);
    rn_model_destroy(&m);
}

static int is_leaf_span(const rn_profile *pr, size_t i)
{
    return i + 1 >= pr->n || pr->s[i + 1].depth <= pr->s[i].depth;
}

static void test_profile_model(rn_params *p, const inputs *in)
{
    rn_profile pr;
    rn_profile_init(&pr, 4096);
    rn_model m;
    if (make_model(&m, p, RN_NUM_F32, &pr)) return;
    rn_model_zero_grad(&m);
    double t0 = rn_prof_now();
    int sp = rn_prof_begin(&pr, "forward", "step", 0);
    rn_model_forward(&m, in->x, in->k, 1);
    rn_prof_end(&pr, sp);
    sp = rn_prof_begin(&pr, "backward", "step", 0);
    rn_model_backward(&m, in->t, in->v, in->d);
    rn_prof_end(&pr, sp);
    double wall = rn_prof_now() - t0;
    rn_profile_step_done(&pr);
    int missing = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->e[i].kind != RN_P_CONV && p->e[i].kind != RN_P_DECONV) continue;
        int f = 0, b = 0;
        for (size_t j = 0; j < pr.n; j++)
            if (pr.s[j].name == p->e[i].name) f |= !strcmp(pr.s[j].cat, "fwd"), b |= !strcmp(pr.s[j].cat, "bwd");
        missing += !(f && b);
    }
    RN_CHECK(missing == 0, "every conv layer has a forward and a backward span (%d missing)", missing);
    /* The spans lie inside the measured interval (same clock), so their sum
     * cannot exceed it; they cover it but for the code between spans, a few
     * per cent when idle, more when a busy machine deschedules us there: a
     * wide lower bound. */
    double top = rn_profile_top_seconds(&pr), leaf = rn_profile_leaf_seconds(&pr), eps = 1e-9 * (double)pr.n;
    RN_CHECK(leaf <= top + eps && top <= wall + eps, "spans (top %.4f s, leaf %.4f s) inside wall %.4f s", top, leaf,
             wall);
    RN_CHECK(top >= 0.7 * wall && leaf >= 0.7 * wall, "top %.4f s and leaf %.4f s spans cover 70 %% of wall %.4f s",
             top, leaf, wall);
    int nested = 1;
    for (size_t j = 0; j < pr.n; j++) nested &= pr.s[j].depth == 0 || !is_leaf_span(&pr, j) || pr.s[j].depth == 1;
    RN_CHECK(nested && pr.dropped == 0, "layer spans sit one level under the step spans");
    rn_model_destroy(&m);
    rn_profile_free(&pr);
}

static void busy(double s)
{
    double t = rn_prof_now();
    while (rn_prof_now() - t < s) {
    }
}

static void test_profile_unit(const char *dir)
{
    rn_profile pr;
    rn_profile_init(&pr, 3);
    int a = rn_prof_begin(&pr, "outer", "step", 0);
    int b = rn_prof_begin(&pr, "in\"ner", "fwd", 2e9);
    busy(0.01);
    rn_prof_end(&pr, b);
    int c = rn_prof_begin(&pr, "x", "bwd", 0);
    int d = rn_prof_begin(&pr, "dropped", "bwd", 0);
    rn_prof_end(&pr, d);
    rn_prof_end(&pr, c);
    rn_prof_end(&pr, a);
    rn_profile_step_done(&pr);
    RN_CHECK(pr.n == 3 && pr.dropped == 1 && d == -1 && pr.depth == 0, "capacity: 3 kept, 1 dropped");
    RN_CHECK(pr.s[1].depth == 1 && pr.s[2].depth == 1, "depths");
    double top = rn_profile_top_seconds(&pr), leaf = rn_profile_leaf_seconds(&pr);
    RN_CHECK(top >= 0.01 && leaf >= 0.01 && leaf <= top, "top %.4f >= leaf %.4f >= 10 ms", top, leaf);
    RN_CHECK(rn_prof_begin(NULL, "n", "c", 0) == -1, "NULL profile is a no-op");
    rn_prof_end(NULL, -1);
    char path[512];
    snprintf(path, sizeof path, "%s/unit.json", dir);
    rn_err err = {{0}};
    RN_CHECK(!rn_profile_write_chrome(&pr, path, &err), "write: %s", err.msg);
    FILE *f = fopen(path, "r");
    char buf[4096] = {0};
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    RN_CHECK(n > 0 && strstr(buf, "\"in\\\"ner\"") && strstr(buf, "\"dropped_spans\": 1"), "escaped name, drop count");
    snprintf(path, sizeof path, "%s/no/such/dir/x.json", dir);
    RN_CHECK(rn_profile_write_chrome(&pr, path, &err) && strstr(err.msg, "profile"), "unwritable path: %s", err.msg);
    rn_profile_free(&pr);
}

/* A fused inference conv (BN folded; bias, residual sum, ReLU as post-ops) is timed through its own
 * forward (it once hit the unfused forward's assert: `bench --mode infer --autotune` aborted), under
 * its own key; the chosen algorithm's output matches the direct one's (Winograd rounds differently). */
static void test_autotune_fused(rn_autotune *t, const char *path, rn_err *err)
{
    RN_CHECK(!rn_autotune_open(t, path, err) && t->n == 1, "reopen for the fused conv: %s", err->msg);
    t->iters = 1;
    rn_conv_shape s = {.n = 1, .ic = 32, .ih = 14, .iw = 14, .oc = 32, .oh = 14, .ow = 14, .kh = 3, .kw = 3, .sh = 1,
                       .sw = 1, .ph = 1, .pw = 1, .forward_only = 1, .epilogue = RN_EPI_BIAS | RN_EPI_SUM | RN_EPI_RELU};
    RN_CHECK(!rn_autotune_choose(t, cpu_dev, &s, err) && t->timed == 1 && t->n == 2 && t->e[1].ms[RN_ALGO_DIRECT] > 0,
             "fused conv timed under a key of its own: %s", err->msg);
    RN_CHECK(!rn_autotune_save(t, err), "save: %s", err->msg);
    rn_autotune_close(t);
    rn_conv_shape d = s;
    d.algo = RN_ALGO_DIRECT;
    size_t nx = 32 * 196, nw = 32 * 32 * 9;
    float *x = malloc(nx * 4), *r = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(32 * 4), *y[2];
    for (size_t i = 0; i < nx; i++) x[i] = sinf(0.37f * (float)i), r[i] = 0.5f * cosf(0.11f * (float)i);
    for (size_t i = 0; i < nw; i++) w[i] = 0.05f * sinf(0.91f * (float)i + 1.0f);
    for (int i = 0; i < 32; i++) b[i] = 0.01f * (float)(i - 16);
    rn_conv *c[2] = {NULL, NULL};
    int built = !rn_conv_create(&c[0], cpu_dev, &d, err) && !rn_conv_create(&c[1], cpu_dev, &s, err);
    RN_CHECK(built, "direct and chosen (%s) fused convs build: %s", rn_conv_algo_name(s.algo), err->msg);
    double worst = 0, big = 0;
    for (int k = 0; k < 2 && built; k++) {
        y[k] = malloc(nx * 4);
        cpu_dev->ops->conv_set_weights_folded(cpu_dev, c[k], w, NULL, b);
        cpu_dev->ops->conv_forward_fused(cpu_dev, c[k], y[k], x, r);
    }
    for (size_t i = 0; i < nx && built; i++) {
        worst = fmax(worst, fabs((double)y[1][i] - y[0][i]));
        big = fmax(big, fabs((double)y[0][i]));
    }
    RN_CHECK(built && big > 0.1 && worst <= 1e-5 * big, "chosen %s vs direct: worst %.3g of max %.3g",
             rn_conv_algo_name(s.algo), worst, big);
    if (built) free(y[0]), free(y[1]);
    rn_conv_destroy(c[0]);
    rn_conv_destroy(c[1]);
    free(x), free(r), free(w), free(b);
}

static void test_autotune(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    rn_err err = {{0}};
    rn_autotune t;
    RN_CHECK(!rn_autotune_open(&t, path, &err), "open missing cache: %s", err.msg);
    rn_conv_shape s = {.n = 2, .ic = 32, .ih = 14, .iw = 14, .oc = 32, .oh = 14, .ow = 14, .kh = 3, .kw = 3,
                       .sh = 1, .sw = 1, .ph = 1, .pw = 1};
    rn_conv_shape s1 = s;
    s1.kh = s1.kw = 1, s1.ph = s1.pw = 0;
    t.iters = 1;
    RN_CHECK(!rn_autotune_choose(&t, cpu_dev, &s, &err) && t.timed == 1, "3x3 timed: %s", err.msg);
    RN_CHECK(!rn_autotune_choose(&t, cpu_dev, &s1, &err) && s1.algo == RN_ALGO_DIRECT && t.timed == 1 && t.n == 1,
             "1x1 has one candidate: not timed, not cached");
    rn_conv_algo chosen = s.algo;
    RN_CHECK(t.e[0].ms[RN_ALGO_DIRECT] > 0, "direct timed");
    RN_CHECK(!rn_autotune_save(&t, &err), "save: %s", err.msg);
    rn_autotune_close(&t);
    RN_CHECK(!rn_autotune_open(&t, path, &err) && t.n == 1, "reopen");
    s.algo = RN_ALGO_DIRECT;
    RN_CHECK(!rn_autotune_choose(&t, cpu_dev, &s, &err) && t.reused == 1 && t.timed == 0 && s.algo == chosen,
             "reused from the file: %s", rn_conv_algo_name(s.algo));
    rn_conv *c;
    RN_CHECK(!rn_conv_create(&c, cpu_dev, &s, &err), "chosen algo builds: %s", err.msg);
    printf("autotune 32x14x14 3x3: %s (%s), direct %.3f ms, winograd %.3f ms\n", rn_conv_algo_name(s.algo),
           rn_conv_impl_name(c, 0), t.e[0].ms[0], t.e[0].ms[1]);
    rn_conv_destroy(c);
    rn_autotune_close(&t);
    test_autotune_fused(&t, path, &err);
    FILE *f = fopen(path, "a");
    fputs("garbage line\n", f);
    fclose(f);
    RN_CHECK(rn_autotune_open(&t, path, &err) && strstr(err.msg, path) && strstr(err.msg, "line 4"),
             "malformed cache named with its line: %s", err.msg);
}

/* bf16 staging reuse (cpu/dnnl.h): gradients with the forward's kept src and
 * the shared diff_dst equal those computed without reuse, bit for bit; a
 * different src pointer or an intervening conv defeats the reuse. */
static void test_staging_reuse(void)
{
    rn_err err = {{0}};
    rn_device *be;
    rn_conv *c, *o;
    rn_conv_shape s = {.n = 2, .ic = 32, .ih = 12, .iw = 12, .oc = 48, .oh = 12, .ow = 12, .kh = 3, .kw = 3,
                       .sh = 1, .sw = 1, .ph = 1, .pw = 1, .compute = RN_NUM_BF16};
    if (rn_device_create(&be, "cpu", 0, &err) || rn_conv_create(&c, be, &s, &err) || rn_conv_create(&o, be, &s, &err)) {
        RN_CHECK(0, "bf16 convs: %s", err.msg);
        return;
    }
    size_t nx = 2 * 32 * 144, ny = 2 * 48 * 144, nw = 48 * 32 * 9;
    float *x = malloc(nx * 4), *x2 = malloc(nx * 4), *y = malloc(ny * 4), *dy = malloc(ny * 4), *dy2 = malloc(ny * 4);
    float *w = malloc(nw * 4), *dw[3], *dx[3];
    for (int i = 0; i < 3; i++) dw[i] = calloc(nw, 4), dx[i] = malloc(nx * 4);
    for (size_t i = 0; i < nx; i++) x[i] = sinf(0.37f * (float)i), x2[i] = x[i];
    for (size_t i = 0; i < ny; i++) dy[i] = cosf(0.11f * (float)i), dy2[i] = dy[i];
    for (size_t i = 0; i < nw; i++) w[i] = 0.05f * sinf(0.7f * (float)i);
    rn_conv_set_weights(c, w);
    rn_conv_set_weights(o, w);
    rn_conv_forward(c, y, x); /* reuse path: same pointers */
    rn_conv_backward_weights(c, dw[0], x, dy);
    rn_conv_backward_data(c, dx[0], dy);
    rn_conv_forward(c, y, x);  /* no reuse: other pointers, another conv in between */
    rn_conv_backward_weights(c, dw[1], x2, dy);
    rn_conv_backward_weights(o, dw[2], x2, dy2);
    rn_conv_backward_data(c, dx[1], dy2);
    RN_CHECK(!memcmp(dw[0], dw[1], nw * 4) && !memcmp(dx[0], dx[1], nx * 4), "reuse is bit-identical");
    rn_conv_forward(c, y, x);
    for (size_t i = 0; i < nx; i++) x2[i] = 2.0f * x[i];
    memset(dw[1], 0, nw * 4), memset(dw[2], 0, nw * 4);
    rn_conv_backward_weights(c, dw[1], x2, dy); /* must see x2, not the kept x */
    rn_conv_backward_weights(o, dw[2], x2, dy);
    RN_CHECK(!memcmp(dw[1], dw[2], nw * 4), "a different src pointer is staged afresh");
    for (int i = 0; i < 3; i++) free(dw[i]), free(dx[i]);
    free(x), free(x2), free(y), free(dy), free(dy2), free(w);
    rn_conv_destroy(c);
    rn_conv_destroy(o);
    rn_device_destroy(be);
}

/* The tuning as a step's parts: its scaler skips an overflowing step and halves; its span
 * hooks enclose the layer spans. */
static void test_hooks(rn_params *p, const inputs *in)
{
    rn_tuning_flags tf = {.loss_scale = "dynamic", .profile = "unused.json"};
    rn_tuning t;
    rn_err err = {{0}};
    rn_model m;
    if (rn_tuning_setup(&t, &tf, 0, &err) || make_model(&m, p, RN_NUM_F32, NULL)) {
        RN_CHECK(0, "setup: %s", err.msg);
        return;
    }
    t.scaler.scale = 0x1p127f;
    rn_tuning_attach(&t, &m);
    RN_CHECK(m.prof == t.prof, "attach: profiler");
    rn_train_hooks hk = {.ctx = &t, .span_begin = rn_tuning_span_begin, .span_end = rn_tuning_span_end};
    rn_step_ctl ctl = {.scaler = &t.scaler};
    rn_step_batch b = {in->x, in->k, in->t, in->v, in->d};
    rn_adam opt = rn_adam_default(1e-3);
    double loss;
    int applied = -1;
    float *w0 = malloc(p->n_param * sizeof *w0);
    memcpy(w0, p->param, p->n_param * sizeof *w0);
    int rc = rn_train_step(&m, &opt, &b, NULL, &ctl, &hk, &loss, &applied, &err);
    RN_CHECK(!rc && applied == 0 && m.loss_scale == 0x1p127f, "overflow at 2^127: step skipped");
    RN_CHECK(t.scaler.scale == 0x1p126f, "the scale halved");
    t.scaler.scale = 1024.0f;
    rc = rn_train_step(&m, &opt, &b, NULL, &ctl, &hk, &loss, &applied, &err);
    RN_CHECK(!rc && applied == 1 && m.loss_scale == 1024.0f && t.depth == 0, "clean at 1024: updated");
    memcpy(p->param, w0, p->n_param * sizeof *w0);
    memset(p->m, 0, p->n_param * sizeof *p->m);
    memset(p->v, 0, p->n_param * sizeof *p->v);
    free(w0);

    int fwd = 0, layer = 0;
    for (size_t i = 0; i < t.profile.n; i++) {
        fwd += !strcmp(t.profile.s[i].name, "forward") && t.profile.s[i].depth == 0;
        layer += !strcmp(t.profile.s[i].cat, "fwd") && t.profile.s[i].depth == 1;
    }
    RN_CHECK(fwd == 2 && layer > 40, "two steps: hook spans enclose the layer spans (%d, %d)", fwd, layer);
    rn_model_destroy(&m);
    rn_tuning_free(&t);
}

static void test_lr_and_binding(void)
{
    rn_lr_rule r;
    rn_err err = {{0}};
    RN_CHECK(!rn_lr_rule_parse("linear", &r, &err) && fabs(rn_lr_scaled(1e-3, r, 64) - 2e-3) < 1e-18, "linear 64");
    RN_CHECK(fabs(rn_lr_scaled(1e-3, r, 8) - 2.5e-4) < 1e-18, "linear 8: 1e-3 * 8 / 32");
    RN_CHECK(!rn_lr_rule_parse("none", &r, &err) && rn_lr_scaled(1e-3, r, 64) == 1e-3, "none");
    RN_CHECK(rn_lr_rule_parse("sqrt", &r, &err) && strstr(err.msg, "sqrt"), "reject sqrt");
    int cores[1024];
    int n = rn_allowed_cores(cores, 1024);
    RN_CHECK(n >= 1, "allowed cores: %d", n);
    RN_CHECK(!rn_bind_omp_threads(cores, 1, 0, &err) && rn_bound_core() == cores[0], "bound to core %d", cores[0]);
    int bad = -5;
    RN_CHECK(rn_bind_omp_threads(&bad, 1, 0, &err), "bad core rejected");
    RN_CHECK(!rn_bind_omp_threads(cores, n, 0, &err), "rebind to all");
}

int main(void)
{
    char dir[] = "/tmp/rn_precXXXXXX";
    if (!mkdtemp(dir)) return 1;
    rn_err derr = {{0}};
    if (rn_device_create(&cpu_dev, "cpu", 0, &derr)) {
        fprintf(stderr, "%s\n", derr.msg);
        return 1;
    }
    test_policy();
    test_unscale_check();
    test_scaler_trace();
    test_scaled_adam();
    rn_params p;
    rn_err err = {{0}};
    if (rn_params_build(&p, 18, &err)) return 1;
    fill_params(&p);
    inputs *in = malloc(sizeof *in);
    fill_inputs(in);
    test_bf16_forward(&p, in);
    test_o2(&p, in);
    test_model_scaling(&p, in);
    test_k_not_quantised(&p, in);
    test_quantise(&p, in);
    test_profile_model(&p, in);
    test_profile_unit(dir);
    test_autotune(dir);
    test_lr_and_binding();
    test_staging_reuse();
    test_hooks(&p, in);
    free(in);
    rn_params_free(&p);
    rn_device_destroy(cpu_dev);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    RN_CHECK_DONE();
}
