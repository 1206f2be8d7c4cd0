/* Kafka codec (common/kafka/kafka_codec.h): AlterPartitionReassignments
 * v0, ListPartitionReassignments v0 and UnregisterBroker v0, checked
 * against apache/kafka AlterPartitionReassignments{Request,Response}.json,
 * ListPartitionReassignments{Request,Response}.json and
 * UnregisterBroker{Request,Response}.json: all flexible from
 * v0 (KIP-482) with no tagged field defined; Replicas in an Alter request
 * and Topics in a List request are nullable. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

/* The smallest compact entries: an empty name (1), an empty or null
 * array (1) and the tag section (1); a partition adds its index (4). */
#define REASSIGN__TOPIC_MIN_BYTES 3
#define REASSIGN__PARTITION_MIN_BYTES 6

/* A nullable [int32] (count -1: NULL, *n = -1). */
/* --- AlterPartitionReassignments ----------------------------------------- */

static void alter_topic_decode(struct reader *r, struct arena *a,
                               struct kafka_ReassignableTopic *t)
{
    t->Name = reader_string(r);
    struct kafka_ReassignablePartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts),
        REASSIGN__PARTITION_MIN_BYTES, (int32_t)KAFKA_REQUEST_PARTITIONS_MAX,
        false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        parts[i].PartitionIndex = reader_i32(r);
        parts[i].Replicas = kafka_codec__read_i32s(r, a, &parts[i].ReplicasCnt,
                                               true);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_alter_partition_reassignments_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterPartitionReassignmentsRequest *out)
{
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->TimeoutMs = reader_i32(r);
    struct kafka_ReassignableTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), REASSIGN__TOPIC_MIN_BYTES,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        alter_topic_decode(r, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_alter_partition_reassignments_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterPartitionReassignmentsRequest *req)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_ReassignableTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_ReassignablePartition *p = &t->Partitions[j];
            writer_i32(w, p->PartitionIndex);
            kafka_codec__write_i32s(w, p->Replicas, p->ReplicasCnt, true);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_alter_partition_reassignments_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterPartitionReassignmentsResponse *resp)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_nullable_string_slice(w, resp->ErrorMessage);
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_ReassignableTopicResponse *t = &resp->Responses[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_ReassignablePartitionResponse *p =
                &t->Partitions[j];
            writer_i32(w, p->PartitionIndex);
            writer_i16(w, p->ErrorCode);
            writer_nullable_string_slice(w, p->ErrorMessage);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void alter_result_decode(struct reader *r, struct arena *a,
                                struct kafka_ReassignableTopicResponse *t)
{
    t->Name = reader_string(r);
    /* index (4), error (2), null message (1), tags (1). */
    struct kafka_ReassignablePartitionResponse *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 8,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        parts[i].PartitionIndex = reader_i32(r);
        parts[i].ErrorCode = reader_i16(r);
        parts[i].ErrorMessage = reader_nullable_string(r);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_alter_partition_reassignments_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterPartitionReassignmentsResponse *out)
{
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ErrorMessage = reader_nullable_string(r);
    struct kafka_ReassignableTopicResponse *topics = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*topics), REASSIGN__TOPIC_MIN_BYTES,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt && r->rc == RC_OK; i++) {
        alter_result_decode(r, a, &topics[i]);
    }
    out->Responses = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

/* --- ListPartitionReassignments ------------------------------------------ */

int kafka_list_partition_reassignments_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_ListPartitionReassignmentsRequest *out)
{
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->TimeoutMs = reader_i32(r);
    struct kafka_ListPartitionReassignmentsTopics *topics =
        kafka_codec__array(r, a, &out->TopicsCnt, sizeof(*topics),
                           REASSIGN__TOPIC_MIN_BYTES,
                           (int32_t)KAFKA_REQUEST_TOPICS_MAX, true);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        topics[i].Name = reader_string(r);
        topics[i].PartitionIndexes = kafka_codec__read_i32s(
            r, a, &topics[i].PartitionIndexesCnt, false);
        kafka_codec__tags(r);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_list_partition_reassignments_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListPartitionReassignmentsRequest *req)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, true);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        writer_string_slice(w, req->Topics[i].Name);
        kafka_codec__write_i32s(w, req->Topics[i].PartitionIndexes,
                            req->Topics[i].PartitionIndexesCnt, false);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_list_partition_reassignments_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListPartitionReassignmentsResponse *resp)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_nullable_string_slice(w, resp->ErrorMessage);
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_OngoingTopicReassignment *t = &resp->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OngoingPartitionReassignment *p =
                &t->Partitions[j];
            writer_i32(w, p->PartitionIndex);
            kafka_codec__write_i32s(w, p->Replicas, p->ReplicasCnt, false);
            kafka_codec__write_i32s(w, p->AddingReplicas, p->AddingReplicasCnt,
                                false);
            kafka_codec__write_i32s(w, p->RemovingReplicas,
                                p->RemovingReplicasCnt, false);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void ongoing_topic_decode(struct reader *r, struct arena *a,
                                 struct kafka_OngoingTopicReassignment *t)
{
    t->Name = reader_string(r);
    /* index (4), three empty arrays (3), tags (1). */
    struct kafka_OngoingPartitionReassignment *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 8,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        struct kafka_OngoingPartitionReassignment *p = &parts[i];
        p->PartitionIndex = reader_i32(r);
        p->Replicas = kafka_codec__read_i32s(r, a, &p->ReplicasCnt, false);
        p->AddingReplicas = kafka_codec__read_i32s(r, a, &p->AddingReplicasCnt,
                                               false);
        p->RemovingReplicas = kafka_codec__read_i32s(
            r, a, &p->RemovingReplicasCnt, false);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_list_partition_reassignments_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_ListPartitionReassignmentsResponse *out)
{
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ErrorMessage = reader_nullable_string(r);
    struct kafka_OngoingTopicReassignment *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), REASSIGN__TOPIC_MIN_BYTES,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        ongoing_topic_decode(r, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

/* --- UnregisterBroker ----------------------------------------------------- */

int kafka_unregister_broker_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_UnregisterBrokerRequest *out)
{
    (void)a;
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->BrokerId = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_unregister_broker_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_UnregisterBrokerRequest *req)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, req->BrokerId);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_unregister_broker_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_UnregisterBrokerResponse *resp)
{
    kafka_codec__check_version(version, 0, 0);
    kafka_codec__flexible_write(w, true);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_nullable_string_slice(w, resp->ErrorMessage);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_unregister_broker_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_UnregisterBrokerResponse *out)
{
    (void)a;
    if (version != 0) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, true);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ErrorMessage = reader_nullable_string(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
