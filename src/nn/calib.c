/* The ranges of an int8 model's conv inputs (nn/calib.h). */
#include "nn/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

#define CALIB_FORMAT "rootnet-int8-calibration"

void rn_calib_init(rn_calib *c, const char *net)
{
    memset(c, 0, sizeof *c);
    snprintf(c->net, sizeof c->net, "%s", net ? net : "");
}

static void net_id(char *buf, size_t n, const rn_net *net)
{
    snprintf(buf, n, "%s%s%s", net->name, net->skeleton ? ":" : "", net->skeleton ? net->skeleton : "");
}

void rn_calib_set_net(rn_calib *c, const rn_net *net) { net_id(c->net, sizeof c->net, net); }

int rn_calib_check_net(const rn_calib *c, const rn_net *net, rn_err *err)
{
    char id[sizeof c->net];
    net_id(id, sizeof id, net);
    const char *made = c->net[0] ? c->net : "rootnet";
    if (!strcmp(made, id)) return 0;
    return rn_err_set(err, "the int8 calibration was made on a %s and the snapshot is a %s: calibrate this snapshot "
                           "(rootnet calibrate)", made, id);
}

void rn_calib_free(rn_calib *c)
{
    free(c->e);
    free(c->host);
    memset(c, 0, sizeof *c);
}

const rn_calib_entry *rn_calib_find(const rn_calib *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].name, name)) return &c->e[i];
    return NULL;
}

static rn_calib_entry *calib_add(rn_calib *c, const char *name)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->e = rn_xrealloc(c->e, (size_t)c->cap * sizeof *c->e);
    }
    rn_calib_entry *e = &c->e[c->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->amax = 0;
    return e;
}

void rn_calib_observe(void *ctx, rn_device *dev, const char *name, const void *x, const rn_act_shape *a)
{
    rn_calib *c = ctx;
    size_t n = (size_t)a->n * a->c * a->h * a->w;
    if (n > c->hold) {
        free(c->host);
        c->host = rn_xmalloc(n * sizeof *c->host);
        c->hold = n;
    }
    dev->ops->act_download(dev, c->host, x, a);
    rn_calib_entry *e = (rn_calib_entry *)rn_calib_find(c, name);
    if (!e) e = calib_add(c, name);
    float m = e->amax;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, c->host[i]);
    e->amax = m;
}

const char *rn_calib_path(char *buf, size_t n, const char *snapshot)
{
    snprintf(buf, n, "%s.int8", snapshot);
    return buf;
}

int rn_calib_save(const rn_calib *c, const char *path, rn_err *err)
{
    rn_tensors ts;
    rn_tensors_init(&ts);
    int rc = 0;
    for (int i = 0; i < c->n && !rc; i++) rc = rn_tensors_add(&ts, c->e[i].name, RN_F32, 0, NULL, &c->e[i].amax, err);
    char images[32];
    snprintf(images, sizeof images, "%ld", c->images);
    rn_tensors_set_meta(&ts, "format", CALIB_FORMAT);
    rn_tensors_set_meta(&ts, "version", "1");
    rn_tensors_set_meta(&ts, "net", c->net);
    rn_tensors_set_meta(&ts, "images", images);
    if (!rc) rc = rn_safetensors_write(path, &ts, err);
    rn_tensors_free(&ts);
    return rc;
}

static int calib_read(rn_calib *c, const rn_tensors *ts, const char *path, rn_err *err)
{
    const char *fmt = rn_tensors_get_meta(ts, "format"), *ver = rn_tensors_get_meta(ts, "version");
    if (!fmt || strcmp(fmt, CALIB_FORMAT) || !ver || strcmp(ver, "1"))
        return rn_err_set(err, "%s: not a rootnet int8 calibration (version 1): make one with rootnet calibrate", path);
    const char *net = rn_tensors_get_meta(ts, "net"), *images = rn_tensors_get_meta(ts, "images");
    rn_calib_init(c, net);
    c->images = images ? strtol(images, NULL, 10) : 0;
    for (int i = 0; i < ts->n; i++) {
        const rn_tensor *t = &ts->t[i];
        float v;
        if (t->dtype != RN_F32 || t->ndim != 0 || strlen(t->name) >= sizeof c->e[0].name)
            return rn_err_set(err, "%s: tensor '%s' is not an F32 scalar range", path, t->name);
        memcpy(&v, t->data, sizeof v);
        if (!isfinite(v) || v < 0) return rn_err_set(err, "%s: tensor '%s': range %g is not finite and >= 0", path, t->name, v);
        calib_add(c, t->name)->amax = v;
    }
    return 0;
}

int rn_calib_load(rn_calib *c, const char *path, rn_err *err)
{
    rn_tensors ts;
    memset(c, 0, sizeof *c);
    if (rn_safetensors_read(&ts, path, err)) return rn_err_prefix(err, "int8 calibration");
    int rc = calib_read(c, &ts, path, err);
    rn_tensors_free(&ts);
    if (rc) rn_calib_free(c);
    return rc;
}
