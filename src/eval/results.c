#include "eval/results.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/afile.h"
#include "io/file.h"

#define MUPOTS_ROOT_JOINT 14

static const char *const RESULT_FILES[] = {
    "bbox_root_mupots_output.json",
    "bbox_root_human36m_output.json",
    "bbox_root_pw3d_output.json",
};

const char *rn_eval_results_filename(rn_eval_kind kind)
{
    RN_ASSERT((int)kind >= 0 && (int)kind < 3);
    return RESULT_FILES[kind];
}

/* ---- atomic write ------------------------------------------------------- */

/* Creates path.tmp.XXXXXX, mode 0644; returns its fd (name in *tmp, free it) or -1. */
static int write_json_atomic(const char *path, const json_t *root, rn_err *err)
{
    char *text = json_dumps(root, JSON_REAL_PRECISION(17) | JSON_COMPACT);
    if (!text) return rn_err_set(err, "%s: JSON encoding error", path);
    size_t n = strlen(text);
    text[n] = '\n';
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, text, n + 1, err) || rn_afile_commit(&f, err) ? -1 : 0;
    free(text);
    return rc;
}

static json_t *json_doubles(const double *v, int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++) json_array_append_new(a, json_real(v[k]));
    return a;
}

static int all_finite(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

/* One record in the authors' field order for that kind. */
static json_t *pred_record(const rn_root_pred *p, rn_eval_kind kind)
{
    json_t *o = json_object();
    json_object_set_new(o, "image_id", json_integer(p->image_id));
    if (kind == RN_EVAL_PW3D) json_object_set_new(o, "ann_id", json_integer(p->ann_id));
    if (kind == RN_EVAL_MUPOTS) json_object_set_new(o, "root_cam", json_doubles(p->root_cam, 3));
    json_object_set_new(o, "bbox", json_doubles(p->bbox, 4));
    if (kind != RN_EVAL_MUPOTS) json_object_set_new(o, "root_cam", json_doubles(p->root_cam, 3));
    if (kind == RN_EVAL_MUPOTS) json_object_set_new(o, "score", json_real(p->score));
    return o;
}

int rn_eval_results_write(const char *path, rn_eval_kind kind, const rn_root_pred *pred, size_t n, rn_err *err)
{
    return rn_eval_results_write_det(path, kind, pred, NULL, n, err);
}

int rn_eval_results_write_det(const char *path, rn_eval_kind kind, const rn_root_pred *pred, const rn_det_ref *det,
                              size_t n, rn_err *err)
{
    char *text;
    size_t len;
    if (rn_eval_results_encode_det(&text, &len, path, kind, pred, det, n, err)) return -1;
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, text, len, err) || rn_afile_commit(&f, err) ? -1 : 0;
    free(text);
    return rc;
}

int rn_eval_results_encode_det(char **text, size_t *len, const char *path, rn_eval_kind kind,
                               const rn_root_pred *pred, const rn_det_ref *det, size_t n, rn_err *err)
{
    return rn_eval_results_encode_pose(text, len, path, kind, pred, det, NULL, n, err);
}

/* The first non-finite field of record i, NULL when every one is finite. */
static const char *bad_field(const rn_root_pred *p, const rn_det_ref *det, const rn_pose_rows *pose, size_t i)
{
    size_t J3 = pose ? 3 * (size_t)pose->J : 0;
    return !all_finite(p->root_cam, 3)                    ? "root_cam"
           : !all_finite(p->bbox, 4)                      ? "bbox"
           : !isfinite(p->score)                          ? "score"
           : det && !all_finite(det[i].box, 4)            ? "det_bbox"
           : pose && !all_finite(pose->img + i * J3, J3)  ? "joints.img"
           : pose && !all_finite(pose->cam + i * J3, J3)  ? "joints.cam"
                                                          : NULL;
}

/* [{"name", "img": [x, y, depth], "cam": [X, Y, Z]}, ...] of record i. */
static json_t *joints_json(const rn_pose_rows *pose, size_t i)
{
    json_t *a = json_array();
    for (int j = 0; j < pose->J; j++) {
        size_t at = 3 * (i * (size_t)pose->J + (size_t)j);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(pose->names[j]));
        json_object_set_new(o, "img", json_doubles(pose->img + at, 3));
        json_object_set_new(o, "cam", json_doubles(pose->cam + at, 3));
        json_array_append_new(a, o);
    }
    return a;
}

int rn_eval_results_encode_pose(char **text, size_t *len, const char *path, rn_eval_kind kind,
                                const rn_root_pred *pred, const rn_det_ref *det, const rn_pose_rows *pose, size_t n,
                                rn_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *bad = bad_field(&pred[i], det, pose, i);
        if (bad) return rn_err_set(err, "%s: record %zu: field '%s': not finite, not written", path, i, bad);
    }
    json_t *root = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = pred_record(&pred[i], kind);
        if (det) json_object_set_new(o, "det_bbox", json_doubles(det[i].box, 4));
        if (det) json_object_set_new(o, "det_index", json_integer(det[i].index));
        if (pose) json_object_set_new(o, "joints", joints_json(pose, i));
        json_array_append_new(root, o);
    }
    *text = json_dumps(root, JSON_REAL_PRECISION(17) | JSON_COMPACT);
    json_decref(root);
    if (!*text) return rn_err_set(err, "%s: JSON encoding error", path);
    *len = strlen(*text);
    (*text)[(*len)++] = '\n'; /* over the terminating NUL: the text is not a string any more */
    return 0;
}

int rn_eval_gt_write(const char *path, const rn_root_gt *gt, size_t n, rn_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!all_finite(gt[i].root_cam, 3))
            return rn_err_set(err, "%s: record %zu: field 'root_cam': not finite, not written", path, i);
    json_t *root = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "image_id", json_integer(gt[i].image_id));
        json_object_set_new(o, "ann_id", json_integer(gt[i].ann_id));
        json_object_set_new(o, "root_cam", json_doubles(gt[i].root_cam, 3));
        json_object_set_new(o, "is_valid", json_integer(gt[i].is_valid));
        json_object_set_new(o, "action", json_integer(gt[i].action));
        json_array_append_new(root, o);
    }
    int rc = write_json_atomic(path, root, err);
    json_decref(root);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

/* Parses the file at path, or len bytes at data when data is not NULL (path then only names them). */
static json_t *load_json(const char *path, const char *data, size_t len, rn_err *err)
{
    json_error_t je;
    rn_mapfile m = {0};
    if (!data && rn_mapfile_open(&m, path, err)) return NULL;
    json_t *root = data ? json_loadb(data, len, JSON_REJECT_DUPLICATES, &je)
                        : json_loadb(m.data ? (const char *)m.data : "", m.size, JSON_REJECT_DUPLICATES, &je);
    rn_mapfile_close(&m);
    if (!root) {
        if (je.line < 0 && strstr(je.text, path)) rn_err_set(err, "%s", je.text);
        else if (je.line < 0) rn_err_set(err, "%s: %s", path, je.text);
        else rn_err_set(err, "%s: line %d column %d: malformed JSON: %s", path, je.line, je.column, je.text);
    }
    return root;
}

/* Field reading with "path: record i: field 'name': problem" errors. */
typedef struct rec_ctx {
    const char *path;
    size_t i;
    rn_err *err;
} rec_ctx;

static int field_err(const rec_ctx *c, const char *name, const char *problem)
{
    return rn_err_set(c->err, "%s: record %zu: field '%s': %s", c->path, c->i, name, problem);
}

static int get_int(int64_t *out, const json_t *o, const char *name, int required, const rec_ctx *c)
{
    const json_t *v = json_object_get(o, name);
    if (!v) return required ? field_err(c, name, "missing") : 1;
    if (!json_is_integer(v)) return field_err(c, name, "not an integer");
    *out = json_integer_value(v);
    return 0;
}

/* A number must be finite and within float range (the authors' values are
 * float32; beyond it, squared errors overflow to an MRPE of inf). */
static int check_number(double v, const char *name, const rec_ctx *c)
{
    char msg[64];
    if (!isfinite(v)) return field_err(c, name, "not finite");
    snprintf(msg, sizeof msg, "%g is beyond float range", v);
    return fabs(v) > FLT_MAX ? field_err(c, name, msg) : 0;
}

static int get_number(double *out, const json_t *o, const char *name, int required, const rec_ctx *c)
{
    const json_t *v = json_object_get(o, name);
    if (!v) return required ? field_err(c, name, "missing") : 1;
    if (!json_is_number(v)) return field_err(c, name, "not a number");
    *out = json_number_value(v);
    return check_number(*out, name, c);
}

static int numbers_of(double *out, const json_t *a, size_t n, const char *name, const rec_ctx *c)
{
    char msg[64];
    snprintf(msg, sizeof msg, "not an array of %zu numbers", n);
    if (!json_is_array(a) || json_array_size(a) != n) return field_err(c, name, msg);
    for (size_t k = 0; k < n; k++) {
        const json_t *v = json_array_get(a, k);
        if (!json_is_number(v)) return field_err(c, name, msg);
        out[k] = json_number_value(v);
        if (check_number(out[k], name, c)) return -1;
    }
    return 0;
}

static int get_numbers(double *out, const json_t *o, const char *name, size_t n, const rec_ctx *c)
{
    const json_t *a = json_object_get(o, name);
    if (!a) return field_err(c, name, "missing");
    return numbers_of(out, a, n, name, c);
}

static int read_pred(rn_root_pred *p, const json_t *o, rn_eval_kind kind, const rec_ctx *c)
{
    if (!json_is_object(o)) return rn_err_set(c->err, "%s: record %zu: not a JSON object", c->path, c->i);
    p->score = 1.0;
    p->ann_id = -1;
    if (get_int(&p->image_id, o, "image_id", 1, c) || get_numbers(p->root_cam, o, "root_cam", 3, c) ||
        get_numbers(p->bbox, o, "bbox", 4, c))
        return -1;
    if (!(p->bbox[2] > 0 && p->bbox[3] > 0)) return field_err(c, "bbox", "empty box (width or height <= 0)");
    if (get_number(&p->score, o, "score", kind == RN_EVAL_MUPOTS, c) < 0) return -1;
    if (get_int(&p->ann_id, o, "ann_id", kind == RN_EVAL_PW3D, c) < 0) return -1;
    return 0;
}

static int top_array(const json_t *root, const char *path, rn_err *err)
{
    if (!json_is_array(root)) return rn_err_set(err, "%s: top level is not a JSON array of records", path);
    return 0;
}

static int results_of(rn_root_pred **pred, size_t *n, const char *path, const char *data, size_t len, rn_eval_kind kind,
                      rn_err *err)
{
    *pred = NULL;
    *n = 0;
    json_t *root = load_json(path, data, len, err);
    if (!root) return -1;
    if (top_array(root, path, err)) {
        json_decref(root);
        return -1;
    }
    size_t m = json_array_size(root);
    rn_root_pred *p = rn_xcalloc(m, sizeof *p);
    for (size_t i = 0; i < m; i++) {
        rec_ctx c = {path, i, err};
        if (read_pred(&p[i], json_array_get(root, i), kind, &c)) {
            free(p);
            json_decref(root);
            return -1;
        }
    }
    json_decref(root);
    *pred = p;
    *n = m;
    return 0;
}

int rn_eval_results_read(rn_root_pred **pred, size_t *n, const char *path, rn_eval_kind kind, rn_err *err)
{
    return results_of(pred, n, path, NULL, 0, kind, err);
}

int rn_eval_results_parse(rn_root_pred **pred, size_t *n, const char *data, size_t len, const char *path,
                          rn_eval_kind kind, rn_err *err)
{
    return results_of(pred, n, path, data ? data : "", len, kind, err);
}

static int read_gt_plain(rn_root_gt *g, const json_t *o, const rec_ctx *c)
{
    if (!json_is_object(o)) return rn_err_set(c->err, "%s: record %zu: not a JSON object", c->path, c->i);
    int64_t valid = 1, action = -1;
    g->ann_id = -1;
    if (get_int(&g->image_id, o, "image_id", 1, c) || get_numbers(g->root_cam, o, "root_cam", 3, c)) return -1;
    if (get_int(&g->ann_id, o, "ann_id", 0, c) < 0 || get_int(&valid, o, "is_valid", 0, c) < 0 ||
        get_int(&action, o, "action", 0, c) < 0)
        return -1;
    if (action != -1 && (action < 2 || action > 16)) return field_err(c, "action", "not -1 or 2..16");
    g->is_valid = valid != 0;
    g->action = (int32_t)action;
    return 0;
}

/* A MuPoTS-3D.json annotation: image_id, id, is_valid, keypoints_cam[14]. */
static int read_gt_mupots(rn_root_gt *g, const json_t *o, const rec_ctx *c)
{
    if (!json_is_object(o)) return rn_err_set(c->err, "%s: annotation %zu: not a JSON object", c->path, c->i);
    int64_t valid = 0;
    g->ann_id = -1;
    g->action = -1;
    if (get_int(&g->image_id, o, "image_id", 1, c) || get_int(&valid, o, "is_valid", 1, c) ||
        get_int(&g->ann_id, o, "id", 0, c) < 0)
        return -1;
    const json_t *kp = json_object_get(o, "keypoints_cam");
    if (!kp) return field_err(c, "keypoints_cam", "missing");
    if (!json_is_array(kp) || json_array_size(kp) <= MUPOTS_ROOT_JOINT)
        return field_err(c, "keypoints_cam", "not an array of at least 15 joints");
    g->is_valid = valid != 0;
    return numbers_of(g->root_cam, json_array_get(kp, MUPOTS_ROOT_JOINT), 3, "keypoints_cam[14]", c);
}

static int gt_of(rn_root_gt **gt, size_t *n, const char *path, const char *data, size_t len, rn_err *err)
{
    *gt = NULL;
    *n = 0;
    json_t *root = load_json(path, data, len, err);
    if (!root) return -1;
    int coco = json_is_object(root);
    json_t *list = coco ? json_object_get(root, "annotations") : root;
    if (!json_is_array(list)) {
        rn_err_set(err, "%s: neither a JSON array of roots nor an object with an 'annotations' array", path);
        json_decref(root);
        return -1;
    }
    size_t m = json_array_size(list);
    rn_root_gt *g = rn_xcalloc(m, sizeof *g);
    for (size_t i = 0; i < m; i++) {
        rec_ctx c = {path, i, err};
        const json_t *o = json_array_get(list, i);
        if (coco ? read_gt_mupots(&g[i], o, &c) : read_gt_plain(&g[i], o, &c)) {
            free(g);
            json_decref(root);
            return -1;
        }
    }
    json_decref(root);
    *gt = g;
    *n = m;
    return 0;
}

int rn_eval_gt_read(rn_root_gt **gt, size_t *n, const char *path, rn_err *err)
{
    return gt_of(gt, n, path, NULL, 0, err);
}

int rn_eval_gt_parse(rn_root_gt **gt, size_t *n, const char *data, size_t len, const char *path, rn_err *err)
{
    return gt_of(gt, n, path, data ? data : "", len, err);
}
