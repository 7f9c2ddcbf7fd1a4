/* rn_sample / rn_dataset: one person record as the authors' datasets produce
 * it, and a parsed annotation file. Records are plain old data so that a
 * dataset can be written to, and mmap'd from, a binary cache.
 *
 *   rn_dataset ds;
 *   if (rn_dataset_load(&ds, "MuCo", "data/", RN_SPLIT_TRAIN, &opts, &err)) ...
 *   const rn_sample *s = &ds.samples[i];
 *   printf("%s k=%g\n", rn_dataset_image_path(&ds, s), s->k);
 *   rn_dataset_free(&ds);
 *
 * Units: pixels for image coordinates; root_img[2] and root_cam are in the
 * dataset's own unit (mm for Human3.6M/MuCo/MuPoTS, m for 3DPW). Camera values
 * are floats, never integers.
 */
#ifndef RN_DATA_SAMPLE_H
#define RN_DATA_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

typedef struct rn_sample {
    uint32_t path_off;   /* image path (relative to the data dir) in the string pool */
    int32_t image_id;    /* annotation file's image id */
    int32_t ann_id;      /* annotation id, or -1 */
    int32_t width, height;
    float bbox[4];       /* x, y, w, h after the authors' process_bbox */
    float area;          /* area used for k (bbox[2] * bbox[3] after process_bbox) */
    float k;             /* sqrt(bbox_real_x * bbox_real_y * fx * fy / area) */
    float root_img[3];   /* x, y in pixels, depth */
    float root_cam[3];   /* X, Y, Z in camera space */
    float root_vis;      /* 1 visible, 0 not */
    float f[2], c[2];    /* focal length and principal point, pixels */
    float score;         /* detector score, 1 for GT boxes */
    int32_t have_depth;  /* 1 for 3D sets, 0 for 2D sets (COCO, MPII) */
    int32_t action;      /* Human3.6M action index 2..16, else -1 */
    int32_t subject;     /* Human3.6M subject, MuPoTS sequence, else -1 */
    int32_t is_valid;    /* MuPoTS is_valid flag; 1 elsewhere */
    int32_t has_box64;   /* 1: box64 holds the box in float64 */
    double box64[4];     /* x, y, w, h of process_bbox's float64 box, as the authors' numpy has it before the crop
                          * rounds it to float32 (bbox above is that rounding): result files write it, the crop
                          * takes its centre */
} rn_sample;

/* Sets s->bbox (float32) and s->box64 (as given) from process_bbox's float64 box (x, y, w, h). */
static inline void rn_sample_set_box(rn_sample *s, const double box[4])
{
    for (int i = 0; i < 4; i++) s->bbox[i] = (float)box[i], s->box64[i] = box[i];
    s->has_box64 = 1;
}

/* s's box centre x + 0.5 w, y + 0.5 h in float64 into c; 1, or 0 (c untouched) where s has no float64 box. */
static inline int rn_sample_center(const rn_sample *s, double c[2])
{
    if (!s->has_box64) return 0;
    c[0] = s->box64[0] + 0.5 * s->box64[2];
    c[1] = s->box64[1] + 0.5 * s->box64[3];
    return 1;
}

/* s's box size w, h in float64 into size (PoseNet's scale augmentation multiplies it); 1, or 0 where s has
 * no float64 box. */
static inline int rn_sample_size(const rn_sample *s, double size[2])
{
    if (!s->has_box64) return 0;
    size[0] = s->box64[2];
    size[1] = s->box64[3];
    return 1;
}

/* s's box as result files write it: box64 where s has it, else bbox widened to double. */
static inline void rn_sample_box(const rn_sample *s, double box[4])
{
    for (int i = 0; i < 4; i++) box[i] = s->has_box64 ? s->box64[i] : s->bbox[i];
}

typedef enum { RN_SPLIT_TRAIN = 0, RN_SPLIT_TEST = 1 } rn_split;

/* A record's joints, as the authors' PoseNet readers (3DMPPE_POSENET_RELEASE data/<set>/<set>.py)
 * produce them: J rows of RN_JOINT_F floats, in the set's own joint order (data/sets/skeleton.h names it):
 *   [RN_JOINT_IMG + 0..2]  joint_img: x, y in pixels; depth minus the root joint's depth (their
 *                          joint_img[:, 2] = joint_cam[:, 2] - root_cam[2]) in the set's unit; 0 for
 *                          the 2D sets
 *   [RN_JOINT_CAM + 0..2]  joint_cam: X, Y, Z in camera space (0 for the 2D sets)
 *   [RN_JOINT_VIS]         joint_vis as their reader gives it (1; COCO's v > 0; MPII's v as stored) */
enum { RN_JOINT_IMG = 0, RN_JOINT_CAM = 3, RN_JOINT_VIS = 6, RN_JOINT_F = 7 };

typedef struct rn_dataset {
    char name[32];          /* "Human36M", "MuCo", "MuPoTS", "MSCOCO", "MPII", "PW3D" */
    rn_sample *samples;     /* n records (owned, or pointing into a mapping) */
    size_t n;
    const char *strings;    /* string pool, NUL-separated */
    size_t strings_len;
    char data_dir[4096];    /* root that image paths are relative to; "" (predict's sets): paths as given */
    float bbox_real[2];     /* per-set real box size (mm, or m for 3DPW) */
    void *mapping;          /* non-NULL when backed by an mmap'd cache */
    size_t mapping_len;
    void *owned;            /* heap block(s) to free when not mapped */
    char cache_note[320];   /* what the cache did: "hit PATH", "miss (why), wrote PATH", ... */
    int J;                  /* joints per record (0: the set's reader has none: PW3D) */
    char skeleton[32];      /* their joint set, an rn_skeleton name (data/sets/skeleton.h); "" when J == 0 */
    float *joints;          /* n * J * RN_JOINT_F (rn_dataset_joints), owned or in the mapping; NULL when J == 0 */
} rn_dataset;

/* Record i's joints (J rows of RN_JOINT_F), or NULL when the set has none. */
static inline const float *rn_dataset_joints(const rn_dataset *ds, size_t i)
{
    return ds->J > 0 ? ds->joints + i * (size_t)ds->J * RN_JOINT_F : NULL;
}

typedef struct rn_dataset_opts {
    int protocol;        /* Human3.6M protocol 1 or 2 (default 2) */
    int use_det_bbox;    /* 1: detector boxes (MuPoTS, Human3.6M test) instead of GT */
    int input_w, input_h;/* network input size, for process_bbox's aspect ratio (256, 256) */
    int no_cache;        /* 1: always parse the JSON, never read or write the cache */
    const char *cache_dir; /* created if missing; NULL: data_dir/<name>/, or the per-user cache when that fails */
    FILE *warn;          /* where a fall back to the per-user cache is said, one line (NULL: silent) */
} rn_dataset_opts;

/* Loads the named set ("Human36M", "MuCo", "MuPoTS", "MSCOCO", "MPII", "PW3D")
 * from data_dir laid out as the authors' repository expects. Uses, and
 * refreshes, the binary cache: in opts->cache_dir when given (created if
 * missing), else next to the annotations (data_dir/<name>/); when that cannot
 * be written (a shared or read-only data folder), in the per-user cache
 * $XDG_CACHE_HOME/rootnet/<hash of data_dir> (default ~/.cache/rootnet/...),
 * which is also read when the data folder has no valid cache. Returns 0, or
 * -1 with "file: record: field: problem" in err. */
int rn_dataset_load(rn_dataset *ds, const char *name, const char *data_dir, rn_split split,
                    const rn_dataset_opts *opts, rn_err *err);
void rn_dataset_free(rn_dataset *ds);
/* Cache file path for a set/split/options (what rn_dataset_load uses). */
void rn_dataset_cache_path(char *buf, size_t len, const char *name, const char *data_dir, rn_split split,
                           const rn_dataset_opts *opts);
/* Full path of a sample's image into buf, returns buf: data_dir "/" path, or the path as it is when
 * data_dir is "" (predict's sets hold absolute paths). Every reader of a sample's image goes through it. */
const char *rn_dataset_image_path(const rn_dataset *ds, const rn_sample *s, char *buf, size_t len);

#endif
