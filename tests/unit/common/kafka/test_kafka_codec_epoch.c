/* Tests for common/kafka/kafka_codec_epoch.c (OffsetForLeaderEpoch v0..4):
 * round trips at every version with the defaults of absent fields, the
 * exact bytes of every version's request and response built by hand (v4
 * in the flexible forms), those of v3 and v4 spelled out, what v0
 * and v1 leave out, truncation at every length, trailing bytes, bad
 * counts, and a count larger than the input refused before allocating.
 * Frames are decoded from exact heap copies so that `make asan` catches
 * reads past the end. */
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
#define V_MIN KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN
#define V_MAX KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX

/* A decoder's input and arena; the frame is an exact heap copy. */
struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fixture_start(struct fixture *f, const void *p, size_t n)
{
    f->frame = exact_copy(p, n);
    reader_init(&f->r, f->frame, n);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

/* --- Sample messages ----------------------------------------------------- */

static struct kafka_OffsetForLeaderEpochRequest sample_request(void)
{
    static struct kafka_OffsetForLeaderPartition parts[3];
    static struct kafka_OffsetForLeaderTopic topics[2];
    parts[0] = (struct kafka_OffsetForLeaderPartition){
        .Partition = 0, .CurrentLeaderEpoch = 7, .LeaderEpoch = 5};
    parts[1] = (struct kafka_OffsetForLeaderPartition){
        .Partition = 2, .CurrentLeaderEpoch = 7, .LeaderEpoch = 6};
    parts[2] = (struct kafka_OffsetForLeaderPartition){
        .Partition = 1, .CurrentLeaderEpoch = 3, .LeaderEpoch = 3};
    topics[0] = (struct kafka_OffsetForLeaderTopic){
        slice_from_str("orders"), parts, 2};
    topics[1] = (struct kafka_OffsetForLeaderTopic){
        slice_from_str("t"), parts + 2, 1};
    return (struct kafka_OffsetForLeaderEpochRequest){
        .ReplicaId = 2, .Topics = topics, .TopicsCnt = 2};
}

static struct kafka_OffsetForLeaderEpochResponse sample_response(void)
{
    static struct kafka_EpochEndOffset parts[3];
    static struct kafka_OffsetForLeaderTopicResult topics[2];
    parts[0] = (struct kafka_EpochEndOffset){
        .ErrorCode = 0, .Partition = 0, .LeaderEpoch = 5,
        .EndOffset = 1234};
    parts[1] = (struct kafka_EpochEndOffset){
        .ErrorCode = 74 /* FENCED_LEADER_EPOCH */, .Partition = 2,
        .LeaderEpoch = -1, .EndOffset = -1};
    parts[2] = (struct kafka_EpochEndOffset){
        .ErrorCode = 0, .Partition = 1, .LeaderEpoch = 3,
        .EndOffset = 0x100000000};
    topics[0] = (struct kafka_OffsetForLeaderTopicResult){
        slice_from_str("orders"), parts, 2};
    topics[1] = (struct kafka_OffsetForLeaderTopicResult){
        slice_from_str("t"), parts + 2, 1};
    return (struct kafka_OffsetForLeaderEpochResponse){
        .ThrottleTimeMs = 9, .Topics = topics, .TopicsCnt = 2};
}

/* --- Expected bytes, built without the writer ---------------------------- */

/* An array count, a string and a tagged-field section (empty), in the
 * classic or the flexible form (v4+). */
static void bb_count(struct bb *x, int16_t v, int32_t n)
{
    if (v >= 4) {
        bb_u8(x, (uint8_t)(n + 1));
    } else {
        bb_i32(x, n);
    }
}

static void bb_name(struct bb *x, int16_t v, const char *s)
{
    if (v >= 4) {
        bb_u8(x, (uint8_t)(strlen(s) + 1));
        bb_raw(x, (const uint8_t *)s, strlen(s));
    } else {
        bb_str(x, s);
    }
}

static void bb_tags(struct bb *x, int16_t v)
{
    if (v >= 4) {
        bb_u8(x, 0);
    }
}

static void bb_request_partition(struct bb *x, int16_t v, int32_t partition,
                                 int32_t current, int32_t epoch)
{
    bb_i32(x, partition);
    if (v >= 2) {
        bb_i32(x, current);                 /* current leader epoch */
    }
    bb_i32(x, epoch);
    bb_tags(x, v);
}

static void bb_request(struct bb *x, int16_t v)
{
    if (v >= 3) {
        bb_i32(x, 2);                       /* replica id */
    }
    bb_count(x, v, 2);                      /* topics */
    bb_name(x, v, "orders"), bb_count(x, v, 2);
    bb_request_partition(x, v, 0, 7, 5);
    bb_request_partition(x, v, 2, 7, 6);
    bb_tags(x, v);
    bb_name(x, v, "t"), bb_count(x, v, 1);
    bb_request_partition(x, v, 1, 3, 3);
    bb_tags(x, v);
    bb_tags(x, v);
}

static void bb_response_partition(struct bb *x, int16_t v, int16_t error,
                                  int32_t partition, int32_t epoch,
                                  int64_t end_offset)
{
    bb_i16(x, error), bb_i32(x, partition);
    if (v >= 1) {
        bb_i32(x, epoch);                   /* leader epoch */
    }
    bb_i64(x, end_offset);
    bb_tags(x, v);
}

static void bb_response(struct bb *x, int16_t v)
{
    if (v >= 2) {
        bb_i32(x, 9);                       /* throttle */
    }
    bb_count(x, v, 2);                      /* topics */
    bb_name(x, v, "orders"), bb_count(x, v, 2);
    bb_response_partition(x, v, 0, 0, 5, 1234);
    bb_response_partition(x, v, 74, 2, -1, -1);
    bb_tags(x, v);
    bb_name(x, v, "t"), bb_count(x, v, 1);
    bb_response_partition(x, v, 0, 1, 3, 0x100000000);
    bb_tags(x, v);
    bb_tags(x, v);
}

/* --- Exact bytes at v3 --------------------------------------------------- */

Test(kafka_codec_epoch, v3_request_bytes)
{
    struct kafka_OffsetForLeaderEpochRequest req = sample_request();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_offset_for_leader_epoch_request_encode(&w, 3, &req),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 2);                                  /* replica id */
    bb_i32(&x, 2);                                  /* topics */
    bb_str(&x, "orders"), bb_i32(&x, 2);
    bb_i32(&x, 0), bb_i32(&x, 7), bb_i32(&x, 5);    /* p0: cur 7, ask 5 */
    bb_i32(&x, 2), bb_i32(&x, 7), bb_i32(&x, 6);
    bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i32(&x, 1), bb_i32(&x, 3), bb_i32(&x, 3);
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 8 + 4 + 24 + 3 + 4 + 12);
    writer_free(&w);
}

Test(kafka_codec_epoch, v3_response_bytes)
{
    struct kafka_OffsetForLeaderEpochResponse resp = sample_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(
        kafka_offset_for_leader_epoch_response_encode(&w, 3, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 9);                                  /* throttle */
    bb_i32(&x, 2);                                  /* topics */
    bb_str(&x, "orders"), bb_i32(&x, 2);
    bb_i16(&x, 0), bb_i32(&x, 0), bb_i32(&x, 5), bb_i64(&x, 1234);
    bb_i16(&x, 74), bb_i32(&x, 2), bb_i32(&x, -1), bb_i64(&x, -1);
    bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i16(&x, 0), bb_i32(&x, 1), bb_i32(&x, 3), bb_i64(&x, 0x100000000);
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 8 + 4 + 36 + 3 + 4 + 18);
    writer_free(&w);
}

/* v4: v3 in KIP-482's compact forms, a tag section ending each struct. */
Test(kafka_codec_epoch, v4_request_bytes)
{
    struct kafka_OffsetForLeaderEpochRequest req = sample_request();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_offset_for_leader_epoch_request_encode(&w, 4, &req),
                 RC_OK);
    static const uint8_t want[] = {
        0, 0, 0, 2,                               /* replica id */
        3,                                        /* 2 topics */
        7, 'o', 'r', 'd', 'e', 'r', 's', 3,       /* "orders", 2 parts */
        0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 5, 0,    /* p0 cur 7 ask 5, tags */
        0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 6, 0,
        0,                                        /* topic's tags */
        2, 't', 2,
        0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 3, 0,
        0,
        0};                                       /* request's tags */
    cr_assert_eq(w.len, sizeof want);
    cr_expect_arr_eq(w.data, want, sizeof want);
    writer_free(&w);
}

Test(kafka_codec_epoch, v4_response_bytes)
{
    struct kafka_OffsetForLeaderEpochResponse resp = sample_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(
        kafka_offset_for_leader_epoch_response_encode(&w, 4, &resp), RC_OK);
    static const uint8_t want[] = {
        0, 0, 0, 9,                               /* throttle */
        3,
        7, 'o', 'r', 'd', 'e', 'r', 's', 3,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 5,             /* error, p0, epoch 5 */
        0, 0, 0, 0, 0, 0, 4, 0xd2, 0,             /* end 1234, tags */
        0, 74, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,
        0,
        2, 't', 2,
        0, 0, 0, 0, 0, 1, 0, 0, 0, 3,
        0, 0, 0, 1, 0, 0, 0, 0, 0,
        0,
        0};
    cr_assert_eq(w.len, sizeof want);
    cr_expect_arr_eq(w.data, want, sizeof want);
    writer_free(&w);
}

/* --- Round trips at every version ---------------------------------------- */

static void check_request_round_trip(int16_t v)
{
    struct kafka_OffsetForLeaderEpochRequest req = sample_request();
    struct writer w, w2;
    writer_init(&w, MAX_16M);
    writer_init(&w2, MAX_16M);
    cr_assert_eq(kafka_offset_for_leader_epoch_request_encode(&w, v, &req),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_request(&x, v);
    expect_bytes(&w, &x);

    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_OffsetForLeaderEpochRequest got;
    int rc = kafka_offset_for_leader_epoch_request_decode(&f.r, v, &f.a,
                                                          &got);
    cr_assert_eq(rc, RC_OK, "v%d: %s", v, rc_str(rc));
    cr_expect_eq(got.ReplicaId, v >= 3 ? 2 : -2, "v%d", v);
    cr_assert_eq(got.TopicsCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        const struct kafka_OffsetForLeaderTopic *t = &got.Topics[i];
        cr_expect(slice_eq(t->Topic, req.Topics[i].Topic));
        cr_assert_eq(t->PartitionsCnt, req.Topics[i].PartitionsCnt);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OffsetForLeaderPartition *p =
                &t->Partitions[j];
            const struct kafka_OffsetForLeaderPartition *q =
                &req.Topics[i].Partitions[j];
            cr_expect_eq(p->Partition, q->Partition);
            cr_expect_eq(p->CurrentLeaderEpoch,
                         v >= 2 ? q->CurrentLeaderEpoch : -1, "v%d", v);
            cr_expect_eq(p->LeaderEpoch, q->LeaderEpoch);
        }
    }
    cr_assert_eq(kafka_offset_for_leader_epoch_request_encode(&w2, v, &got),
                 RC_OK);
    cr_assert_eq(w2.len, w.len, "v%d", v);
    cr_expect_eq(memcmp(w2.data, w.data, w.len), 0, "v%d", v);
    fixture_done(&f);
    writer_free(&w);
    writer_free(&w2);
}

static void check_response_round_trip(int16_t v)
{
    struct kafka_OffsetForLeaderEpochResponse resp = sample_response();
    struct writer w, w2;
    writer_init(&w, MAX_16M);
    writer_init(&w2, MAX_16M);
    cr_assert_eq(kafka_offset_for_leader_epoch_response_encode(&w, v, &resp),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_response(&x, v);
    expect_bytes(&w, &x);

    struct fixture f;
    fixture_start(&f, w.data, w.len);
    struct kafka_OffsetForLeaderEpochResponse got;
    int rc = kafka_offset_for_leader_epoch_response_decode(&f.r, v, &f.a,
                                                           &got);
    cr_assert_eq(rc, RC_OK, "v%d: %s", v, rc_str(rc));
    cr_expect_eq(got.ThrottleTimeMs, v >= 2 ? 9 : 0, "v%d", v);
    cr_assert_eq(got.TopicsCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        const struct kafka_OffsetForLeaderTopicResult *t = &got.Topics[i];
        cr_expect(slice_eq(t->Topic, resp.Topics[i].Topic));
        cr_assert_eq(t->PartitionsCnt, resp.Topics[i].PartitionsCnt);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_EpochEndOffset *p = &t->Partitions[j];
            const struct kafka_EpochEndOffset *q =
                &resp.Topics[i].Partitions[j];
            cr_expect_eq(p->ErrorCode, q->ErrorCode);
            cr_expect_eq(p->Partition, q->Partition);
            cr_expect_eq(p->LeaderEpoch, v >= 1 ? q->LeaderEpoch : -1,
                         "v%d", v);
            cr_expect_eq(p->EndOffset, q->EndOffset);
        }
    }
    cr_assert_eq(
        kafka_offset_for_leader_epoch_response_encode(&w2, v, &got), RC_OK);
    cr_assert_eq(w2.len, w.len, "v%d", v);
    cr_expect_eq(memcmp(w2.data, w.data, w.len), 0, "v%d", v);
    fixture_done(&f);
    writer_free(&w);
    writer_free(&w2);
}

Test(kafka_codec_epoch, request_round_trips_at_every_version)
{
    for (int16_t v = V_MIN; v <= V_MAX; v++) {
        check_request_round_trip(v);
    }
}

Test(kafka_codec_epoch, response_round_trips_at_every_version)
{
    for (int16_t v = V_MIN; v <= V_MAX; v++) {
        check_response_round_trip(v);
    }
}

/* --- What old versions leave out ------------------------------------------ */

Test(kafka_codec_epoch, v0_and_v1_requests_omit_replica_and_current_epoch)
{
    struct kafka_OffsetForLeaderPartition part = {
        .Partition = 4, .CurrentLeaderEpoch = 9, .LeaderEpoch = 8};
    struct kafka_OffsetForLeaderTopic topic = {slice_from_str("t"), &part,
                                               1};
    struct kafka_OffsetForLeaderEpochRequest req = {
        .ReplicaId = 1, .Topics = &topic, .TopicsCnt = 1};
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i32(&x, 4), bb_i32(&x, 8);
    for (int16_t v = 0; v <= 1; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(
            kafka_offset_for_leader_epoch_request_encode(&w, v, &req),
            RC_OK);
        expect_bytes(&w, &x);
        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_OffsetForLeaderEpochRequest got;
        cr_assert_eq(kafka_offset_for_leader_epoch_request_decode(
                         &f.r, v, &f.a, &got),
                     RC_OK);
        cr_expect_eq(got.ReplicaId, -2, "v%d: Kafka's default", v);
        cr_expect_eq(got.Topics[0].Partitions[0].CurrentLeaderEpoch, -1);
        cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch, 8);
        fixture_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_epoch, v0_response_omits_throttle_and_epoch_v1_adds_epoch)
{
    struct kafka_EpochEndOffset part = {
        .ErrorCode = 0, .Partition = 4, .LeaderEpoch = 8, .EndOffset = 77};
    struct kafka_OffsetForLeaderTopicResult topic = {slice_from_str("t"),
                                                     &part, 1};
    struct kafka_OffsetForLeaderEpochResponse resp = {
        .ThrottleTimeMs = 5, .Topics = &topic, .TopicsCnt = 1};
    for (int16_t v = 0; v <= 1; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(
            kafka_offset_for_leader_epoch_response_encode(&w, v, &resp),
            RC_OK);
        struct bb x = {.n = 0};
        bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 1);
        bb_i16(&x, 0), bb_i32(&x, 4);
        if (v == 1) {
            bb_i32(&x, 8);
        }
        bb_i64(&x, 77);
        expect_bytes(&w, &x);
        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_OffsetForLeaderEpochResponse got;
        cr_assert_eq(kafka_offset_for_leader_epoch_response_decode(
                         &f.r, v, &f.a, &got),
                     RC_OK);
        cr_expect_eq(got.ThrottleTimeMs, 0, "v%d", v);
        cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch,
                     v == 0 ? -1 : 8, "v%d", v);
        cr_expect_eq(got.Topics[0].Partitions[0].EndOffset, 77);
        fixture_done(&f);
        writer_free(&w);
    }
}

/* --- Untrusted input ----------------------------------------------------- */

/* Decodes the first len bytes of x at v; *held_bytes (if not NULL) gets
 * what the arena held afterwards. */
/* Bytes the last decode_request() or decode_response() left unread. */
static size_t decode_left;

static int decode_request(const struct bb *x, int16_t v, size_t len,
                          size_t *held_bytes)
{
    struct fixture f;
    fixture_start(&f, x->b, len);
    struct kafka_OffsetForLeaderEpochRequest got;
    int rc = kafka_offset_for_leader_epoch_request_decode(&f.r, v, &f.a,
                                                          &got);
    if (held_bytes != NULL) {
        *held_bytes = f.a.held_bytes;
    }
    decode_left = reader_remaining(&f.r);
    fixture_done(&f);
    return rc;
}

static int decode_response(const struct bb *x, int16_t v, size_t len)
{
    struct fixture f;
    fixture_start(&f, x->b, len);
    struct kafka_OffsetForLeaderEpochResponse got;
    int rc = kafka_offset_for_leader_epoch_response_decode(&f.r, v, &f.a,
                                                           &got);
    decode_left = reader_remaining(&f.r);
    fixture_done(&f);
    return rc;
}

Test(kafka_codec_epoch, truncation_at_every_length_is_short)
{
    for (int16_t v = V_MIN; v <= V_MAX; v++) {
        struct bb req = {.n = 0};
        bb_request(&req, v);
        struct bb resp = {.n = 0};
        bb_response(&resp, v);
        for (size_t n = 0; n < req.n; n++) {
            int rc = decode_request(&req, v, n, NULL);
            cr_expect_eq(rc, RC_SHORT, "request v%d cut at %zu: %s", v, n,
                         rc_str(rc));
        }
        for (size_t n = 0; n < resp.n; n++) {
            int rc = decode_response(&resp, v, n);
            cr_expect_eq(rc, RC_SHORT, "response v%d cut at %zu: %s", v, n,
                         rc_str(rc));
        }
        cr_expect_eq(decode_request(&req, v, req.n, NULL), RC_OK);
        cr_expect_eq(decode_response(&resp, v, resp.n), RC_OK);
    }
}

/* As Kafka's readers, the decoders leave a byte after the last field
 * unread. */
Test(kafka_codec_epoch, trailing_byte_is_left_unread)
{
    for (int16_t v = V_MIN; v <= V_MAX; v++) {
        struct bb req = {.n = 0};
        bb_request(&req, v);
        bb_u8(&req, 0);
        struct bb resp = {.n = 0};
        bb_response(&resp, v);
        bb_u8(&resp, 0);
        cr_expect_eq(decode_request(&req, v, req.n, NULL), RC_OK, "v%d", v);
        cr_expect_eq(decode_left, 1u, "v%d", v);
        cr_expect_eq(decode_response(&resp, v, resp.n), RC_OK, "v%d", v);
        cr_expect_eq(decode_left, 1u, "v%d", v);
    }
}

Test(kafka_codec_epoch, topic_count_beyond_the_input_allocates_nothing)
{
    struct bb x = {.n = 0};
    bb_i32(&x, -1);                      /* replica id */
    bb_i32(&x, INT32_MAX);               /* topics */
    bb_str(&x, "t"), bb_i32(&x, 0);
    size_t held = 1;
    cr_expect_eq(decode_request(&x, 3, x.n, &held), RC_SHORT);
    cr_expect_eq(held, 0, "nothing allocated");

    /* A topic takes 6 bytes at least: the 11 left cannot hold 2. */
    struct bb y = {.n = 0};
    bb_i32(&y, -1), bb_i32(&y, 2);
    bb_str(&y, "t"), bb_i32(&y, 0);
    bb_i32(&y, 0);
    held = 1;
    cr_expect_eq(decode_request(&y, 3, y.n, &held), RC_SHORT);
    cr_expect_eq(held, 0, "nothing allocated");
}

Test(kafka_codec_epoch, partition_count_beyond_the_input_allocates_little)
{
    /* 2 partitions at v2+ need 24 bytes; 20 are left. */
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 2);
    bb_i32(&x, 0), bb_i32(&x, -1), bb_i32(&x, 5);
    bb_i32(&x, 1), bb_i32(&x, -1);
    cr_expect_eq(decode_request(&x, 2, x.n, NULL), RC_SHORT);
    /* At v0..1 the same bytes hold 2 partitions and a trailing int32. */
    cr_expect_eq(decode_request(&x, 1, x.n, NULL), RC_OK);
    cr_expect_eq(decode_left, 4u);

    struct bb y = {.n = 0};
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, INT32_MAX);
    bb_i32(&y, 0), bb_i32(&y, 5);
    size_t held = SIZE_MAX;
    cr_expect_eq(decode_request(&y, 0, y.n, &held), RC_SHORT);
    cr_expect_leq(held, 2 * ARENA__BLOCK_BYTES_MIN,
                  "only the topics array, never INT32_MAX partitions");
}

Test(kafka_codec_epoch, negative_and_null_counts_are_malformed)
{
    struct bb x = {.n = 0};
    bb_i32(&x, -1);                      /* null topics: not nullable */
    cr_expect_eq(decode_request(&x, 0, x.n, NULL), RC_MALFORMED);
    struct bb y = {.n = 0};
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, -7);
    cr_expect_eq(decode_request(&y, 0, y.n, NULL), RC_MALFORMED);
    struct bb z = {.n = 0};
    bb_i32(&z, 0), bb_i32(&z, -2);       /* throttle, topics */
    cr_expect_eq(decode_response(&z, 2, z.n), RC_MALFORMED);
    struct bb s = {.n = 0};
    bb_i32(&s, 1), bb_i16(&s, -3);       /* negative string length */
    bb_i32(&s, 0);
    cr_expect_eq(decode_request(&s, 1, s.n, NULL), RC_MALFORMED);
}

Test(kafka_codec_epoch, versions_outside_the_range_are_invalid)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 0);
    cr_expect_eq(decode_request(&x, -1, x.n, NULL), RC_INVALID);
    cr_expect_eq(decode_request(&x, 5, x.n, NULL), RC_INVALID);
    cr_expect_eq(decode_response(&x, 5, x.n), RC_INVALID);
    cr_expect_eq(decode_request(&x, 0, x.n, NULL), RC_OK, "no topics");
}

Test(kafka_codec_epoch, partitions_beyond_the_request_cap_are_too_large)
{
    int32_t cap = (int32_t)KAFKA_REQUEST_PARTITIONS_MAX;
    for (int32_t n = cap; n <= cap + 1; n++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        writer_i32(&w, 1);
        writer_string(&w, "t", 1);
        writer_i32(&w, n);
        for (int32_t i = 0; i < n; i++) {
            writer_i32(&w, i), writer_i32(&w, 1);
        }
        cr_assert_eq(w.rc, RC_OK);
        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_OffsetForLeaderEpochRequest got;
        int rc = kafka_offset_for_leader_epoch_request_decode(&f.r, 0, &f.a,
                                                              &got);
        cr_expect_eq(rc, n == cap ? RC_OK : RC_TOO_LARGE, "n=%d: %s", n,
                     rc_str(rc));
        fixture_done(&f);
        writer_free(&w);
    }
}
