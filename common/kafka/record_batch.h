/* RecordBatch v2 (magic 2) header codec: parse and validate the 61-byte
 * header, check the CRC-32C, and rewrite the two fields a broker owns
 * (baseOffset and partitionLeaderEpoch), which lie outside the CRC so the
 * batch is never re-encoded. The records themselves are walked by
 * common/kafka/record_validate.h; what it recomputes (maxTimestamp, and
 * the timestamp type) lies inside the CRC, which is then recomputed here.
 * Pure, any thread.
 *
 *   0  baseOffset            int64   written by the broker
 *   8  batchLength           int32   bytes after this field
 *  12  partitionLeaderEpoch  int32   written by the broker
 *  16  magic                 int8    2
 *  17  crc                   uint32  CRC-32C of bytes 21..end
 *  21  attributes            int16   bits 0-2 codec, 3 timestamp type,
 *                                    4 transactional, 5 control
 *  23  lastOffsetDelta       int32
 *  27  baseTimestamp         int64
 *  35  maxTimestamp          int64
 *  43  producerId            int64
 *  51  producerEpoch         int16
 *  53  baseSequence          int32
 *  57  recordCount           int32
 *  61  records ...
 */
#ifndef CAIRN_BROKER_RECORD_BATCH_H
#define CAIRN_BROKER_RECORD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

#define RECORD_BATCH_OFF_BASE_OFFSET 0
#define RECORD_BATCH_OFF_LENGTH 8
#define RECORD_BATCH_OFF_LEADER_EPOCH 12
#define RECORD_BATCH_OFF_MAGIC 16
#define RECORD_BATCH_OFF_CRC 17
#define RECORD_BATCH_OFF_ATTRIBUTES 21
#define RECORD_BATCH_OFF_MAX_TIMESTAMP 35
#define RECORD_BATCH_OFF_RECORD_COUNT 57
/* batchLength counts from partitionLeaderEpoch on. */
#define RECORD_BATCH_LOG_OVERHEAD 12
#define RECORD_BATCH_MAGIC 2

#define RECORD_BATCH_ATTR_CODEC_MASK 0x07
#define RECORD_BATCH_ATTR_LOG_APPEND_TIME 0x08
#define RECORD_BATCH_ATTR_TRANSACTIONAL 0x10
#define RECORD_BATCH_ATTR_CONTROL 0x20

struct record_batch_header {
    int64_t base_offset;
    int32_t batch_length;
    int32_t partition_leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t record_count;
};

/* Parses the header at p (len bytes available, at least the header).
 * Checks only what framing needs: batchLength covers at least the header
 * and at most BATCH_BYTES_MAX, and magic is 2. RC_SHORT when fewer than
 * 61 bytes are available; RC_MALFORMED for a bad length or magic. */
MUST_CHECK int record_batch_parse(const uint8_t *p, size_t len,
                                  struct record_batch_header *h);

/* Total bytes of the batch, header included. */
static inline int64_t record_batch_size(const struct record_batch_header *h)
{
    return (int64_t)h->batch_length + RECORD_BATCH_LOG_OVERHEAD;
}

static inline int64_t
record_batch_last_offset(const struct record_batch_header *h)
{
    return h->base_offset + h->last_offset_delta;
}

/* True when the stored CRC matches bytes 21..end; p holds the whole batch. */
bool record_batch_crc_ok(const uint8_t *p, const struct record_batch_header *h);

/* Full check of one batch that must fill exactly len bytes: framing,
 * CRC-32C (RC_CORRUPT), recordCount > 0 and lastOffsetDelta consistent with
 * it (RC_MALFORMED). With from_client, also Kafka's produce rules:
 * lastOffsetDelta + 1 == recordCount, not a control batch, producerId >= 0
 * implies baseSequence >= 0. */
MUST_CHECK int record_batch_validate(const uint8_t *p, size_t len,
                                     bool from_client,
                                     struct record_batch_header *h);

/* Count checks alone (part of record_batch_validate): recordCount > 0,
 * lastOffsetDelta >= recordCount - 1, and the client rules when
 * from_client. RC_MALFORMED when they fail. */
MUST_CHECK int record_batch_check_counts(const struct record_batch_header *h,
                                         bool from_client);

/* Kafka's setMaxTimestamp on a validated batch p: the timestamp-type bit
 * (LogAppendTime or CreateTime) and maxTimestamp as given; when either
 * changes, the CRC-32C is recomputed (both lie inside it). h follows the
 * bytes. True when anything changed. */
bool record_batch_set_max_timestamp(uint8_t *p, struct record_batch_header *h,
                                    bool log_append_time,
                                    int64_t max_timestamp);

/* Rewrites the broker-owned fields in place; the CRC stays valid. */
void record_batch_set_base_offset(uint8_t *p, int64_t base_offset);
void record_batch_set_leader_epoch(uint8_t *p, int32_t epoch);

#endif
