/* The event loop's stall watch (common/loop_watch.h). */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "common/loop_watch.h"

static int warnings;
static char last[256];

static void capture_cb(struct tracer *t, enum trace_level level,
                       const char *file, int line, const char *msg)
{
    (void)t;
    (void)file;
    (void)line;
    if (level == TRACE_LEVEL_WARN) {
        warnings++;
        snprintf(last, sizeof last, "%s", msg);
    }
}

struct run {
    struct loop_watch *w;
    uv_timer_t block;
    uv_timer_t end;
    uint64_t block_ms; /* how long the blocking callback spins */
};

static void block_cb(uv_timer_t *t)
{
    struct run *r = t->data;
    uint64_t until = uv_hrtime() + r->block_ms * 1000000ull;
    while (uv_hrtime() < until) {
    }
}

static void end_cb(uv_timer_t *t)
{
    struct run *r = t->data;
    uv_close((uv_handle_t *)&r->block, NULL);
    uv_close((uv_handle_t *)&r->end, NULL);
    loop_watch_close(r->w);
}

/* Runs a loop with the watch (warning at warn_ms) for 1 s; a callback
 * due at 50 ms spins for block_ms. */
static void run_loop(struct loop_watch *w, uint64_t warn_ms,
                     uint64_t block_ms)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct tracer t = {TRACE_LEVEL_INFO, "test", capture_cb, NULL, NULL};
    warnings = 0;
    loop_watch_start(w, &loop, warn_ms, &t);
    struct run r = {.w = w, .block_ms = block_ms};
    uv_timer_init(&loop, &r.block);
    uv_timer_init(&loop, &r.end);
    r.block.data = r.end.data = &r;
    uv_timer_start(&r.block, block_cb, 50, 0);
    uv_timer_start(&r.end, end_cb, 1000, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0);
}

Test(loop_watch, a_callback_that_blocks_the_loop_is_told_and_counted)
{
    struct loop_watch w;
    run_loop(&w, 300, 700);
    cr_assert_eq(w.stalls, 1, "%llu stalls", (unsigned long long)w.stalls);
    cr_assert_geq(w.max_ms, 550, "max %llu ms", (unsigned long long)w.max_ms);
    cr_assert_eq(warnings, 1);
    cr_assert(strstr(last, "stood still for") != NULL, "%s", last);
}

Test(loop_watch, a_loop_that_keeps_turning_is_not_told)
{
    struct loop_watch w;
    /* A threshold above a busy machine's own hiccups (the blocking test
     * needs less: its stall is 700 ms). */
    run_loop(&w, 500, 10);
    cr_assert_eq(w.stalls, 0);
    cr_assert_lt(w.max_ms, 500);
    cr_assert_eq(warnings, 0);
}
