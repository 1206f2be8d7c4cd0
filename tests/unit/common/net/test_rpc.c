/* Tests for common/net/rpc.c over real sockets on 127.0.0.1 (port 0, so tests
 * run in parallel): round trips, correlation of out-of-order replies,
 * delayed replies through a kept reference, timeouts, server restarts,
 * hostile frames from a raw TCP peer, the in-flight and outbox bounds, and
 * an 8 MiB payload. One loop per test; every wait runs the loop under a
 * guard timer, never sleeps. */
#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/net/rpc.h"
#include "common/trace.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#define WAIT_MS 10000
#define HELD_MAX 512
#define RAW_IN_BYTES 4096
#define BIG_BYTES (8u * 1024 * 1024)
#define OUTBOX_REPLY_BYTES (1u * 1024 * 1024)

enum mode {
    MODE_ECHO,   /* reply at once with the request's bytes */
    MODE_SILENT, /* count, never reply */
    MODE_HOLD,   /* keep a ref and the request; the test replies */
    MODE_DELAY,  /* keep a ref; reply from a timer */
    MODE_FLOOD   /* reply 1 MiB frames until the outbox bound trips */
};

struct held {
    struct rpc_conn *conn;
    uint64_t cid;
    uint8_t payload[16];
    size_t len;
};

struct result {
    bool done;
    int n_calls;
    int rc;
    uint8_t *payload; /* a copy; freed by the test */
    size_t len;
};

struct fixture {
    uv_loop_t loop;
    uv_timer_t guard;
    bool guard_fired;
    uv_timer_t delay;
    struct tracer tracer;
    int n_warnings;
    char last_warning[TRACE_LINE_BYTES_MAX];
    struct rpc_server *server;
    struct rpc_client *client;
    enum mode mode;
    int n_requests;
    int n_requests_by[2];
    int server_ids[2];
    struct held held[HELD_MAX];
    size_t n_held;
    int delay_rc;
    int flood_rc;
    int n_flood_replies;
};

static struct fixture f;

/* --- Loop helpers -------------------------------------------------------- */

static void guard_cb(uv_timer_t *t)
{
    (void)t;
    f.guard_fired = true;
}

static void guard_start(uint64_t ms)
{
    f.guard_fired = false;
    cr_assert_eq(uv_timer_start(&f.guard, guard_cb, ms, 0), 0);
}

/* Runs the loop until cond holds or max_ms pass (then fails the test). */
#define RUN_UNTIL(cond, max_ms)                                        \
    do {                                                               \
        guard_start(max_ms);                                           \
        while (!(cond) && !f.guard_fired) {                            \
            (void)uv_run(&f.loop, UV_RUN_ONCE);                        \
        }                                                              \
        (void)uv_timer_stop(&f.guard);                                 \
        cr_assert((cond), "timed out waiting for %s", #cond);          \
    } while (0)

/* Runs the loop for ms, whatever happens. */
static void run_for(uint64_t ms)
{
    guard_start(ms);
    while (!f.guard_fired) {
        (void)uv_run(&f.loop, UV_RUN_ONCE);
    }
}

/* Runs until nothing but the (unreferenced) guard is left. */
static void drain(void)
{
    guard_start(WAIT_MS);
    uv_unref((uv_handle_t *)&f.guard);
    while (uv_loop_alive(&f.loop) && !f.guard_fired) {
        (void)uv_run(&f.loop, UV_RUN_ONCE);
    }
    uv_ref((uv_handle_t *)&f.guard);
    (void)uv_timer_stop(&f.guard);
    cr_assert(!f.guard_fired, "loop did not drain");
}

/* --- Tracer -------------------------------------------------------------- */

static void capture_emit_cb(struct tracer *t, enum trace_level level,
                            const char *file, int line, const char *msg)
{
    (void)t;
    (void)file;
    (void)line;
    if (level >= TRACE_LEVEL_WARN) {
        f.n_warnings++;
        snprintf(f.last_warning, sizeof f.last_warning, "%s", msg);
    }
}

/* --- Server side --------------------------------------------------------- */

static void hold(struct rpc_conn *conn, uint64_t cid, const uint8_t *p,
                 size_t len)
{
    struct held *h;

    cr_assert_lt(f.n_held, HELD_MAX);
    cr_assert_leq(len, sizeof h->payload);
    h = &f.held[f.n_held++];
    rpc_conn_ref(conn);
    h->conn = conn;
    h->cid = cid;
    h->len = len;
    memcpy(h->payload, p, len);
}

static void release_held(void)
{
    for (size_t i = 0; i < f.n_held; i++) {
        rpc_conn_unref(f.held[i].conn);
    }
    f.n_held = 0;
}

static void delay_cb(uv_timer_t *t)
{
    struct held *h = &f.held[0];

    (void)t;
    f.delay_rc = rpc_reply(h->conn, h->cid, h->payload, h->len);
    release_held();
}

static void flood(struct rpc_conn *conn, uint64_t cid)
{
    static uint8_t big[OUTBOX_REPLY_BYTES];
    int limit = (int)(RPC_CONN_OUTBOX_BYTES_MAX / OUTBOX_REPLY_BYTES) + 64;

    f.flood_rc = RC_OK;
    for (int i = 0; i < limit && f.flood_rc == RC_OK; i++) {
        f.flood_rc = rpc_reply(conn, cid, big, sizeof big);
        f.n_flood_replies++;
    }
}

static void request_cb(void *arg, struct rpc_conn *conn, uint64_t cid,
                       const uint8_t *payload, size_t len)
{
    int id = *(int *)arg;

    f.n_requests++;
    f.n_requests_by[id]++;
    cr_assert(rpc_conn_is_open(conn));
    switch (f.mode) {
    case MODE_ECHO:
        cr_assert_eq(rpc_reply(conn, cid, payload, len), RC_OK);
        break;
    case MODE_SILENT:
        break;
    case MODE_HOLD:
        hold(conn, cid, payload, len);
        break;
    case MODE_DELAY:
        hold(conn, cid, payload, len);
        cr_assert_eq(uv_timer_start(&f.delay, delay_cb, 50, 0), 0);
        break;
    case MODE_FLOOD:
        flood(conn, cid);
        break;
    }
}

static int server_start(struct rpc_server **out, int id, int port)
{
    f.server_ids[id] = id;
    return rpc_server_start(out, &f.loop, "127.0.0.1", port, request_cb,
                            &f.server_ids[id], &f.tracer);
}

/* --- Client side --------------------------------------------------------- */

static void response_cb(void *arg, int rc, const uint8_t *payload,
                        size_t len)
{
    struct result *r = arg;

    r->n_calls++;
    r->done = true;
    r->rc = rc;
    if (rc == RC_OK && len > 0) {
        r->payload = malloc(len);
        cr_assert_not_null(r->payload);
        memcpy(r->payload, payload, len);
    }
    r->len = len;
    if (rc != RC_OK) {
        cr_assert_null(payload);
        cr_assert_eq(len, 0);
    }
}

static void client_init_port(int port)
{
    char addr[64];
    const char *addrs[] = {addr};

    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    cr_assert_eq(rpc_client_init(&f.client, &f.loop, addrs, 1, &f.tracer),
                 RC_OK);
}

/* Server in `mode` plus a client pointed at it. */
static void start_pair(enum mode mode)
{
    f.mode = mode;
    cr_assert_eq(server_start(&f.server, 0, 0), RC_OK);
    client_init_port(rpc_server_port(f.server));
}

static void call(int target, const void *p, size_t len, uint64_t timeout_ms,
                 struct result *r)
{
    cr_assert_eq(rpc_client_call(f.client, target, p, len, timeout_ms,
                                 response_cb, r),
                 RC_OK);
}

static void expect_echo(const struct result *r, const void *p, size_t len)
{
    cr_assert(r->done);
    cr_assert_eq(r->n_calls, 1);
    cr_assert_eq(r->rc, RC_OK, "rc=%s", rc_str(r->rc));
    cr_assert_eq(r->len, len);
    cr_assert(len == 0 || memcmp(r->payload, p, len) == 0);
}

static bool all_done(const struct result *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!r[i].done) {
            return false;
        }
    }
    return true;
}

static void echo_once(void)
{
    struct result r = {0};

    call(-1, "ping", 4, WAIT_MS, &r);
    RUN_UNTIL(r.done, WAIT_MS);
    expect_echo(&r, "ping", 4);
    free(r.payload);
}

/* --- Fixture ------------------------------------------------------------- */

static void setup(void)
{
    memset(&f, 0, sizeof f);
    f.tracer.level = TRACE_LEVEL_DEBUG;
    f.tracer.component = "test";
    f.tracer.emit = capture_emit_cb;
    cr_assert_eq(uv_loop_init(&f.loop), 0);
    cr_assert_eq(uv_timer_init(&f.loop, &f.guard), 0);
    cr_assert_eq(uv_timer_init(&f.loop, &f.delay), 0);
}

static void teardown(void)
{
    if (f.client != NULL) {
        rpc_client_close(f.client);
    }
    if (f.server != NULL) {
        rpc_server_close(f.server);
    }
    release_held();
    uv_close((uv_handle_t *)&f.delay, NULL);
    drain();
    uv_close((uv_handle_t *)&f.guard, NULL);
    (void)uv_run(&f.loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&f.loop), 0, "a handle was leaked");
}

TestSuite(rpc, .init = setup, .fini = teardown, .timeout = 60);

/* --- Round trips --------------------------------------------------------- */

Test(rpc, echo_round_trip)
{
    struct result r = {0};
    struct result empty = {0};

    start_pair(MODE_ECHO);
    cr_assert_eq(rpc_client_n_targets(f.client), 1);
    call(0, "hello", 5, WAIT_MS, &r);
    call(0, NULL, 0, WAIT_MS, &empty);
    RUN_UNTIL(r.done && empty.done, WAIT_MS);
    expect_echo(&r, "hello", 5);
    expect_echo(&empty, NULL, 0);
    cr_assert_eq(f.n_requests, 2);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
    free(r.payload);
}

Test(rpc, concurrent_calls_matched_by_correlation_id_out_of_order)
{
    enum { N = 500 };
    static struct result r[N];
    uint8_t p[4];

    start_pair(MODE_HOLD);
    for (uint32_t i = 0; i < N; i++) {
        bytes_put_be32(p, i);
        call(0, p, sizeof p, WAIT_MS, &r[i]);
    }
    RUN_UNTIL(f.n_held == N, WAIT_MS);
    /* Requests arrive in call order on one connection. */
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(bytes_be32(f.held[i].payload), i);
    }
    /* Reply evens backwards, then odds forwards. */
    for (size_t i = N; i > 0; i--) {
        struct held *h = &f.held[i - 1];
        if ((i - 1) % 2 == 0) {
            cr_assert_eq(rpc_reply(h->conn, h->cid, h->payload, h->len),
                         RC_OK);
        }
    }
    for (size_t i = 1; i < N; i += 2) {
        struct held *h = &f.held[i];
        cr_assert_eq(rpc_reply(h->conn, h->cid, h->payload, h->len),
                     RC_OK);
    }
    RUN_UNTIL(all_done(r, N), WAIT_MS);
    for (uint32_t i = 0; i < N; i++) {
        bytes_put_be32(p, i);
        expect_echo(&r[i], p, sizeof p);
        free(r[i].payload);
    }
}

Test(rpc, delayed_reply_through_a_kept_reference)
{
    struct result r = {0};
    uint64_t start = uv_hrtime();

    start_pair(MODE_DELAY);
    f.delay_rc = -1;
    call(0, "later", 5, WAIT_MS, &r);
    RUN_UNTIL(r.done, WAIT_MS);
    cr_assert_eq(f.delay_rc, RC_OK);
    expect_echo(&r, "later", 5);
    cr_assert_geq((uv_hrtime() - start) / 1000000, 40);
    free(r.payload);
}

Test(rpc, reply_on_closed_but_referenced_conn_returns_closed)
{
    struct result r = {0};

    start_pair(MODE_HOLD);
    call(0, "x", 1, WAIT_MS, &r);
    RUN_UNTIL(f.n_held == 1, WAIT_MS);
    rpc_client_close(f.client);
    f.client = NULL;
    cr_assert(!r.done, "no callback inside rpc_client_close");
    RUN_UNTIL(r.done && !rpc_conn_is_open(f.held[0].conn), WAIT_MS);
    cr_assert_eq(r.rc, RC_CLOSED);
    cr_assert_eq(rpc_reply(f.held[0].conn, f.held[0].cid, NULL, 0),
                 RC_CLOSED);
    cr_assert_str_neq(rpc_conn_peer(f.held[0].conn), "?");
    release_held();
}

Test(rpc, large_payload_round_trip)
{
    struct result r = {0};
    uint8_t *big = malloc(BIG_BYTES);

    cr_assert_not_null(big);
    for (size_t i = 0; i < BIG_BYTES; i++) {
        big[i] = (uint8_t)(i * 2654435761u >> 24);
    }
    start_pair(MODE_ECHO);
    call(0, big, BIG_BYTES, WAIT_MS, &r);
    RUN_UNTIL(r.done, WAIT_MS);
    expect_echo(&r, big, BIG_BYTES);
    free(r.payload);
    free(big);
}

/* --- Failures ------------------------------------------------------------ */

Test(rpc, timeout_when_server_never_replies)
{
    struct result r = {0};
    uint64_t start;
    uint64_t elapsed_ms;

    start_pair(MODE_SILENT);
    /* A busy loop iteration: the loop's cached time falls behind. The
     * call's 100 ms still count from when it is made. */
    usleep(60 * 1000);
    start = uv_hrtime();
    call(0, "anyone?", 7, 100, &r);
    RUN_UNTIL(r.done, WAIT_MS);
    elapsed_ms = (uv_hrtime() - start) / 1000000;
    cr_assert_eq(r.rc, RC_TIMEOUT, "rc=%s", rc_str(r.rc));
    cr_assert_eq(f.n_requests, 1);
    cr_assert_geq(elapsed_ms, 95);
    cr_assert_lt(elapsed_ms, 5000);
    /* The connection survives a timeout. */
    f.mode = MODE_ECHO;
    echo_once();
}

Test(rpc, server_restart_fails_pending_then_reconnects)
{
    struct result pending = {0};
    struct result refused = {0};
    int port;

    start_pair(MODE_SILENT);
    port = rpc_server_port(f.server);
    call(0, "a", 1, WAIT_MS, &pending);
    RUN_UNTIL(f.n_requests == 1, WAIT_MS);
    rpc_server_close(f.server);
    f.server = NULL;
    RUN_UNTIL(pending.done, WAIT_MS);
    cr_assert(pending.rc == RC_CLOSED || pending.rc == RC_IO, "rc=%s",
              rc_str(pending.rc));

    call(0, "b", 1, WAIT_MS, &refused);
    RUN_UNTIL(refused.done, WAIT_MS);
    cr_assert_eq(refused.rc, RC_IO, "rc=%s", rc_str(refused.rc));

    f.mode = MODE_ECHO;
    cr_assert_eq(server_start(&f.server, 0, port), RC_OK);
    cr_assert_eq(rpc_server_port(f.server), port);
    echo_once();
}

Test(rpc, inflight_bound_then_close_fails_pending_from_the_loop)
{
    static struct result r[RPC_INFLIGHT_MAX];
    struct result extra = {0};

    start_pair(MODE_SILENT);
    for (size_t i = 0; i < RPC_INFLIGHT_MAX; i++) {
        call(0, "q", 1, WAIT_MS, &r[i]);
    }
    cr_assert_eq(rpc_client_call(f.client, 0, (const uint8_t *)"q", 1,
                                 WAIT_MS, response_cb, &extra),
                 RC_FULL);
    rpc_client_close(f.client);
    f.client = NULL;
    for (size_t i = 0; i < RPC_INFLIGHT_MAX; i++) {
        cr_assert(!r[i].done);
    }
    RUN_UNTIL(all_done(r, RPC_INFLIGHT_MAX), WAIT_MS);
    for (size_t i = 0; i < RPC_INFLIGHT_MAX; i++) {
        cr_assert_eq(r[i].rc, RC_CLOSED);
        cr_assert_eq(r[i].n_calls, 1);
    }
    cr_assert_eq(extra.n_calls, 0);
}

Test(rpc, bad_arguments_are_refused_without_callback)
{
    struct result r = {0};
    struct rpc_client *c = NULL;
    const char *bad[] = {"nohost", "127.0.0.1:", "127.0.0.1:0",
                         "127.0.0.1:70000", ":9092", "127.0.0.1:9x"};
    const char *good[] = {"127.0.0.1:1", "[::1]:2", "localhost:3"};
    uint8_t *huge = malloc(RPC_FRAME_BYTES_MAX);

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(rpc_client_init(&c, &f.loop, &bad[i], 1, &f.tracer),
                     RC_INVALID, "%s", bad[i]);
    }
    cr_assert_eq(rpc_client_init(&c, &f.loop, good, 0, NULL), RC_INVALID);
    cr_assert_eq(rpc_client_init(&f.client, &f.loop, good, 3, NULL), RC_OK);
    cr_assert_eq(rpc_client_n_targets(f.client), 3);
    cr_assert_eq(rpc_client_call(f.client, 3, NULL, 0, 1, response_cb, &r),
                 RC_INVALID);
    cr_assert_eq(rpc_client_call(f.client, -2, NULL, 0, 1, response_cb, &r),
                 RC_INVALID);
    cr_assert_eq(rpc_client_call(f.client, 0, NULL, 0, 0, response_cb, &r),
                 RC_INVALID);
    /* The length is checked before the bytes are touched. */
    cr_assert_not_null(huge);
    cr_assert_eq(rpc_client_call(f.client, 0, huge, RPC_FRAME_BYTES_MAX - 7,
                                 1, response_cb, &r),
                 RC_TOO_LARGE);
    free(huge);
    cr_assert_eq(r.n_calls, 0);
    cr_assert_eq(rpc_server_start(&f.server, &f.loop, "127.0.0.1", 70000,
                                  request_cb, &f.server_ids[0], NULL),
                 RC_INVALID);
    f.server = NULL;
}

Test(rpc, target_index_selects_server_and_minus_one_keeps_it)
{
    struct rpc_server *second = NULL;
    char a0[64], a1[64];
    const char *addrs[] = {a0, a1};

    f.mode = MODE_ECHO;
    cr_assert_eq(server_start(&f.server, 0, 0), RC_OK);
    cr_assert_eq(server_start(&second, 1, 0), RC_OK);
    snprintf(a0, sizeof a0, "127.0.0.1:%d", rpc_server_port(f.server));
    snprintf(a1, sizeof a1, "127.0.0.1:%d", rpc_server_port(second));
    cr_assert_eq(rpc_client_init(&f.client, &f.loop, addrs, 2, &f.tracer),
                 RC_OK);
    echo_once(); /* -1 starts at target 0 */
    cr_assert_eq(f.n_requests_by[0], 1);
    struct result r = {0};
    call(1, "one", 3, WAIT_MS, &r);
    RUN_UNTIL(r.done, WAIT_MS);
    expect_echo(&r, "one", 3);
    free(r.payload);
    echo_once(); /* -1 now means target 1 */
    cr_assert_eq(f.n_requests_by[1], 2);
    cr_assert_eq(f.n_requests_by[0], 1);
    rpc_server_close(second);
}

/* --- A raw TCP peer ------------------------------------------------------ */

struct raw {
    uv_tcp_t tcp;
    uv_connect_t connect;
    bool connected;
    bool ended; /* EOF or reset: the server closed us */
    bool closed;
    uint8_t in[RAW_IN_BYTES];
    size_t in_len;
    uint8_t rbuf[RAW_IN_BYTES];
};

struct raw_write {
    uv_write_t req;
    uint8_t data[];
};

static void raw_connect_cb(uv_connect_t *req, int status)
{
    struct raw *r = req->data;

    cr_assert_eq(status, 0, "%s", uv_strerror(status));
    r->connected = true;
}

static void raw_alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    struct raw *r = h->data;

    (void)size;
    *buf = uv_buf_init((char *)r->rbuf, sizeof r->rbuf);
}

static void raw_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct raw *r = s->data;

    if (nread < 0) {
        r->ended = true;
        (void)uv_read_stop(s);
        return;
    }
    cr_assert_leq(r->in_len + (size_t)nread, sizeof r->in);
    memcpy(r->in + r->in_len, buf->base, (size_t)nread);
    r->in_len += (size_t)nread;
}

static void raw_close_cb(uv_handle_t *h)
{
    ((struct raw *)h->data)->closed = true;
}

static void raw_write_cb(uv_write_t *req, int status)
{
    (void)status; /* the server may already have reset us */
    free(req->data);
}

static void raw_open(struct raw *r, int port, bool read)
{
    struct sockaddr_in sin;

    memset(r, 0, sizeof *r);
    cr_assert_eq(uv_ip4_addr("127.0.0.1", port, &sin), 0);
    cr_assert_eq(uv_tcp_init(&f.loop, &r->tcp), 0);
    r->tcp.data = r;
    r->connect.data = r;
    cr_assert_eq(uv_tcp_connect(&r->connect, &r->tcp,
                                (const struct sockaddr *)&sin,
                                raw_connect_cb),
                 0);
    RUN_UNTIL(r->connected, WAIT_MS);
    if (read) {
        cr_assert_eq(uv_read_start((uv_stream_t *)&r->tcp, raw_alloc_cb,
                                   raw_read_cb),
                     0);
    }
}

static void raw_send(struct raw *r, const uint8_t *p, size_t len)
{
    struct raw_write *w = malloc(sizeof *w + len);
    uv_buf_t buf;

    cr_assert_not_null(w);
    memcpy(w->data, p, len);
    w->req.data = w;
    buf = uv_buf_init((char *)w->data, (unsigned)len);
    cr_assert_eq(uv_write(&w->req, (uv_stream_t *)&r->tcp, &buf, 1,
                          raw_write_cb),
                 0);
}

static void raw_close(struct raw *r)
{
    uv_close((uv_handle_t *)&r->tcp, raw_close_cb);
    RUN_UNTIL(r->closed, WAIT_MS);
}

static size_t frame_put(uint8_t *out, uint64_t cid, const char *payload)
{
    size_t len = strlen(payload);

    bytes_put_be32(out, (uint32_t)(8 + len));
    bytes_put_be64(out + 4, cid);
    memcpy(out + 12, payload, len);
    return 12 + len;
}

Test(rpc, bad_frames_close_the_connection_and_server_keeps_serving)
{
    uint8_t len0[4], len7[4 + 7] = {0}, over[4], ones[64];
    const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    struct {
        const uint8_t *p;
        size_t len;
    } cases[] = {{len0, sizeof len0},
                 {len7, sizeof len7},
                 {over, sizeof over},
                 {ones, sizeof ones},
                 {(const uint8_t *)http, sizeof http - 1}};

    bytes_put_be32(len0, 0);
    bytes_put_be32(len7, 7);
    bytes_put_be32(over, RPC_FRAME_BYTES_MAX + 1);
    memset(ones, 0xff, sizeof ones);
    start_pair(MODE_ECHO);
    echo_once();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct raw r;
        int warnings = f.n_warnings;
        raw_open(&r, rpc_server_port(f.server), true);
        raw_send(&r, cases[i].p, cases[i].len);
        RUN_UNTIL(r.ended, WAIT_MS);
        cr_assert_eq(r.in_len, 0);
        cr_assert_eq(f.n_warnings, warnings + 1, "case %zu", i);
        cr_assert(strstr(f.last_warning, "peer=127.0.0.1:") != NULL,
                  "%s", f.last_warning);
        cr_assert(strstr(f.last_warning, "frame length") != NULL, "%s",
                  f.last_warning);
        raw_close(&r);
        echo_once();
    }
    cr_assert_eq(f.n_requests, 1 + (int)(sizeof cases / sizeof cases[0]));
}

Test(rpc, frames_split_and_pipelined_by_a_raw_peer)
{
    struct raw r;
    uint8_t out[64];
    size_t n = 0;

    start_pair(MODE_ECHO);
    raw_open(&r, rpc_server_port(f.server), true);
    n += frame_put(out + n, 7, "first");
    n += frame_put(out + n, 8, "second");
    /* One byte, then the rest of frame one and half of frame two. */
    raw_send(&r, out, 1);
    run_for(50);
    raw_send(&r, out + 1, n - 5);
    RUN_UNTIL(f.n_requests == 1, WAIT_MS);
    raw_send(&r, out + n - 4, 4);
    RUN_UNTIL(r.in_len == n, WAIT_MS);
    cr_assert_eq(memcmp(r.in, out, n), 0);
    raw_close(&r);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(rpc, outbox_bound_closes_a_peer_that_does_not_read)
{
    struct raw r;
    uint8_t out[32];
    size_t n = frame_put(out, 1, "flood");

    start_pair(MODE_FLOOD);
    raw_open(&r, rpc_server_port(f.server), false);
    raw_send(&r, out, n);
    RUN_UNTIL(f.n_requests == 1, WAIT_MS);
    cr_assert_eq(f.flood_rc, RC_FULL, "rc=%s after %d replies",
                 rc_str(f.flood_rc), f.n_flood_replies);
    cr_assert_geq((size_t)f.n_flood_replies * OUTBOX_REPLY_BYTES,
                  RPC_CONN_OUTBOX_BYTES_MAX / 2);
    cr_assert(strstr(f.last_warning, "outbox") != NULL, "%s",
              f.last_warning);
    raw_close(&r);
    f.mode = MODE_ECHO;
    echo_once();
}
