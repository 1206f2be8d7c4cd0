/* The Kafka codec's structs and functions for CreateTopics (19), DeleteTopics (20), DescribeConfigs (32), InitProducerId (22); DeleteRecords (21) is in kafka_codec_records.h,
 * implemented in common/kafka/kafka_codec_admin.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_ADMIN_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/kafka/kafka_codec_records.h"
#include "common/kafka/kafka_error.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Versions this codec parses and writes. */
#define KAFKA_CREATE_TOPICS_VERSION_MIN 0
#define KAFKA_CREATE_TOPICS_VERSION_MAX 7
#define KAFKA_DELETE_RECORDS_VERSION_MIN 0
#define KAFKA_DELETE_RECORDS_VERSION_MAX 2
#define KAFKA_DELETE_TOPICS_VERSION_MIN 0
#define KAFKA_DELETE_TOPICS_VERSION_MAX 6
#define KAFKA_DESCRIBE_CONFIGS_VERSION_MIN 0
#define KAFKA_DESCRIBE_CONFIGS_VERSION_MAX 4
#define KAFKA_INIT_PRODUCER_ID_VERSION_MIN 0
#define KAFKA_INIT_PRODUCER_ID_VERSION_MAX 5

/* First flexible (KIP-482) version of each. */
#define KAFKA_CREATE_TOPICS_FLEXIBLE 5
#define KAFKA_DELETE_TOPICS_FLEXIBLE 4
#define KAFKA_DELETE_RECORDS_FLEXIBLE 2
#define KAFKA_DESCRIBE_CONFIGS_FLEXIBLE 4
#define KAFKA_INIT_PRODUCER_ID_FLEXIBLE 2

/* --- CreateTopics (19) ---------------------------------------------------
 * v5 adds the topic's resulting settings to each result, v6 changes no
 * field (THROTTLING_QUOTA_EXCEEDED may be answered), v7 adds TopicId. */

struct kafka_CreatableReplicaAssignment {
    int32_t PartitionIndex;
    const int32_t *BrokerIds;
    int32_t BrokerIdsCnt;
};

/* Kafka's schema spells this one "Createable". */
struct kafka_CreateableTopicConfig {
    struct slice Name;
    struct slice Value; /* nullable */
};

struct kafka_CreatableTopic {
    struct slice Name;
    int32_t NumPartitions;     /* -1: broker default or from Assignments */
    int16_t ReplicationFactor; /* -1: likewise (sent by kafkajs at v3) */
    /* Up to KAFKA_REQUEST_PARTITIONS_MAX entries. */
    const struct kafka_CreatableReplicaAssignment *Assignments;
    int32_t AssignmentsCnt;
    const struct kafka_CreateableTopicConfig *Configs;
    int32_t ConfigsCnt;
};

struct kafka_CreateTopicsRequest {
    const struct kafka_CreatableTopic *Topics;
    int32_t TopicsCnt;
    int32_t TimeoutMs;
    bool ValidateOnly; /* v1+; default false */
};

/* One config of a created topic, as DescribeConfigs would list it. */
struct kafka_CreatableTopicConfigs {
    struct slice Name;
    struct slice Value; /* nullable (null for a sensitive one) */
    bool ReadOnly;
    int8_t ConfigSource; /* default -1 */
    bool IsSensitive;
};

struct kafka_CreatableTopicResult {
    struct slice Name;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* v1+, nullable; default null */
    struct kafka_uuid TopicId; /* v7+; default zero */
    /* v5+: tagged field 0, written only when not 0; default 0. */
    int16_t TopicConfigErrorCode;
    int32_t NumPartitions;     /* v5+; default -1 */
    int16_t ReplicationFactor; /* v5+; default -1 */
    /* v5+, nullable; default empty. */
    const struct kafka_CreatableTopicConfigs *Configs;
    int32_t ConfigsCnt;
};

struct kafka_CreateTopicsResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    const struct kafka_CreatableTopicResult *Topics;
    int32_t TopicsCnt;
};

MUST_CHECK int
kafka_create_topics_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_CreateTopicsRequest *out);
MUST_CHECK int kafka_create_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_CreateTopicsResponse *resp);
MUST_CHECK int
kafka_create_topics_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_CreateTopicsRequest *req);
MUST_CHECK int
kafka_create_topics_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_CreateTopicsResponse *out);

/* --- DeleteTopics (20) --------------------------------------------------- */

/* v4+ is flexible; v5 adds ErrorMessage to results; v6 names topics by
 * Topics (a name or a TopicId) instead of TopicNames, and adds TopicId
 * to results, whose Name may then be null. */
struct kafka_DeleteTopicState {
    struct slice Name;         /* nullable; null: by TopicId */
    struct kafka_uuid TopicId; /* zero: by Name */
};

struct kafka_DeleteTopicsRequest {
    const struct slice *TopicNames; /* v0..5; empty in v6 */
    int32_t TopicNamesCnt;
    int32_t TimeoutMs;
    const struct kafka_DeleteTopicState *Topics; /* v6+; empty before */
    int32_t TopicsCnt;
};

struct kafka_DeletableTopicResult {
    struct slice Name; /* nullable v6+ */
    int16_t ErrorCode;
    struct slice ErrorMessage; /* v5+, nullable; default null */
    struct kafka_uuid TopicId; /* v6+; default zero */
};

struct kafka_DeleteTopicsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    const struct kafka_DeletableTopicResult *Responses;
    int32_t ResponsesCnt;
};

MUST_CHECK int
kafka_delete_topics_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DeleteTopicsRequest *out);
MUST_CHECK int kafka_delete_topics_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteTopicsResponse *resp);
MUST_CHECK int
kafka_delete_topics_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_DeleteTopicsRequest *req);
MUST_CHECK int
kafka_delete_topics_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_DeleteTopicsResponse *out);

/* DeleteRecords (21): common/kafka/kafka_codec_records.h, included above. */

/* --- DescribeConfigs (32) ------------------------------------------------
 * v4 is flexible and changes no field. */

struct kafka_DescribeConfigsResource {
    int8_t ResourceType; /* 2 topic, 4 broker */
    struct slice ResourceName;
    /* Nullable: -1 (null) asks for every key. */
    const struct slice *ConfigurationKeys;
    int32_t ConfigurationKeysCnt;
};

struct kafka_DescribeConfigsRequest {
    const struct kafka_DescribeConfigsResource *Resources;
    int32_t ResourcesCnt;
    bool IncludeSynonyms;      /* v1+; default false */
    bool IncludeDocumentation; /* v3+; default false */
};

struct kafka_DescribeConfigsSynonym {
    struct slice Name;
    struct slice Value; /* nullable */
    int8_t Source;
};

struct kafka_DescribeConfigsResourceResult {
    struct slice Name;
    struct slice Value; /* nullable */
    bool ReadOnly;
    bool IsDefault;      /* v0 only; default false */
    int8_t ConfigSource; /* v1+; default -1 */
    bool IsSensitive;
    const struct kafka_DescribeConfigsSynonym *Synonyms; /* v1+ */
    int32_t SynonymsCnt;
    int8_t ConfigType;          /* v3+; default 0 (unknown) */
    struct slice Documentation; /* v3+, nullable; default null */
};

struct kafka_DescribeConfigsResult {
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
    int8_t ResourceType;
    struct slice ResourceName;
    const struct kafka_DescribeConfigsResourceResult *Configs;
    int32_t ConfigsCnt;
};

struct kafka_DescribeConfigsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_DescribeConfigsResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int
kafka_describe_configs_request_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_DescribeConfigsRequest *out);
MUST_CHECK int kafka_describe_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsResponse *resp);
MUST_CHECK int kafka_describe_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeConfigsRequest *req);
MUST_CHECK int kafka_describe_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeConfigsResponse *out);

/* --- InitProducerId (22) ------------------------------------------------- */

/* v2+ is flexible; v3 adds ProducerId and ProducerEpoch (a producer
 * resuming after INVALID_PRODUCER_EPOCH); v4 and v5 change no field. */
struct kafka_InitProducerIdRequest {
    struct slice TransactionalId; /* nullable; null for idempotence */
    int32_t TransactionTimeoutMs;
    int64_t ProducerId;    /* v3+; default -1 */
    int16_t ProducerEpoch; /* v3+; default -1 */
};

struct kafka_InitProducerIdResponse {
    int32_t ThrottleTimeMs;
    int16_t ErrorCode;
    int64_t ProducerId;
    int16_t ProducerEpoch;
};

MUST_CHECK int kafka_init_producer_id_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdRequest *out);
MUST_CHECK int kafka_init_producer_id_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdResponse *resp);
MUST_CHECK int kafka_init_producer_id_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_InitProducerIdRequest *req);
MUST_CHECK int kafka_init_producer_id_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_InitProducerIdResponse *out);


#endif
