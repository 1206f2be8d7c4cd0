/* The Kafka codec's structs and functions for CreatePartitions (37),
 * implemented in common/kafka/kafka_codec_partitions.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_PARTITIONS_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

#define KAFKA_CREATE_PARTITIONS_VERSION_MIN 0
#define KAFKA_CREATE_PARTITIONS_VERSION_MAX 3
#define KAFKA_CREATE_PARTITIONS_FLEXIBLE 2

/* --- CreatePartitions (37) -----------------------------------------------
 * v1 changes no field, v2 is flexible, v3 changes no field (Kafka answers
 * THROTTLING_QUOTA_EXCEEDED to v3+ only). */

struct kafka_CreatePartitionsAssignment {
    const int32_t *BrokerIds;
    int32_t BrokerIdsCnt;
};

struct kafka_CreatePartitionsTopic {
    struct slice Name;
    int32_t Count; /* the new partition count */
    /* Nullable (-1: the controller places them); else one per new
     * partition. Up to KAFKA_REQUEST_PARTITIONS_MAX entries. */
    const struct kafka_CreatePartitionsAssignment *Assignments;
    int32_t AssignmentsCnt;
};

struct kafka_CreatePartitionsRequest {
    const struct kafka_CreatePartitionsTopic *Topics;
    int32_t TopicsCnt;
    int32_t TimeoutMs;
    bool ValidateOnly;
};

struct kafka_CreatePartitionsTopicResult {
    struct slice Name;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable; default null */
};

struct kafka_CreatePartitionsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_CreatePartitionsTopicResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int kafka_create_partitions_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_CreatePartitionsRequest *out);
MUST_CHECK int kafka_create_partitions_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreatePartitionsResponse *resp);
MUST_CHECK int kafka_create_partitions_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreatePartitionsRequest *req);
MUST_CHECK int kafka_create_partitions_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_CreatePartitionsResponse *out);

#endif
