/* libFuzzer target: the .npy reader (rn_npy_parse). */
#include "fuzz.h"
#include "io/tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_tensor t = {0};
    int rc = rn_npy_parse(&t, data, size, FUZZ_NAME, &err);
    fuzz_check_err(rc, &err);
    if (!rc) {
        RN_ASSERT(t.nbytes == (size_t)rn_tensor_numel(&t) * rn_dtype_size(t.dtype));
        fuzz_touch(t.data, t.nbytes);
        rn_tensor_free(&t);
    }
    return 0;
}
