/* The records of one stored RecordBatch v2, read one by one and, for log
 * compaction, written back as a smaller batch holding only those kept.
 *
 * Reading: a compressed batch is decompressed whole into a buffer (at most
 * RECORD_INFLATED_BYTES_MAX), then each record is read as Kafka's
 * DefaultRecord is: length, attributes, timestamp delta, offset delta,
 * key, value, headers. Every length is checked against the record and the
 * batch (stored batches were validated on the way in, but the disk is
 * untrusted too).
 *
 * Writing (Kafka's MemoryRecords.filterTo for v2): a batch that keeps
 * every record is written back as it was, byte for byte (compressed if it
 * was). Otherwise the kept records are copied byte for byte (their offset
 * deltas keep the offsets they had: gaps appear, offsets never change),
 * uncompressed; the header keeps the base offset, lastOffsetDelta (the
 * batch still spans its offsets), leader epoch, base timestamp and
 * producer id, epoch and base sequence; maxTimestamp becomes the kept
 * records' largest (CreateTime; a LogAppendTime batch keeps its time), as
 * Kafka's rebuilt batch has it; the attributes lose their codec bits;
 * recordCount is the kept count; the CRC-32C is recomputed.
 *
 * Pure codec (no I/O, no clock); one thread per struct record_inflate. */
#ifndef CAIRN_COMMON_KAFKA_RECORD_FILTER_H
#define CAIRN_COMMON_KAFKA_RECORD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/slice.h"
#include "common/writer.h"

struct record_view {
    int64_t offset;    /* base offset + offset delta */
    int64_t timestamp; /* base timestamp + timestamp delta */
    struct slice key;  /* borrowed; empty when null */
    struct slice value; /* borrowed; empty when null */
    bool null_key;
    bool null_value;   /* a tombstone */
};

/* Keep this record? (arg is the caller's). */
typedef bool (*record_keep_fn)(void *arg, const struct record_view *r);

/* Reads every record of the batch p (len bytes, header h, CRC already
 * checked) and asks keep of each. With out non-NULL, appends the filtered
 * batch to it when at least one record is kept; with keep_last, the
 * batch's last record is kept whatever keep says (an idempotent
 * producer's last sequence stays in the log). *kept: the records kept.
 * scratch holds decompressed records between calls (the caller frees it).
 * RC_OK; RC_MALFORMED (records that do not parse, or a count that does
 * not match); RC_CORRUPT (a compressed stream that does not decode);
 * RC_TOO_LARGE; RC_NOMEM. */
MUST_CHECK int record_filter(struct record_inflate *z, struct writer *scratch,
                             const uint8_t *p, size_t len,
                             const struct record_batch_header *h,
                             record_keep_fn keep, void *arg, bool keep_last,
                             struct writer *out, int32_t *kept);

#endif
