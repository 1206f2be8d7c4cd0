/* Kafka codec (common/kafka/kafka_codec.h): the consumer-group offset APIs,
 * OffsetCommit v0..9 and OffsetFetch v0..9 (the other group APIs are in
 * kafka_codec_group.c). Field lists follow
 * shared/reference/kafka-protocol.md sections 4.11 and 4.12, checked
 * against apache/kafka (3.8.0) OffsetCommit{Request,Response}.json and
 * OffsetFetch{Request,Response}.json:
 * - OffsetCommit: v0 has no GenerationId or MemberId (kafka-python's and
 *   Sarama's commits outside a generation), v1 adds them and a
 *   per-partition CommitTimestamp (v1 only); RetentionTimeMs only in
 *   v2-4; v3 adds ThrottleTimeMs to the response, v6
 *   CommittedLeaderEpoch, v7 GroupInstanceId; v8 is flexible; v9 (KIP-848)
 *   has v8's layout.
 * - OffsetFetch: v0 is v1's layout (Kafka reads both from the group
 *   coordinator); v2 makes Topics nullable (null = all) and adds the
 *   group-level ErrorCode after the topics, v3 ThrottleTimeMs, v5
 *   CommittedLeaderEpoch; v6 is flexible; v7 adds RequireStable; v8
 *   replaces GroupId and Topics by a batch of Groups in both directions;
 *   v9 adds each group's MemberId and MemberEpoch to the request.
 * Pure: no I/O, no clock, no globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_in(int16_t version, int16_t min, int16_t max)
{
    return version >= min && version <= max;
}

/* --- OffsetCommit: request ----------------------------------------------- */

static bool offset_commit_version_ok(int16_t version)
{
    return version_in(version, KAFKA_OFFSET_COMMIT_VERSION_MIN,
                      KAFKA_OFFSET_COMMIT_VERSION_MAX);
}

static void commit_topic_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_OffsetCommitRequestTopic *t)
{
    t->Name = reader_string(r);
    /* index, offset, (epoch v6+ or timestamp v1,) metadata: 14 bytes, 18
     * from v6, 22 in v1. */
    size_t part_bytes = version >= 6 ? 18 : version == 1 ? 22 : 14;
    struct kafka_OffsetCommitRequestPartition *ps = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*ps), part_bytes,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        ps[i].PartitionIndex = reader_i32(r);
        ps[i].CommittedOffset = reader_i64(r);
        ps[i].CommittedLeaderEpoch = version >= 6 ? reader_i32(r) : -1;
        ps[i].CommitTimestamp = version == 1 ? reader_i64(r) : -1;
        ps[i].CommittedMetadata = reader_nullable_string(r);
        kafka_codec__tags(r);
    }
    t->Partitions = ps;
    kafka_codec__tags(r);
}

int kafka_offset_commit_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_OffsetCommitRequest *out)
{
    if (!offset_commit_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 8);
    out->GroupId = reader_string(r);
    /* v0: no generation, no member: a commit outside any generation. */
    out->GenerationIdOrMemberEpoch = version >= 1 ? reader_i32(r) : -1;
    out->MemberId = version >= 1 ? reader_string(r) : slice_from_str("");
    out->GroupInstanceId =
        version >= 7 ? reader_nullable_string(r) : slice_null();
    out->RetentionTimeMs = version >= 2 && version <= 4 ? reader_i64(r) : -1;
    /* name, partitions count: 6 bytes at least. */
    struct kafka_OffsetCommitRequestTopic *ts = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*ts), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        commit_topic_decode(r, version, a, &ts[i]);
    }
    out->Topics = ts;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_offset_commit_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetCommitRequest *req)
{
    kafka_codec__check_version(version, KAFKA_OFFSET_COMMIT_VERSION_MIN,
                               KAFKA_OFFSET_COMMIT_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 8);
    writer_string_slice(w, req->GroupId);
    if (version >= 1) {
        writer_i32(w, req->GenerationIdOrMemberEpoch);
        writer_string_slice(w, req->MemberId);
    }
    if (version >= 7) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    if (version >= 2 && version <= 4) {
        writer_i64(w, req->RetentionTimeMs);
    }
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_OffsetCommitRequestTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OffsetCommitRequestPartition *p =
                &t->Partitions[j];
            writer_i32(w, p->PartitionIndex);
            writer_i64(w, p->CommittedOffset);
            if (version >= 6) {
                writer_i32(w, p->CommittedLeaderEpoch);
            }
            if (version == 1) {
                writer_i64(w, p->CommitTimestamp);
            }
            writer_nullable_string_slice(w, p->CommittedMetadata);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- OffsetCommit: response ---------------------------------------------- */

int kafka_offset_commit_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetCommitResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_OFFSET_COMMIT_VERSION_MIN,
                               KAFKA_OFFSET_COMMIT_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 8);
    if (version >= 3) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_OffsetCommitResponseTopic *t = &resp->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            writer_i32(w, t->Partitions[j].PartitionIndex);
            writer_i16(w, t->Partitions[j].ErrorCode);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void commit_topic_result_decode(
    struct reader *r, struct arena *a,
    struct kafka_OffsetCommitResponseTopic *t)
{
    t->Name = reader_string(r);
    /* index, error code: 6 bytes. */
    struct kafka_OffsetCommitResponsePartition *ps = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*ps), 6,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        ps[i].PartitionIndex = reader_i32(r);
        ps[i].ErrorCode = reader_i16(r);
        kafka_codec__tags(r);
    }
    t->Partitions = ps;
    kafka_codec__tags(r);
}

int kafka_offset_commit_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_OffsetCommitResponse *out)
{
    if (!offset_commit_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 8);
    out->ThrottleTimeMs = version >= 3 ? reader_i32(r) : 0;
    /* name, partitions count: 6 bytes at least. */
    struct kafka_OffsetCommitResponseTopic *ts = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*ts), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        commit_topic_result_decode(r, a, &ts[i]);
    }
    out->Topics = ts;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

/* --- OffsetFetch: request ------------------------------------------------ */

static bool offset_fetch_version_ok(int16_t version)
{
    return version_in(version, KAFKA_OFFSET_FETCH_VERSION_MIN,
                      KAFKA_OFFSET_FETCH_VERSION_MAX);
}

/* A Topics array (name, partition indexes), nullable if asked. */
static const struct kafka_OffsetFetchRequestTopic *
fetch_topics_decode(struct reader *r, struct arena *a, int32_t *n,
                    bool nullable)
{
    /* name, partition indexes count: 6 bytes at least. */
    struct kafka_OffsetFetchRequestTopic *ts = kafka_codec__array(
        r, a, n, sizeof(*ts), 6, (int32_t)KAFKA_REQUEST_TOPICS_MAX,
        nullable);
    for (int32_t i = 0; i < *n && r->rc == RC_OK; i++) {
        ts[i].Name = reader_string(r);
        ts[i].PartitionIndexes =
            kafka_codec__read_i32s(r, a, &ts[i].PartitionIndexesCnt, false);
        kafka_codec__tags(r);
    }
    return ts;
}

static void fetch_topics_encode(struct writer *w,
                                const struct kafka_OffsetFetchRequestTopic *ts,
                                int32_t n, bool nullable)
{
    kafka_codec__write_count(w, n, ts, nullable);
    for (int32_t i = 0; i < n; i++) {
        writer_string_slice(w, ts[i].Name);
        kafka_codec__write_i32s(w, ts[i].PartitionIndexes,
                                ts[i].PartitionIndexesCnt, false);
        kafka_codec__write_tags(w);
    }
}

int kafka_offset_fetch_request_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_OffsetFetchRequest *out)
{
    if (!offset_fetch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 6);
    out->GroupId = kafka_codec__empty_string();
    out->Topics = NULL;
    out->TopicsCnt = 0;
    out->Groups = NULL;
    out->GroupsCnt = 0;
    if (version <= 7) {
        out->GroupId = reader_string(r);
        out->Topics = fetch_topics_decode(r, a, &out->TopicsCnt,
                                          version >= 2 /* nullable */);
    } else {
        /* Compact only: group id, (member id, epoch,) topics, tags. */
        struct kafka_OffsetFetchRequestGroup *gs = kafka_codec__array(
            r, a, &out->GroupsCnt, sizeof(*gs), 3,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < out->GroupsCnt && r->rc == RC_OK; i++) {
            gs[i].GroupId = reader_string(r);
            gs[i].MemberId =
                version >= 9 ? reader_nullable_string(r) : slice_null();
            gs[i].MemberEpoch = version >= 9 ? reader_i32(r) : -1;
            gs[i].Topics = fetch_topics_decode(r, a, &gs[i].TopicsCnt,
                                               true /* nullable */);
            kafka_codec__tags(r);
        }
        out->Groups = gs;
    }
    out->RequireStable = version >= 7 ? reader_bool(r) : false;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_offset_fetch_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetFetchRequest *req)
{
    kafka_codec__check_version(version, KAFKA_OFFSET_FETCH_VERSION_MIN,
                               KAFKA_OFFSET_FETCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 6);
    if (version <= 7) {
        writer_string_slice(w, req->GroupId);
        fetch_topics_encode(w, req->Topics, req->TopicsCnt,
                            version >= 2 /* nullable */);
    } else {
        kafka_codec__write_count(w, req->GroupsCnt, req->Groups, false);
        for (int32_t i = 0; i < req->GroupsCnt; i++) {
            const struct kafka_OffsetFetchRequestGroup *g = &req->Groups[i];
            writer_string_slice(w, g->GroupId);
            if (version >= 9) {
                writer_nullable_string_slice(w, g->MemberId);
                writer_i32(w, g->MemberEpoch);
            }
            fetch_topics_encode(w, g->Topics, g->TopicsCnt, true);
            kafka_codec__write_tags(w);
        }
    }
    if (version >= 7) {
        writer_bool(w, req->RequireStable);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- OffsetFetch: response ----------------------------------------------- */

/* A Topics array of a response; from v8 each partition has the leader
 * epoch. */
static void fetch_results_encode(struct writer *w, int16_t version,
                                 const struct kafka_OffsetFetchResponseTopic *ts,
                                 int32_t n)
{
    kafka_codec__write_count(w, n, ts, false);
    for (int32_t i = 0; i < n; i++) {
        const struct kafka_OffsetFetchResponseTopic *t = &ts[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OffsetFetchResponsePartition *p =
                &t->Partitions[j];
            writer_i32(w, p->PartitionIndex);
            writer_i64(w, p->CommittedOffset);
            if (version >= 5) {
                writer_i32(w, p->CommittedLeaderEpoch);
            }
            writer_nullable_string_slice(w, p->Metadata);
            writer_i16(w, p->ErrorCode);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
}

int kafka_offset_fetch_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_OffsetFetchResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_OFFSET_FETCH_VERSION_MIN,
                               KAFKA_OFFSET_FETCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 6);
    if (version >= 3) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    if (version <= 7) {
        fetch_results_encode(w, version, resp->Topics, resp->TopicsCnt);
        if (version >= 2) {
            writer_i16(w, resp->ErrorCode);
        }
    } else {
        kafka_codec__write_count(w, resp->GroupsCnt, resp->Groups, false);
        for (int32_t i = 0; i < resp->GroupsCnt; i++) {
            const struct kafka_OffsetFetchResponseGroup *g = &resp->Groups[i];
            writer_string_slice(w, g->GroupId);
            fetch_results_encode(w, version, g->Topics, g->TopicsCnt);
            writer_i16(w, g->ErrorCode);
            kafka_codec__write_tags(w);
        }
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void fetch_topic_result_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_OffsetFetchResponseTopic *t)
{
    t->Name = reader_string(r);
    /* index, offset, (epoch,) metadata, error code: 16 bytes, 20 from
     * v5. */
    size_t part_bytes = version >= 5 ? 20 : 16;
    struct kafka_OffsetFetchResponsePartition *ps = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*ps), part_bytes,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        ps[i].PartitionIndex = reader_i32(r);
        ps[i].CommittedOffset = reader_i64(r);
        ps[i].CommittedLeaderEpoch = version >= 5 ? reader_i32(r) : -1;
        ps[i].Metadata = reader_nullable_string(r);
        ps[i].ErrorCode = reader_i16(r);
        kafka_codec__tags(r);
    }
    t->Partitions = ps;
    kafka_codec__tags(r);
}

static const struct kafka_OffsetFetchResponseTopic *
fetch_results_decode(struct reader *r, int16_t version, struct arena *a,
                     int32_t *n)
{
    /* name, partitions count: 6 bytes at least. */
    struct kafka_OffsetFetchResponseTopic *ts = kafka_codec__array(
        r, a, n, sizeof(*ts), 6, (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < *n && r->rc == RC_OK; i++) {
        fetch_topic_result_decode(r, version, a, &ts[i]);
    }
    return ts;
}

int kafka_offset_fetch_response_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_OffsetFetchResponse *out)
{
    if (!offset_fetch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 6);
    out->ThrottleTimeMs = version >= 3 ? reader_i32(r) : 0;
    out->Topics = NULL;
    out->TopicsCnt = 0;
    out->ErrorCode = 0;
    out->Groups = NULL;
    out->GroupsCnt = 0;
    if (version <= 7) {
        out->Topics = fetch_results_decode(r, version, a, &out->TopicsCnt);
        out->ErrorCode = version >= 2 ? reader_i16(r) : 0;
    } else {
        /* Compact only: group id, topics, error code, tags. */
        struct kafka_OffsetFetchResponseGroup *gs = kafka_codec__array(
            r, a, &out->GroupsCnt, sizeof(*gs), 5,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < out->GroupsCnt && r->rc == RC_OK; i++) {
            gs[i].GroupId = reader_string(r);
            gs[i].Topics =
                fetch_results_decode(r, version, a, &gs[i].TopicsCnt);
            gs[i].ErrorCode = reader_i16(r);
            kafka_codec__tags(r);
        }
        out->Groups = gs;
    }
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
