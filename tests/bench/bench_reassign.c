/* Reassignment catch-up benchmark (`make bench`), on one real local
 * cluster (3 controllers and 3 brokers of this build, then a fourth
 * broker added, by tests/lib/cluster.h on free ports in a temporary
 * directory). Every measurement copies the log of a one-partition topic
 * of replication factor 2 (BENCH_REASSIGN_MB of ~1 MB batches, produced
 * with acks=1 to its leader) to one more replica, and times the copy by
 * the size of the replica's segment files, polled every millisecond,
 * between 20% and 100% of the leader's (so that the start, a pause's end
 * or a move's metadata on its way, is not in it, nor the throttle's first
 * second of burst):
 *
 *   follower   the baseline, the replication benchmark's follower: the
 *              topic's follower paused (SIGSTOP) while the log is
 *              written, then resumed; it catches up as any follower
 *              behind its leader does.
 *   move       AlterPartitionReassignments adds broker 4 to the topic's
 *              replicas; broker 4 copies the log from the leader outside
 *              the ISR. Floor (the issue): >= 0.8 x follower.
 *   leader_throttled, follower_throttled
 *              the same move with leader.replication.throttled.rate
 *              (the cluster-wide default) or
 *              follower.replication.throttled.rate (broker 4's) set live
 *              to BENCH_REASSIGN_THROTTLE_MBS (default 16 MB/s) over a
 *              log of 10 s at that rate. Floor (the issue): the rate
 *              within 10% of the throttle.
 *
 * BENCH_ROUNDS rounds of each, medians. MB is 10^6 bytes. A failed check
 * prints why, stops every process and aborts; a floor not met is reported
 * (met=no), not fatal. CAIRN_KEEP_TEST_DIR=1 keeps the node logs. */
#include "tests/lib/bench_util.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/kafka/kafka_error.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/kafka_wire.h"

#define BENCH_ROUNDS 3
#define BENCH_MB_DEFAULT 256
#define BENCH_MB_MAX 65536
#define BENCH_THROTTLE_MBS_DEFAULT 16
#define BENCH_THROTTLE_S 10       /* of log at the throttle's rate */
#define BENCH_MOVE_FLOOR 0.8      /* move / follower */
#define BENCH_THROTTLE_TOLERANCE 0.10
#define BENCH_BATCH_RECORDS 16
#define BENCH_RECORD_BYTES 62500  /* 16 x 62500 = 1 MB a batch */
#define BENCH_COPY_BUDGET_MS 300000
#define BENCH_FROM 0.2            /* of the log: where timing starts */
#define BENCH_BOOTSTRAP_BYTES 256
#define BENCH_BROKER_CONFIG "min.insync.replicas=1\n"

_Static_assert(BENCH_ROUNDS % 2 == 1, "a median of an odd count");

static struct cluster c;
static char boot[BENCH_BOOTSTRAP_BYTES];

/* ------------------------------------------------------------------------
 * The topic */

/* Replica ids of partition 0 of topic (leader first), from the active
 * controller. */
static struct meta_partition partition_of(const char *topic)
{
    struct meta_image img;
    meta_image_init(&img);
    const struct meta_topic *t =
        cluster_image(&c, &img) ? meta_image_topic(&img, topic) : NULL;
    if (t == NULL || t->n_partitions != 1) {
        meta_image_free(&img);
        bench_fail("topic %s not in the metadata", topic);
    }
    struct meta_partition p = t->partitions[0];
    meta_image_free(&img);
    return p;
}

/* Writes mb MB to partition 0 of topic through its leader, acks=1. */
static void produce(int port, const char *topic, long mb)
{
    struct kafka_client kc;
    if (!kafka_wire_connect(&kc, port)) {
        bench_fail("cannot connect to the leader at port %d", port);
    }
    for (long i = 0; i < mb; i++) {
        struct built_batch b = batch_build(BENCH_BATCH_RECORDS,
                                           BENCH_RECORD_BYTES, 1000 + i,
                                           (uint32_t)i);
        int16_t e = kafka_wire_produce(&kc, topic, 0, b.bytes, b.len, 1);
        built_batch_free(&b);
        if (e != KAFKA_ERROR_NONE) {
            bench_fail("produce to %s: error %d", topic, e);
        }
    }
    kafka_client_close(&kc);
}

/* Bytes in the segment files (*.log) of broker id's copy of topic-0. */
static long long log_bytes(int32_t id, const char *topic)
{
    char dir[4400];
    cluster_broker_log_dir(&c, cluster_broker(&c, id), dir, sizeof dir);
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/%s-0", topic);
    DIR *d = opendir(dir);
    if (d == NULL) {
        return 0;
    }
    long long total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        struct stat st;
        if (len > 4 && strcmp(e->d_name + len - 4, ".log") == 0 &&
            fstatat(dirfd(d), e->d_name, &st, 0) == 0) {
            total += (long long)st.st_size;
        }
    }
    closedir(d);
    return total;
}

/* Polls broker id's copy of topic-0 until it holds `total` bytes; MB/s
 * between BENCH_FROM of them and all. */
static double time_copy(int32_t id, const char *topic, long long total)
{
    double deadline = bench_clock_ms() + BENCH_COPY_BUDGET_MS;
    double from_ms = -1;
    long long from_bytes = 0;
    for (;;) {
        long long have = log_bytes(id, topic);
        double now = bench_clock_ms();
        if (from_ms < 0 && have >= (long long)((double)total * BENCH_FROM)) {
            from_ms = now;
            from_bytes = have;
        }
        if (have >= total) {
            double s = (now - from_ms) / 1e3;
            return s > 0 ? (double)(total - from_bytes) / 1e6 / s : 0;
        }
        if (now > deadline) {
            bench_fail("broker %d copied %lld of %lld bytes of %s in %d s",
                       id, have, total, topic, BENCH_COPY_BUDGET_MS / 1000);
        }
        bench_pause_ms(1);
    }
}

/* A fresh topic of replication factor 2 with mb MB in its log, the
 * leader's byte count in *total; its partition. */
static struct meta_partition fresh_topic(const char *topic, long mb,
                                         long long *total)
{
    int leader_port = 0;
    bench_create_topic(topic, 1, 2, &leader_port);
    struct meta_partition p = partition_of(topic);
    produce(leader_port, topic, mb);
    *total = log_bytes(p.leader, topic);
    return p;
}

/* ------------------------------------------------------------------------
 * The measurements */

/* The follower catching up after a pause. */
static double follower_round(int round, long mb)
{
    char topic[32];
    snprintf(topic, sizeof topic, "follower-%d", round);
    int leader_port = 0;
    bench_create_topic(topic, 1, 2, &leader_port);
    struct meta_partition p = partition_of(topic);
    int32_t follower = p.replicas.ids[0] == p.leader ? p.replicas.ids[1]
                                                     : p.replicas.ids[0];
    struct cluster_node *fn = cluster_broker(&c, follower);
    if (cluster_node_signal(&c, fn, SIGSTOP, false) != 0) {
        bench_fail("cannot pause broker %d", follower);
    }
    produce(leader_port, topic, mb);
    long long total = log_bytes(p.leader, topic);
    if (cluster_node_signal(&c, fn, SIGCONT, false) != 0) {
        bench_fail("cannot resume broker %d", follower);
    }
    double mbs = time_copy(follower, topic, total);
    printf("run follower round=%d broker=%d bytes=%lld mb_s=%.1f\n", round,
           follower, total, mbs);
    bench_delete_topic(boot, topic);
    return mbs;
}

/* A move adding broker 4 to a topic of mb MB; name labels the run. */
static double move_round(const char *name, int round, long mb)
{
    char topic[48];
    snprintf(topic, sizeof topic, "%s-%d", name, round);
    long long total = 0;
    struct meta_partition p = fresh_topic(topic, mb, &total);
    int32_t target[3] = {p.replicas.ids[0], p.replicas.ids[1], 4};
    int16_t e = kafka_wire_reassign(c.brokers[0].port, topic, 0, target, 3);
    if (e != KAFKA_ERROR_NONE) {
        bench_fail("AlterPartitionReassignments of %s: error %d", topic, e);
    }
    double mbs = time_copy(4, topic, total);
    printf("run %s round=%d bytes=%lld mb_s=%.1f\n", name, round, total, mbs);
    bench_delete_topic(boot, topic);
    return mbs;
}

/* Sets (value non-NULL) or deletes a throttle and waits until broker
 * `applier` logs the rate it now applies. */
static void set_throttle(const char *resource, const char *name,
                         const char *value, int32_t applier)
{
    char text[160];
    snprintf(text, sizeof text, "broker=%d %s=%s", applier, name,
             value != NULL ? value : "9223372036854775807");
    struct cluster_node *n = cluster_broker(&c, applier);
    int before = cluster_log_count(n, text, "");
    int16_t e = kafka_wire_set_broker_config(c.brokers[0].port, resource,
                                             name, value);
    if (e != KAFKA_ERROR_NONE) {
        bench_fail("IncrementalAlterConfigs %s: error %d", name, e);
    }
    double deadline = bench_clock_ms() + 15000;
    while (cluster_log_count(n, text, "") == before) {
        if (bench_clock_ms() > deadline) {
            bench_fail("broker %d never applied %s", applier, text);
        }
        bench_pause_ms(20);
    }
}

static double median_of(double *v)
{
    return bench_median(v, BENCH_ROUNDS);
}

int main(void)
{
    bench_set_name("bench_reassign");
    long mb = bench_env_long("BENCH_REASSIGN_MB", BENCH_MB_DEFAULT,
                             BENCH_MB_MAX);
    long throttle_mbs = bench_env_long("BENCH_REASSIGN_THROTTLE_MBS",
                                       BENCH_THROTTLE_MBS_DEFAULT, 10000);
    long throttled_mb = throttle_mbs * BENCH_THROTTLE_S;
    c.broker_extra_config = BENCH_BROKER_CONFIG;
    /* A broker paused while a log is written is not fenced meanwhile. */
    c.session_timeout_ms = 60000;
    double t0 = bench_clock_ms();
    bench_cluster_start(&c, 3, 3);
    cluster_bootstrap(&c, boot, sizeof boot);
    struct cluster_node *b4 = cluster_add_broker(&c);
    if (b4 == NULL || b4->id != 4) {
        bench_fail("cannot add broker 4");
    }
    if (!cluster_wait_ready(&c, cluster_now_ms() + 30000)) {
        bench_fail("broker 4 never joined");
    }
    printf("info bench=reassign brokers=4 mb=%ld throttle_mb_s=%ld "
           "throttled_mb=%ld rounds=%d\n", mb, throttle_mbs, throttled_mb,
           BENCH_ROUNDS);
    fflush(stdout);
    double follower[BENCH_ROUNDS], move[BENCH_ROUNDS];
    double leader_t[BENCH_ROUNDS], follower_t[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        follower[r] = follower_round(r, mb);
        move[r] = move_round("move", r, mb);
        fflush(stdout);
    }
    char rate[32];
    snprintf(rate, sizeof rate, "%ld", throttle_mbs * 1000000);
    set_throttle("", "leader.replication.throttled.rate", rate, 1);
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        leader_t[r] = move_round("leader_throttled", r, throttled_mb);
        fflush(stdout);
    }
    set_throttle("", "leader.replication.throttled.rate", NULL, 1);
    set_throttle("4", "follower.replication.throttled.rate", rate, 4);
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        follower_t[r] = move_round("follower_throttled", r, throttled_mb);
        fflush(stdout);
    }
    double f = median_of(follower), m = median_of(move);
    double lt = median_of(leader_t), ft = median_of(follower_t);
    double ratio = f > 0 ? m / f : 0;
    double lt_err = (lt - (double)throttle_mbs) / (double)throttle_mbs;
    double ft_err = (ft - (double)throttle_mbs) / (double)throttle_mbs;
    bool met = ratio >= BENCH_MOVE_FLOOR &&
               lt_err <= BENCH_THROTTLE_TOLERANCE &&
               lt_err >= -BENCH_THROTTLE_TOLERANCE &&
               ft_err <= BENCH_THROTTLE_TOLERANCE &&
               ft_err >= -BENCH_THROTTLE_TOLERANCE;
    printf("RESULT bench=reassign mb=%ld follower_mb_s=%.1f move_mb_s=%.1f "
           "move_over_follower=%.2f throttle_mb_s=%ld "
           "leader_throttled_mb_s=%.1f follower_throttled_mb_s=%.1f "
           "leader_throttle_error=%+.3f follower_throttle_error=%+.3f "
           "floor_move_over_follower=%.1f floor_throttle_error=%.2f "
           "met=%s\n", mb, f, m, ratio, throttle_mbs, lt, ft, lt_err, ft_err,
           BENCH_MOVE_FLOOR, BENCH_THROTTLE_TOLERANCE, met ? "yes" : "no");
    bench_cluster_stop(&c);
    printf("info bench=reassign total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
