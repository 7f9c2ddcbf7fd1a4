/* PoseNet's metrics as the authors compute them (eval/pose_metrics.h). */
#include "eval/pose_metrics.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/afile.h"

#ifdef RN_HAVE_MATIO
#include <matio.h>
#endif

enum { MAX_J = 64 };

/* ---- geometry ---------------------------------------------------------------------------------- */

void rn_pose_output_to_cam(double *img, double *cam, const double *out, int J, const rn_pose_cam_in *in)
{
    RN_ASSERT(in->out_w > 0 && in->out_h > 0 && in->depth_dim > 0);
    for (int j = 0; j < J; j++) {
        const double *o = out + 3 * j;
        double x = o[0] / in->out_w * in->bbox[2] + in->bbox[0];
        double y = o[1] / in->out_h * in->bbox[3] + in->bbox[1];
        double z = (o[2] / in->depth_dim * 2 - 1) * (in->bbox_3d / 2) + in->root_z;
        if (img) img[3 * j] = x, img[3 * j + 1] = y, img[3 * j + 2] = z;
        cam[3 * j] = (x - in->c[0]) / in->f[0] * z;
        cam[3 * j + 1] = (y - in->c[1]) / in->f[1] * z;
        cam[3 * j + 2] = z;
    }
}

static int all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(double *o, const double *a, const double *b)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* Rotates columns p and q of w (3 x 3, column k at w[k]) and of v so that w's become orthogonal
 * (one-sided Jacobi); returns 1 when they were not yet. */
static int jacobi_pair(double w[3][3], double v[3][3], int p, int q)
{
    double a = dot3(w[p], w[p]), b = dot3(w[q], w[q]), g = dot3(w[p], w[q]);
    if (fabs(g) <= 1e-15 * sqrt(a * b) || g == 0) return 0;
    double zeta = (b - a) / (2 * g);
    double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
    double c = 1 / sqrt(1 + t * t), s = c * t;
    for (int k = 0; k < 3; k++) {
        double wp = w[p][k], wq = w[q][k], vp = v[p][k], vq = v[q][k];
        w[p][k] = c * wp - s * wq, w[q][k] = s * wp + c * wq;
        v[p][k] = c * vp - s * vq, v[q][k] = s * vp + c * vq;
    }
    return 1;
}

/* A unit vector perpendicular to unit vector a. */
static void perpendicular(double *o, const double *a)
{
    const double e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int k = fabs(a[0]) <= fabs(a[1]) && fabs(a[0]) <= fabs(a[2]) ? 0 : fabs(a[1]) <= fabs(a[2]) ? 1 : 2;
    cross3(o, a, e[k]);
    double n = sqrt(dot3(o, o));
    for (int i = 0; i < 3; i++) o[i] /= n;
}

/* H (3 x 3, row-major) = U diag(s) V^T: u[k], v[k] the k-th left and right singular vectors, s
 * descending. Singular vectors of a zero singular value complete the basis (det U = +1). */
static void svd3(double u[3][3], double s[3], double v[3][3], const double H[9])
{
    double w[3][3], vv[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) w[k][i] = H[3 * i + k];
    for (int sweep = 0; sweep < 60; sweep++)
        if (!(jacobi_pair(w, vv, 0, 1) | jacobi_pair(w, vv, 0, 2) | jacobi_pair(w, vv, 1, 2))) break;
    int ord[3] = {0, 1, 2};
    double nrm[3];
    for (int k = 0; k < 3; k++) nrm[k] = sqrt(dot3(w[k], w[k]));
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            if (nrm[ord[b]] > nrm[ord[a]]) { int t = ord[a]; ord[a] = ord[b]; ord[b] = t; }
    for (int k = 0; k < 3; k++) {
        s[k] = nrm[ord[k]];
        memcpy(v[k], vv[ord[k]], sizeof v[k]);
    }
    double tiny = 1e-13 * s[0];
    for (int k = 0; k < 2; k++) {
        if (s[k] > tiny && s[k] > 0) {
            for (int i = 0; i < 3; i++) u[k][i] = w[ord[k]][i] / s[k];
        } else if (k == 0) {
            memcpy(u[0], (double[3]){1, 0, 0}, sizeof u[0]);
        } else {
            perpendicular(u[1], u[0]);
        }
    }
    cross3(u[2], u[0], u[1]);
    if (s[2] > tiny && dot3(u[2], w[ord[2]]) < 0)
        for (int i = 0; i < 3; i++) u[2][i] = -u[2][i];
}

static double det3(const double R[9])
{
    return R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
}

/* R (row-major) = V U^T from the singular vectors, v[2] negated when flip. */
static void rotation(double R[9], double u[3][3], double v[3][3], int flip)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double r = 0;
            for (int k = 0; k < 3; k++) r += (k == 2 && flip ? -v[k][i] : v[k][i]) * u[k][j];
            R[3 * i + j] = r;
        }
}

static void centroid(double c[3], const double *P, int n)
{
    c[0] = c[1] = c[2] = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) c[k] += P[3 * i + k];
    for (int k = 0; k < 3; k++) c[k] /= n;
}

int rn_pose_rigid_align(double *out, const double *A, const double *B, int n, int with_scale, rn_err *err)
{
    if (n < 1) return rn_err_set(err, "rigid alignment of %d points", n);
    if (!all_finite(A, 3 * (size_t)n) || !all_finite(B, 3 * (size_t)n))
        return rn_err_set(err, "rigid alignment: a coordinate is not finite");
    double ca[3], cb[3], H[9] = {0}, var = 0;
    centroid(ca, A, n), centroid(cb, B, n);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 3; i++) {
            double a = A[3 * p + i] - ca[i];
            var += a * a;
            for (int j = 0; j < 3; j++) H[3 * i + j] += a * (B[3 * p + j] - cb[j]);
        }
    double u[3][3], s[3], v[3][3], R[9];
    svd3(u, s, v, H);
    rotation(R, u, v, 0);
    int flip = det3(R) < 0;
    if (flip) rotation(R, u, v, 1);
    double scale = with_scale && var > 0 ? (s[0] + s[1] + (flip ? -s[2] : s[2])) / var : 1.0;
    for (int p = 0; p < n; p++) {
        double a[3] = {A[3 * p] - ca[0], A[3 * p + 1] - ca[1], A[3 * p + 2] - ca[2]};
        for (int i = 0; i < 3; i++) out[3 * p + i] = scale * dot3(R + 3 * i, a) + cb[i];
    }
    return 0;
}

/* ---- Human3.6M ---------------------------------------------------------------------------------- */

static int check_joints(const rn_pose_joints *jt, rn_err *err)
{
    if (jt->J < 1 || jt->J > MAX_J) return rn_err_set(err, "%d joints: expected 1..%d", jt->J, MAX_J);
    if (jt->root < 0 || jt->root >= jt->J) return rn_err_set(err, "root joint %d of %d", jt->root, jt->J);
    if (jt->neval < 1 || !jt->eval) return rn_err_set(err, "no joints to score");
    for (int k = 0; k < jt->neval; k++)
        if (jt->eval[k] < 0 || jt->eval[k] >= jt->J)
            return rn_err_set(err, "scored joint %d of %d", jt->eval[k], jt->J);
    return 0;
}

/* Person i's scored joint errors into e (neval): their evaluate()'s body. */
static int h36m_person(double *e, const double *pred, const double *gt, const rn_pose_joints *jt, int protocol,
                       int pa_scale, rn_err *err)
{
    int J = jt->J;
    double p[3 * MAX_J], g[3 * MAX_J];
    for (int j = 0; j < J; j++)
        for (int k = 0; k < 3; k++) {
            p[3 * j + k] = pred[3 * j + k] - pred[3 * jt->root + k];
            g[3 * j + k] = gt[3 * j + k] - gt[3 * jt->root + k];
        }
    if (protocol == 1 && rn_pose_rigid_align(p, p, g, J, pa_scale, err)) return -1;
    for (int k = 0; k < jt->neval; k++) {
        const double *a = p + 3 * jt->eval[k], *b = g + 3 * jt->eval[k];
        double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
        e[k] = sqrt(dot3(d, d));
    }
    return 0;
}

int rn_pose_h36m_eval(rn_pose_h36m_result *r, const double *pred, const double *gt, const int *action, size_t n,
                      const rn_pose_joints *joints, int protocol, int pa_scale, rn_err *err)
{
    memset(r, 0, sizeof *r);
    if (check_joints(joints, err)) return -1;
    if (protocol != 1 && protocol != 2) return rn_err_set(err, "protocol %d: expected 1 or 2", protocol);
    if (n == 0) return rn_err_set(err, "no people to evaluate");
    size_t pose = 3 * (size_t)joints->J;
    double sum = 0, act_sum[RN_H36M_ACTIONS] = {0}, e[MAX_J];
    for (size_t i = 0; i < n; i++) {
        if (action[i] < 2 || action[i] >= 2 + RN_H36M_ACTIONS)
            return rn_err_set(err, "person %zu: action %d: expected 2..%d", i, action[i], 1 + RN_H36M_ACTIONS);
        if (!all_finite(pred + i * pose, pose) || !all_finite(gt + i * pose, pose))
            return rn_err_set(err, "person %zu: a joint is not finite", i);
        if (h36m_person(e, pred + i * pose, gt + i * pose, joints, protocol, pa_scale, err))
            return rn_err_prefix(err, "person %zu", i);
        for (int k = 0; k < joints->neval; k++) sum += e[k], act_sum[action[i] - 2] += e[k];
        r->action_n[action[i] - 2]++;
    }
    r->n = n;
    r->mpjpe = sum / ((double)n * joints->neval);
    for (int a = 0; a < RN_H36M_ACTIONS; a++)
        r->action[a] = r->action_n[a] ? act_sum[a] / ((double)r->action_n[a] * joints->neval) : NAN;
    return 0;
}

/* ---- MuPoTS-3D -------------------------------------------------------------------------------- */

/* The script's joint sets, 0-based (theirs are 1-based): matching joints 2:14, the pelvis (15), the
 * parents o1 of mpii_get_joints('relevant'), safe_traversal_order(2:end), and the joints of
 * mpii_get_pck_auc_joint_groups (head top, neck, shoulders, elbows, wrists, hips, knees, ankles). */
enum { MATCH_FIRST = 1, MATCH_LAST = 13, PELVIS = 14, SCORED = 14, MATCH_PX = 40, PCK_MM = 150 };
static const int PARENT[RN_MUPOTS_J] = {1, 15, 1, 2, 3, 1, 5, 6, 14, 8, 9, 14, 11, 12, 14, 14, 1};
static const int TRAVERSE[] = {15, 1, 0, 16, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

typedef struct key_ix {
    int32_t seq, frame;
    size_t i;
} key_ix;

static int key_cmp(const void *a, const void *b)
{
    const key_ix *x = a, *y = b;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    if (x->frame != y->frame) return x->frame < y->frame ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* People sorted by (sequence, frame), keeping their order within an image; checks each. */
static key_ix *sorted_people(const rn_pose_people *pp, const char *what, int need3d, rn_err *err)
{
    key_ix *k = rn_xmalloc((pp->n ? pp->n : 1) * sizeof *k);
    for (size_t i = 0; i < pp->n; i++) {
        int bad = pp->seq[i] < 1 || pp->seq[i] > RN_MUPOTS_SEQS || pp->frame[i] < 0;
        if (bad || !all_finite(pp->kpt2d + 2 * RN_MUPOTS_J * i, 2 * RN_MUPOTS_J) ||
            (need3d && !all_finite(pp->kpt3d + 3 * RN_MUPOTS_J * i, 3 * RN_MUPOTS_J))) {
            free(k);
            rn_err_set(err, bad ? "%s %zu: sequence %d, frame %d: expected 1..%d and >= 0"
                                : "%s %zu: a joint is not finite (sequence %d, frame %d)",
                       what, i, pp->seq[i], pp->frame[i], RN_MUPOTS_SEQS);
            return NULL;
        }
        k[i] = (key_ix){pp->seq[i], pp->frame[i], i};
    }
    qsort(k, pp->n, sizeof *k, key_cmp);
    return k;
}

/* mpii_multiperson_get_identity_matching: match[g] = the prediction (index into pi) of ground truth g,
 * or -1. */
static void match_people(int *match, const rn_pose_people *gt, const size_t *gi, int ng, const rn_pose_people *pr,
                         const size_t *pi, int np)
{
    uint8_t *taken = rn_xcalloc(np ? (size_t)np : 1, 1);
    for (int g = 0; g < ng; g++) {
        const double *a = gt->kpt2d + 2 * RN_MUPOTS_J * gi[g];
        int best = -1, best_score = 0;
        for (int p = 0; p < np; p++) {
            if (taken[p]) continue;
            const double *b = pr->kpt2d + 2 * RN_MUPOTS_J * pi[p];
            int score = 0;
            for (int j = MATCH_FIRST; j <= MATCH_LAST; j++) {
                int visible = !(b[2 * j] == 0 && b[2 * j + 1] == 0);
                score += visible && fabs(a[2 * j] - b[2 * j]) < MATCH_PX && fabs(a[2 * j + 1] - b[2 * j + 1]) < MATCH_PX;
            }
            if (score > best_score) best_score = score, best = p;
        }
        match[g] = best;
        if (best >= 0) taken[best] = 1;
    }
    free(taken);
}

/* A pose (17, 3) less its pelvis where relative. */
static void pose_rel(double *o, const double *p, int relative)
{
    for (int j = 0; j < RN_MUPOTS_J; j++)
        for (int k = 0; k < 3; k++) o[3 * j + k] = p[3 * j + k] - (relative ? p[3 * PELVIS + k] : 0);
}

/* mpii_map_to_gt_bone_lengths: each bone of pred, from the pelvis out, given gt's length. */
static void map_bones(double *mapped, const double *pred, const double *gt)
{
    memcpy(mapped, pred, 3 * RN_MUPOTS_J * sizeof *mapped);
    for (size_t t = 0; t < sizeof TRAVERSE / sizeof *TRAVERSE; t++) {
        int j = TRAVERSE[t], q = PARENT[j];
        double gb[3], pb[3];
        for (int k = 0; k < 3; k++) gb[k] = gt[3 * j + k] - gt[3 * q + k], pb[k] = pred[3 * j + k] - pred[3 * q + k];
        double scale = sqrt(dot3(gb, gb)) / sqrt(dot3(pb, pb));
        for (int k = 0; k < 3; k++) mapped[3 * j + k] = mapped[3 * q + k] + pb[k] * scale;
    }
}

/* One person's scored joint errors into the sequence's counts: hits[0..30] below 0, 5, ..., 150 mm. */
typedef struct seq_acc {
    size_t hits150, hits[RN_MUPOTS_AUC_T];
} seq_acc;

static void score_person(seq_acc *acc, const double *pred, const double *gt)
{
    for (int j = 0; j < SCORED; j++) {
        double d[3] = {pred[3 * j] - gt[3 * j], pred[3 * j + 1] - gt[3 * j + 1], pred[3 * j + 2] - gt[3 * j + 2]};
        double e = sqrt(dot3(d, d));
        acc->hits150 += e < PCK_MM;
        for (int t = 0; t < RN_MUPOTS_AUC_T; t++) acc->hits[t] += e < 5.0 * t;
    }
}

typedef struct mupots_ctx {
    const rn_pose_people *gt, *pr;
    int relative, matched_only;
} mupots_ctx;

/* One image: its valid ground truth gi (ng) against its predictions pi (np). */
static void eval_image(const mupots_ctx *c, rn_pose_mupots_seq *sq, seq_acc *acc, const size_t *gi, int ng,
                       const size_t *pi, int np)
{
    int *match = rn_xmalloc((size_t)ng * sizeof *match);
    match_people(match, c->gt, gi, ng, c->pr, pi, np);
    for (int g = 0; g < ng; g++) {
        double P[3 * RN_MUPOTS_J], q[3 * RN_MUPOTS_J], mapped[3 * RN_MUPOTS_J];
        pose_rel(P, c->gt->kpt3d + 3 * RN_MUPOTS_J * gi[g], c->relative);
        sq->undetected += match[g] < 0;
        if (match[g] < 0 && c->matched_only) continue;
        if (match[g] >= 0) {
            pose_rel(q, c->pr->kpt3d + 3 * RN_MUPOTS_J * pi[match[g]], c->relative);
            map_bones(mapped, q, P);
        } else {
            for (int k = 0; k < 3 * RN_MUPOTS_J; k++) mapped[k] = 100000;
        }
        score_person(acc, mapped, P);
        sq->scored++;
    }
    free(match);
}

static void finish_seqs(rn_pose_mupots_result *r, const seq_acc *acc)
{
    double pck = 0, auc = 0;
    for (int s = 0; s < RN_MUPOTS_SEQS; s++) {
        rn_pose_mupots_seq *q = &r->seq[s];
        if (!q->scored) {
            q->pck = q->auc = NAN;
            continue;
        }
        double den = (double)SCORED * (double)q->scored, sum = 0;
        q->pck = 100 * (double)acc[s].hits150 / den;
        for (int t = 0; t < RN_MUPOTS_AUC_T; t++) sum += (double)acc[s].hits[t] / den;
        q->auc = 100 * sum / RN_MUPOTS_AUC_T;
        pck += q->pck, auc += q->auc, r->n_seq++;
    }
    r->pck = r->n_seq ? pck / r->n_seq : NAN;
    r->auc = r->n_seq ? auc / r->n_seq : NAN;
}

/* End of the run of people in k[from..n) with k[from]'s image. */
static size_t image_end(const key_ix *k, size_t from, size_t n)
{
    size_t e = from;
    while (e < n && k[e].seq == k[from].seq && k[e].frame == k[from].frame) e++;
    return e;
}

/* Whether k's image comes before image (seq, frame). */
static int image_before(const key_ix *k, int32_t seq, int32_t frame)
{
    return k->seq < seq || (k->seq == seq && k->frame < frame);
}

int rn_pose_mupots_eval(rn_pose_mupots_result *r, const rn_pose_people *gt, const rn_pose_people *pred,
                        int is_relative, int matched_only, rn_err *err)
{
    memset(r, 0, sizeof *r);
    key_ix *kg = sorted_people(gt, "ground truth", 1, err);
    key_ix *kp = kg ? sorted_people(pred, "prediction", 1, err) : NULL;
    if (!kp) {
        free(kg);
        return -1;
    }
    mupots_ctx c = {gt, pred, is_relative, matched_only};
    seq_acc acc[RN_MUPOTS_SEQS] = {{0}};
    size_t *gi = rn_xmalloc((gt->n ? gt->n : 1) * sizeof *gi), *pi = rn_xmalloc((pred->n ? pred->n : 1) * sizeof *pi);
    size_t p = 0;
    for (size_t g = 0, ge; g < gt->n; g = ge) {
        ge = image_end(kg, g, gt->n);
        int32_t seq = kg[g].seq, frame = kg[g].frame;
        int ng = 0, np = 0;
        for (size_t i = g; i < ge; i++)
            if (!gt->valid || gt->valid[kg[i].i]) gi[ng++] = kg[i].i;
        while (p < pred->n && image_before(&kp[p], seq, frame)) p++;
        for (; p < pred->n && kp[p].seq == seq && kp[p].frame == frame; p++) pi[np++] = kp[p].i;
        r->seq[seq - 1].annotated += (size_t)ng;
        if (ng) eval_image(&c, &r->seq[seq - 1], &acc[seq - 1], gi, ng, pi, np);
    }
    finish_seqs(r, acc);
    free(kg), free(kp), free(gi), free(pi);
    return 0;
}

/* ---- the .mat files ------------------------------------------------------------------------------ */

int rn_pose_mupots_key(char *buf, size_t len, int seq, int frame, rn_err *err)
{
    int n = snprintf(buf, len, "TS%d_img_%06d", seq, frame);
    if (n < 0 || (size_t)n >= len) return rn_err_set(err, "image key TS%d_img_%06d: longer than %zu", seq, frame, len);
    return 0;
}

static int matlab_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 63 || !isalpha((unsigned char)s[0])) return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

#ifdef RN_HAVE_MATIO
typedef struct key_ref {
    const char *key;
    size_t i;
} key_ref;

static int key_ref_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

/* People g[0..m) of one key, (m, J, D) in MATLAB's column-major order, into a new variable of mat. */
static int write_key(mat_t *mat, const key_ref *g, size_t m, const double *kpt, int J, int D)
{
    size_t per = (size_t)J * (size_t)D;
    double *col = rn_xmalloc(m * per * sizeof *col);
    for (size_t r = 0; r < m; r++)
        for (size_t j = 0; j < (size_t)J; j++)
            for (size_t d = 0; d < (size_t)D; d++) col[r + m * (j + (size_t)J * d)] = kpt[g[r].i * per + j * (size_t)D + d];
    size_t dims[3] = {m, (size_t)J, (size_t)D};
    matvar_t *v = Mat_VarCreate(g[0].key, MAT_C_DOUBLE, MAT_T_DOUBLE, 3, dims, col, 0);
    int rc = !v || Mat_VarWrite(mat, v, MAT_COMPRESSION_NONE) ? -1 : 0;
    if (v) Mat_VarFree(v);
    free(col);
    return rc;
}

/* Every key's variable into file (path names it in messages). */
static int write_all_keys(const char *file, const char *path, const char *const *key, const double *kpt, size_t n,
                          int J, int D, rn_err *err)
{
    key_ref *k = rn_xmalloc((n ? n : 1) * sizeof *k);
    for (size_t i = 0; i < n; i++) k[i] = (key_ref){key[i], i};
    qsort(k, n, sizeof *k, key_ref_cmp);
    mat_t *mat = Mat_CreateVer(file, NULL, MAT_FT_MAT5);
    int rc = mat ? 0 : rn_err_set(err, "%s: cannot create the .mat file", path);
    for (size_t a = 0, b; a < n && !rc; a = b) {
        for (b = a + 1; b < n && !strcmp(k[b].key, k[a].key); b++) continue;
        if (write_key(mat, k + a, b - a, kpt, J, D)) rc = rn_err_set(err, "%s: writing variable %s failed", path, k[a].key);
    }
    if (mat && Mat_Close(mat) && !rc) rc = rn_err_set(err, "%s: write failed", path);
    free(k);
    return rc;
}
#endif

int rn_pose_mat_available(void)
{
#ifdef RN_HAVE_MATIO
    return 1;
#else
    return 0;
#endif
}

int rn_pose_mat_write(const char *path, const char *const *key, const double *kpt, size_t n, int J, int D,
                      rn_err *err)
{
    if (J < 1 || D < 1) return rn_err_set(err, "%s: poses of %d x %d", path, J, D);
    for (size_t i = 0; i < n; i++) {
        if (!matlab_name(key[i])) return rn_err_set(err, "%s: person %zu: '%s' is no MATLAB variable name", path, i, key[i]);
        if (!all_finite(kpt + i * (size_t)J * D, (size_t)J * D)) return rn_err_set(err, "%s: person %zu: a joint is not finite", path, i);
    }
#ifdef RN_HAVE_MATIO
    rn_afile f;
    if (rn_afile_open(&f, path, err)) return -1;
    if (write_all_keys(f.tmp ? f.tmp : path, path, key, kpt, n, J, D, err)) {
        rn_afile_abort(&f);
        return -1;
    }
    return rn_afile_commit(&f, err);
#else
    return rn_err_set(err, "%s: this rootnet was built without libmatio (Debian libmatio-dev): no .mat files", path);
#endif
}
