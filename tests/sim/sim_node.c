/* Simulated brokers (tests/sim/sim.h): the log and its disk, the leader as
 * broker/replication/partition.c drives the ISR core (HW from the durable
 * log end, acks=all waiters, min-ISR checks, AlterPartition), the follower
 * as broker/replication/follower.c behaves (OffsetForLeaderEpoch and
 * follower_truncation_for() first, then Fetch; append; fdatasync before the next
 * fetch), metadata applied as partition_apply_metadata() does. One thread;
 * time comes from the world. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "tests/sim/sim.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* --- Log and disk -------------------------------------------------------- */

/* Appends r: its frame to the file, then the record to the log; false
 * (and the log dir offline) when the write failed. */
static bool log_append(struct sim_world *w, struct sim_node *n,
                       struct sim_record r)
{
    if (!sim_disk_write(w, n, n->n, &r)) {
        sim_node_dir_failed(w, n, "write");
        return false;
    }
    if (n->n == n->cap) {
        n->cap = n->cap == 0 ? 256 : n->cap * 2;
        n->log = realloc(n->log, (size_t)n->cap * sizeof *n->log);
        ASSERT(n->log != NULL);
    }
    n->log[n->n++] = r;
    sim_offsets_reserve(w, n->n);
    /* log.c: a batch of a newer epoch starts that epoch in the cache. */
    if (r.epoch > log_epoch_latest(&n->epochs)) {
        bool changed = false;
        ASSERT(log_epoch_assign(&n->epochs, r.epoch, n->n - 1, &changed) ==
               RC_OK);
    }
    return true;
}

void sim_node_truncate(struct sim_world *w, struct sim_node *n, int64_t end)
{
    (void)w;
    if (end >= n->n) {
        /* log.c's log_truncate_to(): no record goes, but an epoch that
         * starts at the log end (it holds none) does. */
        (void)log_epoch_truncate_from_end(&n->epochs, n->n);
        return;
    }
    ASSERT(end >= 0);
    if (n->dir_failed) {
        return; /* exiting: its file keeps what it has */
    }
    if (n->up && !sim_disk_truncate(n, end)) {
        /* The cut may not be durable: the file keeps the records for the
         * recovery after the exit to find. */
        sim_node_dir_failed(w, n, "ftruncate");
        return;
    }
    if (w->damaged_from[n->idx] >= end) {
        w->damaged_from[n->idx] = -1; /* the damaged frame is cut away */
    }
    n->n = end;
    n->durable = min64(n->durable, end);
    n->recovery_point = min64(n->recovery_point, end);
    n->scrub_offset = min64(n->scrub_offset, end);
    if (n->corrupt_offset >= end) {
        n->corrupt_offset = -1;
    }
    n->sync_target = min64(n->sync_target, end);
    (void)log_epoch_truncate_from_end(&n->epochs, end);
    n->hw = min64(n->hw, end);
    n->hw_checked = min64(n->hw_checked, end);
    n->acks_checked = min64(n->acks_checked, end);
}

/* fdatasync of everything written so far; one at a time, as the real log
 * coalesces them. */
static void request_sync(struct sim_world *w, struct sim_node *n)
{
    if (n->sync_busy || n->durable >= n->n || n->dir_failed) {
        return;
    }
    n->sync_busy = true;
    n->sync_target = n->n;
    struct sim_event ev = {.type = SIM_EV_SYNC_DONE, .node = n->idx,
                           .incarnation = n->incarnation,
                           .at_ms = w->now_ms + sim_rand_range(w, 1, 15)};
    sim_schedule(w, &ev);
}

/* --- Leader -------------------------------------------------------------- */

static void reply(struct sim_world *w, const struct sim_msg *rq,
                  struct sim_msg *rsp)
{
    rsp->from = rq->to;
    rsp->to = rq->from;
    rsp->req = rq->req;
    sim_send(w, rsp);
}

static void answer_produce(struct sim_world *w, struct sim_node *n,
                           const struct sim_waiter *wt, enum sim_err err)
{
    struct sim_msg m = {.type = SIM_MSG_PRODUCE_RSP, .from = n->idx,
                        .to = SIM_PRODUCER, .req = wt->req, .err = err,
                        .offset = wt->offset - 1};
    sim_send(w, &m);
}

static void fail_waiters(struct sim_world *w, struct sim_node *n,
                         enum sim_err err)
{
    for (size_t i = 0; i < n->n_waiters; i++) {
        answer_produce(w, n, &n->waiters[i], err);
    }
    n->n_waiters = 0;
}

static void fire_waiters(struct sim_world *w, struct sim_node *n)
{
    size_t done = 0;
    while (done < n->n_waiters && n->waiters[done].offset <= n->hw) {
        answer_produce(w, n, &n->waiters[done], SIM_OK);
        done++;
    }
    if (done == 0) {
        return; /* also: waiters may be NULL while none ever waited */
    }
    memmove(n->waiters, n->waiters + done,
            (n->n_waiters - done) * sizeof *n->waiters);
    n->n_waiters -= done;
}

/* partition.c update_hw(): the durable end counts (log.sync.before.ack),
 * and the HW never goes back. */
static void update_hw(struct sim_world *w, struct sim_node *n)
{
    if (!n->leading) {
        return;
    }
    int64_t hw = isr_hw_candidate(&n->isr, n->durable, w->now_ms);
    if (hw > n->hw) {
        sim_trace(w, "node %d hw %lld -> %lld", n->id, (long long)n->hw,
                  (long long)hw);
        n->hw = hw;
        fire_waiters(w, n);
    }
}

static void check_min_isr(struct sim_world *w, struct sim_node *n)
{
    if (n->n_waiters > 0 && !isr_enough_for_append(&n->isr)) {
        fail_waiters(w, n, SIM_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    }
}

static void propose_isr(struct sim_world *w, struct sim_node *n,
                        const struct meta_replica_set *isr)
{
    n->alter_in_flight = true;
    n->alter_req = sim_new_req(w);
    struct sim_msg m = {.type = SIM_MSG_ALTER, .from = n->idx,
                        .to = SIM_CONTROLLER, .req = n->alter_req,
                        .broker_epoch = n->broker_epoch,
                        .epoch = n->isr.leader_epoch,
                        .partition_epoch = n->isr.partition_epoch,
                        .isr = *isr};
    sim_trace(w, "node %d proposes isr of %d at pe %d", n->id, isr->n,
              n->isr.partition_epoch);
    sim_send(w, &m);
    sim_node_timer(w, n, SIM_TIMER_ALTER_TIMEOUT, n->alter_req,
                   SIM_ALTER_TIMEOUT_MS);
}

static void alter_done(struct sim_world *w, struct sim_node *n, bool ok,
                       const struct meta_replica_set *isr, int32_t pe)
{
    n->alter_in_flight = false;
    n->alter_req = 0;
    if (!n->leading) {
        return;
    }
    if (ok) {
        isr_alter_done(&n->isr, true, isr, pe);
    } else {
        isr_alter_done(&n->isr, false, &n->isr.isr, n->isr.partition_epoch);
    }
    check_min_isr(w, n);
    update_hw(w, n);
}

/* The Kafka error a simulated answer stands for, as follower.c sees it. */
static int16_t sim_kafka_error(enum sim_err err)
{
    switch (err) {
    case SIM_OK: return KAFKA_ERROR_NONE;
    case SIM_NOT_LEADER: return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    case SIM_FENCED_LEADER_EPOCH: return KAFKA_ERROR_FENCED_LEADER_EPOCH;
    case SIM_UNKNOWN_LEADER_EPOCH: return KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
    case SIM_OUT_OF_RANGE: return KAFKA_ERROR_OFFSET_OUT_OF_RANGE;
    case SIM_NOT_ENOUGH_REPLICAS: return KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    case SIM_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
    case SIM_STORAGE_ERROR: return KAFKA_ERROR_KAFKA_STORAGE_ERROR;
    case SIM_REFUSED: break;
    }
    return KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
}

static void found_corrupt(struct sim_world *w, struct sim_node *n,
                          int64_t offset);
static bool repairing(struct sim_node *n);
static bool in_isr(const struct sim_node *n);
static void ask_to_leave(struct sim_world *w, struct sim_node *n);

/* Reads records [from, end) into rsp through the disk, as a Fetch does
 * with every batch checked (broker/log/log_verify.c): never past a
 * corrupt frame. False when the read failed (the log dir is offline). */
static bool read_records(struct sim_world *w, struct sim_node *n,
                         int64_t from, int64_t end, struct sim_msg *rsp)
{
    if (n->corrupt_offset >= 0) {
        end = min64(end, n->corrupt_offset);
    }
    for (int64_t o = from; o < end && rsp->n_recs < SIM_FETCH_RECORDS_MAX;
         o++) {
        struct sim_record r;
        int rv = sim_disk_read(w, n, o, &r);
        if (rv == RC_IO) {
            sim_node_dir_failed(w, n, "read");
            return false;
        }
        if (rv == RC_CORRUPT) {
            found_corrupt(w, n, o);
            break;
        }
        if (r.epoch != n->log[o].epoch || r.value != n->log[o].value) {
            sim_fail(w, "node %d served corrupt bytes at offset %lld: "
                     "value %lld epoch %d, it wrote value %lld epoch %d",
                     n->id, (long long)o, (long long)r.value, r.epoch,
                     (long long)n->log[o].value, n->log[o].epoch);
            return false;
        }
        rsp->recs[rsp->n_recs++] = r;
    }
    return true;
}

static void answer_fetch(struct sim_world *w, struct sim_node *n, int f,
                         enum sim_err err)
{
    const struct sim_msg *rq = &n->parked_fetch[f];
    struct sim_msg rsp = {.type = SIM_MSG_FETCH_RSP, .err = err,
                          .hw = n->hw};
    n->parked[f] = false;
    if (err == SIM_OK && !read_records(w, n, rq->offset, n->n, &rsp)) {
        return; /* the broker is going down: no answer */
    }
    rsp.offset = rq->offset;
    reply(w, rq, &rsp);
}

/* A consumer's Fetch: committed records only (below the HW). */
static void on_consume(struct sim_world *w, struct sim_node *n,
                       const struct sim_msg *m)
{
    struct sim_msg rsp = {.type = SIM_MSG_CONSUME_RSP, .hw = n->hw,
                          .offset = m->offset};
    if (!n->leading) {
        rsp.err = SIM_NOT_LEADER;
    } else if (m->offset > n->hw) {
        rsp.err = SIM_OUT_OF_RANGE;
    } else if (!read_records(w, n, m->offset, n->hw, &rsp)) {
        return;
    }
    reply(w, m, &rsp);
}

static void answer_parked(struct sim_world *w, struct sim_node *n,
                          enum sim_err err)
{
    for (int f = 0; f < SIM_NODES; f++) {
        if (n->parked[f]) {
            answer_fetch(w, n, f, err);
        }
    }
}

static enum sim_err epoch_error(const struct sim_node *n, int32_t epoch)
{
    if (!n->leading) {
        return SIM_NOT_LEADER;
    }
    if (epoch < n->isr.leader_epoch) {
        return SIM_FENCED_LEADER_EPOCH;
    }
    if (epoch > n->isr.leader_epoch) {
        return SIM_UNKNOWN_LEADER_EPOCH;
    }
    return SIM_OK;
}

/* kafka_fetch.c: record the follower's fetch (HW, ISR expansion), then
 * answer at once when there are records, else park until an append or
 * the wait maximum. */
static void on_fetch(struct sim_world *w, struct sim_node *n,
                     const struct sim_msg *m)
{
    int f = m->from;
    n->parked_fetch[f] = *m;
    enum sim_err err = epoch_error(n, m->epoch);
    if (err != SIM_OK) {
        answer_fetch(w, n, f, err);
        return;
    }
    int rv = isr_follower_fetch(&n->isr, f + 1, m->offset, n->n, w->now_ms);
    if (rv == RC_OUT_OF_RANGE) {
        answer_fetch(w, n, f, SIM_OUT_OF_RANGE);
        return;
    }
    ASSERT(rv == RC_OK);
    update_hw(w, n);
    struct meta_replica_set isr;
    if (!n->alter_in_flight &&
        isr_maybe_expand(&n->isr, n->hw, n->n, w->now_ms, &isr)) {
        propose_isr(w, n, &isr);
    }
    if (m->offset < n->n) {
        answer_fetch(w, n, f, SIM_OK);
        return;
    }
    n->parked[f] = true;
    n->park_token[f] = sim_new_req(w);
    sim_node_timer(w, n, SIM_TIMER_PARK, n->park_token[f] * 4 + f,
                   SIM_FETCH_WAIT_MAX_MS);
}

static void on_epoch(struct sim_world *w, struct sim_node *n,
                     const struct sim_msg *m)
{
    struct sim_msg rsp = {.type = SIM_MSG_EPOCH_RSP,
                          .err = epoch_error(n, m->epoch), .epoch = -1,
                          .offset = -1};
    if (rsp.err == SIM_OK) {
        log_epoch_end_offset_for(&n->epochs, m->last_epoch, n->n,
                                 &rsp.epoch, &rsp.offset);
    }
    reply(w, m, &rsp);
}

static void add_waiter(struct sim_node *n, int64_t offset, int64_t req)
{
    if (n->n_waiters == n->cap_waiters) {
        n->cap_waiters = n->cap_waiters == 0 ? 16 : n->cap_waiters * 2;
        n->waiters = realloc(n->waiters,
                             n->cap_waiters * sizeof *n->waiters);
        ASSERT(n->waiters != NULL);
    }
    n->waiters[n->n_waiters++] = (struct sim_waiter){offset, req};
}

/* partition_append() with acks=all, then partition_wait_hw(). */
static void on_produce(struct sim_world *w, struct sim_node *n,
                       const struct sim_msg *m)
{
    struct sim_msg rsp = {.type = SIM_MSG_PRODUCE_RSP, .offset = -1};
    if (!n->leading || repairing(n)) {
        rsp.err = SIM_NOT_LEADER;
    } else if (!isr_enough_for_append(&n->isr)) {
        rsp.err = SIM_NOT_ENOUGH_REPLICAS;
    }
    if (rsp.err != SIM_OK) {
        reply(w, m, &rsp);
        return;
    }
    int64_t offset = n->n;
    if (!log_append(w, n,
                    (struct sim_record){n->isr.leader_epoch, m->value})) {
        rsp.err = SIM_STORAGE_ERROR; /* nothing of it is kept */
        reply(w, m, &rsp);
        return;
    }
    sim_trace(w, "node %d appends value %lld at %lld epoch %d", n->id,
              (long long)m->value, (long long)offset, n->isr.leader_epoch);
    add_waiter(n, offset + 1, m->req);
    answer_parked(w, n, SIM_OK);
    request_sync(w, n);
}

static void on_alter_rsp(struct sim_world *w, struct sim_node *n,
                         const struct sim_msg *m)
{
    if (!n->alter_in_flight || m->req != n->alter_req) {
        return; /* timed out already: the call answered once */
    }
    if (!n->leading || m->epoch != n->isr.leader_epoch) {
        n->alter_in_flight = false;
        return;
    }
    alter_done(w, n, m->err == SIM_OK, &m->isr, m->partition_epoch);
}

/* --- Follower ------------------------------------------------------------ */

static void send_next(struct sim_world *w, struct sim_node *n);
static bool follower_ready(struct sim_world *w, struct sim_node *n);

/* A fresh follower session (broker/replication/follower_session.c),
 * idle and disconnected, with the simulation's timings. */
static void session_init(struct sim_node *n)
{
    struct follower_session_config cfg = {
        .backoff_ms = SIM_BACKOFF_MS,
        .reconnect_max_ms = SIM_RECONNECT_MAX_MS,
        .jitter_seed = (uint64_t)n->id * 0x9e3779b97f4a7c15u,
        .connect_timeout_ms = SIM_REQUEST_TIMEOUT_MS,
        .request_timeout_ms = SIM_REQUEST_TIMEOUT_MS,
        .partition_max_bytes = 1 << 20,
        .response_max_bytes = 10 << 20,
    };
    follower_session_init(&n->session, &cfg);
}

/* A timer at the session's deadline; stale ones tick harmlessly. */
static void session_timer(struct sim_world *w, struct sim_node *n)
{
    int64_t d = follower_session_deadline(&n->session);
    if (d != FOLLOWER_SESSION_NO_DEADLINE) {
        sim_node_timer(w, n, SIM_TIMER_SESSION, 0,
                       d > w->now_ms ? d - w->now_ms : 0);
    }
}

static void fetcher_send(struct sim_world *w, struct sim_node *n,
                         struct sim_msg *m)
{
    n->fetch_req = sim_new_req(w);
    m->from = n->idx;
    m->to = n->meta.part.leader - 1;
    m->req = n->fetch_req;
    m->epoch = n->meta.part.leader_epoch;
    sim_send(w, m);
    session_timer(w, n);
}

static bool in_flight(const struct sim_node *n, const struct sim_msg *m)
{
    return n->session.state == FOLLOWER_SESSION_IN_FLIGHT &&
           m->req == n->fetch_req;
}

/* follower.c drive()/collect(): truncate first (no epoch to ask about:
 * to the HW), then fetch at the log end. */
static void send_next(struct sim_world *w, struct sim_node *n)
{
    if (!n->up || n->leading ||
        n->session.state != FOLLOWER_SESSION_IDLE ||
        n->follow == PARTITION_FOLLOW_NONE) {
        return;
    }
    if (!follower_ready(w, n)) {
        sim_node_timer(w, n, SIM_TIMER_SESSION, 0, SIM_BACKOFF_MS);
        return; /* held: asked again after the pause */
    }
    if (n->follow == PARTITION_FOLLOW_TRUNCATE &&
        !follower_asks_epochs(&n->epochs)) {
        sim_node_truncate(w, n, n->hw);
        n->follow = PARTITION_FOLLOW_FETCH;
    }
    enum follower_want want = n->follow == PARTITION_FOLLOW_TRUNCATE
                                  ? FOLLOWER_WANT_EPOCHS
                                  : FOLLOWER_WANT_FETCH;
    enum follower_step step =
        follower_session_next(&n->session, want, w->now_ms);
    if (step == FOLLOWER_STEP_CONNECT) {
        /* No connections are modelled: one is up at once. */
        follower_session_connected(&n->session);
        step = follower_session_next(&n->session, want, w->now_ms);
    }
    if (step != FOLLOWER_STEP_SEND_EPOCHS &&
        step != FOLLOWER_STEP_SEND_FETCH) {
        session_timer(w, n);
        return;
    }
    struct sim_msg m = {0};
    if (step == FOLLOWER_STEP_SEND_EPOCHS) {
        m.type = SIM_MSG_EPOCH;
        m.last_epoch = log_epoch_latest(&n->epochs);
    } else {
        m.type = SIM_MSG_FETCH;
        m.offset = n->n;
        n->fetch_offset_sent = n->n;
    }
    fetcher_send(w, n, &m);
}

/* The answer in flight was taken: on to durability, a pause or the next
 * request, as the session says. */
static void answered(struct sim_world *w, struct sim_node *n, bool errors,
                     int pending_syncs, bool was_fetch)
{
    follower_session_answered(&n->session, errors, pending_syncs, 0,
                              was_fetch, w->now_ms);
    session_timer(w, n);
    send_next(w, n);
}

/* partition_follower_append(): records at or past the log end, then the
 * HW the follower rules give. */
static void follower_append(struct sim_world *w, struct sim_node *n,
                            const struct sim_msg *m)
{
    for (int i = 0; i < m->n_recs; i++) {
        int64_t o = m->offset + i;
        if (o >= n->n) {
            ASSERT(o == n->n);
            if (!log_append(w, n, m->recs[i])) {
                return;
            }
        }
    }
    n->hw = follower_hw_after_append(n->hw, m->hw, n->n);
}

/* follower.c fetched_one(), with the same rules. The simulated leader
 * never deletes records (its log start is 0), so there is no restart. */
static void on_fetch_rsp(struct sim_world *w, struct sim_node *n,
                         const struct sim_msg *m)
{
    if (!in_flight(n, m)) {
        return;
    }
    if (n->follow != PARTITION_FOLLOW_FETCH) {
        answered(w, n, false, 0, true);
        return;
    }
    switch (follower_fetched_action(sim_kafka_error(m->err),
                                    n->fetch_offset_sent, n->n, 0)) {
    case FOLLOWER_FETCHED_DROP:
        answered(w, n, false, 0, true);
        return;
    case FOLLOWER_FETCHED_APPEND:
        follower_append(w, n, m);
        if (n->dir_failed) {
            return; /* the broker is going down */
        }
        if (n->cut_to_repair && in_isr(n) && m->hw <= n->n) {
            n->cut_to_repair = false; /* back, with every record owed */
        } else if (n->cut_to_repair && in_isr(n)) {
            /* repair_after_fetch(): in the ISR without records below the
             * leader's HW (taken back on a late fetch): out again. */
            n->repair_until = n->repair_until > m->hw ? n->repair_until
                                                      : m->hw;
            ask_to_leave(w, n);
        }
        request_sync(w, n);
        answered(w, n, false, n->durable < n->n ? 1 : 0, true);
        return;
    case FOLLOWER_FETCHED_RESTART:
        ASSERT(!"a simulated leader has log start 0");
        return;
    case FOLLOWER_FETCHED_TRUNCATE:
        n->follow = PARTITION_FOLLOW_TRUNCATE;
        answered(w, n, false, 0, true);
        return;
    case FOLLOWER_FETCHED_PAUSE:
        answered(w, n, true, 0, true);
        return;
    }
}

static void on_epoch_rsp(struct sim_world *w, struct sim_node *n,
                         const struct sim_msg *m)
{
    if (!in_flight(n, m)) {
        return;
    }
    if (n->follow != PARTITION_FOLLOW_TRUNCATE) {
        answered(w, n, false, 0, false);
        return;
    }
    if (m->err != SIM_OK) {
        answered(w, n, true, 0, false);
        return;
    }
    struct follower_truncation t = follower_truncation_for(
        &n->epochs, n->n, n->hw, m->epoch, m->offset);
    sim_trace(w, "node %d: leader says epoch %d ends at %lld; end %lld -> "
              "%lld%s", n->id, m->epoch, (long long)m->offset,
              (long long)n->n, (long long)min64(t.offset, n->n),
              t.done ? "" : " (again)");
    if (t.offset < n->n) {
        w->n_truncated += n->n - t.offset;
    }
    sim_node_truncate(w, n, t.offset);
    if (t.done) {
        n->follow = PARTITION_FOLLOW_FETCH;
    }
    answered(w, n, false, 0, false);
}

/* --- Repair (broker/replication/repair.c) -------------------------------- */

static bool follows(const struct sim_node *n)
{
    return !n->leading && n->has_meta &&
           n->meta.part.leader != META_NO_LEADER &&
           n->follow != PARTITION_FOLLOW_NONE;
}

static bool in_isr(const struct sim_node *n)
{
    return n->has_meta && meta_replica_set_contains(&n->meta.part.isr, n->id);
}

/* LeaveLeadership, at most once per SIM_REPAIR_ASK_MS. */
static void ask_to_leave(struct sim_world *w, struct sim_node *n)
{
    if (n->corrupt_asked_ms > 0 &&
        w->now_ms - n->corrupt_asked_ms < SIM_REPAIR_ASK_MS) {
        return;
    }
    n->corrupt_asked_ms = w->now_ms;
    sim_trace(w, "node %d: corrupt frame at %lld, asks to leave the ISR%s",
              n->id, (long long)n->corrupt_offset,
              n->leading ? " and the leadership" : "");
    struct sim_msg m = {.type = SIM_MSG_LEAVE, .from = n->idx,
                        .to = SIM_CONTROLLER, .req = sim_new_req(w),
                        .broker_epoch = n->broker_epoch,
                        .epoch = n->leading ? n->isr.leader_epoch
                                            : n->meta.part.leader_epoch};
    sim_send(w, &m);
}

/* repair_follower_ready(): with no fetch in flight, a damaged follower
 * out of the ISR cuts its log before the corrupt frame (the fetches that
 * follow get the rest again); one still in the ISR asks to leave first,
 * so that it is never elected without records the ISR promised. */
/* Whether n still lacks records below the HW it had when it cut its log
 * to repair (clears the mark once it has them again). */
static bool repairing(struct sim_node *n)
{
    if (n->repair_until >= 0 && n->n >= n->repair_until) {
        n->repair_until = -1;
    }
    return n->repair_until >= 0;
}

static bool follower_ready(struct sim_world *w, struct sim_node *n)
{
    if (n->corrupt_offset < 0) {
        if (repairing(n) && in_isr(n)) {
            ask_to_leave(w, n); /* taken back on a late fetch */
        }
        return true;
    }
    if (in_isr(n)) {
        ask_to_leave(w, n);
        return false;
    }
    int64_t at = n->corrupt_offset;
    sim_trace(w, "node %d truncates %lld -> %lld before a corrupt frame",
              n->id, (long long)n->n, (long long)at);
    w->n_truncated += n->n - at;
    int64_t hw = n->hw;
    sim_node_truncate(w, n, at);
    n->cut_to_repair = true;
    if (hw > at && hw > n->repair_until) {
        n->repair_until = hw;
    }
    return n->corrupt_offset < 0;
}

/* repair_log_corrupt(): a damaged follower is repaired by its fetcher
 * (follower_ready()); a damaged leader asks the
 * controller to move leadership to an in-sync replica; anyone else keeps
 * the damage noted for when it learns its role. */
static void repair(struct sim_world *w, struct sim_node *n)
{
    if (n->corrupt_offset < 0 && repairing(n) &&
        (n->leading || in_isr(n))) {
        ask_to_leave(w, n); /* without records the ISR promised */
        return;
    }
    if (n->corrupt_offset < 0) {
        return;
    }
    if (follows(n)) {
        return; /* follower_ready(), with no fetch in flight */
    }
    if (n->leading) {
        ask_to_leave(w, n);
    }
}

static void found_corrupt(struct sim_world *w, struct sim_node *n,
                          int64_t offset)
{
    if (n->corrupt_offset < 0 || offset < n->corrupt_offset) {
        n->corrupt_offset = offset;
        w->n_corrupt_found++;
        sim_disk_explain(w, n, offset);
    }
    repair(w, n);
}

/* replica_manager.c's scrub: reads the next frames of the log through
 * the disk, from where the last pass stopped. */
static void scrub(struct sim_world *w, struct sim_node *n)
{
    if (n->scrub_offset >= n->n) {
        n->scrub_offset = 0;
    }
    int64_t end = min64(n->n, n->scrub_offset + SIM_SCRUB_RECORDS);
    for (int64_t o = n->scrub_offset; o < end; o++) {
        struct sim_record r;
        int rv = sim_disk_read(w, n, o, &r);
        if (rv == RC_IO) {
            sim_node_dir_failed(w, n, "read");
            return;
        }
        if (rv == RC_CORRUPT) {
            n->scrub_offset = 0;
            found_corrupt(w, n, o);
            return;
        }
    }
    /* At the end, the next pass starts over at 0, even if records came
     * meanwhile. */
    n->scrub_offset = end >= n->n ? 0 : end;
}

void sim_node_dir_failed(struct sim_world *w, struct sim_node *n,
                         const char *what)
{
    if (n->dir_failed) {
        return;
    }
    n->dir_failed = true;
    w->n_dir_failed++;
    sim_trace(w, "node %d: %s failed (%s): log dir offline, exiting", n->id,
              what, strerror(errno));
    if (n->leading) {
        fail_waiters(w, n, SIM_STORAGE_ERROR);
        answer_parked(w, n, SIM_STORAGE_ERROR);
    }
    struct sim_msg m = {.type = SIM_MSG_HEARTBEAT, .from = n->idx,
                        .to = SIM_CONTROLLER, .incarnation = n->incarnation,
                        .broker_epoch = n->broker_epoch, .offline_dir = true,
                        .offset = n->has_meta ? n->meta.offset : -1};
    sim_send(w, &m);
    sim_node_timer(w, n, SIM_TIMER_EXIT, 0, SIM_EXIT_MS);
}

/* --- Metadata ------------------------------------------------------------ */

static void set_eligibility(struct sim_node *n)
{
    for (int32_t i = 0; i < n->isr.n_followers; i++) {
        int32_t id = n->isr.followers[i].id;
        isr_set_eligible(&n->isr, id, !n->meta.fenced[id - 1]);
    }
}

static void become_leader(struct sim_world *w, struct sim_node *n,
                          const struct meta_partition *mp)
{
    bool changed = false;
    ASSERT(log_epoch_assign(&n->epochs, mp->leader_epoch, n->n, &changed) ==
           RC_OK);
    isr_become_leader(&n->isr, n->id, mp, SIM_MIN_ISR, SIM_LAG_MAX_MS, n->n,
                      w->now_ms);
    n->leading = true;
    n->alter_in_flight = false;
    n->alter_req = 0;
    n->follow = PARTITION_FOLLOW_NONE;
    session_init(n);
    n->fetch_req = 0;
    n->mono_epoch = mp->leader_epoch;
    n->mono_hw = n->hw;
    sim_trace(w, "node %d leads epoch %d (end %lld, hw %lld)", n->id,
              mp->leader_epoch, (long long)n->n, (long long)n->hw);
}

/* partition_apply_metadata(), once the broker has caught up with the
 * metadata log to its own registration (as Kafka's brokers wait for
 * before they take partition roles). */
static void on_meta(struct sim_world *w, struct sim_node *n,
                    const struct sim_meta *meta)
{
    if (!n->registered || meta->offset < n->registered_at ||
        (n->has_meta && meta->offset <= n->meta.offset)) {
        return;
    }
    const struct meta_partition *mp = &meta->part;
    bool same = n->has_meta && mp->leader == n->meta.part.leader &&
                mp->leader_epoch == n->meta.part.leader_epoch;
    bool was_leader = n->leading;
    n->meta = *meta;
    n->has_meta = true;
    n->corrupt_asked_ms = 0; /* a new state: ask again at once if need be */
    if (mp->leader == n->id) {
        if (!same || !n->leading) {
            become_leader(w, n, mp);
        } else {
            isr_update_metadata(&n->isr, mp);
        }
        set_eligibility(n);
        check_min_isr(w, n);
        update_hw(w, n);
        repair(w, n);
        return;
    }
    if (was_leader) {
        n->leading = false;
        fail_waiters(w, n, SIM_NOT_LEADER);
        answer_parked(w, n, SIM_NOT_LEADER);
        n->alter_in_flight = false;
    }
    if (mp->leader == META_NO_LEADER) {
        n->follow = PARTITION_FOLLOW_NONE;
    } else if (!same || n->follow == PARTITION_FOLLOW_NONE) {
        /* A new fetcher for the new leader, starting with KIP-101. */
        n->follow = PARTITION_FOLLOW_TRUNCATE;
        follower_session_reset(&n->session); /* keeps waiting for syncs */
        n->fetch_req = 0;
    }
    repair(w, n);
    send_next(w, n);
}

/* --- Entry points -------------------------------------------------------- */

void sim_node_receive(struct sim_world *w, struct sim_node *n,
                      const struct sim_msg *m)
{
    if (!n->up || n->dir_failed) {
        return; /* a failed log dir: exiting, it answers nothing */
    }
    switch (m->type) {
    case SIM_MSG_FETCH: on_fetch(w, n, m); break;
    case SIM_MSG_CONSUME: on_consume(w, n, m); break;
    case SIM_MSG_FETCH_RSP: on_fetch_rsp(w, n, m); break;
    case SIM_MSG_EPOCH: on_epoch(w, n, m); break;
    case SIM_MSG_EPOCH_RSP: on_epoch_rsp(w, n, m); break;
    case SIM_MSG_PRODUCE: on_produce(w, n, m); break;
    case SIM_MSG_ALTER_RSP: on_alter_rsp(w, n, m); break;
    case SIM_MSG_META: on_meta(w, n, &m->meta); break;
    case SIM_MSG_REGISTER_RSP:
        if (m->err == SIM_OK && !n->registered &&
            m->incarnation == n->incarnation) {
            n->registered = true;
            n->broker_epoch = m->broker_epoch;
            n->registered_at = m->offset;
            sim_trace(w, "node %d registered, broker epoch %lld", n->id,
                      (long long)n->broker_epoch);
        }
        break;
    default:
        ASSERT(!"unexpected message at a broker");
    }
}

static void heartbeat(struct sim_world *w, struct sim_node *n)
{
    struct sim_msg m = {.from = n->idx, .to = SIM_CONTROLLER,
                        .incarnation = n->incarnation,
                        .broker_epoch = n->broker_epoch,
                        .offset = n->has_meta ? n->meta.offset : -1};
    m.type = n->registered ? SIM_MSG_HEARTBEAT : SIM_MSG_REGISTER;
    m.offline_dir = n->dir_failed;
    sim_send(w, &m);
    sim_node_timer(w, n, SIM_TIMER_HEARTBEAT, 0, SIM_HEARTBEAT_MS);
}

/* replica_manager.c isr_timer_cb(): shrink check, HW, checkpoint. */
static void isr_check(struct sim_world *w, struct sim_node *n)
{
    struct meta_replica_set isr;
    if (n->leading && !n->alter_in_flight &&
        isr_maybe_shrink(&n->isr, n->n, w->now_ms, &isr)) {
        propose_isr(w, n, &isr);
    }
    update_hw(w, n);
    if (!n->dir_failed) {
        scrub(w, n);
    }
    if (w->now_ms - n->last_checkpoint_ms >= SIM_CHECKPOINT_MS) {
        n->last_checkpoint_ms = w->now_ms;
        n->hw_checkpoint = n->hw;
    }
    sim_node_timer(w, n, SIM_TIMER_ISR_CHECK, 0, SIM_ISR_CHECK_MS);
}

void sim_node_on_timer(struct sim_world *w, struct sim_node *n,
                       enum sim_timer t, int64_t token)
{
    switch (t) {
    case SIM_TIMER_ISR_CHECK: isr_check(w, n); break;
    case SIM_TIMER_HEARTBEAT: heartbeat(w, n); break;
    case SIM_TIMER_SESSION:
        if (follower_session_tick(&n->session, w->now_ms) ==
            FOLLOWER_STEP_DISCONNECT) {
            n->fetch_req = 0; /* a late answer is not taken */
        }
        session_timer(w, n);
        send_next(w, n);
        break;
    case SIM_TIMER_PARK: {
        int f = (int)(token % 4);
        if (n->parked[f] && n->park_token[f] == token / 4) {
            answer_fetch(w, n, f, n->leading ? SIM_OK : SIM_NOT_LEADER);
        }
        break;
    }
    case SIM_TIMER_ALTER_TIMEOUT:
        if (n->alter_in_flight && token == n->alter_req) {
            alter_done(w, n, false, NULL, 0);
        }
        break;
    case SIM_TIMER_EXIT: sim_crash(w, n->idx); break;
    default:
        ASSERT(!"unknown timer");
    }
}

void sim_node_sync_done(struct sim_world *w, struct sim_node *n)
{
    ASSERT(n->sync_busy);
    n->sync_busy = false;
    if (n->dir_failed) {
        return;
    }
    if (sim_disk_sync(n) != 0) {
        if (!w->opt.unsafe_fsync) {
            /* fsyncgate: final. Nothing past the last good sync is ever
             * counted durable. */
            sim_node_dir_failed(w, n, "fdatasync");
            return;
        }
        sim_trace(w, "node %d: fdatasync failed, counted as done (unsafe)",
                  n->id);
        sim_disk_lied(w, n);
    }
    if (n->sync_target > n->durable) {
        n->durable = min64(n->sync_target, n->n);
        n->recovery_point = n->durable;
    }
    if (n->leading) {
        update_hw(w, n);
    } else if (n->session.state == FOLLOWER_SESSION_SYNCING &&
               n->durable >= n->n) {
        follower_session_synced(&n->session, 0, false, w->now_ms);
        session_timer(w, n);
        send_next(w, n);
    }
    request_sync(w, n);
}

static void reset_volatile(struct sim_node *n)
{
    n->registered = false;
    n->has_meta = false;
    n->leading = false;
    n->alter_in_flight = false;
    n->n_waiters = 0;
    memset(n->parked, 0, sizeof n->parked);
    n->follow = PARTITION_FOLLOW_NONE;
    session_init(n);
    n->fetch_req = 0;
    n->sync_busy = false;
    n->sync_target = 0;
    n->dir_failed = false;
    n->corrupt_asked_ms = 0;
    n->repair_until = -1; /* kept in memory only, as the broker does */
    n->cut_to_repair = false;
}

/* The process dies and its files lose what was not fdatasync'd (a
 * power loss of its disk); recovery at the restart reads what is left. */
void sim_node_crash(struct sim_world *w, struct sim_node *n)
{
    ASSERT(n->up);
    sim_trace(w, "node %d crashes (end %lld, durable %lld)", n->id,
              (long long)n->n, (long long)n->durable);
    n->up = false;
    char prefix[16];
    snprintf(prefix, sizeof prefix, "n%d/", n->id);
    io_sim_power_loss(w->disk, prefix);
    n->fd = -1;
    reset_volatile(n);
}

/* Recovery: the durable log, the saved epoch cache cut to it, the HW from
 * the last checkpoint (never past the log end); then register again. */
void sim_node_restart(struct sim_world *w, struct sim_node *n)
{
    ASSERT(!n->up);
    n->up = true;
    n->incarnation++;
    n->started_ms = w->now_ms;
    if (!sim_disk_recover(w, n)) {
        sim_node_dir_failed(w, n, "recovery");
        return;
    }
    n->hw = min64(n->hw_checkpoint, n->n);
    n->hw_checked = min64(n->hw_checked, n->hw);
    sim_trace(w, "node %d restarts (end %lld, hw %lld)", n->id,
              (long long)n->n, (long long)n->hw);
    heartbeat(w, n);
    sim_node_timer(w, n, SIM_TIMER_ISR_CHECK, 0, SIM_ISR_CHECK_MS);
}

void sim_node_init(struct sim_world *w, struct sim_node *n, int idx)
{
    memset(n, 0, sizeof *n);
    n->idx = idx;
    n->id = idx + 1;
    n->up = true;
    n->registered = true;
    n->broker_epoch = idx + 1;
    log_epoch_init(&n->epochs);
    session_init(n);
    n->mono_epoch = -1;
    n->corrupt_offset = -1;
    n->repair_until = -1;
    sim_disk_open(w, n);
    sim_node_timer(w, n, SIM_TIMER_HEARTBEAT, 0,
                   sim_rand_range(w, 1, SIM_HEARTBEAT_MS));
    sim_node_timer(w, n, SIM_TIMER_ISR_CHECK, 0,
                   sim_rand_range(w, 1, SIM_ISR_CHECK_MS));
}

void sim_node_free(struct sim_node *n)
{
    free(n->log);
    free(n->waiters);
    log_epoch_free(&n->epochs);
}
