/* rn_pset inputs: images, detections and intrinsics -> person records. */
#include "infer/predict_inputs.h"

#include <dirent.h>
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data/sets/bbox.h"
#include "data/image/exif_focal.h"
#include "data/image/image.h"
#include "infer/predict.h"

static const char *const skip_names[RN_PSKIP_N] = {
    "non-person category", "below --score-thr", "unknown image", "malformed record", "box outside the image or empty",
    "people in unreadable images", "broken EXIF"};

const char *rn_pskip_name(rn_pskip r) { return r < RN_PSKIP_N ? skip_names[r] : "?"; }

void rn_pin_init(rn_pin *in, const rn_pset_opts *o, rn_pset_summary *s)
{
    memset(in, 0, sizeof *in);
    in->o = o;
    in->s = s;
    rn_idmap_init(&in->ids, 64);
}

void rn_pin_free(rn_pin *in)
{
    for (size_t i = 0; i < in->n_img; i++) free(in->img[i].name), free(in->img[i].path);
    free(in->img);
    rn_idmap_free(&in->ids);
    free(in->samples);
    free(in->det);
    free(in->det_index);
    free(in->strings);
    if (in->intr) rn_jdoc_free(in->intr);
    memset(in, 0, sizeof *in);
}

void rn_pin_skip(rn_pin *in, rn_pskip why, size_t count, const char *fmt, ...)
{
    in->s->skip[why] += count;
    if (in->reported[why]++ >= RN_PSET_REPORT || !in->o->log) return;
    va_list ap;
    va_start(ap, fmt);
    if (why == RN_PSKIP_EXIF) fprintf(in->o->log, "rootnet predict: warning: broken EXIF, image kept: ");
    else fprintf(in->o->log, "rootnet predict: skipped (%s): ", rn_pskip_name(why));
    vfprintf(in->o->log, fmt, ap);
    fputc('\n', in->o->log);
    va_end(ap);
    if (in->reported[why] == RN_PSET_REPORT)
        fprintf(in->o->log, "rootnet predict: (further '%s' skips are counted, not listed)\n", rn_pskip_name(why));
}

static char *join(const char *base, const char *name)
{
    if (!base || name[0] == '/') return strdup(name);
    size_t n = strlen(base) + strlen(name) + 2;
    char *p = rn_xmalloc(n);
    snprintf(p, n, "%s/%s", base, name);
    return p;
}

static int add_image(rn_pin *in, const char *name, const char *base, int64_t id, rn_err *err)
{
    if (rn_idmap_put(&in->ids, id, in->n_img)) return rn_err_set(err, "image id %lld is given twice", (long long)id);
    if (in->n_img == in->cap_img) {
        in->cap_img = in->cap_img ? 2 * in->cap_img : 64;
        in->img = realloc(in->img, in->cap_img * sizeof *in->img);
        RN_ASSERT(in->img);
    }
    rn_pimage *im = &in->img[in->n_img++];
    memset(im, 0, sizeof *im);
    im->name = strdup(name);
    im->path = join(base, name);
    RN_ASSERT(im->name && im->path);
    im->id = id;
    return 0;
}

static int is_image_name(const char *n)
{
    const char *dot = strrchr(n, '.');
    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png"));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int scan_dir(rn_pin *in, rn_err *err)
{
    DIR *d = opendir(in->o->image_dir);
    if (!d) return rn_err_set(err, "--image-dir '%s': cannot open the folder", in->o->image_dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !is_image_name(e->d_name)) continue;
        if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
        RN_ASSERT(names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc) rc = add_image(in, names[i], in->o->image_dir, (int64_t)in->n_img, err);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int read_list(rn_pin *in, rn_err *err)
{
    FILE *f = fopen(in->o->image_list, "r");
    if (!f) return rn_err_set(err, "--image-list '%s': cannot open the file", in->o->image_list);
    char line[8192];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        size_t l = strcspn(line, "\r\n");
        line[l] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p && *p != '#') rc = add_image(in, p, in->o->image_dir, (int64_t)in->n_img, err);
    }
    fclose(f);
    return rc;
}

/* intrinsic [fx, fy, cx, cy], or {"focal": [fx, fy], "princpt": [cx, cy]} (princpt optional). */
static int parse_intr(rn_pimage *im, const rn_jnode *v, const rn_jctx *c, const char *key, rn_err *err)
{
    double a[4];
    if (rn_jis_array(v)) {
        if (rn_jvec(c, v, key, a, 4, NULL, err)) return -1;
        im->f[0] = a[0], im->f[1] = a[1], im->c[0] = a[2], im->c[1] = a[3];
        im->have_f = im->have_c = 1;
    } else if (rn_jis_object(v)) {
        if (rn_jget_vec(c, v, "focal", im->f, 2, NULL, err)) return -1;
        im->have_f = 1;
        if (rn_jobject_get(v, "princpt")) {
            if (rn_jget_vec(c, v, "princpt", im->c, 2, NULL, err)) return -1;
            im->have_c = 1;
        }
    } else {
        return rn_jfail(c, key, err, "expected [fx, fy, cx, cy] or {\"focal\": [fx, fy], \"princpt\": [cx, cy]}");
    }
    if (!(im->f[0] > 0 && im->f[1] > 0)) return rn_jfail(c, key, err, "focal (%g, %g) must be > 0", im->f[0], im->f[1]);
    return 0;
}

static int coco_image(rn_pin *in, const rn_jnode *v, size_t i, const char *base, rn_err *err)
{
    rn_jctx c = {.file = in->o->coco_images, .what = "image", .rec = (long)i, .image_id = -1, .ann_id = -1};
    long id;
    const char *name;
    if (rn_jget_int(&c, v, "id", &id, err) || rn_jget_str(&c, v, "file_name", &name, err)) return -1;
    c.image_id = id;
    if (add_image(in, name, base, id, err)) return rn_err_prefix(err, "%s: image %zu", in->o->coco_images, i);
    rn_pimage *im = &in->img[in->n_img - 1];
    const char *key = rn_jobject_get(v, "intrinsic") ? "intrinsic" : "cam_param";
    const rn_jnode *iv = rn_jobject_get(v, key);
    if (iv && parse_intr(im, iv, &c, key, err)) return -1;
    if (iv) im->src = "images-file";
    return 0;
}

static int read_coco_images(rn_pin *in, rn_err *err)
{
    rn_jdoc *d = rn_jdoc_load(in->o->coco_images, err);
    if (!d) return -1;
    rn_jctx c = {.file = in->o->coco_images, .rec = -1, .image_id = -1, .ann_id = -1};
    const rn_jnode *imgs = rn_jget_array(&c, d->root, "images", err);
    char *dir = NULL;
    if (!in->o->image_dir) {
        dir = strdup(in->o->coco_images);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else strcpy(dir, ".");
    }
    int rc = imgs ? 0 : -1;
    for (size_t i = 0; !rc && i < rn_jarray_size(imgs); i++)
        rc = coco_image(in, rn_jarray_get(imgs, i), i, in->o->image_dir ? in->o->image_dir : dir, err);
    free(dir);
    rn_jdoc_free(d);
    return rc;
}

int rn_pin_images(rn_pin *in, rn_err *err)
{
    const rn_pset_opts *o = in->o;
    if (o->coco_images) {
        if (o->n_images || o->image_list)
            return rn_err_set(err, "--coco-images names the images: leave out --image and --image-list");
        return read_coco_images(in, err);
    }
    for (int i = 0; i < o->n_images; i++)
        if (add_image(in, o->images[i], o->image_dir, (int64_t)in->n_img, err)) return -1;
    if (o->image_list && read_list(in, err)) return -1;
    if (o->image_dir && !o->n_images && !o->image_list && scan_dir(in, err)) return -1;
    if (!in->n_img) return rn_err_set(err, "no images: give --image, --image-list, --image-dir or --coco-images");
    return 0;
}

/* ---- per image: header, intrinsics ---- */

static void exif_focal(rn_pin *in, rn_pimage *im, const rn_bytes *b)
{
    rn_exif_focal ef;
    rn_err e = {{0}};
    int rc = rn_exif_focal_read(&ef, b->p, b->n, im->w, im->h, &e);
    if (!rc && rn_focal_check(ef.f, &e)) rc = -1;
    if (rc < 0)
        rn_pin_skip(in, RN_PSKIP_EXIF, 1, "%s: %s (focal 1500 used instead%s)", im->name, e.msg,
                    im->oriented ? "" : "; no orientation read from it: its pixels as stored");
    if (rc) return;
    im->f[0] = ef.f[im->swap_xy], im->f[1] = ef.f[!im->swap_xy]; /* stored x is upright y when turned */
    im->have_f = 1;
    im->src = ef.source;
}

static int intr_file(rn_pin *in, rn_pimage *im, rn_err *err)
{
    const rn_jnode *v = in->intr ? rn_jobject_get(in->intr->root, im->name) : NULL;
    if (!v) return 0;
    rn_jctx c = {.file = in->o->intrinsics, .what = "image", .rec = -1, .image_id = im->id, .ann_id = -1};
    if (parse_intr(im, v, &c, im->name, err)) return -1;
    im->src = "json";
    return 0;
}

static int resolve_intrinsics(rn_pin *in, rn_pimage *im, const rn_bytes *b, rn_err *err)
{
    const rn_pset_opts *o = in->o;
    if (intr_file(in, im, err)) return -1;
    if (o->have_f) im->f[0] = o->f[0], im->f[1] = o->f[1], im->have_f = 1, im->src = "flag";
    if (o->have_c) im->c[0] = o->c[0], im->c[1] = o->c[1], im->have_c = 1;
    if (!im->have_f) exif_focal(in, im, b);
    if (!im->have_f) {
        im->f[0] = im->f[1] = RN_DEMO_FOCAL;
        im->src = "default";
        in->s->images_default_focal++;
    }
    if (!im->have_c) im->c[0] = im->w / 2.0, im->c[1] = im->h / 2.0;
    if (rn_focal_check(im->f, err) || rn_princpt_check(im->c, err))
        return rn_err_prefix(err, "%s (focal from %s)", im->name, im->src);
    return 0;
}

/* Reads the header (size) and intrinsics once; an unreadable image is state -1. */
static int prepare(rn_pin *in, rn_pimage *im, rn_err *err)
{
    if (im->state) return 0;
    rn_bytes b = {0};
    rn_image_info ii;
    rn_err e = {{0}};
    char *real = NULL;
    struct stat st;
    if (!stat(im->path, &st) && S_ISDIR(st.st_mode)) rn_err_set(&e, "is a folder, not an image");
    if (e.msg[0] || rn_bytes_read(&b, im->path, &e) || rn_image_probe(&ii, b.p, b.n, &e) || !(real = realpath(im->path, NULL))) {
        im->state = -1;
        rn_pin_skip(in, RN_PSKIP_IMAGE, 0, "%s: %s", im->name, e.msg[0] ? e.msg : "cannot resolve the path");
        rn_bytes_free(&b);
        return 0;
    }
    free(im->path);
    im->path = real;
    int o = ii.is_jpeg ? rn_exif_orientation(b.p, b.n) : 1;
    im->w = o >= 5 ? ii.h : ii.w, im->h = o >= 5 ? ii.w : ii.h;
    im->swap_xy = o >= 5;
    im->oriented = o > 1;
    in->s->images_oriented += o > 1;
    im->state = 1;
    int rc = resolve_intrinsics(in, im, &b, err);
    rn_bytes_free(&b);
    return rc;
}

/* ---- records ---- */

static uint32_t intern(rn_pin *in, const char *abs_path)
{
    const char *p = abs_path; /* the set's data_dir is "": the loader takes the path as it is */
    size_t l = strlen(p) + 1;
    if (in->strings_len + l > in->strings_cap) {
        in->strings_cap = 2 * (in->strings_len + l) + 4096;
        in->strings = realloc(in->strings, in->strings_cap);
        RN_ASSERT(in->strings);
    }
    RN_ASSERT(in->strings_len + l <= UINT32_MAX);
    uint32_t off = (uint32_t)in->strings_len;
    memcpy(in->strings + off, p, l);
    in->strings_len += l;
    return off;
}

/* A new record for the detector's box (x, y, w, h) at index det_index of the boxes file. */
static rn_sample *push(rn_pin *in, const double box[4], int64_t det_index)
{
    if (in->n == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 256;
        in->samples = realloc(in->samples, in->cap * sizeof *in->samples);
        in->det = realloc(in->det, in->cap * sizeof *in->det);
        in->det_index = realloc(in->det_index, in->cap * sizeof *in->det_index);
        RN_ASSERT(in->samples && in->det && in->det_index);
    }
    memcpy(in->det[in->n], box, sizeof in->det[in->n]);
    in->det_index[in->n] = det_index;
    rn_sample *s = &in->samples[in->n++];
    memset(s, 0, sizeof *s);
    return s;
}

/* One person: box (x, y, w, h) of image idx, at index det_index of the boxes
 * file. what names the record in messages. */
static int add_person(rn_pin *in, size_t idx, const double box[4], int64_t det_index, int integral, double score,
                      const char *what, rn_err *err)
{
    rn_pimage *im = &in->img[idx];
    if (prepare(in, im, err)) return -1;
    if (im->state < 0) {
        in->s->skip[RN_PSKIP_IMAGE]++;
        return 0;
    }
    double bb[4];
    rn_err e = {{0}};
    if (im->id < INT32_MIN || im->id > INT32_MAX) {
        rn_pin_skip(in, RN_PSKIP_RECORD, 1, "%s: image id %lld beyond 32 bits", what, (long long)im->id);
        return 0;
    }
    if (rn_predict_box_int(bb, box, integral, im->w, im->h, &e)) {
        rn_pin_skip(in, RN_PSKIP_BOX, 1, "%s (%s): %s", what, im->name, e.msg);
        return 0;
    }
    in->s->boxes_maybe_xyxy += !in->o->xyxy && rn_bbox_maybe_xyxy(box, im->w, im->h, NULL);
    if (in->n >= INT32_MAX) return rn_err_set(err, "more than %d people", INT32_MAX);
    rn_sample *s = push(in, box, det_index);
    s->path_off = intern(in, im->path);
    s->image_id = (int32_t)im->id;
    s->ann_id = -1;
    s->width = im->w, s->height = im->h;
    rn_sample_set_box(s, bb);
    double area = bb[2] * bb[3];
    s->area = (float)area;
    for (int j = 0; j < 2; j++) s->f[j] = (float)im->f[j], s->c[j] = (float)im->c[j];
    s->k = (float)rn_bbox_k(2000.0, 2000.0, s->f[0], s->f[1], area);
    s->score = (float)score;
    s->root_vis = 1.0f;
    s->have_depth = 1;
    s->is_valid = 1;
    s->action = -1;
    s->subject = (int32_t)idx;
    im->people++;
    return 0;
}

static int keep_box(rn_pin *in, double box[4], double score, const char *what)
{
    if (score < in->o->score_thr) {
        in->s->skip[RN_PSKIP_SCORE]++;
        return 0;
    }
    if (!in->o->xyxy) return 1;
    if (box[2] < box[0] || box[3] < box[1]) {
        rn_pin_skip(in, RN_PSKIP_BOX, 1, "%s: xyxy box (%g, %g, %g, %g) has x2 < x1 or y2 < y1", what, box[0], box[1],
                    box[2], box[3]);
        return 0;
    }
    box[2] -= box[0], box[3] -= box[1];
    return 1;
}

static int coco_det(rn_pin *in, const rn_jnode *v, size_t i, rn_err *err)
{
    rn_jctx c = {.file = in->o->boxes, .rec = (long)i, .image_id = -1, .ann_id = -1};
    rn_err e = {{0}};
    long iid, cat = 1;
    double box[4], score = 1.0;
    int integral = 0;
    char what[4200];
    snprintf(what, sizeof what, "%s: record %zu", in->o->boxes, i);
    if (rn_jget_int(&c, v, "image_id", &iid, &e) || (c.image_id = iid, 0) ||
        (rn_jobject_get(v, "category_id") && rn_jget_int(&c, v, "category_id", &cat, &e)) ||
        (rn_jobject_get(v, "score") && rn_jget_num(&c, v, "score", &score, &e)) ||
        rn_jget_vec(&c, v, "bbox", box, 4, &integral, &e)) {
        rn_pin_skip(in, RN_PSKIP_RECORD, 1, "%s", e.msg);
        return 0;
    }
    if (cat != 1) {
        rn_pin_skip(in, RN_PSKIP_CATEGORY, 1, "%s: category_id %ld", what, cat);
        return 0;
    }
    size_t idx;
    if (!rn_idmap_get(&in->ids, iid, &idx)) {
        rn_pin_skip(in, RN_PSKIP_UNKNOWN, 1, "%s: image_id %ld is not among the %zu images", what, iid, in->n_img);
        return 0;
    }
    if (!keep_box(in, box, score, what)) return 0;
    return add_person(in, idx, box, (int64_t)i, integral, score, what, err);
}

static int image_dets(rn_pin *in, size_t idx, const rn_jnode *list, rn_err *err)
{
    rn_jctx c = {.file = in->o->boxes, .what = "image", .rec = (long)idx, .image_id = (long)idx, .ann_id = -1};
    char what[4200];
    if (!rn_jis_array(list)) {
        rn_pin_skip(in, RN_PSKIP_RECORD, 1, "%s: '%s': not a list of [x, y, w, h, score]", in->o->boxes,
                    in->img[idx].name);
        return 0;
    }
    for (size_t j = 0; j < rn_jarray_size(list); j++) {
        const rn_jnode *b = rn_jarray_get(list, j);
        double v[5] = {0, 0, 0, 0, 1.0};
        int integral = 0;
        rn_err e = {{0}};
        size_t nv = rn_jarray_size(b);
        snprintf(what, sizeof what, "%s: '%s' box %zu", in->o->boxes, in->img[idx].name, j);
        in->s->detections++;
        if ((nv != 4 && nv != 5) || rn_jvec(&c, b, in->img[idx].name, v, nv, &integral, &e)) {
            rn_pin_skip(in, RN_PSKIP_RECORD, 1, "%s: %s", what, e.msg[0] ? e.msg : "expected [x, y, w, h, score]");
            continue;
        }
        if (nv == 5) integral = 0;
        if (nv == 5 && rn_jis_integer(rn_jarray_get(b, 0)) && rn_jis_integer(rn_jarray_get(b, 1)) &&
            rn_jis_integer(rn_jarray_get(b, 2)) && rn_jis_integer(rn_jarray_get(b, 3)))
            integral = 1;
        if (keep_box(in, v, v[4], what) && add_person(in, idx, v, (int64_t)j, integral, v[4], what, err)) return -1;
    }
    return 0;
}

static int per_image(rn_pin *in, const rn_jnode *root, rn_err *err)
{
    const rn_pset_opts *o = in->o;
    if (o->n_images || o->image_list || o->coco_images)
        return rn_err_set(err, "%s: per-image boxes name their images; leave out --image, --image-list and "
                          "--coco-images (--image-dir is the folder they are in)", o->boxes);
    struct rn_jnode *const *kv = root->u.kids;
    for (size_t i = 0; i < root->n; i++)
        if (add_image(in, rn_jstr(kv[2 * i]), o->image_dir, (int64_t)i, err)) return -1;
    for (size_t i = 0; i < root->n; i++)
        if (image_dets(in, i, kv[2 * i + 1], err)) return -1;
    return 0;
}

int rn_pin_boxes(rn_pin *in, rn_err *err)
{
    const rn_pset_opts *o = in->o;
    if (o->intrinsics) {
        if (!(in->intr = rn_jdoc_load(o->intrinsics, err))) return -1;
        if (!rn_jis_object(in->intr->root))
            return rn_err_set(err, "%s: expected an object {\"file name\": intrinsics, ...}", o->intrinsics);
    }
    rn_jdoc *d = rn_jdoc_load(o->boxes, err);
    if (!d) return -1;
    int rc = 0;
    if (rn_jis_object(d->root) && rn_jobject_get(d->root, "annotations") && rn_jobject_get(d->root, "images")) {
        rc = rn_err_set(err, "%s: a COCO annotation file ('images', 'annotations'), not detections: --boxes takes a "
                        "detector's output, COCO results [{image_id, category_id, bbox, score}, ...] or {\"file "
                        "name\": [[x, y, w, h, score], ...]}; this file can be --coco-images (its 'images' map ids "
                        "to file names)", o->boxes);
    } else if (rn_jis_object(d->root)) {
        rc = per_image(in, d->root, err);
    } else if (rn_jis_array(d->root)) {
        rc = rn_pin_images(in, err);
        in->s->detections = rn_jarray_size(d->root);
        for (size_t i = 0; !rc && i < rn_jarray_size(d->root); i++) rc = coco_det(in, rn_jarray_get(d->root, i), i, err);
    } else {
        rc = rn_err_set(err, "%s: expected COCO results [{image_id, category_id, bbox, score}, ...] or "
                        "{\"file name\": [[x, y, w, h, score], ...]}", o->boxes);
    }
    rn_jdoc_free(d);
    in->s->images = in->n_img;
    if (!rc && !o->coco_images && in->s->skip[RN_PSKIP_UNKNOWN] && o->log)
        fprintf(o->log, "rootnet predict: hint: %zu %s image ids that are not 0-based positions among the %zu %s "
                "given; for COCO image ids, give --coco-images FILE (a COCO file whose \"images\": [{id, file_name}] "
                "maps them to files)\n", in->s->skip[RN_PSKIP_UNKNOWN],
                in->s->skip[RN_PSKIP_UNKNOWN] == 1 ? "detection names an" : "detections name", in->n_img,
                in->n_img == 1 ? "image" : "images");
    return rc;
}
