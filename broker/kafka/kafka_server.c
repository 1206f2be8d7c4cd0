/* The Kafka listener (broker/kafka/kafka_server.h).
 *
 * Ownership. The server owns its listener, the list of its open
 * connections and a pool of copy buffers. A connection owns its uv_tcp_t,
 * a read buffer, the frame being assembled, its slots and its output
 * queue. A slot is one allocation per request: the frame, the struct
 * kafka_request handed to the callback (borrowing from the frame), then
 * the answer. Slots sit in seq order from the moment their frame is read
 * until they move to the output queue as pieces: memory ranges (the 8-byte
 * response header, body runs) and file spans. Each uv_write owns one
 * struct kafka__wreq (the memory pieces it writes, or one pooled copy
 * buffer) until its callback.
 *
 * Order. Only the head slot moves to the output, and only once answered,
 * so answers leave in seq order. The pump hands the head piece to the
 * socket only while libuv's write queue is empty: memory with uv_write;
 * a span with sendfile(2) on the socket's fd; when the socket is full (or
 * in copy-only mode) a pread chunk of the span with uv_write. A sendfile
 * therefore never overtakes bytes libuv still holds.
 *
 * Bounds. Reading stops (uv_read_stop) while the outbox is above
 * CONN_OUTBOX_BYTES_MAX or the unanswered requests reach
 * KAFKA_CONN_INFLIGHT_MAX or KAFKA_CONN_REQUEST_BYTES_MAX, and resumes
 * below half of each. Bytes already read are parsed only up to the next
 * frame boundary; the rest waits in the read buffer.
 *
 * Lifetime. conn->refs counts the open socket handle plus the requests
 * handed out and not yet answered; the connection is freed at zero, so a
 * late answer on a closed connection is dropped safely. The server counts
 * its live connections and is freed once the listener has closed and the
 * last connection is freed.
 *
 * Loop thread only. */
#include "broker/kafka/kafka_server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/kafka/net_sendfile.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/net/net.h"
#include "common/rc.h"
#include "common/reader.h"

#define KAFKA__SIZE_BYTES 4u
/* api_key, api_version, correlation_id, client_id length. */
#define KAFKA__REQUEST_HEADER_MIN_BYTES 10u
/* Response size field and correlation id (response header v0). */
#define KAFKA__RESPONSE_HEAD_BYTES 8u
/* Memory pieces gathered into one uv_write. */
#define KAFKA__WRITE_BUFS 16u
#define KAFKA__PEER_BYTES 64u
#define KAFKA__BACKLOG 128

_Static_assert(KAFKA__REQUEST_HEADER_MIN_BYTES <= KAFKA_READ_BUFFER_BYTES,
               "a request header fits the read buffer");

enum kafka__slot_state {
    KAFKA__SLOT_FILLING,  /* frame being read */
    KAFKA__SLOT_HANDED,   /* with the callback, not answered */
    KAFKA__SLOT_REPLIED,  /* answered with resp */
    KAFKA__SLOT_NO_REPLY  /* answered with nothing to send */
};

/* One request: its frame and, once answered, its response. */
struct kafka__slot {
    struct kafka__slot *prev, *next; /* the connection's seq order */
    enum kafka__slot_state state;
    struct kafka_request req;
    struct kafka_response resp;      /* KAFKA__SLOT_REPLIED */
    size_t wire_bytes;               /* in the outbox once replied */
    size_t frame_len, frame_have, frame_cap;
    uint8_t frame[];
};

struct kafka__out;

/* A run of response bytes: memory (ptr != NULL) or a file span. */
struct kafka__piece {
    struct kafka__piece *next;       /* output queue, or a write's list */
    struct kafka__out *out;
    const uint8_t *ptr;              /* NULL for a span */
    size_t len;                      /* bytes not yet handed on */
    struct log_span span;            /* span.position advances as sent */
};

/* One response on its way out; freed with its last piece. */
struct kafka__out {
    size_t n_left;                   /* pieces not yet done */
    uint8_t *body;                   /* the response body, owned */
    uint8_t head[KAFKA__RESPONSE_HEAD_BYTES];
    struct kafka__piece pieces[];
};

/* One uv_write: memory pieces, or one copy buffer. */
struct kafka__wreq {
    uv_write_t req;
    struct kafka_conn *conn;
    size_t bytes;                    /* leave the outbox at the callback */
    struct kafka__piece *pieces;     /* done at the callback */
    void *copy;                      /* pooled, returned at the callback */
    uv_buf_t bufs[KAFKA__WRITE_BUFS];
};

struct kafka_conn {
    uv_tcp_t tcp;
    struct kafka_server *server;     /* outlives every connection */
    struct kafka_conn *prev, *next;  /* server's open list */
    size_t refs;                     /* the handle + unanswered requests */
    bool listed;
    bool closing;
    bool paused;                     /* a bound stopped reading */
    bool in_parse;
    bool no_sendfile;                /* sendfile(2) failed here: copy */
    /* Reading. */
    uint8_t size_buf[KAFKA__SIZE_BYTES];
    size_t size_have;
    struct kafka__slot *filling;     /* frame being assembled */
    size_t rbuf_off, rbuf_len;       /* unparsed bytes (only while paused) */
    uint64_t next_seq;
    /* Requests in seq order, until they move to the output. */
    struct kafka__slot *slots_head, *slots_tail;
    size_t n_slots;
    size_t slot_bytes;               /* their frame bytes */
    /* Output. */
    struct kafka__piece *out_head, *out_tail;
    size_t outbox_bytes;
    size_t n_copies;                 /* copy buffers in uv_write */
    char peer[KAFKA__PEER_BYTES];
    uint8_t rbuf[KAFKA_READ_BUFFER_BYTES];
};

struct kafka_server {
    uv_tcp_t listener;
    uv_loop_t *loop;
    struct tracer *t;
    kafka_request_cb cb;
    void *arg;
    struct kafka_conn *conns;        /* open connections */
    size_t n_conns;
    size_t n_alive;                  /* connections not yet freed */
    struct net_pool pool;
    struct kafka_server_stats stats;
    int port;
    bool copy_only;
    bool closing;
    bool listener_closed;
};

static void conn_close(struct kafka_conn *c);
static void conn_pump(struct kafka_conn *c);
static void conn_flow(struct kafka_conn *c);

/* --- Responses ----------------------------------------------------------- */

void kafka_response_init(struct kafka_response *resp)
{
    writer_init(&resp->body, KAFKA_RESPONSE_BODY_BYTES_MAX);
    resp->splices = NULL;
    resp->n_splices = 0;
    resp->cap_splices = 0;
}

static int splices_grow(struct kafka_response *resp)
{
    size_t cap = resp->cap_splices == 0 ? 4 : resp->cap_splices * 2;
    struct kafka_splice *p;

    if (resp->cap_splices >= KAFKA_RESPONSE_SPLICES_MAX) {
        return RC_FULL;
    }
    if (cap > KAFKA_RESPONSE_SPLICES_MAX) {
        cap = KAFKA_RESPONSE_SPLICES_MAX;
    }
    p = realloc(resp->splices, cap * sizeof *p);
    if (p == NULL) {
        return RC_NOMEM;
    }
    resp->splices = p;
    resp->cap_splices = cap;
    return RC_OK;
}

int kafka_response_splice(struct kafka_response *resp,
                          struct log_span *span)
{
    struct log_span taken = *span;
    int rv;

    *span = (struct log_span){.seg = NULL, .fd = -1};
    ASSERT(taken.bytes >= 0);
    if (taken.bytes == 0) {
        log_span_release(&taken); /* nothing to splice */
        return RC_OK;
    }
    if (resp->n_splices == resp->cap_splices) {
        rv = splices_grow(resp);
        if (rv != RC_OK) {
            log_span_release(&taken);
            return rv;
        }
    }
    resp->splices[resp->n_splices].at = resp->body.len;
    resp->splices[resp->n_splices].span = taken;
    resp->n_splices++;
    return RC_OK;
}

void kafka_response_free(struct kafka_response *resp)
{
    writer_free(&resp->body);
    for (size_t i = 0; i < resp->n_splices; i++) {
        log_span_release(&resp->splices[i].span);
    }
    free(resp->splices);
    resp->splices = NULL;
    resp->n_splices = 0;
    resp->cap_splices = 0;
}

/* Bytes on the wire: size field, correlation id, body and spans. Returns
 * false when the size field cannot hold them. */
static bool response_wire_bytes(const struct kafka_response *resp,
                                size_t *out)
{
    uint64_t total = KAFKA__RESPONSE_HEAD_BYTES + (uint64_t)resp->body.len;
    size_t at = 0;

    for (size_t i = 0; i < resp->n_splices; i++) {
        const struct kafka_splice *sp = &resp->splices[i];
        ASSERT(sp->at >= at);            /* increasing, inside the body */
        ASSERT(sp->at <= resp->body.len);
        ASSERT(sp->span.bytes > 0);
        at = sp->at;
        total += (uint64_t)sp->span.bytes;
    }
    *out = (size_t)total;
    return total - KAFKA__SIZE_BYTES <= INT32_MAX;
}

/* --- Output pieces ------------------------------------------------------- */

static void piece_done(struct kafka__piece *p)
{
    struct kafka__out *out = p->out;

    if (p->ptr == NULL) {
        log_span_release(&p->span);
    }
    ASSERT(out->n_left > 0);
    if (--out->n_left == 0) {
        free(out->body);
        free(out);
    }
}

static void out_push(struct kafka_conn *c, struct kafka__piece *p)
{
    p->next = NULL;
    if (c->out_tail != NULL) {
        c->out_tail->next = p;
    } else {
        c->out_head = p;
    }
    c->out_tail = p;
}

static struct kafka__piece *out_pop(struct kafka_conn *c)
{
    struct kafka__piece *p = c->out_head;

    ASSERT(p != NULL);
    c->out_head = p->next;
    if (c->out_head == NULL) {
        c->out_tail = NULL;
    }
    p->next = NULL;
    return p;
}

/* Bytes [off, off + len) of base; nothing when empty (base may then be
 * NULL: an empty body has no buffer). */
static void out_add_memory(struct kafka__out *out, const uint8_t *base,
                           size_t off, size_t len)
{
    struct kafka__piece *p;

    if (len == 0) {
        return;
    }
    p = &out->pieces[out->n_left++];
    memset(p, 0, sizeof *p);
    p->out = out;
    p->ptr = base + off;
    p->len = len;
}

/* Cuts a replied slot's response into pieces on the output queue: head,
 * then body runs between the spans. Takes the body and the spans. */
static int out_enqueue(struct kafka_conn *c, struct kafka__slot *slot)
{
    struct kafka_response *resp = &slot->resp;
    size_t max = 2 + 2 * resp->n_splices;
    struct kafka__out *out;
    size_t at = 0;

    out = malloc(sizeof *out + max * sizeof out->pieces[0]);
    if (out == NULL) {
        return RC_NOMEM;
    }
    out->n_left = 0;
    out->body = resp->body.data;
    resp->body.data = NULL;
    bytes_put_be32(out->head,
                   (uint32_t)(slot->wire_bytes - KAFKA__SIZE_BYTES));
    bytes_put_be32(out->head + 4, (uint32_t)slot->req.correlation_id);
    out_add_memory(out, out->head, 0, sizeof out->head);
    for (size_t i = 0; i < resp->n_splices; i++) {
        struct kafka_splice *sp = &resp->splices[i];
        struct kafka__piece *p;
        out_add_memory(out, out->body, at, sp->at - at);
        at = sp->at;
        p = &out->pieces[out->n_left++];
        memset(p, 0, sizeof *p);
        p->out = out;
        p->len = (size_t)sp->span.bytes;
        p->span = sp->span;
        sp->span = (struct log_span){.seg = NULL, .fd = -1};
    }
    out_add_memory(out, out->body, at, resp->body.len - at);
    resp->n_splices = 0;
    ASSERT(out->n_left <= max);
    /* Push only now: the array is complete and n_left final. */
    for (size_t i = 0, n = out->n_left; i < n; i++) {
        out_push(c, &out->pieces[i]);
    }
    kafka_response_free(resp);
    return RC_OK;
}

/* --- Writing ------------------------------------------------------------- */

static void wreq_free(struct kafka_conn *c, struct kafka__wreq *w)
{
    while (w->pieces != NULL) {
        struct kafka__piece *p = w->pieces;
        w->pieces = p->next;
        piece_done(p);
    }
    if (w->copy != NULL) {
        net_pool_put(&c->server->pool, w->copy);
        ASSERT(c->n_copies > 0);
        c->n_copies--;
    }
    free(w);
}

static void conn_write_cb(uv_write_t *req, int status)
{
    struct kafka__wreq *w = req->data;
    struct kafka_conn *c = w->conn;

    ASSERT(c->outbox_bytes >= w->bytes);
    c->outbox_bytes -= w->bytes;
    wreq_free(c, w);
    if (c->closing) {
        return;
    }
    if (status < 0) {
        TRACE_WARN(c->server->t, "peer=%s closing: write failed: %s",
                   c->peer, uv_strerror(status));
        conn_close(c);
        return;
    }
    conn_pump(c);
    conn_flow(c);
}

/* Hands w (bufs filled, bytes counted) to libuv; false if closed. */
static bool conn_write(struct kafka_conn *c, struct kafka__wreq *w,
                       unsigned n_bufs)
{
    int rv;

    w->conn = c;
    w->req.data = w;
    rv = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->bufs, n_bufs,
                  conn_write_cb);
    if (rv != 0) {
        /* Never queued: no callback will come. */
        ASSERT(c->outbox_bytes >= w->bytes);
        c->outbox_bytes -= w->bytes;
        wreq_free(c, w);
        TRACE_WARN(c->server->t, "peer=%s closing: write failed: %s",
                   c->peer, uv_strerror(rv));
        conn_close(c);
        return false;
    }
    return true;
}

/* Writes the memory pieces at the head of the queue in one uv_write. */
static bool pump_memory(struct kafka_conn *c)
{
    struct kafka__wreq *w = calloc(1, sizeof *w);
    struct kafka__piece **tail;
    unsigned n = 0;

    if (w == NULL) {
        TRACE_WARN(c->server->t, "peer=%s closing: out of memory",
                   c->peer);
        conn_close(c);
        return false;
    }
    tail = &w->pieces;
    while (n < KAFKA__WRITE_BUFS && c->out_head != NULL &&
           c->out_head->ptr != NULL) {
        struct kafka__piece *p = out_pop(c);
        w->bufs[n++] = uv_buf_init((char *)p->ptr, (unsigned)p->len);
        w->bytes += p->len;
        *tail = p;
        tail = &p->next;
    }
    ASSERT(n > 0);
    return conn_write(c, w, n);
}

/* A bounded chunk of the head span, pread into a pooled buffer and
 * written with uv_write. */
static bool pump_copy(struct kafka_conn *c, struct kafka__piece *p)
{
    size_t n = p->len < KAFKA_COPY_BUFFER_BYTES ? p->len
                                                : KAFKA_COPY_BUFFER_BYTES;
    struct kafka__wreq *w = calloc(1, sizeof *w);
    int rv = RC_NOMEM;

    if (w != NULL) {
        w->copy = net_pool_get(&c->server->pool);
    }
    if (w != NULL && w->copy != NULL) {
        c->n_copies++;
        rv = net_pread_full(p->span.fd, w->copy, n, p->span.position);
    }
    if (rv != RC_OK) {
        TRACE_WARN(c->server->t,
                   "peer=%s closing: reading %zu span bytes at %" PRId64
                   " failed: %s",
                   c->peer, n, p->span.position, rc_str(rv));
        if (w != NULL) {
            wreq_free(c, w);
        }
        conn_close(c);
        return false;
    }
    w->bytes = n;
    w->bufs[0] = uv_buf_init((char *)w->copy, (unsigned)n);
    p->span.position += (int64_t)n;
    p->len -= n;
    c->server->stats.copy_bytes += n;
    if (p->len == 0) {
        piece_done(out_pop(c));
    }
    return conn_write(c, w, 1);
}

/* The head span: sendfile(2) what the socket takes, then copy. */
static bool pump_file(struct kafka_conn *c)
{
    struct kafka__piece *p = c->out_head;
    bool try_sendfile = !c->server->copy_only && !c->no_sendfile;
    uv_os_fd_t fd;

    if (try_sendfile && uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0) {
        size_t sent = 0;
        int rv = net_sendfile(fd, p->span.fd, p->span.position, p->len,
                              &sent);
        if (rv == RC_IO || rv == RC_SHORT) {
            TRACE_DEBUG(c->server->t, "peer=%s sendfile: %s (%s); copying",
                        c->peer, rc_str(rv), strerror(errno));
            c->no_sendfile = true;
        }
        ASSERT(c->outbox_bytes >= sent);
        p->span.position += (int64_t)sent;
        p->len -= sent;
        c->outbox_bytes -= sent;
        c->server->stats.sendfile_bytes += sent;
        if (p->len == 0) {
            piece_done(out_pop(c));
            return true;
        }
    }
    if (c->n_copies >= KAFKA_CONN_COPY_BUFFERS_MAX) {
        return false; /* a copy's write callback pumps again */
    }
    return pump_copy(c, p);
}

/* Moves output to the socket while libuv holds nothing unsent: every
 * stop leaves a write in flight whose callback pumps again. */
static void conn_pump(struct kafka_conn *c)
{
    while (c->out_head != NULL && !c->closing) {
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > 0) {
            return;
        }
        if (c->out_head->ptr != NULL ? !pump_memory(c) : !pump_file(c)) {
            return;
        }
    }
}

/* --- Answers ------------------------------------------------------------- */

static struct kafka__slot *slot_of(struct kafka_request *req)
{
    return (struct kafka__slot *)(void *)((char *)req -
                                          offsetof(struct kafka__slot, req));
}

static void slot_link(struct kafka_conn *c, struct kafka__slot *slot)
{
    slot->next = NULL;
    slot->prev = c->slots_tail;
    if (c->slots_tail != NULL) {
        c->slots_tail->next = slot;
    } else {
        c->slots_head = slot;
    }
    c->slots_tail = slot;
    c->n_slots++;
    c->slot_bytes += slot->frame_len;
}

static void slot_unlink(struct kafka_conn *c, struct kafka__slot *slot)
{
    if (slot->prev != NULL) {
        slot->prev->next = slot->next;
    } else {
        c->slots_head = slot->next;
    }
    if (slot->next != NULL) {
        slot->next->prev = slot->prev;
    } else {
        c->slots_tail = slot->prev;
    }
    slot->prev = NULL;
    slot->next = NULL;
    ASSERT(c->n_slots > 0);
    ASSERT(c->slot_bytes >= slot->frame_len);
    c->n_slots--;
    c->slot_bytes -= slot->frame_len;
}

static void slot_free(struct kafka__slot *slot)
{
    if (slot->state == KAFKA__SLOT_REPLIED) {
        kafka_response_free(&slot->resp);
    }
    free(slot);
}

/* Moves answered slots from the head to the output queue, in seq order. */
static void conn_flush(struct kafka_conn *c)
{
    while (c->slots_head != NULL && !c->closing &&
           c->slots_head->state != KAFKA__SLOT_HANDED) {
        struct kafka__slot *slot = c->slots_head;
        slot_unlink(c, slot);
        if (slot->state == KAFKA__SLOT_REPLIED &&
            out_enqueue(c, slot) != RC_OK) {
            TRACE_WARN(c->server->t, "peer=%s closing: out of memory",
                       c->peer);
            ASSERT(c->outbox_bytes >= slot->wire_bytes);
            c->outbox_bytes -= slot->wire_bytes;
            slot_free(slot);
            conn_close(c);
            return;
        }
        slot_free(slot);
    }
}

static void conn_free(struct kafka_conn *c)
{
    struct kafka_server *s = c->server;

    ASSERT(c->closing);
    ASSERT(c->slots_head == NULL);
    ASSERT(c->out_head == NULL);
    ASSERT(c->outbox_bytes == 0);
    ASSERT(c->n_copies == 0);
    free(c->filling);
    free(c);
    ASSERT(s->n_alive > 0);
    s->n_alive--;
    if (s->listener_closed && s->n_alive == 0) {
        net_pool_free(&s->pool);
        free(s);
    }
}

static void conn_unref(struct kafka_conn *c)
{
    ASSERT(c->refs > 0);
    if (--c->refs == 0) {
        conn_free(c);
    }
}

/* The handler is done with slot (state set). On a closing connection the
 * answer is dropped; otherwise it joins the output in seq order. */
static void slot_answered(struct kafka_conn *c, struct kafka__slot *slot)
{
    ASSERT(slot->state == KAFKA__SLOT_REPLIED ||
           slot->state == KAFKA__SLOT_NO_REPLY);
    if (c->closing) {
        slot_unlink(c, slot);
        slot_free(slot);
        conn_unref(c); /* may free c */
        return;
    }
    if (slot->state == KAFKA__SLOT_REPLIED) {
        c->outbox_bytes += slot->wire_bytes;
        c->server->stats.responses++;
    }
    conn_flush(c);
    conn_pump(c);
    conn_flow(c);
    conn_unref(c); /* the handle's reference remains */
}

/* Takes a handed-out request back; asserts it was not answered before. */
static struct kafka__slot *slot_take(struct kafka_request *req)
{
    struct kafka__slot *slot = slot_of(req);

    ASSERT(slot->state == KAFKA__SLOT_HANDED);
    ASSERT(req->conn != NULL);
    return slot;
}

/* A response the handler failed to encode, or too large for the int32
 * size field, closes the connection instead of going out. */
static bool response_check(struct kafka_conn *c, struct kafka__slot *slot)
{
    const struct kafka_request *req = &slot->req;
    int rc = slot->resp.body.rc;

    if (rc == RC_OK && response_wire_bytes(&slot->resp, &slot->wire_bytes)) {
        return true;
    }
    TRACE_ERROR(c->server->t,
                "peer=%s api_key=%d api_version=%d closing: response not "
                "encodable: %s",
                c->peer, req->api_key, req->api_version,
                rc_str(rc != RC_OK ? rc : RC_TOO_LARGE));
    return false;
}

void kafka_reply(struct kafka_request *req, struct kafka_response *resp)
{
    struct kafka__slot *slot = slot_take(req);
    struct kafka_conn *c = req->conn;

    slot->resp = *resp;
    kafka_response_init(resp);
    slot->state = KAFKA__SLOT_REPLIED;
    if (!c->closing && !response_check(c, slot)) {
        conn_close(c);
    }
    slot_answered(c, slot);
}

const char *kafka_request_peer(const struct kafka_request *req)
{
    return req->conn->peer;
}

void kafka_no_reply(struct kafka_request *req)
{
    struct kafka__slot *slot = slot_take(req);

    slot->state = KAFKA__SLOT_NO_REPLY;
    slot_answered(req->conn, slot);
}

void kafka_close_conn(struct kafka_request *req, const char *why)
{
    struct kafka__slot *slot = slot_take(req);
    struct kafka_conn *c = req->conn;

    if (!c->closing) {
        TRACE_WARN(c->server->t,
                   "peer=%s api_key=%d api_version=%d correlation_id=%"
                   PRId32 " closing: %s",
                   c->peer, req->api_key, req->api_version,
                   req->correlation_id, why);
        conn_close(c);
    }
    slot->state = KAFKA__SLOT_NO_REPLY;
    slot_answered(c, slot);
}

/* --- Reading ------------------------------------------------------------- */

static bool conn_over_bounds(const struct kafka_conn *c)
{
    return c->outbox_bytes > CONN_OUTBOX_BYTES_MAX ||
           c->n_slots >= KAFKA_CONN_INFLIGHT_MAX ||
           c->slot_bytes >= KAFKA_CONN_REQUEST_BYTES_MAX;
}

static bool conn_below_half(const struct kafka_conn *c)
{
    return c->outbox_bytes <= CONN_OUTBOX_BYTES_MAX / 2 &&
           c->n_slots <= KAFKA_CONN_INFLIGHT_MAX / 2 &&
           c->slot_bytes <= KAFKA_CONN_REQUEST_BYTES_MAX / 2;
}

static void conn_pause(struct kafka_conn *c)
{
    ASSERT(!c->paused);
    c->paused = true;
    c->server->stats.reads_paused++;
    (void)uv_read_stop((uv_stream_t *)&c->tcp);
    TRACE_DEBUG(c->server->t,
                "peer=%s reading paused: outbox=%zu requests=%zu "
                "request_bytes=%zu",
                c->peer, c->outbox_bytes, c->n_slots, c->slot_bytes);
}

/* Grows the frame being assembled to hold `more` further bytes, doubling
 * up to its announced length: a peer announcing 100 MiB and sending ten
 * bytes costs KAFKA_FRAME_PREALLOC_BYTES, not 100 MiB. False when out of
 * memory (the frame is unchanged). */
static bool frame_reserve(struct kafka_conn *c, size_t more)
{
    struct kafka__slot *slot = c->filling;
    size_t want = slot->frame_have + more;
    size_t cap = slot->frame_cap * 2;

    ASSERT(want <= slot->frame_len);
    if (want <= slot->frame_cap) {
        return true;
    }
    cap = cap > want ? cap : want;
    cap = cap < slot->frame_len ? cap : slot->frame_len;
    slot = realloc(slot, sizeof *slot + cap);
    if (slot == NULL) {
        return false;
    }
    slot->frame_cap = cap;
    c->filling = slot;
    return true;
}

static bool frame_start(struct kafka_conn *c, uint32_t len)
{
    struct kafka_server *s = c->server;
    size_t cap = len < KAFKA_FRAME_PREALLOC_BYTES ? len
                                                  : KAFKA_FRAME_PREALLOC_BYTES;

    if (len > REQUEST_BYTES_MAX || len < KAFKA__REQUEST_HEADER_MIN_BYTES) {
        TRACE_WARN(s->t,
                   "peer=%s closing: frame size %" PRIu32
                   " outside [%u, %u]",
                   c->peer, len, KAFKA__REQUEST_HEADER_MIN_BYTES,
                   REQUEST_BYTES_MAX);
        conn_close(c);
        return false;
    }
    c->filling = calloc(1, sizeof *c->filling + cap);
    if (c->filling == NULL) {
        TRACE_WARN(s->t, "peer=%s closing: out of memory", c->peer);
        conn_close(c);
        return false;
    }
    c->filling->state = KAFKA__SLOT_FILLING;
    c->filling->frame_len = len;
    c->filling->frame_cap = cap;
    return true;
}

/* The frame is complete: parse request header v1 and hand it over. */
static void frame_done(struct kafka_conn *c)
{
    struct kafka__slot *slot = c->filling;
    struct kafka_request *req = &slot->req;
    struct kafka_server *s = c->server;
    struct reader r;

    ASSERT(slot->frame_have == slot->frame_len);
    c->filling = NULL;
    reader_init(&r, slot->frame, slot->frame_len);
    req->api_key = reader_i16(&r);
    req->api_version = reader_i16(&r);
    req->correlation_id = reader_i32(&r);
    req->client_id = reader_nullable_string(&r);
    if (r.rc != RC_OK) {
        TRACE_WARN(s->t, "peer=%s closing: bad request header: %s",
                   c->peer, rc_str(r.rc));
        free(slot);
        conn_close(c);
        return;
    }
    req->conn = c;
    req->seq = c->next_seq++;
    req->body = slot->frame + r.pos;
    req->body_len = slot->frame_len - r.pos;
    slot->state = KAFKA__SLOT_HANDED;
    slot_link(c, slot);
    c->refs++;
    s->stats.requests++;
    s->cb(s->arg, req);
}

/* Reads the 4-byte size, then starts the frame. */
static size_t parse_size(struct kafka_conn *c, const uint8_t *p, size_t n)
{
    size_t take = KAFKA__SIZE_BYTES - c->size_have;

    take = take < n ? take : n;
    memcpy(c->size_buf + c->size_have, p, take);
    c->size_have += take;
    if (c->size_have == KAFKA__SIZE_BYTES) {
        c->size_have = 0;
        (void)frame_start(c, bytes_be32(c->size_buf));
    }
    return take;
}

/* Appends bytes to the frame being assembled; completes it when full. */
static size_t parse_frame(struct kafka_conn *c, const uint8_t *p, size_t n)
{
    size_t take = c->filling->frame_len - c->filling->frame_have;

    take = take < n ? take : n;
    if (!frame_reserve(c, take)) {
        TRACE_WARN(c->server->t, "peer=%s closing: no memory for a "
                   "%zu-byte frame", c->peer, c->filling->frame_len);
        conn_close(c);
        return n;
    }
    memcpy(c->filling->frame + c->filling->frame_have, p, take);
    c->filling->frame_have += take;
    if (c->filling->frame_have == c->filling->frame_len) {
        frame_done(c);
    }
    return take;
}

/* Parses the read buffer's unparsed bytes. At each frame boundary the
 * bounds are checked; over them, reading pauses and the rest waits. */
static void conn_parse(struct kafka_conn *c)
{
    ASSERT(!c->in_parse);
    c->in_parse = true;
    while (c->rbuf_off < c->rbuf_len && !c->closing) {
        const uint8_t *p = c->rbuf + c->rbuf_off;
        size_t n = c->rbuf_len - c->rbuf_off;
        if (c->filling != NULL) {
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
    struct kafka_conn *c = h->data;
    struct kafka__slot *slot = c->filling;

    (void)suggested;
    ASSERT(c->rbuf_len == 0);
    if (slot == NULL) {
        *buf = uv_buf_init((char *)c->rbuf, (unsigned)sizeof c->rbuf);
        return;
    }
    /* The rest of this frame goes straight into it, up to
     * KAFKA_FRAME_READ_BYTES more per read; the next frame's bytes never
     * land in it. */
    size_t left = slot->frame_len - slot->frame_have;
    size_t more = left < KAFKA_FRAME_READ_BYTES ? left
                                                : KAFKA_FRAME_READ_BYTES;
    if (!frame_reserve(c, more)) {
        *buf = uv_buf_init(NULL, 0); /* read_cb gets UV_ENOBUFS */
        return;
    }
    slot = c->filling;
    *buf = uv_buf_init((char *)slot->frame + slot->frame_have,
                       (unsigned)(slot->frame_cap - slot->frame_have));
}

static void conn_read_failed(struct kafka_conn *c, ssize_t nread)
{
    struct tracer *t = c->server->t;

    if (nread != UV_EOF) {
        TRACE_WARN(t, "peer=%s closing: read failed: %s", c->peer,
                   uv_strerror((int)nread));
    } else if (c->size_have > 0 || c->filling != NULL) {
        TRACE_WARN(t, "peer=%s closed the connection mid-frame", c->peer);
    } else {
        TRACE_DEBUG(t, "peer=%s closed the connection", c->peer);
    }
    conn_close(c);
}

static void conn_read_cb(uv_stream_t *stream, ssize_t nread,
                         const uv_buf_t *buf)
{
    struct kafka_conn *c = stream->data;

    if (nread == 0 || c->closing) {
        return;
    }
    if (nread < 0) {
        conn_read_failed(c, nread);
        return;
    }
    if ((uint8_t *)buf->base == c->rbuf) {
        c->rbuf_off = 0;
        c->rbuf_len = (size_t)nread;
        conn_parse(c);
    } else {
        struct kafka__slot *slot = c->filling;
        ASSERT(slot != NULL);
        ASSERT((uint8_t *)buf->base == slot->frame + slot->frame_have);
        ASSERT((size_t)nread <= slot->frame_cap - slot->frame_have);
        slot->frame_have += (size_t)nread;
        if (slot->frame_have == slot->frame_len) {
            frame_done(c);
        }
    }
    conn_flow(c);
}

static void conn_read_start(struct kafka_conn *c)
{
    int rv = uv_read_start((uv_stream_t *)&c->tcp, conn_alloc_cb,
                           conn_read_cb);
    if (rv != 0) {
        TRACE_WARN(c->server->t, "peer=%s closing: read start failed: %s",
                   c->peer, uv_strerror(rv));
        conn_close(c);
    }
}

/* Applies the bounds: pauses reading above them; below half, parses what
 * waited in the read buffer, then reads again. Not inside a parse (that
 * loop checks the bounds itself). */
static void conn_flow(struct kafka_conn *c)
{
    if (c->closing || c->in_parse) {
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
    TRACE_DEBUG(c->server->t, "peer=%s reading resumed", c->peer);
    if (c->rbuf_off < c->rbuf_len) {
        conn_parse(c);
        if (c->paused || c->closing) {
            return;
        }
    }
    conn_read_start(c);
}

/* --- Connection lifetime ------------------------------------------------- */

/* The socket is closed and every write callback has run: drop what was
 * still to send and the answers waiting for an earlier one. Requests
 * still with handlers keep the connection until answered. */
static void conn_close_cb(uv_handle_t *h)
{
    struct kafka_conn *c = h->data;
    struct kafka__slot *slot = c->slots_head;

    while (c->out_head != NULL) {
        struct kafka__piece *p = out_pop(c);
        ASSERT(c->outbox_bytes >= p->len);
        c->outbox_bytes -= p->len;
        piece_done(p);
    }
    while (slot != NULL) {
        struct kafka__slot *next = slot->next;
        if (slot->state != KAFKA__SLOT_HANDED) {
            if (slot->state == KAFKA__SLOT_REPLIED) {
                ASSERT(c->outbox_bytes >= slot->wire_bytes);
                c->outbox_bytes -= slot->wire_bytes;
            }
            slot_unlink(c, slot);
            slot_free(slot);
        }
        slot = next;
    }
    ASSERT(c->outbox_bytes == 0);
    conn_unref(c);
}

static void server_unlink(struct kafka_server *s, struct kafka_conn *c)
{
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        s->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->prev = NULL;
    c->next = NULL;
    c->listed = false;
    ASSERT(s->n_conns > 0);
    s->n_conns--;
}

/* Starts closing: nothing new is read or sent; frees happen in
 * conn_close_cb and at the last reference. */
static void conn_close(struct kafka_conn *c)
{
    if (c->closing) {
        return;
    }
    c->closing = true;
    if (c->listed) {
        server_unlink(c->server, c);
    }
    uv_close((uv_handle_t *)&c->tcp, conn_close_cb);
}

bool kafka_conn_is_open(const struct kafka_conn *conn)
{
    return !conn->closing;
}

const char *kafka_conn_peer(const struct kafka_conn *conn)
{
    return conn->peer;
}

bool kafka_conn_reading(const struct kafka_conn *conn)
{
    return !conn->closing && !conn->paused;
}

size_t kafka_conn_outbox_bytes(const struct kafka_conn *conn)
{
    return conn->outbox_bytes;
}

/* --- Listener ------------------------------------------------------------ */

static void server_accept(struct kafka_server *s, struct kafka_conn *c)
{
    struct sockaddr_storage ss;
    int ss_len = (int)sizeof ss;
    int rv = uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&c->tcp);

    if (rv != 0) {
        TRACE_WARN(s->t, "port=%d accept failed: %s", s->port,
                   uv_strerror(rv));
        conn_close(c);
        return;
    }
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &ss_len) == 0) {
        net_sockaddr_name(&ss, c->peer, sizeof c->peer);
    }
    if (s->n_conns >= KAFKA_CONNS_MAX) {
        TRACE_WARN(s->t, "peer=%s closing: %zu connections already open",
                   c->peer, s->n_conns);
        s->stats.conns_refused++;
        conn_close(c);
        return;
    }
    c->listed = true;
    c->next = s->conns;
    if (s->conns != NULL) {
        s->conns->prev = c;
    }
    s->conns = c;
    s->n_conns++;
    rv = uv_tcp_nodelay(&c->tcp, 1);
    if (rv != 0) {
        TRACE_WARN(s->t, "peer=%s TCP_NODELAY failed: %s", c->peer,
                   uv_strerror(rv));
    }
    TRACE_DEBUG(s->t, "peer=%s connected", c->peer);
    conn_read_start(c);
}

static void server_connection_cb(uv_stream_t *listener, int status)
{
    struct kafka_server *s = listener->data;
    struct kafka_conn *c;

    if (status < 0) {
        TRACE_WARN(s->t, "port=%d accept failed: %s", s->port,
                   uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        TRACE_ERROR(s->t, "port=%d accept: out of memory", s->port);
        return;
    }
    if (uv_tcp_init(s->loop, &c->tcp) != 0) {
        TRACE_ERROR(s->t, "port=%d accept: tcp init failed", s->port);
        free(c);
        return;
    }
    c->tcp.data = c;
    c->server = s;
    c->refs = 1;
    snprintf(c->peer, sizeof c->peer, "?");
    s->n_alive++;
    s->stats.conns_accepted++;
    server_accept(s, c);
}

static void server_close_cb(uv_handle_t *h)
{
    struct kafka_server *s = h->data;

    s->listener_closed = true;
    if (s->n_alive == 0) {
        net_pool_free(&s->pool);
        free(s);
    }
}

int kafka_server_start(struct kafka_server **out, uv_loop_t *loop,
                       const char *host, int port, kafka_request_cb cb,
                       void *arg, struct tracer *tracer)
{
    struct kafka_server *s;
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
    s->t = tracer;
    s->cb = cb;
    s->arg = arg;
    net_pool_init(&s->pool, KAFKA_COPY_BUFFER_BYTES,
                  KAFKA_COPY_POOL_BUFFERS_MAX);
    if (uv_tcp_init(loop, &s->listener) != 0) {
        free(s);
        return RC_IO;
    }
    s->listener.data = s;
    rv = net_listen(&s->listener, loop, host, port, KAFKA__BACKLOG,
                    server_connection_cb, &s->port, tracer);
    if (rv != RC_OK) {
        s->closing = true;
        uv_close((uv_handle_t *)&s->listener, server_close_cb);
        return rv;
    }
    TRACE_INFO(tracer, "host=%s port=%d kafka listener started", host,
               s->port);
    *out = s;
    return RC_OK;
}

int kafka_server_port(const struct kafka_server *s)
{
    return s->port;
}

void kafka_server_close(struct kafka_server *s)
{
    ASSERT(!s->closing);
    s->closing = true;
    while (s->conns != NULL) {
        conn_close(s->conns);
    }
    uv_close((uv_handle_t *)&s->listener, server_close_cb);
}

void kafka_server_set_copy_only(struct kafka_server *s, bool copy_only)
{
    s->copy_only = copy_only;
}

void kafka_server_get_stats(const struct kafka_server *s,
                            struct kafka_server_stats *out)
{
    *out = s->stats;
    out->conns_open = s->n_conns;
}
