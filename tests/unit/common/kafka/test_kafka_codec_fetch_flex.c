/* Tests for the flexible Fetch versions of common/kafka/kafka_codec_fetch.c
 * (v12..16): exact bytes of v12 and v13 responses with the records
 * callback's positions right after each COMPACT_RECORDS length, whose
 * uvarint width follows the length (1, 2 and 3 bytes); topic names up to
 * v12 and topic ids from v13 in requests, forgotten topics and responses;
 * ReplicaId as a field up to v14 and in the tagged ReplicaState from v15;
 * tagged fields Cairn does not read (ClusterId, CurrentLeader,
 * NodeEndpoints, unknown tags) skipped. Frames are decoded from exact heap
 * copies so that `make asan` catches reads past the end. */
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

static const struct kafka_uuid orders_id = {
    {0x5e, 0x1d, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
     0x0b, 0x0c, 0x0d, 0x0e, 0xff}};
static const struct kafka_uuid old_id = {{[0] = 0x01, [15] = 0x02}};

static void bb_uuid(struct bb *x, const struct kafka_uuid *u)
{
    bb_raw(x, u->bytes, sizeof u->bytes);
}

/* --- Responses and splice points ----------------------------------------- */

/* What a handler's callback sees: records positions, in order. */
struct splices {
    size_t at[8];
    int32_t bytes[8];
    size_t n;
};

static int record_splice_cb(void *arg, struct writer *w,
                            const struct kafka_FetchablePartitionResponse *p,
                            size_t at)
{
    struct splices *s = arg;
    cr_assert_lt(s->n, ARRAY_LEN(s->at));
    cr_assert_eq(at, w->len, "splice at the body's current end");
    s->at[s->n] = at;
    s->bytes[s->n] = p->RecordsBytes;
    s->n++;
    return RC_OK;
}

/* Records lengths whose COMPACT_RECORDS prefix (length + 1) takes 1, 2, 2
 * and 3 bytes: 126 + 1 = 127 is the largest one-byte uvarint. */
static const int32_t lens[] = {126, 127, 1000, 16383};
#define N_LENS ((int32_t)ARRAY_LEN(lens))

static struct kafka_FetchResponse flex_response(void)
{
    static const struct kafka_AbortedTransaction txn[] = {{9, 30}};
    static struct kafka_FetchablePartitionResponse parts[N_LENS + 1];
    static struct kafka_FetchableTopicResponse topics[1];
    for (int32_t i = 0; i < N_LENS; i++) {
        parts[i] = (struct kafka_FetchablePartitionResponse){
            .PartitionIndex = i, .HighWatermark = 100,
            .LastStableOffset = 100, .LogStartOffset = 0,
            .AbortedTransactionsCnt = -1, .PreferredReadReplica = -1,
            .RecordsBytes = lens[i]};
    }
    parts[N_LENS] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = N_LENS, .ErrorCode = 100, .HighWatermark = -1,
        .LastStableOffset = -1, .LogStartOffset = -1,
        .AbortedTransactions = txn, .AbortedTransactionsCnt = 1,
        .PreferredReadReplica = -1, .RecordsBytes = -1};
    topics[0] = (struct kafka_FetchableTopicResponse){
        .Topic = slice_from_str("orders"), .TopicId = orders_id,
        .Partitions = parts, .PartitionsCnt = N_LENS + 1};
    return (struct kafka_FetchResponse){
        .ThrottleTimeMs = 0, .ErrorCode = 0, .SessionId = 0,
        .Responses = topics, .ResponsesCnt = 1};
}

/* Expected body of flex_response() at v (12+), without the record bytes;
 * want_at gets the offset after each records length. The partition tags
 * follow the records, so each but the first partition starts where the
 * splice ends plus one: these offsets count the body alone. */
static void bb_flex_response(struct bb *x, int16_t v, size_t want_at[])
{
    bb_i32(x, 0), bb_i16(x, 0), bb_i32(x, 0); /* throttle, error, session */
    cbb_uvarint(x, 2);                         /* topics: 1 */
    if (v >= 13) {
        bb_uuid(x, &orders_id);
    } else {
        cbb_str(x, "orders");
    }
    cbb_uvarint(x, (uint32_t)N_LENS + 2);
    for (int32_t i = 0; i < N_LENS; i++) {
        bb_i32(x, i), bb_i16(x, 0), bb_i64(x, 100), bb_i64(x, 100);
        bb_i64(x, 0);
        bb_u8(x, 0);                          /* aborted: null */
        bb_i32(x, -1);                        /* preferred read replica */
        cbb_uvarint(x, (uint32_t)lens[i] + 1); /* COMPACT_RECORDS */
        want_at[i] = x->n;
        bb_u8(x, 0);                          /* partition tags */
    }
    bb_i32(x, N_LENS), bb_i16(x, 100), bb_i64(x, -1), bb_i64(x, -1);
    bb_i64(x, -1);
    cbb_uvarint(x, 2), bb_i64(x, 9), bb_i64(x, 30), bb_u8(x, 0);
    bb_i32(x, -1);
    bb_u8(x, 0);                              /* records: null */
    bb_u8(x, 0);                              /* partition tags */
    bb_u8(x, 0);                              /* topic tags */
    bb_u8(x, 0);                              /* response tags */
}

static void check_flex_response_splices(int16_t v)
{
    struct kafka_FetchResponse resp = flex_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    struct splices s = {.n = 0};
    cr_assert_eq(kafka_fetch_response_encode(&w, v, &resp, record_splice_cb,
                                             &s),
                 RC_OK);
    cr_expect_not(w.compact, "the encoder turns compact off");
    struct bb x = {.n = 0};
    size_t want_at[N_LENS];
    bb_flex_response(&x, v, want_at);
    expect_bytes(&w, &x);
    cr_assert_eq(s.n, (size_t)N_LENS);
    /* Before each splice point, the uvarint of length + 1, as wide as it
     * must be and no wider. */
    static const size_t widths[] = {1, 2, 2, 3};
    for (int32_t i = 0; i < N_LENS; i++) {
        cr_expect_eq(s.at[i], want_at[i], "partition %d", i);
        cr_expect_eq(s.bytes[i], lens[i]);
        struct reader r;
        reader_init(&r, w.data + s.at[i] - widths[i], widths[i]);
        cr_expect_eq(reader_uvarint(&r), (uint32_t)lens[i] + 1);
        cr_expect_eq(r.rc, RC_OK);
        cr_expect_eq(reader_remaining(&r), 0, "partition %d", i);
    }
    writer_free(&w);
}

Test(kafka_codec_fetch_flex, v12_response_splices_after_compact_lengths)
{
    check_flex_response_splices(12);
}

Test(kafka_codec_fetch_flex, v13_to_16_responses_carry_topic_ids)
{
    for (int16_t v = 13; v <= 16; v++) {
        check_flex_response_splices(v);
    }
}

/* Copy mode: the bytes right after the length, then the partition tags. */
static int copy_records_cb(void *arg, struct writer *w,
                           const struct kafka_FetchablePartitionResponse *p,
                           size_t at)
{
    (void)arg;
    (void)at;
    for (int32_t i = 0; i < p->RecordsBytes; i++) {
        writer_i8(w, (int8_t)(uint8_t)(p->PartitionIndex + i));
    }
    return RC_OK;
}

Test(kafka_codec_fetch_flex, v13_copy_mode_response_decodes_with_inline_records)
{
    struct kafka_FetchResponse resp = flex_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(
        kafka_fetch_response_encode(&w, 13, &resp, copy_records_cb, NULL),
        RC_OK);
    uint8_t *frame = exact_copy(w.data, w.len);
    struct reader r;
    reader_init(&r, frame, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchResponse got;
    cr_assert_eq(kafka_fetch_response_decode(&r, 13, &a, &got), RC_OK);
    cr_expect_not(r.compact, "the decoder turns compact off");
    cr_assert_eq(got.ResponsesCnt, 1);
    cr_expect(slice_is_null(got.Responses[0].Topic), "no name from v13");
    cr_expect_eq(memcmp(got.Responses[0].TopicId.bytes, orders_id.bytes,
                        16),
                 0);
    cr_assert_eq(got.Responses[0].PartitionsCnt, N_LENS + 1);
    const struct kafka_FetchablePartitionResponse *p =
        got.Responses[0].Partitions;
    for (int32_t i = 0; i < N_LENS; i++) {
        cr_expect_eq(p[i].RecordsBytes, lens[i]);
        cr_expect_eq(p[i].Records.ptr[0], (uint8_t)i);
        cr_expect_eq(p[i].Records.ptr[lens[i] - 1],
                     (uint8_t)(i + lens[i] - 1));
    }
    cr_expect_eq(p[N_LENS].ErrorCode, 100);
    cr_expect(slice_is_null(p[N_LENS].Records));
    cr_expect_eq(p[N_LENS].AbortedTransactions[0].ProducerId, 9);
    arena_free(&a);
    free(frame);
    writer_free(&w);
}

/* Kafka's tagged fields in a v16 response: per partition DivergingEpoch
 * (tag 0) and CurrentLeader (tag 1), NodeEndpoints (tag 0) at the end;
 * all skipped. */
Test(kafka_codec_fetch_flex, v16_response_tagged_fields_are_skipped)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 0), bb_i16(&x, 0), bb_i32(&x, 0);
    cbb_uvarint(&x, 2);
    bb_uuid(&x, &orders_id);
    cbb_uvarint(&x, 2);
    bb_i32(&x, 4), bb_i16(&x, 6), bb_i64(&x, -1), bb_i64(&x, -1);
    bb_i64(&x, -1);
    bb_u8(&x, 1);                    /* aborted: empty */
    bb_i32(&x, -1);
    cbb_uvarint(&x, 4);               /* records: 3 bytes */
    bb_u8(&x, 0xaa), bb_u8(&x, 0xbb), bb_u8(&x, 0xcc);
    cbb_uvarint(&x, 2);               /* partition tags: 2 */
    cbb_uvarint(&x, 0), cbb_uvarint(&x, 13);
    bb_i32(&x, 3), bb_i64(&x, 40), bb_u8(&x, 0);
    cbb_uvarint(&x, 1), cbb_uvarint(&x, 9);
    bb_i32(&x, 2), bb_i32(&x, 8), bb_u8(&x, 0);
    bb_u8(&x, 0);                    /* topic tags */
    cbb_uvarint(&x, 1), cbb_uvarint(&x, 0), cbb_uvarint(&x, 13);
    cbb_uvarint(&x, 2);               /* NodeEndpoints: 1 */
    bb_i32(&x, 2), cbb_str(&x, "b2"), bb_i32(&x, 9092);
    bb_u8(&x, 0);                    /* the endpoint's tags */
    uint8_t *frame = exact_copy(x.b, x.n);
    struct reader r;
    reader_init(&r, frame, x.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchResponse got;
    cr_assert_eq(kafka_fetch_response_decode(&r, 16, &a, &got), RC_OK);
    const struct kafka_FetchablePartitionResponse *p =
        &got.Responses[0].Partitions[0];
    cr_expect_eq(p->PartitionIndex, 4);
    cr_expect_eq(p->ErrorCode, 6);
    cr_expect_eq(p->AbortedTransactionsCnt, 0);
    cr_assert_eq(p->RecordsBytes, 3);
    cr_expect_eq(p->Records.ptr[2], 0xcc);
    arena_free(&a);
    free(frame);
}

/* --- Requests ------------------------------------------------------------ */

static struct kafka_FetchRequest flex_request(int32_t replica_id)
{
    static const int32_t forgotten_parts[] = {7};
    static struct kafka_FetchPartition parts[1];
    static struct kafka_FetchableTopic topics[1];
    static struct kafka_ForgottenTopic forgotten[1];
    parts[0] = (struct kafka_FetchPartition){
        .PartitionIndex = 3, .CurrentLeaderEpoch = 5, .FetchOffset = 42,
        .LastFetchedEpoch = 4, .LogStartOffset = -1,
        .PartitionMaxBytes = 1048576};
    topics[0] = (struct kafka_FetchableTopic){
        .Name = slice_from_str("orders"), .TopicId = orders_id,
        .Partitions = parts, .PartitionsCnt = 1};
    forgotten[0] = (struct kafka_ForgottenTopic){
        .Name = slice_from_str("old"), .TopicId = old_id,
        .ForgottenPartitionIndexes = forgotten_parts,
        .ForgottenPartitionIndexesCnt = 1};
    return (struct kafka_FetchRequest){
        .ReplicaId = replica_id, .MaxWaitMs = 500, .MinBytes = 1,
        .MaxBytes = 52428800, .IsolationLevel = 1, .SessionId = 0,
        .SessionEpoch = -1, .Topics = topics, .TopicsCnt = 1,
        .ForgottenTopicsData = forgotten, .ForgottenTopicsDataCnt = 1,
        .RackId = slice_from_str("r1"), .ReplicaEpoch = -1};
}

/* The request body at v from after ReplicaId to before its tags. */
static void bb_flex_request_body(struct bb *x, int16_t v)
{
    bb_i32(x, 500), bb_i32(x, 1), bb_i32(x, 52428800), bb_i8(x, 1);
    bb_i32(x, 0), bb_i32(x, -1);           /* session id, epoch */
    cbb_uvarint(x, 2);                      /* topics: 1 */
    if (v >= 13) {
        bb_uuid(x, &orders_id);
    } else {
        cbb_str(x, "orders");
    }
    cbb_uvarint(x, 2);                      /* partitions: 1 */
    bb_i32(x, 3), bb_i32(x, 5);            /* index, leader epoch */
    bb_i64(x, 42), bb_i32(x, 4);           /* offset, last fetched epoch */
    bb_i64(x, -1), bb_i32(x, 1048576);     /* log start, max bytes */
    bb_u8(x, 0);                           /* partition tags */
    bb_u8(x, 0);                           /* topic tags */
    cbb_uvarint(x, 2);                      /* forgotten: 1 */
    if (v >= 13) {
        bb_uuid(x, &old_id);
    } else {
        cbb_str(x, "old");
    }
    cbb_uvarint(x, 2), bb_i32(x, 7);        /* partitions: [7] */
    bb_u8(x, 0);                           /* forgotten topic tags */
    cbb_str(x, "r1");                      /* rack */
}

static void decode_request(const struct bb *x, int16_t v, struct arena *a,
                           struct kafka_FetchRequest *got, uint8_t **frame)
{
    *frame = exact_copy(x->b, x->n);
    struct reader r;
    reader_init(&r, *frame, x->n);
    int rc = kafka_fetch_request_decode(&r, v, a, got);
    cr_assert_eq(rc, RC_OK, "v%d: %s", v, rc_str(rc));
    cr_expect_not(r.compact, "the decoder turns compact off");
}

Test(kafka_codec_fetch_flex, v12_request_bytes_and_a_cluster_id_skipped)
{
    struct kafka_FetchRequest req = flex_request(-1);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_fetch_request_encode(&w, 12, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, -1);                        /* replica id */
    bb_flex_request_body(&x, 12);
    bb_u8(&x, 0);                          /* request tags */
    expect_bytes(&w, &x);
    writer_free(&w);

    /* The same with a ClusterId (tag 0) sent: skipped. */
    x.n -= 1;
    cbb_uvarint(&x, 1), cbb_uvarint(&x, 0), cbb_uvarint(&x, 4);
    cbb_str(&x, "c-1");
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest got;
    uint8_t *frame;
    decode_request(&x, 12, &a, &got, &frame);
    cr_expect_eq(got.ReplicaId, -1);
    cr_expect_eq(got.ReplicaEpoch, -1);
    cr_assert_eq(got.TopicsCnt, 1);
    cr_expect(slice_eq_str(got.Topics[0].Name, "orders"));
    const struct kafka_FetchPartition *p = &got.Topics[0].Partitions[0];
    cr_expect_eq(p->FetchOffset, 42);
    cr_expect_eq(p->LastFetchedEpoch, 4);
    cr_expect_eq(p->PartitionMaxBytes, 1048576);
    cr_assert_eq(got.ForgottenTopicsDataCnt, 1);
    cr_expect(slice_eq_str(got.ForgottenTopicsData[0].Name, "old"));
    cr_expect(slice_eq_str(got.RackId, "r1"));
    arena_free(&a);
    free(frame);
}

Test(kafka_codec_fetch_flex, v13_request_names_topics_by_id)
{
    struct kafka_FetchRequest req = flex_request(-1);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_fetch_request_encode(&w, 13, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, -1);
    bb_flex_request_body(&x, 13);
    bb_u8(&x, 0);
    expect_bytes(&w, &x);
    writer_free(&w);

    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest got;
    uint8_t *frame;
    decode_request(&x, 13, &a, &got, &frame);
    cr_expect(slice_is_null(got.Topics[0].Name), "no name from v13");
    cr_expect_eq(memcmp(got.Topics[0].TopicId.bytes, orders_id.bytes, 16),
                 0);
    cr_expect(slice_is_null(got.ForgottenTopicsData[0].Name));
    cr_expect_eq(memcmp(got.ForgottenTopicsData[0].TopicId.bytes,
                        old_id.bytes, 16),
                 0);
    cr_expect_eq(got.ForgottenTopicsData[0].ForgottenPartitionIndexes[0], 7);
    arena_free(&a);
    free(frame);
}

Test(kafka_codec_fetch_flex, v15_consumer_request_has_no_replica_id)
{
    struct kafka_FetchRequest req = flex_request(-1);
    for (int16_t v = 15; v <= 16; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_fetch_request_encode(&w, v, &req), RC_OK);
        struct bb x = {.n = 0};
        bb_flex_request_body(&x, v);     /* no ReplicaId field */
        bb_u8(&x, 0);                    /* no ReplicaState */
        expect_bytes(&w, &x);
        writer_free(&w);

        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        struct kafka_FetchRequest got;
        uint8_t *frame;
        decode_request(&x, v, &a, &got, &frame);
        cr_expect_eq(got.ReplicaId, -1, "a consumer");
        cr_expect_eq(got.ReplicaEpoch, -1);
        cr_expect_eq(got.MaxWaitMs, 500);
        arena_free(&a);
        free(frame);
    }
}

Test(kafka_codec_fetch_flex, v15_follower_request_has_a_tagged_replica_state)
{
    struct kafka_FetchRequest req = flex_request(2);
    req.ReplicaEpoch = 77;
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_fetch_request_encode(&w, 15, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_flex_request_body(&x, 15);
    cbb_uvarint(&x, 1);                     /* request tags: 1 */
    cbb_uvarint(&x, 1), cbb_uvarint(&x, 13); /* ReplicaState, 13 bytes */
    bb_i32(&x, 2), bb_i64(&x, 77), bb_u8(&x, 0);
    expect_bytes(&w, &x);
    writer_free(&w);

    /* Kafka sends ClusterId (tag 0) first when it has one, and a newer
     * peer may add tags: both skipped, ReplicaState read. */
    struct bb y = {.n = 0};
    bb_flex_request_body(&y, 16);
    cbb_uvarint(&y, 3);
    cbb_uvarint(&y, 0), cbb_uvarint(&y, 4), cbb_str(&y, "c-1");
    cbb_uvarint(&y, 1), cbb_uvarint(&y, 13);
    bb_i32(&y, 5), bb_i64(&y, 1234), bb_u8(&y, 0);
    cbb_uvarint(&y, 30), cbb_uvarint(&y, 2), bb_i16(&y, -1);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest got;
    uint8_t *frame;
    decode_request(&y, 16, &a, &got, &frame);
    cr_expect_eq(got.ReplicaId, 5);
    cr_expect_eq(got.ReplicaEpoch, 1234);
    cr_expect(slice_eq_str(got.RackId, "r1"));
    arena_free(&a);
    free(frame);
}

Test(kafka_codec_fetch_flex, replica_state_of_the_wrong_size_is_malformed)
{
    struct bb x = {.n = 0};
    bb_flex_request_body(&x, 15);
    cbb_uvarint(&x, 1);
    cbb_uvarint(&x, 1), cbb_uvarint(&x, 14); /* one byte too many */
    bb_i32(&x, 2), bb_i64(&x, 77), bb_u8(&x, 0), bb_u8(&x, 0);
    uint8_t *frame = exact_copy(x.b, x.n);
    struct reader r;
    reader_init(&r, frame, x.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest got;
    cr_expect_eq(kafka_fetch_request_decode(&r, 15, &a, &got), RC_MALFORMED);
    arena_free(&a);
    free(frame);
}
