/* The per-set annotation readers behind rn_dataset_load. Each reproduces the
 * authors' load_data (3DMPPE_ROOTNET_RELEASE data/<Set>/<Set>.py): the same
 * files under data_dir, the same filters and the same record order.
 *
 *   rn_dsbuild b = {0};
 *   rn_read_ctx ctx = {.data_dir = "data", .split = RN_SPLIT_TRAIN, .opts = &opts, .set = rn_set_find("MuCo")};
 *   if (rn_read_muco(&b, &ctx, &err)) ...     // b.s[0 .. b.n) and b.str
 *   rn_dsbuild_free(&b);
 */
#ifndef RN_DATA_READERS_H
#define RN_DATA_READERS_H

#include <stddef.h>

#include "core/status.h"
#include "data/json/jsonf.h"
#include "data/sets/descriptor.h"
#include "data/sets/sample.h"

/* Growable records + string pool + joints, the output of a reader. A reader with joints sets J
 * and skeleton before its first push (rn_dsbuild_joints). */
typedef struct rn_dsbuild {
    rn_sample *s;
    size_t n, cap;
    char *str;
    size_t str_len, str_cap;
    int J;                 /* joints per record, 0: none */
    const char *skeleton;  /* their joint set's name (data/sets/skeleton.h), NULL when J == 0 */
    float *joints;         /* cap * J * RN_JOINT_F */
} rn_dsbuild;

/* Appends a string (NUL-terminated) to the pool; returns its offset. */
uint32_t rn_dsbuild_str(rn_dsbuild *b, const char *s);
/* Appends a record with defaults (ann_id -1, score 1, is_valid 1, action and
 * subject -1, root_vis 1, have_depth 1) and returns it. */
rn_sample *rn_dsbuild_push(rn_dsbuild *b);
/* The last pushed record's joints (J rows of RN_JOINT_F, zeroed by the push). */
float *rn_dsbuild_joints(rn_dsbuild *b);
void rn_dsbuild_free(rn_dsbuild *b);

typedef struct rn_read_ctx {
    const char *data_dir;
    rn_split split;
    const rn_dataset_opts *opts; /* protocol, use_det_bbox, input_w/h already defaulted */
    float bbox_real[2];
    const rn_set_desc *set;      /* the set read: its files (descriptor.h) */
    /* Opens an annotation file by its full path; NULL: rn_jdoc_load. Lets a
     * caller hand the readers files held in memory (tests/fuzz). */
    rn_jdoc *(*open_json)(void *arg, const char *path, rn_err *err);
    void *open_arg;
} rn_read_ctx;

/* Parses the annotation file at path through ctx->open_json (or rn_jdoc_load). */
rn_jdoc *rn_read_json(const rn_read_ctx *ctx, const char *path, rn_err *err);

/* Human36M's annotation files of ctx's protocol and split (data, camera and joint_3d of each
 * subject), the rn_set_desc.files of Human36M. */
void rn_read_h36m_files(char paths[][4096], int *n, int max, const rn_read_ctx *ctx);
/* One of them: subject's file of kind "data", "camera" or "joint_3d" under data_dir (also where
 * rootnet synth writes it). */
void rn_read_h36m_path(char *buf, size_t len, const char *data_dir, int subject, const char *kind);

int rn_read_human36m(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);
int rn_read_muco(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);
int rn_read_mupots(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);
int rn_read_mscoco(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);
int rn_read_mpii(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);
int rn_read_pw3d(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err);

/* The authors' Human36M subject list for a protocol and split; returns its length. */
int rn_h36m_subjects(int protocol, rn_split split, int out[8]);

/* An annotation file's "images" array indexed by "id" (duplicate ids are an
 * error). */
int rn_read_images(const rn_jctx *jc, const rn_jnode *root, const rn_jnode **images, rn_idmap *map, rn_err *err);
/* One annotation file of a reader: its "images" indexed by id and, when
 * asked, its "annotations" (the preamble every reader shares).
 *
 *   rn_read_file f;
 *   if (rn_read_file_open(&f, ctx, "MuCo/data/MuCo-3DHP.json", 1, err)) return -1;   // f closed on failure
 *   for (size_t a = 0; a < rn_jarray_size(f.anns); a++) {
 *       rn_jctx ac = rn_read_rec(&f, "annotation", (long)a); ...
 *   }
 *   rn_read_file_close(&f);
 */
typedef struct rn_read_file {
    char path[4096];         /* full path, for messages */
    rn_jdoc *doc;            /* owned (rn_read_file_open); NULL when indexed from a caller's document */
    const rn_jnode *images;  /* "images" */
    const rn_jnode *anns;    /* "annotations", NULL unless asked for */
    rn_idmap map;            /* image id -> index in images */
} rn_read_file;

/* Loads ctx->data_dir/rel (rel: one of ctx->set's files) through rn_read_json, then as rn_read_file_index. */
int rn_read_file_open(rn_read_file *f, const rn_read_ctx *ctx, const char *rel, int want_anns, rn_err *err);
/* Indexes root (a document the caller keeps) read from path. On failure f is closed. */
int rn_read_file_index(rn_read_file *f, const char *path, const rn_jnode *root, int want_anns, rn_err *err);
/* Frees the index and an owned document; safe on a closed f. */
void rn_read_file_close(rn_read_file *f);
/* The message context of record i of kind what ("annotation"; NULL and -1: the file itself). */
rn_jctx rn_read_rec(const rn_read_file *f, const char *what, long i);

/* Image record basics into s: width, height (> 0) and image_id; *file gets
 * "file_name". */
int rn_read_image_basics(const rn_jctx *jc, const rn_jnode *img, rn_sample *s, const char **file,
                         rn_err *err);
/* n numbers from v, flattening nested arrays ([[a],[b],[c]] or [a, b, c]). */
int rn_jflat(const rn_jctx *jc, const rn_jnode *v, const char *key, double *out, size_t n, rn_err *err);
/* Checks focal lengths > 0 and stores f, c into s. */
int rn_read_fc(const rn_jctx *jc, const char *key, const double f[2], const double c[2], rn_sample *s,
               rn_err *err);
/* Stores "prefix/file" in the pool as s's image path. */
void rn_read_path(rn_dsbuild *b, rn_sample *s, const char *prefix, const char *file);

/* Every float of a finished record is finite: inputs are within float range
 * (rn_jnum), but values derived from them (k, a projected root) may not be.
 * Returns 0, or -1 naming the record and the value. */
int rn_read_finite(const rn_sample *s, const rn_jctx *jc, rn_err *err);
/* The same for a record's J joints (rn_dsbuild_joints). */
int rn_read_joints_finite(const float *joints, int J, const rn_jctx *jc, rn_err *err);

/* Shared tail of every reader: process_bbox on box (x, y, w, h) then k from
 * the processed area. Returns 0 kept (s->bbox, s->area, s->k set), 1 dropped
 * by the authors' filter, -1 corrupt (negative size) with err. */
int rn_read_box(rn_sample *s, const double box[4], int integral, double positive, const rn_read_ctx *ctx,
                const rn_jctx *jc, rn_err *err);

#endif
