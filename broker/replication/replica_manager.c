/* Hosted partitions following the metadata image
 * (broker/replication/replica_manager.h). */
#include "broker/replication/replica_manager.h"
#include "broker/log/log_open.h"

#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/replication/hw_checkpoint.h"
#include "broker/replication/repair.h"
#include "broker/replication/replica_manager_internal.h"
#include "broker/replication/replica_open.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "common/file.h"
#include "common/io.h"
#include "common/rc.h"
#include "common/topic_config.h"

#define PARTITIONS__METADATA_FILE "partition.metadata"

/* --- The partitions' host (broker/replication/partition.h) --------------- */

static int64_t host_now_ms(void *ctx)
{
    const struct replica_manager *ps = ctx;
    return (int64_t)uv_now(ps->loop);
}

static int64_t host_wall_ms(void *ctx)
{
    (void)ctx;
    return clock_wall_ms();
}

static void host_wake(void *ctx, struct partition *p)
{
    replica_manager_wake(ctx, p);
}

static void check_add(struct replica_manager *ps, struct partition *p);

static void host_isr_work(void *ctx, struct partition *p)
{
    check_add(ctx, p);
}

static void host_follower_damaged(void *ctx, struct partition *p)
{
    struct replica_manager *ps = ctx;
    if (ps->hooks.follower_damaged != NULL) {
        ps->hooks.follower_damaged(ps->hooks.arg, p);
    }
}

static int64_t host_replica_seen(void *ctx, const struct partition *p,
                                 int32_t replica, int64_t fetch_offset)
{
    struct replica_manager *ps = ctx;
    return ps->hooks.replica_seen != NULL
               ? ps->hooks.replica_seen(ps->hooks.arg, p, replica,
                                        fetch_offset)
               : -1;
}

static void host_alter_isr(void *ctx, struct partition *p,
                           const struct meta_replica_set *isr)
{
    replica_manager_alter_isr(ctx, p, isr);
}

static void host_leave_isr(void *ctx, struct partition *p, int64_t offset)
{
    struct replica_manager *ps = ctx;
    if (ps->hooks.log_corrupt != NULL) {
        ps->hooks.log_corrupt(ps->hooks.arg, p, offset);
    }
}

int replica_manager_init(struct replica_manager *ps, uv_loop_t *loop,
                         const struct replica_manager_config *cfg,
                         const struct replica_manager_hooks *hooks,
                         struct tracer *tracer)
{
    memset(ps, 0, sizeof *ps);
    if (strlen(cfg->log_dir) + META_TOPIC_NAME_BYTES_MAX + 64 >=
        sizeof ps->log_dir) {
        return RC_TOO_LARGE;
    }
    ASSERT(cfg->topic_defaults.min_insync_replicas >= 1);
    ASSERT(cfg->topic_defaults.max_message_bytes >= 1);
    ASSERT(cfg->topic_defaults.timestamp_before_max_ms >= 0);
    ASSERT(cfg->topic_defaults.timestamp_after_max_ms >= 0);
    ASSERT(cfg->lag_max_ms > 0);
    strcpy(ps->log_dir, cfg->log_dir);
    ps->loop = loop;
    ps->tracer = tracer;
    ps->broker_id = cfg->broker_id;
    ps->fenced = true;
    ps->log_cfg = cfg->log;
    ps->sync_before_ack = cfg->sync_before_ack;
    ps->unsafe_fsync_failure_ignore = cfg->unsafe_fsync_failure_ignore;
    ps->topic_defaults = cfg->topic_defaults;
    ps->lag_max_ms = cfg->lag_max_ms;
    ps->validate_records = cfg->validate_records;
    ps->scrub_bytes_per_sec = cfg->scrub_bytes_per_sec;
    ps->retention_check_ms = cfg->retention_check_ms;
    ps->clean = cfg->clean;
    ps->clean_backoff_ms = cfg->clean_backoff_ms;
    ps->hooks = *hooks;
    ps->host = (struct partition_host){.self = cfg->broker_id,
                                       .tracer = tracer,
                                       .ctx = ps,
                                       .now_ms = host_now_ms,
                                       .wall_ms = host_wall_ms,
                                       .wake = host_wake,
                                       .alter_isr = host_alter_isr,
                                       .leave_isr = host_leave_isr,
                                       .replica_seen = host_replica_seen,
                                       .isr_work = host_isr_work,
                                       .follower_damaged =
                                           host_follower_damaged,
                                       .counts = &ps->counts};
    uv_idle_init(loop, &ps->more);
    ps->more.data = ps;
    uv_idle_init(loop, &ps->wake_idle);
    ps->wake_idle.data = ps;
    uv_timer_init(loop, &ps->isr_timer);
    ps->isr_timer.data = ps;
    uv_timer_init(loop, &ps->retry_timer);
    ps->retry_timer.data = ps;
    uv_timer_init(loop, &ps->retention_timer);
    ps->retention_timer.data = ps;
    uv_timer_init(loop, &ps->clean_timer);
    ps->clean_timer.data = ps;
    open_retry_init(&ps->retry);
    ps->jitter = uv_hrtime() | 1;
    ps->full_pass = true; /* the first image is all new */
    ps->apply_budget_ns = PARTITIONS_APPLY_BUDGET_MS * 1000000ull;
    int rv = file_mkdirs(ps->log_dir);
    if (rv == RC_OK) {
        rv = record_validator_new(&ps->validator);
    }
    if (rv == RC_OK && ps->validate_records) {
        ps->host.validator = ps->validator;
    }
    if (rv == RC_OK) {
        rv = log_startup_init(&ps->startup, loop, LOG_STARTUP_CHUNK_BYTES,
                              tracer);
    }
    return rv;
}

struct partition *replica_manager_find_id(const struct replica_manager *ps,
                                          const struct meta_uuid *topic_id,
                                          int32_t id)
{
    return meta_index_get(&ps->by_id, topic_id, id);
}

struct partition *replica_manager_find(const struct replica_manager *ps,
                                       const char *topic, int32_t id)
{
    const struct meta_topic *t =
        ps->img != NULL ? meta_image_topic(ps->img, topic) : NULL;
    if (t != NULL) {
        struct partition *p = meta_index_get(&ps->by_id, &t->id, id);
        return p != NULL && strcmp(p->topic, topic) == 0 ? p : NULL;
    }
    if (ps->img != NULL) {
        return NULL; /* partitions come from the image: none of t */
    }
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->parts[i]->id == id && strcmp(ps->parts[i]->topic, topic) == 0) {
            return ps->parts[i];
        }
    }
    return NULL;
}

bool replica_manager_move_throttled(const struct replica_manager *ps,
                                    const struct partition *p,
                                    int32_t replica)
{
    const struct meta_partition *mp =
        ps->img != NULL ? meta_image_partition(ps->img, &p->topic_id, p->id)
                        : NULL;
    return mp != NULL && (mp->adding.n > 0 || mp->removing.n > 0) &&
           !meta_replica_set_contains(&mp->isr, replica);
}

static void wake_cb(uv_idle_t *handle)
{
    struct replica_manager *ps = handle->data;
    /* Wakes may queue more wakes (an answered follower fetch moves the
     * high watermark); those run on the next turn. */
    size_t n = ps->n_wake;
    struct partition **list = ps->wake;
    ps->wake = NULL;
    ps->n_wake = ps->cap_wake = 0;
    uv_idle_stop(handle);
    for (size_t i = 0; i < n; i++) {
        list[i]->wake_queued = false;
    }
    for (size_t i = 0; i < n; i++) {
        if (ps->hooks.hw_moved != NULL && !list[i]->closing) {
            ps->hooks.hw_moved(ps->hooks.arg, list[i]);
        }
    }
    free(list);
}

static void unlink_changed(struct replica_manager *ps, struct partition *p)
{
    if (p->change_prev != NULL) {
        p->change_prev->change_next = p->change_next;
    } else if (ps->changed == p) {
        ps->changed = p->change_next;
    }
    if (p->change_next != NULL) {
        p->change_next->change_prev = p->change_prev;
    }
    p->change_prev = p->change_next = NULL;
}

/* p changed now: first in the list of changes. */
static void mark_changed(struct replica_manager *ps, struct partition *p)
{
    if (p->closing) {
        return; /* dropped: out of the list for good */
    }
    p->change_seq = ++ps->change_seq;
    if (ps->changed == p) {
        return;
    }
    unlink_changed(ps, p);
    p->change_next = ps->changed;
    if (ps->changed != NULL) {
        ps->changed->change_prev = p;
    }
    ps->changed = p;
}

struct partition *replica_manager_changed_since(
    const struct replica_manager *ps, uint64_t since)
{
    struct partition *p = ps->changed;
    return p != NULL && p->change_seq > since ? p : NULL;
}

struct partition *replica_manager_changed_next(const struct partition *p,
                                               uint64_t since)
{
    struct partition *next = p->change_next;
    return next != NULL && next->change_seq > since ? next : NULL;
}

void replica_manager_wake(struct replica_manager *ps, struct partition *p)
{
    mark_changed(ps, p);
    if (p->wake_queued || ps->hooks.hw_moved == NULL) {
        return;
    }
    if (ps->n_wake == ps->cap_wake) {
        size_t cap = ps->cap_wake == 0 ? 16 : ps->cap_wake * 2;
        void *w = realloc(ps->wake, cap * sizeof *ps->wake);
        if (w == NULL) {
            return; /* the parked fetch answers at its MaxWaitMs instead */
        }
        ps->wake = w;
        ps->cap_wake = cap;
    }
    ps->wake[ps->n_wake++] = p;
    p->wake_queued = true;
    uv_idle_start(&ps->wake_idle, wake_cb);
}

static void unqueue_wake(struct replica_manager *ps, struct partition *p)
{
    for (size_t i = 0; p->wake_queued && i < ps->n_wake; i++) {
        if (ps->wake[i] == p) {
            ps->wake[i] = ps->wake[--ps->n_wake];
            p->wake_queued = false;
        }
    }
}

void replica_manager_alter_isr(struct replica_manager *ps, struct partition *p,
                               const struct meta_replica_set *isr)
{
    if (ps->hooks.alter_isr == NULL) {
        partition_alter_done(p, PARTITION_ALTER_REFUSED, NULL, 0,
                             (int64_t)uv_now(ps->loop));
        return;
    }
    ps->hooks.alter_isr(ps->hooks.arg, p, isr);
}

/* --- High-watermark checkpoint ------------------------------------------- */

#define PARTITIONS__HW_FILE HW_CHECKPOINT_FILE
#define PARTITIONS__CHECKPOINT_MS 5000

/* Kafka's format: "0\n", the count, then "topic partition offset" lines;
 * and a checksum line (broker/replication/hw_checkpoint.h). */
static void save_checkpoint(struct replica_manager *ps, bool force)
{
    uint64_t changes = ps->host.hw_changes;
    if (!force && changes == ps->hw_changes_saved) {
        return; /* no high watermark moved since the last one */
    }
    size_t cap = 32 + ps->n * (META_TOPIC_NAME_BYTES_MAX + 48);
    char *buf = malloc(cap);
    if (buf == NULL) {
        TRACE_WARN(ps->tracer, "cannot save %s/%s: %s", ps->log_dir,
                   PARTITIONS__HW_FILE, rc_str(RC_NOMEM));
        return; /* tried again at the next check */
    }
    size_t len = (size_t)snprintf(buf, cap, "0\n%zu\n", ps->n);
    for (size_t i = 0; i < ps->n; i++) {
        const struct partition *p = ps->parts[i];
        len += (size_t)snprintf(buf + len, cap - len, "%s %d %" PRId64 "\n",
                                p->topic, p->id, p->hw);
    }
    hw_checkpoint_cache_drop(&ps->hw_cache); /* the file changes */
    if (file_write_checked(ps->log_dir, PARTITIONS__HW_FILE, buf, len) ==
        RC_OK) {
        ps->hw_changes_saved = changes;
    } else {
        TRACE_WARN(ps->tracer, "cannot save %s/%s", ps->log_dir,
                   PARTITIONS__HW_FILE);
    }
    free(buf);
}

/* The checkpointed high watermark of topic-id, or 0. A checkpoint that
 * is not trusted counts as missing (the HW is learned again from the
 * leader, or from the replicas' log ends): logged, and rewritten at once
 * from the HWs of the partitions opened so far, so that it is said once
 * and the later partitions find no value in it either. */
static int64_t load_checkpoint(struct replica_manager *ps, const char *topic,
                               int32_t id)
{
    int64_t hw = 0;
    int rv = hw_checkpoint_cache_read(&ps->hw_cache, ps->log_dir, topic, id,
                                      &hw);
    if (rv == RC_OK || rv == RC_NOT_FOUND) {
        return hw;
    }
    TRACE_WARN(ps->tracer, "%s/%s not trusted (%s): taken as missing, "
               "high watermarks learned again; rewritten", ps->log_dir,
               PARTITIONS__HW_FILE, rc_str(rv));
    save_checkpoint(ps, true);
    return 0;
}

/* The partitions the ISR timer looks at: leaders with ISR work, and
 * partitions with acks still to tell (partition_needs_isr_check()),
 * added when a partition says it has work (the host's isr_work) and
 * dropped when a check leaves it with none. A broker of 100,000 idle
 * replicas walks none of them. */
static void check_add(struct replica_manager *ps, struct partition *p)
{
    if (p->checked_pos != 0 || !partition_needs_isr_check(p)) {
        return;
    }
    if (ps->n_checked == ps->cap_checked) {
        size_t cap = ps->cap_checked == 0 ? 64 : ps->cap_checked * 2;
        void *grown = realloc(ps->checked, cap * sizeof *ps->checked);
        ASSERT(grown != NULL); /* as the partition array itself */
        ps->checked = grown;
        ps->cap_checked = cap;
    }
    ps->checked[ps->n_checked++] = p;
    p->checked_pos = ps->n_checked;
}

static void check_remove(struct replica_manager *ps, struct partition *p)
{
    if (p->checked_pos == 0) {
        return;
    }
    struct partition *last = ps->checked[--ps->n_checked];
    ps->checked[p->checked_pos - 1] = last;
    last->checked_pos = p->checked_pos;
    p->checked_pos = 0;
}

static void isr_timer_cb(uv_timer_t *t)
{
    struct replica_manager *ps = t->data;
    int64_t now = (int64_t)uv_now(ps->loop);
    for (size_t i = ps->n_checked; i > 0; i--) {
        struct partition *p = ps->checked[i - 1];
        partition_check_isr(p, now);
        if (!partition_needs_isr_check(p)) {
            check_remove(ps, p);
        }
    }
    if ((uint64_t)now - ps->last_checkpoint_ms >= PARTITIONS__CHECKPOINT_MS) {
        ps->last_checkpoint_ms = (uint64_t)now;
        save_checkpoint(ps, false);
    }
    if (ps->scrub_bytes_per_sec > 0 && ps->scrub_buf != NULL) {
        int64_t per_tick = ps->scrub_bytes_per_sec / 1000 *
                           (int64_t)ps->isr_period_ms;
        repair_scrub(ps, per_tick > 0 ? per_tick : 1);
    }
}

static void retention_timer_cb(uv_timer_t *t)
{
    struct replica_manager *ps = t->data;
    int64_t now = clock_wall_ms();
    for (size_t i = 0; i < ps->n; i++) {
        partition_apply_retention(ps->parts[i], now);
    }
}

static void clean_done_cb(void *arg)
{
    struct replica_manager *ps = arg;
    ps->cleaning.p = NULL;
}

/* Kafka's one cleaner thread: at most one pass at a time, the partitions
 * taken in turn. */
static void clean_timer_cb(uv_timer_t *t)
{
    struct replica_manager *ps = t->data;
    if (ps->cleaning.p != NULL || ps->n == 0) {
        return;
    }
    int64_t now = clock_wall_ms();
    for (size_t k = 0; k < ps->n; k++) {
        struct partition *p = ps->parts[(ps->clean_next + k) % ps->n];
        ps->cleaning = (struct partition_clean){.done = clean_done_cb,
                                                .arg = ps};
        if (partition_start_clean(p, now, &ps->cleaning) == RC_OK) {
            ps->clean_next = (ps->clean_next + k + 1) % ps->n;
            return;
        }
        ps->cleaning.p = NULL;
    }
}

void replica_manager_start_timers(struct replica_manager *ps)
{
    /* Kafka checks every lag/2; a finer period bounds the detection time
     * closer to replica.lag.time.max.ms. */
    uint64_t period = (uint64_t)ps->lag_max_ms / 4;
    period = period < 50 ? 50 : period > 5000 ? 5000 : period;
    ps->last_checkpoint_ms = uv_now(ps->loop);
    ps->isr_period_ms = period;
    if (ps->scrub_bytes_per_sec > 0) {
        ps->scrub_buf = malloc(REPLICA_SCRUB_BUFFER_BYTES);
        if (ps->scrub_buf == NULL) {
            TRACE_WARN(ps->tracer, "out of memory: no log scrub");
        }
    }
    uv_timer_start(&ps->isr_timer, isr_timer_cb, period, period);
    if (ps->clean_backoff_ms > 0) { /* 0: no cleaner (tests) */
        uint64_t every = (uint64_t)ps->clean_backoff_ms;
        uv_timer_start(&ps->clean_timer, clean_timer_cb, every, every);
    }
    if (ps->retention_check_ms > 0) { /* 0: retention off (tests) */
        uint64_t every = (uint64_t)ps->retention_check_ms;
        uv_timer_start(&ps->retention_timer, retention_timer_cb, every,
                       every);
    }
}

static struct partition *find_by_id(struct replica_manager *ps,
                                    const struct meta_uuid *topic_id,
                                    int32_t id)
{
    return meta_index_get(&ps->by_id, topic_id, id);
}

void replica_manager_part_dir(const struct replica_manager *ps,
                              const char *topic, int32_t id, char *out,
                              size_t cap)
{
    int n = snprintf(out, cap, "%s/%s-%d", ps->log_dir, topic, id);
    ASSERT(n > 0 && (size_t)n < cap);
}

static int remove_cb(const char *path, const struct stat *st, int flag,
                     struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void replica_manager_remove_dir(const char *dir)
{
    nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}


/* A topic setting that does not pass the registry's check (only an old
 * metadata log can hold one: the controller checks every value it
 * writes) is logged, once per topic, name and value rather than at every
 * metadata update; the broker's own setting is used instead. */
struct bad_values_ctx {
    struct replica_manager *ps;
    const struct meta_topic *t;
};

static void bad_topic_value_cb(void *arg, const struct topic_config_def *d,
                               const char *v, const char *why)
{
    struct bad_values_ctx *ctx = arg;
    struct replica_manager *ps = ctx->ps;
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    const char *parts[] = {ctx->t->name, d->name, v};
    for (size_t i = 0; i < ARRAY_LEN(parts); i++) {
        for (const char *c = parts[i];; c++) {
            h = (h ^ (uint8_t)*c) * 1099511628211u;
            if (*c == '\0') {
                break;
            }
        }
    }
    size_t n = ps->n_bad_values < REPLICA_MANAGER_BAD_VALUES_MAX
                   ? ps->n_bad_values
                   : REPLICA_MANAGER_BAD_VALUES_MAX;
    for (size_t i = 0; i < n; i++) {
        if (ps->bad_values[i] == h) {
            return;
        }
    }
    ps->bad_values[ps->n_bad_values++ % REPLICA_MANAGER_BAD_VALUES_MAX] = h;
    TRACE_WARN(ps->tracer, "topic=%s config %s='%.64s' is invalid (%s); "
               "the broker's setting is used instead", ctx->t->name,
               d->name, v, why);
}

/* Topic t's settings on this broker (common/topic_config.h): what the
 * topic sets, else this broker's dynamic config, else the cluster-wide
 * one, else the broker's config file. Resolved once per topic and image
 * offset: the roles of a fence come by the thousand from a few topics,
 * and every config a topic resolves from changes only by a record,
 * which moves the offset. */
void replica_manager_topic_settings(struct replica_manager *ps,
                                    const struct meta_topic *t,
                                    struct topic_config_values *v)
{
    struct topic_settings_cache *c = &ps->settings_cache;
    if (c->topic == t && c->img == ps->img && c->offset == ps->img->offset) {
        *v = c->values;
        return;
    }
    struct bad_values_ctx ctx = {ps, t};
    topic_config_resolve(ps->img, ps->broker_id, t, &ps->topic_defaults, v,
                         bad_topic_value_cb, &ctx);
    *c = (struct topic_settings_cache){.topic = t,
                                       .img = ps->img,
                                       .offset = ps->img->offset,
                                       .values = *v};
}

void replica_manager_topic_log_config(const struct replica_manager *ps,
                                      const struct topic_config_values *v,
                                      struct log_config *cfg)
{
    *cfg = ps->log_cfg;
    cfg->segment_bytes = v->segment_bytes;
    cfg->segment_ms = v->segment_ms;
    cfg->index_interval_bytes = v->index_interval_bytes;
}

void replica_manager_dir_failed(struct replica_manager *ps, const char *why)
{
    if (ps->dir_failed) {
        return;
    }
    ps->dir_failed = true;
    TRACE_ERROR(ps->tracer, "log.dirs=%s no longer takes writes (%s): "
                "it is offline", ps->log_dir, why);
    if (ps->hooks.log_dir_failed != NULL) {
        ps->hooks.log_dir_failed(ps->hooks.arg);
    }
}

/* A log failed for good (an fsync, a write, a truncation): with one log
 * directory, the directory is what failed. */
void replica_manager_io_failed(struct replica_manager *ps,
                               const struct partition *p, int rc,
                               const char *what)
{
    if (ps->unsafe_fsync_failure_ignore) {
        TRACE_WARN(ps->tracer, "partition=%s-%d %s failed (%s); "
                   "unsafe.fsync.failure.ignore keeps the log dir online",
                   p->topic, p->id, what, rc_str(rc));
        return;
    }
    char why[META_TOPIC_NAME_BYTES_MAX + 64];
    snprintf(why, sizeof why, "partition %s-%d: %s failed: %s", p->topic,
             p->id, what, rc_str(rc));
    replica_manager_dir_failed(ps, why);
}

static void hosted_log_failed_cb(void *arg, int rc)
{
    struct partition *p = arg;
    replica_manager_io_failed(p->owner, p, rc, "its log");
}

/* The start-up check of p's log found a corrupt batch (repaired from a
 * replica by role), or could not read (a failed read, as the scrub's). */
static void hosted_log_damaged_cb(void *arg, int rc, int64_t offset)
{
    struct partition *p = arg;
    if (rc == RC_CORRUPT) {
        repair_log_corrupt(p, offset);
    } else {
        replica_manager_io_failed(p->owner, p, rc, "a read");
    }
}

/* Hosts log l, opened (open_files()) and attached, as partition id of t;
 * NULL (l closed) when out of memory. */
struct partition *replica_manager_adopt(struct replica_manager *ps,
                                        const struct meta_topic *t, int32_t id,
                                        struct log *l)
{
    char dir[LOG_PATH_BYTES_MAX];
    replica_manager_part_dir(ps, t->name, id, dir, sizeof dir);
    if (ps->n == ps->cap) {
        size_t cap = ps->cap == 0 ? 16 : ps->cap * 2;
        void *grown = realloc(ps->parts, cap * sizeof *ps->parts);
        if (grown == NULL) {
            log_close(l);
            return NULL;
        }
        ps->parts = grown;
        ps->cap = cap;
    }
    struct partition *p = calloc(1, sizeof *p);
    if (p == NULL || meta_index_put(&ps->by_id, &t->id, id, p) != RC_OK) {
        free(p);
        log_close(l);
        return NULL;
    }
    ps->parts[ps->n++] = p;
    *p = (struct partition){.host = &ps->host, .owner = ps, .topic_id = t->id, .id = id,
                            .log = l, .leader = META_NO_LEADER,
                            .leader_epoch = -1,
                            .sync_before_ack = ps->sync_before_ack,
                            .corrupt_offset = -1,
                            .repair_until = -1,
                            .retention = {-1, -1}}; /* until the topic's */
    p->owner_pos = ps->n - 1;
    log_on_failure(l, hosted_log_failed_cb, p);
    /* Damage found once the metadata says whom it follows is repaired at
     * once, before that when it does (repair_after_metadata()). */
    log_startup_on_damage(l, hosted_log_damaged_cb, p);
    log_startup_add(&ps->startup, l);
    producer_state_init(&p->producers);
    int rv = partition_load_producers(p, dir);
    if (rv != RC_OK) {
        /* Unknown producers are accepted with any sequence: no loss, only
         * no de-duplication of their first retries. */
        TRACE_WARN(ps->tracer, "partition=%s-%d producer state not rebuilt: "
                   "%s", t->name, id, rc_str(rv));
    }
    strcpy(p->topic, t->name);
    int64_t hw = load_checkpoint(ps, t->name, id);
    p->hw = hw < log_end_offset(l) ? hw : log_end_offset(l);
    return p;
}


/* Applies settings v to p: the LogValidator's bounds (KIP-937), the
 * largest batch, compaction and retention. max.message.bytes is at most
 * BATCH_BYTES_MAX, the largest batch Cairn stores (0, as in Kafka, takes
 * no batch); a negative retention.ms or retention.bytes is -1, no limit,
 * as Kafka's retention takes it; a topic that does not delete keeps
 * everything. */
static void follow_settings(struct replica_manager *ps, struct partition *p,
                            const struct topic_config_values *v)
{
    p->max_message_bytes = v->max_message_bytes < (int64_t)BATCH_BYTES_MAX
                               ? v->max_message_bytes
                               : (int32_t)BATCH_BYTES_MAX;
    struct log_config cfg;
    replica_manager_topic_log_config(ps, v, &cfg);
    log_set_config(p->log, &cfg);
    p->log_append_time =
        v->timestamp_type == TOPIC_CONFIG_TIMESTAMP_LOG_APPEND_TIME;
    p->timestamp_before_max_ms = v->timestamp_before_max_ms;
    p->timestamp_after_max_ms = v->timestamp_after_max_ms;
    p->compacted = (v->cleanup_policy & TOPIC_CONFIG_CLEANUP_COMPACT) != 0;
    p->clean = ps->clean;
    p->clean.delete_retention_ms = v->delete_retention_ms;
    p->clean.min_lag_ms = v->min_compaction_lag_ms;
    p->clean.max_lag_ms = v->max_compaction_lag_ms;
    p->clean.min_dirty_ratio = v->min_cleanable_dirty_ratio;
    if ((v->cleanup_policy & TOPIC_CONFIG_CLEANUP_DELETE) == 0) {
        p->retention = (struct log_retention){-1, -1}; /* compact only */
        return;
    }
    p->retention.retention_ms = v->retention_ms < 0 ? -1 : v->retention_ms;
    p->retention.retention_bytes =
        v->retention_bytes < 0 ? -1 : v->retention_bytes;
}

/* Returns true when leadership changed. */
bool replica_manager_follow_leadership(struct replica_manager *ps,
                                       struct partition *p,
                                       const struct meta_topic *t,
                                       const struct meta_partition *mp)
{
    bool changed = mp->leader != p->leader ||
                   mp->leader_epoch != p->leader_epoch;
    struct topic_config_values v;
    replica_manager_topic_settings(ps, t, &v);
    follow_settings(ps, p, &v);
    if (ps->fenced) {
        return false; /* no role yet: leader and epoch stay unknown */
    }
    /* Any value above META_REPLICAS_MAX is more than a partition can
     * have: acks=all is refused either way (broker/replication/isr.h). */
    int32_t min_insync = v.min_insync_replicas <= META_REPLICAS_MAX
                             ? v.min_insync_replicas
                             : META_REPLICAS_MAX + 1;
    partition_apply_metadata(p, ps->broker_id, mp, ps->img, min_insync,
                             ps->lag_max_ms, (int64_t)uv_now(ps->loop));
    /* Fetch sessions look at it again: readers' errors change with the
     * leadership, and a new partition epoch makes a leader forget what
     * followers outside the ISR fetched (isr.h), which their next session
     * fetch must tell it again. */
    mark_changed(ps, p);
    if (!changed) {
        return false;
    }
    repair_after_metadata(p);
    if (mp->leader == ps->broker_id) {
        TRACE_INFO(ps->tracer, "became leader of %s-%d at epoch %d "
                   "(isr size %d, hw %" PRId64 ", end %" PRId64 ")",
                   p->topic, p->id, mp->leader_epoch, mp->isr.n, p->hw,
                   log_end_offset(p->log));
    } else if (mp->leader == META_NO_LEADER) {
        TRACE_INFO(ps->tracer, "partition %s-%d is offline at epoch %d "
                   "(no leader)", p->topic, p->id, mp->leader_epoch);
    } else {
        TRACE_INFO(ps->tracer, "became follower of %s-%d at epoch %d "
                   "(leader %d)", p->topic, p->id, mp->leader_epoch,
                   mp->leader);
    }
    return true;
}

struct removal {
    struct replica_manager *ps;
    struct partition *p;
    bool delete_files;
    char dir[LOG_PATH_BYTES_MAX];
};

static void closed_cb(void *arg)
{
    struct removal *r = arg;
    if (r->delete_files) {
        replica_manager_remove_dir(r->dir);
    }
    r->ps->closing--;
    producer_state_free(&r->p->producers);
    free(r->p->waiters);
    free(r->p);
    free(r);
}

/* Takes parts[i] out of service: waiters fail, the log closes, and the
 * partition is freed (and its directory removed) once the log is gone. */
static void drop(struct replica_manager *ps, size_t i, bool delete_files)
{
    struct partition *p = ps->parts[i];
    ASSERT(p->owner_pos == i);
    ps->parts[i] = ps->parts[--ps->n];
    ps->parts[i]->owner_pos = i;
    (void)meta_index_remove(&ps->by_id, &p->topic_id, p->id);
    unqueue_wake(ps, p);
    check_remove(ps, p);
    unlink_changed(ps, p);
    ps->removals++;
    if (ps->cleaning.p == p) {
        ps->cleaning.p = NULL; /* its pass ends with the log, untold */
    }
    partition_close(p);
    partition_fail_waiters(p, RC_NOT_LEADER);
    struct removal *r = malloc(sizeof *r);
    ASSERT(r != NULL);
    *r = (struct removal){.ps = ps, .p = p, .delete_files = delete_files};
    replica_manager_part_dir(ps, p->topic, p->id, r->dir, sizeof r->dir);
    /* A log that never held a record has no producer to remember: no
     * snapshot (two syncs a partition, for a broker stopping with
     * 100,000 idle ones). */
    if (!delete_files && log_end_offset(p->log) > 0 &&
        producer_state_save(&p->producers, r->dir,
                            log_end_offset(p->log)) != RC_OK) {
        TRACE_WARN(ps->tracer, "partition=%s-%d producer state not saved; "
                   "rebuilt from the log on restart", p->topic, p->id);
    }
    if (delete_files) {
        TRACE_INFO(ps->tracer, "partition %s-%d no longer hosted here; "
                   "deleting %s", p->topic, p->id, r->dir);
    }
    ps->closing++;
    log_close_then(p->log, closed_cb, r);
}

void replica_manager_unfence(struct replica_manager *ps)
{
    ps->fenced = false;
    ps->full_pass = true; /* every partition takes its role */
}

bool replica_manager_hosts(const struct replica_manager *ps,
                           const struct meta_partition *mp)
{
    return meta_replica_set_contains(&mp->replicas, ps->broker_id);
}

static bool apply_queued(struct replica_manager *ps);

void replica_manager_more_cb(uv_idle_t *handle)
{
    struct replica_manager *ps = handle->data;
    uv_idle_stop(handle);
    replica_manager_followers_changed(ps, apply_queued(ps));
    replica_open_pending(ps);
}


/* Appends (topic_id, id) to a queue of partitions; false when out of
 * memory. */
static bool push_key(struct replica_manager_pending **q, size_t *n,
                     size_t *cap, const struct meta_uuid *topic_id,
                     int32_t id)
{
    if (*n == *cap) {
        size_t grown_cap = *cap == 0 ? 64 : *cap * 2;
        void *grown = realloc(*q, grown_cap * sizeof **q);
        if (grown == NULL) {
            return false;
        }
        *q = grown;
        *cap = grown_cap;
    }
    (*q)[(*n)++] = (struct replica_manager_pending){*topic_id, id};
    return true;
}

/* Queues partition id of topic_id to be opened. */
static void push_pending(struct replica_manager *ps,
                         const struct meta_uuid *topic_id, int32_t id)
{
    if (!push_key(&ps->pending, &ps->n_pending, &ps->cap_pending, topic_id,
                  id)) {
        ps->full_pass = true; /* the next pass finds it again */
    }
}

/* Queues partition id of topic_id to take the role the image gives it
 * (apply_queued()), once: a partition already queued is not again. */
static void push_role(struct replica_manager *ps,
                      const struct meta_uuid *topic_id, int32_t id)
{
    struct partition *p = find_by_id(ps, topic_id, id);
    if (p != NULL && p->role_queued) {
        return;
    }
    if (!push_key(&ps->to_apply, &ps->n_to_apply, &ps->cap_to_apply,
                  topic_id, id)) {
        ps->full_pass = true; /* the next pass finds it again */
        return;
    }
    if (p != NULL) {
        p->role_queued = true;
    }
}

/* Ends the deferral of this thread's syncs (common/io.h) and makes what
 * was written meanwhile durable with one syncfs of the log directory,
 * before the loop goes on: before any batch of a new epoch is appended,
 * before a new log takes a role. False when that sync failed, which
 * takes the log directory offline, as a failed checkpoint write of one
 * log does (unless unsafe.fsync.failure.ignore). what names the writes. */
bool replica_manager_sync_deferred(struct replica_manager *ps, bool deferred,
                                   const char *what)
{
    if (!deferred || !io_sync_defer_end()) {
        return true; /* each write was synced as it was made, or none */
    }
    uint64_t t0 = uv_hrtime();
    int rv = file_sync_fs(ps->log_dir);
    /* The loop stood still meanwhile. */
    return replica_manager_synced(ps, what, rv,
                                  (uv_hrtime() - t0) / 1000000u);
}

bool replica_manager_synced(struct replica_manager *ps, const char *what,
                            int rv, uint64_t took_ms)
{
    if (took_ms >= PARTITIONS_SYNCFS_SLOW_MS) {
        TRACE_WARN(ps->tracer, "syncing %s (syncfs of %s) took %" PRIu64
                   " ms", what, ps->log_dir, took_ms);
    }
    if (rv == RC_OK) {
        return true;
    }
    char why[128];
    snprintf(why, sizeof why, "syncing %s (syncfs): %s", what, rc_str(rv));
    if (ps->unsafe_fsync_failure_ignore) {
        TRACE_WARN(ps->tracer, "%s; unsafe.fsync.failure.ignore keeps the "
                   "log dir online", why);
        return true;
    }
    replica_manager_dir_failed(ps, why);
    return false;
}

/* Defers this thread's syncs when the work ahead is bulk (more than
 * PARTITIONS_SYNC_EACH_MAX logs or partitions): one syncfs then costs
 * less than a sync per file. Small work syncs each file as it writes
 * it: a syncfs also writes back whatever else the file system holds
 * dirty, which a busy machine pays for on the loop. Returns whether it
 * deferred, for replica_manager_sync_deferred(). */
bool replica_manager_defer_syncs(size_t work)
{
    bool bulk = work > PARTITIONS_SYNC_EACH_MAX;
    if (bulk) {
        io_sync_defer_begin();
    }
    return bulk;
}

void replica_manager_followers_changed(struct replica_manager *ps,
                                       bool changed)
{
    if (changed && ps->hooks.followers_changed != NULL) {
        ps->hooks.followers_changed(ps->hooks.arg);
    }
}

/* The whole image: queues what is missing to be opened
 * (replica_open_pending()), and what is open to take its role
 * (apply_queued()); drops what is no longer hosted. True when it dropped
 * one. */
static bool queue_all(struct replica_manager *ps, const struct meta_image *img)
{
    bool dropped = false;
    uint64_t now = uv_now(ps->loop);
    ps->full_pass = false;
    for (size_t i = 0; i < ps->n; i++) {
        ps->parts[i]->seen = false;
    }
    ps->n_pending = ps->pending_next = 0;
    open_retry_unsee(&ps->retry);
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        for (int32_t id = 0; id < topic->n_partitions; id++) {
            const struct meta_partition *mp = &topic->partitions[id];
            ps->visits++;
            if (!replica_manager_hosts(ps, mp)) {
                continue;
            }
            struct partition *p = find_by_id(ps, &topic->id, id);
            if (p == NULL) {
                /* Due, or waiting out its back-off (seen either way). */
                if (open_retry_due(&ps->retry, &topic->id, id, now) &&
                    !ps->dir_failed) {
                    push_pending(ps, &topic->id, id);
                }
                continue;
            }
            p->seen = true;
            push_role(ps, &topic->id, id);
        }
    }
    for (size_t i = ps->n; i > 0; i--) {
        if (!ps->parts[i - 1]->seen) {
            drop(ps, i - 1, true);
            dropped = true;
        }
    }
    open_retry_prune(&ps->retry);
    replica_open_retry_arm(ps, now);
    return dropped;
}

/* Partition id of topic t changed: it takes its role, is queued to be
 * opened when hosted but not open, or is dropped when no longer hosted
 * (or its topic is gone: t NULL). True when its leadership changed or
 * it was dropped. */
static bool apply_one(struct replica_manager *ps, const struct meta_topic *t,
                      const struct meta_uuid *topic_id, int32_t id)
{
    struct partition *p = find_by_id(ps, topic_id, id);
    if (p != NULL) {
        p->role_queued = false;
    }
    const struct meta_partition *mp =
        t != NULL && id < t->n_partitions ? &t->partitions[id] : NULL;
    if (mp == NULL || !replica_manager_hosts(ps, mp)) {
        if (p != NULL) {
            drop(ps, p->owner_pos, true);
            return true;
        }
        return false;
    }
    if (p == NULL) {
        if (!ps->dir_failed) {
            push_pending(ps, topic_id, id);
        }
        return false;
    }
    return replica_manager_follow_leadership(ps, p, t, mp);
}

/* Queues what c names (replica_manager_apply()): each partition it names
 * that is hosted or open, every one open when a broker or a default
 * changed. */
static void queue_changes(struct replica_manager *ps,
                          const struct meta_image *img,
                          const struct meta_changes *c)
{
    for (size_t i = 0; c->hosted && i < ps->n; i++) {
        ps->visits++;
        push_role(ps, &ps->parts[i]->topic_id, ps->parts[i]->id);
    }
    for (size_t k = 0; k < c->n; k++) {
        const struct meta_change *ch = &c->items[k];
        const struct meta_topic *t = meta_image_topic_by_id(img, &ch->topic_id);
        if (t == NULL) {
            continue; /* removed since: the hosted pass drops it */
        }
        bool whole = ch->partition == META_INDEX_TOPIC;
        int32_t end = whole ? t->n_partitions : ch->partition + 1;
        for (int32_t id = whole ? 0 : ch->partition;
             id >= 0 && id < end && id < t->n_partitions; id++) {
            ps->visits++;
            if (replica_manager_hosts(ps, &t->partitions[id]) ||
                find_by_id(ps, &t->id, id) != NULL) {
                push_role(ps, &t->id, id);
            }
        }
    }
}

/* Applies the queued roles, a turn's budget at a time (at least
 * PARTITIONS_APPLY_MIN): a broker fenced elsewhere gives this one
 * thousands of leaderships, and the loop must go on turning meanwhile
 * (heartbeats, fetches). What they write (a repair's cut) is synced by
 * one syncfs per turn when bulk. The rest continue next turn. True when
 * a leadership changed. */
static bool apply_queued(struct replica_manager *ps)
{
    if (ps->closed || ps->img == NULL || ps->apply_next == ps->n_to_apply) {
        return false;
    }
    uint64_t t0 = uv_hrtime();
    bool deferred =
        replica_manager_defer_syncs(ps->n_to_apply - ps->apply_next);
    bool changed = false;
    trace_batch_begin(); /* a line or two for each role taken */
    for (size_t done = 0; ps->apply_next < ps->n_to_apply &&
                          (done < PARTITIONS_APPLY_MIN ||
                           uv_hrtime() - t0 < ps->apply_budget_ns);
         done++) {
        struct replica_manager_pending k = ps->to_apply[ps->apply_next++];
        changed |= apply_one(ps, meta_image_topic_by_id(ps->img, &k.topic_id),
                             &k.topic_id, k.id);
    }
    replica_manager_sync_deferred(ps, deferred, "the writes of new roles");
    trace_batch_end();
    if (ps->apply_next < ps->n_to_apply) {
        /* the rest next turn */
        uv_idle_start(&ps->more, replica_manager_more_cb);
    } else {
        ps->n_to_apply = ps->apply_next = 0;
    }
    return changed;
}

void replica_manager_apply(struct replica_manager *ps,
                           const struct meta_image *img)
{
    ps->img = img;
    const struct meta_changes *c = img->changes;
    bool dropped = false;
    if (c == NULL || c->all || ps->full_pass) {
        dropped = queue_all(ps, img);
    } else {
        queue_changes(ps, img, c);
    }
    bool changed = apply_queued(ps);
    replica_manager_followers_changed(ps, dropped || changed);
    replica_open_pending(ps);
}


void replica_manager_close(struct replica_manager *ps)
{
    ps->closed = true;
    free(ps->pending);
    ps->pending = NULL;
    ps->n_pending = ps->cap_pending = ps->pending_next = 0;
    free(ps->to_apply);
    ps->to_apply = NULL;
    ps->n_to_apply = ps->cap_to_apply = ps->apply_next = 0;
    save_checkpoint(ps, true);
    uv_close((uv_handle_t *)&ps->more, NULL);
    uv_close((uv_handle_t *)&ps->wake_idle, NULL);
    uv_close((uv_handle_t *)&ps->isr_timer, NULL);
    uv_close((uv_handle_t *)&ps->retry_timer, NULL);
    uv_close((uv_handle_t *)&ps->retention_timer, NULL);
    uv_close((uv_handle_t *)&ps->clean_timer, NULL);
    open_retry_free(&ps->retry);
    meta_index_free(&ps->by_id);
    if (ps->open_jobs == 0) { /* else once the last one ends */
        meta_index_free(&ps->opening);
    }
    hw_checkpoint_cache_drop(&ps->hw_cache);
    free(ps->wake);
    ps->wake = NULL;
    ps->n_wake = ps->cap_wake = 0;
    while (ps->n > 0) {
        drop(ps, ps->n - 1, false);
    }
    free(ps->checked); /* emptied by the drops */
    ps->checked = NULL;
    ps->n_checked = ps->cap_checked = 0;
    free(ps->parts);
    ps->parts = NULL;
    ps->cap = 0;
    log_startup_close(&ps->startup); /* a job in flight ends with its log */
    record_validator_free(ps->validator);
    ps->validator = NULL;
    free(ps->scrub_buf);
    ps->scrub_buf = NULL;
}
