/* The options and the summary of `rootnet predict` (rn_pset, infer/predict_set.h),
 * shared by the run (predict_set.c) and the inputs it reads (predict_inputs.c):
 *
 *   rn_pset_opts o; rn_pset_opts_default(&o); o.boxes = "dets.json";   // predict_set.h
 *   rn_pset_summary s;   // filled by rn_pset_run; s.skip[RN_PSKIP_BOX]: boxes outside the image
 */
#ifndef RN_INFER_PREDICT_OPTS_H
#define RN_INFER_PREDICT_OPTS_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "nn/device.h"
#include "nn/precision.h"

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
    rn_precision precision;     /* RN_PREC_FP32 | RN_PREC_BF16 (opt-in) */
    int no_fold;                /* 1: unfused eval forward (default: BN folded, as test does) */
    const struct rn_calib *calib; /* RN_PREC_INT8: the conv inputs' ranges (nn/calib.h) */
    rn_model_observe observe;   /* told each conv's input (rootnet calibrate --boxes), or fn NULL */
    const char *output;         /* output folder, created */
    const char *draw;           /* NULL, or a folder (created) for one picture per image with people (as demo's) */
    int progress;               /* 1: bar on a terminal, else a line every log_every images or 10 x log_every people */
    long log_every;             /* 100 */
    FILE *log;                  /* warnings, progress (stderr) */
    const volatile sig_atomic_t *stop; /* NULL, or a flag (a signal handler's): once set, no new batch is run and
                                        * the people finished are written (summary.interrupted) */
} rn_pset_opts;

typedef struct rn_pset_summary {
    size_t images;              /* images known (listed or referenced) */
    size_t images_used;         /* images with at least one root */
    size_t images_default_focal;
    size_t images_oriented;     /* JPEGs whose EXIF orientation was applied (as cv2.imread) */
    size_t boxes_maybe_xyxy;    /* xywh boxes running well past their image (rn_bbox_maybe_xyxy) */
    size_t detections;          /* records in the boxes file */

    size_t people;              /* roots written */
    size_t people_total;        /* people asked for (detections kept) */
    int interrupted;            /* 1: stopped by opts.stop; people < people_total */
    size_t skip[RN_PSKIP_N];
    double seconds;             /* whole run (parse, probe, forward, write) */
    char json_path[4096], csv_path[4096];
} rn_pset_summary;

#endif
