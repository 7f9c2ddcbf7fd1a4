/* libFuzzer target: the safetensors reader (rn_safetensors_parse). */
#include "fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_tensors(rn_safetensors_parse, data, size); }
