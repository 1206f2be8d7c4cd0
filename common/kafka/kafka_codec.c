/* Kafka codec (common/kafka/kafka_codec.h): the helpers shared by every API,
 * ApiVersions and Metadata. Field lists follow
 * shared/reference/kafka-protocol.md sections 4.1 and 4.2, checked against
 * apache/kafka ApiVersions{Request,Response}.json and
 * Metadata{Request,Response}.json. Pure: no I/O, no clock, no globals but
 * const tables; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include <stdint.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

/* --- Shared helpers ------------------------------------------------------ */

/* What "" defaults point at. */
static const uint8_t kafka_codec__empty[1];

struct slice kafka_codec__empty_string(void)
{
    struct slice s = {kafka_codec__empty, 0};
    return s;
}

void kafka_codec__fail(struct reader *r, int rc)
{
    ASSERT(rc != RC_OK);
    if (r->rc == RC_OK) {
        r->rc = rc;
    }
}

void kafka_codec__flexible(struct reader *r, bool flexible)
{
    r->compact = flexible;
}

void kafka_codec__flexible_write(struct writer *w, bool flexible)
{
    w->compact = flexible;
}

void kafka_codec__tags(struct reader *r)
{
    if (r->compact) {
        reader_skip_tagged_fields(r);
    }
}

void kafka_codec__write_tags(struct writer *w)
{
    if (w->compact) {
        writer_uvarint(w, 0);
    }
}

int kafka_codec__end(struct writer *w)
{
    w->compact = false;
    return w->rc;
}

int kafka_codec__finish(struct reader *r)
{
    r->compact = false;
    return r->rc;
}

/* The count checks of kafka_codec__array(); puts pos back on failure so
 * that, as with every reader call, a failing read consumes nothing. Not
 * reader_array_len(): it calls a count the bytes left cannot hold
 * RC_MALFORMED, and here that is the frame ending early (RC_SHORT). */
static int32_t kafka_codec_count(struct reader *r, size_t wire_min_bytes,
                                 int32_t n_max, bool nullable, bool compact)
{
    ASSERT(wire_min_bytes > 0);
    ASSERT(n_max >= 0);
    size_t start = r->pos;
    int32_t n;
    if (compact) { /* uvarint count + 1; 0 is null */
        uint32_t u = reader_uvarint(r);
        n = u == 0 ? -1 : u - 1 > INT32_MAX ? INT32_MIN : (int32_t)(u - 1);
    } else {
        n = reader_i32(r);
    }
    int rc = RC_OK;
    if (r->rc != RC_OK) {
        return 0;
    }
    if (n == -1 && nullable) {
        return -1;
    }
    if (n < 0) {
        rc = RC_MALFORMED;
    } else if ((uint64_t)n > reader_remaining(r) / wire_min_bytes) {
        rc = RC_SHORT;
    } else if (n > n_max) {
        rc = RC_TOO_LARGE;
    }
    if (rc != RC_OK) {
        kafka_codec__fail(r, rc);
        r->pos = start;
        return 0;
    }
    return n;
}

void *kafka_codec__array(struct reader *r, struct arena *a, int32_t *n,
                         size_t elem_bytes, size_t wire_min_bytes,
                         int32_t n_max, bool nullable)
{
    /* A compact element may be shorter than its classic form (a string's
     * length is one byte): count it at one byte or more. */
    *n = kafka_codec_count(r, r->compact ? 1 : wire_min_bytes, n_max,
                           nullable, r->compact);
    if (*n <= 0) {
        return NULL;
    }
    void *elems = NULL;
    int rc = arena_alloc(a, (size_t)*n, elem_bytes, &elems);
    if (rc != RC_OK) {
        kafka_codec__fail(r, rc);
        *n = 0;
        return NULL;
    }
    return elems;
}

const int32_t *kafka_codec__read_i32s(struct reader *r, struct arena *a,
                                      int32_t *n, bool nullable)
{
    int32_t *v = kafka_codec__array(r, a, n, sizeof(*v), 4,
                                    (int32_t)KAFKA_ARRAY_COUNT_MAX, nullable);
    for (int32_t i = 0; i < *n; i++) {
        v[i] = reader_i32(r);
    }
    return v;
}

const int64_t *kafka_codec__read_i64s(struct reader *r, struct arena *a,
                                      int32_t *n)
{
    int64_t *v = kafka_codec__array(r, a, n, sizeof(*v), 8,
                                    (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < *n; i++) {
        v[i] = reader_i64(r);
    }
    return v;
}

const struct slice *kafka_codec__read_strings(struct reader *r,
                                              struct arena *a, int32_t *n,
                                              int32_t n_max, bool nullable)
{
    struct slice *v =
        kafka_codec__array(r, a, n, sizeof(*v), 2, n_max, nullable);
    for (int32_t i = 0; i < *n; i++) {
        v[i] = reader_string(r);
    }
    return v;
}

void kafka_codec__write_count(struct writer *w, int32_t n, const void *elems,
                              bool nullable)
{
    ASSERT(n >= -1);
    ASSERT(n >= 0 || nullable);
    ASSERT(n <= 0 || elems != NULL);
    if (w->compact) {
        writer_compact_array_len(w, n);
        return;
    }
    writer_i32(w, n);
}

void kafka_codec__write_i32s(struct writer *w, const int32_t *v, int32_t n,
                             bool nullable)
{
    kafka_codec__write_count(w, n, v, nullable);
    for (int32_t i = 0; i < n; i++) {
        writer_i32(w, v[i]);
    }
}

void kafka_codec__write_strings(struct writer *w, const struct slice *v,
                                int32_t n, bool nullable)
{
    kafka_codec__write_count(w, n, v, nullable);
    for (int32_t i = 0; i < n; i++) {
        writer_string_slice(w, v[i]);
    }
}

struct kafka_uuid kafka_codec__read_uuid(struct reader *r)
{
    struct kafka_uuid u = {0};
    struct slice s = reader_raw(r, sizeof u.bytes);
    if (r->rc == RC_OK) {
        memcpy(u.bytes, s.ptr, sizeof u.bytes);
    }
    return u;
}

void kafka_codec__write_uuid(struct writer *w, const struct kafka_uuid *u)
{
    writer_raw(w, u->bytes, sizeof u->bytes);
}

void kafka_codec__check_version(int16_t version, int16_t min, int16_t max)
{
    ASSERT(version >= min);
    ASSERT(version <= max);
}

/* --- Versions and errors ------------------------------------------------- */

/* Each API's decoder and encoder behind the one signature of the table. */
#define X(NAME, key, name, lower, Request)                               \
    static int kafka_codec__decode_##lower(struct reader *r, int16_t v,  \
                                           struct arena *a, void *msg)   \
    {                                                                    \
        return kafka_##lower##_request_decode(r, v, a, msg);             \
    }                                                                    \
    static int kafka_codec__encode_##lower(struct writer *w, int16_t v,  \
                                           const void *msg)              \
    {                                                                    \
        return kafka_##lower##_request_encode(w, v, msg);                \
    }
KAFKA_APIS(X)
#undef X

const struct kafka_api kafka_apis[] = {
#define X(NAME, key, name, lower, Request)                               \
    {KAFKA_API_##NAME,                                                   \
     name,                                                               \
     KAFKA_##NAME##_VERSION_MIN,                                         \
     KAFKA_##NAME##_VERSION_MAX,                                         \
     sizeof(struct kafka_##Request),                                     \
     kafka_codec__decode_##lower,                                        \
     kafka_codec__encode_##lower},
    KAFKA_APIS(X)
#undef X
};

const size_t kafka_apis_count = ARRAY_LEN(kafka_apis);

const struct kafka_api *kafka_api_find(int16_t api_key)
{
    for (size_t i = 0; i < ARRAY_LEN(kafka_apis); i++) {
        if (kafka_apis[i].key == api_key) {
            return &kafka_apis[i];
        }
    }
    return NULL;
}

bool kafka_codec_version_range(int16_t api_key, int16_t *min, int16_t *max)
{
    const struct kafka_api *api = kafka_api_find(api_key);
    if (api == NULL) {
        return false;
    }
    if (min != NULL) {
        *min = api->min_version;
    }
    if (max != NULL) {
        *max = api->max_version;
    }
    return true;
}

/* --- ApiVersions --------------------------------------------------------- */

/* Versions above the codec's range use the v0 layout (kafka_codec.h). */
static int16_t api_versions_layout(int16_t version)
{
    ASSERT(version >= 0);
    return version > KAFKA_API_VERSIONS_VERSION_MAX ? 0 : version;
}

/* v3+ is flexible (KIP-482). */
#define API_VERSIONS_FLEXIBLE 3

int kafka_api_versions_request_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_ApiVersionsRequest *out)
{
    (void)a;
    out->ClientSoftwareName = slice_null();
    out->ClientSoftwareVersion = slice_null();
    if (version < 0) {
        return RC_INVALID;
    }
    if (version > KAFKA_API_VERSIONS_VERSION_MAX) {
        return RC_OK; /* not parsed: answered with the v0 layout */
    }
    if (version >= API_VERSIONS_FLEXIBLE) {
        kafka_codec__flexible(r, true);
        out->ClientSoftwareName = reader_string(r);
        out->ClientSoftwareVersion = reader_string(r);
        kafka_codec__tags(r);
    }
    return kafka_codec__finish(r); /* v0..2: an empty body */
}

int kafka_api_versions_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_ApiVersionsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_API_VERSIONS_VERSION_MIN,
                               KAFKA_API_VERSIONS_VERSION_MAX);
    if (version >= API_VERSIONS_FLEXIBLE) {
        struct slice n = req->ClientSoftwareName; /* null: written "" */
        struct slice v = req->ClientSoftwareVersion;
        kafka_codec__flexible_write(w, true);
        writer_string(w, (const char *)n.ptr, n.len);
        writer_string(w, (const char *)v.ptr, v.len);
        kafka_codec__write_tags(w);
    }
    return kafka_codec__end(w);
}

int kafka_api_versions_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ApiVersionsResponse *resp)
{
    int16_t layout = api_versions_layout(version);
    kafka_codec__flexible_write(w, layout >= API_VERSIONS_FLEXIBLE);
    writer_i16(w, resp->ErrorCode);
    kafka_codec__write_count(w, resp->ApiKeysCnt, resp->ApiKeys, false);
    for (int32_t i = 0; i < resp->ApiKeysCnt; i++) {
        writer_i16(w, resp->ApiKeys[i].ApiKey);
        writer_i16(w, resp->ApiKeys[i].MinVersion);
        writer_i16(w, resp->ApiKeys[i].MaxVersion);
        kafka_codec__write_tags(w);
    }
    if (layout >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_tags(w); /* no features: none are kept */
    return kafka_codec__end(w);
}

int kafka_api_versions_response_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_ApiVersionsResponse *out)
{
    if (version < 0) {
        return RC_INVALID;
    }
    int16_t layout = api_versions_layout(version);
    kafka_codec__flexible(r, layout >= API_VERSIONS_FLEXIBLE);
    out->ErrorCode = reader_i16(r);
    struct kafka_ApiVersion *keys = kafka_codec__array(
        r, a, &out->ApiKeysCnt, sizeof(*keys), 6, INT16_MAX + 1, false);
    for (int32_t i = 0; i < out->ApiKeysCnt; i++) {
        keys[i].ApiKey = reader_i16(r);
        keys[i].MinVersion = reader_i16(r);
        keys[i].MaxVersion = reader_i16(r);
        kafka_codec__tags(r);
    }
    out->ApiKeys = keys;
    out->ThrottleTimeMs = layout >= 1 ? reader_i32(r) : 0;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

/* --- Metadata: request --------------------------------------------------- */

/* v9+ is flexible (KIP-482). */
#define METADATA_FLEXIBLE 9

static bool metadata_version_ok(int16_t version)
{
    return version >= KAFKA_METADATA_VERSION_MIN &&
           version <= KAFKA_METADATA_VERSION_MAX;
}

int kafka_metadata_request_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_MetadataRequest *out)
{
    if (!metadata_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= METADATA_FLEXIBLE);
    /* v0: not nullable, and an empty list asks for every topic. */
    struct kafka_MetadataRequestTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 2,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, version >= 1 /* nullable */);
    for (int32_t i = 0; i < out->TopicsCnt; i++) {
        topics[i].TopicId = version >= 10 ? kafka_codec__read_uuid(r)
                                          : (struct kafka_uuid){0};
        topics[i].Name = version >= 10 ? reader_nullable_string(r)
                                       : reader_string(r);
        kafka_codec__tags(r);
    }
    out->Topics = topics;
    if (version == 0 && out->TopicsCnt == 0 && r->rc == RC_OK) {
        out->TopicsCnt = -1; /* all, as null asks from v1 on */
    }
    out->AllowAutoTopicCreation = version >= 4 ? reader_bool(r) : true;
    out->IncludeClusterAuthorizedOperations =
        version >= 8 && version <= 10 ? reader_bool(r) : false;
    out->IncludeTopicAuthorizedOperations =
        version >= 8 ? reader_bool(r) : false;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_metadata_request_encode(struct writer *w, int16_t version,
                                  const struct kafka_MetadataRequest *req)
{
    kafka_codec__check_version(version, KAFKA_METADATA_VERSION_MIN,
                               KAFKA_METADATA_VERSION_MAX);
    /* v0 has no null list: all topics is the empty one (and no topic
     * cannot be asked for). */
    ASSERT(version >= 1 || req->TopicsCnt != 0);
    kafka_codec__flexible_write(w, version >= METADATA_FLEXIBLE);
    kafka_codec__write_count(w, version == 0 && req->TopicsCnt < 0
                                    ? 0
                                    : req->TopicsCnt,
                             req->Topics, true);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        if (version >= 10) {
            kafka_codec__write_uuid(w, &req->Topics[i].TopicId);
            writer_nullable_string_slice(w, req->Topics[i].Name);
        } else {
            writer_string_slice(w, req->Topics[i].Name);
        }
        kafka_codec__write_tags(w);
    }
    if (version >= 4) {
        writer_bool(w, req->AllowAutoTopicCreation);
    }
    if (version >= 8 && version <= 10) {
        writer_bool(w, req->IncludeClusterAuthorizedOperations);
    }
    if (version >= 8) {
        writer_bool(w, req->IncludeTopicAuthorizedOperations);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Metadata: response -------------------------------------------------- */

static void
metadata_partition_encode(struct writer *w, int16_t version,
                          const struct kafka_MetadataResponsePartition *p)
{
    writer_i16(w, p->ErrorCode);
    writer_i32(w, p->PartitionIndex);
    writer_i32(w, p->LeaderId);
    if (version >= 7) {
        writer_i32(w, p->LeaderEpoch);
    }
    kafka_codec__write_i32s(w, p->ReplicaNodes, p->ReplicaNodesCnt, false);
    kafka_codec__write_i32s(w, p->IsrNodes, p->IsrNodesCnt, false);
    if (version >= 5) {
        kafka_codec__write_i32s(w, p->OfflineReplicas, p->OfflineReplicasCnt,
                                false);
    }
    kafka_codec__write_tags(w);
}

static void metadata_topic_encode(struct writer *w, int16_t version,
                                  const struct kafka_MetadataResponseTopic *t)
{
    writer_i16(w, t->ErrorCode);
    if (version >= 12) {
        writer_nullable_string_slice(w, t->Name);
    } else {
        writer_string_slice(w, t->Name);
    }
    if (version >= 10) {
        kafka_codec__write_uuid(w, &t->TopicId);
    }
    if (version >= 1) {
        writer_bool(w, t->IsInternal);
    }
    kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        metadata_partition_encode(w, version, &t->Partitions[i]);
    }
    if (version >= 8) {
        writer_i32(w, t->TopicAuthorizedOperations);
    }
    kafka_codec__write_tags(w);
}

int kafka_metadata_response_encode(struct writer *w, int16_t version,
                                   const struct kafka_MetadataResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_METADATA_VERSION_MIN,
                               KAFKA_METADATA_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= METADATA_FLEXIBLE);
    if (version >= 3) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->BrokersCnt, resp->Brokers, false);
    for (int32_t i = 0; i < resp->BrokersCnt; i++) {
        const struct kafka_MetadataResponseBroker *b = &resp->Brokers[i];
        writer_i32(w, b->NodeId);
        writer_string_slice(w, b->Host);
        writer_i32(w, b->Port);
        if (version >= 1) {
            writer_nullable_string_slice(w, b->Rack);
        }
        kafka_codec__write_tags(w);
    }
    if (version >= 2) {
        writer_nullable_string_slice(w, resp->ClusterId);
    }
    if (version >= 1) {
        writer_i32(w, resp->ControllerId);
    }
    kafka_codec__write_count(w, resp->TopicsCnt, resp->Topics, false);
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        metadata_topic_encode(w, version, &resp->Topics[i]);
    }
    if (version >= 8 && version <= 10) {
        writer_i32(w, resp->ClusterAuthorizedOperations);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void metadata_partition_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_MetadataResponsePartition *p)
{
    p->ErrorCode = reader_i16(r);
    p->PartitionIndex = reader_i32(r);
    p->LeaderId = reader_i32(r);
    p->LeaderEpoch = version >= 7 ? reader_i32(r) : -1;
    p->ReplicaNodes = kafka_codec__read_i32s(r, a, &p->ReplicaNodesCnt, false);
    p->IsrNodes = kafka_codec__read_i32s(r, a, &p->IsrNodesCnt, false);
    p->OfflineReplicas = NULL;
    p->OfflineReplicasCnt = 0;
    if (version >= 5) {
        p->OfflineReplicas =
            kafka_codec__read_i32s(r, a, &p->OfflineReplicasCnt, false);
    }
    kafka_codec__tags(r);
}

static void metadata_topic_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_MetadataResponseTopic *t)
{
    t->ErrorCode = reader_i16(r);
    t->Name = version >= 12 ? reader_nullable_string(r) : reader_string(r);
    t->TopicId = version >= 10 ? kafka_codec__read_uuid(r)
                               : (struct kafka_uuid){0};
    t->IsInternal = version >= 1 ? reader_bool(r) : false;
    /* error_code, index, leader, two empty arrays: 18 bytes at least. */
    struct kafka_MetadataResponsePartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 18,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        metadata_partition_decode(r, version, a, &parts[i]);
    }
    t->Partitions = parts;
    t->TopicAuthorizedOperations = version >= 8 ? reader_i32(r) : INT32_MIN;
    kafka_codec__tags(r);
}

static void metadata_brokers_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_MetadataResponse *out)
{
    /* node id, host, port (and rack, v1+): 10 bytes at least. */
    struct kafka_MetadataResponseBroker *brokers =
        kafka_codec__array(r, a, &out->BrokersCnt, sizeof(*brokers), 10,
                           (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->BrokersCnt; i++) {
        brokers[i].NodeId = reader_i32(r);
        brokers[i].Host = reader_string(r);
        brokers[i].Port = reader_i32(r);
        brokers[i].Rack = version >= 1 ? reader_nullable_string(r)
                                       : slice_null();
        kafka_codec__tags(r);
    }
    out->Brokers = brokers;
}

int kafka_metadata_response_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_MetadataResponse *out)
{
    if (!metadata_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= METADATA_FLEXIBLE);
    out->ThrottleTimeMs = version >= 3 ? reader_i32(r) : 0;
    metadata_brokers_decode(r, version, a, out);
    out->ClusterId = version >= 2 ? reader_nullable_string(r) : slice_null();
    out->ControllerId = version >= 1 ? reader_i32(r) : -1;
    /* error_code, name, (is_internal,) partitions count: 8 bytes. */
    struct kafka_MetadataResponseTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 8,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        metadata_topic_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    out->ClusterAuthorizedOperations =
        version >= 8 && version <= 10 ? reader_i32(r) : INT32_MIN;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
