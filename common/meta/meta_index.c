/* The partition index (common/meta/meta_index.h). */
#include "common/meta/meta_index.h"

#include <stdlib.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/rc.h"

#define META_INDEX_MIN_CAP 16

static uint64_t mix(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

static uint64_t key_hash(const struct meta_uuid *id, int32_t partition)
{
    uint64_t lo;
    uint64_t hi;
    memcpy(&lo, id->b, sizeof lo);
    memcpy(&hi, id->b + 8, sizeof hi);
    uint64_t p = (uint64_t)(uint32_t)partition * 0x9e3779b97f4a7c15ULL;
    return mix(lo ^ mix(hi ^ p));
}

static bool key_eq(const struct meta_index_slot *s, const struct meta_uuid *id,
                   int32_t partition)
{
    return s->partition == partition && memcmp(s->id, id->b, sizeof s->id) == 0;
}

void meta_index_init(struct meta_index *x)
{
    memset(x, 0, sizeof *x);
}

void meta_index_free(struct meta_index *x)
{
    free(x->slots);
    meta_index_init(x);
}

void meta_index_clear(struct meta_index *x)
{
    if (x->slots != NULL) {
        memset(x->slots, 0, x->cap * sizeof x->slots[0]);
    }
    x->n = 0;
}

/* The slot of (id, partition), or of the free slot where it would go. */
static size_t probe(const struct meta_index *x, const struct meta_uuid *id,
                    int32_t partition)
{
    size_t mask = x->cap - 1;
    size_t i = (size_t)key_hash(id, partition) & mask;
    while (x->slots[i].value != NULL && !key_eq(&x->slots[i], id, partition)) {
        i = (i + 1) & mask;
    }
    return i;
}

static int grow(struct meta_index *x)
{
    size_t cap = x->cap == 0 ? META_INDEX_MIN_CAP : x->cap * 2;
    if (cap > SIZE_MAX / sizeof x->slots[0]) {
        return RC_NOMEM;
    }
    struct meta_index_slot *slots = calloc(cap, sizeof slots[0]);
    if (slots == NULL) {
        return RC_NOMEM;
    }
    struct meta_index old = *x;
    x->slots = slots;
    x->cap = cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (old.slots[i].value != NULL) {
            struct meta_uuid id;
            memcpy(id.b, old.slots[i].id, sizeof id.b);
            x->slots[probe(x, &id, old.slots[i].partition)] = old.slots[i];
        }
    }
    free(old.slots);
    return RC_OK;
}

int meta_index_put(struct meta_index *x, const struct meta_uuid *id,
                   int32_t partition, void *value)
{
    ASSERT(value != NULL);
    if ((x->n + 1) * 4 > x->cap * 3) {
        int rv = grow(x);
        if (rv != RC_OK) {
            return rv;
        }
    }
    size_t i = probe(x, id, partition);
    if (x->slots[i].value == NULL) {
        x->n++;
        memcpy(x->slots[i].id, id->b, sizeof x->slots[i].id);
        x->slots[i].partition = partition;
    }
    x->slots[i].value = value;
    return RC_OK;
}

void *meta_index_get(const struct meta_index *x, const struct meta_uuid *id,
                     int32_t partition)
{
    if (x->n == 0) {
        return NULL;
    }
    return x->slots[probe(x, id, partition)].value;
}

bool meta_index_remove(struct meta_index *x, const struct meta_uuid *id,
                       int32_t partition)
{
    if (x->n == 0) {
        return false;
    }
    size_t mask = x->cap - 1;
    size_t hole = probe(x, id, partition);
    if (x->slots[hole].value == NULL) {
        return false;
    }
    /* Backward shift: each later entry of the run that may sit in the
     * hole (its home is not strictly between the hole and it) moves
     * there, so no probe ever stops early at a freed slot. */
    size_t i = hole;
    for (;;) {
        i = (i + 1) & mask;
        if (x->slots[i].value == NULL) {
            break;
        }
        struct meta_uuid at;
        memcpy(at.b, x->slots[i].id, sizeof at.b);
        size_t home = (size_t)key_hash(&at, x->slots[i].partition) & mask;
        bool stays = hole <= i ? (hole < home && home <= i)
                               : (hole < home || home <= i);
        if (!stays) {
            x->slots[hole] = x->slots[i];
            hole = i;
        }
    }
    memset(&x->slots[hole], 0, sizeof x->slots[hole]);
    x->n--;
    return true;
}

struct meta_uuid meta_index_name_key(const char *name)
{
    return meta_index_name_key_n(name, strlen(name));
}

struct meta_uuid meta_index_name_key_n(const char *name, size_t len)
{
    uint64_t a = 0xcbf29ce484222325ULL; /* FNV-1a, 64 bits */
    uint64_t b = 0x84222325cbf29ce4ULL;
    const unsigned char *c = (const unsigned char *)name;
    for (size_t i = 0; i < len; i++) {
        a = (a ^ c[i]) * 0x100000001b3ULL;
        b = mix(b ^ c[i]);
    }
    struct meta_uuid k;
    memcpy(k.b, &a, sizeof a);
    memcpy(k.b + 8, &b, sizeof b);
    return k;
}
