/* Tests for common/net/frame_conn.c over real sockets on 127.0.0.1 (port
 * 0, so tests run in parallel): frames split and pipelined, borrowed and
 * owned frames, the size bounds (checked before allocating), the outbox
 * bound pausing and resuming reading or closing, the user's hold gate,
 * teardown with a held reference, a peer leaving mid-frame, and outward
 * connects (success, refusal, timeout). The peer is a plain non-blocking
 * socket; every wait steps the loop with a deadline, never sleeps. */
#include "common/net/frame_conn.h"

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

#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/trace.h"

#define WAIT_MS 10000
#define FRAMES_MAX 256
#define FRAME_COPY_BYTES 64
#define ECHO_BYTES (256u * 1024)
#define HEADROOM 32u

static struct {
    uv_loop_t loop;
    struct tracer tracer;
    int n_warnings;
    char last_warning[TRACE_LINE_BYTES_MAX];
    struct frame_listener *listener;
    struct frame_conn *conn;      /* last accepted, referenced */
    int n_frames;
    size_t lens[FRAMES_MAX];
    uint8_t copies[FRAMES_MAX][FRAME_COPY_BYTES];
    bool owned_ok;                /* owned frames sat after the headroom */
    bool echo;                    /* answer each frame with ECHO_BYTES */
    bool hold;                    /* the hold gate's answer */
    bool hold_after_frame;        /* the next frame sets hold */
    bool keep_none;               /* accept takes no reference */
    int closed_rc;
    int n_closed;
    int n_freed;
    int n_connected;
    int n_writes_done;
} f;

static uint8_t echo_buf[ECHO_BYTES];

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

    (void)uv_run(&f.loop, UV_RUN_NOWAIT);
    timeout = uv_backend_timeout(&f.loop);
    if (timeout < 0 || timeout > 10) {
        timeout = 10;
    }
    p[n++] = (struct pollfd){.fd = uv_backend_fd(&f.loop), .events = POLLIN};
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

/* --- Connection callbacks ------------------------------------------------ */

/* One write: the request and its size prefix, freed in the callback. */
struct test_write {
    struct frame_conn_write w; /* first: the callback casts back */
    uint8_t size[4];
};

static void write_done_cb(struct frame_conn_write *w, int status)
{
    (void)status;
    f.n_writes_done++;
    free(w);
}

/* Writes one frame: len bytes of echo_buf behind their size prefix. */
static int write_frame(struct frame_conn *c, size_t len)
{
    struct test_write *tw = malloc(sizeof *tw);
    uv_buf_t bufs[2];
    int rv;

    cr_assert_not_null(tw);
    bytes_put_be32(tw->size, (uint32_t)len);
    bufs[0] = uv_buf_init((char *)tw->size, 4);
    bufs[1] = uv_buf_init((char *)echo_buf, (unsigned)len);
    rv = frame_conn_write(c, &tw->w, bufs, 2, write_done_cb);
    if (rv != RC_OK) {
        free(tw);
    }
    return rv;
}

static void frame_cb(struct frame_conn *c, void *block, uint8_t *frame,
                     size_t len)
{
    size_t i = (size_t)f.n_frames;

    cr_assert_lt(i, FRAMES_MAX);
    f.lens[i] = len;
    memcpy(f.copies[i], frame, len < FRAME_COPY_BYTES ? len
                                                      : FRAME_COPY_BYTES);
    f.n_frames++;
    if (block != NULL) {
        f.owned_ok = (uint8_t *)block + HEADROOM == frame;
        memset(block, 0xab, HEADROOM); /* the headroom is the user's */
        free(block);
    }
    if (f.echo) {
        cr_assert_eq(write_frame(c, ECHO_BYTES - 4), RC_OK);
    }
    if (f.hold_after_frame) {
        f.hold = true;
    }
}

static void closed_cb(struct frame_conn *c, int rc)
{
    (void)c;
    f.closed_rc = rc;
    f.n_closed++;
}

static void free_cb(struct frame_conn *c)
{
    (void)c;
    f.n_freed++;
}

static void connected_cb(struct frame_conn *c)
{
    (void)c;
    f.n_connected++;
}

static bool hold_cb(struct frame_conn *c, bool paused)
{
    (void)c;
    (void)paused;
    return f.hold;
}

static const struct frame_conn_cbs cbs = {
    .frame = frame_cb,
    .connected = connected_cb,
    .closed = closed_cb,
    .free = free_cb,
    .hold = hold_cb,
};

static int accept_cb(void *arg, struct frame_conn *c)
{
    (void)arg;
    frame_conn_attach(c, &cbs, NULL);
    if (f.keep_none) {
        return RC_OK; /* quiet: the handle's reference only */
    }
    if (f.conn != NULL) {
        frame_conn_unref(f.conn);
    }
    frame_conn_ref(c); /* the test inspects it after its close */
    f.conn = c;
    return RC_OK;
}

static struct frame_conn_config conn_config(void)
{
    return (struct frame_conn_config){
        .frame_bytes_min = 1,
        .frame_bytes_max = 1024 * 1024,
        .read_buffer_bytes = 256,
        .prealloc_bytes = 1024,
        .read_bytes = 4096,
        .outbox_bytes_max = 256 * 1024,
        .full = FRAME_CONN_FULL_PAUSE,
        .size_name = "frame size",
    };
}

static void listen_cfg(struct frame_listener_config *cfg)
{
    cr_assert_eq(frame_listener_start(&f.listener, &f.loop, cfg, accept_cb,
                                      NULL, &f.tracer),
                 RC_OK);
    cr_assert_gt(frame_listener_port(f.listener), 0);
}

static void listen_with(const struct frame_conn_config *cc)
{
    struct frame_listener_config cfg = {.host = "127.0.0.1",
                                        .port = 0,
                                        .backlog = 16,
                                        .conns_max = 4,
                                        .conn = *cc};
    cr_assert_eq(frame_listener_start(&f.listener, &f.loop, &cfg, accept_cb,
                                      NULL, &f.tracer),
                 RC_OK);
    cr_assert_gt(frame_listener_port(f.listener), 0);
}

/* --- The peer: a plain socket -------------------------------------------- */

static int cli_open(int port, int rcvbuf)
{
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_geq(fd, 0);
    if (rcvbuf > 0) {
        cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                                sizeof rcvbuf),
                     0);
    }
    cr_assert_eq(uv_ip4_addr("127.0.0.1", port, &sin), 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0,
                 "connect: %s", strerror(errno));
    cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    RUN_UNTIL(f.conn != NULL && frame_conn_reading(f.conn));
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

/* Reads exactly n bytes (into p if not NULL). */
static void cli_recv(int fd, uint8_t *p, size_t n)
{
    uint8_t scratch[4096];
    size_t off = 0;
    uint64_t until = now_ms() + WAIT_MS;

    while (off < n) {
        size_t want = n - off < sizeof scratch ? n - off : sizeof scratch;
        ssize_t k = recv(fd, p != NULL ? p + off : scratch, want, 0);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        cr_assert_neq(k, 0, "closed after %zu of %zu bytes", off, n);
        cr_assert(errno == EAGAIN || errno == EWOULDBLOCK, "recv: %s",
                  strerror(errno));
        cr_assert_lt(now_ms(), until, "recv timed out at %zu of %zu", off,
                     n);
        step(fd, POLLIN);
    }
}

static size_t frame_put(uint8_t *out, const char *payload)
{
    size_t len = strlen(payload);

    bytes_put_be32(out, (uint32_t)len);
    memcpy(out + 4, payload, len);
    return 4 + len;
}

/* --- Fixture ------------------------------------------------------------- */

static void setup(void)
{
    memset(&f, 0, sizeof f);
    (void)signal(SIGPIPE, SIG_IGN);
    f.tracer.level = TRACE_LEVEL_DEBUG;
    f.tracer.component = "test";
    f.tracer.emit = capture_emit_cb;
    cr_assert_eq(uv_loop_init(&f.loop), 0);
}

static void teardown(void)
{
    if (f.listener != NULL) {
        frame_listener_close(f.listener, NULL);
    }
    if (f.conn != NULL) {
        frame_conn_unref(f.conn);
    }
    (void)uv_run(&f.loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&f.loop), 0, "a handle was leaked");
}

TestSuite(frame_conn, .init = setup, .fini = teardown, .timeout = 60);

/* --- Frames -------------------------------------------------------------- */

Test(frame_conn, split_and_pipelined_frames_arrive_whole_in_order)
{
    struct frame_conn_config cc = conn_config();
    uint8_t out[64];
    size_t n = 0;
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    n += frame_put(out + n, "first");
    n += frame_put(out + n, "second");
    n += frame_put(out + n, "x");
    /* One byte, then most of the rest, then the last two. */
    cli_send(fd, out, 1);
    for (int i = 0; i < 5; i++) {
        step(-1, 0);
    }
    cli_send(fd, out + 1, n - 3);
    RUN_UNTIL(f.n_frames == 2);
    cli_send(fd, out + n - 2, 2);
    RUN_UNTIL(f.n_frames == 3);
    cr_assert_eq(f.lens[0], 5);
    cr_assert_eq(memcmp(f.copies[0], "first", 5), 0);
    cr_assert_eq(f.lens[1], 6);
    cr_assert_eq(memcmp(f.copies[1], "second", 6), 0);
    cr_assert_eq(f.lens[2], 1);
    cr_assert_eq(f.copies[2][0], 'x');
    cr_assert_str_neq(frame_conn_peer(f.conn), "?");
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
    close(fd);
}

Test(frame_conn, owned_frames_come_after_the_headroom_large_ones_too)
{
    struct frame_conn_config cc = conn_config();
    static uint8_t big[4 + 100000];
    uint8_t small[16];
    int fd;

    cc.frames_owned = true;
    cc.headroom = HEADROOM;
    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    cli_send(fd, small, frame_put(small, "abc"));
    RUN_UNTIL(f.n_frames == 1);
    cr_assert(f.owned_ok);
    /* Larger than the read buffer and the first allocation: grown. */
    bytes_put_be32(big, sizeof big - 4);
    memset(big + 4, 'z', sizeof big - 4);
    cli_send(fd, big, sizeof big);
    RUN_UNTIL(f.n_frames == 2);
    cr_assert(f.owned_ok);
    cr_assert_eq(f.lens[1], sizeof big - 4);
    cr_assert_eq(f.copies[1][FRAME_COPY_BYTES - 1], 'z');
    cr_assert_eq(frame_conn_frame_buffer_bytes(f.conn), 0);
    close(fd);
}

/* --- Bounds -------------------------------------------------------------- */

Test(frame_conn, oversize_frame_closes_before_allocation)
{
    struct frame_conn_config cc = conn_config();
    uint8_t out[4 + 10] = {0};
    int fd;

    listen_with(&cc);
    /* A frame at the bound, announced and stalled, costs only the first
     * allocation. */
    fd = cli_open(frame_listener_port(f.listener), 0);
    bytes_put_be32(out, cc.frame_bytes_max);
    cli_send(fd, out, sizeof out);
    RUN_UNTIL(frame_conn_frame_buffer_bytes(f.conn) > 0);
    cr_assert_eq(frame_conn_frame_buffer_bytes(f.conn), cc.prealloc_bytes);
    close(fd);
    RUN_UNTIL(f.n_closed == 1);
    /* One byte more is refused on its size alone. */
    fd = cli_open(frame_listener_port(f.listener), 0);
    bytes_put_be32(out, cc.frame_bytes_max + 1);
    cli_send(fd, out, 4);
    RUN_UNTIL(f.n_closed == 2);
    cr_assert_eq(f.closed_rc, RC_MALFORMED);
    cr_assert_eq(frame_conn_frame_buffer_bytes(f.conn), 0);
    cr_assert_eq(f.n_frames, 0);
    cr_assert(strstr(f.last_warning, "frame size") != NULL, "%s",
              f.last_warning);
    cr_assert(strstr(f.last_warning, "peer=127.0.0.1:") != NULL, "%s",
              f.last_warning);
    close(fd);
}

Test(frame_conn, frame_below_the_minimum_closes)
{
    struct frame_conn_config cc = conn_config();
    uint8_t out[4] = {0};
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    cli_send(fd, out, sizeof out); /* size 0 < 1 */
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed_rc, RC_MALFORMED);
    cr_assert_eq(f.n_frames, 0);
    close(fd);
}

Test(frame_conn, outbox_bound_pauses_reading_and_drain_resumes)
{
    enum { N = 32 };
    struct frame_conn_config cc = conn_config();
    struct frame_listener_stats st;
    uint8_t out[N * 8];
    size_t n = 0;
    int fd, seen;

    f.echo = true;
    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 16 * 1024);
    for (int i = 0; i < N; i++) {
        n += frame_put(out + n, "ping");
    }
    cli_send(fd, out, n);
    RUN_UNTIL(!frame_conn_reading(f.conn));
    seen = f.n_frames;
    cr_assert_lt(seen, N);
    /* Paused above the bound; resuming needs half of it. */
    cr_assert_gt(frame_conn_outbox_bytes(f.conn), cc.outbox_bytes_max / 2);
    for (int i = 0; i < 20; i++) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_frames, seen, "read while over the bound");
    /* Drain: every answer arrives, and the rest of the frames are read. */
    cli_recv(fd, NULL, (size_t)N * ECHO_BYTES);
    cr_assert_eq(f.n_frames, N);
    RUN_UNTIL(frame_conn_reading(f.conn));
    frame_listener_get_stats(f.listener, &st);
    cr_assert_geq(st.reads_paused, 1);
    cr_assert_eq(st.conns_open, 1);
    close(fd);
}

Test(frame_conn, outbox_bound_closes_in_close_mode)
{
    struct frame_conn_config cc = conn_config();
    int fd, rv = RC_OK, n = 0;

    cc.full = FRAME_CONN_FULL_CLOSE;
    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 16 * 1024);
    while (rv == RC_OK && n < 100) {
        rv = write_frame(f.conn, ECHO_BYTES - 4);
        n++;
    }
    cr_assert_eq(rv, RC_FULL);
    cr_assert_geq((size_t)(n - 1) * ECHO_BYTES, cc.outbox_bytes_max / 2);
    cr_assert(!frame_conn_is_open(f.conn));
    cr_assert(strstr(f.last_warning, "outbox") != NULL, "%s",
              f.last_warning);
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed_rc, RC_FULL);
    cr_assert_eq(f.n_writes_done, n - 1, "every queued write called back");
    close(fd);
}

Test(frame_conn, hold_gate_stops_reading_at_a_frame_boundary)
{
    struct frame_conn_config cc = conn_config();
    uint8_t out[32];
    size_t n = 0;
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    f.hold_after_frame = true;
    n += frame_put(out + n, "one");
    n += frame_put(out + n, "two");
    cli_send(fd, out, n);
    RUN_UNTIL(f.n_frames == 1 && !frame_conn_reading(f.conn));
    for (int i = 0; i < 20; i++) {
        step(-1, 0);
    }
    cr_assert_eq(f.n_frames, 1, "the held frame waits in the read buffer");
    f.hold_after_frame = false;
    f.hold = false;
    frame_conn_flow(f.conn);
    cr_assert_eq(f.n_frames, 2);
    cr_assert_eq(memcmp(f.copies[1], "two", 3), 0);
    cr_assert(frame_conn_reading(f.conn));
    close(fd);
}

/* --- Lifetime ------------------------------------------------------------ */

Test(frame_conn, teardown_with_a_held_reference)
{
    struct frame_conn_config cc = conn_config();
    struct frame_conn_write w;
    uv_buf_t buf = uv_buf_init((char *)echo_buf, 8);
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    frame_conn_close(f.conn, RC_CLOSED);
    frame_conn_close(f.conn, RC_IO); /* the first reason wins */
    cr_assert(!frame_conn_is_open(f.conn));
    cr_assert(!frame_conn_reading(f.conn));
    cr_assert_eq(frame_conn_write(f.conn, &w, &buf, 1, write_done_cb),
                 RC_CLOSED);
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed_rc, RC_CLOSED);
    /* The test's reference keeps the memory: still readable. */
    cr_assert_eq(f.n_freed, 0);
    cr_assert_str_neq(frame_conn_peer(f.conn), "?");
    frame_conn_ref(f.conn);
    frame_conn_unref(f.conn);
    cr_assert_eq(f.n_freed, 0);
    frame_conn_unref(f.conn);
    f.conn = NULL;
    cr_assert_eq(f.n_freed, 1);
    close(fd);
}

Test(frame_conn, peer_closing_mid_frame)
{
    struct frame_conn_config cc = conn_config();
    uint8_t out[4 + 10];
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    bytes_put_be32(out, 100);
    memset(out + 4, 'm', 10);
    cli_send(fd, out, sizeof out);
    RUN_UNTIL(frame_conn_frame_buffer_bytes(f.conn) > 0);
    close(fd);
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed_rc, RC_CLOSED);
    cr_assert_eq(f.n_frames, 0);
    cr_assert(strstr(f.last_warning, "mid-frame") != NULL, "%s",
              f.last_warning);
    cr_assert_eq(frame_conn_frame_buffer_bytes(f.conn), 100);
}

Test(frame_conn, listener_close_closes_open_connections)
{
    struct frame_conn_config cc = conn_config();
    int fd;

    listen_with(&cc);
    fd = cli_open(frame_listener_port(f.listener), 0);
    frame_listener_close(f.listener, NULL);
    f.listener = NULL;
    cr_assert(!frame_conn_is_open(f.conn));
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.closed_rc, RC_CLOSED);
    close(fd);
}

/* --- Outward connections ------------------------------------------------- */

static int connect_to(int port, struct frame_conn **out, uint64_t timeout)
{
    struct frame_conn_config cc = conn_config();
    struct sockaddr_in sin;

    cr_assert_eq(uv_ip4_addr("127.0.0.1", port, &sin), 0);
    return frame_conn_connect(out, &f.loop, (struct sockaddr *)&sin,
                              "127.0.0.1:test", &cc, &cbs, NULL, timeout,
                              &f.tracer);
}

Test(frame_conn, connect_then_frames_both_ways)
{
    struct frame_conn_config cc = conn_config();
    struct frame_conn *c = NULL;

    listen_with(&cc);
    cr_assert_eq(connect_to(frame_listener_port(f.listener), &c, 5000),
                 RC_OK);
    cr_assert(!frame_conn_reading(c));
    RUN_UNTIL(f.n_connected == 1 && f.conn != NULL);
    cr_assert(frame_conn_reading(c));
    cr_assert_str_eq(frame_conn_peer(c), "127.0.0.1:test");
    memcpy(echo_buf, "hello", 5);
    cr_assert_eq(write_frame(c, 5), RC_OK);
    RUN_UNTIL(f.n_frames == 1);
    cr_assert_eq(f.lens[0], 5);
    cr_assert_eq(memcmp(f.copies[0], "hello", 5), 0);
    cr_assert_eq(write_frame(f.conn, 3), RC_OK);
    RUN_UNTIL(f.n_frames == 2);
    cr_assert_eq(f.lens[1], 3);
    frame_conn_close(c, RC_CLOSED);
    RUN_UNTIL(f.n_freed == 1 && f.n_closed == 2);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(frame_conn, connect_refused_ends_through_closed_cb)
{
    struct frame_conn *c = NULL;
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int port;

    /* A port that was just free: nothing listens there. */
    cr_assert_eq(uv_ip4_addr("127.0.0.1", 0, &sin), 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    port = ntohs(sin.sin_port);
    close(fd);
    cr_assert_eq(connect_to(port, &c, 0), RC_OK);
    RUN_UNTIL(f.n_freed == 1);
    cr_assert_eq(f.n_closed, 1);
    cr_assert_eq(f.closed_rc, RC_IO);
    cr_assert_eq(f.n_connected, 0);
    cr_assert(strstr(f.last_warning, "connect failed") != NULL, "%s",
              f.last_warning);
}

Test(frame_conn, connect_times_out_when_nobody_answers)
{
    struct frame_conn *c = NULL;
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int fill[4];
    size_t n_fill = 0;

    /* A listener that never accepts, its backlog filled: further SYNs
     * are dropped, so a connect neither succeeds nor fails. */
    cr_assert_eq(uv_ip4_addr("127.0.0.1", 0, &sin), 0);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&sin, sizeof sin), 0);
    cr_assert_eq(listen(lfd, 0), 0);
    cr_assert_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
    for (; n_fill < sizeof fill / sizeof fill[0]; n_fill++) {
        fill[n_fill] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        (void)connect(fill[n_fill], (struct sockaddr *)&sin, sizeof sin);
    }
    cr_assert_eq(connect_to(ntohs(sin.sin_port), &c, 200), RC_OK);
    RUN_UNTIL(f.n_freed == 1);
    cr_assert_eq(f.n_connected, 0);
    cr_assert_eq(f.closed_rc, RC_TIMEOUT);
    for (size_t i = 0; i < n_fill; i++) {
        close(fill[i]);
    }
    close(lfd);
}

/* --- Connection bounds --------------------------------------------------- */

/* A client socket, once the listener has accepted it (admitted or not). */
static int cli_accepted(int port)
{
    struct frame_listener_stats st;
    frame_listener_get_stats(f.listener, &st);
    uint64_t before = st.conns_accepted; /* refused ones count too */
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(uv_ip4_addr("127.0.0.1", port, &sin), 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    uint64_t until = now_ms() + WAIT_MS;
    do {
        step(-1, 0);
        frame_listener_get_stats(f.listener, &st);
    } while (st.conns_accepted == before && now_ms() < until);
    cr_assert_gt(st.conns_accepted, before, "never accepted");
    return fd;
}

/* The server closed fd (EOF), within WAIT_MS. */
static bool cli_closed(int fd)
{
    uint64_t until = now_ms() + WAIT_MS;
    for (;;) {
        uint8_t b;
        ssize_t k = recv(fd, &b, 1, 0);
        if (k == 0 || (k < 0 && errno == ECONNRESET)) {
            return true;
        }
        if (now_ms() >= until) {
            return false;
        }
        step(fd, POLLIN);
    }
}

/* Runs the loop for ms; the peer stays silent. */
static void run_for(uint64_t ms)
{
    uint64_t until = now_ms() + ms;
    while (now_ms() < until) {
        step(-1, 0);
    }
}

Test(frame_conn, quiet_connections_close_after_idle_ms)
{
    struct frame_listener_config cfg = {.host = "127.0.0.1", .backlog = 16,
                                        .conns_max = 4, .idle_ms = 200,
                                        .conn = conn_config()};
    f.keep_none = true;
    listen_cfg(&cfg);
    uint64_t t0 = now_ms();
    int fd = cli_accepted(frame_listener_port(f.listener));
    cr_assert(cli_closed(fd), "an idle connection stayed open");
    cr_assert_geq(now_ms() - t0, 200);
    cr_assert_eq(f.closed_rc, RC_TIMEOUT);
    struct frame_listener_stats st;
    frame_listener_get_stats(f.listener, &st);
    cr_assert_eq(st.conns_idle_closed, 1);
    close(fd);
}

/* A connection the user holds (a request in flight) is not idle, however
 * long it is silent. */
Test(frame_conn, a_connection_with_something_in_flight_is_not_idle)
{
    struct frame_listener_config cfg = {.host = "127.0.0.1", .backlog = 16,
                                        .conns_max = 4, .idle_ms = 100,
                                        .conn = conn_config()};
    listen_cfg(&cfg);
    int fd = cli_open(frame_listener_port(f.listener), 0);
    run_for(500);
    cr_assert(frame_conn_is_open(f.conn));
    cr_assert_eq(f.n_closed, 0);
    close(fd);
}

Test(frame_conn, per_ip_bound_refuses_the_excess)
{
    struct frame_listener_config cfg = {.host = "127.0.0.1", .backlog = 16,
                                        .conns_max = 8, .per_ip_max = 2,
                                        .conn = conn_config()};
    f.keep_none = true;
    listen_cfg(&cfg);
    int port = frame_listener_port(f.listener);
    int a = cli_accepted(port);
    int b = cli_accepted(port);
    int c = cli_accepted(port);
    cr_assert(cli_closed(c), "a third connection from one address");
    struct frame_listener_stats st;
    frame_listener_get_stats(f.listener, &st);
    cr_assert_eq(st.conns_refused, 1);
    cr_assert_eq(st.conns_open, 2);
    close(a);
    close(b);
    close(c);
}

/* At conns_max the connection quiet the longest makes room, once it has
 * been quiet for evict_idle_ms; before that the newcomer is refused. */
Test(frame_conn, at_the_bound_the_quietest_connection_makes_room)
{
    struct frame_listener_config cfg = {.host = "127.0.0.1", .backlog = 16,
                                        .conns_max = 2, .evict_idle_ms = 300,
                                        .conn = conn_config()};
    f.keep_none = true;
    listen_cfg(&cfg);
    int port = frame_listener_port(f.listener);
    int oldest = cli_accepted(port);
    run_for(20);
    int second = cli_accepted(port);
    int early = cli_accepted(port);
    cr_assert(cli_closed(early), "admitted before anyone was idle enough");
    run_for(350);
    int late = cli_accepted(port);
    cr_assert(cli_closed(oldest), "the quietest was not closed");
    struct frame_listener_stats st;
    frame_listener_get_stats(f.listener, &st);
    cr_assert_eq(st.conns_evicted, 1);
    cr_assert_eq(st.conns_open, 2);
    uint8_t byte;
    cr_assert_eq(recv(late, &byte, 1, 0), -1, "the newcomer stays");
    cr_assert_eq(recv(second, &byte, 1, 0), -1, "the other stays");
    close(oldest);
    close(second);
    close(early);
    close(late);
}

/* A peer that resets its connection (RST, as a killed client does) is
 * logged at debug: 20,000 such clients used to write as many warnings. */
Test(frame_conn, a_peer_reset_is_not_a_warning)
{
    struct frame_conn_config cc = conn_config();
    listen_with(&cc);
    int fd = cli_open(frame_listener_port(f.listener), 0);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    close(fd); /* RST */
    RUN_UNTIL(f.n_closed == 1);
    cr_assert_eq(f.n_warnings, 0, "warned: %s", f.last_warning);
}
