/* libFuzzer target: the 3DPW reader (rn_read_pw3d) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"3DPW_train.json", "3DPW_test.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_pw3d, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
