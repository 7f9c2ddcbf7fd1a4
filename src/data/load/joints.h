/* PoseNet's joint targets of one sample, as the authors' PoseNet data/dataset.py __getitem__
 * computes them (3DMPPE_POSENET_RELEASE): after the crop's augmentation, each joint of the
 * sample's own set is flipped (x -> width - x - 1, the set's flip pairs swapped, vis too), moved
 * by the crop's affine (their trans_point2d), its depth (already relative to the root, as their
 * readers store it) scaled to 0..1 over bbox_3d_shape ((z / half + 1) / 2); vis is cleared where the
 * joint leaves the input patch or the depth range; then x, y go to output space and z to depth
 * bins, and the rows are mapped by name onto the target set (their transform_joint_to_other_db:
 * a joint the set lacks is 0 with vis 0), vis becoming vis > 0.
 *
 *   rn_joint_geom g = {.trans = out.trans, .img_w = out.img_w, .flip = aug.flip, .in_w = 256, .in_h = 256,
 *                      .out_w = 64, .out_h = 64, .depth_dim = 64, .depth_half = 1000};
 *   rn_joint_targets(target, vis, rn_dataset_joints(ds, i), ds->J, from->flip, from->nflip, map, to->J, &g);
 */
#ifndef RN_DATA_LOAD_JOINTS_H
#define RN_DATA_LOAD_JOINTS_H

typedef struct rn_joint_geom {
    const double *trans;  /* 2x3 (row-major): the crop's (flipped) image -> input patch (rn_crop_out.trans) */
    int img_w;            /* the original image's width (the flip's) */
    int flip;             /* 1: the sample was flipped */
    int in_w, in_h;       /* input patch */
    int out_w, out_h;     /* output grid */
    int depth_dim;        /* depth bins (64) */
    double depth_half;    /* bbox_3d_shape[0] / 2 in the set's unit (1000 mm) */
    int f32;              /* 1: the set's joints are float32 arrays in theirs (Human36M), every stored step
                           * rounds to float32; 0: float64 (MuCo, MuPoTS, MSCOCO, MPII), rounded once */
} rn_joint_geom;

/* target (K, 3): x, y on the output grid, z in depth bins; vis (K): 0 or 1. joints: the sample's
 * J rows of RN_JOINT_F (data/sets/sample.h), flip: its set's pairs, map[k] (K entries): the row of
 * the sample's set for target row k, -1 where the set has none. */
void rn_joint_targets(float *target, float *vis, const float *joints, int J, const int (*flip)[2], int nflip,
                      const int *map, int K, const rn_joint_geom *g);

#endif
