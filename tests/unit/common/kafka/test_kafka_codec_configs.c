/* Tests for common/kafka/kafka_codec_configs.c: exact bytes of
 * IncrementalAlterConfigs v0 and v1 (flexible) and AlterConfigs v0 (no
 * operation on the wire), built by hand from apache/kafka's schemas; a
 * null value decodes as null; a negative config count is malformed.
 * Round trips, truncations and the schema cross-check of every version
 * are in test_kafka_codec_all.c and test_kafka_schema.c. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"

static const struct kafka_AlterableConfig sample_ops[2] = {
    {{(const uint8_t *)"retention.ms", 12}, 0, {(const uint8_t *)"1000", 4}},
    {{(const uint8_t *)"segment.ms", 10}, 1, {NULL, 0}}};
static const struct kafka_AlterConfigsResource sample_res = {
    2, {(const uint8_t *)"orders", 6}, sample_ops, 2};

/* The expected v0 (or, classic, AlterConfigs v0) body of sample_res. */
static void classic_bytes(struct bb *x, bool incremental)
{
    bb_i32(x, 1);
    bb_i8(x, 2);
    bb_str(x, "orders");
    bb_i32(x, 2);
    bb_str(x, "retention.ms");
    if (incremental) {
        bb_i8(x, 0);
    }
    bb_str(x, "1000");
    bb_str(x, "segment.ms");
    if (incremental) {
        bb_i8(x, 1);
    }
    bb_str(x, NULL);
    bb_i8(x, 1); /* ValidateOnly */
}

static void check_bytes(const struct writer *w, const struct bb *x)
{
    cr_assert_eq(w->len, x->n, "%zu bytes, want %zu", w->len, x->n);
    cr_assert(memcmp(w->data, x->b, x->n) == 0);
}

Test(kafka_codec_configs, incremental_v0_bytes_and_back)
{
    const struct kafka_IncrementalAlterConfigsRequest rq = {&sample_res, 1,
                                                            true};
    struct writer w;
    writer_init(&w, 1u << 20);
    cr_assert_eq(kafka_incremental_alter_configs_request_encode(&w, 0, &rq),
                 RC_OK);
    struct bb x = {.n = 0};
    classic_bytes(&x, true);
    check_bytes(&w, &x);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, x.b, x.n);
    struct kafka_IncrementalAlterConfigsRequest got;
    cr_assert_eq(kafka_incremental_alter_configs_request_decode(&r, 0, &a,
                                                                &got),
                 RC_OK);
    cr_assert_eq(got.ResourcesCnt, 1);
    cr_assert(got.ValidateOnly);
    cr_assert_eq(got.Resources[0].ConfigsCnt, 2);
    cr_assert_eq(got.Resources[0].Configs[1].ConfigOperation, 1);
    cr_assert(slice_is_null(got.Resources[0].Configs[1].Value));
    cr_assert(slice_eq_str(got.Resources[0].Configs[0].Value, "1000"));
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_configs, alter_configs_v0_has_no_operation_and_sets)
{
    const struct kafka_AlterConfigsRequest rq = {&sample_res, 1, true};
    struct writer w;
    writer_init(&w, 1u << 20);
    cr_assert_eq(kafka_alter_configs_request_encode(&w, 0, &rq), RC_OK);
    struct bb x = {.n = 0};
    classic_bytes(&x, false);
    check_bytes(&w, &x);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, x.b, x.n);
    struct kafka_AlterConfigsRequest got;
    cr_assert_eq(kafka_alter_configs_request_decode(&r, 0, &a, &got), RC_OK);
    cr_assert_eq(got.Resources[0].Configs[0].ConfigOperation,
                 KAFKA_CONFIG_OP_SET);
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_configs, incremental_v1_is_compact_with_tags)
{
    const struct kafka_IncrementalAlterConfigsRequest rq = {&sample_res, 1,
                                                            false};
    struct writer w;
    writer_init(&w, 1u << 20);
    cr_assert_eq(kafka_incremental_alter_configs_request_encode(&w, 1, &rq),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_u8(&x, 2); /* 1 resource, +1 */
    bb_i8(&x, 2);
    bb_u8(&x, 7);
    bb_raw(&x, (const uint8_t *)"orders", 6);
    bb_u8(&x, 3); /* 2 configs */
    bb_u8(&x, 13);
    bb_raw(&x, (const uint8_t *)"retention.ms", 12);
    bb_i8(&x, 0);
    bb_u8(&x, 5);
    bb_raw(&x, (const uint8_t *)"1000", 4);
    bb_u8(&x, 0); /* tags */
    bb_u8(&x, 11);
    bb_raw(&x, (const uint8_t *)"segment.ms", 10);
    bb_i8(&x, 1);
    bb_u8(&x, 0); /* null */
    bb_u8(&x, 0);
    bb_u8(&x, 0); /* resource tags */
    bb_i8(&x, 0); /* ValidateOnly */
    bb_u8(&x, 0);
    check_bytes(&w, &x);
    writer_free(&w);
}

Test(kafka_codec_configs, a_negative_config_count_is_malformed)
{
    struct bb x = {.n = 0};
    bb_i32(&x, 1);
    bb_i8(&x, 2);
    bb_str(&x, "orders");
    bb_i32(&x, -1);
    bb_i8(&x, 0);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, x.b, x.n);
    struct kafka_IncrementalAlterConfigsRequest got;
    cr_assert_eq(kafka_incremental_alter_configs_request_decode(&r, 0, &a,
                                                                &got),
                 RC_MALFORMED);
    arena_free(&a);
}

Test(kafka_codec_configs, response_bytes_v0)
{
    const struct kafka_AlterConfigsResourceResponse rs[1] = {
        {40, {(const uint8_t *)"bad", 3}, 2, {(const uint8_t *)"t", 1}}};
    const struct kafka_AlterConfigsResponse resp = {5, rs, 1};
    struct writer w;
    writer_init(&w, 1u << 20);
    cr_assert_eq(kafka_incremental_alter_configs_response_encode(&w, 0,
                                                                 &resp),
                 RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 5);
    bb_i32(&x, 1);
    bb_i16(&x, 40);
    bb_str(&x, "bad");
    bb_i8(&x, 2);
    bb_str(&x, "t");
    check_bytes(&w, &x);
    writer_free(&w);
}
