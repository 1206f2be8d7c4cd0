/* The broker's Prometheus text (`GET /metrics` on metrics.port): Kafka's
 * JMX metric names as the Prometheus JMX exporter spells them where Kafka
 * has one, cairn_* where it does not. Rendered on the loop thread from
 * the live state; nothing is kept for it but the ISR change counters. */
#include "broker/broker.h"

#include <stdio.h>

#include "broker/kafka/kafka_server.h"
#include "broker/replication/partition.h"
#include "common/net/http_metrics.h"

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

void broker_metrics_render(void *arg, struct writer *w)
{
    struct broker *b = arg;
    const struct replica_manager *ps = &b->partitions;
    size_t leaders = 0, under = 0, under_min = 0, offline_dirs = 0;
    for (size_t i = 0; i < ps->n; i++) {
        const struct partition *p = ps->parts[i];
        if (!partition_is_leader(p)) {
            continue;
        }
        leaders++;
        under += p->isr.n < p->replicas.n;
        under_min += p->isr.n < p->repl.min_isr;
    }
    offline_dirs = ps->dir_failed ? 1 : 0;
    gauge(w, "kafka_server_replicamanager_partitioncount",
          "partitions hosted here", (double)ps->n);
    gauge(w, "kafka_server_replicamanager_leadercount",
          "partitions led here", (double)leaders);
    gauge(w, "kafka_server_replicamanager_underreplicatedpartitions",
          "partitions led here whose ISR is smaller than their replicas",
          (double)under);
    gauge(w, "kafka_server_replicamanager_underminisrpartitioncount",
          "partitions led here whose ISR is below min.insync.replicas "
          "(their HW is stalled)", (double)under_min);
    gauge(w, "kafka_log_logmanager_offlinelogdirectorycount",
          "log directories that failed", (double)offline_dirs);
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
    }
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
