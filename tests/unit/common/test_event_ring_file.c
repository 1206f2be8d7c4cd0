/* The event ring's routine flag, its text form read back, and its file
 * (common/event_ring.h: event_ring_persist). */
#include "common/event_ring.h"
#include "common/rc.h"
#include "common/trace.h"
#include "tests/lib/tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct event_ring ring;
static char dir[4096];
static char path[4200];

static void setup(void)
{
    event_ring_init(&ring);
    tmpdir_make(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/events.log", dir);
}

static void teardown(void)
{
    event_ring_destroy(&ring);
    tmpdir_remove(dir);
}

TestSuite(event_file, .init = setup, .fini = teardown);

static char *ring_json(struct event_ring *r, uint64_t since, size_t *n)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    cr_assert_not_null(f);
    *n = event_ring_json(r, "broker-1", since, f);
    cr_assert_eq(fclose(f), 0);
    return doc;
}

static char *ring_text(struct event_ring *r, size_t *n)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    cr_assert_not_null(f);
    *n = event_ring_text(r, 0, f);
    cr_assert_eq(fclose(f), 0);
    return doc;
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    char *buf = calloc(1, EVENT_FILE_BYTES_MAX + 1);
    cr_assert_not_null(buf);
    size_t n = fread(buf, 1, EVENT_FILE_BYTES_MAX, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++) {
        n += *s == '\n';
    }
    return n;
}

/* --- Routine events ------------------------------------------------------ */

Test(event_file, routine_events_say_so_in_json_and_text)
{
    event_ring_push(&ring, 1000, "demo-0 leader 1 -> 2");
    event_ring_push_routine(&ring, 1100, "coordinating the groups of "
                                         "__consumer_offsets-3");
    size_t n = 0;
    char *doc = ring_json(&ring, 0, &n);
    cr_assert_eq(n, 2);
    cr_assert_not_null(strstr(doc, "\"repeats\":0,\"text\":\"demo-0 leader"));
    cr_assert_not_null(strstr(doc, "\"repeats\":0,\"routine\":true,"
                                   "\"text\":\"coordinating"));
    free(doc);
    doc = ring_text(&ring, &n);
    cr_assert_str_eq(doc, "next 3\n"
                          "1 1000 1000 0 demo-0 leader 1 -> 2\n"
                          "2 1100 1100 0r coordinating the groups of "
                          "__consumer_offsets-3\n");
    free(doc);
}

Test(event_file, a_routine_line_does_not_fold_into_a_plain_one)
{
    event_ring_push(&ring, 1000, "same");
    struct event_push p = event_ring_push_routine(&ring, 1001, "same");
    cr_assert(!p.collapsed);
    p = event_ring_push_routine(&ring, 1002, "same");
    cr_assert(p.collapsed);
}

static void quiet_cb(struct tracer *t, enum trace_level level,
                     const char *file, int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    (void)msg;
}

Test(event_file, tracer_routine_prefix_marks_the_record)
{
    struct tracer t = {TRACE_LEVEL_INFO, "test", quiet_cb, NULL, &ring};
    TRACE_INFO(&t, "routine event: __consumer_offsets-0 loaded");
    TRACE_INFO(&t, "event: demo-0 hw stalled");
    TRACE_INFO(&t, "event: __consumer_offsets-7 leader 1 -> 2 epoch 3 -> 4");
    size_t n = 0;
    char *doc = ring_text(&ring, &n);
    cr_assert_eq(n, 3);
    cr_assert_not_null(strstr(doc, "0r __consumer_offsets-0 loaded\n"));
    cr_assert_not_null(strstr(doc, "0r __consumer_offsets-7 leader 1 -> 2"),
                       "an internal topic's event is routine by its name");
    cr_assert_not_null(strstr(doc, " 0 demo-0 hw stalled\n"));
    free(doc);
}

/* --- Parsing the text form ----------------------------------------------- */

static bool parse(const char *line, struct event_line *l)
{
    return event_ring_parse_line(line, strlen(line), l);
}

Test(event_file, parses_its_own_lines_and_refuses_others)
{
    struct event_line l;
    cr_assert(parse("7 1000 1500 3r some text", &l));
    cr_assert_eq(l.seq, 7);
    cr_assert_eq(l.time_ms, 1000);
    cr_assert_eq(l.last_ms, 1500);
    cr_assert_eq(l.repeats, 3);
    cr_assert(l.routine);
    cr_assert_str_eq(l.text, "some text");
    cr_assert(parse("8 1 1 0 ", &l)); /* an empty text */
    cr_assert_not(l.routine);
    const char *bad[] = {
        "",                         /* nothing */
        "0 1 1 0 seq zero",         /* seqs start at 1 */
        "x 1 1 0 text",             /* not a number */
        "-1 1 1 0 text",            /* signs are not ours */
        "1 2 1 0 text",             /* last before first */
        "1 1 1 0x text",            /* an unknown flag */
        "1 1 1 4294967296 text",    /* repeats above 32 bits */
        "1  1 1 0 text",            /* two spaces */
        "1 1 1 0",                  /* no text at all */
        "1 1 1 0 tab\there",        /* a control byte */
        "99999999999999999999 1 1 0 t", /* 20 digits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_not(parse(bad[i], &l), "took '%s'", bad[i]);
    }
    char longer[EVENT_TEXT_BYTES + 32];
    size_t k = (size_t)snprintf(longer, sizeof longer, "1 1 1 0 ");
    memset(longer + k, 'x', EVENT_TEXT_BYTES);
    longer[k + EVENT_TEXT_BYTES] = '\0';
    cr_assert_not(parse(longer, &l), "a text longer than a record holds");
}

/* --- The file ------------------------------------------------------------ */

Test(event_file, events_survive_a_restart_and_seqs_keep_growing)
{
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, path, &ld), RC_OK);
    cr_assert_eq(ld.loaded, 0);
    event_ring_push(&ring, 1000, "demo-0 leader 1 -> 2");
    event_ring_push_routine(&ring, 1100, "__consumer_offsets-3 loaded");
    for (int i = 0; i < 5; i++) {
        event_ring_push(&ring, 1200 + i, "demo-0 hw stalled");
    }
    event_ring_destroy(&ring); /* the process stops */

    struct event_ring again;
    event_ring_init(&again);
    cr_assert_eq(event_ring_persist(&again, path, &ld), RC_OK);
    cr_assert_eq(ld.skipped, 0);
    size_t n = 0;
    char *doc = ring_text(&again, &n);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(doc, "next 4\n"
                          "1 1000 1000 0 demo-0 leader 1 -> 2\n"
                          "2 1100 1100 0r __consumer_offsets-3 loaded\n"
                          "3 1200 1204 4 demo-0 hw stalled\n");
    free(doc);
    event_ring_push(&again, 5000, "demo-0 hw moves again");
    doc = ring_text(&again, &n);
    cr_assert_not_null(strstr(doc, "\n4 5000 5000 0 demo-0 hw moves again\n"),
                       "%s", doc);
    free(doc);
    event_ring_destroy(&again);
    event_ring_init(&ring); /* for teardown */
}

Test(event_file, a_damaged_file_gives_what_parses)
{
    spit(path, "1 1000 1000 0 first\n"
               "garbage that is no event\n"
               "2 1100 1100 0 tab\there\n"
               "3 1200 1200 0 third\n"
               "2 1300 1300 0 goes back\n"
               "3 1200 1250 2 third\n" /* its repeats grew */
               "\n"
               "9 1400 1400 0 cut short by a cra");
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, path, &ld), RC_OK);
    cr_assert_eq(ld.loaded, 3);
    cr_assert_eq(ld.skipped, 5);
    size_t n = 0;
    char *doc = ring_text(&ring, &n);
    cr_assert_eq(n, 2, "the gap at seq 2 is no record");
    cr_assert_str_eq(doc, "next 4\n"
                          "1 1000 1000 0 first\n"
                          "3 1200 1250 2 third\n");
    free(doc);
    char *file = slurp(path); /* rewritten clean at load */
    cr_assert_str_eq(file, "1 1000 1000 0 first\n3 1200 1250 2 third\n");
    free(file);
}

Test(event_file, the_file_stays_bounded_and_keeps_the_newest)
{
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, path, &ld), RC_OK);
    char text[32];
    unsigned total = 3 * EVENT_FILE_LINES_MAX + 7;
    for (unsigned i = 0; i < total; i++) {
        snprintf(text, sizeof text, "event %u", i);
        event_ring_push(&ring, (int64_t)i, text);
        if (i % 97 == 0) {
            char *file = slurp(path);
            cr_assert_leq(count_lines(file), EVENT_FILE_LINES_MAX);
            free(file);
        }
    }
    event_ring_destroy(&ring);
    event_ring_init(&ring);
    cr_assert_eq(event_ring_persist(&ring, path, &ld), RC_OK);
    size_t n = 0;
    char *doc = ring_json(&ring, 0, &n);
    cr_assert_eq(n, EVENT_RING_CAP);
    snprintf(text, sizeof text, "\"event %u\"", total - 1);
    cr_assert_not_null(strstr(doc, text));
    snprintf(text, sizeof text, "\"event %u\"", total - EVENT_RING_CAP);
    cr_assert_not_null(strstr(doc, text), "the oldest of the last CAP");
    snprintf(text, sizeof text, "\"next\":%u,", total + 1);
    cr_assert_not_null(strstr(doc, text));
    free(doc);
}

Test(event_file, a_file_that_cannot_be_written_leaves_the_ring_working)
{
    char bad[4300];
    snprintf(bad, sizeof bad, "%s/no-such-dir/events.log", dir);
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, bad, &ld), RC_IO);
    cr_assert_neq(ld.error, 0);
    struct event_push p = event_ring_push(&ring, 1, "still recorded");
    cr_assert_eq(p.persist_errno, 0, "nothing to report: it never started");
    size_t n = 0;
    char *doc = ring_json(&ring, 0, &n);
    cr_assert_eq(n, 1);
    free(doc);
}

Test(event_file, a_failed_write_is_reported_once_then_memory_only)
{
    struct event_load ld;
    cr_assert_eq(event_ring_persist(&ring, path, &ld), RC_OK);
    event_ring_push(&ring, 1, "written");
    /* The file's descriptor gone bad, as a failing disk's would. */
    cr_assert_eq(close(ring.fd), 0);
    struct event_push p = event_ring_push(&ring, 2, "not written");
    cr_assert_eq(p.persist_errno, EBADF);
    p = event_ring_push(&ring, 3, "nor this");
    cr_assert_eq(p.persist_errno, 0, "told once");
    cr_assert_eq(ring.fd, -1);
    size_t n = 0;
    char *doc = ring_json(&ring, 0, &n);
    cr_assert_eq(n, 3);
    free(doc);
}
