/* The partition log's state, shared by its files: broker/log/log.c
 * (append, read, truncate), broker/log/log_open.c (open, recovery, close),
 * broker/log/log_sync.c (group commit), broker/log/log_startup.c (the
 * start-up check), and retention and the cleaner. Not for use outside
 * them. */
#ifndef CAIRN_BROKER_LOG_INTERNAL_H
#define CAIRN_BROKER_LOG_INTERNAL_H

#include "broker/log/log.h"
#include "broker/log/log_segment.h"
#include "broker/log/log_startup.h"
#include "common/limits.h"
#include "common/net/http_metrics.h"

#define LOG__RECOVERY_POINT_FILE "recovery-point-checkpoint"
#define LOG__START_OFFSET_FILE "log-start-offset-checkpoint"
#define LOG__CLEAN_FILE ".clean-shutdown"
/* A segment's files set aside for deletion end so (log_retention.c). */
#define LOG_DELETED_SUFFIX ".deleted"

struct log_waiter {
    int64_t offset;
    log_durable_cb cb;
    void *arg;
    int rc; /* RC_OK while pending; an error once it can never succeed */
};

struct log_sync_job;
struct log_clean_job;

struct log {
    struct log_config cfg;
    uv_loop_t *loop;
    struct tracer *tracer;
    /* Ordered by base offset; never empty; the last one takes appends.
     * Segments with unsynced bytes (dirty) always form a suffix. */
    struct log_segment **segs;
    size_t n_segs;
    size_t cap_segs;
    uint8_t *scan_buf;        /* LOG_SCAN_BUFFER_BYTES, the thread's
                               * (shared by its logs, log_open.c) */
    struct log_epoch_cache epochs;
    int64_t durable_end;      /* every offset below is fdatasync'd */
    int64_t recovery_point;   /* as checkpointed */
    struct log_clean_job *cleaning; /* the compaction pass in flight */
    int64_t clean_checkpoint; /* cleaner-offset-checkpoint */
    int64_t start_offset;     /* set by DeleteRecords, a follower's log
                               * start or a full truncation, and
                               * checkpointed; the log starts at the
                               * larger of it and the first segment */
    uint64_t truncations;     /* bumped by every cut, to spot races */
    int failed;               /* sticky, set only by log_fail() */
    int64_t corrupt_offset;   /* the first bad batch the start-up
                               * check found, or -1 */
    log_failed_cb failed_cb;  /* told once, by log_fail() */
    void *failed_arg;
    bool epochs_unsaved;      /* the epoch checkpoint lags the cache */
    bool dir_dirty;           /* files created or removed since last sync */
    /* The checkpoints and markers the directory held when the log opened
     * (bits of log_open.c's table): one that was not listed is not opened
     * to find it missing. */
    unsigned found_at_open;
    bool index_files_listed;  /* and whether any index file was listed */
    /* Group commit. */
    uv_prepare_t prepare;     /* runs at the end of a loop iteration */
    struct log_sync_job *job; /* the one in flight, or NULL */
    const struct log_sync_runner *runner; /* NULL: the thread pool */
    bool sync_requested;
    uint64_t syncs_done;
    /* Start-up check (log_startup.c): the trusted segments still to
     * check, pinned, in order; checks[checks_done] is checked from
     * check_pos, its batches at or after check_offset. */
    struct log_segment **checks;
    size_t n_checks;
    size_t cap_checks;
    size_t checks_done;
    int64_t check_pos;
    int64_t check_offset;
    struct log_startup *startup; /* the queue it waits in, or NULL */
    struct log *startup_next;    /* the next log in that queue */
    log_damaged_cb damaged_cb;
    void *damaged_arg;
    /* The descriptor budget (log_fds.c): parked (segment files closed
     * until used), and the list of open logs, most recently used first. */
    bool parked;
    bool fds_listed;
    struct log *fds_prev;
    struct log *fds_next;
    bool closing;
    void (*closed_cb)(void *arg);
    void *closed_arg;
    struct log_waiter *waiters; /* ring buffer */
    size_t waiters_head;
    size_t waiters_len;
    size_t waiters_cap;
    size_t waiters_failed;      /* entries with rc != RC_OK */
    /* The partition directory, as long as it is: a broker holds one log
     * per replica, and a LOG_PATH_BYTES_MAX array each was 4 KB per
     * replica, zeroed and so touched as each log opened. */
    char dir[];
};

/* Index entries per segment allowed by segment.index.bytes. */
size_t log_index_entries_max(const struct log *l);
/* Appends an opened segment to the log's list. */
MUST_CHECK int log_push_segment(struct log *l, struct log_segment *seg);
/* Creates and appends an empty segment at base_offset. */
MUST_CHECK int log_new_segment(struct log *l, int64_t base_offset);
/* Writes the leader-epoch checkpoint, logging a failure. */
MUST_CHECK int log_save_epochs(struct log *l);

/* An offset checkpoint of the partition directory ("0\n<offset>\n" and
 * a checksum line, common/file.h: the recovery point, the log start
 * offset, the cleaner's): written durably (a failure logged), read back
 * as 0 when there is none. One that is not trusted (checksum, cut,
 * garbage, unreadable) is taken as 0, logged with if_bad (what that
 * means for the log) and rewritten so; 0 is the safe value of each. One
 * in the older format without a checksum is read once and rewritten with
 * one. */
MUST_CHECK int log_write_offset_file(struct log *l, const char *name,
                                     int64_t offset);
int64_t log_read_offset_file(struct log *l, const char *name,
                             const char *if_bad);

/* log_write_offset_file() of the recovery point / log start offset, and
 * recorded in l. */
MUST_CHECK int log_write_recovery_point(struct log *l, int64_t offset);
MUST_CHECK int log_write_start_offset(struct log *l, int64_t offset);

/* Fails the log for good with rc (see log_on_failure()): logs what
 * failed, tells the owner, then fails every waiter above the durable
 * end. Only the first failure counts. */
void log_fail(struct log *l, int rc, const char *what);

/* Calls back (later) every waiter above offset with rc. */
void log_sync_fail_waiters_above(struct log *l, int64_t offset, int rc);

/* Group commit: set-up, the blocking flush used at open and close, and
 * the final callback of every waiter at close (RC_OK if durable, else rc). */
void log_sync_init(struct log *l);
MUST_CHECK int log_sync_all_now(struct log *l);
void log_sync_drain_waiters(struct log *l, int rc);

/* Second half of log_close(), once no job is in flight (log_busy()). */
void log_close_finish(struct log *l);
/* Frees a job submitted to a runner without running it (log_abandon()). */
void log_sync_drop_job(struct log *l);
/* A sync, a cleaner pass or a start-up check job is in flight. */
bool log_busy(const struct log *l);

/* Opens l's segment files again if it was parked, and counts it as the
 * most recently used; past the budget, parks others (log_fds.c). Every
 * call that reads or writes segment files starts with it; an error
 * (a file that cannot be opened again) is that call's. */
MUST_CHECK int log_fds_use(struct log *l);
/* Takes l off the list (log_close()). */
void log_fds_forget(struct log *l);
/* log_attach() of a log parked while detached: counted as a park, and
 * left parked (off the list) until used. */
void log_fds_attach_parked(struct log *l);

/* The partition's name: the directory's last component. */
const char *log_partition_name(const struct log *l);

/* The start-up check's side in open and close (log_startup.c): seg, a
 * trusted segment just loaded, is to be checked (pinned; RC_NOMEM);
 * a closing log leaves the queue unless its job runs; a freed log lets
 * go of the segments it had still to check. */
MUST_CHECK int log_startup_plan(struct log *l, struct log_segment *seg);
bool log_startup_running(const struct log *l);
void log_startup_leave(struct log *l);
void log_startup_release(struct log *l);

#endif
