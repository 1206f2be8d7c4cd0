/* Partition log recovery: clean reopen, torn tails, flipped bytes, lost
 * indexes and checkpoints, and a writer SIGKILLed mid-stream
 * (broker/log/log_open.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;

static void setup(void)
{
    log_fixture_setup(&f);
}

static void teardown(void)
{
    log_fixture_teardown(&f);
}

TestSuite(log_recovery, .init = setup, .fini = teardown, .timeout = 120);

/* The batch a writer appends as its i-th. */
static struct built_batch nth_batch(int64_t i)
{
    return batch_build((int32_t)(1 + i % 7), (size_t)(50 + (i * 37) % 200),
                       i, (uint32_t)i);
}

static void append_nth(int64_t from, int64_t to)
{
    for (int64_t i = from; i < to; i++) {
        struct built_batch b = nth_batch(i);
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, i, &info), RC_OK);
        built_batch_free(&b);
    }
}

/* Reads the whole log and checks it holds exactly batches 0..n-1 written
 * by append_nth, whole and in order. Returns n. */
static int64_t verify_prefix(void)
{
    int64_t offset = log_start_offset(f.log);
    int64_t i = 0;
    while (offset < log_end_offset(f.log)) {
        struct log_span span;
        cr_assert_eq(log_read(f.log, offset, 1 << 20, INT64_MAX, &span),
                     RC_OK);
        cr_assert_gt(span.bytes, 0);
        size_t len = 0;
        uint8_t *buf = log_fixture_span_bytes(&span, &len);
        size_t pos = 0;
        while (pos < len) {
            struct record_batch_header h;
            cr_assert_eq(record_batch_parse(buf + pos, len - pos, &h), RC_OK);
            cr_assert_eq(record_batch_validate(buf + pos,
                                               (size_t)record_batch_size(&h),
                                               false, &h), RC_OK);
            struct built_batch want = nth_batch(i);
            cr_assert_eq(h.base_offset, offset, "batch %lld", (long long)i);
            cr_assert(batch_same_payload(buf + pos, &want), "batch %lld",
                      (long long)i);
            built_batch_free(&want);
            offset = record_batch_last_offset(&h) + 1;
            pos += (size_t)record_batch_size(&h);
            i++;
        }
        free(buf);
        log_span_release(&span);
    }
    return i;
}

static void append_bytes(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static void flip_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    uint8_t b = 0;
    cr_assert_eq(pread(fd, &b, 1, at), 1);
    b ^= 0x40;
    cr_assert_eq(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

Test(log_recovery, clean_reopen_keeps_everything)
{
    f.cfg.segment_bytes = 8192;
    log_fixture_open(&f);
    append_nth(0, 100);
    int64_t end = log_end_offset(f.log);
    size_t segs = log_segment_count(f.log);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    cr_assert_eq(f.n_warnings, 0, "warning: %s", f.last_warning);
    cr_assert_eq(log_end_offset(f.log), end);
    cr_assert_eq(log_durable_end_offset(f.log), end);
    cr_assert_eq(log_segment_count(f.log), segs);
    cr_assert_eq(verify_prefix(), 100);
    /* Appends continue where the log ended. */
    append_nth(100, 110);
    cr_assert_eq(verify_prefix(), 110);
}

Test(log_recovery, torn_tail_is_cut_and_logged)
{
    log_fixture_open(&f);
    append_nth(0, 20);
    int64_t end = log_end_offset(f.log);
    log_fixture_close_unclean(&f);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    int64_t size = log_fixture_file_size(path);
    struct built_batch b = nth_batch(20);
    append_bytes(path, b.bytes, b.len / 2); /* half a batch */
    built_batch_free(&b);
    log_fixture_open(&f);
    cr_assert_not(f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), end);
    cr_assert_eq(log_fixture_file_size(path), size);
    cr_assert_eq(f.n_warnings, 1);
    cr_assert(strstr(f.last_warning, "00000000000000000000.log") != NULL,
              "names the file: %s", f.last_warning);
    char where[64];
    snprintf(where, sizeof where, "position=%lld", (long long)size);
    cr_assert(strstr(f.last_warning, where) != NULL, "names the position: %s",
              f.last_warning);
    cr_assert_eq(verify_prefix(), 20);
}

Test(log_recovery, zeros_after_the_last_batch_are_cut)
{
    log_fixture_open(&f);
    append_nth(0, 10);
    log_fixture_close_unclean(&f);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    int64_t size = log_fixture_file_size(path);
    static const uint8_t zeros[4096];
    append_bytes(path, zeros, sizeof zeros);
    log_fixture_open(&f);
    cr_assert_eq(log_fixture_file_size(path), size);
    cr_assert_eq(verify_prefix(), 10);
}

Test(log_recovery, flipped_byte_in_last_segment_truncates_there)
{
    f.cfg.segment_bytes = 4096;
    log_fixture_open(&f);
    append_nth(0, 60);
    size_t segs = log_segment_count(f.log);
    cr_assert_gt(segs, 3);
    /* Find the base offset and position of the third batch of the last
     * segment by reading it back. */
    int64_t last_base = 0;
    for (int64_t off = log_end_offset(f.log) - 1; off >= 0; off--) {
        struct log_span span;
        cr_assert_eq(log_read(f.log, off, 1, INT64_MAX, &span), RC_OK);
        if (span.position == 0) {
            last_base = span.first_offset;
            log_span_release(&span);
            break;
        }
        log_span_release(&span);
    }
    int64_t i = 0;
    int64_t offset = 0;
    while (offset < last_base) {
        offset += 1 + i % 7;
        i++;
    }
    /* Batches i, i+1 open the last segment; corrupt batch i+2. */
    int64_t pos = 0;
    int64_t third = offset;
    for (int k = 0; k < 2; k++) {
        struct built_batch b = nth_batch(i + k);
        pos += (int64_t)b.len;
        third += 1 + (i + k) % 7;
        built_batch_free(&b);
    }
    log_fixture_close_unclean(&f);
    char path[4200];
    log_fixture_file(&f, last_base, "log", path, sizeof path);
    flip_byte(path, (off_t)(pos + 70));
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), third);
    cr_assert_eq(log_fixture_file_size(path), pos);
    cr_assert_eq(log_segment_count(f.log), segs);
    cr_assert_eq(verify_prefix(), i + 2);
    cr_assert_eq(f.n_warnings, 1, "%s", f.last_warning);
}

/* Writes 150 batches over several indexed segments and closes cleanly;
 * returns the size of the first segment's .index, whose path goes in path. */
static int64_t write_indexed_log(char *path, size_t cap)
{
    f.cfg.segment_bytes = 16384;
    f.cfg.index_interval_bytes = 512;
    log_fixture_open(&f);
    append_nth(0, 150);
    log_fixture_close(&f);
    log_fixture_file(&f, 0, "index", path, cap);
    int64_t index_size = log_fixture_file_size(path);
    cr_assert_gt(index_size, 0);
    return index_size;
}

Test(log_recovery, deleted_index_is_rebuilt)
{
    char path[4200];
    int64_t index_size = write_indexed_log(path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    log_fixture_open(&f);
    cr_assert_eq(f.n_warnings, 1);
    cr_assert(strstr(f.last_warning, "rebuilt") != NULL, "%s",
              f.last_warning);
    cr_assert_eq(log_fixture_file_size(path), index_size);
    cr_assert_eq(verify_prefix(), 150);
}

Test(log_recovery, garbage_index_is_rebuilt)
{
    char path[4200];
    int64_t index_size = write_indexed_log(path, sizeof path);
    int fd = open(path, O_WRONLY | O_TRUNC);
    cr_assert_geq(fd, 0);
    uint8_t junk[40];
    for (size_t k = 0; k < sizeof junk; k++) {
        junk[k] = (uint8_t)(k * 97 + 13);
    }
    cr_assert_eq(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    close(fd);
    log_fixture_open(&f);
    cr_assert_eq(log_fixture_file_size(path), index_size);
    cr_assert_eq(verify_prefix(), 150);
}

Test(log_recovery, missing_epoch_checkpoint_is_rebuilt_from_batches)
{
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 2), RC_OK);
    struct built_batch b = nth_batch(0);
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 2, 0, &info), RC_OK);
    built_batch_free(&b);
    cr_assert_eq(log_assign_epoch(f.log, 5), RC_OK);
    b = nth_batch(1);
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 5, 0, &info), RC_OK);
    built_batch_free(&b);
    log_fixture_close(&f);
    char path[4200];
    snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", f.dir);
    cr_assert_eq(unlink(path), 0);
    log_fixture_open(&f);
    const struct log_epoch_cache *c = log_epochs(f.log);
    cr_assert_eq(c->n, 2);
    cr_assert_eq(c->entries[0].epoch, 2);
    cr_assert_eq(c->entries[0].start_offset, 0);
    cr_assert_eq(c->entries[1].epoch, 5);
    cr_assert_eq(c->entries[1].start_offset, 1);
    cr_assert_geq(log_fixture_file_size(path), 0, "written again");
}

/* --- A writer killed with SIGKILL ------------------------------------- */

#define CRASH_BATCHES_MAX 20000
#define CRASH_DURABLE_WANTED 300

struct child_state {
    int fd;
    int64_t index;
};

static void child_durable_cb(void *arg, int rc)
{
    struct child_state *st = arg;
    (void)st;
    if (rc != RC_OK) {
        _exit(3);
    }
}

struct report {
    int fd;
    int64_t offset;
};

static void report_cb(void *arg, int rc)
{
    struct report *r = arg;
    if (rc != RC_OK) {
        _exit(3);
    }
    if (write(r->fd, &r->offset, sizeof r->offset) != sizeof r->offset) {
        _exit(4);
    }
    free(r);
}

/* Appends batches forever (bounded), reporting each durable end offset
 * through the pipe; never returns. */
static void run_writer(int fd)
{
    uv_loop_t loop;
    struct log *l = NULL;
    if (uv_loop_init(&loop) != 0 ||
        log_open(&l, f.dir, &f.cfg, &loop, NULL) != RC_OK) {
        _exit(2);
    }
    struct child_state st = {.fd = fd};
    for (int64_t i = 0; i < CRASH_BATCHES_MAX; i++) {
        struct built_batch b = nth_batch(i);
        struct log_append_info info;
        if (log_append(l, b.bytes, b.len, 0, i, &info) != RC_OK) {
            _exit(5);
        }
        built_batch_free(&b);
        struct report *r = malloc(sizeof *r);
        *r = (struct report){.fd = fd, .offset = info.last_offset + 1};
        if (log_wait_durable(l, r->offset, report_cb, r) != RC_OK) {
            _exit(6);
        }
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    (void)child_durable_cb;
    (void)st;
    for (;;) {
        uv_run(&loop, UV_RUN_ONCE); /* wait to be killed */
    }
}

Test(log_recovery, sigkilled_writer_keeps_every_durable_batch)
{
    f.cfg.segment_bytes = 64 * 1024;
    f.cfg.index_interval_bytes = 1024;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        run_writer(fds[1]);
    }
    close(fds[1]);
    int64_t durable = 0;
    int reports = 0;
    time_t deadline = time(NULL) + 30;
    while (reports < CRASH_DURABLE_WANTED && time(NULL) < deadline) {
        int64_t off = 0;
        ssize_t n = read(fds[0], &off, sizeof off);
        if (n != (ssize_t)sizeof off) {
            break;
        }
        cr_assert_geq(off, durable, "durable offsets only grow");
        durable = off;
        reports++;
    }
    cr_assert_eq(kill(pid, SIGKILL), 0);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status), "the writer failed on its own: %d",
              WEXITSTATUS(status));
    close(fds[0]);
    cr_assert_geq(reports, CRASH_DURABLE_WANTED, "writer too slow");

    log_fixture_open(&f);
    cr_assert_geq(log_end_offset(f.log), durable);
    int64_t n = verify_prefix();
    cr_assert_gt(n, 0);
    cr_assert_geq(log_durable_end_offset(f.log), durable);
    /* And the log takes appends again right where it ended. */
    int64_t end = log_end_offset(f.log);
    append_nth(n, n + 5);
    cr_assert_gt(log_end_offset(f.log), end);
    cr_assert_eq(verify_prefix(), n + 5);
}
