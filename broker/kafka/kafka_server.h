/* The Kafka listener: TCP on libuv, size-prefixed frames (a 4-byte
 * big-endian length, at most REQUEST_BYTES_MAX, checked before any
 * allocation), request header v1 parsed here (api_key, api_version,
 * correlation_id, client_id), the body handed to one callback. Responses
 * leave in request order on each connection, whatever order the handlers
 * answer in (Kafka clients rely on it), each as the 4-byte length, the
 * correlation id (response header v0) and the body. A body may splice in
 * file spans (fetched record batches), which are sent with sendfile(2)
 * straight from the segment file when the socket's write queue is empty,
 * and copied otherwise.
 *
 * A frame that cannot be parsed (short header, bad lengths) closes the
 * connection; unknown keys and versions are the handler's call (Kafka
 * answers ApiVersions with UNSUPPORTED_VERSION and closes for the rest).
 * Each connection's queued response bytes are bounded by
 * CONN_OUTBOX_BYTES_MAX: above it the connection stops reading until the
 * queue drains. Loop thread only. */
#ifndef CAIRN_BROKER_KAFKA_SERVER_H
#define CAIRN_BROKER_KAFKA_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log/log.h"
#include "common/assert.h"
#include "common/net/http_metrics.h"
#include "common/slice.h"
#include "common/trace.h"
#include "common/writer.h"

struct kafka_server;
struct kafka_conn;

/* One parsed request, valid until it is answered (kafka_reply,
 * kafka_no_reply or kafka_close_conn). */
struct kafka_request {
    struct kafka_conn *conn;
    uint64_t seq;            /* its place in the connection's answer order */
    int16_t api_key;
    int16_t api_version;
    int32_t correlation_id;
    struct slice client_id;  /* nullable; borrows from the frame */
    const uint8_t *body;     /* after the header; borrows from the frame */
    size_t body_len;
};

/* The client's address, "ip:port" ("?" if unknown). */
const char *kafka_request_peer(const struct kafka_request *req);

/* Where a file span goes inside a response body: after body byte `at`
 * (the bytes before it, including the records length prefix, are already
 * in the body). Splices are in increasing `at` order. */
struct kafka_splice {
    size_t at;
    struct log_span span;    /* owned by the response; released after send */
};

/* A response body under construction: body bytes (without the size prefix
 * and correlation id, which the server adds) plus file spans. */
struct kafka_response {
    struct writer body;
    struct kafka_splice *splices;
    size_t n_splices;
    size_t cap_splices;
};

void kafka_response_init(struct kafka_response *resp);
/* Adds a span at the body's current end; takes ownership of span (it is
 * released when sent or on failure). RC_NOMEM releases it at once. */
MUST_CHECK int kafka_response_splice(struct kafka_response *resp,
                                     struct log_span *span);
/* Frees body and releases spans (for responses never handed over). */
void kafka_response_free(struct kafka_response *resp);

/* A request arrived; answer it exactly once, now or later. */
typedef void (*kafka_request_cb)(void *arg, struct kafka_request *req);

/* The listener's settings (Kafka's names). */
struct kafka_server_config {
    const char *host;
    int port;                  /* 0 picks a free one */
    size_t max_connections;    /* max.connections (0: KAFKA_CONNS_MAX) */
    size_t max_connections_per_ip; /* max.connections.per.ip (0: none) */
    uint64_t idle_ms;          /* connections.max.idle.ms (0: never) */
    size_t queued_max_bytes;   /* queued.max.request.bytes (0: the
                                * KAFKA_QUEUED_MEMORY_MAX default) */
};

/* Starts listening. Connections are accepted but nothing is read from
 * them until kafka_server_serve(). At max_connections a new connection closes the one
 * quiet (nothing in flight) the longest, if for KAFKA_CONN_EVICT_IDLE_MS,
 * else is closed itself; connections quiet for idle_ms are closed. */
MUST_CHECK int kafka_server_start(struct kafka_server **out, uv_loop_t *loop,
                                  const struct kafka_server_config *cfg,
                                  kafka_request_cb cb, void *arg,
                                  struct tracer *tracer);
int kafka_server_port(const struct kafka_server *s);
/* Closes the listener and every connection; pending requests' answers are
 * dropped (the handlers must still answer them; that is harmless). */
void kafka_server_close(struct kafka_server *s);

/* Answers req with resp (takes ownership of both's contents; req is
 * invalid afterwards). Sent when every earlier request on the connection
 * has been answered. */
void kafka_reply(struct kafka_request *req, struct kafka_response *resp);
/* Produce with acks=0: no response, but later answers may go out. */
void kafka_no_reply(struct kafka_request *req);
/* Closes req's connection (bad request); req is invalid afterwards. */
void kafka_close_conn(struct kafka_request *req, const char *why);

/* Starts reading requests, as Kafka enables request processing once the
 * broker has caught up with the metadata log: before that a restarted
 * broker would answer from an empty image, and a client told that its
 * topic is unknown drops its partitions. Harmless when already serving. */
void kafka_server_serve(struct kafka_server *s);
bool kafka_server_serving(const struct kafka_server *s);

/* Copy-only mode (no sendfile), for tests and TLS later. */
void kafka_server_set_copy_only(struct kafka_server *s, bool copy_only);

/* --- Additions (broker/kafka/kafka_server.c) ----------------------------------
 *
 * Lifetime: a connection's memory lives until its socket has closed AND
 * every request handed out on it has been answered (a count of both), so
 * a handler may answer, no-reply or close-conn any request it holds at any
 * time, even after the connection or the whole server closed: the answer
 * is then dropped. The server's own memory likewise lives until its last
 * connection is freed. Only the socket handles need the loop to run.
 *
 * Span bytes go out through broker/kafka/net_sendfile.h; the process must ignore
 * SIGPIPE (broker/main.c does), since sendfile(2) to a reset socket
 * raises it. */

/* Called as each connection closes (its socket closed), with it: a
 * handler that holds answers for a while lets go of those on conn then
 * rather than at their deadline (its requests stay valid until answered,
 * and answers on it are dropped). One hook per server. */
typedef void (*kafka_conn_closed_fn)(void *arg,
                                     const struct kafka_conn *conn);
void kafka_server_on_conn_closed(struct kafka_server *s,
                                 kafka_conn_closed_fn fn, void *arg);

/* Counters since start, for metrics and tests. */
struct kafka_server_stats {
    uint64_t conns_open;       /* open right now (a gauge, not a count) */
    uint64_t conns_accepted;   /* including those refused at the bound */
    uint64_t conns_refused;    /* closed at once: KAFKA_CONNS_MAX open */
    uint64_t requests;         /* handed to the callback */
    uint64_t responses;        /* queued for sending (not no-reply) */
    uint64_t sendfile_bytes;   /* span bytes sent by sendfile(2) */
    uint64_t copy_bytes;       /* span bytes sent by pread + uv_write */
    uint64_t reads_paused;     /* times a bound stopped reading */
};

/* Per ApiKey (below KAFKA_SERVER_API_KEYS), the time from reading a
 * request to its answer being queued (or its being dropped), in ms. */
#define KAFKA_SERVER_API_KEYS 75
const struct http_metrics_hist *
kafka_server_request_times(const struct kafka_server *s);

void kafka_server_get_stats(const struct kafka_server *s,
                            struct kafka_server_stats *out);

/* kafka_response_splice() also empties *span (seg NULL, fd -1), so the
 * caller's copy can be released again harmlessly; an empty span is
 * released at once and adds nothing; more than KAFKA_RESPONSE_SPLICES_MAX
 * splices is RC_FULL (the span released). kafka_reply() resets *resp to
 * an empty response. A response whose body writer failed (body.rc) or
 * whose size does not fit the int32 size field closes the connection
 * with an error log instead of being sent. */

/* The peer's "ip:port" (for handlers' log lines); "?" if unknown. */
const char *kafka_conn_peer(const struct kafka_conn *conn);
/* False once the connection started closing (answers are dropped). */
bool kafka_conn_is_open(const struct kafka_conn *conn);
/* False while a bound (outbox, in-flight requests) has stopped reading. */
bool kafka_conn_reading(const struct kafka_conn *conn);
/* Response bytes counted against CONN_OUTBOX_BYTES_MAX right now. */
size_t kafka_conn_outbox_bytes(const struct kafka_conn *conn);

/* The client software name and version (ApiVersions v3, KIP-511) as the
 * connection last told them, cut at KAFKA_CONN_SOFTWARE_BYTES - 1; ""
 * until then. */
#define KAFKA_CONN_SOFTWARE_BYTES 64
void kafka_conn_set_software(struct kafka_conn *conn, struct slice name,
                             struct slice version);
const char *kafka_conn_software_name(const struct kafka_conn *conn);
const char *kafka_conn_software_version(const struct kafka_conn *conn);

/* True the first time it is asked on a connection, then false: for a
 * log line once per connection (an unsupported version it keeps
 * sending). */
bool kafka_conn_first_unsupported(struct kafka_conn *conn);

#endif
