/* Kafka request and response bodies as C structs, and back: the pure codec
 * under the Kafka handlers. No I/O, no clock, no globals but const
 * tables; any thread, one message per call. Bodies only: the request
 * header is parsed by broker/kafka/kafka_server.c, which also adds the response
 * header (correlation id) and the size prefix.
 *
 * APIs and versions (shared/reference/kafka-protocol.md sections 1 and 4;
 * every version here but ApiVersions v3 is non-flexible; the compact
 * encodings and tagged fields of flexible versions (KIP-482) are in
 * common/reader.h and common/writer.h, the request header v2 in
 * common/kafka/kafka_frame.h):
 *
 *   ApiKey  API              versions   file
 *    18     ApiVersions      0..3       kafka_codec.c (v3 flexible)
 *     3     Metadata         0..8       kafka_codec.c
 *     0     Produce          3..8       kafka_codec_produce.c
 *     1     Fetch            4..11      kafka_codec_fetch.c
 *     2     ListOffsets      0..5       kafka_codec_fetch.c
 *    19     CreateTopics     0..4       kafka_codec_admin.c
 *    20     DeleteTopics     0..3       kafka_codec_admin.c
 *    21     DeleteRecords    0..1       kafka_codec_admin.c
 *    32     DescribeConfigs  0..3       kafka_codec_admin.c
 *    22     InitProducerId   0..1       kafka_codec_admin.c
 *    23     OffsetForLeaderEpoch 0..3   kafka_codec_epoch.c
 *    10     FindCoordinator  0..2       kafka_codec_group.c
 *    11     JoinGroup        0..5       kafka_codec_group.c
 *    12     Heartbeat        0..3       kafka_codec_group.c
 *    13     LeaveGroup       0..3       kafka_codec_group.c
 *    14     SyncGroup        0..3       kafka_codec_group.c
 *    15     DescribeGroups   0..4       kafka_codec_group.c
 *    16     ListGroups       0..2       kafka_codec_group.c
 *    42     DeleteGroups     0..1       kafka_codec_group.c
 *     8     OffsetCommit     0..7       kafka_codec_offsets.c
 *     9     OffsetFetch      0..5       kafka_codec_offsets.c
 *
 * These are what the codec can parse; which versions are advertised is
 * the handlers' table, and must lie inside these ranges.
 *
 * Every API has four functions, all MUST_CHECK:
 *
 *   kafka_<api>_request_decode(r, version, arena, out)    broker side
 *   kafka_<api>_response_encode(w, version, resp)         broker side
 *   kafka_<api>_request_encode(w, version, req)           tests, fuzzing,
 *   kafka_<api>_response_decode(r, version, arena, out)   client tests
 *
 * Structs and fields keep Kafka's names (the JSON schemas in apache/kafka
 * clients/src/main/resources/common/message/, e.g. kafka_FetchableTopic),
 * except a few fields named as in the reference for clarity: MaxWaitMs,
 * SessionEpoch, PartitionMaxBytes, ForgottenTopicsData (Fetch request).
 *
 * Conventions:
 * - Strings and bytes are struct slice. Decoded ones borrow from the frame
 *   given to the reader (STYLE.md section 1), so a decoded message is
 *   valid only while the frame and the arena are; handlers copy what they
 *   keep. A null slice is a null value and is written only into nullable
 *   fields (a null slice in a non-nullable field is a programmer error).
 * - An array field X comes with int32_t XCnt, as in librdkafka. XCnt == -1
 *   is a null array, allowed only where Kafka makes the field nullable
 *   (noted per field); X may be NULL whenever XCnt <= 0.
 * - Decoded arrays live in the arena given to the decoder; release them
 *   with arena_reset()/arena_free() after the message is handled.
 * - A field absent from the version decoded gets Kafka's default (noted
 *   per field); encoders skip fields absent from the version encoded.
 *
 * Decoding trusts nothing:
 * - RC_SHORT: the body ends before a value does, including an array
 *   count whose elements could not fit in the bytes left (checked before
 *   anything is allocated), so truncating a valid body anywhere gives
 *   RC_SHORT.
 * - RC_MALFORMED: a negative length or count (other than -1 where
 *   nullable), and bytes left over after the last field. Kafka's own
 *   generated readers stop at the last field and ignore what follows; we
 *   reject it because none of the target clients sends trailing bytes,
 *   and a field list that is off for some version then shows up as an
 *   error instead of silently wrong values.
 * - RC_TOO_LARGE: more topics than KAFKA_REQUEST_TOPICS_MAX, more
 *   partitions in one topic than KAFKA_REQUEST_PARTITIONS_MAX, or the
 *   arena's bound (ARENA_BYTES_MAX) reached. RC_NOMEM: malloc failed.
 * - RC_INVALID: a version outside the API's range. The handler should
 *   have answered or closed before decoding; this keeps a table mistake
 *   from turning a peer's bytes into a crash.
 * On failure *out holds nothing usable (its arrays are still in the
 * arena). The handler answers a failed decode by closing the connection
 * (Kafka does the same for a request it cannot parse).
 *
 * Encoding appends to a writer and returns w->rc (RC_TOO_LARGE when the
 * writer's bound is reached, RC_NOMEM); a version outside the range, a
 * negative count for a non-nullable array or a null slice in a
 * non-nullable field is a programmer error (assert). */
#ifndef CAIRN_BROKER_KAFKA_CODEC_H
#define CAIRN_BROKER_KAFKA_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec_records.h"
#include "common/kafka/kafka_error.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* The Kafka APIs Cairn serves, one line each, in ApiKey order: the
 * ApiKeys enum name, the key, Kafka's name, the codec's lower-case name
 * (kafka_<lower>_request_decode/_encode here, kafka_handle_<lower> in the
 * broker) and the request struct. The codec's version table
 * (kafka_apis[]), ApiVersions, the broker's dispatch and the fuzz target
 * are all made from this one list, so nothing is advertised that is not
 * decoded and handled. Versions are KAFKA_<NAME>_VERSION_MIN/_MAX below. */
#define KAFKA_APIS(X)                                                  \
    X(PRODUCE, 0, "Produce", produce, ProduceRequest)                  \
    X(FETCH, 1, "Fetch", fetch, FetchRequest)                          \
    X(LIST_OFFSETS, 2, "ListOffsets", list_offsets, ListOffsetsRequest) \
    X(METADATA, 3, "Metadata", metadata, MetadataRequest)              \
    X(OFFSET_COMMIT, 8, "OffsetCommit", offset_commit,                 \
      OffsetCommitRequest)                                             \
    X(OFFSET_FETCH, 9, "OffsetFetch", offset_fetch, OffsetFetchRequest) \
    X(FIND_COORDINATOR, 10, "FindCoordinator", find_coordinator,       \
      FindCoordinatorRequest)                                          \
    X(JOIN_GROUP, 11, "JoinGroup", join_group, JoinGroupRequest)       \
    X(HEARTBEAT, 12, "Heartbeat", heartbeat, HeartbeatRequest)         \
    X(LEAVE_GROUP, 13, "LeaveGroup", leave_group, LeaveGroupRequest)   \
    X(SYNC_GROUP, 14, "SyncGroup", sync_group, SyncGroupRequest)       \
    X(DESCRIBE_GROUPS, 15, "DescribeGroups", describe_groups,          \
      DescribeGroupsRequest)                                           \
    X(LIST_GROUPS, 16, "ListGroups", list_groups, ListGroupsRequest)   \
    X(API_VERSIONS, 18, "ApiVersions", api_versions,                   \
      ApiVersionsRequest)                                              \
    X(CREATE_TOPICS, 19, "CreateTopics", create_topics,                \
      CreateTopicsRequest)                                             \
    X(DELETE_TOPICS, 20, "DeleteTopics", delete_topics,                \
      DeleteTopicsRequest)                                             \
    X(DELETE_RECORDS, 21, "DeleteRecords", delete_records,             \
      DeleteRecordsRequest)                                            \
    X(INIT_PRODUCER_ID, 22, "InitProducerId", init_producer_id,        \
      InitProducerIdRequest)                                           \
    X(OFFSET_FOR_LEADER_EPOCH, 23, "OffsetForLeaderEpoch",             \
      offset_for_leader_epoch, OffsetForLeaderEpochRequest)            \
    X(DESCRIBE_CONFIGS, 32, "DescribeConfigs", describe_configs,       \
      DescribeConfigsRequest)                                          \
    X(DELETE_GROUPS, 42, "DeleteGroups", delete_groups,                \
      DeleteGroupsRequest)

/* ApiKeys, with the names of Kafka's ApiKeys enum. */
enum kafka_api_key {
#define X(NAME, key, name, lower, Request) KAFKA_API_##NAME = (key),
    KAFKA_APIS(X)
#undef X
};

/* Versions this codec parses and writes. */
#define KAFKA_API_VERSIONS_VERSION_MIN 0
#define KAFKA_API_VERSIONS_VERSION_MAX 3
#define KAFKA_METADATA_VERSION_MIN 0
#define KAFKA_METADATA_VERSION_MAX 8
#define KAFKA_PRODUCE_VERSION_MIN 3
#define KAFKA_PRODUCE_VERSION_MAX 8
#define KAFKA_FETCH_VERSION_MIN 4
#define KAFKA_FETCH_VERSION_MAX 11
#define KAFKA_LIST_OFFSETS_VERSION_MIN 0
#define KAFKA_LIST_OFFSETS_VERSION_MAX 5
#define KAFKA_CREATE_TOPICS_VERSION_MIN 0
#define KAFKA_CREATE_TOPICS_VERSION_MAX 4
#define KAFKA_DELETE_RECORDS_VERSION_MIN 0
#define KAFKA_DELETE_RECORDS_VERSION_MAX 1
#define KAFKA_DELETE_TOPICS_VERSION_MIN 0
#define KAFKA_DELETE_TOPICS_VERSION_MAX 3
#define KAFKA_DESCRIBE_CONFIGS_VERSION_MIN 0
#define KAFKA_DESCRIBE_CONFIGS_VERSION_MAX 3
#define KAFKA_INIT_PRODUCER_ID_VERSION_MIN 0
#define KAFKA_INIT_PRODUCER_ID_VERSION_MAX 1
#define KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN 0
#define KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX 3 /* v4+ is flexible */
/* Consumer groups; every MAX is the last non-flexible version. */
#define KAFKA_FIND_COORDINATOR_VERSION_MIN 0
#define KAFKA_FIND_COORDINATOR_VERSION_MAX 2
#define KAFKA_JOIN_GROUP_VERSION_MIN 0
#define KAFKA_JOIN_GROUP_VERSION_MAX 5
#define KAFKA_HEARTBEAT_VERSION_MIN 0
#define KAFKA_HEARTBEAT_VERSION_MAX 3
#define KAFKA_LEAVE_GROUP_VERSION_MIN 0
#define KAFKA_LEAVE_GROUP_VERSION_MAX 3
#define KAFKA_SYNC_GROUP_VERSION_MIN 0
#define KAFKA_SYNC_GROUP_VERSION_MAX 3
#define KAFKA_OFFSET_COMMIT_VERSION_MIN 0
#define KAFKA_OFFSET_COMMIT_VERSION_MAX 7
#define KAFKA_OFFSET_FETCH_VERSION_MIN 0
#define KAFKA_OFFSET_FETCH_VERSION_MAX 5
#define KAFKA_DESCRIBE_GROUPS_VERSION_MIN 0
#define KAFKA_DESCRIBE_GROUPS_VERSION_MAX 4
#define KAFKA_LIST_GROUPS_VERSION_MIN 0
#define KAFKA_LIST_GROUPS_VERSION_MAX 2
#define KAFKA_DELETE_GROUPS_VERSION_MIN 0
#define KAFKA_DELETE_GROUPS_VERSION_MAX 1

/* True if this codec handles api_key at version, and its range in *min and
 * *max (either may be NULL); false for an ApiKey it does not know. */
bool kafka_codec_version_range(int16_t api_key, int16_t *min, int16_t *max);

/* A request decoder or encoder of any API; `msg` points to the API's
 * request struct (struct kafka_<Request>). */
typedef int (*kafka_request_decode_fn)(struct reader *r, int16_t version,
                                       struct arena *a, void *msg);
typedef int (*kafka_request_encode_fn)(struct writer *w, int16_t version,
                                       const void *msg);

/* One row of KAFKA_APIS with the codec's versions and functions. */
struct kafka_api {
    int16_t key;
    const char *name;            /* Kafka's, e.g. "Produce" */
    int16_t min_version;
    int16_t max_version;
    size_t request_bytes;        /* sizeof its request struct */
    kafka_request_decode_fn decode;
    kafka_request_encode_fn encode;
};

/* Every API of KAFKA_APIS, in ApiKey order. */
extern const struct kafka_api kafka_apis[];
extern const size_t kafka_apis_count;

/* The row of api_key, or NULL for an ApiKey Cairn does not serve. */
const struct kafka_api *kafka_api_find(int16_t api_key);

/* kafka_error_from_rc(), the one map from RC_* codes to Kafka ErrorCodes,
 * is in common/kafka/kafka_error.h. */

/* --- ApiVersions (18) ---------------------------------------------------- */

/* The body is empty in v0..2; v3 (flexible, KIP-511) carries the
 * client's software name and version (compact strings) and tags; its
 * response is flexible too (compact array, tags; its header stays v0).
 * Kafka's rule for an ApiVersions version it does not support is to
 * answer, without reading the body, with ErrorCode UNSUPPORTED_VERSION
 * (35) in the v0 response layout, listing only its own ApiVersions entry
 * (18, min, max). So kafka_api_versions_request_decode() accepts any
 * version >= 0 and reads nothing above the maximum, and the response
 * encoder and decoder use the v0 layout for any version above it. */
struct kafka_ApiVersionsRequest {
    struct slice ClientSoftwareName;    /* v3+; else null */
    struct slice ClientSoftwareVersion; /* v3+; else null */
};

struct kafka_ApiVersion {
    int16_t ApiKey;
    int16_t MinVersion;
    int16_t MaxVersion;
};

struct kafka_ApiVersionsResponse {
    int16_t ErrorCode;
    const struct kafka_ApiVersion *ApiKeys;
    int32_t ApiKeysCnt;
    int32_t ThrottleTimeMs; /* v1+ (not in the v0 layout); default 0 */
};

MUST_CHECK int
kafka_api_versions_request_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_ApiVersionsRequest *out);
MUST_CHECK int kafka_api_versions_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ApiVersionsResponse *resp);
/* v0..2 write nothing (empty bodies); v3 the software name and version. */
MUST_CHECK int
kafka_api_versions_request_encode(struct writer *w, int16_t version,
                                  const struct kafka_ApiVersionsRequest *req);
MUST_CHECK int
kafka_api_versions_response_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_ApiVersionsResponse *out);

/* --- Metadata (3) -------------------------------------------------------- */

struct kafka_MetadataRequestTopic {
    struct slice Name;
};

struct kafka_MetadataRequest {
    /* Nullable: -1 (null) asks for all topics, 0 for none (v1+). v0 has
     * no null: its empty list asks for all, decoded as -1 (and -1
     * encodes as the empty list). */
    const struct kafka_MetadataRequestTopic *Topics;
    int32_t TopicsCnt;
    bool AllowAutoTopicCreation;             /* v4+; default true */
    bool IncludeClusterAuthorizedOperations; /* v8+; default false */
    bool IncludeTopicAuthorizedOperations;   /* v8+; default false */
};

struct kafka_MetadataResponseBroker {
    int32_t NodeId;
    struct slice Host;
    int32_t Port;
    struct slice Rack; /* v1+, nullable; default null */
};

struct kafka_MetadataResponsePartition {
    int16_t ErrorCode;
    int32_t PartitionIndex;
    int32_t LeaderId;
    int32_t LeaderEpoch; /* v7+; default -1 */
    const int32_t *ReplicaNodes;
    int32_t ReplicaNodesCnt;
    const int32_t *IsrNodes;
    int32_t IsrNodesCnt;
    const int32_t *OfflineReplicas; /* v5+; default empty */
    int32_t OfflineReplicasCnt;
};

struct kafka_MetadataResponseTopic {
    int16_t ErrorCode;
    struct slice Name;
    bool IsInternal; /* v1+; default false */
    const struct kafka_MetadataResponsePartition *Partitions;
    int32_t PartitionsCnt;
    int32_t TopicAuthorizedOperations; /* v8+; default INT32_MIN */
};

struct kafka_MetadataResponse {
    int32_t ThrottleTimeMs; /* v3+; default 0 */
    const struct kafka_MetadataResponseBroker *Brokers;
    int32_t BrokersCnt;
    struct slice ClusterId; /* v2+, nullable; default null */
    int32_t ControllerId;   /* v1+; default -1 */
    const struct kafka_MetadataResponseTopic *Topics;
    int32_t TopicsCnt;
    int32_t ClusterAuthorizedOperations; /* v8+; default INT32_MIN */
};

MUST_CHECK int kafka_metadata_request_decode(struct reader *r,
                                             int16_t version,
                                             struct arena *a,
                                             struct kafka_MetadataRequest *out);
MUST_CHECK int
kafka_metadata_response_encode(struct writer *w, int16_t version,
                               const struct kafka_MetadataResponse *resp);
MUST_CHECK int
kafka_metadata_request_encode(struct writer *w, int16_t version,
                              const struct kafka_MetadataRequest *req);
MUST_CHECK int
kafka_metadata_response_decode(struct reader *r, int16_t version,
                               struct arena *a,
                               struct kafka_MetadataResponse *out);

/* --- Produce (0) --------------------------------------------------------- */

struct kafka_PartitionProduceData {
    int32_t PartitionIndex;
    /* Nullable: the RecordBatch bytes exactly as sent, not parsed here
     * (common/kafka/record_batch.h validates them). */
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

/* --- Fetch (1) ----------------------------------------------------------- */

struct kafka_FetchPartition {
    int32_t PartitionIndex;
    int32_t CurrentLeaderEpoch; /* v9+; default -1 */
    int64_t FetchOffset;
    int64_t LogStartOffset;     /* v5+ (followers only); default -1 */
    int32_t PartitionMaxBytes;
};

struct kafka_FetchableTopic {
    struct slice Name;
    const struct kafka_FetchPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_ForgottenTopic {
    struct slice Name;
    const int32_t *ForgottenPartitionIndexes;
    int32_t ForgottenPartitionIndexesCnt;
};

struct kafka_FetchRequest {
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
};

struct kafka_AbortedTransaction {
    int64_t ProducerId;
    int64_t FirstOffset;
};

/* Records are not in memory when the broker answers: they stay in the
 * segment file and are spliced into the response (kafka_server.h). The
 * encoder writes the int32 length RecordsBytes (-1 null, 0 empty) and,
 * when it is > 0, calls the records callback with the body position right
 * after that length, where exactly RecordsBytes bytes must follow. */
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
    struct slice Topic;
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
 * programmer error. A non-RC_OK return stops encoding and is returned. */
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

/* --- ListOffsets (2) ----------------------------------------------------- */

struct kafka_ListOffsetsPartition {
    int32_t PartitionIndex;
    int32_t CurrentLeaderEpoch; /* v4+; default -1 */
    int64_t Timestamp;          /* -1 latest, -2 earliest, else a time */
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

/* --- CreateTopics (19) --------------------------------------------------- */

struct kafka_CreatableReplicaAssignment {
    int32_t PartitionIndex;
    const int32_t *BrokerIds;
    int32_t BrokerIdsCnt;
};

/* Kafka's schema spells this one "Createable". */
struct kafka_CreateableTopicConfig {
    struct slice Name;
    struct slice Value; /* nullable */
};

struct kafka_CreatableTopic {
    struct slice Name;
    int32_t NumPartitions;     /* -1: broker default or from Assignments */
    int16_t ReplicationFactor; /* -1: likewise (sent by kafkajs at v3) */
    /* Up to KAFKA_REQUEST_PARTITIONS_MAX entries. */
    const struct kafka_CreatableReplicaAssignment *Assignments;
    int32_t AssignmentsCnt;
    const struct kafka_CreateableTopicConfig *Configs;
    int32_t ConfigsCnt;
};

struct kafka_CreateTopicsRequest {
    const struct kafka_CreatableTopic *Topics;
    int32_t TopicsCnt;
    int32_t TimeoutMs;
    bool ValidateOnly; /* v1+; default false */
};

struct kafka_CreatableTopicResult {
    struct slice Name;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* v1+, nullable; default null */
};

struct kafka_CreateTopicsResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    const struct kafka_CreatableTopicResult *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int
kafka_create_topics_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_CreateTopicsRequest *out);
MUST_CHECK int kafka_create_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsResponse *resp);
MUST_CHECK int
kafka_create_topics_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_CreateTopicsRequest *req);
MUST_CHECK int
kafka_create_topics_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_CreateTopicsResponse *out);

/* --- DeleteTopics (20) --------------------------------------------------- */

struct kafka_DeleteTopicsRequest {
    const struct slice *TopicNames;
    int32_t TopicNamesCnt;
    int32_t TimeoutMs;
};

struct kafka_DeletableTopicResult {
    struct slice Name;
    int16_t ErrorCode;
};

struct kafka_DeleteTopicsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    const struct kafka_DeletableTopicResult *Responses;
    int32_t ResponsesCnt;
};

MUST_CHECK int
kafka_delete_topics_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DeleteTopicsRequest *out);
MUST_CHECK int kafka_delete_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsResponse *resp);
MUST_CHECK int
kafka_delete_topics_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_DeleteTopicsRequest *req);
MUST_CHECK int
kafka_delete_topics_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_DeleteTopicsResponse *out);

/* DeleteRecords (21): common/kafka/kafka_codec_records.h, included above. */

/* --- DescribeConfigs (32) ------------------------------------------------ */

struct kafka_DescribeConfigsResource {
    int8_t ResourceType; /* 2 topic, 4 broker */
    struct slice ResourceName;
    /* Nullable: -1 (null) asks for every key. */
    const struct slice *ConfigurationKeys;
    int32_t ConfigurationKeysCnt;
};

struct kafka_DescribeConfigsRequest {
    const struct kafka_DescribeConfigsResource *Resources;
    int32_t ResourcesCnt;
    bool IncludeSynonyms;      /* v1+; default false */
    bool IncludeDocumentation; /* v3+; default false */
};

struct kafka_DescribeConfigsSynonym {
    struct slice Name;
    struct slice Value; /* nullable */
    int8_t Source;
};

struct kafka_DescribeConfigsResourceResult {
    struct slice Name;
    struct slice Value; /* nullable */
    bool ReadOnly;
    bool IsDefault;      /* v0 only; default false */
    int8_t ConfigSource; /* v1+; default -1 */
    bool IsSensitive;
    const struct kafka_DescribeConfigsSynonym *Synonyms; /* v1+ */
    int32_t SynonymsCnt;
    int8_t ConfigType;          /* v3+; default 0 (unknown) */
    struct slice Documentation; /* v3+, nullable; default null */
};

struct kafka_DescribeConfigsResult {
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
    int8_t ResourceType;
    struct slice ResourceName;
    const struct kafka_DescribeConfigsResourceResult *Configs;
    int32_t ConfigsCnt;
};

struct kafka_DescribeConfigsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_DescribeConfigsResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int
kafka_describe_configs_request_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_DescribeConfigsRequest *out);
MUST_CHECK int kafka_describe_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsResponse *resp);
MUST_CHECK int kafka_describe_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsRequest *req);
MUST_CHECK int kafka_describe_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeConfigsResponse *out);

/* --- InitProducerId (22) ------------------------------------------------- */

struct kafka_InitProducerIdRequest {
    struct slice TransactionalId; /* nullable; null for idempotence */
    int32_t TransactionTimeoutMs;
};

struct kafka_InitProducerIdResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    int64_t ProducerId;
    int16_t ProducerEpoch;
};

MUST_CHECK int kafka_init_producer_id_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdRequest *out);
MUST_CHECK int kafka_init_producer_id_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdResponse *resp);
MUST_CHECK int kafka_init_producer_id_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdRequest *req);
MUST_CHECK int kafka_init_producer_id_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdResponse *out);

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

/* --- Consumer groups: common notes ---------------------------------------- */

/* FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
 * DescribeGroups, ListGroups, DeleteGroups (kafka_codec_group.c) and
 * OffsetCommit, OffsetFetch (kafka_codec_offsets.c): field lists from
 * shared/reference/kafka-protocol.md sections 4.6 to 4.14, checked
 * against apache/kafka's JSON schemas (3.8.0).
 * - Protocol metadata and assignments are bytes the broker never parses
 *   (section 4.20): slices, like record bytes.
 * - Arrays of groups, members, protocols and assignments are bounded by
 *   KAFKA_ARRAY_COUNT_MAX (and the arena); topics and partitions by
 *   KAFKA_REQUEST_TOPICS_MAX and KAFKA_REQUEST_PARTITIONS_MAX as
 *   elsewhere. */

/* --- FindCoordinator (10) ------------------------------------------------ */

struct kafka_FindCoordinatorRequest {
    struct slice Key; /* a group id, or a transactional id */
    int8_t KeyType;   /* v1+: 0 group, 1 transaction; default 0 */
};

/* v0 has only ErrorCode, NodeId, Host and Port. */
struct kafka_FindCoordinatorResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    struct slice ErrorMessage; /* v1+, nullable; default null */
    int32_t NodeId;
    struct slice Host;
    int32_t Port;
};

MUST_CHECK int kafka_find_coordinator_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorRequest *out);
MUST_CHECK int kafka_find_coordinator_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorResponse *resp);
MUST_CHECK int kafka_find_coordinator_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorRequest *req);
MUST_CHECK int kafka_find_coordinator_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorResponse *out);

/* --- JoinGroup (11) ------------------------------------------------------ */

struct kafka_JoinGroupRequestProtocol {
    struct slice Name;     /* an assignor: "range", "RoundRobinAssigner" */
    struct slice Metadata; /* bytes, opaque to the broker */
};

struct kafka_JoinGroupRequest {
    struct slice GroupId;
    int32_t SessionTimeoutMs;
    /* v1+; default -1, Kafka's placeholder: for v0 the coordinator uses
     * SessionTimeoutMs instead (kafka-protocol.md 4.7). */
    int32_t RebalanceTimeoutMs;
    struct slice MemberId;        /* "" on a first join */
    struct slice GroupInstanceId; /* v5+, nullable; default null */
    struct slice ProtocolType;    /* "consumer" */
    const struct kafka_JoinGroupRequestProtocol *Protocols;
    int32_t ProtocolsCnt;
};

struct kafka_JoinGroupResponseMember {
    struct slice MemberId;
    struct slice GroupInstanceId; /* v5+, nullable; default null */
    struct slice Metadata;        /* bytes */
};

struct kafka_JoinGroupResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    int16_t ErrorCode;
    int32_t GenerationId;
    struct slice ProtocolName;
    struct slice Leader;
    struct slice MemberId;
    /* Filled only in the leader's response; empty for followers. */
    const struct kafka_JoinGroupResponseMember *Members;
    int32_t MembersCnt;
};

MUST_CHECK int
kafka_join_group_request_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_JoinGroupRequest *out);
MUST_CHECK int
kafka_join_group_response_encode(struct writer *w, int16_t version,
                                 const struct kafka_JoinGroupResponse *resp);
MUST_CHECK int
kafka_join_group_request_encode(struct writer *w, int16_t version,
                                const struct kafka_JoinGroupRequest *req);
MUST_CHECK int
kafka_join_group_response_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_JoinGroupResponse *out);

/* --- Heartbeat (12) ------------------------------------------------------ */

struct kafka_HeartbeatRequest {
    struct slice GroupId;
    int32_t GenerationId;
    struct slice MemberId;
    struct slice GroupInstanceId; /* v3+, nullable; default null */
};

struct kafka_HeartbeatResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
};

MUST_CHECK int kafka_heartbeat_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_HeartbeatRequest *out);
MUST_CHECK int
kafka_heartbeat_response_encode(struct writer *w, int16_t version,
                                const struct kafka_HeartbeatResponse *resp);
MUST_CHECK int
kafka_heartbeat_request_encode(struct writer *w, int16_t version,
                               const struct kafka_HeartbeatRequest *req);
MUST_CHECK int kafka_heartbeat_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_HeartbeatResponse *out);

/* --- LeaveGroup (13) ----------------------------------------------------- */

struct kafka_MemberIdentity {
    struct slice MemberId;
    struct slice GroupInstanceId; /* nullable */
};

/* v0..2 name one member in MemberId; v3 names a batch in Members. */
struct kafka_LeaveGroupRequest {
    struct slice GroupId;
    struct slice MemberId; /* v0-2 only; default "" */
    const struct kafka_MemberIdentity *Members; /* v3+; default empty */
    int32_t MembersCnt;
};

struct kafka_MemberResponse {
    struct slice MemberId;
    struct slice GroupInstanceId; /* nullable */
    int16_t ErrorCode;
};

struct kafka_LeaveGroupResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    const struct kafka_MemberResponse *Members; /* v3+; default empty */
    int32_t MembersCnt;
};

MUST_CHECK int
kafka_leave_group_request_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_LeaveGroupRequest *out);
MUST_CHECK int kafka_leave_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_LeaveGroupResponse *resp);
MUST_CHECK int
kafka_leave_group_request_encode(struct writer *w, int16_t version,
                                 const struct kafka_LeaveGroupRequest *req);
MUST_CHECK int
kafka_leave_group_response_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_LeaveGroupResponse *out);

/* --- SyncGroup (14) ------------------------------------------------------ */

struct kafka_SyncGroupRequestAssignment {
    struct slice MemberId;
    struct slice Assignment; /* bytes, opaque to the broker */
};

struct kafka_SyncGroupRequest {
    struct slice GroupId;
    int32_t GenerationId;
    struct slice MemberId;
    struct slice GroupInstanceId; /* v3+, nullable; default null */
    /* The leader's assignments; followers send an empty array. */
    const struct kafka_SyncGroupRequestAssignment *Assignments;
    int32_t AssignmentsCnt;
};

struct kafka_SyncGroupResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    struct slice Assignment; /* bytes: empty, not null, if none */
};

MUST_CHECK int
kafka_sync_group_request_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_SyncGroupRequest *out);
MUST_CHECK int
kafka_sync_group_response_encode(struct writer *w, int16_t version,
                                 const struct kafka_SyncGroupResponse *resp);
MUST_CHECK int
kafka_sync_group_request_encode(struct writer *w, int16_t version,
                                const struct kafka_SyncGroupRequest *req);
MUST_CHECK int
kafka_sync_group_response_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_SyncGroupResponse *out);

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

struct kafka_OffsetFetchRequest {
    struct slice GroupId;
    /* Nullable from v2: -1 (null) asks for every partition with a
     * committed offset. A null array at v1 is RC_MALFORMED. */
    const struct kafka_OffsetFetchRequestTopic *Topics;
    int32_t TopicsCnt;
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

/* ErrorCode (group level) comes after Topics on the wire. */
struct kafka_OffsetFetchResponse {
    int32_t ThrottleTimeMs; /* v3+; default 0 */
    const struct kafka_OffsetFetchResponseTopic *Topics;
    int32_t TopicsCnt;
    int16_t ErrorCode; /* v2+; default 0 */
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

/* --- DescribeGroups (15) ------------------------------------------------- */

struct kafka_DescribeGroupsRequest {
    const struct slice *Groups; /* group ids */
    int32_t GroupsCnt;
    bool IncludeAuthorizedOperations; /* v3+; default false */
};

struct kafka_DescribedGroupMember {
    struct slice MemberId;
    struct slice GroupInstanceId; /* v4+, nullable; default null */
    struct slice ClientId;
    struct slice ClientHost;
    struct slice MemberMetadata;   /* bytes */
    struct slice MemberAssignment; /* bytes */
};

struct kafka_DescribedGroup {
    int16_t ErrorCode;
    struct slice GroupId;
    struct slice GroupState; /* "Empty", "Stable", "Dead", ... */
    struct slice ProtocolType;
    struct slice ProtocolData; /* the chosen assignor */
    const struct kafka_DescribedGroupMember *Members;
    int32_t MembersCnt;
    int32_t AuthorizedOperations; /* v3+; default INT32_MIN */
};

struct kafka_DescribeGroupsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    const struct kafka_DescribedGroup *Groups;
    int32_t GroupsCnt;
};

MUST_CHECK int
kafka_describe_groups_request_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_DescribeGroupsRequest *out);
MUST_CHECK int kafka_describe_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsResponse *resp);
MUST_CHECK int kafka_describe_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsRequest *req);
MUST_CHECK int kafka_describe_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeGroupsResponse *out);

/* --- ListGroups (16) ----------------------------------------------------- */

/* The body is empty in v0..2. */
struct kafka_ListGroupsRequest {
    const struct slice *StatesFilter; /* v4+, never parsed: empty */
    int32_t StatesFilterCnt;
    const struct slice *TypesFilter; /* v5+, never parsed: empty */
    int32_t TypesFilterCnt;
};

struct kafka_ListedGroup {
    struct slice GroupId;
    struct slice ProtocolType;
};

struct kafka_ListGroupsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    const struct kafka_ListedGroup *Groups;
    int32_t GroupsCnt;
};

MUST_CHECK int
kafka_list_groups_request_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_ListGroupsRequest *out);
MUST_CHECK int kafka_list_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListGroupsResponse *resp);
/* Writes nothing (v0..2 bodies are empty). */
MUST_CHECK int
kafka_list_groups_request_encode(struct writer *w, int16_t version,
                                 const struct kafka_ListGroupsRequest *req);
MUST_CHECK int
kafka_list_groups_response_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_ListGroupsResponse *out);

/* --- DeleteGroups (42) --------------------------------------------------- */

/* Kafka's schema spells the field "GroupsNames". */
struct kafka_DeleteGroupsRequest {
    const struct slice *GroupsNames;
    int32_t GroupsNamesCnt;
};

struct kafka_DeletableGroupResult {
    struct slice GroupId;
    int16_t ErrorCode;
};

/* ThrottleTimeMs is in every version, v0 too. */
struct kafka_DeleteGroupsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_DeletableGroupResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int
kafka_delete_groups_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DeleteGroupsRequest *out);
MUST_CHECK int kafka_delete_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsResponse *resp);
MUST_CHECK int
kafka_delete_groups_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_DeleteGroupsRequest *req);
MUST_CHECK int
kafka_delete_groups_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_DeleteGroupsResponse *out);

#endif
