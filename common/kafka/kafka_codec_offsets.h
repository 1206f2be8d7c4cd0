/* The Kafka codec's structs and functions for OffsetCommit (8) and OffsetFetch (9),
 * implemented in common/kafka/kafka_codec_offsets.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_OFFSETS_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_OFFSETS_H

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
#define KAFKA_OFFSET_COMMIT_VERSION_MIN 0
#define KAFKA_OFFSET_COMMIT_VERSION_MAX 9
#define KAFKA_OFFSET_FETCH_VERSION_MIN 0
#define KAFKA_OFFSET_FETCH_VERSION_MAX 9

/* --- OffsetCommit (8) ---------------------------------------------------- */

struct kafka_OffsetCommitRequestPartition {
    int32_t PartitionIndex;
    int64_t CommittedOffset;
    int32_t CommittedLeaderEpoch;   /* v6+; default -1 */
    int64_t CommitTimestamp;        /* v1 only; default -1; ignored, as
                                     * Kafka 2.1+ stamps commits itself */
    struct slice CommittedMetadata; /* nullable */
};

struct kafka_OffsetCommitRequestTopic {
    struct slice Name;
    const struct kafka_OffsetCommitRequestPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_OffsetCommitRequest {
    struct slice GroupId;
    /* The generation id for a classic group (KIP-848 renamed the field);
     * -1 with MemberId "" for a commit outside any generation (v0 has
     * neither field: it is always such a commit). */
    int32_t GenerationIdOrMemberEpoch;
    struct slice MemberId;
    struct slice GroupInstanceId; /* v7+, nullable; default null */
    int64_t RetentionTimeMs;      /* v2-4 only; default -1 (broker's) */
    const struct kafka_OffsetCommitRequestTopic *Topics;
    int32_t TopicsCnt;
};

struct kafka_OffsetCommitResponsePartition {
    int32_t PartitionIndex;
    int16_t ErrorCode;
};

struct kafka_OffsetCommitResponseTopic {
    struct slice Name;
    const struct kafka_OffsetCommitResponsePartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_OffsetCommitResponse {
    int32_t ThrottleTimeMs; /* v3+; default 0 */
    const struct kafka_OffsetCommitResponseTopic *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int
kafka_offset_commit_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_OffsetCommitRequest *out);
MUST_CHECK int kafka_offset_commit_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetCommitResponse *resp);
MUST_CHECK int
kafka_offset_commit_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_OffsetCommitRequest *req);
MUST_CHECK int
kafka_offset_commit_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_OffsetCommitResponse *out);

/* --- OffsetFetch (9) ----------------------------------------------------- */

struct kafka_OffsetFetchRequestTopic {
    struct slice Name;
    const int32_t *PartitionIndexes;
    int32_t PartitionIndexesCnt;
};

/* One group of a v8+ request (KIP-709). */
struct kafka_OffsetFetchRequestGroup {
    struct slice GroupId;
    /* v9+ (KIP-848), for the new consumer protocol only: a classic group
     * ignores them, as Kafka does. */
    struct slice MemberId; /* nullable; default null */
    int32_t MemberEpoch;   /* default -1 */
    /* Nullable: null asks for every partition with a committed offset. */
    const struct kafka_OffsetFetchRequestTopic *Topics;
    int32_t TopicsCnt;
};

/* v0..7 ask about one group (GroupId, Topics), v8+ about a batch
 * (Groups); the fields of the other shape keep their defaults. */
struct kafka_OffsetFetchRequest {
    struct slice GroupId; /* v0-7; default "" */
    /* v0-7; nullable from v2: -1 (null) asks for every partition with a
     * committed offset. A null array at v1 is RC_MALFORMED. */
    const struct kafka_OffsetFetchRequestTopic *Topics;
    int32_t TopicsCnt;
    const struct kafka_OffsetFetchRequestGroup *Groups; /* v8+ */
    int32_t GroupsCnt;
    /* v7+: answer UNSTABLE_OFFSET_COMMIT for partitions with pending
     * transactional offsets; Cairn has no transactions, so none are
     * ever pending. Default false. */
    bool RequireStable;
};

struct kafka_OffsetFetchResponsePartition {
    int32_t PartitionIndex;
    int64_t CommittedOffset;      /* -1: none committed */
    int32_t CommittedLeaderEpoch; /* v5+; default -1 */
    struct slice Metadata;        /* nullable */
    int16_t ErrorCode;
};

struct kafka_OffsetFetchResponseTopic {
    struct slice Name;
    const struct kafka_OffsetFetchResponsePartition *Partitions;
    int32_t PartitionsCnt;
};

/* One group of a v8+ response; its ErrorCode comes after Topics. */
struct kafka_OffsetFetchResponseGroup {
    struct slice GroupId;
    const struct kafka_OffsetFetchResponseTopic *Topics;
    int32_t TopicsCnt;
    int16_t ErrorCode;
};

/* v0..7 answer about one group (Topics, ErrorCode: after Topics on the
 * wire), v8+ about each (Groups); the fields of the other shape keep
 * their defaults. */
struct kafka_OffsetFetchResponse {
    int32_t ThrottleTimeMs; /* v3+; default 0 */
    const struct kafka_OffsetFetchResponseTopic *Topics; /* v0-7 */
    int32_t TopicsCnt;
    int16_t ErrorCode; /* v2-7; default 0 */
    const struct kafka_OffsetFetchResponseGroup *Groups; /* v8+ */
    int32_t GroupsCnt;
};

MUST_CHECK int
kafka_offset_fetch_request_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_OffsetFetchRequest *out);
MUST_CHECK int kafka_offset_fetch_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetFetchResponse *resp);
MUST_CHECK int
kafka_offset_fetch_request_encode(struct writer *w, int16_t version,
                                  const struct kafka_OffsetFetchRequest *req);
MUST_CHECK int
kafka_offset_fetch_response_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_OffsetFetchResponse *out);


#endif
