/* PoseNet's test (infer/pose_tester.h): the loader's test crops -> eval forward (and its flip) -> camera
 * joints -> Human3.6M's MPJPE and PA-MPJPE, or MuPoTS-3D's 3DPCK, PCK_abs and AUC (infer/pose_mupots.c). */
#include "infer/pose_tester.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "data/load/loader.h"
#include "data/sets/skeleton.h"
#include "infer/infer_model.h"
#include "nn/model.h"
#include "nn/net.h"

typedef struct pose_run {
    const rn_test_opts *o;
    const rn_pose_test_opts *po;
    rn_params *p;
    const rn_skeleton *sk;
    rn_dataset ds;
    int have_ds;
    rn_model m;
    int have_model;
    rn_loader *ld;
    float *flipped;     /* (N, 3, S, S): a batch's crops mirrored */
    double *out;        /* (n, J, 3): the network's rows, flip-averaged */
    int mupots;         /* 1: MuPoTS-3D, 0: Human3.6M */
    int joint[RN_SKELETON_MAX]; /* the net's row of the test set's joint j */
    rn_pose_mupots *mu; /* MuPoTS-3D: roots, images, ground truth */
} pose_run;

/* The options the test set takes, before anything is read. */
static int check_opts(pose_run *r, rn_err *err)
{
    const char *set = r->o->testset;
    r->mupots = !strcmp(set, "MuPoTS");
    if (!r->mupots && strcmp(set, "Human36M"))
        return rn_err_set(err, "--dataset %s: PoseNet's test scores Human36M (MPJPE, PA-MPJPE) and MuPoTS (3DPCK, "
                               "PCK_abs, AUC)", set);
    if (!r->mupots && (r->po->bbox_root || r->o->use_det_bbox))
        return rn_err_set(err, "%s: PoseNet's Human36M test takes GT boxes and the GT root, as their use_gt_info",
                          r->po->bbox_root ? "--bbox-root" : "--det-bbox");
    if (r->mupots && r->po->baseline)
        return rn_err_set(err, "--baseline: the mean training pose is Human36M's (MuPoTS-3D has no training split)");
    return 0;
}

/* The test set's joints in the net's rows, by name (MuPoTS-3D's 17 are MuCo's first 17). */
static int map_joints(pose_run *r, rn_err *err)
{
    const rn_net *net = r->p->net;
    const rn_skeleton *ts = rn_skeleton_find(r->ds.skeleton);
    r->sk = rn_skeleton_find(net->skeleton);
    RN_ASSERT(ts && r->sk && ts->J == r->ds.J);
    rn_skeleton_map(r->joint, r->sk, ts);
    for (int j = 0; j < ts->J; j++)
        if (r->joint[j] < 0)
            return rn_err_set(err, "a PoseNet of %s's %d joints cannot be scored on %s's %d joints: it has no '%s' "
                                   "(train it with --trainset-3d %s)", net->skeleton, net->K, r->ds.name, r->ds.J,
                              ts->joints[j], r->mupots ? "MuCo" : r->ds.name);
    return 0;
}

static int load_test_set(pose_run *r, rn_err *err)
{
    const rn_test_opts *o = r->o;
    if (check_opts(r, err)) return -1;
    rn_dataset_opts dop = {.protocol = 2, .use_det_bbox = o->use_det_bbox, .input_w = o->input_size,
                           .input_h = o->input_size, .cache_dir = o->cache_dir, .warn = stderr};
    if (rn_dataset_load(&r->ds, o->testset, o->data_dir, RN_SPLIT_TEST, &dop, err)) return -1;
    r->have_ds = 1;
    if (o->limit && o->limit < r->ds.n) r->ds.n = o->limit;
    if (!r->ds.n) return rn_err_set(err, "%s test set under %s has no records", r->ds.name, o->data_dir);
    if (map_joints(r, err)) return -1;
    return r->mupots ? rn_pose_mupots_prepare(&r->mu, &r->ds, o, r->po->bbox_root, err) : 0;
}

static int build_runtime(pose_run *r, rn_err *err)
{
    const rn_test_opts *o = r->o;
    int N = o->batch < (int)r->ds.n ? o->batch : (int)r->ds.n, S = o->input_size;
    rn_infer_cfg c = {.base = {.device = o->device, .threads = o->threads}, .precision = o->precision,
                      .fold = !o->no_fold, .batch = N, .h = S, .w = S, .calib = o->calib, .observe = o->observe};
    if (rn_infer_model_open(&r->m, r->p, &c, err)) return -1;
    r->have_model = 1;
    const rn_dataset *sets[1] = {&r->ds};
    rn_loader_cfg cfg;
    rn_loader_cfg_eval(&cfg, sets, N, o->workers, S, o->fast_decode);
    r->flipped = rn_xmalloc((size_t)N * 3 * S * S * sizeof *r->flipped);
    r->out = rn_xcalloc(r->ds.n * (size_t)r->sk->J * 3, sizeof *r->out);
    return rn_loader_create(&r->ld, &cfg, err);
}

/* x (n, 3, S, S) mirrored left-right into y: their flip(input_img, dims=3). */
static void mirror(float *y, const float *x, int n, int S)
{
    for (size_t row = 0; row < (size_t)n * 3 * S; row++)
        for (int i = 0; i < S; i++) y[row * S + i] = x[row * S + (S - 1 - i)];
}

/* Row i of the batch's output into out (J, 3), averaged with the flipped crop's (fl, NULL: none): x -> OW - x
 * - 1 and the flip pairs swapped first, as their test.py. */
static void take_rows(double *out, const float *c, const float *fl, const rn_skeleton *sk, int OW)
{
    int J = sk->J;
    for (int j = 0; j < 3 * J; j++) out[j] = c[j];
    if (!fl) return;
    double f[3 * RN_SKELETON_MAX];
    for (int j = 0; j < 3 * J; j++) f[j] = fl[j];
    for (int j = 0; j < J; j++) f[3 * j] = OW - f[3 * j] - 1;
    for (int q = 0; q < sk->nflip; q++)
        for (int k = 0; k < 3; k++) {
            double t = f[3 * sk->flip[q][0] + k];
            f[3 * sk->flip[q][0] + k] = f[3 * sk->flip[q][1] + k], f[3 * sk->flip[q][1] + k] = t;
        }
    for (int j = 0; j < 3 * J; j++) out[j] = (out[j] + f[j]) / 2.0;
}

static int run_forward(pose_run *r, rn_err *err)
{
    rn_model *m = &r->m;
    int J = r->sk->J, S = r->o->input_size;
    float *coord = rn_xmalloc((size_t)m->N * 3 * J * sizeof *coord);
    if (rn_loader_start(r->ld, 0, 0, err)) {
        free(coord);
        return -1;
    }
    const rn_batch *b;
    int rc;
    while ((rc = rn_loader_next(r->ld, &b, err)) == 1) {
        rn_model_forward(m, b->images, NULL, 0);
        memcpy(coord, rn_model_coords(m), (size_t)m->N * 3 * J * sizeof *coord);
        if (r->po->flip_test) {
            mirror(r->flipped, b->images, m->N, S);
            rn_model_forward(m, r->flipped, NULL, 0);
            (void)rn_model_coords(m);
        }
        for (int i = 0; i < b->n; i++)
            if (!b->pad[i])
                take_rows(r->out + (size_t)b->sample[i] * 3 * J, coord + (size_t)i * 3 * J,
                          r->po->flip_test ? m->coord + (size_t)i * 3 * J : NULL, r->sk, m->OW);
    }
    free(coord);
    return rc < 0 ? -1 : 0;
}

/* Record i's ground-truth camera joints into gt (J, 3). */
static void gt_joints(double *gt, const rn_dataset *ds, size_t i)
{
    const float *jr = rn_dataset_joints(ds, i);
    for (int j = 0; j < ds->J; j++)
        for (int k = 0; k < 3; k++) gt[3 * j + k] = jr[j * RN_JOINT_F + RN_JOINT_CAM + k];
}

/* Every record's predicted (their evaluate's) and ground-truth camera joints, (n, J, 3) each, and actions. */
static void to_camera(double *pred, double *gt, int *action, const pose_run *r)
{
    int J = r->sk->J;
    const rn_head_layer *h = rn_net_layer(r->p->net, RN_HEAD_HEATMAP);
    for (size_t i = 0; i < r->ds.n; i++) {
        const rn_sample *s = &r->ds.samples[i];
        gt_joints(gt + i * 3 * J, &r->ds, i);
        rn_pose_cam_in in = {.root_z = gt[i * 3 * J + 3 * r->sk->root + 2], .f = {s->f[0], s->f[1]},
                             .c = {s->c[0], s->c[1]}, .out_w = r->m.OW, .out_h = r->m.OH, .depth_dim = h->bins,
                             .bbox_3d = RN_POSE_DEPTH_RANGE};
        rn_sample_box(s, in.bbox);
        rn_pose_output_to_cam(NULL, pred + i * 3 * J, r->out + i * 3 * J, J, &in);
        action[i] = s->action;
    }
}

/* The training split's mean root-relative pose (J, 3) answered for every test person: its MPJPE. */
static int baseline(rn_pose_test_result *res, const pose_run *r, const double *gt, const int *action,
                    const rn_pose_joints *pj, rn_err *err)
{
    rn_dataset tr;
    rn_dataset_opts dop = {.protocol = 2, .input_w = r->o->input_size, .input_h = r->o->input_size,
                           .cache_dir = r->o->cache_dir, .warn = stderr};
    if (rn_dataset_load(&tr, r->o->testset, r->o->data_dir, RN_SPLIT_TRAIN, &dop, err))
        return rn_err_prefix(err, "the mean-pose baseline");
    int J = r->sk->J, rt = r->sk->root;
    double mean[3 * RN_SKELETON_MAX] = {0}, g[3 * RN_SKELETON_MAX];
    for (size_t i = 0; i < tr.n; i++) {
        gt_joints(g, &tr, i);
        for (int j = 0; j < 3 * J; j++) mean[j] += (g[j] - g[3 * rt + j % 3]) / (double)tr.n;
    }
    res->baseline_n = tr.n;
    rn_dataset_free(&tr);
    if (!res->baseline_n) return rn_err_set(err, "the mean-pose baseline: no training records under %s", r->o->data_dir);
    double *pred = rn_xmalloc(r->ds.n * 3 * (size_t)J * sizeof *pred);
    for (size_t i = 0; i < r->ds.n; i++)
        for (int j = 0; j < 3 * J; j++) pred[i * 3 * J + j] = mean[j] + gt[i * 3 * J + 3 * rt + j % 3];
    rn_pose_h36m_result b;
    int rc = rn_pose_h36m_eval(&b, pred, gt, action, r->ds.n, pj, 2, 0, err);
    free(pred);
    res->baseline_mpjpe = b.mpjpe, res->have_baseline = !rc;
    return rc;
}

static int score_mupots(rn_pose_test_result *res, const pose_run *r, rn_err *err)
{
    const rn_head_layer *h = rn_net_layer(r->p->net, RN_HEAD_HEATMAP);
    rn_pose_mupots_rows rows = {.out = r->out, .J = r->sk->J, .joint = r->joint, .out_w = r->m.OW, .out_h = r->m.OH,
                                .depth_dim = h->bins};
    res->mupots = 1;
    res->n = r->ds.n;
    snprintf(res->roots, sizeof res->roots, "%s", rn_pose_mupots_roots(r->mu));
    return rn_pose_mupots_score(&res->mu, r->mu, &r->ds, &rows, r->o->result_dir, err);
}

static int score(rn_pose_test_result *res, const pose_run *r, rn_err *err)
{
    if (r->mupots) return score_mupots(res, r, err);
    size_t n = r->ds.n, J3 = 3 * (size_t)r->sk->J;
    double *pred = rn_xmalloc(n * J3 * sizeof *pred), *gt = rn_xmalloc(n * J3 * sizeof *gt);
    int *action = rn_xmalloc(n * sizeof *action);
    to_camera(pred, gt, action, r);
    rn_pose_joints pj = {r->sk->J, r->sk->root, r->sk->eval, r->sk->neval};
    int rc = rn_pose_h36m_eval(&res->mpjpe, pred, gt, action, n, &pj, 2, 0, err) ||
             rn_pose_h36m_eval(&res->pa_mpjpe, pred, gt, action, n, &pj, 1, 0, err) ||
             (r->po->baseline && baseline(res, r, gt, action, &pj, err));
    res->n = n;
    free(pred), free(gt), free(action);
    return rc ? -1 : 0;
}

static void pose_run_free(pose_run *r)
{
    if (r->ld) rn_loader_free(r->ld);
    if (r->have_model) rn_model_destroy(&r->m);
    if (r->have_ds) rn_dataset_free(&r->ds);
    rn_pose_mupots_free(r->mu);
    free(r->flipped);
    free(r->out);
}

int rn_pose_test_run(rn_pose_test_result *res, rn_params *p, const rn_test_opts *o, const rn_pose_test_opts *po,
                     rn_err *err)
{
    memset(res, 0, sizeof *res);
    if (!p->net->skeleton) return rn_err_set(err, "internal: rn_pose_test_run needs a PoseNet, not a %s", p->net->title);
    pose_run r = {.o = o, .po = po, .p = p};
    double t0 = rn_prof_now();
    int rc = load_test_set(&r, err) || build_runtime(&r, err) || run_forward(&r, err);
    res->seconds = rn_prof_now() - t0;
    if (!rc) rc = score(res, &r, err);
    pose_run_free(&r);
    return rc ? -1 : 0;
}

static void print_actions(FILE *f, const char *what, const rn_pose_h36m_result *r)
{
    fprintf(f, "%s >> tot: %.2f mm\n", what, r->mpjpe);
    for (int a = 0; a < RN_H36M_ACTIONS; a++)
        if (r->action_n[a]) fprintf(f, "  %s: %.2f (%zu)\n", rn_h36m_action_names[a], r->action[a], r->action_n[a]);
}

static void print_pck(FILE *f, const char *what, const rn_pose_mupots_result *all, const rn_pose_mupots_result *m)
{
    fprintf(f, "%s, all annotated people: %.2f %%, AUC %.2f (%d sequences)\n", what, all->pck, all->auc, all->n_seq);
    fprintf(f, "  matched people only: %.2f %%, AUC %.2f\n", m->pck, m->auc);
}

static void print_mupots(FILE *f, const rn_pose_test_result *r)
{
    const rn_pose_mupots_scores *s = &r->mu;
    print_pck(f, "3DPCK (root-relative, 150 mm)", &s->rel, &s->rel_matched);
    print_pck(f, "PCK_abs (camera space, 150 mm)", &s->abs, &s->abs_matched);
    fprintf(f, "3DPCK per sequence:");
    for (int q = 0; q < RN_MUPOTS_SEQS; q++)
        if (s->rel.seq[q].annotated) fprintf(f, " TS%d %.1f", q + 1, s->rel.seq[q].pck);
    fprintf(f, "\n%zu people predicted in %zu images; %zu annotated, %zu of them undetected; roots: %s\n", r->n,
            s->images, s->annotated, s->undetected, r->roots);
    if (s->mat_2d[0]) fprintf(f, "for mpii_mupots_multiperson_eval.m: %s, %s\n", s->mat_2d, s->mat_3d);
    else fprintf(f, "no .mat files: this rootnet was built without libmatio\n");
}

void rn_pose_test_result_print(FILE *f, const rn_pose_test_result *r)
{
    if (r->mupots) {
        print_mupots(f, r);
        return;
    }
    print_actions(f, "MPJPE (protocol 2 metric: root-relative, no alignment)", &r->mpjpe);
    print_actions(f, "PA-MPJPE (protocol 1 metric: rigid alignment)", &r->pa_mpjpe);
    if (r->have_baseline)
        fprintf(f, "baseline: the mean training pose (%zu records) for everyone: MPJPE %.2f mm; PoseNet's is %.2f of "
                   "it\n", r->baseline_n, r->baseline_mpjpe, r->mpjpe.mpjpe / r->baseline_mpjpe);
}

static void json_actions(FILE *f, const char *key, const rn_pose_h36m_result *r)
{
    fprintf(f, ", \"%s\": {", key);
    for (int a = 0, k = 0; a < RN_H36M_ACTIONS; a++)
        if (r->action_n[a]) fprintf(f, "%s\"%s\": %.17g", k++ ? ", " : "", rn_h36m_action_names[a], r->action[a]);
    fputc('}', f);
}

/* A number, or null for NaN. */
static void json_num(FILE *f, const char *key, double v)
{
    if (isfinite(v)) fprintf(f, "\"%s\": %.17g", key, v);
    else fprintf(f, "\"%s\": null", key);
}

/* "pck_<name>": ..., "auc_<name>": ... of sequence q (-1: over the sequences). */
static void json_pck(FILE *f, const char *name, const rn_pose_mupots_result *m, int q)
{
    char k[64];
    snprintf(k, sizeof k, "pck_%s", name);
    json_num(f, k, q < 0 ? m->pck : m->seq[q].pck);
    snprintf(k, sizeof k, "auc_%s", name);
    fputs(", ", f);
    json_num(f, k, q < 0 ? m->auc : m->seq[q].auc);
}

static void json_pcks(FILE *f, const rn_pose_mupots_scores *s, int q)
{
    json_pck(f, "rel", &s->rel, q), fputs(", ", f);
    json_pck(f, "rel_matched", &s->rel_matched, q), fputs(", ", f);
    json_pck(f, "abs", &s->abs, q), fputs(", ", f);
    json_pck(f, "abs_matched", &s->abs_matched, q);
}

/* A string value with '"' and '\\' escaped (paths). */
static void json_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, "\"%s\": \"", key);
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', f);
        if ((unsigned char)*c >= 0x20) fputc(*c, f);
    }
    fputc('"', f);
}

static void json_mupots(FILE *f, const rn_pose_test_result *r)
{
    const rn_pose_mupots_scores *s = &r->mu;
    fprintf(f, "{\"testset\": \"MuPoTS\", \"n\": %zu, ", r->n);
    json_str(f, "roots", r->roots);
    fputs(", ", f);
    json_pcks(f, s, -1);
    fprintf(f, ", \"annotated\": %zu, \"undetected\": %zu, \"images\": %zu, \"seq\": [", s->annotated, s->undetected,
            s->images);
    for (int q = 0; q < RN_MUPOTS_SEQS; q++) {
        fputs(q ? ", {" : "{", f);
        json_pcks(f, s, q);
        fprintf(f, ", \"annotated\": %zu, \"undetected\": %zu}", s->rel.seq[q].annotated, s->rel.seq[q].undetected);
    }
    fputs("], ", f);
    json_str(f, "mat_2d", s->mat_2d);
    fputs(", ", f);
    json_str(f, "mat_3d", s->mat_3d);
    fprintf(f, ", \"seconds\": %.3f}\n", r->seconds);
}

void rn_pose_test_result_json(FILE *f, const rn_pose_test_result *r)
{
    if (r->mupots) {
        json_mupots(f, r);
        return;
    }
    fprintf(f, "{\"testset\": \"Human36M\", \"n\": %zu, \"mpjpe\": %.17g, \"pa_mpjpe\": %.17g", r->n,
            r->mpjpe.mpjpe, r->pa_mpjpe.mpjpe);
    json_actions(f, "mpjpe_action", &r->mpjpe);
    json_actions(f, "pa_mpjpe_action", &r->pa_mpjpe);
    if (r->have_baseline) fprintf(f, ", \"baseline_mpjpe\": %.17g", r->baseline_mpjpe);
    fprintf(f, "}\n");
}
