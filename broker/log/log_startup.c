/* The start-up check (broker/log/log_startup.h). Loop thread, except
 * work_cb, which runs on the threadpool and touches only the job, the
 * buffer and the segment's fd. */
#include "broker/log/log_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "common/limits.h"
#include "common/rc.h"

int log_startup_init(struct log_startup *s, uv_loop_t *loop,
                     int64_t chunk_bytes, struct tracer *tracer)
{
    ASSERT(chunk_bytes > 0);
    *s = (struct log_startup){.loop = loop, .tracer = tracer,
                              .chunk_bytes = chunk_bytes};
    s->req.data = s;
    s->buf = malloc(LOG_STARTUP_BUFFER_BYTES);
    return s->buf == NULL ? RC_NOMEM : RC_OK;
}

bool log_startup_busy(const struct log_startup *s)
{
    return s->running != NULL || s->head != NULL;
}

/* --- The log's list of segments to check -------------------------------- */

int log_startup_plan(struct log *l, struct log_segment *seg)
{
    ASSERT(l->startup == NULL);
    if (l->n_checks == l->cap_checks) {
        size_t cap = l->cap_checks == 0 ? 8 : l->cap_checks * 2;
        void *p = realloc(l->checks, cap * sizeof *l->checks);
        if (p == NULL) {
            return RC_NOMEM;
        }
        l->checks = p;
        l->cap_checks = cap;
    }
    log_segment_ref(seg);
    if (l->checks_done == l->n_checks) {
        l->check_pos = 0;
        l->check_offset = seg->base_offset;
    }
    l->checks[l->n_checks++] = seg;
    return RC_OK;
}

bool log_startup_verify_pending(const struct log *l)
{
    return l->checks_done < l->n_checks;
}

bool log_startup_running(const struct log *l)
{
    return l->startup != NULL && l->startup->running == l;
}

void log_startup_on_damage(struct log *l, log_damaged_cb cb, void *arg)
{
    l->damaged_cb = cb;
    l->damaged_arg = arg;
}

/* Done with checks[checks_done]: the next one, from its start. */
static void next_segment(struct log *l)
{
    log_segment_unref(l->checks[l->checks_done]);
    l->checks[l->checks_done++] = NULL;
    l->check_pos = 0;
    if (l->checks_done < l->n_checks) {
        l->check_offset = l->checks[l->checks_done]->base_offset;
    }
}

static void give_up(struct log *l)
{
    while (log_startup_verify_pending(l)) {
        next_segment(l);
    }
}

void log_startup_release(struct log *l)
{
    ASSERT(l->startup == NULL);
    give_up(l);
    free(l->checks);
    l->checks = NULL;
    l->n_checks = l->cap_checks = l->checks_done = 0;
}

/* seg is still one of l's (not deleted by retention or a truncation, nor
 * replaced by the cleaner's rewrite). Segments are ordered by base. */
static bool in_log(const struct log *l, const struct log_segment *seg)
{
    size_t lo = 0;
    size_t hi = l->n_segs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->segs[mid]->base_offset < seg->base_offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < l->n_segs && l->segs[lo] == seg;
}

/* --- The queue ------------------------------------------------------------ */

static void enqueue(struct log_startup *s, struct log *l)
{
    l->startup = s;
    l->startup_next = NULL;
    if (s->tail == NULL) {
        s->head = l;
    } else {
        s->tail->startup_next = l;
    }
    s->tail = l;
}

static void unqueue(struct log *l)
{
    struct log_startup *s = l->startup;
    struct log *prev = NULL;
    struct log **at = &s->head;
    while (*at != l) {
        ASSERT(*at != NULL);
        prev = *at;
        at = &prev->startup_next;
    }
    *at = l->startup_next;
    if (s->tail == l) {
        s->tail = prev;
    }
    l->startup = NULL;
    l->startup_next = NULL;
}

void log_startup_leave(struct log *l)
{
    if (l->startup != NULL && !log_startup_running(l)) {
        unqueue(l);
    }
}

/* --- Jobs --------------------------------------------------------------- */

static void work_cb(uv_work_t *req)
{
    struct log_startup *s = req->data;
    struct log_startup_job *job = &s->job;
    job->rc = log_segment_verify(job->seg, s->buf, LOG_STARTUP_BUFFER_BYTES,
                                 job->from_pos, job->limit, s->chunk_bytes,
                                 &job->stop_pos, &job->next_offset);
}

static void summarize(struct log_startup *s)
{
    if (s->held || s->closed || s->pass_logs == 0 || log_startup_busy(s)) {
        return;
    }
    uint64_t ms = (uv_hrtime() - s->pass_start_ns) / 1000000u;
    TRACE_INFO(s->tracer, "start-up CRC pass: %zu logs, %.1f MB checked in "
               "%" PRIu64 " ms, %zu corrupt, %zu unreadable", s->pass_logs,
               (double)s->pass_bytes / 1e6, ms, s->pass_corrupt,
               s->pass_unreadable);
    s->passes_done++;
    s->pass_logs = 0;
    s->pass_bytes = 0;
    s->pass_corrupt = 0;
    s->pass_unreadable = 0;
}

/* Sets up the job for l's next chunk, skipping the segments no longer in
 * the log and those checked up to their size_low; false when none is
 * left. */
static bool next_job(struct log_startup *s, struct log *l)
{
    while (log_startup_verify_pending(l)) {
        struct log_segment *seg = l->checks[l->checks_done];
        if (in_log(l, seg) && l->check_pos < seg->size_low) {
            s->job = (struct log_startup_job){
                .seg = seg, .from_pos = l->check_pos,
                .limit = seg->size_low, .next_offset = l->check_offset,
                .stop_pos = l->check_pos, .rc = RC_OK};
            return true;
        }
        next_segment(l);
    }
    return false;
}

static void after_work_cb(uv_work_t *req, int status);
static void found_unreadable(struct log_startup *s, struct log *l,
                             const struct log_segment *seg);

static void start_next(struct log_startup *s)
{
    ASSERT(s->running == NULL);
    while (s->head != NULL) {
        struct log *l = s->head;
        if (!l->closing && next_job(s, l)) {
            /* Its files, closed if the log was parked meanwhile. */
            int opened = log_fds_use(l);
            if (opened != RC_OK) {
                s->job.rc = opened == RC_NOT_FOUND ? RC_IO : opened;
                found_unreadable(s, l, s->job.seg);
                continue; /* given up: no longer queued */
            }
            s->running = l;
            int rv = uv_queue_work(s->loop, &s->req, work_cb, after_work_cb);
            ASSERT(rv == 0);
            return;
        }
        unqueue(l);
    }
    if (s->closed) {
        free(s->buf);
        s->buf = NULL;
        return;
    }
    summarize(s);
}

static void found_corrupt(struct log_startup *s, struct log *l,
                          const struct log_segment *seg)
{
    const struct log_startup_job *job = &s->job;
    int64_t offset = job->next_offset;
    if (l->corrupt_offset < 0 || offset < l->corrupt_offset) {
        l->corrupt_offset = offset;
    }
    TRACE_ERROR(l->tracer, "partition=%s segment=%s/%020" PRId64 ".log "
                "corrupt batch below the recovery point at offset=%" PRId64
                " position=%" PRId64 ": kept, never served, to be repaired "
                "from an in-sync replica", log_partition_name(l), l->dir,
                seg->base_offset, offset, job->stop_pos);
    s->pass_corrupt++;
    next_segment(l); /* the later ones are checked all the same */
    if (l->damaged_cb != NULL) {
        l->damaged_cb(l->damaged_arg, RC_CORRUPT, offset);
    }
}

static void found_unreadable(struct log_startup *s, struct log *l,
                             const struct log_segment *seg)
{
    const struct log_startup_job *job = &s->job;
    int64_t offset = job->next_offset;
    TRACE_ERROR(l->tracer, "partition=%s segment=%s/%020" PRId64 ".log "
                "start-up check: a read failed at position=%" PRId64
                " (offset=%" PRId64 "): %s; the rest of the log is not "
                "checked", log_partition_name(l), l->dir, seg->base_offset,
                job->stop_pos, offset, rc_str(job->rc));
    s->pass_unreadable++;
    give_up(l);
    if (l->damaged_cb != NULL) {
        l->damaged_cb(l->damaged_arg, job->rc, offset);
    }
}

/* The job of l, which is not closing, is back. What it found past the
 * segment's size_low lies after a cut made meanwhile: not damage. */
static void job_done(struct log_startup *s, struct log *l)
{
    const struct log_startup_job *job = &s->job;
    struct log_segment *seg = l->checks[l->checks_done];
    ASSERT(seg == job->seg);
    if (!in_log(l, seg)) {
        next_segment(l); /* taken out of the log meanwhile */
    } else if (job->rc == RC_IO) {
        found_unreadable(s, l, seg);
    } else if (job->stop_pos >= seg->size_low) {
        next_segment(l); /* all that is left of it is checked */
    } else if (job->rc == RC_OK) {
        l->check_pos = job->stop_pos;
        l->check_offset = job->next_offset;
    } else {
        found_corrupt(s, l, seg);
    }
}

static void after_work_cb(uv_work_t *req, int status)
{
    struct log_startup *s = req->data;
    struct log *l = s->running;
    ASSERT(status == 0);
    s->running = NULL;
    s->jobs_done++;
    s->bytes_checked += s->job.stop_pos - s->job.from_pos;
    s->pass_bytes += s->job.stop_pos - s->job.from_pos;
    if (l->closing) {
        unqueue(l);
        if (!log_busy(l)) {
            log_close_finish(l);
        }
    } else {
        job_done(s, l); /* may call the owner, who may close l */
    }
    start_next(s);
}

void log_startup_add(struct log_startup *s, struct log *l)
{
    ASSERT(!s->closed);
    ASSERT(l->startup == NULL);
    ASSERT(!l->closing);
    if (!log_startup_verify_pending(l)) {
        return;
    }
    if (s->pass_logs == 0) {
        s->pass_start_ns = uv_hrtime();
    }
    s->pass_logs++;
    enqueue(s, l);
    if (s->running == NULL) {
        start_next(s);
    }
}

void log_startup_hold(struct log_startup *s, bool held)
{
    s->held = held;
    summarize(s);
}

void log_startup_close(struct log_startup *s)
{
    ASSERT(s->head == NULL || (s->head == s->running && s->head->closing &&
                               s->head->startup_next == NULL));
    s->closed = true;
    if (s->running == NULL) {
        free(s->buf);
        s->buf = NULL;
    }
}
