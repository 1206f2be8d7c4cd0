/* Time lookups (ListOffsets by time and MAX_TIMESTAMP, broker/log/log.h)
 * against a table: records with known timestamps in several batches and
 * segments, appended through the broker's own path (the batch header
 * checked, then Kafka's LogValidator, record_validate(), which recomputes
 * maxTimestamp, or stamps LogAppendTime, and record_batch_set_max_timestamp())
 * with client batches whose maxTimestamp is wrong, timestamps out of order
 * inside a batch, a compressed batch and the largest time reached by
 * several records. Every time between and at the records' is looked up
 * and compared with a model of Kafka's rule (the first segment whose
 * largest timestamp reaches the time, and in it the first record at or
 * after the time and at or above the log start offset), then again after
 * a clean reopen (indexes loaded from their files), after a crash
 * (segments recovered), after a truncation and after the log start moved
 * into a segment. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log/log.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/kafka/record_validate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"

static struct log_fixture f;

static void setup(void)
{
    log_fixture_setup(&f);
    f.cfg.index_interval_bytes = 64; /* index entries inside segments */
}

static void teardown(void)
{
    log_fixture_teardown(&f);
}

TestSuite(log_time, .init = setup, .fini = teardown, .timeout = 60);

#define T0 1700000000000LL /* a wall-clock ms */
#define RECORDS_MAX 8

/* One client batch: its records' timestamps (T0-relative), the
 * maxTimestamp the client wrote in its header (T0-relative; -1 as sent),
 * the broker's clock at the append (T0-relative), its codec, its leader
 * epoch and whether a new segment starts before it. */
struct table_batch {
    int n;
    int64_t ts[RECORDS_MAX];
    int64_t client_max;
    int64_t now;
    int codec;
    int32_t epoch;
    bool roll_before;
};

/* The log as the model sees it: every record's offset, timestamp (as a
 * lookup answers it), batch epoch and segment. */
struct model_record {
    int64_t offset;
    int64_t ts;
    int32_t epoch;
    int seg;
};

static struct {
    struct model_record r[64];
    int n;
    int seg;
} m;

static const struct table_batch table[] = {
    /* segment 0 */
    {3, {100, 105, 103}, 99, 1000, RECORD_CODEC_NONE, 1, false},
    {3, {110, 110, 120}, 5000, 1000, RECORD_CODEC_NONE, 1, false},
    /* segment 1: the largest time, 300, first at offset 7 */
    {3, {115, 300, 130}, 130, 1010, RECORD_CODEC_GZIP, 2, true},
    {2, {140, 150}, 150, 1020, RECORD_CODEC_NONE, 2, false},
    {2, {300, 160}, 300, 1020, RECORD_CODEC_NONE, 2, false},
    {3, {170, 180, 190}, -1, 1005, RECORD_CODEC_NONE, 2, false},
    /* segment 2 */
    {2, {300, 200}, 300, 1020, RECORD_CODEC_NONE, 4, true},
    {3, {210, 220, 230}, 230, 1015, RECORD_CODEC_NONE, 4, false},
};
#define TABLE_BATCHES (sizeof table / sizeof table[0])

/* Builds b as a client sends it (CreateTime, header maxTimestamp as the
 * client says) and appends it as the broker's Produce path does. */
static void append_batch(const struct table_batch *b, bool log_append_time)
{
    struct writer recs;
    writer_init(&recs, 1 << 16);
    for (int i = 0; i < b->n; i++) {
        struct batch_record r = {
            .offset_delta = i, .timestamp_delta = b->ts[i] - b->ts[0],
            .key = NULL, .key_len = -1, .value = "v", .value_len = 1};
        batch_write_record(&recs, &r);
    }
    struct batch_spec spec = {
        .codec = b->codec, .record_count = b->n,
        .base_timestamp = T0 + b->ts[0],
        .max_timestamp = b->client_max < 0 ? -1 : T0 + b->client_max,
        .producer_id = -1, .base_sequence = -1};
    struct built_batch bb = batch_wrap(recs.data, recs.len, &spec);
    writer_free(&recs);

    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(bb.bytes, bb.len, true, &h), RC_OK);
    struct record_validator *v = NULL;
    cr_assert_eq(record_validator_new(&v), RC_OK);
    struct record_validate_config cfg = {
        .now_ms = T0 + b->now, .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = INT64_MAX,
        .log_append_time = log_append_time,
        .inflated_bytes_max = RECORD_INFLATED_BYTES_MAX};
    struct record_validate_result res;
    cr_assert_eq(record_validate(v, bb.bytes, bb.len, &h, &cfg, &res),
                 RC_OK);
    record_validator_free(v);
    (void)record_batch_set_max_timestamp(bb.bytes, &h, log_append_time,
                                         res.max_timestamp);
    if (b->roll_before) {
        cr_assert_eq(log_roll(f.log), RC_OK);
        m.seg++;
    }
    struct log_append_info info;
    cr_assert_eq(log_append_validated(f.log, bb.bytes, bb.len, &h, b->epoch,
                                      T0 + b->now, &info),
                 RC_OK);
    built_batch_free(&bb);
    int64_t want_max = log_append_time ? T0 + b->now : INT64_MIN;
    for (int i = 0; i < b->n; i++) {
        int64_t ts = log_append_time ? T0 + b->now : T0 + b->ts[i];
        if (!log_append_time && ts > want_max) {
            want_max = ts;
        }
        m.r[m.n] = (struct model_record){
            .offset = info.base_offset + i, .ts = ts, .epoch = b->epoch,
            .seg = m.seg};
        cr_assert_eq(m.r[m.n].offset, m.n ? m.r[m.n - 1].offset + 1 : 0);
        m.n++;
    }
    cr_assert_eq(info.max_timestamp, want_max,
                 "the stored maxTimestamp is the records', not the client's");
}

static void append_table(bool log_append_time)
{
    log_fixture_open(&f);
    m.n = 0;
    m.seg = 0;
    for (size_t i = 0; i < TABLE_BATCHES; i++) {
        append_batch(&table[i], log_append_time);
    }
    cr_assert_eq(log_segment_count(f.log), (size_t)m.seg + 1);
}

/* Kafka's answer for t: the first segment with a record at or after t
 * (its largest timestamp reaches t), then the first record in it at or
 * after t and at or above start. */
static const struct model_record *model_time(int64_t t, int64_t start)
{
    int seg = -1;
    for (int i = 0; i < m.n && seg < 0; i++) {
        if (m.r[i].ts >= t) {
            seg = m.r[i].seg;
        }
    }
    for (int i = 0; i < m.n && seg >= 0; i++) {
        if (m.r[i].seg == seg && m.r[i].ts >= t && m.r[i].offset >= start) {
            return &m.r[i];
        }
    }
    return NULL;
}

/* MAX_TIMESTAMP: the first record with the largest timestamp (the log
 * start offset is not looked at). */
static const struct model_record *model_max(void)
{
    const struct model_record *best = NULL;
    for (int i = 0; i < m.n; i++) {
        if (best == NULL || m.r[i].ts > best->ts) {
            best = &m.r[i];
        }
    }
    return best;
}

static void expect_found(int rv, const struct log_time_offset *got,
                         const struct model_record *want, const char *what,
                         int64_t t)
{
    if (want == NULL) {
        cr_assert_eq(rv, RC_NOT_FOUND, "%s %" PRId64 ": found offset %" PRId64,
                     what, t - T0, got->offset);
        return;
    }
    cr_assert_eq(rv, RC_OK, "%s %" PRId64 ": %s", what, t - T0, rc_str(rv));
    cr_assert_eq(got->offset, want->offset,
                 "%s %" PRId64 ": offset %" PRId64 ", want %" PRId64, what,
                 t - T0, got->offset, want->offset);
    cr_assert_eq(got->timestamp, want->ts, "%s %" PRId64 ": timestamp",
                 what, t - T0);
    cr_assert_eq(got->leader_epoch, want->epoch, "%s %" PRId64 ": epoch",
                 what, t - T0);
}

/* Every time from below the first record's to past the last one's, and
 * MAX_TIMESTAMP. */
static void check_table(int64_t lo, int64_t hi)
{
    int64_t start = log_start_offset(f.log);
    for (int64_t t = T0 + lo; t <= T0 + hi; t++) {
        struct log_time_offset got = {.offset = -1};
        int rv = log_offset_for_timestamp(f.log, t, &got);
        expect_found(rv, &got, model_time(t, start), "time", t);
    }
    struct log_time_offset got = {.offset = -1};
    int rv = log_offset_of_max_timestamp(f.log, &got);
    const struct model_record *want = model_max();
    expect_found(rv, &got, want, "max", want != NULL ? want->ts : T0);
}

static void check_after_reopens(int64_t lo, int64_t hi)
{
    check_table(lo, hi);
    log_fixture_close(&f);
    log_fixture_open(&f); /* indexes from their files */
    cr_assert(f.opened_clean);
    check_table(lo, hi);
    log_fixture_close_unclean(&f);
    log_fixture_open(&f); /* segments recovered batch by batch */
    check_table(lo, hi);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

Test(log_time, create_time_table)
{
    append_table(false);
    /* Spot checks of the model itself, from the table by hand. */
    cr_assert_eq(model_time(T0 + 104, 0)->offset, 1);
    cr_assert_eq(model_time(T0 + 111, 0)->offset, 5);
    cr_assert_eq(model_time(T0 + 121, 0)->offset, 7); /* 300, not 130 */
    cr_assert_eq(model_time(T0 + 195, 0)->offset, 7);
    cr_assert_null(model_time(T0 + 301, 0));
    cr_assert_eq(model_max()->offset, 7);
    check_after_reopens(95, 305);
}

Test(log_time, log_append_time_table)
{
    append_table(true);
    cr_assert_eq(model_time(T0 + 1001, 0)->offset, 6);
    cr_assert_eq(model_time(T0 + 1016, 0)->offset, 9);
    cr_assert_eq(model_max()->offset, 9, "1020: first the batch at 9");
    check_after_reopens(995, 1025);
}

/* A time beyond every record, and an empty log: no record (ListOffsets
 * answers offset -1, timestamp -1). */
Test(log_time, beyond_the_last_record_and_empty_log_find_nothing)
{
    log_fixture_open(&f);
    struct log_time_offset got;
    cr_assert_eq(log_offset_for_timestamp(f.log, 0, &got), RC_NOT_FOUND);
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_NOT_FOUND);
    cr_assert_eq(log_roll(f.log), RC_OK);
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_NOT_FOUND);
    append_batch(&table[0], false);
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 106, &got),
                 RC_NOT_FOUND);
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 105, &got), RC_OK);
    cr_assert_eq(got.offset, 1);
}

/* A cut that takes the record with the largest time: the segment's
 * largest time and its batch are recomputed. */
Test(log_time, truncation_recomputes_the_largest_time)
{
    append_table(false);
    cr_assert_eq(log_truncate_to(f.log, 7), RC_OK); /* batch 6..8 goes */
    cr_assert_eq(log_end_offset(f.log), 6);
    m.n = 6;
    m.seg = 1;
    cr_assert_eq(model_max()->offset, 5);
    check_after_reopens(95, 305);
    /* Appending again after the cut. */
    append_batch(&table[3], false);
    append_batch(&table[4], false);
    check_table(95, 305);
    cr_assert_eq(model_max()->offset, 8);
}

/* The log start moved into segment 1 (DeleteRecords): lookups skip what
 * is below it, but only in the segment Kafka picks, the first whose
 * largest time reaches the lookup's; that largest time still counts the
 * records below the start (their bytes are in the file), so a time that
 * only they and a later segment reach finds nothing, as in Kafka.
 * MAX_TIMESTAMP does not look at the log start (nor does Kafka's). */
Test(log_time, log_start_offset_inside_a_segment)
{
    append_table(false);
    cr_assert_eq(log_advance_start(f.log, 12), RC_OK);
    cr_assert_eq(log_start_offset(f.log), 12);
    cr_assert_eq(log_segment_count(f.log), 2, "segment 0 deleted");
    struct log_time_offset got;
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 195, &got),
                 RC_NOT_FOUND, "only 7 and 11 reach 195 in segment 1");
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 165, &got), RC_OK);
    cr_assert_eq(got.offset, 13);
    cr_assert_eq(log_offset_for_timestamp(f.log, 0, &got), RC_OK);
    cr_assert_eq(got.offset, 12);
    cr_assert_eq(got.timestamp, T0 + 160);
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_OK);
    cr_assert_eq(got.offset, 7);
    /* The whole table, with segment 0 gone from the model. */
    int k = 0;
    for (int i = 0; i < m.n; i++) {
        if (m.r[i].seg > 0) {
            m.r[k++] = m.r[i];
        }
    }
    m.n = k;
    check_after_reopens(95, 305);
}
