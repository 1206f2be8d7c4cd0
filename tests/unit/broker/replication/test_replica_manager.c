/* Tests for broker/replication/replica_manager.c: a broker starts fenced.
 * Until replica_manager_unfence() the manager opens the logs the image
 * names but takes no role from it (no leader, no follower, no "became"
 * line, no re-plan of the fetchers); once unfenced, the next apply takes
 * the roles of the image it is given, once. An apply visits what the
 * image's changes name, not every partition. Real logs in a temporary
 * directory on a private loop; no sockets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/replication/partition.h"
#include "broker/replication/replica_manager.h"
#include "common/io.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "common/topic_config.h"
#include "common/trace.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/tmpdir.h"

#define SELF 1
#define OTHER 2

static struct {
    char dir[4096];
    uv_loop_t loop;
    struct tracer tracer;
    struct replica_manager rm;
    struct meta_image img;
    int n_followers_changed;
    int n_became;   /* "became leader/follower" lines */
    char last[256]; /* the last of them */
    char opened[256]; /* the last "opened N partition logs" line */
    bool closed;    /* the test closed the manager itself */
} f;

static void emit_cb(struct tracer *t, enum trace_level level,
                    const char *file, int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    if (strncmp(msg, "became ", 7) == 0) {
        f.n_became++;
        snprintf(f.last, sizeof f.last, "%s", msg);
    }
    if (strncmp(msg, "opened ", 7) == 0) {
        snprintf(f.opened, sizeof f.opened, "%s", msg);
    }
}

static void followers_changed(void *arg)
{
    (void)arg;
    f.n_followers_changed++;
}

static void setup(void)
{
    memset(&f, 0, sizeof f);
    tmpdir_make(f.dir, sizeof f.dir);
    cr_assert_eq(uv_loop_init(&f.loop), 0);
    f.tracer = (struct tracer){.level = TRACE_LEVEL_INFO, .emit = emit_cb};
    struct replica_manager_config cfg = {
        .broker_id = SELF, .log_dir = f.dir, .lag_max_ms = 10000};
    log_config_default(&cfg.log);
    topic_config_values_default(&cfg.topic_defaults);
    struct replica_manager_hooks hooks = {.followers_changed =
                                              followers_changed};
    cr_assert_eq(
        replica_manager_init(&f.rm, &f.loop, &cfg, &hooks, &f.tracer), RC_OK);
    meta_image_init(&f.img);
}

static void teardown(void)
{
    if (!f.closed) {
        replica_manager_close(&f.rm);
    }
    uv_run(&f.loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&f.loop), 0);
    meta_image_free(&f.img);
    tmpdir_remove(f.dir);
}

TestSuite(replica_manager, .init = setup, .fini = teardown, .timeout = 30);

static struct meta_replica_set pair(void)
{
    return (struct meta_replica_set){.n = 2, .ids = {SELF, OTHER}};
}

/* Topic t with one partition replicated on SELF and OTHER, led by
 * leader. */
static void topic_led_by(int32_t leader)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    snprintf(r.u.topic.name, sizeof r.u.topic.name, "t");
    r.u.topic.id.b[0] = 7;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    r = (struct meta_record){.type = META_REC_PARTITION};
    r.u.partition.topic_id.b[0] = 7;
    r.u.partition.replicas = r.u.partition.isr = pair();
    r.u.partition.leader = leader;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
}

/* The leader of t-0 moves to leader (a new leader epoch). */
static void leader_moves_to(int32_t leader)
{
    struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
    r.u.partition_change.topic_id.b[0] = 7;
    r.u.partition_change.leader = leader;
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.isr =
        (struct meta_replica_set){.n = 1, .ids = {leader}};
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
}

/* Runs the loop until every queued log is open (a batch per turn, or
 * jobs on the threadpool). */
static void settle(void)
{
    for (int i = 0; i < 100000 && (f.rm.pending_next < f.rm.n_pending ||
                                   f.rm.apply_next < f.rm.n_to_apply ||
                                   f.rm.open_jobs > 0);
         i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(f.rm.pending_next, f.rm.n_pending, "logs left unopened");
    cr_assert_eq(f.rm.open_jobs, 0, "open jobs left in flight");
}

static void apply(void)
{
    replica_manager_apply(&f.rm, &f.img);
    settle();
}

static struct partition *t0(void)
{
    struct partition *p = replica_manager_find(&f.rm, "t", 0);
    cr_assert_not_null(p, "t-0 not hosted");
    return p;
}

/* The restarted leader's first image still names it leader (its old
 * incarnation's session lives): it opens the log and takes no role. */
Test(replica_manager, fenced_opens_the_log_but_takes_no_role)
{
    topic_led_by(SELF);
    apply();
    struct partition *p = t0();
    cr_assert_not(partition_is_leader(p));
    cr_assert_eq(p->leader, META_NO_LEADER);
    cr_assert_eq(p->leader_epoch, -1);
    cr_assert_eq(p->follow, PARTITION_FOLLOW_NONE);
    cr_assert_eq(f.n_became, 0, "said \"%s\" while fenced", f.last);
    cr_assert_eq(f.n_followers_changed, 0);
}

/* Registered and caught up: the image has moved the leadership away;
 * the broker takes that role only, once. */
Test(replica_manager, unfenced_takes_the_roles_of_the_current_image_once)
{
    topic_led_by(SELF);
    apply();
    leader_moves_to(OTHER);
    apply();
    cr_assert_eq(f.n_became, 0, "said \"%s\" while fenced", f.last);
    replica_manager_unfence(&f.rm);
    apply();
    struct partition *p = t0();
    cr_assert_not(partition_is_leader(p));
    cr_assert_eq(p->leader, OTHER);
    cr_assert_eq(p->leader_epoch, 1);
    cr_assert_eq(p->follow, PARTITION_FOLLOW_TRUNCATE);
    cr_assert_eq(f.n_became, 1);
    cr_assert(strstr(f.last, "became follower of t-0 at epoch 1") != NULL,
              "%s", f.last);
    cr_assert_eq(f.n_followers_changed, 1);
    apply();
    cr_assert_eq(f.n_became, 1, "the same image said again: %s", f.last);
}

Test(replica_manager, unfenced_leads_what_the_image_gives_it)
{
    topic_led_by(SELF);
    apply();
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert(partition_is_leader(t0()));
    cr_assert_eq(f.n_became, 1);
    cr_assert(strstr(f.last, "became leader of t-0 at epoch 0") != NULL, "%s",
              f.last);
}

/* Topic name (id byte id) of n partitions on SELF and OTHER, all led by
 * leader. */
static void paired_topic(const char *name, uint8_t id, int32_t n,
                         int32_t leader)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    snprintf(r.u.topic.name, sizeof r.u.topic.name, "%s", name);
    r.u.topic.id.b[0] = id;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    for (int32_t i = 0; i < n; i++) {
        r = (struct meta_record){.type = META_REC_PARTITION};
        r.u.partition.topic_id.b[0] = id;
        r.u.partition.partition = i;
        r.u.partition.replicas = r.u.partition.isr = pair();
        r.u.partition.leader = leader;
        cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    }
}

/* --- What an apply visits ------------------------------------------------ */

#define WIDE_PARTITIONS 1000
#define WIDE_HOSTED 10 /* every 100th partition is on SELF */

/* Topic "w" of WIDE_PARTITIONS partitions, WIDE_HOSTED of them hosted
 * here (led by OTHER), the rest on brokers 2 and 3; opened and
 * unfenced, with img recording its changes into c. */
static void wide_topic(struct meta_changes *c)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    snprintf(r.u.topic.name, sizeof r.u.topic.name, "w");
    r.u.topic.id.b[0] = 9;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    for (int32_t i = 0; i < WIDE_PARTITIONS; i++) {
        r = (struct meta_record){.type = META_REC_PARTITION};
        r.u.partition.topic_id.b[0] = 9;
        r.u.partition.partition = i;
        r.u.partition.replicas =
            i % 100 == 0 ? pair()
                         : (struct meta_replica_set){.n = 2, .ids = {2, 3}};
        r.u.partition.isr = r.u.partition.replicas;
        r.u.partition.leader = OTHER;
        cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    }
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert_eq(f.rm.n, WIDE_HOSTED);
    meta_changes_init(c);
    f.img.changes = c;
}

/* The leader of partition p of the topic whose id starts with topic
 * moves to leader (a new leader epoch). */
static void leader_of_moves(uint8_t topic, int32_t p, int32_t leader)
{
    struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
    r.u.partition_change.topic_id.b[0] = topic;
    r.u.partition_change.partition = p;
    r.u.partition_change.leader = leader;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
}

/* The leader of w-p moves to broker 3. */
static void wide_leader_moves(int32_t p)
{
    leader_of_moves(9, p, 3);
}

/* Rejoining thousands of partitions applies thousands of changes: each
 * must cost what it changed, not a walk of every partition (n changes
 * cost n squared visits before). */
Test(replica_manager, a_change_visits_what_changed_not_every_partition)
{
    struct meta_changes c;
    wide_topic(&c);
    f.rm.visits = 0;
    wide_leader_moves(300); /* hosted */
    apply();
    cr_assert_eq(f.rm.visits, 1, "visited %llu partitions",
                 (unsigned long long)f.rm.visits);
    struct partition *p = replica_manager_find(&f.rm, "w", 300);
    cr_assert_not_null(p);
    cr_assert_eq(p->leader, 3, "and it took the change");
    meta_changes_clear(&c);
    f.rm.visits = 0;
    wide_leader_moves(301); /* not hosted */
    apply();
    cr_assert_eq(f.rm.visits, 1);
    meta_changes_clear(&c);
    f.rm.visits = 0;
    struct meta_record r = {.type = META_REC_REGISTER_BROKER};
    r.u.register_broker.broker_id = 5;
    snprintf(r.u.register_broker.host, sizeof r.u.register_broker.host,
             "127.0.0.1");
    r.u.register_broker.port = 9092;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK); /* every hosted one */
    apply();
    cr_assert_eq(f.rm.visits, WIDE_HOSTED);
    meta_changes_clear(&c);
    c.all = true; /* a whole new image: everything */
    f.rm.visits = 0;
    apply();
    cr_assert_eq(f.rm.visits, WIDE_PARTITIONS, "every partition: %llu",
                 (unsigned long long)f.rm.visits);
    f.img.changes = NULL;
    meta_changes_free(&c);
}

#define MANY 300 /* partitions of topic "m", all hosted here */

static int became_at_tick = -1; /* f.n_became when the timer ran */

static void tick_cb(uv_timer_t *t)
{
    became_at_tick = f.n_became;
    uv_close((uv_handle_t *)t, NULL);
}

/* A broker fenced elsewhere makes this one leader of thousands of
 * partitions at once: they are applied a budget at a time, and the loop turns in between (a heartbeat's timer
 * runs before the last of them), instead of standing still for seconds
 * and getting this broker fenced too. */
Test(replica_manager, many_new_leaderships_are_applied_a_budget_per_turn)
{
    paired_topic("m", 11, MANY, OTHER);
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert_eq(f.n_became, MANY, "%d followers", f.n_became);
    struct meta_changes c;
    meta_changes_init(&c);
    f.img.changes = &c;
    for (int32_t i = 0; i < MANY; i++) {
        leader_of_moves(11, i, SELF);
    }
    f.n_became = 0;
    f.rm.apply_budget_ns = 0; /* the least each turn */
    uv_timer_t tick;
    uv_timer_init(&f.loop, &tick);
    uv_timer_start(&tick, tick_cb, 0, 0);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_eq(f.n_became, PARTITIONS_APPLY_MIN, "%d in the first turn",
                 f.n_became);
    settle();
    cr_assert_eq(f.n_became, MANY, "%d leaders in the end", f.n_became);
    cr_assert_geq(became_at_tick, PARTITIONS_APPLY_MIN);
    cr_assert_lt(became_at_tick, MANY, "the timer ran only after all");
    for (int32_t i = 0; i < MANY; i++) {
        struct partition *p = replica_manager_find(&f.rm, "m", i);
        cr_assert_not_null(p);
        cr_assert_eq(p->leader, SELF, "m-%d", i);
    }
    f.img.changes = NULL;
    meta_changes_free(&c);
}

/* A partition reassigned away is dropped by the change alone. */
Test(replica_manager, a_change_that_moves_a_replica_away_drops_it)
{
    struct meta_changes c;
    wide_topic(&c);
    struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
    r.u.partition_change.topic_id.b[0] = 9;
    r.u.partition_change.partition = 500;
    r.u.partition_change.leader = META_LEADER_UNCHANGED;
    r.u.partition_change.replicas_changed = true;
    r.u.partition_change.replicas =
        (struct meta_replica_set){.n = 2, .ids = {OTHER, 3}};
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.isr = r.u.partition_change.replicas;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    f.rm.visits = 0;
    apply();
    cr_assert_eq(f.rm.visits, 1);
    cr_assert_null(replica_manager_find(&f.rm, "w", 500), "dropped");
    cr_assert_eq(f.rm.n, WIDE_HOSTED - 1);
    cr_assert_not_null(replica_manager_find(&f.rm, "w", 600), "the rest stay");
    f.img.changes = NULL;
    meta_changes_free(&c);
}

/* New logs are opened a batch at a time with their syncs left to one
 * syncfs, which is done before they take their roles: after a power
 * loss right after the apply, the new log is there, and it leads. */
Test(replica_manager, new_logs_are_durable_when_they_take_their_roles)
{
    topic_led_by(SELF);
    replica_manager_unfence(&f.rm);
    io_journal_begin();
    replica_manager_apply(&f.rm, &f.img);
    cr_assert(partition_is_leader(t0()), "its role in the same apply");
    io_journal_crash();
    const char *files[] = {"partition.metadata", "leader-epoch-checkpoint",
                           "00000000000000000000.log"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/t-0/%s", f.dir, files[i]);
        FILE *in = fopen(path, "r");
        cr_assert_not_null(in, "%s lost", files[i]);
        fclose(in);
    }
}

/* Many new logs: a turn opens at most a batch, and the batches follow
 * one another until every log is open and led. */
Test(replica_manager, many_new_logs_open_a_batch_per_turn)
{
    int32_t n = PARTITIONS_OPENS_PER_TURN * 2 + 5;
    paired_topic("m", 11, n, SELF);
    replica_manager_unfence(&f.rm);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_leq(f.rm.n, PARTITIONS_OPENS_PER_TURN, "one batch: %zu",
                  f.rm.n);
    for (int i = 0; i < 10000 && f.rm.n < (size_t)n; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    settle();
    cr_assert_eq(f.rm.n, (size_t)n);
    cr_assert_eq(f.n_became, n, "every one leads once synced");
}

#define IN_JOBS (PARTITIONS_OPEN_JOB_MAX * PARTITIONS_OPEN_JOBS + 10)

/* After a power loss (io_journal_crash()), the n logs of topic are
 * there. */
static void assert_survived(const char *topic, int32_t n)
{
    char path[4200];
    for (int32_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s-%d/partition.metadata", f.dir,
                 topic, i);
        FILE *in = fopen(path, "r");
        cr_assert_not_null(in, "%s-%d lost", topic, i);
        fclose(in);
    }
}

/* Past PARTITIONS_OPEN_ASYNC_MIN logs open in jobs on the threadpool:
 * the apply opens none on the loop, PARTITIONS_OPEN_JOBS jobs are in
 * flight, and once they end every log is hosted and led, and survives
 * a power loss (each job's syncfs). */
Test(replica_manager, many_logs_open_in_jobs_off_the_loop)
{
    paired_topic("j", 13, IN_JOBS, SELF);
    replica_manager_unfence(&f.rm);
    io_journal_begin();
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_eq(f.rm.n, 0, "the loop opened %zu itself", f.rm.n);
    cr_assert_eq(f.rm.open_jobs, PARTITIONS_OPEN_JOBS);
    settle();
    cr_assert_eq(f.rm.n, IN_JOBS);
    cr_assert_eq(f.n_became, IN_JOBS, "every one leads");
    io_journal_crash();
    assert_survived("j", IN_JOBS);
    char want[64];
    snprintf(want, sizeof want, "opened %d partition logs in ", IN_JOBS);
    cr_assert(strncmp(f.opened, want, strlen(want)) == 0,
              "one line for the run: \"%s\"", f.opened);
}

/* A topic deleted while its logs open in jobs: what the jobs opened is
 * closed, not hosted. */
Test(replica_manager, a_topic_deleted_while_its_logs_open_is_not_hosted)
{
    paired_topic("d", 14, IN_JOBS, SELF);
    replica_manager_unfence(&f.rm);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_gt(f.rm.open_jobs, 0);
    struct meta_record r = {.type = META_REC_REMOVE_TOPIC};
    r.u.remove_topic.topic_id.b[0] = 14;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    replica_manager_apply(&f.rm, &f.img);
    settle();
    cr_assert_eq(f.rm.n, 0, "%zu hosted", f.rm.n);
    cr_assert_null(replica_manager_find(&f.rm, "d", 0));
}

/* Closed with jobs in flight: they end, their logs close, and the
 * manager's memory goes with the last (the teardown runs the loop). */
Test(replica_manager, closing_with_open_jobs_in_flight)
{
    paired_topic("c", 15, IN_JOBS, SELF);
    replica_manager_unfence(&f.rm);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_gt(f.rm.open_jobs, 0);
    replica_manager_close(&f.rm);
    f.closed = true;
    uv_run(&f.loop, UV_RUN_DEFAULT);
    cr_assert_eq(f.rm.open_jobs, 0);
    cr_assert_eq(f.rm.n, 0);
}

/* The epoch's text in t-0's leader-epoch checkpoint ("" when none). */
static void t0_checkpoint(char *text, size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/t-0/leader-epoch-checkpoint", f.dir);
    memset(text, 0, cap);
    FILE *in = fopen(path, "r");
    if (in != NULL) {
        size_t n = fread(text, 1, cap - 1, in);
        text[n] = '\0';
        fclose(in);
    }
}

/* A new leader's epoch is written to its leader-epoch checkpoint before
 * its first batch, not when it takes over: a broker given thousands of
 * leaderships at once (another fenced) writes no file for the idle ones.
 * After a power loss right after that first append, the checkpoint names
 * the epoch. */
Test(replica_manager, a_new_leaders_epoch_is_durable_before_its_first_batch)
{
    topic_led_by(OTHER);
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert_not(partition_is_leader(t0()));
    leader_moves_to(SELF);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert(partition_is_leader(t0()));
    char text[256];
    t0_checkpoint(text, sizeof text);
    cr_assert(strstr(text, "\n1 0\n") == NULL, "written at the takeover: "
              "%s", text);
    io_journal_begin();
    struct built_batch b = batch_build(1, 10, 0, 1);
    struct log_append_info info;
    cr_assert_eq(log_append(t0()->log, b.bytes, b.len, 1, 0, &info), RC_OK);
    built_batch_free(&b);
    io_journal_crash();
    t0_checkpoint(text, sizeof text);
    cr_assert(strstr(text, "\n1 0\n") != NULL, "epoch 1 from offset 0 "
              "lost: %s", text);
}

/* The ISR timer looks only at the partitions that lead (or have acks
 * still to tell): a follower is never in its list, a leader joins it
 * when it takes over and leaves at the first tick after it stops. */
Test(replica_manager, the_isr_timer_looks_only_at_leaders)
{
    topic_led_by(OTHER);
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert_eq(f.rm.n_checked, 0, "a follower is checked");
    leader_moves_to(SELF);
    apply();
    cr_assert_eq(f.rm.n_checked, 1);
    cr_assert_eq(f.rm.checked[0], t0());
    leader_moves_to(OTHER);
    apply();
    f.rm.lag_max_ms = 200; /* a tick every 50 ms */
    replica_manager_start_timers(&f.rm);
    for (int i = 0; i < 100 && f.rm.n_checked > 0; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(f.rm.n_checked, 0, "a former leader stays checked");
    cr_assert_eq(t0()->checked_pos, 0);
}

/* Opening a log whose producer state needs no replay (a new, empty one
 * here) writes no producer-state snapshot: the file is rewritten only
 * when batches were replayed into it. */
Test(replica_manager, an_open_with_nothing_to_replay_writes_no_snapshot)
{
    topic_led_by(OTHER);
    apply();
    t0();
    char path[4200];
    snprintf(path, sizeof path, "%s/t-0/producer-state.snapshot", f.dir);
    FILE *in = fopen(path, "r");
    cr_assert_null(in, "a snapshot was written for an empty log");
}

/* Nor does closing it: a broker stopping with 100,000 idle partitions
 * wrote and synced one for each, and outlived the 30 s it was given. */
Test(replica_manager, closing_a_log_that_never_held_a_record_writes_no_snapshot)
{
    topic_led_by(SELF);
    replica_manager_unfence(&f.rm);
    apply();
    cr_assert(partition_is_leader(t0()));
    replica_manager_close(&f.rm);
    f.closed = true;
    uv_run(&f.loop, UV_RUN_DEFAULT);
    char path[4200];
    snprintf(path, sizeof path, "%s/t-0/producer-state.snapshot", f.dir);
    FILE *in = fopen(path, "r");
    cr_assert_null(in, "a snapshot was written for an empty log");
}

#define BULK (PARTITIONS_SYNC_EACH_MAX + 4)

/* Past PARTITIONS_SYNC_EACH_MAX the writes of new logs wait for one
 * syncfs of the log dir, done before they take their roles: after a
 * power loss right after the apply, every log is there. */
Test(replica_manager, bulk_logs_are_durable_by_one_syncfs)
{
    paired_topic("b", 12, BULK, OTHER);
    replica_manager_unfence(&f.rm);
    io_journal_begin();
    replica_manager_apply(&f.rm, &f.img);
    settle(); /* one batch, or more on a slow machine (the turn's budget) */
    cr_assert_eq(f.rm.n, BULK);
    io_journal_crash();
    assert_survived("b", BULK);
}

/* The partitions changed since a point, newest first, each once: what
 * an incremental fetch session looks at instead of every partition. */
static size_t changed_since(uint64_t since, struct partition **out,
                            size_t cap)
{
    size_t n = 0;
    for (struct partition *p = replica_manager_changed_since(&f.rm, since);
         p != NULL; p = replica_manager_changed_next(p, since)) {
        cr_assert_lt(n, cap);
        out[n++] = p;
    }
    return n;
}

Test(replica_manager, the_change_list_holds_what_changed_since_a_point)
{
    struct meta_changes c;
    wide_topic(&c);
    struct partition *a = replica_manager_find(&f.rm, "w", 100);
    struct partition *b = replica_manager_find(&f.rm, "w", 200);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    uint64_t mark = f.rm.change_seq;
    struct partition *got[8];
    cr_assert_eq(changed_since(mark, got, 8), 0, "nothing since");
    replica_manager_wake(&f.rm, a);
    replica_manager_wake(&f.rm, b);
    replica_manager_wake(&f.rm, a); /* again: still once, now first */
    cr_assert_eq(changed_since(mark, got, 8), 2);
    cr_assert_eq(got[0], a);
    cr_assert_eq(got[1], b);
    uint64_t after_b = b->change_seq;
    cr_assert_eq(changed_since(after_b, got, 8), 1, "only a since b");
    cr_assert_eq(got[0], a);

    /* A leadership change counts; a dropped partition leaves the list
     * and counts as a removal. */
    uint64_t removals = f.rm.removals;
    mark = f.rm.change_seq;
    meta_changes_clear(&c);
    wide_leader_moves(300);
    apply();
    cr_assert_eq(changed_since(mark, got, 8), 1);
    cr_assert_eq(got[0]->id, 300);
    meta_changes_clear(&c);
    struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
    r.u.partition_change.topic_id.b[0] = 9;
    r.u.partition_change.partition = 100;
    r.u.partition_change.replicas_changed = true;
    r.u.partition_change.replicas =
        (struct meta_replica_set){.n = 2, .ids = {2, 3}};
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.isr = r.u.partition_change.replicas;
    r.u.partition_change.leader = 2;
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
    apply();
    cr_assert_null(replica_manager_find(&f.rm, "w", 100), "moved away");
    cr_assert_eq(f.rm.removals, removals + 1);
    for (struct partition *p = replica_manager_changed_since(&f.rm, 0);
         p != NULL; p = replica_manager_changed_next(p, 0)) {
        cr_assert_neq(p->id, 100, "a dropped partition is not listed");
    }
    f.img.changes = NULL;
    meta_changes_free(&c);
}

static void set_topic_config(const char *name, const char *value)
{
    struct meta_record r = {.type = META_REC_CONFIG};
    r.u.config.resource_type = META_RESOURCE_TOPIC;
    snprintf(r.u.config.resource_name, sizeof r.u.config.resource_name,
             "t");
    snprintf(r.u.config.name, sizeof r.u.config.name, "%s", name);
    r.u.config.has_value = true;
    snprintf(r.u.config.value, sizeof r.u.config.value, "%s", value);
    cr_assert_eq(meta_apply(&f.img, &r), RC_OK);
}

/* A topic's configs are resolved once per image offset, and each change
 * of them reaches its partitions. */
Test(replica_manager, each_topic_config_change_reaches_its_partitions)
{
    topic_led_by(SELF);
    apply();
    replica_manager_unfence(&f.rm);
    apply();
    int32_t before = t0()->max_message_bytes;
    set_topic_config("max.message.bytes", "5000");
    apply();
    cr_assert_eq(t0()->max_message_bytes, 5000, "was %d", before);
    set_topic_config("max.message.bytes", "6000");
    apply();
    cr_assert_eq(t0()->max_message_bytes, 6000);
}
