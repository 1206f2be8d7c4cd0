/* Tests for common/kafka/kafka_codec_cluster.c: DescribeCluster bytes at
 * v0 (already flexible) and v1 (EndpointType), DescribeLogDirs bytes at
 * v0, v2 (the first flexible version), v3 (top-level ErrorCode) and v4
 * (TotalBytes, UsableBytes), built by hand from apache/kafka's schemas;
 * a null Topics array; defaults of fields a version lacks. */
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

/* A decoding fixture over an exact heap copy of x. */
struct fx {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fx_start(struct fx *f, const struct bb *x)
{
    f->frame = exact_copy(x->b, x->n);
    reader_init(&f->r, f->frame, x->n);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fx_done(struct fx *f)
{
    free(f->frame);
    arena_free(&f->a);
}

Test(kafka_codec_cluster, describe_cluster_v0_v1_request_bytes)
{
    struct kafka_DescribeClusterRequest req = {true, 2};
    for (int16_t v = 0; v <= 1; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_describe_cluster_request_encode(&w, v, &req),
                     RC_OK);
        struct bb x = {.n = 0};
        bb_u8(&x, 1);
        if (v >= 1) {
            bb_i8(&x, 2);
        }
        cbb_tags(&x);
        expect_bytes(&w, &x);
        struct fx f;
        fx_start(&f, &x);
        struct kafka_DescribeClusterRequest d;
        cr_assert_eq(kafka_describe_cluster_request_decode(&f.r, v, &f.a, &d),
                     RC_OK);
        cr_assert_eq(f.r.pos, x.n);
        cr_assert(d.IncludeClusterAuthorizedOperations);
        cr_assert_eq(d.EndpointType, v == 0 ? 1 : 2, "v0's default is 1");
        fx_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_cluster, describe_cluster_v0_v1_response_bytes)
{
    struct kafka_DescribeClusterBroker bs[] = {{1, S("h"), 9092,
                                                slice_null()},
                                               {2, S("i"), 9093, S("r")}};
    struct kafka_DescribeClusterResponse resp = {
        5, 0, slice_null(), 1, S("cairn"), 1, bs, 2, INT32_MIN};
    for (int16_t v = 0; v <= 1; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_describe_cluster_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb x = {.n = 0};
        bb_i32(&x, 5), bb_i16(&x, 0), cbb_str(&x, NULL);
        if (v >= 1) {
            bb_i8(&x, 1);
        }
        cbb_str(&x, "cairn"), bb_i32(&x, 1), cbb_count(&x, 2);
        bb_i32(&x, 1), cbb_str(&x, "h"), bb_i32(&x, 9092), cbb_str(&x, NULL);
        cbb_tags(&x);
        bb_i32(&x, 2), cbb_str(&x, "i"), bb_i32(&x, 9093), cbb_str(&x, "r");
        cbb_tags(&x);
        bb_i32(&x, INT32_MIN), cbb_tags(&x);
        expect_bytes(&w, &x);
        struct fx f;
        fx_start(&f, &x);
        struct kafka_DescribeClusterResponse d;
        cr_assert_eq(
            kafka_describe_cluster_response_decode(&f.r, v, &f.a, &d), RC_OK);
        cr_assert_eq(f.r.pos, x.n);
        cr_assert_eq(d.BrokersCnt, 2);
        cr_assert(slice_eq_str(d.Brokers[1].Rack, "r"));
        fx_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_cluster, describe_log_dirs_request_bytes_and_null)
{
    static const int32_t ps[] = {0, 3};
    struct kafka_DescribableLogDirTopic ts[] = {{S("t"), ps, 2}};
    struct kafka_DescribeLogDirsRequest req = {ts, 1};
    struct kafka_DescribeLogDirsRequest all = {NULL, -1};
    for (int16_t v = 0; v <= 4; v++) {
        bool flex = v >= 2;
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_describe_log_dirs_request_encode(&w, v, &req),
                     RC_OK);
        struct bb x = {.n = 0};
        if (flex) {
            cbb_count(&x, 1), cbb_str(&x, "t"), cbb_count(&x, 2);
            bb_i32(&x, 0), bb_i32(&x, 3), cbb_tags(&x), cbb_tags(&x);
        } else {
            bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, 2);
            bb_i32(&x, 0), bb_i32(&x, 3);
        }
        expect_bytes(&w, &x);
        writer_reset(&w);
        cr_assert_eq(kafka_describe_log_dirs_request_encode(&w, v, &all),
                     RC_OK);
        struct bb y = {.n = 0};
        if (flex) {
            cbb_count(&y, -1), cbb_tags(&y);
        } else {
            bb_i32(&y, -1);
        }
        expect_bytes(&w, &y);
        struct fx f;
        fx_start(&f, &y);
        struct kafka_DescribeLogDirsRequest d;
        cr_assert_eq(
            kafka_describe_log_dirs_request_decode(&f.r, v, &f.a, &d), RC_OK);
        cr_assert_eq(d.TopicsCnt, -1, "v%d: null means every partition", v);
        fx_done(&f);
        writer_free(&w);
    }
}

/* The bytes of one directory with one topic of one partition. */
static void log_dirs_resp_bytes(struct bb *x, int16_t v)
{
    bool flex = v >= 2;
    bb_i32(x, 6);
    if (v >= 3) {
        bb_i16(x, 0);
    }
    if (flex) {
        cbb_count(x, 1), bb_i16(x, 0), cbb_str(x, "/d"), cbb_count(x, 1);
        cbb_str(x, "t"), cbb_count(x, 1);
    } else {
        bb_i32(x, 1), bb_i16(x, 0), bb_str(x, "/d"), bb_i32(x, 1);
        bb_str(x, "t"), bb_i32(x, 1);
    }
    bb_i32(x, 3), bb_i64(x, 1234), bb_i64(x, 5), bb_u8(x, 0);
    if (flex) {
        cbb_tags(x), cbb_tags(x); /* partition, topic */
    }
    if (v >= 4) {
        bb_i64(x, 1LL << 40), bb_i64(x, 1LL << 38);
    }
    if (flex) {
        cbb_tags(x), cbb_tags(x); /* directory, response */
    }
}

Test(kafka_codec_cluster, describe_log_dirs_response_bytes_v0_to_v4)
{
    struct kafka_DescribeLogDirsPartition ps[] = {{3, 1234, 5, false}};
    struct kafka_DescribeLogDirsTopic ts[] = {{S("t"), ps, 1}};
    struct kafka_DescribeLogDirsResult ds[] = {
        {0, S("/d"), ts, 1, 1LL << 40, 1LL << 38}};
    struct kafka_DescribeLogDirsResponse resp = {6, 0, ds, 1};
    for (int16_t v = 0; v <= 4; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_describe_log_dirs_response_encode(&w, v, &resp),
                     RC_OK);
        struct bb x = {.n = 0};
        log_dirs_resp_bytes(&x, v);
        expect_bytes(&w, &x);
        struct fx f;
        fx_start(&f, &x);
        struct kafka_DescribeLogDirsResponse d;
        cr_assert_eq(
            kafka_describe_log_dirs_response_decode(&f.r, v, &f.a, &d),
            RC_OK);
        cr_assert_eq(f.r.pos, x.n);
        cr_assert_eq(d.Results[0].Topics[0].Partitions[0].PartitionSize,
                     1234);
        cr_assert_eq(d.Results[0].TotalBytes, v >= 4 ? 1LL << 40 : -1,
                     "v%d", v);
        fx_done(&f);
        writer_free(&w);
    }
}

Test(kafka_codec_cluster, truncated_and_negative_counts)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_str(&x, "t"), bb_i32(&x, -1); /* [int32] not null */
    struct fx f;
    fx_start(&f, &x);
    struct kafka_DescribeLogDirsRequest d;
    cr_assert_eq(kafka_describe_log_dirs_request_decode(&f.r, 1, &f.a, &d),
                 RC_MALFORMED);
    fx_done(&f);
    struct bb y = {.n = 0};
    bb_i32(&y, 2), bb_str(&y, "t"), bb_i32(&y, 0);
    fx_start(&f, &y);
    cr_assert_eq(kafka_describe_log_dirs_request_decode(&f.r, 1, &f.a, &d),
                 RC_SHORT);
    fx_done(&f);
    struct bb z = {.n = 0};
    bb_u8(&z, 0); /* v1: no EndpointType */
    fx_start(&f, &z);
    struct kafka_DescribeClusterRequest c;
    cr_assert_eq(kafka_describe_cluster_request_decode(&f.r, 1, &f.a, &c),
                 RC_SHORT);
    fx_done(&f);
}
