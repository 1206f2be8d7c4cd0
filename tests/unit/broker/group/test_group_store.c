/* __consumer_offsets records (broker/group/group_store.h): Kafka's partition
 * for a group, and commits and tombstones written then replayed. */
#include <criterion/criterion.h>
#include <string.h>

#include "broker/group/group_store.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"

/* Expected values from Java: Utils.abs("...".hashCode()) % 50. */
Test(group_store, partition_matches_kafkas_hash_of_the_group_id)
{
    static const struct {
        const char *group;
        int32_t partition;
    } cases[] = {
        {"test-group", 12},
        {"g1", 42},
        {"my-group", 12},     /* a negative hashCode */
        {"consumer-\xc3\xa4-\xe2\x82\xac", 36}, /* 2- and 3-byte UTF-8 */
        {"\xf0\x9d\x84\x9ex", 34}, /* a surrogate pair in Java */
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *g = cases[i].group;
        cr_assert_eq(group_store_partition_for((const uint8_t *)g, strlen(g),
                                               50),
                     cases[i].partition, "%s", g);
    }
}

struct seen {
    struct group_store_record recs[8];
    char strings[8][3][32];
    size_t n;
};

static void copy(char *out, struct slice s)
{
    size_t n = s.len < 31 ? s.len : 31;
    memcpy(out, s.ptr != NULL ? (const char *)s.ptr : "", n);
    out[n] = '\0';
}

static void record_cb(void *arg, const struct group_store_record *r)
{
    struct seen *s = arg;
    cr_assert_lt(s->n, 8);
    s->recs[s->n] = *r;
    copy(s->strings[s->n][0], r->group);
    copy(s->strings[s->n][1], r->offset.topic);
    copy(s->strings[s->n][2], r->offset.metadata);
    s->n++;
}

/* group_store_load_step() until the log is read below end. */
static int load_all(struct log *l, int64_t end, size_t slice,
                    struct seen *s, size_t *steps)
{
    int64_t offset = 0;
    while (offset < end) {
        int rv = group_store_load_step(l, &offset, end, slice, record_cb, s,
                                       NULL);
        if (rv != RC_OK) {
            return rv;
        }
        if (steps != NULL) {
            (*steps)++;
        }
    }
    return RC_OK;
}

Test(group_store, commits_and_tombstones_replay_as_written)
{
    struct group_store_offset offs[3] = {
        {.topic = slice_from_str("orders"), .partition = 0, .offset = 42,
         .leader_epoch = 3, .metadata = slice_from_str("m")},
        {.topic = slice_from_str("orders"), .partition = 1, .offset = 7,
         .leader_epoch = -1, .metadata = slice_null()},
        {.topic = slice_from_str("old"), .partition = 2, .tombstone = true},
    };
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(group_store_encode(&w, slice_from_str("g1"), offs, 3, 1000),
                 RC_OK);
    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(w.data, w.len, true, &h), RC_OK,
                 "a valid v2 batch with its CRC");
    cr_assert_eq(h.record_count, 3);
    struct seen s = {0};
    cr_assert_eq(group_store_replay(w.data, w.len, record_cb, &s), RC_OK);
    cr_assert_eq(s.n, 3);
    cr_assert(s.recs[0].is_offset && !s.recs[0].tombstone);
    cr_assert_str_eq(s.strings[0][0], "g1");
    cr_assert_str_eq(s.strings[0][1], "orders");
    cr_assert_eq(s.recs[0].offset.offset, 42);
    cr_assert_eq(s.recs[0].offset.leader_epoch, 3);
    cr_assert_str_eq(s.strings[0][2], "m");
    cr_assert_eq(s.recs[0].commit_ms, 1000);
    cr_assert_eq(s.recs[1].offset.partition, 1);
    cr_assert_eq(s.recs[1].offset.offset, 7);
    cr_assert_str_eq(s.strings[1][2], "");
    cr_assert(s.recs[2].tombstone && s.recs[2].offset.tombstone);
    cr_assert_str_eq(s.strings[2][1], "old");
    cr_assert_eq(s.recs[2].offset.partition, 2);
    writer_free(&w);
}

Test(group_store, a_torn_batch_at_the_end_is_ignored_and_garbage_refused)
{
    struct group_store_offset o = {.topic = slice_from_str("t"),
                                   .offset = 1, .leader_epoch = -1};
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(group_store_encode(&w, slice_from_str("g"), &o, 1, 5),
                 RC_OK);
    cr_assert_eq(group_store_encode(&w, slice_from_str("g"), &o, 1, 6),
                 RC_OK);
    struct seen s = {0};
    cr_assert_eq(group_store_replay(w.data, w.len - 3, record_cb, &s), RC_OK);
    cr_assert_eq(s.n, 1, "only the whole batch");
    uint8_t junk[80];
    memset(junk, 0xff, sizeof junk);
    s.n = 0;
    cr_assert_neq(group_store_replay(junk, sizeof junk, record_cb, &s), RC_OK);
    cr_assert_eq(s.n, 0);
    writer_free(&w);
}

#include "tests/lib/log_fixture.h"

/* What a new coordinator does: commits appended to a partition log
 * (several batches, over more than one read) come back from its files. */
Test(group_store, a_log_of_commits_loads_back)
{
    struct log_fixture f;
    log_fixture_setup(&f);
    log_fixture_open(&f);
    struct writer w;
    writer_init(&w, 1 << 20);
    for (int i = 0; i < 5; i++) {
        struct group_store_offset o = {.topic = slice_from_str("t"),
                                       .partition = i, .offset = 100 + i,
                                       .leader_epoch = -1,
                                       .metadata = slice_null()};
        writer_reset(&w);
        cr_assert_eq(group_store_encode(&w, slice_from_str("g"), &o, 1, 7),
                     RC_OK);
        struct log_append_info info;
        cr_assert_eq(log_append(f.log, w.data, w.len, 0, 7, &info), RC_OK);
    }
    writer_free(&w);
    struct seen s = {0};
    cr_assert_eq(load_all(f.log, log_end_offset(f.log), 1 << 20, &s, NULL),
                 RC_OK);
    cr_assert_eq(s.n, 5, "every committed offset loads back");
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(s.recs[i].offset.partition, i);
        cr_assert_eq(s.recs[i].offset.offset, 100 + i);
    }
    s.n = 0;
    cr_assert_eq(load_all(f.log, 3, 1 << 20, &s, NULL), RC_OK);
    cr_assert_eq(s.n, 3, "only below the end given");
    s.n = 0;
    size_t steps = 0;
    cr_assert_eq(load_all(f.log, log_end_offset(f.log), 1, &s, &steps),
                 RC_OK);
    cr_assert_eq(s.n, 5, "a tiny slice still reads one whole batch a step");
    cr_assert_eq(steps, 5, "one batch per step when the slice is tiny");
    log_fixture_close(&f);
    log_fixture_teardown(&f);
}
