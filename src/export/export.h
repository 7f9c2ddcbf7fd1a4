/* rn_export: RootNet weights in other programs' formats.
 *
 *   rn_params p;  ... loaded (nn/weights.h), Adam moments in p.m / p.v when known ...
 *   rn_export_optim o = {.adam = rn_adam_default(1e-3), .has_moments = 1};   // o.adam.step: steps done
 *   rn_export_authors_pth(&p, 19, &o, "snapshot_19.pth.tar", &err);
 *   rn_export_onnx(&p, 256, 256, "rootnet.onnx", &err);
 *
 * Both write to a temporary file renamed into place: on error nothing is left at path.
 * Both read p (weights, statistics, moments) once through rn_params_download
 * (rn_params_host_copy), so p may live on a device; rn_export_read_state
 * writes p->m, p->v by pointer and needs p in host memory (p->dev NULL).
 */
#ifndef RN_EXPORT_EXPORT_H
#define RN_EXPORT_EXPORT_H

#include "core/status.h"
#include "io/tensors.h"
#include "nn/params.h"
#include "optim/adam.h"

typedef struct rn_export_optim {
    rn_adam adam;    /* lr, betas, eps; adam.step = the steps taken so far */
    int has_moments; /* 1: p->m, p->v hold Adam's moments; 0: a fresh Adam (empty state) */
} rn_export_optim;

/* What a weight file says about training (read by rn_export_read_state). */
typedef struct rn_export_state {
    rn_export_optim optim; /* moments go into p->m, p->v */
    int epoch;             /* rootnet's train.epoch or the authors' epoch; 0 when absent */
    int mid_epoch;         /* 1: a rootnet snapshot taken inside its epoch (train.loader_batch > 0) */
} rn_export_state;

/* Reads Adam's state from tensors ts of the weight file path into p->m, p->v
 * and s: a rootnet snapshot ("optimizer.exp_avg.<name>", "optimizer.step",
 * "train.lr", "train.epoch") or the authors' ("optimizer.state.<i>.exp_avg",
 * ..., "optimizer.param_groups.0.lr", "epoch"). No moments: a fresh Adam at lr
 * 1e-3 (the authors' cfg.lr). Moments for some parameters only, or of the
 * wrong size, are an error naming the tensor. */
int rn_export_read_state(rn_export_state *s, rn_params *p, const rn_tensors *ts, const char *path, rn_err *err);

/* The authors' snapshot (3DMPPE_ROOTNET's train.py save_model) as torch.save's
 * zip format: {'epoch': epoch, 'network': OrderedDict of the state_dict under
 * 'module.' (DataParallel), 'optimizer': torch.optim.Adam's state_dict over
 * model.parameters() in order}. Adam's 'step' is written as an int (every
 * torch version resumes from it). */
int rn_export_authors_pth(const rn_params *p, int epoch, const rn_export_optim *o, const char *path, rn_err *err);

/* RootNet in eval mode as ONNX (opset RN_ONNX_OPSET): inputs input_img
 * (N, 3, h, w) float and k_value (N, 1), output coord (N, 3) (x, y on the
 * h/4 x w/4 grid, depth = gamma * k); N is dynamic. Normalisation is not in
 * the graph. BN layers are BatchNormalization nodes with the running
 * statistics; the initializers carry the PyTorch state_dict names. */
#define RN_ONNX_OPSET 13
/* 0 when this build can write ONNX; else -1 with a message naming path and what the build lacks. */
int rn_export_onnx_check(const char *path, rn_err *err);
int rn_export_onnx(const rn_params *p, int h, int w, const char *path, rn_err *err);

#endif
