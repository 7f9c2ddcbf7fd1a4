/* The model's memory plan (nn/model.h): buffers whose lifetimes do not meet share the arena, and the
 * lifetimes are right.
 *  - ResNet-18 and ResNet-50 RootNets, one forward and backward on ref, and on ref-guard with
 *    .poison = 1: backward fills NaN into every planned buffer it has finished with and into each of
 *    its gradient buffers as it comes to life, so an op that read a buffer past its planned lifetime,
 *    or a gradient buffer before writing it, would change the result. Loss, output and every
 *    gradient are bit-equal to ref's; so they are on the cpu device in bf16-o2 (NaN in both bf16
 *    halves of the poison), where it is built.
 *  - The plan reuses memory (the arena is smaller than the sum of its buffers and than the plan
 *    before reuse: activations + 4 gradient buffers of the largest activation), is as small as its
 *    lifetimes allow (arena == live_peak), and no two buffers live at one time overlap (checked
 *    here over m.bufs, as create asserts).
 *  - rn_model_plan gives create's plan without allocating; an inference model plans no gradients and its
 *    activations share memory (each lives until the next phase has read it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/model.h"

enum { N = 2, S = 32 };

typedef struct run {
    rn_params p;
    rn_model m;
    float *grad;  /* host copy after one backward */
    float coord[3 * N];
    double loss;
} run;

/* One forward and backward of a ResNet-depth on device `name` (same weights and inputs every time). */
static int run_step(run *r, int depth, const char *name, rn_numtype compute, rn_numtype act, int poison)
{
    rn_err err = {{0}};
    rn_rng rng;
    rn_rng_seed(&rng, 11);
    memset(r, 0, sizeof *r);
    if (rn_params_build(&r->p, depth, &err)) return -1;
    rn_params_init(&r->p, &rng);
    rn_model_opts o = {.device = name, .threads = 1, .compute = compute, .act = act, .poison = poison};
    if (rn_model_create(&r->m, &r->p, N, S, S, &o, &err)) {
        printf("%s: %s\n", name, err.msg);
        rn_params_free(&r->p);
        return -1;
    }
    rn_model_sync_weights(&r->m);
    float *x = rn_xmalloc((size_t)N * 3 * S * S * sizeof *x);
    for (size_t i = 0; i < (size_t)N * 3 * S * S; i++) x[i] = (float)rn_rng_normal(&rng);
    float k[N] = {1500.0f, 2500.0f}, t[3 * N] = {3.0f, 5.0f, 2000.0f, 11.0f, 7.0f, 3000.0f}, v[N] = {1, 1}, d[N] = {1, 1};
    rn_model_zero_grad(&r->m);
    rn_model_forward(&r->m, x, k, 1);
    rn_model_backward(&r->m, t, v, d);
    r->loss = rn_model_loss_read(&r->m);
    memcpy(r->coord, rn_model_coords(&r->m), sizeof r->coord);
    size_t np = r->p.n_param * sizeof(float);
    r->grad = rn_xmalloc(np);
    rn_params_download(&r->p, r->grad, r->p.grad, np);
    free(x);
    return 0;
}

static void run_free(run *r)
{
    rn_model_destroy(&r->m);
    rn_params_free(&r->p);
    free(r->grad);
}

/* Bit-equal results of a and b (what: their names). */
static void same_results(const run *a, const run *b, const char *what)
{
    RN_CHECK(!memcmp(&a->loss, &b->loss, sizeof a->loss), "%s: loss %.17g == %.17g", what, a->loss, b->loss);
    RN_CHECK(!memcmp(a->coord, b->coord, sizeof a->coord), "%s: output bit-equal", what);
    size_t bad = 0, np = a->p.n_param;
    for (size_t i = 0; i < np; i++) bad += memcmp(&a->grad[i], &b->grad[i], sizeof *a->grad) != 0;
    RN_CHECK(!bad, "%s: every gradient bit-equal (%zu of %zu differ)", what, bad, np);
}

static int lives_meet(const rn_model_buf *a, const rn_model_buf *b) { return a->t0 <= b->t1 && b->t0 <= a->t1; }

/* The plan of m: no two buffers live at one time overlap; reuse; as small as its lifetimes allow. */
static void check_plan(const rn_model *m, const char *what)
{
    long clash = 0, shared = 0;
    for (int i = 0; i < m->nbufs; i++)
        for (int j = i + 1; j < m->nbufs; j++) {
            const rn_model_buf *a = &m->bufs[i], *b = &m->bufs[j];
            int meet = a->off < b->off + b->bytes && b->off < a->off + a->bytes;
            clash += meet && lives_meet(a, b);
            shared += meet;
        }
    const rn_model_mem *mem = &m->mem;
    size_t sum = 0, max_act = 0;
    for (int k = 0; k < RN_MEM_KINDS; k++) sum += mem->by_kind[k];
    for (int i = 0; i < m->nbufs; i++)
        if (m->bufs[i].kind == RN_MEM_ACT && m->bufs[i].bytes > max_act) max_act = m->bufs[i].bytes;
    size_t before = sum - mem->by_kind[RN_MEM_GRAD] + 4 * max_act;
    RN_CHECK(!clash && shared > 0, "%s: %ld pairs share memory, none of them live at one time (%ld are)", what, shared,
             clash);
    RN_CHECK(mem->arena == m->arena_bytes && mem->arena < sum && mem->arena < before,
             "%s: arena %zu bytes < %zu (no reuse) and < %zu (4 gradient buffers of the largest activation)", what,
             mem->arena, sum, before);
    RN_CHECK(mem->arena == mem->live_peak, "%s: arena %zu == the most live at once %zu", what, mem->arena,
             mem->live_peak);
    RN_CHECK(mem->params == (4 * m->p->n_param + m->p->n_stats) * sizeof(float), "%s: params bytes", what);
}

static void test_guarded(int depth)
{
    char what[64];
    snprintf(what, sizeof what, "ResNet-%d ref vs ref-guard, poisoned", depth);
    run ref, gd;
    int ok = !run_step(&ref, depth, "ref", RN_NUM_F32, RN_NUM_F32, 0);
    ok = ok && !run_step(&gd, depth, "ref-guard", RN_NUM_F32, RN_NUM_F32, 1);
    RN_CHECK(ok, "%s: both ran", what);
    if (!ok) return;
    same_results(&ref, &gd, what);
    check_plan(&gd.m, what);
    run_free(&ref);
    run_free(&gd);
}

/* bf16-o2 on the cpu device, poisoned or not (skipped where the cpu device or its bf16 is absent). */
static void test_cpu_bf16(void)
{
    run a, b;
    if (run_step(&a, 50, "cpu", RN_NUM_BF16, RN_NUM_BF16, 0)) {
        printf("cpu bf16-o2 not here: skipped\n");
        return;
    }
    RN_CHECK(!run_step(&b, 50, "cpu", RN_NUM_BF16, RN_NUM_BF16, 1), "cpu bf16-o2 poisoned ran");
    same_results(&a, &b, "ResNet-50 cpu bf16-o2, poisoned");
    check_plan(&b.m, "ResNet-50 cpu bf16-o2");
    run_free(&a);
    run_free(&b);
}

/* rn_model_plan == create's plan; an inference model's has no gradients. */
static void test_plan_only(void)
{
    rn_err err = {{0}};
    rn_params p;
    RN_ASSERT(!rn_params_build(&p, 50, &err));
    rn_model_opts o = {.device = "ref", .threads = 1, .compute = RN_NUM_F32};
    rn_model_mem mem, inf;
    rn_model m;
    int ok = !rn_model_plan(&mem, &p, N, S, S, &o, &err) && !rn_model_create(&m, &p, N, S, S, &o, &err);
    RN_CHECK(ok, "plan and create: %s", err.msg);
    if (ok) {
        RN_CHECK(!memcmp(&mem, &m.mem, sizeof mem), "rn_model_plan gives create's plan (arena %zu)", mem.arena);
        rn_model_destroy(&m);
    }
    o.inference = 1;
    RN_CHECK(!rn_model_plan(&inf, &p, N, S, S, &o, &err) && inf.by_kind[RN_MEM_GRAD] == 0 &&
                 inf.by_kind[RN_MEM_ACT] == mem.by_kind[RN_MEM_ACT],
             "inference: no gradient buffers, the same activations");
    RN_CHECK(inf.arena * 2 < inf.by_kind[RN_MEM_ACT],
             "inference: each activation lives only until the next phase has read it (arena %zu of %zu)", inf.arena,
             inf.by_kind[RN_MEM_ACT]);
    RN_CHECK(rn_model_plan(&inf, &p, 0, S, S, &o, &err) == -1, "batch 0 refused: %s", err.msg);
    rn_params_free(&p);
}

int main(void)
{
    test_plan_only();
    test_guarded(18);
    test_guarded(50);
    test_cpu_bf16();
    RN_CHECK_DONE();
}
