/* Kafka codec (common/kafka/kafka_codec.h): DescribeLogDirs v0..4
 * (flexible from v2) and DescribeCluster v0..1 (flexible from v0), after
 * apache/kafka's DescribeLogDirs{Request,Response}.json and
 * DescribeCluster{Request,Response}.json. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_in(int16_t version, int16_t min, int16_t max)
{
    return version >= min && version <= max;
}

/* --- DescribeLogDirs: request --------------------------------------------- */

int kafka_describe_log_dirs_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeLogDirsRequest *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_LOG_DIRS_VERSION_MIN,
                    KAFKA_DESCRIBE_LOG_DIRS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_LOG_DIRS_FLEXIBLE);
    /* topic, partitions count: 6 bytes at least. */
    struct kafka_DescribableLogDirTopic *ts = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*ts), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, true);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        ts[i].Topic = reader_string(r);
        ts[i].Partitions =
            kafka_codec__read_i32s(r, a, &ts[i].PartitionsCnt, false);
        kafka_codec__tags(r);
    }
    out->Topics = ts;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_describe_log_dirs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeLogDirsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_LOG_DIRS_VERSION_MIN,
                               KAFKA_DESCRIBE_LOG_DIRS_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_DESCRIBE_LOG_DIRS_FLEXIBLE);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, true);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        writer_string_slice(w, req->Topics[i].Topic);
        kafka_codec__write_i32s(w, req->Topics[i].Partitions,
                                req->Topics[i].PartitionsCnt, false);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- DescribeLogDirs: response -------------------------------------------- */

static void log_dirs_topic_encode(struct writer *w,
                                  const struct kafka_DescribeLogDirsTopic *t)
{
    writer_string_slice(w, t->Name);
    kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
    for (int32_t k = 0; k < t->PartitionsCnt; k++) {
        const struct kafka_DescribeLogDirsPartition *p = &t->Partitions[k];
        writer_i32(w, p->PartitionIndex);
        writer_i64(w, p->PartitionSize);
        writer_i64(w, p->OffsetLag);
        writer_bool(w, p->IsFutureKey);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
}

int kafka_describe_log_dirs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeLogDirsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_LOG_DIRS_VERSION_MIN,
                               KAFKA_DESCRIBE_LOG_DIRS_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_DESCRIBE_LOG_DIRS_FLEXIBLE);
    writer_i32(w, resp->ThrottleTimeMs);
    if (version >= 3) {
        writer_i16(w, resp->ErrorCode);
    }
    kafka_codec__write_count(w, resp->ResultsCnt, resp->Results, false);
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        const struct kafka_DescribeLogDirsResult *d = &resp->Results[i];
        writer_i16(w, d->ErrorCode);
        writer_string_slice(w, d->LogDir);
        kafka_codec__write_count(w, d->TopicsCnt, d->Topics, false);
        for (int32_t j = 0; j < d->TopicsCnt; j++) {
            log_dirs_topic_encode(w, &d->Topics[j]);
        }
        if (version >= 4) {
            writer_i64(w, d->TotalBytes);
            writer_i64(w, d->UsableBytes);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void log_dirs_topic_decode(struct reader *r, struct arena *a,
                                  struct kafka_DescribeLogDirsTopic *t)
{
    t->Name = reader_string(r);
    /* index, size, lag, future: 21 bytes. */
    struct kafka_DescribeLogDirsPartition *ps = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*ps), 21,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t k = 0; k < t->PartitionsCnt && r->rc == RC_OK; k++) {
        ps[k].PartitionIndex = reader_i32(r);
        ps[k].PartitionSize = reader_i64(r);
        ps[k].OffsetLag = reader_i64(r);
        ps[k].IsFutureKey = reader_bool(r);
        kafka_codec__tags(r);
    }
    t->Partitions = ps;
    kafka_codec__tags(r);
}

int kafka_describe_log_dirs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeLogDirsResponse *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_LOG_DIRS_VERSION_MIN,
                    KAFKA_DESCRIBE_LOG_DIRS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_LOG_DIRS_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = version >= 3 ? reader_i16(r) : 0;
    /* error, dir, topics count: 8 bytes at least. */
    struct kafka_DescribeLogDirsResult *ds = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*ds), 8,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt && r->rc == RC_OK; i++) {
        ds[i].ErrorCode = reader_i16(r);
        ds[i].LogDir = reader_string(r);
        /* name, partitions count: 6 bytes at least. */
        struct kafka_DescribeLogDirsTopic *ts = kafka_codec__array(
            r, a, &ds[i].TopicsCnt, sizeof(*ts), 6,
            (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
        for (int32_t j = 0; j < ds[i].TopicsCnt && r->rc == RC_OK; j++) {
            log_dirs_topic_decode(r, a, &ts[j]);
        }
        ds[i].Topics = ts;
        ds[i].TotalBytes = version >= 4 ? reader_i64(r) : -1;
        ds[i].UsableBytes = version >= 4 ? reader_i64(r) : -1;
        kafka_codec__tags(r);
    }
    out->Results = ds;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

/* --- DescribeCluster ------------------------------------------------------ */

int kafka_describe_cluster_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeClusterRequest *out)
{
    (void)a;
    if (!version_in(version, KAFKA_DESCRIBE_CLUSTER_VERSION_MIN,
                    KAFKA_DESCRIBE_CLUSTER_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_CLUSTER_FLEXIBLE);
    out->IncludeClusterAuthorizedOperations = reader_bool(r);
    out->EndpointType = version >= 1 ? reader_i8(r) : 1;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_describe_cluster_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeClusterRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CLUSTER_VERSION_MIN,
                               KAFKA_DESCRIBE_CLUSTER_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_DESCRIBE_CLUSTER_FLEXIBLE);
    writer_bool(w, req->IncludeClusterAuthorizedOperations);
    if (version >= 1) {
        writer_i8(w, req->EndpointType);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_describe_cluster_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeClusterResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CLUSTER_VERSION_MIN,
                               KAFKA_DESCRIBE_CLUSTER_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_DESCRIBE_CLUSTER_FLEXIBLE);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_nullable_string_slice(w, resp->ErrorMessage);
    if (version >= 1) {
        writer_i8(w, resp->EndpointType);
    }
    writer_string_slice(w, resp->ClusterId);
    writer_i32(w, resp->ControllerId);
    kafka_codec__write_count(w, resp->BrokersCnt, resp->Brokers, false);
    for (int32_t i = 0; i < resp->BrokersCnt; i++) {
        const struct kafka_DescribeClusterBroker *b = &resp->Brokers[i];
        writer_i32(w, b->BrokerId);
        writer_string_slice(w, b->Host);
        writer_i32(w, b->Port);
        writer_nullable_string_slice(w, b->Rack);
        kafka_codec__write_tags(w);
    }
    writer_i32(w, resp->ClusterAuthorizedOperations);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_describe_cluster_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeClusterResponse *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_CLUSTER_VERSION_MIN,
                    KAFKA_DESCRIBE_CLUSTER_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_CLUSTER_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ErrorMessage = reader_nullable_string(r);
    out->EndpointType = version >= 1 ? reader_i8(r) : 1;
    out->ClusterId = reader_string(r);
    out->ControllerId = reader_i32(r);
    /* id, host, port, rack: 12 bytes at least. */
    struct kafka_DescribeClusterBroker *bs = kafka_codec__array(
        r, a, &out->BrokersCnt, sizeof(*bs), 12,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->BrokersCnt && r->rc == RC_OK; i++) {
        bs[i].BrokerId = reader_i32(r);
        bs[i].Host = reader_string(r);
        bs[i].Port = reader_i32(r);
        bs[i].Rack = reader_nullable_string(r);
        kafka_codec__tags(r);
    }
    out->Brokers = bs;
    out->ClusterAuthorizedOperations = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
