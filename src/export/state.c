/* Adam's state and the epoch out of a rootnet or an authors' snapshot. */
#include <stdio.h>
#include <string.h>

#include "export/export.h"

/* A numeric scalar (any dtype, one element) into *out: 1 found, 0 absent, -1 error. */
static int scalar(const rn_tensors *ts, const char *name, double *out, const char *path, rn_err *err)
{
    const rn_tensor *t = rn_tensors_find(ts, name);
    if (!t) return 0;
    if (rn_tensor_numel(t) != 1) return rn_err_set(err, "%s: '%s' is not a scalar", path, name);
    if (t->dtype == RN_I64) {
        int64_t v;
        memcpy(&v, t->data, 8);
        *out = (double)v;
    } else if (t->dtype == RN_F64) {
        memcpy(out, t->data, 8);
    } else {
        float f;
        if (rn_tensor_to_f32(&f, t, 1, err)) return rn_err_prefix(err, "%s: '%s'", path, name);
        *out = f;
    }
    return 1;
}

/* The moment tensor of trainable entry i (its j-th parameter), in either naming. */
static const rn_tensor *moment(const rn_tensors *ts, const rn_params *p, int i, int j, const char *which, char *name,
                               size_t len)
{
    snprintf(name, len, "optimizer.%s.%s", which, p->e[i].name);
    const rn_tensor *t = rn_tensors_find(ts, name);
    if (t) return t;
    snprintf(name, len, "optimizer.state.%d.%s", j, which);
    return rn_tensors_find(ts, name);
}

static int read_moments(rn_params *p, const rn_tensors *ts, const char *path, int *found, rn_err *err)
{
    const char *which[2] = {"exp_avg", "exp_avg_sq"};
    float *dst[2] = {p->m, p->v};
    int n = 0, missing = -1;
    char name[RN_PARAM_NAME_MAX + 64];
    for (int i = 0, j = 0; i < p->n; i++) {
        const rn_param_entry *e = &p->e[i];
        if (!rn_param_trainable(e->kind)) continue;
        for (int w = 0; w < 2; w++) {
            const rn_tensor *t = moment(ts, p, i, j, which[w], name, sizeof name);
            if (!t) {
                missing = missing < 0 ? i : missing;
                continue;
            }
            if (rn_tensor_to_f32(dst[w] + e->offset, t, e->numel, err))
                return rn_err_prefix(err, "%s: Adam moment '%s' of %s", path, name, e->name);
            n++;
        }
        j++;
    }
    if (n && missing >= 0)
        return rn_err_set(err, "%s: Adam moments for some parameters but not for %s", path, p->e[missing].name);
    *found = n > 0;
    return 0;
}

int rn_export_read_state(rn_export_state *s, rn_params *p, const rn_tensors *ts, const char *path, rn_err *err)
{
    RN_ASSERT(!p->dev);
    memset(s, 0, sizeof *s);
    s->optim.adam = rn_adam_default(1e-3);
    double step = 0, lr = 0, epoch = 0, batch = 0;
    int has_step, has_lr, has_epoch;
    if (read_moments(p, ts, path, &s->optim.has_moments, err)) return -1;
    if ((has_step = scalar(ts, "optimizer.step", &step, path, err)) < 0 ||
        (!has_step && (has_step = scalar(ts, "optimizer.state.0.step", &step, path, err)) < 0) ||
        (has_lr = scalar(ts, "train.lr", &lr, path, err)) < 0 ||
        (!has_lr && (has_lr = scalar(ts, "optimizer.param_groups.0.lr", &lr, path, err)) < 0) ||
        (has_epoch = scalar(ts, "train.epoch", &epoch, path, err)) < 0 ||
        (!has_epoch && scalar(ts, "epoch", &epoch, path, err) < 0) ||
        scalar(ts, "train.loader_batch", &batch, path, err) < 0)
        return -1;
    if (s->optim.has_moments && !(step >= 1 && step < 1e15))
        return rn_err_set(err, "%s: Adam moments but the step count is %g (must be >= 1)", path, step);
    if (has_lr && !(lr > 0 && lr < 1e3)) return rn_err_set(err, "%s: learning rate %g is not in (0, 1e3)", path, lr);
    if (!(epoch >= 0 && epoch < 1e9)) return rn_err_set(err, "%s: epoch %g is out of range", path, epoch);
    s->optim.adam.step = s->optim.has_moments ? (long)step : 0;
    if (has_lr) s->optim.adam.lr = lr;
    s->epoch = (int)epoch;
    s->mid_epoch = batch > 0;
    return 0;
}
