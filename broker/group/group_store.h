/* Committed offsets as records of the internal topic __consumer_offsets,
 * in Kafka's own key and value layouts (GroupMetadataManager), so the
 * partition reads like Kafka's:
 *
 *   OffsetCommitKey     int16 version (0 or 1), string group,
 *                       string topic, int32 partition
 *   OffsetCommitValue   int16 version (3), int64 offset,
 *                       int32 leader epoch, string metadata,
 *                       int64 commit timestamp
 *   GroupMetadataKey    int16 version (2), string group
 *   GroupMetadataValue  int16 version (3), string protocol type,
 *                       int32 generation, nullable string protocol,
 *                       nullable string leader, int64 current state
 *                       timestamp, [member: string member id, nullable
 *                       string instance id, string client id, string
 *                       client host, int32 rebalance timeout, int32
 *                       session timeout, bytes subscription, bytes
 *                       assignment]
 *
 * A null value is a tombstone (offsets deleted with their group, a group
 * gone). Versions 0-3 of GroupMetadataValue are read (v0 has no rebalance
 * timeout: the session timeout stands in; v1 no state timestamp; v2 no
 * instance id); v4 (flexible) and unknown ones are skipped.
 *
 * The group of a coordinator is hashed as Kafka does: Java's
 * String.hashCode() of the group id (over UTF-16 code units), its
 * absolute value (Integer.MIN_VALUE -> 0), modulo the partition count.
 *
 * A codec: no I/O except group_store_load(), which reads a log. */
#ifndef CAIRN_BROKER_GROUP_STORE_H
#define CAIRN_BROKER_GROUP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/group/group.h"
#include "broker/log/log.h"
#include "common/assert.h"
#include "common/slice.h"
#include "common/writer.h"

#define GROUP_STORE_TOPIC "__consumer_offsets"

/* The __consumer_offsets partition of group (len bytes of UTF-8). */
int32_t group_store_partition_for(const uint8_t *group, size_t len,
                                  int32_t n_partitions);

struct group_store_offset {
    struct slice topic;
    int32_t partition;
    int64_t offset;        /* ignored for a tombstone */
    int32_t leader_epoch;  /* -1: unknown */
    struct slice metadata; /* null or empty: none */
    bool tombstone;
};

/* One RecordBatch v2 (uncompressed, no producer id) holding a record per
 * entry of offs for group, stamped now_ms, appended to w. n >= 1. */
MUST_CHECK int group_store_encode(struct writer *w, struct slice group,
                                  const struct group_store_offset *offs,
                                  size_t n, int64_t now_ms);

/* One GroupMetadata record for g (its membership now; state_ms: when it
 * entered its state), or with gone its tombstone, as one RecordBatch v2
 * stamped now_ms, appended to w. */
MUST_CHECK int group_store_encode_group(struct writer *w, const struct group *g,
                                        bool gone, int64_t now_ms,
                                        int64_t state_ms);

/* What replaying a record found. */
struct group_store_record {
    bool is_offset;        /* else a group record */
    bool tombstone;
    struct slice group;
    struct group_store_offset offset; /* is_offset: the entry */
    int64_t commit_ms;
    /* A group record that is not a tombstone: its value, members
     * borrowed for the call (state_ms as written); NULL when its version
     * is not one this reads. */
    const struct group_load_meta *meta;
};
typedef void (*group_store_record_cb)(void *arg,
                                      const struct group_store_record *r);

/* Calls cb for every record of the whole batches in buf (len bytes);
 * records it cannot read (compressed batches, unknown versions) are
 * skipped. RC_MALFORMED for a batch whose records do not parse. */
MUST_CHECK int group_store_replay(const uint8_t *buf, size_t len,
                                  group_store_record_cb cb, void *arg);

/* One slice of group_store_replay() over log l: reads the whole batches
 * from *offset (at most about max_bytes, at least one batch) below end
 * (exclusive) from the segment files, replays them and moves *offset past
 * them; *offset >= end when the log is done. A coordinator taking over
 * calls it once per loop turn, so that a long history never holds the
 * loop. *bytes (may be NULL) gets what was read. */
MUST_CHECK int group_store_load_step(struct log *l, int64_t *offset,
                                     int64_t end, size_t max_bytes,
                                     group_store_record_cb cb, void *arg,
                                     size_t *bytes);

#endif
