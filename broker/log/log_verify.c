/* CRC check of a read span (broker/log/log_verify.h). Loop thread. */
#include "broker/log/log_verify.h"

#include "broker/log/log_segment.h"
#include "common/crc32c.h"
#include "common/io.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"

#define LOG_VERIFY__HEADER_BYTES 61u
#define LOG_VERIFY__CRC_FROM RECORD_BATCH_OFF_ATTRIBUTES

_Static_assert(LOG_VERIFY__HEADER_BYTES <= LOG_VERIFY_BUFFER_BYTES_MIN,
               "a batch header fits in the smallest buffer");

static int read_full(int fd, uint8_t *buf, size_t n, int64_t position)
{
    size_t have = 0;
    while (have < n) {
        ssize_t got = io_pread(fd, buf + have, n - have,
                               (off_t)(position + (int64_t)have));
        if (got < 0) {
            return RC_IO;
        }
        if (got == 0) {
            return RC_SHORT; /* the file ends inside the span */
        }
        have += (size_t)got;
    }
    return RC_OK;
}

/* The CRC of a batch larger than the buffer, whose first n bytes (header
 * included) are in buf, read on from position + n. */
static int crc_large(int fd, uint8_t *buf, size_t cap, size_t n,
                     int64_t position, const struct record_batch_header *h)
{
    int64_t size = record_batch_size(h);
    uint32_t crc = crc32c(buf + LOG_VERIFY__CRC_FROM,
                          n - LOG_VERIFY__CRC_FROM);
    int64_t at = position + (int64_t)n;
    while (at < position + size) {
        int64_t left = position + size - at;
        size_t want = left < (int64_t)cap ? (size_t)left : cap;
        int rv = read_full(fd, buf, want, at);
        if (rv != RC_OK) {
            return rv;
        }
        crc = crc32c_extend(crc, buf, want);
        at += (int64_t)want;
    }
    return crc == h->crc ? RC_OK : RC_CORRUPT;
}

static int bad(struct log_verify *out, int rc, int64_t position)
{
    out->rc = rc;
    out->bad_position = position;
    return rc;
}

/* Checks the batch at buf[off] (file position pos + off, want bytes read
 * at pos); *size_out gets its size, or 0 when it must be read again from
 * its start (it does not fit in what was read). */
static int check_one(const struct log_span *span, uint8_t *buf, size_t cap,
                     size_t want, size_t off, int64_t pos,
                     struct log_verify *out, int64_t *size_out)
{
    struct record_batch_header h;
    int64_t at = pos + (int64_t)off;
    int64_t end = span->position + span->bytes;
    *size_out = 0;
    int rv = record_batch_parse(buf + off, want - off, &h);
    if (rv == RC_SHORT && off > 0) {
        return RC_OK; /* read again from this batch */
    }
    if (rv != RC_OK) {
        return bad(out, rv, at);
    }
    int64_t size = record_batch_size(&h);
    if (at + size > end) {
        return bad(out, RC_SHORT, at);
    }
    if (h.base_offset < out->stop_offset) {
        return bad(out, RC_CORRUPT, at);
    }
    if (off + (size_t)size <= want) {
        if (!record_batch_crc_ok(buf + off, &h)) {
            return bad(out, RC_CORRUPT, at);
        }
    } else if (off > 0) {
        return RC_OK; /* read again from this batch */
    } else {
        rv = crc_large(span->fd, buf, cap, want, at, &h);
        if (rv != RC_OK) {
            return bad(out, rv, at);
        }
    }
    out->intact_bytes += size;
    out->stop_offset = record_batch_last_offset(&h) + 1;
    *size_out = size;
    return RC_OK;
}

int log_verify_span(const struct log_span *span, uint8_t *buf,
                    size_t buf_bytes, struct log_verify *out)
{
    ASSERT(buf_bytes >= LOG_VERIFY_BUFFER_BYTES_MIN);
    *out = (struct log_verify){.rc = RC_OK, .stop_offset = span->first_offset,
                               .bad_position = -1, .segment_base = -1,
                               .dir = ""};
    if (span->bytes <= 0) {
        return RC_OK;
    }
    out->segment_base = span->seg->base_offset;
    out->dir = span->seg->dir;
    int64_t pos = span->position;
    int64_t end = span->position + span->bytes;
    while (pos < end) {
        size_t want = end - pos < (int64_t)buf_bytes ? (size_t)(end - pos)
                                                     : buf_bytes;
        int rv = read_full(span->fd, buf, want, pos);
        if (rv != RC_OK) {
            return bad(out, rv, pos);
        }
        size_t off = 0;
        while (off < want) {
            int64_t size = 0;
            rv = check_one(span, buf, buf_bytes, want, off, pos, out, &size);
            if (rv != RC_OK) {
                return rv;
            }
            if (size == 0) {
                break;
            }
            if (off + (size_t)size > want) {
                off = (size_t)size; /* a large batch, read past buf */
                break;
            }
            off += (size_t)size;
        }
        ASSERT(off > 0);
        pos += (int64_t)off;
    }
    return RC_OK;
}
