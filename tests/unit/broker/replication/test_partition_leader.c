/* Tests for the leader side of broker/replication/partition.c on a real
 * log, hosted by a test host with a hand-moved clock: becoming leader,
 * admitting appends, the high watermark that follows the ISR's fetches,
 * acks=all waiters and every way they end, ISR shrink and expansion
 * through AlterPartition, and newer metadata. Broker 1 leads replicas
 * 1, 2, 3 with min.insync.replicas 2 unless a test says otherwise. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "broker/replication/partition.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"
#include "tests/lib/test_host.h"

#define SELF 1
#define LAG_MS 3000
#define MIN_INSYNC 2

static struct log_fixture f;
static struct test_host th;
static struct partition p;
static struct meta_broker brokers[3];
static struct meta_image img;
static struct meta_partition mp;

/* What acks=all waiters were told, in order. */
static int told[8];
static int n_told;

static void waiter_cb(void *arg, int rc)
{
    (void)arg;
    cr_assert_lt(n_told, 8);
    told[n_told++] = rc;
}

static void setup(void)
{
    log_fixture_setup(&f);
    log_fixture_open(&f);
    test_host_init(&th, SELF);
    th.now_ms = 1000;
    p = (struct partition){.host = &th.host, .log = f.log,
                           .leader = META_NO_LEADER, .leader_epoch = -1,
                           .corrupt_offset = -1, .repair_until = -1};
    strcpy(p.topic, "t");
    producer_state_init(&p.producers);
    for (int i = 0; i < 3; i++) {
        brokers[i] = (struct meta_broker){.id = i + 1, .epoch = 1};
    }
    meta_image_init(&img);
    img.brokers = brokers;
    img.n_brokers = 3;
    mp = (struct meta_partition){.replicas = {3, {1, 2, 3}},
                                 .isr = {3, {1, 2, 3}},
                                 .leader = SELF, .leader_epoch = 5,
                                 .partition_epoch = 7};
    n_told = 0;
}

static void teardown(void)
{
    partition_fail_waiters(&p, RC_NOT_LEADER);
    producer_state_free(&p.producers);
    log_fixture_teardown(&f);
}

TestSuite(partition_leader, .init = setup, .fini = teardown, .timeout = 60);

static void apply_min(int32_t min_insync)
{
    partition_apply_metadata(&p, SELF, &mp, &img, min_insync, LAG_MS,
                             th.now_ms);
}

static void apply(void)
{
    apply_min(MIN_INSYNC);
}

static void lead_with_isr(int32_t n, const int32_t *ids)
{
    mp.isr.n = n;
    memcpy(mp.isr.ids, ids, (size_t)n * sizeof *ids);
    apply();
}

/* A client batch of n records with acks; its rc, *last its last offset. */
static int produce(int32_t n, int16_t acks, int64_t *last)
{
    struct built_batch b = batch_build(n, 20, 1000, (uint32_t)n);
    struct log_append_info info;
    int rv = partition_append(&p, b.bytes, b.len, th.now_ms, acks, &info);
    built_batch_free(&b);
    if (rv == RC_OK && last != NULL) {
        *last = info.last_offset;
    }
    return rv;
}

/* Produces n records with acks=all and parks a waiter for them. */
static void produce_and_wait(int32_t n)
{
    int64_t last = -1;
    cr_assert_eq(produce(n, -1, &last), RC_OK);
    cr_assert_eq(partition_wait_hw(&p, last + 1, waiter_cb, NULL), RC_OK);
}

static void fetch(int32_t replica, int64_t offset)
{
    cr_assert_eq(partition_replica_fetch(&p, replica, offset, th.now_ms),
                 RC_OK);
}

Test(partition_leader, a_partition_that_does_not_lead_refuses_everything)
{
    cr_assert_eq(produce(1, 1, NULL), RC_NOT_LEADER);
    cr_assert_eq(partition_replica_fetch(&p, 2, 0, th.now_ms),
                 RC_NOT_LEADER);
    cr_assert_eq(partition_wait_hw(&p, 1, waiter_cb, NULL), RC_NOT_LEADER);
    mp.leader = 2;
    apply();
    cr_assert_eq(produce(1, 1, NULL), RC_NOT_LEADER);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_TRUNCATE,
                 "a new follower first asks where its log diverges");
    cr_assert_eq(log_end_offset(f.log), 0);
}

Test(partition_leader, becoming_leader_takes_the_metadata)
{
    apply();
    cr_assert(partition_is_leader(&p));
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 5,
                 "its epoch starts in the log's epoch cache");
    cr_assert_eq(p.leader_epoch, 5);
    cr_assert_eq(p.partition_epoch, 7);
    cr_assert_eq(p.repl.isr.n, 3);
    cr_assert_eq(p.repl.min_isr, MIN_INSYNC);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_NONE);
}

Test(partition_leader, acks_all_is_refused_while_the_isr_is_below_min)
{
    lead_with_isr(1, (int32_t[]){1});
    cr_assert_eq(produce(3, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
    cr_assert_eq(log_end_offset(f.log), 0, "nothing written");
    cr_assert_eq(produce(3, 1, NULL), RC_OK, "acks=1 is not held back");
    cr_assert_eq(log_end_offset(f.log), 3);
}

Test(partition_leader, an_append_wakes_parked_fetches)
{
    apply();
    int before = th.wakes;
    cr_assert_eq(produce(2, 1, NULL), RC_OK);
    cr_assert_gt(th.wakes, before);
}

/* The rule the README states: acks=all waits for the whole ISR, not for
 * min.insync.replicas of it. */
Test(partition_leader, the_hw_waits_for_every_member_of_the_isr)
{
    apply();
    produce_and_wait(5);
    fetch(2, 5);
    cr_assert_eq(p.hw, 0, "replica 3 is in the ISR and has nothing yet");
    cr_assert_eq(n_told, 0);
    fetch(3, 5);
    cr_assert_eq(p.hw, 5);
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_OK);
}

Test(partition_leader, the_hw_never_goes_back)
{
    apply();
    produce_and_wait(5);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(p.hw, 5);
    fetch(2, 3);
    cr_assert_eq(p.hw, 5);
    mp.partition_epoch = 8;
    apply();
    cr_assert_eq(p.hw, 5);
}

Test(partition_leader, waiters_are_released_in_offset_order_as_the_hw_moves)
{
    apply();
    produce_and_wait(2); /* waits for 2 */
    produce_and_wait(3); /* waits for 5 */
    fetch(2, 2);
    fetch(3, 2);
    cr_assert_eq(n_told, 1);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(n_told, 2);
    cr_assert_eq(told[1], RC_OK);
}

Test(partition_leader, fetches_of_a_non_replica_are_not_found)
{
    apply();
    cr_assert_eq(partition_replica_fetch(&p, 9, 0, th.now_ms),
                 RC_NOT_FOUND);
}

Test(partition_leader, a_lagging_follower_is_proposed_out_and_the_hw_moves)
{
    apply();
    produce_and_wait(5);
    fetch(2, 5);
    th.now_ms += LAG_MS + 1;
    fetch(2, 5); /* 2 keeps up; 3 has not fetched for longer than the lag */
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1);
    cr_assert_eq(th.proposed.n, 2);
    cr_assert(meta_replica_set_contains(&th.proposed, 1));
    cr_assert(meta_replica_set_contains(&th.proposed, 2));
    cr_assert(p.alter_in_flight);
    cr_assert_eq(p.hw, 0, "not before the controller commits it");
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1, "one change in flight at a time");
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed, 8, th.now_ms);
    cr_assert_not(p.alter_in_flight);
    cr_assert_eq(p.isr.n, 2);
    cr_assert_eq(p.partition_epoch, 8);
    cr_assert_eq(p.hw, 5);
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_OK);
}

Test(partition_leader, a_refused_change_keeps_the_committed_isr_and_retries)
{
    apply();
    produce_and_wait(5);
    th.now_ms += LAG_MS + 1;
    fetch(2, 5);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1);
    partition_alter_done(&p, PARTITION_ALTER_REFUSED, NULL, 0, th.now_ms);
    cr_assert_not(p.alter_in_flight);
    cr_assert_eq(p.isr.n, 3);
    cr_assert_eq(p.partition_epoch, 7);
    cr_assert_eq(n_told, 0);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 2, "asked again");
}

/* The controller may have committed an expansion whose answer was lost:
 * replica 3 may be in the ISR it would elect from, so the HW must keep
 * counting it until the outcome is known. */
Test(partition_leader, an_expansion_of_unknown_outcome_keeps_counting_the_joiner)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(th.alters, 1);
    cr_assert_eq(th.proposed.n, 3);
    partition_alter_done(&p, PARTITION_ALTER_UNKNOWN, NULL, 0, th.now_ms);
    cr_assert_not(p.alter_in_flight);
    cr_assert_eq(p.isr.n, 2, "nothing is known to be committed");
    int64_t last = -1;
    cr_assert_eq(produce(3, -1, &last), RC_OK);
    th.now_ms += LAG_MS + 1; /* replica 3 falls behind */
    fetch(2, 8);
    cr_assert_eq(p.hw, 5, "the HW waits for replica 3, which may be in "
                          "the controller's ISR");
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 2, "the same change is sent again");
    cr_assert_eq(th.proposed.n, 3);
    cr_assert(meta_replica_set_contains(&th.proposed, 3));
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed, 8,
                         th.now_ms);
    cr_assert_eq(p.isr.n, 3);
    cr_assert_eq(p.hw, 5);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 3, "then the lagging replica is dropped");
    cr_assert_eq(th.proposed.n, 2);
}

Test(partition_leader, a_change_of_unknown_outcome_goes_again_at_a_fetch)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(th.alters, 1);
    partition_alter_done(&p, PARTITION_ALTER_UNKNOWN, NULL, 0, th.now_ms);
    fetch(2, 5);
    cr_assert_eq(th.alters, 1, "not before the retry backoff");
    th.now_ms += PARTITION_ALTER_RETRY_MS;
    fetch(2, 5);
    cr_assert_eq(th.alters, 2, "the next fetch after it sends it again");
    cr_assert(meta_replica_set_contains(&th.proposed, 3));
    th.now_ms += PARTITION_ALTER_RETRY_MS;
    fetch(3, 5);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 2, "one at a time");
}

Test(partition_leader, newer_metadata_settles_a_change_of_unknown_outcome)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(th.alters, 1);
    partition_alter_done(&p, PARTITION_ALTER_UNKNOWN, NULL, 0, th.now_ms);
    mp.isr = (struct meta_replica_set){3, {1, 2, 3}};
    mp.partition_epoch = 8; /* the lost answer's change, committed */
    apply();
    cr_assert_eq(p.isr.n, 3);
    cr_assert_eq(p.partition_epoch, 8);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1, "nothing left to send");
}

Test(partition_leader, each_acks_waits_for_what_it_promises)
{
    apply();
    int64_t last = -1;
    bool waiting = true;
    cr_assert_eq(produce(2, 0, &last), RC_OK);
    cr_assert_eq(partition_wait_acks(&p, 0, last, waiter_cb, NULL, &waiting),
                 RC_OK);
    cr_assert_not(waiting, "acks=0: nothing");
    cr_assert_eq(partition_wait_acks(&p, 1, last, waiter_cb, NULL, &waiting),
                 RC_OK);
    cr_assert_not(waiting, "acks=1 without sync before ack: the append");
    p.sync_before_ack = true;
    cr_assert_eq(produce(2, 1, &last), RC_OK);
    cr_assert_eq(partition_wait_acks(&p, 1, last, waiter_cb, NULL, &waiting),
                 RC_OK);
    cr_assert(waiting, "acks=1 with sync before ack: the fsync");
    cr_assert_eq(partition_wait_acks(&p, -1, last, waiter_cb, NULL,
                                     &waiting), RC_OK);
    cr_assert(waiting, "acks=all: the HW");
    cr_assert_eq(n_told, 0);
    fetch(2, last + 1);
    fetch(3, last + 1);
    cr_assert_eq(log_fixture_wait_durable(&f, last + 1), RC_OK);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(p.hw, last + 1);
    cr_assert_eq(partition_wait_acks(&p, -1, last, waiter_cb, NULL,
                                     &waiting), RC_OK);
    cr_assert_not(waiting, "the HW has passed it already");
}

Test(partition_leader, a_consumer_reads_below_the_hw_a_follower_to_the_end)
{
    apply();
    produce_and_wait(3);
    fetch(2, 3);
    fetch(3, 3);
    cr_assert_eq(p.hw, 3);
    produce_and_wait(2); /* offsets 3-4, above the HW */
    struct log_span span;
    cr_assert_eq(partition_read(&p, false, 0, INT64_MAX, &span), RC_OK);
    int64_t below_hw = span.bytes;
    log_span_release(&span);
    cr_assert_eq(partition_read(&p, true, 0, INT64_MAX, &span), RC_OK);
    cr_assert_gt(span.bytes, below_hw, "the follower gets 3-4 too");
    log_span_release(&span);
    cr_assert_eq(partition_read(&p, false, 3, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.bytes, 0, "nothing at the HW for a consumer");
    log_span_release(&span);
}

Test(partition_leader, readers_are_checked_by_epoch_and_membership)
{
    cr_assert_eq(partition_check_reader(&p, -1, -1),
                 KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, "not leading yet");
    apply();
    cr_assert_eq(partition_check_reader(&p, -1, -1), KAFKA_ERROR_NONE);
    cr_assert_eq(partition_check_reader(&p, 5, 2), KAFKA_ERROR_NONE);
    cr_assert_eq(partition_check_reader(&p, 4, 2),
                 KAFKA_ERROR_FENCED_LEADER_EPOCH);
    cr_assert_eq(partition_check_reader(&p, 6, -1),
                 KAFKA_ERROR_UNKNOWN_LEADER_EPOCH);
    cr_assert_eq(partition_check_reader(&p, 5, 9),
                 KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, "not a replica");
    p.repair_until = 3; /* elected while it lacks records below 3 */
    cr_assert_eq(partition_check_reader(&p, 5, 2),
                 KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER,
                 "a follower would truncate to it");
    cr_assert_eq(partition_check_reader(&p, -1, -1),
                 KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER,
                 "a consumer would miss records");
}

Test(partition_leader, only_a_refusal_of_the_change_itself_reverts_it)
{
    cr_assert_eq(partition_alter_outcome(KAFKA_ERROR_NONE),
                 PARTITION_ALTER_COMMITTED);
    cr_assert_eq(partition_alter_outcome(KAFKA_ERROR_INELIGIBLE_REPLICA),
                 PARTITION_ALTER_REFUSED);
    cr_assert_eq(partition_alter_outcome(KAFKA_ERROR_INVALID_REQUEST),
                 PARTITION_ALTER_REFUSED);
    int16_t unknown[] = {KAFKA_ERROR_NOT_CONTROLLER,
                         KAFKA_ERROR_INVALID_UPDATE_VERSION,
                         KAFKA_ERROR_FENCED_LEADER_EPOCH,
                         KAFKA_ERROR_STALE_BROKER_EPOCH,
                         KAFKA_ERROR_REQUEST_TIMED_OUT};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        cr_assert_eq(partition_alter_outcome(unknown[i]),
                     PARTITION_ALTER_UNKNOWN, "error %d", unknown[i]);
    }
}

Test(partition_leader, a_shrink_below_min_fails_the_waiters_after_append)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    th.now_ms += LAG_MS + 1;
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1);
    cr_assert_eq(th.proposed.n, 1);
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed, 8, th.now_ms);
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    cr_assert_eq(p.hw, 0, "the HW stays while the ISR is below min");
    cr_assert(p.hw_stalled);
    cr_assert(strstr(th.event_text, "acks=all failed 1 request after up to "
                                    "3001 ms: NOT_ENOUGH_REPLICAS_AFTER_"
                                    "APPEND (hw 0, isr 1") != NULL,
              "%s", th.event_text);
    cr_assert_eq(log_end_offset(f.log), 5, "the write stays in the log");
    cr_assert_eq(produce(1, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
}

Test(partition_leader, losing_leadership_fails_the_waiters_not_leader)
{
    apply();
    produce_and_wait(3);
    mp.leader = 2;
    mp.leader_epoch = 6;
    apply();
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_NOT_LEADER);
    cr_assert_not(partition_is_leader(&p));
    cr_assert_eq(p.follow, PARTITION_FOLLOW_TRUNCATE);
}

Test(partition_leader, a_caught_up_follower_is_proposed_back_in)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    fetch(2, 5);
    cr_assert_eq(p.hw, 5);
    cr_assert_eq(th.alters, 0);
    fetch(3, 5);
    cr_assert_eq(th.alters, 1);
    cr_assert_eq(th.proposed.n, 3);
    cr_assert(meta_replica_set_contains(&th.proposed, 3));
    cr_assert(strstr(p.isr_why, "replica 3") != NULL, "%s", p.isr_why);
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed, 8, th.now_ms);
    cr_assert_eq(p.isr.n, 3);
}

Test(partition_leader, a_fenced_broker_is_not_proposed_back)
{
    brokers[2].fenced = true;
    lead_with_isr(2, (int32_t[]){1, 2});
    produce(5, 1, NULL);
    fetch(2, 5);
    fetch(3, 5);
    cr_assert_eq(th.alters, 0);
    brokers[2].fenced = false;
    apply();
    fetch(3, 5);
    cr_assert_eq(th.alters, 1, "once unfenced it may join");
}

Test(partition_leader, newer_metadata_of_the_same_leadership_adopts_its_isr)
{
    apply();
    produce_and_wait(5);
    fetch(2, 5);
    mp.isr = (struct meta_replica_set){2, {1, 2}};
    mp.partition_epoch = 9;
    apply();
    cr_assert_eq(p.isr.n, 2);
    cr_assert_eq(p.partition_epoch, 9);
    /* Kafka would count replica 3 for the HW until it lags. Out of the
     * ISR at a new partition epoch, its fetches from before are
     * forgotten here (a damaged replica confirmed out cuts its log next,
     * isr.h), so the HW waits only for the ISR. */
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(p.hw, 5, "replica 3 left: the HW no longer waits for it");
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_OK);
}

Test(partition_leader, a_repairing_leader_takes_no_writes)
{
    apply();
    p.repair_until = 3;
    cr_assert_eq(produce(1, 1, NULL), RC_NOT_LEADER);
    cr_assert_eq(log_end_offset(f.log), 0);
}

Test(partition_leader, waiters_past_the_cap_are_refused)
{
    apply();
    cr_assert_eq(produce(1, -1, NULL), RC_OK);
    for (uint32_t i = 0; i < PARTITION_WAITERS_MAX; i++) {
        cr_assert_eq(partition_wait_hw(&p, 1, waiter_cb, NULL), RC_OK);
    }
    cr_assert_eq(partition_wait_hw(&p, 1, waiter_cb, NULL), RC_FULL);
    p.n_waiters = 0; /* the callbacks would overflow told[] */
}

/* With log.sync.before.ack the leader's own contribution is its durable
 * end: the HW moves once the group commit has synced the append. */
Test(partition_leader, with_sync_before_ack_the_hw_waits_for_the_fsync)
{
    p.sync_before_ack = true;
    mp.replicas = (struct meta_replica_set){1, {1}};
    mp.isr = (struct meta_replica_set){1, {1}};
    apply_min(1);
    produce_and_wait(4);
    cr_assert_eq(p.hw, 0, "written, not yet synced");
    for (int i = 0; i < 1000 && n_told == 0; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(n_told, 1);
    cr_assert_eq(told[0], RC_OK);
    cr_assert_eq(p.hw, 4);
    cr_assert_geq(log_durable_end_offset(f.log), 4);
}

/* Fewer replicas than min.insync.replicas: acks=all is refused before
 * anything is written (Kafka's NotEnoughReplicasException), while acks=1
 * writes become visible on the one replica there is. */
Test(partition_leader, fewer_replicas_than_min_insync_refuse_acks_all)
{
    mp.replicas = (struct meta_replica_set){1, {1}};
    mp.isr = (struct meta_replica_set){1, {1}};
    apply_min(2);
    int64_t last = -1;
    cr_assert_eq(produce(3, -1, &last), RC_NOT_ENOUGH_REPLICAS);
    cr_assert_eq(log_end_offset(f.log), 0, "nothing written");
    cr_assert_eq(produce(3, 1, &last), RC_OK);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(p.hw, 3);
    cr_assert_not(p.hw_stalled);
}

/* A waiter released after a long wait is told as an event naming what
 * moved the HW. */
Test(partition_leader, a_long_acks_all_wait_is_explained)
{
    apply();
    produce_and_wait(5);
    fetch(2, 5);
    th.now_ms += PARTITION_ACK_WAIT_EVENT_MS + 100;
    fetch(3, 5);
    cr_assert_eq(n_told, 1);
    cr_assert(strstr(th.last_event, "acks=all released 1 request") != NULL,
              "%s", th.last_event);
    cr_assert(strstr(th.last_event, "replica 3 fetched from offset 5") !=
                  NULL,
              "%s", th.last_event);
}

Test(partition_leader, refused_acks_all_writes_are_counted_in_paced_events)
{
    lead_with_isr(1, (int32_t[]){1});
    int before = th.events;
    cr_assert_eq(produce(1, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
    cr_assert_eq(th.events, before + 1, "the first refusal is told at once");
    cr_assert_str_eq(th.last_event, "event: t-0 acks=all refused 1 request: "
                     "NOT_ENOUGH_REPLICAS (isr 1: 1 < min.insync.replicas=2; "
                     "nothing written)");
    for (int i = 0; i < 4; i++) {
        th.now_ms += 10;
        cr_assert_eq(produce(1, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
    }
    cr_assert_eq(produce(1, 1, NULL), RC_OK, "acks=1 is not refused");
    cr_assert_eq(th.events, before + 1, "the next ones are held");
    th.now_ms += PARTITION_ACK_EVENT_EVERY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.events, before + 2);
    cr_assert(strstr(th.last_event, "acks=all refused 4 requests: "
                                    "NOT_ENOUGH_REPLICAS") != NULL,
              "%s", th.last_event);
    th.now_ms += PARTITION_ACK_EVENT_EVERY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.events, before + 2, "nothing held: nothing told");
}

Test(partition_leader, timed_out_acks_all_writes_are_counted_in_paced_events)
{
    lead_with_isr(2, (int32_t[]){1, 2});
    produce_and_wait(5);
    int before = th.events;
    partition_note_ack_timeout(&p, 4, 30000);
    cr_assert_eq(th.events, before + 1);
    cr_assert_str_eq(th.last_event, "event: t-0 acks=all timed out 1 request "
                     "after up to 30000 ms: REQUEST_TIMED_OUT (hw 0 short of "
                     "offset 4; isr 1,2, min.insync.replicas=2)");
    partition_note_ack_timeout(&p, 4, 30000);
    partition_note_ack_timeout(&p, 4, 25000);
    cr_assert_eq(th.events, before + 1, "held within the window");
    th.now_ms += PARTITION_ACK_EVENT_EVERY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert(strstr(th.last_event, "acks=all timed out 2 requests after up "
                                    "to 30000 ms: REQUEST_TIMED_OUT") != NULL,
              "%s", th.last_event);
}

/* --- Quiet leaders: no ISR check until something changes ---------------- */

/* Leads with 2 records that every follower holds: quiet. */
static void make_quiet(void)
{
    apply();
    cr_assert(partition_needs_isr_check(&p), "followers not heard yet");
    cr_assert_eq(produce(2, 1, NULL), RC_OK);
    fetch(2, 2);
    fetch(3, 2);
    cr_assert_eq(p.hw, 2);
    cr_assert_not(partition_needs_isr_check(&p));
    th.isr_works = 0;
}

Test(partition_leader, a_quiet_leader_needs_no_check_however_long_it_idles)
{
    make_quiet();
    th.now_ms += 100 * LAG_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 0, "followers at the log end are caught up, "
                               "as in Kafka");
    cr_assert_eq(p.hw, 2);
    cr_assert_not(partition_needs_isr_check(&p));
    cr_assert_eq(th.isr_works, 0);
}

Test(partition_leader, an_append_ends_the_quiet_and_the_lagging_are_dropped)
{
    make_quiet();
    th.now_ms += 10 * LAG_MS;
    cr_assert_eq(produce(1, 1, NULL), RC_OK);
    cr_assert_eq(th.isr_works, 1, "the append calls for checks");
    cr_assert(partition_needs_isr_check(&p));
    fetch(2, 3);
    th.now_ms += LAG_MS + 1;
    fetch(2, 3);
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 1, "replica 3 stopped at the old log end");
    cr_assert_eq(th.proposed.n, 2);
    cr_assert_not(meta_replica_set_contains(&th.proposed, 3));
}

Test(partition_leader, a_follower_fetching_below_the_log_end_ends_the_quiet)
{
    make_quiet();
    fetch(3, 1);
    cr_assert_eq(th.isr_works, 1);
    cr_assert(partition_needs_isr_check(&p));
    fetch(3, 2);
    partition_check_isr(&p, th.now_ms);
    cr_assert_not(partition_needs_isr_check(&p), "quiet again");
}

Test(partition_leader, an_isr_without_a_replica_ends_the_quiet)
{
    make_quiet();
    mp.isr = (struct meta_replica_set){2, {1, 2}};
    mp.partition_epoch++;
    apply();
    cr_assert_eq(th.isr_works, 1);
    cr_assert(partition_needs_isr_check(&p), "replica 3 may join again");
    fetch(3, 2);
    cr_assert_eq(th.alters, 1, "it does, at its fetch");
    partition_alter_done(&p, PARTITION_ALTER_UNKNOWN, NULL, 0, th.now_ms);
    cr_assert(partition_needs_isr_check(&p),
              "a change of unknown outcome is sent again by a check");
    cr_assert_eq(th.isr_works, 3);
    th.now_ms += PARTITION_ALTER_RETRY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert_eq(th.alters, 2);
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed,
                         mp.partition_epoch + 1, th.now_ms);
    cr_assert_not(partition_needs_isr_check(&p));
}

Test(partition_leader, acks_to_tell_end_the_quiet)
{
    make_quiet();
    partition_note_ack_timeout(&p, 1, 30000);
    cr_assert_eq(th.isr_works, 0, "told at once: nothing held");
    partition_note_ack_timeout(&p, 1, 30000);
    cr_assert_eq(th.isr_works, 1, "held for the next check");
    th.now_ms += PARTITION_ACK_EVENT_EVERY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert(strstr(th.last_event, "timed out 1 request") != NULL, "%s",
              th.last_event);
    cr_assert_not(partition_needs_isr_check(&p));

    apply_min(4); /* more than the 3 replicas: acks=all is refused */
    cr_assert_not(partition_needs_isr_check(&p));
    cr_assert_eq(produce(1, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
    cr_assert_eq(produce(1, -1, NULL), RC_NOT_ENOUGH_REPLICAS);
    cr_assert_eq(th.isr_works, 2, "the second refusal is held");
    th.now_ms += PARTITION_ACK_EVENT_EVERY_MS;
    partition_check_isr(&p, th.now_ms);
    cr_assert(strstr(th.last_event, "refused 1 request") != NULL, "%s",
              th.last_event);
}

/* --- The host's counts ---------------------------------------------------- */

static void assert_counts(struct partition_counts *c, int64_t leaders,
                          int64_t under, int64_t under_min)
{
    cr_assert_eq(c->leaders, leaders);
    cr_assert_eq(c->under_replicated, under);
    cr_assert_eq(c->under_min_isr, under_min);
}

Test(partition_leader, the_hosts_counts_follow_role_isr_and_close)
{
    struct partition_counts c = {0};
    th.host.counts = &c;
    apply();
    assert_counts(&c, 1, 0, 0);
    lead_with_isr(2, (int32_t[]){1, 2});
    assert_counts(&c, 1, 1, 0);
    fetch(3, 0);
    cr_assert_eq(th.alters, 1, "3 asks back in");
    partition_alter_done(&p, PARTITION_ALTER_COMMITTED, &th.proposed, 8,
                         th.now_ms);
    assert_counts(&c, 1, 0, 0);
    mp.isr = (struct meta_replica_set){1, {1}};
    mp.partition_epoch = 9;
    apply();
    assert_counts(&c, 1, 1, 1);
    mp.leader = 2;
    mp.leader_epoch++;
    apply();
    assert_counts(&c, 0, 0, 0);
    mp.leader = SELF;
    mp.leader_epoch++;
    apply();
    assert_counts(&c, 1, 1, 1);
    partition_close(&p);
    assert_counts(&c, 0, 0, 0);
    partition_close(&p);
    assert_counts(&c, 0, 0, 0);
}
