/* Helpers shared by the planner's two files, controller/plan.c (record
 * list, heartbeats, registration, topics, AlterPartition, producer ids),
 * controller/plan_election.c (leader election and fencing) and
 * controller/plan_create_partitions.c. Not for
 * use elsewhere. Pure; loop thread of the active controller. */
#ifndef CAIRN_CONTROLLER_PLAN_INTERNAL_H
#define CAIRN_CONTROLLER_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meta/meta.h"
#include "controller/plan.h"

/* Records that still fit in out (one Raft entry). */
size_t plan_room(const struct plan_records *r);

/* Undoes a failed planner's appends, so RC_NOMEM leaves the list as it
 * was before the call (n0 and more0 as they were then); returns rv. */
int plan_undo_on_error(struct plan_records *r, int rv, size_t n0,
                       bool more0);

typedef const char *(*plan_name_at_cb)(const void *arg, size_t i);

/* *dup_out (n bools, the caller frees it; NULL when n is 0): whether
 * name_at(arg, i) occurs more than once. NULL names count as "". */
MUST_CHECK int plan_mark_duplicates(size_t n, const void *arg,
                                    plan_name_at_cb name_at, bool **dup_out);

/* Brokers that may receive new replicas: unfenced, not shutting down, in
 * id order (the image keeps brokers sorted by id). Returns their count. */
size_t plan_eligible_brokers(const struct meta_image *img,
                             int32_t ids[META_BROKERS_MAX]);

/* Replica sets: same members in any order; s without id; {id}. */
bool plan_set_same_members(const struct meta_replica_set *a,
                           const struct meta_replica_set *b);
void plan_set_without(const struct meta_replica_set *s, int32_t id,
                      struct meta_replica_set *out);
void plan_set_single(int32_t id, struct meta_replica_set *out);

/* Appends a BrokerChange of b (fenced / in_controlled_shutdown: 1 set,
 * -1 clear, 0 unchanged). */
MUST_CHECK int plan_push_broker_change(struct plan_records *out,
                                       const struct meta_broker *b,
                                       int8_t fenced,
                                       int8_t in_controlled_shutdown);

/* Fills a PartitionChange; isr NULL keeps the ISR, leader
 * META_LEADER_UNCHANGED keeps the leader. */
void plan_partition_change(struct meta_record *rec,
                           const struct meta_topic *t,
                           const struct meta_partition *p,
                           const struct meta_replica_set *isr,
                           int32_t leader);

/* Takes broker b out of every ISR it is not the last member of and out
 * of every leadership (electing another leader where one is acceptable),
 * keeping `reserve` record slots free. *complete_out is false (and
 * out->more set) when it stopped for room; *n_changes_out counts the
 * changes appended. */
MUST_CHECK int plan_evict(const struct meta_image *img, int32_t b,
                          bool unclean_default, size_t reserve,
                          struct plan_records *out, size_t *n_changes_out,
                          bool *complete_out);

/* Fencing of unfenced broker b (plan_evict() then the fence record);
 * *fenced_out tells whether the fence record made it into the batch. */
MUST_CHECK int plan_fence(const struct meta_image *img,
                          const struct meta_broker *b, bool unclean_default,
                          struct plan_records *out, bool *fenced_out);

/* Unfencing of fenced broker b, then elections for the leaderless
 * partitions it may now lead; *unfenced_out as for plan_fence(). */
MUST_CHECK int plan_unfence(const struct meta_image *img,
                            const struct meta_broker *b,
                            bool unclean_default, struct plan_records *out,
                            bool *unfenced_out);

/* Reassignment completion (Kafka's completeReassignmentIfNeeded): when
 * isr, the ISR p is about to get, holds every adding replica of p's
 * reassignment, fills rec with the change that ends it: replicas = the
 * target (replicas without removing), ISR = isr without removing, adding
 * and removing empty, and the leader re-elected if it leaves or is not
 * acceptable. False (rec untouched) when there is no reassignment, an
 * adding replica is not in isr yet, or no target replica could lead.
 * rule: the election's (plan_election_rule()), "" if the leader stays. */
bool plan_reassign_complete(const struct meta_image *img,
                            const struct meta_topic *t,
                            const struct meta_partition *p,
                            const struct meta_replica_set *isr,
                            struct meta_record *rec,
                            char rule[PLAN_RULE_BYTES]);

#endif
