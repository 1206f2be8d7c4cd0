/* Why records of `cairn produce` failed (cli/cmd/produce_why.h). */
#include "cli/cmd/produce_why.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/client/kclient.h"
#include "cli/util/cli.h"
#include "common/limits.h"
#include "common/rc.h"

/* librdkafka's level of debug lines (syslog's LOG_DEBUG). */
#define PRODUCE_WHY__LOG_DEBUG 7

/* An admin result may come this long after its request timeout. */
#define PRODUCE_WHY__MARGIN_MS 1000

/* "1,2,3": replica ids, at most META_REPLICAS_MAX of them shown. */
#define PRODUCE_WHY__IDS_BYTES (META_REPLICAS_MAX * 12 + 1)

void produce_why_init(struct produce_why *w, const char *topic)
{
    *w = (struct produce_why){.topic = topic};
    int rv = pthread_mutex_init(&w->lock, NULL);
    ASSERT(rv == 0);
}

int produce_why_start(struct produce_why *w, int32_t n)
{
    ASSERT(n >= 0);
    struct produce_why_error *last = calloc((size_t)n + 1, sizeof *last);
    bool *failed = calloc((size_t)n + 1, sizeof *failed);
    if (last == NULL || failed == NULL) {
        free(last);
        free(failed);
        return RC_NOMEM;
    }
    pthread_mutex_lock(&w->lock);
    ASSERT(w->last == NULL);
    w->last = last;
    w->failed = failed;
    w->n_partitions = n;
    pthread_mutex_unlock(&w->lock);
    return RC_OK;
}

void produce_why_destroy(struct produce_why *w)
{
    free(w->last);
    free(w->failed);
    pthread_mutex_destroy(&w->lock);
}

/* The code whose librdkafka description (rd_kafka_err2str) is
 * text[0..len). */
static bool err_by_description(const char *text, size_t len,
                               rd_kafka_resp_err_t *err)
{
    const struct rd_kafka_err_desc *descs = NULL;
    size_t n = 0;
    rd_kafka_get_err_descs(&descs, &n);
    for (size_t i = 0; i < n; i++) {
        const char *d = descs[i].desc;
        if (d != NULL && strlen(d) == len && memcmp(d, text, len) == 0) {
            *err = descs[i].code;
            return true;
        }
    }
    return false;
}

/* librdkafka 2.0's line (rd_kafka_handle_Produce_error, facility MSGSET):
 *   "[thrd:HOST:PORT/ID]: HOST:PORT/ID: TOPIC [P]: MessageSet with N
 *   message(s) (MsgId M, BaseSeq S) encountered error: TEXT (actions A)"
 * where TEXT is rd_kafka_err2str() of the broker's error. */
bool produce_why_parse(const char *line, const char *topic,
                       int32_t *partition, int32_t *broker_id,
                       rd_kafka_resp_err_t *err)
{
    static const char marker[] = " encountered error: ";
    const char *at = strstr(line, marker);
    char needle[META_TOPIC_NAME_BYTES_MAX + 8];
    int len = snprintf(needle, sizeof needle, ": %s [", topic);
    if (at == NULL || len < 0 || (size_t)len >= sizeof needle) {
        return false;
    }
    const char *t = strstr(line, needle);
    if (t == NULL || t > at) {
        return false;
    }
    char *end = NULL;
    long p = strtol(t + len, &end, 10);
    if (end == t + len || *end != ']' || p < 0 || p > INT32_MAX) {
        return false;
    }
    *partition = (int32_t)p;
    /* The broker's name, "HOST:PORT/ID", ends where the topic starts. */
    const char *q = t;
    while (q > line && q[-1] != '/' && q[-1] != ' ') {
        q--;
    }
    long id = q > line && q[-1] == '/' ? strtol(q, &end, 10) : -1;
    *broker_id = id >= 0 && id <= INT32_MAX && end == t ? (int32_t)id : -1;
    const char *text = at + sizeof marker - 1;
    const char *stop = strstr(text, " (actions ");
    return err_by_description(
        text, stop != NULL ? (size_t)(stop - text) : strlen(text), err);
}

void produce_why_note(struct produce_why *w, int level, const char *fac,
                      const char *line)
{
    int32_t p = -1;
    int32_t id = -1;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (level != PRODUCE_WHY__LOG_DEBUG || strcmp(fac, "MSGSET") != 0 ||
        !produce_why_parse(line, w->topic, &p, &id, &err)) {
        return;
    }
    pthread_mutex_lock(&w->lock);
    if (w->last != NULL && p < w->n_partitions) {
        w->last[p] = (struct produce_why_error){err, id};
    }
    pthread_mutex_unlock(&w->lock);
}

struct produce_why_error produce_why_failed(struct produce_why *w,
                                            int32_t partition)
{
    struct produce_why_error e = {RD_KAFKA_RESP_ERR_NO_ERROR, -1};
    pthread_mutex_lock(&w->lock);
    if (w->last != NULL && partition >= 0 && partition < w->n_partitions) {
        e = w->last[partition];
        w->failed[partition] = true;
    }
    pthread_mutex_unlock(&w->lock);
    return e;
}

/* --- Explanation ---------------------------------------------------------- */

static bool isr_too_small(rd_kafka_resp_err_t err)
{
    return err == RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS ||
           err == RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
}

static void format_ids(const int32_t *ids, int n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && i < META_REPLICAS_MAX; i++) {
        int k = snprintf(out + used, cap - used, "%s%" PRId32,
                         i > 0 ? "," : "", ids[i]);
        if (k < 0 || (size_t)k >= cap - used) {
            return;
        }
        used += (size_t)k;
    }
}

/* min.insync.replicas of res's entries into *v; false when not listed. */
static bool min_insync_of(const rd_kafka_ConfigResource_t *res, int32_t *v)
{
    size_t n = 0;
    const rd_kafka_ConfigEntry_t **es =
        rd_kafka_ConfigResource_configs(res, &n);
    for (size_t i = 0; i < n; i++) {
        const char *value = rd_kafka_ConfigEntry_value(es[i]);
        if (strcmp(rd_kafka_ConfigEntry_name(es[i]), "min.insync.replicas") ==
                0 &&
            value != NULL) {
            return cli_parse_int32(value, 1, INT32_MAX, v);
        }
    }
    return false;
}

/* The topic's min.insync.replicas, else the leader's: one DescribeConfigs
 * (both resources go to the leader). "" in *whose when neither came. */
static int32_t describe_min_insync(rd_kafka_t *rk, const char *topic,
                                   int32_t leader, const char **whose)
{
    rd_kafka_ConfigResource_t *res[2];
    size_t n = 0;
    char id[16];
    res[n++] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
    if (leader >= 0) {
        snprintf(id, sizeof id, "%" PRId32, leader);
        res[n++] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_BROKER, id);
    }
    rd_kafka_AdminOptions_t *opts =
        rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int32_t v = -1;
    *whose = "";
    if (opts != NULL && q != NULL && res[0] != NULL &&
        (n == 1 || res[1] != NULL)) {
        (void)rd_kafka_AdminOptions_set_request_timeout(
            opts, PRODUCE_WHY_TIMEOUT_MS, NULL, 0);
        rd_kafka_DescribeConfigs(rk, res, n, opts, q);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(
            q, PRODUCE_WHY_TIMEOUT_MS + PRODUCE_WHY__MARGIN_MS);
        const rd_kafka_DescribeConfigs_result_t *r =
            ev != NULL ? rd_kafka_event_DescribeConfigs_result(ev) : NULL;
        size_t cnt = 0;
        const rd_kafka_ConfigResource_t **rs =
            r != NULL ? rd_kafka_DescribeConfigs_result_resources(r, &cnt)
                      : NULL;
        for (size_t i = 0; i < cnt && v < 0; i++) {
            bool is_topic = rd_kafka_ConfigResource_type(rs[i]) ==
                            RD_KAFKA_RESOURCE_TOPIC;
            if (rd_kafka_ConfigResource_error(rs[i]) == 0 &&
                min_insync_of(rs[i], &v)) {
                *whose = is_topic ? "the topic's" : "the leader's";
            }
        }
        if (ev != NULL) {
            rd_kafka_event_destroy(ev);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (res[i] != NULL) {
            rd_kafka_ConfigResource_destroy(res[i]);
        }
    }
    if (q != NULL) {
        rd_kafka_queue_destroy(q);
    }
    if (opts != NULL) {
        rd_kafka_AdminOptions_destroy(opts);
    }
    return v;
}

/* One partition's line: its ISR against min.insync.replicas. */
static void explain_partition(struct produce_why *w, rd_kafka_t *rk,
                              const rd_kafka_metadata_partition_t *mp,
                              rd_kafka_resp_err_t err)
{
    char isr[PRODUCE_WHY__IDS_BYTES];
    char replicas[PRODUCE_WHY__IDS_BYTES];
    format_ids(mp->isrs, mp->isr_cnt, isr, sizeof isr);
    format_ids(mp->replicas, mp->replica_cnt, replicas, sizeof replicas);
    const char *whose = "";
    int32_t min = describe_min_insync(rk, w->topic, mp->leader, &whose);
    if (min > 0 && mp->isr_cnt < min) {
        cli_error("produce %s: partition %" PRId32 ": %s: ISR %s (%d of "
                  "replicas %s) is below min.insync.replicas=%" PRId32
                  " (%s)",
                  w->topic, mp->id, kclient_err_name(err), isr, mp->isr_cnt,
                  replicas, min, whose);
        return;
    }
    char min_text[32] = "unknown";
    if (min > 0) {
        snprintf(min_text, sizeof min_text, "%" PRId32, min);
    }
    cli_error("produce %s: partition %" PRId32 ": %s: ISR now %s (%d of "
              "replicas %s), min.insync.replicas %s",
              w->topic, mp->id, kclient_err_name(err), isr, mp->isr_cnt,
              replicas, min_text);
}

void produce_why_explain(struct produce_why *w, rd_kafka_t *rk)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, w->topic, NULL);
    const rd_kafka_metadata_t *md = NULL;
    if (rkt == NULL ||
        rd_kafka_metadata(rk, 0, rkt, &md, PRODUCE_WHY_TIMEOUT_MS) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        md->topic_cnt != 1) {
        goto out;
    }
    int shown = 0;
    const rd_kafka_metadata_topic_t *t = &md->topics[0];
    for (int i = 0; i < t->partition_cnt; i++) {
        const rd_kafka_metadata_partition_t *mp = &t->partitions[i];
        struct produce_why_error e = {RD_KAFKA_RESP_ERR_NO_ERROR, -1};
        pthread_mutex_lock(&w->lock);
        if (mp->id >= 0 && mp->id < w->n_partitions && w->failed[mp->id]) {
            e = w->last[mp->id];
        }
        pthread_mutex_unlock(&w->lock);
        if (isr_too_small(e.err) && shown++ < PRODUCE_WHY_PARTITIONS_SHOWN) {
            explain_partition(w, rk, mp, e.err);
        }
    }
out:
    if (md != NULL) {
        rd_kafka_metadata_destroy(md);
    }
    if (rkt != NULL) {
        rd_kafka_topic_destroy(rkt);
    }
}
