/* Replication end to end with real processes: three controllers, three
 * brokers, a topic of 4 partitions with replication factor 3 and
 * min.insync.replicas=2, and a confluent-kafka producer (acks=all,
 * idempotent; tests/integration/clients/repl_load.py) writing under
 * faults: leader kills, two of three replicas lost, a whole-cluster crash,
 * a paused leader, a paused follower, a replaced disk. Every scenario ends
 * with the script's verify: each acknowledged record is at its partition
 * and offset, no value twice, per-key order kept.
 *
 * The script is found through $CAIRN_SRC (the source tree) if set, else
 * three levels above the test binary (build/<variant>/tests/), else next
 * to this file's compile-time path (relative to the repository root, where
 * `make test` runs).
 *
 * Every wait polls a condition until a deadline, and every deadline is
 * capped by the test's budget (TEST_BUDGET_MS), below the suite's
 * Criterion timeout: a stuck cluster fails an assertion and .fini still
 * stops every process. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_codec.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/child.h"
#include "tests/lib/cluster.h"
#include "tests/lib/repl_load.h"
#include "tests/lib/kafka_wire.h"
#include "tests/lib/tmpdir.h"

#define TOPIC "repl"
#define PARTITIONS 4
#define REPLICAS 3
#define LOAD_RATE 2000
/* Acknowledged records before the first fault: about 1.5 s of load. */
#define WARMUP_ACKED 3000
#define LAG_MAX_MS 3000
#define TEST_TIMEOUT_S 180
/* Leaves time for .fini (SIGKILL brokers, SIGTERM controllers). */
#define TEST_BUDGET_MS 165000
/* What load_stop leaves for verify and the rest of the test. */
#define VERIFY_RESERVE_MS 30000

static const char extra_config[] = "min.insync.replicas=2\n"
                                   "replica.lag.time.max.ms=3000\n"
                                   "log.sync.before.ack=true\n";

_Static_assert(LAG_MAX_MS == 3000, "extra_config spells the same value");

static struct cluster c;
static bool cluster_started;
static uint64_t budget_end_ms;

/* The load producer (tests/lib/repl_load.h). */
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
    if (!cluster_started) {
        return;
    }
    /* Nothing to save in a broker here; SIGKILL keeps .fini short even if
     * a broker hangs in controlled shutdown. */
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].pid > 0) {
            cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
        }
    }
    cluster_destroy(&c);
}

TestSuite(replication, .init = setup, .fini = teardown,
          .timeout = TEST_TIMEOUT_S);

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

static uint64_t session_ms(void)
{
    return (uint64_t)c.session_timeout_ms;
}

/* --- Metadata ------------------------------------------------------------- */

struct part_view {
    int32_t leader;
    int32_t leader_epoch;
    struct meta_replica_set replicas;
    struct meta_replica_set isr;
};

struct view {
    struct part_view p[PARTITIONS];
    bool fenced[CLUSTER_BROKERS_MAX]; /* by index in c.brokers */
};

/* The topic's partitions and the brokers' fencing, from a fresh image of
 * the active controller; false if none answers or the topic is missing. */
static bool view_read(struct view *v)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, TOPIC) : NULL;
    ok = t != NULL && t->n_partitions == PARTITIONS;
    for (int32_t p = 0; ok && p < PARTITIONS; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        v->p[p] = (struct part_view){.leader = mp->leader,
                                     .leader_epoch = mp->leader_epoch,
                                     .replicas = mp->replicas,
                                     .isr = mp->isr};
    }
    for (int i = 0; ok && i < c.n_brokers; i++) {
        const struct meta_broker *b = meta_image_broker(&img,
                                                        c.brokers[i].id);
        v->fenced[i] = b == NULL || b->fenced;
    }
    meta_image_free(&img);
    return ok;
}

typedef bool (*view_cond)(const struct view *v, int32_t broker);

/* Polls the metadata until cond(view, broker) holds; v keeps the last view
 * read, for the caller's messages. */
static bool wait_view(view_cond cond, int32_t broker, uint64_t budget_ms,
                      struct view *v)
{
    uint64_t deadline = deadline_after(budget_ms);
    for (;;) {
        if (view_read(v) && cond(v, broker)) {
            return true;
        }
        if (cluster_now_ms() >= deadline) {
            return false;
        }
        pause_ms(100);
    }
}

static bool p0_led_by_another(const struct view *v, int32_t old)
{
    return v->p[0].leader != META_NO_LEADER && v->p[0].leader != old;
}

static bool p0_full_isr_with(const struct view *v, int32_t broker)
{
    return v->p[0].isr.n == REPLICAS &&
           meta_replica_set_contains(&v->p[0].isr, broker);
}

static bool p0_isr_without(const struct view *v, int32_t broker)
{
    return !meta_replica_set_contains(&v->p[0].isr, broker);
}

static bool all_full_isr_with(const struct view *v, int32_t broker)
{
    for (int32_t p = 0; p < PARTITIONS; p++) {
        if (v->p[p].leader == META_NO_LEADER || v->p[p].isr.n != REPLICAS ||
            !meta_replica_set_contains(&v->p[p].isr, broker)) {
            return false;
        }
    }
    return true;
}

static bool all_led_by_sole_member(const struct view *v, int32_t broker)
{
    for (int32_t p = 0; p < PARTITIONS; p++) {
        if (v->p[p].leader != broker || v->p[p].isr.n != 1 ||
            v->p[p].isr.ids[0] != broker) {
            return false;
        }
    }
    return true;
}

static bool all_led(const struct view *v, int32_t unused)
{
    (void)unused;
    for (int32_t p = 0; p < PARTITIONS; p++) {
        if (v->p[p].leader == META_NO_LEADER) {
            return false;
        }
    }
    return true;
}

/* "1,2,3" into buf. */
static const char *set_str(const struct meta_replica_set *s, char *buf,
                           size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < s->n && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%d", i == 0 ? "" : ",",
                         s->ids[i]);
        if (w < 0) {
            break;
        }
        len += (size_t)w;
    }
    return buf;
}

/* The first replica of partition 0 that does not lead it. */
static int32_t p0_follower(const struct view *v)
{
    for (int32_t k = 0; k < v->p[0].replicas.n; k++) {
        if (v->p[0].replicas.ids[k] != v->p[0].leader) {
            return v->p[0].replicas.ids[k];
        }
    }
    cr_assert_fail("partition 0 has no follower");
    return -1;
}

static struct cluster_node *broker_node(int32_t id)
{
    struct cluster_node *n = cluster_broker(&c, id);
    cr_assert_not_null(n, "no broker with id %d", id);
    return n;
}

static int broker_index(int32_t id)
{
    return (int)(broker_node(id) - c.brokers);
}

/* --- The load producer ---------------------------------------------------- */

static void load_start(void)
{
    cr_assert(repl_load_start(&load, &c, TOPIC, LOAD_RATE),
              "repl_load.py not started (script %s); set CAIRN_SRC to the "
              "source tree", load.script);
}

/* The acknowledged count so far. */
static long load_acked(void)
{
    long n = repl_load_acked(&load);
    cr_assert_geq(n, 0, "bad line in %s", load.out);
    return n;
}

/* Polls until more than n records are acknowledged. */
static bool wait_acked_above(long n, uint64_t budget_ms)
{
    uint64_t deadline = deadline_after(budget_ms);
    for (;;) {
        if (load_acked() > n) {
            return true;
        }
        if (cluster_now_ms() >= deadline) {
            return false;
        }
        if (repl_load_exited(&load)) {
            char tail[1024];
            repl_load_log_tail(&load, tail, sizeof tail);
            cr_assert(false, "the load producer exited; %s ends:\n%s",
                      load.log, tail);
        }
        pause_ms(100);
    }
}

/* Creates the stop file and waits (bounded) for the producer's flush;
 * returns its wait status, -1 if it had to be killed. */
static int load_stop(void)
{
    cr_assert_gt(load.pid, 0, "the load producer is not running");
    uint64_t deadline = deadline_after(75000);
    if (budget_end_ms > cluster_now_ms() + VERIFY_RESERVE_MS &&
        deadline > budget_end_ms - VERIFY_RESERVE_MS) {
        deadline = budget_end_ms - VERIFY_RESERVE_MS;
    }
    return repl_load_stop(&load, deadline);
}

/* Runs repl_load.py verify (bounded) and asserts it passed; returns how
 * many records in the topic were not the load's ("foreign="). */
static long verify_topic(void)
{
    char text[2048];
    int status = repl_load_verify(&load, &c, deadline_after(120000), text,
                                  sizeof text);
    fprintf(stderr, "replication: %s", text);
    cr_assert(status != -1, "verify did not finish in time:\n%s", text);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "verify failed (status 0x%x):\n%s", (unsigned)status, text);
    const char *f_at = strstr(text, " foreign=");
    long foreign = -1;
    cr_assert(f_at != NULL && sscanf(f_at, " foreign=%ld", &foreign) == 1,
              "no foreign= in the verify summary:\n%s", text);
    return foreign;
}

/* Stops the load, verifies the topic, and checks the producer exited
 * cleanly and had more than acked_min acknowledgements. Returns verify's
 * foreign count. */
static long finish(long acked_min)
{
    int status = load_stop();
    long foreign = verify_topic();
    cr_assert(status != -1 && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "load producer status 0x%x; see %s", (unsigned)status,
              load.log);
    cr_assert_gt(load.acked, acked_min,
                 "only %ld records acknowledged (%ld failed); see %s",
                 load.acked, load.failed, load.log);
    return foreign;
}

/* --- Cluster -------------------------------------------------------------- */

/* A ready cluster with the topic fully replicated and the load running,
 * already acknowledged. */
static void start_loaded(void)
{
    c.broker_extra_config = extra_config;
    cluster_start(&c, 3, 3);
    cluster_started = true;
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, TOPIC, PARTITIONS, REPLICAS),
                 KAFKA_ERROR_NONE);
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(all_full_isr_with, c.brokers[0].id, 15000, &v),
              "topic not led and fully in sync after creation");
    load_start();
    cr_assert(wait_acked_above(WARMUP_ACKED, 30000),
              "%ld acknowledgements before any fault (want %d); see %s",
              load.acked, WARMUP_ACKED, load.log);
}

/* SIGKILLs every broker at once, then reaps them. */
static void kill_all_brokers(void)
{
    for (int i = 0; i < c.n_brokers; i++) {
        cluster_node_signal(&c, &c.brokers[i], SIGKILL, false /* wait */);
    }
    for (int i = 0; i < c.n_brokers; i++) {
        /* kill(2) on a zombie succeeds; this only reaps. */
        cluster_node_signal(&c, &c.brokers[i], SIGKILL, true /* wait */);
    }
}

/* One acks=all Produce of one record to partition; returns its ErrorCode,
 * or -1 if there was no usable answer. Each seed gives other bytes, so
 * two attempts never write the same value. */
static int raw_produce(int port, int32_t partition, uint32_t seed)
{
    struct kafka_client kc;
    if (!kafka_wire_connect(&kc, port)) {
        kafka_client_close(&kc);
        return -1;
    }
    struct built_batch b = batch_build(1, 16, 1000, seed);
    struct kafka_PartitionProduceResponse out;
    bool answered = kafka_wire_produce_answer(&kc, TOPIC, partition, b.bytes,
                                              b.len, -1, 2000, &out);
    built_batch_free(&b);
    kafka_client_close(&kc);
    return answered ? out.ErrorCode : -1;
}

/* Broker's copy of a partition as its .log segments hold it: the bytes,
 * a CRC-32C of them in offset order, and the log end offset after the
 * last whole batch (from the RecordBatch headers: baseOffset at 0,
 * batchLength at 8, lastOffsetDelta at 23). exists is false when the
 * broker has no directory for the partition. Read while the broker may be
 * appending: a torn last batch is not counted. */
struct disk_log {
    bool exists;
    long long bytes;
    uint32_t crc;
    int64_t end_offset;
};

static int64_t segment_end_offset(const uint8_t *data, size_t len,
                                  int64_t base)
{
    int64_t end = base;
    size_t pos = 0;
    while (len - pos >= 27) {
        int64_t batch_base = (int64_t)bytes_be64(data + pos);
        size_t batch_len = bytes_be32(data + pos + 8);
        if (batch_len < 15 || batch_len > len - pos - 12) {
            break;
        }
        int32_t delta = (int32_t)bytes_be32(data + pos + 23);
        end = batch_base + delta + 1;
        pos += 12 + batch_len;
    }
    return end;
}

static struct disk_log disk_log_read(int32_t broker, int32_t partition)
{
    struct disk_log out = {.end_offset = -1};
    char dir[4200];
    char part[4400];
    cluster_broker_log_dir(&c, broker_node(broker), dir, sizeof dir);
    snprintf(part, sizeof part, "%s/%s-%d", dir, TOPIC, partition);
    struct dirent **names = NULL;
    int n = scandir(part, &names, NULL, alphasort); /* = offset order */
    if (n < 0) {
        return out;
    }
    out.exists = true;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        if (len == 24 && strcmp(name + 20, ".log") == 0) {
            char path[4800];
            snprintf(path, sizeof path, "%s/%s", part, name);
            FILE *f = fopen(path, "rb");
            uint8_t *data = NULL;
            size_t got = 0;
            if (f != NULL) {
                struct stat st;
                if (fstat(fileno(f), &st) == 0 && st.st_size > 0) {
                    data = malloc((size_t)st.st_size);
                    cr_assert_not_null(data);
                    got = fread(data, 1, (size_t)st.st_size, f);
                }
                fclose(f);
            }
            if (got > 0) {
                out.crc = out.bytes == 0 ? crc32c(data, got)
                                         : crc32c_extend(out.crc, data, got);
                out.bytes += (long long)got;
            }
            int64_t end = segment_end_offset(data, got,
                                             strtoll(name, NULL, 10));
            if (end > out.end_offset) {
                out.end_offset = end;
            }
            free(data);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

/* --- Scenarios ------------------------------------------------------------ */

Test(replication, leader_killed_three_times_loses_no_acknowledged_record)
{
    start_loaded();
    struct view v;
    memset(&v, 0, sizeof v);
    char isr[64];
    for (int round = 1; round <= 3; round++) {
        cr_assert(wait_view(all_led, 0, 10000, &v));
        int32_t old = v.p[0].leader;
        struct cluster_node *n = broker_node(old);
        cluster_node_signal(&c, n, SIGKILL, true /* wait */);
        cr_assert(wait_view(p0_led_by_another, old, session_ms() + 10000,
                            &v),
                  "round %d: partition 0 still led by killed broker %d",
                  round, old);
        cluster_node_start(&c, n);
        cr_assert(wait_view(p0_full_isr_with, old, 40000, &v),
                  "round %d: broker %d not back in partition 0's ISR "
                  "(ISR %s, leader %d)", round, old,
                  set_str(&v.p[0].isr, isr, sizeof isr), v.p[0].leader);
        long acked = load_acked();
        cr_assert(wait_acked_above(acked, 20000),
                  "round %d: nothing acknowledged after broker %d rejoined "
                  "(%ld so far)", round, old, acked);
    }
    finish(WARMUP_ACKED);
}

/* acks=all Produce to partition 0 on port until the answer is
 * NOT_ENOUGH_REPLICAS (bounded). The leader learns a shrunken ISR from the
 * metadata; until then a request may be appended and time out, but it
 * must never be acknowledged. Leaves the answers in answers ("7,19") and
 * returns how many were not NOT_ENOUGH_REPLICAS, which means "not
 * appended": the most raw records the topic may hold. */
static long expect_not_enough_replicas(int port, char *answers, size_t cap)
{
    int err = -1;
    long appended_max = 0;
    size_t len = 0;
    answers[0] = '\0';
    uint64_t deadline = deadline_after(15000);
    for (uint32_t seed = 1; cluster_now_ms() < deadline; seed++) {
        err = raw_produce(port, 0, seed);
        if (len < cap) {
            int w = snprintf(answers + len, cap - len, "%s%d",
                             seed == 1 ? "" : ",", err);
            len += w > 0 ? (size_t)w : 0;
        }
        cr_assert_neq(err, KAFKA_ERROR_NONE,
                      "acks=all acknowledged with an ISR of one (answers "
                      "%s)", answers);
        if (err == KAFKA_ERROR_NOT_ENOUGH_REPLICAS) {
            break;
        }
        appended_max++;
        pause_ms(200);
    }
    cr_assert_eq(err, KAFKA_ERROR_NOT_ENOUGH_REPLICAS,
                 "answers to acks=all Produce with an ISR of one: %s",
                 answers);
    cr_log_info("acks=all Produce with an ISR of one answered %s", answers);
    return appended_max;
}

Test(replication, two_replicas_down_refuses_acks_all_until_they_return)
{
    start_loaded();
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(all_led, 0, 10000, &v));
    int32_t survivor = v.p[0].leader;
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].id != survivor) {
            cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
        }
    }
    char isr[64];
    cr_assert(wait_view(all_led_by_sole_member, survivor,
                        session_ms() + 15000, &v),
              "broker %d does not lead every partition alone (partition 0: "
              "leader %d, ISR %s)", survivor, v.p[0].leader,
              set_str(&v.p[0].isr, isr, sizeof isr));
    char answers[256];
    long appended_max = expect_not_enough_replicas(
        broker_node(survivor)->port, answers, sizeof answers);
    /* The leader said why its HW stopped. */
    char stalled[96];
    snprintf(stalled, sizeof stalled, "event: %s-0 hw stalled at ", TOPIC);
    cr_assert(cluster_log_contains(broker_node(survivor), stalled),
              "no \"%s\" in %s", stalled, broker_node(survivor)->log);
    /* Nor is anything the load sends: watch the count for 3 s. */
    long frozen = load_acked();
    uint64_t watch_end = cluster_now_ms() + 3000;
    while (cluster_now_ms() < watch_end) {
        cr_assert_eq(load_acked(), frozen,
                     "acknowledged with one in-sync replica of three");
        pause_ms(100);
    }
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].pid == 0) {
            cluster_node_start(&c, &c.brokers[i]);
        }
    }
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)));
    cr_assert(wait_acked_above(frozen, 60000),
              "no acknowledgement after both replicas returned (%ld)",
              frozen);
    snprintf(stalled, sizeof stalled, "event: %s-0 hw moves again from ",
             TOPIC);
    cr_assert(cluster_log_contains(broker_node(survivor), stalled),
              "no \"%s\" in %s", stalled, broker_node(survivor)->log);
    long foreign = finish(frozen);
    cr_assert_leq(foreign, appended_max,
                  "%ld raw records in the topic; answers were %s", foreign,
                  answers);
}

Test(replication, whole_cluster_crash_keeps_every_acknowledged_record)
{
    start_loaded();
    cr_assert(wait_acked_above(2 * WARMUP_ACKED, 30000),
              "load too slow before the crash (%ld)", load.acked);
    kill_all_brokers();
    long at_crash = load_acked();
    for (int i = 0; i < c.n_brokers; i++) {
        cluster_node_start(&c, &c.brokers[i]);
    }
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)),
              "brokers not back; logs in %s", c.dir);
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(all_led, 0, 30000, &v),
              "a partition has no leader after the restart");
    cr_assert(wait_acked_above(at_crash, 60000),
              "no acknowledgement after the restart (%ld)", at_crash);
    finish(at_crash);
}

/* True once the log of n says it followed partition 0 at an epoch in
 * (after, upto]. */
static bool followed_p0(const struct cluster_node *n, int32_t after,
                        int32_t upto)
{
    for (int32_t e = after + 1; e <= upto; e++) {
        char text[128];
        snprintf(text, sizeof text, "became follower of %s-0 at epoch %d ",
                 TOPIC, e);
        if (cluster_log_contains(n, text)) {
            return true;
        }
    }
    return false;
}

Test(replication, paused_leader_is_replaced_and_returns_as_a_follower)
{
    start_loaded();
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(all_led, 0, 10000, &v));
    int32_t old = v.p[0].leader;
    int32_t old_epoch = v.p[0].leader_epoch;
    struct cluster_node *n = broker_node(old);
    uint64_t stopped = cluster_now_ms();
    cluster_node_signal(&c, n, SIGSTOP, false /* wait */);
    cr_assert(wait_view(p0_led_by_another, old, session_ms() + 10000, &v),
              "partition 0 still led by paused broker %d", old);
    /* Paused past its session whatever the metadata said. */
    while (cluster_now_ms() - stopped <= session_ms()) {
        pause_ms(100);
    }
    long acked = load_acked();
    cr_assert(wait_acked_above(acked, 20000),
              "no acknowledgement under the new leader %d", v.p[0].leader);
    cluster_node_signal(&c, n, SIGCONT, false /* wait */);
    char isr[64];
    cr_assert(wait_view(p0_full_isr_with, old, 40000, &v),
              "broker %d not back in partition 0's ISR (ISR %s, leader %d)",
              old, set_str(&v.p[0].isr, isr, sizeof isr), v.p[0].leader);
    int32_t epoch = v.p[0].leader_epoch;
    uint64_t deadline = deadline_after(10000);
    while (!followed_p0(n, old_epoch, epoch) &&
           cluster_now_ms() < deadline) {
        pause_ms(100);
    }
    cr_assert(followed_p0(n, old_epoch, epoch),
              "%s does not say it became follower of %s-0 at an epoch in "
              "(%d, %d]", n->log, TOPIC, old_epoch, epoch);
    finish(acked);
}

Test(replication, paused_follower_leaves_the_isr_by_lag_and_rejoins)
{
    /* A session well above replica.lag.time.max.ms: the leader must drop
     * the paused follower for lagging, before the controller could fence
     * it. */
    c.session_timeout_ms = 15000;
    start_loaded();
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(p0_full_isr_with, c.brokers[0].id, 10000, &v));
    int32_t follower = p0_follower(&v);
    struct cluster_node *n = broker_node(follower);
    uint64_t stopped = cluster_now_ms();
    cluster_node_signal(&c, n, SIGSTOP, false /* wait */);
    char isr[64];
    cr_assert(wait_view(p0_isr_without, follower, LAG_MAX_MS + 8000, &v),
              "paused follower %d still in partition 0's ISR (%s) after "
              "%llu ms", follower, set_str(&v.p[0].isr, isr, sizeof isr),
              (unsigned long long)(cluster_now_ms() - stopped));
    cr_assert_not(v.fenced[broker_index(follower)],
                  "follower %d left the ISR only by being fenced", follower);
    /* The leader said who left and by which rule. */
    struct cluster_node *ln = broker_node(v.p[0].leader);
    char why[160];
    snprintf(why, sizeof why, "(replica %d not caught up for ", follower);
    cr_assert(cluster_log_contains(ln, why), "no \"%s\" in %s", why,
              ln->log);
    /* Its last catch-up may predate the pause by up to a fetch round. */
    cr_assert_geq(cluster_now_ms() - stopped, (uint64_t)LAG_MAX_MS - 1000,
                  "dropped well before replica.lag.time.max.ms");
    /* Two in-sync replicas meet min.insync.replicas: writes go on. */
    long acked = load_acked();
    cr_assert(wait_acked_above(acked, 5000),
              "no acknowledgement with ISR %s",
              set_str(&v.p[0].isr, isr, sizeof isr));
    cluster_node_signal(&c, n, SIGCONT, false /* wait */);
    cr_assert(wait_view(p0_full_isr_with, follower, 30000, &v),
              "follower %d not back in partition 0's ISR (%s)", follower,
              set_str(&v.p[0].isr, isr, sizeof isr));
    snprintf(why, sizeof why, "(replica %d caught up: end offset ",
             follower);
    cr_assert(cluster_log_contains(ln, why), "no \"%s\" in %s", why,
              ln->log);
    finish(acked);
}

/* Polls until follower is in every partition's full ISR; whenever
 * partition 0's ISR has it, its copy on disk must end past committed. */
static bool wait_rejoined_with_data(int32_t follower, int64_t committed,
                                    struct view *v)
{
    uint64_t deadline = deadline_after(60000);
    for (;;) {
        if (view_read(v)) {
            if (meta_replica_set_contains(&v->p[0].isr, follower)) {
                struct disk_log d = disk_log_read(follower, 0);
                cr_assert_gt(d.end_offset, committed,
                             "broker %d is in partition 0's ISR with its "
                             "log ending at %lld; offset %lld was "
                             "acknowledged before its disk was replaced",
                             follower, (long long)d.end_offset,
                             (long long)committed);
            }
            if (all_full_isr_with(v, follower)) {
                return true;
            }
        }
        if (cluster_now_ms() >= deadline) {
            return false;
        }
        pause_ms(100);
    }
}

/* Polls until every replica of partition p holds the same bytes (size,
 * CRC, log end), which must cover every acknowledged offset. */
static void assert_replicas_converge(const struct view *v, int32_t p)
{
    struct disk_log d[REPLICAS];
    memset(d, 0, sizeof d);
    const int32_t *ids = v->p[p].replicas.ids;
    bool same = false;
    uint64_t deadline = deadline_after(20000);
    while (!same && cluster_now_ms() < deadline) {
        same = true;
        for (int k = 0; k < REPLICAS; k++) {
            d[k] = disk_log_read(ids[k], p);
            same = same && d[k].bytes > 0 && d[k].bytes == d[0].bytes &&
                   d[k].crc == d[0].crc &&
                   d[k].end_offset == d[0].end_offset;
        }
        if (!same) {
            pause_ms(100);
        }
    }
    cr_assert(same, "partition %d differs: broker %d %lld bytes end %lld, "
              "broker %d %lld bytes end %lld, broker %d %lld bytes end "
              "%lld", p, ids[0], d[0].bytes, (long long)d[0].end_offset,
              ids[1], d[1].bytes, (long long)d[1].end_offset, ids[2],
              d[2].bytes, (long long)d[2].end_offset);
    cr_assert_gt(d[0].end_offset, load.acked_max[p],
                 "partition %d ends at %lld below acknowledged %lld", p,
                 (long long)d[0].end_offset, (long long)load.acked_max[p]);
}

Test(replication, follower_with_a_replaced_disk_catches_up_and_rejoins)
{
    start_loaded();
    struct view v;
    memset(&v, 0, sizeof v);
    cr_assert(wait_view(p0_full_isr_with, c.brokers[0].id, 10000, &v));
    int32_t follower = p0_follower(&v);
    struct cluster_node *n = broker_node(follower);
    cr_assert_neq(cluster_node_signal(&c, n, SIGTERM, true /* wait */), -1,
                  "broker %d did not stop", follower);
    /* Acknowledged means below the high watermark, which never goes back:
     * a replica may rejoin partition 0's ISR only holding past this. */
    load_acked();
    int64_t committed = load.acked_max[0];
    cr_assert_geq(committed, 0, "nothing acknowledged in partition 0");
    char dir[4200];
    cluster_broker_log_dir(&c, n, dir, sizeof dir);
    tmpdir_remove(dir);
    cr_assert_neq(access(dir, F_OK), 0, "%s still there", dir);
    cluster_node_start(&c, n);
    char isr[64];
    cr_assert(wait_rejoined_with_data(follower, committed, &v),
              "broker %d not back in every ISR (partition 0: %s)", follower,
              set_str(&v.p[0].isr, isr, sizeof isr));
    long acked = load_acked();
    cr_assert(wait_acked_above(acked, 20000),
              "no acknowledgement after broker %d rejoined", follower);
    int status = load_stop();
    /* With the load stopped, the replicas converge byte for byte. */
    for (int32_t p = 0; p < PARTITIONS; p++) {
        assert_replicas_converge(&v, p);
    }
    verify_topic();
    cr_assert(status != -1 && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "load producer status 0x%x; see %s", (unsigned)status,
              load.log);
    cr_assert_gt(load.acked, acked);
}
