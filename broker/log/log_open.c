/* Opening, recovering and closing a partition log (broker/log/log.h). Runs on
 * the loop thread; recovery reads and fsyncs synchronously, which is what
 * a broker does before it serves the partition. */
#include "broker/log/log_cleaner.h"
#include "broker/log/log_open.h"
#include "broker/log/log_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/io.h"
#include "common/log_layout.h"
#include "common/rc.h"

#define LOG__SEGMENT_NAME_BYTES 24 /* 20 digits + ".log" */

static bool parse_segment_name(const char *name, int64_t *base)
{
    if (strlen(name) != LOG__SEGMENT_NAME_BYTES ||
        strcmp(name + 20, ".log") != 0) {
        return false;
    }
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9' || v > (INT64_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (name[i] - '0');
    }
    *base = v;
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name);
    size_t s = strlen(suffix);
    return n >= s && strcmp(name + n - s, suffix) == 0;
}

/* Sorted base offsets of the segment files; removes leftover temporaries
 * and the files of segments retention had set aside to delete
 * (broker/log/log_retention.c) or the cleaner had not swapped in
 * (broker/log/log_cleaner.c). */
struct segment_list {
    struct log *l;
    int64_t *bases;
    size_t n;
    size_t cap;
    int rv;
};

/* The files whose absence log_open() needs to know; found_at_open has
 * bit i set when names_found[i] was listed. */
static const char *const names_found[] = {
    LOG__RECOVERY_POINT_FILE,      LOG__START_OFFSET_FILE,
    LOG__CLEAN_FILE,               LOG_CLEANER_CHECKPOINT_FILE,
    LOG_LAYOUT_EPOCH_FILE,         LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE,
};

static int found_bit(const char *name)
{
    for (size_t i = 0; i < sizeof names_found / sizeof *names_found; i++) {
        if (strcmp(name, names_found[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

bool log_found_at_open(const struct log *l, const char *name)
{
    int bit = found_bit(name);
    return bit < 0 || (l->found_at_open & (1u << bit)) != 0;
}

static void list_one(void *arg, const char *name)
{
    struct segment_list *sl = arg;
    int64_t base = 0;
    int bit = found_bit(name);
    if (bit >= 0) {
        sl->l->found_at_open |= 1u << bit;
        return;
    }
    if (has_suffix(name, ".index") || has_suffix(name, ".timeindex")) {
        sl->l->index_files_listed = true;
    }
    if (has_suffix(name, ".tmp") || has_suffix(name, LOG_DELETED_SUFFIX) ||
        has_suffix(name, LOG_CLEANED_SUFFIX)) {
        char path[LOG_PATH_BYTES_MAX];
        if (file_path(path, sl->l->dir, name) == RC_OK) {
            io_unlink(path);
        }
        return;
    }
    if (sl->rv != RC_OK || !parse_segment_name(name, &base)) {
        return;
    }
    if (sl->n == sl->cap) {
        size_t cap = sl->cap == 0 ? 16 : sl->cap * 2;
        void *p = realloc(sl->bases, cap * sizeof *sl->bases);
        if (p == NULL) {
            sl->rv = RC_NOMEM;
            return;
        }
        sl->bases = p;
        sl->cap = cap;
    }
    sl->bases[sl->n++] = base;
}

/* A directory that does not exist yet is created: a new log. */
static int list_segments(struct log *l, int64_t **bases_out, size_t *n_out)
{
    struct segment_list sl = {.l = l};
    l->found_at_open = 0;
    l->index_files_listed = false;
    if (io_list_dir(l->dir, list_one, &sl) != 0) {
        if (errno != ENOENT) {
            return RC_IO;
        }
        *bases_out = NULL;
        *n_out = 0;
        return file_mkdirs(l->dir);
    }
    if (sl.rv != RC_OK) {
        free(sl.bases);
        return sl.rv;
    }
    if (sl.n > 1) {
        qsort(sl.bases, sl.n, sizeof *sl.bases, cmp_i64);
    }
    *bases_out = sl.bases;
    *n_out = sl.n;
    return RC_OK;
}

static void unlink_segment_files(struct log *l, int64_t base)
{
    char path[LOG_PATH_BYTES_MAX];
    if (log_segment_path(path, sizeof path, l->dir, base) == RC_OK) {
        io_unlink(path);
    }
    log_index_unlink(l->dir, base);
    l->dir_dirty = true;
}

static void recovered_batch_cb(void *arg, const struct record_batch_header *h)
{
    struct log *l = arg;
    if (h->partition_leader_epoch > log_epoch_latest(&l->epochs)) {
        bool changed = false;
        int rv = log_epoch_assign(&l->epochs, h->partition_leader_epoch,
                                  h->base_offset, &changed);
        if (rv != RC_OK) {
            l->failed = rv;
        }
    }
}

const char *log_partition_name(const struct log *l)
{
    const char *slash = strrchr(l->dir, '/');
    return slash == NULL ? l->dir : slash + 1;
}

/* Loads a trusted segment (below the recovery point, or after a clean
 * shutdown): its index files unless they are missing or fail their
 * checksum (then rebuilt by a scan that checks every batch's CRC). A
 * segment whose index files were loaded has had no batch checked: it is
 * left to the start-up check (broker/log/log_startup.h), which reads it
 * off the loop thread once the log is open. A bad batch in a trusted
 * segment is not a torn tail but damage to data once durable, and the
 * batches after it may be intact and acknowledged (this replica may be
 * the only one left in the ISR): that check does not cut it. It says
 * where the damage starts (log_corrupt_offset()); the replication layer
 * repairs it from an in-sync replica (broker/replication/repair.h), and
 * reads never serve it (broker/log/log_verify.h). Only a cut made by the
 * index rebuild, which cannot keep what follows, is made here. */
/* An empty segment may have no index files (one written to has them):
 * true when its files are missing or empty, so there is nothing to load
 * or write. */
static bool empty_index_kept(const struct log *l,
                             const struct log_segment *seg)
{
    return seg->size == 0 && log_index_files_probe(l->dir, seg->base_offset) !=
                                 LOG_INDEX_FILES_OTHER;
}

/* empty_index_kept() while the log opens: a directory that listed no
 * index file has none to look at (two calls per idle partition saved). */
static bool empty_index_kept_at_open(const struct log *l,
                                     const struct log_segment *seg)
{
    return seg->size == 0 &&
           (!l->index_files_listed || empty_index_kept(l, seg));
}

static int open_trusted(struct log *l, struct log_segment *seg, bool *cut)
{
    *cut = false;
    if (empty_index_kept_at_open(l, seg)) {
        return RC_OK; /* no batch to index or to check */
    }
    int index_rc = RC_OK;
    const char *ext = "index";
    int64_t file_size = seg->size;
    int rv = log_segment_load(seg, l->scan_buf, l->cfg.index_interval_bytes,
                              &index_rc, &ext);
    if (index_rc != RC_OK && rv != RC_IO && rv != RC_NOMEM) {
        TRACE_WARN(l->tracer, "dir=%s file=%020" PRId64 ".%s %s (%s), "
                   "rebuilt from the segment", l->dir, seg->base_offset, ext,
                   index_rc == RC_NOT_FOUND ? "missing" : "not trusted",
                   rc_str(index_rc));
    }
    *cut = rv == RC_CORRUPT; /* the index rebuild's scan cut it */
    if (*cut) {
        seg->dirty = true;
        rv = log_segment_save_index(seg);
        TRACE_ERROR(l->tracer, "partition=%s segment=%s/%020" PRId64 ".log "
                    "corrupt batch at offset=%" PRId64 " position=%" PRId64
                    " (file size %" PRId64 ") while its index was rebuilt: "
                    "log truncated there, later batches to be fetched again "
                    "from the leader", log_partition_name(l), l->dir,
                    seg->base_offset, seg->next_offset, seg->size,
                    file_size);
        return rv;
    }
    if (rv == RC_OK && index_rc == RC_OK) {
        rv = log_startup_plan(l, seg);
    }
    return rv;
}

/* Opens segment base and loads it (trusted: below the recovery point or
 * after a clean shutdown) or recovers it batch by batch. *cut is true when
 * its tail was cut off, so every later segment must go. */
static int open_one(struct log *l, int64_t base, bool trusted, bool *cut)
{
    struct log_segment *seg = NULL;
    *cut = false;
    int rv = log_segment_open(&seg, l->dir, base, log_index_entries_max(l));
    if (rv != RC_OK) {
        return rv;
    }
    rv = log_push_segment(l, seg);
    if (rv != RC_OK) {
        log_segment_unref(seg);
        return rv;
    }
    if (trusted) {
        return open_trusted(l, seg, cut);
    }
    /* What recovery checks must be what the device holds: after a failed
     * fdatasync (the reason this broker may have stopped) the kernel keeps
     * serving pages it never wrote, now marked clean, and a later sync
     * does not write them either. Dropping them makes recovery read the
     * device, so the log cannot believe in records no sync made durable.
     * Best effort: a kernel that keeps them leaves recovery as it was. */
    if (seg->size > 0) {
        (void)io_drop_cache(seg->fd);
    }
    int64_t file_size = seg->size;
    int64_t cut_at = -1;
    rv = log_segment_recover(seg, l->scan_buf, l->cfg.index_interval_bytes,
                             &cut_at, recovered_batch_cb, l);
    *cut = rv == RC_OK && cut_at >= 0;
    if (rv == RC_OK) {
        seg->dirty = true; /* make what recovery kept durable */
        /* An empty segment's index files stay as they are if they are
         * missing or empty: writing them costs a broker with 100,000
         * idle partitions 200,000 new files on its first restart. */
        bool kept = file_size == 0 && empty_index_kept_at_open(l, seg);
        rv = kept ? RC_OK : log_segment_save_index(seg);
    }
    if (*cut) {
        TRACE_WARN(l->tracer, "dir=%s segment=%020" PRId64 ".log torn or "
                   "corrupt batch at position=%" PRId64 " (file size %" PRId64
                   "), truncated there", l->dir, base, seg->size, file_size);
    }
    return rv;
}

/* A segment must start at or after its predecessor's end. */
static bool overlaps_previous(const struct log *l)
{
    if (l->n_segs < 2) {
        return false;
    }
    const struct log_segment *prev = l->segs[l->n_segs - 2];
    return prev->next_offset > l->segs[l->n_segs - 1]->base_offset;
}

/* A recovered segment ends short of its successor's base: the offsets
 * between are in no segment. Its successor's name was made durable by a
 * directory sync while its own tail was not (a power loss between), so
 * every later segment lies after the hole. (Between trusted segments a
 * gap is compaction's, and fine.) */
static bool hole_before_last(const struct log *l)
{
    if (l->n_segs < 2) {
        return false;
    }
    const struct log_segment *prev = l->segs[l->n_segs - 2];
    return prev->next_offset < l->segs[l->n_segs - 1]->base_offset;
}

struct open_plan {
    int64_t *bases;
    size_t n;
    int64_t rp;
    bool clean;
    bool save_epochs;
};

/* A checkpoint the listing did not show is missing: 0, as
 * log_read_offset_file() takes it, without a call to find out. */
static int64_t read_offset_if_found(struct log *l, const char *name,
                                    const char *if_bad)
{
    return log_found_at_open(l, name) ? log_read_offset_file(l, name, if_bad)
                                      : 0;
}

static int plan_open(struct log *l, struct open_plan *p)
{
    int rv = list_segments(l, &p->bases, &p->n);
    if (rv != RC_OK) {
        return rv;
    }
    p->rp = read_offset_if_found(l, LOG__RECOVERY_POINT_FILE,
                                 "every segment is recovered");
    p->clean = log_found_at_open(l, LOG__CLEAN_FILE);
    bool unchecked = false;
    rv = log_found_at_open(l, LOG_LAYOUT_EPOCH_FILE)
             ? log_epoch_load(&l->epochs, l->dir, &unchecked)
             : RC_NOT_FOUND;
    if (rv == RC_OK && unchecked) {
        TRACE_INFO(l->tracer, "dir=%s leader-epoch-checkpoint has no "
                   "checksum (older format), rewritten with one", l->dir);
        p->save_epochs = true;
    }
    if (rv == RC_NOT_FOUND || rv == RC_CORRUPT || rv == RC_IO) {
        if (p->n > 0) {
            TRACE_WARN(l->tracer, "dir=%s leader-epoch-checkpoint %s (%s), "
                       "rebuilding it from every batch's "
                       "partitionLeaderEpoch", l->dir,
                       rv == RC_NOT_FOUND ? "missing" : "not trusted",
                       rc_str(rv));
            p->clean = false;
            p->rp = 0;
        }
        p->save_epochs = true;
        rv = RC_OK;
    }
    return rv;
}

static int open_segments(struct log *l, struct open_plan *p)
{
    bool recovering = false;
    bool prev_recovered = false;
    for (size_t i = 0; i < p->n; i++) {
        bool last = i + 1 == p->n;
        bool trusted = p->clean || (!last && p->bases[i + 1] <= p->rp);
        if (!trusted && !recovering) {
            /* Epochs from here on are rebuilt from the batch headers. */
            recovering = true;
            p->save_epochs |= log_epoch_truncate_from_end(&l->epochs,
                                                          p->bases[i]);
        }
        bool cut = false;
        int rv = open_one(l, p->bases[i], trusted, &cut);
        if (rv != RC_OK) {
            return rv;
        }
        bool hole = prev_recovered && hole_before_last(l);
        prev_recovered = !trusted;
        if (overlaps_previous(l) || hole) {
            TRACE_WARN(l->tracer, "dir=%s segment=%020" PRId64 ".log %s, "
                       "dropped", l->dir, p->bases[i],
                       hole ? "starts after a hole (the previous segment "
                              "ends short of it)"
                            : "overlaps the previous one");
            struct log_segment *seg = l->segs[--l->n_segs];
            log_segment_delete(seg);
            log_segment_unref(seg);
            l->dir_dirty = true;
            cut = true;
        }
        for (size_t j = i + 1; cut && j < p->n; j++) {
            TRACE_WARN(l->tracer, "dir=%s segment=%020" PRId64 ".log lies "
                       "after a cut, deleted", l->dir, p->bases[j]);
            unlink_segment_files(l, p->bases[j]);
        }
        if (cut) {
            break;
        }
    }
    return l->failed;
}

static int finish_open(struct log *l, struct open_plan *p)
{
    int rv = RC_OK;
    if (l->n_segs == 0) {
        rv = log_new_segment(l, 0);
    }
    /* Epochs that start at the log end hold no record (a leader deposed
     * before it appended): they go, and the checkpoint follows before the
     * next batch (log_truncate_to() says why not now). */
    if (log_epoch_truncate_from_end(&l->epochs, log_end_offset(l))) {
        l->epochs_unsaved = true;
    }
    if (rv == RC_OK && p->save_epochs) {
        rv = log_save_epochs(l);
    }
    if (rv == RC_OK) {
        rv = log_sync_all_now(l); /* what recovery kept, made durable */
    }
    l->recovery_point = p->rp;
    /* Never past the end: a checkpoint newer than what recovery kept. */
    l->clean_checkpoint = read_offset_if_found(
        l, LOG_CLEANER_CHECKPOINT_FILE, "the cleaner starts from the first "
        "segment again");
    /* The start moves into a segment only by DeleteRecords or a leader's
     * start: lost, the log starts at its first segment, which still
     * holds every record above the true start (none is lost; a few
     * deleted ones may be served again until the start moves again). */
    int64_t start = read_offset_if_found(l, LOG__START_OFFSET_FILE,
                                         "the log starts at its first "
                                         "segment");
    l->start_offset = start < log_end_offset(l) ? start : log_end_offset(l);
    int64_t rp = l->segs[l->n_segs - 1]->base_offset;
    if (rv == RC_OK && rp != p->rp) {
        rv = log_write_recovery_point(l, rp);
    }
    if (rv == RC_OK && p->clean) {
        char path[LOG_PATH_BYTES_MAX];
        rv = file_path(path, l->dir, LOG__CLEAN_FILE);
        if (rv == RC_OK && io_unlink(path) != 0) {
            rv = RC_IO;
        }
        if (rv == RC_OK) {
            rv = file_sync_dir(l->dir);
        }
    }
    return rv;
}

/* The scan buffer of every log this thread works on. A log is used by
 * one thread (the loop) and never while another of its calls runs, so a
 * buffer each would reserve LOG_SCAN_BUFFER_BYTES per hosted partition:
 * 640 MB for 10,000. Allocated on first use, kept for the thread's life. */
static uint8_t *scan_buffer(void)
{
    static _Thread_local uint8_t *buf;
    if (buf == NULL) {
        buf = malloc(LOG_SCAN_BUFFER_BYTES);
    }
    return buf;
}

static void free_log(struct log *l)
{
    log_fds_forget(l); /* closed, abandoned, or failed to open */
    log_startup_release(l);
    for (size_t i = 0; i < l->n_segs; i++) {
        log_segment_unref(l->segs[i]);
    }
    free(l->segs);
    free(l->waiters);
    log_epoch_free(&l->epochs);
}

static void close_cb(uv_handle_t *handle)
{
    struct log *l = handle->data;
    void (*cb)(void *) = l->closed_cb;
    void *arg = l->closed_arg;
    free(l);
    if (cb != NULL) {
        cb(arg);
    }
}

int log_open_detached(struct log **out, const char *dir,
                      const struct log_config *cfg, struct tracer *tracer)
{
    ASSERT(cfg->segment_bytes >= (int64_t)LOG_SEGMENT_BYTES_MIN);
    ASSERT(cfg->segment_bytes <= (int64_t)LOG_SEGMENT_BYTES_MAX);
    size_t dir_len = strlen(dir);
    if (dir_len + LOG__SEGMENT_NAME_BYTES + 16 >= LOG_PATH_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    struct log *l = calloc(1, sizeof *l + dir_len + 1);
    if (l == NULL) {
        return RC_NOMEM;
    }
    memcpy(l->dir, dir, dir_len + 1);
    l->cfg = *cfg;
    l->tracer = tracer;
    l->corrupt_offset = -1;
    log_epoch_init(&l->epochs);
    l->scan_buf = scan_buffer();
    struct open_plan plan = {0};
    int rv = l->scan_buf == NULL ? RC_NOMEM : plan_open(l, &plan);
    if (rv == RC_OK) {
        rv = open_segments(l, &plan);
    }
    if (rv == RC_OK) {
        rv = finish_open(l, &plan);
    }
    free(plan.bases);
    if (rv != RC_OK) {
        TRACE_ERROR(tracer, "dir=%s open log: %s", dir, rc_str(rv));
        free_log(l);
        free(l);
        return rv;
    }
    TRACE_DEBUG(tracer, "dir=%s opened log start=%" PRId64 " end=%" PRId64
               " segments=%zu%s", dir, log_start_offset(l),
               log_end_offset(l), l->n_segs, plan.clean ? " (clean)" : "");
    *out = l;
    return RC_OK;
}

void log_attach(struct log *l, uv_loop_t *loop)
{
    l->loop = loop;
    log_sync_init(l);
    if (l->parked) { /* log_park_if_over_budget() */
        log_fds_attach_parked(l);
        return;
    }
    /* First among the open logs; past the budget, older idle ones
     * close their files (log_fds.c). Its own are open: nothing fails. */
    int rv = log_fds_use(l);
    ASSERT(rv == RC_OK);
}

int log_open(struct log **out, const char *dir, const struct log_config *cfg,
             uv_loop_t *loop, struct tracer *tracer)
{
    int rv = log_open_detached(out, dir, cfg, tracer);
    if (rv == RC_OK) {
        log_attach(*out, loop);
    }
    return rv;
}

void log_close_then(struct log *l, void (*cb)(void *arg), void *arg)
{
    l->closed_cb = cb;
    l->closed_arg = arg;
    log_close(l);
}

void log_close(struct log *l)
{
    ASSERT(!l->closing);
    l->closing = true;
    log_fds_forget(l);
    uv_prepare_stop(&l->prepare);
    log_startup_leave(l); /* a job in flight is waited for */
    if (!log_busy(l)) {
        log_close_finish(l);
    }
}

void log_abandon(struct log *l)
{
    ASSERT(!l->closing);
    ASSERT(l->cleaning == NULL && !log_startup_running(l));
    l->closing = true;
    uv_prepare_stop(&l->prepare);
    log_sync_drop_job(l);
    l->waiters_len = 0; /* the process died: nobody is told */
    l->closed_cb = NULL;
    free_log(l);
    uv_close((uv_handle_t *)&l->prepare, close_cb);
}

bool log_busy(const struct log *l)
{
    return l->job != NULL || l->cleaning != NULL || log_startup_running(l);
}

void log_close_finish(struct log *l)
{
    int rv = l->failed;
    /* A log that never held a record has only epochs that hold none
     * (taken as leader, not written in), which the next open drops. */
    if (rv == RC_OK && l->epochs_unsaved && log_end_offset(l) > 0) {
        rv = log_save_epochs(l);
    }
    if (rv == RC_OK) {
        rv = log_sync_all_now(l);
    }
    if (rv == RC_OK && !empty_index_kept(l, l->segs[l->n_segs - 1])) {
        rv = log_segment_save_index(l->segs[l->n_segs - 1]);
    }
    /* A log that never held a record (a broker with 100,000 idle
     * partitions has 100,000 of them) writes nothing more: its checkpoint
     * already says where the last segment starts, and an open after a
     * crash has nothing to check in it, nor an epoch to keep (one that
     * starts at offset 0 holds no record), so the clean-shutdown marker
     * would only cost two syncs here and an unlink and a sync at the next
     * open, a log at a time. */
    int64_t rp = l->segs[l->n_segs - 1]->base_offset;
    if (rv == RC_OK && rp != l->recovery_point) {
        rv = log_write_recovery_point(l, rp);
    }
    if (rv == RC_OK && log_end_offset(l) > 0) {
        rv = file_write_atomic(l->dir, LOG__CLEAN_FILE, "", 0);
    }
    if (rv != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s unclean close (%s): the next open "
                    "recovers", l->dir, rc_str(rv));
    }
    log_sync_drain_waiters(l, rv == RC_OK ? RC_CLOSED : rv);
    free_log(l);
    uv_close((uv_handle_t *)&l->prepare, close_cb);
}
