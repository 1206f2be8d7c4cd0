/* One hosted partition: leadership, high watermark, waiters
 * (broker/replication/partition.h). */
#include "broker/replication/partition.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/log_layout.h"
#include "common/rc.h"
#include "common/trace.h"

bool partition_is_leader(const struct partition *p)
{
    return !p->closing && p->leader == p->host->self;
}

int64_t partition_leader_leo(const struct partition *p)
{
    return p->sync_before_ack ? log_durable_end_offset(p->log)
                              : log_end_offset(p->log);
}

static int64_t now(const struct partition *p)
{
    return p->host->now_ms(p->host->ctx);
}

/* A leader whose ISR check would change nothing, now or later, until
 * something it is told changes (partition_needs_isr_check()). */
static bool isr_quiet(const struct partition *p)
{
    if (p->repl.pending != ISR_PENDING_NONE || p->alter_in_flight ||
        p->n_waiters > 0 || p->hw_stalled || !isr_hw_may_move(&p->repl)) {
        return false;
    }
    /* The log end last: a new leader (followers not heard yet) is told
     * apart without touching its log. */
    int64_t lowest = INT64_MAX;
    for (int32_t i = 0; i < p->repl.n_followers; i++) {
        const struct isr_follower *f = &p->repl.followers[i];
        if (f->leo == ISR_OFFSET_UNKNOWN ||
            !meta_replica_set_contains(&p->repl.isr, f->id)) {
            return false;
        }
        lowest = f->leo < lowest ? f->leo : lowest;
    }
    int64_t leo = log_end_offset(p->log);
    return p->hw >= leo && lowest >= leo;
}

/* p's share of its host's counts, taken out (sign -1) before a call
 * that may change its role or ISR and put back (+1) after it. */
static void tally(const struct partition *p, int sign)
{
    if (p->host == NULL || p->host->counts == NULL ||
        !partition_is_leader(p)) {
        return;
    }
    struct partition_counts *c = p->host->counts;
    c->leaders += sign;
    c->under_replicated += sign * (p->isr.n < p->replicas.n);
    c->under_min_isr += sign * (p->isr.n < p->repl.min_insync);
}

void partition_close(struct partition *p)
{
    tally(p, -1);
    p->closing = true;
}

/* Called wherever a quiet spell may end (partition_host.isr_work). */
static void want_check(struct partition *p)
{
    if (p->host != NULL && p->host->isr_work != NULL &&
        partition_needs_isr_check(p)) {
        p->host->isr_work(p->host->ctx, p);
    }
}

/* What moved the high watermark, for the event of a long acks=all wait. */
enum hw_cause {
    HW_CAUSE_APPEND,   /* the leader's own append (no sync before ack) */
    HW_CAUSE_DURABLE,  /* the leader's own fsync */
    HW_CAUSE_FETCH,    /* a follower's fetch */
    HW_CAUSE_ISR,      /* an ISR or metadata change */
    HW_CAUSE_CHECK,    /* the periodic ISR check */
};

struct hw_move {
    enum hw_cause cause;
    int32_t replica;    /* HW_CAUSE_FETCH */
    int64_t offset;     /* its fetch offset */
};

static void hw_cause_text(const struct partition *p, const struct hw_move *m,
                          char *out, size_t cap)
{
    char isr[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->repl.isr, isr, sizeof isr);
    switch (m->cause) {
    case HW_CAUSE_APPEND:
        snprintf(out, cap, "the leader's append");
        break;
    case HW_CAUSE_DURABLE:
        snprintf(out, cap, "the leader's fsync");
        break;
    case HW_CAUSE_FETCH:
        snprintf(out, cap, "replica %d fetched from offset %" PRId64 ", the "
                 "last of the ISR %s to have it", (int)m->replica, m->offset,
                 isr);
        break;
    case HW_CAUSE_ISR: {
        char prev[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->isr_prev, prev, sizeof prev);
        if (strcmp(prev, isr) != 0) {
            snprintf(out, cap, "the ISR went from %s to %s", prev, isr);
        } else {
            snprintf(out, cap, "the metadata changed (isr %s)", isr);
        }
        break;
    }
    case HW_CAUSE_CHECK:
        snprintf(out, cap, "the ISR check (isr %s)", isr);
        break;
    }
}

/* The longest any of the n waiters has waited at now_ms. */
static int64_t longest_wait(const struct partition_waiter *w, size_t n,
                            int64_t now_ms)
{
    int64_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i].since_ms >= 0 && now_ms - w[i].since_ms > longest) {
            longest = now_ms - w[i].since_ms;
        }
    }
    return longest;
}

/* One event for the acks=all requests fire() released, when the longest
 * of them waited PARTITION_ACK_WAIT_EVENT_MS or more. */
static void note_long_wait(struct partition *p,
                           const struct partition_waiter *ready, size_t n,
                           const struct hw_move *m, int64_t now_ms)
{
    int64_t longest = longest_wait(ready, n, now_ms);
    if (longest < PARTITION_ACK_WAIT_EVENT_MS) {
        return;
    }
    if (p->ack_event_ms != 0 &&
        now_ms - p->ack_event_ms < PARTITION_ACK_EVENT_EVERY_MS) {
        p->ack_events_held++; /* a slow follower under load: one a second */
        return;
    }
    char why[512];
    char held[96] = "";
    hw_cause_text(p, m, why, sizeof why);
    if (p->ack_events_held > 0) {
        snprintf(held, sizeof held, "; %" PRIu64 " more such releases "
                 "since the last line", p->ack_events_held);
    }
    p->ack_event_ms = now_ms;
    p->ack_events_held = 0;
    TRACE_INFO(p->host->tracer, "event: %s-%d acks=all released %zu "
               "request%s after up to %" PRId64 " ms: hw %" PRId64 " passed "
               "offset %" PRId64 " when %s%s", p->topic, p->id, n,
               n == 1 ? "" : "s", longest, p->hw, ready[n - 1].offset - 1,
               why, held);
}

/* Calls, in order, every waiter the high watermark has reached. Callbacks
 * may add waiters; each is taken off first. */
static void fire(struct partition *p, const struct hw_move *m)
{
    size_t done = 0;
    while (done < p->n_waiters && p->waiters[done].offset <= p->hw) {
        done++;
    }
    if (done == 0) {
        return;
    }
    struct partition_waiter small[16]; /* the common case: no malloc */
    struct partition_waiter *ready =
        done <= ARRAY_LEN(small) ? small : malloc(done * sizeof *ready);
    ASSERT(ready != NULL);
    memcpy(ready, p->waiters, done * sizeof *ready);
    memmove(p->waiters, p->waiters + done,
            (p->n_waiters - done) * sizeof *p->waiters);
    p->n_waiters -= done;
    note_long_wait(p, ready, done, m, now(p));
    for (size_t i = 0; i < done; i++) {
        ready[i].cb(ready[i].arg, RC_OK);
    }
    if (ready != small) {
        free(ready);
    }
}

/* Every change of p's high watermark goes through here, so that the host
 * knows its checkpoint is stale without a walk of every partition. */
static void set_hw(struct partition *p, int64_t hw)
{
    if (hw != p->hw && p->host != NULL) { /* unit tests hold bare ones */
        p->host->hw_changes++;
    }
    p->hw = hw;
}

static void advance_hw(struct partition *p, int64_t hw,
                       const struct hw_move *m)
{
    if (hw <= p->hw) {
        return; /* the high watermark never goes back */
    }
    set_hw(p, hw);
    fire(p, m);
    p->host->wake(p->host->ctx, p);
}

/* Leader: the high watermark moves to the replicas' minimum (over the
 * maximal ISR and caught-up eligible followers), never backwards. */
/* The events of the HW stopping and moving again for want of in-sync
 * replicas (strict min ISR: the HW is frozen while the committed ISR is
 * below min.insync.replicas). */
static void note_hw_stall(struct partition *p)
{
    bool stalled = !isr_hw_may_move(&p->repl);
    if (stalled == p->hw_stalled) {
        return;
    }
    p->hw_stalled = stalled;
    char isr[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->repl.isr, isr, sizeof isr);
    if (stalled) {
        TRACE_INFO(p->host->tracer, "event: %s-%d hw stalled at %" PRId64
                   " (isr %s: %d < min.insync.replicas=%d; acks=all writes "
                   "wait, then fail)", p->topic, p->id, p->hw, isr,
                   p->repl.isr.n, p->repl.min_isr);
    } else {
        TRACE_INFO(p->host->tracer, "event: %s-%d hw moves again from %"
                   PRId64 " (isr %s: %d >= min.insync.replicas=%d)",
                   p->topic, p->id, p->hw, isr, p->repl.isr.n,
                   p->repl.min_isr);
    }
}

static void update_hw(struct partition *p, int64_t now_ms,
                      const struct hw_move *m)
{
    if (!partition_is_leader(p)) {
        return;
    }
    note_hw_stall(p);
    advance_hw(p, isr_hw_candidate(&p->repl, partition_leader_leo(p),
                                   now_ms), m);
}

static const struct hw_move hw_by_append = {HW_CAUSE_APPEND, -1, -1};
static const struct hw_move hw_by_durable = {HW_CAUSE_DURABLE, -1, -1};
static const struct hw_move hw_by_isr = {HW_CAUSE_ISR, -1, -1};
static const struct hw_move hw_by_check = {HW_CAUSE_CHECK, -1, -1};

int64_t partition_wall_ms(const struct partition *p)
{
    return p->host->wall_ms(p->host->ctx);
}

void partition_fail_waiters(struct partition *p, int rc)
{
    size_t n = p->n_waiters;
    struct partition_waiter *all = p->waiters;
    p->waiters = NULL;
    p->n_waiters = 0;
    p->cap_waiters = 0;
    if (n > 0) {
        int64_t longest = longest_wait(all, n, now(p));
        char isr[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->repl.isr, isr, sizeof isr);
        TRACE_INFO(p->host->tracer, "event: %s-%d acks=all failed %zu "
                   "request%s after up to %" PRId64 " ms: %s (hw %" PRId64
                   ", isr %s, min.insync.replicas=%d)", p->topic, p->id, n,
                   n == 1 ? "" : "s", longest,
                   kafka_error_name(kafka_error_from_rc(rc)), p->hw, isr,
                   p->repl.min_insync);
    }
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
    update_hw(p, now(p), &hw_by_durable);
}

/* A retried batch that is already written: answer with its offsets once
 * it is durable. */
/* Before the log end moves: a follower whose fetch session still holds
 * this partition at the log end has been caught up as of the session's
 * last fetch (isr_follower_seen()); its next fetch names the partition
 * again once it has the new batch. */
static void credit_sessions(struct partition *p)
{
    if (p->host->replica_seen == NULL) {
        return;
    }
    int64_t leo = log_end_offset(p->log);
    for (int32_t i = 0; i < p->repl.n_followers; i++) {
        const struct isr_follower *f = &p->repl.followers[i];
        if (f->leo != leo) {
            continue;
        }
        int64_t seen = p->host->replica_seen(p->host->ctx, p, f->id, leo);
        if (seen >= 0) {
            isr_follower_seen(&p->repl, f->id, seen, leo);
        }
    }
}

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

/* The producer window's verdict on a validated batch; RC_OK to append. */
static int check_producer(struct partition *p,
                          const struct record_batch_header *h,
                          struct producer_check *chk, bool *dup)
{
    *dup = false;
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

/* --- Refused and timed-out acks=all writes ------------------------------ */

/* Whether a tally's line is due at now_ms: the first at once, then at
 * most one per PARTITION_ACK_EVENT_EVERY_MS. */
static bool tally_due(const struct partition_ack_tally *t, int64_t now_ms)
{
    return t->held > 0 &&
           (t->line_ms == 0 ||
            now_ms - t->line_ms >= PARTITION_ACK_EVENT_EVERY_MS);
}

static void tell_refused(struct partition *p, int64_t now_ms)
{
    struct partition_ack_tally *t = &p->ack_refused;
    char isr[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->repl.isr, isr, sizeof isr);
    TRACE_INFO(p->host->tracer, "event: %s-%d acks=all refused %" PRIu64
               " request%s: %s (isr %s: %d < min.insync.replicas=%d; "
               "nothing written)", p->topic, p->id, t->held,
               t->held == 1 ? "" : "s",
               kafka_error_name(KAFKA_ERROR_NOT_ENOUGH_REPLICAS), isr,
               p->repl.isr.n, p->repl.min_insync);
    t->held = 0;
    t->line_ms = now_ms;
}

static void tell_timed_out(struct partition *p, int64_t now_ms)
{
    struct partition_ack_tally *t = &p->ack_timed_out;
    char isr[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->repl.isr, isr, sizeof isr);
    TRACE_INFO(p->host->tracer, "event: %s-%d acks=all timed out %" PRIu64
               " request%s after up to %" PRId64 " ms: %s (hw %" PRId64
               " short of offset %" PRId64 "; isr %s, min.insync.replicas="
               "%d)", p->topic, p->id, t->held, t->held == 1 ? "" : "s",
               t->longest_ms, kafka_error_name(KAFKA_ERROR_REQUEST_TIMED_OUT),
               p->hw, t->offset, isr, p->repl.min_insync);
    t->held = 0;
    t->longest_ms = 0;
    t->offset = 0;
    t->line_ms = now_ms;
}

/* The lines held back that are due by now (the periodic ISR check). */
static void tell_held(struct partition *p, int64_t now_ms)
{
    if (tally_due(&p->ack_refused, now_ms)) {
        tell_refused(p, now_ms);
    }
    if (tally_due(&p->ack_timed_out, now_ms)) {
        tell_timed_out(p, now_ms);
    }
}

void partition_note_ack_timeout(struct partition *p, int64_t offset,
                                int64_t timeout_ms)
{
    struct partition_ack_tally *t = &p->ack_timed_out;
    t->held++;
    if (timeout_ms > t->longest_ms) {
        t->longest_ms = timeout_ms;
    }
    if (offset > t->offset) {
        t->offset = offset;
    }
    int64_t now_ms = now(p);
    if (tally_due(t, now_ms)) {
        tell_timed_out(p, now_ms);
    }
    want_check(p);
}

/* What every leader append checks before looking at the batch. */
static int check_leader(struct partition *p, int16_t acks)
{
    if (!partition_is_leader(p) || p->repair_until >= 0) {
        return RC_NOT_LEADER; /* repairing: it is leaving (repair.h) */
    }
    if (acks == -1 && !isr_enough_for_append(&p->repl)) {
        int64_t now_ms = now(p);
        p->ack_refused.held++;
        if (tally_due(&p->ack_refused, now_ms)) {
            tell_refused(p, now_ms);
        }
        want_check(p); /* what was held is told by a check */
        return RC_NOT_ENOUGH_REPLICAS;
    }
    return RC_OK;
}

/* Appends a batch whose header h is validated (and its records, for a
 * client's), after the producer window's check. */
static int append_validated(struct partition *p, uint8_t *batch, size_t len,
                            struct record_batch_header *h, int64_t now_ms,
                            struct log_append_info *info)
{
    struct producer_check chk;
    bool dup = false;
    int rv = check_producer(p, h, &chk, &dup);
    if (rv != RC_OK) {
        return rv;
    }
    if (dup) {
        return duplicate(p, &chk, info);
    }
    credit_sessions(p);
    rv = log_append_validated(p->log, batch, len, h, p->leader_epoch,
                              partition_wall_ms(p), info);
    if (rv != RC_OK) {
        return rv;
    }
    /* Recorded before durability: a retry of a write never acknowledged
     * is then answered as a duplicate, not written twice. */
    h->base_offset = info->base_offset;
    producer_state_record(&p->producers, h);
    p->host->wake(p->host->ctx, p); /* followers' parked fetches */
    if (p->sync_before_ack) {
        /* Written but never acknowledged if this fails: the producer
         * retries. */
        rv = log_wait_durable(p->log, info->last_offset + 1, durable_cb, p);
    } else {
        update_hw(p, now_ms, &hw_by_append);
    }
    want_check(p); /* the followers are behind the new log end */
    return rv;
}

int partition_append(struct partition *p, uint8_t *batch, size_t len,
                     int64_t now_ms, int16_t acks,
                     struct log_append_info *info)
{
    int rv = check_leader(p, acks);
    struct record_batch_header h;
    if (rv == RC_OK) {
        rv = record_batch_validate(batch, len, true, &h);
    }
    if (rv != RC_OK) {
        return rv;
    }
    return append_validated(p, batch, len, &h, now_ms, info);
}

/* Kafka's LogValidator on a client batch with a valid header, then the
 * maxTimestamp and timestamp type it stores. */
static int validate_records(struct partition *p, uint8_t *batch, size_t len,
                            struct record_batch_header *h, int64_t wall_ms,
                            struct record_validate_result *why)
{
    struct record_validator *validator = p->host->validator;
    int64_t max_ts = p->log_append_time ? wall_ms : h->max_timestamp;
    if (validator != NULL) {
        struct record_validate_config cfg = {
            .now_ms = wall_ms,
            .timestamp_before_max_ms = p->timestamp_before_max_ms,
            .timestamp_after_max_ms = p->timestamp_after_max_ms,
            .log_append_time = p->log_append_time,
            .inflated_bytes_max = RECORD_INFLATED_BYTES_MAX,
            .require_keys = p->compacted};
        int rv = record_validate(validator, batch, len, h, &cfg, why);
        if (rv != RC_OK) {
            return rv;
        }
        max_ts = why->max_timestamp;
    }
    (void)record_batch_set_max_timestamp(batch, h, p->log_append_time,
                                         max_ts);
    return RC_OK;
}

int partition_append_client(struct partition *p, uint8_t *batch, size_t len,
                            int64_t now_ms, int64_t wall_ms, int16_t acks,
                            struct log_append_info *info,
                            struct record_validate_result *why)
{
    *why = (struct record_validate_result){.max_timestamp = -1,
                                           .record_index = -1};
    int rv = check_leader(p, acks);
    struct record_batch_header h;
    if (rv == RC_OK) {
        rv = record_batch_validate(batch, len, true, &h);
    }
    if (rv == RC_OK) {
        rv = validate_records(p, batch, len, &h, wall_ms, why);
    }
    if (rv != RC_OK) {
        return rv;
    }
    return append_validated(p, batch, len, &h, now_ms, info);
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
    p->waiters[i] = (struct partition_waiter){offset, cb, arg, now(p)};
    p->n_waiters++;
    want_check(p);
    return RC_OK;
}

int partition_wait_durable(struct partition *p, int64_t offset,
                           partition_hw_cb cb, void *arg)
{
    return log_wait_durable(p->log, offset, cb, arg);
}

static void replay_cb(void *arg, const struct record_batch_header *h)
{
    producer_state_record(arg, h);
}

int partition_load_producers(struct partition *p, const char *dir)
{
    int64_t from = 0;
    int rv = log_found_at_open(p->log, LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE)
                 ? producer_state_load(&p->producers, dir, &from)
                 : RC_NOT_FOUND;
    if (rv != RC_OK || from > log_end_offset(p->log) ||
        from < log_start_offset(p->log)) {
        producer_state_clear(&p->producers);
        from = log_start_offset(p->log);
    }
    rv = log_for_each_batch(p->log, from, replay_cb, &p->producers);
    if (rv == RC_OK && from < log_end_offset(p->log)) {
        /* Batches were replayed: saved, so the next open starts there. A
         * snapshot already at the log end is not written again. */
        rv = producer_state_save(&p->producers, dir, log_end_offset(p->log));
    }
    return rv;
}

/* --- Leadership and ISR -------------------------------------------------- */

static void set_eligibility(struct partition *p, const struct meta_image *img)
{
    for (int32_t i = 0; i < p->repl.n_followers; i++) {
        int32_t id = p->repl.followers[i].id;
        const struct meta_broker *b = meta_image_broker(img, id);
        isr_set_eligible(&p->repl, id,
                         b != NULL && !b->fenced &&
                             !b->in_controlled_shutdown);
    }
}

/* acks=all requests still waiting fail once the committed ISR is below
 * min.insync.replicas: their writes are in the log but cannot be
 * acknowledged until the ISR recovers (the producer retries them). */
static void check_min_isr(struct partition *p)
{
    if (p->n_waiters > 0 && !isr_enough_for_append(&p->repl)) {
        partition_fail_waiters(p, RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    }
}

static void propose_isr(struct partition *p, const struct meta_replica_set *isr,
                        int64_t now_ms)
{
    isr_explain(&p->repl, isr, p->hw, now_ms, p->isr_why, sizeof p->isr_why);
    p->alter_in_flight = true;
    p->alter_sent_ms = now_ms;
    p->host->alter_isr(p->host->ctx, p, isr);
}

/* Sends again a change whose last answer could not say whether it was
 * applied; true when one went. */
static bool resend_pending(struct partition *p, int64_t now_ms)
{
    struct meta_replica_set isr;
    if (p->alter_in_flight ||
        now_ms - p->alter_sent_ms < PARTITION_ALTER_RETRY_MS ||
        !isr_pending_change(&p->repl, &isr)) {
        return false;
    }
    p->alter_in_flight = true;
    p->alter_sent_ms = now_ms;
    p->host->alter_isr(p->host->ctx, p, &isr);
    return true;
}

static void apply_metadata(struct partition *p, int32_t self,
                           const struct meta_partition *mp,
                           const struct meta_image *img, int32_t min_insync,
                           int64_t lag_max_ms, int64_t now_ms)
{
    bool same = mp->leader == p->leader &&
                mp->leader_epoch == p->leader_epoch;
    bool was_leader = p->leader == self;
    p->isr_prev = p->isr;
    p->replicas = mp->replicas;
    p->isr = mp->isr;
    p->partition_epoch = mp->partition_epoch;
    p->min_insync = min_insync;
    p->leader = mp->leader;
    p->leader_epoch = mp->leader_epoch;
    if (mp->leader == self) {
        if (!same) {
            int rv = log_assign_epoch(p->log, mp->leader_epoch);
            if (rv != RC_OK) { /* the log has failed, and says so */
                TRACE_ERROR(p->host->tracer, "partition=%s-%d epoch cache: "
                            "%s", p->topic, p->id, rc_str(rv));
            }
            isr_become_leader(&p->repl, self, mp, min_insync,
                              lag_max_ms, log_end_offset(p->log),
                              now_ms);
            p->alter_in_flight = false;
            p->follow = PARTITION_FOLLOW_NONE;
            p->hw_stalled = false; /* a new leader says so if it is */
        } else {
            isr_update_metadata(&p->repl, mp);
            p->repl.min_isr = min_insync < mp->replicas.n ? min_insync
                                                          : mp->replicas.n;
            p->repl.min_insync = min_insync;
        }
        p->isr = p->repl.isr; /* an AlterPartition answer may be newer */
        p->partition_epoch = p->repl.partition_epoch;
        set_eligibility(p, img);
        check_min_isr(p);
        update_hw(p, now_ms, &hw_by_isr);
        return;
    }
    if (was_leader) {
        partition_fail_waiters(p, RC_NOT_LEADER);
    }
    if (mp->leader == META_NO_LEADER) {
        p->follow = PARTITION_FOLLOW_NONE;
    } else if (!same || p->follow == PARTITION_FOLLOW_NONE) {
        p->follow = PARTITION_FOLLOW_TRUNCATE; /* KIP-101 */
    }
}

void partition_apply_metadata(struct partition *p, int32_t self,
                              const struct meta_partition *mp,
                              const struct meta_image *img,
                              int32_t min_insync, int64_t lag_max_ms,
                              int64_t now_ms)
{
    tally(p, -1);
    apply_metadata(p, self, mp, img, min_insync, lag_max_ms, now_ms);
    tally(p, 1);
    want_check(p);
}

int partition_replica_fetch(struct partition *p, int32_t replica_id,
                            int64_t fetch_offset, int64_t now_ms)
{
    if (!partition_is_leader(p)) {
        return RC_NOT_LEADER;
    }
    int rv = isr_follower_fetch(&p->repl, replica_id, fetch_offset,
                                log_end_offset(p->log), now_ms);
    if (rv != RC_OK) {
        return rv;
    }
    struct hw_move m = {HW_CAUSE_FETCH, replica_id, fetch_offset};
    update_hw(p, now_ms, &m);
    struct meta_replica_set isr;
    if (!resend_pending(p, now_ms) && !p->alter_in_flight &&
        isr_maybe_expand(&p->repl, p->hw, log_end_offset(p->log), now_ms,
                         &isr)) {
        propose_isr(p, &isr, now_ms);
    }
    want_check(p); /* a follower may have fallen back */
    return RC_OK;
}

bool partition_needs_isr_check(const struct partition *p)
{
    return (partition_is_leader(p) && !isr_quiet(p)) ||
           p->ack_refused.held > 0 || p->ack_timed_out.held > 0;
}

void partition_check_isr(struct partition *p, int64_t now_ms)
{
    tell_held(p, now_ms); /* also what a lost leadership left untold */
    if (!partition_is_leader(p)) {
        return;
    }
    struct meta_replica_set isr;
    int64_t leo = log_end_offset(p->log);
    if (!resend_pending(p, now_ms) && !p->alter_in_flight &&
        (isr_maybe_shrink(&p->repl, leo, now_ms, &isr) ||
         isr_maybe_expand(&p->repl, p->hw, leo, now_ms, &isr))) {
        /* An expansion is tried here too: a follower in a fetch session
         * that caught up while a change was in flight names the
         * partition again only when there is more to fetch. */
        propose_isr(p, &isr, now_ms);
    }
    update_hw(p, now_ms, &hw_by_check);
}

int partition_read(const struct partition *p, bool replica, int64_t offset,
                   int64_t max_bytes, struct log_span *span)
{
    return log_read(p->log, offset, max_bytes, replica ? INT64_MAX : p->hw,
                    span);
}

int partition_wait_acks(struct partition *p, int16_t acks,
                        int64_t last_offset, partition_hw_cb cb, void *arg,
                        bool *waiting)
{
    *waiting = false;
    int rv = RC_OK;
    if (acks == 1 && p->sync_before_ack &&
        log_durable_end_offset(p->log) <= last_offset) {
        rv = partition_wait_durable(p, last_offset + 1, cb, arg);
        *waiting = rv == RC_OK;
    } else if (acks == -1 && p->hw <= last_offset) {
        rv = partition_wait_hw(p, last_offset + 1, cb, arg);
        *waiting = rv == RC_OK;
    }
    return rv;
}

int16_t partition_check_reader(const struct partition *p,
                               int32_t current_leader_epoch,
                               int32_t replica_id)
{
    if (!partition_is_leader(p) || p->repair_until >= 0) {
        /* A leader that lacks records below its high watermark (cut to
         * repair, elected before it caught up) serves nobody: a follower
         * would truncate to its log, a consumer miss records. It is
         * handing the partition on (repair.h). */
        return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    }
    if (current_leader_epoch >= 0 && current_leader_epoch != p->leader_epoch) {
        return current_leader_epoch < p->leader_epoch
                   ? KAFKA_ERROR_FENCED_LEADER_EPOCH
                   : KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
    }
    if (replica_id >= 0 &&
        !meta_replica_set_contains(&p->replicas, replica_id)) {
        return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    }
    return KAFKA_ERROR_NONE;
}

enum partition_alter partition_alter_outcome(int16_t error)
{
    if (error == KAFKA_ERROR_NONE) {
        return PARTITION_ALTER_COMMITTED;
    }
    return error == KAFKA_ERROR_INELIGIBLE_REPLICA ||
                   error == KAFKA_ERROR_INVALID_REQUEST
               ? PARTITION_ALTER_REFUSED
               : PARTITION_ALTER_UNKNOWN;
}

static void alter_done(struct partition *p, enum partition_alter outcome,
                       const struct meta_replica_set *isr,
                       int32_t partition_epoch, int64_t now_ms)
{
    p->alter_in_flight = false;
    if (!partition_is_leader(p) || outcome == PARTITION_ALTER_UNKNOWN) {
        return;
    }
    p->isr_prev = p->isr;
    if (outcome == PARTITION_ALTER_REFUSED || isr == NULL) {
        isr_alter_done(&p->repl, false, &p->isr, p->partition_epoch);
    } else {
        isr_alter_done(&p->repl, true, isr, partition_epoch);
    }
    p->isr = p->repl.isr;
    p->partition_epoch = p->repl.partition_epoch;
    check_min_isr(p);
    update_hw(p, now_ms, &hw_by_isr);
}

void partition_alter_done(struct partition *p, enum partition_alter outcome,
                          const struct meta_replica_set *isr,
                          int32_t partition_epoch, int64_t now_ms)
{
    tally(p, -1);
    alter_done(p, outcome, isr, partition_epoch, now_ms);
    tally(p, 1);
    want_check(p);
}

/* --- Follower ------------------------------------------------------------ */

int partition_follower_append(struct partition *p, const uint8_t *records,
                              size_t len, int64_t leader_hw)
{
    size_t at = 0;
    while (at < len) {
        struct record_batch_header h;
        int rv = record_batch_parse(records + at, len - at, &h);
        if (rv == RC_SHORT) {
            break; /* a partial batch at the end of a fetch */
        }
        if (rv != RC_OK) {
            return rv;
        }
        size_t size = (size_t)record_batch_size(&h);
        if (size > len - at) {
            break;
        }
        if (record_batch_last_offset(&h) >= log_end_offset(p->log)) {
            struct log_append_info info;
            rv = log_append_replica(p->log, records + at, size,
                                    partition_wall_ms(p), &info);
            if (rv != RC_OK) {
                return rv;
            }
            if (p->host != NULL) { /* unit tests hold bare partitions */
                p->host->replication_bytes_in += size;
            }
            producer_state_record(&p->producers, &h);
        }
        at += size;
    }
    set_hw(p, follower_hw_after_append(p->hw, leader_hw,
                                       log_end_offset(p->log)));
    return RC_OK;
}

int partition_follower_restart(struct partition *p, int64_t offset)
{
    int rv = log_truncate_fully_and_start_at(p->log, offset);
    if (rv != RC_OK) {
        /* The log may have lost its segments: whatever it holds now, the
         * HW must not pass its end. */
        int64_t end = log_end_offset(p->log);
        if (p->hw > end) {
            set_hw(p, end);
        }
        return rv;
    }
    producer_state_clear(&p->producers);
    set_hw(p, offset);
    return RC_OK;
}

bool partition_follows(const struct partition *p, int32_t leader,
                       enum partition_follow want)
{
    return !p->closing && p->follow == want && p->leader == leader;
}

bool partition_fetch_offset_durable(const struct partition *p)
{
    return log_failure(p->log) == RC_OK &&
           (!p->sync_before_ack ||
            log_durable_end_offset(p->log) >= log_end_offset(p->log));
}

int partition_follower_truncate(struct partition *p, int64_t offset)
{
    /* Also at or past the log end: log_truncate_to() then drops an epoch
     * that holds no record. */
    int rv = log_truncate_to(p->log, offset);
    if (rv == RC_OK) {
        producer_state_truncate(&p->producers, log_end_offset(p->log));
    }
    /* Also after a failed cut (the log has failed and says so): the HW
     * never passes what the log holds. */
    if (p->hw > log_end_offset(p->log)) {
        set_hw(p, log_end_offset(p->log));
    }
    return rv;
}

enum partition_fetched partition_follower_fetched(struct partition *p,
                                                  int16_t error,
                                                  int64_t fetch_offset,
                                                  const uint8_t *records,
                                                  size_t len,
                                                  int64_t leader_hw,
                                                  int64_t leader_start)
{
    int rv = RC_OK;
    switch (follower_fetched_action(error, fetch_offset,
                                    log_end_offset(p->log), leader_start)) {
    case FOLLOWER_FETCHED_DROP:
        return PARTITION_FETCHED_DONE;
    case FOLLOWER_FETCHED_APPEND: {
        enum partition_fetched got = PARTITION_FETCHED_APPENDED;
        rv = partition_follower_append(p, records, records != NULL ? len : 0,
                                       leader_hw);
        if (rv == RC_INVALID) {
            p->follow = PARTITION_FOLLOW_TRUNCATE; /* the logs diverged */
            got = PARTITION_FETCHED_DIVERGED;
        } else if (rv != RC_OK) {
            TRACE_ERROR(p->host->tracer, "partition=%s-%d cannot append "
                        "fetched batches: %s", p->topic, p->id, rc_str(rv));
            got = PARTITION_FETCHED_FAILED;
        }
        partition_follow_log_start(p, leader_start);
        return got;
    }
    case FOLLOWER_FETCHED_RESTART:
        rv = partition_follower_restart(p, leader_start);
        if (rv != RC_OK) {
            TRACE_ERROR(p->host->tracer, "partition=%s-%d cannot restart at "
                        "the leader's log start %" PRId64 ": %s", p->topic,
                        p->id, leader_start, rc_str(rv));
            return PARTITION_FETCHED_PAUSE;
        }
        TRACE_INFO(p->host->tracer, "partition=%s-%d restarts at the "
                   "leader's log start %" PRId64, p->topic, p->id,
                   leader_start);
        return PARTITION_FETCHED_DONE;
    case FOLLOWER_FETCHED_TRUNCATE:
        p->follow = PARTITION_FOLLOW_TRUNCATE;
        return PARTITION_FETCHED_DONE;
    case FOLLOWER_FETCHED_PAUSE:
        return PARTITION_FETCHED_PAUSE;
    }
    return PARTITION_FETCHED_PAUSE;
}

bool partition_follower_epoch_end(struct partition *p, int32_t leader,
                                  int16_t error, int32_t leader_epoch,
                                  int64_t end_offset)
{
    if (error != KAFKA_ERROR_NONE) {
        return false;
    }
    int64_t end = log_end_offset(p->log);
    struct follower_truncation t = follower_truncation_for(
        log_epochs(p->log), end, p->hw, leader_epoch, end_offset);
    int rv = partition_follower_truncate(p, t.offset);
    if (rv != RC_OK) {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d cannot truncate to "
                    "%" PRId64 ": %s", p->topic, p->id, t.offset,
                    rc_str(rv));
        return false;
    }
    int64_t after = log_end_offset(p->log);
    if (after < end) {
        /* KIP-101/279: what this replica wrote past the leader's log of
         * that epoch was never committed and diverges; it goes. */
        TRACE_INFO(p->host->tracer, "event: %s-%d truncated %" PRId64 " -> %"
                   PRId64 " (leader %d says epoch %d ends at %" PRId64
                   "; this log diverged after that)%s", p->topic, p->id,
                   end, after, leader, leader_epoch, end_offset,
                   t.done ? "" : " (asking again)");
    } else {
        TRACE_INFO(p->host->tracer, "partition=%s-%d leader %d says epoch "
                   "%d ends at %" PRId64 "; log end %" PRId64 " kept%s",
                   p->topic, p->id, leader, leader_epoch, end_offset, end,
                   t.done ? "" : " (asking again)");
    }
    if (t.done) {
        p->follow = PARTITION_FOLLOW_FETCH;
    }
    return true;
}

/* --- Retention ----------------------------------------------------------- */

/* The event of a log start that moved from `from` (if it did). */
/* The log start moved: said, and parked fetches look again (a reader
 * below it is answered OFFSET_OUT_OF_RANGE, a session is told). */
static void start_moved(struct partition *p, int64_t from, const char *why)
{
    int64_t to = log_start_offset(p->log);
    if (to > from) {
        TRACE_INFO(p->host->tracer, "event: %s-%d log start %" PRId64
                   " -> %" PRId64 " (%s)", p->topic, p->id, from, to, why);
        p->host->wake(p->host->ctx, p);
    }
}

static void delete_segments(struct partition *p, size_t n, const char *why)
{
    int64_t from = log_start_offset(p->log);
    int rv = log_delete_oldest(p->log, n);
    start_moved(p, from, why);
    if (rv != RC_OK) {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d old segments not "
                    "deleted: %s", p->topic, p->id, rc_str(rv));
    }
}

void partition_apply_retention(struct partition *p, int64_t wall_ms)
{
    if (p->log == NULL || p->closing) {
        return;
    }
    unsigned why = 0;
    size_t n = log_retention_count(p->log, &p->retention, wall_ms, p->hw,
                                   &why);
    if (n == 0) {
        return;
    }
    int64_t size = log_size_bytes(p->log);
    char text[160];
    if (why == LOG_RETENTION_BY_TIME) {
        snprintf(text, sizeof text, "%zu segment%s older than retention.ms="
                 "%" PRId64, n, n == 1 ? "" : "s",
                 p->retention.retention_ms);
    } else if (why == LOG_RETENTION_BY_START) {
        snprintf(text, sizeof text, "%zu segment%s wholly below the log "
                 "start offset", n, n == 1 ? "" : "s");
    } else if (why == LOG_RETENTION_BY_SIZE) {
        snprintf(text, sizeof text, "%zu segment%s over retention.bytes=%"
                 PRId64 ": the log held %" PRId64 " bytes", n,
                 n == 1 ? "" : "s", p->retention.retention_bytes, size);
    } else {
        snprintf(text, sizeof text, "%zu segments past retention.ms=%" PRId64
                 " and retention.bytes=%" PRId64, n,
                 p->retention.retention_ms, p->retention.retention_bytes);
    }
    delete_segments(p, n, text);
}

void partition_follow_log_start(struct partition *p, int64_t leader_start)
{
    if (p->log == NULL || leader_start <= log_start_offset(p->log)) {
        return;
    }
    int64_t upto = leader_start < p->hw ? leader_start : p->hw;
    int64_t from = log_start_offset(p->log);
    int rv = log_advance_start(p->log, upto);
    char why[64];
    snprintf(why, sizeof why, "following the leader's log start %" PRId64,
             leader_start);
    start_moved(p, from, why);
    if (rv != RC_OK) {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d log start not moved "
                    "to %" PRId64 ": %s", p->topic, p->id, upto, rc_str(rv));
    }
}

int partition_delete_records(struct partition *p, int64_t offset,
                             int64_t *low_watermark)
{
    if (!partition_is_leader(p)) {
        return RC_NOT_LEADER;
    }
    if (offset == -1) {
        offset = p->hw; /* Kafka: -1 deletes up to the high watermark */
    }
    if (offset < 0 || offset > p->hw) {
        return RC_OUT_OF_RANGE;
    }
    int64_t from = log_start_offset(p->log);
    int rv = log_advance_start(p->log, offset);
    *low_watermark = log_start_offset(p->log);
    start_moved(p, from, "DeleteRecords");
    return rv;
}

/* --- Compaction ---------------------------------------------------------- */

static void cleaned_cb(void *arg, const struct log_clean_result *r)
{
    struct partition_clean *c = arg;
    struct partition *p = c->p;
    if (r->rc == RC_OK && r->segments > 0) {
        TRACE_INFO(p->host->tracer, "event: %s-%d compacted %zu segment%s "
                   "below offset %" PRId64 ", %" PRId64 " -> %" PRId64
                   " bytes: %zu superseded records and %zu tombstones gone, "
                   "%zu keys (dirty ratio %.2f, min.cleanable.dirty.ratio="
                   "%.2f)", p->topic, p->id, r->segments,
                   r->segments == 1 ? "" : "s", r->to, r->bytes_before,
                   r->bytes_after, r->records_dropped, r->tombstones_dropped,
                   r->keys, c->ratio, p->clean.min_dirty_ratio);
    } else if (r->rc != RC_OK && r->rc != RC_BUSY) {
        TRACE_WARN(p->host->tracer, "partition=%s-%d compaction failed: %s",
                   p->topic, p->id, rc_str(r->rc));
    }
    if (c->done != NULL) {
        c->done(c->arg);
    }
}

int partition_start_clean(struct partition *p, int64_t wall_ms,
                          struct partition_clean *c)
{
    double ratio = 0;
    if (!p->compacted || p->log == NULL || p->closing ||
        !log_clean_due(p->log, &p->clean, wall_ms, p->hw, &ratio)) {
        return RC_NOT_FOUND;
    }
    c->p = p;
    c->ratio = ratio;
    /* Each idempotent producer's newest batch keeps its last record. */
    size_t n = producer_state_count(&p->producers);
    int64_t *last = n > 0 ? malloc(n * sizeof *last) : NULL;
    if (n > 0 && last == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct producer_entry *e = &p->producers.entries[i];
        last[i] = e->batches[e->n_batches - 1].last_offset;
    }
    int rv = log_clean_start(p->log, &p->clean, wall_ms, p->hw, last, n,
                             cleaned_cb, c);
    free(last);
    return rv;
}
