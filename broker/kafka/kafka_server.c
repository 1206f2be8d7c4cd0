/* The Kafka listener (broker/kafka/kafka_server.h).
 *
 * Ownership. The server owns its frame listener (common/net/frame_conn.h,
 * which owns the sockets, reading, the open-connection list and the
 * outbox count) and a pool of copy buffers. A connection owns its slots
 * and its output queue. A slot is one allocation per request, made by the
 * frame layer as the frame's headroom: the struct kafka__slot, holding the
 * struct kafka_request handed to the callback (borrowing from the frame)
 * and then the answer, followed by the frame. Slots sit in seq order from the moment their frame is read
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
 * Bounds. Reading stops while the outbox is above CONN_OUTBOX_BYTES_MAX
 * (the frame layer's FRAME_CONN_FULL_PAUSE), the unanswered requests
 * reach KAFKA_CONN_INFLIGHT_MAX or KAFKA_CONN_REQUEST_BYTES_MAX, or the
 * memory answered responses hold until sent reaches
 * KAFKA_CONN_OUT_MEMORY_MAX (conn_hold_cb), and resumes below half of
 * each. Across all connections, frames and answers together are bounded
 * by queued.max.request.bytes: above it every connection holding
 * KAFKA_CONN_FAIR_SHARE_BYTES or more stops reading, and an idle callback
 * (wake_cb) lets them read on below half. Bytes
 * already read are parsed only up to the next frame boundary; the rest
 * waits in the read buffer. A connection that held much memory trims
 * the allocator when it goes, so the broker's RSS comes back down.
 *
 * Lifetime. The frame connection's references count its socket handle
 * plus the requests handed out and not yet answered; the connection is
 * freed at zero (conn_free_cb), so a late answer on a closed connection
 * is dropped safely. The server counts its live connections and is freed
 * once the listener has closed and the last connection is freed.
 *
 * Loop thread only. */
#include "broker/kafka/kafka_server.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/kafka/net_sendfile.h"
#include "common/bytes.h"
#include "common/kafka/kafka_frame.h"
#include "common/limits.h"
#include "common/net/frame_conn.h"
#include "common/rc.h"
#include "common/reader.h"

#define KAFKA__SIZE_BYTES KAFKA_FRAME_SIZE_BYTES
/* Request header v1 with a null or empty client id. */
#define KAFKA__REQUEST_HEADER_MIN_BYTES KAFKA_FRAME_REQUEST_HEADER_BYTES(0)
/* Response size field and header: the correlation id (header v0), and
 * an empty tagged-field section for a flexible version (header v1). */
#define KAFKA__RESPONSE_HEAD_BYTES \
    (KAFKA_FRAME_SIZE_BYTES + KAFKA_FRAME_RESPONSE_HEADER_V1_BYTES)
/* Memory pieces gathered into one uv_write. */
#define KAFKA__WRITE_BUFS 16u
#define KAFKA__BACKLOG 128

_Static_assert(KAFKA__REQUEST_HEADER_MIN_BYTES <= KAFKA_READ_BUFFER_BYTES,
               "a request header fits the read buffer");

enum kafka__slot_state {
    KAFKA__SLOT_HANDED,   /* with the callback, not answered */
    KAFKA__SLOT_REPLIED,  /* answered with resp */
    KAFKA__SLOT_NO_REPLY  /* answered with nothing to send */
};

/* One request and, once answered, its response; the frame's headroom,
 * so the frame's frame_len bytes follow it in the same allocation. */
struct kafka__slot {
    struct kafka__slot *prev, *next; /* the connection's seq order */
    enum kafka__slot_state state;
    struct kafka_request req;
    struct kafka_response resp;      /* KAFKA__SLOT_REPLIED */
    size_t wire_bytes;               /* in the outbox once replied */
    size_t charge;                   /* memory the response holds */
    size_t frame_len;
    uint64_t read_ns;                /* uv_hrtime() when read */
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
    struct kafka_conn *conn;         /* outlives its pieces */
    size_t charge;                   /* memory counted in conn->out_memory */
    size_t n_left;                   /* pieces not yet done */
    uint8_t *body;                   /* the response body, owned */
    uint8_t head[KAFKA__RESPONSE_HEAD_BYTES];
    struct kafka__piece pieces[];
};

/* One uv_write: memory pieces, or one copy buffer. */
struct kafka__wreq {
    struct frame_conn_write fw;      /* first: the callback casts back */
    struct kafka_conn *conn;
    size_t bytes;
    struct kafka__piece *pieces;     /* done at the callback */
    void *copy;                      /* pooled, returned at the callback */
    uv_buf_t bufs[KAFKA__WRITE_BUFS];
};

struct kafka_conn {
    struct frame_conn *fc;           /* socket, reading, outbox, refs */
    struct kafka_server *server;     /* outlives every connection */
    size_t out_memory;               /* answered, not yet sent */
    size_t peak_memory;              /* of out_memory + slot_bytes */
    bool no_sendfile;                /* sendfile(2) failed here: copy */
    uint64_t next_seq;
    char software_name[KAFKA_CONN_SOFTWARE_BYTES];    /* KIP-511 */
    char software_version[KAFKA_CONN_SOFTWARE_BYTES];
    bool unsupported_logged;         /* kafka_conn_first_unsupported() */
    /* Requests in seq order, until they move to the output. */
    struct kafka__slot *slots_head, *slots_tail;
    size_t n_slots;
    size_t slot_bytes;               /* their frame bytes */
    /* Output. */
    struct kafka__piece *out_head, *out_tail;
    size_t n_copies;                 /* copy buffers in uv_write */
};

struct kafka_server {
    struct frame_listener *listener; /* NULL once closing */
    struct frame_listener_stats last; /* the listener's, at close */
    uv_loop_t *loop;
    struct tracer *t;
    kafka_request_cb cb;
    void *arg;
    size_t n_alive;                  /* connections not yet freed */
    size_t queued;                   /* frames and answers, all conns */
    size_t queued_max;               /* queued.max.request.bytes */
    bool over;                       /* queued passed the bound */
    uv_idle_t wake;                  /* resumes reading below half */
    bool wake_open;
    struct net_pool pool;
    struct kafka_server_stats stats;
    struct http_metrics_hist request_ms[KAFKA_SERVER_API_KEYS];
    int port;
    bool copy_only;
    bool serving;                    /* kafka_server_serve() was called */
    bool closing;
    bool listener_closed;
    kafka_conn_closed_fn conn_closed; /* kafka_server_on_conn_closed() */
    void *conn_closed_arg;
};

static void conn_pump(struct kafka_conn *c);
static void wake_cb(uv_idle_t *h);

/* Freed once the listener and the wake handle have closed and the last
 * connection is gone. */
static void server_maybe_free(struct kafka_server *s)
{
    if (s->listener_closed && !s->wake_open && s->n_alive == 0) {
        net_pool_free(&s->pool);
        free(s);
    }
}

static bool conn_closing(const struct kafka_conn *c)
{
    return !frame_conn_is_open(c->fc);
}

static const char *conn_peer(const struct kafka_conn *c)
{
    return frame_conn_peer(c->fc);
}

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

/* The size field and response header of req's answer. */
static size_t response_head_bytes(const struct kafka_request *req)
{
    return KAFKA_FRAME_SIZE_BYTES +
           (kafka_frame_response_is_flexible(req->api_key, req->api_version)
                ? KAFKA_FRAME_RESPONSE_HEADER_V1_BYTES
                : KAFKA_FRAME_RESPONSE_HEADER_BYTES);
}

/* Bytes on the wire: size field, header, body and spans. Returns
 * false when the size field cannot hold them. */
static bool response_wire_bytes(const struct kafka_response *resp,
                                size_t head_bytes, size_t *out)
{
    uint64_t total = head_bytes + (uint64_t)resp->body.len;
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

/* --- Memory ------------------------------------------------------------- */

/* What an allocation costs beyond what was asked (glibc's chunk header
 * and rounding), counted per block a response holds. */
#define KAFKA__ALLOC_OVERHEAD_BYTES 32u

/* The memory a response holds until it is sent: its body's buffer, the
 * output block with its pieces, and the allocator's overhead. */
static size_t response_charge(const struct kafka_response *resp)
{
    return resp->body.cap + sizeof(struct kafka__out) +
           (2 + 2 * resp->n_splices) * sizeof(struct kafka__piece) +
           2 * KAFKA__ALLOC_OVERHEAD_BYTES;
}

static void queued_add(struct kafka_server *s, size_t n)
{
    s->queued += n;
    if (!s->over && s->queued >= s->queued_max) {
        s->over = true;
        TRACE_WARN(s->t, "queued requests and answers hold %zu MiB: "
                   "connections holding memory stop reading until half is "
                   "freed", s->queued >> 20);
    }
}

static void queued_done(struct kafka_server *s, size_t n)
{
    ASSERT(s->queued >= n);
    s->queued -= n;
    if (s->over && s->queued <= s->queued_max / 2) {
        s->over = false;
        if (s->wake_open) {
            (void)uv_idle_start(&s->wake, wake_cb);
        }
    }
}

static void memory_add(struct kafka_conn *c, size_t n)
{
    c->out_memory += n;
    if (c->out_memory + c->slot_bytes > c->peak_memory) {
        c->peak_memory = c->out_memory + c->slot_bytes;
    }
    queued_add(c->server, n);
}

static void memory_done(struct kafka_conn *c, size_t n)
{
    ASSERT(c->out_memory >= n);
    c->out_memory -= n;
    queued_done(c->server, n);
}

static void piece_done(struct kafka__piece *p)
{
    struct kafka__out *out = p->out;

    if (p->ptr == NULL) {
        log_span_release(&p->span);
    }
    ASSERT(out->n_left > 0);
    if (--out->n_left == 0) {
        memory_done(out->conn, out->charge);
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
    out->conn = c;
    out->charge = slot->charge; /* released with the last piece */
    slot->charge = 0;
    out->n_left = 0;
    out->body = resp->body.data;
    resp->body.data = NULL;
    bytes_put_be32(out->head,
                   (uint32_t)(slot->wire_bytes - KAFKA__SIZE_BYTES));
    bytes_put_be32(out->head + 4, (uint32_t)slot->req.correlation_id);
    out->head[8] = 0; /* header v1: no tagged field */
    out_add_memory(out, out->head, 0, response_head_bytes(&slot->req));
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

static void conn_write_cb(struct frame_conn_write *fw, int status)
{
    struct kafka__wreq *w = (struct kafka__wreq *)(void *)fw;
    struct kafka_conn *c = w->conn;

    (void)status; /* a failed write closed the connection */
    wreq_free(c, w);
    if (!conn_closing(c)) {
        conn_pump(c); /* the frame layer applies the bounds after this */
    }
}

/* Hands w (bufs filled) to the socket. Its bytes were counted in the
 * outbox as pieces; the frame layer counts them while written, so they
 * leave the user's share here. False if the connection closed. */
static bool conn_write(struct kafka_conn *c, struct kafka__wreq *w,
                       unsigned n_bufs)
{
    int rv;

    w->conn = c;
    frame_conn_outbox_done(c->fc, w->bytes);
    rv = frame_conn_write(c->fc, &w->fw, w->bufs, n_bufs, conn_write_cb);
    if (rv != RC_OK) {
        /* Never queued: no callback will come; the layer logged it. */
        wreq_free(c, w);
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
                   conn_peer(c));
        frame_conn_close(c->fc, RC_NOMEM);
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
                   conn_peer(c), n, p->span.position, rc_str(rv));
        if (w != NULL) {
            wreq_free(c, w);
        }
        frame_conn_close(c->fc, RC_IO);
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
    int fd;

    if (try_sendfile && frame_conn_fileno(c->fc, &fd) == RC_OK) {
        size_t sent = 0;
        int rv = net_sendfile(fd, p->span.fd, p->span.position, p->len,
                              &sent);
        if (rv == RC_IO || rv == RC_SHORT) {
            TRACE_DEBUG(c->server->t, "peer=%s sendfile: %s (%s); copying",
                        conn_peer(c), rc_str(rv), strerror(errno));
            c->no_sendfile = true;
        }
        p->span.position += (int64_t)sent;
        p->len -= sent;
        frame_conn_outbox_done(c->fc, sent);
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
    while (c->out_head != NULL && !conn_closing(c)) {
        if (frame_conn_write_queue_bytes(c->fc) > 0) {
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
    queued_add(c->server, slot->frame_len);
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
    queued_done(c->server, slot->frame_len);
}

static void slot_free(struct kafka_conn *c, struct kafka__slot *slot)
{
    if (slot->state == KAFKA__SLOT_REPLIED) {
        kafka_response_free(&slot->resp);
    }
    if (slot->charge > 0) {
        memory_done(c, slot->charge);
    }
    free(slot);
}

/* Moves answered slots from the head to the output queue, in seq order. */
static void conn_flush(struct kafka_conn *c)
{
    while (c->slots_head != NULL && !conn_closing(c) &&
           c->slots_head->state != KAFKA__SLOT_HANDED) {
        struct kafka__slot *slot = c->slots_head;
        slot_unlink(c, slot);
        if (slot->state == KAFKA__SLOT_REPLIED &&
            out_enqueue(c, slot) != RC_OK) {
            TRACE_WARN(c->server->t, "peer=%s closing: out of memory",
                       conn_peer(c));
            frame_conn_outbox_done(c->fc, slot->wire_bytes);
            slot_free(c, slot);
            frame_conn_close(c->fc, RC_NOMEM);
            return;
        }
        slot_free(c, slot);
    }
}

/* The last reference is gone (frame layer): the socket has closed and
 * every request was answered. */
static void conn_free_cb(struct frame_conn *fc)
{
    struct kafka_conn *c = frame_conn_data(fc);
    struct kafka_server *s = c->server;

    ASSERT(c->slots_head == NULL);
    ASSERT(c->out_head == NULL);
    ASSERT(c->n_copies == 0);
    ASSERT(c->out_memory == 0);
    bool trim = c->peak_memory >= KAFKA_CONN_OUT_MEMORY_MAX;
    free(c);
    if (trim) {
        /* Give what a heavy connection held back to the system; glibc
         * keeps freed small blocks otherwise. */
        (void)malloc_trim(0);
    }
    ASSERT(s->n_alive > 0);
    s->n_alive--;
    server_maybe_free(s);
}

/* The handler is done with slot (state set). On a closing connection the
 * answer is dropped; otherwise it joins the output in seq order. */
static void slot_answered(struct kafka_conn *c, struct kafka__slot *slot)
{
    ASSERT(slot->state == KAFKA__SLOT_REPLIED ||
           slot->state == KAFKA__SLOT_NO_REPLY);
    int16_t key = slot->req.api_key;
    if (key >= 0 && key < KAFKA_SERVER_API_KEYS) {
        http_metrics_observe(&c->server->request_ms[key],
                             (double)(uv_hrtime() - slot->read_ns) / 1e6);
    }
    if (conn_closing(c)) {
        slot_unlink(c, slot);
        slot_free(c, slot);
        frame_conn_unref(c->fc); /* may free c */
        return;
    }
    if (slot->state == KAFKA__SLOT_REPLIED) {
        frame_conn_outbox_add(c->fc, slot->wire_bytes);
        slot->charge = response_charge(&slot->resp);
        memory_add(c, slot->charge);
        c->server->stats.responses++;
    }
    conn_flush(c);
    conn_pump(c);
    frame_conn_flow(c->fc);
    frame_conn_unref(c->fc); /* the handle's reference remains */
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

    if (rc == RC_OK &&
        response_wire_bytes(&slot->resp, response_head_bytes(req),
                            &slot->wire_bytes)) {
        return true;
    }
    TRACE_ERROR(c->server->t,
                "peer=%s api_key=%d api_version=%d closing: response not "
                "encodable: %s",
                conn_peer(c), req->api_key, req->api_version,
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
    if (!conn_closing(c) && !response_check(c, slot)) {
        frame_conn_close(c->fc, RC_TOO_LARGE);
    }
    slot_answered(c, slot);
}

const char *kafka_request_peer(const struct kafka_request *req)
{
    return conn_peer(req->conn);
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

    if (!conn_closing(c)) {
        TRACE_WARN(c->server->t,
                   "peer=%s api_key=%d api_version=%d correlation_id=%"
                   PRId32 " closing: %s",
                   conn_peer(c), req->api_key, req->api_version,
                   req->correlation_id, why);
        frame_conn_close(c->fc, RC_MALFORMED);
    }
    slot->state = KAFKA__SLOT_NO_REPLY;
    slot_answered(c, slot);
}

/* --- Reading ------------------------------------------------------------ */

/* The unanswered requests' bounds (the frame layer adds the outbox's):
 * stop at either, resume below half of both. */
static bool conn_hold_cb(struct frame_conn *fc, bool paused)
{
    const struct kafka_conn *c = frame_conn_data(fc);

    if (!c->server->serving) {
        return true;
    }
    if (c->server->over &&
        c->out_memory + c->slot_bytes >= KAFKA_CONN_FAIR_SHARE_BYTES) {
        /* Over the broker's bound: the connections that hold memory
         * wait; one that holds next to nothing (a new client, a
         * follower between fetches) still gets its request read. */
        return true;
    }
    if (!paused) {
        return c->n_slots >= KAFKA_CONN_INFLIGHT_MAX ||
               c->slot_bytes >= KAFKA_CONN_REQUEST_BYTES_MAX ||
               c->out_memory >= KAFKA_CONN_OUT_MEMORY_MAX;
    }
    return c->n_slots > KAFKA_CONN_INFLIGHT_MAX / 2 ||
           c->slot_bytes > KAFKA_CONN_REQUEST_BYTES_MAX / 2 ||
           c->out_memory > KAFKA_CONN_OUT_MEMORY_MAX / 2;
}

/* A whole frame, in its own allocation after the slot (headroom): parse
 * request header v1 and hand it over. */
static void conn_frame_cb(struct frame_conn *fc, void *block,
                          uint8_t *frame, size_t len)
{
    struct kafka_conn *c = frame_conn_data(fc);
    struct kafka__slot *slot = block;
    struct kafka_request *req = &slot->req;
    struct kafka_server *s = c->server;
    struct reader r;

    ASSERT(frame == (uint8_t *)(slot + 1));
    memset(slot, 0, sizeof *slot);
    slot->frame_len = len;
    reader_init(&r, frame, len);
    struct kafka_frame_request_header h;
    int rv = kafka_frame_request_read(&r, &h);
    if (rv != RC_OK) {
        TRACE_WARN(s->t, "peer=%s closing: bad request header: %s",
                   conn_peer(c), rc_str(rv));
        free(slot);
        frame_conn_close(fc, RC_MALFORMED);
        return;
    }
    slot->read_ns = uv_hrtime();
    req->api_key = h.ApiKey;
    req->api_version = h.ApiVersion;
    req->correlation_id = h.CorrelationId;
    req->client_id = h.ClientId;
    req->conn = c;
    req->seq = c->next_seq++;
    req->body = frame + r.pos;
    req->body_len = len - r.pos;
    slot->state = KAFKA__SLOT_HANDED;
    slot_link(c, slot);
    frame_conn_ref(fc);
    s->stats.requests++;
    s->cb(s->arg, req);
}

/* --- Connection lifetime ------------------------------------------------- */

/* The socket is closed and every write callback has run: drop what was
 * still to send and the answers waiting for an earlier one. Requests
 * still with handlers keep the connection until answered. */
static void conn_closed_cb(struct frame_conn *fc, int rc)
{
    struct kafka_conn *c = frame_conn_data(fc);
    struct kafka__slot *slot = c->slots_head;

    (void)rc; /* logged where it happened */
    while (c->out_head != NULL) {
        struct kafka__piece *p = out_pop(c);
        frame_conn_outbox_done(fc, p->len);
        piece_done(p);
    }
    while (slot != NULL) {
        struct kafka__slot *next = slot->next;
        if (slot->state != KAFKA__SLOT_HANDED) {
            if (slot->state == KAFKA__SLOT_REPLIED) {
                frame_conn_outbox_done(fc, slot->wire_bytes);
            }
            slot_unlink(c, slot);
            slot_free(c, slot);
        }
        slot = next;
    }
    ASSERT(frame_conn_outbox_bytes(fc) == 0);
    /* The handle still holds its reference: answers given in the hook
     * cannot free c under us. */
    if (c->server->conn_closed != NULL) {
        c->server->conn_closed(c->server->conn_closed_arg, c);
    }
}

void kafka_server_on_conn_closed(struct kafka_server *s,
                                 kafka_conn_closed_fn fn, void *arg)
{
    s->conn_closed = fn;
    s->conn_closed_arg = arg;
}

bool kafka_conn_is_open(const struct kafka_conn *conn)
{
    return !conn_closing(conn);
}

static void software_copy(char *dst, struct slice s)
{
    size_t n = s.len < KAFKA_CONN_SOFTWARE_BYTES - 1
                   ? s.len
                   : KAFKA_CONN_SOFTWARE_BYTES - 1;
    if (n > 0) {
        memcpy(dst, s.ptr, n);
    }
    dst[n] = '\0';
}

void kafka_conn_set_software(struct kafka_conn *conn, struct slice name,
                             struct slice version)
{
    software_copy(conn->software_name, name);
    software_copy(conn->software_version, version);
}

const char *kafka_conn_software_name(const struct kafka_conn *conn)
{
    return conn->software_name;
}

const char *kafka_conn_software_version(const struct kafka_conn *conn)
{
    return conn->software_version;
}

const char *kafka_conn_peer(const struct kafka_conn *conn)
{
    return conn_peer(conn);
}

bool kafka_conn_first_unsupported(struct kafka_conn *conn)
{
    bool first = !conn->unsupported_logged;
    conn->unsupported_logged = true;
    return first;
}

bool kafka_conn_reading(const struct kafka_conn *conn)
{
    return frame_conn_reading(conn->fc);
}

size_t kafka_conn_outbox_bytes(const struct kafka_conn *conn)
{
    return frame_conn_outbox_bytes(conn->fc);
}

/* --- Listener ------------------------------------------------------------ */

static const struct frame_conn_cbs kafka__conn_cbs = {
    .frame = conn_frame_cb,
    .closed = conn_closed_cb,
    .free = conn_free_cb,
    .hold = conn_hold_cb,
};

static int server_accept_cb(void *arg, struct frame_conn *fc)
{
    struct kafka_server *s = arg;
    struct kafka_conn *c = calloc(1, sizeof *c);

    if (c == NULL) {
        return RC_NOMEM;
    }
    c->fc = fc;
    c->server = s;
    s->n_alive++;
    frame_conn_attach(fc, &kafka__conn_cbs, c);
    return RC_OK;
}

static void server_listener_closed_cb(void *arg)
{
    struct kafka_server *s = arg;

    s->listener_closed = true;
    server_maybe_free(s);
}

static void wake_closed_cb(uv_handle_t *h)
{
    struct kafka_server *s = h->data;

    s->wake_open = false;
    server_maybe_free(s);
}

/* Below half the broker's bound again: every connection applies its own
 * bounds and reads on. */
static void wake_cb(uv_idle_t *h)
{
    struct kafka_server *s = h->data;

    (void)uv_idle_stop(h);
    if (!s->over && s->listener != NULL) {
        frame_listener_flow_all(s->listener);
    }
}

int kafka_server_start(struct kafka_server **out, uv_loop_t *loop,
                       const struct kafka_server_config *kcfg,
                       kafka_request_cb cb, void *arg, struct tracer *tracer)
{
    const char *host = kcfg->host;
    struct frame_listener_config cfg = {
        .host = host,
        .port = kcfg->port,
        .backlog = KAFKA__BACKLOG,
        .conns_max = kcfg->max_connections > 0 ? kcfg->max_connections
                                               : KAFKA_CONNS_MAX,
        .evict_idle_ms = KAFKA_CONN_EVICT_IDLE_MS,
        .idle_ms = kcfg->idle_ms,
        .per_ip_max = kcfg->max_connections_per_ip,
        .conn = {.frame_bytes_min = KAFKA__REQUEST_HEADER_MIN_BYTES,
                 .frame_bytes_max = REQUEST_BYTES_MAX,
                 .read_buffer_bytes = KAFKA_READ_BUFFER_BYTES,
                 .prealloc_bytes = KAFKA_FRAME_PREALLOC_BYTES,
                 .read_bytes = KAFKA_FRAME_READ_BYTES,
                 .headroom = sizeof(struct kafka__slot),
                 .frames_owned = true,
                 .outbox_bytes_max = CONN_OUTBOX_BYTES_MAX,
                 .full = FRAME_CONN_FULL_PAUSE,
                 .size_name = "frame size"},
    };
    struct kafka_server *s;
    int rv;

    ASSERT(cb != NULL);
    s = calloc(1, sizeof *s); /* the port is frame_listener_start()'s */
    if (s == NULL) {
        return RC_NOMEM;
    }
    s->loop = loop;
    s->t = tracer;
    s->cb = cb;
    s->queued_max = kcfg->queued_max_bytes > 0 ? kcfg->queued_max_bytes
                                               : KAFKA_QUEUED_MEMORY_MAX;
    s->arg = arg;
    net_pool_init(&s->pool, KAFKA_COPY_BUFFER_BYTES,
                  KAFKA_COPY_POOL_BUFFERS_MAX);
    rv = frame_listener_start(&s->listener, loop, &cfg, server_accept_cb,
                              s, tracer);
    if (rv != RC_OK) {
        free(s); /* the half-made listener frees itself */
        return rv;
    }
    rv = uv_idle_init(loop, &s->wake);
    ASSERT(rv == 0);
    s->wake.data = s;
    s->wake_open = true;
    s->port = frame_listener_port(s->listener);
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
    frame_listener_get_stats(s->listener, &s->last);
    frame_listener_close(s->listener, server_listener_closed_cb);
    s->listener = NULL;
    uv_close((uv_handle_t *)&s->wake, wake_closed_cb);
    s->last.conns_open = 0;
}

void kafka_server_serve(struct kafka_server *s)
{
    if (!s->serving) {
        s->serving = true;
        if (s->listener != NULL) {
            frame_listener_flow_all(s->listener);
        }
    }
}

bool kafka_server_serving(const struct kafka_server *s)
{
    return s->serving;
}

void kafka_server_set_copy_only(struct kafka_server *s, bool copy_only)
{
    s->copy_only = copy_only;
}

const struct http_metrics_hist *
kafka_server_request_times(const struct kafka_server *s)
{
    return s->request_ms;
}

void kafka_server_get_stats(const struct kafka_server *s,
                            struct kafka_server_stats *out)
{
    struct frame_listener_stats ls = s->last;

    if (s->listener != NULL) {
        frame_listener_get_stats(s->listener, &ls);
    }
    *out = s->stats;
    out->conns_open = ls.conns_open;
    out->conns_accepted = ls.conns_accepted;
    out->conns_refused = ls.conns_refused;
    out->reads_paused = ls.reads_paused;
}
