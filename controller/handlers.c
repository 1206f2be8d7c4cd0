/* Planning and answering each controller request (controller/
 * controller_internal.h): protobuf in, plan (controller/plan.h), records
 * proposed, protobuf out after commit. */
#include "controller/controller_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/kafka/kafka_error.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"
#include "controller/plan_elect.h"

bool handlers_propose(struct controller *c, struct ctl_op *op,
                      struct plan_records *recs)
{
    int rv = controller_propose(c, op, recs);
    plan_records_free(recs);
    if (rv != RC_OK) {
        controller_reply_error(c, op, KAFKA_ERROR_NOT_CONTROLLER,
                               "could not propose; retry");
        return false;
    }
    return true;
}

bool handlers_propose_plan(struct controller *c, struct ctl_op *op, int rv,
                           struct plan_records *recs,
                           void (*reply)(struct controller *c,
                                         struct ctl_op *op))
{
    if (rv == RC_OK && recs->n > 0) {
        return handlers_propose(c, op, recs);
    }
    plan_records_free(recs);
    if (rv != RC_OK) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               rc_str(rv));
    } else {
        reply(c, op);
    }
    return false;
}

static bool bytes_to_uuid(ProtobufCBinaryData b, struct meta_uuid *u)
{
    if (b.len != sizeof u->b) {
        return false;
    }
    memcpy(u->b, b.data, sizeof u->b);
    return true;
}

static bool copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = src == NULL ? 0 : strlen(src);
    if (n >= cap) {
        return false;
    }
    memcpy(dst, src == NULL ? "" : src, n + 1);
    return true;
}

static void touch(struct controller *c, int32_t id)
{
    if (sessions_touch(&c->sessions, id, controller_now_ms(c)) != RC_OK) {
        TRACE_WARN(c->tracer, "broker=%d no room for its session", id);
    }
}

void handlers_heard(struct controller *c, int32_t broker_id,
                    int64_t broker_epoch)
{
    const struct meta_broker *b = meta_image_broker(&c->fsm.image, broker_id);
    if (b != NULL && b->epoch == broker_epoch) {
        touch(c, broker_id);
    }
}

/* --- Internal duties ----------------------------------------------------- */

static bool run_duty(struct controller *c, struct ctl_op *op)
{
    if (op->rebalance) {
        return handlers_rebalance(c, op);
    }
    if (op->fence && meta_image_broker(&c->fsm.image, op->fence_broker) ==
                         NULL) {
        return false; /* unregistered since the duty was queued */
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = op->fence
                 ? plan_fence_broker(&c->fsm.image, op->fence_broker,
                                     handlers_unclean_default(c), &recs)
                 : plan_elect_leaderless(&c->fsm.image,
                                         handlers_unclean_default(c),
                                         &recs);
    if (rv != RC_OK || recs.n == 0) {
        plan_records_free(&recs);
        return false;
    }
    return handlers_propose(c, op, &recs);
}

/* --- Registration and heartbeats ----------------------------------------- */

static bool run_register(struct controller *c, struct ctl_op *op)
{
    const Cairn__BrokerRegistrationRequest *r = op->req->broker_registration;
    struct meta_rec_register_broker reg = {.broker_id = r->broker_id};
    bool ok = bytes_to_uuid(r->incarnation_id, &reg.incarnation) &&
              r->endpoint != NULL &&
              copy_str(reg.host, sizeof reg.host, r->endpoint->host) &&
              r->endpoint->port > 0 && r->endpoint->port <= 65535 &&
              copy_str(reg.rack, sizeof reg.rack, r->rack);
    if (!ok) {
        controller_reply_error(c, op, KAFKA_ERROR_INVALID_REQUEST,
                               "bad registration");
        return false;
    }
    reg.port = r->endpoint->port;
    const struct meta_broker *b = meta_image_broker(&c->fsm.image,
                                                    reg.broker_id);
    uint64_t now = controller_now_ms(c);
    bool alive = b != NULL && !b->fenced &&
                 !meta_uuid_eq(&b->incarnation, &reg.incarnation) &&
                 sessions_alive(&c->sessions, reg.broker_id, now,
                                (uint64_t)c->cfg.session_timeout_ms);
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_register_broker(&c->fsm.image, &reg, alive, &recs,
                                  &op->error, &op->value);
    if (rv != RC_OK || op->error != KAFKA_ERROR_NONE || recs.n == 0) {
        plan_records_free(&recs);
        if (rv == RC_OK && op->error == KAFKA_ERROR_NONE) {
            touch(c, reg.broker_id);
            handlers_committed(c, op, NULL);
        } else {
            controller_reply_error(c, op, op->error, "registration refused");
        }
        return false;
    }
    return handlers_propose(c, op, &recs);
}

static void reply_heartbeat(struct controller *c, struct ctl_op *op)
{
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    Cairn__BrokerHeartbeatResponse hb = CAIRN__BROKER_HEARTBEAT_RESPONSE__INIT;
    hb.has_is_caught_up = hb.has_is_fenced = hb.has_should_shut_down = true;
    hb.is_caught_up = op->heartbeat.is_caught_up;
    hb.is_fenced = op->heartbeat.is_fenced;
    hb.should_shut_down = op->heartbeat.should_shut_down;
    resp.body_case = CAIRN__RESPONSE__BODY_BROKER_HEARTBEAT;
    resp.broker_heartbeat = &hb;
    controller_reply(c, op, &resp);
}

static struct plan_heartbeat_req heartbeat_req(const struct ctl_op *op)
{
    const Cairn__BrokerHeartbeatRequest *r = op->req->broker_heartbeat;
    return (struct plan_heartbeat_req){
        .broker_id = r->broker_id,
        .broker_epoch = r->broker_epoch,
        .current_metadata_offset = r->current_metadata_offset,
        .want_fence = r->want_fence,
        .want_shut_down = r->want_shut_down,
    };
}

/* A heartbeat that changes nothing (an unfenced broker with nothing to
 * ask, a fenced one not yet caught up) is answered as it comes, ahead of
 * the queue: behind thousands of AlterPartition requests, each waiting
 * for its commit, its answer could take longer than a session, and the
 * broker, which sends its next heartbeat only after this one's answer,
 * would be fenced for the controller's own backlog. True when answered;
 * otherwise the queue runs it (run_heartbeat()). */
bool handlers_heartbeat_at_once(struct controller *c, struct ctl_op *op)
{
    struct plan_heartbeat_req hr = heartbeat_req(op);
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_heartbeat(&c->fsm.image, &hr, handlers_unclean_default(c),
                            &recs, &op->heartbeat);
    bool at_once = rv == RC_OK && recs.n == 0 && !recs.more &&
                   op->heartbeat.error == KAFKA_ERROR_NONE;
    plan_records_free(&recs);
    if (at_once) {
        c->n_heartbeats_at_once++;
        reply_heartbeat(c, op);
    }
    return at_once;
}

static bool run_heartbeat(struct controller *c, struct ctl_op *op)
{
    struct plan_heartbeat_req hr = heartbeat_req(op);
    handlers_heard(c, hr.broker_id, hr.broker_epoch);
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_heartbeat(&c->fsm.image, &hr,
                            handlers_unclean_default(c), &recs,
                            &op->heartbeat);
    if (rv != RC_OK || op->heartbeat.error != KAFKA_ERROR_NONE) {
        plan_records_free(&recs);
        controller_reply_error(c, op, rv != RC_OK
                                          ? KAFKA_ERROR_UNKNOWN_SERVER_ERROR
                                          : op->heartbeat.error,
                               "heartbeat refused");
        return false;
    }
    if (recs.n == 0) {
        plan_records_free(&recs);
        reply_heartbeat(c, op);
        return false;
    }
    return handlers_propose(c, op, &recs); /* the event says what changed */
}

/* --- Topics -------------------------------------------------------------- */

static bool run_create_topics(struct controller *c, struct ctl_op *op)
{
    const Cairn__CreateTopicsRequest *r = op->req->create_topics;
    size_t n = r->n_topics;
    struct plan_topic_req *reqs = calloc(n + 1, sizeof *reqs);
    struct plan_config *cfgs = NULL;
    size_t n_cfgs = 0;
    for (size_t i = 0; i < n; i++) {
        n_cfgs += r->topics[i]->n_configs;
    }
    cfgs = calloc(n_cfgs + 1, sizeof *cfgs);
    op->topic_results = calloc(n + 1, sizeof *op->topic_results);
    op->topic_ids = calloc(n + 1, sizeof *op->topic_ids);
    if (reqs == NULL || cfgs == NULL || op->topic_results == NULL ||
        op->topic_ids == NULL) {
        free(reqs);
        free(cfgs);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const Cairn__CreatableTopic *t = r->topics[i];
        reqs[i].name = t->name;
        reqs[i].num_partitions = t->has_num_partitions ? t->num_partitions
                                                       : -1;
        reqs[i].replication_factor =
            t->has_replication_factor ? t->replication_factor : -1;
        reqs[i].configs = cfgs + k;
        reqs[i].n_configs = t->n_configs;
        for (size_t j = 0; j < t->n_configs; j++, k++) {
            cfgs[k].name = t->configs[j]->name;
            cfgs[k].value = t->configs[j]->value;
        }
        /* A random (version 4) id, drawn again as Kafka's
         * Uuid.randomUuid() does for one it would not hand out. */
        do {
            ssize_t got = getrandom(op->topic_ids[i].b,
                                    sizeof op->topic_ids[i].b, 0);
            ASSERT(got == (ssize_t)sizeof op->topic_ids[i].b);
            meta_uuid_set_v4(&op->topic_ids[i]);
        } while (!meta_uuid_ok_as_topic_id(&op->topic_ids[i]));
        reqs[i].id = op->topic_ids[i];
    }
    struct plan_topic_defaults defaults = {
        .num_partitions = c->cfg.num_partitions,
        .replication_factor = c->cfg.default_replication_factor,
    };
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_create_topics(&c->fsm.image, reqs, n, &defaults,
                                r->validate_only, &recs, op->topic_results);
    free(reqs);
    free(cfgs);
    if (rv != RC_OK || recs.n == 0) {
        plan_records_free(&recs);
        if (rv != RC_OK) {
            controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                                   rc_str(rv));
        } else {
            handlers_committed(c, op, NULL);
        }
        return false;
    }
    return handlers_propose(c, op, &recs);
}

static bool run_delete_topics(struct controller *c, struct ctl_op *op)
{
    const Cairn__DeleteTopicsRequest *r = op->req->delete_topics;
    op->errors = calloc(r->n_names + 1, sizeof *op->errors);
    if (op->errors == NULL) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_delete_topics(&c->fsm.image,
                                (const char *const *)r->names, r->n_names,
                                &recs, op->errors);
    if (rv != RC_OK || recs.n == 0) {
        plan_records_free(&recs);
        handlers_committed(c, op, NULL);
        return false;
    }
    return handlers_propose(c, op, &recs);
}

/* --- AlterPartition and producer ids ------------------------------------- */

/* AlterPartition requests planned into one proposal at most: a leader
 * rejoining thousands of partitions to their ISRs sends as many, and each
 * would otherwise wait for a commit of its own. */
#define HANDLERS_ALTER_BATCH_MAX 512

/* Plans op's AlterPartition, its records appended to recs. False when op
 * was answered now (refused, or nothing to change). */
static bool plan_alter(struct controller *c, struct ctl_op *op,
                       struct plan_records *recs)
{
    const Cairn__AlterPartitionRequest *r = op->req->alter_partition;
    c->n_alter_requests++;
    struct plan_alter_partition_req ar = {
        .broker_id = r->broker_id,
        .broker_epoch = r->broker_epoch,
        .partition = r->partition_id,
        .leader_epoch = r->leader_epoch,
        .partition_epoch = r->partition_epoch,
        .new_isr = r->new_isr,
        .n_new_isr = r->n_new_isr,
    };
    if (!bytes_to_uuid(r->topic_id, &ar.topic_id)) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                               "bad topic id");
        return false;
    }
    size_t before = recs->n; /* it pushes its record only when it plans */
    int rv = plan_alter_partition(&c->fsm.image, &ar, recs, &op->error);
    bool planned = rv == RC_OK && op->error == KAFKA_ERROR_NONE &&
                   recs->n > before;
    if (!planned) {
        if (rv == RC_OK && op->error == KAFKA_ERROR_NONE) {
            handlers_committed(c, op, NULL);
        } else {
            controller_reply_error(c, op, op->error != KAFKA_ERROR_NONE
                                              ? op->error
                                              : KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                                   "AlterPartition refused");
        }
    }
    return planned;
}

static bool same_partition(const struct ctl_op *a, const struct ctl_op *b)
{
    const Cairn__AlterPartitionRequest *x = a->req->alter_partition;
    const Cairn__AlterPartitionRequest *y = b->req->alter_partition;
    return x->partition_id == y->partition_id &&
           x->topic_id.len == y->topic_id.len &&
           (x->topic_id.len == 0 ||
            memcmp(x->topic_id.data, y->topic_id.data, x->topic_id.len) == 0);
}

/* op, and the AlterPartition requests of the same leader queued right
 * behind it (each about another partition), in one proposal: planned
 * one after another against the committed image, which is right because
 * no two of them touch the same partition. */
static bool run_alter_partition(struct controller *c, struct ctl_op *op)
{
    struct plan_records recs;
    plan_records_init(&recs);
    struct ctl_op *carrier = plan_alter(c, op, &recs) ? op : NULL;
    if (carrier == NULL) {
        ctl_op_free(op);
    }
    struct ctl_op *last = carrier;
    int taken = 1;
    while (taken < HANDLERS_ALTER_BATCH_MAX) {
        struct ctl_op *next = c->queue_head;
        if (next == NULL || next->req == NULL ||
            next->req->body_case != CAIRN__REQUEST__BODY_ALTER_PARTITION ||
            (carrier != NULL && next->req->alter_partition->broker_id !=
                                    carrier->req->alter_partition->broker_id)) {
            break;
        }
        bool clash = false;
        for (struct ctl_op *o = carrier; o != NULL && !clash; o = o->riders) {
            clash = same_partition(o, next);
        }
        if (clash) {
            break; /* planned against the image its predecessor changes */
        }
        next = controller_take_next(c, CAIRN__REQUEST__BODY_ALTER_PARTITION);
        taken++;
        if (!plan_alter(c, next, &recs)) {
            ctl_op_free(next);
        } else if (carrier == NULL) {
            carrier = last = next;
        } else {
            last->riders = next;
            last = next;
        }
    }
    int rv = carrier != NULL ? controller_propose(c, carrier, &recs) : RC_OK;
    plan_records_free(&recs);
    if (rv != RC_OK) {
        for (struct ctl_op *o = carrier; o != NULL; o = o->riders) {
            controller_reply_error(c, o, KAFKA_ERROR_NOT_CONTROLLER,
                                   "could not propose; retry");
        }
        ctl_op_free(carrier); /* riders with it */
    }
    return true; /* proposed, or every one answered and freed here */
}

static void reply_leave_leadership(struct controller *c, struct ctl_op *op);

static bool run_leave_leadership(struct controller *c, struct ctl_op *op)
{
    const Cairn__LeaveLeadershipRequest *r = op->req->leave_leadership;
    struct plan_leave_leadership_req lr = {
        .broker_id = r->broker_id,
        .broker_epoch = r->broker_epoch,
        .partition = r->partition_id,
        .leader_epoch = r->leader_epoch,
    };
    if (!bytes_to_uuid(r->topic_id, &lr.topic_id)) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                               "bad topic id");
        return false;
    }
    TRACE_WARN(c->tracer, "broker %d found a corrupt batch at offset %"
               PRId64 " of partition %d: it leaves the ISR (and the "
               "leadership) to repair", r->broker_id, r->corrupt_offset,
               r->partition_id);
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_leave_leadership(&c->fsm.image, &lr, &recs, &op->error);
    bool offline = op->error == KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    if (rv != RC_OK || (op->error != KAFKA_ERROR_NONE && !offline) ||
        recs.n == 0) {
        plan_records_free(&recs);
        if (rv == RC_OK && op->error == KAFKA_ERROR_NONE) {
            reply_leave_leadership(c, op); /* nothing to change */
            return false;
        }
        controller_reply_error(c, op, op->error, "LeaveLeadership refused");
        return false;
    }
    if (offline) {
        TRACE_ERROR(c->tracer, "event: partition %d has no leader: every "
                    "in-sync copy is damaged (broker %d was the last)",
                    r->partition_id, r->broker_id);
    }
    return handlers_propose(c, op, &recs);
}

static bool run_producer_ids(struct controller *c, struct ctl_op *op)
{
    const Cairn__AllocateProducerIdsRequest *r =
        op->req->allocate_producer_ids;
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_allocate_producer_ids(&c->fsm.image, r->broker_id,
                                        r->broker_epoch, &recs, &op->error,
                                        &op->value);
    if (rv != RC_OK || op->error != KAFKA_ERROR_NONE || recs.n == 0) {
        plan_records_free(&recs);
        controller_reply_error(c, op, op->error, "producer ids refused");
        return false;
    }
    return handlers_propose(c, op, &recs);
}

bool handlers_run(struct controller *c, struct ctl_op *op)
{
    if (op->req == NULL) {
        return run_duty(c, op);
    }
    switch (op->req->body_case) {
    case CAIRN__REQUEST__BODY_BROKER_REGISTRATION:
        return run_register(c, op);
    case CAIRN__REQUEST__BODY_BROKER_HEARTBEAT:
        return run_heartbeat(c, op);
    case CAIRN__REQUEST__BODY_CREATE_TOPICS:
        return run_create_topics(c, op);
    case CAIRN__REQUEST__BODY_DELETE_TOPICS:
        return run_delete_topics(c, op);
    case CAIRN__REQUEST__BODY_ALTER_PARTITION:
        return run_alter_partition(c, op);
    case CAIRN__REQUEST__BODY_ALLOCATE_PRODUCER_IDS:
        return run_producer_ids(c, op);
    case CAIRN__REQUEST__BODY_LEAVE_LEADERSHIP:
        return run_leave_leadership(c, op);
    case CAIRN__REQUEST__BODY_CREATE_PARTITIONS:
        return handlers_partitions_run(c, op);
    case CAIRN__REQUEST__BODY_ELECT_LEADERS:
        return handlers_elect_leaders(c, op);
    case CAIRN__REQUEST__BODY_ALTER_CONFIGS:
        return handlers_run_alter_configs(c, op);
    case CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS:
        return handlers_run_alter_reassignments(c, op);
    case CAIRN__REQUEST__BODY_UNREGISTER_BROKER:
        return handlers_run_unregister_broker(c, op);
    default:
        controller_reply_error(c, op, KAFKA_ERROR_INVALID_REQUEST,
                               "unknown request");
        return false;
    }
}

void handlers_request_cause(const struct ctl_op *op, char *out, size_t cap)
{
    ASSERT(op->req != NULL);
    const Cairn__BrokerHeartbeatRequest *hb = op->req->broker_heartbeat;
    switch (op->req->body_case) {
    case CAIRN__REQUEST__BODY_BROKER_REGISTRATION:
        snprintf(out, cap, "broker %d registered",
                 (int)op->req->broker_registration->broker_id);
        break;
    case CAIRN__REQUEST__BODY_BROKER_HEARTBEAT:
        if (hb->want_fence && hb->n_offline_log_dirs > 0) {
            snprintf(out, cap, "broker %d asked to be fenced: its log dir "
                     "%s is offline", (int)hb->broker_id,
                     hb->offline_log_dirs[0]);
        } else if (hb->want_shut_down) {
            snprintf(out, cap, "broker %d asked for a controlled shutdown",
                     (int)hb->broker_id);
        } else if (hb->want_fence) {
            snprintf(out, cap, "broker %d asked to be fenced",
                     (int)hb->broker_id);
        } else {
            snprintf(out, cap, "broker %d caught up with the metadata at "
                     "offset %lld", (int)hb->broker_id,
                     (long long)hb->current_metadata_offset);
        }
        break;
    case CAIRN__REQUEST__BODY_CREATE_TOPICS:
        snprintf(out, cap, "CreateTopics");
        break;
    case CAIRN__REQUEST__BODY_DELETE_TOPICS:
        snprintf(out, cap, "DeleteTopics");
        break;
    case CAIRN__REQUEST__BODY_CREATE_PARTITIONS:
        snprintf(out, cap, "CreatePartitions");
        break;
    case CAIRN__REQUEST__BODY_ALTER_PARTITION:
        snprintf(out, cap, "AlterPartition from leader %d",
                 (int)op->req->alter_partition->broker_id);
        break;
    case CAIRN__REQUEST__BODY_ELECT_LEADERS:
        snprintf(out, cap, op->req->elect_leaders->election_type ==
                                   PLAN_ELECTION_UNCLEAN
                               ? "unclean leader election: ElectLeaders"
                               : "preferred leader restored: ElectLeaders");
        break;
    case CAIRN__REQUEST__BODY_ALTER_CONFIGS:
        snprintf(out, cap, "AlterConfigs");
        break;
    case CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS:
        snprintf(out, cap, "AlterPartitionReassignments");
        break;
    case CAIRN__REQUEST__BODY_UNREGISTER_BROKER:
        snprintf(out, cap, "UnregisterBroker");
        break;
    default:
        snprintf(out, cap, "request %d", (int)op->req->body_case);
        break;
    }
}

/* --- Answers after commit ------------------------------------------------ */

static void reply_register(struct controller *c, struct ctl_op *op)
{
    int32_t id = op->req->broker_registration->broker_id;
    const struct meta_broker *b = meta_image_broker(&c->fsm.image, id);
    if (b == NULL) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "registration did not apply");
        return;
    }
    touch(c, id);
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    Cairn__BrokerRegistrationResponse br =
        CAIRN__BROKER_REGISTRATION_RESPONSE__INIT;
    br.has_broker_epoch = true;
    br.broker_epoch = b->epoch;
    resp.body_case = CAIRN__RESPONSE__BODY_BROKER_REGISTRATION;
    resp.broker_registration = &br;
    controller_reply(c, op, &resp);
}

static void reply_create_topics(struct controller *c, struct ctl_op *op)
{
    const Cairn__CreateTopicsRequest *r = op->req->create_topics;
    Cairn__CreateTopicResult *res = calloc(r->n_topics + 1, sizeof *res);
    Cairn__CreateTopicResult **ptrs = calloc(r->n_topics + 1, sizeof *ptrs);
    if (res == NULL || ptrs == NULL) {
        free(res);
        free(ptrs);
        return;
    }
    for (size_t i = 0; i < r->n_topics; i++) {
        cairn__create_topic_result__init(&res[i]);
        res[i].name = r->topics[i]->name;
        res[i].has_error_code = true;
        res[i].error_code = op->topic_results[i].error;
        if (res[i].error_code == KAFKA_ERROR_NONE) {
            res[i].has_topic_id = true;
            res[i].topic_id.data = op->topic_ids[i].b;
            res[i].topic_id.len = sizeof op->topic_ids[i].b;
            res[i].has_num_partitions = true;
            res[i].num_partitions = op->topic_results[i].num_partitions;
            res[i].has_replication_factor = true;
            res[i].replication_factor =
                op->topic_results[i].replication_factor;
        } else if (op->topic_results[i].message[0] != '\0') {
            res[i].error_message = op->topic_results[i].message;
        } else {
            res[i].error_message =
                (char *)(uintptr_t)kafka_error_name(
                    (int16_t)res[i].error_code);
        }
        ptrs[i] = &res[i];
    }
    Cairn__CreateTopicsResponse ct = CAIRN__CREATE_TOPICS_RESPONSE__INIT;
    ct.n_results = r->n_topics;
    ct.results = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_CREATE_TOPICS;
    resp.create_topics = &ct;
    controller_reply(c, op, &resp);
    free(res);
    free(ptrs);
}

static void reply_delete_topics(struct controller *c, struct ctl_op *op)
{
    const Cairn__DeleteTopicsRequest *r = op->req->delete_topics;
    Cairn__DeleteTopicResult *res = calloc(r->n_names + 1, sizeof *res);
    Cairn__DeleteTopicResult **ptrs = calloc(r->n_names + 1, sizeof *ptrs);
    if (res == NULL || ptrs == NULL) {
        free(res);
        free(ptrs);
        return;
    }
    for (size_t i = 0; i < r->n_names; i++) {
        cairn__delete_topic_result__init(&res[i]);
        res[i].name = r->names[i];
        res[i].has_error_code = true;
        res[i].error_code = op->errors[i];
        ptrs[i] = &res[i];
    }
    Cairn__DeleteTopicsResponse dt = CAIRN__DELETE_TOPICS_RESPONSE__INIT;
    dt.n_results = r->n_names;
    dt.results = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_DELETE_TOPICS;
    resp.delete_topics = &dt;
    controller_reply(c, op, &resp);
    free(res);
    free(ptrs);
}

static void reply_alter_partition(struct controller *c, struct ctl_op *op)
{
    const Cairn__AlterPartitionRequest *r = op->req->alter_partition;
    struct meta_uuid id;
    const struct meta_partition *p = NULL;
    if (bytes_to_uuid(r->topic_id, &id)) {
        p = meta_image_partition(&c->fsm.image, &id, r->partition_id);
    }
    if (p == NULL) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                               "partition gone");
        return;
    }
    if (p->leader != r->broker_id) {
        /* The change completed a reassignment that moved the leader. */
        controller_reply_error(c, op, KAFKA_ERROR_NEW_LEADER_ELECTED,
                               "reassignment completed; leader moved");
        return;
    }
    Cairn__AlterPartitionResponse ap = CAIRN__ALTER_PARTITION_RESPONSE__INIT;
    ap.has_leader = ap.has_leader_epoch = ap.has_partition_epoch = true;
    ap.leader = p->leader;
    ap.leader_epoch = p->leader_epoch;
    ap.partition_epoch = p->partition_epoch;
    ap.n_isr = (size_t)p->isr.n;
    ap.isr = (int32_t *)(uintptr_t)p->isr.ids;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_ALTER_PARTITION;
    resp.alter_partition = &ap;
    controller_reply(c, op, &resp);
}

static void reply_leave_leadership(struct controller *c, struct ctl_op *op)
{
    const Cairn__LeaveLeadershipRequest *r = op->req->leave_leadership;
    struct meta_uuid id;
    const struct meta_partition *p = NULL;
    if (bytes_to_uuid(r->topic_id, &id)) {
        p = meta_image_partition(&c->fsm.image, &id, r->partition_id);
    }
    if (p == NULL) {
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                               "partition gone");
        return;
    }
    Cairn__LeaveLeadershipResponse lr = CAIRN__LEAVE_LEADERSHIP_RESPONSE__INIT;
    lr.has_leader = lr.has_leader_epoch = lr.has_partition_epoch = true;
    lr.leader = p->leader;
    lr.leader_epoch = p->leader_epoch;
    lr.partition_epoch = p->partition_epoch;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.has_error_code = op->error != KAFKA_ERROR_NONE;
    resp.error_code = op->error; /* the last in-sync copy: offline */
    resp.body_case = CAIRN__RESPONSE__BODY_LEAVE_LEADERSHIP;
    resp.leave_leadership = &lr;
    controller_reply(c, op, &resp);
}

static void reply_producer_ids(struct controller *c, struct ctl_op *op)
{
    Cairn__AllocateProducerIdsResponse pr =
        CAIRN__ALLOCATE_PRODUCER_IDS_RESPONSE__INIT;
    pr.has_producer_id_start = pr.has_producer_id_len = true;
    pr.producer_id_start = op->value;
    pr.producer_id_len = PLAN_PRODUCER_ID_BLOCK_SIZE;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_ALLOCATE_PRODUCER_IDS;
    resp.allocate_producer_ids = &pr;
    controller_reply(c, op, &resp);
}

void handlers_committed(struct controller *c, struct ctl_op *op,
                        const struct fsm_result *result)
{
    if (result != NULL && result->n_invalid > 0) {
        TRACE_WARN(c->tracer, "%zu of the records at offsets %" PRId64
                   "..%" PRId64 " did not apply", result->n_invalid,
                   result->first_offset, result->last_offset);
    }
    if (op->req == NULL) {
        return; /* internal duty: the records are the outcome */
    }
    switch (op->req->body_case) {
    case CAIRN__REQUEST__BODY_BROKER_REGISTRATION:
        reply_register(c, op);
        break;
    case CAIRN__REQUEST__BODY_BROKER_HEARTBEAT:
        reply_heartbeat(c, op);
        break;
    case CAIRN__REQUEST__BODY_CREATE_TOPICS:
        reply_create_topics(c, op);
        break;
    case CAIRN__REQUEST__BODY_DELETE_TOPICS:
        reply_delete_topics(c, op);
        break;
    case CAIRN__REQUEST__BODY_ALTER_PARTITION:
        reply_alter_partition(c, op);
        break;
    case CAIRN__REQUEST__BODY_ALLOCATE_PRODUCER_IDS:
        reply_producer_ids(c, op);
        break;
    case CAIRN__REQUEST__BODY_LEAVE_LEADERSHIP:
        reply_leave_leadership(c, op);
        break;
    case CAIRN__REQUEST__BODY_CREATE_PARTITIONS:
        handlers_partitions_reply(c, op);
        break;
    case CAIRN__REQUEST__BODY_ELECT_LEADERS:
        handlers_elect_leaders_reply(c, op);
        break;
    case CAIRN__REQUEST__BODY_ALTER_CONFIGS:
        handlers_reply_alter_configs(c, op);
        break;
    case CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS:
        handlers_reply_alter_reassignments(c, op);
        break;
    case CAIRN__REQUEST__BODY_UNREGISTER_BROKER:
        handlers_reply_unregister_broker(c, op);
        break;
    default:
        ASSERT(false);
    }
}

/* --- Answered outside the queue ------------------------------------------ */

/* Only the active controller answers, as a KRaft broker fetches the
 * metadata log from the quorum's leader: a restarted follower has applied
 * nothing until a leader tells it what is committed, and a broker that
 * took its empty image for the cluster's would tell clients that every
 * topic is gone. */
void handlers_metadata_fetch(struct controller *c, struct rpc_conn *conn,
                             uint64_t correlation_id,
                             const Cairn__MetadataFetchRequest *req)
{
    struct ctl_op op = {.conn = conn, .correlation_id = correlation_id};
    if (!c->active) {
        controller_reply_error(c, &op, KAFKA_ERROR_NOT_CONTROLLER,
                               "not the active controller");
        return;
    }
    size_t max = META_FETCH_RECORDS_MAX;
    if (req->has_max_records && req->max_records > 0 &&
        (size_t)req->max_records < max) {
        max = (size_t)req->max_records;
    }
    size_t start = 0;
    size_t n = 0;
    int rv = meta_fsm_records_since(&c->fsm, req->from_offset, max, &start,
                                    &n);
    Cairn__MetadataFetchResponse mf = CAIRN__METADATA_FETCH_RESPONSE__INIT;
    mf.has_end_offset = mf.has_first_offset = true;
    mf.end_offset = c->fsm.image.offset;
    mf.first_offset = req->from_offset + 1;
    ProtobufCBinaryData *recs = NULL;
    uint8_t *image = NULL;
    size_t image_len = 0;
    if (rv == RC_OUT_OF_RANGE || req->from_offset < 0) {
        if (meta_codec_encode_image(&c->fsm.image, NULL, &image,
                                    &image_len) != RC_OK) {
            controller_reply_error(c, &op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                                   "image too large");
            return;
        }
        mf.has_image = true;
        mf.image.data = image;
        mf.image.len = image_len;
    } else if (n > 0) {
        recs = calloc(n, sizeof *recs);
        if (recs == NULL) {
            return; /* the broker retries */
        }
        for (size_t i = 0; i < n; i++) {
            const struct fsm_record *r = meta_fsm_ring_at(&c->fsm, start + i);
            recs[i].data = r->bytes;
            recs[i].len = r->len;
        }
        mf.n_records = n;
        mf.records = recs;
    }
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_METADATA_FETCH;
    resp.metadata_fetch = &mf;
    controller_reply(c, &op, &resp);
    free(recs);
    free(image);
}

static const char *role_name(int state)
{
    switch (state) {
    case RAFT_LEADER:
        return "leader";
    case RAFT_FOLLOWER:
        return "follower";
    case RAFT_CANDIDATE:
        return "candidate";
    default:
        return "unavailable";
    }
}

void handlers_describe_cluster(struct controller *c, struct rpc_conn *conn,
                               uint64_t correlation_id)
{
    struct ctl_op op = {.conn = conn, .correlation_id = correlation_id};
    raft_id leader = 0;
    const char *address = NULL;
    raft_leader(&c->raft, &leader, &address);
    Cairn__ControllerInfo info = CAIRN__CONTROLLER_INFO__INIT;
    info.has_node_id = info.has_term = info.has_leader_id = true;
    info.has_applied_index = info.has_active = true;
    info.node_id = c->cfg.node_id;
    info.raft_role = (char *)(uintptr_t)role_name(raft_state(&c->raft));
    info.term = (int64_t)c->raft.current_term;
    info.leader_id = (int32_t)leader;
    info.applied_index = (int64_t)raft_last_applied(&c->raft);
    info.active = c->active;
    uint8_t *image = NULL;
    size_t image_len = 0;
    Cairn__DescribeClusterResponse dc = CAIRN__DESCRIBE_CLUSTER_RESPONSE__INIT;
    dc.controller = &info;
    if (meta_codec_encode_image(&c->fsm.image, NULL, &image, &image_len) ==
        RC_OK) {
        dc.has_image = true;
        dc.image.data = image;
        dc.image.len = image_len;
    }
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_DESCRIBE_CLUSTER;
    resp.describe_cluster = &dc;
    controller_reply(c, &op, &resp);
    free(image);
}
