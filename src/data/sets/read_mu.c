/* MuCo-3DHP (train) and MuPoTS-3D (test), as the authors' MuCo.py and MuPoTS.py. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/json/jsonf.h"
#include "data/sets/readers.h"

enum { MU_ROOT = 14, MUCO_JOINTS = 21, MUPOTS_JOINTS = 17 }; /* 'Pelvis' in the MuCo-3DHP / MuPoTS joint order */
static const double MUCO_MIN_DEPTH = 1500, MUCO_MAX_DEPTH = 7500, MUCO_MIN_SEP = 500;

/* Root row of an annotation: cam (X, Y, Z), img (x, y), vis. */
typedef struct mu_root {
    double cam[3], img[2], vis;
} mu_root;

static int mu_read_root(const rn_jctx *jc, const rn_jnode *ann, mu_root *r, rn_err *err)
{
    if (rn_jget_row(jc, ann, "keypoints_cam", MU_ROOT, MU_ROOT + 1, r->cam, 3, err) ||
        rn_jget_row(jc, ann, "keypoints_img", MU_ROOT, MU_ROOT + 1, r->img, 2, err) ||
        rn_jget_row(jc, ann, "keypoints_vis", MU_ROOT, MU_ROOT + 1, &r->vis, 1, err))
        return -1;
    return 0;
}

/* An annotation's J rows of key (keypoints_cam: 3 numbers, keypoints_img: 2); exactly J. */
static int mu_rows(const rn_jctx *jc, const rn_jnode *ann, const char *key, int J, int n, double *out, rn_err *err)
{
    const rn_jnode *v = rn_jget_array(jc, ann, key, err);
    if (!v) return -1;
    if (rn_jarray_size(v) != (size_t)J)
        return rn_jfail(jc, key, err, "has %zu joints, expected %d", rn_jarray_size(v), J);
    for (int j = 0; j < J; j++)
        if (rn_jget_row(jc, ann, key, (size_t)j, (size_t)J, out + n * j, (size_t)n, err)) return -1;
    return 0;
}

/* PoseNet's joints as their MuCo.py / MuPoTS.py (GT): joint_img = keypoints_img and the depth
 * minus the root's, joint_cam = keypoints_cam, vis 1; float64, rounded once. */
static int mu_joints(float *out, const rn_jnode *ann, int J, const rn_jctx *jc, rn_err *err)
{
    double cam[MUCO_JOINTS * 3], img[MUCO_JOINTS * 2];
    if (mu_rows(jc, ann, "keypoints_cam", J, 3, cam, err) || mu_rows(jc, ann, "keypoints_img", J, 2, img, err))
        return -1;
    for (int j = 0; j < J; j++) {
        float *o = out + (size_t)j * RN_JOINT_F;
        o[RN_JOINT_IMG] = (float)img[2 * j];
        o[RN_JOINT_IMG + 1] = (float)img[2 * j + 1];
        o[RN_JOINT_IMG + 2] = (float)(cam[3 * j + 2] - cam[3 * MU_ROOT + 2]);
        for (int i = 0; i < 3; i++) o[RN_JOINT_CAM + i] = (float)cam[3 * j + i];
        o[RN_JOINT_VIS] = 1.0f;
    }
    return rn_read_joints_finite(out, J, jc, err);
}

static long opt_id(const rn_jnode *ann)
{
    const rn_jnode *v = rn_jobject_get(ann, "id");
    return rn_jis_integer(v) ? (long)rn_jint(v) : -1;
}

/* Fills root fields and the box; 0 kept, 1 dropped, -1 error. */
static int mu_emit(rn_sample *s, const mu_root *r, const rn_jnode *ann, const rn_read_ctx *ctx, const rn_jctx *jc,
                   rn_err *err)
{
    for (int i = 0; i < 3; i++) s->root_cam[i] = (float)r->cam[i];
    s->root_img[0] = (float)r->img[0];
    s->root_img[1] = (float)r->img[1];
    s->root_img[2] = (float)r->cam[2];
    s->root_vis = (float)r->vis;
    s->ann_id = (int32_t)opt_id(ann);
    double box[4];
    int integral;
    if (rn_jget_vec(jc, ann, "bbox", box, 4, &integral, err)) return -1;
    int k = rn_read_box(s, box, integral, box[2] * box[3], ctx, jc, err);
    return k ? k : rn_read_finite(s, jc, err);
}

/* The authors' rule: keep the closest person, and every other person whose
 * root is at least 500 mm (2D and 3D) from every other person's root. */
static size_t muco_pick(const mu_root *r, size_t n, size_t *pick)
{
    size_t closest = 0, np = 0;
    for (size_t i = 1; i < n; i++)
        if (r[i].cam[2] < r[closest].cam[2]) closest = i;
    pick[np++] = closest;
    for (size_t i = 0; i < n; i++) {
        if (i == closest) continue;
        int picked = 1;
        for (size_t j = 0; j < n && picked; j++) {
            if (i == j) continue;
            double dx = r[i].cam[0] - r[j].cam[0], dy = r[i].cam[1] - r[j].cam[1], dz = r[i].cam[2] - r[j].cam[2];
            double d2 = sqrt(dx * dx + dy * dy), d3 = sqrt(dx * dx + dy * dy + dz * dz);
            if (d2 < MUCO_MIN_SEP || d3 < MUCO_MIN_SEP) picked = 0;
        }
        if (picked) pick[np++] = i;
    }
    return np;
}

/* Annotation indices grouped by image (order kept): first[i] .. first[i+1]. */
typedef struct ann_groups {
    size_t *first, *idx;
} ann_groups;

static int group_anns(ann_groups *g, const rn_jnode *anns, const rn_idmap *map, size_t n_img, const rn_jctx *jc0,
                      rn_err *err)
{
    size_t na = rn_jarray_size(anns);
    size_t *img_of = rn_xmalloc((na + 1) * sizeof *img_of);
    g->first = rn_xcalloc(n_img + 2, sizeof *g->first);
    g->idx = rn_xmalloc((na + 1) * sizeof *g->idx);
    rn_jctx jc = *jc0;
    jc.what = "annotation";
    for (size_t a = 0; a < na; a++) {
        long iid;
        jc.rec = (long)a;
        jc.ann_id = opt_id(rn_jarray_get(anns, a));
        if (rn_jget_int(&jc, rn_jarray_get(anns, a), "image_id", &iid, err)) {
            free(img_of);
            return -1;
        }
        if (!rn_idmap_get(map, iid, &img_of[a])) img_of[a] = SIZE_MAX; /* never visited, as pycocotools */
        else g->first[img_of[a] + 2]++;
    }
    for (size_t i = 2; i < n_img + 2; i++) g->first[i] += g->first[i - 1];
    for (size_t a = 0; a < na; a++)
        if (img_of[a] != SIZE_MAX) g->idx[g->first[img_of[a] + 1]++] = a;
    free(img_of);
    return 0;
}

static int muco_image(rn_dsbuild *b, const rn_jnode *img, const rn_jnode *anns, const size_t *idx, size_t n,
                      const rn_read_ctx *ctx, rn_jctx *jc, rn_err *err)
{
    rn_sample base;
    const char *file;
    double f[2], c[2];
    memset(&base, 0, sizeof base);
    if (rn_read_image_basics(jc, img, &base, &file, err) || rn_jget_vec(jc, img, "f", f, 2, NULL, err) ||
        rn_jget_vec(jc, img, "c", c, 2, NULL, err) || rn_read_fc(jc, "f", f, c, &base, err))
        return -1;
    if (n == 0) return 0;
    mu_root *r = rn_xmalloc(n * sizeof *r);
    size_t *pick = rn_xmalloc(n * sizeof *pick);
    int rc = 0;
    jc->what = "annotation";
    for (size_t i = 0; i < n && !rc; i++) {
        jc->rec = (long)idx[i];
        jc->ann_id = opt_id(rn_jarray_get(anns, idx[i]));
        rc = mu_read_root(jc, rn_jarray_get(anns, idx[i]), &r[i], err);
    }
    size_t np = rc ? 0 : muco_pick(r, n, pick);
    for (size_t p = 0; p < np && !rc; p++) {
        const mu_root *q = &r[pick[p]];
        if (q->cam[2] < MUCO_MIN_DEPTH || q->cam[2] > MUCO_MAX_DEPTH) continue;
        rn_sample *s = rn_dsbuild_push(b);
        s->image_id = base.image_id;
        s->width = base.width;
        s->height = base.height;
        memcpy(s->f, base.f, sizeof base.f);
        memcpy(s->c, base.c, sizeof base.c);
        jc->rec = (long)idx[pick[p]];
        jc->ann_id = opt_id(rn_jarray_get(anns, idx[pick[p]]));
        int k = mu_emit(s, q, rn_jarray_get(anns, idx[pick[p]]), ctx, jc, err);
        if (!k) k = mu_joints(rn_dsbuild_joints(b), rn_jarray_get(anns, idx[pick[p]]), MUCO_JOINTS, jc, err);
        if (k) b->n--;
        if (k < 0) rc = -1;
        else if (k == 0) rn_read_path(b, s, "MuCo/data", file);
    }
    free(r);
    free(pick);
    return rc;
}

int rn_read_muco(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    b->J = MUCO_JOINTS;
    b->skeleton = "MuCo";
    rn_read_file f;
    if (rn_read_file_open(&f, ctx, ctx->set->train, 1, err)) return -1;
    ann_groups g = {0};
    rn_jctx jc = rn_read_rec(&f, NULL, -1);
    int rc = group_anns(&g, f.anns, &f.map, rn_jarray_size(f.images), &jc, err);
    for (size_t i = 0; !rc && i < rn_jarray_size(f.images); i++) {
        rn_jctx ic = rn_read_rec(&f, "image", (long)i);
        const rn_jnode *img = rn_jarray_get(f.images, i);
        long iid;
        if (!rn_jget_int(&ic, img, "id", &iid, err)) ic.image_id = iid;
        rc = muco_image(b, img, f.anns, g.idx + g.first[i], g.first[i + 1] - g.first[i], ctx, &ic, err);
    }
    free(g.first);
    free(g.idx);
    rn_read_file_close(&f);
    return rc;
}

/* MuPoTS sequence number from "TS<n>/..." file names, else -1. */
static int32_t mupots_seq(const char *file)
{
    int seq;
    return sscanf(file, "TS%d", &seq) == 1 ? seq : -1;
}

static int mupots_image(const rn_jnode *images, const rn_idmap *map, long iid, const rn_jnode **img, rn_sample *s,
                        const char **file, const rn_jctx *jc, rn_err *err)
{
    size_t at;
    double in[4];
    if (!rn_idmap_get(map, iid, &at)) return rn_jfail(jc, "image_id", err, "image %ld is not in 'images'", iid);
    *img = rn_jarray_get(images, at);
    rn_jctx ic = *jc;
    ic.what = "image";
    ic.rec = (long)at;
    ic.ann_id = -1;
    if (rn_read_image_basics(&ic, *img, s, file, err) || rn_jget_vec(&ic, *img, "intrinsic", in, 4, NULL, err))
        return -1;
    s->subject = mupots_seq(*file);
    return rn_read_fc(&ic, "intrinsic", in, in + 2, s, err);
}

static int mupots_gt_ann(rn_dsbuild *b, const rn_jnode *images, const rn_idmap *map, const rn_jnode *ann,
                         const rn_read_ctx *ctx, rn_jctx *jc, rn_err *err)
{
    long valid, iid;
    jc->ann_id = opt_id(ann);
    if (rn_jget_int(jc, ann, "is_valid", &valid, err) || rn_jget_int(jc, ann, "image_id", &iid, err)) return -1;
    if (valid == 0) return 0;
    jc->image_id = iid;
    rn_sample *s = rn_dsbuild_push(b);
    const rn_jnode *img;
    const char *file;
    mu_root r;
    int k = mupots_image(images, map, iid, &img, s, &file, jc, err);
    if (!k) k = mu_read_root(jc, ann, &r, err);
    if (!k) k = mu_emit(s, &r, ann, ctx, jc, err);
    if (!k) k = mu_joints(rn_dsbuild_joints(b), ann, MUPOTS_JOINTS, jc, err);
    if (k) b->n--;
    else rn_read_path(b, s, "MuPoTS/data/MultiPersonTestSet", file);
    return k < 0 ? -1 : 0;
}

static int mupots_det(rn_dsbuild *b, const rn_jnode *images, const rn_idmap *map, const rn_jnode *det, size_t i,
                      const rn_read_ctx *ctx, const char *det_path, rn_err *err)
{
    rn_jctx jc = {.file = det_path, .what = "record", .rec = (long)i, .image_id = -1, .ann_id = -1};
    long iid;
    double box[4], score;
    if (rn_jget_int(&jc, det, "image_id", &iid, err)) return -1;
    jc.image_id = iid;
    const rn_jnode *bv = rn_jget(&jc, det, "bbox", err);
    if (!bv || rn_jflat(&jc, bv, "bbox", box, 4, err) || rn_jget_num(&jc, det, "score", &score, err)) return -1;
    rn_sample *s = rn_dsbuild_push(b);
    const rn_jnode *img;
    const char *file;
    int integral = 1;
    for (size_t k = 0; k < rn_jarray_size(bv); k++) integral &= rn_jis_integer(rn_jarray_get(bv, k));
    int k = mupots_image(images, map, iid, &img, s, &file, &jc, err);
    if (!k) k = rn_read_box(s, box, integral && rn_jarray_size(bv) == 4, box[2] * box[3], ctx, &jc, err);
    if (!k) {
        for (int d = 0; d < 3; d++) s->root_img[d] = s->root_cam[d] = 1.0f; /* the authors' dummies */
        s->score = (float)score;
        k = rn_read_finite(s, &jc, err);
    }
    if (k) {
        b->n--;
        return k < 0 ? -1 : 0;
    }
    rn_read_path(b, s, "MuPoTS/data/MultiPersonTestSet", file);
    return 0;
}

static int mupots_det_all(rn_dsbuild *b, const rn_jnode *images, const rn_idmap *map, const rn_read_ctx *ctx,
                          rn_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ctx->data_dir, ctx->set->det);
    rn_jdoc *det_doc = rn_read_json(ctx, path, err);
    if (!det_doc) return -1;
    const rn_jnode *det = det_doc->root;
    int rc = rn_jis_array(det) ? 0 : rn_err_set(err, "%s: top level is not an array", path);
    for (size_t i = 0; !rc && i < rn_jarray_size(det); i++)
        rc = mupots_det(b, images, map, rn_jarray_get(det, i), i, ctx, path, err);
    rn_jdoc_free(det_doc);
    return rc;
}

/* Detector boxes' records keep zero joints with vis 0: their reader's dummies with bbox_root boxes. */
int rn_read_mupots(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    b->J = MUPOTS_JOINTS;
    b->skeleton = "MuPoTS";
    rn_read_file f;
    int det = ctx->opts->use_det_bbox;
    if (rn_read_file_open(&f, ctx, ctx->set->test, !det, err)) return -1;
    int rc = det ? mupots_det_all(b, f.images, &f.map, ctx, err) : 0;
    for (size_t a = 0; !rc && f.anns && a < rn_jarray_size(f.anns); a++) {
        rn_jctx ac = rn_read_rec(&f, "annotation", (long)a);
        rc = mupots_gt_ann(b, f.images, &f.map, rn_jarray_get(f.anns, a), ctx, &ac, err);
    }
    rn_read_file_close(&f);
    return rc;
}
