/* Idempotent producers against a real broker: a batch sent twice with the
 * same producer id and sequence is stored once and both answers carry the
 * same offset; a gap in the sequence is refused; the window survives a
 * broker restart. Raw Kafka requests built with the codec. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kafka/kafka_codec.h"
#include "common/bytes.h"
#include "common/crc32c.h"
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

TestSuite(kafka_idempotence, .fini = teardown, .timeout = 120);

/* An idempotent batch of 3 records from producer 4242, epoch 0. */
static struct built_batch idempotent_batch(int32_t base_sequence)
{
    struct built_batch b = batch_build(3, 20, 1000, 7);
    bytes_put_be64(b.bytes + 43, 4242);
    bytes_put_be16(b.bytes + 51, 0);
    bytes_put_be32(b.bytes + 53, (uint32_t)base_sequence);
    bytes_put_be32(b.bytes + 17, crc32c(b.bytes + 21, b.len - 21));
    return b;
}

/* Produces b to topic-0 with acks=all; returns the partition's answer
 * (its scalar fields). */
static struct kafka_PartitionProduceResponse produce(struct kafka_client *kc,
                                                     struct built_batch *b)
{
    struct kafka_PartitionProduceResponse p;
    cr_assert(kafka_wire_produce_answer(kc, "idem", 0, b->bytes, b->len, -1,
                                        10000, &p),
              "no answer to Produce");
    return p;
}

static int64_t latest_offset(struct kafka_client *kc)
{
    struct kafka_ListOffsetsPartition lp = {.PartitionIndex = 0,
                                            .CurrentLeaderEpoch = -1,
                                            .Timestamp = -1};
    struct kafka_ListOffsetsTopic lt = {.Name = slice_from_str("idem"),
                                        .Partitions = &lp,
                                        .PartitionsCnt = 1};
    struct kafka_ListOffsetsRequest rq = {.ReplicaId = -1, .Topics = &lt,
                                          .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 16);
    cr_assert_eq(kafka_list_offsets_request_encode(&w, 2, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_LIST_OFFSETS, 2, &w,
                                         &len);
    cr_assert_not_null(resp, "no answer to ListOffsets");
    writer_free(&w);
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_ListOffsetsResponse out;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, 2, &a, &out), RC_OK);
    cr_assert_eq(out.Topics[0].Partitions[0].ErrorCode, 0);
    int64_t off = out.Topics[0].Partitions[0].Offset;
    arena_free(&a);
    free(resp);
    return off;
}

/* Connects kc to broker 0 once it knows the topic and leads it. */
static void ready_client(struct kafka_client *kc)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "idem", 1, 1), KAFKA_ERROR_NONE);
    uint64_t deadline = cluster_now_ms() + 10000;
    while (cluster_now_ms() < deadline) {
        if (kafka_wire_connect(kc, c.brokers[0].port)) {
            struct built_batch probe = batch_build(1, 1, 1, 1);
            struct kafka_PartitionProduceResponse p = produce(kc, &probe);
            built_batch_free(&probe);
            if (p.ErrorCode == KAFKA_ERROR_NONE) {
                return; /* the broker knows the topic and leads it */
            }
        }
        kafka_client_close(kc);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* until the broker learns the topic */
    }
    cr_assert_fail("topic never became writable");
}

Test(kafka_idempotence, duplicate_batch_is_stored_once_with_one_offset)
{
    struct kafka_client kc;
    ready_client(&kc);
    int64_t start = latest_offset(&kc);
    struct built_batch b = idempotent_batch(0);
    struct kafka_PartitionProduceResponse first = produce(&kc, &b);
    cr_assert_eq(first.ErrorCode, KAFKA_ERROR_NONE);
    struct built_batch again = idempotent_batch(0);
    struct kafka_PartitionProduceResponse second = produce(&kc, &again);
    cr_assert_eq(second.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(second.BaseOffset, first.BaseOffset,
                 "the retry is answered with the original offset");
    cr_assert_eq(latest_offset(&kc), start + 3, "stored once");
    /* The next sequence is accepted, a gap is refused. */
    struct built_batch next = idempotent_batch(3);
    cr_assert_eq(produce(&kc, &next).BaseOffset, start + 3);
    struct built_batch gap = idempotent_batch(10);
    cr_assert_eq(produce(&kc, &gap).ErrorCode,
                 KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    cr_assert_eq(latest_offset(&kc), start + 6);
    built_batch_free(&b);
    built_batch_free(&again);
    built_batch_free(&next);
    built_batch_free(&gap);
    kafka_client_close(&kc);
}

Test(kafka_idempotence, window_survives_a_broker_restart)
{
    struct kafka_client kc;
    ready_client(&kc);
    struct built_batch b = idempotent_batch(0);
    struct kafka_PartitionProduceResponse first = produce(&kc, &b);
    cr_assert_eq(first.ErrorCode, KAFKA_ERROR_NONE);
    kafka_client_close(&kc);
    for (int crash = 0; crash < 2; crash++) {
        /* A clean stop (snapshot) and a SIGKILL (rebuilt from the log). */
        cluster_node_signal(&c, &c.brokers[0], crash ? SIGKILL : SIGTERM,
                            true);
        cluster_node_start(&c, &c.brokers[0]);
        cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
        uint64_t deadline = cluster_now_ms() + 15000;
        struct kafka_PartitionProduceResponse again = {.ErrorCode = -1};
        while (cluster_now_ms() < deadline) {
            if (!kafka_wire_connect(&kc, c.brokers[0].port)) {
                continue;
            }
            struct built_batch retry = idempotent_batch(0);
            again = produce(&kc, &retry);
            built_batch_free(&retry);
            kafka_client_close(&kc);
            if (again.ErrorCode == KAFKA_ERROR_NONE) {
                break;
            }
        }
        cr_assert_eq(again.ErrorCode, KAFKA_ERROR_NONE);
        cr_assert_eq(again.BaseOffset, first.BaseOffset,
                     "after %s the retry is still a duplicate",
                     crash ? "SIGKILL" : "a clean stop");
    }
    built_batch_free(&b);
}
