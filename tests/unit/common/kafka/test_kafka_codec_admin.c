/* Tests for common/kafka/kafka_codec_admin.c: exact bytes of CreateTopics,
 * DeleteTopics, DescribeConfigs and InitProducerId at the lowest and
 * highest version of each range, built by hand from shared/reference/
 * kafka-protocol.md sections 4.15 to 4.18, and the defaults a low
 * version's decode fills in. Frames are decoded from exact heap copies so
 * that `make asan` catches reads past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
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
    struct kafka_CreatableTopicResult res = {S("t"), 36, S("exists")};
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
    struct kafka_DeleteTopicsRequest req = {names, 2, 3000};
    struct kafka_DeletableTopicResult res[] = {{S("a"), 0}, {S("bb"), 3}};
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
    struct kafka_InitProducerIdRequest req = {slice_null(), 60000};
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
