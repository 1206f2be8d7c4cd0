/* Framed RPC over libuv TCP (layout in common/net/rpc.h), on the shared
 * frame layer (common/net/frame_conn.h), which owns the sockets, reading
 * (bounded by RPC_FRAME_BYTES_MAX before any allocation), the outbox bound
 * and connection lifetimes. A frame here is the correlation id and the
 * payload; frames are borrowed for the callback. One struct rpc_conn type
 * serves both sides: it points to its frame connection and is freed with
 * it (conn_free_cb); each write owns one struct rpc__wreq (request, header
 * and payload in one allocation) until its callback frees it.
 *
 * Server side: the server owns its frame listener, which keeps the list
 * of open connections; a connection is freed when both its handle has
 * closed and every rpc_conn_ref() has been dropped. The server is freed
 * once the listener has closed.
 *
 * Client side: the client owns a fixed table of RPC_INFLIGHT_MAX call
 * slots (a correlation id names its slot: id % RPC_INFLIGHT_MAX), one
 * deadline timer, and one connection per target. Every call in flight
 * sits on exactly one connection's list, in send order; a call queued
 * while connecting keeps its unsent frame (counted in the outbox). A
 * closing connection is detached from its target (the next call
 * reconnects) and its calls are failed from its closed callback, so
 * callbacks never run inside an rpc_* function. The client is freed when
 * its timer and all its connections have closed.
 *
 * Loop thread only. */
#include "common/net/rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/net/addr.h"
#include "common/net/frame_conn.h"
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
    struct frame_conn_write fw; /* first: the callback casts back */
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
    struct frame_conn *fc;
    enum rpc__side side;
    struct tracer *t;
    bool connected; /* client side: connect completed */
    /* Server side. */
    struct rpc_server *server; /* valid while the connection is open */
    /* Client side. */
    struct rpc_client *client;
    struct rpc__target *target; /* NULL once detached */
    struct rpc__call *calls_head, *calls_tail;
};

struct rpc_server {
    struct frame_listener *listener;
    struct tracer *t;
    rpc_request_cb cb;
    void *arg;
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

/* Every RPC connection, either side: frames are the correlation id and
 * the payload; a write beyond the outbox bound closes (the client checks
 * first and refuses the call instead). */
static const struct frame_conn_config rpc__conn_config = {
    .frame_bytes_min = RPC__CID_BYTES,
    .frame_bytes_max = RPC_FRAME_BYTES_MAX,
    .read_buffer_bytes = RPC_READ_BUFFER_BYTES,
    /* A frame cut by a read is allocated whole once its length is in. */
    .prealloc_bytes = RPC_FRAME_BYTES_MAX,
    .read_bytes = RPC_FRAME_BYTES_MAX,
    .outbox_bytes_max = RPC_CONN_OUTBOX_BYTES_MAX,
    .full = FRAME_CONN_FULL_CLOSE,
    .size_name = "frame length",
};

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
    w->bytes = RPC__HEADER_BYTES + len;
    bytes_put_be32(w->data, (uint32_t)(RPC__CID_BYTES + len));
    bytes_put_be64(w->data + RPC__LENGTH_BYTES, cid);
    if (len > 0) {
        memcpy(w->data + RPC__HEADER_BYTES, payload, len);
    }
    return w;
}

static void conn_write_cb(struct frame_conn_write *fw, int status)
{
    (void)status; /* a failed write closed the connection */
    free(fw);
}

/* Hands w to the frame layer (counted in the outbox until its callback).
 * On failure w is freed and the rc returned: RC_CLOSED, or RC_FULL and
 * RC_IO after the layer logged and closed. */
static int conn_write(struct rpc_conn *conn, struct rpc__wreq *w)
{
    uv_buf_t buf = uv_buf_init((char *)w->data, (unsigned)w->bytes);
    int rv = frame_conn_write(conn->fc, &w->fw, &buf, 1, conn_write_cb);

    if (rv != RC_OK) {
        free(w);
    }
    return rv;
}

/* --- Connections --------------------------------------------------------- */

static struct rpc_conn *conn_new(enum rpc__side side, struct tracer *t)
{
    struct rpc_conn *conn = calloc(1, sizeof *conn);

    if (conn != NULL) {
        conn->side = side;
        conn->t = t;
    }
    return conn;
}

/* The frame connection's last reference is gone. */
static void conn_free_cb(struct frame_conn *fc)
{
    struct rpc_conn *conn = frame_conn_data(fc);

    ASSERT(conn->calls_head == NULL);
    free(conn);
}

/* A client connection leaves its target, so the next call reconnects. */
static void conn_detach(struct rpc_conn *conn)
{
    if (conn->target != NULL) {
        if (conn->target->conn == conn) {
            conn->target->conn = NULL;
        }
        conn->target = NULL;
    }
}

/* Starts closing: nothing new reaches the connection; its calls fail from
 * the closed callback. */
static void conn_close(struct rpc_conn *conn, int rc)
{
    conn_detach(conn);
    frame_conn_close(conn->fc, rc);
}

/* --- Server -------------------------------------------------------------- */

static void server_conn_frame_cb(struct frame_conn *fc, void *block,
                                 uint8_t *frame, size_t len)
{
    struct rpc_conn *conn = frame_conn_data(fc);
    struct rpc_server *s = conn->server;

    (void)block;
    ASSERT(len >= RPC__CID_BYTES);
    s->cb(s->arg, conn, bytes_be64(frame), frame + RPC__CID_BYTES,
          len - RPC__CID_BYTES);
}

static const struct frame_conn_cbs rpc__server_conn_cbs = {
    .frame = server_conn_frame_cb,
    .free = conn_free_cb,
};

void rpc_conn_ref(struct rpc_conn *conn)
{
    ASSERT(conn->side == RPC__SERVER_SIDE);
    frame_conn_ref(conn->fc);
}

void rpc_conn_unref(struct rpc_conn *conn)
{
    ASSERT(conn->side == RPC__SERVER_SIDE);
    frame_conn_unref(conn->fc);
}

bool rpc_conn_is_open(const struct rpc_conn *conn)
{
    return frame_conn_is_open(conn->fc);
}

const char *rpc_conn_peer(const struct rpc_conn *conn)
{
    return frame_conn_peer(conn->fc);
}

int rpc_reply(struct rpc_conn *conn, uint64_t correlation_id,
              const uint8_t *payload, size_t len)
{
    struct rpc__wreq *w;

    ASSERT(conn->side == RPC__SERVER_SIDE);
    if (!frame_conn_is_open(conn->fc)) {
        return RC_CLOSED;
    }
    if (len > RPC__PAYLOAD_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    w = wreq_new(correlation_id, payload, len);
    if (w == NULL) {
        return RC_NOMEM;
    }
    return conn_write(conn, w);
}

static int server_accept_cb(void *arg, struct frame_conn *fc)
{
    struct rpc_server *s = arg;
    struct rpc_conn *conn = conn_new(RPC__SERVER_SIDE, s->t);

    if (conn == NULL) {
        return RC_NOMEM;
    }
    conn->fc = fc;
    conn->server = s;
    frame_conn_attach(fc, &rpc__server_conn_cbs, conn);
    return RC_OK;
}

static void server_closed_cb(void *arg)
{
    free(arg);
}

int rpc_server_start(struct rpc_server **out, uv_loop_t *loop,
                     const char *host, int port, rpc_request_cb cb,
                     void *arg, struct tracer *t)
{
    struct frame_listener_config cfg = {
        .host = host,
        .port = port,
        .backlog = RPC__BACKLOG,
        .conns_max = RPC_SERVER_CONNS_MAX,
        .evict_idle_ms = RPC_SERVER_EVICT_IDLE_MS,
        .idle_ms = RPC_SERVER_IDLE_MS,
        .conn = rpc__conn_config,
    };
    struct rpc_server *s;
    int rv;

    ASSERT(cb != NULL);
    s = calloc(1, sizeof *s); /* the port is frame_listener_start()'s */
    if (s == NULL) {
        return RC_NOMEM;
    }
    s->t = t;
    s->cb = cb;
    s->arg = arg;
    rv = frame_listener_start(&s->listener, loop, &cfg, server_accept_cb, s,
                              t);
    if (rv != RC_OK) {
        free(s); /* the half-made listener frees itself */
        return rv;
    }
    s->port = frame_listener_port(s->listener);
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
    /* Closes every connection: no frame is delivered after this. */
    frame_listener_close(s->listener, server_closed_cb);
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
        frame_conn_outbox_done(call->conn->fc, call->unsent->bytes);
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
                        " timed out", frame_conn_peer(call->conn->fc), call->cid);
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

static void client_conn_frame_cb(struct frame_conn *fc, void *block,
                                 uint8_t *frame, size_t len)
{
    struct rpc_conn *conn = frame_conn_data(fc);
    struct rpc_client *c = conn->client;
    uint64_t cid = bytes_be64(frame);
    struct rpc__call *call = &c->calls[cid % RPC_INFLIGHT_MAX];

    (void)block;
    if (!call->in_use || call->cid != cid || call->conn != conn ||
        call->unsent != NULL) {
        /* Its call timed out, or the server made the id up. */
        TRACE_DEBUG(c->t, "peer=%s correlation_id=%" PRIu64
                    " no call waiting; dropped", frame_conn_peer(fc), cid);
        return;
    }
    call_finish(c, call, RC_OK, frame + RPC__CID_BYTES,
                len - RPC__CID_BYTES);
}

/* The handles are closed: fail what is left on the connection. */
static void client_conn_closed_cb(struct frame_conn *fc, int rc)
{
    struct rpc_conn *conn = frame_conn_data(fc);
    struct rpc_client *c = conn->client;

    conn_detach(conn);
    while (conn->calls_head != NULL) {
        call_finish(c, conn->calls_head, rc, NULL, 0);
    }
    client_handle_closed(c);
}

/* Writes the frames of calls made while connecting, in call order. */
static void client_conn_connected_cb(struct frame_conn *fc)
{
    struct rpc_conn *conn = frame_conn_data(fc);

    conn->connected = true;
    for (struct rpc__call *call = conn->calls_head; call != NULL;
         call = call->next) {
        struct rpc__wreq *w = call->unsent;
        if (w == NULL) {
            continue;
        }
        call->unsent = NULL;
        frame_conn_outbox_done(fc, w->bytes); /* the write counts it */
        if (conn_write(conn, w) != RC_OK) {
            conn_detach(conn);
            return;
        }
    }
}

static const struct frame_conn_cbs rpc__client_conn_cbs = {
    .frame = client_conn_frame_cb,
    .connected = client_conn_connected_cb,
    .closed = client_conn_closed_cb,
    .free = conn_free_cb,
};

static int client_conn_open(struct rpc_client *c, struct rpc__target *tg)
{
    struct rpc_conn *conn = conn_new(RPC__CLIENT_SIDE, c->t);
    int rv;

    if (conn == NULL) {
        return RC_NOMEM;
    }
    conn->client = c;
    rv = frame_conn_connect(&conn->fc, c->loop,
                            (const struct sockaddr *)&tg->addr, tg->name,
                            &rpc__conn_config, &rpc__client_conn_cbs, conn,
                            0 /* timeout_ms: calls have deadlines */, c->t);
    if (rv != RC_OK) {
        free(conn);
        return rv;
    }
    c->n_handles++;
    conn->target = tg;
    tg->conn = conn;
    return RC_OK;
}

/* Places a prepared frame on the target's connection (connecting first if
 * there is none). On failure the call is not placed and w is freed. */
static int client_send(struct rpc_client *c, struct rpc__target *tg,
                       struct rpc__call *call, struct rpc__wreq *w)
{
    struct rpc_conn *conn = tg->conn;
    int rv;

    if (conn != NULL && !frame_conn_is_open(conn->fc)) {
        conn_detach(conn); /* failed on its own; its calls fail later */
    }
    if (tg->conn == NULL) {
        rv = client_conn_open(c, tg);
        if (rv != RC_OK) {
            free(w);
            return rv;
        }
    }
    conn = tg->conn;
    if (frame_conn_outbox_bytes(conn->fc) + w->bytes >
        RPC_CONN_OUTBOX_BYTES_MAX) {
        free(w);
        return RC_FULL;
    }
    if (!conn->connected) {
        frame_conn_outbox_add(conn->fc, w->bytes);
        call->unsent = w;
        call_link(conn, call);
        return RC_OK;
    }
    rv = conn_write(conn, w);
    if (rv != RC_OK) {
        conn_detach(conn);
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
    /* The deadline counts from now, not from the start of this loop
     * iteration (uv_now's cached time), which a busy iteration leaves
     * far behind. */
    uv_update_time(c->loop);
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