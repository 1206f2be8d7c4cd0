/* Partition log segment: one append-only file `<20-digit base>.log` of
 * RecordBatch v2 bytes exactly as stored, plus its sparse indexes
 * (broker/log/log_index.h). Owned by its partition log (broker/log/log.c);
 * pinned by a reference count while a read span, a group-commit job or the
 * start-up check points into it, so a deleted segment's fd stays valid until
 * the last user lets go. Loop thread only, except log_segment_sync(), which
 * the group-commit job runs on the threadpool (it touches only the fd), and
 * log_segment_verify(), which the start-up check runs there (only the fd and
 * the base offset, both fixed for the segment's life). */
#ifndef CAIRN_BROKER_LOG_SEGMENT_H
#define CAIRN_BROKER_LOG_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log/log_index.h"
#include "common/kafka/record_batch.h"
#include "common/assert.h"

struct log_segment {
    const char *dir;         /* the partition directory, owned by the log */
    int64_t base_offset;
    int fd;
    int64_t size;            /* bytes of whole batches */
    /* The smallest size since the file was opened: appends only add
     * after the end, so the bytes below it are as they were then (the
     * start-up check, broker/log/log_startup.h, reads no further). */
    int64_t size_low;
    int64_t next_offset;     /* offset after the last batch */
    int64_t max_timestamp;   /* largest batch maxTimestamp, or -1 */
    /* Base offset of the first batch whose maxTimestamp is max_timestamp
     * (Kafka's LogSegment.maxTimestampAndOffsetSoFar, which keeps that
     * batch's offset too): set by appends and recovery; -1 when no batch
     * has a timestamp above -1, or after a load from the index files or
     * a truncation left it somewhere before the last index entry, until
     * log_segment_max_timestamp_batch() locates it. */
    int64_t max_timestamp_batch;
    int64_t first_timestamp; /* first batch's maxTimestamp (segment.ms) */
    int64_t bytes_since_index;
    struct log_index index;
    int refs;
    bool deleted;            /* files unlinked; fd closed at the last unref */
    bool dirty;              /* written or cut since the last sync began */
};

/* A forward reader of batch headers. Its first pread(2) is small (a
 * lookup that lands on an index entry needs one header) and each refill
 * doubles, up to LOG_SCAN_BUFFER_BYTES, so long scans still read in large
 * chunks. The buffer belongs to the caller and is reused. */
struct log_scan {
    const struct log_segment *seg;
    uint8_t *buf;
    size_t cap;
    size_t fill_bytes; /* size of the next refill */
    int64_t buf_pos;  /* file position of buf[0] */
    size_t buf_len;
    int64_t pos;      /* position of the next batch */
    int64_t limit;    /* scan stops here */
};

/* Creates an empty segment file (replacing any leftover of that name). */
MUST_CHECK int log_segment_create(struct log_segment **out, const char *dir,
                                  int64_t base_offset, size_t index_max);

/* Opens an existing segment file; size is the file size, nothing is read
 * yet: follow with log_segment_recover() or log_segment_load(). */
MUST_CHECK int log_segment_open(struct log_segment **out, const char *dir,
                                int64_t base_offset, size_t index_max);

/* A segment around fd (taken over on success), a file that is not (yet)
 * at the segment's name: the cleaner's rewrite. As log_segment_open(). */
MUST_CHECK int log_segment_adopt(struct log_segment **out, const char *dir,
                                 int64_t base_offset, size_t index_max,
                                 int fd);

void log_segment_ref(struct log_segment *seg);
/* The descriptor budget (broker/log/log.h, log_fds_set_max()): a
 * segment of a parked log has its file closed (fd -1) and is opened again
 * before its log is used; never while anything holds it, nor while it
 * has unsynced bytes (a reopened file would not report a writeback error
 * of before). Segment files open in the process. */
void log_segment_close_fd(struct log_segment *seg);
MUST_CHECK int log_segment_reopen(struct log_segment *seg);
size_t log_segment_fds_open(void);

/* Drops a reference; the last one closes the fd and frees the segment. */
void log_segment_unref(struct log_segment *seg);

/* Unlinks the segment's files; the memory and fd live until the last unref. */
void log_segment_delete(struct log_segment *seg);

/* Appends one validated batch (hdr describes it) with one pwrite(2), and
 * adds index entries every index_interval_bytes. On a failed or short
 * write the file is cut back and RC_IO returned. */
MUST_CHECK int log_segment_append(struct log_segment *seg, const uint8_t *p,
                                  size_t len,
                                  const struct record_batch_header *hdr,
                                  int64_t index_interval_bytes);

/* Validates every batch by CRC from the start, rebuilding the indexes and
 * the cached offsets and timestamps; cuts the file at the first torn or
 * invalid batch. *cut_at is that position, or -1 if the file was whole.
 * on_batch (may be NULL) sees every valid batch header in order. */
typedef void (*log_segment_batch_cb)(void *arg,
                                     const struct record_batch_header *h);
MUST_CHECK int log_segment_recover(struct log_segment *seg, uint8_t *scan_buf,
                                   int64_t index_interval_bytes,
                                   int64_t *cut_at, log_segment_batch_cb cb,
                                   void *cb_arg);

/* Loads a segment believed whole: the index files if they are valid,
 * then the tail after the last index entry for next_offset and
 * max_timestamp. Otherwise (*index_rc: RC_NOT_FOUND or RC_CORRUPT, and
 * *index_ext names the file, "index" or "timeindex") the indexes are
 * rebuilt by a scan that checks every batch's CRC, and saved; RC_CORRUPT
 * when that scan cut the file at a bad batch. *index_rc is RC_OK when the
 * files were used as they are (no batch CRC was checked then). */
MUST_CHECK int log_segment_load(struct log_segment *seg, uint8_t *scan_buf,
                                int64_t index_interval_bytes, int *index_rc,
                                const char **index_ext);

/* Checks batches of a loaded segment by their CRC-32C, lengths and
 * offsets (nothing is changed): from the batch boundary from_pos, the
 * first at or after offset *next_offset, up to limit or to the first
 * boundary at or past from_pos + budget_bytes. Reads go through buf (cap
 * bytes, a log_scan_init_whole() scan) and nothing of seg is used but its
 * fd and base offset, fixed for its life: it may run on the threadpool
 * while the loop thread appends to seg or cuts it. A cut meanwhile shows
 * as a batch cut short at or past the cut, which only the caller can tell
 * from damage (size_low). *stop_pos is set to the position after the last
 * intact batch, *next_offset to the offset after it. RC_OK (limit or
 * budget reached); RC_CORRUPT (the batch at *stop_pos is bad, cut short
 * or does not follow); RC_IO. */
MUST_CHECK int log_segment_verify(const struct log_segment *seg,
                                  uint8_t *buf, size_t cap, int64_t from_pos,
                                  int64_t limit, int64_t budget_bytes,
                                  int64_t *stop_pos, int64_t *next_offset);

/* Position and header of the first batch whose last offset is >= offset.
 * RC_NOT_FOUND (with *pos = size) when every batch ends below it. */
MUST_CHECK int log_segment_find(const struct log_segment *seg,
                                uint8_t *scan_buf, int64_t offset,
                                int64_t *pos, struct record_batch_header *h);

/* Greatest batch boundary <= limit_pos at or after from_pos; returns
 * from_pos when the first batch alone is larger. */
MUST_CHECK int log_segment_boundary_before(const struct log_segment *seg,
                                           uint8_t *scan_buf, int64_t from_pos,
                                           int64_t limit_pos,
                                           int64_t *boundary);

/* The first batch whose maxTimestamp >= ts: its position and header;
 * RC_NOT_FOUND. */
MUST_CHECK int log_segment_find_time(const struct log_segment *seg,
                                     uint8_t *scan_buf, int64_t ts,
                                     int64_t *position,
                                     struct record_batch_header *out);

/* Position and header of the first batch whose maxTimestamp is the
 * segment's max_timestamp (ListOffsets' MAX_TIMESTAMP), located through
 * max_timestamp_batch, or through the time index the first time after a
 * load (then remembered). RC_NOT_FOUND for an empty segment; RC_IO,
 * RC_CORRUPT. */
MUST_CHECK int log_segment_max_timestamp_batch(struct log_segment *seg,
                                               uint8_t *scan_buf,
                                               int64_t *position,
                                               struct record_batch_header *h);

/* Drops every batch whose last offset is >= offset. */
MUST_CHECK int log_segment_truncate_to(struct log_segment *seg,
                                       uint8_t *scan_buf, int64_t offset);

/* Writes the index files (no fsync). */
MUST_CHECK int log_segment_save_index(const struct log_segment *seg);

/* fdatasync(2); safe on the threadpool while the loop appends. */
MUST_CHECK int log_segment_sync(int fd);

/* Header reader: RC_OK with *h and *pos set, RC_NOT_FOUND at the exact
 * end, RC_SHORT for a torn batch, RC_MALFORMED / RC_CORRUPT (with
 * verify_crc) for a bad one, RC_IO. */
void log_scan_init(struct log_scan *s, const struct log_segment *seg,
                   uint8_t *buf, int64_t from_pos, int64_t limit);
/* A scan that reads all of [from_pos, limit): buf holds cap bytes, and
 * every refill reads as much as fits (one pread for a span that fits). */
void log_scan_init_whole(struct log_scan *s, const struct log_segment *seg,
                         uint8_t *buf, size_t cap, int64_t from_pos,
                         int64_t limit);
MUST_CHECK int log_scan_next(struct log_scan *s, bool verify_crc,
                             struct record_batch_header *h, int64_t *pos);

/* The bytes of the batch log_scan_next() just gave (at pos, header h),
 * read into the scan's buffer if need be: *bytes points into it, valid
 * until the next call on s. RC_TOO_LARGE for a batch larger than the
 * buffer (the caller reads it itself); RC_SHORT, RC_IO. */
MUST_CHECK int log_scan_bytes(struct log_scan *s, int64_t pos,
                              const struct record_batch_header *h,
                              const uint8_t **bytes);

/* Formats "<dir>/<20-digit base>.log". */
MUST_CHECK int log_segment_path(char *out, size_t cap, const char *dir,
                                int64_t base_offset);

#endif
