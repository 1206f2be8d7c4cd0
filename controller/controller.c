/* The controller process core (controller/controller.h): Raft set-up,
 * leadership tracking, the request queue and shutdown. */
#include "controller/controller_internal.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/raft_transport.h"

#define CONTROLLER__TICK_MS 50
#define CONTROLLER__QUEUE_MAX 10000 /* requests waiting; beyond: an error */
#define CONTROLLER__ELECTION_RETRY_MS 1000

uint64_t controller_now_ms(const struct controller *c)
{
    return uv_now(c->loop);
}

void ctl_op_free(struct ctl_op *op)
{
    while (op->riders != NULL) {
        struct ctl_op *r = op->riders;
        op->riders = r->riders;
        r->riders = NULL;
        ctl_op_free(r);
    }
    if (op->conn != NULL) {
        rpc_conn_unref(op->conn);
    }
    if (op->req != NULL) {
        cairn__request__free_unpacked(op->req, NULL);
    }
    free(op->topic_results);
    free(op->topic_ids);
    free(op->errors);
    free(op->partitions_results);
    free(op->config_results);
    free(op->events);
    handlers_elect_free(op->elect);
    free(op);
}

void controller_reply(struct controller *c, struct ctl_op *op,
                      Cairn__Response *resp)
{
    if (op->conn == NULL || !rpc_conn_is_open(op->conn)) {
        return;
    }
    if (op->req != NULL) {
        /* A queued request is answered after its records applied (or
         * planned against this image when it writes none): the answer
         * reflects the image up to here. */
        resp->has_metadata_offset = true;
        resp->metadata_offset = c->fsm.image.offset;
    }
    size_t len = cairn__response__get_packed_size(resp);
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    if (buf == NULL) {
        TRACE_ERROR(c->tracer, "no memory for a %zu-byte answer", len);
        return;
    }
    cairn__response__pack(resp, buf);
    int rv = rpc_reply(op->conn, op->correlation_id, buf, len);
    if (rv != RC_OK && rv != RC_CLOSED) {
        TRACE_WARN(c->tracer, "peer=%s answer not sent: %s",
                   rpc_conn_peer(op->conn), rc_str(rv));
    }
    free(buf);
}

static int32_t leader_id(struct controller *c)
{
    raft_id id = 0;
    const char *address = NULL;
    raft_leader(&c->raft, &id, &address);
    return (int32_t)id;
}

void controller_reply_error(struct controller *c, struct ctl_op *op,
                            int16_t error, const char *message)
{
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.has_error_code = true;
    resp.error_code = error;
    resp.error_message = (char *)(uintptr_t)message;
    if (error == KAFKA_ERROR_NOT_CONTROLLER) {
        int32_t leader = leader_id(c);
        resp.has_controller_id = leader > 0;
        resp.controller_id = leader;
    }
    controller_reply(c, op, &resp);
}

/* --- The queue ----------------------------------------------------------- */

static void kick(struct controller *c);
static void check_sessions(struct controller *c);

static void apply_cb(struct raft_apply *req, int status, void *result)
{
    struct controller *c = req->data;
    struct ctl_op *op = c->in_flight;
    ASSERT(op != NULL);
    c->in_flight = NULL;
    if (status == 0) {
        controller_events_log(c, op->events);
        for (struct ctl_op *o = op; o != NULL; o = o->riders) {
            handlers_committed(c, o, result);
        }
    } else {
        /* NOTLEADER, or LEADERSHIPLOST: the outcome is unknown, and a
         * retry against the new active controller is safe (every request
         * is idempotent or carries the epochs it expects). */
        TRACE_INFO(c->tracer, "proposal not committed here: %s",
                   raft_strerror(status));
        for (struct ctl_op *o = op; o != NULL; o = o->riders) {
            controller_reply_error(c, o, KAFKA_ERROR_NOT_CONTROLLER,
                                   "leadership lost; retry");
        }
    }
    bool fenced = op->fence && status == 0;
    if (op->fence || op->elect_leaderless || op->rebalance) {
        c->fence_queued = false;
    }
    ctl_op_free(op);
    if (fenced && c->active) {
        /* A fence of a broker in more ISRs than one entry holds goes on
         * at once, not at the next tick: its leaderships wait for it. */
        check_sessions(c);
    }
    kick(c);
}

int controller_propose(struct controller *c, struct ctl_op *op,
                       const struct plan_records *recs)
{
    ASSERT(c->in_flight == NULL);
    struct raft_buffer buf;
    int rv = meta_fsm_encode_entry(recs->recs, recs->n, &buf);
    if (rv != RC_OK) {
        return rv;
    }
    free(op->events);
    op->events = controller_events(c, op, recs);
    c->apply_req.data = c;
    c->in_flight = op;
    c->n_proposals++;
    rv = raft_apply(&c->raft, &c->apply_req, &buf, 1, apply_cb);
    if (rv != 0) {
        c->in_flight = NULL;
        raft_free(buf.base);
        TRACE_INFO(c->tracer, "raft_apply: %s", raft_strerror(rv));
        return RC_BUSY;
    }
    return RC_OK;
}

static void fail_queue(struct controller *c, int16_t error, const char *msg)
{
    while (c->queue_head != NULL) {
        struct ctl_op *op = c->queue_head;
        c->queue_head = op->next;
        controller_reply_error(c, op, error, msg);
        ctl_op_free(op);
    }
    c->queue_tail = NULL;
    c->queue_len = 0;
    c->fence_queued = false;
}

static void run_queue(struct controller *c)
{
    while (c->in_flight == NULL && c->queue_head != NULL) {
        struct ctl_op *op = c->queue_head;
        c->queue_head = op->next;
        if (c->queue_head == NULL) {
            c->queue_tail = NULL;
        }
        c->queue_len--;
        if (!c->active) {
            controller_reply_error(c, op, KAFKA_ERROR_NOT_CONTROLLER,
                                   "not the active controller");
            ctl_op_free(op);
            continue;
        }
        if (!handlers_run(c, op)) {
            if (op->fence || op->elect_leaderless || op->rebalance) {
                c->fence_queued = false;
            }
            ctl_op_free(op);
        }
    }
}

struct ctl_op *controller_take_next(struct controller *c, int body_case)
{
    struct ctl_op *op = c->queue_head;
    if (op == NULL || op->req == NULL ||
        (int)op->req->body_case != body_case) {
        return NULL;
    }
    c->queue_head = op->next;
    if (c->queue_head == NULL) {
        c->queue_tail = NULL;
    }
    c->queue_len--;
    op->next = NULL;
    return op;
}

static void kick_cb(uv_idle_t *handle)
{
    struct controller *c = handle->data;
    uv_idle_stop(handle);
    run_queue(c);
}

static void kick(struct controller *c)
{
    if (!c->stopping) {
        uv_idle_start(&c->kick, kick_cb);
    }
}

static void enqueue(struct controller *c, struct ctl_op *op)
{
    if (c->queue_len >= CONTROLLER__QUEUE_MAX) {
        controller_reply_error(c, op, KAFKA_ERROR_REQUEST_TIMED_OUT,
                               "controller queue full");
        ctl_op_free(op);
        return;
    }
    op->next = NULL;
    if (c->queue_tail != NULL) {
        c->queue_tail->next = op;
    } else {
        c->queue_head = op;
    }
    c->queue_tail = op;
    c->queue_len++;
    kick(c);
}

void controller_requeue(struct controller *c, struct ctl_op *op)
{
    enqueue(c, op);
}

/* --- Requests ------------------------------------------------------------ */

static void request_cb(void *arg, struct rpc_conn *conn,
                       uint64_t correlation_id, const uint8_t *payload,
                       size_t len)
{
    struct controller *c = arg;
    Cairn__Request *req = cairn__request__unpack(NULL, len, payload);
    if (req == NULL) {
        struct ctl_op tmp = {.conn = conn, .correlation_id = correlation_id};
        TRACE_WARN(c->tracer, "peer=%s malformed request of %zu bytes",
                   rpc_conn_peer(conn), len);
        controller_reply_error(c, &tmp, KAFKA_ERROR_INVALID_REQUEST,
                               "malformed request");
        return;
    }
    switch (req->body_case) {
    case CAIRN__REQUEST__BODY_METADATA_FETCH:
        handlers_metadata_fetch(c, conn, correlation_id,
                                req->metadata_fetch);
        cairn__request__free_unpacked(req, NULL);
        return;
    case CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER:
        handlers_describe_cluster(c, conn, correlation_id);
        cairn__request__free_unpacked(req, NULL);
        return;
    case CAIRN__REQUEST__BODY_LIST_REASSIGNMENTS:
        handlers_list_reassignments(c, conn, correlation_id,
                                    req->list_reassignments);
        cairn__request__free_unpacked(req, NULL);
        return;
    default:
        break;
    }
    struct ctl_op *op = calloc(1, sizeof *op);
    if (op == NULL) {
        cairn__request__free_unpacked(req, NULL);
        return; /* the client times out and retries */
    }
    rpc_conn_ref(conn);
    op->conn = conn;
    op->correlation_id = correlation_id;
    op->req = req;
    if (!c->active) {
        controller_reply_error(c, op, KAFKA_ERROR_NOT_CONTROLLER,
                               "not the active controller");
        ctl_op_free(op);
        return;
    }
    if (req->body_case == CAIRN__REQUEST__BODY_BROKER_HEARTBEAT) {
        /* Heard from now, not when the queue reaches it: behind
         * thousands of ISR changes (a broker rejoining many partitions)
         * a heartbeat can wait longer than a session, and the broker
         * would be fenced for the controller's own backlog. */
        handlers_heard(c, req->broker_heartbeat->broker_id,
                       req->broker_heartbeat->broker_epoch);
        if (handlers_heartbeat_at_once(c, op)) {
            ctl_op_free(op);
            return;
        }
    }
    enqueue(c, op);
}

/* --- Leadership and duties ----------------------------------------------- */

static void barrier_cb(struct raft_barrier *req, int status)
{
    struct controller *c = req->data;
    c->barrier_pending = false;
    if (status != 0 || raft_state(&c->raft) != RAFT_LEADER || c->stopping) {
        return;
    }
    c->active = true;
    sessions_reset(&c->sessions, &c->fsm.image, controller_now_ms(c));
    c->next_rebalance_ms = controller_now_ms(c) +
                           (uint64_t)c->cfg.leader_imbalance_check_interval_ms;
    TRACE_INFO(c->tracer, "node=%d is the active controller at term=%llu "
               "metadata offset=%" PRId64, c->cfg.node_id,
               (unsigned long long)c->raft.current_term,
               c->fsm.image.offset);
    TRACE_INFO(c->tracer, "event: controller %d elected at term %llu (Raft "
               "leader of the quorum, its metadata applied to offset %"
               PRId64 ")", c->cfg.node_id,
               (unsigned long long)c->raft.current_term, c->fsm.image.offset);
    kick(c);
}

static void queue_duty(struct controller *c, int32_t fence, bool elect)
{
    struct ctl_op *op = calloc(1, sizeof *op);
    if (op == NULL) {
        return; /* tried again next tick */
    }
    op->fence = fence >= 0;
    op->fence_broker = fence;
    op->elect_leaderless = elect;
    c->fence_queued = true;
    enqueue(c, op);
}

static void check_sessions(struct controller *c)
{
    if (c->fence_queued) {
        return;
    }
    int32_t id = sessions_next_expired(&c->sessions, &c->fsm.image,
                                       controller_now_ms(c),
                                       (uint64_t)c->cfg.session_timeout_ms);
    if (id >= 0) { /* -1: none lapsed; 0 is a valid node.id */
        TRACE_WARN(c->tracer, "broker=%d session expired after %" PRId64
                   " ms; fencing it", id, (uint64_t)c->cfg.session_timeout_ms);
        queue_duty(c, id, false);
    }
}

/* Offline partitions whose leader may now be elected, as a duty this
 * often: an unfence elects at most a batch's worth of its partitions
 * (META_BATCH_RECORDS_MAX records), and a partition may become electable
 * later (a topic's unclean.leader.election.enable set, say). */
static void check_elections(struct controller *c)
{
    uint64_t now = controller_now_ms(c);
    if (c->fence_queued || now < c->next_election_ms) {
        return;
    }
    c->next_election_ms = now + CONTROLLER__ELECTION_RETRY_MS;
    queue_duty(c, -1, true);
}

/* auto.leader.rebalance.enable: every leader.imbalance.check.interval,
 * the preferred-leader check (controller/plan_elect.h), as a duty. */
static void check_imbalance(struct controller *c)
{
    uint64_t now = controller_now_ms(c);
    if (!c->cfg.auto_leader_rebalance || c->fence_queued ||
        now < c->next_rebalance_ms) {
        return;
    }
    c->next_rebalance_ms =
        now + (uint64_t)c->cfg.leader_imbalance_check_interval_ms;
    struct ctl_op *op = calloc(1, sizeof *op);
    if (op == NULL) {
        return; /* the next interval tries again */
    }
    op->rebalance = true;
    c->fence_queued = true;
    enqueue(c, op);
}

static void tick_cb(uv_timer_t *handle)
{
    struct controller *c = handle->data;
    int state = raft_state(&c->raft);
    if (state == RAFT_UNAVAILABLE && !c->stopping) {
        /* libraft stopped this voter (a failed write it could not take
         * back, say): it would stay up a vote short in silence. It stops,
         * as on a failed metadata dir, to be started again. */
        TRACE_ERROR(c->tracer, "controller=%d stopped: libraft is no longer "
                    "available (RAFT_UNAVAILABLE); start it again",
                    (int)c->cfg.node_id);
        trace_batch_flush(); /* _exit() runs no atexit handler */
        _exit(CONTROLLER_EXIT_METADATA_DIR_FAILED);
    }
    if (state == RAFT_LEADER) {
        if (!c->active && !c->barrier_pending) {
            c->barrier.data = c;
            if (raft_barrier(&c->raft, &c->barrier, barrier_cb) == 0) {
                c->barrier_pending = true;
            }
        }
    } else if (c->active) {
        c->active = false;
        TRACE_INFO(c->tracer, "node=%d is no longer the active controller",
                   c->cfg.node_id);
        TRACE_INFO(c->tracer, "event: controller %d stepped down at term "
                   "%llu (no longer the Raft leader)", c->cfg.node_id,
                   (unsigned long long)c->raft.current_term);
        fail_queue(c, KAFKA_ERROR_NOT_CONTROLLER, "leadership lost");
    }
    if (c->active) {
        check_sessions(c);
        check_elections(c);
        check_imbalance(c);
    }
}

/* --- Start and stop ------------------------------------------------------ */

/* libraft (uv_segment.c) renames a closed segment whose checksums do not
 * match to "corrupt-<time>-<name>" and goes on with the log cut before
 * it. A voter that forgets entries it acknowledged can lose committed
 * metadata if another voter is down, so a controller with such a file
 * does not start: the operator rebuilds it from its peers. */
static int refuse_if_damaged(struct controller *c)
{
    DIR *d = opendir(c->cfg.metadata_dir);
    if (d == NULL) {
        return RC_OK; /* raft_start read it; nothing more to look at */
    }
    int rv = RC_OK;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (strncmp(e->d_name, "corrupt-", 8) == 0) {
            TRACE_ERROR(c->tracer, "metadata dir %s holds a damaged Raft "
                        "log segment (%s): refusing to start (see the "
                        "README, \"A damaged controller\", to rebuild it "
                        "from its peers)", c->cfg.metadata_dir, e->d_name);
            rv = RC_CORRUPT;
            break;
        }
    }
    closedir(d);
    return rv;
}


/* libraft could not write the metadata log (controller/raft_io_guard.h):
 * a controller that cannot write is a vote short in silence, and as
 * leader it can hold up the quorum. It stops, with one line, as a broker
 * whose log dir fails does; the other two go on. */
static void metadata_dir_failed(void *arg, const char *what, int status)
{
    struct controller *c = arg;
    TRACE_ERROR(c->tracer, "controller=%d stopped: %s in metadata.log.dir=%s "
                "failed (%s); replace or repair the disk, then start it "
                "again, empty, to copy the log from its peers (README, \"A "
                "damaged controller\")", (int)c->cfg.node_id, what,
                c->cfg.metadata_dir, raft_strerror(status));
    trace_batch_flush(); /* _exit() runs no atexit handler */
    _exit(CONTROLLER_EXIT_METADATA_DIR_FAILED);
}

/* The libraft I/O: our transport between the voters, libraft's libuv
 * storage in metadata.log.dir. */
static int open_raft_io(struct controller *c)
{
    struct raft_transport_config tcfg = {
        .secret = c->cfg.raft_secret,
        .voters = c->cfg.raft_voters,
        .n_voters = c->cfg.n_voters,
    };
    int rv = raft_transport_init(&c->transport, c->loop, &tcfg, c->tracer);
    if (rv != RC_OK) {
        TRACE_ERROR(c->tracer, "raft transport: %s (the secret must be %d "
                    "to %d characters, every voter's address must resolve)",
                    rc_str(rv), RAFT_TRANSPORT_SECRET_BYTES_MIN,
                    RAFT_TRANSPORT_SECRET_BYTES_MAX);
        return rv;
    }
    if (raft_uv_init(&c->io, c->loop, c->cfg.metadata_dir, &c->transport) !=
        0) {
        TRACE_ERROR(c->tracer, "raft I/O set-up failed for %s in %s",
                    c->raft_address, c->cfg.metadata_dir);
        raft_transport_free(&c->transport);
        return RC_IO;
    }
    return RC_OK;
}

/* A first start writes the configured voters as the cluster's first
 * configuration; a later one finds a log and bootstraps nothing. */
static int bootstrap_voters(struct controller *c)
{
    struct raft_configuration conf;
    raft_configuration_init(&conf);
    for (size_t i = 0; i < c->cfg.n_voters; i++) {
        char address[META_HOST_BYTES_MAX + 8];
        addr_format(&c->cfg.raft_voters[i].addr, address, sizeof address);
        int rv = raft_configuration_add(&conf,
                                        (raft_id)c->cfg.raft_voters[i].id,
                                        address, RAFT_VOTER);
        ASSERT(rv == 0);
    }
    int rv = raft_bootstrap(&c->raft, &conf);
    raft_configuration_close(&conf);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) {
        TRACE_ERROR(c->tracer, "raft_bootstrap: %s", raft_strerror(rv));
        return RC_IO;
    }
    return RC_OK;
}

static int start_raft(struct controller *c)
{
    const struct addr_voter *me = NULL;
    for (size_t i = 0; i < c->cfg.n_voters; i++) {
        if (c->cfg.raft_voters[i].id == c->cfg.node_id) {
            me = &c->cfg.raft_voters[i];
        }
    }
    if (me == NULL) {
        TRACE_ERROR(c->tracer, "node.id=%d is not among the raft voters",
                    c->cfg.node_id);
        return RC_CONFIG;
    }
    addr_format(&me->addr, c->raft_address, sizeof c->raft_address);
    int rv = file_mkdirs(c->cfg.metadata_dir);
    if (rv != RC_OK) {
        TRACE_ERROR(c->tracer, "metadata.log.dir=%s: cannot create it",
                    c->cfg.metadata_dir);
        return rv;
    }
    rv = open_raft_io(c);
    if (rv != RC_OK) {
        return rv;
    }
    raft_io_guard_init(&c->guard, &c->io, c->cfg.metadata_dir,
                       metadata_dir_failed, c);
    raft_reply_clamp_init(&c->clamp, &c->guard.io);
    rv = raft_init(&c->raft, &c->clamp.io, &c->fsm.raft_fsm,
                   (raft_id)c->cfg.node_id, c->raft_address);
    if (rv != 0) {
        TRACE_ERROR(c->tracer, "raft_init: %s", raft_strerror(rv));
        return RC_IO;
    }
    raft_reply_clamp_bind(&c->clamp);
    raft_io_guard_bind(&c->guard);
    rv = bootstrap_voters(c);
    if (rv != RC_OK) {
        return rv;
    }
    unsigned election = (unsigned)c->cfg.election_timeout_ms;
    raft_set_election_timeout(&c->raft, election);
    raft_set_heartbeat_timeout(&c->raft, election / 10 > 0 ? election / 10
                                                           : 1);
    raft_set_pre_vote(&c->raft, true);
    raft_set_snapshot_threshold(&c->raft, 1024);
    raft_set_snapshot_trailing(&c->raft, 512);
    rv = raft_start(&c->raft);
    if (rv != 0) {
        TRACE_ERROR(c->tracer, "raft_start: %s: the Raft log or snapshot in "
                    "%s is damaged or unreadable; refusing to start (see "
                    "the README, \"A damaged controller\", to rebuild it "
                    "from its peers)", raft_strerror(rv),
                    c->cfg.metadata_dir);
        return RC_CORRUPT;
    }
    return refuse_if_damaged(c);
}

int controller_start(struct controller **out, uv_loop_t *loop,
                     const struct controller_config *cfg,
                     struct tracer *tracer)
{
    struct controller *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return RC_NOMEM;
    }
    c->loop = loop;
    c->cfg = *cfg;
    c->tracer = tracer;
    sessions_init(&c->sessions);
    int rv = meta_fsm_init(&c->fsm, tracer);
    if (rv == RC_OK) {
        rv = start_raft(c);
    }
    if (rv == RC_OK) {
        rv = rpc_server_start(&c->server, loop, cfg->listener.host,
                              cfg->listener.port, request_cb, c, tracer);
        if (rv != RC_OK) {
            TRACE_ERROR(tracer, "listeners=%s:%d: %s", cfg->listener.host,
                        cfg->listener.port, rc_str(rv));
        }
    }
    if (rv != RC_OK) {
        /* A half-started Raft cannot be unwound; the process exits. */
        return rv;
    }
    uv_timer_init(loop, &c->tick);
    c->tick.data = c;
    uv_timer_start(&c->tick, tick_cb, CONTROLLER__TICK_MS,
                   CONTROLLER__TICK_MS);
    uv_idle_init(loop, &c->kick);
    c->kick.data = c;
    TRACE_INFO(tracer, "controller node=%d raft=%s rpc=%s:%d voters=%zu",
               cfg->node_id, c->raft_address, cfg->listener.host,
               cfg->listener.port, cfg->n_voters);
    *out = c;
    return RC_OK;
}

static void handle_closed_cb(uv_handle_t *handle)
{
    struct controller *c = handle->data;
    if (--c->handles_open > 0) {
        return;
    }
    meta_fsm_close(&c->fsm);
    void (*cb)(void *) = c->stop_cb;
    void *arg = c->stop_arg;
    free(c);
    if (cb != NULL) {
        cb(arg);
    }
}

_Static_assert(sizeof ((struct controller_config *)0)->raft_secret ==
                   RAFT_TRANSPORT_SECRET_BYTES_MAX + 1,
               "room for the longest secret");

static void raft_closed_cb(struct raft *r)
{
    struct controller *c = r->data;
    raft_uv_close(&c->io);
    raft_transport_free(&c->transport);
    c->handles_open = 2;
    uv_close((uv_handle_t *)&c->tick, handle_closed_cb);
    uv_close((uv_handle_t *)&c->kick, handle_closed_cb);
}

void controller_stop(struct controller *c, void (*cb)(void *arg), void *arg)
{
    ASSERT(!c->stopping);
    c->stopping = true;
    c->active = false;
    c->stop_cb = cb;
    c->stop_arg = arg;
    uv_timer_stop(&c->tick);
    uv_idle_stop(&c->kick);
    fail_queue(c, KAFKA_ERROR_NOT_CONTROLLER, "controller stopping");
    rpc_server_close(c->server);
    c->raft.data = c;
    raft_close(&c->raft, raft_closed_cb);
}
