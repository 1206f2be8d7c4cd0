/* Tests for broker/replication/repair.c through its partition host: a
 * follower with a damaged log leaves the ISR, as the controller answers
 * and not as its image says, before it cuts its log and fetches the rest
 * again; a damaged leader asks to hand over leadership,
 * at most once per REPAIR_ASK_EVERY_MS; a repaired follower taken back
 * into the ISR too early asks to leave again; damage found earlier is
 * reported again in a new role; and the scrub finds a flipped byte no
 * reader asked for. Broker 2 hosts the partition (replicas 1, 2, 3). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/replication/partition.h"
#include "broker/log/log_verify.h"
#include "broker/replication/repair.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"
#include "tests/lib/test_host.h"

#define SELF 2

static struct log_fixture f;
static struct test_host th;
static struct partition p;
static int64_t sizes[3];

/* Three batches of 10 records: offsets 0-9, 10-19, 20-29. */
static void setup(void)
{
    log_fixture_setup(&f);
    log_fixture_open(&f);
    for (int i = 0; i < 3; i++) {
        struct log_append_info info =
            log_fixture_append(&f, 10, 40, 1000 + i, (uint32_t)i + 1);
        sizes[i] = info.bytes;
    }
    cr_assert_eq(log_fixture_wait_durable(&f, 30), RC_OK);
    test_host_init(&th, SELF);
    th.now_ms = 10000;
    p = (struct partition){.host = &th.host, .log = f.log, .id = 0,
                           .leader = 1, .leader_epoch = 4,
                           .follow = PARTITION_FOLLOW_FETCH,
                           .isr = {3, {1, 2, 3}}, .hw = 30,
                           .corrupt_offset = -1, .repair_until = -1};
    strcpy(p.topic, "t");
    producer_state_init(&p.producers);
}

static void teardown(void)
{
    producer_state_free(&p.producers);
    log_fixture_teardown(&f);
}

TestSuite(repair, .init = setup, .fini = teardown, .timeout = 60);

/* The controller takes this replica out of the ISR (a new partition
 * epoch), answers its LeaveLeadership, and the image applies the change. */
static void leave_isr(void)
{
    p.partition_epoch++;
    repair_left_isr(&p, p.leader_epoch, p.partition_epoch);
    p.isr = (struct meta_replica_set){2, {1, 3}};
    repair_after_metadata(&p);
}

/* Nothing the fetcher hears says a follower's log is damaged, and it does
 * not look at every partition each round: the host is told, so that the
 * fetcher looks at this one. A leader repairs by itself. */
Test(repair, a_damaged_follower_tells_its_host_for_its_fetcher)
{
    repair_log_corrupt(&p, 10);
    cr_assert_eq(th.follower_damages, 1);
    cr_assert_eq(th.last, &p);
    p.leader = SELF;
    p.follow = PARTITION_FOLLOW_NONE;
    repair_log_corrupt(&p, 10);
    cr_assert_eq(th.follower_damages, 1, "a leader repairs with no fetcher");
}

Test(repair, a_damaged_follower_leaves_the_isr_before_it_cuts)
{
    repair_log_corrupt(&p, 10);
    cr_assert_eq(th.leaves, 0, "the fetcher asks, with no fetch in flight");
    cr_assert_not(repair_follower_ready(&p), "not fetched while in the ISR");
    cr_assert_eq(th.leaves, 1);
    cr_assert_eq(th.leave_offset, 10);
    cr_assert_eq(log_end_offset(f.log), 30, "nothing cut yet");
    cr_assert_not(repair_follower_ready(&p));
    cr_assert_eq(th.leaves, 1, "asked at most once a second");
    th.now_ms += REPAIR_ASK_EVERY_MS;
    cr_assert_not(repair_follower_ready(&p));
    cr_assert_eq(th.leaves, 2, "and again after that");
    leave_isr();
    cr_assert(repair_follower_ready(&p), "out of the ISR: cut, then fetch");
    cr_assert_eq(log_end_offset(f.log), 10);
    cr_assert_eq(p.corrupt_offset, -1);
    cr_assert_eq(p.repair_until, 30, "it owes what the HW promised");
    cr_assert(strstr(th.last_event, "truncated 30 -> 10") != NULL, "%s",
              th.last_event);
}

/* Seed 6069857 of the broker simulation: the image says "follower outside
 * the ISR", but it is stale: the leader has taken the replica back into
 * the ISR and an election has made it leader. Cut on that image, it would
 * lead without records the ISR promised. */
Test(repair, an_image_that_says_out_is_not_enough_to_cut)
{
    p.isr = (struct meta_replica_set){2, {1, 3}};
    p.partition_epoch = 7;
    repair_log_corrupt(&p, 10);
    cr_assert_not(repair_follower_ready(&p), "the controller decides");
    cr_assert_eq(th.leaves, 1, "asked to leave, at the image's epoch");
    cr_assert_eq(log_end_offset(f.log), 30, "nothing cut");
    /* The controller refused (a newer leader epoch): no answer counts.
     * Then the image learns it is leader, in the ISR. */
    p.leader = SELF;
    p.leader_epoch = 5;
    p.partition_epoch = 9;
    p.follow = PARTITION_FOLLOW_NONE;
    p.isr = (struct meta_replica_set){3, {1, 2, 3}};
    repair_after_metadata(&p);
    cr_assert_eq(th.leaves, 2, "asks to hand the partition on");
    cr_assert_eq(log_end_offset(f.log), 30, "a leader keeps its records");
}

Test(repair, a_follower_cuts_once_its_image_has_the_answered_state)
{
    p.isr = (struct meta_replica_set){2, {1, 3}};
    p.partition_epoch = 7;
    repair_log_corrupt(&p, 10);
    cr_assert_not(repair_follower_ready(&p));
    cr_assert_eq(th.leaves, 1);
    repair_left_isr(&p, 4, 8); /* out as of partition epoch 8 */
    th.now_ms += REPAIR_ASK_EVERY_MS;
    cr_assert_not(repair_follower_ready(&p), "the image is still at 7");
    cr_assert_eq(th.leaves, 1, "no need to ask again: it waits");
    cr_assert_eq(log_end_offset(f.log), 30);
    p.partition_epoch = 8;
    cr_assert(repair_follower_ready(&p), "now it cuts");
    cr_assert_eq(log_end_offset(f.log), 10);
}

Test(repair, an_answer_for_another_leadership_does_not_count)
{
    p.isr = (struct meta_replica_set){2, {1, 3}};
    p.partition_epoch = 7;
    repair_log_corrupt(&p, 10);
    cr_assert_not(repair_follower_ready(&p));
    repair_left_isr(&p, 3, 8); /* answered for an older leader epoch */
    p.partition_epoch = 8;
    th.now_ms += REPAIR_ASK_EVERY_MS;
    cr_assert_not(repair_follower_ready(&p));
    cr_assert_eq(th.leaves, 2, "asks again, at the leader epoch it has");
    cr_assert_eq(log_end_offset(f.log), 30);
}

Test(repair, a_late_answer_from_before_the_last_cut_does_not_count)
{
    repair_log_corrupt(&p, 20);
    cr_assert_not(repair_follower_ready(&p));
    leave_isr(); /* out at partition epoch 1 */
    cr_assert(repair_follower_ready(&p));
    cr_assert_eq(log_end_offset(f.log), 20);
    /* It fetched again since; new damage, and a late answer to an ask
     * from before the cut arrives. */
    repair_log_corrupt(&p, 10);
    repair_left_isr(&p, p.leader_epoch, p.partition_epoch);
    th.now_ms += REPAIR_ASK_EVERY_MS;
    cr_assert_not(repair_follower_ready(&p), "it may have fetched since");
    cr_assert_eq(log_end_offset(f.log), 20);
    p.partition_epoch++;
    repair_left_isr(&p, p.leader_epoch, p.partition_epoch);
    cr_assert(repair_follower_ready(&p), "a new answer: it cuts");
    cr_assert_eq(log_end_offset(f.log), 10);
}

Test(repair, a_damaged_leader_asks_to_hand_over_leadership)
{
    p.leader = SELF;
    p.follow = PARTITION_FOLLOW_NONE;
    repair_log_corrupt(&p, 20);
    cr_assert_eq(th.leaves, 1);
    cr_assert_eq(th.leave_offset, 20);
    repair_log_corrupt(&p, 25);
    cr_assert_eq(th.leaves, 1, "at most once a second");
    cr_assert_eq(p.corrupt_offset, 20, "the first damage counts");
    repair_log_corrupt(&p, 10);
    cr_assert_eq(p.corrupt_offset, 10, "earlier damage moves it back");
    cr_assert_eq(log_end_offset(f.log), 30, "a leader cuts nothing");
}

Test(repair, a_partition_without_a_leader_keeps_the_damage_for_later)
{
    p.leader = META_NO_LEADER;
    p.follow = PARTITION_FOLLOW_NONE;
    repair_log_corrupt(&p, 20);
    cr_assert_eq(th.leaves, 0);
    cr_assert_eq(p.corrupt_offset, 20);
    p.leader = SELF; /* elected after all */
    repair_after_metadata(&p);
    cr_assert_eq(th.leaves, 1, "reported again in its new role");
}

Test(repair, a_repaired_follower_back_in_the_isr_too_early_leaves_again)
{
    repair_log_corrupt(&p, 10);
    cr_assert_not(repair_follower_ready(&p));
    leave_isr();
    cr_assert(repair_follower_ready(&p));
    cr_assert_eq(log_end_offset(f.log), 10);
    int leaves = th.leaves;
    p.isr = (struct meta_replica_set){3, {1, 2, 3}}; /* a late fetch */
    repair_after_fetch(&p, 30);
    cr_assert_eq(th.leaves, leaves + 1,
                 "in the ISR while it lacks records below the HW");
    cr_assert_eq(th.leave_offset, -1, "no damage left: it owes records");
}

Test(repair, a_follower_that_caught_up_stays)
{
    repair_log_corrupt(&p, 20);
    cr_assert_not(repair_follower_ready(&p));
    leave_isr();
    cr_assert(repair_follower_ready(&p));
    cr_assert_eq(log_end_offset(f.log), 20);
    log_fixture_append(&f, 10, 40, 2000, 9); /* fetched again: 20-29 */
    p.isr = (struct meta_replica_set){3, {1, 2, 3}};
    int leaves = th.leaves;
    repair_after_fetch(&p, 30);
    cr_assert_eq(th.leaves, leaves);
    cr_assert_not(p.cut_to_repair);
    cr_assert(repair_follower_ready(&p));
    cr_assert_eq(p.repair_until, -1);
}

static void flip_at(int64_t position)
{
    cr_assert(log_fixture_flip(&f, 0, position, 0x40));
}

Test(repair, the_scrub_finds_damage_no_reader_asked_for)
{
    uint8_t *buf = malloc(1 << 20);
    cr_assert_not_null(buf);
    bool done = false;
    int read_rc = -1;
    int64_t n = repair_scrub_partition(&p, buf, 1 << 20, 1 << 20, &done,
                                       &read_rc);
    cr_assert_eq(n, sizes[0] + sizes[1] + sizes[2]);
    cr_assert(done);
    cr_assert_eq(read_rc, RC_OK);
    cr_assert_eq(p.corrupt_offset, -1);
    flip_at(sizes[0] + 60); /* inside the second batch */
    n = repair_scrub_partition(&p, buf, 1 << 20, 1 << 20, &done, &read_rc);
    cr_assert_gt(n, 0);
    cr_assert(done, "damage ends the pass");
    cr_assert_eq(read_rc, RC_OK, "damage is not a failed read");
    cr_assert_eq(p.corrupt_offset, 10);
    cr_assert_eq(p.scrub_offset, 0, "the next pass starts over");
    free(buf);
}

Test(repair, the_scrub_reads_a_log_in_bounded_steps)
{
    uint8_t *buf = malloc(1 << 20);
    cr_assert_not_null(buf);
    bool done = true;
    int read_rc = -1;
    int64_t n = repair_scrub_partition(&p, buf, 1 << 20, sizes[0], &done,
                                       &read_rc);
    cr_assert_eq(n, sizes[0]);
    cr_assert_not(done);
    cr_assert_eq(p.scrub_offset, 10);
    n = repair_scrub_partition(&p, buf, 1 << 20, 1 << 20, &done, &read_rc);
    cr_assert_eq(n, sizes[1] + sizes[2]);
    cr_assert(done);
    cr_assert_eq(p.scrub_offset, 0);
    free(buf);
}

Test(repair, a_checked_read_sends_the_intact_batches_before_damage)
{
    static uint8_t buf[1 << 16];
    struct log_span span;
    struct log_verify v;
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(repair_check_read(&p, &span, buf, sizeof buf, &v),
                 sizes[0] + sizes[1] + sizes[2]);
    log_span_release(&span);
    flip_at(sizes[0] + 60); /* inside the second batch */
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(repair_check_read(&p, &span, buf, sizeof buf, &v),
                 sizes[0], "the first batch only");
    log_span_release(&span);
    cr_assert_eq(p.corrupt_offset, 10, "the damage is reported");
    cr_assert_eq(log_read(f.log, 10, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(repair_check_read(&p, &span, buf, sizeof buf, &v), -1,
                 "nothing intact: a storage error");
    log_span_release(&span);
}
