/* The Kafka codec's structs and functions for AlterConfigs (33) and
 * IncrementalAlterConfigs (44), implemented in
 * common/kafka/kafka_codec_configs.c. Include common/kafka/kafka_codec.h,
 * which includes this and holds the conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_CONFIGS_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Versions this codec parses and writes. */
#define KAFKA_ALTER_CONFIGS_VERSION_MIN 0
#define KAFKA_ALTER_CONFIGS_VERSION_MAX 2
#define KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MIN 0
#define KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MAX 1

/* First flexible (KIP-482) version of each. */
#define KAFKA_ALTER_CONFIGS_FLEXIBLE 2
#define KAFKA_INCREMENTAL_ALTER_CONFIGS_FLEXIBLE 1

/* IncrementalAlterConfigs operations (KIP-339). */
#define KAFKA_CONFIG_OP_SET 0
#define KAFKA_CONFIG_OP_DELETE 1
#define KAFKA_CONFIG_OP_APPEND 2
#define KAFKA_CONFIG_OP_SUBTRACT 3

/* One config of either request; AlterConfigs has no operation on the
 * wire and decodes as KAFKA_CONFIG_OP_SET. */
struct kafka_AlterableConfig {
    struct slice Name;
    int8_t ConfigOperation; /* IncrementalAlterConfigs only */
    struct slice Value;     /* nullable */
};

struct kafka_AlterConfigsResource {
    int8_t ResourceType; /* 2 topic, 4 broker */
    struct slice ResourceName;
    const struct kafka_AlterableConfig *Configs;
    int32_t ConfigsCnt;
};

/* --- AlterConfigs (33) ---------------------------------------------------
 * v1 changes no field, v2 is flexible. The configs given replace every
 * dynamic config the resource had. */
struct kafka_AlterConfigsRequest {
    const struct kafka_AlterConfigsResource *Resources;
    int32_t ResourcesCnt;
    bool ValidateOnly;
};

/* --- IncrementalAlterConfigs (44) ----------------------------------------
 * v1 is flexible and changes no field. */
struct kafka_IncrementalAlterConfigsRequest {
    const struct kafka_AlterConfigsResource *Resources;
    int32_t ResourcesCnt;
    bool ValidateOnly;
};

/* Both APIs answer with this shape. */
struct kafka_AlterConfigsResourceResponse {
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
    int8_t ResourceType;
    struct slice ResourceName;
};

struct kafka_AlterConfigsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_AlterConfigsResourceResponse *Responses;
    int32_t ResponsesCnt;
};

MUST_CHECK int
kafka_alter_configs_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_AlterConfigsRequest *out);
MUST_CHECK int
kafka_alter_configs_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_AlterConfigsRequest *req);
MUST_CHECK int kafka_alter_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterConfigsResponse *resp);
MUST_CHECK int
kafka_alter_configs_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_AlterConfigsResponse *out);

MUST_CHECK int kafka_incremental_alter_configs_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_IncrementalAlterConfigsRequest *out);
MUST_CHECK int kafka_incremental_alter_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_IncrementalAlterConfigsRequest *req);
MUST_CHECK int kafka_incremental_alter_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterConfigsResponse *resp);
MUST_CHECK int kafka_incremental_alter_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterConfigsResponse *out);

#endif
