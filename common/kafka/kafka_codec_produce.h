/* The Kafka codec's structs and functions for Produce (0),
 * implemented in common/kafka/kafka_codec_produce.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_PRODUCE_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_PRODUCE_H

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

/* Versions this codec parses and writes; v9+ are flexible (KIP-482).
 * v10 adds to the response only tagged fields Cairn leaves out (read:
 * skipped), per partition CurrentLeader (tag 0) and NodeEndpoints (tag 0
 * of the response), with which Kafka points a client at the new leader
 * on NOT_LEADER_OR_FOLLOWER (KIP-951): Cairn's clients refresh their
 * metadata instead, as they do below v10. v11 changes nothing on the wire
 * (a client sending it can take KIP-951's hints). */
#define KAFKA_PRODUCE_VERSION_MIN 3
#define KAFKA_PRODUCE_VERSION_MAX 11

/* --- Produce (0) --------------------------------------------------------- */

struct kafka_PartitionProduceData {
    int32_t PartitionIndex;
    /* Nullable: the RecordBatch bytes exactly as sent, not parsed here
     * (common/kafka/record_batch.h validates them); COMPACT_RECORDS (a
     * uvarint length + 1) in v9+. */
    struct slice Records;
};

struct kafka_TopicProduceData {
    struct slice Name;
    const struct kafka_PartitionProduceData *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ProduceRequest {
    struct slice TransactionalId; /* nullable */
    int16_t Acks;
    int32_t TimeoutMs;
    const struct kafka_TopicProduceData *Topics;
    int32_t TopicsCnt;
};

struct kafka_BatchIndexAndErrorMessage {
    int32_t BatchIndex;
    struct slice BatchIndexErrorMessage; /* nullable */
};

struct kafka_PartitionProduceResponse {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    int64_t BaseOffset;
    int64_t LogAppendTimeMs; /* -1 unless the topic uses LogAppendTime */
    int64_t LogStartOffset;  /* v5+; default -1 */
    const struct kafka_BatchIndexAndErrorMessage *RecordErrors; /* v8+ */
    int32_t RecordErrorsCnt;
    struct slice ErrorMessage; /* v8+, nullable; default null */
};

struct kafka_TopicProduceResponse {
    struct slice Name;
    const struct kafka_PartitionProduceResponse *Partitions;
    int32_t PartitionsCnt;
};

/* ThrottleTimeMs is the last field of a Produce response, unlike most. */
struct kafka_ProduceResponse {
    const struct kafka_TopicProduceResponse *Responses;
    int32_t ResponsesCnt;
    int32_t ThrottleTimeMs;
};

MUST_CHECK int kafka_produce_request_decode(struct reader *r,
                                            int16_t version, struct arena *a,
                                            struct kafka_ProduceRequest *out);
MUST_CHECK int
kafka_produce_response_encode(struct writer *w, int16_t version,
                              const struct kafka_ProduceResponse *resp);
MUST_CHECK int
kafka_produce_request_encode(struct writer *w, int16_t version,
                             const struct kafka_ProduceRequest *req);
MUST_CHECK int
kafka_produce_response_decode(struct reader *r, int16_t version,
                              struct arena *a,
                              struct kafka_ProduceResponse *out);


#endif
