/* Hashes of bytes, one copy of each.
 *
 *   uint64_t h = rn_hash64(buf, n, seed);              // fast; checks and names files
 *   uint64_t f = rn_fnv1a64(RN_FNV_OFFSET, s, n);      // FNV-1a, a byte a step
 *   f = rn_fnv1a64(f, more, m);                        // chained over several pieces
 *   uint64_t w = rn_fnvx64(RN_FNV_OFFSET, buf, n);     // eight bytes a step, with a fold
 *   uint32_t x = rn_mix32(i);                          // one integer's bits mixed
 *
 * Some values are kept in files and must never change: rn_hash64 (the dataset cache's
 * checksums, prepared frames' file names, the per-user cache folder's name) and rn_fnvx64
 * (a snapshot's "checksum" metadata). rn_fnv1a64 is printed as the JSONL log's
 * weights_fnv1a and hashes names in memory.
 */
#ifndef RN_CORE_HASH_H
#define RN_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define RN_FNV_OFFSET 0xcbf29ce484222325ULL
#define RN_FNV_PRIME 0x100000001b3ULL

/* murmur3's 64-bit finaliser: every bit of h moves every bit of the result. */
static inline uint64_t rn_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* A 32-bit integer mix (lowbias32): the synthetic images' per-pixel noise, so never change it. */
static inline uint32_t rn_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    return x ^ (x >> 16);
}

/* 64-bit hash of n bytes: four multiply-xorshift lanes over 32-byte blocks, mixed, then the tail. */
uint64_t rn_hash64(const void *data, size_t n, uint64_t seed);

/* FNV-1a over n bytes, continuing from h (RN_FNV_OFFSET to start). */
static inline uint64_t rn_fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * RN_FNV_PRIME;
    return h;
}

/* FNV-style over n bytes, eight (native-endian) at a time, each step folded
 * (h ^= h >> 29); the tail a byte at a time as rn_fnv1a64. Continues from h. */
uint64_t rn_fnvx64(uint64_t h, const void *data, size_t n);

#endif
