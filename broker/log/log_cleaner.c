/* See log_cleaner.h. */
#include "broker/log/log_cleaner.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/log/log_internal.h"
#include "common/file.h"
#include "common/io.h"
#include "common/kafka/record_filter.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/trace.h"

/* Rewritten bytes are written out in chunks of about this much. */
#define CLEAN__FLUSH_BYTES (1u << 20)

/* The nice value of a pass's thread: compaction is background work, and
 * on a busy machine the loop threads (requests, replication, fsync's
 * callbacks) come first; on an idle one it runs at full speed. */
#define CLEAN__NICE 10

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* --- The offset map: exact keys, bounded ------------------------------- */

struct map_entry {
    uint64_t hash;    /* 0: empty slot */
    uint32_t key_at;  /* in keys */
    uint32_t key_len;
    int64_t offset;   /* of the latest record with the key */
};

struct offset_map {
    struct map_entry *slots;
    size_t cap;       /* a power of two */
    size_t used;
    uint8_t *keys;
    size_t keys_len;
    size_t keys_cap;
};

static uint64_t key_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h == 0 ? 1 : h;
}

/* Half the budget for slots (kept at most 3/4 full), half for keys. */
static int map_init(struct offset_map *m, size_t bytes)
{
    memset(m, 0, sizeof *m);
    size_t cap = 1024;
    while (cap * 2 * sizeof(struct map_entry) <= bytes / 2) {
        cap *= 2;
    }
    m->cap = cap;
    m->keys_cap = bytes / 2 > 4096 ? bytes / 2 : 4096;
    m->slots = calloc(cap, sizeof *m->slots);
    m->keys = malloc(m->keys_cap);
    return m->slots != NULL && m->keys != NULL ? RC_OK : RC_NOMEM;
}

static void map_free(struct offset_map *m)
{
    free(m->slots);
    free(m->keys);
}

static struct map_entry *map_find(const struct offset_map *m, uint64_t h,
                                  const uint8_t *key, size_t n)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct map_entry *e = &m->slots[i];
        if (e->hash == 0 ||
            (e->hash == h && e->key_len == n &&
             (n == 0 || memcmp(m->keys + e->key_at, key, n) == 0))) {
            return e;
        }
    }
}

/* false when the map is full (the key is not recorded). */
static bool map_put(struct offset_map *m, struct slice key, int64_t offset)
{
    uint64_t h = key_hash(key.ptr, key.len);
    struct map_entry *e = map_find(m, h, key.ptr, key.len);
    if (e->hash != 0) {
        if (offset > e->offset) {
            e->offset = offset;
        }
        return true;
    }
    if ((m->used + 1) * 4 > m->cap * 3 || key.len > m->keys_cap - m->keys_len ||
        key.len > UINT32_MAX) {
        return false;
    }
    if (key.len > 0) {
        memcpy(m->keys + m->keys_len, key.ptr, key.len);
    }
    *e = (struct map_entry){.hash = h, .key_at = (uint32_t)m->keys_len,
                            .key_len = (uint32_t)key.len, .offset = offset};
    m->keys_len += key.len;
    m->used++;
    return true;
}

/* The latest offset of key; -1 when the map has none. */
static int64_t map_get(const struct offset_map *m, struct slice key)
{
    uint64_t h = key_hash(key.ptr, key.len);
    const struct map_entry *e = map_find(m, h, key.ptr, key.len);
    return e->hash != 0 ? e->offset : -1;
}

/* --- The job ----------------------------------------------------------- */

struct clean_seg {
    struct log_segment *old;  /* pinned */
    struct log_segment *made; /* the rewrite, scanned back; or NULL */
    char path[LOG_PATH_BYTES_MAX]; /* "<base>.log.cleaned" */
    bool dirty;               /* at or after the checkpoint */
};

struct log_clean_job {
    uv_thread_t thread;
    uv_async_t done;          /* the pass is over: back to the loop */
    struct log *log;
    struct log_clean_config cfg;
    int64_t now_ms;
    uint64_t truncations;     /* at the start: a cut aborts the swap */
    int64_t index_interval;
    size_t index_max;
    size_t n;                 /* segments in the cleanable range */
    size_t mapped;            /* of them, rewritten: [0, mapped) */
    struct clean_seg *segs;
    log_clean_cb cb;
    void *arg;
    struct log_clean_result res;
    int64_t *producer_last; /* sorted: each producer's newest batch's last
                             * offset (its record stays) */
    size_t n_producer_last;
    /* worker-only */
    struct offset_map map;
    struct record_inflate *z;
    struct writer scratch;
    struct writer out;
    uint8_t *batch;
    size_t batch_cap;
    uint8_t *scan_buf;
};

/* --- Planning (loop thread) -------------------------------------------- */

/* The cleanable prefix of the log: *n segments, the first *first_dirty of
 * them already clean; their bytes. */
static void clean_range(const struct log *l, const struct log_clean_config *c,
                        int64_t now_ms, int64_t hw, size_t *n,
                        size_t *first_dirty, int64_t *clean_bytes,
                        int64_t *dirty_bytes, bool *lag_due)
{
    size_t k = 0;
    while (k + 1 < l->n_segs) {
        const struct log_segment *s = l->segs[k];
        int64_t next = l->segs[k + 1]->base_offset;
        bool aged = s->max_timestamp < 0 ||
                    now_ms - s->max_timestamp >= c->min_lag_ms;
        if (next > hw || next > l->durable_end || s->dirty || !aged) {
            break;
        }
        k++;
    }
    *n = k;
    *first_dirty = 0;
    while (*first_dirty < k &&
           l->segs[*first_dirty]->base_offset < l->clean_checkpoint) {
        (*first_dirty)++;
    }
    *clean_bytes = 0;
    *dirty_bytes = 0;
    *lag_due = false;
    for (size_t i = 0; i < k; i++) {
        if (i < *first_dirty) {
            *clean_bytes += l->segs[i]->size;
            continue;
        }
        *dirty_bytes += l->segs[i]->size;
        const struct log_segment *s = l->segs[i];
        if (s->first_timestamp >= 0 &&
            now_ms - s->first_timestamp > c->max_lag_ms) {
            *lag_due = true;
        }
    }
}

bool log_clean_due(const struct log *l, const struct log_clean_config *c,
                   int64_t now_ms, int64_t hw, double *dirty_ratio)
{
    size_t n = 0, first_dirty = 0;
    int64_t clean = 0, dirty = 0;
    bool lag_due = false;
    clean_range(l, c, now_ms, hw, &n, &first_dirty, &clean, &dirty,
                &lag_due);
    double ratio = clean + dirty > 0 ? (double)dirty / (double)(clean + dirty)
                                     : 0.0;
    if (dirty_ratio != NULL) {
        *dirty_ratio = ratio;
    }
    return dirty > 0 && (ratio >= c->min_dirty_ratio || lag_due);
}

int64_t log_clean_checkpoint(const struct log *l)
{
    return l->clean_checkpoint;
}

/* --- The pass (threadpool) --------------------------------------------- */

/* The next batch of scan s: *h, and its bytes *p, CRC checked: in the
 * scan's buffer (read in chunks), or in job->batch for one larger than
 * the buffer. RC_OK, RC_NOT_FOUND at the end, RC_CORRUPT / RC_MALFORMED /
 * RC_IO. */
static int next_batch(struct log_clean_job *job, struct log_scan *s,
                      struct record_batch_header *h, const uint8_t **p)
{
    int64_t pos = 0;
    int rv = log_scan_next(s, false, h, &pos);
    if (rv == RC_OK) {
        rv = log_scan_bytes(s, pos, h, p);
    }
    if (rv == RC_TOO_LARGE) {
        size_t size = (size_t)record_batch_size(h);
        if (size > job->batch_cap) {
            uint8_t *b = realloc(job->batch, size);
            if (b == NULL) {
                return RC_NOMEM;
            }
            job->batch = b;
            job->batch_cap = size;
        }
        rv = io_pread(s->seg->fd, job->batch, size, (off_t)pos) ==
                     (ssize_t)size
                 ? RC_OK
                 : RC_IO;
        *p = job->batch;
    }
    if (rv != RC_OK) {
        return rv == RC_SHORT ? RC_MALFORMED : rv;
    }
    return record_batch_crc_ok(*p, h) ? RC_OK : RC_CORRUPT;
}

struct map_ctx {
    struct offset_map *map;
    bool full;
};

static bool map_record(void *arg, const struct record_view *r)
{
    struct map_ctx *m = arg;
    if (!r->null_key && !m->full && !map_put(m->map, r->key, r->offset)) {
        m->full = true;
    }
    return true;
}

/* Maps the keys of dirty segments; job->mapped: the segments up to the
 * last dirty one whose keys all fit. */
static int build_map(struct log_clean_job *job, size_t first_dirty)
{
    job->mapped = first_dirty;
    for (size_t i = first_dirty; i < job->n; i++) {
        const struct log_segment *seg = job->segs[i].old;
        struct map_ctx m = {&job->map, false};
        struct log_scan s;
        log_scan_init(&s, seg, job->scan_buf, 0, seg->size);
        struct record_batch_header h;
        const uint8_t *p = NULL;
        int rv;
        while ((rv = next_batch(job, &s, &h, &p)) == RC_OK) {
            int32_t kept = 0;
            if ((h.attributes & RECORD_BATCH_ATTR_CONTROL) == 0) {
                rv = record_filter(job->z, &job->scratch, p,
                                   (size_t)record_batch_size(&h), &h,
                                   map_record, &m, false, NULL, &kept);
                if (rv != RC_OK) {
                    return rv;
                }
            }
        }
        if (rv != RC_NOT_FOUND) {
            return rv;
        }
        if (m.full) {
            /* Keys of this segment are only partly in: the ones after it
             * could supersede records the map says are latest. */
            return job->mapped > first_dirty ? RC_OK : RC_FULL;
        }
        job->mapped = i + 1;
    }
    return RC_OK;
}

struct keep_ctx {
    struct log_clean_job *job;
    bool in_clean_part; /* the segment was cleaned by an earlier pass */
    size_t dropped;
    size_t tombstones;
};

static bool keep_record(void *arg, const struct record_view *r)
{
    struct keep_ctx *k = arg;
    if (r->null_key) {
        return true; /* refused on the way in; kept if it is there */
    }
    int64_t latest = map_get(&k->job->map, r->key);
    if (latest > r->offset) {
        k->dropped++;
        return false;
    }
    if (r->null_value && k->in_clean_part &&
        k->job->now_ms - r->timestamp > k->job->cfg.delete_retention_ms) {
        k->tombstones++;
        return false;
    }
    return true;
}

static int flush_out(struct log_clean_job *job, int fd)
{
    int rv = file_write_all(fd, job->out.data, job->out.len);
    writer_reset(&job->out);
    return rv;
}

/* Whether h is an idempotent producer's newest batch: its last record
 * stays whatever supersedes it, so that the producer's sequence survives
 * (Kafka keeps that batch's header). Its older batches go like any. */
static bool producer_newest(const struct log_clean_job *job,
                            const struct record_batch_header *h)
{
    if (h->producer_id < 0 || job->n_producer_last == 0) {
        return false;
    }
    int64_t last = record_batch_last_offset(h);
    return bsearch(&last, job->producer_last, job->n_producer_last,
                   sizeof(int64_t), cmp_i64) != NULL;
}

/* Rewrites segment i into its ".cleaned" file and scans it back. */
static int rewrite(struct log_clean_job *job, size_t i)
{
    struct clean_seg *cs = &job->segs[i];
    const struct log_segment *seg = cs->old;
    int fd = io_open(cs->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return RC_IO;
    }
    struct keep_ctx k = {job, !cs->dirty, 0, 0};
    struct log_scan s;
    log_scan_init(&s, seg, job->scan_buf, 0, seg->size);
    struct record_batch_header h;
    const uint8_t *p = NULL;
    int rv;
    writer_reset(&job->out);
    while ((rv = next_batch(job, &s, &h, &p)) == RC_OK) {
        size_t size = (size_t)record_batch_size(&h);
        if ((h.attributes & RECORD_BATCH_ATTR_CONTROL) != 0) {
            writer_raw(&job->out, p, size);
        } else {
            int32_t kept = 0;
            rv = record_filter(job->z, &job->scratch, p, size, &h,
                               keep_record, &k, producer_newest(job, &h),
                               &job->out, &kept);
            if (rv != RC_OK) {
                break;
            }
        }
        if (job->out.rc != RC_OK) {
            rv = job->out.rc;
            break;
        }
        if (job->out.len >= CLEAN__FLUSH_BYTES) {
            rv = flush_out(job, fd);
            if (rv != RC_OK) {
                break;
            }
        }
    }
    if (rv == RC_NOT_FOUND) {
        rv = flush_out(job, fd);
    }
    if (rv == RC_OK && io_fdatasync(fd) != 0) {
        rv = RC_IO;
    }
    if (rv == RC_OK) {
        rv = log_segment_adopt(&cs->made, seg->dir, seg->base_offset,
                               job->index_max, fd);
    }
    if (rv != RC_OK) {
        io_close(fd);
        io_unlink(cs->path);
        return rv;
    }
    int64_t cut = -1;
    rv = log_segment_recover(cs->made, job->scan_buf, job->index_interval,
                             &cut, NULL, NULL);
    if (rv == RC_OK && cut >= 0) {
        rv = RC_CORRUPT; /* what was just written must read back whole */
    }
    job->res.records_dropped += k.dropped;
    job->res.tombstones_dropped += k.tombstones;
    job->res.bytes_before += seg->size;
    job->res.bytes_after += cs->made->size;
    return rv;
}

static void clean_work(struct log_clean_job *job)
{
    size_t first_dirty = 0;
    while (first_dirty < job->n && !job->segs[first_dirty].dirty) {
        first_dirty++;
    }
    int rv = build_map(job, first_dirty);
    job->res.keys = job->map.used;
    for (size_t i = 0; rv == RC_OK && i < job->mapped; i++) {
        rv = rewrite(job, i);
    }
    job->res.rc = rv;
}

/* --- The swap (loop thread) -------------------------------------------- */

static void discard(struct log_clean_job *job, size_t from)
{
    for (size_t i = from; i < job->n; i++) {
        if (job->segs[i].made != NULL) {
            log_segment_unref(job->segs[i].made);
            job->segs[i].made = NULL;
            io_unlink(job->segs[i].path);
        }
    }
}

static void job_free(struct log_clean_job *job)
{
    for (size_t i = 0; i < job->n; i++) {
        log_segment_unref(job->segs[i].old);
    }
    free(job->segs);
    map_free(&job->map);
    record_inflate_free(job->z);
    writer_free(&job->scratch);
    writer_free(&job->out);
    free(job->batch);
    free(job->scan_buf);
    free(job->producer_last);
    free(job);
}

/* The log's segments [0, mapped) are still the ones the pass read. */
static bool unchanged(const struct log *l, const struct log_clean_job *job)
{
    if (l->truncations != job->truncations || l->n_segs <= job->mapped) {
        return false;
    }
    for (size_t i = 0; i < job->mapped; i++) {
        if (l->segs[i] != job->segs[i].old) {
            return false;
        }
    }
    return true;
}

static int swap_one(struct log *l, struct clean_seg *cs, size_t at)
{
    char target[LOG_PATH_BYTES_MAX];
    int rv = log_segment_path(target, sizeof target, l->dir,
                              cs->old->base_offset);
    if (rv != RC_OK) {
        return rv;
    }
    log_index_unlink(l->dir, cs->old->base_offset);
    if (io_rename(cs->path, target) != 0) {
        TRACE_ERROR(l->tracer, "dir=%s cleaned segment %020" PRId64
                    " not swapped in: %s", l->dir, cs->old->base_offset,
                    strerror(errno));
        return RC_IO;
    }
    cs->made->dir = l->dir;
    l->segs[at] = cs->made;
    cs->made = NULL;
    log_segment_unref(cs->old); /* the log's reference; the job's stays */
    return RC_OK;
}

static int write_checkpoint(struct log *l, int64_t offset)
{
    int rv = log_write_offset_file(l, LOG_CLEANER_CHECKPOINT_FILE, offset);
    if (rv == RC_OK) {
        l->clean_checkpoint = offset;
    }
    return rv;
}

/* The pass's own thread. Lowering one's priority needs no privilege;
 * raising it back would, hence a thread per pass rather than the shared
 * threadpool (a pass runs seconds apart at most). */
static void clean_thread(void *arg)
{
    struct log_clean_job *job = arg;
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CLEAN__NICE);
    clean_work(job);
    uv_async_send(&job->done);
}

static void clean_after(struct log_clean_job *job);

static void clean_closed_cb(uv_handle_t *h)
{
    clean_after(h->data);
}

static void clean_done_cb(uv_async_t *h)
{
    struct log_clean_job *job = h->data;
    uv_thread_join(&job->thread);
    uv_close((uv_handle_t *)h, clean_closed_cb);
}

static void clean_after(struct log_clean_job *job)
{
    struct log *l = job->log;
    l->cleaning = NULL;
    if (l->closing) {
        discard(job, 0);
        job_free(job);
        if (!log_busy(l)) {
            log_close_finish(l);
        }
        return;
    }
    struct log_clean_result res = job->res;
    if (!unchanged(l, job)) {
        res.rc = RC_BUSY; /* cut or shifted meanwhile (the pass may have
                             failed for it too): next time */
    }
    size_t swapped = 0;
    while (res.rc == RC_OK && swapped < job->mapped) {
        res.rc = swap_one(l, &job->segs[swapped], swapped);
        swapped += res.rc == RC_OK;
    }
    discard(job, 0);
    res.segments = swapped;
    if (swapped > 0) {
        l->dir_dirty = true;
        res.to = swapped == job->mapped && job->mapped < l->n_segs
                     ? l->segs[job->mapped]->base_offset
                     : l->segs[swapped - 1]->base_offset;
        int rv = write_checkpoint(l, res.to);
        if (rv != RC_OK && res.rc == RC_OK) {
            res.rc = rv;
        }
    }
    log_clean_cb cb = job->cb;
    void *arg = job->arg;
    job_free(job);
    if (cb != NULL) {
        cb(arg, &res);
    }
}

void log_clean_truncated(struct log *l, int64_t offset)
{
    if (l->clean_checkpoint > offset && write_checkpoint(l, offset) != RC_OK) {
        TRACE_ERROR(l->tracer, "dir=%s cleaner checkpoint not lowered to %"
                    PRId64 " after a truncation", l->dir, offset);
        l->clean_checkpoint = offset; /* in memory at least */
    }
}

static void job_free_cb(uv_handle_t *h)
{
    job_free(h->data);
}

/* A job over l's first n segments, each pinned and given the path of
 * its cleaned copy, with its buffers, key map and inflater. */
static int job_new(struct log *l, const struct log_clean_config *c, size_t n,
                   size_t first_dirty, struct log_clean_job **out)
{
    struct log_clean_job *job = calloc(1, sizeof *job);
    if (job == NULL) {
        return RC_NOMEM;
    }
    job->segs = calloc(n, sizeof *job->segs);
    job->scan_buf = malloc(LOG_SCAN_BUFFER_BYTES);
    writer_init(&job->scratch, RECORD_INFLATED_BYTES_MAX);
    writer_init(&job->out, (size_t)CLEAN__FLUSH_BYTES + BATCH_BYTES_MAX);
    int rv = job->segs == NULL || job->scan_buf == NULL ? RC_NOMEM : RC_OK;
    if (rv == RC_OK) {
        rv = map_init(&job->map, c->map_bytes);
    }
    if (rv == RC_OK) {
        rv = record_inflate_new(&job->z);
    }
    job->n = n; /* job_free unrefs these: pin them first */
    for (size_t i = 0; i < n; i++) {
        struct clean_seg *cs = &job->segs[i];
        cs->old = l->segs[i];
        log_segment_ref(cs->old);
        cs->dirty = i >= first_dirty;
        int w = snprintf(cs->path, sizeof cs->path, "%s/%020" PRId64
                         ".log%s", l->dir, cs->old->base_offset,
                         LOG_CLEANED_SUFFIX);
        if (w < 0 || (size_t)w >= sizeof cs->path) {
            rv = RC_TOO_LARGE;
        }
    }
    if (rv != RC_OK) {
        job_free(job);
        return rv;
    }
    *out = job;
    return RC_OK;
}

int log_clean_start(struct log *l, const struct log_clean_config *c,
                    int64_t now_ms, int64_t hw,
                    const int64_t *producer_last, size_t n_producer_last,
                    log_clean_cb cb, void *arg)
{
    if (l->cleaning != NULL || l->closing) {
        return RC_FULL;
    }
    size_t n = 0, first_dirty = 0;
    int64_t clean = 0, dirty = 0;
    bool lag_due = false;
    clean_range(l, c, now_ms, hw, &n, &first_dirty, &clean, &dirty,
                &lag_due);
    if (dirty == 0) {
        return RC_NOT_FOUND;
    }
    int opened = log_fds_use(l); /* the job reads the files it pins */
    if (opened != RC_OK) {
        return opened;
    }
    struct log_clean_job *job = NULL;
    int rv = job_new(l, c, n, first_dirty, &job);
    if (rv != RC_OK) {
        return rv;
    }
    job->log = l;
    job->cfg = *c;
    job->now_ms = now_ms;
    job->truncations = l->truncations;
    job->index_interval = l->cfg.index_interval_bytes;
    job->index_max = log_index_entries_max(l);
    job->cb = cb;
    job->arg = arg;
    job->res.from = log_start_offset(l);
    if (n_producer_last > 0) {
        job->producer_last = malloc(n_producer_last * sizeof(int64_t));
        if (job->producer_last == NULL) {
            job_free(job);
            return RC_NOMEM;
        }
        memcpy(job->producer_last, producer_last,
               n_producer_last * sizeof(int64_t));
        qsort(job->producer_last, n_producer_last, sizeof(int64_t),
              cmp_i64);
        job->n_producer_last = n_producer_last;
    }
    if (uv_async_init(l->loop, &job->done, clean_done_cb) != 0) {
        job_free(job);
        return RC_NOMEM;
    }
    job->done.data = job;
    if (uv_thread_create(&job->thread, clean_thread, job) != 0) {
        uv_close((uv_handle_t *)&job->done, job_free_cb);
        return RC_NOMEM;
    }
    l->cleaning = job;
    return RC_OK;
}
