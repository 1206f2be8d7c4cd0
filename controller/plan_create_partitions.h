/* CreatePartitions planning: more partitions for existing topics, with
 * Kafka's checks and errors (its ReplicationControlManager and
 * ControllerApis.createPartitions). Pure and deterministic, like the
 * rest of the planner (controller/plan.h holds the contract with the
 * glue); loop thread of the active controller. */
#ifndef CAIRN_CONTROLLER_PLAN_CREATE_PARTITIONS_H
#define CAIRN_CONTROLLER_PLAN_CREATE_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"
#include "controller/plan.h"

/* The internal topic whose partition count maps group ids to their
 * coordinators; growing it would move every group's offsets away. */
#define PLAN_OFFSETS_TOPIC "__consumer_offsets"

/* One new partition's replicas, in preference order, as the client sent
 * them (not yet checked). */
struct plan_assignment {
    const int32_t *broker_ids;
    size_t n;
};

struct plan_partitions_req {
    const char *name; /* NUL-terminated; NULL counts as "" */
    int32_t count;    /* the new partition count */
    /* NULL: placed by the controller; else one per new partition. */
    const struct plan_assignment *assignments;
    size_t n_assignments;
};

struct plan_partitions_result {
    int16_t error;
    char message[192]; /* Kafka's wording; "" with KAFKA_ERROR_NONE */
};

/* CreatePartitions: results[i] answers topics[i]. Errors, first match
 * wins:
 *   INVALID_REQUEST             the name appears more than once (each);
 *   UNKNOWN_TOPIC_OR_PARTITION  no such topic;
 *   POLICY_VIOLATION            __consumer_offsets (Cairn's refusal);
 *   INVALID_PARTITIONS          count not above the current count, or
 *                               above META_PARTITIONS_MAX;
 *   INVALID_REPLICA_ASSIGNMENT  assignments given but not one per new
 *                               partition; a new partition's list empty,
 *                               longer than META_REPLICAS_MAX, naming an
 *                               unregistered broker or one broker twice,
 *                               not as long as partition 0's replica
 *                               list, or with every broker fenced or
 *                               shutting down;
 *   INVALID_REPLICATION_FACTOR  placed by the controller, but fewer
 *                               eligible brokers than partition 0 has
 *                               replicas;
 *   THROTTLING_QUOTA_EXCEEDED   the records do not fit in this batch
 *                               next to the earlier topics' (retry).
 * For each valid topic, Partition records current..count-1: given
 * replicas with ISR = those unfenced and not shutting down, or replicas
 * eligible[(start + p + k) % n_eligible] for k < RF (eligible = unfenced
 * brokers not shutting down, by id; start = the position of partition
 * 0's first replica among them, so the new partitions continue
 * CreateTopics' pattern) with ISR = replicas; leader = ISR[0], epochs 0.
 * validate_only checks the same but appends nothing. */
MUST_CHECK int
plan_create_partitions(const struct meta_image *img,
                       const struct plan_partitions_req *topics,
                       size_t n_topics, bool validate_only,
                       struct plan_records *out,
                       struct plan_partitions_result *results);

#endif
