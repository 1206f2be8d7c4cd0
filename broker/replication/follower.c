/* Follower fetchers (broker/replication/follower.h). */
#include "broker/replication/follower.h"
#include "broker/replication/follower_internal.h"
#include "broker/replication/follower_session.h"
#include "broker/replication/repair.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/bytes.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/limits.h"
#include "common/meta/meta_index.h"
#include "common/net/frame_conn.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"

/* A response frame larger than this closes the connection. */
#define FETCHER__FRAME_BYTES_MAX (128u << 20)
/* Small responses are decoded where they lie in this read buffer. */
#define FETCHER__READ_BUFFER_BYTES (64u * 1024)

static void drive(struct fetcher *f);
static void timer_cb(uv_timer_t *t);


static void unref(struct fetcher *f)
{
    if (--f->refs > 0) {
        return;
    }
    sent_list_free(&f->sent);
    fetcher_session_free(f);
    free(f);
}

static void handle_closed_cb(uv_handle_t *h)
{
    unref(h->data);
}

/* Drops the connection (a new one is made on the next send). A request
 * lost with it may or may not have moved the session's epoch at the
 * leader: the session starts over. */
static void disconnect(struct fetcher *f)
{
    if (f->conn != NULL) {
        frame_conn_close(f->conn, RC_CLOSED);
        f->conn = NULL;
    }
    f->n_sent = 0;
    fetcher_session_restart(f);
}

int64_t fetcher_now_ms(const struct fetcher *f)
{
    return (int64_t)uv_now(f->rf->loop);
}

/* Keeps the timer at the session's deadline. */
static void rearm(struct fetcher *f)
{
    int64_t deadline = follower_session_deadline(&f->session);
    if (f->dead || deadline == FOLLOWER_SESSION_NO_DEADLINE) {
        uv_timer_stop(&f->timer);
        return;
    }
    int64_t wait = deadline - fetcher_now_ms(f);
    uv_timer_start(&f->timer, timer_cb, wait > 0 ? (uint64_t)wait : 0, 0);
}

static void fail(struct fetcher *f, const char *why)
{
    TRACE_WARN(f->rf->tracer, "fetcher from broker %d (%s:%d): %s; retrying",
               f->leader, f->host, f->port, why);
    disconnect(f);
    follower_session_closed(&f->session, fetcher_now_ms(f));
    rearm(f);
}

static void timer_cb(uv_timer_t *t)
{
    struct fetcher *f = t->data;
    if (f->dead) {
        return;
    }
    enum follower_session_state was = f->session.state;
    if (follower_session_tick(&f->session, fetcher_now_ms(f)) ==
        FOLLOWER_STEP_DISCONNECT) {
        TRACE_WARN(f->rf->tracer, "fetcher from broker %d (%s:%d): %s timed "
                   "out; retrying", f->leader, f->host, f->port,
                   was == FOLLOWER_SESSION_CONNECTING ? "connecting"
                                                      : "the request");
        disconnect(f);
    }
    drive(f);
}

/* --- Reading responses --------------------------------------------------- */

static struct partition *followed(struct fetcher *f, const struct sent_part *s,
                                  enum partition_follow want)
{
    struct partition *p = replica_manager_find(f->rf->ps, s->topic, s->id);
    if (p == NULL || p->closing || p->follow != want ||
        p->leader != f->leader || p->leader_epoch != s->leader_epoch) {
        return NULL; /* leadership moved meanwhile: drop the answer */
    }
    return p;
}

static void synced_cb(void *arg, int rc)
{
    struct fetcher *f = arg;
    /* A failed log is left out of every later fetch (collect()); the
     * others go on. */
    if (rc != RC_OK) {
        f->errors = true;
    }
    f->pending_syncs--;
    if (!f->dead) {
        follower_session_synced(&f->session, f->pending_syncs, f->errors,
                                fetcher_now_ms(f));
        drive(f);
    }
    unref(f);
}

void fetcher_wait_durable(struct fetcher *f, struct partition *p)
{
    if (!p->sync_before_ack ||
        log_durable_end_offset(p->log) >= log_end_offset(p->log)) {
        return;
    }
    if (log_wait_durable(p->log, log_end_offset(p->log), synced_cb, f) ==
        RC_OK) {
        f->pending_syncs++;
        f->refs++;
    }
}

static void on_fetch(struct fetcher *f, struct reader *r)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchResponse resp;
    int rv = kafka_fetch_response_decode(r, FETCHER__VERSION_FETCH, &a, &resp);
    if (rv != RC_OK) {
        arena_free(&a);
        fail(f, "malformed Fetch response");
        return;
    }
    f->errors = resp.ErrorCode != KAFKA_ERROR_NONE;
    f->round_records_max = 0;
    fetcher_session_answered(f, &resp);
    for (int32_t i = 0; i < resp.ResponsesCnt; i++) {
        fetcher_fetched_topic(f, &resp.Responses[i]);
    }
    arena_free(&a);
    f->n_sent = 0;
    follower_session_answered(&f->session, f->errors, f->pending_syncs,
                              f->round_records_max, true /* fetch */,
                              fetcher_now_ms(f));
    drive(f);
}

static void truncate_one(struct fetcher *f, struct slice topic,
                         const struct kafka_EpochEndOffset *r)
{
    const struct sent_part *s = sent_list_find(&f->sent, topic, r->Partition);
    struct partition *p = s != NULL ? followed(f, s, PARTITION_FOLLOW_TRUNCATE)
                                    : NULL;
    if (p == NULL) {
        return;
    }
    if (!partition_follower_epoch_end(p, f->leader, r->ErrorCode,
                                      r->LeaderEpoch, r->EndOffset)) {
        f->errors = true;
    }
}

static void on_epochs(struct fetcher *f, struct reader *r)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_OffsetForLeaderEpochResponse resp;
    int rv = kafka_offset_for_leader_epoch_response_decode(
        r, FETCHER__VERSION_EPOCH, &a, &resp);
    if (rv != RC_OK) {
        arena_free(&a);
        fail(f, "malformed OffsetForLeaderEpoch response");
        return;
    }
    f->errors = false;
    for (int32_t i = 0; i < resp.TopicsCnt; i++) {
        const struct kafka_OffsetForLeaderTopicResult *t = &resp.Topics[i];
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            truncate_one(f, t->Topic, &t->Partitions[k]);
        }
    }
    arena_free(&a);
    f->n_sent = 0;
    f->rescan = true; /* partitions moved on to fetching */
    follower_session_answered(&f->session, f->errors, 0, 0,
                              false /* fetch */, fetcher_now_ms(f));
    drive(f);
}

/* One whole frame: correlation id, then the body. */
static void on_frame(struct fetcher *f, const uint8_t *frame, size_t len)
{
    struct reader r;
    reader_init(&r, frame, len);
    int32_t got = 0;
    if (f->session.state != FOLLOWER_SESSION_IN_FLIGHT ||
        kafka_frame_response_read(&r, f->correlation, &got) != RC_OK ||
        kafka_frame_response_tags(&r, f->api,
                                  f->api == KAFKA_API_FETCH
                                      ? FETCHER__VERSION_FETCH
                                      : FETCHER__VERSION_EPOCH) != RC_OK) {
        fail(f, "unexpected response");
        return;
    }
    if (f->api == KAFKA_API_FETCH) {
        on_fetch(f, &r);
    } else {
        on_epochs(f, &r);
    }
}

/* A whole response frame (common/net/frame_conn.h), borrowed for the
 * call: decoded where it lies; sending the next request never touches it. */
static void conn_frame_cb(struct frame_conn *c, void *block, uint8_t *frame,
                          size_t len)
{
    (void)block;
    on_frame(frame_conn_data(c), frame, len);
}

/* The connection closed: on its own (read, write or connect error, the
 * leader closed, a bad frame), or by disconnect(), which let it go. */
static void conn_closed_cb(struct frame_conn *c, int rc)
{
    struct fetcher *f = frame_conn_data(c);
    if (f->conn != c) {
        return;
    }
    f->conn = NULL;
    fail(f, rc == RC_CLOSED ? "connection closed" : rc_str(rc));
}

static void conn_free_cb(struct frame_conn *c)
{
    unref(frame_conn_data(c));
}

/* --- Sending requests ---------------------------------------------------- */

struct fetcher_write {
    struct frame_conn_write req; /* first: write_cb casts back */
    struct writer w;
};

/* A failed write closed the connection: conn_closed_cb fails the fetcher. */
static void write_cb(struct frame_conn_write *req, int status)
{
    struct fetcher_write *fw = (struct fetcher_write *)(void *)req;
    (void)status;
    writer_free(&fw->w);
    free(fw);
}

/* A fetch offset tells the leader how far this replica has durably got:
 * the leader counts it towards the high watermark and acks=all. So a
 * partition is asked for only while its log end is durable (with
 * log.sync.before.ack; the fetcher waits for the sync before it fetches
 * again) and its log has not failed: after a failed fsync the unsynced
 * tail may never reach the disk, and the replica drops out of the ISR
 * instead of reporting it. Once the log dir has failed nothing is
 * asked for at all: the broker is on its way out. */
bool fetcher_offset_durable(const struct partition *p)
{
    if (p->owner->unsafe_fsync_failure_ignore) {
        return true; /* the negative control: as before fsyncgate */
    }
    return !p->owner->dir_failed && partition_fetch_offset_durable(p);
}

static int add_sent(struct fetcher *f, const struct partition *p)
{
    int rv = sent_list_add(&f->sent, p->topic, p->id, p->leader_epoch,
                           log_end_offset(p->log));
    f->n_sent = f->sent.n;
    return rv;
}

/* Whether p's fetches count against the follower throttle; sets *held
 * when the throttle keeps p out of this fetch. */
bool fetcher_throttled(struct fetcher *f, const struct partition *p,
                       bool *held)
{
    struct throttle *t = f->rf->cfg.throttle;
    *held = false;
    if (t == NULL || !throttle_on(t) ||
        !replica_manager_move_throttled(f->rf->ps, p, f->rf->cfg.self)) {
        return false;
    }
    *held = !throttle_allows(t, (uint64_t)fetcher_now_ms(f));
    return true;
}

/* Fills f->sent with the partitions led by f's leader that must ask
 * for their epochs (those that have no epoch to ask about are truncated
 * to their HW at once and move on to fetching; damaged ones are counted
 * in f->n_held). */
static int collect(struct fetcher *f)
{
    struct replica_manager *ps = f->rf->ps;
    f->n_sent = 0;
    sent_list_clear(&f->sent);
    f->n_held = 0;
    for (size_t i = 0; i < ps->n; i++) {
        struct partition *p = ps->parts[i];
        if (!partition_follows(p, f->leader, PARTITION_FOLLOW_TRUNCATE)) {
            continue;
        }
        if (!repair_follower_ready(p)) {
            f->n_held++; /* damaged, still in the ISR: asked again later */
            continue;
        }
        if (!fetcher_offset_durable(p)) {
            /* Asked for once its end is durable: the sync's callback
             * drives the fetcher again (nothing else would, were this
             * the only partition left to ask about). */
            fetcher_wait_durable(f, p);
            continue;
        }
        if (!follower_asks_epochs(log_epochs(p->log))) {
            /* No epoch to ask about: an empty log has nothing to cut;
             * otherwise fall back to the high watermark. */
            int rv = partition_follower_truncate(p, p->hw);
            p->follow = PARTITION_FOLLOW_FETCH;
            f->rescan = true; /* fetched from now on */
            if (rv != RC_OK) {
                return rv;
            }
            continue;
        }
        int rv = add_sent(f, p);
        if (rv != RC_OK) {
            return rv;
        }
    }
    return RC_OK;
}

/* OffsetForLeaderEpoch v3 for the grouped partitions: each one's latest
 * local epoch. */
static int build_epochs(struct fetcher *f, struct arena *a,
                        const struct sent_groups *g, struct writer *w)
{
    struct kafka_OffsetForLeaderTopic *topics = NULL;
    struct kafka_OffsetForLeaderPartition *parts = NULL;
    int rv = arena_alloc(a, g->n_topics, sizeof *topics, (void **)&topics);
    if (rv == RC_OK) {
        rv = arena_alloc(a, f->sent.n, sizeof *parts, (void **)&parts);
    }
    if (rv != RC_OK) {
        return rv;
    }
    for (size_t k = 0; k < f->sent.n; k++) {
        const struct sent_part *s = &f->sent.parts[g->order[k]];
        struct partition *p = replica_manager_find(f->rf->ps, s->topic,
                                                   s->id);
        parts[k] = (struct kafka_OffsetForLeaderPartition){
            .Partition = s->id,
            .CurrentLeaderEpoch = s->leader_epoch,
            .LeaderEpoch = log_epoch_latest(log_epochs(p->log))};
    }
    for (size_t t = 0; t < g->n_topics; t++) {
        topics[t] = (struct kafka_OffsetForLeaderTopic){
            .Topic = slice_from_str(g->names[t]),
            .Partitions = parts + g->start[t],
            .PartitionsCnt = g->counts[t]};
    }
    struct kafka_OffsetForLeaderEpochRequest rq = {
        .ReplicaId = f->rf->cfg.self, .Topics = topics,
        .TopicsCnt = (int32_t)g->n_topics};
    return kafka_offset_for_leader_epoch_request_encode(
        w, FETCHER__VERSION_EPOCH, &rq);
}

/* Builds the request body for the partitions in state want into w;
 * RC_OK with f->n_sent 0 when there is nothing to ask. */
static int build(struct fetcher *f, enum partition_follow want,
                 struct writer *w)
{
    if (want == PARTITION_FOLLOW_FETCH) {
        return fetcher_build_fetch(f, w);
    }
    int rv = collect(f);
    if (rv != RC_OK || f->n_sent == 0) {
        return rv;
    }
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct sent_groups g;
    rv = sent_list_group(&f->sent, &a, &g);
    if (rv == RC_OK) {
        rv = build_epochs(f, &a, &g, w);
    }
    arena_free(&a);
    return rv;
}

static void conn_connected_cb(struct frame_conn *c)
{
    struct fetcher *f = frame_conn_data(c);
    follower_session_connected(&f->session);
    drive(f);
}

static const struct frame_conn_config fetcher__conn_config = {
    .frame_bytes_min = 0, /* on_frame() judges what is inside */
    .frame_bytes_max = FETCHER__FRAME_BYTES_MAX,
    .read_buffer_bytes = FETCHER__READ_BUFFER_BYTES,
    .prealloc_bytes = KAFKA_FRAME_PREALLOC_BYTES,
    .read_bytes = KAFKA_FRAME_READ_BYTES,
    /* Large responses keep coming: their buffer is kept between them. */
    .keep_bytes = FETCHER__FRAME_BYTES_MAX,
    /* One request in flight, at most REQUEST_BYTES_MAX (send_next). */
    .outbox_bytes_max = REQUEST_BYTES_MAX,
    .full = FRAME_CONN_FULL_CLOSE,
    .size_name = "response size",
};

static const struct frame_conn_cbs fetcher__conn_cbs = {
    .frame = conn_frame_cb,
    .connected = conn_connected_cb,
    .closed = conn_closed_cb,
    .free = conn_free_cb,
};

static void start_connect(struct fetcher *f)
{
    struct sockaddr_storage sa;
    char peer[META_HOST_BYTES_MAX + 16];
    if (uv_ip4_addr(f->host, f->port, (struct sockaddr_in *)&sa) != 0 &&
        uv_ip6_addr(f->host, f->port, (struct sockaddr_in6 *)&sa) != 0) {
        fail(f, "cannot parse the leader's address");
        return;
    }
    snprintf(peer, sizeof peer, "%s:%d", f->host, f->port);
    int rv = frame_conn_connect(&f->conn, f->rf->loop,
                                (struct sockaddr *)&sa, peer,
                                &fetcher__conn_config, &fetcher__conn_cbs, f,
                                0 /* the session times it */,
                                f->rf->tracer);
    if (rv != RC_OK) {
        f->conn = NULL;
        fail(f, rc_str(rv));
        return;
    }
    f->refs++;
}

static bool has(const struct fetcher *f, enum partition_follow want)
{
    const struct replica_manager *ps = f->rf->ps;
    for (size_t i = 0; i < ps->n; i++) {
        const struct partition *p = ps->parts[i];
        if (!p->closing && p->follow == want && p->leader == f->leader) {
            return true;
        }
    }
    return false;
}

/* What the leader is to be asked next. Partitions wait for their epochs
 * only after a leadership change or a divergence (maybe_truncating, set
 * then): otherwise nothing walks every partition; a session with members
 * fetches (an idle one long-polls, naming nothing). */
static enum follower_want wanted(struct fetcher *f)
{
    if (f->maybe_truncating) {
        if (has(f, PARTITION_FOLLOW_TRUNCATE)) {
            return FOLLOWER_WANT_EPOCHS;
        }
        f->maybe_truncating = false;
    }
    if (f->n_members > 0 || f->n_dirty > 0) {
        return FOLLOWER_WANT_FETCH;
    }
    return (f->rescan || f->session_epoch == 0) &&
                   has(f, PARTITION_FOLLOW_FETCH)
               ? FOLLOWER_WANT_FETCH
               : FOLLOWER_WANT_NOTHING;
}

/* Builds and writes the request the session asked for. RC_OK with
 * f->n_sent 0 when everything resolved locally (empty logs): nothing was
 * sent. */
static int send_request(struct fetcher *f, enum follower_step step)
{
    bool fetch = step == FOLLOWER_STEP_SEND_FETCH;
    struct fetcher_write *fw = calloc(1, sizeof *fw);
    if (fw == NULL) {
        return RC_NOMEM;
    }
    writer_init(&fw->w, REQUEST_BYTES_MAX);
    int16_t api = fetch ? KAFKA_API_FETCH : KAFKA_API_OFFSET_FOR_LEADER_EPOCH;
    size_t size_at = kafka_frame_request_begin(
        &fw->w, api, fetch ? FETCHER__VERSION_FETCH : FETCHER__VERSION_EPOCH,
        ++f->correlation, f->rf->client_id);
    int rv = build(f, fetch ? PARTITION_FOLLOW_FETCH
                            : PARTITION_FOLLOW_TRUNCATE,
                   &fw->w);
    if (rv == RC_OK && f->n_sent > 0) {
        rv = kafka_frame_end(&fw->w, size_at);
    }
    if (rv != RC_OK || f->n_sent == 0) {
        writer_free(&fw->w);
        free(fw);
        return rv;
    }
    f->api = api;
    uv_buf_t b = uv_buf_init((char *)fw->w.data, (unsigned)fw->w.len);
    rv = frame_conn_write(f->conn, &fw->req, &b, 1, write_cb);
    if (rv != RC_OK) {
        writer_free(&fw->w);
        free(fw);
    }
    return rv;
}

/* Does what the session says until it waits for something. A round that
 * resolved locally goes straight on; each such round moves partitions
 * from truncating to fetching, so the loop is bounded by their count. */
static void drive(struct fetcher *f)
{
    for (size_t round = 0; !f->dead && round <= f->rf->ps->n + 1; round++) {
        enum follower_step step =
            follower_session_next(&f->session, wanted(f), fetcher_now_ms(f));
        if (step == FOLLOWER_STEP_CONNECT) {
            start_connect(f);
        } else if (step == FOLLOWER_STEP_SEND_EPOCHS ||
                   step == FOLLOWER_STEP_SEND_FETCH) {
            int rv = send_request(f, step);
            if (rv != RC_OK) {
                fail(f, rv == RC_NOMEM ? "out of memory" : rc_str(rv));
                return;
            }
            if (f->n_sent == 0) {
                /* Resolved locally, or all held by the throttle: then
                 * a pause, as after an error. */
                follower_session_answered(&f->session, f->n_held > 0,
                                          f->pending_syncs, 0,
                                          false, fetcher_now_ms(f));
                continue;
            }
        }
        break;
    }
    rearm(f);
}

/* --- Planning ------------------------------------------------------------ */

int follower_start(struct follower **out, uv_loop_t *loop,
                   struct replica_manager *ps,
                   const struct follower_config *cfg,
                   struct tracer *tracer)
{
    struct follower *rf = calloc(1, sizeof *rf);
    if (rf == NULL) {
        return RC_NOMEM;
    }
    rf->loop = loop;
    rf->ps = ps;
    rf->cfg = *cfg;
    rf->tracer = tracer;
    snprintf(rf->client_id, sizeof rf->client_id, "cairn-replica-%d",
             cfg->self);
    uv_timer_init(loop, &rf->plan_timer);
    rf->plan_timer.data = rf;
    *out = rf;
    return RC_OK;
}

static void kill_fetcher(struct fetcher *f)
{
    f->dead = true;
    disconnect(f);
    uv_timer_stop(&f->timer);
    uv_close((uv_handle_t *)&f->timer, handle_closed_cb);
}

static struct fetcher *find_fetcher(struct follower *rf,
                                    int32_t leader)
{
    for (struct fetcher *f = rf->list; f != NULL; f = f->next) {
        if (f->leader == leader) {
            return f;
        }
    }
    return NULL;
}

static struct fetcher *new_fetcher(struct follower *rf,
                                   const struct meta_broker *b)
{
    struct fetcher *f = calloc(1, sizeof *f);
    if (f == NULL) {
        return NULL;
    }
    f->rf = rf;
    f->leader = b->id;
    struct follower_session_config sc = {
        .backoff_ms = rf->cfg.backoff_ms,
        .reconnect_max_ms = rf->cfg.reconnect_max_ms > rf->cfg.backoff_ms
                                ? rf->cfg.reconnect_max_ms
                                : rf->cfg.backoff_ms,
        .jitter_seed = uv_hrtime() ^ (uint64_t)b->id,
        .connect_timeout_ms = rf->cfg.connect_timeout_ms,
        .request_timeout_ms = rf->cfg.request_timeout_ms,
        .partition_max_bytes = rf->cfg.partition_max_bytes,
        .response_max_bytes = rf->cfg.response_max_bytes};
    follower_session_init(&f->session, &sc);
    strcpy(f->host, b->host);
    f->port = b->port;
    fetcher_session_init(f);
    f->maybe_truncating = true;
    f->refs = 1; /* the timer */
    uv_timer_init(rf->loop, &f->timer);
    f->timer.data = f;
    f->next = rf->list;
    rf->list = f;
    TRACE_INFO(rf->tracer, "fetching from broker %d at %s:%d", b->id,
               b->host, b->port);
    return f;
}

/* Leadership changed: fetchers for the leaders followed now, none for
 * the others, each looking at every partition again. A walk of every
 * partition. */
static void plan_now(struct follower *rf)
{
    const struct meta_image *img = rf->ps->img;
    rf->planned_ms = uv_now(rf->loop);
    rf->plan_due = false;
    for (struct fetcher *f = rf->list; f != NULL; f = f->next) {
        f->errors = false;
        f->rescan = true; /* leaderships changed: every partition */
        f->maybe_truncating = true;
    }
    for (size_t i = 0; img != NULL && i < rf->ps->n; i++) {
        const struct partition *p = rf->ps->parts[i];
        if (p->closing || p->follow == PARTITION_FOLLOW_NONE) {
            continue;
        }
        const struct meta_broker *b = meta_image_broker(img, p->leader);
        struct fetcher *f = find_fetcher(rf, p->leader);
        if (f != NULL && b != NULL &&
            (f->port != b->port || strcmp(f->host, b->host) != 0)) {
            strcpy(f->host, b->host); /* it came back elsewhere */
            f->port = b->port;
            disconnect(f);
            follower_session_reset(&f->session);
        }
        if (f == NULL && b != NULL) {
            f = new_fetcher(rf, b);
        }
    }
    struct fetcher **link = &rf->list;
    while (*link != NULL) {
        struct fetcher *f = *link;
        if (!has(f, PARTITION_FOLLOW_TRUNCATE) &&
            !has(f, PARTITION_FOLLOW_FETCH)) {
            *link = f->next;
            TRACE_INFO(rf->tracer, "no longer fetching from broker %d",
                       f->leader);
            kill_fetcher(f);
            continue;
        }
        drive(f);
        link = &f->next;
    }
}

static void plan_timer_cb(uv_timer_t *t)
{
    plan_now(t->data);
}

/* At most one plan per FOLLOWER__PLAN_INTERVAL_MS: the first change
 * after a quiet spell is planned at once, the ones that follow it
 * closely (a metadata change applied a budget per turn, the logs of
 * thousands of new partitions opened a batch per turn) together at the
 * end of the interval. Each plan walks every partition, so planning per
 * batch would cost the square of the partitions. */
void follower_plan(struct follower *rf)
{
    uint64_t now = uv_now(rf->loop);
    uint64_t next = rf->planned_ms + FOLLOWER__PLAN_INTERVAL_MS;
    if (rf->planned_ms == 0 || now >= next) {
        uv_timer_stop(&rf->plan_timer);
        plan_now(rf);
    } else if (!rf->plan_due) {
        rf->plan_due = true;
        uv_timer_start(&rf->plan_timer, plan_timer_cb, next - now, 0);
    }
}

void follower_look_at(struct follower *rf, const struct partition *p)
{
    struct fetcher *f = find_fetcher(rf, p->leader);
    if (f != NULL && !f->dead) {
        f->rescan = true;
        /* Driven from the loop, not from whatever found the damage (an
         * answer being read, say): the timer's callback drives, and
         * rearms it for the session's own deadline. */
        uv_timer_start(&f->timer, timer_cb, 0, 0);
    }
}

static void plan_timer_closed_cb(uv_handle_t *h)
{
    free(h->data);
}

void follower_close(struct follower *rf)
{
    while (rf->list != NULL) {
        struct fetcher *f = rf->list;
        rf->list = f->next;
        kill_fetcher(f);
    }
    uv_timer_stop(&rf->plan_timer);
    uv_close((uv_handle_t *)&rf->plan_timer, plan_timer_closed_cb);
}
