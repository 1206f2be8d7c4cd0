/* Kafka request and response bodies as C structs, and back: the pure codec
 * under the Kafka handlers. No I/O, no clock, no globals but const
 * tables; any thread, one message per call. Bodies only: the request
 * header is parsed by broker/kafka/kafka_server.c, which also adds the response
 * header (correlation id) and the size prefix.
 *
 * APIs and versions (shared/reference/kafka-protocol.md sections 1 and 4).
 * Flexible versions (KIP-482) share their field lists with the classic
 * ones: the decoder or encoder puts its reader or writer in compact mode
 * (strings, bytes and arrays in their compact forms) and ends every
 * struct with a tagged-field section (kafka_codec_internal.h); the
 * request header v2 and response header v1 are common/kafka/kafka_frame.h's.
 * The structs and functions of each file below are in the header of the
 * same name, which this one includes.
 *
 *   ApiKey  API                  versions flexible  file
 *    18     ApiVersions          0..3     3+        kafka_codec.c
 *     3     Metadata             0..12    9+        kafka_codec.c
 *     0     Produce              3..11    9+        kafka_codec_produce.c
 *     1     Fetch                4..16    12+       kafka_codec_fetch.c
 *     2     ListOffsets          0..8     6+        kafka_codec_list_offsets.c
 *    19     CreateTopics         0..7     5+        kafka_codec_admin.c
 *    20     DeleteTopics         0..6     4+        kafka_codec_admin.c
 *    21     DeleteRecords        0..2     2+        kafka_codec_admin.c
 *    32     DescribeConfigs      0..4     4+        kafka_codec_admin.c
 *    22     InitProducerId       0..5     2+        kafka_codec_admin.c
 *    23     OffsetForLeaderEpoch 0..4     4+        kafka_codec_epoch.c
 *    10     FindCoordinator      0..5     3+        kafka_codec_group.c
 *    11     JoinGroup            0..9     6+        kafka_codec_group.c
 *    12     Heartbeat            0..4     4+        kafka_codec_group.c
 *    13     LeaveGroup           0..5     4+        kafka_codec_group.c
 *    14     SyncGroup            0..5     4+        kafka_codec_group.c
 *    15     DescribeGroups       0..5     5+        kafka_codec_group.c
 *    16     ListGroups           0..5     3+        kafka_codec_group.c
 *    42     DeleteGroups         0..2     2+        kafka_codec_group.c
 *     8     OffsetCommit         0..9     8+        kafka_codec_offsets.c
 *     9     OffsetFetch          0..9     6+        kafka_codec_offsets.c
 *    37     CreatePartitions     0..3     2+        kafka_codec_partitions.c
 *    35     DescribeLogDirs      0..4     2+        kafka_codec_cluster.c
 *    60     DescribeCluster      0..1     0+        kafka_codec_cluster.c
 *    43     ElectLeaders         0..2     2+        kafka_codec_elect.c
 *    33     AlterConfigs         0..2     2+        kafka_codec_configs.c
 *    44     IncrementalAlterConfigs 0..1  1+        kafka_codec_configs.c
 *
 * Every maximum is Apache Kafka 3.8's, every minimum the oldest Kafka 3.9
 * serves, but for Produce and Fetch: their versions below 3 and 4 carry
 * message format v0/v1, which Cairn refuses as Kafka 4.0 does (the
 * connection is closed). tests/unit/common/kafka/test_kafka_schema.c
 * checks these ranges and every served version's field list against
 * Kafka's JSON message schemas (tests/schema/gen_schema_table.py).
 *
 * These are what the codec parses and what ApiVersions advertises; the
 * broker serves every one of them (kafka_handlers.c dispatches by the same
 * table).
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
 *   nullable).
 * - Bytes left over after the last field are ignored, as Kafka's own
 *   generated readers ignore them: librdkafka 2.0.2 ends its ListGroups
 *   v4 request with a second empty tagged-field section. The reader's pos
 *   shows where decoding stopped; the tests check it, and the field
 *   lists are checked against Kafka's schemas
 *   (tests/unit/common/kafka/test_kafka_schema.c).
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
      DeleteGroupsRequest)                                             \
    X(CREATE_PARTITIONS, 37, "CreatePartitions", create_partitions,    \
      CreatePartitionsRequest)                                         \
    X(DESCRIBE_LOG_DIRS, 35, "DescribeLogDirs", describe_log_dirs,     \
      DescribeLogDirsRequest)                                          \
    X(DESCRIBE_CLUSTER, 60, "DescribeCluster", describe_cluster,       \
      DescribeClusterRequest)                                          \
    X(ELECT_LEADERS, 43, "ElectLeaders", elect_leaders,                \
      ElectLeadersRequest)                                              \
    X(ALTER_CONFIGS, 33, "AlterConfigs", alter_configs,                \
      AlterConfigsRequest)                                             \
    X(INCREMENTAL_ALTER_CONFIGS, 44, "IncrementalAlterConfigs",        \
      incremental_alter_configs, IncrementalAlterConfigsRequest) \
    X(ALTER_PARTITION_REASSIGNMENTS, 45, "AlterPartitionReassignments", \
      alter_partition_reassignments,                                   \
      AlterPartitionReassignmentsRequest)                              \
    X(LIST_PARTITION_REASSIGNMENTS, 46, "ListPartitionReassignments",  \
      list_partition_reassignments, ListPartitionReassignmentsRequest) \
    X(UNREGISTER_BROKER, 64, "UnregisterBroker", unregister_broker,    \
      UnregisterBrokerRequest)

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
#define KAFKA_METADATA_VERSION_MAX 12

/* A UUID (Kafka's topic ids, KIP-516): 16 bytes on the wire, all zero
 * for none (Kafka's Uuid.ZERO_UUID). */
struct kafka_uuid {
    uint8_t bytes[16];
};

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

/* v9+ is flexible. v10 adds TopicId and lets Name be null; Kafka serves
 * a request by id only from v12 (a null name or an id in v10 or v11 is
 * INVALID_REQUEST there). */
struct kafka_MetadataRequestTopic {
    struct slice Name;          /* nullable v10+ */
    struct kafka_uuid TopicId;  /* v10+; default zero (by name) */
};

struct kafka_MetadataRequest {
    /* Nullable: -1 (null) asks for all topics, 0 for none (v1+). v0 has
     * no null: its empty list asks for all, decoded as -1 (and -1
     * encodes as the empty list). */
    const struct kafka_MetadataRequestTopic *Topics;
    int32_t TopicsCnt;
    bool AllowAutoTopicCreation;             /* v4+; default true */
    bool IncludeClusterAuthorizedOperations; /* v8..10; default false */
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
    struct kafka_uuid TopicId;         /* v10+; default zero */
    /* Name is nullable from v12 (an unknown TopicId is answered with a
     * null name). */
};

struct kafka_MetadataResponse {
    int32_t ThrottleTimeMs; /* v3+; default 0 */
    const struct kafka_MetadataResponseBroker *Brokers;
    int32_t BrokersCnt;
    struct slice ClusterId; /* v2+, nullable; default null */
    int32_t ControllerId;   /* v1+; default -1 */
    const struct kafka_MetadataResponseTopic *Topics;
    int32_t TopicsCnt;
    int32_t ClusterAuthorizedOperations; /* v8..10; default INT32_MIN */
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


/* The APIs' own structs and functions, one header per codec file. */
#include "common/kafka/kafka_codec_produce.h"
#include "common/kafka/kafka_codec_fetch.h"
#include "common/kafka/kafka_codec_list_offsets.h"
#include "common/kafka/kafka_codec_admin.h"
#include "common/kafka/kafka_codec_epoch.h"
#include "common/kafka/kafka_codec_group.h"
#include "common/kafka/kafka_codec_offsets.h"
#include "common/kafka/kafka_codec_partitions.h"
#include "common/kafka/kafka_codec_cluster.h"
#include "common/kafka/kafka_codec_elect.h"
#include "common/kafka/kafka_codec_configs.h"
#include "common/kafka/kafka_codec_reassign.h"

#endif
