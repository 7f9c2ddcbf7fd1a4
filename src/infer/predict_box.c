/* The box arguments of `rootnet demo` and the box rule of rn_predict_roots, apart
 * from the model so that tests/fuzz can reach them. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/bbox.h"
#include "infer/predict.h"

int rn_predict_parse_numbers(double *v, int n, const char *s, const char *flag, rn_err *err)
{
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        errno = 0;
        v[i] = strtod(p, &end);
        if (errno || end == p || !isfinite(v[i]))
            return rn_err_set(err, "%s '%s': expected %d comma-separated numbers", flag, s, n);
        p = end;
        if (i + 1 < n && *p++ != ',')
            return rn_err_set(err, "%s '%s': expected %d comma-separated numbers", flag, s, n);
    }
    if (*p) return rn_err_set(err, "%s '%s': expected %d comma-separated numbers", flag, s, n);
    return 0;
}

int rn_predict_parse_box(double out[4], const char *s, int xyxy, rn_err *err)
{
    if (rn_predict_parse_numbers(out, 4, s, "--bbox", err)) return -1;
    if (!xyxy) return 0;
    if (out[2] < out[0] || out[3] < out[1])
        return rn_err_set(err, "--bbox '%s': xyxy needs x2 >= x1 and y2 >= y1", s);
    out[2] -= out[0];
    out[3] -= out[1];
    return 0;
}

int rn_predict_box(double out[4], const double box[4], int width, int height, rn_err *err)
{
    return rn_predict_box_int(out, box, 0, width, height, err);
}

int rn_predict_box_int(double out[4], const double box[4], int integral, int width, int height, rn_err *err)
{
    for (int i = 0; i < 4; i++)
        if (!isfinite(box[i])) return rn_err_set(err, "coordinates must be finite numbers");
    for (int i = 0; i < 4; i++)
        if (fabs(box[i]) > RN_PREDICT_MAX_COORD)
            return rn_err_set(err, "box (%g, %g, %g, %g): coordinates beyond +-%d pixels", box[0], box[1], box[2],
                              box[3], RN_PREDICT_MAX_COORD);
    if (!(box[2] > 0) || !(box[3] > 0)) return rn_err_set(err, "empty box (width %g, height %g)", box[2], box[3]);
    if (box[0] >= width || box[1] >= height || box[0] + box[2] <= 0 || box[1] + box[3] <= 0)
        return rn_err_set(err, "box (%g, %g, %g, %g) lies outside the %d x %d image", box[0], box[1], box[2], box[3],
                          width, height);
    if (rn_bbox_process(out, box, integral, width, height, 1.0, box[2] * box[3]))
        return rn_err_set(err, "box (%g, %g, %g, %g) is empty once clipped to the %d x %d image", box[0], box[1],
                          box[2], box[3], width, height);
    return 0;
}
