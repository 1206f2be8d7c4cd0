/* Tests for broker/replication/replica_manager.c: a broker starts fenced.
 * Until replica_manager_unfence() the manager opens the logs the image
 * names but takes no role from it (no leader, no follower, no "became"
 * line, no re-plan of the fetchers); once unfenced, the next apply takes
 * the roles of the image it is given, once. Real logs in a temporary
 * directory on a private loop; no sockets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/replication/partition.h"
#include "broker/replication/replica_manager.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "common/topic_config.h"
#include "common/trace.h"
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
    replica_manager_close(&f.rm);
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
    replica_manager_apply(&f.rm, &f.img);
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
    replica_manager_apply(&f.rm, &f.img);
    leader_moves_to(OTHER);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_eq(f.n_became, 0, "said \"%s\" while fenced", f.last);
    replica_manager_unfence(&f.rm);
    replica_manager_apply(&f.rm, &f.img);
    struct partition *p = t0();
    cr_assert_not(partition_is_leader(p));
    cr_assert_eq(p->leader, OTHER);
    cr_assert_eq(p->leader_epoch, 1);
    cr_assert_eq(p->follow, PARTITION_FOLLOW_TRUNCATE);
    cr_assert_eq(f.n_became, 1);
    cr_assert(strstr(f.last, "became follower of t-0 at epoch 1") != NULL,
              "%s", f.last);
    cr_assert_eq(f.n_followers_changed, 1);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert_eq(f.n_became, 1, "the same image said again: %s", f.last);
}

Test(replica_manager, unfenced_leads_what_the_image_gives_it)
{
    topic_led_by(SELF);
    replica_manager_apply(&f.rm, &f.img);
    replica_manager_unfence(&f.rm);
    replica_manager_apply(&f.rm, &f.img);
    cr_assert(partition_is_leader(t0()));
    cr_assert_eq(f.n_became, 1);
    cr_assert(strstr(f.last, "became leader of t-0 at epoch 0") != NULL, "%s",
              f.last);
}
