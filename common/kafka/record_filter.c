/* See record_filter.h. */
#include "common/kafka/record_filter.h"

#include <string.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"

#define FILTER__HEADER_BYTES 61

/* The records' bytes of the batch, decompressed into scratch if need be. */
static int records_of(struct record_inflate *z, struct writer *scratch,
                      const uint8_t *p, size_t len,
                      const struct record_batch_header *h,
                      const uint8_t **out, size_t *out_len)
{
    const uint8_t *body = p + FILTER__HEADER_BYTES;
    size_t body_len = len - FILTER__HEADER_BYTES;
    int codec = h->attributes & RECORD_BATCH_ATTR_CODEC_MASK;
    if (codec == RECORD_CODEC_NONE) {
        *out = body;
        *out_len = body_len;
        return RC_OK;
    }
    if (codec > RECORD_CODEC_ZSTD) {
        return RC_MALFORMED;
    }
    writer_reset(scratch);
    int rv = record_inflate_start(z, codec, body, body_len,
                                  RECORD_INFLATED_BYTES_MAX);
    while (rv == RC_OK) {
        const uint8_t *chunk = NULL;
        size_t n = 0;
        rv = record_inflate_next(z, &chunk, &n);
        if (rv == RC_OK) {
            writer_raw(scratch, chunk, n);
            rv = scratch->rc;
        }
    }
    record_inflate_end(z);
    if (rv != RC_NOT_FOUND) {
        return rv == RC_TOO_LARGE ? RC_TOO_LARGE : rv;
    }
    *out = scratch->data;
    *out_len = scratch->len;
    return RC_OK;
}

/* One record at r: its view and its whole bytes [*start, r->pos). */
static int read_record(struct reader *r, const struct record_batch_header *h,
                       struct record_view *v, size_t *start)
{
    *start = r->pos;
    int32_t len = reader_varint(r);
    if (r->rc != RC_OK || len < 0 || (size_t)len > reader_remaining(r)) {
        return RC_MALFORMED;
    }
    struct reader rec;
    reader_init(&rec, r->p + r->pos, (size_t)len);
    r->pos += (size_t)len;
    (void)reader_i8(&rec); /* attributes */
    int64_t ts_delta = reader_varlong(&rec);
    int32_t off_delta = reader_varint(&rec);
    int32_t key_len = reader_varint(&rec);
    if (rec.rc != RC_OK || key_len < -1 ||
        (key_len > 0 && (size_t)key_len > reader_remaining(&rec))) {
        return RC_MALFORMED;
    }
    v->null_key = key_len < 0;
    v->key = key_len > 0 ? reader_raw(&rec, (size_t)key_len)
                         : (struct slice){.ptr = rec.p, .len = 0};
    int32_t value_len = reader_varint(&rec);
    if (rec.rc != RC_OK || value_len < -1 ||
        (value_len > 0 && (size_t)value_len > reader_remaining(&rec))) {
        return RC_MALFORMED;
    }
    v->null_value = value_len < 0;
    v->value = value_len > 0 ? reader_raw(&rec, (size_t)value_len)
                             : (struct slice){.ptr = rec.p, .len = 0};
    v->offset = h->base_offset + off_delta;
    v->timestamp = h->base_timestamp + ts_delta;
    if (off_delta < 0 || off_delta > h->last_offset_delta) {
        return RC_MALFORMED;
    }
    return RC_OK;
}

int record_filter(struct record_inflate *z, struct writer *scratch,
                  const uint8_t *p, size_t len,
                  const struct record_batch_header *h, record_keep_fn keep,
                  void *arg, bool keep_last, struct writer *out,
                  int32_t *kept)
{
    *kept = 0;
    if (len < FILTER__HEADER_BYTES || h->record_count < 0) {
        return RC_MALFORMED;
    }
    const uint8_t *recs = NULL;
    size_t recs_len = 0;
    int rv = records_of(z, scratch, p, len, h, &recs, &recs_len);
    if (rv != RC_OK) {
        return rv;
    }
    size_t head_at = out != NULL ? out->len : 0;
    if (out != NULL) {
        writer_raw(out, p, FILTER__HEADER_BYTES); /* patched below */
    }
    struct reader r;
    reader_init(&r, recs, recs_len);
    int64_t kept_max_ts = -1; /* Kafka's NO_TIMESTAMP when none is above */
    for (int32_t i = 0; i < h->record_count; i++) {
        struct record_view v;
        size_t start = 0;
        rv = read_record(&r, h, &v, &start);
        if (rv != RC_OK) {
            break;
        }
        bool last = i == h->record_count - 1;
        if (keep(arg, &v) || (keep_last && last)) {
            (*kept)++;
            if (v.timestamp > kept_max_ts) {
                kept_max_ts = v.timestamp;
            }
            if (out != NULL) {
                writer_raw(out, recs + start, r.pos - start);
            }
        }
    }
    if (rv == RC_OK && !reader_done(&r)) {
        rv = RC_MALFORMED; /* bytes after the last record */
    }
    if (out == NULL) {
        return rv;
    }
    if (rv != RC_OK || *kept == 0 || out->rc != RC_OK) {
        int orc = out->rc;
        out->len = head_at; /* nothing of this batch */
        return rv != RC_OK ? rv : orc;
    }
    if (*kept == h->record_count) { /* unchanged: the batch as it was */
        out->len = head_at;
        writer_raw(out, p, len);
        return out->rc;
    }
    uint8_t *b = out->data + head_at;
    size_t size = out->len - head_at;
    bytes_put_be32(b + RECORD_BATCH_OFF_LENGTH,
                   (uint32_t)(size - RECORD_BATCH_LOG_OVERHEAD));
    int16_t attrs = (int16_t)(h->attributes & ~RECORD_BATCH_ATTR_CODEC_MASK);
    bytes_put_be16(b + RECORD_BATCH_OFF_ATTRIBUTES, (uint16_t)attrs);
    bytes_put_be32(b + RECORD_BATCH_OFF_RECORD_COUNT, (uint32_t)*kept);
    if ((h->attributes & RECORD_BATCH_ATTR_LOG_APPEND_TIME) == 0) {
        /* Kafka's rebuilt batch has its kept records' largest time, so
         * ListOffsets' MAX_TIMESTAMP finds a record that has it. */
        bytes_put_be64(b + RECORD_BATCH_OFF_MAX_TIMESTAMP,
                       (uint64_t)kept_max_ts);
    }
    uint32_t crc = crc32c(b + RECORD_BATCH_OFF_ATTRIBUTES,
                          size - RECORD_BATCH_OFF_ATTRIBUTES);
    bytes_put_be32(b + RECORD_BATCH_OFF_CRC, crc);
    return RC_OK;
}
