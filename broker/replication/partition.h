/* One partition hosted by this broker: its log, the leadership it last saw in
 * the metadata, and, while it leads, the followers' fetch state, the ISR, the
 * high watermark and the requests waiting for it (the rules are
 * broker/replication/isr.h's). acks=all completes on one path: "the high
 * watermark has passed my last offset"; acks=1 once the write is durable here.
 * With log.sync.before.ack (the default) an offset counts towards the high
 * watermark only once fdatasync'd (group commit), on the leader and on every
 * follower (a follower's fetch offset is its durable end). As a follower it
 * truncates where its log diverges from the leader's, then appends what it
 * fetches (broker/replication/follower.h). Owned by struct replica_manager
 * (broker/replication/replica_manager.c), which frees it only after its log
 * has closed, so log callbacks can always reach it. Loop thread only. */
#ifndef CAIRN_BROKER_PARTITION_H
#define CAIRN_BROKER_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log/log.h"
#include "broker/log/producer_state.h"
#include "broker/replication/follower_partition.h"
#include "broker/replication/isr.h"
#include "common/kafka/record_validate.h"
#include "broker/log/log_cleaner.h"
#include "common/meta/meta.h"

struct partition;
struct record_validator;
struct replica_manager;
struct tracer;

typedef void (*partition_hw_cb)(void *arg, int rc);

/* What the leaders among a host's partitions add up to, kept by the
 * partitions as their roles and ISRs change (the metrics read it without
 * walking 100,000 partitions). */
struct partition_counts {
    int64_t leaders;
    int64_t under_replicated; /* led here, ISR smaller than the replicas */
    int64_t under_min_isr;    /* led here, ISR below min.insync.replicas */
};

/* What a partition needs from the broker that hosts it: the time, and where
 * its news goes. partition.c reads no clock and calls nothing of the
 * broker's but these, so a test or the simulation hosts real partitions
 * with its own clock and its own idea of the controller. The broker's is
 * broker/replication/replica_manager.c's. One host serves many
 * partitions; the partitions borrow it. */
struct partition_host {
    int32_t self;                       /* this broker's id */
    struct tracer *tracer;              /* the partition's events */
    struct record_validator *validator; /* NULL: client batches' records
                                         * are not walked (Kafka's
                                         * LogValidator off) */
    uint64_t replication_bytes_in;      /* follower appends, counted */
    uint64_t hw_changes;                /* bumped by every change of a
                                         * partition's high watermark
                                         * (the checkpoint's "changed?") */
    void *ctx;
    int64_t (*now_ms)(void *ctx);       /* monotonic ms */
    int64_t (*wall_ms)(void *ctx);      /* ms since the epoch: record
                                         * timestamps, segment.ms */
    /* p's log end or high watermark moved: parked fetches may be
     * answered. Must not call back into p synchronously. */
    void (*wake)(void *ctx, struct partition *p);
    /* A leader proposes this ISR to the controller (AlterPartition); the
     * answer comes back through partition_alter_done(). */
    void (*alter_isr)(void *ctx, struct partition *p,
                      const struct meta_replica_set *isr);
    /* p's log is damaged from corrupt_offset (-1: it lacks records below
     * the HW it was cut under): ask the controller to take this replica
     * out of p's ISR, and its leadership (LeaveLeadership,
     * broker/replication/repair.h). May be NULL: nobody to ask. */
    void (*leave_isr)(void *ctx, struct partition *p, int64_t corrupt_offset);
    /* When replica's fetch session last fetched while holding p at
     * fetch_offset (KIP-227: such fetches leave p out), or -1 (no such
     * session). May be NULL. */
    int64_t (*replica_seen)(void *ctx, const struct partition *p,
                            int32_t replica, int64_t fetch_offset);
    /* p has ISR work again (partition_needs_isr_check() turned true):
     * call partition_check_isr() periodically until it turns false. A
     * quiet leader (every follower in the ISR at its log end, nothing
     * pending) needs no check until something changes, and every change
     * comes through a partition_*() call that calls this. May be NULL:
     * the host checks every partition. */
    void (*isr_work)(void *ctx, struct partition *p);
    /* p, a follower, found damage in its log (repair_log_corrupt()):
     * its fetcher repairs it, and must look at p though no answer
     * moved it. May be NULL: the host's fetchers look at every
     * partition each round. */
    void (*follower_damaged)(void *ctx, struct partition *p);
    struct partition_counts *counts; /* NULL: not kept */
};

struct partition_waiter {
    int64_t offset;
    partition_hw_cb cb;
    void *arg;
    int64_t since_ms; /* loop time it began waiting */
};

/* acks=all requests released after waiting this long (or failed after
 * any wait) are told as an event: how many, how long, what moved the HW
 * and which ISR they waited for. */
#define PARTITION_ACK_WAIT_EVENT_MS 500
/* At most one such release event per partition this often; the next one
 * counts those held back. */
#define PARTITION_ACK_EVENT_EVERY_MS 1000
/* acks=all writes refused (NOT_ENOUGH_REPLICAS) or timed out are counted
 * per partition and told as events at the same pace: the first at once,
 * the rest of each PARTITION_ACK_EVENT_EVERY_MS in one line ("refused 12
 * requests"), by the next refusal or ISR check after it. */
struct partition_ack_tally {
    uint64_t held;      /* counted since the last line */
    int64_t line_ms;    /* when the last line went; 0: none yet */
    int64_t longest_ms; /* timeouts: the longest wait among held */
    int64_t offset;     /* timeouts: the highest offset waited for */
};

/* An ISR change whose outcome is unknown (the answer lost, the controller
 * moved) is sent again at the next follower fetch or ISR check this long
 * after the last attempt, as Kafka's AlterPartitionManager retries. */
#define PARTITION_ALTER_RETRY_MS 500

struct partition {
    struct partition_host *host;
    struct replica_manager *owner;    /* the glue's; partition.c never
                                       * reads it (NULL in tests) */
    struct meta_uuid topic_id;
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    int32_t id;
    struct log *log;
    int32_t leader;
    int32_t leader_epoch;
    int32_t partition_epoch;
    struct meta_replica_set replicas; /* from the metadata */
    struct meta_replica_set isr;      /* committed, from the metadata */
    struct meta_replica_set isr_prev; /* before its last change */
    int32_t min_insync;               /* min.insync.replicas */
    int32_t max_message_bytes;        /* max.message.bytes: larger batches
                                       * are refused (MESSAGE_TOO_LARGE) */
    bool log_append_time;             /* message.timestamp.type is
                                       * LogAppendTime */
    int64_t timestamp_before_max_ms;  /* message.timestamp.before.max.ms */
    int64_t timestamp_after_max_ms;   /* message.timestamp.after.max.ms */
    struct log_retention retention;   /* retention.ms / .bytes in force */
    bool compacted;                   /* cleanup.policy has "compact":
                                       * records need keys */
    struct log_clean_config clean;    /* the topic's cleaner settings */
    bool seen;
    size_t owner_pos;                 /* its place in its owner's parts */
    bool closing;
    bool sync_before_ack;
    bool alter_in_flight;             /* an AlterPartition is out */
    int64_t alter_sent_ms;            /* when the last one went */
    bool wake_queued;                 /* in the owner's wake list */
    bool role_queued;                 /* in the owner's roles to apply */
    size_t checked_pos;               /* its place in the owner's ISR
                                       * checks + 1; 0: not there */
    /* The owner's list of partitions by their last change (append, high
     * watermark, log start, leadership), newest first, for fetch
     * sessions to find what changed since they last looked. */
    uint64_t change_seq;
    struct partition *change_prev;
    struct partition *change_next;
    enum partition_follow follow;
    int64_t hw;                       /* high watermark */
    char isr_why[256];                /* why the pending ISR change */
    bool hw_stalled;                  /* as leader: ISR below min ISR */
    int64_t ack_event_ms;             /* last acks=all release event */
    uint64_t ack_events_held;         /* releases not told since */
    struct partition_ack_tally ack_refused;   /* NOT_ENOUGH_REPLICAS */
    struct partition_ack_tally ack_timed_out; /* REQUEST_TIMED_OUT */
    struct isr_state repl;        /* as leader: followers and ISR */
    struct producer_state producers;  /* idempotent producers' windows */
    /* broker/replication/repair.h: where this log's batches stop being
     * trustworthy (-1: nowhere known), when a leader last asked the
     * controller to move away because of it, and the scrub's place. */
    int64_t corrupt_offset;
    int64_t corrupt_asked_ms;
    int64_t scrub_offset;
    /* Cut below its high watermark to repair: until its log reaches this
     * offset again it lacks records the ISR promised, so it asks to
     * leave the ISR if it finds itself in it and takes no writes if it
     * is elected (-1: not repairing). */
    int64_t repair_until;
    /* Cut to repair and not yet back in the ISR with the leader's high
     * watermark: until then an answer with a higher one means it was
     * taken back too early. */
    bool cut_to_repair;
    /* The controller confirmed this replica out of the ISR to repair:
     * out as of leader epoch left_leader_epoch and partition epoch
     * left_partition_epoch (repair_left_isr()); answers at or below the
     * partition epoch of the last cut (cut_partition_epoch) are late
     * answers to asks made before it. */
    bool left_confirmed;
    int32_t left_leader_epoch;
    int32_t left_partition_epoch;
    int32_t cut_partition_epoch;
    struct partition_waiter *waiters; /* by offset, oldest first */
    size_t n_waiters;
    size_t cap_waiters;
};

bool partition_is_leader(const struct partition *p);

/* The leader's checks of a reader (a Fetch or OffsetForLeaderEpoch) of a
 * partition it leads: a current_leader_epoch other than its own fences
 * the caller (KIP-320: FENCED_LEADER_EPOCH when older,
 * UNKNOWN_LEADER_EPOCH when newer; -1 is not checked), and a replica_id
 * (>= 0: a follower; -1: a consumer) outside the replicas is
 * NOT_LEADER_OR_FOLLOWER. A Kafka error code, 0 when it may read. */
int16_t partition_check_reader(const struct partition *p,
                               int32_t current_leader_epoch,
                               int32_t replica_id);

/* The host's wall clock in ms since the epoch: what record timestamps,
 * segment.ms rolls and retention are measured against (host->now_ms is
 * monotonic). */
int64_t partition_wall_ms(const struct partition *p);

/* The leader's own contribution to the high watermark: its durable log
 * end with log.sync.before.ack, else its log end. */
int64_t partition_leader_leo(const struct partition *p);

/* Appends a client batch as leader at the current leader epoch (validated
 * and offset-stamped by the log) and starts moving the high watermark.
 * With acks = -1 the committed ISR must hold min.insync.replicas first
 * (else RC_NOT_ENOUGH_REPLICAS, nothing written). An idempotent
 * producer's batch is checked against its sequence window: a duplicate of
 * one of its last five batches is not written again and *info carries the
 * original offsets; RC_PRODUCER_FENCED and RC_OUT_OF_ORDER_SEQUENCE reject
 * it. */
MUST_CHECK int partition_append(struct partition *p, uint8_t *batch,
                                size_t len, int64_t now_ms, int16_t acks,
                                struct log_append_info *info);

/* partition_append() for a client's batch: first Kafka's LogValidator
 * (common/kafka/record_validate.h) walks its records against the topic's
 * timestamp settings at wall_ms (the broker's wall clock), and the batch
 * takes the maxTimestamp and timestamp type Kafka stores (the CRC is
 * recomputed when they change; LogAppendTime topics get wall_ms). The
 * walk is skipped when the broker runs with
 * produce.record.validation.enable=false, a switch for benchmarks. When
 * the walk refuses the batch (RC_MALFORMED, RC_CORRUPT,
 * RC_INVALID_TIMESTAMP) *why says which record and why, and nothing is
 * written; why->message is NULL for every other outcome. */
MUST_CHECK int partition_append_client(struct partition *p, uint8_t *batch,
                                       size_t len, int64_t now_ms,
                                       int64_t wall_ms, int16_t acks,
                                       struct log_append_info *info,
                                       struct record_validate_result *why);

/* Calls cb(arg, RC_OK) once the high watermark reaches offset, or with
 * RC_NOT_LEADER if leadership is lost first (or the partition goes),
 * RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND if the committed ISR falls below
 * min.insync.replicas meanwhile, or the error that stopped the log.
 * offset must be above the current high watermark (check p->hw first).
 * RC_FULL when PARTITION_WAITERS_MAX wait. Called back later, never from
 * inside this call. */
MUST_CHECK int partition_wait_hw(struct partition *p, int64_t offset,
                                 partition_hw_cb cb, void *arg);

/* acks=1: calls cb once every offset below offset is durable here. */
MUST_CHECK int partition_wait_durable(struct partition *p, int64_t offset,
                                      partition_hw_cb cb, void *arg);

/* A read of at most max_bytes (the first batch whole) from offset for a
 * Fetch: a follower (replica) reads up to the log end, a consumer below
 * the high watermark (log_read()'s errors and span). */
MUST_CHECK int partition_read(const struct partition *p, bool replica,
                              int64_t offset, int64_t max_bytes,
                              struct log_span *span);

/* After an append whose batch ends at last_offset, what its acks ask to
 * wait for before the answer: nothing for acks=0 or once it holds; the
 * durable end for acks=1 with sync_before_ack; the high watermark for
 * acks=all. RC_OK with *waiting when cb will be called (as
 * partition_wait_hw()), RC_OK without when the answer may go now, or
 * the error that refuses the wait. */
MUST_CHECK int partition_wait_acks(struct partition *p, int16_t acks,
                                   int64_t last_offset, partition_hw_cb cb,
                                   void *arg, bool *waiting);

/* Follows the metadata of this partition: leadership, leader epoch, ISR,
 * partition epoch, the brokers' eligibility for the ISR (from img). A
 * new leader keeps its high watermark and assigns its epoch in the log's
 * epoch cache; a new follower fails its waiters and starts by asking the
 * leader where to truncate. */
void partition_apply_metadata(struct partition *p, int32_t self,
                              const struct meta_partition *mp,
                              const struct meta_image *img,
                              int32_t min_insync, int64_t lag_max_ms,
                              int64_t now_ms);

/* Leader: replica_id fetched at fetch_offset. Records it, moves the high
 * watermark, and may propose an ISR expansion (or send again one whose
 * outcome is unknown, PARTITION_ALTER_RETRY_MS after the last attempt).
 * RC_NOT_LEADER when not
 * leading, RC_NOT_FOUND when replica_id is not a follower. */
MUST_CHECK int partition_replica_fetch(struct partition *p, int32_t replica_id,
                                       int64_t fetch_offset, int64_t now_ms);

/* Leader: drops lagging followers from the ISR (AlterPartition), sends
 * again a change whose outcome is unknown, and re-evaluates the high
 * watermark. Called periodically. */
void partition_check_isr(struct partition *p, int64_t now_ms);
/* Takes p out of service (closing): it leads nothing from now on. */
void partition_close(struct partition *p);

/* Whether partition_check_isr() has anything to do for p: it leads and is
 * not quiet (a follower outside the ISR or short of the log end, an ISR
 * change pending, the high watermark short of the log end), or refused
 * or timed-out acks are still to be told. A check of a quiet leader
 * changes nothing, however much time passes: a follower at the log end
 * is caught up (Kafka's isCaughtUp), so an idle partition's ISR never
 * shrinks; a follower that stops fetching is fenced by the controller. */
bool partition_needs_isr_check(const struct partition *p);

/* How an AlterPartition ended (isr.h, isr_alter_done()). */
enum partition_alter {
    PARTITION_ALTER_COMMITTED, /* isr / partition_epoch are committed */
    PARTITION_ALTER_REFUSED,   /* not applied, by no attempt: revert */
    PARTITION_ALTER_UNKNOWN,   /* no answer, or one that cannot say: the
                                * change may still commit, so it stays
                                * pending and the next check sends it
                                * again */
};

/* What an AlterPartition answer with Kafka error code error says. Only
 * an error that says the change was not applied by this or any earlier
 * attempt of it is a refusal: the controller checked the leader and
 * partition epochs (so nothing was applied since) and then refused the
 * change itself (INELIGIBLE_REPLICA, INVALID_REQUEST). Every other error,
 * a stale epoch or a lost controller among them, may follow an attempt
 * that did commit (Kafka's Partition.handleAlterPartitionError). */
enum partition_alter partition_alter_outcome(int16_t error);

/* The controller answered this partition's AlterPartition (outcome); isr
 * and partition_epoch are read only when it is committed. */
void partition_alter_done(struct partition *p, enum partition_alter outcome,
                          const struct meta_replica_set *isr,
                          int32_t partition_epoch, int64_t now_ms);

/* Follower: whether p follows leader in state want (not closing). */
bool partition_follows(const struct partition *p, int32_t leader,
                       enum partition_follow want);

/* Follower: whether p's log end may be named in a Fetch, which counts it
 * towards the leader's HW: the log has not failed and, with
 * sync_before_ack, all of it is durable. */
bool partition_fetch_offset_durable(const struct partition *p);

/* Follower: appends the batches of a fetch response (records, len bytes)
 * keeping the leader's offsets and epochs; batches already held are
 * skipped, a trailing partial batch is ignored. Then the high watermark
 * becomes min(leader_hw, log end). RC_INVALID when a batch does not fit
 * the log end (the logs diverged). */
MUST_CHECK int partition_follower_append(struct partition *p,
                                         const uint8_t *records, size_t len,
                                         int64_t leader_hw);

/* Follower: the leader no longer holds what this log lacks (its log
 * start is past our end): empties the log and starts it, the producer
 * windows and the high watermark at offset. On failure the log is
 * stopped and the high watermark is not left past its end. */
MUST_CHECK int partition_follower_restart(struct partition *p,
                                          int64_t offset);

/* What a follower's fetcher does after one partition's Fetch answer. */
enum partition_fetched {
    PARTITION_FETCHED_DONE,     /* nothing more (dropped, restarted, or
                                 * back to asking where the logs diverge) */
    PARTITION_FETCHED_APPENDED, /* appended: wait for durability before
                                 * the next fetch */
    PARTITION_FETCHED_DIVERGED, /* a batch did not fit the log end: back
                                 * to asking where the logs diverge; wait
                                 * for durability of what is there */
    PARTITION_FETCHED_FAILED,   /* the append failed (the log reports it):
                                 * pause; wait for durability of what is
                                 * there */
    PARTITION_FETCHED_PAUSE,    /* an error on either side: pause before
                                 * the next request */
};

/* Follower: one partition's part of its leader's Fetch answer, to a
 * request that asked from fetch_offset: error is the partition's Kafka
 * error, records (len bytes, may be NULL) its batches, leader_hw and
 * leader_start the leader's high watermark and log start offset. Does
 * what follower_fetched_action() says: appends and follows the leader's
 * log start, restarts the log at the leader's log start, or goes back to
 * TRUNCATE; says what is left to the fetcher. */
enum partition_fetched partition_follower_fetched(struct partition *p,
                                                  int16_t error,
                                                  int64_t fetch_offset,
                                                  const uint8_t *records,
                                                  size_t len,
                                                  int64_t leader_hw,
                                                  int64_t leader_start);

/* Follower: leader (the broker id) answered OffsetForLeaderEpoch about
 * this log's latest epoch: error, and the epoch and end offset of its
 * answer. Truncates where follower_truncation_for() says, with an event
 * when records go, and fetches next once that is final (KIP-279 may ask
 * again). false when the answer was an error or the truncation failed:
 * pause before the next request. */
bool partition_follower_epoch_end(struct partition *p, int32_t leader,
                                  int16_t error, int32_t leader_epoch,
                                  int64_t end_offset);

/* Follower: cuts the log (and producer windows) at offset. */
MUST_CHECK int partition_follower_truncate(struct partition *p,
                                           int64_t offset);

/* Rebuilds the producer windows just after the log opened: the snapshot
 * (read only if the open listed one), then every batch after it; saves a
 * fresh snapshot. */
MUST_CHECK int partition_load_producers(struct partition *p, const char *dir);

/* Retention: deletes the old segments the topic's limits let go (below
 * this replica's HW; broker/log/log.h), with an event saying why. */
void partition_apply_retention(struct partition *p, int64_t wall_ms);

/* A cleaner pass's context, the caller's (done and arg set by it). */
struct partition_clean {
    struct partition *p;
    double ratio;
    void (*done)(void *arg); /* when the pass is over, after its event;
                                not if the partition closes first */
    void *arg;
};

/* Compaction: starts a cleaner pass on this log when one is due (a
 * compacted topic, dirty enough; broker/log/log_cleaner.h); c is borrowed
 * until done. RC_OK when one started; RC_NOT_FOUND when none is due; as
 * log_clean_start() otherwise. */
MUST_CHECK int partition_start_clean(struct partition *p, int64_t wall_ms,
                                     struct partition_clean *c);

/* Follower: the leader's log start offset moved; this log's start follows
 * it (up to this replica's HW), and the segments wholly below go. */
void partition_follow_log_start(struct partition *p, int64_t leader_start);

/* Leader: DeleteRecords up to offset (-1: the HW): the log start offset
 * moves there (checkpointed) and *low_watermark says where it is.
 * RC_NOT_LEADER, RC_OUT_OF_RANGE above the HW, RC_IO. */
MUST_CHECK int partition_delete_records(struct partition *p, int64_t offset,
                                        int64_t *low_watermark);

/* An acks=all request that waited timeout_ms for the high watermark to
 * pass offset timed out (the Produce handler answers it
 * REQUEST_TIMED_OUT; its waiter stays until the HW or a failure ends it):
 * counted, and told as an event as struct partition_ack_tally says. */
void partition_note_ack_timeout(struct partition *p, int64_t offset,
                                int64_t timeout_ms);

/* Fails every waiter with rc (leadership lost, partition closing). */
void partition_fail_waiters(struct partition *p, int rc);

#endif
