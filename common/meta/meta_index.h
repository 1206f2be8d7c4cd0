/* An index from a partition's key, (topic id, partition), to a pointer:
 * open addressing with linear probing, grown to keep the load at most
 * 3/4, and backward-shift removal (no tombstones), so every lookup,
 * insert and removal costs O(1) expected whatever the number of keys.
 * A topic is indexed with partition META_INDEX_TOPIC (-1), by name with
 * META_INDEX_NAME (-2).
 *
 * Pure: no I/O, no clock; allocates only as it grows. Not thread-safe. */
#ifndef CAIRN_COMMON_META_INDEX_H
#define CAIRN_COMMON_META_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

struct meta_uuid;

#define META_INDEX_TOPIC (-1)
#define META_INDEX_NAME (-2) /* a topic by meta_index_name_key() */

struct meta_index_slot {
    uint8_t id[16]; /* a struct meta_uuid's bytes */
    int32_t partition;
    void *value; /* NULL: the slot is free */
};

struct meta_index {
    struct meta_index_slot *slots;
    size_t cap; /* 0, or a power of two */
    size_t n;
};

void meta_index_init(struct meta_index *x);
void meta_index_free(struct meta_index *x);
/* Forgets every key (keeps the memory). */
void meta_index_clear(struct meta_index *x);

/* Maps (id, partition) to value (not NULL), replacing what it mapped to.
 * RC_NOMEM when it cannot grow (the index is unchanged). */
MUST_CHECK int meta_index_put(struct meta_index *x, const struct meta_uuid *id,
                              int32_t partition, void *value);

/* What (id, partition) maps to, or NULL. */
void *meta_index_get(const struct meta_index *x, const struct meta_uuid *id,
                     int32_t partition);

/* Forgets (id, partition); false when it was not there. */
bool meta_index_remove(struct meta_index *x, const struct meta_uuid *id,
                       int32_t partition);

/* A key for a name (a topic's), for indexing by name: a 128-bit hash, so
 * two names share one only by a collision the caller must rule out by
 * comparing the names of what it finds. */
struct meta_uuid meta_index_name_key(const char *name);
/* The same for the len bytes at name (no terminating NUL needed). */
struct meta_uuid meta_index_name_key_n(const char *name, size_t len);

#endif
