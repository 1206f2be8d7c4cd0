/* Tests for common/kafka/kafka_codec_partitions.c: CreatePartitions bytes
 * at v0 (classic) and v2 (the first flexible version), built by hand from
 * apache/kafka's CreatePartitions{Request,Response}.json; a null
 * Assignments array; truncation and negative counts. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/common/kafka/codec_compact_bb.h"
#include "tests/unit/common/kafka/codec_expect.h"

#define MAX_16M (16u * 1024 * 1024)
#define S(str) slice_from_str(str)

static const int32_t ids[] = {2, 3};

/* "t" grows to 3 with one assignment [2, 3]; "u" to 4, placed. */
static void sample(struct kafka_CreatePartitionsRequest *req,
                   struct kafka_CreatePartitionsTopic ts[2],
                   struct kafka_CreatePartitionsAssignment *as)
{
    as[0] = (struct kafka_CreatePartitionsAssignment){ids, 2};
    ts[0] = (struct kafka_CreatePartitionsTopic){S("t"), 3, as, 1};
    ts[1] = (struct kafka_CreatePartitionsTopic){S("u"), 4, NULL, -1};
    *req = (struct kafka_CreatePartitionsRequest){ts, 2, 5000, true};
}

static int decode(const struct bb *x, int16_t v, struct arena *a,
                  uint8_t **frame, struct kafka_CreatePartitionsRequest *out)
{
    *frame = exact_copy(x->b, x->n);
    struct reader r;
    reader_init(&r, *frame, x->n);
    int rc = kafka_create_partitions_request_decode(&r, v, a, out);
    if (rc == RC_OK) {
        cr_assert_eq(r.pos, x->n);
    }
    return rc;
}

static void check_decoded(const struct kafka_CreatePartitionsRequest *d)
{
    cr_assert_eq(d->TopicsCnt, 2);
    cr_assert(slice_eq_str(d->Topics[0].Name, "t"));
    cr_assert_eq(d->Topics[0].Count, 3);
    cr_assert_eq(d->Topics[0].AssignmentsCnt, 1);
    cr_assert_eq(d->Topics[0].Assignments[0].BrokerIdsCnt, 2);
    cr_assert_eq(d->Topics[0].Assignments[0].BrokerIds[1], 3);
    cr_assert(slice_eq_str(d->Topics[1].Name, "u"));
    cr_assert_eq(d->Topics[1].AssignmentsCnt, -1, "null stays null");
    cr_assert_eq(d->TimeoutMs, 5000);
    cr_assert(d->ValidateOnly);
}

/* The sample request at v encodes to exactly x, and x decodes back to
 * it. */
static void request_is(int16_t v, struct bb *x)
{
    struct kafka_CreatePartitionsRequest req;
    struct kafka_CreatePartitionsTopic ts[2];
    struct kafka_CreatePartitionsAssignment as[1];
    sample(&req, ts, as);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_create_partitions_request_encode(&w, v, &req), RC_OK);
    expect_bytes(&w, x);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    uint8_t *frame;
    struct kafka_CreatePartitionsRequest d;
    cr_assert_eq(decode(x, v, &a, &frame, &d), RC_OK);
    check_decoded(&d);
    free(frame);
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_partitions, v0_and_v1_request_bytes)
{
    for (int16_t v = 0; v <= 1; v++) {
        struct bb x = {.n = 0};
        bb_i32(&x, 2);
        bb_str(&x, "t"), bb_i32(&x, 3), bb_i32(&x, 1);
        bb_i32(&x, 2), bb_i32(&x, 2), bb_i32(&x, 3);
        bb_str(&x, "u"), bb_i32(&x, 4), bb_i32(&x, -1);
        bb_i32(&x, 5000), bb_u8(&x, 1);
        request_is(v, &x);
    }
}

Test(kafka_codec_partitions, v2_and_v3_request_bytes_are_compact)
{
    for (int16_t v = 2; v <= 3; v++) {
        struct bb x = {.n = 0};
        cbb_count(&x, 2);
        cbb_str(&x, "t"), bb_i32(&x, 3), cbb_count(&x, 1);
        cbb_count(&x, 2), bb_i32(&x, 2), bb_i32(&x, 3), cbb_tags(&x);
        cbb_tags(&x);
        cbb_str(&x, "u"), bb_i32(&x, 4), cbb_count(&x, -1), cbb_tags(&x);
        bb_i32(&x, 5000), bb_u8(&x, 1), cbb_tags(&x);
        request_is(v, &x);
    }
}

Test(kafka_codec_partitions, v0_and_v2_response_bytes)
{
    struct kafka_CreatePartitionsTopicResult rs[] = {
        {S("t"), 0, slice_null()},
        {S("u"), 37, S("Topic already has 4 partition(s).")}};
    struct kafka_CreatePartitionsResponse resp = {9, rs, 2};
    const char *msg = "Topic already has 4 partition(s).";
    for (int16_t v = 0; v <= 3; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_create_partitions_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb x = {.n = 0};
        if (v < 2) {
            bb_i32(&x, 9), bb_i32(&x, 2);
            bb_str(&x, "t"), bb_i16(&x, 0), bb_i16(&x, -1);
            bb_str(&x, "u"), bb_i16(&x, 37), bb_str(&x, msg);
        } else {
            bb_i32(&x, 9), cbb_count(&x, 2);
            cbb_str(&x, "t"), bb_i16(&x, 0), cbb_str(&x, NULL), cbb_tags(&x);
            cbb_str(&x, "u"), bb_i16(&x, 37), cbb_str(&x, msg), cbb_tags(&x);
            cbb_tags(&x);
        }
        expect_bytes(&w, &x);
        uint8_t *frame = exact_copy(x.b, x.n);
        struct reader r;
        reader_init(&r, frame, x.n);
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        struct kafka_CreatePartitionsResponse d;
        cr_assert_eq(kafka_create_partitions_response_decode(&r, v, &a, &d),
                     RC_OK);
        cr_assert_eq(r.pos, x.n);
        cr_assert_eq(d.ResultsCnt, 2);
        cr_assert(slice_is_null(d.Results[0].ErrorMessage));
        cr_assert(slice_eq_str(d.Results[1].ErrorMessage, msg));
        free(frame);
        arena_free(&a);
        writer_free(&w);
    }
}

Test(kafka_codec_partitions, negative_counts_are_malformed_and_cuts_short)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    uint8_t *frame;
    struct kafka_CreatePartitionsRequest d;
    struct bb x = {.n = 0};
    bb_i32(&x, -1), bb_i32(&x, 5000), bb_u8(&x, 0); /* null Topics */
    cr_assert_eq(decode(&x, 0, &a, &frame, &d), RC_MALFORMED);
    free(frame);
    struct bb y = {.n = 0};
    bb_i32(&y, 1), bb_str(&y, "t"), bb_i32(&y, 3), bb_i32(&y, -2);
    bb_i32(&y, 5000), bb_u8(&y, 0);
    cr_assert_eq(decode(&y, 0, &a, &frame, &d), RC_MALFORMED);
    free(frame);
    struct bb z = {.n = 0};
    bb_i32(&z, 1), bb_str(&z, "t"), bb_i32(&z, 3), bb_i32(&z, 1);
    bb_i32(&z, -1), bb_i32(&z, 5000), bb_u8(&z, 0);
    cr_assert_eq(decode(&z, 0, &a, &frame, &d), RC_MALFORMED,
                 "BrokerIds is not nullable");
    free(frame);
    z.n -= 3;
    cr_assert_eq(decode(&z, 0, &a, &frame, &d), RC_MALFORMED);
    free(frame);
    struct bb c = {.n = 0};
    bb_i32(&c, 1), bb_str(&c, "t"), bb_i32(&c, 3);
    cr_assert_eq(decode(&c, 0, &a, &frame, &d), RC_SHORT);
    free(frame);
    arena_free(&a);
}
