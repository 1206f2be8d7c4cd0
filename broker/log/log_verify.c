/* CRC check of a read span (broker/log/log_verify.h). Loop thread. */
#include "broker/log/log_verify.h"

#include "broker/log/log_segment.h"
#include "common/kafka/record_batch.h"
#include "common/limits.h"
#include "common/rc.h"

_Static_assert(BATCH_HEADER_BYTES <= LOG_VERIFY_BUFFER_BYTES_MIN,
               "a batch header fits in the smallest buffer");

static int bad(struct log_verify *out, int rc, int64_t position)
{
    out->rc = rc;
    out->bad_position = position;
    return rc;
}

/* The segment's own batch reader (log_segment.h's log_scan) does the
 * reading, framing and CRC checks; this adds the offsets' order and what
 * the caller needs to send the intact part and repair the rest. */
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
    struct log_scan s;
    log_scan_init_whole(&s, span->seg, buf, buf_bytes, span->position,
                        span->position + span->bytes);
    struct record_batch_header h;
    int64_t pos = span->position;
    int rv;
    while ((rv = log_scan_next(&s, true, &h, &pos)) == RC_OK) {
        if (h.base_offset < out->stop_offset) {
            return bad(out, RC_CORRUPT, pos);
        }
        out->intact_bytes += record_batch_size(&h);
        out->stop_offset = record_batch_last_offset(&h) + 1;
    }
    return rv == RC_NOT_FOUND ? RC_OK : bad(out, rv, s.pos);
}
