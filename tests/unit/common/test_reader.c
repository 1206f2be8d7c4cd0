/* Tests for common/reader.c: writer -> reader round trips, exact varint
 * encodings, truncation at every byte, overlong and malformed encodings,
 * array counts that must not drive allocations, the sticky error, and
 * seeded garbage. Inputs live in heap buffers of their exact length so
 * that `make asan` catches any read past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"

#define MAX_1M (1024u * 1024u)

/* Criterion reports every assertion, passed or not; in hot loops only a
 * failure should cost anything. */
#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            cr_assert_fail(__VA_ARGS__);                               \
        }                                                              \
    } while (0)

/* A heap copy of exactly n bytes of p (at least 1 allocated byte so that
 * malloc(0) cannot return NULL); the caller frees it. */
static uint8_t *exact_copy(const void *p, size_t n)
{
    uint8_t *buf = malloc(n > 0 ? n : 1);
    cr_assert_not_null(buf);
    if (n > 0) {
        memcpy(buf, p, n);
    }
    return buf;
}

static void reader_over(struct reader *r, const struct writer *w)
{
    cr_assert_eq(w->rc, RC_OK);
    reader_init(r, w->data, w->len);
}

/* --- Round trips --------------------------------------------------------- */

Test(reader, round_trips_fixed_width_integers)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_i8(&w, INT8_MIN);
    writer_i8(&w, INT8_MAX);
    writer_i16(&w, INT16_MIN);
    writer_i16(&w, INT16_MAX);
    writer_i32(&w, INT32_MIN);
    writer_i32(&w, INT32_MAX);
    writer_i64(&w, INT64_MIN);
    writer_i64(&w, INT64_MAX);
    writer_u32(&w, UINT32_MAX);
    writer_bool(&w, true);
    writer_bool(&w, false);
    struct reader r;
    reader_over(&r, &w);
    cr_expect_eq(reader_i8(&r), INT8_MIN);
    cr_expect_eq(reader_i8(&r), INT8_MAX);
    cr_expect_eq(reader_i16(&r), INT16_MIN);
    cr_expect_eq(reader_i16(&r), INT16_MAX);
    cr_expect_eq(reader_i32(&r), INT32_MIN);
    cr_expect_eq(reader_i32(&r), INT32_MAX);
    cr_expect_eq(reader_i64(&r), INT64_MIN);
    cr_expect_eq(reader_i64(&r), INT64_MAX);
    cr_expect_eq(reader_u32(&r), UINT32_MAX);
    cr_expect_eq(reader_bool(&r), true);
    cr_expect_eq(reader_bool(&r), false);
    cr_assert(reader_done(&r));
    writer_free(&w);
}

Test(reader, reads_big_endian_fixed_width_bytes)
{
    const uint8_t in[] = {0x80, 0x01, 0x02, 0xff, 0xff, 0xff, 0xfe, 0x07};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_i8(&r), -128);
    cr_assert_eq(reader_i16(&r), 0x0102);
    cr_assert_eq(reader_i32(&r), -2);
    cr_assert_eq(reader_bool(&r), true, "any non-zero byte is true");
    cr_assert(reader_done(&r));
}

static const int32_t varint_edges[] = {
    0, -1, 1, -2, 2, 63, -64, 64, -65, 300, 8191, -8192, 8192,
    INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1,
};

static const int64_t varlong_edges[] = {
    0, -1, 1, -2, 300, INT32_MIN, INT32_MAX, (int64_t)INT32_MIN - 1,
    (int64_t)INT32_MAX + 1, (int64_t)1 << 56, -((int64_t)1 << 56),
    INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
};

static const uint32_t uvarint_edges[] = {
    0, 1, 127, 128, 16383, 16384, (1u << 28) - 1, 1u << 28, INT32_MAX,
    UINT32_MAX,
};

Test(reader, round_trips_varint_varlong_and_uvarint_edge_values)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    for (size_t i = 0; i < ARRAY_LEN(varint_edges); i++) {
        writer_varint(&w, varint_edges[i]);
    }
    for (size_t i = 0; i < ARRAY_LEN(varlong_edges); i++) {
        writer_varlong(&w, varlong_edges[i]);
    }
    for (size_t i = 0; i < ARRAY_LEN(uvarint_edges); i++) {
        writer_uvarint(&w, uvarint_edges[i]);
    }
    struct reader r;
    reader_over(&r, &w);
    for (size_t i = 0; i < ARRAY_LEN(varint_edges); i++) {
        cr_expect_eq(reader_varint(&r), varint_edges[i], "varint %zu", i);
    }
    for (size_t i = 0; i < ARRAY_LEN(varlong_edges); i++) {
        cr_expect_eq(reader_varlong(&r), varlong_edges[i], "varlong %zu", i);
    }
    for (size_t i = 0; i < ARRAY_LEN(uvarint_edges); i++) {
        cr_expect_eq(reader_uvarint(&r), uvarint_edges[i], "uvarint %zu", i);
    }
    cr_assert(reader_done(&r));
    writer_free(&w);
}

Test(reader, decodes_known_zigzag_encodings)
{
    const uint8_t in[] = {0x00, 0x01, 0x02, 0x03, 0xd8, 0x04,
                          0xff, 0xff, 0xff, 0xff, 0x0f, /* INT32_MIN */
                          0xfe, 0xff, 0xff, 0xff, 0x0f}; /* INT32_MAX */
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_varint(&r), 0);
    cr_assert_eq(reader_varint(&r), -1);
    cr_assert_eq(reader_varint(&r), 1);
    cr_assert_eq(reader_varint(&r), -2);
    cr_assert_eq(reader_varint(&r), 300);
    cr_assert_eq(reader_varint(&r), INT32_MIN);
    cr_assert_eq(reader_varint(&r), INT32_MAX);
    cr_assert(reader_done(&r));
}

Test(reader, decodes_extreme_varlongs_from_ten_bytes)
{
    const uint8_t in[] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    };
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_varlong(&r), INT64_MIN);
    cr_assert_eq(reader_varlong(&r), INT64_MAX);
    cr_assert(reader_done(&r));
}

Test(reader, round_trips_strings_bytes_and_raw)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_string(&w, "hello", 5);
    writer_string(&w, "", 0);
    writer_nullable_string(&w, NULL, 0);
    writer_nullable_string(&w, "x", 1);
    writer_bytes(&w, "\x00\xff", 2);
    writer_bytes(&w, NULL, 0);
    writer_nullable_bytes(&w, NULL, 0);
    writer_nullable_bytes(&w, "ab", 2);
    writer_raw(&w, "RAW", 3);
    struct reader r;
    reader_over(&r, &w);
    cr_expect(slice_eq_str(reader_string(&r), "hello"));
    struct slice empty = reader_string(&r);
    cr_expect(!slice_is_null(empty), "empty string is not null");
    cr_expect_eq(empty.len, 0);
    cr_expect(slice_is_null(reader_nullable_string(&r)));
    cr_expect(slice_eq_str(reader_nullable_string(&r), "x"));
    struct slice b = reader_bytes(&r);
    cr_expect_eq(b.len, 2);
    cr_expect(memcmp(b.ptr, "\x00\xff", 2) == 0);
    struct slice empty_bytes = reader_bytes(&r);
    cr_expect(!slice_is_null(empty_bytes));
    cr_expect_eq(empty_bytes.len, 0);
    cr_expect(slice_is_null(reader_nullable_bytes(&r)));
    cr_expect(slice_eq_str(reader_nullable_bytes(&r), "ab"));
    cr_expect(slice_eq_str(reader_raw(&r, 3), "RAW"));
    cr_assert(reader_done(&r));
    writer_free(&w);
}

Test(reader, slices_borrow_from_the_input)
{
    const uint8_t in[] = {0x00, 0x02, 'h', 'i'};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    struct slice s = reader_string(&r);
    cr_assert_eq(s.ptr, in + 2);
    cr_assert_eq(s.len, 2);
}

Test(reader, round_trips_compact_forms_and_tagged_fields)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_compact_string(&w, "topic", 5);
    writer_compact_nullable_string(&w, NULL, 0);
    writer_compact_nullable_string(&w, "", 0);
    writer_compact_bytes(&w, "\x01", 1);
    writer_compact_nullable_bytes(&w, NULL, 0);
    writer_compact_array_len(&w, 2);
    writer_i32(&w, 7);
    writer_i32(&w, 8);
    writer_compact_array_len(&w, -1);
    writer_empty_tagged_fields(&w);
    /* Tagged fields: count 2; tag 0 size 0; tag 5 size 3 "abc". */
    const uint8_t tagged[] = {0x02, 0x00, 0x00, 0x05, 0x03, 'a', 'b', 'c'};
    writer_raw(&w, tagged, sizeof(tagged));
    writer_i8(&w, 42);

    struct reader r;
    reader_over(&r, &w);
    cr_expect(slice_eq_str(reader_compact_string(&r), "topic"));
    cr_expect(slice_is_null(reader_compact_nullable_string(&r)));
    struct slice e = reader_compact_nullable_string(&r);
    cr_expect(!slice_is_null(e));
    cr_expect_eq(e.len, 0);
    cr_expect(slice_eq_str(reader_compact_bytes(&r), "\x01"));
    cr_expect(slice_is_null(reader_compact_nullable_bytes(&r)));
    cr_expect_eq(reader_compact_array_len(&r, 4), 2);
    cr_expect_eq(reader_i32(&r), 7);
    cr_expect_eq(reader_i32(&r), 8);
    cr_expect_eq(reader_compact_array_len(&r, 4), -1);
    reader_skip_tagged_fields(&r); /* empty */
    reader_skip_tagged_fields(&r); /* two fields, 2 and 6 bytes */
    cr_expect_eq(reader_i8(&r), 42);
    cr_assert(reader_done(&r));
    writer_free(&w);
}

/* In compact mode (a flexible version's body) the classic calls read and
 * write the compact forms, byte for byte those of the compact calls. */
Test(reader, compact_mode_switches_strings_and_bytes)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    w.compact = true;
    writer_string(&w, "topic", 5);
    writer_nullable_string(&w, NULL, 0);
    writer_bytes(&w, "\x01", 1);
    writer_nullable_bytes(&w, NULL, 0);
    writer_nullable_bytes_slice(&w, slice_from_str("xy"));
    w.compact = false;
    writer_string(&w, "t", 1);
    const uint8_t want[] = {6, 't', 'o', 'p', 'i', 'c', 0, 2, 1, 0,
                            3, 'x', 'y', 0, 1, 't'};
    cr_assert_eq(w.len, sizeof want);
    cr_assert(memcmp(w.data, want, sizeof want) == 0);

    struct reader r;
    reader_over(&r, &w);
    r.compact = true;
    cr_expect(slice_eq_str(reader_string(&r), "topic"));
    cr_expect(slice_is_null(reader_nullable_string(&r)));
    cr_expect(slice_eq_str(reader_bytes(&r), "\x01"));
    cr_expect(slice_is_null(reader_nullable_bytes(&r)));
    cr_expect(slice_eq_str(reader_nullable_bytes(&r), "xy"));
    r.compact = false;
    cr_expect(slice_eq_str(reader_string(&r), "t"));
    cr_assert(reader_done(&r));
    writer_free(&w);
}

Test(reader, reads_over_null_input_of_length_zero)
{
    struct reader r;
    reader_init(&r, NULL, 0);
    cr_assert(reader_done(&r));
    struct slice s = reader_raw(&r, 0);
    cr_assert(!slice_is_null(s), "zero raw bytes are empty, not null");
    cr_assert_eq(r.rc, RC_OK);
    cr_assert_eq(reader_i8(&r), 0);
    cr_assert_eq(r.rc, RC_SHORT);
}

Test(reader, done_requires_no_error_and_nothing_left)
{
    const uint8_t in[] = {0x01, 0x02};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_remaining(&r), 2);
    cr_assert(!reader_done(&r));
    (void)reader_i8(&r);
    cr_assert_eq(reader_remaining(&r), 1);
    cr_assert(!reader_done(&r), "a byte is left over");
    (void)reader_i8(&r);
    cr_assert(reader_done(&r));
    (void)reader_i8(&r);
    cr_assert(!reader_done(&r), "short read is an error");
}

/* --- Truncation ---------------------------------------------------------- */

/* One of every value except arrays and non-empty tagged fields, whose
 * counts are checked against the bytes left (RC_MALFORMED, tested
 * separately) before their bodies are read. */
static void encode_every_type(struct writer *w)
{
    writer_i8(w, -5);
    writer_i16(w, 0x1234);
    writer_i32(w, -123456);
    writer_i64(w, INT64_MIN);
    writer_u32(w, 0xdeadbeefu);
    writer_bool(w, true);
    writer_uvarint(w, UINT32_MAX);
    writer_varint(w, INT32_MIN);
    writer_varint(w, 300);
    writer_varlong(w, INT64_MAX);
    writer_string(w, "str", 3);
    writer_nullable_string(w, NULL, 0);
    writer_nullable_string(w, "ns", 2);
    writer_bytes(w, "by", 2);
    writer_nullable_bytes(w, NULL, 0);
    writer_nullable_bytes(w, "nb", 2);
    writer_compact_string(w, "cs", 2);
    writer_compact_nullable_string(w, NULL, 0);
    writer_compact_bytes(w, "cb", 2);
    writer_compact_nullable_bytes(w, "cn", 2);
    writer_empty_tagged_fields(w);
    writer_raw(w, "end", 3);
}

/* Decodes what encode_every_type() wrote; true if every value matched. */
static bool decode_every_type(struct reader *r)
{
    bool ok = true;
    ok &= reader_i8(r) == -5;
    ok &= reader_i16(r) == 0x1234;
    ok &= reader_i32(r) == -123456;
    ok &= reader_i64(r) == INT64_MIN;
    ok &= reader_u32(r) == 0xdeadbeefu;
    ok &= reader_bool(r) == true;
    ok &= reader_uvarint(r) == UINT32_MAX;
    ok &= reader_varint(r) == INT32_MIN;
    ok &= reader_varint(r) == 300;
    ok &= reader_varlong(r) == INT64_MAX;
    ok &= slice_eq_str(reader_string(r), "str");
    ok &= slice_is_null(reader_nullable_string(r));
    ok &= slice_eq_str(reader_nullable_string(r), "ns");
    ok &= slice_eq_str(reader_bytes(r), "by");
    ok &= slice_is_null(reader_nullable_bytes(r));
    ok &= slice_eq_str(reader_nullable_bytes(r), "nb");
    ok &= slice_eq_str(reader_compact_string(r), "cs");
    ok &= slice_is_null(reader_compact_nullable_string(r));
    ok &= slice_eq_str(reader_compact_bytes(r), "cb");
    ok &= slice_eq_str(reader_compact_nullable_bytes(r), "cn");
    reader_skip_tagged_fields(r);
    ok &= slice_eq_str(reader_raw(r, 3), "end");
    return ok;
}

Test(reader, complete_encoding_of_every_type_decodes)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    encode_every_type(&w);
    struct reader r;
    reader_over(&r, &w);
    cr_assert(decode_every_type(&r));
    cr_assert(reader_done(&r));
    writer_free(&w);
}

Test(reader, short_input_sets_rc_short_at_every_truncation_point)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    encode_every_type(&w);
    cr_assert_eq(w.rc, RC_OK);
    for (size_t cut = 0; cut < w.len; cut++) {
        uint8_t *buf = exact_copy(w.data, cut);
        struct reader r;
        reader_init(&r, buf, cut);
        (void)decode_every_type(&r);
        cr_expect_eq(r.rc, RC_SHORT, "cut at %zu of %zu: rc %d", cut, w.len,
                     r.rc);
        cr_expect_leq(r.pos, cut);
        free(buf);
    }
    writer_free(&w);
}

Test(reader, truncated_string_body_consumes_nothing)
{
    const uint8_t in[] = {0x00, 0x05, 'a', 'b', 'c'};
    uint8_t *buf = exact_copy(in, sizeof(in));
    struct reader r;
    reader_init(&r, buf, sizeof(in));
    struct slice s = reader_string(&r);
    cr_assert_eq(r.rc, RC_SHORT);
    cr_assert_eq(r.pos, 0, "the length prefix is not consumed either");
    cr_assert(!slice_is_null(s));
    cr_assert_eq(s.len, 0);
    free(buf);
}

Test(reader, truncated_varint_consumes_nothing)
{
    const uint8_t in[] = {0x80, 0x80};
    uint8_t *buf = exact_copy(in, sizeof(in));
    struct reader r;
    reader_init(&r, buf, sizeof(in));
    cr_assert_eq(reader_uvarint(&r), 0);
    cr_assert_eq(r.rc, RC_SHORT);
    cr_assert_eq(r.pos, 0);
    free(buf);
}

/* --- Malformed encodings ------------------------------------------------- */

static int read_uvarint_rc(const uint8_t *in, size_t n, uint32_t *out)
{
    uint8_t *buf = exact_copy(in, n);
    struct reader r;
    reader_init(&r, buf, n);
    *out = reader_uvarint(&r);
    int rc = r.rc;
    free(buf);
    return rc;
}

static int read_varlong_rc(const uint8_t *in, size_t n, int64_t *out)
{
    uint8_t *buf = exact_copy(in, n);
    struct reader r;
    reader_init(&r, buf, n);
    *out = reader_varlong(&r);
    int rc = r.rc;
    free(buf);
    return rc;
}

Test(reader, six_byte_uvarint_is_malformed)
{
    const uint8_t in[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    uint32_t v;
    cr_assert_eq(read_uvarint_rc(in, sizeof(in), &v), RC_MALFORMED);
    cr_assert_eq(v, 0);
}

Test(reader, fifth_uvarint_byte_with_continuation_is_malformed_not_short)
{
    const uint8_t in[] = {0x80, 0x80, 0x80, 0x80, 0x80};
    uint32_t v;
    cr_assert_eq(read_uvarint_rc(in, sizeof(in), &v), RC_MALFORMED);
}

Test(reader, uvarint_above_32_bits_is_malformed)
{
    const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    uint32_t v;
    cr_assert_eq(read_uvarint_rc(over, sizeof(over), &v), RC_MALFORMED);
    cr_assert_eq(read_uvarint_rc(max, sizeof(max), &v), RC_OK);
    cr_assert_eq(v, UINT32_MAX);
}

Test(reader, varint_shares_the_uvarint_limits)
{
    const uint8_t in[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_varint(&r), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
}

Test(reader, non_minimal_uvarint_within_five_bytes_is_accepted)
{
    const uint8_t in[] = {0x80, 0x80, 0x00};
    uint32_t v;
    cr_assert_eq(read_uvarint_rc(in, sizeof(in), &v), RC_OK);
    cr_assert_eq(v, 0);
}

Test(reader, eleven_byte_varlong_is_malformed)
{
    uint8_t in[11];
    memset(in, 0x80, 10);
    in[10] = 0x00;
    int64_t v;
    cr_assert_eq(read_varlong_rc(in, sizeof(in), &v), RC_MALFORMED);
    cr_assert_eq(v, 0);
}

Test(reader, varlong_above_64_bits_is_malformed)
{
    uint8_t in[10];
    memset(in, 0xff, 9);
    in[9] = 0x02;
    int64_t v;
    cr_assert_eq(read_varlong_rc(in, sizeof(in), &v), RC_MALFORMED);
}

Test(reader, negative_string_length_is_malformed)
{
    const uint8_t minus_two[] = {0xff, 0xfe, 'a', 'b'};
    const uint8_t minus_one[] = {0xff, 0xff, 'a', 'b'};
    struct reader r;
    reader_init(&r, minus_two, sizeof(minus_two));
    (void)reader_string(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
    reader_init(&r, minus_one, sizeof(minus_one));
    (void)reader_string(&r);
    cr_assert_eq(r.rc, RC_MALFORMED, "-1 is null, not a STRING");
    reader_init(&r, minus_two, sizeof(minus_two));
    (void)reader_nullable_string(&r);
    cr_assert_eq(r.rc, RC_MALFORMED, "only -1 is null");
    reader_init(&r, minus_one, sizeof(minus_one));
    cr_assert(slice_is_null(reader_nullable_string(&r)));
    cr_assert_eq(r.rc, RC_OK);
    cr_assert_eq(r.pos, 2);
}

Test(reader, negative_bytes_length_is_malformed)
{
    const uint8_t minus_one[] = {0xff, 0xff, 0xff, 0xff};
    const uint8_t minus_two[] = {0xff, 0xff, 0xff, 0xfe};
    const uint8_t int_min[] = {0x80, 0x00, 0x00, 0x00};
    struct reader r;
    reader_init(&r, minus_one, sizeof(minus_one));
    (void)reader_bytes(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    reader_init(&r, minus_two, sizeof(minus_two));
    (void)reader_nullable_bytes(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    reader_init(&r, int_min, sizeof(int_min));
    (void)reader_nullable_bytes(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    reader_init(&r, minus_one, sizeof(minus_one));
    cr_assert(slice_is_null(reader_nullable_bytes(&r)));
    cr_assert(reader_done(&r));
}

Test(reader, bytes_length_past_the_end_is_short)
{
    const uint8_t in[] = {0x7f, 0xff, 0xff, 0xff, 0x00};
    uint8_t *buf = exact_copy(in, sizeof(in));
    struct reader r;
    reader_init(&r, buf, sizeof(in));
    (void)reader_bytes(&r);
    cr_assert_eq(r.rc, RC_SHORT);
    cr_assert_eq(r.pos, 0);
    free(buf);
}

Test(reader, compact_null_is_malformed_where_not_nullable)
{
    const uint8_t in[] = {0x00};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    (void)reader_compact_string(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    reader_init(&r, in, sizeof(in));
    (void)reader_compact_bytes(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
}

Test(reader, compact_string_longer_than_int16_is_malformed)
{
    /* uvarint 32769 = length 32768, one more than an int16 allows. */
    const uint8_t in[] = {0x81, 0x80, 0x02};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    (void)reader_compact_nullable_string(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
}

/* --- Array counts -------------------------------------------------------- */

Test(reader, array_count_minus_one_is_a_null_array)
{
    const uint8_t in[] = {0xff, 0xff, 0xff, 0xff};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_array_len(&r, 4), -1);
    cr_assert(reader_done(&r));
}

Test(reader, array_count_minus_two_is_malformed)
{
    const uint8_t in[] = {0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_array_len(&r, 1), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
}

Test(reader, array_count_larger_than_remaining_bytes_is_malformed)
{
    /* 3 int32 elements announced, 8 bytes sent. */
    const uint8_t in[] = {0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_array_len(&r, 4), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
    /* The same bytes hold 2 elements, or 8 one-byte elements. */
    const uint8_t two[] = {0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2};
    reader_init(&r, two, sizeof(two));
    cr_assert_eq(reader_array_len(&r, 4), 2);
    cr_assert_eq(r.rc, RC_OK);
    const uint8_t eight[] = {0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 2};
    reader_init(&r, eight, sizeof(eight));
    cr_assert_eq(reader_array_len(&r, 1), 8);
    cr_assert_eq(r.rc, RC_OK);
}

Test(reader, huge_array_counts_are_malformed_and_return_zero)
{
    const uint8_t max[] = {0x7f, 0xff, 0xff, 0xff};
    struct reader r;
    reader_init(&r, max, sizeof(max));
    cr_assert_eq(reader_array_len(&r, 1), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    const uint8_t compact_max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    reader_init(&r, compact_max, sizeof(compact_max));
    cr_assert_eq(reader_compact_array_len(&r, 1), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
}

Test(reader, array_count_above_the_hard_bound_is_malformed_even_if_sent)
{
    /* Enough one-byte elements for the count, but the count itself is over
     * KAFKA_ARRAY_COUNT_MAX; exactly the bound is accepted. */
    size_t n = 4 + (size_t)KAFKA_ARRAY_COUNT_MAX + 1;
    uint8_t *buf = calloc(n, 1);
    cr_assert_not_null(buf);
    uint32_t over = KAFKA_ARRAY_COUNT_MAX + 1u;
    buf[0] = (uint8_t)(over >> 24);
    buf[1] = (uint8_t)(over >> 16);
    buf[2] = (uint8_t)(over >> 8);
    buf[3] = (uint8_t)over;
    struct reader r;
    reader_init(&r, buf, n);
    cr_assert_eq(reader_array_len(&r, 1), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    buf[3] = (uint8_t)(over - 1);
    buf[2] = (uint8_t)((over - 1) >> 8);
    buf[1] = (uint8_t)((over - 1) >> 16);
    reader_init(&r, buf, n);
    cr_assert_eq(reader_array_len(&r, 1), (int32_t)KAFKA_ARRAY_COUNT_MAX);
    cr_assert_eq(r.rc, RC_OK);
    free(buf);
}

Test(reader, compact_array_count_larger_than_remaining_is_malformed)
{
    const uint8_t in[] = {0x05, 0x00, 0x00}; /* 4 elements, 2 bytes */
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_compact_array_len(&r, 1), 0);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
}

Test(reader, tagged_field_count_larger_than_remaining_is_malformed)
{
    const uint8_t in[] = {0x7f, 0x00, 0x00};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    reader_skip_tagged_fields(&r);
    cr_assert_eq(r.rc, RC_MALFORMED);
    cr_assert_eq(r.pos, 0);
}

Test(reader, tagged_field_size_past_the_end_is_short)
{
    const uint8_t in[] = {0x01, 0x00, 0x09, 'a'};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    reader_skip_tagged_fields(&r);
    cr_assert_eq(r.rc, RC_SHORT);
    cr_assert_eq(r.pos, 0);
}

/* --- Sticky error -------------------------------------------------------- */

Test(reader, reads_after_a_failure_return_zero_and_do_not_advance)
{
    const uint8_t in[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    cr_assert_eq(reader_i16(&r), 0x0001);
    cr_assert_eq(reader_i64(&r), 0); /* 4 left: short */
    cr_assert_eq(r.rc, RC_SHORT);
    cr_assert_eq(r.pos, 2);
    cr_assert_eq(reader_i8(&r), 0, "would succeed without the error");
    cr_assert_eq(reader_i16(&r), 0);
    cr_assert_eq(reader_i32(&r), 0);
    cr_assert_eq(reader_u32(&r), 0);
    cr_assert_eq(reader_uvarint(&r), 0);
    cr_assert_eq(reader_varint(&r), 0);
    cr_assert_eq(reader_varlong(&r), 0);
    cr_assert_eq(reader_bool(&r), false);
    cr_assert_eq(reader_array_len(&r, 1), 0);
    cr_assert_eq(reader_compact_array_len(&r, 1), 0);
    struct slice s = reader_raw(&r, 1);
    cr_assert(!slice_is_null(s), "an empty, non-null slice");
    cr_assert_eq(s.len, 0);
    s = reader_nullable_string(&r);
    cr_assert(!slice_is_null(s));
    cr_assert_eq(s.len, 0);
    reader_skip_tagged_fields(&r);
    cr_assert_eq(r.pos, 2);
    cr_assert_eq(reader_remaining(&r), 4);
    cr_assert(!reader_done(&r));
}

Test(reader, first_failure_wins)
{
    const uint8_t in[] = {0xff, 0xfe, 0x00};
    struct reader r;
    reader_init(&r, in, sizeof(in));
    (void)reader_string(&r); /* length -2: malformed */
    (void)reader_i64(&r);    /* would be short */
    cr_assert_eq(r.rc, RC_MALFORMED);
    reader_init(&r, in, sizeof(in));
    (void)reader_i64(&r);    /* short */
    (void)reader_string(&r); /* would be malformed */
    cr_assert_eq(r.rc, RC_SHORT);
}

/* --- Garbage ------------------------------------------------------------- */

/* xorshift64*: a fixed seed makes every run feed the same bytes. */
static uint64_t prng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static void check_slice(struct slice s, const uint8_t *buf, size_t len)
{
    if (slice_is_null(s)) {
        CHECK(s.len == 0, "null slice with length %zu", s.len);
        return;
    }
    if (s.len == 0) {
        return; /* may point at the reader's static empty byte */
    }
    uintptr_t lo = (uintptr_t)buf;
    uintptr_t at = (uintptr_t)s.ptr;
    CHECK(at >= lo && s.len <= len && at - lo <= len - s.len,
          "slice of %zu bytes outside the input", s.len);
}

/* A request-shaped decoding sequence with nested arrays, every kind of
 * value, and invariants checked after each step. */
static void decode_garbage(const uint8_t *buf, size_t len)
{
    struct reader r;
    reader_init(&r, buf, len);
    (void)reader_i16(&r);
    (void)reader_varint(&r);
    check_slice(reader_nullable_string(&r), buf, len);
    int32_t n = reader_array_len(&r, 6);
    CHECK(n >= -1, "count %d", n);
    for (int32_t i = 0; i < n; i++) {
        check_slice(reader_string(&r), buf, len);
        int32_t m = reader_compact_array_len(&r, 4);
        CHECK(m == -1 || (size_t)m <= len / 4, "inner count %d", m);
        for (int32_t j = 0; j < m; j++) {
            (void)reader_i32(&r);
        }
        reader_skip_tagged_fields(&r);
    }
    (void)reader_varlong(&r);
    (void)reader_uvarint(&r);
    check_slice(reader_compact_nullable_string(&r), buf, len);
    check_slice(reader_compact_bytes(&r), buf, len);
    check_slice(reader_nullable_bytes(&r), buf, len);
    check_slice(reader_bytes(&r), buf, len);
    (void)reader_i64(&r);
    check_slice(reader_raw(&r, len / 3), buf, len);
    CHECK(r.pos <= len, "pos %zu past len %zu", r.pos, len);
    CHECK(r.rc == RC_OK || r.rc == RC_SHORT || r.rc == RC_MALFORMED,
          "rc %d", r.rc);
    if (r.rc != RC_OK) {
        size_t pos = r.pos;
        (void)reader_i8(&r);
        CHECK(r.pos == pos, "read advanced after an error");
    }
}

Test(reader, random_garbage_never_crashes_or_reads_out_of_bounds)
{
    uint64_t state = 0x9E3779B97F4A7C15ull; /* fixed seed */
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)(prng_next(&state) % 97);
        uint8_t *buf = malloc(len > 0 ? len : 1);
        cr_assert_not_null(buf);
        for (size_t i = 0; i < len; i++) {
            /* Bias towards small and all-ones bytes: short lengths, -1,
             * continuation bits. */
            uint64_t x = prng_next(&state);
            buf[i] = (x & 3) == 0 ? 0 : (x & 3) == 1 ? 0xff : (uint8_t)(x >> 8);
        }
        decode_garbage(buf, len);
        free(buf);
    }
}

Test(reader, mutated_valid_encodings_never_crash_or_read_out_of_bounds)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    encode_every_type(&w);
    cr_assert_eq(w.rc, RC_OK);
    uint64_t state = 42; /* fixed seed */
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)(prng_next(&state) % (w.len + 1));
        uint8_t *buf = exact_copy(w.data, len);
        for (int k = 0; k < 3 && len > 0; k++) {
            uint64_t x = prng_next(&state);
            buf[x % len] = (uint8_t)(x >> 32);
        }
        struct reader r;
        reader_init(&r, buf, len);
        (void)decode_every_type(&r);
        CHECK(r.pos <= len, "pos %zu past len %zu", r.pos, len);
        decode_garbage(buf, len);
        free(buf);
    }
    writer_free(&w);
}
