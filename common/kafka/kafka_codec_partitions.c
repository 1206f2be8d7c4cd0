/* Kafka codec (common/kafka/kafka_codec.h): CreatePartitions v0..3,
 * flexible (KIP-482) from v2, after apache/kafka's
 * CreatePartitions{Request,Response}.json. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_ok(int16_t version)
{
    return version >= KAFKA_CREATE_PARTITIONS_VERSION_MIN &&
           version <= KAFKA_CREATE_PARTITIONS_VERSION_MAX;
}

/* --- Request -------------------------------------------------------------- */

static void topic_decode(struct reader *r, struct arena *a,
                         struct kafka_CreatePartitionsTopic *t)
{
    t->Name = reader_string(r);
    t->Count = reader_i32(r);
    /* broker ids count: 4 bytes at least. */
    struct kafka_CreatePartitionsAssignment *as = kafka_codec__array(
        r, a, &t->AssignmentsCnt, sizeof(*as), 4,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, true);
    for (int32_t i = 0; i < t->AssignmentsCnt && r->rc == RC_OK; i++) {
        as[i].BrokerIds =
            kafka_codec__read_i32s(r, a, &as[i].BrokerIdsCnt, false);
        kafka_codec__tags(r);
    }
    t->Assignments = as;
    kafka_codec__tags(r);
}

int kafka_create_partitions_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_CreatePartitionsRequest *out)
{
    if (!version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_CREATE_PARTITIONS_FLEXIBLE);
    /* name, count, assignments count: 10 bytes at least. */
    struct kafka_CreatePartitionsTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 10,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        topic_decode(r, a, &topics[i]);
    }
    out->Topics = topics;
    out->TimeoutMs = reader_i32(r);
    out->ValidateOnly = reader_bool(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_create_partitions_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreatePartitionsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_CREATE_PARTITIONS_VERSION_MIN,
                               KAFKA_CREATE_PARTITIONS_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_CREATE_PARTITIONS_FLEXIBLE);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_CreatePartitionsTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        writer_i32(w, t->Count);
        kafka_codec__write_count(w, t->AssignmentsCnt, t->Assignments, true);
        for (int32_t j = 0; j < t->AssignmentsCnt; j++) {
            kafka_codec__write_i32s(w, t->Assignments[j].BrokerIds,
                                    t->Assignments[j].BrokerIdsCnt, false);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    writer_i32(w, req->TimeoutMs);
    writer_bool(w, req->ValidateOnly);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Response ------------------------------------------------------------- */

int kafka_create_partitions_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreatePartitionsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_CREATE_PARTITIONS_VERSION_MIN,
                               KAFKA_CREATE_PARTITIONS_VERSION_MAX);
    kafka_codec__flexible_write(w,
                                version >= KAFKA_CREATE_PARTITIONS_FLEXIBLE);
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->ResultsCnt, resp->Results, false);
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        const struct kafka_CreatePartitionsTopicResult *t = &resp->Results[i];
        writer_string_slice(w, t->Name);
        writer_i16(w, t->ErrorCode);
        writer_nullable_string_slice(w, t->ErrorMessage);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_create_partitions_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_CreatePartitionsResponse *out)
{
    if (!version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_CREATE_PARTITIONS_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    /* name, error code, message: 6 bytes at least. */
    struct kafka_CreatePartitionsTopicResult *res = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*res), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt && r->rc == RC_OK; i++) {
        res[i].Name = reader_string(r);
        res[i].ErrorCode = reader_i16(r);
        res[i].ErrorMessage = reader_nullable_string(r);
        kafka_codec__tags(r);
    }
    out->Results = res;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
