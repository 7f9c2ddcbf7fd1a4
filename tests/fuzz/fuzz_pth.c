/* libFuzzer target: torch.save files, zip and legacy format (rn_pth_parse:
 * zip reader, pickle VM, storages, flattening into named tensors). */
#include "fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_tensors(rn_pth_parse, data, size); }
