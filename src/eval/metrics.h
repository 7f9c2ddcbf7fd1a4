/* rn_eval metrics: the authors' RootNet evaluation (3DMPPE_ROOTNET_RELEASE),
 * MuPoTS-3D AP_root and Human3.6M / 3DPW MRPE, on plain arrays.
 *
 * The flow of `rootnet test` (network output -> camera space -> result file
 * -> metric):
 *
 *   rn_root_pred *pred = rn_xcalloc(ds.n, sizeof *pred);
 *   rn_root_gt *gt = rn_xcalloc(ds.n, sizeof *gt);
 *   for (size_t i = 0; i < ds.n; i++) {
 *       double img[3];
 *       rn_eval_output_to_image(img, out + 3 * i, ds.samples[i].bbox, 64, 64);
 *       rn_eval_pred_from_sample(&pred[i], &ds.samples[i], img);
 *       rn_eval_gt_from_sample(&gt[i], &ds.samples[i]);
 *   }
 *   rn_eval_kind kind;
 *   rn_eval_kind_parse(&kind, ds.name, &err);
 *   rn_eval_results_write(path, kind, pred, ds.n, &err);      // results.h
 *   if (kind == RN_EVAL_MUPOTS) {
 *       // MuPoTS needs every GT root of the test set (also the undetected ones):
 *       // read them from MuPoTS-3D.json, not from the detection-box samples.
 *       rn_root_gt *all; size_t n_all;
 *       rn_eval_gt_read(&all, &n_all, "data/MuPoTS/data/MuPoTS-3D.json", &err);   // results.h
 *       rn_ap_result ap;
 *       rn_eval_mupots_ap(&ap, pred, ds.n, all, n_all, 250.0, &err);
 *       printf("AP_root: %.4f\n", ap.ap);
 *   } else if (kind == RN_EVAL_H36M) {
 *       rn_h36m_result r;
 *       rn_eval_h36m_mrpe(&r, pred, gt, NULL, ds.n, &err);     // paired by index
 *       rn_eval_h36m_print(stdout, &r);
 *   } else {
 *       rn_mrpe r;
 *       rn_eval_mrpe(&r, pred, gt, NULL, ds.n, &err);          // metres for 3DPW
 *   }
 *
 * Units: the dataset's own (mm for Human3.6M and MuPoTS, m for 3DPW), as in
 * the authors' code; the 3DPW MRPE is therefore in metres, as they print it.
 * Every function rejects non-finite inputs with "prediction i: field: ..." or
 * "ground truth i: field: ...".
 */
#ifndef RN_EVAL_METRICS_H
#define RN_EVAL_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"
#include "data/sets/sample.h"

/* A test set's evaluation; its set names it in rn_set_desc.eval (data/sets/descriptor.h). */
typedef enum { RN_EVAL_MUPOTS = 0, RN_EVAL_H36M = 1, RN_EVAL_PW3D = 2 } rn_eval_kind;

/* One predicted root, as in the authors' result files. */
typedef struct rn_root_pred {
    int64_t image_id;   /* annotation file's image id */
    int64_t ann_id;     /* 3DPW annotation id; -1 where the set has none */
    double bbox[4];     /* x, y, w, h after process_bbox, pixels */
    double root_cam[3]; /* X, Y, Z camera space, dataset unit */
    double score;       /* detection score (MuPoTS); 1 where the file has none */
} rn_root_pred;

/* One ground-truth root. */
typedef struct rn_root_gt {
    int64_t image_id;
    int64_t ann_id;     /* annotation id, or -1 */
    double root_cam[3]; /* X, Y, Z camera space, dataset unit */
    int32_t is_valid;   /* MuPoTS is_valid flag; 1 elsewhere */
    int32_t action;     /* Human3.6M action 2..16, else -1 */
} rn_root_gt;

/* MuPoTS-3D AP_root at one distance threshold. */
typedef struct rn_ap_result {
    double ap;        /* sum_{n>=1} p[n] * (r[n] - r[n-1]), as the authors */
    double thr;       /* threshold used, dataset unit (mm) */
    size_t n_gt;      /* valid GT roots (the recall denominator) */
    size_t n_tp, n_fp;
    size_t n_skipped; /* predictions in images with no valid GT (not counted) */
} rn_ap_result;

/* Mean root position error: mean Euclidean distance and mean |dx|, |dy|, |dz|. */
typedef struct rn_mrpe {
    double total, x, y, z;
    size_t n;
} rn_mrpe;

#define RN_H36M_ACTIONS 15
typedef struct rn_h36m_result {
    rn_mrpe all;
    double action[RN_H36M_ACTIONS];   /* MRPE of action 2 + i; NaN when empty (numpy's mean) */
    size_t action_n[RN_H36M_ACTIONS]; /* samples of action 2 + i */
} rn_h36m_result;

/* The authors' action names; index i is Human3.6M action 2 + i. */
extern const char *const rn_h36m_action_names[RN_H36M_ACTIONS];

/* "MuPoTS", "Human36M" or "PW3D" (also "3DPW") -> kind; else -1 naming the set. */
int rn_eval_kind_parse(rn_eval_kind *kind, const char *name, rn_err *err);
/* The authors' dataset name of a kind ("MuPoTS", "Human36M", "PW3D"). */
const char *rn_eval_kind_name(rn_eval_kind kind);

/* Network output (x, y on an out_w x out_h map, depth) -> image pixels and depth:
 * x / out_w * bbox_w + bbox_x, y / out_h * bbox_h + bbox_y, depth unchanged. */
void rn_eval_output_to_image(double img[3], const float out[3], const float bbox[4], int out_w, int out_h);
/* The depth PoseNet's bins span, root-relative: the authors' bbox_3d_shape[0], mm. */
#define RN_POSE_DEPTH_RANGE 2000.0

/* Image pixels and depth -> camera space: X = (x - cx) / fx * Z, Y = (y - cy) / fy * Z. */
void rn_eval_image_to_cam(double cam[3], const double img[3], const double f[2], const double c[2]);
/* Fills a prediction from a sample's ids, box (its float64 box where it has one: rn_sample_box), score and
 * camera, and a root in image space. */
void rn_eval_pred_from_sample(rn_root_pred *pred, const rn_sample *s, const double root_img[3]);
/* Fills a ground truth from a sample (image_id, ann_id, root_cam, is_valid, action). */
void rn_eval_gt_from_sample(rn_root_gt *gt, const rn_sample *s);

/* MuPoTS-3D AP_root with the authors' calculate_score: predictions sorted by
 * score, descending (ties keep their input order: Python's stable sort); each
 * takes the nearest valid GT root of its image (matched or not, first in GT
 * order on equal distance) and is a true positive when that distance is < thr
 * and that GT is still unmatched, else a false positive. Predictions in an
 * image without a valid GT root are skipped. gt holds every GT root of the
 * test set in annotation-file order. Returns 0, or -1 on non-finite input,
 * thr <= 0 or no valid GT. */
int rn_eval_mupots_ap(rn_ap_result *res, const rn_root_pred *pred, size_t n_pred, const rn_root_gt *gt,
                      size_t n_gt, double thr, rn_err *err);

/* MRPE of pred[i] against gt[gt_index[i]] (gt[i] when gt_index is NULL), n > 0.
 * Returns 0, or -1 on non-finite input or n == 0. */
int rn_eval_mrpe(rn_mrpe *res, const rn_root_pred *pred, const rn_root_gt *gt, const size_t *gt_index, size_t n,
                 rn_err *err);
/* Human3.6M MRPE, total and per action (gt action 2..16), pairing as rn_eval_mrpe.
 * Returns 0, or -1 on non-finite input, an action outside 2..16 or n == 0. */
int rn_eval_h36m_mrpe(rn_h36m_result *res, const rn_root_pred *pred, const rn_root_gt *gt, const size_t *gt_index,
                      size_t n, rn_err *err);
/* Pairs each prediction with its GT: the first GT with the same image_id
 * (Human3.6M: one person per image) or, when by_ann_id, the same ann_id (3DPW).
 * gt_index has n_pred entries. Returns 0, or -1 naming a prediction with no GT. */
int rn_eval_pair(size_t *gt_index, const rn_root_pred *pred, size_t n_pred, const rn_root_gt *gt, size_t n_gt,
                 int by_ann_id, rn_err *err);

/* Prints the authors' summary lines ("MRPE >> tot: ..., x: ..., ..." and per action). */
void rn_eval_h36m_print(FILE *f, const rn_h36m_result *r);
/* "AP_root@25cm: 0.xxxx  (tp N, fp N, valid GT N, skipped N[; note])", the line test and evaluate print
 * (the threshold in cm); note NULL: none. */
void rn_eval_ap_print(FILE *f, const rn_ap_result *r, const char *note);
/* "MRPE (mm, N records): total T  x X  y Y  z Z" (unit "m" for 3DPW). */
void rn_eval_mrpe_print(FILE *f, const rn_mrpe *m, const char *unit);

#endif
