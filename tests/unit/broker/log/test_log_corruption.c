/* Corruption of a partition directory's files is detected, never trusted
 * (broker/log/log_open.c): checkpoints (recovery point, log start, the
 * cleaner's, leader epochs) and index files (.index, .timeindex) that are
 * flipped, cut or garbage are rebuilt, logged and rewritten valid; a
 * corrupt batch below the recovery point is found by the start-up check
 * after the open (broker/log/log_startup.h) and kept for repair; and a
 * failed checkpoint write leaves the old checkpoint in place. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "broker/log/log_cleaner.h"
#include "broker/log/log_segment.h"
#include "common/file.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
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

TestSuite(log_corruption, .init = setup, .fini = teardown, .timeout = 120);

#define BATCHES 150

/* Base offset of the i-th batch appended (each has 1 + i % 5 records). */
static int64_t base_of(int64_t i)
{
    int64_t off = 0;
    for (int64_t k = 0; k < i; k++) {
        off += 1 + k % 5;
    }
    return off;
}

/* Batch i as appended: timestamp 1000 + 10 i, in leader epoch 1 + i / 50. */
static struct built_batch nth_batch(int64_t i)
{
    return batch_build((int32_t)(1 + i % 5), (size_t)(60 + (i * 29) % 150),
                       1000 + 10 * i, (uint32_t)i);
}

static int32_t epoch_of(int64_t i)
{
    return (int32_t)(1 + i / 50);
}

static void append_nth(int64_t from, int64_t to)
{
    for (int64_t i = from; i < to; i++) {
        if (i % 50 == 0) {
            cr_assert_eq(log_assign_epoch(f.log, epoch_of(i)), RC_OK);
        }
        struct built_batch b = nth_batch(i);
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, b.bytes, b.len, epoch_of(i),
                                1000 + 10 * i, &info), RC_OK);
        cr_assert_eq(info.base_offset, base_of(i));
        built_batch_free(&b);
    }
}

/* Every batch from first to n-1 is found by its offsets and by its time,
 * and reads back whole and intact. */
static void verify_batches(int64_t first, int64_t n)
{
    cr_assert_eq(log_end_offset(f.log), base_of(n));
    for (int64_t i = first; i < n; i++) {
        int64_t last = base_of(i + 1) - 1;
        struct log_span span;
        cr_assert_eq(log_read(f.log, last, 1, INT64_MAX, &span), RC_OK);
        cr_assert_eq(span.first_offset, base_of(i), "batch %lld",
                     (long long)i);
        size_t len = 0;
        uint8_t *buf = log_fixture_span_bytes(&span, &len);
        struct built_batch want = nth_batch(i);
        cr_assert_eq(len, want.len, "batch %lld", (long long)i);
        cr_assert(batch_same_payload(buf, &want), "batch %lld", (long long)i);
        built_batch_free(&want);
        free(buf);
        log_span_release(&span);
        struct log_time_offset t;
        cr_assert_eq(log_offset_for_timestamp(f.log, 1000 + 10 * i, &t),
                     RC_OK);
        cr_assert_eq(t.offset, base_of(i), "time of batch %lld",
                     (long long)i);
    }
}

static void dir_file(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", f.dir, name);
}

static size_t read_whole(const char *path, uint8_t *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "%s", path);
    ssize_t n = read(fd, buf, cap);
    cr_assert_geq(n, 0);
    close(fd);
    return (size_t)n;
}

static void write_whole(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(write(fd, p, n), (ssize_t)n);
    close(fd);
}

enum damage { FLIP, CUT, GARBAGE, DAMAGES };
static const char *const damage_name[] = {"flip", "cut", "garbage"};

/* Damages path: flips bit 0 of byte at, cuts it to half its size, or
 * overwrites it with as many bytes of junk. */
static void damage(const char *path, enum damage d, size_t at)
{
    uint8_t buf[65536];
    size_t n = read_whole(path, buf, sizeof buf);
    cr_assert_gt(n, at);
    if (d == FLIP) {
        buf[at] ^= 1;
    } else if (d == CUT) {
        n /= 2;
    } else {
        for (size_t k = 0; k < n; k++) {
            buf[k] = (uint8_t)(k * 97 + 13);
        }
    }
    write_whole(path, buf, n);
}

/* The offset in a valid checked offset checkpoint. */
static int64_t checked_offset(const char *name)
{
    char buf[128];
    size_t len = 0;
    bool unchecked = true;
    cr_assert_eq(file_read_checked(f.dir, name, buf, sizeof buf, &len,
                                   &unchecked), RC_OK, "%s", name);
    cr_assert_not(unchecked, "%s has a checksum line", name);
    long long v = -1;
    cr_assert_eq(sscanf(buf, "0\n%lld\n", &v), 1, "%s: %s", name, buf);
    return v;
}

static int64_t last_segment_base(void)
{
    struct log_span span;
    cr_assert_eq(log_read(f.log, log_end_offset(f.log) - 1, 1, INT64_MAX,
                          &span), RC_OK);
    int64_t base = span.seg->base_offset;
    log_span_release(&span);
    return base;
}

/* A log of BATCHES batches over several indexed segments. */
static void write_log(void)
{
    f.cfg.segment_bytes = 16384;
    f.cfg.index_interval_bytes = 512;
    log_fixture_open(&f);
    append_nth(0, BATCHES);
    cr_assert_gt(log_segment_count(f.log), 3);
}

static void reopen_after(const char *name, enum damage d, size_t at)
{
    char path[4200];
    dir_file(name, path, sizeof path);
    log_fixture_close(&f);
    damage(path, d, at);
    memset(f.warnings, 0, sizeof f.warnings);
    log_fixture_open(&f);
}

Test(log_corruption, damaged_recovery_point_means_recovering_everything)
{
    write_log();
    int64_t rp = last_segment_base();
    cr_assert_gt(rp, 0);
    for (int d = 0; d < DAMAGES; d++) {
        log_fixture_close_unclean(&f);
        /* Byte 2 is the offset's first digit: flipped, it still parses. */
        char path[4200];
        dir_file("recovery-point-checkpoint", path, sizeof path);
        damage(path, (enum damage)d, 2);
        memset(f.warnings, 0, sizeof f.warnings);
        log_fixture_open(&f);
        cr_assert_not(f.opened_clean);
        cr_assert(log_fixture_warned(&f, "recovery-point-checkpoint not "
                                     "trusted", "every segment"),
                  "%s: %s", damage_name[d], f.warnings);
        verify_batches(0, BATCHES);
        cr_assert_eq(checked_offset("recovery-point-checkpoint"), rp,
                     "%s: rewritten valid", damage_name[d]);
    }
}

Test(log_corruption, damaged_log_start_means_the_first_segment)
{
    write_log();
    int64_t x = base_of(70) + 2; /* inside a batch of a middle segment */
    cr_assert_eq(log_advance_start(f.log, x), RC_OK);
    cr_assert_eq(log_start_offset(f.log), x);
    int64_t first = 0;
    struct log_span span;
    cr_assert_eq(log_read(f.log, x, 1, INT64_MAX, &span), RC_OK);
    first = span.seg->base_offset;
    log_span_release(&span);
    cr_assert_lt(first, x);
    cr_assert_gt(first, 0);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), x, "a valid one is used");
    for (int d = 0; d < DAMAGES; d++) {
        reopen_after("log-start-offset-checkpoint", (enum damage)d, 2);
        cr_assert(log_fixture_warned(&f, "log-start-offset-checkpoint not "
                                     "trusted", "first segment"),
                  "%s: %s", damage_name[d], f.warnings);
        cr_assert_eq(log_start_offset(f.log), first, "%s",
                     damage_name[d]);
        cr_assert_eq(checked_offset("log-start-offset-checkpoint"), 0);
        cr_assert_eq(log_end_offset(f.log), base_of(BATCHES));
    }
}

Test(log_corruption, damaged_cleaner_checkpoint_starts_the_cleaner_over)
{
    write_log();
    log_fixture_close(&f);
    cr_assert_eq(file_write_checked(f.dir, LOG_CLEANER_CHECKPOINT_FILE,
                                    "0\n40\n", 5), RC_OK);
    log_fixture_open(&f);
    cr_assert_eq(log_clean_checkpoint(f.log), 40);
    for (int d = 0; d < DAMAGES; d++) {
        log_fixture_close(&f);
        cr_assert_eq(file_write_checked(f.dir, LOG_CLEANER_CHECKPOINT_FILE,
                                        "0\n40\n", 5), RC_OK);
        char path[4200];
        dir_file(LOG_CLEANER_CHECKPOINT_FILE, path, sizeof path);
        damage(path, (enum damage)d, 2);
        memset(f.warnings, 0, sizeof f.warnings);
        log_fixture_open(&f);
        cr_assert(log_fixture_warned(&f, LOG_CLEANER_CHECKPOINT_FILE,
                                     "not trusted"), "%s", f.warnings);
        cr_assert_eq(log_clean_checkpoint(f.log), 0, "%s", damage_name[d]);
        cr_assert_eq(checked_offset(LOG_CLEANER_CHECKPOINT_FILE), 0);
    }
}

/* The epochs append_nth assigned, read back. */
static void verify_epochs(void)
{
    const struct log_epoch_cache *c = log_epochs(f.log);
    cr_assert_eq(c->n, 3);
    for (size_t k = 0; k < 3; k++) {
        cr_assert_eq(c->entries[k].epoch, (int32_t)(1 + k));
        cr_assert_eq(c->entries[k].start_offset, base_of((int64_t)k * 50));
    }
    int32_t epoch = 0;
    int64_t end = 0;
    log_end_offset_for_epoch(f.log, 2, &epoch, &end);
    cr_assert_eq(epoch, 2);
    cr_assert_eq(end, base_of(100));
}

Test(log_corruption, damaged_epoch_checkpoint_is_rebuilt_from_batches)
{
    write_log();
    verify_epochs();
    char path[4200];
    dir_file("leader-epoch-checkpoint", path, sizeof path);
    uint8_t good[256];
    size_t good_len = read_whole(path, good, sizeof good);
    /* "0\n3\n1 0\n2 ..." : byte 8 is epoch 2's first digit. */
    cr_assert_eq(good[8], '2');
    for (int d = 0; d < DAMAGES; d++) {
        reopen_after("leader-epoch-checkpoint", (enum damage)d, 8);
        cr_assert(log_fixture_warned(&f, "leader-epoch-checkpoint not "
                                     "trusted", "rebuilding"),
                  "%s: %s", damage_name[d], f.warnings);
        verify_epochs();
        verify_batches(0, BATCHES);
        uint8_t now[256];
        cr_assert_eq(read_whole(path, now, sizeof now), good_len);
        cr_assert_eq(memcmp(now, good, good_len), 0, "rewritten as before");
    }
}

/* Damages one index file of the second segment, in each way: the log
 * still finds every batch by offset and time, and the file is rewritten
 * as it was. at: a byte inside the middle entry. */
static void damage_index(const char *ext, size_t entry_bytes, size_t field)
{
    write_log();
    struct log_span span;
    cr_assert_eq(log_read(f.log, base_of(60), 1, INT64_MAX, &span), RC_OK);
    int64_t base = span.seg->base_offset;
    log_span_release(&span);
    cr_assert_gt(base, 0);
    char path[4200];
    log_fixture_file(&f, base, ext, path, sizeof path);
    log_fixture_close(&f);
    uint8_t good[65536];
    size_t good_len = read_whole(path, good, sizeof good);
    size_t n = (good_len - 8) / entry_bytes;
    cr_assert_gt(n, 4, "%zu entries", n);
    char name[64];
    snprintf(name, sizeof name, "%020lld.%s", (long long)base, ext);
    log_fixture_open(&f);
    for (int d = 0; d < DAMAGES; d++) {
        reopen_after(strrchr(path, '/') + 1, (enum damage)d,
                     8 + n / 2 * entry_bytes + field);
        cr_assert(log_fixture_warned(&f, name, "not trusted"), "%s: %s",
                  damage_name[d], f.warnings);
        verify_batches(0, BATCHES);
        uint8_t now[65536];
        cr_assert_eq(read_whole(path, now, sizeof now), good_len);
        cr_assert_eq(memcmp(now, good, good_len), 0, "rewritten as before");
    }
}

Test(log_corruption, damaged_offset_index_is_rebuilt)
{
    damage_index("index", 8, 7); /* the low byte of a position */
}

Test(log_corruption, damaged_time_index_is_rebuilt)
{
    damage_index("timeindex", 12, 11); /* the low byte of an offset */
}

Test(log_corruption, index_of_the_older_format_is_rebuilt)
{
    write_log();
    char path[4200];
    log_fixture_file(&f, 0, "index", path, sizeof path);
    log_fixture_close(&f);
    uint8_t good[65536];
    size_t len = read_whole(path, good, sizeof good);
    write_whole(path, good + 8, len - 8); /* entries, no header */
    log_fixture_open(&f);
    cr_assert(log_fixture_warned(&f, "00000000000000000000.index",
                                 "not trusted"), "%s", f.warnings);
    verify_batches(0, BATCHES);
    uint8_t now[65536];
    cr_assert_eq(read_whole(path, now, sizeof now), len);
    cr_assert_eq(memcmp(now, good, len), 0);
}

/* --- A corrupt batch below the recovery point ---------------------------- */

/* Flips a byte inside a record of batch k, in a closed segment below the
 * recovery point (the log was closed cleanly, or not: then its recovery
 * point is the last segment's base), and reopens: the open itself reads
 * no batch of it (before, it checked them all inline, on the loop
 * thread); the start-up check after it finds the damage, the log stays
 * whole (the batches after k may be acknowledged and intact, and this
 * replica the only one left), says where the damage starts, and keeps it
 * for the replication layer to repair; cut there, as a follower does,
 * appends go on from the cut. */
static void corrupt_batch_below_recovery_point(bool clean)
{
    write_log();
    int64_t k = 60;
    struct log_span span;
    cr_assert_eq(log_read(f.log, base_of(k), 1, INT64_MAX, &span), RC_OK);
    int64_t seg_base = span.seg->base_offset;
    int64_t pos = span.position;
    log_span_release(&span);
    cr_assert_lt(seg_base, last_segment_base(), "a closed segment");
    int64_t end = log_end_offset(f.log);
    size_t segs = log_segment_count(f.log);
    if (clean) {
        log_fixture_close(&f);
    } else {
        log_fixture_close_unclean(&f);
    }
    char path[4200];
    log_fixture_file(&f, seg_base, "log", path, sizeof path);
    int64_t size = log_fixture_file_size(path);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    uint8_t b = 0;
    off_t at = (off_t)(pos + BATCH_HEADER_BYTES + 20);
    cr_assert_eq(pread(fd, &b, 1, at), 1);
    b ^= 0x10;
    cr_assert_eq(pwrite(fd, &b, 1, at), 1);
    close(fd);
    log_fixture_open(&f);
    cr_assert_not(log_fixture_warned(&f, "corrupt batch", NULL),
                  "found by log_open itself: %s", f.warnings);
    cr_assert_eq(log_corrupt_offset(f.log), -1, "not known at open");
    cr_assert(log_startup_verify_pending(f.log));
    log_fixture_check(&f);
    char where[128];
    snprintf(where, sizeof where, "offset=%lld position=%lld",
             (long long)base_of(k), (long long)pos);
    cr_assert(log_fixture_warned(&f, "corrupt batch below the recovery "
                                 "point", where), "%s", f.warnings);
    cr_assert_eq(log_corrupt_offset(f.log), base_of(k));
    cr_assert_eq(log_end_offset(f.log), end, "nothing cut at open");
    cr_assert_eq(log_fixture_file_size(path), size);
    cr_assert_eq(log_segment_count(f.log), segs);
    /* Repaired as a follower repairs: cut before it, fetch the rest. */
    cr_assert_eq(log_truncate_to(f.log, base_of(k)), RC_OK);
    cr_assert_eq(log_corrupt_offset(f.log), -1);
    append_nth(k, BATCHES);
    verify_batches(0, BATCHES);
    log_fixture_close(&f);
    memset(f.warnings, 0, sizeof f.warnings);
    f.n_warnings = 0;
    log_fixture_open(&f);
    log_fixture_check(&f);
    cr_assert_eq(f.n_warnings, 0, "%s", f.warnings);
    cr_assert_eq(log_corrupt_offset(f.log), -1);
}

Test(log_corruption, corrupt_batch_in_a_cleanly_closed_log_is_found_and_kept)
{
    corrupt_batch_below_recovery_point(true);
}

Test(log_corruption, corrupt_batch_below_the_recovery_point_is_found_and_kept)
{
    corrupt_batch_below_recovery_point(false);
}

/* --- A failed checkpoint write -------------------------------------------- */

/* A leader's new epoch is written to the checkpoint before its first
 * batch: when that write fails, the batch is not appended, the log stops
 * and the old checkpoint stays whole. */
Test(log_corruption, failed_epoch_checkpoint_write_keeps_the_old_one)
{
    write_log();
    char path[4200];
    dir_file("leader-epoch-checkpoint", path, sizeof path);
    uint8_t good[256];
    size_t good_len = read_whole(path, good, sizeof good);
    const char *specs[] = {"write:eio:path=leader-epoch",
                           "rename:eio:path=leader-epoch",
                           "sync:eio:path=leader-epoch"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        int32_t epoch = (int32_t)(9 + i);
        int64_t end = log_end_offset(f.log);
        cr_assert_eq(log_assign_epoch(f.log, epoch), RC_OK, "in memory");
        cr_assert_eq(io_fault_parse(specs[i]), RC_OK);
        struct built_batch b = batch_build(1, 10, 0, 1);
        struct log_append_info info;
        cr_assert_neq(log_append(f.log, b.bytes, b.len, epoch, 0, &info),
                      RC_OK, "%s", specs[i]);
        built_batch_free(&b);
        io_fault_clear();
        cr_assert_neq(log_failure(f.log), RC_OK, "the log stops");
        cr_assert_eq(log_end_offset(f.log), end, "nothing appended");
        uint8_t now[256];
        cr_assert_eq(read_whole(path, now, sizeof now), good_len);
        cr_assert_eq(memcmp(now, good, good_len), 0, "%s", specs[i]);
        log_fixture_close(&f); /* unclean: the log had failed */
        log_fixture_open(&f);
    }
}

/* A follower's batch that starts a new epoch whose checkpoint cannot be
 * written: the log stops. Before, it went on, and after a power loss
 * trusted the segments below its recovery point with a checkpoint that
 * never heard of the epoch (its OffsetForLeaderEpoch answers then named
 * the wrong end, and a follower kept a record the leader had replaced). */
Test(log_corruption, failed_epoch_checkpoint_on_a_replica_append_stops_the_log)
{
    write_log();
    int64_t end = log_end_offset(f.log);
    int32_t epoch = log_epoch_latest(log_epochs(f.log)) + 2;
    struct built_batch b = batch_build(2, 10, 0, 1);
    record_batch_set_base_offset(b.bytes, end);
    record_batch_set_leader_epoch(b.bytes, epoch);
    cr_assert_eq(io_fault_parse("rename:eio:path=leader-epoch"), RC_OK);
    struct log_append_info info;
    cr_assert_eq(log_append_replica(f.log, b.bytes, b.len, 0, &info), RC_OK,
                 "the batch itself is in the segment");
    io_fault_clear();
    cr_assert_neq(log_failure(f.log), RC_OK);
    record_batch_set_base_offset(b.bytes, end + 2);
    cr_assert_neq(log_append_replica(f.log, b.bytes, b.len, 0, &info),
                  RC_OK, "nothing more is taken");
    built_batch_free(&b);
    log_fixture_close(&f); /* unclean: the log had failed */
    log_fixture_open(&f);
    int32_t e = -1;
    int64_t epoch_end = -1;
    log_end_offset_for_epoch(f.log, epoch - 2, &e, &epoch_end);
    cr_assert_eq(e, epoch - 2);
    cr_assert_eq(epoch_end, log_end_offset(f.log) > end ? end
                                                       : log_end_offset(f.log),
                 "the old epoch ends where the new one's batch starts, if "
                 "recovery kept it");
}

Test(log_corruption, failed_offset_checkpoint_write_keeps_the_old_one)
{
    write_log();
    int64_t rp = last_segment_base();
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(checked_offset("recovery-point-checkpoint"), rp);
    cr_assert_eq(io_fault_parse("write:eio:path=log-start"), RC_OK);
    cr_assert_eq(log_advance_start(f.log, base_of(3)), RC_IO);
    io_fault_clear();
    cr_assert_eq(io_fault_parse("rename:eio"), RC_OK);
    cr_assert_neq(log_truncate_to(f.log, base_of(5)), RC_OK);
    io_fault_clear();
    cr_assert_neq(log_failure(f.log), RC_OK,
                  "a cut whose recovery point is not lowered stops the log");
    cr_assert_eq(checked_offset("recovery-point-checkpoint"), rp);
    char path[4200];
    dir_file("log-start-offset-checkpoint", path, sizeof path);
    cr_assert_eq(log_fixture_file_size(path), -1, "never written");
    log_fixture_close(&f); /* unclean: the log had failed */
    memset(f.warnings, 0, sizeof f.warnings);
    log_fixture_open(&f);
    cr_assert_not(log_fixture_warned(&f, "not trusted", NULL), "%s",
                  f.warnings);
}
