/* SyncBN without MPI, on every built-in device: (1) the split BN ops (sums,
 * then stats / parameter gradients / dx) against a hand-written float64
 * BatchNorm, and a batch split 2 + 4 with summed sums equal to the whole
 * batch; (2) the rn_model reduce hook: two models of batch 2 in two threads
 * whose reduce callback sums over both (a barrier in place of MPI) give the
 * forward, loss and averaged gradients of one model of batch 4. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "devices.h"
#include "nn/model.h"

enum { N = 6, C = 32, HW = 7 };

/* Plain NCHW (HW = H x 1): the host side of the test. */
static size_t at(int n, int c, int p) { return ((size_t)n * C + c) * HW + p; }

static double max_rel(const float *a, const double *ref, size_t n)
{
    double scale = 0, err = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs(a[i] - ref[i]));
    return err / (scale > 0 ? scale : 1);
}

static double max_rel_f(const float *a, const float *b, size_t n)
{
    double scale = 0, err = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs((double)a[i] - b[i]));
    return err / (scale > 0 ? scale : 1);
}

/* Textbook BatchNorm (+ReLU mask) forward statistics and backward in float64. */
static void bn_ref(double *mean, double *var, double *dgamma, double *dbeta, double *dx, const float *x,
                   const float *dy, const float *relu, const float *gamma)
{
    double M = (double)N * HW;
    for (int c = 0; c < C; c++) {
        double s = 0, ss = 0, sdz = 0, sdzh = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) s += x[at(n, c, p)];
        mean[c] = s / M;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) ss += (x[at(n, c, p)] - mean[c]) * (x[at(n, c, p)] - mean[c]);
        var[c] = ss / M;
        double is = 1 / sqrt(var[c] + RN_BN_EPS);
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) {
                double dz = relu[at(n, c, p)] > 0 ? dy[at(n, c, p)] : 0;
                sdz += dz, sdzh += dz * (x[at(n, c, p)] - mean[c]) * is;
            }
        dgamma[c] = sdzh, dbeta[c] = sdz;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < HW; p++) {
                double dz = relu[at(n, c, p)] > 0 ? dy[at(n, c, p)] : 0, xh = (x[at(n, c, p)] - mean[c]) * is;
                dx[at(n, c, p)] = gamma[c] * is * (dz - sdz / M - xh * sdzh / M);
            }
    }
}

/* A device buffer of n bytes holding host[0 .. n) (NULL: uninitialised). */
static void *dbuf(rn_device *dev, const void *host, size_t n)
{
    void *b = dev->ops->alloc(dev, n);
    if (host) dev->ops->upload(dev, b, host, n);
    return b;
}

/* An activation on dev from plain NCHW x. */
static void *dact(rn_device *dev, const float *x, const rn_act_shape *a)
{
    void *b = dbuf(dev, NULL, dev->ops->act_bytes(dev, a));
    dev->ops->act_upload(dev, b, x, a);
    return b;
}

static void fetch(rn_device *dev, void *host, const void *buf, size_t n) { dev->ops->download(dev, host, buf, n); }

static void fetch_act(rn_device *dev, float *host, const void *buf, const rn_act_shape *a)
{
    dev->ops->act_download(dev, host, buf, a);
}

/* The split BN ops of dev against float64, whole batch and 2 + 4 samples. */
static void test_ops(rn_device *dev)
{
    const char *dn = dev->name;
    const rn_device_ops *op = dev->ops;
    size_t n = (size_t)N * C * HW, half = (size_t)2 * C * HW;
    float *x = malloc(n * 4), *dy = malloc(n * 4), *relu = malloc(n * 4), *dx = malloc(n * 4), *dx2 = malloc(n * 4);
    double *rdx = malloc(n * 8);
    float gamma[C], mean[C], var[C], mean2[C], var2[C], dg[C] = {0}, db[C] = {0}, dg2[C] = {0}, db2[C] = {0};
    double rmean[C], rvar[C], rdg[C], rdb[C], sums[2 * C + 1], sa[2 * C + 1], sb[2 * C + 1];
    rn_rng r;
    rn_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(1.5 * rn_rng_normal(&r) + 0.7);
        dy[i] = (float)rn_rng_normal(&r);
        relu[i] = rn_rng_uniform(&r) < 0.3 ? 0.0f : 1.0f;
    }
    for (int c = 0; c < C; c++) gamma[c] = (float)(0.5 + rn_rng_uniform(&r));
    bn_ref(rmean, rvar, rdg, rdb, rdx, x, dy, relu, gamma);
    rn_act_shape all = {N, C, HW, 1, RN_NUM_F32}, a2 = {2, C, HW, 1, RN_NUM_F32}, a4 = {N - 2, C, HW, 1, RN_NUM_F32};
    /* the halves as their own tensors (no assumption about the device's layout) */
    void *dx_all = dact(dev, x, &all), *dy_all = dact(dev, dy, &all), *dr_all = dact(dev, relu, &all);
    void *dx_a = dact(dev, x, &a2), *dy_a = dact(dev, dy, &a2), *dr_a = dact(dev, relu, &a2);
    void *dx_b = dact(dev, x + half, &a4), *dy_b = dact(dev, dy + half, &a4), *dr_b = dact(dev, relu + half, &a4);
    void *ddx = dbuf(dev, NULL, op->act_bytes(dev, &all)), *ddx_a = dbuf(dev, NULL, op->act_bytes(dev, &a2));
    void *ddx_b = dbuf(dev, NULL, op->act_bytes(dev, &a4));
    double *dsums = dbuf(dev, NULL, sizeof sums), *dsa = dbuf(dev, NULL, sizeof sa), *dsb = dbuf(dev, NULL, sizeof sb);
    float *dmean = dbuf(dev, NULL, sizeof mean), *dvar = dbuf(dev, NULL, sizeof var), *dgam = dbuf(dev, gamma, sizeof gamma);
    float *dmean2 = dbuf(dev, NULL, sizeof mean), *dvar2 = dbuf(dev, NULL, sizeof var);
    float *ddg = dbuf(dev, dg, sizeof dg), *ddb = dbuf(dev, db, sizeof db), *ddg2 = dbuf(dev, dg2, sizeof dg2);
    float *ddb2 = dbuf(dev, db2, sizeof db2);

    op->bn_sums(dev, dsums, dx_all, &all);
    fetch(dev, sums, dsums, sizeof sums);
    RN_CHECK(sums[2 * C] == (double)N * HW, "%s: bn_sums counts N*HW values", dn);
    op->bn_stats(dev, dmean, dvar, dsums, (double)N * HW, C);
    fetch(dev, mean, dmean, sizeof mean), fetch(dev, var, dvar, sizeof var);
    RN_CHECK(max_rel(mean, rmean, C) < 1e-6 && max_rel(var, rvar, C) < 1e-6, "%s: BN statistics against float64", dn);
    op->bn_sums(dev, dsa, dx_a, &a2);
    op->bn_sums(dev, dsb, dx_b, &a4);
    fetch(dev, sa, dsa, sizeof sa), fetch(dev, sb, dsb, sizeof sb);
    for (int i = 0; i < 2 * C + 1; i++) sums[i] = sa[i] + sb[i];
    op->upload(dev, dsums, sums, sizeof sums);
    op->bn_stats(dev, dmean2, dvar2, dsums, sums[2 * C], C);
    fetch(dev, mean2, dmean2, sizeof mean2), fetch(dev, var2, dvar2, sizeof var2);
    RN_CHECK(max_rel_f(mean2, mean, C) < 1e-6 && max_rel_f(var2, var, C) < 1e-6,
             "%s: stats from the sums of 2 + 4 samples", dn);
    /* whole batch: sums, parameter gradients, dx */
    op->bn_backward_sums(dev, dsums, dy_all, dr_all, dx_all, dmean, &all);
    op->bn_backward_params(dev, ddg, ddb, dsums, dvar, C);
    op->bn_backward_data(dev, ddx, dy_all, dr_all, dx_all, dmean, dvar, dgam, dsums, (double)N * HW, &all);
    fetch_act(dev, dx, ddx, &all), fetch(dev, dg, ddg, sizeof dg), fetch(dev, db, ddb, sizeof db);
    RN_CHECK(max_rel(dx, rdx, n) < 1e-5, "%s: BN backward dx against float64: %g", dn, max_rel(dx, rdx, n));
    RN_CHECK(max_rel(dg, rdg, C) < 1e-5 && max_rel(db, rdb, C) < 1e-5, "%s: dgamma, dbeta against float64", dn);
    /* split: local sums -> local parameter gradients; summed sums -> each half's dx */
    op->bn_backward_sums(dev, dsa, dy_a, dr_a, dx_a, dmean, &a2);
    op->bn_backward_sums(dev, dsb, dy_b, dr_b, dx_b, dmean, &a4);
    op->bn_backward_params(dev, ddg2, ddb2, dsa, dvar, C);
    op->bn_backward_params(dev, ddg2, ddb2, dsb, dvar, C);
    fetch(dev, sa, dsa, 2 * C * sizeof(double)), fetch(dev, sb, dsb, 2 * C * sizeof(double));
    for (int i = 0; i < 2 * C; i++) sums[i] = sa[i] + sb[i];
    op->upload(dev, dsums, sums, 2 * C * sizeof(double));
    op->bn_backward_data(dev, ddx_a, dy_a, dr_a, dx_a, dmean, dvar, dgam, dsums, (double)N * HW, &a2);
    op->bn_backward_data(dev, ddx_b, dy_b, dr_b, dx_b, dmean, dvar, dgam, dsums, (double)N * HW, &a4);
    fetch_act(dev, dx2, ddx_a, &a2), fetch_act(dev, dx2 + half, ddx_b, &a4);
    fetch(dev, dg2, ddg2, sizeof dg2), fetch(dev, db2, ddb2, sizeof db2);
    RN_CHECK(max_rel_f(dx2, dx, n) < 1e-5, "%s: dx of 2 + 4 samples with summed sums: %g", dn, max_rel_f(dx2, dx, n));
    RN_CHECK(max_rel_f(dg2, dg, C) < 1e-5 && max_rel_f(db2, db, C) < 1e-5, "%s: local parameter gradients add up", dn);
    void *bufs[] = {dx_all, dy_all, dr_all, dx_a, dy_a, dr_a, dx_b, dy_b, dr_b, ddx, ddx_a, ddx_b, dsums, dsa, dsb,
                    dmean, dvar, dgam, dmean2, dvar2, ddg, ddb, ddg2, ddb2};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) op->free(dev, bufs[i]);
    free(x), free(dy), free(relu), free(dx), free(dx2), free(rdx);
}

/* Two replicas in two threads; reduce sums their buffers through slots. */
typedef struct shared {
    pthread_barrier_t bar;
    double *slot[2];
} shared;

typedef struct replica {
    shared *sh;
    int id;
    rn_params p;
    rn_model m;
    const float *x, *k, *t, *v, *d;
    double loss;
    int rc;
} replica;

static int reduce2(void *ctx, rn_device *dev, void *vbuf, size_t n, rn_numtype t, rn_err *err)
{
    replica *r = ctx;
    (void)err;
    RN_ASSERT(t == RN_NUM_F64);
    double *buf = malloc(n * sizeof *buf), *tmp = malloc(n * sizeof *tmp); /* host copies: any device */
    dev->ops->download(dev, buf, vbuf, n * sizeof *buf);
    r->sh->slot[r->id] = buf;
    pthread_barrier_wait(&r->sh->bar);
    double *o = r->sh->slot[1 - r->id];
    for (size_t i = 0; i < n; i++) tmp[i] = r->id == 0 ? buf[i] + o[i] : o[i] + buf[i];
    pthread_barrier_wait(&r->sh->bar);
    dev->ops->upload(dev, vbuf, tmp, n * sizeof *tmp);
    free(buf), free(tmp);
    return 0;

}

static void *replica_main(void *arg)
{
    replica *r = arg;
    rn_model_forward(&r->m, r->x, r->k, 1);
    rn_model_zero_grad(&r->m);
    rn_model_backward(&r->m, r->t, r->v, r->d);
    r->loss = rn_model_loss_read(&r->m);
    (void)rn_model_coords(&r->m);
    return NULL;
}

static int params_make(rn_params *p, rn_err *err)
{
    if (rn_params_build(p, 18, err)) return -1;
    rn_rng r;
    rn_rng_seed(&r, 11);
    rn_params_init(p, &r);
    for (size_t i = 0; i < p->n_param; i++) p->param[i] += (float)(0.02 * rn_rng_normal(&r)); /* BN off 1/0 */
    return 0;
}

static void test_model(const char *dn)
{
    enum { B = 4, S = 64 };
    size_t per = 3 * S * S;
    float *x = malloc(B * per * 4), k[B], t[3 * B], v[B], d[B];
    rn_rng r;
    rn_rng_seed(&r, 3);
    for (size_t i = 0; i < B * per; i++) x[i] = (float)rn_rng_normal(&r);
    for (int j = 0; j < B; j++) {
        k[j] = (float)(8000 + 4000 * rn_rng_uniform(&r)), v[j] = 1, d[j] = j % 2 ? 1.0f : 0.0f;
        t[3 * j] = (float)(16 * rn_rng_uniform(&r)), t[3 * j + 1] = (float)(16 * rn_rng_uniform(&r));
        t[3 * j + 2] = (float)(2000 + 4000 * rn_rng_uniform(&r));
    }
    rn_err err = {{0}};
    rn_params p;
    rn_model m;
    rn_model_opts o = {.device = dn, .threads = 1, .compute = RN_NUM_F32};
    int ok = !params_make(&p, &err) && !rn_model_create(&m, &p, B, S, S, &o, &err);
    RN_CHECK(ok, "%s: whole-batch model: %s", dn, err.msg);
    if (!ok) return;
    rn_model_sync_weights(&m);
    rn_model_forward(&m, x, k, 1);
    rn_model_zero_grad(&m);
    rn_model_backward(&m, t, v, d);
    double loss = rn_model_loss_read(&m);
    (void)rn_model_coords(&m);
    shared sh;
    pthread_barrier_init(&sh.bar, NULL, 2);
    replica rep[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        replica *q = &rep[i];
        memset(q, 0, sizeof *q);
        q->sh = &sh, q->id = i;
        rn_model_opts ro = {.device = dn, .threads = 1, .compute = RN_NUM_F32, .reduce = {reduce2, q, 2}};

        q->rc = params_make(&q->p, &err) || rn_model_create(&q->m, &q->p, B / 2, S, S, &ro, &err);
        RN_CHECK(!q->rc, "replica %d: %s", i, err.msg);
        if (q->rc) return;
        rn_model_sync_weights(&q->m);
        q->x = x + (size_t)i * (B / 2) * per, q->k = k + i * (B / 2), q->t = t + 3 * i * (B / 2);
        q->v = v + i * (B / 2), q->d = d + i * (B / 2);
    }
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, replica_main, &rep[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    float coord2[3 * B];
    memcpy(coord2, rep[0].m.coord, sizeof(float) * 3 * (B / 2));
    memcpy(coord2 + 3 * (B / 2), rep[1].m.coord, sizeof(float) * 3 * (B / 2));
    RN_CHECK(max_rel_f(coord2, m.coord, 3 * B) < 1e-5, "%s: SyncBN forward of 2 x 2 = forward of 4: %g", dn,
             max_rel_f(coord2, m.coord, 3 * B));
    double l2 = 0.5 * (rep[0].loss + rep[1].loss);
    RN_CHECK(fabs(l2 - loss) <= 1e-5 * fabs(loss), "%s: mean loss %.9g vs %.9g", dn, l2, loss);
    double num = 0, den = 0;
    size_t gb = p.n_param * sizeof(float);
    float *g0 = malloc(gb), *g1 = malloc(gb), *gw = malloc(gb); /* host copies: any device */
    rn_params_download(&rep[0].p, g0, rep[0].p.grad, gb);
    rn_params_download(&rep[1].p, g1, rep[1].p.grad, gb);
    rn_params_download(&p, gw, p.grad, gb);
    for (size_t i = 0; i < p.n_param; i++) {
        double g = 0.5 * ((double)g0[i] + g1[i]);
        num += (g - gw[i]) * (g - gw[i]), den += (double)gw[i] * gw[i];
    }
    RN_CHECK(sqrt(num / den) < 1e-4, "%s: averaged SyncBN gradients = whole-batch gradients: l2-rel %g", dn,
             sqrt(num / den));
    int differ = 0;
    for (size_t i = 0; i < p.n_param && !differ; i++) differ = g0[i] != g1[i];
    free(g0), free(g1), free(gw);

    RN_CHECK(differ, "%s: the two replicas' gradients differ (each holds its own half)", dn);
    for (int i = 0; i < 2; i++) rn_model_destroy(&rep[i].m), rn_params_free(&rep[i].p);
    pthread_barrier_destroy(&sh.bar);
    rn_model_destroy(&m);
    rn_params_free(&p);
    free(x);
}

int main(void)
{
    rn_device *dev[RN_TEST_MAX_DEVICES];
    int n = rn_test_devices_open(dev, 1);
    RN_CHECK(n > 0, "a device is built in");
    for (int i = 0; i < n; i++) {
        test_ops(dev[i]);
        test_model(dev[i]->name);
    }
    rn_test_devices_close(dev, n);
    RN_CHECK_DONE();
}
