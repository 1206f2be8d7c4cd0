/* Replication rules of one partition (Kafka's Partition.scala and
 * Replica.scala; shared/reference/replication-design.md section 2): on the
 * leader, each follower's fetch state, the ISR (the committed one and at
 * most one pending change), the high-watermark candidate, ISR shrink and
 * expand, the two min-ISR checks. The follower's rules are
 * follower_partition.h's.
 *
 * A pure core: no I/O, no clock (time is an argument), no allocation.
 * Owned by its partition (broker/replication/partition.c); loop thread only.
 *
 * Leader-side rules:
 *   - A follower's LEO is its last fetch offset. On a fetch at offset f at
 *     time t with the leader's LEO L: if f >= L, lastCaughtUp = t; else if
 *     f >= the leader LEO recorded at its previous fetch, lastCaughtUp =
 *     the previous fetch time (if there was one). lastCaughtUp never moves
 *     back (Kafka takes the max), so an ISR follower's first lagging fetch
 *     after a leader change keeps it caught up. Then the previous fetch
 *     becomes (t, L).
 *   - A follower is caught up when its LEO >= the leader's LEO, or
 *     now - lastCaughtUp <= lag_max_ms.
 *   - The maximal ISR is the committed ISR, plus the added member while an
 *     expansion is pending (a pending shrink still counts the member it
 *     would drop).
 *   - HW candidate: the minimum of the leader's LEO and the LEO of every
 *     follower that is in the maximal ISR or (caught up and eligible to
 *     join); no candidate (-1) while the committed ISR is smaller than
 *     min_isr (strict min-ISR, KAFKA-15583).
 *   - Shrink: drop every ISR follower that is not caught up; never the
 *     leader. Expand: a follower outside the ISR that is eligible, whose
 *     LEO >= the HW and >= the leader's epoch start offset (Kafka's
 *     isFollowerInSync) and that is caught up by the rule above. Kafka
 *     needs no third condition because its HW keeps moving while the ISR
 *     is below min_isr; here the HW stops then (strict min-ISR), and a
 *     lagging follower whose LEO passed the stalled HW would join and be
 *     dropped again at the next check, over and over. One change in
 *     flight at a time: nothing is proposed while one is pending.
 *   - min_isr is min(min.insync.replicas, number of replicas): the HW of a
 *     topic with fewer replicas than min.insync.replicas moves on the
 *     replicas it has, for acks=0 and 1 (Kafka's HW ignores the minimum
 *     altogether), while acks=all admission compares the ISR with the
 *     configured value, as Kafka does: such a topic refuses every acks=all
 *     write with NOT_ENOUGH_REPLICAS. */
#ifndef CAIRN_BROKER_ISR_H
#define CAIRN_BROKER_ISR_H

#include <stdbool.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"

#define ISR_OFFSET_UNKNOWN (-1)

enum isr_pending {
    ISR_PENDING_NONE = 0,
    ISR_PENDING_EXPAND,
    ISR_PENDING_SHRINK,
};

struct isr_follower {
    int32_t id;
    int64_t leo;                   /* ISR_OFFSET_UNKNOWN until it fetches */
    int64_t last_fetch_ms;         /* -1: never */
    int64_t last_fetch_leader_leo; /* leader LEO at that fetch; -1: never */
    int64_t last_caught_up_ms;     /* -1: never */
    bool eligible;                 /* unfenced, not shutting down */
};

struct isr_state {
    int32_t self;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int64_t epoch_start_offset;       /* leader's LEO when it took over */
    int32_t min_isr;                  /* min(min.insync.replicas, |replicas|) */
    int32_t min_insync;               /* min.insync.replicas as configured */
    int64_t lag_max_ms;               /* replica.lag.time.max.ms */
    struct meta_replica_set replicas; /* every replica, the leader included */
    struct meta_replica_set isr;      /* committed */
    enum isr_pending pending;
    struct meta_replica_set proposed; /* the ISR of the pending change */
    struct isr_follower followers[META_REPLICAS_MAX]; /* not self */
    int32_t n_followers;
};

/* This broker (self) takes over as leader of p at p->leader_epoch with log
 * end offset leo at now_ms. Followers in the ISR start caught up
 * (lastCaughtUp = now), the others never caught up; every LEO unknown; no
 * change pending; every follower eligible until isr_set_eligible()
 * says otherwise. min_insync_replicas is the configured value (>= 1). */
void isr_become_leader(struct isr_state *s, int32_t self,
                       const struct meta_partition *p,
                       int32_t min_insync_replicas, int64_t lag_max_ms,
                       int64_t leo, int64_t now_ms);

/* Newer metadata for the same leadership (same leader and leader epoch):
 * adopts the committed ISR and partition epoch, unless an AlterPartition
 * answer already gave a newer one. A pending change is dropped when the
 * partition epoch moved, or when it names a replica the metadata no
 * longer has. Followers no longer in the replica set are dropped, new
 * ones added (never caught up). When the partition epoch moved, each
 * follower outside the new ISR is forgotten (LEO unknown, never caught
 * up): it joins again, and counts for the HW, only on what it fetches
 * from then on (a damaged replica confirmed out cuts its log next,
 * broker/replication/repair.h). isr_alter_done() does the same. */
void isr_update_metadata(struct isr_state *s,
                         const struct meta_partition *p);

/* Whether broker id may join the ISR (registered, unfenced, not in
 * controlled shutdown). Unknown ids are ignored. */
void isr_set_eligible(struct isr_state *s, int32_t id, bool eligible);

/* Follower id fetched at fetch_offset at now_ms while the leader's LEO is
 * leader_leo. RC_NOT_FOUND if id is not a follower of this partition;
 * RC_OUT_OF_RANGE if fetch_offset is negative or beyond leader_leo (the
 * peer's offset, unchecked: nothing is recorded). */
MUST_CHECK int isr_follower_fetch(struct isr_state *s, int32_t id,
                                  int64_t fetch_offset, int64_t leader_leo,
                                  int64_t now_ms);

/* A follower in a fetch session (KIP-227) names a partition only when its
 * fetch offset moves: its fetches in between still say it is at that
 * offset. Before the leader's LEO moves, a follower whose LEO equals it
 * and whose session last fetched at seen_ms (more recent than the fetch
 * recorded) is taken as having fetched at that offset then: caught up
 * at seen_ms, with the leader's LEO leader_leo. Otherwise nothing
 * changes. */
void isr_follower_seen(struct isr_state *s, int32_t id, int64_t seen_ms,
                       int64_t leader_leo);

const struct isr_follower *isr_follower(const struct isr_state *s,
                                        int32_t id);

bool isr_caught_up(const struct isr_state *s,
                   const struct isr_follower *f, int64_t leader_leo,
                   int64_t now_ms);

/* The maximal ISR (see above). */
void isr_maximal_isr(const struct isr_state *s,
                     struct meta_replica_set *out);

/* The high-watermark candidate, or -1 while the committed ISR is below
 * min_isr. The caller keeps the HW from going backwards. */
int64_t isr_hw_candidate(const struct isr_state *s, int64_t leader_leo,
                         int64_t now_ms);

/* Committed |ISR| >= min_isr: the HW may move (else it stalls). */
bool isr_hw_may_move(const struct isr_state *s);

/* Committed |ISR| >= min.insync.replicas as configured. acks=all
 * admission (else
 * NOT_ENOUGH_REPLICAS before appending), and the check that fails
 * acks=all requests still waiting for the HW with
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND once a committed shrink leaves the ISR
 * below it (broker/replication/partition.c). */
bool isr_enough_for_append(const struct isr_state *s);

/* If no change is pending and some ISR follower is not caught up, fills
 * *isr_out with the ISR without every such follower, marks the shrink
 * pending and returns true. */
bool isr_maybe_shrink(struct isr_state *s, int64_t leader_leo,
                      int64_t now_ms, struct meta_replica_set *isr_out);

/* If no change is pending and some follower may join (see above), fills
 * *isr_out with the ISR plus every such follower (in replica order after
 * the current members), marks the expansion pending and returns true.
 * leader_leo is the leader's log end at now_ms. */
bool isr_maybe_expand(struct isr_state *s, int64_t hw, int64_t leader_leo,
                      int64_t now_ms, struct meta_replica_set *isr_out);

/* Why the ISR would go from s's committed one to proposed, one clause per
 * replica that leaves or joins: "replica 1 not caught up for 5004 ms >
 * replica.lag.time.max.ms=5000", "replica 3 caught up: end offset 120 >=
 * HW 118". Always terminated when cap > 0, cut short to fit. */
void isr_explain(const struct isr_state *s,
                 const struct meta_replica_set *proposed, int64_t hw,
                 int64_t now_ms, char *out, size_t cap);

/* The controller answered the pending change: on success adopt isr and
 * partition_epoch; on a refusal go back to the committed state (the next
 * fetches or checks may propose again). A refusal is only for an answer
 * that says the change was not applied and could not have been by an
 * earlier attempt (Kafka: INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED):
 * when the outcome is unknown (no answer, a lost controller) the change
 * stays pending, since it may still commit, and is sent again
 * (isr_pending_change()). Ignored with nothing pending. */
void isr_alter_done(struct isr_state *s, bool ok,
                    const struct meta_replica_set *isr,
                    int32_t partition_epoch);

/* The ISR of the pending change into *out, or false with none. */
bool isr_pending_change(const struct isr_state *s,
                        struct meta_replica_set *out);

#endif
