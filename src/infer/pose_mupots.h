/* PoseNet's MuPoTS-3D test, the part after the network (infer/pose_tester.c): each record's root depth,
 * image and place in the output, then their MuPoTS.py evaluate (camera joints, the .mat files) and the
 * MATLAB script's 3DPCK, PCK_abs and AUC (eval/pose_metrics.h).
 *
 *   rn_pose_mupots *pm;
 *   if (rn_pose_mupots_prepare(&pm, &ds, &o, bbox_root, &err)) ...     // before the forward: bad input first
 *   ... forward: out (n, J, 3) on the output grid ...
 *   rn_pose_mupots_scores s;
 *   if (rn_pose_mupots_score(&s, pm, &ds, &rows, o.result_dir, &err)) ...
 *   rn_pose_mupots_free(pm);
 *
 * Roots as theirs: with bbox_root (RootNet's result in the authors' bbox_root_mupots_output.json format)
 * each record takes the root_cam depth of the entry of its image_id and box (process_bbox's, within 1e-3 px),
 * and the people are listed in the file's order (theirs reads the file's entries); every record needs an
 * entry and (without o->limit) every entry a record. Without it, GT boxes take the ground-truth root depth
 * (their cfg.use_gt_info) and detector boxes are refused.
 */
#ifndef RN_INFER_POSE_MUPOTS_H
#define RN_INFER_POSE_MUPOTS_H

#include "core/status.h"
#include "data/sets/sample.h"
#include "eval/pose_metrics.h"
#include "infer/tester.h"

typedef struct rn_pose_mupots rn_pose_mupots;

/* The MATLAB script's numbers and the files written. */
typedef struct rn_pose_mupots_scores {
    rn_pose_mupots_result rel, rel_matched;   /* 3DPCK (root-relative): all annotated people, matched only */
    rn_pose_mupots_result abs, abs_matched;   /* PCK_abs (camera space) */
    size_t annotated, undetected;             /* valid ground-truth people; of them matched to no prediction */
    size_t images;                            /* images with predictions (.mat variables) */
    char mat_2d[4096], mat_3d[4096];          /* the .mat files written; "" without libmatio */
} rn_pose_mupots_scores;

/* The network's rows of every record and how to read them. */
typedef struct rn_pose_mupots_rows {
    const double *out;     /* (n, J, 3): x, y on the output grid, z in depth bins (flip-averaged) */
    int J;                 /* the net's joints */
    const int *joint;      /* (17): the net's row of MuPoTS joint j */
    int out_w, out_h, depth_dim;
} rn_pose_mupots_rows;

/* Reads the ground truth (o->gt_path, else o->data_dir/MuPoTS/data/MuPoTS-3D.json) and the roots (see
 * above) for ds's records. Returns 0, or -1 with one line: a bbox_root file whose image ids or boxes are
 * not the test set's, a record without a root, detector boxes without bbox_root, a ground truth that is
 * not ds's. */
int rn_pose_mupots_prepare(rn_pose_mupots **pm, const rn_dataset *ds, const rn_test_opts *o, const char *bbox_root,
                           rn_err *err);
/* Their evaluate on rows: camera joints, the four MATLAB evaluations, then preds_2d_kpt_mupots.mat and
 * preds_3d_kpt_mupots.mat into result_dir (made if missing) where the build has libmatio. Returns 0 or -1. */
int rn_pose_mupots_score(rn_pose_mupots_scores *s, const rn_pose_mupots *pm, const rn_dataset *ds,
                         const rn_pose_mupots_rows *rows, const char *result_dir, rn_err *err);
/* Where the roots came from: "ground truth" or the bbox_root path. */
const char *rn_pose_mupots_roots(const rn_pose_mupots *pm);
void rn_pose_mupots_free(rn_pose_mupots *pm);

#endif
