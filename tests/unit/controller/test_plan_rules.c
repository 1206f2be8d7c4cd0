/* The rule each way of picking a leader leaves with its record
 * (controller/plan.h: plan_records.rules), which the controller's event
 * line carries: fencing, controlled shutdown, leaderless partitions,
 * unclean election, ElectLeaders (preferred and unclean), the preferred
 * leader rebalance, reassignment and repair. */
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"
#include "controller/plan_elect.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>
#include <string.h>

/* Brokers 1..3 live; topic "t" (id 1): p0 replicas [2,3,1] led by 1,
 * all in sync; p1 [1,2,3] led by 2, all in sync. */
static void rules_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("t", 1);
    add_partition(1, 0, SET(2, 3, 1), SET(2, 3, 1), 1);
    add_partition(1, 1, SET(1, 2, 3), SET(1, 2, 3), 2);
}

TestSuite(plan_rules, .init = rules_setup, .fini = teardown);

/* The rule of the record that changes partition p of topic 1. */
static const char *rule_of(int32_t p)
{
    struct meta_uuid id = tid(1);
    for (size_t i = 0; i < out.n; i++) {
        const struct meta_record *r = &out.recs[i];
        if (r->type == META_REC_PARTITION_CHANGE &&
            r->u.partition_change.partition == p &&
            memcmp(&r->u.partition_change.topic_id, &id, sizeof id) == 0) {
            return out.rules[i];
        }
    }
    cr_assert_fail("no change of partition %d", p);
    return NULL;
}

Test(plan_rules, fencing_names_the_first_live_isr_member)
{
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_str_eq(rule_of(0), "rule: first live ISR member of replicas "
                                 "2,3,1, chose 2");
    cr_assert_str_eq(rule_of(1), "", "its leader stays: no election");
}

Test(plan_rules, fencing_the_last_live_member_says_why_nobody)
{
    broker_change(2, 1, 0);
    broker_change(3, 1, 0);
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_str_eq(rule_of(0), "rule: no live ISR member (isr 2,3) of "
                                 "replicas 2,3,1, and unclean.leader."
                                 "election.enable=false, chose none");
}

Test(plan_rules, an_unclean_election_says_so)
{
    add_topic("u", 2);
    add_partition(2, 0, SET(1, 2, 3), SET(1), META_NO_LEADER);
    broker_change(1, 1, 0);
    cr_assert_eq(plan_elect_leaderless(&img, true /* unclean */, &out),
                 RC_OK);
    cr_assert_eq(out.n, 1);
    cr_assert_str_eq(out.rules[0],
                     "rule: no live ISR member (isr 1), and unclean.leader."
                     "election.enable=true: first live replica of replicas "
                     "1,2,3, chose 2");
}

Test(plan_rules, a_controlled_shutdown_moves_by_the_same_rule)
{
    const struct meta_broker *b = broker(1);
    struct plan_heartbeat_req req = {.broker_id = 1,
                                     .broker_epoch = b->epoch,
                                     .current_metadata_offset = img.offset,
                                     .want_shut_down = true};
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_str_eq(rule_of(0), "rule: first live ISR member of replicas "
                                 "2,3,1, chose 2");
}

Test(plan_rules, elect_leaders_preferred_names_the_preferred_replica)
{
    int16_t error = -1;
    cr_assert_eq(plan_elect_partition(&img, "t", 1, PLAN_ELECTION_PREFERRED,
                                      &out, &error),
                 RC_OK);
    cr_assert_eq(error, KAFKA_ERROR_NONE);
    cr_assert_str_eq(out.rules[0], "rule: preferred leader, the first of "
                                   "replicas 1,2,3, live and in the ISR, "
                                   "chose 1");
}

Test(plan_rules, elect_leaders_unclean_names_its_rule)
{
    add_topic("u", 2);
    add_partition(2, 0, SET(1, 2, 3), SET(1), META_NO_LEADER);
    broker_change(1, 1, 0);
    int16_t error = -1;
    cr_assert_eq(plan_elect_partition(&img, "u", 0, PLAN_ELECTION_UNCLEAN,
                                      &out, &error),
                 RC_OK);
    cr_assert_eq(error, KAFKA_ERROR_NONE);
    cr_assert(strstr(out.rules[0], "unclean.leader.election.enable=true: "
                                   "first live replica of replicas 1,2,3, "
                                   "chose 2") != NULL,
              "%s", out.rules[0]);
}

Test(plan_rules, the_rebalance_names_the_preferred_replica_and_imbalance)
{
    size_t n = 0;
    cr_assert_eq(plan_rebalance_leaders(&img, 10, &out, &n), RC_OK);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(rule_of(0), "rule: preferred leader, the first of "
                                 "replicas 2,3,1, live and in the ISR, "
                                 "chose 2 (it led 0 of the 1 partitions it "
                                 "prefers)");
}

Test(plan_rules, a_reassignment_that_drops_the_leader_names_its_targets)
{
    /* p0, led by 1, to 2,3: both in sync, so it completes at once. */
    const int32_t target[] = {2, 3};
    struct plan_reassignment r = {.topic = "t", .partition = 0,
                                  .replicas = target, .n_replicas = 2};
    int16_t error = -1;
    cr_assert_eq(plan_alter_reassignments(&img, &r, 1, &out, &error), RC_OK);
    cr_assert_eq(error, KAFKA_ERROR_NONE);
    cr_assert_eq(out.recs[0].u.partition_change.leader, 2);
    cr_assert_str_eq(out.rules[0], "rule: first live ISR member of replicas "
                                   "2,3, chose 2");
}

Test(plan_rules, a_change_that_keeps_the_leader_has_no_rule)
{
    int16_t error = -1;
    cr_assert_eq(plan_elect_partition(&img, "t", 0, PLAN_ELECTION_PREFERRED,
                                      &out, &error),
                 RC_OK);
    cr_assert_eq(error, KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(plan_fence_broker(&img, 3, false, &out), RC_OK);
    cr_assert_str_eq(rule_of(0), "", "3 left the ISR; 2 still leads");
}
