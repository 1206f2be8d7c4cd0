/* Test helper: RecordBatch v2 builder (tests/lib/batch_builder.h). */
#include "tests/lib/batch_builder.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/record_batch.h"
#include "common/assert.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/writer.h"

static uint8_t value_byte(uint32_t seed, int32_t rec, size_t i)
{
    uint32_t x = seed * 2654435761u ^ (uint32_t)rec * 40503u ^ (uint32_t)i;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    return (uint8_t)(x >> 24);
}

struct built_batch batch_build(int32_t n_records, size_t value_bytes,
                               int64_t base_ts, uint32_t seed)
{
    ASSERT(n_records > 0);
    struct writer w;
    writer_init(&w, 64u * 1024 * 1024);
    writer_i64(&w, 0);                   /* baseOffset */
    size_t len_pos = writer_reserve(&w, 4);
    writer_i32(&w, -1);                  /* partitionLeaderEpoch */
    writer_i8(&w, 2);                    /* magic */
    size_t crc_pos = writer_reserve(&w, 4);
    writer_i16(&w, 0);                   /* attributes */
    writer_i32(&w, n_records - 1);       /* lastOffsetDelta */
    writer_i64(&w, base_ts);
    writer_i64(&w, base_ts + n_records - 1);
    writer_i64(&w, -1);                  /* producerId */
    writer_i16(&w, -1);
    writer_i32(&w, -1);
    writer_i32(&w, n_records);
    uint8_t *val = malloc(value_bytes == 0 ? 1 : value_bytes);
    ASSERT(val != NULL);
    for (int32_t r = 0; r < n_records; r++) {
        for (size_t i = 0; i < value_bytes; i++) {
            val[i] = value_byte(seed, r, i);
        }
        int32_t body = (int32_t)(1 + writer_varlong_size(r) +
                                 writer_varint_size(r) +
                                 writer_varint_size(-1) +
                                 writer_varint_size((int32_t)value_bytes) +
                                 value_bytes + writer_varint_size(0));
        writer_varint(&w, body);
        writer_i8(&w, 0);
        writer_varlong(&w, r);          /* timestampDelta */
        writer_varint(&w, r);           /* offsetDelta */
        writer_varint(&w, -1);          /* null key */
        writer_varint(&w, (int32_t)value_bytes);
        writer_raw(&w, val, value_bytes);
        writer_varint(&w, 0);           /* no headers */
    }
    free(val);
    ASSERT(w.rc == 0);
    writer_patch_i32(&w, len_pos, (int32_t)(w.len - 12));
    uint32_t crc = crc32c(w.data + 21, w.len - 21);
    bytes_put_be32(w.data + crc_pos, crc);
    return (struct built_batch){.bytes = w.data, .len = w.len};
}

void built_batch_free(struct built_batch *b)
{
    free(b->bytes);
    b->bytes = NULL;
    b->len = 0;
}

int batch_same_payload(const uint8_t *stored, const struct built_batch *b)
{
    return memcmp(stored + 8, b->bytes + 8, 4) == 0 &&
           memcmp(stored + 16, b->bytes + 16, b->len - 16) == 0;
}
