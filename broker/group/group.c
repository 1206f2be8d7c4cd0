/* Classic consumer-group coordinator (broker/group/group.h): groups, members,
 * the join/sync rebalance barrier, heartbeats and session timeouts, static
 * members, committed offsets. Pure: no I/O, no clock; the adapter answers
 * and persists through struct group_io.
 *
 * Split in three files sharing broker/group/group_internal.h: this one holds
 * the group table and its helpers, DescribeGroups/ListGroups/DeleteGroups
 * and time; broker/group/group_rebalance.c the JoinGroup/SyncGroup rebalance,
 * Heartbeat and LeaveGroup; broker/group/group_offsets.c OffsetCommit, offset
 * loading and unloading.
 *
 * Where Kafka needed interpretation:
 *   - Kafka's member ids end in a random UUID. Here the suffix has the
 *     UUID's shape but comes from config.member_id_seed (high half) and a
 *     bijective mix of a counter (low half): unique within one run,
 *     distinct across runs with distinct seeds, deterministic in tests.
 *   - Kafka breaks ties in the protocol vote by hash-map order; here the
 *     protocol whose first vote came from the earliest member (join order)
 *     wins. The leader after a leader leaves is the first member left.
 *   - A parked JoinGroup or SyncGroup that Kafka would drop (a member
 *     sends another while one is parked; a member removed while its
 *     SyncGroup is parked) is answered here, since the adapter holds the
 *     request until it is: REBALANCE_IN_PROGRESS for the superseded one,
 *     UNKNOWN_MEMBER_ID for the removed member's.
 *   - Heartbeat and SyncGroup for an unknown group get UNKNOWN_MEMBER_ID
 *     (Kafka's answer at the versions we serve); LeaveGroup for an unknown
 *     group answers UNKNOWN_MEMBER_ID per member with NONE at top level.
 *   - The GroupMetadata record is written fire-and-forget
 *     (io->persist_group): the leader's assignment takes effect at once
 *     (Kafka answers the SyncGroups once the record is appended); if the
 *     record is lost with its coordinator, the members rejoin the next
 *     one. A commit is answered only after the adapter says its offsets
 *     are written.
 *   - Commits in flight whose group was deleted or unloaded are answered
 *     with the adapter's code but not applied (Kafka skips a Dead group).
 *   - new_member_added is cleared when an initial rebalance starts (Kafka
 *     leaves a stale flag from an earlier initial rebalance). */
#include "broker/group/group_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

static const uint8_t group__empty[1];

/* --- Bytes ---------------------------------------------------------------- */

struct slice group__empty_slice(void)
{
    struct slice s = {group__empty, 0};
    return s;
}

struct slice group__nonnull(struct slice s)
{
    return s.ptr == NULL ? group__empty_slice() : s;
}

/* Same bytes; null and empty are alike (ids, names). */
bool group__bytes_eq(struct slice a, struct slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int bytes_cmp(struct slice a, struct slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n > 0 ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c != 0) {
        return c;
    }
    return (a.len > b.len) - (a.len < b.len);
}

/* An owned copy; null stays null, empty needs no memory. */
int group__owned_dup(struct slice s, struct slice *out)
{
    if (s.ptr == NULL) {
        *out = slice_null();
        return RC_OK;
    }
    if (s.len == 0) {
        *out = group__empty_slice();
        return RC_OK;
    }
    uint8_t *p = malloc(s.len);
    if (p == NULL) {
        return RC_NOMEM;
    }
    memcpy(p, s.ptr, s.len);
    out->ptr = p;
    out->len = s.len;
    return RC_OK;
}

void group__owned_free(struct slice *s)
{
    if (s->ptr != NULL && s->ptr != group__empty) {
        free((void *)(uintptr_t)s->ptr);
    }
    *s = slice_null();
}

/* Sets an inline name (at most GROUP_PROTOCOL_NAME_BYTES_MAX bytes). */
void group__name_set(struct slice *dst, uint8_t *buf, struct slice src)
{
    ASSERT(src.len <= GROUP_PROTOCOL_NAME_BYTES_MAX);
    if (src.len > 0) {
        memcpy(buf, src.ptr, src.len);
    }
    dst->ptr = buf;
    dst->len = src.len;
}

int64_t group__max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Grows *v (elements of size) to hold want; *cap is updated. */
int group__reserve(void **v, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap) {
        return RC_OK;
    }
    size_t c = *cap < 4 ? 4 : *cap;
    while (c < want) {
        c *= 2;
    }
    void *p = realloc(*v, c * size);
    if (p == NULL) {
        return RC_NOMEM;
    }
    *v = p;
    *cap = c;
    return RC_OK;
}

/* --- Protocols ------------------------------------------------------------ */

void group__protocols_free(struct group_protocol *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        group__owned_free(&p[i].name);
        group__owned_free(&p[i].metadata);
    }
    free(p);
}

int group__protocols_dup(const struct group_protocol *src, size_t n,
                         struct group_protocol **out)
{
    ASSERT(n > 0);
    struct group_protocol *p = calloc(n, sizeof *p);
    if (p == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (group__owned_dup(group__nonnull(src[i].name),
                             &p[i].name) != RC_OK ||
            group__owned_dup(group__nonnull(src[i].metadata),
                             &p[i].metadata) != RC_OK) {
            group__protocols_free(p, n);
            return RC_NOMEM;
        }
    }
    *out = p;
    return RC_OK;
}

/* Same protocols, names and metadata, in the same order (Kafka's
 * ClassicGroupMember.matches). */
bool group__protocols_match(const struct group_member *m,
                            const struct group_protocol *p, size_t n)
{
    if (m->n_protocols != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!group__bytes_eq(m->protocols[i].name, p[i].name) ||
            !group__bytes_eq(m->protocols[i].metadata, p[i].metadata)) {
            return false;
        }
    }
    return true;
}

bool group__member_supports(const struct group_member *m, struct slice name)
{
    for (size_t i = 0; i < m->n_protocols; i++) {
        if (group__bytes_eq(m->protocols[i].name, name)) {
            return true;
        }
    }
    return false;
}

/* The member's metadata for protocol name, or empty bytes. */
struct slice group__member_metadata(const struct group_member *m,
                                    struct slice name)
{
    for (size_t i = 0; i < m->n_protocols; i++) {
        if (group__bytes_eq(m->protocols[i].name, name)) {
            return m->protocols[i].metadata;
        }
    }
    return group__empty_slice();
}

/* --- Lookup --------------------------------------------------------------- */

/* The group with id, or NULL with *at where it would go. */
struct group *group__lookup(const struct groups *gs, struct slice id,
                            size_t *at)
{
    size_t lo = 0;
    size_t hi = gs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = bytes_cmp(gs->v[mid]->id, id);
        if (c == 0) {
            if (at != NULL) {
                *at = mid;
            }
            return gs->v[mid];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (at != NULL) {
        *at = lo;
    }
    return NULL;
}

struct group_member *group__member_find(const struct group *g,
                                        struct slice member_id)
{
    for (size_t i = 0; i < g->n_members; i++) {
        if (group__bytes_eq(g->members[i]->member_id, member_id)) {
            return g->members[i];
        }
    }
    return NULL;
}

struct group_member *group__static_find(const struct group *g,
                                        struct slice instance_id)
{
    if (slice_is_null(instance_id)) {
        return NULL;
    }
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        if (!slice_is_null(m->group_instance_id) &&
            group__bytes_eq(m->group_instance_id, instance_id)) {
            return m;
        }
    }
    return NULL;
}

struct group_pending_member *group__pending_find(const struct group *g,
                                                 struct slice member_id)
{
    for (size_t i = 0; i < g->n_pending; i++) {
        if (group__bytes_eq(g->pending[i].member_id, member_id)) {
            return &g->pending[i];
        }
    }
    return NULL;
}

void group__pending_remove(struct group *g, struct slice member_id)
{
    struct group_pending_member *p = group__pending_find(g, member_id);
    if (p == NULL) {
        return;
    }
    group__owned_free(&p->member_id);
    size_t i = (size_t)(p - g->pending);
    memmove(&g->pending[i], &g->pending[i + 1],
            (g->n_pending - i - 1) * sizeof g->pending[0]);
    g->n_pending--;
}

/* Offsets are ordered by topic bytes, then partition. */
static int offset_cmp(const struct group_offset *o, struct slice topic,
                      int32_t partition)
{
    int c = bytes_cmp(o->topic, topic);
    if (c != 0) {
        return c;
    }
    return (o->partition > partition) - (o->partition < partition);
}

/* Whether (topic, partition) is in g->offsets; *at is its index, or
 * where it would go. */
bool group__offset_lookup(const struct group *g, struct slice topic,
                          int32_t partition, size_t *at)
{
    size_t lo = 0;
    size_t hi = g->n_offsets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = offset_cmp(&g->offsets[mid], topic, partition);
        if (c == 0) {
            *at = mid;
            return true;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *at = lo;
    return false;
}

/* --- Invariants ----------------------------------------------------------- */

static bool member_in(const struct group *g, const struct group_member *m)
{
    for (size_t i = 0; i < g->n_members; i++) {
        if (g->members[i] == m) {
            return true;
        }
    }
    return false;
}

static void check_members(const struct group *g)
{
    size_t awaiting = 0;
    bool any_pending_sync = false;
    for (size_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        ASSERT(m->member_id.ptr != NULL);
        ASSERT(m->n_protocols >= 1);
        ASSERT(m->assignment.ptr != NULL);
        if (m->join_req != NULL) {
            ASSERT(g->state == GROUP_STATE_PREPARING_REBALANCE);
            awaiting++;
        }
        if (m->sync_req != NULL) {
            ASSERT(g->state == GROUP_STATE_COMPLETING_REBALANCE);
        }
        if (m->pending_sync) {
            ASSERT(g->state == GROUP_STATE_COMPLETING_REBALANCE ||
                   g->state == GROUP_STATE_STABLE);
            any_pending_sync = true;
        }
        ASSERT(g->wake_ms <= m->deadline_ms);
        if (g->n_members <= 64) { /* quadratic: small groups only */
            for (size_t j = i + 1; j < g->n_members; j++) {
                const struct group_member *o = g->members[j];
                ASSERT(!group__bytes_eq(m->member_id, o->member_id));
                ASSERT(slice_is_null(m->group_instance_id) ||
                       slice_is_null(o->group_instance_id) ||
                       !group__bytes_eq(m->group_instance_id,
                                 o->group_instance_id));
            }
        }
    }
    ASSERT(awaiting == g->n_awaiting_join);
    ASSERT(any_pending_sync == (g->sync_deadline_ms >= 0));
}

void group__check_group(const struct group *g)
{
    ASSERT(g->id.ptr != NULL);
    ASSERT(g->state != GROUP_STATE_DEAD);
    ASSERT(g->generation_id >= 0);
    ASSERT(g->n_members <= GROUP__MEMBERS_MAX);
    ASSERT(g->n_pending <= GROUP__MEMBERS_MAX);
    ASSERT((g->n_members == 0) == (g->leader == NULL));
    if (g->leader != NULL) {
        ASSERT(member_in(g, g->leader));
    }
    switch (g->state) {
    case GROUP_STATE_EMPTY:
        ASSERT(g->n_members == 0);
        break;
    case GROUP_STATE_PREPARING_REBALANCE:
        ASSERT(g->join_deadline_ms >= 0);
        ASSERT(g->wake_ms <= g->join_deadline_ms);
        break;
    case GROUP_STATE_COMPLETING_REBALANCE:
    case GROUP_STATE_STABLE:
        ASSERT(g->n_members >= 1);
        ASSERT(g->protocol_name.ptr != NULL);
        break;
    default:
        ASSERT_UNREACHABLE("unknown group state");
    }
    if (g->sync_deadline_ms >= 0) {
        ASSERT(g->wake_ms <= g->sync_deadline_ms);
    }
    for (size_t i = 0; i < g->n_pending; i++) {
        ASSERT(g->wake_ms <= g->pending[i].deadline_ms);
    }
    check_members(g);
    ASSERT(g->n_offsets + g->n_reserved <= g->cap_offsets);
    for (size_t i = 0; i + 1 < g->n_offsets; i++) {
        ASSERT(offset_cmp(&g->offsets[i], g->offsets[i + 1].topic,
                          g->offsets[i + 1].partition) < 0);
    }
}

/* --- Groups --------------------------------------------------------------- */

void group_config_default(struct group_config *cfg)
{
    *cfg = (struct group_config){
        .min_session_timeout_ms = GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT,
        .max_session_timeout_ms = GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT,
        .initial_rebalance_delay_ms =
            GROUP_INITIAL_REBALANCE_DELAY_MS_DEFAULT,
        .new_member_join_timeout_ms =
            GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS_DEFAULT,
        .offset_metadata_bytes_max = GROUP_OFFSET_METADATA_BYTES_MAX_DEFAULT,
        .sweep_interval_ms = GROUP_SWEEP_INTERVAL_MS_DEFAULT,
        .offsets_retention_ms = GROUP_OFFSETS_RETENTION_MS_DEFAULT,
        .member_id_seed = 0,
    };
}

void group_init(struct groups *gs, struct group_io *io,
                const struct group_config *cfg)
{
    ASSERT(cfg->min_session_timeout_ms >= 0);
    ASSERT(cfg->min_session_timeout_ms <= cfg->max_session_timeout_ms);
    ASSERT(cfg->initial_rebalance_delay_ms >= 0);
    ASSERT(cfg->new_member_join_timeout_ms >= 0);
    ASSERT(cfg->offset_metadata_bytes_max >= 0);
    *gs = (struct groups){
        .io = io,
        .config = *cfg,
        .next_sweep_ms = -1,
    };
}

void group__persist(struct groups *gs, const struct group *g, bool gone)
{
    if (gs->io->persist_group != NULL) {
        gs->io->persist_group(gs->io, g, gone);
    }
}

void group__wake_at(struct group *g, int64_t t)
{
    if (t < g->wake_ms) {
        g->wake_ms = t;
    }
}

/* Creates an Empty group at v[at]. RC_FULL at the bound. */
int group__create(struct groups *gs, struct slice id, size_t at,
                  struct group **out)
{
    if (gs->n >= GROUP__GROUPS_MAX) {
        return RC_FULL;
    }
    int rv = group__reserve((void **)&gs->v, &gs->cap, gs->n + 1,
                            sizeof gs->v[0]);
    if (rv != RC_OK) {
        return rv;
    }
    struct group *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return RC_NOMEM;
    }
    if (group__owned_dup(group__nonnull(id), &g->id) != RC_OK) {
        free(g);
        return RC_NOMEM;
    }
    g->partition = gs->io->partition_for(gs->io, g->id);
    g->state = GROUP_STATE_EMPTY;
    g->previous_state = GROUP_STATE_EMPTY;
    g->protocol_type = slice_null();
    g->protocol_name = slice_null();
    g->join_deadline_ms = -1;
    g->sync_deadline_ms = -1;
    g->empty_since_ms = -1;
    g->wake_ms = GROUP__NEVER;
    memmove(&gs->v[at + 1], &gs->v[at], (gs->n - at) * sizeof gs->v[0]);
    gs->v[at] = g;
    gs->n++;
    *out = g;
    return RC_OK;
}

/* Lookup, creating the group if needed; RC_FULL at the bound. */
int group__get_or_create(struct groups *gs, struct slice id,
                         struct group **out, bool *created)
{
    size_t at;
    *created = false;
    *out = group__lookup(gs, id, &at);
    if (*out != NULL) {
        return RC_OK;
    }
    int rv = group__create(gs, id, at, out);
    if (rv == RC_OK) {
        *created = true;
    }
    return rv;
}

void group__member_free(struct group_member *m)
{
    ASSERT(m->join_req == NULL);
    ASSERT(m->sync_req == NULL);
    group__owned_free(&m->member_id);
    group__owned_free(&m->group_instance_id);
    group__owned_free(&m->client_id);
    group__owned_free(&m->client_host);
    group__owned_free(&m->client_software);
    group__owned_free(&m->assignment);
    group__protocols_free(m->protocols, m->n_protocols);
    free(m);
}

void group__offsets_free(struct group *g)
{
    for (size_t i = 0; i < g->n_offsets; i++) {
        group__owned_free(&g->offsets[i].topic);
        group__owned_free(&g->offsets[i].metadata);
    }
    free(g->offsets);
    g->offsets = NULL;
    g->n_offsets = 0;
    g->cap_offsets = 0;
}

/* Commits in flight for g will change nothing when persisted. */
void group__commits_orphan(struct groups *gs, struct group *g)
{
    for (struct group_commit *c = gs->commits; c != NULL && g->n_commits > 0;
         c = c->next) {
        if (c->group == g) {
            c->group = NULL;
            g->n_reserved -= c->reserved;
            g->n_commits--;
        }
    }
    ASSERT(g->n_commits == 0);
    ASSERT(g->n_reserved == 0);
}

/* --- DescribeGroups / ListGroups / DeleteGroups --------------------------- */

const struct group *group_find(const struct groups *gs, struct slice id)
{
    return group__lookup(gs, id, NULL);
}

const char *group_state_name(const struct group *g)
{
    if (g == NULL) {
        return "Dead";
    }
    switch (g->state) {
    case GROUP_STATE_EMPTY:
        return "Empty";
    case GROUP_STATE_PREPARING_REBALANCE:
        return "PreparingRebalance";
    case GROUP_STATE_COMPLETING_REBALANCE:
        return "CompletingRebalance";
    case GROUP_STATE_STABLE:
        return "Stable";
    default:
        return "Dead";
    }
}

struct slice group_summary_protocol_type(const struct group *g)
{
    return group__nonnull(g->protocol_type);
}

struct slice group_summary_protocol(const struct group *g)
{
    if (g->state != GROUP_STATE_STABLE) {
        return group__empty_slice();
    }
    return g->protocol_name;
}

void group_summary_member(const struct group *g, size_t i,
                          struct group_member_summary *out)
{
    ASSERT(i < g->n_members);
    const struct group_member *m = g->members[i];
    bool stable = g->state == GROUP_STATE_STABLE;
    *out = (struct group_member_summary){
        .member_id = m->member_id,
        .group_instance_id = m->group_instance_id,
        .client_id = m->client_id,
        .client_host = m->client_host,
        .metadata = stable ? group__member_metadata(m, g->protocol_name)
                           : group__empty_slice(),
        .assignment = stable ? m->assignment : group__empty_slice(),
    };
}

int16_t group_delete(struct groups *gs, struct slice group_id)
{
    struct group *g = group__lookup(gs, group_id, NULL);
    if (g == NULL) {
        return KAFKA_ERROR_GROUP_ID_NOT_FOUND;
    }
    if (g->state != GROUP_STATE_EMPTY) {
        return KAFKA_ERROR_NON_EMPTY_GROUP;
    }
    gs->io->persist_tombstones(gs->io, g->partition, g->id, g->offsets,
                               g->n_offsets);
    group__persist(gs, g, true);
    group__drop(gs, g, KAFKA_ERROR_NOT_COORDINATOR);
    return KAFKA_ERROR_NONE;
}

/* --- Time ----------------------------------------------------------------- */

enum group__timer {
    GROUP__TIMER_NONE = 0,
    GROUP__TIMER_PENDING,
    GROUP__TIMER_MEMBER,
    GROUP__TIMER_SYNC,
    GROUP__TIMER_JOIN,
};

/* The earliest deadline due by now_ms (ties: pending ids, members, sync,
 * join), with its index for pending ids and members. */
static enum group__timer next_timer(const struct group *g, int64_t now_ms,
                                    size_t *idx)
{
    enum group__timer kind = GROUP__TIMER_NONE;
    int64_t when = now_ms + 1;
    for (size_t i = 0; i < g->n_pending; i++) {
        if (g->pending[i].deadline_ms < when) {
            when = g->pending[i].deadline_ms;
            kind = GROUP__TIMER_PENDING;
            *idx = i;
        }
    }
    for (size_t i = 0; i < g->n_members; i++) {
        if (g->members[i]->deadline_ms < when) {
            when = g->members[i]->deadline_ms;
            kind = GROUP__TIMER_MEMBER;
            *idx = i;
        }
    }
    if (g->sync_deadline_ms >= 0 && g->sync_deadline_ms < when) {
        when = g->sync_deadline_ms;
        kind = GROUP__TIMER_SYNC;
    }
    if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
        g->join_deadline_ms < when) {
        kind = GROUP__TIMER_JOIN;
    }
    return kind;
}

/* Kafka's expirePendingSync: members that owe a SyncGroup go. */
static void expire_pending_sync(struct groups *gs, struct group *g,
                                int64_t now_ms)
{
    for (size_t i = g->n_members; i-- > 0;) {
        struct group_member *m = g->members[i];
        if (m->pending_sync) {
            group__why(g, "sent no SyncGroup in time", m->member_id);
            group__member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        }
    }
    g->sync_deadline_ms = -1;
    group__prepare_rebalance(gs, g, now_ms);
}

/* The join deadline: an initial delay grows while members keep coming
 * (Kafka's tryCompleteInitialRebalanceElseSchedule), else the join phase
 * ends. */
static void expire_join(struct groups *gs, struct group *g, int64_t now_ms)
{
    if (g->previous_state == GROUP_STATE_EMPTY && g->new_member_added &&
        g->initial_remaining_ms > 0) {
        int64_t delay_ms =
            min64(gs->config.initial_rebalance_delay_ms,
                  g->initial_remaining_ms);
        g->new_member_added = false;
        g->initial_remaining_ms =
            group__max64(g->initial_remaining_ms - g->initial_delay_ms, 0);
        g->initial_delay_ms = delay_ms;
        group__set_join_deadline(g, now_ms + delay_ms);
        return;
    }
    group__complete_join(gs, g, now_ms);
}

/* Runs one due deadline of g; false if none is due. */
static bool run_one_timer(struct groups *gs, struct group *g, int64_t now_ms)
{
    size_t i = 0;
    switch (next_timer(g, now_ms, &i)) {
    case GROUP__TIMER_NONE:
        return false;
    case GROUP__TIMER_PENDING:
        group__pending_remove(g, g->pending[i].member_id);
        if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
            group__all_joined(g)) {
            group__complete_join(gs, g, now_ms);
        }
        return true;
    case GROUP__TIMER_MEMBER: {
        struct group_member *m = g->members[i];
        if (group__member_kept_alive(m)) {
            m->deadline_ms = GROUP__NEVER; /* re-armed when answered */
        } else {
            group__why(g, "timed out (no heartbeat within its session "
                       "timeout)", m->member_id);
            group__remove_member_and_update(gs, g, m, now_ms);
        }
        return true;
    }
    case GROUP__TIMER_SYNC:
        expire_pending_sync(gs, g, now_ms);
        return true;
    case GROUP__TIMER_JOIN:
        expire_join(gs, g, now_ms);
        return true;
    default:
        ASSERT_UNREACHABLE("unknown timer");
        return false;
    }
}

static int64_t group_next_wake(const struct group *g)
{
    int64_t t = GROUP__NEVER;
    for (size_t i = 0; i < g->n_pending; i++) {
        t = min64(t, g->pending[i].deadline_ms);
    }
    for (size_t i = 0; i < g->n_members; i++) {
        t = min64(t, g->members[i]->deadline_ms);
    }
    if (g->sync_deadline_ms >= 0) {
        t = min64(t, g->sync_deadline_ms);
    }
    if (g->state == GROUP_STATE_PREPARING_REBALANCE) {
        t = min64(t, g->join_deadline_ms);
    }
    return t;
}

static void group_run_timers(struct groups *gs, struct group *g,
                             int64_t now_ms)
{
    /* Each step removes a member or id, or moves a deadline; a zero
     * rebalance timeout can re-arm one at now, so the rest waits for the
     * next tick. */
    size_t budget = g->n_members + g->n_pending + 4;
    while (budget-- > 0 && run_one_timer(gs, g, now_ms)) {
    }
    g->wake_ms = group_next_wake(g);
    group__check_group(g);
}

/* Whether offset o of Empty group g has expired at now_ms (see group.h:
 * a group that became Empty here counts from then, all offsets at once;
 * others count from each offset's commit). */
static bool offset_expired(const struct groups *gs, const struct group *g,
                           const struct group_offset *o, int64_t now_ms)
{
    int64_t since = g->empty_since_ms >= 0 ? g->empty_since_ms
                                           : o->commit_timestamp_ms;
    return now_ms - since >= gs->config.offsets_retention_ms;
}

/* Expires g's offsets that are due, with their tombstones and an event. */
static void expire_offsets(struct groups *gs, struct group *g,
                           int64_t now_ms)
{
    if (gs->config.offsets_retention_ms <= 0 ||
        g->state != GROUP_STATE_EMPTY || g->n_offsets == 0 ||
        g->n_commits > 0) {
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < g->n_offsets; i++) {
        n += offset_expired(gs, g, &g->offsets[i], now_ms);
    }
    struct group_offset *gone = n > 0 ? calloc(n, sizeof *gone) : NULL;
    if (gone == NULL) {
        return; /* none due, or no memory: the next sweep tries again */
    }
    size_t k = 0;
    size_t kept = 0;
    for (size_t i = 0; i < g->n_offsets; i++) {
        if (offset_expired(gs, g, &g->offsets[i], now_ms)) {
            gone[k++] = g->offsets[i];
        } else {
            g->offsets[kept++] = g->offsets[i];
        }
    }
    g->n_offsets = kept;
    gs->io->persist_tombstones(gs->io, g->partition, g->id, gone, n);
    if (gs->io->event != NULL) {
        char text[256];
        int gl = g->id.len > 64 ? 64 : (int)g->id.len;
        snprintf(text, sizeof text, "group %.*s: %zu committed offset%s "
                 "expired (offsets.retention.minutes=%" PRId64 " passed "
                 "since %s)", gl, (const char *)g->id.ptr, n,
                 n == 1 ? "" : "s",
                 gs->config.offsets_retention_ms / 60000,
                 g->empty_since_ms >= 0 ? "the group became empty"
                                        : "their commit");
        gs->io->event(gs->io, text);
    }
    for (size_t i = 0; i < n; i++) {
        group__owned_free(&gone[i].topic);
        group__owned_free(&gone[i].metadata);
    }
    free(gone);
    group__check_group(g);
}

/* Expires offsets that are due, then forgets Empty groups that hold
 * nothing (Kafka's cleanupGroupMetadata). */
static void sweep(struct groups *gs, int64_t now_ms)
{
    for (size_t i = gs->n; i-- > 0;) {
        expire_offsets(gs, gs->v[i], now_ms);
        if (group__holds_nothing(gs->v[i])) {
            if (gs->v[i]->generation_id > 0) {
                group__persist(gs, gs->v[i], true); /* its record goes */
            }
            group__destroy_empty(gs, gs->v[i]);
        }
    }
}

void group_tick(struct groups *gs, int64_t now_ms)
{
    for (size_t i = 0; i < gs->n; i++) {
        struct group *g = gs->v[i];
        if (g->wake_ms <= now_ms) {
            group_run_timers(gs, g, now_ms);
        }
    }
    if (gs->next_sweep_ms < 0) {
        gs->next_sweep_ms = now_ms + gs->config.sweep_interval_ms;
    } else if (now_ms >= gs->next_sweep_ms) {
        sweep(gs, now_ms);
        gs->next_sweep_ms = now_ms + gs->config.sweep_interval_ms;
    }
}
