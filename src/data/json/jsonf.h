/* Checked access to annotation JSON (rn_json, data/json/json.h) with error messages that name
 * the file, the record and the field:
 *   "a.json: record 3 (image_id 7, ann id 12): field 'bbox': NaN"
 *
 *   rn_jctx c = {.file = path, .rec = i, .image_id = iid, .ann_id = aid};
 *   double box[4]; int integral;
 *   if (rn_jget_vec(&c, ann, "bbox", box, 4, &integral, err)) return -1;
 */
#ifndef RN_DATA_JSONF_H
#define RN_DATA_JSONF_H

#include "data/json/json.h"
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct rn_jctx {
    const char *file;  /* annotation file, for messages */
    const char *what;  /* record kind: "record" (default), "image", "annotation", ... */
    long rec;          /* index in its array, or -1 */
    long image_id;     /* or -1 when unknown */
    long ann_id;       /* or -1 */
} rn_jctx;

/* Formats "file: record N (image_id I, ann id A): field 'key': msg" into err; returns -1. */
int rn_jfail(const rn_jctx *c, const char *key, rn_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Value of key in obj, or NULL with a "missing" error. */
const rn_jnode *rn_jget(const rn_jctx *c, const rn_jnode *obj, const char *key, rn_err *err);
/* Converts a JSON number (or bool) to a double that is finite and within
 * float range (records hold floats: 1e39 would become inf); error names key. */
int rn_jnum(const rn_jctx *c, const rn_jnode *v, const char *key, double *out, rn_err *err);
/* obj[key] as a finite number / as an integer. */
int rn_jget_num(const rn_jctx *c, const rn_jnode *obj, const char *key, double *out, rn_err *err);
int rn_jget_int(const rn_jctx *c, const rn_jnode *obj, const char *key, long *out, rn_err *err);
/* obj[key] as a string. */
int rn_jget_str(const rn_jctx *c, const rn_jnode *obj, const char *key, const char **out, rn_err *err);
/* Array value v of exactly n finite numbers into out[n]; *integral (if not
 * NULL) is 1 when every element was a JSON integer. */
int rn_jvec(const rn_jctx *c, const rn_jnode *v, const char *key, double *out, size_t n, int *integral, rn_err *err);
int rn_jget_vec(const rn_jctx *c, const rn_jnode *obj, const char *key, double *out, size_t n, int *integral,
                rn_err *err);
/* Row `row` of obj[key], an array of at least min_rows arrays of n numbers
 * (e.g. keypoints_cam[14]). A row may also be a scalar when n == 1 ([v] or v). */
int rn_jget_row(const rn_jctx *c, const rn_jnode *obj, const char *key, size_t row, size_t min_rows, double *out,
                size_t n, rn_err *err);
/* obj[key] as an array (error if missing or not an array). */
const rn_jnode *rn_jget_array(const rn_jctx *c, const rn_jnode *obj, const char *key, rn_err *err);

/* Integer id -> index map (open addressing), for image ids. It grows as keys are put: n_expected
 * only sizes the first table. */
typedef struct rn_idmap {
    int64_t *keys;
    size_t *vals;
    size_t cap; /* a power of two, at least 2 * n + 1 */
    size_t n;   /* keys held */
} rn_idmap;
void rn_idmap_init(rn_idmap *m, size_t n_expected);
/* Inserts; returns 1 if the key was already present (value kept), else 0. */
int rn_idmap_put(rn_idmap *m, int64_t key, size_t val);
/* Returns 1 and sets *val when found, else 0. */
int rn_idmap_get(const rn_idmap *m, int64_t key, size_t *val);
void rn_idmap_free(rn_idmap *m);

#endif
