/* The start-up check: once after log_open(), every batch of a log's
 * trusted segments (wholly below the recovery point, or all of them after
 * a clean shutdown, whose index files were loaded rather than rebuilt) is
 * read back and checked by its CRC-32C, its lengths and its offsets, on
 * the libuv threadpool. log_open() recovers the other segments itself,
 * checking their batches as it goes; it leaves the trusted ones here, in
 * a list of pinned segments (broker/log/log_internal.h), so that opening
 * a large log no longer blocks the loop thread for a whole read of it.
 *
 * One struct log_startup per loop (the broker's replica manager owns it)
 * keeps a FIFO of the logs awaiting their pass and runs at most one job
 * at a time, whichever log it is for: the group-commit fdatasyncs share
 * the threadpool (4 threads) and never queue behind more than one. A job
 * checks up to chunk_bytes of one segment, so log_close() waits for one
 * chunk at most; a log closed while it waits in the queue leaves it at
 * once. The queue holds each open log once at most, linked through the
 * logs themselves: it is bounded by the logs open and never allocates.
 *
 * Meanwhile the log serves: reads send only batches that pass
 * log_verify_span() (log.fetch.verify.crc), and what the log does to its
 * segments is safe: they stay pinned, one that retention, the cleaner or
 * a truncation takes out of the log is skipped, and one cut is checked
 * only below the cut (log_segment.h's size_low; a batch cut short past it
 * is where the check stops, not damage).
 *
 * What it finds is what log_open() found when it checked inline: a bad
 * batch sets log_corrupt_offset(), is logged as an error naming the
 * partition, segment, offset and position, and the owner is told
 * (log_startup_on_damage()) to repair it from a replica; the rest of that
 * segment is not checked, the later ones are. A failed read is told as
 * RC_IO, not as damage, and ends that log's pass. When the queue is empty
 * (and no more logs are about to come, log_startup_hold()) one INFO line
 * sums the pass up:
 *
 *   start-up CRC pass: N logs, X MB checked in T ms, K corrupt, F unreadable
 *
 * Loop thread only, except the job's read and check (its fields below). */
#ifndef CAIRN_BROKER_LOG_STARTUP_H
#define CAIRN_BROKER_LOG_STARTUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log/log.h"
#include "common/assert.h"
#include "common/trace.h"

struct log_segment;

/* The job on the threadpool: set by the loop before it is queued, the
 * results written by the threadpool, read by the loop after. */
struct log_startup_job {
    const struct log_segment *seg; /* pinned by its log's check list */
    int64_t from_pos;
    int64_t limit;       /* the segment's size_low when queued */
    int64_t next_offset; /* in: the first batch's lowest offset; out */
    int64_t stop_pos;    /* out: after the last intact batch */
    int rc;              /* out: log_segment_verify()'s */
};

/* Fields are the module's own: read them, never set them. */
struct log_startup {
    uv_loop_t *loop;
    struct tracer *tracer;
    int64_t chunk_bytes;
    struct log *head;         /* the FIFO; the head's pass runs */
    struct log *tail;
    struct log *running;      /* the log of the job in flight, or NULL */
    uv_work_t req;
    struct log_startup_job job;
    uint8_t *buf;             /* LOG_STARTUP_BUFFER_BYTES, the job's */
    bool held;                /* more logs are about to be added */
    bool closed;
    /* The pass under way, summed up and reset when it ends. */
    uint64_t pass_start_ns;
    size_t pass_logs;
    int64_t pass_bytes;
    size_t pass_corrupt;
    size_t pass_unreadable;
    /* Since init (tests, benchmarks). */
    int64_t bytes_checked;
    uint64_t jobs_done;
    uint64_t passes_done;
};

/* chunk_bytes: what one job checks at most (LOG_STARTUP_CHUNK_BYTES; > 0).
 * RC_NOMEM when the buffer cannot be had. */
MUST_CHECK int log_startup_init(struct log_startup *s, uv_loop_t *loop,
                                int64_t chunk_bytes, struct tracer *tracer);

/* Queues l's pass behind the others (at once nothing, if l has nothing
 * to check). A log is added once, after log_open(). */
void log_startup_add(struct log_startup *s, struct log *l);

/* While held, an empty queue is not the end of the pass: its summary
 * waits (the replica manager opens logs a few per loop turn). */
void log_startup_hold(struct log_startup *s, bool held);

/* Takes no more logs; every log added must have been closed (log_close()
 * takes it out of the queue). The buffer goes once no job runs. */
void log_startup_close(struct log_startup *s);

/* True while a job runs or a log waits. */
bool log_startup_busy(const struct log_startup *s);

/* True until every trusted segment of l has been checked, skipped or
 * given up on (a failed read). */
bool log_startup_verify_pending(const struct log *l);

/* The pass found damage in l: rc RC_CORRUPT, the batches from offset on
 * cannot be trusted (as log_corrupt_offset() now says) and are to be
 * repaired from a replica; or rc RC_IO, a read failed at offset's batch.
 * Called on the loop thread, as the last thing the pass does with l in
 * that turn (cb may truncate or close it), never after log_close(). */
typedef void (*log_damaged_cb)(void *arg, int rc, int64_t offset);
void log_startup_on_damage(struct log *l, log_damaged_cb cb, void *arg);

#endif
