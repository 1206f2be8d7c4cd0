/* Group coordinator adapter (broker/group/coordinator.h). */
#include "broker/group/coordinator.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/group/group_store.h"
#include "common/clock.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/topic_config.h"

#define COORDINATOR__TICK_MS 100
#define COORDINATOR__CREATE_RETRY_MS 2000
#define COORDINATOR__LOAD_RETRY_MS 1000

/* An offset commit appended to the log, waiting for the high watermark
 * (or the timeout). Freed when the waiter fires, which always happens
 * (HW, leadership lost, partition closed). */
struct coordinator_commit {
    struct coordinator_commit *next;
    struct coordinator_commit *prev;
    struct coordinator *co;
    struct group_commit *token;
    int64_t deadline_ms;
    bool answered;
    bool linked;
};

static const struct meta_topic *offsets_topic(const struct coordinator *co)
{
    return meta_image_topic(membership_image(co->b->membership),
                            GROUP_STORE_TOPIC);
}

int32_t coordinator_partitions(const struct coordinator *co)
{
    const struct meta_topic *t = offsets_topic(co);
    return t != NULL ? t->n_partitions : 0;
}

static struct partition *offsets_partition(struct coordinator *co,
                                           int32_t id)
{
    return replica_manager_find(&co->b->partitions, GROUP_STORE_TOPIC, id);
}

/* --- group_io ------------------------------------------------------------ */

static int32_t io_partition_for(struct group_io *io, struct slice group)
{
    struct coordinator *co = io->impl;
    int32_t n = coordinator_partitions(co);
    return n > 0 ? group_store_partition_for(group.ptr, group.len, n) : 0;
}

static int16_t commit_error(int rc)
{
    return kafka_error_for_offset_commit(kafka_error_from_rc(rc));
}

static void unlink_commit(struct coordinator_commit *c)
{
    if (!c->linked) {
        return;
    }
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        c->co->commits = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->linked = false;
}

static void answer_commit(struct coordinator_commit *c, int16_t error)
{
    if (c->answered) {
        return;
    }
    c->answered = true;
    unlink_commit(c);
    if (c->token != NULL) {
        group_offsets_persisted(&c->co->groups, c->token, error);
    }
}

static void commit_hw_cb(void *arg, int rc)
{
    struct coordinator_commit *c = arg;
    answer_commit(c, commit_error(rc));
    free(c);
}

/* The wall clock less the loop clock: what turns the core's times (loop
 * time) into the records' (wall clock, as Kafka's) and back. */
static int64_t wall_minus_loop(const struct coordinator *co)
{
    return clock_wall_ms() - (int64_t)uv_now(co->b->loop);
}

/* Appends the batch in w to partition id; with c, waits for the high
 * watermark (acks=all), else acks=1. */
static int16_t append_batch(struct coordinator *co, int32_t id,
                            struct writer *w, struct coordinator_commit *c)
{
    struct partition *p = offsets_partition(co, id);
    if (p == NULL || !partition_is_leader(p)) {
        return KAFKA_ERROR_NOT_COORDINATOR;
    }
    struct log_append_info info;
    int rv = partition_append(p, w->data, w->len, clock_wall_ms(),
                              c != NULL ? -1 : 1, &info);
    if (rv == RC_OK && c != NULL) {
        if (p->hw > info.last_offset) {
            rv = RC_INVALID; /* cannot happen: a fresh append */
        } else {
            rv = partition_wait_hw(p, info.last_offset + 1, commit_hw_cb, c);
        }
    }
    return commit_error(rv);
}

/* Appends one batch of offset records (or tombstones) to partition id;
 * with c, waits for the high watermark. */
static int16_t append(struct coordinator *co, int32_t id, struct slice group,
                      const struct group_offset *offs, size_t n,
                      bool tombstones, struct coordinator_commit *c)
{
    struct group_store_offset *so = calloc(n, sizeof *so);
    if (so == NULL) {
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    for (size_t i = 0; i < n; i++) {
        so[i] = (struct group_store_offset){
            .topic = offs[i].topic, .partition = offs[i].partition,
            .offset = offs[i].offset, .leader_epoch = offs[i].leader_epoch,
            .metadata = offs[i].metadata, .tombstone = tombstones};
    }
    struct writer w;
    writer_init(&w, BATCH_BYTES_MAX);
    int rv = group_store_encode(&w, group, so, n, clock_wall_ms());
    free(so);
    int16_t err = rv == RC_OK ? append_batch(co, id, &w, c)
                              : commit_error(rv);
    writer_free(&w);
    return err;
}

static int16_t io_persist_offsets(struct group_io *io,
                                  struct group_commit *token,
                                  int32_t partition, struct slice group,
                                  const struct group_offset *offs, size_t n)
{
    struct coordinator *co = io->impl;
    struct coordinator_commit *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    *c = (struct coordinator_commit){
        .co = co, .token = token,
        .deadline_ms = (int64_t)uv_now(co->b->loop) +
                       co->cfg.commit_timeout_ms};
    int16_t err = append(co, partition, group, offs, n, false, c);
    if (err != KAFKA_ERROR_NONE) {
        free(c);
        return err;
    }
    c->next = co->commits;
    if (co->commits != NULL) {
        co->commits->prev = c;
    }
    co->commits = c;
    c->linked = true;
    return KAFKA_ERROR_NONE;
}

static void io_persist_tombstones(struct group_io *io, int32_t partition,
                                  struct slice group,
                                  const struct group_offset *offs, size_t n)
{
    struct coordinator *co = io->impl;
    if (n == 0) {
        return;
    }
    int16_t err = append(co, partition, group, offs, n, true, NULL);
    if (err != KAFKA_ERROR_NONE) {
        TRACE_WARN(&co->b->tracer, "group=%.*s offsets deleted but their "
                   "tombstones not written: error %d", (int)group.len,
                   (const char *)group.ptr, err);
    }
}

static void io_persist_group(struct group_io *io, const struct group *g,
                             bool gone)
{
    struct coordinator *co = io->impl;
    struct writer w;
    writer_init(&w, BATCH_BYTES_MAX);
    int64_t now = clock_wall_ms();
    int rv = group_store_encode_group(&w, g, gone, now, now);
    int16_t err = rv == RC_OK ? append_batch(co, g->partition, &w, NULL)
                              : commit_error(rv);
    writer_free(&w);
    if (err != KAFKA_ERROR_NONE) {
        TRACE_WARN(&co->b->tracer, "group=%.*s generation %d not written: "
                   "error %d (after a coordinator move its members rejoin)",
                   (int)g->id.len, (const char *)g->id.ptr,
                   (int)g->generation_id, err);
    }
}

/* --- Loading ------------------------------------------------------------- */

struct load_ctx {
    struct coordinator *co;
    int64_t wall_minus_loop;
    int64_t now;
    size_t records;
    size_t dropped;
};

static void load_group_record(struct load_ctx *lc,
                              const struct group_store_record *r)
{
    struct groups *gs = &lc->co->loading;
    if (r->tombstone) {
        group_load_group_tombstone(gs, r->group);
        return;
    }
    if (r->meta == NULL) {
        lc->dropped++; /* a version this does not read */
        return;
    }
    struct group_load_meta m = *r->meta;
    if (m.state_ms >= 0) {
        m.state_ms -= lc->wall_minus_loop;
    }
    if (group_load_group(gs, r->group, &m, lc->now) != RC_OK) {
        lc->dropped++;
    }
}

static void load_record_cb(void *arg, const struct group_store_record *r)
{
    struct load_ctx *lc = arg;
    struct groups *gs = &lc->co->loading;
    lc->records++;
    if (!r->is_offset) {
        load_group_record(lc, r);
    } else if (r->tombstone) {
        group_load_tombstone(gs, r->group, r->offset.topic,
                             r->offset.partition);
    } else if (group_load_offset(gs, r->group, r->offset.topic,
                                 r->offset.partition, r->offset.offset,
                                 r->offset.leader_epoch, r->offset.metadata,
                                 r->commit_ms - lc->wall_minus_loop) !=
               RC_OK) {
        lc->dropped++;
    }
}

/* Ends the load in progress; with rc RC_OK the partition's groups are
 * served from now on. */
static void load_finish(struct coordinator *co, int rc)
{
    struct coordinator_load *cl = &co->cur;
    int32_t id = cl->id;
    cl->id = -1;
    if (rc != RC_OK) {
        /* Its groups keep answering COORDINATOR_LOAD_IN_PROGRESS; the
         * next tick after a pause starts the partition again. */
        group_unload_all(&co->loading);
        TRACE_ERROR(&co->b->tracer, "partition=%s-%d offsets not loaded: "
                    "%s; retrying in %d ms", GROUP_STORE_TOPIC, id,
                    rc_str(rc), COORDINATOR__LOAD_RETRY_MS);
        co->retry_load_ms = (int64_t)uv_now(co->b->loop) +
                            COORDINATOR__LOAD_RETRY_MS;
        co->want_load[id] = true;
        return;
    }
    uv_update_time(co->b->loop);
    group_load_adopt(&co->groups, &co->loading, (int64_t)uv_now(co->b->loop));
    co->loaded_epoch[id] = cl->epoch;
    TRACE_INFO(&co->b->tracer, "routine event: coordinating the groups of "
               "%s-%d at "
               "epoch %d: %zu records (%zu bytes, offsets below %" PRId64
               ") loaded in %" PRIu64 " ms over %zu slices, %zu dropped",
               GROUP_STORE_TOPIC, id, cl->epoch, cl->records, cl->bytes,
               cl->end, uv_now(co->b->loop) - cl->started_ms, cl->slices,
               cl->dropped);
}

/* Starts loading the first partition that wants it; false when none. */
static bool load_begin(struct coordinator *co)
{
    for (int32_t id = 0; id < co->n_state; id++) {
        if (!co->want_load[id]) {
            continue;
        }
        co->want_load[id] = false;
        struct partition *p = offsets_partition(co, id);
        if (p == NULL || !partition_is_leader(p)) {
            continue; /* the next sync decides */
        }
        group_unload_partition(&co->groups, id);
        group_unload_all(&co->loading);
        co->cur = (struct coordinator_load){
            .id = id, .epoch = p->leader_epoch,
            .offset = log_start_offset(p->log),
            .end = log_end_offset(p->log),
            .started_ms = uv_now(co->b->loop)};
        return true;
    }
    return false;
}

/* One slice of the load per loop turn. */
static void load_cb(uv_idle_t *h)
{
    struct coordinator *co = h->data;
    struct coordinator_load *cl = &co->cur;
    if (cl->id < 0 && !load_begin(co)) {
        uv_idle_stop(h);
        return;
    }
    struct partition *p = offsets_partition(co, cl->id);
    if (p == NULL || !partition_is_leader(p) ||
        p->leader_epoch != cl->epoch) {
        /* Leadership moved on under the load: coordinator_sync() has
         * marked what to load next, or that nothing is. */
        group_unload_all(&co->loading);
        cl->id = -1;
        return;
    }
    struct load_ctx lc = {.co = co, .wall_minus_loop = wall_minus_loop(co),
                          .now = (int64_t)uv_now(co->b->loop)};
    size_t bytes = 0;
    int rv = group_store_load_step(p->log, &cl->offset, cl->end,
                                   COORDINATOR_LOAD_SLICE_BYTES,
                                   load_record_cb, &lc, &bytes);
    cl->records += lc.records;
    cl->dropped += lc.dropped;
    cl->bytes += bytes;
    cl->slices++;
    if (rv != RC_OK) {
        load_finish(co, rv);
        uv_idle_stop(h);
    } else if (cl->offset >= cl->end) {
        load_finish(co, RC_OK);
    }
}

static int grow_state(struct coordinator *co, int32_t n)
{
    if (n <= co->n_state) {
        return RC_OK;
    }
    int32_t *e = realloc(co->loaded_epoch, (size_t)n * sizeof *e);
    if (e == NULL) {
        return RC_NOMEM;
    }
    co->loaded_epoch = e;
    bool *w = realloc(co->want_load, (size_t)n * sizeof *w);
    if (w == NULL) {
        return RC_NOMEM;
    }
    co->want_load = w;
    for (int32_t i = co->n_state; i < n; i++) {
        co->loaded_epoch[i] = -1;
        co->want_load[i] = false;
    }
    co->n_state = n;
    return RC_OK;
}

void coordinator_sync(struct coordinator *co)
{
    int32_t n = coordinator_partitions(co);
    if (grow_state(co, n) != RC_OK) {
        return;
    }
    bool any = false;
    for (int32_t id = 0; id < co->n_state; id++) {
        struct partition *p = id < n ? offsets_partition(co, id) : NULL;
        bool leads = p != NULL && partition_is_leader(p);
        if (leads && co->loaded_epoch[id] != p->leader_epoch) {
            if (co->loaded_epoch[id] >= 0) {
                group_unload_partition(&co->groups, id);
            }
            co->loaded_epoch[id] = -1;
            co->want_load[id] = true;
            any = true;
        } else if (!leads && (co->loaded_epoch[id] >= 0 ||
                              co->want_load[id])) {
            group_unload_partition(&co->groups, id);
            co->loaded_epoch[id] = -1;
            co->want_load[id] = false;
            TRACE_INFO(&co->b->tracer, "routine event: no longer "
                       "coordinating the groups of %s-%d (this broker no "
                       "longer leads it)", GROUP_STORE_TOPIC, id);
        }
    }
    if (any) {
        uv_idle_start(&co->load, load_cb);
    }
}

int16_t coordinator_route(struct coordinator *co, struct slice group)
{
    int32_t n = coordinator_partitions(co);
    if (n == 0) {
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    int32_t id = group_store_partition_for(group.ptr, group.len, n);
    struct partition *p = offsets_partition(co, id);
    if (p == NULL || !partition_is_leader(p)) {
        return KAFKA_ERROR_NOT_COORDINATOR;
    }
    if (id >= co->n_state || co->loaded_epoch[id] != p->leader_epoch) {
        return KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS;
    }
    return KAFKA_ERROR_NONE;
}

void coordinator_ensure_topic(struct coordinator *co)
{
    if (offsets_topic(co) != NULL) {
        return;
    }
    uint64_t now = uv_now(co->b->loop);
    if (co->create_sent_ms != 0 &&
        now - co->create_sent_ms < COORDINATOR__CREATE_RETRY_MS) {
        return;
    }
    co->create_sent_ms = now;
    /* Registered brokers, fenced or not: this broker's image may not yet
     * show a broker that was just unfenced, and counting only unfenced
     * ones made the topic with fewer replicas than the cluster has. The
     * controller refuses while too few are unfenced; we ask again after
     * COORDINATOR__CREATE_RETRY_MS. */
    const struct meta_image *img = membership_image(co->b->membership);
    int32_t registered = (int32_t)img->n_brokers;
    int32_t rf = co->cfg.offsets_replication_factor;
    rf = registered > 0 && registered < rf ? registered : rf;
    char segment_bytes[16];
    snprintf(segment_bytes, sizeof segment_bytes, "%d",
             (int)co->cfg.offsets_segment_bytes);
    const char *configs[] = {
        topic_config_name(TOPIC_CONFIG_CLEANUP_POLICY), "compact",
        topic_config_name(TOPIC_CONFIG_SEGMENT_BYTES), segment_bytes};
    broker_create_topic(co->b, GROUP_STORE_TOPIC, co->cfg.offsets_partitions,
                        rf, configs, 2);
}

/* --- Time ---------------------------------------------------------------- */

static void tick_cb(uv_timer_t *t)
{
    struct coordinator *co = t->data;
    int64_t now = (int64_t)uv_now(co->b->loop);
    struct coordinator_commit *c = co->commits;
    while (c != NULL) {
        struct coordinator_commit *next = c->next;
        if (now >= c->deadline_ms) {
            /* Kafka's offsets.commit.timeout.ms; the waiter frees it. */
            answer_commit(c, KAFKA_ERROR_REQUEST_TIMED_OUT);
        }
        c = next;
    }
    if (co->retry_load_ms != 0 && now >= co->retry_load_ms) {
        co->retry_load_ms = 0;
        uv_idle_start(&co->load, load_cb);
    }
    group_tick(&co->groups, now);
}

static void io_event(struct group_io *io, const char *text)
{
    struct coordinator *co = io->impl;
    TRACE_INFO(&co->b->tracer, "event: %s", text);
}

int coordinator_start(struct coordinator *co, struct broker *b,
                      const struct coordinator_config *cfg,
                      const struct coordinator_answers *answers)
{
    ASSERT(answers->join_done != NULL);
    ASSERT(answers->sync_done != NULL);
    ASSERT(answers->commit_done != NULL);
    memset(co, 0, sizeof *co);
    co->b = b;
    co->cfg = *cfg;
    co->io = (struct group_io){
        .impl = co,
        .partition_for = io_partition_for,
        .join_done = answers->join_done,
        .sync_done = answers->sync_done,
        .persist_offsets = io_persist_offsets,
        .commit_done = answers->commit_done,
        .persist_tombstones = io_persist_tombstones,
        .persist_group = io_persist_group,
        .event = io_event};
    group_init(&co->groups, &co->io, &cfg->group);
    group_init(&co->loading, &co->io, &cfg->group);
    co->cur.id = -1;
    uv_timer_init(b->loop, &co->tick);
    co->tick.data = co;
    uv_idle_init(b->loop, &co->load);
    co->load.data = co;
    uv_timer_start(&co->tick, tick_cb, COORDINATOR__TICK_MS,
                   COORDINATOR__TICK_MS);
    return RC_OK;
}

void coordinator_close(struct coordinator *co)
{
    /* Commits still waiting are answered by group_free(); their waiters
     * fire when the partitions close and only free them. */
    for (struct coordinator_commit *c = co->commits; c != NULL;
         c = c->next) {
        c->answered = true;
        c->linked = false;
        c->token = NULL;
    }
    co->commits = NULL;
    group_free(&co->groups);
    group_free(&co->loading);
    uv_close((uv_handle_t *)&co->tick, NULL);
    uv_close((uv_handle_t *)&co->load, NULL);
    free(co->loaded_epoch);
    free(co->want_load);
    co->loaded_epoch = NULL;
    co->want_load = NULL;
    co->n_state = 0;
}
