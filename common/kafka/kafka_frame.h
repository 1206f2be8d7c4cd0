/* Kafka's framing around a request or response body: the size prefix and
 * the headers. A request of a non-flexible version carries header v1, of
 * a flexible one (KIP-482) header v2, which adds a tagged-field section;
 * responses carry header v0, or v1 (its tagged fields) for a flexible
 * version, but for ApiVersions, whose response header is always v0 (a
 * client must read it before it knows the broker's versions):
 *
 *     request   int32 size | int16 api_key | int16 api_version |
 *               int32 correlation_id | int16 len, client_id |
 *               [tagged fields: v2] | body
 *     response  int32 size | int32 correlation_id |
 *               [tagged fields: v1] | body
 *
 * size counts the bytes after itself. Writing a frame is begin, body,
 * end, straight-line and checked once:
 *
 *     size_t at = kafka_frame_request_begin(w, key, version, id, "cairn");
 *     kafka_fetch_request_encode(w, version, &rq);
 *     rv = kafka_frame_end(w, at);        RC_OK or the first failure
 *
 * Reading one is the mirror: the size prefix (bounded before anything is
 * allocated for it), then the header, leaving the reader at the body.
 *
 * Pure codec: no I/O, no clock, no allocation of its own (the writer
 * grows). Any thread, one frame per call. Used by the Kafka listener
 * (broker/kafka/kafka_server.c, request headers), the blocking client
 * (common/kafka/kafka_client.c), the follower fetcher
 * (broker/replication/follower.c) and the tests. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_FRAME_H
#define CAIRN_COMMON_KAFKA_KAFKA_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* The int32 size prefix. */
#define KAFKA_FRAME_SIZE_BYTES 4u

/* Response header v0: the correlation id. */
#define KAFKA_FRAME_RESPONSE_HEADER_BYTES 4u
/* Response header v1 with no tagged field: the id and a count of 0. */
#define KAFKA_FRAME_RESPONSE_HEADER_V1_BYTES 5u

/* Request header v1 with a client id of client_id_len bytes: api_key,
 * api_version, correlation_id, the id's int16 length, the id. */
#define KAFKA_FRAME_REQUEST_HEADER_BYTES(client_id_len) \
    (2u + 2u + 4u + 2u + (client_id_len))

/* Request header v1 or v2 as a broker reads it (the tagged fields of v2
 * are skipped); ClientId borrows from the frame and is the null slice for
 * a null client id. */
struct kafka_frame_request_header {
    int16_t ApiKey;
    int16_t ApiVersion;
    int32_t CorrelationId;
    struct slice ClientId;
};

/* Whether api_key at api_version is a flexible version in Apache Kafka
 * 3.8 (so its request header is v2); false for keys it does not know. */
bool kafka_frame_is_flexible(int16_t api_key, int16_t api_version);

/* Whether the response to api_key at api_version carries header v1:
 * flexible, and not ApiVersions. */
bool kafka_frame_response_is_flexible(int16_t api_key, int16_t api_version);

/* --- Writing ------------------------------------------------------------- */

/* Appends a size placeholder and the request header (v2 for a flexible
 * key and version, with no tagged field, else v1; client_id is a C
 * string, borrowed; "" is an empty id) to w. Returns the placeholder's
 * position for kafka_frame_end(). A client id longer than an int16 length
 * fails the writer with RC_TOO_LARGE. */
size_t kafka_frame_request_begin(struct writer *w, int16_t api_key,
                                 int16_t api_version, int32_t correlation_id,
                                 const char *client_id);

/* Appends a size placeholder and the response header (v1 with no tagged
 * field when kafka_frame_response_is_flexible(), else v0) to w; the
 * position for kafka_frame_end(). */
size_t kafka_frame_response_begin(struct writer *w, int16_t api_key,
                                  int16_t api_version,
                                  int32_t correlation_id);

/* Patches the size at size_at (from a _begin on w) to what was written
 * after it. RC_TOO_LARGE, also left in w->rc, when that does not fit the
 * int32 field. Returns w->rc: the first failure of the whole frame. */
MUST_CHECK int kafka_frame_end(struct writer *w, size_t size_at);

/* --- Reading ------------------------------------------------------------- */

/* Reads a size prefix into *size: RC_SHORT when r holds fewer than 4
 * bytes, RC_MALFORMED when the size is below size_min (a frame too short
 * for its header), RC_TOO_LARGE above size_max. The size is read as
 * unsigned, so a negative int32 is above any size_max below 2^31. */
MUST_CHECK int kafka_frame_size_read(struct reader *r, size_t size_min,
                                     size_t size_max, size_t *size);

/* Reads response header v0 from r, which holds a frame after its size
 * prefix; *correlation_id gets what the frame says. RC_SHORT when r holds
 * fewer than 4 bytes, RC_MALFORMED when it is not expected_correlation_id.
 * On RC_OK r stands at the body. */
MUST_CHECK int kafka_frame_response_read(struct reader *r,
                                         int32_t expected_correlation_id,
                                         int32_t *correlation_id);

/* The rest of response header v1 after the correlation id: skips its
 * tagged fields when kafka_frame_response_is_flexible(), else reads
 * nothing. Returns r->rc. */
MUST_CHECK int kafka_frame_response_tags(struct reader *r, int16_t api_key,
                                         int16_t api_version);

/* Reads the request header from r, which holds a frame after its size
 * prefix: v2 when the key and version are flexible, else v1. RC_SHORT or
 * RC_MALFORMED (r->rc) when it does not parse; on RC_OK r stands at the
 * body. */
MUST_CHECK int kafka_frame_request_read(struct reader *r,
                                        struct kafka_frame_request_header *h);

#endif
