#include "data/load/joints.h"

#include "data/load/augment.h"
#include "data/sets/sample.h"
#include "data/sets/skeleton.h"

/* A value as their numpy array stores it: float32 arrays round every assignment. */
static double st(double v, int f32) { return f32 ? (double)(float)v : v; }

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* One joint through the crop: affine, depth normalised, vis cleared outside, output space. */
static void joint_to_output(double *x, double *y, double *z, double *v, const rn_joint_geom *g)
{
    double px, py;
    rn_affine_apply(&px, &py, g->trans, *x, *y);
    *x = st(px, g->f32), *y = st(py, g->f32);
    *z = st(*z / g->depth_half, g->f32);
    *z = st((*z + 1.0) / 2.0, g->f32);
    int inside = *x >= 0 && *x < g->in_w && *y >= 0 && *y < g->in_h && *z >= 0 && *z < 1;
    *v *= inside;
    *x = st(st(*x / g->in_w, g->f32) * g->out_w, g->f32);
    *y = st(st(*y / g->in_h, g->f32) * g->out_h, g->f32);
    *z = st(*z * g->depth_dim, g->f32);
}

void rn_joint_targets(float *target, float *vis, const float *joints, int J, const int (*flip)[2], int nflip,
                      const int *map, int K, const rn_joint_geom *g)
{
    double x[RN_SKELETON_MAX], y[RN_SKELETON_MAX], z[RN_SKELETON_MAX], v[RN_SKELETON_MAX];
    RN_ASSERT(J > 0 && J <= RN_SKELETON_MAX);
    for (int j = 0; j < J; j++) {
        const float *r = joints + (size_t)j * RN_JOINT_F;
        x[j] = r[RN_JOINT_IMG], y[j] = r[RN_JOINT_IMG + 1], z[j] = r[RN_JOINT_IMG + 2], v[j] = r[RN_JOINT_VIS];
        if (g->flip) x[j] = st(st(g->img_w - x[j], g->f32) - 1, g->f32);
    }
    for (int p = 0; g->flip && p < nflip; p++) {
        int a = flip[p][0], b = flip[p][1];
        swap_d(&x[a], &x[b]), swap_d(&y[a], &y[b]), swap_d(&z[a], &z[b]), swap_d(&v[a], &v[b]);
    }
    for (int j = 0; j < J; j++) joint_to_output(&x[j], &y[j], &z[j], &v[j], g);
    for (int k = 0; k < K; k++) {
        int j = map[k];
        float *t = target + 3 * (size_t)k;
        t[0] = j < 0 ? 0.0f : (float)x[j];
        t[1] = j < 0 ? 0.0f : (float)y[j];
        t[2] = j < 0 ? 0.0f : (float)z[j];
        vis[k] = j >= 0 && v[j] > 0 ? 1.0f : 0.0f;
    }
}
