/* ElectLeaders (broker/broker.h): forwarded to the active controller,
 * which plans every partition's election (controller/plan_elect.h) and
 * answers per partition; the broker turns that into Kafka's response,
 * with Kafka's messages for the errors. A null partition list goes as
 * "every partition" and comes back with only the partitions that needed
 * an election, as Kafka answers it. Loop thread. */
#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

/* An ElectLeaders request waiting for the controller. */
struct elect_ctx {
    struct kafka_forward fw;
    struct kafka_ElectLeadersRequest rq;
};

static int enc_elect(struct writer *w, int16_t v, const void *r)
{
    return kafka_elect_leaders_response_encode(w, v, r);
}

/* Kafka's message for a partition's error (null for none). */
static struct slice error_message(int16_t e)
{
    const char *m;
    switch (e) {
    case KAFKA_ERROR_NONE:
        return slice_null();
    case KAFKA_ERROR_ELECTION_NOT_NEEDED:
        m = "Leader election not needed for topic partition.";
        break;
    case KAFKA_ERROR_PREFERRED_LEADER_NOT_AVAILABLE:
        m = "The preferred leader was not available.";
        break;
    case KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE:
        m = "Eligible topic partition leaders are not available.";
        break;
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
        m = "This server does not host this topic-partition.";
        break;
    case KAFKA_ERROR_INVALID_REQUEST:
        m = "The partition appears more than once in the request.";
        break;
    default:
        m = kafka_error_name(e);
        break;
    }
    return slice_from_str(m);
}

/* Every listed partition answered with error (and the top-level code). */
static void answer_all_with(struct elect_ctx *ctx, int16_t error)
{
    const struct kafka_ElectLeadersRequest *rq = &ctx->rq;
    int32_t n = rq->TopicPartitionsCnt > 0 ? rq->TopicPartitionsCnt : 0;
    struct kafka_ReplicaElectionResult *ts = NULL;
    int rv = arena_alloc(&ctx->fw.arena, (size_t)n, sizeof *ts, (void **)&ts);
    for (int32_t i = 0; rv == RC_OK && i < n; i++) {
        const struct kafka_ElectLeadersTopicPartitions *t =
            &rq->TopicPartitions[i];
        struct kafka_ElectLeadersPartitionResult *ps = NULL;
        rv = arena_alloc(&ctx->fw.arena, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionsCnt; k++) {
            ps[k] = (struct kafka_ElectLeadersPartitionResult){
                t->Partitions[k], error, error_message(error)};
        }
        ts[i] = (struct kafka_ReplicaElectionResult){t->Topic, ps,
                                                     t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        kafka_close_conn(ctx->fw.req, "out of memory");
        return;
    }
    struct kafka_ElectLeadersResponse r = {.ErrorCode = error,
                                           .ReplicaElectionResults = ts,
                                           .ReplicaElectionResultsCnt = n};
    kafka_send(ctx->fw.req, enc_elect, &r);
}

static void elect_answer(struct kafka_forward *fw,
                         const Cairn__Response *resp, int16_t error)
{
    struct elect_ctx *ctx = (struct elect_ctx *)fw;
    const Cairn__ElectLeadersResponse *er =
        resp != NULL && error == KAFKA_ERROR_NONE &&
                resp->body_case == CAIRN__RESPONSE__BODY_ELECT_LEADERS
            ? resp->elect_leaders
            : NULL;
    bool listed = ctx->rq.TopicPartitionsCnt >= 0;
    if (er == NULL || (listed && er->n_topics !=
                                     (size_t)ctx->rq.TopicPartitionsCnt)) {
        answer_all_with(ctx, kafka_forward_missing(error));
    } else {
        size_t n = er->n_topics;
        struct kafka_ReplicaElectionResult *ts = NULL;
        int rv = arena_alloc(&ctx->fw.arena, n, sizeof *ts, (void **)&ts);
        for (size_t i = 0; rv == RC_OK && i < n; i++) {
            const Cairn__ElectLeadersTopicResult *t = er->topics[i];
            struct kafka_ElectLeadersPartitionResult *ps = NULL;
            rv = arena_alloc(&ctx->fw.arena, t->n_partitions, sizeof *ps,
                             (void **)&ps);
            for (size_t k = 0; rv == RC_OK && k < t->n_partitions; k++) {
                int16_t e = (int16_t)t->partitions[k]->error_code;
                ps[k] = (struct kafka_ElectLeadersPartitionResult){
                    t->partitions[k]->partition, e, error_message(e)};
            }
            ts[i] = (struct kafka_ReplicaElectionResult){
                listed ? ctx->rq.TopicPartitions[i].Topic
                       : slice_from_str(t->topic != NULL ? t->topic : ""),
                ps, (int32_t)t->n_partitions};
        }
        if (rv != RC_OK) {
            kafka_close_conn(ctx->fw.req, "out of memory");
        } else {
            struct kafka_ElectLeadersResponse r = {
                .ReplicaElectionResults = ts,
                .ReplicaElectionResultsCnt = (int32_t)n};
            kafka_send(ctx->fw.req, enc_elect, &r);
        }
    }
}

static int build(struct elect_ctx *ctx, Cairn__ElectLeadersRequest *el)
{
    const struct kafka_ElectLeadersRequest *rq = &ctx->rq;
    el->has_election_type = el->has_all_partitions = true;
    el->election_type = rq->ElectionType;
    el->all_partitions = rq->TopicPartitionsCnt < 0;
    if (el->all_partitions) {
        return RC_OK;
    }
    size_t n = (size_t)rq->TopicPartitionsCnt;
    Cairn__ElectLeadersTopic *ts = NULL;
    Cairn__ElectLeadersTopic **ptrs = NULL;
    int rv = arena_alloc(&ctx->fw.arena, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->fw.arena, n, sizeof *ptrs, (void **)&ptrs);
    }
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        cairn__elect_leaders_topic__init(&ts[i]);
        ts[i].topic = kafka_forward_str(&ctx->fw.arena,
                                        rq->TopicPartitions[i].Topic, true);
        ts[i].n_partitions = (size_t)rq->TopicPartitions[i].PartitionsCnt;
        ts[i].partitions =
            (int32_t *)(uintptr_t)rq->TopicPartitions[i].Partitions;
        ptrs[i] = &ts[i];
        if (ts[i].topic == NULL) {
            rv = RC_TOO_LARGE;
        }
    }
    el->n_topics = n;
    el->topics = ptrs;
    return rv;
}

void kafka_handle_elect_leaders(struct broker *b, struct kafka_request *req)
{
    struct elect_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    if (ctx == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    int rv = kafka_elect_leaders_request_decode(&r, req->api_version,
                                                &ctx->fw.arena, &ctx->rq);
    Cairn__ElectLeadersRequest el = CAIRN__ELECT_LEADERS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build(ctx, &el);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req, "malformed ElectLeaders request");
        return;
    }
    if (ctx->rq.ElectionType != KAFKA_ELECTION_PREFERRED &&
        ctx->rq.ElectionType != KAFKA_ELECTION_UNCLEAN) {
        answer_all_with(ctx, KAFKA_ERROR_INVALID_REQUEST);
        kafka_forward_free(&ctx->fw);
        return;
    }
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_ELECT_LEADERS;
    cr.elect_leaders = &el;
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS,
                       elect_answer);
}
