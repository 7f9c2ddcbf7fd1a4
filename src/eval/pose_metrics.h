/* rn_pose: PoseNet's evaluation as the authors compute it (mks0601/3DMPPE_POSENET_RELEASE): Human3.6M
 * MPJPE and PA-MPJPE (data/Human36M/Human36M.py, evaluate; common/utils/pose_utils.py, rigid_align),
 * MuPoTS-3D 3DPCK, PCK_abs and AUC (data/MuPoTS/mpii_mupots_multiperson_eval.m and the MuPoTS-3D util
 * functions it calls), and the .mat prediction files that script reads (data/MuPoTS/MuPoTS.py,
 * evaluate). Pure functions over arrays: the caller brings poses, joint indices and labels.
 *
 *   // one person: network output (J, 3) -> camera mm, as their evaluate()
 *   rn_pose_output_to_cam(cam + 3 * J * i, out + 3 * J * i, J, &cam_in);
 *   rn_pose_h36m_result r;
 *   rn_pose_h36m_eval(&r, cam, gt, action, n, &(rn_pose_joints){18, 0, eval, 17}, 1, 0, &err); // PA-MPJPE
 *   printf("%.2f mm, Directions %.2f\n", r.mpjpe, r.action[0]);
 *
 *   rn_pose_mupots_result m;
 *   rn_pose_mupots_eval(&m, &gt_people, &pred_people, 1, 0, &err);  // 3DPCK (relative), all annotated
 *   printf("3DPCK %.1f AUC %.1f, TS1 %.1f\n", m.pck, m.auc, m.seq[0].pck);
 *   rn_pose_mat_write("preds_3d_kpt_mupots.mat", keys, kpt3d, n, 17, 3, &err);   // needs libmatio
 *
 * Units: millimetres (camera space) and pixels, as their files. Arrays are C order; every function
 * refuses non-finite input, naming the record.
 */
#ifndef RN_EVAL_POSE_METRICS_H
#define RN_EVAL_POSE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "eval/metrics.h"

/* ---- geometry ---------------------------------------------------------------------------------- */

/* Where a person's crop lies and how its depth is placed: their evaluate()'s inputs. */
typedef struct rn_pose_cam_in {
    double bbox[4];     /* x, y, w, h after process_bbox, pixels */
    double root_z;      /* root depth, mm (ground truth's, or RootNet's root_cam[2]) */
    double f[2], c[2];  /* focal length and principal point, pixels */
    int out_w, out_h;   /* output grid (their cfg.output_shape: 64 x 64) */
    int depth_dim;      /* depth bins (their cfg.depth_dim: 64) */
    double bbox_3d;     /* depth range, mm (their cfg.bbox_3d_shape[0]: 2000) */
} rn_pose_cam_in;

/* out (J, 3): x, y on the output grid, z in depth bins -> img (J, 3) pixels and depth mm (NULL: not
 * wanted) and cam (J, 3) camera mm: x / out_w * w + bx, y / out_h * h + by, (z / D * 2 - 1) *
 * bbox_3d / 2 + root_z, then X = (x - cx) / fx * Z, Y = (y - cy) / fy * Z (their pixel2cam). */
void rn_pose_output_to_cam(double *img, double *cam, const double *out, int J, const rn_pose_cam_in *in);

/* A (n, 3) rigidly aligned onto B (n, 3) into out (n, 3; may be A), as their rigid_align: centroids,
 * the SVD of H = (A - cA)^T (B - cB), R = V U^T, and where det R < 0 the reflection fix (V's last row,
 * the smallest singular value's, negated); t = cB - R cA. with_scale 1 also fits the scale (Umeyama:
 * s = sum of the fixed singular values / sum |A - cA|^2), 0 as their pose_utils.py (no scale).
 * Returns 0, or -1 for n < 1 or non-finite input. */
int rn_pose_rigid_align(double *out, const double *A, const double *B, int n, int with_scale, rn_err *err);

/* ---- Human3.6M: MPJPE (protocol 2), PA-MPJPE (protocol 1) --------------------------------------- */

/* The joints a pose has and which of them count. */
typedef struct rn_pose_joints {
    int J;             /* joints per pose (Human36M: 18, Thorax added) */
    int root;          /* subtracted from every joint first (Pelvis: 0) */
    const int *eval;   /* joints scored (their eval_joint: 0..16, Thorax left out), neval of them */
    int neval;
} rn_pose_joints;

typedef struct rn_pose_h36m_result {
    double mpjpe;                      /* mean error over people and scored joints, mm */
    double action[RN_H36M_ACTIONS];    /* the same per action 2 + i; NaN where none (numpy's mean of []) */
    size_t action_n[RN_H36M_ACTIONS];  /* people of action 2 + i */
    size_t n;
} rn_pose_h36m_result;

/* Their Human36M.evaluate over n people: pred, gt (n, J, 3) camera mm; action[i] 2..16. Each pose less
 * its own root joint; protocol 1 aligns each prediction onto its ground truth over all J joints
 * (rn_pose_rigid_align with pa_scale; theirs: 0) before the scored joints are taken, protocol 2 does
 * not. Returns 0, or -1 naming the record (non-finite, action outside 2..16), for a protocol other
 * than 1 or 2, bad joints or n == 0. */
int rn_pose_h36m_eval(rn_pose_h36m_result *r, const double *pred, const double *gt, const int *action, size_t n,
                      const rn_pose_joints *joints, int protocol, int pa_scale, rn_err *err);

/* ---- MuPoTS-3D: 3DPCK, PCK_abs, AUC --------------------------------------------------------------- */

#define RN_MUPOTS_SEQS 20
#define RN_MUPOTS_J 17    /* MuPoTS-3D's joints, in their order (Pelvis 14); MuCo's first 17 */
#define RN_MUPOTS_AUC_T 31 /* thresholds 0, 5, ..., 150 mm */

/* People of MuPoTS-3D images: ground truth (their annot.mat: annot2, univ_annot3, isValidFrame) or
 * predictions (what MuPoTS.py saves: eval joints, 2D in pixels, 3D in camera mm). Within an image
 * people keep the order given (annotation order; the .mat lists' order). */
typedef struct rn_pose_people {
    size_t n;
    const int32_t *seq;     /* (n) sequence 1..20 (TS1..TS20) */
    const int32_t *frame;   /* (n) image index in the sequence, from 0 (img_000000) */
    const double *kpt2d;    /* (n, 17, 2) pixels */
    const double *kpt3d;    /* (n, 17, 3) mm */
    const uint8_t *valid;   /* (n) isValidFrame; NULL: all valid (predictions: ignored) */
} rn_pose_people;

typedef struct rn_pose_mupots_seq {
    double pck;             /* 100 x share of scored joint errors < 150 mm; NaN where none scored */
    double auc;             /* 100 x mean over the 31 thresholds of that share; NaN where none */
    size_t annotated;       /* valid ground-truth people */
    size_t undetected;      /* of them, matched to no prediction */
    size_t scored;          /* people scored (all annotated, or the matched ones) */
} rn_pose_mupots_seq;

typedef struct rn_pose_mupots_result {
    rn_pose_mupots_seq seq[RN_MUPOTS_SEQS];  /* TS1..TS20 */
    double pck, auc;        /* means over the sequences with people scored */
    int n_seq;              /* those sequences */
} rn_pose_mupots_result;

/* mpii_mupots_multiperson_eval(matched_only, is_relative) over the images with valid ground truth:
 * predictions matched to people by 2D (joints 1..13, |dx| and |dy| < 40 px on both-visible joints,
 * a prediction joint at (0, 0) not visible; greedy in annotation order, the first best score > 0);
 * is_relative 1: poses less their Pelvis (3DPCK), 0: as they are (PCK_abs); each matched prediction's
 * bones rescaled to the ground truth's (mpii_map_to_gt_bone_lengths), an unmatched person's joints
 * at 100000 mm (scored unless matched_only); PCK and AUC over the 14 joints of
 * mpii_get_pck_auc_joint_groups (head top to ankles), per sequence (mpii_compute_3d_pck). Predictions
 * of images without valid ground truth are not read; an image with valid ground truth and no
 * prediction is one where nobody was detected (their script needs its key). Returns 0, or -1 naming the record (sequence outside 1..20, frame < 0, non-finite). */
int rn_pose_mupots_eval(rn_pose_mupots_result *r, const rn_pose_people *gt, const rn_pose_people *pred,
                        int is_relative, int matched_only, rn_err *err);

/* ---- the .mat files ----------------------------------------------------------------------------- */

/* Their image key "TS<seq>_img_<frame, 6 digits>" ("TS1_img_000000") into buf. Returns 0, or -1 when
 * it does not fit. */
int rn_pose_mupots_key(char *buf, size_t len, int seq, int frame, rn_err *err);

/* Writes what scipy.io.savemat(path, {key: [pose, ...]}) writes for MuPoTS.py (MAT 5, uncompressed):
 * one double variable per distinct key (in strcmp order; MATLAB's load does not care), holding the
 * (m, J, D) array of the m people with that key in the order given; kpt (n, J, D). Keys must be MATLAB names (a letter, then
 * letters, digits and '_', at most 63). Atomic (a temporary beside path, renamed). Returns 0, or -1
 * naming the file or key, or saying the build has no libmatio. */
int rn_pose_mat_write(const char *path, const char *const *key, const double *kpt, size_t n, int J, int D,
                      rn_err *err);
/* 1 where this build writes .mat files (libmatio), else 0. */
int rn_pose_mat_available(void);

#endif
