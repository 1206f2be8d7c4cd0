/* Idempotent-producer state of one partition (Kafka's ProducerStateManager,
 * shared/reference/replication-design.md section 4): for each producer id,
 * its current epoch and the metadata of its last PRODUCER_BATCHES_MAX
 * batches, enough to tell an in-order batch from a retry (a duplicate,
 * answered with the original offsets) or a gap (OUT_OF_ORDER_SEQUENCE_NUMBER).
 *
 * A pure core: no clock, no I/O, except producer_state_save(),
 * producer_state_load() and producer_state_delete_snapshot(), which read and
 * write the snapshot file explicitly. Owned by its partition
 * (broker/replication/partition.c); loop thread only. The state is a function
 * of the log: feeding producer_state_record() every batch header in offset
 * order rebuilds it, so leader, followers and a restarted broker agree.
 *
 * Rules (Kafka's ProducerAppendInfo), for batches with producerId >= 0 only;
 * producerId -1 is not idempotent, whatever its epoch and sequence say
 * (kafkajs writes epoch 0 / sequence 0 there):
 *   - same epoch, same first and last sequence as a cached batch: duplicate;
 *   - epoch below the current one: INVALID_PRODUCER_EPOCH (47);
 *   - epoch above the current one: baseSequence must be 0, else
 *     OUT_OF_ORDER_SEQUENCE_NUMBER (45);
 *   - same epoch: baseSequence must be last sequence + 1 (INT32_MAX is
 *     followed by 0), else 45;
 *   - a producer the state does not know (new, evicted, or forgotten by a
 *     truncation) is accepted with any epoch and sequence, as Kafka accepts
 *     a producer whose state expired (post-KIP-360).
 *
 * Bound: PRODUCERS_MAX producers (common/limits.h). Recording a batch of a
 * new producer into a full table evicts the producer whose newest batch has
 * the lowest offset (least recently used); being a function of the log, the
 * choice is the same on every replica and after a rebuild. If the table
 * cannot grow (no memory), the same eviction happens early, or with an empty
 * table the batch is not remembered: both leave that producer unknown,
 * which only weakens duplicate detection, never rejects a valid batch.
 * `evictions` counts both, for metrics.
 *
 * Snapshot file `producer-state.snapshot` in the partition directory, one
 * per partition, replaced atomically (temporary + fdatasync + rename +
 * directory fsync; a leftover `.tmp` is removed by log_open()). Big-endian:
 *
 *    0  magic        uint32  0x43505331 ("CPS1", format version 1)
 *    4  end_offset   int64   the state covers every batch below it
 *   12  count        uint32  producers, <= PRODUCERS_MAX
 *   16  entries, by ascending producer id:
 *         producer_id  int64  >= 0
 *         epoch        int16
 *         n_batches    int8   1..PRODUCER_BATCHES_MAX
 *         n_batches times, oldest first:
 *           first_seq int32, last_seq int32   0..INT32_MAX
 *           base_offset int64, last_offset int64
 *                             base <= last < next base, last < end_offset
 *    .  crc          uint32  CRC-32C of every byte before it
 *
 * Unlike Kafka's snapshot (last batch only), all cached batches are kept,
 * so loading a snapshot and replaying the log after end_offset gives
 * exactly the state live recording had. */
#ifndef CAIRN_BROKER_PRODUCER_STATE_H
#define CAIRN_BROKER_PRODUCER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kafka/record_batch.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/log_layout.h"

struct writer;

#define PRODUCER_STATE_SNAPSHOT_FILE LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE

/* Metadata of one appended batch. */
struct producer_batch {
    int32_t first_seq;   /* baseSequence */
    int32_t last_seq;    /* baseSequence + lastOffsetDelta, wrapped */
    int64_t base_offset;
    int64_t last_offset;
};

/* One producer: never empty (a producer without a cached batch is
 * removed), and every cached batch belongs to `epoch`. */
struct producer_entry {
    int64_t producer_id;
    int16_t epoch;
    uint8_t n_batches;   /* 1..PRODUCER_BATCHES_MAX */
    struct producer_batch batches[PRODUCER_BATCHES_MAX]; /* oldest first */
};

/* Embed in the owner and producer_state_init() it. Fields are read-only
 * outside broker/log/producer_state.c. */
struct producer_state {
    struct producer_entry *entries; /* ascending producer_id */
    size_t n;
    size_t cap;                     /* <= PRODUCERS_MAX */
    uint64_t evictions;             /* producers forgotten to stay bounded */
};

enum producer_verdict {
    PRODUCER_OK = 0,        /* append the batch, then record it */
    PRODUCER_DUPLICATE,     /* a retry: do not append; answer success with
                             * out->base_offset (and wait for the high
                             * watermark to pass out->last_offset) */
    PRODUCER_INVALID_EPOCH, /* do not append; answer out->error_code, 47 */
    PRODUCER_OUT_OF_ORDER,  /* do not append; answer out->error_code, 45 */
};

struct producer_check {
    int16_t error_code;  /* Kafka ErrorCode: NONE for OK and DUPLICATE */
    int64_t base_offset; /* DUPLICATE: the original batch's; else -1 */
    int64_t last_offset; /* DUPLICATE: the original batch's; else -1 */
};

/* An empty state; allocates nothing. */
void producer_state_init(struct producer_state *ps);

/* Frees the table; the state is empty and may be used again. */
void producer_state_free(struct producer_state *ps);

/* Forgets every producer (before a rebuild), keeping the allocation. */
void producer_state_clear(struct producer_state *ps);

/* Decides what to do with a client batch before the leader appends it.
 * h must have passed record_batch_parse() and
 * record_batch_check_counts(h, true) (so producerId >= 0 implies
 * baseSequence >= 0, and lastOffsetDelta >= 0); its base_offset is not
 * read. Batches with producerId < 0 are always PRODUCER_OK. Pure. */
enum producer_verdict producer_state_check(const struct producer_state *ps,
                                           const struct record_batch_header *h,
                                           struct producer_check *out);

/* Takes one appended batch into the state: after a leader's successful
 * append (h with the assigned base_offset), a follower's replicated append,
 * and every batch replayed at open or rebuild, in offset order. A batch of
 * another epoch than the producer's current one (higher, or lower on a
 * follower: the log is the truth, as with Kafka's replication origin)
 * becomes its only cached batch. Batches with producerId < 0, or with a
 * negative baseSequence or lastOffsetDelta (not idempotent, or not from a
 * valid client), are ignored. A producer's batches must come in increasing
 * offsets (asserted). */
void producer_state_record(struct producer_state *ps,
                           const struct record_batch_header *h);

/* After the log was cut at end_offset (log_truncate_to(): every batch
 * whose last offset is >= end_offset is gone): forgets those cached
 * batches, and producers left with none. Last sequences and epochs stay
 * exact for the producers kept; windows may be shorter than a rebuild
 * would give (older batches still in the log are not cached again), and a
 * producer whose cached batches all went becomes unknown. For the exact
 * state, producer_state_clear() and replay the log instead. */
void producer_state_truncate(struct producer_state *ps, int64_t end_offset);

/* The producer's entry, or NULL when it is unknown. Borrowed until the
 * next change of the state. */
const struct producer_entry *
producer_state_find(const struct producer_state *ps, int64_t producer_id);

size_t producer_state_count(const struct producer_state *ps);

/* Same producers, epochs and cached batches (the eviction counter is not
 * compared). */
bool producer_state_equal(const struct producer_state *a,
                          const struct producer_state *b);

/* Appends the snapshot bytes (layout above) to w, which should allow
 * PRODUCER_SNAPSHOT_BYTES_MAX; every cached last offset must be below
 * end_offset (asserted). The writer's error, if any, is in w->rc. Pure. */
void producer_state_encode(const struct producer_state *ps,
                           int64_t end_offset, struct writer *w);

/* Replaces ps with the snapshot in p[0..len): RC_CORRUPT for a bad size,
 * magic, CRC or content, RC_NOMEM. On failure ps is left empty. Pure. */
MUST_CHECK int producer_state_decode(struct producer_state *ps,
                                     const uint8_t *p, size_t len,
                                     int64_t *end_offset);

/* Writes dir/producer-state.snapshot durably and atomically (blocking:
 * fdatasync and a directory fsync). RC_IO, RC_NOMEM, RC_TOO_LARGE (path). */
MUST_CHECK int producer_state_save(const struct producer_state *ps,
                                   const char *dir, int64_t end_offset);

/* Reads and validates dir/producer-state.snapshot into ps, and the offset
 * replay must continue from. RC_NOT_FOUND when there is none, RC_CORRUPT
 * when it is damaged, RC_IO, RC_NOMEM; on failure ps is left empty and
 * the owner rebuilds from the log. */
MUST_CHECK int producer_state_load(struct producer_state *ps,
                                   const char *dir, int64_t *end_offset);

/* Removes dir/producer-state.snapshot (durably); RC_OK when there was
 * none. For an owner that cannot save a fresh one after a truncation. */
MUST_CHECK int producer_state_delete_snapshot(const char *dir);

#endif
