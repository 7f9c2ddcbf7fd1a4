/* rn_weights: RootNet weights to and from files, by PyTorch state_dict name.
 *
 *   rn_params p; rn_rng rng; rn_rng_seed(&rng, 1);
 *   if (rn_weights_load(&p, "snapshot_24.pth.tar", 0, &rng, &err)) ...   // depth from the file
 *   if (rn_weights_load(&p, "resnet50.pth", 50, &rng, &err)) ...        // torchvision backbone
 *   rn_weights_save(&p, "w.safetensors", NULL, &err);
 *   rn_params_free(&p);
 *
 * Accepted files: safetensors, torch.save zip and legacy files, holding either
 * a full RootNet state_dict (names "backbone.*" and "root.*", optionally under
 * "module." and/or inside an authors' snapshot {"epoch", "network",
 * "optimizer"}), or a torchvision ImageNet ResNet state_dict ("conv1.weight",
 * ..., "fc.*" dropped) that initialises the backbone while the head gets the
 * authors' init from rng. Names "epoch", "optimizer.*" and "train.*" (snapshot
 * state: Adam moments, RNG, loader position) are skipped here. Every name must be known, present once, of the right
 * shape and finite; anything else is an error naming the file and tensor.
 */
#ifndef RN_NN_WEIGHTS_H
#define RN_NN_WEIGHTS_H

#include "core/rng.h"
#include "core/status.h"
#include "io/tensors.h"
#include "nn/params.h"

/* Builds p (rn_params_build) for the depth found in the file and loads it.
 * depth != 0: the file must hold that backbone. rng: head init for backbone-only files. */
int rn_weights_load(rn_params *p, const char *path, int depth, rn_rng *rng, rn_err *err);
/* rn_weights_load on tensors already read from path (ts is not freed). */
int rn_weights_from_tensors(rn_params *p, const rn_tensors *ts, const char *path, int depth, rn_rng *rng, rn_err *err);
/* Both with the network wanted: want (NULL: the one the file holds, RootNet for a torchvision file) builds the
 * table of a torchvision file's backbone; a file holding another net's head is refused naming both. */
/* The net whose head ts holds (rn_net_guess by names and shapes), NULL for none or a torchvision file. */
const rn_net *rn_weights_net(const rn_tensors *ts);
int rn_weights_load_net(rn_params *p, const char *path, int depth, const rn_net *want, rn_rng *rng, rn_err *err);
int rn_weights_from_tensors_net(rn_params *p, const rn_tensors *ts, const char *path, int depth, const rn_net *want,
                                rn_rng *rng, rn_err *err);
/* Loads tensors already read from path (names as in the file) into a built p. */
int rn_weights_apply(rn_params *p, const rn_tensors *ts, const char *path, rn_rng *rng, rn_err *err);
/* Appends every entry of p (params, running stats, num_batches_tracked as I64)
 * to ts under its state_dict name, with prefix (e.g. "" or "optimizer.exp_avg."). */
int rn_weights_export(rn_tensors *ts, const rn_params *p, rn_err *err);
/* Writes p as safetensors with PyTorch names; extra (may be NULL) is appended. */
int rn_weights_save(const rn_params *p, const char *path, const rn_tensors *extra, rn_err *err);
/* Writes the gradient of every trainable entry, by parameter name. */
int rn_grads_save(const rn_params *p, const char *path, rn_err *err);
/* Copies one flat buffer laid out like p->param (grad, m or v) to ts by name.
 * Export and save download from p's arenas (nn/params.h, Memory). */
int rn_weights_export_buffer(rn_tensors *ts, const rn_params *p, const float *buf, const char *prefix, rn_err *err);
/* Converts t (n elements of a float dtype) to float into dst, a span of p's
 * arenas, through a host copy (rn_params_upload); finite: a non-finite element
 * fails, naming path and the tensor. Errors name path. */
int rn_weights_tensor_in(rn_params *p, float *dst, const rn_tensor *t, size_t n, int finite, const char *path,
                         rn_err *err);

#endif
