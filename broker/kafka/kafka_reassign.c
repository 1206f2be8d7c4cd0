/* Partition reassignment requests (broker/broker.h):
 * AlterPartitionReassignments, ListPartitionReassignments and
 * UnregisterBroker are forwarded to the active controller
 * (controller/handlers_reassign.c), which plans and lists moves from the
 * committed metadata and retires brokers, and its answer is turned back
 * into Kafka's layout. */
#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

/* A request waiting for the controller. */
struct reassign_ctx {
    struct kafka_forward fw;
    void *rq; /* the decoded Kafka request, in the arena */
};

/* --- AlterPartitionReassignments ----------------------------------------- */

static int enc_alter(struct writer *w, int16_t v, const void *r)
{
    return kafka_alter_partition_reassignments_response_encode(w, v, r);
}

static void alter_answer(struct kafka_forward *fw, const Cairn__Response *resp,
                         int16_t error)
{
    struct reassign_ctx *ctx = (struct reassign_ctx *)fw;
    const struct kafka_AlterPartitionReassignmentsRequest *rq = ctx->rq;
    const Cairn__AlterReassignmentsResponse *ar =
        resp != NULL && error == KAFKA_ERROR_NONE ? resp->alter_reassignments
                                                  : NULL;
    if (ar == NULL && error == KAFKA_ERROR_NONE) {
        error = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    }
    struct kafka_ReassignableTopicResponse *topics = NULL;
    int rv = arena_alloc(&ctx->fw.arena, (size_t)rq->TopicsCnt, sizeof *topics,
                         (void **)&topics);
    size_t k = 0;
    for (int32_t i = 0; rv == RC_OK && i < rq->TopicsCnt; i++) {
        const struct kafka_ReassignableTopic *t = &rq->Topics[i];
        struct kafka_ReassignablePartitionResponse *ps = NULL;
        rv = arena_alloc(&ctx->fw.arena, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t j = 0; rv == RC_OK && j < t->PartitionsCnt; j++, k++) {
            int16_t e = error;
            const char *msg = NULL;
            if (ar != NULL && k < ar->n_results) {
                e = (int16_t)ar->results[k]->error_code;
                msg = ar->results[k]->error_message;
            }
            ps[j] = (struct kafka_ReassignablePartitionResponse){
                .PartitionIndex = t->Partitions[j].PartitionIndex,
                .ErrorCode = e,
                .ErrorMessage = e == KAFKA_ERROR_NONE
                                    ? slice_null()
                                    : slice_from_str(msg != NULL
                                                         ? msg
                                                         : kafka_error_name(
                                                               e))};
        }
        topics[i] = (struct kafka_ReassignableTopicResponse){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        kafka_close_conn(ctx->fw.req, "out of memory");
        return;
    }
    struct kafka_AlterPartitionReassignmentsResponse r = {
        .ErrorCode = ar == NULL ? error : KAFKA_ERROR_NONE,
        .ErrorMessage = ar == NULL ? slice_from_str(kafka_error_name(error))
                                   : slice_null(),
        .Responses = topics,
        .ResponsesCnt = rq->TopicsCnt};
    kafka_send(ctx->fw.req, enc_alter, &r);
}

/* The controller's request: one target per partition, in request order. */
static int build_alter(struct reassign_ctx *ctx,
                       Cairn__AlterReassignmentsRequest *ar)
{
    const struct kafka_AlterPartitionReassignmentsRequest *rq = ctx->rq;
    struct arena *a = &ctx->fw.arena;
    size_t n = 0;
    for (int32_t i = 0; i < rq->TopicsCnt; i++) {
        n += (size_t)rq->Topics[i].PartitionsCnt;
    }
    Cairn__ReassignmentTarget *ts = NULL;
    Cairn__ReassignmentTarget **ptrs = NULL;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ptrs, (void **)&ptrs);
    }
    size_t k = 0;
    for (int32_t i = 0; rv == RC_OK && i < rq->TopicsCnt; i++) {
        const struct kafka_ReassignableTopic *t = &rq->Topics[i];
        char *name = kafka_forward_str(a, t->Name, true);
        if (name == NULL) {
            rv = RC_NOMEM;
            break;
        }
        for (int32_t j = 0; j < t->PartitionsCnt; j++, k++) {
            const struct kafka_ReassignablePartition *p = &t->Partitions[j];
            cairn__reassignment_target__init(&ts[k]);
            ts[k].topic = name;
            ts[k].has_partition = ts[k].has_cancel = true;
            ts[k].partition = p->PartitionIndex;
            ts[k].cancel = p->ReplicasCnt < 0;
            ts[k].n_replicas = p->ReplicasCnt < 0 ? 0
                                                  : (size_t)p->ReplicasCnt;
            ts[k].replicas = (int32_t *)(uintptr_t)p->Replicas;
            ptrs[k] = &ts[k];
        }
    }
    ar->n_partitions = n;
    ar->partitions = ptrs;
    return rv;
}

void kafka_handle_alter_partition_reassignments(struct broker *b,
                                                struct kafka_request *req)
{
    struct reassign_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    struct kafka_AlterPartitionReassignmentsRequest *rq = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->fw.arena, 1, sizeof *rq,
                                       (void **)&rq);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_alter_partition_reassignments_request_decode(
            &r, req->api_version, &ctx->fw.arena, rq);
        ctx->rq = rq;
    }
    Cairn__AlterReassignmentsRequest ar =
        CAIRN__ALTER_REASSIGNMENTS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build_alter(ctx, &ar);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req,
                             "malformed AlterPartitionReassignments request");
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS;
    cr.alter_reassignments = &ar;
    kafka_forward_visible(&ctx->fw, rq->TimeoutMs);
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS,
                       alter_answer);
}

/* --- ListPartitionReassignments ------------------------------------------ */

static int enc_list(struct writer *w, int16_t v, const void *r)
{
    return kafka_list_partition_reassignments_response_encode(w, v, r);
}

/* Groups the controller's flat list (topic by topic, as it walks the
 * image) into Kafka's topics. */
static int list_group(struct arena *a,
                      const Cairn__ListReassignmentsResponse *lr,
                      struct kafka_OngoingTopicReassignment **out,
                      int32_t *n_out)
{
    size_t n = lr->n_reassignments;
    struct kafka_OngoingTopicReassignment *ts = NULL;
    struct kafka_OngoingPartitionReassignment *ps = NULL;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ps, (void **)&ps);
    }
    int32_t nt = 0;
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        const Cairn__OngoingReassignment *o = lr->reassignments[i];
        const char *name = o->topic != NULL ? o->topic : "";
        if (nt == 0 || ts[nt - 1].Name.len != strlen(name) ||
            memcmp(ts[nt - 1].Name.ptr, name, strlen(name)) != 0) {
            ts[nt++] = (struct kafka_OngoingTopicReassignment){
                .Name = slice_from_str(name), .Partitions = &ps[i]};
        }
        ps[i] = (struct kafka_OngoingPartitionReassignment){
            .PartitionIndex = o->partition,
            .Replicas = o->replicas,
            .ReplicasCnt = (int32_t)o->n_replicas,
            .AddingReplicas = o->adding_replicas,
            .AddingReplicasCnt = (int32_t)o->n_adding_replicas,
            .RemovingReplicas = o->removing_replicas,
            .RemovingReplicasCnt = (int32_t)o->n_removing_replicas};
        ts[nt - 1].PartitionsCnt++;
    }
    *out = ts;
    *n_out = nt;
    return rv;
}

static void list_answer(struct kafka_forward *fw, const Cairn__Response *resp,
                        int16_t error)
{
    struct reassign_ctx *ctx = (struct reassign_ctx *)fw;
    const Cairn__ListReassignmentsResponse *lr =
        resp != NULL && error == KAFKA_ERROR_NONE ? resp->list_reassignments
                                                  : NULL;
    struct kafka_ListPartitionReassignmentsResponse r = {0};
    if (lr == NULL) {
        r.ErrorCode = error == KAFKA_ERROR_NONE
                          ? KAFKA_ERROR_UNKNOWN_SERVER_ERROR
                          : error;
        r.ErrorMessage = slice_from_str(kafka_error_name(r.ErrorCode));
    } else {
        struct kafka_OngoingTopicReassignment *ts = NULL;
        if (list_group(&ctx->fw.arena, lr, &ts, &r.TopicsCnt) != RC_OK) {
            kafka_close_conn(ctx->fw.req, "out of memory");
            return;
        }
        r.Topics = ts;
        r.ErrorMessage = slice_null();
    }
    kafka_send(ctx->fw.req, enc_list, &r);
}

static int build_list(struct reassign_ctx *ctx,
                      Cairn__ListReassignmentsRequest *lq)
{
    const struct kafka_ListPartitionReassignmentsRequest *rq = ctx->rq;
    struct arena *a = &ctx->fw.arena;
    size_t n = rq->TopicsCnt < 0 ? 0 : (size_t)rq->TopicsCnt;
    Cairn__ReassignmentQuery *qs = NULL;
    Cairn__ReassignmentQuery **ptrs = NULL;
    int rv = arena_alloc(a, n, sizeof *qs, (void **)&qs);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ptrs, (void **)&ptrs);
    }
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        cairn__reassignment_query__init(&qs[i]);
        qs[i].topic = kafka_forward_str(a, rq->Topics[i].Name, true);
        qs[i].n_partitions = (size_t)rq->Topics[i].PartitionIndexesCnt;
        qs[i].partitions = (int32_t *)(uintptr_t)rq->Topics[i]
                               .PartitionIndexes;
        ptrs[i] = &qs[i];
        if (qs[i].topic == NULL) {
            rv = RC_NOMEM;
        }
    }
    lq->n_topics = n;
    lq->topics = ptrs;
    return rv;
}

void kafka_handle_list_partition_reassignments(struct broker *b,
                                               struct kafka_request *req)
{
    struct reassign_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    struct kafka_ListPartitionReassignmentsRequest *rq = NULL;
    int rv = ctx == NULL ? RC_NOMEM
                         : arena_alloc(&ctx->fw.arena, 1, sizeof *rq,
                                       (void **)&rq);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (rv == RC_OK) {
        rv = kafka_list_partition_reassignments_request_decode(
            &r, req->api_version, &ctx->fw.arena, rq);
        ctx->rq = rq;
    }
    Cairn__ListReassignmentsRequest lq =
        CAIRN__LIST_REASSIGNMENTS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build_list(ctx, &lq);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req,
                             "malformed ListPartitionReassignments request");
        return;
    }
    if (rq->TopicsCnt == 0) {
        /* An empty list (not null) asks about nothing. */
        list_answer(&ctx->fw, &(Cairn__Response){
                             .list_reassignments =
                                 &(Cairn__ListReassignmentsResponse)
                                     CAIRN__LIST_REASSIGNMENTS_RESPONSE__INIT},
                    KAFKA_ERROR_NONE);
        kafka_forward_free(&ctx->fw);
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_LIST_REASSIGNMENTS;
    cr.list_reassignments = &lq;
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS,
                       list_answer);
}

/* --- UnregisterBroker ----------------------------------------------------- */

static int enc_unregister(struct writer *w, int16_t v, const void *r)
{
    return kafka_unregister_broker_response_encode(w, v, r);
}

static void unregister_answer(struct kafka_forward *fw,
                              const Cairn__Response *resp, int16_t error)
{
    struct reassign_ctx *ctx = (struct reassign_ctx *)fw;
    const char *msg = resp != NULL && resp->error_message != NULL
                          ? resp->error_message
                          : kafka_error_name(error);
    struct kafka_UnregisterBrokerResponse r = {
        .ErrorCode = error,
        .ErrorMessage = error == KAFKA_ERROR_NONE ? slice_null()
                                                  : slice_from_str(msg)};
    kafka_send(ctx->fw.req, enc_unregister, &r);
}

void kafka_handle_unregister_broker(struct broker *b,
                                    struct kafka_request *req)
{
    struct reassign_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    struct kafka_UnregisterBrokerRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    int rv = ctx == NULL ? RC_NOMEM
                         : kafka_unregister_broker_request_decode(
                               &r, req->api_version, &ctx->fw.arena, &rq);
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req, "malformed UnregisterBroker request");
        return;
    }
    Cairn__UnregisterBrokerRequest ur = CAIRN__UNREGISTER_BROKER_REQUEST__INIT;
    ur.has_broker_id = true;
    ur.broker_id = rq.BrokerId;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_UNREGISTER_BROKER;
    cr.unregister_broker = &ur;
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS,
                       unregister_answer);
}
