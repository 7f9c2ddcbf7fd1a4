/* The one assembly of an inference model (infer/infer_model.h). */
#include "infer/infer_model.h"

#include "nn/calib.h"

int rn_infer_model_open(rn_model *m, rn_params *p, const rn_infer_cfg *c, rn_err *err)
{
    if (c->calib && rn_calib_check_net(c->calib, p->net, err)) return -1;
    rn_model_opts mo = c->base;
    rn_policy_apply(rn_policy_get(c->precision), &mo);
    mo.inference = 1;
    mo.fold = c->fold;
    mo.calib = c->calib;
    mo.observe = c->observe;
    mo.grad_ready = (rn_model_grad_ready){0};
    if (rn_model_create(m, p, c->batch, c->h, c->w, &mo, err)) return -1;
    rn_model_sync_weights(m);
    return 0;
}
