/* Log compaction benchmark (`make bench`). Two measurements, each against
 * a baseline measured in the same run:
 *
 *   log_cleaner  in process, on the log library
 *       (broker/log/log_cleaner.h): a log of BENCH_CLEANER_MB (32..4096,
 *       default 256) MiB of keyed records, 20,000 keys each updated about 13
 *       times, 1 KiB values in batches of about 16 KiB, all in closed
 *       32 MiB segments, written and closed once. Each round copies the
 *       log's files into a fresh directory (timed: the baseline, below),
 *       then opens the copy and times one full pass over it, from
 *       log_clean_start() to its callback on the loop (the swap
 *       included), with the broker's default map
 *       (log.cleaner.dedupe.buffer.size, 128 MiB), checked: every segment
 *       rewritten, every key kept once, every other record gone. The
 *       baseline is the copy: a plain read of each segment file in 1 MiB
 *       chunks, a write of the copy and an fdatasync per file, as the
 *       cleaner reads, writes and syncs a segment (the small files, index
 *       and checkpoints, follow untimed). Both in MB/s of dirty log (the
 *       segment files' bytes), warm page cache, CLEAN_ROUNDS rounds,
 *       medians; ratio = cleaner / plain. Floor (the issue): ratio >= 0.5.
 *   produce_while_cleaning  real processes: one controller and one broker
 *       of this build (tests/lib/cluster.h), log.cleaner.backoff.ms=100.
 *       `cairn bench produce` (1 KiB records, acks=1,
 *       BENCH_CLEANER_PRODUCE_MB, default 2048, MB of values) into a fresh
 *       one-partition topic, while feeder threads here rewrite 51,200 keys
 *       (1 KiB values, about 53 MB live) at BENCH_CLEANER_FEED_MB_S
 *       (default 2) MB/s into a partition of another topic on the same
 *       broker: Produce v7 of 132 KiB batches, acks=1, over
 *       PWC_FEED_CONNS connections. With cleaning that topic is compacted
 *       (cleanup.policy=compact, segment.bytes=1 MiB,
 *       min.cleanable.dirty.ratio=0): a segment closes about every 0.5 s
 *       and each pass rewrites the whole live log, so passes run back to
 *       back. Without, the same feed goes to a twin topic with
 *       cleanup.policy=delete: the cleaner is the only difference. Both
 *       topics get every key once first; the cleaner's first pass over
 *       that is waited for, then one untimed produce run warms up. Each
 *       run starts the feed PWC_WARMUP_MS before the produce (and, with
 *       cleaning, until a pass has ended); after a run with cleaning the
 *       feed stops and the cleaner is waited for until its checkpoint is
 *       the active segment, so that none runs during a run without. The
 *       broker's "event: ... compacted" lines tell how many passes ended,
 *       and how many bytes of log they rewrote, during each produce run: a
 *       run with cleaning and no pass, or one without and a pass, fails
 *       the bench. Runs alternate, PWC_ROUNDS of each, medians; ratio =
 *       with / without. Floor (the issue): >= 0.8. Also printed: passes
 *       (that ended during the runs with cleaning, in all; passes_min in
 *       the run with fewest), cleaned_mb_s (the log bytes those passes
 *       rewrote per second of those runs), p99 produce latencies, and
 *       the feed rate each condition got.
 *
 * The machine is shared and noisy: hence medians of alternating rounds.
 * MB is 10^6 bytes, MiB 2^20. Each run's line is printed as it ends. A
 * failed check prints why, stops every process (cluster_destroy), removes
 * the temporary files and aborts; a floor not met is reported (met=no),
 * not fatal. CAIRN_KEEP_TEST_DIR=1 keeps the node logs. The main thread
 * runs everything but the feed; the libuv loop of the in-process part runs
 * the pass on its threadpool. Each feeder thread owns one blocking
 * connection and reads only the prebuilt batches. */
#include "tests/lib/bench_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "broker/log/log_cleaner.h"
#include "common/assert.h"
#include "common/file.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/record_inflate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/kafka_wire.h"
#include "tests/lib/tmpdir.h"

/* --- log_cleaner --- */
#define CLEAN_MB_DEFAULT 256
#define CLEAN_MB_MIN 32                 /* every key needs a record */
#define CLEAN_MB_MAX 4096               /* bound on BENCH_CLEANER_MB */
#define CLEAN_SEGMENT_BYTES (32 * 1024 * 1024)
#define CLEAN_KEYS 20000
#define CLEAN_VALUE_BYTES 1024
#define CLEAN_BATCH_RECORDS 15          /* about 16 KiB: batch.size */
#define CLEAN_ROUNDS 5
#define CLEAN_MAP_BYTES (128u * 1024 * 1024) /* dedupe.buffer.size */
#define CLEAN_COPY_BYTES (1024 * 1024)  /* the cleaner writes 1 MiB chunks */
#define CLEAN_FILES_MAX 4096            /* in the log directory */
#define CLEAN_FLOOR 0.5
#define CLEAN_WAIT_MS 300000.0          /* a pass or sync longer is a hang */

/* Keys are taken with this stride modulo the key count: every run of
 * `keys` consecutive records holds each key once. */
#define KEY_STRIDE 7919                 /* prime, no factor of the counts */
#define KEY_BYTES 16

/* --- produce_while_cleaning --- */
#define PWC_ROUNDS 5                    /* of each; median */
#define PWC_RECORD_BYTES 1024
#define PWC_PRODUCE_MB_DEFAULT 2048
#define PWC_PRODUCE_MB_MAX 65536
#define PWC_FEED_MB_S_DEFAULT 2
#define PWC_FEED_MB_S_MAX 1000
#define PWC_FEED_BATCH_RECORDS 128      /* about 132 KiB */
#define PWC_FEED_POOL 400               /* batches: each key once */
#define PWC_FEED_KEYS (PWC_FEED_BATCH_RECORDS * PWC_FEED_POOL)
#define PWC_FEED_SEGMENT "1048576"
#define PWC_FEED_CONNS 4                /* requests in flight */
#define PWC_FEED_PACE_MS 10             /* longest nap of the feeder */
#define PWC_WARMUP_MS 1000              /* feed before a measured run */
#define PWC_PASS_BUDGET_MS 30000        /* until the first pass of a run */
#define PWC_DRAIN_BUDGET_MS 120000      /* until the cleaner catches up */
#define PWC_TOPIC_BUDGET_MS 10000       /* until a new topic is hosted */
#define PWC_POLL_MS 50
#define PWC_FLOOR 0.8
#define PWC_COMPACT_TOPIC "feed-compact"
#define PWC_DELETE_TOPIC "feed-delete"
#define PWC_PLAIN_TOPIC "bench-plain"
#define PWC_BROKER_CONFIG "log.cleaner.backoff.ms=100\n"
#define PWC_TEXT_BYTES 4200             /* paths, lines, messages */

_Static_assert(CLEAN_ROUNDS % 2 == 1, "a median of an odd count");
_Static_assert(PWC_ROUNDS % 2 == 1, "a median of an odd count");
_Static_assert(PWC_FEED_POOL % PWC_FEED_CONNS == 0,
               "a prefill sends every batch of the pool once");
_Static_assert(CLEAN_KEYS % KEY_STRIDE != 0 &&
               PWC_FEED_KEYS % KEY_STRIDE != 0,
               "the stride must visit every key");
_Static_assert((CLEAN_VALUE_BYTES + 32) * CLEAN_BATCH_RECORDS + 61 <=
               CLEAN_SEGMENT_BYTES, "a batch must fit in a segment");
_Static_assert((PWC_RECORD_BYTES + 32) * PWC_FEED_BATCH_RECORDS + 61 <=
               1048576 / 4, "feed segments must hold several batches");

/* ------------------------------------------------------------------------
 * Shared helpers */

static int64_t wall_ms(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_REALTIME, &ts);
    ASSERT(rv == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int32_t key_of(int64_t record, int32_t keys)
{
    return (int32_t)((record * KEY_STRIDE) % keys);
}

static void fill_value(uint8_t *v, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u ^ 0x9e3779b9u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = (uint8_t)(x >> 24);
    }
}

/* n records from record number `first` on, keyed "key-NNNNNN" by
 * key_of(), value_bytes of noise each, as a non-idempotent producer sends
 * them (uncompressed, CreateTime ts). */
static struct built_batch keyed_batch(int64_t first, int32_t n, int32_t keys,
                                      size_t value_bytes, int64_t ts)
{
    uint8_t *value = malloc(value_bytes);
    ASSERT(value != NULL);
    struct writer w;
    writer_init(&w, BATCH_BYTES_MAX);
    for (int32_t i = 0; i < n; i++) {
        char key[KEY_BYTES];
        int kl = snprintf(key, sizeof key, "key-%06d",
                          key_of(first + i, keys));
        ASSERT(kl > 0 && (size_t)kl < sizeof key);
        fill_value(value, value_bytes, (uint32_t)(first + i));
        struct batch_record r = {.offset_delta = i, .key = key,
                                 .key_len = kl, .value = value,
                                 .value_len = (int32_t)value_bytes};
        batch_write_record(&w, &r);
    }
    ASSERT(w.rc == RC_OK);
    struct batch_spec spec = {.codec = RECORD_CODEC_NONE, .record_count = n,
                              .base_timestamp = ts, .max_timestamp = ts,
                              .producer_id = -1, .base_sequence = -1};
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    writer_free(&w);
    free(value);
    return b;
}

/* ------------------------------------------------------------------------
 * log_cleaner: helpers */

/* The temporary directory of the in-process part; removed on failure. */
static char clean_dir[PWC_TEXT_BYTES];

static NORETURN void clean_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void clean_fail(const char *fmt, ...)
{
    char msg[PWC_TEXT_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (clean_dir[0] != '\0') {
        tmpdir_remove(clean_dir);
    }
    bench_fail("%s", msg);
}

static void path_join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, LOG_PATH_BYTES_MAX, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= LOG_PATH_BYTES_MAX) {
        clean_fail("path too long: %s/%s", dir, name);
    }
}

/* Runs the loop until *done, within CLEAN_WAIT_MS. */
static void run_until(uv_loop_t *loop, const bool *done, const char *what)
{
    double deadline = bench_clock_ms() + CLEAN_WAIT_MS;
    while (!*done) {
        (void)uv_run(loop, UV_RUN_ONCE);
        if (bench_clock_ms() > deadline) {
            clean_fail("%s did not end in %.0f s", what, CLEAN_WAIT_MS / 1e3);
        }
    }
}

static void durable_cb(void *arg, int rc)
{
    if (rc != RC_OK) {
        clean_fail("durability callback: %s", rc_str(rc));
    }
    *(bool *)arg = true;
}

static struct log *open_log(uv_loop_t *loop, const char *dir)
{
    struct log_config cfg;
    log_config_default(&cfg);
    cfg.segment_bytes = CLEAN_SEGMENT_BYTES;
    struct log *l = NULL;
    int rv = log_open(&l, dir, &cfg, loop, NULL /* silent */);
    if (rv != RC_OK) {
        clean_fail("log_open %s: %s", dir, rc_str(rv));
    }
    return l;
}

/* Closes l and runs the loop until its memory is freed. */
static void close_log(uv_loop_t *loop, struct log *l)
{
    log_close(l);
    (void)uv_run(loop, UV_RUN_DEFAULT);
}

/* ------------------------------------------------------------------------
 * log_cleaner: the dirty log, written once */

struct clean_src {
    char dir[LOG_PATH_BYTES_MAX];
    int64_t bytes;      /* all in closed segments, all dirty */
    int64_t records;
    int64_t end_offset;
    size_t segments;    /* closed ones */
};

static void clean_build(uv_loop_t *loop, struct clean_src *s, int64_t target)
{
    path_join(s->dir, clean_dir, "src");
    struct log *l = open_log(loop, s->dir);
    int rv = log_assign_epoch(l, 0);
    if (rv != RC_OK) {
        clean_fail("log_assign_epoch: %s", rc_str(rv));
    }
    int64_t now = wall_ms();
    while (s->bytes < target) {
        struct built_batch b = keyed_batch(s->records, CLEAN_BATCH_RECORDS,
                                           CLEAN_KEYS, CLEAN_VALUE_BYTES,
                                           now);
        struct log_append_info info;
        rv = log_append(l, b.bytes, b.len, 0 /* epoch */, now, &info);
        if (rv != RC_OK) {
            clean_fail("log_append: %s", rc_str(rv));
        }
        s->bytes += info.bytes;
        s->records += CLEAN_BATCH_RECORDS;
        built_batch_free(&b);
    }
    if (s->records < CLEAN_KEYS) {
        clean_fail("%" PRId64 " records cannot update %d keys", s->records,
                   CLEAN_KEYS);
    }
    rv = log_roll(l); /* every record in a closed segment */
    if (rv != RC_OK) {
        clean_fail("log_roll: %s", rc_str(rv));
    }
    s->end_offset = log_end_offset(l);
    s->segments = log_segment_count(l) - 1;
    bool done = false;
    rv = log_wait_durable(l, s->end_offset, durable_cb, &done);
    if (rv != RC_OK) {
        clean_fail("log_wait_durable: %s", rc_str(rv));
    }
    run_until(loop, &done, "the sync of the built log");
    close_log(loop, l);
}

/* ------------------------------------------------------------------------
 * log_cleaner: the plain baseline, which is also each round's copy */

static void write_all(int fd, const uint8_t *p, size_t len)
{
    if (file_write_all(fd, p, len) != RC_OK) {
        clean_fail("write: %s", strerror(errno));
    }
}

/* Copies from into to through buf, fdatasync'd when sync; its size. */
static int64_t copy_file(const char *from, const char *to, uint8_t *buf,
                         bool sync)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0) {
        clean_fail("copy %s to %s: %s", from, to, strerror(errno));
    }
    int64_t bytes = 0;
    for (;;) {
        ssize_t n = read(in, buf, CLEAN_COPY_BYTES);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            clean_fail("read %s: %s", from, strerror(errno));
        }
        if (n == 0) {
            break;
        }
        write_all(out, buf, (size_t)n);
        bytes += n;
    }
    if (sync && fdatasync(out) != 0) {
        clean_fail("fdatasync %s: %s", to, strerror(errno));
    }
    close(in);
    close(out);
    return bytes;
}

static bool is_segment_file(const char *name)
{
    size_t len = strlen(name);
    return len > 4 && strcmp(name + len - 4, ".log") == 0;
}

/* The regular files of dir, segment files first; their count. */
static size_t list_files(const char *dir, char (*names)[256], size_t cap)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        clean_fail("opendir %s: %s", dir, strerror(errno));
    }
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            bool file = e->d_type == DT_REG ||
                        (e->d_type == DT_UNKNOWN &&
                         strcmp(e->d_name, ".") != 0 &&
                         strcmp(e->d_name, "..") != 0); /* no subdirs */
            if (!file || is_segment_file(e->d_name) != (pass == 0)) {
                continue;
            }
            if (n == cap || strlen(e->d_name) >= sizeof names[0]) {
                clean_fail("%s: too many files or a long name", dir);
            }
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
        }
    }
    closedir(d);
    return n;
}

/* Copies src into the fresh directory to; returns the seconds the segment
 * files took (read, write, fdatasync each). The small files (indexes,
 * checkpoints, the clean-shutdown marker) follow, untimed, so that the
 * copy opens as the original would. */
static double plain_round(const struct clean_src *s, const char *to,
                          uint8_t *buf)
{
    static char names[CLEAN_FILES_MAX][256];
    size_t n = list_files(s->dir, names, CLEAN_FILES_MAX);
    if (mkdir(to, 0755) != 0) {
        clean_fail("mkdir %s: %s", to, strerror(errno));
    }
    char from_path[LOG_PATH_BYTES_MAX];
    char to_path[LOG_PATH_BYTES_MAX];
    int64_t bytes = 0;
    double t0 = bench_clock_ms();
    size_t i = 0;
    for (; i < n && is_segment_file(names[i]); i++) {
        path_join(from_path, s->dir, names[i]);
        path_join(to_path, to, names[i]);
        bytes += copy_file(from_path, to_path, buf, true /* sync */);
    }
    double secs = (bench_clock_ms() - t0) / 1e3;
    for (; i < n; i++) {
        path_join(from_path, s->dir, names[i]);
        path_join(to_path, to, names[i]);
        (void)copy_file(from_path, to_path, buf, false /* sync */);
    }
    if (bytes != s->bytes) {
        clean_fail("segment files hold %" PRId64 " bytes, appended %" PRId64,
                   bytes, s->bytes);
    }
    return secs;
}

/* ------------------------------------------------------------------------
 * log_cleaner: one pass */

struct clean_pass {
    bool done;
    struct log_clean_result res;
};

static void clean_cb(void *arg, const struct log_clean_result *r)
{
    struct clean_pass *p = arg;
    p->res = *r;
    p->done = true;
}

static struct log_clean_config clean_config(void)
{
    return (struct log_clean_config){.min_dirty_ratio = 0.5,
                                     .delete_retention_ms = 86400000,
                                     .min_lag_ms = 0,
                                     .max_lag_ms = INT64_MAX,
                                     .map_bytes = CLEAN_MAP_BYTES};
}

/* What one full pass over the whole dirty log must have done. */
static void clean_check(const struct clean_src *s,
                        const struct log_clean_result *r)
{
    if (r->rc != RC_OK) {
        clean_fail("the pass failed: %s", rc_str(r->rc));
    }
    if (r->segments != s->segments || r->to != s->end_offset ||
        r->bytes_before != s->bytes) {
        clean_fail("the pass rewrote %zu segments (%" PRId64 " bytes) up to "
                   "%" PRId64 "; the log has %zu (%" PRId64 ") up to %"
                   PRId64, r->segments, r->bytes_before, r->to, s->segments,
                   s->bytes, s->end_offset);
    }
    if (r->keys != CLEAN_KEYS ||
        (int64_t)r->records_dropped != s->records - CLEAN_KEYS ||
        r->tombstones_dropped != 0 || r->bytes_after >= r->bytes_before) {
        clean_fail("the pass kept %zu keys and dropped %zu records (%"
                   PRId64 " -> %" PRId64 " bytes); want %d keys, %" PRId64
                   " dropped", r->keys, r->records_dropped,
                   r->bytes_before, r->bytes_after, CLEAN_KEYS,
                   s->records - CLEAN_KEYS);
    }
}

/* Opens the copy in dir and times one pass over it; *res what it did. */
static double clean_round(uv_loop_t *loop, const struct clean_src *s,
                          const char *dir, struct log_clean_result *res)
{
    struct log *l = open_log(loop, dir);
    struct log_clean_config cfg = clean_config();
    int64_t now = wall_ms();
    int64_t hw = log_end_offset(l);
    double ratio = 0;
    if (!log_clean_due(l, &cfg, now, hw, &ratio) || ratio < 1.0) {
        clean_fail("the copied log is not all dirty (ratio %.2f)", ratio);
    }
    struct clean_pass pass = {0};
    double t0 = bench_clock_ms();
    int rv = log_clean_start(l, &cfg, now, hw, NULL, 0, clean_cb, &pass);
    if (rv != RC_OK) {
        clean_fail("log_clean_start: %s", rc_str(rv));
    }
    run_until(loop, &pass.done, "the cleaning pass");
    double secs = (bench_clock_ms() - t0) / 1e3;
    clean_check(s, &pass.res);
    if (log_start_offset(l) != 0 || log_end_offset(l) != s->end_offset) {
        clean_fail("after the pass the log spans [%" PRId64 ", %" PRId64
                   "), want [0, %" PRId64 ")", log_start_offset(l),
                   log_end_offset(l), s->end_offset);
    }
    *res = pass.res;
    close_log(loop, l);
    return secs;
}

static void bench_log_cleaner(long mib)
{
    tmpdir_make(clean_dir, sizeof clean_dir);
    uv_loop_t loop;
    int rv = uv_loop_init(&loop);
    ASSERT(rv == 0);
    static struct clean_src s;
    double t0 = bench_clock_ms();
    clean_build(&loop, &s, (int64_t)mib * 1024 * 1024);
    printf("info bench=log_cleaner dir=%s log_bytes=%" PRId64 " segments=%zu"
           " records=%" PRId64 " keys=%d build_s=%.1f\n", clean_dir, s.bytes,
           s.segments, s.records, CLEAN_KEYS, (bench_clock_ms() - t0) / 1e3);
    fflush(stdout);
    uint8_t *buf = malloc(CLEAN_COPY_BYTES);
    ASSERT(buf != NULL);
    double clean_s[CLEAN_ROUNDS];
    double plain_s[CLEAN_ROUNDS];
    struct log_clean_result res = {0};
    double mb = (double)s.bytes / 1e6;
    for (int r = 0; r < CLEAN_ROUNDS; r++) {
        char name[32];
        char dir[LOG_PATH_BYTES_MAX];
        snprintf(name, sizeof name, "round-%d", r + 1);
        path_join(dir, clean_dir, name);
        plain_s[r] = plain_round(&s, dir, buf);
        clean_s[r] = clean_round(&loop, &s, dir, &res);
        printf("round=%d bench=log_cleaner cleaner_mb_s=%.1f "
               "plain_mb_s=%.1f\n", r + 1, mb / clean_s[r], mb / plain_s[r]);
        fflush(stdout);
        tmpdir_remove(dir);
    }
    double c_med = bench_median(clean_s, CLEAN_ROUNDS);
    double p_med = bench_median(plain_s, CLEAN_ROUNDS);
    double ratio = p_med / c_med;
    printf("RESULT bench=log_cleaner log_bytes=%" PRId64 " segments=%zu "
           "records=%" PRId64 " keys=%d record_bytes=%d kept_bytes=%" PRId64
           " rounds=%d cleaner_mb_s=%.1f plain_mb_s=%.1f ratio=%.3f "
           "floor=%.2f met=%s\n", s.bytes, s.segments, s.records,
           CLEAN_KEYS, CLEAN_VALUE_BYTES, res.bytes_after, CLEAN_ROUNDS,
           mb / c_med, mb / p_med, ratio, CLEAN_FLOOR,
           ratio >= CLEAN_FLOOR ? "yes" : "no");
    fflush(stdout);
    free(buf);
    rv = uv_loop_close(&loop);
    if (rv != 0) {
        clean_fail("uv_loop_close: %s", uv_strerror(rv));
    }
    tmpdir_remove(clean_dir);
    clean_dir[0] = '\0';
}

/* ------------------------------------------------------------------------
 * produce_while_cleaning: the feeder threads */

struct feeder;

/* One connection of the feeder, on a thread of its own: of the pool it
 * sends batches index, index + PWC_FEED_CONNS, ... round robin. */
struct feed_conn {
    pthread_t thread;
    struct feeder *f;
    int index;
    /* the thread's own until the join */
    int64_t bytes;
    int64_t batches;
    double seconds;
    char why[PWC_TEXT_BYTES];       /* "" unless it failed */
};

struct feeder {
    int port;
    const char *topic;
    double conn_bytes_s;            /* the pace of each connection */
    const struct built_batch *pool; /* PWC_FEED_POOL, read only */
    int64_t batches_max;            /* of each; then it ends; 0: never */
    atomic_bool stop;
    struct feed_conn conns[PWC_FEED_CONNS];
};

/* Sends its batches, one request in flight, never ahead of its pace,
 * until told to stop, batches_max or a failed request. Each request is
 * bounded (KAFKA_WIRE_TIMEOUT_MS), so a join after stop is too. */
static void *feed_conn_main(void *arg)
{
    struct feed_conn *c = arg;
    const struct feeder *f = c->f;
    struct kafka_client kc;
    if (!kafka_wire_connect(&kc, f->port)) {
        snprintf(c->why, sizeof c->why, "connect: %s", kc.error);
        kafka_client_close(&kc);
        return NULL;
    }
    double t0 = bench_clock_ms();
    while (!atomic_load(&c->f->stop) &&
           (f->batches_max == 0 || c->batches < f->batches_max)) {
        double ahead_ms = t0 + (double)c->bytes / f->conn_bytes_s * 1e3 -
                          bench_clock_ms();
        if (ahead_ms > 0) {
            bench_pause_ms(ahead_ms < PWC_FEED_PACE_MS ? (long)ahead_ms + 1
                                                       : PWC_FEED_PACE_MS);
            continue;
        }
        int64_t i = (c->batches * PWC_FEED_CONNS + c->index) % PWC_FEED_POOL;
        const struct built_batch *b = &f->pool[i];
        int16_t err = kafka_wire_produce(&kc, f->topic, 0, b->bytes, b->len,
                                         1 /* acks */);
        if (err != 0) {
            snprintf(c->why, sizeof c->why, "produce to %s: Kafka error %d "
                     "%s", f->topic, err, kc.error);
            break;
        }
        c->bytes += (int64_t)b->len;
        c->batches++;
    }
    c->seconds = (bench_clock_ms() - t0) / 1e3;
    kafka_client_close(&kc);
    return NULL;
}

/* Starts PWC_FEED_CONNS connections feeding topic at bytes_s in all;
 * each ends after batches_max batches (0: when stopped). */
static void feeder_start(struct feeder *f, int port, const char *topic,
                         double bytes_s, const struct built_batch *pool,
                         int64_t batches_max)
{
    *f = (struct feeder){.port = port, .topic = topic,
                         .conn_bytes_s = bytes_s / PWC_FEED_CONNS,
                         .pool = pool, .batches_max = batches_max};
    atomic_init(&f->stop, false);
    for (int i = 0; i < PWC_FEED_CONNS; i++) {
        f->conns[i] = (struct feed_conn){.f = f, .index = i};
        int rv = pthread_create(&f->conns[i].thread, NULL, feed_conn_main,
                                &f->conns[i]);
        if (rv != 0) {
            bench_fail("pthread_create: %s", strerror(rv));
        }
    }
}

/* Joins every connection (stopping them first when stop); the MB/s they
 * sent. A failed feed fails the bench. */
static double feeder_join(struct feeder *f, bool stop)
{
    if (stop) {
        atomic_store(&f->stop, true);
    }
    int64_t bytes = 0;
    double seconds = 0;
    for (int i = 0; i < PWC_FEED_CONNS; i++) {
        int rv = pthread_join(f->conns[i].thread, NULL);
        ASSERT(rv == 0);
    }
    for (int i = 0; i < PWC_FEED_CONNS; i++) {
        const struct feed_conn *c = &f->conns[i];
        if (c->why[0] != '\0') {
            bench_fail("feeder to %s: %s", f->topic, c->why);
        }
        bytes += c->bytes;
        seconds = c->seconds > seconds ? c->seconds : seconds;
    }
    return seconds > 0 ? (double)bytes / seconds / 1e6 : 0;
}

/* ------------------------------------------------------------------------
 * produce_while_cleaning: what the broker says */

struct pass_stats {
    int64_t passes;       /* "compacted" events so far */
    int64_t bytes_before; /* summed over them */
    int64_t last_to;      /* the latest one's checkpoint; -1: none */
};

/* The broker's compaction events for partition 0 of topic. */
static void read_passes(const struct cluster_node *n, const char *topic,
                        struct pass_stats *st)
{
    char needle[128];
    snprintf(needle, sizeof needle, "event: %s-0 compacted ", topic);
    *st = (struct pass_stats){.last_to = -1};
    FILE *f = fopen(n->log, "r");
    if (f == NULL) {
        bench_fail("open %s: %s", n->log, strerror(errno));
    }
    char line[PWC_TEXT_BYTES];
    while (fgets(line, sizeof line, f) != NULL) {
        const char *p = strstr(line, needle);
        if (p == NULL) {
            continue;
        }
        long long to = 0, before = 0, after = 0;
        const char *q = strstr(p, " below offset ");
        if (q == NULL || sscanf(q, " below offset %lld, %lld -> %lld", &to,
                                &before, &after) != 3) {
            fclose(f);
            bench_fail("cannot read the compaction event: %s", line);
        }
        st->passes++;
        st->bytes_before += before;
        st->last_to = to;
    }
    fclose(f);
}

/* Base offset of the active segment of the partition in dir: the largest
 * "<20 digits>.log". */
static int64_t active_base(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        bench_fail("opendir %s: %s", dir, strerror(errno));
    }
    int64_t base = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strlen(e->d_name) != 24 || strcmp(e->d_name + 20, ".log") != 0) {
            continue;
        }
        int64_t b = strtoll(e->d_name, NULL, 10);
        base = b > base ? b : base;
    }
    closedir(d);
    return base;
}

/* ------------------------------------------------------------------------
 * produce_while_cleaning: the runs */

struct pwc {
    struct cluster *c;
    struct cluster_node *broker;
    char boot[64];
    char compact_dir[PWC_TEXT_BYTES]; /* the compacted partition's files */
    char records[32];
    int n_runs;                       /* names the fresh plain topics */
    double feed_bytes_s;
    struct built_batch pool[PWC_FEED_POOL];
};

struct pwc_run {
    double mb_s;
    double msgs_s;
    double p99_ms;
    double seconds;
    int64_t passes;        /* ended during the measured run */
    int64_t cleaned_bytes; /* their dirty-log bytes */
    double feed_mb_s;
};

/* `cairn topics create` of a one-partition feed topic with its configs,
 * then waits until the broker hosts it. */
static void create_feed_topic(struct pwc *w, const char *name, bool compact)
{
    char exe[PWC_TEXT_BYTES];
    snprintf(exe, sizeof exe, "%s/cairn", w->c->bin);
    char *argv[] = {exe, "--bootstrap-servers", w->boot, "topics", "create",
                    (char *)(uintptr_t)name, "--partitions", "1",
                    "--replication-factor", "1", "--config",
                    compact ? "cleanup.policy=compact"
                            : "cleanup.policy=delete",
                    "--config", "segment.bytes=" PWC_FEED_SEGMENT,
                    "--config", "min.cleanable.dirty.ratio=0", NULL};
    static char out[BENCH_OUTPUT_BYTES];
    int status = 0;
    bool done = bench_run_child(exe, argv, NULL, false /* echo */, out,
                                sizeof out, BENCH_CAIRN_BUDGET_MS, &status);
    if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        bench_fail("create topic %s: `cairn topics create` %s (status %d); "
                   "output: %s", name, done ? "failed" : "ran out of time",
                   status, out);
    }
    char text[128];
    snprintf(text, sizeof text, " of %s-0 at epoch ", name);
    double deadline = bench_clock_ms() + PWC_TOPIC_BUDGET_MS;
    while (!cluster_log_contains(w->broker, text)) {
        if (bench_clock_ms() > deadline) {
            bench_fail("topic %s not hosted in %d ms", name,
                       PWC_TOPIC_BUDGET_MS);
        }
        bench_pause_ms(PWC_POLL_MS);
    }
}

/* Waits until the cleaner has caught up with the compacted feed: its
 * checkpoint is the active segment's base, so no pass is due. */
static void wait_cleaner_idle(struct pwc *w)
{
    double deadline = bench_clock_ms() + PWC_DRAIN_BUDGET_MS;
    for (;;) {
        struct pass_stats st;
        read_passes(w->broker, PWC_COMPACT_TOPIC, &st);
        int64_t base = active_base(w->compact_dir);
        if (st.last_to == base) {
            return;
        }
        if (bench_clock_ms() > deadline) {
            bench_fail("the cleaner did not catch up in %d ms: checkpoint %"
                       PRId64 ", active segment at %" PRId64,
                       PWC_DRAIN_BUDGET_MS, st.last_to, base);
        }
        bench_pause_ms(PWC_POLL_MS);
    }
}

/* Waits until a pass has ended beyond the `since` ones. */
static void wait_pass(struct pwc *w, int64_t since)
{
    double deadline = bench_clock_ms() + PWC_PASS_BUDGET_MS;
    for (;;) {
        struct pass_stats st;
        read_passes(w->broker, PWC_COMPACT_TOPIC, &st);
        if (st.passes > since) {
            return;
        }
        if (bench_clock_ms() > deadline) {
            bench_fail("no compaction pass in %d ms of feeding",
                       PWC_PASS_BUDGET_MS);
        }
        bench_pause_ms(PWC_POLL_MS);
    }
}

/* Writes every key once into topic, unpaced. */
static void prefill(struct pwc *w, const char *topic)
{
    static struct feeder f;
    feeder_start(&f, w->broker->port, topic, 1e12 /* unpaced */, w->pool,
                 PWC_FEED_POOL / PWC_FEED_CONNS);
    (void)feeder_join(&f, false /* stop */);
}

/* A fresh plain topic for one produce run, named in topic (64 bytes);
 * the caller deletes it after the run (as bench_replication.c does) so
 * that no run writes after another's files. */
static void plain_topic(struct pwc *w, char *topic)
{
    snprintf(topic, 64, "%s-%d", PWC_PLAIN_TOPIC, w->n_runs++);
    bench_create_topic(topic, 1, 1, NULL);
}

/* `cairn bench produce` into topic. */
static struct pwc_run produce_run(struct pwc *w, const char *label,
                                  const char *topic)
{
    const char *args[] = {"--bootstrap-servers", w->boot, "bench",
                          "produce", "--topic", topic,
                          "--records", w->records, "--record-size", "1024",
                          "--acks", "1", "--partitions", "1",
                          "--replication-factor", "1", NULL};
    const char *line = bench_run_cairn(label, args);
    int64_t records = (int64_t)bench_field(line, "records", true);
    if (records != strtoll(w->records, NULL, 10)) {
        bench_fail("%s: %" PRId64 " of %s records delivered", topic, records,
                   w->records);
    }
    return (struct pwc_run){.mb_s = bench_field(line, "mb_s", true),
                            .msgs_s = bench_field(line, "msgs_s", true),
                            .p99_ms = bench_field(line, "p99_ms", true),
                            .seconds = bench_field(line, "seconds", true)};
}

/* One measured produce run with the feed going to the compacted topic
 * (cleaning) or to its delete-policy twin. */
static struct pwc_run pwc_one(struct pwc *w, bool cleaning)
{
    char topic[64];
    plain_topic(w, topic);
    struct pass_stats st0;
    read_passes(w->broker, PWC_COMPACT_TOPIC, &st0);
    static struct feeder f;
    feeder_start(&f, w->broker->port,
                 cleaning ? PWC_COMPACT_TOPIC : PWC_DELETE_TOPIC,
                 w->feed_bytes_s, w->pool, 0 /* until stopped */);
    bench_pause_ms(PWC_WARMUP_MS); /* the feed reaches its pace */
    if (cleaning) {
        wait_pass(w, st0.passes);
    }
    struct pass_stats st1;
    read_passes(w->broker, PWC_COMPACT_TOPIC, &st1);
    struct pwc_run run = produce_run(w, cleaning ? "cleaning=yes"
                                                 : "cleaning=no", topic);
    struct pass_stats st2;
    read_passes(w->broker, PWC_COMPACT_TOPIC, &st2);
    run.feed_mb_s = feeder_join(&f, true /* stop */);
    run.passes = st2.passes - st1.passes;
    run.cleaned_bytes = st2.bytes_before - st1.bytes_before;
    printf("run cleaning=%s passes=%" PRId64 " cleaned_mb=%.1f "
           "feed_mb_s=%.2f\n", cleaning ? "yes" : "no", run.passes,
           (double)run.cleaned_bytes / 1e6, run.feed_mb_s);
    fflush(stdout);
    if (cleaning && run.passes == 0) {
        bench_fail("no compaction pass ended during a run with cleaning");
    }
    if (!cleaning && run.passes != 0) {
        bench_fail("%" PRId64 " compaction passes during a run without",
                   run.passes);
    }
    if (cleaning) {
        wait_cleaner_idle(w);
    }
    bench_delete_topic(w->boot, topic);
    return run;
}

static int64_t feed_pool_bytes(const struct pwc *w)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < PWC_FEED_POOL; i++) {
        bytes += (int64_t)w->pool[i].len;
    }
    return bytes;
}

static void pwc_setup(struct pwc *w, struct cluster *c, long produce_mb,
                      long feed_mb_s)
{
    w->c = c;
    w->broker = &c->brokers[0];
    snprintf(w->boot, sizeof w->boot, "127.0.0.1:%d", w->broker->port);
    snprintf(w->records, sizeof w->records, "%ld",
             produce_mb * 1000000 / PWC_RECORD_BYTES);
    w->feed_bytes_s = (double)feed_mb_s * 1e6;
    char logs[PWC_TEXT_BYTES];
    cluster_broker_log_dir(c, w->broker, logs, sizeof logs);
    int n = snprintf(w->compact_dir, sizeof w->compact_dir, "%s/%s-0",
                     logs, PWC_COMPACT_TOPIC);
    if (n < 0 || (size_t)n >= sizeof w->compact_dir) {
        bench_fail("path too long: %s", logs);
    }
    int64_t now = wall_ms();
    for (int32_t i = 0; i < PWC_FEED_POOL; i++) {
        w->pool[i] = keyed_batch((int64_t)i * PWC_FEED_BATCH_RECORDS,
                                 PWC_FEED_BATCH_RECORDS, PWC_FEED_KEYS,
                                 PWC_RECORD_BYTES, now);
    }
    create_feed_topic(w, PWC_COMPACT_TOPIC, true);
    create_feed_topic(w, PWC_DELETE_TOPIC, false);
    double t0 = bench_clock_ms();
    prefill(w, PWC_COMPACT_TOPIC);
    prefill(w, PWC_DELETE_TOPIC);
    wait_cleaner_idle(w); /* the first pass, over the prefill */
    printf("info bench=produce_while_cleaning prefill_bytes=%" PRId64
           " prefill_s=%.1f\n", feed_pool_bytes(w),
           (bench_clock_ms() - t0) / 1e3);
    fflush(stdout);
    char topic[64];
    plain_topic(w, topic);
    (void)produce_run(w, "warmup", topic); /* untimed */
    bench_delete_topic(w->boot, topic);
}

/* The runs of one condition, [0] with cleaning, [1] without. */
struct pwc_runs {
    double mb_s[PWC_ROUNDS];
    double msgs_s[PWC_ROUNDS];
    double p99_ms[PWC_ROUNDS];
    double feed_mb_s[PWC_ROUNDS];
    int64_t passes;          /* in all */
    int64_t passes_min;      /* in one run */
    int64_t cleaned_bytes;
    double seconds;
};

static void pwc_result(const struct pwc *w, struct pwc_runs *runs)
{
    double with = bench_median(runs[0].mb_s, PWC_ROUNDS);
    double without = bench_median(runs[1].mb_s, PWC_ROUNDS);
    double ratio = with / without;
    printf("RESULT bench=produce_while_cleaning record_bytes=%d records=%s "
           "rounds=%d acks=1 with_mb_s=%.1f with_msgs_s=%.0f "
           "with_p99_ms=%.1f without_mb_s=%.1f without_msgs_s=%.0f "
           "without_p99_ms=%.1f ratio=%.3f floor=%.2f met=%s passes=%"
           PRId64 " passes_min=%" PRId64 " cleaned_mb_s=%.1f "
           "feed_with_mb_s=%.2f feed_without_mb_s=%.2f\n", PWC_RECORD_BYTES,
           w->records, PWC_ROUNDS, with,
           bench_median(runs[0].msgs_s, PWC_ROUNDS),
           bench_median(runs[0].p99_ms, PWC_ROUNDS), without,
           bench_median(runs[1].msgs_s, PWC_ROUNDS),
           bench_median(runs[1].p99_ms, PWC_ROUNDS), ratio, PWC_FLOOR,
           ratio >= PWC_FLOOR ? "yes" : "no", runs[0].passes,
           runs[0].passes_min,
           (double)runs[0].cleaned_bytes / runs[0].seconds / 1e6,
           bench_median(runs[0].feed_mb_s, PWC_ROUNDS),
           bench_median(runs[1].feed_mb_s, PWC_ROUNDS));
    fflush(stdout);
}

static void bench_produce_while_cleaning(long produce_mb, long feed_mb_s)
{
    static struct cluster c;
    static struct pwc w;
    c.broker_extra_config = PWC_BROKER_CONFIG;
    bench_cluster_start(&c, 1, 1);
    printf("info bench=produce_while_cleaning controllers=1 brokers=1 "
           "produce_mb=%ld record_bytes=%d feed_mb_s=%ld feed_keys=%d "
           "feed_conns=%d feed_segment_bytes=%s rounds=%d bootstrap="
           "127.0.0.1:%d\n", produce_mb, PWC_RECORD_BYTES, feed_mb_s,
           PWC_FEED_KEYS, PWC_FEED_CONNS, PWC_FEED_SEGMENT, PWC_ROUNDS,
           c.brokers[0].port);
    fflush(stdout);
    pwc_setup(&w, &c, produce_mb, feed_mb_s);
    struct pwc_runs runs[2] = {{.passes_min = INT64_MAX}};
    for (int r = 0; r < PWC_ROUNDS; r++) {
        for (int k = 0; k < 2; k++) {
            int t = (r + k) % 2; /* alternate which goes first */
            struct pwc_run run = pwc_one(&w, t == 0);
            runs[t].mb_s[r] = run.mb_s;
            runs[t].msgs_s[r] = run.msgs_s;
            runs[t].p99_ms[r] = run.p99_ms;
            runs[t].feed_mb_s[r] = run.feed_mb_s;
            runs[t].passes += run.passes;
            runs[t].cleaned_bytes += run.cleaned_bytes;
            runs[t].seconds += run.seconds;
            if (run.passes < runs[t].passes_min) {
                runs[t].passes_min = run.passes;
            }
        }
    }
    pwc_result(&w, runs);
    for (int32_t i = 0; i < PWC_FEED_POOL; i++) {
        built_batch_free(&w.pool[i]);
    }
    bench_cluster_stop(&c);
}

int main(void)
{
    bench_set_name("bench_cleaner");
    long clean_mib = bench_env_long("BENCH_CLEANER_MB", CLEAN_MB_DEFAULT,
                                    CLEAN_MB_MAX);
    if (clean_mib < CLEAN_MB_MIN) {
        bench_fail("BENCH_CLEANER_MB=%ld: expected %d..%d", clean_mib,
                   CLEAN_MB_MIN, CLEAN_MB_MAX);
    }
    long produce_mb = bench_env_long("BENCH_CLEANER_PRODUCE_MB",
                                     PWC_PRODUCE_MB_DEFAULT,
                                     PWC_PRODUCE_MB_MAX);
    long feed_mb_s = bench_env_long("BENCH_CLEANER_FEED_MB_S",
                                    PWC_FEED_MB_S_DEFAULT, PWC_FEED_MB_S_MAX);
    double t0 = bench_clock_ms();
    bench_log_cleaner(clean_mib);
    bench_produce_while_cleaning(produce_mb, feed_mb_s);
    printf("info bench=cleaner total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
