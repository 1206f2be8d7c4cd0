/* Group commit for the partition log (broker/log/log.h, log_internal.h).
 *
 * At most one sync job per log is in flight. A job captures the dirty
 * suffix of segments (pinning them), the directory if files came or went,
 * and the log end offset at that moment; the threadpool fdatasyncs them;
 * back on the loop the durable end advances to the captured end and
 * waiters at or below it are called. Whatever was appended while the job
 * ran is covered by the next job, started right away if anyone waits: one
 * fdatasync for everything appended since the previous one.
 *
 * A job is started from a prepare handle, i.e. after every callback of the
 * current loop iteration has appended what it had. */
#include "broker/log/log_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "common/file.h"
#include "common/rc.h"

struct log_sync_job {
    uv_work_t req;
    struct log *log;
    bool sync_dir;
    int64_t target_end;
    int64_t rp_candidate;
    uint64_t truncations;
    int rc;
    uint64_t took_ns;           /* the fdatasyncs and the directory's */
    size_t n_segs;
    struct log_segment *segs[]; /* pinned */
};

static void prepare_cb(uv_prepare_t *handle);

void log_sync_init(struct log *l)
{
    int rv = uv_prepare_init(l->loop, &l->prepare);
    ASSERT(rv == 0);
    l->prepare.data = l;
}

static void arm(struct log *l)
{
    if (!l->closing && !uv_is_active((uv_handle_t *)&l->prepare)) {
        int rv = uv_prepare_start(&l->prepare, prepare_cb);
        ASSERT(rv == 0);
    }
}

static bool has_dirty(const struct log *l)
{
    return l->segs[l->n_segs - 1]->dirty || l->dir_dirty;
}

void log_request_sync(struct log *l)
{
    l->sync_requested = true;
    arm(l);
}

bool log_sync_idle(const struct log *l)
{
    return l->job == NULL && !l->sync_requested && !has_dirty(l) &&
           l->waiters_len == 0;
}

uint64_t log_sync_count(const struct log *l)
{
    return l->syncs_done;
}

static struct log_waiter *waiter_at(struct log *l, size_t i)
{
    return &l->waiters[(l->waiters_head + i) % l->waiters_cap];
}

static int waiters_grow(struct log *l)
{
    if (l->waiters_cap >= LOG_SYNC_WAITERS_MAX) {
        return RC_FULL;
    }
    size_t cap = l->waiters_cap == 0 ? 64 : l->waiters_cap * 2;
    struct log_waiter *w = malloc(cap * sizeof *w);
    if (w == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < l->waiters_len; i++) {
        w[i] = *waiter_at(l, i);
    }
    free(l->waiters);
    l->waiters = w;
    l->waiters_cap = cap;
    l->waiters_head = 0;
    return RC_OK;
}

int log_wait_durable(struct log *l, int64_t offset, log_durable_cb cb,
                     void *arg)
{
    ASSERT(offset <= log_end_offset(l));
    if (l->closing) {
        return RC_CLOSED;
    }
    if (l->failed != RC_OK) {
        return l->failed;
    }
    if (l->waiters_len == l->waiters_cap) {
        int rv = waiters_grow(l);
        if (rv != RC_OK) {
            return rv;
        }
    }
    *waiter_at(l, l->waiters_len++) =
        (struct log_waiter){.offset = offset, .cb = cb, .arg = arg};
    arm(l);
    return RC_OK;
}

/* Calls every waiter that is satisfied or failed; keeps the rest in
 * order. Callbacks may append or wait again: each is removed first. */
static void fire_waiters(struct log *l)
{
    if (l->waiters_failed == 0) {
        while (l->waiters_len > 0 &&
               waiter_at(l, 0)->offset <= l->durable_end) {
            struct log_waiter w = *waiter_at(l, 0);
            l->waiters_head = (l->waiters_head + 1) % l->waiters_cap;
            l->waiters_len--;
            w.cb(w.arg, RC_OK);
        }
        return;
    }
    /* Rare (after truncation or an I/O error): take the whole queue. */
    size_t n = l->waiters_len;
    struct log_waiter *all = malloc((n == 0 ? 1 : n) * sizeof *all);
    ASSERT(all != NULL);
    for (size_t i = 0; i < n; i++) {
        all[i] = *waiter_at(l, i);
    }
    l->waiters_len = 0;
    l->waiters_head = 0;
    l->waiters_failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].rc != RC_OK) {
            all[i].cb(all[i].arg, all[i].rc);
        } else if (all[i].offset <= l->durable_end) {
            all[i].cb(all[i].arg, RC_OK);
        } else {
            int rv = log_wait_durable(l, all[i].offset, all[i].cb,
                                      all[i].arg);
            ASSERT(rv == RC_OK); /* the queue had room for it before */
        }
    }
    free(all);
}

void log_sync_fail_waiters_above(struct log *l, int64_t offset, int rc)
{
    for (size_t i = 0; i < l->waiters_len; i++) {
        struct log_waiter *w = waiter_at(l, i);
        if (w->rc == RC_OK && w->offset > offset) {
            w->rc = rc;
            l->waiters_failed++;
        }
    }
    if (l->waiters_failed > 0) {
        arm(l);
    }
}

void log_on_failure(struct log *l, log_failed_cb cb, void *arg)
{
    l->failed_cb = cb;
    l->failed_arg = arg;
}

int log_failure(const struct log *l)
{
    return l->failed;
}

void log_fail(struct log *l, int rc, const char *what)
{
    ASSERT(rc != RC_OK);
    if (l->failed != RC_OK) {
        return;
    }
    TRACE_ERROR(l->tracer, "dir=%s %s failed: %s; the log takes no more "
                "writes and nothing past offset %" PRId64 " counts as "
                "durable", l->dir, what, rc_str(rc), l->durable_end);
    l->failed = rc;
    if (l->failed_cb != NULL) {
        l->failed_cb(l->failed_arg, rc);
    }
    log_sync_fail_waiters_above(l, l->durable_end, rc);
}

static void work_cb(uv_work_t *req)
{
    struct log_sync_job *job = req->data;
    uint64_t start = uv_hrtime();
    job->rc = RC_OK;
    for (size_t i = 0; i < job->n_segs && job->rc == RC_OK; i++) {
        job->rc = log_segment_sync(job->segs[i]->fd);
    }
    if (job->rc == RC_OK && job->sync_dir) {
        job->rc = file_sync_dir(job->log->dir);
    }
    job->took_ns = uv_hrtime() - start;
}

static void start_job(struct log *l);

/* Every log's sync jobs, one histogram for the process (loop thread):
 * one per log cost 136 bytes a replica, and a walk of every partition
 * at each read of the metrics. */
static struct http_metrics_hist sync_ms;

static void after_work_cb(uv_work_t *req, int status)
{
    struct log_sync_job *job = req->data;
    struct log *l = job->log;
    ASSERT(status == 0);
    l->job = NULL;
    l->syncs_done++;
    http_metrics_observe(&sync_ms, (double)job->took_ns / 1e6);
    for (size_t i = 0; i < job->n_segs; i++) {
        if (job->rc != RC_OK && !job->segs[i]->deleted) {
            job->segs[i]->dirty = true;
        }
        log_segment_unref(job->segs[i]);
    }
    if (job->rc != RC_OK) {
        log_fail(l, job->rc, "fdatasync");
    } else if (job->truncations != l->truncations) {
        l->sync_requested = true; /* cut meanwhile: resync what is there */
    } else {
        if (job->target_end > l->durable_end) {
            l->durable_end = job->target_end;
        }
        if (job->rp_candidate > l->recovery_point) {
            int rv = log_write_recovery_point(l, job->rp_candidate);
            (void)rv; /* logged; an older recovery point only rescans */
        }
    }
    free(job);
    if (l->closing) {
        if (!log_busy(l)) { /* else the last job's end finishes it */
            log_close_finish(l);
        }
        return;
    }
    fire_waiters(l);
    if (l->failed == RC_OK && has_dirty(l) &&
        (l->sync_requested || l->waiters_len > 0)) {
        start_job(l);
    }
}

static void start_job(struct log *l)
{
    ASSERT(l->job == NULL);
    size_t k = l->n_segs;
    while (k > 0 && l->segs[k - 1]->dirty) {
        k--;
    }
    size_t n = l->n_segs - k;
    struct log_sync_job *job = malloc(sizeof *job + n * sizeof job->segs[0]);
    ASSERT(job != NULL);
    *job = (struct log_sync_job){
        .log = l,
        .sync_dir = l->dir_dirty,
        .target_end = log_end_offset(l),
        .rp_candidate = l->segs[l->n_segs - 1]->base_offset,
        .truncations = l->truncations,
        .n_segs = n,
    };
    for (size_t i = 0; i < n; i++) {
        job->segs[i] = l->segs[k + i];
        job->segs[i]->dirty = false;
        log_segment_ref(job->segs[i]);
    }
    job->req.data = job;
    l->dir_dirty = false;
    l->sync_requested = false;
    l->job = job;
    if (l->runner != NULL) {
        l->runner->submit(l->runner->ctx, l);
        return;
    }
    int rv = uv_queue_work(l->loop, &job->req, work_cb, after_work_cb);
    ASSERT(rv == 0);
}

void log_set_sync_runner(struct log *l, const struct log_sync_runner *r)
{
    ASSERT(l->job == NULL);
    l->runner = r;
}

void log_sync_run(struct log *l)
{
    ASSERT(l->runner != NULL && l->job != NULL);
    work_cb(&l->job->req);
    after_work_cb(&l->job->req, 0);
}

void log_sync_drop_job(struct log *l)
{
    struct log_sync_job *job = l->job;
    if (job == NULL) {
        return;
    }
    ASSERT(l->runner != NULL); /* a pool's job cannot be called back */
    for (size_t i = 0; i < job->n_segs; i++) {
        log_segment_unref(job->segs[i]);
    }
    free(job);
    l->job = NULL;
}

static void prepare_cb(uv_prepare_t *handle)
{
    struct log *l = handle->data;
    uv_prepare_stop(handle);
    fire_waiters(l);
    if (l->job != NULL || l->failed != RC_OK) {
        return; /* the job's completion looks again */
    }
    if (has_dirty(l) && (l->sync_requested || l->waiters_len > 0)) {
        start_job(l);
    } else {
        l->sync_requested = false;
    }
}

int log_sync_all_now(struct log *l)
{
    for (size_t i = 0; i < l->n_segs; i++) {
        struct log_segment *seg = l->segs[i];
        if (!seg->dirty) {
            continue;
        }
        int rv = log_segment_sync(seg->fd);
        if (rv != RC_OK) {
            return rv;
        }
        seg->dirty = false;
    }
    if (l->dir_dirty) {
        int rv = file_sync_dir(l->dir);
        if (rv != RC_OK) {
            return rv;
        }
        l->dir_dirty = false;
    }
    l->durable_end = log_end_offset(l);
    return RC_OK;
}

void log_sync_drain_waiters(struct log *l, int rc)
{
    for (size_t i = 0; i < l->waiters_len; i++) {
        struct log_waiter *w = waiter_at(l, i);
        if (w->rc == RC_OK && w->offset > l->durable_end) {
            w->rc = rc;
            l->waiters_failed++;
        }
    }
    l->waiters_failed++; /* force the full pass */
    fire_waiters(l);
    free(l->waiters);
    l->waiters = NULL;
    l->waiters_cap = 0;
}

const struct http_metrics_hist *log_sync_times(void)
{
    return &sync_ms;
}
