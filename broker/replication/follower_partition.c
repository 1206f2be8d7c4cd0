/* A follower's rules for one partition (broker/replication/
 * follower_partition.h). Pure. */
#include "broker/replication/follower_partition.h"

#include "common/assert.h"
#include "common/kafka/kafka_error.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

bool follower_asks_epochs(const struct log_epoch_cache *c)
{
    return log_epoch_latest(c) != LOG_EPOCH_UNDEFINED;
}

/* Undefined values are -1 on the wire; anything negative from the leader
 * is treated the same, so a result never lies below zero. */
struct follower_truncation
follower_truncation_for(const struct log_epoch_cache *c, int64_t leo,
                        int64_t hw, int32_t leader_epoch, int64_t leader_end)
{
    ASSERT(leo >= 0);
    ASSERT(hw >= 0);
    if (leader_end < 0) {
        /* Truncating past the log end changes nothing; say so. */
        return (struct follower_truncation){min64(hw, leo), true};
    }
    if (leader_epoch < 0) {
        return (struct follower_truncation){min64(leader_end, leo), true};
    }
    int32_t epoch = LOG_EPOCH_UNDEFINED;
    int64_t end = LOG_EPOCH_UNDEFINED;
    log_epoch_end_offset_for(c, leader_epoch, leo, &epoch, &end);
    if (epoch == LOG_EPOCH_UNDEFINED) {
        return (struct follower_truncation){min64(leader_end, leo), true};
    }
    if (epoch != leader_epoch) {
        ASSERT(epoch < leader_epoch);
        return (struct follower_truncation){min64(end, leo), false};
    }
    return (struct follower_truncation){min64(min64(end, leader_end), leo),
                                        true};
}

enum follower_fetched follower_fetched_action(int16_t error_code,
                                              int64_t fetch_offset,
                                              int64_t log_end,
                                              int64_t leader_log_start)
{
    if (log_end != fetch_offset) {
        /* Truncated or appended meanwhile: the answer is for another
         * offset; the next round asks again. */
        return FOLLOWER_FETCHED_DROP;
    }
    switch (error_code) {
    case KAFKA_ERROR_NONE:
        return FOLLOWER_FETCHED_APPEND;
    case KAFKA_ERROR_OFFSET_OUT_OF_RANGE:
        /* Below the leader's log start: what we lack is gone there, so
         * start over at its log start. Otherwise we are past its end (we
         * hold records of a lost epoch): find where the logs diverge. */
        return leader_log_start > fetch_offset ? FOLLOWER_FETCHED_RESTART
                                               : FOLLOWER_FETCHED_TRUNCATE;
    default:
        return FOLLOWER_FETCHED_PAUSE;
    }
}

int64_t follower_hw_after_append(int64_t hw, int64_t leader_hw,
                                 int64_t log_end)
{
    int64_t next = min64(leader_hw, log_end);
    return next > hw ? next : hw;
}
