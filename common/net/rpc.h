/* Framed request/response transport over libuv TCP: controllers run an
 * rpc_server, brokers and the CLI an rpc_client. Payloads are opaque bytes
 * (callers put protobuf in them). Every frame on the wire is
 *
 *     0       4                  12                   4 + N
 *     +-------+------------------+--------------------+
 *     | N     | correlation id   | payload (N - 8)    |
 *     +-------+------------------+--------------------+
 *     big-endian u32, u64; 8 <= N <= RPC_FRAME_BYTES_MAX
 *
 * A response carries its request's correlation id. A peer that sends a
 * length outside the bounds, or that lets a connection's outbox grow past
 * RPC_CONN_OUTBOX_BYTES_MAX, is disconnected (logged at WARN with its
 * address); nothing is ever allocated from an unchecked peer length.
 *
 * Ownership: payload pointers passed in are borrowed for the call (they
 * are copied); payload pointers passed to callbacks are borrowed for the
 * callback. Servers, clients and connections are freed by libuv close
 * callbacks, so the loop must run after rpc_server_close() and
 * rpc_client_close() before uv_loop_close().
 *
 * Loop thread only: every function and callback runs on the thread that
 * runs the loop given at creation. */
#ifndef CAIRN_COMMON_RPC_H
#define CAIRN_COMMON_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/assert.h"
#include "common/trace.h"

struct rpc_server;
struct rpc_client;
struct rpc_conn; /* one accepted connection of a server */

/* --- Server ------------------------------------------------------------- */

/* A request arrived on conn. payload is borrowed for the call. conn stays
 * valid for the call; to reply after returning (say, after a Raft commit),
 * take rpc_conn_ref() now and rpc_conn_unref() once done. */
typedef void (*rpc_request_cb)(void *arg, struct rpc_conn *conn,
                               uint64_t correlation_id,
                               const uint8_t *payload, size_t len);

/* Listens on host:port (a numeric address or a name, resolved once,
 * blocking; port 0 picks a free port, see rpc_server_port()). t may be
 * NULL (silent). RC_INVALID for a bad address or port, RC_IO when binding
 * or listening fails (the half-made server is then freed when the loop
 * runs), RC_NOMEM. */
MUST_CHECK int rpc_server_start(struct rpc_server **out, uv_loop_t *loop,
                                const char *host, int port,
                                rpc_request_cb cb, void *arg,
                                struct tracer *t);

/* The port actually bound. */
int rpc_server_port(const struct rpc_server *s);

/* Closes the listener and every connection (call once); no request
 * callback runs after this returns. Memory is freed as the loop runs the close
 * callbacks. Connections still referenced stay allocated (closed) until
 * their last rpc_conn_unref(). */
void rpc_server_close(struct rpc_server *s);

/* Queues one response frame (copies payload). RC_CLOSED if the connection
 * is gone (harmless; drop the reply), RC_TOO_LARGE if the payload exceeds
 * RPC_FRAME_BYTES_MAX - 8, RC_FULL if the outbox bound would be exceeded
 * (the connection is then closed), RC_IO if the write could not start (the
 * connection is then closed), RC_NOMEM. */
MUST_CHECK int rpc_reply(struct rpc_conn *conn, uint64_t correlation_id,
                         const uint8_t *payload, size_t len);

/* Keeps conn's memory alive past the request callback. Every ref needs
 * one unref; the last one (after the connection closed) frees it. */
void rpc_conn_ref(struct rpc_conn *conn);
void rpc_conn_unref(struct rpc_conn *conn);

/* False once the connection is closed or closing; replies then return
 * RC_CLOSED, so a handler may skip work nobody will read. */
bool rpc_conn_is_open(const struct rpc_conn *conn);

/* The peer's "ip:port", for log lines. Valid while conn is. */
const char *rpc_conn_peer(const struct rpc_conn *conn);

/* --- Client ------------------------------------------------------------- */

/* A call completed: exactly once per call accepted by rpc_client_call(),
 * always from the loop (never from inside an rpc_* function). rc is
 *   RC_OK        payload/len are the response, borrowed for the call;
 *   RC_TIMEOUT   no response within timeout_ms (a late one is dropped);
 *   RC_IO        connecting, reading or writing failed;
 *   RC_CLOSED    the server closed the connection, or rpc_client_close();
 *   RC_MALFORMED the server sent a bad frame (connection closed);
 *   RC_NOMEM     no memory for the response.
 * On error payload is NULL and len 0. Every call in flight on a connection
 * that fails gets the error. The callback may make new calls or close the
 * client. */
typedef void (*rpc_response_cb)(void *arg, int rc, const uint8_t *payload,
                                size_t len);

/* A client for n_addrs addresses "host:port" ("[v6]:port" too), resolved
 * once here (blocking, for names). Nothing connects until the first call.
 * RC_INVALID for a bad address or n_addrs outside
 * [1, RPC_CLIENT_TARGETS_MAX], RC_NOMEM. */
MUST_CHECK int rpc_client_init(struct rpc_client **out, uv_loop_t *loop,
                               const char *const *addrs, size_t n_addrs,
                               struct tracer *t);

/* Sends payload (copied) to addrs[target], or with target -1 to the
 * current target: the last one named, initially 0. Connects lazily (one
 * TCP connection per target, TCP_NODELAY); calls to one target are
 * written in call order. On RC_OK, cb runs exactly once later. On any
 * other return cb never runs: RC_INVALID (bad target or timeout_ms 0),
 * RC_TOO_LARGE (payload over RPC_FRAME_BYTES_MAX - 8), RC_FULL
 * (RPC_INFLIGHT_MAX calls in flight, or the connection's outbox is full),
 * RC_CLOSED (client closing), RC_IO (the connect could not start),
 * RC_NOMEM. Failover is the caller's: on an error, call another target. */
MUST_CHECK int rpc_client_call(struct rpc_client *c, int target,
                               const uint8_t *payload, size_t len,
                               uint64_t timeout_ms, rpc_response_cb cb,
                               void *arg);

/* How many addresses the client was given. */
int rpc_client_n_targets(const struct rpc_client *c);

/* Closes every connection (call once). Pending calls fail with RC_CLOSED (or the
 * error their connection had already failed with); their callbacks run
 * from the loop after this returns, never inside it, so keep their args
 * alive until the loop has run. New calls return RC_CLOSED. Memory is
 * freed by close callbacks once they have all run. */
void rpc_client_close(struct rpc_client *c);

#endif
