/* Kafka codec (common/kafka/kafka_codec.h): OffsetForLeaderEpoch v0..4. Field
 * lists follow shared/reference/kafka-protocol.md section 4.19, checked
 * against apache/kafka OffsetForLeaderEpochRequest.json and
 * OffsetForLeaderEpochResponse.json: v1 adds LeaderEpoch to the response
 * partitions, v2 CurrentLeaderEpoch to the request partitions and
 * ThrottleTimeMs to the response, v3 ReplicaId to the request; v4 is v3
 * made flexible (KIP-482), with no tagged field defined. Pure: no I/O, no
 * clock, no globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

/* The first flexible version. */
#define EPOCH__FLEXIBLE 4

static bool epoch_version_ok(int16_t version)
{
    return version >= KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN &&
           version <= KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX;
}

/* --- Request ------------------------------------------------------------- */

static void epoch_topic_decode(struct reader *r, int16_t version,
                               struct arena *a,
                               struct kafka_OffsetForLeaderTopic *t)
{
    t->Topic = reader_string(r);
    /* partition, (current epoch,) epoch: 8 bytes, 12 from v2. */
    size_t part_bytes = version >= 2 ? 12 : 8;
    struct kafka_OffsetForLeaderPartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), part_bytes,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        parts[i].Partition = reader_i32(r);
        parts[i].CurrentLeaderEpoch = version >= 2 ? reader_i32(r) : -1;
        parts[i].LeaderEpoch = reader_i32(r);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_offset_for_leader_epoch_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_OffsetForLeaderEpochRequest *out)
{
    if (!epoch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= EPOCH__FLEXIBLE);
    out->ReplicaId = version >= 3 ? reader_i32(r) : -2;
    /* topic, partitions count: 6 bytes at least. */
    struct kafka_OffsetForLeaderTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        epoch_topic_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_offset_for_leader_epoch_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetForLeaderEpochRequest *req)
{
    kafka_codec__check_version(version,
                               KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN,
                               KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= EPOCH__FLEXIBLE);
    if (version >= 3) {
        writer_i32(w, req->ReplicaId);
    }
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_OffsetForLeaderTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Topic);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OffsetForLeaderPartition *p =
                &t->Partitions[j];
            writer_i32(w, p->Partition);
            if (version >= 2) {
                writer_i32(w, p->CurrentLeaderEpoch);
            }
            writer_i32(w, p->LeaderEpoch);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Response ------------------------------------------------------------ */

int kafka_offset_for_leader_epoch_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetForLeaderEpochResponse *resp)
{
    kafka_codec__check_version(version,
                               KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MIN,
                               KAFKA_OFFSET_FOR_LEADER_EPOCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= EPOCH__FLEXIBLE);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_OffsetForLeaderTopicResult *t = &resp->Topics[i];
        writer_string_slice(w, t->Topic);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_EpochEndOffset *p = &t->Partitions[j];
            writer_i16(w, p->ErrorCode);
            writer_i32(w, p->Partition);
            if (version >= 1) {
                writer_i32(w, p->LeaderEpoch);
            }
            writer_i64(w, p->EndOffset);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void
epoch_topic_result_decode(struct reader *r, int16_t version, struct arena *a,
                          struct kafka_OffsetForLeaderTopicResult *t)
{
    t->Topic = reader_string(r);
    /* error, partition, (epoch,) end offset: 14 bytes, 18 from v1. */
    size_t part_bytes = version >= 1 ? 18 : 14;
    struct kafka_EpochEndOffset *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), part_bytes,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        parts[i].ErrorCode = reader_i16(r);
        parts[i].Partition = reader_i32(r);
        parts[i].LeaderEpoch = version >= 1 ? reader_i32(r) : -1;
        parts[i].EndOffset = reader_i64(r);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_offset_for_leader_epoch_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_OffsetForLeaderEpochResponse *out)
{
    if (!epoch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= EPOCH__FLEXIBLE);
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    /* topic, partitions count: 6 bytes at least. */
    struct kafka_OffsetForLeaderTopicResult *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        epoch_topic_result_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
