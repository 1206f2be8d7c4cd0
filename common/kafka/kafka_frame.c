/* Kafka size prefix and headers (common/kafka/kafka_frame.h). */
#include "common/kafka/kafka_frame.h"

#include <string.h>

#include "common/rc.h"

/* The first flexible version of each API key, as Apache Kafka 3.8 has
 * them (the "flexibleVersions" of its message schemas); -1: none. */
static const int8_t first_flexible[] = {
    9, 12, 6, 9, 4, 2, 6, 3, 8, 6, 3, 6, 4, 4, 4, 5, 3, -1, 3, 5, 4, 2, 2,
    4, 3, 3, 3, 1, 3, 2, 2, 2, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0,
    -1, 1, 1, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0,
};

bool kafka_frame_is_flexible(int16_t api_key, int16_t api_version)
{
    if (api_key < 0 || (size_t)api_key >= sizeof first_flexible ||
        first_flexible[api_key] < 0) {
        return false;
    }
    return api_version >= first_flexible[api_key];
}

size_t kafka_frame_request_begin(struct writer *w, int16_t api_key,
                                 int16_t api_version, int32_t correlation_id,
                                 const char *client_id)
{
    ASSERT(client_id != NULL);
    size_t size_at = writer_reserve(w, KAFKA_FRAME_SIZE_BYTES);
    writer_i16(w, api_key);
    writer_i16(w, api_version);
    writer_i32(w, correlation_id);
    writer_string(w, client_id, strlen(client_id));
    if (kafka_frame_is_flexible(api_key, api_version)) {
        writer_empty_tagged_fields(w); /* request header v2 */
    }
    return size_at;
}

bool kafka_frame_response_is_flexible(int16_t api_key, int16_t api_version)
{
    return api_key != 18 /* ApiVersions */ &&
           kafka_frame_is_flexible(api_key, api_version);
}

size_t kafka_frame_response_begin(struct writer *w, int16_t api_key,
                                  int16_t api_version,
                                  int32_t correlation_id)
{
    size_t size_at = writer_reserve(w, KAFKA_FRAME_SIZE_BYTES);
    writer_i32(w, correlation_id);
    if (kafka_frame_response_is_flexible(api_key, api_version)) {
        writer_empty_tagged_fields(w); /* response header v1 */
    }
    return size_at;
}

int kafka_frame_end(struct writer *w, size_t size_at)
{
    if (w->rc != RC_OK) {
        return w->rc; /* size_at may be meaningless (writer.h) */
    }
    ASSERT(size_at <= w->len);
    ASSERT(w->len - size_at >= KAFKA_FRAME_SIZE_BYTES);
    size_t size = w->len - size_at - KAFKA_FRAME_SIZE_BYTES;
    if (size > (size_t)INT32_MAX) {
        w->rc = RC_TOO_LARGE; /* the writer's own sticky error */
        return w->rc;
    }
    writer_patch_i32(w, size_at, (int32_t)size);
    return w->rc;
}

int kafka_frame_size_read(struct reader *r, size_t size_min, size_t size_max,
                          size_t *size)
{
    ASSERT(size_min <= size_max);
    uint32_t v = reader_u32(r);
    if (r->rc != RC_OK) {
        return r->rc;
    }
    *size = v;
    if (v < size_min) {
        return RC_MALFORMED;
    }
    if (v > size_max) {
        return RC_TOO_LARGE;
    }
    return RC_OK;
}

int kafka_frame_response_read(struct reader *r,
                              int32_t expected_correlation_id,
                              int32_t *correlation_id)
{
    *correlation_id = reader_i32(r);
    if (r->rc != RC_OK) {
        return r->rc;
    }
    if (*correlation_id != expected_correlation_id) {
        return RC_MALFORMED;
    }
    return RC_OK;
}

int kafka_frame_response_tags(struct reader *r, int16_t api_key,
                              int16_t api_version)
{
    if (kafka_frame_response_is_flexible(api_key, api_version)) {
        reader_skip_tagged_fields(r);
    }
    return r->rc;
}

int kafka_frame_request_read(struct reader *r,
                             struct kafka_frame_request_header *h)
{
    h->ApiKey = reader_i16(r);
    h->ApiVersion = reader_i16(r);
    h->CorrelationId = reader_i32(r);
    h->ClientId = reader_nullable_string(r);
    if (r->rc == RC_OK && kafka_frame_is_flexible(h->ApiKey, h->ApiVersion)) {
        reader_skip_tagged_fields(r); /* request header v2 */
    }
    return r->rc;
}
