/* The broker's group coordinator: the adapter between Kafka's group APIs
 * (broker/kafka/kafka_group.c), the pure group core (broker/group/group.h) and
 * the internal topic __consumer_offsets (broker/group/group_store.h).
 *
 *   - The coordinator of group G is the leader of __consumer_offsets
 *     partition hash(G) mod its partition count. The topic is created on
 *     the first FindCoordinator (offsets.topic.num.partitions, replication
 *     factor min(offsets.topic.replication.factor, registered brokers),
 *     cleanup.policy=compact, segment.bytes offsets.topic.segment.bytes); while fewer brokers are unfenced the
 *     controller refuses, as Kafka does, and the creation is retried.
 *   - A broker that becomes leader of one of its partitions loads the
 *     committed offsets and the groups' membership (GroupMetadata
 *     records) from it, one partition at a time and one slice of at most
 *     COORDINATOR_LOAD_SLICE_BYTES per loop turn, so that requests keep
 *     flowing; it answers COORDINATOR_LOAD_IN_PROGRESS for those groups
 *     until then. The cleaner compacts the partition, so a load reads its
 *     compacted size, not its history. One that stops leading it unloads
 *     them (NOT_COORDINATOR).
 *   - Each group's membership is written on every generation (Stable
 *     with the leader's assignment, or Empty) and when a static member
 *     takes a new id, so that a new coordinator restores its members and
 *     generation and they keep heartbeating without a rejoin. Written
 *     with acks=1 and not waited for (Kafka waits for the record before
 *     answering the leader's SyncGroup): if it is lost with a coordinator,
 *     the members rejoin, as they did before.
 *   - Offset commits are appended to that partition and answered once the
 *     high watermark passes them (acks=all), within
 *     offsets.commit.timeout.ms.
 *
 * Loop thread only. */
#ifndef CAIRN_BROKER_COORDINATOR_H
#define CAIRN_BROKER_COORDINATOR_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "broker/group/group.h"
#include "common/assert.h"
#include "common/slice.h"

struct broker;
struct partition;

struct coordinator_config {
    int32_t offsets_partitions;         /* offsets.topic.num.partitions */
    int32_t offsets_replication_factor; /* offsets.topic.replication.factor */
    int64_t commit_timeout_ms;          /* offsets.commit.timeout.ms */
    int32_t offsets_segment_bytes;      /* offsets.topic.segment.bytes */
    struct group_config group;
};

struct coordinator_commit;

/* Bytes of __consumer_offsets one loop turn replays while loading. */
#define COORDINATOR_LOAD_SLICE_BYTES (256u * 1024)

/* The load in progress (one partition at a time). */
struct coordinator_load {
    int32_t id;           /* -1: none */
    int32_t epoch;        /* the leader epoch it loads for */
    int64_t offset;       /* next offset to read */
    int64_t end;          /* the log end when it began */
    size_t records;
    size_t dropped;
    size_t bytes;
    size_t slices;
    uint64_t started_ms;
};

/* Where the group core's deferred answers go (the Kafka group handlers,
 * broker/kafka/kafka_group.c): they become the core's group_io callbacks
 * of the same names (broker/group/group.h). */
struct coordinator_answers {
    void (*join_done)(struct group_io *io, void *req,
                      const struct group_join_result *res);
    void (*sync_done)(struct group_io *io, void *req,
                      const struct group_sync_result *res);
    void (*commit_done)(struct group_io *io, void *req,
                        const int16_t *errors, size_t n);
};

struct coordinator {
    struct broker *b;
    struct coordinator_config cfg;
    struct group_io io;
    struct groups groups;
    struct groups loading; /* the groups of the load in progress */
    int32_t *loaded_epoch;  /* per offsets partition: leader epoch loaded,
                             * -1 when not (or not yet) */
    bool *want_load;
    int32_t n_state;
    uv_timer_t tick;
    uv_idle_t load;
    struct coordinator_load cur;
    int64_t retry_load_ms;     /* after a failed load; 0: none pending */
    uint64_t create_sent_ms;   /* last CreateTopics for the offsets topic */
    struct coordinator_commit *commits; /* appends waiting for the HW */
};

MUST_CHECK int coordinator_start(struct coordinator *co, struct broker *b,
                                 const struct coordinator_config *cfg,
                                 const struct coordinator_answers *answers);
void coordinator_close(struct coordinator *co);

/* Leadership changed: load or unload offsets partitions. */
void coordinator_sync(struct coordinator *co);

/* The partition count of __consumer_offsets, or 0 while it does not
 * exist. */
int32_t coordinator_partitions(const struct coordinator *co);

/* Routing for group: NONE when this broker coordinates it and has loaded
 * its partition, else NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
 * COORDINATOR_NOT_AVAILABLE (no offsets topic yet). */
int16_t coordinator_route(struct coordinator *co, struct slice group);

/* Creates the offsets topic if it does not exist (throttled). */
void coordinator_ensure_topic(struct coordinator *co);

#endif
