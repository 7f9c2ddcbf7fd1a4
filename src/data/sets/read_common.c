#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/sets/bbox.h"
#include "data/json/jsonf.h"
#include "data/sets/readers.h"

uint32_t rn_dsbuild_str(rn_dsbuild *b, const char *s)
{
    size_t len = strlen(s) + 1;
    if (b->str_len + len > b->str_cap) {
        size_t cap = b->str_cap ? b->str_cap : 4096;
        while (cap < b->str_len + len) cap *= 2;
        char *p = realloc(b->str, cap);
        RN_ASSERT(p);
        b->str = p;
        b->str_cap = cap;
    }
    RN_ASSERT(b->str_len + len < UINT32_MAX);
    uint32_t off = (uint32_t)b->str_len;
    memcpy(b->str + b->str_len, s, len);
    b->str_len += len;
    return off;
}

rn_sample *rn_dsbuild_push(rn_dsbuild *b)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        rn_sample *p = realloc(b->s, cap * sizeof *p);
        RN_ASSERT(p);
        b->s = p;
        b->cap = cap;
        if (b->J > 0) {
            float *j = realloc(b->joints, cap * (size_t)b->J * RN_JOINT_F * sizeof *j);
            RN_ASSERT(j);
            b->joints = j;
        }
    }
    if (b->J > 0) memset(b->joints + b->n * (size_t)b->J * RN_JOINT_F, 0, (size_t)b->J * RN_JOINT_F * sizeof(float));
    rn_sample *s = &b->s[b->n++];
    memset(s, 0, sizeof *s);
    s->ann_id = -1;
    s->image_id = -1;
    s->score = 1.0f;
    s->is_valid = 1;
    s->action = -1;
    s->subject = -1;
    s->root_vis = 1.0f;
    s->have_depth = 1;
    return s;
}

float *rn_dsbuild_joints(rn_dsbuild *b)
{
    RN_ASSERT(b->J > 0 && b->n > 0);
    return b->joints + (b->n - 1) * (size_t)b->J * RN_JOINT_F;
}

void rn_dsbuild_free(rn_dsbuild *b)
{
    free(b->s);
    free(b->str);
    free(b->joints);
    memset(b, 0, sizeof *b);
}

int rn_read_box(rn_sample *s, const double box[4], int integral, double positive, const rn_read_ctx *ctx,
                const rn_jctx *jc, rn_err *err)
{
    if (box[2] < 0 || box[3] < 0) return rn_jfail(jc, "bbox", err, "negative size (%g x %g)", box[2], box[3]);
    double out[4];
    double aspect = (double)ctx->opts->input_w / (double)ctx->opts->input_h;
    if (rn_bbox_process(out, box, integral, s->width, s->height, aspect, positive)) return 1;
    rn_sample_set_box(s, out);
    double area = out[2] * out[3];
    s->area = (float)area;
    s->k = (float)rn_bbox_k(ctx->bbox_real[0], ctx->bbox_real[1], s->f[0], s->f[1], area);
    return 0;
}

rn_jdoc *rn_read_json(const rn_read_ctx *ctx, const char *path, rn_err *err)
{
    return ctx->open_json ? ctx->open_json(ctx->open_arg, path, err) : rn_jdoc_load(path, err);
}

int rn_read_finite(const rn_sample *s, const rn_jctx *jc, rn_err *err)
{
    const struct {
        const char *name;
        const float *v;
        int n;
    } f[] = {{"bbox", s->bbox, 4},         {"area", &s->area, 1},         {"k", &s->k, 1},
             {"root_img", s->root_img, 3}, {"root_cam", s->root_cam, 3}, {"root_vis", &s->root_vis, 1},
             {"focal", s->f, 2},           {"princpt", s->c, 2},         {"score", &s->score, 1}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        for (int j = 0; j < f[i].n; j++)
            if (!isfinite(f[i].v[j]))
                return rn_jfail(jc, NULL, err, "derived value %s[%d] is %g: beyond float range", f[i].name, j,
                                (double)f[i].v[j]);
    return 0;
}

int rn_read_joints_finite(const float *joints, int J, const rn_jctx *jc, rn_err *err)
{
    static const char *const what[RN_JOINT_F] = {"img x", "img y", "img depth", "cam X", "cam Y", "cam Z", "vis"};
    for (int j = 0; j < J; j++)
        for (int i = 0; i < RN_JOINT_F; i++)
            if (!isfinite(joints[(size_t)j * RN_JOINT_F + i]))
                return rn_jfail(jc, NULL, err, "derived joint %d %s is %g: beyond float range", j, what[i],
                                (double)joints[(size_t)j * RN_JOINT_F + i]);
    return 0;
}

/* Subject lists of the authors' Human36M.get_subject. */
int rn_h36m_subjects(int protocol, rn_split split, int out[8])
{
    static const int p1_train[] = {1, 5, 6, 7, 8, 9}, p2_train[] = {1, 5, 6, 7, 8};
    static const int p1_test[] = {11}, p2_test[] = {9, 11};
    const int *l = protocol == 1 ? (split == RN_SPLIT_TRAIN ? p1_train : p1_test)
                                 : (split == RN_SPLIT_TRAIN ? p2_train : p2_test);
    int n = protocol == 1 ? (split == RN_SPLIT_TRAIN ? 6 : 1) : (split == RN_SPLIT_TRAIN ? 5 : 2);
    memcpy(out, l, (size_t)n * sizeof *out);
    return n;
}

int rn_read_images(const rn_jctx *jc, const rn_jnode *root, const rn_jnode **images, rn_idmap *map, rn_err *err)
{
    rn_jctx c = *jc;
    c.rec = -1;
    *images = rn_jget_array(&c, root, "images", err);
    if (!*images) return -1;
    size_t n = rn_jarray_size(*images);
    rn_idmap_init(map, n);
    c.what = "image";
    for (size_t i = 0; i < n; i++) {
        long id;
        c.rec = (long)i;
        if (rn_jget_int(&c, rn_jarray_get(*images, i), "id", &id, err)) return -1;
        if (rn_idmap_put(map, id, i)) return rn_jfail(&c, "id", err, "duplicate image id %ld", id);
    }
    return 0;
}

int rn_read_file_index(rn_read_file *f, const char *path, const rn_jnode *root, int want_anns, rn_err *err)
{
    if (path != f->path) snprintf(f->path, sizeof f->path, "%s", path);
    f->images = f->anns = NULL;
    memset(&f->map, 0, sizeof f->map);
    rn_jctx jc = rn_read_rec(f, NULL, -1);
    int rc = rn_read_images(&jc, root, &f->images, &f->map, err);
    if (!rc && want_anns) rc = (f->anns = rn_jget_array(&jc, root, "annotations", err)) ? 0 : -1;
    if (rc) rn_read_file_close(f);
    return rc;
}

int rn_read_file_open(rn_read_file *f, const rn_read_ctx *ctx, const char *rel, int want_anns, rn_err *err)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s/%s", ctx->data_dir, rel);
    if (!(f->doc = rn_read_json(ctx, f->path, err))) return -1;
    return rn_read_file_index(f, f->path, f->doc->root, want_anns, err);
}

void rn_read_file_close(rn_read_file *f)
{
    if (f->map.keys) rn_idmap_free(&f->map);
    memset(&f->map, 0, sizeof f->map);
    rn_jdoc_free(f->doc);
    f->doc = NULL;
}

rn_jctx rn_read_rec(const rn_read_file *f, const char *what, long i)
{
    return (rn_jctx){.file = f->path, .what = what, .rec = i, .image_id = -1, .ann_id = -1};
}

int rn_read_image_basics(const rn_jctx *jc, const rn_jnode *img, rn_sample *s, const char **file, rn_err *err)
{
    long id, w, h;
    if (rn_jget_int(jc, img, "id", &id, err) || rn_jget_int(jc, img, "width", &w, err) ||
        rn_jget_int(jc, img, "height", &h, err) || rn_jget_str(jc, img, "file_name", file, err))
        return -1;
    if (w <= 0 || h <= 0 || w > 1000000 || h > 1000000)
        return rn_jfail(jc, w <= 0 || w > 1000000 ? "width" : "height", err, "bad image size %ld x %ld", w, h);
    if (!**file) return rn_jfail(jc, "file_name", err, "empty");
    s->image_id = (int32_t)id;
    s->width = (int32_t)w;
    s->height = (int32_t)h;
    return 0;
}

static int flat_into(const rn_jctx *jc, const rn_jnode *v, const char *key, double *out, size_t n, size_t *at,
                     int depth, rn_err *err)
{
    if (!rn_jis_array(v)) {
        if (*at >= n) return rn_jfail(jc, key, err, "more than %zu values", n);
        return rn_jnum(jc, v, key, &out[(*at)++], err);
    }
    if (depth > 2) return rn_jfail(jc, key, err, "nested too deeply");
    for (size_t i = 0; i < rn_jarray_size(v); i++)
        if (flat_into(jc, rn_jarray_get(v, i), key, out, n, at, depth + 1, err)) return -1;
    return 0;
}

int rn_jflat(const rn_jctx *jc, const rn_jnode *v, const char *key, double *out, size_t n, rn_err *err)
{
    size_t at = 0;
    if (!v) return -1; /* rn_jget already said "missing" */
    if (!rn_jis_array(v)) return rn_jfail(jc, key, err, "not an array");
    if (flat_into(jc, v, key, out, n, &at, 0, err)) return -1;
    if (at != n) return rn_jfail(jc, key, err, "has %zu values, expected %zu", at, n);
    return 0;
}

int rn_read_fc(const rn_jctx *jc, const char *key, const double f[2], const double c[2], rn_sample *s, rn_err *err)
{
    if (!(f[0] > 0 && f[1] > 0)) return rn_jfail(jc, key, err, "focal length must be > 0 (%g, %g)", f[0], f[1]);
    s->f[0] = (float)f[0];
    s->f[1] = (float)f[1];
    s->c[0] = (float)c[0];
    s->c[1] = (float)c[1];
    return 0;
}

void rn_read_path(rn_dsbuild *b, rn_sample *s, const char *prefix, const char *file)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "%s/%s", prefix, file);
    s->path_off = rn_dsbuild_str(b, buf);
}
