/* The authors' snapshot format, written through io/pth_write.h. */
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "io/pth_write.h"

static void entry_tensor(rn_pthw *w, const rn_params *p, int i, const float *base)
{
    const rn_param_entry *e = &p->e[i];
    if (e->kind == RN_P_BN_NBT) rn_pthw_tensor(w, RN_I64, 0, NULL, &p->nbt[e->offset]);
    else rn_pthw_tensor(w, RN_F32, e->ndim, e->shape, base ? base + e->offset : rn_params_data(p, i));
}

static void network(rn_pthw *w, const rn_params *p)
{
    rn_pkw_ordered_dict(&w->pk);
    rn_pkw_mark(&w->pk);
    for (int i = 0; i < p->n; i++) {
        char name[RN_PARAM_NAME_MAX + 8];
        snprintf(name, sizeof name, "module.%s", p->e[i].name);
        rn_pkw_str(&w->pk, name);
        entry_tensor(w, p, i, NULL);
    }
    rn_pkw_setitems(&w->pk);
}

/* {index: {'step', 'exp_avg', 'exp_avg_sq'}} over the trainable entries in order. */
static void adam_state(rn_pthw *w, const rn_params *p, const rn_export_optim *o)
{
    rn_pkw *pk = &w->pk;
    rn_pkw_begin(pk, RN_PKW_DICT);
    for (int i = 0, j = 0; o->has_moments && o->adam.step > 0 && i < p->n; i++) {
        if (!rn_param_trainable(p->e[i].kind)) continue;
        rn_pkw_int(pk, j++);
        rn_pkw_begin(pk, RN_PKW_DICT);
        rn_pkw_str(pk, "step");
        rn_pkw_int(pk, o->adam.step);
        rn_pkw_str(pk, "exp_avg");
        entry_tensor(w, p, i, p->m);
        rn_pkw_str(pk, "exp_avg_sq");
        entry_tensor(w, p, i, p->v);
        rn_pkw_end(pk, RN_PKW_DICT);
    }
    rn_pkw_end(pk, RN_PKW_DICT);
}

static void key_bool(rn_pkw *pk, const char *k, int v) { rn_pkw_str(pk, k), rn_pkw_bool(pk, v); }

/* [{lr, betas, eps, weight_decay, amsgrad, ..., params}]: torch.optim.Adam's defaults as torch 1.13 writes them. */
static void param_groups(rn_pkw *pk, const rn_params *p, const rn_adam *a)
{
    rn_pkw_begin(pk, RN_PKW_LIST);
    rn_pkw_begin(pk, RN_PKW_DICT);
    rn_pkw_str(pk, "lr"), rn_pkw_float(pk, a->lr);
    rn_pkw_str(pk, "betas");
    rn_pkw_begin(pk, RN_PKW_TUPLE);
    rn_pkw_float(pk, a->beta1), rn_pkw_float(pk, a->beta2);
    rn_pkw_end(pk, RN_PKW_TUPLE);
    rn_pkw_str(pk, "eps"), rn_pkw_float(pk, a->eps);
    rn_pkw_str(pk, "weight_decay"), rn_pkw_int(pk, 0);
    key_bool(pk, "amsgrad", 0), key_bool(pk, "maximize", 0);
    rn_pkw_str(pk, "foreach"), rn_pkw_none(pk);
    key_bool(pk, "capturable", 0), key_bool(pk, "differentiable", 0), key_bool(pk, "fused", 0);
    rn_pkw_str(pk, "params");
    rn_pkw_begin(pk, RN_PKW_LIST);
    for (int i = 0, j = 0; i < p->n; i++)
        if (rn_param_trainable(p->e[i].kind)) rn_pkw_int(pk, j++);
    rn_pkw_end(pk, RN_PKW_LIST);
    rn_pkw_end(pk, RN_PKW_DICT);
    rn_pkw_end(pk, RN_PKW_LIST);
}

int rn_export_authors_pth(const rn_params *dev_p, int epoch, const rn_export_optim *o, const char *path,
                          rn_err *err)
{
    rn_params host, *p = &host;
    rn_params_host_copy(&host, dev_p, o->has_moments && o->adam.step > 0);
    rn_pthw w;
    rn_pthw_init(&w);
    rn_pkw *pk = &w.pk;
    rn_pkw_begin(pk, RN_PKW_DICT);
    rn_pkw_str(pk, "epoch"), rn_pkw_int(pk, epoch);
    rn_pkw_str(pk, "network");
    network(&w, p);
    rn_pkw_str(pk, "optimizer");
    rn_pkw_begin(pk, RN_PKW_DICT);
    rn_pkw_str(pk, "state");
    adam_state(&w, p, o);
    rn_pkw_str(pk, "param_groups");
    param_groups(pk, p, &o->adam);
    rn_pkw_end(pk, RN_PKW_DICT);
    rn_pkw_end(pk, RN_PKW_DICT);
    int rc = rn_pthw_write(&w, path, err);
    rn_pthw_free(&w);
    rn_params_free(&host);
    return rc;
}
