/* rn_dist: data-parallel training over MPI — one replica per rank.
 *
 *   rn_dist *d = NULL;
 *   if (rn_dist_launched() && rn_dist_init(&d, 300.0, &err)) fail;   // under mpirun
 *   int K = rn_dist_size(d), r = rn_dist_rank(d);                     // d == NULL: 1 and 0
 *   rn_dist_device_name(d, "cuda", name, sizeof name);  // "cuda:<local rank % GPUs>"
 *   rn_dist_grads_setup(d, &p, bucket_floats, &err);               // after rn_model_create
 *   rn_dist_bcast_params(d, &p, &err);             // every rank starts from rank 0's weights
 *   rn_model_opts o = {..., .reduce = rn_dist_bn_reduce(d),          // --sync-bn
 *                      .grad_ready = rn_dist_grad_ready(d)};         // buckets start in backward
 *   per step (train/step.c): zero_grad; forward; backward (buckets start);
 *             rn_dist_grads_finish(d, &err);                 // p.grad: the mean over ranks
 *             Adam (identical on every rank); loss = the step's one read;
 *             rn_dist_allreduce_mean(d, &loss, 1, &err);     // also reports the device's comm errors
 *             rn_dist_bcast_stats(d, &p, &err);              // without SyncBN: rank 0's BN statistics
 *   rn_dist_finalize(d);
 *
 * The gradient is the ONE flat buffer p.grad, all-reduced (sum, then / K) in
 * buckets of bucket_floats from its end: backward finishes gradients from the
 * head down to the stem, i.e. from high offsets to low, and each bucket's
 * MPI_Iallreduce starts as soon as backward has passed below it.
 *
 * Two paths, one code: on a device with collectives (rn_device_ops.comm_init:
 * cuda, over NCCL) the communicator is bootstrapped over MPI at
 * rn_dist_grads_setup, each bucket's mean is one all-reduce on the device
 * (scale 1/K) started from grad_ready, which runs beside the rest of backward
 * (cuda: on its own stream) until rn_dist_grads_finish orders Adam after all
 * of them (comm_wait); SyncBN's sums are reduced on the device in place and
 * the broadcasts of weights and BN statistics are the device's, each joined
 * at once: no host copy and no wait (the step's loss read waits for them). A device without collectives (cpu, ref, ref-guard),
 * or ranks sharing one device (NCCL refuses two ranks on one GPU: found by
 * comparing each rank's host/device/CUDA_VISIBLE_DEVICES over MPI, one line
 * on rank 0's stderr), takes the host path: MPI on the buffers in place when
 * device memory is host memory, else through host copies allocated at setup.
 * Nothing is allocated in a step on either path.
 *
 * Failure: MPI errors return (MPI_ERRORS_RETURN) and are reported with the
 * rank and the operation; after one, every later collective fails at once.
 * A watchdog thread ends the process (exit status 3, one line on stderr) when
 * a collective has not completed within timeout_s: a dead or hung peer then
 * cannot hang the job (mpirun ends the other ranks when one exits non-zero).
 * On the device path it watches from rn_dist_grads_finish to the next host
 * collective (the loss's mean, after the step's one wait), so that a peer
 * that stalls NCCL ends the job as well.
 * This watchdog is the one place the library ends the process: a call stuck
 * inside MPI cannot be returned from.
 *
 * Built without MPI (no mpicc at build time) rn_dist_init fails with a clear
 * message and every other function is the single-process identity (d == NULL).
 */
#ifndef RN_DIST_DIST_H
#define RN_DIST_DIST_H

#include <stddef.h>

#include "core/status.h"
#include "nn/model.h"
#include "nn/params.h"

typedef struct rn_dist rn_dist;

/* 1 when built with MPI. */
int rn_dist_available(void);
/* 1 when this process was started by an MPI launcher (mpirun / srun environment). */
int rn_dist_launched(void);
/* MPI_Init, MPI_ERRORS_RETURN, and the collective watchdog (timeout_s > 0). */
int rn_dist_init(rn_dist **d, double timeout_s, rn_err *err);
/* MPI_Abort of the whole job with this exit code (for the CLI: never returns
 * when d spans several ranks; returns when d is NULL or single). */
void rn_dist_abort(rn_dist *d, int code);
/* MPI_Finalize (only after success) and frees d. NULL is fine. */
void rn_dist_finalize(rn_dist *d);
int rn_dist_rank(const rn_dist *d);
int rn_dist_size(const rn_dist *d);
/* This rank's index among the ranks on its node (MPI_COMM_TYPE_SHARED); 0 when d is NULL. */
int rn_dist_local_rank(const rn_dist *d);
/* One GPU per rank: name "cuda" (no index) with several ranks becomes "cuda:<local rank % G>" in
 * out, G = the GPUs this node shows (CUDA_VISIBLE_DEVICES' entries, else the driver's
 * /proc/driver/nvidia/gpus; unknown: the local rank itself); any other name is copied as it is.
 * Returns 0, or -1 when out (cap bytes) is too small. */
int rn_dist_device_name(const rn_dist *d, const char *name, char *out, size_t cap);
/* 1 when rn_dist_grads_setup chose the device's collectives (else the host path). */
int rn_dist_device_collectives(const rn_dist *d);

/* In-place sum of host buf over ranks. Like every host collective (the broadcasts, the barrier)
 * it first returns any error the device's collectives met (rn_device_ops.comm_check). */
int rn_dist_allreduce_sum(rn_dist *d, double *buf, int n, rn_err *err);
/* In-place mean of buf over ranks. */
int rn_dist_allreduce_mean(rn_dist *d, double *buf, int n, rn_err *err);
/* Rank 0's param, stats and nbt to every rank. */
int rn_dist_bcast_params(rn_dist *d, rn_params *p, rn_err *err);
/* Rank 0's BN running statistics and counters to every rank. */
int rn_dist_bcast_stats(rn_dist *d, rn_params *p, rn_err *err);
/* 1 on every rank if any rank passes 1 (a logical or); an error counts as 1. */
int rn_dist_any(rn_dist *d, int flag);
/* Blocks until every rank arrives. */
int rn_dist_barrier(rn_dist *d, rn_err *err);

/* Bucket size in floats of mb megabytes (10^6 bytes) of float32 (0 for mb <= 0). */
size_t rn_dist_bucket_floats(double mb);
/* The flat gradient buffer p->grad and its bucket size (0: one all-reduce after
 * backward), and the path (see the top): with several ranks and a device with
 * collectives, every rank's communicator (a collective call: every rank calls it,
 * with the same p layout). On the host path without host memory each bucket is
 * downloaded when it starts and the whole gradient uploaded after the wait; with
 * host memory MPI works in place. Allocates every host copy the steps need.
 * Returns 0, or -1 with err (a communicator that could not be made, on every rank). */
int rn_dist_grads_setup(rn_dist *d, rn_params *p, size_t bucket_floats, rn_err *err);
/* After each backward: starts the buckets not yet started; on the host path waits
 * for all and divides by the rank count; on the device path returns at once (the
 * device orders Adam after the all-reduce; its errors are returned by the next host
 * collective). Then ready for the next backward. */
int rn_dist_grads_finish(rn_dist *d, rn_err *err);
/* Seconds spent inside gradient all-reduce calls (start + wait) since the last reset; on the
 * device path only the time to issue them (the device does the work while the host goes on). */
double rn_dist_comm_seconds(rn_dist *d, int reset);

/* Model hooks: SyncBN's reduction (on the device's collectives, in place on host memory, else
 * through the host copy made at setup) and
 * the backward's gradient progress.
 * {NULL, NULL} when d is NULL. A failed reduction is kept for the next call
 * that returns a status (rn_dist_check). */
rn_device_reduce rn_dist_bn_reduce(rn_dist *d);
rn_model_grad_ready rn_dist_grad_ready(rn_dist *d);
/* 0, or -1 with the first error a hook met. */
int rn_dist_check(rn_dist *d, rn_err *err);

#endif
