/* libFuzzer target: the MuPoTS-3D reader (rn_read_mupots) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"MuPoTS-3D.json", "bbox_mupots_output.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_mupots, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
