/* The descriptor budget of the partition logs (broker/log/log_fds.c):
 * with more logs than the budget, idle logs close their segment files and
 * open them again when used, so appends and reads of any log still work
 * and the files open stay within the budget; a log held by a read span
 * or with unsynced bytes keeps its files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"

#define LOGS 40
#define BUDGET 8

static struct log_fixture f;
static struct log *logs[LOGS];

static void setup(void)
{
    log_fixture_setup(&f);
    memset(logs, 0, sizeof logs);
}

static void teardown(void)
{
    for (int i = 0; i < LOGS; i++) {
        if (logs[i] != NULL) {
            log_close(logs[i]);
        }
    }
    (void)uv_run(&f.loop, UV_RUN_DEFAULT);
    log_fds_set_max(0);
    log_fixture_teardown(&f);
}

TestSuite(log_fds, .init = setup, .fini = teardown, .timeout = 60);

static void open_all(void)
{
    for (int i = 0; i < LOGS; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/p-%d", f.dir, i);
        cr_assert_eq(mkdir(dir, 0755), 0);
        cr_assert_eq(log_open(&logs[i], dir, &f.cfg, &f.loop, &f.tracer),
                     RC_OK);
    }
}

/* Appends a batch of i's own to log i, made durable. */
static void append(int i, struct built_batch *b)
{
    *b = batch_build(2, 30, 1700000000000, (uint32_t)i + 1);
    struct log_append_info info;
    cr_assert_eq(log_append(logs[i], b->bytes, b->len, 0, 1700000000000,
                            &info),
                 RC_OK, "log %d", i);
    f.log = logs[i]; /* the fixture's bounded wait, on this log */
    int rv = log_fixture_wait_durable(&f, log_end_offset(logs[i]));
    f.log = NULL;
    cr_assert_eq(rv, RC_OK, "log %d synced", i);
}

Test(log_fds, more_logs_than_the_budget_all_append_and_read)
{
    size_t before = log_fds_open();
    log_fds_set_max(before + BUDGET);
    open_all();
    cr_assert_leq(log_fds_open(), before + BUDGET + 1,
                  "opening parks the idle ones: %zu open", log_fds_open());
    struct built_batch b[LOGS];
    for (int i = 0; i < LOGS; i++) {
        append(i, &b[i]);
    }
    uint64_t reopens = log_fds_reopens();
    for (int i = 0; i < LOGS; i++) {
        struct log_span span;
        cr_assert_eq(log_read(logs[i], 0, 1 << 20, INT64_MAX, &span), RC_OK);
        size_t len = 0;
        uint8_t *got = log_fixture_span_bytes(&span, &len);
        cr_assert_eq(len, b[i].len, "log %d", i);
        cr_assert(batch_same_payload(got, &b[i]), "log %d: its own", i);
        free(got);
        log_span_release(&span);
        cr_assert_leq(log_fds_open(), before + BUDGET + 1);
    }
    cr_assert_geq(log_fds_reopens() - reopens, LOGS - BUDGET,
                  "the cold ones were opened again");
    for (int i = 0; i < LOGS; i++) {
        built_batch_free(&b[i]);
    }
}

Test(log_fds, a_held_log_keeps_its_files)
{
    size_t before = log_fds_open();
    log_fds_set_max(before + 1);
    open_all();
    struct built_batch b;
    append(0, &b);
    struct log_span span;
    cr_assert_eq(log_read(logs[0], 0, 1 << 20, INT64_MAX, &span), RC_OK);
    /* Every other log used since: log 0 is the least recently used, but
     * the span holds it. */
    for (int i = 1; i < LOGS; i++) {
        struct log_span other;
        cr_assert_eq(log_read(logs[i], 0, 1 << 20, INT64_MAX, &other),
                     RC_OK);
        log_span_release(&other);
    }
    size_t len = 0;
    uint8_t *got = log_fixture_span_bytes(&span, &len);
    cr_assert_eq(len, b.len, "the span's file stayed open");
    cr_assert(batch_same_payload(got, &b));
    free(got);
    log_span_release(&span);
    built_batch_free(&b);
}

Test(log_fds, no_budget_closes_nothing)
{
    log_fds_set_max(0);
    size_t before = log_fds_open();
    uint64_t parks = log_fds_parks();
    open_all();
    cr_assert_eq(log_fds_open(), before + LOGS);
    cr_assert_eq(log_fds_parks(), parks);
}

/* A follower's cut at or past its log end touches no file: a parked log
 * stays parked (a broker following 33,000 new leaders reopened a log's
 * files for each such cut, and parked another to make room). */
Test(log_fds, a_cut_at_the_log_end_leaves_a_parked_log_parked)
{
    size_t before = log_fds_open();
    log_fds_set_max(before + BUDGET);
    open_all();
    uint64_t reopens = log_fds_reopens();
    for (int i = 0; i < LOGS; i++) {
        cr_assert_eq(log_assign_epoch(logs[i], 4), RC_OK);
        cr_assert_eq(log_truncate_to(logs[i], log_end_offset(logs[i])),
                     RC_OK, "log %d", i);
        cr_assert_eq(log_epoch_latest(log_epochs(logs[i])), -1,
                     "log %d: the empty epoch went", i);
    }
    cr_assert_eq(log_fds_reopens(), reopens, "parked logs were opened");
}

/* Logs opened away from the loop (log_open_detached(), as a broker's
 * open jobs do) park themselves past the budget, so the threads opening
 * them hold no more files than it; attached, they stay parked, and open
 * their files again when used. */
Test(log_fds, detached_logs_past_the_budget_park_themselves)
{
    size_t before = log_fds_open();
    log_fds_set_max(before + BUDGET);
    uint64_t parks = log_fds_parks();
    int parked = 0;
    for (int i = 0; i < LOGS; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/d-%d", f.dir, i);
        cr_assert_eq(log_open_detached(&logs[i], dir, &f.cfg, &f.tracer),
                     RC_OK);
        parked += log_park_if_over_budget(logs[i]) ? 1 : 0;
        cr_assert_leq(log_fds_open(), before + BUDGET + 1, "%zu open",
                      log_fds_open());
    }
    cr_assert_eq(parked, LOGS - BUDGET, "those past the budget");
    for (int i = 0; i < LOGS; i++) {
        log_attach(logs[i], &f.loop);
    }
    cr_assert_eq(log_fds_parks() - parks, (uint64_t)(LOGS - BUDGET));
    cr_assert_leq(log_fds_open(), before + BUDGET);
    uint64_t reopens = log_fds_reopens();
    struct built_batch b;
    append(LOGS - 1, &b); /* parked: its files open again */
    built_batch_free(&b);
    cr_assert_eq(log_fds_reopens() - reopens, 1);
    cr_assert_eq(log_end_offset(logs[LOGS - 1]), 2);
}
