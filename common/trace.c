/* Tracer plumbing (common/trace.h): formatting into a bounded stack buffer,
 * level names, and the stderr tracer. Any thread: the only state kept
 * between calls is the stderr tracer's count of recent WARN and ERROR
 * lines per call site, under a mutex. The stderr tracer is the one adapter in this file: it reads
 * the wall clock and writes each line to fd 2 with a single write(2), so
 * lines from several threads do not interleave (on a pipe, up to PIPE_BUF
 * bytes, POSIX guarantees it). */
#include "common/trace.h"

#include "common/assert.h"
#include "common/event_ring.h"
#include "common/limits.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The stderr tracer cuts the component and file name to these lengths, so
 * "TIME LEVEL component file:line " always fits in TRACE__PREFIX_BYTES_MAX
 * and only the message itself is ever cut. */
#define TRACE__COMPONENT_BYTES_MAX 64
#define TRACE__FILE_BYTES_MAX 96
#define TRACE__PREFIX_BYTES_MAX 256u

/* "2026-11-30T03:25:07.123Z" plus its NUL. */
#define TRACE__TIME_BYTES 25u

_Static_assert(24 + 1 + 5 + 1 + TRACE__COMPONENT_BYTES_MAX + 1 +
                       TRACE__FILE_BYTES_MAX + 1 + 11 + 1 <
                   TRACE__PREFIX_BYTES_MAX,
               "the stderr line prefix must fit its buffer");

static const char *const trace_level_names[] = {
    [TRACE_LEVEL_DEBUG] = "DEBUG",
    [TRACE_LEVEL_INFO] = "INFO",
    [TRACE_LEVEL_WARN] = "WARN",
    [TRACE_LEVEL_ERROR] = "ERROR",
    [TRACE_LEVEL_OFF] = "OFF",
};

static void trace__batch_ring(struct tracer *t);
static void trace__register_exit(void);

/* Records msg in t->events if it is an event; false when the ring folded
 * it into the one before (then it is not emitted). */
static bool record_event(struct tracer *t, enum trace_level level,
                         const char *file, int line, const char *msg)
{
    size_t plen = sizeof TRACE_EVENT_PREFIX - 1;
    size_t rlen = sizeof TRACE_ROUTINE_EVENT_PREFIX - 1;
    bool routine = strncmp(msg, TRACE_ROUTINE_EVENT_PREFIX, rlen) == 0;
    if (!routine && strncmp(msg, TRACE_EVENT_PREFIX, plen) != 0) {
        return true;
    }
    const char *text = msg + (routine ? rlen : plen);
    /* An event about an internal topic ("__consumer_offsets-7 leader 1
     * -> 2 ...") is the cluster's housekeeping whoever tells it. */
    routine |= strncmp(text, TRACE_INTERNAL_TOPIC_PREFIX,
                       sizeof TRACE_INTERNAL_TOPIC_PREFIX - 1) == 0;
    struct timespec ts;
    int64_t now_ms = 0;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0) {
        now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    struct event_push p = routine
                              ? event_ring_push_routine(t->events, now_ms, text)
                              : event_ring_push(t->events, now_ms, text);
    if (p.persist_errno != 0) {
        char err[160];
        snprintf(err, sizeof err, "events: cannot write the events file "
                 "(%s); events are kept in memory only from now on",
                 strerror(p.persist_errno));
        t->emit(t, TRACE_LEVEL_WARN, file, line, err);
    }
    if (p.collapsed) {
        return false;
    }
    if (p.ended_repeats > 0) {
        char rep[64];
        snprintf(rep, sizeof rep, "events: the one before repeated %u "
                 "more times", p.ended_repeats);
        t->emit(t, level, file, line, rep);
    }
    return true;
}

void trace_emitf(struct tracer *t, enum trace_level level, const char *file,
                 int line, const char *fmt, ...)
{
    char msg[TRACE_LINE_BYTES_MAX];
    va_list ap;
    int n;

    /* The macros test the level already; direct callers get the same. */
    if (t == NULL || t->emit == NULL || level < t->level) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof msg, fmt, ap); /* cuts at sizeof msg - 1 */
    va_end(ap);
    if (n < 0) {
        msg[0] = '\0'; /* an encoding error leaves msg unspecified */
    }
    if (t->events != NULL) {
        trace__batch_ring(t);
    }
    if (t->events != NULL && !record_event(t, level, file, line, msg)) {
        return;
    }
    t->emit(t, level, file, line, msg);
}

int trace_level_parse(const char *s)
{
    size_t i;

    if (s == NULL) {
        return -1;
    }
    for (i = 0; i < ARRAY_LEN(trace_level_names); i++) {
        if (strcasecmp(s, trace_level_names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

const char *trace_level_name(enum trace_level level)
{
    if ((size_t)level >= ARRAY_LEN(trace_level_names)) {
        return "UNKNOWN";
    }
    return trace_level_names[level];
}

/* "dir/sub/file.c" -> "file.c". */
static const char *trace_basename(const char *file)
{
    const char *slash;

    if (file == NULL) {
        return "?";
    }
    slash = strrchr(file, '/');
    return slash != NULL ? slash + 1 : file;
}

/* UTC ISO-8601 with milliseconds into buf[TRACE__TIME_BYTES]. */
static void trace_format_time(char *buf)
{
    struct timespec ts;
    struct tm tm;
    int n;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 ||
        gmtime_r(&ts.tv_sec, &tm) == NULL) {
        memcpy(buf, "0000-00-00T00:00:00.000Z", TRACE__TIME_BYTES);
        return;
    }
    n = snprintf(buf, TRACE__TIME_BYTES, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000));
    ASSERT(n > 0);
}

/* --- Repeated warnings --------------------------------------------------- */

/* One call site's recent WARN and ERROR lines: at most TRACE_BURST_LINES
 * per TRACE_BURST_WINDOW_MS; the rest are counted and the count goes out
 * with the site's next line. Keyed by file pointer and line (the macros
 * pass __FILE__ literals). A fixed table: a site that finds no free slot
 * takes over the probed one. */
#define TRACE__SITES 64u
#define TRACE__PROBES 4u

struct trace__site {
    const char *file;
    int line;
    uint64_t window_ms;
    unsigned lines;
    unsigned suppressed;
};

static struct trace__site trace__sites[TRACE__SITES];
static pthread_mutex_t trace__sites_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t trace__mono_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* False: drop this line. *suppressed: lines dropped at this site since its
 * last line, to be reported with this one. */
static bool trace__admit(const char *file, int line, unsigned *suppressed)
{
    uint64_t now = trace__mono_ms();
    size_t h = ((size_t)(uintptr_t)file ^ (size_t)line * 2654435761u) %
               TRACE__SITES;
    bool admit = true;

    *suppressed = 0;
    pthread_mutex_lock(&trace__sites_lock);
    struct trace__site *s = &trace__sites[h];
    for (size_t i = 0; i < TRACE__PROBES; i++) {
        struct trace__site *p = &trace__sites[(h + i) % TRACE__SITES];
        if ((p->file == file && p->line == line) || p->file == NULL) {
            s = p;
            break;
        }
    }
    if (s->file != file || s->line != line) {
        *s = (struct trace__site){.file = file, .line = line,
                                  .window_ms = now};
    }
    if (now - s->window_ms >= TRACE_BURST_WINDOW_MS) {
        s->window_ms = now;
        s->lines = 0;
    }
    if (s->lines < TRACE_BURST_LINES) {
        s->lines++;
        *suppressed = s->suppressed;
        s->suppressed = 0;
    } else {
        s->suppressed++;
        admit = false;
    }
    pthread_mutex_unlock(&trace__sites_lock);
    return admit;
}

/* --- Batches ---------------------------------------------------------- */

/* Event rings a batch holds lines of, with a tracer to tell of a failed
 * write: one in practice (the process's own). */
#define TRACE__BATCH_RINGS 4u

struct trace__batch {
    unsigned depth;
    size_t len;
    size_t n_rings;
    struct event_ring *rings[TRACE__BATCH_RINGS];
    struct tracer *tellers[TRACE__BATCH_RINGS];
    char buf[TRACE_BATCH_BYTES];
};

static _Thread_local struct trace__batch *trace__batch;

static void trace__write(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, buf, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return; /* nowhere left to report a failed write to stderr */
        }
        buf += w;
        len -= (size_t)w;
    }
}

static void trace__batch_flush(struct trace__batch *b)
{
    trace__write(b->buf, b->len);
    b->len = 0;
}

/* t's ring takes part in this thread's batch from its first event on. */
static void trace__batch_ring(struct tracer *t)
{
    struct trace__batch *b = trace__batch;
    if (b == NULL || b->depth == 0) {
        return;
    }
    for (size_t i = 0; i < b->n_rings; i++) {
        if (b->rings[i] == t->events) {
            return;
        }
    }
    if (b->n_rings < TRACE__BATCH_RINGS) {
        event_ring_batch_begin(t->events);
        b->rings[b->n_rings] = t->events;
        b->tellers[b->n_rings++] = t;
    }
}

void trace_batch_begin(void)
{
    if (trace__batch == NULL) { /* once per thread, not per batch */
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        (void)pthread_once(&once, trace__register_exit);
        trace__batch = calloc(1, sizeof *trace__batch);
    }
    if (trace__batch != NULL) { /* without one, lines go one by one */
        trace__batch->depth++;
    }
}

void trace_batch_flush(void)
{
    struct trace__batch *b = trace__batch;
    if (b != NULL) {
        trace__batch_flush(b);
        for (size_t i = 0; i < b->n_rings; i++) {
            event_ring_batch_flush(b->rings[i]);
        }
    }
}

/* A process that calls exit() inside a batch (on the thread that holds
 * it, as daemons do from their loop) still writes its lines. */
static void trace__at_exit(void)
{
    trace_batch_flush();
}

static void trace__register_exit(void)
{
    (void)atexit(trace__at_exit);
    assert_before_abort = trace_batch_flush;
}

void trace_batch_end(void)
{
    struct trace__batch *b = trace__batch;
    if (b == NULL || b->depth == 0 || --b->depth > 0) {
        return;
    }
    trace__batch_flush(b);
    size_t n = b->n_rings;
    b->n_rings = 0;
    for (size_t i = 0; i < n; i++) {
        int err = event_ring_batch_end(b->rings[i]);
        struct tracer *t = b->tellers[i];
        if (err != 0 && t->emit != NULL) {
            char msg[160];
            snprintf(msg, sizeof msg, "events: cannot write the events file "
                     "(%s); events are kept in memory only from now on",
                     strerror(err));
            t->emit(t, TRACE_LEVEL_WARN, __FILE__, __LINE__, msg);
        }
    }
}

static void trace_stderr_emit_cb(struct tracer *t, enum trace_level level,
                                 const char *file, int line, const char *msg)
{
    char buf[TRACE__PREFIX_BYTES_MAX + TRACE_LINE_BYTES_MAX];
    char when[TRACE__TIME_BYTES];
    char more[48] = "";
    const char *component = t->component != NULL ? t->component : "";
    const char *sep = t->component != NULL ? " " : "";
    size_t len;
    int n;
    unsigned suppressed = 0;

    if (level >= TRACE_LEVEL_WARN && !trace__admit(file, line, &suppressed)) {
        return;
    }
    if (suppressed > 0) {
        snprintf(more, sizeof more, " (and %u more like it)", suppressed);
    }
    trace_format_time(when);
    /* Leave one byte for the newline: snprintf cuts at sizeof buf - 2. */
    n = snprintf(buf, sizeof buf - 1, "%s %s %.*s%s%.*s:%d %s%s", when,
                 trace_level_name(level), TRACE__COMPONENT_BYTES_MAX,
                 component, sep, TRACE__FILE_BYTES_MAX, trace_basename(file),
                 line, msg, more);
    if (n < 0) {
        return;
    }
    len = (size_t)n < sizeof buf - 2 ? (size_t)n : sizeof buf - 2;
    buf[len++] = '\n';
    struct trace__batch *b = trace__batch;
    if (b == NULL || b->depth == 0) {
        trace__write(buf, len);
        return;
    }
    if (sizeof b->buf - b->len < len) {
        trace__batch_flush(b);
    }
    memcpy(b->buf + b->len, buf, len);
    b->len += len;
}

void trace_init_stderr(struct tracer *t, enum trace_level level,
                       const char *component)
{
    ASSERT(t != NULL);
    t->level = level;
    t->component = component;
    t->emit = trace_stderr_emit_cb;
    t->data = NULL;
    t->events = NULL;
}
