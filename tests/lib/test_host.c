/* A partition host for tests (tests/lib/test_host.h). */
#include "tests/lib/test_host.h"

#include <stdio.h>
#include <string.h>

static void emit(struct tracer *t, enum trace_level level, const char *file,
                 int line, const char *msg)
{
    struct test_host *h = t->data;
    (void)level;
    (void)file;
    (void)line;
    if (strncmp(msg, "event: ", 7) == 0) {
        h->events++;
        snprintf(h->last_event, sizeof h->last_event, "%s", msg);
        size_t used = strlen(h->event_text);
        snprintf(h->event_text + used, sizeof h->event_text - used, "%s\n",
                 msg);
    }
}

static int64_t now_ms(void *ctx)
{
    const struct test_host *h = ctx;
    return h->now_ms;
}

static int64_t wall_ms(void *ctx)
{
    const struct test_host *h = ctx;
    return TEST_HOST_WALL_BASE_MS + h->now_ms;
}

static void wake(void *ctx, struct partition *p)
{
    struct test_host *h = ctx;
    (void)p;
    h->wakes++;
}

static void isr_work(void *ctx, struct partition *p)
{
    struct test_host *h = ctx;
    (void)p;
    h->isr_works++;
}

static void alter_isr(void *ctx, struct partition *p,
                      const struct meta_replica_set *isr)
{
    struct test_host *h = ctx;
    h->alters++;
    h->proposed = *isr;
    h->last = p;
}

static void leave_isr(void *ctx, struct partition *p, int64_t offset)
{
    struct test_host *h = ctx;
    h->leaves++;
    h->leave_offset = offset;
    h->last = p;
}

static void follower_damaged(void *ctx, struct partition *p)
{
    struct test_host *h = ctx;
    h->follower_damages++;
    h->last = p;
}

void test_host_init(struct test_host *h, int32_t self)
{
    *h = (struct test_host){.host = {.self = self,
                                     .tracer = &h->tracer,
                                     .ctx = h,
                                     .now_ms = now_ms,
                                     .wall_ms = wall_ms,
                                     .wake = wake,
                                     .alter_isr = alter_isr,
                                     .leave_isr = leave_isr,
                                     .isr_work = isr_work,
                                     .follower_damaged = follower_damaged}};
    h->tracer = (struct tracer){.level = TRACE_LEVEL_INFO, .emit = emit,
                                .data = h};
}
