/* rn_snapshot: training snapshots as safetensors that PyTorch users can open.
 *
 *   rn_train_state st;  rn_train_state_init(&st, capacity);       // loss history room
 *   rn_snapshot_path(path, sizeof path, "out/model_dump", 3, 0); // snapshot_3.safetensors
 *   if (rn_snapshot_save(path, &p, &st, cfg_text, NULL, &err)) ...
 *   char newest[1024];
 *   int found = rn_snapshot_find_latest(newest, sizeof newest, "out/model_dump", stderr, &err);
 *   if (found == 1 && rn_snapshot_load(newest, 50, rn_net_default(), &p, &st, &err)) ...     // p built here
 *   (inference reads weights and the config's settings through nn/run_settings.h)
 *
 * Contents: the weights by PyTorch state_dict name (rn_weights_export),
 * "optimizer.exp_avg.<name>" and "optimizer.exp_avg_sq.<name>" (Adam moments),
 * "optimizer.step" (I64), "train.epoch" (I64, the epoch the snapshot belongs
 * to: completed for an end-of-epoch snapshot), "train.loader_epoch" and
 * "train.loader_batch" (I64, the loader position of the next batch),
 * "train.iter" (I64, iterations done), "train.rng" (I64[4], the trainer's RNG
 * state), "train.lr" (F64), "train.loss" (F32[iter], the loss of every
 * iteration); with a loss scaler (have_scaler) "train.loss_scale" (F32, the
 * scale) and "train.loss_scale_state" (I64[6]: dynamic, window, clean steps,
 * steps, skipped steps, last step skipped), optional: a snapshot without them
 * (older, or a run without scaling) loads with have_scaler 0. Metadata: "format" = "rootnet-snapshot-1", "backbone",
 * "config" (key = value lines, as a config file), "checksum" (64-bit hash of
 * every tensor's name, dtype, shape and bytes, hex).
 *
 * Naming (in the output's model_dump/, like the authors' snapshot_<epoch>.pth.tar):
 *   snapshot_<E>.safetensors          end of epoch E (the loader continues at E+1, batch 0)
 *   snapshot_<E>_<B>.safetensors      inside epoch E, before its batch B
 * Written atomically (temporary file, fsync, rename, fsync of the directory).
 * A snapshot is COMPLETE when it parses, has the format tag and every
 * required tensor, and its checksum matches.
 */
#ifndef RN_TRAIN_SNAPSHOT_H
#define RN_TRAIN_SNAPSHOT_H

#include <stdint.h>
#include <stdio.h>

#include "core/rng.h"
#include "core/status.h"
#include "io/tensors.h"
#include "nn/params.h"
#include "optim/loss_scale.h"

typedef struct rn_train_state {
    int epoch;             /* epoch of the snapshot (train.epoch) */
    int loader_epoch;      /* position of the next batch */
    int loader_batch;
    int64_t iter;          /* iterations done */
    int64_t adam_step;
    double lr;
    rn_rng rng;
    int have_scaler;       /* a loss scaler was in use (saved), or the snapshot holds one (loaded) */
    rn_loss_scaler scaler; /* its state: rn_loss_scaler_resume takes it over */
    float *loss;           /* (cap) loss of iteration i at loss[i], i < iter */
    int64_t cap;
} rn_train_state;

/* Zeroes st and allocates room for cap losses. */
void rn_train_state_init(rn_train_state *st, int64_t cap);
void rn_train_state_free(rn_train_state *st);

/* dir/snapshot_<epoch>.safetensors (batch 0) or dir/snapshot_<epoch>_<batch>.safetensors. */
void rn_snapshot_path(char *buf, size_t len, const char *dir, int epoch, int batch);
/* Parses a snapshot file name; 0 with the (epoch, batch) ordering key
 * (end of epoch E -> (E + 1, 0)), -1 when the name is not a snapshot's. */
int rn_snapshot_parse_name(const char *name, int *key_epoch, int *key_batch, int *end_of_epoch);

/* hook(ctx, i) runs before tensor i is written (NULL: none). */
typedef struct rn_snapshot_hook {
    void (*fn)(void *ctx, int i, int n);
    void *ctx;
} rn_snapshot_hook;

/* Writes p (weights, moments), st and the config text atomically. */
int rn_snapshot_save(const char *path, const rn_params *p, const rn_train_state *st, const char *config_text,
                     const rn_snapshot_hook *hook, rn_err *err);
/* Reads path into ts and checks it is complete (format, tensors, checksum). */
int rn_snapshot_read(rn_tensors *ts, const char *path, rn_err *err);
/* Loads a complete snapshot: builds p for depth (which the snapshot must
 * hold), loads weights, moments and st (st->loss must have room). */
int rn_snapshot_load(const char *path, int depth, const rn_net *net, rn_params *p, rn_train_state *st, rn_err *err);
/* The newest complete snapshot in dir into out: 1 found (newer incomplete
 * ones skipped with a warning on warn), 0 when dir holds no snapshot at all,
 * -1 when it holds some but none is complete (err names each file and its
 * problem; nothing is removed). With 1 or 0, leftover temporaries of an
 * interrupted write are removed (and reported on warn). */
int rn_snapshot_find_latest(char *out, size_t len, const char *dir, FILE *warn, rn_err *err);
/* 0, or -1 naming the first snapshot name in dir that is no regular file (a
 * directory called snapshot_0.safetensors, say): checked before training. */
int rn_snapshot_dir_check(const char *dir, rn_err *err);
/* Removes mid-epoch snapshots older than (epoch, batch), keeping the newest keep - 1 complete ones (each read
 * and checked): a damaged snapshot never counts as kept, so no good one is removed for it; it is removed once
 * keep - 1 good ones are newer. */
void rn_snapshot_prune(const char *dir, int key_epoch, int key_batch, int keep);
/* Removes end-of-epoch snapshots of epochs <= epoch beyond the newest keep complete ones (keep 0: none), by
 * the same rule. */
void rn_snapshot_prune_epochs(const char *dir, int epoch, int keep);

#endif
