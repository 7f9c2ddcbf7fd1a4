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

/* A positive finite float at *s, ending at a ':' or the string's end: 0, or -1. */
static int parse_scale(const char *s, const char **rest, double *v)
{
    char *end = NULL;
    *v = strtod(s, &end);
    *rest = end;
    return end == s || (*end && *end != ':') || !(*v > 0) || !isfinite(*v) || *v > 3.0e38 ? -1 : 0;
}

/* "dynamic[:INIT[:WINDOW]]" after "dynamic" (at s): 0, or -1. */
static int parse_dynamic(const char *s, rn_loss_scaler *out)
{
    *out = rn_loss_scaler_dynamic();
    if (!*s) return 0;
    double v;
    if (*s++ != ':' || parse_scale(s, &s, &v)) return -1;
    out->scale = (float)v;
    out->max_scale = fmaxf(out->max_scale, out->scale);
    if (!*s) return 0;
    char *end = NULL;
    long w = strtol(s + 1, &end, 10);
    if (end == s + 1 || *end || w < 1) return -1;
    out->window = w;
    return 0;
}

int rn_loss_scale_parse(const char *s, rn_loss_scaler *out, rn_err *err)
{
    double v = 0;
    const char *rest = "";
    int bad = !s;
    if (!bad && !strncmp(s, "dynamic", 7)) {
        bad = parse_dynamic(s + 7, out);
    } else if (!bad) {
        bad = parse_scale(s, &rest, &v) || *rest;
        if (!bad) *out = rn_loss_scaler_static((float)v);
    }
    if (bad)
        return rn_err_set(err, "loss scale '%s': expected 'dynamic' or a positive number (dynamic:INIT:WINDOW: "
                          "the dynamic scale's start and its clean steps before doubling)", s ? s : "(null)");
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

int rn_loss_scaler_resume(rn_loss_scaler *s, const rn_loss_scaler *saved)
{
    s->steps = saved->steps, s->skipped = saved->skipped, s->last_skipped = saved->last_skipped;
    if (!s->dynamic || !saved->dynamic) return 0;
    s->scale = fminf(fmaxf(saved->scale, s->min_scale), s->max_scale);
    s->clean = saved->clean < s->window ? saved->clean : 0;
    return 1;
}

void rn_loss_scaler_log(const rn_loss_scaler *s, FILE *f)
{
    fprintf(f, "loss scale %g (%s), skipped %ld of %ld steps%s\n", (double)s->scale, s->dynamic ? "dynamic" : "static",
            s->skipped, s->steps, s->last_skipped ? " (last step skipped: inf/NaN gradients)" : "");
}
