/* The table-driven machinery shared by the tests of the group codecs
 * (test_kafka_codec_group.c: common/kafka/kafka_codec_group.c) and the offset
 * codecs (test_kafka_codec_offsets.c: common/kafka/kafka_codec_offsets.c).
 *
 * Each file lists its APIs in a table of struct api_case: version range
 * (from the KAFKA_*_VERSION_MIN/MAX macros), its last non-flexible
 * version (the table's tests run up to it: the flexible versions, KIP-482
 * compact forms, have byte-exact tests of their own and the sample table
 * of test_kafka_codec_all.c) and, for request and response,
 * a sample message, its expected bytes at each version built by hand, and
 * a check of a decoded message against the sample with the defaults of
 * the fields the version lacks. CODEC_TABLE_TESTS(suite, cases) then
 * defines, over that table, at every version: round_trips_at_every_version
 * (encode = hand-built bytes, decode gives the fields and defaults,
 * re-encode gives the same bytes); many_minimal_entries_round_trip_at_
 * every_version and one_entry_more_than_the_bytes_hold_allocates_nothing
 * (minimal samples of MANY entries must decode, and must fail at the count,
 * allocating nothing, with one entry more, which pins each array's
 * per-entry minimum exactly); truncation_at_every_length_is_short;
 * trailing_byte_is_left_unread; versions_outside_the_range_are_invalid;
 * range_table_agrees_with_the_macros. check_huges() runs a table of huge
 * counts that must fail without allocating. Frames are decoded from exact
 * heap copies so that `make asan` catches reads past the end. */
#ifndef CAIRN_TESTS_UNIT_BROKER_CODEC_GROUP_CASES_H
#define CAIRN_TESTS_UNIT_BROKER_CODEC_GROUP_CASES_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)
#define S(str) slice_from_str(str)
#define B(arr) ((struct slice){(arr), sizeof(arr)})
/* The minimal samples: variant 1 has MANY minimal entries in the outer
 * array (inner arrays empty), variant 2 one outer entry with MANY minimal
 * inner entries; flat arrays have MANY entries in both. So each array's
 * entries are all the message holds after its count, bar a few bytes
 * fewer than one entry, and its per-entry minimum is checked exactly. */
#define MANY 40
#define OUTER(variant) ((variant) == 1 ? MANY : 1)
#define INNER(variant) ((variant) == 1 ? 0 : MANY)

/* A decoder's input and arena; the frame is an exact heap copy. */
struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static inline void fixture_start(struct fixture *f, const void *p, size_t n)
{
    f->frame = exact_copy(p, n);
    reader_init(&f->r, f->frame, n);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static inline void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

static inline void bb_bytes(struct bb *x, const uint8_t *p, size_t n)
{
    bb_i32(x, (int32_t)n);
    bb_raw(x, p, n);
}

static inline void expect_slice(struct slice got, struct slice want,
                                const char *what, int16_t v)
{
    cr_expect(slice_eq(got, want),
              "v%d %s: got %s len %zu, want %s len %zu", v, what,
              got.ptr == NULL ? "null" : "non-null", got.len,
              want.ptr == NULL ? "null" : "non-null", want.len);
}

/* A slice field present from version `from`, null before. */
static inline struct slice since(int16_t v, int16_t from, struct slice s)
{
    return v >= from ? s : slice_null();
}

/* Whichever message a decoder fills. */
union msg {
    struct kafka_FindCoordinatorRequest find_coordinator_request;
    struct kafka_FindCoordinatorResponse find_coordinator_response;
    struct kafka_JoinGroupRequest join_group_request;
    struct kafka_JoinGroupResponse join_group_response;
    struct kafka_HeartbeatRequest heartbeat_request;
    struct kafka_HeartbeatResponse heartbeat_response;
    struct kafka_LeaveGroupRequest leave_group_request;
    struct kafka_LeaveGroupResponse leave_group_response;
    struct kafka_SyncGroupRequest sync_group_request;
    struct kafka_SyncGroupResponse sync_group_response;
    struct kafka_OffsetCommitRequest offset_commit_request;
    struct kafka_OffsetCommitResponse offset_commit_response;
    struct kafka_OffsetFetchRequest offset_fetch_request;
    struct kafka_OffsetFetchResponse offset_fetch_response;
    struct kafka_DescribeGroupsRequest describe_groups_request;
    struct kafka_DescribeGroupsResponse describe_groups_response;
    struct kafka_ListGroupsRequest list_groups_request;
    struct kafka_ListGroupsResponse list_groups_response;
    struct kafka_DeleteGroupsRequest delete_groups_request;
    struct kafka_DeleteGroupsResponse delete_groups_response;
};

typedef int (*decode_fn)(struct reader *r, int16_t v, struct arena *a,
                         void *out);
typedef int (*encode_fn)(struct writer *w, int16_t v, const void *m);


/* Untyped wrappers, so that one table can drive every codec function. */
#define WRAP(fn, Type)                                                    \
    static int fn##_dec(struct reader *r, int16_t v, struct arena *a,     \
                        void *out)                                        \
    {                                                                     \
        return kafka_##fn##_decode(r, v, a, (struct Type *)out);          \
    }                                                                     \
    static int fn##_enc(struct writer *w, int16_t v, const void *m)       \
    {                                                                     \
        return kafka_##fn##_encode(w, v, (const struct Type *)m);         \
    }

/* The typed codec functions of the group and of the offset APIs, each
 * behind the signatures of struct side. */
#define WRAP_GROUP_APIS()                                             \
    WRAP(find_coordinator_request, kafka_FindCoordinatorRequest)      \
    WRAP(find_coordinator_response, kafka_FindCoordinatorResponse)    \
    WRAP(join_group_request, kafka_JoinGroupRequest)                  \
    WRAP(join_group_response, kafka_JoinGroupResponse)                \
    WRAP(heartbeat_request, kafka_HeartbeatRequest)                   \
    WRAP(heartbeat_response, kafka_HeartbeatResponse)                 \
    WRAP(leave_group_request, kafka_LeaveGroupRequest)                \
    WRAP(leave_group_response, kafka_LeaveGroupResponse)              \
    WRAP(sync_group_request, kafka_SyncGroupRequest)                  \
    WRAP(sync_group_response, kafka_SyncGroupResponse)                \
    WRAP(describe_groups_request, kafka_DescribeGroupsRequest)        \
    WRAP(describe_groups_response, kafka_DescribeGroupsResponse)      \
    WRAP(list_groups_request, kafka_ListGroupsRequest)                \
    WRAP(list_groups_response, kafka_ListGroupsResponse)              \
    WRAP(delete_groups_request, kafka_DeleteGroupsRequest)            \
    WRAP(delete_groups_response, kafka_DeleteGroupsResponse)
#define WRAP_OFFSET_APIS()                                            \
    WRAP(offset_commit_request, kafka_OffsetCommitRequest)            \
    WRAP(offset_commit_response, kafka_OffsetCommitResponse)          \
    WRAP(offset_fetch_request, kafka_OffsetFetchRequest)              \
    WRAP(offset_fetch_response, kafka_OffsetFetchResponse)

struct side {
    decode_fn decode;
    encode_fn encode;
    const void *(*sample)(int variant); /* 0 full, 1 and 2 minimal */
    void (*bb)(struct bb *x, int16_t v); /* variant 0's bytes */
    void (*check)(const void *want, const void *got, int16_t v);
};

struct api_case {
    const char *name;
    int16_t key;
    int16_t min;
    int16_t max;
    int16_t classic_max; /* the last version before the first flexible */
    struct side req;
    struct side resp;
};

#define SIDE(fn, p)                                                       \
    {fn##_dec, fn##_enc, p##_sample, p##_bb, p##_check}
#define CASE(name, KEY, fn, p, classic_max)                               \
    {#name, KAFKA_API_##KEY, KAFKA_##KEY##_VERSION_MIN,                   \
     KAFKA_##KEY##_VERSION_MAX, classic_max, SIDE(fn##_request, p##_req), \
     SIDE(fn##_response, p##_resp)}

static inline const struct side *side_of(const struct api_case *c,
                                         int response)
{
    return response ? &c->resp : &c->req;
}

static inline const char *side_name(int response)
{
    return response ? "response" : "request";
}

/* Decodes the first len bytes of p with s at v; *held_bytes (if not NULL)
 * gets what the arena held afterwards, *pos (if not NULL) where the
 * reader stopped (a failing read consumes nothing, so on failure: where
 * the failing value starts). */
static inline int decode_at(const struct side *s, int16_t v, const void *p,
                            size_t len, size_t *held_bytes, size_t *pos)
{
    struct fixture f;
    fixture_start(&f, p, len);
    union msg got;
    int rc = s->decode(&f.r, v, &f.a, &got);
    if (held_bytes != NULL) {
        *held_bytes = f.a.held_bytes;
    }
    if (pos != NULL) {
        *pos = f.r.pos;
    }
    fixture_done(&f);
    return rc;
}

static inline int decode_n(const struct side *s, int16_t v, const void *p,
                           size_t len, size_t *held_bytes)
{
    return decode_at(s, v, p, len, held_bytes, NULL);
}

/* Encode the sample (variant 0: the hand-built bytes), decode it into a
 * poisoned message (so a field the decoder forgets shows), check the
 * fields and defaults, re-encode to the same bytes. */
static inline void check_round_trip(const struct api_case *c, int response,
                                    int16_t v, int variant)
{
    const struct side *s = side_of(c, response);
    const void *want = s->sample(variant);
    struct writer w, w2;
    writer_init(&w, MAX_16M);
    writer_init(&w2, MAX_16M);
    int rc = s->encode(&w, v, want);
    cr_assert_eq(rc, RC_OK, "%s %s v%d: %s", c->name, side_name(response),
                 v, rc_str(rc));
    if (variant == 0) {
        struct bb x = {.n = 0};
        s->bb(&x, v);
        expect_bytes(&w, &x);
    }
    struct fixture f;
    fixture_start(&f, w.data, w.len);
    union msg got;
    memset(&got, 0xa5, sizeof got);
    rc = s->decode(&f.r, v, &f.a, &got);
    cr_assert_eq(rc, RC_OK, "%s %s v%d variant %d: %s", c->name,
                 side_name(response), v, variant, rc_str(rc));
    s->check(want, &got, v);
    cr_assert_eq(s->encode(&w2, v, &got), RC_OK);
    cr_assert_eq(w2.len, w.len, "%s %s v%d", c->name, side_name(response),
                 v);
    cr_expect(w.len == 0 || memcmp(w2.data, w.data, w.len) == 0,
              "%s %s v%d: re-encoding differs", c->name,
              side_name(response), v);
    fixture_done(&f);
    writer_free(&w);
    writer_free(&w2);
}

/* Where the minimal sample has an array of MANY entries (the first count
 * of MANY in its bytes: every other integer there is 0 or -1), a count of
 * MANY + 1 must fail at the count itself (the reader stops there), before
 * that array is allocated: this catches a per-entry minimum set too low.
 * Variant 1 (the outer array) must have allocated nothing at all. */
static inline void check_one_entry_too_many(const struct api_case *c,
                                            int response, int16_t v,
                                            int variant)
{
    const struct side *s = side_of(c, response);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(s->encode(&w, v, s->sample(variant)), RC_OK);
    size_t at = SIZE_MAX;
    for (size_t i = 0; i + 4 <= w.len && at == SIZE_MAX; i++) {
        if (w.data[i] == 0 && w.data[i + 1] == 0 && w.data[i + 2] == 0 &&
            w.data[i + 3] == MANY) {
            at = i;
        }
    }
    if (at != SIZE_MAX) {
        w.data[at + 3] = MANY + 1;
        size_t held = SIZE_MAX, pos = SIZE_MAX;
        int rc = decode_at(s, v, w.data, w.len, &held, &pos);
        cr_expect_eq(rc, RC_SHORT, "%s %s v%d variant %d: %s", c->name,
                     side_name(response), v, variant, rc_str(rc));
        cr_expect_eq(pos, at, "%s %s v%d variant %d: stopped at %zu, not "
                     "at the count (%zu)", c->name, side_name(response), v,
                     variant, pos, at);
        if (variant == 1) {
            cr_expect_eq(held, 0, "%s %s v%d: held %zu", c->name,
                         side_name(response), v, held);
        }
    }
    writer_free(&w);
}

static inline void run_round_trips_at_every_version(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        for (int16_t v = cases[i].min; v <= cases[i].classic_max; v++) {
            check_round_trip(&cases[i], 0, v, 0);
            check_round_trip(&cases[i], 1, v, 0);
        }
    }
}

static inline void run_many_minimal_entries_round_trip_at_every_version(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        for (int16_t v = cases[i].min; v <= cases[i].classic_max; v++) {
            for (int variant = 1; variant <= 2; variant++) {
                check_round_trip(&cases[i], 0, v, variant);
                check_round_trip(&cases[i], 1, v, variant);
            }
        }
    }
}

static inline void run_one_entry_more_than_the_bytes_hold_allocates_nothing(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        for (int16_t v = cases[i].min; v <= cases[i].classic_max; v++) {
            for (int variant = 1; variant <= 2; variant++) {
                check_one_entry_too_many(&cases[i], 0, v, variant);
                check_one_entry_too_many(&cases[i], 1, v, variant);
            }
        }
    }
}

static inline void run_truncation_at_every_length_is_short(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        const struct api_case *c = &cases[i];
        for (int16_t v = c->min; v <= c->classic_max; v++) {
            for (int response = 0; response <= 1; response++) {
                const struct side *s = side_of(c, response);
                struct bb x = {.n = 0};
                s->bb(&x, v);
                for (size_t n = 0; n < x.n; n++) {
                    int rc = decode_n(s, v, x.b, n, NULL);
                    cr_expect_eq(rc, RC_SHORT, "%s %s v%d cut at %zu: %s",
                                 c->name, side_name(response), v, n,
                                 rc_str(rc));
                }
                cr_expect_eq(decode_n(s, v, x.b, x.n, NULL), RC_OK);
            }
        }
    }
}

/* A byte after the last field is left unread, as Kafka leaves it. */
static inline void run_trailing_byte_is_left_unread(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        const struct api_case *c = &cases[i];
        for (int16_t v = c->min; v <= c->classic_max; v++) {
            for (int response = 0; response <= 1; response++) {
                const struct side *s = side_of(c, response);
                struct bb x = {.n = 0};
                s->bb(&x, v);
                bb_u8(&x, 0);
                size_t pos = 0;
                cr_expect_eq(decode_at(s, v, x.b, x.n, NULL, &pos), RC_OK,
                             "%s %s v%d", c->name, side_name(response), v);
                cr_expect_eq(pos, x.n - 1, "%s %s v%d", c->name,
                             side_name(response), v);
            }
        }
    }
}

static inline void run_versions_outside_the_range_are_invalid(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        const struct api_case *c = &cases[i];
        for (int response = 0; response <= 1; response++) {
            const struct side *s = side_of(c, response);
            struct bb x = {.n = 0};
            s->bb(&x, c->classic_max);
            int16_t below = (int16_t)(c->min - 1);
            int16_t above = (int16_t)(c->max + 1);
            cr_expect_eq(decode_n(s, below, x.b, x.n, NULL), RC_INVALID,
                         "%s %s v%d", c->name, side_name(response), below);
            cr_expect_eq(decode_n(s, above, x.b, x.n, NULL), RC_INVALID,
                         "%s %s v%d", c->name, side_name(response), above);
        }
    }
}

/* The codec's range table lists every group API with its macros. */
static inline void run_range_table_agrees_with_the_macros(
    const struct api_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        int16_t min = -1, max = -1;
        cr_assert(kafka_codec_version_range(cases[i].key, &min, &max), "%s",
                  cases[i].name);
        cr_expect_eq(min, cases[i].min, "%s", cases[i].name);
        cr_expect_eq(max, cases[i].max, "%s", cases[i].name);
    }
}

/* Defines the table-driven tests above in `suite` over `cases`. */
#define CODEC_TABLE_TESTS(suite, cases)                                   \
    Test(suite, round_trips_at_every_version)                             \
    {                                                                     \
        run_round_trips_at_every_version(cases, ARRAY_LEN(cases));        \
    }                                                                     \
    Test(suite, many_minimal_entries_round_trip_at_every_version)         \
    {                                                                     \
        run_many_minimal_entries_round_trip_at_every_version(             \
            cases, ARRAY_LEN(cases));                                     \
    }                                                                     \
    Test(suite, one_entry_more_than_the_bytes_hold_allocates_nothing)     \
    {                                                                     \
        run_one_entry_more_than_the_bytes_hold_allocates_nothing(         \
            cases, ARRAY_LEN(cases));                                     \
    }                                                                     \
    Test(suite, truncation_at_every_length_is_short)                      \
    {                                                                     \
        run_truncation_at_every_length_is_short(cases, ARRAY_LEN(cases)); \
    }                                                                     \
    Test(suite, trailing_byte_is_left_unread)                             \
    {                                                                     \
        run_trailing_byte_is_left_unread(cases, ARRAY_LEN(cases));        \
    }                                                                     \
    Test(suite, versions_outside_the_range_are_invalid)                   \
    {                                                                     \
        run_versions_outside_the_range_are_invalid(cases,                 \
                                                   ARRAY_LEN(cases));     \
    }                                                                     \
    Test(suite, range_table_agrees_with_the_macros)                       \
    {                                                                     \
        run_range_table_agrees_with_the_macros(cases, ARRAY_LEN(cases));  \
    }

/* --- Counts beyond the input --------------------------------------------- */

struct huge_case {
    const char *what;
    int api;      /* index in cases[]: FC, JG, ... */
    int response; /* 0 request, 1 response */
    int16_t v;
    bool nested;  /* the count is inside an outer array's first entry */
    void (*bb)(struct bb *x);
};

static inline void check_huges(const struct api_case *cases,
                               const struct huge_case *huges,
                               size_t n_huges)
{
    for (size_t i = 0; i < n_huges; i++) {
        const struct huge_case *h = &huges[i];
        const struct api_case *c = &cases[h->api];
        cr_assert(h->v >= c->min && h->v <= c->max, "%s", h->what);
        struct bb x = {.n = 0};
        h->bb(&x);
        size_t held = SIZE_MAX;
        int rc = decode_n(side_of(c, h->response), h->v, x.b, x.n, &held);
        cr_expect_eq(rc, RC_SHORT, "%s: %s", h->what, rc_str(rc));
        if (h->nested) {
            cr_expect_leq(held, 2 * ARENA__BLOCK_BYTES_MIN,
                          "%s: only the outer array, held %zu", h->what,
                          held);
        } else {
            cr_expect_eq(held, 0, "%s: nothing allocated, held %zu",
                         h->what, held);
        }
    }
}

#endif
