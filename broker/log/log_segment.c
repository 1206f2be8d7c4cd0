/* Partition log segment (broker/log/log_segment.h). */
#include "broker/log/log_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/rc.h"

/* Segment files open in this process: counted by the loop thread, and
 * by the threads that open logs for it (log_open_detached()). */
static atomic_size_t segment_fds_open;

size_t log_segment_fds_open(void)
{
    return atomic_load_explicit(&segment_fds_open, memory_order_relaxed);
}

int log_segment_path(char *out, size_t cap, const char *dir,
                     int64_t base_offset)
{
    int n = snprintf(out, cap, "%s/%020lld.log", dir, (long long)base_offset);
    return (n < 0 || (size_t)n >= cap) ? RC_TOO_LARGE : RC_OK;
}

static int segment_new(struct log_segment **out, const char *dir,
                       int64_t base_offset, size_t index_max, int flags)
{
    char path[LOG_PATH_BYTES_MAX];
    int rv = log_segment_path(path, sizeof path, dir, base_offset);
    if (rv != RC_OK) {
        return rv;
    }
    int fd = io_open(path, O_RDWR | O_CLOEXEC | flags, 0644);
    if (fd < 0) {
        return errno == ENOENT ? RC_NOT_FOUND : io_rc(errno);
    }
    rv = log_segment_adopt(out, dir, base_offset, index_max, fd);
    if (rv != RC_OK) {
        io_close(fd);
    }
    return rv;
}

int log_segment_create(struct log_segment **out, const char *dir,
                       int64_t base_offset, size_t index_max)
{
    int rv = segment_new(out, dir, base_offset, index_max,
                         O_CREAT | O_TRUNC);
    if (rv == RC_OK) {
        log_index_unlink(dir, base_offset);
    }
    return rv;
}

int log_segment_open(struct log_segment **out, const char *dir,
                     int64_t base_offset, size_t index_max)
{
    return segment_new(out, dir, base_offset, index_max, 0);
}

int log_segment_adopt(struct log_segment **out, const char *dir,
                      int64_t base_offset, size_t index_max, int fd)
{
    off_t size = 0;
    if (io_fsize(fd, &size) != 0) {
        return RC_IO;
    }
    struct log_segment *seg = calloc(1, sizeof *seg);
    if (seg == NULL) {
        return RC_NOMEM;
    }
    seg->fd = fd;
    atomic_fetch_add_explicit(&segment_fds_open, 1, memory_order_relaxed);
    seg->dir = dir;
    seg->base_offset = base_offset;
    seg->size = size;
    seg->size_low = size;
    seg->next_offset = base_offset;
    seg->max_timestamp = -1;
    seg->max_timestamp_batch = -1;
    seg->first_timestamp = -1;
    seg->refs = 1;
    log_index_init(&seg->index, index_max);
    *out = seg;
    return RC_OK;
}

void log_segment_ref(struct log_segment *seg)
{
    ASSERT(seg->refs > 0);
    seg->refs++;
}

void log_segment_unref(struct log_segment *seg)
{
    ASSERT(seg->refs > 0);
    if (--seg->refs > 0) {
        return;
    }
    log_segment_close_fd(seg);
    log_index_free(&seg->index);
    free(seg);
}

void log_segment_close_fd(struct log_segment *seg)
{
    if (seg->fd >= 0) {
        io_close(seg->fd);
        seg->fd = -1;
        atomic_fetch_sub_explicit(&segment_fds_open, 1,
                                  memory_order_relaxed);
    }
}

int log_segment_reopen(struct log_segment *seg)
{
    if (seg->fd >= 0) {
        return RC_OK;
    }
    if (seg->deleted) {
        return RC_NOT_FOUND; /* never parked: a holder keeps it open */
    }
    char path[LOG_PATH_BYTES_MAX];
    int rv = log_segment_path(path, sizeof path, seg->dir, seg->base_offset);
    if (rv != RC_OK) {
        return rv;
    }
    int fd = io_open(path, O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) {
        return errno == ENOENT ? RC_NOT_FOUND : io_rc(errno);
    }
    seg->fd = fd;
    atomic_fetch_add_explicit(&segment_fds_open, 1, memory_order_relaxed);
    return RC_OK;
}

void log_segment_delete(struct log_segment *seg)
{
    char path[LOG_PATH_BYTES_MAX];
    if (log_segment_path(path, sizeof path, seg->dir, seg->base_offset) ==
        RC_OK) {
        io_unlink(path);
    }
    log_index_unlink(seg->dir, seg->base_offset);
    seg->deleted = true;
}

/* Bookkeeping for one batch at pos, shared by append and recovery. */
static void account_batch(struct log_segment *seg,
                          const struct record_batch_header *h, int64_t pos,
                          int64_t len, int64_t index_interval_bytes)
{
    int32_t rel = (int32_t)(h->base_offset - seg->base_offset);
    if (pos > 0 && seg->bytes_since_index > index_interval_bytes &&
        !log_index_full(&seg->index)) {
        /* Out of memory leaves the index sparser, still correct. */
        if (log_index_add(&seg->index, rel, (int32_t)pos) == RC_OK) {
            if (seg->max_timestamp >= 0) {
                int trv = log_index_add_time(&seg->index,
                                             seg->max_timestamp, rel);
                (void)trv; /* a missing time entry only widens a scan */
            }
            seg->bytes_since_index = 0;
        }
    }
    seg->bytes_since_index += len;
    if (seg->size == pos && pos == 0) {
        seg->first_timestamp = h->max_timestamp;
    }
    if (h->max_timestamp > seg->max_timestamp) {
        seg->max_timestamp = h->max_timestamp;
        seg->max_timestamp_batch = h->base_offset;
    }
    seg->next_offset = record_batch_last_offset(h) + 1;
    seg->size = pos + len;
}

int log_segment_append(struct log_segment *seg, const uint8_t *p, size_t len,
                       const struct record_batch_header *hdr,
                       int64_t index_interval_bytes)
{
    ASSERT(!seg->deleted);
    ASSERT(hdr->base_offset >= seg->next_offset);
    ASSERT(record_batch_last_offset(hdr) - seg->base_offset <= INT32_MAX);
    ASSERT(seg->size + (int64_t)len <= (int64_t)LOG_SEGMENT_BYTES_MAX);
    int64_t pos = seg->size;
    size_t done = 0;
    while (done < len) {
        ssize_t n = io_pwrite(seg->fd, p + done, len - done,
                           (off_t)(pos + (int64_t)done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            /* Leave no partial batch behind; if even that fails, recovery
             * cuts it on the next open (the size kept in memory is pos,
             * so nothing here reads or counts the torn bytes). */
            int rv = n < 0 ? io_rc(errno) : RC_IO;
            int cut = io_ftruncate(seg->fd, (off_t)pos);
            (void)cut;
            return rv;
        }
        done += (size_t)n;
    }
    account_batch(seg, hdr, pos, (int64_t)len, index_interval_bytes);
    return RC_OK;
}

void log_scan_init(struct log_scan *s, const struct log_segment *seg,
                   uint8_t *buf, int64_t from_pos, int64_t limit)
{
    *s = (struct log_scan){.seg = seg, .buf = buf,
                           .cap = LOG_SCAN_BUFFER_BYTES,
                           .fill_bytes = LOG_SCAN_FIRST_READ_BYTES,
                           .pos = from_pos,
                           .limit = limit};
}

void log_scan_init_whole(struct log_scan *s, const struct log_segment *seg,
                         uint8_t *buf, size_t cap, int64_t from_pos,
                         int64_t limit)
{
    ASSERT(cap >= BATCH_HEADER_BYTES);
    *s = (struct log_scan){.seg = seg, .buf = buf, .cap = cap,
                           .fill_bytes = cap, .pos = from_pos,
                           .limit = limit};
}

/* Makes file bytes [pos, pos + n) available in the buffer; n <= cap. */
static int scan_fill(struct log_scan *s, int64_t pos, size_t n)
{
    if (pos >= s->buf_pos &&
        pos + (int64_t)n <= s->buf_pos + (int64_t)s->buf_len) {
        return RC_OK;
    }
    int64_t avail = s->limit - pos;
    size_t want = s->fill_bytes > n ? s->fill_bytes : n;
    if ((int64_t)want > avail) {
        if (avail < (int64_t)n) {
            return RC_SHORT;
        }
        want = (size_t)avail;
    }
    if (s->fill_bytes < s->cap) {
        s->fill_bytes *= 2;
    }
    ssize_t got;
    do {
        got = io_pread(s->seg->fd, s->buf, want, (off_t)pos);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return RC_IO;
    }
    s->buf_pos = pos;
    s->buf_len = (size_t)got;
    return (size_t)got < n ? RC_SHORT : RC_OK;
}

/* CRC of a batch too large for the buffer, read in buffer-sized chunks. */
static int scan_crc_chunked(struct log_scan *s, int64_t pos, int64_t size,
                            uint32_t *crc_out)
{
    uint32_t crc = 0;
    int64_t at = pos + RECORD_BATCH_OFF_ATTRIBUTES;
    int64_t end = pos + size;
    s->buf_len = 0; /* the buffer is reused below */
    while (at < end) {
        size_t n = end - at < (int64_t)s->cap ? (size_t)(end - at) : s->cap;
        ssize_t got = io_pread(s->seg->fd, s->buf, n, (off_t)at);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return got < 0 ? RC_IO : RC_SHORT;
        }
        crc = crc32c_extend(crc, s->buf, (size_t)got);
        at += got;
    }
    *crc_out = crc;
    return RC_OK;
}

static int scan_verify(struct log_scan *s, int64_t pos,
                       const struct record_batch_header *h)
{
    int64_t size = record_batch_size(h);
    if (size <= (int64_t)s->cap) {
        int rv = scan_fill(s, pos, (size_t)size);
        if (rv != RC_OK) {
            return rv;
        }
        return record_batch_crc_ok(s->buf + (pos - s->buf_pos), h)
                   ? RC_OK
                   : RC_CORRUPT;
    }
    uint32_t crc = 0;
    int rv = scan_crc_chunked(s, pos, size, &crc);
    if (rv != RC_OK) {
        return rv;
    }
    return crc == h->crc ? RC_OK : RC_CORRUPT;
}

int log_scan_next(struct log_scan *s, bool verify_crc,
                  struct record_batch_header *h, int64_t *pos)
{
    if (s->pos >= s->limit) {
        return RC_NOT_FOUND;
    }
    int rv = scan_fill(s, s->pos, BATCH_HEADER_BYTES);
    if (rv != RC_OK) {
        return rv;
    }
    rv = record_batch_parse(s->buf + (s->pos - s->buf_pos), BATCH_HEADER_BYTES,
                            h);
    if (rv != RC_OK) {
        return rv;
    }
    if (s->pos + record_batch_size(h) > s->limit) {
        return RC_SHORT;
    }
    if (verify_crc) {
        rv = scan_verify(s, s->pos, h);
        if (rv != RC_OK) {
            return rv;
        }
    }
    *pos = s->pos;
    s->pos += record_batch_size(h);
    return RC_OK;
}

int log_scan_bytes(struct log_scan *s, int64_t pos,
                   const struct record_batch_header *h, const uint8_t **bytes)
{
    int64_t size = record_batch_size(h);
    if (size > (int64_t)s->cap) {
        return RC_TOO_LARGE;
    }
    int rv = scan_fill(s, pos, (size_t)size);
    if (rv == RC_OK) {
        *bytes = s->buf + (pos - s->buf_pos);
    }
    return rv;
}

static void reset_stats(struct log_segment *seg)
{
    log_index_clear(&seg->index);
    seg->bytes_since_index = 0;
    seg->next_offset = seg->base_offset;
    seg->max_timestamp = -1;
    seg->max_timestamp_batch = -1;
    seg->first_timestamp = -1;
}

/* A batch read back from disk must fit where it sits: after next_offset
 * in a segment based at base. */
static bool batch_fits_after(int64_t base, int64_t next_offset,
                             const struct record_batch_header *h)
{
    return record_batch_check_counts(h, false) == RC_OK &&
           h->base_offset >= next_offset &&
           record_batch_last_offset(h) - base <= INT32_MAX;
}

static bool batch_fits(const struct log_segment *seg,
                       const struct record_batch_header *h)
{
    return batch_fits_after(seg->base_offset, seg->next_offset, h);
}

int log_segment_verify(const struct log_segment *seg, uint8_t *buf,
                       size_t cap, int64_t from_pos, int64_t limit,
                       int64_t budget_bytes, int64_t *stop_pos,
                       int64_t *next_offset)
{
    ASSERT(budget_bytes > 0);
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = from_pos;
    int64_t next = *next_offset;
    int rv = RC_OK;
    log_scan_init_whole(&s, seg, buf, cap, from_pos, limit);
    while (s.pos - from_pos < budget_bytes &&
           (rv = log_scan_next(&s, true, &h, &pos)) == RC_OK) {
        if (!batch_fits_after(seg->base_offset, next, &h)) {
            *stop_pos = pos; /* read whole: the scan is past it */
            *next_offset = next;
            return RC_CORRUPT;
        }
        next = record_batch_last_offset(&h) + 1;
    }
    *stop_pos = s.pos;
    *next_offset = next;
    if (rv == RC_OK || rv == RC_NOT_FOUND) {
        return RC_OK;
    }
    return rv == RC_IO ? RC_IO : RC_CORRUPT;
}

int log_segment_recover(struct log_segment *seg, uint8_t *scan_buf,
                        int64_t index_interval_bytes, int64_t *cut_at,
                        log_segment_batch_cb cb, void *cb_arg)
{
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = 0;
    int64_t file_size = seg->size;
    int rv;
    reset_stats(seg);
    seg->size = 0;
    log_scan_init(&s, seg, scan_buf, 0, file_size);
    while ((rv = log_scan_next(&s, true, &h, &pos)) == RC_OK &&
           batch_fits(seg, &h)) {
        account_batch(seg, &h, pos, record_batch_size(&h),
                      index_interval_bytes);
        if (cb != NULL) {
            cb(cb_arg, &h);
        }
    }
    if (rv == RC_IO) {
        return RC_IO;
    }
    *cut_at = -1;
    if (seg->size < file_size) {
        if (seg->size < seg->size_low) {
            seg->size_low = seg->size;
        }
        if (io_ftruncate(seg->fd, (off_t)seg->size) != 0) {
            return RC_IO;
        }
        *cut_at = seg->size;
    }
    return RC_OK;
}

/* Recomputes next_offset, max_timestamp and bytes_since_index from the
 * index and a scan of the bytes after its last entry. */
static int scan_tail(struct log_segment *seg, uint8_t *scan_buf)
{
    struct log_index_entry e = {0, 0};
    if (seg->index.n_entries > 0) {
        e = seg->index.entries[seg->index.n_entries - 1];
    }
    seg->next_offset = seg->base_offset + e.rel_offset;
    seg->max_timestamp = log_index_last_time(&seg->index);
    seg->max_timestamp_batch = -1; /* before the tail: found when asked */
    seg->first_timestamp = -1;
    seg->bytes_since_index = seg->size - e.position;
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = 0;
    int rv;
    if (seg->size > 0) {
        log_scan_init(&s, seg, scan_buf, 0, seg->size);
        rv = log_scan_next(&s, false, &h, &pos);
        if (rv != RC_OK) {
            return rv == RC_IO ? RC_IO : RC_CORRUPT;
        }
        seg->first_timestamp = h.max_timestamp;
    }
    log_scan_init(&s, seg, scan_buf, e.position, seg->size);
    while ((rv = log_scan_next(&s, false, &h, &pos)) == RC_OK) {
        if (!batch_fits(seg, &h)) {
            return RC_CORRUPT;
        }
        seg->next_offset = record_batch_last_offset(&h) + 1;
        if (h.max_timestamp > seg->max_timestamp) {
            seg->max_timestamp = h.max_timestamp;
            seg->max_timestamp_batch = h.base_offset;
        }
    }
    if (rv != RC_NOT_FOUND) {
        return rv == RC_IO ? RC_IO : RC_CORRUPT;
    }
    return RC_OK;
}

int log_segment_load(struct log_segment *seg, uint8_t *scan_buf,
                     int64_t index_interval_bytes, int *index_rc,
                     const char **index_ext)
{
    *index_rc = log_index_load(&seg->index, seg->dir, seg->base_offset,
                               seg->size, index_ext);
    int rv = *index_rc;
    if (rv == RC_OK) {
        rv = scan_tail(seg, scan_buf);
        if (rv == RC_CORRUPT) {
            *index_rc = RC_CORRUPT; /* whole, but not this file's index */
            *index_ext = "index";
        }
    }
    if (rv == RC_OK || rv == RC_IO || rv == RC_NOMEM) {
        return rv;
    }
    /* Missing or not valid for this file: rebuild from the batches. */
    int64_t cut_at = -1;
    rv = log_segment_recover(seg, scan_buf, index_interval_bytes, &cut_at,
                             NULL, NULL);
    if (rv == RC_OK && cut_at >= 0) {
        return RC_CORRUPT; /* a closed segment must be whole */
    }
    return rv == RC_OK ? log_segment_save_index(seg) : rv;
}

int log_segment_find(const struct log_segment *seg, uint8_t *scan_buf,
                     int64_t offset, int64_t *pos,
                     struct record_batch_header *h)
{
    int64_t rel = offset - seg->base_offset;
    if (rel < 0) {
        rel = 0;
    }
    if (rel > INT32_MAX) {
        rel = INT32_MAX;
    }
    struct log_index_entry e = log_index_floor(&seg->index, (int32_t)rel);
    struct log_scan s;
    log_scan_init(&s, seg, scan_buf, e.position, seg->size);
    int rv;
    while ((rv = log_scan_next(&s, false, h, pos)) == RC_OK) {
        /* The second test only matters for a batch whose damaged header
         * (lastOffsetDelta, under the CRC) ends it before it starts:
         * skipped, no reader would ever check it, the scrub included,
         * and a fetch there would answer with the batches after it. */
        if (record_batch_last_offset(h) >= offset ||
            h->base_offset >= offset) {
            return RC_OK;
        }
    }
    if (rv == RC_NOT_FOUND) {
        *pos = seg->size;
        return RC_NOT_FOUND;
    }
    return rv == RC_IO ? RC_IO : RC_CORRUPT;
}

int log_segment_boundary_before(const struct log_segment *seg,
                                uint8_t *scan_buf, int64_t from_pos,
                                int64_t limit_pos, int64_t *boundary)
{
    struct log_index_entry e = log_index_floor_position(&seg->index,
                                                        limit_pos);
    int64_t start = e.position > from_pos ? e.position : from_pos;
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = 0;
    int rv;
    *boundary = start;
    log_scan_init(&s, seg, scan_buf, start, seg->size);
    while ((rv = log_scan_next(&s, false, &h, &pos)) == RC_OK) {
        if (pos + record_batch_size(&h) > limit_pos) {
            break;
        }
        *boundary = pos + record_batch_size(&h);
    }
    if (rv != RC_OK && rv != RC_NOT_FOUND) {
        return rv == RC_IO ? RC_IO : RC_CORRUPT;
    }
    return RC_OK;
}

int log_segment_find_time(const struct log_segment *seg, uint8_t *scan_buf,
                          int64_t ts, int64_t *position,
                          struct record_batch_header *out)
{
    if (seg->max_timestamp < ts) {
        return RC_NOT_FOUND;
    }
    int32_t rel = log_index_time_floor(&seg->index, ts);
    struct log_index_entry e = log_index_floor(&seg->index, rel);
    struct log_scan s;
    struct record_batch_header h;
    int64_t pos = 0;
    int rv;
    log_scan_init(&s, seg, scan_buf, e.position, seg->size);
    while ((rv = log_scan_next(&s, false, &h, &pos)) == RC_OK) {
        if (h.max_timestamp >= ts) {
            *position = pos;
            *out = h;
            return RC_OK;
        }
    }
    return rv == RC_NOT_FOUND ? RC_NOT_FOUND
                              : (rv == RC_IO ? RC_IO : RC_CORRUPT);
}

int log_segment_max_timestamp_batch(struct log_segment *seg,
                                    uint8_t *scan_buf, int64_t *position,
                                    struct record_batch_header *h)
{
    int rv;
    if (seg->max_timestamp_batch >= 0) {
        rv = log_segment_find(seg, scan_buf, seg->max_timestamp_batch,
                              position, h);
    } else {
        /* The time index starts the scan at the batch after the last
         * entry below max_timestamp: the first batch to reach it is no
         * earlier. (With max_timestamp -1, the first batch.) */
        rv = log_segment_find_time(seg, scan_buf, seg->max_timestamp,
                                   position, h);
    }
    if (rv != RC_OK) {
        return rv;
    }
    if (h->max_timestamp != seg->max_timestamp) {
        return RC_CORRUPT; /* the batch the segment's bookkeeping names */
    }
    seg->max_timestamp_batch = h->base_offset;
    return RC_OK;
}

int log_segment_truncate_to(struct log_segment *seg, uint8_t *scan_buf,
                            int64_t offset)
{
    if (offset >= seg->next_offset) {
        return RC_OK;
    }
    int64_t pos = 0;
    struct record_batch_header h;
    int rv = log_segment_find(seg, scan_buf, offset, &pos, &h);
    if (rv == RC_NOT_FOUND) {
        return RC_OK;
    }
    if (rv != RC_OK) {
        return rv;
    }
    if (pos < seg->size_low) {
        seg->size_low = pos; /* before the cut: a reader may be past it */
    }
    if (io_ftruncate(seg->fd, (off_t)pos) != 0) {
        return RC_IO;
    }
    int64_t rel = h.base_offset - seg->base_offset;
    log_index_truncate(&seg->index, (int32_t)rel, pos);
    seg->size = pos;
    rv = scan_tail(seg, scan_buf);
    if (rv != RC_OK) {
        return rv;
    }
    /* Offsets in a gap before the cut stay "written", as in Kafka. */
    if (offset < h.base_offset && offset > seg->next_offset) {
        seg->next_offset = offset;
    }
    return RC_OK;
}

int log_segment_save_index(const struct log_segment *seg)
{
    return log_index_save(&seg->index, seg->dir, seg->base_offset);
}

int log_segment_sync(int fd)
{
    return io_fdatasync(fd) == 0 ? RC_OK : RC_IO;
}
