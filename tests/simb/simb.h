/* Deterministic simulation of a whole cluster over the production code:
 * four brokers host real partitions of two topics (t with two
 * partitions, u with one; replication factor 3) through the partition
 * host interface: broker/replication/partition.c (leader and follower
 * halves), isr.c, follower_partition.c, repair.c, on real logs
 * (broker/log/) on the simulated disk (common/io_sim.h), their group
 * commits run when the seed says (log_set_sync_runner). Three
 * controllers in libraft's fixture apply the metadata log with the real
 * state machine, the active one planning every change with the real
 * planners (tests/lib/meta_quorum.h: killed, cut off, failing over).
 *
 * Faults, at rates chosen per seed (swarm): a network that delays,
 * reorders, drops, duplicates and cuts brokers off; brokers that lose
 * power, exit on a failed disk (sync, write, full) and come back; bit
 * rot in one replica's durable batches (simb_rot.c); controller kills
 * and partitions; reassignments. Clients (simb_clients.c): a producer
 * with acks 0, 1 and all, and a consumer reading up to the HW.
 *
 * The glue here is what follower.c, kafka_fetch.c, kafka_epoch.c,
 * kafka_produce.c and the controller's handlers do around those cores:
 * carry requests and answers, one session per leader driven by the real
 * follower_session.c (one request in flight, durability before the next
 * fetch, back-off, request deadlines), park nothing (an empty answer comes
 * back at once), and answer with the partition's own checks and reads
 * (partition_check_reader, partition_read, partition_wait_acks,
 * repair_check_read).
 *
 * Checked after every step (simb_check_step): the HW never passes the log
 * end nor goes back under one leader; one leader per epoch; each ISR
 * within its replicas. When a broker starts to serve as leader and at the
 * end: every acknowledged and consumed record is in its log, as produced.
 * A consumer never reads a batch whose CRC fails, nor a different record
 * at an offset it read before. At the end, with faults healed: within a
 * bounded time every broker is unfenced, every partition led with a full
 * ISR and its damage repaired; every ISR member holds the leader's
 * batches below the HW; the controllers' metadata logs and images agree.
 * Builds with a bug planted in isr.c, log_verify.c or log_sync.c must
 * fail some seeds (make test). Everything runs on one thread from one
 * seed; time is simulated. */
#ifndef CAIRN_TESTS_SIMB_H
#define CAIRN_TESTS_SIMB_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/replication/follower_session.h"
#include "broker/replication/partition.h"
#include "common/io_sim.h"
#include "common/meta/meta.h"
#include "controller/plan.h"
#include "tests/lib/meta_quorum.h"

#define SIMB_BROKERS 4
#define SIMB_RF 3
#define SIMB_TOPICS 2
#define SIMB_PARTITIONS 3 /* slots: t-0, t-1 and u-0 (simb_slots) */
/* Segment files open at once over every simulated broker: fewer than the
 * logs they hold, so parking and reopening happen all the time. */
#define SIMB_LOG_FDS_MAX 3
#define SIMB_MIN_INSYNC 2
#define SIMB_LAG_MAX_MS 3000
#define SIMB_SESSION_MS 2000
#define SIMB_HEARTBEAT_MS 250
#define SIMB_ISR_CHECK_MS 1500  /* replica.lag.time.max.ms / 2, as Kafka */
#define SIMB_FETCH_PAUSE_MS 20    /* replica.fetch.backoff.ms, scaled down */
#define SIMB_RUN_MS 30000
#define SIMB_SETTLE_MS 30000
#define SIMB_ACKS_MAX 8192
#define SIMB_FETCH_BYTES 4096
#define SIMB_OFFSETS_MAX 16384    /* consumed offsets remembered */
#define SIMB_EPOCHS_MAX 1024      /* leader epochs checked for one leader */

enum simb_msg_type {
    SIMB_FETCH = 1,
    SIMB_FETCH_RSP,
    SIMB_EPOCH,
    SIMB_EPOCH_RSP,
    SIMB_PRODUCE,
    SIMB_PRODUCE_RSP,
    SIMB_ALTER,
    SIMB_ALTER_RSP,
    SIMB_HEARTBEAT,
    SIMB_METADATA,
    SIMB_CONSUME,
    SIMB_CONSUME_RSP,
    SIMB_LEAVE,            /* LeaveLeadership: a damaged replica */
    SIMB_LEAVE_RSP,
};

#define SIMB_CONTROLLER SIMB_BROKERS       /* endpoint */
#define SIMB_PRODUCER (SIMB_BROKERS + 1)   /* endpoint */
#define SIMB_CONSUMER (SIMB_BROKERS + 2)   /* endpoint */

struct simb_msg {
    enum simb_msg_type type;
    int from;
    int to;
    uint32_t incarnation;  /* of the broker sent to or from, when known */
    int32_t partition;
    int32_t replica;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int16_t error;
    int16_t acks;          /* produce: -1, 1 or 0 */
    int64_t offset;        /* fetch offset, end offset, produced offset */
    int64_t hw;
    int64_t log_start;
    uint32_t value;        /* produce */
    int64_t req;
    struct meta_replica_set isr;
    uint8_t *bytes;        /* fetched batches (owned); NULL when none */
    size_t len;
};

enum simb_ev_type {
    SIMB_EV_DELIVER = 1,
    SIMB_EV_SYNC,          /* run a broker's submitted group commits */
    SIMB_EV_TICK,          /* the world's periodic work */
    SIMB_EV_FETCH,         /* a follower asks its leader again */
    SIMB_EV_ALTER_TIMEOUT, /* an AlterPartition got no answer */
    SIMB_EV_CRASH,         /* a broker loses power */
};

struct simb_event {
    int64_t at_ms;
    uint64_t seq;
    enum simb_ev_type type;
    int broker;
    uint32_t incarnation;
    int32_t partition;
    struct simb_msg msg;
};

struct simb_world;

#define SIMB_WAITS_MAX 8

struct simb_part;

/* One durability wait a follower session counts on (leader li). */
struct simb_wait {
    struct simb_part *sp;
    int li;
};

struct simb_part {
    struct simb_broker *b;
    struct partition *p;
    int64_t sent_req;      /* the request its part went out in; 0: none */
    int32_t sent_epoch;    /* the leader epoch it was sent at */
    /* Its durability waits out, each counted by the session that asked
     * (leadership can move while one is out). */
    struct simb_wait *waits[SIMB_WAITS_MAX];
    int n_waits;
    int64_t alter_req;     /* the AlterPartition out, 0: none */
    /* acks=1 produce requests waiting for the log's fsync (the log
     * drops them uncalled if the broker dies). */
    void *acks1[SIMB_WAITS_MAX];
    int n_acks1;
    int32_t checked_epoch; /* leader epoch + 1 its log was last checked
                            * at as leader; 0: never */
    int32_t hw_epoch;      /* the leader epoch hw_last was seen at */
    int64_t hw_last;       /* its HW as leader at the last step */
    bool isr_work;         /* checked at the next ISR checks, as the
                            * broker's timer keeps it (isr_work hook) */
};

/* A follower's session with one leader (follower.c's struct fetcher). */
struct simb_fetcher {
    struct follower_session s;
    int64_t req;           /* the request out; 0: none */
    int n_out;             /* its partitions not yet answered */
    bool fetch;
    bool errors;
    size_t largest;        /* the largest record set of the answer */
    int pending_syncs;
    int64_t timer_ms;      /* the deadline an event is set for */
};

struct simb_broker {
    struct simb_world *w;
    int idx;
    int32_t id;            /* idx + 1 */
    bool up;
    uint32_t incarnation;
    int64_t epoch;         /* broker epoch; -1 until registered */
    struct meta_uuid uuid;
    uv_loop_t loop;
    struct tracer tracer;
    struct partition_host host;
    struct log_sync_runner runner;
    struct log *pending[SIMB_PARTITIONS]; /* submitted group commits */
    size_t n_pending;
    struct meta_image img; /* the metadata it last received */
    struct simb_part parts[SIMB_PARTITIONS];
    struct simb_fetcher fetchers[SIMB_BROKERS]; /* by leader index */
    int64_t restart_ms;
    int64_t next_isr_check_ms;
    bool dir_failed;       /* a log failed: the broker exits */
    int64_t last_heartbeat_ms; /* as the controller saw it */
};

enum simb_pending_kind {
    SIMB_PENDING_NONE = 0,
    SIMB_PENDING_REGISTER,
    SIMB_PENDING_ALTER,
    SIMB_PENDING_LEAVE,
};

/* The request waiting for the proposal in flight. */
struct simb_pending {
    enum simb_pending_kind kind;
    int broker;
    uint32_t incarnation;
    int32_t partition;
    int64_t req;
    int16_t error;
};

struct simb_ack {
    int64_t offset;
    uint32_t value;
};

struct simb_world {
    uint64_t seed;
    uint64_t rng;
    bool trace;
    int64_t now_ms;
    uint64_t seq;
    int64_t next_req;
    struct simb_event *heap;
    size_t n_heap;
    size_t cap_heap;
    struct io_sim *disk;
    struct simb_broker brokers[SIMB_BROKERS];
    struct meta_quorum q;      /* the controllers (tests/lib/meta_quorum.h) */
    unsigned ctl_idx;          /* the last leader */
    int last_leader;           /* at the last controller tick */
    struct simb_pending pending;
    struct plan_records out;
    struct meta_uuid topic_id[SIMB_TOPICS];
    /* Network, swarm-chosen. */
    int delay_max_ms;
    int drop_per_mille;
    int crash_per_mille;       /* per tick */
    int isolate_per_mille;
    int cut_per_mille;         /* a link between two brokers, per tick */
    int disk_per_mille;        /* a failed sync or write, per tick */
    int ctl_fault_per_mille;   /* a controller killed or cut, per tick */
    int reassign_per_mille;    /* a partition moved, per tick */
    int dup_per_mille;         /* a message delivered twice */
    int rot_per_mille;         /* a bit flipped in a durable batch */
    int rot_broker[SIMB_PARTITIONS]; /* index of the replica holding the
                                      * last rot injected; -1: none */
    int acks0_per_mille;       /* produce requests with acks=0 */
    int acks1_per_mille;       /* and with acks=1; the rest acks=all */
    bool isolated[SIMB_BROKERS];
    bool cut[SIMB_BROKERS][SIMB_BROKERS]; /* broker links down (both
                                           * ways; the controller still
                                           * hears both) */
    /* Producer. */
    uint32_t next_value;
    bool produce_out[SIMB_PARTITIONS];
    int64_t produce_sent_ms[SIMB_PARTITIONS];
    int64_t produce_req[SIMB_PARTITIONS]; /* the request out */
    struct simb_ack acks[SIMB_PARTITIONS][SIMB_ACKS_MAX];
    size_t n_acks[SIMB_PARTITIONS];
    /* Consumer. */
    int64_t consume_next[SIMB_PARTITIONS];
    bool consume_out[SIMB_PARTITIONS];
    int64_t consume_sent_ms[SIMB_PARTITIONS];
    uint64_t consumed[SIMB_PARTITIONS][SIMB_OFFSETS_MAX]; /* 0: not read */
    /* The broker that led each partition at each epoch (0: none seen). */
    int32_t leader_of[SIMB_PARTITIONS][SIMB_EPOCHS_MAX];
    /* Counts. */
    int n_crashes;
    int n_controller_kills;
    int n_reassignments;
    int n_disk_faults;
    int n_dir_failed;
    int n_elections;
    int n_produced;
    int n_refused;
    int n_acked_weak;          /* acks=1 answers */
    int n_rot;
    int n_corrupt_found;       /* by a read or the scrub */
    long n_consumed;           /* distinct offsets read */
    int64_t n_fetched_bytes;
    bool failed;
    bool closing;              /* the run is over, its world going */
    char why[1024];
};

/* The partitions, by slot: topic, its index and the partition's id. */
struct simb_slot {
    const char *name; /* "t-0" */
    const char *topic;
    int topic_idx;
    int32_t id;
};
extern const struct simb_slot simb_slots[SIMB_PARTITIONS];
extern const char *const simb_topics[SIMB_TOPICS];
/* The slot of a hosted partition. */
int32_t simb_slot(const struct partition *p);
/* Slot k's partition in img, or NULL before its topic exists. */
const struct meta_partition *simb_meta_partition(const struct meta_image *img,
                                                 int32_t k);

/* simb_world.c */
uint64_t simb_rand(struct simb_world *w);
bool simb_chance(struct simb_world *w, int per_mille);
void simb_send(struct simb_world *w, const struct simb_msg *m);
void simb_schedule(struct simb_world *w, const struct simb_event *ev);
void simb_fail(struct simb_world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void simb_trace(struct simb_world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool simb_run(struct simb_world *w, uint64_t seed, bool trace);
/* Every controller alive and connected with a leader; every broker up,
 * registered, unfenced and connected. */
bool simb_healthy(struct simb_world *w);
/* The active controller's image (the last leader's while none leads). */
const struct meta_image *simb_ctl(struct simb_world *w);

/* simb_clients.c */
void simb_produce(struct simb_world *w, int32_t partition);
void simb_on_produce_rsp(struct simb_world *w, const struct simb_msg *m);
void simb_consume(struct simb_world *w, int32_t partition);
void simb_on_consume_rsp(struct simb_world *w, const struct simb_msg *m);
/* Every acknowledged and consumed record of the partition is in b's log
 * (b was just elected, or leads at the end). */
void simb_check_acked(struct simb_world *w, const struct simb_broker *b,
                      int32_t partition);
/* The invariants checked after every step. */
void simb_check_step(struct simb_world *w);

/* simb_rot.c */
/* The offset of the first batch of l whose CRC fails, or -1. */
int64_t simb_log_damage(struct log *l);
/* A leader's read of span for a follower or consumer, checked: the
 * intact bytes to send, or -1 when none (KAFKA_STORAGE_ERROR); damage
 * is reported to the repair rules. */
int64_t simb_verify_read(struct simb_broker *b, struct partition *p,
                         struct log_span *span);
/* The background scrub's share of one broker tick. */
void simb_scrub(struct simb_broker *b);
/* Maybe flips a bit (the seed's rate), one damaged copy at a time. */
void simb_rot_tick(struct simb_world *w);
/* Whether the last rot injected into partition k is repaired (its
 * replica up, its log intact). */
bool simb_rot_gone(struct simb_world *w, int32_t k);
/* No injected rot is left unrepaired. */
bool simb_no_rot(struct simb_world *w);
/* After the quiet tail: no live replica holds damage. */
void simb_rot_check_end(struct simb_world *w);

/* simb_broker.c */
void simb_broker_init(struct simb_world *w, struct simb_broker *b, int idx);
void simb_broker_start(struct simb_broker *b);
/* The process dies; with power_loss its unsynced writes are gone too. */
void simb_broker_crash(struct simb_broker *b, bool power_loss);
void simb_broker_free(struct simb_broker *b);
void simb_broker_receive(struct simb_broker *b, struct simb_msg *m);
/* Every session does what it can now (after any change). */
void simb_broker_follow(struct simb_broker *b);
/* The deadline of the session with leader li passed. */
void simb_broker_fetcher_tick(struct simb_broker *b, int li);
void simb_broker_sync(struct simb_broker *b);
void simb_broker_tick(struct simb_broker *b);
void simb_broker_alter_timeout(struct simb_broker *b, int32_t partition,
                               int64_t req);
/* Every batch of p's log from offset `from` on, with cb for each. */
int simb_read_batches(struct log *l, int64_t from,
                      void (*cb)(void *arg, const uint8_t *batch,
                                 const struct record_batch_header *h),
                      void *arg);

#endif
