/* Admin requests (broker/broker.h): CreateTopics and DeleteTopics are
 * forwarded to the active controller (DeleteTopics by name, a topic id
 * resolved here), InitProducerId hands out ids from
 * controller-allocated blocks, DescribeConfigs answers from the metadata
 * image with Kafka's topic-level names and defaults, DeleteRecords moves
 * the log start offset of partitions led here. The topics the broker
 * creates by itself (auto-created for Metadata, the offsets topic) are
 * asked of the active controller here too. */
#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

/* A CreateTopics or DeleteTopics request waiting for the controller. */
struct admin_ctx {
    struct kafka_forward fw;
    void *rq;
};

/* --- CreateTopics -------------------------------------------------------- */

static int enc_create(struct writer *w, int16_t v, const void *r)
{
    return kafka_create_topics_response_encode(w, v, r);
}

/* The controller's bytes as a topic id (zero unless 16 bytes). */
static struct kafka_uuid uuid_from_bytes(ProtobufCBinaryData d)
{
    struct kafka_uuid u = {{0}};
    if (d.len == sizeof u.bytes) {
        memcpy(u.bytes, d.data, sizeof u.bytes);
    }
    return u;
}

/* One topic's answer: the controller's result (NULL: error for all), and
 * from v5 the new topic's settings as Kafka's controller lists them. */
static int create_result(struct admin_ctx *ctx, int32_t i,
                         const Cairn__CreateTopicResult *cr, int16_t error,
                         struct kafka_CreatableTopicResult *out)
{
    const struct kafka_CreateTopicsRequest *rq = ctx->rq;
    int16_t e = cr != NULL ? (int16_t)cr->error_code : error;
    const char *msg = cr != NULL ? cr->error_message : NULL;
    *out = (struct kafka_CreatableTopicResult){
        .Name = rq->Topics[i].Name, .ErrorCode = e,
        .ErrorMessage = e == KAFKA_ERROR_NONE ? slice_null()
                                              : slice_from_str(msg),
        .NumPartitions = -1, .ReplicationFactor = -1};
    if (e != KAFKA_ERROR_NONE || cr == NULL) {
        return RC_OK;
    }
    out->TopicId = uuid_from_bytes(cr->topic_id);
    out->NumPartitions = cr->has_num_partitions ? cr->num_partitions : -1;
    out->ReplicationFactor =
        cr->has_replication_factor ? (int16_t)cr->replication_factor : -1;
    if (ctx->fw.req->api_version < 5) {
        return RC_OK;
    }
    return kafka_configs_of_new_topic(ctx->fw.b, &rq->Topics[i],
                                      &ctx->fw.arena, &out->Configs,
                                      &out->ConfigsCnt);
}

static void create_answer(struct kafka_forward *fw,
                          const Cairn__Response *resp, int16_t error)
{
    struct admin_ctx *ctx = (struct admin_ctx *)fw;
    const struct kafka_CreateTopicsRequest *rq = ctx->rq;
    struct kafka_CreatableTopicResult *out = NULL;
    int rv = arena_alloc(&ctx->fw.arena, (size_t)rq->TopicsCnt, sizeof *out,
                         (void **)&out);
    for (int32_t i = 0; rv == RC_OK && i < rq->TopicsCnt; i++) {
        const Cairn__CreateTopicResult *cr = NULL;
        if (resp != NULL && resp->create_topics != NULL &&
            (size_t)i < resp->create_topics->n_results) {
            cr = resp->create_topics->results[i];
        }
        rv = create_result(ctx, i, cr, kafka_forward_missing(error), &out[i]);
    }
    if (rv != RC_OK) {
        kafka_close_conn(ctx->fw.req, "out of memory");
        return;
    }
    struct kafka_CreateTopicsResponse r = {.Topics = out,
                                           .TopicsCnt = rq->TopicsCnt};
    kafka_send(ctx->fw.req, enc_create, &r);
}

static int build_create(struct admin_ctx *ctx, Cairn__CreateTopicsRequest *ct)
{
    const struct kafka_CreateTopicsRequest *rq = ctx->rq;
    struct arena *a = &ctx->fw.arena;
    Cairn__CreatableTopic *ts = NULL;
    Cairn__CreatableTopic **ptrs = NULL;
    size_t n = (size_t)rq->TopicsCnt;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ptrs, (void **)&ptrs);
    }
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        const struct kafka_CreatableTopic *kt = &rq->Topics[i];
        cairn__creatable_topic__init(&ts[i]);
        /* A name whose bytes break the rule goes to the controller as ""
         * (INVALID_TOPIC_EXCEPTION), never cut at a NUL into another. */
        ts[i].name = kafka_forward_str(a, kt->Name, true);
        ts[i].has_num_partitions = ts[i].has_replication_factor = true;
        ts[i].num_partitions = kt->NumPartitions;
        ts[i].replication_factor = kt->ReplicationFactor;
        Cairn__ConfigRecord *cs = NULL;
        Cairn__ConfigRecord **cp = NULL;
        size_t nc = (size_t)kt->ConfigsCnt;
        rv = arena_alloc(a, nc, sizeof *cs, (void **)&cs);
        if (rv == RC_OK) {
            rv = arena_alloc(a, nc, sizeof *cp, (void **)&cp);
        }
        for (size_t k = 0; rv == RC_OK && k < nc; k++) {
            cairn__config_record__init(&cs[k]);
            cs[k].name = kafka_forward_str(a, kt->Configs[k].Name, false);
            struct slice v = kt->Configs[k].Value;
            cs[k].value =
                slice_is_null(v) ? NULL : kafka_forward_str(a, v, false);
            cp[k] = &cs[k];
        }
        ts[i].n_configs = nc;
        ts[i].configs = cp;
        ptrs[i] = &ts[i];
        if (ts[i].name == NULL) {
            rv = RC_TOO_LARGE;
        }
    }
    ct->n_topics = n;
    ct->topics = ptrs;
    ct->has_validate_only = true;
    ct->validate_only = rq->ValidateOnly;
    return rv;
}

void kafka_handle_create_topics(struct broker *b, struct kafka_request *req)
{
    struct admin_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    struct kafka_CreateTopicsRequest *rq = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->fw.arena, 1, sizeof *rq,
                                       (void **)&rq);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_create_topics_request_decode(&r, req->api_version,
                                                &ctx->fw.arena, rq);
        ctx->rq = rq;
    }
    Cairn__CreateTopicsRequest ct = CAIRN__CREATE_TOPICS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build_create(ctx, &ct);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req, "malformed CreateTopics request");
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_CREATE_TOPICS;
    cr.create_topics = &ct;
    if (!rq->ValidateOnly) {
        kafka_forward_visible(&ctx->fw, rq->TimeoutMs);
    }
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS, create_answer);
}

/* Asks the controller to create a topic a client named (fire and forget:
 * the client retries Metadata until it has a leader). */
static void auto_create_cb(void *arg, int rc, const uint8_t *resp, size_t len)
{
    (void)arg;
    (void)rc;
    (void)resp;
    (void)len;
}

/* One CreateTopics call to the active controller for ts[0..n). */
static int call_create_topics(struct broker *b, Cairn__CreatableTopic **ts,
                              size_t n)
{
    Cairn__CreateTopicsRequest ct = CAIRN__CREATE_TOPICS_REQUEST__INIT;
    ct.n_topics = n;
    ct.topics = ts;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_CREATE_TOPICS;
    req.create_topics = &ct;
    size_t len = cairn__request__get_packed_size(&req);
    uint8_t *buf = malloc(len);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    cairn__request__pack(&req, buf);
    int rv = membership_call_active(b->membership, buf, len, 10000,
                                    auto_create_cb, NULL);
    free(buf); /* the call keeps its own copy */
    return rv;
}

void broker_create_topic(struct broker *b, const char *name,
                         int32_t partitions, int32_t rf,
                         const char *const *configs, size_t n_configs)
{
    Cairn__CreatableTopic t = CAIRN__CREATABLE_TOPIC__INIT;
    t.name = (char *)(uintptr_t)name;
    t.has_num_partitions = t.has_replication_factor = true;
    t.num_partitions = partitions;
    t.replication_factor = rf;
    Cairn__ConfigRecord cr[BROKER_CREATE_CONFIGS_MAX];
    Cairn__ConfigRecord *crs[BROKER_CREATE_CONFIGS_MAX];
    ASSERT(n_configs <= BROKER_CREATE_CONFIGS_MAX);
    for (size_t i = 0; i < n_configs; i++) {
        cairn__config_record__init(&cr[i]);
        cr[i].name = (char *)(uintptr_t)configs[2 * i];
        cr[i].value = (char *)(uintptr_t)configs[2 * i + 1];
        crs[i] = &cr[i];
    }
    t.n_configs = n_configs;
    t.configs = n_configs > 0 ? crs : NULL;
    Cairn__CreatableTopic *ts[] = {&t};
    if (call_create_topics(b, ts, 1) == RC_OK) {
        TRACE_INFO(&b->tracer, "topic=%s auto-created on first use", name);
    }
}

void broker_auto_create_topics(struct broker *b, const char *const *names,
                               size_t n)
{
    Cairn__CreatableTopic *ts = calloc(n, sizeof *ts);
    Cairn__CreatableTopic **ptrs = calloc(n, sizeof *ptrs);
    if (ts != NULL && ptrs != NULL) {
        for (size_t i = 0; i < n; i++) {
            cairn__creatable_topic__init(&ts[i]);
            ts[i].name = (char *)(uintptr_t)names[i];
            ts[i].has_num_partitions = ts[i].has_replication_factor = true;
            ts[i].num_partitions = -1;
            ts[i].replication_factor = -1;
            ptrs[i] = &ts[i];
        }
        if (call_create_topics(b, ptrs, n) == RC_OK) {
            TRACE_INFO(&b->tracer, "topic=%s auto-created on first use%s",
                       names[0], n > 1 ? " (with others)" : "");
        }
    }
    free(ptrs);
    free(ts);
}

/* --- DeleteTopics -------------------------------------------------------- */

/* A DeleteTopics request as the controller gets it: each entry answered
 * here already (an unknown id, a bad entry) or sent by name; Kafka's
 * controller resolves ids itself, here the broker's image does (a topic
 * created a moment ago may be unknown to it: UNKNOWN_TOPIC_ID, and the
 * client retries). */
struct delete_plan {
    int32_t n;
    struct kafka_DeletableTopicResult *out;
    int32_t *slot;    /* index in the controller's names, or -1 */
    char **names;     /* for the controller */
    int32_t n_names;
};

static int enc_delete(struct writer *w, int16_t v, const void *r)
{
    return kafka_delete_topics_response_encode(w, v, r);
}

static void delete_answer(struct kafka_forward *fw,
                          const Cairn__Response *resp, int16_t error)
{
    struct admin_ctx *ctx = (struct admin_ctx *)fw;
    struct delete_plan *pl = ctx->rq;
    for (int32_t i = 0; i < pl->n; i++) {
        int32_t k = pl->slot[i];
        if (k < 0) {
            continue;
        }
        int16_t e = kafka_forward_missing(error);
        if (resp != NULL && resp->delete_topics != NULL &&
            (size_t)k < resp->delete_topics->n_results) {
            e = (int16_t)resp->delete_topics->results[k]->error_code;
        }
        pl->out[i].ErrorCode = e;
        pl->out[i].ErrorMessage = e == KAFKA_ERROR_NONE
                                      ? slice_null()
                                      : slice_from_str(kafka_error_name(e));
    }
    struct kafka_DeleteTopicsResponse r = {.Responses = pl->out,
                                           .ResponsesCnt = pl->n};
    kafka_send(ctx->fw.req, enc_delete, &r);
}

/* Answers entry i now with error (Kafka's message for it). */
static void delete_refuse(struct delete_plan *pl, int32_t i, int16_t error,
                          const char *msg)
{
    pl->out[i].ErrorCode = error;
    pl->out[i].ErrorMessage = slice_from_str(msg);
    pl->slot[i] = -1;
}

/* Plans entry i, named by name (null: by id) and id: Kafka's checks in
 * ControllerApis.deleteTopics, then the name for the controller. */
static int delete_plan_one(struct admin_ctx *ctx, struct delete_plan *pl,
                           int32_t i, struct slice name, struct kafka_uuid id)
{
    const struct meta_image *img = membership_image(ctx->fw.b->membership);
    struct meta_uuid mid;
    memcpy(mid.b, id.bytes, sizeof mid.b);
    pl->out[i] = (struct kafka_DeletableTopicResult){.Name = name,
                                                     .TopicId = id};
    const struct meta_topic *t = NULL;
    if (slice_is_null(name) && meta_uuid_is_zero(&mid)) {
        delete_refuse(pl, i, KAFKA_ERROR_INVALID_REQUEST,
                      "Neither topic name nor id were specified.");
        return RC_OK;
    }
    if (!slice_is_null(name) && !meta_uuid_is_zero(&mid)) {
        delete_refuse(pl, i, KAFKA_ERROR_INVALID_REQUEST,
                      "You may not specify both topic name and topic id.");
        return RC_OK;
    }
    if (slice_is_null(name)) {
        t = meta_image_topic_by_id(img, &mid);
        if (t == NULL) {
            delete_refuse(pl, i, KAFKA_ERROR_UNKNOWN_TOPIC_ID,
                          "This server does not host this topic ID.");
            return RC_OK;
        }
        name = slice_from_str(t->name);
        pl->out[i].Name = name;
    } else {
        char buf[META_TOPIC_NAME_BYTES_MAX + 1];
        const char *c = broker_topic_name(name, buf);
        t = c != NULL ? meta_image_topic(img, c) : NULL;
        if (t != NULL) {
            memcpy(pl->out[i].TopicId.bytes, t->id.b, sizeof t->id.b);
        }
    }
    /* A name whose bytes break the rule goes as "" (unknown there). */
    char *s = kafka_forward_str(&ctx->fw.arena, name, true);
    if (s == NULL) {
        return RC_TOO_LARGE;
    }
    pl->slot[i] = pl->n_names;
    pl->names[pl->n_names++] = s;
    return RC_OK;
}

static int delete_plan_build(struct admin_ctx *ctx,
                             const struct kafka_DeleteTopicsRequest *rq,
                             struct delete_plan *pl)
{
    bool by_state = ctx->fw.req->api_version >= 6;
    pl->n = by_state ? rq->TopicsCnt : rq->TopicNamesCnt;
    pl->n_names = 0;
    size_t n = (size_t)pl->n;
    int rv = arena_alloc(&ctx->fw.arena, n, sizeof *pl->out,
                         (void **)&pl->out);
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->fw.arena, n, sizeof *pl->slot,
                         (void **)&pl->slot);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->fw.arena, n, sizeof *pl->names,
                         (void **)&pl->names);
    }
    for (int32_t i = 0; rv == RC_OK && i < pl->n; i++) {
        struct kafka_uuid zero = {{0}};
        rv = by_state ? delete_plan_one(ctx, pl, i, rq->Topics[i].Name,
                                        rq->Topics[i].TopicId)
                      : delete_plan_one(ctx, pl, i, rq->TopicNames[i], zero);
    }
    return rv;
}

void kafka_handle_delete_topics(struct broker *b, struct kafka_request *req)
{
    struct admin_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    struct kafka_DeleteTopicsRequest rq;
    struct delete_plan *pl = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->fw.arena, 1, sizeof *pl,
                                       (void **)&pl);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_delete_topics_request_decode(&r, req->api_version,
                                                &ctx->fw.arena, &rq);
    }
    if (rv == RC_OK) {
        ctx->rq = pl;
        rv = delete_plan_build(ctx, &rq, pl);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req, "malformed DeleteTopics request");
        return;
    }
    if (pl->n_names == 0) {
        /* All answered here. */
        delete_answer(&ctx->fw, NULL, KAFKA_ERROR_NONE);
        kafka_forward_free(&ctx->fw);
        return;
    }
    Cairn__DeleteTopicsRequest dt = CAIRN__DELETE_TOPICS_REQUEST__INIT;
    dt.n_names = (size_t)pl->n_names;
    dt.names = pl->names;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_DELETE_TOPICS;
    cr.delete_topics = &dt;
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS, delete_answer);
}

/* --- DeleteRecords ------------------------------------------------------- */

static int enc_delete_records(struct writer *w, int16_t v, const void *r)
{
    return kafka_delete_records_response_encode(w, v, r);
}

static void delete_records_one(struct broker *b, struct slice topic,
                               const struct kafka_DeleteRecordsPartition *in,
                               struct kafka_DeleteRecordsPartitionResult *out)
{
    *out = (struct kafka_DeleteRecordsPartitionResult){
        .PartitionIndex = in->PartitionIndex, .LowWatermark = -1};
    struct partition *p = broker_partition(b, topic, in->PartitionIndex);
    if (p == NULL || !partition_is_leader(p)) {
        out->ErrorCode = broker_not_leader_error(b, topic,
                                                 in->PartitionIndex);
        return;
    }
    if (in->Offset < -1) {
        out->ErrorCode = KAFKA_ERROR_OFFSET_OUT_OF_RANGE;
        return;
    }
    int64_t low = -1;
    int rv = partition_delete_records(p, in->Offset, &low);
    out->ErrorCode = rv == RC_IO ? KAFKA_ERROR_KAFKA_STORAGE_ERROR
                                 : kafka_error_from_rc(rv);
    out->LowWatermark = rv == RC_OK ? low : -1;
}

/* Kafka answers once every replica's log start has followed; here the
 * answer comes once the leader's has moved (checkpointed), and the
 * followers follow with their next fetch. */
void kafka_handle_delete_records(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_DeleteRecordsRequest rq;
    int rv = kafka_delete_records_request_decode(&r, req->api_version, &a,
                                                 &rq);
    struct kafka_DeleteRecordsTopicResult *ts = NULL;
    if (rv == RC_OK) {
        rv = arena_alloc(&a, (size_t)rq.TopicsCnt, sizeof *ts, (void **)&ts);
    }
    for (int32_t i = 0; rv == RC_OK && i < rq.TopicsCnt; i++) {
        const struct kafka_DeleteRecordsTopic *t = &rq.Topics[i];
        struct kafka_DeleteRecordsPartitionResult *ps = NULL;
        rv = arena_alloc(&a, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionsCnt; k++) {
            delete_records_one(b, t->Name, &t->Partitions[k], &ps[k]);
        }
        ts[i] = (struct kafka_DeleteRecordsTopicResult){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed DeleteRecords request");
    } else {
        struct kafka_DeleteRecordsResponse resp = {.Topics = ts,
                                                   .TopicsCnt = rq.TopicsCnt};
        kafka_send(req, enc_delete_records, &resp);
    }
    arena_free(&a);
}
