/* Retention (broker/log/log_retention.c): which old segments the time and
 * size rules delete, at their boundaries, and the deletion itself: the log
 * start offset moves, files go, reads below it fail, a reader's span keeps
 * working, a crash after setting files aside leaves a whole log. Time is
 * an argument, so the clock is the test's. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;

static void setup(void)
{
    log_fixture_setup(&f);
}

static void teardown(void)
{
    log_fixture_teardown(&f);
}

TestSuite(log_retention, .init = setup, .fini = teardown, .timeout = 60);

#define T0 1700000000000LL /* a wall-clock ms */
/* The largest record timestamp of segment s: its 10 records are stamped
 * T0 + s * 1000 + 0..9. */
#define MAX_TS(s) (T0 + (s) * 1000 + 9)

/* Three closed segments of 10 records each (one batch, from T0, T0+1000,
 * T0+2000) and an active one with 10 more from T0+3000. */
static void four_segments(void)
{
    log_fixture_open(&f);
    for (int s = 0; s < 4; s++) {
        log_fixture_append(&f, 10, 100, T0 + s * 1000, (uint32_t)s);
        if (s < 3) {
            cr_assert_eq(log_roll(f.log), RC_OK);
        }
    }
    cr_assert_eq(log_segment_count(f.log), 4);
    cr_assert_eq(log_end_offset(f.log), 40);
}

static size_t count(int64_t retention_ms, int64_t retention_bytes,
                    int64_t now_ms, int64_t hw, unsigned *why)
{
    struct log_retention r = {retention_ms, retention_bytes};
    return log_retention_count(f.log, &r, now_ms, hw, why);
}

Test(log_retention, by_time_at_the_boundary)
{
    four_segments();
    unsigned why = 0;
    /* retention.ms=5000: segment 0 (ts T0) goes once now - T0 > 5000. */
    cr_assert_eq(count(5000, -1, MAX_TS(0) + 5000, 40, &why), 0,
                 "not at exactly retention.ms");
    cr_assert_eq(count(5000, -1, MAX_TS(0) + 5001, 40, &why), 1);
    cr_assert_eq(why, LOG_RETENTION_BY_TIME);
    cr_assert_eq(count(5000, -1, MAX_TS(2) + 5001, 40, NULL), 3);
    /* never the active segment, however old */
    cr_assert_eq(count(5000, -1, T0 + 100000, 40, NULL), 3);
    cr_assert_eq(count(-1, -1, T0 + 100000, 40, &why), 0);
    cr_assert_eq(why, 0u);
}

Test(log_retention, only_segments_wholly_below_the_high_watermark)
{
    four_segments();
    /* Segment 1 holds 10..19: it may go once the HW reaches 20. */
    cr_assert_eq(count(0, -1, T0 + 100000, 19, NULL), 1);
    cr_assert_eq(count(0, -1, T0 + 100000, 20, NULL), 2);
    cr_assert_eq(count(0, -1, T0 + 100000, 0, NULL), 0);
    cr_assert_eq(count(-1, 0, T0, 10, NULL), 1);
}

Test(log_retention, by_size_keeps_at_least_retention_bytes)
{
    four_segments();
    int64_t total = log_size_bytes(f.log);
    int64_t seg = total / 4; /* equal batches: equal segments */
    cr_assert_eq(seg * 4, total);
    unsigned why = 0;
    cr_assert_eq(count(-1, total, T0, 40, &why), 0);
    cr_assert_eq(count(-1, total - 1, T0, 40, &why), 0,
                 "deleting one would leave less than retention.bytes");
    cr_assert_eq(count(-1, total - seg, T0, 40, &why), 1);
    cr_assert_eq(why, LOG_RETENTION_BY_SIZE);
    cr_assert_eq(count(-1, seg, T0, 40, NULL), 3);
    cr_assert_eq(count(-1, 0, T0, 40, NULL), 3, "never the active one");
}

Test(log_retention, time_first_then_size_on_what_is_left)
{
    four_segments();
    int64_t seg = log_size_bytes(f.log) / 4;
    unsigned why = 0;
    /* time takes segment 0; size then wants 2 segments left: one more */
    cr_assert_eq(count(5000, 2 * seg, MAX_TS(0) + 5001, 40, &why), 2);
    cr_assert_eq(why, LOG_RETENTION_BY_TIME | LOG_RETENTION_BY_SIZE);
}

/* Files of the partition directory ending in suffix. */
static int files_ending(const char *suffix)
{
    DIR *d = opendir(f.dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l >= sl && strcmp(e->d_name + l - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* Runs the loop until no "*.deleted" file is left (bounded). */
static void wait_deleted_gone(void)
{
    for (int i = 0; i < 1000 && files_ending(".deleted") > 0; i++) {
        uv_run(&f.loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    cr_assert_eq(files_ending(".deleted"), 0);
}

Test(log_retention, deleting_moves_the_start_and_removes_the_files)
{
    four_segments();
    cr_assert_eq(files_ending(".log"), 4);
    cr_assert_eq(log_delete_oldest(f.log, 2), RC_OK);
    cr_assert_eq(log_start_offset(f.log), 20);
    cr_assert_eq(log_end_offset(f.log), 40);
    cr_assert_eq(log_segment_count(f.log), 2);
    wait_deleted_gone();
    cr_assert_eq(files_ending(".log"), 2);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 19, 1 << 20, INT64_MAX, &span), RC_OUT_OF_RANGE);
    cr_assert_eq(log_read(f.log, 20, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.first_offset, 20);
    log_span_release(&span);
    /* reopened, the log starts where it did */
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 20);
    cr_assert_eq(log_end_offset(f.log), 40);
}

Test(log_retention, a_reader_keeps_reading_a_deleted_segment)
{
    four_segments();
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(log_delete_oldest(f.log, 1), RC_OK);
    wait_deleted_gone();
    size_t len = 0;
    uint8_t *bytes = log_fixture_span_bytes(&span, &len);
    cr_assert_gt(len, 0);
    free(bytes);
    log_span_release(&span);
}

Test(log_retention, a_crash_after_setting_files_aside_leaves_a_whole_log)
{
    four_segments();
    log_fixture_close_unclean(&f);
    /* What a crash between the renames and the unlinks leaves: segment 0
     * set aside entirely, segment 1's .log set aside but not its index. */
    char from[4200], to[4300];
    const char *exts[] = {"log", "index", "timeindex"};
    for (int e = 0; e < 3; e++) {
        log_fixture_file(&f, 0, exts[e], from, sizeof from);
        snprintf(to, sizeof to, "%s.deleted", from);
        if (access(from, F_OK) == 0) {
            cr_assert_eq(rename(from, to), 0);
        }
    }
    log_fixture_file(&f, 10, "log", from, sizeof from);
    snprintf(to, sizeof to, "%s.deleted", from);
    cr_assert_eq(rename(from, to), 0);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 20);
    cr_assert_eq(log_end_offset(f.log), 40);
    cr_assert_eq(files_ending(".deleted"), 0, "removed at open");
    struct log_span span;
    cr_assert_eq(log_read(f.log, 20, 1 << 20, INT64_MAX, &span), RC_OK);
    log_span_release(&span);
}

Test(log_retention, followers_delete_what_lies_below_the_leaders_start)
{
    four_segments();
    cr_assert_eq(log_segments_below(f.log, 0), 0);
    cr_assert_eq(log_segments_below(f.log, 15), 1);
    cr_assert_eq(log_segments_below(f.log, 20), 2);
    cr_assert_eq(log_segments_below(f.log, 1000), 3, "never the active");
}

/* --- The log start offset inside a segment (DeleteRecords) ------------- */

Test(log_retention, advancing_the_start_into_a_segment)
{
    four_segments();
    cr_assert_eq(log_advance_start(f.log, 15), RC_OK);
    cr_assert_eq(log_start_offset(f.log), 15);
    cr_assert_eq(log_segment_count(f.log), 3, "segment 0 (0..9) went");
    struct log_span span;
    cr_assert_eq(log_read(f.log, 14, 1 << 20, INT64_MAX, &span),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(log_read(f.log, 15, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.first_offset, 10, "the batch holding 15, whole");
    log_span_release(&span);
    cr_assert_eq(log_advance_start(f.log, 12), RC_OK, "never backwards");
    cr_assert_eq(log_start_offset(f.log), 15);
    cr_assert_eq(log_advance_start(f.log, 41), RC_OUT_OF_RANGE);
    /* checkpointed: a reopen, clean or not, starts at 15 */
    log_fixture_close_unclean(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 15);
    cr_assert_eq(log_end_offset(f.log), 40);
}

Test(log_retention, segments_below_the_start_go_whatever_the_limits)
{
    four_segments();
    log_fixture_close(&f);
    /* What a crash right after the checkpoint leaves: the start moved to
     * 25, every segment still there. */
    char path[4200];
    snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", f.dir);
    FILE *cp = fopen(path, "w");
    cr_assert_not_null(cp);
    fputs("0\n25\n", cp);
    cr_assert_eq(fclose(cp), 0);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 25);
    cr_assert_eq(log_segment_count(f.log), 4);
    unsigned why = 0;
    cr_assert_eq(count(-1, -1, T0, 40, &why), 2);
    cr_assert_eq(why, LOG_RETENTION_BY_START);
    cr_assert_eq(count(-1, -1, T0, 15, &why), 1, "only below the HW");
}

Test(log_retention, a_full_truncation_starts_the_log_over_there)
{
    four_segments();
    cr_assert_eq(log_advance_start(f.log, 25), RC_OK);
    cr_assert_eq(log_truncate_fully_and_start_at(f.log, 5), RC_OK);
    cr_assert_eq(log_start_offset(f.log), 5);
    cr_assert_eq(log_end_offset(f.log), 5);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 5, "the checkpoint went down too");
}
