/* ListOffsets against a real broker, byte by byte through the codec: v7's
 * MAX_TIMESTAMP (-3) answers the first record of the largest timestamp
 * with that timestamp and its batch's leader epoch, v8's EARLIEST_LOCAL
 * (-4) the log start offset (no tiered storage); a special timestamp the
 * version does not allow is answered UNSUPPORTED_VERSION for that
 * partition (offset and timestamp -1); a time beyond the last record and
 * every lookup on an empty partition answer offset -1, timestamp -1, no
 * error, as Kafka does. */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

static struct cluster c;
static struct kafka_client kc = {.fd = -1};

static void teardown(void)
{
    kafka_client_close(&kc);
    cluster_destroy(&c);
}

TestSuite(kafka_list_offsets, .fini = teardown, .timeout = 120);

/* ListOffsets at version v (a consumer's, ReplicaId -1) for one partition
 * of "lo" at timestamp; the partition's answer. */
static struct kafka_ListOffsetsPartitionResponse
list_offsets(int16_t v, int32_t partition, int64_t timestamp)
{
    struct kafka_ListOffsetsPartition lp = {
        .PartitionIndex = partition, .CurrentLeaderEpoch = -1,
        .Timestamp = timestamp, .MaxNumOffsets = 1};
    struct kafka_ListOffsetsTopic lt = {slice_from_str("lo"), &lp, 1};
    struct kafka_ListOffsetsRequest req = {
        .ReplicaId = -1, .IsolationLevel = 0, .Topics = &lt,
        .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 16);
    cr_assert_eq(kafka_list_offsets_request_encode(&w, v, &req), RC_OK);
    size_t len = 0;
    uint8_t *body = kafka_wire_roundtrip(&kc, KAFKA_API_LIST_OFFSETS, v, &w,
                                         &len);
    writer_free(&w);
    cr_assert_not_null(body, "no answer to ListOffsets v%d: %s", v,
                       kc.error);
    struct reader r;
    reader_init(&r, body, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_ListOffsetsResponse resp;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, v, &a, &resp), RC_OK,
                 "ListOffsets v%d answer does not decode", v);
    cr_assert_eq(resp.TopicsCnt, 1);
    cr_assert_eq(resp.Topics[0].PartitionsCnt, 1);
    struct kafka_ListOffsetsPartitionResponse out =
        resp.Topics[0].Partitions[0];
    arena_free(&a);
    free(body);
    return out;
}

static void expect(int16_t v, int32_t partition, int64_t timestamp,
                   int16_t error, int64_t offset, int64_t ts)
{
    struct kafka_ListOffsetsPartitionResponse p =
        list_offsets(v, partition, timestamp);
    cr_expect_eq(p.ErrorCode, error, "v%d ts %lld: error %d", v,
                 (long long)timestamp, p.ErrorCode);
    cr_expect_eq(p.Offset, offset, "v%d ts %lld: offset %lld", v,
                 (long long)timestamp, (long long)p.Offset);
    cr_expect_eq(p.Timestamp, ts, "v%d ts %lld: timestamp %lld", v,
                 (long long)timestamp, (long long)p.Timestamp);
}

/* Produces b to partition 0 of "lo" (acks all), retrying while the broker
 * does not know the topic yet. */
static void produce(struct built_batch *b)
{
    uint64_t deadline = cluster_now_ms() + 15000;
    while (kafka_wire_produce(&kc, "lo", 0, b->bytes, b->len, -1) !=
           KAFKA_ERROR_NONE) {
        cr_assert_lt(cluster_now_ms(), deadline, "produce: %s", kc.error);
        if (kc.fd < 0) {
            cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s",
                      kc.error);
        }
        struct timespec poll = {0, 50 * 1000 * 1000};
        nanosleep(&poll, NULL); /* until the broker learns the topic */
    }
    built_batch_free(b);
}

Test(kafka_list_offsets, max_timestamp_earliest_local_and_unsupported)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "lo", 2, 1), KAFKA_ERROR_NONE);
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);
    const int64_t t0 = 1700000000000LL;
    struct built_batch b0 = batch_build(3, 20, t0 + 1000, 1); /* 0..2 */
    struct built_batch b1 = batch_build(2, 20, t0 + 5000, 2); /* 3..4 */
    struct built_batch b2 = batch_build(2, 20, t0 + 3000, 3); /* 5..6 */
    produce(&b0);
    produce(&b1);
    produce(&b2);

    /* MAX_TIMESTAMP: offset 4 holds t0 + 5001, the largest. */
    for (int16_t v = 7; v <= 8; v++) {
        struct kafka_ListOffsetsPartitionResponse p = list_offsets(v, 0, -3);
        cr_expect_eq(p.ErrorCode, KAFKA_ERROR_NONE);
        cr_expect_eq(p.Offset, 4);
        cr_expect_eq(p.Timestamp, t0 + 5001);
        cr_expect_geq(p.LeaderEpoch, 0, "the batch's leader epoch");
    }
    expect(8, 0, -4, KAFKA_ERROR_NONE, 0, -1); /* the log start */
    expect(8, 0, -2, KAFKA_ERROR_NONE, 0, -1);
    expect(8, 0, -1, KAFKA_ERROR_NONE, 7, -1); /* the high watermark */
    expect(8, 0, t0 + 1001, KAFKA_ERROR_NONE, 1, t0 + 1001);
    expect(8, 0, t0 + 1003, KAFKA_ERROR_NONE, 3, t0 + 5000);
    expect(6, 0, t0 + 3001, KAFKA_ERROR_NONE, 3, t0 + 5000);
    expect(5, 0, t0 + 5001, KAFKA_ERROR_NONE, 4, t0 + 5001);
    /* Beyond the last record's time: none, and no error. */
    expect(8, 0, t0 + 5002, KAFKA_ERROR_NONE, -1, -1);
    expect(1, 0, t0 + 5002, KAFKA_ERROR_NONE, -1, -1);

    /* Special timestamps before the version that allows them. */
    int16_t unsupported = KAFKA_ERROR_UNSUPPORTED_VERSION;
    expect(6, 0, -3, unsupported, -1, -1);
    expect(1, 0, -3, unsupported, -1, -1);
    expect(7, 0, -4, unsupported, -1, -1);
    expect(8, 0, -5, unsupported, -1, -1); /* LATEST_TIERED: v9 */
    expect(8, 0, -7, unsupported, -1, -1); /* no such timestamp */

    /* An empty partition: nothing by time, the start and end at 0. */
    expect(8, 1, -3, KAFKA_ERROR_NONE, -1, -1);
    expect(8, 1, 0, KAFKA_ERROR_NONE, -1, -1);
    expect(8, 1, -4, KAFKA_ERROR_NONE, 0, -1);
    expect(8, 1, -1, KAFKA_ERROR_NONE, 0, -1);
}
