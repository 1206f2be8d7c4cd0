/* The CRC check of a read span before it is served
 * (broker/log/log_verify.h): intact spans, a corrupt first or middle
 * batch, a batch cut short, a batch larger than the buffer, and a read
 * that flips a bit (common/io.h's faults). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "broker/log/log_verify.h"
#include "common/io.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;
static uint8_t buf[4096];

static void setup(void)
{
    log_fixture_setup(&f);
    log_fixture_open(&f);
}

static void teardown(void)
{
    io_fault_clear();
    log_fixture_teardown(&f);
}

TestSuite(log_verify, .init = setup, .fini = teardown, .timeout = 60);

/* Three batches of 10 records (offsets 0-9, 10-19, 20-29); their sizes. */
static void append_three(size_t value_bytes, int64_t sizes[3])
{
    for (int i = 0; i < 3; i++) {
        struct log_append_info info = log_fixture_append(
            &f, 10, value_bytes, 1000 + i, (uint32_t)i + 1);
        sizes[i] = info.bytes;
    }
}

/* Flips one byte of segment 0's file at position. */
static void flip_at(int64_t position)
{
    cr_assert(log_fixture_flip(&f, 0, position, 0x40));
}

static struct log_verify verify_from(int64_t offset, size_t cap)
{
    struct log_span span;
    cr_assert_eq(log_read(f.log, offset, INT64_MAX, INT64_MAX, &span), RC_OK);
    struct log_verify v;
    int rv = log_verify_span(&span, buf, cap, &v);
    cr_assert_eq(rv, v.rc);
    log_span_release(&span);
    return v;
}

Test(log_verify, an_intact_span_is_served_whole)
{
    int64_t sizes[3];
    append_three(100, sizes);
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_OK);
    cr_assert_eq(v.intact_bytes, sizes[0] + sizes[1] + sizes[2]);
    cr_assert_eq(v.stop_offset, 30);
    cr_assert_eq(v.bad_position, -1);
    cr_assert_eq(v.segment_base, 0);
}

Test(log_verify, an_empty_span_is_intact)
{
    struct log_span span = {.fd = -1, .first_offset = 0};
    struct log_verify v;
    cr_assert_eq(log_verify_span(&span, buf, sizeof buf, &v), RC_OK);
    cr_assert_eq(v.intact_bytes, 0);
}

Test(log_verify, a_corrupt_first_batch_leaves_nothing_to_serve)
{
    int64_t sizes[3];
    append_three(100, sizes);
    flip_at(sizes[0] - 5); /* inside the first batch's last record */
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.intact_bytes, 0);
    cr_assert_eq(v.stop_offset, 0);
    cr_assert_eq(v.bad_position, 0);
}

/* A flip in the first batch's lastOffsetDelta (CRC-covered) makes it
 * claim offsets far past the log end. Before, log_read() answered an
 * empty span for it, so neither a fetch nor the scrub ever read it: a
 * follower fetching from offset 0 got nothing, forever. Now the batch is
 * handed out alone and its check fails. */
Test(log_verify, a_batch_claiming_offsets_past_the_end_is_read_and_caught)
{
    int64_t sizes[3];
    append_three(100, sizes);
    flip_at(RECORD_BATCH_OFF_ATTRIBUTES + 2); /* lastOffsetDelta's top byte */
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.bytes, sizes[0], "the damaged batch, alone");
    log_span_release(&span);
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.intact_bytes, 0);
    cr_assert_eq(v.stop_offset, 0);
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, 5, &span), RC_OK);
    cr_assert_eq(span.bytes, sizes[0], "whatever bound the reader gives");
    log_span_release(&span);
}

/* The same flip the other way: lastOffsetDelta negative, so the batch
 * ends before it starts. Before, every read from offset 0 skipped it and
 * began at offset 10 (a follower then held a hole where an acknowledged
 * record was, and the scrub never read it). Now it is the batch read
 * there, and its check fails. */
Test(log_verify, a_batch_ending_before_it_starts_is_read_and_caught)
{
    int64_t sizes[3];
    append_three(100, sizes);
    cr_assert(log_fixture_flip(&f, 0, RECORD_BATCH_OFF_ATTRIBUTES + 2, 0x80));
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(span.first_offset, 0, "not the batch after it");
    cr_assert_eq(span.position, 0);
    log_span_release(&span);
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.intact_bytes, 0);
    cr_assert_eq(v.stop_offset, 0);
}

Test(log_verify, a_corrupt_middle_batch_serves_the_batches_before_it)
{
    int64_t sizes[3];
    append_three(100, sizes);
    flip_at(sizes[0] + 70); /* inside the second batch's records */
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.intact_bytes, sizes[0]);
    cr_assert_eq(v.stop_offset, 10);
    cr_assert_eq(v.bad_position, sizes[0]);
    /* Read from the third batch on, the span is intact again. */
    cr_assert_eq(verify_from(20, sizeof buf).rc, RC_OK);
}

Test(log_verify, a_batch_cut_short_is_refused)
{
    int64_t sizes[3];
    append_three(100, sizes);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    span.bytes = sizes[0] + sizes[1] - 7; /* the second batch cut short */
    struct log_verify v;
    cr_assert_eq(log_verify_span(&span, buf, sizeof buf, &v), RC_SHORT);
    cr_assert_eq(v.intact_bytes, sizes[0]);
    cr_assert_eq(v.stop_offset, 10);
    span.bytes = 30; /* not even a header */
    cr_assert_eq(log_verify_span(&span, buf, sizeof buf, &v), RC_SHORT);
    cr_assert_eq(v.intact_bytes, 0);
    log_span_release(&span);
}

Test(log_verify, batches_larger_than_the_buffer_are_checked_piecewise)
{
    int64_t sizes[3];
    append_three(1000, sizes); /* ~10 KB batches, a 64- or 4096-byte buf */
    cr_assert_gt(sizes[0], (int64_t)sizeof buf);
    cr_assert_eq(verify_from(0, LOG_VERIFY_BUFFER_BYTES_MIN).rc, RC_OK);
    cr_assert_eq(verify_from(0, sizeof buf).rc, RC_OK);
    flip_at(sizes[0] + sizes[1] - 3);
    struct log_verify v = verify_from(0, LOG_VERIFY_BUFFER_BYTES_MIN);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.intact_bytes, sizes[0]);
    cr_assert_eq(v.stop_offset, 10);
    v = verify_from(0, sizeof buf);
    cr_assert_eq(v.rc, RC_CORRUPT);
    cr_assert_eq(v.stop_offset, 10);
}

Test(log_verify, a_bit_flipped_by_the_read_is_caught)
{
    int64_t sizes[3];
    append_three(100, sizes);
    cr_assert_eq(io_fault_parse("read:flip:path=.log"), RC_OK);
    struct log_verify v = verify_from(0, sizeof buf);
    cr_assert_neq(v.rc, RC_OK);
    cr_assert_lt(v.intact_bytes, sizes[0] + sizes[1] + sizes[2]);
}

Test(log_verify, a_read_error_is_an_io_error_and_serves_nothing)
{
    int64_t sizes[3];
    append_three(100, sizes);
    struct log_span span;
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_OK);
    cr_assert_eq(io_fault_parse("read:eio:path=.log"), RC_OK);
    struct log_verify v;
    cr_assert_eq(log_verify_span(&span, buf, sizeof buf, &v), RC_IO);
    cr_assert_eq(v.intact_bytes, 0);
    log_span_release(&span);
    /* The read that finds the span fails the same way: the fetch
     * answers KAFKA_STORAGE_ERROR either way. */
    cr_assert_eq(log_read(f.log, 0, INT64_MAX, INT64_MAX, &span), RC_IO);
}
