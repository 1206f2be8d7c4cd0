/* The partitions this broker hosts, kept in step with the metadata image:
 * a partition log (broker/log/log.h) under <log.dir>/<topic>-<partition> for
 * every partition that names this broker as a replica, created when it
 * appears and deleted with its directory when it goes (topic deleted or
 * replica moved). Each leader or leader-epoch change is logged as
 * "became leader of t-p at epoch e" or "became follower ..."; a new
 * leader records its epoch in the log's leader-epoch cache. A directory
 * keeps a partition.metadata file with the topic id, so a topic deleted
 * and created again under the same name never reuses old data.
 * Opening a log is blocking file work (directories, small files), so at
 * most PARTITIONS_OPENS_PER_TURN are opened per loop iteration, and none
 * more once PARTITIONS_OPEN_BUDGET_MS have gone by in it; the rest follow
 * in later iterations, and heartbeats and timers run in between. The
 * logs of one turn are a batch: when it is bulk (more than
 * PARTITIONS_SYNC_EACH_MAX), their syncs (several for a new log: each
 * file written, each directory entry) are deferred and made durable by
 * one syncfs(2) of the log directory (common/io.h), one journal commit
 * where there were thousands, before they take their roles. The roles
 * a metadata change gives are queued the same way and applied
 * PARTITIONS_APPLY_BUDGET_MS per turn: a broker fenced elsewhere hands
 * this one thousands of leaderships, and heartbeats must go on
 * meanwhile (a new leader's epoch costs no file until its first batch,
 * broker/log/log.h). Logs to open are queued by the pass over the image
 * (or by the changes that name them), so a turn costs its batch, not a
 * walk of the image. A log that fails to open is tried again after a
 * growing pause
 * (broker/replication/open_retry.h), and after a failure the log
 * directory itself is probed: if it no longer takes writes the broker is
 * told (log_dir_failed). Each log opened is then checked by its start-up
 * pass (broker/log/log_startup.h), off the loop thread and one job at a
 * time for the whole broker; damage it finds is repaired
 * (broker/replication/repair.h), a read it cannot make takes the log dir
 * offline as any failed read does.
 * The manager starts fenced, as a Kafka broker does: it opens and
 * recovers the logs the image names, but takes no role (no leader, no
 * follower, no "became" line) until replica_manager_unfence(), once the
 * broker is registered and caught up with the metadata log. An image
 * loaded before that may be older than the broker's registration: one
 * that still names it leader of what the controller is about to move.
 * Loop thread only. */
#ifndef CAIRN_BROKER_REPLICA_MANAGER_H
#define CAIRN_BROKER_REPLICA_MANAGER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/log/log_startup.h"
#include "broker/replication/hw_checkpoint.h"
#include "broker/replication/partition.h"
#include "broker/replication/open_retry.h"
#include "common/meta/meta.h"
#include "common/topic_config.h"
#include "common/trace.h"

#define PARTITIONS_OPENS_PER_TURN 128
#define PARTITIONS_OPEN_BUDGET_MS 20
/* Past this many logs to open, they open on the threadpool instead: in
 * jobs of at most PARTITIONS_OPEN_JOB_MAX logs, PARTITIONS_OPEN_JOBS at
 * a time (each job's syncs deferred to one syncfs, on its thread); the
 * loop only hosts what a job opened. A broker restarted with 100,000
 * partitions opens them on every core, and its loop stays free. */
#define PARTITIONS_OPEN_ASYNC_MIN 256
#define PARTITIONS_OPEN_JOB_MAX 512
#define PARTITIONS_OPEN_JOBS 2
/* Roles a metadata change gives are applied this long per loop turn, at
 * least PARTITIONS_APPLY_MIN of them (replica_manager_apply()). */
#define PARTITIONS_APPLY_BUDGET_MS 50
#define PARTITIONS_APPLY_MIN 64
/* Up to this many logs to open, or partitions changed, in one go, each
 * file written is synced as it is; past it the syncs wait for one
 * syncfs of the log directory. */
#define PARTITIONS_SYNC_EACH_MAX 16
/* A syncfs that holds the loop this long is logged (a warning). */
#define PARTITIONS_SYNCFS_SLOW_MS 500

/* Bad topic config values remembered as logged; past this many distinct
 * ones, the oldest may be logged again. */
#define REPLICA_MANAGER_BAD_VALUES_MAX 64

/* What the broker's settings say; copied by replica_manager_init(). */
struct replica_manager_config {
    int32_t broker_id;
    const char *log_dir;         /* borrowed for the call */
    struct log_config log;       /* broker defaults; topics may override */
    bool sync_before_ack;        /* log.sync.before.ack */
    bool unsafe_fsync_failure_ignore; /* unsafe.fsync.failure.ignore */
    /* The broker's defaults of the topic configs (min.insync.replicas,
     * message.max.bytes, log.retention.*, log.segment.bytes, ...): what
     * its config file says, else Kafka's. Topics and dynamic broker
     * configs override them field by field. */
    struct topic_config_values topic_defaults;
    int64_t lag_max_ms;          /* replica.lag.time.max.ms */
    bool validate_records;       /* produce.record.validation.enable */
    int64_t scrub_bytes_per_sec; /* log.scrub.bytes.per.second; 0: off */
    int64_t retention_check_ms;  /* log.retention.check.interval.ms */
    /* log.cleaner.*: the cleaner's own settings (its map's size); the
     * topics' settings come from topic_defaults. */
    struct log_clean_config clean;
    int64_t clean_backoff_ms;    /* log.cleaner.backoff.ms; 0: no cleaner */
};

/* What the replica manager calls out to, given at init; each may be NULL.
 * All run on the loop thread with `arg`. */
struct replica_manager_hooks {
    void *arg;
    /* A partition's high watermark or log end moved (deferred to the next
     * loop turn, see replica_manager_wake()). */
    void (*hw_moved)(void *arg, struct partition *p);
    /* The partitions' replica_seen (partition_host): when a follower's
     * fetch session last fetched while holding p at fetch_offset, or -1. */
    int64_t (*replica_seen)(void *arg, const struct partition *p,
                            int32_t replica, int64_t fetch_offset);
    /* A leader proposes a new ISR to the controller; the answer comes
     * back through partition_alter_done(). */
    void (*alter_isr)(void *arg, struct partition *p,
                      const struct meta_replica_set *isr);
    /* A leader found a corrupt batch at offset in p's log: it asks the
     * controller to move leadership away (broker/replication/repair.h). */
    void (*log_corrupt)(void *arg, struct partition *p, int64_t offset);
    /* Leadership of some partition changed (fetchers re-plan). */
    void (*followers_changed)(void *arg);
    /* A partition this broker follows found damage in its log: the
     * fetcher repairs it, and must look at it (follower_look_at()). */
    void (*follower_damaged)(void *arg, struct partition *p);
    /* The log directory no longer takes writes (a probe file could not
     * be written and synced after a partition failed to open): with its
     * only log directory gone the broker must stop, as Kafka's does when
     * every log dir has failed. */
    void (*log_dir_failed)(void *arg);
};

/* Fields are the manager's own: read them, never set them. */
struct replica_manager {
    uv_loop_t *loop;
    uv_idle_t more;              /* continues a partial apply */
    const struct meta_image *img; /* the image being followed */
    bool fenced;                 /* no roles until replica_manager_unfence */
    struct tracer *tracer;
    int32_t broker_id;
    char log_dir[LOG_PATH_BYTES_MAX];
    struct log_config log_cfg;   /* broker defaults; topics may override */
    bool sync_before_ack;        /* log.sync.before.ack */
    bool unsafe_fsync_failure_ignore; /* unsafe.fsync.failure.ignore */
    struct topic_config_values topic_defaults; /* the broker's */
    int64_t lag_max_ms;          /* replica.lag.time.max.ms */
    bool validate_records;       /* produce.record.validation.enable */
    struct record_validator *validator; /* produced batches' records */
    struct replica_manager_hooks hooks;
    uv_idle_t wake_idle;         /* runs the queued wakes */
    /* Partitions by their last change, newest first (change_seq counts
     * changes), and how many partitions were ever dropped: fetch
     * sessions look at what changed since they last did, not at every
     * partition (replica_manager_changed_since()). */
    struct partition *changed;
    uint64_t change_seq;
    uint64_t removals;
    struct partition **wake;     /* partitions whose HW or end moved */
    size_t n_wake;
    size_t cap_wake;
    uv_timer_t isr_timer;        /* ISR shrink checks, HW checkpoints */
    uv_timer_t retry_timer;      /* the next failed open to try again */
    struct open_retry retry;     /* logs that failed to open, backing off */
    uint64_t jitter;             /* xorshift state for the back-off */
    bool dir_failed;             /* log_dir_failed was called */
    int64_t retention_check_ms;
    uv_timer_t retention_timer;  /* old segments deleted */
    struct log_clean_config clean; /* the cleaner's settings */
    int64_t clean_backoff_ms;
    uv_timer_t clean_timer;      /* compaction passes started */
    struct partition_clean cleaning; /* the one pass in flight: .p */
    size_t clean_next;           /* round robin over the partitions */
    struct partition_host host;  /* the partitions' clock and outlets;
                                  * .replication_bytes_in counts the
                                  * batches appended as a follower */
    struct partition_counts counts; /* leaders, under-replicated, kept by
                                     * the partitions (host.counts) */
    struct topic_settings_cache {
        const struct meta_topic *topic; /* NULL: none */
        const struct meta_image *img;
        int64_t offset;
        struct topic_config_values values;
    } settings_cache; /* the last topic's resolved configs */
    uint64_t last_checkpoint_ms;
    uint64_t hw_changes_saved;   /* host.hw_changes the checkpoint has */
    uint64_t isr_period_ms;      /* of isr_timer */
    int64_t scrub_bytes_per_sec; /* log.scrub.bytes.per.second; 0: off */
    uint8_t *scrub_buf;          /* REPLICA_SCRUB_BUFFER_BYTES */
    size_t scrub_next;           /* round robin over the partitions */
    struct log_startup startup;  /* the logs' start-up CRC pass */
    struct partition **parts;
    size_t n;
    size_t cap;
    struct meta_index by_id;     /* parts by (topic id, partition) */
    struct meta_index opening;   /* those an open job holds (the value
                                  * is unused) */
    size_t open_jobs;            /* open jobs in flight */
    struct hw_checkpoint_cache hw_cache; /* the HW checkpoint, read once */
    /* Logs to open, in the order the image named them: each is looked
     * up again in the image when its turn comes. */
    struct replica_manager_pending {
        struct meta_uuid topic_id;
        int32_t id;
    } *pending;
    size_t n_pending;
    size_t cap_pending;
    size_t pending_next;         /* the next to open */
    size_t opened_run;           /* logs opened since the queue was last
                                  * empty, and when the first opened */
    uint64_t opened_run_ns;
    /* Partitions whose roles the image changed, to apply a turn's
     * budget at a time (same shape as the logs to open). */
    struct replica_manager_pending *to_apply;
    size_t n_to_apply;
    size_t cap_to_apply;
    size_t apply_next;           /* the next to apply */
    uint64_t apply_budget_ns;    /* PARTITIONS_APPLY_BUDGET_MS (tests
                                  * set less) */
    struct partition **checked;  /* what the ISR timer looks at */
    size_t n_checked;
    size_t cap_checked;
    bool closed;                 /* replica_manager_close() was called */
    bool full_pass;              /* the next apply visits the whole image */
    uint64_t visits;             /* partitions of the image visited by
                                  * the applies, for tests */
    size_t closing;              /* logs closing, not yet freed */
    /* Hashes of the topic config values logged as bad (a ring), so each
     * is logged once, not at every metadata update. */
    uint64_t bad_values[REPLICA_MANAGER_BAD_VALUES_MAX];
    size_t n_bad_values;
};

/* Creates log_dir if needed. RC_TOO_LARGE for a log_dir too long for
 * partition paths, RC_IO when it cannot be created, RC_NOMEM. */
MUST_CHECK int replica_manager_init(struct replica_manager *ps,
                                    uv_loop_t *loop,
                                    const struct replica_manager_config *cfg,
                                    const struct replica_manager_hooks *hooks,
                                    struct tracer *tracer);

/* Brings the hosted partitions in line with img: opens, closes and
 * configures their logs, and, once unfenced, takes the roles img gives
 * this broker. Errors on one partition are logged and leave it out; the
 * rest go on. Roles past the first turn's budget are taken in later
 * turns. Visits what img->changes names (common/meta/meta.h): the
 * partitions changed, the topics whose configs changed, every hosted
 * partition when brokers changed; the whole image when it says `all`,
 * when it records nothing (NULL), the first time, once unfenced, and
 * while logs wait to open. So the cost of a change does not grow with
 * the partitions the broker holds. */
void replica_manager_apply(struct replica_manager *ps,
                           const struct meta_image *img);

/* The broker is registered and its image has caught up with the
 * metadata log past its registration: the next replica_manager_apply()
 * takes the roles of its image. Once; harmless when unfenced already. */
void replica_manager_unfence(struct replica_manager *ps);

/* p's high watermark, log end or log start moved: parked fetches
 * reading it are re-evaluated at the start of the next loop turn, never
 * from inside the caller (which may be in the middle of answering one).
 * p counts as changed now (replica_manager_changed_since()). */
void replica_manager_wake(struct replica_manager *ps, struct partition *p);

/* The partitions changed after change sequence `since`, newest first:
 * iterate with p = replica_manager_changed_since(ps, since); p != NULL;
 * p = replica_manager_changed_next(p, since). Each partition appears
 * once however often it changed. */
struct partition *replica_manager_changed_since(
    const struct replica_manager *ps, uint64_t since);
struct partition *replica_manager_changed_next(const struct partition *p,
                                               uint64_t since);

/* Sends a leader's proposed ISR for p to the controller. */
void replica_manager_alter_isr(struct replica_manager *ps,
                               struct partition *p,
                               const struct meta_replica_set *isr);

/* Starts the periodic ISR checks and high-watermark checkpoints
 * (`replication-offset-checkpoint` in log.dir, Kafka's format). */
void replica_manager_start_timers(struct replica_manager *ps);

/* Closes every log (cleanly) and the handle; the loop frees them. */
void replica_manager_close(struct replica_manager *ps);

/* I/O on p's log failed (what: "a read", "its log", ...): as Kafka does
 * on an IOException, its log directory, the broker's only one, is taken
 * offline (hooks.log_dir_failed); once only. */
void replica_manager_io_failed(struct replica_manager *ps,
                               const struct partition *p, int rc,
                               const char *what);

struct partition *replica_manager_find(const struct replica_manager *ps,
                                       const char *topic, int32_t id);

/* The hosted partition id of the topic with topic_id, or NULL. */
struct partition *replica_manager_find_id(const struct replica_manager *ps,
                                          const struct meta_uuid *topic_id,
                                          int32_t id);

/* Whether what replica fetches of p counts against the replication
 * throttles: p is being reassigned and replica is not in its ISR. */
bool replica_manager_move_throttled(const struct replica_manager *ps,
                                    const struct partition *p,
                                    int32_t replica);

#endif
