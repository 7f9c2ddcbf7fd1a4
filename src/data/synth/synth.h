/* A synthetic dataset in the authors' annotation formats (MuCo-3DHP,
 * MuPoTS-3D, Human3.6M, and the 2D sets MS COCO and MPII): people of varied height and pose standing on a
 * ground plane 2-8 m from a pinhole camera, drawn as coloured capsule figures
 * (a magenta pelvis) over a textured background, with JPEG images and the
 * exact JSON/directory layout the readers load. Deterministic for a seed
 * (each image has its own RNG stream, so thread count does not matter).
 *
 *   rn_synth_opts o = {.format = RN_SYNTH_MUCO, .images = 100, .seed = 1};
 *   if (rn_synth_write("out", &o, &err)) ...   // out/MuCo/data/MuCo-3DHP.json, images
 */
#ifndef RN_DATA_SYNTH_H
#define RN_DATA_SYNTH_H

#include <stdint.h>

#include "core/status.h"

/* Every synthetic camera stands level at this height above the ground, so the
 * horizon (where the wall meets the floor) crosses each person at this height:
 * its place in the crop tells the person's size, the cue that lets RootNet
 * correct the depth k implies (k alone cannot tell tall-and-far from
 * short-and-near). */
#define RN_SYNTH_CAMERA_HEIGHT_MM 1300.0

typedef enum { RN_SYNTH_MUCO = 0, RN_SYNTH_MUPOTS = 1, RN_SYNTH_H36M = 2, RN_SYNTH_COCO = 3, RN_SYNTH_MPII = 4 } rn_synth_format;

typedef struct rn_synth_opts {
    rn_synth_format format;
    long images;      /* number of images (> 0) */
    uint64_t seed;
    int no_images;    /* 1: annotations only, no JPEGs */
    int width, height;/* image size, 0: 512 x 512 */
} rn_synth_opts;

/* "muco", "mupots", "h36m", "coco", "mpii" -> format; returns 0, or -1 if unknown. */
int rn_synth_parse_format(const char *s, rn_synth_format *out);
/* Writes the dataset under out_dir (created). Returns 0 or -1 with err. */
int rn_synth_write(const char *out_dir, const rn_synth_opts *o, rn_err *err);

/* One person of a synthetic scene, in camera space (mm) and pixels. */
enum { RN_SYNTH_JOINTS = 21, RN_SYNTH_ROOT = 14 };
typedef struct rn_synth_person {
    double cam[RN_SYNTH_JOINTS][3];
    double img[RN_SYNTH_JOINTS][2];
    int vis[RN_SYNTH_JOINTS];
    double bbox[4];
    double height_mm;
} rn_synth_person;

typedef struct rn_synth_image {
    int width, height, n_people;
    double f[2], c[2];
    double cam_height_mm; /* RN_SYNTH_CAMERA_HEIGHT_MM */
    rn_synth_person people[3];
} rn_synth_image;

/* Generates image i's scene from (seed, i) with the given camera
 * (f, c, camera height) and number of people; projects joints and boxes. */
void rn_synth_scene(rn_synth_image *im, uint64_t seed, long i, int n_people);
/* Renders a scene into rgb (height x width x 3). */
void rn_synth_render(unsigned char *rgb /* [h][w][3] */, const rn_synth_image *im, uint64_t seed, long i);
/* Writes rgb as a JPEG (quality 90) via a temp file and rename; no fsync per
 * image (rn_synth_write syncs the file system once after all images). */
int rn_synth_write_jpeg(const char *path, const unsigned char *rgb /* [h][w][3] */, int w, int h, rn_err *err);

#endif
