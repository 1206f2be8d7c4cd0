/* ElectLeaders (API 43) over the Kafka wire with real processes (three
 * controllers, three brokers, tests/lib/cluster.h): every version (v0,
 * v1 with ElectionType, v2 flexible) answers a partition led by its
 * preferred replica with ELECTION_NOT_NEEDED and Kafka's message; an
 * unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION, a partition
 * named twice INVALID_REQUEST, an unknown ElectionType INVALID_REQUEST
 * (top level and every partition), a null list answers only partitions
 * that needed an election; and after the preferred replica of a
 * partition was killed and restarted (so another broker leads), a
 * preferred election makes it leader again at once, with a new leader
 * epoch, while an unclean election of a led partition is not needed.
 * A truncated request closes the connection. Every wait has a deadline. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/arena.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

#define ELECT_WAIT_MS 30000
#define TOPIC "elt"

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_elect, .fini = teardown, .timeout = 180);

static void start(void)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 3);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, TOPIC, 3, 3), KAFKA_ERROR_NONE);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* The image's partition p of TOPIC, copied; false when not there yet. */
static bool partition_now(int32_t p, struct meta_partition *out)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = false;
    if (cluster_image(&c, &img)) {
        const struct meta_topic *t = meta_image_topic(&img, TOPIC);
        if (t != NULL && p < t->n_partitions) {
            *out = t->partitions[p];
            ok = true;
        }
    }
    meta_image_free(&img);
    return ok;
}

typedef bool (*partition_cond)(const struct meta_partition *mp);

static bool wait_partition(int32_t p, partition_cond cond,
                           struct meta_partition *out)
{
    uint64_t deadline = cluster_now_ms() + ELECT_WAIT_MS;
    while (cluster_now_ms() < deadline) {
        if (partition_now(p, out) && cond(out)) {
            return true;
        }
        pause_ms(50);
    }
    return false;
}

static bool led_by_preferred_full_isr(const struct meta_partition *mp)
{
    return mp->leader == mp->replicas.ids[0] &&
           mp->isr.n == mp->replicas.n;
}

static bool led_elsewhere_full_isr(const struct meta_partition *mp)
{
    return mp->leader >= 0 && mp->leader != mp->replicas.ids[0] &&
           mp->isr.n == mp->replicas.n;
}

/* One ElectLeaders at v to broker index i; the answer decoded into resp,
 * its memory in ans (the caller frees it). */
static void elect(int i, int16_t v, const struct kafka_ElectLeadersRequest *rq,
                  struct kafka_ElectLeadersResponse *resp,
                  struct kafka_wire_answer *ans)
{
    struct writer body;
    writer_init(&body, 1u << 20);
    cr_assert_eq(kafka_elect_leaders_request_encode(&body, v, rq), RC_OK);
    bool answered = kafka_wire_call(c.brokers[i].port,
                                    KAFKA_API_ELECT_LEADERS, v, &body, ans);
    writer_free(&body);
    cr_assert(answered, "no answer to ElectLeaders v%d", v);
    cr_assert_eq(kafka_elect_leaders_response_decode(&ans->r, v, &ans->a,
                                                     resp),
                 RC_OK);
}

/* Elections of the given partitions of topic at v; the errors in order. */
static void elect_errors(int16_t v, int8_t type, const char *topic,
                         const int32_t *ids, int32_t n, int16_t *errors,
                         int16_t *top)
{
    struct kafka_ElectLeadersTopicPartitions t = {
        .Topic = slice_from_str(topic), .Partitions = ids,
        .PartitionsCnt = n};
    struct kafka_ElectLeadersRequest rq = {.ElectionType = type,
                                           .TopicPartitions = &t,
                                           .TopicPartitionsCnt = 1,
                                           .TimeoutMs = 30000};
    struct kafka_ElectLeadersResponse resp;
    struct kafka_wire_answer ans;
    elect(0, v, &rq, &resp, &ans);
    cr_assert_eq(resp.ReplicaElectionResultsCnt, 1);
    const struct kafka_ReplicaElectionResult *r =
        &resp.ReplicaElectionResults[0];
    cr_assert_eq(r->Topic.len, strlen(topic));
    cr_assert_eq(memcmp(r->Topic.ptr, topic, r->Topic.len), 0);
    cr_assert_eq(r->PartitionResultCnt, n);
    for (int32_t k = 0; k < n; k++) {
        cr_assert_eq(r->PartitionResult[k].PartitionId, ids[k]);
        errors[k] = r->PartitionResult[k].ErrorCode;
        if (errors[k] == KAFKA_ERROR_NONE) {
            cr_assert(slice_is_null(r->PartitionResult[k].ErrorMessage));
        } else {
            cr_assert_gt(r->PartitionResult[k].ErrorMessage.len, 0);
        }
    }
    *top = resp.ErrorCode;
    kafka_wire_answer_free(&ans);
}

/* A preferred election of every partition (Kafka's null list) at v2:
 * asserts it and each partition answered succeeded; returns how many
 * partitions it answered (those that needed an election). */
static int32_t elect_all_preferred(void)
{
    struct kafka_ElectLeadersRequest rq = {.TopicPartitionsCnt = -1,
                                           .TimeoutMs = 60000};
    struct kafka_ElectLeadersResponse resp;
    struct kafka_wire_answer ans;
    elect(1, 2, &rq, &resp, &ans);
    cr_assert_eq(resp.ErrorCode, KAFKA_ERROR_NONE);
    int32_t n = 0;
    for (int32_t i = 0; i < resp.ReplicaElectionResultsCnt; i++) {
        const struct kafka_ReplicaElectionResult *r =
            &resp.ReplicaElectionResults[i];
        for (int32_t k = 0; k < r->PartitionResultCnt; k++) {
            cr_assert_eq(r->PartitionResult[k].ErrorCode, KAFKA_ERROR_NONE,
                         "partition %d: error %d",
                         r->PartitionResult[k].PartitionId,
                         r->PartitionResult[k].ErrorCode);
            n++;
        }
    }
    kafka_wire_answer_free(&ans);
    return n;
}

Test(kafka_elect, every_version_answers_per_partition_as_kafka)
{
    start();
    struct meta_partition mp;
    for (int32_t p = 0; p < 3; p++) {
        cr_assert(wait_partition(p, led_by_preferred_full_isr, &mp),
                  "p%d not led by its preferred replica", p);
    }
    int16_t e[3];
    int16_t top = -1;
    const int32_t two[] = {0, 2};
    for (int16_t v = 0; v <= 2; v++) {
        elect_errors(v, KAFKA_ELECTION_PREFERRED, TOPIC, two, 2, e, &top);
        cr_assert_eq(e[0], KAFKA_ERROR_ELECTION_NOT_NEEDED, "v%d", v);
        cr_assert_eq(e[1], KAFKA_ERROR_ELECTION_NOT_NEEDED, "v%d", v);
        cr_assert_eq(top, KAFKA_ERROR_NONE);
    }
    const int32_t bad[] = {1, 9, 1};
    elect_errors(2, KAFKA_ELECTION_PREFERRED, TOPIC, bad, 3, e, &top);
    cr_assert_eq(e[0], KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(e[1], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(e[2], KAFKA_ERROR_INVALID_REQUEST);
    elect_errors(1, KAFKA_ELECTION_PREFERRED, "no-such-topic", two, 1, e,
                 &top);
    cr_assert_eq(e[0], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    elect_errors(1, KAFKA_ELECTION_UNCLEAN, TOPIC, two, 2, e, &top);
    cr_assert_eq(e[0], KAFKA_ERROR_ELECTION_NOT_NEEDED);
    cr_assert_eq(e[1], KAFKA_ERROR_ELECTION_NOT_NEEDED);
    elect_errors(2, 7, TOPIC, two, 2, e, &top);
    cr_assert_eq(top, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(e[0], KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(e[1], KAFKA_ERROR_INVALID_REQUEST);

    /* A null list: no partition needs an election. */
    cr_assert_eq(elect_all_preferred(), 0);
}

Test(kafka_elect, preferred_election_moves_leadership_back_at_once)
{
    start();
    struct meta_partition mp;
    cr_assert(wait_partition(0, led_by_preferred_full_isr, &mp));
    struct cluster_node *pref = cluster_broker(&c, mp.replicas.ids[0]);
    cr_assert_not_null(pref);
    cluster_node_signal(&c, pref, SIGKILL, true);
    cluster_node_start(&c, pref);
    cr_assert(wait_partition(0, led_elsewhere_full_isr, &mp),
              "p0 not led elsewhere with a full ISR after the restart");
    int32_t epoch = mp.leader_epoch;
    int16_t e[1];
    int16_t top = -1;
    const int32_t p0[] = {0};
    elect_errors(2, KAFKA_ELECTION_UNCLEAN, TOPIC, p0, 1, e, &top);
    cr_assert_eq(e[0], KAFKA_ERROR_ELECTION_NOT_NEEDED);
    elect_errors(2, KAFKA_ELECTION_PREFERRED, TOPIC, p0, 1, e, &top);
    cr_assert_eq(e[0], KAFKA_ERROR_NONE);
    /* Committed before the answer: the image shows it now. */
    cr_assert(partition_now(0, &mp));
    cr_assert_eq(mp.leader, mp.replicas.ids[0]);
    cr_assert_eq(mp.leader_epoch, epoch + 1);
    elect_errors(0, KAFKA_ELECTION_PREFERRED, TOPIC, p0, 1, e, &top);
    cr_assert_eq(e[0], KAFKA_ERROR_ELECTION_NOT_NEEDED);
}

Test(kafka_elect, truncated_request_closes_the_connection)
{
    start();
    struct writer body;
    writer_init(&body, 64);
    writer_i8(&body, 0);
    writer_i32(&body, 1); /* one topic, then nothing */
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port));
    size_t len = 0;
    uint8_t *bytes = kafka_wire_roundtrip(&kc, KAFKA_API_ELECT_LEADERS, 1,
                                          &body, &len);
    writer_free(&body);
    cr_assert_null(bytes, "a truncated request was answered");
    kafka_client_close(&kc);
}

#define MANY_TOPICS 4
#define MANY_PER_TOPIC 6000

/* Over every partition of the many-N topics: how many have a full ISR,
 * and how many are led by another replica than their preferred one. */
static bool many_counts(int32_t pref, int32_t *full, int32_t *elsewhere,
                        int32_t *preferring)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    *full = *elsewhere = *preferring = 0;
    for (int i = 0; ok && i < MANY_TOPICS; i++) {
        char name[32];
        snprintf(name, sizeof name, "many-%d", i);
        const struct meta_topic *t = meta_image_topic(&img, name);
        ok = t != NULL && t->n_partitions == MANY_PER_TOPIC;
        for (int32_t p = 0; ok && p < t->n_partitions; p++) {
            const struct meta_partition *mp = &t->partitions[p];
            *full += mp->leader >= 0 && mp->isr.n == mp->replicas.n;
            *elsewhere += mp->leader != mp->replicas.ids[0];
            *preferring += mp->replicas.ids[0] == pref;
        }
    }
    meta_image_free(&img);
    return ok;
}

/* More preferred elections than one metadata entry holds
 * (META_BATCH_RECORDS_MAX): one ElectLeaders makes them all, as Kafka's
 * does (before, those past the first entry were answered
 * THROTTLING_QUOTA_EXCEEDED and left as they were). */
Test(kafka_elect, more_elections_than_one_entry_holds_are_all_made,
     .timeout = 400)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 2);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    for (int i = 0; i < MANY_TOPICS; i++) {
        char name[32];
        snprintf(name, sizeof name, "many-%d", i);
        int active = cluster_active(&c);
        cr_assert_geq(active, 0, "no active controller");
        cr_assert_eq(cluster_create_topic_on(&c, active, name,
                                             MANY_PER_TOPIC, 2, 60000),
                     KAFKA_ERROR_NONE, "%s", name);
    }
    const int32_t all = MANY_TOPICS * MANY_PER_TOPIC;
    int32_t full = 0, elsewhere = 0, preferring = 0;
    uint64_t deadline = cluster_now_ms() + 120000;
    while (cluster_now_ms() < deadline &&
           !(many_counts(1, &full, &elsewhere, &preferring) && full == all)) {
        pause_ms(200);
    }
    cr_assert_eq(full, all, "not every partition led with a full ISR");
    cr_assert_gt(preferring, META_BATCH_RECORDS_MAX,
                 "broker 1 is the preferred leader of %d", preferring);
    struct cluster_node *one = cluster_broker(&c, 1);
    cr_assert_not_null(one);
    cluster_node_signal(&c, one, SIGKILL, true);
    cluster_node_start(&c, one);
    deadline = cluster_now_ms() + 180000;
    while (cluster_now_ms() < deadline &&
           !(many_counts(1, &full, &elsewhere, &preferring) && full == all &&
             elsewhere == preferring)) {
        pause_ms(200);
    }
    cr_assert(full == all && elsewhere == preferring,
              "broker 1 not back in every ISR, led elsewhere (%d of %d "
              "full, %d elsewhere)", full, all, elsewhere);

    int32_t elected = elect_all_preferred();
    cr_assert_eq(elected, preferring);
    /* Committed before the answer: the image shows them all. */
    cr_assert(many_counts(1, &full, &elsewhere, &preferring));
    cr_assert_eq(elsewhere, 0, "%d partitions still led elsewhere",
                 elsewhere);
}
