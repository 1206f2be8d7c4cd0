/* Log open benchmark (`make bench`): what checking every batch's CRC-32C
 * at start-up costs, and how long it keeps the loop. A log of
 * BENCH_RECOVERY_MB (default 256) MB in 64 MiB segments of about 16 KiB
 * batches is closed cleanly, then, BENCH_ROUNDS times, alternating:
 *
 *   open  log_open() of it: indexes loaded, no batch read (the loop
 *         thread is blocked this long);
 *   pass  its start-up check (broker/log/log_startup.h) on the
 *         threadpool, one 4 MiB job at a time, while a 1 ms timer on
 *         the loop measures the longest the loop went without running
 *         it; then log_close();
 *   read  sequential 1 MiB preads of the same segment files, the floor
 *         any scan of the bytes has to pay.
 *
 * Everything reads from the page cache (a first read warms it). The
 * medians are printed as two lines:
 *
 *   RESULT bench=log_open_scan mb=... scan_mb_s=... read_mb_s=... ratio=...
 *   RESULT bench=startup_crc_pass mb=... pass_mb_s=... read_mb_s=...
 *       ratio=... open_ms=... inline_ms=... blocked=... loop_gap_ms=...
 *       idle_gap_ms=...
 *
 * log_open_scan is the work log_open() did inline before the check moved
 * off the loop (open, then every batch checked: scan_mb_s = MB over open
 * plus pass), kept comparable with earlier runs; ratio = scan_mb_s /
 * read_mb_s. startup_crc_pass: pass_mb_s is the check alone and ratio =
 * pass_mb_s / read_mb_s; open_ms is how long log_open() blocks the loop
 * now, inline_ms how long it blocked it when it ran the check inline
 * (open_ms + the pass), blocked = open_ms / inline_ms, and loop_gap_ms
 * the longest gap between two runs of the timer during the pass, against
 * idle_gap_ms, the same timer's on the idle loop for as long (libuv's
 * timers have 1 ms steps: up to 2 ms). MB is 10^6 bytes. Files live in a fresh
 * directory under $TMPDIR (or /tmp), removed at the end. One libuv loop;
 * the pass's reads on the threadpool. */
#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "broker/log/log_startup.h"
#include "tests/lib/bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/tmpdir.h"

#define BENCH_ROUNDS 3
#define BENCH_MB_DEFAULT 256
#define BENCH_MB_MAX 16384
#define BENCH_SEGMENT_BYTES (64 * 1024 * 1024)
#define BENCH_RECORDS 16
#define BENCH_VALUE_BYTES 1000
#define BENCH_CHUNK_BYTES (1024 * 1024)

static struct log *open_log(const char *dir, uv_loop_t *loop)
{
    struct log_config cfg;
    log_config_default(&cfg);
    cfg.segment_bytes = BENCH_SEGMENT_BYTES;
    struct log *l = NULL;
    int rv = log_open(&l, dir, &cfg, loop, NULL /* silent */);
    if (rv != RC_OK) {
        bench_fail("log_open %s: %s", dir, rc_str(rv));
    }
    return l;
}

static void close_log(struct log *l, uv_loop_t *loop)
{
    log_close(l);
    (void)uv_run(loop, UV_RUN_DEFAULT);
}

/* Appends batches until the log holds bytes bytes; returns its end. */
static int64_t fill(const char *dir, uv_loop_t *loop, int64_t bytes)
{
    struct log *l = open_log(dir, loop);
    struct built_batch b = batch_build(BENCH_RECORDS, BENCH_VALUE_BYTES,
                                       1700000000000, 1);
    for (int64_t done = 0; done < bytes; done += (int64_t)b.len) {
        struct log_append_info info;
        int rv = log_append(l, b.bytes, b.len, 0, 1700000000000, &info);
        if (rv != RC_OK) {
            bench_fail("log_append: %s", rc_str(rv));
        }
    }
    built_batch_free(&b);
    int64_t end = log_end_offset(l);
    close_log(l, loop);
    return end;
}

/* Reads every .log file of dir in 1 MiB preads; returns the bytes read. */
static int64_t read_segments(const char *dir, uint8_t *buf)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        bench_fail("opendir %s", dir);
    }
    int64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".log") != 0) {
            continue;
        }
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            bench_fail("open %s", path);
        }
        ssize_t got;
        off_t at = 0;
        while ((got = pread(fd, buf, BENCH_CHUNK_BYTES, at)) > 0) {
            at += got;
        }
        total += at;
        close(fd);
    }
    closedir(d);
    return total;
}

/* The loop's view of a pass: the longest time between two timer runs. */
struct gap {
    double last_ms;
    double max_ms;
};

static void tick_cb(uv_timer_t *t)
{
    struct gap *g = t->data;
    double now = bench_clock_ms();
    if (now - g->last_ms > g->max_ms) {
        g->max_ms = now - g->last_ms;
    }
    g->last_ms = now;
}

/* The longest gap of the same 1 ms timer over ms on the idle loop: what
 * loop_gap_ms is to be read against. */
static double idle_gap_ms(uv_loop_t *loop, double ms)
{
    uv_timer_t timer;
    double t0 = bench_clock_ms();
    struct gap g = {.last_ms = t0};
    timer.data = &g;
    if (uv_timer_init(loop, &timer) != 0 ||
        uv_timer_start(&timer, tick_cb, 1, 1) != 0) {
        bench_fail("uv_timer_start");
    }
    while (bench_clock_ms() - t0 < ms) {
        (void)uv_run(loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&timer, NULL);
    (void)uv_run(loop, UV_RUN_DEFAULT);
    return g.max_ms;
}

/* One round of open and pass: their times in ms and the loop's longest
 * gap during the pass. */
static void open_and_check(const char *dir, uv_loop_t *loop,
                           struct log_startup *s, int64_t end, int64_t bytes,
                           double *open_ms, double *pass_ms, double *gap_ms)
{
    int64_t before = s->bytes_checked;
    double t0 = bench_clock_ms();
    struct log *l = open_log(dir, loop);
    double t1 = bench_clock_ms();
    if (log_end_offset(l) != end) {
        bench_fail("reopened log ends at %" PRId64 ", not %" PRId64,
                   log_end_offset(l), end);
    }
    uv_timer_t timer;
    struct gap g = {.last_ms = t1};
    timer.data = &g;
    if (uv_timer_init(loop, &timer) != 0 ||
        uv_timer_start(&timer, tick_cb, 1, 1) != 0) {
        bench_fail("uv_timer_start");
    }
    log_startup_add(s, l);
    while (log_startup_verify_pending(l)) {
        (void)uv_run(loop, UV_RUN_ONCE);
    }
    double t2 = bench_clock_ms();
    tick_cb(&timer);
    uv_close((uv_handle_t *)&timer, NULL);
    close_log(l, loop);
    if (s->bytes_checked - before != bytes) {
        bench_fail("the pass checked %" PRId64 " bytes, not %" PRId64,
                   s->bytes_checked - before, bytes);
    }
    *open_ms = t1 - t0;
    *pass_ms = t2 - t1;
    *gap_ms = g.max_ms;
}

int main(void)
{
    bench_set_name("bench_recovery");
    long mb = bench_env_long("BENCH_RECOVERY_MB", BENCH_MB_DEFAULT,
                             BENCH_MB_MAX);
    char dir[4096];
    tmpdir_make(dir, sizeof dir);
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        bench_fail("uv_loop_init");
    }
    struct log_startup s;
    if (log_startup_init(&s, &loop, LOG_STARTUP_CHUNK_BYTES,
                         NULL /* silent */) != RC_OK) {
        bench_fail("out of memory");
    }
    int64_t end = fill(dir, &loop, (int64_t)mb * 1000 * 1000);
    uint8_t *buf = malloc(BENCH_CHUNK_BYTES);
    if (buf == NULL) {
        bench_fail("out of memory");
    }
    int64_t bytes = read_segments(dir, buf); /* warms the page cache */
    double open[BENCH_ROUNDS];
    double pass[BENCH_ROUNDS];
    double inline_ms[BENCH_ROUNDS];
    double gap[BENCH_ROUNDS];
    double idle_gap[BENCH_ROUNDS];
    double scan[BENCH_ROUNDS];
    double check[BENCH_ROUNDS];
    double read[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        open_and_check(dir, &loop, &s, end, bytes, &open[r], &pass[r],
                       &gap[r]);
        inline_ms[r] = open[r] + pass[r];
        idle_gap[r] = idle_gap_ms(&loop, pass[r]);
        scan[r] = (double)bytes / 1e3 / inline_ms[r];
        check[r] = (double)bytes / 1e3 / pass[r];
        double t0 = bench_clock_ms();
        if (read_segments(dir, buf) != bytes) {
            bench_fail("segment files changed size");
        }
        read[r] = (double)bytes / 1e3 / (bench_clock_ms() - t0);
    }
    double scan_mb_s = bench_median(scan, BENCH_ROUNDS);
    double pass_mb_s = bench_median(check, BENCH_ROUNDS);
    double read_mb_s = bench_median(read, BENCH_ROUNDS);
    double open_ms = bench_median(open, BENCH_ROUNDS);
    double in_ms = bench_median(inline_ms, BENCH_ROUNDS);
    printf("RESULT bench=log_open_scan mb=%.0f scan_mb_s=%.0f "
           "read_mb_s=%.0f ratio=%.2f\n", (double)bytes / 1e6, scan_mb_s,
           read_mb_s, scan_mb_s / read_mb_s);
    printf("RESULT bench=startup_crc_pass mb=%.0f pass_mb_s=%.0f "
           "read_mb_s=%.0f ratio=%.2f open_ms=%.2f inline_ms=%.1f "
           "blocked=%.4f loop_gap_ms=%.1f idle_gap_ms=%.1f\n",
           (double)bytes / 1e6, pass_mb_s, read_mb_s, pass_mb_s / read_mb_s,
           open_ms, in_ms, open_ms / in_ms, bench_median(gap, BENCH_ROUNDS),
           bench_median(idle_gap, BENCH_ROUNDS));
    free(buf);
    log_startup_close(&s);
    (void)uv_loop_close(&loop);
    tmpdir_remove(dir);
    return 0;
}
