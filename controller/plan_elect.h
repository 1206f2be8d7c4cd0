/* Leader elections on request and preferred-leader rebalancing: the
 * deterministic core of ElectLeaders (Kafka API 43, KIP-460) and of
 * auto.leader.rebalance.enable. Like controller/plan.h: reads the image,
 * appends PartitionChange records (a new leader bumps the leader epoch),
 * no I/O, no clock. The glue (controller/handlers.c) proposes the records
 * and answers; the broker side of a leader move is the one fencing and
 * controlled shutdown already use (the old leader fails its waiting
 * produce requests with NOT_LEADER_OR_FOLLOWER and truncates to the new
 * leader's log by OffsetForLeaderEpoch; the new leader was in the ISR, so
 * it holds every acknowledged record). Loop thread of the active
 * controller. */
#ifndef CAIRN_CONTROLLER_PLAN_ELECT_H
#define CAIRN_CONTROLLER_PLAN_ELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"
#include "controller/plan.h"

/* ElectionType of ElectLeaders v1+ (v0 is always preferred). */
#define PLAN_ELECTION_PREFERRED 0
#define PLAN_ELECTION_UNCLEAN 1

/* One partition's election, as Kafka's controller runs it
 * (ReplicationControlManager.electLeader with PartitionChangeBuilder):
 *   UNKNOWN_TOPIC_OR_PARTITION   no such topic or partition;
 *   ELECTION_NOT_NEEDED          preferred: Replicas[0] leads already;
 *                                unclean: the partition has a leader;
 *   preferred: Replicas[0] if it is in the ISR and acceptable
 *     (plan_broker_acceptable()); else, if the current leader is, no
 *     change: PREFERRED_LEADER_NOT_AVAILABLE; else the first other ISR
 *     member in replica order that is acceptable; else
 *     PREFERRED_LEADER_NOT_AVAILABLE;
 *   unclean: the first acceptable ISR member in replica order, else the
 *     first acceptable replica (the ISR becomes just it); else
 *     ELIGIBLE_LEADERS_NOT_AVAILABLE;
 *   THROTTLING_QUOTA_EXCEEDED    the change does not fit in this batch.
 * On NONE one PartitionChange is appended. type is PLAN_ELECTION_*.
 * Returns RC_OK or RC_NOMEM (*error_out UNKNOWN_SERVER_ERROR). */
MUST_CHECK int plan_elect_partition(const struct meta_image *img,
                                    const char *topic, int32_t partition,
                                    int8_t type, struct plan_records *out,
                                    int16_t *error_out);

/* Leader imbalance of one broker, as Kafka's ZooKeeper-era controller
 * measured it (KafkaController.checkAndTriggerAutoLeaderRebalance): of
 * the partitions whose preferred replica (Replicas[0]) is the broker,
 * how many another broker leads, or nobody. */
struct plan_imbalance {
    int32_t broker;
    int32_t preferred;     /* partitions whose Replicas[0] is broker */
    int32_t not_preferred; /* of those, led by another or offline */
};

/* Fills out[0..*n) with every broker that is some partition's preferred
 * replica, by id (at most cap; the rest are left out). */
void plan_imbalance_compute(const struct meta_image *img,
                            struct plan_imbalance *out, size_t cap,
                            size_t *n);

/* Whether imbalance passes leader.imbalance.per.broker.percentage:
 * not_preferred / preferred > percentage / 100. */
bool plan_imbalance_exceeds(const struct plan_imbalance *im,
                            int32_t percentage);

/* The periodic check of auto.leader.rebalance.enable: for every broker
 * whose imbalance exceeds percentage, a PartitionChange making it leader
 * of each partition it prefers but does not lead, where it is in the ISR
 * and acceptable. Stops at the batch bound (out->more set; the next
 * check continues). *n_out counts the changes appended. RC_OK or
 * RC_NOMEM (list as before). */
MUST_CHECK int plan_rebalance_leaders(const struct meta_image *img,
                                      int32_t percentage,
                                      struct plan_records *out,
                                      size_t *n_out);

#endif
