/* Partition reassignment (KIP-455) in the planner: starting, cancelling
 * and completing a move of a partition's replicas. A reassignment lives in
 * the partition itself: replicas = target followed by the original
 * replicas leaving, adding = target replicas not in the original set,
 * removing = original replicas not in the target. The brokers in adding
 * host the partition as followers and join the ISR through the leader's
 * AlterPartition once caught up; the change that puts the last of them
 * into the ISR also completes the move (plan_reassign_complete()). Pure;
 * loop thread of the active controller. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"
#include "controller/plan.h"
#include "controller/plan_internal.h"

/* The partition's replicas before its reassignment started (all of them
 * when none runs), in replica order. */
static void reassign_original(const struct meta_partition *p,
                              struct meta_replica_set *out)
{
    memset(out, 0, sizeof *out);
    for (int32_t i = 0; i < p->replicas.n; i++) {
        if (!meta_replica_set_contains(&p->adding, p->replicas.ids[i])) {
            out->ids[out->n++] = p->replicas.ids[i];
        }
    }
}

static bool reassign_same_order(const struct meta_replica_set *a,
                                const struct meta_replica_set *b)
{
    return a->n == b->n &&
           memcmp(a->ids, b->ids, (size_t)a->n * sizeof a->ids[0]) == 0;
}

/* Kafka's validateManualPartitionAssignment: not empty, no duplicates,
 * every broker registered. */
static int16_t reassign_check_target(const struct meta_image *img,
                                     const struct plan_reassignment *r,
                                     struct meta_replica_set *target)
{
    memset(target, 0, sizeof *target);
    if (r->n_replicas == 0 || r->n_replicas > META_REPLICAS_MAX) {
        return KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT;
    }
    for (size_t i = 0; i < r->n_replicas; i++) {
        int32_t id = r->replicas[i];
        if (meta_replica_set_contains(target, id) ||
            meta_image_broker(img, id) == NULL) {
            return KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT;
        }
        target->ids[target->n++] = id;
    }
    return KAFKA_ERROR_NONE;
}

/* Fills c as a change of p's replica sets; ISR and leader unchanged. */
static void reassign_change(struct meta_record *rec,
                            const struct meta_topic *t,
                            const struct meta_partition *p,
                            const struct meta_replica_set *replicas,
                            const struct meta_replica_set *adding,
                            const struct meta_replica_set *removing)
{
    plan_partition_change(rec, t, p, NULL, META_LEADER_UNCHANGED);
    struct meta_rec_partition_change *c = &rec->u.partition_change;
    c->replicas_changed = true;
    c->replicas = *replicas;
    c->adding = *adding;
    c->removing = *removing;
}

bool plan_reassign_complete(const struct meta_image *img,
                            const struct meta_topic *t,
                            const struct meta_partition *p,
                            const struct meta_replica_set *isr,
                            struct meta_record *rec,
                            char rule[PLAN_RULE_BYTES])
{
    if (p->adding.n == 0 && p->removing.n == 0) {
        return false;
    }
    for (int32_t i = 0; i < p->adding.n; i++) {
        if (!meta_replica_set_contains(isr, p->adding.ids[i])) {
            return false;
        }
    }
    struct meta_partition done = *p;
    memset(&done.replicas, 0, sizeof done.replicas);
    memset(&done.adding, 0, sizeof done.adding);
    memset(&done.removing, 0, sizeof done.removing);
    struct meta_replica_set new_isr = {0};
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t id = p->replicas.ids[i];
        if (!meta_replica_set_contains(&p->removing, id)) {
            done.replicas.ids[done.replicas.n++] = id;
        }
    }
    for (int32_t i = 0; i < isr->n; i++) {
        if (!meta_replica_set_contains(&p->removing, isr->ids[i])) {
            new_isr.ids[new_isr.n++] = isr->ids[i];
        }
    }
    if (new_isr.n == 0) {
        return false; /* Kafka waits too: no target replica is in sync */
    }
    struct plan_election e = plan_elect_leader(img, &done, &new_isr,
                                               PLAN_NO_BROKER, PLAN_NO_BROKER,
                                               false /* unclean */);
    if (e.leader == META_NO_LEADER) {
        return false; /* no live target replica in sync yet */
    }
    reassign_change(rec, t, p, &done.replicas, &done.adding, &done.removing);
    rec->u.partition_change.isr_changed = true;
    rec->u.partition_change.isr = new_isr;
    rule[0] = '\0';
    if (e.leader != p->leader) {
        rec->u.partition_change.leader = e.leader;
        plan_election_rule(&done, &new_isr, &e, rule, PLAN_RULE_BYTES);
    }
    return true;
}

/* Kafka's PartitionReassignmentRevert: back to the original replicas,
 * the adding ones leave the ISR. */
static int16_t reassign_cancel(const struct meta_image *img,
                               const struct meta_topic *t,
                               const struct meta_partition *p,
                               struct meta_record *rec,
                               char rule[PLAN_RULE_BYTES])
{
    if (p->adding.n == 0 && p->removing.n == 0) {
        return KAFKA_ERROR_NO_REASSIGNMENT_IN_PROGRESS;
    }
    struct meta_partition back = *p;
    reassign_original(p, &back.replicas);
    memset(&back.adding, 0, sizeof back.adding);
    memset(&back.removing, 0, sizeof back.removing);
    struct meta_replica_set isr = {0};
    for (int32_t i = 0; i < p->isr.n; i++) {
        if (!meta_replica_set_contains(&p->adding, p->isr.ids[i])) {
            isr.ids[isr.n++] = p->isr.ids[i];
        }
    }
    if (isr.n == 0) {
        return KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    }
    struct plan_election e = plan_elect_leader(img, &back, &isr,
                                               PLAN_NO_BROKER, PLAN_NO_BROKER,
                                               false /* unclean */);
    reassign_change(rec, t, p, &back.replicas, &back.adding, &back.removing);
    rec->u.partition_change.isr_changed = !plan_set_same_members(&isr,
                                                                 &p->isr);
    rec->u.partition_change.isr = isr;
    if (e.leader != p->leader) {
        rec->u.partition_change.leader = e.leader;
        plan_election_rule(&back, &isr, &e, rule, PLAN_RULE_BYTES);
    }
    return KAFKA_ERROR_NONE;
}

/* A new target for p, computed from its original replicas (a running
 * reassignment is replaced, as ZooKeeper-mode Kafka did). *n_recs_out is
 * 0 when nothing changes (the target is the current assignment). */
static int16_t reassign_start(const struct meta_image *img,
                              const struct meta_topic *t,
                              const struct meta_partition *p,
                              const struct meta_replica_set *target,
                              struct meta_record *rec, size_t *n_recs_out,
                              char rule[PLAN_RULE_BYTES])
{
    *n_recs_out = 0;
    struct meta_replica_set orig;
    reassign_original(p, &orig);
    struct meta_partition next = *p;
    next.replicas = *target;
    memset(&next.adding, 0, sizeof next.adding);
    memset(&next.removing, 0, sizeof next.removing);
    for (int32_t i = 0; i < target->n; i++) {
        if (!meta_replica_set_contains(&orig, target->ids[i])) {
            next.adding.ids[next.adding.n++] = target->ids[i];
        }
    }
    for (int32_t i = 0; i < orig.n; i++) {
        int32_t id = orig.ids[i];
        if (!meta_replica_set_contains(target, id)) {
            if (next.replicas.n >= META_REPLICAS_MAX) {
                return KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT;
            }
            next.replicas.ids[next.replicas.n++] = id;
            next.removing.ids[next.removing.n++] = id;
        }
    }
    if (p->adding.n == 0 && p->removing.n == 0 &&
        reassign_same_order(&p->replicas, target)) {
        return KAFKA_ERROR_NONE;
    }
    /* An ISR member being dropped by a replaced reassignment leaves the
     * ISR with it. */
    struct meta_replica_set isr = {0};
    for (int32_t i = 0; i < p->isr.n; i++) {
        if (meta_replica_set_contains(&next.replicas, p->isr.ids[i])) {
            isr.ids[isr.n++] = p->isr.ids[i];
        }
    }
    if (isr.n == 0) {
        return KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    }
    if (!plan_reassign_complete(img, t, &next, &isr, rec, rule)) {
        reassign_change(rec, t, p, &next.replicas, &next.adding,
                        &next.removing);
        if (!plan_set_same_members(&isr, &p->isr)) {
            rec->u.partition_change.isr_changed = true;
            rec->u.partition_change.isr = isr;
        }
        if (!meta_replica_set_contains(&isr, p->leader)) {
            struct plan_election e = plan_elect_leader(
                img, &next, &isr, PLAN_NO_BROKER, PLAN_NO_BROKER, false);
            rec->u.partition_change.leader = e.leader;
            plan_election_rule(&next, &isr, &e, rule, PLAN_RULE_BYTES);
        }
    }
    *n_recs_out = 1;
    return KAFKA_ERROR_NONE;
}

/* Entries one request may plan: a batch's records at most. Later ones
 * are answered THROTTLING_QUOTA_EXCEEDED without being looked at, so a
 * huge request costs the controller little. */
#define REASSIGN__ENTRIES_MAX META_BATCH_RECORDS_MAX

/* Orders entry indexes by topic, partition, then position (qsort_r's
 * argument is the request). */
static int reassign_cmp(const void *a, const void *b, void *arg)
{
    const struct plan_reassignment *reqs = arg;
    size_t ia = *(const size_t *)a;
    size_t ib = *(const size_t *)b;
    const struct plan_reassignment *x = &reqs[ia];
    const struct plan_reassignment *y = &reqs[ib];
    int c = strcmp(x->topic == NULL ? "" : x->topic,
                   y->topic == NULL ? "" : y->topic);
    if (c == 0) {
        c = (x->partition > y->partition) - (x->partition < y->partition);
    }
    return c != 0 ? c : (ia > ib) - (ia < ib);
}

/* repeated[i]: entry i names the same partition as an earlier one
 * (sorting, so n log n). */
static int reassign_mark_repeated(const struct plan_reassignment *reqs,
                                  size_t n, bool *repeated)
{
    size_t *order = calloc(n + 1, sizeof *order);
    if (order == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
        repeated[i] = false;
    }
    qsort_r(order, n, sizeof *order, reassign_cmp,
            (void *)(uintptr_t)reqs);
    for (size_t k = 1; k < n; k++) {
        const struct plan_reassignment *a = &reqs[order[k - 1]];
        const struct plan_reassignment *b = &reqs[order[k]];
        if (a->partition == b->partition &&
            strcmp(a->topic == NULL ? "" : a->topic,
                   b->topic == NULL ? "" : b->topic) == 0) {
            repeated[order[k]] = true;
        }
    }
    free(order);
    return RC_OK;
}

int plan_alter_reassignments(const struct meta_image *img,
                             const struct plan_reassignment *reqs, size_t n,
                             struct plan_records *out, int16_t *errors)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    size_t n_plan = n < REASSIGN__ENTRIES_MAX ? n : REASSIGN__ENTRIES_MAX;
    bool *repeated = calloc(n_plan + 1, sizeof *repeated);
    int rv = repeated == NULL ? RC_NOMEM
                              : reassign_mark_repeated(reqs, n_plan,
                                                       repeated);
    for (size_t i = n_plan; i < n; i++) {
        errors[i] = KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED;
    }
    for (size_t i = 0; i < n_plan && rv == RC_OK; i++) {
        const struct plan_reassignment *r = &reqs[i];
        const struct meta_topic *t =
            meta_image_topic(img, r->topic == NULL ? "" : r->topic);
        if (t == NULL || r->partition < 0 ||
            r->partition >= t->n_partitions) {
            errors[i] = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        if (repeated[i]) {
            errors[i] = KAFKA_ERROR_INVALID_REQUEST;
            continue;
        }
        const struct meta_partition *p = &t->partitions[r->partition];
        struct meta_record rec;
        char rule[PLAN_RULE_BYTES] = "";
        size_t n_recs = 1;
        if (r->cancel) {
            errors[i] = reassign_cancel(img, t, p, &rec, rule);
        } else {
            struct meta_replica_set target;
            errors[i] = reassign_check_target(img, r, &target);
            if (errors[i] == KAFKA_ERROR_NONE) {
                errors[i] = reassign_start(img, t, p, &target, &rec,
                                           &n_recs, rule);
            }
        }
        if (errors[i] != KAFKA_ERROR_NONE || n_recs == 0) {
            continue;
        }
        if (plan_room(out) == 0) {
            errors[i] = KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED;
            continue;
        }
        rv = plan_records_push(out, &rec);
        if (rv == RC_OK && rule[0] != '\0') {
            plan_records_rule(out, "%s", rule);
        }
    }
    free(repeated);
    if (rv != RC_OK) {
        for (size_t i = 0; i < n; i++) {
            errors[i] = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        }
    }
    return plan_undo_on_error(out, rv, n0, more0);
}

int plan_unregister_broker(const struct meta_image *img, int32_t broker_id,
                           struct plan_records *out, int16_t *error_out)
{
    const struct meta_broker *b = meta_image_broker(img, broker_id);
    if (b == NULL) {
        *error_out = KAFKA_ERROR_BROKER_ID_NOT_REGISTERED;
        return RC_OK;
    }
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        for (int32_t p = 0; p < topic->n_partitions; p++) {
            if (meta_replica_set_contains(&topic->partitions[p].replicas,
                                          broker_id)) {
                *error_out = KAFKA_ERROR_INVALID_REQUEST;
                return RC_OK;
            }
        }
    }
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_UNREGISTER_BROKER;
    rec.u.unregister_broker.broker_id = broker_id;
    rec.u.unregister_broker.broker_epoch = b->epoch;
    int rv = plan_records_push(out, &rec);
    *error_out = rv == RC_OK ? KAFKA_ERROR_NONE
                             : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    return rv;
}
