/* Test helper: RecordBatch v2 builder (tests/lib/batch_builder.h). */
#include "tests/lib/batch_builder.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
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

static size_t field_size(int32_t len)
{
    return writer_varint_size(len) + (len > 0 ? (size_t)len : 0);
}

static void write_field(struct writer *w, const void *p, int32_t len)
{
    writer_varint(w, len);
    if (len > 0) {
        writer_raw(w, p, (size_t)len);
    }
}

void batch_write_record(struct writer *w, const struct batch_record *r)
{
    size_t body = 1 + writer_varlong_size(r->timestamp_delta) +
                  writer_varint_size(r->offset_delta) +
                  field_size(r->key_len) + field_size(r->value_len) +
                  writer_varint_size(r->n_headers);
    for (int32_t i = 0; i < r->n_headers; i++) {
        body += field_size(r->headers[i].key_len) +
                field_size(r->headers[i].value_len);
    }
    writer_varint(w, (int32_t)body);
    writer_i8(w, 0);
    writer_varlong(w, r->timestamp_delta);
    writer_varint(w, r->offset_delta);
    write_field(w, r->key, r->key_len);
    write_field(w, r->value, r->value_len);
    writer_varint(w, r->n_headers);
    for (int32_t i = 0; i < r->n_headers; i++) {
        write_field(w, r->headers[i].key, r->headers[i].key_len);
        write_field(w, r->headers[i].value, r->headers[i].value_len);
    }
}

static uint8_t *compress_gzip(const uint8_t *src, size_t len, size_t *n)
{
    z_stream s = {0};
    int zr = deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
                          Z_DEFAULT_STRATEGY);
    ASSERT(zr == Z_OK);
    size_t cap = deflateBound(&s, (uLong)len) + 64;
    uint8_t *out = malloc(cap);
    ASSERT(out != NULL);
    s.next_in = (Bytef *)(uintptr_t)src;
    s.avail_in = (uInt)len;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    zr = deflate(&s, Z_FINISH);
    ASSERT(zr == Z_STREAM_END);
    *n = cap - s.avail_out;
    deflateEnd(&s);
    return out;
}

/* One raw snappy block of src at dst; its size. */
static size_t snappy_raw(const uint8_t *src, size_t len, uint8_t *dst,
                         size_t cap)
{
    size_t n = cap;
    snappy_status st = snappy_compress((const char *)src, len, (char *)dst,
                                       &n);
    ASSERT(st == SNAPPY_OK);
    return n;
}

static uint8_t *compress_snappy(const uint8_t *src, size_t len, bool xerial,
                                size_t *n)
{
    const size_t block = 32 * 1024;
    size_t blocks = len / block + 1;
    size_t cap = 16 + blocks * (4 + snappy_max_compressed_length(block)) +
                 snappy_max_compressed_length(len);
    uint8_t *out = malloc(cap);
    ASSERT(out != NULL);
    if (!xerial) {
        *n = snappy_raw(src, len, out, cap);
        return out;
    }
    static const uint8_t header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
                                       0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(out, header, sizeof header);
    size_t at = sizeof header;
    for (size_t off = 0; off < len; off += block) {
        size_t take = len - off < block ? len - off : block;
        size_t got = snappy_raw(src + off, take, out + at + 4,
                                cap - at - 4);
        bytes_put_be32(out + at, (uint32_t)got);
        at += 4 + got;
    }
    *n = at;
    return out;
}

static uint8_t *compress_lz4(const uint8_t *src, size_t len, size_t *n)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    size_t cap = LZ4F_compressFrameBound(len, &prefs);
    uint8_t *out = malloc(cap);
    ASSERT(out != NULL);
    *n = LZ4F_compressFrame(out, cap, src, len, &prefs);
    ASSERT(!LZ4F_isError(*n));
    return out;
}

static uint8_t *compress_zstd(const uint8_t *src, size_t len, size_t *n)
{
    size_t cap = ZSTD_compressBound(len);
    uint8_t *out = malloc(cap);
    ASSERT(out != NULL);
    *n = ZSTD_compress(out, cap, src, len, 3);
    ASSERT(!ZSTD_isError(*n));
    return out;
}

uint8_t *batch_compress(int codec, bool xerial, const uint8_t *src,
                        size_t len, size_t *out_len)
{
    switch (codec) {
    case RECORD_CODEC_GZIP:
        return compress_gzip(src, len, out_len);
    case RECORD_CODEC_SNAPPY:
        return compress_snappy(src, len, xerial, out_len);
    case RECORD_CODEC_LZ4:
        return compress_lz4(src, len, out_len);
    case RECORD_CODEC_ZSTD:
        return compress_zstd(src, len, out_len);
    default: {
        uint8_t *out = malloc(len == 0 ? 1 : len);
        ASSERT(out != NULL);
        if (len > 0) {
            memcpy(out, src, len);
        }
        *out_len = len;
        return out;
    }
    }
}

void batch_fix_crc(struct built_batch *b)
{
    bytes_put_be32(b->bytes + RECORD_BATCH_OFF_CRC,
                   crc32c(b->bytes + RECORD_BATCH_OFF_ATTRIBUTES,
                          b->len - RECORD_BATCH_OFF_ATTRIBUTES));
}

struct built_batch batch_wrap(const uint8_t *records, size_t len,
                              const struct batch_spec *spec)
{
    size_t n = 0;
    uint8_t *payload = batch_compress(spec->codec, spec->snappy_xerial,
                                      records, len, &n);
    bool idempotent = spec->producer_id >= 0;
    struct writer w;
    writer_init(&w, 256u * 1024 * 1024);
    writer_i64(&w, 0);                          /* baseOffset */
    size_t len_pos = writer_reserve(&w, 4);
    writer_i32(&w, 0);                          /* partitionLeaderEpoch */
    writer_i8(&w, 2);                           /* magic */
    (void)writer_reserve(&w, 4);                /* crc */
    writer_i16(&w, (int16_t)(spec->codec | spec->attributes));
    writer_i32(&w, spec->record_count - 1);     /* lastOffsetDelta */
    writer_i64(&w, spec->base_timestamp);
    writer_i64(&w, spec->max_timestamp);
    writer_i64(&w, idempotent ? spec->producer_id : -1);
    writer_i16(&w, idempotent ? 0 : -1);        /* producerEpoch */
    writer_i32(&w, idempotent ? spec->base_sequence : -1);
    writer_i32(&w, spec->record_count);
    writer_raw(&w, payload, n);
    free(payload);
    ASSERT(w.rc == 0);
    writer_patch_i32(&w, len_pos, (int32_t)(w.len - 12));
    struct built_batch b = {.bytes = w.data, .len = w.len};
    batch_fix_crc(&b);
    return b;
}
