/* Kafka codec (common/kafka/kafka_codec.h): AlterConfigs v0..2 (flexible
 * from v2) and IncrementalAlterConfigs v0..1 (flexible from v1), checked
 * against apache/kafka AlterConfigs{Request,Response}.json and
 * IncrementalAlterConfigs{Request,Response}.json. The two share their
 * shape but for IncrementalAlterConfigs' per-config operation. Pure: no
 * I/O, no clock, no globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_in(int16_t version, int16_t min, int16_t max)
{
    return version >= min && version <= max;
}

/* --- Requests ------------------------------------------------------------ */

static void resources_decode(struct reader *r, struct arena *a,
                             bool incremental,
                             const struct kafka_AlterConfigsResource **out,
                             int32_t *n)
{
    /* type, name, configs count: 7 bytes at least. */
    struct kafka_AlterConfigsResource *res = kafka_codec__array(
        r, a, n, sizeof(*res), 7, (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < *n && r->rc == RC_OK; i++) {
        res[i].ResourceType = reader_i8(r);
        res[i].ResourceName = reader_string(r);
        /* name, (operation,) value: 4 bytes at least. */
        struct kafka_AlterableConfig *cs = kafka_codec__array(
            r, a, &res[i].ConfigsCnt, sizeof(*cs), 4,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t j = 0; j < res[i].ConfigsCnt && r->rc == RC_OK; j++) {
            cs[j].Name = reader_string(r);
            cs[j].ConfigOperation =
                incremental ? reader_i8(r) : (int8_t)KAFKA_CONFIG_OP_SET;
            cs[j].Value = reader_nullable_string(r);
            kafka_codec__tags(r);
        }
        res[i].Configs = cs;
        kafka_codec__tags(r);
    }
    *out = res;
}

static void resources_encode(struct writer *w, bool incremental,
                             const struct kafka_AlterConfigsResource *res,
                             int32_t n)
{
    kafka_codec__write_count(w, n, res, false);
    for (int32_t i = 0; i < n; i++) {
        writer_i8(w, res[i].ResourceType);
        writer_string_slice(w, res[i].ResourceName);
        kafka_codec__write_count(w, res[i].ConfigsCnt, res[i].Configs,
                                 false);
        for (int32_t j = 0; j < res[i].ConfigsCnt; j++) {
            const struct kafka_AlterableConfig *c = &res[i].Configs[j];
            writer_string_slice(w, c->Name);
            if (incremental) {
                writer_i8(w, c->ConfigOperation);
            }
            writer_nullable_string_slice(w, c->Value);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
}

int kafka_alter_configs_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_AlterConfigsRequest *out)
{
    if (!version_in(version, KAFKA_ALTER_CONFIGS_VERSION_MIN,
                    KAFKA_ALTER_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_ALTER_CONFIGS_FLEXIBLE);
    resources_decode(r, a, false, &out->Resources, &out->ResourcesCnt);
    out->ValidateOnly = reader_bool(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_alter_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterConfigsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_ALTER_CONFIGS_VERSION_MIN,
                               KAFKA_ALTER_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_ALTER_CONFIGS_FLEXIBLE);
    resources_encode(w, false, req->Resources, req->ResourcesCnt);
    writer_bool(w, req->ValidateOnly);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_incremental_alter_configs_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_IncrementalAlterConfigsRequest *out)
{
    if (!version_in(version, KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MIN,
                    KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r,
                          version >= KAFKA_INCREMENTAL_ALTER_CONFIGS_FLEXIBLE);
    resources_decode(r, a, true, &out->Resources, &out->ResourcesCnt);
    out->ValidateOnly = reader_bool(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_incremental_alter_configs_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_IncrementalAlterConfigsRequest *req)
{
    kafka_codec__check_version(version,
                               KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MIN,
                               KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(
        w, version >= KAFKA_INCREMENTAL_ALTER_CONFIGS_FLEXIBLE);
    resources_encode(w, true, req->Resources, req->ResourcesCnt);
    writer_bool(w, req->ValidateOnly);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Responses ----------------------------------------------------------- */

static int response_encode(struct writer *w,
                           const struct kafka_AlterConfigsResponse *resp)
{
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_AlterConfigsResourceResponse *x =
            &resp->Responses[i];
        writer_i16(w, x->ErrorCode);
        writer_nullable_string_slice(w, x->ErrorMessage);
        writer_i8(w, x->ResourceType);
        writer_string_slice(w, x->ResourceName);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static int response_decode(struct reader *r, struct arena *a,
                           struct kafka_AlterConfigsResponse *out)
{
    out->ThrottleTimeMs = reader_i32(r);
    /* error, message, type, name: 7 bytes at least. */
    struct kafka_AlterConfigsResourceResponse *x = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*x), 7,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt && r->rc == RC_OK; i++) {
        x[i].ErrorCode = reader_i16(r);
        x[i].ErrorMessage = reader_nullable_string(r);
        x[i].ResourceType = reader_i8(r);
        x[i].ResourceName = reader_string(r);
        kafka_codec__tags(r);
    }
    out->Responses = x;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_alter_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterConfigsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_ALTER_CONFIGS_VERSION_MIN,
                               KAFKA_ALTER_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= KAFKA_ALTER_CONFIGS_FLEXIBLE);
    return response_encode(w, resp);
}

int kafka_alter_configs_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_AlterConfigsResponse *out)
{
    if (!version_in(version, KAFKA_ALTER_CONFIGS_VERSION_MIN,
                    KAFKA_ALTER_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= KAFKA_ALTER_CONFIGS_FLEXIBLE);
    return response_decode(r, a, out);
}

int kafka_incremental_alter_configs_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_AlterConfigsResponse *resp)
{
    kafka_codec__check_version(version,
                               KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MIN,
                               KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MAX);
    kafka_codec__flexible_write(
        w, version >= KAFKA_INCREMENTAL_ALTER_CONFIGS_FLEXIBLE);
    return response_encode(w, resp);
}

int kafka_incremental_alter_configs_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_AlterConfigsResponse *out)
{
    if (!version_in(version, KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MIN,
                    KAFKA_INCREMENTAL_ALTER_CONFIGS_VERSION_MAX)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r,
                          version >= KAFKA_INCREMENTAL_ALTER_CONFIGS_FLEXIBLE);
    return response_decode(r, a, out);
}
