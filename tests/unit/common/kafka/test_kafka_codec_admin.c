/* Tests for common/kafka/kafka_codec_admin.c: exact bytes of CreateTopics,
 * DeleteTopics, DeleteRecords, DescribeConfigs and InitProducerId at the
 * lowest version, the first flexible one and each that adds a field,
 * built by hand from shared/reference/kafka-protocol.md sections 4.15 to
 * 4.18 and apache/kafka's schemas, and the defaults a low version's
 * decode fills in; tagged fields in the input are skipped (or, for
 * CreateTopics's TopicConfigErrorCode, read). Frames are decoded from
 * exact heap copies so that `make asan` catches reads past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_compact_bb.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)

/* --- Expected bytes, built without the writer ---------------------------- */

/* Decoding fixture over an exact heap copy that outlives the message. */
struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fixture_start(struct fixture *f, const struct writer *w)
{
    f->frame = malloc(w->len > 0 ? w->len : 1);
    cr_assert_not_null(f->frame);
    memcpy(f->frame, w->data, w->len);
    reader_init(&f->r, f->frame, w->len);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

#define S(str) slice_from_str(str)

/* --- CreateTopics -------------------------------------------------------- */

static struct kafka_CreateTopicsRequest create_topics_request(void)
{
    static const int32_t brokers[] = {1, 3};
    static struct kafka_CreatableReplicaAssignment as[1];
    static struct kafka_CreateableTopicConfig cs[1];
    static struct kafka_CreatableTopic topics[1];
    as[0] = (struct kafka_CreatableReplicaAssignment){0, brokers, 2};
    cs[0] = (struct kafka_CreateableTopicConfig){S("retention.ms"),
                                                 slice_null()};
    topics[0] = (struct kafka_CreatableTopic){S("t"), -1, -1, as, 1, cs, 1};
    return (struct kafka_CreateTopicsRequest){
        .Topics = topics, .TopicsCnt = 1, .TimeoutMs = 5000,
        .ValidateOnly = true};
}

static void bb_create_topics_request(struct bb *x, int16_t v)
{
    bb_i32(x, 1);
    bb_str(x, "t"), bb_i32(x, -1), bb_i16(x, -1);
    bb_i32(x, 1), bb_i32(x, 0), bb_i32(x, 2), bb_i32(x, 1), bb_i32(x, 3);
    bb_i32(x, 1), bb_str(x, "retention.ms"), bb_str(x, NULL);
    bb_i32(x, 5000);
    if (v >= 1) {
        bb_i8(x, 1);
    }
}

Test(kafka_codec_admin, create_topics_v0_and_v4_request_bytes)
{
    struct kafka_CreateTopicsRequest req = create_topics_request();
    for (int16_t v = 0; v <= 4; v += 4) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_create_topics_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        bb_create_topics_request(&x, v);
        expect_bytes(&w, &x);

        struct fixture f;
        fixture_start(&f, &w);
        struct kafka_CreateTopicsRequest got;
        cr_assert_eq(kafka_create_topics_request_decode(&f.r, v, &f.a, &got),
                     RC_OK);
        const struct kafka_CreatableTopic *t = &got.Topics[0];
        cr_expect_eq(t->NumPartitions, -1);
        cr_expect_eq(t->ReplicationFactor, -1);
        cr_expect_eq(t->Assignments[0].BrokerIds[1], 3);
        cr_expect(slice_is_null(t->Configs[0].Value));
        cr_expect_eq(got.ValidateOnly, v >= 1, "v0 default false");
        fixture_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_admin, create_topics_v0_and_v4_response_bytes)
{
    struct kafka_CreatableTopicResult res = {
        .Name = S("t"), .ErrorCode = 36, .ErrorMessage = S("exists")};
    struct kafka_CreateTopicsResponse resp = {
        .ThrottleTimeMs = 4, .Topics = &res, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_create_topics_response_encode(&w, 0, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i16(&x, 36);
    expect_bytes(&w, &x);

    writer_reset(&w);
    cr_assert_eq(kafka_create_topics_response_encode(&w, 4, &resp), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 4);
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i16(&y, 36), bb_str(&y, "exists");
    expect_bytes(&w, &y);
    writer_free(&w);
}

/* --- DeleteTopics -------------------------------------------------------- */

Test(kafka_codec_admin, delete_topics_v0_and_v3_bytes)
{
    static const struct slice names[] = {{(const uint8_t *)"a", 1},
                                         {(const uint8_t *)"bb", 2}};
    struct kafka_DeleteTopicsRequest req = {names, 2, 3000, NULL, 0};
    struct kafka_DeletableTopicResult res[] = {
        {S("a"), 0, slice_null(), {{0}}}, {S("bb"), 3, slice_null(), {{0}}}};
    struct kafka_DeleteTopicsResponse resp = {7, res, 2};
    for (int16_t v = 0; v <= 3; v += 3) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_delete_topics_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        bb_i32(&x, 2), bb_str(&x, "a"), bb_str(&x, "bb"), bb_i32(&x, 3000);
        expect_bytes(&w, &x);
        struct fixture f;
        fixture_start(&f, &w);
        struct kafka_DeleteTopicsRequest got;
        cr_assert_eq(kafka_delete_topics_request_decode(&f.r, v, &f.a, &got),
                     RC_OK);
        cr_expect(slice_eq_str(got.TopicNames[1], "bb"));
        cr_expect_eq(got.TimeoutMs, 3000);
        fixture_done(&f);

        writer_reset(&w);
        cr_assert_eq(kafka_delete_topics_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb y = {.n = 0};
        if (v >= 1) {
            bb_i32(&y, 7);
        }
        bb_i32(&y, 2), bb_str(&y, "a"), bb_i16(&y, 0);
        bb_str(&y, "bb"), bb_i16(&y, 3);
        expect_bytes(&w, &y);
        writer_free(&w);
    }
}

/* --- DescribeConfigs ----------------------------------------------------- */

Test(kafka_codec_admin, describe_configs_request_null_keys_mean_all)
{
    struct kafka_DescribeConfigsResource res = {2, S("t"), NULL, -1};
    struct kafka_DescribeConfigsRequest req = {&res, 1, true, true};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_describe_configs_request_encode(&w, 0, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_i8(&x, 2), bb_str(&x, "t"), bb_i32(&x, -1);
    expect_bytes(&w, &x);
    struct fixture f;
    fixture_start(&f, &w);
    struct kafka_DescribeConfigsRequest got;
    cr_assert_eq(kafka_describe_configs_request_decode(&f.r, 0, &f.a, &got),
                 RC_OK);
    cr_expect_eq(got.Resources[0].ConfigurationKeysCnt, -1);
    cr_expect_not(got.IncludeSynonyms);
    cr_expect_not(got.IncludeDocumentation);
    fixture_done(&f);

    writer_reset(&w);
    cr_assert_eq(kafka_describe_configs_request_encode(&w, 3, &req), RC_OK);
    bb_i8(&x, 1), bb_i8(&x, 1); /* include synonyms (v1+), docs (v3+) */
    expect_bytes(&w, &x);
    writer_free(&w);
}

static struct kafka_DescribeConfigsResponse describe_configs_response(void)
{
    static struct kafka_DescribeConfigsSynonym syn[1];
    static struct kafka_DescribeConfigsResourceResult cs[1];
    static struct kafka_DescribeConfigsResult res[1];
    syn[0] = (struct kafka_DescribeConfigsSynonym){S("log.retention.ms"),
                                                   S("1000"), 4};
    cs[0] = (struct kafka_DescribeConfigsResourceResult){
        .Name = S("retention.ms"), .Value = S("1000"), .ReadOnly = false,
        .IsDefault = true, .ConfigSource = 5, .IsSensitive = false,
        .Synonyms = syn, .SynonymsCnt = 1, .ConfigType = 5,
        .Documentation = slice_null()};
    res[0] = (struct kafka_DescribeConfigsResult){
        0, slice_null(), 2, S("t"), cs, 1};
    return (struct kafka_DescribeConfigsResponse){
        .ThrottleTimeMs = 0, .Results = res, .ResultsCnt = 1};
}

/* Everything up to the first config's version-specific fields. */
static void bb_describe_configs_head(struct bb *x)
{
    bb_i32(x, 0);                                   /* throttle */
    bb_i32(x, 1);
    bb_i16(x, 0), bb_str(x, NULL), bb_i8(x, 2), bb_str(x, "t");
    bb_i32(x, 1);
    bb_str(x, "retention.ms"), bb_str(x, "1000"), bb_i8(x, 0);
}

Test(kafka_codec_admin, describe_configs_v0_response_has_is_default)
{
    struct kafka_DescribeConfigsResponse resp = describe_configs_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_describe_configs_response_encode(&w, 0, &resp),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_describe_configs_head(&x);
    bb_i8(&x, 1);                                   /* is_default */
    bb_i8(&x, 0);                                   /* is_sensitive */
    expect_bytes(&w, &x);
    struct fixture f;
    fixture_start(&f, &w);
    struct kafka_DescribeConfigsResponse got;
    cr_assert_eq(kafka_describe_configs_response_decode(&f.r, 0, &f.a, &got),
                 RC_OK);
    const struct kafka_DescribeConfigsResourceResult *c =
        &got.Results[0].Configs[0];
    cr_expect(c->IsDefault);
    cr_expect_eq(c->ConfigSource, -1);
    cr_expect_eq(c->SynonymsCnt, 0);
    fixture_done(&f);
    writer_free(&w);
}

Test(kafka_codec_admin, describe_configs_v3_response_has_source_and_type)
{
    struct kafka_DescribeConfigsResponse resp = describe_configs_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_describe_configs_response_encode(&w, 3, &resp),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_describe_configs_head(&x);
    bb_i8(&x, 5);                                   /* config_source */
    bb_i8(&x, 0);                                   /* is_sensitive */
    bb_i32(&x, 1);                                  /* synonyms */
    bb_str(&x, "log.retention.ms"), bb_str(&x, "1000"), bb_i8(&x, 4);
    bb_i8(&x, 5);                                   /* config_type */
    bb_str(&x, NULL);                               /* documentation */
    expect_bytes(&w, &x);
    writer_free(&w);
}

/* --- InitProducerId ------------------------------------------------------ */

Test(kafka_codec_admin, init_producer_id_v0_and_v1_bytes)
{
    struct kafka_InitProducerIdRequest req = {slice_null(), 60000, -1, -1};
    struct kafka_InitProducerIdResponse resp = {0, 0, 1000, 0};
    for (int16_t v = 0; v <= 1; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_init_producer_id_request_encode(&w, v, &req),
                     RC_OK);
        struct bb x = {.n = 0};
        bb_str(&x, NULL), bb_i32(&x, 60000);
        expect_bytes(&w, &x);
        struct fixture f;
        fixture_start(&f, &w);
        struct kafka_InitProducerIdRequest got;
        cr_assert_eq(
            kafka_init_producer_id_request_decode(&f.r, v, &f.a, &got),
            RC_OK);
        cr_expect(slice_is_null(got.TransactionalId));
        cr_expect_eq(got.TransactionTimeoutMs, 60000);
        fixture_done(&f);

        writer_reset(&w);
        cr_assert_eq(kafka_init_producer_id_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb y = {.n = 0};
        bb_i32(&y, 0), bb_i16(&y, 0), bb_i64(&y, 1000), bb_i16(&y, 0);
        expect_bytes(&w, &y);
        writer_free(&w);
    }
}

/* --- Flexible versions --------------------------------------------------- */

static const uint8_t id_x[16] = {0x6b, 0x0e, 0x1f, 0x20, 0x31, 0x42,
                                 0x43, 0x54, 0x95, 0xa6, 0xb7, 0xc8,
                                 0xd9, 0xea, 0xfb, 0x0c};
static const uint8_t zero_id[16] = {0};
static const uint8_t two_bytes[] = {0x12, 0x34};

static struct kafka_uuid uuid_of(const uint8_t b[16])
{
    struct kafka_uuid u;
    memcpy(u.bytes, b, 16);
    return u;
}

/* Decodes x at version v with `decode`, expecting want_rc. */
#define DECODE(fn, x, v, out, want_rc)                                  \
    do {                                                                \
        fixture_start_bb(&f, (x));                                      \
        cr_assert_eq(fn(&f.r, (v), &f.a, (out)), (want_rc));            \
    } while (0)

static void fixture_start_bb(struct fixture *f, const struct bb *x)
{
    f->frame = exact_copy(x->b, x->n);
    reader_init(&f->r, f->frame, x->n);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

Test(kafka_codec_admin, create_topics_v5_request_is_compact)
{
    struct kafka_CreateTopicsRequest req = create_topics_request();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_create_topics_request_encode(&w, 5, &req), RC_OK);
    struct bb x = {.n = 0};
    cbb_count(&x, 1);
    cbb_str(&x, "t"), bb_i32(&x, -1), bb_i16(&x, -1);
    cbb_count(&x, 1), bb_i32(&x, 0);
    cbb_count(&x, 2), bb_i32(&x, 1), bb_i32(&x, 3), cbb_tags(&x);
    cbb_count(&x, 1), cbb_str(&x, "retention.ms"), cbb_str(&x, NULL);
    cbb_tags(&x);
    cbb_tags(&x);                                   /* the topic's */
    bb_i32(&x, 5000), bb_i8(&x, 1);
    cbb_tags(&x);
    expect_bytes(&w, &x);
    writer_free(&w);

    /* An unknown tagged field in the topic is skipped. */
    struct bb y = {.n = 0};
    cbb_count(&y, 1);
    cbb_str(&y, "t"), bb_i32(&y, 2), bb_i16(&y, 1);
    cbb_count(&y, 0), cbb_count(&y, 0);
    cbb_tag1(&y, 7, two_bytes, 2);
    bb_i32(&y, 5000), bb_i8(&y, 0);
    cbb_tags(&y);
    struct fixture f;
    struct kafka_CreateTopicsRequest got;
    DECODE(kafka_create_topics_request_decode, &y, 5, &got, RC_OK);
    cr_expect_eq(got.Topics[0].NumPartitions, 2);
    cr_expect_eq(got.Topics[0].ReplicationFactor, 1);
    cr_expect_eq(got.TimeoutMs, 5000);
    fixture_done(&f);
}

static struct kafka_CreateTopicsResponse create_topics_v5_response(void)
{
    static struct kafka_CreatableTopicConfigs cs[1];
    static struct kafka_CreatableTopicResult res[2];
    cs[0] = (struct kafka_CreatableTopicConfigs){
        S("cleanup.policy"), S("delete"), false, 5, false};
    res[0] = (struct kafka_CreatableTopicResult){
        .Name = S("t"), .ErrorCode = 0, .ErrorMessage = slice_null(),
        .TopicId = uuid_of(id_x), .TopicConfigErrorCode = 0,
        .NumPartitions = 3, .ReplicationFactor = 2, .Configs = cs,
        .ConfigsCnt = 1};
    res[1] = (struct kafka_CreatableTopicResult){
        .Name = S("u"), .ErrorCode = 36, .ErrorMessage = S("exists"),
        .TopicConfigErrorCode = 29, .NumPartitions = -1,
        .ReplicationFactor = -1, .Configs = NULL, .ConfigsCnt = -1};
    return (struct kafka_CreateTopicsResponse){
        .ThrottleTimeMs = 4, .Topics = res, .TopicsCnt = 2};
}

static void bb_create_topics_v5_response(struct bb *x, int16_t v)
{
    bb_i32(x, 4);
    cbb_count(x, 2);
    cbb_str(x, "t");
    if (v >= 7) {
        cbb_uuid(x, id_x);
    }
    bb_i16(x, 0), cbb_str(x, NULL);
    bb_i32(x, 3), bb_i16(x, 2);
    cbb_count(x, 1);
    cbb_str(x, "cleanup.policy"), cbb_str(x, "delete");
    bb_i8(x, 0), bb_i8(x, 5), bb_i8(x, 0), cbb_tags(x);
    cbb_tags(x);                      /* TopicConfigErrorCode 0: absent */
    cbb_str(x, "u");
    if (v >= 7) {
        cbb_uuid(x, zero_id);
    }
    bb_i16(x, 36), cbb_str(x, "exists");
    bb_i32(x, -1), bb_i16(x, -1);
    cbb_count(x, -1);                 /* null configs */
    static const uint8_t code29[] = {0x00, 0x1d};
    cbb_tag1(x, 0, code29, 2);        /* TopicConfigErrorCode 29 */
    cbb_tags(x);
}

Test(kafka_codec_admin, create_topics_v5_to_v7_response_bytes)
{
    struct kafka_CreateTopicsResponse resp = create_topics_v5_response();
    for (int16_t v = 5; v <= 7; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_create_topics_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb x = {.n = 0};
        bb_create_topics_v5_response(&x, v);
        expect_bytes(&w, &x);
        struct fixture f;
        struct kafka_CreateTopicsResponse got;
        DECODE(kafka_create_topics_response_decode, &x, v, &got, RC_OK);
        const struct kafka_CreatableTopicResult *t = &got.Topics[0];
        cr_expect_eq(t->NumPartitions, 3);
        cr_expect_eq(t->ReplicationFactor, 2);
        cr_expect_eq(t->Configs[0].ConfigSource, 5);
        cr_expect_arr_eq(t->TopicId.bytes, v >= 7 ? id_x : zero_id, 16);
        cr_expect_eq(got.Topics[1].TopicConfigErrorCode, 29);
        cr_expect_eq(got.Topics[1].ConfigsCnt, -1);
        fixture_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_admin, create_topics_v4_response_defaults_v5_fields)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 0), bb_i32(&x, 1), bb_str(&x, "t"), bb_i16(&x, 0);
    bb_str(&x, NULL);
    struct fixture f;
    struct kafka_CreateTopicsResponse got;
    DECODE(kafka_create_topics_response_decode, &x, 4, &got, RC_OK);
    cr_expect_eq(got.Topics[0].NumPartitions, -1);
    cr_expect_eq(got.Topics[0].ReplicationFactor, -1);
    cr_expect_eq(got.Topics[0].ConfigsCnt, 0);
    cr_expect_eq(got.Topics[0].TopicConfigErrorCode, 0);
    fixture_done(&f);
}

Test(kafka_codec_admin, delete_topics_v4_v5_bytes)
{
    static const struct slice names[] = {{(const uint8_t *)"a", 1}};
    struct kafka_DeleteTopicsRequest req = {names, 1, 3000, NULL, 0};
    struct kafka_DeletableTopicResult res[] = {
        {S("a"), 3, S("unknown"), {{0}}}};
    struct kafka_DeleteTopicsResponse resp = {7, res, 1};
    for (int16_t v = 4; v <= 5; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_delete_topics_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        cbb_count(&x, 1), cbb_str(&x, "a"), bb_i32(&x, 3000), cbb_tags(&x);
        expect_bytes(&w, &x);
        writer_reset(&w);
        cr_assert_eq(kafka_delete_topics_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb y = {.n = 0};
        bb_i32(&y, 7), cbb_count(&y, 1), cbb_str(&y, "a"), bb_i16(&y, 3);
        if (v >= 5) {
            cbb_str(&y, "unknown");
        }
        cbb_tags(&y), cbb_tags(&y);
        expect_bytes(&w, &y);
        writer_free(&w);
    }
}

Test(kafka_codec_admin, delete_topics_v6_names_topics_by_name_or_id)
{
    struct kafka_DeleteTopicState ts[] = {{S("a"), {{0}}},
                                          {slice_null(), uuid_of(id_x)}};
    struct kafka_DeleteTopicsRequest req = {NULL, 0, 3000, ts, 2};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_delete_topics_request_encode(&w, 6, &req), RC_OK);
    struct bb x = {.n = 0};
    cbb_count(&x, 2);
    cbb_str(&x, "a"), cbb_uuid(&x, zero_id), cbb_tags(&x);
    cbb_str(&x, NULL), cbb_uuid(&x, id_x), cbb_tag1(&x, 3, two_bytes, 2);
    bb_i32(&x, 3000), cbb_tags(&x);
    /* The writer writes no tag: compare all but the tagged field. */
    struct bb want = {.n = 0};
    cbb_count(&want, 2);
    cbb_str(&want, "a"), cbb_uuid(&want, zero_id), cbb_tags(&want);
    cbb_str(&want, NULL), cbb_uuid(&want, id_x), cbb_tags(&want);
    bb_i32(&want, 3000), cbb_tags(&want);
    expect_bytes(&w, &want);
    struct fixture f;
    struct kafka_DeleteTopicsRequest got;
    DECODE(kafka_delete_topics_request_decode, &x, 6, &got, RC_OK);
    cr_assert_eq(got.TopicsCnt, 2);
    cr_expect_eq(got.TopicNamesCnt, 0);
    cr_expect(slice_eq_str(got.Topics[0].Name, "a"));
    cr_expect(slice_is_null(got.Topics[1].Name));
    cr_expect_arr_eq(got.Topics[1].TopicId.bytes, id_x, 16);
    fixture_done(&f);

    struct kafka_DeletableTopicResult res[] = {
        {S("a"), 0, slice_null(), uuid_of(id_x)},
        {slice_null(), 100, slice_null(), uuid_of(zero_id)}};
    struct kafka_DeleteTopicsResponse resp = {0, res, 2};
    writer_reset(&w);
    cr_assert_eq(kafka_delete_topics_response_encode(&w, 6, &resp), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 0), cbb_count(&y, 2);
    cbb_str(&y, "a"), cbb_uuid(&y, id_x), bb_i16(&y, 0), cbb_str(&y, NULL);
    cbb_tags(&y);
    cbb_str(&y, NULL), cbb_uuid(&y, zero_id), bb_i16(&y, 100);
    cbb_str(&y, NULL), cbb_tags(&y);
    cbb_tags(&y);
    expect_bytes(&w, &y);
    struct kafka_DeleteTopicsResponse rgot;
    DECODE(kafka_delete_topics_response_decode, &y, 6, &rgot, RC_OK);
    cr_expect(slice_is_null(rgot.Responses[1].Name));
    cr_expect_arr_eq(rgot.Responses[0].TopicId.bytes, id_x, 16);
    fixture_done(&f);
    writer_free(&w);
}

Test(kafka_codec_admin, delete_records_v2_is_compact)
{
    struct kafka_DeleteRecordsPartition parts[] = {{1, 50}};
    struct kafka_DeleteRecordsTopic topics[] = {{S("t"), parts, 1}};
    struct kafka_DeleteRecordsRequest req = {topics, 1, 2000};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_delete_records_request_encode(&w, 2, &req), RC_OK);
    struct bb x = {.n = 0};
    cbb_count(&x, 1), cbb_str(&x, "t");
    cbb_count(&x, 1), bb_i32(&x, 1), bb_i64(&x, 50), cbb_tags(&x);
    cbb_tags(&x);
    bb_i32(&x, 2000), cbb_tags(&x);
    expect_bytes(&w, &x);

    struct kafka_DeleteRecordsPartitionResult pr[] = {{1, 50, 0}};
    struct kafka_DeleteRecordsTopicResult tr[] = {{S("t"), pr, 1}};
    struct kafka_DeleteRecordsResponse resp = {3, tr, 1};
    writer_reset(&w);
    cr_assert_eq(kafka_delete_records_response_encode(&w, 2, &resp), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 3), cbb_count(&y, 1), cbb_str(&y, "t");
    cbb_count(&y, 1), bb_i32(&y, 1), bb_i64(&y, 50), bb_i16(&y, 0);
    cbb_tags(&y), cbb_tags(&y), cbb_tags(&y);
    expect_bytes(&w, &y);
    writer_free(&w);

    /* A tagged field on a partition is skipped. */
    struct bb z = {.n = 0};
    cbb_count(&z, 1), cbb_str(&z, "t");
    cbb_count(&z, 1), bb_i32(&z, 1), bb_i64(&z, 50);
    cbb_tag1(&z, 9, two_bytes, 2);
    cbb_tags(&z);
    bb_i32(&z, 2000), cbb_tags(&z);
    struct fixture f;
    struct kafka_DeleteRecordsRequest got;
    DECODE(kafka_delete_records_request_decode, &z, 2, &got, RC_OK);
    cr_expect_eq(got.Topics[0].Partitions[0].Offset, 50);
    cr_expect_eq(got.TimeoutMs, 2000);
    fixture_done(&f);
}

Test(kafka_codec_admin, describe_configs_v4_is_compact)
{
    struct kafka_DescribeConfigsResource res = {2, S("t"), NULL, -1};
    struct kafka_DescribeConfigsRequest req = {&res, 1, true, false};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_describe_configs_request_encode(&w, 4, &req), RC_OK);
    struct bb x = {.n = 0};
    cbb_count(&x, 1), bb_i8(&x, 2), cbb_str(&x, "t"), cbb_count(&x, -1);
    cbb_tags(&x);
    bb_i8(&x, 1), bb_i8(&x, 0), cbb_tags(&x);
    expect_bytes(&w, &x);

    struct kafka_DescribeConfigsResponse resp = describe_configs_response();
    writer_reset(&w);
    cr_assert_eq(kafka_describe_configs_response_encode(&w, 4, &resp),
                 RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 0), cbb_count(&y, 1);
    bb_i16(&y, 0), cbb_str(&y, NULL), bb_i8(&y, 2), cbb_str(&y, "t");
    cbb_count(&y, 1);
    cbb_str(&y, "retention.ms"), cbb_str(&y, "1000"), bb_i8(&y, 0);
    bb_i8(&y, 5), bb_i8(&y, 0);                     /* source, sensitive */
    cbb_count(&y, 1);
    cbb_str(&y, "log.retention.ms"), cbb_str(&y, "1000"), bb_i8(&y, 4);
    cbb_tags(&y);
    bb_i8(&y, 5), cbb_str(&y, NULL), cbb_tags(&y);  /* type, doc */
    cbb_tags(&y);                                   /* the result's */
    cbb_tags(&y);
    expect_bytes(&w, &y);
    struct fixture f;
    struct kafka_DescribeConfigsResponse got;
    DECODE(kafka_describe_configs_response_decode, &y, 4, &got, RC_OK);
    cr_expect_eq(got.Results[0].Configs[0].Synonyms[0].Source, 4);
    fixture_done(&f);
    writer_free(&w);
}

Test(kafka_codec_admin, init_producer_id_v2_and_v3_bytes)
{
    struct kafka_InitProducerIdRequest req = {slice_null(), 60000, 77, 3};
    struct kafka_InitProducerIdResponse resp = {0, 0, 1000, 0};
    for (int16_t v = 2; v <= 3; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_init_producer_id_request_encode(&w, v, &req),
                     RC_OK);
        struct bb x = {.n = 0};
        cbb_str(&x, NULL), bb_i32(&x, 60000);
        if (v >= 3) {
            bb_i64(&x, 77), bb_i16(&x, 3);
        }
        cbb_tags(&x);
        expect_bytes(&w, &x);
        struct fixture f;
        struct kafka_InitProducerIdRequest got;
        DECODE(kafka_init_producer_id_request_decode, &x, v, &got, RC_OK);
        cr_expect_eq(got.ProducerId, v >= 3 ? 77 : -1);
        cr_expect_eq(got.ProducerEpoch, v >= 3 ? 3 : -1);
        fixture_done(&f);

        writer_reset(&w);
        cr_assert_eq(kafka_init_producer_id_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb y = {.n = 0};
        bb_i32(&y, 0), bb_i16(&y, 0), bb_i64(&y, 1000), bb_i16(&y, 0);
        cbb_tags(&y);
        expect_bytes(&w, &y);
        writer_free(&w);
    }
}
