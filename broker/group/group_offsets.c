/* Classic consumer-group coordinator, offsets (broker/group/group.h):
 * OffsetCommit and its persistence through io->persist_offsets,
 * group_offset_get, loading offsets and tombstones from the offsets partition,
 * unloading groups and freeing the core. Shares broker/group/group_internal.h
 * with broker/group/group.c and broker/group/group_rebalance.c. Pure: no I/O,
 * no clock. Loop thread only. */
#include "broker/group/group_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

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
            group__member_validate(g, r->member_id, r->group_instance_id);
        if (error != KAFKA_ERROR_NONE) {
            return error;
        }
        if (r->generation_id != g->generation_id) {
            return KAFKA_ERROR_ILLEGAL_GENERATION;
        }
        *member = group__member_find(g, r->member_id);
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
        group__owned_free(&c->entries[i].topic);
        group__owned_free(&c->entries[i].metadata);
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
    if (group__offset_lookup(g, o->topic, o->partition, &at)) {
        struct group_offset *cur = &g->offsets[at];
        group__owned_free(&cur->metadata);
        group__owned_free(&o->topic);
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
        group__check_group(g);
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
    size_t used = g->n_offsets + g->n_reserved;
    size_t room = used < GROUP__OFFSETS_MAX ? GROUP__OFFSETS_MAX - used : 0;
    for (size_t i = 0; i < r->n_partitions; i++) {
        const struct group_commit_partition *p = &r->partitions[i];
        size_t at;
        if (p->metadata.len >
            (size_t)gs->config.offset_metadata_bytes_max) {
            errors[i] = KAFKA_ERROR_OFFSET_METADATA_TOO_LARGE;
        } else if (group__offset_lookup(g, p->topic, p->partition, &at)) {
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
        if (group__owned_dup(group__nonnull(p->topic), &o->topic) != RC_OK ||
            group__owned_dup(group__nonnull(p->metadata),
                             &o->metadata) != RC_OK) {
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
        group__check_group(g);
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
    struct group *g = group__lookup(gs, r->group_id, &at);
    bool created = false;
    if (g == NULL) {
        if (r->generation_id >= 0) {
            commit_answer_now(gs, req, errors, n,
                              KAFKA_ERROR_ILLEGAL_GENERATION);
            return RC_OK;
        }
        int rv = group__create(gs, r->group_id, at, &g);
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
        group__check_group(g);
        return RC_OK;
    }
    size_t n_valid;
    size_t n_new;
    commit_check_entries(gs, g, r, errors, &n_valid, &n_new);
    struct group_commit *c = NULL;
    int rv = RC_OK;
    if (n_valid > 0) {
        rv = group__reserve((void **)&g->offsets, &g->cap_offsets,
                            g->n_offsets + g->n_reserved + n_new,
                            sizeof g->offsets[0]);
        if (rv == RC_OK) {
            rv = commit_build(r, errors, n_valid, now_ms, &c);
        }
    }
    if (rv != RC_OK) {
        free(errors);
        if (created) {
            group__destroy_empty(gs, g);
        }
        return rv;
    }
    if (member != NULL && (g->state == GROUP_STATE_STABLE ||
                           g->state == GROUP_STATE_PREPARING_REBALANCE)) {
        group__member_reschedule(g, member, now_ms, member->session_timeout_ms);
    }
    if (c == NULL) {
        commit_answer_now(gs, req, errors, n, KAFKA_ERROR_NONE);
        group__check_group(g);
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
    const struct group *g = group__lookup(gs, group_id, NULL);
    size_t at;
    if (g == NULL || !group__offset_lookup(g, topic, partition, &at)) {
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
    int rv = group__get_or_create(gs, group_id, &g, &created);
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
    bool exists = group__offset_lookup(g, topic, partition, &at);
    if (!exists && g->n_offsets + g->n_reserved >= GROUP__OFFSETS_MAX) {
        rv = RC_FULL;
    }
    if (rv == RC_OK && !exists) {
        rv = group__reserve((void **)&g->offsets, &g->cap_offsets,
                            g->n_offsets + g->n_reserved + 1,
                            sizeof g->offsets[0]);
    }
    if (rv == RC_OK) {
        rv = group__owned_dup(group__nonnull(metadata), &o.metadata);
    }
    if (rv == RC_OK &&
        group__owned_dup(group__nonnull(topic), &o.topic) != RC_OK) {
        group__owned_free(&o.metadata);
        rv = RC_NOMEM;
    }
    if (rv != RC_OK) {
        if (created) {
            group__destroy_empty(gs, g);
        }
        return rv;
    }
    offset_apply(g, &o);
    group__check_group(g);
    return RC_OK;
}

bool group__holds_nothing(const struct group *g)
{
    return g->state == GROUP_STATE_EMPTY && g->n_members == 0 &&
           g->n_pending == 0 && g->n_offsets == 0 && g->n_commits == 0;
}

void group_load_tombstone(struct groups *gs, struct slice group_id,
                          struct slice topic, int32_t partition)
{
    struct group *g = group__lookup(gs, group_id, NULL);
    size_t at;
    if (g == NULL || !group__offset_lookup(g, topic, partition, &at)) {
        return;
    }
    group__owned_free(&g->offsets[at].topic);
    group__owned_free(&g->offsets[at].metadata);
    memmove(&g->offsets[at], &g->offsets[at + 1],
            (g->n_offsets - at - 1) * sizeof g->offsets[0]);
    g->n_offsets--;
    if (group__holds_nothing(g)) {
        group__destroy_empty(gs, g);
        return;
    }
    group__check_group(g);
}

/* Answers g's parked requests with error, orphans its commits, frees it
 * and takes it out of gs->v. */
void group__drop(struct groups *gs, struct group *g, int16_t error)
{
    size_t at;
    struct group *found = group__lookup(gs, g->id, &at);
    ASSERT(found == g);
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member *m = g->members[i];
        group__member_join_fail(gs, g, m, error, m->member_id);
        group__member_sync_fail(gs, m, error);
    }
    group__commits_orphan(gs, g);
    for (size_t i = 0; i < g->n_members; i++) {
        group__member_free(g->members[i]);
    }
    free(g->members);
    for (size_t i = 0; i < g->n_pending; i++) {
        group__owned_free(&g->pending[i].member_id);
    }
    free(g->pending);
    group__offsets_free(g);
    group__owned_free(&g->id);
    free(g);
    memmove(&gs->v[at], &gs->v[at + 1], (gs->n - at - 1) * sizeof gs->v[0]);
    gs->n--;
}

void group__destroy_empty(struct groups *gs, struct group *g)
{
    ASSERT(g->n_members == 0);
    group__drop(gs, g, KAFKA_ERROR_NOT_COORDINATOR);
}

void group_unload_partition(struct groups *gs, int32_t partition)
{
    for (size_t i = gs->n; i-- > 0;) {
        if (gs->v[i]->partition == partition) {
            group__drop(gs, gs->v[i], KAFKA_ERROR_NOT_COORDINATOR);
        }
    }
}

void group_unload_all(struct groups *gs)
{
    while (gs->n > 0) {
        group__drop(gs, gs->v[gs->n - 1], KAFKA_ERROR_NOT_COORDINATOR);
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
