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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/checkpoint_text.h"
#include "common/log_layout.h"
#include "common/meta/meta.h"

#define HW_CHECKPOINT_FILE LOG_LAYOUT_HW_CHECKPOINT_FILE

/* Every line of dir's checkpoint, to fn in order (common/
 * checkpoint_text.h): RC_OK, RC_NOT_FOUND when there is no file,
 * RC_CORRUPT (lines given so far are to be dropped), RC_IO, RC_NOMEM, or
 * fn's code. One read of the file, however many partitions it names. */
MUST_CHECK int hw_checkpoint_load(const char *dir,
                                  checkpoint_text_offset_fn fn, void *arg);

/* The high watermark of topic-partition in dir's checkpoint: RC_OK with
 * *hw (0 when the file has no line for it), RC_NOT_FOUND when there is no
 * file, RC_CORRUPT when it is not to be trusted (its checksum line fails,
 * it is cut, or it does not parse: then no value in it is used), RC_IO,
 * RC_NOMEM. A file of the older format (no checksum line) is read if it
 * parses strictly. */
MUST_CHECK int hw_checkpoint_read(const char *dir, const char *topic,
                                  int32_t partition, int64_t *hw);

/* The checkpoint read once for many lookups (the opening of every hosted
 * partition at start): its lines by topic and partition, kept until
 * hw_checkpoint_cache_drop() (call it whenever the file is written). */
struct hw_checkpoint_entry {
    size_t name_at; /* in names */
    int32_t partition;
    int64_t hw;
};

struct hw_checkpoint_cache {
    bool loaded;
    int rv;                  /* of the load */
    struct meta_index index; /* (name key, partition) -> entry + 1 */
    struct hw_checkpoint_entry *entries;
    size_t n;
    size_t cap;
    char *names; /* the topic names, each NUL-terminated */
    size_t names_len;
    size_t names_cap;
};

/* As hw_checkpoint_read(), from the cache (the file is read at the first
 * call after an init or a drop). */
MUST_CHECK int hw_checkpoint_cache_read(struct hw_checkpoint_cache *c,
                                        const char *dir, const char *topic,
                                        int32_t partition, int64_t *hw);

/* Forgets what was read (keeps nothing allocated). A zeroed cache is an
 * empty one. */
void hw_checkpoint_cache_drop(struct hw_checkpoint_cache *c);

#endif
