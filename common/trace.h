/* Logging through an injected tracer: every component takes a
 * `struct tracer *` so tests can capture or silence it. The macros test the
 * level before formatting, so a disabled level costs one comparison.
 * Messages carry key=value context:
 *     TRACE_WARN(t, "partition=%s-%d offset=%lld truncated", ...);
 * A NULL tracer is silent. Emitting is thread-safe for the stderr tracer
 * (one write(2) per line). */
#ifndef CAIRN_COMMON_TRACE_H
#define CAIRN_COMMON_TRACE_H

#include <stdarg.h>

enum trace_level {
    TRACE_LEVEL_DEBUG = 0,
    TRACE_LEVEL_INFO = 1,
    TRACE_LEVEL_WARN = 2,
    TRACE_LEVEL_ERROR = 3,
    TRACE_LEVEL_OFF = 4
};

struct tracer;
struct event_ring;
typedef void (*trace_emit_cb)(struct tracer *t, enum trace_level level,
                              const char *file, int line, const char *msg);

struct tracer {
    enum trace_level level; /* messages below this level are dropped */
    const char *component;  /* e.g. "broker-1"; may be NULL */
    trace_emit_cb emit;     /* receives the formatted line */
    void *data;             /* the emitter's own state */
    struct event_ring *events; /* NULL, or where "event: " lines also go */
};

/* Formats and hands the message to t->emit. Use the macros instead.
 * A message that starts with TRACE_EVENT_PREFIX is an event, one that
 * starts with TRACE_ROUTINE_EVENT_PREFIX a routine event (housekeeping
 * that readers leave out by default, common/event_ring.h): with
 * t->events set it is also recorded there, and a repeat that the ring
 * collapses (common/event_ring.h) is not emitted; the first different
 * event after a run of repeats is preceded by a line saying how many,
 * and a failure to write the ring's file is told once, as a warning. */
void trace_emitf(struct tracer *t, enum trace_level level, const char *file,
                 int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* WARN and ERROR lines from one call site: at most TRACE_BURST_LINES per
 * TRACE_BURST_WINDOW_MS reach stderr; the rest are counted, and the
 * site's next line says "(and N more like it)". */
#define TRACE_BURST_LINES 10u
#define TRACE_BURST_WINDOW_MS 1000u

/* A tracer that writes "TIME LEVEL component file:line msg" to stderr,
 * repeated warnings and errors limited as above. */
void trace_init_stderr(struct tracer *t, enum trace_level level,
                       const char *component);

/* Lines the stderr tracer emits on this thread between begin and end go
 * out TRACE_BATCH_BYTES to a write(2), the rest at the end, and so do the
 * lines of the event files its tracers record to (event_ring_batch_begin()):
 * for a burst of thousands of lines (a controller moving 30,000 leaders,
 * a broker taking their roles), which a write(2) each made cost more than
 * the work they tell of. Nests. A process that dies inside a batch loses
 * its lines, so a batch is one burst, not a loop turn. */
#define TRACE_BATCH_BYTES (64u * 1024)
void trace_batch_begin(void);
void trace_batch_end(void);
/* Writes this thread's batched lines now: an assertion about to abort, a
 * daemon about to _exit(), say what led to it (exit() does it itself). */
void trace_batch_flush(void);

/* Parses "debug", "info", "warn", "error", "off"; returns -1 if unknown. */
int trace_level_parse(const char *s);
const char *trace_level_name(enum trace_level level);

#define TRACE_EVENT_PREFIX "event: "
#define TRACE_ROUTINE_EVENT_PREFIX "routine event: "
/* An event whose text starts with this (an internal topic's name, as in
 * "__consumer_offsets-7 leader 1 -> 2 ...") is routine too. */
#define TRACE_INTERNAL_TOPIC_PREFIX "__"

#define TRACE__AT(t, lvl, ...)                                         \
    do {                                                               \
        struct tracer *trace__t = (t);                                 \
        if (trace__t != NULL && trace__t->level <= (lvl)) {            \
            trace_emitf(trace__t, (lvl), __FILE__, __LINE__,           \
                        __VA_ARGS__);                                  \
        }                                                              \
    } while (0)

#define TRACE_DEBUG(t, ...) TRACE__AT(t, TRACE_LEVEL_DEBUG, __VA_ARGS__)
#define TRACE_INFO(t, ...) TRACE__AT(t, TRACE_LEVEL_INFO, __VA_ARGS__)
#define TRACE_WARN(t, ...) TRACE__AT(t, TRACE_LEVEL_WARN, __VA_ARGS__)
#define TRACE_ERROR(t, ...) TRACE__AT(t, TRACE_LEVEL_ERROR, __VA_ARGS__)

#endif
