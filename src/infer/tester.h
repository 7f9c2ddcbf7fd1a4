/* rn_tester: test-set evaluation of a RootNet (the authors' test.py +
 * dataset.evaluate), callable with weights already in memory, so that
 * training can evaluate after every epoch without re-reading the test set.
 *
 *   rn_test_opts o; rn_test_opts_default(&o);
 *   o.testset = "MuPoTS"; o.data_dir = "data"; o.result_dir = "out/result";
 *   o.input_size = 256; o.batch = 16; o.threads = 2;
 *   rn_tester *t;
 *   if (rn_tester_create(&t, &params, &o, &err)) ...    // loads set, GT, builds an inference model
 *   rn_test_result r;
 *   if (rn_tester_run(t, &r, &err)) ...                 // syncs params' weights, runs, writes, scores
 *   rn_test_result_print(stdout, &r);                   // "AP_root@25cm: 0.4567 ..." or MRPE lines
 *   rn_tester_free(t);
 *   // or, once: rn_test_run(&r, &params, &o, &err);
 *
 * Per sample: the loader's test mode crops the box (no augmentation), the
 * model runs in eval mode (running BN statistics), x, y on the output grid
 * map back to the image through the box (x / out_w * w + x0), depth =
 * gamma * k, and camera X, Y follow from the sample's f and c. Predictions
 * are written as the authors' result file (bbox_root_mupots_output.json,
 * bbox_root_human36m_output.json, bbox_root_pw3d_output.json) and scored:
 *   MuPoTS:   AP_root at 25 cm against every GT root of MuPoTS-3D.json (also
 *             with detector boxes); with GT boxes also MRPE paired by record.
 *   Human36M: MRPE total, x, y, z and per action.
 *   PW3D:     MRPE (metres, as the authors print it).
 * Sharding pads (duplicates) are dropped; outputs follow the set's order.
 */
#ifndef RN_INFER_TESTER_H
#define RN_INFER_TESTER_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"
#include "data/sets/sample.h"
#include "eval/metrics.h"
#include "nn/device.h"
#include "nn/params.h"
#include "nn/precision.h"

typedef struct rn_test_opts {
    const char *testset;     /* "MuPoTS", "Human36M" or "PW3D" */
    const char *data_dir;    /* authors' layout: data_dir/<set>/... */
    int use_det_bbox;        /* 1: detector boxes (MuPoTS, Human36M) */
    int input_size;          /* network input, square, multiple of 32 (256) */
    int batch;               /* samples per forward (16) */
    const char *device;      /* "cpu" (NULL) | "ref" */
    int threads;             /* compute threads, 0: OpenMP's setting */
    int workers;             /* loader threads (1) */
    int fast_decode;         /* 1: JPEGs decoded at 1/2..1/8 size for big boxes (rn_crop_cfg); 0: full size */
    rn_precision precision;  /* RN_PREC_FP32 (default), RN_PREC_BF16 or RN_PREC_INT8 (with calib) */
    const struct rn_calib *calib; /* int8: the conv inputs' ranges (nn/calib.h) */
    rn_model_observe observe;     /* told each conv's input (rootnet calibrate), or fn NULL */
    int no_fold;             /* 1: the unfused eval forward; 0 (default): BN folded, fused convs */
    const char *result_dir;  /* where the result JSON goes; NULL: not written */
    const char *gt_path;     /* MuPoTS GT roots; NULL: data_dir/MuPoTS/data/MuPoTS-3D.json */
    const char *cache_dir;   /* dataset cache, NULL: next to the annotations */
    double ap_thr;           /* MuPoTS AP threshold, mm (250) */
    int progress;            /* 1: progress bar on stderr when it is a terminal */
    size_t limit;            /* > 0: only the first `limit` records (quick checks) */
} rn_test_opts;

typedef struct rn_test_result {
    rn_eval_kind kind;
    size_t n;                /* predictions */
    int use_det_bbox;
    int have_ap;             /* MuPoTS */
    rn_ap_result ap;
    int have_mrpe;           /* Human36M, PW3D, MuPoTS with GT boxes */
    rn_mrpe mrpe;
    int have_actions;        /* Human36M */
    rn_h36m_result h36m;
    double seconds;          /* wall time of the forward passes and loading */
    double score;            /* higher is better: AP, or -MRPE */
    char result_path[4096];  /* written file, "" when result_dir was NULL */
} rn_test_result;

typedef struct rn_tester rn_tester;

/* Defaults: input 256, batch 16, 0 threads, 1 worker, fp32, thr 250, progress on. */
void rn_test_opts_default(rn_test_opts *o);

/* Loads the test set and its GT, builds an inference model over p (borrowed;
 * p must outlive the tester). Returns 0, or -1 naming the file/record/problem. */
int rn_tester_create(rn_tester **t, rn_params *p, const rn_test_opts *o, rn_err *err);
/* Syncs p's current weights, predicts every record, writes the result file
 * (when result_dir is set) and computes the metrics. Returns 0 or -1. */
int rn_tester_run(rn_tester *t, rn_test_result *res, rn_err *err);
/* The predictions of the last run (n of them, the set's order), owned by t. */
const rn_root_pred *rn_tester_preds(const rn_tester *t, size_t *n);
void rn_tester_free(rn_tester *t);

/* create + run + free. */
int rn_test_run(rn_test_result *res, rn_params *p, const rn_test_opts *o, rn_err *err);

/* The eval-mode forward of one loader batch on m, built for the loader's batch: a short
 * batch runs whole, its rows >= b->n being the loader's padding (data/loader.h). */
struct rn_model;
struct rn_batch;
void rn_test_forward_batch(struct rn_model *m, const struct rn_batch *b);

/* The metric lines: "AP_root@25cm: ...", "MRPE >> tot: ...", per action. */
void rn_test_result_print(FILE *f, const rn_test_result *r);

#endif
