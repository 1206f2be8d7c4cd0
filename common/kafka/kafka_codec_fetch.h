/* The Kafka codec's structs and functions for Fetch (1), implemented in
 * common/kafka/kafka_codec_fetch.c (ListOffsets (2) is
 * kafka_codec_list_offsets.h). Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_FETCH_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_FETCH_H

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

/* Versions this codec parses and writes. Fetch v12+ is flexible
 * (KIP-482), its records COMPACT_RECORDS; v13+ names topics by TopicId
 * (KIP-516) in request, forgotten topics and response; v14 only allows
 * OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405, which Cairn never answers);
 * v15 moves ReplicaId into the tagged ReplicaState (KIP-903); v16 only
 * adds the response's tagged NodeEndpoints (KIP-951). */
#define KAFKA_FETCH_VERSION_MIN 4
#define KAFKA_FETCH_VERSION_MAX 16

/* --- Fetch (1) -----------------------------------------------------------
 * Tagged fields: the request's ClusterId (tag 0, v12+) is skipped on
 * read and never written; its ReplicaState (tag 1, v15+) is read into
 * ReplicaId and ReplicaEpoch and written when either is not -1. The
 * response's per-partition DivergingEpoch (tag 0), CurrentLeader (tag 1)
 * and SnapshotId (tag 2), v12+, and its NodeEndpoints (tag 0, v16+) are
 * left out and skipped on read: DivergingEpoch and SnapshotId serve
 * Kafka's own followers and KRaft; CurrentLeader and NodeEndpoints are
 * hints a client may use instead of a metadata refresh (KIP-951), which
 * Cairn's clients do anyway. */

struct kafka_FetchPartition {
    int32_t PartitionIndex;
    int32_t CurrentLeaderEpoch; /* v9+; default -1 */
    int64_t FetchOffset;
    /* v12+; default -1. Kafka answers a follower's with DivergingEpoch;
     * consumers send -1 and Cairn's follower (v11) none, so the broker
     * does not look at it. */
    int32_t LastFetchedEpoch;
    int64_t LogStartOffset;     /* v5+ (followers only); default -1 */
    int32_t PartitionMaxBytes;
};

struct kafka_FetchableTopic {
    struct slice Name;          /* v0..12; decoded v13+: null */
    struct kafka_uuid TopicId;  /* v13+; decoded below v13: zero */
    const struct kafka_FetchPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ForgottenTopic {
    struct slice Name;          /* v7..12; decoded v13+: null */
    struct kafka_uuid TopicId;  /* v13+; decoded below v13: zero */
    const int32_t *ForgottenPartitionIndexes;
    int32_t ForgottenPartitionIndexesCnt;
};

struct kafka_FetchRequest {
    /* v0..14; v15+ in the tagged ReplicaState, -1 (a consumer) when it is
     * absent. */
    int32_t ReplicaId;
    int32_t MaxWaitMs;
    int32_t MinBytes;
    int32_t MaxBytes;
    int8_t IsolationLevel; /* 0 read_uncommitted, 1 read_committed */
    int32_t SessionId;     /* v7+; default 0 */
    int32_t SessionEpoch;  /* v7+; default -1 */
    const struct kafka_FetchableTopic *Topics;
    int32_t TopicsCnt;
    const struct kafka_ForgottenTopic *ForgottenTopicsData; /* v7+ */
    int32_t ForgottenTopicsDataCnt;
    struct slice RackId; /* v11+; default "" */
    /* v15+, in ReplicaState (KIP-903: the follower's broker epoch);
     * default -1. Kafka's followers send it; Cairn's (v11) do not, and
     * the broker does not check it. */
    int64_t ReplicaEpoch;
};

struct kafka_AbortedTransaction {
    int64_t ProducerId;
    int64_t FirstOffset;
};

/* Records are not in memory when the broker answers: they stay in the
 * segment file and are spliced into the response (kafka_server.h). The
 * encoder writes the length of RecordsBytes (-1 null, 0 empty) -- an
 * int32, or from v12 COMPACT_RECORDS' uvarint RecordsBytes + 1 (0 null),
 * whose width follows from RecordsBytes -- and, when RecordsBytes is
 * > 0, calls the records callback with the body position right after
 * that length, where exactly RecordsBytes bytes must follow. */
struct kafka_FetchablePartitionResponse {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    int64_t HighWatermark;
    int64_t LastStableOffset;
    int64_t LogStartOffset; /* v5+; default -1 */
    /* Nullable (-1): null and empty mean the same to clients. */
    const struct kafka_AbortedTransaction *AbortedTransactions;
    int32_t AbortedTransactionsCnt;
    int32_t PreferredReadReplica; /* v11+; default -1 */
    int32_t RecordsBytes;         /* -1 null, 0 empty, > 0 via the cb */
    void *records_arg;            /* encode: passed to the cb, e.g. a span */
    struct slice Records;         /* decode: the inline bytes (or null) */
};

struct kafka_FetchableTopicResponse {
    struct slice Topic;           /* v0..12; decoded v13+: null */
    struct kafka_uuid TopicId;    /* v13+; decoded below v13: zero */
    const struct kafka_FetchablePartitionResponse *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_FetchResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode; /* v7+, session level; default 0 */
    int32_t SessionId; /* v7+; 0 = no session */
    const struct kafka_FetchableTopicResponse *Responses;
    int32_t ResponsesCnt;
};

/* Called by kafka_fetch_response_encode() for each partition with
 * RecordsBytes > 0, in order, right after its length is written: at ==
 * w->len is where the partition's RecordsBytes bytes go. The callback
 * either leaves the writer alone and arranges for the bytes to be spliced
 * at `at` (a handler calls kafka_response_splice(), which adds a span at
 * the body's current end, i.e. exactly there), or writes exactly
 * RecordsBytes bytes itself (copy mode, tests); anything else is a
 * programmer error. A non-RC_OK return stops encoding and is returned.
 * In a flexible version the partition's tagged-field section follows the
 * records: the encoder writes it after the callback returns. */
typedef int (*kafka_fetch_records_cb)(
    void *arg, struct writer *w,
    const struct kafka_FetchablePartitionResponse *p, size_t at);

MUST_CHECK int kafka_fetch_request_decode(struct reader *r, int16_t version,
                                          struct arena *a,
                                          struct kafka_FetchRequest *out);
/* records_cb may be NULL only if no partition has RecordsBytes > 0. The
 * callback is not called once the writer has failed. */
MUST_CHECK int
kafka_fetch_response_encode(struct writer *w, int16_t version,
                            const struct kafka_FetchResponse *resp,
                            kafka_fetch_records_cb records_cb, void *cb_arg);
MUST_CHECK int
kafka_fetch_request_encode(struct writer *w, int16_t version,
                           const struct kafka_FetchRequest *req);
/* Records arrive inline: Records borrows them, RecordsBytes is their
 * length (-1 for null), records_arg is NULL. */
MUST_CHECK int kafka_fetch_response_decode(struct reader *r, int16_t version,
                                           struct arena *a,
                                           struct kafka_FetchResponse *out);

#endif
