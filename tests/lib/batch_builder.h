/* Test helper: builds valid RecordBatch v2 bytes (uncompressed, no keys,
 * no headers) whose record values are a deterministic function of a seed,
 * so a test can rebuild and compare what it wrote; and batches record by
 * record, with keys, headers and every codec, right or wrong on purpose. */
#ifndef CAIRN_TESTS_BATCH_BUILDER_H
#define CAIRN_TESTS_BATCH_BUILDER_H

#include <stdbool.h>
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

/* --- Batches record by record (keys, headers, codecs, malformations) ---- */

struct writer;

struct batch_header_kv {
    const char *key;       /* key_len bytes; key_len -1 writes a null key */
    int32_t key_len;
    const char *value;     /* value_len bytes; -1: null */
    int32_t value_len;
};

/* One record in DefaultRecord's layout, fields as given (any of them may
 * be wrong on purpose): its length prefix is computed from them. */
struct batch_record {
    int32_t offset_delta;
    int64_t timestamp_delta;
    const void *key;       /* key_len bytes; -1: null */
    int32_t key_len;
    const void *value;     /* value_len bytes; -1: null */
    int32_t value_len;
    const struct batch_header_kv *headers;
    int32_t n_headers;
};

/* Appends r to w (an uncompressed records section). */
void batch_write_record(struct writer *w, const struct batch_record *r);

/* The header of a batch around a records section. */
struct batch_spec {
    int codec;              /* RECORD_CODEC_NONE .. RECORD_CODEC_ZSTD */
    bool snappy_xerial;     /* snappy: the Java framing, else one raw block */
    int32_t record_count;   /* recordCount; lastOffsetDelta is count - 1 */
    int64_t base_timestamp;
    int64_t max_timestamp;
    int16_t attributes;     /* more attribute bits (LogAppendTime ...) */
    int64_t producer_id;    /* -1: not idempotent (epoch, sequence -1) */
    int32_t base_sequence;
};

/* records[0..len) compressed with spec->codec and wrapped in a header
 * with a correct CRC. */
struct built_batch batch_wrap(const uint8_t *records, size_t len,
                              const struct batch_spec *spec);

/* src[0..len) in codec's stream format (snappy: xerial framing in 32 KiB
 * blocks when xerial, else one raw block); malloc'd, *out_len its size. */
uint8_t *batch_compress(int codec, bool xerial, const uint8_t *src,
                        size_t len, size_t *out_len);

/* Recomputes b's CRC-32C after a test changed its bytes. */
void batch_fix_crc(struct built_batch *b);

#endif
