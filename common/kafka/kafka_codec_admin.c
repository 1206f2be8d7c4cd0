/* Kafka codec (common/kafka/kafka_codec.h): CreateTopics v0..4, DeleteTopics
 * v0..3, DescribeConfigs v0..3 and InitProducerId v0..1. Field lists
 * follow shared/reference/kafka-protocol.md sections 4.15 to 4.18,
 * checked against apache/kafka CreateTopics{Request,Response}.json,
 * DeleteTopics{Request,Response}.json, DescribeConfigs{Request,
 * Response}.json and InitProducerId{Request,Response}.json. Pure: no I/O,
 * no clock, no globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_in(int16_t version, int16_t min, int16_t max)
{
    return version >= min && version <= max;
}

/* --- CreateTopics: request ----------------------------------------------- */

static void create_topic_decode(struct reader *r, struct arena *a,
                                struct kafka_CreatableTopic *t)
{
    t->Name = reader_string(r);
    t->NumPartitions = reader_i32(r);
    t->ReplicationFactor = reader_i16(r);
    /* index, broker ids count: 8 bytes at least. */
    struct kafka_CreatableReplicaAssignment *as = kafka_codec__array(
        r, a, &t->AssignmentsCnt, sizeof(*as), 8,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->AssignmentsCnt && r->rc == RC_OK; i++) {
        as[i].PartitionIndex = reader_i32(r);
        as[i].BrokerIds = kafka_codec__read_i32s(r, a, &as[i].BrokerIdsCnt);
    }
    t->Assignments = as;
    /* name, value: 4 bytes at least. */
    struct kafka_CreateableTopicConfig *cs = kafka_codec__array(
        r, a, &t->ConfigsCnt, sizeof(*cs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        cs[i].Name = reader_string(r);
        cs[i].Value = reader_nullable_string(r);
    }
    t->Configs = cs;
}

int kafka_create_topics_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_CreateTopicsRequest *out)
{
    if (!version_in(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                    KAFKA_CREATE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    /* name, partitions, replication, two counts: 16 bytes at least. */
    struct kafka_CreatableTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 16,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        create_topic_decode(r, a, &topics[i]);
    }
    out->Topics = topics;
    out->TimeoutMs = reader_i32(r);
    out->ValidateOnly = version >= 1 ? reader_bool(r) : false;
    return kafka_codec__finish(r);
}

static void create_topic_encode(struct writer *w,
                                const struct kafka_CreatableTopic *t)
{
    writer_string_slice(w, t->Name);
    writer_i32(w, t->NumPartitions);
    writer_i16(w, t->ReplicationFactor);
    kafka_codec__write_count(w, t->AssignmentsCnt, t->Assignments, false);
    for (int32_t i = 0; i < t->AssignmentsCnt; i++) {
        writer_i32(w, t->Assignments[i].PartitionIndex);
        kafka_codec__write_i32s(w, t->Assignments[i].BrokerIds,
                                t->Assignments[i].BrokerIdsCnt);
    }
    kafka_codec__write_count(w, t->ConfigsCnt, t->Configs, false);
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        writer_string_slice(w, t->Configs[i].Name);
        writer_nullable_string_slice(w, t->Configs[i].Value);
    }
}

int kafka_create_topics_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                               KAFKA_CREATE_TOPICS_VERSION_MAX);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        create_topic_encode(w, &req->Topics[i]);
    }
    writer_i32(w, req->TimeoutMs);
    if (version >= 1) {
        writer_bool(w, req->ValidateOnly);
    }
    return w->rc;
}

/* --- CreateTopics: response ---------------------------------------------- */

int kafka_create_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                               KAFKA_CREATE_TOPICS_VERSION_MAX);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        writer_string_slice(w, resp->Topics[i].Name);
        writer_i16(w, resp->Topics[i].ErrorCode);
        if (version >= 1) {
            writer_nullable_string_slice(w, resp->Topics[i].ErrorMessage);
        }
    }
    return w->rc;
}

int kafka_create_topics_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_CreateTopicsResponse *out)
{
    if (!version_in(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                    KAFKA_CREATE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    /* name, error code: 4 bytes at least. */
    struct kafka_CreatableTopicResult *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 4,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt; i++) {
        topics[i].Name = reader_string(r);
        topics[i].ErrorCode = reader_i16(r);
        topics[i].ErrorMessage =
            version >= 1 ? reader_nullable_string(r) : slice_null();
    }
    out->Topics = topics;
    return kafka_codec__finish(r);
}

/* --- DeleteTopics -------------------------------------------------------- */

int kafka_delete_topics_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_DeleteTopicsRequest *out)
{
    if (!version_in(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                    KAFKA_DELETE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->TopicNames = kafka_codec__read_strings(
        r, a, &out->TopicNamesCnt, (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    out->TimeoutMs = reader_i32(r);
    return kafka_codec__finish(r);
}

int kafka_delete_topics_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                               KAFKA_DELETE_TOPICS_VERSION_MAX);
    kafka_codec__write_strings(w, req->TopicNames, req->TopicNamesCnt, false);
    writer_i32(w, req->TimeoutMs);
    return w->rc;
}

int kafka_delete_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                               KAFKA_DELETE_TOPICS_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        writer_string_slice(w, resp->Responses[i].Name);
        writer_i16(w, resp->Responses[i].ErrorCode);
    }
    return w->rc;
}

int kafka_delete_topics_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_DeleteTopicsResponse *out)
{
    if (!version_in(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                    KAFKA_DELETE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    struct kafka_DeletableTopicResult *res = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*res), 4,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt; i++) {
        res[i].Name = reader_string(r);
        res[i].ErrorCode = reader_i16(r);
    }
    out->Responses = res;
    return kafka_codec__finish(r);
}

/* --- DescribeConfigs: request -------------------------------------------- */

int kafka_describe_configs_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeConfigsRequest *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                    KAFKA_DESCRIBE_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    /* type, name, keys count: 7 bytes at least. */
    struct kafka_DescribeConfigsResource *res = kafka_codec__array(
        r, a, &out->ResourcesCnt, sizeof(*res), 7,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResourcesCnt && r->rc == RC_OK; i++) {
        res[i].ResourceType = reader_i8(r);
        res[i].ResourceName = reader_string(r);
        res[i].ConfigurationKeys = kafka_codec__read_strings(
            r, a, &res[i].ConfigurationKeysCnt,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, true /* nullable */);
    }
    out->Resources = res;
    out->IncludeSynonyms = version >= 1 ? reader_bool(r) : false;
    out->IncludeDocumentation = version >= 3 ? reader_bool(r) : false;
    return kafka_codec__finish(r);
}

int kafka_describe_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                               KAFKA_DESCRIBE_CONFIGS_VERSION_MAX);
    kafka_codec__write_count(w, req->ResourcesCnt, req->Resources, false);
    for (int32_t i = 0; i < req->ResourcesCnt; i++) {
        const struct kafka_DescribeConfigsResource *res = &req->Resources[i];
        writer_i8(w, res->ResourceType);
        writer_string_slice(w, res->ResourceName);
        kafka_codec__write_strings(w, res->ConfigurationKeys,
                                   res->ConfigurationKeysCnt, true);
    }
    if (version >= 1) {
        writer_bool(w, req->IncludeSynonyms);
    }
    if (version >= 3) {
        writer_bool(w, req->IncludeDocumentation);
    }
    return w->rc;
}

/* --- DescribeConfigs: response ------------------------------------------- */

static void
describe_config_encode(struct writer *w, int16_t version,
                       const struct kafka_DescribeConfigsResourceResult *c)
{
    writer_string_slice(w, c->Name);
    writer_nullable_string_slice(w, c->Value);
    writer_bool(w, c->ReadOnly);
    if (version == 0) {
        writer_bool(w, c->IsDefault);
    } else {
        writer_i8(w, c->ConfigSource);
    }
    writer_bool(w, c->IsSensitive);
    if (version >= 1) {
        kafka_codec__write_count(w, c->SynonymsCnt, c->Synonyms, false);
        for (int32_t i = 0; i < c->SynonymsCnt; i++) {
            writer_string_slice(w, c->Synonyms[i].Name);
            writer_nullable_string_slice(w, c->Synonyms[i].Value);
            writer_i8(w, c->Synonyms[i].Source);
        }
    }
    if (version >= 3) {
        writer_i8(w, c->ConfigType);
        writer_nullable_string_slice(w, c->Documentation);
    }
}

int kafka_describe_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                               KAFKA_DESCRIBE_CONFIGS_VERSION_MAX);
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->ResultsCnt, resp->Results, false);
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        const struct kafka_DescribeConfigsResult *res = &resp->Results[i];
        writer_i16(w, res->ErrorCode);
        writer_nullable_string_slice(w, res->ErrorMessage);
        writer_i8(w, res->ResourceType);
        writer_string_slice(w, res->ResourceName);
        kafka_codec__write_count(w, res->ConfigsCnt, res->Configs, false);
        for (int32_t j = 0; j < res->ConfigsCnt; j++) {
            describe_config_encode(w, version, &res->Configs[j]);
        }
    }
    return w->rc;
}

static void
describe_config_decode(struct reader *r, int16_t version, struct arena *a,
                       struct kafka_DescribeConfigsResourceResult *c)
{
    c->Name = reader_string(r);
    c->Value = reader_nullable_string(r);
    c->ReadOnly = reader_bool(r);
    c->IsDefault = version == 0 ? reader_bool(r) : false;
    c->ConfigSource = version >= 1 ? reader_i8(r) : -1;
    c->IsSensitive = reader_bool(r);
    c->Synonyms = NULL;
    c->SynonymsCnt = 0;
    if (version >= 1) {
        /* name, value, source: 5 bytes at least. */
        struct kafka_DescribeConfigsSynonym *syn = kafka_codec__array(
            r, a, &c->SynonymsCnt, sizeof(*syn), 5,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < c->SynonymsCnt; i++) {
            syn[i].Name = reader_string(r);
            syn[i].Value = reader_nullable_string(r);
            syn[i].Source = reader_i8(r);
        }
        c->Synonyms = syn;
    }
    c->ConfigType = version >= 3 ? reader_i8(r) : 0;
    c->Documentation = version >= 3 ? reader_nullable_string(r) : slice_null();
}

static void describe_result_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DescribeConfigsResult *res)
{
    res->ErrorCode = reader_i16(r);
    res->ErrorMessage = reader_nullable_string(r);
    res->ResourceType = reader_i8(r);
    res->ResourceName = reader_string(r);
    /* name, value, read only, source or default, sensitive: 7 bytes. */
    struct kafka_DescribeConfigsResourceResult *cs = kafka_codec__array(
        r, a, &res->ConfigsCnt, sizeof(*cs), 7,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < res->ConfigsCnt && r->rc == RC_OK; i++) {
        describe_config_decode(r, version, a, &cs[i]);
    }
    res->Configs = cs;
}

int kafka_describe_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeConfigsResponse *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                    KAFKA_DESCRIBE_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = reader_i32(r);
    /* error, message, type, name, configs count: 11 bytes at least. */
    struct kafka_DescribeConfigsResult *res = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*res), 11,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt && r->rc == RC_OK; i++) {
        describe_result_decode(r, version, a, &res[i]);
    }
    out->Results = res;
    return kafka_codec__finish(r);
}

/* --- InitProducerId ------------------------------------------------------ */

int kafka_init_producer_id_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdRequest *out)
{
    (void)a;
    if (!version_in(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                    KAFKA_INIT_PRODUCER_ID_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->TransactionalId = reader_nullable_string(r);
    out->TransactionTimeoutMs = reader_i32(r);
    return kafka_codec__finish(r);
}

int kafka_init_producer_id_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdRequest *req)
{
    kafka_codec__check_version(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                               KAFKA_INIT_PRODUCER_ID_VERSION_MAX);
    writer_nullable_string_slice(w, req->TransactionalId);
    writer_i32(w, req->TransactionTimeoutMs);
    return w->rc;
}

int kafka_init_producer_id_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                               KAFKA_INIT_PRODUCER_ID_VERSION_MAX);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_i64(w, resp->ProducerId);
    writer_i16(w, resp->ProducerEpoch);
    return w->rc;
}

int kafka_init_producer_id_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdResponse *out)
{
    (void)a;
    if (!version_in(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                    KAFKA_INIT_PRODUCER_ID_VERSION_MAX)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ProducerId = reader_i64(r);
    out->ProducerEpoch = reader_i16(r);
    return kafka_codec__finish(r);
}

/* --- DeleteRecords (21) -------------------------------------------------- */

static bool delete_records_version_ok(int16_t version)
{
    return version >= KAFKA_DELETE_RECORDS_VERSION_MIN &&
           version <= KAFKA_DELETE_RECORDS_VERSION_MAX;
}

int kafka_delete_records_request_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_DeleteRecordsRequest *out)
{
    if (!delete_records_version_ok(version)) {
        return RC_INVALID;
    }
    /* name (2) and partition count (4): 6 bytes at least a topic. */
    struct kafka_DeleteRecordsTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        topics[i].Name = reader_string(r);
        /* index (4) and offset (8) a partition */
        struct kafka_DeleteRecordsPartition *parts = kafka_codec__array(
            r, a, &topics[i].PartitionsCnt, sizeof(*parts), 12,
            (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
        for (int32_t k = 0; k < topics[i].PartitionsCnt; k++) {
            parts[k].PartitionIndex = reader_i32(r);
            parts[k].Offset = reader_i64(r);
        }
        topics[i].Partitions = parts;
    }
    out->Topics = topics;
    out->TimeoutMs = reader_i32(r);
    return kafka_codec__finish(r);
}

int kafka_delete_records_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_RECORDS_VERSION_MIN,
                               KAFKA_DELETE_RECORDS_VERSION_MAX);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_DeleteRecordsTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            writer_i32(w, t->Partitions[k].PartitionIndex);
            writer_i64(w, t->Partitions[k].Offset);
        }
    }
    writer_i32(w, req->TimeoutMs);
    return w->rc;
}

int kafka_delete_records_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_RECORDS_VERSION_MIN,
                               KAFKA_DELETE_RECORDS_VERSION_MAX);
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_DeleteRecordsTopicResult *t = &resp->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            writer_i32(w, t->Partitions[k].PartitionIndex);
            writer_i64(w, t->Partitions[k].LowWatermark);
            writer_i16(w, t->Partitions[k].ErrorCode);
        }
    }
    return w->rc;
}

int kafka_delete_records_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DeleteRecordsResponse *out)
{
    if (!delete_records_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = reader_i32(r);
    struct kafka_DeleteRecordsTopicResult *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        topics[i].Name = reader_string(r);
        /* index (4), low watermark (8), error (2) */
        struct kafka_DeleteRecordsPartitionResult *parts = kafka_codec__array(
            r, a, &topics[i].PartitionsCnt, sizeof(*parts), 14,
            (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
        for (int32_t k = 0; k < topics[i].PartitionsCnt; k++) {
            parts[k].PartitionIndex = reader_i32(r);
            parts[k].LowWatermark = reader_i64(r);
            parts[k].ErrorCode = reader_i16(r);
        }
        topics[i].Partitions = parts;
    }
    out->Topics = topics;
    return kafka_codec__finish(r);
}
