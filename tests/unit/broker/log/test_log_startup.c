/* The start-up check (broker/log/log_startup.h): log_open() leaves the
 * trusted segments' batches unchecked and returns; the check reads them
 * on the threadpool, one chunk at a time, while the loop runs other work;
 * it finds a flipped byte with the offset log_open() used to report, tells
 * a failed read from damage, lets a log close in the middle of it, and
 * reports nothing for bytes a truncation or retention took away
 * meanwhile. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "broker/log/log_segment.h"
#include "broker/log/log_startup.h"
#include "common/io.h"
#include "common/kafka/record_batch.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"
#include "tests/lib/tmpdir.h"

#define WAIT_NS (10ull * 1000 * 1000 * 1000)
#define BIG_SEGMENT_BYTES (8 * 1024 * 1024)
#define SMALL_SEGMENT_BYTES (64 * 1024)
#define SMALL_BATCHES 300
#define SMALL_RECORDS 10

struct damage {
    int n;
    int rc;
    int64_t offset;
};

static struct log_fixture f;
static struct log_startup s;
static struct tracer info_tracer;
static char infos[8192]; /* the check's own lines (its summaries) */
static struct damage damaged;

static void info_cb(struct tracer *t, enum trace_level level,
                    const char *file, int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    size_t used = strlen(infos);
    snprintf(infos + used, sizeof infos - used, "%s\n", msg);
}

static void damaged_cb(void *arg, int rc, int64_t offset)
{
    struct damage *d = arg;
    d->n++;
    d->rc = rc;
    d->offset = offset;
}

/* The pass found no damage, and said none. */
static void expect_no_damage(void)
{
    cr_assert_eq(damaged.n, 0);
    cr_assert_eq(log_corrupt_offset(f.log), -1);
    cr_assert_not(log_fixture_warned(&f, "corrupt batch", NULL), "%s",
                  f.warnings);
}

/* The pass reported one corrupt batch, at offset, and the log has it. */
static void expect_corrupt_at(int64_t offset)
{
    cr_assert_eq(damaged.n, 1);
    cr_assert_eq(damaged.rc, RC_CORRUPT);
    cr_assert_eq(damaged.offset, offset);
    cr_assert_eq(log_corrupt_offset(f.log), offset);
}

static void setup(void)
{
    io_fault_clear();
    log_fixture_setup(&f);
    info_tracer = (struct tracer){.level = TRACE_LEVEL_INFO,
                                  .emit = info_cb};
    infos[0] = '\0';
    damaged = (struct damage){0};
    cr_assert_eq(log_startup_init(&s, &f.loop, LOG_STARTUP_CHUNK_BYTES,
                                  &info_tracer), RC_OK);
}

static void teardown(void)
{
    io_fault_clear();
    if (f.log != NULL) {
        log_fixture_close(&f);
    }
    log_startup_close(&s);
    log_fixture_teardown(&f);
}

TestSuite(log_startup, .init = setup, .fini = teardown, .timeout = 120);

/* Appends batches of 16 records of 1000 bytes until l holds mib MiB. */
static void append_mib(struct log *l, int64_t mib)
{
    struct built_batch b = batch_build(16, 1000, 1700000000000, 7);
    for (int64_t done = 0; done < mib << 20; done += (int64_t)b.len) {
        struct log_append_info info;
        cr_assert_eq(log_append(l, b.bytes, b.len, 0, 1700000000000, &info),
                     RC_OK);
    }
    built_batch_free(&b);
}

/* A log of mib MiB in 8 MiB segments, closed cleanly and opened again:
 * every segment is trusted, none checked yet. */
static void big_log(int64_t mib)
{
    f.cfg.segment_bytes = BIG_SEGMENT_BYTES;
    log_fixture_open(&f);
    append_mib(f.log, mib);
    log_fixture_close(&f);
    log_fixture_open(&f);
    log_startup_on_damage(f.log, damaged_cb, &damaged);
}

/* SMALL_BATCHES batches of SMALL_RECORDS records (batch i at offset
 * i * SMALL_RECORDS) over several segments. */
static void small_log(void)
{
    f.cfg.segment_bytes = SMALL_SEGMENT_BYTES;
    f.cfg.index_interval_bytes = 1024;
    log_fixture_open(&f);
    for (int64_t i = 0; i < SMALL_BATCHES; i++) {
        struct built_batch b = batch_build(SMALL_RECORDS, 100, 1000 + i,
                                           (uint32_t)i);
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, 1000 + i, &info),
                     RC_OK);
        cr_assert_eq(info.base_offset, i * SMALL_RECORDS);
        built_batch_free(&b);
    }
    cr_assert_gt(log_segment_count(f.log), 3);
}

/* Flips a byte inside a record of batch i, with the log closed cleanly,
 * and opens it again; the batch's segment base and position. */
static void flip_and_reopen(int64_t i, int64_t *seg_base, int64_t *pos)
{
    struct log_span span;
    cr_assert_eq(log_read(f.log, i * SMALL_RECORDS, 1, INT64_MAX, &span),
                 RC_OK);
    cr_assert_eq(span.first_offset, i * SMALL_RECORDS);
    *seg_base = span.seg->base_offset;
    *pos = span.position;
    log_span_release(&span);
    log_fixture_close(&f);
    char path[4200];
    log_fixture_file(&f, *seg_base, "log", path, sizeof path);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    uint8_t b = 0;
    off_t at = (off_t)(*pos + BATCH_HEADER_BYTES + 20);
    cr_assert_eq(pread(fd, &b, 1, at), 1);
    b ^= 0x10;
    cr_assert_eq(pwrite(fd, &b, 1, at), 1);
    close(fd);
    log_fixture_open(&f);
    log_startup_on_damage(f.log, damaged_cb, &damaged);
}

/* Runs the loop until l's check has ended (bounded). */
static void run_check(struct log *l)
{
    uint64_t deadline = uv_hrtime() + WAIT_NS;
    while (log_startup_verify_pending(l)) {
        cr_assert_lt(uv_hrtime(), deadline, "the check did not end");
        uv_run(&f.loop, UV_RUN_ONCE);
    }
}

static int count(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p++) {
        n++;
    }
    return n;
}

struct ticks {
    int fired;
    int between; /* fired with the check started and not yet ended */
};

static void tick_cb(uv_timer_t *t)
{
    struct ticks *tk = t->data;
    tk->fired++;
    if (log_startup_verify_pending(f.log) && s.bytes_checked > 0) {
        tk->between++;
    }
}

Test(log_startup, open_returns_first_and_the_loop_runs_between_chunks)
{
    big_log(20);
    log_fixture_close(&f);
    uint64_t t0 = uv_hrtime();
    log_fixture_open(&f);
    uint64_t opened = uv_hrtime();
    cr_assert(log_startup_verify_pending(f.log), "log_open checked it");
    log_startup_add(&s, f.log);
    /* A timer armed before each loop turn runs at the start of that turn:
     * after a job has come back and the next one was queued, the loop
     * runs it while the check is still under way. */
    struct ticks tk = {0};
    uv_timer_t timer;
    cr_assert_eq(uv_timer_init(&f.loop, &timer), 0);
    timer.data = &tk;
    uint64_t deadline = uv_hrtime() + WAIT_NS;
    while (log_startup_verify_pending(f.log)) {
        cr_assert_lt(uv_hrtime(), deadline, "the check did not end");
        cr_assert_eq(uv_timer_start(&timer, tick_cb, 0, 0), 0);
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    uint64_t checked = uv_hrtime();
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&f.loop, UV_RUN_NOWAIT); /* the timer lives on this stack */
    cr_assert_geq(s.jobs_done, 5, "20 MiB in 4 MiB jobs: %llu",
                  (unsigned long long)s.jobs_done);
    cr_assert_geq(tk.between, 2, "the loop ran between chunks (%d of %d)",
                  tk.between, tk.fired);
    cr_assert_eq(s.bytes_checked, log_size_bytes(f.log), "every byte");
    cr_assert_eq(damaged.n, 0);
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    cr_assert_eq(count(infos, "start-up CRC pass: 1 logs, 21.0 MB checked"),
                 1, "%s", infos);
    cr_log_info("log_open %.1f ms; the check %.1f ms after it",
                (double)(opened - t0) / 1e6, (double)(checked - opened) / 1e6);
}

/* The damage log_corruption's tests find, as the owner hears of it. */
Test(log_startup, a_corrupt_batch_is_reported_with_its_offset_after_open)
{
    small_log();
    int64_t seg_base = 0;
    int64_t pos = 0;
    flip_and_reopen(100, &seg_base, &pos);
    cr_assert_gt(seg_base, 0, "a later segment");
    cr_assert_eq(log_corrupt_offset(f.log), -1);
    cr_assert_not(log_fixture_warned(&f, "corrupt", NULL), "%s", f.warnings);
    log_startup_add(&s, f.log);
    run_check(f.log);
    expect_corrupt_at(100 * SMALL_RECORDS);
    char where[128];
    snprintf(where, sizeof where, "offset=%d position=%lld",
             100 * SMALL_RECORDS, (long long)pos);
    cr_assert(log_fixture_warned(&f, "corrupt batch below the recovery "
                                 "point", where), "%s", f.warnings);
    cr_assert_eq(count(infos, "start-up CRC pass: 1 logs,"), 1, "%s", infos);
    cr_assert_eq(count(infos, "1 corrupt, 0 unreadable"), 1, "%s", infos);
}

Test(log_startup, a_read_error_is_a_failure_not_damage)
{
    small_log();
    log_fixture_close(&f);
    log_fixture_open(&f);
    log_startup_on_damage(f.log, damaged_cb, &damaged);
    struct io_fault fault = {.op = IO_OP_READ, .kind = IO_FAULT_ERRNO,
                             .err = EIO, .path = ".log"};
    cr_assert_eq(io_fault_add(&fault), RC_OK);
    log_startup_add(&s, f.log);
    run_check(f.log);
    io_fault_clear();
    cr_assert_eq(damaged.n, 1);
    cr_assert_eq(damaged.rc, RC_IO);
    cr_assert_eq(damaged.offset, 0);
    cr_assert_eq(log_corrupt_offset(f.log), -1, "not damage");
    cr_assert(log_fixture_warned(&f, "start-up check: a read failed",
                                 "position=0"), "%s", f.warnings);
    cr_assert_not(log_fixture_warned(&f, "corrupt", NULL), "%s", f.warnings);
    cr_assert_eq(count(infos, "0 corrupt, 1 unreadable"), 1, "%s", infos);
}

static void closed_cb(void *arg)
{
    *(bool *)arg = true;
}

Test(log_startup, a_log_closed_while_its_job_runs_waits_for_that_job_only)
{
    big_log(20);
    log_startup_add(&s, f.log);
    cr_assert_eq(s.running, f.log, "its first job is queued at once");
    bool closed = false;
    log_close_then(f.log, closed_cb, &closed);
    f.log = NULL;
    uint64_t deadline = uv_hrtime() + WAIT_NS;
    while (!closed) {
        cr_assert_lt(uv_hrtime(), deadline, "the log did not close");
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_not(log_startup_busy(&s));
    cr_assert_eq(s.jobs_done, 1, "no job after the close");
    cr_assert_leq(s.bytes_checked, (int64_t)LOG_STARTUP_CHUNK_BYTES +
                                       (int64_t)LOG_STARTUP_BUFFER_BYTES);
    /* Closed cleanly: the next open checks everything again. */
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    log_startup_on_damage(f.log, damaged_cb, &damaged);
    log_startup_add(&s, f.log);
    run_check(f.log);
    cr_assert_eq(damaged.n, 0);
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
}

/* A second log in a directory of its own, mib MiB, closed cleanly and
 * opened again. */
static struct log *second_log(char *dir, size_t cap, int64_t mib)
{
    tmpdir_make(dir, cap);
    struct log *l = NULL;
    cr_assert_eq(log_open(&l, dir, &f.cfg, &f.loop, &f.tracer), RC_OK);
    append_mib(l, mib);
    log_close(l);
    cr_assert_eq(uv_run(&f.loop, UV_RUN_DEFAULT), 0);
    cr_assert_eq(log_open(&l, dir, &f.cfg, &f.loop, &f.tracer), RC_OK);
    return l;
}

Test(log_startup, a_log_closed_while_it_waits_leaves_the_queue)
{
    big_log(10);
    char dir[4096];
    struct log *other = second_log(dir, sizeof dir, 10);
    log_startup_add(&s, f.log);
    log_startup_add(&s, other);
    cr_assert_eq(s.running, f.log, "the first added runs first");
    cr_assert(log_startup_verify_pending(other));
    bool closed = false;
    log_close_then(other, closed_cb, &closed);
    run_check(f.log);
    uint64_t deadline = uv_hrtime() + WAIT_NS;
    while (!closed || log_startup_busy(&s)) {
        cr_assert_lt(uv_hrtime(), deadline, "not closed");
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(s.bytes_checked, log_size_bytes(f.log),
                 "the closed one's bytes were never read");
    cr_assert_eq(count(infos, "start-up CRC pass: 2 logs,"), 1, "%s", infos);
    tmpdir_remove(dir);
}

Test(log_startup, one_summary_for_logs_added_over_several_turns)
{
    big_log(5);
    char dir[4096];
    struct log *other = second_log(dir, sizeof dir, 5);
    log_startup_hold(&s, true);
    log_startup_add(&s, f.log);
    run_check(f.log);
    cr_assert_not(log_startup_busy(&s));
    cr_assert_eq(count(infos, "start-up CRC pass"), 0, "held: %s", infos);
    log_startup_add(&s, other);
    run_check(other);
    log_startup_hold(&s, false);
    cr_assert_eq(count(infos, "start-up CRC pass: 2 logs, 10.5 MB"), 1,
                 "%s", infos);
    cr_assert_eq(count(infos, "start-up CRC pass"), 1, "%s", infos);
    cr_assert_eq(s.passes_done, 1);
    bool closed = false;
    log_close_then(other, closed_cb, &closed);
    cr_assert_eq(uv_run(&f.loop, UV_RUN_DEFAULT), 0);
    cr_assert(closed);
    tmpdir_remove(dir);
}

/* Cut while its segment is being read: the bytes the cut took are not
 * the log's any more, nor is what was appended after the cut: a batch
 * read torn or short there is not damage. The damage below a cut is. */
Test(log_startup, damage_a_truncation_cut_away_meanwhile_is_not_reported)
{
    small_log();
    int64_t seg_base = 0;
    int64_t pos = 0;
    flip_and_reopen(10, &seg_base, &pos);
    cr_assert_eq(seg_base, 0, "the segment the first job reads");
    log_startup_add(&s, f.log);
    cr_assert_eq(s.running, f.log);
    cr_assert_eq(log_truncate_to(f.log, 8 * SMALL_RECORDS), RC_OK);
    for (int64_t i = 0; i < 20; i++) {
        struct built_batch b = batch_build(SMALL_RECORDS, 300, 5000 + i,
                                           (uint32_t)(1000 + i));
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, 5000 + i, &info),
                     RC_OK);
        built_batch_free(&b);
    }
    run_check(f.log);
    expect_no_damage();
}

Test(log_startup, damage_below_a_cut_made_meanwhile_is_reported)
{
    small_log();
    int64_t seg_base = 0;
    int64_t pos = 0;
    flip_and_reopen(10, &seg_base, &pos);
    log_startup_add(&s, f.log);
    cr_assert_eq(log_truncate_to(f.log, 15 * SMALL_RECORDS), RC_OK);
    run_check(f.log);
    expect_corrupt_at(10 * SMALL_RECORDS);
}

Test(log_startup, a_segment_deleted_meanwhile_is_skipped)
{
    small_log();
    int64_t seg_base = 0;
    int64_t pos = 0;
    flip_and_reopen(100, &seg_base, &pos);
    log_startup_add(&s, f.log);
    /* Past the damaged segment: it is deleted as retention deletes. */
    cr_assert_eq(log_advance_start(f.log, 200 * SMALL_RECORDS), RC_OK);
    cr_assert_gt(log_start_offset(f.log), seg_base);
    run_check(f.log);
    expect_no_damage();
}
