/* Tests of src/eval/pose_metrics: hand-worked rigid alignment (a rotation, a scale, a mirror image that
 * only the reflection fix keeps a rotation), Human3.6M MPJPE and MuPoTS-3D 3DPCK/AUC cases, the .mat
 * layout read back, bad input. Run alone: those checks. With arguments it is the C side of
 * tests/pose_metrics_ref.py (tests/t_pose_metrics.sh), which compares it with an independent numpy
 * version of the authors' Python and MATLAB code:
 *   test_pose_metrics h36m DIR     reads DIR/h36m_*.npy, writes DIR/c_h36m_*.npy
 *   test_pose_metrics mupots DIR   reads DIR/mu_*.npy, writes DIR/c_mupots*.npy and the two .mat files */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "eval/pose_metrics.h"
#include "io/tensors.h"
#include "data/sets/skeleton.h"

#ifdef RN_HAVE_MATIO
#include <matio.h>
#endif

static int CLOSE(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(b));
}

/* ---- hand-worked cases ---------------------------------------------------------------------------- */

static const double TET[4][3] = {{0, 0, 0}, {100, 0, 0}, {0, 200, 0}, {30, 40, 300}};

static double volume(const double *p)
{
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) a[k] = p[3 + k] - p[k], b[k] = p[6 + k] - p[k], c[k] = p[9 + k] - p[k];
    return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}

static void test_align(void)
{
    double A[12], out[12];
    rn_err e = {{0}};
    /* B rotated 90 degrees about z ((x, y, z) -> (-y, x, z)), scaled and moved: aligned back onto B */
    for (int i = 0; i < 4; i++) A[3 * i] = -TET[i][1] + 7, A[3 * i + 1] = TET[i][0] - 3, A[3 * i + 2] = TET[i][2] + 11;
    RN_CHECK(!rn_pose_rigid_align(out, A, &TET[0][0], 4, 0, &e), "align: %s", e.msg);
    int ok = 1;
    for (int i = 0; i < 12; i++) ok &= CLOSE(out[i], (&TET[0][0])[i]);
    RN_CHECK(ok, "a rotated and moved copy aligns onto the original");
    for (int i = 0; i < 12; i++) A[i] = 2.5 * A[i];
    rn_pose_rigid_align(out, A, &TET[0][0], 4, 1, &e);
    ok = 1;
    for (int i = 0; i < 12; i++) ok &= CLOSE(out[i], (&TET[0][0])[i]);
    RN_CHECK(ok, "with scale: a scaled copy aligns onto the original");
    rn_pose_rigid_align(out, A, &TET[0][0], 4, 0, &e);
    RN_CHECK(CLOSE(volume(out), 2.5 * 2.5 * 2.5 * volume(&TET[0][0])), "without scale the size stays A's");
    /* a mirror image (x -> -x): the best proper rotation keeps A's handedness (volume sign), never B's */
    for (int i = 0; i < 4; i++) A[3 * i] = -TET[i][0], A[3 * i + 1] = TET[i][1], A[3 * i + 2] = TET[i][2];
    rn_pose_rigid_align(out, A, &TET[0][0], 4, 0, &e);
    RN_CHECK(CLOSE(volume(out), volume(A)) && volume(A) * volume(&TET[0][0]) < 0,
             "a mirror image stays a mirror image (reflection fix): volume %g, A's %g", volume(out), volume(A));
    RN_CHECK(rn_pose_rigid_align(out, A, &TET[0][0], 0, 0, &e) && strstr(e.msg, "0 points"), "no points: %s", e.msg);
    A[4] = NAN;
    RN_CHECK(rn_pose_rigid_align(out, A, &TET[0][0], 4, 0, &e) && strstr(e.msg, "not finite"), "NaN: %s", e.msg);
}

static void test_output_to_cam(void)
{
    rn_pose_cam_in in = {.bbox = {100, 50, 200, 400}, .root_z = 4000, .f = {1500, 1600}, .c = {320, 240},
                         .out_w = 64, .out_h = 64, .depth_dim = 64, .bbox_3d = 2000};
    const double out[3] = {32, 16, 48};
    double img[3], cam[3];
    rn_pose_output_to_cam(img, cam, out, 1, &in);
    /* x = 32/64*200+100 = 200, y = 16/64*400+50 = 150, z = (48/64*2-1)*1000+4000 = 4500 */
    RN_CHECK(CLOSE(img[0], 200) && CLOSE(img[1], 150) && CLOSE(img[2], 4500), "output -> image %g %g %g", img[0],
             img[1], img[2]);
    RN_CHECK(CLOSE(cam[0], (200 - 320) / 1500.0 * 4500) && CLOSE(cam[1], (150 - 240) / 1600.0 * 4500) &&
                 CLOSE(cam[2], 4500),
             "image -> camera %g %g %g", cam[0], cam[1], cam[2]);
}

static void test_h36m(void)
{
    /* 3 joints, root 0, joints 1 and 2 scored; person 0 (action 2) off by 3 and 4 mm, person 1 (action 16)
     * off by 0 and 12 mm after its root (moved by 1000 mm) is subtracted */
    const int ev[2] = {1, 2};
    rn_pose_joints jt = {3, 0, ev, 2};
    const double gt[2][9] = {{0, 0, 0, 100, 0, 0, 0, 100, 0}, {0, 0, 0, 0, 0, 100, 50, 50, 50}};
    const double pr[2][9] = {{0, 0, 0, 103, 0, 0, 0, 100, 4}, {1000, 0, 0, 1000, 0, 100, 1050, 62, 50}};
    const int act[2] = {2, 16};
    rn_pose_h36m_result r;
    rn_err e = {{0}};
    RN_CHECK(!rn_pose_h36m_eval(&r, &pr[0][0], &gt[0][0], act, 2, &jt, 2, 0, &e), "h36m: %s", e.msg);
    RN_CHECK(CLOSE(r.mpjpe, (3 + 4 + 0 + 12) / 4.0), "MPJPE %g, want 4.75", r.mpjpe);
    RN_CHECK(CLOSE(r.action[0], 3.5) && CLOSE(r.action[14], 6) && isnan(r.action[1]) && r.action_n[0] == 1,
             "per action %g %g %g", r.action[0], r.action[14], r.action[1]);
    RN_CHECK(!rn_pose_h36m_eval(&r, &gt[0][0], &gt[0][0], act, 2, &jt, 1, 0, &e) && CLOSE(r.mpjpe + 1, 1),
             "PA-MPJPE of the ground truth itself: %g", r.mpjpe);
    const int bad[2] = {2, 17};
    RN_CHECK(rn_pose_h36m_eval(&r, &pr[0][0], &gt[0][0], bad, 2, &jt, 2, 0, &e) && strstr(e.msg, "person 1: action 17"),
             "action 17: %s", e.msg);
    RN_CHECK(rn_pose_h36m_eval(&r, &pr[0][0], &gt[0][0], act, 2, &jt, 3, 0, &e) && strstr(e.msg, "protocol 3"),
             "protocol 3: %s", e.msg);
}

/* A MuPoTS person: a pose spread over the image (2D) and in depth (3D), shifted by (dx, dz). */
static void mu_person(double *p2, double *p3, double dx, double dz)
{
    for (int j = 0; j < RN_MUPOTS_J; j++) {
        p2[2 * j] = 500 + dx + 10 * j, p2[2 * j + 1] = 300 + 20 * j;
        p3[3 * j] = dx + 30 * j, p3[3 * j + 1] = 60.0 * j - 40.0 * (j % 3), p3[3 * j + 2] = 4000 + dz + 7 * j;
    }
}

static void test_mupots(void)
{
    /* TS3 frame 5: two people; one prediction, exactly the first; a false positive far away */
    double g2[2][RN_MUPOTS_J * 2], g3[2][RN_MUPOTS_J * 3], q2[2][RN_MUPOTS_J * 2], q3[2][RN_MUPOTS_J * 3];
    mu_person(g2[0], g3[0], 0, 0), mu_person(g2[1], g3[1], 400, 500);
    mu_person(q2[0], q3[0], 3000, 0), mu_person(q2[1], q3[1], 0, 0);
    const int32_t seq[2] = {3, 3}, frame[2] = {5, 5};
    rn_pose_people gt = {2, seq, frame, &g2[0][0], &g3[0][0], NULL}, pr = {2, seq, frame, &q2[0][0], &q3[0][0], NULL};
    rn_pose_mupots_result r;
    rn_err e = {{0}};
    RN_CHECK(!rn_pose_mupots_eval(&r, &gt, &pr, 1, 0, &e), "mupots: %s", e.msg);
    const rn_pose_mupots_seq *s = &r.seq[2];
    /* first: every error 0 (< t for t = 5..150, not < 0); second: 100000 mm off */
    RN_CHECK(CLOSE(s->pck, 50) && CLOSE(s->auc, 100 * 30 * 0.5 / 31), "all annotated: PCK %g AUC %g", s->pck, s->auc);
    RN_CHECK(s->annotated == 2 && s->undetected == 1 && s->scored == 2 && r.n_seq == 1 && CLOSE(r.pck, 50),
             "counts %zu %zu %zu, %d sequences", s->annotated, s->undetected, s->scored, r.n_seq);
    RN_CHECK(isnan(r.seq[0].pck) && r.seq[0].scored == 0, "a sequence with nobody: NaN");
    rn_pose_mupots_eval(&r, &gt, &pr, 1, 1, &e);
    RN_CHECK(CLOSE(r.seq[2].pck, 100) && CLOSE(r.seq[2].auc, 100 * 30.0 / 31) && r.seq[2].scored == 1,
             "matched only: PCK %g AUC %g", r.seq[2].pck, r.seq[2].auc);
    /* the prediction 41 px off on every joint matches nobody */
    for (int j = 0; j < RN_MUPOTS_J; j++) q2[1][2 * j] += 41;
    rn_pose_mupots_eval(&r, &gt, &pr, 1, 0, &e);
    RN_CHECK(r.seq[2].undetected == 2 && CLOSE(r.seq[2].pck, 0), "41 px off: unmatched (%zu)", r.seq[2].undetected);
    const int32_t bad[2] = {3, 21};
    pr.seq = bad;
    RN_CHECK(rn_pose_mupots_eval(&r, &gt, &pr, 1, 0, &e) && strstr(e.msg, "prediction 1: sequence 21"), "TS21: %s",
             e.msg);
}

static void test_mat(void)
{
    char dir[] = "/tmp/rn_pose_XXXXXX", path[64];
    RN_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/p.mat", dir);
    const char *keys[3] = {"TS1_img_000002", "TS2_img_000000", "TS1_img_000002"};
    double kpt[3][2][2] = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}};
    rn_err e = {{0}};
    char key[32];
    RN_CHECK(!rn_pose_mupots_key(key, sizeof key, 1, 2, &e) && !strcmp(key, keys[0]), "key %s", key);
    int rc = rn_pose_mat_write(path, keys, &kpt[0][0][0], 3, 2, 2, &e);
#ifdef RN_HAVE_MATIO
    RN_CHECK(!rc, "mat write: %s", e.msg);
    mat_t *m = Mat_Open(path, MAT_ACC_RDONLY);
    matvar_t *v = m ? Mat_VarRead(m, "TS1_img_000002") : NULL;
    /* (2 people, 2 joints, 2) column-major: element (r, j, d) at r + 2 j + 4 d */
    const double *x = v ? v->data : NULL;
    RN_CHECK(v && v->rank == 3 && v->dims[0] == 2 && v->dims[1] == 2 && v->dims[2] == 2 && v->class_type == MAT_C_DOUBLE &&
                 x[0] == 1 && x[1] == 9 && x[2] == 3 && x[4] == 2 && x[7] == 12,
             "TS1_img_000002 is (2, 2, 2), people in order, MATLAB's layout");
    if (v) Mat_VarFree(v);
    if (m) Mat_Close(m);
#else
    RN_CHECK(rc && strstr(e.msg, "without libmatio"), "no libmatio: %s", e.msg);
#endif
    unlink(path);
    const char *bad[1] = {"1TS_img"};
    RN_CHECK(rn_pose_mat_write(path, bad, &kpt[0][0][0], 1, 2, 2, &e) && strstr(e.msg, "'1TS_img' is no MATLAB"),
             "bad name: %s", e.msg);
    rmdir(dir);
}

/* ---- the reference's C side ------------------------------------------------------------------------- */

/* DIR/NAME.npy as doubles (float64 or int32 on file), numel into *n; NULL naming the file in err. */
static double *load(const char *dir, const char *name, size_t *n, rn_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    rn_tensor t;
    if (rn_npy_read(&t, path, err)) return NULL;
    if (t.dtype != RN_F64 && t.dtype != RN_I32 && t.dtype != RN_U8) {
        rn_tensor_free(&t);
        rn_err_set(err, "%s: expected float64, int32 or uint8", path);
        return NULL;
    }
    *n = (size_t)rn_tensor_numel(&t);
    double *v = malloc((*n ? *n : 1) * sizeof *v);
    for (size_t i = 0; i < *n; i++)
        v[i] = t.dtype == RN_F64 ? ((double *)t.data)[i] : t.dtype == RN_I32 ? ((int32_t *)t.data)[i]
                                                        : ((uint8_t *)t.data)[i];
    rn_tensor_free(&t);
    return v;
}

static int save(const char *dir, const char *name, int ndim, const int64_t *shape, const double *v, rn_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    return rn_npy_write(path, RN_F64, ndim, shape, v, err);
}

static int fail(const rn_err *e)
{
    fprintf(stderr, "test_pose_metrics: %s\n", e->msg);
    return 1;
}

/* h36m_out (n, 18, 3) network outputs, h36m_cam_in (n, 9) bbox, root_z, f, c, h36m_gt (n, 18, 3),
 * h36m_action (n) -> c_h36m_cam (n, 18, 3) and c_h36m_metrics (3, 16): protocol 2, 1, 1 with scale;
 * overall then the 15 actions. */
static int run_h36m(const char *dir)
{
    rn_err e = {{0}};
    size_t n_out, n_in, n_gt, n;
    double *out = load(dir, "h36m_out", &n_out, &e), *cin = out ? load(dir, "h36m_cam_in", &n_in, &e) : NULL;
    double *gt = cin ? load(dir, "h36m_gt", &n_gt, &e) : NULL, *actd = gt ? load(dir, "h36m_action", &n, &e) : NULL;
    if (!actd) return fail(&e);
    const rn_skeleton *sk = rn_skeleton_find("Human36M");
    int J = sk->J;
    double *cam = malloc(n * 3 * J * sizeof *cam), met[3][1 + RN_H36M_ACTIONS];
    int *act = malloc(n * sizeof *act);
    for (size_t i = 0; i < n; i++) {
        const double *c = cin + 9 * i;
        rn_pose_cam_in in = {{c[0], c[1], c[2], c[3]}, c[4], {c[5], c[6]}, {c[7], c[8]}, 64, 64, 64, 2000};
        rn_pose_output_to_cam(NULL, cam + 3 * J * i, out + 3 * J * i, J, &in);
        act[i] = (int)actd[i];
    }
    rn_pose_joints jt = {J, sk->root, sk->eval, sk->neval};
    const int proto[3] = {2, 1, 1}, scale[3] = {0, 0, 1};
    int rc = 0;
    for (int m = 0; m < 3 && !rc; m++) {
        rn_pose_h36m_result r;
        rc = rn_pose_h36m_eval(&r, cam, gt, act, n, &jt, proto[m], scale[m], &e);
        met[m][0] = r.mpjpe;
        memcpy(&met[m][1], r.action, sizeof r.action);
    }
    rc = rc || save(dir, "c_h36m_cam", 3, (int64_t[]){(int64_t)n, J, 3}, cam, &e) ||
         save(dir, "c_h36m_metrics", 2, (int64_t[]){3, 1 + RN_H36M_ACTIONS}, &met[0][0], &e);
    free(out), free(cin), free(gt), free(actd), free(cam), free(act);
    return rc ? fail(&e) : 0;
}

typedef struct mu_side {
    double *seq, *frame, *k2, *k3, *valid;
    int32_t *iseq, *iframe;
    uint8_t *uvalid;
    size_t n;
} mu_side;

static int mu_load(mu_side *s, const char *dir, const char *who, rn_err *err)
{
    char name[64];
    size_t n;
    memset(s, 0, sizeof *s);
    snprintf(name, sizeof name, "mu_%s_seq", who);
    if (!(s->seq = load(dir, name, &s->n, err))) return -1;
    snprintf(name, sizeof name, "mu_%s_frame", who);
    if (!(s->frame = load(dir, name, &n, err))) return -1;
    snprintf(name, sizeof name, "mu_%s_2d", who);
    if (!(s->k2 = load(dir, name, &n, err))) return -1;
    snprintf(name, sizeof name, "mu_%s_3d", who);
    if (!(s->k3 = load(dir, name, &n, err))) return -1;
    snprintf(name, sizeof name, "mu_%s_valid", who);
    if (!(s->valid = load(dir, name, &n, err))) return -1;
    s->iseq = malloc((s->n + 1) * sizeof *s->iseq), s->iframe = malloc((s->n + 1) * sizeof *s->iframe);
    s->uvalid = malloc(s->n + 1);
    for (size_t i = 0; i < s->n; i++)
        s->iseq[i] = (int32_t)s->seq[i], s->iframe[i] = (int32_t)s->frame[i], s->uvalid[i] = s->valid[i] != 0;
    return 0;
}

static void mu_free(mu_side *s)
{
    free(s->seq), free(s->frame), free(s->k2), free(s->k3), free(s->valid), free(s->iseq), free(s->iframe);
    free(s->uvalid);
}

/* The predictions as the two .mat files, keyed by image. */
static int mu_mat(const char *dir, const mu_side *p, rn_err *err)
{
    char(*keys)[32] = malloc((p->n + 1) * sizeof *keys), path[4096];
    const char **kp = malloc((p->n + 1) * sizeof *kp);
    int rc = 0;
    for (size_t i = 0; i < p->n && !rc; i++)
        rc = rn_pose_mupots_key(keys[i], sizeof keys[i], p->iseq[i], p->iframe[i], err), kp[i] = keys[i];
    snprintf(path, sizeof path, "%s/preds_2d_kpt_mupots.mat", dir);
    rc = rc || rn_pose_mat_write(path, kp, p->k2, p->n, RN_MUPOTS_J, 2, err);
    snprintf(path, sizeof path, "%s/preds_3d_kpt_mupots.mat", dir);
    rc = rc || rn_pose_mat_write(path, kp, p->k3, p->n, RN_MUPOTS_J, 3, err);
    free(keys), free(kp);
    return rc;
}

/* mu_{gt,pr}_{seq,frame,2d,3d,valid} -> c_mupots (4, 20, 5): per mode (relative all, relative matched,
 * absolute all, absolute matched) and sequence pck, auc, annotated, undetected, scored; c_mupots_overall
 * (4, 2); the .mat files (skipped, saying so, without libmatio). */
static int run_mupots(const char *dir)
{
    rn_err e = {{0}};
    mu_side g, p;
    if (mu_load(&g, dir, "gt", &e) || mu_load(&p, dir, "pr", &e)) return fail(&e);
    rn_pose_people gt = {g.n, g.iseq, g.iframe, g.k2, g.k3, g.uvalid};
    rn_pose_people pr = {p.n, p.iseq, p.iframe, p.k2, p.k3, NULL};
    double seq[4][RN_MUPOTS_SEQS][5], all[4][2];
    int rc = 0;
    for (int m = 0; m < 4 && !rc; m++) {
        rn_pose_mupots_result r;
        rc = rn_pose_mupots_eval(&r, &gt, &pr, m < 2, m % 2, &e);
        for (int s = 0; s < RN_MUPOTS_SEQS; s++) {
            const rn_pose_mupots_seq *q = &r.seq[s];
            double row[5] = {q->pck, q->auc, (double)q->annotated, (double)q->undetected, (double)q->scored};
            memcpy(seq[m][s], row, sizeof row);
        }
        all[m][0] = r.pck, all[m][1] = r.auc;
    }
    rc = rc || save(dir, "c_mupots", 3, (int64_t[]){4, RN_MUPOTS_SEQS, 5}, &seq[0][0][0], &e) ||
         save(dir, "c_mupots_overall", 2, (int64_t[]){4, 2}, &all[0][0], &e);
    if (!rc && mu_mat(dir, &p, &e)) {
        rc = !strstr(e.msg, "without libmatio");
        if (!rc) printf("no .mat files: %s\n", e.msg);
    }
    mu_free(&g), mu_free(&p);
    return rc ? fail(&e) : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "h36m")) return run_h36m(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "mupots")) return run_mupots(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_pose_metrics [h36m|mupots DIR]\n");
        return 2;
    }
    test_align();
    test_output_to_cam();
    test_h36m();
    test_mupots();
    test_mat();
    RN_CHECK(rn_skeleton_find("MuPoTS")->J == RN_MUPOTS_J && rn_skeleton_find("MuPoTS")->root == 14,
             "MuPoTS: 17 joints, Pelvis 14 (the script's joint 15)");
    RN_CHECK(rn_skeleton_find("Human36M")->neval == 17, "Human3.6M: 17 scored joints");
    RN_CHECK_DONE();
}
