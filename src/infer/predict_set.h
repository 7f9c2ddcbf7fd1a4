/* rn_pset: `rootnet predict`, the roots of every detected person over many
 * images, with any detector's boxes.
 *
 *   rn_pset_opts o; rn_pset_opts_default(&o);
 *   o.boxes = "dets.json"; o.coco_images = "images.json"; o.image_dir = "frames";
 *   o.output = "out"; o.input_size = 256;
 *   rn_pset_summary s;
 *   if (rn_pset_run(&s, &params, &o, &err)) ...     // fatal: boxes file unreadable, output not writable, ...
 *   // out/bbox_root_output.json (the authors' bbox_root format) and out/bbox_root_output.csv
 *   rn_pset_summary_print(stderr, &s);
 *
 * Boxes (o.boxes, by its top level):
 *   an array: COCO results [{image_id, category_id, bbox, score}], image ids
 *     resolved by o.coco_images ("images": [{id, file_name}], names relative to
 *     o.image_dir, else that file's folder), else the 0-based position of the
 *     image in o.images / o.image_list / o.image_dir (sorted);
 *   an object: {"file name": [[x, y, w, h, score], ...]}, names relative to
 *     o.image_dir; image ids are the 0-based order of the keys.
 * Only category 1 (person) is kept (a missing category_id counts as person);
 * a score below score_thr is dropped; xyxy boxes are x1, y1, x2, y2.
 * Per box: rn_predict_box_int (JSON integers keep the authors' integer
 * process_bbox), k with the image's focal, the loader's test-mode crop on
 * worker threads while the model runs (eval forward), x, y mapped back
 * through the box, camera X, Y from the image's intrinsics: exactly what
 * `rootnet test --det-bbox` computes for the same record.
 * Intrinsics per image, first found: o.f / o.c (flags), o.intrinsics (JSON
 * {"file name": [fx, fy, cx, cy] or {"focal": [fx, fy], "princpt": [cx, cy]}}),
 * the images file's "intrinsic" [fx, fy, cx, cy] or "cam_param" {focal,
 * princpt}, EXIF (data/image/exif_focal.h), else focal 1500 (principal point: the
 * image centre unless given). Camera values are held as floats (as records).
 * Bad input (unreadable image, unknown image id, malformed record, box
 * outside the image, non-person category, broken EXIF) is counted and named
 * on o.log (the first RN_PSET_REPORT of each kind); the rest is written.
 */
#ifndef RN_INFER_PREDICT_SET_H
#define RN_INFER_PREDICT_SET_H

#include <stdio.h>

#include "core/status.h"
#include "infer/predict_opts.h"
#include "nn/params.h"

/* Defaults: input 256, batch 16, 1 worker, fp32, progress, log_every 100, log stderr. */
void rn_pset_opts_default(rn_pset_opts *o);
/* Runs everything (rn_pset_open, rn_pset_predict with o's input size, close);
 * returns 0 once the outputs are written (even with no root; s->people
 * says), or -1 for a fatal problem. */
int rn_pset_run(rn_pset_summary *s, rn_params *p, const rn_pset_opts *o, rn_err *err);

/* The same in two halves, so that the inputs are checked before a snapshot is loaded:
 *
 *   rn_pset *ps;
 *   if (rn_pset_open(&ps, &s, &o, &err)) ...          // boxes, images' headers, intrinsics, output folder
 *   ... load the weights ...
 *   rc = rn_pset_predict(ps, &params, 256, 0, &err);   // the model, then the outputs
 *   rn_pset_close(ps);
 *
 * rn_pset_open copies o; s is filled and must outlive ps. -1 with err for a
 * fatal problem (*out NULL). */
typedef struct rn_pset rn_pset;
int rn_pset_open(rn_pset **out, rn_pset_summary *s, const rn_pset_opts *o, rn_err *err);
/* The model over the records read (input_size: a multiple of 32; fast_decode
 * 0/1, the snapshot's settings), then the JSON and CSV. */
int rn_pset_predict(rn_pset *ps, rn_params *p, int input_size, int fast_decode, rn_err *err);
/* With a PoseNet (before rn_pset_predict; borrowed, NULL: none): every person's joints too, PoseNet's pose on the
 * same crop placed at RootNet's root (the authors' demo.py): x, y in image pixels, depth (z / 64 * 2 - 1) * 1000
 * + the root's depth (mm), camera X, Y, Z from the image's intrinsics; the JSON's records gain "joints" and the
 * CSV a column per joint and value; pictures (o.draw) show the skeletons. */
void rn_pset_set_pose(rn_pset *ps, rn_params *pose);
/* Frees ps; NULL is fine. */
void rn_pset_close(rn_pset *ps);
/* "predict: N images (M with people), P people; skipped: ..." lines. */
void rn_pset_summary_print(FILE *f, const rn_pset_summary *s);
#endif
