/* Tests for common/kafka/kafka_frame.c: request and response frames round
 * trip through the writer and the reader; the exact bytes of a request
 * header; truncated frames, another correlation id, sizes out of bounds
 * and a size that does not fit int32. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/kafka/kafka_frame.h"
#include "common/limits.h"
#include "common/rc.h"

#define MAX_1M (1024u * 1024u)

/* A request frame of key 1 v11, correlation id 7, client_id, body "xyz". */
static void request_frame(struct writer *w, const char *client_id)
{
    writer_init(w, MAX_1M);
    size_t at = kafka_frame_request_begin(w, 1, 11, 7, client_id);
    writer_raw(w, "xyz", 3);
    cr_assert_eq(kafka_frame_end(w, at), RC_OK);
}

Test(kafka_frame, request_header_bytes_are_header_v1)
{
    struct writer w;
    request_frame(&w, "cairn");
    const uint8_t want[] = {
        0, 0, 0, 18,         /* size: 10 + 5 + 3 */
        0, 1, 0, 11,         /* api_key, api_version */
        0, 0, 0, 7,          /* correlation_id */
        0, 5, 'c', 'a', 'i', 'r', 'n', 'x', 'y', 'z'};
    cr_assert_eq(w.len, sizeof want);
    cr_assert(memcmp(w.data, want, sizeof want) == 0);
    cr_assert_eq(KAFKA_FRAME_REQUEST_HEADER_BYTES(5u), 15u);
    writer_free(&w);
}

Test(kafka_frame, request_round_trips)
{
    struct writer w;
    request_frame(&w, "replica-3");
    struct reader r;
    reader_init(&r, w.data, w.len);
    size_t size = 0;
    cr_assert_eq(kafka_frame_size_read(&r, 0, REQUEST_BYTES_MAX, &size),
                 RC_OK);
    cr_assert_eq(size, w.len - KAFKA_FRAME_SIZE_BYTES);
    struct kafka_frame_request_header h;
    cr_assert_eq(kafka_frame_request_read(&r, &h), RC_OK);
    cr_assert_eq(h.ApiKey, 1);
    cr_assert_eq(h.ApiVersion, 11);
    cr_assert_eq(h.CorrelationId, 7);
    cr_assert(slice_eq_str(h.ClientId, "replica-3"));
    cr_assert_eq(r.len - r.pos, 3u, "the reader stands at the body");
    cr_assert(memcmp(r.p + r.pos, "xyz", 3) == 0);
    writer_free(&w);
}

Test(kafka_frame, empty_client_id_is_an_empty_string)
{
    struct writer w;
    request_frame(&w, "");
    cr_assert_eq(w.len, KAFKA_FRAME_SIZE_BYTES +
                            KAFKA_FRAME_REQUEST_HEADER_BYTES(0u) + 3u);
    cr_assert_eq(w.data[12], 0);
    cr_assert_eq(w.data[13], 0, "int16 length 0, not -1 (null)");
    struct reader r;
    reader_init(&r, w.data + KAFKA_FRAME_SIZE_BYTES,
                w.len - KAFKA_FRAME_SIZE_BYTES);
    struct kafka_frame_request_header h;
    cr_assert_eq(kafka_frame_request_read(&r, &h), RC_OK);
    cr_assert_not(slice_is_null(h.ClientId));
    cr_assert_eq(h.ClientId.len, 0u);
    writer_free(&w);
}

Test(kafka_frame, null_client_id_reads_as_the_null_slice)
{
    const uint8_t frame[] = {0, 3, 0, 0, 0, 0, 0, 9, 0xff, 0xff};
    struct reader r;
    reader_init(&r, frame, sizeof frame);
    struct kafka_frame_request_header h;
    cr_assert_eq(kafka_frame_request_read(&r, &h), RC_OK);
    cr_assert_eq(h.ApiKey, 3);
    cr_assert_eq(h.CorrelationId, 9);
    cr_assert(slice_is_null(h.ClientId));
}

Test(kafka_frame, response_round_trips)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    size_t at = kafka_frame_response_begin(&w, 3, 8, -5); /* Metadata v8 */
    writer_i16(&w, 42);
    cr_assert_eq(kafka_frame_end(&w, at), RC_OK);
    const uint8_t want[] = {0, 0, 0, 6, 0xff, 0xff, 0xff, 0xfb, 0, 42};
    cr_assert_eq(w.len, sizeof want);
    cr_assert(memcmp(w.data, want, sizeof want) == 0);
    struct reader r;
    reader_init(&r, w.data, w.len);
    size_t size = 0;
    cr_assert_eq(kafka_frame_size_read(&r, KAFKA_FRAME_RESPONSE_HEADER_BYTES,
                                       MAX_1M, &size), RC_OK);
    cr_assert_eq(size, 6u);
    int32_t got = 0;
    cr_assert_eq(kafka_frame_response_read(&r, -5, &got), RC_OK);
    cr_assert_eq(got, -5);
    cr_assert_eq(reader_i16(&r), 42);
    cr_assert_eq(r.rc, RC_OK);
    writer_free(&w);
}

/* A flexible version's response carries header v1 (an empty tagged-field
 * section after the id), but ApiVersions's is always v0. */
Test(kafka_frame, flexible_responses_carry_header_v1_but_api_versions)
{
    cr_assert(kafka_frame_response_is_flexible(3, 9));
    cr_assert_not(kafka_frame_response_is_flexible(3, 8));
    cr_assert_not(kafka_frame_response_is_flexible(18, 3));
    struct writer w;
    writer_init(&w, MAX_1M);
    size_t at = kafka_frame_response_begin(&w, 3, 12, 9);
    writer_i16(&w, 42);
    cr_assert_eq(kafka_frame_end(&w, at), RC_OK);
    const uint8_t want[] = {0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 42};
    cr_assert_eq(w.len, sizeof want);
    cr_assert(memcmp(w.data, want, sizeof want) == 0);
    at = kafka_frame_response_begin(&w, 18, 3, 10);
    cr_assert_eq(kafka_frame_end(&w, at), RC_OK);
    cr_assert_eq(w.len - at, 8u, "ApiVersions v3: header v0");

    /* Read back, with a tagged field in the header skipped. */
    const uint8_t tagged[] = {0, 0, 0, 9, 0, 0, 0, 9, 1, 5, 1, 0xaa, 0, 42};
    struct reader r;
    reader_init(&r, tagged, sizeof tagged);
    size_t size = 0;
    int32_t got = 0;
    cr_assert_eq(kafka_frame_size_read(&r, KAFKA_FRAME_RESPONSE_HEADER_BYTES,
                                       MAX_1M, &size), RC_OK);
    cr_assert_eq(kafka_frame_response_read(&r, 9, &got), RC_OK);
    cr_assert_eq(kafka_frame_response_tags(&r, 3, 12), RC_OK);
    cr_assert_eq(reader_i16(&r), 42);
    reader_init(&r, tagged + 8, 3); /* the field's byte missing */
    cr_assert_eq(kafka_frame_response_tags(&r, 3, 12), RC_SHORT);
    writer_free(&w);
}

Test(kafka_frame, a_frame_after_another_in_one_writer)
{
    struct writer w;
    writer_init(&w, MAX_1M);
    size_t first = kafka_frame_response_begin(&w, 0, 8, 1);
    cr_assert_eq(kafka_frame_end(&w, first), RC_OK);
    size_t second = kafka_frame_request_begin(&w, 0, 7, 2, "b");
    writer_i8(&w, 1);
    cr_assert_eq(kafka_frame_end(&w, second), RC_OK);
    cr_assert_eq(second, 8u);
    struct reader r;
    reader_init(&r, w.data + second, w.len - second);
    size_t size = 0;
    cr_assert_eq(kafka_frame_size_read(&r, 0, MAX_1M, &size), RC_OK);
    cr_assert_eq(size, KAFKA_FRAME_REQUEST_HEADER_BYTES(1u) + 1u);
    writer_free(&w);
}

Test(kafka_frame, wrong_correlation_id_is_malformed)
{
    const uint8_t frame[] = {0, 0, 0, 8, 0, 0};
    struct reader r;
    reader_init(&r, frame, sizeof frame);
    int32_t got = 0;
    cr_assert_eq(kafka_frame_response_read(&r, 7, &got), RC_MALFORMED);
    cr_assert_eq(got, 8, "says which id came");
}

Test(kafka_frame, truncated_frames_are_short)
{
    const uint8_t bytes[] = {0, 0, 0, 7, 0, 1, 0, 11, 0, 0, 0, 7, 0, 5, 'c'};
    for (size_t n = 0; n < KAFKA_FRAME_SIZE_BYTES; n++) {
        struct reader r;
        reader_init(&r, bytes, n);
        size_t size = 0;
        cr_assert_eq(kafka_frame_size_read(&r, 0, MAX_1M, &size), RC_SHORT,
                     "%zu bytes of size", n);
    }
    for (size_t n = 0; n < KAFKA_FRAME_RESPONSE_HEADER_BYTES; n++) {
        struct reader r;
        reader_init(&r, bytes, n);
        int32_t got = 0;
        cr_assert_eq(kafka_frame_response_read(&r, 7, &got), RC_SHORT,
                     "%zu bytes of correlation id", n);
    }
    /* A request header cut anywhere, the client id included. */
    for (size_t n = 4; n < sizeof bytes; n++) {
        struct reader r;
        reader_init(&r, bytes + 4, n - 4);
        struct kafka_frame_request_header h;
        cr_assert_eq(kafka_frame_request_read(&r, &h), RC_SHORT,
                     "%zu bytes of request header", n - 4);
    }
}

Test(kafka_frame, sizes_out_of_bounds)
{
    const uint8_t small[] = {0, 0, 0, 3};
    const uint8_t large[] = {0, 0x10, 0, 1};
    const uint8_t negative[] = {0x80, 0, 0, 0};
    struct reader r;
    size_t size = 0;
    reader_init(&r, small, sizeof small);
    cr_assert_eq(kafka_frame_size_read(&r, 4, MAX_1M, &size), RC_MALFORMED);
    cr_assert_eq(size, 3u);
    reader_init(&r, large, sizeof large);
    cr_assert_eq(kafka_frame_size_read(&r, 4, MAX_1M, &size), RC_TOO_LARGE);
    reader_init(&r, negative, sizeof negative);
    cr_assert_eq(kafka_frame_size_read(&r, 4, 0x7fffffffu, &size),
                 RC_TOO_LARGE, "a negative int32 is above any bound");
    reader_init(&r, large, sizeof large);
    cr_assert_eq(kafka_frame_size_read(&r, 4, 0x100001u, &size), RC_OK);
}

Test(kafka_frame, a_size_that_does_not_fit_int32_fails_the_writer)
{
    /* 2 GiB are not written for real: the writer is a plain struct, and
     * kafka_frame_end() only reads its len before patching. */
    uint8_t bytes[4] = {0xaa, 0xaa, 0xaa, 0xaa};
    struct writer w = {.data = bytes,
                       .len = (size_t)INT32_MAX + 5u,
                       .cap = (size_t)INT32_MAX + 5u,
                       .max = (size_t)INT32_MAX + 5u,
                       .rc = RC_OK};
    cr_assert_eq(kafka_frame_end(&w, 0), RC_TOO_LARGE);
    cr_assert_eq(w.rc, RC_TOO_LARGE, "sticky, like the writer's own");
    cr_assert_eq(bytes[0], 0xaa, "nothing patched");
    w.len = (size_t)INT32_MAX + 4u; /* exactly INT32_MAX after the size */
    w.rc = RC_OK;
    cr_assert_eq(kafka_frame_end(&w, 0), RC_OK);
    cr_assert_eq(bytes[0], 0x7f);
    cr_assert_eq(bytes[3], 0xff);
}

Test(kafka_frame, a_failed_writer_stays_failed)
{
    struct writer w;
    writer_init(&w, 8); /* the header alone needs more */
    size_t at = kafka_frame_request_begin(&w, 1, 11, 7, "cairn");
    writer_raw(&w, "xyz", 3);
    cr_assert_eq(kafka_frame_end(&w, at), RC_TOO_LARGE);
    writer_free(&w);
    char id[KAFKA_STRING_BYTES_MAX + 2];
    memset(id, 'i', sizeof id - 1);
    id[sizeof id - 1] = '\0';
    writer_init(&w, MAX_1M);
    at = kafka_frame_request_begin(&w, 1, 11, 7, id);
    cr_assert_eq(kafka_frame_end(&w, at), RC_TOO_LARGE,
                 "a client id longer than an int16 length");
    writer_free(&w);
}

/* A flexible request (ApiVersions v3) carries header v2: a tagged-field
 * section after the client id, which the reader skips to the body. */
Test(kafka_frame, flexible_requests_carry_header_v2)
{
    cr_assert(kafka_frame_is_flexible(18, 3));
    cr_assert_not(kafka_frame_is_flexible(18, 2));
    cr_assert(kafka_frame_is_flexible(1, 12), "Fetch from v12");
    cr_assert_not(kafka_frame_is_flexible(17, 1), "SaslHandshake: never");
    cr_assert_not(kafka_frame_is_flexible(999, 0));
    cr_assert_not(kafka_frame_is_flexible(-1, 0));
    struct writer w;
    writer_init(&w, MAX_1M);
    size_t at = kafka_frame_request_begin(&w, 18, 3, 5, "c");
    writer_i8(&w, 42);
    cr_assert_eq(kafka_frame_end(&w, at), RC_OK);
    cr_assert_eq(w.len, KAFKA_FRAME_SIZE_BYTES +
                            KAFKA_FRAME_REQUEST_HEADER_BYTES(1u) + 1u + 1u,
                 "one byte of (empty) tagged fields");
    /* A client's header v2 with one tagged field: skipped whole. */
    const uint8_t frame[] = {0, 18, 0, 3, 0, 0, 0, 5, 0, 1, 'c',
                             1, 0, 2, 0xAA, 0xBB, /* tag 0, 2 bytes */
                             42};
    struct reader r;
    reader_init(&r, frame, sizeof frame);
    struct kafka_frame_request_header h;
    cr_assert_eq(kafka_frame_request_read(&r, &h), RC_OK);
    cr_assert_eq(h.ApiVersion, 3);
    cr_assert_eq(r.len - r.pos, 1u, "the reader stands at the body");
    cr_assert_eq(r.p[r.pos], 42);
    /* the same bytes as ApiVersions v2 (not flexible): no tags read */
    uint8_t v2[sizeof frame];
    memcpy(v2, frame, sizeof frame);
    v2[3] = 2;
    reader_init(&r, v2, sizeof v2);
    cr_assert_eq(kafka_frame_request_read(&r, &h), RC_OK);
    cr_assert_eq(r.len - r.pos, 6u);
    writer_free(&w);
}
