/* Unit tests for controller/plan_elect.c: ElectLeaders' per-partition
 * elections (preferred and unclean, with Kafka's error codes) and the
 * leader-imbalance check of auto.leader.rebalance.enable. Images are
 * built, and plans checked, by applying records with meta_apply(). */
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"
#include "controller/plan_elect.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static int16_t elect(const char *topic, int32_t p, int8_t type)
{
    int16_t error = -1;
    cr_assert_eq(plan_elect_partition(&img, topic, p, type, &out, &error),
                 RC_OK);
    return error;
}

/* Brokers 1..3 live; topic "t": p0 replicas [1,2,3] led by 2 (all in
 * sync), p1 [2,3,1] led by 2, p2 [3,1,2] with ISR [1,2] led by 1. */
static void elect_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("t", 1);
    add_partition(1, 0, SET(1, 2, 3), SET(1, 2, 3), 2);
    add_partition(1, 1, SET(2, 3, 1), SET(2, 3, 1), 2);
    add_partition(1, 2, SET(3, 1, 2), SET(1, 2), 1);
}

/* --- ElectLeaders ---------------------------------------------------------- */

Test(plan_elect, preferred_moves_leadership_to_the_first_replica,
     .init = elect_setup, .fini = teardown)
{
    int32_t epoch = part(1, 0)->leader_epoch;
    cr_assert_eq(elect("t", 0, PLAN_ELECTION_PREFERRED), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    cr_assert_eq(out.recs[0].type, META_REC_PARTITION_CHANGE);
    cr_assert_not(out.recs[0].u.partition_change.isr_changed);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 1);
    cr_assert_eq(part(1, 0)->leader_epoch, epoch + 1);
    cr_assert_eq(part(1, 0)->isr.n, 3);
}

Test(plan_elect, preferred_when_it_leads_already_is_not_needed,
     .init = elect_setup, .fini = teardown)
{
    cr_assert_eq(elect("t", 1, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_ELECTION_NOT_NEEDED);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, preferred_out_of_the_isr_is_not_available,
     .init = elect_setup, .fini = teardown)
{
    cr_assert_eq(elect("t", 2, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_PREFERRED_LEADER_NOT_AVAILABLE);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, preferred_fenced_is_not_available, .init = elect_setup,
     .fini = teardown)
{
    broker_change(1, 1, 0);
    cr_assert_eq(elect("t", 0, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_PREFERRED_LEADER_NOT_AVAILABLE);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, unknown_topic_or_partition, .init = elect_setup,
     .fini = teardown)
{
    cr_assert_eq(elect("nope", 0, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(elect("t", 3, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(elect("t", -1, PLAN_ELECTION_UNCLEAN),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, unclean_with_a_leader_is_not_needed, .init = elect_setup,
     .fini = teardown)
{
    cr_assert_eq(elect("t", 0, PLAN_ELECTION_UNCLEAN),
                 KAFKA_ERROR_ELECTION_NOT_NEEDED);
    cr_assert_eq(out.n, 0);
}

/* p0 of "u": replicas [1,2,3], ISR [1], offline (1 fenced). */
static void offline_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("u", 2);
    add_partition(2, 0, SET(1, 2, 3), SET(1), META_NO_LEADER);
    broker_change(1, 1, 0);
}

Test(plan_elect, unclean_elects_a_live_replica_out_of_the_isr,
     .init = offline_setup, .fini = teardown)
{
    cr_assert_eq(elect("u", 0, PLAN_ELECTION_UNCLEAN), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(part(2, 0)->leader, 2);
    cr_assert_eq(part(2, 0)->isr.n, 1);
    cr_assert_eq(part(2, 0)->isr.ids[0], 2);
}

Test(plan_elect, unclean_without_a_live_replica_is_not_available,
     .init = offline_setup, .fini = teardown)
{
    broker_change(2, 1, 0);
    broker_change(3, 1, 0);
    cr_assert_eq(elect("u", 0, PLAN_ELECTION_UNCLEAN),
                 KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, preferred_of_an_offline_partition_is_not_available,
     .init = offline_setup, .fini = teardown)
{
    cr_assert_eq(elect("u", 0, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_PREFERRED_LEADER_NOT_AVAILABLE);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, a_full_batch_asks_for_a_retry, .init = elect_setup,
     .fini = teardown)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PRODUCER_IDS;
    for (size_t i = 0; i < META_BATCH_RECORDS_MAX; i++) {
        cr_assert_eq(plan_records_push(&out, &rec), RC_OK);
    }
    cr_assert_eq(elect("t", 0, PLAN_ELECTION_PREFERRED),
                 KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED);
    cr_assert_eq(out.n, META_BATCH_RECORDS_MAX);
}

/* --- Imbalance ------------------------------------------------------------- */

/* Brokers 1..3; 10 partitions of "r" with replicas rotated from p % 3 + 1,
 * all in sync, every one led by broker 1 (as after restarting 2 and 3). */
static void piled_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("r", 3);
    for (int32_t p = 0; p < 10; p++) {
        int32_t a = p % 3 + 1;
        int32_t b = a % 3 + 1;
        int32_t c = b % 3 + 1;
        add_partition(3, p, SET(a, b, c), SET(a, b, c), 1);
    }
}

Test(plan_elect, imbalance_counts_partitions_led_away_from_preference,
     .init = piled_setup, .fini = teardown)
{
    struct plan_imbalance ims[8];
    size_t n = 0;
    plan_imbalance_compute(&img, ims, 8, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(ims[0].broker, 1);
    cr_assert_eq(ims[0].preferred, 4);     /* p0, 3, 6, 9 */
    cr_assert_eq(ims[0].not_preferred, 0);
    cr_assert_eq(ims[1].broker, 2);
    cr_assert_eq(ims[1].preferred, 3);
    cr_assert_eq(ims[1].not_preferred, 3);
    cr_assert_eq(ims[2].broker, 3);
    cr_assert_eq(ims[2].not_preferred, 3);
    cr_assert(plan_imbalance_exceeds(&ims[1], 10));
    cr_assert_not(plan_imbalance_exceeds(&ims[0], 0));
}

Test(plan_elect, imbalance_threshold_is_strictly_above_the_percentage)
{
    struct plan_imbalance im = {.broker = 1, .preferred = 10,
                                .not_preferred = 1};
    cr_assert_not(plan_imbalance_exceeds(&im, 10)); /* 10% is not > 10% */
    im.not_preferred = 2;
    cr_assert(plan_imbalance_exceeds(&im, 10));
    cr_assert_not(plan_imbalance_exceeds(&im, 20));
    im.preferred = 0;
    im.not_preferred = 0;
    cr_assert_not(plan_imbalance_exceeds(&im, 0));
}

Test(plan_elect, rebalance_restores_every_preferred_leader,
     .init = piled_setup, .fini = teardown)
{
    size_t n = 0;
    cr_assert_eq(plan_rebalance_leaders(&img, 10, &out, &n), RC_OK);
    cr_assert_eq(n, 6);
    apply_out();
    for (int32_t p = 0; p < 10; p++) {
        cr_assert_eq(part(3, p)->leader, part(3, p)->replicas.ids[0],
                     "p%d", p);
    }
    cr_assert_eq(plan_rebalance_leaders(&img, 10, &out, &n), RC_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(out.n, 0);
}

Test(plan_elect, rebalance_skips_a_preferred_replica_out_of_sync_or_fenced,
     .init = piled_setup, .fini = teardown)
{
    /* p1 prefers 2: take 2 out of its ISR; fence 3. */
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PARTITION_CHANGE;
    rec.u.partition_change.topic_id = tid(3);
    rec.u.partition_change.partition = 1;
    rec.u.partition_change.isr_changed = true;
    rec.u.partition_change.isr = SET(3, 1);
    rec.u.partition_change.leader = META_LEADER_UNCHANGED;
    apply(&rec);
    broker_change(3, 1, 0);
    size_t n = 0;
    cr_assert_eq(plan_rebalance_leaders(&img, 10, &out, &n), RC_OK);
    cr_assert_eq(n, 2); /* p4 and p7 to broker 2 */
    apply_out();
    cr_assert_eq(part(3, 1)->leader, 1);
    cr_assert_eq(part(3, 2)->leader, 1);
    cr_assert_eq(part(3, 4)->leader, 2);
    cr_assert_eq(part(3, 7)->leader, 2);
}

Test(plan_elect, rebalance_leaves_a_broker_under_the_percentage,
     .init = piled_setup, .fini = teardown)
{
    size_t n = 0;
    /* Brokers 2 and 3 each have 3 of 3 led away: 100%, not above 100. */
    cr_assert_eq(plan_rebalance_leaders(&img, 100, &out, &n), RC_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(out.n, 0);
}
