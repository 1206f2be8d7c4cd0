/* Test helper: builds valid RecordBatch v2 bytes (uncompressed, no keys,
 * no headers) whose record values are a deterministic function of a seed,
 * so a test can rebuild and compare what it wrote. */
#ifndef CAIRN_TESTS_BATCH_BUILDER_H
#define CAIRN_TESTS_BATCH_BUILDER_H

#include <stddef.h>
#include <stdint.h>

struct built_batch {
    uint8_t *bytes; /* malloc'd; free with built_batch_free() */
    size_t len;
};

/* n_records records of value_bytes bytes each; record i has timestamp
 * base_ts + i; values derive from seed. baseOffset 0, epoch -1, no
 * producer id, as a non-idempotent client sends. */
struct built_batch batch_build(int32_t n_records, size_t value_bytes,
                               int64_t base_ts, uint32_t seed);
void built_batch_free(struct built_batch *b);

/* True when stored (as read back from a log) equals the built batch except
 * for baseOffset and partitionLeaderEpoch. */
int batch_same_payload(const uint8_t *stored, const struct built_batch *b);

#endif
