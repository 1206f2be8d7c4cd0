/* Record walker for produced batches (common/kafka/record_validate.h).
 * The records are read as one byte stream in chunks: the batch bytes
 * themselves when uncompressed, else the decoder's window one fill at a
 * time, so a record may straddle chunks and nothing is copied or
 * allocated per record. Pure, one thread per validator. */
#include "common/kafka/record_validate.h"

#include <stdlib.h>

#include "common/kafka/record_inflate.h"
#include "common/limits.h"
#include "common/rc.h"

struct record_validator {
    struct record_inflate *inflate;
};

int record_validator_new(struct record_validator **out)
{
    struct record_validator *v = calloc(1, sizeof *v);
    if (v == NULL) {
        return RC_NOMEM;
    }
    int rv = record_inflate_new(&v->inflate);
    if (rv != RC_OK) {
        free(v);
        return rv;
    }
    *out = v;
    return RC_OK;
}

void record_validator_free(struct record_validator *v)
{
    if (v != NULL) {
        record_inflate_free(v->inflate);
        free(v);
    }
}

/* --- The record stream -------------------------------------------------- */

/* [p, end) is the chunk being read; end_pos the stream offset of end. */
struct walk {
    const uint8_t *p;
    const uint8_t *end;
    uint64_t end_pos;
    struct record_inflate *z; /* NULL: the batch's bytes are the stream */
};

static uint64_t walk_pos(const struct walk *w)
{
    return w->end_pos - (uint64_t)(w->end - w->p);
}

/* The next chunk: RC_OK (p < end), RC_NOT_FOUND at the stream's end, or
 * the decoder's error. */
static int walk_refill(struct walk *w)
{
    if (w->z == NULL) {
        return RC_NOT_FOUND;
    }
    const uint8_t *chunk = NULL;
    size_t n = 0;
    int rv = record_inflate_next(w->z, &chunk, &n);
    if (rv != RC_OK) {
        return rv;
    }
    w->p = chunk;
    w->end = chunk + n;
    w->end_pos += n;
    return RC_OK;
}

static inline int walk_byte(struct walk *w, uint8_t *b)
{
    if (w->p == w->end) {
        int rv = walk_refill(w);
        if (rv != RC_OK) {
            return rv;
        }
    }
    *b = *w->p++;
    return RC_OK;
}

/* An unsigned varint of at most `bits` (32 or 64) bits: its last possible
 * byte may neither continue nor carry bits above them. */
static int walk_varbits(struct walk *w, unsigned bits, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = 0;
        int rv = walk_byte(w, &b);
        if (rv != RC_OK) {
            return rv;
        }
        if (shift + 7 > bits && (b >> (bits - shift)) != 0) {
            return RC_MALFORMED;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return RC_OK;
        }
    }
}

static int walk_varint(struct walk *w, int32_t *out)
{
    uint64_t z = 0;
    int rv = walk_varbits(w, 32, &z);
    uint32_t u = (uint32_t)z;
    *out = (int32_t)((u >> 1) ^ (0u - (u & 1u)));
    return rv;
}

static int walk_varlong(struct walk *w, int64_t *out)
{
    uint64_t z = 0;
    int rv = walk_varbits(w, 64, &z);
    *out = (int64_t)((z >> 1) ^ (0u - (z & 1u)));
    return rv;
}

static int walk_skip(struct walk *w, uint64_t n)
{
    for (;;) {
        uint64_t avail = (uint64_t)(w->end - w->p);
        if (n <= avail) {
            w->p += n;
            return RC_OK;
        }
        n -= avail;
        w->p = w->end;
        int rv = walk_refill(w);
        if (rv != RC_OK) {
            return rv;
        }
    }
}

/* --- Faults ------------------------------------------------------------- */

static int fail(struct record_validate_result *res, int rc, int32_t index,
                const char *message)
{
    res->record_index = index;
    res->message = message;
    return rc;
}

/* A read inside record `index` stopped with rv: the stream's end is a cut
 * record (message says where); a decoder error is the stream's fault. */
static int fail_read(struct record_validate_result *res, int rv,
                     int32_t index, const char *message)
{
    switch (rv) {
    case RC_NOT_FOUND:
        return fail(res, RC_MALFORMED, index, message);
    case RC_TOO_LARGE:
        return fail(res, RC_CORRUPT, -1,
                    "records decompress to more bytes than the broker "
                    "allows (decompression bomb)");
    case RC_CORRUPT:
        return fail(res, RC_CORRUPT, -1,
                    "compressed records are not a valid stream of the "
                    "batch's codec");
    case RC_NOMEM:
        return fail(res, RC_NOMEM, -1, "out of memory decompressing");
    default:
        return fail(res, rv, index, message);
    }
}

/* --- Records ------------------------------------------------------------ */

struct walk_batch {
    const struct record_batch_header *h;
    const struct record_validate_config *cfg;
    bool lat_batch;          /* the producer set the LogAppendTime bit */
    int64_t max_timestamp;
    int32_t ts_fault;        /* first record with a bad timestamp, or -1 */
    const char *ts_message;
};

static bool timestamp_outside(int64_t ts,
                              const struct record_validate_config *cfg)
{
    int64_t lo = 0;
    int64_t hi = 0;
    if (__builtin_sub_overflow(cfg->now_ms, cfg->timestamp_before_max_ms,
                               &lo)) {
        lo = INT64_MIN;
    }
    if (__builtin_add_overflow(cfg->now_ms, cfg->timestamp_after_max_ms,
                               &hi)) {
        hi = INT64_MAX;
    }
    return ts < lo || ts > hi;
}

/* Kafka's validateTimestamp, and the running maximum. A LogAppendTime
 * batch's records all carry its maxTimestamp, as Kafka reads them. */
static void walk_timestamp(struct walk_batch *b, int32_t i, int64_t delta)
{
    int64_t ts = b->lat_batch
                     ? b->h->max_timestamp
                     : (int64_t)((uint64_t)b->h->base_timestamp +
                                 (uint64_t)delta);
    if (ts > b->max_timestamp) {
        b->max_timestamp = ts;
    }
    if (b->ts_fault >= 0) {
        return;
    }
    if (!b->cfg->log_append_time && ts != -1) {
        if (timestamp_outside(ts, b->cfg)) {
            b->ts_fault = i;
            b->ts_message = "record timestamp outside [now - "
                            "message.timestamp.before.max.ms, now + "
                            "message.timestamp.after.max.ms]";
        }
    } else if (b->lat_batch) {
        b->ts_fault = i;
        b->ts_message = "producers may not set the LogAppendTime "
                        "timestamp type";
    }
}

/* A length-prefixed field of record i ending at rec_end: -1 when
 * nullable, else that many bytes, all inside the record. */
/* A length-prefixed field; *len_out (may be NULL) gets its length, -1
 * for null. */
static int walk_field(struct walk *w, uint64_t rec_end, bool nullable,
                      struct record_validate_result *res, int32_t i,
                      const char *what, int32_t *len_out)
{
    int32_t n = 0;
    int rv = walk_varint(w, &n);
    if (rv != RC_OK) {
        return fail_read(res, rv, i, what);
    }
    if (len_out != NULL) {
        *len_out = n;
    }
    if (n == -1 && nullable) {
        return RC_OK;
    }
    uint64_t pos = walk_pos(w);
    if (n < 0 || pos > rec_end || (uint64_t)n > rec_end - pos) {
        return fail(res, RC_MALFORMED, i, what);
    }
    rv = walk_skip(w, (uint64_t)n);
    return rv == RC_OK ? RC_OK : fail_read(res, rv, i, what);
}

static int walk_headers(struct walk *w, uint64_t rec_end,
                        struct record_validate_result *res, int32_t i)
{
    int32_t n = 0;
    int rv = walk_varint(w, &n);
    if (rv != RC_OK) {
        return fail_read(res, rv, i, "record header count cut short");
    }
    uint64_t pos = walk_pos(w);
    if (n < 0 || pos > rec_end || (uint64_t)n > rec_end - pos) {
        return fail(res, RC_MALFORMED, i,
                    "record header count negative or past the record");
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t key_len = 0;
        rv = walk_varint(w, &key_len);
        if (rv != RC_OK) {
            return fail_read(res, rv, i, "record header key cut short");
        }
        if (key_len < 0) {
            return fail(res, RC_MALFORMED, i, "record header key is null");
        }
        pos = walk_pos(w);
        if (pos > rec_end || (uint64_t)key_len > rec_end - pos) {
            return fail(res, RC_MALFORMED, i,
                        "record header key past the record");
        }
        rv = walk_skip(w, (uint64_t)key_len);
        if (rv != RC_OK) {
            return fail_read(res, rv, i, "record header key cut short");
        }
        rv = walk_field(w, rec_end, true, res, i,
                        "record header value length bad or past the record",
                        NULL);
        if (rv != RC_OK) {
            return rv;
        }
    }
    return RC_OK;
}

static int walk_record(struct walk *w, struct walk_batch *b, int32_t i,
                       struct record_validate_result *res)
{
    int32_t len = 0;
    int rv = walk_varint(w, &len);
    if (rv != RC_OK) {
        return fail_read(res, rv, i, "record length cut short or bad");
    }
    uint64_t start = walk_pos(w);
    uint64_t rec_end = start + (uint64_t)(len < 0 ? 0 : len);
    if (len < 0 || (w->z == NULL && rec_end > w->end_pos)) {
        return fail(res, RC_MALFORMED, i,
                    "record length negative or past the batch");
    }
    uint8_t attributes = 0;
    int64_t ts_delta = 0;
    int32_t offset_delta = 0;
    rv = walk_byte(w, &attributes);
    if (rv == RC_OK) {
        rv = walk_varlong(w, &ts_delta);
    }
    if (rv == RC_OK) {
        rv = walk_varint(w, &offset_delta);
    }
    if (rv != RC_OK) {
        return fail_read(res, rv, i,
                         "record attributes, timestamp or offset delta "
                         "cut short or bad");
    }
    if (offset_delta != i) {
        return fail(res, RC_MALFORMED, i,
                    "record offset delta is not its index: inner offsets "
                    "must be consecutive from 0");
    }
    int32_t key_len = 0;
    rv = walk_field(w, rec_end, true, res, i,
                    "record key length bad or past the record", &key_len);
    if (rv == RC_OK && key_len < 0 && b->cfg->require_keys) {
        return fail(res, RC_MALFORMED, i, "a compacted topic takes no "
                    "record without a key");
    }
    if (rv == RC_OK) {
        rv = walk_field(w, rec_end, true, res, i,
                        "record value length bad or past the record", NULL);
    }
    if (rv == RC_OK) {
        rv = walk_headers(w, rec_end, res, i);
    }
    if (rv != RC_OK) {
        return rv;
    }
    if (walk_pos(w) != rec_end) {
        return fail(res, RC_MALFORMED, i,
                    "record length does not match its fields");
    }
    walk_timestamp(b, i, ts_delta);
    return RC_OK;
}

/* recordCount records, then the stream's end. */
static int walk_records(struct walk *w, struct walk_batch *b,
                        struct record_validate_result *res)
{
    int rv = RC_OK;
    for (int32_t i = 0; i < b->h->record_count; i++) {
        if (w->p == w->end && (rv = walk_refill(w)) != RC_OK) {
            return fail_read(res, rv, -1,
                             "the batch holds fewer records than its "
                             "recordCount");
        }
        rv = walk_record(w, b, i, res);
        if (rv != RC_OK) {
            return rv;
        }
    }
    if (w->p == w->end) {
        rv = walk_refill(w);
        if (rv == RC_NOT_FOUND) {
            return RC_OK;
        }
        if (rv != RC_OK) {
            return fail_read(res, rv, -1, NULL);
        }
    }
    return fail(res, RC_MALFORMED, -1,
                "bytes after the batch's last record: it holds more than "
                "its recordCount");
}

int record_validate(struct record_validator *v, const uint8_t *batch,
                    size_t len, const struct record_batch_header *h,
                    const struct record_validate_config *cfg,
                    struct record_validate_result *res)
{
    ASSERT(len >= BATCH_HEADER_BYTES);
    ASSERT(record_batch_size(h) == (int64_t)len);
    ASSERT(h->record_count > 0);
    *res = (struct record_validate_result){.max_timestamp = -1,
                                           .record_index = -1};
    int codec = h->attributes & RECORD_BATCH_ATTR_CODEC_MASK;
    if (codec > RECORD_CODEC_ZSTD) {
        return fail(res, RC_MALFORMED, -1, "unknown compression codec");
    }
    const uint8_t *records = batch + BATCH_HEADER_BYTES;
    size_t records_len = len - BATCH_HEADER_BYTES;
    struct walk w = {.p = records, .end = records + records_len,
                     .end_pos = records_len};
    if (codec != RECORD_CODEC_NONE) {
        int rv = record_inflate_start(v->inflate, codec, records,
                                      records_len, cfg->inflated_bytes_max);
        if (rv != RC_OK) {
            return fail_read(res, rv, -1, NULL);
        }
        w = (struct walk){.p = records, .end = records, .z = v->inflate};
    }
    struct walk_batch b = {
        .h = h, .cfg = cfg, .max_timestamp = -1, .ts_fault = -1,
        .lat_batch = (h->attributes & RECORD_BATCH_ATTR_LOG_APPEND_TIME) != 0};
    int rv = walk_records(&w, &b, res);
    res->records_bytes = codec == RECORD_CODEC_NONE
                             ? records_len
                             : record_inflate_total(v->inflate);
    if (codec != RECORD_CODEC_NONE) {
        record_inflate_end(v->inflate);
    }
    if (rv != RC_OK) {
        return rv;
    }
    if (b.ts_fault >= 0) {
        return fail(res, RC_INVALID_TIMESTAMP, b.ts_fault, b.ts_message);
    }
    res->max_timestamp = cfg->log_append_time ? cfg->now_ms
                                              : b.max_timestamp;
    return RC_OK;
}
