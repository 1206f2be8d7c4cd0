/* Tests for common/kafka/kafka_codec_offsets.c (OffsetCommit, OffsetFetch); the
 * group APIs are in test_kafka_codec_group.c.
 *
 * The table below drives the shared tests of codec_group_cases.h (round
 * trips, minimal samples of many entries, truncation, a trailing byte,
 * versions outside the range, huge counts). Then exact bytes for the
 * OffsetCommit v7 request and the OffsetFetch v5 response, written out
 * field by field, and the version shapes and limits particular to these
 * APIs. */
#include "tests/unit/common/kafka/codec_group_cases.h"

WRAP_OFFSET_APIS()

/* --- OffsetCommit -------------------------------------------------------- */

static const void *oc_req_sample(int variant)
{
    static struct kafka_OffsetCommitRequestPartition ps[MANY];
    static struct kafka_OffsetCommitRequestTopic ts[MANY];
    static struct kafka_OffsetCommitRequest m;
    if (variant == 0) {
        ps[0] = (struct kafka_OffsetCommitRequestPartition){
            0, 100, 3, 1700000000000, S("meta")};
        ps[1] = (struct kafka_OffsetCommitRequestPartition){
            1, 200, 3, -1, slice_null()};
        ps[2] = (struct kafka_OffsetCommitRequestPartition){
            2, 0x100000000, 5, -1, S("")};
        ts[0] = (struct kafka_OffsetCommitRequestTopic){S("orders"), ps, 2};
        ts[1] = (struct kafka_OffsetCommitRequestTopic){S("t"), ps + 2, 1};
        m = (struct kafka_OffsetCommitRequest){
            .GroupId = S("cg"), .GenerationIdOrMemberEpoch = 4,
            .MemberId = S("m-1"), .GroupInstanceId = S("inst-1"),
            .RetentionTimeMs = 86400000, .Topics = ts, .TopicsCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ps[i] = (struct kafka_OffsetCommitRequestPartition){
            0, 0, 0, -1, slice_null()};
        ts[i] = (struct kafka_OffsetCommitRequestTopic){S(""), ps,
                                                       INNER(variant)};
    }
    m = (struct kafka_OffsetCommitRequest){
        .GroupId = S(""), .GenerationIdOrMemberEpoch = -1,
        .MemberId = S(""), .GroupInstanceId = slice_null(),
        .RetentionTimeMs = -1, .Topics = ts, .TopicsCnt = OUTER(variant)};
    return &m;
}

static void oc_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg");
    if (v >= 1) {
        bb_i32(x, 4), bb_str(x, "m-1");     /* generation, member */
    }
    if (v >= 7) {
        bb_str(x, "inst-1");                /* group instance id */
    }
    if (v >= 2 && v <= 4) {
        bb_i64(x, 86400000);                /* retention time */
    }
    bb_i32(x, 2);
    bb_str(x, "orders"), bb_i32(x, 2);
    bb_i32(x, 0), bb_i64(x, 100);
    if (v >= 6) {
        bb_i32(x, 3);                       /* committed leader epoch */
    }
    if (v == 1) {
        bb_i64(x, 1700000000000);           /* commit timestamp */
    }
    bb_str(x, "meta");
    bb_i32(x, 1), bb_i64(x, 200);
    if (v == 1) {
        bb_i64(x, -1);
    }
    if (v >= 6) {
        bb_i32(x, 3);
    }
    bb_str(x, NULL);
    bb_str(x, "t"), bb_i32(x, 1);
    bb_i32(x, 2), bb_i64(x, 0x100000000);
    if (v >= 6) {
        bb_i32(x, 5);
    }
    if (v == 1) {
        bb_i64(x, -1);
    }
    bb_str(x, "");
}

static void oc_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_OffsetCommitRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_expect_eq(got->GenerationIdOrMemberEpoch,
                 v >= 1 ? want->GenerationIdOrMemberEpoch : -1, "v%d", v);
    expect_slice(got->MemberId, v >= 1 ? want->MemberId : S(""), "MemberId",
                 v);
    expect_slice(got->GroupInstanceId, since(v, 7, want->GroupInstanceId),
                 "GroupInstanceId", v);
    cr_expect_eq(got->RetentionTimeMs,
                 v >= 2 && v <= 4 ? want->RetentionTimeMs : -1, "v%d", v);
    cr_assert_eq(got->TopicsCnt, want->TopicsCnt);
    for (int32_t i = 0; i < got->TopicsCnt; i++) {
        const struct kafka_OffsetCommitRequestTopic *g = &got->Topics[i];
        const struct kafka_OffsetCommitRequestTopic *w = &want->Topics[i];
        expect_slice(g->Name, w->Name, "Name", v);
        cr_assert_eq(g->PartitionsCnt, w->PartitionsCnt);
        for (int32_t j = 0; j < g->PartitionsCnt; j++) {
            const struct kafka_OffsetCommitRequestPartition *p =
                &g->Partitions[j];
            const struct kafka_OffsetCommitRequestPartition *q =
                &w->Partitions[j];
            cr_expect_eq(p->PartitionIndex, q->PartitionIndex);
            cr_expect_eq(p->CommittedOffset, q->CommittedOffset);
            cr_expect_eq(p->CommittedLeaderEpoch,
                         v >= 6 ? q->CommittedLeaderEpoch : -1, "v%d", v);
            cr_expect_eq(p->CommitTimestamp,
                         v == 1 ? q->CommitTimestamp : -1, "v%d", v);
            expect_slice(p->CommittedMetadata, q->CommittedMetadata,
                         "CommittedMetadata", v);
        }
    }
}

static const void *oc_resp_sample(int variant)
{
    static struct kafka_OffsetCommitResponsePartition ps[MANY];
    static struct kafka_OffsetCommitResponseTopic ts[MANY];
    static struct kafka_OffsetCommitResponse m;
    if (variant == 0) {
        ps[0] = (struct kafka_OffsetCommitResponsePartition){0, 0};
        ps[1] = (struct kafka_OffsetCommitResponsePartition){1, 22};
        ps[2] = (struct kafka_OffsetCommitResponsePartition){2, 0};
        ts[0] = (struct kafka_OffsetCommitResponseTopic){S("orders"), ps, 2};
        ts[1] = (struct kafka_OffsetCommitResponseTopic){S("t"), ps + 2, 1};
        m = (struct kafka_OffsetCommitResponse){6, ts, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ps[i] = (struct kafka_OffsetCommitResponsePartition){0, 0};
        ts[i] = (struct kafka_OffsetCommitResponseTopic){S(""), ps,
                                                        INNER(variant)};
    }
    m = (struct kafka_OffsetCommitResponse){0, ts, OUTER(variant)};
    return &m;
}

static void oc_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 3) {
        bb_i32(x, 6);                       /* throttle */
    }
    bb_i32(x, 2);
    bb_str(x, "orders"), bb_i32(x, 2);
    bb_i32(x, 0), bb_i16(x, 0);
    bb_i32(x, 1), bb_i16(x, 22);            /* ILLEGAL_GENERATION */
    bb_str(x, "t"), bb_i32(x, 1);
    bb_i32(x, 2), bb_i16(x, 0);
}

static void oc_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_OffsetCommitResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 3 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_assert_eq(got->TopicsCnt, want->TopicsCnt);
    for (int32_t i = 0; i < got->TopicsCnt; i++) {
        const struct kafka_OffsetCommitResponseTopic *g = &got->Topics[i];
        const struct kafka_OffsetCommitResponseTopic *w = &want->Topics[i];
        expect_slice(g->Name, w->Name, "Name", v);
        cr_assert_eq(g->PartitionsCnt, w->PartitionsCnt);
        for (int32_t j = 0; j < g->PartitionsCnt; j++) {
            cr_expect_eq(g->Partitions[j].PartitionIndex,
                         w->Partitions[j].PartitionIndex);
            cr_expect_eq(g->Partitions[j].ErrorCode,
                         w->Partitions[j].ErrorCode);
        }
    }
}

/* --- OffsetFetch --------------------------------------------------------- */

static const void *of_req_sample(int variant)
{
    static int32_t ids[MANY];
    static struct kafka_OffsetFetchRequestTopic ts[MANY];
    static struct kafka_OffsetFetchRequest m;
    for (int i = 0; i < MANY; i++) {
        ids[i] = i;
    }
    if (variant == 0) {
        ts[0] = (struct kafka_OffsetFetchRequestTopic){S("orders"), ids, 2};
        ts[1] = (struct kafka_OffsetFetchRequestTopic){S("t"), ids + 2, 1};
        m = (struct kafka_OffsetFetchRequest){S("cg"), ts, 2, NULL, 0,
                                              false};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ts[i] = (struct kafka_OffsetFetchRequestTopic){S(""), ids,
                                                       INNER(variant)};
    }
    m = (struct kafka_OffsetFetchRequest){S(""), ts, OUTER(variant), NULL,
                                          0, false};
    return &m;
}

static void of_req_bb(struct bb *x, int16_t v)
{
    (void)v;                                /* the same in v1..5 */
    bb_str(x, "cg");
    bb_i32(x, 2);
    bb_str(x, "orders"), bb_i32(x, 2), bb_i32(x, 0), bb_i32(x, 1);
    bb_str(x, "t"), bb_i32(x, 1), bb_i32(x, 2);
}

static void of_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_OffsetFetchRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_assert_eq(got->TopicsCnt, want->TopicsCnt);
    for (int32_t i = 0; i < got->TopicsCnt; i++) {
        const struct kafka_OffsetFetchRequestTopic *g = &got->Topics[i];
        const struct kafka_OffsetFetchRequestTopic *w = &want->Topics[i];
        expect_slice(g->Name, w->Name, "Name", v);
        cr_assert_eq(g->PartitionIndexesCnt, w->PartitionIndexesCnt);
        for (int32_t j = 0; j < g->PartitionIndexesCnt; j++) {
            cr_expect_eq(g->PartitionIndexes[j], w->PartitionIndexes[j]);
        }
    }
}

static const void *of_resp_sample(int variant)
{
    static struct kafka_OffsetFetchResponsePartition ps[MANY];
    static struct kafka_OffsetFetchResponseTopic ts[MANY];
    static struct kafka_OffsetFetchResponse m;
    if (variant == 0) {
        ps[0] = (struct kafka_OffsetFetchResponsePartition){
            0, 100, 3, S("meta"), 0};
        ps[1] = (struct kafka_OffsetFetchResponsePartition){
            1, -1, -1, slice_null(), 0};
        ps[2] = (struct kafka_OffsetFetchResponsePartition){
            2, 5, 7, S(""), 3};
        ts[0] = (struct kafka_OffsetFetchResponseTopic){S("orders"), ps, 2};
        ts[1] = (struct kafka_OffsetFetchResponseTopic){S("t"), ps + 2, 1};
        m = (struct kafka_OffsetFetchResponse){4, ts, 2, 14, NULL, 0};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ps[i] = (struct kafka_OffsetFetchResponsePartition){
            0, 0, 0, slice_null(), 0};
        ts[i] = (struct kafka_OffsetFetchResponseTopic){S(""), ps,
                                                       INNER(variant)};
    }
    m = (struct kafka_OffsetFetchResponse){0, ts, OUTER(variant), 0, NULL,
                                           0};
    return &m;
}

static void of_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 3) {
        bb_i32(x, 4);                       /* throttle */
    }
    bb_i32(x, 2);
    bb_str(x, "orders"), bb_i32(x, 2);
    bb_i32(x, 0), bb_i64(x, 100);
    if (v >= 5) {
        bb_i32(x, 3);                       /* committed leader epoch */
    }
    bb_str(x, "meta"), bb_i16(x, 0);
    bb_i32(x, 1), bb_i64(x, -1);
    if (v >= 5) {
        bb_i32(x, -1);
    }
    bb_str(x, NULL), bb_i16(x, 0);
    bb_str(x, "t"), bb_i32(x, 1);
    bb_i32(x, 2), bb_i64(x, 5);
    if (v >= 5) {
        bb_i32(x, 7);
    }
    bb_str(x, ""), bb_i16(x, 3);
    if (v >= 2) {
        bb_i16(x, 14);                      /* group-level error code */
    }
}

static void of_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_OffsetFetchResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 3 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_assert_eq(got->TopicsCnt, want->TopicsCnt);
    for (int32_t i = 0; i < got->TopicsCnt; i++) {
        const struct kafka_OffsetFetchResponseTopic *g = &got->Topics[i];
        const struct kafka_OffsetFetchResponseTopic *w = &want->Topics[i];
        expect_slice(g->Name, w->Name, "Name", v);
        cr_assert_eq(g->PartitionsCnt, w->PartitionsCnt);
        for (int32_t j = 0; j < g->PartitionsCnt; j++) {
            const struct kafka_OffsetFetchResponsePartition *p =
                &g->Partitions[j];
            const struct kafka_OffsetFetchResponsePartition *q =
                &w->Partitions[j];
            cr_expect_eq(p->PartitionIndex, q->PartitionIndex);
            cr_expect_eq(p->CommittedOffset, q->CommittedOffset);
            cr_expect_eq(p->CommittedLeaderEpoch,
                         v >= 5 ? q->CommittedLeaderEpoch : -1, "v%d", v);
            expect_slice(p->Metadata, q->Metadata, "Metadata", v);
            cr_expect_eq(p->ErrorCode, q->ErrorCode);
        }
    }
    cr_expect_eq(got->ErrorCode, v >= 2 ? want->ErrorCode : 0, "v%d", v);
}

/* --- The table ----------------------------------------------------------- */

enum { OC, OF, N_CASES };

static const struct api_case cases[N_CASES] = {
    [OC] = CASE(OffsetCommit, OFFSET_COMMIT, offset_commit, oc, 7),
    [OF] = CASE(OffsetFetch, OFFSET_FETCH, offset_fetch, of, 5),
};

/* --- Table-driven tests -------------------------------------------------- */

CODEC_TABLE_TESTS(kafka_codec_offsets, cases)

/* --- Exact bytes, written out -------------------------------------------- */

Test(kafka_codec_offsets, offset_commit_v7_request_bytes)
{
    const struct kafka_OffsetCommitRequest *req = oc_req_sample(0);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_offset_commit_request_encode(&w, 7, req), RC_OK);
    struct bb x = {.n = 0};
    bb_i16(&x, 2), bb_raw(&x, (const uint8_t *)"cg", 2);
    bb_i32(&x, 4);                                  /* generation */
    bb_i16(&x, 3), bb_raw(&x, (const uint8_t *)"m-1", 3);
    bb_i16(&x, 6), bb_raw(&x, (const uint8_t *)"inst-1", 6);
    /* no retention time at v5+ */
    bb_i32(&x, 2);                                  /* topics */
    bb_i16(&x, 6), bb_raw(&x, (const uint8_t *)"orders", 6);
    bb_i32(&x, 2);
    bb_i32(&x, 0), bb_i64(&x, 100), bb_i32(&x, 3);
    bb_i16(&x, 4), bb_raw(&x, (const uint8_t *)"meta", 4);
    bb_i32(&x, 1), bb_i64(&x, 200), bb_i32(&x, 3);
    bb_i16(&x, -1);                                 /* null metadata */
    bb_i16(&x, 1), bb_raw(&x, (const uint8_t *)"t", 1);
    bb_i32(&x, 1);
    bb_i32(&x, 2), bb_i64(&x, 0x100000000), bb_i32(&x, 5);
    bb_i16(&x, 0);                                  /* "" metadata */
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 5 + 8 + 4 + 8 + 4 + 22 + 18 + 3 + 4 + 18);
    writer_free(&w);
}

Test(kafka_codec_offsets, offset_fetch_v5_response_bytes)
{
    const struct kafka_OffsetFetchResponse *resp = of_resp_sample(0);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_offset_fetch_response_encode(&w, 5, resp), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 4);                                  /* throttle */
    bb_i32(&x, 2);                                  /* topics */
    bb_i16(&x, 6), bb_raw(&x, (const uint8_t *)"orders", 6);
    bb_i32(&x, 2);
    bb_i32(&x, 0), bb_i64(&x, 100), bb_i32(&x, 3);
    bb_i16(&x, 4), bb_raw(&x, (const uint8_t *)"meta", 4), bb_i16(&x, 0);
    bb_i32(&x, 1), bb_i64(&x, -1), bb_i32(&x, -1);
    bb_i16(&x, -1), bb_i16(&x, 0);
    bb_i16(&x, 1), bb_raw(&x, (const uint8_t *)"t", 1);
    bb_i32(&x, 1);
    bb_i32(&x, 2), bb_i64(&x, 5), bb_i32(&x, 7);
    bb_i16(&x, 0), bb_i16(&x, 3);
    bb_i16(&x, 14);                                 /* group error code */
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 8 + 4 + 24 + 20 + 3 + 4 + 20 + 2);
    writer_free(&w);
}

/* --- Version shapes ------------------------------------------------------ */

Test(kafka_codec_offsets, offset_fetch_null_topics_from_v2_only)
{
    struct bb x = {.n = 0};
    bb_str(&x, "cg"), bb_i32(&x, -1);               /* null: all topics */
    const struct side *s = &cases[OF].req;
    cr_expect_eq(decode_n(s, 1, x.b, x.n, NULL), RC_MALFORMED);
    for (int16_t v = 2; v <= 5; v++) { /* v6+: compact, tested apart */
        struct fixture f;
        fixture_start(&f, x.b, x.n);
        struct kafka_OffsetFetchRequest got;
        cr_assert_eq(kafka_offset_fetch_request_decode(&f.r, v, &f.a, &got),
                     RC_OK, "v%d", v);
        cr_expect_eq(got.TopicsCnt, -1, "v%d", v);
        cr_expect(got.Topics == NULL);
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_offset_fetch_request_encode(&w, v, &got), RC_OK);
        expect_bytes(&w, &x);
        writer_free(&w);
        fixture_done(&f);
    }
}

Test(kafka_codec_offsets, null_arrays_elsewhere_are_malformed)
{
    struct bb z = {.n = 0};                         /* OffsetFetch resp */
    bb_i32(&z, 0), bb_i32(&z, -1), bb_i16(&z, 0);
    cr_expect_eq(decode_n(&cases[OF].resp, 5, z.b, z.n, NULL), RC_MALFORMED);
    struct bb t = {.n = 0};                         /* negative count */
    bb_str(&t, "cg"), bb_i32(&t, 1), bb_str(&t, "t"), bb_i32(&t, -2);
    cr_expect_eq(decode_n(&cases[OF].req, 5, t.b, t.n, NULL), RC_MALFORMED);
}

/* --- Counts beyond the input --------------------------------------------- */

static void huge_oc_req_topics(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, 1), bb_str(x, "m"), bb_str(x, NULL);
    bb_i32(x, INT32_MAX), bb_str(x, "t"), bb_i32(x, 0);
}

static void huge_oc_req_partitions(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, 1), bb_str(x, "m"), bb_str(x, NULL);
    bb_i32(x, 1), bb_str(x, "t"), bb_i32(x, INT32_MAX);
    bb_i32(x, 0), bb_i64(x, 1), bb_i32(x, -1), bb_str(x, NULL);
}

static void huge_of_req_topics(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, INT32_MAX), bb_str(x, "t"), bb_i32(x, 0);
}

static void huge_of_req_indexes(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, 1), bb_str(x, "t"), bb_i32(x, INT32_MAX);
    bb_i32(x, 0);
}

static void huge_of_resp_partitions(struct bb *x)
{
    bb_i32(x, 0), bb_i32(x, 1), bb_str(x, "t"), bb_i32(x, INT32_MAX);
    bb_i32(x, 0), bb_i64(x, -1), bb_i32(x, -1), bb_str(x, NULL);
    bb_i16(x, 0), bb_i16(x, 0);
}

static const struct huge_case huges[] = {
    {"OffsetCommit topics", OC, 0, 7, false, huge_oc_req_topics},
    {"OffsetCommit partitions", OC, 0, 7, true, huge_oc_req_partitions},
    {"OffsetFetch topics", OF, 0, 5, false, huge_of_req_topics},
    {"OffsetFetch indexes", OF, 0, 5, true, huge_of_req_indexes},
    {"OffsetFetch partitions", OF, 1, 5, true, huge_of_resp_partitions},
};

Test(kafka_codec_offsets, huge_counts_fail_without_allocating)
{
    check_huges(cases, huges, ARRAY_LEN(huges));
}

Test(kafka_codec_offsets, offset_commit_partitions_beyond_the_cap_too_large)
{
    int32_t cap = (int32_t)KAFKA_REQUEST_PARTITIONS_MAX;
    for (int32_t n = cap; n <= cap + 1; n++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        writer_string(&w, "cg", 2), writer_i32(&w, -1);
        writer_string(&w, "", 0), writer_nullable_string(&w, NULL, 0);
        writer_i32(&w, 1), writer_string(&w, "t", 1), writer_i32(&w, n);
        for (int32_t i = 0; i < n; i++) {
            writer_i32(&w, i), writer_i64(&w, 0), writer_i32(&w, -1);
            writer_nullable_string(&w, NULL, 0);
        }
        cr_assert_eq(w.rc, RC_OK);
        struct fixture f;
        fixture_start(&f, w.data, w.len);
        struct kafka_OffsetCommitRequest got;
        int rc = kafka_offset_commit_request_decode(&f.r, 7, &f.a, &got);
        cr_expect_eq(rc, n == cap ? RC_OK : RC_TOO_LARGE, "n=%d: %s", n,
                     rc_str(rc));
        fixture_done(&f);
        writer_free(&w);
    }
}
