/* Box and camera helpers exactly as the RootNet authors' pose_utils.py and
 * dataset.py compute them.
 *
 *   double in[4] = {10, 20, 100, 50}, out[4];
 *   if (rn_bbox_process(out, in, 0, 640, 480, 1.0, 100 * 50) == 0) {  // kept
 *       double k = rn_bbox_k(2000, 2000, fx, fy, out[2] * out[3]);
 *   }
 *   double px[3]; rn_cam2pixel(px, cam, f, c);
 */
#ifndef RN_DATA_BBOX_H
#define RN_DATA_BBOX_H

#include "core/status.h"

/* The authors' process_bbox: clip (x, y, w, h) to a width x height image,
 * keep it only if `positive` > 0 (w * h, or the annotation's area for COCO)
 * and the clipped box is non-empty, then grow it to the aspect ratio
 * aspect = input_w / input_h and enlarge 1.25x about its centre. integral != 0
 * reproduces numpy's integer array when all four inputs were JSON integers
 * (sizes and x, y truncated toward zero). Returns 0 kept, 1 dropped. */
int rn_bbox_process(double out[4], const double in[4], int integral, double width, double height,
                    double aspect, double positive);
/* k = sqrt(real_x * real_y * fx * fy / area), the authors' k value. */
/* 1 when a box read as x, y, w, h runs well past its width x height image (by
 * more than 10 % of the image's side, or by more than half the box's side):
 * most likely an x1, y1, x2, y2 box read as x, y, w, h. predict counts them,
 * demo warns. */
int rn_bbox_maybe_xyxy(const double box[4], int width, int height, double *past);
/* Range checks of camera intrinsics in pixels, one for every source (flags,
 * JSON, EXIF, the C API): a focal in [RN_FOCAL_MIN_PX, RN_FOCAL_MAX_PX], a
 * principal point within RN_PRINCPT_MAX_PX of the origin (both finite). 0, or
 * -1 with "focal (fx, fy) px: ..." in err (the caller prefixes the source). */
#define RN_FOCAL_MIN_PX 1.0
#define RN_FOCAL_MAX_PX 1e6
#define RN_PRINCPT_MAX_PX 1e6
int rn_focal_check(const double f[2], rn_err *err);
int rn_princpt_check(const double c[2], rn_err *err);
double rn_bbox_k(double real_x, double real_y, double fx, double fy, double area);
/* cam2pixel: x = X / (Z + 1e-8) * fx + cx, y likewise, depth = Z. */
void rn_cam2pixel(double px[3] /* out */, const double cam[3], const double f[2], const double c[2]);
/* world2cam: cam = R * world + t, R row-major 3x3. */
void rn_world2cam(double cam[3] /* out */, const double world[3], const double R[9], const double t[3]);

#endif
