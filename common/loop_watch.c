/* The event loop's stalls (common/loop_watch.h). */
#include "common/loop_watch.h"

#include <inttypes.h>

static void watch_cb(uv_timer_t *t)
{
    struct loop_watch *w = t->data;
    uint64_t now = uv_hrtime();
    uint64_t late_ms = now > w->due_ns ? (now - w->due_ns) / 1000000u : 0;
    if (late_ms > w->max_ms) {
        w->max_ms = late_ms;
    }
    if (late_ms >= w->warn_ms) {
        w->stalls++;
        TRACE_WARN(w->tracer, "the event loop stood still for %" PRIu64
                   " ms: nothing was read, sent or timed meanwhile "
                   "(heartbeats, fetches, answers)", late_ms);
    }
    w->due_ns = now + LOOP_WATCH_PERIOD_MS * 1000000ull;
}

void loop_watch_start(struct loop_watch *w, uv_loop_t *loop,
                      uint64_t warn_ms, struct tracer *tracer)
{
    *w = (struct loop_watch){.warn_ms = warn_ms, .tracer = tracer};
    uv_timer_init(loop, &w->timer);
    w->timer.data = w;
    w->due_ns = uv_hrtime() + LOOP_WATCH_PERIOD_MS * 1000000ull;
    uv_timer_start(&w->timer, watch_cb, LOOP_WATCH_PERIOD_MS,
                   LOOP_WATCH_PERIOD_MS);
    uv_unref((uv_handle_t *)&w->timer);
}

void loop_watch_close(struct loop_watch *w)
{
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, NULL);
}
