/* Tests for broker/membership.c against three fake controllers: RPC
 * servers on 127.0.0.1 (port 0) that answer like the real ones, the
 * active one registrations, heartbeats and metadata fetches, the others
 * NOT_CONTROLLER naming it. One loop per test; every wait runs the loop
 * under a guard timer, never sleeps. */
#include "broker/membership.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/kafka/kafka_error.h"
#include "common/net/rpc.h"
#include "common/rc.h"
#include "common/trace.h"
#include "rpc.pb-c.h"

#define WAIT_MS 10000
#define CONTROLLERS 3
#define EPOCH 7

/* AlterPartition requests the active controller holds unanswered. */
#define HELD_MAX 4096

struct held_call {
    struct rpc_conn *conn;
    uint64_t cid;
    int32_t partition;
};

struct fake_controller {
    int index;
    int32_t id;
    struct rpc_server *server;
    int n_requests;
    int n_registrations; /* answered, as the active one */
    int n_heartbeats;    /* answered, as the active one */
};

struct fixture {
    uv_loop_t loop;
    uv_timer_t guard;
    bool guard_fired;
    struct tracer tracer;
    struct fake_controller ctl[CONTROLLERS];
    int active; /* index of the active controller */
    struct membership *m;
    struct held_call held[HELD_MAX];
    int n_held;
    int most_held;       /* the most held at once */
    int32_t order_error; /* a partition that arrived out of order, or -1 */
    int32_t next_partition;
};

static struct fixture f;

/* --- Loop helpers -------------------------------------------------------- */

static void guard_cb(uv_timer_t *t)
{
    (void)t;
    f.guard_fired = true;
}

/* Runs the loop until cond holds or max_ms pass (then fails the test). */
#define RUN_UNTIL(cond, max_ms)                                        \
    do {                                                               \
        f.guard_fired = false;                                         \
        cr_assert_eq(uv_timer_start(&f.guard, guard_cb, max_ms, 0), 0); \
        while (!(cond) && !f.guard_fired) {                            \
            (void)uv_run(&f.loop, UV_RUN_ONCE);                        \
        }                                                              \
        (void)uv_timer_stop(&f.guard);                                 \
        cr_assert((cond), "timed out waiting for %s", #cond);          \
    } while (0)

/* --- Fake controllers ---------------------------------------------------- */

static void reply(struct rpc_conn *conn, uint64_t cid,
                  const Cairn__Response *resp)
{
    size_t len = cairn__response__get_packed_size(resp);
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    cr_assert_not_null(buf);
    cairn__response__pack(resp, buf);
    cr_assert_eq(rpc_reply(conn, cid, buf, len), RC_OK);
    free(buf);
}

/* What the active controller answers. */
static void answer_as_active(struct fake_controller *fc,
                             const Cairn__Request *req,
                             Cairn__Response *resp)
{
    static Cairn__BrokerRegistrationResponse reg =
        CAIRN__BROKER_REGISTRATION_RESPONSE__INIT;
    static Cairn__BrokerHeartbeatResponse hb =
        CAIRN__BROKER_HEARTBEAT_RESPONSE__INIT;
    static Cairn__MetadataFetchResponse mf =
        CAIRN__METADATA_FETCH_RESPONSE__INIT;

    switch (req->body_case) {
    case CAIRN__REQUEST__BODY_BROKER_REGISTRATION:
        fc->n_registrations++;
        reg.has_broker_epoch = true;
        reg.broker_epoch = EPOCH;
        resp->body_case = CAIRN__RESPONSE__BODY_BROKER_REGISTRATION;
        resp->broker_registration = &reg;
        break;
    case CAIRN__REQUEST__BODY_BROKER_HEARTBEAT:
        fc->n_heartbeats++;
        hb.has_is_fenced = true;
        hb.is_fenced = false;
        resp->body_case = CAIRN__RESPONSE__BODY_BROKER_HEARTBEAT;
        resp->broker_heartbeat = &hb;
        break;
    case CAIRN__REQUEST__BODY_METADATA_FETCH:
        /* Nothing new: the image stays where it is. */
        mf.has_first_offset = mf.has_end_offset = true;
        mf.first_offset = req->metadata_fetch->from_offset + 1;
        mf.end_offset = req->metadata_fetch->from_offset;
        resp->body_case = CAIRN__RESPONSE__BODY_METADATA_FETCH;
        resp->metadata_fetch = &mf;
        break;
    default:
        cr_assert_fail("unexpected request %d", (int)req->body_case);
    }
}

/* Holds an AlterPartition for release_held(); checks they come in the
 * order they were made. */
static void hold(struct rpc_conn *conn, uint64_t cid,
                 const Cairn__Request *req)
{
    cr_assert_lt(f.n_held, HELD_MAX);
    int32_t partition = req->alter_partition->partition_id;
    if (partition != f.next_partition && f.order_error < 0) {
        f.order_error = partition;
    }
    f.next_partition = partition + 1;
    f.held[f.n_held++] = (struct held_call){conn, cid, partition};
    if (f.n_held > f.most_held) {
        f.most_held = f.n_held;
    }
}

static void release_held(void)
{
    int n = f.n_held;
    f.n_held = 0;
    for (int i = 0; i < n; i++) {
        Cairn__AlterPartitionResponse ap =
            CAIRN__ALTER_PARTITION_RESPONSE__INIT;
        Cairn__Response resp = CAIRN__RESPONSE__INIT;
        resp.body_case = CAIRN__RESPONSE__BODY_ALTER_PARTITION;
        resp.alter_partition = &ap;
        size_t len = cairn__response__get_packed_size(&resp);
        uint8_t buf[64];
        cr_assert_leq(len, sizeof buf);
        cairn__response__pack(&resp, buf);
        cr_assert_eq(rpc_reply(f.held[i].conn, f.held[i].cid, buf, len),
                     RC_OK);
    }
}

static void request_cb(void *arg, struct rpc_conn *conn, uint64_t cid,
                       const uint8_t *payload, size_t len)
{
    struct fake_controller *fc = arg;
    Cairn__Request *req = cairn__request__unpack(NULL, len, payload);
    Cairn__Response resp = CAIRN__RESPONSE__INIT;

    cr_assert_not_null(req);
    fc->n_requests++;
    if (fc->index == f.active &&
        req->body_case == CAIRN__REQUEST__BODY_ALTER_PARTITION) {
        hold(conn, cid, req);
        cairn__request__free_unpacked(req, NULL);
        return;
    }
    if (fc->index == f.active) {
        answer_as_active(fc, req, &resp);
    } else {
        resp.has_error_code = resp.has_controller_id = true;
        resp.error_code = KAFKA_ERROR_NOT_CONTROLLER;
        resp.controller_id = f.ctl[f.active].id;
    }
    reply(conn, cid, &resp);
    cairn__request__free_unpacked(req, NULL);
}

/* --- The broker's side --------------------------------------------------- */

static void image_cb(void *arg, const struct meta_image *img)
{
    (void)arg;
    (void)img;
}

static void done_cb(void *arg)
{
    (void)arg;
}

/* Controllers 101, 102, 103 in that order, the one at index active
 * answering; a membership with a 100 ms heartbeat interval (so that its
 * registration back-off stays at 100 ms, the metadata fetch interval). */
static void start(int active)
{
    struct membership_config cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.broker_id = 1;
    snprintf(cfg.endpoint.host, sizeof cfg.endpoint.host, "127.0.0.1");
    cfg.endpoint.port = 9092;
    cfg.heartbeat_interval_ms = 100;
    cfg.session_timeout_ms = 3000;
    f.active = active;
    for (int i = 0; i < CONTROLLERS; i++) {
        struct fake_controller *fc = &f.ctl[i];
        fc->index = i;
        fc->id = 101 + i;
        cr_assert_eq(rpc_server_start(&fc->server, &f.loop, "127.0.0.1", 0,
                                      request_cb, fc, &f.tracer),
                     RC_OK);
        cfg.controllers[i].id = fc->id;
        snprintf(cfg.controllers[i].addr.host,
                 sizeof cfg.controllers[i].addr.host, "127.0.0.1");
        cfg.controllers[i].addr.port = rpc_server_port(fc->server);
    }
    cfg.n_controllers = CONTROLLERS;
    cr_assert_eq(membership_start(&f.m, &f.loop, &cfg, &f.tracer, image_cb,
                                  done_cb, NULL),
                 RC_OK);
}

/* --- Fixture ------------------------------------------------------------- */

static void quiet_emit_cb(struct tracer *t, enum trace_level level,
                          const char *file, int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    (void)msg;
}

static void setup(void)
{
    memset(&f, 0, sizeof f);
    f.order_error = -1;
    f.tracer.level = TRACE_LEVEL_DEBUG;
    f.tracer.component = "test";
    f.tracer.emit = quiet_emit_cb;
    cr_assert_eq(uv_loop_init(&f.loop), 0);
    cr_assert_eq(uv_timer_init(&f.loop, &f.guard), 0);
}

static void teardown(void)
{
    if (f.m != NULL) {
        membership_close(f.m);
    }
    for (int i = 0; i < CONTROLLERS; i++) {
        if (f.ctl[i].server != NULL) {
            rpc_server_close(f.ctl[i].server);
        }
    }
    uv_close((uv_handle_t *)&f.guard, NULL);
    (void)uv_run(&f.loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&f.loop), 0, "a handle was leaked");
}

TestSuite(membership, .init = setup, .fini = teardown, .timeout = 60);

/* The registration and the first metadata fetch leave on the same tick
 * to controller 101, and both come back NOT_CONTROLLER naming 102. The
 * second answer once undid the first: the target had moved to 102, the
 * answer named 102, so it stepped past it to 103, which named 102 twice
 * in turn and sent the broker back to 101; in step, the two calls
 * circled 101 and 103 without ever reaching the active controller. */
Test(membership, two_calls_redirected_together_reach_the_named_controller)
{
    start(1);
    RUN_UNTIL(f.ctl[1].n_registrations >= 1 && f.ctl[1].n_heartbeats >= 3,
              WAIT_MS);
    /* One round trip each to learn of 102, and nothing since. */
    cr_assert_leq(f.ctl[0].n_requests, 2, "101 was asked %d times",
                  f.ctl[0].n_requests);
    cr_assert_eq(f.ctl[2].n_requests, 0, "103 was asked %d times",
                 f.ctl[2].n_requests);
}

/* The same with the active controller last: 101 names 103, and a second
 * answer must not step past it back to 101. */
Test(membership, a_redirect_to_the_last_controller_is_kept)
{
    start(2);
    RUN_UNTIL(f.ctl[2].n_registrations >= 1 && f.ctl[2].n_heartbeats >= 3,
              WAIT_MS);
    cr_assert_leq(f.ctl[0].n_requests, 2, "101 was asked %d times",
                  f.ctl[0].n_requests);
    cr_assert_eq(f.ctl[1].n_requests, 0, "102 was asked %d times",
                 f.ctl[1].n_requests);
}

/* --- Many calls at once ---------------------------------------------------- */

#define CALLS (3 * (int)RPC_INFLIGHT_MAX)

static struct {
    int answered;
    int failed;
    int32_t out_of_order; /* -1, or the first call answered out of turn */
} calls;

static void call_cb(void *arg, int rc, const uint8_t *resp, size_t len)
{
    (void)resp;
    (void)len;
    int32_t i = (int32_t)(intptr_t)arg;
    if (rc != RC_OK) {
        calls.failed++;
    } else if (i != calls.answered && calls.out_of_order < 0) {
        calls.out_of_order = i;
    }
    calls.answered += rc == RC_OK;
}

static int call(int32_t partition)
{
    Cairn__AlterPartitionRequest ap = CAIRN__ALTER_PARTITION_REQUEST__INIT;
    ap.has_partition_id = true;
    ap.partition_id = partition;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_ALTER_PARTITION;
    req.alter_partition = &ap;
    uint8_t buf[64];
    size_t len = cairn__request__get_packed_size(&req);
    cr_assert_leq(len, sizeof buf);
    cairn__request__pack(&req, buf);
    return membership_call_active(f.m, buf, len, 5000, call_cb,
                                  (void *)(intptr_t)partition);
}

/* A leader taking a restarted broker back into the ISRs of thousands of
 * partitions calls the controller once for each, at once. Calls beyond
 * what may be out wait their turn (they once failed at once, RC_FULL,
 * and waited for the next ISR check), in order; and those out leave the
 * RPC table room for the heartbeats, which go on while the controller
 * sits on every call. */
Test(membership, calls_beyond_the_rpc_table_wait_their_turn_beside_heartbeats)
{
    calls.answered = calls.failed = 0;
    calls.out_of_order = -1;
    start(0);
    RUN_UNTIL(f.ctl[0].n_registrations >= 1, WAIT_MS);
    for (int32_t i = 0; i < CALLS; i++) {
        cr_assert_eq(call(i), RC_OK, "call %d", i);
    }
    int rounds = 0;
    while (calls.answered + calls.failed < CALLS) {
        RUN_UNTIL(f.n_held > 0 && (f.n_held == (int)RPC_INFLIGHT_MAX / 2 ||
                                   f.n_held + calls.answered == CALLS),
                  WAIT_MS);
        int heartbeats = f.ctl[0].n_heartbeats;
        RUN_UNTIL(f.ctl[0].n_heartbeats >= heartbeats + 2, WAIT_MS);
        release_held();
        int target = calls.answered + (int)RPC_INFLIGHT_MAX / 2;
        RUN_UNTIL(calls.answered + calls.failed >=
                      (target < CALLS ? target : CALLS),
                  WAIT_MS);
        rounds++;
        cr_assert_lt(rounds, 100);
    }
    cr_assert_eq(calls.failed, 0);
    cr_assert_eq(calls.answered, CALLS);
    cr_assert_eq(calls.out_of_order, -1, "call %d answered out of turn",
                 calls.out_of_order);
    cr_assert_eq(f.order_error, -1, "call %d arrived out of turn",
                 f.order_error);
    cr_assert_leq(f.most_held, (int)RPC_INFLIGHT_MAX / 2);
}
