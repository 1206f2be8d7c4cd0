/* What a follower does with one partition it follows, as pure rules: when
 * it must ask the leader where their logs diverge (OffsetForLeaderEpoch),
 * where to truncate from the answer (KIP-101, KIP-279), what one
 * partition's Fetch answer means (append, restart at the leader's log
 * start, go back to truncating, or pause), and the high watermark it
 * takes after appending. The per-leader session (requests in flight,
 * durability waits, back-off, timeouts) is follower_session.h's;
 * partition.c applies these answers to a real log
 * (partition_follower_fetched, partition_follower_epoch_end), and
 * follower.c carries the requests and answers over the network.
 * No I/O, no clock.
 *
 *     NONE --becomes follower--> TRUNCATE --epochs answered (done)--> FETCH
 *     FETCH --out of range, or batches that do not fit--> TRUNCATE
 *     any --becomes leader, offline or not a replica--> NONE
 */
#ifndef CAIRN_BROKER_FOLLOWER_PARTITION_H
#define CAIRN_BROKER_FOLLOWER_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/log/log_epoch.h"

enum partition_follow {
    PARTITION_FOLLOW_NONE = 0, /* leader, offline, or not a replica */
    PARTITION_FOLLOW_TRUNCATE, /* asks the leader where the logs diverge */
    PARTITION_FOLLOW_FETCH,    /* fetches from the leader */
};

/* A TRUNCATE partition about to be asked about: false when its log holds
 * no leader epoch (empty, or written before epochs were recorded), so
 * there is nothing to ask; it then truncates to its high watermark at
 * once (an empty log has nothing to cut) and fetches. */
bool follower_asks_epochs(const struct log_epoch_cache *c);

struct follower_truncation {
    int64_t offset; /* truncate the log to this offset (keep below it) */
    bool done;      /* false: ask again with the new latest epoch */
};

/* Kafka's getOffsetTruncationState: the leader answered
 * OffsetForLeaderEpoch for our latest epoch with (leader_epoch,
 * leader_end). Our log has epoch cache c, log end leo and high watermark
 * hw.
 *   - leader_end undefined (-1): truncate to hw, done (no epoch info);
 *   - leader_epoch undefined (-1): min(leader_end, leo), done;
 *   - our endOffsetFor(leader_epoch) = (e, end) (log_epoch.h, Kafka's
 *     rules: for an epoch older than all of ours, where our first epoch
 *     begins): if e != leader_epoch we do not know the leader's epoch:
 *     truncate to end, not done (KIP-279); else min(end, leader_end,
 *     leo), done;
 *   - our cache is empty (or the epoch newer than ours): min(leader_end,
 *     leo), done.
 */
struct follower_truncation
follower_truncation_for(const struct log_epoch_cache *c, int64_t leo,
                        int64_t hw, int32_t leader_epoch, int64_t leader_end);

/* What to do with one partition's Fetch answer. */
enum follower_fetched {
    FOLLOWER_FETCHED_DROP,     /* the log moved since the request: ignore */
    FOLLOWER_FETCHED_APPEND,   /* append the records, take the leader's HW
                                * (follower_hw_after_append) */
    FOLLOWER_FETCHED_RESTART,  /* the leader deleted what we lack: empty
                                * the log and start it, and the HW, at the
                                * leader's log start offset */
    FOLLOWER_FETCHED_TRUNCATE, /* our end is past the leader's: go back to
                                * asking where the logs diverge */
    FOLLOWER_FETCHED_PAUSE,    /* stale metadata on one side
                                * (NOT_LEADER_OR_FOLLOWER, FENCED or
                                * UNKNOWN_LEADER_EPOCH, ...): back off */
};

/* The answer for a partition fetched at fetch_offset whose log now ends
 * at log_end: error_code is the partition's Kafka error,
 * leader_log_start the leader's log start offset it reported. */
enum follower_fetched follower_fetched_action(int16_t error_code,
                                              int64_t fetch_offset,
                                              int64_t log_end,
                                              int64_t leader_log_start);

/* The follower's high watermark after an append: the leader's, but never
 * past its own log end (it does not hold the rest) and never backwards. */
int64_t follower_hw_after_append(int64_t hw, int64_t leader_hw,
                                 int64_t log_end);

#endif
