/* Replication throttle: a byte-rate limit on the replication traffic of
 * partitions being reassigned (Kafka's leader.replication.throttled.rate
 * and follower.replication.throttled.rate, KIP-73; Kafka limits the
 * replicas its throttled-replicas topic configs list, Cairn every
 * partition with a reassignment in progress, for the replicas not in its
 * ISR, as Kafka does for the replicas listed). A token bucket holding at
 * most one second of bytes: a fetch may go while the bucket is not in
 * debt, reads at most what the bucket holds (its first batch whole, as
 * KIP-74 has it), and its bytes are taken after it is read, so the
 * average stays at the rate. Pure: time is an argument.
 * Loop thread of the broker. */
#ifndef CAIRN_BROKER_REPLICATION_THROTTLE_H
#define CAIRN_BROKER_REPLICATION_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

/* Kafka's default for both rates: Long.MAX_VALUE, no limit. */
#define THROTTLE_RATE_UNLIMITED INT64_MAX

struct throttle {
    int64_t rate;     /* bytes per second, >= 0 (0: nothing passes);
                       * THROTTLE_RATE_UNLIMITED: off */
    int64_t tokens;   /* bytes that may go now; negative: in debt */
    uint64_t last_ms; /* when tokens were last refilled */
    uint64_t throttled_bytes; /* taken so far, for metrics */
};

void throttle_init(struct throttle *t, int64_t rate, uint64_t now_ms);
/* A new rate (a live config change): the bucket is refilled at the old
 * rate up to now_ms, then holds at most a second of the new one; turned
 * on, it starts full. */
void throttle_set_rate(struct throttle *t, int64_t rate, uint64_t now_ms);
bool throttle_on(const struct throttle *t);
/* Refills up to now_ms; true when a fetch may go. Always true when off. */
bool throttle_allows(struct throttle *t, uint64_t now_ms);
/* Bytes the bucket holds now (after throttle_allows()); INT64_MAX when
 * off. */
int64_t throttle_available(const struct throttle *t);
/* Takes bytes sent (or received) from the bucket. */
void throttle_record(struct throttle *t, uint64_t bytes);

#endif
