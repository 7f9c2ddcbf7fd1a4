/* SyncBN without MPI: (1) the split BN kernels (sums, then stats / parameter
 * gradients / dx) against a hand-written float64 BatchNorm, and a batch split
 * 2 + 4 with summed sums equal to the whole batch; (2) the rn_model reduce
 * hook: two models of batch 2 in two threads whose reduce callback sums over
 * both (a barrier in place of MPI) give the forward, loss and averaged
 * gradients of one model of batch 4. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "cpu/kernels.h"
#include "nn/model.h"

enum { N = 6, C = 32, HW = 7, L = 16 };

static size_t at(int n, int c, int p) { return (((size_t)n * (C / L) + c / L) * HW + p) * L + c % L; }

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

static void test_kernels(void)
{
    size_t n = (size_t)N * C * HW, half = (size_t)2 * C * HW;
    float *x = malloc(n * 4), *dy = malloc(n * 4), *relu = malloc(n * 4), *dx = malloc(n * 4), *dx2 = malloc(n * 4);
    double *rdx = malloc(n * 8);
    float gamma[C], mean[C], var[C], mean2[C], var2[C], dg[C] = {0}, db[C] = {0}, dg2[C] = {0}, db2[C] = {0};
    double rmean[C], rvar[C], rdg[C], rdb[C], sums[2 * C], sa[2 * C], sb[2 * C];
    rn_rng r;
    rn_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(1.5 * rn_rng_normal(&r) + 0.7);
        dy[i] = (float)rn_rng_normal(&r);
        relu[i] = rn_rng_uniform(&r) < 0.3 ? 0.0f : 1.0f;
    }
    for (int c = 0; c < C; c++) gamma[c] = (float)(0.5 + rn_rng_uniform(&r));
    bn_ref(rmean, rvar, rdg, rdb, rdx, x, dy, relu, gamma);
    rn_bn_stats(mean, var, sums, x, N, C, HW);
    RN_CHECK(max_rel(mean, rmean, C) < 1e-6 && max_rel(var, rvar, C) < 1e-6, "rn_bn_stats against float64");
    rn_bn_sums(sa, x, 2, C, HW);
    rn_bn_sums(sb, x + half, N - 2, C, HW);
    for (int i = 0; i < 2 * C; i++) sums[i] = sa[i] + sb[i];
    rn_bn_stats_from_sums(mean2, var2, sums, (double)N * HW, C);
    RN_CHECK(max_rel_f(mean2, mean, C) < 1e-6 && max_rel_f(var2, var, C) < 1e-6, "stats from the sums of 2 + 4 samples");
    rn_bn_backward(dx, dg, db, sums, dy, relu, x, mean, var, gamma, N, C, HW);
    RN_CHECK(max_rel(dx, rdx, n) < 1e-5, "rn_bn_backward dx against float64: %g", max_rel(dx, rdx, n));
    RN_CHECK(max_rel(dg, rdg, C) < 1e-5 && max_rel(db, rdb, C) < 1e-5, "dgamma, dbeta against float64");
    /* split: local sums -> local parameter gradients; summed sums -> each half's dx */
    rn_bn_backward_sums(sa, dy, relu, x, mean, 2, C, HW);
    rn_bn_backward_sums(sb, dy + half, relu + half, x + half, mean, N - 2, C, HW);
    rn_bn_backward_params(dg2, db2, sa, var, C);
    rn_bn_backward_params(dg2, db2, sb, var, C);
    for (int i = 0; i < 2 * C; i++) sums[i] = sa[i] + sb[i];
    rn_bn_backward_data(dx2, dy, relu, x, mean, var, gamma, sums, (double)N * HW, 2, C, HW);
    rn_bn_backward_data(dx2 + half, dy + half, relu + half, x + half, mean, var, gamma, sums, (double)N * HW, N - 2,
                        C, HW);
    RN_CHECK(max_rel_f(dx2, dx, n) < 1e-5, "dx of 2 + 4 samples with summed sums: %g", max_rel_f(dx2, dx, n));
    RN_CHECK(max_rel_f(dg2, dg, C) < 1e-5 && max_rel_f(db2, db, C) < 1e-5, "local parameter gradients add up");
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

static void reduce2(void *ctx, double *buf, int n)
{
    replica *r = ctx;
    r->sh->slot[r->id] = buf;
    pthread_barrier_wait(&r->sh->bar);
    double *o = r->sh->slot[1 - r->id];
    double *tmp = malloc((size_t)n * sizeof *tmp);
    for (int i = 0; i < n; i++) tmp[i] = r->id == 0 ? buf[i] + o[i] : o[i] + buf[i];
    pthread_barrier_wait(&r->sh->bar);
    memcpy(buf, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
}

static void *replica_main(void *arg)
{
    replica *r = arg;
    rn_model_forward(&r->m, r->x, r->k, 1);
    rn_params_zero_grad(&r->p);
    r->loss = rn_model_backward(&r->m, r->t, r->v, r->d);
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

static void test_model(void)
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
    rn_model_opts o = {.threads = 1, .compute = RN_COMPUTE_F32};
    int ok = !params_make(&p, &err) && !rn_model_create(&m, &p, B, S, S, &o, &err);
    RN_CHECK(ok, "whole-batch model: %s", err.msg);
    if (!ok) return;
    rn_model_sync_weights(&m);
    rn_model_forward(&m, x, k, 1);
    rn_params_zero_grad(&p);
    double loss = rn_model_backward(&m, t, v, d);
    shared sh;
    pthread_barrier_init(&sh.bar, NULL, 2);
    replica rep[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        replica *q = &rep[i];
        memset(q, 0, sizeof *q);
        q->sh = &sh, q->id = i;
        rn_model_opts ro = {.threads = 1, .compute = RN_COMPUTE_F32, .reduce = {reduce2, q}};
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
    RN_CHECK(max_rel_f(coord2, m.coord, 3 * B) < 1e-5, "SyncBN forward of 2 x 2 = forward of 4: %g",
             max_rel_f(coord2, m.coord, 3 * B));
    double l2 = 0.5 * (rep[0].loss + rep[1].loss);
    RN_CHECK(fabs(l2 - loss) <= 1e-5 * fabs(loss), "mean loss %.9g vs %.9g", l2, loss);
    double num = 0, den = 0;
    for (size_t i = 0; i < p.n_param; i++) {
        double g = 0.5 * ((double)rep[0].p.grad[i] + rep[1].p.grad[i]);
        num += (g - p.grad[i]) * (g - p.grad[i]), den += (double)p.grad[i] * p.grad[i];
    }
    RN_CHECK(sqrt(num / den) < 1e-4, "averaged SyncBN gradients = whole-batch gradients: l2-rel %g", sqrt(num / den));
    int differ = 0;
    for (size_t i = 0; i < p.n_param && !differ; i++) differ = rep[0].p.grad[i] != rep[1].p.grad[i];
    RN_CHECK(differ, "the two replicas' gradients differ (each holds its own half)");
    for (int i = 0; i < 2; i++) rn_model_destroy(&rep[i].m), rn_params_free(&rep[i].p);
    pthread_barrier_destroy(&sh.bar);
    rn_model_destroy(&m);
    rn_params_free(&p);
    free(x);
}

int main(void)
{
    test_kernels();
    test_model();
    RN_CHECK_DONE();
}
