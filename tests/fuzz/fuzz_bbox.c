/* libFuzzer target: the box arguments of `rootnet demo` (rn_predict_parse_box)
 * and the box rule every predicted box goes through (rn_predict_box, then k).
 * Byte 0: bit 0 xyxy; the image is (1 + byte 1 * 64) x (1 + byte 2 * 64)
 * pixels. The rest is the --bbox value. */
#include <math.h>
#include <stdlib.h>

#include "data/sets/bbox.h"
#include "fuzz.h"
#include "infer/predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    char *arg = malloc(size - 2);
    memcpy(arg, data + 3, size - 3);
    arg[size - 3] = '\0';
    int w = 1 + data[1] * 64, h = 1 + data[2] * 64;
    rn_err err = {{0}};
    double box[4], out[4];
    int rc = rn_predict_parse_box(box, arg, data[0] & 1, &err);
    fuzz_check_err(rc, &err);
    if (!rc) {
        rc = rn_predict_box(out, box, w, h, &err);
        fuzz_check_err(rc, &err);
    }
    if (!rc) {
        RN_ASSERT(isfinite(out[0]) && isfinite(out[1]) && out[2] > 0 && out[3] > 0 && isfinite(out[2] * out[3]));
        RN_ASSERT(isfinite(rn_bbox_k(2000.0, 2000.0, 1500.0, 1500.0, out[2] * out[3])));
    }
    free(arg);
    return 0;
}
