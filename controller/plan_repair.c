/* LeaveLeadership: a replica whose log holds a corrupt batch leaves the
 * ISR before it repairs: a leader hands the partition to an in-sync
 * replica, a follower only leaves (controller/plan.h). Pure. */
#include "controller/plan.h"

#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_internal.h"

/* The first replica, in Replicas order, of isr the controller may make
 * leader; META_NO_LEADER if none. */
static int32_t first_acceptable(const struct meta_image *img,
                                const struct meta_partition *p,
                                const struct meta_replica_set *isr)
{
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t id = p->replicas.ids[i];
        if (meta_replica_set_contains(isr, id) &&
            plan_broker_acceptable(img, id, PLAN_NO_BROKER, PLAN_NO_BROKER)) {
            return id;
        }
    }
    return META_NO_LEADER;
}

int plan_leave_leadership(const struct meta_image *img,
                          const struct plan_leave_leadership_req *req,
                          struct plan_records *out, int16_t *error_out)
{
    const struct meta_broker *b = meta_image_broker(img, req->broker_id);
    if (b == NULL || b->epoch != req->broker_epoch) {
        *error_out = KAFKA_ERROR_STALE_BROKER_EPOCH;
        return RC_OK;
    }
    const struct meta_topic *t = meta_image_topic_by_id(img, &req->topic_id);
    const struct meta_partition *p =
        meta_image_partition(img, &req->topic_id, req->partition);
    if (t == NULL || p == NULL) {
        *error_out = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        return RC_OK;
    }
    if (!meta_replica_set_contains(&p->replicas, req->broker_id)) {
        *error_out = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
        return RC_OK;
    }
    if (req->leader_epoch != p->leader_epoch) {
        *error_out = req->leader_epoch < p->leader_epoch
                         ? KAFKA_ERROR_FENCED_LEADER_EPOCH
                         : KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
        return RC_OK;
    }
    *error_out = KAFKA_ERROR_NONE;
    struct meta_record rec;
    if (!meta_replica_set_contains(&p->isr, req->broker_id)) {
        /* Out of the ISR already: free to repair once this is applied.
         * The change bumps the partition epoch all the same, so that an
         * expansion the leader computed on what the replica fetched
         * before it cuts its log is refused as stale (and the leader,
         * at the new epoch, forgets those fetches). */
        plan_partition_change(&rec, t, p, NULL, META_LEADER_UNCHANGED);
        int rv = plan_records_push(out, &rec);
        if (rv != RC_OK) {
            *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        }
        return rv;
    }
    struct meta_replica_set isr;
    plan_set_without(&p->isr, req->broker_id, &isr);
    int32_t leader = META_LEADER_UNCHANGED; /* a follower leaves */
    if (p->leader == req->broker_id) {
        leader = first_acceptable(img, p, &isr);
    }
    if (isr.n == 0) {
        /* It is the last in-sync copy: it stays in the ISR (no other
         * replica may be elected without losing acknowledged records),
         * and the partition goes offline rather than serve it. */
        isr = p->isr;
        if (p->leader == META_NO_LEADER) {
            return RC_OK;
        }
        *error_out = KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    }
    plan_partition_change(&rec, t, p, &isr, leader);
    int rv = plan_records_push(out, &rec);
    if (rv == RC_OK && leader != META_LEADER_UNCHANGED) {
        char replicas[META_REPLICAS_MAX * 12], chose[16];
        meta_replica_set_format(&p->replicas, replicas, sizeof replicas);
        meta_leader_format(leader, chose);
        plan_records_rule(out,
                          "rule: first live ISR member of replicas %s "
                          "but %d, whose copy is damaged, chose %s",
                          replicas, (int)req->broker_id, chose);
    }
    if (rv != RC_OK) {
        *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    }
    return rv;
}
