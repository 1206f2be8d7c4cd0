/* Tests for common/kafka/kafka_codec_list_offsets.c at the flexible
 * versions (ListOffsets v6..8; v0, v1 and v5 are tested in
 * test_kafka_codec_fetch.c): the exact bytes of a request and a response
 * in KIP-482's compact forms, the same at v6, v7 and v8 (v7 and v8 only
 * allow new Timestamp values, MAX_TIMESTAMP -3 and EARLIEST_LOCAL -4),
 * decoded back, and a tagged field a newer client might send skipped. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)

static struct kafka_ListOffsetsRequest flexible_request(int64_t timestamp)
{
    static struct kafka_ListOffsetsPartition parts[1];
    static struct kafka_ListOffsetsTopic topics[1];
    parts[0] = (struct kafka_ListOffsetsPartition){
        .PartitionIndex = 1, .CurrentLeaderEpoch = 4,
        .Timestamp = timestamp, .MaxNumOffsets = 1};
    topics[0] = (struct kafka_ListOffsetsTopic){slice_from_str("t"), parts,
                                                1};
    return (struct kafka_ListOffsetsRequest){
        .ReplicaId = -1, .IsolationLevel = 1, .Topics = topics,
        .TopicsCnt = 1};
}

Test(kafka_codec_list_offsets, v6_to_v8_request_bytes)
{
    for (int16_t v = 6; v <= 8; v++) {
        int64_t ts = v == 7 ? -3 : v == 8 ? -4 : 1700000000000;
        struct kafka_ListOffsetsRequest req = flexible_request(ts);
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_list_offsets_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        bb_i32(&x, -1), bb_i8(&x, 1);  /* replica, isolation */
        bb_u8(&x, 2);                  /* 1 topic */
        bb_u8(&x, 2), bb_u8(&x, 't');  /* compact "t" */
        bb_u8(&x, 2);                  /* 1 partition */
        bb_i32(&x, 1), bb_i32(&x, 4), bb_i64(&x, ts);
        bb_u8(&x, 0);                  /* partition's tags */
        bb_u8(&x, 0);                  /* topic's tags */
        bb_u8(&x, 0);                  /* request's tags */
        expect_bytes(&w, &x);

        struct reader r;
        reader_init(&r, w.data, w.len);
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        struct kafka_ListOffsetsRequest got;
        cr_assert_eq(kafka_list_offsets_request_decode(&r, v, &a, &got),
                     RC_OK, "v%d", v);
        cr_expect_eq(got.ReplicaId, -1);
        cr_expect_eq(got.IsolationLevel, 1);
        cr_assert_eq(got.TopicsCnt, 1);
        cr_expect_eq(got.Topics[0].Name.len, 1);
        cr_assert_eq(got.Topics[0].PartitionsCnt, 1);
        cr_expect_eq(got.Topics[0].Partitions[0].CurrentLeaderEpoch, 4);
        cr_expect_eq(got.Topics[0].Partitions[0].Timestamp, ts);
        cr_expect_eq(got.Topics[0].Partitions[0].MaxNumOffsets, 1);
        arena_free(&a);
        writer_free(&w);
    }
}

Test(kafka_codec_list_offsets, v6_to_v8_response_bytes)
{
    struct kafka_ListOffsetsPartitionResponse parts[2] = {
        {.PartitionIndex = 0, .ErrorCode = 0, .Timestamp = 1700000000123,
         .Offset = 42, .LeaderEpoch = 3},
        {.PartitionIndex = 1, .ErrorCode = 35 /* UNSUPPORTED_VERSION */,
         .Timestamp = -1, .Offset = -1, .LeaderEpoch = -1}};
    struct kafka_ListOffsetsTopicResponse topic = {slice_from_str("t"),
                                                   parts, 2};
    struct kafka_ListOffsetsResponse resp = {
        .ThrottleTimeMs = 7, .Topics = &topic, .TopicsCnt = 1};
    for (int16_t v = 6; v <= 8; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_list_offsets_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb x = {.n = 0};
        bb_i32(&x, 7);                 /* throttle */
        bb_u8(&x, 2);                  /* 1 topic */
        bb_u8(&x, 2), bb_u8(&x, 't');
        bb_u8(&x, 3);                  /* 2 partitions */
        bb_i32(&x, 0), bb_i16(&x, 0), bb_i64(&x, 1700000000123);
        bb_i64(&x, 42), bb_i32(&x, 3), bb_u8(&x, 0);
        bb_i32(&x, 1), bb_i16(&x, 35), bb_i64(&x, -1);
        bb_i64(&x, -1), bb_i32(&x, -1), bb_u8(&x, 0);
        bb_u8(&x, 0);                  /* topic's tags */
        bb_u8(&x, 0);                  /* response's tags */
        expect_bytes(&w, &x);

        struct reader r;
        reader_init(&r, w.data, w.len);
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        struct kafka_ListOffsetsResponse got;
        cr_assert_eq(kafka_list_offsets_response_decode(&r, v, &a, &got),
                     RC_OK, "v%d", v);
        cr_expect_eq(got.ThrottleTimeMs, 7);
        cr_assert_eq(got.TopicsCnt, 1);
        cr_assert_eq(got.Topics[0].PartitionsCnt, 2);
        cr_expect_eq(got.Topics[0].Partitions[0].Timestamp, 1700000000123);
        cr_expect_eq(got.Topics[0].Partitions[0].Offset, 42);
        cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch, 3);
        cr_expect_eq(got.Topics[0].Partitions[1].ErrorCode, 35);
        arena_free(&a);
        writer_free(&w);
    }
}

/* A tagged field (tag 0, 2 bytes) in a partition and one at the top
 * level: skipped, the fields around them read as before. */
Test(kafka_codec_list_offsets, v7_request_skips_unknown_tagged_fields)
{
    struct bb x = {.n = 0};
    bb_i32(&x, -1), bb_i8(&x, 0);
    bb_u8(&x, 2), bb_u8(&x, 2), bb_u8(&x, 't'), bb_u8(&x, 2);
    bb_i32(&x, 0), bb_i32(&x, -1), bb_i64(&x, -3);
    bb_u8(&x, 1), bb_u8(&x, 0), bb_u8(&x, 2), bb_u8(&x, 0xab),
        bb_u8(&x, 0xcd);
    bb_u8(&x, 0);
    bb_u8(&x, 1), bb_u8(&x, 5), bb_u8(&x, 1), bb_u8(&x, 0);
    uint8_t *frame = exact_copy(x.b, x.n);
    struct reader r;
    reader_init(&r, frame, x.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsRequest got;
    cr_assert_eq(kafka_list_offsets_request_decode(&r, 7, &a, &got), RC_OK);
    cr_expect_eq(got.Topics[0].Partitions[0].Timestamp, -3);
    cr_expect_eq(got.Topics[0].Partitions[0].PartitionIndex, 0);
    arena_free(&a);
    free(frame);
}

Test(kafka_codec_list_offsets, v9_is_invalid)
{
    uint8_t body[6] = {0xff, 0xff, 0xff, 0xff, 0, 1};
    struct reader r;
    reader_init(&r, body, sizeof body);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsRequest got;
    cr_expect_eq(kafka_list_offsets_request_decode(&r, 9, &a, &got),
                 RC_INVALID);
    arena_free(&a);
}
