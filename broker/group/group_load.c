/* Replaying GroupMetadata records and adopting a finished load
 * (broker/group/group.h, "Loading a partition of __consumer_offsets").
 *
 * As Kafka's GroupMetadataManager loads a group: the latest record of a
 * group wins; with members the group is Stable at the record's
 * generation, each member supporting just the chosen protocol (with its
 * subscription) and keeping its assignment; without, Empty. A tombstone
 * takes the membership away; offsets are records of their own and stay. */
#include <stdlib.h>
#include <string.h>

#include "broker/group/group_internal.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

static bool load_member_valid(const struct group_load_member *lm)
{
    return lm->member_id.ptr != NULL && lm->member_id.len > 0 &&
           lm->session_timeout_ms > 0 && lm->rebalance_timeout_ms >= 0 &&
           lm->subscription.len <= GROUP__MEMBER_BYTES_MAX &&
           lm->assignment.len <= GROUP__MEMBER_BYTES_MAX;
}

/* The record's rules (group.h): RC_MALFORMED when one is broken. */
static int meta_validate(const struct group_load_meta *m)
{
    if (m->generation_id < 0 || m->n_members > GROUP__MEMBERS_MAX ||
        m->protocol_type.len > GROUP_PROTOCOL_NAME_BYTES_MAX) {
        return RC_MALFORMED;
    }
    if (m->n_members == 0) {
        return RC_OK;
    }
    if (m->protocol_name.ptr == NULL || m->protocol_name.len == 0 ||
        m->protocol_name.len > GROUP_PROTOCOL_NAME_BYTES_MAX ||
        m->protocol_type.len == 0 || m->leader.ptr == NULL) {
        return RC_MALFORMED;
    }
    bool leader_found = false;
    for (size_t i = 0; i < m->n_members; i++) {
        const struct group_load_member *a = &m->members[i];
        if (!load_member_valid(a)) {
            return RC_MALFORMED;
        }
        leader_found |= group__bytes_eq(a->member_id, m->leader);
        /* Quadratic, within GROUP__MEMBERS_MAX; once per record. */
        for (size_t j = i + 1; j < m->n_members; j++) {
            const struct group_load_member *b = &m->members[j];
            if (group__bytes_eq(a->member_id, b->member_id) ||
                (!slice_is_null(a->group_instance_id) &&
                 !slice_is_null(b->group_instance_id) &&
                 group__bytes_eq(a->group_instance_id,
                                 b->group_instance_id))) {
                return RC_MALFORMED;
            }
        }
    }
    return leader_found ? RC_OK : RC_MALFORMED;
}

static int member_from_record(const struct group_load_member *lm,
                              struct slice protocol, int64_t now_ms,
                              struct group_member **out)
{
    struct group_member *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return RC_NOMEM;
    }
    m->member_id = slice_null();
    m->assignment = slice_null();
    struct group_protocol p = {.name = protocol,
                               .metadata = lm->subscription};
    if (group__owned_dup(group__nonnull(lm->member_id),
                         &m->member_id) != RC_OK ||
        group__owned_dup(lm->group_instance_id,
                         &m->group_instance_id) != RC_OK ||
        group__owned_dup(group__nonnull(lm->client_id),
                         &m->client_id) != RC_OK ||
        group__owned_dup(group__nonnull(lm->client_host),
                         &m->client_host) != RC_OK ||
        group__owned_dup(group__empty_slice(), &m->client_software) !=
            RC_OK ||
        group__owned_dup(group__nonnull(lm->assignment),
                         &m->assignment) != RC_OK ||
        group__protocols_dup(&p, 1, &m->protocols) != RC_OK) {
        group__member_free(m);
        return RC_NOMEM;
    }
    m->n_protocols = 1;
    m->session_timeout_ms = lm->session_timeout_ms;
    m->rebalance_timeout_ms = lm->rebalance_timeout_ms;
    m->deadline_ms = now_ms + lm->session_timeout_ms;
    *out = m;
    return RC_OK;
}

/* Frees g's members (a loaded group: nothing parked, nothing pending). */
static void members_clear(struct group *g)
{
    for (size_t i = 0; i < g->n_members; i++) {
        ASSERT(g->members[i]->join_req == NULL);
        ASSERT(g->members[i]->sync_req == NULL);
        group__member_free(g->members[i]);
    }
    g->n_members = 0;
    g->leader = NULL;
    g->n_awaiting_join = 0;
    g->sync_deadline_ms = -1;
    g->join_deadline_ms = -1;
}

int group_load_group(struct groups *gs, struct slice group_id,
                     const struct group_load_meta *m, int64_t now_ms)
{
    int rv = meta_validate(m);
    if (rv != RC_OK) {
        return rv;
    }
    struct group *g;
    bool created;
    rv = group__get_or_create(gs, group_id, &g, &created);
    if (rv != RC_OK) {
        return rv;
    }
    struct group_member **ms = NULL;
    if (m->n_members > 0) {
        ms = calloc(m->n_members, sizeof *ms);
        rv = ms != NULL ? RC_OK : RC_NOMEM;
    }
    for (size_t i = 0; i < m->n_members && rv == RC_OK; i++) {
        rv = member_from_record(&m->members[i], m->protocol_name, now_ms,
                                &ms[i]);
    }
    if (rv != RC_OK) {
        for (size_t i = 0; ms != NULL && i < m->n_members; i++) {
            if (ms[i] != NULL) {
                group__member_free(ms[i]);
            }
        }
        free(ms);
        if (created) {
            group__destroy_empty(gs, g);
        }
        return rv;
    }
    members_clear(g);
    free(g->members);
    g->members = ms;
    g->n_members = m->n_members;
    g->cap_members = m->n_members;
    g->generation_id = m->generation_id;
    if (m->protocol_type.len > 0) {
        group__name_set(&g->protocol_type, g->protocol_type_buf,
                        m->protocol_type);
    } else {
        g->protocol_type = slice_null();
    }
    g->wake_ms = GROUP__NEVER;
    for (size_t i = 0; i < g->n_pending; i++) {
        group__wake_at(g, g->pending[i].deadline_ms);
    }
    if (m->n_members == 0) {
        g->protocol_name = slice_null();
        g->state = GROUP_STATE_EMPTY;
        g->empty_since_ms = m->state_ms >= 0 ? m->state_ms : -1;
    } else {
        group__name_set(&g->protocol_name, g->protocol_name_buf,
                        m->protocol_name);
        g->state = GROUP_STATE_STABLE;
        g->empty_since_ms = -1;
        for (size_t i = 0; i < g->n_members; i++) {
            if (group__bytes_eq(g->members[i]->member_id, m->leader)) {
                g->leader = g->members[i];
            }
            group__wake_at(g, g->members[i]->deadline_ms);
        }
    }
    g->previous_state = g->state;
    g->why[0] = '\0';
    group__check_group(g);
    return RC_OK;
}

void group_load_group_tombstone(struct groups *gs, struct slice group_id)
{
    struct group *g = group__lookup(gs, group_id, NULL);
    if (g == NULL) {
        return;
    }
    members_clear(g);
    g->state = GROUP_STATE_EMPTY;
    g->previous_state = GROUP_STATE_EMPTY;
    g->generation_id = 0;
    g->protocol_type = slice_null();
    g->protocol_name = slice_null();
    g->empty_since_ms = -1;
    if (group__holds_nothing(g)) {
        group__destroy_empty(gs, g);
        return;
    }
    group__check_group(g);
}

void group_load_adopt(struct groups *gs, struct groups *from, int64_t now_ms)
{
    while (from->n > 0) {
        struct group *g = from->v[from->n - 1];
        from->n--;
        size_t at;
        struct group *old = group__lookup(gs, g->id, &at);
        if (old != NULL) {
            group__drop(gs, old, KAFKA_ERROR_NOT_COORDINATOR);
            (void)group__lookup(gs, g->id, &at);
        }
        if (group__reserve((void **)&gs->v, &gs->cap, gs->n + 1,
                           sizeof gs->v[0]) != RC_OK) {
            /* No room: the group is not served here; it was loaded, so
             * the next load brings it back. */
            from->v[from->n++] = g;
            group__drop(from, g, KAFKA_ERROR_NOT_COORDINATOR);
            continue;
        }
        g->wake_ms = GROUP__NEVER;
        for (size_t i = 0; i < g->n_members; i++) {
            group__member_reschedule(g, g->members[i], now_ms,
                                     g->members[i]->session_timeout_ms);
        }
        for (size_t i = 0; i < g->n_pending; i++) {
            group__wake_at(g, g->pending[i].deadline_ms);
        }
        memmove(&gs->v[at + 1], &gs->v[at], (gs->n - at) * sizeof gs->v[0]);
        gs->v[at] = g;
        gs->n++;
        group__check_group(g);
    }
}
