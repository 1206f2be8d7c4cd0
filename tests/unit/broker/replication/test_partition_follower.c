/* Tests for the follower side of broker/replication/partition.c on a real
 * log: appending what the leader sent, the high watermark that follows,
 * and restarting at the leader's log start, including a restart that
 * fails (the high watermark must never pass the log end); then what it
 * makes of each kind of Fetch and OffsetForLeaderEpoch answer. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/replication/partition.h"
#include "common/bytes.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"
#include "tests/lib/test_host.h"

#define LEADER_EPOCH 3

static struct log_fixture f;
static struct test_host th;
static struct partition p;

static void setup(void)
{
    log_fixture_setup(&f);
    log_fixture_open(&f);
    test_host_init(&th, 2);
    p = (struct partition){.host = &th.host, .log = f.log,
                           .follow = PARTITION_FOLLOW_FETCH};
    producer_state_init(&p.producers);
}

static void teardown(void)
{
    producer_state_free(&p.producers);
    log_fixture_teardown(&f);
}

TestSuite(partition_follower, .init = setup, .fini = teardown,
          .timeout = 60);

/* What the leader sends: n records stamped at base with its epoch. */
static int append_from_leader(int64_t base, int32_t n, int64_t leader_hw)
{
    struct built_batch b = batch_build(n, 50, 1000, (uint32_t)base);
    bytes_put_be64(b.bytes, (uint64_t)base);
    bytes_put_be32(b.bytes + 12, LEADER_EPOCH);
    int rv = partition_follower_append(&p, b.bytes, b.len, leader_hw);
    built_batch_free(&b);
    return rv;
}

Test(partition_follower, hw_is_the_leaders_capped_at_the_log_end)
{
    cr_assert_eq(append_from_leader(0, 5, 100), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_eq(p.hw, 5, "the leader's 100 is past what we hold");
    cr_assert_eq(append_from_leader(5, 5, 7), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 10);
    cr_assert_eq(p.hw, 7);
    cr_assert_eq(append_from_leader(10, 1, 6), RC_OK);
    cr_assert_eq(p.hw, 7, "never backwards");
}

/* The host counts every move of the high watermark (its checkpoint is
 * written only when the count moved, not after a walk of every
 * partition): an append that moves it, a truncation below it and a
 * restart each count; an append that leaves it does not. */
Test(partition_follower, each_hw_move_is_counted_on_the_host)
{
    cr_assert_eq(append_from_leader(0, 5, 3), RC_OK);
    cr_assert_eq(th.host.hw_changes, 1);
    cr_assert_eq(append_from_leader(5, 5, 3), RC_OK);
    cr_assert_eq(th.host.hw_changes, 1, "the HW stayed at 3");
    cr_assert_eq(append_from_leader(10, 5, 12), RC_OK);
    cr_assert_eq(th.host.hw_changes, 2);
    cr_assert_eq(partition_follower_truncate(&p, 10), RC_OK);
    cr_assert_eq(p.hw, 10);
    cr_assert_eq(th.host.hw_changes, 3);
    cr_assert_eq(partition_follower_restart(&p, 40), RC_OK);
    cr_assert_eq(p.hw, 40);
    cr_assert_eq(th.host.hw_changes, 4);
}

Test(partition_follower, batches_already_held_are_skipped)
{
    cr_assert_eq(append_from_leader(0, 5, 0), RC_OK);
    cr_assert_eq(append_from_leader(0, 5, 5), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_eq(p.hw, 5);
}

/* A batch that starts below the log end and ends past it does not fit:
 * the logs diverged (the follower then asks where). */
Test(partition_follower, a_batch_straddling_the_log_end_is_refused)
{
    cr_assert_eq(append_from_leader(0, 5, 0), RC_OK);
    cr_assert_eq(append_from_leader(3, 4, 10), RC_INVALID);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_eq(p.hw, 0);
}

Test(partition_follower, restart_starts_log_and_hw_at_the_leaders_start)
{
    cr_assert_eq(append_from_leader(0, 5, 3), RC_OK);
    cr_assert_eq(partition_follower_restart(&p, 50), RC_OK);
    cr_assert_eq(log_start_offset(f.log), 50);
    cr_assert_eq(log_end_offset(f.log), 50);
    cr_assert_eq(p.hw, 50);
    cr_assert_eq(append_from_leader(50, 2, 52), RC_OK);
    cr_assert_eq(p.hw, 52);
}

/* The new segment cannot be created (a directory holds its name): the
 * restart fails, the log keeps what it had, and the high watermark is not
 * moved to the leader's log start, past everything this log holds. */
Test(partition_follower, failed_restart_leaves_hw_within_the_log)
{
    cr_assert_eq(append_from_leader(0, 5, 3), RC_OK);
    char path[4200];
    log_fixture_file(&f, 500, "log", path, sizeof path);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_neq(partition_follower_restart(&p, 500), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_leq(p.hw, log_end_offset(f.log));
    cr_assert_eq(p.hw, 3);
    cr_assert_eq(rmdir(path), 0);
}

/* --- One partition's part of the leader's answers ------------------------ */

/* The leader's answer to a fetch from the log end: n records at base. */
static enum partition_fetched fetched(int16_t error, int64_t base, int32_t n,
                                      int64_t leader_hw, int64_t start)
{
    struct built_batch b = {0};
    if (n > 0) {
        b = batch_build(n, 50, 1000, (uint32_t)base);
        bytes_put_be64(b.bytes, (uint64_t)base);
        bytes_put_be32(b.bytes + 12, LEADER_EPOCH);
    }
    enum partition_fetched got = partition_follower_fetched(
        &p, error, log_end_offset(f.log), b.bytes, b.len, leader_hw, start);
    if (n > 0) {
        built_batch_free(&b);
    }
    return got;
}

Test(partition_follower, an_answer_without_error_is_appended)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 4, 3, 0),
                 PARTITION_FETCHED_APPENDED);
    cr_assert_eq(log_end_offset(f.log), 4);
    cr_assert_eq(p.hw, 3);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_FETCH);
}

Test(partition_follower, a_batch_that_does_not_fit_goes_back_to_truncating)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 4, 0, 0),
                 PARTITION_FETCHED_APPENDED);
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 2, 4, 6, 0),
                 PARTITION_FETCHED_DIVERGED);
    cr_assert_eq(log_end_offset(f.log), 4);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_TRUNCATE);
}

Test(partition_follower, out_of_range_below_the_leaders_start_restarts_there)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 4, 4, 0),
                 PARTITION_FETCHED_APPENDED);
    cr_assert_eq(fetched(KAFKA_ERROR_OFFSET_OUT_OF_RANGE, 0, 0, 90, 80),
                 PARTITION_FETCHED_DONE);
    cr_assert_eq(log_start_offset(f.log), 80);
    cr_assert_eq(log_end_offset(f.log), 80);
    cr_assert_eq(p.hw, 80);
}

Test(partition_follower, out_of_range_past_the_leaders_end_truncates)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 4, 4, 0),
                 PARTITION_FETCHED_APPENDED);
    cr_assert_eq(fetched(KAFKA_ERROR_OFFSET_OUT_OF_RANGE, 0, 0, 2, 0),
                 PARTITION_FETCHED_DONE);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_TRUNCATE);
    cr_assert_eq(log_end_offset(f.log), 4, "nothing cut before asking");
}

Test(partition_follower, a_stale_leader_pauses_and_changes_nothing)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, 0, 0, 9, 0),
                 PARTITION_FETCHED_PAUSE);
    cr_assert_eq(log_end_offset(f.log), 0);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_FETCH);
}

Test(partition_follower, an_answer_for_another_offset_is_dropped)
{
    struct built_batch b = batch_build(3, 50, 1000, 1);
    cr_assert_eq(partition_follower_fetched(&p, KAFKA_ERROR_NONE, 7, b.bytes,
                                            b.len, 9, 0),
                 PARTITION_FETCHED_DONE);
    built_batch_free(&b);
    cr_assert_eq(log_end_offset(f.log), 0);
}

/* KIP-101: the leader says our last epoch ended earlier than our log. */
Test(partition_follower, the_leaders_epoch_end_cuts_what_diverged)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 6, 4, 0),
                 PARTITION_FETCHED_APPENDED);
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 6, 4, 4, 0),
                 PARTITION_FETCHED_APPENDED);
    p.follow = PARTITION_FOLLOW_TRUNCATE;
    cr_assert(partition_follower_epoch_end(&p, 1, KAFKA_ERROR_NONE,
                                           LEADER_EPOCH, 6));
    cr_assert_eq(log_end_offset(f.log), 6, "%s", th.event_text);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_FETCH);
    cr_assert(strstr(th.last_event, "truncated 10 -> 6") != NULL, "%s",
              th.last_event);
}

Test(partition_follower, an_epoch_answer_with_an_error_cuts_nothing)
{
    cr_assert_eq(fetched(KAFKA_ERROR_NONE, 0, 10, 4, 0),
                 PARTITION_FETCHED_APPENDED);
    p.follow = PARTITION_FOLLOW_TRUNCATE;
    cr_assert_not(partition_follower_epoch_end(
        &p, 1, KAFKA_ERROR_FENCED_LEADER_EPOCH, LEADER_EPOCH, 2));
    cr_assert_eq(log_end_offset(f.log), 10);
    cr_assert_eq(p.follow, PARTITION_FOLLOW_TRUNCATE);
}

Test(partition_follower, a_fetch_names_only_a_durable_log_end)
{
    p.leader = 1;
    cr_assert(partition_follows(&p, 1, PARTITION_FOLLOW_FETCH));
    cr_assert_not(partition_follows(&p, 3, PARTITION_FOLLOW_FETCH));
    cr_assert_not(partition_follows(&p, 1, PARTITION_FOLLOW_TRUNCATE));
    p.closing = true;
    cr_assert_not(partition_follows(&p, 1, PARTITION_FOLLOW_FETCH));
    p.closing = false;
    cr_assert_eq(append_from_leader(0, 5, 0), RC_OK);
    p.sync_before_ack = true;
    cr_assert_not(partition_fetch_offset_durable(&p), "not synced yet");
    cr_assert_eq(log_fixture_wait_durable(&f, 5), RC_OK);
    cr_assert(partition_fetch_offset_durable(&p));
    p.sync_before_ack = false;
    cr_assert_eq(append_from_leader(5, 5, 0), RC_OK);
    cr_assert(partition_fetch_offset_durable(&p),
              "without sync before ack, any end counts");
}
