/* Kafka codec (common/kafka/kafka_codec.h): CreateTopics v0..7, DeleteTopics
 * v0..6, DeleteRecords v0..2, DescribeConfigs v0..4 and InitProducerId
 * v0..5, flexible (KIP-482) from v5, v4, v2, v4 and v2. Field lists
 * follow shared/reference/kafka-protocol.md sections 4.15 to 4.18,
 * checked against apache/kafka CreateTopics{Request,Response}.json,
 * DeleteTopics{Request,Response}.json, DeleteRecords{Request,Response}.json,
 * DescribeConfigs{Request,
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
        as[i].BrokerIds =
            kafka_codec__read_i32s(r, a, &as[i].BrokerIdsCnt, false);
        kafka_codec__tags(r);
    }
    t->Assignments = as;
    /* name, value: 4 bytes at least. */
    struct kafka_CreateableTopicConfig *cs = kafka_codec__array(
        r, a, &t->ConfigsCnt, sizeof(*cs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        cs[i].Name = reader_string(r);
        cs[i].Value = reader_nullable_string(r);
        kafka_codec__tags(r);
    }
    t->Configs = cs;
    kafka_codec__tags(r);
}

int kafka_create_topics_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_CreateTopicsRequest *out)
{
    if (!version_in(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                    KAFKA_CREATE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_CREATE_TOPICS_FLEXIBLE);
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
    kafka_codec__tags(r);
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
                                t->Assignments[i].BrokerIdsCnt, false);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_count(w, t->ConfigsCnt, t->Configs, false);
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        writer_string_slice(w, t->Configs[i].Name);
        writer_nullable_string_slice(w, t->Configs[i].Value);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
}

int kafka_create_topics_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                               KAFKA_CREATE_TOPICS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_CREATE_TOPICS_FLEXIBLE);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        create_topic_encode(w, &req->Topics[i]);
    }
    writer_i32(w, req->TimeoutMs);
    if (version >= 1) {
        writer_bool(w, req->ValidateOnly);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- CreateTopics: response ---------------------------------------------- */

/* A result's tagged fields: TopicConfigErrorCode is tag 0, written only
 * when not 0 (Kafka's rule for a tagged field at its default). */
#define CREATE_TOPICS__TAG_CONFIG_ERROR 0

static void create_result_write_tags(struct writer *w,
                                     const struct kafka_CreatableTopicResult *t)
{
    if (!w->compact || t->TopicConfigErrorCode == 0) {
        kafka_codec__write_tags(w);
        return;
    }
    writer_uvarint(w, 1); /* one field */
    writer_uvarint(w, CREATE_TOPICS__TAG_CONFIG_ERROR);
    writer_uvarint(w, 2); /* its int16 */
    writer_i16(w, t->TopicConfigErrorCode);
}

/* Reads a result's tagged fields, keeping TopicConfigErrorCode and
 * skipping unknown tags. Each field takes two bytes at least, so the loop
 * ends with the input. */
static int16_t create_result_read_tags(struct reader *r)
{
    int16_t code = 0;
    if (!r->compact) {
        return 0;
    }
    uint32_t n = reader_uvarint(r);
    for (uint32_t i = 0; i < n && r->rc == RC_OK; i++) {
        uint32_t tag = reader_uvarint(r);
        uint32_t size = reader_uvarint(r);
        if (r->rc != RC_OK) {
            break;
        }
        if (tag != CREATE_TOPICS__TAG_CONFIG_ERROR) {
            (void)reader_raw(r, size);
        } else if (size == 2) {
            code = reader_i16(r);
        } else {
            kafka_codec__fail(r, RC_MALFORMED);
        }
    }
    return code;
}

static void create_result_encode(struct writer *w, int16_t version,
                                 const struct kafka_CreatableTopicResult *t)
{
    writer_string_slice(w, t->Name);
    if (version >= 7) {
        kafka_codec__write_uuid(w, &t->TopicId);
    }
    writer_i16(w, t->ErrorCode);
    if (version >= 1) {
        writer_nullable_string_slice(w, t->ErrorMessage);
    }
    if (version >= 5) {
        writer_i32(w, t->NumPartitions);
        writer_i16(w, t->ReplicationFactor);
        kafka_codec__write_count(w, t->ConfigsCnt, t->Configs, true);
        for (int32_t i = 0; i < t->ConfigsCnt; i++) {
            const struct kafka_CreatableTopicConfigs *c = &t->Configs[i];
            writer_string_slice(w, c->Name);
            writer_nullable_string_slice(w, c->Value);
            writer_bool(w, c->ReadOnly);
            writer_i8(w, c->ConfigSource);
            writer_bool(w, c->IsSensitive);
            kafka_codec__write_tags(w);
        }
    }
    create_result_write_tags(w, t);
}

int kafka_create_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                               KAFKA_CREATE_TOPICS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_CREATE_TOPICS_FLEXIBLE);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        create_result_encode(w, version, &resp->Topics[i]);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void create_result_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_CreatableTopicResult *t)
{
    t->Name = reader_string(r);
    t->TopicId = version >= 7 ? kafka_codec__read_uuid(r)
                              : (struct kafka_uuid){0};
    t->ErrorCode = reader_i16(r);
    t->ErrorMessage = version >= 1 ? reader_nullable_string(r) : slice_null();
    t->NumPartitions = version >= 5 ? reader_i32(r) : -1;
    t->ReplicationFactor = version >= 5 ? reader_i16(r) : -1;
    t->Configs = NULL;
    t->ConfigsCnt = 0;
    if (version >= 5) {
        /* name, value, three one-byte fields, tags: 6 bytes at least. */
        struct kafka_CreatableTopicConfigs *cs = kafka_codec__array(
            r, a, &t->ConfigsCnt, sizeof(*cs), 6,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, true /* nullable */);
        for (int32_t i = 0; i < t->ConfigsCnt; i++) {
            cs[i].Name = reader_string(r);
            cs[i].Value = reader_nullable_string(r);
            cs[i].ReadOnly = reader_bool(r);
            cs[i].ConfigSource = reader_i8(r);
            cs[i].IsSensitive = reader_bool(r);
            kafka_codec__tags(r);
        }
        t->Configs = cs;
    }
    t->TopicConfigErrorCode = create_result_read_tags(r);
}

int kafka_create_topics_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_CreateTopicsResponse *out)
{
    if (!version_in(version, KAFKA_CREATE_TOPICS_VERSION_MIN,
                    KAFKA_CREATE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_CREATE_TOPICS_FLEXIBLE);
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    /* name, error code: 4 bytes at least. */
    struct kafka_CreatableTopicResult *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 4,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        create_result_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= KAFKA_DELETE_TOPICS_FLEXIBLE);
    out->TopicNames = NULL;
    out->TopicNamesCnt = 0;
    out->Topics = NULL;
    out->TopicsCnt = 0;
    if (version >= 6) {
        /* name, id, tags: 18 bytes at least. */
        struct kafka_DeleteTopicState *ts = kafka_codec__array(
            r, a, &out->TopicsCnt, sizeof(*ts), 18,
            (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
        for (int32_t i = 0; i < out->TopicsCnt; i++) {
            ts[i].Name = reader_nullable_string(r);
            ts[i].TopicId = kafka_codec__read_uuid(r);
            kafka_codec__tags(r);
        }
        out->Topics = ts;
    } else {
        out->TopicNames = kafka_codec__read_strings(
            r, a, &out->TopicNamesCnt, (int32_t)KAFKA_REQUEST_TOPICS_MAX,
            false);
    }
    out->TimeoutMs = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_delete_topics_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                               KAFKA_DELETE_TOPICS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DELETE_TOPICS_FLEXIBLE);
    if (version >= 6) {
        kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
        for (int32_t i = 0; i < req->TopicsCnt; i++) {
            writer_nullable_string_slice(w, req->Topics[i].Name);
            kafka_codec__write_uuid(w, &req->Topics[i].TopicId);
            kafka_codec__write_tags(w);
        }
    } else {
        kafka_codec__write_strings(w, req->TopicNames, req->TopicNamesCnt,
                                   false);
    }
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                               KAFKA_DELETE_TOPICS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DELETE_TOPICS_FLEXIBLE);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_DeletableTopicResult *res = &resp->Responses[i];
        if (version >= 6) {
            writer_nullable_string_slice(w, res->Name);
            kafka_codec__write_uuid(w, &res->TopicId);
        } else {
            writer_string_slice(w, res->Name);
        }
        writer_i16(w, res->ErrorCode);
        if (version >= 5) {
            writer_nullable_string_slice(w, res->ErrorMessage);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_topics_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_DeleteTopicsResponse *out)
{
    if (!version_in(version, KAFKA_DELETE_TOPICS_VERSION_MIN,
                    KAFKA_DELETE_TOPICS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DELETE_TOPICS_FLEXIBLE);
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    struct kafka_DeletableTopicResult *res = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*res), 4,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt; i++) {
        res[i].Name = version >= 6 ? reader_nullable_string(r)
                                   : reader_string(r);
        res[i].TopicId = version >= 6 ? kafka_codec__read_uuid(r)
                                      : (struct kafka_uuid){0};
        res[i].ErrorCode = reader_i16(r);
        res[i].ErrorMessage =
            version >= 5 ? reader_nullable_string(r) : slice_null();
        kafka_codec__tags(r);
    }
    out->Responses = res;
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_CONFIGS_FLEXIBLE);
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
        kafka_codec__tags(r);
    }
    out->Resources = res;
    out->IncludeSynonyms = version >= 1 ? reader_bool(r) : false;
    out->IncludeDocumentation = version >= 3 ? reader_bool(r) : false;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_describe_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                               KAFKA_DESCRIBE_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DESCRIBE_CONFIGS_FLEXIBLE);
    kafka_codec__write_count(w, req->ResourcesCnt, req->Resources, false);
    for (int32_t i = 0; i < req->ResourcesCnt; i++) {
        const struct kafka_DescribeConfigsResource *res = &req->Resources[i];
        writer_i8(w, res->ResourceType);
        writer_string_slice(w, res->ResourceName);
        kafka_codec__write_strings(w, res->ConfigurationKeys,
                                   res->ConfigurationKeysCnt, true);
        kafka_codec__write_tags(w);
    }
    if (version >= 1) {
        writer_bool(w, req->IncludeSynonyms);
    }
    if (version >= 3) {
        writer_bool(w, req->IncludeDocumentation);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
            kafka_codec__write_tags(w);
        }
    }
    if (version >= 3) {
        writer_i8(w, c->ConfigType);
        writer_nullable_string_slice(w, c->Documentation);
    }
    kafka_codec__write_tags(w);
}

int kafka_describe_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                               KAFKA_DESCRIBE_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DESCRIBE_CONFIGS_FLEXIBLE);
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
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
            kafka_codec__tags(r);
        }
        c->Synonyms = syn;
    }
    c->ConfigType = version >= 3 ? reader_i8(r) : 0;
    c->Documentation = version >= 3 ? reader_nullable_string(r) : slice_null();
    kafka_codec__tags(r);
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
    kafka_codec__tags(r);
}

int kafka_describe_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeConfigsResponse *out)
{
    if (!version_in(version, KAFKA_DESCRIBE_CONFIGS_VERSION_MIN,
                    KAFKA_DESCRIBE_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DESCRIBE_CONFIGS_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    /* error, message, type, name, configs count: 11 bytes at least. */
    struct kafka_DescribeConfigsResult *res = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*res), 11,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt && r->rc == RC_OK; i++) {
        describe_result_decode(r, version, a, &res[i]);
    }
    out->Results = res;
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= KAFKA_INIT_PRODUCER_ID_FLEXIBLE);
    out->TransactionalId = reader_nullable_string(r);
    out->TransactionTimeoutMs = reader_i32(r);
    out->ProducerId = version >= 3 ? reader_i64(r) : -1;
    out->ProducerEpoch = version >= 3 ? reader_i16(r) : -1;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_init_producer_id_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdRequest *req)
{
    kafka_codec__check_version(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                               KAFKA_INIT_PRODUCER_ID_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_INIT_PRODUCER_ID_FLEXIBLE);
    writer_nullable_string_slice(w, req->TransactionalId);
    writer_i32(w, req->TransactionTimeoutMs);
    if (version >= 3) {
        writer_i64(w, req->ProducerId);
        writer_i16(w, req->ProducerEpoch);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_init_producer_id_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_INIT_PRODUCER_ID_VERSION_MIN,
                               KAFKA_INIT_PRODUCER_ID_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_INIT_PRODUCER_ID_FLEXIBLE);
    writer_i32(w, resp->ThrottleTimeMs);
    writer_i16(w, resp->ErrorCode);
    writer_i64(w, resp->ProducerId);
    writer_i16(w, resp->ProducerEpoch);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
    kafka_codec__flexible(r, version >= KAFKA_INIT_PRODUCER_ID_FLEXIBLE);
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = reader_i16(r);
    out->ProducerId = reader_i64(r);
    out->ProducerEpoch = reader_i16(r);
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= KAFKA_DELETE_RECORDS_FLEXIBLE);
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
            kafka_codec__tags(r);
        }
        topics[i].Partitions = parts;
        kafka_codec__tags(r);
    }
    out->Topics = topics;
    out->TimeoutMs = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_delete_records_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_RECORDS_VERSION_MIN,
                               KAFKA_DELETE_RECORDS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DELETE_RECORDS_FLEXIBLE);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_DeleteRecordsTopic *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            writer_i32(w, t->Partitions[k].PartitionIndex);
            writer_i64(w, t->Partitions[k].Offset);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_records_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteRecordsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_RECORDS_VERSION_MIN,
                               KAFKA_DELETE_RECORDS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_DELETE_RECORDS_FLEXIBLE);
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
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_records_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DeleteRecordsResponse *out)
{
    if (!delete_records_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_DELETE_RECORDS_FLEXIBLE);
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
            kafka_codec__tags(r);
        }
        topics[i].Partitions = parts;
        kafka_codec__tags(r);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
