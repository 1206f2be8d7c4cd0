/* Tests for broker/replication/follower_partition.c: a follower's pure
 * rules for one partition: whether to ask the leader about epochs, where
 * to truncate (KIP-101, KIP-279), what a Fetch answer means, and the high
 * watermark after an append. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>

#include "broker/log/log_epoch.h"
#include "broker/replication/follower_partition.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

static struct log_epoch_cache leader_cache;
static struct log_epoch_cache follower_cache;

static void setup(void)
{
    log_epoch_init(&leader_cache);
    log_epoch_init(&follower_cache);
}

static void teardown(void)
{
    log_epoch_free(&leader_cache);
    log_epoch_free(&follower_cache);
}

TestSuite(follower_partition, .init = setup, .fini = teardown,
          .timeout = 60);

/* --- Follower truncation ------------------------------------------------- */

static void assign(struct log_epoch_cache *c, int32_t epoch, int64_t start)
{
    bool changed = false;
    cr_assert_eq(log_epoch_assign(c, epoch, start, &changed), RC_OK);
    cr_assert(changed);
}

/* What the leader answers to OffsetsForLeaderEpoch(epoch). */
static void leader_answer(int32_t epoch, int64_t leader_leo,
                          int32_t *epoch_out, int64_t *end_out)
{
    log_epoch_end_offset_for(&leader_cache, epoch, leader_leo, epoch_out,
                             end_out);
}

static void expect_truncation(struct follower_truncation t, int64_t offset,
                              bool done)
{
    cr_assert_eq(t.offset, offset, "offset: got %lld want %lld",
                 (long long)t.offset, (long long)offset);
    cr_assert_eq(t.done, done, "done: got %d want %d", t.done, done);
}

/* KIP-101 scenario 1: the follower has offset 1 but had not yet learned
 * that the HW moved past it. Truncating to its HW (1) would lose a
 * committed record should it become leader; the epoch answer keeps it. */
Test(follower_partition, kip101_follower_keeps_committed_records_above_its_hw)
{
    assign(&leader_cache, 0, 0);   /* leader: m0, m1 at epoch 0, HW 2 */
    assign(&follower_cache, 0, 0); /* follower: m0, m1, HW 1 */
    int32_t epoch = 0;
    int64_t end = 0;
    leader_answer(log_epoch_latest(&follower_cache), 2, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 2);
    expect_truncation(follower_truncation_for(&follower_cache, 2, 1, epoch,
                                         end),
                      2, true);
}

/* KIP-101 scenario 2: the old leader (now follower) wrote 3..4 at epoch 0
 * that the new leader never got; the new leader took over at 3 (epoch 1)
 * and wrote 3..5. Both logs hold offsets 3..4 with different records. The
 * follower truncates to where the leader's epoch 0 ended (3): not to its
 * HW (1), and not to its own LEO (5). */
Test(follower_partition, kip101_divergent_logs_truncate_to_leader_end_of_epoch)
{
    assign(&leader_cache, 0, 0);
    assign(&leader_cache, 1, 3);
    assign(&follower_cache, 0, 0);
    int32_t epoch = 0;
    int64_t end = 0;
    leader_answer(log_epoch_latest(&follower_cache), 6, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 3);
    expect_truncation(follower_truncation_for(&follower_cache, 5, 1, epoch,
                                         end),
                      3, true);
}

/* KIP-279, the follower knows the smaller epoch the leader answers with:
 * it truncates to its own end of that epoch, which is below the leader's
 * end and its own LEO, and is done. */
Test(follower_partition, kip279_leader_answers_smaller_epoch_follower_knows)
{
    assign(&leader_cache, 0, 0);
    assign(&leader_cache, 1, 4);
    assign(&leader_cache, 3, 10); /* its own epoch, as it became leader */
    assign(&follower_cache, 0, 0);
    assign(&follower_cache, 1, 4);
    assign(&follower_cache, 2, 7);
    int32_t epoch = 0;
    int64_t end = 0;
    /* The follower's latest epoch 2 is unknown to the leader, which
     * answers with its largest smaller epoch: 1, ending where its epoch 3
     * began (10). */
    leader_answer(log_epoch_latest(&follower_cache), 10, &epoch, &end);
    cr_assert_eq(epoch, 1);
    cr_assert_eq(end, 10);
    expect_truncation(follower_truncation_for(&follower_cache, 9, 2, epoch,
                                         end),
                      7, true);
}

/* KIP-279: back-to-back leader changes. The follower led briefly at epoch
 * 2 (offsets 4..7, never replicated); the leader knows epochs 0, 1 and 3.
 * Asked for epoch 2, the leader answers epoch 1, which the follower never
 * saw: it truncates to the end of its own largest epoch below (0 ends at
 * 4), not done, and asks again with its new latest epoch. */
Test(follower_partition, kip279_unknown_leader_epoch_truncates_and_asks_again)
{
    assign(&leader_cache, 0, 0);
    assign(&leader_cache, 1, 4);
    assign(&leader_cache, 3, 6);
    assign(&follower_cache, 0, 0);
    assign(&follower_cache, 2, 4);
    int32_t epoch = 0;
    int64_t end = 0;

    leader_answer(log_epoch_latest(&follower_cache), 10, &epoch, &end);
    cr_assert_eq(epoch, 1);
    cr_assert_eq(end, 6);
    struct follower_truncation t =
        follower_truncation_for(&follower_cache, 8, 2, epoch, end);
    expect_truncation(t, 4, false);

    /* The log layer truncates; the epoch cache follows. */
    cr_assert(log_epoch_truncate_from_end(&follower_cache, t.offset));
    cr_assert_eq(log_epoch_latest(&follower_cache), 0);
    leader_answer(log_epoch_latest(&follower_cache), 10, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 4);
    expect_truncation(follower_truncation_for(&follower_cache, t.offset, 2,
                                         epoch, end),
                      4, true);
}

Test(follower_partition, undefined_leader_end_truncates_to_hw)
{
    assign(&follower_cache, 0, 0);
    assign(&follower_cache, 3, 40);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 30, 3, -1),
                      30, true);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 30,
                                         LOG_EPOCH_UNDEFINED, -1),
                      30, true);
}

Test(follower_partition, undefined_leader_epoch_truncates_to_min_of_leader_end_and_leo)
{
    assign(&follower_cache, 0, 0);
    assign(&follower_cache, 3, 40);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 10,
                                         LOG_EPOCH_UNDEFINED, 45),
                      45, true);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 10,
                                         LOG_EPOCH_UNDEFINED, 70),
                      50, true);
}

/* Found by the simulation (seed 2922): leader 1 wrote offsets 0..63 at
 * epoch 0 and replicated nothing; node 2, empty, led epoch 1 and wrote
 * 0..11; then node 1 led again (epoch 2). Node 2 asks about its epoch 1;
 * node 1 knows only epoch 0, which ran to 64. Node 2 holds nothing of
 * epoch 0: all of its log diverges and goes, not just what lies past 64. */
Test(follower_partition, a_follower_with_only_newer_epochs_truncates_them_all)
{
    assign(&leader_cache, 0, 0);
    assign(&leader_cache, 2, 64);
    assign(&follower_cache, 1, 0);
    int32_t epoch = 0;
    int64_t end = 0;
    leader_answer(log_epoch_latest(&follower_cache), 64, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 64);
    expect_truncation(follower_truncation_for(&follower_cache, 12, 0, epoch,
                                              end),
                      0, true);
}

/* The leader's epoch is older than every epoch the follower has: none
 * of the follower's records are of it, so they start where its first
 * epoch began (Kafka's endOffsetFor); what the leader holds from there on
 * is of epoch 2 or older, ours of epoch 4: truncate there. */
Test(follower_partition, follower_without_earlier_epoch_truncates_to_its_first_epoch)
{
    assign(&follower_cache, 4, 20); /* older epochs were retained away */
    expect_truncation(follower_truncation_for(&follower_cache, 50, 25, 2, 30),
                      20, true);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 25, 2, 90),
                      20, true);
    expect_truncation(follower_truncation_for(&follower_cache, 50, 25, 2, 10),
                      10, true);

    struct log_epoch_cache empty;
    log_epoch_init(&empty);
    expect_truncation(follower_truncation_for(&empty, 12, 5, 2, 30), 12,
                      true);
    log_epoch_free(&empty);
}

/* --- Before asking ------------------------------------------------------- */

Test(follower_partition, a_log_without_epochs_has_nothing_to_ask)
{
    cr_assert_not(follower_asks_epochs(&follower_cache));
    assign(&follower_cache, 0, 0);
    cr_assert(follower_asks_epochs(&follower_cache));
}

/* --- Fetch answers ------------------------------------------------------- */

Test(follower_partition, an_answer_for_a_log_that_moved_is_dropped)
{
    /* Fetched at 10, the log now ends at 7 (truncated) or 12: whatever
     * the answer says, it is for another offset. */
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_NONE, 10, 7, 0),
                 FOLLOWER_FETCHED_DROP);
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_OFFSET_OUT_OF_RANGE,
                                         10, 12, 50),
                 FOLLOWER_FETCHED_DROP);
}

Test(follower_partition, records_are_appended)
{
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_NONE, 10, 10, 0),
                 FOLLOWER_FETCHED_APPEND);
}

/* Out of range below the leader's log start: the leader deleted what we
 * lack, so start over there; at or above it we are past the leader's end
 * and must find where the logs diverge. */
Test(follower_partition, out_of_range_restarts_or_truncates)
{
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_OFFSET_OUT_OF_RANGE,
                                         10, 10, 11),
                 FOLLOWER_FETCHED_RESTART);
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_OFFSET_OUT_OF_RANGE,
                                         10, 10, 10),
                 FOLLOWER_FETCHED_TRUNCATE);
    cr_assert_eq(follower_fetched_action(KAFKA_ERROR_OFFSET_OUT_OF_RANGE,
                                         10, 10, 0),
                 FOLLOWER_FETCHED_TRUNCATE);
}

Test(follower_partition, stale_metadata_pauses)
{
    const int16_t errors[] = {
        KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, KAFKA_ERROR_FENCED_LEADER_EPOCH,
        KAFKA_ERROR_UNKNOWN_LEADER_EPOCH,
        KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        cr_assert_eq(follower_fetched_action(errors[i], 10, 10, 0),
                     FOLLOWER_FETCHED_PAUSE, "error %d", errors[i]);
    }
}

/* --- High watermark after an append -------------------------------------- */

Test(follower_partition, hw_follows_the_leader_capped_at_the_log_end)
{
    cr_assert_eq(follower_hw_after_append(5, 8, 10), 8);
    cr_assert_eq(follower_hw_after_append(5, 20, 10), 10, "own end caps");
    cr_assert_eq(follower_hw_after_append(9, 8, 10), 9, "never backwards");
}
