#include "optim/loss_scale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DYN_INIT 65536.0f
#define DYN_MAX 16777216.0f
#define DYN_WINDOW 2000

rn_loss_scaler rn_loss_scaler_static(float scale)
{
    return (rn_loss_scaler){.scale = scale, .min_scale = scale, .max_scale = scale, .window = 0};
}

rn_loss_scaler rn_loss_scaler_dynamic(void)
{
    return (rn_loss_scaler){.dynamic = 1, .scale = DYN_INIT, .min_scale = 1.0f, .max_scale = DYN_MAX,
                            .window = DYN_WINDOW};
}

int rn_loss_scale_parse(const char *s, rn_loss_scaler *out, rn_err *err)
{
    if (s && !strcmp(s, "dynamic")) {
        *out = rn_loss_scaler_dynamic();
        return 0;
    }
    char *end = NULL;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || end == s || *end || !(v > 0) || !isfinite(v) || v > 3.0e38)
        return rn_err_set(err, "loss scale '%s': expected 'dynamic' or a positive number", s ? s : "(null)");
    *out = rn_loss_scaler_static((float)v);
    return 0;
}

void rn_grad_unscale_check(rn_device *dev, float *grad, size_t n, float inv_scale, int *finite)
{
    dev->ops->unscale_check(dev, grad, n, inv_scale, finite);
}

int rn_loss_scaler_update(rn_loss_scaler *s, int finite)
{
    s->steps++;
    s->last_skipped = !finite;
    if (!finite) {
        s->skipped++;
        s->clean = 0;
        if (s->dynamic) s->scale = fmaxf(s->scale * 0.5f, s->min_scale);
        return 0;
    }
    if (s->dynamic && ++s->clean >= s->window) {
        s->scale = fminf(s->scale * 2.0f, s->max_scale);
        s->clean = 0;
    }
    return 1;
}

void rn_loss_scaler_log(const rn_loss_scaler *s, FILE *f)
{
    fprintf(f, "loss scale %g (%s), skipped %ld of %ld steps%s\n", (double)s->scale, s->dynamic ? "dynamic" : "static",
            s->skipped, s->steps, s->last_skipped ? " (last step skipped: inf/NaN gradients)" : "");
}
