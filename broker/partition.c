/* One hosted partition: leadership, high watermark, waiters
 * (broker/partition.h). */
#include "broker/partition.h"

#include <stdlib.h>
#include <string.h>

#include "broker/partitions.h"
#include "common/limits.h"
#include "common/rc.h"

bool partition_is_leader(const struct partition *p)
{
    return !p->closing && p->leader == p->owner->broker_id;
}

/* Calls, in order, every waiter the high watermark has reached. Callbacks
 * may add waiters; each is taken off first. */
static void fire(struct partition *p)
{
    size_t done = 0;
    while (done < p->n_waiters && p->waiters[done].offset <= p->hw) {
        done++;
    }
    if (done == 0) {
        return;
    }
    struct partition_waiter *ready = malloc(done * sizeof *ready);
    ASSERT(ready != NULL);
    memcpy(ready, p->waiters, done * sizeof *ready);
    memmove(p->waiters, p->waiters + done,
            (p->n_waiters - done) * sizeof *p->waiters);
    p->n_waiters -= done;
    for (size_t i = 0; i < done; i++) {
        ready[i].cb(ready[i].arg, RC_OK);
    }
    free(ready);
}

static void advance_hw(struct partition *p, int64_t hw)
{
    if (hw <= p->hw) {
        return; /* the high watermark never goes back */
    }
    p->hw = hw;
    fire(p);
    partitions_hw_moved(p->owner, p);
}

void partition_fail_waiters(struct partition *p, int rc)
{
    size_t n = p->n_waiters;
    struct partition_waiter *all = p->waiters;
    p->waiters = NULL;
    p->n_waiters = 0;
    p->cap_waiters = 0;
    for (size_t i = 0; i < n; i++) {
        all[i].cb(all[i].arg, rc);
    }
    free(all);
}

static void durable_cb(void *arg, int rc)
{
    struct partition *p = arg;
    if (p->closing) {
        return;
    }
    if (rc != RC_OK) {
        if (rc != RC_OUT_OF_RANGE) { /* a truncation is not an error */
            partition_fail_waiters(p, rc);
        }
        return;
    }
    if (partition_is_leader(p)) {
        advance_hw(p, log_durable_end_offset(p->log));
    }
}

/* A retried batch that is already written: answer with its offsets once
 * it is durable. */
static int duplicate(struct partition *p, const struct producer_check *chk,
                     struct log_append_info *info)
{
    *info = (struct log_append_info){.base_offset = chk->base_offset,
                                     .last_offset = chk->last_offset,
                                     .max_timestamp = -1};
    if (p->sync_before_ack &&
        log_durable_end_offset(p->log) <= chk->last_offset) {
        return log_wait_durable(p->log, chk->last_offset + 1, durable_cb, p);
    }
    return RC_OK;
}

/* The producer window's verdict on a client batch; RC_OK to append. */
static int check_producer(struct partition *p, const uint8_t *batch,
                          size_t len, struct record_batch_header *h,
                          struct producer_check *chk, bool *dup)
{
    *dup = false;
    int rv = record_batch_validate(batch, len, true, h);
    if (rv != RC_OK) {
        return rv; /* log_append would say the same */
    }
    switch (producer_state_check(&p->producers, h, chk)) {
    case PRODUCER_OK:
        return RC_OK;
    case PRODUCER_DUPLICATE:
        *dup = true;
        return RC_OK;
    case PRODUCER_INVALID_EPOCH:
        return RC_PRODUCER_FENCED;
    default:
        return RC_OUT_OF_ORDER_SEQUENCE;
    }
}

int partition_append(struct partition *p, uint8_t *batch, size_t len,
                     int64_t now_ms, struct log_append_info *info)
{
    if (!partition_is_leader(p)) {
        return RC_NOT_LEADER;
    }
    struct record_batch_header h;
    struct producer_check chk;
    bool dup = false;
    int rv = check_producer(p, batch, len, &h, &chk, &dup);
    if (rv != RC_OK) {
        return rv;
    }
    if (dup) {
        return duplicate(p, &chk, info);
    }
    rv = log_append_validated(p->log, batch, len, &h, p->leader_epoch,
                              now_ms, info);
    if (rv != RC_OK) {
        return rv;
    }
    /* Recorded before durability: a retry of a write never acknowledged
     * is then answered as a duplicate, not written twice. */
    h.base_offset = info->base_offset;
    producer_state_record(&p->producers, &h);
    if (!p->sync_before_ack) {
        advance_hw(p, log_end_offset(p->log));
        return RC_OK;
    }
    rv = log_wait_durable(p->log, info->last_offset + 1, durable_cb, p);
    if (rv != RC_OK) {
        /* Written but never acknowledged: the producer retries. */
        return rv;
    }
    return RC_OK;
}

int partition_wait_hw(struct partition *p, int64_t offset, partition_hw_cb cb,
                      void *arg)
{
    ASSERT(offset > p->hw);
    if (!partition_is_leader(p)) {
        return RC_NOT_LEADER;
    }
    if (p->n_waiters == p->cap_waiters) {
        if (p->cap_waiters >= PARTITION_WAITERS_MAX) {
            return RC_FULL;
        }
        size_t cap = p->cap_waiters == 0 ? 16 : p->cap_waiters * 2;
        void *w = realloc(p->waiters, cap * sizeof *p->waiters);
        if (w == NULL) {
            return RC_NOMEM;
        }
        p->waiters = w;
        p->cap_waiters = cap;
    }
    /* Appends come in offset order, so waiters mostly do too; keep the
     * array sorted for the rare exception. */
    size_t i = p->n_waiters;
    while (i > 0 && p->waiters[i - 1].offset > offset) {
        p->waiters[i] = p->waiters[i - 1];
        i--;
    }
    p->waiters[i] = (struct partition_waiter){offset, cb, arg};
    p->n_waiters++;
    return RC_OK;
}

static void replay_cb(void *arg, const struct record_batch_header *h)
{
    producer_state_record(arg, h);
}

int partition_load_producers(struct partition *p, const char *dir)
{
    int64_t from = 0;
    int rv = producer_state_load(&p->producers, dir, &from);
    if (rv != RC_OK || from > log_end_offset(p->log) ||
        from < log_start_offset(p->log)) {
        producer_state_clear(&p->producers);
        from = log_start_offset(p->log);
    }
    rv = log_for_each_batch(p->log, from, replay_cb, &p->producers);
    if (rv == RC_OK) {
        rv = producer_state_save(&p->producers, dir, log_end_offset(p->log));
    }
    return rv;
}

void partition_set_leadership(struct partition *p, int32_t self,
                              int32_t leader, int32_t leader_epoch)
{
    bool was_leader = p->leader == self;
    p->leader = leader;
    p->leader_epoch = leader_epoch;
    if (leader != self) {
        if (was_leader) {
            partition_fail_waiters(p, RC_NOT_LEADER);
        }
        return;
    }
    /* A new leader with one replica: everything durable is committed. */
    int64_t hw = p->sync_before_ack ? log_durable_end_offset(p->log)
                                    : log_end_offset(p->log);
    if (hw > p->hw) {
        p->hw = hw;
    }
}
