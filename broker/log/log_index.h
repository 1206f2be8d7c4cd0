/* Sparse indexes of one log segment, kept in memory and saved beside it:
 * the offset index (<base>.index: relative offset -> byte position, 8-byte
 * big-endian entries) and the time index (<base>.timeindex: largest
 * timestamp seen before a batch -> that batch's relative offset, 12-byte
 * entries), the layouts Kafka uses, after an 8-byte header: a magic
 * number (0x43495831 "CIX1", 0x43544931 "CTI1") and the CRC-32C of the
 * entries, both big-endian. One entry is added per
 * index.interval.bytes of batches, so a lookup scans at most that many
 * bytes. Both are rebuildable from the .log file; a file that fails
 * validation on load is reported as RC_CORRUPT and rebuilt by the caller.
 * Owned by its segment (broker/log/log_segment.c); loop thread only. */
#ifndef CAIRN_BROKER_LOG_INDEX_H
#define CAIRN_BROKER_LOG_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

struct log_index_entry {
    int32_t rel_offset; /* batch base offset - segment base offset */
    int32_t position;   /* byte position of that batch in the .log */
};

struct log_time_entry {
    int64_t timestamp;  /* every batch before rel_offset has ts <= this */
    int32_t rel_offset;
};

struct log_index {
    struct log_index_entry *entries;
    size_t n_entries;
    size_t cap_entries;
    struct log_time_entry *times;
    size_t n_times;
    size_t cap_times;
    size_t entries_max; /* from segment.index.bytes; full means roll */
};

void log_index_init(struct log_index *ix, size_t entries_max);
void log_index_free(struct log_index *ix);
void log_index_clear(struct log_index *ix);

bool log_index_full(const struct log_index *ix);

/* Appends an entry; entries must grow strictly in both fields.
 * RC_FULL at entries_max, RC_NOMEM. */
MUST_CHECK int log_index_add(struct log_index *ix, int32_t rel_offset,
                             int32_t position);

/* Appends a time entry if timestamp exceeds the last one's. */
MUST_CHECK int log_index_add_time(struct log_index *ix, int64_t timestamp,
                                  int32_t rel_offset);

/* Greatest entry with rel_offset <= target; {0, 0} when there is none. */
struct log_index_entry log_index_floor(const struct log_index *ix,
                                       int32_t rel_offset);

/* Greatest entry with position <= target; {0, 0} when there is none. */
struct log_index_entry log_index_floor_position(const struct log_index *ix,
                                                int64_t position);

/* Relative offset from which to scan for the first timestamp >= target:
 * that of the greatest time entry whose timestamp is below target, or 0. */
int32_t log_index_time_floor(const struct log_index *ix, int64_t target);

/* Largest timestamp recorded in the time index, or -1. */
int64_t log_index_last_time(const struct log_index *ix);

/* Drops entries for batches at or after (rel_offset, position). */
void log_index_truncate(struct log_index *ix, int32_t rel_offset,
                        int64_t position);

/* Writes <dir>/<20-digit base>.index and .timeindex (no fsync: both are
 * rebuildable and validated on load). */
MUST_CHECK int log_index_save(const struct log_index *ix, const char *dir,
                              int64_t base_offset);

/* Loads both files for a segment of segment_bytes bytes. RC_NOT_FOUND if
 * a file is missing, RC_CORRUPT if one is not a valid index for it (its
 * header's magic or CRC-32C is wrong: cut, flipped, garbage or of the
 * older format; or its entries do not fit the segment); *bad_ext then
 * names that file's extension ("index" or "timeindex"). */
MUST_CHECK int log_index_load(struct log_index *ix, const char *dir,
                              int64_t base_offset, int64_t segment_bytes,
                              const char **bad_ext);

/* Removes both files (missing files are fine). */
void log_index_unlink(const char *dir, int64_t base_offset);

/* What a segment's two index files are, by their sizes alone: both
 * missing (a segment no batch was written to has none), both a header
 * long (what log_index_save() writes for a segment with no batch; a
 * damaged header is found, and the file rebuilt, when it loads), or
 * anything else. */
enum log_index_files {
    LOG_INDEX_FILES_ABSENT,
    LOG_INDEX_FILES_EMPTY,
    LOG_INDEX_FILES_OTHER,
};
enum log_index_files log_index_files_probe(const char *dir,
                                           int64_t base_offset);

#endif
