/* rn_eval results: the authors' result JSON files and ground-truth roots.
 *
 *   rn_err err = {0};
 *   rn_eval_results_write("out/bbox_root_mupots_output.json", RN_EVAL_MUPOTS, pred, n, &err);
 *   rn_root_pred *back; size_t n_back;
 *   if (rn_eval_results_read(&back, &n_back, "out/bbox_root_mupots_output.json", RN_EVAL_MUPOTS, &err))
 *       fprintf(stderr, "%s\n", err.msg);   // "FILE: record 12: field 'root_cam': ..."
 *   free(back);
 *
 * Result files are a JSON array of objects, one per prediction, with the
 * fields the authors' evaluate() writes:
 *   MuPoTS   (bbox_root_mupots_output.json):   image_id, root_cam, bbox, score
 *   Human36M (bbox_root_human36m_output.json): image_id, bbox, root_cam
 *   PW3D     (bbox_root_pw3d_output.json; their test.py names it
 *             rootnet_pw3d_output.json):       image_id, ann_id, bbox, root_cam
 * root_cam is camera space in the dataset's unit (mm; m for 3DPW), bbox is
 * x, y, w, h after process_bbox. Reading accepts extra fields; score is
 * required for MuPoTS and read when present elsewhere (else 1), ann_id is
 * required for PW3D and read when present elsewhere (else -1).
 *
 * Ground-truth files: the authors' MuPoTS-3D.json (COCO style: annotations
 * with image_id, keypoints_cam (root = joint 14), is_valid), or a plain root
 * list written by rn_eval_gt_write: [{image_id, ann_id, root_cam, is_valid,
 * action}, ...].
 *
 * Writers are atomic (temp file in the same folder, fsync, rename) and print
 * numbers with 17 significant digits, so reading gives back the same doubles.
 */
#ifndef RN_EVAL_RESULTS_H
#define RN_EVAL_RESULTS_H

#include <stddef.h>

#include "core/status.h"
#include "eval/metrics.h"

/* The authors' result file name for a kind ("bbox_root_mupots_output.json", ...). */
const char *rn_eval_results_filename(rn_eval_kind kind);

/* Writes n predictions as the authors' result file of that kind, atomically.
 * Returns 0, or -1 naming the file (or the record with a non-finite value). */
int rn_eval_results_write(const char *path, rn_eval_kind kind, const rn_root_pred *pred, size_t n, rn_err *err);
/* Where a prediction came from: the detector's box as given (x, y, w, h) and
 * its index in the detections file (rootnet predict). */
typedef struct rn_det_ref {
    double box[4];
    int64_t index;
} rn_det_ref;
/* rn_eval_results_write with each record's "det_bbox" and "det_index" from
 * det (n of them; NULL: none, the authors' format alone). */
int rn_eval_results_write_det(const char *path, rn_eval_kind kind, const rn_root_pred *pred, const rn_det_ref *det,
                              size_t n, rn_err *err);
/* The same file's bytes into *text (len bytes, ending in a newline, not NUL-terminated; free() it), for a
 * caller that writes it beside another (rn_afile_commit_pair). path only names it in messages. */
int rn_eval_results_encode_det(char **text, size_t *len, const char *path, rn_eval_kind kind,
                               const rn_root_pred *pred, const rn_det_ref *det, size_t n, rn_err *err);
/* Each prediction's joints (rootnet predict with a PoseNet): J names; img (n, J, 3): x, y (pixels), depth (mm);
 * cam (n, J, 3): X, Y, Z (mm), camera space. */
typedef struct rn_pose_rows {
    int J;
    const char *const *names;
    const double *img, *cam;
} rn_pose_rows;
/* rn_eval_results_encode_det with each record's "joints": [{"name", "img", "cam"}, ...] from pose (NULL: none). */
int rn_eval_results_encode_pose(char **text, size_t *len, const char *path, rn_eval_kind kind,
                                const rn_root_pred *pred, const rn_det_ref *det, const rn_pose_rows *pose, size_t n,
                                rn_err *err);

/* Reads a result file of that kind into a new array (*pred, free() it).
 * Returns 0, or -1 with "path: record i: field 'f': problem" in err. */
int rn_eval_results_read(rn_root_pred **pred, size_t *n, const char *path, rn_eval_kind kind, rn_err *err);
/* Same, from len bytes in memory; path only names them in messages. */
int rn_eval_results_parse(rn_root_pred **pred, size_t *n, const char *data, size_t len, const char *path,
                          rn_eval_kind kind, rn_err *err);

/* Writes ground-truth roots as a plain root list, atomically. Returns 0 or -1. */
int rn_eval_gt_write(const char *path, const rn_root_gt *gt, size_t n, rn_err *err);

/* Reads ground-truth roots (*gt, free() it) from a plain root list or, when the
 * top level is an object with "annotations", from MuPoTS-3D.json (root joint
 * 14, action -1), keeping annotation-file order. Returns 0, or -1 with
 * "path: record i: field 'f': problem". */
int rn_eval_gt_read(rn_root_gt **gt, size_t *n, const char *path, rn_err *err);
/* Same, from len bytes in memory; path only names them in messages. */
int rn_eval_gt_parse(rn_root_gt **gt, size_t *n, const char *data, size_t len, const char *path, rn_err *err);

#endif
