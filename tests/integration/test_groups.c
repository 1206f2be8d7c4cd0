/* Consumer groups end to end with real processes: three controllers,
 * three brokers (min.insync.replicas=2, group.initial.rebalance.delay.ms=0),
 * topics with replication factor 3, and real clients driving the group
 * APIs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, DescribeGroups, ListGroups):
 *
 *   - confluent-kafka (librdkafka) scenarios in
 *     tests/integration/clients/group_check.py: a range walk-through over
 *     four partitions (hand-over at the committed offsets, lag), two
 *     groups on one topic, cooperative-sticky incremental rebalancing, and
 *     the coordinator's failover (this file kills the broker the script
 *     names, the leader of the group's __consumer_offsets partition);
 *   - a kafkajs 2.2.4 consumer group (clients/kafkajs_group.js; kafkajs
 *     is vendored in clients/node_modules) whose committed offsets must
 *     equal the high watermarks.
 *
 * The clients check what they see and print "[PASS]"/"[FAIL]" lines; a
 * test passes when its client exits 0, and its assertion message carries
 * the client's output. Clients write into the cluster's directory
 * (CAIRN_KEEP_TEST_DIR=1 keeps it, with the brokers' logs).
 *
 * Scripts are found through $CAIRN_SRC (the source tree) if set, else
 * three levels above the test binary (build/<variant>/tests/), else next
 * to this file's compile-time path. Every wait polls a condition until a
 * deadline capped by the test's budget (TEST_BUDGET_MS), below the
 * suite's Criterion timeout, so .fini always stops every process. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "tests/lib/child.h"
#include "tests/lib/cluster.h"

#define REPLICAS 3
#define OFFSETS_TOPIC "__consumer_offsets"
#define TEST_TIMEOUT_S 120
/* Leaves time for .fini (SIGKILL brokers, SIGTERM controllers). */
#define TEST_BUDGET_MS 100000
/* One client run; its scenario bounds its own waits well below. */
#define CLIENT_BUDGET_MS 90000
#define PYTHON "/usr/bin/python3"
#define GROUP_SCRIPT_REL "tests/integration/clients/group_check.py"
#define KAFKAJS_SCRIPT_REL "tests/integration/clients/kafkajs_group.js"
/* What an assertion message shows of a client's output: its end. */
#define OUTPUT_SHOWN_BYTES_MAX 6000

static const char extra_config[] = "min.insync.replicas=2\n"
                                   "group.initial.rebalance.delay.ms=0\n";

static struct cluster c;
static bool cluster_started;
static uint64_t budget_end_ms;
static pid_t client_pid;

static void setup(void)
{
    memset(&c, 0, sizeof c);
    cluster_started = false;
    client_pid = 0;
    budget_end_ms = cluster_now_ms() + TEST_BUDGET_MS;
}

static void teardown(void)
{
    if (client_pid > 0) {
        kill(client_pid, SIGKILL);
        waitpid(client_pid, NULL, 0);
        client_pid = 0;
    }
    if (!cluster_started) {
        return;
    }
    /* Nothing to save in a broker here; SIGKILL keeps .fini short. */
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].pid > 0) {
            cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
        }
    }
    cluster_destroy(&c);
}

TestSuite(groups, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* --- Time ----------------------------------------------------------------- */

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL); /* poll interval; callers bound the loop */
}

/* now + budget_ms, but never past the test's budget. */
static uint64_t deadline_after(uint64_t budget_ms)
{
    uint64_t d = cluster_now_ms() + budget_ms;
    return d < budget_end_ms ? d : budget_end_ms;
}

/* --- Cluster and topics --------------------------------------------------- */

static void start_cluster(void)
{
    c.broker_extra_config = extra_config;
    cluster_start(&c, 3, 3);
    cluster_started = true;
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)),
              "cluster not ready; logs in %s", c.dir);
}

/* True once topic has n partitions, each led and with a full ISR. */
static bool topic_ready(const char *topic, int32_t n)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, topic) : NULL;
    ok = t != NULL && t->n_partitions == n;
    for (int32_t p = 0; ok && p < n; p++) {
        ok = t->partitions[p].leader != META_NO_LEADER &&
             t->partitions[p].isr.n == REPLICAS;
    }
    meta_image_free(&img);
    return ok;
}

static void create_topic(const char *topic, int32_t partitions)
{
    cr_assert_eq(cluster_create_topic(&c, topic, partitions, REPLICAS),
                 KAFKA_ERROR_NONE, "CreateTopics %s", topic);
    uint64_t deadline = deadline_after(15000);
    while (!topic_ready(topic, partitions)) {
        cr_assert(cluster_now_ms() < deadline,
                  "%s not led and fully in sync after creation", topic);
        pause_ms(100);
    }
}

/* The leader of __consumer_offsets partition p, META_NO_LEADER if it has
 * none, -2 if the controller does not answer or the topic is missing. */
static int32_t offsets_leader(int32_t p)
{
    struct meta_image img;
    meta_image_init(&img);
    int32_t leader = -2;
    if (cluster_image(&c, &img)) {
        const struct meta_topic *t = meta_image_topic(&img, OFFSETS_TOPIC);
        if (t != NULL && p >= 0 && p < t->n_partitions) {
            leader = t->partitions[p].leader;
        }
    }
    meta_image_free(&img);
    return leader;
}

/* --- Clients -------------------------------------------------------------- */

/* The source file rel, from $CAIRN_SRC, the test binary's tree or the
 * compile-time source tree (child_source_path()). */
static void source_path(const char *rel, char *out, size_t cap)
{
    cr_assert(child_source_path(rel, out, cap),
              "%s not found (last tried %s); set CAIRN_SRC to the source "
              "tree", rel, out);
}

/* An executable named name on $PATH into out; false if there is none. */
static bool find_on_path(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", path != NULL ? path : "/usr/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d != NULL;
         d = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", d[0] != '\0' ? d : ".", name);
        if (access(out, X_OK) == 0) {
            return true;
        }
    }
    return false;
}

/* Forks exe with argv and the extra environment (NAME=value strings,
 * NULL-terminated, may be NULL); its stdout and stderr go to out_path.
 * The child dies with the test process. */
static void client_start(const char *exe, char *const argv[],
                         char *const env[], const char *out_path)
{
    cr_assert_eq(client_pid, 0, "a client is already running");
    pid_t pid = child_spawn(exe, argv, env, out_path, NULL);
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    client_pid = pid;
}

/* Waits for the client until deadline_ms, then SIGKILLs it (by pid).
 * Returns its wait status, or -1 if it had to be killed. */
static int client_reap(uint64_t deadline_ms)
{
    cr_assert_gt(client_pid, 0, "no client running");
    int status = child_wait(client_pid, deadline_ms);
    client_pid = 0;
    return status;
}

/* True (and the client reaped into *status) if it has exited. */
static bool client_exited(int *status)
{
    if (client_pid > 0 && waitpid(client_pid, status, WNOHANG) == client_pid) {
        client_pid = 0;
        return true;
    }
    return false;
}

/* The last OUTPUT_SHOWN_BYTES_MAX bytes of path into out. */
static void read_tail(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return;
    }
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        long from = size > (long)cap - 1 ? size - ((long)cap - 1) : 0;
        fseek(f, from, SEEK_SET);
    }
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* Appends to out the first and the last ERROR line of broker n's log and
 * how many there are (a failing broker may log one per loop turn). */
static void broker_errors(const struct cluster_node *n, char *out,
                          size_t cap)
{
    FILE *f = fopen(n->log, "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    char first[512] = "";
    char last[512] = "";
    long count = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, " ERROR ") != NULL) {
            snprintf(count == 0 ? first : last, sizeof first, "%s", line);
            count++;
        }
    }
    fclose(f);
    size_t len = strlen(out);
    if (count > 0 && len < cap) {
        snprintf(out + len, cap - len, "broker %d: %ld ERROR lines, first: "
                 "%s%s%s", n->id, count, first, count > 1 ? "  last: " : "",
                 last);
    }
}

/* Asserts the client exited 0; the message shows the end of its output
 * (the [FAIL] lines and the client library's log) and the brokers'
 * ERROR lines. */
static void assert_client_passed(const char *what, int status,
                                 const char *out_path)
{
    static char text[OUTPUT_SHOWN_BYTES_MAX];
    static char errors[4096];
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return;
    }
    read_tail(out_path, text, sizeof text);
    errors[0] = '\0';
    for (int i = 0; cluster_started && i < c.n_brokers; i++) {
        broker_errors(&c.brokers[i], errors, sizeof errors);
    }
    cr_assert(status != -1, "%s did not finish in time; output %s:\n%s\n%s",
              what, out_path, text, errors);
    cr_assert_fail("%s failed (status 0x%x); output %s (brokers' logs "
                   "beside it):\n%s\n%s", what, (unsigned)status, out_path,
                   text, errors);
}

/* Runs group_check.py SCENARIO BOOTSTRAP args... to the end (bounded) and
 * asserts it passed. */
static void run_group_check(const char *scenario, const char *topic,
                            const char *group1, const char *group2)
{
    char script[4200];
    char boot[256];
    char out[4200];
    source_path(GROUP_SCRIPT_REL, script, sizeof script);
    cluster_bootstrap(&c, boot, sizeof boot);
    snprintf(out, sizeof out, "%s/%s.out", c.dir, scenario);
    char *argv[] = {"python3", script, (char *)(uintptr_t)scenario, boot,
                    (char *)(uintptr_t)topic, (char *)(uintptr_t)group1,
                    (char *)(uintptr_t)group2, NULL};
    client_start(PYTHON, argv, NULL, out);
    int status = client_reap(deadline_after(CLIENT_BUDGET_MS));
    assert_client_passed(scenario, status, out);
}

/* --- Scenarios ------------------------------------------------------------ */

/* Range over four partitions of 40 records: consumer-a alone reads and
 * commits 10 of each (lag 30), consumer-b joins and gets 2,3 starting at
 * offset 10, the lag follows both members' commits, and consumer-a takes
 * 2,3 back from consumer-b's commits when it leaves. */
Test(groups, range_hands_partitions_over_at_the_committed_offsets)
{
    start_cluster();
    create_topic("walk", 4);
    run_group_check("walkthrough", "walk", "walk-group", NULL);
}

Test(groups, two_groups_read_every_record_at_their_own_offsets)
{
    start_cluster();
    create_topic("shared", 3);
    run_group_check("two_groups", "shared", "group-x", "group-y");
}

/* cooperative-sticky: the first member loses only the two partitions the
 * second takes (one incremental revoke), keeps reading the other two
 * throughout, and the second starts at the first's commits. */
Test(groups, cooperative_sticky_moves_only_the_new_members_partitions)
{
    start_cluster();
    create_topic("coop", 4);
    run_group_check("cooperative", "coop", "coop-group", NULL);
}

/* Polls the client's output for "KILL broker=B partition=P" (the
 * coordinator it found); fails if the client exits first. */
static void wait_kill_request(const char *out_path, int32_t *broker,
                              int32_t *partition)
{
    uint64_t deadline = deadline_after(60000);
    for (;;) {
        FILE *f = fopen(out_path, "r");
        char line[512];
        bool found = false;
        while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
            found = sscanf(line, "KILL broker=%d partition=%d", broker,
                           partition) == 2;
        }
        if (f != NULL) {
            fclose(f);
        }
        if (found) {
            return;
        }
        int status = 0;
        if (client_exited(&status)) {
            assert_client_passed("failover (before the kill)", status,
                                 out_path);
            cr_assert_fail("the failover client exited without asking for "
                           "the kill; see %s", out_path);
        }
        cr_assert(cluster_now_ms() < deadline,
                  "the failover client did not name the coordinator; see "
                  "%s", out_path);
        pause_ms(50);
    }
}

/* Two members consume a topic that keeps growing and commit every 0.3 s;
 * the coordinator (leader of the group's __consumer_offsets partition) is
 * SIGKILLed. The group must go on under the new leader with its committed
 * offsets, no member ever starting below a successful commit. */
Test(groups, coordinator_killed_the_group_recovers_with_its_offsets)
{
    start_cluster();
    create_topic("failover", 4);
    char script[4200];
    char boot[256];
    char out[4200];
    char killed[4200];
    source_path(GROUP_SCRIPT_REL, script, sizeof script);
    cluster_bootstrap(&c, boot, sizeof boot);
    snprintf(out, sizeof out, "%s/failover.out", c.dir);
    snprintf(killed, sizeof killed, "%s/coordinator-killed", c.dir);
    char *argv[] = {"python3", script, "failover", boot, "failover",
                    "failover-group", killed, NULL};
    client_start(PYTHON, argv, NULL, out);

    int32_t broker = -1;
    int32_t partition = -1;
    wait_kill_request(out, &broker, &partition);
    struct cluster_node *n = cluster_broker(&c, broker);
    cr_assert_not_null(n, "the client named broker %d", broker);
    /* The controller agrees on who leads the group's offsets partition. */
    int32_t leader = offsets_leader(partition);
    cr_assert_eq(leader, broker, "%s-%d is led by %d, the client said %d",
                 OFFSETS_TOPIC, partition, leader, broker);
    cluster_node_signal(&c, n, SIGKILL, true /* wait */);
    FILE *f = fopen(killed, "w");
    cr_assert_not_null(f, "%s: %s", killed, strerror(errno));
    fclose(f);
    cr_log_info("killed broker %d, coordinator of failover-group (%s-%d)",
                broker, OFFSETS_TOPIC, partition);

    uint64_t deadline = deadline_after((uint64_t)c.session_timeout_ms +
                                       15000);
    for (;;) {
        leader = offsets_leader(partition);
        if (leader >= 0 && leader != broker) {
            break;
        }
        cr_assert(cluster_now_ms() < deadline,
                  "%s-%d still led by %d after broker %d was killed",
                  OFFSETS_TOPIC, partition, leader, broker);
        pause_ms(100);
    }
    int status = client_reap(deadline_after(CLIENT_BUDGET_MS));
    assert_client_passed("failover", status, out);
}

/* kafkajs 2.2.4: a consumer group reads a whole topic and commits; the
 * committed offsets equal the high watermarks, and the next consumer of
 * the group reads only what came after. */
Test(groups, kafkajs_group_commits_the_high_watermarks)
{
    char node[4200];
    cr_assert(find_on_path("node", node, sizeof node),
              "node not found on PATH (install Node.js 20)");
    char script[4200];
    char dir[4200];
    char modules[4400];
    source_path(KAFKAJS_SCRIPT_REL, script, sizeof script);
    snprintf(dir, sizeof dir, "%s", script);
    snprintf(modules, sizeof modules, "%s/node_modules/kafkajs/package.json",
             dirname(dir));
    cr_assert_eq(access(modules, R_OK), 0,
                 "%s missing: run npm ci --prefix tests/integration/clients",
                 modules);
    start_cluster();
    create_topic("js-group", 3);
    char boot[256];
    char out[4200];
    static char env_boot[300];
    cluster_bootstrap(&c, boot, sizeof boot);
    snprintf(env_boot, sizeof env_boot, "BOOTSTRAP=%s", boot);
    snprintf(out, sizeof out, "%s/kafkajs_group.out", c.dir);
    char *env[] = {env_boot, "TOPIC=js-group", "GROUP=js-group-g",
                   "PARTITIONS=3", NULL};
    char *argv[] = {"node", script, NULL};
    client_start(node, argv, env, out);
    int status = client_reap(deadline_after(CLIENT_BUDGET_MS));
    assert_client_passed("kafkajs_group.js", status, out);
}
