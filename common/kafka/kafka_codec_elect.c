/* ElectLeaders (43) bodies (common/kafka/kafka_codec_elect.h). Pure. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"
#include "common/limits.h"
#include "common/rc.h"

static bool elect_version_ok(int16_t version)
{
    return version >= KAFKA_ELECT_LEADERS_VERSION_MIN &&
           version <= KAFKA_ELECT_LEADERS_VERSION_MAX;
}

int kafka_elect_leaders_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_ElectLeadersRequest *out)
{
    if (!elect_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_ELECT_LEADERS_FLEXIBLE);
    out->ElectionType = version >= 1 ? reader_i8(r) : KAFKA_ELECTION_PREFERRED;
    /* topic name (2) and partition count (4) */
    struct kafka_ElectLeadersTopicPartitions *tps = kafka_codec__array(
        r, a, &out->TopicPartitionsCnt, sizeof(*tps), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, true);
    for (int32_t i = 0; i < out->TopicPartitionsCnt && r->rc == RC_OK; i++) {
        tps[i].Topic = reader_string(r);
        int32_t *ids = kafka_codec__array(
            r, a, &tps[i].PartitionsCnt, sizeof(*ids), 4,
            (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
        for (int32_t k = 0; k < tps[i].PartitionsCnt; k++) {
            ids[k] = reader_i32(r);
        }
        tps[i].Partitions = ids;
        kafka_codec__tags(r);
    }
    out->TopicPartitions = tps;
    out->TimeoutMs = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_elect_leaders_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ElectLeadersRequest *req)
{
    kafka_codec__check_version(version, KAFKA_ELECT_LEADERS_VERSION_MIN,
                               KAFKA_ELECT_LEADERS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_ELECT_LEADERS_FLEXIBLE);
    if (version >= 1) {
        writer_i8(w, req->ElectionType);
    }
    kafka_codec__write_count(w, req->TopicPartitionsCnt, req->TopicPartitions,
                             true);
    for (int32_t i = 0; i < req->TopicPartitionsCnt; i++) {
        const struct kafka_ElectLeadersTopicPartitions *t =
            &req->TopicPartitions[i];
        writer_string_slice(w, t->Topic);
        kafka_codec__write_i32s(w, t->Partitions, t->PartitionsCnt, false);
        kafka_codec__write_tags(w);
    }
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_elect_leaders_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ElectLeadersResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_ELECT_LEADERS_VERSION_MIN,
                               KAFKA_ELECT_LEADERS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_ELECT_LEADERS_FLEXIBLE);
    writer_i32(w, resp->ThrottleTimeMs);
    if (version >= 1) {
        writer_i16(w, resp->ErrorCode);
    }
    kafka_codec__write_count(w, resp->ReplicaElectionResultsCnt,
                             resp->ReplicaElectionResults, false);
    for (int32_t i = 0; i < resp->ReplicaElectionResultsCnt; i++) {
        const struct kafka_ReplicaElectionResult *t =
            &resp->ReplicaElectionResults[i];
        writer_string_slice(w, t->Topic);
        kafka_codec__write_count(w, t->PartitionResultCnt, t->PartitionResult,
                                 false);
        for (int32_t k = 0; k < t->PartitionResultCnt; k++) {
            const struct kafka_ElectLeadersPartitionResult *p =
                &t->PartitionResult[k];
            writer_i32(w, p->PartitionId);
            writer_i16(w, p->ErrorCode);
            writer_nullable_string_slice(w, p->ErrorMessage);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_elect_leaders_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_ElectLeadersResponse *out)
{
    if (!elect_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_ELECT_LEADERS_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = version >= 1 ? reader_i16(r) : 0;
    struct kafka_ReplicaElectionResult *ts = kafka_codec__array(
        r, a, &out->ReplicaElectionResultsCnt, sizeof(*ts), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ReplicaElectionResultsCnt && r->rc == RC_OK;
         i++) {
        ts[i].Topic = reader_string(r);
        /* id (4), error (2), message (2) */
        struct kafka_ElectLeadersPartitionResult *ps = kafka_codec__array(
            r, a, &ts[i].PartitionResultCnt, sizeof(*ps), 8,
            (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
        for (int32_t k = 0; k < ts[i].PartitionResultCnt; k++) {
            ps[k].PartitionId = reader_i32(r);
            ps[k].ErrorCode = reader_i16(r);
            ps[k].ErrorMessage = reader_nullable_string(r);
            kafka_codec__tags(r);
        }
        ts[i].PartitionResult = ps;
        kafka_codec__tags(r);
    }
    out->ReplicaElectionResults = ts;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
