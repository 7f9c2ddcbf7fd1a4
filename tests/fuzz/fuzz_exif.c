/* libFuzzer target: the EXIF focal length (rn_exif_focal_read, libexif on the
 * first APP1 Exif segment of a JPEG). The image size comes from the input's
 * length. A found focal must be finite and positive; "none" (1) leaves no
 * message; broken (-1) leaves one line. */
#include <math.h>

#include "data/image/exif_focal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_exif_focal ef;
    int w = 1 + (int)(size % 4000), h = 1 + (int)((size / 7) % 3000);
    int rc = rn_exif_focal_read(&ef, data, size, w, h, &err);
    RN_ASSERT(rc >= -1 && rc <= 1);
    if (rc < 0) fuzz_check_err(rc, &err);
    if (rc == 0) RN_ASSERT(ef.f[0] > 0 && ef.f[1] > 0 && isfinite(ef.f[0]) && isfinite(ef.f[1]) && ef.source);
    return 0;
}
