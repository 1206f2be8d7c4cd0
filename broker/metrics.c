/* The broker's Prometheus text (`GET /metrics` on metrics.port): Kafka's
 * JMX metric names as the Prometheus JMX exporter spells them where Kafka
 * has one, cairn_* where it does not. Rendered on the loop thread from
 * the live state; nothing is kept for it but counters and histograms.
 * Also the coordinated groups as JSON, for the cluster page. */
#include "broker/broker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/group/group.h"
#include "broker/kafka/kafka_server.h"
#include "broker/replication/partition.h"
#include "common/json.h"
#include "common/kafka/consumer_assignment.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/net/http_metrics.h"
#include "common/rc.h"

static void gauge(struct writer *w, const char *name, const char *help,
                  double v)
{
    http_metrics_one(w, name, "gauge", help, v);
}

static void counter(struct writer *w, const char *name, const char *help,
                    double v)
{
    http_metrics_one(w, name, "counter", help, v);
}

/* Per API: the time from reading a request to queuing its answer. */
static void request_times(struct writer *w, const struct broker *b)
{
    static const char name[] = "kafka_network_requestmetrics_totaltimems";
    const struct http_metrics_hist *h = kafka_server_request_times(b->kafka);
    http_metrics_family(w, name, "histogram",
                        "ms from reading a request to its answer being "
                        "queued, per API");
    for (int16_t key = 0; key < KAFKA_SERVER_API_KEYS; key++) {
        const struct kafka_api *api = kafka_api_find(key);
        if (h[key].n == 0) {
            continue;
        }
        char labels[64];
        snprintf(labels, sizeof labels, "request=\"%s\"",
                 api != NULL ? api->name : "unknown");
        http_metrics_histogram(w, name, labels, &h[key]);
    }
}

/* Produce answers per ErrorCode, failed ones, and those waiting. */
static void produce_errors(struct writer *w, const struct broker *b)
{
    static const char name[] = "kafka_network_requestmetrics_errors_total";
    http_metrics_family(w, name, "counter",
                        "Produce partition answers per ErrorCode (NONE "
                        "included), as Kafka's ErrorsPerSec");
    for (int code = -1; code < BROKER_ERROR_SLOTS - 1; code++) {
        uint64_t n = b->produce_errors[code + 1];
        if (n == 0) {
            continue;
        }
        char labels[96];
        snprintf(labels, sizeof labels, "request=\"Produce\",error=\"%s\"",
                 kafka_error_name((int16_t)code));
        http_metrics_sample(w, name, labels, (double)n);
    }
    counter(w, "kafka_server_brokertopicmetrics_failedproducerequests_total",
            "Produce partition answers with an error (refused, failed "
            "after the append, timed out)", (double)b->produce_failed);
    static const char purgatory[] =
        "kafka_server_delayedoperationpurgatory_purgatorysize";
    http_metrics_family(w, purgatory, "gauge",
                        "Produce requests waiting for their acks (acks=all: "
                        "the high watermark; acks=1: the fsync)");
    http_metrics_sample(w, purgatory, "delayedOperation=\"Produce\"",
                        (double)b->produce_waiting);
}

/* Every log's group-commit syncs, as one histogram. */
static void sync_times(struct writer *w)
{
    static const char name[] = "kafka_log_logflushstats_logflushrateandtimems";
    http_metrics_family(w, name, "histogram",
                        "ms each log sync (fdatasync of the dirty segments, "
                        "group commit) took, every hosted partition");
    http_metrics_histogram(w, name, NULL, log_sync_times());
}

/* The committed offset and lag (HW - committed) of every group this
 * broker coordinates, on the partitions it hosts (their HW is known here:
 * the leader's, or a follower's copy of it). */
static void consumer_lag(struct writer *w, struct broker *b)
{
    static const char committed[] = "cairn_consumergroup_committed_offset";
    static const char lag[] = "cairn_consumergroup_lag";
    const struct groups *gs = &b->coordinator.groups;
    http_metrics_family(w, committed, "gauge",
                        "a group's committed offset (groups coordinated "
                        "here, partitions hosted here)");
    char labels[1200];
    char group[512];
    char topic[META_TOPIC_NAME_BYTES_MAX * 2 + 1];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            http_metrics_family(w, lag, "gauge",
                                "a group's lag: the partition's high "
                                "watermark minus its committed offset");
        }
        for (size_t g = 0; g < gs->n; g++) {
            const struct group *gr = gs->v[g];
            http_metrics_label_value((const char *)gr->id.ptr, gr->id.len,
                                     group, sizeof group);
            for (size_t k = 0; k < gr->n_offsets; k++) {
                const struct group_offset *o = &gr->offsets[k];
                struct partition *p = broker_partition(b, o->topic,
                                                       o->partition);
                if (p == NULL || p->log == NULL) {
                    continue;
                }
                http_metrics_label_value((const char *)o->topic.ptr,
                                         o->topic.len, topic, sizeof topic);
                snprintf(labels, sizeof labels, "group=\"%s\",topic=\"%s\","
                         "partition=\"%d\"", group, topic,
                         (int)o->partition);
                if (pass == 0) {
                    http_metrics_sample(w, committed, labels,
                                        (double)o->offset);
                } else {
                    int64_t l = p->hw - o->offset;
                    http_metrics_sample(w, lag, labels,
                                        (double)(l > 0 ? l : 0));
                }
            }
        }
    }
}

/* Each hosted partition's log end offset and, for those led here, its
 * high watermark. */
static void partition_offsets(struct writer *w,
                              const struct replica_manager *ps)
{
    http_metrics_family(w, "kafka_log_log_logendoffset", "gauge",
                        "each hosted partition's log end offset");
    char labels[META_TOPIC_NAME_BYTES_MAX + 64];
    for (size_t i = 0; i < ps->n; i++) {
        const struct partition *p = ps->parts[i];
        if (p->log == NULL) {
            continue;
        }
        snprintf(labels, sizeof labels, "topic=\"%s\",partition=\"%d\"",
                 p->topic, (int)p->id);
        http_metrics_sample(w, "kafka_log_log_logendoffset", labels,
                            (double)log_end_offset(p->log));
    }
    http_metrics_family(w, "cairn_partition_high_watermark", "gauge",
                        "each partition led here: its high watermark");
    for (size_t i = 0; i < ps->n; i++) {
        const struct partition *p = ps->parts[i];
        if (!partition_is_leader(p)) {
            continue;
        }
        snprintf(labels, sizeof labels, "topic=\"%s\",partition=\"%d\"",
                 p->topic, (int)p->id);
        http_metrics_sample(w, "cairn_partition_high_watermark", labels,
                            (double)p->hw);
    }
}

/* The logs' descriptor budget and the fetch sessions. */
static void files_and_sessions(struct writer *w, const struct broker *b)
{
    gauge(w, "cairn_log_open_segment_files",
          "segment files open (log.fds.max bounds them)",
          (double)log_fds_open());
    counter(w, "cairn_log_reopens_total",
            "logs whose files were opened again after being parked",
            (double)log_fds_reopens());
    counter(w, "cairn_log_parks_total",
            "logs parked (files closed) to keep within log.fds.max",
            (double)log_fds_parks());
    counter(w, "cairn_loop_stalls_total",
            "times the event loop stood still for a second or more",
            (double)b->loop_watch.stalls);
    gauge(w, "cairn_loop_stall_max_ms",
          "the longest the event loop stood still, in ms",
          (double)b->loop_watch.max_ms);
    gauge(w, "kafka_server_fetchsessioncache_numincrementalfetchsessions",
          "incremental fetch sessions (KIP-227)",
          (double)b->fetch_sessions.n);
    gauge(w, "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
          "partitions held by the fetch sessions",
          (double)b->fetch_sessions.partitions);
    counter(w, "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total",
            "fetch sessions evicted", (double)b->fetch_sessions.evictions);
}

/* Every series but the per-partition and per-group ones when !all. */
static void render(struct broker *b, struct writer *w, bool all)
{
    const struct replica_manager *ps = &b->partitions;
    double leaders = (double)ps->counts.leaders;
    double under = (double)ps->counts.under_replicated;
    double under_min = (double)ps->counts.under_min_isr;
    size_t offline_dirs = ps->dir_failed ? 1 : 0;
    gauge(w, "kafka_server_replicamanager_partitioncount",
          "partitions hosted here", (double)ps->n);
    gauge(w, "kafka_server_replicamanager_leadercount",
          "partitions led here", leaders);
    gauge(w, "kafka_server_replicamanager_underreplicatedpartitions",
          "partitions led here whose ISR is smaller than their replicas",
          under);
    gauge(w, "kafka_server_replicamanager_underminisrpartitioncount",
          "partitions led here whose ISR is below min.insync.replicas "
          "(their HW is stalled)", under_min);
    gauge(w, "kafka_log_logmanager_offlinelogdirectorycount",
          "log directories that failed", (double)offline_dirs);
    files_and_sessions(w, b);
    counter(w, "kafka_server_replicamanager_isrshrinks_total",
            "ISR shrinks this broker proposed and the controller committed",
            (double)b->isr_shrinks);
    counter(w, "kafka_server_replicamanager_isrexpands_total",
            "ISR expansions this broker proposed and the controller "
            "committed", (double)b->isr_expands);
    if (b->kafka != NULL) {
        struct kafka_server_stats st;
        kafka_server_get_stats(b->kafka, &st);
        gauge(w, "kafka_server_socketserver_connections",
              "open client and replica connections", (double)st.conns_open);
        counter(w, "kafka_network_requestmetrics_requests_total",
                "requests read", (double)st.requests);
        counter(w, "kafka_server_brokertopicmetrics_bytesout_total",
                "record bytes sent to consumers and followers",
                (double)(st.sendfile_bytes + st.copy_bytes));
        request_times(w, b);
    }
    counter(w, "kafka_server_brokertopicmetrics_bytesin_total",
            "record bytes appended from producers", (double)b->bytes_in);
    counter(w, "kafka_server_brokertopicmetrics_messagesin_total",
            "records appended from producers", (double)b->messages_in);
    counter(w, "kafka_server_brokertopicmetrics_replicationbytesin_total",
            "record bytes appended as a follower",
            (double)ps->host.replication_bytes_in);
    produce_errors(w, b);
    sync_times(w);
    if (all) {
        consumer_lag(w, b);
        partition_offsets(w, ps);
    }
}

void broker_metrics_render(void *arg, struct writer *w)
{
    render(arg, w, true);
}

void broker_metrics_summary_render(void *arg, struct writer *w)
{
    render(arg, w, false);
}

/* A slice as a JSON string (NUL-terminated copy, cut at 1 KiB). */
static void json_slice(struct json *j, struct slice s)
{
    char buf[1024];
    size_t n = s.len < sizeof buf - 1 ? s.len : sizeof buf - 1;
    if (n > 0) {
        memcpy(buf, s.ptr, n);
    }
    buf[n] = '\0';
    json_string(j, buf);
}

static void group_json(struct json *j, struct broker *b, const struct group *g)
{
    json_object_begin(j);
    json_key(j, "id");
    json_slice(j, g->id);
    json_key(j, "state");
    json_string(j, group_state_name(g));
    json_key(j, "generation");
    json_int(j, g->generation_id);
    json_key(j, "protocol");
    json_slice(j, g->protocol_name);
    json_key(j, "members");
    json_array_begin(j);
    for (size_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        char assigned[512];
        json_object_begin(j);
        json_key(j, "member_id");
        json_slice(j, m->member_id);
        json_key(j, "client_id");
        json_slice(j, m->client_id);
        json_key(j, "host");
        json_slice(j, m->client_host);
        json_key(j, "client_software");
        json_slice(j, m->client_software);
        json_key(j, "assignment");
        int rc = consumer_assignment_format(m->assignment.ptr,
                                            m->assignment.len, assigned,
                                            sizeof assigned);
        (void)rc; /* "?" says the bytes were not an assignment */
        json_string(j, assigned);
        json_object_end(j);
    }
    json_array_end(j);
    json_key(j, "offsets");
    json_array_begin(j);
    for (size_t k = 0; k < g->n_offsets; k++) {
        const struct group_offset *o = &g->offsets[k];
        const struct partition *p = broker_partition(b, o->topic,
                                                     o->partition);
        bool known = p != NULL && p->log != NULL;
        json_object_begin(j);
        json_key(j, "topic");
        json_slice(j, o->topic);
        json_key(j, "partition");
        json_int(j, o->partition);
        json_key(j, "committed");
        json_int(j, o->offset);
        json_key(j, "hw");
        json_int_or_null(j, known, known ? p->hw : -1);
        json_key(j, "lag");
        json_int_or_null(j, known, known && p->hw > o->offset
                                       ? p->hw - o->offset
                                       : 0);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

void broker_groups_render(void *arg, struct writer *w)
{
    struct broker *b = arg;
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    if (f == NULL) {
        w->rc = RC_NOMEM;
        return;
    }
    struct json j;
    json_init(&j, f);
    json_object_begin(&j);
    json_key(&j, "broker");
    json_int(&j, b->id);
    json_key(&j, "groups");
    json_array_begin(&j);
    const struct groups *gs = &b->coordinator.groups;
    for (size_t i = 0; i < gs->n; i++) {
        group_json(&j, b, gs->v[i]);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    if (fclose(f) != 0) {
        free(doc);
        w->rc = RC_NOMEM;
        return;
    }
    writer_raw(w, doc, len);
    free(doc);
}
