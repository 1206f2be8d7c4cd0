/* Bounded bump allocator (common/arena.h). Blocks are a header plus a
 * max_align_t-aligned payload; the newest block is carved from its start.
 * Pure, no I/O; one thread at a time. */
#include "common/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/rc.h"

struct arena_block {
    struct arena_block *next; /* older block */
    size_t cap;               /* payload bytes */
    size_t used;              /* payload bytes handed out, aligned */
    max_align_t payload[];    /* the flexible member aligns the payload */
};

#define ARENA__ALIGN (alignof(max_align_t))

void arena_init(struct arena *a, size_t max_bytes)
{
    a->blocks = NULL;
    a->held_bytes = 0;
    a->max_bytes = max_bytes;
}

static size_t arena_round_up(size_t n)
{
    return (n + ARENA__ALIGN - 1) & ~(ARENA__ALIGN - 1);
}

/* Payload bytes for a new block that must hold need bytes: double the
 * newest block (or the minimum), at least need, at most what the bound
 * leaves. Returns 0 when need does not fit under the bound. */
static size_t arena_next_cap(const struct arena *a, size_t need)
{
    size_t header = sizeof(struct arena_block);
    ASSERT(a->held_bytes <= a->max_bytes);
    size_t left = a->max_bytes - a->held_bytes;
    if (left < header || need > left - header) {
        return 0;
    }
    size_t room = left - header;
    size_t cap = ARENA__BLOCK_BYTES_MIN;
    if (a->blocks != NULL && a->blocks->cap <= SIZE_MAX / 2) {
        cap = a->blocks->cap * 2;
    }
    if (cap < need) {
        cap = need;
    }
    return cap < room ? cap : room;
}

/* Opens a block that can hold need bytes and makes it the newest. */
static int arena_grow(struct arena *a, size_t need)
{
    size_t cap = arena_next_cap(a, need);
    if (cap == 0) {
        return RC_TOO_LARGE;
    }
    struct arena_block *b = malloc(sizeof(*b) + cap);
    if (b == NULL) {
        return RC_NOMEM;
    }
    b->next = a->blocks;
    b->cap = cap;
    b->used = 0;
    a->blocks = b;
    a->held_bytes += sizeof(*b) + cap;
    ASSERT(a->held_bytes <= a->max_bytes);
    return RC_OK;
}

int arena_alloc(struct arena *a, size_t n, size_t size, void **out)
{
    *out = NULL;
    if (n == 0 || size == 0) {
        return RC_OK;
    }
    if (n > (SIZE_MAX - ARENA__ALIGN) / size) {
        return RC_TOO_LARGE;
    }
    size_t need = arena_round_up(n * size);
    struct arena_block *b = a->blocks;
    if (b == NULL || need > b->cap - b->used) {
        int rv = arena_grow(a, need);
        if (rv != RC_OK) {
            return rv;
        }
        b = a->blocks;
    }
    ASSERT(b->used % ARENA__ALIGN == 0);
    *out = (unsigned char *)b->payload + b->used;
    b->used += need;
    ASSERT(b->used <= b->cap);
    return RC_OK;
}

void arena_reset(struct arena *a)
{
    struct arena_block *keep = a->blocks;
    if (keep == NULL) {
        return;
    }
    struct arena_block *b = keep->next;
    while (b != NULL) {
        struct arena_block *next = b->next;
        a->held_bytes -= sizeof(*b) + b->cap;
        free(b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
}

void arena_free(struct arena *a)
{
    arena_reset(a);
    free(a->blocks);
    arena_init(a, a->max_bytes);
}
