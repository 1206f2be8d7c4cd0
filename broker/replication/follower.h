/* The follower side of replication: for every leader broker this broker
 * follows partitions on, one fetcher with one connection to the leader's
 * Kafka listener and at most one request in flight.
 *
 *   - Partitions that just became followers (PARTITION_FOLLOW_TRUNCATE) are
 *     asked about first: OffsetForLeaderEpoch v3 (ReplicaId = own id) for
 *     their latest local epoch; each is truncated where the logs diverge
 *     (follower_truncation_for(), KIP-101/279), repeating while the answer
 *     names an epoch the follower does not know.
 *   - Then long-poll Fetches v13 (ReplicaId = own id, CurrentLeaderEpoch
 *     set, topics by id) in a fetch session with the leader (KIP-227,
 *     broker/replication/follower_fetch.c): the first names every
 *     partition followed there, from its log end; later ones name only
 *     those whose fetch offset or epoch moved and forget those no longer
 *     fetched there, and the leader answers only partitions with news.
 *     Each partition asks for an adaptive number of bytes
 *     (follower_next_partition_max(): from replica.fetch.max.bytes up to
 *     replica.fetch.response.max.bytes while the leader has a backlog,
 *     since every round costs an fdatasync). The batches are appended as
 *     they are (the leader's offsets and epochs); the follower's high
 *     watermark becomes the leader's, capped at its own end. With
 *     log.sync.before.ack the next fetch leaves only once what was
 *     appended is fdatasync'd, so a fetch offset is always a durable end.
 *   - Partitions being moved here count against
 *     follower.replication.throttled.rate until they join the ISR: each
 *     asks for at most what the bucket holds, and while it is in debt they
 *     are left out of the fetch (with nothing else to fetch, the fetcher
 *     pauses replica.fetch.backoff.ms, as Kafka's does).
 *   - A response for a partition whose leadership moved meanwhile is
 *     dropped: a follower never appends from a deposed leader.
 *   - Errors back off (replica.fetch.backoff.ms) and reconnect; so do a
 *     connect that takes longer than socket.connection.setup.timeout.ms
 *     and a request unanswered within replica.socket.timeout.ms.
 *   - When to connect, send, wait and pause is decided by a pure state
 *     machine per leader (broker/replication/follower_session.h), what
 *     each partition's answer means by pure rules per partition
 *     (broker/replication/follower_partition.h); this module carries the
 *     bytes and the time and applies the answers to the logs.
 *
 * Loop thread only. */
#ifndef CAIRN_BROKER_FOLLOWER_H
#define CAIRN_BROKER_FOLLOWER_H

#include <stdint.h>
#include <uv.h>

#include "broker/replication/replica_manager.h"
#include "broker/replication/throttle.h"
#include "common/assert.h"
#include "common/meta/meta.h"
#include "common/trace.h"

struct follower_config {
    int32_t self;
    int32_t wait_max_ms;       /* replica.fetch.wait.max.ms (500) */
    int32_t partition_max_bytes; /* replica.fetch.max.bytes (1 MiB) */
    int32_t response_max_bytes;  /* replica.fetch.response.max.bytes */
    int64_t backoff_ms;        /* replica.fetch.backoff.ms */
    int64_t reconnect_max_ms;  /* reconnect.backoff.max.ms */
    int64_t connect_timeout_ms; /* socket.connection.setup.timeout.ms */
    int64_t request_timeout_ms; /* replica.socket.timeout.ms */
    /* follower.replication.throttled.rate: what this broker fetches for
     * partitions being reassigned while not in their ISR (owned by the
     * caller, whose rate may change at any time). */
    struct throttle *throttle;
};

struct follower;

MUST_CHECK int follower_start(struct follower **out,
                              uv_loop_t *loop, struct replica_manager *ps,
                              const struct follower_config *cfg,
                              struct tracer *tracer);

/* Leadership changed somewhere: opens fetchers to new leaders, closes
 * those nobody follows any more, and starts idle ones. Uses ps->img.
 * Changes close together are planned together, at most one plan per
 * FOLLOWER__PLAN_INTERVAL_MS (200 ms): the first at once, the rest at
 * the end of the interval. */
void follower_plan(struct follower *rf);

/* p's fetch must be looked at though nothing the fetchers hear moved it
 * (its start-up check found damage, which a follower repairs from its
 * leader): its leader's fetcher looks at every partition in its next
 * round. */
void follower_look_at(struct follower *rf, const struct partition *p);

/* Closes every connection; memory goes as the loop runs. */
void follower_close(struct follower *rf);

#endif
