/* libFuzzer target: the MPII reader (rn_read_mpii) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"train.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_mpii, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
