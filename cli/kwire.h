/* A small blocking Kafka client for what librdkafka has no API for
 * (`cairn status` asks ListOffsets with Kafka's debugging replica id and
 * DescribeConfigs of a broker): one TCP connection to one broker, one
 * request at a time. Bodies are encoded and decoded by the caller with
 * common/kafka/kafka_codec.h; this module only frames them:
 *
 *     request   int32 size | int16 api_key | int16 api_version |
 *               int32 correlation_id | int16 len, client_id "cairn" | body
 *     response  int32 size | int32 correlation_id | body
 *
 * (request header v1, response header v0: the codec's versions are all
 * non-flexible). Every step, from connecting to the last byte read, is
 * bounded by one deadline set when the connection opens, so a broker that
 * is down, paused or partitioned away costs at most that. A host that is
 * not a numeric address is resolved first by getaddrinfo(), which the
 * deadline does not bound.
 *
 * One thread; a struct kwire belongs to one caller. */
#ifndef CAIRN_CLI_KWIRE_H
#define CAIRN_CLI_KWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/writer.h"

/* A response larger than this closes the connection (the size is checked
 * before anything is allocated for it). Kafka's fetch.max.bytes default
 * is 50 MiB; our answers here are a few bytes per partition. */
#define KWIRE_RESPONSE_BYTES_MAX (64u * 1024 * 1024)

/* Why the last failure, e.g. "connect: Connection refused". */
#define KWIRE_ERROR_BYTES 160

struct kwire {
    int fd;                       /* -1: closed */
    int64_t deadline_ns;          /* on cli_clock_ns() */
    uint64_t timeout_ms;          /* the budget the deadline came from */
    int32_t next_correlation_id;
    char error[KWIRE_ERROR_BYTES]; /* "" until a failure */
};

/* Connects to host:port; the connection and every later call must be done
 * within timeout_ms from now. RC_INVALID when host does not resolve,
 * RC_IO when no address accepts the connection, RC_TIMEOUT. On failure
 * kw->error says why and kw is closed (kwire_close() is still allowed). */
MUST_CHECK int kwire_open(struct kwire *kw, const char *host, int32_t port,
                          uint64_t timeout_ms);

/* Sends body (borrowed) as request api_key/api_version and waits for its
 * response. On RC_OK *resp is the response body after the correlation id
 * (*resp_len bytes, malloc'd; the caller frees it; NULL when empty).
 * Failures: RC_TIMEOUT, RC_IO, RC_CLOSED (the broker closed the
 * connection, as Kafka does for a request it rejects), RC_MALFORMED (a
 * size below 4 or another correlation id), RC_TOO_LARGE (a response above
 * KWIRE_RESPONSE_BYTES_MAX, or a request whose size does not fit int32),
 * RC_NOMEM. Any failure leaves kw closed with kw->error set: where the
 * stream stands is unknown. */
MUST_CHECK int kwire_call(struct kwire *kw, int16_t api_key,
                          int16_t api_version, const struct writer *body,
                          uint8_t **resp, size_t *resp_len);

/* Closes the connection; harmless when already closed. */
void kwire_close(struct kwire *kw);

#endif
