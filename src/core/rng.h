/* rn_rng: an explicit, seedable random number generator (splitmix64-seeded
 * xoshiro256**). Pass it where randomness is needed; never use rand().
 *
 *   rn_rng r; rn_rng_seed(&r, 42);
 *   float u = rn_rng_uniform(&r);      // [0, 1)
 *   float g = rn_rng_normal(&r);       // N(0, 1)
 */
#ifndef RN_CORE_RNG_H
#define RN_CORE_RNG_H

#include <stdint.h>

typedef struct rn_rng {
    uint64_t s[4];
} rn_rng;

/* Seeds the state from one 64-bit value. */
void rn_rng_seed(rn_rng *r, uint64_t seed);
/* Seeds from a seed and a stream id (e.g. sample index), independent streams. */
void rn_rng_seed2(rn_rng *r, uint64_t seed, uint64_t stream);
uint64_t rn_rng_u64(rn_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double rn_rng_uniform(rn_rng *r);
/* Standard normal (Box-Muller, no cached second value: the state is the only state). */
double rn_rng_normal(rn_rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t rn_rng_below(rn_rng *r, uint64_t n);

#endif
