/* Tests for common/kafka/kafka_codec.c (shared helpers, kafka_error_from_rc,
 * ApiVersions, Metadata) and common/arena.c: exact bytes built by hand
 * from shared/reference/kafka-protocol.md section 4, the answer to an
 * ApiVersions version above ours (the v0 layout), null versus empty
 * topic lists, counts that must not drive
 * allocations, and the arena's bound. Inputs are decoded from heap buffers
 * of their exact length so that `make asan` catches reads past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)

/* --- Expected bytes, built without the writer ---------------------------- */

/* A decoding fixture: the frame copied to an exact heap buffer that stays
 * alive (decoded slices borrow from it) until fixture_done(). */
struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fixture_start(struct fixture *f, const void *p, size_t len)
{
    f->frame = malloc(len > 0 ? len : 1);
    cr_assert_not_null(f->frame);
    if (len > 0) {
        memcpy(f->frame, p, len);
    }
    reader_init(&f->r, f->frame, len);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

/* --- Arena --------------------------------------------------------------- */

Test(kafka_codec_arena, allocations_are_aligned_and_distinct)
{
    struct arena a;
    arena_init(&a, 1u << 20);
    void *p1, *p2, *p3;
    cr_assert_eq(arena_alloc(&a, 3, 1, &p1), RC_OK);
    cr_assert_eq(arena_alloc(&a, 1, 8, &p2), RC_OK);
    cr_assert_eq(arena_alloc(&a, 10, 16, &p3), RC_OK);
    cr_assert_eq((uintptr_t)p1 % _Alignof(max_align_t), 0);
    cr_assert_eq((uintptr_t)p2 % _Alignof(max_align_t), 0);
    cr_assert_eq((uintptr_t)p3 % _Alignof(max_align_t), 0);
    cr_assert((uint8_t *)p2 >= (uint8_t *)p1 + 3);
    cr_assert((uint8_t *)p3 >= (uint8_t *)p2 + 8);
    memset(p3, 0xab, 160);
    arena_free(&a);
}

Test(kafka_codec_arena, empty_allocation_is_null_and_costs_nothing)
{
    struct arena a;
    arena_init(&a, 1u << 20);
    void *p = &a;
    cr_assert_eq(arena_alloc(&a, 0, 16, &p), RC_OK);
    cr_assert_null(p);
    cr_assert_eq(a.held_bytes, 0);
    arena_free(&a);
}

Test(kafka_codec_arena, bound_is_never_exceeded)
{
    struct arena a;
    arena_init(&a, 64u * 1024);
    void *p;
    size_t n_ok = 0;
    while (arena_alloc(&a, 1, 1000, &p) == RC_OK) {
        cr_assert_leq(a.held_bytes, 64u * 1024);
        n_ok++;
    }
    cr_assert_gt(n_ok, 30);
    cr_assert_eq(arena_alloc(&a, 1, 1000, &p), RC_TOO_LARGE);
    cr_assert_null(p);
    cr_assert_eq(arena_alloc(&a, SIZE_MAX / 2, 4, &p), RC_TOO_LARGE);
    arena_free(&a);
    cr_assert_eq(a.held_bytes, 0);
}

Test(kafka_codec_arena, reset_keeps_one_block_for_reuse)
{
    struct arena a;
    arena_init(&a, 1u << 20);
    void *p;
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(arena_alloc(&a, 1, 3000, &p), RC_OK);
    }
    size_t held = a.held_bytes;
    arena_reset(&a);
    cr_assert_gt(a.held_bytes, 0);
    cr_assert_lt(a.held_bytes, held);
    size_t kept = a.held_bytes;
    cr_assert_eq(arena_alloc(&a, 1, 3000, &p), RC_OK);
    cr_assert_eq(a.held_bytes, kept, "the kept block is reused");
    arena_free(&a);
}

/* --- Errors and versions ------------------------------------------------- */

Test(kafka_codec, error_from_rc_is_one_general_mapping)
{
    cr_expect_eq(kafka_error_from_rc(RC_OK), KAFKA_ERROR_NONE);
    cr_expect_eq(kafka_error_from_rc(RC_CORRUPT), 2);
    cr_expect_eq(kafka_error_from_rc(RC_SHORT), 2);
    cr_expect_eq(kafka_error_from_rc(RC_MALFORMED), 87);
    cr_expect_eq(kafka_error_from_rc(RC_TOO_LARGE), 10);
    cr_expect_eq(kafka_error_from_rc(RC_OUT_OF_RANGE), 1);
    cr_expect_eq(kafka_error_from_rc(RC_NOT_FOUND), 3);
    cr_expect_eq(kafka_error_from_rc(RC_TIMEOUT), 7);
    cr_expect_eq(kafka_error_from_rc(RC_EXISTS), 36);
    cr_expect_eq(kafka_error_from_rc(RC_IO), 56); /* KAFKA_STORAGE_ERROR */
    cr_expect_eq(kafka_error_from_rc(RC_NOMEM), -1);
    cr_expect_eq(kafka_error_from_rc(12345), -1);
    cr_expect_str_eq(kafka_error_name(kafka_error_from_rc(RC_MALFORMED)),
                     "INVALID_RECORD");
}

Test(kafka_codec, version_ranges_match_the_reference)
{
    int16_t min = -5, max = -5;
    cr_assert(kafka_codec_version_range(KAFKA_API_PRODUCE, &min, &max));
    cr_expect(min == 3 && max == 11);
    cr_assert(kafka_codec_version_range(KAFKA_API_FETCH, &min, &max));
    cr_expect(min == 4 && max == 16);
    cr_assert(kafka_codec_version_range(KAFKA_API_METADATA, &min, &max));
    cr_expect(min == 0 && max == 12);
    cr_assert(kafka_codec_version_range(KAFKA_API_API_VERSIONS, NULL, &max));
    cr_expect_eq(max, 3);
    cr_assert(kafka_codec_version_range(9 /* OffsetFetch */, &min, &max));
    cr_expect(min == 0 && max == 9);
    cr_assert(kafka_codec_version_range(8 /* OffsetCommit */, &min, &max));
    cr_expect(min == 0 && max == 9);
    cr_assert(kafka_codec_version_range(2 /* ListOffsets */, &min, &max));
    cr_expect(min == 0 && max == 8);
    cr_assert(kafka_codec_version_range(21 /* DeleteRecords */, &min, &max));
    cr_expect(min == 0 && max == 2);
    cr_expect_not(kafka_codec_version_range(24 /* AddPartitionsToTxn */,
                                            NULL, NULL));
}

/* --- ApiVersions --------------------------------------------------------- */

static const struct kafka_ApiVersion two_keys[] = {{0, 3, 8}, {18, 0, 2}};

/* w holds exactly want[0..n). */
static void expect_raw(const struct writer *w, const uint8_t *want, size_t n)
{
    struct bb x = {.n = n};
    memcpy(x.b, want, n);
    expect_bytes(w, &x);
}

/* Two keys and a throttle time of 99, encoded at version v into *w. */
static void encode_two_keys(struct writer *w, int16_t v)
{
    struct kafka_ApiVersionsResponse resp = {
        .ErrorCode = 0, .ApiKeys = two_keys, .ApiKeysCnt = 2,
        .ThrottleTimeMs = 99};
    writer_init(w, MAX_16M);
    cr_assert_eq(kafka_api_versions_response_encode(w, v, &resp), RC_OK);
}

Test(kafka_codec, api_versions_v0_response_has_no_throttle_time)
{
    struct writer w;
    encode_two_keys(&w, 0);
    struct bb x = {.n = 0};
    bb_i16(&x, 0);
    bb_i32(&x, 2);
    bb_i16(&x, 0), bb_i16(&x, 3), bb_i16(&x, 8);
    bb_i16(&x, 18), bb_i16(&x, 0), bb_i16(&x, 2);
    expect_bytes(&w, &x);
    writer_free(&w);
}

Test(kafka_codec, api_versions_v2_response_ends_with_throttle_time)
{
    struct writer w;
    encode_two_keys(&w, 2);
    struct bb x = {.n = 0};
    bb_i16(&x, 0);
    bb_i32(&x, 2);
    bb_i16(&x, 0), bb_i16(&x, 3), bb_i16(&x, 8);
    bb_i16(&x, 18), bb_i16(&x, 0), bb_i16(&x, 2);
    bb_i32(&x, 99);
    expect_bytes(&w, &x);
    writer_free(&w);
}

Test(kafka_codec, api_versions_v3_request_carries_the_client_software)
{
    /* librdkafka's v3 body: compact strings, then tags. */
    static const uint8_t body[] = {0x0b, 'l', 'i', 'b', 'r', 'd', 'k', 'a',
                                   'f', 'k', 'a', 0x06, '2', '.', '0', '.',
                                   '2', 0x00};
    struct fixture f;
    fixture_start(&f, body, sizeof(body));
    struct kafka_ApiVersionsRequest req;
    cr_assert_eq(kafka_api_versions_request_decode(&f.r, 3, &f.a, &req),
                 RC_OK);
    cr_expect_eq(req.ClientSoftwareName.len, 10);
    cr_expect_eq(memcmp(req.ClientSoftwareName.ptr, "librdkafka", 10), 0);
    cr_expect_eq(req.ClientSoftwareVersion.len, 5);
    cr_expect_eq(memcmp(req.ClientSoftwareVersion.ptr, "2.0.2", 5), 0);
    cr_expect_eq(f.r.pos, sizeof(body), "every byte read");
    /* and the encoder writes the same bytes */
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_api_versions_request_encode(&w, 3, &req), RC_OK);
    expect_raw(&w, body, sizeof(body));
    writer_free(&w);
    fixture_done(&f);
    /* a v3 body cut short does not parse */
    fixture_start(&f, body, 5);
    cr_expect_neq(kafka_api_versions_request_decode(&f.r, 3, &f.a, &req),
                  RC_OK);
    fixture_done(&f);
}

Test(kafka_codec, api_versions_v3_response_is_flexible)
{
    struct writer w;
    encode_two_keys(&w, 3);
    static const uint8_t want[] = {
        0x00, 0x00,                               /* error */
        0x03,                                     /* compact: 2 entries */
        0x00, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, /* Produce 3..8, tags */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x02, 0x00, /* ApiVersions 0..2 */
        0x00, 0x00, 0x00, 0x63,                   /* throttle 99 */
        0x00};                                    /* tags */
    expect_raw(&w, want, sizeof(want));
    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_ApiVersionsResponse got;
    cr_assert_eq(kafka_api_versions_response_decode(&f.r, 3, &f.a, &got),
                 RC_OK);
    cr_expect_eq(got.ApiKeysCnt, 2);
    cr_expect_eq(got.ApiKeys[1].ApiKey, 18);
    cr_expect_eq(got.ThrottleTimeMs, 99);
    fixture_done(&f);
    writer_free(&w);
}

Test(kafka_codec, api_versions_unsupported_answer_uses_the_v0_layout)
{
    static const struct kafka_ApiVersion only[] = {{18, 0, 3}};
    struct kafka_ApiVersionsResponse resp = {
        .ErrorCode = KAFKA_ERROR_UNSUPPORTED_VERSION, .ApiKeys = only,
        .ApiKeysCnt = 1, .ThrottleTimeMs = 0};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_api_versions_response_encode(&w, 4, &resp), RC_OK);
    static const uint8_t want[] = {0x00, 0x23,             /* error 35 */
                                   0x00, 0x00, 0x00, 0x01, /* one entry */
                                   0x00, 0x12, 0x00, 0x00, 0x00, 0x03};
    expect_raw(&w, want, sizeof(want));
    /* What the client reads back, in the same layout. */
    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_ApiVersionsResponse got;
    cr_assert_eq(kafka_api_versions_response_decode(&f.r, 4, &f.a, &got),
                 RC_OK);
    cr_expect_eq(got.ErrorCode, 35);
    cr_expect_eq(got.ApiKeysCnt, 1);
    cr_expect_eq(got.ApiKeys[0].MaxVersion, 3);
    fixture_done(&f);
    writer_free(&w);
}

/* v0's body is empty: a byte there is left unread, as Kafka leaves it. */
Test(kafka_codec, api_versions_v0_request_reads_nothing)
{
    static const uint8_t extra[] = {0};
    struct fixture f;
    fixture_start(&f, extra, sizeof(extra));
    struct kafka_ApiVersionsRequest req;
    cr_expect_eq(kafka_api_versions_request_decode(&f.r, 0, &f.a, &req),
                 RC_OK);
    cr_expect_eq(f.r.pos, 0u);
    fixture_done(&f);
    fixture_start(&f, NULL, 0);
    cr_expect_eq(kafka_api_versions_request_decode(&f.r, 2, &f.a, &req),
                 RC_OK);
    fixture_done(&f);
}

/* --- Metadata: requests -------------------------------------------------- */

static struct kafka_MetadataRequest decode_metadata(struct fixture *f,
                                                    const struct bb *x,
                                                    int16_t v, int want_rc)
{
    struct kafka_MetadataRequest req;
    fixture_start(f, x->b, x->n);
    cr_assert_eq(kafka_metadata_request_decode(&f->r, v, &f->a, &req),
                 want_rc);
    return req;
}

Test(kafka_codec, metadata_v1_null_topics_means_all_and_empty_means_none)
{
    struct kafka_MetadataRequest all = {.Topics = NULL, .TopicsCnt = -1};
    struct kafka_MetadataRequest none = {.Topics = NULL, .TopicsCnt = 0};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_request_encode(&w, 1, &all), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, -1);
    expect_bytes(&w, &x);
    writer_reset(&w);
    cr_assert_eq(kafka_metadata_request_encode(&w, 1, &none), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 0);
    expect_bytes(&w, &y);
    writer_free(&w);

    struct fixture f;
    struct kafka_MetadataRequest got = decode_metadata(&f, &x, 1, RC_OK);
    cr_expect_eq(got.TopicsCnt, -1);
    cr_expect(got.AllowAutoTopicCreation, "Kafka's default below v4");
    fixture_done(&f);
    got = decode_metadata(&f, &y, 1, RC_OK);
    cr_expect_eq(got.TopicsCnt, 0);
    fixture_done(&f);
}

/* v0 (kafka-python's and Sarama's first Metadata): the list is not
 * nullable, and empty asks for every topic. */
Test(kafka_codec, metadata_v0_empty_topics_means_all)
{
    struct kafka_MetadataRequest all = {.Topics = NULL, .TopicsCnt = -1};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_request_encode(&w, 0, &all), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 0);
    expect_bytes(&w, &x);
    writer_free(&w);
    struct fixture f;
    struct kafka_MetadataRequest got = decode_metadata(&f, &x, 0, RC_OK);
    cr_expect_eq(got.TopicsCnt, -1, "all topics, as null from v1 on");
    cr_expect(got.AllowAutoTopicCreation);
    fixture_done(&f);
    struct bb y = {.n = 0};
    bb_i32(&y, -1);
    decode_metadata(&f, &y, 0, RC_MALFORMED);
    fixture_done(&f);
}

Test(kafka_codec, metadata_v8_request_bytes)
{
    static const struct kafka_MetadataRequestTopic topics[] = {
        {{(const uint8_t *)"a", 1}, {{0}}},
        {{(const uint8_t *)"bc", 2}, {{0}}}};
    struct kafka_MetadataRequest req = {
        .Topics = topics, .TopicsCnt = 2, .AllowAutoTopicCreation = false,
        .IncludeClusterAuthorizedOperations = true,
        .IncludeTopicAuthorizedOperations = false};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_request_encode(&w, 8, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 2);
    bb_str(&x, "a");
    bb_str(&x, "bc");
    bb_i8(&x, 0), bb_i8(&x, 1), bb_i8(&x, 0);
    expect_bytes(&w, &x);
    writer_free(&w);

    struct fixture f;
    struct kafka_MetadataRequest got = decode_metadata(&f, &x, 8, RC_OK);
    cr_assert_eq(got.TopicsCnt, 2);
    cr_expect(slice_eq_str(got.Topics[1].Name, "bc"));
    cr_expect(got.Topics[1].Name.ptr >= f.frame &&
                  got.Topics[1].Name.ptr < f.frame + x.n,
              "names borrow from the frame");
    cr_expect_not(got.AllowAutoTopicCreation);
    cr_expect(got.IncludeClusterAuthorizedOperations);
    fixture_done(&f);
}

/* --- Metadata: responses ------------------------------------------------- */

static const int32_t replicas[] = {1, 2};

static struct kafka_MetadataResponse metadata_response(void)
{
    static struct kafka_MetadataResponseBroker brokers[1];
    static struct kafka_MetadataResponsePartition parts[1];
    static struct kafka_MetadataResponseTopic topics[1];
    brokers[0] = (struct kafka_MetadataResponseBroker){
        1, slice_from_str("h"), 9092, slice_null()};
    parts[0] = (struct kafka_MetadataResponsePartition){
        0, 0, 1, 7, replicas, 2, replicas, 1, NULL, 0};
    topics[0] = (struct kafka_MetadataResponseTopic){
        0, slice_from_str("t"), false, parts, 1, INT32_MIN, {{0}}};
    return (struct kafka_MetadataResponse){
        .ThrottleTimeMs = 5, .Brokers = brokers, .BrokersCnt = 1,
        .ClusterId = slice_from_str("c"), .ControllerId = 1,
        .Topics = topics, .TopicsCnt = 1,
        .ClusterAuthorizedOperations = INT32_MIN};
}

/* The head of a partition in every Metadata version. */
static void bb_metadata_partition_head(struct bb *x)
{
    bb_i16(x, 0); /* error */
    bb_i32(x, 0); /* index */
    bb_i32(x, 1); /* leader */
}

Test(kafka_codec, metadata_v1_response_bytes)
{
    struct kafka_MetadataResponse resp = metadata_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_response_encode(&w, 1, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1);                                   /* brokers */
    bb_i32(&x, 1), bb_str(&x, "h"), bb_i32(&x, 9092), bb_str(&x, NULL);
    bb_i32(&x, 1);                                   /* controller */
    bb_i32(&x, 1);                                   /* topics */
    bb_i16(&x, 0), bb_str(&x, "t"), bb_i8(&x, 0);
    bb_i32(&x, 1);                                   /* partitions */
    bb_metadata_partition_head(&x);
    bb_i32(&x, 2), bb_i32(&x, 1), bb_i32(&x, 2);     /* replicas */
    bb_i32(&x, 1), bb_i32(&x, 1);                    /* isr */
    expect_bytes(&w, &x);
    writer_free(&w);
}

Test(kafka_codec, metadata_v0_response_bytes)
{
    struct kafka_MetadataResponse resp = metadata_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_response_encode(&w, 0, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1);                                   /* brokers */
    bb_i32(&x, 1), bb_str(&x, "h"), bb_i32(&x, 9092); /* no rack */
    bb_i32(&x, 1);                                   /* topics */
    bb_i16(&x, 0), bb_str(&x, "t");                  /* no is_internal */
    bb_i32(&x, 1);                                   /* partitions */
    bb_metadata_partition_head(&x);
    bb_i32(&x, 2), bb_i32(&x, 1), bb_i32(&x, 2);     /* replicas */
    bb_i32(&x, 1), bb_i32(&x, 1);                    /* isr */
    expect_bytes(&w, &x);
    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_MetadataResponse got;
    cr_assert_eq(kafka_metadata_response_decode(&f.r, 0, &f.a, &got), RC_OK);
    cr_expect_eq(got.ControllerId, -1);
    cr_expect_eq(got.Topics[0].Partitions[0].IsrNodesCnt, 1);
    fixture_done(&f);
    writer_free(&w);
}

Test(kafka_codec, metadata_v8_response_bytes)
{
    struct kafka_MetadataResponse resp = metadata_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_response_encode(&w, 8, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 5);                                   /* throttle */
    bb_i32(&x, 1);                                   /* brokers */
    bb_i32(&x, 1), bb_str(&x, "h"), bb_i32(&x, 9092), bb_str(&x, NULL);
    bb_str(&x, "c");                                 /* cluster id */
    bb_i32(&x, 1);                                   /* controller */
    bb_i32(&x, 1);                                   /* topics */
    bb_i16(&x, 0), bb_str(&x, "t"), bb_i8(&x, 0);
    bb_i32(&x, 1);                                   /* partitions */
    bb_metadata_partition_head(&x);
    bb_i32(&x, 7);                                   /* leader epoch */
    bb_i32(&x, 2), bb_i32(&x, 1), bb_i32(&x, 2);     /* replicas */
    bb_i32(&x, 1), bb_i32(&x, 1);                    /* isr */
    bb_i32(&x, 0);                                   /* offline */
    bb_i32(&x, INT32_MIN);                           /* topic ops */
    bb_i32(&x, INT32_MIN);                           /* cluster ops */
    expect_bytes(&w, &x);

    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_MetadataResponse got;
    cr_assert_eq(kafka_metadata_response_decode(&f.r, 8, &f.a, &got),
                 RC_OK);
    cr_expect(slice_is_null(got.Brokers[0].Rack));
    cr_expect(slice_eq_str(got.ClusterId, "c"));
    cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch, 7);
    cr_expect_eq(got.Topics[0].Partitions[0].ReplicaNodes[1], 2);
    fixture_done(&f);
    writer_free(&w);
}

/* --- Counts and bounds --------------------------------------------------- */

Test(kafka_codec, count_larger_than_bytes_left_is_refused_before_allocating)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 1000000);
    bb_str(&x, "a");
    bb_str(&x, "b");
    struct fixture f;
    decode_metadata(&f, &x, 1, RC_SHORT);
    cr_expect_eq(f.a.held_bytes, 0, "nothing allocated");
    fixture_done(&f);
}

Test(kafka_codec, negative_counts_and_null_non_nullable_arrays_are_malformed)
{
    struct bb x = {.n = 0};
    bb_i32(&x, -2);
    struct fixture f;
    decode_metadata(&f, &x, 1, RC_MALFORMED);
    fixture_done(&f);

    /* Produce's topics are not nullable. */
    struct bb y = {.n = 0};
    bb_str(&y, NULL);
    bb_i16(&y, 1);
    bb_i32(&y, 1000);
    bb_i32(&y, -1);
    fixture_start(&f, y.b, y.n);
    struct kafka_ProduceRequest req;
    cr_expect_eq(kafka_produce_request_decode(&f.r, 3, &f.a, &req),
                 RC_MALFORMED);
    fixture_done(&f);
}

/* n empty topic names, as a Metadata request body, in a heap buffer. */
static uint8_t *many_topics(int32_t n, size_t *len)
{
    *len = 4 + 2 * (size_t)n;
    uint8_t *p = calloc(1, *len);
    cr_assert_not_null(p);
    p[0] = (uint8_t)(n >> 24);
    p[1] = (uint8_t)(n >> 16);
    p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
    return p;
}

Test(kafka_codec, topics_beyond_the_request_cap_are_too_large)
{
    int32_t cap = (int32_t)KAFKA_REQUEST_TOPICS_MAX;
    for (int32_t n = cap; n <= cap + 1; n++) {
        size_t len;
        uint8_t *p = many_topics(n, &len);
        struct fixture f;
        fixture_start(&f, p, len);
        struct kafka_MetadataRequest req;
        int rc = kafka_metadata_request_decode(&f.r, 1, &f.a, &req);
        cr_expect_eq(rc, n == cap ? RC_OK : RC_TOO_LARGE, "n=%d: %s", n,
                     rc_str(rc));
        fixture_done(&f);
        free(p);
    }
}

Test(kafka_codec, arena_exhaustion_is_too_large)
{
    size_t len;
    uint8_t *p = many_topics(1000, &len);
    struct fixture f;
    fixture_start(&f, p, len);
    arena_init(&f.a, 4096); /* 1000 slices need 16 000 bytes */
    struct kafka_MetadataRequest req;
    cr_expect_eq(kafka_metadata_request_decode(&f.r, 1, &f.a, &req),
                 RC_TOO_LARGE);
    cr_expect_leq(f.a.held_bytes, 4096);
    fixture_done(&f);
    free(p);
}
