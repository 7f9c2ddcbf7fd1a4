/* rn_loader: the training/test batch loader. Worker threads (pthreads) decode,
 * crop, augment and normalise samples straight into a ring of K preallocated
 * batches (the bounded queue: at most K batches ahead of the consumer). Work is
 * handed out one sample at a time, so every worker has work while a batch in
 * flight has samples left (8 workers with K = 2 keep 8 threads busy). Every
 * sample's randomness is seeded from (seed, epoch, item), so batches are
 * identical for any number of workers. The batch arrays come from buf_alloc
 * (default malloc), e.g. pinned host memory a device uploads from.
 *
 *   const rn_dataset *sets[] = {&muco, &coco};         // one 3D set first, then 2D sets
 *   rn_loader_cfg cfg; rn_loader_cfg_default(&cfg, sets, 2, RN_SPLIT_TRAIN);
 *   cfg.batch = 32; cfg.workers = 2; cfg.seed = 1;
 *   rn_loader *ld;
 *   if (rn_loader_create(&ld, &cfg, &err)) ...
 *   for (int epoch = 0; epoch < 20; epoch++) {
 *       if (rn_loader_start(ld, epoch, 0, &err)) ...
 *       const rn_batch *b; int rc;
 *       while ((rc = rn_loader_next(ld, &b, &err)) == 1) train_step(b);   // b valid until next call
 *       if (rc < 0) ...                                                   // test split: bad image
 *   }
 *   rn_loader_free(ld);
 *
 * Order (the authors' data/multiple_datasets.py and DataLoader(shuffle=True)):
 * with make_same_len the item space is L = max_len * n_sets; item c maps to set
 * c / max_len, record c % max_len taken modulo the set's length, except items
 * at or beyond len * (max_len / len), which pick a record uniformly at random.
 * Without it L = sum of lengths, concatenated. Training shuffles the L items
 * afresh every epoch (seeded by seed and epoch); test keeps them in order.
 *
 * Sharding: positions g = rank, rank + world, ... of the epoch order, each
 * rank getting S = ceil(L / world) positions; g >= L wraps to the start of the
 * order and is flagged pad = 1 (a duplicate to ignore in evaluation). So the
 * non-pad items of all ranks cover every item exactly once, and every rank
 * has the same number of batches, ceil(S / batch); the last may be short.
 *
 * The last batch (the one policy of every consumer): a short batch has b->n
 * real rows and the loader pads its arrays to the batch (rn_batch_pad: zero
 * images, k 1; target, vis and have_depth 0), so a model planned for the batch
 * runs it whole and its consumer ignores rows >= n. Evaluation (test,
 * predict) does exactly that: in eval mode each row's output depends on that
 * row alone. Training runs the n real rows on a model planned for n
 * (train/trainer.h): the authors' DataLoader trains on the short batch, and
 * train-mode BN's batch statistics over padded rows would differ.
 *
 * PoseNet (skeleton set): each row's target is the person's joints on the target joint set, K rows
 * (data/load/joints.h: the authors' PoseNet __getitem__), with the same crop and augmentation draws as
 * RootNet's; the root row's layout (K 1) is RootNet's, unchanged, when skeleton is NULL.
 *
 * Bad images: in training a missing or corrupt image is logged to stderr with
 * its path, counted, and replaced by another item drawn from the sample's
 * own random stream (deterministic); at test time it is an error, unless
 * keep_going: then the sample is flagged bad (with why) and the batch goes on.
 */
#ifndef RN_DATA_LOADER_H
#define RN_DATA_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "data/load/augment.h"
#include "data/sets/sample.h"

typedef struct rn_loader_cfg {
    const rn_dataset *const *sets; /* train: one 3D set then 2D sets; test: one set */
    int n_sets;
    rn_split split;       /* train: shuffle, augment, skip bad images; test: in order, bad image = error */
    int batch;            /* samples per batch on this rank */
    int workers;          /* loader threads, >= 1; 0: one per allowed core (rn_loader_auto_workers) */
    int prefetch;         /* ring slots K >= 1 (batches decoded ahead) */
    int hold;             /* 1 (needs K >= 2): a batch stays valid until the second rn_loader_next after
                             it, not the first, so that a device may still be copying it while the next
                             batch is taken (train/step.h: rn_step_next); 0 (default) */
    uint64_t seed;
    int rank, world;      /* sharding; 0 and 1 for a single process */
    int make_same_len;    /* 1: the authors' equal-length mixing */
    int augment;          /* 1: rotation, flip, colour (default: train) */
    int max_retries;      /* replacements tried for a bad training image */
    int bind_cores;       /* 1: pin workers to loader_cores (default: the last allowed core) */
    const int *loader_cores;
    int n_loader_cores;
    int quiet;            /* 1: do not log skipped images */
    int keep_going;       /* test split: a bad image flags its sample (rn_batch bad, why) instead of failing */
    rn_crop_cfg crop;
    const char *skeleton; /* PoseNet: the target joint set, an rn_skeleton name (data/sets/skeleton.h: "Human36M",
                           * "MuCo", ...), every set's joints mapped onto it; NULL (default): RootNet's root row */
    int K;                /* target rows: 1 (or 0) for RootNet; with skeleton, its J (0: that J) */
    int depth_dim;        /* PoseNet's depth bins (default 64) */
    /* Batch arrays (every rn_batch pointer): both NULL (default: malloc/free) or both set.
     * buf_alloc returns bytes usable by the workers and the consumer, or NULL (fatal). */
    void *(*buf_alloc)(void *user, size_t bytes);
    void (*buf_free)(void *user, void *p);
    void *buf_user;
} rn_loader_cfg;

#define RN_LOADER_WHY 256
#define RN_LOADER_MAX_K 32 /* the most target rows (joints) of a sample */

typedef struct rn_batch {
    int n;              /* samples in this batch (<= batch) */
    int epoch, index;   /* position: epoch and batch index within it */
    float *images;      /* (B, 3, in_h, in_w) normalised RGB, NCHW */
    float *k;           /* (B) */
    int K;              /* target rows per sample: 1 (RootNet's root), or the skeleton's joints (PoseNet) */
    float *target;      /* (B, K, 3): x, y in output-space pixels; depth: RootNet's root depth (dataset unit,
                         * mm), PoseNet's depth bin (0 .. depth_dim) */
    float *vis;         /* (B, K) */
    float *have_depth;  /* (B) */
    int32_t *item;      /* (B) item in the epoch's item space [0, L) */
    int32_t *set;       /* (B) dataset index the sample came from (after any replacement) */
    int32_t *sample;    /* (B) record index in that dataset */
    uint8_t *pad;       /* (B) 1: sharding pad, a duplicate */
    uint8_t *replaced;  /* (B) 1: the item's image was bad and another record stands in */
    float *bbox;        /* (B, 4) the record's box, x, y, w, h */
    double *inv;        /* (B, 6) input-patch pixels -> original image pixels (flip included) */
    uint8_t *bad;       /* (B) keep_going: 1 when the sample's image failed (its patch is zeros, k 1) */
    char (*why)[RN_LOADER_WHY]; /* (B) keep_going: the failure, "path: problem" */
} rn_batch;

typedef struct rn_loader rn_loader;

/* Defaults: batch 32, 2 workers, prefetch 4, rank 0 of 1, make_same_len,
 * augment on for training, 16 retries, no pinning, rn_crop_cfg_default. */
void rn_loader_cfg_default(rn_loader_cfg *cfg, const rn_dataset *const *sets, int n_sets, rn_split split);
/* The evaluation loader of one set (test, predict): the test split in order, no augmentation, no equal-length
 * mixing, batch, workers, a size x size input (output size / 4) and fast_decode (rn_crop_cfg). */
void rn_loader_cfg_eval(rn_loader_cfg *cfg, const rn_dataset *const *set, int batch, int workers, int size,
                        int fast_decode);

/* Validates cfg, allocates the ring and starts the workers (idle until start). */
int rn_loader_create(rn_loader **out, const rn_loader_cfg *cfg, rn_err *err);
/* Begins producing epoch `epoch` from batch `first` (0, or a saved position for exact resume). */
int rn_loader_start(rn_loader *ld, int epoch, int first, rn_err *err);
/* Next batch: 1 with *b set (valid until the next call; with hold, the one after), 0 at the end of the
 * epoch, -1 on error (test split bad image, or no good replacement found). */
int rn_loader_next(rn_loader *ld, const rn_batch **b, rn_err *err);
/* Rows n..rows-1 of a batch's model inputs become padding: zero images of plane floats, k 1. */
void rn_batch_pad(float *images, float *k, int n, int rows, size_t plane);
/* Position of the next batch rn_loader_next would return (save this to resume). */
void rn_loader_position(const rn_loader *ld, int *epoch, int *batch);
/* Batches per epoch on this rank, and the item-space size L. */
int rn_loader_batches(const rn_loader *ld);
int64_t rn_loader_items(const rn_loader *ld);
/* Of the samples of sets (n_sets of them; *samples gets their count), how many have their prepared frame in
 * prep_dir (data/image/prep.h; frames of other sets are not counted). */
size_t rn_loader_prep_found(const rn_dataset *const *sets, int n_sets, const char *prep_dir, size_t *samples);
/* Loader threads for workers = 0: the cores this process may run on. */
int rn_loader_auto_workers(void);
typedef struct rn_loader_stats {
    int workers;                      /* loader threads */
    int peak_busy;                    /* most workers inside a sample at once, since create */
    double stage_s[RN_CROP_NSTAGES];  /* rn_crop_ctx stage times summed over workers (seconds) */
    int64_t rows_skipped, rows_read;  /* image rows skipped and decoded, summed over workers */
    int64_t bytes_read;               /* file bytes read, summed over workers */
} rn_loader_stats;

/* Counters since create into st, and each worker's finished samples into
 * samples[0..max) (may be NULL). Returns the number of workers. */
int rn_loader_stats_get(rn_loader *ld, rn_loader_stats *st, int64_t *samples, int max);
/* Bad images skipped so far. */
int64_t rn_loader_skipped(const rn_loader *ld);
/* Stops the workers and frees everything. */
void rn_loader_free(rn_loader *ld);

/* Pins the calling thread to the given cores (e.g. the compute thread, before
 * its first OpenMP region so that the team inherits the mask). */
int rn_bind_self(const int *cores, int n, rn_err *err);

/* The cores this process may use minus the loader's pinned cores (all
 * allowed cores when not pinning), into cores[0..max); returns the count.
 * With 2 cores and bind_cores: loader on the last, compute on the first. */
int rn_loader_compute_cores(const rn_loader *ld, int *cores, int max);

/* PoseNet's targets of record rec of ds onto the joint set `skeleton` for a crop (out, flip: the
 * sample's rn_crop_sample and augmentation), as a loader configured with that skeleton makes its row:
 * target (K, 3), vis (K), K (<= RN_LOADER_MAX_K) the joint set's joints into *K. 0, or -1
 * with err (an unknown joint set, a dataset without joints). */
int rn_loader_joint_targets(float *target, float *vis, int *K, const rn_dataset *ds, size_t rec, const char *skeleton,
                            const rn_crop_out *out, int flip, const rn_crop_cfg *crop, int depth_dim, rn_err *err);

/* The authors' test-time mapping of an output-space root back to the image:
 * x_img = x / out_w * bbox_w + bbox_x, likewise y. */
void rn_root_to_image(float *x_img, float *y_img, const float bbox[4], float x, float y, int out_w, int out_h);

#endif
