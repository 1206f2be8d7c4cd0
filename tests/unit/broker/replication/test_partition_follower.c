/* Tests for the follower side of broker/replication/partition.c on a real
 * log: appending what the leader sent, the high watermark that follows,
 * and restarting at the leader's log start, including a restart that
 * fails (the high watermark must never pass the log end). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/replication/partition.h"
#include "common/bytes.h"
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
