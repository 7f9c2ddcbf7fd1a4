/* libFuzzer target: the box arguments of `rootnet demo` (rn_predict_parse_box).
 * Byte 0: bit 0 xyxy; bytes 1, 2: reserved for the image size. The rest is the --bbox value. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "train/predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    char *arg = malloc(size - 2);
    memcpy(arg, data + 3, size - 3);
    arg[size - 3] = '\0';
    rn_err err = {{0}};
    double box[4];
    int rc = rn_predict_parse_box(box, arg, data[0] & 1, &err);
    fuzz_check_err(rc, &err);
    if (!rc) RN_ASSERT(isfinite(box[0]) && isfinite(box[1]) && isfinite(box[2]) && isfinite(box[3]));
    free(arg);
    return 0;
}
