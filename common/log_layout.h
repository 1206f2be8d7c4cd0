/* The names and magic numbers of a partition log's files on disk, shared
 * by the broker, which writes them (broker/log/, broker/replication/), and
 * by offline readers such as `cairn dump-log` (cli/cmd/dump_log/), which
 * may not include broker code. The layouts themselves are drawn in the
 * writers' headers: log_index.h, log_epoch.h, producer_state.h,
 * hw_checkpoint.h. Constants only. */
#ifndef CAIRN_COMMON_LOG_LAYOUT_H
#define CAIRN_COMMON_LOG_LAYOUT_H

/* In a partition directory <log.dir>/<topic>-<partition>/: segments
 * <20-digit base offset>.log with their .index and .timeindex. */
#define LOG_LAYOUT_SEGMENT_EXT "log"
#define LOG_LAYOUT_INDEX_EXT "index"
#define LOG_LAYOUT_TIME_INDEX_EXT "timeindex"
#define LOG_LAYOUT_BASE_DIGITS 20

/* Index files: magic (uint32), CRC-32C of the entries (uint32), then
 * entries, all big-endian. */
#define LOG_LAYOUT_INDEX_HEADER_BYTES 8
#define LOG_LAYOUT_INDEX_MAGIC 0x43495831u      /* "CIX1" */
#define LOG_LAYOUT_TIME_INDEX_MAGIC 0x43544931u /* "CTI1" */
#define LOG_LAYOUT_INDEX_ENTRY_BYTES 8          /* rel offset, position */
#define LOG_LAYOUT_TIME_INDEX_ENTRY_BYTES 12    /* timestamp, rel offset */

/* Checked text checkpoints of the partition (common/checkpoint_text.h). */
#define LOG_LAYOUT_EPOCH_FILE "leader-epoch-checkpoint"

/* The producer-state snapshot: magic (uint32), end offset (int64), count
 * (uint32), entries, CRC-32C of all before it (uint32). */
#define LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE "producer-state.snapshot"
#define LOG_LAYOUT_PRODUCER_SNAPSHOT_MAGIC 0x43505331u /* "CPS1" */
#define LOG_LAYOUT_PRODUCER_SNAPSHOT_HEADER_BYTES 16u
#define LOG_LAYOUT_PRODUCER_SNAPSHOT_CRC_BYTES 4u

/* In the log directory itself, one for all its partitions: the high
 * watermarks, lines "TOPIC PARTITION OFFSET". */
#define LOG_LAYOUT_HW_CHECKPOINT_FILE "replication-offset-checkpoint"

#endif
