/* Partition log (broker/log/log.h): segments, appends, reads, truncation and
 * recovery. Group commit lives in broker/log/log_sync.c. Loop thread only. */
#include "broker/log/log_cleaner.h"
#include "broker/log/log_internal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/io.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_filter.h"
#include "common/kafka/record_inflate.h"
#include "common/limits.h"
#include "common/rc.h"

void log_config_default(struct log_config *cfg)
{
    cfg->segment_bytes = 1073741824;
    cfg->segment_ms = 604800000;
    cfg->index_interval_bytes = 4096;
    cfg->segment_index_bytes = 10485760;
}

int64_t log_corrupt_offset(const struct log *l)
{
    return l->corrupt_offset;
}

int64_t log_start_offset(const struct log *l)
{
    int64_t first = l->segs[0]->base_offset;
    return l->start_offset > first ? l->start_offset : first;
}

int64_t log_end_offset(const struct log *l)
{
    return l->segs[l->n_segs - 1]->next_offset;
}

int64_t log_durable_end_offset(const struct log *l)
{
    return l->durable_end;
}

size_t log_segment_count(const struct log *l)
{
    return l->n_segs;
}

const struct log_epoch_cache *log_epochs(const struct log *l)
{
    return &l->epochs;
}

static struct log_segment *active(const struct log *l)
{
    return l->segs[l->n_segs - 1];
}

size_t log_index_entries_max(const struct log *l)
{
    int64_t n = l->cfg.segment_index_bytes / 8;
    if (n < 1) {
        n = 1;
    }
    return n > (int64_t)LOG_INDEX_ENTRIES_MAX ? LOG_INDEX_ENTRIES_MAX
                                              : (size_t)n;
}

int log_push_segment(struct log *l, struct log_segment *seg)
{
    if (l->n_segs == l->cap_segs) {
        size_t cap = l->cap_segs == 0 ? 8 : l->cap_segs * 2;
        void *p = realloc(l->segs, cap * sizeof *l->segs);
        if (p == NULL) {
            return RC_NOMEM;
        }
        l->segs = p;
        l->cap_segs = cap;
    }
    l->segs[l->n_segs++] = seg;
    return RC_OK;
}

int log_new_segment(struct log *l, int64_t base_offset)
{
    struct log_segment *seg = NULL;
    int rv = log_segment_create(&seg, l->dir, base_offset,
                                log_index_entries_max(l));
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s base=%" PRId64 " create segment: %s",
                    l->dir, base_offset, rc_str(rv));
        return rv;
    }
    rv = log_push_segment(l, seg);
    if (rv != RC_OK) {
        log_segment_delete(seg);
        log_segment_unref(seg);
        return rv;
    }
    seg->dirty = true;
    l->dir_dirty = true;
    return RC_OK;
}

/* Drops segs[i..] from the log, deleting their files. */
static void drop_segments_from(struct log *l, size_t i)
{
    while (l->n_segs > i) {
        struct log_segment *seg = l->segs[--l->n_segs];
        log_segment_delete(seg);
        log_segment_unref(seg);
        l->dir_dirty = true;
    }
}

int log_write_offset_file(struct log *l, const char *name, int64_t offset)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "0\n%" PRId64 "\n", offset);
    ASSERT(n > 0 && (size_t)n < sizeof buf);
    int rv = file_write_checked(l->dir, name, buf, (size_t)n);
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s write %s: %s", l->dir, name,
                    rc_str(rv));
    }
    return rv;
}

int log_write_recovery_point(struct log *l, int64_t offset)
{
    int rv = log_write_offset_file(l, LOG__RECOVERY_POINT_FILE, offset);
    if (rv == RC_OK) {
        l->recovery_point = offset;
    }
    return rv;
}

int log_write_start_offset(struct log *l, int64_t offset)
{
    int rv = log_write_offset_file(l, LOG__START_OFFSET_FILE, offset);
    if (rv == RC_OK) {
        l->start_offset = offset;
    }
    return rv;
}

/* "0\n<decimal offset>\n" and nothing else. */
static bool parse_offset_text(const char *s, int64_t *out)
{
    if (strncmp(s, "0\n", 2) != 0 || s[2] < '0' || s[2] > '9') {
        return false;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s + 2, &end, 10);
    if (errno != 0 || strcmp(end, "\n") != 0) {
        return false;
    }
    *out = v;
    return true;
}

int64_t log_read_offset_file(struct log *l, const char *name,
                             const char *if_bad)
{
    char buf[64 + FILE_CHECK_LINE_BYTES];
    size_t len = 0;
    bool unchecked = false;
    int64_t off = 0;
    int rv = file_read_checked(l->dir, name, buf, sizeof buf, &len,
                               &unchecked);
    if (rv == RC_NOT_FOUND) {
        return 0;
    }
    bool parsed = rv == RC_OK && parse_offset_text(buf, &off);
    if (parsed && !unchecked) {
        return off;
    }
    if (parsed) {
        TRACE_INFO(l->tracer, "dir=%s %s has no checksum (older format), "
                   "rewritten with one", l->dir, name);
    } else {
        const char *why = rv != RC_OK ? rc_str(rv)
                          : unchecked ? "no checksum line, no offset"
                                      : "no offset under a good checksum";
        TRACE_WARN(l->tracer, "dir=%s %s not trusted (%s): taken as 0, %s; "
                   "rewritten", l->dir, name, why, if_bad);
        off = 0;
    }
    /* A failure is logged; the next write tries again. */
    int wrv = log_write_offset_file(l, name, off);
    (void)wrv;
    return off;
}

int log_save_epochs(struct log *l)
{
    int rv = log_epoch_save(&l->epochs, l->dir);
    l->epochs_unsaved = rv != RC_OK;
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s save leader epochs: %s", l->dir,
                    rc_str(rv));
    }
    return rv;
}

/* The batch at base_offset is in the segment: records its epoch in the
 * cache and the checkpoint. The append has happened whatever this
 * returns, so failures are not the append's, but either stops the log
 * from taking more: a cache that cannot grow (reopening rebuilds the
 * cache from the batches), and a checkpoint that cannot be written, as
 * in log_assign_epoch(). A log that went on would, after a power loss,
 * trust segments below its recovery point with a checkpoint that never
 * heard of this epoch, and answer OffsetForLeaderEpoch with a wrong end
 * (Kafka takes the dir offline on a failed checkpoint write). */
static void note_epoch(struct log *l, int32_t epoch, int64_t base_offset)
{
    if (epoch <= log_epoch_latest(&l->epochs)) {
        return;
    }
    bool changed = false;
    int rv = log_epoch_assign(&l->epochs, epoch, base_offset, &changed);
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s epoch=%d at offset=%" PRId64
                    " not cached (%s): no more appends until reopened",
                    l->dir, epoch, base_offset, rc_str(rv));
        l->failed = rv;
        return;
    }
    if (changed) {
        rv = log_save_epochs(l);
        if (rv != RC_OK) {
            log_fail(l, rv, "saving the leader epoch cache");
        }
    }
}

/* Kafka's LogSegment.shouldRoll. The time rule compares the incoming
 * batch's max timestamp with the segment's first batch's, not a clock:
 * every replica then cuts its segments at the same batches, and a replica
 * copying old data does not start a segment per batch. A batch without a
 * timestamp (-1) is taken as sent now_ms (the wall clock). */
static bool should_roll(const struct log *l, size_t len,
                        const struct record_batch_header *h, int64_t now_ms)
{
    int64_t ts = h->max_timestamp >= 0 ? h->max_timestamp : now_ms;
    const struct log_segment *seg = active(l);
    if (seg->size == 0) {
        return false;
    }
    if (seg->size + (int64_t)len > l->cfg.segment_bytes) {
        return true;
    }
    if (seg->first_timestamp >= 0 &&
        ts - seg->first_timestamp > l->cfg.segment_ms) {
        return true;
    }
    int64_t last_offset = record_batch_last_offset(h);
    if (log_index_full(&seg->index)) {
        return true;
    }
    return last_offset - seg->base_offset > INT32_MAX;
}

static int roll_at(struct log *l, int64_t base_offset)
{
    struct log_segment *old = active(l);
    int rv = log_segment_save_index(old);
    if (rv != RC_OK) {
        /* Rebuildable; recovery validates it. */
        TRACE_WARN(l->tracer, "dir=%s base=%" PRId64 " save index: %s",
                   l->dir, old->base_offset, rc_str(rv));
    }
    TRACE_DEBUG(l->tracer, "dir=%s rolled new segment base=%" PRId64,
                l->dir, base_offset);
    return log_new_segment(l, base_offset);
}

int log_roll(struct log *l)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    if (active(l)->size == 0) {
        return RC_OK;
    }
    return roll_at(l, log_end_offset(l));
}

static int append_checked(struct log *l, const uint8_t *p, size_t len,
                          const struct record_batch_header *h,
                          int64_t now_ms, struct log_append_info *info)
{
    if ((int64_t)len > l->cfg.segment_bytes) {
        return RC_TOO_LARGE;
    }
    int rv = RC_OK;
    if (should_roll(l, len, h, now_ms)) {
        rv = roll_at(l, h->base_offset);
        if (rv == RC_IO || rv == RC_NO_SPACE) {
            log_fail(l, rv, "roll a new segment");
        }
        if (rv != RC_OK) {
            return rv;
        }
    }
    if (l->epochs_unsaved) {
        /* Batches of a new epoch are never written with no durable
         * record of where it starts: a later truncation could keep what
         * diverged. The log stops, as on any failed sync. */
        rv = log_save_epochs(l);
        if (rv != RC_OK) {
            log_fail(l, rv, "saving the leader epoch cache");
            return rv;
        }
    }
    struct log_segment *seg = active(l);
    rv = log_segment_append(seg, p, len, h, l->cfg.index_interval_bytes);
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s base=%" PRId64 " append: %s", l->dir,
                    seg->base_offset, rc_str(rv));
        log_fail(l, rv, "append");
        return rv;
    }
    seg->dirty = true;
    note_epoch(l, h->partition_leader_epoch, h->base_offset);
    *info = (struct log_append_info){
        .base_offset = h->base_offset,
        .last_offset = record_batch_last_offset(h),
        .max_timestamp = h->max_timestamp,
        .bytes = (int64_t)len,
    };
    return RC_OK;
}

int log_append_validated(struct log *l, uint8_t *batch, size_t len,
                         const struct record_batch_header *validated,
                         int32_t leader_epoch, int64_t now_ms,
                         struct log_append_info *info)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    ASSERT(leader_epoch >= 0);
    ASSERT(record_batch_size(validated) == (int64_t)len);
    if (l->failed != RC_OK) {
        return l->failed;
    }
    struct record_batch_header h = *validated;
    h.base_offset = log_end_offset(l);
    h.partition_leader_epoch = leader_epoch;
    record_batch_set_base_offset(batch, h.base_offset);
    record_batch_set_leader_epoch(batch, leader_epoch);
    return append_checked(l, batch, len, &h, now_ms, info);
}

int log_append(struct log *l, uint8_t *batch, size_t len,
               int32_t leader_epoch, int64_t now_ms,
               struct log_append_info *info)
{
    struct record_batch_header h;
    int rv = record_batch_validate(batch, len, true, &h);
    if (rv != RC_OK) {
        return rv;
    }
    return log_append_validated(l, batch, len, &h, leader_epoch, now_ms,
                                info);
}

int log_append_replica(struct log *l, const uint8_t *batch, size_t len,
                       int64_t now_ms, struct log_append_info *info)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    if (l->failed != RC_OK) {
        return l->failed;
    }
    struct record_batch_header h;
    int rv = record_batch_validate(batch, len, false, &h);
    if (rv != RC_OK) {
        return rv;
    }
    if (h.base_offset < log_end_offset(l) || h.partition_leader_epoch < 0) {
        return RC_INVALID;
    }
    return append_checked(l, batch, len, &h, now_ms, info);
}

/* Index of the last segment whose base offset is <= offset (0 if none). */
static size_t segment_for(const struct log *l, int64_t offset)
{
    size_t lo = 0;
    size_t hi = l->n_segs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->segs[mid]->base_offset <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo == 0 ? 0 : lo - 1;
}

/* End position in seg of the span starting at pos: batches below
 * max_offset, at most max_bytes but at least the first batch. */
static int span_end(struct log *l, const struct log_segment *seg,
                    int64_t pos, const struct record_batch_header *first,
                    int64_t max_bytes, int64_t max_offset, int64_t *end)
{
    *end = seg->size;
    if (max_offset < seg->next_offset) {
        struct record_batch_header h;
        int rv = log_segment_find(seg, l->scan_buf, max_offset, end, &h);
        if (rv != RC_OK && rv != RC_NOT_FOUND) {
            return rv;
        }
    }
    if (*end - pos <= max_bytes) {
        return RC_OK;
    }
    int rv = log_segment_boundary_before(seg, l->scan_buf, pos,
                                         pos + max_bytes, end);
    if (rv == RC_OK && *end == pos) {
        *end = pos + record_batch_size(first); /* always one whole batch */
    }
    return rv;
}

int log_read(struct log *l, int64_t offset, int64_t max_bytes,
             int64_t max_offset, struct log_span *span)
{
    *span = (struct log_span){.fd = -1, .first_offset = offset};
    int64_t end = log_end_offset(l);
    if (offset < log_start_offset(l) || offset > end) {
        return RC_OUT_OF_RANGE;
    }
    if (offset == end) {
        return RC_OK; /* nothing yet: an idle reader opens no file */
    }
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    if (max_offset > end) {
        max_offset = end;
    }
    for (size_t i = segment_for(l, offset); i < l->n_segs; i++) {
        struct log_segment *seg = l->segs[i];
        struct record_batch_header h;
        int64_t pos = 0;
        int rv = log_segment_find(seg, l->scan_buf, offset, &pos, &h);
        if (rv == RC_NOT_FOUND) {
            continue; /* nothing at or after offset here */
        }
        if (rv != RC_OK) {
            return rv;
        }
        if (record_batch_last_offset(&h) >= end) {
            /* It claims offsets past the log end, which an intact batch
             * never does (the end is where the last one stops): its
             * header is damaged. Handed out alone, so that the reader's
             * check finds it (log_verify.h); an empty span here would
             * leave the fetchers and the scrub reading nothing there,
             * ever again. */
            int64_t size = record_batch_size(&h);
            log_segment_ref(seg);
            *span = (struct log_span){
                .seg = seg, .fd = seg->fd, .position = pos,
                .bytes = size < seg->size - pos ? size : seg->size - pos,
                .first_offset = h.base_offset};
            return RC_OK;
        }
        if (record_batch_last_offset(&h) >= max_offset) {
            return RC_OK;
        }
        int64_t stop = 0;
        rv = span_end(l, seg, pos, &h, max_bytes, max_offset, &stop);
        if (rv != RC_OK) {
            return rv;
        }
        log_segment_ref(seg);
        *span = (struct log_span){.seg = seg, .fd = seg->fd, .position = pos,
                                  .bytes = stop - pos,
                                  .first_offset = h.base_offset};
        return RC_OK;
    }
    return RC_OK;
}

void log_span_release(struct log_span *span)
{
    if (span->seg != NULL) {
        log_segment_unref(span->seg);
    }
    *span = (struct log_span){.fd = -1};
}

int log_for_each_batch(struct log *l, int64_t from, log_batch_cb cb,
                       void *arg)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    for (size_t i = segment_for(l, from); i < l->n_segs; i++) {
        struct log_segment *seg = l->segs[i];
        struct record_batch_header h;
        int64_t pos = 0;
        int rv = log_segment_find(seg, l->scan_buf, from, &pos, &h);
        if (rv == RC_NOT_FOUND) {
            continue;
        }
        if (rv != RC_OK) {
            return rv;
        }
        struct log_scan s;
        log_scan_init(&s, seg, l->scan_buf, pos, seg->size);
        while ((rv = log_scan_next(&s, false, &h, &pos)) == RC_OK) {
            cb(arg, &h);
        }
        if (rv != RC_NOT_FOUND) {
            return rv;
        }
    }
    return RC_OK;
}

/* The record a batch's walk is after (record_filter() calls
 * time_find_record() with each record, which keeps nothing). */
struct time_find {
    int64_t ts;        /* the first record with an effective timestamp */
    bool exact;        /* == ts (MAX_TIMESTAMP), else >= ts */
    int64_t min_offset; /* and an offset at or above this */
    int64_t batch_ts;  /* a LogAppendTime batch's maxTimestamp, else -1 */
    int64_t offset;    /* -1 until found */
    int64_t found_ts;
};

static bool time_find_record(void *arg, const struct record_view *r)
{
    struct time_find *f = arg;
    /* Kafka's records of a LogAppendTime batch all carry its time. */
    int64_t ts = f->batch_ts >= 0 ? f->batch_ts : r->timestamp;
    bool hit = f->exact ? ts == f->ts : ts >= f->ts;
    if (f->offset < 0 && hit && r->offset >= f->min_offset) {
        f->offset = r->offset;
        f->found_ts = ts;
    }
    return false; /* nothing is written: only looked at */
}

/* Walks the records of batch h at pos in seg (read through the scan's
 * buffer, or on its own when larger, and decompressed if need be). */
static int time_find_in_batch(struct log_scan *s, int64_t pos,
                              const struct record_batch_header *h,
                              struct time_find *f)
{
    f->batch_ts = (h->attributes & RECORD_BATCH_ATTR_LOG_APPEND_TIME) != 0
                      ? h->max_timestamp
                      : -1;
    size_t size = (size_t)record_batch_size(h);
    const uint8_t *bytes = NULL;
    uint8_t *own = NULL;
    int rv = log_scan_bytes(s, pos, h, &bytes);
    if (rv == RC_TOO_LARGE) {
        own = malloc(size);
        rv = own == NULL ? RC_NOMEM : RC_OK;
        if (rv == RC_OK &&
            io_pread(s->seg->fd, own, size, (off_t)pos) != (ssize_t)size) {
            rv = RC_IO;
        }
        bytes = own;
    }
    struct record_inflate *z = NULL;
    if (rv == RC_OK) {
        rv = record_inflate_new(&z);
    }
    if (rv == RC_OK) {
        struct writer scratch;
        writer_init(&scratch, RECORD_INFLATED_BYTES_MAX);
        int32_t kept = 0;
        rv = record_filter(z, &scratch, bytes, size, h, time_find_record, f,
                           false, NULL, &kept);
        writer_free(&scratch);
    }
    record_inflate_free(z);
    free(own);
    return rv == RC_SHORT ? RC_CORRUPT : rv;
}

static void time_found(const struct time_find *f,
                       const struct record_batch_header *h,
                       struct log_time_offset *out)
{
    *out = (struct log_time_offset){
        .timestamp = f->found_ts, .offset = f->offset,
        .leader_epoch = h->partition_leader_epoch >= 0
                            ? h->partition_leader_epoch
                            : -1};
}

/* Kafka's LogSegment.findOffsetByTimestamp: from the time index's entry
 * below ts (and not before min_offset), each batch whose maxTimestamp
 * reaches ts is walked for its first record at or after ts and at or
 * above min_offset; RC_NOT_FOUND at the segment's end. */
static int segment_offset_for_timestamp(struct log *l,
                                        const struct log_segment *seg,
                                        int64_t ts, int64_t min_offset,
                                        struct log_time_offset *out)
{
    int64_t rel = log_index_time_floor(&seg->index, ts);
    if (min_offset - seg->base_offset > rel) {
        rel = min_offset - seg->base_offset;
    }
    if (rel > INT32_MAX) {
        rel = INT32_MAX;
    }
    struct log_index_entry e = log_index_floor(&seg->index, (int32_t)rel);
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = 0;
    int rv;
    log_scan_init(&s, seg, l->scan_buf, e.position, seg->size);
    while ((rv = log_scan_next(&s, false, &h, &pos)) == RC_OK) {
        if (h.max_timestamp < ts || record_batch_last_offset(&h) < min_offset) {
            continue;
        }
        struct time_find f = {.ts = ts, .min_offset = min_offset,
                              .offset = -1};
        rv = time_find_in_batch(&s, pos, &h, &f);
        if (rv != RC_OK) {
            return rv;
        }
        if (f.offset >= 0) {
            time_found(&f, &h, out);
            return RC_OK;
        }
    }
    return rv == RC_NOT_FOUND ? RC_NOT_FOUND
                              : (rv == RC_IO ? RC_IO : RC_CORRUPT);
}

int log_offset_for_timestamp(struct log *l, int64_t ts,
                             struct log_time_offset *out)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    /* Only the first segment whose largest timestamp reaches ts is
     * searched, as Kafka's UnifiedLog.searchOffsetInLocalLog does: its
     * largest timestamp may be a record below the log start offset (still
     * in the file), and then the answer is "none" even if a later segment
     * has a record at or after ts. */
    for (size_t i = 0; i < l->n_segs; i++) {
        if (l->segs[i]->max_timestamp >= ts) {
            return segment_offset_for_timestamp(l, l->segs[i], ts,
                                                log_start_offset(l), out);
        }
    }
    return RC_NOT_FOUND;
}

int log_offset_of_max_timestamp(struct log *l, struct log_time_offset *out)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    /* Kafka's UnifiedLog (MAX_TIMESTAMP): the segment with the largest
     * maxTimestamp (the first of equals), the first batch in it to reach
     * that time, the first record in that batch that has it. The log
     * start offset is not looked at (Kafka's is not either). */
    struct log_segment *seg = l->segs[0];
    for (size_t i = 1; i < l->n_segs; i++) {
        if (l->segs[i]->max_timestamp > seg->max_timestamp) {
            seg = l->segs[i];
        }
    }
    int64_t pos = 0;
    struct record_batch_header h;
    int rv = log_segment_max_timestamp_batch(seg, l->scan_buf, &pos, &h);
    if (rv != RC_OK) {
        return rv;
    }
    struct log_scan s;
    log_scan_init(&s, seg, l->scan_buf, pos, seg->size);
    struct time_find f = {.ts = h.max_timestamp, .exact = true,
                          .min_offset = INT64_MIN, .offset = -1};
    rv = time_find_in_batch(&s, pos, &h, &f);
    if (rv != RC_OK) {
        return rv;
    }
    if (f.offset < 0) {
        return RC_NOT_FOUND; /* no record has it: Kafka answers none too */
    }
    time_found(&f, &h, out);
    return RC_OK;
}

/* After any cut: the durable end and recovery point cannot stay above the
 * new end, waiters beyond it fail, and stale epochs go. */
static int after_truncation(struct log *l)
{
    /* The cut segment's records after the cut will be new: it is dirty. */
    log_clean_truncated(l, active(l)->base_offset);
    int64_t end = log_end_offset(l);
    l->truncations++;
    if (l->durable_end > end) {
        l->durable_end = end;
    }
    log_sync_fail_waiters_above(l, end, RC_OUT_OF_RANGE);
    int rv = RC_OK;
    if (log_epoch_truncate_from_end(&l->epochs, end)) {
        rv = log_save_epochs(l);
    }
    int64_t rp = active(l)->base_offset;
    if (rv == RC_OK && l->recovery_point > rp) {
        rv = log_write_recovery_point(l, rp);
    }
    if (rv != RC_OK) {
        /* The cut is not durable until the next sync: without the lower
         * recovery point (or the shorter epoch cache) a power loss would
         * trust the segments as they were and bring the cut records back
         * unchecked. */
        log_fail(l, rv, "a checkpoint after a truncation");
    }
    return rv;
}

int log_truncate_fully_and_start_at(struct log *l, int64_t offset)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    ASSERT(offset >= 0);
    TRACE_INFO(l->tracer, "dir=%s truncate fully, start at offset=%" PRId64,
               l->dir, offset);
    /* The segment to keep exists before the others go, so a failure
     * leaves the log as it was, never without a segment. One already
     * based at offset is emptied and kept (its name is taken). */
    size_t keep = l->n_segs;
    for (size_t i = 0; i < l->n_segs; i++) {
        if (l->segs[i]->base_offset == offset) {
            keep = i;
        }
    }
    int rv = RC_OK;
    if (keep < l->n_segs) {
        rv = log_segment_truncate_to(l->segs[keep], l->scan_buf, offset);
        if (rv != RC_OK) {
            log_fail(l, rv, "truncate");
            return rv;
        }
        l->segs[keep]->dirty = true;
    } else {
        rv = log_new_segment(l, offset);
        if (rv != RC_OK) {
            return rv;
        }
        keep = l->n_segs - 1;
    }
    struct log_segment *kept = l->segs[keep];
    l->segs[keep] = l->segs[l->n_segs - 1];
    l->n_segs--;
    drop_segments_from(l, 0);
    l->segs[l->n_segs++] = kept;
    log_epoch_truncate_from_end(&l->epochs, 0);
    l->durable_end = offset;
    l->truncations++;
    l->corrupt_offset = -1;
    log_sync_fail_waiters_above(l, offset, RC_OUT_OF_RANGE);
    rv = log_save_epochs(l);
    if (rv == RC_OK) {
        rv = log_write_recovery_point(l, offset);
    }
    if (rv == RC_OK) { /* the log starts here now, even below the old start */
        rv = log_write_start_offset(l, offset);
    }
    log_clean_truncated(l, offset);
    if (rv != RC_OK) { /* as after_truncation(): the cut is not safe */
        log_fail(l, rv, "a checkpoint after a truncation");
    }
    return rv;
}

int log_truncate_to(struct log *l, int64_t offset)
{
    if (offset >= log_end_offset(l)) {
        /* Nothing to cut, but an epoch that starts at the log end holds
         * no record: a leader that was deposed before appending in it.
         * Kafka's UnifiedLog.truncateTo drops it all the same; kept, the
         * follower would ask its leader about that epoch forever. */
        if (log_epoch_truncate_from_end(&l->epochs, log_end_offset(l))) {
            /* Written before the next batch (append_checked()) or at
             * close, not now: what goes holds no record, so a checkpoint
             * that still names it after a crash is one this call drops
             * again. A follower of thousands of partitions whose leader
             * it was wrote and synced a file for each, on the loop. */
            l->epochs_unsaved = true;
        }
        return RC_OK; /* no file touched: a parked log stays parked */
    }
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    if (offset <= log_start_offset(l)) {
        return log_truncate_fully_and_start_at(l, offset);
    }
    size_t i = segment_for(l, offset);
    if (l->segs[i]->base_offset == offset && i > 0) {
        i--; /* keep the previous segment active rather than an empty one */
    }
    drop_segments_from(l, i + 1);
    int rv = log_segment_truncate_to(l->segs[i], l->scan_buf, offset);
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s truncate to offset=%" PRId64 ": %s",
                    l->dir, offset, rc_str(rv));
        log_fail(l, rv, "truncate");
        return rv;
    }
    l->segs[i]->dirty = true;
    if (l->corrupt_offset >= log_end_offset(l)) {
        l->corrupt_offset = -1; /* the damage is cut off */
    }
    TRACE_INFO(l->tracer, "dir=%s truncated to offset=%" PRId64
               " end=%" PRId64, l->dir, offset, log_end_offset(l));
    return after_truncation(l);
}

int log_assign_epoch(struct log *l, int32_t epoch)
{
    bool changed = false;
    int rv = log_epoch_assign(&l->epochs, epoch, log_end_offset(l), &changed);
    if (rv == RC_OK && changed) {
        /* The checkpoint is written before the first batch of the epoch
         * (append_checked()). Until then the entry holds no record: lost
         * in a crash, it is one that Kafka's truncateTo drops anyway (an
         * epoch starting at the log end). A broker that takes thousands
         * of leaderships at once writes no file for the idle ones. */
        l->epochs_unsaved = true;
    }
    return rv;
}

void log_end_offset_for_epoch(const struct log *l, int32_t epoch,
                              int32_t *epoch_out, int64_t *end_offset_out)
{
    log_epoch_end_offset_for(&l->epochs, epoch, log_end_offset(l),
                             epoch_out, end_offset_out);
}

void log_set_config(struct log *l, const struct log_config *cfg)
{
    l->cfg = *cfg;
}
