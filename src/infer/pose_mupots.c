/* PoseNet's MuPoTS-3D test after the network (infer/pose_mupots.h). */
#include "infer/pose_mupots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/descriptor.h"
#include "eval/mupots_gt.h"
#include "eval/results.h"
#include "io/file.h"

enum { ROOT = 14 };
static const double BOX_TOL_PX = 1e-3;

struct rn_pose_mupots {
    rn_mupots_gt gt;
    char gt_path[4096], roots[4096];
    size_t n;
    double *root_z;         /* (n) each record's root depth, mm */
    double (*fc)[4];        /* (n) its image's fx, fy, cx, cy */
    int32_t *seq, *frame;   /* (n) its image */
    size_t *order;          /* (n) records in output order */
};

void rn_pose_mupots_free(rn_pose_mupots *pm)
{
    if (!pm) return;
    rn_mupots_gt_free(&pm->gt);
    free(pm->root_z), free(pm->fc), free(pm->seq), free(pm->frame), free(pm->order);
    free(pm);
}

const char *rn_pose_mupots_roots(const rn_pose_mupots *pm)
{
    return pm->roots;
}

/* Each record's image in the ground truth: sequence, frame, intrinsics. */
static int record_images(rn_pose_mupots *pm, const rn_dataset *ds, rn_err *err)
{
    for (size_t i = 0; i < pm->n; i++) {
        const rn_sample *s = &ds->samples[i];
        if (!rn_mupots_gt_image(&pm->gt, s->image_id, &pm->seq[i], &pm->frame[i], pm->fc[i]))
            return rn_err_set(err, "%s: the test set's record %zu is of image_id %d, which it does not list (--gt is "
                                   "another set's annotations?)", pm->gt_path, i, (int)s->image_id);
    }
    return 0;
}

/* Whether ground-truth annotation a is record s (GT boxes: the valid annotations in file order). */
static int is_record(const rn_mupots_gt *g, size_t a, const rn_sample *s)
{
    double z = g->kpt3d[a * 3 * RN_MUPOTS_J + 3 * ROOT + 2];
    return g->valid[a] && g->image_id[a] == s->image_id && (s->ann_id < 0 || g->ann_id[a] == s->ann_id) &&
           fabs(z - s->root_cam[2]) <= 1e-6 * fabs(z) + 1e-6;
}

/* GT boxes without bbox_root: each record's ground-truth root depth in float64, as their use_gt_info. */
static int gt_roots(rn_pose_mupots *pm, const rn_dataset *ds, rn_err *err)
{
    size_t a = 0;
    for (size_t i = 0; i < pm->n; i++) {
        while (a < pm->gt.n && !is_record(&pm->gt, a, &ds->samples[i])) a++;
        if (a == pm->gt.n)
            return rn_err_set(err, "%s: no annotation is the test set's record %zu (image_id %d, ann_id %d): --gt is "
                                   "not the annotations the set was read from", pm->gt_path, i,
                              (int)ds->samples[i].image_id, (int)ds->samples[i].ann_id);
        pm->root_z[i] = pm->gt.kpt3d[a * 3 * RN_MUPOTS_J + 3 * ROOT + 2];
        pm->order[i] = i;
        a++;
    }
    snprintf(pm->roots, sizeof pm->roots, "ground truth");
    return 0;
}

static int box_match(const double *a, const double *b)
{
    for (int k = 0; k < 4; k++)
        if (!(fabs(a[k] - b[k]) <= BOX_TOL_PX + 1e-9 * fabs(b[k]))) return 0;
    return 1;
}

typedef struct entry_ix {
    int64_t image_id;
    size_t at; /* the entry's index in the file */
} entry_ix;

static int entry_cmp(const void *a, const void *b)
{
    const entry_ix *x = a, *y = b;
    if (x->image_id != y->image_id) return x->image_id < y->image_id ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The bbox_root file's entries, checked and indexed. */
typedef struct root_file {
    const char *path;
    rn_root_pred *p;
    size_t n;
    entry_ix *ix;           /* (n) sorted by image_id, then file order */
    uint8_t *used;          /* (n) */
    size_t *rank;           /* (records) each record's entry */
} root_file;

static int root_file_open(root_file *f, const rn_pose_mupots *pm, const char *path, rn_err *err)
{
    if (rn_eval_results_read(&f->p, &f->n, path, RN_EVAL_MUPOTS, err)) return -1;
    f->path = path;
    f->ix = rn_xmalloc((f->n ? f->n : 1) * sizeof *f->ix);
    f->used = rn_xcalloc(f->n ? f->n : 1, 1);
    f->rank = rn_xmalloc((pm->n ? pm->n : 1) * sizeof *f->rank);
    for (size_t k = 0; k < f->n; k++) {
        int32_t s, fr;
        if (!rn_mupots_gt_image(&pm->gt, f->p[k].image_id, &s, &fr, NULL))
            return rn_err_set(err, "%s: record %zu: image_id %lld is not an image of %s (RootNet's result on another "
                                   "set?)", path, k, (long long)f->p[k].image_id, pm->gt_path);
        f->ix[k] = (entry_ix){f->p[k].image_id, k};
    }
    qsort(f->ix, f->n, sizeof *f->ix, entry_cmp);
    return 0;
}

static void root_file_close(root_file *f)
{
    free(f->p), free(f->ix), free(f->used), free(f->rank);
}

/* The first unused entry of s's image and box, or -1. */
static long find_entry(const root_file *f, const rn_sample *s)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->ix[mid].image_id < s->image_id) lo = mid + 1;
        else hi = mid;
    }
    double box[4];
    rn_sample_box(s, box);
    for (size_t e = lo; e < f->n && f->ix[e].image_id == s->image_id; e++)
        if (!f->used[f->ix[e].at] && box_match(f->p[f->ix[e].at].bbox, box)) return (long)f->ix[e].at;
    return -1;
}

static const char *boxes_name(const rn_test_opts *o)
{
    return o->use_det_bbox ? "detector boxes" : "GT boxes";
}

static int no_root(const root_file *f, const rn_dataset *ds, size_t i, const rn_test_opts *o, rn_err *err)
{
    double b[4];
    rn_sample_box(&ds->samples[i], b);
    return rn_err_set(err, "%s has no root for the test set's record %zu (image_id %d, box [%.2f, %.2f, %.2f, %.2f] of "
                           "the %s): it is RootNet's result on other boxes%s", f->path, i, (int)ds->samples[i].image_id,
                      b[0], b[1], b[2], b[3], boxes_name(o),
                      o->use_det_bbox ? " (on GT boxes? leave out --det-bbox)"
                                      : " (on detector boxes? add --det-bbox)");
}

/* Records in the order of their entries in the file (their MuPoTS.py lists the file's entries). */
static void order_by_rank(rn_pose_mupots *pm, const size_t *rank)
{
    size_t n = pm->n, *tmp = rn_xmalloc((n ? n : 1) * sizeof *tmp);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) nk = rank[i] + 1 > nk ? rank[i] + 1 : nk;
    size_t *rec_of = rn_xmalloc((nk ? nk : 1) * sizeof *rec_of);
    for (size_t k = 0; k < nk; k++) rec_of[k] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) rec_of[rank[i]] = i;
    size_t q = 0;
    for (size_t k = 0; k < nk; k++)
        if (rec_of[k] != SIZE_MAX) tmp[q++] = rec_of[k];
    memcpy(pm->order, tmp, n * sizeof *tmp);
    free(tmp), free(rec_of);
}

/* --bbox-root: each record's root depth from its entry (image_id and box); every entry used unless limited. */
static int file_roots(rn_pose_mupots *pm, const rn_dataset *ds, const rn_test_opts *o, const char *path, rn_err *err)
{
    root_file f = {0};
    int rc = root_file_open(&f, pm, path, err);
    for (size_t i = 0; !rc && i < pm->n; i++) {
        long e = find_entry(&f, &ds->samples[i]);
        if (e < 0) {
            rc = no_root(&f, ds, i, o, err);
            break;
        }
        f.used[e] = 1;
        f.rank[i] = (size_t)e;
        pm->root_z[i] = f.p[e].root_cam[2];
    }
    for (size_t k = 0; !rc && !o->limit && k < f.n; k++)
        if (!f.used[k])
            rc = rn_err_set(err, "%s: record %zu (image_id %lld, box [%.2f, %.2f, %.2f, %.2f]) is none of the test "
                                 "set's %s: it is RootNet's result on other boxes", path, k,
                            (long long)f.p[k].image_id, f.p[k].bbox[0], f.p[k].bbox[1], f.p[k].bbox[2],
                            f.p[k].bbox[3], boxes_name(o));
    if (!rc) order_by_rank(pm, f.rank);
    root_file_close(&f);
    snprintf(pm->roots, sizeof pm->roots, "%s", path);
    return rc;
}

int rn_pose_mupots_prepare(rn_pose_mupots **out, const rn_dataset *ds, const rn_test_opts *o, const char *bbox_root,
                           rn_err *err)
{
    *out = NULL;
    if (!bbox_root && o->use_det_bbox)
        return rn_err_set(err, "detector boxes have no roots: give --bbox-root FILE, RootNet's result on them (rootnet "
                               "test --det-bbox with a RootNet writes bbox_root_mupots_output.json)");
    rn_pose_mupots *pm = rn_xcalloc(1, sizeof *pm);
    const rn_set_desc *set = rn_set_find("MuPoTS");
    if (o->gt_path) snprintf(pm->gt_path, sizeof pm->gt_path, "%s", o->gt_path);
    else snprintf(pm->gt_path, sizeof pm->gt_path, "%s/%s", o->data_dir, set->test);
    size_t n = pm->n = ds->n, m = n ? n : 1;
    pm->root_z = rn_xmalloc(m * sizeof *pm->root_z);
    pm->fc = rn_xmalloc(m * sizeof *pm->fc);
    pm->seq = rn_xmalloc(m * sizeof *pm->seq);
    pm->frame = rn_xmalloc(m * sizeof *pm->frame);
    pm->order = rn_xmalloc(m * sizeof *pm->order);
    int rc = rn_mupots_gt_read(&pm->gt, pm->gt_path, err) || record_images(pm, ds, err) ||
             (bbox_root ? file_roots(pm, ds, o, bbox_root, err) : gt_roots(pm, ds, err));
    if (rc) {
        rn_pose_mupots_free(pm);
        return -1;
    }
    *out = pm;
    return 0;
}

/* ---- scoring ---------------------------------------------------------------------------------------- */

typedef struct preds {
    int32_t *seq, *frame;   /* (n) in output order */
    double *kpt2d, *kpt3d;  /* (n, 17, 2), (n, 17, 3) */
    char (*key)[32];        /* (n) TS<seq>_img_<frame> */
} preds;

/* Record i's rows -> their evaluate's pred_2d_kpt (x, y) and pixel2cam's pred_3d_kpt at output place q. */
static void person(preds *p, size_t q, const rn_pose_mupots *pm, const rn_dataset *ds, size_t i,
                   const rn_pose_mupots_rows *r)
{
    double o17[3 * RN_MUPOTS_J], img[3 * RN_MUPOTS_J];
    const double *row = r->out + i * 3 * (size_t)r->J;
    for (int j = 0; j < RN_MUPOTS_J; j++)
        for (int k = 0; k < 3; k++) o17[3 * j + k] = row[3 * r->joint[j] + k];
    rn_pose_cam_in in = {.root_z = pm->root_z[i], .f = {pm->fc[i][0], pm->fc[i][1]}, .c = {pm->fc[i][2], pm->fc[i][3]},
                         .out_w = r->out_w, .out_h = r->out_h, .depth_dim = r->depth_dim,
                         .bbox_3d = RN_POSE_DEPTH_RANGE};
    rn_sample_box(&ds->samples[i], in.bbox);
    rn_pose_output_to_cam(img, p->kpt3d + q * 3 * RN_MUPOTS_J, o17, RN_MUPOTS_J, &in);
    for (int j = 0; j < RN_MUPOTS_J; j++)
        for (int k = 0; k < 2; k++) p->kpt2d[q * 2 * RN_MUPOTS_J + 2 * j + k] = img[3 * j + k];
    p->seq[q] = pm->seq[i], p->frame[q] = pm->frame[i];
}

static void preds_free(preds *p)
{
    free(p->seq), free(p->frame), free(p->kpt2d), free(p->kpt3d), free(p->key);
}

static int write_mats(rn_pose_mupots_scores *s, const preds *p, size_t n, const char *dir, rn_err *err)
{
    s->mat_2d[0] = s->mat_3d[0] = '\0';
    if (!rn_pose_mat_available()) return 0;
    if (rn_mkdirs(dir, err)) return -1;
    const char **keys = rn_xmalloc((n ? n : 1) * sizeof *keys);
    for (size_t q = 0; q < n; q++) keys[q] = p->key[q];
    char a[4096], b[4096];
    int la = snprintf(a, sizeof a, "%s/preds_2d_kpt_mupots.mat", dir);
    int lb = snprintf(b, sizeof b, "%s/preds_3d_kpt_mupots.mat", dir);
    int rc = la < 0 || lb < 0 || (size_t)la >= sizeof a || (size_t)lb >= sizeof b
                 ? rn_err_set(err, "%s: result folder path too long", dir)
             : rn_pose_mat_write(a, keys, p->kpt2d, n, RN_MUPOTS_J, 2, err) ||
                     rn_pose_mat_write(b, keys, p->kpt3d, n, RN_MUPOTS_J, 3, err)
                 ? -1
                 : 0;
    free(keys);
    if (!rc) memcpy(s->mat_2d, a, sizeof a), memcpy(s->mat_3d, b, sizeof b);
    return rc;
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The number of distinct images (.mat variables) among the predictions. */
static size_t count_images(const preds *p, size_t n)
{
    int64_t *k = rn_xmalloc((n ? n : 1) * sizeof *k);
    for (size_t q = 0; q < n; q++) k[q] = (int64_t)p->seq[q] << 32 | (uint32_t)p->frame[q];
    qsort(k, n, sizeof *k, i64_cmp);
    size_t c = 0;
    for (size_t q = 0; q < n; q++) c += !q || k[q] != k[q - 1];
    free(k);
    return c;
}

static int evaluate(rn_pose_mupots_scores *s, const rn_pose_mupots *pm, const preds *p, size_t n, rn_err *err)
{
    rn_pose_people gt = rn_mupots_gt_people(&pm->gt);
    rn_pose_people pr = {.n = n, .seq = p->seq, .frame = p->frame, .kpt2d = p->kpt2d, .kpt3d = p->kpt3d};
    if (rn_pose_mupots_eval(&s->rel, &gt, &pr, 1, 0, err) ||
        rn_pose_mupots_eval(&s->rel_matched, &gt, &pr, 1, 1, err) ||
        rn_pose_mupots_eval(&s->abs, &gt, &pr, 0, 0, err) || rn_pose_mupots_eval(&s->abs_matched, &gt, &pr, 0, 1, err))
        return -1;
    for (int q = 0; q < RN_MUPOTS_SEQS; q++)
        s->annotated += s->rel.seq[q].annotated, s->undetected += s->rel.seq[q].undetected;
    return 0;
}

int rn_pose_mupots_score(rn_pose_mupots_scores *s, const rn_pose_mupots *pm, const rn_dataset *ds,
                         const rn_pose_mupots_rows *rows, const char *result_dir, rn_err *err)
{
    memset(s, 0, sizeof *s);
    size_t n = pm->n, m = n ? n : 1;
    preds p = {rn_xmalloc(m * sizeof *p.seq), rn_xmalloc(m * sizeof *p.frame),
               rn_xmalloc(m * 2 * RN_MUPOTS_J * sizeof *p.kpt2d), rn_xmalloc(m * 3 * RN_MUPOTS_J * sizeof *p.kpt3d),
               rn_xmalloc(m * sizeof *p.key)};
    int rc = 0;
    for (size_t q = 0; q < n && !rc; q++) {
        person(&p, q, pm, ds, pm->order[q], rows);
        rc = rn_pose_mupots_key(p.key[q], sizeof p.key[q], p.seq[q], p.frame[q], err);
    }
    if (!rc) rc = evaluate(s, pm, &p, n, err);
    s->images = rc ? 0 : count_images(&p, n);
    if (!rc) rc = write_mats(s, &p, n, result_dir, err);
    preds_free(&p);
    return rc ? -1 : 0;
}
