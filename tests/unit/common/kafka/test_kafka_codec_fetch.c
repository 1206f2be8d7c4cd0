/* Tests for common/kafka/kafka_codec_fetch.c: exact bytes of Fetch v4 and v11
 * responses with the records callback's positions pointing right after
 * each int32 records length (where the handler splices file bytes), copy
 * mode, a callback error, Fetch requests as librdkafka sends them with
 * the defaults a v4 request leaves, and ListOffsets v1 and v5 both ways.
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

/* --- Expected bytes, built without the writer ---------------------------- */

/* --- Fetch responses and splice points ----------------------------------- */

/* What a handler's callback sees: records positions, one per partition
 * with records, in order. */
struct splices {
    size_t at[8];
    int32_t partition[8];
    void *arg[8];
    size_t n;
    int fail_with; /* returned from the first call when not RC_OK */
};

static int record_splice_cb(void *arg, struct writer *w,
                            const struct kafka_FetchablePartitionResponse *p,
                            size_t at)
{
    struct splices *s = arg;
    cr_assert_lt(s->n, ARRAY_LEN(s->at));
    cr_assert_eq(at, w->len, "splice at the body's current end");
    s->at[s->n] = at;
    s->partition[s->n] = p->PartitionIndex;
    s->arg[s->n] = p->records_arg;
    s->n++;
    return s->fail_with;
}

static int span_a, span_b; /* stand-ins for the handler's file spans */

static struct kafka_FetchResponse fetch_response(void)
{
    static const struct kafka_AbortedTransaction txn[] = {{9, 30}};
    static struct kafka_FetchablePartitionResponse parts[3];
    static struct kafka_FetchableTopicResponse topics[1];
    parts[0] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 0, .HighWatermark = 100, .LastStableOffset = 100,
        .LogStartOffset = 0, .AbortedTransactionsCnt = -1,
        .PreferredReadReplica = -1, .RecordsBytes = 1000,
        .records_arg = &span_a};
    parts[1] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 1, .ErrorCode = 1, .HighWatermark = -1,
        .LastStableOffset = -1, .LogStartOffset = -1,
        .AbortedTransactions = txn, .AbortedTransactionsCnt = 1,
        .PreferredReadReplica = -1, .RecordsBytes = -1};
    parts[2] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 2, .HighWatermark = 7, .LastStableOffset = 7,
        .LogStartOffset = 3, .AbortedTransactionsCnt = 0,
        .PreferredReadReplica = -1, .RecordsBytes = 61,
        .records_arg = &span_b};
    topics[0] = (struct kafka_FetchableTopicResponse){
        .Topic = slice_from_str("orders"), .Partitions = parts,
        .PartitionsCnt = 3};
    return (struct kafka_FetchResponse){
        .ThrottleTimeMs = 0, .ErrorCode = 0, .SessionId = 0,
        .Responses = topics, .ResponsesCnt = 1};
}

/* Expected body of fetch_response() at v (4 or 11), without the record
 * bytes; want_at gets the offset after each records length > 0. */
static void bb_fetch_response(struct bb *x, int16_t v, size_t want_at[2])
{
    size_t n_at = 0;
    bb_i32(x, 0);                          /* throttle */
    if (v >= 7) {
        bb_i16(x, 0), bb_i32(x, 0);        /* error, session id */
    }
    bb_i32(x, 1);
    bb_str(x, "orders");
    bb_i32(x, 3);
    /* partition 0: 1000 bytes of records to splice */
    bb_i32(x, 0), bb_i16(x, 0), bb_i64(x, 100), bb_i64(x, 100);
    if (v >= 5) {
        bb_i64(x, 0);
    }
    bb_i32(x, -1);                         /* aborted: null */
    if (v >= 11) {
        bb_i32(x, -1);
    }
    bb_i32(x, 1000);
    want_at[n_at++] = x->n;
    /* partition 1: error, null records */
    bb_i32(x, 1), bb_i16(x, 1), bb_i64(x, -1), bb_i64(x, -1);
    if (v >= 5) {
        bb_i64(x, -1);
    }
    bb_i32(x, 1), bb_i64(x, 9), bb_i64(x, 30);
    if (v >= 11) {
        bb_i32(x, -1);
    }
    bb_i32(x, -1);
    /* partition 2: 61 bytes to splice */
    bb_i32(x, 2), bb_i16(x, 0), bb_i64(x, 7), bb_i64(x, 7);
    if (v >= 5) {
        bb_i64(x, 3);
    }
    bb_i32(x, 0);                          /* aborted: empty */
    if (v >= 11) {
        bb_i32(x, -1);
    }
    bb_i32(x, 61);
    want_at[n_at++] = x->n;
}

static void check_fetch_response_splices(int16_t v)
{
    struct kafka_FetchResponse resp = fetch_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    struct splices s = {.n = 0, .fail_with = RC_OK};
    cr_assert_eq(kafka_fetch_response_encode(&w, v, &resp, record_splice_cb,
                                             &s),
                 RC_OK);
    struct bb x = {.n = 0};
    size_t want_at[2];
    bb_fetch_response(&x, v, want_at);
    expect_bytes(&w, &x);
    cr_assert_eq(s.n, 2);
    cr_expect_eq(s.at[0], want_at[0]);
    cr_expect_eq(s.at[1], want_at[1]);
    cr_expect_eq(s.partition[0], 0);
    cr_expect_eq(s.partition[1], 2);
    cr_expect_eq(s.arg[0], &span_a);
    cr_expect_eq(s.arg[1], &span_b);
    /* The four bytes before each splice point are its records length. */
    static const int32_t lens[] = {1000, 61};
    for (size_t i = 0; i < 2; i++) {
        const uint8_t *p = w.data + s.at[i] - 4;
        int32_t len = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                                (uint32_t)p[2] << 8 | p[3]);
        cr_expect_eq(len, lens[i]);
    }
    writer_free(&w);
}

Test(kafka_codec_fetch, v4_response_splices_after_each_records_length)
{
    check_fetch_response_splices(4);
}

Test(kafka_codec_fetch, v11_response_splices_after_each_records_length)
{
    check_fetch_response_splices(11);
}

static const uint8_t records_a[1000];
static const uint8_t records_b[61] = {1, 2, 3};

static int copy_records_cb(void *arg, struct writer *w,
                           const struct kafka_FetchablePartitionResponse *p,
                           size_t at)
{
    (void)arg;
    (void)at;
    const uint8_t *src = p->records_arg == &span_a ? records_a : records_b;
    writer_raw(w, src, (size_t)p->RecordsBytes);
    return RC_OK;
}

Test(kafka_codec_fetch, copy_mode_response_decodes_with_inline_records)
{
    struct kafka_FetchResponse resp = fetch_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(
        kafka_fetch_response_encode(&w, 11, &resp, copy_records_cb, NULL),
        RC_OK);
    uint8_t *frame = exact_copy(w.data, w.len);
    struct reader r;
    reader_init(&r, frame, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchResponse got;
    cr_assert_eq(kafka_fetch_response_decode(&r, 11, &a, &got), RC_OK);
    const struct kafka_FetchablePartitionResponse *p =
        got.Responses[0].Partitions;
    cr_expect_eq(p[0].RecordsBytes, 1000);
    cr_expect_eq(p[0].AbortedTransactionsCnt, -1);
    cr_expect_eq(memcmp(p[0].Records.ptr, records_a, 1000), 0);
    cr_expect(slice_is_null(p[1].Records));
    cr_expect_eq(p[1].RecordsBytes, -1);
    cr_expect_eq(p[1].AbortedTransactions[0].FirstOffset, 30);
    cr_expect_eq(p[2].Records.len, 61);
    cr_expect_eq(p[2].Records.ptr[2], 3);
    cr_expect_eq(p[2].PreferredReadReplica, -1);
    arena_free(&a);
    free(frame);
    writer_free(&w);
}

Test(kafka_codec_fetch, callback_error_stops_encoding)
{
    struct kafka_FetchResponse resp = fetch_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    struct splices s = {.n = 0, .fail_with = RC_IO};
    cr_expect_eq(kafka_fetch_response_encode(&w, 4, &resp, record_splice_cb,
                                             &s),
                 RC_IO);
    cr_expect_eq(s.n, 1, "no call after the failure");
    writer_free(&w);
}

Test(kafka_codec_fetch, full_writer_skips_the_callback)
{
    struct kafka_FetchResponse resp = fetch_response();
    struct writer w;
    writer_init(&w, 20); /* fails inside the first topic */
    struct splices s = {.n = 0, .fail_with = RC_OK};
    cr_expect_eq(kafka_fetch_response_encode(&w, 4, &resp, record_splice_cb,
                                             &s),
                 RC_TOO_LARGE);
    cr_expect_eq(s.n, 0);
    writer_free(&w);
}

/* --- Fetch requests ------------------------------------------------------ */

static struct kafka_FetchRequest fetch_request(void)
{
    static struct kafka_FetchPartition parts[1];
    static struct kafka_FetchableTopic topics[1];
    parts[0] = (struct kafka_FetchPartition){
        .PartitionIndex = 3, .CurrentLeaderEpoch = 5, .FetchOffset = 42,
        .LogStartOffset = -1, .PartitionMaxBytes = 1048576};
    topics[0] = (struct kafka_FetchableTopic){
        .Name = slice_from_str("orders"), .Partitions = parts,
        .PartitionsCnt = 1};
    return (struct kafka_FetchRequest){
        .ReplicaId = -1, .MaxWaitMs = 500, .MinBytes = 1,
        .MaxBytes = 52428800, .IsolationLevel = 1, .SessionId = 0,
        .SessionEpoch = -1, .Topics = topics, .TopicsCnt = 1,
        .ForgottenTopicsData = NULL, .ForgottenTopicsDataCnt = 0,
        .RackId = slice_from_str("")};
}

static void bb_fetch_request_head(struct bb *x)
{
    bb_i32(x, -1), bb_i32(x, 500), bb_i32(x, 1), bb_i32(x, 52428800);
    bb_i8(x, 1);
}

Test(kafka_codec_fetch, v4_request_bytes_and_defaults)
{
    struct kafka_FetchRequest req = fetch_request();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_fetch_request_encode(&w, 4, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_fetch_request_head(&x);
    bb_i32(&x, 1), bb_str(&x, "orders"), bb_i32(&x, 1);
    bb_i32(&x, 3), bb_i64(&x, 42), bb_i32(&x, 1048576);
    expect_bytes(&w, &x);

    uint8_t *frame = exact_copy(w.data, w.len);
    struct reader r;
    reader_init(&r, frame, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest got;
    cr_assert_eq(kafka_fetch_request_decode(&r, 4, &a, &got), RC_OK);
    cr_expect_eq(got.MaxWaitMs, 500);
    cr_expect_eq(got.IsolationLevel, 1);
    cr_expect_eq(got.SessionId, 0);
    cr_expect_eq(got.SessionEpoch, -1);
    cr_expect_eq(got.ForgottenTopicsDataCnt, 0);
    cr_expect(slice_eq_str(got.RackId, ""), "default \"\", not null");
    const struct kafka_FetchPartition *p = &got.Topics[0].Partitions[0];
    cr_expect_eq(p->PartitionIndex, 3);
    cr_expect_eq(p->CurrentLeaderEpoch, -1);
    cr_expect_eq(p->FetchOffset, 42);
    cr_expect_eq(p->LogStartOffset, -1);
    cr_expect_eq(p->PartitionMaxBytes, 1048576);
    arena_free(&a);
    free(frame);
    writer_free(&w);
}

Test(kafka_codec_fetch, v11_request_bytes)
{
    struct kafka_FetchRequest req = fetch_request();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_fetch_request_encode(&w, 11, &req), RC_OK);
    struct bb x = {.n = 0};
    bb_fetch_request_head(&x);
    bb_i32(&x, 0), bb_i32(&x, -1);         /* session id, epoch */
    bb_i32(&x, 1), bb_str(&x, "orders"), bb_i32(&x, 1);
    bb_i32(&x, 3), bb_i32(&x, 5);          /* index, leader epoch */
    bb_i64(&x, 42), bb_i64(&x, -1);        /* offset, log start */
    bb_i32(&x, 1048576);
    bb_i32(&x, 0);                         /* forgotten */
    bb_str(&x, "");                        /* rack */
    expect_bytes(&w, &x);
    writer_free(&w);
}

/* --- ListOffsets --------------------------------------------------------- */

static struct kafka_ListOffsetsRequest list_offsets_request(void)
{
    static struct kafka_ListOffsetsPartition parts[1];
    static struct kafka_ListOffsetsTopic topics[1];
    parts[0] = (struct kafka_ListOffsetsPartition){1, 4, -2, 1};
    topics[0] = (struct kafka_ListOffsetsTopic){slice_from_str("t"), parts,
                                                1};
    return (struct kafka_ListOffsetsRequest){
        .ReplicaId = -1, .IsolationLevel = 1, .Topics = topics,
        .TopicsCnt = 1};
}

static void encode_list_offsets(struct writer *w, int16_t v,
                                const struct kafka_ListOffsetsRequest *req)
{
    writer_init(w, MAX_16M);
    cr_assert_eq(kafka_list_offsets_request_encode(w, v, req), RC_OK);
}

Test(kafka_codec_fetch, list_offsets_v1_and_v5_request_bytes)
{
    struct kafka_ListOffsetsRequest req = list_offsets_request();
    struct writer w;
    encode_list_offsets(&w, 1, &req);
    struct bb x = {.n = 0};
    bb_i32(&x, -1);
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i32(&x, 1), bb_i64(&x, -2);
    expect_bytes(&w, &x);

    struct reader r;
    reader_init(&r, w.data, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsRequest got;
    cr_assert_eq(kafka_list_offsets_request_decode(&r, 1, &a, &got), RC_OK);
    cr_expect_eq(got.IsolationLevel, 0);
    cr_expect_eq(got.Topics[0].Partitions[0].CurrentLeaderEpoch, -1);
    cr_expect_eq(got.Topics[0].Partitions[0].Timestamp, -2);
    arena_free(&a);

    writer_reset(&w);
    cr_assert_eq(kafka_list_offsets_request_encode(&w, 5, &req), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, -1), bb_i8(&y, 1);
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, 1);
    bb_i32(&y, 1), bb_i32(&y, 4), bb_i64(&y, -2);
    expect_bytes(&w, &y);
    writer_free(&w);
}

/* v0 (Burrow's): a MaxNumOffsets per partition, and a list of offsets
 * answered: [Offset], or [] when there is none. */
Test(kafka_codec_fetch, list_offsets_v0_bytes)
{
    struct kafka_ListOffsetsRequest req = list_offsets_request();
    struct writer w;
    encode_list_offsets(&w, 0, &req);
    struct bb x = {.n = 0};
    bb_i32(&x, -1);
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i32(&x, 1), bb_i64(&x, -2), bb_i32(&x, 1);
    expect_bytes(&w, &x);
    struct reader r;
    reader_init(&r, w.data, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsRequest got;
    cr_assert_eq(kafka_list_offsets_request_decode(&r, 0, &a, &got), RC_OK);
    cr_expect_eq(got.Topics[0].Partitions[0].MaxNumOffsets, 1);
    arena_free(&a);

    struct kafka_ListOffsetsPartitionResponse parts[2] = {
        {.PartitionIndex = 1, .ErrorCode = 0, .Timestamp = -1, .Offset = 42,
         .LeaderEpoch = 4},
        {.PartitionIndex = 2, .ErrorCode = 0, .Timestamp = -1, .Offset = -1,
         .LeaderEpoch = -1}};
    struct kafka_ListOffsetsTopicResponse topic = {slice_from_str("t"),
                                                   parts, 2};
    struct kafka_ListOffsetsResponse resp = {.Topics = &topic,
                                             .TopicsCnt = 1};
    writer_reset(&w);
    cr_assert_eq(kafka_list_offsets_response_encode(&w, 0, &resp), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, 2);
    bb_i32(&y, 1), bb_i16(&y, 0), bb_i32(&y, 1), bb_i64(&y, 42);
    bb_i32(&y, 2), bb_i16(&y, 0), bb_i32(&y, 0);
    expect_bytes(&w, &y);
    reader_init(&r, w.data, w.len);
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsResponse back;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, 0, &a, &back),
                 RC_OK);
    cr_expect_eq(back.Topics[0].Partitions[0].Offset, 42);
    cr_expect_eq(back.Topics[0].Partitions[1].Offset, -1);
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_fetch, list_offsets_v1_and_v5_response_bytes)
{
    struct kafka_ListOffsetsPartitionResponse part = {
        .PartitionIndex = 1, .ErrorCode = 0, .Timestamp = -1, .Offset = 42,
        .LeaderEpoch = 4};
    struct kafka_ListOffsetsTopicResponse topic = {slice_from_str("t"),
                                                   &part, 1};
    struct kafka_ListOffsetsResponse resp = {
        .ThrottleTimeMs = 8, .Topics = &topic, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_list_offsets_response_encode(&w, 1, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 1);
    bb_i32(&x, 1), bb_i16(&x, 0), bb_i64(&x, -1), bb_i64(&x, 42);
    expect_bytes(&w, &x);

    writer_reset(&w);
    cr_assert_eq(kafka_list_offsets_response_encode(&w, 5, &resp), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 8);
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, 1);
    bb_i32(&y, 1), bb_i16(&y, 0), bb_i64(&y, -1), bb_i64(&y, 42);
    bb_i32(&y, 4);
    expect_bytes(&w, &y);

    struct reader r;
    reader_init(&r, w.data, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListOffsetsResponse got;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, 5, &a, &got),
                 RC_OK);
    cr_expect_eq(got.ThrottleTimeMs, 8);
    cr_expect_eq(got.Topics[0].Partitions[0].Offset, 42);
    cr_expect_eq(got.Topics[0].Partitions[0].LeaderEpoch, 4);
    arena_free(&a);
    writer_free(&w);
}
