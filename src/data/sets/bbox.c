#include "data/sets/bbox.h"

#include <math.h>

static double trunc_if(double v, int integral) { return integral ? trunc(v) : v; }

static int sanitize(double b[4], const double in[4], int integral, double width, double height,
                    double positive)
{
    double x = in[0], y = in[1], w = in[2], h = in[3];
    double x1 = fmax(0.0, x), y1 = fmax(0.0, y);
    double x2 = fmin(width - 1, x1 + fmax(0.0, w - 1));
    double y2 = fmin(height - 1, y1 + fmax(0.0, h - 1));
    if (!(positive > 0 && x2 >= x1 && y2 >= y1)) return 1;
    b[0] = x1;
    b[1] = y1;
    b[2] = trunc_if(x2 - x1, integral);
    b[3] = trunc_if(y2 - y1, integral);
    return 0;
}

int rn_bbox_process(double out[4], const double in[4], int integral, double width, double height,
                    double aspect, double positive)
{
    double b[4];
    if (sanitize(b, in, integral, width, height, positive)) return 1;
    double w = b[2], h = b[3];
    double cx = b[0] + w / 2.0, cy = b[1] + h / 2.0;
    if (w > aspect * h)
        h = w / aspect;
    else if (w < aspect * h)
        w = h * aspect;
    out[2] = trunc_if(w * 1.25, integral);
    out[3] = trunc_if(h * 1.25, integral);
    out[0] = trunc_if(cx - out[2] / 2.0, integral);
    out[1] = trunc_if(cy - out[3] / 2.0, integral);
    return out[2] * out[3] > 0 ? 0 : 1;
}

double rn_bbox_k(double real_x, double real_y, double fx, double fy, double area)
{
    return sqrt(real_x * real_y * fx * fy / area);
}

void rn_cam2pixel(double px[3], const double cam[3], const double f[2], const double c[2])
{
    px[0] = cam[0] / (cam[2] + 1e-8) * f[0] + c[0];
    px[1] = cam[1] / (cam[2] + 1e-8) * f[1] + c[1];
    px[2] = cam[2];
}

void rn_world2cam(double cam[3], const double world[3], const double R[9], const double t[3])
{
    for (int i = 0; i < 3; i++) cam[i] = R[3 * i] * world[0] + R[3 * i + 1] * world[1] + R[3 * i + 2] * world[2] + t[i];
}

int rn_bbox_maybe_xyxy(const double box[4], int width, int height, double *past)
{
    double past_x = fmax(0, -box[0]) + fmax(0, box[0] + box[2] - width);
    double past_y = fmax(0, -box[1]) + fmax(0, box[1] + box[3] - height);
    if (past) *past = fmax(past_x, past_y);
    return past_x > 0.1 * width || past_x > 0.5 * box[2] || past_y > 0.1 * height || past_y > 0.5 * box[3];
}

int rn_focal_check(const double f[2], rn_err *err)
{
    for (int j = 0; j < 2; j++)
        if (!(f[j] >= RN_FOCAL_MIN_PX && f[j] <= RN_FOCAL_MAX_PX))
            return rn_err_set(err, "focal (%g, %g) px: each must be in [%g, %g] px", f[0], f[1], RN_FOCAL_MIN_PX,
                              RN_FOCAL_MAX_PX);
    return 0;
}

int rn_princpt_check(const double c[2], rn_err *err)
{
    for (int j = 0; j < 2; j++)
        if (!(fabs(c[j]) <= RN_PRINCPT_MAX_PX))
            return rn_err_set(err, "principal point (%g, %g) px: each must be within %g px of the image origin", c[0],
                              c[1], RN_PRINCPT_MAX_PX);
    return 0;
}
