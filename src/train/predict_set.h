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
 * princpt}, EXIF (data/exif_focal.h), else focal 1500 (principal point: the
 * image centre unless given). Camera values are held as floats (as records).
 * Bad input (unreadable image, unknown image id, malformed record, box
 * outside the image, non-person category, broken EXIF) is counted and named
 * on o.log (the first RN_PSET_REPORT of each kind); the rest is written.
 */
#ifndef RN_TRAIN_PREDICT_SET_H
#define RN_TRAIN_PREDICT_SET_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"
#include "nn/device.h"
#include "nn/params.h"

#define RN_PSET_REPORT 20

typedef enum {
    RN_PSKIP_CATEGORY,  /* category_id != 1 */
    RN_PSKIP_SCORE,     /* score < score_thr (a filter, not an error) */
    RN_PSKIP_UNKNOWN,   /* detection for an image id / name not among the images */
    RN_PSKIP_RECORD,    /* malformed detection record */
    RN_PSKIP_BOX,       /* box outside the image, empty, or not finite */
    RN_PSKIP_IMAGE,     /* person in an unreadable or corrupt image */
    RN_PSKIP_EXIF,      /* images with broken EXIF (they fall back, people kept) */
    RN_PSKIP_N
} rn_pskip;

typedef struct rn_pset_opts {
    const char *boxes;          /* detections (required) */
    const char *const *images;  /* single image files, n_images of them */
    int n_images;
    const char *image_list;     /* a file naming one image per line (# comments) */
    const char *image_dir;      /* every .jpg/.jpeg/.png in it; also the base of relative names */
    const char *coco_images;    /* COCO file mapping image ids to file names */
    const char *intrinsics;     /* per-image intrinsics JSON */
    int have_f, have_c;         /* flags: focal / principal point for every image */
    double f[2], c[2];
    int xyxy;                   /* boxes are x1, y1, x2, y2 */
    double score_thr;           /* keep score >= thr (0) */
    int input_size, batch, workers, threads, fast_decode;
    const char *device;         /* "cpu" (NULL) | "ref" */
    rn_compute compute;         /* RN_COMPUTE_F32 | RN_COMPUTE_BF16 (opt-in) */
    int no_fold;                /* 1: unfused eval forward (default: BN folded, as test does) */
    const char *output;         /* output folder, created */
    int progress;               /* 1: bar on a terminal, else a line every log_every images */
    long log_every;             /* 100 */
    FILE *log;                  /* warnings, progress (stderr) */
} rn_pset_opts;

typedef struct rn_pset_summary {
    size_t images;              /* images known (listed or referenced) */
    size_t images_used;         /* images with at least one root */
    size_t images_default_focal;
    size_t images_oriented;     /* JPEGs whose EXIF orientation was applied (as cv2.imread) */
    size_t boxes_maybe_xyxy;    /* xywh boxes running well past their image (rn_bbox_maybe_xyxy) */
    size_t detections;          /* records in the boxes file */
    size_t people;              /* roots written */
    size_t skip[RN_PSKIP_N];
    double seconds;             /* whole run (parse, probe, forward, write) */
    char json_path[4096], csv_path[4096];
} rn_pset_summary;

/* Defaults: input 256, batch 16, 1 worker, fp32, progress, log_every 100, log stderr. */
void rn_pset_opts_default(rn_pset_opts *o);
/* Runs everything; returns 0 once the outputs are written (even with no
 * root; s->people says), or -1 for a fatal problem. */
int rn_pset_run(rn_pset_summary *s, rn_params *p, const rn_pset_opts *o, rn_err *err);
/* "predict: N images (M with people), P people; skipped: ..." lines. */
void rn_pset_summary_print(FILE *f, const rn_pset_summary *s);
/* The reason's words ("non-person category", ...). */
const char *rn_pskip_name(rn_pskip r);

#endif
