/* Kafka request dispatch and the small handlers: ApiVersions, Metadata,
 * ListOffsets (broker/broker.h). The table below is also what ApiVersions
 * advertises, so nothing is advertised that is not implemented. */
#include "broker/broker.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/group/group_store.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

typedef void (*kafka_handler_fn)(struct broker *b, struct kafka_request *req);

/* The handler of each API of KAFKA_APIS (common/kafka/kafka_codec.h),
 * indexed by ApiKey; the versions are the codec's (kafka_api_find()). */
static const kafka_handler_fn kafka_handlers[] = {
#define X(NAME, key, name, lower, Request) [key] = kafka_handle_##lower,
    KAFKA_APIS(X)
#undef X
};

void kafka_send(struct kafka_request *req, kafka_encode_fn enc,
                const void *resp)
{
    struct kafka_response out;
    kafka_response_init(&out);
    int rv = enc(&out.body, req->api_version, resp);
    if (rv == RC_OK) {
        rv = out.body.rc;
    }
    if (rv != RC_OK) {
        kafka_response_free(&out);
        kafka_close_conn(req, "response could not be encoded");
        return;
    }
    kafka_reply(req, &out);
}

const char *broker_topic_name(struct slice s,
                              char buf[META_TOPIC_NAME_BYTES_MAX + 1])
{
    if (!meta_topic_name_bytes_valid((const char *)s.ptr, s.len)) {
        return NULL;
    }
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    return buf;
}

struct partition *broker_partition(struct broker *b, struct slice topic,
                                   int32_t id)
{
    char buf[META_TOPIC_NAME_BYTES_MAX + 1];
    const char *name = broker_topic_name(topic, buf);
    return name != NULL ? replica_manager_find(&b->partitions, name, id)
                        : NULL;
}

int16_t broker_not_leader_error(struct broker *b, struct slice topic,
                                int32_t id)
{
    char buf[META_TOPIC_NAME_BYTES_MAX + 1];
    const char *name = broker_topic_name(topic, buf);
    if (name == NULL) {
        return KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    const struct meta_topic *t =
        meta_image_topic(membership_image(b->membership), name);
    if (t == NULL || id < 0 || id >= t->n_partitions) {
        return KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
}

/* --- ApiVersions --------------------------------------------------------- */

static int enc_api_versions(struct writer *w, int16_t v, const void *r)
{
    return kafka_api_versions_response_encode(w, v, r);
}

/* Kafka's rule for ClientSoftwareName and ClientSoftwareVersion
 * (ApiVersionsRequest.isValid): [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? */
static bool software_field_valid(struct slice s)
{
    if (s.len == 0) {
        return false;
    }
    for (size_t i = 0; i < s.len; i++) {
        uint8_t c = s.ptr[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9');
        bool inner = i > 0 && i + 1 < s.len && (c == '-' || c == '.');
        if (!alnum && !inner) {
            return false;
        }
    }
    return true;
}

void kafka_handle_api_versions(struct broker *b, struct kafka_request *req)
{
    (void)b;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_ApiVersionsRequest rq;
    if (kafka_api_versions_request_decode(&r, req->api_version, NULL, &rq) !=
        RC_OK) {
        kafka_close_conn(req, "malformed ApiVersions request");
        return;
    }
    if (req->api_version >= 3) {
        if (!software_field_valid(rq.ClientSoftwareName) ||
            !software_field_valid(rq.ClientSoftwareVersion)) {
            /* Kafka answers INVALID_REQUEST, with no versions. */
            struct kafka_ApiVersionsResponse bad = {
                .ErrorCode = KAFKA_ERROR_INVALID_REQUEST};
            kafka_send(req, enc_api_versions, &bad);
            return;
        }
        kafka_conn_set_software(req->conn, rq.ClientSoftwareName,
                                rq.ClientSoftwareVersion);
    }
    struct kafka_ApiVersion keys[ARRAY_LEN(kafka_handlers)];
    int32_t n = 0;
    for (size_t i = 0; i < kafka_apis_count; i++) {
        ASSERT((size_t)n < ARRAY_LEN(keys));
        keys[n].ApiKey = kafka_apis[i].key;
        keys[n].MinVersion = kafka_apis[i].min_version;
        keys[n].MaxVersion = kafka_apis[i].max_version;
        n++;
    }
    struct kafka_ApiVersionsResponse resp = {
        .ErrorCode = KAFKA_ERROR_NONE,
        .ApiKeys = keys,
        .ApiKeysCnt = n,
    };
    kafka_send(req, enc_api_versions, &resp);
}

/* Kafka's answer to an ApiVersions version it does not know: the v0 body
 * with UNSUPPORTED_VERSION and only its own range (KIP-511); logged once
 * per connection. */
static void api_versions_unsupported(struct broker *b,
                                     struct kafka_request *req)
{
    if (kafka_conn_first_unsupported(req->conn)) {
        TRACE_INFO(&b->tracer,
                   "peer=%s ApiVersions v%d unsupported: answered with "
                   "its range %d..%d (logged once per connection)",
                   kafka_request_peer(req), req->api_version,
                   KAFKA_API_VERSIONS_VERSION_MIN,
                   KAFKA_API_VERSIONS_VERSION_MAX);
    }
    struct kafka_ApiVersion self = {KAFKA_API_API_VERSIONS,
                                    KAFKA_API_VERSIONS_VERSION_MIN,
                                    KAFKA_API_VERSIONS_VERSION_MAX};
    struct kafka_ApiVersionsResponse resp = {
        .ErrorCode = KAFKA_ERROR_UNSUPPORTED_VERSION,
        .ApiKeys = &self,
        .ApiKeysCnt = 1,
    };
    struct kafka_response out;
    kafka_response_init(&out);
    int rv = kafka_api_versions_response_encode(&out.body, 0, &resp);
    if (rv != RC_OK || out.body.rc != RC_OK) {
        kafka_response_free(&out);
        kafka_close_conn(req, "response could not be encoded");
        return;
    }
    kafka_reply(req, &out);
}

void kafka_handlers_request(void *arg, struct kafka_request *req)
{
    struct broker *b = arg;
    const struct kafka_api *api = kafka_api_find(req->api_key);
    if (api == NULL) {
        kafka_close_conn(req, "unknown api key");
        return;
    }
    ASSERT((size_t)api->key < ARRAY_LEN(kafka_handlers));
    ASSERT(kafka_handlers[api->key] != NULL);
    if (req->api_version >= api->min_version &&
        req->api_version <= api->max_version) {
        kafka_handlers[api->key](b, req);
    } else if (req->api_key == KAFKA_API_API_VERSIONS) {
        api_versions_unsupported(b, req);
    } else {
        kafka_close_conn(req, "unsupported api version");
    }
}

/* --- Metadata ------------------------------------------------------------ */

static int enc_metadata(struct writer *w, int16_t v, const void *r)
{
    return kafka_metadata_response_encode(w, v, r);
}

static int metadata_brokers(struct broker *b, struct arena *a,
                            struct kafka_MetadataResponse *resp)
{
    const struct meta_image *img = membership_image(b->membership);
    struct kafka_MetadataResponseBroker *out = NULL;
    int rv = arena_alloc(a, img->n_brokers, sizeof *out, (void **)&out);
    if (rv != RC_OK) {
        return rv;
    }
    int32_t n = 0;
    resp->ControllerId = -1;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *mb = &img->brokers[i];
        if (mb->fenced) {
            continue; /* clients only see brokers they can use */
        }
        out[n] = (struct kafka_MetadataResponseBroker){
            .NodeId = mb->id, .Host = slice_from_str(mb->host),
            .Port = mb->port,
            .Rack = mb->rack[0] != '\0' ? slice_from_str(mb->rack)
                                        : slice_null()};
        if (resp->ControllerId < 0) {
            resp->ControllerId = mb->id; /* a live broker (kafkajs) */
        }
        n++;
    }
    if (resp->ControllerId < 0) {
        resp->ControllerId = b->id;
    }
    resp->Brokers = out;
    resp->BrokersCnt = n;
    return RC_OK;
}

static int metadata_partitions(const struct meta_image *img,
                               const struct meta_topic *t, struct arena *a,
                               struct kafka_MetadataResponseTopic *out)
{
    struct kafka_MetadataResponsePartition *ps = NULL;
    int rv = arena_alloc(a, (size_t)t->n_partitions, sizeof *ps,
                         (void **)&ps);
    for (int32_t i = 0; rv == RC_OK && i < t->n_partitions; i++) {
        const struct meta_partition *mp = &t->partitions[i];
        int32_t *offline = NULL;
        rv = arena_alloc(a, (size_t)mp->replicas.n, sizeof *offline,
                         (void **)&offline);
        int32_t n_offline = 0;
        for (int32_t k = 0; rv == RC_OK && k < mp->replicas.n; k++) {
            const struct meta_broker *mb =
                meta_image_broker(img, mp->replicas.ids[k]);
            if (mb == NULL || mb->fenced) {
                offline[n_offline++] = mp->replicas.ids[k];
            }
        }
        ps[i] = (struct kafka_MetadataResponsePartition){
            .ErrorCode = mp->leader == META_NO_LEADER
                             ? KAFKA_ERROR_LEADER_NOT_AVAILABLE
                             : KAFKA_ERROR_NONE,
            .PartitionIndex = i, .LeaderId = mp->leader,
            .LeaderEpoch = mp->leader_epoch,
            .ReplicaNodes = mp->replicas.ids,
            .ReplicaNodesCnt = mp->replicas.n, .IsrNodes = mp->isr.ids,
            .IsrNodesCnt = mp->isr.n, .OfflineReplicas = offline,
            .OfflineReplicasCnt = n_offline};
    }
    *out = (struct kafka_MetadataResponseTopic){
        .ErrorCode = KAFKA_ERROR_NONE, .Name = slice_from_str(t->name),
        .IsInternal = strcmp(t->name, GROUP_STORE_TOPIC) == 0,
        .Partitions = ps, .PartitionsCnt = t->n_partitions,
        .TopicAuthorizedOperations = INT32_MIN};
    memcpy(out->TopicId.bytes, t->id.b, sizeof t->id.b);
    return rv;
}

static bool metadata_uuid_is_zero(const struct kafka_uuid *u)
{
    static const struct kafka_uuid zero;
    return memcmp(u->bytes, zero.bytes, sizeof zero.bytes) == 0;
}

/* Kafka's answer to a topic id or a null name before v12 (where it serves
 * neither): INVALID_REQUEST for every topic asked for, a null name as "".
 * Returns false when the request has neither. */
static bool metadata_refuse_ids(const struct kafka_MetadataRequest *rq,
                                int16_t version, struct arena *a,
                                struct kafka_MetadataResponse *resp, int *rv)
{
    bool bad = false;
    for (int32_t i = 0; version < 12 && i < rq->TopicsCnt; i++) {
        bad = bad || slice_is_null(rq->Topics[i].Name) ||
              !metadata_uuid_is_zero(&rq->Topics[i].TopicId);
    }
    if (!bad) {
        return false;
    }
    struct kafka_MetadataResponseTopic *ts = NULL;
    *rv = arena_alloc(a, (size_t)rq->TopicsCnt, sizeof *ts, (void **)&ts);
    for (int32_t i = 0; *rv == RC_OK && i < rq->TopicsCnt; i++) {
        struct slice name = rq->Topics[i].Name;
        ts[i] = (struct kafka_MetadataResponseTopic){
            .ErrorCode = KAFKA_ERROR_INVALID_REQUEST,
            .Name = slice_is_null(name) ? slice_from_str("") : name,
            .TopicAuthorizedOperations = INT32_MIN,
            .TopicId = rq->Topics[i].TopicId};
    }
    resp->Topics = ts;
    resp->TopicsCnt = rq->TopicsCnt;
    return true;
}

/* v12 by topic id, as Kafka does once any id is given: the topics of the
 * ids (names given alongside are not looked at, nothing is created), an
 * unknown id answered UNKNOWN_TOPIC_ID with a null name. */
static int metadata_topics_by_id(struct broker *b,
                                 const struct kafka_MetadataRequest *rq,
                                 struct arena *a,
                                 struct kafka_MetadataResponse *resp)
{
    const struct meta_image *img = membership_image(b->membership);
    struct kafka_MetadataResponseTopic *ts = NULL;
    int rv = arena_alloc(a, (size_t)rq->TopicsCnt, sizeof *ts, (void **)&ts);
    int32_t n = 0;
    for (int32_t i = 0; rv == RC_OK && i < rq->TopicsCnt; i++) {
        const struct kafka_uuid *id = &rq->Topics[i].TopicId;
        if (metadata_uuid_is_zero(id)) {
            continue;
        }
        struct meta_uuid mid;
        memcpy(mid.b, id->bytes, sizeof mid.b);
        const struct meta_topic *t = meta_image_topic_by_id(img, &mid);
        if (t != NULL) {
            rv = metadata_partitions(img, t, a, &ts[n++]);
            continue;
        }
        ts[n++] = (struct kafka_MetadataResponseTopic){
            .ErrorCode = KAFKA_ERROR_UNKNOWN_TOPIC_ID, .Name = slice_null(),
            .TopicAuthorizedOperations = INT32_MIN, .TopicId = *id};
    }
    resp->Topics = ts;
    resp->TopicsCnt = n;
    return rv;
}

static int metadata_topics(struct broker *b, const struct kafka_MetadataRequest
                           *rq, struct arena *a,
                           struct kafka_MetadataResponse *resp)
{
    const struct meta_image *img = membership_image(b->membership);
    bool all = rq->TopicsCnt < 0;
    for (int32_t i = 0; i < rq->TopicsCnt; i++) {
        if (!metadata_uuid_is_zero(&rq->Topics[i].TopicId)) {
            return metadata_topics_by_id(b, rq, a, resp);
        }
    }
    size_t n = all ? img->n_topics : (size_t)rq->TopicsCnt;
    struct kafka_MetadataResponseTopic *ts = NULL;
    const char **create = NULL; /* names to auto-create, one call */
    size_t n_create = 0;
    bool may_create = !all && b->auto_create_topics &&
                      rq->AllowAutoTopicCreation;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK && may_create) {
        /* No more than one call creates: a request naming 100,000
         * unknown topics must not spend the arena on names it will not
         * create (it was closed, where Kafka answers each). */
        rv = arena_alloc(a, n < KAFKA_AUTO_CREATE_PER_REQUEST_MAX
                                ? n
                                : KAFKA_AUTO_CREATE_PER_REQUEST_MAX,
                         sizeof *create, (void **)&create);
    }
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        const struct meta_topic *t = NULL;
        char buf[META_TOPIC_NAME_BYTES_MAX + 1];
        const char *name = NULL;
        if (all) {
            t = &img->topics[i];
        } else {
            name = broker_topic_name(rq->Topics[i].Name, buf);
            t = name != NULL ? meta_image_topic(img, name) : NULL;
        }
        if (t != NULL) {
            rv = metadata_partitions(img, t, a, &ts[i]);
            continue;
        }
        /* Kafka's answers: an illegal name cannot be created
         * (INVALID_TOPIC_EXCEPTION, no controller asked); a legal one is
         * being created (LEADER_NOT_AVAILABLE) or is unknown. */
        int16_t error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        if (may_create && name == NULL) {
            error = KAFKA_ERROR_INVALID_TOPIC_EXCEPTION;
        } else if (may_create) {
            /* Past the bound the client's next Metadata creates it. */
            char *copy = NULL;
            if (n_create < KAFKA_AUTO_CREATE_PER_REQUEST_MAX &&
                arena_alloc(a, strlen(name) + 1, 1, (void **)&copy) ==
                    RC_OK) {
                strcpy(copy, name);
                create[n_create++] = copy;
            }
            error = KAFKA_ERROR_LEADER_NOT_AVAILABLE;
        }
        ts[i] = (struct kafka_MetadataResponseTopic){
            .ErrorCode = error,
            .Name = rq->Topics[i].Name,
            .TopicAuthorizedOperations = INT32_MIN};
    }
    if (n_create > 0) {
        broker_auto_create_topics(b, create, n_create);
    }
    resp->Topics = ts;
    resp->TopicsCnt = (int32_t)n;
    return rv;
}

void kafka_handle_metadata(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_MetadataRequest rq;
    int rv = kafka_metadata_request_decode(&r, req->api_version, &a, &rq);
    struct kafka_MetadataResponse resp = {
        .ClusterId = slice_from_str("cairn"),
        .ClusterAuthorizedOperations = INT32_MIN};
    if (rv == RC_OK) {
        rv = metadata_brokers(b, &a, &resp);
    }
    if (rv == RC_OK &&
        !metadata_refuse_ids(&rq, req->api_version, &a, &resp, &rv)) {
        rv = metadata_topics(b, &rq, &a, &resp);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed Metadata request");
    } else {
        kafka_send(req, enc_metadata, &resp);
    }
    arena_free(&a);
}

/* --- ListOffsets --------------------------------------------------------- */

static int enc_list_offsets(struct writer *w, int16_t v, const void *r)
{
    return kafka_list_offsets_response_encode(w, v, r);
}

/* Kafka's ReplicaId for a debugging client: any replica answers, and
 * "latest" is that replica's log end offset (`cairn status` asks every
 * replica this way). */
#define LIST_OFFSETS__DEBUG_REPLICA (-2)
/* Kafka's ReplicaId for a consumer: the only caller held to the high
 * watermark (a follower, ReplicaId >= 0, sees up to the log end). */
#define LIST_OFFSETS__CONSUMER_REPLICA (-1)

/* Whether version may ask for timestamp: any time, LATEST and EARLIEST;
 * MAX_TIMESTAMP from v7, EARLIEST_LOCAL from v8; no other negative value.
 * Kafka 3.8's broker does not check (its client never builds such a
 * request: ListOffsetsRequest.Builder's oldest version for them is 7 or
 * 8); from 3.9 on (KAFKA-17331, ReplicaManager's
 * isListOffsetsTimestampUnsupported) it answers the partition
 * UNSUPPORTED_VERSION, as Cairn does. */
static bool list_offsets_timestamp_ok(int64_t timestamp, int16_t version)
{
    switch (timestamp) {
    case KAFKA_LIST_OFFSETS_LATEST:
    case KAFKA_LIST_OFFSETS_EARLIEST:
        return true;
    case KAFKA_LIST_OFFSETS_MAX_TIMESTAMP:
        return version >= 7;
    case KAFKA_LIST_OFFSETS_EARLIEST_LOCAL:
        return version >= 8;
    default:
        return timestamp >= 0;
    }
}

/* Kafka's leader epoch for EARLIEST: the first cached epoch if it starts
 * at or below the log start offset, else none. */
static int32_t earliest_epoch(const struct log *l)
{
    const struct log_epoch_cache *c = log_epochs(l);
    if (c->n > 0 && c->entries[0].start_offset <= log_start_offset(l)) {
        return c->entries[0].epoch;
    }
    return -1;
}

/* A lookup by time or MAX_TIMESTAMP, as Kafka's Partition answers it:
 * the record found, if it is below the last offset the caller may fetch;
 * none otherwise, or lag_error when the high watermark lags. */
static void list_by_time(struct partition *p, int64_t timestamp,
                         int64_t fetchable, int16_t lag_error,
                         struct kafka_ListOffsetsPartitionResponse *out)
{
    struct log_time_offset found;
    int rv = timestamp == KAFKA_LIST_OFFSETS_MAX_TIMESTAMP
                 ? log_offset_of_max_timestamp(p->log, &found)
                 : log_offset_for_timestamp(p->log, timestamp, &found);
    if (rv == RC_OK && found.offset < fetchable) {
        out->Offset = found.offset;     /* the record's own offset */
        out->Timestamp = found.timestamp; /* and its own timestamp */
        out->LeaderEpoch = found.leader_epoch;
    } else if (rv == RC_OK || rv == RC_NOT_FOUND) {
        out->ErrorCode = lag_error; /* none found: -1, -1 */
    } else {
        out->ErrorCode = kafka_error_from_rc(rv);
    }
}

static void list_one(struct broker *b, struct slice topic, int32_t replica_id,
                     int16_t version,
                     const struct kafka_ListOffsetsPartition *in,
                     struct kafka_ListOffsetsPartitionResponse *out)
{
    *out = (struct kafka_ListOffsetsPartitionResponse){
        .PartitionIndex = in->PartitionIndex, .Timestamp = -1, .Offset = -1,
        .LeaderEpoch = -1};
    if (!list_offsets_timestamp_ok(in->Timestamp, version)) {
        out->ErrorCode = KAFKA_ERROR_UNSUPPORTED_VERSION;
        return;
    }
    struct partition *p = broker_partition(b, topic, in->PartitionIndex);
    bool debug = replica_id == LIST_OFFSETS__DEBUG_REPLICA;
    if (p == NULL || (!partition_is_leader(p) && !debug)) {
        out->ErrorCode = broker_not_leader_error(b, topic, in->PartitionIndex);
        return;
    }
    if (in->CurrentLeaderEpoch >= 0 &&
        in->CurrentLeaderEpoch != p->leader_epoch) {
        out->ErrorCode = in->CurrentLeaderEpoch < p->leader_epoch
                             ? KAFKA_ERROR_FENCED_LEADER_EPOCH
                             : KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
        return;
    }
    /* No transactions: the last stable offset is the high watermark. */
    bool consumer = replica_id == LIST_OFFSETS__CONSUMER_REPLICA;
    int64_t fetchable = consumer ? p->hw : log_end_offset(p->log);
    /* KIP-207: a new leader's HW may still be below where its epoch began
     * (below what the old leader had exposed); offsets answered now could
     * go backwards, so a consumer retries. Before v5 Kafka says
     * LEADER_NOT_AVAILABLE. */
    int16_t lag_error = 0;
    if (consumer && p->repl.epoch_start_offset > p->hw) {
        lag_error = version >= 5 ? KAFKA_ERROR_OFFSET_NOT_AVAILABLE
                                 : KAFKA_ERROR_LEADER_NOT_AVAILABLE;
    }
    switch (in->Timestamp) {
    case KAFKA_LIST_OFFSETS_LATEST:
        out->ErrorCode = lag_error;
        if (lag_error == 0) {
            out->Offset = fetchable;
            out->LeaderEpoch = p->leader_epoch;
        }
        break;
    case KAFKA_LIST_OFFSETS_EARLIEST:
    case KAFKA_LIST_OFFSETS_EARLIEST_LOCAL: /* no tiered storage: the same */
        out->Offset = log_start_offset(p->log);
        out->LeaderEpoch = earliest_epoch(p->log);
        break;
    default:
        list_by_time(p, in->Timestamp, fetchable, lag_error, out);
        break;
    }
    if (in->MaxNumOffsets < 1) {
        out->Offset = -1; /* v0 asked for no offset: an empty list */
    }
}

void kafka_handle_list_offsets(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_ListOffsetsRequest rq;
    int rv = kafka_list_offsets_request_decode(&r, req->api_version, &a, &rq);
    struct kafka_ListOffsetsTopicResponse *ts = NULL;
    if (rv == RC_OK) {
        rv = arena_alloc(&a, (size_t)rq.TopicsCnt, sizeof *ts, (void **)&ts);
    }
    for (int32_t i = 0; rv == RC_OK && i < rq.TopicsCnt; i++) {
        const struct kafka_ListOffsetsTopic *t = &rq.Topics[i];
        struct kafka_ListOffsetsPartitionResponse *ps = NULL;
        rv = arena_alloc(&a, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionsCnt; k++) {
            list_one(b, t->Name, rq.ReplicaId, req->api_version,
                     &t->Partitions[k], &ps[k]);
        }
        ts[i] = (struct kafka_ListOffsetsTopicResponse){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed ListOffsets request");
    } else {
        struct kafka_ListOffsetsResponse resp = {.Topics = ts,
                                                 .TopicsCnt = rq.TopicsCnt};
        kafka_send(req, enc_list_offsets, &resp);
    }
    arena_free(&a);
}
