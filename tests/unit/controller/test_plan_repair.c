/* Unit tests for controller/plan_repair.c: LeaveLeadership, a replica with
 * a corrupt batch leaving the ISR before it repairs (a leader handing its
 * partition to an in-sync replica). Images are built, and plans checked,
 * by applying records with meta_apply(). */
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>

/* Brokers 1..3 live; topic "t": p0 replicas [1,2,3] led by 1, all in
 * sync; p1 [1,2,3] led by 1 with ISR [1]. */
static void repair_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("t", 1);
    add_partition(1, 0, SET(1, 2, 3), SET(1, 2, 3), 1);
    add_partition(1, 1, SET(1, 2, 3), SET(1), 1);
}

static int16_t leave(int32_t broker, int32_t p, int32_t epoch)
{
    struct plan_leave_leadership_req r = {
        .broker_id = broker,
        .broker_epoch = meta_image_broker(&img, broker)->epoch,
        .topic_id = tid(1), .partition = p, .leader_epoch = epoch};
    int16_t error = -1;
    cr_assert_eq(plan_leave_leadership(&img, &r, &out, &error), RC_OK);
    return error;
}

Test(plan_repair, leadership_moves_to_the_next_in_sync_replica,
     .init = repair_setup, .fini = teardown)
{
    int32_t epoch = part(1, 0)->leader_epoch;
    cr_assert_eq(leave(1, 0, epoch), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 2);
    cr_assert_eq(part(1, 0)->leader_epoch, epoch + 1);
    cr_assert(set_eq(&part(1, 0)->isr, SET(2, 3)));
}

Test(plan_repair, a_fenced_replica_is_skipped, .init = repair_setup,
     .fini = teardown)
{
    broker_change(2, 1, 0);
    add_partition(1, 0, SET(1, 2, 3), SET(1, 3), 1);
    cr_assert_eq(leave(1, 0, part(1, 0)->leader_epoch), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 3);
    cr_assert(set_eq(&part(1, 0)->isr, SET(3)));
}

Test(plan_repair, the_last_in_sync_copy_takes_the_partition_offline,
     .init = repair_setup, .fini = teardown)
{
    int32_t epoch = part(1, 1)->leader_epoch;
    cr_assert_eq(leave(1, 1, epoch),
                 KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE);
    cr_assert_eq(out.n, 1);
    apply_out();
    cr_assert_eq(part(1, 1)->leader, META_NO_LEADER);
    cr_assert(set_eq(&part(1, 1)->isr, SET(1)), "the ISR keeps its copy");
    cr_assert_eq(leave(1, 1, part(1, 1)->leader_epoch),
                 KAFKA_ERROR_NONE, "offline already: nothing to do");
    cr_assert_eq(out.n, 0);
}

Test(plan_repair, with_every_other_member_fenced_it_waits_leaderless,
     .init = repair_setup, .fini = teardown)
{
    broker_change(2, 1, 0);
    broker_change(3, 1, 0);
    cr_assert_eq(leave(1, 0, part(1, 0)->leader_epoch), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, META_NO_LEADER);
    cr_assert(set_eq(&part(1, 0)->isr, SET(2, 3)));
}

/* A damaged follower leaves the ISR before it truncates below the HW:
 * else the controller could elect it without records the ISR promised. */
Test(plan_repair, a_follower_leaves_the_isr_and_the_leader_stays,
     .init = repair_setup, .fini = teardown)
{
    int32_t epoch = part(1, 0)->leader_epoch;
    cr_assert_eq(leave(2, 0, epoch), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 1);
    cr_assert_eq(part(1, 0)->leader_epoch, epoch);
    cr_assert(set_eq(&part(1, 0)->isr, SET(1, 3)));
    int32_t partition_epoch = part(1, 0)->partition_epoch;
    cr_assert_eq(leave(2, 0, epoch), KAFKA_ERROR_NONE, "out already");
    cr_assert_eq(out.n, 1, "a change all the same: the epoch moves, so a "
                 "leader's expansion computed before is refused");
    apply_out();
    cr_assert_eq(part(1, 0)->partition_epoch, partition_epoch + 1);
    cr_assert(set_eq(&part(1, 0)->isr, SET(1, 3)), "nothing else changes");
    cr_assert_eq(part(1, 0)->leader, 1);
    cr_assert_eq(part(1, 0)->leader_epoch, epoch);
}

Test(plan_repair, only_a_replica_at_the_current_epoch_may_ask,
     .init = repair_setup, .fini = teardown)
{
    int32_t epoch = part(1, 0)->leader_epoch;
    cr_assert_eq(leave(1, 0, epoch - 1), KAFKA_ERROR_FENCED_LEADER_EPOCH);
    cr_assert_eq(leave(2, 0, epoch + 1), KAFKA_ERROR_UNKNOWN_LEADER_EPOCH);
    cr_assert_eq(leave(1, 7, epoch), KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    live_brokers(4);
    cr_assert_eq(leave(4, 0, epoch), KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER);
    struct plan_leave_leadership_req r = {
        .broker_id = 1, .broker_epoch = 999, .topic_id = tid(1),
        .partition = 0, .leader_epoch = epoch};
    int16_t error = -1;
    cr_assert_eq(plan_leave_leadership(&img, &r, &out, &error), RC_OK);
    cr_assert_eq(error, KAFKA_ERROR_STALE_BROKER_EPOCH);
    cr_assert_eq(out.n, 0);
}
