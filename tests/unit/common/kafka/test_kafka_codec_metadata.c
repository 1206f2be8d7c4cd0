/* Tests for common/kafka/kafka_codec.c's Metadata in its flexible
 * versions (v9..12): exact bytes built by hand from apache/kafka
 * Metadata{Request,Response}.json for the first flexible version (v9),
 * the one that adds TopicId (v10), the one that drops the cluster's
 * authorized operations (v11) and the one that lets a topic be named by
 * id alone (v12); a tagged field in the input is skipped. Frames are
 * decoded from exact heap copies so that `make asan` catches reads past
 * the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_compact_bb.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)
#define S(str) slice_from_str(str)

static const uint8_t id_a[16] = {0x9a, 0x1b, 0x2c, 0x4d, 0x5e, 0x6f,
                                 0x47, 0x01, 0x82, 0x13, 0x24, 0x35,
                                 0x46, 0x57, 0x68, 0x79};

struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fixture_start(struct fixture *f, const void *p, size_t len)
{
    f->frame = exact_copy(p, len);
    reader_init(&f->r, f->frame, len);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

static struct kafka_uuid uuid_of(const uint8_t b[16])
{
    struct kafka_uuid u;
    memcpy(u.bytes, b, 16);
    return u;
}

/* --- Requests ------------------------------------------------------------ */

Test(kafka_codec_metadata, v9_request_is_compact_and_skips_tags)
{
    const struct kafka_MetadataRequestTopic topics[] = {{.Name = S("a")}};
    struct kafka_MetadataRequest req = {
        .Topics = topics, .TopicsCnt = 1, .AllowAutoTopicCreation = true,
        .IncludeClusterAuthorizedOperations = true,
        .IncludeTopicAuthorizedOperations = false};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_request_encode(&w, 9, &req), RC_OK);
    struct bb x = {.n = 0};
    cbb_count(&x, 1), cbb_str(&x, "a"), cbb_tags(&x);
    bb_i8(&x, 1), bb_i8(&x, 1), bb_i8(&x, 0);
    cbb_tags(&x);
    expect_bytes(&w, &x);
    writer_free(&w);

    /* The same with an unknown tagged field (tag 5, 2 bytes) in the
     * topic and one at the top level: both skipped. */
    static const uint8_t two[] = {0xab, 0xcd};
    struct bb y = {.n = 0};
    cbb_count(&y, 1), cbb_str(&y, "a"), cbb_tag1(&y, 5, two, 2);
    bb_i8(&y, 1), bb_i8(&y, 1), bb_i8(&y, 0);
    cbb_tag1(&y, 0, two, 1);
    struct fixture f;
    fixture_start(&f, y.b, y.n);
    struct kafka_MetadataRequest got;
    cr_assert_eq(kafka_metadata_request_decode(&f.r, 9, &f.a, &got), RC_OK);
    cr_assert_eq(got.TopicsCnt, 1);
    cr_expect(slice_eq_str(got.Topics[0].Name, "a"));
    cr_expect(got.AllowAutoTopicCreation);
    cr_expect(got.IncludeClusterAuthorizedOperations);
    cr_expect_not(got.IncludeTopicAuthorizedOperations);
    fixture_done(&f);
}

Test(kafka_codec_metadata, v9_null_topics_ask_for_all)
{
    struct bb x = {.n = 0};
    cbb_count(&x, -1), bb_i8(&x, 0), bb_i8(&x, 0), bb_i8(&x, 0);
    cbb_tags(&x);
    struct fixture f;
    fixture_start(&f, x.b, x.n);
    struct kafka_MetadataRequest got;
    cr_assert_eq(kafka_metadata_request_decode(&f.r, 9, &f.a, &got), RC_OK);
    cr_expect_eq(got.TopicsCnt, -1);
    fixture_done(&f);
}

/* Topic ids and null names from v10; IncludeClusterAuthorizedOperations
 * only up to v10. */
Test(kafka_codec_metadata, v10_to_v12_requests_carry_topic_ids)
{
    const struct kafka_MetadataRequestTopic topics[] = {
        {.Name = S("a")}, {.Name = slice_null(), .TopicId = uuid_of(id_a)}};
    struct kafka_MetadataRequest req = {
        .Topics = topics, .TopicsCnt = 2, .AllowAutoTopicCreation = false,
        .IncludeClusterAuthorizedOperations = true,
        .IncludeTopicAuthorizedOperations = true};
    static const uint8_t zero[16] = {0};
    for (int16_t v = 10; v <= 12; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_metadata_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        cbb_count(&x, 2);
        cbb_uuid(&x, zero), cbb_str(&x, "a"), cbb_tags(&x);
        cbb_uuid(&x, id_a), cbb_str(&x, NULL), cbb_tags(&x);
        bb_i8(&x, 0);                 /* AllowAutoTopicCreation */
        if (v == 10) {
            bb_i8(&x, 1);             /* IncludeClusterAuthorized... */
        }
        bb_i8(&x, 1);                 /* IncludeTopicAuthorized... */
        cbb_tags(&x);
        expect_bytes(&w, &x);

        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_MetadataRequest got;
        cr_assert_eq(kafka_metadata_request_decode(&f.r, v, &f.a, &got),
                     RC_OK);
        cr_assert_eq(got.TopicsCnt, 2);
        cr_expect(slice_eq_str(got.Topics[0].Name, "a"));
        cr_expect(slice_is_null(got.Topics[1].Name));
        cr_expect_arr_eq(got.Topics[1].TopicId.bytes, id_a, 16);
        cr_expect_eq(got.IncludeClusterAuthorizedOperations, v == 10);
        cr_expect(got.IncludeTopicAuthorizedOperations);
        fixture_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_metadata, v9_request_null_name_is_malformed)
{
    struct bb x = {.n = 0};
    cbb_count(&x, 1), cbb_str(&x, NULL), cbb_tags(&x);
    bb_i8(&x, 1), bb_i8(&x, 0), bb_i8(&x, 0), cbb_tags(&x);
    struct fixture f;
    fixture_start(&f, x.b, x.n);
    struct kafka_MetadataRequest got;
    cr_expect_eq(kafka_metadata_request_decode(&f.r, 9, &f.a, &got),
                 RC_MALFORMED);
    fixture_done(&f);
}

/* --- Responses ----------------------------------------------------------- */

static const int32_t replicas[] = {1, 2};

static struct kafka_MetadataResponse response(struct slice name)
{
    static struct kafka_MetadataResponseBroker brokers[1];
    static struct kafka_MetadataResponsePartition parts[1];
    static struct kafka_MetadataResponseTopic topics[1];
    brokers[0] = (struct kafka_MetadataResponseBroker){
        1, S("h"), 9092, slice_null()};
    parts[0] = (struct kafka_MetadataResponsePartition){
        0, 0, 1, 7, replicas, 2, replicas, 1, NULL, 0};
    topics[0] = (struct kafka_MetadataResponseTopic){
        .ErrorCode = 0, .Name = name, .IsInternal = false,
        .Partitions = parts, .PartitionsCnt = 1,
        .TopicAuthorizedOperations = INT32_MIN, .TopicId = uuid_of(id_a)};
    return (struct kafka_MetadataResponse){
        .ThrottleTimeMs = 5, .Brokers = brokers, .BrokersCnt = 1,
        .ClusterId = S("c"), .ControllerId = 1, .Topics = topics,
        .TopicsCnt = 1, .ClusterAuthorizedOperations = 0x55};
}

static void bb_response(struct bb *x, int16_t v, const char *name)
{
    bb_i32(x, 5);                                    /* throttle */
    cbb_count(x, 1);                                 /* brokers */
    bb_i32(x, 1), cbb_str(x, "h"), bb_i32(x, 9092), cbb_str(x, NULL);
    cbb_tags(x);
    cbb_str(x, "c"), bb_i32(x, 1);                   /* cluster, ctrl */
    cbb_count(x, 1);                                 /* topics */
    bb_i16(x, 0), cbb_str(x, name);
    if (v >= 10) {
        cbb_uuid(x, id_a);
    }
    bb_i8(x, 0);                                     /* internal */
    cbb_count(x, 1);                                 /* partitions */
    bb_i16(x, 0), bb_i32(x, 0), bb_i32(x, 1), bb_i32(x, 7);
    cbb_count(x, 2), bb_i32(x, 1), bb_i32(x, 2);     /* replicas */
    cbb_count(x, 1), bb_i32(x, 1);                   /* isr */
    cbb_count(x, 0);                                 /* offline */
    cbb_tags(x);
    bb_i32(x, INT32_MIN);                            /* topic ops */
    cbb_tags(x);
    if (v <= 10) {
        bb_i32(x, 0x55);                             /* cluster ops */
    }
    cbb_tags(x);
}

Test(kafka_codec_metadata, v9_to_v12_response_bytes)
{
    struct kafka_MetadataResponse resp = response(S("t"));
    for (int16_t v = 9; v <= 12; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_metadata_response_encode(&w, v, &resp), RC_OK);
        struct bb x = {.n = 0};
        bb_response(&x, v, "t");
        expect_bytes(&w, &x);

        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_MetadataResponse got;
        cr_assert_eq(kafka_metadata_response_decode(&f.r, v, &f.a, &got),
                     RC_OK);
        cr_expect(slice_eq_str(got.Topics[0].Name, "t"));
        static const uint8_t zero[16] = {0};
        cr_expect_arr_eq(got.Topics[0].TopicId.bytes, v >= 10 ? id_a : zero,
                         16);
        cr_expect_eq(got.ClusterAuthorizedOperations,
                     v <= 10 ? 0x55 : INT32_MIN);
        cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch, 7);
        fixture_done(&f);
        writer_free(&w);
    }
}

/* An unknown TopicId is answered with a null name, from v12 only. */
Test(kafka_codec_metadata, v12_response_name_may_be_null)
{
    struct kafka_MetadataResponse resp = response(slice_null());
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_metadata_response_encode(&w, 12, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_response(&x, 12, NULL);
    expect_bytes(&w, &x);
    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_MetadataResponse got;
    cr_assert_eq(kafka_metadata_response_decode(&f.r, 12, &f.a, &got),
                 RC_OK);
    cr_expect(slice_is_null(got.Topics[0].Name));
    fixture_done(&f);
    /* In v11 the same bytes are malformed: the name is not nullable. */
    fixture_start(&f, x.b, x.n);
    cr_expect_eq(kafka_metadata_response_decode(&f.r, 11, &f.a, &got),
                 RC_MALFORMED);
    fixture_done(&f);
    writer_free(&w);
}
