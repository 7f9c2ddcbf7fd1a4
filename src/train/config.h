/* rn_train_cfg: every setting of `rootnet train`, from flags and/or a config file.
 *
 *   rn_train_cfg c; rn_train_cfg_default(&c);           // the authors' config.py values
 *   if (rn_train_cfg_load(&c, "train.cfg", stderr, &err)) ...   // key = value lines
 *   if (rn_train_cfg_set(&c, "lr", "1e-4", &err)) ...          // one key, e.g. from a flag
 *   if (rn_train_cfg_check(&c, &err)) ...                      // cross-field validation
 *   double lr = rn_train_lr(&c, epoch);                         // the authors' step schedule
 *
 * Config file: one `key = value` per line; '#' starts a comment; blank lines
 * are ignored. Keys are the flag names without the leading "--", and '_' may
 * stand for '-' (so the authors' names `lr_dec_epoch`, `end_epoch` work).
 * Lists are comma-separated: `trainset-2d = MSCOCO,MPII`, `lr-dec-epoch = 17,19`.
 * Unknown keys get one warning line (file:line: unknown key) and are ignored;
 * malformed values are errors. Flags given on the command line win over the file.
 */
#ifndef RN_TRAIN_CONFIG_H
#define RN_TRAIN_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

#define RN_TRAIN_MAX_2D 4
#define RN_TRAIN_MAX_DEC 8
#define RN_TRAIN_PATH 1024

typedef struct rn_train_cfg {
    char net[16];                             /* rootnet | posenet (its joints: trainset_3d's) */
    char trainset_3d[32];                     /* MuCo | Human36M */
    char trainset_2d[RN_TRAIN_MAX_2D][32];    /* MSCOCO, MPII; may be empty */
    int n_2d;
    char testset[32];                         /* MuPoTS | Human36M | PW3D (per-epoch evaluation) */
    char data_dir[RN_TRAIN_PATH];
    int backbone;                             /* ResNet depth */
    int input_size;                           /* square input, multiple of 32 */
    double lr, lr_dec_factor;
    int lr_dec_epoch[RN_TRAIN_MAX_DEC], n_dec;
    int end_epoch, batch, threads, workers;
    int64_t seed;
    char output[RN_TRAIN_PATH];               /* output dir: model_dump/, log/ */
    int cont;                                 /* --continue */
    char pretrained[RN_TRAIN_PATH];           /* torchvision ImageNet .pth, or a full RootNet file */
    int augment;                              /* 0: --no-augment */
    int fast_decode;                          /* 1: JPEGs decoded at 1/2..1/8 size for big boxes (rn_crop_cfg) */
    char cache_dir[RN_TRAIN_PATH];            /* dataset caches ("": next to the annotations, else per user) */
    char prep_dir[RN_TRAIN_PATH];             /* prepared frames (data/image/prep.h; "": off) */
    int deterministic;                        /* 1: bit-reproducible (fixed threads, checksums logged) */
    int log_every;
    int64_t max_iters;                        /* stop after this many iterations in total (0: no limit) */
    int snapshot_iters;                       /* also snapshot every N iterations inside an epoch (0: off) */
    int keep_snapshots;                       /* keep the newest N mid-epoch snapshots (end-of-epoch ones are kept) */
    int keep_epochs;                          /* keep the newest N end-of-epoch snapshots (0: all) */
    char dump_batches[RN_TRAIN_PATH];         /* debug: write each batch as safetensors here */
    int64_t kill_at_iter;                     /* test: SIGKILL itself before iteration N (0: off) */
    int kill_in_snapshot;                     /* test: SIGKILL itself while writing its N-th snapshot (0: off) */
    int sync_bn;                              /* under mpirun: BN statistics over all ranks */
    double bucket_mb;                         /* under mpirun: gradient all-reduce bucket, MB (0: one) */
    double dist_timeout;                      /* under mpirun: collective watchdog, seconds */
    char device[16];                          /* cpu | ref (nn/device.h) */
    char precision[16];                       /* fp32 | bf16 | bf16-o2 | fp16 (train/tuning.h) */
    char loss_scale[32];                      /* "" (the precision's default) | N | dynamic */
    char profile[RN_TRAIN_PATH];              /* Chrome-trace output ("": no profiling) */
    char autotune[RN_TRAIN_PATH];             /* conv algorithm cache ("": default algorithms) */
    char lr_scale[16];                        /* none | linear: lr x batch x ranks / 32 (train/tuning.h's lr rule) */
    int bind_cores;                           /* pin compute thread i to the i-th allowed core */
    int graph;                                /* steps and inference batches as device graphs (nn/model.h) */
    int no_prefetch;                          /* no next batch uploaded beside each step (nn/model.h: prefetch) */
    int cudnn_benchmark;                      /* cuda: fastest algorithms, deterministic or not (train/tuning.h) */
    int workspace_mb;                         /* cuda: cuDNN workspace cap in MiB, 0: the device's default */
    int eval_epoch;                           /* evaluate testset after each epoch, keep the best */
} rn_train_cfg;

/* Value kinds of the keys (for the CLI's flag table). */
typedef enum { RN_TK_STR, RN_TK_INT, RN_TK_I64, RN_TK_F64, RN_TK_BOOL, RN_TK_SLIST, RN_TK_ILIST } rn_train_key_kind;

typedef struct rn_train_key {
    const char *flag;  /* "--lr" */
    rn_train_key_kind kind;
    const char *help;
} rn_train_key;

/* The i-th documented key, or NULL past the last. */
const rn_train_key *rn_train_key_at(int i);

/* The authors' defaults (main/config.py): MuCo + MSCOCO, test MuPoTS, ResNet-50,
 * 256 input, lr 1e-3 /10 at epoch 17, 20 epochs, batch 32, seed 1, output "output". */
void rn_train_cfg_default(rn_train_cfg *c);
/* Sets one key (flag name with or without "--", '_' or '-'); 1 when the key
 * is unknown, -1 on a bad value, 0 on success. */
int rn_train_cfg_set(rn_train_cfg *c, const char *key, const char *value, rn_err *err);
/* Applies a key = value file (lines up to 2046 characters, longer ones are refused); unknown
 * keys are warned about on warn (may be NULL). */
int rn_train_cfg_load(rn_train_cfg *c, const char *path, FILE *warn, rn_err *err);
/* Same, from an open stream (the fuzz target reads through it); path only names it in messages. */
int rn_train_cfg_read(rn_train_cfg *c, FILE *f, const char *path, FILE *warn, rn_err *err);
/* The same for config text in memory (a snapshot's "config" metadata); name labels errors. */
int rn_train_cfg_parse(rn_train_cfg *c, const char *text, const char *name, FILE *warn, rn_err *err);
/* Range and consistency checks (input size, batch, epochs, sets). */
int rn_train_cfg_check(const rn_train_cfg *c, rn_err *err);
/* Writes the config as key = value lines into buf (what a config file holds). */
void rn_train_cfg_format(const rn_train_cfg *c, char *buf, size_t len);
/* Compute threads of every model and tester of the run: threads, or 1 under
 * deterministic when threads is 0 (results then do not depend on OpenMP's default). */
int rn_train_cfg_threads(const rn_train_cfg *c);
/* The authors' schedule: lr / factor^(number of decay epochs <= epoch). The
 * trainer scales it by lr-scale's rule over the global batch (train/assemble.h). */
double rn_train_lr(const rn_train_cfg *c, int epoch);

#endif
