/* What opening a log costs when it holds little (broker/log/log_open.c): a
 * broker restarted with 100,000 idle partitions opens 100,000 logs before
 * it is back in their ISRs, so an open calls only for what is there. The
 * checkpoints its directory listing did not show are not opened, and an
 * empty segment's index files are neither created nor rewritten when
 * they are missing or empty. Calls are counted by faults of the I/O seam (common/io.h)
 * armed on them: a call that was made would hit one. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "broker/log/log_epoch.h"
#include "common/io.h"
#include "common/log_layout.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;

static void setup(void)
{
    io_fault_clear();
    log_fixture_setup(&f);
}

static void teardown(void)
{
    io_fault_clear();
    log_fixture_teardown(&f);
}

TestSuite(log_open_cost, .init = setup, .fini = teardown, .timeout = 60);

static void arm(enum io_op op, const char *path)
{
    struct io_fault fault = {.op = op, .kind = IO_FAULT_ERRNO, .err = EIO};
    snprintf(fault.path, sizeof fault.path, "%s", path);
    cr_assert_eq(io_fault_add(&fault), RC_OK);
}

static bool exists(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", f.dir, name);
    return access(path, F_OK) == 0;
}

/* The process dies with the log open (SIGKILL): no clean-shutdown
 * marker, no checkpoint written at close. */
static void crash(void)
{
    log_fixture_check(&f); /* the start-up check ends first */
    log_abandon(f.log);
    f.log = NULL;
    cr_assert_eq(uv_run(&f.loop, UV_RUN_NOWAIT), 0);
}

/* The files an empty log that was never written leaves behind. */
static const char *const absent[] = {
    "recovery-point-checkpoint", "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint", LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE,
    ".clean-shutdown",
};
#define N_ABSENT (sizeof absent / sizeof *absent)

Test(log_open_cost, checkpoints_the_directory_lacks_are_not_opened)
{
    log_fixture_open(&f);
    crash();
    for (size_t i = 0; i < N_ABSENT; i++) {
        cr_assert(!exists(absent[i]), "%s", absent[i]);
        arm(IO_OP_OPEN, absent[i]);
    }
    log_fixture_open(&f);
    for (size_t i = 0; i < N_ABSENT; i++) {
        cr_assert_eq(io_fault_hits(i), 0, "%s was opened", absent[i]);
        cr_assert(!log_found_at_open(f.log, absent[i]), "%s", absent[i]);
    }
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
}

Test(log_open_cost, checkpoints_the_directory_holds_are_read)
{
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 3), RC_OK);
    log_fixture_append(&f, 2, 40, 1000, 1);
    cr_assert_eq(log_fixture_wait_durable(&f, 2), RC_OK);
    cr_assert_eq(log_advance_start(f.log, 1), RC_OK);
    log_fixture_close(&f);
    cr_assert(exists(LOG_LAYOUT_EPOCH_FILE));
    cr_assert(exists("log-start-offset-checkpoint"));
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    cr_assert(log_found_at_open(f.log, LOG_LAYOUT_EPOCH_FILE));
    cr_assert(log_found_at_open(f.log, "log-start-offset-checkpoint"));
    cr_assert(log_found_at_open(f.log, ".clean-shutdown"));
    cr_assert(log_found_at_open(f.log, "some-other-file"),
              "a name it does not track is taken as there");
    cr_assert_eq(log_start_offset(f.log), 1);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 3);
}

/* A segment no batch was written to has no index files; a crash does not
 * make the next open create them (200,000 new files for a broker with
 * 100,000 idle partitions), nor does a close and open miss them. */
Test(log_open_cost, an_empty_segment_gets_no_index_files)
{
    char index[4200], times[4200];
    log_fixture_file(&f, 0, LOG_LAYOUT_INDEX_EXT, index, sizeof index);
    log_fixture_file(&f, 0, LOG_LAYOUT_TIME_INDEX_EXT, times, sizeof times);
    log_fixture_open(&f);
    crash();
    arm(IO_OP_WRITE, "index");
    log_fixture_open(&f);
    cr_assert_eq(io_fault_hits(0), 0, "an empty segment's index written");
    cr_assert_eq(access(index, F_OK), -1);
    cr_assert_eq(access(times, F_OK), -1);
    io_fault_clear();
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    log_fixture_append(&f, 3, 10, 1000, 2);
    cr_assert_eq(log_fixture_wait_durable(&f, 3), RC_OK);
    crash();
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), 3);
    cr_assert_geq(log_fixture_file_size(index), LOG_LAYOUT_INDEX_HEADER_BYTES,
                  "a segment with a batch has its index written");
}

/* An empty segment whose directory listed no index file: nothing is
 * opened to find them missing (two calls per idle partition). */
Test(log_open_cost, index_files_the_listing_lacks_are_not_opened)
{
    log_fixture_open(&f);
    crash();
    arm(IO_OP_OPEN, "index"); /* .index and .timeindex */
    log_fixture_open(&f);
    cr_assert_eq(io_fault_hits(0), 0, "a missing index file was opened");
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    cr_assert_eq(log_end_offset(f.log), 0);
}

/* A checkpoint shorter than the buffer is read in one call: the short
 * read is its end, with no second read to see 0 (a second one here
 * fails, which would distrust the checkpoint and rebuild it). */
Test(log_open_cost, a_checkpoint_is_read_in_one_call)
{
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 3), RC_OK);
    log_fixture_append(&f, 2, 40, 1000, 3);
    cr_assert_eq(log_fixture_wait_durable(&f, 2), RC_OK);
    log_fixture_close(&f);
    struct io_fault fault = {.op = IO_OP_READ, .kind = IO_FAULT_ERRNO,
                             .err = EIO, .after = 1};
    snprintf(fault.path, sizeof fault.path, "%s", LOG_LAYOUT_EPOCH_FILE);
    cr_assert_eq(io_fault_add(&fault), RC_OK);
    log_fixture_open(&f);
    cr_assert_eq(io_fault_hits(0), 0, "the checkpoint was read twice");
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 3);
}

/* A log whose batches were cut away after a close had written its index
 * files (a header each once the cut is closed), reopened, then crashed;
 * index gets its .index file's path. */
static void cut_to_empty_then_crash(char *index, size_t cap)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 2, 10, 1000, 3);
    cr_assert_eq(log_fixture_wait_durable(&f, 2), RC_OK);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_truncate_to(f.log, 0), RC_OK);
    log_fixture_close(&f);
    log_fixture_open(&f);
    crash();
    log_fixture_file(&f, 0, LOG_LAYOUT_INDEX_EXT, index, cap);
}

/* A segment cut back to empty keeps index files of a header each: not
 * written again by the open after a crash. */
Test(log_open_cost, an_empty_segment_keeps_its_empty_index_after_a_crash)
{
    char index[4200];
    cut_to_empty_then_crash(index, sizeof index);
    cr_assert_eq(log_fixture_file_size(index), LOG_LAYOUT_INDEX_HEADER_BYTES);
    arm(IO_OP_WRITE, "index");
    log_fixture_open(&f);
    cr_assert_eq(io_fault_hits(0), 0, "an empty index was written again");
    cr_assert_eq(log_end_offset(f.log), 0);
}

/* An index with entries beside an empty segment (left by a cut the crash
 * interrupted) is not what an empty segment has: written again. */
Test(log_open_cost, an_empty_segment_with_a_stale_index_gets_a_fresh_one)
{
    char index[4200];
    cut_to_empty_then_crash(index, sizeof index);
    int fd = open(index, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    static const uint8_t entry[LOG_LAYOUT_INDEX_ENTRY_BYTES] = {0, 0, 0, 5,
                                                                0, 0, 1, 0};
    cr_assert_eq(write(fd, entry, sizeof entry), (ssize_t)sizeof entry);
    close(fd);
    log_fixture_open(&f);
    cr_assert_eq(log_fixture_file_size(index), LOG_LAYOUT_INDEX_HEADER_BYTES);
    log_fixture_append(&f, 1, 10, 1000, 2);
    cr_assert_eq(log_end_offset(f.log), 1);
}

/* A leader deposed before it appended in its epoch 6 (started at offset
 * 3, its log end), closed: the checkpoint names epoch 6. */
static void deposed_leader_closed(void)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 3, 10, 1000, 1); /* epoch 0: offsets 0-2 */
    cr_assert_eq(log_fixture_wait_durable(&f, 3), RC_OK);
    cr_assert_eq(log_assign_epoch(f.log, 6), RC_OK);
    log_fixture_close(&f);
}

/* As a follower the log drops that empty epoch (truncating at its end)
 * without writing its checkpoint: a broker that had led thousands of idle
 * partitions wrote and synced a file for each, on its loop, for minutes. */
Test(log_open_cost, a_cut_that_drops_an_empty_epoch_writes_no_checkpoint)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 3, 10, 1000, 1);
    cr_assert_eq(log_fixture_wait_durable(&f, 3), RC_OK);
    cr_assert_eq(log_assign_epoch(f.log, 6), RC_OK);
    arm(IO_OP_RENAME, LOG_LAYOUT_EPOCH_FILE);
    cr_assert_eq(log_truncate_to(f.log, 3), RC_OK);
    cr_assert_eq(io_fault_hits(0), 0, "the epoch checkpoint was written");
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0);
}

/* Nor does an open that drops it. After a crash the checkpoint still
 * names the epoch, and the next open drops it again. */
Test(log_open_cost, an_open_that_drops_an_empty_epoch_writes_no_checkpoint)
{
    deposed_leader_closed();
    arm(IO_OP_RENAME, LOG_LAYOUT_EPOCH_FILE);
    log_fixture_open(&f);
    cr_assert_eq(io_fault_hits(0), 0, "the epoch checkpoint was written");
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0);
    io_fault_clear();
    crash();
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), 3);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0);
}

/* The checkpoint catches up with the cache before the next batch lands
 * where the dropped epoch started, and at close: a clean open (which
 * trusts the checkpoint, not rebuilding it from the batches as recovery
 * does) must not read that epoch 6 holds offset 3, written in epoch 0. */
Test(log_open_cost, the_dropped_epoch_is_written_out_before_the_next_batch)
{
    deposed_leader_closed();
    log_fixture_open(&f);
    log_fixture_append(&f, 2, 10, 2000, 2); /* epoch 0: offsets 3-4 */
    cr_assert_eq(log_fixture_wait_durable(&f, 5), RC_OK);
    char path[4200], text[256] = "";
    snprintf(path, sizeof path, "%s/%s", f.dir, LOG_LAYOUT_EPOCH_FILE);
    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    cr_assert_eq(strncmp(text, "0\n1\n0 0\n", 8), 0, "the checkpoint, "
                 "after the batch: %s", text);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0,
                 "the checkpoint still named epoch 6");
    int32_t epoch = -1;
    int64_t end = -1;
    log_end_offset_for_epoch(f.log, 0, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 5);
}

/* A log that never held a record is closed without a write or a sync (a
 * broker with 100,000 idle partitions wrote two index files and made four
 * syncs for each, and its
 * controlled shutdown outlived the 30 s deploy/cluster.sh grants it), and
 * opens again as it was. */
Test(log_open_cost, closing_a_log_that_never_held_a_record_writes_nothing)
{
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 2), RC_OK); /* led, idle */
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 3), RC_OK); /* led again */
    arm(IO_OP_RENAME, "");
    arm(IO_OP_SYNC, "");
    arm(IO_OP_WRITE, "");
    log_fixture_close(&f);
    cr_assert_eq(io_fault_hits(0), 0, "a checkpoint was written");
    cr_assert_eq(io_fault_hits(1), 0, "a file was synced");
    cr_assert_eq(io_fault_hits(2), 0, "a file was written");
    cr_assert(!exists("00000000000000000000.index"), "index files made");
    io_fault_clear();
    log_fixture_open(&f);
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    cr_assert_eq(log_end_offset(f.log), 0);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), -1);
}

/* A log with records still leaves its marker: the next open trusts its
 * segments instead of checking the last one. */
Test(log_open_cost, closing_a_log_with_records_leaves_the_marker)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 3, 10, 1000, 1);
    log_fixture_close(&f);
    cr_assert(exists(".clean-shutdown"));
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), 3);
}
