/* Randomized model test of the partition log: appends, reads, truncations,
 * rolls, timestamp lookups, durability waits and
 * reopens (clean and as after a crash), each checked against a simple
 * in-memory model. Prints its seed; replay a failure with SEED=<n>. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/log/log.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "tests/lib/log_fixture.h"

#define MODEL_STEPS 2500
#define MODEL_BATCHES_MAX 4096

struct model_batch {
    int64_t base;
    int32_t n;
    size_t value_bytes;
    int64_t ts;
    uint32_t seed;
};

struct model {
    struct model_batch b[MODEL_BATCHES_MAX];
    size_t n;
    int64_t start;
    int64_t end;
};

static struct log_fixture f;
static struct model m;
static uint64_t rng;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t rand_in(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(next_rand() % (uint64_t)(hi - lo + 1));
}

static int64_t last_of(const struct model_batch *b)
{
    return b->base + b->n - 1;
}

static struct built_batch build(const struct model_batch *b)
{
    return batch_build(b->n, b->value_bytes, b->ts, b->seed);
}

static void do_append(void)
{
    if (m.n == MODEL_BATCHES_MAX) {
        return;
    }
    struct model_batch mb = {
        .n = (int32_t)rand_in(1, 10),
        .value_bytes = (size_t)rand_in(0, 300),
        .ts = rand_in(0, 9) == 0 ? rand_in(0, 5000) : 5000 + (int64_t)m.n,
        .seed = (uint32_t)next_rand(),
    };
    struct built_batch b = build(&mb);
    struct log_append_info info;
    int rv = log_append(f.log, b.bytes, b.len, 0, mb.ts + mb.n, &info);
    bool too_large = (int64_t)b.len > f.cfg.segment_bytes;
    built_batch_free(&b);
    if (too_large) {
        cr_assert_eq(rv, RC_TOO_LARGE, "a batch larger than a segment");
        return;
    }
    cr_assert_eq(rv, RC_OK, "append: %s", rc_str(rv));
    mb.base = m.end;
    cr_assert_eq(info.base_offset, mb.base);
    m.b[m.n++] = mb;
    m.end = last_of(&mb) + 1;
}

/* Index of the first model batch whose last offset is >= offset. */
static size_t model_find(int64_t offset)
{
    size_t i = 0;
    while (i < m.n && last_of(&m.b[i]) < offset) {
        i++;
    }
    return i;
}

static void check_span(const struct log_span *span, int64_t offset,
                       int64_t max_bytes, int64_t max_offset)
{
    size_t i = model_find(offset);
    if (i == m.n || last_of(&m.b[i]) >= max_offset) {
        cr_assert_eq(span->bytes, 0, "offset %" PRId64 " expects nothing",
                     offset);
        return;
    }
    cr_assert_gt(span->bytes, 0, "offset %" PRId64, offset);
    cr_assert_eq(span->first_offset, m.b[i].base);
    size_t len = 0;
    uint8_t *buf = log_fixture_span_bytes(span, &len);
    size_t pos = 0;
    int batches = 0;
    while (pos < len) {
        cr_assert_lt(i, m.n);
        struct built_batch want = build(&m.b[i]);
        struct record_batch_header h;
        cr_assert_eq(record_batch_parse(buf + pos, len - pos, &h), RC_OK);
        cr_assert_eq(h.base_offset, m.b[i].base);
        cr_assert_lt(record_batch_last_offset(&h), max_offset);
        cr_assert(batch_same_payload(buf + pos, &want));
        pos += want.len;
        built_batch_free(&want);
        i++;
        batches++;
    }
    cr_assert_eq(pos, len, "span ends on a batch boundary");
    cr_assert(batches == 1 || span->bytes <= max_bytes);
    free(buf);
}

static void do_read(void)
{
    int64_t offset = rand_in(m.start, m.end);
    int64_t max_bytes = rand_in(1, 8192);
    int64_t max_offset = rand_in(offset, m.end + 1);
    struct log_span span;
    cr_assert_eq(log_read(f.log, offset, max_bytes, max_offset, &span),
                 RC_OK);
    check_span(&span, offset, max_bytes, max_offset);
    log_span_release(&span);
    if (m.start > 0) {
        cr_assert_eq(log_read(f.log, m.start - 1, 1, INT64_MAX, &span),
                     RC_OUT_OF_RANGE);
    }
    cr_assert_eq(log_read(f.log, m.end + 1, 1, INT64_MAX, &span),
                 RC_OUT_OF_RANGE);
}

static void do_truncate(void)
{
    int64_t offset = rand_in(m.start > 0 ? m.start - 1 : 0, m.end);
    cr_assert_eq(log_truncate_to(f.log, offset), RC_OK);
    if (offset >= m.end) {
        return;
    }
    if (offset <= m.start) {
        m.n = 0;
        m.start = offset;
        m.end = offset;
        return;
    }
    size_t i = model_find(offset);
    m.end = m.b[i].base;
    m.n = i;
}

static void do_timestamp(void)
{
    int64_t ts = rand_in(0, 5000 + (int64_t)m.n + 10);
    /* The first record at or after ts (records of a batch are stamped
     * ts, ts+1, ...). */
    int64_t want = -1;
    for (size_t i = 0; i < m.n; i++) {
        if (m.b[i].ts + m.b[i].n - 1 >= ts) {
            want = ts <= m.b[i].ts ? m.b[i].base
                                   : m.b[i].base + (ts - m.b[i].ts);
            break;
        }
    }
    struct log_time_offset found = {.offset = -1};
    int rv = log_offset_for_timestamp(f.log, ts, &found);
    int64_t got = found.offset;
    if (want < 0) {
        cr_assert_eq(rv, RC_NOT_FOUND, "ts %" PRId64 " found %" PRId64, ts,
                     got);
    } else {
        cr_assert_eq(rv, RC_OK);
        cr_assert_eq(got, want, "ts %" PRId64, ts);
    }
}

static void do_reopen(void)
{
    if (next_rand() % 2 == 0) {
        log_fixture_close(&f);
    } else {
        log_fixture_close_unclean(&f);
    }
    log_fixture_open(&f);
    cr_assert_eq(f.n_warnings, 0, "%s", f.last_warning);
}

static void check_bounds(void)
{
    cr_assert_eq(log_start_offset(f.log), m.start);
    cr_assert_eq(log_end_offset(f.log), m.end);
    cr_assert_leq(log_durable_end_offset(f.log), m.end);
}

static void step(void)
{
    int64_t r = rand_in(0, 99);
    if (r < 55) {
        do_append();
    } else if (r < 75) {
        do_read();
    } else if (r < 80) {
        do_truncate();
    } else if (r < 85) {
        cr_assert_eq(log_roll(f.log), RC_OK);
    } else if (r < 91) {
        do_timestamp();
    } else if (r < 95) {
        cr_assert_eq(log_fixture_wait_durable(&f, m.end), RC_OK);
        cr_assert_eq(log_durable_end_offset(f.log), m.end);
    } else {
        do_reopen();
    }
    check_bounds();
}

Test(log_model, random_operations_match_the_model, .timeout = 300)
{
    const char *env = getenv("SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 10)
                                : (uint64_t)time(NULL) ^ (uint64_t)clock();
    fprintf(stderr, "log_model seed=%" PRIu64 " (replay with SEED=%" PRIu64
            ")\n", seed, seed);
    rng = seed * 2685821657736338717ull + 1;
    log_fixture_setup(&f);
    memset(&m, 0, sizeof m);
    f.cfg.segment_bytes = rand_in(1024, 16384);
    f.cfg.index_interval_bytes = rand_in(64, 2048);
    log_fixture_open(&f);
    for (int i = 0; i < MODEL_STEPS; i++) {
        step();
    }
    log_fixture_teardown(&f);
}
