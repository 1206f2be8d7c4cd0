/* Compact (KIP-482 flexible version) forms for the byte builder, so that
 * codec tests build expected bytes of flexible versions by hand: uvarint
 * counts and lengths (value + 1, 0 for null), empty and one-field tagged
 * sections, and 16-byte topic ids. */
#ifndef CAIRN_TESTS_UNIT_COMMON_KAFKA_CODEC_COMPACT_BB_H
#define CAIRN_TESTS_UNIT_COMMON_KAFKA_CODEC_COMPACT_BB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/lib/byte_builder.h"

static inline void cbb_uvarint(struct bb *x, uint32_t v)
{
    while (v >= 0x80) {
        bb_u8(x, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    bb_u8(x, (uint8_t)v);
}

/* COMPACT_(NULLABLE_)STRING: NULL is the null string. */
static inline void cbb_str(struct bb *x, const char *s)
{
    if (s == NULL) {
        cbb_uvarint(x, 0);
        return;
    }
    cbb_uvarint(x, (uint32_t)strlen(s) + 1);
    bb_raw(x, (const uint8_t *)s, strlen(s));
}

/* COMPACT_BYTES: length + 1, then the bytes. */
static inline void cbb_bytes(struct bb *x, const uint8_t *p, size_t n)
{
    cbb_uvarint(x, (uint32_t)n + 1);
    bb_raw(x, p, n);
}

/* COMPACT_ARRAY count: -1 is the null array. */
static inline void cbb_count(struct bb *x, int32_t n)
{
    cbb_uvarint(x, (uint32_t)(n + 1));
}

/* An empty tagged-field section. */
static inline void cbb_tags(struct bb *x)
{
    cbb_uvarint(x, 0);
}

/* A tagged-field section of one field: tag, then `n` bytes of `p`. */
static inline void cbb_tag1(struct bb *x, uint32_t tag, const uint8_t *p,
                            uint32_t n)
{
    cbb_uvarint(x, 1);
    cbb_uvarint(x, tag);
    cbb_uvarint(x, n);
    bb_raw(x, p, n);
}

static inline void cbb_uuid(struct bb *x, const uint8_t b[16])
{
    bb_raw(x, b, 16);
}

#endif
