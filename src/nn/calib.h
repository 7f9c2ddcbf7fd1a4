/* rn_calib: what an int8 model (nn/precision.h: int8) needs beyond its weights, the range of each
 * conv's input: for each conv but the stem (named by its weight tensor), the largest value its input
 * reached over a calibration set in the fp32 fold model's forward. A conv quantises its input to u8
 * with the per-tensor scale amax / 255 (nn/device.h: rn_conv_shape.in_scale); the weights' scales
 * come from the weights themselves (per output channel).
 *
 *   rn_calib cal; rn_calib_init(&cal, "rootnet");
 *   rn_model_opts o = {... .fold = 1, .inference = 1, .observe = {rn_calib_observe, &cal}};
 *   ... rn_model_forward over the calibration images (eval BN) ...
 *   rn_calib_save(&cal, "snap.safetensors.int8", &err);     // beside the snapshot (rn_calib_path)
 *   rn_calib_load(&cal2, path, &err);  o2.calib = &cal2;   o2.compute = RN_NUM_I8;
 *   rn_calib_free(&cal);
 *
 * The file is safetensors: one F32 scalar per conv named "<weight name>" holding amax, metadata
 * "format": "rootnet-int8-calibration", "version": "1", "net", "images" (how many were seen).
 */
#ifndef RN_NN_CALIB_H
#define RN_NN_CALIB_H

#include <stddef.h>

#include "core/status.h"
#include "nn/device.h"
#include "nn/net.h"

typedef struct rn_calib_entry {
    char name[96]; /* the conv's weight tensor, e.g. "backbone.layer1.0.conv2.weight" */
    float amax;    /* the largest input value seen (>= 0) */
} rn_calib_entry;

typedef struct rn_calib {
    rn_calib_entry *e;
    int n, cap;
    char net[32];   /* the net it was made on: nn/net.h's name, ":" and its joint set where it has one
                     * ("posenet:Human36M"); "" (files from before PoseNet's int8) is "rootnet" */
    long images;    /* images the ranges were taken over */
    float *host;    /* rn_calib_observe's download buffer (hold), grown as needed */
    size_t hold;
} rn_calib;

void rn_calib_init(rn_calib *c, const char *net);
void rn_calib_free(rn_calib *c);
/* The net the ranges are taken on (calibrate, once its snapshot is read). */
void rn_calib_set_net(rn_calib *c, const rn_net *net);
/* 0 when c was made on net, else -1 with one line naming both. */
int rn_calib_check_net(const rn_calib *c, const rn_net *net, rn_err *err);
/* The entry of that conv, or NULL. */
const rn_calib_entry *rn_calib_find(const rn_calib *c, const char *name);
/* A model's observer (rn_model_opts.observe): amax of `name` = max(amax, max of x), x downloaded. */
void rn_calib_observe(void *ctx, rn_device *dev, const char *name, const void *x, const rn_act_shape *a);
/* The calibration file that goes with a snapshot: "<snapshot>.int8" into buf. */
const char *rn_calib_path(char *buf, size_t n, const char *snapshot);
int rn_calib_save(const rn_calib *c, const char *path, rn_err *err);
/* Reads a file of rn_calib_save (c initialised here); one line naming the file and its problem on error. */
int rn_calib_load(rn_calib *c, const char *path, rn_err *err);

#endif
