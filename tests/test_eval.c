/* Tests of src/eval: hand-worked AP_root and MRPE cases, camera conversion,
 * result/GT JSON round trips and bad input. Python comparisons on random
 * cases are in tests/t_eval.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "eval/metrics.h"
#include "eval/results.h"

/* Equal up to rounding: relative 1e-12. */
static int CLOSE(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (1.0 + fabs(b));
}

static char g_dir[256];

static rn_root_gt gt_(int64_t img, double x, double y, double z, int valid, int action)
{
    rn_root_gt g = {img, -1, {x, y, z}, valid, action};
    return g;
}

static rn_root_pred pred_(int64_t img, double x, double y, double z, double score)
{
    rn_root_pred p = {img, -1, {10, 20, 100, 120}, {x, y, z}, score};
    return p;
}

static const char *tmp_path(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%s", g_dir, name);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    RN_ASSERT(f);
    fputs(text, f);
    fclose(f);
}

/* GT (file order)                 valid  note
 *   g0 img1 (0,0,3000)              1
 *   g1 img1 (1000,0,3000)           1
 *   g2 img1 (0,0,3100)              0    nearer to p0/p1 than g0, but not valid
 *   g3 img2 (0,0,5000)              1
 *   g4 img3 (0,0,4000)              0    img3 has no valid GT
 *   g5 img4 (500,500,4000)          1    never predicted: a miss
 * 4 valid GT.
 * Predictions (input order), score, outcome at thr 250:
 *   p0 img1 (0,0,3090)     0.9   nearest valid g0 at 90       -> TP
 *   p1 img1 (0,0,3050)     0.8   nearest g0 at 50, taken      -> FP (no fall back to g1)
 *   p2 img2 (0,0,5300)     0.6   g3 at 300 >= 250             -> FP
 *   p3 img3 (0,0,4000)     0.7   no valid GT in img3          -> skipped
 *   p4 img1 (1000,100,3000) 0.6  g1 at 100                    -> TP
 *   p5 img2 (0,0,5100)     0.6   g3 at 100                    -> TP
 *   p6 img9 (0,0,3000)     0.95  no GT image                  -> skipped
 * Sorted: p6 p0 p1 p3 p2 p4 p5 (ties p2,p4,p5 keep input order).
 * Counted: TP FP FP TP TP; precision 1, 1/2, 1/3, 2/4, 3/5; recall 1/4, 1/4, 1/4, 2/4, 3/4.
 * AP = sum_{n>=1} p[n](r[n]-r[n-1]) = 0 + 0 + (1/2)(1/4) + (3/5)(1/4) = 0.275.
 * (Ties broken the other way, p5 p4 p2: TP FP TP TP FP -> AP 1/6 + 3/16.)
 * At thr 350: p2 takes g3 (TP) before p5 (FP): TP FP TP TP FP,
 *   precision 1, 1/2, 2/3, 3/4, 3/5; recall 1/4, 1/4, 2/4, 3/4, 3/4 -> AP = (2/3)(1/4) + (3/4)(1/4) = 17/48.
 * At thr 300: p2 is exactly 300 away, not < 300 -> as at 250: 0.275. */
static void test_ap_hand(void)
{
    rn_root_gt gt[] = {gt_(1, 0, 0, 3000, 1, -1),    gt_(1, 1000, 0, 3000, 1, -1), gt_(1, 0, 0, 3100, 0, -1),
                       gt_(2, 0, 0, 5000, 1, -1),    gt_(3, 0, 0, 4000, 0, -1),    gt_(4, 500, 500, 4000, 1, -1)};
    rn_root_pred p[] = {pred_(1, 0, 0, 3090, 0.9), pred_(1, 0, 0, 3050, 0.8),    pred_(2, 0, 0, 5300, 0.6),
                        pred_(3, 0, 0, 4000, 0.7), pred_(1, 1000, 100, 3000, 0.6), pred_(2, 0, 0, 5100, 0.6),
                        pred_(9, 0, 0, 3000, 0.95)};
    rn_ap_result r;
    rn_err err = {0};
    RN_CHECK(rn_eval_mupots_ap(&r, p, 7, gt, 6, 250.0, &err) == 0, "ap: %s", err.msg);
    RN_CHECK(CLOSE(r.ap, 0.275), "AP@250 = %.17g, want 0.275", r.ap);
    RN_CHECK(r.n_tp == 3 && r.n_fp == 2 && r.n_skipped == 2 && r.n_gt == 4, "counts tp %zu fp %zu skip %zu gt %zu",
             r.n_tp, r.n_fp, r.n_skipped, r.n_gt);
    RN_CHECK(rn_eval_mupots_ap(&r, p, 7, gt, 6, 350.0, &err) == 0, "ap: %s", err.msg);
    RN_CHECK(CLOSE(r.ap, 17.0 / 48.0), "AP@350 = %.17g, want 17/48", r.ap);
    RN_CHECK(rn_eval_mupots_ap(&r, p, 7, gt, 6, 300.0, &err) == 0, "ap: %s", err.msg);
    RN_CHECK(CLOSE(r.ap, 0.275), "AP@300 (distance == thr is a miss) = %.17g, want 0.275", r.ap);
}

/* Equal distances: the first GT in file order wins, even when it is taken.
 *   g0 img5 (0,0,2000), g1 img5 (0,0,2200), both valid.
 *   q0 (0,0,2100) 0.9: 100 from both -> g0, TP
 *   q1 (0,0,2100) 0.8: again g0, taken -> FP
 *   q2 (0,0,2190) 0.7: g1 at 10 -> TP
 * precision 1, 1/2, 2/3; recall 1/2, 1/2, 1 -> AP = (2/3)(1/2) = 1/3. */
static void test_ap_equal_distance(void)
{
    rn_root_gt gt[] = {gt_(5, 0, 0, 2000, 1, -1), gt_(5, 0, 0, 2200, 1, -1)};
    rn_root_pred p[] = {pred_(5, 0, 0, 2100, 0.9), pred_(5, 0, 0, 2100, 0.8), pred_(5, 0, 0, 2190, 0.7)};
    rn_ap_result r;
    rn_err err = {0};
    RN_CHECK(rn_eval_mupots_ap(&r, p, 3, gt, 2, 250.0, &err) == 0, "ap: %s", err.msg);
    RN_CHECK(CLOSE(r.ap, 1.0 / 3.0), "AP equal distance = %.17g, want 1/3", r.ap);
    /* The first counted prediction's recall is never added (the authors' sum starts at n = 1):
     * one prediction, one GT, a hit -> AP 0. */
    RN_CHECK(rn_eval_mupots_ap(&r, p, 1, gt, 1, 250.0, &err) == 0 && r.ap == 0.0 && r.n_tp == 1,
             "single hit AP %.17g", r.ap);
}

static void test_ap_bad(void)
{
    rn_root_gt gt[] = {gt_(1, 0, 0, 3000, 1, -1), gt_(1, 0, 0, 3000, 0, -1)};
    rn_root_pred p[] = {pred_(1, 0, 0, 3000, 0.5), pred_(1, 0, NAN, 3000, 0.5)};
    rn_ap_result r;
    rn_err err = {0};
    RN_CHECK(rn_eval_mupots_ap(&r, p, 2, gt, 1, 250.0, &err) < 0 && strstr(err.msg, "prediction 1") &&
                 strstr(err.msg, "root_cam"),
             "NaN root rejected: %s", err.msg);
    p[1].root_cam[1] = 0;
    p[1].score = NAN;
    RN_CHECK(rn_eval_mupots_ap(&r, p, 2, gt, 1, 250.0, &err) < 0 && strstr(err.msg, "score"), "NaN score: %s",
             err.msg);
    RN_CHECK(rn_eval_mupots_ap(&r, p, 1, gt + 1, 1, 250.0, &err) < 0 && strstr(err.msg, "no valid"),
             "no valid GT: %s", err.msg);
    RN_CHECK(rn_eval_mupots_ap(&r, p, 0, gt, 1, 250.0, &err) == 0 && r.ap == 0.0 && r.n_gt == 1, "no predictions");
    RN_CHECK(rn_eval_mupots_ap(&r, p, 1, gt, 1, 0.0, &err) < 0 && strstr(err.msg, "threshold"), "thr 0: %s",
             err.msg);
}

/* Pairs (pred - gt):             dist  |dx| |dy| |dz|  action
 *   (30,40,0)                     50    30   40   0     2 Directions
 *   (0,0,120)                    120     0    0 120     2 Directions
 *   (-60,0,80)                   100    60    0  80     5 Greeting
 * total 270/3 = 90, x 30, y 40/3, z 200/3; Directions 85 (2), Greeting 100 (1). */
static void test_mrpe_hand(void)
{
    rn_root_gt gt[] = {gt_(11, 0, 0, 5000, 1, 2), gt_(12, 100, 100, 4000, 1, 2), gt_(13, 0, 0, 3000, 1, 5)};
    rn_root_pred p[] = {pred_(11, 30, 40, 5000, 1), pred_(12, 100, 100, 4120, 1), pred_(13, -60, 0, 3080, 1)};
    rn_h36m_result r;
    rn_err err = {0};
    RN_CHECK(rn_eval_h36m_mrpe(&r, p, gt, NULL, 3, &err) == 0, "h36m: %s", err.msg);
    RN_CHECK(CLOSE(r.all.total, 90) && CLOSE(r.all.x, 30) && CLOSE(r.all.y, 40.0 / 3) && CLOSE(r.all.z, 200.0 / 3),
             "MRPE %.17g %.17g %.17g %.17g", r.all.total, r.all.x, r.all.y, r.all.z);
    RN_CHECK(CLOSE(r.action[0], 85) && r.action_n[0] == 2, "Directions %g (%zu)", r.action[0], r.action_n[0]);
    RN_CHECK(CLOSE(r.action[3], 100) && r.action_n[3] == 1, "Greeting %g (%zu)", r.action[3], r.action_n[3]);
    RN_CHECK(isnan(r.action[1]) && r.action_n[1] == 0, "empty action is NaN");
    RN_CHECK(!strcmp(rn_h36m_action_names[3], "Greeting") && !strcmp(rn_h36m_action_names[14], "WalkTogether"),
             "action names");

    /* The same, predictions in another order, paired by image id. */
    rn_root_pred q[] = {p[2], p[0], p[1]};
    size_t idx[3];
    RN_CHECK(rn_eval_pair(idx, q, 3, gt, 3, 0, &err) == 0 && idx[0] == 2 && idx[1] == 0 && idx[2] == 1,
             "pair by image id: %s", err.msg);
    rn_h36m_result r2;
    RN_CHECK(rn_eval_h36m_mrpe(&r2, q, gt, idx, 3, &err) == 0 && CLOSE(r2.all.total, 90) && CLOSE(r2.action[0], 85),
             "paired MRPE %g", r2.all.total);
    /* Two GT with one image id (Human36M_eval takes the image's first annotation): the first wins. */
    rn_root_gt dup[] = {gt_(13, 9, 9, 9, 1, 2), gt_(12, 0, 0, 0, 1, 2), gt_(13, 0, 0, 3000, 1, 5)};
    RN_CHECK(rn_eval_pair(idx, q, 1, dup, 3, 0, &err) == 0 && idx[0] == 0, "first GT of an image: %zu", idx[0]);
    q[0].image_id = 99;
    RN_CHECK(rn_eval_pair(idx, q, 3, gt, 3, 0, &err) < 0 && strstr(err.msg, "prediction 0") && strstr(err.msg, "99"),
             "unpaired: %s", err.msg);
    gt[1].action = 17;
    RN_CHECK(rn_eval_h36m_mrpe(&r, p, gt, NULL, 3, &err) < 0 && strstr(err.msg, "action"), "action 17: %s", err.msg);
    p[0].root_cam[2] = INFINITY;
    rn_mrpe m;
    RN_CHECK(rn_eval_mrpe(&m, p, gt, NULL, 3, &err) < 0 && strstr(err.msg, "prediction 0"), "inf root: %s", err.msg);
    RN_CHECK(rn_eval_mrpe(&m, p, gt, NULL, 0, &err) < 0, "n = 0 rejected");
}

/* 3DPW, metres, paired by ann_id: errors (0.3,0.4,0) -> 0.5 and (0,0,-0.2) -> 0.2. */
static void test_pw3d_hand(void)
{
    rn_root_gt gt[] = {{1, 500, {0, 0, 3}, 1, -1}, {1, 501, {1, 0, 4}, 1, -1}};
    rn_root_pred p[] = {{1, 501, {0, 0, 9, 9}, {1, 0, 3.8}, 1}, {1, 500, {0, 0, 9, 9}, {0.3, 0.4, 3}, 1}};
    size_t idx[2];
    rn_mrpe m;
    rn_err err = {0};
    RN_CHECK(rn_eval_pair(idx, p, 2, gt, 2, 1, &err) == 0 && idx[0] == 1 && idx[1] == 0, "pair by ann_id");
    RN_CHECK(rn_eval_mrpe(&m, p, gt, idx, 2, &err) == 0 && CLOSE(m.total, 0.35) && CLOSE(m.x, 0.15) &&
                 CLOSE(m.y, 0.2) && CLOSE(m.z, 0.1),
             "PW3D MRPE %.17g %.17g %.17g %.17g", m.total, m.x, m.y, m.z);
}

static void test_camera(void)
{
    /* x: 32/64*256+100 = 228, y: 16/64*128+200 = 232. */
    const float out[3] = {32, 16, 5000}, bbox[4] = {100, 200, 256, 128};
    double img[3];
    rn_eval_output_to_image(img, out, bbox, 64, 64);
    RN_CHECK(img[0] == 228 && img[1] == 232 && img[2] == 5000, "output to image %g %g %g", img[0], img[1], img[2]);
    /* X = (600-500)/1000*5000 = 500, Y = (300-400)/1200*5000 = -1250/3. */
    const double pix[3] = {600, 300, 5000}, f[2] = {1000, 1200}, c[2] = {500, 400};
    double cam[3];
    rn_eval_image_to_cam(cam, pix, f, c);
    RN_CHECK(CLOSE(cam[0], 500) && CLOSE(cam[1], -1250.0 / 3) && cam[2] == 5000, "image to cam %g %g", cam[0],
             cam[1]);
    rn_sample s;
    memset(&s, 0, sizeof s);
    s.image_id = 42;
    s.ann_id = 7;
    s.f[0] = 1000, s.f[1] = 1200, s.c[0] = 500, s.c[1] = 400;
    s.bbox[2] = 256;
    s.score = 0.5f;
    s.root_cam[2] = 4000;
    s.is_valid = 1;
    s.action = 3;
    rn_root_pred p;
    rn_root_gt g;
    rn_eval_pred_from_sample(&p, &s, pix);
    rn_eval_gt_from_sample(&g, &s);
    RN_CHECK(p.image_id == 42 && p.ann_id == 7 && p.bbox[2] == 256 && p.score == 0.5 && CLOSE(p.root_cam[0], 500),
             "pred from sample");
    RN_CHECK(g.image_id == 42 && g.root_cam[2] == 4000 && g.is_valid == 1 && g.action == 3, "gt from sample");
    rn_eval_kind k;
    rn_err err = {0};
    RN_CHECK(rn_eval_kind_parse(&k, "Human36M", &err) == 0 && k == RN_EVAL_H36M, "kind Human36M");
    RN_CHECK(rn_eval_kind_parse(&k, "3DPW", &err) == 0 && k == RN_EVAL_PW3D, "kind 3DPW");
    RN_CHECK(rn_eval_kind_parse(&k, "COCO", &err) < 0 && strstr(err.msg, "COCO"), "unknown kind: %s", err.msg);
}

static int same_pred(const rn_root_pred *a, const rn_root_pred *b, rn_eval_kind kind)
{
    int same = a->image_id == b->image_id && !memcmp(a->bbox, b->bbox, sizeof a->bbox) &&
               !memcmp(a->root_cam, b->root_cam, sizeof a->root_cam);
    if (kind == RN_EVAL_MUPOTS) same = same && a->score == b->score;
    if (kind == RN_EVAL_PW3D) same = same && a->ann_id == b->ann_id;
    return same;
}

static void test_results_roundtrip(void)
{
    rn_root_pred p[3] = {
        {1, 10, {0.1, 1.0 / 3, 256.5, 300}, {-123.456789012345678, 1e-7, 4567.000000001}, 0.987654321},
        {2, 11, {1, 2, 3, 4}, {0, 0, 1}, 0.1},
        {3000000000LL, 12, {5, 6, 7, 8}, {2.0 / 3, -1.0 / 7, 7777}, 1},
    };
    char path[512], text[4096];
    for (int k = 0; k < 3; k++) {
        rn_eval_kind kind = (rn_eval_kind)k;
        tmp_path(path, rn_eval_results_filename(kind));
        rn_err err = {0};
        RN_CHECK(rn_eval_results_write(path, kind, p, 3, &err) == 0, "write %s: %s", path, err.msg);
        rn_root_pred *q = NULL;
        size_t n = 0;
        RN_CHECK(rn_eval_results_read(&q, &n, path, kind, &err) == 0 && n == 3, "read %s: %s", path, err.msg);
        for (size_t i = 0; q && i < n; i++) RN_CHECK(same_pred(&p[i], &q[i], kind), "%s record %zu", path, i);
        if (q && kind == RN_EVAL_H36M) RN_CHECK(q[0].score == 1.0 && q[0].ann_id == -1, "defaults");
        free(q);
        FILE *f = fopen(path, "r");
        size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[len] = 0;
        RN_CHECK(!!strstr(text, "\"score\"") == (kind == RN_EVAL_MUPOTS), "%s: score field", path);
        RN_CHECK(!!strstr(text, "\"ann_id\"") == (kind == RN_EVAL_PW3D), "%s: ann_id field", path);
        RN_CHECK(strstr(text, "\"image_id\": 1,") || strstr(text, "\"image_id\":1,"), "%s: integer image_id", path);
        unlink(path);
    }
    rn_root_pred bad = p[0];
    bad.root_cam[0] = NAN;
    rn_err err = {0};
    RN_CHECK(rn_eval_results_write(tmp_path(path, "nan.json"), RN_EVAL_H36M, &bad, 1, &err) < 0 &&
                 strstr(err.msg, "record 0") && access(path, F_OK) != 0,
             "NaN not written: %s", err.msg);
    RN_CHECK(rn_eval_results_write("/nonexistent-dir/x.json", RN_EVAL_H36M, p, 1, &err) < 0 &&
                 strstr(err.msg, "/nonexistent-dir/x.json"),
             "unwritable: %s", err.msg);
}

/* Reads text as a result file of a kind; expects failure with all of the needles in the message. */
static void expect_read_error(rn_eval_kind kind, const char *text, const char *n1, const char *n2, const char *n3)
{
    char path[512];
    write_text(tmp_path(path, "bad.json"), text);
    rn_root_pred *q = (rn_root_pred *)1;
    size_t n = 7;
    rn_err err = {0};
    int rc = rn_eval_results_read(&q, &n, path, kind, &err);
    RN_CHECK(rc < 0 && q == NULL && n == 0 && strstr(err.msg, path) && strstr(err.msg, n1) &&
                 (!n2 || strstr(err.msg, n2)) && (!n3 || strstr(err.msg, n3)),
             "bad input '%s': got '%s'", text, err.msg);
    unlink(path);
}

static void test_results_bad(void)
{
    const char *ok = "{\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2, 3], \"score\": 0.5}";
    char buf[1024];
    expect_read_error(RN_EVAL_MUPOTS, "[{\"image_id\": 1, \"bbox\": [1,2", "malformed", NULL, NULL);
    expect_read_error(RN_EVAL_MUPOTS, "[{\"image_id\": 1, \"root_cam\": [NaN, 1, 2]}]", "malformed", NULL, NULL);
    expect_read_error(RN_EVAL_MUPOTS, "{\"image_id\": 1}", "not a JSON array", NULL, NULL);
    snprintf(buf, sizeof buf, "[%s, {\"image_id\": 2, \"bbox\": [1, 2, 3, 4], \"score\": 1}]", ok);
    expect_read_error(RN_EVAL_MUPOTS, buf, "record 1", "'root_cam'", "missing");
    snprintf(buf, sizeof buf, "[%s, {\"image_id\": 2, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2]}]", ok);
    expect_read_error(RN_EVAL_H36M, buf, "record 1", "'root_cam'", "3 numbers");
    snprintf(buf, sizeof buf, "[%s, {\"image_id\": 2, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, \"2\", 3]}]", ok);
    expect_read_error(RN_EVAL_H36M, buf, "record 1", "'root_cam'", "numbers");
    expect_read_error(RN_EVAL_MUPOTS, "[{\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2, 3]}]",
                      "record 0", "'score'", "missing");
    expect_read_error(RN_EVAL_PW3D, "[{\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2, 3]}]",
                      "record 0", "'ann_id'", "missing");
    expect_read_error(RN_EVAL_H36M, "[{\"image_id\": 1.5, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2, 3]}]",
                      "record 0", "'image_id'", "integer");
    expect_read_error(RN_EVAL_H36M, "[{\"image_id\": 1, \"bbox\": [1, 2, 0, 4], \"root_cam\": [1, 2, 3]}]",
                      "record 0", "'bbox'", "empty");
    expect_read_error(RN_EVAL_H36M, "[{\"image_id\": 1, \"bbox\": [1, 2, 3, 4], \"root_cam\": [1, 2, 1e999]}]",
                      "overflow", NULL, NULL);
    expect_read_error(RN_EVAL_H36M, "[3]", "record 0", "object", NULL);
    rn_root_pred *q;
    size_t n;
    rn_err err = {0};
    RN_CHECK(rn_eval_results_read(&q, &n, "/nonexistent/r.json", RN_EVAL_H36M, &err) < 0 &&
                 strstr(err.msg, "/nonexistent/r.json"),
             "missing file: %s", err.msg);
}

static void test_gt_files(void)
{
    char path[512];
    rn_err err = {0};
    rn_root_gt *g = NULL;
    size_t n = 0;
    write_text(tmp_path(path, "mupots.json"),
               "{\"images\": [{\"id\": 4}], \"annotations\": ["
               "{\"id\": 8, \"image_id\": 4, \"is_valid\": 1, \"keypoints_cam\": [[0,0,0],[0,0,0],[0,0,0],[0,0,0],"
               "[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[1.5,-2,3000],"
               "[0,0,0],[0,0,0]]},"
               "{\"id\": 9, \"image_id\": 4, \"is_valid\": 0, \"keypoints_cam\": [[0,0,0],[0,0,0],[0,0,0],[0,0,0],"
               "[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[7,8,9],"
               "[0,0,0],[0,0,0]]}]}");
    RN_CHECK(rn_eval_gt_read(&g, &n, path, &err) == 0 && n == 2, "MuPoTS GT: %s", err.msg);
    if (g && n == 2) {
        RN_CHECK(g[0].image_id == 4 && g[0].ann_id == 8 && g[0].is_valid == 1 && g[0].root_cam[0] == 1.5 &&
                     g[0].root_cam[1] == -2 && g[0].root_cam[2] == 3000 && g[0].action == -1,
                 "MuPoTS GT record 0 (joint 14)");
        RN_CHECK(g[1].is_valid == 0 && g[1].root_cam[2] == 9, "MuPoTS GT record 1");
    }
    free(g);
    write_text(path, "{\"annotations\": [{\"id\": 8, \"image_id\": 4, \"is_valid\": 1, \"keypoints_cam\": [[0,0,0]]}]}");
    RN_CHECK(rn_eval_gt_read(&g, &n, path, &err) < 0 && strstr(err.msg, "record 0") &&
                 strstr(err.msg, "keypoints_cam"),
             "short keypoints: %s", err.msg);
    rn_root_gt w[2] = {{5, 6, {1.0 / 3, 2, 3}, 1, 16}, {7, -1, {4, 5, 6e-9}, 0, -1}};
    RN_CHECK(rn_eval_gt_write(tmp_path(path, "gt.json"), w, 2, &err) == 0, "gt write: %s", err.msg);
    RN_CHECK(rn_eval_gt_read(&g, &n, path, &err) == 0 && n == 2 && !memcmp(g, w, sizeof w), "gt round trip: %s",
             err.msg);
    free(g);
    write_text(path, "[{\"image_id\": 5, \"root_cam\": [1, 2, 3], \"action\": 20}]");
    RN_CHECK(rn_eval_gt_read(&g, &n, path, &err) < 0 && strstr(err.msg, "'action'"), "bad action: %s", err.msg);
    unlink(path);
    unlink(tmp_path(path, "mupots.json"));
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "%s", "/tmp/rn_test_eval_XXXXXX");
    RN_ASSERT(mkdtemp(g_dir));
    test_ap_hand();
    test_ap_equal_distance();
    test_ap_bad();
    test_mrpe_hand();
    test_pw3d_hand();
    test_camera();
    test_results_roundtrip();
    test_results_bad();
    test_gt_files();
    rmdir(g_dir);
    RN_CHECK_DONE();
}
