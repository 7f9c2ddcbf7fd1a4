/* rn_draw_people: the picture of `rootnet demo` (and predict): the image with
 * each person's box, root and a depth label (and, with a PoseNet's joints, their
 * 2D skeletons: bones and joint dots in the person's colour, outlined in black,
 * over the roots), and beside it a bird's-eye view
 * (camera X against depth Z in metres) with a dot per person.
 *
 *   rn_people_picture pic = {.image = &rgb, .people = roots, .n = n, .intr = &info};
 *   rn_person_label lab[n];                          // optional: where the labels went
 *   if (rn_draw_people(&pic, "out.png", lab, &err)) ...
 *
 * Person i (1-based on the picture) has colour rn_person_colour(i - 1) for its
 * box, root cross, label and dot. Labels read "i: Z.ZZ m" (depth in metres)
 * in DejaVu Sans, the font scaled with the image (at least 12 px); they never
 * overlap each other and stay inside the image (viz/labels.h); a label that
 * could not sit beside its box has a leader line to the root. The bird's-eye
 * view, to the right of the image, has equal metres on both axes, a grid with
 * tick labels, the camera at the origin with its field of view (from the
 * intrinsics) and each person's dot with its number. The output is
 * (image width + panel) x max(image height, 360) pixels, PNG or JPEG. When
 * the focal length was assumed (intr->default_focal), a note at the foot of
 * the bird's-eye view says so and how depth scales with the true focal.
 */
#ifndef RN_VIZ_PEOPLE_H
#define RN_VIZ_PEOPLE_H

#include <stdint.h>

#include "core/status.h"
#include "data/image/draw.h"
#include "data/sets/person_root.h"

typedef struct rn_people_picture {
    const rn_rgb *image;          /* the input image, (h, w, 3) */
    const rn_person_root *people; /* (n) roots from rn_predict_roots */
    int n;
    const rn_predict_info *intr;  /* intrinsics used (focal, principal point) */
    const rn_people_pose *pose;   /* NULL, or every person's joints: their skeletons drawn over the image */
} rn_people_picture;

typedef struct rn_person_label {
    double rect[4];      /* image label x, y, w, h in output pixels */
    int moved;           /* 1: not beside its box; a leader line joins it to the root */
    double dot_rect[4];  /* bird's-eye label x, y, w, h (w = 0: the person is not shown there) */
    uint8_t colour[3];
} rn_person_label;

typedef struct rn_people_layout {
    int width, height;   /* output picture */
    int panel_x;         /* bird's-eye view starts at this column */
    int overlaps;        /* labels that found no free place (0 unless the image is crowded) */
    double note_rect[4]; /* x, y, w, h of the "focal assumed" note (w = 0: none, the focal was given) */
} rn_people_layout;

/* The colour of person i (0-based; the palette repeats after 10). */
const uint8_t *rn_person_colour(int i);

/* Draws pic into out (.png/.jpg/.jpeg, atomic). labels: (n) or NULL;
 * layout: NULL or filled. Returns 0, or -1 with err naming out. */
int rn_draw_people(const rn_people_picture *pic, const char *out, rn_person_label *labels, rn_people_layout *layout,
                   rn_err *err);
/* Longest side of the image part of a picture drawn from a file: a larger image is drawn shrunk by 2, 4, 8...
 * (the picture at most 2 x 4096 by 4096 pixels, its memory bounded). */
#define RN_DRAW_MAX_SIDE 4096
/* rn_draw_people over the image file at image (JPEG or PNG, EXIF orientation applied), shrunk by a power of two
 * to RN_DRAW_MAX_SIDE when larger (a JPEG decoded at that scale by libjpeg; people and intrinsics scaled with
 * it; intr->width and height are the image's). */
int rn_draw_people_file(const char *image, const rn_person_root *people, int n, const rn_people_pose *pose,
                        const rn_predict_info *intr, const char *out, rn_person_label *labels, rn_people_layout *layout,
                        rn_err *err);

/* The 3D picture of n people's camera-space joints (pose->cam), RN_DRAW_3D_W x RN_DRAW_3D_H pixels: on the left
 * seen from above (camera X to the right, depth Z up), on the right from the side (depth Z to the right, camera
 * Y down, so that people stand upright), both at one scale in mm with a grid and mm tick labels, each person's
 * bones and joints in rn_person_colour(i) with their number by the head. Joints that are not finite are left
 * out. intr (may be NULL): with default_focal, a note says that the focal was assumed. Returns 0, or -1 with err
 * naming out. */
#define RN_DRAW_3D_W 1200
#define RN_DRAW_3D_H 600
int rn_draw_people_3d(const rn_people_pose *pose, int n, const rn_predict_info *intr, const char *out, rn_err *err);

#endif
