/* Tests for common/writer.c: exact encodings, growth, the hard maximum,
 * the sticky error, reserve/patch and encoding bounds. Round trips through
 * the reader are in test_reader.c. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"

#define MAX_1M (1024u * 1024u)

static void expect_bytes(const struct writer *w, const uint8_t *want,
                         size_t n)
{
    cr_assert_eq(w->rc, RC_OK, "rc %d", w->rc);
    cr_assert_eq(w->len, n, "len %zu, want %zu", w->len, n);
    cr_assert(memcmp(w->data, want, n) == 0, "bytes differ");
}

Test(writer, fixed_width_integers_are_big_endian)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_i8(&w, -2);
    writer_i16(&w, 0x0102);
    writer_i32(&w, -2);
    writer_u32(&w, 0xA1B2C3D4u);
    writer_i64(&w, 0x0102030405060708);
    writer_bool(&w, true);
    writer_bool(&w, false);
    const uint8_t want[] = {
        0xfe, 0x01, 0x02, 0xff, 0xff, 0xff, 0xfe, 0xa1, 0xb2, 0xc3,
        0xd4, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x01, 0x00,
    };
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, zigzag_varints_have_known_encodings)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_varint(&w, 0);
    writer_varint(&w, -1);
    writer_varint(&w, 1);
    writer_varint(&w, -2);
    writer_varint(&w, 300); /* zigzag 600 */
    const uint8_t want[] = {0x00, 0x01, 0x02, 0x03, 0xd8, 0x04};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, extreme_varints_use_the_maximum_length)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_uvarint(&w, UINT32_MAX);
    writer_varint(&w, INT32_MIN); /* zigzag 0xffffffff */
    writer_varlong(&w, INT64_MIN); /* zigzag 2^64 - 1 */
    const uint8_t want[] = {
        0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    };
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, varint_size_helpers_match_written_length)
{
    const int64_t values[] = {
        0, 1, -1, 63, -64, 64, -65, 300, 8191, 8192, INT32_MAX, INT32_MIN,
        (int64_t)1 << 40, INT64_MAX, INT64_MIN,
    };
    struct writer w;
    writer_init(&w, MAX_1M);
    for (size_t i = 0; i < sizeof(values) / sizeof(*values); i++) {
        int64_t v = values[i];
        writer_reset(&w);
        writer_varlong(&w, v);
        cr_expect_eq(writer_varlong_size(v), w.len, "varlong %lld",
                     (long long)v);
        if (v >= INT32_MIN && v <= INT32_MAX) {
            writer_reset(&w);
            writer_varint(&w, (int32_t)v);
            cr_expect_eq(writer_varint_size((int32_t)v), w.len);
        }
        if (v >= 0 && v <= UINT32_MAX) {
            writer_reset(&w);
            writer_uvarint(&w, (uint32_t)v);
            cr_expect_eq(writer_uvarint_size((uint32_t)v), w.len);
        }
    }
    cr_assert_eq(writer_varint_size(300), 2);
    cr_assert_eq(writer_varlong_size(INT64_MIN), 10);
    writer_free(&w);
}

Test(writer, strings_and_bytes_carry_length_prefixes)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_string(&w, "hi", 2);
    writer_nullable_string(&w, NULL, 0);
    writer_string(&w, NULL, 0);
    writer_bytes(&w, "\x01\x02", 2);
    writer_nullable_bytes(&w, NULL, 7);
    const uint8_t want[] = {
        0x00, 0x02, 'h', 'i', 0xff, 0xff, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x02, 0x01, 0x02, 0xff, 0xff, 0xff, 0xff,
    };
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, compact_forms_use_length_plus_one)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_compact_string(&w, "ab", 2);
    writer_compact_nullable_string(&w, NULL, 0);
    writer_compact_bytes(&w, "", 0);
    writer_compact_nullable_bytes(&w, NULL, 0);
    writer_compact_array_len(&w, 3);
    writer_compact_array_len(&w, -1);
    writer_empty_tagged_fields(&w);
    const uint8_t want[] = {0x03, 'a', 'b', 0x00, 0x01, 0x00, 0x04, 0x00,
                            0x00};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, slice_forms_write_null_and_empty_differently)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_nullable_string_slice(&w, slice_null());
    writer_string_slice(&w, slice_from_str(""));
    writer_nullable_bytes_slice(&w, slice_null());
    writer_bytes_slice(&w, slice_from_str("x"));
    const uint8_t want[] = {0xff, 0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
                            0x00, 0x00, 0x00, 0x01, 'x'};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, grows_past_initial_capacity_keeping_contents)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    for (int32_t i = 0; i < 10000; i++) {
        writer_i32(&w, i);
    }
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(w.len, 40000);
    cr_assert_geq(w.cap, w.len);
    cr_assert_leq(w.cap, w.max);
    for (int32_t i = 0; i < 10000; i++) {
        const uint8_t *p = w.data + 4 * i;
        int32_t v = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
                              ((uint32_t)p[2] << 8) | p[3]);
        cr_expect_eq(v, i);
    }
    writer_free(&w);
    cr_assert_null(w.data);
    cr_assert_eq(w.len, 0);
}

Test(writer, growth_is_capped_at_max)
{
    struct writer w;
    writer_init(&w, 1000);
    uint8_t chunk[300] = {0};
    for (int i = 0; i < 3; i++) {
        writer_raw(&w, chunk, sizeof(chunk));
    }
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(w.len, 900);
    cr_assert_leq(w.cap, 1000);
    writer_raw(&w, chunk, 100); /* exactly up to max is fine */
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(w.len, 1000);
    cr_assert_eq(w.cap, 1000);
    writer_free(&w);
}

Test(writer, exceeding_max_sets_too_large_and_stays_sticky)
{
    struct writer w;
    writer_init(&w, 10);
    writer_i64(&w, 1);
    writer_i32(&w, 2); /* 12 > 10 */
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 8, "the failing write wrote nothing");
    writer_i8(&w, 3); /* would fit, but the error is sticky */
    writer_string(&w, "a", 1);
    writer_varint(&w, 0);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 8);
    writer_free(&w);
}

Test(writer, zero_max_refuses_every_write)
{
    struct writer w;
    writer_init(&w, 0);
    writer_i8(&w, 1);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 0);
    writer_free(&w);
}

Test(writer, string_longer_than_int16_sets_too_large)
{
    size_t n = KAFKA_STRING_BYTES_MAX + 1u;
    char *s = malloc(n);
    cr_assert_not_null(s);
    memset(s, 'a', n);
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_string(&w, s, n);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 0);
    writer_reset(&w);
    writer_compact_string(&w, s, n);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 0);
    writer_free(&w);
    free(s);
}

Test(writer, string_of_exactly_int16_max_is_accepted)
{
    size_t n = KAFKA_STRING_BYTES_MAX;
    char *s = malloc(n);
    cr_assert_not_null(s);
    memset(s, 'a', n);
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_string(&w, s, n);
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(w.len, 2 + n);
    cr_assert_eq(w.data[0], 0x7f);
    cr_assert_eq(w.data[1], 0xff);
    writer_free(&w);
    free(s);
}

Test(writer, reserve_then_patch_writes_a_size_prefix)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    writer_i8(&w, 9);
    size_t at = writer_reserve(&w, 4);
    cr_assert_eq(at, 1);
    cr_assert_eq(w.len, 5);
    cr_assert(memcmp(w.data + 1, "\0\0\0\0", 4) == 0, "reserved zeroed");
    writer_string(&w, "abc", 3);
    writer_patch_i32(&w, at, (int32_t)(w.len - at - 4));
    const uint8_t want[] = {0x09, 0x00, 0x00, 0x00, 0x05,
                            0x00, 0x03, 'a', 'b', 'c'};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, reserve_past_max_fails_and_patch_is_then_a_no_op)
{
    struct writer w;
    writer_init(&w, 6);
    writer_i32(&w, 0x01020304);
    size_t at = writer_reserve(&w, 4);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    cr_assert_eq(w.len, 4);
    writer_patch_i32(&w, at, -1); /* must not write past len */
    const uint8_t want[] = {0x01, 0x02, 0x03, 0x04};
    cr_assert(memcmp(w.data, want, sizeof(want)) == 0);
    writer_free(&w);
}

Test(writer, reset_clears_error_and_contents_keeping_buffer)
{
    struct writer w;
    writer_init(&w, 8);
    writer_i64(&w, 7);
    writer_i8(&w, 1);
    cr_assert_eq(w.rc, RC_TOO_LARGE);
    uint8_t *data = w.data;
    writer_reset(&w);
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(w.len, 0);
    cr_assert_eq(w.data, data);
    writer_i16(&w, 0x0a0b);
    const uint8_t want[] = {0x0a, 0x0b};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}

Test(writer, empty_raw_write_is_fine_before_any_allocation)
{
    struct writer w;
    writer_init(&w, 16);
    writer_raw(&w, NULL, 0);
    writer_bytes(&w, NULL, 0);
    const uint8_t want[] = {0x00, 0x00, 0x00, 0x00};
    expect_bytes(&w, want, sizeof(want));
    writer_free(&w);
}
