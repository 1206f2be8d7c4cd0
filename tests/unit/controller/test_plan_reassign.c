/* Unit tests for controller/plan_reassign.c: partition reassignment
 * (KIP-455) started, completed by the AlterPartition that brings the last
 * adding replica into the ISR, cancelled, and refused. Every plan is
 * applied with meta_apply(), as the controller does after commit. */
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The topic "t" (id 1) and its partition 0. */
#define T 1

static const struct meta_partition *t0(void)
{
    return part(T, 0);
}

static void assert_set(const struct meta_replica_set *a,
                       struct meta_replica_set b, const char *what)
{
    cr_assert_eq(a->n, b.n, "%s: %d members, want %d", what, a->n, b.n);
    for (int32_t i = 0; i < a->n; i++) {
        cr_assert_eq(a->ids[i], b.ids[i], "%s[%d] = %d, want %d", what, i,
                     a->ids[i], b.ids[i]);
    }
}

/* Brokers 1..4 live; topic "t" with partition 0 on 1,2,3 led by 1. */
static void reassign_setup(void)
{
    setup();
    live_brokers(4);
    add_topic("t", T);
    add_partition(T, 0, SET(1, 2, 3), SET(1, 2, 3), 1);
}

/* One AlterPartitionReassignments entry for t-<partition>. */
static int16_t reassign(const char *topic, int32_t partition,
                        struct meta_replica_set target, bool cancel)
{
    struct plan_reassignment r = {.topic = topic, .partition = partition,
                                  .cancel = cancel,
                                  .replicas = target.ids,
                                  .n_replicas = (size_t)target.n};
    int16_t err = -1;
    cr_assert_eq(plan_alter_reassignments(&img, &r, 1, &out, &err), RC_OK);
    return err;
}

/* The leader's AlterPartition with ISR isr; its answer's error. */
static int16_t alter_isr(struct meta_replica_set isr)
{
    const struct meta_partition *p = t0();
    struct plan_alter_partition_req req = {
        .broker_id = p->leader,
        .broker_epoch = meta_image_broker(&img, p->leader)->epoch,
        .topic_id = tid(T),
        .partition = 0,
        .leader_epoch = p->leader_epoch,
        .partition_epoch = p->partition_epoch,
        .new_isr = isr.ids,
        .n_new_isr = (size_t)isr.n,
    };
    int16_t err = -1;
    cr_assert_eq(plan_alter_partition(&img, &req, &out, &err), RC_OK);
    return err;
}

Test(plan_reassign, start_records_union_adding_and_removing,
     .init = reassign_setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(2, 3, 4, 1), "replicas");
    assert_set(&p->adding, SET(4), "adding");
    assert_set(&p->removing, SET(1), "removing");
    assert_set(&p->isr, SET(1, 2, 3), "isr");
    cr_assert_eq(p->leader, 1, "the leader stays until the move completes");
    cr_assert_eq(p->leader_epoch, 0);
}

Test(plan_reassign, catch_up_completes_and_moves_a_removed_leader,
     .init = reassign_setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1, 2, 3, 4)), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(2, 3, 4), "replicas");
    assert_set(&p->isr, SET(2, 3, 4), "isr");
    cr_assert_eq(p->adding.n, 0);
    cr_assert_eq(p->removing.n, 0);
    cr_assert_eq(p->leader, 2, "first target replica in the ISR leads");
    cr_assert_eq(p->leader_epoch, 1);
}

Test(plan_reassign, waits_for_every_adding_replica, .init = reassign_setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(4, 3, 2), false), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&t0()->adding, SET(4), "adding");
    /* A shrink that does not bring 4 in leaves the move running. */
    cr_assert_eq(alter_isr(SET(1, 2)), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&t0()->adding, SET(4), "adding");
    assert_set(&t0()->isr, SET(1, 2), "isr");
    cr_assert_eq(alter_isr(SET(1, 2, 4)), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(4, 3, 2), "replicas");
    assert_set(&p->isr, SET(2, 4), "isr");
    cr_assert_eq(p->leader, 4, "leader 1 left; 4 is first in target order");
}

Test(plan_reassign, leader_kept_when_it_stays, .init = reassign_setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(1, 2, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1, 2, 3, 4)), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(1, 2, 4), "replicas");
    assert_set(&p->isr, SET(1, 2, 4), "isr");
    cr_assert_eq(p->leader, 1);
    cr_assert_eq(p->leader_epoch, 0, "no leader change, no new epoch");
}

Test(plan_reassign, reorder_and_removal_complete_at_once, .init = reassign_setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(3, 2, 1), false), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&t0()->replicas, SET(3, 2, 1), "replicas");
    cr_assert_eq(t0()->leader, 1, "a reorder does not move the leader");
    cr_assert_eq(reassign("t", 0, SET(3, 2), false), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(3, 2), "replicas");
    assert_set(&p->isr, SET(2, 3), "isr");
    cr_assert_eq(p->adding.n + p->removing.n, 0);
    cr_assert_eq(p->leader, 3);
    cr_assert_eq(reassign("t", 0, SET(3, 2), false), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 0, "the current assignment changes nothing");
}

Test(plan_reassign, cancel_reverts_to_original_replicas, .init = reassign_setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(4, 2, 3), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(reassign("t", 0, SET(0), true), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = t0();
    /* As Kafka's PartitionReassignmentRevert: the replicas without the
     * adding ones, in the order of the running move (target first). */
    assert_set(&p->replicas, SET(2, 3, 1), "replicas");
    assert_set(&p->isr, SET(1, 2, 3), "isr");
    cr_assert_eq(p->adding.n + p->removing.n, 0);
    cr_assert_eq(p->leader, 1);
    cr_assert_eq(reassign("t", 0, SET(0), true),
                 KAFKA_ERROR_NO_REASSIGNMENT_IN_PROGRESS);
}

Test(plan_reassign, replacing_a_move_measures_from_the_original,
     .init = reassign_setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(reassign("t", 0, SET(1, 2, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = t0();
    assert_set(&p->replicas, SET(1, 2, 4, 3), "replicas");
    assert_set(&p->adding, SET(4), "adding");
    assert_set(&p->removing, SET(3), "removing");
}

Test(plan_reassign, refuses_bad_targets, .init = reassign_setup, .fini = teardown)
{
    cr_assert_eq(reassign("nope", 0, SET(1), false),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(reassign("t", 1, SET(1), false),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(reassign("t", -1, SET(1), false),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    struct meta_replica_set none = {0};
    cr_assert_eq(reassign("t", 0, none, false),
                 KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(reassign("t", 0, SET(1, 2, 1), false),
                 KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(reassign("t", 0, SET(1, 9), false),
                 KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_eq(out.n, 0);
    struct plan_reassignment twice[2] = {
        {.topic = "t", .partition = 0, .replicas = (int32_t[]){2, 3, 4},
         .n_replicas = 3},
        {.topic = "t", .partition = 0, .replicas = (int32_t[]){1, 2, 4},
         .n_replicas = 3},
    };
    int16_t errs[2];
    cr_assert_eq(plan_alter_reassignments(&img, twice, 2, &out, errs), RC_OK);
    cr_assert_eq(errs[0], KAFKA_ERROR_NONE);
    cr_assert_eq(errs[1], KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 1);
}

Test(plan_reassign, cancel_needs_an_original_replica_in_sync, .init = reassign_setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(1, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1)), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&t0()->isr, SET(1), "isr");
    cr_assert_eq(reassign("t", 0, SET(0), true), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&t0()->replicas, SET(1, 2, 3), "replicas");
    assert_set(&t0()->isr, SET(1), "isr");
    cr_assert_eq(t0()->leader, 1);
}

Test(plan_reassign, unregister_only_a_broker_without_replicas,
     .init = reassign_setup, .fini = teardown)
{
    int16_t err = -1;
    cr_assert_eq(plan_unregister_broker(&img, 9, &out, &err), RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_BROKER_ID_NOT_REGISTERED);
    cr_assert_eq(plan_unregister_broker(&img, 1, &out, &err), RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_INVALID_REQUEST, "1 hosts t-0");
    cr_assert_eq(out.n, 0);
    /* A broker being added counts as hosting the partition. */
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(plan_unregister_broker(&img, 4, &out, &err), RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter_isr(SET(1, 2, 3, 4)), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(plan_unregister_broker(&img, 1, &out, &err), RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    cr_assert_null(meta_image_broker(&img, 1));
    cr_assert_not_null(meta_image_broker(&img, 2));
    cr_assert_eq(img.n_brokers, 3);
}

Test(plan_reassign, a_huge_request_is_bounded, .init = reassign_setup,
     .fini = teardown)
{
    size_t n = META_BATCH_RECORDS_MAX + 2;
    struct plan_reassignment *reqs = calloc(n, sizeof *reqs);
    int16_t *errs = calloc(n, sizeof *errs);
    cr_assert(reqs != NULL && errs != NULL);
    static const int32_t target[3] = {2, 3, 4};
    for (size_t i = 0; i < n; i++) {
        reqs[i] = (struct plan_reassignment){.topic = "t", .partition = 0,
                                             .replicas = target,
                                             .n_replicas = 3};
    }
    cr_assert_eq(plan_alter_reassignments(&img, reqs, n, &out, errs), RC_OK);
    cr_assert_eq(errs[0], KAFKA_ERROR_NONE);
    cr_assert_eq(errs[1], KAFKA_ERROR_INVALID_REQUEST, "the same partition");
    cr_assert_eq(errs[META_BATCH_RECORDS_MAX - 1],
                 KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(errs[META_BATCH_RECORDS_MAX],
                 KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED);
    cr_assert_eq(errs[n - 1], KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED);
    cr_assert_eq(out.n, 1);
    free(reqs);
    free(errs);
}
