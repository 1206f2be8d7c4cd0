/* RecordBatch v2 header codec (common/kafka/record_batch.h). Pure, any thread.
 * */
#include "common/kafka/record_batch.h"

#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/limits.h"
#include "common/rc.h"

int record_batch_parse(const uint8_t *p, size_t len,
                       struct record_batch_header *h)
{
    if (len < BATCH_HEADER_BYTES) {
        return RC_SHORT;
    }
    h->base_offset = (int64_t)bytes_be64(p + 0);
    h->batch_length = (int32_t)bytes_be32(p + 8);
    h->partition_leader_epoch = (int32_t)bytes_be32(p + 12);
    h->magic = (int8_t)p[16];
    h->crc = bytes_be32(p + 17);
    h->attributes = (int16_t)bytes_be16(p + 21);
    h->last_offset_delta = (int32_t)bytes_be32(p + 23);
    h->base_timestamp = (int64_t)bytes_be64(p + 27);
    h->max_timestamp = (int64_t)bytes_be64(p + 35);
    h->producer_id = (int64_t)bytes_be64(p + 43);
    h->producer_epoch = (int16_t)bytes_be16(p + 51);
    h->base_sequence = (int32_t)bytes_be32(p + 53);
    h->record_count = (int32_t)bytes_be32(p + 57);
    if (h->batch_length <
        (int32_t)(BATCH_HEADER_BYTES - RECORD_BATCH_LOG_OVERHEAD)) {
        return RC_MALFORMED;
    }
    if (record_batch_size(h) > (int64_t)BATCH_BYTES_MAX) {
        return RC_MALFORMED;
    }
    if (h->magic != RECORD_BATCH_MAGIC) {
        return RC_MALFORMED;
    }
    return RC_OK;
}

bool record_batch_crc_ok(const uint8_t *p, const struct record_batch_header *h)
{
    size_t n = (size_t)record_batch_size(h) - RECORD_BATCH_OFF_ATTRIBUTES;
    return crc32c(p + RECORD_BATCH_OFF_ATTRIBUTES, n) == h->crc;
}

int record_batch_check_counts(const struct record_batch_header *h,
                              bool from_client)
{
    if (h->record_count <= 0 || h->last_offset_delta < 0) {
        return RC_MALFORMED;
    }
    /* Compaction may drop records, never offsets: delta >= count - 1. */
    if (h->last_offset_delta < h->record_count - 1) {
        return RC_MALFORMED;
    }
    if (!from_client) {
        return RC_OK;
    }
    if (h->last_offset_delta != h->record_count - 1) {
        return RC_MALFORMED;
    }
    if ((h->attributes & RECORD_BATCH_ATTR_CONTROL) != 0) {
        return RC_MALFORMED;
    }
    if (h->producer_id >= 0 && h->base_sequence < 0) {
        return RC_MALFORMED;
    }
    return RC_OK;
}

int record_batch_validate(const uint8_t *p, size_t len, bool from_client,
                          struct record_batch_header *h)
{
    int rv = record_batch_parse(p, len, h);
    if (rv != RC_OK) {
        return rv;
    }
    if (record_batch_size(h) != (int64_t)len) {
        return len < (size_t)record_batch_size(h) ? RC_SHORT : RC_MALFORMED;
    }
    if (!record_batch_crc_ok(p, h)) {
        return RC_CORRUPT;
    }
    return record_batch_check_counts(h, from_client);
}

void record_batch_set_base_offset(uint8_t *p, int64_t base_offset)
{
    bytes_put_be64(p + RECORD_BATCH_OFF_BASE_OFFSET, (uint64_t)base_offset);
}

void record_batch_set_leader_epoch(uint8_t *p, int32_t epoch)
{
    bytes_put_be32(p + RECORD_BATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
}

bool record_batch_set_max_timestamp(uint8_t *p, struct record_batch_header *h,
                                    bool log_append_time,
                                    int64_t max_timestamp)
{
    int16_t attributes = (int16_t)(h->attributes &
                                   ~RECORD_BATCH_ATTR_LOG_APPEND_TIME);
    if (log_append_time) {
        attributes = (int16_t)(attributes |
                               RECORD_BATCH_ATTR_LOG_APPEND_TIME);
    }
    if (attributes == h->attributes && max_timestamp == h->max_timestamp) {
        return false;
    }
    bytes_put_be16(p + RECORD_BATCH_OFF_ATTRIBUTES, (uint16_t)attributes);
    bytes_put_be64(p + RECORD_BATCH_OFF_MAX_TIMESTAMP,
                   (uint64_t)max_timestamp);
    size_t n = (size_t)record_batch_size(h) - RECORD_BATCH_OFF_ATTRIBUTES;
    h->attributes = attributes;
    h->max_timestamp = max_timestamp;
    h->crc = crc32c(p + RECORD_BATCH_OFF_ATTRIBUTES, n);
    bytes_put_be32(p + RECORD_BATCH_OFF_CRC, h->crc);
    return true;
}
