/* Framed RPC over libuv TCP (layout in common/net/rpc.h). One struct rpc_conn
 * type serves both sides: it owns its uv_tcp_t, a read buffer and the
 * frame being assembled; each uv_write owns one struct rpc__wreq (request,
 * header and payload in one allocation) until its callback frees it.
 *
 * Server side: the server owns its listener and a list of its open
 * connections; a connection leaves the list when it starts closing and
 * is freed when both its close callback has run and every rpc_conn_ref()
 * has been dropped. The server is freed in the listener's close callback.
 *
 * Client side: the client owns a fixed table of RPC_INFLIGHT_MAX call
 * slots (a correlation id names its slot: id % RPC_INFLIGHT_MAX), one
 * deadline timer, and one connection per target. Every call in flight
 * sits on exactly one connection's list, in send order; a call queued
 * while connecting keeps its unsent frame. A failing connection is
 * detached from its target at once (the next call reconnects) and its
 * calls are failed from its close callback, so callbacks never run inside
 * an rpc_* function. The client is freed when its timer and all its
 * connections have closed.
 *
 * Loop thread only. */
#include "common/net/rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/net/addr.h"
#include "common/assert.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/net/net.h"
#include "common/rc.h"

#define RPC__LENGTH_BYTES 4u
#define RPC__CID_BYTES 8u
#define RPC__HEADER_BYTES (RPC__LENGTH_BYTES + RPC__CID_BYTES)
#define RPC__PAYLOAD_BYTES_MAX (RPC_FRAME_BYTES_MAX - RPC__CID_BYTES)
#define RPC__PEER_BYTES 64u
#define RPC__BACKLOG 128

enum rpc__side { RPC__SERVER_SIDE, RPC__CLIENT_SIDE };

/* One frame being written: freed in conn_write_cb. */
struct rpc__wreq {
    uv_write_t req;
    struct rpc_conn *conn;
    size_t bytes;
    uint8_t data[]; /* header, then payload */
};

struct rpc__call {
    struct rpc__call *prev, *next; /* conn's list, or the free list */
    struct rpc_conn *conn;
    struct rpc__wreq *unsent; /* frame waiting for the connect */
    rpc_response_cb cb;
    void *arg;
    uint64_t cid;
    uint64_t deadline_ms;
    bool in_use;
};

struct rpc__target {
    struct sockaddr_storage addr;
    char name[RPC__PEER_BYTES];
    struct rpc_conn *conn; /* open or connecting; NULL otherwise */
};

struct rpc_conn {
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    enum rpc__side side;
    struct tracer *t;
    int refs;       /* server side: the handle's one plus users' */
    bool connected; /* client side: connect completed */
    bool closing;
    int fail_rc;    /* client side: what pending calls get */
    size_t outbox_bytes;
    /* Server side. */
    struct rpc_server *server; /* NULL once closing */
    struct rpc_conn *prev, *next;
    /* Client side. */
    struct rpc_client *client;
    struct rpc__target *target; /* NULL once closing */
    struct rpc__call *calls_head, *calls_tail;
    /* The frame being read: its header, then (if it did not arrive with
     * its header) a body allocated after the length was validated. */
    uint8_t head[RPC__HEADER_BYTES];
    size_t head_have;
    uint64_t body_cid;
    uint8_t *body;
    size_t body_len, body_have;
    char peer[RPC__PEER_BYTES];
    uint8_t rbuf[RPC_READ_BUFFER_BYTES];
};

struct rpc_server {
    uv_tcp_t listener;
    uv_loop_t *loop;
    struct tracer *t;
    rpc_request_cb cb;
    void *arg;
    struct rpc_conn *conns; /* open connections */
    size_t n_conns;
    int port;
    bool closing;
};

struct rpc_client {
    uv_loop_t *loop;
    struct tracer *t;
    uv_timer_t timer;
    struct rpc__target *targets;
    size_t n_targets;
    size_t current;
    struct rpc__call *calls; /* RPC_INFLIGHT_MAX slots */
    struct rpc__call *free_calls;
    uint64_t next_seq;
    uint64_t timer_due_ms;
    bool timer_armed;
    bool closing;
    size_t n_handles; /* timer and connections not yet closed */
};

static void conn_close(struct rpc_conn *conn, int rc);
static void client_conn_frame(struct rpc_conn *conn, uint64_t cid,
                              const uint8_t *payload, size_t len);

/* --- Addresses ----------------------------------------------------------- */

/* "host:port" (common/net/addr.h) or "[v6]:port", resolved. */
static int sockaddr_parse(uv_loop_t *loop, const char *s,
                          struct sockaddr_storage *out)
{
    struct addr a;
    char *host = a.host;
    size_t host_len;

    if (addr_parse(s, strlen(s), &a) != RC_OK) {
        return RC_INVALID;
    }
    host_len = strlen(host);
    if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
        host[host_len - 1] = '\0';
        host++;
    }
    return net_sockaddr_resolve(loop, host, a.port, out);
}

/* --- Writing ------------------------------------------------------------- */

static struct rpc__wreq *wreq_new(uint64_t cid, const uint8_t *payload,
                                  size_t len)
{
    struct rpc__wreq *w;

    ASSERT(len <= RPC__PAYLOAD_BYTES_MAX);
    w = malloc(sizeof *w + RPC__HEADER_BYTES + len);
    if (w == NULL) {
        return NULL;
    }
    w->conn = NULL;
    w->bytes = RPC__HEADER_BYTES + len;
    bytes_put_be32(w->data, (uint32_t)(RPC__CID_BYTES + len));
    bytes_put_be64(w->data + RPC__LENGTH_BYTES, cid);
    if (len > 0) {
        memcpy(w->data + RPC__HEADER_BYTES, payload, len);
    }
    return w;
}

static void conn_write_cb(uv_write_t *req, int status)
{
    struct rpc__wreq *w = req->data;
    struct rpc_conn *conn = w->conn;

    ASSERT(conn->outbox_bytes >= w->bytes);
    conn->outbox_bytes -= w->bytes;
    free(w);
    if (status < 0 && status != UV_ECANCELED && !conn->closing) {
        TRACE_WARN(conn->t, "peer=%s write failed: %s", conn->peer,
                   uv_strerror(status));
        conn_close(conn, RC_IO);
    }
}

/* Hands w to libuv (counted in the outbox until its callback). On failure
 * w is freed and the libuv error returned. */
static int conn_write(struct rpc_conn *conn, struct rpc__wreq *w)
{
    uv_buf_t buf = uv_buf_init((char *)w->data, (unsigned)w->bytes);
    int rv;

    ASSERT(!conn->closing);
    w->conn = conn;
    w->req.data = w;
    conn->outbox_bytes += w->bytes;
    rv = uv_write(&w->req, (uv_stream_t *)&conn->tcp, &buf, 1,
                  conn_write_cb);
    if (rv != 0) {
        conn->outbox_bytes -= w->bytes;
        free(w);
    }
    return rv;
}

/* --- Reading ------------------------------------------------------------- */

static void conn_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct rpc_conn *conn = h->data;

    (void)suggested;
    if (conn->body != NULL) {
        /* Exactly the rest of this body: the next frame's bytes never
         * land in it. */
        size_t left = conn->body_len - conn->body_have;
        *buf = uv_buf_init((char *)conn->body + conn->body_have,
                           (unsigned)left);
    } else {
        *buf = uv_buf_init((char *)conn->rbuf, (unsigned)sizeof conn->rbuf);
    }
}

static void conn_deliver(struct rpc_conn *conn, uint64_t cid,
                         const uint8_t *payload, size_t len)
{
    if (conn->side == RPC__CLIENT_SIDE) {
        client_conn_frame(conn, cid, payload, len);
        return;
    }
    if (conn->server != NULL) {
        conn->server->cb(conn->server->arg, conn, cid, payload, len);
    }
}

static void conn_deliver_body(struct rpc_conn *conn)
{
    uint8_t *body = conn->body;
    size_t len = conn->body_len;

    ASSERT(conn->body_have == len);
    conn->body = NULL;
    conn->body_len = 0;
    conn->body_have = 0;
    conn_deliver(conn, conn->body_cid, body, len);
    free(body);
}

/* Checks the length field as soon as it is in; closes on a bad one. */
static bool conn_length_ok(struct rpc_conn *conn)
{
    uint32_t n = bytes_be32(conn->head);

    if (n >= RPC__CID_BYTES && n <= RPC_FRAME_BYTES_MAX) {
        return true;
    }
    TRACE_WARN(conn->t,
               "peer=%s closing: frame length %" PRIu32
               " outside [%u, %u]",
               conn->peer, n, RPC__CID_BYTES, RPC_FRAME_BYTES_MAX);
    conn_close(conn, RC_MALFORMED);
    return false;
}

static bool conn_body_start(struct rpc_conn *conn, uint64_t cid, size_t len)
{
    conn->body = malloc(len);
    if (conn->body == NULL) {
        TRACE_WARN(conn->t, "peer=%s closing: no memory for %zu bytes",
                   conn->peer, len);
        conn_close(conn, RC_NOMEM);
        return false;
    }
    conn->body_cid = cid;
    conn->body_len = len;
    conn->body_have = 0;
    return true;
}

/* Consumes n bytes read into rbuf. Frames wholly inside them are delivered
 * in place; a frame cut by the buffer's end continues in conn->body. Stops
 * when a callback closed the connection. */
static void conn_parse(struct rpc_conn *conn, const uint8_t *p, size_t n)
{
    size_t off = 0;

    while (off < n && !conn->closing) {
        size_t take;
        if (conn->body != NULL) {
            take = conn->body_len - conn->body_have;
            take = take < n - off ? take : n - off;
            memcpy(conn->body + conn->body_have, p + off, take);
            conn->body_have += take;
            off += take;
            if (conn->body_have == conn->body_len) {
                conn_deliver_body(conn);
            }
            continue;
        }
        take = RPC__HEADER_BYTES - conn->head_have;
        take = take < n - off ? take : n - off;
        memcpy(conn->head + conn->head_have, p + off, take);
        conn->head_have += take;
        off += take;
        if (conn->head_have >= RPC__LENGTH_BYTES && !conn_length_ok(conn)) {
            return;
        }
        if (conn->head_have < RPC__HEADER_BYTES) {
            continue;
        }
        conn->head_have = 0;
        uint64_t cid = bytes_be64(conn->head + RPC__LENGTH_BYTES);
        size_t len = bytes_be32(conn->head) - RPC__CID_BYTES;
        if (n - off >= len) {
            conn_deliver(conn, cid, p + off, len);
            off += len;
        } else if (!conn_body_start(conn, cid, len)) {
            return;
        }
    }
}

static void conn_read_failed(struct rpc_conn *conn, ssize_t nread)
{
    if (nread != UV_EOF) {
        TRACE_WARN(conn->t, "peer=%s read failed: %s", conn->peer,
                   uv_strerror((int)nread));
        conn_close(conn, RC_IO);
    } else if (conn->head_have > 0 || conn->body != NULL) {
        TRACE_WARN(conn->t, "peer=%s closed the connection mid-frame",
                   conn->peer);
        conn_close(conn, RC_CLOSED);
    } else {
        TRACE_DEBUG(conn->t, "peer=%s closed the connection", conn->peer);
        conn_close(conn, RC_CLOSED);
    }
}

static void conn_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct rpc_conn *conn = s->data;

    if (nread == 0 || conn->closing) {
        return;
    }
    if (nread < 0) {
        conn_read_failed(conn, nread);
        return;
    }
    if ((uint8_t *)buf->base == conn->rbuf) {
        conn_parse(conn, conn->rbuf, (size_t)nread);
        return;
    }
    ASSERT(conn->body != NULL);
    ASSERT((uint8_t *)buf->base == conn->body + conn->body_have);
    ASSERT((size_t)nread <= conn->body_len - conn->body_have);
    conn->body_have += (size_t)nread;
    if (conn->body_have == conn->body_len) {
        conn_deliver_body(conn);
    }
}

static int conn_read_start(struct rpc_conn *conn)
{
    int rv = uv_read_start((uv_stream_t *)&conn->tcp, conn_alloc_cb,
                           conn_read_cb);
    if (rv != 0) {
        TRACE_WARN(conn->t, "peer=%s closing: read start failed: %s",
                   conn->peer, uv_strerror(rv));
        conn_close(conn, RC_IO);
    }
    return rv;
}

/* --- Connection lifetime ------------------------------------------------- */

static struct rpc_conn *conn_new(enum rpc__side side, struct tracer *t)
{
    struct rpc_conn *conn = calloc(1, sizeof *conn);

    if (conn != NULL) {
        conn->side = side;
        conn->t = t;
        conn->refs = 1;
        conn->tcp.data = conn;
        conn->connect_req.data = conn;
        snprintf(conn->peer, sizeof conn->peer, "?");
    }
    return conn;
}

static void conn_free(struct rpc_conn *conn)
{
    ASSERT(conn->closing);
    ASSERT(conn->outbox_bytes == 0);
    ASSERT(conn->calls_head == NULL);
    free(conn->body);
    free(conn);
}

static void client_conn_closed(struct rpc_conn *conn);

static void conn_close_cb(uv_handle_t *h)
{
    struct rpc_conn *conn = h->data;

    if (conn->side == RPC__CLIENT_SIDE) {
        client_conn_closed(conn);
        return;
    }
    rpc_conn_unref(conn);
}

static void server_unlink(struct rpc_server *s, struct rpc_conn *conn)
{
    if (conn->prev != NULL) {
        conn->prev->next = conn->next;
    } else {
        s->conns = conn->next;
    }
    if (conn->next != NULL) {
        conn->next->prev = conn->prev;
    }
    conn->prev = NULL;
    conn->next = NULL;
    ASSERT(s->n_conns > 0);
    s->n_conns--;
}

/* Starts closing: detaches from the server or target at once, so nothing
 * new reaches the connection; frees happen in conn_close_cb. */
static void conn_close(struct rpc_conn *conn, int rc)
{
    if (conn->closing) {
        return;
    }
    conn->closing = true;
    conn->fail_rc = rc;
    if (conn->server != NULL) {
        server_unlink(conn->server, conn);
        conn->server = NULL;
    }
    if (conn->target != NULL) {
        if (conn->target->conn == conn) {
            conn->target->conn = NULL;
        }
        conn->target = NULL;
    }
    uv_close((uv_handle_t *)&conn->tcp, conn_close_cb);
}

/* --- Server -------------------------------------------------------------- */

void rpc_conn_ref(struct rpc_conn *conn)
{
    ASSERT(conn->side == RPC__SERVER_SIDE);
    ASSERT(conn->refs > 0);
    conn->refs++;
}

void rpc_conn_unref(struct rpc_conn *conn)
{
    ASSERT(conn->side == RPC__SERVER_SIDE);
    ASSERT(conn->refs > 0);
    conn->refs--;
    if (conn->refs == 0) {
        conn_free(conn);
    }
}

bool rpc_conn_is_open(const struct rpc_conn *conn)
{
    return !conn->closing;
}

const char *rpc_conn_peer(const struct rpc_conn *conn)
{
    return conn->peer;
}

int rpc_reply(struct rpc_conn *conn, uint64_t correlation_id,
              const uint8_t *payload, size_t len)
{
    struct rpc__wreq *w;
    int rv;

    ASSERT(conn->side == RPC__SERVER_SIDE);
    if (conn->closing) {
        return RC_CLOSED;
    }
    if (len > RPC__PAYLOAD_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    if (conn->outbox_bytes + RPC__HEADER_BYTES + len >
        RPC_CONN_OUTBOX_BYTES_MAX) {
        TRACE_WARN(conn->t,
                   "peer=%s closing: outbox %zu + %zu bytes exceeds %u",
                   conn->peer, conn->outbox_bytes, RPC__HEADER_BYTES + len,
                   RPC_CONN_OUTBOX_BYTES_MAX);
        conn_close(conn, RC_FULL);
        return RC_FULL;
    }
    w = wreq_new(correlation_id, payload, len);
    if (w == NULL) {
        return RC_NOMEM;
    }
    rv = conn_write(conn, w);
    if (rv != 0) {
        TRACE_WARN(conn->t, "peer=%s closing: write failed: %s", conn->peer,
                   uv_strerror(rv));
        conn_close(conn, RC_IO);
        return RC_IO;
    }
    return RC_OK;
}

static void server_accept(struct rpc_server *s, struct rpc_conn *conn)
{
    struct sockaddr_storage ss;
    int ss_len = (int)sizeof ss;
    int rv;

    rv = uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&conn->tcp);
    if (rv != 0) {
        TRACE_WARN(s->t, "accept failed: %s", uv_strerror(rv));
        conn_close(conn, RC_IO);
        return;
    }
    if (uv_tcp_getpeername(&conn->tcp, (struct sockaddr *)&ss, &ss_len) ==
        0) {
        net_sockaddr_name(&ss, conn->peer, sizeof conn->peer);
    }
    if (s->n_conns >= RPC_SERVER_CONNS_MAX) {
        TRACE_WARN(s->t, "peer=%s closing: %zu connections already open",
                   conn->peer, s->n_conns);
        conn_close(conn, RC_FULL);
        return;
    }
    conn->server = s;
    conn->next = s->conns;
    if (s->conns != NULL) {
        s->conns->prev = conn;
    }
    s->conns = conn;
    s->n_conns++;
    rv = uv_tcp_nodelay(&conn->tcp, 1);
    if (rv != 0) {
        TRACE_WARN(s->t, "peer=%s TCP_NODELAY failed: %s", conn->peer,
                   uv_strerror(rv));
    }
    if (conn_read_start(conn) == 0) {
        TRACE_DEBUG(s->t, "peer=%s connected", conn->peer);
    }
}

static void server_connection_cb(uv_stream_t *listener, int status)
{
    struct rpc_server *s = listener->data;
    struct rpc_conn *conn;
    int rv;

    if (status < 0) {
        TRACE_WARN(s->t, "port=%d accept failed: %s", s->port,
                   uv_strerror(status));
        return;
    }
    conn = conn_new(RPC__SERVER_SIDE, s->t);
    if (conn == NULL) {
        TRACE_ERROR(s->t, "port=%d accept: out of memory", s->port);
        return;
    }
    rv = uv_tcp_init(s->loop, &conn->tcp);
    if (rv != 0) {
        TRACE_ERROR(s->t, "port=%d accept: %s", s->port, uv_strerror(rv));
        free(conn);
        return;
    }
    server_accept(s, conn);
}

static void server_close_cb(uv_handle_t *h)
{
    struct rpc_server *s = h->data;

    ASSERT(s->conns == NULL);
    free(s);
}

int rpc_server_start(struct rpc_server **out, uv_loop_t *loop,
                     const char *host, int port, rpc_request_cb cb,
                     void *arg, struct tracer *t)
{
    struct rpc_server *s;
    int rv;

    ASSERT(cb != NULL);
    if (port < 0 || port > 65535) {
        return RC_INVALID;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        return RC_NOMEM;
    }
    s->loop = loop;
    s->t = t;
    s->cb = cb;
    s->arg = arg;
    rv = uv_tcp_init(loop, &s->listener);
    if (rv != 0) {
        free(s);
        return RC_IO;
    }
    s->listener.data = s;
    rv = net_listen(&s->listener, loop, host, port, RPC__BACKLOG,
                    server_connection_cb, &s->port, t);
    if (rv != RC_OK) {
        s->closing = true;
        uv_close((uv_handle_t *)&s->listener, server_close_cb);
        return rv;
    }
    TRACE_INFO(t, "host=%s port=%d listening", host, s->port);
    *out = s;
    return RC_OK;
}

int rpc_server_port(const struct rpc_server *s)
{
    return s->port;
}

void rpc_server_close(struct rpc_server *s)
{
    ASSERT(!s->closing);
    s->closing = true;
    while (s->conns != NULL) {
        conn_close(s->conns, RC_CLOSED);
    }
    uv_close((uv_handle_t *)&s->listener, server_close_cb);
}

/* --- Client: calls ------------------------------------------------------- */

static void call_unlink(struct rpc__call *call)
{
    struct rpc_conn *conn = call->conn;

    if (call->prev != NULL) {
        call->prev->next = call->next;
    } else {
        conn->calls_head = call->next;
    }
    if (call->next != NULL) {
        call->next->prev = call->prev;
    } else {
        conn->calls_tail = call->prev;
    }
    call->prev = NULL;
    call->next = NULL;
}

static void call_link(struct rpc_conn *conn, struct rpc__call *call)
{
    call->conn = conn;
    call->prev = conn->calls_tail;
    call->next = NULL;
    if (conn->calls_tail != NULL) {
        conn->calls_tail->next = call;
    } else {
        conn->calls_head = call;
    }
    conn->calls_tail = call;
}

/* Takes the call off its connection, frees its slot, then calls back (so
 * the callback may reuse the slot). */
static void call_finish(struct rpc_client *c, struct rpc__call *call,
                        int rc, const uint8_t *payload, size_t len)
{
    rpc_response_cb cb = call->cb;
    void *arg = call->arg;

    ASSERT(call->in_use);
    call_unlink(call);
    if (call->unsent != NULL) {
        ASSERT(call->conn->outbox_bytes >= call->unsent->bytes);
        call->conn->outbox_bytes -= call->unsent->bytes;
        free(call->unsent);
        call->unsent = NULL;
    }
    call->in_use = false;
    call->conn = NULL;
    call->cb = NULL;
    call->arg = NULL;
    call->next = c->free_calls;
    c->free_calls = call;
    cb(arg, rc, payload, len);
}

static void client_conn_frame(struct rpc_conn *conn, uint64_t cid,
                              const uint8_t *payload, size_t len)
{
    struct rpc_client *c = conn->client;
    struct rpc__call *call = &c->calls[cid % RPC_INFLIGHT_MAX];

    if (!call->in_use || call->cid != cid || call->conn != conn ||
        call->unsent != NULL) {
        /* Its call timed out, or the server made the id up. */
        TRACE_DEBUG(c->t, "peer=%s correlation_id=%" PRIu64
                    " no call waiting; dropped", conn->peer, cid);
        return;
    }
    call_finish(c, call, RC_OK, payload, len);
}

static void client_timer_cb(uv_timer_t *timer);

static void client_timer_arm(struct rpc_client *c, uint64_t deadline_ms)
{
    uint64_t now = uv_now(c->loop);
    int rv;

    if (c->closing || (c->timer_armed && c->timer_due_ms <= deadline_ms)) {
        return;
    }
    c->timer_armed = true;
    c->timer_due_ms = deadline_ms;
    rv = uv_timer_start(&c->timer, client_timer_cb,
                        deadline_ms > now ? deadline_ms - now : 0, 0);
    ASSERT(rv == 0);
}

/* Fails calls past their deadline; re-arms for the earliest other one.
 * Scans the fixed slot table: RPC_INFLIGHT_MAX steps. */
static void client_timer_cb(uv_timer_t *timer)
{
    struct rpc_client *c = timer->data;
    uint64_t now = uv_now(c->loop);
    uint64_t next = UINT64_MAX;

    c->timer_armed = false;
    for (size_t i = 0; i < RPC_INFLIGHT_MAX && !c->closing; i++) {
        struct rpc__call *call = &c->calls[i];
        if (!call->in_use) {
            continue;
        }
        if (call->deadline_ms <= now) {
            TRACE_DEBUG(c->t, "peer=%s correlation_id=%" PRIu64
                        " timed out", call->conn->peer, call->cid);
            call_finish(c, call, RC_TIMEOUT, NULL, 0);
        } else if (call->deadline_ms < next) {
            next = call->deadline_ms;
        }
    }
    if (next != UINT64_MAX) {
        client_timer_arm(c, next);
    }
}

/* --- Client: connections ------------------------------------------------- */

static void client_handle_closed(struct rpc_client *c)
{
    ASSERT(c->n_handles > 0);
    c->n_handles--;
    if (c->closing && c->n_handles == 0) {
        free(c->targets);
        free(c->calls);
        free(c);
    }
}

static void client_timer_close_cb(uv_handle_t *h)
{
    client_handle_closed(h->data);
}

/* The handle is closed: fail what is left on it, then free it. */
static void client_conn_closed(struct rpc_conn *conn)
{
    struct rpc_client *c = conn->client;

    while (conn->calls_head != NULL) {
        call_finish(c, conn->calls_head, conn->fail_rc, NULL, 0);
    }
    conn_free(conn);
    client_handle_closed(c);
}

/* Writes the frames of calls made while connecting, in call order. */
static void client_conn_flush(struct rpc_conn *conn)
{
    for (struct rpc__call *call = conn->calls_head; call != NULL;
         call = call->next) {
        struct rpc__wreq *w = call->unsent;
        int rv;
        if (w == NULL) {
            continue;
        }
        call->unsent = NULL;
        conn->outbox_bytes -= w->bytes; /* conn_write counts it again */
        rv = conn_write(conn, w);
        if (rv != 0) {
            TRACE_WARN(conn->t, "peer=%s write failed: %s", conn->peer,
                       uv_strerror(rv));
            conn_close(conn, RC_IO);
            return;
        }
    }
}

static void client_connect_cb(uv_connect_t *req, int status)
{
    struct rpc_conn *conn = req->data;

    if (status == UV_ECANCELED || conn->closing) {
        return;
    }
    if (status < 0) {
        TRACE_WARN(conn->t, "peer=%s connect failed: %s", conn->peer,
                   uv_strerror(status));
        conn_close(conn, RC_IO);
        return;
    }
    TRACE_DEBUG(conn->t, "peer=%s connected", conn->peer);
    conn->connected = true;
    if (conn_read_start(conn) != 0) {
        return;
    }
    client_conn_flush(conn);
}

static int client_conn_open(struct rpc_client *c, struct rpc__target *tg)
{
    struct rpc_conn *conn = conn_new(RPC__CLIENT_SIDE, c->t);
    int rv;

    if (conn == NULL) {
        return RC_NOMEM;
    }
    rv = uv_tcp_init(c->loop, &conn->tcp);
    if (rv != 0) {
        free(conn);
        return RC_IO;
    }
    c->n_handles++;
    conn->client = c;
    conn->target = tg;
    tg->conn = conn;
    snprintf(conn->peer, sizeof conn->peer, "%s", tg->name);
    /* Before the socket exists libuv records the flag and applies it when
     * the connect creates the socket. */
    rv = uv_tcp_nodelay(&conn->tcp, 1);
    if (rv == 0) {
        rv = uv_tcp_connect(&conn->connect_req, &conn->tcp,
                            (const struct sockaddr *)&tg->addr,
                            client_connect_cb);
    }
    if (rv != 0) {
        TRACE_WARN(c->t, "peer=%s connect failed: %s", conn->peer,
                   uv_strerror(rv));
        conn_close(conn, RC_IO);
        return RC_IO;
    }
    return RC_OK;
}

/* Places a prepared frame on the target's connection (connecting first if
 * there is none). On failure the call is not placed and w is freed. */
static int client_send(struct rpc_client *c, struct rpc__target *tg,
                       struct rpc__call *call, struct rpc__wreq *w)
{
    struct rpc_conn *conn;
    int rv;

    if (tg->conn == NULL) {
        rv = client_conn_open(c, tg);
        if (rv != RC_OK) {
            free(w);
            return rv;
        }
    }
    conn = tg->conn;
    if (conn->outbox_bytes + w->bytes > RPC_CONN_OUTBOX_BYTES_MAX) {
        free(w);
        return RC_FULL;
    }
    if (!conn->connected) {
        conn->outbox_bytes += w->bytes;
        call->unsent = w;
        call_link(conn, call);
        return RC_OK;
    }
    rv = conn_write(conn, w);
    if (rv != 0) {
        TRACE_WARN(c->t, "peer=%s closing: write failed: %s", conn->peer,
                   uv_strerror(rv));
        conn_close(conn, RC_IO);
        return RC_IO;
    }
    call_link(conn, call);
    return RC_OK;
}

int rpc_client_call(struct rpc_client *c, int target, const uint8_t *payload,
                    size_t len, uint64_t timeout_ms, rpc_response_cb cb,
                    void *arg)
{
    struct rpc__call *call = c->free_calls;
    struct rpc__wreq *w;
    uint64_t cid, now;
    size_t index;
    int rv;

    ASSERT(cb != NULL);
    if (c->closing) {
        return RC_CLOSED;
    }
    if (target < -1 || target >= (int)c->n_targets || timeout_ms == 0) {
        return RC_INVALID;
    }
    if (len > RPC__PAYLOAD_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    if (call == NULL) {
        return RC_FULL;
    }
    index = (size_t)(call - c->calls);
    cid = c->next_seq * RPC_INFLIGHT_MAX + index;
    w = wreq_new(cid, payload, len);
    if (w == NULL) {
        return RC_NOMEM;
    }
    if (target >= 0) {
        c->current = (size_t)target;
    }
    c->free_calls = call->next;
    rv = client_send(c, &c->targets[c->current], call, w);
    if (rv != RC_OK) {
        call->next = c->free_calls;
        c->free_calls = call;
        return rv;
    }
    c->next_seq++;
    now = uv_now(c->loop);
    call->in_use = true;
    call->cid = cid;
    call->cb = cb;
    call->arg = arg;
    call->deadline_ms =
        timeout_ms > UINT64_MAX - now ? UINT64_MAX : now + timeout_ms;
    client_timer_arm(c, call->deadline_ms);
    return RC_OK;
}

/* --- Client: lifetime ---------------------------------------------------- */

static int client_targets_init(struct rpc_client *c,
                               const char *const *addrs, size_t n_addrs)
{
    c->targets = calloc(n_addrs, sizeof *c->targets);
    if (c->targets == NULL) {
        return RC_NOMEM;
    }
    c->n_targets = n_addrs;
    for (size_t i = 0; i < n_addrs; i++) {
        struct rpc__target *tg = &c->targets[i];
        if (sockaddr_parse(c->loop, addrs[i], &tg->addr) != RC_OK) {
            TRACE_WARN(c->t, "addr=%s: bad address", addrs[i]);
            return RC_INVALID;
        }
        snprintf(tg->name, sizeof tg->name, "%s", addrs[i]);
    }
    return RC_OK;
}

int rpc_client_init(struct rpc_client **out, uv_loop_t *loop,
                    const char *const *addrs, size_t n_addrs,
                    struct tracer *t)
{
    struct rpc_client *c;
    int rv;

    if (n_addrs == 0 || n_addrs > RPC_CLIENT_TARGETS_MAX) {
        return RC_INVALID;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        return RC_NOMEM;
    }
    c->loop = loop;
    c->t = t;
    rv = client_targets_init(c, addrs, n_addrs);
    if (rv != RC_OK) {
        goto err_after_alloc;
    }
    c->calls = calloc(RPC_INFLIGHT_MAX, sizeof *c->calls);
    if (c->calls == NULL) {
        rv = RC_NOMEM;
        goto err_after_alloc;
    }
    for (size_t i = RPC_INFLIGHT_MAX; i > 0; i--) {
        c->calls[i - 1].next = c->free_calls;
        c->free_calls = &c->calls[i - 1];
    }
    if (uv_timer_init(loop, &c->timer) != 0) {
        rv = RC_IO;
        goto err_after_alloc;
    }
    c->timer.data = c;
    c->n_handles = 1;
    *out = c;
    return RC_OK;
err_after_alloc:
    free(c->calls);
    free(c->targets);
    free(c);
    ASSERT(rv != RC_OK);
    return rv;
}

int rpc_client_n_targets(const struct rpc_client *c)
{
    return (int)c->n_targets;
}

void rpc_client_close(struct rpc_client *c)
{
    ASSERT(!c->closing);
    c->closing = true;
    for (size_t i = 0; i < c->n_targets; i++) {
        if (c->targets[i].conn != NULL) {
            conn_close(c->targets[i].conn, RC_CLOSED);
        }
    }
    uv_close((uv_handle_t *)&c->timer, client_timer_close_cb);
}
