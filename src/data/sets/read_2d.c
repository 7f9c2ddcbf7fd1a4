/* MS COCO person keypoints and MPII (2D sets, have_depth = 0), as the authors'
 * MSCOCO.py and MPII.py: the root is COCO's mean of the two hips (visible when
 * both are), MPII's own pelvis joint; f is their dummy 1500. */
#include <stdio.h>
#include <string.h>

#include "data/json/jsonf.h"
#include "data/sets/readers.h"

enum { COCO_LSHOULDER = 5, COCO_RSHOULDER = 6, COCO_LHIP = 11, COCO_RHIP = 12, COCO_JOINTS = 17, MPII_PELVIS = 6,
       MPII_JOINTS = 16 };
static const double DUMMY_F[2] = {1500, 1500};

typedef struct set2d {
    int coco; /* 1 COCO, 0 MPII */
    const char *img_prefix;
} set2d;

/* COCO's added joint (x, y, v) from two keypoints as their MSCOCO.py: the mean, v the product. */
static void coco_mean(double out[3], const double *kp, int a, int b)
{
    out[0] = (kp[3 * a] + kp[3 * b]) * 0.5;
    out[1] = (kp[3 * a + 1] + kp[3 * b + 1]) * 0.5;
    out[2] = kp[3 * a + 2] * kp[3 * b + 2];
}

/* PoseNet's joints as their MSCOCO.py / MPII.py: x, y, depth 0, camera 0; vis v > 0 (COCO, with
 * Thorax and Pelvis added) or v as stored (MPII). */
static void joints_2d(float *out, const double *kp, const set2d *set)
{
    double kp2[(COCO_JOINTS + 2) * 3];
    int nj = set->coco ? COCO_JOINTS + 2 : MPII_JOINTS;
    memcpy(kp2, kp, sizeof(double) * 3 * (set->coco ? COCO_JOINTS : MPII_JOINTS));
    if (set->coco) {
        coco_mean(kp2 + 3 * COCO_JOINTS, kp, COCO_LSHOULDER, COCO_RSHOULDER);
        coco_mean(kp2 + 3 * (COCO_JOINTS + 1), kp, COCO_LHIP, COCO_RHIP);
    }
    for (int j = 0; j < nj; j++) {
        float *o = out + (size_t)j * RN_JOINT_F;
        o[RN_JOINT_IMG] = (float)kp2[3 * j];
        o[RN_JOINT_IMG + 1] = (float)kp2[3 * j + 1];
        o[RN_JOINT_VIS] = set->coco ? (kp2[3 * j + 2] > 0 ? 1.0f : 0.0f) : (float)kp2[3 * j + 2];
    }
}

static int root_2d(rn_sample *s, float *joints, const rn_jnode *ann, const set2d *set, const rn_jctx *jc,
                   rn_err *err)
{
    double kp[COCO_JOINTS * 3];
    size_t nj = set->coco ? COCO_JOINTS : MPII_JOINTS;
    const rn_jnode *v = rn_jget(jc, ann, "keypoints", err);
    if (!v || rn_jflat(jc, v, "keypoints", kp, nj * 3, err)) return -1;
    joints_2d(joints, kp, set);
    if (set->coco) {
        s->root_img[0] = (float)((kp[COCO_LHIP * 3] + kp[COCO_RHIP * 3]) * 0.5);
        s->root_img[1] = (float)((kp[COCO_LHIP * 3 + 1] + kp[COCO_RHIP * 3 + 1]) * 0.5);
        s->root_vis = kp[COCO_LHIP * 3 + 2] * kp[COCO_RHIP * 3 + 2] > 0 ? 1.0f : 0.0f;
    } else {
        s->root_img[0] = (float)kp[MPII_PELVIS * 3];
        s->root_img[1] = (float)kp[MPII_PELVIS * 3 + 1];
        s->root_vis = (float)kp[MPII_PELVIS * 3 + 2];
    }
    s->root_img[2] = 0.0f;
    return 0;
}

/* 0 skipped by the authors' filters or kept; -1 error. */
static int ann_2d(rn_dsbuild *b, const rn_jnode *images, const rn_idmap *map, const rn_jnode *ann, const set2d *set,
                  const rn_read_ctx *ctx, rn_jctx *jc, rn_err *err)
{
    long iid, nkp, crowd = 0, aid;
    size_t at;
    if (!rn_jget_int(jc, ann, "id", &aid, err)) jc->ann_id = aid;
    if (rn_jget_int(jc, ann, "image_id", &iid, err)) return -1;
    jc->image_id = iid;
    int known = rn_idmap_get(map, iid, &at);
    if (!known && set->coco) return 0;
    if (!known) return rn_jfail(jc, "image_id", err, "image %ld is not in 'images'", iid);
    if (set->coco && rn_jget_int(jc, ann, "iscrowd", &crowd, err)) return -1;
    if (rn_jget_int(jc, ann, "num_keypoints", &nkp, err)) return -1;
    if (crowd || nkp == 0) return 0;
    rn_sample *s = rn_dsbuild_push(b);
    const char *file;
    double box[4], positive, c[2];
    int integral, k = rn_read_image_basics(jc, rn_jarray_get(images, at), s, &file, err);
    if (!k) k = rn_jget_vec(jc, ann, "bbox", box, 4, &integral, err);
    positive = k ? 0 : box[2] * box[3];
    if (!k && set->coco) k = rn_jget_num(jc, ann, "area", &positive, err);
    c[0] = s->width / 2.0;
    c[1] = s->height / 2.0;
    if (!k) k = rn_read_fc(jc, "f", DUMMY_F, c, s, err);
    if (!k) k = root_2d(s, rn_dsbuild_joints(b), ann, set, jc, err);
    if (!k) k = rn_read_box(s, box, integral, positive, ctx, jc, err);
    if (!k) k = rn_read_finite(s, jc, err);
    if (k) {
        b->n--;
        return k < 0 ? -1 : 0;
    }
    s->ann_id = (int32_t)jc->ann_id;
    s->have_depth = 0;
    rn_read_path(b, s, set->img_prefix, file);
    return 0;
}

static int read_2d(rn_dsbuild *b, const rn_read_ctx *ctx, const char *rel, const set2d *set, rn_err *err)
{
    b->J = set->coco ? COCO_JOINTS + 2 : MPII_JOINTS;
    b->skeleton = set->coco ? "MSCOCO" : "MPII";
    rn_read_file f;
    if (rn_read_file_open(&f, ctx, rel, 1, err)) return -1;
    int rc = 0;
    for (size_t a = 0; !rc && a < rn_jarray_size(f.anns); a++) {
        rn_jctx ac = rn_read_rec(&f, "annotation", (long)a);
        rc = ann_2d(b, f.images, &f.map, rn_jarray_get(f.anns, a), set, ctx, &ac, err);
    }
    rn_read_file_close(&f);
    return rc;
}

int rn_read_mscoco(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    int train = ctx->split == RN_SPLIT_TRAIN;
    set2d set = {1, train ? "MSCOCO/images/train2017" : "MSCOCO/images/val2017"};
    return read_2d(b, ctx, train ? ctx->set->train : ctx->set->test, &set, err);
}

int rn_read_mpii(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    set2d set = {0, "MPII"};
    if (ctx->split != RN_SPLIT_TRAIN) return rn_err_set(err, "MPII: the authors' MPII has only a train split");
    return read_2d(b, ctx, ctx->set->train, &set, err);
}
