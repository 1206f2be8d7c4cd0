/* The metadata state machine behind Raft (controller/fsm.h). */
#include "controller/fsm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"

static int fsm_apply_cb(struct raft_fsm *rf, const struct raft_buffer *buf,
                        void **result);

/* Wraps payload (len bytes at p, allocated with raft_malloc) in a frame. */
static int frame(uint8_t *p, size_t len, struct raft_buffer *out)
{
    if (len > UINT32_MAX - 16) {
        raft_free(p);
        return RC_TOO_LARGE;
    }
    size_t total = META_FSM_FRAME_HEADER_BYTES + ((len + 7) & ~(size_t)7);
    uint8_t *buf = raft_malloc(total);
    if (buf == NULL) {
        raft_free(p);
        return RC_NOMEM;
    }
    memset(buf, 0, total);
    bytes_put_be32(buf, (uint32_t)len);
    memcpy(buf + META_FSM_FRAME_HEADER_BYTES, p, len);
    raft_free(p);
    out->base = buf;
    out->len = total;
    return RC_OK;
}

/* The payload inside a frame; RC_MALFORMED when it does not fit. */
static int unframe(const struct raft_buffer *buf, const uint8_t **p,
                   size_t *len)
{
    const uint8_t *b = buf->base;
    if (buf->len < META_FSM_FRAME_HEADER_BYTES || bytes_be32(b + 4) != 0) {
        return RC_MALFORMED;
    }
    size_t n = bytes_be32(b);
    if (n > buf->len - META_FSM_FRAME_HEADER_BYTES) {
        return RC_MALFORMED;
    }
    *p = b + META_FSM_FRAME_HEADER_BYTES;
    *len = n;
    return RC_OK;
}

int meta_fsm_encode_entry(const struct meta_record *recs, size_t n,
                          struct raft_buffer *out)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    int rv = meta_codec_encode_batch(recs, n, raft_malloc, &bytes, &len);
    return rv == RC_OK ? frame(bytes, len, out) : rv;
}
static int fsm_snapshot_cb(struct raft_fsm *rf, struct raft_buffer *bufs[],
                           unsigned *n_bufs);
static int fsm_restore_cb(struct raft_fsm *rf, struct raft_buffer *buf);

int meta_fsm_init(struct meta_fsm *f, struct tracer *t)
{
    memset(f, 0, sizeof *f);
    meta_image_init(&f->image);
    f->ring = calloc(META_RING_RECORDS_MAX, sizeof *f->ring);
    if (f->ring == NULL) {
        return RC_NOMEM;
    }
    f->tracer = t;
    f->raft_fsm.version = 1;
    f->raft_fsm.data = f;
    f->raft_fsm.apply = fsm_apply_cb;
    f->raft_fsm.snapshot = fsm_snapshot_cb;
    f->raft_fsm.restore = fsm_restore_cb;
    return RC_OK;
}

static void ring_clear(struct meta_fsm *f)
{
    for (size_t i = 0; i < f->ring_len; i++) {
        struct fsm_record *r = &f->ring[(f->ring_head + i) %
                                         META_RING_RECORDS_MAX];
        free(r->bytes);
        r->bytes = NULL;
    }
    f->ring_head = 0;
    f->ring_len = 0;
    f->ring_bytes = 0;
}

void meta_fsm_close(struct meta_fsm *f)
{
    ring_clear(f);
    free(f->ring);
    f->ring = NULL;
    meta_image_free(&f->image);
}

const struct fsm_record *meta_fsm_ring_at(const struct meta_fsm *f, size_t i)
{
    ASSERT(i < f->ring_len);
    return &f->ring[(f->ring_head + i) % META_RING_RECORDS_MAX];
}

static void ring_pop(struct meta_fsm *f)
{
    struct fsm_record *r = &f->ring[f->ring_head];
    f->ring_bytes -= r->len;
    free(r->bytes);
    r->bytes = NULL;
    f->ring_head = (f->ring_head + 1) % META_RING_RECORDS_MAX;
    f->ring_len--;
}

/* Keeps a packed copy of the record just applied at offset. Losing one
 * (no memory) only means brokers behind it get the image instead, so the
 * ring is emptied rather than left with a hole. */
static void ring_push(struct meta_fsm *f, const struct meta_record *rec,
                      int64_t offset)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (meta_codec_encode_record(rec, &bytes, &len) != RC_OK) {
        ring_clear(f);
        return;
    }
    while (f->ring_len > 0 && (f->ring_len == META_RING_RECORDS_MAX ||
                               f->ring_bytes + len > META_RING_BYTES_MAX)) {
        ring_pop(f);
    }
    struct fsm_record *r = &f->ring[(f->ring_head + f->ring_len) %
                                     META_RING_RECORDS_MAX];
    *r = (struct fsm_record){.offset = offset, .bytes = bytes, .len = len};
    f->ring_len++;
    f->ring_bytes += len;
}

int meta_fsm_records_since(const struct meta_fsm *f, int64_t from_offset,
                           size_t max, size_t *start, size_t *n)
{
    *start = 0;
    *n = 0;
    if (from_offset >= f->image.offset) {
        return RC_OK;
    }
    if (f->ring_len == 0 ||
        meta_fsm_ring_at(f, 0)->offset > from_offset + 1) {
        return RC_OUT_OF_RANGE;
    }
    /* Offsets in the ring are consecutive and end at image.offset. */
    int64_t first = meta_fsm_ring_at(f, 0)->offset;
    size_t skip = (size_t)(from_offset + 1 - first);
    size_t avail = f->ring_len - skip;
    *start = skip;
    *n = avail < max ? avail : max;
    return RC_OK;
}

static int fsm_apply_cb(struct raft_fsm *rf, const struct raft_buffer *buf,
                        void **result)
{
    struct meta_fsm *f = rf->data;
    struct meta_record *recs = NULL;
    size_t n = 0;
    f->entries_applied++;
    f->last = (struct fsm_result){.first_offset = f->image.offset + 1,
                                  .last_offset = f->image.offset};
    *result = &f->last;
    const uint8_t *payload = NULL;
    size_t len = 0;
    int rv = unframe(buf, &payload, &len);
    if (rv == RC_OK) {
        rv = meta_codec_decode_batch(payload, len, &recs, &n);
    }
    if (rv == RC_NOMEM) {
        /* Not the bytes' fault: the other controllers decode them, so
         * skipping here would make this image diverge from theirs. Stop,
         * as for an apply that runs out of memory; a restart replays the
         * log. */
        TRACE_ERROR(f->tracer, "out of memory decoding offset=%" PRId64
                    "; stopping", f->image.offset + 1);
        abort();
    }
    if (rv != RC_OK) {
        /* Every controller sees the same bytes and skips them alike. */
        TRACE_ERROR(f->tracer, "metadata entry of %zu bytes does not decode "
                    "(%s); skipped", buf->len, rc_str(rv));
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        rv = meta_apply(&f->image, &recs[i]);
        if (rv == RC_NOMEM) {
            /* Records before this one are applied: returning an error
             * would make Raft apply them again and this controller's
             * offsets drift from the others'. Stop instead; a restart
             * replays the log. */
            TRACE_ERROR(f->tracer, "out of memory applying offset=%" PRId64
                        "; stopping", f->image.offset + 1);
            abort();
        }
        if (rv != RC_OK) {
            char text[256];
            meta_record_describe(&f->image, &recs[i], text, sizeof text);
            TRACE_WARN(f->tracer, "offset=%" PRId64 " record does not apply "
                       "(%s): %s", f->image.offset, rc_str(rv), text);
            f->last.n_invalid++;
        }
        ring_push(f, &recs[i], f->image.offset);
    }
    f->last.last_offset = f->image.offset;
    free(recs);
    return 0;
}

static int fsm_snapshot_cb(struct raft_fsm *rf, struct raft_buffer *bufs[],
                           unsigned *n_bufs)
{
    struct meta_fsm *f = rf->data;
    uint8_t *bytes = NULL;
    size_t len = 0;
    int rv = meta_codec_encode_image(&f->image, raft_malloc, &bytes, &len);
    if (rv != RC_OK) {
        return rv == RC_NOMEM ? RAFT_NOMEM : RAFT_BUSY;
    }
    *bufs = raft_malloc(sizeof **bufs);
    if (*bufs == NULL) {
        raft_free(bytes);
        return RAFT_NOMEM;
    }
    rv = frame(bytes, len, &(*bufs)[0]);
    if (rv != RC_OK) {
        raft_free(*bufs);
        return RAFT_NOMEM;
    }
    *n_bufs = 1;
    TRACE_INFO(f->tracer, "snapshot of the metadata image at offset=%" PRId64
               " bytes=%zu", f->image.offset, len);
    return 0;
}

static int fsm_restore_cb(struct raft_fsm *rf, struct raft_buffer *buf)
{
    struct meta_fsm *f = rf->data;
    struct meta_image img;
    meta_image_init(&img);
    const uint8_t *payload = NULL;
    size_t len = 0;
    int rv = unframe(buf, &payload, &len);
    if (rv == RC_OK) {
        rv = meta_codec_decode_image(payload, len, &img);
    }
    if (rv != RC_OK) {
        TRACE_ERROR(f->tracer, "metadata snapshot does not decode: %s",
                    rc_str(rv));
        return RAFT_CORRUPT;
    }
    raft_free(buf->base);
    meta_image_free(&f->image);
    f->image = img;
    ring_clear(f);
    TRACE_INFO(f->tracer, "restored the metadata image at offset=%" PRId64,
               f->image.offset);
    return 0;
}
