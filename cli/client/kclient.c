/* librdkafka plumbing of the Kafka commands (cli/client/kclient.h). */
#include "cli/client/kclient.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util/cli.h"
#include "common/arena.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/reader.h"
#include "common/rc.h"
#include "common/trace.h"

/* A property name of -X; librdkafka's longest is under 64 bytes. */
#define KCLIENT__PROP_NAME_BYTES 256

/* An admin result may come this long after the operation timeout. */
#define KCLIENT__ADMIN_MARGIN_MS 5000

/* librdkafka's level of debug lines (syslog's LOG_DEBUG). */
#define KCLIENT__LOG_DEBUG 7

/* The most detailed level printed: $CAIRN_LOG's, or debug with -X debug=
 * (a debug context makes librdkafka send every level). Set before any
 * handle exists, read on librdkafka's threads. */
static atomic_int kclient__log_max = 3;

/* Whether a line about a broker connection failing was printed. */
static atomic_bool kclient__conn_noise_shown;

/* A line about a broker being down: librdkafka's "FAIL" (a connection
 * failed), and the "ERROR" it then reports (no error_cb is set), which
 * names a broker ("HOST:PORT/ID: ...") or counts them ("N/M brokers are
 * down"). */
static bool is_connection_noise(const char *fac, const char *buf)
{
    if (strcmp(fac, "FAIL") == 0) {
        return true;
    }
    if (strcmp(fac, "ERROR") != 0) {
        return false;
    }
    if (strstr(buf, " brokers are down") != NULL ||
        strstr(buf, "/bootstrap: ") != NULL) {
        return true;
    }
    /* "cairn#producer-1: 127.0.0.1:19092/2: Connect to ..." */
    for (const char *p = strchr(buf, '/'); p != NULL;
         p = strchr(p + 1, '/')) {
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9') {
            q++;
        }
        if (q > p + 1 && q[0] == ':' && q[1] == ' ') {
            return true;
        }
    }
    return false;
}

void kclient_log(const rd_kafka_t *rk, int level, const char *fac,
                 const char *buf)
{
    (void)rk;
    int max = atomic_load(&kclient__log_max);
    if (level > max) {
        return;
    }
    if (max < KCLIENT__LOG_DEBUG && is_connection_noise(fac, buf)) {
        if (atomic_exchange(&kclient__conn_noise_shown, true)) {
            return;
        }
        fprintf(stderr,
                "cairn: librdkafka: %s: %s (further broker connection "
                "errors not shown; CAIRN_LOG=debug shows them)\n",
                fac, buf);
        return;
    }
    fprintf(stderr, "cairn: librdkafka: %s: %s\n", fac, buf);
}

/* $CAIRN_LOG as a syslog level for librdkafka's log_level; errors
 * (LOG_ERR, 3) when unset or unknown. */
static int env_log_level(void)
{
    static const int levels[] = {7, 6, 4, 3, 0}; /* by enum trace_level */
    const char *name = getenv("CAIRN_LOG");
    int level = name != NULL ? trace_level_parse(name) : -1;
    if (level < 0 || (size_t)level >= ARRAY_LEN(levels)) {
        return 3;
    }
    return levels[level];
}

/* What to say about code when the broker said nothing more than its
 * name: Kafka's description when the CLI knows it, else librdkafka's. */
static const char *describe_code(rd_kafka_resp_err_t code)
{
    const char *text = NULL;
    if (code >= -1 && code <= INT16_MAX) {
        text = cli_kafka_description((int16_t)code);
    }
    return text != NULL ? text : rd_kafka_err2str(code);
}

void kclient_error_set(struct kclient_error *e, rd_kafka_resp_err_t code,
                       const char *text)
{
    e->code = code;
    if (text == NULL || text[0] == '\0' ||
        strcmp(text, kclient_err_name(code)) == 0 ||
        strcmp(text, rd_kafka_err2name(code)) == 0 ||
        strcmp(text, rd_kafka_err2str(code)) == 0) {
        text = describe_code(code);
    }
    snprintf(e->text, sizeof e->text, "%s", text);
}

const char *kclient_err_name(rd_kafka_resp_err_t err)
{
    if (err >= -1 && err <= INT16_MAX) {
        const char *name = kafka_error_name((int16_t)err);
        if (strcmp(name, "UNKNOWN_CODE") != 0) {
            return name;
        }
    }
    return rd_kafka_err2name(err);
}

void kclient_error_print(const char *what, const struct kclient_error *e)
{
    if (e->code == RD_KAFKA_RESP_ERR_NO_ERROR) {
        cli_error("%s: %s", what, e->text);
    } else {
        cli_error("%s: %s: %s", what, kclient_err_name(e->code), e->text);
    }
}

int kclient_conf_set(rd_kafka_conf_t *conf, const char *name,
                     const char *value, struct kclient_error *e)
{
    char why[KCLIENT_ERROR_BYTES / 2];
    if (rd_kafka_conf_set(conf, name, value, why, sizeof why) ==
        RD_KAFKA_CONF_OK) {
        return RC_OK;
    }
    e->code = RD_KAFKA_RESP_ERR_NO_ERROR;
    snprintf(e->text, sizeof e->text, "property %.64s=%.128s: %s", name,
             value, why);
    return RC_INVALID;
}

rd_kafka_conf_t *kclient_conf_new(const struct kclient_opts *o,
                                  struct kclient_error *e)
{
    ASSERT(o->bootstrap != NULL);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (conf == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return NULL;
    }
    char level[8];
    atomic_store(&kclient__log_max, env_log_level());
    snprintf(level, sizeof level, "%d", env_log_level());
    rd_kafka_conf_set_log_cb(conf, kclient_log);
    if (kclient_conf_set(conf, "bootstrap.servers", o->bootstrap, e) !=
            RC_OK ||
        kclient_conf_set(conf, "client.id", "cairn", e) != RC_OK ||
        kclient_conf_set(conf, "log_level", level, e) != RC_OK) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

/* One -X "key=value" (checked by the option parser). */
static int apply_prop(rd_kafka_conf_t *conf, const char *prop,
                      struct kclient_error *e)
{
    const char *eq = strchr(prop, '=');
    ASSERT(eq != NULL);
    size_t len = (size_t)(eq - prop);
    char name[KCLIENT__PROP_NAME_BYTES];
    if (len == 0 || len >= sizeof name) {
        e->code = RD_KAFKA_RESP_ERR_NO_ERROR;
        snprintf(e->text, sizeof e->text, "-X %.64s: bad property name",
                 prop);
        return RC_INVALID;
    }
    memcpy(name, prop, len);
    name[len] = '\0';
    return kclient_conf_set(conf, name, eq + 1, e);
}

rd_kafka_t *kclient_new(const struct kclient_opts *o, rd_kafka_type_t type,
                        rd_kafka_conf_t *conf, struct kclient_error *e)
{
    for (size_t i = 0; i < o->n_props; i++) {
        if (apply_prop(conf, o->props[i], e) != RC_OK) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
        if (strncmp(o->props[i], "debug=", 6) == 0) {
            atomic_store(&kclient__log_max, KCLIENT__LOG_DEBUG);
        }
    }
    char why[KCLIENT_ERROR_BYTES];
    rd_kafka_t *rk = rd_kafka_new(type, conf, why, sizeof why);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf); /* freed only on success */
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, why);
    }
    return rk;
}

rd_kafka_t *kclient_admin_new(const struct kclient_opts *o,
                              struct kclient_error *e)
{
    rd_kafka_conf_t *conf = kclient_conf_new(o, e);
    return conf != NULL ? kclient_new(o, RD_KAFKA_PRODUCER, conf, e) : NULL;
}

/* --- Metadata ------------------------------------------------------------ */

/* Metadata of every topic; NULL with e set when the request failed. A
 * request naming the topic would let a broker with
 * auto.create.topics.enable create it: asking about a topic must not. */
static const rd_kafka_metadata_t *all_metadata(rd_kafka_t *rk,
                                               struct kclient_error *e)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1 /* all topics */, NULL,
                                                &md, KCLIENT_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        return NULL;
    }
    return md;
}

/* The topic's entry; NULL (e set) when the cluster does not know it. */
static const rd_kafka_metadata_topic_t *
find_topic(const rd_kafka_metadata_t *md, const char *topic,
           struct kclient_error *e)
{
    for (int i = 0; i < md->topic_cnt; i++) {
        const rd_kafka_metadata_topic_t *t = &md->topics[i];
        if (strcmp(t->topic, topic) != 0) {
            continue;
        }
        if (t->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            return t;
        }
        kclient_error_set(e, t->err, NULL);
        return NULL;
    }
    kclient_error_set(e, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, NULL);
    return NULL;
}

/* True when t has partitions and each one a leader; else e says why. */
static bool all_led(const rd_kafka_metadata_topic_t *t,
                    struct kclient_error *e)
{
    if (t->partition_cnt == 0) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
                          "the topic has no partitions yet");
        return false;
    }
    for (int p = 0; p < t->partition_cnt; p++) {
        if (t->partitions[p].leader < 0 ||
            t->partitions[p].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            kclient_error_set(e, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
                              "a partition has no leader yet");
            return false;
        }
    }
    return true;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL); /* an early wake-up only polls sooner */
}

/* One look at topic: RC_OK with its partition count in *n (when every
 * partition has a leader, if led); RC_NOT_FOUND when the cluster does not
 * know it; RC_BUSY when it or a partition lacks a leader; RC_IO when the
 * request failed. e says why on failure. */
static int look(rd_kafka_t *rk, const char *topic, bool led, int32_t *n,
                struct kclient_error *e)
{
    const rd_kafka_metadata_t *md = all_metadata(rk, e);
    if (md == NULL) {
        return RC_IO;
    }
    const rd_kafka_metadata_topic_t *t = find_topic(md, topic, e);
    int rv = RC_OK;
    if (t == NULL && e->code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        rv = RC_NOT_FOUND;
    } else if (t == NULL) {
        rv = e->code == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ? RC_BUSY
                                                               : RC_IO;
    } else if (led && !all_led(t, e)) {
        rv = RC_BUSY;
    } else {
        *n = t->partition_cnt;
    }
    rd_kafka_metadata_destroy(md);
    return rv;
}

int kclient_partition_count(rd_kafka_t *rk, const char *topic, int wait_ms,
                            int32_t *n, struct kclient_error *e)
{
    int64_t deadline = cli_clock_ns() + (int64_t)wait_ms * 1000000;
    for (;;) {
        int rv = look(rk, topic, false /* led */, n, e);
        bool again = rv == RC_NOT_FOUND || rv == RC_BUSY;
        if (!again || cli_clock_ns() >= deadline) {
            return rv == RC_BUSY ? RC_IO : rv;
        }
        sleep_ms(KCLIENT_POLL_MS);
    }
}

/* Whether the broker at host:port lists topic with at least partitions
 * partitions, every one led: RC_OK, RC_NOT_FOUND (it does not list it),
 * RC_BUSY (listed, fewer or not all led), RC_IO (no answer). Metadata v4 for that topic alone, with
 * AllowAutoTopicCreation false, so asking never creates it. */
static int broker_lists(const char *host, int port, const char *topic,
                        int32_t partitions)
{
    struct kafka_client kc;
    if (kafka_client_open(&kc, host, port, CLI_KAFKA_CLIENT_ID,
                          KCLIENT_BROKER_TIMEOUT_MS) != RC_OK) {
        kafka_client_close(&kc);
        return RC_IO;
    }
    struct kafka_MetadataRequestTopic t = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest rq = {.Topics = &t, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    int rv = kafka_metadata_request_encode(&w, 4, &rq);
    if (rv == RC_OK) {
        rv = kafka_client_call(&kc, KAFKA_API_METADATA, 4, &w, &body, &len);
    }
    writer_free(&w);
    kafka_client_close(&kc);
    if (rv != RC_OK) {
        free(body);
        return RC_IO;
    }
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body, len);
    struct kafka_MetadataResponse resp;
    rv = kafka_metadata_response_decode(&r, 4, &a, &resp);
    if (rv == RC_OK) {
        rv = resp.TopicsCnt == 1 &&
                     resp.Topics[0].ErrorCode == KAFKA_ERROR_NONE
                 ? RC_OK
                 : RC_NOT_FOUND;
    } else {
        rv = RC_IO;
    }
    if (rv == RC_OK && resp.Topics[0].PartitionsCnt < partitions) {
        rv = RC_BUSY;
    }
    for (int32_t i = 0; rv == RC_OK && i < resp.Topics[0].PartitionsCnt;
         i++) {
        if (resp.Topics[0].Partitions[i].LeaderId < 0) {
            rv = RC_BUSY;
        }
    }
    arena_free(&a);
    free(body);
    return rv;
}

/* Metadata v12 of every topic from host:port into resp (borrowing from
 * *body, in a); false when no answer decodes. */
static bool all_topics_v12(const char *host, int port, struct arena *a,
                           uint8_t **body,
                           struct kafka_MetadataResponse *resp)
{
    struct kafka_client kc;
    if (kafka_client_open(&kc, host, port, CLI_KAFKA_CLIENT_ID,
                          KCLIENT_BROKER_TIMEOUT_MS) != RC_OK) {
        kafka_client_close(&kc);
        return false;
    }
    struct kafka_MetadataRequest rq = {.TopicsCnt = -1};
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    size_t len = 0;
    int rv = kafka_metadata_request_encode(&w, 12, &rq);
    if (rv == RC_OK) {
        rv = kafka_client_call(&kc, KAFKA_API_METADATA, 12, &w, body, &len);
    }
    writer_free(&w);
    kafka_client_close(&kc);
    if (rv != RC_OK) {
        return false;
    }
    struct reader r;
    reader_init(&r, *body, len);
    return kafka_metadata_response_decode(&r, 12, a, resp) == RC_OK;
}

void kclient_topic_ids(const rd_kafka_metadata_t *md,
                       const char *const *names, size_t n, char (*ids)[23])
{
    for (size_t i = 0; i < n; i++) {
        ids[i][0] = '\0';
    }
    for (int b = 0; b < md->broker_cnt; b++) {
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        uint8_t *body = NULL;
        struct kafka_MetadataResponse resp;
        bool ok = all_topics_v12(md->brokers[b].host, md->brokers[b].port, &a,
                                 &body, &resp);
        for (int32_t k = 0; ok && k < resp.TopicsCnt; k++) {
            const struct kafka_MetadataResponseTopic *t = &resp.Topics[k];
            for (size_t i = 0; i < n; i++) {
                if (t->ErrorCode == KAFKA_ERROR_NONE &&
                    slice_eq_str(t->Name, names[i])) {
                    struct meta_uuid u;
                    memcpy(u.b, t->TopicId.bytes, sizeof u.b);
                    meta_uuid_format(&u, ids[i]);
                }
            }
        }
        arena_free(&a);
        free(body);
        if (ok) {
            return;
        }
    }
}

/* Every broker in the cluster's metadata that answers agrees that topic
 * exists with at least partitions partitions (or does not exist) by the
 * deadline; brokers that do not answer are not waited for (one may be
 * down). */
static int wait_every_broker(rd_kafka_t *rk, const char *topic, bool exists,
                             int32_t partitions, int64_t deadline,
                             struct kclient_error *e)
{
    const rd_kafka_metadata_t *md = all_metadata(rk, e);
    if (md == NULL) {
        return RC_IO;
    }
    int rv = RC_OK;
    for (int i = 0; rv == RC_OK && i < md->broker_cnt; i++) {
        for (;;) {
            int seen = broker_lists(md->brokers[i].host, md->brokers[i].port,
                                    topic, partitions);
            if (seen == RC_IO || (exists && seen == RC_OK) ||
                (!exists && seen == RC_NOT_FOUND)) {
                break;
            }
            if (cli_clock_ns() >= deadline) {
                rv = RC_TIMEOUT;
                break;
            }
            sleep_ms(KCLIENT_POLL_MS);
        }
    }
    rd_kafka_metadata_destroy(md);
    return rv;
}

int kclient_wait_topic(rd_kafka_t *rk, const char *topic, bool exists,
                       int32_t partitions, int timeout_ms,
                       struct kclient_error *e)
{
    int64_t deadline = cli_clock_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        int32_t n = 0;
        int rv = look(rk, topic, true /* led */, &n, e);
        if ((exists && rv == RC_OK) || (!exists && rv == RC_NOT_FOUND)) {
            rv =
                wait_every_broker(rk, topic, exists, partitions, deadline, e);
            if (rv == RC_TIMEOUT) {
                kclient_error_set(e, RD_KAFKA_RESP_ERR__TIMED_OUT,
                                  exists ? "not every broker lists the topic "
                                           "with all its partitions led"
                                         : "some broker still lists it");
            }
            return rv;
        }
        if (cli_clock_ns() >= deadline) {
            if (!exists) {
                kclient_error_set(e, RD_KAFKA_RESP_ERR__TIMED_OUT,
                                  "the brokers still list the topic");
            }
            return RC_TIMEOUT;
        }
        sleep_ms(KCLIENT_POLL_MS);
    }
}

/* --- Admin --------------------------------------------------------------- */

static rd_kafka_AdminOptions_t *admin_options(rd_kafka_t *rk,
                                              rd_kafka_admin_op_t op)
{
    rd_kafka_AdminOptions_t *opts = rd_kafka_AdminOptions_new(rk, op);
    if (opts == NULL) {
        return NULL;
    }
    char why[KCLIENT_ERROR_BYTES];
    rd_kafka_resp_err_t err = rd_kafka_AdminOptions_set_request_timeout(
        opts, KCLIENT_TIMEOUT_MS, why, sizeof why);
    ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR); /* a valid constant */
    if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS ||
        op == RD_KAFKA_ADMIN_OP_DELETETOPICS ||
        op == RD_KAFKA_ADMIN_OP_CREATEPARTITIONS) {
        err = rd_kafka_AdminOptions_set_operation_timeout(
            opts, KCLIENT_TIMEOUT_MS, why, sizeof why);
        ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    return opts;
}

/* The result on q: RC_OK with *ev, else RC_TIMEOUT or RC_IO with e set. */
static int admin_result(rd_kafka_queue_t *q, rd_kafka_event_t **ev,
                        struct kclient_error *e)
{
    *ev =
        rd_kafka_queue_poll(q, KCLIENT_TIMEOUT_MS + KCLIENT__ADMIN_MARGIN_MS);
    if (*ev == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__TIMED_OUT,
                          "no answer from the cluster");
        return RC_TIMEOUT;
    }
    if (rd_kafka_event_error(*ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, rd_kafka_event_error(*ev),
                          rd_kafka_event_error_string(*ev));
        rd_kafka_event_destroy(*ev);
        *ev = NULL;
        return RC_IO;
    }
    return RC_OK;
}

int kclient_admin_call(rd_kafka_t *rk, rd_kafka_admin_op_t op,
                       rd_kafka_event_t **ev, struct kclient_error *e,
                       kclient_admin_send_cb send_cb, const void *arg)
{
    *ev = NULL;
    rd_kafka_AdminOptions_t *opts = admin_options(rk, op);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int rv = RC_NOMEM;
    kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
    if (opts != NULL && q != NULL) {
        rv = send_cb(rk, opts, q, arg, e);
    }
    if (rv == RC_OK) {
        rv = admin_result(q, ev, e);
    }
    if (q != NULL) {
        rd_kafka_queue_destroy(q);
    }
    if (opts != NULL) {
        rd_kafka_AdminOptions_destroy(opts);
    }
    return rv;
}

/* The NewTopic of t; NULL with e set. */
static rd_kafka_NewTopic_t *new_topic(const struct kclient_topic *t,
                                      struct kclient_error *e)
{
    char why[KCLIENT_ERROR_BYTES];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(
        t->name, t->partitions, t->replication_factor, why, sizeof why);
    if (nt == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__INVALID_ARG, why);
        return NULL;
    }
    for (size_t i = 0; i < t->n_configs; i++) {
        char name[KCLIENT__PROP_NAME_BYTES];
        const char *eq = strchr(t->configs[i], '=');
        ASSERT(eq != NULL); /* checked by the option parser */
        snprintf(name, sizeof name, "%.*s", (int)(eq - t->configs[i]),
                 t->configs[i]);
        rd_kafka_resp_err_t err =
            rd_kafka_NewTopic_set_config(nt, name, eq + 1);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            kclient_error_set(e, err, NULL);
            rd_kafka_NewTopic_destroy(nt);
            return NULL;
        }
    }
    return nt;
}

int kclient_admin_run(rd_kafka_t *rk, rd_kafka_admin_op_t op,
                      const char *what, kclient_admin_send_cb send_cb,
                      kclient_admin_report_cb report_cb, const void *arg)
{
    struct kclient_error e;
    rd_kafka_event_t *ev = NULL;
    if (kclient_admin_call(rk, op, &ev, &e, send_cb, arg) != RC_OK) {
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    int rc = report_cb(rk, ev, arg);
    rd_kafka_event_destroy(ev);
    return rc;
}

/* CreateTopics of one NewTopic (arg: its address). */
static int send_create_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                          rd_kafka_queue_t *q, const void *arg,
                          struct kclient_error *e)
{
    (void)e;
    rd_kafka_NewTopic_t *nt = *(rd_kafka_NewTopic_t *const *)arg;
    rd_kafka_CreateTopics(rk, &nt, 1, opts, q);
    return RC_OK;
}

/* The one topic result of a CreateTopics event. */
static int create_result(rd_kafka_event_t *ev, struct kclient_error *e)
{
    size_t n = 0;
    const rd_kafka_topic_result_t **rs = rd_kafka_CreateTopics_result_topics(
        rd_kafka_event_CreateTopics_result(ev), &n);
    if (n != 1) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__BAD_MSG,
                          "unexpected answer from the cluster");
        return RC_IO;
    }
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(rs[0]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        return RC_OK;
    }
    kclient_error_set(e, err, rd_kafka_topic_result_error_string(rs[0]));
    return err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS ? RC_EXISTS : RC_IO;
}

int kclient_create_topic(rd_kafka_t *rk, const struct kclient_topic *t,
                         struct kclient_error *e)
{
    rd_kafka_NewTopic_t *nt = new_topic(t, e);
    if (nt == NULL) {
        return RC_INVALID;
    }
    rd_kafka_event_t *ev = NULL;
    int rv = kclient_admin_call(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, &ev, e,
                                send_create_cb, &nt);
    if (rv == RC_OK) {
        rv = create_result(ev, e);
    }
    rd_kafka_event_destroy(ev); /* NULL is allowed */
    rd_kafka_NewTopic_destroy(nt);
    return rv;
}
