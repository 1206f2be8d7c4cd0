/* Partition health for `cairn status`: each partition's high watermark,
 * each replica's log end offset, the min.insync.replicas it is held to,
 * and the flags that follow. The offsets are asked of the brokers over
 * the Kafka protocol (common/kafka/kafka_client.h), Kafka's own way:
 *
 *   HW              ListOffsets, ReplicaId -1, Timestamp -1 (latest),
 *                   to the partition's leader
 *   log end offset  ListOffsets, ReplicaId -2 (Kafka's debugging replica
 *                   id: any replica answers, with its log end), Timestamp
 *                   -1, to each replica
 *   min.insync.replicas where a topic does not set it: DescribeConfigs of
 *                   the broker resource (type 4, the broker's id), asked
 *                   of each broker in turn until one names a value; else
 *                   Kafka's default, 1
 *
 * One connection per broker, one ListOffsets of each kind carrying every
 * partition it hosts (or leads), the brokers one after another, each
 * bounded by HEALTH_BROKER_TIMEOUT_MS: a killed broker refuses at once, a
 * paused or partitioned one costs that long. A broker that does not answer
 * leaves its offsets unknown (-1); nothing it does is an error of ours.
 *
 * The flags come from the metadata image alone:
 *   offline           no leader
 *   under_replicated  ISR smaller than the replica set
 *   under_min_isr     ISR smaller than min_isr, which is min.insync.replicas
 *                     capped at the number of replicas, as the brokers
 *                     enforce it for acks=all (broker/replication/isr.c)
 *   at_min_isr        ISR exactly min_isr (kafka-topics --describe
 *                     --at-min-isr-partitions): acks=all writes still
 *                     succeed, and one more replica out stops them
 *
 * A struct health borrows the image it was gathered from; it stays valid
 * while the image is unchanged. One thread. */
#ifndef CAIRN_CLI_HEALTH_H
#define CAIRN_CLI_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kafka/kafka_client.h"
#include "common/assert.h"
#include "common/meta/meta.h"

/* The budget of one broker's connection and all its requests. */
#define HEALTH_BROKER_TIMEOUT_MS 2000u

/* A broker's error: the client's, or a Kafka error name and a partition. */
#define HEALTH_ERROR_BYTES                                                   \
    (KAFKA_CLIENT_ERROR_BYTES + META_TOPIC_NAME_BYTES_MAX + 64)

/* Kafka's default min.insync.replicas, used when no broker names its own. */
#define HEALTH_MIN_INSYNC_DEFAULT 1

struct health_partition {
    int64_t hw;                             /* -1: unknown */
    int64_t end_offsets[META_REPLICAS_MAX]; /* of replicas.ids[i]; -1:
                                               unknown */
    int32_t min_isr;
    bool offline;
    bool under_replicated;
    bool under_min_isr;
    bool at_min_isr;
};

struct health_broker {
    bool asked;     /* it hosts a partition, or min.insync.replicas was
                       still unknown when its turn came */
    bool reachable; /* asked, and answered every request */
    char error[HEALTH_ERROR_BYTES]; /* why not, or a partition's error;
                                       "" none */
};

struct health {
    const struct meta_image *img;        /* borrowed */
    struct health_partition *partitions; /* every topic's, in image order */
    size_t *first;                       /* per image topic: its first index
                                          in partitions */
    struct health_broker *brokers;       /* as img->brokers */
    int32_t min_insync_default;          /* for topics that set none */
    int32_t min_insync_from;             /* broker id that named it; -1:
                                          Kafka's default */
};

/* Asks the brokers of img and fills h, which the caller frees with
 * health_free() whatever the result. RC_OK (brokers that did not answer
 * are noted in h->brokers) or RC_NOMEM. */
MUST_CHECK int health_gather(struct health *h, const struct meta_image *img);

/* The health of partition id of topic t, which must belong to h's image. */
const struct health_partition *health_partition(const struct health *h,
                                                const struct meta_topic *t,
                                                int32_t id);

/* The health entry of the image's broker at b. */
const struct health_broker *health_broker(const struct health *h,
                                          const struct meta_broker *b);

void health_free(struct health *h);

#endif
