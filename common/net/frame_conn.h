/* Framed TCP connections on libuv, written once for the Kafka listener
 * (broker/kafka/kafka_server.c), the RPC transport (common/net/rpc.c) and
 * the follower's fetchers (broker/replication/follower.c). Every frame on
 * the wire is
 *
 *     0       4
 *     +-------+---------------------+
 *     | N     | N bytes of frame    |
 *     +-------+---------------------+
 *     big-endian u32, min <= N <= max (per connection)
 *
 * and what a frame means is the user's business. A connection is accepted
 * by a struct frame_listener or made outward with frame_conn_connect().
 *
 * Reading. N is checked against the bounds as soon as its 4 bytes are in,
 * before anything is allocated for the frame; outside them the connection
 * is closed (RC_MALFORMED, logged at WARN with the peer's address). Small
 * frames are parsed out of a fixed read buffer; a frame cut by the end of
 * a read is assembled in its own buffer, allocated up to prealloc_bytes
 * at once and doubling up to N as bytes arrive, read straight into with
 * reads of at least read_bytes (so a large produce or fetch frame costs a
 * few large reads, not many small copies). Frames are either borrowed for
 * the frame callback (delivered in place when they lie whole in the read
 * buffer) or owned: each frame is one allocation, `headroom` bytes for
 * the user's own struct followed by the frame, handed over to the user.
 *
 * Writing. frame_conn_write() hands buffers to uv_write; their bytes count
 * in the connection's outbox until the write callback, as do bytes the
 * user holds for the connection and charges with frame_conn_outbox_add().
 * Above outbox_bytes_max the connection either stops reading until the
 * outbox drains below half (FRAME_CONN_FULL_PAUSE), or refuses the write
 * and closes (FRAME_CONN_FULL_CLOSE). A user may add bounds of its own
 * (hold_cb). Reading stops only at frame boundaries of bytes already
 * read: the rest waits in the read buffer until reading resumes.
 *
 * Lifetime. A connection counts references: one for its libuv handles
 * plus one per frame_conn_ref(). frame_conn_close() starts closing; once
 * the handles have closed (every write callback has run by then) closed_cb
 * runs and the handles' reference drops; at zero free_cb runs and the
 * connection's memory is freed. So a user may hold a connection past its
 * close (late answers see frame_conn_is_open() false and are dropped);
 * handles are freed only in close callbacks, and the loop must run after
 * a close before uv_loop_close().
 *
 * Loop thread only: every function and callback runs on the thread that
 * runs the connection's loop. Nothing here knows any protocol above the
 * size prefix. */
#ifndef CAIRN_COMMON_NET_FRAME_CONN_H
#define CAIRN_COMMON_NET_FRAME_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/assert.h"
#include "common/trace.h"

struct frame_conn;
struct frame_listener;

/* What a write beyond outbox_bytes_max does. */
enum frame_conn_full {
    FRAME_CONN_FULL_PAUSE, /* stop reading; resume below half */
    FRAME_CONN_FULL_CLOSE  /* the write fails with RC_FULL and closes */
};

struct frame_conn_config {
    uint32_t frame_bytes_min;   /* N below: close */
    uint32_t frame_bytes_max;   /* N above: close, nothing allocated */
    size_t read_buffer_bytes;   /* the fixed read buffer, > 4 */
    size_t prealloc_bytes;      /* first allocation of a cut frame */
    size_t read_bytes;          /* a cut frame grows by at least this */
    size_t keep_bytes;          /* borrowed: keep a frame buffer this big */
    size_t headroom;            /* owned: bytes before each frame */
    bool frames_owned;          /* frames handed over, see frame_cb */
    size_t outbox_bytes_max;
    enum frame_conn_full full;
    const char *size_name;      /* "frame size" in log lines */
};

/* A whole frame of len bytes. Borrowed (!frames_owned): block is NULL and
 * frame valid for the call only. Owned: block is one malloc'd allocation,
 * `headroom` bytes then the frame at frame; the callee takes ownership of
 * block (free() it). The connection may be closed from inside. */
typedef void (*frame_conn_frame_cb)(struct frame_conn *c, void *block,
                                    uint8_t *frame, size_t len);
/* An outward connection is established (reading has started). */
typedef void (*frame_conn_connected_cb)(struct frame_conn *c);
/* The handles have closed with rc (the first frame_conn_close() reason,
 * or the layer's: RC_MALFORMED bad frame, RC_CLOSED the peer closed,
 * RC_IO a read, write or connect error, RC_TIMEOUT connect timeout,
 * RC_FULL outbox, RC_NOMEM). No frame, connected or write callback runs
 * after it. The user gives back what it charged with outbox_add here. */
typedef void (*frame_conn_closed_cb)(struct frame_conn *c, int rc);
/* The last reference is gone; the connection is freed after this. */
typedef void (*frame_conn_free_cb)(struct frame_conn *c);
/* The user's own read bounds: true keeps reading stopped. paused says
 * whether it is stopped now, so a user can resume below a lower mark
 * than it stops at. Called at frame boundaries and in frame_conn_flow(). */
typedef bool (*frame_conn_hold_cb)(struct frame_conn *c, bool paused);

/* Every callback but frame may be NULL. */
struct frame_conn_cbs {
    frame_conn_frame_cb frame;
    frame_conn_connected_cb connected;
    frame_conn_closed_cb closed;
    frame_conn_free_cb free;
    frame_conn_hold_cb hold;
};

/* Attaches the user's callbacks and data; before this no callback runs.
 * Accepted connections are attached in the listener's accept callback,
 * outward ones by frame_conn_connect(). */
void frame_conn_attach(struct frame_conn *c, const struct frame_conn_cbs *cbs,
                       void *data);
void *frame_conn_data(const struct frame_conn *c);

/* Connects to addr (peer names it in log lines), TCP_NODELAY, reading as
 * soon as connected, then connected_cb. timeout_ms 0 waits for the
 * kernel; otherwise the connect fails with RC_TIMEOUT after it. On RC_OK
 * the connection ends through closed_cb like any other; on any other
 * return (RC_IO: the connect could not start; RC_NOMEM) nothing was made
 * and no callback runs. */
MUST_CHECK int frame_conn_connect(struct frame_conn **out, uv_loop_t *loop,
                                  const struct sockaddr *addr,
                                  const char *peer,
                                  const struct frame_conn_config *cfg,
                                  const struct frame_conn_cbs *cbs,
                                  void *data, uint64_t timeout_ms,
                                  struct tracer *t);

/* One write: embed it in the struct that owns the written bytes, which
 * must stay put until cb. Filled by frame_conn_write(). */
struct frame_conn_write;
typedef void (*frame_conn_write_cb)(struct frame_conn_write *w, int status);
struct frame_conn_write {
    uv_write_t req;
    struct frame_conn *conn;
    size_t bytes;
    frame_conn_write_cb cb;
};

/* Writes bufs (borrowed until cb) after everything written before. On
 * RC_OK cb runs exactly once with 0 or a libuv error (UV_ECANCELED when
 * the connection closed first; a failed write closes it with RC_IO). On
 * any other return cb never runs: RC_CLOSED (closing), RC_FULL (the
 * FRAME_CONN_FULL_CLOSE bound: closed, logged), RC_IO (uv_write failed:
 * closed, logged). */
MUST_CHECK int frame_conn_write(struct frame_conn *c,
                                struct frame_conn_write *w,
                                const uv_buf_t *bufs, unsigned n_bufs,
                                frame_conn_write_cb cb);

/* Bytes the user holds for the connection outside libuv (answers waiting
 * their turn, unsent frames, file spans), counted in the outbox; done
 * takes them out again. Neither checks a bound nor changes reading: the
 * user calls frame_conn_flow() once it is done changing things. */
void frame_conn_outbox_add(struct frame_conn *c, size_t bytes);
void frame_conn_outbox_done(struct frame_conn *c, size_t bytes);
size_t frame_conn_outbox_bytes(const struct frame_conn *c);

/* Applies the bounds: stops reading above them; below (half the outbox
 * bound, and hold_cb false), parses what waited, then reads again. Runs by
 * itself after reads and write callbacks; users call it after their own
 * bounds moved. A no-op while closing or inside a frame callback. */
void frame_conn_flow(struct frame_conn *c);

/* Starts closing with rc (the first call's rc wins; later calls do
 * nothing). Nothing more is read; writes return RC_CLOSED. */
void frame_conn_close(struct frame_conn *c, int rc);
void frame_conn_ref(struct frame_conn *c);
void frame_conn_unref(struct frame_conn *c);

/* False once closing. */
bool frame_conn_is_open(const struct frame_conn *c);
/* False while closing, connecting, or a bound has stopped reading. */
bool frame_conn_reading(const struct frame_conn *c);
/* "ip:port" of the peer ("?" if unknown); valid while c is. */
const char *frame_conn_peer(const struct frame_conn *c);
/* Bytes libuv holds not yet handed to the kernel. */
size_t frame_conn_write_queue_bytes(const struct frame_conn *c);
/* The socket's fd (for sendfile(2)); RC_CLOSED when there is none. */
MUST_CHECK int frame_conn_fileno(const struct frame_conn *c, int *fd_out);
/* Bytes allocated for the frame being assembled (0 between frames). */
size_t frame_conn_frame_buffer_bytes(const struct frame_conn *c);

/* --- Listener ------------------------------------------------------------ */

struct frame_listener_config {
    const char *host;        /* numeric, or a name resolved once, blocking */
    int port;                /* 0 picks a free one: frame_listener_port() */
    int backlog;
    size_t conns_max;        /* at the bound, see evict_idle_ms */
    /* At conns_max a new connection closes the one quiet the longest, if
     * it has been quiet this long (0: the new one is closed instead). A
     * quiet connection has no frame handed out unanswered and nothing to
     * send. */
    uint64_t evict_idle_ms;
    uint64_t idle_ms;        /* quiet this long: closed (0: never) */
    size_t per_ip_max;       /* from one address (0: no bound) */
    struct frame_conn_config conn;
};

/* A connection was accepted (TCP_NODELAY set, peer known). Attach it and
 * return RC_OK; reading starts after. Any other rc closes it at once. */
typedef int (*frame_listener_accept_cb)(void *arg, struct frame_conn *c);
/* The listener's handle has closed and its memory is gone. */
typedef void (*frame_listener_closed_cb)(void *arg);

struct frame_listener_stats {
    uint64_t conns_open;     /* open right now (a gauge) */
    uint64_t conns_accepted; /* including those refused at the bound */
    uint64_t conns_refused;  /* closed at once: a bound was reached */
    uint64_t conns_evicted;  /* closed to admit a new one at conns_max */
    uint64_t conns_idle_closed; /* closed after idle_ms */
    uint64_t reads_paused;   /* times a bound stopped reading */
};

/* Binds and listens. RC_INVALID for a bad address or port, RC_IO when
 * bind or listen fails (logged; the half-made listener frees itself as
 * the loop runs, with no callback), RC_NOMEM. */
MUST_CHECK int frame_listener_start(struct frame_listener **out,
                                    uv_loop_t *loop,
                                    const struct frame_listener_config *cfg,
                                    frame_listener_accept_cb cb, void *arg,
                                    struct tracer *t);
int frame_listener_port(const struct frame_listener *l);
/* Closes every open connection (RC_CLOSED) and the listener; cb (may be
 * NULL) runs once the listener is freed. Connections still referenced
 * live on, closed, until their last unref. */
void frame_listener_close(struct frame_listener *l,
                          frame_listener_closed_cb cb);
void frame_listener_get_stats(const struct frame_listener *l,
                              struct frame_listener_stats *out);

/* frame_conn_flow() on every open connection, for a user bound shared by
 * all of them that has just been relieved. A frame callback may answer,
 * and so close or free, other connections meanwhile. */
void frame_listener_flow_all(struct frame_listener *l);

#endif
