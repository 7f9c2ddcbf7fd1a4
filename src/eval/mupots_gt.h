/* rn_mupots_gt: MuPoTS-3D's ground-truth people for PoseNet's evaluation, from the authors' MuPoTS-3D.json
 * (3DMPPE_POSENET_RELEASE data/MuPoTS: images with file_name "TS<seq>/img_<frame>.jpg" and intrinsic, annotations with
 * image_id, id, is_valid, keypoints_img (17 x 2 px), keypoints_cam (17 x 3 mm)): every annotation, the
 * invalid ones too, as the MATLAB script mpii_mupots_multiperson_eval.m counts them from annot.mat.
 *
 *   rn_mupots_gt g;
 *   if (rn_mupots_gt_read(&g, "data/MuPoTS/data/MuPoTS-3D.json", &err)) ...   // "FILE: annotation 3: ..."
 *   rn_pose_people gt = rn_mupots_gt_people(&g);                              // for rn_pose_mupots_eval
 *   int32_t seq, frame;
 *   double fc[4];
 *   if (rn_mupots_gt_image(&g, image_id, &seq, &frame, fc)) ...           // TS<seq>, img_<frame>; f, c
 *   rn_mupots_gt_free(&g);
 *
 * The file's keypoints_img and keypoints_cam stand for the script's annot2 and univ_annot3. Numbers in
 * float64 as the file has them.
 */
#ifndef RN_EVAL_MUPOTS_GT_H
#define RN_EVAL_MUPOTS_GT_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "eval/pose_metrics.h"

typedef struct rn_mupots_gt {
    size_t n;                 /* annotations, in file order */
    int64_t *image_id;        /* (n) */
    int64_t *ann_id;          /* (n) the annotation's id, -1 where it has none */
    int32_t *seq, *frame;     /* (n) of its image */
    double *kpt2d, *kpt3d;    /* (n, 17, 2) pixels, (n, 17, 3) mm */
    uint8_t *valid;           /* (n) is_valid != 0 */
    size_t n_img;             /* images, sorted by id */
    int64_t *img_id;
    int32_t *img_seq, *img_frame;
    double (*img_fc)[4];      /* intrinsic: fx, fy, cx, cy (pixels) */
} rn_mupots_gt;

/* Reads path. Returns 0, or -1 with "path: annotation i: field 'f': problem" (or "image i"): a file name
 * not of the form TS<1..20>/img_<frame>.<ext>, an annotation of an image not listed, not 17 joints, a
 * non-finite number. */
int rn_mupots_gt_read(rn_mupots_gt *g, const char *path, rn_err *err);
void rn_mupots_gt_free(rn_mupots_gt *g);
/* g's annotations as rn_pose_people (pointing into g). */
rn_pose_people rn_mupots_gt_people(const rn_mupots_gt *g);
/* The sequence, frame and (fc not NULL) intrinsic fx, fy, cx, cy of image image_id; 1, or 0 when g has no
 * such image. */
int rn_mupots_gt_image(const rn_mupots_gt *g, int64_t image_id, int32_t *seq, int32_t *frame, double fc[4]);
/* seq, frame from a MuPoTS-3D image path ".../TS<seq>/img_<frame>.<ext>" (their key TS<seq>_img_<frame>);
 * 1, or 0 when path is not of that form or seq is not 1..20. */
int rn_mupots_parse_image_path(const char *path, int32_t *seq, int32_t *frame);

#endif
