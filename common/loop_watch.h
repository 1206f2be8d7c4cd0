/* Notices when a daemon's event loop stands still: a callback that runs
 * for seconds delays every heartbeat, fetch and answer behind it, and a
 * broker is fenced for it with nothing in its log to say why. A timer
 * due every LOOP_WATCH_PERIOD_MS measures how late it fires; a delay of
 * at least warn_ms is logged and counted (the log lines just before the
 * warning say what the loop was doing). Loop thread only. */
#ifndef CAIRN_COMMON_LOOP_WATCH_H
#define CAIRN_COMMON_LOOP_WATCH_H

#include <stdint.h>
#include <uv.h>

#include "common/trace.h"

#define LOOP_WATCH_PERIOD_MS 100
/* What the daemons warn at: a third of the shortest session timeout
 * people set (3 s in deploy/cluster.sh). */
#define LOOP_WATCH_WARN_MS 1000

struct loop_watch {
    uv_timer_t timer;
    uint64_t due_ns;      /* when the timer should fire next (uv_hrtime) */
    uint64_t warn_ms;
    uint64_t stalls;      /* delays of at least warn_ms */
    uint64_t max_ms;      /* the longest delay seen */
    struct tracer *tracer;
};

/* Starts watching loop; the timer does not keep the loop alive. */
void loop_watch_start(struct loop_watch *w, uv_loop_t *loop,
                      uint64_t warn_ms, struct tracer *tracer);
/* Closes the timer (the struct must live until the loop ran once more). */
void loop_watch_close(struct loop_watch *w);

#endif
