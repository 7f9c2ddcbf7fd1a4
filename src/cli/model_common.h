/* What rootnet forward, step and bench share: .npy inputs checked on read, a
 * batch's buffers, and the run's set-up (MPI, device, tuning); the training
 * step itself is assembled by train/assemble.h, as for rootnet train.
 *
 *   rn_cli_input x; int64_t xd[3], want[3] = {3, -1, -1};
 *   if (rn_cli_input_read(&x, "x.npy", "images", 3, want, xd, &err)) ...   // (N, 3, H, W)
 *   rn_cli_batch bt = rn_cli_batch_alloc(b, x.per, K, NULL);  ...  rn_cli_batch_free(&bt);
 *   rn_cli_input_free(&x);
 */
#ifndef RN_CLI_MODEL_COMMON_H
#define RN_CLI_MODEL_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "dist/dist.h"
#include "nn/model.h"
#include "train/tuning.h"

/* An input array read from .npy as float32, with its leading dimension N. */
typedef struct rn_cli_input {
    float *d;   /* (n, per), owned */
    int64_t n;
    size_t per; /* floats per sample */
} rn_cli_input;

/* Frees in->d; safe twice. */
void rn_cli_input_free(rn_cli_input *in);
/* Reads path as a float array of shape (N, rest...) where rest matches
 * want[0..nwant) (a -1 entry matches anything); dims (NULL: not wanted) gets
 * rest. Rejects NaN and Inf. Messages start with what ("images: x.npy: ..."). */
int rn_cli_input_read(rn_cli_input *in, const char *path, const char *what, int nwant, const int64_t *want,
                      int64_t *dims, rn_err *err);
/* k, vis and have_depth: (N) or (N, 1). */
int rn_cli_input_read_vec(rn_cli_input *in, const char *path, const char *what, rn_err *err);
/* A net's per-row input: (N, K, cols), also (N, K) when cols is 1; for K == 1 also (N, cols), or (N) and
 * (N, 1) when cols is 1 (RootNet's target (N, 3), vis (N, 1)). */
int rn_cli_input_read_rows(rn_cli_input *in, const char *path, const char *what, int K, int cols, rn_err *err);
/* b has as many samples as the images a. */
int rn_cli_input_same_n(const rn_cli_input *a, const rn_cli_input *b, const char *what, const char *path,
                        rn_err *err);
/* The images' H and W (xd[1], xd[2]) are multiples of 32. */
int rn_cli_input_check_size(const int64_t *xd, const char *path, rn_err *err);
/* Every k > 0. */
int rn_cli_input_check_k(const rn_cli_input *k, const char *path, rn_err *err);

/* The network --net name ("rootnet", "posenet") on --joints joints (NULL: its first), or -1 with a line
 * naming the flag. */
int rn_cli_net_choose(const rn_net **net, const char *name, const char *joints, rn_err *err);

/* A training batch's buffers. */
typedef struct rn_cli_batch {
    float *x, *k, *t, *v, *d; /* (b, 3, H, W), (b), (b, K, 3), (b, K), (b) */
    rn_device *pin;           /* NULL: malloc'ed; else pinned memory of this device (host_alloc) */
} rn_cli_batch;

/* Buffers for b samples of per image floats and K output rows each, pinned on pin (NULL: malloc; rn_train_env_pin
 * says when to pin); rn_cli_batch_free frees them. */
rn_cli_batch rn_cli_batch_alloc(int b, size_t per, int K, rn_device *pin);

void rn_cli_batch_free(rn_cli_batch *bt);


/* The set-up bench and step share: MPI when under mpirun (cli/dist_cli.h), this rank's device
 * ("cuda" -> "cuda:<local rank>"), the tuning opened on it.
 *
 *   rn_cli_run r;
 *   int rc = rn_cli_run_begin(&r, "step", sync_bn, timeout_s, &tf, threads);
 *   if (rc) return rc;                                     // message printed
 *   return rn_cli_run_end(&r, "step", work(&r.tn, r.d, &r.err), RN_EXIT_FAIL);
 */
typedef struct rn_cli_run {
    rn_dist *d;
    rn_tuning tn;
    char dev[32];
    rn_err err;
} rn_cli_run;

/* 0, or the exit code after one line on stderr: RN_EXIT_FAIL when MPI cannot
 * start, RN_EXIT_USAGE when the tuning is refused (device, precision, ...). */
int rn_cli_run_begin(rn_cli_run *r, const char *cmd, int sync_bn, double timeout_s, rn_tuning_flags *tf, int threads);
/* Frees the tuning and ends the distribution: 0 when rc is 0; else r->err is
 * reported (rn_cli_dist_fail) and code returned. */
int rn_cli_run_end(rn_cli_run *r, const char *cmd, int rc, int code);

#endif
