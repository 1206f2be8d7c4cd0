/* A small blocking Kafka client: one TCP connection to one broker, one
 * request at a time, for what librdkafka has no API for (`cairn status`
 * asks ListOffsets with Kafka's debugging replica id and DescribeConfigs
 * of a broker) and for tests and benchmarks that speak the protocol byte
 * by byte. Bodies are encoded and decoded by the caller with
 * common/kafka/kafka_codec.h; frames are written and read with
 * common/kafka/kafka_frame.h (request header v1, response header v0).
 *
 * Every step, from connecting to the last byte read, is bounded by one
 * deadline, set when the connection opens and restarted only by
 * kafka_client_set_timeout(), so a broker that is down, paused or
 * partitioned away costs at most that. A host that is not a numeric
 * address is resolved first by getaddrinfo(), which the deadline does not
 * bound.
 *
 * An adapter: it owns a socket and reads CLOCK_MONOTONIC. It belongs to
 * one thread; a struct kafka_client belongs to one caller. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CLIENT_H
#define CAIRN_COMMON_KAFKA_KAFKA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/writer.h"

/* A response larger than this closes the connection (the size is checked
 * before anything is allocated for it). Kafka's fetch.max.bytes default
 * is 50 MiB; the answers asked for here are a few bytes per partition. */
#define KAFKA_CLIENT_RESPONSE_BYTES_MAX (64u * 1024 * 1024)

/* Longest client id a connection sends; ours are words like "cairn". */
#define KAFKA_CLIENT_ID_BYTES_MAX 64u

/* Why the last failure, e.g. "connect: Connection refused". */
#define KAFKA_CLIENT_ERROR_BYTES 160

struct kafka_client {
    int fd;                        /* -1: closed */
    int64_t deadline_ns;           /* on CLOCK_MONOTONIC */
    uint64_t timeout_ms;           /* the budget the deadline came from */
    int32_t next_correlation_id;
    char client_id[KAFKA_CLIENT_ID_BYTES_MAX + 1];
    char error[KAFKA_CLIENT_ERROR_BYTES]; /* "" until a failure */
};

/* Connects to host:port; the connection and every later call must be done
 * within timeout_ms from now. Requests carry client_id (a C string of at
 * most KAFKA_CLIENT_ID_BYTES_MAX bytes, copied). RC_INVALID when host does
 * not resolve, RC_IO when no address accepts the connection, RC_TIMEOUT.
 * On failure kc->error says why and kc is closed (kafka_client_close() is
 * still allowed). */
MUST_CHECK int kafka_client_open(struct kafka_client *kc, const char *host,
                                 int32_t port, const char *client_id,
                                 uint64_t timeout_ms);

/* Restarts the budget: every later call must be done within timeout_ms
 * from now. */
void kafka_client_set_timeout(struct kafka_client *kc, uint64_t timeout_ms);

/* Sends body (borrowed) as request api_key/api_version and waits for its
 * response. On RC_OK *resp is the response body after the correlation id
 * (*resp_len bytes, malloc'd; the caller frees it; NULL when empty).
 * Failures: RC_TIMEOUT, RC_IO, RC_CLOSED (the broker closed the
 * connection, as Kafka does for a request it rejects), RC_MALFORMED (a
 * size below 4 or another correlation id), RC_TOO_LARGE (a response above
 * KAFKA_CLIENT_RESPONSE_BYTES_MAX, or a request above REQUEST_BYTES_MAX),
 * RC_NOMEM. Any failure leaves kc closed with kc->error set: where the
 * stream stands is unknown. */
MUST_CHECK int kafka_client_call(struct kafka_client *kc, int16_t api_key,
                                 int16_t api_version,
                                 const struct writer *body, uint8_t **resp,
                                 size_t *resp_len);

/* The raw stream, for callers that pipeline frames they wrote with
 * kafka_frame.h (their correlation ids are theirs to keep). Sends all n
 * bytes of p; failures as for kafka_client_call(). */
MUST_CHECK int kafka_client_send(struct kafka_client *kc, const uint8_t *p,
                                 size_t n);

/* Waits for bytes and receives at most cap of them into buf; *got > 0 on
 * RC_OK. Failures as for kafka_client_call(). */
MUST_CHECK int kafka_client_recv(struct kafka_client *kc, uint8_t *buf,
                                 size_t cap, size_t *got);

/* Receives one whole response frame: what follows its size prefix (the
 * correlation id, then the body), malloc'd into *frame (the caller frees
 * it). For callers of kafka_client_send() that read their answers when
 * they come; failures as for kafka_client_call(). */
MUST_CHECK int kafka_client_recv_frame(struct kafka_client *kc,
                                       uint8_t **frame, size_t *len);

/* Closes the connection; harmless when already closed. */
void kafka_client_close(struct kafka_client *kc);

#endif
