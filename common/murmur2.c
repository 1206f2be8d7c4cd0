/* Kafka's murmur2 (common/murmur2.h). Java does the arithmetic on int with
 * wrap-around and uses >>> (logical shift); here it is done on uint32_t,
 * where C defines the same wrap-around, and converted to int32_t at the
 * end. Pure, any thread. */
#include "common/murmur2.h"

#include "common/assert.h"

#define MURMUR2__SEED 0x9747b28cu
#define MURMUR2__M 0x5bd1e995u
#define MURMUR2__R 24

static uint32_t murmur2_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* The 1 to 3 bytes after the last full block. Java's switch falls through
 * from case 3 to 2 to 1; the same steps are written out as ifs here. */
static uint32_t murmur2_tail(uint32_t h, const uint8_t *tail, size_t n)
{
    ASSERT(n > 0);
    ASSERT(n < 4);
    if (n == 3) {
        h ^= (uint32_t)tail[2] << 16;
    }
    if (n >= 2) {
        h ^= (uint32_t)tail[1] << 8;
    }
    h ^= tail[0];
    return h * MURMUR2__M;
}

int32_t murmur2(const void *data, size_t len)
{
    ASSERT(data != NULL || len == 0);
    const uint8_t *p = data;
    uint32_t h = MURMUR2__SEED ^ (uint32_t)len;
    size_t blocks = len / 4;
    for (size_t i = 0; i < blocks; i++) {
        uint32_t k = murmur2_load_le32(p + 4 * i);
        k *= MURMUR2__M;
        k ^= k >> MURMUR2__R;
        k *= MURMUR2__M;
        h *= MURMUR2__M;
        h ^= k;
    }
    if (len % 4 != 0) {
        h = murmur2_tail(h, p + 4 * blocks, len % 4);
    }
    h ^= h >> 13;
    h *= MURMUR2__M;
    h ^= h >> 15;
    return (int32_t)h;
}

int32_t murmur2_to_positive(int32_t h)
{
    return (int32_t)((uint32_t)h & 0x7fffffffu);
}

int32_t murmur2_partition(const void *key, size_t len,
                          int32_t num_partitions)
{
    ASSERT(num_partitions > 0);
    return murmur2_to_positive(murmur2(key, len)) % num_partitions;
}
