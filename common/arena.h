/* Bounded bump allocator for the arrays of one decoded message (a Kafka
 * request's topics and partitions): a few blocks, each malloc'd once and
 * carved up in order, all released together. A decode does one malloc in
 * the common case and a handful at most; arena_reset() keeps the newest
 * block, so an arena reused per connection stops calling malloc at all.
 *
 * The arena never holds more than max_bytes of blocks (headers included):
 * an allocation that would need more fails with RC_TOO_LARGE, so a peer's
 * counts cannot make us allocate without bound (common/limits.h,
 * ARENA_BYTES_MAX). A failed malloc is RC_NOMEM.
 *
 * Blocks grow geometrically (ARENA__BLOCK_BYTES_MIN, then doubling, capped
 * by what the bound leaves); only the newest block is carved, so the tail
 * of an older block is abandoned when a bigger one is opened.
 *
 * Memory returned is aligned for any type and stays valid until
 * arena_reset() or arena_free(); it is not zeroed. The arena owns its
 * blocks. Pure, no I/O; one thread at a time. */
#ifndef CAIRN_COMMON_ARENA_H
#define CAIRN_COMMON_ARENA_H

#include <stddef.h>

#include "common/assert.h"

/* First block's payload bytes: a typical request's arrays fit here. */
#define ARENA__BLOCK_BYTES_MIN 4096u

struct arena_block;

struct arena {
    struct arena_block *blocks; /* newest first; only it is carved */
    size_t held_bytes;          /* malloc'd bytes, headers included */
    size_t max_bytes;           /* held_bytes never exceeds this */
};

/* An empty arena that will hold at most max_bytes; allocates nothing. */
void arena_init(struct arena *a, size_t max_bytes);

/* n elements of size bytes each, uninitialised, in *out. n == 0 (or
 * size == 0) gives *out == NULL and RC_OK without allocating. RC_TOO_LARGE
 * when n * size overflows or the arena's bound would be exceeded,
 * RC_NOMEM when malloc fails; *out is NULL on failure. */
MUST_CHECK int arena_alloc(struct arena *a, size_t n, size_t size,
                           void **out);

/* Forgets every allocation (their memory is reused) and keeps the newest
 * block, the largest, for the next use. */
void arena_reset(struct arena *a);

/* Frees every block; the arena is empty again, with the same bound. */
void arena_free(struct arena *a);

#endif
