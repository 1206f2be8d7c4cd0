/* Partition log: append, read, roll, truncate, delete, timestamp lookup,
 * leader epochs and group commit (broker/log/log.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "common/kafka/record_batch.h"
#include "common/bytes.h"
#include "common/crc32c.h"
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

TestSuite(log, .init = setup, .fini = teardown, .timeout = 60);

/* Parses every batch in buf, checking CRCs; returns the count. */
static int walk_batches(const uint8_t *buf, size_t len, int64_t first_base,
                        int64_t *next_offset)
{
    int n = 0;
    size_t pos = 0;
    int64_t expect = first_base;
    while (pos < len) {
        struct record_batch_header h;
        cr_assert_eq(record_batch_parse(buf + pos, len - pos, &h), RC_OK);
        cr_assert(pos + (size_t)record_batch_size(&h) <= len,
                  "span ends inside a batch");
        cr_assert(record_batch_crc_ok(buf + pos, &h));
        cr_assert_eq(h.base_offset, expect);
        expect = record_batch_last_offset(&h) + 1;
        pos += (size_t)record_batch_size(&h);
        n++;
    }
    *next_offset = expect;
    return n;
}

Test(log, new_log_is_empty_at_offset_zero)
{
    log_fixture_open(&f);
    cr_assert_eq(log_start_offset(f.log), 0);
    cr_assert_eq(log_end_offset(f.log), 0);
    cr_assert_eq(log_durable_end_offset(f.log), 0);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    cr_assert_eq(log_fixture_file_size(path), 0, "segment file %s", path);
}

Test(log, append_assigns_offsets_and_stamps_epoch)
{
    log_fixture_open(&f);
    struct built_batch b = batch_build(5, 10, 1000, 1);
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 7, 1000, &info), RC_OK);
    cr_assert_eq(info.base_offset, 0);
    cr_assert_eq(info.last_offset, 4);
    cr_assert_eq(bytes_be64(b.bytes), 0);
    cr_assert_eq((int32_t)bytes_be32(b.bytes + 12), 7);
    /* The rewritten batch still carries a valid CRC. */
    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(b.bytes, b.len, true, &h), RC_OK);
    built_batch_free(&b);
    info = log_fixture_append(&f, 3, 10, 2000, 2);
    cr_assert_eq(info.base_offset, 5);
    cr_assert_eq(info.last_offset, 7);
    cr_assert_eq(log_end_offset(f.log), 8);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 7);
}

Test(log, read_returns_stored_batches_verbatim)
{
    log_fixture_open(&f);
    struct built_batch built[4];
    for (int i = 0; i < 4; i++) {
        built[i] = batch_build(i + 1, 50, 100 * i, (uint32_t)i);
        struct log_append_info info;
        struct built_batch copy = batch_build(i + 1, 50, 100 * i,
                                              (uint32_t)i);
        cr_assert_eq(log_append(f.log, copy.bytes, copy.len, 3, 0, &info),
                     RC_OK);
        built_batch_free(&copy);
    }
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, INT64_MAX, &span), RC_OK);
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(&span, &len);
    size_t pos = 0;
    for (int i = 0; i < 4; i++) {
        cr_assert(batch_same_payload(buf + pos, &built[i]), "batch %d", i);
        pos += built[i].len;
        built_batch_free(&built[i]);
    }
    cr_assert_eq(pos, len);
    free(buf);
    log_span_release(&span);
}

Test(log, read_starts_at_the_batch_holding_the_offset)
{
    log_fixture_open(&f);
    for (int i = 0; i < 10; i++) {
        log_fixture_append(&f, 10, 20, i, (uint32_t)i);
    }
    struct log_span span;
    cr_assert_eq(log_read(f.log, 37, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.first_offset, 30);
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(&span, &len);
    int64_t next = 0;
    cr_assert_eq(walk_batches(buf, len, 30, &next), 7);
    cr_assert_eq(next, 100);
    free(buf);
    log_span_release(&span);
}

Test(log, read_honours_max_bytes_with_whole_batches)
{
    log_fixture_open(&f);
    int64_t batch_len = 0;
    for (int i = 0; i < 10; i++) {
        batch_len = log_fixture_append(&f, 1, 100, i, 1).bytes;
    }
    struct log_span span;
    /* Two and a half batches' worth gives two whole batches. */
    cr_assert_eq(log_read(f.log, 0, batch_len * 5 / 2, INT64_MAX, &span),
                 RC_OK);
    cr_assert_eq(span.bytes, 2 * batch_len);
    log_span_release(&span);
    /* A limit smaller than one batch still returns that batch whole. */
    cr_assert_eq(log_read(f.log, 3, 10, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.bytes, batch_len);
    cr_assert_eq(span.first_offset, 3);
    log_span_release(&span);
}

Test(log, read_stops_below_max_offset)
{
    log_fixture_open(&f);
    for (int i = 0; i < 5; i++) {
        log_fixture_append(&f, 2, 10, i, 1);
    }
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, 6, &span), RC_OK);
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(&span, &len);
    int64_t next = 0;
    cr_assert_eq(walk_batches(buf, len, 0, &next), 3);
    cr_assert_eq(next, 6);
    free(buf);
    log_span_release(&span);
    cr_assert_eq(log_read(f.log, 6, 1 << 20, 6, &span), RC_OK);
    cr_assert_eq(span.bytes, 0, "nothing at or above the limit");
    cr_assert_null(span.seg);
}

Test(log, read_outside_the_log_is_out_of_range)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 4, 10, 0, 1);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 5, 100, INT64_MAX, &span), RC_OUT_OF_RANGE);
    cr_assert_eq(log_read(f.log, -1, 100, INT64_MAX, &span),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(log_read(f.log, 4, 100, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.bytes, 0, "the end itself is an empty read");
}

Test(log, corrupt_or_malformed_batches_are_rejected_and_nothing_written)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 2, 10, 0, 1);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    int64_t size = log_fixture_file_size(path);
    struct log_append_info info;
    struct built_batch b = batch_build(3, 10, 0, 2);

    b.bytes[b.len - 1] ^= 0x01; /* a flipped bit in a record */
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, 0, &info), RC_CORRUPT);
    b.bytes[b.len - 1] ^= 0x01;

    b.bytes[16] = 1; /* magic 1 */
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, 0, &info),
                 RC_MALFORMED);
    b.bytes[16] = 2;

    cr_assert_eq(log_append(f.log, b.bytes, b.len - 1, 0, 0, &info),
                 RC_SHORT);
    cr_assert_eq(log_append(f.log, b.bytes, 30, 0, 0, &info), RC_SHORT);

    /* recordCount disagreeing with lastOffsetDelta (CRC recomputed). */
    struct built_batch c = batch_build(3, 10, 0, 3);
    bytes_put_be32(c.bytes + 57, 2);
    bytes_put_be32(c.bytes + 17, 0);
    struct record_batch_header h;
    cr_assert_eq(record_batch_parse(c.bytes, c.len, &h), RC_OK);
    bytes_put_be32(c.bytes + 17, crc32c(c.bytes + 21, c.len - 21));
    cr_assert_eq(log_append(f.log, c.bytes, c.len, 0, 0, &info),
                 RC_MALFORMED);

    cr_assert_eq(log_end_offset(f.log), 2);
    cr_assert_eq(log_fixture_file_size(path), size);
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, 0, &info), RC_OK);
    cr_assert_eq(info.base_offset, 2);
    built_batch_free(&b);
    built_batch_free(&c);
}

Test(log, rolls_by_segment_bytes_with_twenty_digit_names)
{
    f.cfg.segment_bytes = 4096;
    log_fixture_open(&f);
    for (int i = 0; i < 20; i++) {
        log_fixture_append(&f, 5, 100, i, (uint32_t)i); /* ~700 B each */
    }
    cr_assert_gt(log_segment_count(f.log), 3);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    cr_assert_leq(log_fixture_file_size(path), 4096);
    /* Every offset reads back from whichever segment holds it. */
    for (int64_t off = 0; off < 100; off += 7) {
        struct log_span span;
        cr_assert_eq(log_read(f.log, off, 1 << 20, INT64_MAX, &span), RC_OK);
        cr_assert_gt(span.bytes, 0);
        cr_assert_eq(span.first_offset, off - off % 5);
        size_t len = 0;
        uint8_t *buf = log_fixture_span_bytes(&span, &len);
        int64_t next = 0;
        cr_assert_gt(walk_batches(buf, len, span.first_offset, &next), 0);
        free(buf);
        log_span_release(&span);
    }
}

Test(log, rolls_by_segment_ms)
{
    f.cfg.segment_ms = 1000;
    log_fixture_open(&f);
    log_fixture_append(&f, 1, 10, 10000, 1);
    log_fixture_append(&f, 1, 10, 10500, 1);
    cr_assert_eq(log_segment_count(f.log), 1);
    log_fixture_append(&f, 1, 10, 11000, 1); /* 1000 ms: not past it */
    cr_assert_eq(log_segment_count(f.log), 1);
    log_fixture_append(&f, 1, 10, 11001, 1); /* past segment.ms */
    cr_assert_eq(log_segment_count(f.log), 2);
    char path[4200];
    log_fixture_file(&f, 3, "log", path, sizeof path);
    cr_assert_gt(log_fixture_file_size(path), 0);
}

/* The time roll follows the batches' timestamps, not the clock of the
 * appending replica: a replica copying old batches (now far past their
 * timestamps) cuts its segments where the leader did. */
Test(log, rolls_by_segment_ms_at_the_same_batches_whatever_the_clock)
{
    f.cfg.segment_ms = 1000;
    log_fixture_open(&f);
    const int64_t late = 5000000000LL; /* the replica's clock */
    int64_t ts[] = {10000, 10500, 11001, 11500, 12002};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        struct built_batch b = batch_build(1, 10, ts[i], (uint32_t)i);
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, late, &info),
                     RC_OK);
        built_batch_free(&b);
    }
    cr_assert_eq(log_segment_count(f.log), 3, "cut before 11001 and 12002");
}

Test(log, sparse_index_gets_an_entry_per_interval)
{
    f.cfg.index_interval_bytes = 1000;
    log_fixture_open(&f);
    for (int i = 0; i < 50; i++) {
        log_fixture_append(&f, 1, 300, i, 1); /* ~370 B per batch */
    }
    log_fixture_close(&f);
    char path[4200];
    log_fixture_file(&f, 0, "index", path, sizeof path);
    int64_t size = log_fixture_file_size(path);
    /* One 8-byte entry per three batches or so, never per batch. */
    cr_assert_gt(size, 8 * 10);
    cr_assert_lt(size, 8 * 25);
    cr_assert_eq(size % 8, 0);
}

Test(log, truncate_to_drops_later_batches_and_segments)
{
    f.cfg.segment_bytes = 2048;
    log_fixture_open(&f);
    for (int i = 0; i < 30; i++) {
        log_fixture_append(&f, 2, 100, i, (uint32_t)i);
    }
    size_t segs = log_segment_count(f.log);
    cr_assert_gt(segs, 4);
    cr_assert_eq(log_truncate_to(f.log, 21), RC_OK);
    /* The batch holding 21 (20..21) goes whole. */
    cr_assert_eq(log_end_offset(f.log), 20);
    cr_assert_lt(log_segment_count(f.log), segs);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 21, 100, INT64_MAX, &span),
                 RC_OUT_OF_RANGE);
    struct log_append_info info = log_fixture_append(&f, 1, 10, 99, 9);
    cr_assert_eq(info.base_offset, 20);
    log_fixture_close_unclean(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), 21);
}

Test(log, truncate_below_start_restarts_the_log_there)
{
    f.cfg.segment_bytes = 1024;
    log_fixture_open(&f);
    for (int i = 0; i < 20; i++) {
        log_fixture_append(&f, 2, 100, i, 1);
    }
    cr_assert_eq(log_truncate_fully_and_start_at(f.log, 20), RC_OK);
    int64_t start = log_start_offset(f.log);
    cr_assert_eq(start, 20);
    cr_assert_eq(log_truncate_to(f.log, start - 1), RC_OK);
    cr_assert_eq(log_start_offset(f.log), start - 1);
    cr_assert_eq(log_end_offset(f.log), start - 1);
    cr_assert_eq(log_segment_count(f.log), 1);
}

/* A restart at a segment's own base offset keeps that segment, emptied:
 * creating a new file of the same name would truncate the old one's
 * inode and then be unlinked with it. */
Test(log, truncate_fully_at_a_segment_base_keeps_it_emptied)
{
    f.cfg.segment_bytes = 1024;
    log_fixture_open(&f);
    for (int i = 0; i < 20; i++) {
        log_fixture_append(&f, 2, 100, i, 1);
    }
    cr_assert_gt(log_segment_count(f.log), 2);
    int64_t end = log_end_offset(f.log);
    cr_assert_eq(log_truncate_fully_and_start_at(f.log, 0), RC_OK);
    cr_assert_eq(log_segment_count(f.log), 1);
    cr_assert_eq(log_start_offset(f.log), 0);
    cr_assert_eq(log_end_offset(f.log), 0);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    cr_assert_eq(log_fixture_file_size(path), 0, "kept and emptied");
    log_fixture_append(&f, 2, 100, 99, 1);
    cr_assert_eq(log_end_offset(f.log), 2);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_end_offset(f.log), 2);
    cr_assert_lt(2, end);
}

/* The new segment cannot be created (its name is taken by a directory):
 * the log is as it was, still readable and appendable, not without a
 * segment. */
Test(log, truncate_fully_that_cannot_create_a_segment_changes_nothing)
{
    f.cfg.segment_bytes = 1024;
    log_fixture_open(&f);
    for (int i = 0; i < 10; i++) {
        log_fixture_append(&f, 2, 100, i, 1);
    }
    size_t segs = log_segment_count(f.log);
    int64_t end = log_end_offset(f.log);
    char path[4200];
    log_fixture_file(&f, 500, "log", path, sizeof path);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_neq(log_truncate_fully_and_start_at(f.log, 500), RC_OK);
    cr_assert_eq(log_segment_count(f.log), segs);
    cr_assert_eq(log_start_offset(f.log), 0);
    cr_assert_eq(log_end_offset(f.log), end);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, INT64_MAX, &span), RC_OK);
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(&span, &len);
    int64_t next = 0;
    cr_assert_gt(walk_batches(buf, len, 0, &next), 0, "offset 0 still there");
    free(buf);
    log_span_release(&span);
    log_fixture_append(&f, 2, 100, 99, 1);
    cr_assert_eq(log_end_offset(f.log), end + 2);
    cr_assert_eq(rmdir(path), 0);
}

Test(log, read_holds_a_deleted_segment_until_released)
{
    f.cfg.segment_bytes = 1024;
    log_fixture_open(&f);
    for (int i = 0; i < 10; i++) {
        log_fixture_append(&f, 2, 100, i, 1);
    }
    size_t segs = log_segment_count(f.log);
    cr_assert_gt(segs, 1);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, 1 << 20, INT64_MAX, &span), RC_OK);
    cr_assert_eq(log_truncate_fully_and_start_at(f.log, 100), RC_OK);
    char path[4200];
    log_fixture_file(&f, 0, "log", path, sizeof path);
    cr_assert_eq(log_fixture_file_size(path), -1, "file deleted");
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(&span, &len);
    int64_t next = 0;
    cr_assert_gt(walk_batches(buf, len, 0, &next), 0);
    free(buf);
    log_span_release(&span);
}

/* Asks the log for ts: wants the record at want_off, stamped want_ts. */
static void expect_time(int64_t ts, int64_t want_off, int64_t want_ts)
{
    struct log_time_offset got;
    cr_assert_eq(log_offset_for_timestamp(f.log, ts, &got), RC_OK,
                 "ts %lld", (long long)ts);
    int64_t off = got.offset, got_ts = got.timestamp;
    cr_assert_eq(off, want_off, "ts %lld: offset %lld", (long long)ts,
                 (long long)off);
    cr_assert_eq(got_ts, want_ts, "ts %lld: timestamp %lld", (long long)ts,
                 (long long)got_ts);
}

/* Kafka's rule: the first record (not batch) at or after the time, with
 * that record's timestamp. */
Test(log, offset_for_timestamp_finds_the_first_record_at_or_after)
{
    f.cfg.segment_bytes = 2048;
    f.cfg.index_interval_bytes = 300;
    log_fixture_open(&f);
    for (int i = 0; i < 40; i++) {
        log_fixture_append(&f, 2, 100, 1000 + 10 * i, 1); /* ts, ts+1 */
    }
    expect_time(0, 0, 1000);
    expect_time(1000, 0, 1000);
    expect_time(1001, 1, 1001);      /* inside the first batch */
    expect_time(1002, 2, 1010);      /* between batches: the next one */
    expect_time(1255, 52, 1260);
    expect_time(1261, 53, 1261);
    expect_time(1391, 79, 1391);
    struct log_time_offset none;
    cr_assert_eq(log_offset_for_timestamp(f.log, 1392, &none), RC_NOT_FOUND);
    /* Same answers after a clean reopen, from the saved time index. */
    log_fixture_close(&f);
    log_fixture_open(&f);
    expect_time(1255, 52, 1260);
    expect_time(1001, 1, 1001);
}

Test(log, epoch_cache_tracks_leaders_and_survives_reopen)
{
    log_fixture_open(&f);
    cr_assert_eq(log_assign_epoch(f.log, 1), RC_OK);
    struct built_batch b = batch_build(5, 10, 0, 1);
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 1, 0, &info), RC_OK);
    built_batch_free(&b);
    cr_assert_eq(log_assign_epoch(f.log, 3), RC_OK); /* starts at 5 */
    b = batch_build(5, 10, 0, 1);
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 3, 0, &info), RC_OK);
    built_batch_free(&b);
    int32_t e = 0;
    int64_t end = 0;
    log_end_offset_for_epoch(f.log, 1, &e, &end);
    cr_assert_eq(e, 1);
    cr_assert_eq(end, 5);
    log_end_offset_for_epoch(f.log, 2, &e, &end);
    cr_assert_eq(e, 1, "largest epoch <= 2");
    cr_assert_eq(end, 5);
    log_end_offset_for_epoch(f.log, 3, &e, &end);
    cr_assert_eq(e, 3);
    cr_assert_eq(end, 10);
    /* Older than every epoch here: it ended where the first began
     * (Kafka's answer, with the requested epoch). */
    log_end_offset_for_epoch(f.log, 0, &e, &end);
    cr_assert_eq(e, 0);
    cr_assert_eq(end, 0);
    log_fixture_close(&f);
    log_fixture_open(&f);
    log_end_offset_for_epoch(f.log, 1, &e, &end);
    cr_assert_eq(end, 5);
    /* Truncating back to where epoch 3 began drops its entry. */
    cr_assert_eq(log_truncate_to(f.log, 5), RC_OK);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 1);
    /* Newer than the latest: unknown (Kafka's UNDEFINED). */
    log_end_offset_for_epoch(f.log, 3, &e, &end);
    cr_assert_eq(e, LOG_EPOCH_UNDEFINED);
    cr_assert_eq(end, LOG_EPOCH_UNDEFINED);
}

Test(log, replica_append_keeps_offsets_and_epochs)
{
    log_fixture_open(&f);
    struct built_batch b = batch_build(3, 10, 0, 1);
    record_batch_set_base_offset(b.bytes, 0);
    record_batch_set_leader_epoch(b.bytes, 4);
    struct log_append_info info;
    cr_assert_eq(log_append_replica(f.log, b.bytes, b.len, 0, &info), RC_OK);
    cr_assert_eq(info.base_offset, 0);
    /* The same offsets again are refused, a later base is fine. */
    cr_assert_eq(log_append_replica(f.log, b.bytes, b.len, 0, &info),
                 RC_INVALID);
    record_batch_set_base_offset(b.bytes, 3);
    record_batch_set_leader_epoch(b.bytes, 6);
    cr_assert_eq(log_append_replica(f.log, b.bytes, b.len, 0, &info), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 6);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 6);
    built_batch_free(&b);
}

struct counter {
    int calls;
    int ok;
    int64_t durable_seen;
    struct log *log;
};

static void count_cb(void *arg, int rc)
{
    struct counter *c = arg;
    c->calls++;
    if (rc == RC_OK) {
        c->ok++;
    }
    c->durable_seen = log_durable_end_offset(c->log);
}

Test(log, group_commit_covers_many_appends_with_few_syncs)
{
    log_fixture_open(&f);
    struct counter c = {.log = f.log};
    for (int i = 0; i < 200; i++) {
        struct log_append_info info = log_fixture_append(&f, 4, 100, i, 1);
        cr_assert_eq(log_wait_durable(f.log, info.last_offset + 1, count_cb,
                                      &c), RC_OK);
    }
    /* Nothing is durable until a sync has completed. */
    cr_assert_eq(log_durable_end_offset(f.log), 0);
    cr_assert_eq(c.calls, 0, "never called back from inside the call");
    for (int i = 0; i < 10000 && c.calls < 200; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(c.ok, 200);
    cr_assert_eq(log_durable_end_offset(f.log), 800);
    cr_assert_eq(c.durable_seen, 800);
    cr_assert_leq(log_sync_count(f.log), 2,
                  "200 appends in one iteration need one sync, got %llu",
                  (unsigned long long)log_sync_count(f.log));
    cr_assert(log_sync_idle(f.log));
}

Test(log, durable_end_advances_only_after_sync)
{
    log_fixture_open(&f);
    struct log_append_info info = log_fixture_append(&f, 4, 100, 0, 1);
    cr_assert_eq(log_durable_end_offset(f.log), 0);
    cr_assert_eq(log_fixture_wait_durable(&f, info.last_offset + 1), RC_OK);
    cr_assert_eq(log_durable_end_offset(f.log), 4);
    log_fixture_append(&f, 4, 100, 0, 1);
    cr_assert_eq(log_durable_end_offset(f.log), 4);
    log_request_sync(f.log);
    for (int i = 0; i < 1000 && log_durable_end_offset(f.log) < 8; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(log_durable_end_offset(f.log), 8);
}

Test(log, truncation_fails_waiters_above_the_cut)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 4, 10, 0, 1);
    cr_assert_eq(log_fixture_wait_durable(&f, 4), RC_OK);
    log_fixture_append(&f, 4, 10, 0, 1);
    struct counter below = {.log = f.log};
    struct counter above = {.log = f.log};
    cr_assert_eq(log_wait_durable(f.log, 4, count_cb, &below), RC_OK);
    cr_assert_eq(log_wait_durable(f.log, 8, count_cb, &above), RC_OK);
    cr_assert_eq(log_truncate_to(f.log, 4), RC_OK);
    for (int i = 0; i < 1000 && below.calls + above.calls < 2; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert_eq(below.ok, 1);
    cr_assert_eq(above.calls, 1);
    cr_assert_eq(above.ok, 0);
}

Test(log, close_calls_back_pending_waiters)
{
    log_fixture_open(&f);
    struct counter c = {.log = f.log};
    struct log_append_info info = log_fixture_append(&f, 4, 10, 0, 1);
    cr_assert_eq(log_wait_durable(f.log, info.last_offset + 1, count_cb, &c),
                 RC_OK);
    log_fixture_close(&f);
    cr_assert_eq(c.calls, 1);
    cr_assert_eq(c.ok, 1, "close syncs, so the write is durable");
}

/* The batch is in the log once the segment took it: a leader-epoch
 * checkpoint that cannot be saved afterwards must not turn the append
 * into a failure (an idempotent producer's retry would then be stored
 * twice). It stops the log, as a failed sync does: reopening rebuilds
 * the epochs from the batches the unclean close left unrecovered. */
Test(log, epoch_checkpoint_failure_after_the_write_still_appends)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 2, 10, 1000, 1); /* epoch 0 */
    char blocker[4200];
    snprintf(blocker, sizeof blocker, "%s/leader-epoch-checkpoint.tmp",
             f.dir);
    cr_assert_eq(mkdir(blocker, 0755), 0, "%s", blocker);
    struct built_batch b = batch_build(3, 10, 2000, 2);
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 2, 2000, &info), RC_OK,
                 "the batch was written: the append succeeded");
    cr_assert_eq(info.base_offset, 2);
    cr_assert_eq(log_end_offset(f.log), 5);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 2);
    cr_assert_neq(log_failure(f.log), RC_OK, "the log stopped");
    cr_assert_neq(log_append(f.log, b.bytes, b.len, 2, 2000, &info), RC_OK);
    built_batch_free(&b);
    cr_assert_eq(rmdir(blocker), 0);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_not(f.opened_clean, "a failed log does not close cleanly");
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 2,
                 "rebuilt from the batches");
    int32_t epoch = -1;
    int64_t end = -1;
    log_end_offset_for_epoch(f.log, 0, &epoch, &end);
    cr_assert_eq(epoch, 0);
    cr_assert_eq(end, 2, "epoch 2 starts at offset 2");
}

/* A broker that became leader recorded (epoch, its log end) and was
 * deposed before appending in that epoch. As a follower it asks the new
 * leader about its latest epoch; the answer may tell it to truncate at or
 * past its log end. The empty epoch's entry must go all the same (Kafka's
 * UnifiedLog.truncateTo), or it asks about that epoch again forever. */
Test(log, truncating_at_the_end_drops_an_epoch_with_no_records)
{
    log_fixture_open(&f);
    log_fixture_append(&f, 3, 10, 1000, 1); /* epoch 0: offsets 0-2 */
    cr_assert_eq(log_assign_epoch(f.log, 6), RC_OK);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 6);
    cr_assert_eq(log_truncate_to(f.log, 3), RC_OK);
    cr_assert_eq(log_end_offset(f.log), 3, "no record removed");
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0,
                 "the empty epoch 6 is gone");
    cr_assert_eq(log_assign_epoch(f.log, 7), RC_OK);
    cr_assert_eq(log_truncate_to(f.log, 50), RC_OK);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0, "past the end too");
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_epoch_latest(log_epochs(f.log)), 0,
                 "and in the checkpoint");
}
