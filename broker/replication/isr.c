/* Replication rules of one partition (broker/replication/isr.h): the leader's
 * view of each follower, the committed ISR and its one pending change, the
 * high-watermark candidate, shrink and expand, the two min-ISR checks, and the
 * follower's truncation point after OffsetsForLeaderEpoch. Pure: no I/O, no
 * clock, no allocation. */
#include "broker/replication/isr.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/rc.h"

#define ISR__NEVER (-1) /* a time that has not happened */

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* --- Invariants ---------------------------------------------------------- */

static void check_set(const struct meta_replica_set *set)
{
    ASSERT(set->n >= 0);
    ASSERT(set->n <= META_REPLICAS_MAX);
}

static void check_follower(const struct isr_follower *f)
{
    ASSERT(f->leo >= ISR_OFFSET_UNKNOWN);
    ASSERT(f->last_fetch_leader_leo >= ISR_OFFSET_UNKNOWN);
    if (f->last_fetch_ms == ISR__NEVER) {
        ASSERT(f->leo == ISR_OFFSET_UNKNOWN);
        ASSERT(f->last_fetch_leader_leo == ISR_OFFSET_UNKNOWN);
    }
}

/* Followers are exactly the replicas but self, in replica order; the
 * pending ISR grows (expand) or shrinks (shrink) the committed one. */
static void check_invariants(const struct isr_state *s)
{
    check_set(&s->replicas);
    check_set(&s->isr);
    check_set(&s->proposed);
    ASSERT(s->leader_epoch >= 0);
    ASSERT(s->partition_epoch >= 0);
    ASSERT(s->epoch_start_offset >= 0);
    ASSERT(s->lag_max_ms >= 0);
    ASSERT(s->min_isr >= 1);
    ASSERT(s->min_isr <= s->replicas.n);
    ASSERT(s->n_followers == s->replicas.n - 1);
    int32_t j = 0;
    for (int32_t i = 0; i < s->replicas.n; i++) {
        if (s->replicas.ids[i] == s->self) {
            continue;
        }
        ASSERT(j < s->n_followers);
        ASSERT(s->followers[j].id == s->replicas.ids[i]);
        check_follower(&s->followers[j]);
        j++;
    }
    ASSERT(j == s->n_followers);
    switch (s->pending) {
    case ISR_PENDING_NONE:
        ASSERT(s->proposed.n == 0);
        break;
    case ISR_PENDING_EXPAND:
        ASSERT(s->proposed.n > s->isr.n);
        ASSERT(meta_replica_set_within(&s->isr, &s->proposed));
        break;
    case ISR_PENDING_SHRINK:
        ASSERT(s->proposed.n < s->isr.n);
        ASSERT(meta_replica_set_within(&s->proposed, &s->isr));
        if (meta_replica_set_contains(&s->isr, s->self)) {
            ASSERT(meta_replica_set_contains(&s->proposed, s->self));
        }
        break;
    default:
        ASSERT_UNREACHABLE("unknown pending state");
    }
}

/* --- Followers ----------------------------------------------------------- */

static struct isr_follower follower_new(int32_t id,
                                        int64_t last_caught_up_ms)
{
    return (struct isr_follower){
        .id = id,
        .leo = ISR_OFFSET_UNKNOWN,
        .last_fetch_ms = ISR__NEVER,
        .last_fetch_leader_leo = ISR_OFFSET_UNKNOWN,
        .last_caught_up_ms = last_caught_up_ms,
        .eligible = true,
    };
}

/* Index of follower id, or -1. */
static int32_t follower_index(const struct isr_state *s, int32_t id)
{
    for (int32_t i = 0; i < s->n_followers; i++) {
        if (s->followers[i].id == id) {
            return i;
        }
    }
    return -1;
}

const struct isr_follower *isr_follower(const struct isr_state *s,
                                        int32_t id)
{
    int32_t i = follower_index(s, id);
    return i < 0 ? NULL : &s->followers[i];
}

static void drop_pending(struct isr_state *s)
{
    s->pending = ISR_PENDING_NONE;
    memset(&s->proposed, 0, sizeof s->proposed);
}

static int32_t min_isr_for(int32_t min_insync_replicas,
                           const struct meta_replica_set *replicas)
{
    return min_insync_replicas < replicas->n ? min_insync_replicas
                                             : replicas->n;
}

/* --- Leadership and metadata --------------------------------------------- */

void isr_become_leader(struct isr_state *s, int32_t self,
                       const struct meta_partition *p,
                       int32_t min_insync_replicas, int64_t lag_max_ms,
                       int64_t leo, int64_t now_ms)
{
    ASSERT(p->leader == self);
    ASSERT(meta_replica_set_contains(&p->replicas, self));
    ASSERT(min_insync_replicas >= 1);
    ASSERT(lag_max_ms >= 0);
    ASSERT(leo >= 0);
    *s = (struct isr_state){
        .self = self,
        .leader_epoch = p->leader_epoch,
        .partition_epoch = p->partition_epoch,
        .epoch_start_offset = leo,
        .min_isr = min_isr_for(min_insync_replicas, &p->replicas),
        .min_insync = min_insync_replicas,
        .lag_max_ms = lag_max_ms,
        .replicas = p->replicas,
        .isr = p->isr,
        .pending = ISR_PENDING_NONE,
    };
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t id = p->replicas.ids[i];
        if (id == self) {
            continue;
        }
        bool in_isr = meta_replica_set_contains(&p->isr, id);
        s->followers[s->n_followers++] =
            follower_new(id, in_isr ? now_ms : ISR__NEVER);
    }
    check_invariants(s);
}

/* f is out of the ISR at a new partition epoch (taken out, or confirmed
 * out by the controller for a damaged replica that is about to cut its
 * log): it joins again, and counts for the HW, only on what it fetches
 * from here on. What it fetched before may be gone (the damaged replica
 * truncates and fetches again), and counting it would put it back at
 * once. Kafka keeps a caught-up replica outside the ISR counting for the
 * HW; it has no repair by truncation. */
static void forget(struct isr_follower *f)
{
    f->leo = ISR_OFFSET_UNKNOWN;
    f->last_fetch_ms = ISR__NEVER; /* else its next fetch, at any offset,
                                    * would count as caught up then */
    f->last_fetch_leader_leo = ISR_OFFSET_UNKNOWN;
    f->last_caught_up_ms = ISR__NEVER;
}

void isr_update_metadata(struct isr_state *s,
                         const struct meta_partition *p)
{
    ASSERT(p->leader == s->self);
    ASSERT(p->leader_epoch == s->leader_epoch);
    /* An AlterPartition answer can run ahead of the metadata log: an ISR
     * older than the epoch we adopted from it is stale (Kafka's
     * Partition.makeLeader skips it too). The replica set is not: answers
     * carry none, so the metadata's is the newest known, and a follower
     * a reassignment removed must not stay proposable. */
    bool stale = p->partition_epoch < s->partition_epoch;
    if (p->partition_epoch > s->partition_epoch) {
        drop_pending(s);
    }
    struct isr_follower old[META_REPLICAS_MAX];
    int32_t n_old = s->n_followers;
    memcpy(old, s->followers, (size_t)n_old * sizeof old[0]);
    s->n_followers = 0;
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t id = p->replicas.ids[i];
        if (id == s->self) {
            continue;
        }
        struct isr_follower f = follower_new(id, ISR__NEVER);
        for (int32_t k = 0; k < n_old; k++) {
            if (old[k].id == id) {
                f = old[k];
            }
        }
        if (p->partition_epoch > s->partition_epoch &&
            !meta_replica_set_contains(&p->isr, id)) {
            forget(&f);
        }
        ASSERT(s->n_followers < META_REPLICAS_MAX);
        s->followers[s->n_followers++] = f;
    }
    s->replicas = p->replicas;
    if (!stale) {
        s->isr = p->isr;
        s->partition_epoch = p->partition_epoch;
    }
    if (s->pending != ISR_PENDING_NONE &&
        !meta_replica_set_within(&s->proposed, &s->replicas)) {
        /* Proposed before a reassignment took a member away (an answer
         * can run ahead of the metadata that removed it): the
         * controller refuses it at this partition epoch. */
        drop_pending(s);
    }
    /* The configured value is not kept, so a larger replica set cannot
     * raise min_isr again; a smaller one must lower it. */
    s->min_isr = min_isr_for(s->min_isr, &s->replicas);
    check_invariants(s);
}

void isr_set_eligible(struct isr_state *s, int32_t id, bool eligible)
{
    int32_t i = follower_index(s, id);
    if (i >= 0) {
        s->followers[i].eligible = eligible;
    }
    check_invariants(s);
}

/* --- Fetch state --------------------------------------------------------- */

int isr_follower_fetch(struct isr_state *s, int32_t id,
                       int64_t fetch_offset, int64_t leader_leo,
                       int64_t now_ms)
{
    ASSERT(leader_leo >= 0);
    int32_t i = follower_index(s, id);
    if (i < 0) {
        return RC_NOT_FOUND;
    }
    /* The offset is the peer's: Kafka records only fetches it could serve,
     * and one beyond our log end is a log that has not truncated yet. */
    if (fetch_offset < 0 || fetch_offset > leader_leo) {
        return RC_OUT_OF_RANGE;
    }
    struct isr_follower *f = &s->followers[i];
    f->leo = fetch_offset;
    if (fetch_offset >= leader_leo) {
        f->last_caught_up_ms = max64(f->last_caught_up_ms, now_ms);
    } else if (f->last_fetch_ms != ISR__NEVER &&
               fetch_offset >= f->last_fetch_leader_leo) {
        f->last_caught_up_ms = max64(f->last_caught_up_ms, f->last_fetch_ms);
    }
    f->last_fetch_ms = now_ms;
    f->last_fetch_leader_leo = leader_leo;
    check_invariants(s);
    return RC_OK;
}

void isr_follower_seen(struct isr_state *s, int32_t id, int64_t seen_ms,
                       int64_t leader_leo)
{
    int32_t i = follower_index(s, id);
    if (i < 0) {
        return;
    }
    struct isr_follower *f = &s->followers[i];
    if (f->leo != leader_leo || seen_ms <= f->last_fetch_ms) {
        return;
    }
    f->last_caught_up_ms = max64(f->last_caught_up_ms, seen_ms);
    f->last_fetch_ms = seen_ms;
    f->last_fetch_leader_leo = leader_leo;
    check_invariants(s);
}

bool isr_caught_up(const struct isr_state *s,
                   const struct isr_follower *f, int64_t leader_leo,
                   int64_t now_ms)
{
    ASSERT(leader_leo >= 0);
    if (f->leo != ISR_OFFSET_UNKNOWN && f->leo >= leader_leo) {
        return true;
    }
    return f->last_caught_up_ms != ISR__NEVER &&
           now_ms - f->last_caught_up_ms <= s->lag_max_ms;
}

/* --- ISR, HW and min-ISR ------------------------------------------------- */

void isr_maximal_isr(const struct isr_state *s,
                     struct meta_replica_set *out)
{
    *out = s->isr;
    if (s->pending != ISR_PENDING_EXPAND) {
        return;
    }
    for (int32_t i = 0; i < s->proposed.n; i++) {
        int32_t id = s->proposed.ids[i];
        if (!meta_replica_set_contains(out, id)) {
            ASSERT(out->n < META_REPLICAS_MAX);
            out->ids[out->n++] = id;
        }
    }
}

int64_t isr_hw_candidate(const struct isr_state *s, int64_t leader_leo,
                         int64_t now_ms)
{
    ASSERT(leader_leo >= 0);
    if (s->isr.n < s->min_isr) {
        return ISR_OFFSET_UNKNOWN;
    }
    struct meta_replica_set maximal;
    isr_maximal_isr(s, &maximal);
    /* A follower that counts but has not fetched yet (LEO unknown, -1)
     * makes the candidate -1: no candidate until it fetches. */
    int64_t hw = leader_leo;
    for (int32_t i = 0; i < s->n_followers; i++) {
        const struct isr_follower *f = &s->followers[i];
        bool counts = meta_replica_set_contains(&maximal, f->id) ||
                      (f->eligible &&
                       isr_caught_up(s, f, leader_leo, now_ms));
        if (counts) {
            hw = min64(hw, f->leo);
        }
    }
    return hw;
}

bool isr_hw_may_move(const struct isr_state *s)
{
    return s->isr.n >= s->min_isr;
}

bool isr_enough_for_append(const struct isr_state *s)
{
    return s->isr.n >= s->min_insync;
}

/* --- ISR changes --------------------------------------------------------- */

bool isr_maybe_shrink(struct isr_state *s, int64_t leader_leo,
                      int64_t now_ms, struct meta_replica_set *isr_out)
{
    ASSERT(leader_leo >= 0);
    if (s->pending != ISR_PENDING_NONE) {
        return false;
    }
    struct meta_replica_set keep = {0};
    for (int32_t i = 0; i < s->isr.n; i++) {
        int32_t id = s->isr.ids[i];
        const struct isr_follower *f = isr_follower(s, id);
        /* The leader is no follower, so it always stays; so does a member
         * we hold no fetch state for (not a replica: the controller's to
         * fix, not ours to judge). */
        if (f == NULL || isr_caught_up(s, f, leader_leo, now_ms)) {
            keep.ids[keep.n++] = id;
        }
    }
    if (keep.n == s->isr.n) {
        return false;
    }
    s->pending = ISR_PENDING_SHRINK;
    s->proposed = keep;
    *isr_out = keep;
    check_invariants(s);
    return true;
}

/* Kafka's isFollowerInSync (LEO >= HW and >= the epoch's start offset),
 * and caught up by the same rule that keeps a member in: a follower that
 * lags the leader's log end must not join on a HW that stopped moving
 * (the ISR below min_isr stalls it), or the next shrink check drops it
 * again and the ISR flaps. */
static bool may_join(const struct isr_state *s,
                     const struct isr_follower *f, int64_t hw,
                     int64_t leader_leo, int64_t now_ms)
{
    return f->eligible && !meta_replica_set_contains(&s->isr, f->id) &&
           f->leo != ISR_OFFSET_UNKNOWN && f->leo >= hw &&
           f->leo >= s->epoch_start_offset &&
           isr_caught_up(s, f, leader_leo, now_ms);
}

bool isr_maybe_expand(struct isr_state *s, int64_t hw, int64_t leader_leo,
                      int64_t now_ms, struct meta_replica_set *isr_out)
{
    ASSERT(hw >= 0);
    ASSERT(leader_leo >= 0);
    if (s->pending != ISR_PENDING_NONE) {
        return false;
    }
    struct meta_replica_set grown = {0};
    memcpy(grown.ids, s->isr.ids, (size_t)s->isr.n * sizeof grown.ids[0]);
    grown.n = s->isr.n;
    for (int32_t i = 0; i < s->n_followers; i++) {
        if (may_join(s, &s->followers[i], hw, leader_leo, now_ms)) {
            ASSERT(grown.n < META_REPLICAS_MAX);
            grown.ids[grown.n++] = s->followers[i].id;
        }
    }
    if (grown.n == s->isr.n) {
        return false;
    }
    s->pending = ISR_PENDING_EXPAND;
    s->proposed = grown;
    *isr_out = grown;
    check_invariants(s);
    return true;
}

void isr_alter_done(struct isr_state *s, bool ok,
                    const struct meta_replica_set *isr,
                    int32_t partition_epoch)
{
    if (s->pending == ISR_PENDING_NONE) {
        return;
    }
    /* A success older than what we hold is stale (Kafka ignores it); we
     * revert instead so that the next check may propose again. An equal
     * epoch is Kafka's "nothing to change" success. isr is read only on
     * success. */
    if (ok && partition_epoch >= s->partition_epoch) {
        check_set(isr);
        bool moved = partition_epoch > s->partition_epoch;
        for (int32_t i = 0; moved && i < s->n_followers; i++) {
            if (!meta_replica_set_contains(isr, s->followers[i].id)) {
                forget(&s->followers[i]);
            }
        }
        s->isr = *isr;
        s->partition_epoch = partition_epoch;
    }
    drop_pending(s);
    check_invariants(s);
}

bool isr_pending_change(const struct isr_state *s,
                        struct meta_replica_set *out)
{
    if (s->pending == ISR_PENDING_NONE) {
        return false;
    }
    *out = s->proposed;
    return true;
}

/* --- Explanations --------------------------------------------------------- */

void isr_explain(const struct isr_state *s,
                 const struct meta_replica_set *proposed, int64_t hw,
                 int64_t now_ms, char *out, size_t cap)
{
    size_t len = 0;
    if (cap == 0) {
        return;
    }
    out[0] = '\0';
    for (int32_t i = 0; i < s->replicas.n && len + 1 < cap; i++) {
        int32_t id = s->replicas.ids[i];
        bool was = meta_replica_set_contains(&s->isr, id);
        bool will = meta_replica_set_contains(proposed, id);
        const struct isr_follower *f = isr_follower(s, id);
        if (was == will || f == NULL) {
            continue;
        }
        const char *sep = len > 0 ? "; " : "";
        int n;
        if (!will && f->last_caught_up_ms == ISR__NEVER) {
            n = snprintf(out + len, cap - len, "%sreplica %" PRId32
                         " has not caught up since this leader took over",
                         sep, id);
        } else if (!will) {
            n = snprintf(out + len, cap - len, "%sreplica %" PRId32
                         " not caught up for %" PRId64 " ms > "
                         "replica.lag.time.max.ms=%" PRId64, sep, id,
                         now_ms - f->last_caught_up_ms, s->lag_max_ms);
        } else {
            n = snprintf(out + len, cap - len, "%sreplica %" PRId32
                         " caught up: end offset %" PRId64 " >= HW %" PRId64,
                         sep, id, f->leo, hw);
        }
        if (n < 0) {
            break;
        }
        len += (size_t)n < cap - len ? (size_t)n : cap - len - 1;
    }
}
