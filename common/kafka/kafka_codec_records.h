/* DeleteRecords (21) bodies as C structs and back: a part of
 * common/kafka/kafka_codec.h (which includes it), kept apart for size. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_RECORDS_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_RECORDS_H

#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* v0 and v1 are the same bytes (v1 only changed throttling); v2 is the
 * same fields, flexible (KIP-482). */
struct kafka_DeleteRecordsPartition {
    int32_t PartitionIndex;
    int64_t Offset; /* delete below this; -1: the high watermark */
};

struct kafka_DeleteRecordsTopic {
    struct slice Name;
    const struct kafka_DeleteRecordsPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_DeleteRecordsRequest {
    const struct kafka_DeleteRecordsTopic *Topics;
    int32_t TopicsCnt;
    int32_t TimeoutMs;
};

struct kafka_DeleteRecordsPartitionResult {
    int32_t PartitionIndex;
    int64_t LowWatermark; /* the log start offset after; -1 on error */
    int16_t ErrorCode;
};

struct kafka_DeleteRecordsTopicResult {
    struct slice Name;
    const struct kafka_DeleteRecordsPartitionResult *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_DeleteRecordsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_DeleteRecordsTopicResult *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int
kafka_delete_records_request_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_DeleteRecordsRequest *out);
MUST_CHECK int kafka_delete_records_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsResponse *resp);
MUST_CHECK int kafka_delete_records_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsRequest *req);
MUST_CHECK int
kafka_delete_records_response_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_DeleteRecordsResponse *out);

#endif
