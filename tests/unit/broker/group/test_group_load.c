/* Group membership persisted and restored (broker/group/group_load.c,
 * broker/group/group_store.c): one coordinator core runs a group; every
 * GroupMetadata record it asks for is encoded as __consumer_offsets would
 * hold it; a second core (the new coordinator) replays the records and
 * must serve the same members at the same generation. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "broker/group/group.h"
#include "broker/group/group_store.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/writer.h"

#define T0 1000000
#define SESSION_MS 10000
#define MEMBERS 2

static struct groups old_gs; /* the coordinator that goes away */
static struct groups new_gs; /* the one that takes over */
static struct groups staging;
static struct group_io io;
static struct writer records; /* every record written, in order */
static int group_records;
static char ids[MEMBERS][64];
static int32_t generation;
static int sync_answers;

static int32_t partition_for(struct group_io *i, struct slice id)
{
    (void)i, (void)id;
    return 0;
}

static void join_done(struct group_io *i, void *req,
                      const struct group_join_result *r)
{
    (void)i;
    size_t k = (uintptr_t)req - 1;
    cr_assert_eq(r->error_code, KAFKA_ERROR_NONE);
    cr_assert_lt(k, MEMBERS);
    cr_assert_lt(r->member_id.len, sizeof ids[k]);
    memcpy(ids[k], r->member_id.ptr, r->member_id.len);
    ids[k][r->member_id.len] = '\0';
    generation = r->generation_id;
}

static void sync_done(struct group_io *i, void *req,
                      const struct group_sync_result *r)
{
    (void)i, (void)req;
    cr_assert_eq(r->error_code, KAFKA_ERROR_NONE);
    sync_answers++;
}

static int16_t persist_offsets(struct group_io *i, struct group_commit *t,
                               int32_t p, struct slice g,
                               const struct group_offset *o, size_t n)
{
    (void)i, (void)t, (void)p, (void)g, (void)o, (void)n;
    return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
}

static void commit_done(struct group_io *i, void *req, const int16_t *e,
                        size_t n)
{
    (void)i, (void)req, (void)e, (void)n;
}

static void tombstones(struct group_io *i, int32_t p, struct slice g,
                       const struct group_offset *o, size_t n)
{
    (void)i, (void)p, (void)g, (void)o, (void)n;
}

static void persist_group(struct group_io *i, const struct group *g,
                          bool gone)
{
    (void)i;
    cr_assert_eq(group_store_encode_group(&records, g, gone, T0, T0), RC_OK);
    group_records++;
}

static void setup(void)
{
    io = (struct group_io){.partition_for = partition_for,
                           .join_done = join_done,
                           .sync_done = sync_done,
                           .persist_offsets = persist_offsets,
                           .commit_done = commit_done,
                           .persist_tombstones = tombstones,
                           .persist_group = persist_group};
    struct group_config cfg;
    group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = 0;
    group_init(&old_gs, &io, &cfg);
    group_init(&new_gs, &io, &cfg);
    group_init(&staging, &io, &cfg);
    writer_init(&records, 1 << 24);
    group_records = 0;
    sync_answers = 0;
}

static void teardown(void)
{
    group_free(&old_gs);
    group_free(&new_gs);
    group_free(&staging);
    writer_free(&records);
}

TestSuite(group_load, .init = setup, .fini = teardown);

static struct slice S(const char *s)
{
    return slice_from_str(s);
}

static void join(size_t k, const char *member, int64_t now)
{
    char meta[16];
    snprintf(meta, sizeof meta, "sub-%zu", k);
    struct group_protocol p = {.name = S("range"), .metadata = S(meta)};
    struct group_join_request r = {
        .group_id = S("g"), .member_id = S(member),
        .group_instance_id = slice_null(), .client_id = S("client"),
        .client_host = S("/127.0.0.1"), .protocol_type = S("consumer"),
        .protocols = &p, .n_protocols = 1,
        .session_timeout_ms = SESSION_MS, .rebalance_timeout_ms = 20000};
    cr_assert_eq(group_join(&old_gs, (void *)(uintptr_t)(k + 1), &r, now),
                 RC_OK);
}

/* Two members join and the leader assigns: Stable at generation 1. */
static void stable_group(void)
{
    join(0, "", T0);
    join(1, "", T0);
    group_tick(&old_gs, T0 + 1); /* the initial delay (0) ends */
    cr_assert_eq(generation, 1);
    const struct group *g = group_find(&old_gs, S("g"));
    cr_assert_eq(g->state, GROUP_STATE_COMPLETING_REBALANCE);
    struct group_assignment a[MEMBERS] = {
        {.member_id = S(ids[0]), .assignment = S("part-0")},
        {.member_id = S(ids[1]), .assignment = S("part-1")}};
    const char *leader = (const char *)g->leader->member_id.ptr;
    size_t lk = strncmp(leader, ids[0], strlen(ids[0])) == 0 ? 0 : 1;
    struct group_sync_request follower = {
        .group_id = S("g"), .generation_id = 1, .member_id = S(ids[1 - lk]),
        .group_instance_id = slice_null(), .protocol_type = slice_null(),
        .protocol_name = slice_null()};
    struct group_sync_request lead = follower;
    lead.member_id = S(ids[lk]);
    lead.assignments = a;
    lead.n_assignments = MEMBERS;
    cr_assert_eq(group_sync(&old_gs, (void *)9, &follower, T0 + 2), RC_OK);
    cr_assert_eq(group_sync(&old_gs, (void *)10, &lead, T0 + 2), RC_OK);
    cr_assert_eq(sync_answers, 2);
    cr_assert_eq(group_find(&old_gs, S("g"))->state, GROUP_STATE_STABLE);
}

static void replay_cb(void *arg, const struct group_store_record *r)
{
    int64_t now = *(int64_t *)arg;
    cr_assert(!r->is_offset);
    if (r->tombstone) {
        group_load_group_tombstone(&staging, r->group);
        return;
    }
    cr_assert_not_null(r->meta, "a record Cairn wrote decodes");
    cr_assert_eq(group_load_group(&staging, r->group, r->meta, now), RC_OK);
}

/* The new coordinator loads every record written so far. */
static void take_over(int64_t now)
{
    cr_assert_eq(group_store_replay(records.data, records.len, replay_cb,
                                    &now),
                 RC_OK);
    group_load_adopt(&new_gs, &staging, now);
    cr_assert_eq(staging.n, 0, "every loaded group moved over");
}

static int16_t heartbeat(struct groups *gs, size_t k, int32_t gen,
                         int64_t now)
{
    return group_heartbeat(gs, S("g"), S(ids[k]), slice_null(), gen, now);
}

Test(group_load, members_keep_their_generation_after_a_move)
{
    stable_group();
    cr_assert_eq(group_records, 1, "one record per generation");
    take_over(T0 + 100);
    const struct group *g = group_find(&new_gs, S("g"));
    cr_assert_not_null(g);
    cr_assert_eq(g->state, GROUP_STATE_STABLE);
    cr_assert_eq(g->generation_id, 1);
    cr_assert_eq(g->n_members, 2);
    cr_assert_eq(g->protocol_name.len, 5);
    cr_assert_eq(memcmp(g->protocol_name.ptr, "range", 5), 0);
    const struct group *old = group_find(&old_gs, S("g"));
    cr_assert_eq(g->leader->member_id.len, old->leader->member_id.len);
    cr_assert_eq(memcmp(g->leader->member_id.ptr, old->leader->member_id.ptr,
                        g->leader->member_id.len), 0);
    for (size_t i = 0; i < g->n_members; i++) {
        struct group_member_summary a, b;
        group_summary_member(g, i, &a);
        group_summary_member(old, i, &b);
        cr_assert_eq(a.member_id.len, b.member_id.len);
        cr_assert_eq(memcmp(a.member_id.ptr, b.member_id.ptr,
                            a.member_id.len), 0);
        cr_assert_eq(a.assignment.len, b.assignment.len);
        cr_assert_eq(memcmp(a.assignment.ptr, b.assignment.ptr,
                            a.assignment.len), 0, "the assignment stays");
        cr_assert_eq(a.metadata.len, b.metadata.len);
        cr_assert_eq(memcmp(a.metadata.ptr, b.metadata.ptr, a.metadata.len),
                     0, "the subscription stays");
        cr_assert_eq(a.client_host.len, strlen("/127.0.0.1"));
    }
    cr_assert_eq(heartbeat(&new_gs, 0, 1, T0 + 200), KAFKA_ERROR_NONE,
                 "no rejoin: the member's generation is current");
    cr_assert_eq(heartbeat(&new_gs, 1, 0, T0 + 200),
                 KAFKA_ERROR_ILLEGAL_GENERATION);
    /* Sessions start at the load: one member keeps heartbeating, the
     * other is removed when its session passes, and the group rebalances
     * from generation 1. */
    cr_assert_eq(heartbeat(&new_gs, 0, 1, T0 + 100 + SESSION_MS - 1),
                 KAFKA_ERROR_NONE);
    group_tick(&new_gs, T0 + 100 + SESSION_MS - 1);
    cr_assert_eq(group_find(&new_gs, S("g"))->n_members, 2);
    group_tick(&new_gs, T0 + 100 + SESSION_MS);
    g = group_find(&new_gs, S("g"));
    cr_assert_eq(g->n_members, 1, "the silent member's session expired");
    cr_assert_eq(g->state, GROUP_STATE_PREPARING_REBALANCE);
}

static void everyone_leaves(void)
{
    for (size_t k = 0; k < MEMBERS; k++) {
        struct group_leave_member m = {.member_id = S(ids[k]),
                                       .group_instance_id = slice_null()};
        cr_assert_eq(group_leave(&old_gs, S("g"), &m, 1, T0 + 10),
                     KAFKA_ERROR_NONE);
    }
}

Test(group_load, an_emptied_group_loads_empty_at_its_generation)
{
    stable_group();
    everyone_leaves();
    cr_assert_eq(group_find(&old_gs, S("g"))->state, GROUP_STATE_EMPTY);
    cr_assert_eq(group_records, 2, "Stable, then Empty");
    take_over(T0 + 100);
    const struct group *g = group_find(&new_gs, S("g"));
    cr_assert_not_null(g);
    cr_assert_eq(g->state, GROUP_STATE_EMPTY);
    cr_assert_eq(g->generation_id, 2, "the latest record wins");
    cr_assert_eq(g->n_members, 0);
    cr_assert_eq(heartbeat(&new_gs, 0, 1, T0 + 200),
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID);
}

Test(group_load, a_deleted_group_does_not_come_back)
{
    stable_group();
    everyone_leaves();
    cr_assert_eq(group_delete(&old_gs, S("g")), KAFKA_ERROR_NONE);
    cr_assert_eq(group_records, 3, "Stable, Empty, then the tombstone");
    take_over(T0 + 100);
    cr_assert_null(group_find(&new_gs, S("g")));
}

Test(group_load, a_record_breaking_the_rules_changes_nothing)
{
    stable_group();
    take_over(T0 + 100);
    struct group_load_member m = {
        .member_id = S("m-1"), .group_instance_id = slice_null(),
        .client_id = S("c"), .client_host = S("h"),
        .rebalance_timeout_ms = 1000, .session_timeout_ms = 1000,
        .subscription = S(""), .assignment = S("")};
    struct group_load_meta bad = {
        .protocol_type = S("consumer"), .generation_id = 7,
        .protocol_name = S("range"), .leader = S("not-a-member"),
        .state_ms = -1, .members = &m, .n_members = 1};
    cr_assert_eq(group_load_group(&new_gs, S("g"), &bad, T0 + 200),
                 RC_MALFORMED);
    bad.leader = S("m-1");
    bad.protocol_name = slice_null();
    cr_assert_eq(group_load_group(&new_gs, S("g"), &bad, T0 + 200),
                 RC_MALFORMED, "members without a protocol");
    struct group_load_member twice[2] = {m, m};
    bad.protocol_name = S("range");
    bad.members = twice;
    bad.n_members = 2;
    cr_assert_eq(group_load_group(&new_gs, S("g"), &bad, T0 + 200),
                 RC_MALFORMED, "one member id twice");
    const struct group *g = group_find(&new_gs, S("g"));
    cr_assert_eq(g->generation_id, 1);
    cr_assert_eq(g->n_members, 2);
}

static void count_meta(void *arg, const struct group_store_record *r)
{
    int *n = arg;
    *n += r->meta != NULL;
}

/* A value claiming more members than its bytes can hold is not read (and
 * nothing is allocated for the claim). */
Test(group_load, a_member_count_beyond_the_bytes_is_refused)
{
    struct group g = {0};
    g.id = S("g");
    g.state = GROUP_STATE_EMPTY;
    cr_assert_eq(group_store_encode_group(&records, &g, false, T0, T0),
                 RC_OK);
    int n = 0;
    cr_assert_eq(group_store_replay(records.data, records.len, count_meta,
                                    &n),
                 RC_OK);
    cr_assert_eq(n, 1, "an empty group's record decodes");
    /* The member count is the value's last 4 bytes, before the record's
     * header count (one byte) that ends the batch; the CRC covers the
     * batch from its attributes (byte 21) on. */
    size_t at = records.len - 1 - 4;
    cr_assert_eq(records.data[at + 3], 0);
    bytes_put_be32(records.data + at, INT32_MAX);
    bytes_put_be32(records.data + 17,
                   crc32c(records.data + 21, records.len - 21));
    n = 0;
    cr_assert_eq(group_store_replay(records.data, records.len, count_meta,
                                    &n),
                 RC_OK);
    cr_assert_eq(n, 0, "refused before allocating");
}
