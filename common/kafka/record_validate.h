/* Kafka's LogValidator for one produced RecordBatch v2 (magic 2): walks
 * every record the way Kafka's DefaultRecord reads it, decompressing the
 * batch's records as a stream when it is compressed
 * (common/kafka/record_inflate.h), and checks what the batch header alone
 * cannot show. A batch that fails is not stored, so no consumer ever reads
 * records that contradict their batch (librdkafka's and kafkajs's
 * decoders trust the count, the lengths and the offset deltas).
 *
 * Each record, as DefaultRecord.readFrom reads it:
 *
 *   length          varint   bytes of the rest; the record ends exactly
 *                            there (Kafka: "Invalid record size")
 *   attributes      int8     unused
 *   timestampDelta  varlong  timestamp = baseTimestamp + delta
 *   offsetDelta     varint   must be the record's index 0, 1, ... n-1
 *   keyLength       varint   -1 null, else that many key bytes
 *   valueLength     varint   -1 null, else that many value bytes
 *   headerCount     varint   >= 0
 *   headers         each: keyLength varint >= 0 (a null key is refused,
 *                   as Kafka refuses a negative header key size), key,
 *                   valueLength varint (-1 null), value
 *
 * A varint is zigzag over at most 5 bytes (a varlong 10); an overlong one
 * or one overflowing 32 (64) bits is refused. The batch must hold exactly
 * recordCount records (the header's lastOffsetDelta is recordCount - 1,
 * checked by record_batch_validate() for client batches) and nothing after
 * the last one; for a compressed batch, the codec's stream must be
 * well-formed and end there too.
 *
 * What it answers, and the Kafka ErrorCode kafka_error_from_rc() makes
 * of it (Kafka 3.8 / 4.0 throw InvalidRecordException, INVALID_RECORD,
 * for every structural fault of a v2 batch):
 *   RC_MALFORMED          INVALID_RECORD (87): a bad varint or length, a
 *                         count that does not match the records, bytes
 *                         after the last record, an offset delta out of
 *                         order, a null header key, an unknown codec, a
 *                         null key with require_keys
 *   RC_CORRUPT            CORRUPT_MESSAGE (2): the compressed stream does
 *                         not decode, or decodes to more than
 *                         inflated_bytes_max (a decompression bomb)
 *   RC_INVALID_TIMESTAMP  INVALID_TIMESTAMP (32): for a CreateTime topic a
 *                         record timestamp (other than -1) more than
 *                         timestamp_before_max_ms before now_ms or more
 *                         than timestamp_after_max_ms after it (KIP-937);
 *                         or a producer that set the LogAppendTime bit
 *                         where Kafka refuses it
 *   RC_NOMEM              a decoder could not get memory
 * A structural fault wins over timestamp faults found before it, as in
 * Kafka, where it throws while timestamp errors are only collected.
 *
 * Stricter than Kafka, where Kafka would store what its consumers cannot
 * read back safely: offset deltas out of order are refused (Kafka checks
 * nothing for an uncompressed batch and rebuilds a compressed one); key,
 * value and header value lengths below -1 are refused (Kafka reads them
 * as null); bytes after a gzip stream are refused (Java's GZIPInputStream
 * ignores them); Kafka's decompression failures surface as
 * UNKNOWN_SERVER_ERROR, here as CORRUPT_MESSAGE. With require_keys (a
 * topic whose cleanup.policy has "compact"), a record without a key is
 * refused, INVALID_RECORD, as Kafka refuses it.
 *
 * On success the result carries the maxTimestamp Kafka stores: the
 * largest record timestamp (-1 when none is above -1) for CreateTime,
 * now_ms for LogAppendTime; record_batch_set_max_timestamp()
 * (common/kafka/record_batch.h) writes it.
 *
 * No allocation per record, no I/O, no clock (now_ms is an input); a
 * struct record_validator is reused across batches by one thread. */
#ifndef CAIRN_COMMON_KAFKA_RECORD_VALIDATE_H
#define CAIRN_COMMON_KAFKA_RECORD_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/kafka/record_batch.h"

struct record_validate_config {
    int64_t now_ms;                  /* the broker's wall clock */
    int64_t timestamp_before_max_ms; /* INT64_MAX: no lower bound */
    int64_t timestamp_after_max_ms;  /* INT64_MAX: no upper bound */
    bool log_append_time;            /* the topic's message.timestamp.type */
    uint64_t inflated_bytes_max;     /* RECORD_INFLATED_BYTES_MAX */
    bool require_keys;               /* a compacted topic's: no null key */
};

struct record_validate_result {
    int64_t max_timestamp;    /* what the header must say, on success */
    int32_t record_index;     /* the record at fault, -1 for the batch */
    const char *message;      /* static text; NULL on success */
    uint64_t records_bytes;   /* the records' bytes, decompressed */
};

struct record_validator;

/* RC_NOMEM. */
MUST_CHECK int record_validator_new(struct record_validator **out);
void record_validator_free(struct record_validator *v);

/* Walks the records of batch[0..len), one whole batch whose header h was
 * parsed and checked by record_batch_validate(batch, len, true, h). */
MUST_CHECK int record_validate(struct record_validator *v,
                               const uint8_t *batch, size_t len,
                               const struct record_batch_header *h,
                               const struct record_validate_config *cfg,
                               struct record_validate_result *res);

#endif
