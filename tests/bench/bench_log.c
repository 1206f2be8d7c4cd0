/* Partition log benchmark (`make bench`). Two measurements, each against a
 * plain-file baseline run in the same process, on the same filesystem:
 *
 *   log_append  1 KiB and 100 B records in RecordBatch v2 batches of about
 *               16 KiB, BENCH_WINDOW batches in flight (producers waiting
 *               for acks), each waited for with log_wait_durable(), i.e.
 *               group commit; against write(2) of the same bytes into one
 *               file with fdatasync(2) after every BENCH_WINDOW batches.
 *               Floor (the issue): log/plain >= 0.85 at 1 KiB.
 *   log_read    a 1 GiB log in 256 MiB segments, read back from the page
 *               cache through log_read() (the offset index) in 1 MiB
 *               spans, each pread(2) into one reused buffer as a copying
 *               fetch would, its batch headers walked for the next offset;
 *               against sequential 1 MiB preads of the same segment files.
 *               Floor (the issue): >= 1 GB/s.
 *
 * The machine is shared and noisy, so log and plain rounds alternate and
 * the median of each is reported. MB and GB are 10^6 and 10^9 bytes.
 * BENCH_MB (default 256) sets the bytes appended per append round,
 * BENCH_READ_MB (default 1024) the size of the read log. Files live in a
 * fresh directory under $TMPDIR (or /tmp), removed at the end and on a
 * failed check. One thread and one libuv loop; the log's group commit runs
 * fdatasync on the threadpool. Batches are built here with
 * common/writer.h. */
#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "tests/lib/bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "common/kafka/record_batch.h"
#include "common/file.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"

#define BENCH_BATCH_BYTES 16384u   /* a batch holds as many records as fit */
#define BENCH_WINDOW 16            /* batches in flight; also the pool */
#define BENCH_ROUNDS 5             /* of each of log and plain; median */
#define BENCH_APPEND_MB_DEFAULT 256
#define BENCH_READ_MB_DEFAULT 1024
#define BENCH_MB_MAX 65536         /* bound on the environment overrides */
#define BENCH_READ_SEGMENT_BYTES (256 * 1024 * 1024)
#define BENCH_READ_SPAN_BYTES (1024 * 1024)
#define BENCH_READ_BUF_BYTES (BENCH_READ_SPAN_BYTES + BENCH_BATCH_BYTES)
#define BENCH_SEGMENTS_MAX 4096
#define BENCH_SPACE_MARGIN_BYTES (256ll * 1024 * 1024)
#define BENCH_BUDGET_S 600.0       /* any single wait longer is a hang */

_Static_assert(BENCH_BATCH_BYTES <= BATCH_BYTES_MAX,
               "a bench batch must be a valid batch");
_Static_assert(BENCH_BATCH_BYTES <= BENCH_READ_SPAN_BYTES,
               "a read span must hold at least one whole batch");
_Static_assert(BENCH_READ_SEGMENT_BYTES <= LOG_SEGMENT_BYTES_MAX,
               "read segments must be valid segment.bytes");

/* The temporary directory, removed by log_bench_fail() too. */
static char bench_dir[LOG_PATH_BYTES_MAX];

/* ------------------------------------------------------------------------
 * Helpers: failure, clock, files */

static int remove_entry_cb(const char *path, const struct stat *st,
                           int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

static void remove_tree(const char *path)
{
    if (path[0] != '\0') {
        (void)nftw(path, remove_entry_cb, 16, FTW_DEPTH | FTW_PHYS);
    }
}

static NORETURN void log_bench_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* A failed check means the numbers would be worthless: say why, clean up
 * and abort. */
static void log_bench_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("bench_log: FAILED: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    remove_tree(bench_dir);
    abort();
}

static double now_s(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_MONOTONIC, &ts);
    ASSERT(rv == 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_REALTIME, &ts);
    ASSERT(rv == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void path_join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, LOG_PATH_BYTES_MAX, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= LOG_PATH_BYTES_MAX) {
        log_bench_fail("path too long: %s/%s", dir, name);
    }
}

static void write_all(int fd, const uint8_t *p, size_t len)
{
    if (file_write_all(fd, p, len) != RC_OK) {
        log_bench_fail("write: %s", strerror(errno));
    }
}

/* Reads up to len bytes at pos; fewer only at the end of the file. */
static size_t pread_full(int fd, uint8_t *p, size_t len, int64_t pos)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, p + done, len - done,
                          (off_t)(pos + (int64_t)done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            log_bench_fail("pread: %s", strerror(errno));
        }
        if (n == 0) {
            break;
        }
        done += (size_t)n;
    }
    return done;
}

static int64_t env_mb(const char *name, int64_t dflt)
{
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0') {
        return dflt;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > BENCH_MB_MAX) {
        log_bench_fail("%s=%s: want a whole number of MiB in 1..%d", name, s,
                   BENCH_MB_MAX);
    }
    return (int64_t)v;
}

static double median(const double v[BENCH_ROUNDS])
{
    double s[BENCH_ROUNDS];
    memcpy(s, v, sizeof s);
    for (size_t i = 1; i < BENCH_ROUNDS; i++) {
        for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    }
    return s[BENCH_ROUNDS / 2];
}

/* Runs the loop until the log closed by the caller has freed itself. */
static void loop_drain(uv_loop_t *loop)
{
    (void)uv_run(loop, UV_RUN_DEFAULT);
}

/* ------------------------------------------------------------------------
 * RecordBatch v2 bytes: uncompressed, no keys, no headers, as a
 * non-idempotent producer sends them. */

struct bench_batch {
    uint8_t *bytes;
    size_t len;
    int32_t n_records;
};

static size_t record_body_bytes(int32_t i, size_t value_bytes)
{
    return 1 + writer_varlong_size(i) + writer_varint_size(i) +
           writer_varint_size(-1) + writer_varint_size((int32_t)value_bytes) +
           value_bytes + writer_varint_size(0);
}

static size_t record_bytes(int32_t i, size_t value_bytes)
{
    size_t body = record_body_bytes(i, value_bytes);
    return writer_varint_size((int32_t)body) + body;
}

static int32_t records_per_batch(size_t value_bytes)
{
    size_t len = BATCH_HEADER_BYTES;
    int32_t n = 0;
    while (len + record_bytes(n, value_bytes) <= BENCH_BATCH_BYTES) {
        len += record_bytes(n, value_bytes);
        n++;
    }
    ASSERT(n > 0);
    return n;
}

static void fill_value(uint8_t *v, size_t n, uint32_t seed, int32_t rec)
{
    uint32_t x = (seed * 2654435761u) ^ ((uint32_t)rec * 40503u) ^ 1u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = (uint8_t)(x >> 24);
    }
}

static void write_records(struct writer *w, int32_t n_records,
                          size_t value_bytes, uint32_t seed)
{
    uint8_t *value = malloc(value_bytes);
    ASSERT(value != NULL);
    for (int32_t r = 0; r < n_records; r++) {
        fill_value(value, value_bytes, seed, r);
        writer_varint(w, (int32_t)record_body_bytes(r, value_bytes));
        writer_i8(w, 0);                          /* attributes */
        writer_varlong(w, r);                     /* timestampDelta */
        writer_varint(w, r);                      /* offsetDelta */
        writer_varint(w, -1);                     /* null key */
        writer_varint(w, (int32_t)value_bytes);
        writer_raw(w, value, value_bytes);
        writer_varint(w, 0);                      /* no headers */
    }
    free(value);
}

static struct bench_batch batch_make(size_t value_bytes, int32_t n_records,
                                     int64_t ts, uint32_t seed)
{
    struct writer w;
    writer_init(&w, BATCH_BYTES_MAX);
    writer_i64(&w, 0);                            /* baseOffset */
    size_t len_at = writer_reserve(&w, 4);
    writer_i32(&w, -1);                           /* partitionLeaderEpoch */
    writer_i8(&w, RECORD_BATCH_MAGIC);
    size_t crc_at = writer_reserve(&w, 4);
    writer_i16(&w, 0);                            /* attributes */
    writer_i32(&w, n_records - 1);                /* lastOffsetDelta */
    writer_i64(&w, ts);                           /* baseTimestamp */
    writer_i64(&w, ts + n_records - 1);           /* maxTimestamp */
    writer_i64(&w, -1);                           /* producerId */
    writer_i16(&w, -1);                           /* producerEpoch */
    writer_i32(&w, -1);                           /* baseSequence */
    writer_i32(&w, n_records);
    write_records(&w, n_records, value_bytes, seed);
    ASSERT(w.rc == RC_OK);
    ASSERT(crc_at == RECORD_BATCH_OFF_CRC);
    writer_patch_i32(&w, len_at,
                     (int32_t)(w.len - RECORD_BATCH_LOG_OVERHEAD));
    bytes_put_be32(w.data + crc_at,
                   crc32c(w.data + RECORD_BATCH_OFF_ATTRIBUTES,
                          w.len - RECORD_BATCH_OFF_ATTRIBUTES));
    struct record_batch_header h;
    int rv = record_batch_validate(w.data, w.len, true /* from_client */,
                                   &h);
    if (rv != RC_OK) {
        log_bench_fail("built batch does not validate: %s", rc_str(rv));
    }
    return (struct bench_batch){.bytes = w.data, .len = w.len,
                                .n_records = n_records};
}

/* BENCH_WINDOW prebuilt batches of one record size, reused round robin:
 * nothing is allocated in a timed loop. All have the same length. */
struct bench_pool {
    struct bench_batch b[BENCH_WINDOW];
    size_t value_bytes;
    int32_t n_records;
    size_t batch_bytes;
};

static void pool_init(struct bench_pool *p, size_t value_bytes)
{
    p->value_bytes = value_bytes;
    p->n_records = records_per_batch(value_bytes);
    int64_t ts = wall_ms();
    for (size_t i = 0; i < BENCH_WINDOW; i++) {
        p->b[i] = batch_make(value_bytes, p->n_records, ts,
                             (uint32_t)(i + 1));
        ASSERT(p->b[i].len == p->b[0].len);
    }
    p->batch_bytes = p->b[0].len;
    ASSERT(p->batch_bytes <= BENCH_BATCH_BYTES);
}

static void pool_free(struct bench_pool *p)
{
    for (size_t i = 0; i < BENCH_WINDOW; i++) {
        free(p->b[i].bytes);
        p->b[i].bytes = NULL;
    }
}

/* ------------------------------------------------------------------------
 * Append: the log with group commit */

struct append_run {
    struct log *log;
    struct bench_pool *pool;
    int64_t target;    /* batches to make durable */
    int64_t appended;
    int64_t durable;
    int in_flight;
    int64_t now_ms;
};

static void append_durable_cb(void *arg, int rc);

/* Tops the window up: append, then wait for durability, per batch. */
static void append_refill(struct append_run *run)
{
    while (run->in_flight < BENCH_WINDOW && run->appended < run->target) {
        struct bench_batch *b = &run->pool->b[run->appended % BENCH_WINDOW];
        struct log_append_info info;
        int rv = log_append(run->log, b->bytes, b->len, 0 /* epoch */,
                            run->now_ms, &info);
        if (rv != RC_OK) {
            log_bench_fail("log_append: %s", rc_str(rv));
        }
        rv = log_wait_durable(run->log, info.last_offset + 1,
                              append_durable_cb, run);
        if (rv != RC_OK) {
            log_bench_fail("log_wait_durable: %s", rc_str(rv));
        }
        run->appended++;
        run->in_flight++;
    }
}

static void append_durable_cb(void *arg, int rc)
{
    struct append_run *run = arg;
    if (rc != RC_OK) {
        log_bench_fail("durability callback: %s", rc_str(rc));
    }
    ASSERT(run->in_flight > 0);
    run->durable++;
    run->in_flight--;
    append_refill(run);
}

static struct log *open_log(uv_loop_t *loop, const char *dir,
                            int64_t segment_bytes)
{
    struct log_config cfg;
    log_config_default(&cfg);
    cfg.segment_bytes = segment_bytes;
    struct log *l = NULL;
    int rv = log_open(&l, dir, &cfg, loop, NULL /* silent */);
    if (rv != RC_OK) {
        log_bench_fail("log_open %s: %s", dir, rc_str(rv));
    }
    /* What a leader does on takeover; keeps the epoch checkpoint write
     * out of the timed loop. */
    rv = log_assign_epoch(l, 0);
    if (rv != RC_OK) {
        log_bench_fail("log_assign_epoch: %s", rc_str(rv));
    }
    return l;
}

/* Seconds to append and make durable `target` batches in a fresh log. */
static double append_log_round(uv_loop_t *loop, struct bench_pool *pool,
                               int64_t target)
{
    char dir[LOG_PATH_BYTES_MAX];
    path_join(dir, bench_dir, "append-log");
    struct log *l = open_log(loop, dir, 1073741824 /* Kafka default */);
    struct append_run run = {.log = l, .pool = pool, .target = target,
                             .now_ms = wall_ms()};
    double t0 = now_s();
    append_refill(&run);
    while (run.durable < run.target) {
        (void)uv_run(loop, UV_RUN_ONCE);
        if (now_s() - t0 > BENCH_BUDGET_S) {
            log_bench_fail("append round did not finish in %.0f s",
                       BENCH_BUDGET_S);
        }
    }
    double secs = now_s() - t0;
    int64_t records = target * pool->n_records;
    if (log_durable_end_offset(l) != records ||
        log_end_offset(l) != records) {
        log_bench_fail("log end %" PRId64 " durable %" PRId64 ", want %" PRId64,
                   log_end_offset(l), log_durable_end_offset(l), records);
    }
    log_close(l);
    loop_drain(loop);
    remove_tree(dir);
    return secs;
}

/* ------------------------------------------------------------------------
 * Append: the plain baseline */

/* Seconds to write the same bytes (offsets and epoch rewritten as the log
 * does) with fdatasync after every BENCH_WINDOW batches. */
static double append_plain_round(struct bench_pool *pool, int64_t target)
{
    char path[LOG_PATH_BYTES_MAX];
    path_join(path, bench_dir, "append-plain.log");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_bench_fail("open %s: %s", path, strerror(errno));
    }
    int64_t offset = 0;
    double t0 = now_s();
    for (int64_t i = 0; i < target; i++) {
        struct bench_batch *b = &pool->b[i % BENCH_WINDOW];
        record_batch_set_base_offset(b->bytes, offset);
        record_batch_set_leader_epoch(b->bytes, 0);
        offset += b->n_records;
        write_all(fd, b->bytes, b->len);
        if ((i + 1) % BENCH_WINDOW == 0 || i + 1 == target) {
            if (fdatasync(fd) != 0) {
                log_bench_fail("fdatasync: %s", strerror(errno));
            }
        }
    }
    double secs = now_s() - t0;
    close(fd);
    unlink(path);
    return secs;
}

static void bench_append(uv_loop_t *loop, size_t value_bytes,
                         int64_t total_mb)
{
    struct bench_pool pool;
    pool_init(&pool, value_bytes);
    int64_t target = total_mb * 1024 * 1024 / (int64_t)pool.batch_bytes;
    ASSERT(target > 0);
    double bytes = (double)target * (double)pool.batch_bytes;
    double records = (double)target * (double)pool.n_records;
    double log_s[BENCH_ROUNDS];
    double plain_s[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        if (r % 2 == 0) {
            log_s[r] = append_log_round(loop, &pool, target);
            plain_s[r] = append_plain_round(&pool, target);
        } else {
            plain_s[r] = append_plain_round(&pool, target);
            log_s[r] = append_log_round(loop, &pool, target);
        }
        printf("round=%d bench=log_append record_bytes=%zu log_mb_s=%.1f "
               "plain_mb_s=%.1f\n", r + 1, value_bytes,
               bytes / log_s[r] / 1e6, bytes / plain_s[r] / 1e6);
        fflush(stdout);
    }
    double log_med = median(log_s);
    double plain_med = median(plain_s);
    printf("RESULT bench=log_append record_bytes=%zu batch_bytes=%zu "
           "log_mb_s=%.1f log_records_s=%.0f plain_mb_s=%.1f "
           "plain_records_s=%.0f ratio=%.3f\n",
           value_bytes, pool.batch_bytes, bytes / log_med / 1e6,
           records / log_med, bytes / plain_med / 1e6, records / plain_med,
           plain_med / log_med);
    fflush(stdout);
    pool_free(&pool);
}

/* ------------------------------------------------------------------------
 * Read */

struct read_log {
    struct log *log;
    char dir[LOG_PATH_BYTES_MAX];
    int64_t bytes;      /* appended */
    int64_t end_offset;
    size_t batch_bytes;
    int64_t bases[BENCH_SEGMENTS_MAX];
    size_t n_segs;
    int fds[BENCH_SEGMENTS_MAX]; /* the same files, for the baseline */
};

static void read_durable_cb(void *arg, int rc)
{
    if (rc != RC_OK) {
        log_bench_fail("durability callback: %s", rc_str(rc));
    }
    *(bool *)arg = true;
}

/* Appends 1 KiB-record batches while they fit in target_bytes, then
 * waits for them to be durable so the page cache holds clean pages. */
static void read_build(uv_loop_t *loop, struct read_log *r,
                       int64_t target_bytes)
{
    struct bench_pool pool;
    pool_init(&pool, 1024);
    path_join(r->dir, bench_dir, "read-log");
    r->log = open_log(loop, r->dir, BENCH_READ_SEGMENT_BYTES);
    r->batch_bytes = pool.batch_bytes;
    r->bases[0] = 0;
    r->n_segs = 1;
    int64_t now = wall_ms();
    for (int64_t i = 0;
         r->bytes + (int64_t)pool.batch_bytes <= target_bytes; i++) {
        struct bench_batch *b = &pool.b[i % BENCH_WINDOW];
        struct log_append_info info;
        int rv = log_append(r->log, b->bytes, b->len, 0 /* epoch */, now,
                            &info);
        if (rv != RC_OK) {
            log_bench_fail("log_append: %s", rc_str(rv));
        }
        if (log_segment_count(r->log) > r->n_segs) {
            ASSERT(r->n_segs < BENCH_SEGMENTS_MAX);
            r->bases[r->n_segs++] = info.base_offset;
        }
        r->bytes += info.bytes;
    }
    pool_free(&pool);
    r->end_offset = log_end_offset(r->log);
    bool done = false;
    int rv = log_wait_durable(r->log, r->end_offset, read_durable_cb, &done);
    if (rv != RC_OK) {
        log_bench_fail("log_wait_durable: %s", rc_str(rv));
    }
    double t0 = now_s();
    while (!done) {
        (void)uv_run(loop, UV_RUN_ONCE);
        if (now_s() - t0 > BENCH_BUDGET_S) {
            log_bench_fail("sync of the read log did not finish");
        }
    }
}

/* Opens the segment files for the baseline; their sizes must add up to
 * what was appended. */
static void read_open_files(struct read_log *r)
{
    if (log_segment_count(r->log) != r->n_segs) {
        log_bench_fail("log has %zu segments, saw %zu rolls",
                   log_segment_count(r->log), r->n_segs);
    }
    int64_t total = 0;
    for (size_t i = 0; i < r->n_segs; i++) {
        char name[64];
        char path[LOG_PATH_BYTES_MAX];
        snprintf(name, sizeof name, "%020" PRId64 ".log", r->bases[i]);
        path_join(path, r->dir, name);
        r->fds[i] = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (r->fds[i] < 0 || fstat(r->fds[i], &st) != 0) {
            log_bench_fail("open %s: %s", path, strerror(errno));
        }
        total += (int64_t)st.st_size;
    }
    if (total != r->bytes) {
        log_bench_fail("segment files hold %" PRId64 " bytes, appended %" PRId64,
                   total, r->bytes);
    }
}

/* Walks the batch headers of one span; returns the offset after it. */
static int64_t walk_batches(const uint8_t *buf, size_t len, int64_t offset)
{
    size_t pos = 0;
    while (pos < len) {
        struct record_batch_header h;
        int rv = record_batch_parse(buf + pos, len - pos, &h);
        if (rv != RC_OK) {
            log_bench_fail("batch at offset %" PRId64 ": %s", offset,
                       rc_str(rv));
        }
        if (h.base_offset != offset) {
            log_bench_fail("batch base offset %" PRId64 ", want %" PRId64,
                       h.base_offset, offset);
        }
        if (record_batch_size(&h) > (int64_t)(len - pos)) {
            log_bench_fail("span cuts the batch at offset %" PRId64, offset);
        }
        offset = record_batch_last_offset(&h) + 1;
        pos += (size_t)record_batch_size(&h);
    }
    return offset;
}

/* One pass from offset 0 to the end through log_read(); verified. */
static void read_log_pass(struct read_log *r, uint8_t *buf)
{
    int64_t offset = 0;
    int64_t bytes = 0;
    for (;;) {
        struct log_span span;
        int rv = log_read(r->log, offset, BENCH_READ_SPAN_BYTES, INT64_MAX,
                          &span);
        if (rv != RC_OK) {
            log_bench_fail("log_read at %" PRId64 ": %s", offset, rc_str(rv));
        }
        if (span.seg == NULL) {
            break;
        }
        if (span.first_offset != offset || span.bytes <= 0 ||
            span.bytes > BENCH_READ_BUF_BYTES) {
            log_bench_fail("span at %" PRId64 ": first %" PRId64 " bytes %"
                       PRId64, offset, span.first_offset, span.bytes);
        }
        size_t got = pread_full(span.fd, buf, (size_t)span.bytes,
                                span.position);
        if (got != (size_t)span.bytes) {
            log_bench_fail("short span read at %" PRId64, offset);
        }
        offset = walk_batches(buf, got, offset);
        bytes += span.bytes;
        log_span_release(&span);
        if (bytes > r->bytes) {
            log_bench_fail("read %" PRId64 " bytes, more than the log", bytes);
        }
    }
    if (offset != r->end_offset || bytes != r->bytes) {
        log_bench_fail("read to offset %" PRId64 " (%" PRId64 " bytes), log "
                   "ends at %" PRId64 " (%" PRId64 " bytes)", offset, bytes,
                   r->end_offset, r->bytes);
    }
}

/* The baseline: sequential preads of the segment files, same buffer. */
static void read_plain_pass(struct read_log *r, uint8_t *buf)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < r->n_segs; i++) {
        int64_t pos = 0;
        size_t got;
        while ((got = pread_full(r->fds[i], buf, BENCH_READ_SPAN_BYTES,
                                 pos)) > 0) {
            pos += (int64_t)got;
        }
        bytes += pos;
    }
    if (bytes != r->bytes) {
        log_bench_fail("plain read %" PRId64 " bytes, log holds %" PRId64,
                   bytes, r->bytes);
    }
}

static double time_pass(void (*pass)(struct read_log *, uint8_t *),
                        struct read_log *r, uint8_t *buf)
{
    double t0 = now_s();
    pass(r, buf);
    return now_s() - t0;
}

static void bench_read(uv_loop_t *loop, int64_t total_mb)
{
    struct read_log *r = calloc(1, sizeof *r);
    uint8_t *buf = aligned_alloc(4096, BENCH_READ_BUF_BYTES);
    ASSERT(r != NULL);
    ASSERT(buf != NULL);
    read_build(loop, r, total_mb * 1024 * 1024);
    read_open_files(r);
    read_log_pass(r, buf); /* untimed: warms the page cache */
    double log_s[BENCH_ROUNDS];
    double plain_s[BENCH_ROUNDS];
    for (int i = 0; i < BENCH_ROUNDS; i++) {
        log_s[i] = time_pass(read_log_pass, r, buf);
        plain_s[i] = time_pass(read_plain_pass, r, buf);
    }
    double bytes = (double)r->bytes;
    double log_med = median(log_s);
    double plain_med = median(plain_s);
    printf("info bench=log_read segment_bytes=%d span_bytes=%d "
           "batch_bytes=%zu page_cache=warm rounds=%d\n",
           BENCH_READ_SEGMENT_BYTES, BENCH_READ_SPAN_BYTES, r->batch_bytes,
           BENCH_ROUNDS);
    printf("RESULT bench=log_read log_bytes=%" PRId64 " segments=%zu "
           "log_gb_s=%.2f plain_gb_s=%.2f ratio=%.3f\n", r->bytes,
           r->n_segs, bytes / log_med / 1e9, bytes / plain_med / 1e9,
           plain_med / log_med);
    fflush(stdout);
    for (size_t i = 0; i < r->n_segs; i++) {
        close(r->fds[i]);
    }
    log_close(r->log);
    loop_drain(loop);
    free(buf);
    free(r);
}

/* ------------------------------------------------------------------------
 * Main */

static void make_dir(int64_t need_bytes)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    char templ[LOG_PATH_BYTES_MAX];
    path_join(templ, tmp, "cairn-bench-log.XXXXXX");
    if (mkdtemp(templ) == NULL) {
        log_bench_fail("mkdtemp %s: %s", templ, strerror(errno));
    }
    memcpy(bench_dir, templ, sizeof bench_dir);
    struct statvfs vfs;
    if (statvfs(bench_dir, &vfs) != 0) {
        log_bench_fail("statvfs %s: %s", bench_dir, strerror(errno));
    }
    int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    if (avail < need_bytes) {
        log_bench_fail("%s has %" PRId64 " MiB free, the bench needs %" PRId64,
                   bench_dir, avail >> 20, need_bytes >> 20);
    }
}

int main(void)
{
    int64_t append_mb = env_mb("BENCH_MB", BENCH_APPEND_MB_DEFAULT);
    int64_t read_mb = env_mb("BENCH_READ_MB", BENCH_READ_MB_DEFAULT);
    make_dir((append_mb + read_mb) * 1024 * 1024 + BENCH_SPACE_MARGIN_BYTES);
    printf("info bench=log dir=%s append_mb=%" PRId64 " read_mb=%" PRId64
           " window_batches=%d rounds=%d (median; MB=1e6 B, GB=1e9 B)\n",
           bench_dir, append_mb, read_mb, BENCH_WINDOW, BENCH_ROUNDS);
    fflush(stdout);
    uv_loop_t loop;
    int rv = uv_loop_init(&loop);
    ASSERT(rv == 0);
    bench_append(&loop, 1024, append_mb);
    bench_append(&loop, 100, append_mb);
    bench_read(&loop, read_mb);
    rv = uv_loop_close(&loop);
    if (rv != 0) {
        log_bench_fail("uv_loop_close: %s", uv_strerror(rv));
    }
    remove_tree(bench_dir);
    return 0;
}
