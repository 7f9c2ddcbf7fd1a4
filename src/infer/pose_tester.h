/* rn_pose_test: test-set evaluation of a PoseNet (the authors' 3DMPPE_POSENET_RELEASE test.py,
 * Human36M.evaluate and MuPoTS.evaluate with their MATLAB mpii_mupots_multiperson_eval.m), with weights in
 * memory.
 *
 *   rn_test_opts o; rn_test_opts_default(&o);            // as RootNet's tester (infer/tester.h)
 *   o.testset = "Human36M"; o.data_dir = "data"; o.input_size = 256;
 *   rn_pose_test_opts po = {.flip_test = 1, .baseline = 1};
 *   rn_pose_test_result r;
 *   if (rn_pose_test_run(&r, &params, &o, &po, &err)) ...
 *   rn_pose_test_result_print(stdout, &r);                // MPJPE, PA-MPJPE (mm), per action
 *
 * Per record: the loader's test-mode crop of the box, an eval-mode forward, with flip_test also of the
 * horizontally flipped crop (x -> out_w - x - 1, the flip pairs swapped, the two averaged, as their
 * test.py); x, y back through the box, depth (z / 64 * 2 - 1) * 1000 + the ground-truth root's depth
 * (their evaluate), camera X, Y from the record's f, c. Human3.6M: MPJPE (each pose less its Pelvis, no
 * alignment; their protocol 2 metric) and PA-MPJPE (rigid alignment first; their protocol 1 metric) over
 * their 17 evaluation joints, overall and per action, on the split of o's protocol (2: subjects 9 and 11).
 * With baseline, the MPJPE of always answering the training split's mean root-relative pose.
 * MuPoTS-3D (a PoseNet of MuCo's 21 joints; the 17 of MuPoTS taken by name): the root depth from
 * bbox_root (RootNet's result, matched to each record by image_id and box: infer/pose_mupots.h), else
 * the ground truth's (GT boxes); the 3DPCK (root-relative), PCK_abs and AUC of the MATLAB script over all
 * annotated people and over the matched ones, and preds_2d_kpt_mupots.mat / preds_3d_kpt_mupots.mat in
 * o->result_dir. The net must have every joint of the test set (a PoseNet of MuCo's joints is refused on
 * Human3.6M, Human3.6M's on MuPoTS-3D).
 */
#ifndef RN_INFER_POSE_TESTER_H
#define RN_INFER_POSE_TESTER_H

#include <stdio.h>

#include "core/status.h"
#include "eval/pose_metrics.h"
#include "infer/pose_mupots.h"
#include "infer/tester.h"
#include "nn/params.h"

typedef struct rn_pose_test_opts {
    int flip_test; /* 1: also the flipped crop, averaged (their cfg.flip_test) */
    int baseline;  /* 1: also the mean training pose's MPJPE (Human3.6M) */
    const char *bbox_root; /* MuPoTS: RootNet's result (bbox_root_mupots_output.json format) giving the roots;
                            * NULL: the ground truth's (GT boxes only) */
} rn_pose_test_opts;

typedef struct rn_pose_test_result {
    int mupots;                     /* 1: MuPoTS-3D's numbers (mu, roots), 0: Human3.6M's */
    size_t n;                       /* people scored */
    rn_pose_h36m_result mpjpe;      /* no alignment */
    rn_pose_h36m_result pa_mpjpe;   /* rigid alignment first */
    int have_baseline;
    double baseline_mpjpe;          /* the training split's mean root-relative pose for everyone, mm */
    size_t baseline_n;              /* training records averaged */
    rn_pose_mupots_scores mu;       /* MuPoTS-3D */
    char roots[4096];               /* MuPoTS-3D: "ground truth" or the bbox_root file */
    double seconds;
} rn_pose_test_result;

int rn_pose_test_run(rn_pose_test_result *r, rn_params *p, const rn_test_opts *o, const rn_pose_test_opts *po,
                     rn_err *err);
void rn_pose_test_result_print(FILE *f, const rn_pose_test_result *r);
/* The same as one JSON object, full precision. Human3.6M: {"testset", "n", "mpjpe", "pa_mpjpe", "mpjpe_action":
 * {name: mm}, "pa_mpjpe_action", "baseline_mpjpe"}. MuPoTS: {"testset", "n", "roots", "pck_rel", "auc_rel",
 * "pck_rel_matched", "auc_rel_matched", "pck_abs", "auc_abs", "pck_abs_matched", "auc_abs_matched", "annotated",
 * "undetected", "seq": [20 x {"pck_rel", "auc_rel", ..., "annotated", "undetected"}], "mat_2d", "mat_3d"}
 * (NaN, a sequence without people, as null). */
void rn_pose_test_result_json(FILE *f, const rn_pose_test_result *r);

#endif
