/* CreatePartitions (broker/broker.h): checked for what the broker can
 * answer alone (names given twice, names no topic can have), then
 * forwarded to the active controller, which plans the new partitions
 * (controller/plan_create_partitions.h). The broker picks them up from
 * the metadata like any partition. */
#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"


/* A request waiting for the controller; everything lives in arena. */
struct partitions_ctx {
    struct kafka_forward fw;
    struct kafka_CreatePartitionsRequest rq;
    /* Per request topic: the index of its entry in the controller's
     * request, -1 when answered here, -2 when a later copy of a name
     * already answered (Kafka gives a duplicated name one result). */
    int32_t *slot;
    struct kafka_CreatePartitionsTopicResult *out;
};

static int enc_partitions(struct writer *w, int16_t v, const void *r)
{
    return kafka_create_partitions_response_encode(w, v, r);
}

/* Sends the answer: one result per distinct name, in request order. */
static void answer(struct partitions_ctx *ctx)
{
    int32_t n = 0;
    for (int32_t i = 0; i < ctx->rq.TopicsCnt; i++) {
        if (ctx->slot[i] != -2) {
            ctx->out[n++] = ctx->out[i];
        }
    }
    struct kafka_CreatePartitionsResponse r = {.Results = ctx->out,
                                               .ResultsCnt = n};
    kafka_send(ctx->fw.req, enc_partitions, &r);
}

static void controller_answer(struct kafka_forward *fw,
                              const Cairn__Response *resp, int16_t error)
{
    struct partitions_ctx *ctx = (struct partitions_ctx *)fw;
    const Cairn__CreatePartitionsResponse *cp =
        resp != NULL ? resp->create_partitions : NULL;
    error = kafka_forward_missing(error);
    for (int32_t i = 0; i < ctx->rq.TopicsCnt; i++) {
        int32_t k = ctx->slot[i];
        if (k < 0) {
            continue;
        }
        struct kafka_CreatePartitionsTopicResult *o = &ctx->out[i];
        if (cp != NULL && (size_t)k < cp->n_results) {
            const Cairn__CreatePartitionsResult *cr = cp->results[k];
            o->ErrorCode = (int16_t)cr->error_code;
            char *copy = o->ErrorCode == KAFKA_ERROR_NONE
                             ? NULL
                             : kafka_forward_str(
                                   &ctx->fw.arena,
                                   slice_from_str(cr->error_message != NULL
                                                      ? cr->error_message
                                                      : ""),
                                   false);
            if (copy != NULL) {
                o->ErrorMessage = slice_from_str(copy);
            }
        } else {
            o->ErrorCode = error;
            o->ErrorMessage = slice_from_str(kafka_error_name(error));
        }
    }
    answer(ctx);
}

struct name_ref {
    struct slice name;
    int32_t index;
};

static int name_ref_cmp(const void *a, const void *b)
{
    const struct name_ref *x = a;
    const struct name_ref *y = b;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n == 0 ? 0 : memcmp(x->name.ptr, y->name.ptr, n);
    if (c == 0 && x->name.len != y->name.len) {
        c = x->name.len < y->name.len ? -1 : 1;
    }
    if (c == 0) {
        c = x->index < y->index ? -1 : x->index > y->index;
    }
    return c;
}

/* Answers here every name given more than once (INVALID_REQUEST, one
 * result per name, at its first place, as Kafka's ControllerApis) and
 * every name no topic can have (UNKNOWN_TOPIC_OR_PARTITION); the rest
 * keep slot 0 for the controller. */
static int answer_locally(struct partitions_ctx *ctx)
{
    int32_t n = ctx->rq.TopicsCnt;
    struct name_ref *refs = NULL;
    int rv = arena_alloc(&ctx->fw.arena, (size_t)n, sizeof *refs,
                         (void **)&refs);
    if (rv != RC_OK) {
        return rv;
    }
    for (int32_t i = 0; i < n; i++) {
        refs[i] = (struct name_ref){ctx->rq.Topics[i].Name, i};
        ctx->slot[i] = 0;
        ctx->out[i] = (struct kafka_CreatePartitionsTopicResult){
            .Name = ctx->rq.Topics[i].Name, .ErrorMessage = slice_null()};
    }
    if (n > 1) {
        qsort(refs, (size_t)n, sizeof *refs, name_ref_cmp);
    }
    int32_t head = 0; /* the run of equal names starts at refs[head] */
    for (int32_t i = 1; i < n; i++) {
        if (!slice_eq(refs[head].name, refs[i].name)) {
            head = i;
            continue;
        }
        int32_t first = refs[head].index; /* the lowest index of the run */
        ctx->slot[first] = -1;
        ctx->out[first].ErrorCode = KAFKA_ERROR_INVALID_REQUEST;
        ctx->out[first].ErrorMessage =
            slice_from_str("Duplicate topic name.");
        ctx->slot[refs[i].index] = -2;
    }
    for (int32_t i = 0; i < n; i++) {
        struct slice name = ctx->rq.Topics[i].Name;
        if (ctx->slot[i] == 0 &&
            !meta_topic_name_bytes_valid((const char *)name.ptr, name.len)) {
            ctx->slot[i] = -1;
            ctx->out[i].ErrorCode = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
            ctx->out[i].ErrorMessage = slice_from_str(
                "This server does not host this topic-partition.");
        }
    }
    return RC_OK;
}

/* The controller's request: every topic still at slot 0, numbered. */
static int build_request(struct partitions_ctx *ctx,
                         Cairn__CreatePartitionsRequest *cp)
{
    struct arena *a = &ctx->fw.arena;
    size_t n = (size_t)ctx->rq.TopicsCnt;
    Cairn__CreatePartitionsTopic *ts = NULL;
    Cairn__CreatePartitionsTopic **ptrs = NULL;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ptrs, (void **)&ptrs);
    }
    size_t k = 0;
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        const struct kafka_CreatePartitionsTopic *kt = &ctx->rq.Topics[i];
        if (ctx->slot[i] != 0) {
            continue;
        }
        Cairn__CreatePartitionsTopic *t = &ts[k];
        cairn__create_partitions_topic__init(t);
        t->name = kafka_forward_str(a, kt->Name, false);
        if (t->name == NULL) {
            rv = RC_TOO_LARGE;
            break;
        }
        t->has_count = true;
        t->count = kt->Count;
        t->has_has_assignments = true;
        t->has_assignments = kt->AssignmentsCnt >= 0;
        size_t na = kt->AssignmentsCnt > 0 ? (size_t)kt->AssignmentsCnt : 0;
        Cairn__PartitionAssignment *as = NULL;
        rv = arena_alloc(a, na, sizeof *as, (void **)&as);
        if (rv == RC_OK) {
            rv = arena_alloc(a, na, sizeof *t->assignments,
                             (void **)&t->assignments);
        }
        for (size_t j = 0; rv == RC_OK && j < na; j++) {
            cairn__partition_assignment__init(&as[j]);
            as[j].n_broker_ids = (size_t)kt->Assignments[j].BrokerIdsCnt;
            as[j].broker_ids = (int32_t *)(uintptr_t)
                                   kt->Assignments[j].BrokerIds;
            t->assignments[j] = &as[j];
        }
        t->n_assignments = na;
        ptrs[k] = t;
        ctx->slot[i] = (int32_t)k++;
    }
    cp->n_topics = k;
    cp->topics = ptrs;
    cp->has_validate_only = true;
    cp->validate_only = ctx->rq.ValidateOnly;
    return rv;
}

/* Packs req and sends it to the active controller, bounded by the
 * request's TimeoutMs when that is shorter: past it, REQUEST_TIMED_OUT. */
static void call_controller(struct partitions_ctx *ctx,
                            const Cairn__Request *req)
{
    uint64_t timeout_ms = KAFKA_FORWARD_TIMEOUT_MS;
    if (ctx->rq.TimeoutMs > 0 && ctx->rq.TimeoutMs < (int32_t)timeout_ms) {
        timeout_ms = (uint64_t)ctx->rq.TimeoutMs;
    }
    kafka_forward_call(&ctx->fw, req, timeout_ms, controller_answer);
}

void kafka_handle_create_partitions(struct broker *b,
                                    struct kafka_request *req)
{
    struct partitions_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    if (ctx == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    int rv = kafka_create_partitions_request_decode(&r, req->api_version,
                                                    &ctx->fw.arena, &ctx->rq);
    size_t n = rv == RC_OK ? (size_t)ctx->rq.TopicsCnt : 0;
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->fw.arena, n, sizeof *ctx->slot,
                         (void **)&ctx->slot);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->fw.arena, n, sizeof *ctx->out,
                         (void **)&ctx->out);
    }
    if (rv == RC_OK) {
        rv = answer_locally(ctx);
    }
    Cairn__CreatePartitionsRequest cp =
        CAIRN__CREATE_PARTITIONS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build_request(ctx, &cp);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req, "malformed CreatePartitions request");
        return;
    }
    if (cp.n_topics == 0) {
        answer(ctx);
        kafka_forward_free(&ctx->fw);
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_CREATE_PARTITIONS;
    cr.create_partitions = &cp;
    if (!ctx->rq.ValidateOnly) {
        kafka_forward_visible(&ctx->fw, ctx->rq.TimeoutMs);
    }
    call_controller(ctx, &cr);
}
