/* What `cairn size --topic T` learns from the cluster: the topic's
 * replication factor and retention (its retention.ms, else Kafka's default
 * of 7 days), the number of registered brokers, and its current rate,
 * measured as the growth of the sum of its partitions' high watermarks
 * over a sample window (ListOffsets to each leader, cli/client/health.h, at the
 * start and the end). One thread. */
#ifndef CAIRN_CLI_SIZE_TOPIC_H
#define CAIRN_CLI_SIZE_TOPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "common/assert.h"

/* Kafka's retention.ms default (log.retention.hours=168). */
#define SIZE_TOPIC_RETENTION_DEFAULT_MS (168LL * 3600 * 1000)

struct size_topic {
    int32_t replication_factor;
    int32_t brokers;
    int64_t retention_ms; /* -1: kept forever (retention.ms=-1) */
    bool retention_set;   /* by the topic, not Kafka's default */
    int64_t records;      /* HW growth over the window */
    int64_t window_ms;
    double rate; /* records per second */
};

/* Asks the controllers (voters "id@host:port,...") and the brokers. 0 on
 * success; else 1 after saying why on stderr (no such topic, no metadata,
 * a partition whose HW is unknown at either end). */
MUST_CHECK int size_topic_measure(const char *controllers, const char *topic,
                                  int64_t sample_ms, struct size_topic *out);

#endif
