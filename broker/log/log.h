/* Partition log: the directory `<log.dir>/<topic>-<partition>/` holding
 * segments (broker/log/log_segment.h), the leader-epoch cache
 * (broker/log/log_epoch.h), the recovery-point checkpoint and a clean-shutdown
 * marker. Appends write batch bytes verbatim (offsets and leader epoch are
 * rewritten in place, outside the CRC); reads return spans of whole batches
 * ready for sendfile(2); durability is group commit: one fdatasync on the
 * threadpool covers everything appended since the last one, and durable
 * waiters are called back when it completes.
 *
 * Files in the directory:
 *   00000000000000000000.log        batches back to back
 *   00000000000000000000.index      sparse offset index (rebuildable)
 *   00000000000000000000.timeindex  sparse time index (rebuildable)
 *   leader-epoch-checkpoint         epoch -> start offset
 *   recovery-point-checkpoint       segments wholly below it are durable
 *   log-start-offset-checkpoint     set by DeleteRecords, a leader's start
 *   cleaner-offset-checkpoint       segments below it are compacted
 *   .clean-shutdown                 present only between close and open
 * Checkpoints end with a CRC-32C line, index files start with a CRC-32C
 * header; one that fails it is not trusted: logged, rebuilt from the
 * segments (or taken at its safe value) and rewritten.
 *
 * Recovery on open: the last segment, and every segment not wholly below
 * the recovery point, is re-validated batch by batch (CRC-32C, lengths,
 * offsets); the first torn or corrupt batch is cut off with everything
 * after it, and indexes are rebuilt. Every other segment (all of them
 * after a clean shutdown) loads its indexes, and has every batch checked
 * by CRC-32C all the same, once per open, by the start-up check
 * (broker/log/log_startup.h): on the threadpool, after log_open() has
 * returned, one chunk at a time broker-wide. A bad batch there is damage
 * to data once durable: logged as an error and kept (log_corrupt_offset()),
 * the owner told to repair it from a replica (a follower cuts before it
 * and fetches the rest again from its leader).
 *
 * One libuv loop thread owns a log; the group-commit job touches only file
 * descriptors and runs on the threadpool. */
#ifndef CAIRN_BROKER_LOG_H
#define CAIRN_BROKER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log/log_epoch.h"
#include "common/kafka/record_batch.h"
#include "common/assert.h"
#include "common/trace.h"

struct log_segment;

/* Kafka's topic-level names; defaults in log_config_default(). */
struct log_config {
    int64_t segment_bytes;        /* segment.bytes (1 GiB) */
    int64_t segment_ms;           /* segment.ms (7 days) */
    int64_t index_interval_bytes; /* index.interval.bytes (4096) */
    int64_t segment_index_bytes;  /* segment.index.bytes (10 MiB) */
};

void log_config_default(struct log_config *cfg);

/* The descriptor budget, over every log of the process: past max segment
 * files open (0: no budget), the least recently used logs that nothing
 * holds close theirs until they are used again (broker/log/log_fds.c).
 * Loop thread only. The files open now, and how often a log's were
 * opened again and logs were parked. */
void log_fds_set_max(size_t max);
size_t log_fds_open(void);
uint64_t log_fds_reopens(void);
uint64_t log_fds_parks(void);

struct log_append_info {
    int64_t base_offset;
    int64_t last_offset;
    int64_t max_timestamp;
    int64_t bytes;
};

/* A run of whole batches in one segment file: send `bytes` bytes from
 * `position` of `fd`. The segment is pinned until log_span_release(). */
struct log_span {
    struct log_segment *seg; /* NULL when the span is empty */
    int fd;
    int64_t position;
    int64_t bytes;
    int64_t first_offset;    /* base offset of the first batch */
};

typedef void (*log_durable_cb)(void *arg, int rc);

struct log;
struct http_metrics_hist;

/* For a log opened by log_open_detached() (broker/log/log_open.h), on
 * that thread, before log_attach(): past the budget, closes its
 * segment files at once (it stays parked once attached), so that
 * threads opening logs hold no more descriptors than the budget. The
 * budget is set before any such thread starts. True if parked. */
bool log_park_if_over_budget(struct log *l);

/* Takes new settings (a topic's configs changed in the metadata): the
 * next append rolls by the new segment.bytes and segment.ms; the index
 * sizes apply to segments created from now on. */
void log_set_config(struct log *l, const struct log_config *cfg);

/* Clean shutdown: waits for an in-flight sync, syncs the rest, saves the
 * indexes, checkpoints and leaves the clean-shutdown marker; pending
 * durability waiters are called. The memory is freed once the loop has run
 * the handle's close callback. */
void log_close(struct log *l);

/* log_close(), then cb(arg) once the log's memory is freed (its files may
 * then be removed). */
void log_close_then(struct log *l, void (*cb)(void *arg), void *arg);

/* now_ms in the appends is the wall clock (ms since the epoch): a
 * segment.ms roll compares it with the segment's first record timestamp.
 *
 * Appends one client batch at the log end: validates it (length, magic 2,
 * CRC-32C, counts: RC_SHORT / RC_MALFORMED / RC_CORRUPT; larger than a
 * segment: RC_TOO_LARGE), rewrites baseOffset and partitionLeaderEpoch in
 * place, rolls first if needed. Nothing is written when it fails. */
MUST_CHECK int log_append(struct log *l, uint8_t *batch, size_t len,
                          int32_t leader_epoch, int64_t now_ms,
                          struct log_append_info *info);

/* log_append() for a batch the caller has already validated with
 * record_batch_validate(batch, len, true, h): skips the second CRC. */
MUST_CHECK int log_append_validated(struct log *l, uint8_t *batch,
                                    size_t len,
                                    const struct record_batch_header *h,
                                    int32_t leader_epoch, int64_t now_ms,
                                    struct log_append_info *info);

/* Appends one batch fetched from a leader, keeping its offsets and epoch;
 * its base offset must be at or after the log end (RC_INVALID). */
MUST_CHECK int log_append_replica(struct log *l, const uint8_t *batch,
                                  size_t len, int64_t now_ms,
                                  struct log_append_info *info);

/* The span of whole batches from the one holding `offset`, at most
 * max_bytes (but always the first batch whole), excluding batches at or
 * after max_offset (the high watermark, say), within one segment. Empty at
 * the end. RC_OUT_OF_RANGE outside [start, end]. */
MUST_CHECK int log_read(struct log *l, int64_t offset, int64_t max_bytes,
                        int64_t max_offset, struct log_span *span);
void log_span_release(struct log_span *span);

/* Calls cb with the header of every batch whose last offset is >= from,
 * in offset order (headers only; used to rebuild producer state). */
typedef void (*log_batch_cb)(void *arg, const struct record_batch_header *h);
MUST_CHECK int log_for_each_batch(struct log *l, int64_t from,
                                  log_batch_cb cb, void *arg);

/* A record found by time (ListOffsets): its timestamp (a LogAppendTime
 * batch's records all carry the batch's maxTimestamp), its offset and its
 * batch's partitionLeaderEpoch (-1 if the batch has none). */
struct log_time_offset {
    int64_t timestamp;
    int64_t offset;
    int32_t leader_epoch;
};

/* Kafka's lookup by time (UnifiedLog.fetchOffsetByTimestamp): the first
 * record whose timestamp is >= ts and whose offset is at or above the log
 * start offset, searched in the first segment whose largest timestamp
 * reaches ts only (a batch whose maxTimestamp reaches ts is read,
 * decompressed if need be, and its records walked). RC_NOT_FOUND when
 * every record is older (or the searched segment has none at or above
 * the log start); RC_IO, RC_CORRUPT, RC_NOMEM. Reads the segment file
 * (blocking). */
MUST_CHECK int log_offset_for_timestamp(struct log *l, int64_t ts,
                                        struct log_time_offset *out);

/* ListOffsets' MAX_TIMESTAMP (KIP-734, as Kafka 3.8 answers it after
 * KAFKA-16310): the record with the largest timestamp, the first of them
 * if several share it. O(segments), plus the one batch read: each segment
 * keeps its largest timestamp and the batch that first reached it
 * (broker/log/log_segment.h). RC_NOT_FOUND for an empty log; RC_IO,
 * RC_CORRUPT, RC_NOMEM. */
MUST_CHECK int log_offset_of_max_timestamp(struct log *l,
                                           struct log_time_offset *out);

int64_t log_start_offset(const struct log *l);
/* The first batch that failed its CRC check in the start-up check of a
 * segment that was durable (below the recovery point, or after a clean
 * shutdown), or -1 (also while that check is under way,
 * log_startup_verify_pending()): the log keeps it (and what follows) for
 * the owner to repair from a replica. */
int64_t log_corrupt_offset(const struct log *l);
int64_t log_end_offset(const struct log *l);
int64_t log_durable_end_offset(const struct log *l);
size_t log_segment_count(const struct log *l);
/* Whether the file name (one of the partition's checkpoints, the
 * producer-state snapshot among them) was in the log's directory when
 * log_open() listed it; true for any other name. False spares a caller
 * at open the call that would find it missing. */
bool log_found_at_open(const struct log *l, const char *name);

/* Starts a new segment at the log end (if the active one is not empty). */
MUST_CHECK int log_roll(struct log *l);

/* Removes every batch whose last offset is >= offset (a batch straddling
 * it goes whole). Below the log start, truncates fully and starts there.
 * At or past the log end it removes no batch but drops leader epochs
 * that start at the log end (they hold no record). Waiters for truncated
 * offsets get RC_OUT_OF_RANGE. */
MUST_CHECK int log_truncate_to(struct log *l, int64_t offset);

/* Deletes everything and starts an empty log at offset. The new segment
 * is created before the old ones are deleted: if that fails the log is
 * as it was. */
MUST_CHECK int log_truncate_fully_and_start_at(struct log *l, int64_t offset);

/* Leader takeover: records (epoch, log end offset) in the epoch cache;
 * its checkpoint is written before the next batch is appended. */
MUST_CHECK int log_assign_epoch(struct log *l, int32_t epoch);
const struct log_epoch_cache *log_epochs(const struct log *l);
/* Kafka's endOffsetFor(epoch), see log_epoch_end_offset_for(). */
void log_end_offset_for_epoch(const struct log *l, int32_t epoch,
                              int32_t *epoch_out, int64_t *end_offset_out);

/* Calls cb(arg, RC_OK) once every offset below `offset` is durable, or
 * with an error if that can no longer happen (I/O error: RC_IO; truncated:
 * RC_OUT_OF_RANGE; closed). Always called back later, never from inside
 * this call. RC_FULL when LOG_SYNC_WAITERS_MAX are queued. */
MUST_CHECK int log_wait_durable(struct log *l, int64_t offset,
                                log_durable_cb cb, void *arg);

/* A log fails for good when an fsync, a write, a truncation or a new
 * segment fails. After a failed fsync the kernel may already have dropped
 * the dirty pages (PostgreSQL's "fsyncgate", 2018), so nothing past the
 * last successful sync may ever count as durable: the durable end stays
 * where it was, appends answer the error, waiters above the durable end
 * get it. cb(arg, rc) runs once, synchronously, at the moment of the
 * failure and before any waiter hears of it (so the owner can stop
 * replication before a follower could report unsynced offsets). */
typedef void (*log_failed_cb)(void *arg, int rc);
void log_on_failure(struct log *l, log_failed_cb cb, void *arg);
/* RC_OK, or the error (RC_IO, RC_NO_SPACE, ...) that failed the log. */
int log_failure(const struct log *l);

/* Asks for a group commit at the end of this loop iteration even with no
 * waiter (followers, periodic flush). */
void log_request_sync(struct log *l);

/* True when no sync is in flight or requested and nothing is unsynced. */
bool log_sync_idle(const struct log *l);

/* Where a log's group-commit job runs. By default (none set) on libuv's
 * thread pool. A simulation sets its own: submit() is told that l has a
 * job, and the runner calls log_sync_run(l) later, from the loop thread,
 * at a moment of its choosing (never from inside submit()), so that one
 * seed replays the same interleaving of syncs, appends and crashes. */
struct log_sync_runner {
    void *ctx;
    void (*submit)(void *ctx, struct log *l);
};

/* r is borrowed for l's life; set it right after log_open(). */
void log_set_sync_runner(struct log *l, const struct log_sync_runner *r);

/* With a runner: runs l's submitted job, its syncs and then its
 * completion (what the thread pool and the loop do otherwise). */
void log_sync_run(struct log *l);

/* A process death, for the simulation: l's memory is freed without one
 * more write, sync or callback (its files are closed, which makes nothing
 * durable; a power loss of the simulated disk then decides what they
 * hold). A job submitted to a runner is dropped: do not run it. The
 * handle is closed, so run the loop before freeing it. */
void log_abandon(struct log *l);

/* Group-commit jobs completed so far (for metrics and tests). */
uint64_t log_sync_count(const struct log *l);

/* --- Retention (broker/log/log_retention.c) ------------------------------
 *
 * Kafka's rules (UnifiedLog.deleteOldSegments): only closed segments are
 * deleted, oldest first, and only while every record of the segment is
 * below the high watermark given; first by time (a segment whose largest
 * record timestamp is more than retention.ms old), then by size (while
 * the log without the segment is still at least retention.bytes). A
 * segment whose batches carry no timestamp is not deleted by time. */
struct log_retention {
    int64_t retention_ms;    /* retention.ms; < 0: no limit by time */
    int64_t retention_bytes; /* retention.bytes; < 0: no limit by size */
};

#define LOG_RETENTION_BY_TIME 1u
#define LOG_RETENTION_BY_SIZE 2u
#define LOG_RETENTION_BY_START 4u /* wholly below the log start offset */

/* How many of the oldest segments the rules delete at now_ms with high
 * watermark hw; *why (may be NULL) gets the LOG_RETENTION_BY_* bits of the
 * rules that did. Never the active segment. */
size_t log_retention_count(const struct log *l, const struct log_retention *r,
                           int64_t now_ms, int64_t hw, unsigned *why);

/* The oldest segment count that lies wholly below offset (a leader's log
 * start offset a follower follows); never the active segment. */
size_t log_segments_below(const struct log *l, int64_t offset);

/* Deletes the n oldest segments (fewer than the log has): the log start
 * offset moves to the base offset of the first one kept at once, their
 * files are renamed to "*.deleted" on the calling thread and removed on
 * the threadpool (readers holding a span keep reading until they let go;
 * an open after a crash removes what is left). RC_OK or RC_IO (a rename
 * failed: the segments from that one on are kept). */
MUST_CHECK int log_delete_oldest(struct log *l, size_t n);

/* Moves the log start offset up to offset (DeleteRecords, a leader's log
 * start a follower follows; the caller keeps it at or below the HW), even
 * into a segment: checkpointed durably first (log-start-offset-checkpoint,
 * blocking), then the segments wholly below it are deleted. Reads below
 * it are RC_OUT_OF_RANGE. RC_OK (also when offset is not above the start),
 * RC_OUT_OF_RANGE past the log end, RC_IO. */
MUST_CHECK int log_advance_start(struct log *l, int64_t offset);

/* Bytes of every segment's batches. */
int64_t log_size_bytes(const struct log *l);

/* Each group-commit sync's time (its fdatasyncs and directory fsync), in
 * ms, of every log of the process. Loop thread. */
const struct http_metrics_hist *log_sync_times(void);

#endif
