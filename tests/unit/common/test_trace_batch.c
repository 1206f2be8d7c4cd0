/* Batches of trace lines (common/trace.h: trace_batch_begin()): what the
 * stderr tracer and the event files hold before and after a batch ends,
 * with stderr sent to a file so that its size says what was written. */
#include "common/event_ring.h"
#include "common/rc.h"
#include "common/trace.h"
#include "tests/lib/tmpdir.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[4096];
static char err_path[4200];
static char events_path[4200];
static int saved_stderr = -1;
static struct event_ring ring;
static struct tracer tracer;

static void setup(void)
{
    tmpdir_make(dir, sizeof dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    snprintf(events_path, sizeof events_path, "%s/events.log", dir);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    cr_assert_geq(fd, 0);
    saved_stderr = dup(STDERR_FILENO);
    cr_assert_geq(saved_stderr, 0);
    cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    close(fd);
    event_ring_init(&ring);
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, events_path, &ld), RC_OK);
    trace_init_stderr(&tracer, TRACE_LEVEL_INFO, "test");
    tracer.events = &ring;
}

static void teardown(void)
{
    cr_assert_eq(dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
    close(saved_stderr);
    event_ring_destroy(&ring);
    tmpdir_remove(dir);
}

TestSuite(trace_batch, .init = setup, .fini = teardown);

static long long size_of(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return (long long)st.st_size;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t cap = 8u << 20;
    char *buf = calloc(1, cap + 1);
    cr_assert_not_null(buf);
    size_t n = fread(buf, 1, cap, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The lines "event: line i" for i < n, each once and in order. */
static void assert_lines(const char *text, int n)
{
    const char *at = text;
    char want[64];
    for (int i = 0; i < n; i++) {
        snprintf(want, sizeof want, "event: line %d\n", i);
        const char *found = strstr(at, want);
        cr_assert_not_null(found, "line %d missing or out of order", i);
        at = found + strlen(want);
    }
}

Test(trace_batch, lines_wait_for_the_end_of_the_outermost_batch)
{
    trace_batch_begin();
    TRACE_INFO(&tracer, "event: line 0");
    trace_batch_begin();
    TRACE_INFO(&tracer, "event: line 1");
    trace_batch_end();
    TRACE_INFO(&tracer, "event: line 2");
    cr_assert_eq(size_of(err_path), 0, "stderr written inside the batch");
    long long events_before = size_of(events_path);
    trace_batch_end();
    char *err = slurp(err_path);
    assert_lines(err, 3);
    free(err);
    cr_assert_gt(size_of(events_path), events_before);
    char *events = slurp(events_path);
    cr_assert_not_null(strstr(events, " line 2\n"), "%s", events);
    free(events);
    /* Outside a batch a line is written at once. */
    long long before = size_of(err_path);
    TRACE_INFO(&tracer, "after the batch");
    cr_assert_gt(size_of(err_path), before);
}

/* The event file's lines wait too; the ring has them at once. */
Test(trace_batch, the_event_file_is_written_at_the_end)
{
    long long before = size_of(events_path);
    trace_batch_begin();
    for (int i = 0; i < 20; i++) {
        TRACE_INFO(&tracer, "event: line %d", i);
    }
    cr_assert_eq(size_of(events_path), before);
    trace_batch_end();
    char *events = slurp(events_path);
    for (int i = 0; i < 20; i++) {
        char want[32];
        snprintf(want, sizeof want, " line %d\n", i);
        cr_assert_not_null(strstr(events, want), "line %d", i);
    }
    free(events);
}

/* More than a buffer's worth: written in pieces as it fills, nothing
 * lost, nothing twice; the event file stays within its bound. */
Test(trace_batch, a_long_burst_goes_out_in_pieces_and_whole)
{
    int n = 5000;
    trace_batch_begin();
    for (int i = 0; i < n; i++) {
        TRACE_INFO(&tracer, "event: line %d", i);
    }
    cr_assert_gt(size_of(err_path), 0, "a full buffer is written");
    trace_batch_end();
    char *err = slurp(err_path);
    assert_lines(err, n);
    free(err);
    char *events = slurp(events_path);
    size_t lines = 0;
    for (const char *c = events; *c != '\0'; c++) {
        lines += *c == '\n';
    }
    cr_assert_leq(lines, EVENT_FILE_LINES_MAX);
    char want[32];
    snprintf(want, sizeof want, " line %d\n", n - 1);
    cr_assert_not_null(strstr(events, want));
    snprintf(want, sizeof want, " line %d\n", n - (int)EVENT_RING_CAP);
    cr_assert_not_null(strstr(events, want), "the ring's oldest");
    free(events);
}

/* Lines go to the file after the ring is rebuilt from it: a restart
 * serves what a batch told. */
Test(trace_batch, a_batch_survives_a_restart)
{
    trace_batch_begin();
    for (int i = 0; i < 10; i++) {
        TRACE_INFO(&tracer, "event: line %d", i);
    }
    trace_batch_end();
    event_ring_destroy(&ring);
    event_ring_init(&ring);
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, events_path, &ld), RC_OK);
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    cr_assert_not_null(f);
    cr_assert_eq(event_ring_text(&ring, 0, f), 10);
    cr_assert_eq(fclose(f), 0);
    cr_assert_not_null(strstr(doc, "line 9"));
    free(doc);
}

/* A child that leaves inside a batch: by exit() (its atexit handler
 * writes the batch) or, after trace_batch_flush(), by _exit(), as a
 * daemon whose disk failed does. The lines are in stderr after it. */
static void leave_inside_a_batch(bool flush_then_underscore_exit)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        trace_batch_begin();
        TRACE_ERROR(&tracer, "event: line 0");
        TRACE_ERROR(&tracer, "event: line 1");
        if (flush_then_underscore_exit) {
            trace_batch_flush();
            _exit(3);
        }
        exit(3);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    char *err = slurp(err_path);
    assert_lines(err, 2);
    free(err);
    char *events = slurp(events_path);
    cr_assert_not_null(strstr(events, " line 1\n"), "%s", events);
    free(events);
}

Test(trace_batch, exit_inside_a_batch_writes_it)
{
    leave_inside_a_batch(false);
}

Test(trace_batch, a_flush_before_underscore_exit_writes_it)
{
    leave_inside_a_batch(true);
}
