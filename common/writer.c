/* Growable byte writer for Kafka's wire encoding (common/writer.h). Every
 * write goes through writer_grab(), the one place that checks the maximum
 * and grows the buffer. Pure, any thread. */
#include "common/writer.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"

/* First allocation; doubling from here reaches a typical response in a
 * few steps without wasting much on tiny ones. */
#define WRITER__CAP_MIN 256u

void writer_init(struct writer *w, size_t max_bytes)
{
    w->data = NULL;
    w->len = 0;
    w->cap = 0;
    w->max = max_bytes;
    w->rc = RC_OK;
    w->compact = false;
}

void writer_free(struct writer *w)
{
    free(w->data);
    writer_init(w, w->max);
}

void writer_reset(struct writer *w)
{
    w->len = 0;
    w->rc = RC_OK;
}

static void writer_fail(struct writer *w, int rc)
{
    ASSERT(rc != RC_OK);
    if (w->rc == RC_OK) {
        w->rc = rc;
    }
}

/* Grows the allocation to hold need bytes (need <= max): doubling, capped
 * at max. */
static bool writer_grow(struct writer *w, size_t need)
{
    ASSERT(need <= w->max);
    size_t cap = w->cap > 0 ? w->cap : WRITER__CAP_MIN;
    while (cap < need) {
        cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
    }
    if (cap > w->max) {
        cap = w->max;
    }
    uint8_t *data = realloc(w->data, cap);
    if (data == NULL) {
        writer_fail(w, RC_NOMEM);
        return false;
    }
    w->data = data;
    w->cap = cap;
    return true;
}

/* Appends n (> 0) bytes and returns where they start, or NULL (writing
 * nothing) after an error or when they do not fit. */
static uint8_t *writer_grab(struct writer *w, size_t n)
{
    ASSERT(n > 0);
    ASSERT(w->len <= w->cap);
    ASSERT(w->cap <= w->max);
    if (w->rc != RC_OK) {
        return NULL;
    }
    if (n > w->max - w->len) {
        writer_fail(w, RC_TOO_LARGE);
        return NULL;
    }
    if (n > w->cap - w->len && !writer_grow(w, w->len + n)) {
        return NULL;
    }
    uint8_t *at = w->data + w->len;
    w->len += n;
    return at;
}

void writer_raw(struct writer *w, const void *p, size_t n)
{
    ASSERT(p != NULL || n == 0);
    if (n == 0) {
        return;
    }
    uint8_t *at = writer_grab(w, n);
    if (at != NULL) {
        memcpy(at, p, n);
    }
}

void writer_i8(struct writer *w, int8_t v)
{
    uint8_t *at = writer_grab(w, 1);
    if (at != NULL) {
        at[0] = (uint8_t)v;
    }
}

void writer_bool(struct writer *w, bool v)
{
    writer_i8(w, v ? 1 : 0);
}

void writer_i16(struct writer *w, int16_t v)
{
    uint8_t *at = writer_grab(w, 2);
    if (at != NULL) {
        bytes_put_be16(at, (uint16_t)v);
    }
}

void writer_u32(struct writer *w, uint32_t v)
{
    uint8_t *at = writer_grab(w, 4);
    if (at != NULL) {
        bytes_put_be32(at, v);
    }
}

void writer_i32(struct writer *w, int32_t v)
{
    writer_u32(w, (uint32_t)v);
}

void writer_i64(struct writer *w, int64_t v)
{
    uint8_t *at = writer_grab(w, 8);
    if (at != NULL) {
        bytes_put_be64(at, (uint64_t)v);
    }
}

/* Base-128, least significant group first; at most 10 bytes for 64 bits. */
static void writer_varbits(struct writer *w, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    writer_raw(w, buf, n);
}

static uint32_t writer_zigzag32(int32_t v)
{
    uint32_t u = (uint32_t)v;
    return (u << 1) ^ (0u - (u >> 31));
}

static uint64_t writer_zigzag64(int64_t v)
{
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0u - (u >> 63));
}

void writer_uvarint(struct writer *w, uint32_t v)
{
    writer_varbits(w, v);
}

void writer_varint(struct writer *w, int32_t v)
{
    writer_varbits(w, writer_zigzag32(v));
}

void writer_varlong(struct writer *w, int64_t v)
{
    writer_varbits(w, writer_zigzag64(v));
}

static size_t writer_varbits_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t writer_uvarint_size(uint32_t v)
{
    return writer_varbits_size(v);
}

size_t writer_varint_size(int32_t v)
{
    return writer_varbits_size(writer_zigzag32(v));
}

size_t writer_varlong_size(int64_t v)
{
    return writer_varbits_size(writer_zigzag64(v));
}

void writer_string(struct writer *w, const char *s, size_t len)
{
    ASSERT(s != NULL || len == 0);
    if (w->compact) {
        writer_compact_string(w, s, len);
        return;
    }
    if (len > KAFKA_STRING_BYTES_MAX) {
        writer_fail(w, RC_TOO_LARGE);
        return;
    }
    writer_i16(w, (int16_t)len);
    writer_raw(w, s, len);
}

void writer_nullable_string(struct writer *w, const char *s, size_t len)
{
    if (s == NULL) {
        if (w->compact) {
            writer_uvarint(w, 0);
            return;
        }
        writer_i16(w, -1);
        return;
    }
    writer_string(w, s, len);
}

void writer_bytes(struct writer *w, const void *p, size_t len)
{
    ASSERT(p != NULL || len == 0);
    if (w->compact) {
        writer_compact_bytes(w, p, len);
        return;
    }
    if (len > INT32_MAX) {
        writer_fail(w, RC_TOO_LARGE);
        return;
    }
    writer_i32(w, (int32_t)len);
    writer_raw(w, p, len);
}

void writer_nullable_bytes(struct writer *w, const void *p, size_t len)
{
    if (p == NULL) {
        if (w->compact) {
            writer_uvarint(w, 0);
            return;
        }
        writer_i32(w, -1);
        return;
    }
    writer_bytes(w, p, len);
}

void writer_string_slice(struct writer *w, struct slice s)
{
    ASSERT(!slice_is_null(s));
    writer_string(w, (const char *)s.ptr, s.len);
}

void writer_nullable_string_slice(struct writer *w, struct slice s)
{
    writer_nullable_string(w, (const char *)s.ptr, s.len);
}

void writer_bytes_slice(struct writer *w, struct slice s)
{
    ASSERT(!slice_is_null(s));
    writer_bytes(w, s.ptr, s.len);
}

void writer_nullable_bytes_slice(struct writer *w, struct slice s)
{
    writer_nullable_bytes(w, s.ptr, s.len);
}

void writer_compact_string(struct writer *w, const char *s, size_t len)
{
    ASSERT(s != NULL || len == 0);
    if (len > KAFKA_STRING_BYTES_MAX) {
        writer_fail(w, RC_TOO_LARGE);
        return;
    }
    writer_uvarint(w, (uint32_t)len + 1);
    writer_raw(w, s, len);
}

void writer_compact_nullable_string(struct writer *w, const char *s,
                                    size_t len)
{
    if (s == NULL) {
        writer_uvarint(w, 0);
        return;
    }
    writer_compact_string(w, s, len);
}

void writer_compact_bytes(struct writer *w, const void *p, size_t len)
{
    ASSERT(p != NULL || len == 0);
    if (len >= INT32_MAX) {
        writer_fail(w, RC_TOO_LARGE);
        return;
    }
    writer_uvarint(w, (uint32_t)len + 1);
    writer_raw(w, p, len);
}

void writer_compact_nullable_bytes(struct writer *w, const void *p,
                                   size_t len)
{
    if (p == NULL) {
        writer_uvarint(w, 0);
        return;
    }
    writer_compact_bytes(w, p, len);
}

void writer_compact_array_len(struct writer *w, int32_t n)
{
    ASSERT(n >= -1);
    writer_uvarint(w, (uint32_t)((int64_t)n + 1));
}

void writer_empty_tagged_fields(struct writer *w)
{
    writer_uvarint(w, 0);
}

size_t writer_reserve(struct writer *w, size_t n)
{
    size_t pos = w->len;
    if (n == 0) {
        return pos;
    }
    uint8_t *at = writer_grab(w, n);
    if (at != NULL) {
        memset(at, 0, n);
    }
    return pos;
}

void writer_patch_i32(struct writer *w, size_t pos, int32_t v)
{
    if (w->rc != RC_OK) {
        return;
    }
    ASSERT(pos <= w->len);
    ASSERT(w->len - pos >= 4);
    bytes_put_be32(w->data + pos, (uint32_t)v);
}
