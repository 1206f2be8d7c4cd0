/* Opening the logs of the partitions a replica manager hosts
 * (broker/replication/replica_manager.h has the whole picture): the queue
 * of logs to open, a budget of them per loop turn, or jobs of them on the
 * threadpool when there are many; their directories claimed by topic id;
 * the logs that fail waiting out a back-off. Loop thread, but for the
 * jobs' file work (open_job_work_cb()), which reads only what the manager
 * never changes after init. */
#include "broker/replication/replica_open.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log/log_open.h"
#include "broker/replication/replica_manager_internal.h"
#include "common/backoff.h"
#include "common/file.h"
#include "common/io.h"
#include "common/rc.h"

#define REPLICA_OPEN__METADATA_FILE "partition.metadata"

/* A directory left by another topic of the same name is removed. */
static int claim_dir(struct replica_manager *ps, const char *dir,
                     const struct meta_uuid *topic_id)
{
    char want[64];
    char id[23];
    meta_uuid_format(topic_id, id);
    int n = snprintf(want, sizeof want, "version: 0\ntopic_id: %s\n", id);
    char have[128];
    size_t len = 0;
    bool unchecked = false;
    int rv = file_read_checked(dir, REPLICA_OPEN__METADATA_FILE, have,
                               sizeof have, &len, &unchecked);
    if (rv == RC_OK && strcmp(have, want) == 0 && !unchecked) {
        return RC_OK;
    }
    if (rv == RC_CORRUPT || rv == RC_IO) {
        /* A damaged file says nothing about the topic: the directory's
         * name does. Its records stay; the file is written anew. */
        TRACE_WARN(ps->tracer, "dir=%s %s is damaged (%s): rewritten for "
                   "topic id %s, the records kept", dir,
                   REPLICA_OPEN__METADATA_FILE, rc_str(rv), id);
    } else if ((rv == RC_OK && strcmp(have, want) != 0) ||
               rv == RC_TOO_LARGE) {
        TRACE_WARN(ps->tracer, "dir=%s belongs to an older topic of the "
                   "same name; removing it", dir);
        replica_manager_remove_dir(dir);
    }
    rv = file_mkdirs(dir);
    if (rv == RC_OK) {
        rv = file_write_checked(dir, REPLICA_OPEN__METADATA_FILE, want,
                                (size_t)n);
    }
    return rv;
}

/* The file work of opening topic-id's log with cfg: its directory
 * claimed, the log opened but not attached to the loop. Any thread (a
 * worker's, for a batch of an open job); reads only what the manager
 * never changes after init. NULL when it failed, logged. */
static struct log *open_files(struct replica_manager *ps, const char *topic,
                              const struct meta_uuid *topic_id, int32_t id,
                              const struct log_config *cfg)
{
    char dir[LOG_PATH_BYTES_MAX];
    replica_manager_part_dir(ps, topic, id, dir, sizeof dir);
    struct log *l = NULL;
    int rv = claim_dir(ps, dir, topic_id);
    if (rv == RC_OK) {
        rv = log_open_detached(&l, dir, cfg, ps->tracer);
    }
    if (rv != RC_OK) {
        TRACE_ERROR(ps->tracer, "partition=%s-%d cannot open its log in %s: "
                    "%s", topic, id, dir, rc_str(rv));
        return NULL;
    }
    return l;
}

static void open_config(struct replica_manager *ps, const struct meta_topic *t,
                        struct log_config *cfg)
{
    struct topic_config_values v;
    replica_manager_topic_settings(ps, t, &v);
    replica_manager_topic_log_config(ps, &v, cfg);
}

/* Opens and hosts partition id of t, on the loop thread. */
static struct partition *add(struct replica_manager *ps,
                             const struct meta_topic *t, int32_t id)
{
    struct log_config cfg;
    open_config(ps, t, &cfg);
    struct log *l = open_files(ps, t->name, &t->id, id, &cfg);
    if (l == NULL) {
        return NULL;
    }
    log_attach(l, ps->loop);
    return replica_manager_adopt(ps, t, id, l);
}

static void retry_cb(uv_timer_t *handle)
{
    struct replica_manager *ps = handle->data;
    if (ps->img != NULL) {
        ps->full_pass = true;
        replica_manager_apply(ps, ps->img);
    }
}

/* A log did not open: it waits its back-off, and the log directory is
 * probed once per pass. A directory that no longer takes writes is
 * reported once (the broker stops); running out of file descriptors is
 * not the directory's fault and only waits. */
static void open_failed(struct replica_manager *ps,
                        const struct meta_topic *t, int32_t id,
                        uint64_t now, bool *probed)
{
    unsigned failures = open_retry_failed(&ps->retry, &t->id, id, now,
                                          backoff_random(&ps->jitter));
    if (*probed || ps->dir_failed) {
        return;
    }
    *probed = true;
    int rv = file_probe_dir(ps->log_dir);
    if (rv == RC_IO) {
        replica_manager_dir_failed(ps, "a probe file cannot be written and "
                                   "synced");
        return;
    }
    TRACE_WARN(ps->tracer, "partition=%s-%d failed to open %u time%s in a "
               "row%s; trying again later", t->name, id, failures,
               failures == 1 ? "" : "s",
               rv == RC_FULL ? " (out of file descriptors or memory)" : "");
}

void replica_open_retry_arm(struct replica_manager *ps, uint64_t now)
{
    uint64_t next = open_retry_next_ms(&ps->retry);
    if (next == OPEN_RETRY_NONE) {
        uv_timer_stop(&ps->retry_timer);
        return;
    }
    uv_timer_start(&ps->retry_timer, retry_cb, next > now ? next - now : 0,
                   0);
}

/* Logs still to open belong to the same start-up pass. */
static void hold_startup(struct replica_manager *ps)
{
    log_startup_hold(&ps->startup, ps->pending_next < ps->n_pending ||
                                       ps->open_jobs > 0);
}

/* n more logs opened in this run (since the queue was last empty,
 * begun at ps->opened_run_ns). The queue is let go once every entry was
 * taken, and the run ends, in one line, once no job is left. */
static void opened_run_add(struct replica_manager *ps, size_t n)
{
    ps->opened_run += n;
    if (ps->pending_next < ps->n_pending) {
        return;
    }
    free(ps->pending);
    ps->pending = NULL;
    ps->n_pending = ps->cap_pending = ps->pending_next = 0;
    if (ps->open_jobs > 0) {
        return;
    }
    /* One line for the run, not one per log (each is at debug). */
    if (ps->opened_run > 0) {
        TRACE_INFO(ps->tracer, "opened %zu partition logs in %.2f s",
                   ps->opened_run,
                   (double)(uv_hrtime() - ps->opened_run_ns) / 1e9);
    }
    ps->opened_run = 0;
    ps->opened_run_ns = 0;
}

/* One batch of logs opened on the threadpool (PARTITIONS_OPEN_JOBS). */
struct open_item {
    struct meta_uuid topic_id;
    int32_t id;
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    struct log_config cfg;
    struct log *log; /* opened, not attached; NULL if it failed */
};

struct open_job {
    uv_work_t req;
    struct replica_manager *ps;
    int sync_rc; /* of the job's deferred syncs */
    uint64_t sync_ms;
    size_t n;
    struct open_item items[PARTITIONS_OPEN_JOB_MAX];
};

static void open_job_work_cb(uv_work_t *req)
{
    struct open_job *j = req->data;
    bool deferred = replica_manager_defer_syncs(j->n);
    for (size_t i = 0; i < j->n; i++) {
        struct open_item *it = &j->items[i];
        it->log = open_files(j->ps, it->topic, &it->topic_id, it->id,
                             &it->cfg);
        if (it->log != NULL) {
            (void)log_park_if_over_budget(it->log);
        }
    }
    j->sync_rc = RC_OK;
    if (deferred && io_sync_defer_end()) {
        uint64_t t0 = uv_hrtime();
        j->sync_rc = file_sync_fs(j->ps->log_dir);
        j->sync_ms = (uv_hrtime() - t0) / 1000000u;
    }
}

/* The n logs just opened take the roles the image gives them, their
 * leader epochs' syncs deferred to one syncfs when they are many. */
static void take_roles(struct replica_manager *ps, struct partition **opened,
                       size_t n)
{
    bool changed = false;
    bool deferred = replica_manager_defer_syncs(n);
    for (size_t k = 0; k < n; k++) {
        const struct meta_topic *t =
            meta_image_topic_by_id(ps->img, &opened[k]->topic_id);
        changed |= replica_manager_follow_leadership(ps, opened[k], t,
                                     &t->partitions[opened[k]->id]);
    }
    replica_manager_sync_deferred(ps, deferred,
                                  "the leader epochs of new roles");
    replica_manager_followers_changed(ps, changed);
}

/* Whether partition id of topic_id is still to be hosted here and is not
 * yet; t its topic (NULL if gone). */
static bool still_wanted(struct replica_manager *ps,
                         const struct meta_uuid *topic_id, int32_t id,
                         const struct meta_topic **t)
{
    *t = ps->img == NULL ? NULL : meta_image_topic_by_id(ps->img, topic_id);
    return *t != NULL && id < (*t)->n_partitions &&
           replica_manager_hosts(ps, &(*t)->partitions[id]) &&
           replica_manager_find_id(ps, topic_id, id) == NULL;
}

/* Whether what job j wrote is durable, as its syncfs said: a failure
 * takes the log dir offline (unless unsafe.fsync.failure.ignore), but
 * for one short of descriptors (RC_FULL: the job's opens took them),
 * which says nothing of the disk; its logs are then closed and tried
 * again after a pause, as logs that failed to open. */
static bool job_synced(struct replica_manager *ps, const struct open_job *j)
{
    return j->sync_rc != RC_FULL &&
           replica_manager_synced(ps, "new logs", j->sync_rc, j->sync_ms);
}

/* On the loop: hosts what the job opened that is still wanted (the
 * image may have moved on meanwhile; the rest is closed), gives each
 * its role, and sends the next job. */
static void open_job_done_cb(uv_work_t *req, int status)
{
    (void)status;
    struct open_job *j = req->data;
    struct replica_manager *ps = j->ps;
    ps->open_jobs--;
    bool full = j->sync_rc == RC_FULL;
    bool synced = ps->closed || job_synced(ps, j);
    uint64_t now = uv_now(ps->loop);
    struct partition *opened[PARTITIONS_OPEN_JOB_MAX];
    size_t n = 0;
    bool probed = false;
    for (size_t i = 0; i < j->n; i++) {
        struct open_item *it = &j->items[i];
        if (!ps->closed) {
            (void)meta_index_remove(&ps->opening, &it->topic_id, it->id);
        }
        const struct meta_topic *t = NULL;
        bool wanted = !ps->closed && (synced || full) &&
                      still_wanted(ps, &it->topic_id, it->id, &t);
        if (it->log != NULL) {
            log_attach(it->log, ps->loop);
        }
        if (it->log == NULL || (wanted && full)) {
            if (it->log != NULL) {
                log_close(it->log);
            }
            if (wanted) {
                open_failed(ps, t, it->id, now, &probed);
            }
            continue;
        }
        if (!wanted) {
            log_close(it->log); /* gone, or the manager closed */
            continue;
        }
        struct partition *p = replica_manager_adopt(ps, t, it->id, it->log);
        if (p == NULL) {
            open_failed(ps, t, it->id, now, &probed);
            continue;
        }
        open_retry_clear(&ps->retry, &it->topic_id, it->id);
        p->seen = true;
        opened[n++] = p;
    }
    free(j);
    if (ps->closed) {
        if (ps->open_jobs == 0) {
            meta_index_free(&ps->opening);
        }
        return;
    }
    opened_run_add(ps, n);
    replica_open_retry_arm(ps, now);
    take_roles(ps, opened, n);
    replica_open_pending(ps);
}

/* Sends queued logs to open jobs while fewer than PARTITIONS_OPEN_JOBS
 * are in flight. */
static void send_open_jobs(struct replica_manager *ps)
{
    uint64_t now = uv_now(ps->loop);
    while (!ps->dir_failed && ps->open_jobs < PARTITIONS_OPEN_JOBS &&
           ps->pending_next < ps->n_pending) {
        struct open_job *j = malloc(sizeof *j);
        if (j == NULL) {
            return; /* tried again as the next job ends */
        }
        *j = (struct open_job){.req.data = j, .ps = ps};
        while (j->n < PARTITIONS_OPEN_JOB_MAX &&
               ps->pending_next < ps->n_pending) {
            const struct replica_manager_pending *q =
                &ps->pending[ps->pending_next++];
            const struct meta_topic *t = NULL;
            if (!still_wanted(ps, &q->topic_id, q->id, &t) ||
                meta_index_get(&ps->opening, &q->topic_id, q->id) != NULL ||
                !open_retry_due(&ps->retry, &q->topic_id, q->id, now)) {
                continue; /* gone, open or opening, or backing off */
            }
            if (meta_index_put(&ps->opening, &q->topic_id, q->id,
                               (void *)ps) != RC_OK) {
                ps->pending_next--; /* tried again later */
                break;
            }
            struct open_item *it = &j->items[j->n++];
            it->topic_id = q->topic_id;
            it->id = q->id;
            strcpy(it->topic, t->name);
            open_config(ps, t, &it->cfg);
            it->log = NULL;
        }
        if (j->n == 0) {
            free(j);
            continue;
        }
        int rv = uv_queue_work(ps->loop, &j->req, open_job_work_cb,
                               open_job_done_cb);
        ASSERT(rv == 0); /* a live loop and callbacks: it cannot fail */
        ps->open_jobs++;
    }
}

/* Opens the queued logs, as many as a turn's budget allows, with their
 * syncs deferred to one syncfs for the whole batch; then each takes the
 * role the image gives it. The rest wait for the next turn. Many logs
 * open in jobs on the threadpool instead (send_open_jobs()). */
void replica_open_pending(struct replica_manager *ps)
{
    if (ps->closed || ps->img == NULL) {
        return;
    }
    if (ps->opened_run_ns == 0) {
        ps->opened_run_ns = uv_hrtime(); /* a run begins */
    }
    if (ps->open_jobs > 0 ||
        ps->n_pending - ps->pending_next > PARTITIONS_OPEN_ASYNC_MIN) {
        send_open_jobs(ps);
        opened_run_add(ps, 0);
        hold_startup(ps);
        return;
    }
    uint64_t now = uv_now(ps->loop);
    uint64_t t0 = uv_hrtime();
    const uint64_t budget_ns = PARTITIONS_OPEN_BUDGET_MS * 1000000ull;
    const struct meta_topic *failed = NULL;
    int32_t failed_id = 0;
    struct partition *opened[PARTITIONS_OPENS_PER_TURN];
    size_t n = 0;
    bool deferred =
        replica_manager_defer_syncs(ps->n_pending - ps->pending_next);
    while (!ps->dir_failed && ps->pending_next < ps->n_pending &&
           n < PARTITIONS_OPENS_PER_TURN &&
           (n == 0 || uv_hrtime() - t0 < budget_ns)) {
        const struct replica_manager_pending *q =
            &ps->pending[ps->pending_next++];
        const struct meta_topic *t =
            meta_image_topic_by_id(ps->img, &q->topic_id);
        if (t == NULL || q->id >= t->n_partitions ||
            !replica_manager_hosts(ps, &t->partitions[q->id]) ||
            replica_manager_find_id(ps, &q->topic_id, q->id) != NULL ||
            !open_retry_due(&ps->retry, &q->topic_id, q->id, now)) {
            continue; /* gone, open already, or waiting out a back-off */
        }
        struct partition *p = add(ps, t, q->id);
        if (p == NULL) {
            failed = t; /* probed once the syncs are no longer deferred */
            failed_id = q->id;
            break;
        }
        open_retry_clear(&ps->retry, &q->topic_id, q->id);
        p->seen = true;
        opened[n++] = p;
    }
    bool synced = replica_manager_sync_deferred(ps, deferred, "new logs");
    if (failed != NULL) {
        bool probed = false;
        open_failed(ps, failed, failed_id, now, &probed);
    }
    opened_run_add(ps, n);
    if (ps->pending_next < ps->n_pending) {
        /* the rest next turn */
        uv_idle_start(&ps->more, replica_manager_more_cb);
    }
    replica_open_retry_arm(ps, now);
    take_roles(ps, opened, synced ? n : 0);
    hold_startup(ps);
}
