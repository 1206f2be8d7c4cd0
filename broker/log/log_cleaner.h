/* Log compaction (cleanup.policy=compact): Kafka's LogCleaner for one
 * partition log, one pass at a time.
 *
 * What a pass cleans: the closed segments, oldest first, that lie wholly
 * below the high watermark and the durable end, whose newest record is at
 * least min.compaction.lag.ms old; the active segment never. Of those, the
 * ones at or after the cleaner checkpoint (the end of the last pass,
 * "cleaner-offset-checkpoint") are dirty. A pass is due when
 * dirty bytes / (clean + dirty bytes) >= min.cleanable.dirty.ratio, or
 * when a dirty segment's first record is older than max.compaction.lag.ms.
 *
 * A pass, on a thread of its own at a lower CPU priority (nice 10, so
 * that on a busy machine requests and replication come first): (1) the
 * offset map: every key of the dirty
 * segments with the offset of its latest record (the keys themselves,
 * compared byte for byte, within log.cleaner.dedupe.buffer.size; when
 * they do not fit, the pass stops at the last dirty segment whose keys all
 * did); (2) each segment from the log start to the end of the mapped
 * ones is rewritten without the records a later one with the same key
 * supersedes (common/kafka/record_filter.h: offsets never change, gaps
 * appear, a batch that loses records becomes uncompressed, one that
 * loses none stays as it was), a tombstone (null value) also
 * going once it lies in an already-cleaned segment and is older than
 * delete.retention.ms; an idempotent producer's newest batch keeps its
 * last record, so its sequence survives (Kafka keeps an empty batch
 * instead: one superseded record per producer can stay here); each
 * rewrite is written as "<base>.log.cleaned", fdatasync'd and scanned back
 * (every CRC checked). Segments are read through the log's chunked scan
 * (broker/log/log_segment.h), not a read per batch.
 *
 * The swap, on the loop thread, once the pass is done and only if the log
 * did not change under it (no truncation, same segments): per segment the
 * old index files are unlinked, then "<base>.log.cleaned" is renamed over
 * "<base>.log" (one atomic rename: a crash leaves the old segment or the
 * new one, never a mix; an open removes a leftover ".cleaned" and rebuilds
 * a missing index), and the new segment takes the old one's place in the
 * log (readers holding the old one keep reading it). Then the checkpoint
 * moves to the end of the pass.
 *
 * Loop thread for everything but the pass itself. */
#ifndef CAIRN_BROKER_LOG_LOG_CLEANER_H
#define CAIRN_BROKER_LOG_LOG_CLEANER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log/log.h"
#include "common/assert.h"

#define LOG_CLEANER_CHECKPOINT_FILE "cleaner-offset-checkpoint"
#define LOG_CLEANED_SUFFIX ".cleaned"

struct log_clean_config {
    double min_dirty_ratio;      /* min.cleanable.dirty.ratio (0.5) */
    int64_t delete_retention_ms; /* delete.retention.ms (86400000) */
    int64_t min_lag_ms;          /* min.compaction.lag.ms (0) */
    int64_t max_lag_ms;          /* max.compaction.lag.ms (INT64_MAX) */
    size_t map_bytes;            /* log.cleaner.dedupe.buffer.size */
};

/* What a pass did, for its caller's event. */
struct log_clean_result {
    int rc;                /* RC_OK, or why nothing was swapped */
    int64_t from;          /* log start offset when it began */
    int64_t to;            /* end of the cleaned range (the checkpoint) */
    size_t segments;       /* rewritten */
    int64_t bytes_before;
    int64_t bytes_after;
    size_t keys;           /* distinct keys in the map */
    size_t records_dropped;
    size_t tombstones_dropped;
};

typedef void (*log_clean_cb)(void *arg, const struct log_clean_result *r);

/* The cleanable range now: dirty bytes and the ratio; true when a pass is
 * due (see above). */
bool log_clean_due(const struct log *l, const struct log_clean_config *c,
                   int64_t now_ms, int64_t hw, double *dirty_ratio);

/* Starts a pass (now_ms: the wall clock, for the lag and tombstone
 * rules). producer_last (n_producer_last entries, copied): the last
 * offset of each idempotent producer's newest batch; such a batch keeps
 * its last record, whatever supersedes it, so that the producer's
 * sequence survives; a producer's older batches are cleaned like any.
 * cb runs on the loop thread when it is over (swapped or not); not if
 * the log closes first. RC_OK; RC_FULL while a pass is in flight;
 * RC_NOT_FOUND when nothing is cleanable; RC_NOMEM. */
MUST_CHECK int log_clean_start(struct log *l,
                               const struct log_clean_config *c,
                               int64_t now_ms, int64_t hw,
                               const int64_t *producer_last,
                               size_t n_producer_last, log_clean_cb cb,
                               void *arg);

/* The log was cut in the segment based at offset: what it will hold is
 * new, so the checkpoint comes down to it (Kafka's
 * maybeTruncateCheckpoint). */
void log_clean_truncated(struct log *l, int64_t offset);

/* The cleaner checkpoint: where the dirty part starts (0 when none). */
int64_t log_clean_checkpoint(const struct log *l);

#endif
