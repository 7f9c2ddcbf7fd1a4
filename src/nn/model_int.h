/* Internal to the model's three files: nn/model.c (the network's structure, create, the backbone's
 * forward and backward, graphs), nn/model_plan.c (the memory plan and the step's inputs) and
 * nn/model_head.c (the head layers of the net's description, the loss and the output). Not an
 * interface: the model's users include nn/model.h.
 */
#ifndef RN_NN_MODEL_INT_H
#define RN_NN_MODEL_INT_H

#include "nn/model.h"

/* The model's device and its op table. */
#define DEV(m) ((m)->dev)
#define OP(m) ((m)->dev->ops)

/* Planning walks the buffers twice in the same order: counting (base NULL) appends each to b, then
 * place() gives them offsets, then assigning hands out base + each one's offset. */
typedef struct plan {
    rn_device *dev;
    char *base;        /* NULL while counting */
    rn_model_buf *b;   /* the buffers in planning order */
    int n, cap;        /* counting: how many so far; assigning: the next to hand out */
    int t0, t1;        /* the lifetime of the activations and gradients planned now (life()) */
    int last;          /* the step's last time: statistics, head buffers and inputs live [0, last] */
    rn_numtype act;
} plan;

/* The step's phases (model.h's memory plan): the stem, each block, each deconv, the head layers.
 * Backward gives each phase two times: t_bwd(ph) and, for the weights' and data's gradient of a
 * deconv (after its BN's backward has read its activations), t_bwd(ph) + 1. */
#define PH_STEM 0
#define PH_BLOCK(i) (1 + (i))
static inline int rn_ph_count(const rn_model *m) { return m->nblocks + m->ndeconv + 2; }
static inline int rn_ph_deconv(const rn_model *m, int i) { return 1 + m->nblocks + i; }
static inline int rn_ph_head(const rn_model *m) { return 1 + m->nblocks + m->ndeconv; }
static inline int rn_t_bwd(const rn_model *m, int ph) { return rn_ph_count(m) + 2 * (rn_ph_count(m) - 1 - ph); }
static inline int rn_t_last(const rn_model *m) { return rn_t_bwd(m, PH_STEM) + 1; }

/* ---- model_plan.c ---- */
/* A buffer of `bytes` of that kind (statistics, head and input buffers live the whole step;
 * activations and gradients over the lifetime set by rn_plan_life). */
void *rn_plan_take(plan *pl, rn_mem_kind kind, size_t bytes);
void rn_plan_life(plan *pl, int t0, int t1);
/* Every buffer of m (the backbone, the deconvs, the head's (rn_model_head_plan), the inputs). */
void rn_plan_all(rn_model *m, plan *pl);
/* Offsets (largest first, each at the lowest offset clear of those live with it); the arena's size. */
size_t rn_plan_place(rn_model_buf *b, int n);
/* opts.no_reuse: one after another, no sharing. */
size_t rn_plan_place_apart(rn_model_buf *b, int n);
/* Asserts the plan's invariant: inside the arena, no two buffers live at one time overlapping. */
void rn_plan_check(const rn_model_buf *b, int n, size_t arena);
rn_model_mem rn_plan_mem(const rn_model_buf *b, int n, size_t arena, int last);
/* Input i (images, k, target, vis, have_depth) on the device: the host array in place with host
 * memory, else uploaded into the current set; stage skips the upload where rn_model_prefetch put
 * this very array there. */
const float *rn_model_place_input(const rn_model *m, int i, const float *host);
const float *rn_model_stage_input(rn_model *m, int i, const float *host);
rn_act_shape rn_model_backbone_shape(const rn_model *m);

/* ---- model.c ---- */
/* Ends a profiler span (on the device's clock, or after the device has finished its work). */
void rn_model_span_end(rn_model *m, int sp);
/* opts.poison: NaN into the buffers dying before or born at backward's time t. */
void rn_model_poison(rn_model *m, int t);

/* ---- model_head.c ---- */
/* The head layers' parameter indices (after the table's check against the net). */
int rn_model_head_build(rn_model *m, rn_err *err);
/* The head layers' buffers, the output and its gradient. */
void rn_model_head_plan(rn_model *m, plan *pl);
/* The head layers on the top deconv's output and the backbone's output: the output rows. */
void rn_model_head_forward(rn_model *m, const void *top, const void *backbone);
/* The loss and its gradient into the head layers' inputs: top's gradient into dtop (overwritten),
 * the GAP layer's features' gradient kept for rn_model_head_backward_backbone. */
void rn_model_head_backward(rn_model *m, void *dtop);
/* The GAP layer's gradient added into the backbone output's gradient dbb (nothing without one). */
void rn_model_head_backward_backbone(rn_model *m, void *dbb);

#endif
