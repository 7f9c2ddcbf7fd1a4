/* The flags every inference command (predict, test, demo) shares, for its flag table:
 *
 *   typedef struct my_cli { const char *snapshot; rn_eval_flags ev; } my_cli;
 *   rn_flag flags[] = {RN_FLAG_STR("--snapshot", &c.snapshot, "..."), RN_EVAL_FLAGS(&c.ev), {0}};
 *   if (rn_eval_flags_check(&c.ev, &precision, &err)) return rn_cli_fail("demo", RN_EXIT_USAGE, &err);  // before any load
 *   ... rn_weights_load_eval(&p, &s, c.snapshot, (int)c.ev.backbone, (int)c.ev.input_size, c.ev.fast_decode, &err)
 */
#ifndef RN_CLI_EVAL_FLAGS_H
#define RN_CLI_EVAL_FLAGS_H

#include "cli/args.h"
#include "core/status.h"
#include "nn/params.h"
#include "nn/precision.h"
#include "nn/run_settings.h"

typedef struct rn_eval_flags {
    const char *device;    /* NULL: cpu */
    const char *precision; /* NULL: fp32; fp32 | bf16 | int8 | auto (nn/precision.h: RN_PREC_INFER) */
    const char *calib;     /* int8: the calibration file (NULL: the snapshot's, <snapshot>.int8) */
    long input_size;       /* 0: the snapshot's */
    long backbone;         /* 0: the snapshot's depth */
    long threads;          /* 0: OMP_NUM_THREADS */
    int fast_decode, no_fold;
} rn_eval_flags;

#define RN_EVAL_FLAGS(ev)                                                                                        \
    RN_FLAG_RANGE("--input-size", &(ev)->input_size, 0, 2048, "network input size (default: the snapshot's, else 256)"), \
        RN_FLAG_BOOL("--fast-decode", &(ev)->fast_decode,                                                         \
                     "decode JPEGs at 1/2, 1/4, 1/8 size for big boxes (default: as the snapshot was trained; off)"), \
        RN_FLAG_RANGE("--backbone", &(ev)->backbone, 0, 1000, "expected ResNet depth (default: from the snapshot)"), \
        RN_FLAG_RANGE("--threads", &(ev)->threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),       \
        RN_FLAG_STR("--device", &(ev)->device, "the compute device: cpu (default), ref, cuda or cuda:N, those built in (rootnet --version lists them)"), \
        RN_FLAG_STR("--precision", &(ev)->precision,                                                             \
                    "fp32 (default) | bf16: convs and activations in bf16 | int8: convs in int8, with a "        \
                    "calibration (rootnet calibrate) | auto: the fastest this CPU computes natively (see README)"), \
        RN_FLAG_STR("--calib", &(ev)->calib, "int8 calibration file (default: the snapshot's, SNAPSHOT.int8)"),  \
        RN_FLAG_BOOL("--no-fold", &(ev)->no_fold, "unfused eval forward (default: BN folded into the convs, fused epilogues)")

/* The cheap checks of these flags, before a snapshot is read: --input-size a
 * multiple of 32 in 32..2048, --precision fp32 or bf16 (into *prec), and
 * --device built in and able to run that precision (the device's supports).
 * 0, or -1 with one line in err (a usage error: RN_EXIT_USAGE). */
int rn_eval_flags_check(const rn_eval_flags *ev, rn_precision *prec, rn_err *err);

struct rn_calib;
/* After the snapshot is found: with --precision int8, its calibration (--calib, else <snapshot>.int8) into
 * cal, and *use = cal; with auto (prec came out fp32 or bf16), int8 instead where that file is there and
 * the CPU has int8 dot products (said in one line); else *use = NULL. 0, or -1 with one line (no file:
 * "run rootnet calibrate"). cal is the caller's to free (rn_calib_free) whenever *use is set. */
int rn_eval_calib_load(const rn_eval_flags *ev, const char *snapshot, rn_precision *prec, struct rn_calib *cal,
                       const struct rn_calib **use, rn_err *err);

/* The RootNet of snapshot into p, and with pose_snapshot (NULL: none) the PoseNet into pp, at one input size (s;
 * the flags' input size and backbone apply to the RootNet): 0, or the exit status with err set and nothing held
 * (a snapshot of the other net: one line naming the flag, the file and what it takes; RN_EXIT_USAGE). */
int rn_eval_load_nets(rn_params *p, rn_params *pp, rn_run_settings *s, const char *snapshot, const char *pose_snapshot,
                      const rn_eval_flags *ev, rn_err *err);

#endif
