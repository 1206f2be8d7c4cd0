/* The Kafka codec's structs and functions for ElectLeaders (43),
 * implemented in common/kafka/kafka_codec_elect.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_ELECT_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_ELECT_H

#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

#define KAFKA_ELECT_LEADERS_VERSION_MIN 0
#define KAFKA_ELECT_LEADERS_VERSION_MAX 2
#define KAFKA_ELECT_LEADERS_FLEXIBLE 2

/* ElectionType (v1+; v0 elects preferred replicas only). */
#define KAFKA_ELECTION_PREFERRED 0
#define KAFKA_ELECTION_UNCLEAN 1

/* v1 adds ElectionType to the request and a top-level ErrorCode to the
 * response (KIP-460); v2 is the same fields, flexible. */
struct kafka_ElectLeadersTopicPartitions {
    struct slice Topic;
    const int32_t *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ElectLeadersRequest {
    int8_t ElectionType; /* v1+; default 0 (preferred) */
    /* Nullable: -1 (null) elects every partition's leader. */
    const struct kafka_ElectLeadersTopicPartitions *TopicPartitions;
    int32_t TopicPartitionsCnt;
    int32_t TimeoutMs;
};

struct kafka_ElectLeadersPartitionResult {
    int32_t PartitionId;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
};

struct kafka_ReplicaElectionResult {
    struct slice Topic;
    const struct kafka_ElectLeadersPartitionResult *PartitionResult;
    int32_t PartitionResultCnt;
};

struct kafka_ElectLeadersResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode; /* v1+; default 0 */
    const struct kafka_ReplicaElectionResult *ReplicaElectionResults;
    int32_t ReplicaElectionResultsCnt;
};

MUST_CHECK int
kafka_elect_leaders_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_ElectLeadersRequest *out);
MUST_CHECK int kafka_elect_leaders_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ElectLeadersResponse *resp);
MUST_CHECK int kafka_elect_leaders_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ElectLeadersRequest *req);
MUST_CHECK int
kafka_elect_leaders_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_ElectLeadersResponse *out);

#endif
