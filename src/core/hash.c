#include "core/hash.h"

#include <string.h>

uint64_t rn_hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t lane[4] = {seed ^ 0x9e3779b97f4a7c15ULL, seed + 0x632be59bd9b4e019ULL, ~seed, seed * 3 + 1};
    const uint64_t P = 0x9fb21c651e98df25ULL;
    size_t blocks = n / 32;
    for (size_t b = 0; b < blocks; b++)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, p + b * 32 + (size_t)l * 8, 8);
            lane[l] = (lane[l] ^ w) * P;
            lane[l] ^= lane[l] >> 29;
        }
    uint64_t h = (uint64_t)n * P;
    for (int l = 0; l < 4; l++) h = rn_mix64(h ^ lane[l]) * P;
    return rn_mix64(rn_fnv1a64(h, p + blocks * 32, n - blocks * 32));
}

uint64_t rn_fnvx64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * RN_FNV_PRIME;
        h ^= h >> 29;
    }
    return rn_fnv1a64(h, p + i, n - i);
}
