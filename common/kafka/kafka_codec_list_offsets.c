/* Kafka codec (common/kafka/kafka_codec.h): ListOffsets v0..8 (v0,
 * Burrow's: a MaxNumOffsets per partition asked, and a list of offsets
 * answered; v6+ flexible). Field lists follow
 * shared/reference/kafka-protocol.md section 4.5, checked against
 * apache/kafka ListOffsetsRequest.json and ListOffsetsResponse.json: v1
 * drops MaxNumOffsets and answers one Timestamp and Offset, v2 adds
 * IsolationLevel and ThrottleTimeMs, v4 CurrentLeaderEpoch and
 * LeaderEpoch; v3, v5, v7 and v8 change no field (v7 and v8 only allow
 * new Timestamp values, which the broker checks). Pure: no I/O, no clock,
 * no globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

/* The first flexible version. */
#define LIST_OFFSETS__FLEXIBLE 6

static bool list_offsets_version_ok(int16_t version)
{
    return version >= KAFKA_LIST_OFFSETS_VERSION_MIN &&
           version <= KAFKA_LIST_OFFSETS_VERSION_MAX;
}

/* --- Request ------------------------------------------------------------- */

static void list_offsets_topic_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_ListOffsetsTopic *t)
{
    t->Name = reader_string(r);
    /* index, timestamp: 12 bytes at least (v1..3). */
    struct kafka_ListOffsetsPartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 12,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        parts[i].PartitionIndex = reader_i32(r);
        parts[i].CurrentLeaderEpoch = version >= 4 ? reader_i32(r) : -1;
        parts[i].Timestamp = reader_i64(r);
        parts[i].MaxNumOffsets = version == 0 ? reader_i32(r) : 1;
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_list_offsets_request_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_ListOffsetsRequest *out)
{
    if (!list_offsets_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= LIST_OFFSETS__FLEXIBLE);
    out->ReplicaId = reader_i32(r);
    out->IsolationLevel = version >= 2 ? reader_i8(r) : 0;
    struct kafka_ListOffsetsTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        list_offsets_topic_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_list_offsets_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListOffsetsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_LIST_OFFSETS_VERSION_MIN,
                               KAFKA_LIST_OFFSETS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= LIST_OFFSETS__FLEXIBLE);
    writer_i32(w, req->ReplicaId);
    if (version >= 2) {
        writer_i8(w, req->IsolationLevel);
    }
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_ListOffsetsTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            writer_i32(w, t->Partitions[j].PartitionIndex);
            if (version >= 4) {
                writer_i32(w, t->Partitions[j].CurrentLeaderEpoch);
            }
            writer_i64(w, t->Partitions[j].Timestamp);
            if (version == 0) {
                writer_i32(w, t->Partitions[j].MaxNumOffsets);
            }
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Response ------------------------------------------------------------ */

static void list_offsets_partition_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListOffsetsPartitionResponse *p)
{
    writer_i32(w, p->PartitionIndex);
    writer_i16(w, p->ErrorCode);
    if (version == 0) { /* old_style_offsets: [Offset] or [] */
        writer_i32(w, p->Offset >= 0 ? 1 : 0);
        if (p->Offset >= 0) {
            writer_i64(w, p->Offset);
        }
        return;
    }
    writer_i64(w, p->Timestamp);
    writer_i64(w, p->Offset);
    if (version >= 4) {
        writer_i32(w, p->LeaderEpoch);
    }
    kafka_codec__write_tags(w);
}

int kafka_list_offsets_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListOffsetsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_LIST_OFFSETS_VERSION_MIN,
                               KAFKA_LIST_OFFSETS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= LIST_OFFSETS__FLEXIBLE);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_ListOffsetsTopicResponse *t = &resp->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            list_offsets_partition_encode(w, version, &t->Partitions[j]);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void
list_offsets_partition_decode(struct reader *r, int16_t version,
                              struct arena *a,
                              struct kafka_ListOffsetsPartitionResponse *p)
{
    p->PartitionIndex = reader_i32(r);
    p->ErrorCode = reader_i16(r);
    p->Timestamp = -1;
    p->Offset = -1;
    p->LeaderEpoch = -1;
    if (version == 0) { /* the first of old_style_offsets, if any */
        int32_t n = 0;
        const int64_t *offs = kafka_codec__read_i64s(r, a, &n);
        p->Offset = n > 0 ? offs[0] : -1;
        return;
    }
    p->Timestamp = reader_i64(r);
    p->Offset = reader_i64(r);
    p->LeaderEpoch = version >= 4 ? reader_i32(r) : -1;
    kafka_codec__tags(r);
}

static void
list_offsets_topic_response_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_ListOffsetsTopicResponse *t)
{
    t->Name = reader_string(r);
    /* index, error, then timestamp and offset (v1+) or an offsets count
     * (v0): 10 bytes at least. */
    struct kafka_ListOffsetsPartitionResponse *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 10,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        list_offsets_partition_decode(r, version, a, &parts[i]);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_list_offsets_response_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_ListOffsetsResponse *out)
{
    if (!list_offsets_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= LIST_OFFSETS__FLEXIBLE);
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    struct kafka_ListOffsetsTopicResponse *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        list_offsets_topic_response_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
