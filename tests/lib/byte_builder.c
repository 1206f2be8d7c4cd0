/* Expected-bytes builder for codec tests (tests/lib/byte_builder.h). */
#include "tests/lib/byte_builder.h"

#include <string.h>

#include "common/assert.h"

void bb_u8(struct bb *x, uint8_t v)
{
    ASSERT(x->n < sizeof(x->b));
    x->b[x->n++] = v;
}

void bb_be(struct bb *x, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        bb_u8(x, (uint8_t)(v >> (8 * i)));
    }
}

void bb_i8(struct bb *x, int8_t v) { bb_be(x, (uint8_t)v, 1); }
void bb_i16(struct bb *x, int16_t v) { bb_be(x, (uint16_t)v, 2); }
void bb_i32(struct bb *x, int32_t v) { bb_be(x, (uint32_t)v, 4); }
void bb_i64(struct bb *x, int64_t v) { bb_be(x, (uint64_t)v, 8); }

void bb_raw(struct bb *x, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bb_u8(x, p[i]);
    }
}

void bb_str(struct bb *x, const char *s)
{
    if (s == NULL) {
        bb_i16(x, -1);
        return;
    }
    bb_i16(x, (int16_t)strlen(s));
    bb_raw(x, (const uint8_t *)s, strlen(s));
}
