/* Admin requests (broker/broker.h): CreateTopics and DeleteTopics are
 * forwarded to the active controller (DeleteTopics by name, a topic id
 * resolved here), InitProducerId hands out ids from
 * controller-allocated blocks, DescribeConfigs answers from the metadata
 * image with Kafka's topic-level names and defaults, DeleteRecords moves
 * the log start offset of partitions led here. */
#include "broker/broker.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

#define ADMIN__CONTROLLER_TIMEOUT_MS 30000

/* A request waiting for the controller: its decoded form stays in arena. */
struct admin_ctx;
typedef void (*admin_answer_fn)(struct admin_ctx *ctx,
                                const Cairn__Response *resp, int16_t error);

struct admin_ctx {
    struct broker *b;
    struct kafka_request *req;
    struct arena arena;
    void *rq;
    admin_answer_fn answer; /* builds the Kafka answer from the controller's */
};

static struct admin_ctx *ctx_new(struct broker *b, struct kafka_request *req)
{
    struct admin_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx != NULL) {
        ctx->b = b;
        ctx->req = req;
        arena_init(&ctx->arena, ARENA_BYTES_MAX);
    }
    return ctx;
}

static void ctx_free(struct admin_ctx *ctx)
{
    arena_free(&ctx->arena);
    free(ctx);
}

/* NUL-terminated copy of a wire string in the arena ("" when null). */
static char *arena_str(struct arena *a, struct slice s)
{
    char *out = NULL;
    if (arena_alloc(a, s.len + 1, 1, (void **)&out) != RC_OK) {
        return NULL;
    }
    if (s.len > 0) {
        memcpy(out, s.ptr, s.len);
    }
    out[s.len] = '\0';
    return out;
}

/* The controller answered (or the call failed): answer the client with
 * the controller's results, or REQUEST_TIMED_OUT for every topic. The
 * broker then fetches the metadata change at once. */
static void controller_cb(void *arg, int rc, const uint8_t *payload,
                          size_t len)
{
    struct admin_ctx *ctx = arg;
    Cairn__Response *resp = rc == RC_OK
                                ? cairn__response__unpack(NULL, len, payload)
                                : NULL;
    int16_t error = KAFKA_ERROR_REQUEST_TIMED_OUT;
    if (resp != NULL && resp->error_code != 0) {
        error = (int16_t)resp->error_code;
    }
    ctx->answer(ctx, resp, error);
    membership_refresh(ctx->b->membership);
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    ctx_free(ctx);
}

/* Packs req and sends it to the active controller; if that cannot even
 * start, answers with REQUEST_TIMED_OUT now. Either way ctx is consumed. */
static void call_controller(struct admin_ctx *ctx, const Cairn__Request *req,
                            admin_answer_fn answer)
{
    ctx->answer = answer;
    size_t len = cairn__request__get_packed_size(req);
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    int rv = RC_NOMEM;
    if (buf != NULL) {
        cairn__request__pack(req, buf);
        rv = membership_call_active(ctx->b->membership, buf, len,
                                    ADMIN__CONTROLLER_TIMEOUT_MS,
                                    controller_cb, ctx);
        free(buf);
    }
    if (rv != RC_OK) {
        answer(ctx, NULL, KAFKA_ERROR_REQUEST_TIMED_OUT);
        ctx_free(ctx);
    }
}

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
    if (ctx->req->api_version < 5) {
        return RC_OK;
    }
    return kafka_configs_of_new_topic(ctx->b, &rq->Topics[i], &ctx->arena,
                                      &out->Configs, &out->ConfigsCnt);
}

static void create_answer(struct admin_ctx *ctx, const Cairn__Response *resp,
                          int16_t error)
{
    const struct kafka_CreateTopicsRequest *rq = ctx->rq;
    struct kafka_CreatableTopicResult *out = NULL;
    int rv = arena_alloc(&ctx->arena, (size_t)rq->TopicsCnt, sizeof *out,
                         (void **)&out);
    for (int32_t i = 0; rv == RC_OK && i < rq->TopicsCnt; i++) {
        const Cairn__CreateTopicResult *cr = NULL;
        if (resp != NULL && resp->create_topics != NULL &&
            (size_t)i < resp->create_topics->n_results) {
            cr = resp->create_topics->results[i];
        }
        rv = create_result(ctx, i, cr, error, &out[i]);
    }
    if (rv != RC_OK) {
        kafka_close_conn(ctx->req, "out of memory");
        return;
    }
    struct kafka_CreateTopicsResponse r = {.Topics = out,
                                           .TopicsCnt = rq->TopicsCnt};
    kafka_send(ctx->req, enc_create, &r);
}

static int build_create(struct admin_ctx *ctx, Cairn__CreateTopicsRequest *ct)
{
    const struct kafka_CreateTopicsRequest *rq = ctx->rq;
    struct arena *a = &ctx->arena;
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
        ts[i].name = meta_topic_name_bytes_valid((const char *)kt->Name.ptr,
                                                 kt->Name.len)
                         ? arena_str(a, kt->Name)
                         : arena_str(a, slice_from_str(""));
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
            cs[k].name = arena_str(a, kt->Configs[k].Name);
            cs[k].value = slice_is_null(kt->Configs[k].Value)
                              ? NULL
                              : arena_str(a, kt->Configs[k].Value);
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
    struct admin_ctx *ctx = ctx_new(b, req);
    struct kafka_CreateTopicsRequest *rq = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->arena, 1, sizeof *rq,
                                       (void **)&rq);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_create_topics_request_decode(&r, req->api_version,
                                                &ctx->arena, rq);
        ctx->rq = rq;
    }
    Cairn__CreateTopicsRequest ct = CAIRN__CREATE_TOPICS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build_create(ctx, &ct);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed CreateTopics request");
        if (ctx != NULL) {
            ctx_free(ctx);
        }
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_CREATE_TOPICS;
    cr.create_topics = &ct;
    call_controller(ctx, &cr, create_answer);
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

static void delete_answer(struct admin_ctx *ctx, const Cairn__Response *resp,
                          int16_t error)
{
    struct delete_plan *pl = ctx->rq;
    for (int32_t i = 0; i < pl->n; i++) {
        int32_t k = pl->slot[i];
        if (k < 0) {
            continue;
        }
        int16_t e = error;
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
    kafka_send(ctx->req, enc_delete, &r);
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
    const struct meta_image *img = membership_image(ctx->b->membership);
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
    char *s = arena_str(&ctx->arena,
                        meta_topic_name_bytes_valid((const char *)name.ptr,
                                                    name.len)
                            ? name
                            : slice_from_str(""));
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
    bool by_state = ctx->req->api_version >= 6;
    pl->n = by_state ? rq->TopicsCnt : rq->TopicNamesCnt;
    pl->n_names = 0;
    size_t n = (size_t)pl->n;
    int rv = arena_alloc(&ctx->arena, n, sizeof *pl->out, (void **)&pl->out);
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->arena, n, sizeof *pl->slot,
                         (void **)&pl->slot);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->arena, n, sizeof *pl->names,
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
    struct admin_ctx *ctx = ctx_new(b, req);
    struct kafka_DeleteTopicsRequest rq;
    struct delete_plan *pl = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->arena, 1, sizeof *pl,
                                       (void **)&pl);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_delete_topics_request_decode(&r, req->api_version,
                                                &ctx->arena, &rq);
    }
    if (rv == RC_OK) {
        ctx->rq = pl;
        rv = delete_plan_build(ctx, &rq, pl);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed DeleteTopics request");
        if (ctx != NULL) {
            ctx_free(ctx);
        }
        return;
    }
    if (pl->n_names == 0) {
        delete_answer(ctx, NULL, KAFKA_ERROR_NONE); /* all answered here */
        ctx_free(ctx);
        return;
    }
    Cairn__DeleteTopicsRequest dt = CAIRN__DELETE_TOPICS_REQUEST__INIT;
    dt.n_names = (size_t)pl->n_names;
    dt.names = pl->names;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_DELETE_TOPICS;
    cr.delete_topics = &dt;
    call_controller(ctx, &cr, delete_answer);
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
