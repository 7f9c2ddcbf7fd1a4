/* MuPoTS-3D's ground-truth people from MuPoTS-3D.json (eval/mupots_gt.h). */
#include "eval/mupots_gt.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct img_row {
    int64_t id;
    int32_t seq, frame;
    double fc[4];
} img_row;

typedef struct gt_ctx {
    const char *path, *what;
    size_t i;
    rn_err *err;
} gt_ctx;

static int fail(const gt_ctx *c, const char *field, const char *problem)
{
    return rn_err_set(c->err, "%s: %s %zu: field '%s': %s", c->path, c->what, c->i, field, problem);
}

static int get_int(int64_t *out, const json_t *o, const char *name, const gt_ctx *c)
{
    const json_t *v = json_object_get(o, name);
    if (!v) return fail(c, name, "missing");
    if (!json_is_integer(v)) return fail(c, name, "not an integer");
    *out = json_integer_value(v);
    return 0;
}

/* o[name]: exactly RN_MUPOTS_J rows of D finite numbers into out (17, D). */
/* o[name]: n finite numbers into out. */
static int get_vec(double *out, const json_t *o, const char *name, size_t n, const gt_ctx *c)
{
    char msg[64];
    const json_t *a = json_object_get(o, name);
    snprintf(msg, sizeof msg, "not an array of %zu numbers", n);
    if (!a) return fail(c, name, "missing");
    if (!json_is_array(a) || json_array_size(a) != n) return fail(c, name, msg);
    for (size_t k = 0; k < n; k++) {
        if (!json_is_number(json_array_get(a, k))) return fail(c, name, msg);
        out[k] = json_number_value(json_array_get(a, k));
        if (!isfinite(out[k])) return fail(c, name, "not finite");
    }
    return 0;
}

static int get_rows(double *out, const json_t *o, const char *name, int D, const gt_ctx *c)
{
    char msg[96];
    const json_t *a = json_object_get(o, name);
    snprintf(msg, sizeof msg, "not an array of %d joints of %d numbers", RN_MUPOTS_J, D);
    if (!a) return fail(c, name, "missing");
    if (!json_is_array(a) || json_array_size(a) != RN_MUPOTS_J) return fail(c, name, msg);
    for (size_t j = 0; j < RN_MUPOTS_J; j++) {
        const json_t *r = json_array_get(a, j);
        if (!json_is_array(r) || json_array_size(r) != (size_t)D) return fail(c, name, msg);
        for (int k = 0; k < D; k++) {
            const json_t *v = json_array_get(r, (size_t)k);
            if (!json_is_number(v)) return fail(c, name, msg);
            out[j * (size_t)D + (size_t)k] = json_number_value(v);
            if (!isfinite(out[j * (size_t)D + (size_t)k])) return fail(c, name, "not finite");
        }
    }
    return 0;
}

/* s[0..n) all decimal digits (1..8 of them) into *v; 1, or 0. */
static int parse_digits(const char *s, size_t n, int *v)
{
    if (n < 1 || n > 8) return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        *v = 10 * *v + (s[i] - '0');
    }
    return 1;
}

int rn_mupots_parse_image_path(const char *path, int32_t *seq, int32_t *frame)
{
    const char *base = strrchr(path, '/');
    if (!base || base == path) return 0;
    const char *dir = base;
    while (dir > path && dir[-1] != '/') dir--;
    base++;
    size_t nd = strcspn(base, ".");
    int s, f;
    if (strncmp(dir, "TS", 2) || !parse_digits(dir + 2, (size_t)(base - 1 - dir - 2), &s)) return 0;
    if (strncmp(base, "img_", 4) || nd < 4 || !parse_digits(base + 4, nd - 4, &f)) return 0;
    if (s < 1 || s > RN_MUPOTS_SEQS) return 0;
    *seq = s, *frame = f;
    return 1;
}

static int img_cmp(const void *a, const void *b)
{
    const img_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int read_images(rn_mupots_gt *g, const json_t *images, const char *path, rn_err *err)
{
    if (!json_is_array(images)) return rn_err_set(err, "%s: no 'images' array", path);
    size_t n = json_array_size(images);
    img_row *r = rn_xmalloc((n ? n : 1) * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        gt_ctx c = {path, "image", i, err};
        const json_t *o = json_array_get(images, i);
        const json_t *fn = json_is_object(o) ? json_object_get(o, "file_name") : NULL;
        int bad = !json_is_object(o) ? rn_err_set(err, "%s: image %zu: not a JSON object", path, i)
                  : get_int(&r[i].id, o, "id", &c) || get_vec(r[i].fc, o, "intrinsic", 4, &c) ? -1
                  : !json_is_string(fn)            ? fail(&c, "file_name", "missing or not a string")
                  : !rn_mupots_parse_image_path(json_string_value(fn), &r[i].seq, &r[i].frame)
                      ? fail(&c, "file_name", "not TS<1..20>/img_<frame>.jpg as MuPoTS-3D's images")
                      : 0;
        if (bad) {
            free(r);
            return -1;
        }
    }
    qsort(r, n, sizeof *r, img_cmp);
    for (size_t i = 1; i < n; i++)
        if (r[i].id == r[i - 1].id) {
            free(r);
            return rn_err_set(err, "%s: image id %lld is listed twice", path, (long long)r[i].id);
        }
    g->n_img = n;
    g->img_id = rn_xmalloc((n ? n : 1) * sizeof *g->img_id);
    g->img_seq = rn_xmalloc((n ? n : 1) * sizeof *g->img_seq);
    g->img_frame = rn_xmalloc((n ? n : 1) * sizeof *g->img_frame);
    g->img_fc = rn_xmalloc((n ? n : 1) * sizeof *g->img_fc);
    for (size_t i = 0; i < n; i++) {
        g->img_id[i] = r[i].id, g->img_seq[i] = r[i].seq, g->img_frame[i] = r[i].frame;
        memcpy(g->img_fc[i], r[i].fc, sizeof r[i].fc);
    }
    free(r);
    return 0;
}

int rn_mupots_gt_image(const rn_mupots_gt *g, int64_t image_id, int32_t *seq, int32_t *frame, double fc[4])
{
    size_t lo = 0, hi = g->n_img;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->img_id[mid] < image_id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == g->n_img || g->img_id[lo] != image_id) return 0;
    *seq = g->img_seq[lo], *frame = g->img_frame[lo];
    if (fc) memcpy(fc, g->img_fc[lo], sizeof g->img_fc[lo]);
    return 1;
}

static int read_ann(rn_mupots_gt *g, size_t i, const json_t *o, const gt_ctx *c)
{
    if (!json_is_object(o)) return rn_err_set(c->err, "%s: annotation %zu: not a JSON object", c->path, i);
    int64_t valid = 0;
    const json_t *id = json_object_get(o, "id");
    g->ann_id[i] = json_is_integer(id) ? json_integer_value(id) : -1;
    if (get_int(&g->image_id[i], o, "image_id", c) || get_int(&valid, o, "is_valid", c) ||
        get_rows(g->kpt2d + i * 2 * RN_MUPOTS_J, o, "keypoints_img", 2, c) ||
        get_rows(g->kpt3d + i * 3 * RN_MUPOTS_J, o, "keypoints_cam", 3, c))
        return -1;
    g->valid[i] = valid != 0;
    if (!rn_mupots_gt_image(g, g->image_id[i], &g->seq[i], &g->frame[i], NULL))
        return fail(c, "image_id", "not an image of the file's 'images'");
    return 0;
}

static int read_anns(rn_mupots_gt *g, const json_t *anns, const char *path, rn_err *err)
{
    if (!json_is_array(anns)) return rn_err_set(err, "%s: no 'annotations' array", path);
    size_t n = json_array_size(anns), m = n ? n : 1;
    g->n = n;
    g->image_id = rn_xmalloc(m * sizeof *g->image_id);
    g->ann_id = rn_xmalloc(m * sizeof *g->ann_id);
    g->seq = rn_xmalloc(m * sizeof *g->seq);
    g->frame = rn_xmalloc(m * sizeof *g->frame);
    g->kpt2d = rn_xmalloc(m * 2 * RN_MUPOTS_J * sizeof *g->kpt2d);
    g->kpt3d = rn_xmalloc(m * 3 * RN_MUPOTS_J * sizeof *g->kpt3d);
    g->valid = rn_xmalloc(m);
    for (size_t i = 0; i < n; i++) {
        gt_ctx c = {path, "annotation", i, err};
        if (read_ann(g, i, json_array_get(anns, i), &c)) return -1;
    }
    return 0;
}

int rn_mupots_gt_read(rn_mupots_gt *g, const char *path, rn_err *err)
{
    memset(g, 0, sizeof *g);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line < 0) return rn_err_set(err, "%s: %s", path, je.text);
        return rn_err_set(err, "%s: line %d column %d: malformed JSON: %s", path, je.line, je.column, je.text);
    }
    int rc = !json_is_object(root) ? rn_err_set(err, "%s: not a MuPoTS-3D.json (top level is not an object)", path)
             : read_images(g, json_object_get(root, "images"), path, err) ||
                     read_anns(g, json_object_get(root, "annotations"), path, err)
                 ? -1
                 : 0;
    json_decref(root);
    if (rc) rn_mupots_gt_free(g);
    return rc;
}

void rn_mupots_gt_free(rn_mupots_gt *g)
{
    free(g->image_id), free(g->ann_id), free(g->seq), free(g->frame), free(g->kpt2d), free(g->kpt3d), free(g->valid);
    free(g->img_id), free(g->img_seq), free(g->img_frame), free(g->img_fc);
    memset(g, 0, sizeof *g);
}

rn_pose_people rn_mupots_gt_people(const rn_mupots_gt *g)
{
    return (rn_pose_people){.n = g->n, .seq = g->seq, .frame = g->frame, .kpt2d = g->kpt2d, .kpt3d = g->kpt3d,
                            .valid = g->valid};
}
