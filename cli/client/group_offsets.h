/* Every committed offset of a consumer group, for `cairn groups describe`
 * (cli/cmd/groups/groups_describe.c): one OffsetFetch with a null topic array
 * (Kafka's "every partition the group has an offset for") sent to the
 * group's coordinator through common/kafka/kafka_client.h.
 *
 * Why not librdkafka: rd_kafka_ListConsumerGroupOffsets() without a
 * partition list means the same, but librdkafka before 2.3.0 (Debian
 * ships 2.0.2) writes an empty topic array instead of a null one when
 * the broker's OffsetFetch is below v6 (flexible), as Cairn's (v1..5) and
 * Kafka's before 2.4 are; the answer to an empty array is, rightly,
 * empty (librdkafka #4346, "Fix ListConsumerGroupOffsets not fetching
 * offsets for all the topics in a group with Apache Kafka version below
 * 2.4.0"). Asking for an explicit list instead would need every
 * partition of every topic in one request.
 *
 * One thread; the result owns its strings. */
#ifndef CAIRN_CLI_GROUP_OFFSETS_H
#define CAIRN_CLI_GROUP_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/client/kclient.h"
#include "common/assert.h"

/* OffsetFetch v5: the newest the codec (and Cairn's brokers) speak, and
 * what every Kafka since 2.1 takes. */
#define GROUP_OFFSETS_VERSION 5

struct group_offset {
    const char *topic; /* points into the result's topics */
    int32_t partition;
    int64_t committed;  /* -1: none */
    int16_t error_code; /* Kafka's, for this partition */
};

struct group_offsets {
    struct group_offset *v; /* in the coordinator's order */
    size_t n;
    char **topics; /* each topic name once, malloc'd */
    size_t n_topics;
};

/* The committed offsets of group from its coordinator at host:port,
 * within timeout_ms. RC_OK; RC_IO when the coordinator failed or
 * answered with a group-level error (e says which: Kafka's code, or
 * _TRANSPORT with the connection's failure); RC_NOMEM. out is empty
 * (but must still be freed) on failure. */
MUST_CHECK int group_offsets_fetch(const char *host, int32_t port,
                                   const char *group, uint64_t timeout_ms,
                                   struct group_offsets *out,
                                   struct kclient_error *e);

void group_offsets_free(struct group_offsets *go);

#endif
