/* Tests for common/kafka/record_validate.c and record_inflate.c: Kafka's
 * LogValidator over produced batches. Well-formed batches pass in every
 * codec (keys, headers, nulls, records larger than the decoder's window,
 * concatenated frames and members); each malformation a hostile or buggy
 * producer can send is refused with the code Kafka answers: counts that
 * do not match the records, offset deltas out of order, cut or overlong
 * varints, lengths past the record or the batch, trailing bytes, null
 * header keys, compressed streams that do not decode (garbage, cut short,
 * bytes after the end, the wrong wrapper) with a correct CRC, streams
 * inflating past the bound, and timestamps outside the topic's bounds.
 * Batches come from tests/lib/batch_builder.h. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/bytes.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/kafka/record_validate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"

#define NOW 1700000000000LL          /* the broker's clock in these tests */
#define HOUR_MS 3600000LL
#define TS_2_62 (INT64_C(1) << 62)

static struct record_validator *v;

static void setup(void)
{
    cr_assert_eq(record_validator_new(&v), RC_OK);
}

static void teardown(void)
{
    record_validator_free(v);
}

TestSuite(record_validate, .init = setup, .fini = teardown);

static const struct {
    int codec;
    bool xerial;
    const char *name;
} codecs[] = {
    {RECORD_CODEC_NONE, false, "none"},
    {RECORD_CODEC_GZIP, false, "gzip"},
    {RECORD_CODEC_SNAPPY, false, "snappy (raw)"},
    {RECORD_CODEC_SNAPPY, true, "snappy (xerial)"},
    {RECORD_CODEC_LZ4, false, "lz4"},
    {RECORD_CODEC_ZSTD, false, "zstd"},
};

/* Kafka 4.0's defaults: one hour ahead, unbounded behind. */
static struct record_validate_config config(void)
{
    return (struct record_validate_config){
        .now_ms = NOW,
        .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = HOUR_MS,
        .inflated_bytes_max = RECORD_INFLATED_BYTES_MAX};
}

/* The header check the broker makes first, then the walk. */
static int walk_with(const struct built_batch *b,
                     const struct record_validate_config *cfg,
                     struct record_validate_result *res)
{
    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(b->bytes, b->len, true, &h), RC_OK,
                 "the header and CRC are fine");
    return record_validate(v, b->bytes, b->len, &h, cfg, res);
}

static int walk(const struct built_batch *b,
                struct record_validate_result *res)
{
    struct record_validate_config cfg = config();
    return walk_with(b, &cfg, res);
}

static struct batch_spec spec_of(int codec, bool xerial, int32_t count)
{
    return (struct batch_spec){.codec = codec, .snappy_xerial = xerial,
                               .record_count = count,
                               .base_timestamp = NOW,
                               .max_timestamp = NOW + count - 1,
                               .producer_id = -1};
}

static struct built_batch wrap(const struct writer *w, int codec,
                               bool xerial, int32_t count)
{
    struct batch_spec spec = spec_of(codec, xerial, count);
    return batch_wrap(w->data, w->len, &spec);
}

/* A batch around payload[0..n) as its (already compressed) records, with
 * codec's bits in its attributes and a correct CRC. */
static struct built_batch wrap_payload(const uint8_t *payload, size_t n,
                                       int codec, int32_t count)
{
    struct batch_spec spec = spec_of(RECORD_CODEC_NONE, false, count);
    struct built_batch b = batch_wrap(payload, n, &spec);
    b.bytes[RECORD_BATCH_OFF_ATTRIBUTES + 1] |= (uint8_t)codec;
    batch_fix_crc(&b);
    return b;
}

static const struct batch_header_kv some_headers[] = {
    {"trace-id", 8, "abc123", 6},
    {"empty", 5, "", 0},
    {"null-value", 10, NULL, -1},
};

/* Record i of the usual kind: a key, a value of value_bytes, headers;
 * every fifth has a null key, every seventh a null value. */
static void write_usual(struct writer *w, int32_t i, size_t value_bytes)
{
    static uint8_t value[512 * 1024];
    ASSERT(value_bytes <= sizeof value);
    for (size_t k = 0; k < value_bytes; k++) {
        value[k] = (uint8_t)(k * 31 + (size_t)i);
    }
    char key[32];
    int key_len = snprintf(key, sizeof key, "key-%d", i);
    struct batch_record r = {
        .offset_delta = i, .timestamp_delta = i,
        .key = key, .key_len = i % 5 == 4 ? -1 : key_len,
        .value = value, .value_len = i % 7 == 6 ? -1 : (int32_t)value_bytes,
        .headers = some_headers, .n_headers = i % 2 == 0 ? 3 : 0};
    batch_write_record(w, &r);
}

static void write_usuals(struct writer *w, int32_t n, size_t value_bytes)
{
    for (int32_t i = 0; i < n; i++) {
        write_usual(w, i, value_bytes);
    }
}

static void writer_start(struct writer *w)
{
    writer_init(w, 64u * 1024 * 1024);
}

/* --- Well-formed batches ------------------------------------------------ */

Test(record_validate, a_plain_batch_passes_and_gives_its_max_timestamp)
{
    struct built_batch b = batch_build(10, 100, NOW - 5000, 1);
    struct record_validate_result res;
    cr_assert_eq(walk(&b, &res), RC_OK, "%s", res.message);
    cr_expect_eq(res.max_timestamp, NOW - 5000 + 9);
    cr_expect_eq(res.records_bytes, b.len - BATCH_HEADER_BYTES);
    cr_expect_null(res.message);
    built_batch_free(&b);
}

Test(record_validate, keys_headers_and_nulls_pass_in_every_codec)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 40, 300);
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    40);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_OK, "%s: %s", codecs[c].name,
                     res.message);
        cr_expect_eq(res.max_timestamp, NOW + 39, "%s", codecs[c].name);
        cr_expect_eq(res.records_bytes, w.len, "%s", codecs[c].name);
        built_batch_free(&b);
        writer_free(&w);
    }
}

Test(record_validate, records_larger_than_the_window_straddle_its_refills)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        int32_t i = 0;
        for (; i < 4; i++) {
            write_usual(&w, i, 300 * 1024); /* > RECORD_INFLATE_WINDOW */
        }
        for (; i < 2000; i++) {
            write_usual(&w, i, (size_t)(i % 97)); /* many across refills */
        }
        cr_assert_gt(w.len, 4 * RECORD_INFLATE_WINDOW_BYTES);
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    i);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_OK, "%s: %s", codecs[c].name,
                     res.message);
        cr_expect_eq(res.records_bytes, w.len, "%s", codecs[c].name);
        built_batch_free(&b);
        writer_free(&w);
    }
}

/* Two members (gzip) or frames (lz4, zstd) back to back are one stream. */
Test(record_validate, concatenated_members_and_frames_are_one_stream)
{
    int multi[] = {RECORD_CODEC_GZIP, RECORD_CODEC_LZ4, RECORD_CODEC_ZSTD};
    for (size_t c = 0; c < ARRAY_LEN(multi); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 20, 200);
        size_t half = w.len / 2; /* cuts a record in two: fine */
        size_t n1 = 0;
        size_t n2 = 0;
        uint8_t *p1 = batch_compress(multi[c], false, w.data, half, &n1);
        uint8_t *p2 = batch_compress(multi[c], false, w.data + half,
                                     w.len - half, &n2);
        uint8_t *both = malloc(n1 + n2);
        memcpy(both, p1, n1);
        memcpy(both + n1, p2, n2);
        struct built_batch b = wrap_payload(both, n1 + n2, multi[c], 20);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_OK, "codec %d: %s", multi[c],
                     res.message);
        cr_expect_eq(res.records_bytes, w.len);
        free(p1);
        free(p2);
        free(both);
        built_batch_free(&b);
        writer_free(&w);
    }
}

/* Kafka's ByteUtils reads 80 00 as 0: non-minimal varints within five
 * bytes are accepted. */
Test(record_validate, non_minimal_varints_are_accepted)
{
    struct writer w;
    writer_start(&w);
    /* length 8: attributes, timestampDelta 0, offsetDelta 0 as 80 00,
     * key -1, value 1 byte, no headers */
    static const uint8_t rec[] = {16, 0, 0, 0x80, 0x00, 1, 2, 'x', 0};
    writer_raw(&w, rec, sizeof rec);
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, 1);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_OK, "%s", res.message);
    built_batch_free(&b);
    writer_free(&w);
}

/* --- Counts ------------------------------------------------------------- */

/* The kafkajs crash: a count above the records it holds. */
Test(record_validate, a_count_larger_than_the_records_is_refused)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 1, 50);
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    5);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_MALFORMED, "%s", codecs[c].name);
        cr_expect_not_null(res.message);
        cr_expect_eq(res.record_index, -1);
        cr_expect_eq(kafka_error_from_rc(RC_MALFORMED),
                     KAFKA_ERROR_INVALID_RECORD);
        built_batch_free(&b);
        writer_free(&w);
    }
}

/* The librdkafka one: more records than the count (and the offsets). */
Test(record_validate, a_count_smaller_than_the_records_is_refused)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 3, 50);
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    1);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_MALFORMED, "%s", codecs[c].name);
        cr_expect_not_null(res.message);
        built_batch_free(&b);
        writer_free(&w);
    }
}

Test(record_validate, bytes_after_the_last_record_are_refused)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 2, 50);
        writer_i8(&w, 0); /* half a record, or one of length 0 */
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    2);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_MALFORMED, "%s", codecs[c].name);
        built_batch_free(&b);
        writer_free(&w);
    }
}

/* --- Records ------------------------------------------------------------ */

static int walk_records_with_deltas(const int32_t *deltas, int32_t n,
                                    struct record_validate_result *res)
{
    struct writer w;
    writer_start(&w);
    for (int32_t i = 0; i < n; i++) {
        struct batch_record r = {.offset_delta = deltas[i],
                                 .timestamp_delta = i, .key_len = -1,
                                 .value = "v", .value_len = 1};
        batch_write_record(&w, &r);
    }
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, n);
    int rv = walk(&b, res);
    built_batch_free(&b);
    writer_free(&w);
    return rv;
}

Test(record_validate, offset_deltas_must_be_the_record_indexes)
{
    struct record_validate_result res;
    int32_t ok[] = {0, 1, 2, 3};
    cr_expect_eq(walk_records_with_deltas(ok, 4, &res), RC_OK);
    int32_t swapped[] = {0, 2, 1, 3};
    cr_expect_eq(walk_records_with_deltas(swapped, 4, &res), RC_MALFORMED);
    cr_expect_eq(res.record_index, 1);
    int32_t from_one[] = {1, 2, 3, 4};
    cr_expect_eq(walk_records_with_deltas(from_one, 4, &res), RC_MALFORMED);
    cr_expect_eq(res.record_index, 0);
    int32_t repeated[] = {0, 1, 1, 3};
    cr_expect_eq(walk_records_with_deltas(repeated, 4, &res), RC_MALFORMED);
    cr_expect_eq(res.record_index, 2);
}

/* Raw record bytes, one batch of count records, walked. */
static int walk_raw(const uint8_t *bytes, size_t n, int32_t count,
                    struct record_validate_result *res)
{
    struct writer w;
    writer_start(&w);
    writer_raw(&w, bytes, n);
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, count);
    int rv = walk(&b, res);
    built_batch_free(&b);
    writer_free(&w);
    return rv;
}

Test(record_validate, cut_and_overlong_varints_are_refused)
{
    struct record_validate_result res;
    /* A record, then a varint whose continuation bit meets the end. */
    static const uint8_t cut[] = {14, 0, 0, 0, 1, 2, 'x', 0, 0x80};
    cr_expect_eq(walk_raw(cut, sizeof cut, 2, &res), RC_MALFORMED);
    /* offsetDelta in six bytes. */
    static const uint8_t six[] = {24, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80,
                                  0x00, 1, 2, 'x', 0};
    cr_expect_eq(walk_raw(six, sizeof six, 1, &res), RC_MALFORMED);
    /* A fifth byte with bits above 32. */
    static const uint8_t wide[] = {22, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x1f,
                                   1, 2, 'x', 0};
    cr_expect_eq(walk_raw(wide, sizeof wide, 1, &res), RC_MALFORMED);
    /* A timestampDelta of eleven bytes. */
    static const uint8_t eleven[] = {34, 0, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0,
                                     1, 2, 'x', 0};
    cr_expect_eq(walk_raw(eleven, sizeof eleven, 1, &res), RC_MALFORMED);
    /* The same fields, minimal: accepted (the test can tell). */
    static const uint8_t fine[] = {14, 0, 0, 0, 1, 2, 'x', 0};
    cr_expect_eq(walk_raw(fine, sizeof fine, 1, &res), RC_OK, "%s",
                 res.message);
}

Test(record_validate, lengths_past_the_record_or_the_batch_are_refused)
{
    struct record_validate_result res;
    /* Length 500 (zigzag 1000 = e8 07) with 7 bytes behind it. */
    static const uint8_t past_batch[] = {0xe8, 0x07, 0, 0, 0, 1, 2, 'x', 0};
    cr_expect_eq(walk_raw(past_batch, sizeof past_batch, 1, &res),
                 RC_MALFORMED);
    /* Length one byte longer than the fields (a spare byte inside). */
    static const uint8_t longer[] = {16, 0, 0, 0, 1, 2, 'x', 0, 0};
    cr_expect_eq(walk_raw(longer, sizeof longer, 1, &res), RC_MALFORMED);
    /* Length one byte shorter: the header count lies past it. */
    static const uint8_t shorter[] = {12, 0, 0, 0, 1, 2, 'x', 0};
    cr_expect_eq(walk_raw(shorter, sizeof shorter, 1, &res), RC_MALFORMED);
    /* A value claiming 100 bytes in a record of 7. */
    static const uint8_t value[] = {14, 0, 0, 0, 1, 200, 1, 'x', 0};
    cr_expect_eq(walk_raw(value, sizeof value, 1, &res), RC_MALFORMED);
    /* A negative record length. */
    static const uint8_t negative[] = {3, 0, 0, 0, 1, 2, 'x', 0};
    cr_expect_eq(walk_raw(negative, sizeof negative, 1, &res),
                 RC_MALFORMED);
    /* A key length of -2 (only -1 means null). */
    static const uint8_t key[] = {14, 0, 0, 0, 3, 2, 'x', 0};
    cr_expect_eq(walk_raw(key, sizeof key, 1, &res), RC_MALFORMED);
}

Test(record_validate, header_counts_and_keys_are_checked)
{
    struct record_validate_result res;
    /* headerCount -1. */
    static const uint8_t minus[] = {14, 0, 0, 0, 1, 2, 'x', 1};
    cr_expect_eq(walk_raw(minus, sizeof minus, 1, &res), RC_MALFORMED);
    /* headerCount 50 in a record with one byte left. */
    static const uint8_t many[] = {16, 0, 0, 0, 1, 2, 'x', 100, 0};
    cr_expect_eq(walk_raw(many, sizeof many, 1, &res), RC_MALFORMED);
    /* A header value running past the record. */
    static const uint8_t value[] = {22, 0, 0, 0, 1, 2, 'x', 2, 2, 'k', 40,
                                    'v'};
    cr_expect_eq(walk_raw(value, sizeof value, 1, &res), RC_MALFORMED);
}

Test(record_validate, a_null_header_key_is_refused_with_its_record)
{
    struct writer w;
    writer_start(&w);
    write_usual(&w, 0, 10);
    static const struct batch_header_kv null_key[] = {{NULL, -1, "v", 1}};
    struct batch_record r = {.offset_delta = 1, .timestamp_delta = 1,
                             .key_len = -1, .value = "v", .value_len = 1,
                             .headers = null_key, .n_headers = 1};
    batch_write_record(&w, &r);
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, 2);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_MALFORMED);
    cr_expect_eq(res.record_index, 1);
    cr_expect(res.message != NULL && strstr(res.message, "null"));
    built_batch_free(&b);
    writer_free(&w);
}

Test(record_validate, an_unknown_codec_is_refused)
{
    struct writer w;
    writer_start(&w);
    write_usuals(&w, 2, 10);
    struct built_batch b = wrap_payload(w.data, w.len, 5, 2);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_MALFORMED);
    built_batch_free(&b);
    writer_free(&w);
}

/* --- Compressed streams ------------------------------------------------- */

/* Compresses n usual records in codec; the payload in *out. */
static uint8_t *compressed_usuals(int codec, bool xerial, int32_t n,
                                  size_t *len)
{
    struct writer w;
    writer_start(&w);
    write_usuals(&w, n, 200);
    uint8_t *p = batch_compress(codec, xerial, w.data, w.len, len);
    writer_free(&w);
    return p;
}

/* The payload of a batch that compresses fine, turned to garbage (with a
 * correct CRC): the CORRUPT_MESSAGE the consumers saw. */
Test(record_validate, garbage_in_each_codec_with_a_correct_crc_is_corrupt)
{
    for (size_t c = 1; c < ARRAY_LEN(codecs); c++) {
        size_t n = 0;
        uint8_t *p = compressed_usuals(codecs[c].codec, codecs[c].xerial, 8,
                                       &n);
        for (size_t i = 0; i < n; i++) {
            p[i] = (uint8_t)(i * 167 + 13);
        }
        struct built_batch b = wrap_payload(p, n, codecs[c].codec, 8);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_CORRUPT, "%s", codecs[c].name);
        cr_expect_eq(kafka_error_from_rc(RC_CORRUPT),
                     KAFKA_ERROR_CORRUPT_MESSAGE);
        built_batch_free(&b);
        free(p);
    }
}

Test(record_validate, a_stream_cut_short_is_corrupt)
{
    for (size_t c = 1; c < ARRAY_LEN(codecs); c++) {
        size_t n = 0;
        uint8_t *p = compressed_usuals(codecs[c].codec, codecs[c].xerial, 8,
                                       &n);
        struct built_batch b = wrap_payload(p, n - 3, codecs[c].codec, 8);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_CORRUPT, "%s", codecs[c].name);
        built_batch_free(&b);
        free(p);
    }
}

Test(record_validate, bytes_after_the_stream_are_corrupt)
{
    for (size_t c = 1; c < ARRAY_LEN(codecs); c++) {
        size_t n = 0;
        uint8_t *p = compressed_usuals(codecs[c].codec, codecs[c].xerial, 8,
                                       &n);
        uint8_t *more = malloc(n + 7);
        memcpy(more, p, n);
        memcpy(more + n, "garbage", 7);
        struct built_batch b = wrap_payload(more, n + 7, codecs[c].codec, 8);
        struct record_validate_result res;
        cr_expect_eq(walk(&b, &res), RC_CORRUPT, "%s", codecs[c].name);
        built_batch_free(&b);
        free(more);
        free(p);
    }
}

/* gzip's trailer (CRC-32 of the data, then its size) is checked: records
 * that decode fine under a wrong trailer are still refused. */
Test(record_validate, a_wrong_gzip_trailer_is_corrupt)
{
    size_t n = 0;
    uint8_t *p = compressed_usuals(RECORD_CODEC_GZIP, false, 8, &n);
    p[n - 6] ^= 0x10; /* inside the CRC-32 */
    struct built_batch b = wrap_payload(p, n, RECORD_CODEC_GZIP, 8);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_CORRUPT);
    built_batch_free(&b);
    free(p);
}

/* Kafka's broker and Java consumers read gzip (RFC 1952) only. */
Test(record_validate, a_zlib_stream_in_a_gzip_batch_is_corrupt)
{
    struct writer w;
    writer_start(&w);
    write_usuals(&w, 4, 100);
    uLongf n = compressBound((uLong)w.len);
    uint8_t *p = malloc(n);
    cr_assert_eq(compress2(p, &n, w.data, (uLong)w.len, 6), Z_OK);
    struct built_batch b = wrap_payload(p, n, RECORD_CODEC_GZIP, 4);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_CORRUPT);
    built_batch_free(&b);
    free(p);
    writer_free(&w);
}

/* A raw snappy block claiming a gigabyte in a few bytes: refused before
 * anything is allocated for it. */
Test(record_validate, a_snappy_length_beyond_any_ratio_is_corrupt)
{
    static const uint8_t lie[] = {0x80, 0x80, 0x80, 0x80, 0x04,
                                  0x00, 'a', 0, 0, 0, 0, 0};
    struct built_batch b = wrap_payload(lie, sizeof lie, RECORD_CODEC_SNAPPY,
                                        1);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_CORRUPT);
    built_batch_free(&b);
}

/* Records inflating past the bound: a decompression bomb. The bound is
 * exact: a stream of exactly inflated_bytes_max passes. */
Test(record_validate, streams_inflating_past_the_bound_are_refused)
{
    for (size_t c = 1; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        static uint8_t zeros[2u * 1024 * 1024];
        struct batch_record r = {.key_len = -1, .value = zeros,
                                 .value_len = (int32_t)sizeof zeros};
        batch_write_record(&w, &r);
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    1);
        cr_assert_lt(b.len, sizeof zeros / 10, "%s compresses zeros",
                     codecs[c].name);
        struct record_validate_config cfg = config();
        struct record_validate_result res;
        cfg.inflated_bytes_max = w.len;
        cr_expect_eq(walk_with(&b, &cfg, &res), RC_OK, "%s: %s",
                     codecs[c].name, res.message);
        cfg.inflated_bytes_max = w.len - 1;
        cr_expect_eq(walk_with(&b, &cfg, &res), RC_CORRUPT, "%s",
                     codecs[c].name);
        cr_expect(res.message != NULL && strstr(res.message, "bomb"));
        cfg.inflated_bytes_max = 64 * 1024;
        cr_expect_eq(walk_with(&b, &cfg, &res), RC_CORRUPT, "%s",
                     codecs[c].name);
        built_batch_free(&b);
        writer_free(&w);
    }
}

/* A refused stream leaves the decoders ready for the next batch. */
Test(record_validate, decoders_are_reused_after_a_refusal)
{
    for (size_t c = 1; c < ARRAY_LEN(codecs); c++) {
        size_t n = 0;
        uint8_t *p = compressed_usuals(codecs[c].codec, codecs[c].xerial, 8,
                                       &n);
        struct built_batch cut = wrap_payload(p, n / 2, codecs[c].codec, 8);
        struct built_batch good = wrap_payload(p, n, codecs[c].codec, 8);
        struct record_validate_result res;
        for (int round = 0; round < 3; round++) {
            cr_expect_eq(walk(&cut, &res), RC_CORRUPT, "%s",
                         codecs[c].name);
            cr_expect_eq(walk(&good, &res), RC_OK, "%s: %s", codecs[c].name,
                         res.message);
        }
        built_batch_free(&cut);
        built_batch_free(&good);
        free(p);
    }
}

/* --- Timestamps --------------------------------------------------------- */

/* One record at timestamp ts (base ts, delta 0), header maxTimestamp ts. */
static int walk_at(int64_t ts, const struct record_validate_config *cfg,
                   int16_t attributes, struct record_validate_result *res)
{
    struct writer w;
    writer_start(&w);
    struct batch_record r = {.key_len = -1, .value = "v", .value_len = 1};
    batch_write_record(&w, &r);
    struct batch_spec spec = spec_of(RECORD_CODEC_NONE, false, 1);
    spec.base_timestamp = ts;
    spec.max_timestamp = ts;
    spec.attributes = attributes;
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    int rv = walk_with(&b, cfg, res);
    built_batch_free(&b);
    writer_free(&w);
    return rv;
}

Test(record_validate, timestamps_past_the_after_bound_are_refused)
{
    struct record_validate_config cfg = config();
    struct record_validate_result res;
    cr_expect_eq(walk_at(TS_2_62, &cfg, 0, &res), RC_INVALID_TIMESTAMP);
    cr_expect_eq(res.record_index, 0);
    cr_expect_eq(kafka_error_from_rc(RC_INVALID_TIMESTAMP),
                 KAFKA_ERROR_INVALID_TIMESTAMP);
    cr_expect_eq(KAFKA_ERROR_INVALID_TIMESTAMP, 32);
    cr_expect_eq(walk_at(NOW + HOUR_MS, &cfg, 0, &res), RC_OK);
    cr_expect_eq(walk_at(NOW + HOUR_MS + 1, &cfg, 0, &res),
                 RC_INVALID_TIMESTAMP);
    cfg.timestamp_after_max_ms = INT64_MAX; /* unbounded: no overflow */
    cr_expect_eq(walk_at(TS_2_62, &cfg, 0, &res), RC_OK);
    cr_expect_eq(walk_at(INT64_MAX, &cfg, 0, &res), RC_OK);
}

Test(record_validate, timestamps_before_the_before_bound_are_refused)
{
    struct record_validate_config cfg = config();
    struct record_validate_result res;
    int64_t ten_years = 10LL * 365 * 24 * HOUR_MS;
    cr_expect_eq(walk_at(NOW - ten_years, &cfg, 0, &res), RC_OK,
                 "unbounded by default");
    cr_expect_eq(walk_at(0, &cfg, 0, &res), RC_OK);
    cr_expect_eq(walk_at(-1000, &cfg, 0, &res), RC_OK);
    cfg.timestamp_before_max_ms = 24 * HOUR_MS;
    cr_expect_eq(walk_at(NOW - ten_years, &cfg, 0, &res),
                 RC_INVALID_TIMESTAMP);
    cr_expect_eq(walk_at(NOW - 24 * HOUR_MS, &cfg, 0, &res), RC_OK);
    cr_expect_eq(walk_at(NOW - 24 * HOUR_MS - 1, &cfg, 0, &res),
                 RC_INVALID_TIMESTAMP);
    /* -1 is "no timestamp": never checked. */
    cr_expect_eq(walk_at(-1, &cfg, 0, &res), RC_OK);
    cr_expect_eq(res.max_timestamp, -1);
}

Test(record_validate, log_append_time_topics_take_any_timestamp_and_now)
{
    struct record_validate_config cfg = config();
    cfg.log_append_time = true;
    struct record_validate_result res;
    cr_expect_eq(walk_at(TS_2_62, &cfg, 0, &res), RC_OK);
    cr_expect_eq(res.max_timestamp, NOW);
    /* Kafka: "Producer should not set timestamp type to LogAppendTime". */
    cr_expect_eq(walk_at(NOW, &cfg, RECORD_BATCH_ATTR_LOG_APPEND_TIME, &res),
                 RC_INVALID_TIMESTAMP);
}

/* A producer's LogAppendTime batch on a CreateTime topic: each record
 * reads as the header's maxTimestamp, which the bounds then judge. */
Test(record_validate, a_producer_log_append_time_batch_is_judged_by_its_max)
{
    struct record_validate_config cfg = config();
    struct record_validate_result res;
    cr_expect_eq(walk_at(NOW, &cfg, RECORD_BATCH_ATTR_LOG_APPEND_TIME, &res),
                 RC_OK, "%s", res.message);
    cr_expect_eq(res.max_timestamp, NOW);
    cr_expect_eq(walk_at(TS_2_62, &cfg, RECORD_BATCH_ATTR_LOG_APPEND_TIME,
                         &res),
                 RC_INVALID_TIMESTAMP);
    cr_expect_eq(walk_at(-1, &cfg, RECORD_BATCH_ATTR_LOG_APPEND_TIME, &res),
                 RC_INVALID_TIMESTAMP);
}

/* Deltas: record 0 fine, records 2 and 3 far ahead: the first is named. */
Test(record_validate, the_first_record_with_a_bad_timestamp_is_named)
{
    struct writer w;
    writer_start(&w);
    int64_t deltas[] = {0, 1000, TS_2_62, TS_2_62 + 1};
    for (int32_t i = 0; i < 4; i++) {
        struct batch_record r = {.offset_delta = i,
                                 .timestamp_delta = deltas[i],
                                 .key_len = -1, .value = "v",
                                 .value_len = 1};
        batch_write_record(&w, &r);
    }
    struct built_batch b = wrap(&w, RECORD_CODEC_LZ4, false, 4);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_INVALID_TIMESTAMP);
    cr_expect_eq(res.record_index, 2);
    built_batch_free(&b);
    writer_free(&w);
}

/* Kafka throws on a structural fault while it only collects timestamp
 * errors: the structural fault is what the producer hears. */
Test(record_validate, a_structural_fault_wins_over_a_bad_timestamp)
{
    struct writer w;
    writer_start(&w);
    struct batch_record r0 = {.offset_delta = 0, .timestamp_delta = TS_2_62,
                              .key_len = -1, .value = "v", .value_len = 1};
    struct batch_record r1 = {.offset_delta = 5, .key_len = -1,
                              .value = "v", .value_len = 1};
    batch_write_record(&w, &r0);
    batch_write_record(&w, &r1);
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, 2);
    struct record_validate_result res;
    cr_expect_eq(walk(&b, &res), RC_MALFORMED);
    cr_expect_eq(res.record_index, 1);
    built_batch_free(&b);
    writer_free(&w);
}

/* --- maxTimestamp ------------------------------------------------------- */

Test(record_validate, the_max_timestamp_is_recomputed_and_rewritten)
{
    struct writer w;
    writer_start(&w);
    write_usuals(&w, 5, 20); /* timestamps NOW .. NOW + 4 */
    struct batch_spec spec = spec_of(RECORD_CODEC_ZSTD, false, 5);
    spec.max_timestamp = NOW; /* wrong: the last record is later */
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(b.bytes, b.len, true, &h), RC_OK);
    struct record_validate_config cfg = config();
    struct record_validate_result res;
    cr_assert_eq(record_validate(v, b.bytes, b.len, &h, &cfg, &res), RC_OK);
    cr_expect_eq(res.max_timestamp, NOW + 4);
    cr_expect(record_batch_set_max_timestamp(b.bytes, &h, false,
                                             res.max_timestamp));
    struct record_batch_header again;
    cr_assert_eq(record_batch_validate(b.bytes, b.len, true, &again), RC_OK,
                 "the CRC was recomputed");
    cr_expect_eq(again.max_timestamp, NOW + 4);
    cr_expect_eq(again.crc, h.crc);
    cr_expect_not(record_batch_set_max_timestamp(b.bytes, &h, false,
                                                 NOW + 4),
                  "nothing to change the second time");
    /* LogAppendTime: the type bit and the broker's time. */
    cr_expect(record_batch_set_max_timestamp(b.bytes, &h, true, NOW + 99));
    cr_assert_eq(record_batch_validate(b.bytes, b.len, true, &again), RC_OK);
    cr_expect_eq(again.attributes & RECORD_BATCH_ATTR_LOG_APPEND_TIME,
                 RECORD_BATCH_ATTR_LOG_APPEND_TIME);
    cr_expect_eq(again.attributes & RECORD_BATCH_ATTR_CODEC_MASK,
                 RECORD_CODEC_ZSTD);
    cr_expect_eq(again.max_timestamp, NOW + 99);
    built_batch_free(&b);
    writer_free(&w);
}

/* --- Compacted topics ---------------------------------------------------- */

Test(record_validate, a_compacted_topic_refuses_a_record_without_a_key)
{
    for (size_t c = 0; c < ARRAY_LEN(codecs); c++) {
        struct writer w;
        writer_start(&w);
        write_usuals(&w, 10, 50); /* record 4 has a null key */
        struct built_batch b = wrap(&w, codecs[c].codec, codecs[c].xerial,
                                    10);
        struct record_validate_config cfg = config();
        struct record_validate_result res;
        cr_expect_eq(walk_with(&b, &cfg, &res), RC_OK, "%s: keys optional",
                     codecs[c].name);
        cfg.require_keys = true;
        cr_expect_eq(walk_with(&b, &cfg, &res), RC_MALFORMED, "%s",
                     codecs[c].name);
        cr_expect_eq(res.record_index, 4, "%s", codecs[c].name);
        cr_expect_str_eq(res.message, "a compacted topic takes no record "
                                      "without a key");
        built_batch_free(&b);
        writer_free(&w);
    }
    /* every record keyed: fine */
    struct writer w;
    writer_start(&w);
    write_usuals(&w, 4, 50);
    struct built_batch b = wrap(&w, RECORD_CODEC_NONE, false, 4);
    struct record_validate_config cfg = config();
    cfg.require_keys = true;
    struct record_validate_result res;
    cr_expect_eq(walk_with(&b, &cfg, &res), RC_OK, "%s", res.message);
    built_batch_free(&b);
    writer_free(&w);
}
