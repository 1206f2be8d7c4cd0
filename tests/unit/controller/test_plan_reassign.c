/* Unit tests for controller/plan_reassign.c: partition reassignment
 * (KIP-455) started, completed by the AlterPartition that brings the last
 * adding replica into the ISR, cancelled, and refused. Every plan is
 * applied with meta_apply(), as the controller does after commit. */
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct meta_image img;
static struct plan_records out;

static struct meta_replica_set set_of(const int32_t *ids, size_t n)
{
    struct meta_replica_set s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < n; i++) {
        s.ids[s.n++] = ids[i];
    }
    return s;
}

#define SET(...)                                                       \
    set_of((const int32_t[]){__VA_ARGS__},                             \
           sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

static void assert_set(const struct meta_replica_set *a,
                       struct meta_replica_set b, const char *what)
{
    cr_assert_eq(a->n, b.n, "%s: %d members, want %d", what, a->n, b.n);
    for (int32_t i = 0; i < a->n; i++) {
        cr_assert_eq(a->ids[i], b.ids[i], "%s[%d] = %d, want %d", what, i,
                     a->ids[i], b.ids[i]);
    }
}

static void apply(const struct meta_record *rec)
{
    cr_assert_eq(meta_apply(&img, rec), RC_OK, "record type %d refused",
                 (int)rec->type);
}

static void apply_out(void)
{
    for (size_t i = 0; i < out.n; i++) {
        apply(&out.recs[i]);
    }
    plan_records_clear(&out);
}

static struct meta_uuid tid(void)
{
    struct meta_uuid u;
    memset(&u, 0, sizeof u);
    u.b[0] = 0x70;
    u.b[15] = 1;
    return u;
}

/* Brokers 1..4 live; topic "t" with partition 0 on 1,2,3 led by 1. */
static void setup(void)
{
    meta_image_init(&img);
    plan_records_init(&out);
    struct meta_record rec;
    for (int32_t id = 1; id <= 4; id++) {
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_REGISTER_BROKER;
        rec.u.register_broker.broker_id = id;
        rec.u.register_broker.incarnation.b[0] = (uint8_t)id;
        snprintf(rec.u.register_broker.host, META_HOST_BYTES_MAX, "h");
        rec.u.register_broker.port = 9000 + id;
        apply(&rec);
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_BROKER_CHANGE;
        rec.u.broker_change.broker_id = id;
        rec.u.broker_change.broker_epoch = meta_image_broker(&img, id)->epoch;
        rec.u.broker_change.fenced = -1;
        apply(&rec);
    }
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_TOPIC;
    snprintf(rec.u.topic.name, sizeof rec.u.topic.name, "t");
    rec.u.topic.id = tid();
    apply(&rec);
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PARTITION;
    rec.u.partition.topic_id = tid();
    rec.u.partition.replicas = SET(1, 2, 3);
    rec.u.partition.isr = SET(1, 2, 3);
    rec.u.partition.leader = 1;
    apply(&rec);
}

static void teardown(void)
{
    plan_records_free(&out);
    meta_image_free(&img);
}

static const struct meta_partition *part(void)
{
    struct meta_uuid id = tid();
    const struct meta_partition *p = meta_image_partition(&img, &id, 0);
    cr_assert_not_null(p);
    return p;
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
    const struct meta_partition *p = part();
    struct plan_alter_partition_req req = {
        .broker_id = p->leader,
        .broker_epoch = meta_image_broker(&img, p->leader)->epoch,
        .topic_id = tid(),
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
     .init = setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(2, 3, 4, 1), "replicas");
    assert_set(&p->adding, SET(4), "adding");
    assert_set(&p->removing, SET(1), "removing");
    assert_set(&p->isr, SET(1, 2, 3), "isr");
    cr_assert_eq(p->leader, 1, "the leader stays until the move completes");
    cr_assert_eq(p->leader_epoch, 0);
}

Test(plan_reassign, catch_up_completes_and_moves_a_removed_leader,
     .init = setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1, 2, 3, 4)), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(2, 3, 4), "replicas");
    assert_set(&p->isr, SET(2, 3, 4), "isr");
    cr_assert_eq(p->adding.n, 0);
    cr_assert_eq(p->removing.n, 0);
    cr_assert_eq(p->leader, 2, "first target replica in the ISR leads");
    cr_assert_eq(p->leader_epoch, 1);
}

Test(plan_reassign, waits_for_every_adding_replica, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(4, 3, 2), false), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&part()->adding, SET(4), "adding");
    /* A shrink that does not bring 4 in leaves the move running. */
    cr_assert_eq(alter_isr(SET(1, 2)), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&part()->adding, SET(4), "adding");
    assert_set(&part()->isr, SET(1, 2), "isr");
    cr_assert_eq(alter_isr(SET(1, 2, 4)), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(4, 3, 2), "replicas");
    assert_set(&p->isr, SET(2, 4), "isr");
    cr_assert_eq(p->leader, 4, "leader 1 left; 4 is first in target order");
}

Test(plan_reassign, leader_kept_when_it_stays, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(1, 2, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1, 2, 3, 4)), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(1, 2, 4), "replicas");
    assert_set(&p->isr, SET(1, 2, 4), "isr");
    cr_assert_eq(p->leader, 1);
    cr_assert_eq(p->leader_epoch, 0, "no leader change, no new epoch");
}

Test(plan_reassign, reorder_and_removal_complete_at_once, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(3, 2, 1), false), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&part()->replicas, SET(3, 2, 1), "replicas");
    cr_assert_eq(part()->leader, 1, "a reorder does not move the leader");
    cr_assert_eq(reassign("t", 0, SET(3, 2), false), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(3, 2), "replicas");
    assert_set(&p->isr, SET(2, 3), "isr");
    cr_assert_eq(p->adding.n + p->removing.n, 0);
    cr_assert_eq(p->leader, 3);
    cr_assert_eq(reassign("t", 0, SET(3, 2), false), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 0, "the current assignment changes nothing");
}

Test(plan_reassign, cancel_reverts_to_original_replicas, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(4, 2, 3), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(reassign("t", 0, SET(0), true), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = part();
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
     .init = setup, .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(2, 3, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(reassign("t", 0, SET(1, 2, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_partition *p = part();
    assert_set(&p->replicas, SET(1, 2, 4, 3), "replicas");
    assert_set(&p->adding, SET(4), "adding");
    assert_set(&p->removing, SET(3), "removing");
}

Test(plan_reassign, refuses_bad_targets, .init = setup, .fini = teardown)
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

Test(plan_reassign, cancel_needs_an_original_replica_in_sync, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(reassign("t", 0, SET(1, 4), false), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(alter_isr(SET(1)), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&part()->isr, SET(1), "isr");
    cr_assert_eq(reassign("t", 0, SET(0), true), KAFKA_ERROR_NONE);
    apply_out();
    assert_set(&part()->replicas, SET(1, 2, 3), "replicas");
    assert_set(&part()->isr, SET(1), "isr");
    cr_assert_eq(part()->leader, 1);
}

Test(plan_reassign, unregister_only_a_broker_without_replicas,
     .init = setup, .fini = teardown)
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

Test(plan_reassign, a_huge_request_is_bounded, .init = setup,
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
