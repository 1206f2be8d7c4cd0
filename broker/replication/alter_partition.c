/* AlterPartition from a leader to the active controller (broker/broker.h):
 * the proposed ISR with the leader and partition epochs the leader holds.
 * The controller answers after the change is committed; a refusal of the
 * change itself (an ineligible member) reverts the leader's pending
 * change; any other failure leaves it pending, to be sent again, since
 * it may yet commit. Both ask for fresh metadata. LeaveLeadership, a leader's request to hand a
 * partition whose log holds a corrupt batch to an in-sync replica, goes
 * the same way (broker/replication/repair.h). */
#include "broker/broker.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/replication/repair.h"
#include "common/meta/meta.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

struct alter_wait {
    struct broker *b;
    struct meta_uuid topic_id;
    int32_t partition;
    int32_t leader_epoch;
};

static struct partition *find(struct broker *b, const struct alter_wait *aw)
{
    return replica_manager_find_id(&b->partitions, &aw->topic_id,
                                   aw->partition);
}

static bool read_isr(const Cairn__AlterPartitionResponse *ap,
                     struct meta_replica_set *isr)
{
    if (ap == NULL || ap->n_isr == 0 || ap->n_isr > META_REPLICAS_MAX ||
        !ap->has_partition_epoch) {
        return false;
    }
    isr->n = (int32_t)ap->n_isr;
    for (size_t i = 0; i < ap->n_isr; i++) {
        isr->ids[i] = ap->isr[i];
    }
    return true;
}

static void answered_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct alter_wait *aw = arg;
    struct broker *b = aw->b;
    Cairn__Response *resp = rc == RC_OK
                                ? cairn__response__unpack(NULL, len, payload)
                                : NULL;
    struct partition *p = find(b, aw);
    if (p != NULL && partition_is_leader(p) &&
        p->leader_epoch == aw->leader_epoch) {
        struct meta_replica_set isr = {0};
        bool ok = resp != NULL && resp->error_code == 0 &&
                  read_isr(resp->alter_partition, &isr);
        int32_t pe = ok ? resp->alter_partition->partition_epoch : 0;
        enum partition_alter outcome = PARTITION_ALTER_COMMITTED;
        if (!ok) {
            outcome = resp != NULL
                          ? partition_alter_outcome((int16_t)resp->error_code)
                          : PARTITION_ALTER_UNKNOWN;
            TRACE_WARN(&b->tracer, "partition=%s-%d AlterPartition %s: "
                       "%s (error %d)", p->topic, p->id,
                       outcome == PARTITION_ALTER_REFUSED
                           ? "refused"
                           : "outcome unknown, kept pending",
                       resp == NULL ? rc_str(rc) : "controller",
                       resp == NULL ? -1 : resp->error_code);
            membership_refresh(b->membership);
        } else {
            char from[META_REPLICAS_MAX * 12], to[META_REPLICAS_MAX * 12];
            meta_replica_set_format(&p->isr, from, sizeof from);
            meta_replica_set_format(&isr, to, sizeof to);
            TRACE_INFO(&b->tracer, "event: %s-%d isr %s -> %s at partition "
                       "epoch %d (%s)", p->topic, p->id, from, to, pe,
                       p->isr_why);
            if (isr.n < p->isr.n) {
                b->isr_shrinks++;
            } else if (isr.n > p->isr.n) {
                b->isr_expands++;
            }
        }
        partition_alter_done(p, outcome, &isr, pe, (int64_t)uv_now(b->loop));
    }
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    free(aw);
}

/* Packs cr, a request about leader p, and sends it to the active
 * controller; cb gets an alter_wait (it frees it) naming p at its
 * current leader epoch. RC_OK, or the call was not made. */
static int call_about(struct broker *b, const struct partition *p,
                      const Cairn__Request *cr, membership_call_cb cb)
{
    uint8_t buf[128 + 8 * META_REPLICAS_MAX];
    size_t len = cairn__request__get_packed_size(cr);
    ASSERT(len <= sizeof buf);
    cairn__request__pack(cr, buf);
    struct alter_wait *aw = malloc(sizeof *aw);
    if (aw == NULL) {
        return RC_NOMEM;
    }
    *aw = (struct alter_wait){.b = b, .topic_id = p->topic_id,
                              .partition = p->id,
                              .leader_epoch = p->leader_epoch};
    int rv = membership_call_active(b->membership, buf, len, 5000, cb, aw);
    if (rv != RC_OK) {
        free(aw);
    }
    return rv;
}

void broker_alter_isr(void *arg, struct partition *p,
                      const struct meta_replica_set *isr)
{
    struct broker *b = arg;
    Cairn__AlterPartitionRequest ap = CAIRN__ALTER_PARTITION_REQUEST__INIT;
    ap.has_broker_id = ap.has_broker_epoch = ap.has_topic_id = true;
    ap.has_partition_id = ap.has_leader_epoch = ap.has_partition_epoch = true;
    ap.broker_id = b->id;
    ap.broker_epoch = membership_epoch(b->membership);
    ap.topic_id.data = p->topic_id.b;
    ap.topic_id.len = sizeof p->topic_id.b;
    ap.partition_id = p->id;
    ap.leader_epoch = p->leader_epoch;
    ap.partition_epoch = p->partition_epoch;
    int32_t ids[META_REPLICAS_MAX];
    memcpy(ids, isr->ids, (size_t)isr->n * sizeof *ids);
    ap.new_isr = ids;
    ap.n_new_isr = (size_t)isr->n;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_ALTER_PARTITION;
    cr.alter_partition = &ap;
    char from[META_REPLICAS_MAX * 12], to[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->isr, from, sizeof from);
    meta_replica_set_format(isr, to, sizeof to);
    TRACE_INFO(&b->tracer, "event: %s-%d isr %s -> %s proposed (%s)",
               p->topic, p->id, from, to, p->isr_why);
    if (call_about(b, p, &cr, answered_cb) != RC_OK) {
        /* Not sent; an earlier attempt of the same change may have been,
         * so it stays pending and the next check sends it again. */
        partition_alter_done(p, PARTITION_ALTER_UNKNOWN, NULL, 0,
                             (int64_t)uv_now(b->loop));
    }
}

static void left_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct alter_wait *aw = arg;
    struct broker *b = aw->b;
    Cairn__Response *resp = rc == RC_OK
                                ? cairn__response__unpack(NULL, len, payload)
                                : NULL;
    struct partition *p = find(b, aw);
    const char *topic = p != NULL ? p->topic : "?";
    int64_t at = p != NULL ? p->corrupt_offset : -1;
    int32_t leader = resp != NULL && resp->leave_leadership != NULL
                         ? resp->leave_leadership->leader
                         : META_NO_LEADER;
    if (resp != NULL &&
        resp->error_code == KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE) {
        TRACE_ERROR(&b->tracer, "event: %s-%d every in-sync copy is damaged "
                    "from offset %" PRId64 ": no replica to repair it from; "
                    "the partition is offline (no leader), no consumer gets "
                    "the damaged bytes", topic, aw->partition, at);
    } else if (resp == NULL || resp->error_code != 0) {
        TRACE_WARN(&b->tracer, "partition=%s-%d LeaveLeadership refused: "
                   "%s (error %d); asked again", topic, aw->partition,
                   resp == NULL ? rc_str(rc) : "controller",
                   resp == NULL ? -1 : resp->error_code);
        if (p != NULL) {
            p->corrupt_asked_ms = 0; /* not worth the wait */
        }
    } else if (leader == META_NO_LEADER) {
        TRACE_ERROR(&b->tracer, "event: %s-%d has no leader: its damaged "
                    "copy (offset %" PRId64 ") left the ISR and no other "
                    "in-sync replica is up; offline until one returns",
                    topic, aw->partition, at);
    } else if (leader != b->id) {
        TRACE_INFO(&b->tracer, "event: %s-%d out of the ISR to repair a "
                   "corrupt batch at offset %" PRId64 " (leader %d, epoch "
                   "%d)", topic, aw->partition, at, leader,
                   resp->leave_leadership->leader_epoch);
        if (p != NULL && resp->leave_leadership->has_partition_epoch) {
            repair_left_isr(p, resp->leave_leadership->leader_epoch,
                            resp->leave_leadership->partition_epoch);
        }
    }
    membership_refresh(b->membership); /* learn the new leader soon */
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    free(aw);
}

void broker_log_corrupt(void *arg, struct partition *p, int64_t offset)
{
    struct broker *b = arg;
    Cairn__LeaveLeadershipRequest lr = CAIRN__LEAVE_LEADERSHIP_REQUEST__INIT;
    lr.has_broker_id = lr.has_broker_epoch = lr.has_topic_id = true;
    lr.has_partition_id = lr.has_leader_epoch = lr.has_corrupt_offset = true;
    lr.broker_id = b->id;
    lr.broker_epoch = membership_epoch(b->membership);
    lr.topic_id.data = p->topic_id.b;
    lr.topic_id.len = sizeof p->topic_id.b;
    lr.partition_id = p->id;
    lr.leader_epoch = p->leader_epoch;
    lr.corrupt_offset = offset;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_LEAVE_LEADERSHIP;
    cr.leave_leadership = &lr;
    int rv = call_about(b, p, &cr, left_cb);
    (void)rv; /* asked again at the next read of the damaged range */
}
