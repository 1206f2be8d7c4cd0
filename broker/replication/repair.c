/* Repair of a damaged partition log (broker/replication/repair.h). Loop
 * thread only. */
#include "broker/replication/repair.h"

#include <inttypes.h>

#include "broker/log/log_verify.h"
#include "broker/replication/partition.h"
#include "broker/replication/replica_manager.h"
#include "common/rc.h"

static bool follows(const struct partition *p)
{
    return !p->closing && p->leader >= 0 && p->leader != p->host->self &&
           p->follow != PARTITION_FOLLOW_NONE;
}

/* A follower cuts its log at offset; the fetcher then asks the leader
 * for the rest (a fetch in flight is dropped: its offset is no longer
 * the log end). */
static void truncate_follower(struct partition *p, int64_t offset)
{
    int64_t end = log_end_offset(p->log);
    int64_t hw = p->hw;
    int rv = partition_follower_truncate(p, offset);
    if (rv != RC_OK) {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d cannot truncate to %" PRId64
                    " before a corrupt batch: %s", p->topic, p->id, offset,
                    rc_str(rv));
        return;
    }
    p->corrupt_offset = -1;
    p->scrub_offset = offset;
    p->cut_to_repair = true;
    p->left_confirmed = false; /* damage found later asks again */
    p->cut_partition_epoch = p->partition_epoch;
    if (hw > offset && hw > p->repair_until) {
        p->repair_until = hw;
    }
    TRACE_INFO(p->host->tracer, "event: %s-%d truncated %" PRId64 " -> %" PRId64
               " (a corrupt batch at %" PRId64 "; fetching it again from "
               "leader %d)", p->topic, p->id, end, log_end_offset(p->log),
               offset, p->leader);
}

/* Asks the controller to take p out of its ISR (and its leadership, if it
 * leads), at most once per REPAIR_ASK_EVERY_MS. */
static void ask_to_leave(struct partition *p, const char *role)
{
    const struct partition_host *h = p->host;
    if (h->leave_isr == NULL) {
        return;
    }
    int64_t now = h->now_ms(h->ctx);
    if (p->corrupt_asked_ms > 0 &&
        now - p->corrupt_asked_ms < REPAIR_ASK_EVERY_MS) {
        return;
    }
    p->corrupt_asked_ms = now;
    if (p->corrupt_offset >= 0) {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d offset=%" PRId64 " corrupt "
                    "batch on the %s: asking the controller to take this "
                    "replica out of the ISR%s before it repairs", p->topic,
                    p->id, p->corrupt_offset, role,
                    partition_is_leader(p) ? " and move leadership" : "");
    } else {
        TRACE_ERROR(p->host->tracer, "partition=%s-%d the %s is in the ISR while "
                    "it lacks records below offset=%" PRId64 " (cut to "
                    "repair): asking the controller to take it out%s",
                    p->topic, p->id, role, p->repair_until,
                    partition_is_leader(p) ? " and move leadership" : "");
    }
    h->leave_isr(h->ctx, p, p->corrupt_offset);
}

static bool in_isr(const struct partition *p)
{
    return meta_replica_set_contains(&p->isr, p->host->self);
}

/* Whether p still lacks records below the high watermark it had when it
 * cut its log to repair (clears the mark once it has them again). */
static bool repairing(struct partition *p)
{
    if (p->repair_until >= 0 && log_end_offset(p->log) >= p->repair_until) {
        p->repair_until = -1;
    }
    return p->repair_until >= 0;
}

void repair_log_corrupt(struct partition *p, int64_t offset)
{
    if (p->corrupt_offset < 0 || offset < p->corrupt_offset) {
        p->corrupt_offset = offset;
    }
    if (follows(p)) {
        /* The fetcher asks to leave the ISR, then truncates, each when
         * no fetch of p is in flight (repair_follower_ready()). */
        if (p->host->follower_damaged != NULL) {
            p->host->follower_damaged(p->host->ctx, p);
        }
        return;
    }
    if (!partition_is_leader(p)) {
        return; /* offline: the damage stays recorded for later */
    }
    ask_to_leave(p, "leader");
}

/* Whether the controller's answer covers the state p's image is in: same
 * leadership, image at least as new as the answer. */
static bool left_now(const struct partition *p)
{
    return p->left_confirmed && p->left_leader_epoch == p->leader_epoch &&
           p->partition_epoch >= p->left_partition_epoch;
}

/* Whether the image has yet to reach the state the controller answered
 * with (asking again meanwhile would be refused as stale). */
static bool left_ahead(const struct partition *p)
{
    return p->left_confirmed &&
           (p->left_leader_epoch > p->leader_epoch ||
            (p->left_leader_epoch == p->leader_epoch &&
             p->partition_epoch < p->left_partition_epoch));
}

bool repair_follower_ready(struct partition *p)
{
    if (p->corrupt_offset < 0) {
        if (repairing(p) && in_isr(p)) {
            /* Back in the ISR on a fetch sent before it cut its log (a
             * late one): out again, while it catches up. */
            ask_to_leave(p, "follower");
        }
        return true;
    }
    if (in_isr(p) || !left_now(p)) {
        /* Cut now, it could be elected leader without records the ISR
         * promised: first out of the ISR, as the controller has it, not
         * as this image says. Asked with no fetch of p in flight and
         * none sent until it is out, so the leader cannot take it back
         * on what it fetched before. */
        if (!left_ahead(p)) {
            ask_to_leave(p, "follower");
        }
        return false;
    }
    truncate_follower(p, p->corrupt_offset);
    return p->corrupt_offset < 0;
}

void repair_left_isr(struct partition *p, int32_t leader_epoch,
                     int32_t partition_epoch)
{
    if (p->corrupt_offset < 0 || partition_epoch <= p->cut_partition_epoch) {
        /* Nothing to cut, or an answer to an ask made before the last
         * cut: it may have fetched since, so only a newer state (the
         * controller bumps the epoch for each ask) lets it cut again. */
        return;
    }
    if (p->left_confirmed &&
        (p->left_leader_epoch > leader_epoch ||
         (p->left_leader_epoch == leader_epoch &&
          p->left_partition_epoch >= partition_epoch))) {
        return; /* a newer answer came first */
    }
    p->left_confirmed = true;
    p->left_leader_epoch = leader_epoch;
    p->left_partition_epoch = partition_epoch;
}

void repair_after_fetch(struct partition *p, int64_t leader_hw)
{
    if (!p->cut_to_repair || !in_isr(p)) {
        return;
    }
    if (leader_hw <= log_end_offset(p->log)) {
        p->cut_to_repair = false; /* back, with every record it owes */
        return;
    }
    if (leader_hw > p->repair_until) {
        p->repair_until = leader_hw;
    }
    ask_to_leave(p, "follower");
}

void repair_after_metadata(struct partition *p)
{
    p->corrupt_asked_ms = 0; /* a new state: ask again at once if need be */
    if (p->corrupt_offset < 0 && repairing(p) && in_isr(p)) {
        /* In the ISR, or elected, while it lacks records the ISR
         * promised: out again (elected, it takes no writes meanwhile,
         * partition.c). */
        ask_to_leave(p, partition_is_leader(p) ? "leader" : "follower");
        return;
    }
    if (p->corrupt_offset < 0) {
        return;
    }
    if (follows(p) || partition_is_leader(p)) {
        repair_log_corrupt(p, p->corrupt_offset); /* found at open */
    }
}

int64_t repair_check_read(struct partition *p, const struct log_span *span,
                          uint8_t *buf, size_t cap, struct log_verify *v)
{
    if (log_verify_span(span, buf, cap, v) == RC_OK) {
        return span->bytes;
    }
    if (v->rc != RC_IO) {
        repair_log_corrupt(p, v->stop_offset);
    }
    return v->intact_bytes > 0 ? v->intact_bytes : -1;
}

int64_t repair_scrub_partition(struct partition *p, uint8_t *buf, size_t cap,
                               int64_t budget, bool *pass_done, int *read_rc)
{
    int64_t start = log_start_offset(p->log);
    int64_t end = log_end_offset(p->log);
    *pass_done = true;
    *read_rc = RC_OK;
    if (p->scrub_offset < start || p->scrub_offset >= end) {
        p->scrub_offset = start; /* a new pass from the start */
    }
    if (start >= end) {
        return 0;
    }
    struct log_span span;
    int rv = log_read(p->log, p->scrub_offset, budget, end, &span);
    if (rv != RC_OK || span.bytes == 0) {
        log_span_release(&span);
        p->scrub_offset = start;
        return 0;
    }
    struct log_verify v;
    rv = log_verify_span(&span, buf, cap, &v);
    int64_t bytes = span.bytes;
    log_span_release(&span);
    if (rv == RC_OK) {
        /* A pass that reached the end starts over at the log start next
         * time, even if records came meanwhile: else, on a partition
         * written faster than the scrub's turns, each pass would read
         * only the newest records and never the old ones again. */
        *pass_done = v.stop_offset >= end;
        p->scrub_offset = *pass_done ? start : v.stop_offset;
        return bytes;
    }
    TRACE_ERROR(p->host->tracer, "partition=%s-%d offset=%" PRId64
                " segment=%s/%020" PRId64 ".log position=%" PRId64
                " found by the scrub: %s", p->topic, p->id, v.stop_offset,
                v.dir, v.segment_base, v.bad_position, rc_str(v.rc));
    if (rv != RC_IO) {
        repair_log_corrupt(p, v.stop_offset);
    } else {
        *read_rc = rv;
    }
    p->scrub_offset = start; /* the next pass starts over */
    return bytes;
}

/* Each partition is read through to its end (a span is one segment at
 * most, so that takes several reads) before the next one's turn; every
 * read either uses budget or ends a pass, so the loop ends. */
void repair_scrub(struct replica_manager *ps, int64_t budget_bytes)
{
    size_t passes = 0;
    while (ps->n > 0 && budget_bytes > 0 && passes < ps->n &&
           passes < REPAIR_SCRUB_VISITS_MAX) {
        struct partition *p = ps->parts[ps->scrub_next % ps->n];
        bool pass_done = true;
        int read_rc = RC_OK;
        int64_t used = 0;
        if (!p->closing) {
            used = repair_scrub_partition(p, ps->scrub_buf,
                                          REPLICA_SCRUB_BUFFER_BYTES,
                                          budget_bytes, &pass_done,
                                          &read_rc);
        }
        if (read_rc != RC_OK) {
            replica_manager_io_failed(ps, p, read_rc, "a read");
        }
        budget_bytes -= used;
        if (pass_done || used == 0) {
            ps->scrub_next = (ps->scrub_next + 1) % ps->n;
            passes++;
        }
    }
}
