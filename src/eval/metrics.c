#include "eval/metrics.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/descriptor.h"

const char *const rn_h36m_action_names[RN_H36M_ACTIONS] = {
    "Directions", "Discussion", "Eating",      "Greeting", "Phoning",
    "Posing",     "Purchases",  "Sitting",     "SittingDown", "Smoking",
    "Photo",      "Waiting",    "Walking",     "WalkDog",  "WalkTogether",
};

int rn_eval_kind_parse(rn_eval_kind *kind, const char *name, rn_err *err)
{
    const rn_set_desc *d = rn_set_find_test(name);
    char names[128];
    if (d && d->eval >= 0) {
        *kind = (rn_eval_kind)d->eval;
        return 0;
    }
    return rn_err_set(err, "unknown evaluation dataset '%s' (expected %s)", name,
                      rn_set_names(names, sizeof names, RN_SET_TEST, " or "));
}

const char *rn_eval_kind_name(rn_eval_kind kind)
{
    for (int i = 0; i < rn_set_count(); i++)
        if (rn_set_at(i)->eval == (int)kind) return rn_set_at(i)->name;
    RN_ASSERT(0 && "an rn_eval_kind without a set");
    return NULL;
}

void rn_eval_output_to_image(double img[3], const float out[3], const float bbox[4], int out_w, int out_h)
{
    RN_ASSERT(out_w > 0 && out_h > 0);
    img[0] = (double)out[0] / out_w * bbox[2] + bbox[0];
    img[1] = (double)out[1] / out_h * bbox[3] + bbox[1];
    img[2] = out[2];
}

void rn_eval_image_to_cam(double cam[3], const double img[3], const double f[2], const double c[2])
{
    cam[0] = (img[0] - c[0]) / f[0] * img[2];
    cam[1] = (img[1] - c[1]) / f[1] * img[2];
    cam[2] = img[2];
}

void rn_eval_pred_from_sample(rn_root_pred *pred, const rn_sample *s, const double root_img[3])
{
    const double f[2] = {s->f[0], s->f[1]}, c[2] = {s->c[0], s->c[1]};
    memset(pred, 0, sizeof *pred);
    pred->image_id = s->image_id;
    pred->ann_id = s->ann_id;
    rn_sample_box(s, pred->bbox);
    rn_eval_image_to_cam(pred->root_cam, root_img, f, c);
    pred->score = s->score;
}

void rn_eval_gt_from_sample(rn_root_gt *gt, const rn_sample *s)
{
    memset(gt, 0, sizeof *gt);
    gt->image_id = s->image_id;
    gt->ann_id = s->ann_id;
    for (int k = 0; k < 3; k++) gt->root_cam[k] = s->root_cam[k];
    gt->is_valid = s->is_valid;
    gt->action = s->action;
}

/* Finite and within float range, so that distances (squares of differences)
 * cannot overflow a double. */
static int finite3(const double v[3])
{
    return fabs(v[0]) <= FLT_MAX && fabs(v[1]) <= FLT_MAX && fabs(v[2]) <= FLT_MAX;
}

static int check_preds(const rn_root_pred *pred, size_t n, int need_score, rn_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!finite3(pred[i].root_cam))
            return rn_err_set(err, "prediction %zu (image_id %lld): root_cam: not finite or beyond float range", i,
                              (long long)pred[i].image_id);
        if (need_score && !isfinite(pred[i].score))
            return rn_err_set(err, "prediction %zu (image_id %lld): score: not finite", i,
                              (long long)pred[i].image_id);
    }
    return 0;
}

static int check_gts(const rn_root_gt *gt, size_t n, rn_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (gt[i].is_valid && !finite3(gt[i].root_cam))
            return rn_err_set(err, "ground truth %zu (image_id %lld): root_cam: not finite or beyond float range", i,
                              (long long)gt[i].image_id);
    return 0;
}

/* ---- MuPoTS AP ---------------------------------------------------------- */

typedef struct keyed {
    double key;
    int64_t id;
    size_t idx;
} keyed;

/* Score descending, then input order: the order of Python's stable sort(reverse=True). */
static int cmp_score_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Image id ascending, then GT (annotation-file) order. */
static int cmp_image(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* First position in the image-sorted GT list with image id >= id. */
static size_t lower_bound(const keyed *g, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Nearest valid GT of one image (gts [lo, hi) of the sorted list), as the
 * authors: min_dist starts at 9999, strictly smaller wins. Returns its
 * position in the list, or hi when none; *has_valid tells if any is valid. */
static size_t nearest_gt(double *dist_out, int *has_valid, const double p[3], const keyed *g, size_t lo, size_t hi,
                         const rn_root_gt *gt)
{
    double best = 9999.0;
    size_t at = hi;
    *has_valid = 0;
    for (size_t j = lo; j < hi; j++) {
        const rn_root_gt *t = &gt[g[j].idx];
        if (!t->is_valid) continue;
        *has_valid = 1;
        double dx = p[0] - t->root_cam[0], dy = p[1] - t->root_cam[1], dz = p[2] - t->root_cam[2];
        double d = sqrt(dx * dx + dy * dy + dz * dz);
        if (best > d) {
            best = d;
            at = j;
        }
    }
    *dist_out = best;
    return at;
}

static size_t count_valid(const rn_root_gt *gt, size_t n)
{
    size_t v = 0;
    for (size_t i = 0; i < n; i++) v += gt[i].is_valid != 0;
    return v;
}

static keyed *sorted_preds(const rn_root_pred *pred, size_t n)
{
    keyed *o = rn_xmalloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++) o[i] = (keyed){pred[i].score, pred[i].image_id, i};
    qsort(o, n, sizeof *o, cmp_score_desc);
    return o;
}

static keyed *sorted_gts(const rn_root_gt *gt, size_t n)
{
    keyed *g = rn_xmalloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) g[i] = (keyed){0.0, gt[i].image_id, i};
    qsort(g, n, sizeof *g, cmp_image);
    return g;
}

/* Walks the sorted predictions, accumulating the authors' AP on the fly:
 * AP = sum over counted predictions after the first of p[n] * (r[n] - r[n-1]). */
static void accumulate_ap(rn_ap_result *res, const rn_root_pred *pred, const keyed *order, size_t n_pred,
                          const rn_root_gt *gt, const keyed *g, size_t n_gt, unsigned char *matched)
{
    double ap = 0.0, prev_recall = 0.0;
    size_t tp = 0, fp = 0;
    for (size_t k = 0; k < n_pred; k++) {
        const rn_root_pred *p = &pred[order[k].idx];
        size_t lo = lower_bound(g, n_gt, p->image_id), hi = lo;
        while (hi < n_gt && g[hi].id == p->image_id) hi++;
        int has_valid;
        double dist;
        size_t at = nearest_gt(&dist, &has_valid, p->root_cam, g, lo, hi, gt);
        if (!has_valid) {
            res->n_skipped++;
            continue;
        }
        int is_tp = at != hi && dist < res->thr && !matched[at];
        if (is_tp) matched[at] = 1;
        tp += is_tp;
        fp += !is_tp;
        double precision = (double)tp / (double)(tp + fp), recall = (double)tp / (double)res->n_gt;
        if (tp + fp > 1) ap += precision * (recall - prev_recall);
        prev_recall = recall;
    }
    res->ap = ap;
    res->n_tp = tp;
    res->n_fp = fp;
}

int rn_eval_mupots_ap(rn_ap_result *res, const rn_root_pred *pred, size_t n_pred, const rn_root_gt *gt,
                      size_t n_gt, double thr, rn_err *err)
{
    memset(res, 0, sizeof *res);
    if (!(thr > 0) || !isfinite(thr)) return rn_err_set(err, "AP threshold %g: must be a positive number", thr);
    if (check_preds(pred, n_pred, 1, err) || check_gts(gt, n_gt, err)) return -1;
    res->thr = thr;
    res->n_gt = count_valid(gt, n_gt);
    if (res->n_gt == 0) return rn_err_set(err, "ground truth: no valid root (%zu records), AP undefined", n_gt);
    keyed *order = sorted_preds(pred, n_pred), *g = sorted_gts(gt, n_gt);
    unsigned char *matched = rn_xcalloc(n_gt, 1);
    accumulate_ap(res, pred, order, n_pred, gt, g, n_gt, matched);
    free(matched);
    free(g);
    free(order);
    return 0;
}

/* ---- MRPE --------------------------------------------------------------- */

static int mrpe_pair(const rn_root_pred *pred, const rn_root_gt *gt, const size_t *gt_index, size_t i,
                     const rn_root_gt **out, rn_err *err)
{
    const rn_root_gt *t = &gt[gt_index ? gt_index[i] : i];
    if (!finite3(pred[i].root_cam))
        return rn_err_set(err, "prediction %zu (image_id %lld): root_cam: not finite or beyond float range", i,
                          (long long)pred[i].image_id);
    if (!finite3(t->root_cam))
        return rn_err_set(err, "ground truth %zu (image_id %lld): root_cam: not finite or beyond float range",
                          gt_index ? gt_index[i] : i, (long long)t->image_id);
    *out = t;
    return 0;
}

int rn_eval_mrpe(rn_mrpe *res, const rn_root_pred *pred, const rn_root_gt *gt, const size_t *gt_index, size_t n,
                 rn_err *err)
{
    memset(res, 0, sizeof *res);
    if (n == 0) return rn_err_set(err, "MRPE: no predictions");
    double s[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const rn_root_gt *t = NULL;
        if (mrpe_pair(pred, gt, gt_index, i, &t, err)) return -1;
        double d[3];
        for (int k = 0; k < 3; k++) d[k] = pred[i].root_cam[k] - t->root_cam[k];
        s[0] += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++) s[k + 1] += fabs(d[k]);
    }
    res->n = n;
    res->total = s[0] / (double)n;
    res->x = s[1] / (double)n;
    res->y = s[2] / (double)n;
    res->z = s[3] / (double)n;
    return 0;
}

int rn_eval_h36m_mrpe(rn_h36m_result *res, const rn_root_pred *pred, const rn_root_gt *gt, const size_t *gt_index,
                      size_t n, rn_err *err)
{
    memset(res, 0, sizeof *res);
    if (rn_eval_mrpe(&res->all, pred, gt, gt_index, n, err)) return -1;
    double sum[RN_H36M_ACTIONS] = {0};
    for (size_t i = 0; i < n; i++) {
        size_t j = gt_index ? gt_index[i] : i;
        int a = gt[j].action - 2;
        if (a < 0 || a >= RN_H36M_ACTIONS)
            return rn_err_set(err, "ground truth %zu (image_id %lld): action: %d is outside 2..16", j,
                              (long long)gt[j].image_id, gt[j].action);
        double d[3];
        for (int k = 0; k < 3; k++) d[k] = pred[i].root_cam[k] - gt[j].root_cam[k];
        sum[a] += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        res->action_n[a]++;
    }
    for (int a = 0; a < RN_H36M_ACTIONS; a++)
        res->action[a] = res->action_n[a] ? sum[a] / (double)res->action_n[a] : NAN;
    return 0;
}

int rn_eval_pair(size_t *gt_index, const rn_root_pred *pred, size_t n_pred, const rn_root_gt *gt, size_t n_gt,
                 int by_ann_id, rn_err *err)
{
    keyed *g = rn_xmalloc((n_gt ? n_gt : 1) * sizeof *g);
    for (size_t i = 0; i < n_gt; i++) g[i] = (keyed){0.0, by_ann_id ? gt[i].ann_id : gt[i].image_id, i};
    qsort(g, n_gt, sizeof *g, cmp_image);
    int rc = 0;
    for (size_t i = 0; i < n_pred && !rc; i++) {
        int64_t id = by_ann_id ? pred[i].ann_id : pred[i].image_id;
        size_t at = lower_bound(g, n_gt, id);
        if (at < n_gt && g[at].id == id) gt_index[i] = g[at].idx;
        else
            rc = rn_err_set(err, "prediction %zu: %s %lld: no ground truth with that id", i,
                            by_ann_id ? "ann_id" : "image_id", (long long)id);
    }
    free(g);
    return rc;
}

void rn_eval_h36m_print(FILE *f, const rn_h36m_result *r)
{
    fprintf(f, "MRPE >> tot: %.2f, x: %.2f, y: %.2f, z: %.2f\n", r->all.total, r->all.x, r->all.y, r->all.z);
    for (int a = 0; a < RN_H36M_ACTIONS; a++) fprintf(f, "%s: %.2f ", rn_h36m_action_names[a], r->action[a]);
    fprintf(f, "\n");
}

void rn_eval_ap_print(FILE *f, const rn_ap_result *r, const char *note)
{
    fprintf(f, "AP_root@%gcm: %.4f  (tp %zu, fp %zu, valid GT %zu, skipped %zu%s%s)\n", r->thr / 10.0, r->ap, r->n_tp,
            r->n_fp, r->n_gt, r->n_skipped, note ? "; " : "", note ? note : "");
}

void rn_eval_mrpe_print(FILE *f, const rn_mrpe *m, const char *unit)
{
    fprintf(f, "MRPE (%s, %zu records): total %.4f  x %.4f  y %.4f  z %.4f\n", unit, m->n, m->total, m->x, m->y, m->z);
}
