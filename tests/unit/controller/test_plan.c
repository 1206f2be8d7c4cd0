/* Unit tests for controller/plan.c: the active controller's records for
 * elections, fencing, unfencing, controlled shutdown, heartbeats,
 * registration, CreateTopics, DeleteTopics, AlterPartition and producer-id
 * blocks. Images are built, and every plan is checked, by applying records
 * with meta_apply(). */
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

/* --- Reading plans ------------------------------------------------------- */

static const struct meta_rec_partition_change *change_of(uint8_t topic,
                                                         int32_t p)
{
    struct meta_uuid id = tid(topic);
    const struct meta_rec_partition_change *found = NULL;
    for (size_t i = 0; i < out.n; i++) {
        const struct meta_record *r = &out.recs[i];
        if (r->type == META_REC_PARTITION_CHANGE &&
            meta_uuid_eq(&r->u.partition_change.topic_id, &id) &&
            r->u.partition_change.partition == p) {
            cr_assert_null(found, "two changes for one partition");
            found = &r->u.partition_change;
        }
    }
    return found;
}

static void assert_broker_change(size_t i, int32_t id, int8_t fenced,
                                 int8_t shutdown)
{
    cr_assert_lt(i, out.n);
    const struct meta_record *r = &out.recs[i];
    cr_assert_eq(r->type, META_REC_BROKER_CHANGE);
    cr_assert_eq(r->u.broker_change.broker_id, id);
    cr_assert_eq(r->u.broker_change.broker_epoch, broker(id)->epoch);
    cr_assert_eq(r->u.broker_change.fenced, fenced);
    cr_assert_eq(r->u.broker_change.in_controlled_shutdown, shutdown);
}

static struct plan_heartbeat_result heartbeat(int32_t id, bool want_fence,
                                              bool want_shut_down)
{
    struct plan_heartbeat_req req = {
        .broker_id = id,
        .broker_epoch = broker(id)->epoch,
        .current_metadata_offset = img.offset,
        .want_fence = want_fence,
        .want_shut_down = want_shut_down,
    };
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false /* unclean */, &out, &res),
                 RC_OK);
    return res;
}

/* --- Record list --------------------------------------------------------- */

Test(plan, record_list_is_bounded_by_one_raft_entry, .init = setup,
     .fini = teardown)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PRODUCER_IDS;
    for (size_t i = 0; i < META_BATCH_RECORDS_MAX; i++) {
        rec.u.producer_ids.next_producer_id = (int64_t)i;
        cr_assert_eq(plan_records_push(&out, &rec), RC_OK);
    }
    cr_assert_eq(plan_records_push(&out, &rec), RC_FULL);
    cr_assert_eq(out.n, META_BATCH_RECORDS_MAX);
    cr_assert_eq(out.recs[77].u.producer_ids.next_producer_id, 77);
    plan_records_clear(&out);
    cr_assert_eq(out.n, 0);
    cr_assert_eq(plan_records_push(&out, &rec), RC_OK);
}

/* --- Election rule ------------------------------------------------------- */

/* Brokers 1..4 live; topic "t" p0: replicas [3,1,2,4], ISR [2,1,3],
 * leader 3. */
static void election_setup(void)
{
    setup();
    live_brokers(4);
    add_topic("t", 1);
    add_partition(1, 0, SET(3, 1, 2, 4), SET(2, 1, 3), 3);
}

Test(plan, election_keeps_the_current_leader, .init = election_setup,
     .fini = teardown)
{
    const struct meta_partition *p = part(1, 0);
    struct plan_election e = plan_elect_leader(
        &img, p, &p->isr, PLAN_NO_BROKER, PLAN_NO_BROKER, false);
    cr_assert_eq(e.leader, 3);
    cr_assert_not(e.unclean);
    /* Still 3 when another ISR member is excluded. */
    e = plan_elect_leader(&img, p, &p->isr, 1, PLAN_NO_BROKER, false);
    cr_assert_eq(e.leader, 3);
}

Test(plan, election_takes_first_isr_member_in_replica_order,
     .init = election_setup, .fini = teardown)
{
    const struct meta_partition *p = part(1, 0);
    /* Leader 3 excluded: 1 comes before 2 in Replicas, though not in ISR
     * order. */
    struct plan_election e =
        plan_elect_leader(&img, p, &p->isr, 3, PLAN_NO_BROKER, false);
    cr_assert_eq(e.leader, 1);
    cr_assert_not(e.unclean);
    /* Leader outside the target ISR. */
    struct meta_replica_set target = SET(2, 1);
    e = plan_elect_leader(&img, p, &target, PLAN_NO_BROKER, PLAN_NO_BROKER,
                          false);
    cr_assert_eq(e.leader, 1);
}

Test(plan, election_skips_fenced_shutting_down_and_unregistered,
     .init = election_setup, .fini = teardown)
{
    broker_change(1, 1, 0);  /* 1 fenced */
    broker_change(2, 0, 1);  /* 2 in controlled shutdown */
    add_partition(1, 1, SET(9, 3), SET(9, 3), META_NO_LEADER);
    const struct meta_partition *p = part(1, 0);
    struct plan_election e =
        plan_elect_leader(&img, p, &p->isr, 3, PLAN_NO_BROKER, false);
    cr_assert_eq(e.leader, META_NO_LEADER);
    cr_assert_not(e.unclean);
    /* 9 is not registered; 3 is. */
    p = part(1, 1);
    e = plan_elect_leader(&img, p, &p->isr, PLAN_NO_BROKER, PLAN_NO_BROKER,
                          false);
    cr_assert_eq(e.leader, 3);
    cr_assert_not(plan_broker_acceptable(&img, 9, PLAN_NO_BROKER,
                                         PLAN_NO_BROKER));
}

Test(plan, election_extra_acceptable_counts_a_fenced_broker,
     .init = election_setup, .fini = teardown)
{
    broker_change(1, 1, 0);
    const struct meta_partition *p = part(1, 0);
    struct plan_election e = plan_elect_leader(&img, p, &p->isr, 3, 1, false);
    cr_assert_eq(e.leader, 1);
    /* Not a shutting-down one, nor an excluded one. */
    broker_change(1, 0, 1);
    cr_assert_not(plan_broker_acceptable(&img, 1, PLAN_NO_BROKER, 1));
    cr_assert_not(plan_broker_acceptable(&img, 2, 2, 2));
}

Test(plan, election_unclean_off_leaves_partition_offline,
     .init = election_setup, .fini = teardown)
{
    broker_change(1, 1, 0);
    broker_change(2, 1, 0);
    broker_change(3, 1, 0);
    const struct meta_partition *p = part(1, 0);
    struct plan_election e = plan_elect_leader(
        &img, p, &p->isr, PLAN_NO_BROKER, PLAN_NO_BROKER, false);
    cr_assert_eq(e.leader, META_NO_LEADER);
    cr_assert_not(e.unclean);
}

Test(plan, election_unclean_on_takes_first_live_replica,
     .init = election_setup, .fini = teardown)
{
    broker_change(1, 1, 0);
    broker_change(2, 1, 0);
    broker_change(3, 1, 0);
    const struct meta_partition *p = part(1, 0);
    struct plan_election e = plan_elect_leader(
        &img, p, &p->isr, PLAN_NO_BROKER, PLAN_NO_BROKER, true);
    cr_assert_eq(e.leader, 4);
    cr_assert(e.unclean);
    /* Unclean is only the last resort. */
    broker_change(2, -1, 0);
    e = plan_elect_leader(&img, p, &p->isr, PLAN_NO_BROKER, PLAN_NO_BROKER,
                          true);
    cr_assert_eq(e.leader, 2);
    cr_assert_not(e.unclean);
}

Test(plan, unclean_topic_override_beats_the_default, .init = setup,
     .fini = teardown)
{
    add_topic("plain", 1);
    add_topic("on", 2);
    add_topic("off", 3);
    add_topic("odd", 4);
    topic_config("on", "unclean.leader.election.enable", "TRUE");
    topic_config("off", "unclean.leader.election.enable", "false");
    topic_config("odd", "unclean.leader.election.enable", "maybe");
    cr_assert_not(plan_unclean_allowed(meta_image_topic(&img, "plain"),
                                       false));
    cr_assert(plan_unclean_allowed(meta_image_topic(&img, "plain"), true));
    cr_assert(plan_unclean_allowed(meta_image_topic(&img, "on"), false));
    cr_assert_not(plan_unclean_allowed(meta_image_topic(&img, "off"), true));
    cr_assert(plan_unclean_allowed(meta_image_topic(&img, "odd"), true));
    cr_assert_not(plan_unclean_allowed(meta_image_topic(&img, "odd"), false));
}

/* --- Fencing ------------------------------------------------------------- */

/* Brokers 1..3 live. Topic 1 "t":
 *   p0 replicas [1,2,3] ISR [1,2,3] leader 1  -> leader 2, ISR [2,3]
 *   p1 replicas [3,1,2] ISR [1,3]   leader 3  -> ISR [3]
 *   p2 replicas [2,1,3] ISR [2,3]   leader 2  -> no change (1 out of ISR)
 *   p3 replicas [1,2]   ISR [1]     leader 1  -> offline, ISR stays [1]
 *   p4 replicas [3,2,1] ISR [3,2,1] leader 2  -> ISR [3,2]; not 1's lead */
static void fence_setup(void)
{
    setup();
    live_brokers(3);
    add_topic("t", 1);
    add_partition(1, 0, SET(1, 2, 3), SET(1, 2, 3), 1);
    add_partition(1, 1, SET(3, 1, 2), SET(1, 3), 3);
    add_partition(1, 2, SET(2, 1, 3), SET(2, 3), 2);
    add_partition(1, 3, SET(1, 2), SET(1), 1);
    add_partition(1, 4, SET(3, 2, 1), SET(3, 2, 1), 2);
}

Test(plan, fence_moves_leadership_and_shrinks_every_isr, .init = fence_setup,
     .fini = teardown)
{
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_eq(out.n, 5);
    cr_assert_not(out.more);

    const struct meta_rec_partition_change *c = change_of(1, 0);
    cr_assert_not_null(c);
    cr_assert(c->isr_changed);
    cr_assert(set_eq(&c->isr, SET(2, 3)));
    cr_assert_eq(c->leader, 2);

    c = change_of(1, 1);
    cr_assert_not_null(c);
    cr_assert(set_eq(&c->isr, SET(3)));
    cr_assert_eq(c->leader, META_LEADER_UNCHANGED);

    cr_assert_null(change_of(1, 2));

    c = change_of(1, 3);
    cr_assert_not_null(c);
    cr_assert_not(c->isr_changed, "the last ISR member stays");
    cr_assert_eq(c->leader, META_NO_LEADER);

    c = change_of(1, 4);
    cr_assert_not_null(c);
    cr_assert(set_eq(&c->isr, SET(3, 2)));
    cr_assert_eq(c->leader, META_LEADER_UNCHANGED);

    /* The fence record comes last, as in Kafka's handleBrokerFenced. */
    assert_broker_change(4, 1, 1, 0);

    apply_out();
    cr_assert(broker(1)->fenced);
    cr_assert_eq(part(1, 0)->leader, 2);
    cr_assert_eq(part(1, 0)->leader_epoch, 1);
    cr_assert_eq(part(1, 1)->leader_epoch, 0, "ISR shrink keeps the epoch");
    cr_assert_eq(part(1, 1)->partition_epoch, 1);
    cr_assert_eq(part(1, 2)->partition_epoch, 0);
    cr_assert(set_eq(&part(1, 3)->isr, SET(1)));
    cr_assert_eq(part(1, 3)->leader, META_NO_LEADER);
}

/* A broker in more ISRs than one batch holds is fenced over several
 * batches: the partitions it leads are moved in the first, whatever the
 * topic order, so that they are not left leaderless until the last. */
Test(plan, a_fence_moves_the_leaderships_in_its_first_batch, .init = setup,
     .fini = teardown)
{
    enum { ISR_ONLY = 10000, LED = 2000 };
    live_brokers(3);
    add_topic("a", 1);
    for (int32_t p = 0; p < ISR_ONLY; p++) {
        add_partition(1, p, SET(2, 1, 3), SET(2, 1, 3), 2);
    }
    add_topic("b", 2);
    for (int32_t p = 0; p < LED; p++) {
        add_partition(2, p, SET(1, 2, 3), SET(1, 2, 3), 1);
    }
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert(out.more, "%zu records: the fence needs two batches", out.n);
    for (int32_t p = 0; p < LED; p++) {
        const struct meta_rec_partition_change *c = change_of(2, p);
        cr_assert_not_null(c, "b-%d waits for a later batch", p);
        cr_assert_eq(c->leader, 2, "b-%d", p);
    }
}

Test(plan, fence_of_a_fenced_broker_plans_nothing, .init = fence_setup,
     .fini = teardown)
{
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    apply_out();
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_eq(out.n, 0);
}

Test(plan, last_isr_member_fenced_then_unfenced_is_elected_again,
     .init = fence_setup, .fini = teardown)
{
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    apply_out();
    cr_assert_eq(part(1, 3)->leader, META_NO_LEADER);

    /* Broker 1 comes back: caught up, not asking to stay fenced. */
    struct plan_heartbeat_result res = heartbeat(1, false, false);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    cr_assert(res.is_caught_up);
    cr_assert_not(res.is_fenced);
    cr_assert_eq(out.n, 2);
    assert_broker_change(0, 1, -1, 0);
    const struct meta_rec_partition_change *c = change_of(1, 3);
    cr_assert_not_null(c);
    cr_assert_eq(c->leader, 1);
    cr_assert_not(c->isr_changed);

    apply_out();
    cr_assert_not(broker(1)->fenced);
    cr_assert_eq(part(1, 3)->leader, 1);
    cr_assert_eq(part(1, 3)->leader_epoch, 2);
    /* Partitions with leaders are left alone. */
    cr_assert_eq(part(1, 0)->leader, 2);
}

Test(plan, unclean_off_keeps_partition_offline_on_fence, .init = fence_setup,
     .fini = teardown)
{
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    apply_out();
    cr_assert_eq(part(1, 3)->leader, META_NO_LEADER);
    /* Nor does the periodic check elect anyone. */
    cr_assert_eq(plan_elect_leaderless(&img, false, &out), RC_OK);
    cr_assert_eq(out.n, 0);
}

Test(plan, unclean_on_elects_out_of_sync_replica_with_isr_of_itself,
     .init = fence_setup, .fini = teardown)
{
    cr_assert_eq(plan_fence_broker(&img, 1, true /* unclean */, &out),
                 RC_OK);
    const struct meta_rec_partition_change *c = change_of(1, 3);
    cr_assert_not_null(c);
    cr_assert_eq(c->leader, 2);
    cr_assert(c->isr_changed);
    cr_assert(set_eq(&c->isr, SET(2)));
    apply_out();
    cr_assert_eq(part(1, 3)->leader, 2);
    cr_assert(set_eq(&part(1, 3)->isr, SET(2)));
}

Test(plan, topic_override_enables_unclean_for_one_topic, .init = fence_setup,
     .fini = teardown)
{
    add_topic("u", 2);
    add_partition(2, 0, SET(1, 2), SET(1), 1);
    topic_config("u", "unclean.leader.election.enable", "true");
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_eq(change_of(1, 3)->leader, META_NO_LEADER);
    cr_assert_eq(change_of(2, 0)->leader, 2);
    cr_assert(set_eq(&change_of(2, 0)->isr, SET(2)));
}

Test(plan, topic_override_disables_unclean_for_one_topic,
     .init = fence_setup, .fini = teardown)
{
    topic_config("t", "unclean.leader.election.enable", "false");
    cr_assert_eq(plan_fence_broker(&img, 1, true, &out), RC_OK);
    cr_assert_eq(change_of(1, 3)->leader, META_NO_LEADER);
    cr_assert_not(change_of(1, 3)->isr_changed);
}

Test(plan, unfence_elects_unclean_only_where_allowed, .init = setup,
     .fini = teardown)
{
    live_brokers(2);
    add_topic("t", 1);
    /* Offline; 2 is a replica outside the ISR, 1 is fenced. */
    add_partition(1, 0, SET(1, 2), SET(1), META_NO_LEADER);
    broker_change(1, 1, 0);
    broker_change(2, 1, 0);
    struct plan_heartbeat_req req = {2, broker(2)->epoch, img.offset, false,
                                     false};
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_eq(out.n, 1, "unfence only: 2 is not in the ISR");
    plan_records_clear(&out);
    cr_assert_eq(plan_heartbeat(&img, &req, true, &out, &res), RC_OK);
    cr_assert_eq(out.n, 2);
    cr_assert_eq(change_of(1, 0)->leader, 2);
    cr_assert(set_eq(&change_of(1, 0)->isr, SET(2)));
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 2);
}

/* Brokers 1, 2; two topics of 10,000 partitions, RF 2, so broker 1 is in
 * 20,000 ISRs: more changes than one Raft entry holds. */
Test(plan, fence_larger_than_a_batch_finishes_on_the_next_call,
     .init = setup, .fini = teardown)
{
    live_brokers(2);
    struct plan_topic_defaults defaults = {1, 1};
    for (uint8_t i = 0; i < 2; i++) {
        struct plan_topic_req t = {.name = i == 0 ? "a" : "b",
                                   .num_partitions = META_PARTITIONS_MAX,
                                   .replication_factor = 2,
                                   .id = tid((uint8_t)(i + 1))};
        struct plan_topic_result r;
        cr_assert_eq(plan_create_topics(&img, &t, 1, &defaults, false, &out,
                                        &r),
                     RC_OK);
        cr_assert_eq(r.error, KAFKA_ERROR_NONE);
        apply_out();
    }
    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_eq(out.n, META_BATCH_RECORDS_MAX - 1);
    cr_assert(out.more);
    cr_assert_eq(out.recs[out.n - 1].type, META_REC_PARTITION_CHANGE);
    apply_out();
    cr_assert_not(broker(1)->fenced, "not fenced until the ISRs are clean");

    cr_assert_eq(plan_fence_broker(&img, 1, false, &out), RC_OK);
    cr_assert_not(out.more);
    cr_assert_eq(out.n,
                 2 * META_PARTITIONS_MAX - (META_BATCH_RECORDS_MAX - 1) + 1);
    assert_broker_change(out.n - 1, 1, 1, 0);
    apply_out();
    cr_assert(broker(1)->fenced);
    for (uint8_t t = 1; t <= 2; t++) {
        for (int32_t p = 0; p < META_PARTITIONS_MAX; p += 997) {
            cr_assert(set_eq(&part(t, p)->isr, SET(2)));
            cr_assert_eq(part(t, p)->leader, 2);
        }
    }
}

/* --- Heartbeats ---------------------------------------------------------- */

Test(plan, heartbeat_from_unknown_broker, .init = setup, .fini = teardown)
{
    struct plan_heartbeat_req req = {7, 1, 0, false, false};
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_BROKER_ID_NOT_REGISTERED);
    cr_assert_eq(out.n, 0);
}

Test(plan, heartbeat_with_stale_epoch, .init = setup, .fini = teardown)
{
    int64_t epoch = reg_broker(1);
    struct plan_heartbeat_req req = {1, epoch - 1, img.offset, false, false};
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_STALE_BROKER_EPOCH);
    req.broker_epoch = epoch + 1;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_STALE_BROKER_EPOCH);
    cr_assert_eq(out.n, 0);
}

Test(plan, heartbeat_unfences_only_once_caught_up, .init = setup,
     .fini = teardown)
{
    reg_broker(5);
    reg_broker(1);
    int64_t epoch = broker(1)->epoch;
    cr_assert_eq(epoch, 2);
    struct plan_heartbeat_req req = {1, epoch, epoch - 1, false, false};
    struct plan_heartbeat_result res;
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    cr_assert_not(res.is_caught_up);
    cr_assert(res.is_fenced);
    cr_assert_not(res.should_shut_down);
    cr_assert_eq(out.n, 0);

    req.current_metadata_offset = epoch; /* exactly its registration */
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert(res.is_caught_up);
    cr_assert_not(res.is_fenced);
    cr_assert_eq(out.n, 1);
    assert_broker_change(0, 1, -1, 0);
    apply_out();
    cr_assert_not(broker(1)->fenced);

    /* Unfenced and quiet: nothing to do. */
    cr_assert_eq(plan_heartbeat(&img, &req, false, &out, &res), RC_OK);
    cr_assert_not(res.is_fenced);
    cr_assert_eq(out.n, 0);
}

Test(plan, heartbeat_want_fence_keeps_or_makes_it_fenced, .init = fence_setup,
     .fini = teardown)
{
    struct plan_heartbeat_result res = heartbeat(1, true, false);
    cr_assert(res.is_fenced);
    cr_assert_not(res.should_shut_down);
    cr_assert_eq(out.n, 5, "same records as a lapsed session");
    assert_broker_change(4, 1, 1, 0);
    apply_out();
    res = heartbeat(1, true, false);
    cr_assert(res.is_caught_up);
    cr_assert(res.is_fenced);
    cr_assert_eq(out.n, 0);
}

/* --- Controlled shutdown ------------------------------------------------- */

Test(plan, controlled_shutdown_moves_leaders_then_lets_it_go,
     .init = fence_setup, .fini = teardown)
{
    struct plan_heartbeat_result res = heartbeat(1, false, true);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    cr_assert_not(res.should_shut_down);
    cr_assert_not(res.is_fenced);
    cr_assert_eq(out.n, 5);
    assert_broker_change(0, 1, 0, 1);
    cr_assert_eq(change_of(1, 0)->leader, 2);
    cr_assert(set_eq(&change_of(1, 0)->isr, SET(2, 3)));
    cr_assert(set_eq(&change_of(1, 1)->isr, SET(3)));
    cr_assert_eq(change_of(1, 3)->leader, META_NO_LEADER);
    apply_out();
    cr_assert(broker(1)->in_controlled_shutdown);
    cr_assert_not(broker(1)->fenced);

    /* It leads nothing and sits only in the ISR it is last of. */
    res = heartbeat(1, false, true);
    cr_assert(res.should_shut_down);
    cr_assert(res.is_fenced);
    cr_assert_eq(out.n, 1);
    assert_broker_change(0, 1, 1, 0);
    apply_out();
    cr_assert(broker(1)->fenced);

    /* Fenced now: told to shut down, nothing more to write, and not
     * unfenced even if it forgets to ask. */
    res = heartbeat(1, false, true);
    cr_assert(res.should_shut_down);
    cr_assert_eq(out.n, 0);
    res = heartbeat(1, false, false);
    cr_assert(res.should_shut_down);
    cr_assert(res.is_fenced);
    cr_assert_eq(out.n, 0);
}

Test(plan, controlled_shutdown_continues_without_the_flag,
     .init = fence_setup, .fini = teardown)
{
    heartbeat(1, false, true);
    apply_out();
    struct plan_heartbeat_result res = heartbeat(1, false, false);
    cr_assert(res.should_shut_down);
    cr_assert_eq(out.n, 1);
}

Test(plan, shutdown_of_broker_leading_nothing_fences_at_once, .init = setup,
     .fini = teardown)
{
    live_brokers(3);
    add_topic("t", 1);
    add_partition(1, 0, SET(2, 3, 1), SET(2, 3), 2);
    struct plan_heartbeat_result res = heartbeat(1, false, true);
    cr_assert(res.should_shut_down);
    cr_assert(res.is_fenced);
    cr_assert_eq(out.n, 1);
    assert_broker_change(0, 1, 1, 0);
}

Test(plan, fenced_broker_asking_to_shut_down_gets_no_records,
     .init = setup, .fini = teardown)
{
    reg_broker(1);
    struct plan_heartbeat_result res = heartbeat(1, false, true);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    cr_assert(res.should_shut_down);
    cr_assert(res.is_fenced);
    cr_assert_eq(out.n, 0);
}

Test(plan, want_fence_and_shut_down_fences_and_lets_it_go,
     .init = fence_setup, .fini = teardown)
{
    struct plan_heartbeat_result res = heartbeat(2, true, true);
    cr_assert(res.is_fenced);
    cr_assert(res.should_shut_down);
    assert_broker_change(out.n - 1, 2, 1, 0);
}

/* --- Registration -------------------------------------------------------- */

Test(plan, registration_of_a_new_broker, .init = setup, .fini = teardown)
{
    struct meta_rec_register_broker req = reg_req(4, 1);
    int16_t err;
    int64_t epoch;
    cr_assert_eq(plan_register_broker(&img, &req, false, &out, &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(epoch, -1, "known only once applied");
    cr_assert_eq(out.n, 1);
    cr_assert_eq(out.recs[0].type, META_REC_REGISTER_BROKER);
    cr_assert_eq(out.recs[0].u.register_broker.port, 9096);
    apply_out();
    cr_assert_eq(broker(4)->epoch, img.offset);
    cr_assert(broker(4)->fenced);
}

Test(plan, registration_retry_of_same_incarnation_is_idempotent,
     .init = setup, .fini = teardown)
{
    int64_t first = reg_broker(4);
    reg_broker(5);
    struct meta_rec_register_broker req = reg_req(4, 1);
    int16_t err;
    int64_t epoch;
    cr_assert_eq(plan_register_broker(&img, &req, true /* alive */, &out,
                                      &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(epoch, first);
    cr_assert_eq(out.n, 0);
}

Test(plan, registration_of_another_incarnation, .init = setup,
     .fini = teardown)
{
    int64_t first = reg_broker(4);
    broker_change(4, -1, 0);
    struct meta_rec_register_broker req = reg_req(4, 2);
    int16_t err;
    int64_t epoch;
    cr_assert_eq(plan_register_broker(&img, &req, true /* alive */, &out,
                                      &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_DUPLICATE_BROKER_REGISTRATION);
    cr_assert_eq(out.n, 0);

    /* Once the old session lapsed, the new incarnation takes over: the
     * old one, still unfenced, is fenced first. */
    cr_assert_eq(plan_register_broker(&img, &req, false, &out, &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 2);
    assert_broker_change(0, 4, 1, 0);
    cr_assert_eq(out.recs[1].type, META_REC_REGISTER_BROKER);
    apply_out();
    cr_assert_gt(broker(4)->epoch, first);
    cr_assert(broker(4)->fenced);
}

/* Broker 1 died and came back before its session was found lapsed: its
 * partitions move to new leader epochs before the new incarnation is
 * registered (before, it took them back at their old epochs, which let
 * a follower keep batches the new incarnation had lost and rewritten). */
Test(plan, a_new_incarnation_of_an_unfenced_broker_is_fenced_first,
     .init = fence_setup, .fini = teardown)
{
    int32_t epoch0 = part(1, 0)->leader_epoch;
    struct meta_rec_register_broker req = reg_req(1, 2);
    int16_t err;
    int64_t epoch;
    cr_assert_eq(plan_register_broker(&img, &req, false, &out, &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 6, "five fence records, then the registration");
    cr_assert_eq(out.recs[5].type, META_REC_REGISTER_BROKER);
    cr_assert_eq(change_of(1, 0)->leader, 2);
    apply_out();
    cr_assert_eq(part(1, 0)->leader, 2);
    cr_assert_gt(part(1, 0)->leader_epoch, epoch0);
    cr_assert_not(meta_replica_set_contains(&part(1, 0)->isr, 1));
    cr_assert(broker(1)->fenced);
}

Test(plan, registration_with_negative_id, .init = setup, .fini = teardown)
{
    struct meta_rec_register_broker req = reg_req(-1, 1);
    int16_t err;
    int64_t epoch;
    cr_assert_eq(plan_register_broker(&img, &req, false, &out, &err, &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 0);
}

/* --- CreateTopics -------------------------------------------------------- */

static const struct plan_topic_defaults defaults3 = {3, 2};

static struct plan_topic_req topic_req(const char *name, int32_t np,
                                       int32_t rf, uint8_t id)
{
    return (struct plan_topic_req){.name = name,
                                   .num_partitions = np,
                                   .replication_factor = rf,
                                   .id = tid(id)};
}

/* One topic; its error. */
static int16_t create_one(struct plan_topic_req t, bool validate_only)
{
    struct plan_topic_result r;
    cr_assert_eq(plan_create_topics(&img, &t, 1, &defaults3, validate_only,
                                    &out, &r),
                 RC_OK);
    return r.error;
}

static void create_setup(void)
{
    setup();
    live_brokers(3);
}

Test(plan, create_topics_rejects_illegal_names, .init = create_setup,
     .fini = teardown)
{
    char long_name[META_TOPIC_NAME_BYTES_MAX + 2];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *bad[] = {"", ".", "..", "a b", "a/b", "t\xc3\xa4",
                         "a:b", long_name};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(create_one(topic_req(bad[i], 1, 1, 1), false),
                     KAFKA_ERROR_INVALID_TOPIC_EXCEPTION, "name %zu", i);
    }
    cr_assert_eq(create_one(topic_req(NULL, 1, 1, 1), false),
                 KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
    cr_assert_eq(out.n, 0);
    long_name[META_TOPIC_NAME_BYTES_MAX] = '\0'; /* 249: the limit */
    cr_assert_eq(create_one(topic_req(long_name, 1, 1, 1), false),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(create_one(topic_req("A-z_0.9", 1, 1, 2), false),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(create_one(topic_req("...", 1, 1, 3), false),
                 KAFKA_ERROR_NONE);
    apply_out();
}

Test(plan, create_topics_rejects_existing_name, .init = create_setup,
     .fini = teardown)
{
    cr_assert_eq(create_one(topic_req("t", 1, 1, 1), false),
                 KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_eq(create_one(topic_req("t", 1, 1, 2), false),
                 KAFKA_ERROR_TOPIC_ALREADY_EXISTS);
    cr_assert_eq(out.n, 0);
}

Test(plan, create_topics_rejects_bad_partition_counts, .init = create_setup,
     .fini = teardown)
{
    int32_t bad[] = {0, -2, META_PARTITIONS_MAX + 1, INT32_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(create_one(topic_req("t", bad[i], 1, 1), false),
                     KAFKA_ERROR_INVALID_PARTITIONS, "count %d", bad[i]);
    }
    cr_assert_eq(create_one(topic_req("t", META_PARTITIONS_MAX, 1, 1), true),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 0);
}

Test(plan, create_topics_rejects_bad_replication_factors,
     .init = create_setup, .fini = teardown)
{
    int32_t bad[] = {0, -2, META_REPLICAS_MAX + 1, 4};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(create_one(topic_req("t", 1, bad[i], 1), false),
                     KAFKA_ERROR_INVALID_REPLICATION_FACTOR, "rf %d",
                     bad[i]);
    }
    cr_assert_eq(create_one(topic_req("t", 1, 3, 1), true),
                 KAFKA_ERROR_NONE);
    /* Fenced and shutting-down brokers do not count. */
    broker_change(1, 1, 0);
    cr_assert_eq(create_one(topic_req("t", 1, 3, 1), true),
                 KAFKA_ERROR_INVALID_REPLICATION_FACTOR);
    broker_change(1, -1, 0);
    broker_change(2, 0, 1);
    cr_assert_eq(create_one(topic_req("t", 1, 3, 1), true),
                 KAFKA_ERROR_INVALID_REPLICATION_FACTOR);
    cr_assert_eq(create_one(topic_req("t", 1, 2, 1), true),
                 KAFKA_ERROR_NONE);
}

Test(plan, create_topics_rejects_every_copy_of_a_repeated_name,
     .init = create_setup, .fini = teardown)
{
    struct plan_topic_req t[4] = {
        topic_req("a", 1, 1, 1), topic_req("b", 1, 1, 2),
        topic_req("a", 2, 1, 3), topic_req("c", 1, 1, 4)};
    struct plan_topic_result r[4];
    cr_assert_eq(plan_create_topics(&img, t, 4, &defaults3, false, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(r[1].error, KAFKA_ERROR_NONE);
    cr_assert_eq(r[2].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(r[3].error, KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 4);
    apply_out();
    cr_assert_null(meta_image_topic(&img, "a"));
    cr_assert_not_null(meta_image_topic(&img, "b"));
    cr_assert_not_null(meta_image_topic(&img, "c"));
}

/* Brokers forward every name they refuse as "": two of them are not a
 * repeated name but two illegal ones (Kafka: 17 each). */
Test(plan, create_topics_answers_each_illegal_name_invalid_topic,
     .init = create_setup, .fini = teardown)
{
    struct plan_topic_req t[3] = {topic_req("", 1, 1, 1),
                                  topic_req("ok", 1, 1, 2),
                                  topic_req("", 1, 1, 3)};
    struct plan_topic_result r[3];
    cr_assert_eq(plan_create_topics(&img, t, 3, &defaults3, false, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
    cr_assert_eq(r[1].error, KAFKA_ERROR_NONE);
    cr_assert_eq(r[2].error, KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
}

Test(plan, create_topics_rejects_bad_configs, .init = create_setup,
     .fini = teardown)
{
    char long_value[META_CONFIG_VALUE_BYTES_MAX + 2];
    memset(long_value, '1', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    struct plan_config unknown[] = {{"retention.ms", "1"},
                                    {"log.retention.ms", "1"}};
    struct plan_config too_long[] = {{"retention.ms", long_value}};
    struct plan_config null_value[] = {{"retention.ms", NULL}};
    struct plan_config null_name[] = {{NULL, "1"}};
    struct plan_config twice[] = {{"retention.ms", "1"},
                                  {"retention.ms", "2"}};
    const struct plan_config *bad[] = {unknown, too_long, null_value,
                                       null_name, twice};
    size_t n_bad[] = {2, 1, 1, 1, 2};
    for (size_t i = 0; i < 5; i++) {
        struct plan_topic_req t = topic_req("t", 1, 1, 1);
        t.configs = bad[i];
        t.n_configs = n_bad[i];
        cr_assert_eq(create_one(t, false), KAFKA_ERROR_INVALID_CONFIG,
                     "case %zu", i);
    }
    cr_assert_eq(out.n, 0);
    long_value[META_CONFIG_VALUE_BYTES_MAX] = '\0';
    struct plan_config at_limit[] = {
        {"leader.replication.throttled.replicas", long_value}};
    struct plan_topic_req t = topic_req("t", 1, 1, 1);
    t.configs = at_limit;
    t.n_configs = 1;
    cr_assert_eq(create_one(t, false), KAFKA_ERROR_NONE);
    apply_out();
}

/* One topic with one config; its result. */
static struct plan_topic_result create_with(const char *name,
                                            const char *value)
{
    struct plan_config c = {name, value};
    struct plan_topic_req t = topic_req("t", 1, 1, 1);
    t.configs = &c;
    t.n_configs = 1;
    struct plan_topic_result r;
    cr_assert_eq(plan_create_topics(&img, &t, 1, &defaults3, false, &out,
                                    &r),
                 RC_OK);
    return r;
}

Test(plan, create_topics_checks_config_values_by_type_and_bound,
     .init = create_setup, .fini = teardown)
{
    static const struct {
        const char *name;
        const char *value;
        const char *message;
    } cases[] = {
        {"min.insync.replicas", "two",
         "Invalid value two for configuration min.insync.replicas: Not a "
         "number of type INT"},
        {"min.insync.replicas", "0",
         "Invalid value 0 for configuration min.insync.replicas: Value "
         "must be at least 1"},
        {"min.insync.replicas", "-1",
         "Invalid value -1 for configuration min.insync.replicas: Value "
         "must be at least 1"},
        {"min.insync.replicas", "99999999999999999999",
         "Invalid value 99999999999999999999 for configuration "
         "min.insync.replicas: Not a number of type INT"},
        {"min.insync.replicas", "2 ",
         "Invalid value 2  for configuration min.insync.replicas: Not a "
         "number of type INT"},
        {"min.insync.replicas", "2x",
         "Invalid value 2x for configuration min.insync.replicas: Not a "
         "number of type INT"},
        {"retention.ms", "abc",
         "Invalid value abc for configuration retention.ms: Not a number "
         "of type LONG"},
        {"retention.ms", "-2",
         "Invalid value -2 for configuration retention.ms: Value must be "
         "at least -1"},
        {"segment.bytes", "13",
         "Invalid value 13 for configuration segment.bytes: Value must be "
         "at least 14"},
        {"unclean.leader.election.enable", "yes",
         "Invalid value yes for configuration "
         "unclean.leader.election.enable: Expected value to be either true "
         "or false"},
        {"cleanup.policy", "bogus",
         "Invalid value bogus for configuration cleanup.policy: String "
         "must be one of: compact, delete"},
        {"message.timestamp.type", "logappendtime",
         "Invalid value logappendtime for configuration "
         "message.timestamp.type: String must be one of: CreateTime, "
         "LogAppendTime"},
        {"min.cleanable.dirty.ratio", "nan",
         "Invalid value nan for configuration min.cleanable.dirty.ratio: "
         "Not a number of type DOUBLE"},
        {"retention.ms", NULL,
         "Null value not supported for topic configs: retention.ms"},
        {"no.such.config", "1", "Unknown topic config name: no.such.config"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct plan_topic_result r = create_with(cases[i].name,
                                                 cases[i].value);
        cr_assert_eq(r.error, KAFKA_ERROR_INVALID_CONFIG, "case %zu", i);
        cr_assert_str_eq(r.message, cases[i].message, "case %zu", i);
        cr_assert_eq(r.num_partitions, 0);
        cr_assert_eq(out.n, 0, "case %zu planned records", i);
    }
    cr_assert_null(meta_image_topic(&img, "t"));
}

Test(plan, create_topics_accepts_valid_config_values, .init = create_setup,
     .fini = teardown)
{
    static const struct plan_config good[] = {
        {"min.insync.replicas", "2"},
        {"retention.ms", "-1"},
        {"retention.bytes", "-5"},
        {"segment.bytes", "14"},
        {"max.message.bytes", "0"},
        {"cleanup.policy", "compact, delete"},
        {"unclean.leader.election.enable", "TRUE"},
        {"min.compaction.lag.ms", "0"},
        {"delete.retention.ms", "86400000"},
        {"segment.ms", "1"},
        {"message.timestamp.type", "LogAppendTime"},
        {"min.cleanable.dirty.ratio", "0.5"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct plan_topic_result r = create_with(good[i].name,
                                                 good[i].value);
        cr_assert_eq(r.error, KAFKA_ERROR_NONE, "%s=%s: %s", good[i].name,
                     good[i].value, r.message);
        cr_assert_str_eq(r.message, "");
        cr_assert_eq(out.n, 3); /* topic, config, partition */
        cr_assert_str_eq(out.recs[1].u.config.value, good[i].value);
        plan_records_clear(&out);
    }
}

Test(plan, create_topics_answers_a_bad_config_per_topic,
     .init = create_setup, .fini = teardown)
{
    struct plan_config bad[] = {{"retention.ms", "1000"},
                                {"min.insync.replicas", "two"}};
    struct plan_config ok[] = {{"min.insync.replicas", "2"}};
    struct plan_topic_req t[2] = {topic_req("a", 1, 3, 1),
                                  topic_req("b", 1, 3, 2)};
    t[0].configs = bad;
    t[0].n_configs = 2;
    t[1].configs = ok;
    t[1].n_configs = 1;
    struct plan_topic_result r[2];
    cr_assert_eq(plan_create_topics(&img, t, 2, &defaults3, false, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_eq(r[1].error, KAFKA_ERROR_NONE);
    apply_out();
    cr_assert_null(meta_image_topic(&img, "a"));
    const struct meta_topic *b = meta_image_topic(&img, "b");
    cr_assert_not_null(b);
    cr_assert_str_eq(meta_topic_config(b, "min.insync.replicas"), "2");
    /* validate_only answers the same, and writes nothing either way. */
    t[0].name = "c";
    cr_assert_eq(plan_create_topics(&img, t, 1, &defaults3, true, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(r[0].message,
                     "Invalid value two for configuration "
                     "min.insync.replicas: Not a number of type INT");
    cr_assert_eq(out.n, 0);
}

Test(plan, create_topics_writes_topic_configs_then_partitions,
     .init = create_setup, .fini = teardown)
{
    struct plan_config configs[] = {
        {"cleanup.policy", "compact"},
        {"unclean.leader.election.enable", "true"},
        {"leader.replication.throttled.replicas", "*"}};
    struct plan_topic_req t = topic_req("t", 2, 3, 9);
    t.configs = configs;
    t.n_configs = 3;
    struct plan_topic_result r;
    cr_assert_eq(plan_create_topics(&img, &t, 1, &defaults3, false, &out,
                                    &r),
                 RC_OK);
    cr_assert_eq(r.error, KAFKA_ERROR_NONE);
    cr_assert_eq(r.num_partitions, 2);
    cr_assert_eq(r.replication_factor, 3);
    cr_assert_eq(out.n, 6);
    cr_assert_eq(out.recs[0].type, META_REC_TOPIC);
    cr_assert_str_eq(out.recs[0].u.topic.name, "t");
    for (size_t i = 1; i <= 3; i++) {
        cr_assert_eq(out.recs[i].type, META_REC_CONFIG);
        cr_assert_eq(out.recs[i].u.config.resource_type,
                     META_RESOURCE_TOPIC);
        cr_assert_str_eq(out.recs[i].u.config.resource_name, "t");
    }
    for (size_t i = 4; i <= 5; i++) {
        const struct meta_rec_partition *p = &out.recs[i].u.partition;
        cr_assert_eq(out.recs[i].type, META_REC_PARTITION);
        cr_assert_eq(p->partition, (int32_t)i - 4);
        cr_assert(set_eq(&p->isr, p->replicas));
        cr_assert_eq(p->leader, p->replicas.ids[0]);
        cr_assert_eq(p->leader_epoch, 0);
        cr_assert_eq(p->partition_epoch, 0);
    }
    apply_out();
    const struct meta_topic *mt = meta_image_topic(&img, "t");
    cr_assert_str_eq(meta_topic_config(mt, "cleanup.policy"), "compact");
    cr_assert(plan_unclean_allowed(mt, false));
}

Test(plan, create_topics_uses_defaults, .init = create_setup,
     .fini = teardown)
{
    struct plan_topic_req t = topic_req("t", -1, -1, 1);
    struct plan_topic_result r;
    cr_assert_eq(plan_create_topics(&img, &t, 1, &defaults3, false, &out,
                                    &r),
                 RC_OK);
    cr_assert_eq(r.error, KAFKA_ERROR_NONE);
    cr_assert_eq(r.num_partitions, 3);
    cr_assert_eq(r.replication_factor, 2);
    cr_assert_eq(out.n, 4);
    cr_assert_eq(out.recs[1].u.partition.replicas.n, 2);
}

Test(plan, create_topics_places_replicas_round_robin, .init = create_setup,
     .fini = teardown)
{
    broker_change(2, 1, 0);
    reg_broker(7);
    broker_change(7, -1, 0); /* eligible: 1, 3, 7 */
    cr_assert_eq(create_one(topic_req("a", 6, 2, 1), false),
                 KAFKA_ERROR_NONE);
    int32_t eligible[] = {1, 3, 7};
    for (int32_t p = 0; p < 6; p++) {
        const struct meta_rec_partition *r = &out.recs[1 + p].u.partition;
        cr_assert(set_eq(&r->replicas,
                         SET(eligible[p % 3], eligible[(p + 1) % 3])));
    }
    apply_out();
    /* The next topic starts one broker further on. */
    cr_assert_eq(create_one(topic_req("b", 3, 3, 2), false),
                 KAFKA_ERROR_NONE);
    cr_assert(set_eq(&out.recs[1].u.partition.replicas, SET(3, 7, 1)));
    cr_assert(set_eq(&out.recs[2].u.partition.replicas, SET(7, 1, 3)));
    cr_assert(set_eq(&out.recs[3].u.partition.replicas, SET(1, 3, 7)));
}

Test(plan, create_topics_spreads_leaders_of_many_partitions,
     .init = create_setup, .fini = teardown)
{
    cr_assert_eq(create_one(topic_req("big", 1000, 3, 1), false),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1001);
    int leaders[4] = {0};
    for (size_t i = 1; i < out.n; i++) {
        int32_t l = out.recs[i].u.partition.leader;
        cr_assert(l >= 1 && l <= 3);
        leaders[l]++;
    }
    cr_assert(leaders[1] >= 333 && leaders[2] >= 333 && leaders[3] >= 333);
    apply_out();
    cr_assert_eq(meta_image_topic(&img, "big")->n_partitions, 1000);
    /* Single-partition topics, one request each, rotate their leader. */
    for (uint8_t i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%u", (unsigned)i);
        cr_assert_eq(create_one(topic_req(name, 1, 1, (uint8_t)(2 + i)),
                                false),
                     KAFKA_ERROR_NONE);
        leaders[i + 1] = out.recs[1].u.partition.leader;
        apply_out();
    }
    cr_assert_neq(leaders[1], leaders[2]);
    cr_assert_neq(leaders[2], leaders[3]);
    cr_assert_neq(leaders[1], leaders[3]);
}

Test(plan, create_topics_validate_only_writes_nothing, .init = create_setup,
     .fini = teardown)
{
    struct plan_topic_req t[2] = {topic_req("a", 4, 2, 1),
                                  topic_req("b", 0, 2, 2)};
    struct plan_topic_result r[2];
    cr_assert_eq(plan_create_topics(&img, t, 2, &defaults3, true, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_NONE);
    cr_assert_eq(r[0].num_partitions, 4);
    cr_assert_eq(r[1].error, KAFKA_ERROR_INVALID_PARTITIONS);
    cr_assert_eq(out.n, 0);
}

Test(plan, create_topics_beyond_one_batch_are_throttled,
     .init = create_setup, .fini = teardown)
{
    struct plan_topic_req t[3] = {
        topic_req("a", META_PARTITIONS_MAX, 1, 1),
        topic_req("b", META_PARTITIONS_MAX, 1, 2),
        topic_req("c", 10, 1, 3)};
    struct plan_topic_result r[3];
    cr_assert_eq(plan_create_topics(&img, t, 3, &defaults3, true, &out, r),
                 RC_OK);
    cr_assert_eq(r[0].error, KAFKA_ERROR_NONE);
    cr_assert_eq(r[1].error, KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED);
    cr_assert_eq(r[2].error, KAFKA_ERROR_NONE);
}

/* --- DeleteTopics -------------------------------------------------------- */

Test(plan, delete_topics, .init = create_setup, .fini = teardown)
{
    add_topic("a", 1);
    add_partition(1, 0, SET(1), SET(1), 1);
    add_topic("b", 2);
    add_topic("c", 3);
    const char *names[] = {"a", "nope", "b", "b", NULL};
    int16_t errors[5];
    cr_assert_eq(plan_delete_topics(&img, names, 5, &out, errors), RC_OK);
    cr_assert_eq(errors[0], KAFKA_ERROR_NONE);
    cr_assert_eq(errors[1], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(errors[2], KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(errors[3], KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(errors[4], KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(out.n, 1);
    cr_assert_eq(out.recs[0].type, META_REC_REMOVE_TOPIC);
    struct meta_uuid a = tid(1);
    cr_assert(meta_uuid_eq(&out.recs[0].u.remove_topic.topic_id, &a));
    apply_out();
    cr_assert_null(meta_image_topic(&img, "a"));
    cr_assert_eq(img.n_topics, 2);
}

/* --- AlterPartition ------------------------------------------------------ */

/* Brokers 1..4 live; topic 1 p0 replicas [1,2,3,4], ISR [1,2], leader 1,
 * leader epoch 1, partition epoch 2. */
static void alter_setup(void)
{
    setup();
    live_brokers(4);
    add_topic("t", 1);
    add_partition(1, 0, SET(1, 2, 3, 4), SET(2, 1), 2);
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PARTITION_CHANGE;
    rec.u.partition_change.topic_id = tid(1);
    rec.u.partition_change.partition = 0;
    rec.u.partition_change.leader = 1;
    apply(&rec);
    rec.u.partition_change.leader = META_LEADER_UNCHANGED;
    apply(&rec);
    cr_assert_eq(part(1, 0)->leader_epoch, 1);
    cr_assert_eq(part(1, 0)->partition_epoch, 2);
}

static struct plan_alter_partition_req alter_req(const int32_t *isr,
                                                 size_t n)
{
    return (struct plan_alter_partition_req){
        .broker_id = 1,
        .broker_epoch = broker(1)->epoch,
        .topic_id = tid(1),
        .partition = 0,
        .leader_epoch = 1,
        .partition_epoch = 2,
        .new_isr = isr,
        .n_new_isr = n,
    };
}

static int16_t alter(struct plan_alter_partition_req req)
{
    int16_t err;
    cr_assert_eq(plan_alter_partition(&img, &req, &out, &err), RC_OK);
    return err;
}

Test(plan, alter_partition_checks_sender_and_versions, .init = alter_setup,
     .fini = teardown)
{
    const int32_t isr[] = {1, 2, 3};
    struct plan_alter_partition_req r = alter_req(isr, 3);
    r.broker_epoch--;
    cr_assert_eq(alter(r), KAFKA_ERROR_STALE_BROKER_EPOCH);
    r = alter_req(isr, 3);
    r.broker_id = 9;
    cr_assert_eq(alter(r), KAFKA_ERROR_STALE_BROKER_EPOCH);
    r = alter_req(isr, 3);
    r.topic_id = tid(2);
    cr_assert_eq(alter(r), KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    r = alter_req(isr, 3);
    r.partition = 1;
    cr_assert_eq(alter(r), KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    r = alter_req(isr, 3);
    r.broker_id = 2;
    r.broker_epoch = broker(2)->epoch;
    cr_assert_eq(alter(r), KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER);
    r = alter_req(isr, 3);
    r.leader_epoch = 0;
    cr_assert_eq(alter(r), KAFKA_ERROR_FENCED_LEADER_EPOCH);
    r = alter_req(isr, 3);
    r.leader_epoch = 2;
    cr_assert_eq(alter(r), KAFKA_ERROR_UNKNOWN_LEADER_EPOCH);
    r = alter_req(isr, 3);
    r.partition_epoch = 1;
    cr_assert_eq(alter(r), KAFKA_ERROR_INVALID_UPDATE_VERSION);
    r.partition_epoch = 3;
    cr_assert_eq(alter(r), KAFKA_ERROR_INVALID_UPDATE_VERSION);
    cr_assert_eq(out.n, 0);
}

Test(plan, alter_partition_checks_the_new_isr, .init = alter_setup,
     .fini = teardown)
{
    const int32_t no_leader[] = {2, 3};
    const int32_t outsider[] = {1, 5};
    const int32_t twice[] = {1, 2, 2};
    const int32_t many[META_REPLICAS_MAX + 1] = {1};
    cr_assert_eq(alter(alter_req(no_leader, 0)), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter(alter_req(no_leader, 2)), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter(alter_req(outsider, 2)), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter(alter_req(twice, 3)), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter(alter_req(many, META_REPLICAS_MAX + 1)),
                 KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 0);
}

Test(plan, alter_partition_refuses_ineligible_new_members,
     .init = alter_setup, .fini = teardown)
{
    const int32_t add3[] = {1, 2, 3};
    const int32_t add4[] = {1, 4};
    broker_change(3, 1, 0);
    broker_change(4, 0, 1);
    cr_assert_eq(alter(alter_req(add3, 3)), KAFKA_ERROR_INELIGIBLE_REPLICA);
    cr_assert_eq(alter(alter_req(add4, 2)), KAFKA_ERROR_INELIGIBLE_REPLICA);
    cr_assert_eq(out.n, 0);
    /* An unregistered replica. */
    add_partition(1, 1, SET(1, 8), SET(1), 1);
    const int32_t add8[] = {1, 8};
    struct plan_alter_partition_req r = alter_req(add8, 2);
    r.partition = 1;
    r.leader_epoch = 0;
    r.partition_epoch = 0;
    cr_assert_eq(alter(r), KAFKA_ERROR_INELIGIBLE_REPLICA);
    /* A member already in the ISR may stay even while fenced. */
    broker_change(2, 1, 0);
    const int32_t keep2[] = {2, 1};
    r = alter_req(keep2, 2);
    cr_assert_eq(alter(r), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 0, "same members: nothing to write");
}

Test(plan, alter_partition_expands_and_shrinks, .init = alter_setup,
     .fini = teardown)
{
    const int32_t grow[] = {1, 2, 4};
    cr_assert_eq(alter(alter_req(grow, 3)), KAFKA_ERROR_NONE);
    cr_assert_eq(out.n, 1);
    const struct meta_rec_partition_change *c = change_of(1, 0);
    cr_assert(c->isr_changed);
    cr_assert(set_eq(&c->isr, SET(1, 2, 4)));
    cr_assert_eq(c->leader, META_LEADER_UNCHANGED);
    apply_out();
    cr_assert_eq(part(1, 0)->partition_epoch, 3);
    cr_assert_eq(part(1, 0)->leader_epoch, 1);

    const int32_t shrink[] = {1};
    struct plan_alter_partition_req r = alter_req(shrink, 1);
    cr_assert_eq(alter(r), KAFKA_ERROR_INVALID_UPDATE_VERSION);
    r.partition_epoch = 3;
    cr_assert_eq(alter(r), KAFKA_ERROR_NONE);
    apply_out();
    cr_assert(set_eq(&part(1, 0)->isr, SET(1)));
    cr_assert_eq(part(1, 0)->partition_epoch, 4);
}

/* --- Producer ids -------------------------------------------------------- */

Test(plan, producer_id_blocks_follow_each_other, .init = setup,
     .fini = teardown)
{
    int64_t epoch = reg_broker(1);
    int16_t err;
    int64_t first;
    cr_assert_eq(plan_allocate_producer_ids(&img, 1, epoch + 1, &out, &err,
                                            &first),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_STALE_BROKER_EPOCH);
    cr_assert_eq(plan_allocate_producer_ids(&img, 2, epoch, &out, &err,
                                            &first),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_STALE_BROKER_EPOCH);
    cr_assert_eq(out.n, 0);

    for (int64_t i = 0; i < 3; i++) {
        cr_assert_eq(plan_allocate_producer_ids(&img, 1, epoch, &out, &err,
                                                &first),
                     RC_OK);
        cr_assert_eq(err, KAFKA_ERROR_NONE);
        cr_assert_eq(first, i * PLAN_PRODUCER_ID_BLOCK_SIZE);
        cr_assert_eq(out.n, 1);
        cr_assert_eq(out.recs[0].u.producer_ids.next_producer_id,
                     (i + 1) * PLAN_PRODUCER_ID_BLOCK_SIZE);
        cr_assert_eq(out.recs[0].u.producer_ids.broker_id, 1);
        cr_assert_eq(out.recs[0].u.producer_ids.broker_epoch, epoch);
        apply_out();
    }
    cr_assert_eq(img.next_producer_id, 3 * PLAN_PRODUCER_ID_BLOCK_SIZE);
}

Test(plan, kafka_error_names, .init = setup, .fini = teardown)
{
    cr_assert_str_eq(kafka_error_name(KAFKA_ERROR_STALE_BROKER_EPOCH),
                     "STALE_BROKER_EPOCH");
    cr_assert_str_eq(kafka_error_name(KAFKA_ERROR_UNKNOWN_SERVER_ERROR),
                     "UNKNOWN_SERVER_ERROR");
    cr_assert_str_eq(kafka_error_name(12345), "UNKNOWN_CODE");
    cr_assert_eq(KAFKA_ERROR_INVALID_UPDATE_VERSION, 95);
    cr_assert_eq(KAFKA_ERROR_INELIGIBLE_REPLICA, 107);
}
