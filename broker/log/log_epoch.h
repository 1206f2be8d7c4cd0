/* Leader-epoch cache of one partition: a sorted map epoch -> start offset
 * (the first offset written in that epoch), persisted as
 * `leader-epoch-checkpoint` in Kafka's text format:
 *     0            version
 *     N            number of entries
 *     EPOCH OFFSET one line per entry, both increasing
 * A new leader assigns (its epoch, its log end offset); followers and log
 * recovery assign from batch headers. Truncation trims it from either end.
 * Owned by its log (broker/log/log.c); loop thread only. */
#ifndef CAIRN_BROKER_LOG_EPOCH_H
#define CAIRN_BROKER_LOG_EPOCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

#define LOG_EPOCH_UNDEFINED (-1)

struct log_epoch_entry {
    int32_t epoch;
    int64_t start_offset;
};

struct log_epoch_cache {
    struct log_epoch_entry *entries;
    size_t n;
    size_t cap;
};

void log_epoch_init(struct log_epoch_cache *c);
void log_epoch_free(struct log_epoch_cache *c);

/* Latest epoch, or LOG_EPOCH_UNDEFINED when empty. */
int32_t log_epoch_latest(const struct log_epoch_cache *c);

/* Records that epoch starts at start_offset, as Kafka's assign(): the same
 * latest epoch again changes nothing; otherwise entries that conflict
 * (epoch >= epoch or start >= start_offset) are dropped and the new entry
 * appended. *changed tells whether anything changed. */
MUST_CHECK int log_epoch_assign(struct log_epoch_cache *c, int32_t epoch,
                                int64_t start_offset, bool *changed);

/* Kafka's endOffsetFor(epoch) (LeaderEpochFileCache): for the latest
 * epoch, (epoch, log_end_offset); for an epoch older than every entry,
 * (epoch, the first entry's start offset): nothing of it is here; else
 * the largest known epoch <= epoch and the next entry's start. Both
 * LOG_EPOCH_UNDEFINED for an undefined epoch, an empty cache, or an epoch
 * newer than the latest. */
void log_epoch_end_offset_for(const struct log_epoch_cache *c, int32_t epoch,
                              int64_t log_end_offset, int32_t *epoch_out,
                              int64_t *end_offset_out);

/* Drops entries starting at or after end_offset (log truncation).
 * Returns true if any were dropped. */
bool log_epoch_truncate_from_end(struct log_epoch_cache *c,
                                 int64_t end_offset);

/* Drops entries wholly below start_offset, keeping the one that covers it
 * with its start moved up (retention). Returns true if anything changed. */
bool log_epoch_truncate_from_start(struct log_epoch_cache *c,
                                   int64_t start_offset);

/* Writes dir/leader-epoch-checkpoint durably. */
MUST_CHECK int log_epoch_save(const struct log_epoch_cache *c,
                              const char *dir);

/* Reads dir/leader-epoch-checkpoint. RC_NOT_FOUND when absent,
 * RC_CORRUPT when its checksum line does not match (common/file.h), it
 * does not parse or is not increasing; the cache is then empty.
 * *unchecked: read from the older format without a checksum line (to be
 * rewritten). */
MUST_CHECK int log_epoch_load(struct log_epoch_cache *c, const char *dir,
                              bool *unchecked);

#endif
