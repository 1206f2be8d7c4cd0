/* The controllers' Raft transport (controller/raft_transport.h). */
#include "controller/raft_transport.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/limits.h"
#include "common/net/net.h"
#include "common/rc.h"
#include "controller/raft_guard.h"

#define RT__MAGIC "CAIRNRFT"
#define RT__MAGIC_BYTES 8
#define RT__CONTEXT "cairn-raft-1"
#define RT__CHALLENGE_MSG_BYTES (RT__MAGIC_BYTES + RAFT_TRANSPORT_CHALLENGE_BYTES)
#define RT__HELLO_FIXED (RT__MAGIC_BYTES + 8 + 8) /* magic, id, length */
#define RT__ADDRESS_MAX 255
#define RT__BACKLOG 64
#define RT__DRAIN_BYTES 256 /* reads of libraft's end: it never writes */

struct rt_voter {
    raft_id id;
    char address[RT__ADDRESS_MAX + 1];
    struct sockaddr_storage sa;
};

struct rt {
    uv_loop_t *loop;
    struct raft_uv_transport *t;
    struct tracer *tracer;
    char secret[RAFT_TRANSPORT_SECRET_BYTES_MAX + 1];
    struct rt_voter voters[CONTROLLER_VOTERS_MAX];
    size_t n_voters;
    raft_id id;
    char address[RT__ADDRESS_MAX + 1];
    uv_tcp_t listener;
    bool listener_open;
    raft_uv_accept_cb accept_cb;
    struct inbound *inbound;
    struct outbound *outbound;
    size_t n_pending; /* inbound connections in their handshake */
    bool closing;
    bool close_fired;
    raft_uv_transport_close_cb close_cb;
};

/* --- The MAC --------------------------------------------------------------- */

void raft_transport_mac(const char *secret,
                        const uint8_t challenge[RAFT_TRANSPORT_CHALLENGE_BYTES],
                        uint64_t id, const char *address, size_t address_len,
                        uint8_t out[RAFT_TRANSPORT_MAC_BYTES])
{
    uint8_t msg[sizeof RT__CONTEXT - 1 + RAFT_TRANSPORT_CHALLENGE_BYTES + 8 +
                RT__ADDRESS_MAX];
    ASSERT(address_len <= RT__ADDRESS_MAX);
    size_t n = 0;
    memcpy(msg, RT__CONTEXT, sizeof RT__CONTEXT - 1);
    n += sizeof RT__CONTEXT - 1;
    memcpy(msg + n, challenge, RAFT_TRANSPORT_CHALLENGE_BYTES);
    n += RAFT_TRANSPORT_CHALLENGE_BYTES;
    for (int i = 0; i < 8; i++) {
        msg[n++] = (uint8_t)(id >> (8 * i));
    }
    memcpy(msg + n, address, address_len);
    n += address_len;
    unsigned len = 0;
    uint8_t *r = HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, n, out,
                      &len);
    ASSERT(r != NULL && len == RAFT_TRANSPORT_MAC_BYTES);
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static const struct rt_voter *voter(const struct rt *rt, raft_id id)
{
    for (size_t i = 0; i < rt->n_voters; i++) {
        if (rt->voters[i].id == id) {
            return &rt->voters[i];
        }
    }
    return NULL;
}

static void maybe_closed(struct rt *rt)
{
    if (rt->closing && !rt->close_fired && !rt->listener_open &&
        rt->inbound == NULL && rt->outbound == NULL) {
        rt->close_fired = true;
        if (rt->close_cb != NULL) {
            rt->close_cb(rt->t);
        }
    }
}

/* --- Inbound ----------------------------------------------------------- */

enum in_stage {
    IN_HELLO_FIXED, /* magic, id, address length */
    IN_HELLO_REST,  /* address, MAC */
    IN_PREAMBLE,
    IN_HEADER,
    IN_PAYLOAD,
};

struct inbound {
    struct rt *rt;
    struct inbound *prev;
    struct inbound *next;
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_pipe_t pipe;             /* our end; libraft reads the other */
    int handles;                /* open among tcp, timer, pipe */
    bool pipe_open;
    bool closing;
    bool pending;               /* counted in rt->n_pending */
    bool paused;
    uint8_t challenge[RT__CHALLENGE_MSG_BYTES];
    uv_write_t challenge_write;
    enum in_stage stage;
    uint8_t *buf;               /* the hello or the message being read */
    size_t cap;
    size_t have;
    size_t need;
    uint64_t type;
    size_t header_len;
    size_t queued;              /* bytes written to the pipe, not yet done */
    uint8_t drain[RT__DRAIN_BYTES];
};

struct pipe_write {
    uv_write_t req;
    struct inbound *in;
    uint8_t *bytes;
    size_t len;
};

static void in_handle_closed(uv_handle_t *h)
{
    struct inbound *in = h->data;
    if (--in->handles > 0) {
        return;
    }
    struct rt *rt = in->rt;
    if (in->prev != NULL) {
        in->prev->next = in->next;
    } else {
        rt->inbound = in->next;
    }
    if (in->next != NULL) {
        in->next->prev = in->prev;
    }
    free(in->buf);
    free(in);
    maybe_closed(rt);
}

static void in_close(struct inbound *in, const char *why)
{
    if (in->closing) {
        return;
    }
    in->closing = true;
    if (why != NULL) {
        TRACE_WARN(in->rt->tracer, "raft connection closed: %s", why);
    }
    if (in->pending) {
        in->pending = false;
        in->rt->n_pending--;
    }
    uv_close((uv_handle_t *)&in->tcp, in_handle_closed);
    uv_close((uv_handle_t *)&in->timer, in_handle_closed);
    if (in->pipe_open) {
        uv_close((uv_handle_t *)&in->pipe, in_handle_closed);
    }
}

static int in_reserve(struct inbound *in, size_t need)
{
    if (need <= in->cap) {
        return RC_OK;
    }
    uint8_t *p = realloc(in->buf, need);
    if (p == NULL) {
        return RC_NOMEM;
    }
    in->buf = p;
    in->cap = need;
    return RC_OK;
}

static void in_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct inbound *in = h->data;
    (void)suggested;
    ASSERT(in->need > in->have && in->cap >= in->need);
    *b = uv_buf_init((char *)in->buf + in->have,
                     (unsigned)(in->need - in->have));
}

static void in_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void pipe_written(uv_write_t *req, int status)
{
    struct pipe_write *w = (struct pipe_write *)(void *)req;
    struct inbound *in = w->in;
    in->queued -= w->len;
    free(w->bytes);
    free(w);
    if (status < 0) {
        in_close(in, NULL); /* libraft closed its end */
        return;
    }
    if (in->paused && !in->closing &&
        in->queued <= RAFT_TRANSPORT_QUEUE_BYTES_MAX / 2) {
        in->paused = false;
        if (uv_read_start((uv_stream_t *)&in->tcp, in_alloc, in_read) != 0) {
            in_close(in, "cannot read");
        }
    }
}

/* A whole checked message in in->buf: to libraft. */
static int forward(struct inbound *in)
{
    struct pipe_write *w = malloc(sizeof *w);
    if (w == NULL) {
        return RC_NOMEM;
    }
    w->in = in;
    w->bytes = in->buf;
    w->len = in->have;
    in->buf = NULL;
    in->cap = 0;
    in->have = 0;
    uv_buf_t b = uv_buf_init((char *)w->bytes, (unsigned)w->len);
    if (uv_write(&w->req, (uv_stream_t *)&in->pipe, &b, 1, pipe_written) !=
        0) {
        free(w->bytes);
        free(w);
        return RC_IO;
    }
    in->queued += w->len;
    if (in->queued > RAFT_TRANSPORT_QUEUE_BYTES_MAX) {
        in->paused = true;
        uv_read_stop((uv_stream_t *)&in->tcp);
    }
    return RC_OK;
}

static void pipe_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct inbound *in = h->data;
    (void)suggested;
    *b = uv_buf_init((char *)in->drain, sizeof in->drain);
}

static void pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    (void)b;
    if (n < 0) {
        in_close(s->data, NULL); /* libraft closed its end */
    }
}

/* The hello checked out: libraft gets the other end of a socketpair. */
static int hand_over(struct inbound *in, raft_id id, const char *address)
{
    struct rt *rt = in->rt;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return RC_IO;
    }
    uv_pipe_t *theirs = raft_malloc(sizeof *theirs);
    int rv = uv_pipe_init(rt->loop, &in->pipe, 0);
    ASSERT(rv == 0);
    in->pipe.data = in;
    in->pipe_open = true;
    in->handles++;
    if (theirs == NULL || uv_pipe_open(&in->pipe, fds[0]) != 0) {
        raft_free(theirs);
        close(fds[0]);
        close(fds[1]);
        return RC_IO;
    }
    rv = uv_pipe_init(rt->loop, theirs, 0);
    ASSERT(rv == 0);
    if (uv_pipe_open(theirs, fds[1]) != 0) {
        close(fds[1]);
        uv_close((uv_handle_t *)theirs, (uv_close_cb)raft_free);
        return RC_IO;
    }
    if (uv_read_start((uv_stream_t *)&in->pipe, pipe_alloc, pipe_read) !=
        0) {
        uv_close((uv_handle_t *)theirs, (uv_close_cb)raft_free);
        return RC_IO;
    }
    uv_timer_stop(&in->timer);
    in->pending = false;
    rt->n_pending--;
    rt->accept_cb(rt->t, id, address, (uv_stream_t *)theirs);
    return RC_OK;
}

/* The whole hello in in->buf: a voter that holds the secret gets its
 * connection handed to libraft, which reads messages from then on. */
static const char *in_hello(struct inbound *in)
{
    struct rt *rt = in->rt;
    const uint8_t *p = in->buf;
    raft_id id = get_le64(p + 8);
    size_t len = (size_t)get_le64(p + 16);
    char address[RT__ADDRESS_MAX + 1];
    memcpy(address, p + RT__HELLO_FIXED, len);
    address[len] = '\0';
    const struct rt_voter *v = voter(rt, id);
    uint8_t mac[RAFT_TRANSPORT_MAC_BYTES];
    raft_transport_mac(rt->secret, in->challenge + RT__MAGIC_BYTES, id,
                       address, len, mac);
    if (CRYPTO_memcmp(mac, p + RT__HELLO_FIXED + len, sizeof mac) != 0) {
        return "wrong MAC (not a holder of the Raft secret)";
    }
    if (v == NULL || strlen(address) != len ||
        strcmp(v->address, address) != 0) {
        return "not a configured voter";
    }
    if (hand_over(in, id, v->address) != RC_OK) {
        return "cannot hand the connection to Raft";
    }
    in->stage = IN_PREAMBLE;
    in->have = 0;
    in->need = RAFT_GUARD_PREAMBLE_BYTES;
    return in_reserve(in, in->need) == RC_OK ? NULL : "out of memory";
}

/* in->buf holds what in->stage waited for: check it, move on. */
static const char *in_step(struct inbound *in)
{
    const uint8_t *p = in->buf;
    switch (in->stage) {
    case IN_HELLO_FIXED: {
        uint64_t len = get_le64(p + 16);
        if (memcmp(p, RT__MAGIC, RT__MAGIC_BYTES) != 0 || len == 0 ||
            len > RT__ADDRESS_MAX) {
            return "malformed hello";
        }
        in->stage = IN_HELLO_REST;
        in->need = RT__HELLO_FIXED + (size_t)len + RAFT_TRANSPORT_MAC_BYTES;
        return in_reserve(in, in->need) == RC_OK ? NULL : "out of memory";
    }
    case IN_HELLO_REST:
        return in_hello(in);
    case IN_PREAMBLE:
        if (raft_guard_preamble(p, &in->type, &in->header_len) != RC_OK) {
            return "malformed message preamble";
        }
        in->stage = IN_HEADER;
        in->need = RAFT_GUARD_PREAMBLE_BYTES + in->header_len;
        return in_reserve(in, in->need) == RC_OK ? NULL : "out of memory";
    case IN_HEADER: {
        size_t payload = 0;
        if (raft_guard_header(in->type, p + RAFT_GUARD_PREAMBLE_BYTES,
                              in->header_len, &payload) != RC_OK) {
            return "malformed message header";
        }
        if (payload > 0) {
            in->stage = IN_PAYLOAD;
            in->need += payload;
            return in_reserve(in, in->need) == RC_OK ? NULL : "out of memory";
        }
        break;
    }
    case IN_PAYLOAD: {
        size_t at = RAFT_GUARD_PREAMBLE_BYTES + in->header_len;
        if (in->type == RAFT_GUARD_APPEND_ENTRIES &&
            raft_guard_entries(p + RAFT_GUARD_PREAMBLE_BYTES, in->header_len,
                               p + at, in->have - at) != RC_OK) {
            return "malformed entries";
        }
        break;
    }
    }
    /* A whole message. */
    if (forward(in) != RC_OK) {
        return "cannot pass a message to Raft";
    }
    in->stage = IN_PREAMBLE;
    in->need = RAFT_GUARD_PREAMBLE_BYTES;
    return in_reserve(in, in->need) == RC_OK ? NULL : "out of memory";
}

static void in_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct inbound *in = s->data;
    (void)b;
    if (n < 0) {
        in_close(in, NULL);
        return;
    }
    in->have += (size_t)n;
    while (!in->closing && in->have == in->need) {
        const char *why = in_step(in);
        if (why != NULL) {
            in_close(in, why);
            return;
        }
        if (in->paused) {
            return;
        }
    }
}

static void in_timeout(uv_timer_t *t)
{
    in_close(t->data, "no handshake in time");
}

static void challenge_written(uv_write_t *req, int status)
{
    if (status < 0) {
        in_close(req->data, NULL);
    }
}

static void rt_accept(uv_stream_t *server, int status)
{
    struct rt *rt = server->data;
    if (status < 0 || rt->closing) {
        return;
    }
    struct inbound *in = calloc(1, sizeof *in);
    if (in == NULL) {
        return; /* the connection waits in the backlog */
    }
    in->rt = rt;
    int rv = uv_tcp_init(rt->loop, &in->tcp);
    ASSERT(rv == 0);
    in->tcp.data = in;
    rv = uv_timer_init(rt->loop, &in->timer);
    ASSERT(rv == 0);
    in->timer.data = in;
    in->handles = 2;
    in->next = rt->inbound;
    if (rt->inbound != NULL) {
        rt->inbound->prev = in;
    }
    rt->inbound = in;
    in->pending = true;
    rt->n_pending++;
    if (uv_accept(server, (uv_stream_t *)&in->tcp) != 0) {
        in_close(in, NULL);
        return;
    }
    if (rt->n_pending > RAFT_TRANSPORT_PENDING_MAX) {
        /* The oldest waiting handshake goes (new ones are at the head):
         * idle strangers cannot keep a voter out, who needs one round
         * trip to finish its handshake. */
        struct inbound *oldest = NULL;
        for (struct inbound *i = in->next; i != NULL; i = i->next) {
            if (i->pending) {
                oldest = i;
            }
        }
        ASSERT(oldest != NULL);
        in_close(oldest, "too many connections in their handshake");
    }
    memcpy(in->challenge, RT__MAGIC, RT__MAGIC_BYTES);
    if (getrandom(in->challenge + RT__MAGIC_BYTES,
                  RAFT_TRANSPORT_CHALLENGE_BYTES, 0) !=
            RAFT_TRANSPORT_CHALLENGE_BYTES ||
        in_reserve(in, RT__HELLO_FIXED) != RC_OK) {
        in_close(in, "cannot start a handshake");
        return;
    }
    in->stage = IN_HELLO_FIXED;
    in->need = RT__HELLO_FIXED;
    in->challenge_write.data = in;
    uv_buf_t b = uv_buf_init((char *)in->challenge, sizeof in->challenge);
    if (uv_timer_start(&in->timer, in_timeout, RAFT_TRANSPORT_HANDSHAKE_MS,
                       0) != 0 ||
        uv_write(&in->challenge_write, (uv_stream_t *)&in->tcp, &b, 1,
                 challenge_written) != 0 ||
        uv_read_start((uv_stream_t *)&in->tcp, in_alloc, in_read) != 0) {
        in_close(in, "cannot start a handshake");
    }
}

/* --- Outbound ------------------------------------------------------------ */

struct outbound {
    struct rt *rt;
    struct outbound *prev;
    struct outbound *next;
    struct raft_uv_connect *req;
    uv_tcp_t *tcp;      /* raft_malloc'd: libraft takes it on success */
    uv_timer_t timer;
    uv_connect_t connect;
    uv_write_t write;
    int handles;
    int status;         /* 0 until it fails */
    bool done;
    uint8_t got[RT__CHALLENGE_MSG_BYTES];
    size_t have;
    uint8_t hello[RT__HELLO_FIXED + RT__ADDRESS_MAX + RAFT_TRANSPORT_MAC_BYTES];
};

static void out_handle_closed(uv_handle_t *h)
{
    struct outbound *o = h->data;
    if (h != (uv_handle_t *)&o->timer) {
        raft_free(h); /* the TCP handle, never handed over */
    }
    if (--o->handles > 0) {
        return;
    }
    struct rt *rt = o->rt;
    if (o->prev != NULL) {
        o->prev->next = o->next;
    } else {
        rt->outbound = o->next;
    }
    if (o->next != NULL) {
        o->next->prev = o->prev;
    }
    if (o->status != 0) {
        o->req->cb(o->req, NULL, o->status);
    }
    free(o);
    maybe_closed(rt);
}

/* Fails the connect with status once its handles are closed. */
static void out_fail(struct outbound *o, int status)
{
    if (o->done) {
        return;
    }
    o->done = true;
    o->status = status;
    uv_close((uv_handle_t *)o->tcp, out_handle_closed);
    uv_close((uv_handle_t *)&o->timer, out_handle_closed);
}

static void out_written(uv_write_t *req, int status)
{
    struct outbound *o = req->data;
    if (o->done) {
        return;
    }
    if (status < 0 || o->rt->closing) {
        out_fail(o, o->rt->closing ? RAFT_CANCELED : RAFT_NOCONNECTION);
        return;
    }
    o->done = true;
    uv_stream_t *s = (uv_stream_t *)o->tcp;
    o->tcp = NULL;
    s->data = NULL;
    o->handles = 1; /* the timer; the TCP handle is libraft's now */
    uv_close((uv_handle_t *)&o->timer, out_handle_closed);
    o->req->cb(o->req, s, 0);
}

static void out_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct outbound *o = h->data;
    (void)suggested;
    *b = uv_buf_init((char *)o->got + o->have,
                     (unsigned)(sizeof o->got - o->have));
}

static void out_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct outbound *o = s->data;
    struct rt *rt = o->rt;
    (void)b;
    if (o->done) {
        return;
    }
    if (n < 0) {
        out_fail(o, RAFT_NOCONNECTION);
        return;
    }
    o->have += (size_t)n;
    if (o->have < sizeof o->got) {
        return;
    }
    uv_read_stop(s);
    if (memcmp(o->got, RT__MAGIC, RT__MAGIC_BYTES) != 0) {
        TRACE_WARN(rt->tracer, "raft peer sent no Cairn handshake");
        out_fail(o, RAFT_NOCONNECTION);
        return;
    }
    size_t len = strlen(rt->address);
    memcpy(o->hello, RT__MAGIC, RT__MAGIC_BYTES);
    put_le64(o->hello + 8, rt->id);
    put_le64(o->hello + 16, len);
    memcpy(o->hello + RT__HELLO_FIXED, rt->address, len);
    raft_transport_mac(rt->secret, o->got + RT__MAGIC_BYTES, rt->id,
                       rt->address, len, o->hello + RT__HELLO_FIXED + len);
    uv_buf_t hb = uv_buf_init((char *)o->hello,
                              (unsigned)(RT__HELLO_FIXED + len +
                                         RAFT_TRANSPORT_MAC_BYTES));
    o->write.data = o;
    if (uv_write(&o->write, s, &hb, 1, out_written) != 0) {
        out_fail(o, RAFT_NOCONNECTION);
    }
}

static void out_connected(uv_connect_t *req, int status)
{
    struct outbound *o = req->data;
    if (o->done) {
        return;
    }
    if (status < 0 || o->rt->closing) {
        out_fail(o, o->rt->closing ? RAFT_CANCELED : RAFT_NOCONNECTION);
        return;
    }
    (void)uv_tcp_nodelay(o->tcp, 1);
    if (uv_read_start((uv_stream_t *)o->tcp, out_alloc, out_read) != 0) {
        out_fail(o, RAFT_NOCONNECTION);
    }
}

static void out_timeout(uv_timer_t *t)
{
    out_fail(t->data, RAFT_NOCONNECTION);
}

static int rt_connect(struct raft_uv_transport *t, struct raft_uv_connect *req,
                      raft_id id, const char *address, raft_uv_connect_cb cb)
{
    struct rt *rt = t->impl;
    (void)address; /* the configured voter's, resolved at start-up */
    const struct rt_voter *v = voter(rt, id);
    if (v == NULL || rt->closing) {
        return RAFT_NOCONNECTION;
    }
    struct outbound *o = calloc(1, sizeof *o);
    uv_tcp_t *tcp = raft_malloc(sizeof *tcp);
    if (o == NULL || tcp == NULL) {
        free(o);
        raft_free(tcp);
        return RAFT_NOMEM;
    }
    req->cb = cb;
    o->rt = rt;
    o->req = req;
    o->tcp = tcp;
    int rv = uv_tcp_init(rt->loop, tcp);
    ASSERT(rv == 0);
    tcp->data = o;
    rv = uv_timer_init(rt->loop, &o->timer);
    ASSERT(rv == 0);
    o->timer.data = o;
    o->handles = 2;
    o->connect.data = o;
    o->next = rt->outbound;
    if (rt->outbound != NULL) {
        rt->outbound->prev = o;
    }
    rt->outbound = o;
    if (uv_tcp_connect(&o->connect, tcp, (const struct sockaddr *)&v->sa,
                       out_connected) != 0 ||
        uv_timer_start(&o->timer, out_timeout, RAFT_TRANSPORT_HANDSHAKE_MS,
                       0) != 0) {
        out_fail(o, RAFT_NOCONNECTION); /* reported through cb */
    }
    return 0;
}

/* --- The transport --------------------------------------------------------- */

static int rt_init(struct raft_uv_transport *t, raft_id id,
                   const char *address)
{
    struct rt *rt = t->impl;
    if (strlen(address) > RT__ADDRESS_MAX) {
        return RAFT_INVALID;
    }
    rt->id = id;
    strcpy(rt->address, address);
    return 0;
}

static int rt_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    struct rt *rt = t->impl;
    const struct rt_voter *me = voter(rt, rt->id);
    if (me == NULL) {
        return RAFT_INVALID;
    }
    struct addr a;
    if (addr_parse(me->address, strlen(me->address), &a) != RC_OK) {
        return RAFT_INVALID;
    }
    int rv = uv_tcp_init(rt->loop, &rt->listener);
    ASSERT(rv == 0);
    rt->listener.data = rt;
    rt->listener_open = true;
    rt->accept_cb = cb;
    int port = 0;
    if (net_listen(&rt->listener, rt->loop, a.host, a.port, RT__BACKLOG,
                   rt_accept, &port, rt->tracer) != RC_OK) {
        return RAFT_IOERR;
    }
    return 0;
}

static void listener_closed(uv_handle_t *h)
{
    struct rt *rt = h->data;
    rt->listener_open = false;
    maybe_closed(rt);
}

static void rt_close(struct raft_uv_transport *t,
                     raft_uv_transport_close_cb cb)
{
    struct rt *rt = t->impl;
    rt->closing = true;
    rt->close_cb = cb;
    if (rt->listener_open) {
        uv_close((uv_handle_t *)&rt->listener, listener_closed);
    }
    for (struct inbound *in = rt->inbound; in != NULL; in = in->next) {
        in_close(in, NULL);
    }
    for (struct outbound *o = rt->outbound; o != NULL; o = o->next) {
        out_fail(o, RAFT_CANCELED);
    }
    maybe_closed(rt);
}

int raft_transport_init(struct raft_uv_transport *t, uv_loop_t *loop,
                        const struct raft_transport_config *cfg,
                        struct tracer *tracer)
{
    size_t len = cfg->secret != NULL ? strlen(cfg->secret) : 0;
    if (len < RAFT_TRANSPORT_SECRET_BYTES_MIN ||
        len > RAFT_TRANSPORT_SECRET_BYTES_MAX ||
        cfg->n_voters > CONTROLLER_VOTERS_MAX) {
        return RC_CONFIG;
    }
    struct rt *rt = calloc(1, sizeof *rt);
    if (rt == NULL) {
        return RC_NOMEM;
    }
    rt->loop = loop;
    rt->t = t;
    rt->tracer = tracer;
    memcpy(rt->secret, cfg->secret, len + 1);
    for (size_t i = 0; i < cfg->n_voters; i++) {
        struct rt_voter *v = &rt->voters[rt->n_voters++];
        v->id = (raft_id)cfg->voters[i].id;
        addr_format(&cfg->voters[i].addr, v->address, sizeof v->address);
        if (net_sockaddr_resolve(loop, cfg->voters[i].addr.host,
                                 cfg->voters[i].addr.port, &v->sa) != RC_OK) {
            free(rt);
            return RC_CONFIG;
        }
    }
    memset(t, 0, sizeof *t);
    t->impl = rt;
    t->init = rt_init;
    t->listen = rt_listen;
    t->connect = rt_connect;
    t->close = rt_close;
    return RC_OK;
}

void raft_transport_free(struct raft_uv_transport *t)
{
    struct rt *rt = t->impl;
    if (rt == NULL) {
        return;
    }
    ASSERT(rt->inbound == NULL && rt->outbound == NULL && !rt->listener_open);
    OPENSSL_cleanse(rt->secret, sizeof rt->secret);
    free(rt);
    t->impl = NULL;
}
