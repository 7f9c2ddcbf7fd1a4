/* bf16 storage (core/bf16.h) and the _bf16 kernel twins (cpu/kernels.h).
 * Rounding against hand-worked bit patterns; each twin against its float
 * kernel run on the widened inputs: bit-equal after one rounding (sums and
 * float outputs bit-equal), except max-pool backward, which rounds after each
 * routed addition (within 2 bf16 ulps). BN, max-pool, GAP, ReLU and the adds
 * also against values worked out by hand, for both twins. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bf16.h"
#include "core/rng.h"
#include "cpu/kernels.h"

enum { N = 2, C = 32, H = 6, W = 5, HW = H * W, OH = 3, OW = 3, E = N * C * HW, EO = N * C * OH * OW };

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_rounding(void)
{
    RN_CHECK(rn_bf16_from_f32(1.0f) == 0x3f80, "1.0");
    RN_CHECK(rn_bf16_from_f32(from_bits(0x3f808000)) == 0x3f80, "tie 1 + 2^-8 rounds to even (down)");
    RN_CHECK(rn_bf16_from_f32(from_bits(0x3f818000)) == 0x3f82, "tie 1 + 3*2^-8 rounds to even (up)");
    RN_CHECK(rn_bf16_from_f32(from_bits(0x3f808001)) == 0x3f81, "just above a tie rounds up");
    RN_CHECK(rn_bf16_from_f32(from_bits(0x3f807fff)) == 0x3f80, "just below a tie rounds down");
    RN_CHECK(rn_bf16_from_f32(-2.5f) == 0xc020, "-2.5 exact");
    RN_CHECK(rn_bf16_from_f32(from_bits(0x7f7fffff)) == 0x7f80, "FLT_MAX rounds to +inf");
    RN_CHECK(rn_bf16_from_f32(INFINITY) == 0x7f80 && rn_bf16_from_f32(-INFINITY) == 0xff80, "infinities");
    rn_bf16 q = rn_bf16_from_f32(from_bits(0x7f800001)); /* a NaN whose payload sits in the low bits */
    RN_CHECK((q & 0x7f80) == 0x7f80 && (q & 0x7f), "NaN stays NaN: %04x", q);
    RN_CHECK(rn_bf16_from_f32(from_bits(0x00000001)) == 0x0000, "smallest subnormal rounds to 0");
    for (uint32_t h = 0; h < 0x10000; h += 7) {
        if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) continue; /* NaN patterns */
        if (rn_bf16_from_f32(rn_bf16_to_f32((rn_bf16)h)) != h) {
            RN_CHECK(0, "round trip of %04x", h);
            return;
        }
    }
    RN_CHECK(1, "round trip of every non-NaN bf16 sampled");
}

/* Random values, representable in bf16: f (widened) and b (bits). */
static void fill(float *f, rn_bf16 *b, size_t n, rn_rng *r, double scale)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = rn_bf16_from_f32((float)(scale * rn_rng_normal(r)));
        f[i] = rn_bf16_to_f32(b[i]);
    }
}

/* Elements where b != round(f); with slack, allow |b - f| <= slack ulps of bf16. */
static int mismatches(const rn_bf16 *b, const float *f, size_t n, int slack)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!slack) {
            bad += b[i] != rn_bf16_from_f32(f[i]);
            continue;
        }
        double ulp = ldexp(1.0, (int)((bits(f[i]) >> 23) & 0xff) - 127 - 7);
        bad += fabs((double)rn_bf16_to_f32(b[i]) - f[i]) > slack * ulp;
    }
    return bad;
}

typedef struct bufs {
    float xf[E], yf[E], rf[E], df[E], of[E];
    rn_bf16 xb[E], yb[E], rb[E], db[E], ob[E];
    float scale[C], shift[C], s2[C], h2[C], mean[C], var[C], gamma[C];
} bufs;

static void test_bn_twins(bufs *t)
{
    double sf[2 * C], sb[2 * C];
    rn_bn_sums(sf, t->xf, N, C, HW);
    rn_bn_sums_bf16(sb, t->xb, N, C, HW);
    RN_CHECK(!memcmp(sf, sb, sizeof sf), "bn_sums equal");
    rn_bn_apply(t->of, t->xf, t->scale, t->shift, 1, N, C, HW);
    rn_bn_apply_bf16(t->ob, t->xb, t->scale, t->shift, 1, N, C, HW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "bn_apply + relu");
    rn_bn_add_relu(t->of, t->xf, t->scale, t->shift, t->rf, N, C, HW);
    rn_bn_add_relu_bf16(t->ob, t->xb, t->scale, t->shift, t->rb, N, C, HW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "bn_add_relu");
    rn_bn2_add_relu(t->of, t->xf, t->scale, t->shift, t->rf, t->s2, t->h2, N, C, HW);
    rn_bn2_add_relu_bf16(t->ob, t->xb, t->scale, t->shift, t->rb, t->s2, t->h2, N, C, HW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "bn2_add_relu");
    rn_bn_backward_sums(sf, t->df, t->yf, t->xf, t->mean, N, C, HW);
    rn_bn_backward_sums_bf16(sb, t->db, t->yb, t->xb, t->mean, N, C, HW);
    RN_CHECK(!memcmp(sf, sb, sizeof sf), "bn_backward_sums equal");
    rn_bn_backward_data(t->of, t->df, t->yf, t->xf, t->mean, t->var, t->gamma, sf, (double)N * HW, N, C, HW);
    rn_bn_backward_data_bf16(t->ob, t->db, t->yb, t->xb, t->mean, t->var, t->gamma, sb, (double)N * HW, N, C, HW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "bn_backward_data");
    int zeros = 0;
    for (int i = 0; i < E; i++) zeros += t->of[i] == 0;
    RN_CHECK(zeros < E / 10, "bn_backward_data output not degenerate (%d zeros)", zeros);
}

static void test_elementwise_twins(bufs *t)
{
    memcpy(t->of, t->df, sizeof t->of), memcpy(t->ob, t->db, sizeof t->ob);
    rn_relu_backward(t->of, t->yf, E);
    rn_relu_backward_bf16(t->ob, t->yb, E);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "relu_backward");
    memcpy(t->of, t->df, sizeof t->of), memcpy(t->ob, t->db, sizeof t->ob);
    rn_add_inplace(t->of, t->xf, E);
    rn_add_inplace_bf16(t->ob, t->xb, E);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "add_inplace");
    float gf[N * C], gb[N * C];
    rn_gap_forward(gf, t->xf, N, C, HW);
    rn_gap_forward_bf16(gb, t->xb, N, C, HW);
    RN_CHECK(!memcmp(gf, gb, sizeof gf), "gap_forward equal");
    memcpy(t->of, t->df, sizeof t->of), memcpy(t->ob, t->db, sizeof t->ob);
    rn_gap_backward(t->of, gf, N, C, HW);
    rn_gap_backward_bf16(t->ob, gf, N, C, HW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0), "gap_backward");
}

static void test_pool_xy_twins(bufs *t)
{
    rn_maxpool_forward(t->of, t->xf, N, C, H, W, OH, OW);
    rn_maxpool_forward_bf16(t->ob, t->xb, N, C, H, W, OH, OW);
    RN_CHECK(!mismatches(t->ob, t->of, EO, 0), "maxpool_forward");
    float dyf[EO];
    for (int i = 0; i < EO; i++) dyf[i] = rn_bf16_to_f32(t->db[i]);
    rn_maxpool_backward(t->of, dyf, t->xf, N, C, H, W, OH, OW);
    rn_maxpool_backward_bf16(t->ob, t->db, t->xb, N, C, H, W, OH, OW);
    RN_CHECK(!mismatches(t->ob, t->of, E, 2), "maxpool_backward within 2 ulps");
    float w[C], b[1] = {0.3f}, lf[N * HW], lb[N * HW];
    for (int c = 0; c < C; c++) w[c] = t->gamma[c] - 1.0f;
    rn_pointwise_forward(lf, t->xf, w, b, N, C, HW, 1);
    rn_pointwise_forward_bf16(lb, t->xb, w, b, N, C, HW, 1);
    RN_CHECK(!memcmp(lf, lb, sizeof lf), "pointwise_forward equal");
    float dwf[C] = {0}, dwb[C] = {0}, dbf[1] = {0}, dbb[1] = {0};
    rn_pointwise_backward(t->of, dwf, dbf, lf, t->xf, w, N, C, HW, 1);
    rn_pointwise_backward_bf16(t->ob, dwb, dbb, lf, t->xb, w, N, C, HW, 1);
    RN_CHECK(!mismatches(t->ob, t->of, E, 0) && !memcmp(dwf, dwb, sizeof dwf) && dbf[0] == dbb[0],
             "pointwise_backward");
}

/* Hand-worked values, so that a mistake shared by a twin and its float kernel
 * shows: one image, 16 channels (one block: element (c, p) at p * 16 + c),
 * each kernel run as float and as bf16 on inputs exact in bf16, each output
 * against the value worked out by hand (float within 1e-5, bf16 within half
 * a bf16 ulp of it more). */
enum { HC = 16, HHW = 16 };

typedef struct hand {
    float f[HC * HHW], of[HC * HHW];
    rn_bf16 b[HC * HHW], ob[HC * HHW];
} hand;

static void hand_set(float *f, rn_bf16 *b, int c, int p, double v)
{
    b[p * HC + c] = rn_bf16_from_f32((float)v);
    f[p * HC + c] = rn_bf16_to_f32(b[p * HC + c]);
}

/* Output (c, p) of the float kernel (of) and of the bf16 twin (ob) against want. */
static int hand_ok(const hand *h, int c, int p, double want)
{
    double got_f = h->of[p * HC + c], got_b = rn_bf16_to_f32(h->ob[p * HC + c]);
    double half_ulp = want == 0 ? 0 : ldexp(1.0, (int)floor(log2(fabs(want))) - 8);
    int ok = fabs(got_f - want) <= 1e-5 && fabs(got_b - want) <= half_ulp + 1e-5;
    if (!ok) fprintf(stderr, "  channel %d position %d: float %.7g, bf16 %.7g, by hand %.7g\n", c, p, got_f, got_b, want);
    return ok;
}

/* BN statistics and normalisation + ReLU: channel c holds (c + 1) x {1, 3, 5, 7}
 * (4 positions): mean 4 (c + 1), biased variance 5 (c + 1)^2; with gamma 2,
 * beta 1 the output is 2 (x - mean) / sqrt(var) + 1 = 1 + 2 {-3, -1, 1, 3} / sqrt(5)
 * = {-1.6832816, 0.1055728, 1.8944272, 3.6832816} for every channel, ReLU'd. */
static void test_hand_bn(hand *h)
{
    const double v[4] = {1, 3, 5, 7}, want[4] = {0, 0.1055728, 1.8944272, 3.6832816};
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) hand_set(h->f, h->b, c, p, (c + 1) * v[p]);
    float mf[HC], vf[HC], mb[HC], vb[HC], gamma[HC], beta[HC], scale[HC], shift[HC];
    double sums[2 * HC];
    rn_bn_stats(mf, vf, sums, h->f, 1, HC, 4);
    rn_bn_sums_bf16(sums, h->b, 1, HC, 4);
    rn_bn_stats_from_sums(mb, vb, sums, 4, HC);
    int ok = 1;
    for (int c = 0; c < HC; c++) {
        double m = 4.0 * (c + 1), var = 5.0 * (c + 1) * (c + 1);
        ok &= fabs(mf[c] - m) <= 1e-6 * m && fabs(mb[c] - m) <= 1e-6 * m;
        ok &= fabs(vf[c] - var) <= 1e-6 * var && fabs(vb[c] - var) <= 1e-6 * var;
        gamma[c] = 2, beta[c] = 1;
    }
    RN_CHECK(ok, "BN statistics by hand: mean 4 (c + 1), biased variance 5 (c + 1)^2");
    rn_bn_fold(scale, shift, NULL, mf, vf, gamma, beta, HC);
    rn_bn_apply(h->of, h->f, scale, shift, 1, 1, HC, 4);
    rn_bn_apply_bf16(h->ob, h->b, scale, shift, 1, 1, HC, 4);
    ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) ok &= hand_ok(h, c, p, want[p]);
    RN_CHECK(ok, "BN normalise + ReLU by hand (float and bf16)");
}

/* 3x3 stride-2 pad-1 max-pool of the 4x4 grid below (+ c in channel c) to 2x2:
 * windows rows/cols {0,1}x{0,1}, {0,1}x{1,2,3}, {1,2,3}x{0,1}, {1,2,3}x{1,2,3}:
 * maxima 9, 9 (tied with (1,3): the first in scan order, (1,1), wins), 12, 12.
 * Backward of dy = {1, 2, 4, 8}: 1 + 2 = 3 to (1,1), 4 + 8 = 12 to (3,1), 0 elsewhere. */
static void test_hand_maxpool(hand *h)
{
    const double grid[16] = {1, 5, 2, 0, 3, 9, 4, 9, 7, 6, 11, 10, 2, 12, 3, 1};
    const double want_y[4] = {9, 9, 12, 12}, dy[4] = {1, 2, 4, 8};
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 16; p++) hand_set(h->f, h->b, c, p, grid[p] + c);
    rn_maxpool_forward(h->of, h->f, 1, HC, 4, 4, 2, 2);
    rn_maxpool_forward_bf16(h->ob, h->b, 1, HC, 4, 4, 2, 2);
    int ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) ok &= hand_ok(h, c, p, want_y[p] + c);
    RN_CHECK(ok, "max-pool forward by hand (float and bf16)");
    float dyf[HC * 4];
    rn_bf16 dyb[HC * 4];
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) hand_set(dyf, dyb, c, p, dy[p]);
    rn_maxpool_backward(h->of, dyf, h->f, 1, HC, 4, 4, 2, 2);
    rn_maxpool_backward_bf16(h->ob, dyb, h->b, 1, HC, 4, 4, 2, 2);
    ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 16; p++) ok &= hand_ok(h, c, p, p == 5 ? 3 : p == 13 ? 12 : 0);
    RN_CHECK(ok, "max-pool backward by hand: routed to the first maximum, summed (float and bf16)");
}

/* GAP of the max-pool grid + c: (85 / 16) + c = 5.3125 + c. GAP backward adds
 * dout / 16 = (c + 1) / 2 (dout = 8 (c + 1)) to every position of dx = 1. */
static void test_hand_gap(hand *h)
{
    const double grid[16] = {1, 5, 2, 0, 3, 9, 4, 9, 7, 6, 11, 10, 2, 12, 3, 1};
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 16; p++) hand_set(h->f, h->b, c, p, grid[p] + c);
    float gf[HC], gb[HC], dout[HC];
    rn_gap_forward(gf, h->f, 1, HC, 16);
    rn_gap_forward_bf16(gb, h->b, 1, HC, 16);
    int ok = 1;
    for (int c = 0; c < HC; c++) ok &= gf[c] == 5.3125f + (float)c && gb[c] == 5.3125f + (float)c;
    RN_CHECK(ok, "GAP forward by hand: 85 / 16 + c (float and bf16)");
    for (int c = 0; c < HC; c++) {
        dout[c] = 8.0f * (float)(c + 1);
        for (int p = 0; p < 16; p++) hand_set(h->of, h->ob, c, p, 1.0);
    }
    rn_gap_backward(h->of, dout, 1, HC, 16);
    rn_gap_backward_bf16(h->ob, dout, 1, HC, 16);
    ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 16; p++) ok &= hand_ok(h, c, p, 1 + (c + 1) / 2.0);
    RN_CHECK(ok, "GAP backward by hand: dx += dout / HW (float and bf16)");
}

/* ReLU backward: d = 3 where y = {-1, 0, 2, 0.5} gives {0, 0, 3, 3}. Add:
 * {1.5, -2, 0.25, 6} + {0.25, 4, -0.25, 1} = {1.75, 2, 0, 7}. BN + add + ReLU:
 * relu(2 x - 1 + r), x = {1, 3, 5, 7}, r = {0, -6, -9, 1}: {1, 0, 0, 14}. */
static void test_hand_relu_add(hand *h)
{
    const double y[4] = {-1, 0, 2, 0.5}, a[4] = {1.5, -2, 0.25, 6}, b[4] = {0.25, 4, -0.25, 1};
    const double x[4] = {1, 3, 5, 7}, r[4] = {0, -6, -9, 1};
    float yf[HC * 4], rf[HC * 4], scale[HC], shift[HC];
    rn_bf16 yb[HC * 4], rb[HC * 4];
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) hand_set(h->of, h->ob, c, p, 3.0), hand_set(yf, yb, c, p, y[p]);
    rn_relu_backward(h->of, yf, HC * 4);
    rn_relu_backward_bf16(h->ob, yb, HC * 4);
    int ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) ok &= hand_ok(h, c, p, y[p] > 0 ? 3 : 0);
    RN_CHECK(ok, "ReLU backward by hand (float and bf16)");
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) hand_set(h->of, h->ob, c, p, a[p]), hand_set(h->f, h->b, c, p, b[p]);
    rn_add_inplace(h->of, h->f, HC * 4);
    rn_add_inplace_bf16(h->ob, h->b, HC * 4);
    ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) ok &= hand_ok(h, c, p, a[p] + b[p]);
    RN_CHECK(ok, "residual add by hand (float and bf16)");
    for (int c = 0; c < HC; c++) {
        scale[c] = 2, shift[c] = -1;
        for (int p = 0; p < 4; p++) hand_set(h->f, h->b, c, p, x[p]), hand_set(rf, rb, c, p, r[p]);
    }
    rn_bn_add_relu(h->of, h->f, scale, shift, rf, 1, HC, 4);
    rn_bn_add_relu_bf16(h->ob, h->b, scale, shift, rb, 1, HC, 4);
    const double want[4] = {1, 0, 0, 14};
    ok = 1;
    for (int c = 0; c < HC; c++)
        for (int p = 0; p < 4; p++) ok &= hand_ok(h, c, p, want[p]);
    RN_CHECK(ok, "BN + residual add + ReLU by hand (float and bf16)");
}

int main(void)
{
    test_rounding();
    hand *h = calloc(1, sizeof *h);
    test_hand_bn(h);
    test_hand_maxpool(h);
    test_hand_gap(h);
    test_hand_relu_add(h);
    free(h);
    bufs *t = calloc(1, sizeof *t);
    rn_rng r;
    rn_rng_seed(&r, 3);
    fill(t->xf, t->xb, E, &r, 2.0);
    fill(t->rf, t->rb, E, &r, 1.0);
    fill(t->df, t->db, E, &r, 0.5);
    fill(t->yf, t->yb, E, &r, 1.0); /* a "ReLU output": about half of it masks */
    for (int c = 0; c < C; c++) {
        t->scale[c] = (float)(0.5 + rn_rng_uniform(&r)), t->shift[c] = (float)(0.3 * rn_rng_normal(&r));
        t->s2[c] = (float)(0.5 + rn_rng_uniform(&r)), t->h2[c] = (float)(0.3 * rn_rng_normal(&r));
        t->mean[c] = (float)(0.1 * rn_rng_normal(&r)), t->var[c] = (float)(0.5 + rn_rng_uniform(&r));
        t->gamma[c] = (float)(0.5 + rn_rng_uniform(&r));
    }
    test_bn_twins(t);
    test_elementwise_twins(t);
    test_pool_xy_twins(t);
    free(t);
    RN_CHECK_DONE();
}
