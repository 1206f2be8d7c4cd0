/* CreatePartitions at the active controller (controller/
 * controller_internal.h): the protobuf request planned by
 * plan_create_partitions(), its Partition records proposed, the answer
 * sent after commit (or at once when nothing is to be written). */
#include "controller/controller_internal.h"

#include <stdlib.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

/* The request's topics as the planner takes them; *as_out holds every
 * topic's assignments in one array (the caller frees both). */
static int partitions_reqs(const Cairn__CreatePartitionsRequest *r,
                           struct plan_partitions_req **reqs_out,
                           struct plan_assignment **as_out)
{
    size_t n_as = 0;
    for (size_t i = 0; i < r->n_topics; i++) {
        n_as += r->topics[i]->n_assignments;
    }
    struct plan_partitions_req *reqs = calloc(r->n_topics + 1, sizeof *reqs);
    struct plan_assignment *as = calloc(n_as + 1, sizeof *as);
    if (reqs == NULL || as == NULL) {
        free(reqs);
        free(as);
        return RC_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n_topics; i++) {
        const Cairn__CreatePartitionsTopic *t = r->topics[i];
        reqs[i].name = t->name;
        reqs[i].count = t->has_count ? t->count : 0;
        if (t->has_has_assignments && t->has_assignments) {
            reqs[i].assignments = as + k;
            reqs[i].n_assignments = t->n_assignments;
        }
        for (size_t j = 0; j < t->n_assignments; j++, k++) {
            as[k].broker_ids = t->assignments[j]->broker_ids;
            as[k].n = t->assignments[j]->n_broker_ids;
        }
    }
    *reqs_out = reqs;
    *as_out = as;
    return RC_OK;
}

bool handlers_partitions_run(struct controller *c, struct ctl_op *op)
{
    const Cairn__CreatePartitionsRequest *r = op->req->create_partitions;
    struct plan_partitions_req *reqs = NULL;
    struct plan_assignment *as = NULL;
    op->partitions_results =
        calloc(r->n_topics + 1, sizeof *op->partitions_results);
    if (op->partitions_results == NULL ||
        partitions_reqs(r, &reqs, &as) != RC_OK) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_create_partitions(&c->fsm.image, reqs, r->n_topics,
                                    r->validate_only, &recs,
                                    op->partitions_results);
    free(reqs);
    free(as);
    return handlers_propose_plan(c, op, rv, &recs, handlers_partitions_reply);
}

void handlers_partitions_reply(struct controller *c, struct ctl_op *op)
{
    const Cairn__CreatePartitionsRequest *r = op->req->create_partitions;
    size_t n = r->n_topics;
    Cairn__CreatePartitionsResult *res = calloc(n + 1, sizeof *res);
    Cairn__CreatePartitionsResult **ptrs = calloc(n + 1, sizeof *ptrs);
    if (res == NULL || ptrs == NULL) {
        free(res);
        free(ptrs);
        return; /* the broker's call times out */
    }
    for (size_t i = 0; i < n; i++) {
        const struct plan_partitions_result *pr = &op->partitions_results[i];
        cairn__create_partitions_result__init(&res[i]);
        res[i].name = r->topics[i]->name;
        res[i].has_error_code = true;
        res[i].error_code = pr->error;
        if (pr->error != KAFKA_ERROR_NONE) {
            res[i].error_message = (char *)(uintptr_t)pr->message;
        }
        ptrs[i] = &res[i];
    }
    Cairn__CreatePartitionsResponse cp =
        CAIRN__CREATE_PARTITIONS_RESPONSE__INIT;
    cp.n_results = n;
    cp.results = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_CREATE_PARTITIONS;
    resp.create_partitions = &cp;
    controller_reply(c, op, &resp);
    free(res);
    free(ptrs);
}
