/* Tests for common/kafka/kafka_codec_produce.c: exact bytes of a Produce v3
 * request carrying a real record batch (tests/lib/batch_builder.h), of
 * v3 and v8 responses (ThrottleTimeMs last; v8's RecordErrors), of the
 * flexible v9 request and response (compact forms, COMPACT_RECORDS,
 * tagged-field sections, a tagged field sent to us skipped), and what
 * the decoder hands a handler: record bytes borrowed from the frame,
 * untouched and valid as a batch. Frames are decoded from exact heap
 * copies so that `make asan` catches reads past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/record_batch.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_compact_bb.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)

/* --- Expected bytes, built without the writer ---------------------------- */

/* --- Requests ------------------------------------------------------------ */

Test(kafka_codec_produce, v3_request_with_a_real_batch_has_exact_bytes)
{
    struct built_batch batch = batch_build(3, 20, 1700000000000, 7);
    struct kafka_PartitionProduceData part = {
        .PartitionIndex = 2, .Records = {batch.bytes, batch.len}};
    struct kafka_TopicProduceData topic = {
        .Name = slice_from_str("orders"), .Partitions = &part,
        .PartitionsCnt = 1};
    struct kafka_ProduceRequest req = {
        .TransactionalId = slice_null(), .Acks = -1, .TimeoutMs = 30000,
        .Topics = &topic, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_produce_request_encode(&w, 3, &req), RC_OK);

    struct bb x = {.n = 0};
    bb_str(&x, NULL);        /* transactional_id */
    bb_i16(&x, -1);          /* acks */
    bb_i32(&x, 30000);       /* timeout_ms */
    bb_i32(&x, 1);           /* topics */
    bb_str(&x, "orders");
    bb_i32(&x, 1);           /* partitions */
    bb_i32(&x, 2);           /* index */
    bb_i32(&x, (int32_t)batch.len);
    bb_raw(&x, batch.bytes, batch.len);
    expect_bytes(&w, &x);

    /* Decoded, the records are the same bytes, in the frame, and a valid
     * batch as a handler will check it. */
    uint8_t *frame = exact_copy(w.data, w.len);
    struct reader r;
    reader_init(&r, frame, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceRequest got;
    cr_assert_eq(kafka_produce_request_decode(&r, 3, &a, &got), RC_OK);
    cr_expect(slice_is_null(got.TransactionalId));
    cr_expect_eq(got.Acks, -1);
    cr_expect_eq(got.TimeoutMs, 30000);
    cr_assert_eq(got.TopicsCnt, 1);
    cr_expect(slice_eq_str(got.Topics[0].Name, "orders"));
    cr_assert_eq(got.Topics[0].PartitionsCnt, 1);
    struct slice rec = got.Topics[0].Partitions[0].Records;
    cr_expect_eq(got.Topics[0].Partitions[0].PartitionIndex, 2);
    cr_assert_eq(rec.len, batch.len);
    cr_expect_eq(rec.ptr, frame + w.len - batch.len, "borrowed, not copied");
    cr_expect_eq(memcmp(rec.ptr, batch.bytes, batch.len), 0);
    struct record_batch_header h;
    cr_expect_eq(record_batch_validate(rec.ptr, rec.len, true, &h), RC_OK);
    cr_expect_eq(h.record_count, 3);
    arena_free(&a);
    free(frame);
    writer_free(&w);
    built_batch_free(&batch);
}

Test(kafka_codec_produce, v9_request_is_compact_with_tag_sections)
{
    struct built_batch batch = batch_build(2, 200, 1700000000000, 7);
    cr_assert_gt(batch.len, 127, "a two-byte uvarint length");
    struct kafka_PartitionProduceData part = {
        .PartitionIndex = 2, .Records = {batch.bytes, batch.len}};
    struct kafka_TopicProduceData topic = {
        .Name = slice_from_str("orders"), .Partitions = &part,
        .PartitionsCnt = 1};
    struct kafka_ProduceRequest req = {
        .TransactionalId = slice_null(), .Acks = -1, .TimeoutMs = 30000,
        .Topics = &topic, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_produce_request_encode(&w, 9, &req), RC_OK);
    cr_expect_not(w.compact, "the encoder turns compact off");

    struct bb x = {.n = 0};
    cbb_str(&x, NULL);       /* transactional_id */
    bb_i16(&x, -1);          /* acks */
    bb_i32(&x, 30000);       /* timeout_ms */
    cbb_uvarint(&x, 2);       /* topics: 1 */
    cbb_str(&x, "orders");
    cbb_uvarint(&x, 2);       /* partitions: 1 */
    bb_i32(&x, 2);           /* index */
    cbb_uvarint(&x, (uint32_t)batch.len + 1); /* COMPACT_RECORDS */
    bb_raw(&x, batch.bytes, batch.len);
    bb_u8(&x, 0);            /* partition tags */
    bb_u8(&x, 0);            /* topic tags */
    bb_u8(&x, 0);            /* request tags */
    expect_bytes(&w, &x);

    /* A client's tagged field (an unknown tag 7 of 2 bytes, in the topic)
     * is skipped; the records still borrow from the frame. */
    struct bb y = {.n = 0};
    cbb_str(&y, "txn");
    bb_i16(&y, 1);
    bb_i32(&y, 1000);
    cbb_uvarint(&y, 2);
    cbb_str(&y, "t");
    cbb_uvarint(&y, 3);       /* partitions: 2 */
    bb_i32(&y, 0);
    cbb_uvarint(&y, (uint32_t)batch.len + 1);
    bb_raw(&y, batch.bytes, batch.len);
    bb_u8(&y, 0);
    bb_i32(&y, 1);
    bb_u8(&y, 0);            /* null records */
    bb_u8(&y, 0);
    cbb_uvarint(&y, 1), cbb_uvarint(&y, 7), cbb_uvarint(&y, 2);
    bb_i16(&y, 0x1234);      /* topic tags: tag 7, 2 bytes */
    bb_u8(&y, 0);
    uint8_t *frame = exact_copy(y.b, y.n);
    struct reader r;
    reader_init(&r, frame, y.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceRequest got;
    cr_assert_eq(kafka_produce_request_decode(&r, 9, &a, &got), RC_OK);
    cr_expect_not(r.compact, "the decoder turns compact off");
    cr_expect(slice_eq_str(got.TransactionalId, "txn"));
    cr_expect_eq(got.Acks, 1);
    cr_assert_eq(got.TopicsCnt, 1);
    cr_expect(slice_eq_str(got.Topics[0].Name, "t"));
    cr_assert_eq(got.Topics[0].PartitionsCnt, 2);
    struct slice rec = got.Topics[0].Partitions[0].Records;
    cr_assert_eq(rec.len, batch.len);
    cr_expect_eq(memcmp(rec.ptr, batch.bytes, batch.len), 0);
    cr_expect(rec.ptr > frame && rec.ptr < frame + y.n, "borrowed");
    cr_expect_eq(got.Topics[0].Partitions[1].PartitionIndex, 1);
    cr_expect(slice_is_null(got.Topics[0].Partitions[1].Records));
    arena_free(&a);
    free(frame);
    writer_free(&w);
    built_batch_free(&batch);
}

Test(kafka_codec_produce, null_records_and_transactional_id_decode_as_null)
{
    struct bb x = {.n = 0};
    bb_str(&x, "txn");
    bb_i16(&x, 0);
    bb_i32(&x, 1000);
    bb_i32(&x, 1);
    bb_str(&x, "t");
    bb_i32(&x, 2);
    bb_i32(&x, 0), bb_i32(&x, -1);  /* null records */
    bb_i32(&x, 1), bb_i32(&x, 0);   /* empty records */
    uint8_t *frame = exact_copy(x.b, x.n);
    struct reader r;
    reader_init(&r, frame, x.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceRequest got;
    cr_assert_eq(kafka_produce_request_decode(&r, 8, &a, &got), RC_OK);
    cr_expect(slice_eq_str(got.TransactionalId, "txn"));
    cr_expect_eq(got.Acks, 0);
    cr_assert_eq(got.Topics[0].PartitionsCnt, 2);
    cr_expect(slice_is_null(got.Topics[0].Partitions[0].Records));
    cr_expect_not(slice_is_null(got.Topics[0].Partitions[1].Records));
    cr_expect_eq(got.Topics[0].Partitions[1].Records.len, 0);
    arena_free(&a);
    free(frame);
}

Test(kafka_codec_produce, records_longer_than_the_frame_are_short)
{
    struct bb x = {.n = 0};
    bb_str(&x, NULL);
    bb_i16(&x, 1);
    bb_i32(&x, 1000);
    bb_i32(&x, 1);
    bb_str(&x, "t");
    bb_i32(&x, 1);
    bb_i32(&x, 0);
    bb_i32(&x, 100); /* claims 100 bytes, has 3 */
    bb_be(&x, 0xabcdef, 3);
    uint8_t *frame = exact_copy(x.b, x.n);
    struct reader r;
    reader_init(&r, frame, x.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceRequest got;
    cr_expect_eq(kafka_produce_request_decode(&r, 7, &a, &got), RC_SHORT);
    arena_free(&a);
    free(frame);
}

/* --- Responses ----------------------------------------------------------- */

static struct kafka_ProduceResponse produce_response(void)
{
    static struct kafka_BatchIndexAndErrorMessage errs[1];
    static struct kafka_PartitionProduceResponse parts[1];
    static struct kafka_TopicProduceResponse topics[1];
    errs[0] = (struct kafka_BatchIndexAndErrorMessage){
        3, slice_from_str("bad")};
    parts[0] = (struct kafka_PartitionProduceResponse){
        .PartitionIndex = 2, .ErrorCode = 0, .BaseOffset = 41,
        .LogAppendTimeMs = -1, .LogStartOffset = 5, .RecordErrors = errs,
        .RecordErrorsCnt = 1, .ErrorMessage = slice_null()};
    topics[0] = (struct kafka_TopicProduceResponse){
        slice_from_str("orders"), parts, 1};
    return (struct kafka_ProduceResponse){
        .Responses = topics, .ResponsesCnt = 1, .ThrottleTimeMs = 77};
}

static void bb_produce_partition_head(struct bb *x)
{
    bb_i32(x, 1);             /* topics */
    bb_str(x, "orders");
    bb_i32(x, 1);             /* partitions */
    bb_i32(x, 2);             /* index */
    bb_i16(x, 0);             /* error */
    bb_i64(x, 41);            /* base offset */
    bb_i64(x, -1);            /* log append time */
}

Test(kafka_codec_produce, v3_response_puts_throttle_time_last)
{
    struct kafka_ProduceResponse resp = produce_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_produce_response_encode(&w, 3, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_produce_partition_head(&x);
    bb_i32(&x, 77);           /* throttle, last */
    expect_bytes(&w, &x);
    writer_free(&w);
}

Test(kafka_codec_produce, v8_response_has_log_start_offset_and_record_errors)
{
    struct kafka_ProduceResponse resp = produce_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_produce_response_encode(&w, 8, &resp), RC_OK);
    struct bb x = {.n = 0};
    bb_produce_partition_head(&x);
    bb_i64(&x, 5);            /* log start offset (v5+) */
    bb_i32(&x, 1);            /* record errors (v8) */
    bb_i32(&x, 3);
    bb_str(&x, "bad");
    bb_str(&x, NULL);         /* error message (v8) */
    bb_i32(&x, 77);           /* throttle, last */
    expect_bytes(&w, &x);

    uint8_t *frame = exact_copy(w.data, w.len);
    struct reader r;
    reader_init(&r, frame, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceResponse got;
    cr_assert_eq(kafka_produce_response_decode(&r, 8, &a, &got), RC_OK);
    const struct kafka_PartitionProduceResponse *p =
        &got.Responses[0].Partitions[0];
    cr_expect_eq(p->BaseOffset, 41);
    cr_expect_eq(p->LogStartOffset, 5);
    cr_expect_eq(p->RecordErrorsCnt, 1);
    cr_expect(slice_eq_str(p->RecordErrors[0].BatchIndexErrorMessage, "bad"));
    cr_expect(slice_is_null(p->ErrorMessage));
    cr_expect_eq(got.ThrottleTimeMs, 77);
    arena_free(&a);
    free(frame);
    writer_free(&w);
}

Test(kafka_codec_produce, v3_response_decodes_with_kafka_defaults)
{
    struct kafka_ProduceResponse resp = produce_response();
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_produce_response_encode(&w, 4, &resp), RC_OK);
    struct reader r;
    reader_init(&r, w.data, w.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceResponse got;
    cr_assert_eq(kafka_produce_response_decode(&r, 4, &a, &got), RC_OK);
    const struct kafka_PartitionProduceResponse *p =
        &got.Responses[0].Partitions[0];
    cr_expect_eq(p->LogStartOffset, -1);
    cr_expect_eq(p->RecordErrorsCnt, 0);
    cr_expect(slice_is_null(p->ErrorMessage));
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_produce, v9_to_v11_responses_are_compact_with_tag_sections)
{
    struct kafka_ProduceResponse resp = produce_response();
    for (int16_t v = 9; v <= 11; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_produce_response_encode(&w, v, &resp), RC_OK);
        struct bb x = {.n = 0};
        cbb_uvarint(&x, 2);        /* topics: 1 */
        cbb_str(&x, "orders");
        cbb_uvarint(&x, 2);        /* partitions: 1 */
        bb_i32(&x, 2);            /* index */
        bb_i16(&x, 0);            /* error */
        bb_i64(&x, 41);           /* base offset */
        bb_i64(&x, -1);           /* log append time */
        bb_i64(&x, 5);            /* log start offset */
        cbb_uvarint(&x, 2);        /* record errors: 1 */
        bb_i32(&x, 3);
        cbb_str(&x, "bad");
        bb_u8(&x, 0);             /* record error tags */
        cbb_str(&x, NULL);        /* error message */
        bb_u8(&x, 0);             /* partition tags (no CurrentLeader) */
        bb_u8(&x, 0);             /* topic tags */
        bb_i32(&x, 77);           /* throttle */
        bb_u8(&x, 0);             /* response tags (no NodeEndpoints) */
        expect_bytes(&w, &x);
        writer_free(&w);
    }

    /* Kafka's v10 CurrentLeader (tag 0, partition) and NodeEndpoints (tag
     * 0, response) are skipped when read. */
    struct bb y = {.n = 0};
    cbb_uvarint(&y, 2);
    cbb_str(&y, "orders");
    cbb_uvarint(&y, 2);
    bb_i32(&y, 2);
    bb_i16(&y, 6);                /* NOT_LEADER_OR_FOLLOWER */
    bb_i64(&y, -1);
    bb_i64(&y, -1);
    bb_i64(&y, -1);
    cbb_uvarint(&y, 1);            /* no record errors */
    cbb_str(&y, NULL);
    cbb_uvarint(&y, 1), cbb_uvarint(&y, 0), cbb_uvarint(&y, 9);
    bb_i32(&y, 3), bb_i32(&y, 12), bb_u8(&y, 0); /* CurrentLeader 3, 12 */
    bb_u8(&y, 0);
    bb_i32(&y, 0);
    cbb_uvarint(&y, 1), cbb_uvarint(&y, 0), cbb_uvarint(&y, 16);
    cbb_uvarint(&y, 2);            /* NodeEndpoints: 1 */
    bb_i32(&y, 3), cbb_str(&y, "h3"), bb_i32(&y, 9092), cbb_str(&y, "r1");
    bb_u8(&y, 0);
    uint8_t *frame = exact_copy(y.b, y.n);
    struct reader r;
    reader_init(&r, frame, y.n);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ProduceResponse got;
    cr_assert_eq(kafka_produce_response_decode(&r, 10, &a, &got), RC_OK);
    const struct kafka_PartitionProduceResponse *p =
        &got.Responses[0].Partitions[0];
    cr_expect_eq(p->ErrorCode, 6);
    cr_expect_eq(p->RecordErrorsCnt, 0);
    cr_expect(slice_is_null(p->ErrorMessage));
    cr_expect_eq(got.ThrottleTimeMs, 0);
    arena_free(&a);
    free(frame);
}
