/* One partition hosted by this broker: its log, the leadership it last
 * saw in the metadata, and, while it leads, the high watermark and the
 * requests waiting for it. Produce with acks=1 or acks=all completes on one
 * path: "the high watermark has passed my last offset". With
 * log.sync.before.ack (the default) an offset counts towards the high
 * watermark only once fdatasync'd (group commit); followers will add their
 * own end offsets when replication lands. Owned by struct partitions
 * (broker/partitions.c), which frees it only after its log has closed, so
 * log callbacks can always reach it. Loop thread only. */
#ifndef CAIRN_BROKER_PARTITION_H
#define CAIRN_BROKER_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log.h"
#include "broker/producer_state.h"
#include "common/meta.h"

struct partitions;

typedef void (*partition_hw_cb)(void *arg, int rc);

struct partition_waiter {
    int64_t offset;
    partition_hw_cb cb;
    void *arg;
};

struct partition {
    struct partitions *owner;
    struct meta_uuid topic_id;
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    int32_t id;
    struct log *log;
    int32_t leader;
    int32_t leader_epoch;
    bool seen;
    bool closing;
    bool sync_before_ack;
    int64_t hw;                       /* high watermark */
    struct producer_state producers;  /* idempotent producers' windows */
    struct partition_waiter *waiters; /* by offset, oldest first */
    size_t n_waiters;
    size_t cap_waiters;
};

bool partition_is_leader(const struct partition *p);

/* Appends a client batch as leader at the current leader epoch (validated
 * and offset-stamped by the log) and starts moving the high watermark. An
 * idempotent producer's batch is checked against its sequence window: a
 * duplicate of one of its last five batches is not written again and
 * *info carries the original offsets; RC_PRODUCER_FENCED and
 * RC_OUT_OF_ORDER_SEQUENCE reject it. */
MUST_CHECK int partition_append(struct partition *p, uint8_t *batch,
                                size_t len, int64_t now_ms,
                                struct log_append_info *info);

/* Calls cb(arg, RC_OK) once the high watermark reaches offset, or with
 * RC_NOT_LEADER if leadership is lost first (or the partition goes), or
 * the error that stopped the log. offset must be above the current high
 * watermark (check p->hw first). RC_FULL when PARTITION_WAITERS_MAX wait.
 * Called back later, never from inside this call. */
MUST_CHECK int partition_wait_hw(struct partition *p, int64_t offset,
                                 partition_hw_cb cb, void *arg);

/* Leadership changed (or was confirmed) to leader at epoch; as leader the
 * high watermark restarts from the durable (or full) log end. */
void partition_set_leadership(struct partition *p, int32_t self,
                              int32_t leader, int32_t leader_epoch);

/* Rebuilds the producer windows after the log opened: the snapshot, then
 * every batch after it; saves a fresh snapshot. */
MUST_CHECK int partition_load_producers(struct partition *p, const char *dir);

/* Fails every waiter with rc (leadership lost, partition closing). */
void partition_fail_waiters(struct partition *p, int rc);

#endif
