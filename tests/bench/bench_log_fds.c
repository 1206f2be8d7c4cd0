/* Descriptor budget benchmark (`make bench`): what a read or a write of
 * a cold log costs when the budget (log.fds.max, broker/log/log_fds.c)
 * has closed its files, against the same call on a log whose files are
 * open, measured in the same run. BENCH_FDS_LOGS (default 2000) logs of
 * one synced batch each live in a fresh directory under $TMPDIR (or
 * /tmp), removed at the end. Then, BENCH_ROUNDS times:
 *
 *   warm  no budget: every log keeps its files; each log is read
 *         (log_read() of its batch, the span released) in turn, then
 *         one batch is appended to each and synced;
 *   cold  a budget of BENCH_FDS_BUDGET files: taking the logs in turn,
 *         least recently used first, every one has been parked, so each
 *         read and each append opens its files again (the reopens are
 *         counted, and must be at least one per call past the budget).
 *
 *   RESULT bench=log_reopen logs=... budget=... read_warm_us=...
 *       read_cold_us=... reopen_us=... append_warm_us=...
 *       append_cold_us=... append_ratio=... open_fds_cold=...
 *
 * reopen_us = read_cold_us - read_warm_us is what opening a parked
 * log's files costs; append_ratio = append_cold_us / append_warm_us is
 * what it adds to a write, which pays a sync either way. Medians of the
 * rounds. One libuv loop; the syncs on its threadpool. */
#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "tests/lib/bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/tmpdir.h"

#define BENCH_ROUNDS 3
#define BENCH_FDS_LOGS_DEFAULT 2000
#define BENCH_FDS_LOGS_MAX 100000
#define BENCH_FDS_BUDGET 64
#define BENCH_WALL_MS 1700000000000LL

struct bench {
    uv_loop_t loop;
    struct log **logs;
    long n;
    struct built_batch batch;
    long synced; /* durable callbacks not yet called */
};

static void synced_cb(void *arg, int rc)
{
    struct bench *b = arg;
    if (rc != RC_OK) {
        bench_fail("sync: %s", rc_str(rc));
    }
    b->synced--;
}

/* Appends the batch to log i and waits until it is durable. */
static void append_synced(struct bench *b, long i)
{
    struct log_append_info info;
    int rv = log_append(b->logs[i], b->batch.bytes, b->batch.len, 0,
                        BENCH_WALL_MS, &info);
    if (rv != RC_OK) {
        bench_fail("log_append %ld: %s", i, rc_str(rv));
    }
    b->synced++;
    rv = log_wait_durable(b->logs[i], info.last_offset + 1, synced_cb, b);
    if (rv != RC_OK) {
        bench_fail("log_wait_durable %ld: %s", i, rc_str(rv));
    }
    while (b->synced > 0) {
        (void)uv_run(&b->loop, UV_RUN_ONCE);
    }
}

/* Microseconds per read of every log in turn. */
static double read_all(struct bench *b)
{
    double t0 = bench_clock_ms();
    for (long i = 0; i < b->n; i++) {
        struct log_span span;
        int rv = log_read(b->logs[i], 0, 1 << 20, INT64_MAX, &span);
        if (rv != RC_OK) {
            bench_fail("log_read %ld: %s", i, rc_str(rv));
        }
        log_span_release(&span);
    }
    return (bench_clock_ms() - t0) * 1000.0 / (double)b->n;
}

/* Microseconds per synced append to every log in turn. */
static double append_all(struct bench *b)
{
    double t0 = bench_clock_ms();
    for (long i = 0; i < b->n; i++) {
        append_synced(b, i);
    }
    return (bench_clock_ms() - t0) * 1000.0 / (double)b->n;
}

/* The reopens of one pass over the logs: at least one per log past the
 * budget, or the cold pass measured warm logs. */
static void check_reopens(const struct bench *b, uint64_t before,
                          const char *what)
{
    uint64_t got = log_fds_reopens() - before;
    if (got < (uint64_t)(b->n - BENCH_FDS_BUDGET)) {
        bench_fail("%s: %" PRIu64 " reopens over %ld logs with a budget of "
                   "%d", what, got, b->n, BENCH_FDS_BUDGET);
    }
}

int main(void)
{
    bench_set_name("bench_log_fds");
    struct bench b = {.n = bench_env_long("BENCH_FDS_LOGS",
                                          BENCH_FDS_LOGS_DEFAULT,
                                          BENCH_FDS_LOGS_MAX)};
    if (b.n <= BENCH_FDS_BUDGET) {
        bench_fail("BENCH_FDS_LOGS must exceed the budget, %d",
                   BENCH_FDS_BUDGET);
    }
    uv_loop_init(&b.loop);
    char root[4096];
    tmpdir_make(root, sizeof root);
    b.logs = calloc((size_t)b.n, sizeof *b.logs);
    if (b.logs == NULL) {
        bench_fail("out of memory");
    }
    b.batch = batch_build(4, 100, BENCH_WALL_MS, 1);
    struct log_config cfg;
    log_config_default(&cfg);
    log_fds_set_max(0);
    for (long i = 0; i < b.n; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/t-%ld", root, i);
        if (mkdir(dir, 0755) != 0) {
            bench_fail("mkdir %s", dir);
        }
        int rv = log_open(&b.logs[i], dir, &cfg, &b.loop, NULL);
        if (rv != RC_OK) {
            bench_fail("log_open %s: %s", dir, rc_str(rv));
        }
        append_synced(&b, i);
    }
    double rw[BENCH_ROUNDS], rc[BENCH_ROUNDS];
    double aw[BENCH_ROUNDS], ac[BENCH_ROUNDS];
    size_t open_cold = 0;
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        log_fds_set_max(0);
        (void)read_all(&b); /* every parked log opened again */
        rw[r] = read_all(&b);
        aw[r] = append_all(&b);
        log_fds_set_max(BENCH_FDS_BUDGET);
        (void)read_all(&b); /* parks all but the budget's worth */
        uint64_t before = log_fds_reopens();
        rc[r] = read_all(&b);
        check_reopens(&b, before, "cold reads");
        before = log_fds_reopens();
        ac[r] = append_all(&b);
        check_reopens(&b, before, "cold appends");
        open_cold = log_fds_open();
    }
    double read_warm = bench_median(rw, BENCH_ROUNDS);
    double read_cold = bench_median(rc, BENCH_ROUNDS);
    double append_warm = bench_median(aw, BENCH_ROUNDS);
    double append_cold = bench_median(ac, BENCH_ROUNDS);
    printf("RESULT bench=log_reopen logs=%ld budget=%d read_warm_us=%.2f "
           "read_cold_us=%.2f reopen_us=%.2f append_warm_us=%.1f "
           "append_cold_us=%.1f append_ratio=%.2f open_fds_cold=%zu\n",
           b.n, BENCH_FDS_BUDGET, read_warm, read_cold,
           read_cold - read_warm, append_warm, append_cold,
           append_cold / append_warm, open_cold);
    log_fds_set_max(0);
    for (long i = 0; i < b.n; i++) {
        log_close(b.logs[i]);
    }
    (void)uv_run(&b.loop, UV_RUN_DEFAULT);
    free(b.logs);
    built_batch_free(&b.batch);
    uv_loop_close(&b.loop);
    tmpdir_remove(root);
    return 0;
}
