/* libFuzzer target: JPEG and PNG decoding (rn_image_probe, rn_image_decode):
 * the whole image at full size, and for a JPEG also a region at a reduced
 * scale, both picked from the input's length. Images above FUZZ_MAX_PIXELS
 * are only probed: a few hundred bytes may declare 2^28 pixels (the decoder's
 * cap), whose decoding costs gigabytes and seconds and would stall the fuzzer.
 * FUZZ_IMAGE_ALL=1 (t_fuzz's replay of regressions) decodes them too. */
#include <stdlib.h>

#include "data/image/image.h"
#include "fuzz.h"

#define FUZZ_MAX_PIXELS (1 << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_image_info info;
    int rc = rn_image_probe(&info, data, size, &err);
    fuzz_check_err(rc, &err);
    if (rc) return 0;
    RN_ASSERT(info.w > 0 && info.h > 0);
    if ((int64_t)info.w * info.h > FUZZ_MAX_PIXELS && !getenv("FUZZ_IMAGE_ALL")) return 0;
    rn_image img = {0};
    rc = rn_image_decode(&img, data, size, 1, NULL, &err);
    fuzz_check_err(rc, &err);
    if (!rc) {
        RN_ASSERT(img.w == info.w && img.h == info.h && img.stride >= 3 * (size_t)img.w);
        fuzz_touch(img.px, img.stride * (size_t)(img.h - 1) + 3 * (size_t)img.w);
    }
    if (info.is_jpeg) {
        int scale = 1 << (size % 4), sw = (info.w + scale - 1) / scale, sh = (info.h + scale - 1) / scale;
        int roi[4] = {sw / 4, sh / 4, sw / 2 + 1, sh / 2 + 1};
        rc = rn_image_decode(&img, data, size, scale, roi, &err);
        fuzz_check_err(rc, &err);
        if (!rc && img.h > 0) fuzz_touch(img.px, img.stride * (size_t)(img.h - 1) + 3 * (size_t)img.w);
    }
    rn_image_free(&img);
    return 0;
}
