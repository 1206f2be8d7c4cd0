/* The Kafka codec's structs and functions for ListOffsets (2), implemented
 * in common/kafka/kafka_codec_list_offsets.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_LIST_OFFSETS_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_LIST_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Versions this codec parses and writes: v6+ is flexible (KIP-482, no
 * tagged field defined), v7 allows Timestamp MAX (KIP-734), v8
 * EARLIEST_LOCAL (KIP-405). */
#define KAFKA_LIST_OFFSETS_VERSION_MIN 0
#define KAFKA_LIST_OFFSETS_VERSION_MAX 8

/* Kafka's special Timestamp values (ListOffsetsRequest.java) and the
 * first version allowed to send each. */
#define KAFKA_LIST_OFFSETS_LATEST (-1)         /* v0+ */
#define KAFKA_LIST_OFFSETS_EARLIEST (-2)       /* v0+ */
#define KAFKA_LIST_OFFSETS_MAX_TIMESTAMP (-3)  /* v7+ (KIP-734) */
#define KAFKA_LIST_OFFSETS_EARLIEST_LOCAL (-4) /* v8+ (KIP-405) */

/* --- ListOffsets (2) ----------------------------------------------------- */

struct kafka_ListOffsetsPartition {
    int32_t PartitionIndex;
    int32_t CurrentLeaderEpoch; /* v4+; default -1 */
    int64_t Timestamp;          /* a time, or a KAFKA_LIST_OFFSETS_* */
    int32_t MaxNumOffsets;      /* v0 only; default 1 */
};

struct kafka_ListOffsetsTopic {
    struct slice Name;
    const struct kafka_ListOffsetsPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ListOffsetsRequest {
    int32_t ReplicaId;
    int8_t IsolationLevel; /* v2+; default 0 */
    const struct kafka_ListOffsetsTopic *Topics;
    int32_t TopicsCnt;
};

/* v0 answers old_style_offsets, a list: Cairn's is [Offset], or empty
 * when Offset is -1, whatever MaxNumOffsets asked (Kafka's legacy answer
 * may add the bases of older segments); decoded, Offset is its first
 * element (-1 when empty) and Timestamp -1. */
struct kafka_ListOffsetsPartitionResponse {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    int64_t Timestamp;          /* v1+ */
    int64_t Offset;
    int32_t LeaderEpoch; /* v4+; default -1 */
};

struct kafka_ListOffsetsTopicResponse {
    struct slice Name;
    const struct kafka_ListOffsetsPartitionResponse *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ListOffsetsResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    const struct kafka_ListOffsetsTopicResponse *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int
kafka_list_offsets_request_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_ListOffsetsRequest *out);
MUST_CHECK int kafka_list_offsets_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListOffsetsResponse *resp);
MUST_CHECK int
kafka_list_offsets_request_encode(struct writer *w, int16_t version,
                                  const struct kafka_ListOffsetsRequest *req);
MUST_CHECK int
kafka_list_offsets_response_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_ListOffsetsResponse *out);

#endif
