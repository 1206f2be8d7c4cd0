/* Unit tests for controller/plan_create_partitions.c: the Partition
 * records of a grown topic (placed or assigned) and Kafka's errors. Images
 * are built, and plans checked, by applying records with meta_apply(). */
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"
#include "controller/plan_create_partitions.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static void create_topic(const char *name, int32_t np, int32_t rf)
{
    struct plan_topic_req t = {.name = name, .num_partitions = np,
                               .replication_factor = rf};
    t.id.b[0] = 0x40;
    t.id.b[1] = (uint8_t)name[0];
    t.id.b[6] = 0x40;
    t.id.b[8] = 0x80;
    struct plan_topic_defaults d = {1, 1};
    struct plan_topic_result res;
    cr_assert_eq(plan_create_topics(&img, &t, 1, &d, false, &out, &res),
                 RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    apply_out();
}

static void grow_setup(void)
{
    setup();
    live_brokers(3);
    create_topic("grow", 2, 2);
}

static int16_t plan1(const struct plan_partitions_req *t, bool validate_only,
                     struct plan_partitions_result *res)
{
    cr_assert_eq(plan_create_partitions(&img, t, 1, validate_only, &out, res),
                 RC_OK);
    return res->error;
}

TestSuite(plan_create_partitions, .init = grow_setup, .fini = teardown);

Test(plan_create_partitions, placed_partitions_continue_the_pattern)
{
    struct plan_partitions_req t = {.name = "grow", .count = 4};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 2);
    apply_out();
    const struct meta_topic *mt = meta_image_topic(&img, "grow");
    cr_assert_eq(mt->n_partitions, 4);
    int32_t first = mt->partitions[0].replicas.ids[0];
    for (int32_t p = 0; p < 4; p++) {
        const struct meta_partition *mp = &mt->partitions[p];
        cr_assert_eq(mp->replicas.n, 2, "replication factor kept");
        cr_assert_eq(mp->replicas.ids[0], (first - 1 + p) % 3 + 1,
                     "partition %d leads on the next broker", p);
        cr_assert_eq(mp->leader, mp->replicas.ids[0]);
        cr_assert_eq(mp->isr.n, 2);
        cr_assert_eq(mp->leader_epoch, 0);
    }
}

Test(plan_create_partitions, validate_only_plans_nothing)
{
    struct plan_partitions_req t = {.name = "grow", .count = 5};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, true, &res), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 0);
}

Test(plan_create_partitions, count_must_grow)
{
    struct plan_partitions_req t = {.name = "grow", .count = 2};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_INVALID_PARTITIONS);
    cr_assert_str_eq(res.message, "Topic already has 2 partition(s).");
    t.count = 1;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_INVALID_PARTITIONS);
    cr_assert_str_eq(res.message, "The topic grow currently has 2 "
                     "partition(s); 1 would not be an increase.");
    t.count = META_PARTITIONS_MAX + 1;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_INVALID_PARTITIONS);
    cr_assert_eq(out.n, 0);
}

Test(plan_create_partitions, unknown_topic_and_offsets_topic)
{
    struct plan_partitions_req t = {.name = "nope", .count = 3};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, false, &res),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    create_topic("__consumer_offsets", 3, 1);
    t.name = "__consumer_offsets";
    t.count = 6;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_POLICY_VIOLATION);
    cr_assert_eq(out.n, 0);
}

Test(plan_create_partitions, assignments_are_honoured)
{
    reg_broker(4); /* registered, fenced */
    static const int32_t a0[] = {3, 1};
    static const int32_t a1[] = {4, 2};
    struct plan_assignment as[] = {{a0, 2}, {a1, 2}};
    struct plan_partitions_req t = {.name = "grow", .count = 4,
                                    .assignments = as, .n_assignments = 2};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, false, &res), KAFKA_ERROR_NONE);
    apply_out();
    const struct meta_topic *mt = meta_image_topic(&img, "grow");
    cr_assert_eq(mt->partitions[2].replicas.ids[0], 3);
    cr_assert_eq(mt->partitions[2].leader, 3);
    cr_assert_eq(mt->partitions[3].replicas.n, 2);
    cr_assert_eq(mt->partitions[3].isr.n, 1, "the fenced broker is out");
    cr_assert_eq(mt->partitions[3].leader, 2);
}

Test(plan_create_partitions, bad_assignments)
{
    reg_broker(4);
    static const int32_t one[] = {1};
    static const int32_t twice[] = {1, 1};
    static const int32_t unknown[] = {1, 9};
    static const int32_t fenced[] = {4};
    static const int32_t ok[] = {1, 2};
    struct plan_partitions_result res;
    struct plan_assignment as[1] = {{ok, 2}};
    struct plan_partitions_req t = {.name = "grow", .count = 4,
                                    .assignments = as, .n_assignments = 1};
    cr_assert_eq(plan1(&t, false, &res),
                 KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_str_eq(res.message, "Attempted to add 2 additional "
                     "partition(s), but only 1 assignment(s) were "
                     "specified.");
    t.count = 3;
    const struct plan_assignment bad[] = {{one, 0}, {one, 1}, {twice, 2},
                                          {unknown, 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        as[0] = bad[i];
        cr_assert_eq(plan1(&t, false, &res),
                     KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT, "case %zu", i);
    }
    create_topic("solo", 1, 1);
    t.name = "solo";
    t.count = 2;
    as[0] = (struct plan_assignment){fenced, 1};
    cr_assert_eq(plan1(&t, false, &res),
                 KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT);
    cr_assert_str_eq(res.message, "All brokers specified in the manual "
                     "partition assignment for partition 1 are fenced or "
                     "in controlled shutdown.");
    cr_assert_eq(out.n, 0);
}

Test(plan_create_partitions, too_few_brokers_for_the_replication_factor)
{
    create_topic("wide", 1, 3);
    reg_broker(5);
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_BROKER_CHANGE;
    rec.u.broker_change.broker_id = 3;
    rec.u.broker_change.broker_epoch = meta_image_broker(&img, 3)->epoch;
    rec.u.broker_change.fenced = 1;
    cr_assert_eq(meta_apply(&img, &rec), RC_OK);
    struct plan_partitions_req t = {.name = "wide", .count = 2};
    struct plan_partitions_result res;
    cr_assert_eq(plan1(&t, false, &res),
                 KAFKA_ERROR_INVALID_REPLICATION_FACTOR);
}

Test(plan_create_partitions, duplicates_fail_each_and_others_go_on)
{
    struct plan_partitions_req ts[] = {{.name = "grow", .count = 3},
                                       {.name = "x", .count = 3},
                                       {.name = "grow", .count = 4}};
    struct plan_partitions_result res[3];
    cr_assert_eq(plan_create_partitions(&img, ts, 3, false, &out, res),
                 RC_OK);
    cr_assert_eq(res[0].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(res[1].error, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(res[2].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 0);
}

Test(plan_create_partitions, what_does_not_fit_the_batch_is_retried)
{
    create_topic("other", 1, 1);
    struct plan_partitions_req ts[] = {
        {.name = "grow", .count = META_PARTITIONS_MAX},
        {.name = "other", .count = META_PARTITIONS_MAX}};
    struct plan_partitions_result res[2];
    cr_assert_eq(plan_create_partitions(&img, ts, 2, false, &out, res),
                 RC_OK);
    cr_assert_eq(res[0].error, KAFKA_ERROR_NONE);
    cr_assert_eq(res[1].error, KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED);
    cr_assert_eq(out.n, (size_t)META_PARTITIONS_MAX - 2);
    apply_out();
    cr_assert_eq(meta_image_topic(&img, "grow")->n_partitions,
                 META_PARTITIONS_MAX);
    cr_assert_eq(meta_image_topic(&img, "other")->n_partitions, 1);
}
