/* Read your own writes through one broker, with real processes (three
 * controllers, two brokers, tests/lib/cluster.h): a change a broker
 * forwarded to the active controller is in that broker's own metadata
 * image by the time it answers, so the next request to the same broker
 * sees it, every time, with no pause in between. AlterConfigs and
 * IncrementalAlterConfigs followed by DescribeConfigs show the new value;
 * CreateTopics followed by Metadata lists the topic with its partitions;
 * CreatePartitions followed by Metadata shows the new count;
 * AlterPartitionReassignments followed by Metadata lists the replica the
 * partition moves to. Each test repeats its pair, alternating between
 * the brokers. A validateOnly request changes nothing and is still
 * answered; clients that close before their answer leave the broker
 * serving.
 *
 * Requests are built with the codec's encoders and sent with the test
 * client (tests/lib/kafka_wire.h), each on a new connection; every wait
 * has a deadline. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

#define RYOW_BROKERS 2
#define RYOW_ROUNDS 20
#define RYOW_WAIT_MS 20000     /* for a topic made outside the brokers */
#define RYOW_TIMEOUT_MS 30000  /* the requests' own TimeoutMs */

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_ryow, .fini = teardown, .timeout = 240);

static void start(void)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, RYOW_BROKERS);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
}

/* req encoded at version v, sent to broker i on a new connection; the
 * answer decoded into out, its memory in ans until
 * kafka_wire_answer_free(). */
static void call(int i, int16_t key, int16_t v, kafka_wire_encode_fn enc,
                 const void *req, kafka_wire_decode_fn dec, void *out,
                 struct kafka_wire_answer *ans)
{
    int rv = kafka_wire_typed_call(c.brokers[i].port, key, v, enc, req, dec,
                                   out, ans);
    cr_assert_eq(rv, RC_OK, "api key %d v%d on broker %d: %s", key, v, i,
                 rc_str(rv));
}

static int enc_partitions(struct writer *w, int16_t v, const void *req)
{
    return kafka_create_partitions_request_encode(w, v, req);
}

static int dec_partitions(struct reader *r, int16_t v, struct arena *a,
                          void *out)
{
    return kafka_create_partitions_response_decode(r, v, a, out);
}

static int enc_alter(struct writer *w, int16_t v, const void *req)
{
    return kafka_alter_configs_request_encode(w, v, req);
}

static int dec_alter(struct reader *r, int16_t v, struct arena *a,
                     void *out)
{
    return kafka_alter_configs_response_decode(r, v, a, out);
}

static int enc_incremental(struct writer *w, int16_t v, const void *req)
{
    return kafka_incremental_alter_configs_request_encode(w, v, req);
}

static int dec_incremental(struct reader *r, int16_t v, struct arena *a,
                           void *out)
{
    return kafka_incremental_alter_configs_response_decode(r, v, a, out);
}

static int enc_describe(struct writer *w, int16_t v, const void *req)
{
    return kafka_describe_configs_request_encode(w, v, req);
}

static int dec_describe(struct reader *r, int16_t v, struct arena *a,
                        void *out)
{
    return kafka_describe_configs_response_decode(r, v, a, out);
}

/* Metadata v4 of one topic on broker i, never creating it: its error,
 * and its partition count in *n (0 when it has none or is unknown). */
static int16_t metadata_partitions(int i, const char *topic, int32_t *n)
{
    struct kafka_MetadataRequestTopic t = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                       .AllowAutoTopicCreation = false};
    struct kafka_MetadataResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_METADATA, 4, kafka_wire_enc_metadata, &rq, kafka_wire_dec_metadata, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    int16_t e = resp.Topics[0].ErrorCode;
    *n = resp.Topics[0].PartitionsCnt;
    kafka_wire_answer_free(&ans);
    return e;
}

/* DescribeConfigs v1 on broker i of topic's config name: its value in
 * out ("" for null); false when the topic is not known there. */
static bool describe_topic_config(int i, const char *topic,
                                  const char *name, char out[64])
{
    struct slice key = slice_from_str(name);
    struct kafka_DescribeConfigsResource res = {2 /* topic */,
                                                slice_from_str(topic), &key,
                                                1};
    struct kafka_DescribeConfigsRequest rq = {&res, 1, false, false};
    struct kafka_DescribeConfigsResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_DESCRIBE_CONFIGS, 1, enc_describe, &rq, dec_describe,
         &resp, &ans);
    cr_assert_eq(resp.ResultsCnt, 1);
    bool known = resp.Results[0].ErrorCode == KAFKA_ERROR_NONE &&
                 resp.Results[0].ConfigsCnt == 1;
    out[0] = '\0';
    if (known) {
        struct slice v = resp.Results[0].Configs[0].Value;
        if (!slice_is_null(v)) {
            cr_assert_lt(v.len, 64);
            memcpy(out, v.ptr, v.len);
            out[v.len] = '\0';
        }
    }
    kafka_wire_answer_free(&ans);
    return known;
}

/* CreateTopics v4 of one topic through broker i; its error. */
static int16_t create_topic(int i, const char *name, int32_t partitions,
                            bool validate_only)
{
    struct kafka_CreatableTopic t = {.Name = slice_from_str(name),
                                     .NumPartitions = partitions,
                                     .ReplicationFactor = 2};
    struct kafka_CreateTopicsRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                           .TimeoutMs = RYOW_TIMEOUT_MS,
                                           .ValidateOnly = validate_only};
    struct kafka_CreateTopicsResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_CREATE_TOPICS, 4, kafka_wire_enc_create, &rq, kafka_wire_dec_create, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    int16_t e = resp.Topics[0].ErrorCode;
    kafka_wire_answer_free(&ans);
    return e;
}

/* A topic made on the active controller (rf copies of each partition),
 * waited for until every broker lists it with its partitions. */
static void make_topic(const char *name, int32_t partitions, int32_t rf)
{
    cr_assert_eq(cluster_create_topic(&c, name, partitions, rf),
                 KAFKA_ERROR_NONE);
    uint64_t deadline = cluster_now_ms() + RYOW_WAIT_MS;
    for (int i = 0; i < RYOW_BROKERS; i++) {
        int32_t n = 0;
        while (metadata_partitions(i, name, &n) != KAFKA_ERROR_NONE ||
               n != partitions) {
            cr_assert_lt(cluster_now_ms(), deadline,
                         "broker %d never listed %s with %d partitions", i,
                         name, partitions);
        }
    }
}

/* AlterConfigs v0 (incremental: IncrementalAlterConfigs v0) through
 * broker i: topic's name=value; its error. */
static int16_t alter_topic_config(int i, bool incremental, const char *topic,
                                  const char *name, const char *value,
                                  bool validate_only)
{
    struct kafka_AlterableConfig cfg = {slice_from_str(name),
                                        KAFKA_CONFIG_OP_SET,
                                        slice_from_str(value)};
    struct kafka_AlterConfigsResource res = {2 /* topic */,
                                             slice_from_str(topic), &cfg, 1};
    struct kafka_AlterConfigsResponse resp;
    struct kafka_wire_answer ans;
    if (incremental) {
        struct kafka_IncrementalAlterConfigsRequest rq = {&res, 1,
                                                          validate_only};
        call(i, KAFKA_API_INCREMENTAL_ALTER_CONFIGS, 0, enc_incremental,
             &rq, dec_incremental, &resp, &ans);
    } else {
        struct kafka_AlterConfigsRequest rq = {&res, 1, validate_only};
        call(i, KAFKA_API_ALTER_CONFIGS, 0, enc_alter, &rq, dec_alter, &resp,
             &ans);
    }
    cr_assert_eq(resp.ResponsesCnt, 1);
    int16_t e = resp.Responses[0].ErrorCode;
    kafka_wire_answer_free(&ans);
    return e;
}

/* RYOW_ROUNDS changes of retention.ms, each read back at once from the
 * broker that took it. */
static void alter_then_describe(bool incremental)
{
    start();
    make_topic("ryow", 1, 2);
    int stale = 0;
    for (int k = 0; k < RYOW_ROUNDS; k++) {
        int i = k % RYOW_BROKERS;
        char value[32];
        snprintf(value, sizeof value, "%d", 3600000 + k);
        cr_assert_eq(alter_topic_config(i, incremental, "ryow",
                                        "retention.ms", value, false),
                     KAFKA_ERROR_NONE, "round %d", k);
        char seen[64];
        cr_assert(describe_topic_config(i, "ryow", "retention.ms", seen));
        if (strcmp(seen, value) != 0) {
            stale++;
            cr_log_warn("round %d: broker %d shows retention.ms=%s after "
                        "setting %s", k, i, seen, value);
        }
    }
    cr_assert_eq(stale, 0, "%d of %d reads on the same broker missed the "
                 "change it had just answered", stale, RYOW_ROUNDS);
}

Test(kafka_ryow, alter_configs_then_describe_configs_shows_the_value)
{
    alter_then_describe(false);
}

Test(kafka_ryow,
     incremental_alter_configs_then_describe_configs_shows_the_value)
{
    alter_then_describe(true);
}

Test(kafka_ryow, validate_only_alter_configs_changes_nothing)
{
    start();
    make_topic("checked", 1, 2);
    char before[64];
    cr_assert(describe_topic_config(0, "checked", "retention.ms", before));
    for (int i = 0; i < RYOW_BROKERS; i++) {
        cr_assert_eq(alter_topic_config(i, true, "checked", "retention.ms",
                                        "12345", true),
                     KAFKA_ERROR_NONE);
        char seen[64];
        cr_assert(describe_topic_config(i, "checked", "retention.ms",
                                        seen));
        cr_assert_str_eq(seen, before);
    }
}

Test(kafka_ryow, create_topics_then_metadata_lists_the_topic)
{
    start();
    int missing = 0;
    for (int k = 0; k < RYOW_ROUNDS; k++) {
        int i = k % RYOW_BROKERS;
        int32_t partitions = 1 + k % 3;
        char name[32];
        snprintf(name, sizeof name, "made-%d", k);
        cr_assert_eq(create_topic(i, name, partitions, false),
                     KAFKA_ERROR_NONE, "round %d", k);
        int32_t n = 0;
        int16_t e = metadata_partitions(i, name, &n);
        if (e != KAFKA_ERROR_NONE || n != partitions) {
            missing++;
            cr_log_warn("round %d: broker %d lists %s with error %d and "
                        "%d of %d partitions", k, i, name, e, n,
                        partitions);
        }
    }
    cr_assert_eq(missing, 0, "%d of %d topics were not listed by the "
                 "broker that created them", missing, RYOW_ROUNDS);
}

Test(kafka_ryow, validate_only_create_topics_creates_nothing)
{
    start();
    for (int i = 0; i < RYOW_BROKERS; i++) {
        cr_assert_eq(create_topic(i, "dry-run", 2, true), KAFKA_ERROR_NONE);
        int32_t n = 0;
        cr_assert_eq(metadata_partitions(i, "dry-run", &n),
                     KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    }
}

/* CreatePartitions v1 through broker i: topic grown to count; its
 * error. */
static int16_t grow_topic(int i, const char *topic, int32_t count)
{
    struct kafka_CreatePartitionsTopic t = {.Name = slice_from_str(topic),
                                            .Count = count,
                                            .AssignmentsCnt = -1};
    struct kafka_CreatePartitionsRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                               .TimeoutMs = RYOW_TIMEOUT_MS};
    struct kafka_CreatePartitionsResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_CREATE_PARTITIONS, 1, enc_partitions, &rq,
         dec_partitions, &resp, &ans);
    cr_assert_eq(resp.ResultsCnt, 1);
    int16_t e = resp.Results[0].ErrorCode;
    kafka_wire_answer_free(&ans);
    return e;
}

Test(kafka_ryow, create_partitions_then_metadata_shows_the_count)
{
    start();
    make_topic("grown", 1, 2);
    int stale = 0;
    for (int k = 0; k < RYOW_ROUNDS; k++) {
        int i = k % RYOW_BROKERS;
        int32_t count = 2 + k;
        cr_assert_eq(grow_topic(i, "grown", count), KAFKA_ERROR_NONE,
                     "round %d", k);
        int32_t n = 0;
        cr_assert_eq(metadata_partitions(i, "grown", &n), KAFKA_ERROR_NONE);
        if (n != count) {
            stale++;
            cr_log_warn("round %d: broker %d lists %d partitions after "
                        "growing to %d", k, i, n, count);
        }
    }
    cr_assert_eq(stale, 0, "%d of %d reads on the same broker missed the "
                 "partitions it had just added", stale, RYOW_ROUNDS);
}

/* Metadata v4 on broker i: whether broker id is among the replicas of
 * topic's partition p (the adding ones count while it is being moved). */
static bool replica_listed(int i, const char *topic, int32_t p, int32_t id)
{
    struct kafka_MetadataRequestTopic t = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                       .AllowAutoTopicCreation = false};
    struct kafka_MetadataResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_METADATA, 4, kafka_wire_enc_metadata, &rq, kafka_wire_dec_metadata, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    bool listed = false;
    const struct kafka_MetadataResponseTopic *mt = &resp.Topics[0];
    for (int32_t k = 0; k < mt->PartitionsCnt; k++) {
        const struct kafka_MetadataResponsePartition *mp = &mt->Partitions[k];
        for (int32_t r = 0; mp->PartitionIndex == p &&
                            r < mp->ReplicaNodesCnt; r++) {
            listed |= mp->ReplicaNodes[r] == id;
        }
    }
    kafka_wire_answer_free(&ans);
    return listed;
}

#define RYOW_MOVES 10

Test(kafka_ryow, reassignment_then_metadata_lists_the_new_replica)
{
    start();
    make_topic("moved", RYOW_MOVES, 1);
    int stale = 0;
    for (int32_t k = 0; k < RYOW_MOVES; k++) {
        int i = k % RYOW_BROKERS;
        /* Partition k goes to whichever broker does not hold it. */
        int32_t target = c.brokers[0].id;
        if (replica_listed(i, "moved", k, target)) {
            target = c.brokers[1].id;
        }
        cr_assert_eq(kafka_wire_reassign(c.brokers[i].port, "moved", k,
                                         &target, 1),
                     KAFKA_ERROR_NONE, "partition %d", k);
        if (!replica_listed(i, "moved", k, target)) {
            stale++;
            cr_log_warn("partition %d: broker %d does not list replica %d "
                        "after moving it there", k, i, target);
        }
    }
    cr_assert_eq(stale, 0, "%d of %d reads on the same broker missed the "
                 "move it had just answered", stale, RYOW_MOVES);
}

/* Clients that close their connection right after an AlterConfigs, so
 * that its answer, held or not, has nowhere to go: the broker lets go of
 * it and serves on. */
Test(kafka_ryow, a_closed_connection_lets_go_of_its_held_answer)
{
    start();
    make_topic("dropped", 1, 2);
    /* Not the config read back below: these changes may still reach the
     * controller after the one made there. */
    struct kafka_AlterableConfig cfg = {slice_from_str("segment.ms"),
                                        KAFKA_CONFIG_OP_SET,
                                        slice_from_str("7200000")};
    struct kafka_AlterConfigsResource res = {2 /* topic */,
                                             slice_from_str("dropped"), &cfg,
                                             1};
    struct kafka_IncrementalAlterConfigsRequest rq = {&res, 1, false};
    for (int k = 0; k < RYOW_ROUNDS; k++) {
        int i = k % RYOW_BROKERS;
        struct writer w;
        writer_init(&w, 4096);
        size_t at = kafka_frame_request_begin(
            &w, KAFKA_API_INCREMENTAL_ALTER_CONFIGS, 0, k, "test");
        cr_assert_eq(kafka_incremental_alter_configs_request_encode(&w, 0,
                                                                    &rq),
                     RC_OK);
        cr_assert_eq(kafka_frame_end(&w, at), RC_OK);
        struct kafka_client kc;
        cr_assert(kafka_wire_connect(&kc, c.brokers[i].port), "%s",
                  kc.error);
        cr_assert_eq(kafka_client_send(&kc, w.data, w.len), RC_OK, "%s",
                     kc.error);
        kafka_client_close(&kc);
        writer_free(&w);
    }
    for (int i = 0; i < RYOW_BROKERS; i++) {
        char value[32];
        snprintf(value, sizeof value, "%d", 3600000 + i);
        cr_assert_eq(alter_topic_config(i, true, "dropped", "retention.ms",
                                        value, false),
                     KAFKA_ERROR_NONE);
        char seen[64];
        cr_assert(describe_topic_config(i, "dropped", "retention.ms", seen));
        cr_assert_str_eq(seen, value, "broker %d", i);
    }
}
