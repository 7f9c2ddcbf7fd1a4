/* cuda_kernels: every launcher of src/cuda/kernels.h on the GPU against the
 * ref device's math (src/ref), with test_backend_ops' bounds (fp32
 * elementwise ops, max-pool, GAP, linear backward and the loss bit for bit;
 * Adam bit for bit with nn/kernel_math.h on the host), determinism (a big
 * reduction run twice, bit-equal), and each kernel's time and bandwidth on
 * ResNet-sized tensors (128x256x64x64 in fp32/bf16/fp16, Adam over 34M).
 * llm.c's dev/cuda pattern: the kernels checked and timed in one harness.
 *
 *   nvcc -O3 -fmad=false -gencode arch=compute_90,code=sm_90 -Isrc -Werror all-warnings \
 *        -Xcompiler -Wall,-Wextra,-Werror -o build/cuda_kernels bench/cuda_kernels.cu src/cuda/k_*.cu \
 *        src/ref/ref_ops.c src/ref/ref_conv.c
 *   build/cuda_kernels          # all checks and the timings; "quick": checks only (compute-sanitizer)
 *
 * Ends with "N passed, N failed", exit status 1 on a failure, 2 on a CUDA error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cuda/kernels.h"
#include "nn/kernel_math.h"
extern "C" {
#include "ref/ref.h"
}

static void ck(cudaError_t e, int line, const char *what)
{
    if (e == cudaSuccess) return;
    printf("CUDA line %d %s: %s\n", line, what, cudaGetErrorString(e));
    exit(2);
}
#define CK(x) ck((x), __LINE__, #x)

static int fails, passes;
static rn_cuda_kctx K;
static const double U32 = 1.0 / 16777216.0;
static const char *TN[3] = {"fp32", "bf16", "fp16"};
static const double TU[3] = {0, 1.0 / 256, 1.0 / 2048};

static void report(const char *op, const char *sh, int t, double err, double tol)
{
    int ok = err <= tol;
    ok ? passes++ : fails++;
    printf("%-4s %-26s %-18s %-5s %-10.3g tol %.3g\n", ok ? "ok" : "FAIL", op, sh, TN[t], err, tol);
}

static double serr(const float *g, const float *w, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)g[i] - w[i]);
        if (!(d <= num)) num = d;
        if (fabs(w[i]) > den) den = fabs(w[i]);
    }
    return num / den;
}

static size_t bdiff(const float *g, const float *w, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += memcmp(g + i, w + i, 4) != 0;
    return d;
}

static void judge(const char *op, const char *sh, int t, int exact, const float *g, const float *w, size_t n, double k32,
                  int out_act)
{
    if (t == 0 && exact) report(op, sh, t, (double)bdiff(g, w, n), 0);
    else report(op, sh, t, serr(g, w, n), k32 * U32 + (out_act ? TU[t] : 0));
}

static unsigned long long rs = 88172645463325252ull;
static double unif()
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return (rs >> 11) * (1.0 / 9007199254740992.0);
}
static double gauss() { return sqrt(-2 * log(unif() + 1e-300)) * cos(6.283185307179586 * unif()); }

static std::vector<float> rnd(size_t n, double mean, double sd, int t)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) {
        float f = (float)(mean + sd * gauss());
        if (t == 1) f = rn_km_bf16_to_f32(rn_km_f32_to_bf16(f));
        if (t == 2) f = rn_km_f16_to_f32(rn_km_f32_to_f16(f));
        v[i] = f;
    }
    return v;
}

template <class T> static T *dput(const T *h, size_t n)
{
    T *d;
    CK(cudaMalloc(&d, n * sizeof(T) + 16));
    if (h) CK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> static std::vector<T> dget(const T *d, size_t n)
{
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

struct Sh {
    int n, c, h, w;
    size_t e() const { return (size_t)n * c * h * w; }
};

static size_t nh(Sh a, size_t i)
{
    size_t hw = (size_t)a.h * a.w, p = i % hw, c = i / hw % a.c, n = i / hw / a.c;
    return (n * hw + p) * a.c + c;
}

/* NCHW fp32 host -> device NHWC of type t */
static void *act_put(const std::vector<float> &v, Sh a, int t)
{
    std::vector<unsigned char> h(a.e() * (t ? 2 : 4) + 16);
    for (size_t i = 0; i < a.e(); i++) rn_km_st_f32(h.data(), t, nh(a, i), v[i]);
    return dput(h.data(), h.size());
}
static std::vector<float> act_get(const void *d, Sh a, int t)
{
    std::vector<unsigned char> h = dget((const unsigned char *)d, a.e() * (t ? 2 : 4));
    std::vector<float> v(a.e());
    for (size_t i = 0; i < a.e(); i++) v[i] = rn_km_ld(h.data(), t, nh(a, i));
    return v;
}

static void sync() { CK(cudaStreamSynchronize(K.stream)); CK(cudaGetLastError()); }

static void t_bn(Sh a, int t, int relu)
{
    char sh[48];
    snprintf(sh, sizeof sh, "%dx%dx%dx%d%s", a.n, a.c, a.h, a.w, relu ? "+r" : "");
    rn_act_shape as = {a.n, a.c, a.h, a.w, (rn_numtype)t};
    int C = a.c, HW = a.h * a.w;
    size_t n = a.e(), rows = n / C;
    auto x = rnd(n, 0.7, 1.5, t), x2 = rnd(n, 0, 1, t), r = rnd(n, 0, 1, t), d0 = rnd(n, 0, 1, t);
    auto sc = rnd(2 * C, 0, 1, 0), sf = rnd(2 * C, 0, 0.5, 0), gam = rnd(C, 0, 1, 0), bet = rnd(C, 0, 1, 0);
    auto rm = rnd(C, 0, 0.2, 0), rv = rnd(C, 1.5, 0.1, 0);
    void *dx = act_put(x, a, t), *dx2 = act_put(x2, a, t), *dr = act_put(r, a, t), *dy = act_put(x, a, t);
    double *ds = dput<double>(NULL, 2 * C + 1);
    float *st = dput<float>(NULL, 6 * C), *dsc = dput(sc.data(), 2 * C), *dsf = dput(sf.data(), 2 * C);
    float *dg = dput(gam.data(), C), *db = dput(bet.data(), C);
    CK(cudaMemcpy(st + 2 * C, rm.data(), C * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(st + 3 * C, rv.data(), C * 4, cudaMemcpyHostToDevice));
    rn_cuda_bn_sums(&K, ds, dx, &as);
    rn_cuda_bn_stats(&K, st, st + C, ds, (double)rows, C);
    rn_cuda_bn_update_running(&K, st + 2 * C, st + 3 * C, st, st + C, 0.1, (long)rows, C);
    rn_cuda_bn_fold(&K, st + 4 * C, st + 5 * C, st, st + C, dg, db, C);
    sync();
    auto gs = dget(ds, 2 * C + 1);
    auto gst = dget(st, 6 * C);
    std::vector<double> ws(2 * C);
    rn_ref_bn_sums(ws.data(), x.data(), a.n, C, HW);
    std::vector<float> fg(2 * C + 1), fw(2 * C + 1), wst(6 * C);
    for (int i = 0; i < 2 * C; i++) fg[i] = (float)gs[i], fw[i] = (float)ws[i];
    fg[2 * C] = (float)gs[2 * C], fw[2 * C] = (float)rows;
    judge("bn_sums(+count)", sh, t, 0, fg.data(), fw.data(), 2 * C + 1, 4, 0);
    rn_ref_bn_stats_from_sums(wst.data(), wst.data() + C, ws.data(), (double)rows, C);
    memcpy(wst.data() + 2 * C, rm.data(), C * 4), memcpy(wst.data() + 3 * C, rv.data(), C * 4);
    rn_ref_bn_update_running(wst.data() + 2 * C, wst.data() + 3 * C, wst.data(), wst.data() + C, 0.1, (double)rows, C);
    rn_ref_bn_fold(wst.data() + 4 * C, wst.data() + 5 * C, wst.data(), wst.data() + C, gam.data(), bet.data(), C);
    judge("bn_stats/running/fold", sh, t, 0, gst.data(), wst.data(), 6 * C, 8, 0);
    /* elementwise */
    std::vector<float> want(n);
    const char *names[6] = {"bn_apply", "bn_apply+relu", "bn_add_relu", "bn2_add_relu", "relu_backward", "add"};
    auto yr = rnd(n, 0, 1, t);
    for (size_t i = 0; i < n; i++) yr[i] = yr[i] > 0.3f ? yr[i] : 0;
    void *dyr = act_put(yr, a, t);
    for (int op = 0; op < 6; op++) {
        switch (op) {
        case 0: case 1: rn_ref_bn_apply(want.data(), x.data(), sc.data(), sf.data(), op, a.n, C, HW);
            rn_cuda_bn_apply(&K, dy, dx, dsc, dsf, op, &as); break;
        case 2: rn_ref_bn_add_relu(want.data(), x.data(), sc.data(), sf.data(), NULL, NULL, NULL, r.data(), a.n, C, HW);
            rn_cuda_bn_add_relu(&K, dy, dx, dsc, dsf, dr, &as); break;
        case 3: rn_ref_bn_add_relu(want.data(), x.data(), sc.data(), sf.data(), x2.data(), sc.data() + C, sf.data() + C, NULL, a.n, C, HW);
            rn_cuda_bn2_add_relu(&K, dy, dx, dsc, dsf, dx2, dsc + C, dsf + C, &as); break;
        case 4: want = d0; rn_ref_relu_backward(want.data(), yr.data(), n);
            CK(cudaFree(dy)); dy = act_put(d0, a, t); rn_cuda_relu_backward(&K, dy, dyr, &as); break;
        default: want = d0; rn_ref_add(want.data(), r.data(), n);
            CK(cudaFree(dy)); dy = act_put(d0, a, t); rn_cuda_add(&K, dy, dr, &as); break;
        }
        sync();
        auto got = act_get(dy, a, t);
        const double k32[6] = {8, 8, 8, 16, 0, 1};
        judge(names[op], sh, t, 1, got.data(), want.data(), n, k32[op], 1);
    }
    /* backward */
    std::vector<float> mean(C), var(C), ro(n);
    rn_ref_bn_stats_from_sums(mean.data(), var.data(), ws.data(), (double)rows, C);
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i / HW % C);
        float v = (float)((x[i] - mean[c]) / sqrt(var[c] + 1e-5) * gam[c]);
        ro[i] = v > 0 ? v : 0;
        if (t == 1) ro[i] = rn_km_bf16_to_f32(rn_km_f32_to_bf16(ro[i]));
        if (t == 2) ro[i] = rn_km_f16_to_f32(rn_km_f32_to_f16(ro[i]));
    }
    void *dro = relu ? act_put(ro, a, t) : NULL, *ddy = act_put(d0, a, t);
    float *dmean = dput(mean.data(), C), *dvar = dput(var.data(), C);
    auto dg0 = rnd(C, 0, 1, 0), db0 = rnd(C, 0, 1, 0);
    float *ddg = dput(dg0.data(), C), *ddb = dput(db0.data(), C);
    rn_cuda_bn_backward_sums(&K, ds, ddy, dro, dx, dmean, &as);
    rn_cuda_bn_backward_params(&K, ddg, ddb, ds, dvar, C);
    rn_cuda_bn_backward_data(&K, dy, ddy, dro, dx, dmean, dvar, dg, ds, (double)rows, &as);
    sync();
    auto gbs = dget(ds, 2 * C);
    std::vector<double> wbs(2 * C);
    rn_ref_bn_backward_sums(wbs.data(), d0.data(), relu ? ro.data() : NULL, x.data(), mean.data(), a.n, C, HW);
    for (int i = 0; i < 2 * C; i++) fg[i] = (float)gbs[i], fw[i] = (float)wbs[i];
    judge("bn_backward_sums", sh, t, 0, fg.data(), fw.data(), 2 * C, 4, 0);
    auto gdg = dget(ddg, C), gdb = dget(ddb, C);
    rn_ref_bn_backward_params(dg0.data(), db0.data(), wbs.data(), var.data(), C);
    judge("bn_backward_params g", sh, t, 0, gdg.data(), dg0.data(), C, 4, 0);
    judge("bn_backward_params b", sh, t, 0, gdb.data(), db0.data(), C, 4, 0);
    rn_ref_bn_backward_data(want.data(), d0.data(), relu ? ro.data() : NULL, x.data(), mean.data(), var.data(), gam.data(),
                            wbs.data(), (double)rows, a.n, C, HW);
    auto got = act_get(dy, a, t);
    judge("bn_backward_data", sh, t, 0, got.data(), want.data(), n, 16, 1);
    for (void *p : {dx, dx2, dr, dy, dyr, ddy}) CK(cudaFree(p));
    if (dro) CK(cudaFree(dro));
    for (float *p : {st, dsc, dsf, dg, db, dmean, dvar, ddg, ddb}) CK(cudaFree(p));
    CK(cudaFree(ds));
}

static void t_pool_gap(Sh a, int t)
{
    char sh[48];
    snprintf(sh, sizeof sh, "%dx%dx%dx%d", a.n, a.c, a.h, a.w);
    rn_act_shape as = {a.n, a.c, a.h, a.w, (rn_numtype)t};
    int OH = (a.h - 1) / 2 + 1, OW = (a.w - 1) / 2 + 1, C = a.c, HW = a.h * a.w;
    Sh ao = {a.n, C, OH, OW};
    size_t n = a.e(), no = ao.e();
    auto x = rnd(n, 0, 1, t), dy = rnd(no, 0, 1, t);
    for (auto &v : x) v = roundf(v * 2) / 2;
    std::vector<float> wy(no), wdx(n);
    rn_ref_maxpool_forward(wy.data(), x.data(), a.n, C, a.h, a.w, OH, OW);
    rn_ref_maxpool_backward(wdx.data(), dy.data(), x.data(), a.n, C, a.h, a.w, OH, OW);
    void *dx = act_put(x, a, t), *ddy = act_put(dy, ao, t), *dyo = act_put(dy, ao, t), *ddx = act_put(x, a, t);
    rn_cuda_maxpool_forward(&K, dyo, dx, &as, OH, OW);
    rn_cuda_maxpool_backward(&K, ddx, ddy, dx, &as, OH, OW);
    sync();
    auto gy = act_get(dyo, ao, t), gdx = act_get(ddx, a, t);
    judge("maxpool_forward", sh, t, 1, gy.data(), wy.data(), no, 0, 1);
    judge("maxpool_backward", sh, t, 1, gdx.data(), wdx.data(), n, 2, 1);
    /* gap */
    size_t nc = (size_t)a.n * C;
    auto dout = rnd(nc, 0, 1, 0), dx0 = rnd(n, 0, 1, t);
    std::vector<float> wo(nc), wg = dx0;
    rn_ref_gap_forward(wo.data(), x.data(), a.n, C, HW);
    rn_ref_gap_backward(wg.data(), dout.data(), a.n, C, HW);
    float *o = dput<float>(NULL, nc), *dd = dput(dout.data(), nc);
    void *dgx = act_put(dx0, a, t);
    rn_cuda_gap_forward(&K, o, dx, &as);
    rn_cuda_gap_backward(&K, dgx, dd, &as);
    sync();
    auto go = dget(o, nc);
    auto gg = act_get(dgx, a, t);
    judge("gap_forward", sh, t, 1, go.data(), wo.data(), nc, 4, 0);
    judge("gap_backward", sh, t, 1, gg.data(), wg.data(), n, 4, 1);
    for (void *p : {dx, ddy, dyo, ddx, dgx}) CK(cudaFree(p));
    CK(cudaFree(o)), CK(cudaFree(dd));
}

/* A heat-map layer: pointwise forward, softargmax forward and backward, pointwise backward (G groups of D bins). */
static void t_heat(Sh a, int t, int G, int D)
{
    char sh[64];
    snprintf(sh, sizeof sh, "%dx%dx%dx%d G=%d D=%d", a.n, a.c, a.h, a.w, G, D);
    rn_act_shape as = {a.n, a.c, a.h, a.w, (rn_numtype)t};
    int C = a.c, P = G * D, HW = a.h * a.w;
    size_t n = a.e(), np = (size_t)a.n * P * HW, R = 3 * (size_t)a.n * G;
    auto x = rnd(n, 0, 1, t), w = rnd((size_t)P * C, 0, 2 / sqrt(C), 0), b = rnd(P, 0, 1, 0), dc = rnd(R, 0, 1, 0);
    auto dw0 = rnd((size_t)P * C, 0, 1, 0), db0 = rnd(P, 0, 1, 0);
    std::vector<float> wr = dc, wp(np), wda(n), wdw = dw0, wdb = db0;
    rn_ref_pointwise_forward(wp.data(), x.data(), w.data(), b.data(), a.n, C, HW, P);
    rn_ref_softargmax_forward(wr.data(), wp.data(), wp.data(), a.n, G, D, a.h, a.w, 3);
    std::vector<float> wpf = wp;
    rn_ref_softargmax_backward(wp.data(), wp.data(), dc.data(), a.n, G, D, a.h, a.w, 3);
    rn_ref_pointwise_backward(wda.data(), wdw.data(), wdb.data(), wp.data(), x.data(), w.data(), a.n, C, HW, P);
    void *dx = act_put(x, a, t), *dda = act_put(x, a, t);
    float *dwt = dput(w.data(), (size_t)P * C), *dbb = dput(b.data(), P), *rw = dput(dc.data(), R);
    float *pr = dput<float>(NULL, np), *ddc = dput(dc.data(), R), *ddw = dput(dw0.data(), (size_t)P * C);
    float *ddb = dput(db0.data(), P);
    rn_cuda_pointwise_forward(&K, pr, dx, dwt, dbb, &as, P);
    rn_cuda_softargmax_forward(&K, rw, pr, pr, a.n, G, D, a.h, a.w, 3);
    sync();
    auto gr = dget(rw, R), gp = dget(pr, np);
    rn_cuda_softargmax_backward(&K, pr, pr, ddc, a.n, G, D, a.h, a.w, 3);
    rn_cuda_pointwise_backward(&K, dda, ddw, ddb, pr, dx, dwt, &as, P);
    sync();
    auto gda = act_get(dda, a, t);
    auto gdw = dget(ddw, (size_t)P * C), gdb = dget(ddb, P), gdl = dget(pr, np);
    judge("softargmax rows", sh, t, 0, gr.data(), wr.data(), R, 64, 0);
    judge("softargmax prob", sh, t, 0, gp.data(), wpf.data(), np, 64, 0);
    judge("pointwise dx", sh, t, 0, gda.data(), wda.data(), n, 64, 1);
    judge("pointwise dw", sh, t, 0, gdw.data(), wdw.data(), (size_t)P * C, 64, 0);
    judge("pointwise db", sh, t, 0, gdb.data(), wdb.data(), P, 64, 0);
    judge("softargmax dlogits", sh, t, 0, gdl.data(), wp.data(), np, 64, 0);
    CK(cudaFree(dx)), CK(cudaFree(dda));
    for (float *p : {dwt, dbb, rw, pr, ddc, ddw, ddb}) CK(cudaFree(p));
}

/* The linear layer times k into column 1 of rows of O + 1, and the masked L1 loss over K rows. */
static void t_linear_loss(int N, int C, int O, int K_, float scale)
{
    char sh[64];
    snprintf(sh, sizeof sh, "N=%d C=%d O=%d K=%d s=%g", N, C, O, K_, scale);
    int ys = O + 1;
    size_t ny = (size_t)N * ys, nr = 3 * (size_t)N * K_;
    auto feat = rnd((size_t)N * C, 0, 1, 0), w = rnd((size_t)O * C, 0, 1 / sqrt(C), 0), b = rnd(O, 0, 1, 0);
    auto k = rnd(N, 0, 3, 0), dy = rnd(ny, 0, 1, 0), dw0 = rnd((size_t)O * C, 0, 1, 0), db0 = rnd(O, 0, 1, 0);
    auto pred = rnd(nr, 0, 5, 0), tg = rnd(nr, 0, 5, 0);
    std::vector<float> vis((size_t)N * K_), hd(N);
    for (int i = 0; i < N * K_; i++) vis[i] = i % 3 != 1;
    for (int i = 0; i < N; i++) hd[i] = i % 4 != 2;
    tg[0] = pred[0];
    std::vector<float> wy = dy, wdf((size_t)N * C), wdw = dw0, wdb = db0, wg(nr);
    rn_ref_linear_forward(wy.data() + 1, feat.data(), w.data(), b.data(), k.data(), N, C, O, ys);
    rn_ref_linear_backward(wdf.data(), wdw.data(), wdb.data(), dy.data() + 1, feat.data(), w.data(), k.data(), N, C, O, ys);
    double wl = rn_ref_l1_loss(wg.data(), pred.data(), tg.data(), vis.data(), hd.data(), scale, N, K_);
    float *df = dput(feat.data(), feat.size()), *dw = dput(w.data(), (size_t)O * C), *dbb = dput(b.data(), O);
    float *dk = dput(k.data(), N), *yy = dput(dy.data(), ny), *ddy = dput(dy.data(), ny);
    float *ddw = dput(dw0.data(), (size_t)O * C), *ddb = dput(db0.data(), O), *dgf = dput<float>(NULL, feat.size());
    float *dp = dput(pred.data(), nr), *dtg = dput(tg.data(), nr), *dv = dput(vis.data(), vis.size());
    float *dh = dput(hd.data(), N), *gp = dput<float>(NULL, nr);
    double *dl = dput<double>(NULL, 1);
    rn_cuda_linear_forward(&K, yy + 1, df, dw, dbb, dk, N, C, O, ys);
    rn_cuda_linear_backward(&K, dgf, ddw, ddb, ddy + 1, df, dw, dk, N, C, O, ys);
    rn_cuda_l1_loss(&K, dl, gp, dp, dtg, dv, dh, scale, N, K_);
    sync();
    auto gy = dget(yy, ny), gdf = dget(dgf, feat.size()), gdw = dget(ddw, (size_t)O * C), gdb = dget(ddb, O);
    auto gg = dget(gp, nr);
    auto gl = dget(dl, 1);
    judge("linear_forward", sh, 0, 0, gy.data(), wy.data(), ny, 8, 0);
    judge("linear_backward dx", sh, 0, 1, gdf.data(), wdf.data(), feat.size(), 8, 0);
    judge("linear_backward dw", sh, 0, 1, gdw.data(), wdw.data(), (size_t)O * C, 8, 0);
    judge("linear_backward db", sh, 0, 1, gdb.data(), wdb.data(), O, 8, 0);
    judge("l1_loss grad", sh, 0, 1, gg.data(), wg.data(), nr, 8, 0);
    report("l1_loss (bits)", sh, 0, gl[0] != wl, 0);
    for (float *p : {df, dw, dbb, dk, yy, ddy, ddw, ddb, dgf, dp, dtg, dv, dh, gp}) CK(cudaFree(p));
    CK(cudaFree(dl));
}

static void t_adam_unscale(size_t n)
{
    char sh[48];
    snprintf(sh, sizeof sh, "n=%zu", n);
    auto p0 = rnd(n, 0, 1, 0);
    std::vector<float> hp = p0, hm(n), hv(n);
    float *dp = dput(p0.data(), n), *dm = dput<float>(NULL, n), *dv = dput<float>(NULL, n), *dg = dput<float>(NULL, n);
    int *fin = dput<int>(NULL, 1);
    CK(cudaMemset(dm, 0, n * 4)), CK(cudaMemset(dv, 0, n * 4));
    std::vector<float> wp = p0, wm(n), wv(n);
    for (int s = 1; s <= 3; s++) {
        auto g = rnd(n, 0, 1e-2, 0);
        CK(cudaMemcpy(dg, g.data(), n * 4, cudaMemcpyHostToDevice));
        double sc[2] = {1e-2 / (1 - pow(0.9, s)), sqrt(1 - pow(0.999, s))};
        double *dsc = dput(sc, 2);
        rn_adam_args h = {0.9, 0.999, 1e-8, dsc, s == 2 ? fin : NULL};
        rn_cuda_unscale_check(&K, dg, n, 1.0f, fin);
        rn_cuda_adam(&K, dp, dg, dm, dv, n, &h);
        sync();
        CK(cudaFree(dsc));
        rn_km_adam a = rn_km_adam_scalars(0.9, 0.999, 1e-8, sc);
        for (size_t i = 0; i < n; i++) hp[i] = rn_km_adam_update(&a, hp[i], g[i], &hm[i], &hv[i]);
        rn_ref_adam(wp.data(), wm.data(), wv.data(), g.data(), n, sc[0], sc[1], 0.9, 0.999, 1e-8);
        auto gp = dget(dp, n), gm = dget(dm, n);
        report("adam = host kernel_math (bits)", sh, 0, (double)(bdiff(gp.data(), hp.data(), n) + bdiff(gm.data(), hm.data(), n)), 0);
        judge("adam param vs ref", sh, 0, 0, gp.data(), wp.data(), n, 8, 0);
    }
    /* an overflow: the flag 0 and Adam skipped */
    auto g = rnd(n, 0, 100, 0);
    g[n / 2] = INFINITY;
    CK(cudaMemcpy(dg, g.data(), n * 4, cudaMemcpyHostToDevice));
    rn_cuda_unscale_check(&K, dg, n, 0.5f, fin);
    double sc4[2] = {1e-2 / (1 - pow(0.9, 4)), sqrt(1 - pow(0.999, 4))};
    double *dsc4 = dput(sc4, 2);
    rn_adam_args h = {0.9, 0.999, 1e-8, dsc4, fin};
    rn_cuda_adam(&K, dp, dg, dm, dv, n, &h);
    sync();
    CK(cudaFree(dsc4));
    auto gp = dget(dp, n);
    auto f = dget(fin, 1);
    report("adam skipped on Inf", sh, 0, (double)bdiff(gp.data(), hp.data(), n) + (f[0] != 0), 0);
    g[n / 2] = NAN;
    g[n / 2 + 1] = 3;
    CK(cudaMemcpy(dg, g.data(), n * 4, cudaMemcpyHostToDevice));
    rn_cuda_unscale_check(&K, dg, n, 1.0f, fin);
    f = dget(fin, 1);
    report("unscale NaN flag", sh, 0, f[0] != 0, 0);
    g[n / 2] = 1;
    CK(cudaMemcpy(dg, g.data(), n * 4, cudaMemcpyHostToDevice));
    rn_cuda_unscale_check(&K, dg, n, 1.0f / 1024, fin);
    f = dget(fin, 1);
    auto gg = dget(dg, n);
    std::vector<float> wg = g;
    int wf = rn_ref_unscale_check(wg.data(), n, 1.0f / 1024);
    report("unscale 1/1024 (bits+flag)", sh, 0, (double)bdiff(gg.data(), wg.data(), n) + (f[0] != wf), 0);
    for (float *p : {dp, dm, dv, dg}) CK(cudaFree(p));
    CK(cudaFree(fin));
}

static void t_layout(int t)
{
    char sh[48] = "misc";
    /* act from nchw with cpad, and back */
    int N = 2, C = 3, H = 5, W = 7, cp = 8;
    auto x = rnd((size_t)N * C * H * W, 0, 1, t);
    float *dx = dput(x.data(), x.size()), *back = dput<float>(NULL, (size_t)N * cp * H * W);
    void *act = dput<unsigned char>(NULL, (size_t)N * cp * H * W * 4);
    rn_cuda_act_from_nchw(&K, act, (rn_numtype)t, cp, dx, N, C, H, W);
    rn_act_shape as = {N, cp, H, W, (rn_numtype)t};
    rn_cuda_act_to_nchw(&K, back, act, &as);
    sync();
    auto gb = dget(back, (size_t)N * cp * H * W);
    std::vector<float> wb((size_t)N * cp * H * W, 0.0f);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < H * W; p++) wb[((size_t)n * cp + c) * H * W + p] = x[((size_t)n * C + c) * H * W + p];
    report("act_from/to_nchw cpad", sh, t, (double)bdiff(gb.data(), wb.data(), wb.size()), 0);
    /* weights: conv (D0=OC, D1=IC) with scale, transposed with scale, pad */
    for (int tr = 0; tr < 2; tr++) {
        int D0 = 16, D1 = 3, KH = 3, KW = 2, dp = 8;
        auto w = rnd((size_t)D0 * D1 * KH * KW, 0, 1, 0), sc = rnd(tr ? D1 : D0, 0, 1, 0);
        float *dw = dput(w.data(), w.size()), *dsc = dput(sc.data(), sc.size());
        void *kr = dput<unsigned char>(NULL, (size_t)D0 * KH * KW * dp * 4);
        rn_cuda_weight_to_krsc(&K, kr, (rn_numtype)t, dw, dsc, tr, D0, D1, KH, KW, dp);
        sync();
        auto gk = dget((unsigned char *)kr, (size_t)D0 * KH * KW * dp * (t ? 2 : 4));
        size_t bad = 0;
        for (int a = 0; a < D0; a++)
            for (int r = 0; r < KH; r++)
                for (int s = 0; s < KW; s++)
                    for (int b = 0; b < dp; b++) {
                        float want = b < D1 ? w[(((size_t)a * D1 + b) * KH + r) * KW + s] * sc[tr ? b : a] : 0.0f;
                        if (t == 1) want = rn_km_bf16_to_f32(rn_km_f32_to_bf16(want));
                        if (t == 2) want = rn_km_f16_to_f32(rn_km_f32_to_f16(want));
                        float got = rn_km_ld(gk.data(), t, (((size_t)a * KH + r) * KW + s) * dp + b);
                        bad += memcmp(&got, &want, 4) != 0;
                    }
        report(tr ? "weight_to_krsc transposed" : "weight_to_krsc conv", sh, t, (double)bad, 0);
        /* grad add back */
        auto dw0 = rnd(w.size(), 0, 1, 0);
        float *ddw = dput(dw0.data(), w.size());
        rn_cuda_weight_grad_add(&K, ddw, kr, (rn_numtype)t, 1.0f, D0, D1, KH, KW, dp);
        sync();
        auto gdw = dget(ddw, w.size());
        std::vector<float> wdw = dw0;
        for (int a = 0; a < D0; a++)
            for (int b = 0; b < D1; b++)
                for (int r = 0; r < KH; r++)
                    for (int s = 0; s < KW; s++) {
                        size_t i = (((size_t)a * D1 + b) * KH + r) * KW + s;
                        wdw[i] = wdw[i] + rn_km_ld(gk.data(), t, (((size_t)a * KH + r) * KW + s) * dp + b);
                    }
        report("weight_grad_add", sh, t, (double)bdiff(gdw.data(), wdw.data(), w.size()), 0);
        CK(cudaFree(dw)), CK(cudaFree(dsc)), CK(cudaFree(kr)), CK(cudaFree(ddw));
    }
    /* cast, fill, bias_add_relu */
    size_t n = 1003;
    auto v = rnd(n, 0, 100, 0);
    float *dv = dput(v.data(), n);
    void *dc = dput<unsigned char>(NULL, n * 4);
    rn_cuda_cast_f32(&K, dc, (rn_numtype)t, dv, n);
    rn_cuda_fill(&K, dv, 0.25f, n - 1);
    sync();
    auto gc = dget((unsigned char *)dc, n * (t ? 2 : 4));
    auto gf = dget(dv, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float want = t == 1 ? rn_km_bf16_to_f32(rn_km_f32_to_bf16(v[i])) : t == 2 ? rn_km_f16_to_f32(rn_km_f32_to_f16(v[i])) : v[i];
        float got = rn_km_ld(gc.data(), t, i);
        bad += memcmp(&got, &want, 4) != 0;
        bad += gf[i] != (i + 1 < n ? 0.25f : v[i]);
    }
    report("cast_f32 + fill", sh, t, (double)bad, 0);
    Sh a = {2, 64, 5, 3};
    rn_act_shape aa = {2, 64, 5, 3, (rn_numtype)t};
    auto bx = rnd(a.e(), 0, 1, t), br = rnd(a.e(), 0, 1, t), bias = rnd(64, 0, 1, 0);
    std::vector<float> want(a.e());
    rn_ref_bias_add_relu(want.data(), bx.data(), bias.data(), br.data(), 1, 2, 64, 15);
    void *dbx = act_put(bx, a, t), *dbr = act_put(br, a, t);
    float *dbias = dput(bias.data(), 64);
    rn_cuda_bias_add_relu(&K, dbr, dbx, dbias, dbr, 1, &aa);
    sync();
    auto gbr = act_get(dbr, a, t);
    judge("bias_add_relu (y=r)", "2x64x5x3", t, 1, gbr.data(), want.data(), a.e(), 2, 1);
    CK(cudaFree(dx)), CK(cudaFree(back)), CK(cudaFree(act)), CK(cudaFree(dv)), CK(cudaFree(dc));
    CK(cudaFree(dbx)), CK(cudaFree(dbr)), CK(cudaFree(dbias));
}

/* determinism and bandwidth on big tensors */
static void t_big(int t)
{
    Sh a = {128, 256, 64, 64};
    rn_act_shape as = {a.n, a.c, a.h, a.w, (rn_numtype)t};
    size_t n = a.e(), bytes = n * (t ? 2 : 4);
    int C = a.c;
    void *x, *y, *r, *ro;
    CK(cudaMalloc(&x, bytes)), CK(cudaMalloc(&y, bytes)), CK(cudaMalloc(&r, bytes)), CK(cudaMalloc(&ro, bytes));
    float *tmp;
    CK(cudaMalloc(&tmp, n * 4));
    auto h = rnd(1 << 20, 0.3, 1, 0);
    float *dh = dput(h.data(), h.size());
    for (size_t off = 0; off < n; off += h.size()) rn_cuda_cast_f32(&K, (char *)x + off * (t ? 2 : 4), (rn_numtype)t, dh, h.size());
    for (size_t off = 0; off < n; off += h.size()) rn_cuda_cast_f32(&K, (char *)r + off * (t ? 2 : 4), (rn_numtype)t, dh + 7, h.size() - 8);
    CK(cudaMemcpy(ro, x, bytes, cudaMemcpyDeviceToDevice));
    double *s1 = dput<double>(NULL, 2 * C + 1), *s2 = dput<double>(NULL, 2 * C + 1);
    auto sc = rnd(C, 1, 0.1, 0);
    float *dsc = dput(sc.data(), C), *dmean = dput(sc.data(), C), *dvar = dput(sc.data(), C);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)), CK(cudaEventCreate(&e1));
    char sh[48];
    snprintf(sh, sizeof sh, "128x256x64x64");
    /* determinism */
    rn_cuda_bn_sums(&K, s1, x, &as);
    rn_cuda_bn_sums(&K, s2, x, &as);
    sync();
    auto g1 = dget(s1, 2 * C + 1), g2 = dget(s2, 2 * C + 1);
    report("bn_sums twice: bit-equal", sh, t, memcmp(g1.data(), g2.data(), g1.size() * 8) != 0, 0);
    const char *names[8] = {"bn_sums", "bn_apply+relu", "bn_add_relu", "bn_backward_sums", "bn_backward_data", "add",
                            "relu_backward", "maxpool fwd(64->32)"};
    const double passes_[8] = {1, 2, 3, 3, 4, 3, 3, 1.25};
    for (int op = 0; op < 8; op++) {
        float best = 1e30f;
        for (int rep = 0; rep < 5; rep++) {
            CK(cudaEventRecord(e0, K.stream));
            switch (op) {
            case 0: rn_cuda_bn_sums(&K, s1, x, &as); break;
            case 1: rn_cuda_bn_apply(&K, y, x, dsc, dsc, 1, &as); break;
            case 2: rn_cuda_bn_add_relu(&K, y, x, dsc, dsc, r, &as); break;
            case 3: rn_cuda_bn_backward_sums(&K, s1, r, ro, x, dmean, &as); break;
            case 4: rn_cuda_bn_backward_data(&K, y, r, ro, x, dmean, dvar, dsc, s2, 1e6, &as); break;
            case 5: rn_cuda_add(&K, y, x, &as); break;
            case 6: rn_cuda_relu_backward(&K, y, ro, &as); break;
            default: rn_cuda_maxpool_forward(&K, y, x, &as, 32, 32); break;
            }
            CK(cudaEventRecord(e1, K.stream));
            sync();
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            best = ms < best ? ms : best;
        }
        printf("time %-22s %-5s %8.3f ms  %7.0f GB/s\n", names[op], TN[t], best, passes_[op] * bytes / best / 1e6);
    }
    /* the heat-map layer on RootNet's real shape (one 64x64 map), and determinism */
    float *w = dput(sc.data(), C), *b = dput(sc.data(), 1), *co = dput<float>(NULL, 3 * 128), *pr = dput<float>(NULL, (size_t)128 * 4096);
    float *co2 = dput<float>(NULL, 3 * 128), *dw = dput<float>(NULL, C), *db = dput<float>(NULL, 1);
    rn_cuda_pointwise_forward(&K, pr, x, w, b, &as, 1);
    rn_cuda_softargmax_forward(&K, co, pr, pr, 128, 1, 1, 64, 64, 3);
    rn_cuda_pointwise_forward(&K, pr, x, w, b, &as, 1);
    rn_cuda_softargmax_forward(&K, co2, pr, pr, 128, 1, 1, 64, 64, 3);
    sync();
    auto c1 = dget(co, 3 * 128), c2 = dget(co2, 3 * 128);
    report("heatmap forward twice: bit-equal", sh, t, memcmp(c1.data(), c2.data(), 3 * 128 * 4) != 0, 0);
    float best = 1e30f, bestb = 1e30f;
    for (int rep = 0; rep < 3; rep++) {
        float ms;
        CK(cudaEventRecord(e0, K.stream));
        rn_cuda_pointwise_forward(&K, pr, x, w, b, &as, 1);
        rn_cuda_softargmax_forward(&K, co, pr, pr, 128, 1, 1, 64, 64, 3);
        CK(cudaEventRecord(e1, K.stream));
        sync();
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = ms < best ? ms : best;
        CK(cudaEventRecord(e0, K.stream));
        rn_cuda_softargmax_backward(&K, pr, pr, co, 128, 1, 1, 64, 64, 3);
        rn_cuda_pointwise_backward(&K, y, dw, db, pr, x, w, &as, 1);
        CK(cudaEventRecord(e1, K.stream));
        sync();
        CK(cudaEventElapsedTime(&ms, e0, e1));
        bestb = ms < bestb ? ms : bestb;
    }
    printf("time %-22s %-5s %8.3f ms  %7.0f GB/s\n", "heatmap forward", TN[t], best, bytes / best / 1e6);
    printf("time %-22s %-5s %8.3f ms  %7.0f GB/s\n", "heatmap backward", TN[t], bestb, 3 * bytes / bestb / 1e6);
    for (void *p : {x, y, r, ro}) CK(cudaFree(p));
    for (float *p : {tmp, dh, dsc, dmean, dvar, w, b, co, pr, co2, dw, db}) CK(cudaFree(p));
    CK(cudaFree(s1)), CK(cudaFree(s2));
}

static void t_adam_time(void)
{
    size_t n = 34000000;
    float *p, *g, *m, *v;
    CK(cudaMalloc(&p, n * 4)), CK(cudaMalloc(&g, n * 4)), CK(cudaMalloc(&m, n * 4)), CK(cudaMalloc(&v, n * 4));
    CK(cudaMemset(p, 0, n * 4)), CK(cudaMemset(g, 0, n * 4)), CK(cudaMemset(m, 0, n * 4)), CK(cudaMemset(v, 0, n * 4));
    int *fin;
    CK(cudaMalloc(&fin, 4));
    double *dsc;
    CK(cudaMalloc(&dsc, 2 * sizeof(double)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)), CK(cudaEventCreate(&e1));
    float best = 1e30f, bu = 1e30f;
    for (int rep = 0; rep < 5; rep++) {
        float ms;
        double sc[2] = {1e-3 / (1 - pow(0.9, rep + 1)), sqrt(1 - pow(0.999, rep + 1))};
        CK(cudaMemcpy(dsc, sc, sizeof sc, cudaMemcpyHostToDevice));
        rn_adam_args h = {0.9, 0.999, 1e-8, dsc, fin};
        CK(cudaEventRecord(e0, K.stream));
        rn_cuda_unscale_check(&K, g, n, 0.5f, fin);
        CK(cudaEventRecord(e1, K.stream));
        sync();
        CK(cudaEventElapsedTime(&ms, e0, e1));
        bu = ms < bu ? ms : bu;
        CK(cudaEventRecord(e0, K.stream));
        rn_cuda_adam(&K, p, g, m, v, n, &h);
        CK(cudaEventRecord(e1, K.stream));
        sync();
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = ms < best ? ms : best;
    }
    printf("time %-22s %-5s %8.3f ms  %7.0f GB/s\n", "unscale_check 34M", "fp32", bu, 8.0 * n / bu / 1e6);
    printf("time %-22s %-5s %8.3f ms  %7.0f GB/s\n", "adam 34M", "fp32", best, 28.0 * n / best / 1e6);
    CK(cudaFree(p)), CK(cudaFree(g)), CK(cudaFree(m)), CK(cudaFree(v)), CK(cudaFree(fin)), CK(cudaFree(dsc));
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    CK(cudaStreamCreate(&K.stream));
    K.scratch_bytes = rn_cuda_kctx_scratch_bytes();
    CK(cudaMalloc(&K.scratch, K.scratch_bytes));
    CK(cudaDeviceGetAttribute(&K.sm_count, cudaDevAttrMultiProcessorCount, 0));
    const Sh acts[] = {{2, 64, 13, 10}, {1, 128, 5, 3}, {2, 256, 6, 10}, {1, 512, 3, 2}, {2, 1024, 3, 3}, {1, 2048, 2, 3},
                       {4, 64, 32, 32}, {3, 12, 5, 5}};
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) t_bn(acts[i], t, (int)i % 2);
        t_pool_gap({2, 64, 13, 10}, t);
        t_pool_gap({1, 64, 8, 7}, t);
        t_pool_gap({2, 512, 3, 4}, t);
        t_heat({2, 256, 6, 5}, t, 1, 1);
        t_heat({1, 256, 4, 7}, t, 1, 1);
        t_heat({3, 256, 64, 64}, t, 1, 1);
        t_heat({2, 32, 5, 6}, t, 3, 4);
        t_heat({1, 256, 16, 16}, t, 18, 16);
        t_layout(t);
    }
    t_linear_loss(2, 512, 1, 1, 1);
    t_linear_loss(5, 2048, 1, 1, 1024);
    t_linear_loss(128, 2048, 1, 1, 1);
    t_linear_loss(4, 64, 3, 18, 2);
    t_adam_unscale(5003);
    t_adam_unscale(1 << 20);
    if (!quick) {
        for (int t = 0; t < 3; t++) t_big(t);
        t_adam_time();
    }
    printf("%d passed, %d failed\n", passes, fails);
    return fails != 0;
}
