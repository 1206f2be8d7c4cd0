/* The Kafka codec's structs and functions for AlterPartitionReassignments
 * (45), ListPartitionReassignments (46) and UnregisterBroker (64), the
 * APIs that move replicas and retire brokers, implemented in
 * common/kafka/kafka_codec_reassign.c. Include common/kafka/kafka_codec.h,
 * which includes this and holds the conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_REASSIGN_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_REASSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Both APIs have only v0, flexible (KIP-482), with no tagged field. */
#define KAFKA_ALTER_PARTITION_REASSIGNMENTS_VERSION_MIN 0
#define KAFKA_ALTER_PARTITION_REASSIGNMENTS_VERSION_MAX 0
#define KAFKA_LIST_PARTITION_REASSIGNMENTS_VERSION_MIN 0
#define KAFKA_LIST_PARTITION_REASSIGNMENTS_VERSION_MAX 0
#define KAFKA_UNREGISTER_BROKER_VERSION_MIN 0
#define KAFKA_UNREGISTER_BROKER_VERSION_MAX 0

/* --- AlterPartitionReassignments (45) ------------------------------------ */

struct kafka_ReassignablePartition {
    int32_t PartitionIndex;
    const int32_t *Replicas; /* the target; ReplicasCnt -1 (null): cancel */
    int32_t ReplicasCnt;
};

struct kafka_ReassignableTopic {
    struct slice Name;
    const struct kafka_ReassignablePartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_AlterPartitionReassignmentsRequest {
    int32_t TimeoutMs; /* default 60000 */
    const struct kafka_ReassignableTopic *Topics;
    int32_t TopicsCnt;
};

struct kafka_ReassignablePartitionResponse {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
};

struct kafka_ReassignableTopicResponse {
    struct slice Name;
    const struct kafka_ReassignablePartitionResponse *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_AlterPartitionReassignmentsResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
    const struct kafka_ReassignableTopicResponse *Responses;
    int32_t ResponsesCnt;
};

MUST_CHECK int kafka_alter_partition_reassignments_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterPartitionReassignmentsRequest *out);
MUST_CHECK int kafka_alter_partition_reassignments_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterPartitionReassignmentsRequest *req);
MUST_CHECK int kafka_alter_partition_reassignments_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterPartitionReassignmentsResponse *resp);
MUST_CHECK int kafka_alter_partition_reassignments_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterPartitionReassignmentsResponse *out);

/* --- ListPartitionReassignments (46) ------------------------------------- */

struct kafka_ListPartitionReassignmentsTopics {
    struct slice Name;
    const int32_t *PartitionIndexes;
    int32_t PartitionIndexesCnt;
};

struct kafka_ListPartitionReassignmentsRequest {
    int32_t TimeoutMs; /* default 60000 */
    /* TopicsCnt -1 (null, the default): every reassignment. */
    const struct kafka_ListPartitionReassignmentsTopics *Topics;
    int32_t TopicsCnt;
};

struct kafka_OngoingPartitionReassignment {
    int32_t PartitionIndex;
    const int32_t *Replicas;
    int32_t ReplicasCnt;
    const int32_t *AddingReplicas;
    int32_t AddingReplicasCnt;
    const int32_t *RemovingReplicas;
    int32_t RemovingReplicasCnt;
};

struct kafka_OngoingTopicReassignment {
    struct slice Name;
    const struct kafka_OngoingPartitionReassignment *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ListPartitionReassignmentsResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
    const struct kafka_OngoingTopicReassignment *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int kafka_list_partition_reassignments_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_ListPartitionReassignmentsRequest *out);
MUST_CHECK int kafka_list_partition_reassignments_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListPartitionReassignmentsRequest *req);
MUST_CHECK int kafka_list_partition_reassignments_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListPartitionReassignmentsResponse *resp);
MUST_CHECK int kafka_list_partition_reassignments_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_ListPartitionReassignmentsResponse *out);

/* --- UnregisterBroker (64) ------------------------------------------------ */

struct kafka_UnregisterBrokerRequest {
    int32_t BrokerId;
};

struct kafka_UnregisterBrokerResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
};

MUST_CHECK int kafka_unregister_broker_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_UnregisterBrokerRequest *out);
MUST_CHECK int kafka_unregister_broker_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_UnregisterBrokerRequest *req);
MUST_CHECK int kafka_unregister_broker_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_UnregisterBrokerResponse *resp);
MUST_CHECK int kafka_unregister_broker_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_UnregisterBrokerResponse *out);

#endif
