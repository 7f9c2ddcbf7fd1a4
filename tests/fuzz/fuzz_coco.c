/* libFuzzer target: the MSCOCO reader (rn_read_mscoco) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"_train2017.json", "_val2017.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_mscoco, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
