/* Parsers of the partition log's text checkpoints, Kafka's formats, read
 * by the broker (broker/log/log_epoch.c, broker/replication/
 * hw_checkpoint.c) and by offline readers (`cairn dump-log`). The text is
 * what file_read_checked() (common/file.h) returns: the checksum line is
 * already checked and gone. Every line must parse; a file that does not
 * is RC_CORRUPT as a whole. Pure, any thread; text is modified in place
 * (strtok). */
#ifndef CAIRN_COMMON_CHECKPOINT_TEXT_H
#define CAIRN_COMMON_CHECKPOINT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

/* One "EPOCH START_OFFSET" entry; a non-zero return stops the parse and
 * is returned. */
typedef int (*checkpoint_text_epoch_fn)(void *arg, int32_t epoch,
                                        int64_t start_offset);

/* The leader-epoch checkpoint (broker/log/log_epoch.h):
 *     0            version
 *     N            number of entries, <= entries_max
 *     EPOCH OFFSET one line per entry, epochs increasing, offsets not
 *                  decreasing
 * calls fn for each entry in order. RC_OK, RC_CORRUPT, or fn's code. */
MUST_CHECK int checkpoint_text_epochs(char *text, size_t entries_max,
                                      checkpoint_text_epoch_fn fn, void *arg);

/* One "TOPIC PARTITION OFFSET" line; a non-zero return stops the parse
 * and is returned. */
typedef int (*checkpoint_text_offset_fn)(void *arg, const char *topic,
                                         int32_t partition, int64_t offset);

/* The offsets checkpoint (below): calls fn for each line, in order.
 * RC_OK, RC_CORRUPT (the lines seen so far were given to fn: a caller
 * that keeps them must drop them), or fn's code. */
MUST_CHECK int
checkpoint_text_offsets(char *text, checkpoint_text_offset_fn fn, void *arg);

/* The offsets checkpoint of a log directory (the high watermarks,
 * broker/replication/hw_checkpoint.h):
 *     0                      version
 *     N                      number of lines that follow
 *     TOPIC PARTITION OFFSET one per partition
 * RC_OK with *offset the topic-partition's and *found (*offset 0 and
 * *found false without a line for it), or RC_CORRUPT. */
MUST_CHECK int checkpoint_text_offset(char *text, const char *topic,
                                      int32_t partition, int64_t *offset,
                                      bool *found);

#endif
