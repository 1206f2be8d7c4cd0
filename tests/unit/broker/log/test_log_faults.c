/* Partition log under disk faults (broker/log/log.h, log_on_failure()):
 * an fsync failure is final and nothing past the last good sync ever
 * counts as durable; a full disk or a failed write keeps no partial
 * batch; the owner hears of the failure before any waiter does; a failed
 * log leaves no clean-shutdown marker, so the next open recovers. Faults
 * come from the I/O seam (common/io.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "common/io.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;

/* What the owner and a waiter heard, in order. */
static struct {
    int failures;
    int failure_rc;
    int64_t durable_at_failure;
    int waiter_rc;
    bool waiter_done;
    bool waiter_before_failure;
} seen;

static void setup(void)
{
    io_fault_clear();
    memset(&seen, 0, sizeof seen);
    log_fixture_setup(&f);
    log_fixture_open(&f);
}

static void teardown(void)
{
    io_fault_clear();
    log_fixture_teardown(&f);
}

TestSuite(log_faults, .init = setup, .fini = teardown, .timeout = 60);

static void failed_cb(void *arg, int rc)
{
    struct log *l = arg;
    seen.failures++;
    seen.failure_rc = rc;
    seen.durable_at_failure = log_durable_end_offset(l);
}

static void waiter_cb(void *arg, int rc)
{
    (void)arg;
    seen.waiter_rc = rc;
    seen.waiter_done = true;
    seen.waiter_before_failure = seen.failures == 0;
}

static void arm(const char *spec)
{
    char full[4200];
    snprintf(full, sizeof full, "%s:path=%s/", spec, f.dir);
    cr_assert_eq(io_fault_parse(full), RC_OK, "%s", full);
}

/* Appends one 4-record batch; the log's answer. */
static int append_raw(uint32_t seed, struct log_append_info *info)
{
    struct built_batch b = batch_build(4, 100, 1000, seed);
    int rv = log_append(f.log, b.bytes, b.len, 0, 1000, info);
    built_batch_free(&b);
    return rv;
}

static void run_until(bool *flag)
{
    for (int i = 0; i < 100000 && !*flag; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert(*flag, "not called back");
}

Test(log_faults, a_failed_fsync_is_final_and_counts_nothing_past_it)
{
    log_on_failure(f.log, failed_cb, f.log);
    log_fixture_append(&f, 4, 100, 1000, 1);
    cr_assert_eq(log_fixture_wait_durable(&f, 4), RC_OK);

    arm("sync:eio");
    struct log_append_info info;
    cr_assert_eq(append_raw(2, &info), RC_OK);
    cr_assert_eq(log_wait_durable(f.log, 8, waiter_cb, NULL), RC_OK);
    run_until(&seen.waiter_done);

    cr_assert_eq(seen.waiter_rc, RC_IO);
    cr_assert_eq(seen.failures, 1);
    cr_assert_eq(seen.failure_rc, RC_IO);
    cr_assert(!seen.waiter_before_failure, "the owner hears first");
    cr_assert_eq(seen.durable_at_failure, 4);
    cr_assert_eq(log_durable_end_offset(f.log), 4);
    cr_assert_eq(log_failure(f.log), RC_IO);

    /* Even once the disk answers again, the unsynced tail never counts
     * (its pages may be gone), and the log takes no more. */
    io_fault_clear();
    log_request_sync(f.log);
    for (int i = 0; i < 50; i++) {
        uv_run(&f.loop, UV_RUN_NOWAIT);
    }
    cr_assert_eq(log_durable_end_offset(f.log), 4);
    cr_assert_eq(append_raw(3, &info), RC_IO);
    cr_assert_eq(log_wait_durable(f.log, 8, waiter_cb, NULL), RC_IO);
    cr_assert_eq(seen.failures, 1, "told once");
}

Test(log_faults, a_full_disk_keeps_no_partial_batch)
{
    log_on_failure(f.log, failed_cb, f.log);
    log_fixture_append(&f, 4, 100, 1000, 1);
    log_fixture_append(&f, 4, 100, 1000, 2);
    cr_assert_eq(log_fixture_wait_durable(&f, 8), RC_OK);
    char seg[4200];
    log_fixture_file(&f, 0, "log", seg, sizeof seg);
    int64_t size = log_fixture_file_size(seg);

    arm("write:short"); /* half the batch lands, then ENOSPC */
    struct log_append_info info;
    cr_assert_eq(append_raw(3, &info), RC_NO_SPACE);
    cr_assert_eq(log_fixture_file_size(seg), size, "the torn half is cut");
    cr_assert_eq(log_end_offset(f.log), 8);
    cr_assert_eq(seen.failures, 1);
    cr_assert_eq(seen.failure_rc, RC_NO_SPACE);
    io_fault_clear();
    cr_assert_eq(append_raw(4, &info), RC_NO_SPACE, "failed for good");

    /* A failed log closes without the clean-shutdown marker: the next
     * open recovers, and finds every batch written before. */
    log_fixture_close(&f);
    char marker[4200];
    snprintf(marker, sizeof marker, "%s/.clean-shutdown", f.dir);
    cr_assert_neq(access(marker, F_OK), 0);
    log_fixture_open(&f);
    cr_assert(!f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), 8);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.bytes, size);
    log_span_release(&span);
}

Test(log_faults, a_write_error_fails_the_log_and_writes_nothing)
{
    log_on_failure(f.log, failed_cb, f.log);
    log_fixture_append(&f, 4, 100, 1000, 1);
    char seg[4200];
    log_fixture_file(&f, 0, "log", seg, sizeof seg);
    int64_t size = log_fixture_file_size(seg);
    arm("write:eio");
    struct log_append_info info;
    cr_assert_eq(append_raw(2, &info), RC_IO);
    cr_assert_eq(log_fixture_file_size(seg), size);
    cr_assert_eq(log_end_offset(f.log), 4);
    cr_assert_eq(seen.failure_rc, RC_IO);
}

Test(log_faults, a_segment_that_cannot_be_created_fails_the_log)
{
    f.cfg.segment_bytes = 1024; /* the third batch rolls */
    log_fixture_close(&f);
    log_fixture_open(&f);
    log_on_failure(f.log, failed_cb, f.log);
    log_fixture_append(&f, 4, 100, 1000, 1);
    log_fixture_append(&f, 4, 100, 1000, 2);
    arm("open:enospc");
    struct log_append_info info;
    int rv = append_raw(3, &info);
    cr_assert(rv == RC_NO_SPACE || rv == RC_IO, "%s", rc_str(rv));
    cr_assert_eq(seen.failures, 1);
    cr_assert_eq(log_end_offset(f.log), 8);
}

/* The process dies: nothing more reaches the disk (every write, sync and
 * rename fails while the log is dropped, so its close writes nothing),
 * then a power loss drops what no sync made durable. */
static void crash(void)
{
    arm("write:eio");
    arm("sync:eio");
    arm("rename:eio");
    log_fixture_close(&f);
    io_fault_clear();
    io_journal_crash();
}

Test(log_faults, a_power_loss_keeps_exactly_what_was_synced)
{
    io_journal_begin();
    log_fixture_close(&f);
    log_fixture_open(&f); /* its files now in the journal */
    log_fixture_append(&f, 4, 100, 1000, 1);
    log_fixture_append(&f, 4, 100, 1000, 2);
    cr_assert_eq(log_fixture_wait_durable(&f, 8), RC_OK);
    log_fixture_append(&f, 4, 100, 1000, 3); /* never synced */
    cr_assert_eq(log_end_offset(f.log), 12);
    crash();
    log_fixture_open(&f);
    cr_assert(!f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), 8, "the durable prefix, no more "
                 "and no less");
}

/* fsyncgate, end to end: after a failed fsync the unsynced tail may never
 * reach the disk. The log never said it was durable, and a power loss
 * takes exactly that. */
Test(log_faults, a_power_loss_after_a_failed_fsync_takes_only_what_was_never_durable)
{
    io_journal_begin();
    log_fixture_close(&f);
    log_fixture_open(&f);
    log_on_failure(f.log, failed_cb, f.log);
    log_fixture_append(&f, 4, 100, 1000, 1);
    cr_assert_eq(log_fixture_wait_durable(&f, 4), RC_OK);
    arm("sync:eio");
    struct log_append_info info;
    cr_assert_eq(append_raw(2, &info), RC_OK);
    cr_assert_eq(log_wait_durable(f.log, 8, waiter_cb, NULL), RC_OK);
    run_until(&seen.waiter_done);
    cr_assert_eq(seen.waiter_rc, RC_IO, "never reported durable");
    cr_assert_eq(log_durable_end_offset(f.log), 4);
    io_fault_clear();
    crash();
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), 4);
}
