/* Broker membership: registration, heartbeats, metadata pull
 * (broker/membership.h). */
#include "broker/membership.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta_codec.h"
#include "common/backoff.h"
#include "common/rc.h"
#include "common/net/rpc.h"
#include "rpc.pb-c.h"

#define MEMBERSHIP__TICK_MS 20
#define MEMBERSHIP__FETCH_INTERVAL_MS 100
#define MEMBERSHIP__CALL_TIMEOUT_MS 2000
#define MEMBERSHIP__BACKOFF_MIN_MS 100
#define MEMBERSHIP__CALL_BACKOFF_MAX_MS 1000
#define MEMBERSHIP__SHUTDOWN_HEARTBEAT_MS 100
/* Active calls out at once at most; more wait in m->queued, in order, and
 * go as answers come back. A leader taking a restarted broker back into
 * the ISRs of 50,000 partitions makes as many calls at once: the half of
 * the RPC client's table (RPC_INFLIGHT_MAX) they leave keeps room for the
 * heartbeats and metadata fetches, which must never wait behind them. */
#define MEMBERSHIP__CALLS_OUT_MAX (RPC_INFLIGHT_MAX / 2)

struct membership {
    uv_loop_t *loop;
    struct membership_config cfg;
    struct tracer *tracer;
    struct rpc_client *client;
    int target;                   /* where the next call goes */
    int register_to;              /* where the call in flight of each */
    int heartbeat_to;             /* kind went: its answer speaks for */
    int fetch_to;                 /* that controller only */
    uv_timer_t timer;
    struct meta_image image;
    struct meta_changes changes; /* since the image was last told */
    struct meta_uuid incarnation;
    int64_t epoch;                /* -1 until registered */
    bool fenced;
    bool registering;
    bool heartbeat_in_flight;
    bool fetch_in_flight;
    bool refetch;                 /* refreshed while a fetch was out */
    bool need_image;
    bool caught_up;               /* registered, and the image reached
                                   * the registration and the end */
    uint64_t next_register_ms;
    uint64_t next_heartbeat_ms;
    uint64_t next_fetch_ms;
    uint64_t backoff_ms;
    bool shutting_down;
    char offline_dir[LOG_PATH_BYTES_MAX]; /* "" or its failed log dir */
    uint64_t shutdown_deadline_ms;
    bool done;
    bool closing;
    int pending;                  /* calls and handles not yet called back */
    struct active_call *retrying; /* calls waiting out their back-off */
    struct active_call *queued;   /* calls waiting for room, oldest first */
    struct active_call *queued_tail;
    size_t calls_out;             /* active calls sent, not answered */
    uint64_t jitter;              /* xorshift state for back-off jitter */
    membership_image_cb image_cb;
    membership_done_cb done_cb;
    void *arg;
};

void membership_refresh(struct membership *m)
{
    m->next_fetch_ms = 0;
    /* A fetch already out may have been answered before the change was
     * made: one more goes as soon as it is back. */
    m->refetch |= m->fetch_in_flight;
}

bool membership_caught_up(const struct membership *m)
{
    return m->caught_up;
}

const struct meta_image *membership_image(const struct membership *m)
{
    return &m->image;
}

int64_t membership_epoch(const struct membership *m)
{
    return m->epoch;
}

static void maybe_free(struct membership *m)
{
    if (m->closing && m->pending == 0) {
        meta_image_free(&m->image);
        meta_changes_free(&m->changes);
        free(m);
    }
}

/* Sends req to the current target, which goes into *sent_to; cb gets the
 * raw answer. */
static int call(struct membership *m, const Cairn__Request *req,
                rpc_response_cb cb, int *sent_to)
{
    size_t len = cairn__request__get_packed_size(req);
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    cairn__request__pack(req, buf);
    int rv = rpc_client_call(m->client, m->target, buf, len,
                             MEMBERSHIP__CALL_TIMEOUT_MS, cb, m);
    free(buf);
    if (rv == RC_OK) {
        m->pending++;
        *sent_to = m->target;
    }
    return rv;
}

/* Controller sent_to failed a call or is not the active one and does not
 * know who is: the next one is tried, unless the target has already
 * moved. Several calls are out at once (a heartbeat and a metadata fetch
 * leave on the same tick), so one answer often comes twice: moving on
 * from wherever the target is now would undo what the first answer did
 * (a redirect to the active controller, followed by a step past it). */
static void move_on(struct membership *m, int sent_to)
{
    if (m->target == sent_to) {
        m->target = (m->target + 1) % (int)m->cfg.n_controllers;
    }
}

/* Common answer handling of a call that went to controller sent_to: NULL
 * when the call failed or the controller redirected us (the target is
 * then updated). */
static Cairn__Response *answer(struct membership *m, int sent_to, int rc,
                               const uint8_t *payload, size_t len,
                               const char *what)
{
    if (rc != RC_OK) {
        TRACE_DEBUG(m->tracer, "%s to controller=%d failed: %s", what,
                    m->cfg.controllers[sent_to].id, rc_str(rc));
        move_on(m, sent_to);
        return NULL;
    }
    Cairn__Response *resp = cairn__response__unpack(NULL, len, payload);
    if (resp == NULL) {
        TRACE_WARN(m->tracer, "%s: malformed answer", what);
        move_on(m, sent_to);
        return NULL;
    }
    if (resp->error_code != KAFKA_ERROR_NOT_CONTROLLER) {
        return resp;
    }
    int to = -1;
    for (size_t i = 0; i < m->cfg.n_controllers; i++) {
        if (resp->has_controller_id &&
            m->cfg.controllers[i].id == resp->controller_id) {
            to = (int)i;
        }
    }
    if (to >= 0 && to != sent_to) {
        m->target = to;
    } else {
        move_on(m, sent_to); /* no leader known, or not ready yet */
    }
    cairn__response__free_unpacked(resp, NULL);
    return NULL;
}

static uint64_t backoff(struct membership *m)
{
    uint64_t b = m->backoff_ms;
    m->backoff_ms = b * 2 > (uint64_t)m->cfg.heartbeat_interval_ms
                        ? (uint64_t)m->cfg.heartbeat_interval_ms
                        : b * 2;
    return b;
}

/* --- Registration -------------------------------------------------------- */

static void register_cb(void *arg, int rc, const uint8_t *payload,
                        size_t len)
{
    struct membership *m = arg;
    m->pending--;
    m->registering = false;
    if (m->closing) {
        maybe_free(m);
        return;
    }
    Cairn__Response *resp = answer(m, m->register_to, rc, payload, len,
                                   "registration");
    uint64_t now = uv_now(m->loop);
    if (resp == NULL || resp->error_code != KAFKA_ERROR_NONE ||
        resp->body_case != CAIRN__RESPONSE__BODY_BROKER_REGISTRATION) {
        if (resp != NULL) {
            TRACE_WARN(m->tracer, "broker=%d registration refused: %s",
                       m->cfg.broker_id,
                       kafka_error_name((int16_t)resp->error_code));
            cairn__response__free_unpacked(resp, NULL);
        }
        m->next_register_ms = now + backoff(m);
        return;
    }
    m->epoch = resp->broker_registration->broker_epoch;
    m->fenced = true;
    m->backoff_ms = MEMBERSHIP__BACKOFF_MIN_MS;
    m->next_heartbeat_ms = now;
    m->next_fetch_ms = now; /* catch up past the registration */
    TRACE_INFO(m->tracer, "broker=%d registered with controller=%d "
               "epoch=%" PRId64, m->cfg.broker_id,
               m->cfg.controllers[m->target].id, m->epoch);
    cairn__response__free_unpacked(resp, NULL);
}

static void send_registration(struct membership *m)
{
    Cairn__Endpoint ep = CAIRN__ENDPOINT__INIT;
    ep.host = m->cfg.endpoint.host;
    ep.has_port = true;
    ep.port = m->cfg.endpoint.port;
    Cairn__BrokerRegistrationRequest br =
        CAIRN__BROKER_REGISTRATION_REQUEST__INIT;
    br.has_broker_id = br.has_incarnation_id = true;
    br.broker_id = m->cfg.broker_id;
    br.incarnation_id.data = m->incarnation.b;
    br.incarnation_id.len = sizeof m->incarnation.b;
    br.endpoint = &ep;
    br.rack = m->cfg.rack;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_BROKER_REGISTRATION;
    req.broker_registration = &br;
    if (call(m, &req, register_cb, &m->register_to) == RC_OK) {
        m->registering = true;
    } else {
        m->next_register_ms = uv_now(m->loop) + backoff(m);
    }
}

/* --- Heartbeats ---------------------------------------------------------- */

static void heartbeat_answer(struct membership *m,
                             const Cairn__BrokerHeartbeatResponse *hb)
{
    if (hb->is_fenced != m->fenced) {
        TRACE_INFO(m->tracer, "broker=%d %s by the controller",
                   m->cfg.broker_id, hb->is_fenced ? "fenced" : "unfenced");
    }
    m->fenced = hb->is_fenced;
    if (hb->should_shut_down && m->shutting_down && !m->done) {
        TRACE_INFO(m->tracer, "broker=%d controlled shutdown complete",
                   m->cfg.broker_id);
        m->done = true;
        m->done_cb(m->arg);
    }
}

static void heartbeat_cb(void *arg, int rc, const uint8_t *payload,
                         size_t len)
{
    struct membership *m = arg;
    m->pending--;
    m->heartbeat_in_flight = false;
    if (m->closing) {
        maybe_free(m);
        return;
    }
    Cairn__Response *resp = answer(m, m->heartbeat_to, rc, payload, len,
                                   "heartbeat");
    if (resp == NULL) {
        m->next_heartbeat_ms = uv_now(m->loop) + MEMBERSHIP__BACKOFF_MIN_MS;
        return;
    }
    if (resp->error_code == KAFKA_ERROR_STALE_BROKER_EPOCH ||
        resp->error_code == KAFKA_ERROR_BROKER_ID_NOT_REGISTERED) {
        TRACE_WARN(m->tracer, "broker=%d heartbeat: %s; registering again",
                   m->cfg.broker_id,
                   kafka_error_name((int16_t)resp->error_code));
        m->epoch = -1;
        m->fenced = true;
    } else if (resp->error_code == KAFKA_ERROR_NONE &&
               resp->body_case == CAIRN__RESPONSE__BODY_BROKER_HEARTBEAT) {
        heartbeat_answer(m, resp->broker_heartbeat);
    }
    cairn__response__free_unpacked(resp, NULL);
}

static void send_heartbeat(struct membership *m)
{
    Cairn__BrokerHeartbeatRequest hb = CAIRN__BROKER_HEARTBEAT_REQUEST__INIT;
    hb.has_broker_id = hb.has_broker_epoch = true;
    hb.has_current_metadata_offset = hb.has_want_fence = true;
    hb.has_want_shut_down = true;
    hb.broker_id = m->cfg.broker_id;
    hb.broker_epoch = m->epoch;
    hb.current_metadata_offset = m->image.offset;
    hb.want_fence = m->offline_dir[0] != '\0';
    hb.want_shut_down = m->shutting_down;
    char *offline = m->offline_dir;
    if (hb.want_fence) {
        hb.n_offline_log_dirs = 1;
        hb.offline_log_dirs = &offline;
    }
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_BROKER_HEARTBEAT;
    req.broker_heartbeat = &hb;
    if (call(m, &req, heartbeat_cb, &m->heartbeat_to) == RC_OK) {
        m->heartbeat_in_flight = true;
    }
}

/* --- Metadata ------------------------------------------------------------ */

static int apply_records(struct membership *m,
                         const Cairn__MetadataFetchResponse *mf)
{
    if (mf->n_records > 0 && mf->first_offset != m->image.offset + 1) {
        return RC_OUT_OF_RANGE;
    }
    for (size_t i = 0; i < mf->n_records; i++) {
        struct meta_record rec;
        int rv = meta_codec_decode_record(mf->records[i].data,
                                          mf->records[i].len, &rec);
        if (rv != RC_OK) {
            return rv;
        }
        rv = meta_apply(&m->image, &rec);
        if (rv == RC_NOMEM) {
            return rv;
        }
    }
    return RC_OK;
}

static int apply_fetch(struct membership *m,
                       const Cairn__MetadataFetchResponse *mf, bool *changed)
{
    *changed = false;
    if (mf->has_image) {
        struct meta_image img;
        meta_image_init(&img);
        int rv = meta_codec_decode_image(mf->image.data, mf->image.len, &img);
        if (rv != RC_OK) {
            return rv;
        }
        meta_image_free(&m->image);
        m->image = img;
        m->image.changes = &m->changes;
        m->changes.all = true; /* a whole new image */
        *changed = true;
        return RC_OK;
    }
    int64_t before = m->image.offset;
    int rv = apply_records(m, mf);
    *changed = m->image.offset != before;
    return rv;
}

static void fetch_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct membership *m = arg;
    m->pending--;
    m->fetch_in_flight = false;
    if (m->closing) {
        maybe_free(m);
        return;
    }
    uint64_t now = uv_now(m->loop);
    m->next_fetch_ms = m->refetch ? now : now + MEMBERSHIP__FETCH_INTERVAL_MS;
    m->refetch = false;
    Cairn__Response *resp = answer(m, m->fetch_to, rc, payload, len,
                                   "metadata fetch");
    if (resp == NULL) {
        return;
    }
    if (resp->body_case == CAIRN__RESPONSE__BODY_METADATA_FETCH) {
        bool changed = false;
        int rv = apply_fetch(m, resp->metadata_fetch, &changed);
        if (rv != RC_OK) {
            TRACE_WARN(m->tracer, "metadata fetch not applied (%s); asking "
                       "for the whole image", rc_str(rv));
            m->need_image = true;
            m->next_fetch_ms = now;
        } else {
            m->need_image = false;
            if (m->image.offset < resp->metadata_fetch->end_offset) {
                m->next_fetch_ms = now; /* more to come */
            } else if (!m->caught_up && m->epoch >= 0 &&
                       m->image.offset >= m->epoch) {
                /* The broker epoch is the offset of this incarnation's
                 * registration: what came before it (the fencing of an
                 * earlier incarnation, its leaderships moved) is in. */
                m->caught_up = true;
                changed = true; /* tell the broker even if nothing came */
            }
        }
        if (changed) {
            m->image_cb(m->arg, &m->image);
            meta_changes_clear(&m->changes); /* told */
        }
    }
    cairn__response__free_unpacked(resp, NULL);
}

static void send_fetch(struct membership *m)
{
    Cairn__MetadataFetchRequest mf = CAIRN__METADATA_FETCH_REQUEST__INIT;
    mf.has_from_offset = true;
    mf.from_offset = m->need_image ? -1 : m->image.offset;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_METADATA_FETCH;
    req.metadata_fetch = &mf;
    if (call(m, &req, fetch_cb, &m->fetch_to) == RC_OK) {
        m->fetch_in_flight = true;
    }
}

/* --- Calls to the active controller ------------------------------------- */

struct active_call {
    struct membership *m;
    uint8_t *req;
    size_t len;
    uint64_t timeout_ms;
    uint64_t deadline_ms;         /* from its first send (0: not yet);
                                   * a wait in m->queued is not counted */
    int sent_to;                  /* the controller of the latest try */
    membership_call_cb cb;
    void *arg;
    uint64_t backoff_ms;          /* the next pause; doubles, jittered */
    uint64_t retry_ms;            /* waiting in m->retrying until then */
    struct active_call *next;     /* m->retrying or m->queued */
};

static void active_call_cb(void *arg, int rc, const uint8_t *payload,
                           size_t len);

static void active_call_finish(struct active_call *ac, int rc,
                               const uint8_t *resp, size_t len)
{
    ac->cb(ac->arg, rc, resp, len);
    free(ac->req);
    free(ac);
}

/* Sends the call once more; RC_FULL when there is no room for it now (it
 * is not queued), any other error means no callback is pending. */
static int active_call_send(struct active_call *ac)
{
    struct membership *m = ac->m;
    uint64_t now = uv_now(m->loop);
    if (m->closing || (ac->deadline_ms != 0 && now >= ac->deadline_ms)) {
        return m->closing ? RC_CLOSED : RC_TIMEOUT;
    }
    if (m->calls_out >= MEMBERSHIP__CALLS_OUT_MAX) {
        return RC_FULL;
    }
    if (ac->deadline_ms == 0) {
        ac->deadline_ms = now + ac->timeout_ms;
    }
    uint64_t left = ac->deadline_ms - now;
    int rv = rpc_client_call(m->client, m->target, ac->req, ac->len,
                             left < MEMBERSHIP__CALL_TIMEOUT_MS
                                 ? left
                                 : MEMBERSHIP__CALL_TIMEOUT_MS,
                             active_call_cb, ac);
    if (rv == RC_OK) {
        m->pending++;
        m->calls_out++;
        ac->sent_to = m->target;
    }
    return rv;
}

static void queue_call(struct active_call *ac)
{
    struct membership *m = ac->m;
    ac->next = NULL;
    if (m->queued_tail == NULL) {
        m->queued = ac;
    } else {
        m->queued_tail->next = ac;
    }
    m->queued_tail = ac;
}

/* Sends the queued calls there is room for, oldest first. */
static void send_queued(struct membership *m)
{
    while (m->queued != NULL) {
        struct active_call *ac = m->queued;
        int rc = active_call_send(ac);
        if (rc == RC_FULL) {
            return; /* stays first */
        }
        m->queued = ac->next;
        if (m->queued == NULL) {
            m->queued_tail = NULL;
        }
        ac->next = NULL;
        if (rc != RC_OK) {
            active_call_finish(ac, rc, NULL, 0);
        }
    }
}

/* Sends ac, or queues it behind the others when there is no room (or
 * others wait already: calls go in order). */
static int active_call_start(struct active_call *ac)
{
    int rc = ac->m->queued != NULL ? RC_FULL : active_call_send(ac);
    if (rc == RC_FULL) {
        queue_call(ac);
        return RC_OK;
    }
    return rc;
}

static bool redirected(struct membership *m, int sent_to,
                       const uint8_t *payload, size_t len)
{
    Cairn__Response *resp = cairn__response__unpack(NULL, len, payload);
    bool not_controller = resp == NULL ||
                          resp->error_code == KAFKA_ERROR_NOT_CONTROLLER;
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    if (!not_controller) {
        return false;
    }
    /* answer() does the redirect bookkeeping on a fresh unpack. */
    Cairn__Response *again = answer(m, sent_to, RC_OK, payload, len, "call");
    if (again != NULL) {
        cairn__response__free_unpacked(again, NULL);
    }
    return true;
}

/* A pause of about backoff_ms (between 3/4 and 5/4 of it), so that
 * brokers that lost their controllers together do not retry in step. */
static uint64_t jittered(struct membership *m, uint64_t backoff_ms)
{
    return backoff_jitter(backoff_ms, backoff_random(&m->jitter));
}

/* The call failed or was redirected: it goes out again after its
 * back-off (MEMBERSHIP__BACKOFF_MIN_MS doubling up to
 * MEMBERSHIP__CALL_BACKOFF_MAX_MS), from the tick; never at once, so a
 * controller quorum that is down costs a few attempts a second, not a
 * spinning loop. Past its deadline it ends with RC_TIMEOUT. */
static void active_call_retry(struct active_call *ac)
{
    struct membership *m = ac->m;
    uint64_t now = uv_now(m->loop);
    ac->retry_ms = now + jittered(m, ac->backoff_ms);
    ac->backoff_ms = ac->backoff_ms * 2 > MEMBERSHIP__CALL_BACKOFF_MAX_MS
                         ? MEMBERSHIP__CALL_BACKOFF_MAX_MS
                         : ac->backoff_ms * 2;
    if (ac->retry_ms >= ac->deadline_ms) {
        active_call_finish(ac, RC_TIMEOUT, NULL, 0);
        return;
    }
    ac->next = m->retrying;
    m->retrying = ac;
}

/* From the tick: sends the calls whose back-off is over. */
static void active_calls_due(struct membership *m, uint64_t now)
{
    struct active_call **at = &m->retrying;
    while (*at != NULL) {
        struct active_call *ac = *at;
        if (ac->retry_ms > now) {
            at = &ac->next;
            continue;
        }
        *at = ac->next;
        ac->next = NULL;
        int rc = active_call_start(ac);
        if (rc != RC_OK) {
            active_call_finish(ac, rc, NULL, 0);
        }
    }
    send_queued(m); /* room the RPC client's table had not */
}

static void active_call_cb(void *arg, int rc, const uint8_t *payload,
                           size_t len)
{
    struct active_call *ac = arg;
    struct membership *m = ac->m;
    m->pending--;
    m->calls_out--;
    if (m->closing) {
        active_call_finish(ac, RC_CLOSED, NULL, 0);
        maybe_free(m);
        return;
    }
    if (rc == RC_OK && !redirected(m, ac->sent_to, payload, len)) {
        active_call_finish(ac, RC_OK, payload, len);
    } else {
        if (rc != RC_OK) {
            move_on(m, ac->sent_to);
        }
        active_call_retry(ac);
    }
    send_queued(m);
}

int membership_call_active(struct membership *m, const uint8_t *req,
                           size_t len, uint64_t timeout_ms,
                           membership_call_cb cb, void *arg)
{
    struct active_call *ac = calloc(1, sizeof *ac);
    uint8_t *copy = malloc(len == 0 ? 1 : len);
    if (ac == NULL || copy == NULL) {
        free(ac);
        free(copy);
        return RC_NOMEM;
    }
    memcpy(copy, req, len);
    *ac = (struct active_call){.m = m, .req = copy, .len = len,
                               .timeout_ms = timeout_ms,
                               .cb = cb, .arg = arg,
                               .backoff_ms = MEMBERSHIP__BACKOFF_MIN_MS};
    int rv = active_call_start(ac);
    if (rv != RC_OK) {
        free(ac->req);
        free(ac);
    }
    return rv;
}

/* --- Timer, start, stop -------------------------------------------------- */

size_t membership_producer_ids_request(int32_t broker_id,
                                       int64_t broker_epoch, uint8_t *buf,
                                       size_t cap)
{
    Cairn__AllocateProducerIdsRequest ap =
        CAIRN__ALLOCATE_PRODUCER_IDS_REQUEST__INIT;
    ap.has_broker_id = ap.has_broker_epoch = true;
    ap.broker_id = broker_id;
    ap.broker_epoch = broker_epoch;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_ALLOCATE_PRODUCER_IDS;
    cr.allocate_producer_ids = &ap;
    size_t len = cairn__request__get_packed_size(&cr);
    ASSERT(len <= cap);
    cairn__request__pack(&cr, buf);
    return len;
}

bool membership_producer_ids_granted(const uint8_t *resp, size_t len,
                                     int64_t *start, int64_t *n)
{
    Cairn__Response *r = cairn__response__unpack(NULL, len, resp);
    const Cairn__AllocateProducerIdsResponse *blk =
        r != NULL ? r->allocate_producer_ids : NULL;
    bool granted =
        blk != NULL && r->error_code == 0 && blk->producer_id_len > 0;
    if (granted) {
        *start = blk->producer_id_start;
        *n = blk->producer_id_len;
    }
    if (r != NULL) {
        cairn__response__free_unpacked(r, NULL);
    }
    return granted;
}

static void tick_cb(uv_timer_t *handle)
{
    struct membership *m = handle->data;
    uint64_t now = uv_now(m->loop);
    if (m->shutting_down && !m->done && now >= m->shutdown_deadline_ms) {
        TRACE_WARN(m->tracer, "broker=%d no controller confirmed the "
                   "shutdown in time; stopping anyway", m->cfg.broker_id);
        m->done = true;
        m->done_cb(m->arg);
        return;
    }
    if (m->epoch < 0 && !m->registering && now >= m->next_register_ms) {
        send_registration(m);
    }
    if (m->epoch >= 0 && !m->heartbeat_in_flight &&
        now >= m->next_heartbeat_ms) {
        uint64_t every = (uint64_t)m->cfg.heartbeat_interval_ms;
        if (m->shutting_down && every > MEMBERSHIP__SHUTDOWN_HEARTBEAT_MS) {
            every = MEMBERSHIP__SHUTDOWN_HEARTBEAT_MS;
        }
        m->next_heartbeat_ms = now + every;
        send_heartbeat(m);
    }
    if (!m->fetch_in_flight && now >= m->next_fetch_ms) {
        send_fetch(m);
    }
    active_calls_due(m, now);
}

static int make_client(struct membership *m)
{
    char addrs[CONTROLLER_VOTERS_MAX][META_HOST_BYTES_MAX + 8];
    const char *ptrs[CONTROLLER_VOTERS_MAX];
    for (size_t i = 0; i < m->cfg.n_controllers; i++) {
        addr_format(&m->cfg.controllers[i].addr, addrs[i], sizeof addrs[i]);
        ptrs[i] = addrs[i];
    }
    return rpc_client_init(&m->client, m->loop, ptrs, m->cfg.n_controllers,
                           m->tracer);
}

int membership_start(struct membership **out, uv_loop_t *loop,
                     const struct membership_config *cfg,
                     struct tracer *tracer, membership_image_cb image_cb,
                     membership_done_cb done_cb, void *arg)
{
    ASSERT(cfg->n_controllers > 0);
    struct membership *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return RC_NOMEM;
    }
    *m = (struct membership){.loop = loop, .cfg = *cfg, .tracer = tracer,
                             .epoch = -1, .fenced = true,
                             .backoff_ms = MEMBERSHIP__BACKOFF_MIN_MS,
                             .jitter = uv_hrtime() | 1,
                             .image_cb = image_cb, .done_cb = done_cb,
                             .arg = arg};
    meta_image_init(&m->image);
    meta_changes_init(&m->changes);
    m->image.changes = &m->changes;
    m->changes.all = true; /* the first image is all new */
    ssize_t got = getrandom(m->incarnation.b, sizeof m->incarnation.b, 0);
    int rv = got == (ssize_t)sizeof m->incarnation.b ? make_client(m)
                                                      : RC_IO;
    if (rv != RC_OK) {
        meta_image_free(&m->image);
        free(m);
        return rv;
    }
    uv_timer_init(loop, &m->timer);
    m->timer.data = m;
    uv_timer_start(&m->timer, tick_cb, 0, MEMBERSHIP__TICK_MS);
    *out = m;
    return RC_OK;
}

void membership_shutdown(struct membership *m)
{
    if (m->shutting_down) {
        return;
    }
    m->shutting_down = true;
    m->shutdown_deadline_ms = uv_now(m->loop) +
                              (uint64_t)m->cfg.session_timeout_ms;
    m->next_heartbeat_ms = uv_now(m->loop);
    if (m->epoch < 0) {
        m->done = true; /* never registered: nothing to hand over */
        m->done_cb(m->arg);
    }
}

void membership_log_dir_offline(struct membership *m, const char *dir)
{
    snprintf(m->offline_dir, sizeof m->offline_dir, "%s", dir[0] != '\0'
                                                        ? dir : ".");
    m->next_heartbeat_ms = uv_now(m->loop);
    membership_shutdown(m);
}

static void timer_closed_cb(uv_handle_t *handle)
{
    struct membership *m = handle->data;
    m->pending--;
    maybe_free(m);
}

void membership_close(struct membership *m)
{
    ASSERT(!m->closing);
    m->closing = true;
    m->pending++;
    uv_close((uv_handle_t *)&m->timer, timer_closed_cb);
    while (m->retrying != NULL) {
        struct active_call *ac = m->retrying;
        m->retrying = ac->next;
        active_call_finish(ac, RC_CLOSED, NULL, 0);
    }
    while (m->queued != NULL) {
        struct active_call *ac = m->queued;
        m->queued = ac->next;
        active_call_finish(ac, RC_CLOSED, NULL, 0);
    }
    m->queued_tail = NULL;
    rpc_client_close(m->client);
}
