/* Tests for broker/kafka/kafka_server.c over real sockets on 127.0.0.1 (port 0,
 * so tests run in parallel): request header v1 parsing and the response
 * framing, in-order answers whatever order the handler answers in,
 * no-reply, responses splicing file spans of a real partition log (with
 * sendfile(2) and copy-only, small and several MiB to a slow reader),
 * hostile frames, the outbox and in-flight bounds, answers arriving
 * after their connection or the whole server closed, and the hook run as
 * a connection closes.
 *
 * The test thread runs the loop (the log fixture's); clients are plain
 * non-blocking sockets. Every wait runs the loop without blocking, then
 * polls the loop's backend fd and the client socket for at most 10 ms,
 * until a deadline: no sleeps. The handler's action is the first byte of
 * each request body (see request_cb). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/kafka/kafka_server.h"
#include "broker/log/log.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/log_fixture.h"

#define WAIT_MS 30000u
#define HELD_MAX 2048u
#define SPANS_MAX 4u
#define REQ_BYTES_MAX 512u
#define BIG_BATCH_RECORDS 1000
#define BIG_BATCH_VALUE_BYTES 1000u

struct span_cfg {
    int64_t from;
    int64_t max_bytes;
};

static struct {
    struct log_fixture lf; /* tmp dir, the loop, the log */
    struct tracer tracer;
    int n_warnings;
    char last_warning[TRACE_LINE_BYTES_MAX];
    struct kafka_server *server;
    int n_requests;
    struct kafka_request *held[HELD_MAX];
    size_t n_held;
    struct kafka_conn *last_conn;
    struct span_cfg spans[SPANS_MAX];
    size_t n_spans;
    int n_closed;                      /* closed_hook() calls */
    const struct kafka_conn *closed;   /* the last one's connection */
} f;

#define LOOP (&f.lf.loop)

/* --- Loop and waits ------------------------------------------------------ */

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

/* Runs what is ready, then waits at most 10 ms for the loop or fd. */
static void step(int fd, short events)
{
    struct pollfd p[2];
    nfds_t n = 0;
    int timeout;

    (void)uv_run(LOOP, UV_RUN_NOWAIT);
    timeout = uv_backend_timeout(LOOP);
    if (timeout < 0 || timeout > 10) {
        timeout = 10;
    }
    p[n++] = (struct pollfd){.fd = uv_backend_fd(LOOP), .events = POLLIN};
    if (fd >= 0) {
        p[n++] = (struct pollfd){.fd = fd, .events = events};
    }
    (void)poll(p, n, timeout);
}

#define RUN_UNTIL(cond)                                                \
    do {                                                               \
        uint64_t until_ = now_ms() + WAIT_MS;                          \
        while (!(cond) && now_ms() < until_) {                         \
            step(-1, 0);                                               \
        }                                                              \
        cr_assert((cond), "timed out waiting for %s", #cond);          \
    } while (0)

static struct kafka_server_stats stats(void)
{
    struct kafka_server_stats st;
    kafka_server_get_stats(f.server, &st);
    return st;
}

/* --- Handler ------------------------------------------------------------- */

static void reply_echo(struct kafka_request *req)
{
    struct kafka_response resp;

    kafka_response_init(&resp);
    writer_i16(&resp.body, req->api_key);
    writer_i16(&resp.body, req->api_version);
    writer_nullable_string_slice(&resp.body, req->client_id);
    writer_i64(&resp.body, (int64_t)req->seq);
    writer_raw(&resp.body, req->body, req->body_len);
    kafka_reply(req, &resp);
}

/* 'R', then per configured span its int32 length and its bytes, "END". */
static void reply_spans(struct kafka_request *req)
{
    struct kafka_response resp;

    kafka_response_init(&resp);
    writer_raw(&resp.body, "R", 1);
    for (size_t i = 0; i < f.n_spans; i++) {
        struct log_span span;
        cr_assert_eq(log_read(f.lf.log, f.spans[i].from,
                              f.spans[i].max_bytes,
                              log_end_offset(f.lf.log), &span),
                     RC_OK);
        writer_i32(&resp.body, (int32_t)span.bytes);
        cr_assert_eq(kafka_response_splice(&resp, &span), RC_OK);
        cr_assert_null(span.seg, "the response took the span");
    }
    writer_raw(&resp.body, "END", 3);
    kafka_reply(req, &resp);
}

static void hold(struct kafka_request *req)
{
    cr_assert_lt(f.n_held, HELD_MAX);
    f.held[f.n_held++] = req;
}

/* First body byte: H hold, N no reply, C close, S spans, else echo. */
static void request_cb(void *arg, struct kafka_request *req)
{
    char op = req->body_len > 0 ? (char)req->body[0] : 'E';

    cr_assert_eq(arg, &f);
    f.n_requests++;
    f.last_conn = req->conn;
    cr_assert(kafka_conn_is_open(req->conn));
    switch (op) {
    case 'H':
        hold(req);
        break;
    case 'N':
        kafka_no_reply(req);
        break;
    case 'C':
        kafka_close_conn(req, "test asked to close");
        break;
    case 'S':
        reply_spans(req);
        break;
    default:
        reply_echo(req);
        break;
    }
}

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

/* Listening, but reading nothing until kafka_server_serve(). */
static void server_start_unserved(bool copy_only)
{
    struct kafka_server_config cfg = {.host = "127.0.0.1"};
    cr_assert_eq(kafka_server_start(&f.server, LOOP, &cfg, request_cb, &f,
                                    &f.tracer),
                 RC_OK);
    cr_assert_gt(kafka_server_port(f.server), 0);
    kafka_server_set_copy_only(f.server, copy_only);
}

static void server_start(bool copy_only)
{
    server_start_unserved(copy_only);
    kafka_server_serve(f.server);
}

/* --- Clients ------------------------------------------------------------- */

/* A connected non-blocking socket; rcvbuf > 0 shrinks its receive buffer
 * (and turns off autotuning) so a slow reader backs the server up. */
static int cli_open(int rcvbuf)
{
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_geq(fd, 0);
    if (rcvbuf > 0) {
        cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                                sizeof rcvbuf),
                     0);
    }
    cr_assert_eq(uv_ip4_addr("127.0.0.1", kafka_server_port(f.server),
                             &sin),
                 0);
    /* The kernel completes the handshake before the server accepts. */
    cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0,
                 "connect: %s", strerror(errno));
    cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    return fd;
}

static void cli_send(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    size_t off = 0;
    uint64_t until = now_ms() + WAIT_MS;

    while (off < n) {
        ssize_t k = send(fd, b + off, n - off, MSG_NOSIGNAL);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        cr_assert(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
                  "send: %s", strerror(errno));
        cr_assert_lt(now_ms(), until, "send timed out");
        step(fd, POLLOUT);
    }
}

/* Reads exactly n bytes, at most chunk per recv (a slow reader). */
static void cli_recv(int fd, void *p, size_t n, size_t chunk)
{
    uint8_t *b = p;
    size_t off = 0;
    uint64_t until = now_ms() + WAIT_MS;

    while (off < n) {
        size_t want = n - off < chunk ? n - off : chunk;
        ssize_t k = recv(fd, b + off, want, 0);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        cr_assert_neq(k, 0, "server closed after %zu of %zu bytes", off, n);
        cr_assert(errno == EAGAIN || errno == EWOULDBLOCK, "recv: %s",
                  strerror(errno));
        cr_assert_lt(now_ms(), until, "recv timed out at %zu of %zu", off,
                     n);
        step(fd, POLLIN);
    }
}

/* True if nothing is waiting to be read on fd right now. */
static bool cli_nothing_to_read(int fd)
{
    uint8_t b;
    ssize_t k = recv(fd, &b, 1, MSG_PEEK);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Runs until the server closes fd (EOF or reset); returns the bytes that
 * came before, then closes fd. */
static size_t cli_wait_closed(int fd)
{
    uint8_t b[4096];
    size_t got = 0;
    uint64_t until = now_ms() + WAIT_MS;

    for (;;) {
        ssize_t k = recv(fd, b, sizeof b, 0);
        if (k == 0 || (k < 0 && errno == ECONNRESET)) {
            break;
        }
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        cr_assert(errno == EAGAIN || errno == EWOULDBLOCK, "recv: %s",
                  strerror(errno));
        cr_assert_lt(now_ms(), until, "the server did not close");
        step(fd, POLLIN);
    }
    close(fd);
    return got;
}

/* A request frame: size, header v1 (client_id NULL = null), body. */
static size_t req_put(uint8_t *out, int16_t key, int16_t ver, int32_t cid,
                      const char *client_id, const char *body)
{
    size_t n = 4;
    size_t id_len = client_id != NULL ? strlen(client_id) : 0;
    size_t body_len = strlen(body);

    cr_assert_leq(14 + id_len + body_len, REQ_BYTES_MAX);
    bytes_put_be16(out + n, (uint16_t)key);
    bytes_put_be16(out + n + 2, (uint16_t)ver);
    bytes_put_be32(out + n + 4, (uint32_t)cid);
    bytes_put_be16(out + n + 8,
                   client_id != NULL ? (uint16_t)id_len : (uint16_t)0xffff);
    n += 10;
    memcpy(out + n, client_id != NULL ? client_id : "", id_len);
    n += id_len;
    memcpy(out + n, body, body_len);
    n += body_len;
    bytes_put_be32(out, (uint32_t)(n - 4));
    return n;
}

static void cli_request(int fd, int32_t cid, const char *body)
{
    uint8_t buf[REQ_BYTES_MAX];
    size_t n = req_put(buf, 1, 11, cid, "test", body);
    cli_send(fd, buf, n);
}

/* Reads one response: the size field must cover the correlation id and
 * the body; returns the body (caller frees). */
static uint8_t *cli_response(int fd, int32_t cid, size_t *len, size_t chunk)
{
    uint8_t head[8];
    uint8_t *body;
    uint32_t size;

    cli_recv(fd, head, sizeof head, chunk);
    size = bytes_be32(head);
    cr_assert_geq(size, 4);
    cr_assert_lt(size, 1u << 30);
    cr_assert_eq((int32_t)bytes_be32(head + 4), cid,
                 "correlation id %d, expected %d",
                 (int32_t)bytes_be32(head + 4), cid);
    *len = size - 4;
    body = malloc(*len > 0 ? *len : 1);
    cr_assert_not_null(body);
    cli_recv(fd, body, *len, chunk);
    return body;
}

/* The echo handler's body: key, version, client_id, seq, request body. */
static void expect_echo(int fd, int32_t cid, int16_t key, int16_t ver,
                        const char *client_id, const char *body,
                        uint64_t seq)
{
    struct writer w;
    size_t len;
    uint8_t *got = cli_response(fd, cid, &len, 1u << 20);

    writer_init(&w, 1u << 20);
    writer_i16(&w, key);
    writer_i16(&w, ver);
    writer_nullable_string(&w, client_id,
                           client_id != NULL ? strlen(client_id) : 0);
    writer_i64(&w, (int64_t)seq);
    writer_raw(&w, body, strlen(body));
    cr_assert_eq(w.rc, RC_OK);
    cr_assert_eq(len, w.len, "body of %zu bytes, expected %zu", len, w.len);
    cr_assert(memcmp(got, w.data, len) == 0, "echo body differs");
    writer_free(&w);
    free(got);
}

/* What reply_spans() sends, read from the log directly. */
static uint8_t *spans_body(size_t *len)
{
    struct writer w;

    writer_init(&w, 1u << 30);
    writer_raw(&w, "R", 1);
    for (size_t i = 0; i < f.n_spans; i++) {
        struct log_span span;
        size_t n;
        uint8_t *bytes;
        cr_assert_eq(log_read(f.lf.log, f.spans[i].from,
                              f.spans[i].max_bytes,
                              log_end_offset(f.lf.log), &span),
                     RC_OK);
        bytes = log_fixture_span_bytes(&span, &n);
        writer_i32(&w, (int32_t)n);
        writer_raw(&w, bytes, n);
        free(bytes);
        log_span_release(&span);
    }
    writer_raw(&w, "END", 3);
    cr_assert_eq(w.rc, RC_OK);
    *len = w.len;
    return w.data;
}

static void expect_spans(int fd, int32_t cid, const uint8_t *want,
                         size_t want_len, size_t chunk)
{
    size_t len;
    uint8_t *got = cli_response(fd, cid, &len, chunk);

    cr_assert_eq(len, want_len, "body of %zu bytes, expected %zu", len,
                 want_len);
    for (size_t i = 0; i < len; i++) {
        if (got[i] != want[i]) {
            cr_assert_fail("byte %zu of %zu differs", i, len);
        }
    }
    free(got);
}

/* Appends n batches of records; returns the log end. */
static int64_t log_fill(int n_batches, int32_t records, size_t value_bytes)
{
    for (int i = 0; i < n_batches; i++) {
        (void)log_fixture_append(&f.lf, records, value_bytes,
                                 1000 + i * records, (uint32_t)i + 1);
    }
    return log_end_offset(f.lf.log);
}

/* --- Fixture ------------------------------------------------------------- */

static void setup(void)
{
    memset(&f, 0, sizeof f);
    (void)signal(SIGPIPE, SIG_IGN); /* as broker/main.c does */
    log_fixture_setup(&f.lf);
    f.tracer.level = TRACE_LEVEL_DEBUG;
    f.tracer.component = "test";
    f.tracer.emit = capture_emit_cb;
}

static void teardown(void)
{
    if (f.server != NULL) {
        kafka_server_close(f.server);
        f.server = NULL;
    }
    /* Answers after the close are dropped; this frees what they held. */
    for (size_t i = 0; i < f.n_held; i++) {
        kafka_no_reply(f.held[i]);
    }
    f.n_held = 0;
    if (f.lf.log == NULL) {
        (void)uv_run(LOOP, UV_RUN_DEFAULT);
    }
    log_fixture_teardown(&f.lf); /* asserts every handle closed */
}

TestSuite(kafka_server, .init = setup, .fini = teardown, .timeout = 120);

/* --- Round trips and order ----------------------------------------------- */

Test(kafka_server, echo_round_trip_has_size_prefix_and_correlation_id)
{
    uint8_t buf[REQ_BYTES_MAX];
    size_t n;
    int fd;

    server_start(false);
    fd = cli_open(0);
    n = req_put(buf, 18, 2, 7, "kcat", "Ehello");
    cli_send(fd, buf, n);
    expect_echo(fd, 7, 18, 2, "kcat", "Ehello", 0);
    /* Null client_id, empty body, negative correlation id. */
    n = req_put(buf, 3, 8, -5, NULL, "");
    cli_send(fd, buf, n);
    expect_echo(fd, -5, 3, 8, NULL, "", 1);
    /* An empty, non-null client_id. */
    n = req_put(buf, 0, 7, 9, "", "E");
    cli_send(fd, buf, n);
    expect_echo(fd, 9, 0, 7, "", "E", 2);
    cr_assert_eq(f.n_requests, 3);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
    cr_assert_str_neq(kafka_conn_peer(f.last_conn), "?");
    cr_assert_eq(stats().conns_open, 1);
    cr_assert_eq(stats().responses, 3);
    close(fd);
    RUN_UNTIL(stats().conns_open == 0);
}

Test(kafka_server, nothing_is_read_before_serve)
{
    uint8_t buf[REQ_BYTES_MAX];
    server_start_unserved(false);
    int fd = cli_open(0);
    size_t n = req_put(buf, 3, 1, 11, "early", "Ebefore");
    cli_send(fd, buf, n);
    RUN_UNTIL(stats().conns_open == 1);
    /* Accepted, and its request stays unread while the loop runs. */
    uint64_t until = now_ms() + 200;
    while (now_ms() < until) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_requests, 0, "a request was read before serve");
    cr_assert_not(kafka_server_serving(f.server));
    kafka_server_serve(f.server);
    cr_assert(kafka_server_serving(f.server));
    expect_echo(fd, 11, 3, 1, "early", "Ebefore", 0);
    /* New connections are read at once from now on. */
    int fd2 = cli_open(0);
    n = req_put(buf, 3, 1, 12, "late", "Eafter");
    cli_send(fd2, buf, n);
    expect_echo(fd2, 12, 3, 1, "late", "Eafter", 0);
    cr_assert_eq(f.n_requests, 2);
    close(fd);
    close(fd2);
    RUN_UNTIL(stats().conns_open == 0);
}

Test(kafka_server, pipelined_answers_out_of_order_leave_in_order)
{
    enum { N = 64 };
    static uint8_t buf[N * REQ_BYTES_MAX];
    size_t n = 0;
    int fd;

    server_start(false);
    fd = cli_open(0);
    for (int i = 0; i < N; i++) {
        n += req_put(buf + n, 1, 11, 1000 + i, "p", "H");
    }
    cli_send(fd, buf, n); /* all in one go: pipelined */
    RUN_UNTIL(f.n_held == N);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(f.held[i]->seq, (uint64_t)i);
        cr_assert_eq(f.held[i]->correlation_id, 1000 + i);
    }
    /* Odd ones backwards, then even ones backwards, all but the first. */
    for (int i = N - 1; i > 0; i -= 2) {
        reply_echo(f.held[i]);
    }
    for (int i = N - 2; i > 0; i -= 2) {
        reply_echo(f.held[i]);
    }
    for (int i = 0; i < 5; i++) {
        step(fd, POLLIN);
    }
    cr_assert(cli_nothing_to_read(fd), "answers overtook request 0");
    reply_echo(f.held[0]);
    f.n_held = 0;
    for (int i = 0; i < N; i++) {
        expect_echo(fd, 1000 + i, 1, 11, "p", "H", (uint64_t)i);
    }
    close(fd);
}

Test(kafka_server, no_reply_skips_its_slot)
{
    int fd;

    server_start(false);
    fd = cli_open(0);
    cli_request(fd, 1, "Ea");
    cli_request(fd, 2, "N"); /* acks=0: nothing goes back */
    cli_request(fd, 3, "Eb");
    expect_echo(fd, 1, 1, 11, "test", "Ea", 0);
    expect_echo(fd, 3, 1, 11, "test", "Eb", 2);
    /* A held no-reply blocks later answers until it is given. */
    cli_request(fd, 4, "H");
    cli_request(fd, 5, "Ec");
    RUN_UNTIL(f.n_requests == 5);
    for (int i = 0; i < 5; i++) {
        step(fd, POLLIN);
    }
    cr_assert(cli_nothing_to_read(fd));
    kafka_no_reply(f.held[0]);
    f.n_held = 0;
    expect_echo(fd, 5, 1, 11, "test", "Ec", 4);
    cli_request(fd, 6, "Ed");
    expect_echo(fd, 6, 1, 11, "test", "Ed", 5);
    cr_assert_eq(stats().responses, 4);
    close(fd);
}

/* A 3 MiB request (read straight into its growing frame) and a request
 * dribbled in one byte per loop step. */
Test(kafka_server, large_and_fragmented_requests)
{
    enum { BODY = 3 << 20 };
    uint8_t small[REQ_BYTES_MAX];
    uint8_t *big = malloc(15 + 1 + BODY); /* header, "b", "E" */
    size_t n, len;
    uint8_t *got;
    int fd;

    cr_assert_not_null(big);
    n = req_put(big, 0, 3, 77, "b", "E");
    for (size_t i = 0; i < BODY; i++) {
        big[n + i] = (uint8_t)(i * 2654435761u >> 24);
    }
    n += BODY;
    bytes_put_be32(big, (uint32_t)(n - 4));
    server_start(false);
    fd = cli_open(0);
    cli_send(fd, big, n);
    got = cli_response(fd, 77, &len, 1u << 20);
    /* key, version, "b", seq, then the request body. */
    cr_assert_eq(len, 2 + 2 + 3 + 8 + 1 + (size_t)BODY);
    cr_assert(memcmp(got + 15, big + 15, (size_t)BODY + 1) == 0);
    free(got);
    free(big);
    n = req_put(small, 1, 11, 78, "dribble", "Eslow");
    for (size_t i = 0; i < n; i++) {
        cli_send(fd, small + i, 1);
        step(-1, 0);
    }
    expect_echo(fd, 78, 1, 11, "dribble", "Eslow", 1);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
    close(fd);
}

/* --- File spans ---------------------------------------------------------- */

/* Echo and span responses interleaved, so memory pieces written with
 * uv_write and spans sent by sendfile(2) must keep their order. */
static void splice_round_trip(int n_reqs, int rcvbuf, size_t chunk)
{
    size_t want_len;
    uint8_t *want = spans_body(&want_len);
    int fd = cli_open(rcvbuf);

    for (int i = 0; i < n_reqs; i++) {
        cli_request(fd, 2 * i, "S");
        cli_request(fd, 2 * i + 1, "Ex");
    }
    for (int i = 0; i < n_reqs; i++) {
        expect_spans(fd, 2 * i, want, want_len, chunk);
        expect_echo(fd, 2 * i + 1, 1, 11, "test", "Ex",
                    (uint64_t)(2 * i + 1));
    }
    free(want);
    close(fd);
    RUN_UNTIL(stats().conns_open == 0);
}

static void small_splices(bool copy_only)
{
    log_fixture_open(&f.lf);
    cr_assert_eq(log_fill(6, 10, 100), 60);
    /* The first batch alone, then everything from offset 25's batch. */
    f.spans[0] = (struct span_cfg){.from = 0, .max_bytes = 1};
    f.spans[1] = (struct span_cfg){.from = 25, .max_bytes = 1 << 20};
    f.n_spans = 2;
    server_start(copy_only);
    splice_round_trip(3, 0, 1u << 20);
}

Test(kafka_server, splices_arrive_byte_exact_with_sendfile)
{
    small_splices(false);
    cr_assert_gt(stats().sendfile_bytes, 0);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(kafka_server, splices_arrive_byte_exact_copy_only)
{
    small_splices(true);
    cr_assert_eq(stats().sendfile_bytes, 0);
    cr_assert_gt(stats().copy_bytes, 0);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

/* Several MiB per span to a reader with a small buffer taking 4 KiB at a
 * time: sendfile(2) hits a full socket, short counts and EAGAIN. */
static int64_t large_span(bool copy_only)
{
    int64_t end;
    struct log_span span;
    int64_t bytes;

    log_fixture_open(&f.lf);
    end = log_fill(6, BIG_BATCH_RECORDS, BIG_BATCH_VALUE_BYTES);
    f.spans[0] = (struct span_cfg){.from = 0, .max_bytes = 64 << 20};
    f.n_spans = 1;
    cr_assert_eq(log_read(f.lf.log, 0, 64 << 20, end, &span), RC_OK);
    bytes = span.bytes;
    log_span_release(&span);
    cr_assert_gt(bytes, 5 << 20, "span of %lld bytes", (long long)bytes);
    server_start(copy_only);
    splice_round_trip(2, 16 * 1024, 4096);
    return bytes;
}

Test(kafka_server, large_span_to_slow_reader_with_sendfile)
{
    int64_t bytes = large_span(false);
    struct kafka_server_stats st = stats();

    cr_assert_eq(st.sendfile_bytes + st.copy_bytes, 2 * (uint64_t)bytes);
    cr_assert_gt(st.sendfile_bytes, 0);
    cr_assert_gt(st.copy_bytes, 0, "the socket never filled up");
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(kafka_server, large_span_to_slow_reader_copy_only)
{
    int64_t bytes = large_span(true);
    struct kafka_server_stats st = stats();

    cr_assert_eq(st.sendfile_bytes, 0);
    cr_assert_eq(st.copy_bytes, 2 * (uint64_t)bytes);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(kafka_server, peer_leaving_mid_span_releases_it)
{
    uint8_t some[64 * 1024];
    int fd;

    log_fixture_open(&f.lf);
    (void)log_fill(4, BIG_BATCH_RECORDS, BIG_BATCH_VALUE_BYTES);
    f.spans[0] = (struct span_cfg){.from = 0, .max_bytes = 64 << 20};
    f.n_spans = 1;
    server_start(false);
    fd = cli_open(16 * 1024);
    cli_request(fd, 1, "S");
    cli_recv(fd, some, sizeof some, sizeof some);
    close(fd); /* unread data: the kernel resets the connection */
    RUN_UNTIL(stats().conns_open == 0);
    /* The span was dropped with the connection; the log closes clean. */
}

/* --- Hostile input ------------------------------------------------------- */

/* A deterministic garbage stream; its first byte makes the size huge. */
static void garbage(uint8_t *p, size_t n)
{
    uint32_t x = 2463534242u;

    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
    p[0] |= 0x80;
}

Test(kafka_server, bad_frames_close_and_server_keeps_serving)
{
    uint8_t over[4], zero[4], three[4 + 3] = {0}, trunc_id[4 + 9] = {0};
    uint8_t id_past[4 + 12] = {0}, id_neg[4 + 10] = {0}, junk[256];
    struct {
        const uint8_t *p;
        size_t len;
        const char *warning;
    } cases[] = {{over, sizeof over, "frame size"},
                 {zero, sizeof zero, "frame size"},
                 {three, sizeof three, "frame size"},
                 {trunc_id, sizeof trunc_id, "frame size"},
                 {id_past, sizeof id_past, "bad request header"},
                 {id_neg, sizeof id_neg, "bad request header"},
                 {junk, sizeof junk, "frame size"}};

    bytes_put_be32(over, REQUEST_BYTES_MAX + 1);
    bytes_put_be32(zero, 0);
    bytes_put_be32(three, 3);
    bytes_put_be32(trunc_id, 9);        /* one byte of the id length */
    bytes_put_be32(id_past, 12);
    bytes_put_be16(id_past + 12, 50);   /* 50 bytes, 2 in the frame */
    bytes_put_be32(id_neg, 10);
    bytes_put_be16(id_neg + 12, 0xfffe); /* -2 */
    garbage(junk, sizeof junk);
    server_start(false);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int warnings = f.n_warnings;
        int fd = cli_open(0);
        cli_send(fd, cases[i].p, cases[i].len);
        cr_assert_eq(cli_wait_closed(fd), 0, "case %zu", i);
        RUN_UNTIL(stats().conns_open == 0);
        cr_assert_eq(f.n_warnings, warnings + 1, "case %zu", i);
        cr_assert(strstr(f.last_warning, "peer=127.0.0.1:") != NULL,
                  "case %zu: %s", i, f.last_warning);
        cr_assert(strstr(f.last_warning, cases[i].warning) != NULL,
                  "case %zu: %s", i, f.last_warning);
    }
    cr_assert_eq(f.n_requests, 0);
    int fd = cli_open(0);
    cli_request(fd, 42, "Estill here");
    expect_echo(fd, 42, 1, 11, "test", "Estill here", 0);
    close(fd);
}

Test(kafka_server, valid_request_then_garbage_answers_then_closes)
{
    uint8_t buf[REQ_BYTES_MAX + 64];
    size_t n = req_put(buf, 1, 11, 3, "x", "Eok");
    int fd;

    garbage(buf + n, 64);
    server_start(false);
    fd = cli_open(0);
    cli_send(fd, buf, n + 64);
    /* Answered before the garbage closed it: the answer may or may not
     * get out first, but the server must not crash and must close. */
    (void)cli_wait_closed(fd);
    cr_assert_eq(f.n_requests, 1);
    RUN_UNTIL(stats().conns_open == 0);
}

/* --- Bounds -------------------------------------------------------------- */

Test(kafka_server, outbox_bound_stops_reading_and_drain_resumes)
{
    enum { N = 48 };
    size_t want_len;
    uint8_t *want;
    struct kafka_conn *conn;
    int fd, seen;

    log_fixture_open(&f.lf);
    (void)log_fill(4, BIG_BATCH_RECORDS, BIG_BATCH_VALUE_BYTES);
    f.spans[0] = (struct span_cfg){.from = 0, .max_bytes = 64 << 20};
    f.n_spans = 1;
    want = spans_body(&want_len);
    cr_assert_gt((uint64_t)want_len * N, 2ull * CONN_OUTBOX_BYTES_MAX);
    server_start(false);
    fd = cli_open(64 * 1024);
    for (int i = 0; i < N; i++) {
        cli_request(fd, i, "S");
    }
    RUN_UNTIL(f.last_conn != NULL && !kafka_conn_reading(f.last_conn));
    conn = f.last_conn;
    seen = f.n_requests;
    cr_assert_lt(seen, N);
    cr_assert_gt(kafka_conn_outbox_bytes(conn), CONN_OUTBOX_BYTES_MAX);
    for (int i = 0; i < 20; i++) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_requests, seen, "read while over the bound");
    cr_assert(!kafka_conn_reading(conn));
    /* Drain: every answer arrives, whole and in order. */
    for (int i = 0; i < N; i++) {
        expect_spans(fd, i, want, want_len, 1u << 20);
    }
    cr_assert_eq(f.n_requests, N);
    cr_assert(kafka_conn_reading(conn));
    cr_assert_geq(stats().reads_paused, 1);
    cli_request(fd, 99, "Eafter");
    expect_echo(fd, 99, 1, 11, "test", "Eafter", N);
    free(want);
    close(fd);
}

Test(kafka_server, inflight_bound_stops_reading_until_answered)
{
    enum { N = KAFKA_CONN_INFLIGHT_MAX + 76 };
    static uint8_t buf[N * 32];
    static struct kafka_request *first[KAFKA_CONN_INFLIGHT_MAX];
    struct kafka_conn *conn;
    size_t n = 0;
    int fd;

    server_start(false);
    fd = cli_open(0);
    for (int i = 0; i < N; i++) {
        n += req_put(buf + n, 1, 11, i, "t", "H");
    }
    cli_send(fd, buf, n);
    RUN_UNTIL(f.n_held == KAFKA_CONN_INFLIGHT_MAX &&
              !kafka_conn_reading(f.last_conn));
    conn = f.last_conn;
    for (int i = 0; i < 20; i++) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_held, KAFKA_CONN_INFLIGHT_MAX);
    /* Answering (here: no reply) resumes reading from where it stopped. */
    memcpy(first, f.held, sizeof first);
    f.n_held = 0;
    for (size_t i = 0; i < KAFKA_CONN_INFLIGHT_MAX; i++) {
        kafka_no_reply(first[i]);
    }
    RUN_UNTIL(f.n_held == N - KAFKA_CONN_INFLIGHT_MAX);
    cr_assert(kafka_conn_reading(conn));
    for (size_t i = 0; i < f.n_held; i++) {
        cr_assert_eq(f.held[i]->seq, KAFKA_CONN_INFLIGHT_MAX + i);
        reply_echo(f.held[i]);
    }
    f.n_held = 0;
    for (int i = KAFKA_CONN_INFLIGHT_MAX; i < N; i++) {
        expect_echo(fd, i, 1, 11, "t", "H", (uint64_t)i);
    }
    close(fd);
}

/* --- Late answers -------------------------------------------------------- */

Test(kafka_server, close_conn_then_late_answers_are_harmless)
{
    int fd;

    log_fixture_open(&f.lf);
    (void)log_fill(3, 10, 100);
    f.spans[0] = (struct span_cfg){.from = 0, .max_bytes = 1 << 20};
    f.n_spans = 1;
    server_start(false);
    fd = cli_open(0);
    cli_request(fd, 1, "H");
    cli_request(fd, 2, "H");
    cli_request(fd, 3, "H");
    RUN_UNTIL(f.n_held == 3);
    kafka_close_conn(f.held[0], "bad request");
    cr_assert(strstr(f.last_warning, "bad request") != NULL, "%s",
              f.last_warning);
    cr_assert(strstr(f.last_warning, "peer=127.0.0.1:") != NULL, "%s",
              f.last_warning);
    cr_assert(!kafka_conn_is_open(f.held[1]->conn));
    cr_assert_eq(cli_wait_closed(fd), 0);
    RUN_UNTIL(stats().conns_open == 0);
    for (int i = 0; i < 5; i++) {
        step(-1, 0); /* let the socket's close callback run */
    }
    /* Another request of the closed connection: a reply with a span,
     * then a no-reply; both dropped, the span released. */
    reply_spans(f.held[1]);
    kafka_no_reply(f.held[2]);
    f.n_held = 0;
    fd = cli_open(0);
    cli_request(fd, 4, "Enext");
    expect_echo(fd, 4, 1, 11, "test", "Enext", 0);
    close(fd);
}

Test(kafka_server, close_conn_from_handler_drops_earlier_held_answer)
{
    int fd;

    server_start(false);
    fd = cli_open(0);
    cli_request(fd, 1, "H");
    cli_request(fd, 2, "C");
    cr_assert_eq(cli_wait_closed(fd), 0);
    cr_assert_eq(f.n_held, 1);
    reply_echo(f.held[0]); /* before the close callback, or after */
    f.n_held = 0;
    RUN_UNTIL(stats().conns_open == 0);
}

/* Answers every held request from inside the hook, as a handler that
 * holds answers does (broker/kafka/kafka_forward.c). */
static void closed_hook(void *arg, const struct kafka_conn *conn)
{
    cr_assert_eq(arg, &f);
    f.n_closed++;
    f.closed = conn;
    for (size_t i = 0; i < f.n_held; i++) {
        cr_assert_eq(f.held[i]->conn, conn);
        reply_echo(f.held[i]);
    }
    f.n_held = 0;
}

Test(kafka_server, conn_closed_hook_runs_once_per_connection)
{
    server_start(false);
    kafka_server_on_conn_closed(f.server, closed_hook, &f);
    int fd = cli_open(0);
    cli_request(fd, 1, "H");
    cli_request(fd, 2, "H");
    RUN_UNTIL(f.n_held == 2);
    const struct kafka_conn *conn = f.held[0]->conn;
    close(fd);
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed, conn);
    cr_assert_eq(f.n_held, 0, "the hook answered them");
    RUN_UNTIL(stats().conns_open == 0);
    fd = cli_open(0);
    cli_request(fd, 3, "Enext");
    expect_echo(fd, 3, 1, 11, "test", "Enext", 0);
    close(fd);
    RUN_UNTIL(f.n_closed == 2);
    for (int i = 0; i < 5; i++) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_closed, 2, "once per connection");
}

Test(kafka_server, server_close_with_requests_outstanding)
{
    int fd;

    server_start(false);
    fd = cli_open(0);
    cli_request(fd, 1, "H");
    cli_request(fd, 2, "H");
    RUN_UNTIL(f.n_held == 2);
    kafka_server_close(f.server);
    f.server = NULL;
    cr_assert_eq(cli_wait_closed(fd), 0);
    for (int i = 0; i < 5; i++) {
        step(-1, 0);
    }
    /* The last answer frees the connection, then the server. */
    reply_echo(f.held[0]);
    kafka_no_reply(f.held[1]);
    f.n_held = 0;
}

Test(kafka_server, response_api_owns_and_releases_spans)
{
    struct kafka_response resp;
    struct log_span span, empty;

    log_fixture_open(&f.lf);
    (void)log_fill(2, 5, 10);
    kafka_response_init(&resp);
    writer_i32(&resp.body, 1);
    cr_assert_eq(log_read(f.lf.log, 0, 1 << 20, 10, &span), RC_OK);
    cr_assert_eq(kafka_response_splice(&resp, &span), RC_OK);
    cr_assert_null(span.seg);
    cr_assert_eq(span.fd, -1);
    cr_assert_eq(log_read(f.lf.log, 10, 1 << 20, 10, &empty), RC_OK);
    cr_assert_eq(empty.bytes, 0);
    cr_assert_eq(kafka_response_splice(&resp, &empty), RC_OK);
    cr_assert_eq(resp.n_splices, 1, "an empty span adds nothing");
    cr_assert_eq(resp.splices[0].at, 4);
    kafka_response_free(&resp);
    cr_assert_eq(resp.n_splices, 0);
    /* The log closes clean in teardown: no segment left pinned. */
}

Test(kafka_server, bad_start_arguments)
{
    struct kafka_server *s = NULL;

    struct kafka_server_config cfg = {.host = "127.0.0.1", .port = 70000};
    cr_assert_eq(kafka_server_start(&s, LOOP, &cfg, request_cb, &f,
                                    &f.tracer),
                 RC_INVALID);
    cr_assert_null(s);
}
