/* Unit tests for common/trace.c: level filtering, cutting long messages,
 * level names, and the stderr tracer's line format (fd 2 is redirected to
 * a pipe for those). */
#include "common/limits.h"
#include "common/trace.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_LINES_MAX 8

/* A tracer that records what it is given. */
struct capture {
    size_t n_calls;
    enum trace_level level[CAPTURE_LINES_MAX];
    const char *file[CAPTURE_LINES_MAX];
    int line[CAPTURE_LINES_MAX];
    char msg[CAPTURE_LINES_MAX][TRACE_LINE_BYTES_MAX + 1];
};

static struct capture cap;

static void capture_emit_cb(struct tracer *t, enum trace_level level,
                            const char *file, int line, const char *msg)
{
    struct capture *c = t->data;
    size_t i = c->n_calls++;

    if (i >= CAPTURE_LINES_MAX) {
        return;
    }
    c->level[i] = level;
    c->file[i] = file;
    c->line[i] = line;
    cr_assert_lt(strlen(msg), sizeof c->msg[i]);
    strcpy(c->msg[i], msg);
}

static struct tracer capture_tracer(enum trace_level level)
{
    struct tracer t = {level, "test", capture_emit_cb, &cap, NULL};

    memset(&cap, 0, sizeof cap);
    return t;
}

static int side_effect(int *calls)
{
    (*calls)++;
    return 42;
}

Test(trace, levels_at_or_above_threshold_are_emitted)
{
    struct tracer t = capture_tracer(TRACE_LEVEL_WARN);

    TRACE_DEBUG(&t, "debug");
    TRACE_INFO(&t, "info");
    TRACE_WARN(&t, "warn partition=%s-%d", "orders", 3);
    TRACE_ERROR(&t, "error");
    cr_assert_eq(cap.n_calls, 2);
    cr_assert_eq(cap.level[0], TRACE_LEVEL_WARN);
    cr_assert_str_eq(cap.msg[0], "warn partition=orders-3");
    cr_assert_eq(cap.level[1], TRACE_LEVEL_ERROR);
    cr_assert_str_eq(cap.msg[1], "error");
    cr_assert(strstr(cap.file[0], "test_trace.c") != NULL);
    cr_assert_gt(cap.line[0], 0);
}

Test(trace, disabled_level_never_formats_or_emits)
{
    struct tracer t = capture_tracer(TRACE_LEVEL_ERROR);
    int calls = 0;

    TRACE_DEBUG(&t, "value=%d", side_effect(&calls));
    TRACE_INFO(&t, "value=%d", side_effect(&calls));
    TRACE_WARN(&t, "value=%d", side_effect(&calls));
    cr_assert_eq(calls, 0);
    cr_assert_eq(cap.n_calls, 0);
    TRACE_ERROR(&t, "value=%d", side_effect(&calls));
    cr_assert_eq(calls, 1);
    cr_assert_str_eq(cap.msg[0], "value=42");
}

Test(trace, off_level_drops_everything)
{
    struct tracer t = capture_tracer(TRACE_LEVEL_OFF);

    TRACE_DEBUG(&t, "x");
    TRACE_ERROR(&t, "x");
    cr_assert_eq(cap.n_calls, 0);
}

Test(trace, direct_emitf_below_level_is_dropped)
{
    struct tracer t = capture_tracer(TRACE_LEVEL_INFO);

    trace_emitf(&t, TRACE_LEVEL_DEBUG, "f.c", 1, "dropped");
    trace_emitf(&t, TRACE_LEVEL_INFO, "f.c", 2, "kept");
    cr_assert_eq(cap.n_calls, 1);
    cr_assert_str_eq(cap.msg[0], "kept");
    cr_assert_eq(cap.line[0], 2);
}

Test(trace, long_message_is_cut_at_line_max)
{
    struct tracer t = capture_tracer(TRACE_LEVEL_DEBUG);
    static char big[3 * TRACE_LINE_BYTES_MAX];
    size_t i;

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    TRACE_INFO(&t, "%s", big);
    cr_assert_eq(cap.n_calls, 1);
    cr_assert_eq(strlen(cap.msg[0]), TRACE_LINE_BYTES_MAX - 1);
    for (i = 0; i < TRACE_LINE_BYTES_MAX - 1; i++) {
        cr_assert_eq(cap.msg[0][i], 'x');
    }
}

Test(trace, null_tracer_is_silent)
{
    int calls = 0;

    TRACE_ERROR(NULL, "value=%d", side_effect(&calls));
    trace_emitf(NULL, TRACE_LEVEL_ERROR, "f.c", 1, "nothing");
    cr_assert_eq(calls, 0);
}

Test(trace, tracer_without_emit_is_silent)
{
    struct tracer t = {TRACE_LEVEL_DEBUG, NULL, NULL, NULL, NULL};

    TRACE_ERROR(&t, "nothing");
}

Test(trace, level_name_and_parse_round_trip)
{
    int l;

    for (l = TRACE_LEVEL_DEBUG; l <= TRACE_LEVEL_OFF; l++) {
        const char *name = trace_level_name((enum trace_level)l);

        cr_assert_neq(name, NULL);
        cr_assert_eq(trace_level_parse(name), l, "level %s", name);
    }
    cr_assert_str_eq(trace_level_name(TRACE_LEVEL_WARN), "WARN");
}

Test(trace, parse_ignores_case_and_rejects_unknown)
{
    cr_assert_eq(trace_level_parse("debug"), TRACE_LEVEL_DEBUG);
    cr_assert_eq(trace_level_parse("info"), TRACE_LEVEL_INFO);
    cr_assert_eq(trace_level_parse("Warn"), TRACE_LEVEL_WARN);
    cr_assert_eq(trace_level_parse("ERROR"), TRACE_LEVEL_ERROR);
    cr_assert_eq(trace_level_parse("off"), TRACE_LEVEL_OFF);
    cr_assert_eq(trace_level_parse("warning"), -1);
    cr_assert_eq(trace_level_parse(""), -1);
    cr_assert_eq(trace_level_parse(NULL), -1);
    cr_assert_str_eq(trace_level_name((enum trace_level)99), "UNKNOWN");
}

/* --- stderr tracer ------------------------------------------------------- */

struct stderr_capture {
    int saved_fd;
    int read_fd;
};

static void stderr_capture_begin(struct stderr_capture *s)
{
    int fds[2];

    cr_assert_eq(pipe(fds), 0);
    s->saved_fd = dup(STDERR_FILENO);
    cr_assert_geq(s->saved_fd, 0);
    cr_assert_eq(dup2(fds[1], STDERR_FILENO), STDERR_FILENO);
    close(fds[1]);
    s->read_fd = fds[0];
}

/* Restores fd 2 and returns what was written to it, NUL-ended. */
static size_t stderr_capture_end(struct stderr_capture *s, char *out,
                                 size_t out_len)
{
    size_t n = 0;
    ssize_t r;

    cr_assert_eq(dup2(s->saved_fd, STDERR_FILENO), STDERR_FILENO);
    close(s->saved_fd);
    while (n < out_len - 1) {
        r = read(s->read_fd, out + n, out_len - 1 - n);
        if (r <= 0) {
            break;
        }
        n += (size_t)r;
    }
    close(s->read_fd);
    out[n] = '\0';
    return n;
}

static void assert_matches(const char *text, const char *pattern)
{
    regex_t re;

    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED), 0);
    cr_assert_eq(regexec(&re, text, 0, NULL, 0), 0, "'%s' !~ /%s/", text,
                 pattern);
    regfree(&re);
}

#define TIME_RE                                                        \
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "

Test(trace, stderr_line_has_time_level_component_file_line_message)
{
    static char out[4 * TRACE_LINE_BYTES_MAX];
    struct stderr_capture s;
    struct tracer t;
    struct tm tm;
    time_t when;

    trace_init_stderr(&t, TRACE_LEVEL_INFO, "broker-1");
    stderr_capture_begin(&s);
    TRACE_DEBUG(&t, "dropped");
    TRACE_WARN(&t, "partition=%s-%d fetch failed", "orders", 7);
    stderr_capture_end(&s, out, sizeof out);

    assert_matches(out, TIME_RE "WARN broker-1 test_trace\\.c:[0-9]+ "
                            "partition=orders-7 fetch failed\n$");
    /* The stamp is UTC and close to now. */
    memset(&tm, 0, sizeof tm);
    cr_assert_neq(strptime(out, "%Y-%m-%dT%H:%M:%S", &tm), NULL);
    when = timegm(&tm);
    cr_assert_lt(labs((long)(time(NULL) - when)), 60L);
}

Test(trace, stderr_line_omits_null_component_and_directories)
{
    static char out[4 * TRACE_LINE_BYTES_MAX];
    struct stderr_capture s;
    struct tracer t;

    trace_init_stderr(&t, TRACE_LEVEL_DEBUG, NULL);
    stderr_capture_begin(&s);
    trace_emitf(&t, TRACE_LEVEL_ERROR, "broker/sub/log_segment.c", 123,
                "offset=%d bad crc", 5);
    trace_emitf(&t, TRACE_LEVEL_DEBUG, "plain.c", 9, "hello");
    stderr_capture_end(&s, out, sizeof out);

    assert_matches(out, TIME_RE "ERROR log_segment\\.c:123 offset=5 bad crc\n"
                                "[^\n]+Z DEBUG plain\\.c:9 hello\n$");
}

Test(trace, stderr_long_message_is_cut_to_one_line)
{
    static char out[4 * TRACE_LINE_BYTES_MAX];
    static char big[3 * TRACE_LINE_BYTES_MAX];
    struct stderr_capture s;
    struct tracer t;
    const char *x;
    size_t n;

    memset(big, 'x', sizeof big - 1);
    trace_init_stderr(&t, TRACE_LEVEL_DEBUG, "c");
    stderr_capture_begin(&s);
    TRACE_INFO(&t, "%s", big);
    n = stderr_capture_end(&s, out, sizeof out);

    cr_assert_eq(out[n - 1], '\n');
    cr_assert_eq(strchr(out, '\n'), out + n - 1, "exactly one line");
    x = strchr(out, 'x');
    cr_assert_neq(x, NULL);
    cr_assert_eq((size_t)(out + n - 1 - x), TRACE_LINE_BYTES_MAX - 1);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++) {
        n += *s == '\n';
    }
    return n;
}

/* A call site that warns in a loop writes TRACE_BURST_LINES lines a
 * window; the next window's first line says how many were dropped. Other
 * sites and INFO lines are not held back by it. */
Test(trace, repeated_warnings_from_one_site_are_limited_and_counted)
{
    static char out[64 * TRACE_LINE_BYTES_MAX];
    struct stderr_capture s;
    struct tracer t;

    trace_init_stderr(&t, TRACE_LEVEL_INFO, "c");
    stderr_capture_begin(&s);
    for (int i = 0; i < 100; i++) {
        trace_emitf(&t, TRACE_LEVEL_WARN, "loop.c", 1, "retry %d", i);
    }
    trace_emitf(&t, TRACE_LEVEL_WARN, "other.c", 2, "another site");
    for (int i = 0; i < 20; i++) {
        trace_emitf(&t, TRACE_LEVEL_INFO, "loop.c", 1, "info %d", i);
    }
    stderr_capture_end(&s, out, sizeof out);
    cr_assert_eq(count_lines(out), TRACE_BURST_LINES + 1 + 20, "%s", out);
    assert_matches(out, "retry 9\n");
    cr_assert_null(strstr(out, "retry 10\n"));
    assert_matches(out, "another site\n");

    struct timespec wait = {TRACE_BURST_WINDOW_MS / 1000,
                            (long)(TRACE_BURST_WINDOW_MS % 1000 + 50) *
                                1000000};
    cr_assert_eq(nanosleep(&wait, NULL), 0); /* the window ends */
    stderr_capture_begin(&s);
    trace_emitf(&t, TRACE_LEVEL_WARN, "loop.c", 1, "retry again");
    stderr_capture_end(&s, out, sizeof out);
    assert_matches(out, "loop\\.c:1 retry again \\(and 90 more like it\\)\n$");
}
