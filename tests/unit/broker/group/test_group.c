/* Classic consumer-group coordinator (broker/group/group.h): the JoinGroup /
 * SyncGroup rebalance, member ids, heartbeats and timeouts, static
 * members, protocol selection, committed offsets, describe/list/delete,
 * loading. A fake io records every answer; time is a plain int64 in
 * milliseconds. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "broker/group/group.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

#define SESSION_MS 10000
#define REBALANCE_MS 30000
#define T0 1000000

#define STR_MAX 128
#define MEMBERS_MAX 8
#define RECS_MAX 128
#define ENTRIES_MAX 8

struct join_rec {
    uintptr_t req;
    int16_t error;
    int32_t generation;
    bool has_protocol;
    char protocol[STR_MAX];
    char leader[STR_MAX];
    char member_id[STR_MAX];
    size_t n_members;
    char members[MEMBERS_MAX][STR_MAX];
    char metadata[MEMBERS_MAX][STR_MAX];
};

struct sync_rec {
    uintptr_t req;
    int16_t error;
    char assignment[STR_MAX];
    char protocol[STR_MAX];
};

struct commit_rec {
    uintptr_t req;
    size_t n;
    int16_t errors[ENTRIES_MAX];
};

struct persist_rec {
    struct group_commit *token;
    int32_t partition;
    char group[STR_MAX];
    size_t n;
    int64_t offsets[ENTRIES_MAX];
    int64_t timestamps[ENTRIES_MAX];
};

struct tombstone_rec {
    int32_t partition;
    char group[STR_MAX];
    size_t n;
    char topics[ENTRIES_MAX][STR_MAX];
    int32_t partitions[ENTRIES_MAX];
};

static struct fake {
    struct join_rec joins[RECS_MAX];
    size_t n_joins;
    struct sync_rec syncs[RECS_MAX];
    size_t n_syncs;
    struct commit_rec commits[RECS_MAX];
    size_t n_commits;
    struct persist_rec persists[RECS_MAX];
    size_t n_persists;
    struct tombstone_rec tombstones[RECS_MAX];
    size_t n_tombstones;
    int16_t persist_answer; /* what persist_offsets returns */
} f;

static struct groups gs;
static struct group_io io;
static struct group_config cfg;
static uintptr_t next_req;
static int64_t now;

static void copy_str(char *dst, struct slice s)
{
    cr_assert_lt(s.len, STR_MAX);
    if (s.len > 0) {
        memcpy(dst, s.ptr, s.len);
    }
    dst[s.len] = '\0';
}

static struct slice S(const char *s)
{
    return slice_from_str(s);
}

/* The state-change events, in order. */
#define EVENTS_MAX 32
static char events[EVENTS_MAX][512];
static size_t n_events;

static void fake_event(struct group_io *i, const char *text)
{
    (void)i;
    if (n_events < EVENTS_MAX) {
        snprintf(events[n_events], sizeof events[0], "%s", text);
    }
    n_events++;
}

/* The index of the first event from `from` on containing want; -1 none. */
static int event_index(size_t from, const char *want)
{
    for (size_t k = from; k < n_events && k < EVENTS_MAX; k++) {
        if (strstr(events[k], want) != NULL) {
            return (int)k;
        }
    }
    return -1;
}

/* --- Fake io -------------------------------------------------------------- */

static int32_t fake_partition_for(struct group_io *i, struct slice group_id)
{
    (void)i;
    return (int32_t)(group_id.len % 5);
}

static void fake_join_done(struct group_io *i, void *req,
                           const struct group_join_result *res)
{
    (void)i;
    cr_assert_lt(f.n_joins, RECS_MAX);
    struct join_rec *r = &f.joins[f.n_joins++];
    memset(r, 0, sizeof *r);
    r->req = (uintptr_t)req;
    r->error = res->error_code;
    r->generation = res->generation_id;
    r->has_protocol = !slice_is_null(res->protocol_name);
    copy_str(r->protocol, res->protocol_name);
    copy_str(r->leader, res->leader);
    copy_str(r->member_id, res->member_id);
    cr_assert_leq(res->n_members, MEMBERS_MAX);
    r->n_members = res->n_members;
    for (size_t k = 0; k < res->n_members; k++) {
        copy_str(r->members[k], res->members[k].member_id);
        copy_str(r->metadata[k], res->members[k].metadata);
    }
}

static void fake_sync_done(struct group_io *i, void *req,
                           const struct group_sync_result *res)
{
    (void)i;
    cr_assert_lt(f.n_syncs, RECS_MAX);
    struct sync_rec *r = &f.syncs[f.n_syncs++];
    memset(r, 0, sizeof *r);
    r->req = (uintptr_t)req;
    r->error = res->error_code;
    cr_assert_not_null(res->assignment.ptr, "assignment never null");
    copy_str(r->assignment, res->assignment);
    copy_str(r->protocol, res->protocol_name);
}

static int16_t fake_persist_offsets(struct group_io *i,
                                    struct group_commit *token,
                                    int32_t partition, struct slice group_id,
                                    const struct group_offset *offsets,
                                    size_t n)
{
    (void)i;
    cr_assert_lt(f.n_persists, RECS_MAX);
    struct persist_rec *r = &f.persists[f.n_persists++];
    memset(r, 0, sizeof *r);
    r->token = token;
    r->partition = partition;
    copy_str(r->group, group_id);
    cr_assert_leq(n, ENTRIES_MAX);
    r->n = n;
    for (size_t k = 0; k < n; k++) {
        r->offsets[k] = offsets[k].offset;
        r->timestamps[k] = offsets[k].commit_timestamp_ms;
    }
    return f.persist_answer;
}

static void fake_commit_done(struct group_io *i, void *req,
                             const int16_t *errors, size_t n)
{
    (void)i;
    cr_assert_lt(f.n_commits, RECS_MAX);
    struct commit_rec *r = &f.commits[f.n_commits++];
    r->req = (uintptr_t)req;
    cr_assert_leq(n, ENTRIES_MAX);
    r->n = n;
    memcpy(r->errors, errors, n * sizeof errors[0]);
}

static void fake_persist_tombstones(struct group_io *i, int32_t partition,
                                    struct slice group_id,
                                    const struct group_offset *offsets,
                                    size_t n)
{
    (void)i;
    cr_assert_lt(f.n_tombstones, RECS_MAX);
    struct tombstone_rec *r = &f.tombstones[f.n_tombstones++];
    r->partition = partition;
    copy_str(r->group, group_id);
    cr_assert_leq(n, ENTRIES_MAX);
    r->n = n;
    for (size_t k = 0; k < n; k++) {
        copy_str(r->topics[k], offsets[k].topic);
        r->partitions[k] = offsets[k].partition;
    }
}

static void setup_with_delay(int32_t initial_delay_ms)
{
    memset(&f, 0, sizeof f);
    f.persist_answer = KAFKA_ERROR_NONE;
    io = (struct group_io){
        .partition_for = fake_partition_for,
        .join_done = fake_join_done,
        .sync_done = fake_sync_done,
        .persist_offsets = fake_persist_offsets,
        .commit_done = fake_commit_done,
        .persist_tombstones = fake_persist_tombstones,
        .event = fake_event,
    };
    n_events = 0;
    group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = initial_delay_ms;
    cfg.member_id_seed = 42;
    group_init(&gs, &io, &cfg);
    next_req = 1;
    now = T0;
}

static void setup(void)
{
    setup_with_delay(0);
}

static void teardown(void)
{
    group_free(&gs);
}

TestSuite(group, .init = setup, .fini = teardown, .timeout = 60);

/* --- Request helpers ------------------------------------------------------ */

static const struct join_rec *join_answer(uintptr_t req)
{
    for (size_t k = 0; k < f.n_joins; k++) {
        if (f.joins[k].req == req) {
            return &f.joins[k];
        }
    }
    return NULL;
}

static const struct join_rec *join_answered(uintptr_t req)
{
    const struct join_rec *r = join_answer(req);
    cr_assert_not_null(r, "JoinGroup %ju not answered", (uintmax_t)req);
    return r;
}

static const struct sync_rec *sync_answer(uintptr_t req)
{
    for (size_t k = 0; k < f.n_syncs; k++) {
        if (f.syncs[k].req == req) {
            return &f.syncs[k];
        }
    }
    return NULL;
}

static const struct commit_rec *commit_answer(uintptr_t req)
{
    for (size_t k = 0; k < f.n_commits; k++) {
        if (f.commits[k].req == req) {
            return &f.commits[k];
        }
    }
    return NULL;
}

/* Zero or NULL fields take defaults. protocols: comma-separated names,
 * each with metadata `metadata` (default: "md-" + client). */
struct join_args {
    const char *group;
    const char *member;
    const char *instance;
    const char *client;
    const char *protocols;
    const char *protocol_type;
    const char *metadata;
    int32_t session_ms;
    int32_t rebalance_ms;
    bool old_version; /* below v4: no MEMBER_ID_REQUIRED */
};

static uintptr_t do_join(struct join_args a)
{
    char names[MEMBERS_MAX][STR_MAX];
    char md[STR_MAX];
    struct group_protocol protos[MEMBERS_MAX];
    size_t n = 0;
    const char *client = a.client != NULL ? a.client : "c";
    snprintf(md, sizeof md, "%s", a.metadata != NULL ? a.metadata : "md-");
    if (a.metadata == NULL) {
        snprintf(md, sizeof md, "md-%s", client);
    }
    const char *p = a.protocols != NULL ? a.protocols : "range";
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        cr_assert_lt(n, MEMBERS_MAX);
        memcpy(names[n], p, len);
        names[n][len] = '\0';
        protos[n] = (struct group_protocol){S(names[n]), S(md)};
        n++;
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    struct group_join_request r = {
        .group_id = S(a.group != NULL ? a.group : "g"),
        .member_id = S(a.member != NULL ? a.member : ""),
        .group_instance_id = S(a.instance), /* NULL gives null */
        .client_id = S(client),
        .client_host = S("/127.0.0.1"),
        .protocol_type = S(a.protocol_type != NULL ? a.protocol_type
                                                   : "consumer"),
        .protocols = protos,
        .n_protocols = n,
        .session_timeout_ms = a.session_ms != 0 ? a.session_ms : SESSION_MS,
        .rebalance_timeout_ms =
            a.rebalance_ms != 0 ? a.rebalance_ms : REBALANCE_MS,
        .require_known_member_id = !a.old_version,
    };
    uintptr_t req = next_req++;
    cr_assert_eq(group_join(&gs, (void *)req, &r, now), RC_OK);
    return req;
}

#define JOIN(...) do_join((struct join_args){__VA_ARGS__})

/* A dynamic member's first join (v4): MEMBER_ID_REQUIRED, then the join
 * with the given id, which parks. Returns the parked request; the id goes
 * to id_out. */
static uintptr_t join_new(const char *client, char *id_out)
{
    uintptr_t first = JOIN(.client = client);
    const struct join_rec *r = join_answered(first);
    cr_assert_eq(r->error, KAFKA_ERROR_MEMBER_ID_REQUIRED);
    snprintf(id_out, STR_MAX, "%s", r->member_id);
    return JOIN(.client = client, .member = id_out);
}

static uintptr_t rejoin(const char *client, const char *id)
{
    return JOIN(.client = client, .member = id);
}

struct sync_args {
    const char *group;
    const char *member;
    const char *instance;
    int32_t generation;
    const char *to[MEMBERS_MAX];   /* leader: member ids ... */
    const char *what[MEMBERS_MAX]; /* ... and their assignments */
};

static uintptr_t do_sync(struct sync_args a)
{
    struct group_assignment as[MEMBERS_MAX];
    size_t n = 0;
    while (n < MEMBERS_MAX && a.to[n] != NULL) {
        as[n] = (struct group_assignment){S(a.to[n]), S(a.what[n])};
        n++;
    }
    struct group_sync_request r = {
        .group_id = S(a.group != NULL ? a.group : "g"),
        .generation_id = a.generation,
        .member_id = S(a.member),
        .group_instance_id = S(a.instance),
        .protocol_type = slice_null(),
        .protocol_name = slice_null(),
        .assignments = as,
        .n_assignments = n,
    };
    uintptr_t req = next_req++;
    cr_assert_eq(group_sync(&gs, (void *)req, &r, now), RC_OK);
    return req;
}

#define SYNC(...) do_sync((struct sync_args){__VA_ARGS__})

static int16_t heartbeat(const char *id, int32_t generation)
{
    return group_heartbeat(&gs, S("g"), S(id), slice_null(), generation, now);
}

static uintptr_t commit(const char *group, const char *member,
                        int32_t generation, const char *topic,
                        int32_t partition, int64_t offset)
{
    struct group_commit_partition p = {
        .topic = S(topic),
        .partition = partition,
        .offset = offset,
        .leader_epoch = 3,
        .metadata = S("meta"),
    };
    struct group_commit_request r = {
        .group_id = S(group),
        .generation_id = generation,
        .member_id = S(member),
        .group_instance_id = slice_null(),
        .partitions = &p,
        .n_partitions = 1,
    };
    uintptr_t req = next_req++;
    cr_assert_eq(group_offset_commit(&gs, (void *)req, &r, now), RC_OK);
    return req;
}

/* The last persist request is written: tell the core. */
static void persisted(int16_t error)
{
    cr_assert_gt(f.n_persists, 0);
    group_offsets_persisted(&gs, f.persists[f.n_persists - 1].token, error);
}

static void tick_at(int64_t t)
{
    now = t;
    group_tick(&gs, now);
}

static const struct group *grp(const char *id)
{
    return group_find(&gs, S(id));
}

static enum group_state state(void)
{
    const struct group *g = grp("g");
    cr_assert_not_null(g);
    return g->state;
}

/* Two dynamic members a (leader) and b in a Stable group "g" of
 * generation 1, assigned "A" and "B". */
static void stable_pair(char *a, char *b)
{
    uintptr_t ja = join_new("ca", a);
    uintptr_t jb = join_new("cb", b);
    tick_at(now); /* initial delay 0 */
    cr_assert_eq(join_answered(ja)->error, KAFKA_ERROR_NONE);
    cr_assert_eq(join_answered(jb)->error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(join_answered(ja)->leader, a);
    uintptr_t sb = SYNC(.member = b, .generation = 1);
    uintptr_t sa = SYNC(.member = a, .generation = 1, .to = {a, b},
                        .what = {"A", "B"});
    cr_assert_eq(sync_answer(sa)->error, KAFKA_ERROR_NONE);
    cr_assert_eq(sync_answer(sb)->error, KAFKA_ERROR_NONE);
    cr_assert_eq(state(), GROUP_STATE_STABLE);
}

/* --- JoinGroup ------------------------------------------------------------ */

Test(group, member_id_required_then_join)
{
    uintptr_t first = JOIN(.client = "consumer-1");
    const struct join_rec *r = join_answered(first);
    cr_assert_eq(r->error, KAFKA_ERROR_MEMBER_ID_REQUIRED);
    cr_assert_eq(r->generation, -1);
    cr_assert_eq(strncmp(r->member_id, "consumer-1-", 11), 0, "%s",
                 r->member_id);
    cr_assert_eq(strlen(r->member_id), strlen("consumer-1-") + 36,
                 "a UUID-shaped suffix: %s", r->member_id);
    char id[STR_MAX];
    snprintf(id, sizeof id, "%s", r->member_id);
    cr_assert_eq(state(), GROUP_STATE_EMPTY, "nothing changes yet");
    cr_assert_eq(grp("g")->n_members, 0);
    cr_assert_eq(grp("g")->n_pending, 1);

    /* Another first join gets another id. */
    uintptr_t other = JOIN(.client = "consumer-1");
    cr_assert_str_neq(join_answered(other)->member_id, id);

    uintptr_t second = JOIN(.client = "consumer-1", .member = id);
    cr_assert_null(join_answer(second), "parked during the initial delay");
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);

    tick_at(now); /* the initial delay (0 here) ends the join phase */
    r = join_answered(second);
    cr_assert_eq(r->error, KAFKA_ERROR_NONE);
    cr_assert_eq(r->generation, 1);
    cr_assert_str_eq(r->member_id, id);
    cr_assert_str_eq(r->leader, id);
    cr_assert_str_eq(r->protocol, "range");
    cr_assert_eq(r->n_members, 1);
    cr_assert_eq(state(), GROUP_STATE_COMPLETING_REBALANCE);
    cr_assert_eq(grp("g")->n_pending, 1, "the other id is still pending");
    tick_at(now + SESSION_MS);
    cr_assert_eq(grp("g")->n_pending, 0, "until its session timeout");
}

Test(group, member_id_generation_is_deterministic)
{
    uintptr_t a = JOIN(.client = "x");
    char first[STR_MAX];
    snprintf(first, sizeof first, "%s", join_answered(a)->member_id);
    group_free(&gs);
    memset(&f, 0, sizeof f);
    group_init(&gs, &io, &cfg);
    uintptr_t b = JOIN(.client = "x");
    cr_assert_str_eq(join_answered(b)->member_id, first,
                     "same seed, same counter, same id");
}

Test(group, old_version_join_gets_an_id_at_once)
{
    uintptr_t j = JOIN(.client = "old", .old_version = true);
    cr_assert_null(join_answer(j), "added and parked");
    tick_at(now);
    const struct join_rec *r = join_answered(j);
    cr_assert_eq(r->error, KAFKA_ERROR_NONE);
    cr_assert_eq(strncmp(r->member_id, "old-", 4), 0);
}

Test(group, two_members_join_leader_gets_every_metadata)
{
    char a[STR_MAX];
    char b[STR_MAX];
    uintptr_t ja = join_new("ca", a);
    uintptr_t jb = join_new("cb", b);
    cr_assert_null(join_answer(ja));
    cr_assert_null(join_answer(jb));
    tick_at(now);

    const struct join_rec *ra = join_answered(ja);
    const struct join_rec *rb = join_answered(jb);
    cr_assert_eq(ra->error, KAFKA_ERROR_NONE);
    cr_assert_eq(rb->error, KAFKA_ERROR_NONE);
    cr_assert_eq(ra->generation, 1);
    cr_assert_eq(rb->generation, 1);
    cr_assert_str_eq(ra->leader, a, "the first to join leads");
    cr_assert_str_eq(rb->leader, a);
    cr_assert_eq(ra->n_members, 2);
    cr_assert_str_eq(ra->members[0], a);
    cr_assert_str_eq(ra->metadata[0], "md-ca");
    cr_assert_str_eq(ra->members[1], b);
    cr_assert_str_eq(ra->metadata[1], "md-cb");
    cr_assert_eq(rb->n_members, 0, "followers get no member list");
    cr_assert_str_eq(rb->member_id, b);
}

Test(group, sync_completes_both_with_their_assignments)
{
    char a[STR_MAX];
    char b[STR_MAX];
    join_new("ca", a);
    join_new("cb", b);
    tick_at(now);

    uintptr_t sb = SYNC(.member = b, .generation = 1);
    cr_assert_null(sync_answer(sb), "a follower waits for the leader");
    cr_assert_eq(state(), GROUP_STATE_COMPLETING_REBALANCE);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_NONE,
                 "heartbeats are fine while completing");

    uintptr_t sa = SYNC(.member = a, .generation = 1, .to = {a, b},
                        .what = {"assign-a", "assign-b"});
    cr_assert_eq(sync_answer(sa)->error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(sync_answer(sa)->assignment, "assign-a");
    cr_assert_str_eq(sync_answer(sa)->protocol, "range");
    cr_assert_eq(sync_answer(sb)->error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(sync_answer(sb)->assignment, "assign-b");
    cr_assert_eq(state(), GROUP_STATE_STABLE);

    /* A SyncGroup in Stable returns the stored assignment. */
    uintptr_t again = SYNC(.member = b, .generation = 1);
    cr_assert_str_eq(sync_answer(again)->assignment, "assign-b");
    uintptr_t stale = SYNC(.member = b, .generation = 0);
    cr_assert_eq(sync_answer(stale)->error, KAFKA_ERROR_ILLEGAL_GENERATION);
    uintptr_t unknown = SYNC(.member = "nobody", .generation = 1);
    cr_assert_eq(sync_answer(unknown)->error, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
}

Test(group, leader_leaving_out_a_member_gives_it_an_empty_assignment)
{
    char a[STR_MAX];
    char b[STR_MAX];
    join_new("ca", a);
    join_new("cb", b);
    tick_at(now);
    uintptr_t sb = SYNC(.member = b, .generation = 1);
    SYNC(.member = a, .generation = 1, .to = {a}, .what = {"all"});
    cr_assert_eq(sync_answer(sb)->error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(sync_answer(sb)->assignment, "");
}

Test(group, third_member_makes_others_rejoin_and_generation_increments)
{
    char a[STR_MAX];
    char b[STR_MAX];
    char c[STR_MAX];
    stable_pair(a, b);
    uintptr_t jc = join_new("cc", c);
    cr_assert_null(join_answer(jc));
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
    cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_REBALANCE_IN_PROGRESS);

    uintptr_t ja = rejoin("ca", a);
    cr_assert_null(join_answer(ja), "b has not rejoined yet");
    uintptr_t jb = rejoin("cb", b);

    /* Everyone is in: the join phase ends at once (not an initial one). */
    const struct join_rec *ra = join_answered(ja);
    cr_assert_eq(ra->generation, 2);
    cr_assert_str_eq(ra->leader, a, "the old leader stays leader");
    cr_assert_eq(ra->n_members, 3);
    cr_assert_eq(join_answered(jb)->generation, 2);
    cr_assert_eq(join_answered(jc)->generation, 2);
    cr_assert_eq(join_answered(jc)->n_members, 0);
    cr_assert_eq(state(), GROUP_STATE_COMPLETING_REBALANCE);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_ILLEGAL_GENERATION);
    cr_assert_eq(heartbeat(b, 2), KAFKA_ERROR_NONE);
}

Test(group, follower_rejoining_stable_group_unchanged_gets_current_generation)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    uintptr_t jb = rejoin("cb", b);
    const struct join_rec *r = join_answered(jb);
    cr_assert_eq(r->error, KAFKA_ERROR_NONE);
    cr_assert_eq(r->generation, 1);
    cr_assert_eq(state(), GROUP_STATE_STABLE, "no rebalance");

    /* The leader rejoining forces one. */
    uintptr_t ja = rejoin("ca", a);
    cr_assert_null(join_answer(ja));
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
}

Test(group, rebalance_timeout_removes_member_that_does_not_rejoin)
{
    char a[STR_MAX];
    char b[STR_MAX];
    char c[STR_MAX];
    stable_pair(a, b);
    int64_t start = now;
    uintptr_t jc = join_new("cc", c);
    uintptr_t ja = rejoin("ca", a);
    /* b keeps heartbeating (its session stays alive) but never rejoins. */
    for (int64_t t = start + 5000; t < start + REBALANCE_MS; t += 5000) {
        tick_at(t);
        cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    }
    tick_at(start + REBALANCE_MS - 1);
    cr_assert_null(join_answer(ja));
    tick_at(start + REBALANCE_MS);

    const struct join_rec *ra = join_answered(ja);
    cr_assert_eq(ra->error, KAFKA_ERROR_NONE);
    cr_assert_eq(ra->generation, 2);
    cr_assert_eq(ra->n_members, 2);
    cr_assert_str_eq(ra->members[0], a);
    cr_assert_str_eq(ra->members[1], c);
    cr_assert_eq(join_answered(jc)->error, KAFKA_ERROR_NONE);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_eq(grp("g")->n_members, 2);
}

Test(group, session_expiry_removes_member_and_rebalances)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    int64_t start = now;
    for (int64_t t = start + 3000; t < start + SESSION_MS; t += 3000) {
        tick_at(t);
        cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_NONE);
    }
    tick_at(start + SESSION_MS - 1);
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    cr_assert_eq(grp("g")->n_members, 2);
    tick_at(start + SESSION_MS); /* b's session ends */
    cr_assert_eq(grp("g")->n_members, 1);
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_REBALANCE_IN_PROGRESS);

    uintptr_t ja = rejoin("ca", a);
    const struct join_rec *r = join_answered(ja);
    cr_assert_eq(r->generation, 2);
    cr_assert_eq(r->n_members, 1);

    /* The story in events: formed, timed out, rebalanced. */
    int formed = event_index(0, "group g stable at generation 1, 2 members");
    cr_assert_geq(formed, 0, "events: %zu", n_events);
    char why[STR_MAX + 128];
    snprintf(why, sizeof why, "group g rebalancing at generation 1, 1 member "
             "(member %.48s%s timed out (no heartbeat within its session "
             "timeout))", b, strlen(b) > 48 ? "..." : "");
    int expired = event_index((size_t)formed, why);
    cr_assert_geq(expired, 0, "want '%s' after event %d", why, formed);
    cr_assert_geq(event_index((size_t)expired,
                              "group g generation 2: 1 member"), 0);
}

Test(group, member_that_never_syncs_is_removed)
{
    char a[STR_MAX];
    char b[STR_MAX];
    join_new("ca", a);
    join_new("cb", b);
    tick_at(now);
    int64_t joined = now;
    uintptr_t sa = SYNC(.member = a, .generation = 1, .to = {a, b},
                        .what = {"A", "B"});
    cr_assert_eq(sync_answer(sa)->error, KAFKA_ERROR_NONE);
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    /* b heartbeats (its session stays alive) but never syncs. */
    for (int64_t t = joined + 5000; t < joined + REBALANCE_MS; t += 5000) {
        tick_at(t);
        cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_NONE);
        cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_NONE);
    }
    tick_at(joined + REBALANCE_MS - 1);
    cr_assert_eq(grp("g")->n_members, 2);
    tick_at(joined + REBALANCE_MS); /* b owes its SyncGroup */
    cr_assert_eq(grp("g")->n_members, 1);
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
}

/* --- LeaveGroup ----------------------------------------------------------- */

Test(group, leave_of_unknown_member_changes_nothing)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    size_t answers = f.n_joins + f.n_syncs;
    struct group_leave_member lm = {.member_id = S("who"),
                                    .group_instance_id = slice_null()};
    cr_assert_eq(group_leave(&gs, S("g"), &lm, 1, now), KAFKA_ERROR_NONE);
    cr_assert_eq(lm.error_code, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    cr_assert_eq(grp("g")->generation_id, 1);
    cr_assert_eq(grp("g")->n_members, 2);
    cr_assert_eq(f.n_joins + f.n_syncs, answers);
    cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_NONE);

    struct group_leave_member nogroup = {.member_id = S(a),
                                         .group_instance_id = slice_null()};
    cr_assert_eq(group_leave(&gs, S("other"), &nogroup, 1, now),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(nogroup.error_code, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_null(grp("other"));
}

Test(group, leave_removes_member_and_rebalances)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    struct group_leave_member lm = {.member_id = S(a),
                                    .group_instance_id = slice_null()};
    cr_assert_eq(group_leave(&gs, S("g"), &lm, 1, now), KAFKA_ERROR_NONE);
    cr_assert_eq(lm.error_code, KAFKA_ERROR_NONE);
    cr_assert_eq(grp("g")->n_members, 1);
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
    cr_assert_eq(heartbeat(b, 1), KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    uintptr_t jb = rejoin("cb", b);
    cr_assert_str_eq(join_answered(jb)->leader, b, "b leads now");
    cr_assert_eq(join_answered(jb)->generation, 2);

    /* The last member leaving empties the group. */
    struct group_leave_member lb = {.member_id = S(b),
                                    .group_instance_id = slice_null()};
    cr_assert_eq(group_leave(&gs, S("g"), &lb, 1, now), KAFKA_ERROR_NONE);
    cr_assert_eq(state(), GROUP_STATE_EMPTY);
    cr_assert_eq(grp("g")->generation_id, 3);
}

/* --- Offsets -------------------------------------------------------------- */

Test(group, offset_commit_with_wrong_generation_is_illegal_generation)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    uintptr_t old = commit("g", a, 0, "t", 0, 10);
    cr_assert_eq(commit_answer(old)->errors[0],
                 KAFKA_ERROR_ILLEGAL_GENERATION);
    uintptr_t future = commit("g", a, 2, "t", 0, 10);
    cr_assert_eq(commit_answer(future)->errors[0],
                 KAFKA_ERROR_ILLEGAL_GENERATION);
    uintptr_t stranger = commit("g", "nobody", 1, "t", 0, 10);
    cr_assert_eq(commit_answer(stranger)->errors[0],
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    uintptr_t simple = commit("g", "", -1, "t", 0, 10);
    cr_assert_eq(commit_answer(simple)->errors[0],
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID,
                 "standalone commits only to groups without members");
    uintptr_t nogroup = commit("none", "x", 1, "t", 0, 10);
    cr_assert_eq(commit_answer(nogroup)->errors[0],
                 KAFKA_ERROR_ILLEGAL_GENERATION);
    cr_assert_eq(f.n_persists, 0, "nothing written");
    cr_assert_null(group_offset_get(&gs, S("g"), S("t"), 0));
}

Test(group, offset_commit_is_answered_after_persisting)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    uintptr_t c = commit("g", a, 1, "t", 0, 42);
    cr_assert_null(commit_answer(c), "waits for the write");
    cr_assert_eq(f.n_persists, 1);
    cr_assert_str_eq(f.persists[0].group, "g");
    cr_assert_eq(f.persists[0].partition, 1, "partition_for(\"g\")");
    cr_assert_eq(f.persists[0].offsets[0], 42);
    cr_assert_eq(f.persists[0].timestamps[0], now);
    cr_assert_null(group_offset_get(&gs, S("g"), S("t"), 0),
                   "not visible before the write");
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(c)->errors[0], KAFKA_ERROR_NONE);
    const struct group_offset *o = group_offset_get(&gs, S("g"), S("t"), 0);
    cr_assert_not_null(o);
    cr_assert_eq(o->offset, 42);
    cr_assert_eq(o->leader_epoch, 3);
    cr_assert_eq(o->metadata.len, 4);
    cr_assert_eq(memcmp(o->metadata.ptr, "meta", 4), 0);

    /* A failed write is answered with the adapter's code and applies
     * nothing. */
    uintptr_t c2 = commit("g", a, 1, "t", 0, 50);
    persisted(KAFKA_ERROR_NOT_COORDINATOR);
    cr_assert_eq(commit_answer(c2)->errors[0], KAFKA_ERROR_NOT_COORDINATOR);
    cr_assert_eq(group_offset_get(&gs, S("g"), S("t"), 0)->offset, 42);

    /* A write refused at once is answered at once. */
    f.persist_answer = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    uintptr_t c3 = commit("g", a, 1, "t", 0, 60);
    cr_assert_eq(commit_answer(c3)->errors[0],
                 KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
}

Test(group, offset_commit_during_completing_rebalance_is_rebalance_in_progress)
{
    char a[STR_MAX];
    char b[STR_MAX];
    join_new("ca", a);
    join_new("cb", b);
    tick_at(now);
    cr_assert_eq(state(), GROUP_STATE_COMPLETING_REBALANCE);
    uintptr_t c = commit("g", a, 1, "t", 0, 1);
    cr_assert_eq(commit_answer(c)->errors[0],
                 KAFKA_ERROR_REBALANCE_IN_PROGRESS);
}

Test(group, oversized_offset_metadata_is_refused_per_partition)
{
    char big[GROUP_OFFSET_METADATA_BYTES_MAX_DEFAULT + 1];
    memset(big, 'x', sizeof big);
    struct group_commit_partition p[2] = {
        {.topic = S("t"), .partition = 0, .offset = 1, .leader_epoch = -1,
         .metadata = {(const uint8_t *)big, sizeof big}},
        {.topic = S("t"), .partition = 1, .offset = 2, .leader_epoch = -1,
         .metadata = slice_null()},
    };
    struct group_commit_request r = {.group_id = S("s"),
                                     .generation_id = -1,
                                     .member_id = S(""),
                                     .group_instance_id = slice_null(),
                                     .partitions = p,
                                     .n_partitions = 2};
    cr_assert_eq(group_offset_commit(&gs, (void *)77, &r, now), RC_OK);
    cr_assert_eq(f.persists[0].n, 1, "only the valid one is written");
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(77)->errors[0],
                 KAFKA_ERROR_OFFSET_METADATA_TOO_LARGE);
    cr_assert_eq(commit_answer(77)->errors[1], KAFKA_ERROR_NONE);
    const struct group_offset *o = group_offset_get(&gs, S("s"), S("t"), 1);
    cr_assert_eq(o->offset, 2);
    cr_assert_not_null(o->metadata.ptr, "null metadata is stored as \"\"");
    cr_assert_eq(o->metadata.len, 0);
}

Test(group, committed_offsets_survive_rebalances_and_member_changes)
{
    char a[STR_MAX];
    char b[STR_MAX];
    char c[STR_MAX];
    stable_pair(a, b);
    commit("g", b, 1, "t", 3, 300);
    persisted(KAFKA_ERROR_NONE);

    /* c joins, b leaves: the offset committed by b stays. */
    uintptr_t jc = join_new("cc", c);
    rejoin("ca", a);
    struct group_leave_member lb = {.member_id = S(b),
                                    .group_instance_id = slice_null()};
    group_leave(&gs, S("g"), &lb, 1, now);
    cr_assert_eq(join_answered(jc)->generation, 2);
    cr_assert_eq(group_offset_get(&gs, S("g"), S("t"), 3)->offset, 300);

    SYNC(.member = c, .generation = 2);
    SYNC(.member = a, .generation = 2, .to = {a, c}, .what = {"A", "C"});
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    uintptr_t cc = commit("g", c, 2, "t", 3, 301);
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(cc)->errors[0], KAFKA_ERROR_NONE);
    cr_assert_eq(group_offset_get(&gs, S("g"), S("t"), 3)->offset, 301);

    /* Everyone gone: the group is Empty and keeps its offsets. */
    struct group_leave_member both[2] = {
        {.member_id = S(a), .group_instance_id = slice_null()},
        {.member_id = S(c), .group_instance_id = slice_null()},
    };
    group_leave(&gs, S("g"), both, 2, now);
    cr_assert_eq(state(), GROUP_STATE_EMPTY);
    cr_assert_eq(group_offset_get(&gs, S("g"), S("t"), 3)->offset, 301);
    tick_at(now + 2 * GROUP_SWEEP_INTERVAL_MS_DEFAULT);
    cr_assert_not_null(grp("g"), "a group with offsets is not swept");
}

Test(group, standalone_commit_on_empty_group)
{
    cr_assert_null(grp("solo"));
    uintptr_t c = commit("solo", "", -1, "t", 0, 7);
    cr_assert_not_null(grp("solo"), "created for the commit");
    cr_assert_eq(grp("solo")->state, GROUP_STATE_EMPTY);
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(c)->errors[0], KAFKA_ERROR_NONE);
    cr_assert_eq(group_offset_get(&gs, S("solo"), S("t"), 0)->offset, 7);

    uintptr_t again = commit("solo", "", -1, "t", 0, 8);
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(again)->errors[0], KAFKA_ERROR_NONE);
    cr_assert_eq(group_offset_get(&gs, S("solo"), S("t"), 0)->offset, 8);
    cr_assert_eq(grp("solo")->n_offsets, 1, "the latest commit wins");
}

/* --- Static membership ---------------------------------------------------- */

Test(group, static_member_rejoin_keeps_assignment_without_rebalance)
{
    uintptr_t ja = JOIN(.client = "ca", .instance = "ia");
    uintptr_t jb = JOIN(.client = "cb", .instance = "ib");
    tick_at(now);
    char a[STR_MAX];
    char b[STR_MAX];
    snprintf(a, sizeof a, "%s", join_answered(ja)->member_id);
    snprintf(b, sizeof b, "%s", join_answered(jb)->member_id);
    cr_assert_eq(strncmp(a, "ia-", 3), 0, "static ids start with the instance");
    SYNC(.member = b, .generation = 1, .instance = "ib");
    SYNC(.member = a, .generation = 1, .instance = "ia", .to = {a, b},
         .what = {"A", "B"});
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    size_t syncs = f.n_syncs;

    /* a restarts: same instance id, empty member id. */
    uintptr_t again = JOIN(.client = "ca", .instance = "ia");
    const struct join_rec *r = join_answered(again);
    cr_assert_eq(r->error, KAFKA_ERROR_NONE);
    cr_assert_eq(r->generation, 1, "no new generation");
    cr_assert_str_neq(r->member_id, a, "a new member id");
    cr_assert_str_eq(r->leader, a, "the old leader id: stay a follower");
    cr_assert_eq(r->n_members, 0);
    cr_assert_eq(state(), GROUP_STATE_STABLE);
    cr_assert_eq(f.n_syncs, syncs);
    char a2[STR_MAX];
    snprintf(a2, sizeof a2, "%s", r->member_id);

    uintptr_t s = SYNC(.member = a2, .generation = 1, .instance = "ia");
    cr_assert_eq(sync_answer(s)->error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(sync_answer(s)->assignment, "A", "kept its assignment");
    cr_assert_eq(group_heartbeat(&gs, S("g"), S(b), S("ib"), 1, now),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(group_heartbeat(&gs, S("g"), S(a), S("ia"), 1, now),
                 KAFKA_ERROR_FENCED_INSTANCE_ID, "the old id is fenced");
    cr_assert_eq(group_heartbeat(&gs, S("g"), S(a2), S("ia"), 1, now),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(grp("g")->n_members, 2);
}

Test(group, static_member_missing_rebalance_is_kept)
{
    uintptr_t ja = JOIN(.client = "ca", .instance = "ia");
    uintptr_t jb = JOIN(.client = "cb", .instance = "ib");
    tick_at(now);
    char a[STR_MAX];
    char b[STR_MAX];
    snprintf(a, sizeof a, "%s", join_answered(ja)->member_id);
    snprintf(b, sizeof b, "%s", join_answered(jb)->member_id);
    SYNC(.member = b, .generation = 1, .instance = "ib");
    SYNC(.member = a, .generation = 1, .instance = "ia", .to = {a, b},
         .what = {"A", "B"});
    int64_t start = now;
    /* a's leader rejoin starts a rebalance; b heartbeats but does not
     * rejoin in time. */
    uintptr_t ra = JOIN(.client = "ca", .member = a, .instance = "ia");
    for (int64_t t = start + 5000; t < start + REBALANCE_MS; t += 5000) {
        tick_at(t);
        cr_assert_eq(group_heartbeat(&gs, S("g"), S(b), S("ib"), 1, now),
                     KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    }
    cr_assert_null(join_answer(ra));
    tick_at(start + REBALANCE_MS);
    cr_assert_eq(join_answered(ra)->generation, 2);
    cr_assert_eq(join_answered(ra)->n_members, 2,
                 "a static member is kept past the rebalance timeout");
}

/* --- Validation ----------------------------------------------------------- */

Test(group, invalid_session_timeout)
{
    uintptr_t low =
        JOIN(.session_ms = GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT - 1);
    cr_assert_eq(join_answered(low)->error,
                 KAFKA_ERROR_INVALID_SESSION_TIMEOUT);
    uintptr_t high =
        JOIN(.session_ms = GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT + 1);
    cr_assert_eq(join_answered(high)->error,
                 KAFKA_ERROR_INVALID_SESSION_TIMEOUT);
    cr_assert_null(grp("g"), "no group created");
    uintptr_t ok = JOIN(.session_ms = GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT);
    cr_assert_eq(join_answered(ok)->error, KAFKA_ERROR_MEMBER_ID_REQUIRED);
}

Test(group, join_errors_for_unknown_member_and_bad_group_id)
{
    uintptr_t j = JOIN(.member = "made-up");
    cr_assert_eq(join_answered(j)->error, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_null(grp("g"));
    uintptr_t e = JOIN(.group = "");
    cr_assert_eq(join_answered(e)->error, KAFKA_ERROR_INVALID_GROUP_ID);
}

/* --- Protocol selection --------------------------------------------------- */

/* Joins each client with its protocols, runs the initial rebalance and
 * returns the chosen protocol (from the first member's answer). */
static const char *chosen(const char *const *protos, size_t n)
{
    uintptr_t first = 0;
    for (size_t k = 0; k < n; k++) {
        char client[32];
        snprintf(client, sizeof client, "c%zu", k);
        uintptr_t j = JOIN(.client = client, .protocols = protos[k],
                           .old_version = true);
        if (k == 0) {
            first = j;
        }
    }
    tick_at(now);
    const struct join_rec *r = join_answered(first);
    cr_assert_eq(r->error, KAFKA_ERROR_NONE);
    return r->protocol;
}

Test(group, protocol_selection_only_common_protocols)
{
    const char *p[] = {"roundrobin,range", "range,roundrobin", "range"};
    cr_assert_str_eq(chosen(p, 3), "range",
                     "roundrobin is not supported by every member");
}

Test(group, protocol_selection_by_preference_votes)
{
    const char *p[] = {"range,roundrobin", "roundrobin,range",
                       "roundrobin,range"};
    cr_assert_str_eq(chosen(p, 3), "roundrobin", "two votes to one");
}

Test(group, protocol_selection_tie_goes_to_earliest_member)
{
    const char *p[] = {"range,roundrobin", "roundrobin,range"};
    cr_assert_str_eq(chosen(p, 2), "range");
}

Test(group, inconsistent_group_protocol)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    uintptr_t none = JOIN(.client = "cx", .protocols = "sticky");
    cr_assert_eq(join_answered(none)->error,
                 KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
    uintptr_t type = JOIN(.client = "cy", .protocol_type = "connect");
    cr_assert_eq(join_answered(type)->error,
                 KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
    uintptr_t ok = JOIN(.client = "cz", .protocols = "sticky,range");
    cr_assert_eq(join_answered(ok)->error, KAFKA_ERROR_MEMBER_ID_REQUIRED);
    cr_assert_eq(state(), GROUP_STATE_STABLE, "nothing changed");
}

/* --- Initial rebalance delay ---------------------------------------------- */

Test(group, initial_rebalance_waits_and_extends_while_members_arrive)
{
    group_free(&gs);
    setup_with_delay(3000);
    int64_t start = now;
    uintptr_t ja = JOIN(.client = "ca", .old_version = true);
    tick_at(start + 1000);
    uintptr_t jb = JOIN(.client = "cb", .old_version = true);
    tick_at(start + 2999);
    cr_assert_null(join_answer(ja));
    tick_at(start + 3000); /* b arrived: one more delay */
    cr_assert_null(join_answer(ja));
    tick_at(start + 5999);
    cr_assert_null(join_answer(ja));
    tick_at(start + 6000);
    cr_assert_eq(join_answered(ja)->generation, 1);
    cr_assert_eq(join_answered(jb)->generation, 1);
    cr_assert_eq(join_answered(ja)->n_members, 2);
}

/* --- DescribeGroups / ListGroups / DeleteGroups --------------------------- */

Test(group, describe_list_and_delete)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    const struct group *g = grp("g");
    cr_assert_str_eq(group_state_name(g), "Stable");
    struct slice type = group_summary_protocol_type(g);
    cr_assert(slice_eq_str(type, "consumer"));
    cr_assert(slice_eq_str(group_summary_protocol(g), "range"));
    cr_assert_eq(g->n_members, 2);
    struct group_member_summary ms;
    group_summary_member(g, 1, &ms);
    cr_assert(slice_eq_str(ms.member_id, b));
    cr_assert(slice_eq_str(ms.client_id, "cb"));
    cr_assert(slice_eq_str(ms.client_host, "/127.0.0.1"));
    cr_assert(slice_eq_str(ms.metadata, "md-cb"));
    cr_assert(slice_eq_str(ms.assignment, "B"));
    cr_assert(slice_is_null(ms.group_instance_id));
    cr_assert_str_eq(group_state_name(grp("unknown")), "Dead");
    cr_assert_null(grp("unknown"));

    commit("other", "", -1, "t", 0, 5);
    persisted(KAFKA_ERROR_NONE);
    cr_assert_eq(gs.n, 2);
    cr_assert(slice_eq_str(gs.v[0]->id, "g"), "listed in id order");
    cr_assert(slice_eq_str(gs.v[1]->id, "other"));
    cr_assert(slice_eq_str(group_summary_protocol_type(gs.v[1]), ""));
    cr_assert_str_eq(group_state_name(gs.v[1]), "Empty");

    cr_assert_eq(group_delete(&gs, S("g")), KAFKA_ERROR_NON_EMPTY_GROUP);
    cr_assert_eq(group_delete(&gs, S("nope")), KAFKA_ERROR_GROUP_ID_NOT_FOUND);
    cr_assert_eq(f.n_tombstones, 0);
    cr_assert_eq(group_delete(&gs, S("other")), KAFKA_ERROR_NONE);
    cr_assert_eq(f.n_tombstones, 1);
    cr_assert_str_eq(f.tombstones[0].group, "other");
    cr_assert_eq(f.tombstones[0].n, 1);
    cr_assert_str_eq(f.tombstones[0].topics[0], "t");
    cr_assert_eq(f.tombstones[0].partitions[0], 0);
    cr_assert_null(grp("other"));
    cr_assert_null(group_offset_get(&gs, S("other"), S("t"), 0));
    cr_assert_eq(group_delete(&gs, S("other")),
                 KAFKA_ERROR_GROUP_ID_NOT_FOUND);

    /* Describing outside Stable hides protocol, metadata and assignment. */
    rejoin("ca", a);
    g = grp("g");
    cr_assert_str_eq(group_state_name(g), "PreparingRebalance");
    cr_assert(slice_eq_str(group_summary_protocol(g), ""));
    group_summary_member(g, 0, &ms);
    cr_assert(slice_eq_str(ms.metadata, ""));
    cr_assert(slice_eq_str(ms.assignment, ""));
}

/* --- Loading and unloading ------------------------------------------------ */

Test(group, load_offsets_then_fetch)
{
    cr_assert_eq(group_load_offset(&gs, S("g"), S("t"), 0, 10, 1, S("m0"),
                                   T0 - 10),
                 RC_OK);
    cr_assert_eq(group_load_offset(&gs, S("g"), S("t"), 1, 20, 1,
                                   slice_null(), T0 - 9),
                 RC_OK);
    cr_assert_eq(group_load_offset(&gs, S("g"), S("t"), 0, 11, 2, S("m1"),
                                   T0 - 8),
                 RC_OK, "a later record replaces");
    cr_assert_eq(group_load_offset(&gs, S("g"), S("a"), 5, 50, -1, S(""),
                                   T0 - 7),
                 RC_OK);
    cr_assert_eq(group_load_offset(&gs, S("h"), S("t"), 0, 1, -1, S(""),
                                   T0 - 6),
                 RC_OK);
    group_load_tombstone(&gs, S("g"), S("t"), 1);

    const struct group_offset *o = group_offset_get(&gs, S("g"), S("t"), 0);
    cr_assert_not_null(o);
    cr_assert_eq(o->offset, 11);
    cr_assert_eq(o->leader_epoch, 2);
    cr_assert(slice_eq_str(o->metadata, "m1"));
    cr_assert_eq(o->commit_timestamp_ms, T0 - 8);
    cr_assert_null(group_offset_get(&gs, S("g"), S("t"), 1), "tombstoned");
    cr_assert_null(group_offset_get(&gs, S("g"), S("t"), 9));

    const struct group *g = grp("g");
    cr_assert_eq(g->state, GROUP_STATE_EMPTY);
    cr_assert_eq(g->partition, 1);
    cr_assert_eq(g->n_offsets, 2, "every partition, sorted");
    cr_assert(slice_eq_str(g->offsets[0].topic, "a"));
    cr_assert_eq(g->offsets[0].partition, 5);
    cr_assert(slice_eq_str(g->offsets[1].topic, "t"));

    /* A group whose last offset is tombstoned is gone. */
    group_load_tombstone(&gs, S("h"), S("t"), 0);
    cr_assert_null(grp("h"));

    /* Members can join a loaded group and see its offsets. */
    char a[STR_MAX];
    uintptr_t ja = join_new("ca", a);
    tick_at(now);
    cr_assert_eq(join_answered(ja)->generation, 1);
    cr_assert_eq(group_offset_get(&gs, S("g"), S("t"), 0)->offset, 11);

    group_unload_partition(&gs, 0);
    cr_assert_not_null(grp("g"), "another partition");
    group_unload_partition(&gs, 1);
    cr_assert_null(grp("g"));
}

Test(group, unload_answers_parked_requests_and_orphans_commits)
{
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    uintptr_t c = commit("g", a, 1, "t", 0, 9);
    struct group_commit *token = f.persists[0].token;
    char x[STR_MAX];
    uintptr_t jx = join_new("cx", x);
    uintptr_t ja = rejoin("ca", a);
    cr_assert_null(join_answer(jx));
    group_unload_all(&gs);
    cr_assert_eq(join_answered(jx)->error, KAFKA_ERROR_NOT_COORDINATOR);
    cr_assert_eq(join_answered(ja)->error, KAFKA_ERROR_NOT_COORDINATOR);
    cr_assert_null(grp("g"));
    cr_assert_null(commit_answer(c), "still being written");
    group_offsets_persisted(&gs, token, KAFKA_ERROR_NONE);
    cr_assert_eq(commit_answer(c)->errors[0], KAFKA_ERROR_NONE);
    cr_assert_null(grp("g"), "an orphaned commit creates nothing");
}

Test(group, sweep_forgets_groups_that_hold_nothing)
{
    uintptr_t j = JOIN(.client = "c");
    cr_assert_eq(join_answered(j)->error, KAFKA_ERROR_MEMBER_ID_REQUIRED);
    tick_at(now); /* arms the sweep */
    tick_at(now + GROUP_SWEEP_INTERVAL_MS_DEFAULT);
    cr_assert_null(grp("g"), "the pending id expired, nothing left");
}

/* --- Interpretations ------------------------------------------------------ */

Test(group, superseded_parked_requests_are_answered)
{
    char a[STR_MAX];
    char b[STR_MAX];
    join_new("ca", a);
    join_new("cb", b);
    tick_at(now);
    uintptr_t s1 = SYNC(.member = b, .generation = 1);
    uintptr_t s2 = SYNC(.member = b, .generation = 1); /* a client retry */
    cr_assert_eq(sync_answer(s1)->error, KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    cr_assert_null(sync_answer(s2));
    SYNC(.member = a, .generation = 1, .to = {a, b}, .what = {"A", "B"});
    cr_assert_str_eq(sync_answer(s2)->assignment, "B");

    uintptr_t j1 = rejoin("ca", a); /* the leader: a rebalance */
    uintptr_t j2 = rejoin("ca", a);
    cr_assert_eq(join_answered(j1)->error, KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    cr_assert_null(join_answer(j2));
    uintptr_t jb = rejoin("cb", b);
    cr_assert_eq(join_answered(j2)->generation, 2);
    cr_assert_eq(join_answered(jb)->generation, 2);
}

Test(group, leave_by_instance_id_and_fenced_member_id)
{
    uintptr_t ja = JOIN(.client = "ca", .instance = "ia");
    uintptr_t jb = JOIN(.client = "cb", .instance = "ib");
    tick_at(now);
    char a[STR_MAX];
    snprintf(a, sizeof a, "%s", join_answered(ja)->member_id);
    (void)jb;
    struct group_leave_member wrong = {.member_id = S("not-a"),
                                       .group_instance_id = S("ia")};
    group_leave(&gs, S("g"), &wrong, 1, now);
    cr_assert_eq(wrong.error_code, KAFKA_ERROR_FENCED_INSTANCE_ID);
    cr_assert_eq(grp("g")->n_members, 2);

    struct group_leave_member admin = {.member_id = S(""),
                                       .group_instance_id = S("ia")};
    group_leave(&gs, S("g"), &admin, 1, now);
    cr_assert_eq(admin.error_code, KAFKA_ERROR_NONE);
    cr_assert_eq(grp("g")->n_members, 1);
    cr_assert_eq(state(), GROUP_STATE_PREPARING_REBALANCE);
    cr_assert_eq(heartbeat(a, 1), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_eq(group_heartbeat(&gs, S("nope"), S(a), slice_null(), 1, now),
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID);
}

Test(group, new_member_waiting_too_long_in_join_is_removed)
{
    char a[STR_MAX];
    char b[STR_MAX];
    char c[STR_MAX];
    stable_pair(a, b);
    int64_t start = now;
    /* A huge rebalance timeout: only the new-member join timeout ends c's
     * wait while a and b keep heartbeating without rejoining. */
    uintptr_t first = JOIN(.client = "cc", .rebalance_ms = 1000000);
    snprintf(c, sizeof c, "%s", join_answered(first)->member_id);
    uintptr_t jc = JOIN(.client = "cc", .member = c, .rebalance_ms = 1000000);
    for (int64_t t = start + 5000;
         t < start + GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS_DEFAULT; t += 5000) {
        tick_at(t);
        heartbeat(a, 1);
        heartbeat(b, 1);
    }
    cr_assert_null(join_answer(jc));
    tick_at(start + GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS_DEFAULT);
    const struct join_rec *r = join_answered(jc);
    cr_assert_eq(r->error, KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    cr_assert_str_eq(r->member_id, "");
    cr_assert_eq(grp("g")->n_members, 2);
}

/* --- offsets.retention.minutes -------------------------------------------- */

/* A one-minute retention, swept every second. */
static void short_retention(void)
{
    group_free(&gs);
    cfg.offsets_retention_ms = 60000;
    cfg.sweep_interval_ms = 1000;
    group_init(&gs, &io, &cfg);
}

Test(group, offsets_of_an_emptied_group_expire_together)
{
    short_retention();
    char a[STR_MAX];
    char b[STR_MAX];
    stable_pair(a, b);
    commit("g", a, 1, "t", 0, 10);
    persisted(KAFKA_ERROR_NONE);
    commit("g", b, 1, "t", 1, 20);
    persisted(KAFKA_ERROR_NONE);
    now += 5000; /* the first commit is older than the group's emptiness */
    struct group_leave_member both[2] = {
        {.member_id = S(a), .group_instance_id = slice_null()},
        {.member_id = S(b), .group_instance_id = slice_null()},
    };
    group_leave(&gs, S("g"), both, 2, now);
    cr_assert_eq(state(), GROUP_STATE_EMPTY);
    int64_t empty_at = now;
    tick_at(now); /* arms the sweep */
    tick_at(empty_at + 59500);
    cr_assert_not_null(group_offset_get(&gs, S("g"), S("t"), 0),
                       "not a minute since the group became empty");
    cr_assert_eq(f.n_tombstones, 0);
    tick_at(empty_at + 61000);
    cr_assert_null(grp("g"), "offsets expired, then the group was forgotten");
    cr_assert_eq(f.n_tombstones, 1);
    cr_assert_eq(f.tombstones[0].n, 2, "both offsets get tombstones");
    cr_assert_geq(event_index(0, "group g: 2 committed offsets expired "
                                 "(offsets.retention.minutes=1 passed since "
                                 "the group became empty)"), 0);
}
