/* Big-endian loads and stores on raw memory, for fixed layouts such as the
 * RecordBatch header where a reader's bounds checks are already done once
 * for the whole header. Pure, inline, any thread. */
#ifndef CAIRN_COMMON_BYTES_H
#define CAIRN_COMMON_BYTES_H

#include <stdint.h>

static inline uint16_t bytes_be16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static inline uint32_t bytes_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t bytes_be64(const uint8_t *p)
{
    return ((uint64_t)bytes_be32(p) << 32) | bytes_be32(p + 4);
}

static inline void bytes_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void bytes_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void bytes_put_be64(uint8_t *p, uint64_t v)
{
    bytes_put_be32(p, (uint32_t)(v >> 32));
    bytes_put_be32(p + 4, (uint32_t)v);
}

#endif
