/* Replication rules of one partition (broker/replication/isr.h): follower
 * fetch state and lastCaughtUp, the HW candidate and strict min-ISR,
 * shrink and expand with one pending change, AlterPartition answers and
 * metadata. Time is a plain int64 in milliseconds: the core has no
 * clock. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "broker/replication/isr.h"
#include "common/meta/meta.h"
#include "common/rc.h"

#define SELF 1
#define LEADER_EPOCH 5
#define PARTITION_EPOCH 7
#define LAG_MS 30000
#define T0 1000 /* when this broker became leader */

static struct isr_state s;

TestSuite(replica, .timeout = 60);

static struct meta_replica_set set_make(const int32_t *ids, size_t n)
{
    struct meta_replica_set set = {0};
    cr_assert_leq(n, META_REPLICAS_MAX);
    for (size_t i = 0; i < n; i++) {
        set.ids[set.n++] = ids[i];
    }
    return set;
}

#define SET(...)                                                       \
    set_make((const int32_t[]){__VA_ARGS__},                           \
             sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

static void expect_set(const struct meta_replica_set *got,
                       struct meta_replica_set want)
{
    cr_assert_eq(got->n, want.n, "n: got %d want %d", got->n, want.n);
    for (int32_t i = 0; i < want.n; i++) {
        cr_assert_eq(got->ids[i], want.ids[i], "ids[%d]: got %d want %d", i,
                     got->ids[i], want.ids[i]);
    }
}

static struct meta_partition part(struct meta_replica_set replicas,
                                  struct meta_replica_set isr,
                                  int32_t partition_epoch)
{
    return (struct meta_partition){
        .id = 0,
        .replicas = replicas,
        .isr = isr,
        .leader = SELF,
        .leader_epoch = LEADER_EPOCH,
        .partition_epoch = partition_epoch,
    };
}

/* Self (1) takes over at T0 with LEO leo. */
static void lead(struct meta_replica_set replicas, struct meta_replica_set isr,
                 int32_t min_insync_replicas, int64_t leo)
{
    struct meta_partition p = part(replicas, isr, PARTITION_EPOCH);
    isr_become_leader(&s, SELF, &p, min_insync_replicas, LAG_MS, leo, T0);
}

static void fetch(int32_t id, int64_t offset, int64_t leader_leo,
                  int64_t now_ms)
{
    cr_assert_eq(isr_follower_fetch(&s, id, offset, leader_leo, now_ms),
                 RC_OK, "follower %d", id);
}

static const struct isr_follower *follower(int32_t id)
{
    const struct isr_follower *f = isr_follower(&s, id);
    cr_assert_not_null(f, "follower %d", id);
    return f;
}

static bool caught_up(int32_t id, int64_t leader_leo, int64_t now_ms)
{
    return isr_caught_up(&s, follower(id), leader_leo, now_ms);
}

/* --- Becoming leader ----------------------------------------------------- */

/* The maximal ISR (a pending expansion counts, a pending shrink still
 * counts the member it would drop) holds at least min_isr members. */
static bool maximal_reaches_min_isr(const struct isr_state *state)
{
    struct meta_replica_set maximal;
    isr_maximal_isr(state, &maximal);
    return maximal.n >= state->min_isr;
}

Test(replica, become_leader_starts_isr_followers_caught_up)
{
    lead(SET(1, 2, 3), SET(1, 2), 2, 100);
    cr_assert_eq(s.self, SELF);
    cr_assert_eq(s.leader_epoch, LEADER_EPOCH);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH);
    cr_assert_eq(s.epoch_start_offset, 100);
    cr_assert_eq(s.min_isr, 2);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    cr_assert_eq(s.n_followers, 2);
    cr_assert_null(isr_follower(&s, SELF), "the leader is no follower");

    const struct isr_follower *in = follower(2);
    cr_assert_eq(in->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(in->last_caught_up_ms, T0);
    cr_assert(in->eligible);
    cr_assert(caught_up(2, 100, T0 + LAG_MS));

    const struct isr_follower *out = follower(3);
    cr_assert_eq(out->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(out->last_caught_up_ms, -1);
    cr_assert(out->eligible);
    cr_assert_not(caught_up(3, 100, T0), "never caught up, even at T0");
}

Test(replica, first_lagging_fetch_after_takeover_keeps_isr_follower_in_sync)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    fetch(2, 90, 100, T0 + 10); /* no previous fetch to compare with */
    cr_assert_eq(follower(2)->last_caught_up_ms, T0);
    cr_assert(caught_up(2, 100, T0 + LAG_MS));
    cr_assert_not(caught_up(2, 100, T0 + LAG_MS + 1));
}

/* --- High watermark ------------------------------------------------------ */

Test(replica, hw_is_min_leo_over_leader_and_isr_followers)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 2, 100);
    fetch(2, 90, 100, T0 + 1);
    fetch(3, 95, 100, T0 + 1);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 2), 90);
    fetch(2, 100, 100, T0 + 3);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 4), 95);
    fetch(3, 100, 100, T0 + 5);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 6), 100);
    cr_assert_eq(isr_hw_candidate(&s, 110, T0 + 7), 100,
                 "the leader's own append does not move it alone");
}

Test(replica, hw_has_no_candidate_until_every_isr_follower_fetched)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 2, 100);
    fetch(2, 100, 100, T0 + 1);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 2),
                 ISR_OFFSET_UNKNOWN);
    fetch(3, 100, 100, T0 + 3);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 4), 100);
}

Test(replica, caught_up_eligible_follower_outside_isr_holds_hw_back)
{
    lead(SET(1, 2, 3), SET(1, 2), 2, 100);
    fetch(3, 100, 100, T0 + 1); /* caught up at T0 + 1 */
    fetch(2, 110, 110, T0 + 2);
    cr_assert_not(meta_replica_set_contains(&s.isr, 3));
    cr_assert(caught_up(3, 110, T0 + 1000));
    cr_assert_eq(isr_hw_candidate(&s, 110, T0 + 1000), 100);
}

Test(replica, ineligible_follower_outside_isr_does_not_hold_hw_back)
{
    lead(SET(1, 2, 3), SET(1, 2), 2, 100);
    fetch(3, 100, 100, T0 + 1);
    fetch(2, 110, 110, T0 + 2);
    isr_set_eligible(&s, 3, false);
    cr_assert(caught_up(3, 110, T0 + 1000));
    cr_assert_eq(isr_hw_candidate(&s, 110, T0 + 1000), 110);
    isr_set_eligible(&s, 3, true);
    cr_assert_eq(isr_hw_candidate(&s, 110, T0 + 1000), 100);
}

Test(replica, lagging_follower_outside_isr_does_not_hold_hw_back)
{
    lead(SET(1, 2, 3), SET(1, 2), 2, 100);
    fetch(3, 50, 100, T0 + 1); /* never caught up */
    fetch(2, 110, 110, T0 + 2);
    cr_assert_not(caught_up(3, 110, T0 + 3));
    cr_assert_eq(isr_hw_candidate(&s, 110, T0 + 3), 110);
}

Test(replica, no_hw_candidate_while_committed_isr_below_min_isr)
{
    lead(SET(1, 2, 3), SET(1), 2, 100);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0), ISR_OFFSET_UNKNOWN,
                 "strict min-ISR: the leader alone does not commit");
    cr_assert_not(isr_enough_for_append(&s));

    struct meta_partition p = part(SET(1, 2, 3), SET(1, 2), 8);
    isr_update_metadata(&s, &p);
    fetch(2, 100, 100, T0 + 1);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 1), 100);
    cr_assert(isr_enough_for_append(&s));
}

/* The HW moves on the replicas there are; acks=all compares with the
 * configured minimum, as Kafka's Partition.appendRecordsToLeader does. */
Test(replica, min_isr_clamps_to_replica_count_for_the_hw_only)
{
    lead(SET(1, 2), SET(1, 2), 3, 100);
    cr_assert_eq(s.min_isr, 2);
    cr_assert_eq(s.min_insync, 3);
    fetch(2, 100, 100, T0 + 1);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 1), 100);
    cr_assert(isr_hw_may_move(&s));
    cr_assert_not(isr_enough_for_append(&s),
                  "2 replicas cannot hold min.insync.replicas=3");
    cr_assert(maximal_reaches_min_isr(&s));

    struct meta_partition p = part(SET(1, 2), SET(1), 8);
    isr_update_metadata(&s, &p);
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 2),
                 ISR_OFFSET_UNKNOWN);
    cr_assert_not(isr_hw_may_move(&s));
    cr_assert_not(isr_enough_for_append(&s));
    cr_assert_not(maximal_reaches_min_isr(&s));
}

Test(replica, single_replica_commits_alone_but_refuses_acks_all_above_one)
{
    lead(SET(1), SET(1), 2, 100);
    cr_assert_eq(s.min_isr, 1);
    cr_assert_eq(s.n_followers, 0);
    cr_assert_eq(isr_hw_candidate(&s, 120, T0), 120);
    cr_assert_not(isr_enough_for_append(&s));
    lead(SET(1), SET(1), 1, 100);
    cr_assert(isr_enough_for_append(&s));
}

/* --- lastCaughtUp -------------------------------------------------------- */

Test(replica, fetch_at_leader_leo_sets_last_caught_up_to_fetch_time)
{
    lead(SET(1, 2), SET(1), 1, 100);
    fetch(2, 100, 100, T0 + 500);
    cr_assert_eq(follower(2)->leo, 100);
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 500);
    cr_assert_eq(follower(2)->last_fetch_ms, T0 + 500);
    cr_assert_eq(follower(2)->last_fetch_leader_leo, 100);
}

Test(replica, fetch_at_previous_leader_leo_uses_previous_fetch_time)
{
    lead(SET(1, 2), SET(1), 1, 100);
    fetch(2, 90, 100, T0 + 100); /* behind, no previous fetch */
    cr_assert_eq(follower(2)->last_caught_up_ms, -1);
    fetch(2, 100, 120, T0 + 600); /* reached what the leader had at +100 */
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 100);
    fetch(2, 110, 130, T0 + 900); /* short of 120, the previous LEO */
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 100);
    fetch(2, 130, 130, T0 + 1200);
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 1200);
}

Test(replica, constant_small_produces_keep_follower_in_sync)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    int64_t leader_leo = 100;
    int64_t follower_leo = 100;
    int64_t now = T0;
    for (int i = 0; i < 200; i++) { /* 100 s, more than 3 * LAG_MS */
        now += 500;
        leader_leo += 10; /* a produce lands before every fetch */
        fetch(2, follower_leo, leader_leo, now);
        follower_leo = leader_leo; /* the response brings it all */
        cr_assert_lt(follower(2)->leo, leader_leo, "never fully caught up");
        cr_assert(caught_up(2, leader_leo, now), "step %d", i);
        struct meta_replica_set isr;
        cr_assert_not(isr_maybe_shrink(&s, leader_leo, now, &isr),
                      "step %d", i);
    }
    cr_assert_eq(follower(2)->last_caught_up_ms, now - 500);
}

Test(replica, stuck_follower_falls_out_after_lag_max_not_before)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 2, 100);
    fetch(2, 100, 100, T0);       /* caught up at T0 */
    fetch(2, 100, 150, T0 + 100); /* stuck: 100 >= 100, keeps T0 */
    fetch(2, 100, 150, T0 + 200); /* 100 < 150: no progress */
    cr_assert_eq(follower(2)->last_caught_up_ms, T0);
    int64_t edge = T0 + LAG_MS;
    fetch(3, 150, 150, edge);
    struct meta_replica_set isr = {0};
    cr_assert(caught_up(2, 150, edge), "now - lastCaughtUp == lag_max_ms");
    cr_assert_not(isr_maybe_shrink(&s, 150, edge, &isr));
    cr_assert_eq(s.pending, ISR_PENDING_NONE);

    fetch(3, 150, 150, edge + 1);
    cr_assert_not(caught_up(2, 150, edge + 1));
    cr_assert(isr_maybe_shrink(&s, 150, edge + 1, &isr));
    expect_set(&isr, SET(1, 3));
    expect_set(&s.proposed, SET(1, 3));
    cr_assert_eq(s.pending, ISR_PENDING_SHRINK);
}

Test(replica, follower_at_leader_leo_is_caught_up_however_old)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    fetch(2, 100, 100, T0);
    cr_assert(caught_up(2, 100, T0 + 10 * LAG_MS));
    cr_assert_not(caught_up(2, 101, T0 + 10 * LAG_MS));
}

/* --- Shrink and expand --------------------------------------------------- */

Test(replica, shrink_never_removes_leader)
{
    lead(SET(2, 1, 3), SET(2, 1, 3), 1, 100);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 100, T0 + LAG_MS + 1, &isr));
    expect_set(&isr, SET(1));
}

Test(replica, shrink_keeps_caught_up_followers_in_isr_order)
{
    lead(SET(1, 2, 3, 4), SET(4, 1, 3, 2), 1, 100);
    int64_t now = T0 + LAG_MS + 1;
    fetch(2, 100, 100, now);
    fetch(4, 100, 100, now);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 100, now, &isr));
    expect_set(&isr, SET(4, 1, 2));
}

Test(replica, nothing_to_shrink_or_expand_proposes_nothing)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    fetch(2, 100, 100, T0);
    struct meta_replica_set isr = SET(9);
    cr_assert_not(isr_maybe_shrink(&s, 100, T0, &isr));
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0, &isr));
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    expect_set(&isr, SET(9)); /* untouched */
}

Test(replica, shrink_and_expand_refused_while_shrink_pending)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + LAG_MS + 1); /* may join */
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 100, T0 + LAG_MS + 1, &isr));
    expect_set(&isr, SET(1));
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0, &isr));
    cr_assert_not(isr_maybe_shrink(&s, 100, T0 + 2 * LAG_MS, &isr));
    cr_assert_eq(s.pending, ISR_PENDING_SHRINK);
    expect_set(&s.proposed, SET(1));
}

Test(replica, shrink_and_expand_refused_while_expand_pending)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    expect_set(&isr, SET(1, 2, 3));
    /* Follower 2 never fetched and is now stale. */
    cr_assert_not(caught_up(2, 100, T0 + LAG_MS + 1));
    cr_assert_not(isr_maybe_shrink(&s, 100, T0 + LAG_MS + 1, &isr));
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0, &isr));
    cr_assert_eq(s.pending, ISR_PENDING_EXPAND);
    expect_set(&s.proposed, SET(1, 2, 3));
}

Test(replica, pending_expand_counts_new_member_in_maximal_isr)
{
    lead(SET(1, 2, 3), SET(1, 2), 2, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    struct meta_replica_set maximal = {0};
    isr_maximal_isr(&s, &maximal);
    expect_set(&maximal, SET(1, 2, 3));
    expect_set(&s.isr, SET(1, 2)); /* committed is unchanged */

    /* Follower 3 stops counting as a would-be member (ineligible), yet it
     * holds the HW back as a member of the maximal ISR. */
    fetch(2, 120, 120, T0 + 2);
    isr_set_eligible(&s, 3, false);
    cr_assert_eq(isr_hw_candidate(&s, 120, T0 + 3), 100);

    isr_alter_done(&s, false, NULL, 0);
    cr_assert_eq(isr_hw_candidate(&s, 120, T0 + 3), 120);
}

Test(replica, pending_expand_counts_for_enough_after_append_only)
{
    lead(SET(1, 2, 3), SET(1, 2), 3, 100);
    cr_assert_eq(s.min_isr, 3);
    cr_assert_not(isr_enough_for_append(&s));
    cr_assert_not(maximal_reaches_min_isr(&s));
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    cr_assert(maximal_reaches_min_isr(&s), "maximal ISR has 3");
    cr_assert_not(isr_enough_for_append(&s), "committed ISR has 2");
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 2),
                 ISR_OFFSET_UNKNOWN, "strict min-ISR on committed");
}

Test(replica, pending_shrink_still_counts_dropped_member)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 2, 100);
    int64_t now = T0 + LAG_MS + 1;
    fetch(2, 120, 120, now);
    fetch(3, 50, 120, now); /* stale and far behind */
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 120, now, &isr));
    expect_set(&isr, SET(1, 2));

    struct meta_replica_set maximal = {0};
    isr_maximal_isr(&s, &maximal);
    expect_set(&maximal, SET(1, 2, 3));
    cr_assert_eq(isr_hw_candidate(&s, 120, now), 50);

    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert_eq(isr_hw_candidate(&s, 120, now), 120);
}

Test(replica, pending_shrink_counts_for_enough_after_append)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 3, 100);
    int64_t now = T0 + LAG_MS + 1;
    fetch(2, 100, 100, now);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 100, now, &isr));
    expect_set(&isr, SET(1, 2));
    cr_assert(isr_enough_for_append(&s), "committed ISR has 3");
    cr_assert(maximal_reaches_min_isr(&s), "maximal ISR has 3");

    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert_not(isr_enough_for_append(&s));
    cr_assert_not(maximal_reaches_min_isr(&s));
}

Test(replica, enough_for_append_uses_committed_isr_only)
{
    lead(SET(1, 2), SET(1), 2, 100);
    fetch(2, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    cr_assert_not(isr_enough_for_append(&s));
    cr_assert(maximal_reaches_min_isr(&s));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert(isr_enough_for_append(&s));
}

Test(replica, expand_requires_leo_at_least_hw)
{
    lead(SET(1, 2), SET(1), 1, 100);
    fetch(2, 109, 120, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 110, 110, T0, &isr));
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    fetch(2, 110, 120, T0 + 2);
    cr_assert(isr_maybe_expand(&s, 110, 110, T0, &isr));
    expect_set(&isr, SET(1, 2));
    cr_assert_eq(s.pending, ISR_PENDING_EXPAND);
}

Test(replica, expand_requires_caught_up_not_only_past_a_stalled_hw)
{
    /* ISR {1} is below min ISR 2: the HW stays at 100 while the leader's
     * log grows. Follower 2 is past that HW but far behind the log end. */
    lead(SET(1, 2, 3), SET(1), 2, 100);
    fetch(2, 500, 1000, T0 + 10);
    fetch(2, 600, 2000, T0 + 20);
    struct meta_replica_set isr = {0};
    cr_assert_not(caught_up(2, 2000, T0 + 20));
    cr_assert_not(isr_maybe_expand(&s, 100, 2000, T0 + 20, &isr),
                  "LEO 600 >= HW 100, but 1400 behind the log end");
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    /* It reaches the end the leader had at its previous fetch: caught up
     * as of that fetch (Kafka's lastCaughtUpTime), so it may join. */
    fetch(2, 2000, 2100, T0 + 30);
    cr_assert(isr_maybe_expand(&s, 100, 2100, T0 + 30, &isr));
    expect_set(&isr, SET(1, 2));
}

/* A leader appending faster than its followers fetch for a while, then
 * followers that catch up: the ISR shrinks once and grows once, never
 * flapping in between, although the followers pass the stalled HW on
 * every fetch. */
Test(replica, a_lagging_follower_leaves_once_and_rejoins_once)
{
    lead(SET(1, 2), SET(1, 2), 2, 0);
    struct meta_replica_set isr = {0};
    int shrinks = 0;
    int expands = 0;
    int64_t leo = 0;
    int64_t hw = 0;
    int64_t follower_leo = 0;
    int32_t epoch = PARTITION_EPOCH;
    for (int64_t t = T0; t < T0 + 6 * LAG_MS; t += 100) {
        bool lagging = t < T0 + 3 * LAG_MS;
        leo += 1000;                         /* the producer never stops */
        follower_leo += lagging ? 500 : 2000; /* then it catches up */
        if (follower_leo > leo) {
            follower_leo = leo;
        }
        fetch(2, follower_leo, leo, t);
        int64_t c = isr_hw_candidate(&s, leo, t);
        hw = c > hw ? c : hw;                /* stalls below min ISR */
        if (isr_maybe_shrink(&s, leo, t, &isr)) {
            shrinks++;
            isr_alter_done(&s, true, &isr, ++epoch);
        }
        if (isr_maybe_expand(&s, hw, leo, t, &isr)) {
            expands++;
            isr_alter_done(&s, true, &isr, ++epoch);
        }
    }
    cr_assert_eq(shrinks, 1, "shrinks %d", shrinks);
    cr_assert_eq(expands, 1, "expands %d", expands);
    expect_set(&s.isr, SET(1, 2));
}

Test(replica, expand_requires_leo_at_least_epoch_start_offset)
{
    lead(SET(1, 2), SET(1), 1, 100); /* epoch starts at 100 */
    fetch(2, 99, 120, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 50, 50, T0, &isr), "HW 50 is passed");
    fetch(2, 100, 120, T0 + 2);
    cr_assert(isr_maybe_expand(&s, 50, 50, T0, &isr));
    expect_set(&isr, SET(1, 2));
}

Test(replica, expand_requires_eligibility)
{
    lead(SET(1, 2), SET(1), 1, 100);
    fetch(2, 100, 100, T0 + 1);
    isr_set_eligible(&s, 2, false);
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0, &isr));
    isr_set_eligible(&s, 2, true);
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    expect_set(&isr, SET(1, 2));
}

Test(replica, expand_never_adds_follower_that_has_not_fetched)
{
    lead(SET(1, 2), SET(1), 1, 0); /* empty log: HW and epoch start 0 */
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 0, 0, T0, &isr));
    fetch(2, 0, 0, T0 + 1);
    cr_assert(isr_maybe_expand(&s, 0, 0, T0, &isr));
}

Test(replica, expand_adds_every_joiner_after_members_in_replica_order)
{
    lead(SET(4, 1, 2, 3), SET(3, 1), 1, 100);
    fetch(2, 100, 100, T0 + 1);
    fetch(4, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    expect_set(&isr, SET(3, 1, 4, 2));
}

/* --- AlterPartition answers ---------------------------------------------- */

Test(replica, alter_done_success_adopts_isr_and_partition_epoch)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH + 1);
    expect_set(&s.isr, SET(1, 2, 3));
    cr_assert_eq(s.proposed.n, 0);
    /* The next change may go. */
    cr_assert(isr_maybe_shrink(&s, 100, T0 + LAG_MS + 1, &isr));
}

Test(replica, alter_done_failure_reverts_to_committed_state)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    struct meta_replica_set ignored = SET(1);
    isr_alter_done(&s, false, &ignored, PARTITION_EPOCH + 3);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH);
    expect_set(&s.isr, SET(1, 2));
    struct meta_replica_set maximal = {0};
    isr_maximal_isr(&s, &maximal);
    expect_set(&maximal, SET(1, 2));
    /* The next check proposes again. */
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    expect_set(&isr, SET(1, 2, 3));
}

Test(replica, alter_done_ignored_with_nothing_pending)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    struct meta_replica_set isr = SET(1);
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH);
    expect_set(&s.isr, SET(1, 2));
}

Test(replica, alter_done_success_older_than_ours_reverts)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH - 1);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH);
    expect_set(&s.isr, SET(1, 2));
}

/* --- Metadata ------------------------------------------------------------ */

Test(replica, metadata_with_new_partition_epoch_drops_pending_change)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    struct meta_partition p = part(SET(1, 2, 3), SET(1), PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    cr_assert_eq(s.proposed.n, 0);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH + 1);
    expect_set(&s.isr, SET(1));
    /* The controller's late answer to the dropped change is ignored. */
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 2);
    expect_set(&s.isr, SET(1));
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH + 1);
}

/* The controller takes follower 2 out (a damaged replica asked to leave
 * before it cuts its log): what it fetched before no longer counts, so no
 * other follower's fetch brings it back; only a fetch of its own does. */
Test(replica, a_follower_taken_out_by_metadata_rejoins_only_on_a_new_fetch)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 1, 100);
    fetch(2, 100, 100, T0 + 1);
    fetch(3, 100, 100, T0 + 1);
    struct meta_partition p = part(SET(1, 2, 3), SET(1, 3),
                                   PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);
    cr_assert_eq(follower(2)->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(follower(3)->leo, 100, "a member keeps what it fetched");
    struct meta_replica_set isr = {0};
    fetch(3, 100, 100, T0 + 2);
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0 + 2, &isr),
                  "taken back on what it fetched before it left");
    fetch(2, 40, 100, T0 + 3); /* it cut its log to 40 */
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0 + 3, &isr));
    fetch(2, 100, 100, T0 + 4);
    cr_assert(isr_maybe_expand(&s, 100, 100, T0 + 4, &isr));
    expect_set(&isr, SET(1, 3, 2));
}

/* Follower 2 is out and has fetched up to the HW; before the leader
 * proposes it, it finds damage and the controller confirms it out with a
 * change of nothing but the partition epoch. It is about to cut its log:
 * what it fetched before must not put it back. */
Test(replica, an_epoch_that_changes_nothing_forgets_the_followers_outside)
{
    lead(SET(1, 2, 3), SET(1, 3), 1, 100);
    fetch(2, 100, 100, T0 + 1);
    fetch(3, 100, 100, T0 + 1);
    struct meta_partition p = part(SET(1, 2, 3), SET(1, 3),
                                   PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);
    cr_assert_eq(follower(2)->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(follower(2)->last_fetch_ms, -1);
    cr_assert_eq(follower(3)->leo, 100, "a member keeps what it fetched");
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0 + 2, &isr));
    fetch(2, 40, 100, T0 + 3); /* it cut its log to 40 */
    cr_assert_not(caught_up(2, 100, T0 + 3), "one low fetch is not caught up");
    cr_assert_eq(isr_hw_candidate(&s, 100, T0 + 3), 100,
                 "nor does it hold the HW back");
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0 + 3, &isr));
    fetch(2, 100, 100, T0 + 4);
    cr_assert(isr_maybe_expand(&s, 100, 100, T0 + 4, &isr));
    expect_set(&isr, SET(1, 3, 2));
}

/* The same when the new epoch comes in the answer to the leader's own
 * shrink, ahead of the metadata. */
Test(replica, a_shrink_answered_forgets_the_follower_it_dropped)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 1, 100);
    fetch(2, 90, 100, T0 + 1);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    int64_t later = T0 + LAG_MS + 10;
    fetch(3, 100, 100, later);
    cr_assert(isr_maybe_shrink(&s, 100, later, &isr));
    expect_set(&isr, SET(1, 3));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    cr_assert_eq(follower(2)->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(follower(3)->leo, 100);
}

Test(replica, metadata_with_same_partition_epoch_keeps_pending_change)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    struct meta_partition p = part(SET(1, 2, 3), SET(1, 2), PARTITION_EPOCH);
    isr_update_metadata(&s, &p);
    cr_assert_eq(s.pending, ISR_PENDING_EXPAND);
    expect_set(&s.proposed, SET(1, 2, 3));
}

/* A reassignment from 1,2,3 to 1,2,4 completed by an answer that ran
 * ahead of the metadata: the leader, still holding replica 3, proposed it
 * back; the metadata at that same partition epoch no longer names 3, so
 * the controller refuses the change and it is dropped at once. */
Test(replica, metadata_that_removed_a_proposed_member_drops_the_change)
{
    lead(SET(1, 2, 3, 4), SET(1, 2, 4), 1, 100);
    struct meta_replica_set isr = SET(1, 2, 4);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set proposed = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0 + 1, &proposed));
    expect_set(&proposed, SET(1, 2, 4, 3));
    struct meta_partition p = part(SET(1, 2, 4), isr, PARTITION_EPOCH);
    isr_update_metadata(&s, &p);
    cr_assert_eq(s.pending, ISR_PENDING_NONE);
    struct meta_replica_set max = {0};
    isr_maximal_isr(&s, &max);
    expect_set(&max, SET(1, 2, 4));
}

Test(replica, metadata_older_than_adopted_alter_answer_is_ignored)
{
    lead(SET(1, 2, 3), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0, &isr));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    struct meta_partition p = part(SET(1, 2, 3), SET(1, 2), PARTITION_EPOCH);
    isr_update_metadata(&s, &p);
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH + 1);
    expect_set(&s.isr, SET(1, 2, 3));
}

/* An answer at a newer partition epoch ran ahead of metadata that took
 * replica 4 away (a cancelled reassignment): the ISR stays the answer's,
 * but 4 is no follower any more, so it is never proposed back. */
Test(replica, metadata_older_than_an_answer_still_brings_the_replicas)
{
    lead(SET(1, 2, 3, 4), SET(1, 2), 1, 100);
    fetch(3, 100, 100, T0 + 1);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_expand(&s, 100, 100, T0 + 1, &isr));
    expect_set(&isr, SET(1, 2, 3));
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 2);
    struct meta_partition p = part(SET(1, 2, 3), SET(1, 2),
                                   PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);
    expect_set(&s.isr, SET(1, 2, 3));
    cr_assert_eq(s.partition_epoch, PARTITION_EPOCH + 2);
    cr_assert_null(isr_follower(&s, 4));
    cr_assert_eq(isr_follower_fetch(&s, 4, 100, 100, T0 + 2), RC_NOT_FOUND);
    cr_assert_not(isr_maybe_expand(&s, 100, 100, T0 + 2, &isr));
}

Test(replica, metadata_removes_and_adds_followers)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 1, 100);
    fetch(3, 90, 100, T0 + 1);
    isr_set_eligible(&s, 3, false);
    struct meta_partition p =
        part(SET(1, 3, 4), SET(1, 3), PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);

    cr_assert_eq(s.n_followers, 2);
    cr_assert_null(isr_follower(&s, 2));
    cr_assert_eq(isr_follower_fetch(&s, 2, 100, 100, T0 + 2),
                 RC_NOT_FOUND);
    expect_set(&s.replicas, SET(1, 3, 4));

    const struct isr_follower *kept = follower(3);
    cr_assert_eq(kept->leo, 90, "a kept follower keeps its fetch state");
    cr_assert_eq(kept->last_caught_up_ms, T0);
    cr_assert_not(kept->eligible);

    const struct isr_follower *added = follower(4);
    cr_assert_eq(added->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(added->last_caught_up_ms, -1);
    cr_assert(added->eligible);
    cr_assert_not(caught_up(4, 100, T0 + 2));
    cr_assert_eq(s.followers[0].id, 3, "replica order");
    cr_assert_eq(s.followers[1].id, 4, "replica order");
}

Test(replica, metadata_with_fewer_replicas_lowers_min_isr)
{
    lead(SET(1, 2, 3), SET(1, 2, 3), 3, 100);
    cr_assert_eq(s.min_isr, 3);
    struct meta_partition p = part(SET(1, 2), SET(1, 2), PARTITION_EPOCH + 1);
    isr_update_metadata(&s, &p);
    cr_assert_eq(s.min_isr, 2);
    cr_assert(isr_hw_may_move(&s));
    cr_assert_not(isr_enough_for_append(&s), "still 3 asked, 2 possible");
}

/* --- Fetch from strangers ------------------------------------------------ */

Test(replica, fetch_from_non_replica_is_not_found)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    cr_assert_eq(isr_follower_fetch(&s, 9, 100, 100, T0 + 1),
                 RC_NOT_FOUND);
    cr_assert_eq(isr_follower_fetch(&s, SELF, 100, 100, T0 + 1),
                 RC_NOT_FOUND, "the leader is not its own follower");
    cr_assert_eq(follower(2)->leo, ISR_OFFSET_UNKNOWN);
    cr_assert_eq(follower(2)->last_fetch_ms, -1);
}

Test(replica, fetch_out_of_range_records_nothing)
{
    lead(SET(1, 2), SET(1), 1, 100);
    fetch(2, 90, 100, T0 + 1);
    cr_assert_eq(isr_follower_fetch(&s, 2, -5, 100, T0 + 2),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(isr_follower_fetch(&s, 2, 101, 100, T0 + 3),
                 RC_OUT_OF_RANGE, "a log that has not truncated yet");
    const struct isr_follower *f = follower(2);
    cr_assert_eq(f->leo, 90);
    cr_assert_eq(f->last_fetch_ms, T0 + 1);
    cr_assert_eq(f->last_fetch_leader_leo, 100);
    cr_assert_eq(f->last_caught_up_ms, -1);
    struct meta_replica_set isr = {0};
    cr_assert_not(isr_maybe_expand(&s, 90, 90, T0, &isr));
}

Test(replica, set_eligible_ignores_unknown_ids)
{
    lead(SET(1, 2), SET(1, 2), 1, 100);
    isr_set_eligible(&s, 9, false);
    isr_set_eligible(&s, SELF, false);
    cr_assert(follower(2)->eligible);
    cr_assert_eq(s.n_followers, 1);
}

/* --- Explanations --------------------------------------------------------- */

Test(replica, explain_names_who_leaves_and_who_joins_and_why)
{
    char why[256];
    lead(SET(1, 2, 3), SET(1, 2, 3), 2, 100);
    fetch(2, 100, 100, T0);
    fetch(3, 100, 100, T0 + 5);
    int64_t now = T0 + LAG_MS + 4;
    fetch(3, 150, 150, now);
    struct meta_replica_set isr = {0};
    cr_assert(isr_maybe_shrink(&s, 150, now, &isr));
    isr_explain(&s, &isr, 100, now, why, sizeof why);
    cr_assert_str_eq(why, "replica 2 not caught up for 30004 ms > "
                          "replica.lag.time.max.ms=30000");
    isr_alter_done(&s, true, &isr, PARTITION_EPOCH + 1);
    fetch(2, 150, 150, now + 10);
    cr_assert(isr_maybe_expand(&s, 150, 150, now + 10, &isr));
    isr_explain(&s, &isr, 150, now + 10, why, sizeof why);
    cr_assert_str_eq(why, "replica 2 caught up: end offset 150 >= HW 150");
    /* Both directions at once, and a bound that cuts it short. */
    struct meta_replica_set swap = SET(1, 2);
    isr_explain(&s, &swap, 150, now + 10, why, 24);
    cr_assert_eq(strlen(why), 23);
    cr_assert(strncmp(why, "replica 2 caught up", 19) == 0, "%s", why);
    isr_explain(&s, &swap, 150, now + 10, why, sizeof why);
    cr_assert(strstr(why, "; replica 3 not caught up for ") != NULL, "%s",
              why);
}

Test(replica, explain_a_member_that_never_caught_up_under_this_leader)
{
    char why[256];
    lead(SET(1, 2), SET(1), 1, 100);
    struct meta_replica_set none = SET(1);
    isr_explain(&s, &none, 100, T0, why, sizeof why);
    cr_assert_str_eq(why, "", "no change, nothing to say");
    lead(SET(1, 2), SET(1, 2), 1, 100);
    s.followers[0].last_caught_up_ms = -1; /* as a never-fetched joiner */
    isr_explain(&s, &none, 100, T0, why, sizeof why);
    cr_assert_str_eq(why, "replica 2 has not caught up since this leader "
                          "took over");
}

/* --- Fetch sessions (KIP-227) ---------------------------------------------- */

Test(replica, a_session_fetch_that_leaves_the_partition_out_keeps_it_caught_up)
{
    lead(SET(1, 2), SET(1, 2), 2, 100);
    fetch(2, 100, 100, T0 + 10); /* named: at the end */
    /* Its session fetched again and again without naming it (nothing
     * moved), the last time at T0 + 40000; then a batch comes. */
    isr_follower_seen(&s, 2, T0 + 40000, 100);
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 40000);
    cr_assert(caught_up(2, 110, T0 + 40000 + LAG_MS),
              "lagging since the batch, not since it last named it");
    cr_assert_not(caught_up(2, 110, T0 + 40001 + LAG_MS));
    /* Its next fetch names the new end: caught up then. */
    fetch(2, 110, 110, T0 + 40050);
    cr_assert_eq(follower(2)->last_caught_up_ms, T0 + 40050);
}

Test(replica, a_session_fetch_says_nothing_of_a_follower_behind)
{
    lead(SET(1, 2), SET(1, 2), 2, 100);
    fetch(2, 90, 100, T0 + 10);
    int64_t before = follower(2)->last_caught_up_ms;
    isr_follower_seen(&s, 2, T0 + 40000, 100); /* it is at 90, not 100 */
    cr_assert_eq(follower(2)->last_caught_up_ms, before);
    cr_assert_eq(follower(2)->last_fetch_ms, T0 + 10);
    isr_follower_seen(&s, 3, T0 + 40000, 100); /* no such follower */
    fetch(2, 100, 100, T0 + 50);
    isr_follower_seen(&s, 2, T0 + 20, 100); /* older than the last fetch */
    cr_assert_eq(follower(2)->last_fetch_ms, T0 + 50);
}
