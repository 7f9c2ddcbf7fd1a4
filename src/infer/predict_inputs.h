/* Internal to rn_pset (predict_set.c, predict_inputs.c): the image table and
 * the person records built from the box and intrinsics inputs.
 *
 *   rn_pin in; rn_pin_init(&in, &opts, &summary);
 *   if (rn_pin_images(&in, &err) || rn_pin_boxes(&in, &err)) ...   // fatal only
 *   // in.samples[0..in.n): one record per kept person; in.img[s.subject] its image
 *   rn_pin_free(&in);
 */
#ifndef RN_INFER_PREDICT_INPUTS_H
#define RN_INFER_PREDICT_INPUTS_H

#include "data/json/json.h"
#include "data/json/jsonf.h"
#include "data/sets/sample.h"
#include "infer/predict_opts.h"

typedef struct rn_pimage {
    char *name;         /* as given (output, messages) */
    char *path;         /* opened */
    int64_t id;
    int state;          /* 0 not read, 1 usable, -1 unreadable */
    int w, h;           /* upright (EXIF orientation applied) */
    int swap_xy;        /* 1: EXIF orientation 5..8 (stored width is upright height) */
    int oriented;       /* 1: an EXIF orientation 2..8 applied */
    int have_f, have_c; /* from the JSON inputs (before flags, EXIF, default) */
    double f[2], c[2];
    const char *src;    /* where the focal came from: "flag", "json", "images-file", "exif-35mm", ... "default" */
    size_t people, left;/* records kept; not yet predicted */
    int failed;         /* decoding failed in the loader (reported once) */
} rn_pimage;

typedef struct rn_pin {
    const rn_pset_opts *o;
    rn_pset_summary *s;
    rn_pimage *img;
    size_t n_img, cap_img;
    rn_idmap ids;       /* image id -> index (COCO results) */
    rn_sample *samples; /* subject = image index, path_off into strings */
    double (*det)[4];   /* (cap) each record's box as the detector gave it, x, y, w, h (xyxy converted) */
    int64_t *det_index; /* (cap) its index in the boxes file: the results array's, or the image's list's */
    size_t n, cap;
    char *strings;
    size_t strings_len, strings_cap;
    rn_jdoc *intr;      /* --intrinsics, kept while building */
    size_t reported[RN_PSKIP_N];
} rn_pin;

void rn_pin_init(rn_pin *in, const rn_pset_opts *o, rn_pset_summary *s);
/* The image table from images / image_list / image_dir / coco_images (or the
 * per-image boxes file's keys, added by rn_pin_boxes). */
int rn_pin_images(rn_pin *in, rn_err *err);
/* Reads the boxes file into records (reading each image's header, EXIF and
 * intrinsics once). */
int rn_pin_boxes(rn_pin *in, rn_err *err);
/* Counts one skip and names it on o->log (the first RN_PSET_REPORT of a kind). */
void rn_pin_skip(rn_pin *in, rn_pskip why, size_t count, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void rn_pin_free(rn_pin *in);
/* The words of a skip reason ("non-person category", ...). */
const char *rn_pskip_name(rn_pskip r);

#endif
