/* Partition reassignment requests (controller/controller_internal.h):
 * AlterReassignments is planned (controller/plan_reassign.c), proposed
 * and answered after commit; ListReassignments reads the committed image
 * of the active controller. */
#include "controller/controller_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

bool handlers_run_alter_reassignments(struct controller *c, struct ctl_op *op)
{
    const Cairn__AlterReassignmentsRequest *r = op->req->alter_reassignments;
    size_t n = r->n_partitions;
    op->errors = calloc(n + 1, sizeof *op->errors);
    struct plan_reassignment *reqs = calloc(n + 1, sizeof *reqs);
    if (op->errors == NULL || reqs == NULL) {
        free(reqs);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const Cairn__ReassignmentTarget *t = r->partitions[i];
        reqs[i] = (struct plan_reassignment){
            .topic = t->topic,
            .partition = t->has_partition ? t->partition : -1,
            .cancel = t->has_cancel && t->cancel,
            .replicas = t->replicas,
            .n_replicas = t->n_replicas,
        };
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_alter_reassignments(&c->fsm.image, reqs, n, &recs,
                                      op->errors);
    free(reqs);
    if (rv != RC_OK || recs.n == 0) {
        plan_records_free(&recs);
        handlers_reply_alter_reassignments(c, op);
        return false;
    }
    return handlers_propose(c, op, &recs);
}

bool handlers_run_unregister_broker(struct controller *c, struct ctl_op *op)
{
    int32_t id = op->req->unregister_broker->has_broker_id
                     ? op->req->unregister_broker->broker_id
                     : -1;
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_unregister_broker(&c->fsm.image, id, &recs, &op->error);
    if (rv != RC_OK || op->error != KAFKA_ERROR_NONE) {
        plan_records_free(&recs);
        controller_reply_error(
            c, op, op->error,
            op->error == KAFKA_ERROR_INVALID_REQUEST
                ? "the broker still hosts replicas; move them first"
                : "no such broker is registered");
        return false;
    }
    return handlers_propose(c, op, &recs);
}

void handlers_reply_unregister_broker(struct controller *c, struct ctl_op *op)
{
    Cairn__UnregisterBrokerResponse ur =
        CAIRN__UNREGISTER_BROKER_RESPONSE__INIT;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_UNREGISTER_BROKER;
    resp.unregister_broker = &ur;
    controller_reply(c, op, &resp);
}

static const char *reassign_message(int16_t error)
{
    switch (error) {
    case KAFKA_ERROR_NONE:
        return NULL;
    case KAFKA_ERROR_NO_REASSIGNMENT_IN_PROGRESS:
        return "no reassignment is in progress for this partition";
    case KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT:
        return "the replica list is empty, repeats a broker or names a "
               "broker that is not registered";
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
        return "no such topic or partition";
    case KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE:
        return "the change would leave no in-sync replica to lead";
    default:
        return kafka_error_name(error);
    }
}

void handlers_reply_alter_reassignments(struct controller *c,
                                        struct ctl_op *op)
{
    size_t n = op->req->alter_reassignments->n_partitions;
    Cairn__ReassignmentResult *res = calloc(n + 1, sizeof *res);
    Cairn__ReassignmentResult **ptrs = calloc(n + 1, sizeof *ptrs);
    if (res == NULL || ptrs == NULL) {
        free(res);
        free(ptrs);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cairn__reassignment_result__init(&res[i]);
        res[i].has_error_code = true;
        res[i].error_code = op->errors[i];
        res[i].error_message =
            (char *)(uintptr_t)reassign_message(op->errors[i]);
        ptrs[i] = &res[i];
    }
    Cairn__AlterReassignmentsResponse ar =
        CAIRN__ALTER_REASSIGNMENTS_RESPONSE__INIT;
    ar.n_results = n;
    ar.results = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_ALTER_REASSIGNMENTS;
    resp.alter_reassignments = &ar;
    controller_reply(c, op, &resp);
    free(ptrs);
    free(res);
}

/* Whether the request asks about partition p of topic t. */
static bool list_wanted(const Cairn__ListReassignmentsRequest *r,
                        const struct meta_topic *t, int32_t p)
{
    if (r->n_topics == 0) {
        return true;
    }
    for (size_t i = 0; i < r->n_topics; i++) {
        const Cairn__ReassignmentQuery *q = r->topics[i];
        if (q->topic == NULL || strcmp(q->topic, t->name) != 0) {
            continue;
        }
        for (size_t k = 0; k < q->n_partitions; k++) {
            if (q->partitions[k] == p) {
                return true;
            }
        }
    }
    return false;
}

static void list_fill(Cairn__OngoingReassignment *o,
                      const struct meta_topic *t,
                      const struct meta_partition *p)
{
    cairn__ongoing_reassignment__init(o);
    o->topic = (char *)(uintptr_t)t->name;
    o->has_partition = true;
    o->partition = p->id;
    o->n_replicas = (size_t)p->replicas.n;
    o->replicas = (int32_t *)(uintptr_t)p->replicas.ids;
    o->n_adding_replicas = (size_t)p->adding.n;
    o->adding_replicas = (int32_t *)(uintptr_t)p->adding.ids;
    o->n_removing_replicas = (size_t)p->removing.n;
    o->removing_replicas = (int32_t *)(uintptr_t)p->removing.ids;
    o->n_isr = (size_t)p->isr.n;
    o->isr = (int32_t *)(uintptr_t)p->isr.ids;
}

void handlers_list_reassignments(struct controller *c, struct rpc_conn *conn,
                                 uint64_t correlation_id,
                                 const Cairn__ListReassignmentsRequest *req)
{
    struct ctl_op op = {.conn = conn, .correlation_id = correlation_id};
    if (!c->active) {
        controller_reply_error(c, &op, KAFKA_ERROR_NOT_CONTROLLER,
                               "not the active controller");
        return;
    }
    const struct meta_image *img = &c->fsm.image;
    size_t n = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        for (int32_t i = 0; i < img->topics[t].n_partitions; i++) {
            const struct meta_partition *p = &img->topics[t].partitions[i];
            n += p->adding.n > 0 || p->removing.n > 0;
        }
    }
    Cairn__OngoingReassignment *os = calloc(n + 1, sizeof *os);
    Cairn__OngoingReassignment **ptrs = calloc(n + 1, sizeof *ptrs);
    if (os == NULL || ptrs == NULL) {
        free(os);
        free(ptrs);
        controller_reply_error(c, &op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return;
    }
    size_t k = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        for (int32_t i = 0; i < topic->n_partitions; i++) {
            const struct meta_partition *p = &topic->partitions[i];
            if ((p->adding.n > 0 || p->removing.n > 0) &&
                list_wanted(req, topic, i)) {
                list_fill(&os[k], topic, p);
                ptrs[k] = &os[k];
                k++;
            }
        }
    }
    Cairn__ListReassignmentsResponse lr =
        CAIRN__LIST_REASSIGNMENTS_RESPONSE__INIT;
    lr.n_reassignments = k;
    lr.reassignments = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_LIST_REASSIGNMENTS;
    resp.list_reassignments = &lr;
    controller_reply(c, &op, &resp);
    free(ptrs);
    free(os);
}
