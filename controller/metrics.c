/* The controller's Prometheus text (`GET /metrics` on metrics.port):
 * Kafka's controller metric names where Kafka has one. Every controller
 * answers from the metadata image it has applied; only the active one
 * counts itself in ActiveControllerCount, so the sum over the quorum is 1
 * when all is well. */
#include <stdio.h>

#include "common/net/http_metrics.h"
#include "controller/controller_internal.h"

static void gauge(struct writer *w, const char *name, const char *help,
                  double v)
{
    http_metrics_one(w, name, "gauge", help, v);
}

void controller_metrics_render(void *arg, struct writer *w)
{
    struct controller **cp = arg;
    const struct controller *c = *cp;
    if (c == NULL) {
        return; /* stopping */
    }
    const struct meta_image *img = &c->fsm.image;
    size_t partitions = 0, offline = 0, fenced = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        for (int32_t p = 0; p < img->topics[t].n_partitions; p++) {
            partitions++;
            offline += img->topics[t].partitions[p].leader == META_NO_LEADER;
        }
    }
    for (size_t i = 0; i < img->n_brokers; i++) {
        fenced += img->brokers[i].fenced;
    }
    gauge(w, "kafka_controller_kafkacontroller_activecontrollercount",
          "1 on the active controller, else 0", c->active ? 1 : 0);
    gauge(w, "kafka_controller_kafkacontroller_globaltopiccount",
          "topics in the metadata", (double)img->n_topics);
    gauge(w, "kafka_controller_kafkacontroller_globalpartitioncount",
          "partitions in the metadata", (double)partitions);
    gauge(w, "kafka_controller_kafkacontroller_offlinepartitionscount",
          "partitions without a leader", (double)offline);
    gauge(w, "kafka_controller_kafkacontroller_fencedbrokercount",
          "registered brokers that are fenced", (double)fenced);
    gauge(w, "kafka_controller_kafkacontroller_activebrokercount",
          "registered brokers that are not fenced",
          (double)(img->n_brokers - fenced));
    gauge(w, "kafka_server_raftmetrics_current_epoch",
          "the Raft term this controller is in",
          (double)c->raft.current_term);
    gauge(w, "cairn_controller_metadata_offset",
          "offset of the last metadata record applied here",
          (double)img->offset);
    http_metrics_one(w, "cairn_controller_proposals_total", "counter",
                     "entries this controller proposed to the Raft log",
                     (double)c->n_proposals);
    http_metrics_one(w, "cairn_controller_alter_partition_requests_total",
                     "counter",
                     "AlterPartition requests planned (several "
                     "queued from one leader share a proposal)",
                     (double)c->n_alter_requests);
    http_metrics_one(w, "cairn_controller_heartbeats_at_once_total",
                     "counter",
                     "broker heartbeats that changed nothing, answered "
                     "ahead of the queue",
                     (double)c->n_heartbeats_at_once);
    gauge(w, "cairn_controller_queue_length",
          "requests waiting for their turn (one proposal at a time)",
          (double)c->queue_len);
}
