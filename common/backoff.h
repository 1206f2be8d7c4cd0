/* Jittered back-off, shared by every retry loop (controller calls,
 * partition opens, follower reconnects): a pause of about `pause`,
 * between 3/4 and 5/4 of it, so that nodes failing together do not retry
 * in step. The randomness is a caller-owned xorshift64 state (seed it
 * with any non-zero value, e.g. uv_hrtime() | 1), so pure code and the
 * simulation stay deterministic. Pure. */
#ifndef CAIRN_COMMON_BACKOFF_H
#define CAIRN_COMMON_BACKOFF_H

#include <stdint.h>

/* The next value of the xorshift64 state *state (never 0 if seeded
 * non-zero). */
static inline uint64_t backoff_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* pause jittered by up to a quarter either way, drawn from rand. */
static inline uint64_t backoff_jitter(uint64_t pause, uint64_t rand)
{
    return pause * 3 / 4 + rand % (pause / 2 + 1);
}

#endif
