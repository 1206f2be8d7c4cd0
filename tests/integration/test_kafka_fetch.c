/* Fetch against a real broker: a response's MaxBytes lets only the first
 * partition with data exceed it (by one whole batch, KIP-74); partitions
 * after the budget is spent return no records; a partition answered with
 * an error carries an empty record set, never a null one (librdkafka
 * refuses a negative MessageSetSize and drops the whole response). */
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

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_fetch, .fini = teardown, .timeout = 120);

/* Produces one batch to partition p of "fb"; the Kafka error. */
static int16_t produce_one(struct kafka_client *kc, int32_t p,
                           struct built_batch *b)
{
    return kafka_wire_produce(kc, "fb", p, b->bytes, b->len, -1);
}

/* Fetch v11 of fp[0..n) of "fb" within max_bytes; the response decoded
 * into out (borrowing from the returned buffer, which the caller frees). */
static uint8_t *fetch(struct kafka_client *kc, struct kafka_FetchPartition *fp,
                      int32_t n, int32_t max_bytes, struct arena *a,
                      struct kafka_FetchResponse *out)
{
    struct kafka_FetchableTopic ft = {.Name = slice_from_str("fb"),
                                      .Partitions = fp, .PartitionsCnt = n};
    struct kafka_FetchRequest rq = {.ReplicaId = -1, .MaxWaitMs = 100,
                                    .MinBytes = 1, .MaxBytes = max_bytes,
                                    .IsolationLevel = 1, .SessionId = 0,
                                    .SessionEpoch = -1, .Topics = &ft,
                                    .TopicsCnt = 1,
                                    .RackId = slice_from_str("")};
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(kafka_fetch_request_encode(&w, 11, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_FETCH, 11, &w, &len);
    writer_free(&w);
    cr_assert_not_null(resp, "no answer to Fetch");
    struct reader r;
    reader_init(&r, resp, len);
    cr_assert_eq(kafka_fetch_response_decode(&r, 11, a, out), RC_OK);
    cr_assert_eq(out->ResponsesCnt, 1);
    cr_assert_eq(out->Responses[0].PartitionsCnt, n);
    return resp;
}

Test(kafka_fetch, max_bytes_lets_only_the_first_partition_exceed_it)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "fb", 2, 1), KAFKA_ERROR_NONE);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);
    struct built_batch b = batch_build(4, 200, 1000, 3);
    uint64_t deadline = cluster_now_ms() + 15000;
    for (int32_t p = 0; p < 2; p++) {
        while (produce_one(&kc, p, &b) != KAFKA_ERROR_NONE) {
            cr_assert_lt(cluster_now_ms(), deadline, "partition %d", p);
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL); /* until the broker learns the topic */
        }
    }
    struct kafka_FetchPartition fp[2] = {
        {.PartitionIndex = 0, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20},
        {.PartitionIndex = 1, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20}};
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *resp = fetch(&kc, fp, 2, 10, &a, &out);
    const struct kafka_FetchablePartitionResponse *ps =
        out.Responses[0].Partitions;
    cr_assert_eq(ps[0].ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(ps[0].Records.len, b.len,
                 "the first partition's first batch comes whole");
    cr_assert_eq(ps[1].ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(ps[1].HighWatermark, 4);
    cr_assert_eq(ps[1].Records.len, 0,
                 "the budget is spent: no records for the next partition");
    arena_free(&a);
    free(resp);
    built_batch_free(&b);
    kafka_client_close(&kc);
}

Test(kafka_fetch, an_error_partition_carries_empty_records_not_null)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "fb", 1, 1), KAFKA_ERROR_NONE);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);
    struct kafka_FetchPartition fp[1] = {
        {.PartitionIndex = 7, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20}};
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *resp = fetch(&kc, fp, 1, 1 << 20, &a, &out);
    const struct kafka_FetchablePartitionResponse *p =
        &out.Responses[0].Partitions[0];
    cr_assert_eq(p->ErrorCode, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(p->RecordsBytes, 0, "an empty record set, as Kafka sends");
    cr_assert_not(slice_is_null(p->Records));
    arena_free(&a);
    free(resp);
    kafka_client_close(&kc);
}
