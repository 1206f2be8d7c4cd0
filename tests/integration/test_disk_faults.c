/* Disk faults on real processes: every broker starts with a fault armed
 * by CAIRN_IO_FAULTS (common/io.h) on the test topic's files and held
 * until SIGUSR2, so a test picks the broker whose disk fails, and when.
 *
 * What must hold: after a failed fsync (fsyncgate: the unsynced pages may
 * be gone) or a full disk, no acks=all write depends on that disk. The
 * broker stops replicating, answers KAFKA_STORAGE_ERROR, asks the
 * controller to fence it and exits with status 3 and one clear line; its
 * leaderships move to in-sync replicas on healthy brokers; every record
 * acknowledged before, during and after reads back. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "controller/controller.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/bench_util.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"
#include "tests/lib/repl_load.h"

#define TOPIC "diskfault"
#define TEST_TIMEOUT_S 180
#define TEST_BUDGET_MS 165000
#define LOAD_RATE 400
#define WARMUP_ACKED 1000

static const char extra_config[] = "min.insync.replicas=2\n"
                                   "replica.lag.time.max.ms=3000\n"
                                   "log.sync.before.ack=true\n";

static struct cluster c;
static bool cluster_started;
static uint64_t budget_end_ms;
static struct repl_load load;

static void setup(void)
{
    memset(&c, 0, sizeof c);
    memset(&load, 0, sizeof load);
    cluster_started = false;
    budget_end_ms = cluster_now_ms() + TEST_BUDGET_MS;
}

static void teardown(void)
{
    repl_load_kill(&load);
    unsetenv("CAIRN_IO_FAULTS");
    if (!cluster_started) {
        return;
    }
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].pid > 0) {
            cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
        }
    }
    cluster_destroy(&c);
}

TestSuite(disk_faults, .init = setup, .fini = teardown,
          .timeout = TEST_TIMEOUT_S);

static uint64_t deadline_after(uint64_t budget_ms)
{
    uint64_t d = cluster_now_ms() + budget_ms;
    return d < budget_end_ms ? d : budget_end_ms;
}

/* Partition p of the topic and whether broker id is fenced, from the
 * active controller; false if none answers or the topic is missing. */
static bool part_read(int32_t p, struct meta_partition *out, int32_t id,
                      bool *fenced)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, TOPIC) : NULL;
    ok = t != NULL && p < t->n_partitions;
    if (ok) {
        *out = t->partitions[p];
        const struct meta_broker *b = meta_image_broker(&img, id);
        *fenced = b == NULL || b->fenced;
    }
    meta_image_free(&img);
    return ok;
}

/* Polls until every partition of the topic is led with n_isr members. */
static bool wait_isr_size(int32_t partitions, size_t n_isr,
                          uint64_t budget_ms)
{
    uint64_t deadline = deadline_after(budget_ms);
    while (cluster_now_ms() < deadline) {
        bool all = true;
        for (int32_t p = 0; p < partitions && all; p++) {
            struct meta_partition mp;
            bool fenced;
            all = part_read(p, &mp, 0, &fenced) &&
                  mp.leader != META_NO_LEADER && (size_t)mp.isr.n == n_isr;
        }
        if (all) {
            return true;
        }
        bench_pause_ms(100);
    }
    return false;
}

/* Starts the cluster with spec armed (held) on every broker; NULL: none. */
static void start_with_faults(const char *spec, int n_brokers,
                              int32_t partitions, int32_t rf)
{
    c.broker_extra_config = extra_config;
    if (spec != NULL) {
        cr_assert_eq(setenv("CAIRN_IO_FAULTS", spec, 1), 0);
    }
    cluster_start(&c, 3, n_brokers);
    cluster_started = true;
    unsetenv("CAIRN_IO_FAULTS"); /* restarts come up with a healthy disk */
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, TOPIC, partitions, rf),
                 KAFKA_ERROR_NONE);
    cr_assert(wait_isr_size(partitions, (size_t)rf, 20000),
              "topic not fully in sync after creation");
}

/* One acks=all Produce of one record to partition 0 at port: its
 * ErrorCode, or -1 without a usable answer. */
static int produce_one(int port, uint32_t seed)
{
    struct kafka_client kc;
    if (!kafka_wire_connect(&kc, port)) {
        kafka_client_close(&kc);
        return -1;
    }
    struct built_batch b = batch_build(1, 16, 1000, seed);
    struct kafka_PartitionProduceResponse out;
    bool answered = kafka_wire_produce_answer(&kc, TOPIC, 0, b.bytes, b.len,
                                              -1, 2000, &out);
    built_batch_free(&b);
    kafka_client_close(&kc);
    return answered ? out.ErrorCode : -1;
}

/* acks=all writes to partition 0's leader from seed on until one is
 * acknowledged (the leader serves); the next seed. */
static uint32_t produce_until_served(uint32_t seed)
{
    int err = -1;
    uint64_t deadline = deadline_after(20000);
    while (err != KAFKA_ERROR_NONE && cluster_now_ms() < deadline) {
        struct meta_partition mp;
        bool fenced;
        err = part_read(0, &mp, 0, &fenced) && mp.leader != META_NO_LEADER
                  ? produce_one(cluster_broker(&c, mp.leader)->port, seed)
                  : -1;
        seed++;
        if (err != KAFKA_ERROR_NONE) {
            bench_pause_ms(100);
        }
    }
    cr_assert_eq(err, KAFKA_ERROR_NONE, "no acks=all write acknowledged");
    return seed;
}

/* n's wait status once it has exited (reaped), else -1. */
static int exit_status(struct cluster_node *n)
{
    int status = 0;
    if (waitpid(n->pid, &status, WNOHANG) != n->pid) {
        return -1;
    }
    n->pid = 0;
    return status;
}

/* Waits (bounded) for broker n to exit; asserts it stopped as a broker
 * with a failed log dir does: status 3 and its lines in the log. */
static void expect_stopped_for_its_disk(struct cluster_node *n)
{
    /* Signal 0 sends nothing: this waits (30 s at most) for the exit. */
    int status = cluster_node_signal(&c, n, 0, true);
    cr_assert_neq(status, -1, "broker %d still ran with a failed disk; "
                  "log %s", n->id, n->log);
    cr_assert(WIFEXITED(status) &&
                  WEXITSTATUS(status) == BROKER_EXIT_LOG_DIR_FAILED,
              "broker %d exit status 0x%x", n->id, (unsigned)status);
    cr_assert(cluster_log_contains(n, "is offline: replication stopped"),
              "no offline line in %s", n->log);
    cr_assert(cluster_log_contains(n, "stopped: its only log dir"),
              "no final line in %s", n->log);
}

/* The test that failed before: with ISR {leader, follower} and
 * min.insync.replicas=2, the follower's fdatasync starts failing. Before,
 * the follower went on fetching from its log end, unsynced records
 * included, and the leader acknowledged writes only its own disk held. */
Test(disk_faults, follower_fsync_eio_lets_no_acks_all_write_through)
{
    start_with_faults("sync:eio:path=" TOPIC "-0/:armed=sigusr2", 2, 1, 2);
    struct meta_partition mp;
    bool fenced;
    cr_assert(part_read(0, &mp, 0, &fenced));
    int32_t leader = mp.leader;
    struct cluster_node *ln = cluster_broker(&c, leader);
    struct cluster_node *fn = NULL;
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].id != leader) {
            fn = &c.brokers[i];
        }
    }
    cr_assert(ln != NULL && fn != NULL);
    uint32_t seed = produce_until_served(1);
    int err = -1;
    for (int i = 0; i < 20; i++, seed++) {
        err = produce_one(ln->port, seed);
        cr_assert_eq(err, KAFKA_ERROR_NONE, "acks=all before the fault: %d",
                     err);
    }
    cr_assert_eq(kill(fn->pid, SIGUSR2), 0);

    /* Every acks=all write sent from now on needs the follower's disk,
     * which no longer syncs: none may be acknowledged. */
    char answers[512] = "";
    size_t len = 0;
    err = -1;
    uint64_t deadline = deadline_after(30000);
    while (cluster_now_ms() < deadline &&
           err != KAFKA_ERROR_NOT_ENOUGH_REPLICAS) {
        err = produce_one(ln->port, seed++);
        int w = snprintf(answers + len, sizeof answers - len, "%d,", err);
        len += w > 0 && (size_t)w < sizeof answers - len ? (size_t)w : 0;
        cr_assert_neq(err, KAFKA_ERROR_NONE, "acks=all acknowledged after "
                      "the follower's fsync failed (answers %s)", answers);
    }
    cr_assert_eq(err, KAFKA_ERROR_NOT_ENOUGH_REPLICAS,
                 "answers after the fault: %s", answers);
    cr_log_info("acks=all after the follower's fsync failed: %s", answers);
    expect_stopped_for_its_disk(fn);
    cr_assert(part_read(0, &mp, fn->id, &fenced));
    cr_assert(fenced, "the broker with the failed disk is not fenced");
    cr_assert_eq(mp.isr.n, 1, "ISR still holds the failed broker");
    cr_assert_eq(mp.leader, leader);

    /* Restarted on a healthy disk it recovers, catches up, rejoins. */
    cluster_node_start(&c, fn);
    cr_assert(wait_isr_size(1, 2, 30000), "the repaired broker did not "
              "rejoin the ISR");
    deadline = deadline_after(15000);
    do {
        err = produce_one(ln->port, seed++);
    } while (err != KAFKA_ERROR_NONE && cluster_now_ms() < deadline);
    cr_assert_eq(err, KAFKA_ERROR_NONE, "acks=all once the ISR is whole");
}

/* Starts the cluster with spec armed on every broker, a topic of 3
 * partitions RF 3 and an acks=all load on it; returns once the load has
 * had WARMUP_ACKED acknowledgements. */
static void start_load(const char *spec)
{
    start_with_faults(spec, 3, 3, 3);
    cr_assert(repl_load_start(&load, &c, TOPIC, LOAD_RATE),
              "repl_load.py not started (script %s)", load.script);
    uint64_t deadline = deadline_after(30000);
    while (repl_load_acked(&load) < WARMUP_ACKED &&
           cluster_now_ms() < deadline) {
        if (repl_load_exited(&load)) {
            char tail[1024];
            repl_load_log_tail(&load, tail, sizeof tail);
            cr_assert(false, "load exited; %s ends:\n%s", load.log, tail);
        }
        bench_pause_ms(100);
    }
    cr_assert_geq(load.acked, WARMUP_ACKED, "warm-up; see %s", load.log);
}

/* Waits (30 s at most) for another second of acknowledgements after
 * from; then stops the load and checks every acknowledged record reads
 * back. */
static void load_goes_on_and_loses_nothing(long from, const char *after)
{
    uint64_t deadline = deadline_after(30000);
    while (repl_load_acked(&load) < from + LOAD_RATE &&
           cluster_now_ms() < deadline) {
        bench_pause_ms(100);
    }
    cr_assert_geq(load.acked, from + LOAD_RATE, "the load did not go on "
                  "%s; see %s", after, load.log);
    int status = repl_load_stop(&load, deadline_after(60000));
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "load producer status 0x%x; see %s", (unsigned)status,
              load.log);
    char text[2048];
    status = repl_load_verify(&load, &c, deadline_after(60000), text,
                              sizeof text);
    fprintf(stderr, "disk_faults: %s", text);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "verify failed (status 0x%x):\n%s", (unsigned)status, text);
}

/* An acks=all load on 3 partitions RF 3, one broker's disk failing under
 * it as spec says; every acknowledged record must read back. */
static void fault_under_load(const char *spec)
{
    start_load(spec);
    struct cluster_node *victim = &c.brokers[1];
    cr_assert_eq(kill(victim->pid, SIGUSR2), 0);
    expect_stopped_for_its_disk(victim);
    long at_exit = repl_load_acked(&load);
    cr_assert(wait_isr_size(3, 2, 30000), "leadership did not settle on "
              "the two healthy brokers");
    load_goes_on_and_loses_nothing(at_exit, "without the failed disk");
}

Test(disk_faults, fsync_eio_on_one_broker_under_load_loses_nothing)
{
    fault_under_load("sync:eio:path=" TOPIC "-:armed=sigusr2");
}

Test(disk_faults, full_disk_on_one_broker_under_load_loses_nothing)
{
    fault_under_load("write:short:path=" TOPIC "-:armed=sigusr2");
}

Test(disk_faults, write_eio_on_one_broker_under_load_loses_nothing)
{
    fault_under_load("write:eio:path=" TOPIC "-:armed=sigusr2");
}

/* Reads that fail (not a checksum: the disk says EIO) take the log dir
 * offline as Kafka does; a leader that could not read would otherwise
 * keep its partitions, and its followers, stuck. */
Test(disk_faults, read_eio_on_one_broker_under_load_loses_nothing)
{
    fault_under_load("read:eio:path=" TOPIC "-:armed=sigusr2");
}

/* Silent corruption under the same load: three of one broker's segment
 * writes store a flipped bit (the disk reports nothing). Whatever it
 * leads or follows, no damaged byte is served: a leader's reads stop
 * before it and it hands leadership on, a follower's scrub finds it; the
 * damaged copies leave the ISR, repair from a healthy replica and come
 * back, the load goes on, and every acknowledged record reads back. */
Test(disk_faults, corrupt_writes_on_one_broker_under_load_lose_nothing)
{
    start_load("write:flip:path=" TOPIC "-:armed=sigusr2:times=3");
    struct cluster_node *victim = &c.brokers[1];
    cr_assert_eq(kill(victim->pid, SIGUSR2), 0);
    uint64_t deadline = deadline_after(60000);
    while (!cluster_log_contains(victim, "corrupt") &&
           cluster_now_ms() < deadline) {
        bench_pause_ms(200);
    }
    cr_assert(cluster_log_contains(victim, "corrupt"), "the damage was not "
              "found; log %s", victim->log);
    long found_at = repl_load_acked(&load);
    cr_assert(wait_isr_size(3, 3, 60000), "the damaged copies did not come "
              "back into the ISR; log %s", victim->log);
    cr_assert_eq(exit_status(victim), -1, "the broker exited; log %s",
                 victim->log); /* damage is repaired, not a failed disk */
    load_goes_on_and_loses_nothing(found_at, "past the damage");
}

/* With one controller stopped, the other two create a topic (20 s at
 * most, once one of them is active: the stopped one may have been). */
static void two_controllers_go_on(void)
{
    int16_t err = -1;
    uint64_t deadline = deadline_after(20000);
    while (err != KAFKA_ERROR_NONE && cluster_now_ms() < deadline) {
        err = cluster_create_topic(&c, "after", 1, 1);
        if (err == KAFKA_ERROR_TOPIC_ALREADY_EXISTS) {
            err = KAFKA_ERROR_NONE; /* an earlier try got through */
        }
        if (err != KAFKA_ERROR_NONE) {
            bench_pause_ms(100);
        }
    }
    cr_assert_eq(err, KAFKA_ERROR_NONE, "the other two go on");
}

/* The largest closed Raft segment ("<first>-<last>") in dir into out. */
static bool largest_closed_segment(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    off_t best = -1;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        unsigned long long a, b;
        char path[4600];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (sscanf(e->d_name, "%llu-%llu", &a, &b) == 2 &&
            stat(path, &st) == 0 && st.st_size > best) {
            best = st.st_size;
            snprintf(out, cap, "%s", path);
        }
    }
    closedir(d);
    return best > 64;
}

/* A controller whose Raft log has a flipped byte refuses to start (libraft
 * would cut its log before the damage and go on, forgetting entries it
 * acknowledged); its peers go on. */
Test(disk_faults, a_controller_with_a_damaged_raft_log_refuses_to_start)
{
    cluster_start(&c, 3, 1);
    cluster_started = true;
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)));
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        cr_assert_eq(cluster_create_topic(&c, name, 1, 1), KAFKA_ERROR_NONE);
    }
    struct cluster_node *n = &c.controllers[1];
    cluster_node_signal(&c, n, SIGTERM, true); /* closes its open segment */
    char dir[4200];
    char seg[4600];
    snprintf(dir, sizeof dir, "%s/controller-%d/metadata", c.dir, n->id);
    cr_assert(largest_closed_segment(dir, seg, sizeof seg), "in %s", dir);
    int fd = open(seg, O_RDWR);
    cr_assert_geq(fd, 0);
    off_t size = lseek(fd, 0, SEEK_END);
    uint8_t byte;
    cr_assert_eq(pread(fd, &byte, 1, size - 8), 1);
    byte ^= 0xff;
    cr_assert_eq(pwrite(fd, &byte, 1, size - 8), 1);
    close(fd);

    cluster_node_start(&c, n);
    int status = cluster_node_signal(&c, n, 0, true); /* waits for exit */
    cr_assert_neq(status, -1, "a controller with a damaged log runs; "
                  "log %s", n->log);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    cr_assert(cluster_log_contains(n, "refusing to start"), "%s", n->log);
    two_controllers_go_on();
}

/* A controller whose disk fails under libraft (its Raft writes fail):
 * before, libraft went on without the write and the controller stayed
 * up, a vote short, saying nothing (and as leader could hold up the
 * quorum). Now it stops with status 3 and one line, and the other two go
 * on. The fault is the seam's, armed on that controller's metadata dir
 * and released by SIGUSR2; topics are created until a write hits it. */
Test(disk_faults, a_controller_whose_raft_writes_fail_stops_and_the_rest_go_on)
{
    /* tests/lib/cluster.c numbers controllers from 101. */
    cr_assert_eq(setenv("CAIRN_IO_FAULTS", "write:eio:path=controller-102/"
                        "metadata:armed=sigusr2", 1), 0);
    cluster_start(&c, 3, 1);
    cluster_started = true;
    unsetenv("CAIRN_IO_FAULTS");
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)));
    struct cluster_node *n = &c.controllers[1];
    cr_assert_eq(n->id, 102);
    cr_assert_eq(cluster_create_topic(&c, "before", 1, 1), KAFKA_ERROR_NONE);
    cluster_node_signal(&c, n, SIGUSR2, false);
    int status = -1;
    uint64_t deadline = deadline_after(30000);
    for (int i = 0; status == -1 && cluster_now_ms() < deadline; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        (void)cluster_create_topic(&c, name, 1, 1); /* may meet the exit */
        status = exit_status(n);
    }
    cr_assert_neq(status, -1, "the controller ran on; log %s", n->log);
    cr_assert(WIFEXITED(status) &&
                  WEXITSTATUS(status) == CONTROLLER_EXIT_METADATA_DIR_FAILED,
              "exit status 0x%x", (unsigned)status);
    cr_assert(cluster_log_contains(n, "stopped: appending to the Raft log"),
              "no line in %s", n->log);
    two_controllers_go_on();
}

/* A flipped byte in partition.metadata (the topic id a partition's
 * directory belongs to) is damage, not another topic: the records stay.
 * Before, the directory was taken for an older topic's and removed. */
Test(disk_faults, a_damaged_partition_metadata_keeps_the_records)
{
    start_with_faults(NULL, 3, 1, 3);
    struct cluster_node *n = &c.brokers[2];
    (void)produce_until_served(1);
    cr_assert(wait_isr_size(1, 3, 10000));
    cluster_node_signal(&c, n, SIGTERM, true);
    char path[4400];
    char logs[4200];
    cluster_broker_log_dir(&c, n, logs, sizeof logs);
    snprintf(path, sizeof path, "%s/%s-0/partition.metadata", logs, TOPIC);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0, "%s", path);
    uint8_t byte;
    cr_assert_eq(pread(fd, &byte, 1, 20), 1);
    byte ^= 0x01;
    cr_assert_eq(pwrite(fd, &byte, 1, 20), 1);
    close(fd);
    cluster_node_start(&c, n);
    cr_assert(wait_isr_size(1, 3, 30000), "broker %d did not rejoin", n->id);
    cr_assert(cluster_log_contains(n, "partition.metadata is damaged"),
              "%s", n->log);
    cr_assert(!cluster_log_contains(n, "belongs to an older topic"),
              "the records were removed; %s", n->log);
}
