/* The Kafka codec's structs and functions for DescribeLogDirs (35) and
 * DescribeCluster (60), implemented in common/kafka/kafka_codec_cluster.c.
 * Include common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_CLUSTER_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

#define KAFKA_DESCRIBE_LOG_DIRS_VERSION_MIN 0
#define KAFKA_DESCRIBE_LOG_DIRS_VERSION_MAX 4
#define KAFKA_DESCRIBE_LOG_DIRS_FLEXIBLE 2
#define KAFKA_DESCRIBE_CLUSTER_VERSION_MIN 0
#define KAFKA_DESCRIBE_CLUSTER_VERSION_MAX 1
#define KAFKA_DESCRIBE_CLUSTER_FLEXIBLE 0

/* --- DescribeLogDirs (35) ------------------------------------------------
 * v1 changes no field, v2 is flexible, v3 adds the top-level ErrorCode,
 * v4 each directory's TotalBytes and UsableBytes. */

struct kafka_DescribableLogDirTopic {
    struct slice Topic;
    const int32_t *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_DescribeLogDirsRequest {
    /* Nullable: -1 (null) asks for every partition. */
    const struct kafka_DescribableLogDirTopic *Topics;
    int32_t TopicsCnt;
};

struct kafka_DescribeLogDirsPartition {
    int32_t PartitionIndex;
    int64_t PartitionSize;
    int64_t OffsetLag;
    bool IsFutureKey;
};

struct kafka_DescribeLogDirsTopic {
    struct slice Name;
    const struct kafka_DescribeLogDirsPartition *Partitions;
    int32_t PartitionsCnt;
};

struct kafka_DescribeLogDirsResult {
    int16_t ErrorCode;
    struct slice LogDir;
    const struct kafka_DescribeLogDirsTopic *Topics;
    int32_t TopicsCnt;
    int64_t TotalBytes;  /* v4+; default -1 */
    int64_t UsableBytes; /* v4+; default -1 */
};

struct kafka_DescribeLogDirsResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode; /* v3+; default 0 */
    const struct kafka_DescribeLogDirsResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int kafka_describe_log_dirs_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeLogDirsRequest *out);
MUST_CHECK int kafka_describe_log_dirs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeLogDirsResponse *resp);
MUST_CHECK int kafka_describe_log_dirs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeLogDirsRequest *req);
MUST_CHECK int kafka_describe_log_dirs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeLogDirsResponse *out);

/* --- DescribeCluster (60) ------------------------------------------------
 * Flexible from v0; v1 adds EndpointType (1 brokers, 2 controllers) to
 * request and response. */

struct kafka_DescribeClusterRequest {
    bool IncludeClusterAuthorizedOperations;
    int8_t EndpointType; /* v1+; default 1 */
};

struct kafka_DescribeClusterBroker {
    int32_t BrokerId;
    struct slice Host;
    int32_t Port;
    struct slice Rack; /* nullable; default null */
};

struct kafka_DescribeClusterResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable; default null */
    int8_t EndpointType;       /* v1+; default 1 */
    struct slice ClusterId;
    int32_t ControllerId;
    const struct kafka_DescribeClusterBroker *Brokers;
    int32_t BrokersCnt;
    int32_t ClusterAuthorizedOperations; /* INT32_MIN: not asked */
};

MUST_CHECK int kafka_describe_cluster_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeClusterRequest *out);
MUST_CHECK int kafka_describe_cluster_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeClusterResponse *resp);
MUST_CHECK int kafka_describe_cluster_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeClusterRequest *req);
MUST_CHECK int kafka_describe_cluster_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeClusterResponse *out);

#endif
