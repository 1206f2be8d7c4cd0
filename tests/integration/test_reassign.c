/* Partition reassignment end to end with real processes: three
 * controllers, three brokers and a fourth added later, a topic of 6
 * partitions with replication factor 3 and min.insync.replicas=2, and a
 * confluent-kafka producer (acks=all, idempotent;
 * tests/integration/clients/repl_load.py) writing all along. Partitions
 * are moved onto broker 4 with AlterPartitionReassignments (raw wire,
 * through the codec), watched with ListPartitionReassignments, one move is
 * cancelled; at the end every acknowledged record reads back once and in
 * order, the moved partitions have their target replicas as a full ISR,
 * and the replicas that left have their logs deleted; UnregisterBroker
 * refuses an unknown broker and one that still hosts replicas.
 *
 * Two more set a replication throttle, leader.replication.throttled.rate
 * in the brokers' config files or follower.replication.throttled.rate on
 * the added broker alone, live (IncrementalAlterConfigs), and check that
 * a move of 3 MiB takes as long as the rate says while acks=all writes to
 * the same partition stay quick.
 *
 * Broker 4 is paused (SIGSTOP) while the moves start, so that the moves
 * are seen in progress and can be cancelled before it catches up, without
 * depending on how fast catch-up is. Every wait polls a condition until a
 * deadline. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/child.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"
#include "tests/lib/repl_load.h"

#define TOPIC "moves"
#define PARTITIONS 6
#define LOAD_RATE 1500
#define WARMUP_ACKED 2000
#define TEST_TIMEOUT_S 170
#define TEST_BUDGET_MS 155000

static const char extra_config[] = "min.insync.replicas=2\n"
                                   "replica.lag.time.max.ms=3000\n";

static struct cluster c;
static bool started;
static uint64_t budget_end_ms;
static struct repl_load load; /* tests/lib/repl_load.h */

static void setup(void)
{
    memset(&c, 0, sizeof c);
    started = false;
    memset(&load, 0, sizeof load);
    budget_end_ms = cluster_now_ms() + TEST_BUDGET_MS;
}

static void teardown(void)
{
    repl_load_kill(&load);
    if (!started) {
        return;
    }
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].pid > 0) {
            kill(c.brokers[i].pid, SIGCONT);
            cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
        }
    }
    cluster_destroy(&c);
}

TestSuite(reassign, .init = setup, .fini = teardown,
          .timeout = TEST_TIMEOUT_S);

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL); /* poll interval; callers bound the loop */
}

static uint64_t deadline_after(uint64_t budget_ms)
{
    uint64_t d = cluster_now_ms() + budget_ms;
    return d < budget_end_ms ? d : budget_end_ms;
}

/* --- Metadata ------------------------------------------------------------- */

/* Partition p of the topic in a fresh image of the active controller;
 * false if none answers. */
static bool part_read(int32_t p, struct meta_partition *out)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, TOPIC) : NULL;
    ok = t != NULL && p < t->n_partitions;
    if (ok) {
        *out = t->partitions[p];
    }
    meta_image_free(&img);
    return ok;
}

static bool same_set(const struct meta_replica_set *a,
                     const struct meta_replica_set *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (int32_t i = 0; i < a->n; i++) {
        if (!meta_replica_set_contains(b, a->ids[i])) {
            return false;
        }
    }
    return true;
}

/* Polls until partition p has exactly target (in order) as replicas, as
 * its whole ISR, and no move running. */
static bool wait_moved(int32_t p, const struct meta_replica_set *target,
                       uint64_t budget_ms, struct meta_partition *mp)
{
    uint64_t deadline = deadline_after(budget_ms);
    while (cluster_now_ms() < deadline) {
        if (part_read(p, mp) && mp->replicas.n == target->n &&
            memcmp(mp->replicas.ids, target->ids,
                   (size_t)target->n * sizeof target->ids[0]) == 0 &&
            same_set(&mp->isr, target) && mp->adding.n == 0 &&
            mp->removing.n == 0 && mp->leader >= 0) {
            return true;
        }
        pause_ms(100);
    }
    return false;
}

static bool all_full_isr(void)
{
    for (int32_t p = 0; p < PARTITIONS; p++) {
        struct meta_partition mp;
        if (!part_read(p, &mp) || mp.leader < 0 ||
            mp.isr.n != mp.replicas.n) {
            return false;
        }
    }
    return true;
}

static bool broker_unfenced(int32_t id)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_broker *b = ok ? meta_image_broker(&img, id) : NULL;
    ok = b != NULL && !b->fenced;
    meta_image_free(&img);
    return ok;
}

/* Whether broker id holds a directory for partition p. */
static bool has_dir(int32_t id, int32_t p)
{
    char dir[4200], path[4400];
    cluster_broker_log_dir(&c, cluster_broker(&c, id), dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s-%d", dir, TOPIC, p);
    struct stat st;
    return stat(path, &st) == 0;
}

static bool wait_no_dir(int32_t id, int32_t p, uint64_t budget_ms)
{
    uint64_t deadline = deadline_after(budget_ms);
    while (cluster_now_ms() < deadline) {
        if (!has_dir(id, p)) {
            return true;
        }
        pause_ms(100);
    }
    return false;
}

/* --- Kafka requests ------------------------------------------------------- */

struct move {
    int32_t partition;
    const int32_t *replicas; /* NULL: cancel */
    int32_t n;
};

/* AlterPartitionReassignments v0 of moves on topic `topic` through broker
 * 1; errors[i] answers moves[i]. */
static void alter(const char *topic, const struct move *moves, int32_t n,
                  int16_t *errors)
{
    struct kafka_ReassignablePartition ps[8];
    cr_assert_leq(n, 8);
    for (int32_t i = 0; i < n; i++) {
        ps[i] = (struct kafka_ReassignablePartition){
            moves[i].partition, moves[i].replicas,
            moves[i].replicas == NULL ? -1 : moves[i].n};
    }
    struct kafka_ReassignableTopic t = {slice_from_str(topic), ps, n};
    struct kafka_AlterPartitionReassignmentsRequest rq = {30000, &t, 1};
    struct kafka_wire_answer ans;
    struct writer w;
    writer_init(&w, 1u << 16);
    cr_assert_eq(kafka_alter_partition_reassignments_request_encode(&w, 0,
                                                                    &rq),
                 RC_OK);
    cr_assert(kafka_wire_call(c.brokers[0].port,
                              KAFKA_API_ALTER_PARTITION_REASSIGNMENTS, 0, &w,
                              &ans),
              "no answer to AlterPartitionReassignments");
    writer_free(&w);
    struct kafka_AlterPartitionReassignmentsResponse ar;
    cr_assert_eq(kafka_alter_partition_reassignments_response_decode(
                     &ans.r, 0, &ans.a, &ar),
                 RC_OK);
    cr_assert_eq(ar.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(ar.ResponsesCnt, 1);
    cr_assert_eq(ar.Responses[0].PartitionsCnt, n);
    for (int32_t i = 0; i < n; i++) {
        cr_assert_eq(ar.Responses[0].Partitions[i].PartitionIndex,
                     moves[i].partition);
        errors[i] = ar.Responses[0].Partitions[i].ErrorCode;
    }
    kafka_wire_answer_free(&ans);
}

/* ListPartitionReassignments v0 of every move: for each partition of the
 * topic, whether it is listed and its adding replicas. */
static int32_t list_moves(struct meta_replica_set adding[PARTITIONS])
{
    struct kafka_ListPartitionReassignmentsRequest rq = {30000, NULL, -1};
    struct kafka_wire_answer ans;
    struct writer w;
    writer_init(&w, 1u << 12);
    cr_assert_eq(kafka_list_partition_reassignments_request_encode(&w, 0,
                                                                   &rq),
                 RC_OK);
    cr_assert(kafka_wire_call(c.brokers[1].port,
                              KAFKA_API_LIST_PARTITION_REASSIGNMENTS, 0, &w,
                              &ans),
              "no answer to ListPartitionReassignments");
    writer_free(&w);
    struct kafka_ListPartitionReassignmentsResponse lr;
    cr_assert_eq(kafka_list_partition_reassignments_response_decode(
                     &ans.r, 0, &ans.a, &lr),
                 RC_OK);
    cr_assert_eq(lr.ErrorCode, KAFKA_ERROR_NONE);
    int32_t listed = 0;
    memset(adding, 0, PARTITIONS * sizeof adding[0]);
    for (int32_t i = 0; i < lr.TopicsCnt; i++) {
        cr_assert(slice_eq_str(lr.Topics[i].Name, TOPIC));
        for (int32_t j = 0; j < lr.Topics[i].PartitionsCnt; j++) {
            const struct kafka_OngoingPartitionReassignment *p =
                &lr.Topics[i].Partitions[j];
            cr_assert(p->PartitionIndex >= 0 &&
                      p->PartitionIndex < PARTITIONS);
            struct meta_replica_set *s = &adding[p->PartitionIndex];
            for (int32_t k = 0; k < p->AddingReplicasCnt; k++) {
                s->ids[s->n++] = p->AddingReplicas[k];
            }
            listed++;
        }
    }
    kafka_wire_answer_free(&ans);
    return listed;
}

/* UnregisterBroker v0 of broker id through broker 2; its error. */
static int16_t unregister_broker(int32_t id)
{
    struct kafka_UnregisterBrokerRequest rq = {id};
    struct kafka_wire_answer ans;
    struct writer w;
    writer_init(&w, 256);
    cr_assert_eq(kafka_unregister_broker_request_encode(&w, 0, &rq), RC_OK);
    cr_assert(kafka_wire_call(c.brokers[1].port, KAFKA_API_UNREGISTER_BROKER,
                              0, &w, &ans),
              "no answer to UnregisterBroker");
    writer_free(&w);
    struct kafka_UnregisterBrokerResponse ur;
    cr_assert_eq(kafka_unregister_broker_response_decode(&ans.r, 0, &ans.a,
                                                         &ur),
                 RC_OK);
    kafka_wire_answer_free(&ans);
    return ur.ErrorCode;
}

/* --- Load ----------------------------------------------------------------- */

static void load_start(void)
{
    cr_assert(repl_load_start(&load, &c, TOPIC, LOAD_RATE),
              "repl_load.py not started (script %s); set CAIRN_SRC",
              load.script);
}

static bool wait_acked_above(long n, uint64_t budget_ms)
{
    uint64_t deadline = deadline_after(budget_ms);
    while (cluster_now_ms() < deadline) {
        if (repl_load_acked(&load) > n) {
            return true;
        }
        pause_ms(100);
    }
    return false;
}

/* Stops the producer and runs repl_load.py verify; asserts both passed. */
static void load_finish(void)
{
    int status = repl_load_stop(&load, deadline_after(60000));
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "load producer status 0x%x; see %s", (unsigned)status,
              load.log);
    char text[2048];
    status = repl_load_verify(&load, &c, deadline_after(90000), text,
                              sizeof text);
    fprintf(stderr, "reassign: %s", text);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "verify failed (status 0x%x):\n%s", (unsigned)status, text);
}

/* --- The test ------------------------------------------------------------- */

/* Three brokers and the topic, every partition in sync. */
static void start_cluster(const char *broker_config)
{
    c.broker_extra_config = broker_config;
    cluster_start(&c, 3, 3);
    started = true;
    cr_assert(cluster_wait_ready(&c, deadline_after(30000)),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, TOPIC, PARTITIONS, 3),
                 KAFKA_ERROR_NONE);
    uint64_t deadline = deadline_after(15000);
    while (!all_full_isr() && cluster_now_ms() < deadline) {
        pause_ms(100);
    }
    cr_assert(all_full_isr(), "topic not in sync after creation");
}

Test(reassign, moves_onto_an_added_broker_under_load_and_cancels)
{
    start_cluster(extra_config);
    load_start();
    cr_assert(wait_acked_above(WARMUP_ACKED, 30000),
              "no load before the moves; see %s", load.log);
    struct cluster_node *b4 = cluster_add_broker(&c);
    cr_assert_eq(b4->id, 4);
    uint64_t deadline = deadline_after(20000);
    while (!broker_unfenced(4) && cluster_now_ms() < deadline) {
        pause_ms(100);
    }
    cr_assert(broker_unfenced(4), "broker 4 never joined; see %s", b4->log);

    /* Targets: partition 0 swaps its leader for 4, partition 1 its last
     * replica, partition 2 its middle one (cancelled later). */
    struct meta_partition before[3];
    int32_t t[3][3];
    for (int32_t p = 0; p < 3; p++) {
        cr_assert(part_read(p, &before[p]));
        memcpy(t[p], before[p].replicas.ids, sizeof t[p]);
    }
    t[0][0] = 4;
    t[1][2] = 4;
    t[2][1] = 4;
    cr_assert_eq(kill(b4->pid, SIGSTOP), 0);
    struct move moves[3] = {{0, t[0], 3}, {1, t[1], 3}, {2, t[2], 3}};
    int16_t errs[8];
    alter(TOPIC, moves, 3, errs);
    for (int32_t i = 0; i < 3; i++) {
        cr_assert_eq(errs[i], KAFKA_ERROR_NONE, "move %d: error %d", i,
                     errs[i]);
    }
    struct meta_replica_set adding[PARTITIONS];
    cr_assert_eq(list_moves(adding), 3, "three moves in progress");
    for (int32_t p = 0; p < 3; p++) {
        cr_assert(adding[p].n == 1 && adding[p].ids[0] == 4,
                  "partition %d: adding 4", p);
    }
    /* Cancel one; a second cancel finds nothing; bad requests. */
    struct move cancel = {2, NULL, 0};
    alter(TOPIC, &cancel, 1, errs);
    cr_assert_eq(errs[0], KAFKA_ERROR_NONE);
    alter(TOPIC, &cancel, 1, errs);
    cr_assert_eq(errs[0], KAFKA_ERROR_NO_REASSIGNMENT_IN_PROGRESS);
    const int32_t dup[2] = {1, 1}, unknown[2] = {1, 9};
    struct move bad[4] = {{3, dup, 2}, {4, unknown, 2}, {5, dup, 0},
                          {PARTITIONS, dup, 1}};
    alter(TOPIC, bad, 4, errs);
    cr_assert_eq(errs[0], KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(errs[1], KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(errs[2], KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(errs[3], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    alter("no-such-topic", moves, 1, errs);
    cr_assert_eq(errs[0], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(list_moves(adding), 2, "two moves left after the cancel");
    cr_assert_eq(kill(b4->pid, SIGCONT), 0);

    /* The moves complete under load: target order, full ISR, the leader
     * of partition 0 moved off the replica that left. */
    struct meta_replica_set target[2];
    for (int32_t p = 0; p < 2; p++) {
        target[p] = (struct meta_replica_set){0};
        for (int32_t k = 0; k < 3; k++) {
            target[p].ids[target[p].n++] = t[p][k];
        }
    }
    struct meta_partition mp;
    cr_assert(wait_moved(0, &target[0], 40000, &mp),
              "partition 0 never reached its target; see %s", b4->log);
    cr_assert_eq(mp.leader, 4, "partition 0's leader left: 4 leads");
    cr_assert(wait_moved(1, &target[1], 20000, &mp),
              "partition 1 never reached its target");
    cr_assert_eq(list_moves(adding), 0, "no move left");
    struct meta_partition p2;
    cr_assert(part_read(2, &p2));
    cr_assert(same_set(&p2.replicas, &before[2].replicas),
              "the cancelled move is back on its replicas");
    cr_assert(wait_acked_above(repl_load_acked(&load) + 500, 20000),
              "writes go on after the moves");
    load_finish();
    deadline = deadline_after(20000);
    while (!all_full_isr() && cluster_now_ms() < deadline) {
        pause_ms(100);
    }
    cr_assert(all_full_isr(), "every ISR full at the end");
    /* The replicas that left delete their logs. */
    cr_assert(wait_no_dir(before[0].replicas.ids[0], 0, 15000),
              "broker %d kept partition 0's log",
              before[0].replicas.ids[0]);
    cr_assert(wait_no_dir(before[1].replicas.ids[2], 1, 15000),
              "broker %d kept partition 1's log",
              before[1].replicas.ids[2]);
    cr_assert(wait_no_dir(4, 2, 15000), "broker 4 kept partition 2's log");
    cr_assert(has_dir(4, 0) && has_dir(4, 1), "broker 4 hosts the moves");
    /* UnregisterBroker over the wire: an unknown id, and a broker that
     * still hosts replicas, are refused. */
    cr_assert_eq(unregister_broker(9), KAFKA_ERROR_BROKER_ID_NOT_REGISTERED);
    cr_assert_eq(unregister_broker(4), KAFKA_ERROR_INVALID_REQUEST);
}

/* --- Throttle ------------------------------------------------------------- */

#define THROTTLE_RATE 400000 /* bytes/s, leader.replication.throttled.rate */
#define THROTTLE_BATCHES 48  /* of 64 KiB: 3 MiB to copy */

/* Produces one 64 KiB batch to partition 0 through its leader's port;
 * the Kafka error, -1 without an answer. */
static int big_produce(int port, uint32_t seed)
{
    struct kafka_client kc;
    if (!kafka_wire_connect(&kc, port)) {
        kafka_client_close(&kc);
        return -1;
    }
    struct built_batch b = batch_build(16, 4096, 1000, seed);
    struct kafka_PartitionProduceResponse out;
    bool answered = kafka_wire_produce_answer(&kc, TOPIC, 0, b.bytes, b.len,
                                              -1, 10000, &out);
    built_batch_free(&b);
    kafka_client_close(&kc);
    return answered ? out.ErrorCode : -1;
}

/* Fills partition 0 with 3 MiB, adds broker 4 (then runs live(), if any,
 * to set a throttle) and moves partition 0's last replica there; checks
 * that acks=all writes stay quick meanwhile and that the move takes as
 * long as THROTTLE_RATE says. */
static void throttled_move(const char *broker_config, void (*live)(void))
{
    start_cluster(broker_config);
    struct meta_partition before;
    cr_assert(part_read(0, &before));
    struct cluster_node *leader = cluster_broker(&c, before.leader);
    /* The leader may not have applied the topic yet: the first write is
     * tried until it lands. */
    uint64_t ready_by = deadline_after(15000);
    while (big_produce(leader->port, 0) != KAFKA_ERROR_NONE &&
           cluster_now_ms() < ready_by) {
        pause_ms(200);
    }
    for (uint32_t i = 1; i < THROTTLE_BATCHES; i++) {
        int e = big_produce(leader->port, i);
        cr_assert_eq(e, KAFKA_ERROR_NONE, "batch %u: error %d", i, e);
    }
    struct cluster_node *b4 = cluster_add_broker(&c);
    uint64_t deadline = deadline_after(20000);
    while (!broker_unfenced(4) && cluster_now_ms() < deadline) {
        pause_ms(100);
    }
    cr_assert(broker_unfenced(4), "broker 4 never joined; see %s", b4->log);
    if (live != NULL) {
        live();
    }
    /* Keep the leader: replace the last replica with 4. */
    int32_t t[3];
    memcpy(t, before.replicas.ids, sizeof t);
    t[2] = 4;
    struct move m = {0, t, 3};
    int16_t err;
    uint64_t move_start = cluster_now_ms();
    alter(TOPIC, &m, 1, &err);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    /* Producers are not throttled: acks=all writes go on meanwhile. */
    for (uint32_t i = 0; i < 5; i++) {
        uint64_t t0 = cluster_now_ms();
        cr_assert_eq(big_produce(leader->port, 1000 + i), KAFKA_ERROR_NONE);
        cr_assert_lt(cluster_now_ms() - t0, 3000,
                     "an acks=all write took %llu ms during the move",
                     (unsigned long long)(cluster_now_ms() - t0));
    }
    struct meta_replica_set target = {0};
    for (int32_t k = 0; k < 3; k++) {
        target.ids[target.n++] = t[k];
    }
    struct meta_partition mp;
    cr_assert(wait_moved(0, &target, 60000, &mp),
              "the throttled move never completed; see %s", b4->log);
    uint64_t took = cluster_now_ms() - move_start;
    /* 53 batches of ~64 KiB at 400 kB/s, less the bucket's first second:
     * at least 6 s; unthrottled it takes well under one. */
    uint64_t bytes = (THROTTLE_BATCHES + 5) * 65536ull;
    uint64_t floor_ms = (bytes * 1000 / THROTTLE_RATE) - 1000 - 1500;
    fprintf(stderr, "reassign: throttled move of %llu bytes took %llu ms "
            "(at least %llu expected)\n", (unsigned long long)bytes,
            (unsigned long long)took, (unsigned long long)floor_ms);
    cr_assert_geq(took, floor_ms, "the move was not throttled: %llu ms",
                  (unsigned long long)took);
}

Test(reassign, leader_throttle_slows_a_move_not_producers)
{
    throttled_move("min.insync.replicas=2\n"
                   "replica.lag.time.max.ms=3000\n"
                   "leader.replication.throttled.rate=400000\n",
                   NULL);
}

/* follower.replication.throttled.rate, set live on broker 4 alone. */
static void throttle_broker_4(void)
{
    cr_assert_eq(kafka_wire_set_broker_config(
                     c.brokers[1].port, "4",
                     "follower.replication.throttled.rate", "400000"),
                 KAFKA_ERROR_NONE);
}

Test(reassign, live_follower_throttle_slows_a_move)
{
    throttled_move(extra_config, throttle_broker_4);
}
