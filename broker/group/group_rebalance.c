/* Classic consumer-group coordinator, rebalancing (broker/group/group.h): the
 * answers to parked JoinGroup and SyncGroup requests, member bookkeeping, the
 * group state machine, JoinGroup, SyncGroup, Heartbeat and LeaveGroup. Shares
 * broker/group/group_internal.h with broker/group/group.c and
 * broker/group/group_offsets.c; interpretations of Kafka are listed in
 * broker/group/group.c. Pure: no I/O, no clock. Loop thread only. */
#include "broker/group/group_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

/* --- Answers -------------------------------------------------------------- */

static void join_answer_error(struct groups *gs, void *req, int16_t error,
                              struct slice member_id)
{
    struct group_join_result res = {
        .error_code = error,
        .generation_id = -1,
        .protocol_type = slice_null(),
        .protocol_name = slice_null(),
        .leader = group__empty_slice(),
        .member_id = group__nonnull(member_id),
        .members = NULL,
        .n_members = 0,
    };
    gs->io->join_done(gs->io, req, &res);
}

/* Answers m's parked JoinGroup with an error. */
void group__member_join_fail(struct groups *gs, struct group *g,
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
                .metadata = group__member_metadata(o, g->protocol_name),
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
        .assignment = group__empty_slice(),
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

void group__member_sync_fail(struct groups *gs, struct group_member *m,
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

void group__member_reschedule(struct group *g, struct group_member *m,
                              int64_t now_ms, int64_t timeout_ms)
{
    m->deadline_ms = now_ms + timeout_ms;
    group__wake_at(g, m->deadline_ms);
}

/* Kafka's hasSatisfiedHeartbeat, past the deadline: a member with a parked
 * request is alive, unless its first JoinGroup waited too long. */
bool group__member_kept_alive(const struct group_member *m)
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
        t = group__max64(t, g->members[i]->rebalance_timeout_ms);
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
    group__member_free(m);
    if (owed_sync) {
        sync_deadline_update(g);
    }
}

/* Answers m's parked requests with error (join: member id "") and removes
 * it. */
void group__member_evict(struct groups *gs, struct group *g,
                         struct group_member *m, int16_t error)
{
    group__member_join_fail(gs, g, m, error, group__empty_slice());
    group__member_sync_fail(gs, m, error);
    member_remove(g, m);
}

/* Kafka's validateMember. */
int16_t group__member_validate(const struct group *g, struct slice member_id,
                               struct slice instance_id)
{
    if (!slice_is_null(instance_id)) {
        const struct group_member *s = group__static_find(g, instance_id);
        if (s == NULL) {
            return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        }
        if (!group__bytes_eq(s->member_id, member_id)) {
            return KAFKA_ERROR_FENCED_INSTANCE_ID;
        }
    }
    if (group__member_find(g, member_id) == NULL) {
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
    if (slice_is_null(g->protocol_type) ||
        !group__bytes_eq(g->protocol_type, type)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < g->n_members; j++) {
            count += group__member_supports(g->members[j], p[i].name) ? 1 : 0;
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
            candidate[c] = group__member_supports(g->members[j],
                                                  first->protocols[c].name);
        }
    }
    for (size_t j = 0; j < g->n_members; j++) {
        const struct group_member *m = g->members[j];
        bool voted = false;
        for (size_t k = 0; k < m->n_protocols && !voted; k++) {
            for (size_t c = 0; c < first->n_protocols; c++) {
                if (candidate[c] &&
                    group__bytes_eq(first->protocols[c].name,
                                    m->protocols[k].name)) {
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

/* "c-1-2f0c..." cut to GROUP__ID_SHOWN bytes, for event lines. */
#define GROUP__ID_SHOWN 48

void group__why(struct group *g, const char *what, struct slice member)
{
    int n = member.len > GROUP__ID_SHOWN ? GROUP__ID_SHOWN : (int)member.len;
    snprintf(g->why, sizeof g->why, "member %.*s%s %s", n,
             member.ptr != NULL ? (const char *)member.ptr : "",
             (size_t)n < member.len ? "..." : "", what);
}

/* A client's reason cut to GROUP__REASON_SHOWN bytes: with a cut member
 * id it still fits GROUP_WHY_BYTES. */
#define GROUP__REASON_SHOWN 64

void group__why_reason(struct group *g, struct slice reason)
{
    if (slice_is_null(reason) || reason.len == 0) {
        return;
    }
    size_t at = strlen(g->why);
    int n = reason.len > GROUP__REASON_SHOWN ? GROUP__REASON_SHOWN
                                             : (int)reason.len;
    snprintf(g->why + at, sizeof g->why - at, "; client reason: %.*s%s", n,
             (const char *)reason.ptr,
             (size_t)n < reason.len ? "..." : "");
}

/* The event of entering state to, with what caused it. */
static void tell(struct groups *gs, const struct group *g,
                 enum group_state to)
{
    if (gs->io->event == NULL) {
        return;
    }
    char text[512];
    int gl = g->id.len > 64 ? 64 : (int)g->id.len;
    const char *gid = (const char *)g->id.ptr;
    switch (to) {
    case GROUP_STATE_PREPARING_REBALANCE:
        snprintf(text, sizeof text, "group %.*s rebalancing at generation "
                 "%d, %zu member%s (%s)", gl, gid, (int)g->generation_id,
                 g->n_members, g->n_members == 1 ? "" : "s",
                 g->why[0] != '\0' ? g->why : "a rebalance was asked for");
        break;
    case GROUP_STATE_COMPLETING_REBALANCE: {
        int ll = g->leader->member_id.len > GROUP__ID_SHOWN
                     ? GROUP__ID_SHOWN
                     : (int)g->leader->member_id.len;
        snprintf(text, sizeof text, "group %.*s generation %d: %zu member%s, "
                 "leader %.*s, protocol %.*s (every member rejoined or the "
                 "join phase ended); waiting for the leader's assignment",
                 gl, gid, (int)g->generation_id, g->n_members,
                 g->n_members == 1 ? "" : "s", ll,
                 (const char *)g->leader->member_id.ptr,
                 (int)g->protocol_name.len,
                 (const char *)g->protocol_name.ptr);
        break;
    }
    case GROUP_STATE_STABLE:
        snprintf(text, sizeof text, "group %.*s stable at generation %d, %zu "
                 "member%s (the leader's assignment went to every member)",
                 gl, gid, (int)g->generation_id, g->n_members,
                 g->n_members == 1 ? "" : "s");
        break;
    case GROUP_STATE_EMPTY:
        snprintf(text, sizeof text, "group %.*s empty at generation %d (%s); "
                 "its committed offsets stay", gl, gid,
                 (int)g->generation_id,
                 g->why[0] != '\0' ? g->why : "no member rejoined");
        break;
    default:
        return;
    }
    gs->io->event(gs->io, text);
}

static void transition(struct groups *gs, struct group *g,
                       enum group_state to)
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
        ASSERT_UNREACHABLE("no transition to this state");
    }
    g->previous_state = g->state;
    g->state = to;
    tell(gs, g, to);
    if (to == GROUP_STATE_STABLE || to == GROUP_STATE_EMPTY) {
        g->why[0] = '\0'; /* the next rebalance says its own cause */
        group__persist(gs, g, false); /* a generation to keep */
    }
}

static bool group_can_rebalance(const struct group *g)
{
    return g->state == GROUP_STATE_EMPTY ||
           g->state == GROUP_STATE_COMPLETING_REBALANCE ||
           g->state == GROUP_STATE_STABLE;
}

bool group__all_joined(const struct group *g)
{
    return g->n_members == g->n_awaiting_join && g->n_pending == 0;
}

void group__set_join_deadline(struct group *g, int64_t t)
{
    g->join_deadline_ms = t;
    group__wake_at(g, t);
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
        group__member_reschedule(g, m, now_ms, m->session_timeout_ms);
    }
}

static void reset_and_propagate_error(struct groups *gs, struct group *g,
                                      int16_t error, int64_t now_ms)
{
    ASSERT(g->state == GROUP_STATE_COMPLETING_REBALANCE);
    for (size_t i = 0; i < g->n_members; i++) {
        group__owned_free(&g->members[i]->assignment);
        g->members[i]->assignment = group__empty_slice();
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
void group__complete_join(struct groups *gs, struct group *g, int64_t now_ms)
{
    ASSERT(g->state == GROUP_STATE_PREPARING_REBALANCE);
    g->join_deadline_ms = -1;
    for (size_t i = g->n_members; i-- > 0;) {
        struct group_member *m = g->members[i];
        if (m->join_req == NULL && slice_is_null(m->group_instance_id)) {
            group__member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        }
    }
    if (!elect_joined_leader(g) && g->n_members > 0) {
        /* Nobody rejoined: wait for sessions to remove the rest. */
        group__set_join_deadline(g, now_ms + group_rebalance_timeout(g));
        return;
    }
    g->generation_id++;
    pending_sync_clear(g);
    if (g->n_members == 0) {
        g->protocol_name = slice_null();
        g->empty_since_ms = now_ms; /* offsets.retention.minutes from now */
        transition(gs, g, GROUP_STATE_EMPTY);
        return;
    }
    group__name_set(&g->protocol_name, g->protocol_name_buf,
                    group_select_protocol(g));
    transition(gs, g, GROUP_STATE_COMPLETING_REBALANCE);
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        if (m->join_req != NULL) {
            member_join_ok(gs, g, m, m == g->leader, g->leader->member_id);
        }
        group__member_reschedule(g, m, now_ms, m->session_timeout_ms);
        m->is_new = false;
        m->pending_sync = true;
    }
    g->sync_deadline_ms = now_ms + group_rebalance_timeout(g);
    group__wake_at(g, g->sync_deadline_ms);
}

/* Kafka's maybeCompleteJoinPhase: never early in an initial rebalance. */
static void maybe_complete_join_phase(struct groups *gs, struct group *g,
                                      int64_t now_ms)
{
    if (g->state == GROUP_STATE_PREPARING_REBALANCE && group__all_joined(g) &&
        g->previous_state != GROUP_STATE_EMPTY) {
        group__complete_join(gs, g, now_ms);
    }
}

/* Kafka's prepareRebalance. */
void group__prepare_rebalance(struct groups *gs, struct group *g,
                              int64_t now_ms)
{
    if (g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        reset_and_propagate_error(gs, g, KAFKA_ERROR_REBALANCE_IN_PROGRESS,
                                  now_ms);
    }
    pending_sync_clear(g);
    bool initial = g->state == GROUP_STATE_EMPTY;
    int64_t rebalance_ms = group_rebalance_timeout(g);
    transition(gs, g, GROUP_STATE_PREPARING_REBALANCE);
    if (initial) {
        int64_t delay_ms = gs->config.initial_rebalance_delay_ms;
        g->new_member_added = false;
        g->initial_delay_ms = delay_ms;
        g->initial_remaining_ms = group__max64(rebalance_ms - delay_ms, 0);
        group__set_join_deadline(g, now_ms + delay_ms);
        return;
    }
    if (group__all_joined(g)) {
        group__complete_join(gs, g, now_ms);
    } else {
        group__set_join_deadline(g, now_ms + rebalance_ms);
    }
}

static void maybe_prepare_rebalance_or_complete_join(struct groups *gs,
                                                     struct group *g,
                                                     int64_t now_ms)
{
    if (group_can_rebalance(g)) {
        group__prepare_rebalance(gs, g, now_ms);
    } else {
        maybe_complete_join_phase(gs, g, now_ms);
    }
}

/* A member left or failed (Kafka's removeMemberAndUpdateClassicGroup). */
void group__remove_member_and_update(struct groups *gs, struct group *g,
                                     struct group_member *m, int64_t now_ms)
{
    group__member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    if (g->state == GROUP_STATE_STABLE ||
        g->state == GROUP_STATE_COMPLETING_REBALANCE) {
        maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
    } else if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
               group__all_joined(g)) {
        group__complete_join(gs, g, now_ms);
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
    m->assignment = group__empty_slice();
    if (group__owned_dup(r->group_instance_id,
                         &m->group_instance_id) != RC_OK ||
        group__owned_dup(group__nonnull(r->client_id),
                         &m->client_id) != RC_OK ||
        group__owned_dup(group__nonnull(r->client_host),
                         &m->client_host) != RC_OK ||
        group__owned_dup(group__nonnull(r->client_software),
                         &m->client_software) != RC_OK ||
        group__protocols_dup(r->protocols, r->n_protocols,
                             &m->protocols) != RC_OK) {
        group__member_free(m);
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
        group__owned_free(&id);
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          group__empty_slice());
        return RC_OK;
    }
    struct group_member *m;
    int rv = member_new(r, id, &m);
    if (rv != RC_OK) {
        group__owned_free(&id);
        return rv;
    }
    rv = group__reserve((void **)&g->members, &g->cap_members, g->n_members + 1,
                        sizeof g->members[0]);
    if (rv == RC_OK) {
        rv = group__reserve((void **)&gs->scratch, &gs->cap_scratch,
                            g->n_members + 1, sizeof gs->scratch[0]);
    }
    if (rv != RC_OK) {
        group__member_free(m);
        return rv;
    }
    m->is_new = true;
    if (g->state == GROUP_STATE_PREPARING_REBALANCE &&
        g->previous_state == GROUP_STATE_EMPTY) {
        g->new_member_added = true;
    }
    if (g->n_members == 0) {
        group__name_set(&g->protocol_type, g->protocol_type_buf,
                        r->protocol_type);
    }
    ASSERT(group__static_find(g, m->group_instance_id) == NULL);
    if (g->leader == NULL) {
        g->leader = m;
    }
    g->members[g->n_members++] = m;
    m->join_req = req;
    g->n_awaiting_join++;
    group__pending_remove(g, m->member_id);
    group__member_reschedule(g, m, now_ms,
                             gs->config.new_member_join_timeout_ms);
    group__why(g, "joined", m->member_id);
    group__why_reason(g, r->reason);
    maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
    return RC_OK;
}

/* m's JoinGroup request req (with r's protocols, already copied into p,
 * and timeouts) replaces what m asked before; m now awaits the join. */
static void member_take_join(struct group *g, struct group_member *m,
                             void *req, const struct group_join_request *r,
                             struct group_protocol *p)
{
    group__protocols_free(m->protocols, m->n_protocols);
    m->protocols = p;
    m->n_protocols = r->n_protocols;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    m->session_timeout_ms = r->session_timeout_ms;
    m->join_req = req;
    g->n_awaiting_join++;
}

/* Kafka's updateMemberThenRebalanceOrCompleteJoin. */
static int update_member_and_rebalance(struct groups *gs, struct group *g,
                                       struct group_member *m, void *req,
                                       const struct group_join_request *r,
                                       int64_t now_ms)
{
    struct group_protocol *p;
    int rv = group__protocols_dup(r->protocols, r->n_protocols, &p);
    if (rv != RC_OK) {
        return rv;
    }
    group__member_join_fail(gs, g, m, KAFKA_ERROR_REBALANCE_IN_PROGRESS,
                            m->member_id); /* superseded */
    member_take_join(g, m, req, r, p);
    group__why(g, "rejoined", m->member_id);
    group__why_reason(g, r->reason);
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
    int rv = group__protocols_dup(r->protocols, r->n_protocols, &p);
    if (rv != RC_OK) {
        group__owned_free(&new_id);
        return rv;
    }
    ASSERT(g->state != GROUP_STATE_EMPTY);
    struct slice old_id = m->member_id;
    struct slice old_leader = g->leader->member_id; /* m's if it leads */
    group__member_join_fail(gs, g, m, KAFKA_ERROR_FENCED_INSTANCE_ID, old_id);
    group__member_sync_fail(gs, m, KAFKA_ERROR_FENCED_INSTANCE_ID);
    m->member_id = new_id;
    group__member_reschedule(g, m, now_ms, m->session_timeout_ms);
    member_take_join(g, m, req, r, p);
    switch (g->state) {
    case GROUP_STATE_STABLE:
        if (group__bytes_eq(group_select_protocol(g), g->protocol_name)) {
            /* Keeps its assignment; the old leader id is reported, so a
             * static leader coming back stays a follower this time. */
            member_join_ok(gs, g, m, false, old_leader);
            group__persist(gs, g, false); /* the member's new id */
        } else {
            group__why(g, "came back with other protocols", m->member_id);
            maybe_prepare_rebalance_or_complete_join(gs, g, now_ms);
        }
        break;
    case GROUP_STATE_COMPLETING_REBALANCE:
        /* The leader may have assigned to the old id: rebalance. */
        group__why(g, "came back under a new id", m->member_id);
        group__prepare_rebalance(gs, g, now_ms);
        break;
    default:
        maybe_complete_join_phase(gs, g, now_ms);
        break;
    }
    group__owned_free(&old_id);
    return RC_OK;
}

/* Kafka's classicGroupJoinNewMember (empty member id). */
static int join_new_member(struct groups *gs, struct group *g, void *req,
                           const struct group_join_request *r, int64_t now_ms)
{
    if (!group_supports(g, r->protocol_type, r->protocols, r->n_protocols)) {
        join_answer_error(gs, req, KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL,
                          group__empty_slice());
        return RC_OK;
    }
    bool is_static = !slice_is_null(r->group_instance_id);
    if (!is_static && r->require_known_member_id &&
        g->n_pending >= GROUP__MEMBERS_MAX) {
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          group__empty_slice());
        return RC_OK;
    }
    struct slice prefix =
        is_static ? r->group_instance_id : group__nonnull(r->client_id);
    struct slice id;
    int rv = member_id_generate(gs, prefix, &id);
    if (rv != RC_OK) {
        return rv;
    }
    if (is_static) {
        struct group_member *m = group__static_find(g, r->group_instance_id);
        if (m != NULL) {
            return static_replace(gs, g, m, req, r, id, now_ms);
        }
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    if (!r->require_known_member_id) {
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    rv = group__reserve((void **)&g->pending, &g->cap_pending, g->n_pending + 1,
                        sizeof g->pending[0]);
    if (rv != RC_OK) {
        group__owned_free(&id);
        return rv;
    }
    struct group_pending_member *p = &g->pending[g->n_pending++];
    p->member_id = id;
    p->deadline_ms = now_ms + r->session_timeout_ms;
    group__wake_at(g, p->deadline_ms);
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
    if (group__pending_find(g, mid) != NULL) {
        if (!slice_is_null(r->group_instance_id)) {
            /* Kafka throws IllegalStateException: a pending id is never
             * a static member's. */
            join_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_SERVER_ERROR, mid);
            return RC_OK;
        }
        struct slice id;
        int rv = group__owned_dup(mid, &id);
        if (rv != RC_OK) {
            return rv;
        }
        return add_member_and_rebalance(gs, g, req, r, id, now_ms);
    }
    int16_t error = group__member_validate(g, mid, r->group_instance_id);
    if (error != KAFKA_ERROR_NONE) {
        join_answer_error(gs, req, error, mid);
        return RC_OK;
    }
    struct group_member *m = group__member_find(g, mid);
    bool same = group__protocols_match(m, r->protocols, r->n_protocols);
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
    const struct group_member *m = group__member_find(g, member_id);
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

int group_join(struct groups *gs, void *req, const struct group_join_request *r,
               int64_t now_ms)
{
    struct slice mid = group__nonnull(r->member_id);
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
    struct group *g = group__lookup(gs, r->group_id, &at);
    bool created = false;
    if (g == NULL) {
        if (!unknown) {
            join_answer_error(gs, req, KAFKA_ERROR_UNKNOWN_MEMBER_ID, mid);
            return RC_OK;
        }
        int rv = group__create(gs, r->group_id, at, &g);
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
        struct group_member *m = group__member_find(g, mid);
        group__pending_remove(g, mid);
        if (m != NULL) {
            group__remove_member_and_update(gs, g, m, now_ms);
        }
        join_answer_error(gs, req, KAFKA_ERROR_GROUP_MAX_SIZE_REACHED,
                          group__empty_slice());
    } else if (unknown) {
        rv = join_new_member(gs, g, req, &rr, now_ms);
    } else {
        rv = join_existing_member(gs, g, req, &rr, now_ms);
    }
    if (rv != RC_OK && created) {
        group__destroy_empty(gs, g);
        return rv;
    }
    group__check_group(g);
    return rv;
}

/* --- SyncGroup ------------------------------------------------------------ */

/* The leader's assignment for m: the last entry naming it, or empty. */
static struct slice assignment_for(const struct group_sync_request *r,
                                   const struct group_member *m)
{
    struct slice a = group__empty_slice();
    for (size_t i = 0; i < r->n_assignments; i++) {
        if (group__bytes_eq(r->assignments[i].member_id, m->member_id)) {
            a = group__nonnull(r->assignments[i].assignment);
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
        if (group__owned_dup(assignment_for(r, g->members[i]),
                             &a[i]) != RC_OK) {
            for (size_t j = 0; j < i; j++) {
                group__owned_free(&a[j]);
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
           !group__bytes_eq(asked, ours);
}

static int16_t sync_validate(const struct group *g,
                             const struct group_sync_request *r)
{
    int16_t error = group__member_validate(g, r->member_id,
                                           r->group_instance_id);
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
    struct group_member *m = group__member_find(g, r->member_id);
    bool leader = m == g->leader;
    struct slice *a = NULL;
    bool oversized = false;
    if (leader) {
        int rv = assignments_copy(g, r, &a, &oversized);
        if (rv != RC_OK) {
            return rv;
        }
    }
    group__member_sync_fail(gs, m,
                            KAFKA_ERROR_REBALANCE_IN_PROGRESS); /* superseded */
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
        group__owned_free(&g->members[i]->assignment);
        g->members[i]->assignment = a[i];
    }
    free(a);
    propagate_assignment(gs, g, KAFKA_ERROR_NONE, now_ms);
    transition(gs, g, GROUP_STATE_STABLE);
    return RC_OK;
}

int group_sync(struct groups *gs, void *req, const struct group_sync_request *r,
               int64_t now_ms)
{
    if (r->group_id.len == 0) {
        sync_answer_error(gs, req, KAFKA_ERROR_INVALID_GROUP_ID);
        return RC_OK;
    }
    struct group *g = group__lookup(gs, r->group_id, NULL);
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
        struct group_member *m = group__member_find(g, r->member_id);
        pending_sync_done(g, m);
        sync_answer_member(gs, g, req, m);
        group__member_reschedule(g, m, now_ms, m->session_timeout_ms);
    }
    group__check_group(g);
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
    struct group *g = group__lookup(gs, group_id, NULL);
    if (g == NULL) {
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    }
    int16_t error = group__member_validate(g, member_id, group_instance_id);
    if (error != KAFKA_ERROR_NONE) {
        return error;
    }
    if (generation_id != g->generation_id) {
        return KAFKA_ERROR_ILLEGAL_GENERATION;
    }
    struct group_member *m = group__member_find(g, member_id);
    group__member_reschedule(g, m, now_ms, m->session_timeout_ms);
    group__check_group(g);
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
        struct group_member *m = group__static_find(g, lm->group_instance_id);
        if (m == NULL) {
            lm->error_code = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
            return false;
        }
        group__member_evict(gs, g, m, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        lm->error_code = KAFKA_ERROR_NONE;
        return true;
    }
    if (group__pending_find(g, lm->member_id) != NULL) {
        group__pending_remove(g, lm->member_id);
        lm->error_code = KAFKA_ERROR_NONE;
        return true;
    }
    lm->error_code =
        group__member_validate(g, lm->member_id, lm->group_instance_id);
    if (lm->error_code != KAFKA_ERROR_NONE) {
        return false;
    }
    group__member_evict(gs, g, group__member_find(g, lm->member_id),
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
    struct group *g = group__lookup(gs, group_id, NULL);
    if (g == NULL) {
        for (size_t i = 0; i < n; i++) {
            members[i].error_code = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        }
        return KAFKA_ERROR_NONE;
    }
    bool any = false;
    if (n > 0) {
        group__why(g, n == 1 ? "left (LeaveGroup)"
                             : "and others left (LeaveGroup)",
                   members[0].member_id);
        group__why_reason(g, members[0].reason);
    }
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
    group__check_group(g);
    return KAFKA_ERROR_NONE;
}
