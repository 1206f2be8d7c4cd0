/* Topic ids over the Kafka wire, with real processes (three controllers,
 * two brokers, tests/lib/cluster.h): CreateTopics v7 answers a new
 * topic's id (a random version-4 UUID whose base64 form does not start
 * with '-') with its settings; Metadata v12 gives the same id on every
 * broker, by name and by id; an unknown id is UNKNOWN_TOPIC_ID (100) with
 * a null name; an id before v12 is INVALID_REQUEST; DeleteTopics v6
 * deletes by id, answers an unknown id with UNKNOWN_TOPIC_ID and refuses
 * a name and an id together, as Kafka 3.8 does. A bad config value is
 * INVALID_CONFIG (40) with Kafka's message, and nothing is written:
 * CreateTopics creates no topic, IncrementalAlterConfigs leaves the value
 * DescribeConfigs shows as it was. A broker's config-file defaults of
 * topic configs show as STATIC_BROKER_CONFIG.
 *
 * Requests are built with the codec's encoders and sent with the test
 * client (tests/lib/kafka_wire.h), which skips response header v1's
 * tagged fields; every wait has a deadline. */
#include <criterion/criterion.h>
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

#define ADMIN_WAIT_MS 20000 /* for a broker to see a metadata change */
#define ADMIN_BROKERS 2

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_admin, .fini = teardown, .timeout = 180);

/* extra: lines appended to each broker's config file, or NULL. */
static void start_with(const char *extra)
{
    memset(&c, 0, sizeof c);
    c.broker_extra_config = extra;
    cluster_start(&c, 3, ADMIN_BROKERS);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
}

static void start(void)
{
    start_with(NULL);
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

static int enc_delete(struct writer *w, int16_t v, const void *req)
{
    return kafka_delete_topics_request_encode(w, v, req);
}

static int dec_delete(struct reader *r, int16_t v, struct arena *a,
                      void *out)
{
    return kafka_delete_topics_response_decode(r, v, a, out);
}

static bool uuid_is_zero(const struct kafka_uuid *u)
{
    static const struct kafka_uuid zero;
    return memcmp(u->bytes, zero.bytes, sizeof zero.bytes) == 0;
}

/* Metadata at v of one topic, by name (id zero) or by id (name null), on
 * broker i: the topic's entry copied out (scalars and id only). */
static struct kafka_MetadataResponseTopic
metadata_one(int i, int16_t v, struct slice name, struct kafka_uuid id,
             char name_out[256])
{
    struct kafka_MetadataRequestTopic t = {.Name = name, .TopicId = id};
    struct kafka_MetadataRequest rq = {
        .Topics = &t, .TopicsCnt = 1, .AllowAutoTopicCreation = false};
    struct kafka_MetadataResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_METADATA, v, kafka_wire_enc_metadata, &rq, kafka_wire_dec_metadata, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    struct kafka_MetadataResponseTopic out = resp.Topics[0];
    name_out[0] = '\0';
    if (!slice_is_null(out.Name)) {
        cr_assert_lt(out.Name.len, 256);
        memcpy(name_out, out.Name.ptr, out.Name.len);
        name_out[out.Name.len] = '\0';
    }
    out.Name = slice_is_null(out.Name) ? slice_null()
                                       : slice_from_str(name_out);
    out.Partitions = NULL;
    kafka_wire_answer_free(&ans);
    return out;
}

/* Between the polls of a wait bounded by its deadline. */
static void poll_pause(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Waits until broker i answers Metadata v12 for name with no error; its
 * entry then. */
static struct kafka_MetadataResponseTopic
wait_topic(int i, const char *name, char name_out[256])
{
    uint64_t deadline = cluster_now_ms() + ADMIN_WAIT_MS;
    struct kafka_uuid zero = {{0}};
    for (;;) {
        struct kafka_MetadataResponseTopic t =
            metadata_one(i, 12, slice_from_str(name), zero, name_out);
        if (t.ErrorCode == KAFKA_ERROR_NONE && t.PartitionsCnt > 0) {
            return t;
        }
        cr_assert_lt(cluster_now_ms(), deadline,
                     "broker %d never saw topic %s (error %d)", i, name,
                     t.ErrorCode);
        poll_pause();
    }
}

/* CreateTopics v7 of one topic on broker 0; its result. */
static struct kafka_CreatableTopicResult create_v7(const char *name,
                                                   int32_t partitions,
                                                   int16_t rf)
{
    struct kafka_CreatableTopic t = {.Name = slice_from_str(name),
                                     .NumPartitions = partitions,
                                     .ReplicationFactor = rf};
    struct kafka_CreateTopicsRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                           .TimeoutMs = 10000};
    struct kafka_CreateTopicsResponse resp;
    struct kafka_wire_answer ans;
    call(0, KAFKA_API_CREATE_TOPICS, 7, kafka_wire_enc_create, &rq, kafka_wire_dec_create, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    struct kafka_CreatableTopicResult r = resp.Topics[0];
    cr_assert_eq(r.ErrorCode, KAFKA_ERROR_NONE, "create %s: %d", name,
                 r.ErrorCode);
    bool has_cleanup = false;
    for (int32_t k = 0; k < r.ConfigsCnt; k++) {
        has_cleanup = has_cleanup ||
                      (slice_eq_str(r.Configs[k].Name, "cleanup.policy") &&
                       slice_eq_str(r.Configs[k].Value, "delete") &&
                       r.Configs[k].ConfigSource == 5 /* DEFAULT_CONFIG */);
    }
    cr_expect(has_cleanup, "v5+ lists the topic's configs");
    r.Name = slice_null();
    r.Configs = NULL;
    r.ErrorMessage = slice_null();
    kafka_wire_answer_free(&ans);
    return r;
}

Test(kafka_admin, topic_ids_agree_between_create_topics_and_every_broker)
{
    start();
    struct kafka_CreatableTopicResult cr = create_v7("ids", 3, 2);
    cr_assert_not(uuid_is_zero(&cr.TopicId), "v7 answers the topic id");
    cr_expect_eq(cr.NumPartitions, 3);
    cr_expect_eq(cr.ReplicationFactor, 2);
    cr_expect_eq(cr.TopicConfigErrorCode, 0);
    cr_expect_eq(cr.TopicId.bytes[6] >> 4, 4, "a version-4 UUID");
    cr_expect_eq(cr.TopicId.bytes[8] >> 6, 2, "IETF variant");
    struct meta_uuid mid;
    memcpy(mid.b, cr.TopicId.bytes, sizeof mid.b);
    char b64[23];
    meta_uuid_format(&mid, b64);
    cr_expect_neq(b64[0], '-', "%s", b64);

    char name[256];
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        struct kafka_MetadataResponseTopic t = wait_topic(i, "ids", name);
        cr_expect_arr_eq(t.TopicId.bytes, cr.TopicId.bytes, 16,
                         "broker %d: id by name", i);
        t = metadata_one(i, 12, slice_null(), cr.TopicId, name);
        cr_expect_eq(t.ErrorCode, KAFKA_ERROR_NONE, "broker %d", i);
        cr_expect_str_eq(name, "ids", "broker %d: name by id", i);
        cr_expect_eq(t.PartitionsCnt, 3);
        cr_expect_arr_eq(t.TopicId.bytes, cr.TopicId.bytes, 16);
    }

    /* An id no topic has: UNKNOWN_TOPIC_ID, a null name, the id echoed. */
    struct kafka_uuid unknown = cr.TopicId;
    unknown.bytes[15] ^= 0x5a;
    struct kafka_MetadataResponseTopic t =
        metadata_one(1, 12, slice_null(), unknown, name);
    cr_expect_eq(t.ErrorCode, 100);
    cr_expect(slice_is_null(t.Name));
    cr_expect_arr_eq(t.TopicId.bytes, unknown.bytes, 16);
    cr_expect_eq(t.PartitionsCnt, 0);

    /* Before v12 Kafka serves no id: INVALID_REQUEST, the name as "". */
    t = metadata_one(0, 11, slice_null(), cr.TopicId, name);
    cr_expect_eq(t.ErrorCode, KAFKA_ERROR_INVALID_REQUEST);
    cr_expect_str_eq(name, "");

    /* v10 by name still answers the id. */
    struct kafka_uuid zero = {{0}};
    t = metadata_one(0, 10, slice_from_str("ids"), zero, name);
    cr_expect_eq(t.ErrorCode, KAFKA_ERROR_NONE);
    cr_expect_arr_eq(t.TopicId.bytes, cr.TopicId.bytes, 16);
}

/* DeleteTopics v6 of the given entries on broker i; the results copied
 * (scalars, ids, and the names into names[k]). */
static void delete_v6(int i, const struct kafka_DeleteTopicState *ts,
                      int32_t n, struct kafka_DeletableTopicResult *out,
                      char names[][256])
{
    struct kafka_DeleteTopicsRequest rq = {.TimeoutMs = 10000, .Topics = ts,
                                           .TopicsCnt = n};
    struct kafka_DeleteTopicsResponse resp;
    struct kafka_wire_answer ans;
    call(i, KAFKA_API_DELETE_TOPICS, 6, enc_delete, &rq, dec_delete, &resp,
         &ans);
    cr_assert_eq(resp.ResponsesCnt, n);
    for (int32_t k = 0; k < n; k++) {
        out[k] = resp.Responses[k];
        names[k][0] = '\0';
        if (!slice_is_null(out[k].Name)) {
            memcpy(names[k], out[k].Name.ptr, out[k].Name.len);
            names[k][out[k].Name.len] = '\0';
            out[k].Name = slice_from_str(names[k]);
        }
        out[k].ErrorMessage = slice_null();
    }
    kafka_wire_answer_free(&ans);
}

Test(kafka_admin, delete_topics_v6_by_topic_id)
{
    start();
    struct kafka_CreatableTopicResult cr = create_v7("doomed", 1, 2);
    char name[256];
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        (void)wait_topic(i, "doomed", name);
    }
    struct kafka_uuid unknown = cr.TopicId;
    unknown.bytes[0] ^= 0x01;
    struct kafka_DeleteTopicState ts[] = {
        {.Name = slice_null(), .TopicId = cr.TopicId},
        {.Name = slice_null(), .TopicId = unknown},
        {.Name = slice_from_str("doomed"), .TopicId = cr.TopicId},
        {.Name = slice_null()},
    };
    struct kafka_DeletableTopicResult res[4];
    char names[4][256];
    delete_v6(1, ts, 4, res, names);
    cr_expect_eq(res[0].ErrorCode, KAFKA_ERROR_NONE);
    cr_expect_str_eq(names[0], "doomed", "the id's name is answered");
    cr_expect_arr_eq(res[0].TopicId.bytes, cr.TopicId.bytes, 16);
    cr_expect_eq(res[1].ErrorCode, 100);
    cr_expect(slice_is_null(res[1].Name));
    cr_expect_arr_eq(res[1].TopicId.bytes, unknown.bytes, 16);
    cr_expect_eq(res[2].ErrorCode, KAFKA_ERROR_INVALID_REQUEST,
                 "a name and an id together");
    cr_expect_eq(res[3].ErrorCode, KAFKA_ERROR_INVALID_REQUEST,
                 "neither a name nor an id");

    /* Gone on every broker: by id UNKNOWN_TOPIC_ID, by name unknown. */
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        uint64_t deadline = cluster_now_ms() + ADMIN_WAIT_MS;
        struct kafka_MetadataResponseTopic t;
        do {
            t = metadata_one(i, 12, slice_null(), cr.TopicId, name);
            cr_assert_lt(cluster_now_ms(), deadline,
                         "broker %d still lists the topic", i);
            if (t.ErrorCode != 100) {
                poll_pause();
            }
        } while (t.ErrorCode != 100);
        struct kafka_uuid zero = {{0}};
        t = metadata_one(i, 12, slice_from_str("doomed"), zero, name);
        cr_expect_eq(t.ErrorCode, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
        cr_expect(uuid_is_zero(&t.TopicId));
    }
}

/* --- Config values ------------------------------------------------------- */

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

/* A nullable wire string into out ("" for null). */
static void copy_str(struct slice s, char out[256])
{
    out[0] = '\0';
    if (!slice_is_null(s)) {
        cr_assert_lt(s.len, 256);
        memcpy(out, s.ptr, s.len);
        out[s.len] = '\0';
    }
}

/* IncrementalAlterConfigs v0 on broker 0: SET topic's name=value. Its
 * error, the message in msg. */
static int16_t set_topic_config(const char *topic, const char *name,
                                struct slice value, char msg[256])
{
    struct kafka_AlterableConfig cfg = {slice_from_str(name), 0 /* SET */,
                                        value};
    struct kafka_AlterConfigsResource res = {2 /* topic */,
                                             slice_from_str(topic), &cfg, 1};
    struct kafka_IncrementalAlterConfigsRequest rq = {&res, 1, false};
    struct kafka_AlterConfigsResponse resp;
    struct kafka_wire_answer ans;
    call(0, KAFKA_API_INCREMENTAL_ALTER_CONFIGS, 0, enc_incremental, &rq,
         dec_incremental, &resp, &ans);
    cr_assert_eq(resp.ResponsesCnt, 1);
    int16_t e = resp.Responses[0].ErrorCode;
    copy_str(resp.Responses[0].ErrorMessage, msg);
    kafka_wire_answer_free(&ans);
    return e;
}

/* DescribeConfigs v1 on broker i of topic's name: its value in out and
 * its source. */
static int8_t describe_topic_config(int i, const char *topic,
                                    const char *name, char out[256])
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
    cr_assert_eq(resp.Results[0].ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(resp.Results[0].ConfigsCnt, 1);
    copy_str(resp.Results[0].Configs[0].Value, out);
    int8_t source = resp.Results[0].Configs[0].ConfigSource;
    kafka_wire_answer_free(&ans);
    return source;
}

Test(kafka_admin, create_topics_refuses_min_insync_replicas_two)
{
    start();
    struct kafka_CreateableTopicConfig cfg = {
        slice_from_str("min.insync.replicas"), slice_from_str("two")};
    struct kafka_CreatableTopic t = {.Name = slice_from_str("strict"),
                                     .NumPartitions = 1,
                                     .ReplicationFactor = 2,
                                     .Configs = &cfg, .ConfigsCnt = 1};
    struct kafka_CreateTopicsRequest rq = {.Topics = &t, .TopicsCnt = 1,
                                           .TimeoutMs = 10000};
    struct kafka_CreateTopicsResponse resp;
    struct kafka_wire_answer ans;
    call(0, KAFKA_API_CREATE_TOPICS, 7, kafka_wire_enc_create, &rq, kafka_wire_dec_create, &resp,
         &ans);
    cr_assert_eq(resp.TopicsCnt, 1);
    char msg[256];
    copy_str(resp.Topics[0].ErrorMessage, msg);
    cr_expect_eq(resp.Topics[0].ErrorCode, KAFKA_ERROR_INVALID_CONFIG);
    cr_expect_eq(resp.Topics[0].ErrorCode, 40);
    cr_expect_str_eq(msg, "Invalid value two for configuration "
                          "min.insync.replicas: Not a number of type INT");
    kafka_wire_answer_free(&ans);

    /* Nothing was written: no broker knows the topic. */
    char name[256];
    struct kafka_uuid zero = {{0}};
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        struct kafka_MetadataResponseTopic mt =
            metadata_one(i, 12, slice_from_str("strict"), zero, name);
        cr_expect_eq(mt.ErrorCode, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                     "broker %d", i);
    }
}

Test(kafka_admin, incremental_alter_configs_refuses_a_bad_value)
{
    start();
    (void)create_v7("kept", 1, 2);
    char name[256];
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        (void)wait_topic(i, "kept", name);
    }
    char msg[256];
    cr_assert_eq(set_topic_config("kept", "min.insync.replicas",
                                  slice_from_str("2"), msg),
                 KAFKA_ERROR_NONE, "%s", msg);
    char value[256];
    uint64_t deadline = cluster_now_ms() + ADMIN_WAIT_MS;
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        for (;;) {
            int8_t source = describe_topic_config(
                i, "kept", "min.insync.replicas", value);
            if (strcmp(value, "2") == 0) {
                cr_expect_eq(source, 1 /* DYNAMIC_TOPIC_CONFIG */);
                break;
            }
            cr_assert_lt(cluster_now_ms(), deadline, "broker %d: %s", i,
                         value);
            poll_pause();
        }
    }
    cr_expect_eq(set_topic_config("kept", "min.insync.replicas",
                                  slice_from_str("two"), msg),
                 40);
    cr_expect_str_eq(msg, "Invalid value two for configuration "
                          "min.insync.replicas: Not a number of type INT");
    cr_expect_eq(set_topic_config("kept", "min.insync.replicas",
                                  slice_from_str(" 1"), msg),
                 40);
    cr_expect_str_eq(msg, "Invalid value  1 for configuration "
                          "min.insync.replicas: Not a number of type INT");
    /* A NUL inside is trailing garbage too, not the end of "1". */
    struct slice nul = {(const uint8_t *)"1\0x", 3};
    cr_expect_eq(set_topic_config("kept", "min.insync.replicas", nul, msg),
                 40);
    cr_expect_str_eq(msg, "Invalid value 1?x for configuration "
                          "min.insync.replicas: Not a number of type INT");
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        (void)describe_topic_config(i, "kept", "min.insync.replicas", value);
        cr_expect_str_eq(value, "2", "broker %d", i);
    }
}

/* The brokers' own defaults of topic configs, from their config files,
 * show as STATIC_BROKER_CONFIG for every config with a setting, the
 * dirty ratio too, and Kafka's defaults as DEFAULT_CONFIG. */
Test(kafka_admin, describe_configs_shows_config_file_defaults_as_static)
{
    start_with("log.cleaner.min.cleanable.ratio=0.25\n"
               "log.roll.ms=120000\n");
    (void)create_v7("static", 1, 2);
    char name[256];
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        (void)wait_topic(i, "static", name);
    }
    char value[256];
    for (int i = 0; i < ADMIN_BROKERS; i++) {
        int8_t source = describe_topic_config(
            i, "static", "min.cleanable.dirty.ratio", value);
        cr_expect_str_eq(value, "0.25", "broker %d", i);
        cr_expect_eq(source, 4 /* STATIC_BROKER_CONFIG */, "broker %d", i);
        source = describe_topic_config(i, "static", "segment.ms", value);
        cr_expect_str_eq(value, "120000", "broker %d", i);
        cr_expect_eq(source, 4 /* STATIC_BROKER_CONFIG */, "broker %d", i);
        source = describe_topic_config(i, "static", "cleanup.policy",
                                       value);
        cr_expect_str_eq(value, "delete", "broker %d", i);
        cr_expect_eq(source, 5 /* DEFAULT_CONFIG */, "broker %d", i);
    }
}
