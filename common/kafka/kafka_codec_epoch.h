/* The Kafka codec's structs and functions for OffsetForLeaderEpoch (23),
 * implemented in common/kafka/kafka_codec_epoch.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_EPOCH_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_EPOCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/kafka/kafka_codec_records.h"
#include "common/kafka/kafka_error.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Versions this codec parses and writes. */
#define KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN 0
/* v4+ is flexible (KIP-482); Kafka defines no tagged field for it. */
#define KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX 4

/* --- OffsetForLeaderEpoch (23) ------------------------------------------- */

/* For each partition, the largest leader epoch <= LeaderEpoch the leader
 * knows and the offset where it ends (KIP-101, KIP-320): how a follower
 * or a consumer finds where its log diverges from the leader's. */
struct kafka_OffsetForLeaderPartition {
    int32_t Partition;
    int32_t CurrentLeaderEpoch; /* v2+ (fencing); default -1 */
    int32_t LeaderEpoch;        /* the epoch to look up */
};

struct kafka_OffsetForLeaderTopic {
    struct slice Topic;
    const struct kafka_OffsetForLeaderPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_OffsetForLeaderEpochRequest {
    /* v3+: -1 for a consumer, the broker id for a follower. Default -2,
     * Kafka's schema default: a "debug" consumer, allowed to see offsets
     * beyond the high watermark. A v0..2 request does not say who sends
     * it, so followers on old versions get -2 too. */
    int32_t ReplicaId;
    const struct kafka_OffsetForLeaderTopic *Topics;
    int32_t TopicsCnt;
};

/* Kafka's schema once named this one EpochEndOffset (now
 * OffsetForLeaderPartitionResult); the fields are the same. */
struct kafka_EpochEndOffset {
    int16_t ErrorCode;
    int32_t Partition;
    int32_t LeaderEpoch; /* v1+; default -1 */
    int64_t EndOffset;   /* -1 when ErrorCode is set or the epoch unknown */
};

struct kafka_OffsetForLeaderTopicResult {
    struct slice Topic;
    const struct kafka_EpochEndOffset *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_OffsetForLeaderEpochResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    const struct kafka_OffsetForLeaderTopicResult *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int kafka_offset_for_leader_epoch_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_OffsetForLeaderEpochRequest *out);
MUST_CHECK int kafka_offset_for_leader_epoch_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetForLeaderEpochResponse *resp);
MUST_CHECK int kafka_offset_for_leader_epoch_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetForLeaderEpochRequest *req);
MUST_CHECK int kafka_offset_for_leader_epoch_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_OffsetForLeaderEpochResponse *out);


#endif
