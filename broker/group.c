/* Classic consumer-group coordinator (broker/group.h): groups, members,
 * the join/sync rebalance barrier, heartbeats and session timeouts, static
 * members, committed offsets. Pure: no I/O, no clock; the adapter answers
 * and persists through struct group_io.
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
 *   - Group metadata is not persisted (no GroupMetadata record): the
 *     leader's assignment takes effect at once, and a coordinator move
 *     makes members rejoin. Only offsets are written, and a commit is
 *     answered only after the adapter says they are.
 *   - Commits in flight whose group was deleted or unloaded are answered
 *     with the adapter's code but not applied (Kafka skips a Dead group).
 *   - new_member_added is cleared when an initial rebalance starts (Kafka
 *     leaves a stale flag from an earlier initial rebalance). */
#include "broker/group.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka_error.h"
#include "common/rc.h"

/* Groups one broker coordinates at once. Kafka has no bound; a broker
 * leading many __consumer_offsets partitions of a large cluster holds tens
 * of thousands. Beyond: the JoinGroup or standalone OffsetCommit that
 * would create a group gets COORDINATOR_NOT_AVAILABLE (retriable). */
#define GROUP__GROUPS_MAX 100000u

/* Members of one group, and separately member ids pending after
 * MEMBER_ID_REQUIRED. Kafka's group.max.size is unbounded by default;
 * consumer groups rarely pass a few hundred members. Beyond:
 * GROUP_MAX_SIZE_REACHED, Kafka's answer for group.max.size. */
#define GROUP__MEMBERS_MAX 4096u

/* Protocols one member offers (clients offer one to three). Beyond:
 * INVALID_REQUEST. */
#define GROUP__PROTOCOLS_MAX 64u

/* Bytes of one member's protocol names and metadata (a subscription to
 * thousands of topics stays far below), and of one member's assignment.
 * Kafka's own limit is its group record (about 1 MiB). Beyond:
 * INVALID_REQUEST for a JoinGroup; for an assignment, UNKNOWN_SERVER_ERROR
 * to every parked SyncGroup and a new rebalance, as Kafka does when the
 * group record is too large to append. */
#define GROUP__MEMBER_BYTES_MAX (1024u * 1024)

/* Committed offsets one group keeps (one per partition it consumes).
 * Beyond: UNKNOWN_SERVER_ERROR for the partitions that would add a key
 * (Kafka has no such bound, hence no code for it); RC_FULL on load. */
#define GROUP__OFFSETS_MAX 262144u

/* Marks an OffsetCommit entry waiting for its write; not a Kafka code. */
#define GROUP__ERROR_PENDING INT16_MIN

#define GROUP__NEVER INT64_MAX /* a deadline that is not set */

_Static_assert(GROUP__MEMBERS_MAX <= INT32_MAX, "member counts fit an int");
_Static_assert(GROUP_PROTOCOL_NAME_BYTES_MAX <= GROUP__MEMBER_BYTES_MAX,
               "a protocol name fits a member's bytes");

/* A commit being persisted (the token of io->persist_offsets). */
struct group_commit {
    struct group_commit *prev;
    struct group_commit *next;
    struct group *group; /* NULL once the group is gone */
    void *req;
    int16_t *errors;               /* one per request entry */
    size_t n_errors;
    struct group_offset *entries;  /* owned copies, to apply */
    size_t n_entries;
    size_t reserved;               /* slots reserved in group->offsets */
};

static const uint8_t group__empty[1];

/* --- Bytes ---------------------------------------------------------------- */

static struct slice empty_slice(void)
{
    struct slice s = {group__empty, 0};
    return s;
}

static struct slice nonnull(struct slice s)
{
    return s.ptr == NULL ? empty_slice() : s;
}

/* Same bytes; null and empty are alike (ids, names). */
static bool bytes_eq(struct slice a, struct slice b)
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
static int owned_dup(struct slice s, struct slice *out)
{
    if (s.ptr == NULL) {
        *out = slice_null();
        return RC_OK;
    }
    if (s.len == 0) {
        *out = empty_slice();
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

static void owned_free(struct slice *s)
{
    if (s->ptr != NULL && s->ptr != group__empty) {
        free((void *)(uintptr_t)s->ptr);
    }
    *s = slice_null();
}

/* Sets an inline name (at most GROUP_PROTOCOL_NAME_BYTES_MAX bytes). */
static void name_set(struct slice *dst, uint8_t *buf, struct slice src)
{
    ASSERT(src.len <= GROUP_PROTOCOL_NAME_BYTES_MAX);
    if (src.len > 0) {
        memcpy(buf, src.ptr, src.len);
    }
    dst->ptr = buf;
    dst->len = src.len;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Grows *v (elements of size) to hold want; *cap is updated. */
static int reserve(void **v, size_t *cap, size_t want, size_t size)
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

static void protocols_free(struct group_protocol *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        owned_free(&p[i].name);
        owned_free(&p[i].metadata);
    }
    free(p);
}

static int protocols_dup(const struct group_protocol *src, size_t n,
                         struct group_protocol **out)
{
    ASSERT(n > 0);
    struct group_protocol *p = calloc(n, sizeof *p);
    if (p == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (owned_dup(nonnull(src[i].name), &p[i].name) != RC_OK ||
            owned_dup(nonnull(src[i].metadata), &p[i].metadata) != RC_OK) {
            protocols_free(p, n);
            return RC_NOMEM;
        }
    }
    *out = p;
    return RC_OK;
}

/* Same protocols, names and metadata, in the same order (Kafka's
 * ClassicGroupMember.matches). */
static bool protocols_match(const struct group_member *m,
                            const struct group_protocol *p, size_t n)
{
    if (m->n_protocols != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!bytes_eq(m->protocols[i].name, p[i].name) ||
            !bytes_eq(m->protocols[i].metadata, p[i].metadata)) {
            return false;
        }
    }
    return true;
}

static bool member_supports(const struct group_member *m, struct slice name)
{
    for (size_t i = 0; i < m->n_protocols; i++) {
        if (bytes_eq(m->protocols[i].name, name)) {
            return true;
        }
    }
    return false;
}

/* The member's metadata for protocol name, or empty bytes. */
static struct slice member_metadata(const struct group_member *m,
                                    struct slice name)
{
    for (size_t i = 0; i < m->n_protocols; i++) {
        if (bytes_eq(m->protocols[i].name, name)) {
            return m->protocols[i].metadata;
        }
    }
    return empty_slice();
}

/* --- Lookup --------------------------------------------------------------- */

/* The group with id, or NULL with *at where it would go. */
static struct group *group_lookup(const struct groups *gs, struct slice id,
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

static struct group_member *member_find(const struct group *g,
                                        struct slice member_id)
{
    for (size_t i = 0; i < g->n_members; i++) {
        if (bytes_eq(g->members[i]->member_id, member_id)) {
            return g->members[i];
        }
    }
    return NULL;
}

static struct group_member *static_find(const struct group *g,
                                        struct slice instance_id)
{
    if (slice_is_null(instance_id)) {
        return NULL;
    }
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        if (!slice_is_null(m->group_instance_id) &&
            bytes_eq(m->group_instance_id, instance_id)) {
            return m;
        }
    }
    return NULL;
}

static struct group_pending_member *pending_find(const struct group *g,
                                                 struct slice member_id)
{
    for (size_t i = 0; i < g->n_pending; i++) {
        if (bytes_eq(g->pending[i].member_id, member_id)) {
            return &g->pending[i];
        }
    }
    return NULL;
}

static void pending_remove(struct group *g, struct slice member_id)
{
    struct group_pending_member *p = pending_find(g, member_id);
    if (p == NULL) {
        return;
    }
    owned_free(&p->member_id);
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
static bool offset_lookup(const struct group *g, struct slice topic,
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
                ASSERT(!bytes_eq(m->member_id, o->member_id));
                ASSERT(slice_is_null(m->group_instance_id) ||
                       slice_is_null(o->group_instance_id) ||
                       !bytes_eq(m->group_instance_id,
                                 o->group_instance_id));
            }
        }
    }
    ASSERT(awaiting == g->n_awaiting_join);
    ASSERT(any_pending_sync == (g->sync_deadline_ms >= 0));
}

static void check_group(const struct group *g)
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
        ASSERT(!"unknown group state");
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

static void group_wake_at(struct group *g, int64_t t)
{
    if (t < g->wake_ms) {
        g->wake_ms = t;
    }
}

/* Creates an Empty group at v[at]. RC_FULL at the bound. */
static int group_create(struct groups *gs, struct slice id, size_t at,
                        struct group **out)
{
    if (gs->n >= GROUP__GROUPS_MAX) {
        return RC_FULL;
    }
    int rv = reserve((void **)&gs->v, &gs->cap, gs->n + 1, sizeof gs->v[0]);
    if (rv != RC_OK) {
        return rv;
    }
    struct group *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return RC_NOMEM;
    }
    if (owned_dup(nonnull(id), &g->id) != RC_OK) {
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
    g->wake_ms = GROUP__NEVER;
    memmove(&gs->v[at + 1], &gs->v[at], (gs->n - at) * sizeof gs->v[0]);
    gs->v[at] = g;
    gs->n++;
    *out = g;
    return RC_OK;
}

/* Lookup, creating the group if needed; RC_FULL at the bound. */
static int group_get_or_create(struct groups *gs, struct slice id,
                               struct group **out, bool *created)
{
    size_t at;
    *created = false;
    *out = group_lookup(gs, id, &at);
    if (*out != NULL) {
        return RC_OK;
    }
    int rv = group_create(gs, id, at, out);
    if (rv == RC_OK) {
        *created = true;
    }
    return rv;
}

static void member_free(struct group_member *m)
{
    ASSERT(m->join_req == NULL);
    ASSERT(m->sync_req == NULL);
    owned_free(&m->member_id);
    owned_free(&m->group_instance_id);
    owned_free(&m->client_id);
    owned_free(&m->client_host);
    owned_free(&m->assignment);
    protocols_free(m->protocols, m->n_protocols);
    free(m);
}

static void offsets_free(struct group *g)
{
    for (size_t i = 0; i < g->n_offsets; i++) {
        owned_free(&g->offsets[i].topic);
        owned_free(&g->offsets[i].metadata);
    }
    free(g->offsets);
    g->offsets = NULL;
    g->n_offsets = 0;
    g->cap_offsets = 0;
}

/* Commits in flight for g will change nothing when persisted. */
static void commits_orphan(struct groups *gs, struct group *g)
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

/* --- Answers -------------------------------------------------------------- */

static void join_answer_error(struct groups *gs, void *req, int16_t error,
                              struct slice member_id)
{
    struct group_join_result res = {
        .error_code = error,
        .generation_id = -1,
        .protocol_type = slice_null(),
        .protocol_name = slice_null(),
        .leader = empty_slice(),
        .member_id = nonnull(member_id),
        .members = NULL,
        .n_members = 0,
    };
    gs->io->join_done(gs->io, req, &res);
}

/* Answers m's parked JoinGroup with an error. */
static void member_join_fail(struct groups *gs, struct group *g,
                             struct group_member *m, int16_t error,
                             struct slice member_id)
{
    if (m->join_req == NULL) {
        return;
    }
    void *req = m->join_req;
    m->join_req = NULL;
    ASSERT(g->n_awaiting_join > 0);
    g->n_awaiting_join--;
    join_answer_error(gs, req, error, member_id);
}

/* Answers m's parked JoinGroup with the current generation; the leader's
 * answer lists every member when with_members. */
static void member_join_ok(struct groups *gs, struct group *g,
                           struct group_member *m, bool with_members,
                           struct slice leader)
{
    ASSERT(m->join_req != NULL);
    void *req = m->join_req;
    m->join_req = NULL;
    ASSERT(g->n_awaiting_join > 0);
    g->n_awaiting_join--;
    struct group_join_result res = {
        .error_code = KAFKA_ERROR_NONE,
        .generation_id = g->generation_id,
        .protocol_type = g->protocol_type,
        .protocol_name = g->protocol_name,
        .leader = leader,
        .member_id = m->member_id,
        .members = NULL,
        .n_members = 0,
    };
    if (with_members) {
        ASSERT(gs->cap_scratch >= g->n_members);
        for (size_t i = 0; i < g->n_members; i++) {
            const struct group_member *o = g->members[i];
            gs->scratch[i] = (struct group_join_member){
                .member_id = o->member_id,
                .group_instance_id = o->group_instance_id,
                .metadata = member_metadata(o, g->protocol_name),
            };
        }
        res.members = gs->scratch;
        res.n_members = g->n_members;
    }
    gs->io->join_done(gs->io, req, &res);
}

static void sync_answer_error(struct groups *gs, void *req, int16_t error)
{
    struct group_sync_result res = {
        .error_code = error,
        .protocol_type = slice_null(),
        .protocol_name = slice_null(),
        .assignment = empty_slice(),
    };
    gs->io->sync_done(gs->io, req, &res);
}

static void sync_answer_member(struct groups *gs, const struct group *g,
                               void *req, const struct group_member *m)
{
    struct group_sync_result res = {
        .error_code = KAFKA_ERROR_NONE,
        .protocol_type = g->protocol_type,
        .protocol_name = g->protocol_name,
        .assignment = m->assignment,
    };
    gs->io->sync_done(gs->io, req, &res);
}

static void member_sync_fail(struct groups *gs, struct group_member *m,
                             int16_t error)
{
    if (m->sync_req == NULL) {
        return;
    }
    void *req = m->sync_req;
    m->sync_req = NULL;
    sync_answer_error(gs, req, error);
}

/* --- Members -------------------------------------------------------------- */

static void member_reschedule(struct group *g, struct group_member *m,
                              int64_t now_ms, int64_t timeout_ms)
{
    m->deadline_ms = now_ms + timeout_ms;
    group_wake_at(g, m->deadline_ms);
}

/* Kafka's hasSatisfiedHeartbeat, past the deadline: a member with a parked
 * request is alive, unless its first JoinGroup waited too long. */
static bool member_kept_alive(const struct group_member *m)
{
    if (m->is_new) {
        return false;
    }
    return m->join_req != NULL || m->sync_req != NULL;
}

static int64_t group_rebalance_timeout(const struct group *g)
{
    int64_t t = 0;
    for (size_t i = 0; i < g->n_members; i++) {
        t = max64(t, g->members[i]->rebalance_timeout_ms);
    }
    return t;
}

static void sync_deadline_update(struct group *g)
{
    for (size_t i = 0; i < g->n_members; i++) {
        if (g->members[i]->pending_sync) {
            return;
        }
    }
    g->sync_deadline_ms = -1;
}

static void pending_sync_clear(struct group *g)
{
    for (size_t i = 0; i < g->n_members; i++) {
        g->members[i]->pending_sync = false;
    }
    g->sync_deadline_ms = -1;
}

/* Kafka's group.remove(): m's parked requests must be answered. */
static void member_remove(struct group *g, struct group_member *m)
{
    size_t i = 0;
    while (g->members[i] != m) {
        i++;
        ASSERT(i < g->n_members);
    }
    memmove(&g->members[i], &g->members[i + 1],
            (g->n_members - i - 1) * sizeof g->members[0]);
    g->n_members--;
    if (g->leader == m) {
        g->leader = g->n_members > 0 ? g->members[0] : NULL;
    }
    bool owed_sync = m->pending_sync;
    member_free(m);
    if (owed_sync) {
        sync_deadline_update(g);
    }
}

/* Answers m's parked requests with error (join: member id "") and removes
 * it. */
static void member_evict(struct groups *gs, struct group *g,
                         struct group_member *m, int16_t error)
{
    member_join_fail(gs, g, m, error, empty_slice());
    member_sync_fail(gs, m, error);
    member_remove(g, m);
}

/* Kafka's validateMember. */
static int16_t member_validate(const struct group *g, struct slice member_id,
                               struct slice instance_id)
{
    if (!slice_is_null(instance_id)) {
        const struct group_member *s = static_find(g, instance_id);
        if (s == NULL) {
            return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        }
        if (!bytes_eq(s->member_id, member_id)) {
            return KAFKA_ERROR_FENCED_INSTANCE_ID;
        }
    }
    if (member_find(g, member_id) == NULL) {
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    }
    return KAFKA_ERROR_NONE;
}

/* Kafka's supportsProtocols: an Empty group takes any non-empty type and
 * protocol list; otherwise the type must match and one of the protocols
 * must be supported by every member. */
static bool group_supports(const struct group *g, struct slice type,
                           const struct group_protocol *p, size_t n)
{
    if (g->state == GROUP_STATE_EMPTY) {
        return type.len > 0 && n > 0;
    }
    if (slice_is_null(g->protocol_type) || !bytes_eq(g->protocol_type, type)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < g->n_members; j++) {
            count += member_supports(g->members[j], p[i].name) ? 1 : 0;
        }
        if (count == g->n_members) {
            return true;
        }
    }
    return false;
}

/* Kafka's selectProtocol: candidates are the protocols every member
 * supports (all among the first member's); each member votes for its
 * first candidate; most votes wins, ties to the earliest first vote. */
static struct slice group_select_protocol(const struct group *g)
{
    ASSERT(g->n_members > 0);
    const struct group_member *first = g->members[0];
    size_t votes[GROUP__PROTOCOLS_MAX] = {0};
    size_t first_vote[GROUP__PROTOCOLS_MAX];
    bool candidate[GROUP__PROTOCOLS_MAX];
    ASSERT(first->n_protocols <= GROUP__PROTOCOLS_MAX);
    for (size_t c = 0; c < first->n_protocols; c++) {
        candidate[c] = true;
        first_vote[c] = SIZE_MAX;
        for (size_t j = 1; j < g->n_members && candidate[c]; j++) {
            candidate[c] = member_supports(g->members[j],
                                           first->protocols[c].name);
        }
    }
    for (size_t j = 0; j < g->n_members; j++) {
        const struct group_member *m = g->members[j];
        bool voted = false;
        for (size_t k = 0; k < m->n_protocols && !voted; k++) {
            for (size_t c = 0; c < first->n_protocols; c++) {
                if (candidate[c] &&
                    bytes_eq(first->protocols[c].name, m->protocols[k].name)) {
                    votes[c]++;
                    if (first_vote[c] == SIZE_MAX) {
                        first_vote[c] = j;
                    }
                    voted = true;
                    break;
                }
            }
        }
        ASSERT(voted); /* joins keep a common protocol (group_supports) */
    }
    size_t best = SIZE_MAX;
    for (size_t c = 0; c < first->n_protocols; c++) {
        if (votes[c] == 0) {
            continue;
        }
        if (best == SIZE_MAX || votes[c] > votes[best] ||
            (votes[c] == votes[best] && first_vote[c] < first_vote[best])) {
            best = c;
        }
    }
    ASSERT(best != SIZE_MAX);
    return first->protocols[best].name;
}

/* --- State machine -------------------------------------------------------- */

static void transition(struct group *g, enum group_state to)
{
    switch (to) {
    case GROUP_STATE_EMPTY:
        ASSERT(g->state == GROUP_STATE_PREPARING_REBALANCE);
        break;
    case GROUP_STATE_PREPARING_REBALANCE:
        ASSERT(g->state == GROUP_STATE_EMPTY ||
               g->state == GROUP_STATE_COMPLETING_REBALANCE ||
               g->state == GROUP_STATE_STABLE);
        break;
    case GROUP_STATE_COMPLETING_REBALANCE:
        ASSERT(g->state == GROUP_STATE_PREPARING_REBALANCE);
        break;
    case GROUP_STATE_STABLE:
        ASSERT(g->state == GROUP_STATE_COMPLETING_REBALANCE);
        break;
    default:
        ASSERT(!"no transition to this state");
    }
    g->previous_state = g->state;
    g->state = to;
}

static bool group_can_rebalance(const struct group *g)
{
    return g->state == GROUP_STATE_EMPTY ||
           g->state == GROUP_STATE_COMPLETING_REBALANCE ||
           g->state == GROUP_STATE_STABLE;
}

static bool group_all_joined(const struct group *g)
{
    return g->n_members == g->n_awaiting_join && g->n_pending == 0;
}

static void set_join_deadline(struct group *g, int64_t t)
{
    g->join_deadline_ms = t;
    group_wake_at(g, t);
}

/* Answers every parked SyncGroup (with each member's assignment when
 * error is NONE) and restarts those members' sessions. */
static void propagate_assignment(struct groups *gs, struct group *g,
                                 int16_t error, int64_t now_ms)
{
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        if (m->sync_req == NULL) {
            continue;
        }
        void *req = m->sync_req;
        m->sync_req = NULL;
        if (error == KAFKA_ERROR_NONE) {
            sync_answer_member(gs, g, req, m);
        } else {
            sync_answer_error(gs, req, error);
        }
        member_reschedule(g, m, now_ms, m->session_timeout_ms);
    }
}

static void reset_and_propagate_error(struct groups *gs, struct group *g,
                                      int16_t error, int64_t now_ms)
{
    ASSERT(g->state == GROUP_STATE_COMPLETING_REBALANCE);
    for (size_t i = 0; i < g->n_members; i++) {
        owned_free(&g->members[i]->assignment);
        g->members[i]->assignment = empty_slice();
    }
    propagate_assignment(gs, g, error, now_ms);
}

/* Kafka's maybeElectNewJoinedLeader. */
static bool elect_joined_leader(struct group *g)
{
    if (g->leader == NULL) {
        return false;
    }
    if (g->leader->join_req != NULL) {
        return true;
    }
    for (size_t i = 0; i < g->n_members; i++) {
        if (g->members[i]->join_req != NULL) {
            g->leader = g->members[i];
            return true;
        }
    }
    return false;
}

/* Kafka's completeClassicGroupJoin. */
static void complete_join(struct groups *gs, struct group *g, int64_t now_ms)
{
    ASSERT(g->state == GROUP_STATE_PREPARING_REBALANCE);
    g->join_deadline_ms = -1;
    for (size_t i = g->n_members; i-- > 0;) {
        struct group_member *m = g->members[i];
        if (m->join_req == NULL && slice_is_null(m->group_instance_id)) {
            member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        }
    }
    if (!elect_joined_leader(g) && g->n_members > 0) {
        /* Nobody rejoined: wait for sessions to remove the rest. */
        set_join_deadline(g, now_ms + group_rebalance_timeout(g));
        return;
    }
    g->generation_id++;
    pending_sync_clear(g);
    if (g->n_members == 0) {
        g->protocol_name = slice_null();
        transition(g, GROUP_STATE_EMPTY);
        return;
    }
    name_set(&g->protocol_name, g->protocol_name_buf,
             group_select_protocol(g));
    transition(g, GROUP_STATE_COMPLETING_REBALANCE);
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        if (m->join_req != NULL) {
            member_join_ok(gs, g, m, m == g->leader, g->leader->member_id);
        }
        member_reschedule(g, m, now_ms, m->session_timeout_ms);
        m->is_new = false;
        m->pending_sync = true;
    }
    g->sync_deadline_ms = now_ms + group_rebalance_timeout(g);
    group_wake_at(g, g->sync_deadline_ms);
}

/* Kafka's maybeCompleteJoinPhase: never early in an initial rebalance. */
static void maybe_complete_join_phase(struct groups *gs, struct group *g,
                                      int64_t now_ms)
{
    if (g->state == GROUP_STATE_PREPARING_REBALANCE && group_all_joined(g) &&
        g->previous_state != GROUP_STATE_EMPTY) {
        complete_join(gs, g, now_ms);
    }
}

/* Kafka's prepareRebalance. */
static void prepare_rebalance(struct groups *gs, struct group *g,
                              int64_t now_ms)
{
    if (g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        reset_and_propagate_error(gs, g, KAFKA_ERROR_REBALANCE_IN_PROGRESS,
                                  now_ms);
    }
    pending_sync_clear(g);
    bool initial = g->state == GROUP_STATE_EMPTY;
    int64_t rebalance_ms = group_rebalance_timeout(g);
    transition(g, GROUP_STATE_PREPARING_REBALANCE);
    if (initial) {
        int64_t delay_ms = gs->config.initial_rebalance_delay_ms;
        g->new_member_added = false;
        g->initial_delay_ms = delay_ms;
        g->initial_remaining_ms = max64(rebalance_ms - delay_ms, 0);
        set_join_deadline(g, now_ms + delay_ms);
        return;
    }
    if (group_all_joined(g)) {
        complete_join(gs, g, now_ms);
    } else {
        set_join_deadline(g, now_ms + rebalance_ms);
    }
}

static void maybe_prepare_rebalance_or_complete_join(struct groups *gs,
                                                     struct group *g,
                                                     int64_t now_ms)
{
    if (group_can_rebalance(g)) {
        prepare_rebalance(gs, g, now_ms);
    } else {
        maybe_complete_join_phase(gs, g, now_ms);
    }
}

/* A member left or failed (Kafka's removeMemberAndUpdateClassicGroup). */
static void remove_member_and_update(struct groups *gs, struct group *g,
                                     struct group_member *m, int64_t now_ms)
{
    member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    if (g->state == GROUP_STATE_STABLE ||
        g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
    } else if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
               group_all_joined(g)) {
        complete_join(gs, g, now_ms);
    }
}

/* --- JoinGroup ------------------------------------------------------------ */

/* The JoinGroup's protocols within bounds (INVALID_REQUEST otherwise). */
static bool join_within_bounds(const struct group_join_request *r)
{
    if (r->protocol_type.len > GROUP_PROTOCOL_NAME_BYTES_MAX ||
        r->n_protocols > GROUP__PROTOCOLS_MAX) {
        return false;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < r->n_protocols; i++) {
        if (r->protocols[i].name.len > GROUP_PROTOCOL_NAME_BYTES_MAX) {
            return false;
        }
        bytes += r->protocols[i].name.len + r->protocols[i].metadata.len;
        if (bytes > GROUP__MEMBER_BYTES_MAX) {
            return false;
        }
    }
    return true;
}

/* splitmix64's finalizer: a bijection on 64 bits. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* prefix + "-" + a UUID-shaped suffix, owned. */
static int member_id_generate(struct groups *gs, struct slice prefix,
                              struct slice *out)
{
    uint64_t seed = gs->config.member_id_seed;
    uint64_t hi = mix64(seed);
    uint64_t lo = mix64(gs->member_id_counter ^ mix64(~seed));
    gs->member_id_counter++;
    char suffix[40];
    int n = snprintf(suffix, sizeof suffix,
                     "-%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64
                     "-%04" PRIx64 "-%012" PRIx64,
                     hi >> 32, (hi >> 16) & 0xffffu, hi & 0xffffu, lo >> 48,
                     lo & 0xffffffffffffu);
    ASSERT(n == 37);
    size_t len = prefix.len + (size_t)n;
    uint8_t *p = malloc(len);
    if (p == NULL) {
        return RC_NOMEM;
    }
    if (prefix.len > 0) {
        memcpy(p, prefix.ptr, prefix.len);
    }
    memcpy(p + prefix.len, suffix, (size_t)n);
    out->ptr = p;
    out->len = len;
    return RC_OK;
}

/* A member from a JoinGroup, with id (taken over on success). */
static int member_new(const struct group_join_request *r, struct slice id,
                      struct group_member **out)
{
    struct group_member *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return RC_NOMEM;
    }
    m->assignment = empty_slice();
    if (owned_dup(r->group_instance_id, &m->group_instance_id) != RC_OK ||
        owned_dup(nonnull(r->client_id), &m->client_id) != RC_OK ||
        owned_dup(nonnull(r->client_host), &m->client_host) != RC_OK ||
        protocols_dup(r->protocols, r->n_protocols, &m->protocols) != RC_OK) {
        member_free(m);
        return RC_NOMEM;
    }
    m->n_protocols = r->n_protocols;
    m->member_id = id;
    m->session_timeout_ms = r->session_timeout_ms;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    m->deadline_ms = GROUP__NEVER;
    *out = m;
    return RC_OK;
}

/* Kafka's addMemberThenRebalanceOrCompleteJoin; takes id over. */
static int add_member_and_rebalance(struct groups *gs, struct group *g,
                                    void *req,
                                    const struct group_join_request *r,
                                    struct slice id, int64_t now_ms)
{
    if (g->n_members >= GROUP__MEMBERS_MAX) {
        owned_free(&id);
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          empty_slice());
        return RC_OK;
    }
    struct group_member *m;
    int rv = member_new(r, id, &m);
    if (rv != RC_OK) {
        owned_free(&id);
        return rv;
    }
    rv = reserve((void **)&g->members, &g->cap_members, g->n_members + 1,
                 sizeof g->members[0]);
    if (rv == RC_OK) {
        rv = reserve((void **)&gs->scratch, &gs->cap_scratch,
                     g->n_members + 1, sizeof gs->scratch[0]);
    }
    if (rv != RC_OK) {
        member_free(m);
        return rv;
    }
    m->is_new = true;
    if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
        g->previous_state == GROUP_STATE_EMPTY) {
        g->new_member_added = true;
    }
    if (g->n_members == 0) {
        name_set(&g->protocol_type, g->protocol_type_buf, r->protocol_type);
    }
    ASSERT(static_find(g, m->group_instance_id) == NULL);
    if (g->leader == NULL) {
        g->leader = m;
    }
    g->members[g->n_members++] = m;
    m->join_req = req;
    g->n_awaiting_join++;
    pending_remove(g, m->member_id);
    member_reschedule(g, m, now_ms, gs->config.new_member_join_timeout_ms);
    maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
    return RC_OK;
}

/* Kafka's updateMemberThenRebalanceOrCompleteJoin. */
static int update_member_and_rebalance(struct groups *gs, struct group *g,
                                       struct group_member *m, void *req,
                                       const struct group_join_request *r,
                                       int64_t now_ms)
{
    struct group_protocol *p;
    int rv = protocols_dup(r->protocols, r->n_protocols, &p);
    if (rv != RC_OK) {
        return rv;
    }
    member_join_fail(gs, g, m, KAFKA_ERROR_REBALANCE_IN_PROGRESS,
                     m->member_id); /* superseded */
    protocols_free(m->protocols, m->n_protocols);
    m->protocols = p;
    m->n_protocols = r->n_protocols;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    m->session_timeout_ms = r->session_timeout_ms;
    m->join_req = req;
    g->n_awaiting_join++;
    maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
    return RC_OK;
}

/* Kafka's updateStaticMemberThenRebalanceOrCompleteJoin: the instance's
 * member m takes new_id (taken over). */
static int static_replace(struct groups *gs, struct group *g,
                          struct group_member *m, void *req,
                          const struct group_join_request *r,
                          struct slice new_id, int64_t now_ms)
{
    struct group_protocol *p;
    int rv = protocols_dup(r->protocols, r->n_protocols, &p);
    if (rv != RC_OK) {
        owned_free(&new_id);
        return rv;
    }
    ASSERT(g->state != GROUP_STATE_EMPTY);
    struct slice old_id = m->member_id;
    struct slice old_leader = g->leader->member_id; /* m's if it leads */
    member_join_fail(gs, g, m, KAFKA_ERROR_FENCED_INSTANCE_ID, old_id);
    member_sync_fail(gs, m, KAFKA_ERROR_FENCED_INSTANCE_ID);
    m->member_id = new_id;
    member_reschedule(g, m, now_ms, m->session_timeout_ms);
    protocols_free(m->protocols, m->n_protocols);
    m->protocols = p;
    m->n_protocols = r->n_protocols;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    m->session_timeout_ms = r->session_timeout_ms;
    m->join_req = req;
    g->n_awaiting_join++;
    switch (g->state) {
    case GROUP_STATE_STABLE:
        if (bytes_eq(group_select_protocol(g), g->protocol_name)) {
            /* Keeps its assignment; the old leader id is reported, so a
             * static leader coming back stays a follower this time. */
            member_join_ok(gs, g, m, false, old_leader);
        } else {
            maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
        }
        break;
    case GROUP_STATE_COMPLETING_REBALANCE:
        /* The leader may have assigned to the old id: rebalance. */
        prepare_rebalance(gs, g, now_ms);
        break;
    default:
        maybe_complete_join_phase(gs, g, now_ms);
        break;
    }
    owned_free(&old_id);
    return RC_OK;
}

/* Kafka's classicGroupJoinNewMember (empty member id). */
static int join_new_member(struct groups *gs, struct group *g, void *req,
                           const struct group_join_request *r, int64_t now_ms)
{
    if (!group_supports(g, r->protocol_type, r->protocols, r->n_protocols)) {
        join_answer_error(gs, req, KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL,
                          empty_slice());
        return RC_OK;
    }
    bool is_static = !slice_is_null(r->group_instance_id);
    if (!is_static && r->require_known_member_id &&
        g->n_pending >= GROUP__MEMBERS_MAX) {
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          empty_slice());
        return RC_OK;
    }
    struct slice prefix =
        is_static ? r->group_instance_id : nonnull(r->client_id);
    struct slice id;
    int rv = member_id_generate(gs, prefix, &id);
    if (rv != RC_OK) {
        return rv;
    }
    if (is_static) {
        struct group_member *m = static_find(g, r->group_instance_id);
        if (m != NULL) {
            return static_replace(gs, g, m, req, r, id, now_ms);
        }
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    if (!r->require_known_member_id) {
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    rv = reserve((void **)&g->pending, &g->cap_pending, g->n_pending + 1,
                 sizeof g->pending[0]);
    if (rv != RC_OK) {
        owned_free(&id);
        return rv;
    }
    struct group_pending_member *p = &g->pending[g->n_pending++];
    p->member_id = id;
    p->deadline_ms = now_ms + r->session_timeout_ms;
    group_wake_at(g, p->deadline_ms);
    join_answer_error(gs, req, KAFKA_ERROR_MEMBER_ID_REQUIRED, id);
    return RC_OK;
}

/* Answers a known member's JoinGroup with the current generation. */
static void join_answer_current(struct groups *gs, struct group *g,
                                struct group_member *m, void *req)
{
    m->join_req = req;
    g->n_awaiting_join++;
    member_join_ok(gs, g, m, m == g->leader, g->leader->member_id);
}

/* Kafka's classicGroupJoinExistingMember. */
static int join_existing_member(struct groups *gs, struct group *g, void *req,
                                const struct group_join_request *r,
                                int64_t now_ms)
{
    struct slice mid = r->member_id;
    if (!group_supports(g, r->protocol_type, r->protocols, r->n_protocols)) {
        join_answer_error(gs, req, KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL,
                          mid);
        return RC_OK;
    }
    if (pending_find(g, mid) != NULL) {
        if (!slice_is_null(r->group_instance_id)) {
            /* Kafka throws IllegalStateException: a pending id is never
             * a static member's. */
            join_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_SERVER_ERROR, mid);
            return RC_OK;
        }
        struct slice id;
        int rv = owned_dup(mid, &id);
        if (rv != RC_OK) {
            return rv;
        }
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    int16_t error = member_validate(g, mid, r->group_instance_id);
    if (error != KAFKA_ERROR_NONE) {
        join_answer_error(gs, req, error, mid);
        return RC_OK;
    }
    struct group_member *m = member_find(g, mid);
    bool same = protocols_match(m, r->protocols, r->n_protocols);
    switch (g->state) {
    case GROUP_STATE_PREPARING_REBALANCE:
        return update_member_and_rebalance(gs, g, m, req, r, now_ms);
    case GROUP_STATE_COMPLETING_REBALANCE:
        if (same) {
            join_answer_current(gs, g, m, req);
            return RC_OK;
        }
        return update_member_and_rebalance(gs, g, m, req, r, now_ms);
    case GROUP_STATE_STABLE:
        if (m == g->leader || !same) {
            return update_member_and_rebalance(gs, g, m, req, r, now_ms);
        }
        join_answer_current(gs, g, m, req);
        return RC_OK;
    default:
        join_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_MEMBER_ID, mid);
        return RC_OK;
    }
}

/* Kafka's acceptJoiningMember, with GROUP__MEMBERS_MAX as group.max.size. */
static bool accept_joining_member(const struct group *g,
                                  struct slice member_id)
{
    const struct group_member *m = member_find(g, member_id);
    switch (g->state) {
    case GROUP_STATE_PREPARING_REBALANCE:
        return (m != NULL && m->join_req != NULL) ||
               g->n_awaiting_join < GROUP__MEMBERS_MAX;
    case GROUP_STATE_COMPLETING_REBALANCE:
    case GROUP_STATE_STABLE:
        return m != NULL || g->n_members < GROUP__MEMBERS_MAX;
    default:
        return true;
    }
}

/* Forgets a group that holds nothing (created for a request that then
 * failed, or emptied by a tombstone). */
static void group_destroy_empty(struct groups *gs, struct group *g);

int group_join(struct groups *gs, void *req, const struct group_join_request *r,
               int64_t now_ms)
{
    struct slice mid = nonnull(r->member_id);
    if (r->group_id.len == 0) {
        join_answer_error(gs, req, KAFKA_ERROR_INVALID_GROUP_ID, mid);
        return RC_OK;
    }
    if (r->session_timeout_ms < gs->config.min_session_timeout_ms ||
        r->session_timeout_ms > gs->config.max_session_timeout_ms) {
        join_answer_error(gs, req, KAFKA_ERROR_INVALID_SESSION_TIMEOUT, mid);
        return RC_OK;
    }
    if (!join_within_bounds(r)) {
        join_answer_error(gs, req, KAFKA_ERROR_INVALID_REQUEST, mid);
        return RC_OK;
    }
    bool unknown = mid.len == 0;
    size_t at;
    struct group *g = group_lookup(gs, r->group_id, &at);
    bool created = false;
    if (g == NULL) {
        if (!unknown) {
            join_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_MEMBER_ID, mid);
            return RC_OK;
        }
        int rv = group_create(gs, r->group_id, at, &g);
        if (rv == RC_FULL) {
            join_answer_error(gs, req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE,
                              mid);
            return RC_OK;
        }
        if (rv != RC_OK) {
            return rv;
        }
        created = true;
    }
    struct group_join_request rr = *r;
    rr.member_id = mid;
    int rv = RC_OK;
    if (!accept_joining_member(g, mid)) {
        struct group_member *m = member_find(g, mid);
        pending_remove(g, mid);
        if (m != NULL) {
            remove_member_and_update(gs, g, m, now_ms);
        }
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          empty_slice());
    } else if (unknown) {
        rv = join_new_member(gs, g, req, &rr, now_ms);
    } else {
        rv = join_existing_member(gs, g, req, &rr, now_ms);
    }
    if (rv != RC_OK && created) {
        group_destroy_empty(gs, g);
        return rv;
    }
    check_group(g);
    return rv;
}

/* --- SyncGroup ------------------------------------------------------------ */

/* The leader's assignment for m: the last entry naming it, or empty. */
static struct slice assignment_for(const struct group_sync_request *r,
                                   const struct group_member *m)
{
    struct slice a = empty_slice();
    for (size_t i = 0; i < r->n_assignments; i++) {
        if (bytes_eq(r->assignments[i].member_id, m->member_id)) {
            a = nonnull(r->assignments[i].assignment);
        }
    }
    return a;
}

/* Copies of the leader's assignments, one per member in member order;
 * *oversized if one is beyond GROUP__MEMBER_BYTES_MAX (then *out NULL). */
static int assignments_copy(const struct group *g,
                            const struct group_sync_request *r,
                            struct slice **out, bool *oversized)
{
    *out = NULL;
    *oversized = false;
    for (size_t i = 0; i < g->n_members; i++) {
        if (assignment_for(r, g->members[i]).len > GROUP__MEMBER_BYTES_MAX) {
            *oversized = true;
            return RC_OK;
        }
    }
    struct slice *a = calloc(g->n_members, sizeof *a);
    if (a == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < g->n_members; i++) {
        if (owned_dup(assignment_for(r, g->members[i]), &a[i]) != RC_OK) {
            for (size_t j = 0; j < i; j++) {
                owned_free(&a[j]);
            }
            free(a);
            return RC_NOMEM;
        }
    }
    *out = a;
    return RC_OK;
}

static void pending_sync_done(struct group *g, struct group_member *m)
{
    if (m->pending_sync) {
        m->pending_sync = false;
        sync_deadline_update(g);
    }
}

static bool protocol_inconsistent(struct slice asked, struct slice ours)
{
    return !slice_is_null(asked) && !slice_is_null(ours) &&
           !bytes_eq(asked, ours);
}

static int16_t sync_validate(const struct group *g,
                             const struct group_sync_request *r)
{
    int16_t error = member_validate(g, r->member_id, r->group_instance_id);
    if (error != KAFKA_ERROR_NONE) {
        return error;
    }
    if (r->generation_id != g->generation_id) {
        return KAFKA_ERROR_ILLEGAL_GENERATION;
    }
    if (protocol_inconsistent(r->protocol_type, g->protocol_type) ||
        protocol_inconsistent(r->protocol_name, g->protocol_name)) {
        return KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL;
    }
    return KAFKA_ERROR_NONE;
}

/* CompletingRebalance: park; the leader's SyncGroup completes them all. */
static int sync_completing(struct groups *gs, struct group *g, void *req,
                           const struct group_sync_request *r, int64_t now_ms)
{
    struct group_member *m = member_find(g, r->member_id);
    bool leader = m == g->leader;
    struct slice *a = NULL;
    bool oversized = false;
    if (leader) {
        int rv = assignments_copy(g, r, &a, &oversized);
        if (rv != RC_OK) {
            return rv;
        }
    }
    member_sync_fail(gs, m, KAFKA_ERROR_REBALANCE_IN_PROGRESS); /* superseded */
    m->sync_req = req;
    pending_sync_done(g, m);
    if (!leader) {
        return RC_OK;
    }
    if (oversized) {
        reset_and_propagate_error(gs, g, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                                  now_ms);
        maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
        return RC_OK;
    }
    for (size_t i = 0; i < g->n_members; i++) {
        owned_free(&g->members[i]->assignment);
        g->members[i]->assignment = a[i];
    }
    free(a);
    propagate_assignment(gs, g, KAFKA_ERROR_NONE, now_ms);
    transition(g, GROUP_STATE_STABLE);
    return RC_OK;
}

int group_sync(struct groups *gs, void *req, const struct group_sync_request *r,
               int64_t now_ms)
{
    if (r->group_id.len == 0) {
        sync_answer_error(gs, req, KAFKA_ERROR_INVALID_GROUP_ID);
        return RC_OK;
    }
    struct group *g = group_lookup(gs, r->group_id, NULL);
    if (g == NULL) {
        sync_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        return RC_OK;
    }
    int16_t error = sync_validate(g, r);
    int rv = RC_OK;
    if (error != KAFKA_ERROR_NONE) {
        sync_answer_error(gs, req, error);
    } else if (g->state == GROUP_STATE_EMPTY) {
        sync_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    } else if (g->state == GROUP_STATE_PREPARING_REBALANCE) {
        sync_answer_error(gs, req, KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    } else if (g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        rv = sync_completing(gs, g, req, r, now_ms);
    } else {
        struct group_member *m = member_find(g, r->member_id);
        pending_sync_done(g, m);
        sync_answer_member(gs, g, req, m);
        member_reschedule(g, m, now_ms, m->session_timeout_ms);
    }
    check_group(g);
    return rv;
}

/* --- Heartbeat / LeaveGroup ----------------------------------------------- */

int16_t group_heartbeat(struct groups *gs, struct slice group_id,
                        struct slice member_id, struct slice group_instance_id,
                        int32_t generation_id, int64_t now_ms)
{
    if (group_id.len == 0) {
        return KAFKA_ERROR_INVALID_GROUP_ID;
    }
    struct group *g = group_lookup(gs, group_id, NULL);
    if (g == NULL) {
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    }
    int16_t error = member_validate(g, member_id, group_instance_id);
    if (error != KAFKA_ERROR_NONE) {
        return error;
    }
    if (generation_id != g->generation_id) {
        return KAFKA_ERROR_ILLEGAL_GENERATION;
    }
    struct group_member *m = member_find(g, member_id);
    member_reschedule(g, m, now_ms, m->session_timeout_ms);
    check_group(g);
    if (g->state == GROUP_STATE_PREPARING_REBALANCE) {
        return KAFKA_ERROR_REBALANCE_IN_PROGRESS;
    }
    return KAFKA_ERROR_NONE;
}

/* One LeaveGroup entry (Kafka's classicGroupLeave loop body); true if
 * someone left. */
static bool leave_one(struct groups *gs, struct group *g,
                      struct group_leave_member *lm)
{
    if (lm->member_id.len == 0) {
        struct group_member *m = static_find(g, lm->group_instance_id);
        if (m == NULL) {
            lm->error_code = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
            return false;
        }
        member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        lm->error_code = KAFKA_ERROR_NONE;
        return true;
    }
    if (pending_find(g, lm->member_id) != NULL) {
        pending_remove(g, lm->member_id);
        lm->error_code = KAFKA_ERROR_NONE;
        return true;
    }
    lm->error_code =
        member_validate(g, lm->member_id, lm->group_instance_id);
    if (lm->error_code != KAFKA_ERROR_NONE) {
        return false;
    }
    member_evict(gs, g, member_find(g, lm->member_id),
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    return true;
}

int16_t group_leave(struct groups *gs, struct slice group_id,
                    struct group_leave_member *members, size_t n,
                    int64_t now_ms)
{
    if (group_id.len == 0) {
        for (size_t i = 0; i < n; i++) {
            members[i].error_code = KAFKA_ERROR_INVALID_GROUP_ID;
        }
        return KAFKA_ERROR_INVALID_GROUP_ID;
    }
    struct group *g = group_lookup(gs, group_id, NULL);
    if (g == NULL) {
        for (size_t i = 0; i < n; i++) {
            members[i].error_code = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        }
        return KAFKA_ERROR_NONE;
    }
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        any |= leave_one(gs, g, &members[i]);
    }
    if (any) {
        if (g->state == GROUP_STATE_STABLE ||
            g->state == GROUP_STATE_COMPLETING_REBALANCE) {
            maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
        } else if (g->state == GROUP_STATE_PREPARING_REBALANCE) {
            maybe_complete_join_phase(gs, g, now_ms);
        }
    }
    check_group(g);
    return KAFKA_ERROR_NONE;
}

/* --- Offsets -------------------------------------------------------------- */

/* Kafka's ClassicGroup.validateOffsetCommit; *member is the committing
 * member when one was checked. */
static int16_t commit_validate(const struct group *g,
                               const struct group_commit_request *r,
                               struct group_member **member)
{
    *member = NULL;
    if (r->generation_id < 0 && g->state == GROUP_STATE_EMPTY) {
        return KAFKA_ERROR_NONE; /* standalone, or an admin tool */
    }
    if (r->generation_id >= 0 || r->member_id.len > 0 ||
        !slice_is_null(r->group_instance_id)) {
        int16_t error =
            member_validate(g, r->member_id, r->group_instance_id);
        if (error != KAFKA_ERROR_NONE) {
            return error;
        }
        if (r->generation_id != g->generation_id) {
            return KAFKA_ERROR_ILLEGAL_GENERATION;
        }
        *member = member_find(g, r->member_id);
    } else if (g->state != GROUP_STATE_EMPTY) {
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID; /* members only */
    }
    if (g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        return KAFKA_ERROR_REBALANCE_IN_PROGRESS;
    }
    return KAFKA_ERROR_NONE;
}

static void commit_free(struct group_commit *c)
{
    for (size_t i = 0; i < c->n_entries; i++) {
        owned_free(&c->entries[i].topic);
        owned_free(&c->entries[i].metadata);
    }
    free(c->entries);
    free(c->errors);
    free(c);
}

/* Puts o into g->offsets (the latest wins), taking its strings over.
 * Capacity must be there. */
static void offset_apply(struct group *g, struct group_offset *o)
{
    size_t at;
    if (offset_lookup(g, o->topic, o->partition, &at)) {
        struct group_offset *cur = &g->offsets[at];
        owned_free(&cur->metadata);
        owned_free(&o->topic);
        cur->metadata = o->metadata;
        cur->offset = o->offset;
        cur->leader_epoch = o->leader_epoch;
        cur->commit_timestamp_ms = o->commit_timestamp_ms;
    } else {
        ASSERT(g->n_offsets < g->cap_offsets);
        memmove(&g->offsets[at + 1], &g->offsets[at],
                (g->n_offsets - at) * sizeof g->offsets[0]);
        g->offsets[at] = *o;
        g->n_offsets++;
    }
    o->topic = slice_null();
    o->metadata = slice_null();
}

/* Answers a commit and frees it. */
static void commit_finish(struct groups *gs, struct group_commit *c,
                          int16_t error)
{
    struct group *g = c->group;
    if (g != NULL) {
        ASSERT(g->n_reserved >= c->reserved);
        g->n_reserved -= c->reserved;
        g->n_commits--;
        if (error == KAFKA_ERROR_NONE) {
            for (size_t i = 0; i < c->n_entries; i++) {
                offset_apply(g, &c->entries[i]);
            }
        }
    }
    for (size_t i = 0; i < c->n_errors; i++) {
        if (c->errors[i] == GROUP__ERROR_PENDING) {
            c->errors[i] = error;
        }
    }
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else if (gs->commits == c) {
        gs->commits = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    gs->io->commit_done(gs->io, c->req, c->errors, c->n_errors);
    commit_free(c);
    if (g != NULL) {
        check_group(g);
    }
}

/* Per-entry checks; counts entries to write and new keys among them. */
static void commit_check_entries(const struct groups *gs, const struct group *g,
                                 const struct group_commit_request *r,
                                 int16_t *errors, size_t *n_valid,
                                 size_t *n_new)
{
    *n_valid = 0;
    *n_new = 0;
    size_t room = GROUP__OFFSETS_MAX - g->n_offsets - g->n_reserved;
    if (g->n_offsets + g->n_reserved > GROUP__OFFSETS_MAX) {
        room = 0;
    }
    for (size_t i = 0; i < r->n_partitions; i++) {
        const struct group_commit_partition *p = &r->partitions[i];
        size_t at;
        if (p->metadata.len >
            (size_t)gs->config.offset_metadata_bytes_max) {
            errors[i] = KAFKA_ERROR_OFFSET_METADATA_TOO_LARGE;
        } else if (offset_lookup(g, p->topic, p->partition, &at)) {
            errors[i] = GROUP__ERROR_PENDING;
            (*n_valid)++;
        } else if (*n_new < room) {
            errors[i] = GROUP__ERROR_PENDING;
            (*n_valid)++;
            (*n_new)++;
        } else {
            errors[i] = KAFKA_ERROR_UNKNOWN_SERVER_ERROR; /* table full */
        }
    }
}

/* The commit to persist: copies of the entries marked pending. */
static int commit_build(const struct group_commit_request *r, int16_t *errors,
                        size_t n_valid, int64_t now_ms,
                        struct group_commit **out)
{
    struct group_commit *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return RC_NOMEM;
    }
    c->errors = errors;
    c->n_errors = r->n_partitions;
    c->entries = calloc(n_valid, sizeof c->entries[0]);
    if (c->entries == NULL) {
        c->errors = NULL;
        commit_free(c);
        return RC_NOMEM;
    }
    for (size_t i = 0; i < r->n_partitions; i++) {
        if (errors[i] != GROUP__ERROR_PENDING) {
            continue;
        }
        const struct group_commit_partition *p = &r->partitions[i];
        struct group_offset *o = &c->entries[c->n_entries++];
        o->partition = p->partition;
        o->offset = p->offset;
        o->leader_epoch = p->leader_epoch;
        o->commit_timestamp_ms = now_ms;
        if (owned_dup(nonnull(p->topic), &o->topic) != RC_OK ||
            owned_dup(nonnull(p->metadata), &o->metadata) != RC_OK) {
            c->errors = NULL;
            commit_free(c);
            return RC_NOMEM;
        }
    }
    *out = c;
    return RC_OK;
}

static void commit_answer_now(struct groups *gs, void *req, int16_t *errors,
                              size_t n, int16_t error)
{
    for (size_t i = 0; i < n; i++) {
        if (error != KAFKA_ERROR_NONE || errors[i] == GROUP__ERROR_PENDING) {
            errors[i] = error;
        }
    }
    gs->io->commit_done(gs->io, req, errors, n);
    free(errors);
}

/* Reserves the new keys, tracks the commit and asks for the write. */
static void commit_start(struct groups *gs, struct group *g,
                         struct group_commit *c, void *req, size_t n_new)
{
    c->group = g;
    c->req = req;
    c->reserved = n_new;
    g->n_reserved += n_new;
    g->n_commits++;
    c->next = gs->commits;
    if (gs->commits != NULL) {
        gs->commits->prev = c;
    }
    gs->commits = c;
    int16_t error = gs->io->persist_offsets(gs->io, c, g->partition, g->id,
                                            c->entries, c->n_entries);
    if (error != KAFKA_ERROR_NONE) {
        commit_finish(gs, c, error);
    } else {
        check_group(g);
    }
}

int group_offset_commit(struct groups *gs, void *req,
                        const struct group_commit_request *r, int64_t now_ms)
{
    size_t n = r->n_partitions;
    int16_t *errors = malloc((n > 0 ? n : 1) * sizeof *errors);
    if (errors == NULL) {
        return RC_NOMEM;
    }
    size_t at;
    struct group *g = group_lookup(gs, r->group_id, &at);
    bool created = false;
    if (g == NULL) {
        if (r->generation_id >= 0) {
            commit_answer_now(gs, req, errors, n,
                              KAFKA_ERROR_ILLEGAL_GENERATION);
            return RC_OK;
        }
        int rv = group_create(gs, r->group_id, at, &g);
        if (rv == RC_FULL) {
            commit_answer_now(gs, req, errors, n,
                              KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
            return RC_OK;
        }
        if (rv != RC_OK) {
            free(errors);
            return rv;
        }
        created = true;
    }
    struct group_member *member;
    int16_t error = commit_validate(g, r, &member);
    if (error != KAFKA_ERROR_NONE) {
        commit_answer_now(gs, req, errors, n, error);
        check_group(g);
        return RC_OK;
    }
    size_t n_valid;
    size_t n_new;
    commit_check_entries(gs, g, r, errors, &n_valid, &n_new);
    struct group_commit *c = NULL;
    int rv = RC_OK;
    if (n_valid > 0) {
        rv = reserve((void **)&g->offsets, &g->cap_offsets,
                     g->n_offsets + g->n_reserved + n_new,
                     sizeof g->offsets[0]);
        if (rv == RC_OK) {
            rv = commit_build(r, errors, n_valid, now_ms, &c);
        }
    }
    if (rv != RC_OK) {
        free(errors);
        if (created) {
            group_destroy_empty(gs, g);
        }
        return rv;
    }
    if (member != NULL && (g->state == GROUP_STATE_STABLE ||
                           g->state == GROUP_STATE_PREPARING_REBALANCE)) {
        member_reschedule(g, member, now_ms, member->session_timeout_ms);
    }
    if (c == NULL) {
        commit_answer_now(gs, req, errors, n, KAFKA_ERROR_NONE);
        check_group(g);
        return RC_OK;
    }
    commit_start(gs, g, c, req, n_new);
    return RC_OK;
}

void group_offsets_persisted(struct groups *gs, struct group_commit *token,
                             int16_t error)
{
    ASSERT(error != GROUP__ERROR_PENDING);
    commit_finish(gs, token, error);
}

const struct group_offset *group_offset_get(const struct groups *gs,
                                            struct slice group_id,
                                            struct slice topic,
                                            int32_t partition)
{
    const struct group *g = group_lookup(gs, group_id, NULL);
    size_t at;
    if (g == NULL || !offset_lookup(g, topic, partition, &at)) {
        return NULL;
    }
    return &g->offsets[at];
}

/* --- Loading and unloading ------------------------------------------------ */

int group_load_offset(struct groups *gs, struct slice group_id,
                      struct slice topic, int32_t partition, int64_t offset,
                      int32_t leader_epoch, struct slice metadata,
                      int64_t commit_timestamp_ms)
{
    struct group *g;
    bool created;
    int rv = group_get_or_create(gs, group_id, &g, &created);
    if (rv != RC_OK) {
        return rv;
    }
    struct group_offset o = {
        .partition = partition,
        .offset = offset,
        .leader_epoch = leader_epoch,
        .commit_timestamp_ms = commit_timestamp_ms,
    };
    size_t at;
    bool exists = offset_lookup(g, topic, partition, &at);
    if (!exists && g->n_offsets + g->n_reserved >= GROUP__OFFSETS_MAX) {
        rv = RC_FULL;
    }
    if (rv == RC_OK && !exists) {
        rv = reserve((void **)&g->offsets, &g->cap_offsets,
                     g->n_offsets + g->n_reserved + 1, sizeof g->offsets[0]);
    }
    if (rv == RC_OK) {
        rv = owned_dup(nonnull(metadata), &o.metadata);
    }
    if (rv == RC_OK && owned_dup(nonnull(topic), &o.topic) != RC_OK) {
        owned_free(&o.metadata);
        rv = RC_NOMEM;
    }
    if (rv != RC_OK) {
        if (created) {
            group_destroy_empty(gs, g);
        }
        return rv;
    }
    offset_apply(g, &o);
    check_group(g);
    return RC_OK;
}

static bool group_holds_nothing(const struct group *g)
{
    return g->state == GROUP_STATE_EMPTY && g->n_members == 0 &&
           g->n_pending == 0 && g->n_offsets == 0 && g->n_commits == 0;
}

void group_load_tombstone(struct groups *gs, struct slice group_id,
                          struct slice topic, int32_t partition)
{
    struct group *g = group_lookup(gs, group_id, NULL);
    size_t at;
    if (g == NULL || !offset_lookup(g, topic, partition, &at)) {
        return;
    }
    owned_free(&g->offsets[at].topic);
    owned_free(&g->offsets[at].metadata);
    memmove(&g->offsets[at], &g->offsets[at + 1],
            (g->n_offsets - at - 1) * sizeof g->offsets[0]);
    g->n_offsets--;
    if (group_holds_nothing(g)) {
        group_destroy_empty(gs, g);
        return;
    }
    check_group(g);
}

/* Answers g's parked requests with error, orphans its commits, frees it
 * and takes it out of gs->v. */
static void group_drop(struct groups *gs, struct group *g, int16_t error)
{
    size_t at;
    struct group *found = group_lookup(gs, g->id, &at);
    ASSERT(found == g);
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        member_join_fail(gs, g, m, error, m->member_id);
        member_sync_fail(gs, m, error);
    }
    commits_orphan(gs, g);
    for (size_t i = 0; i < g->n_members; i++) {
        member_free(g->members[i]);
    }
    free(g->members);
    for (size_t i = 0; i < g->n_pending; i++) {
        owned_free(&g->pending[i].member_id);
    }
    free(g->pending);
    offsets_free(g);
    owned_free(&g->id);
    free(g);
    memmove(&gs->v[at], &gs->v[at + 1], (gs->n - at - 1) * sizeof gs->v[0]);
    gs->n--;
}

static void group_destroy_empty(struct groups *gs, struct group *g)
{
    ASSERT(g->n_members == 0);
    group_drop(gs, g, KAFKA_ERROR_NOT_COORDINATOR);
}

void group_unload_partition(struct groups *gs, int32_t partition)
{
    for (size_t i = gs->n; i-- > 0;) {
        if (gs->v[i]->partition == partition) {
            group_drop(gs, gs->v[i], KAFKA_ERROR_NOT_COORDINATOR);
        }
    }
}

void group_unload_all(struct groups *gs)
{
    while (gs->n > 0) {
        group_drop(gs, gs->v[gs->n - 1], KAFKA_ERROR_NOT_COORDINATOR);
    }
}

void group_free(struct groups *gs)
{
    group_unload_all(gs);
    while (gs->commits != NULL) {
        commit_finish(gs, gs->commits, KAFKA_ERROR_NOT_COORDINATOR);
    }
    free(gs->v);
    free(gs->scratch);
    *gs = (struct groups){0};
}

/* --- DescribeGroups / ListGroups / DeleteGroups --------------------------- */

const struct group *group_find(const struct groups *gs, struct slice id)
{
    return group_lookup(gs, id, NULL);
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
    return nonnull(g->protocol_type);
}

struct slice group_summary_protocol(const struct group *g)
{
    if (g->state != GROUP_STATE_STABLE) {
        return empty_slice();
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
        .metadata = stable ? member_metadata(m, g->protocol_name)
                           : empty_slice(),
        .assignment = stable ? m->assignment : empty_slice(),
    };
}

int16_t group_delete(struct groups *gs, struct slice group_id)
{
    struct group *g = group_lookup(gs, group_id, NULL);
    if (g == NULL) {
        return KAFKA_ERROR_GROUP_ID_NOT_FOUND;
    }
    if (g->state != GROUP_STATE_EMPTY) {
        return KAFKA_ERROR_NON_EMPTY_GROUP;
    }
    gs->io->persist_tombstones(gs->io, g->partition, g->id, g->offsets,
                               g->n_offsets);
    group_drop(gs, g, KAFKA_ERROR_NOT_COORDINATOR);
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
            member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        }
    }
    g->sync_deadline_ms = -1;
    prepare_rebalance(gs, g, now_ms);
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
            max64(g->initial_remaining_ms - g->initial_delay_ms, 0);
        g->initial_delay_ms = delay_ms;
        set_join_deadline(g, now_ms + delay_ms);
        return;
    }
    complete_join(gs, g, now_ms);
}

/* Runs one due deadline of g; false if none is due. */
static bool run_one_timer(struct groups *gs, struct group *g, int64_t now_ms)
{
    size_t i = 0;
    switch (next_timer(g, now_ms, &i)) {
    case GROUP__TIMER_NONE:
        return false;
    case GROUP__TIMER_PENDING:
        pending_remove(g, g->pending[i].member_id);
        if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
            group_all_joined(g)) {
            complete_join(gs, g, now_ms);
        }
        return true;
    case GROUP__TIMER_MEMBER: {
        struct group_member *m = g->members[i];
        if (member_kept_alive(m)) {
            m->deadline_ms = GROUP__NEVER; /* re-armed when answered */
        } else {
            remove_member_and_update(gs, g, m, now_ms);
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
        ASSERT(!"unknown timer");
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
    check_group(g);
}

/* Forgets Empty groups that hold nothing (Kafka's cleanupGroupMetadata). */
static void sweep(struct groups *gs)
{
    for (size_t i = gs->n; i-- > 0;) {
        if (group_holds_nothing(gs->v[i])) {
            group_destroy_empty(gs, gs->v[i]);
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
        gs->next_sweep_ms = now_ms + GROUP_SWEEP_INTERVAL_MS;
    } else if (now_ms >= gs->next_sweep_ms) {
        sweep(gs);
        gs->next_sweep_ms = now_ms + GROUP_SWEEP_INTERVAL_MS;
    }
}
