/* A simulated broker over the production partitions (tests/simb/simb.h). */
#include "tests/simb/simb.h"
#include "broker/log/log_open.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log/producer_state.h"
#include "broker/replication/follower_session.h"
#include "broker/replication/repair.h"
#include "common/io.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"

#define SIMB_WALL_BASE_MS 1700000000000LL
#define SIMB_REQUEST_TIMEOUT_MS 1000

/* --- The partitions' host -------------------------------------------------- */

static int64_t host_now(void *ctx)
{
    const struct simb_broker *b = ctx;
    return b->w->now_ms;
}

static int64_t host_wall(void *ctx)
{
    const struct simb_broker *b = ctx;
    return SIMB_WALL_BASE_MS + b->w->now_ms;
}

static void host_wake(void *ctx, struct partition *p)
{
    (void)ctx; /* no fetch is parked: followers ask again */
    (void)p;
}

/* As the broker's ISR timer: a partition is checked from when it says
 * it has work until a check leaves it with none. */
static void host_isr_work(void *ctx, struct partition *p)
{
    struct simb_broker *b = ctx;
    b->parts[simb_slot(p)].isr_work = true;
}

static void host_alter(void *ctx, struct partition *p,
                       const struct meta_replica_set *isr)
{
    struct simb_broker *b = ctx;
    int64_t req = ++b->w->next_req;
    b->parts[simb_slot(p)].alter_req = req;
    /* alter_partition.c's deadline: no answer, the outcome is unknown
     * (the next check sends the change again). */
    simb_schedule(b->w, &(struct simb_event){
                            .at_ms = b->w->now_ms + SIMB_REQUEST_TIMEOUT_MS,
                            .type = SIMB_EV_ALTER_TIMEOUT,
                            .broker = b->idx,
                            .incarnation = b->incarnation,
                            .partition = simb_slot(p),
                            .msg = {.req = req}});
    simb_send(b->w, &(struct simb_msg){.type = SIMB_ALTER,
                                       .req = req,
                                       .from = b->idx,
                                       .to = SIMB_CONTROLLER,
                                       .incarnation = b->incarnation,
                                       .partition = simb_slot(p),
                                       .leader_epoch = p->leader_epoch,
                                       .partition_epoch = p->partition_epoch,
                                       .isr = *isr});
}

/* repair.c asks to leave p's ISR (broker_log_corrupt's LeaveLeadership). */
static void host_leave_isr(void *ctx, struct partition *p, int64_t offset)
{
    struct simb_broker *b = ctx;
    (void)offset;
    simb_send(b->w, &(struct simb_msg){.type = SIMB_LEAVE,
                                       .from = b->idx,
                                       .to = SIMB_CONTROLLER,
                                       .incarnation = b->incarnation,
                                       .partition = simb_slot(p),
                                       .leader_epoch = p->leader_epoch});
}

static void runner_submit(void *ctx, struct log *l)
{
    struct simb_broker *b = ctx;
    if (b->n_pending < SIMB_PARTITIONS) {
        b->pending[b->n_pending++] = l;
    }
    int64_t delay = 1 + (int64_t)(simb_rand(b->w) % 8);
    simb_schedule(b->w, &(struct simb_event){.at_ms = b->w->now_ms + delay,
                                             .type = SIMB_EV_SYNC,
                                             .broker = b->idx,
                                             .incarnation = b->incarnation});
}

static void quiet(struct tracer *t, enum trace_level level, const char *file,
                  int line, const char *msg)
{
    struct simb_broker *b = t->data;
    (void)level;
    (void)file;
    (void)line;
    if (b->w->trace) {
        printf("t=%" PRId64 " broker %d: %s\n", b->w->now_ms, (int)b->id,
               msg);
    }
}

/* A log failed (a sync or write the disk refused): as replica_manager.c,
 * the log dir is offline and the broker exits, right after this call. */
static void dir_failed_cb(void *arg, int rc)
{
    struct simb_broker *b = arg;
    (void)rc;
    if (b->dir_failed) {
        return;
    }
    b->dir_failed = true;
    b->w->n_dir_failed++;
    simb_schedule(b->w, &(struct simb_event){.at_ms = b->w->now_ms,
                                             .type = SIMB_EV_CRASH,
                                             .broker = b->idx,
                                             .incarnation = b->incarnation,
                                             .msg = {.req = 1}});
}

void simb_broker_init(struct simb_world *w, struct simb_broker *b, int idx)
{
    *b = (struct simb_broker){.w = w, .idx = idx, .id = idx + 1,
                              .epoch = -1};
    b->uuid.b[0] = (uint8_t)(idx + 1);
    uv_loop_init(&b->loop);
    b->tracer = (struct tracer){.level = TRACE_LEVEL_INFO, .emit = quiet,
                                .data = b};
    b->host = (struct partition_host){.self = b->id,
                                      .tracer = &b->tracer,
                                      .ctx = b,
                                      .now_ms = host_now,
                                      .wall_ms = host_wall,
                                      .wake = host_wake,
                                      .alter_isr = host_alter,
                                      .leave_isr = host_leave_isr,
                                      .isr_work = host_isr_work};
    b->runner = (struct log_sync_runner){.ctx = b, .submit = runner_submit};
    meta_image_init(&b->img);
}

/* --- Power -------------------------------------------------------------- */

static void open_partition(struct simb_broker *b, int32_t id)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/b%d/%s", (int)b->id, simb_slots[id].name);
    struct log_config cfg;
    log_config_default(&cfg);
    cfg.segment_bytes = 8192;
    cfg.segment_index_bytes = 4096;
    struct log *l = NULL;
    if (log_open(&l, dir, &cfg, &b->loop, &b->tracer) != RC_OK) {
        /* The disk refused a call of the recovery: the log dir is
         * offline, and the broker exits to try again later. */
        dir_failed_cb(b, RC_IO);
        return;
    }
    log_set_sync_runner(l, &b->runner);
    log_on_failure(l, dir_failed_cb, b);
    struct partition *p = calloc(1, sizeof *p);
    if (p == NULL) {
        abort();
    }
    *p = (struct partition){.host = &b->host, .log = l,
                            .id = simb_slots[id].id,
                            .leader = META_NO_LEADER, .leader_epoch = -1,
                            .sync_before_ack = true,
                            .max_message_bytes = 1 << 20,
                            .corrupt_offset = -1, .repair_until = -1,
                            .retention = {-1, -1}};
    strcpy(p->topic, simb_slots[id].topic);
    producer_state_init(&p->producers);
    b->parts[id] = (struct simb_part){.b = b, .p = p};
}

void simb_broker_start(struct simb_broker *b)
{
    b->up = true;
    b->dir_failed = false;
    b->incarnation++;
    struct follower_session_config sc = {
        .backoff_ms = SIMB_FETCH_PAUSE_MS,
        .reconnect_max_ms = 1000,
        .jitter_seed = simb_rand(b->w),
        .connect_timeout_ms = SIMB_REQUEST_TIMEOUT_MS,
        .request_timeout_ms = SIMB_REQUEST_TIMEOUT_MS,
        .partition_max_bytes = SIMB_FETCH_BYTES,
        .response_max_bytes = 4 * SIMB_FETCH_BYTES};
    for (int li = 0; li < SIMB_BROKERS; li++) {
        b->fetchers[li] = (struct simb_fetcher){
            .timer_ms = FOLLOWER_SESSION_NO_DEADLINE};
        follower_session_init(&b->fetchers[li].s, &sc);
    }
    b->epoch = -1;
    b->uuid.b[1] = (uint8_t)b->incarnation;
    b->uuid.b[2] = (uint8_t)(b->incarnation >> 8);
    /* Its partitions open as the metadata names them (replica_manager). */
}

/* Frees what a waiting produce request holds (the process died: nobody
 * is answered). */
static void drop_waiters(struct partition *p)
{
    for (size_t i = 0; i < p->n_waiters; i++) {
        free(p->waiters[i].arg);
    }
    free(p->waiters);
    p->waiters = NULL;
    p->n_waiters = 0;
}

static void drop_partition(struct simb_broker *b, int32_t i)
{
    struct partition *p = b->parts[i].p;
    if (p == NULL) {
        return;
    }
    drop_waiters(p);
    for (int k = 0; k < b->parts[i].n_waits; k++) {
        free(b->parts[i].waits[k]); /* the log drops them, uncalled */
    }
    for (int k = 0; k < b->parts[i].n_acks1; k++) {
        free(b->parts[i].acks1[k]); /* the same */
    }
    for (size_t k = 0; k < b->n_pending; k++) {
        if (b->pending[k] == p->log) { /* its job goes with it */
            b->pending[k] = b->pending[--b->n_pending];
            break;
        }
    }
    log_abandon(p->log);
    producer_state_free(&p->producers);
    free(p);
    b->parts[i] = (struct simb_part){0};
}

static void drop_partitions(struct simb_broker *b)
{
    for (int32_t i = 0; i < SIMB_PARTITIONS; i++) {
        drop_partition(b, i);
    }
    b->n_pending = 0;
    uv_run(&b->loop, UV_RUN_NOWAIT); /* the logs' handles close */
}

static void unlink_one(void *arg, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", (const char *)arg, name);
    (void)io_unlink(path);
}

/* No longer a replica (a reassignment moved it): the log and its files go,
 * as replica_manager.c deletes them. */
static void drive(struct simb_broker *b, int li);

static void remove_partition(struct simb_broker *b, int32_t i)
{
    int li[SIMB_WAITS_MAX];
    int n = b->parts[i].n_waits;
    for (int k = 0; k < n; k++) {
        li[k] = b->parts[i].waits[k]->li;
    }
    drop_partition(b, i);
    for (int k = 0; k < n; k++) { /* a closing log tells its waiters */
        struct simb_fetcher *f = &b->fetchers[li[k]];
        f->pending_syncs--;
        f->errors = true;
        follower_session_synced(&f->s, f->pending_syncs, f->errors,
                                b->w->now_ms);
        drive(b, li[k]);
    }
    uv_run(&b->loop, UV_RUN_NOWAIT);
    char dir[64];
    snprintf(dir, sizeof dir, "/b%d/%s", (int)b->id, simb_slots[i].name);
    (void)io_list_dir(dir, unlink_one, dir);
}

void simb_broker_crash(struct simb_broker *b, bool power_loss)
{
    b->up = false;
    drop_partitions(b);
    char prefix[16];
    snprintf(prefix, sizeof prefix, "/b%d/", (int)b->id);
    if (power_loss) {
        io_sim_power_loss(b->w->disk, prefix);
    }
    meta_image_free(&b->img);
    meta_image_init(&b->img);
}

void simb_broker_free(struct simb_broker *b)
{
    drop_partitions(b);
    meta_image_free(&b->img);
    uv_loop_close(&b->loop);
}

void simb_broker_sync(struct simb_broker *b)
{
    size_t n = b->n_pending;
    struct log *run[SIMB_PARTITIONS];
    memcpy(run, b->pending, n * sizeof run[0]);
    b->n_pending = 0;
    for (size_t i = 0; i < n; i++) {
        log_sync_run(run[i]);
    }
}

/* --- Following: one session per leader, as follower.c ------------------ */

/* The partition p follows leader li (a broker index) and could use a
 * request of the kind follow is (follower.c's collect()): a failed log is
 * left out, its end may hold what never became durable. */
static bool follows(const struct simb_broker *b, const struct partition *p,
                    int li, enum partition_follow follow)
{
    return p != NULL && partition_follows(p, li + 1, follow) &&
           log_failure(p->log) == RC_OK && !b->dir_failed;
}

/* A fetch offset counts towards the leader's HW, so a partition whose
 * log end is not yet durable is left out of a Fetch (follower.c's
 * fetch_offset_durable(); its sync may have been asked for by a session
 * with an earlier leader). */
static bool may_fetch(const struct simb_broker *b, const struct partition *p,
                      int li)
{
    return follows(b, p, li, PARTITION_FOLLOW_FETCH) &&
           partition_fetch_offset_durable(p);
}

static enum follower_want wanted(const struct simb_broker *b, int li)
{
    enum follower_want want = FOLLOWER_WANT_NOTHING;
    for (int32_t i = 0; i < SIMB_PARTITIONS; i++) {
        const struct partition *p = b->parts[i].p;
        if (follows(b, p, li, PARTITION_FOLLOW_TRUNCATE)) {
            return FOLLOWER_WANT_EPOCHS;
        }
        if (may_fetch(b, p, li)) {
            want = FOLLOWER_WANT_FETCH;
        }
    }
    return want;
}

/* One request to leader li for every partition that wants that kind;
 * each partition's part travels as its own message, and the request is
 * answered once all of them are (or its deadline passes). A partition
 * whose log holds no epoch is truncated to its HW here, unasked. */
static void send_request(struct simb_broker *b, int li, bool fetch)
{
    struct simb_fetcher *f = &b->fetchers[li];
    f->req = ++b->w->next_req;
    f->n_out = 0;
    f->fetch = fetch;
    f->errors = false;
    f->largest = 0;
    for (int32_t i = 0; i < SIMB_PARTITIONS; i++) {
        struct simb_part *sp = &b->parts[i];
        struct partition *p = sp->p;
        if (fetch && follows(b, p, li, PARTITION_FOLLOW_FETCH) &&
            !repair_follower_ready(p)) {
            continue; /* damaged, still in the ISR: asked again later */
        }
        if (fetch ? !may_fetch(b, p, li)
                  : !follows(b, p, li, PARTITION_FOLLOW_TRUNCATE)) {
            continue;
        }
        struct simb_msg m = {.type = fetch ? SIMB_FETCH : SIMB_EPOCH,
                             .from = b->idx, .to = li,
                             .incarnation = b->incarnation,
                             .partition = simb_slot(p), .replica = b->id,
                             .leader_epoch = p->leader_epoch,
                             .req = f->req};
        if (fetch) {
            m.offset = log_end_offset(p->log);
        } else if (!follower_asks_epochs(log_epochs(p->log))) {
            if (partition_follower_truncate(p, p->hw) == RC_OK) {
                p->follow = PARTITION_FOLLOW_FETCH;
            }
            continue;
        } else {
            m.partition_epoch = log_epoch_latest(log_epochs(p->log));
        }
        sp->sent_req = f->req;
        sp->sent_epoch = p->leader_epoch;
        f->n_out++;
        simb_send(b->w, &m);
    }
}

static void rearm(struct simb_broker *b, int li)
{
    struct simb_fetcher *f = &b->fetchers[li];
    int64_t d = follower_session_deadline(&f->s);
    if (d == FOLLOWER_SESSION_NO_DEADLINE || d == f->timer_ms) {
        return;
    }
    f->timer_ms = d;
    simb_schedule(b->w, &(struct simb_event){.at_ms = d,
                                             .type = SIMB_EV_FETCH,
                                             .broker = b->idx,
                                             .incarnation = b->incarnation,
                                             .partition = li});
}

/* follower.c's drive(): whatever the session says next. */
static void drive(struct simb_broker *b, int li)
{
    struct simb_fetcher *f = &b->fetchers[li];
    int64_t now = b->w->now_ms;
    for (int round = 0; round < 4 && b->up && b->epoch >= 0; round++) {
        enum follower_step step =
            follower_session_next(&f->s, wanted(b, li), now);
        if (step == FOLLOWER_STEP_CONNECT) {
            follower_session_connected(&f->s); /* at once: no sockets */
            continue;
        }
        if (step == FOLLOWER_STEP_SEND_EPOCHS ||
            step == FOLLOWER_STEP_SEND_FETCH) {
            send_request(b, li, step == FOLLOWER_STEP_SEND_FETCH);
            if (f->n_out == 0) { /* resolved here */
                f->req = 0;
                follower_session_answered(&f->s, false, f->pending_syncs,
                                          0, false, now);
                continue;
            }
        }
        break;
    }
    rearm(b, li);
}

void simb_broker_follow(struct simb_broker *b)
{
    for (int li = 0; li < SIMB_BROKERS; li++) {
        if (li != b->idx) {
            drive(b, li);
        }
    }
}

void simb_broker_fetcher_tick(struct simb_broker *b, int li)
{
    struct simb_fetcher *f = &b->fetchers[li];
    if (b->w->now_ms >= f->timer_ms) {
        f->timer_ms = FOLLOWER_SESSION_NO_DEADLINE;
    }
    if (follower_session_tick(&f->s, b->w->now_ms) ==
        FOLLOWER_STEP_DISCONNECT) {
        f->req = 0; /* what was out is lost with the connection */
        f->n_out = 0;
    }
    drive(b, li);
}

static void durable_cb(void *arg, int rc)
{
    struct simb_wait *wt = arg;
    struct simb_part *sp = wt->sp;
    int li = wt->li;
    for (int k = 0; k < sp->n_waits; k++) {
        if (sp->waits[k] == wt) {
            sp->waits[k] = sp->waits[--sp->n_waits];
            break;
        }
    }
    free(wt);
    struct simb_fetcher *f = &sp->b->fetchers[li];
    f->pending_syncs--;
    f->errors |= rc != RC_OK;
    follower_session_synced(&f->s, f->pending_syncs, f->errors,
                            sp->b->w->now_ms);
    drive(sp->b, li);
}

/* A follower's fetch offset counts towards the leader's HW: what it
 * appended must be durable before it asks again (follower.c). */
static void wait_durable(struct simb_broker *b, struct simb_part *sp, int li)
{
    struct partition *p = sp->p;
    if (log_durable_end_offset(p->log) >= log_end_offset(p->log)) {
        return;
    }
    struct simb_wait *wt = malloc(sizeof *wt);
    if (wt == NULL || sp->n_waits == SIMB_WAITS_MAX) {
        free(wt);
        simb_fail(b->w, "broker %d: more than %d durability waits on %s",
                  (int)b->id, SIMB_WAITS_MAX, simb_slots[simb_slot(p)].name);
        return;
    }
    *wt = (struct simb_wait){sp, li};
    if (log_wait_durable(p->log, log_end_offset(p->log), durable_cb, wt) !=
        RC_OK) {
        free(wt);
        return;
    }
    sp->waits[sp->n_waits++] = wt;
    b->fetchers[li].pending_syncs++;
}

/* One partition's part of an answer from leader li (follower.c's
 * fetched_one() and truncate_one(): dropped if leadership moved). */
static void on_answer(struct simb_broker *b, struct simb_part *sp,
                      const struct simb_msg *m)
{
    int li = m->from;
    struct simb_fetcher *f = &b->fetchers[li];
    struct partition *p = sp->p;
    if (f->req == 0 || f->req != m->req || sp->sent_req != m->req) {
        return;
    }
    sp->sent_req = 0;
    bool fetch = m->type == SIMB_FETCH_RSP;
    if (follows(b, p, li, fetch ? PARTITION_FOLLOW_FETCH
                                : PARTITION_FOLLOW_TRUNCATE) &&
        p->leader_epoch == sp->sent_epoch) {
        if (fetch) {
            b->w->n_fetched_bytes += (int64_t)m->len;
            f->largest = m->len > f->largest ? m->len : f->largest;
            enum partition_fetched got = partition_follower_fetched(
                p, m->error, m->offset, m->bytes, m->len, m->hw,
                m->log_start);
            f->errors |= got == PARTITION_FETCHED_FAILED ||
                         got == PARTITION_FETCHED_PAUSE;
            if (got == PARTITION_FETCHED_APPENDED) {
                repair_after_fetch(p, m->hw);
            }
            if (got == PARTITION_FETCHED_APPENDED ||
                got == PARTITION_FETCHED_DIVERGED ||
                got == PARTITION_FETCHED_FAILED) {
                wait_durable(b, sp, li);
            }
        } else {
            f->errors |= !partition_follower_epoch_end(
                p, p->leader, m->error, m->partition_epoch, m->offset);
        }
    }
    if (--f->n_out > 0) {
        return;
    }
    f->req = 0;
    follower_session_answered(&f->s, f->errors, f->pending_syncs, f->largest,
                              fetch, b->w->now_ms);
    drive(b, li);
}

/* --- Leading ------------------------------------------------------------ */

/* What a read may send, as kafka_fetch.c's verify(): the intact batches
 * before any damage, or KAFKA_STORAGE_ERROR when there are none. */
static void checked(struct simb_broker *b, struct partition *p,
                    struct log_span *span, struct simb_msg *r)
{
    if (r->error != KAFKA_ERROR_NONE) {
        return;
    }
    int64_t intact = simb_verify_read(b, p, span);
    if (intact < 0) {
        log_span_release(span);
        *span = (struct log_span){0};
        r->error = KAFKA_ERROR_KAFKA_STORAGE_ERROR;
    } else {
        span->bytes = intact;
    }
}

/* A Fetch's read from r->offset into r's bytes, checked. */
static void read_into(struct simb_broker *b, struct partition *p,
                      bool replica, struct simb_msg *r)
{
    struct log_span span = {0};
    int rv = partition_read(p, replica, r->offset, SIMB_FETCH_BYTES, &span);
    r->error = rv == RC_OK ? KAFKA_ERROR_NONE : kafka_error_from_rc(rv);
    checked(b, p, &span, r);
    if (r->error == KAFKA_ERROR_NONE && span.bytes > 0) {
        r->bytes = malloc((size_t)span.bytes);
        if (r->bytes == NULL ||
            io_pread(span.fd, r->bytes, (size_t)span.bytes,
                     (off_t)span.position) != span.bytes) {
            simb_fail(b->w, "broker %d cannot read its log", (int)b->id);
        }
        r->len = (size_t)span.bytes;
    }
    if (span.seg != NULL) {
        log_span_release(&span);
    }
}

static void on_fetch(struct simb_broker *b, struct partition *p,
                     const struct simb_msg *m)
{
    struct simb_msg r = {.type = SIMB_FETCH_RSP, .from = b->idx,
                         .to = m->from, .incarnation = m->incarnation,
                         .partition = simb_slot(p), .leader_epoch = m->leader_epoch,
                         .offset = m->offset, .req = m->req};
    r.error = partition_check_reader(p, m->leader_epoch, m->replica);
    if (r.error == KAFKA_ERROR_NONE) {
        int rv = partition_replica_fetch(p, m->replica, m->offset,
                                         b->w->now_ms);
        r.error = rv == RC_OK ? KAFKA_ERROR_NONE : kafka_error_from_rc(rv);
    }
    if (r.error == KAFKA_ERROR_NONE) {
        read_into(b, p, true, &r);
    }
    r.hw = p->hw;
    r.log_start = log_start_offset(p->log);
    simb_send(b->w, &r);
}

static void on_epoch(struct simb_broker *b, struct partition *p,
                     const struct simb_msg *m)
{
    struct simb_msg r = {.type = SIMB_EPOCH_RSP, .from = b->idx,
                         .to = m->from, .incarnation = m->incarnation,
                         .partition = simb_slot(p), .leader_epoch = m->leader_epoch,
                         .req = m->req};
    r.error = partition_check_reader(p, m->leader_epoch, -1);
    if (r.error == KAFKA_ERROR_NONE) {
        log_end_offset_for_epoch(p->log, m->partition_epoch,
                                 &r.partition_epoch, &r.offset);
    }
    simb_send(b->w, &r);
}

struct produce_wait {
    struct simb_broker *b;
    uint32_t incarnation;
    int32_t partition;
    int64_t offset;
    uint32_t value;
    int64_t req;
    int16_t acks;
};

static void produced_cb(void *arg, int rc)
{
    struct produce_wait *pw = arg;
    struct simb_broker *b = pw->b;
    struct simb_part *sp = &b->parts[pw->partition];
    for (int k = 0; k < sp->n_acks1; k++) {
        if (sp->acks1[k] == pw) {
            sp->acks1[k] = sp->acks1[--sp->n_acks1];
            break;
        }
    }
    simb_send(b->w, &(struct simb_msg){
                        .type = SIMB_PRODUCE_RSP, .from = b->idx,
                        .to = SIMB_PRODUCER, .partition = pw->partition,
                        .offset = pw->offset, .value = pw->value,
                        .req = pw->req, .acks = pw->acks,
                        .error = rc == RC_OK ? KAFKA_ERROR_NONE
                                             : kafka_error_from_rc(rc)});
    free(pw);
}

static void on_produce(struct simb_broker *b, struct partition *p,
                       const struct simb_msg *m)
{
    struct built_batch bb = batch_build(1, 8, 1000, m->value);
    struct log_append_info info = {0};
    int rv = partition_append(p, bb.bytes, bb.len, b->w->now_ms, m->acks,
                              &info);
    built_batch_free(&bb);
    if (m->acks == 0) {
        return; /* nobody waits for an answer */
    }
    struct produce_wait *pw = malloc(sizeof *pw);
    if (pw == NULL) {
        abort();
    }
    *pw = (struct produce_wait){b, b->incarnation, simb_slot(p),
                                info.base_offset,
                                m->value, m->req, m->acks};
    bool waiting = false;
    if (rv == RC_OK) {
        rv = partition_wait_acks(p, m->acks, info.last_offset, produced_cb,
                                 pw, &waiting);
    }
    if (!waiting) {
        produced_cb(pw, rv);
    } else if (m->acks == 1) {
        struct simb_part *sp = &b->parts[pw->partition];
        if (sp->n_acks1 == SIMB_WAITS_MAX) {
            simb_fail(b->w, "broker %d: more than %d acks=1 waits on %s",
                      (int)b->id, SIMB_WAITS_MAX,
                      simb_slots[pw->partition].name);
            return;
        }
        sp->acks1[sp->n_acks1++] = pw;
    }
}

/* A consumer's Fetch: what the leader holds from the offset up to the
 * high watermark (kafka_fetch.c for a consumer). */
static void on_consume(struct simb_broker *b, struct partition *p,
                       const struct simb_msg *m)
{
    struct simb_msg r = {.type = SIMB_CONSUME_RSP, .from = b->idx,
                         .to = SIMB_CONSUMER, .partition = simb_slot(p),
                         .offset = m->offset, .req = m->req, .hw = p->hw};
    r.error = partition_check_reader(p, -1, -1);
    if (r.error == KAFKA_ERROR_NONE && m->offset < p->hw) {
        read_into(b, p, false, &r);
    }
    simb_send(b->w, &r);
}

/* --- Metadata and requests ------------------------------------------------ */

static void apply_metadata(struct simb_broker *b)
{
    meta_image_free(&b->img);
    meta_image_init(&b->img);
    if (meta_image_copy(&b->img, simb_ctl(b->w)) != RC_OK) {
        abort();
    }
    /* As broker/main.c: fenced until registered and caught up past its
     * registration, the broker opens its logs but takes no role (a
     * restarted broker's first image may still name it leader of what
     * the controller moves away before registering it). */
    bool serving = b->epoch >= 0 && b->img.offset >= b->epoch;
    for (int32_t i = 0; i < SIMB_PARTITIONS; i++) {
        const struct meta_partition *mp = simb_meta_partition(&b->img, i);
        if (mp == NULL) {
            continue;
        }
        bool replica = meta_replica_set_contains(&mp->replicas, b->id);
        if (!replica && b->parts[i].p != NULL) {
            remove_partition(b, i);
        } else if (replica && b->parts[i].p == NULL && !b->dir_failed) {
            open_partition(b, i);
        }
        struct partition *p = b->parts[i].p;
        if (p == NULL || !replica || !serving) {
            continue;
        }
        int32_t epoch = p->leader_epoch;
        int32_t pe = p->partition_epoch;
        partition_apply_metadata(p, b->id, mp, &b->img, SIMB_MIN_INSYNC,
                                 SIMB_LAG_MAX_MS, b->w->now_ms);
        if (epoch != p->leader_epoch || pe != p->partition_epoch) {
            repair_after_metadata(p);
        }
        /* Checked once it leads at an epoch. */
        if (partition_is_leader(p) &&
            b->parts[i].checked_epoch != p->leader_epoch + 1) {
            b->parts[i].checked_epoch = p->leader_epoch + 1;
            b->w->n_elections++;
            simb_check_acked(b->w, b, i);
        }
    }
    simb_broker_follow(b);
}

void simb_broker_receive(struct simb_broker *b, struct simb_msg *m)
{
    if (m->type == SIMB_METADATA) {
        apply_metadata(b);
        return;
    }
    struct simb_part *sp = &b->parts[m->partition];
    struct partition *p = sp->p;
    if (p == NULL) {
        return;
    }
    /* As broker/main.c: the Kafka port serves nothing until the broker is
     * registered and its image has reached its registration (a restarted
     * broker is refused while its old incarnation's session lives, and by
     * then its partitions are led by others). */
    bool serving = b->epoch >= 0 && b->img.offset >= b->epoch;
    if (!serving && (m->type == SIMB_FETCH || m->type == SIMB_EPOCH ||
                     m->type == SIMB_PRODUCE || m->type == SIMB_CONSUME)) {
        return;
    }
    switch (m->type) {
    case SIMB_FETCH:
        on_fetch(b, p, m);
        break;
    case SIMB_EPOCH:
        on_epoch(b, p, m);
        break;
    case SIMB_PRODUCE:
        on_produce(b, p, m);
        break;
    case SIMB_CONSUME:
        on_consume(b, p, m);
        break;
    case SIMB_FETCH_RSP:
    case SIMB_EPOCH_RSP:
        on_answer(b, sp, m);
        break;
    case SIMB_LEAVE_RSP:
        if (m->incarnation == b->incarnation) { /* else its RPC is gone */
            repair_left_isr(p, m->leader_epoch, m->partition_epoch);
        }
        break;
    case SIMB_ALTER_RSP:
        if (sp->alter_req == m->req) {
            sp->alter_req = 0;
            partition_alter_done(p, partition_alter_outcome(m->error), &m->isr,
                                 m->partition_epoch, b->w->now_ms);
        }
        break;
    default:
        break;
    }
}

void simb_broker_alter_timeout(struct simb_broker *b, int32_t partition,
                               int64_t req)
{
    struct simb_part *sp = &b->parts[partition];
    if (sp->p != NULL && sp->alter_req == req) {
        sp->alter_req = 0;
        partition_alter_done(sp->p, PARTITION_ALTER_UNKNOWN, NULL, 0,
                             b->w->now_ms);
    }
}

void simb_broker_tick(struct simb_broker *b)
{
    if (!b->up) {
        return;
    }
    simb_send(b->w, &(struct simb_msg){.type = SIMB_HEARTBEAT,
                                       .from = b->idx,
                                       .to = SIMB_CONTROLLER,
                                       .incarnation = b->incarnation,
                                       .offset = b->img.offset});
    bool check = b->w->now_ms >= b->next_isr_check_ms;
    if (check) {
        b->next_isr_check_ms = b->w->now_ms + SIMB_ISR_CHECK_MS;
    }
    for (int32_t i = 0; check && i < SIMB_PARTITIONS; i++) {
        struct simb_part *sp = &b->parts[i];
        if (sp->p != NULL && sp->isr_work) {
            partition_check_isr(sp->p, b->w->now_ms);
            sp->isr_work = partition_needs_isr_check(sp->p);
        }
    }
    simb_scrub(b);
    simb_broker_follow(b);
}

/* --- Reading a log back ---------------------------------------------------- */

int simb_read_batches(struct log *l, int64_t from,
                      void (*cb)(void *arg, const uint8_t *batch,
                                 const struct record_batch_header *h),
                      void *arg)
{
    int64_t at = from < log_start_offset(l) ? log_start_offset(l) : from;
    while (at < log_end_offset(l)) {
        struct log_span span;
        int rv = log_read(l, at, 1 << 20, INT64_MAX, &span);
        if (rv != RC_OK || span.bytes == 0) {
            return rv != RC_OK ? rv : RC_CORRUPT;
        }
        uint8_t *buf = malloc((size_t)span.bytes);
        if (buf == NULL || io_pread(span.fd, buf, (size_t)span.bytes,
                                    (off_t)span.position) != span.bytes) {
            free(buf);
            log_span_release(&span);
            return RC_IO;
        }
        for (size_t pos = 0; pos < (size_t)span.bytes;) {
            struct record_batch_header h;
            if (record_batch_parse(buf + pos, (size_t)span.bytes - pos, &h) !=
                RC_OK) {
                free(buf);
                log_span_release(&span);
                return RC_CORRUPT;
            }
            cb(arg, buf + pos, &h);
            pos += (size_t)record_batch_size(&h);
            at = record_batch_last_offset(&h) + 1;
        }
        free(buf);
        log_span_release(&span);
    }
    return RC_OK;
}
