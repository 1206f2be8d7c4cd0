/* The broker's high-watermark checkpoint, `replication-offset-checkpoint`
 * in the log directory, Kafka's text format and a checksum line
 * (common/file.h):
 *     0                      version
 *     N                      number of lines that follow
 *     TOPIC PARTITION OFFSET one per partition
 *     crc32c HEX
 * Written by broker/replication/replica_manager.c. Blocking; loop thread,
 * at partition open. */
#ifndef CAIRN_BROKER_HW_CHECKPOINT_H
#define CAIRN_BROKER_HW_CHECKPOINT_H

#include <stdint.h>

#include "common/assert.h"
#include "common/log_layout.h"

#define HW_CHECKPOINT_FILE LOG_LAYOUT_HW_CHECKPOINT_FILE

/* The high watermark of topic-partition in dir's checkpoint: RC_OK with
 * *hw (0 when the file has no line for it), RC_NOT_FOUND when there is no
 * file, RC_CORRUPT when it is not to be trusted (its checksum line fails,
 * it is cut, or it does not parse: then no value in it is used), RC_IO,
 * RC_NOMEM. A file of the older format (no checksum line) is read if it
 * parses strictly. */
MUST_CHECK int hw_checkpoint_read(const char *dir, const char *topic,
                                  int32_t partition, int64_t *hw);

#endif
