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

/* The authors' process_bbox: clip (x, y, w, h) to a width x height image,
 * keep it only if `positive` > 0 (w * h, or the annotation's area for COCO)
 * and the clipped box is non-empty, then grow it to the aspect ratio
 * aspect = input_w / input_h and enlarge 1.25x about its centre. integral != 0
 * reproduces numpy's integer array when all four inputs were JSON integers
 * (sizes and x, y truncated toward zero). Returns 0 kept, 1 dropped. */
int rn_bbox_process(double out[4], const double in[4], int integral, double width, double height,
                    double aspect, double positive);
/* k = sqrt(real_x * real_y * fx * fy / area), the authors' k value. */
double rn_bbox_k(double real_x, double real_y, double fx, double fy, double area);
/* cam2pixel: x = X / (Z + 1e-8) * fx + cx, y likewise, depth = Z. */
void rn_cam2pixel(double px[3] /* out */, const double cam[3], const double f[2], const double c[2]);
/* world2cam: cam = R * world + t, R row-major 3x3. */
void rn_world2cam(double cam[3] /* out */, const double world[3], const double R[9], const double t[3]);

#endif
