/* Produce against a real broker: a batch larger than the topic's
 * max.message.bytes (else the broker's message.max.bytes, Kafka's
 * 1048588) is refused with MESSAGE_TOO_LARGE and not stored. */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "common/kafka/kafka_error.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_produce, .fini = teardown, .timeout = 120);

/* Produces b until the broker knows the topic; the first other answer. */
static int16_t produce_when_known(struct kafka_client *kc, const char *topic,
                                  const struct built_batch *b)
{
    uint64_t deadline = cluster_now_ms() + 15000;
    for (;;) {
        int16_t err = kafka_wire_produce(kc, topic, 0, b->bytes, b->len, -1);
        if (err != KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION &&
            err != KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER &&
            err != KAFKA_ERROR_LEADER_NOT_AVAILABLE) {
            return err;
        }
        cr_assert_lt(cluster_now_ms(), deadline, "%s never led", topic);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* until the broker learns the topic */
    }
}

Test(kafka_produce, batches_above_max_message_bytes_are_refused)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic_with(&c, "small", 1, 1,
                                           "max.message.bytes", "2000"),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(cluster_create_topic(&c, "plain", 1, 1), KAFKA_ERROR_NONE);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);

    struct built_batch fits = batch_build(2, 500, 1000, 1);
    struct built_batch over = batch_build(3, 1000, 1000, 2);
    struct built_batch huge = batch_build(2, 600 * 1024, 1000, 3);
    cr_assert_lt(fits.len, 2000);
    cr_assert_gt(over.len, 2000);
    cr_assert_gt(huge.len, 1048588);

    cr_assert_eq(produce_when_known(&kc, "small", &fits), KAFKA_ERROR_NONE);
    cr_assert_eq(kafka_wire_produce(&kc, "small", 0, over.bytes, over.len,
                                    -1),
                 KAFKA_ERROR_MESSAGE_TOO_LARGE, "over the topic's 2000");
    cr_assert_eq(produce_when_known(&kc, "plain", &over), KAFKA_ERROR_NONE,
                 "the broker's default takes it");
    cr_assert_eq(kafka_wire_produce(&kc, "plain", 0, huge.bytes, huge.len,
                                    -1),
                 KAFKA_ERROR_MESSAGE_TOO_LARGE, "over message.max.bytes");
    /* A refusal leaves the partition taking batches. */
    cr_assert_eq(kafka_wire_produce(&kc, "small", 0, fits.bytes, fits.len,
                                    -1),
                 KAFKA_ERROR_NONE);
    built_batch_free(&fits);
    built_batch_free(&over);
    built_batch_free(&huge);
    kafka_client_close(&kc);
}
