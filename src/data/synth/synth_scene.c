/* Synthetic people: a 21-joint skeleton (MuCo-3DHP order, pelvis = 14) of a
 * given height, posed with random limb angles and yaw, standing on the ground
 * plane Y = camera height (camera space: x right, y down, z forward, mm). */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "data/synth/synth.h"

enum {
    J_HEAD_TOP, J_THORAX, J_RSHO, J_RELB, J_RWRI, J_LSHO, J_LELB, J_LWRI, J_RHIP, J_RKNE, J_RANK,
    J_LHIP, J_LKNE, J_LANK, J_PELVIS, J_SPINE, J_HEAD, J_RHAND, J_LHAND, J_RTOE, J_LTOE
};

static double uni(rn_rng *r, double a, double b) { return a + (b - a) * rn_rng_uniform(r); }

static void set3(double *v, double x, double y, double z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

/* p = a + len * (sin(t) cos(u), -cos(t) cos(u)... ): a limb hanging down
 * (-y), swung forward by angle `fwd` (about x) and outward by `out` (about z). */
static void limb(double *p, const double *a, double len, double fwd, double out, double side)
{
    p[0] = a[0] + side * len * sin(out);
    p[1] = a[1] - len * cos(out) * cos(fwd);
    p[2] = a[2] + len * cos(out) * sin(fwd);
}

/* Body frame: origin at the pelvis, x to the person's left, y up, z forward. */
static void pose_body(double j[RN_SYNTH_JOINTS][3], double s, rn_rng *r)
{
    set3(j[J_PELVIS], 0, 0, 0);
    set3(j[J_SPINE], 0, 0.10 * s, 0);
    set3(j[J_THORAX], 0, 0.28 * s, 0);
    set3(j[J_HEAD], 0, 0.38 * s, 0.01 * s);
    set3(j[J_HEAD_TOP], 0, 0.47 * s, 0);
    for (int side = -1; side <= 1; side += 2) {
        int L = side > 0;
        double *sho = j[L ? J_LSHO : J_RSHO], *hip = j[L ? J_LHIP : J_RHIP];
        set3(sho, side * 0.13 * s, 0.26 * s, 0);
        set3(hip, side * 0.095 * s, 0, 0);
        double afwd = uni(r, -0.7, 0.9), aout = uni(r, 0.05, 1.0), bend = uni(r, 0.0, 1.4);
        limb(j[L ? J_LELB : J_RELB], sho, 0.17 * s, afwd, aout, side);
        limb(j[L ? J_LWRI : J_RWRI], j[L ? J_LELB : J_RELB], 0.15 * s, afwd + bend, aout * 0.7, side);
        limb(j[L ? J_LHAND : J_RHAND], j[L ? J_LWRI : J_RWRI], 0.05 * s, afwd + bend, aout * 0.7, side);
        double lfwd = uni(r, -0.35, 0.45), lout = uni(r, 0.0, 0.15), knee = uni(r, 0.0, 0.6);
        limb(j[L ? J_LKNE : J_RKNE], hip, 0.245 * s, lfwd, lout, side);
        limb(j[L ? J_LANK : J_RANK], j[L ? J_LKNE : J_RKNE], 0.245 * s, lfwd - knee, lout, side);
        double *ank = j[L ? J_LANK : J_RANK];
        set3(j[L ? J_LTOE : J_RTOE], ank[0], ank[1] - 0.03 * s, ank[2] + 0.08 * s);
    }
}

/* The lowest joint rests on the ground: shift so min y = -pelvis height. */
static double ground_offset(double j[RN_SYNTH_JOINTS][3])
{
    double lo = 0;
    for (int k = 0; k < RN_SYNTH_JOINTS; k++) lo = fmin(lo, j[k][1]);
    return -lo;
}

static void project_person(rn_synth_person *p, const rn_synth_image *im)
{
    double xmin = 1e30, ymin = 1e30, xmax = -1e30, ymax = -1e30;
    for (int k = 0; k < RN_SYNTH_JOINTS; k++) {
        double *c = p->cam[k];
        p->img[k][0] = c[0] / c[2] * im->f[0] + im->c[0];
        p->img[k][1] = c[1] / c[2] * im->f[1] + im->c[1];
        p->vis[k] = p->img[k][0] >= 0 && p->img[k][0] < im->width && p->img[k][1] >= 0 && p->img[k][1] < im->height;
        xmin = fmin(xmin, p->img[k][0]);
        xmax = fmax(xmax, p->img[k][0]);
        ymin = fmin(ymin, p->img[k][1]);
        ymax = fmax(ymax, p->img[k][1]);
    }
    double m = 0.08 * p->height_mm * im->f[0] / p->cam[RN_SYNTH_ROOT][2];
    p->bbox[0] = xmin - m;
    p->bbox[1] = ymin - m;
    p->bbox[2] = xmax - xmin + 2 * m;
    p->bbox[3] = ymax - ymin + 2 * m;
}

/* Adult standing height: N(1700, 70) mm (one population's spread, about 4 %),
 * clipped to 1500..1950. The figures are scaled copies of one body, so the
 * crop cannot tell a tall person far away from a short one nearer: this spread
 * is the depth ambiguity k leaves (about 4 % of the distance, 1 sigma). */
static double person_height(rn_rng *r) { return fmin(fmax(1700.0 + 70.0 * rn_rng_normal(r), 1500.0), 1950.0); }

static void place_person(rn_synth_person *p, const rn_synth_image *im, rn_rng *r)
{
    double s = person_height(r), body[RN_SYNTH_JOINTS][3];
    p->height_mm = s;
    pose_body(body, s, r);
    double lift = ground_offset(body);
    double yaw = uni(r, -M_PI, M_PI), cy = cos(yaw), sy = sin(yaw);
    double Z = uni(r, 2000, 8000);
    double u = uni(r, 0.18, 0.82) * im->width;
    double X = (u - im->c[0]) * Z / im->f[0];
    double Y = im->cam_height_mm - lift;
    for (int k = 0; k < RN_SYNTH_JOINTS; k++) {
        double bx = body[k][0], by = body[k][1], bz = body[k][2];
        /* facing the camera at yaw 0: body +z points to camera -z, body x (left) to camera +x */
        double xr = cy * bx + sy * bz, zr = -sy * bx + cy * bz;
        set3(p->cam[k], X + xr, Y - by, Z - zr);
    }
    project_person(p, im);
}

void rn_synth_scene(rn_synth_image *im, uint64_t seed, long i, int n_people)
{
    rn_rng r;
    rn_rng_seed2(&r, seed ^ 0xa5a5a5a5ULL, (uint64_t)i);
    RN_ASSERT(n_people >= 1 && n_people <= 3);
    im->n_people = n_people;
    for (int p = 0; p < n_people; p++) place_person(&im->people[p], im, &r);
}
