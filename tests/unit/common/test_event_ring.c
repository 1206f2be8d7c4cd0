/* The event ring (common/event_ring.h) and the tracer's event lines. */
#include "common/event_ring.h"
#include "common/trace.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static struct event_ring ring;

static void setup(void)
{
    event_ring_init(&ring);
}

static void teardown(void)
{
    event_ring_destroy(&ring);
}

/* event_ring_json(since) as a malloc'd string. */
static char *ring_json(uint64_t since, size_t *n)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    cr_assert_not_null(f);
    *n = event_ring_json(&ring, "broker-1", since, f);
    cr_assert_eq(fclose(f), 0);
    return doc;
}

TestSuite(event_ring, .init = setup, .fini = teardown);

Test(event_ring, records_in_order_with_seq_and_time)
{
    event_ring_push(&ring, 1000, "demo-0 isr 1,2,3 -> 2,3 (why)");
    event_ring_push(&ring, 1500, "demo-0 leader 1 -> 2");
    size_t n = 0;
    char *doc = ring_json(0, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(doc,
        "{\"source\":\"broker-1\",\"next\":3,\"events\":["
        "{\"seq\":1,\"time_ms\":1000,\"last_ms\":1000,\"repeats\":0,"
        "\"text\":\"demo-0 isr 1,2,3 -> 2,3 (why)\"},"
        "{\"seq\":2,\"time_ms\":1500,\"last_ms\":1500,\"repeats\":0,"
        "\"text\":\"demo-0 leader 1 -> 2\"}]}\n");
    free(doc);
    doc = ring_json(1, &n); /* only what came after seq 1 */
    cr_assert_eq(n, 1);
    cr_assert_not_null(strstr(doc, "\"seq\":2"));
    cr_assert_null(strstr(doc, "\"seq\":1,"));
    free(doc);
    doc = ring_json(UINT64_MAX, &n); /* past the end: nothing, no wrap */
    cr_assert_eq(n, 0);
    free(doc);
}

Test(event_ring, identical_lines_collapse_within_the_window)
{
    struct event_push p = event_ring_push(&ring, 1000, "same");
    cr_assert(!p.collapsed);
    for (int i = 1; i <= 33; i++) {
        p = event_ring_push(&ring, 1000 + i, "same");
        cr_assert(p.collapsed);
    }
    p = event_ring_push(&ring, 2000, "other");
    cr_assert(!p.collapsed);
    cr_assert_eq(p.ended_repeats, 33);
    /* the same line again, but after the window: a record of its own */
    p = event_ring_push(&ring, 2000 + EVENT_REPEAT_WINDOW_MS, "other");
    cr_assert(!p.collapsed);
    size_t n = 0;
    char *doc = ring_json(0, &n);
    cr_assert_eq(n, 3);
    cr_assert_not_null(strstr(doc, "\"seq\":1,\"time_ms\":1000,"
                                   "\"last_ms\":1033,\"repeats\":33,"));
    free(doc);
}

Test(event_ring, keeps_only_the_newest_cap_records)
{
    char text[32];
    for (unsigned i = 0; i < EVENT_RING_CAP + 10; i++) {
        snprintf(text, sizeof text, "event %u", i);
        event_ring_push(&ring, (int64_t)i, text);
    }
    size_t n = 0;
    char *doc = ring_json(0, &n);
    cr_assert_eq(n, EVENT_RING_CAP);
    cr_assert_not_null(strstr(doc, "{\"seq\":11,"));  /* the oldest kept */
    cr_assert_null(strstr(doc, "\"event 9\""));
    cr_assert_not_null(strstr(doc, "\"event 1033\""));
    free(doc);
}

Test(event_ring, long_and_odd_text_is_cut_and_escaped)
{
    char text[EVENT_TEXT_BYTES * 2];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    text[0] = '"';
    text[1] = '\n';
    event_ring_push(&ring, 1, text);
    size_t n = 0;
    char *doc = ring_json(0, &n);
    cr_assert_eq(n, 1);
    cr_assert_not_null(strstr(doc, "\"text\":\"\\\"\\n"));
    const char *x = strstr(doc, "xxx");
    cr_assert_not_null(x);
    cr_assert_eq(strspn(x, "x"), EVENT_TEXT_BYTES - 3);
    free(doc);
}

/* --- The tracer's event lines ------------------------------------------- */

static char emitted[8][256];
static size_t n_emitted;

static void capture_cb(struct tracer *t, enum trace_level level,
                       const char *file, int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    if (n_emitted < 8) {
        snprintf(emitted[n_emitted], sizeof emitted[0], "%s", msg);
    }
    n_emitted++;
}

Test(event_ring, tracer_records_events_and_collapses_their_repeats)
{
    struct tracer t = {TRACE_LEVEL_INFO, "test", capture_cb, NULL, &ring};
    n_emitted = 0;
    TRACE_INFO(&t, "not an event");
    for (int i = 0; i < 5; i++) {
        TRACE_INFO(&t, "event: demo-%d hw stalled", 0);
    }
    TRACE_INFO(&t, "event: demo-0 hw moves again");
    cr_assert_eq(n_emitted, 4);
    cr_assert_str_eq(emitted[0], "not an event");
    cr_assert_str_eq(emitted[1], "event: demo-0 hw stalled");
    cr_assert_str_eq(emitted[2],
                     "events: the one before repeated 4 more times");
    cr_assert_str_eq(emitted[3], "event: demo-0 hw moves again");
    size_t n = 0;
    char *doc = ring_json(0, &n);
    cr_assert_eq(n, 2); /* the plain line is not an event */
    cr_assert_not_null(strstr(doc, "\"repeats\":4,\"text\":\"demo-0 hw "
                                   "stalled\""));
    free(doc);
}

Test(event_ring, text_form_for_readers_without_json)
{
    event_ring_push(&ring, 1000, "demo-0 leader 1 -> 2");
    event_ring_push(&ring, 2000, "odd\ttopic\x7f-0 isr 1 -> 1,2");
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    cr_assert_eq(event_ring_text(&ring, 0, f), 2);
    cr_assert_eq(fclose(f), 0);
    cr_assert_str_eq(doc, "next 3\n"
                          "1 1000 1000 0 demo-0 leader 1 -> 2\n"
                          "2 2000 2000 0 odd?topic?-0 isr 1 -> 1,2\n");
    free(doc);
}
