/* Log open benchmark (`make bench`): what checking every batch's CRC-32C
 * at open costs. A log of BENCH_RECOVERY_MB (default 256) MB in 64 MiB
 * segments of about 16 KiB batches is closed cleanly, then
 *
 *   scan  log_open() of it: its indexes loaded and every batch read and
 *         checked by CRC (broker/log/log_open.c), then log_close();
 *   read  sequential 1 MiB preads of the same segment files, the floor
 *         any scan of the bytes has to pay.
 *
 * Both read from the page cache (a first read warms it), alternating,
 * BENCH_ROUNDS of each; the medians are printed as one line
 *   RESULT bench=log_open_scan mb=... scan_mb_s=... read_mb_s=... ratio=...
 * with ratio = scan_mb_s / read_mb_s. MB is 10^6 bytes. Files live in a
 * fresh directory under $TMPDIR (or /tmp), removed at the end. One thread,
 * one libuv loop. */
#include "broker/log/log.h"
#include "tests/lib/bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

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
    int64_t end = fill(dir, &loop, (int64_t)mb * 1000 * 1000);
    uint8_t *buf = malloc(BENCH_CHUNK_BYTES);
    if (buf == NULL) {
        bench_fail("out of memory");
    }
    int64_t bytes = read_segments(dir, buf); /* warms the page cache */
    double scan[BENCH_ROUNDS];
    double read[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        double t0 = bench_clock_ms();
        struct log *l = open_log(dir, &loop);
        double t1 = bench_clock_ms();
        if (log_end_offset(l) != end) {
            bench_fail("reopened log ends at %" PRId64 ", not %" PRId64,
                       log_end_offset(l), end);
        }
        close_log(l, &loop);
        scan[r] = (double)bytes / 1e3 / (t1 - t0);
        t0 = bench_clock_ms();
        if (read_segments(dir, buf) != bytes) {
            bench_fail("segment files changed size");
        }
        read[r] = (double)bytes / 1e3 / (bench_clock_ms() - t0);
    }
    double scan_mb_s = bench_median(scan, BENCH_ROUNDS);
    double read_mb_s = bench_median(read, BENCH_ROUNDS);
    printf("RESULT bench=log_open_scan mb=%.0f scan_mb_s=%.0f "
           "read_mb_s=%.0f ratio=%.2f\n", (double)bytes / 1e6, scan_mb_s,
           read_mb_s, scan_mb_s / read_mb_s);
    free(buf);
    (void)uv_loop_close(&loop);
    tmpdir_remove(dir);
    return 0;
}
