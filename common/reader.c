/* Byte reader for Kafka's wire encoding (common/reader.h). Every read goes
 * through reader_take(), the one place that checks bounds; composite reads
 * (length prefix + body) put pos back where they started when any part
 * fails, so a failing read consumes nothing. Pure, any thread. */
#include "common/reader.h"

#include "common/assert.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"

/* What empty non-null slices point at: a reader over NULL, and every slice
 * returned after an error. */
static const uint8_t reader__empty[1];

void reader_init(struct reader *r, const void *p, size_t len)
{
    ASSERT(p != NULL || len == 0);
    r->p = p != NULL ? p : reader__empty;
    r->len = len;
    r->pos = 0;
    r->rc = RC_OK;
    r->compact = false;
}

size_t reader_remaining(const struct reader *r)
{
    ASSERT(r->pos <= r->len);
    return r->len - r->pos;
}

bool reader_done(const struct reader *r)
{
    return r->rc == RC_OK && reader_remaining(r) == 0;
}

/* Records rc unless an earlier failure already did: first failure wins. */
static void reader_fail(struct reader *r, int rc)
{
    ASSERT(rc != RC_OK);
    if (r->rc == RC_OK) {
        r->rc = rc;
    }
}

/* Fails and rewinds to start, the position before a composite read. */
static void reader_fail_at(struct reader *r, size_t start, int rc)
{
    ASSERT(start <= r->len);
    reader_fail(r, rc);
    r->pos = start;
}

static struct slice reader_empty_slice(void)
{
    struct slice s = {reader__empty, 0};
    return s;
}

/* Consumes n bytes and returns where they start, or NULL (consuming
 * nothing) after an error or when fewer than n are left. Never returns
 * NULL on success, even for n == 0. */
static const uint8_t *reader_take(struct reader *r, size_t n)
{
    if (r->rc != RC_OK) {
        return NULL;
    }
    if (n > reader_remaining(r)) {
        reader_fail(r, RC_SHORT);
        return NULL;
    }
    const uint8_t *at = r->p + r->pos;
    r->pos += n;
    return at;
}

int8_t reader_i8(struct reader *r)
{
    const uint8_t *at = reader_take(r, 1);
    return at != NULL ? (int8_t)at[0] : 0;
}

bool reader_bool(struct reader *r)
{
    return reader_i8(r) != 0;
}

int16_t reader_i16(struct reader *r)
{
    const uint8_t *at = reader_take(r, 2);
    return at != NULL ? (int16_t)bytes_be16(at) : 0;
}

int32_t reader_i32(struct reader *r)
{
    const uint8_t *at = reader_take(r, 4);
    return at != NULL ? (int32_t)bytes_be32(at) : 0;
}

uint32_t reader_u32(struct reader *r)
{
    const uint8_t *at = reader_take(r, 4);
    return at != NULL ? bytes_be32(at) : 0;
}

int64_t reader_i64(struct reader *r)
{
    const uint8_t *at = reader_take(r, 8);
    return at != NULL ? (int64_t)bytes_be64(at) : 0;
}

/* Base-128 varint of at most value_bits (32 or 64) bits. The last byte a
 * value can use holds the leftover high bits (4 for 32, 1 for 64); more
 * bits there is overflow, a continuation bit there is overlong. Both are
 * RC_MALFORMED; running out of input first is RC_SHORT. */
static uint64_t reader_varbits(struct reader *r, unsigned value_bits)
{
    const unsigned bytes_max = (value_bits + 6) / 7;
    const unsigned last_bits = value_bits - 7 * (bytes_max - 1);
    if (r->rc != RC_OK) {
        return 0;
    }
    size_t avail = reader_remaining(r);
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes_max; i++) {
        if (i == avail) {
            reader_fail(r, RC_SHORT);
            return 0;
        }
        uint8_t b = r->p[r->pos + i];
        if (i == bytes_max - 1 && (b >> last_bits) != 0) {
            reader_fail(r, RC_MALFORMED);
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) {
            r->pos += i + 1;
            return v;
        }
    }
    ASSERT(false); /* the last byte's continuation bit fails above */
    return 0;
}

uint32_t reader_uvarint(struct reader *r)
{
    return (uint32_t)reader_varbits(r, 32);
}

int32_t reader_varint(struct reader *r)
{
    uint32_t z = reader_uvarint(r);
    return (int32_t)((z >> 1) ^ (0u - (z & 1u)));
}

int64_t reader_varlong(struct reader *r)
{
    uint64_t z = reader_varbits(r, 64);
    return (int64_t)((z >> 1) ^ (0u - (z & 1u)));
}

/* The body of a length-prefixed value whose prefix began at start. */
static struct slice reader_body(struct reader *r, size_t start, size_t n)
{
    const uint8_t *at = reader_take(r, n);
    if (at == NULL) {
        reader_fail_at(r, start, RC_SHORT);
        return reader_empty_slice();
    }
    struct slice s = {at, n};
    return s;
}

/* A body of length n (read from a prefix at start): -1 is null when
 * nullable, anything else negative or above len_max is malformed. */
static struct slice reader_sized(struct reader *r, size_t start, int64_t n,
                                 bool nullable, uint64_t len_max)
{
    if (r->rc != RC_OK) {
        r->pos = start;
        return reader_empty_slice();
    }
    if (n == -1 && nullable) {
        return slice_null();
    }
    if (n < 0 || (uint64_t)n > len_max) {
        reader_fail_at(r, start, RC_MALFORMED);
        return reader_empty_slice();
    }
    return reader_body(r, start, (size_t)n);
}

struct slice reader_string(struct reader *r)
{
    if (r->compact) {
        return reader_compact_string(r);
    }
    size_t start = r->pos;
    int16_t n = reader_i16(r);
    return reader_sized(r, start, n, false, KAFKA_STRING_BYTES_MAX);
}

struct slice reader_nullable_string(struct reader *r)
{
    if (r->compact) {
        return reader_compact_nullable_string(r);
    }
    size_t start = r->pos;
    int16_t n = reader_i16(r);
    return reader_sized(r, start, n, true, KAFKA_STRING_BYTES_MAX);
}

struct slice reader_bytes(struct reader *r)
{
    if (r->compact) {
        return reader_compact_bytes(r);
    }
    size_t start = r->pos;
    int32_t n = reader_i32(r);
    return reader_sized(r, start, n, false, INT32_MAX);
}

struct slice reader_nullable_bytes(struct reader *r)
{
    if (r->compact) {
        return reader_compact_nullable_bytes(r);
    }
    size_t start = r->pos;
    int32_t n = reader_i32(r);
    return reader_sized(r, start, n, true, INT32_MAX);
}

struct slice reader_raw(struct reader *r, size_t n)
{
    const uint8_t *at = reader_take(r, n);
    if (at == NULL) {
        return reader_empty_slice();
    }
    struct slice s = {at, n};
    return s;
}

struct slice reader_compact_string(struct reader *r)
{
    size_t start = r->pos;
    int64_t n = (int64_t)reader_uvarint(r) - 1;
    return reader_sized(r, start, n, false, KAFKA_STRING_BYTES_MAX);
}

struct slice reader_compact_nullable_string(struct reader *r)
{
    size_t start = r->pos;
    int64_t n = (int64_t)reader_uvarint(r) - 1;
    return reader_sized(r, start, n, true, KAFKA_STRING_BYTES_MAX);
}

struct slice reader_compact_bytes(struct reader *r)
{
    size_t start = r->pos;
    int64_t n = (int64_t)reader_uvarint(r) - 1;
    return reader_sized(r, start, n, false, INT32_MAX);
}

struct slice reader_compact_nullable_bytes(struct reader *r)
{
    size_t start = r->pos;
    int64_t n = (int64_t)reader_uvarint(r) - 1;
    return reader_sized(r, start, n, true, INT32_MAX);
}

/* Checks an array count n (read from a prefix at start) against the hard
 * bound and against the bytes left: n elements of at least elem_min_bytes
 * each must fit, so no peer can make us allocate for elements it did not
 * send. -1 (null) passes through. */
static int32_t reader_count(struct reader *r, size_t start, int64_t n,
                            size_t elem_min_bytes)
{
    ASSERT(elem_min_bytes > 0);
    if (r->rc != RC_OK) {
        r->pos = start;
        return 0;
    }
    if (n == -1) {
        return -1;
    }
    if (n < 0 || n > (int64_t)KAFKA_ARRAY_COUNT_MAX ||
        (uint64_t)n > reader_remaining(r) / elem_min_bytes) {
        reader_fail_at(r, start, RC_MALFORMED);
        return 0;
    }
    return (int32_t)n;
}

int32_t reader_array_len(struct reader *r, size_t elem_min_bytes)
{
    size_t start = r->pos;
    int32_t n = reader_i32(r);
    return reader_count(r, start, n, elem_min_bytes);
}

int32_t reader_compact_array_len(struct reader *r, size_t elem_min_bytes)
{
    size_t start = r->pos;
    int64_t n = (int64_t)reader_uvarint(r) - 1;
    return reader_count(r, start, n, elem_min_bytes);
}

void reader_skip_tagged_fields(struct reader *r)
{
    size_t start = r->pos;
    uint32_t count = reader_uvarint(r); /* a plain count, not count+1 */
    /* Each field takes at least 2 bytes (tag, size); this bounds the loop
     * by the input. */
    if (r->rc == RC_OK && count > reader_remaining(r) / 2) {
        reader_fail_at(r, start, RC_MALFORMED);
    }
    for (uint32_t i = 0; i < count && r->rc == RC_OK; i++) {
        (void)reader_uvarint(r); /* tag */
        uint32_t size = reader_uvarint(r);
        (void)reader_raw(r, size);
    }
    if (r->rc != RC_OK) {
        r->pos = start;
    }
}
