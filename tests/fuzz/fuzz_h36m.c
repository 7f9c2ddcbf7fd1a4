/* libFuzzer target: the Human3.6M reader (rn_read_human36m) on annotation files from memory (fuzz_reader.h). */
#include "fuzz_reader.h"

static const char *const FILES[] = {"_data.json", "_camera.json", "_joint_3d.json", "bbox_human36m_output.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(rn_read_human36m, FILES, sizeof FILES / sizeof FILES[0], data, size);
}
