/* libFuzzer target for the record walker (common/kafka/record_validate.h)
 * and its decoders (common/kafka/record_inflate.h). Input:
 *
 *   byte 0   bits 0-2: codec (mod 5); bit 3: the harness compresses the
 *            records itself (else the rest is the codec's stream as is);
 *            bit 4: the batch's LogAppendTime bit; bit 5: the topic is
 *            LogAppendTime
 *   byte 1   recordCount - 1 (1 to 256 records)
 *   rest     the records section (uncompressed, or as the codec's stream)
 *
 * The harness wraps it in a batch header with a correct CRC
 * (tests/lib/batch_builder.h), so every input reaches the walker.
 *
 * Oracles besides the sanitizers: whenever the harness knows the records'
 * uncompressed bytes (no codec, or compressed here), an independent reader
 * (common/reader.h, as a strict consumer reads records: lengths inside the
 * record, offset deltas 0..n-1, exactly recordCount records and nothing
 * after) must agree with the walker on whether the structure is sound, and
 * a stream compressed here must never be called corrupt. The walk is
 * repeated on the same validator (decoders reused) with the same answer; a
 * fault always comes with a message and success never does; a passed batch
 * takes its recomputed maxTimestamp with a CRC that still checks. Built
 * and run by `make fuzz` from the sources it needs alone. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/assert.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/kafka/record_validate.h"
#include "common/rc.h"
#include "common/reader.h"
#include "tests/lib/batch_builder.h"

#define FUZZ_NOW 1700000000000LL
#define FUZZ_INFLATED_MAX (1u << 20) /* small, so bombs are found fast */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct record_validator *fuzz_validator;

/* A length-prefixed field: -1 (nullable) or that many bytes. */
static bool reference_field(struct reader *r, bool nullable)
{
    int32_t n = reader_varint(r);
    if (r->rc != RC_OK) {
        return false;
    }
    if (n == -1 && nullable) {
        return true;
    }
    if (n < 0) {
        return false;
    }
    (void)reader_raw(r, (size_t)n);
    return r->rc == RC_OK;
}

static bool reference_record(struct reader *b, int32_t i)
{
    (void)reader_i8(b);      /* attributes */
    (void)reader_varlong(b); /* timestampDelta */
    if (reader_varint(b) != i || b->rc != RC_OK) {
        return false;
    }
    if (!reference_field(b, true) || !reference_field(b, true)) {
        return false;
    }
    int32_t headers = reader_varint(b);
    if (b->rc != RC_OK || headers < 0) {
        return false;
    }
    for (int32_t k = 0; k < headers; k++) {
        if (!reference_field(b, false) || !reference_field(b, true)) {
            return false;
        }
    }
    return reader_done(b);
}

/* count records, each read inside its own length, then nothing. */
static bool reference_walk(const uint8_t *p, size_t n, int32_t count)
{
    struct reader r;
    reader_init(&r, p, n);
    for (int32_t i = 0; i < count; i++) {
        int32_t len = reader_varint(&r);
        if (r.rc != RC_OK || len < 0 ||
            (size_t)len > reader_remaining(&r)) {
            return false;
        }
        struct slice body = reader_raw(&r, (size_t)len);
        struct reader b;
        reader_init(&b, body.ptr, body.len);
        if (!reference_record(&b, i)) {
            return false;
        }
    }
    return reader_done(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    if (fuzz_validator == NULL) {
        int rv = record_validator_new(&fuzz_validator);
        ASSERT(rv == RC_OK);
    }
    int codec = (data[0] & 7) % 5;
    bool compress_here = (data[0] & 0x08) != 0;
    struct batch_spec spec = {
        .codec = compress_here ? codec : RECORD_CODEC_NONE,
        .record_count = (int32_t)data[1] + 1,
        .base_timestamp = FUZZ_NOW, .max_timestamp = FUZZ_NOW,
        .attributes = (data[0] & 0x10) != 0
                          ? RECORD_BATCH_ATTR_LOG_APPEND_TIME : 0,
        .producer_id = -1};
    const uint8_t *records = data + 2;
    size_t n = size - 2;
    struct built_batch b = batch_wrap(records, n, &spec);
    if (!compress_here && codec != RECORD_CODEC_NONE) {
        b.bytes[RECORD_BATCH_OFF_ATTRIBUTES + 1] |= (uint8_t)codec;
        batch_fix_crc(&b);
    }
    struct record_batch_header h;
    int rv = record_batch_validate(b.bytes, b.len, true, &h);
    ASSERT(rv == RC_OK);
    struct record_validate_config cfg = {
        .now_ms = FUZZ_NOW, .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = 3600000,
        .log_append_time = (data[0] & 0x20) != 0,
        .inflated_bytes_max = FUZZ_INFLATED_MAX};
    struct record_validate_result res;
    rv = record_validate(fuzz_validator, b.bytes, b.len, &h, &cfg, &res);
    ASSERT(rv == RC_OK || rv == RC_MALFORMED || rv == RC_CORRUPT ||
           rv == RC_INVALID_TIMESTAMP);
    ASSERT((rv == RC_OK) == (res.message == NULL));
    ASSERT(res.records_bytes <= FUZZ_INFLATED_MAX);
    if (codec == RECORD_CODEC_NONE || compress_here) {
        bool sound = rv == RC_OK || rv == RC_INVALID_TIMESTAMP;
        ASSERT(sound == reference_walk(records, n, spec.record_count));
        ASSERT(rv != RC_CORRUPT);
    }
    struct record_validate_result again;
    int rv2 = record_validate(fuzz_validator, b.bytes, b.len, &h, &cfg,
                              &again);
    ASSERT(rv2 == rv);
    ASSERT(again.record_index == res.record_index);
    if (rv == RC_OK) {
        ASSERT(!cfg.log_append_time || res.max_timestamp == FUZZ_NOW);
        ASSERT(res.max_timestamp >= -1);
        (void)record_batch_set_max_timestamp(b.bytes, &h,
                                             cfg.log_append_time,
                                             res.max_timestamp);
        struct record_batch_header after;
        rv = record_batch_validate(b.bytes, b.len, true, &after);
        ASSERT(rv == RC_OK);
        ASSERT(after.max_timestamp == res.max_timestamp);
    }
    built_batch_free(&b);
    return 0;
}
