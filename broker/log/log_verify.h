/* The CRC check of a read span (broker/log/log.h's struct log_span) before
 * its bytes leave the broker in a Fetch response: every batch of the span
 * is read back by the segment's batch reader (log_segment.h's log_scan,
 * through common/io.h, so faults apply) into the caller's buffer, as much
 * as fits per read, and checked by its CRC-32C, its
 * framing and its offsets (each batch after the one before). The segment
 * stays pinned by the span; the caller sends the same span afterwards (the
 * page cache is then hot) or nothing of it past the intact part.
 *
 * A batch larger than the buffer is checked piecewise, so the buffer
 * bounds the memory, not the largest batch. Loop thread (the
 * read blocks, as log_read()'s index lookups do). */
#ifndef CAIRN_BROKER_LOG_VERIFY_H
#define CAIRN_BROKER_LOG_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "broker/log/log.h"
#include "common/assert.h"

/* At least one batch header fits in the buffer. */
#define LOG_VERIFY_BUFFER_BYTES_MIN 64u

struct log_verify {
    /* RC_OK: every batch intact. Else why the first bad one is bad:
     * RC_CORRUPT (CRC, or an offset going backwards), RC_MALFORMED (its
     * header's length or magic), RC_SHORT (it runs past the span: cut
     * short), RC_IO (the read failed). */
    int rc;
    int64_t intact_bytes;  /* whole intact batches from the span's start */
    int64_t stop_offset;   /* offset after the last intact batch (the
                            * span's first offset if none): where a repair
                            * truncates to */
    int64_t bad_position;  /* file position of the bad batch, or -1 */
    int64_t segment_base;  /* base offset of the span's segment */
    const char *dir;       /* the segment's directory ("" if none) */
};

/* Checks span's batches using buf (buf_bytes >= LOG_VERIFY_BUFFER_BYTES_MIN).
 * An empty span is intact. The result is in *out; returns out->rc. */
int log_verify_span(const struct log_span *span, uint8_t *buf,
                    size_t buf_bytes, struct log_verify *out);

#endif
