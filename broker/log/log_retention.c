/* Retention: which old segments go, and their deletion (broker/log/log.h).
 *
 * Deleting a segment: its files are renamed to "<name>.deleted" on the
 * loop thread (a rename is one metadata operation, and it frees the name
 * at once, so a segment created at the same base offset later, after a
 * full truncation, cannot be hit), the log start offset moves past it, and
 * a threadpool job unlinks the renamed files and then drops the segment's
 * memory on the loop thread. The job holds only the paths and the pinned
 * segments, never the log, so a log may close with jobs in flight.
 *
 * Renames go oldest segment first, and within a segment the .log file
 * first: a crash at any point leaves the log contiguous (the first
 * remaining segment is where the log starts; a segment that kept its
 * .log but lost an index rebuilds it), and the next open removes every
 * "*.deleted" left behind. Deleting whole segments needs no checkpoint:
 * the log then starts at its first segment. A start inside a segment
 * (log_advance_start) is checkpointed before anything goes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log_internal.h"
#include "common/file.h"
#include "common/io.h"
#include "common/rc.h"
#include "common/trace.h"

/* "<dir>/<20-digit base>.<ext>" and the same with LOG_DELETED_SUFFIX. */
#define RETENTION__EXTS 3
static const char *const retention_exts[RETENTION__EXTS] = {
    "log", "index", "timeindex"};

struct delete_job {
    uv_work_t req;
    size_t n;
    char (*paths)[LOG_PATH_BYTES_MAX]; /* n * RETENTION__EXTS, "" unused */
    struct log_segment **segs;         /* pinned until the job is done */
};

size_t log_retention_count(const struct log *l, const struct log_retention *r,
                           int64_t now_ms, int64_t hw, unsigned *why)
{
    size_t n = 0;
    unsigned reasons = 0;
    if (why != NULL) {
        *why = 0;
    }
    /* A segment may go only if every record of it is below hw: the next
     * segment starts at or below hw. The last (active) one never goes,
     * so a log of one (every idle partition's) has nothing to look at. */
    size_t limit = log_segments_below(l, hw);
    if (limit == 0) {
        return 0;
    }
    /* Segments wholly below the log start offset (DeleteRecords, the
     * leader's start) go first, whatever the limits. */
    size_t below_start = log_segments_below(l, l->start_offset);
    n = below_start < limit ? below_start : limit;
    if (n > 0) {
        reasons |= LOG_RETENTION_BY_START;
    }
    if (r->retention_ms >= 0) {
        while (n < limit && l->segs[n]->max_timestamp >= 0 &&
               now_ms - l->segs[n]->max_timestamp > r->retention_ms) {
            n++;
            reasons |= LOG_RETENTION_BY_TIME;
        }
    }
    if (r->retention_bytes >= 0) {
        int64_t over = log_size_bytes(l) - r->retention_bytes;
        for (size_t i = 0; i < n; i++) {
            over -= l->segs[i]->size;
        }
        while (n < limit && over - l->segs[n]->size >= 0) {
            over -= l->segs[n]->size;
            n++;
            reasons |= LOG_RETENTION_BY_SIZE;
        }
    }
    if (why != NULL) {
        *why = reasons;
    }
    return n;
}

size_t log_segments_below(const struct log *l, int64_t offset)
{
    size_t n = 0;
    while (n + 1 < l->n_segs && l->segs[n + 1]->base_offset <= offset) {
        n++;
    }
    return n;
}

int64_t log_size_bytes(const struct log *l)
{
    int64_t size = 0;
    for (size_t i = 0; i < l->n_segs; i++) {
        size += l->segs[i]->size;
    }
    return size;
}

static void delete_work_cb(uv_work_t *req)
{
    struct delete_job *job = req->data;
    for (size_t i = 0; i < job->n * RETENTION__EXTS; i++) {
        if (job->paths[i][0] != '\0') {
            io_unlink(job->paths[i]); /* a leftover is removed at next open */
        }
    }
}

static void delete_after_cb(uv_work_t *req, int status)
{
    struct delete_job *job = req->data;
    (void)status;
    for (size_t i = 0; i < job->n; i++) {
        job->segs[i]->deleted = true;
        log_segment_unref(job->segs[i]);
    }
    free(job->paths);
    free(job->segs);
    free(job);
}

/* Renames seg's files to their .deleted names, .log first; false when the
 * .log could not be (the segment stays). */
static bool set_aside(struct log *l, const struct log_segment *seg,
                      char (*paths)[LOG_PATH_BYTES_MAX])
{
    for (size_t e = 0; e < RETENTION__EXTS; e++) {
        char from[LOG_PATH_BYTES_MAX];
        int n = snprintf(from, sizeof from, "%s/%020" PRId64 ".%s", l->dir,
                         seg->base_offset, retention_exts[e]);
        int m = snprintf(paths[e], LOG_PATH_BYTES_MAX, "%s%s", from,
                         LOG_DELETED_SUFFIX);
        if (n < 0 || (size_t)n >= sizeof from || m < 0 ||
            (size_t)m >= LOG_PATH_BYTES_MAX) {
            paths[e][0] = '\0';
            if (e == 0) {
                return false;
            }
            continue;
        }
        if (io_rename(from, paths[e]) != 0) {
            if (e == 0) {
                TRACE_ERROR(l->tracer, "dir=%s segment=%020" PRId64 ".log "
                            "not deleted: rename: %s", l->dir,
                            seg->base_offset, strerror(errno));
                paths[e][0] = '\0';
                return false;
            }
            paths[e][0] = '\0'; /* an index that was never written */
        }
    }
    return true;
}

int log_delete_oldest(struct log *l, size_t n)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    ASSERT(n < l->n_segs);
    if (n == 0) {
        return RC_OK;
    }
    struct delete_job *job = calloc(1, sizeof *job);
    char (*paths)[LOG_PATH_BYTES_MAX] =
        calloc(n * RETENTION__EXTS, sizeof *paths);
    struct log_segment **segs = calloc(n, sizeof *segs);
    if (job == NULL || paths == NULL || segs == NULL) {
        free(job);
        free(paths);
        free(segs);
        return RC_NOMEM;
    }
    size_t done = 0;
    while (done < n &&
           set_aside(l, l->segs[done], &paths[done * RETENTION__EXTS])) {
        segs[done] = l->segs[done]; /* the log's reference moves here */
        done++;
    }
    int rv = done == n ? RC_OK : RC_IO;
    if (done == 0) {
        free(job);
        free(paths);
        free(segs);
        return rv;
    }
    int64_t from = l->segs[0]->base_offset;
    memmove(l->segs, l->segs + done, (l->n_segs - done) * sizeof *l->segs);
    l->n_segs -= done;
    l->dir_dirty = true;
    /* Epochs wholly below the new start go; the checkpoint catches up at
     * its next write (an older one only names offsets that are gone). */
    if (log_epoch_truncate_from_start(&l->epochs, l->segs[0]->base_offset)) {
        l->epochs_unsaved = true;
    }
    TRACE_INFO(l->tracer, "dir=%s deleted %zu segment%s, log start offset %"
               PRId64 " -> %" PRId64, l->dir, done, done == 1 ? "" : "s",
               from, l->segs[0]->base_offset);
    *job = (struct delete_job){.n = done, .paths = paths, .segs = segs};
    job->req.data = job;
    if (uv_queue_work(l->loop, &job->req, delete_work_cb, delete_after_cb) !=
        0) {
        delete_work_cb(&job->req); /* no threadpool: unlink here */
        delete_after_cb(&job->req, 0);
    }
    return rv;
}

int log_advance_start(struct log *l, int64_t offset)
{
    int fds_rv = log_fds_use(l);
    if (fds_rv != RC_OK) {
        return fds_rv;
    }
    if (offset <= log_start_offset(l)) {
        return RC_OK;
    }
    if (offset > log_end_offset(l)) {
        return RC_OUT_OF_RANGE;
    }
    int rv = log_write_start_offset(l, offset);
    if (rv != RC_OK) {
        return rv;
    }
    if (log_epoch_truncate_from_start(&l->epochs, offset)) {
        l->epochs_unsaved = true;
    }
    return log_delete_oldest(l, log_segments_below(l, offset));
}
