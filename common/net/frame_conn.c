/* Framed TCP connections (common/net/frame_conn.h).
 *
 * Ownership. A connection is one allocation: its uv_tcp_t, an optional
 * connect timer, the frame being assembled (a separate allocation sized
 * from a checked length), a spare frame buffer (borrowed mode) and the
 * fixed read buffer at its end. Each uv_write belongs to the user's
 * struct frame_conn_write until its callback. A listener owns its handle
 * and the list of its open connections; a connection leaves the list when
 * it starts closing, so it never points to a freed listener.
 *
 * Lifetime. refs counts the handles (one reference for all of them) plus
 * the users'; handles_open counts handles whose close callback is still
 * to come. The last close callback runs closed_cb and drops the handles'
 * reference; the last reference runs free_cb and frees.
 *
 * Reading. rbuf holds what one read brought; it is parsed frame by frame.
 * At a frame boundary the bounds are checked; over them reading stops and
 * the unparsed rest waits in rbuf (rbuf_off..rbuf_len) until the flow
 * resumes it. libuv never reads into rbuf while bytes wait there, since
 * reading is stopped for exactly that long.
 *
 * Loop thread only. */
#include "common/net/frame_conn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/net/net.h"
#include "common/rc.h"

#define FRAME_CONN__SIZE_BYTES 4u
#define FRAME_CONN__PEER_BYTES 64u
/* How often idle connections are looked for: a quarter of idle_ms, within
 * these. */
#define FRAME_CONN__SWEEP_MS_MIN 50u
#define FRAME_CONN__SWEEP_MS_MAX 10000u

struct frame_conn {
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    uv_timer_t timer;                /* connect timeout, if asked */
    struct frame_conn_config cfg;
    struct frame_conn_cbs cbs;
    void *data;
    struct tracer *t;
    struct frame_listener *listener; /* NULL once closing */
    struct frame_conn *prev, *next;  /* the listener's open list */
    size_t refs;
    int handles_open;
    int close_rc;
    bool timer_used;
    bool closing;
    bool connecting;
    bool paused;                     /* a bound stopped reading */
    bool in_parse;                   /* inside a frame callback */
    /* The frame being read: its size, then its buffer. */
    uint8_t size_buf[FRAME_CONN__SIZE_BYTES];
    size_t size_have;
    uint8_t *block;                  /* headroom, then frame bytes */
    size_t frame_len, frame_have, frame_cap;
    uint8_t *spare;                  /* borrowed mode: a kept buffer */
    size_t spare_cap;
    size_t rbuf_off, rbuf_len;       /* unparsed bytes (only while paused) */
    size_t outbox_bytes;
    uint64_t active_ms;              /* last read or write (accepted) */
    struct sockaddr_storage peer_ss; /* accepted: the peer's address */
    char peer[FRAME_CONN__PEER_BYTES];
    uint8_t rbuf[];
};

struct frame_listener {
    uv_tcp_t tcp;
    uv_loop_t *loop;
    struct tracer *t;
    struct frame_listener_config cfg;
    frame_listener_accept_cb cb;
    void *arg;
    frame_listener_closed_cb closed_cb;
    struct frame_conn *conns;        /* open connections */
    struct frame_listener_stats stats;
    uv_timer_t sweep;                /* closes idle connections */
    int handles;                     /* tcp and sweep, until closed */
    int port;
    bool closing;
};

static void conn_parse(struct frame_conn *c);
static void conn_read_start(struct frame_conn *c);

/* --- Lifetime ------------------------------------------------------------ */

static struct frame_conn *conn_new(uv_loop_t *loop,
                                   const struct frame_conn_config *cfg,
                                   struct tracer *t)
{
    struct frame_conn *c;

    ASSERT(cfg->read_buffer_bytes > FRAME_CONN__SIZE_BYTES);
    ASSERT(cfg->frame_bytes_min <= cfg->frame_bytes_max);
    ASSERT(cfg->frame_bytes_max <= 0x7fffffffu);
    ASSERT(cfg->prealloc_bytes > 0);
    ASSERT(cfg->read_bytes > 0);
    c = calloc(1, sizeof *c + cfg->read_buffer_bytes);
    if (c == NULL) {
        return NULL;
    }
    if (uv_tcp_init(loop, &c->tcp) != 0) {
        free(c);
        return NULL;
    }
    c->cfg = *cfg;
    if (c->cfg.size_name == NULL) {
        c->cfg.size_name = "frame size";
    }
    c->t = t;
    c->refs = 1;
    c->handles_open = 1;
    c->tcp.data = c;
    c->connect_req.data = c;
    snprintf(c->peer, sizeof c->peer, "?");
    return c;
}

static void conn_free(struct frame_conn *c)
{
    ASSERT(c->closing);
    ASSERT(c->handles_open == 0);
    ASSERT(c->outbox_bytes == 0);
    if (c->cbs.free != NULL) {
        c->cbs.free(c);
    }
    free(c->block);
    free(c->spare);
    free(c);
}

void frame_conn_ref(struct frame_conn *c)
{
    ASSERT(c->refs > 0);
    c->refs++;
}

void frame_conn_unref(struct frame_conn *c)
{
    ASSERT(c->refs > 0);
    if (--c->refs == 0) {
        conn_free(c);
    }
}

static void conn_handle_close_cb(uv_handle_t *h)
{
    struct frame_conn *c = h->data;

    ASSERT(c->handles_open > 0);
    if (--c->handles_open > 0) {
        return;
    }
    if (c->cbs.closed != NULL) {
        c->cbs.closed(c, c->close_rc);
    }
    frame_conn_unref(c);
}

static void listener_unlink(struct frame_listener *l, struct frame_conn *c)
{
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        l->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->prev = NULL;
    c->next = NULL;
    ASSERT(l->stats.conns_open > 0);
    l->stats.conns_open--;
}

void frame_conn_close(struct frame_conn *c, int rc)
{
    if (c->closing) {
        return;
    }
    ASSERT(rc != RC_OK);
    c->closing = true;
    c->close_rc = rc;
    if (c->listener != NULL) {
        listener_unlink(c->listener, c);
        c->listener = NULL;
    }
    if (c->timer_used) {
        uv_close((uv_handle_t *)&c->timer, conn_handle_close_cb);
    }
    uv_close((uv_handle_t *)&c->tcp, conn_handle_close_cb);
}

void frame_conn_attach(struct frame_conn *c, const struct frame_conn_cbs *cbs,
                       void *data)
{
    ASSERT(cbs->frame != NULL);
    c->cbs = *cbs;
    c->data = data;
}

void *frame_conn_data(const struct frame_conn *c)
{
    return c->data;
}

bool frame_conn_is_open(const struct frame_conn *c)
{
    return !c->closing;
}

bool frame_conn_reading(const struct frame_conn *c)
{
    return !c->closing && !c->connecting && !c->paused;
}

const char *frame_conn_peer(const struct frame_conn *c)
{
    return c->peer;
}

size_t frame_conn_write_queue_bytes(const struct frame_conn *c)
{
    return uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

int frame_conn_fileno(const struct frame_conn *c, int *fd_out)
{
    uv_os_fd_t fd;

    if (c->closing || uv_fileno((const uv_handle_t *)&c->tcp, &fd) != 0) {
        return RC_CLOSED;
    }
    *fd_out = fd;
    return RC_OK;
}

size_t frame_conn_frame_buffer_bytes(const struct frame_conn *c)
{
    return c->block != NULL ? c->frame_cap : 0;
}

/* --- Writing ------------------------------------------------------------- */

void frame_conn_outbox_add(struct frame_conn *c, size_t bytes)
{
    c->outbox_bytes += bytes;
}

void frame_conn_outbox_done(struct frame_conn *c, size_t bytes)
{
    ASSERT(c->outbox_bytes >= bytes);
    c->outbox_bytes -= bytes;
}

size_t frame_conn_outbox_bytes(const struct frame_conn *c)
{
    return c->outbox_bytes;
}

static void conn_write_cb(uv_write_t *req, int status)
{
    struct frame_conn_write *w = req->data;
    struct frame_conn *c = w->conn;

    frame_conn_outbox_done(c, w->bytes);
    if (c->listener != NULL) {
        c->active_ms = uv_now(c->listener->loop);
    }
    if (status < 0 && status != UV_ECANCELED && !c->closing) {
        TRACE_WARN(c->t, "peer=%s closing: write failed: %s", c->peer,
                   uv_strerror(status));
        frame_conn_close(c, RC_IO);
    }
    w->cb(w, status); /* may free w */
    frame_conn_flow(c);
}

int frame_conn_write(struct frame_conn *c, struct frame_conn_write *w,
                     const uv_buf_t *bufs, unsigned n_bufs,
                     frame_conn_write_cb cb)
{
    size_t bytes = 0;
    int rv;

    ASSERT(cb != NULL);
    if (c->closing) {
        return RC_CLOSED;
    }
    for (unsigned i = 0; i < n_bufs; i++) {
        bytes += bufs[i].len;
    }
    if (c->cfg.full == FRAME_CONN_FULL_CLOSE &&
        c->outbox_bytes + bytes > c->cfg.outbox_bytes_max) {
        TRACE_WARN(c->t, "peer=%s closing: outbox %zu + %zu bytes exceeds "
                   "%zu", c->peer, c->outbox_bytes, bytes,
                   c->cfg.outbox_bytes_max);
        frame_conn_close(c, RC_FULL);
        return RC_FULL;
    }
    w->conn = c;
    w->bytes = bytes;
    w->cb = cb;
    w->req.data = w;
    rv = uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, n_bufs,
                  conn_write_cb);
    if (rv != 0) {
        TRACE_WARN(c->t, "peer=%s closing: write failed: %s", c->peer,
                   uv_strerror(rv));
        frame_conn_close(c, RC_IO);
        return RC_IO;
    }
    c->outbox_bytes += bytes;
    return RC_OK;
}

/* --- Flow ---------------------------------------------------------------- */

static bool conn_over_bounds(struct frame_conn *c)
{
    if (c->cfg.full == FRAME_CONN_FULL_PAUSE &&
        c->outbox_bytes > c->cfg.outbox_bytes_max) {
        return true;
    }
    return c->cbs.hold != NULL && c->cbs.hold(c, false /* paused */);
}

static bool conn_below_half(struct frame_conn *c)
{
    if (c->cfg.full == FRAME_CONN_FULL_PAUSE &&
        c->outbox_bytes > c->cfg.outbox_bytes_max / 2) {
        return false;
    }
    return c->cbs.hold == NULL || !c->cbs.hold(c, true /* paused */);
}

static void conn_pause(struct frame_conn *c)
{
    ASSERT(!c->paused);
    c->paused = true;
    if (c->listener != NULL) {
        c->listener->stats.reads_paused++;
    }
    (void)uv_read_stop((uv_stream_t *)&c->tcp);
    TRACE_DEBUG(c->t, "peer=%s reading paused: outbox=%zu", c->peer,
                c->outbox_bytes);
}

void frame_conn_flow(struct frame_conn *c)
{
    if (c->closing || c->in_parse || c->connecting) {
        return;
    }
    if (!c->paused) {
        if (conn_over_bounds(c)) {
            conn_pause(c);
        }
        return;
    }
    if (!conn_below_half(c)) {
        return;
    }
    c->paused = false;
    TRACE_DEBUG(c->t, "peer=%s reading resumed", c->peer);
    if (c->rbuf_off < c->rbuf_len) {
        conn_parse(c);
        if (c->paused || c->closing) {
            return;
        }
    }
    conn_read_start(c);
}

/* --- Reading ------------------------------------------------------------- */

/* Hands a whole frame over; block NULL for a borrowed frame. */
static void conn_deliver(struct frame_conn *c, void *block, uint8_t *frame,
                         size_t len)
{
    bool nested = c->in_parse;

    c->in_parse = true;
    c->cbs.frame(c, block, frame, len);
    c->in_parse = nested;
}

/* The assembled frame is complete: hand it over, and in borrowed mode
 * keep its buffer for the next one if it is small enough. */
static void conn_frame_done(struct frame_conn *c)
{
    uint8_t *block = c->block;
    size_t len = c->frame_len;

    ASSERT(c->frame_have == len);
    c->block = NULL;
    if (c->cfg.frames_owned) {
        conn_deliver(c, block, block + c->cfg.headroom, len);
        return;
    }
    conn_deliver(c, NULL, block, len);
    if (c->spare == NULL && c->frame_cap <= c->cfg.keep_bytes) {
        c->spare = block;
        c->spare_cap = c->frame_cap;
    } else {
        free(block);
    }
}

/* Grows the frame being assembled to hold `more` further bytes, doubling
 * up to its announced length: a peer announcing the maximum and sending
 * ten bytes costs prealloc_bytes, not the maximum. False when out of
 * memory (the frame is unchanged). */
static bool frame_reserve(struct frame_conn *c, size_t more)
{
    size_t want = c->frame_have + more;
    size_t cap = c->frame_cap * 2;
    uint8_t *p;

    ASSERT(want <= c->frame_len);
    if (want <= c->frame_cap) {
        return true;
    }
    cap = cap > want ? cap : want;
    cap = cap < c->frame_len ? cap : c->frame_len;
    p = realloc(c->block, c->cfg.headroom + cap);
    if (p == NULL) {
        return false;
    }
    c->block = p;
    c->frame_cap = cap;
    return true;
}

/* Allocates the buffer of a frame of len (checked) bytes. */
static bool frame_start(struct frame_conn *c, size_t len)
{
    size_t cap = len < c->cfg.prealloc_bytes ? len : c->cfg.prealloc_bytes;

    if (c->spare != NULL) {
        /* Borrowed mode: the last frame's buffer, if it is big enough. */
        if (c->spare_cap >= cap) {
            c->block = c->spare;
            c->frame_cap = c->spare_cap;
        } else {
            free(c->spare);
        }
        c->spare = NULL;
    }
    if (c->block == NULL) {
        c->block = malloc(c->cfg.headroom + cap);
        c->frame_cap = cap;
    }
    if (c->block == NULL) {
        TRACE_WARN(c->t, "peer=%s closing: no memory for a %zu-byte frame",
                   c->peer, len);
        frame_conn_close(c, RC_NOMEM);
        return false;
    }
    c->frame_len = len;
    c->frame_have = 0;
    return true;
}

/* The 4-byte size is in: checks it before anything is allocated. */
static bool size_ok(struct frame_conn *c, uint32_t n)
{
    if (n >= c->cfg.frame_bytes_min && n <= c->cfg.frame_bytes_max) {
        return true;
    }
    TRACE_WARN(c->t, "peer=%s closing: %s %" PRIu32 " outside [%" PRIu32
               ", %" PRIu32 "]", c->peer, c->cfg.size_name, n,
               c->cfg.frame_bytes_min, c->cfg.frame_bytes_max);
    frame_conn_close(c, RC_MALFORMED);
    return false;
}

/* Reads the size; then delivers the frame in place when it lies whole in
 * p[0..n) and frames are borrowed, else starts assembling it. Returns the
 * bytes consumed. */
static size_t parse_size(struct frame_conn *c, uint8_t *p, size_t n)
{
    size_t take = FRAME_CONN__SIZE_BYTES - c->size_have;
    uint32_t len;

    take = take < n ? take : n;
    memcpy(c->size_buf + c->size_have, p, take);
    c->size_have += take;
    if (c->size_have < FRAME_CONN__SIZE_BYTES) {
        return take;
    }
    c->size_have = 0;
    len = bytes_be32(c->size_buf);
    if (!size_ok(c, len)) {
        return n;
    }
    if (!c->cfg.frames_owned && n - take >= len) {
        conn_deliver(c, NULL, p + take, len);
        return take + len;
    }
    if (frame_start(c, len) && len == 0) {
        conn_frame_done(c);
    }
    return take;
}

/* Appends bytes to the frame being assembled; completes it when full. */
static size_t parse_frame(struct frame_conn *c, const uint8_t *p, size_t n)
{
    size_t take = c->frame_len - c->frame_have;

    take = take < n ? take : n;
    if (!frame_reserve(c, take)) {
        TRACE_WARN(c->t, "peer=%s closing: no memory for a %zu-byte frame",
                   c->peer, c->frame_len);
        frame_conn_close(c, RC_NOMEM);
        return n;
    }
    memcpy(c->block + c->cfg.headroom + c->frame_have, p, take);
    c->frame_have += take;
    if (c->frame_have == c->frame_len) {
        conn_frame_done(c);
    }
    return take;
}

/* Parses the read buffer's unparsed bytes. At each frame boundary the
 * bounds are checked; over them, reading pauses and the rest waits. */
static void conn_parse(struct frame_conn *c)
{
    ASSERT(!c->in_parse);
    c->in_parse = true;
    while (c->rbuf_off < c->rbuf_len && !c->closing) {
        uint8_t *p = c->rbuf + c->rbuf_off;
        size_t n = c->rbuf_len - c->rbuf_off;
        if (c->block != NULL) {
            c->rbuf_off += parse_frame(c, p, n);
            continue;
        }
        if (c->size_have == 0 && conn_over_bounds(c)) {
            if (!c->paused) {
                conn_pause(c);
            }
            break;
        }
        c->rbuf_off += parse_size(c, p, n);
    }
    if (c->rbuf_off == c->rbuf_len || c->closing) {
        c->rbuf_off = 0;
        c->rbuf_len = 0;
    }
    c->in_parse = false;
}

static void conn_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct frame_conn *c = h->data;
    size_t left, more, end;

    (void)suggested;
    ASSERT(c->rbuf_len == 0);
    if (c->block == NULL) {
        *buf = uv_buf_init((char *)c->rbuf,
                           (unsigned)c->cfg.read_buffer_bytes);
        return;
    }
    /* The rest of this frame goes straight into it, at least read_bytes
     * more per read; the next frame's bytes never land in it. */
    left = c->frame_len - c->frame_have;
    more = left < c->cfg.read_bytes ? left : c->cfg.read_bytes;
    if (!frame_reserve(c, more)) {
        *buf = uv_buf_init(NULL, 0); /* read_cb gets UV_ENOBUFS */
        return;
    }
    /* A kept buffer may be larger than this frame. */
    end = c->frame_cap < c->frame_len ? c->frame_cap : c->frame_len;
    *buf = uv_buf_init((char *)c->block + c->cfg.headroom + c->frame_have,
                       (unsigned)(end - c->frame_have));
}

static void conn_read_failed(struct frame_conn *c, ssize_t nread)
{
    if (nread != UV_EOF) {
        /* A reset is a peer going away (Kafka logs it at debug). */
        if (nread == UV_ECONNRESET || nread == UV_EPIPE) {
            TRACE_DEBUG(c->t, "peer=%s closing: read failed: %s", c->peer,
                        uv_strerror((int)nread));
        } else {
            TRACE_WARN(c->t, "peer=%s closing: read failed: %s", c->peer,
                       uv_strerror((int)nread));
        }
        frame_conn_close(c, nread == UV_ENOBUFS ? RC_NOMEM : RC_IO);
        return;
    }
    if (c->size_have > 0 || c->block != NULL) {
        TRACE_WARN(c->t, "peer=%s closed the connection mid-frame",
                   c->peer);
    } else {
        TRACE_DEBUG(c->t, "peer=%s closed the connection", c->peer);
    }
    frame_conn_close(c, RC_CLOSED);
}

static void conn_read_cb(uv_stream_t *stream, ssize_t nread,
                         const uv_buf_t *buf)
{
    struct frame_conn *c = stream->data;

    if (nread == 0 || c->closing) {
        return;
    }
    if (nread < 0) {
        conn_read_failed(c, nread);
        return;
    }
    if (c->listener != NULL) {
        c->active_ms = uv_now(c->listener->loop);
    }
    /* The lines of what one read's frames cause (a leader's thousands of
     * AlterPartition answers) go out together. */
    trace_batch_begin();
    if ((uint8_t *)buf->base == c->rbuf) {
        c->rbuf_off = 0;
        c->rbuf_len = (size_t)nread;
        conn_parse(c);
    } else {
        ASSERT(c->block != NULL);
        ASSERT((uint8_t *)buf->base ==
               c->block + c->cfg.headroom + c->frame_have);
        ASSERT((size_t)nread <= c->frame_len - c->frame_have);
        c->frame_have += (size_t)nread;
        if (c->frame_have == c->frame_len) {
            conn_frame_done(c);
        }
    }
    trace_batch_end();
    frame_conn_flow(c);
}

static void conn_read_start(struct frame_conn *c)
{
    int rv = uv_read_start((uv_stream_t *)&c->tcp, conn_alloc_cb,
                           conn_read_cb);
    if (rv != 0) {
        TRACE_WARN(c->t, "peer=%s closing: read start failed: %s",
                   c->peer, uv_strerror(rv));
        frame_conn_close(c, RC_IO);
    }
}

/* --- Connecting ---------------------------------------------------------- */

static void conn_connect_cb(uv_connect_t *req, int status)
{
    struct frame_conn *c = req->data;

    if (status == UV_ECANCELED || c->closing) {
        return;
    }
    if (c->timer_used) {
        (void)uv_timer_stop(&c->timer);
    }
    if (status < 0) {
        TRACE_WARN(c->t, "peer=%s connect failed: %s", c->peer,
                   uv_strerror(status));
        frame_conn_close(c, RC_IO);
        return;
    }
    TRACE_DEBUG(c->t, "peer=%s connected", c->peer);
    c->connecting = false;
    conn_read_start(c);
    if (!c->closing && c->cbs.connected != NULL) {
        c->cbs.connected(c);
    }
}

static void conn_timeout_cb(uv_timer_t *timer)
{
    struct frame_conn *c = timer->data;

    if (c->closing || !c->connecting) {
        return;
    }
    TRACE_WARN(c->t, "peer=%s connect failed: timed out", c->peer);
    frame_conn_close(c, RC_TIMEOUT);
}

/* Closes a connection no user has seen: no callback runs. */
static void conn_abandon(struct frame_conn *c)
{
    c->cbs = (struct frame_conn_cbs){0};
    frame_conn_close(c, RC_CLOSED);
}

static int conn_timer_start(struct frame_conn *c, uv_loop_t *loop,
                            uint64_t timeout_ms)
{
    if (uv_timer_init(loop, &c->timer) != 0) {
        return RC_IO;
    }
    c->timer.data = c;
    c->timer_used = true;
    c->handles_open++;
    if (uv_timer_start(&c->timer, conn_timeout_cb, timeout_ms, 0) != 0) {
        return RC_IO;
    }
    return RC_OK;
}

int frame_conn_connect(struct frame_conn **out, uv_loop_t *loop,
                       const struct sockaddr *addr, const char *peer,
                       const struct frame_conn_config *cfg,
                       const struct frame_conn_cbs *cbs, void *data,
                       uint64_t timeout_ms, struct tracer *t)
{
    struct frame_conn *c = conn_new(loop, cfg, t);
    int rv;

    if (c == NULL) {
        return RC_NOMEM;
    }
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->connecting = true;
    /* Before the socket exists libuv records the flag and applies it when
     * the connect creates the socket. */
    rv = uv_tcp_nodelay(&c->tcp, 1);
    if (rv == 0) {
        rv = uv_tcp_connect(&c->connect_req, &c->tcp, addr,
                            conn_connect_cb);
    }
    if (rv != 0) {
        TRACE_WARN(t, "peer=%s connect failed: %s", c->peer,
                   uv_strerror(rv));
        conn_abandon(c);
        return RC_IO;
    }
    if (timeout_ms > 0 && conn_timer_start(c, loop, timeout_ms) != RC_OK) {
        conn_abandon(c);
        return RC_IO;
    }
    frame_conn_attach(c, cbs, data);
    *out = c;
    return RC_OK;
}

/* --- Listener ------------------------------------------------------------ */

/* Nothing in flight: no frame handed out unanswered (the user holds a
 * reference for each), nothing queued to send. */
static bool conn_quiet(const struct frame_conn *c)
{
    return c->refs == 1 && c->outbox_bytes == 0 && !c->closing;
}

static bool same_ip(const struct sockaddr_storage *a,
                    const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return false;
    }
    if (a->ss_family == AF_INET) {
        return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
    }
    if (a->ss_family == AF_INET6) {
        return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    }
    return false;
}

static size_t same_ip_open(const struct frame_listener *l,
                           const struct sockaddr_storage *ss)
{
    size_t n = 0;
    for (const struct frame_conn *c = l->conns; c != NULL; c = c->next) {
        n += same_ip(&c->peer_ss, ss);
    }
    return n;
}

/* At the connection bound: closes the connection that has been quiet the
 * longest, if it has been for evict_idle_ms, to admit a new one (Kafka
 * closes the least recently used connection for a privileged listener,
 * KIP-402). False when none may go. */
static bool evict_idlest(struct frame_listener *l)
{
    if (l->cfg.evict_idle_ms == 0) {
        return false;
    }
    uint64_t now = uv_now(l->loop);
    struct frame_conn *idlest = NULL;
    for (struct frame_conn *c = l->conns; c != NULL; c = c->next) {
        if (conn_quiet(c) && now - c->active_ms >= l->cfg.evict_idle_ms &&
            (idlest == NULL || c->active_ms < idlest->active_ms)) {
            idlest = c;
        }
    }
    if (idlest == NULL) {
        return false;
    }
    TRACE_INFO(l->t, "peer=%s closing: idle for %" PRIu64 " ms, to admit a "
               "new connection at the bound of %zu", idlest->peer,
               now - idlest->active_ms, l->cfg.conns_max);
    l->stats.conns_evicted++;
    frame_conn_close(idlest, RC_CLOSED);
    return true;
}

/* connections.max.idle.ms: quiet connections with no activity for that
 * long are closed. */
static void sweep_cb(uv_timer_t *t)
{
    struct frame_listener *l = t->data;
    uint64_t now = uv_now(l->loop);
    struct frame_conn *c = l->conns;
    while (c != NULL) {
        struct frame_conn *next = c->next;
        if (conn_quiet(c) && now - c->active_ms >= l->cfg.idle_ms) {
            TRACE_DEBUG(l->t, "peer=%s closing: idle for %" PRIu64 " ms",
                        c->peer, now - c->active_ms);
            l->stats.conns_idle_closed++;
            frame_conn_close(c, RC_TIMEOUT);
        }
        c = next;
    }
}

static void listener_accept(struct frame_listener *l, struct frame_conn *c)
{
    struct sockaddr_storage ss;
    int ss_len = (int)sizeof ss;
    int rv = uv_accept((uv_stream_t *)&l->tcp, (uv_stream_t *)&c->tcp);

    if (rv != 0) {
        TRACE_WARN(l->t, "port=%d accept failed: %s", l->port,
                   uv_strerror(rv));
        conn_abandon(c);
        return;
    }
    memset(&ss, 0, sizeof ss);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &ss_len) == 0) {
        net_sockaddr_name(&ss, c->peer, sizeof c->peer);
    }
    c->peer_ss = ss;
    c->active_ms = uv_now(l->loop);
    if (l->cfg.per_ip_max > 0 && same_ip_open(l, &ss) >= l->cfg.per_ip_max) {
        TRACE_WARN(l->t, "peer=%s closing: %zu connections from its address "
                   "already open", c->peer, l->cfg.per_ip_max);
        l->stats.conns_refused++;
        conn_abandon(c);
        return;
    }
    if (l->stats.conns_open >= l->cfg.conns_max && !evict_idlest(l)) {
        TRACE_WARN(l->t, "peer=%s closing: %" PRIu64 " connections already "
                   "open", c->peer, l->stats.conns_open);
        l->stats.conns_refused++;
        conn_abandon(c);
        return;
    }
    rv = uv_tcp_nodelay(&c->tcp, 1);
    if (rv != 0) {
        TRACE_WARN(l->t, "peer=%s TCP_NODELAY failed: %s", c->peer,
                   uv_strerror(rv));
    }
    c->listener = l;
    c->next = l->conns;
    if (l->conns != NULL) {
        l->conns->prev = c;
    }
    l->conns = c;
    l->stats.conns_open++;
    rv = l->cb(l->arg, c);
    if (rv != RC_OK) {
        TRACE_WARN(l->t, "peer=%s closing: %s", c->peer, rc_str(rv));
        conn_abandon(c);
        return;
    }
    ASSERT(c->cbs.frame != NULL);
    TRACE_DEBUG(l->t, "peer=%s connected", c->peer);
    conn_read_start(c);
    frame_conn_flow(c); /* the user's hold applies from the first byte */
}

static void listener_connection_cb(uv_stream_t *stream, int status)
{
    struct frame_listener *l = stream->data;
    struct frame_conn *c;

    if (status < 0) {
        TRACE_WARN(l->t, "port=%d accept failed: %s", l->port,
                   uv_strerror(status));
        return;
    }
    c = conn_new(l->loop, &l->cfg.conn, l->t);
    if (c == NULL) {
        TRACE_ERROR(l->t, "port=%d accept: out of memory", l->port);
        return;
    }
    l->stats.conns_accepted++;
    listener_accept(l, c);
}

static void listener_close_cb(uv_handle_t *h)
{
    struct frame_listener *l = h->data;
    frame_listener_closed_cb cb = l->closed_cb;
    void *arg = l->arg;

    ASSERT(l->handles > 0);
    if (--l->handles > 0) {
        return;
    }
    ASSERT(l->conns == NULL);
    free(l);
    if (cb != NULL) {
        cb(arg);
    }
}

int frame_listener_start(struct frame_listener **out, uv_loop_t *loop,
                         const struct frame_listener_config *cfg,
                         frame_listener_accept_cb cb, void *arg,
                         struct tracer *t)
{
    struct frame_listener *l;
    int rv;

    ASSERT(cb != NULL);
    if (cfg->port < 0 || cfg->port > 65535) {
        return RC_INVALID;
    }
    l = calloc(1, sizeof *l);
    if (l == NULL) {
        return RC_NOMEM;
    }
    l->loop = loop;
    l->t = t;
    l->cfg = *cfg;
    l->cfg.host = NULL; /* borrowed for the call only */
    l->cb = cb;
    l->arg = arg;
    if (uv_tcp_init(loop, &l->tcp) != 0) {
        free(l);
        return RC_IO;
    }
    l->tcp.data = l;
    rv = uv_timer_init(loop, &l->sweep);
    ASSERT(rv == 0);
    l->sweep.data = l;
    l->handles = 2;
    rv = net_listen(&l->tcp, loop, cfg->host, cfg->port, cfg->backlog,
                    listener_connection_cb, &l->port, t);
    if (rv != RC_OK) {
        l->closing = true;
        uv_close((uv_handle_t *)&l->tcp, listener_close_cb);
        uv_close((uv_handle_t *)&l->sweep, listener_close_cb);
        return rv;
    }
    if (cfg->idle_ms > 0) {
        uint64_t every = cfg->idle_ms / 4;
        every = every < FRAME_CONN__SWEEP_MS_MIN   ? FRAME_CONN__SWEEP_MS_MIN
                : every > FRAME_CONN__SWEEP_MS_MAX ? FRAME_CONN__SWEEP_MS_MAX
                                                   : every;
        rv = uv_timer_start(&l->sweep, sweep_cb, every, every);
        ASSERT(rv == 0);
    }
    *out = l;
    return RC_OK;
}

int frame_listener_port(const struct frame_listener *l)
{
    return l->port;
}

void frame_listener_close(struct frame_listener *l,
                          frame_listener_closed_cb cb)
{
    ASSERT(!l->closing);
    l->closing = true;
    l->closed_cb = cb;
    while (l->conns != NULL) {
        frame_conn_close(l->conns, RC_CLOSED);
    }
    uv_close((uv_handle_t *)&l->tcp, listener_close_cb);
    uv_close((uv_handle_t *)&l->sweep, listener_close_cb);
}

void frame_listener_flow_all(struct frame_listener *l)
{
    /* Each connection is held while it flows, and the next one too, so
     * neither is freed under the walk; if the next one closed meanwhile
     * (it left the list), the walk starts over: flowing again is
     * harmless, and each restart follows a close. */
    struct frame_conn *c = l->conns;
    if (c != NULL) {
        frame_conn_ref(c);
    }
    while (c != NULL) {
        struct frame_conn *next = c->next;
        if (next != NULL) {
            frame_conn_ref(next);
        }
        frame_conn_flow(c);
        frame_conn_unref(c);
        if (next != NULL && next->closing) {
            frame_conn_unref(next);
            next = l->conns;
            if (next != NULL) {
                frame_conn_ref(next);
            }
        }
        c = next;
    }
}

void frame_listener_get_stats(const struct frame_listener *l,
                              struct frame_listener_stats *out)
{
    *out = l->stats;
}
