/* Hosted partitions following the metadata image (broker/partitions.h). */
#include "broker/partitions.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log_file.h"
#include "common/rc.h"

#define PARTITIONS__METADATA_FILE "partition.metadata"

int partitions_init(struct partitions *ps, uv_loop_t *loop, int32_t broker_id,
                    const char *log_dir, const struct log_config *log_cfg,
                    struct tracer *tracer)
{
    memset(ps, 0, sizeof *ps);
    if (strlen(log_dir) + META_TOPIC_NAME_BYTES_MAX + 64 >=
        sizeof ps->log_dir) {
        return RC_TOO_LARGE;
    }
    strcpy(ps->log_dir, log_dir);
    ps->loop = loop;
    ps->tracer = tracer;
    ps->broker_id = broker_id;
    ps->log_cfg = *log_cfg;
    uv_idle_init(loop, &ps->more);
    ps->more.data = ps;
    return log_file_mkdirs(log_dir);
}

struct partition *partitions_find(const struct partitions *ps,
                                  const char *topic, int32_t id)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->parts[i]->id == id && strcmp(ps->parts[i]->topic, topic) == 0) {
            return ps->parts[i];
        }
    }
    return NULL;
}

void partitions_hw_moved(struct partitions *ps, struct partition *p)
{
    if (ps->hw_moved != NULL) {
        ps->hw_moved(ps->hw_moved_arg, p);
    }
}

static struct partition *find_by_id(struct partitions *ps,
                                    const struct meta_uuid *topic_id,
                                    int32_t id)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->parts[i]->id == id &&
            meta_uuid_eq(&ps->parts[i]->topic_id, topic_id)) {
            return ps->parts[i];
        }
    }
    return NULL;
}

static void part_dir(const struct partitions *ps, const char *topic,
                     int32_t id, char *out, size_t cap)
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

static void remove_dir(const char *dir)
{
    nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* A directory left by another topic of the same name is removed. */
static int claim_dir(struct partitions *ps, const char *dir,
                     const struct meta_uuid *topic_id)
{
    char want[64];
    char id[23];
    meta_uuid_format(topic_id, id);
    int n = snprintf(want, sizeof want, "version: 0\ntopic_id: %s\n", id);
    char have[128];
    size_t len = 0;
    int rv = log_file_read_small(dir, PARTITIONS__METADATA_FILE, have,
                                 sizeof have, &len);
    if (rv == RC_OK && strcmp(have, want) == 0) {
        return RC_OK;
    }
    if (rv == RC_OK || rv == RC_TOO_LARGE) {
        TRACE_WARN(ps->tracer, "dir=%s belongs to an older topic of the "
                   "same name; removing it", dir);
        remove_dir(dir);
    }
    rv = log_file_mkdirs(dir);
    if (rv == RC_OK) {
        rv = log_file_write_atomic(dir, PARTITIONS__METADATA_FILE, want,
                                   (size_t)n);
    }
    return rv;
}

static void topic_log_config(const struct partitions *ps,
                             const struct meta_topic *t,
                             struct log_config *cfg)
{
    *cfg = ps->log_cfg;
    const char *v = meta_topic_config(t, "segment.bytes");
    long long x = v != NULL ? atoll(v) : 0;
    if (x >= (long long)LOG_SEGMENT_BYTES_MIN &&
        x <= (long long)LOG_SEGMENT_BYTES_MAX) {
        cfg->segment_bytes = x;
    }
    v = meta_topic_config(t, "segment.ms");
    x = v != NULL ? atoll(v) : 0;
    if (x > 0) {
        cfg->segment_ms = x;
    }
    v = meta_topic_config(t, "index.interval.bytes");
    x = v != NULL ? atoll(v) : -1;
    if (x >= 0) {
        cfg->index_interval_bytes = x;
    }
}

static struct partition *add(struct partitions *ps, const struct meta_topic *t,
                             int32_t id)
{
    char dir[LOG_PATH_BYTES_MAX];
    part_dir(ps, t->name, id, dir, sizeof dir);
    if (ps->n == ps->cap) {
        size_t cap = ps->cap == 0 ? 16 : ps->cap * 2;
        void *p = realloc(ps->parts, cap * sizeof *ps->parts);
        if (p == NULL) {
            return NULL;
        }
        ps->parts = p;
        ps->cap = cap;
    }
    struct log_config cfg;
    topic_log_config(ps, t, &cfg);
    struct log *l = NULL;
    int rv = claim_dir(ps, dir, &t->id);
    if (rv == RC_OK) {
        rv = log_open(&l, dir, &cfg, ps->loop, ps->tracer);
    }
    if (rv != RC_OK) {
        TRACE_ERROR(ps->tracer, "partition=%s-%d cannot open its log in %s: "
                    "%s", t->name, id, dir, rc_str(rv));
        return NULL;
    }
    struct partition *p = calloc(1, sizeof *p);
    if (p == NULL) {
        log_close(l);
        return NULL;
    }
    ps->parts[ps->n++] = p;
    *p = (struct partition){.owner = ps, .topic_id = t->id, .id = id,
                            .log = l, .leader = META_NO_LEADER,
                            .leader_epoch = -1,
                            .sync_before_ack = ps->sync_before_ack};
    producer_state_init(&p->producers);
    rv = partition_load_producers(p, dir);
    if (rv != RC_OK) {
        /* Unknown producers are accepted with any sequence: no loss, only
         * no de-duplication of their first retries. */
        TRACE_WARN(ps->tracer, "partition=%s-%d producer state not rebuilt: "
                   "%s", t->name, id, rc_str(rv));
    }
    strcpy(p->topic, t->name);
    return p;
}

static void follow_leadership(struct partitions *ps, struct partition *p,
                              const struct meta_partition *mp)
{
    if (mp->leader == p->leader && mp->leader_epoch == p->leader_epoch) {
        return;
    }
    partition_set_leadership(p, ps->broker_id, mp->leader, mp->leader_epoch);
    if (mp->leader == ps->broker_id) {
        int rv = log_assign_epoch(p->log, mp->leader_epoch);
        if (rv != RC_OK) {
            TRACE_ERROR(ps->tracer, "partition=%s-%d epoch cache: %s",
                        p->topic, p->id, rc_str(rv));
        }
        TRACE_INFO(ps->tracer, "became leader of %s-%d at epoch %d",
                   p->topic, p->id, mp->leader_epoch);
    } else if (mp->leader == META_NO_LEADER) {
        TRACE_INFO(ps->tracer, "partition %s-%d is offline at epoch %d "
                   "(no leader)", p->topic, p->id, mp->leader_epoch);
    } else {
        TRACE_INFO(ps->tracer, "became follower of %s-%d at epoch %d "
                   "(leader %d)", p->topic, p->id, mp->leader_epoch,
                   mp->leader);
    }
}

struct removal {
    struct partitions *ps;
    struct partition *p;
    bool delete_files;
    char dir[LOG_PATH_BYTES_MAX];
};

static void closed_cb(void *arg)
{
    struct removal *r = arg;
    if (r->delete_files) {
        remove_dir(r->dir);
    }
    r->ps->closing--;
    producer_state_free(&r->p->producers);
    free(r->p->waiters);
    free(r->p);
    free(r);
}

/* Takes parts[i] out of service: waiters fail, the log closes, and the
 * partition is freed (and its directory removed) once the log is gone. */
static void drop(struct partitions *ps, size_t i, bool delete_files)
{
    struct partition *p = ps->parts[i];
    ps->parts[i] = ps->parts[--ps->n];
    p->closing = true;
    partition_fail_waiters(p, RC_NOT_LEADER);
    struct removal *r = malloc(sizeof *r);
    ASSERT(r != NULL);
    *r = (struct removal){.ps = ps, .p = p, .delete_files = delete_files};
    part_dir(ps, p->topic, p->id, r->dir, sizeof r->dir);
    if (!delete_files &&
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

static bool hosts(const struct partitions *ps, const struct meta_partition *mp)
{
    return meta_replica_set_contains(&mp->replicas, ps->broker_id);
}

static void more_cb(uv_idle_t *handle)
{
    struct partitions *ps = handle->data;
    uv_idle_stop(handle);
    partitions_apply(ps, ps->img);
}

void partitions_apply(struct partitions *ps, const struct meta_image *img)
{
    int opens = 0;
    ps->img = img;
    for (size_t i = 0; i < ps->n; i++) {
        ps->parts[i]->seen = false;
    }
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        for (int32_t id = 0; id < topic->n_partitions; id++) {
            const struct meta_partition *mp = &topic->partitions[id];
            if (!hosts(ps, mp)) {
                continue;
            }
            struct partition *p = find_by_id(ps, &topic->id, id);
            if (p == NULL && opens < PARTITIONS_OPENS_PER_TURN) {
                opens++;
                p = add(ps, topic, id);
            } else if (p == NULL) {
                uv_idle_start(&ps->more, more_cb); /* the rest next turn */
            }
            if (p != NULL) {
                p->seen = true;
                follow_leadership(ps, p, mp);
            }
        }
    }
    for (size_t i = ps->n; i > 0; i--) {
        if (!ps->parts[i - 1]->seen) {
            drop(ps, i - 1, true);
        }
    }
}

void partitions_close(struct partitions *ps)
{
    uv_close((uv_handle_t *)&ps->more, NULL);
    while (ps->n > 0) {
        drop(ps, ps->n - 1, false);
    }
    free(ps->parts);
    ps->parts = NULL;
    ps->cap = 0;
}
