/* libFuzzer target: the MuCo-3DHP reader (rn_read_muco) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"MuCo-3DHP.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_muco, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
