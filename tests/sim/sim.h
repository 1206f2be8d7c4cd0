/* Deterministic simulation of one partition's replication (RF 3,
 * min.insync.replicas 2): three brokers with an in-memory log and a disk
 * that loses what was not fdatasync'd, the leader driven by the real ISR/HW
 * core (broker/replication/isr.c), followers whose session with the
 * leader is the real one (broker/replication/follower_session.c: one
 * request in flight, durability before the next fetch, back-off, request
 * timeouts) and whose partition follows the real per-partition rules
 * (broker/replication/follower_partition.c: when to ask about epochs,
 * where to truncate, what a Fetch answer means, the HW after an append),
 * a controller that validates AlterPartition and elects leaders, an
 * acks=all producer, a consumer that reads the log over and over, and a
 * network that delays, drops and reorders.
 *
 * Each broker keeps its log as a file on the simulated disk behind the
 * I/O seam (common/io_sim.h): records are checksummed frames written,
 * synced and read through io_pwrite/io_fdatasync/io_pread, and the seam's
 * faults hit them as they would a real disk: a failed fdatasync, a full
 * disk, a torn write, a read error, bit rot in a durable frame, and the
 * loss of unsynced writes when a broker dies. The brokers answer them as
 * Cairn's do: a failed sync or write or read takes the log dir offline
 * (the broker tells the controller, which fences it, and exits); a
 * corrupt frame is never served: a follower truncates before it and
 * fetches again, a leader asks the controller to move leadership.
 *
 * Everything runs on one thread from one seeded PRNG; time is simulated.
 * sim_node.c holds the brokers, sim_disk.c their files and the disk
 * faults, sim_world.c the event queue, network, controller, producer,
 * consumer, faults and the checks, sim_main.c the seed loop. */
#ifndef CAIRN_TESTS_SIM_H
#define CAIRN_TESTS_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/log/log_epoch.h"
#include "broker/replication/follower_partition.h"
#include "broker/replication/follower_session.h"
#include "broker/replication/isr.h"
#include "common/io_sim.h"

#define SIM_NODES 3
#define SIM_CONTROLLER SIM_NODES      /* endpoint index */
#define SIM_PRODUCER (SIM_NODES + 1)  /* endpoint index */
#define SIM_CONSUMER (SIM_NODES + 2)  /* endpoint index */
#define SIM_MIN_ISR 2
#define SIM_FETCH_RECORDS_MAX 16      /* records per fetch response */

/* Timing (ms): Kafka's defaults scaled down so a run sees many rounds. */
#define SIM_LAG_MAX_MS 3000           /* replica.lag.time.max.ms */
#define SIM_ISR_CHECK_MS 1500         /* lag / 2 */
#define SIM_CHECKPOINT_MS 5000        /* replication-offset-checkpoint */
#define SIM_FETCH_WAIT_MAX_MS 200     /* replica.fetch.wait.max.ms */
#define SIM_REQUEST_TIMEOUT_MS 1000   /* fetcher gives up, resends */
#define SIM_BACKOFF_MS 100            /* replica.fetch.backoff.ms */
#define SIM_RECONNECT_MAX_MS 1000     /* reconnect.backoff.max.ms */
#define SIM_ALTER_TIMEOUT_MS 5000     /* AlterPartition call timeout */
#define SIM_HEARTBEAT_MS 200
#define SIM_SESSION_MS 2000           /* broker.session.timeout.ms */
#define SIM_META_REFRESH_MS 250       /* brokers re-read metadata */
#define SIM_EXIT_MS 20                /* a failed log dir: heartbeat, exit */
#define SIM_REPAIR_ASK_MS 1000        /* a damaged leader asks again */
#define SIM_SCRUB_RECORDS 512         /* frames the scrub reads per check */

/* Error codes carried in simulated responses. */
enum sim_err {
    SIM_OK = 0,
    SIM_NOT_LEADER,
    SIM_FENCED_LEADER_EPOCH,
    SIM_UNKNOWN_LEADER_EPOCH,
    SIM_OUT_OF_RANGE,
    SIM_NOT_ENOUGH_REPLICAS,
    SIM_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    SIM_REFUSED, /* AlterPartition refused, registration refused */
    SIM_STORAGE_ERROR, /* KAFKA_STORAGE_ERROR: the log dir is offline */
};

struct sim_record {
    int32_t epoch;
    int64_t value; /* unique per produce request */
};

enum sim_msg_type {
    SIM_MSG_FETCH = 1,
    SIM_MSG_FETCH_RSP,
    SIM_MSG_EPOCH,       /* OffsetForLeaderEpoch */
    SIM_MSG_EPOCH_RSP,
    SIM_MSG_PRODUCE,
    SIM_MSG_PRODUCE_RSP,
    SIM_MSG_ALTER,       /* AlterPartition */
    SIM_MSG_ALTER_RSP,
    SIM_MSG_META,        /* the controller's partition and broker state */
    SIM_MSG_HEARTBEAT,
    SIM_MSG_REGISTER,
    SIM_MSG_REGISTER_RSP,
    SIM_MSG_LEAVE,       /* LeaveLeadership: a leader's log is damaged */
    SIM_MSG_CONSUME,     /* a consumer's Fetch */
    SIM_MSG_CONSUME_RSP,
};

/* The controller's image as brokers receive it. */
struct sim_meta {
    int64_t offset;             /* bumped by every change */
    struct meta_partition part;
    bool fenced[SIM_NODES];
};

struct sim_msg {
    enum sim_msg_type type;
    int from;
    int to;
    int64_t req;          /* request id, echoed in the response */
    enum sim_err err;
    int32_t epoch;        /* CurrentLeaderEpoch; LeaderEpoch in answers */
    int32_t last_epoch;   /* OffsetForLeaderEpoch: the epoch asked about */
    int64_t offset;       /* fetch offset, end offset, produced offset */
    int64_t hw;
    int64_t value;        /* produce */
    int64_t broker_epoch;
    int32_t partition_epoch;
    uint32_t incarnation;
    bool offline_dir;     /* heartbeat: the log dir has failed */
    struct meta_replica_set isr;
    struct sim_meta meta;
    int64_t sent_ms;      /* set by the network */
    uint32_t incarnation_from; /* the sender's, set by the network */
    int n_recs;
    struct sim_record recs[SIM_FETCH_RECORDS_MAX];
};

struct sim_waiter {
    int64_t offset; /* HW it waits for: last offset + 1 */
    int64_t req;
};

struct sim_node {
    int idx;
    int32_t id;              /* broker id: idx + 1 */
    bool up;
    uint32_t incarnation;    /* bumped by each restart */
    bool registered;
    int64_t broker_epoch;
    int64_t registered_at; /* metadata offset of our registration */
    int64_t started_ms;    /* this incarnation's start */

    /* Log: record i has offset i, as this broker wrote it (its file holds
     * the bytes: tests/sim/sim_disk.c); [0, durable) survives a crash. */
    struct sim_record *log;
    int64_t n;
    int64_t cap;
    int64_t durable;
    struct log_epoch_cache epochs; /* saved on every change, as log.c */
    bool sync_busy;
    int64_t sync_target;
    int fd;                  /* the log file on the simulated disk */
    int64_t recovery_point;  /* below it a bad frame is damage, not a
                              * torn tail (kept across crashes, as the
                              * recovery-point checkpoint) */
    bool dir_failed;         /* the log dir is offline: exiting */
    int64_t corrupt_offset;  /* first known corrupt frame; -1 none */
    int64_t corrupt_asked_ms;
    int64_t scrub_offset;
    int64_t repair_until;    /* cut below its HW: lacks records up to
                              * here (-1: not repairing) */
    bool cut_to_repair;      /* not yet back in the ISR with the HW */
    int64_t hw;
    int64_t hw_checkpoint;
    int64_t last_checkpoint_ms;

    /* Metadata as this broker knows it. */
    struct sim_meta meta;
    bool has_meta;

    /* Leader. */
    bool leading;
    struct isr_state isr;
    bool alter_in_flight;
    int64_t alter_req;
    struct sim_waiter *waiters;
    size_t n_waiters;
    size_t cap_waiters;
    bool parked[SIM_NODES];          /* a long-polling follower fetch */
    struct sim_msg parked_fetch[SIM_NODES];
    int64_t park_token[SIM_NODES];

    /* Follower. */
    enum partition_follow follow; /* follower_partition.h's states */
    struct follower_session session; /* the real one, follower_session.c */
    int64_t fetch_req;
    int64_t fetch_offset_sent;

    /* Checks. */
    int64_t hw_checked;   /* offsets below it were compared (committed) */
    int64_t acks_checked; /* offsets below it were compared (acked) */
    int32_t mono_epoch;   /* leader epoch the HW floor belongs to */
    int64_t mono_hw;
};

/* Event queue entries. */
enum sim_ev_type {
    SIM_EV_DELIVER = 1,
    SIM_EV_SYNC_DONE,
    SIM_EV_NODE_TIMER,
    SIM_EV_CONTROLLER_TICK,
    SIM_EV_PRODUCE_TICK,
    SIM_EV_FAULT,
    SIM_EV_RESTART,
    SIM_EV_HEAL,
    SIM_EV_ELECT,          /* a leader move soon after another */
    SIM_EV_CONSUME_TICK,
    SIM_EV_CRASH,          /* the node loses power (the fsync control) */
};

enum sim_timer {
    SIM_TIMER_ISR_CHECK = 1,
    SIM_TIMER_HEARTBEAT,
    SIM_TIMER_SESSION,            /* the follower session's deadline */
    SIM_TIMER_PARK,
    SIM_TIMER_ALTER_TIMEOUT,
    SIM_TIMER_EXIT,               /* a failed log dir: the process exits */
};

struct sim_event {
    int64_t at_ms;
    uint64_t seq;
    enum sim_ev_type type;
    int node;
    uint32_t incarnation;
    enum sim_timer timer;
    int64_t token;
    struct sim_msg msg;
};

struct sim_controller {
    struct sim_meta meta;
    int64_t broker_epoch[SIM_NODES];
    uint32_t incarnation[SIM_NODES];
    int64_t registered_at[SIM_NODES]; /* meta offset at registration */
    int64_t last_heartbeat_ms[SIM_NODES];
    int64_t next_broker_epoch;
    int64_t last_isr_change_ms;
    int n_isr_changes;
    int n_leader_changes;
    bool offline_damaged; /* no leader: every in-sync copy is damaged */
};

struct sim_ack {
    int64_t value; /* -1: not acknowledged */
};

/* Switches for negative controls: each makes the brokers unsafe in one
 * way, and the checks must catch it. */
struct sim_options {
    bool trace;
    bool unsafe_fsync; /* a failed fdatasync counts as done */
    bool no_crc;       /* frames are served without their CRC check */
};

struct sim_world {
    uint64_t seed;
    struct sim_options opt;
    uint64_t rng;
    int64_t now_ms;
    uint64_t step;
    uint64_t seq;
    int64_t next_req;

    struct sim_event *heap;
    size_t n_heap;
    size_t cap_heap;

    struct sim_node nodes[SIM_NODES];
    struct sim_controller ctl;

    /* Network, set by the seed's fault profile. */
    int delay_min_ms;
    int delay_max_ms;
    int drop_per_mille;
    int spike_per_mille;     /* a long delay: a late, reordered message */
    bool isolated[SIM_NODES];

    /* Phases. */
    int64_t faults_end_ms;   /* faults stop; crashed nodes restart */
    int64_t quiet_from_ms;   /* no ISR change allowed from here */
    int64_t end_ms;
    int crash_per_mille;     /* per fault tick */
    int second_crash_per_mille; /* a second broker while one is down */
    int isolate_per_mille;
    int elect_per_mille;
    int disk_per_mille;      /* a disk fault, per fault tick */

    /* The disk (tests/sim/sim_disk.c). */
    struct io_sim *disk;
    bool disk_fault_armed;   /* a seam fault waits for its call */
    int64_t damaged_from[SIM_NODES]; /* rot not yet cut away; -1 none */

    /* Consumer. */
    int64_t consumer_offset;
    int64_t consumer_req;
    int64_t consumer_sent_ms;

    /* Producer and what it was told. */
    int64_t next_value;
    int64_t n_produced;
    int64_t n_acked;
    int64_t n_refused;
    int64_t *acked_at;       /* offset -> value, -1 when none */
    int64_t *committed;      /* offset -> value seen below some HW */
    int64_t cap_offsets;
    int64_t max_acked_offset;

    /* Violation (first one stops the run). */
    bool failed;
    char why[256];

    int n_crashes;
    int n_double_crashes;
    int64_t n_truncated;     /* records followers cut off their logs */
    int n_isolations;
    int n_elections;
    int n_disk_faults;
    int n_rot;
    int n_dir_failed;
    int n_corrupt_found;
    int n_offline_damaged;
    int64_t n_consumed;
};

/* --- sim_world.c --------------------------------------------------------- */

uint64_t sim_rand(struct sim_world *w);
int64_t sim_rand_range(struct sim_world *w, int64_t lo, int64_t hi);
bool sim_chance(struct sim_world *w, int per_mille);
int64_t sim_new_req(struct sim_world *w);
void sim_schedule(struct sim_world *w, const struct sim_event *ev);
void sim_send(struct sim_world *w, const struct sim_msg *m);
void sim_node_timer(struct sim_world *w, struct sim_node *n,
                    enum sim_timer t, int64_t token, int64_t after_ms);
void sim_fail(struct sim_world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sim_trace(struct sim_world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sim_offsets_reserve(struct sim_world *w, int64_t n);
void sim_controller_receive(struct sim_world *w, const struct sim_msg *m);
void sim_controller_tick(struct sim_world *w);
void sim_controller_init(struct sim_world *w);
void sim_producer_receive(struct sim_world *w, const struct sim_msg *m);
void sim_check(struct sim_world *w);
void sim_check_end(struct sim_world *w);
void sim_world_init(struct sim_world *w, uint64_t seed,
                    const struct sim_options *opt);
/* The broker goes down (power loss of its files); it restarts later. */
void sim_crash(struct sim_world *w, int i);
void sim_consumer_receive(struct sim_world *w, const struct sim_msg *m);
void sim_world_free(struct sim_world *w);
bool sim_world_step(struct sim_world *w);

/* --- sim_node.c ---------------------------------------------------------- */

void sim_node_init(struct sim_world *w, struct sim_node *n, int idx);
void sim_node_free(struct sim_node *n);
void sim_node_receive(struct sim_world *w, struct sim_node *n,
                      const struct sim_msg *m);
void sim_node_on_timer(struct sim_world *w, struct sim_node *n,
                       enum sim_timer t, int64_t token);
void sim_node_sync_done(struct sim_world *w, struct sim_node *n);
void sim_node_crash(struct sim_world *w, struct sim_node *n);
void sim_node_restart(struct sim_world *w, struct sim_node *n);
/* The log truncation hook the checks use to forget compared offsets. */
void sim_node_truncate(struct sim_world *w, struct sim_node *n, int64_t end);
/* The log dir failed (what: the call): the broker tells the controller
 * and exits. */
void sim_node_dir_failed(struct sim_world *w, struct sim_node *n,
                         const char *what);

/* --- sim_disk.c ---------------------------------------------------------- */

/* Frame bytes per record. */
#define SIM_FRAME_BYTES 20

/* Opens (creating) n's log file and makes its name durable. */
void sim_disk_open(struct sim_world *w, struct sim_node *n);
/* Writes the frame of record offset; false when the write failed. */
bool sim_disk_write(struct sim_world *w, struct sim_node *n, int64_t offset,
                    const struct sim_record *r);
/* fdatasync of n's file: 0, or -1 with errno. */
int sim_disk_sync(struct sim_node *n);
/* Cuts n's file to end records, durably; false when a call failed. */
bool sim_disk_truncate(struct sim_node *n, int64_t end);
/* Reads record offset through the seam: RC_OK, RC_CORRUPT (its CRC or
 * framing is bad, unless opt.no_crc), RC_IO. */
int sim_disk_read(struct sim_world *w, struct sim_node *n, int64_t offset,
                  struct sim_record *out);
/* Recovery at start: the records the file holds, each checked; a bad
 * frame below the recovery point is kept and named (corrupt_offset), one
 * above it is a torn tail and is cut. False on an I/O error. */
bool sim_disk_recover(struct sim_world *w, struct sim_node *n);
/* The unsafe-fsync control counted n's failed sync as done: n loses
 * power before its next sync, and the leader with it (jepsen/'s
 * fsync-lie-kill-leader), so that the lie can cost a record. */
void sim_disk_lied(struct sim_world *w, struct sim_node *n);
/* Maybe injects one disk fault (the seed's profile says how often). */
void sim_disk_fault_tick(struct sim_world *w);
/* n found a corrupt frame at offset: only injected bit rot may explain
 * it; anything else is a write n counted durable that did not last. */
void sim_disk_explain(struct sim_world *w, const struct sim_node *n,
                      int64_t offset);
/* After the quiet tail: the leader's file holds every acknowledged record
 * intact. */
void sim_disk_check_end(struct sim_world *w);

#endif
