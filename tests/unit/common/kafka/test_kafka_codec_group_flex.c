/* Tests for the flexible versions (KIP-482) of the consumer group APIs in
 * common/kafka/kafka_codec_group.c and kafka_codec_offsets.c: at every
 * flexible version of each API, request and response, a sample message
 * encodes to bytes written out here field by field (compact strings,
 * bytes and arrays, an empty tag section after every struct); the same
 * bytes with a tagged field in every tag section decode to the sample's
 * fields (with the defaults of what the version lacks), the tagged fields
 * skipped; the decoded message re-encodes to the untagged bytes; every
 * shorter prefix is RC_SHORT. The non-flexible versions are in
 * test_kafka_codec_group.c and test_kafka_codec_offsets.c. */
#include "tests/unit/common/kafka/codec_compact_bb.h"
#include "tests/unit/common/kafka/codec_group_cases.h"

WRAP_GROUP_APIS()
WRAP_OFFSET_APIS()

/* --- Compact forms, by hand (every length here is below 127) ------------ */

/* A struct's tag section: empty, or (tagged) one field Cairn does not
 * know, tag 9 with two bytes, which a decoder must skip. */
static void tags(struct bb *x, bool tagged)
{
    if (tagged) {
        bb_u8(x, 1), bb_u8(x, 9), bb_u8(x, 2), bb_u8(x, 0xaa), bb_u8(x, 0xbb);
    } else {
        bb_u8(x, 0);
    }
}

/* --- The harness --------------------------------------------------------- */

typedef void (*build_fn)(struct bb *x, int16_t v, bool tagged);
typedef void (*check_fn)(const void *got, int16_t v);

/* At v: the sample encodes to build(untagged); build(tagged) decodes, is
 * checked, and re-encodes to build(untagged); prefixes are short. */
static void flex_case(const char *what, encode_fn enc, decode_fn dec,
                      int16_t v, const void *sample, build_fn build,
                      check_fn check)
{
    struct bb x = {.n = 0};
    build(&x, v, false);
    struct writer w;
    writer_init(&w, MAX_16M);
    int rc = enc(&w, v, sample);
    cr_assert_eq(rc, RC_OK, "%s v%d: %s", what, v, rc_str(rc));
    expect_bytes(&w, &x);
    writer_free(&w);

    struct bb y = {.n = 0};
    build(&y, v, true);
    struct fixture f;
    fixture_start(&f, y.b, y.n);
    union msg got;
    memset(&got, 0xa5, sizeof got);
    rc = dec(&f.r, v, &f.a, &got);
    cr_assert_eq(rc, RC_OK, "%s v%d tagged: %s", what, v, rc_str(rc));
    check(&got, v);
    struct writer w2;
    writer_init(&w2, MAX_16M);
    cr_assert_eq(enc(&w2, v, &got), RC_OK, "%s v%d", what, v);
    expect_bytes(&w2, &x);
    writer_free(&w2);
    fixture_done(&f);

    for (size_t n = 0; n < x.n; n++) {
        fixture_start(&f, x.b, n);
        rc = dec(&f.r, v, &f.a, &got);
        cr_expect_eq(rc, RC_SHORT, "%s v%d cut at %zu: %s", what, v, n,
                     rc_str(rc));
        fixture_done(&f);
    }
    fixture_start(&f, x.b, x.n);
    cr_expect_eq(dec(&f.r, v, &f.a, &got), RC_OK, "%s v%d", what, v);
    fixture_done(&f);
}

#define FLEX(what, fn, first, max, sample, build, check)                  \
    for (int16_t v = (first); v <= (max); v++) {                          \
        flex_case(what, fn##_enc, fn##_dec, v, sample, build, check);     \
    }

#define EXPECT_STR(got, want) expect_slice((got), (want), #got, v)

static const uint8_t meta_012[] = {0, 1, 2};
static const uint8_t assign_01[] = {0, 1};

/* --- FindCoordinator ----------------------------------------------------- */

static struct slice fc_keys[2];

static const struct kafka_FindCoordinatorRequest *fc_req(void)
{
    static struct kafka_FindCoordinatorRequest m;
    fc_keys[0] = S("cg-1");
    fc_keys[1] = S("cg-2");
    m = (struct kafka_FindCoordinatorRequest){
        .Key = S("cg-orders"), .KeyType = 0, .CoordinatorKeys = fc_keys,
        .CoordinatorKeysCnt = 2};
    return &m;
}

static void fc_req_build(struct bb *x, int16_t v, bool tagged)
{
    if (v <= 3) {
        cbb_str(x, "cg-orders");
    }
    bb_i8(x, 0);                                    /* key type: group */
    if (v >= 4) {
        cbb_count(x, 2), cbb_str(x, "cg-1"), cbb_str(x, "cg-2");
    }
    tags(x, tagged);
}

static void fc_req_check(const void *got_, int16_t v)
{
    const struct kafka_FindCoordinatorRequest *got = got_;
    EXPECT_STR(got->Key, v <= 3 ? S("cg-orders") : S(""));
    cr_expect_eq(got->KeyType, 0);
    cr_assert_eq(got->CoordinatorKeysCnt, v >= 4 ? 2 : 0, "v%d", v);
    for (int32_t i = 0; i < got->CoordinatorKeysCnt; i++) {
        EXPECT_STR(got->CoordinatorKeys[i], fc_keys[i]);
    }
}

static struct kafka_Coordinator fc_coords[2];

static const struct kafka_FindCoordinatorResponse *fc_resp(void)
{
    static struct kafka_FindCoordinatorResponse m;
    fc_coords[0] = (struct kafka_Coordinator){
        S("cg-1"), 2, S("broker-2"), 9092, 0, slice_null()};
    fc_coords[1] = (struct kafka_Coordinator){
        S("tx-1"), -1, S(""), -1, 15, S("transactions are not supported")};
    m = (struct kafka_FindCoordinatorResponse){
        .ThrottleTimeMs = 7, .ErrorCode = 15, .ErrorMessage = S("loading"),
        .NodeId = 3, .Host = S("broker-3"), .Port = 9093,
        .Coordinators = fc_coords, .CoordinatorsCnt = 2};
    return &m;
}

static void fc_resp_build(struct bb *x, int16_t v, bool tagged)
{
    bb_i32(x, 7);
    if (v <= 3) {
        bb_i16(x, 15), cbb_str(x, "loading");
        bb_i32(x, 3), cbb_str(x, "broker-3"), bb_i32(x, 9093);
    } else {
        cbb_count(x, 2);
        cbb_str(x, "cg-1"), bb_i32(x, 2), cbb_str(x, "broker-2"), bb_i32(x, 9092);
        bb_i16(x, 0), cbb_str(x, NULL), tags(x, tagged);
        cbb_str(x, "tx-1"), bb_i32(x, -1), cbb_str(x, ""), bb_i32(x, -1);
        bb_i16(x, 15), cbb_str(x, "transactions are not supported");
        tags(x, tagged);
    }
    tags(x, tagged);
}

static void fc_resp_check(const void *got_, int16_t v)
{
    const struct kafka_FindCoordinatorResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 7);
    cr_expect_eq(got->ErrorCode, v <= 3 ? 15 : 0, "v%d", v);
    EXPECT_STR(got->ErrorMessage, v <= 3 ? S("loading") : slice_null());
    cr_expect_eq(got->NodeId, v <= 3 ? 3 : 0, "v%d", v);
    EXPECT_STR(got->Host, v <= 3 ? S("broker-3") : S(""));
    cr_expect_eq(got->Port, v <= 3 ? 9093 : 0, "v%d", v);
    cr_assert_eq(got->CoordinatorsCnt, v >= 4 ? 2 : 0, "v%d", v);
    for (int32_t i = 0; i < got->CoordinatorsCnt; i++) {
        const struct kafka_Coordinator *g = &got->Coordinators[i];
        const struct kafka_Coordinator *w = &fc_coords[i];
        EXPECT_STR(g->Key, w->Key);
        cr_expect_eq(g->NodeId, w->NodeId);
        EXPECT_STR(g->Host, w->Host);
        cr_expect_eq(g->Port, w->Port);
        cr_expect_eq(g->ErrorCode, w->ErrorCode);
        EXPECT_STR(g->ErrorMessage, w->ErrorMessage);
    }
}

Test(kafka_codec_group_flex, find_coordinator_v3_to_v5)
{
    FLEX("FindCoordinator request", find_coordinator_request, 3,
         KAFKA_FIND_COORDINATOR_VERSION_MAX, fc_req(), fc_req_build,
         fc_req_check);
    FLEX("FindCoordinator response", find_coordinator_response, 3,
         KAFKA_FIND_COORDINATOR_VERSION_MAX, fc_resp(), fc_resp_build,
         fc_resp_check);
}

/* --- JoinGroup ----------------------------------------------------------- */

static struct kafka_JoinGroupRequestProtocol jg_protocols[2];

static const struct kafka_JoinGroupRequest *jg_req(void)
{
    static struct kafka_JoinGroupRequest m;
    jg_protocols[0] = (struct kafka_JoinGroupRequestProtocol){
        S("range"), B(meta_012)};
    jg_protocols[1] = (struct kafka_JoinGroupRequestProtocol){
        S("roundrobin"), S("")};
    m = (struct kafka_JoinGroupRequest){
        .GroupId = S("cg"), .SessionTimeoutMs = 45000,
        .RebalanceTimeoutMs = 300000, .MemberId = S("m-1"),
        .GroupInstanceId = slice_null(), .ProtocolType = S("consumer"),
        .Protocols = jg_protocols, .ProtocolsCnt = 2,
        .Reason = S("rebalance failed")};
    return &m;
}

static void jg_req_build(struct bb *x, int16_t v, bool tagged)
{
    cbb_str(x, "cg"), bb_i32(x, 45000), bb_i32(x, 300000), cbb_str(x, "m-1");
    cbb_str(x, NULL), cbb_str(x, "consumer");             /* no instance id */
    cbb_count(x, 2);
    cbb_str(x, "range"), cbb_bytes(x, meta_012, 3), tags(x, tagged);
    cbb_str(x, "roundrobin"), cbb_bytes(x, NULL, 0), tags(x, tagged);
    if (v >= 8) {
        cbb_str(x, "rebalance failed");
    }
    tags(x, tagged);
}

static void jg_req_check(const void *got_, int16_t v)
{
    const struct kafka_JoinGroupRequest *got = got_;
    EXPECT_STR(got->GroupId, S("cg"));
    cr_expect_eq(got->SessionTimeoutMs, 45000);
    cr_expect_eq(got->RebalanceTimeoutMs, 300000);
    EXPECT_STR(got->MemberId, S("m-1"));
    EXPECT_STR(got->GroupInstanceId, slice_null());
    EXPECT_STR(got->ProtocolType, S("consumer"));
    cr_assert_eq(got->ProtocolsCnt, 2);
    EXPECT_STR(got->Protocols[0].Name, S("range"));
    EXPECT_STR(got->Protocols[0].Metadata, B(meta_012));
    EXPECT_STR(got->Protocols[1].Name, S("roundrobin"));
    EXPECT_STR(got->Protocols[1].Metadata, S(""));
    EXPECT_STR(got->Reason, since(v, 8, S("rebalance failed")));
}

static struct kafka_JoinGroupResponseMember jg_members[2];

static const struct kafka_JoinGroupResponse *jg_resp(void)
{
    static struct kafka_JoinGroupResponse m;
    jg_members[0] = (struct kafka_JoinGroupResponseMember){
        S("m-1"), S("inst-1"), B(meta_012)};
    jg_members[1] = (struct kafka_JoinGroupResponseMember){
        S("m-2"), slice_null(), S("")};
    m = (struct kafka_JoinGroupResponse){
        .ThrottleTimeMs = 1, .ErrorCode = 0, .GenerationId = 4,
        .ProtocolType = S("consumer"), .ProtocolName = S("range"),
        .Leader = S("m-1"), .SkipAssignment = true, .MemberId = S("m-1"),
        .Members = jg_members, .MembersCnt = 2};
    return &m;
}

static void jg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    bb_i32(x, 1), bb_i16(x, 0), bb_i32(x, 4);
    if (v >= 7) {
        cbb_str(x, "consumer");                        /* protocol type */
    }
    cbb_str(x, "range"), cbb_str(x, "m-1");
    if (v >= 9) {
        bb_u8(x, 1);                                /* skip assignment */
    }
    cbb_str(x, "m-1");
    cbb_count(x, 2);
    cbb_str(x, "m-1"), cbb_str(x, "inst-1"), cbb_bytes(x, meta_012, 3);
    tags(x, tagged);
    cbb_str(x, "m-2"), cbb_str(x, NULL), cbb_bytes(x, NULL, 0), tags(x, tagged);
    tags(x, tagged);
}

static void jg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_JoinGroupResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 1);
    cr_expect_eq(got->ErrorCode, 0);
    cr_expect_eq(got->GenerationId, 4);
    EXPECT_STR(got->ProtocolType, since(v, 7, S("consumer")));
    EXPECT_STR(got->ProtocolName, S("range"));
    EXPECT_STR(got->Leader, S("m-1"));
    cr_expect_eq(got->SkipAssignment, v >= 9, "v%d", v);
    EXPECT_STR(got->MemberId, S("m-1"));
    cr_assert_eq(got->MembersCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        EXPECT_STR(got->Members[i].MemberId, jg_members[i].MemberId);
        EXPECT_STR(got->Members[i].GroupInstanceId,
                   jg_members[i].GroupInstanceId);
        EXPECT_STR(got->Members[i].Metadata, jg_members[i].Metadata);
    }
}

Test(kafka_codec_group_flex, join_group_v6_to_v9)
{
    FLEX("JoinGroup request", join_group_request, 6,
         KAFKA_JOIN_GROUP_VERSION_MAX, jg_req(), jg_req_build, jg_req_check);
    FLEX("JoinGroup response", join_group_response, 6,
         KAFKA_JOIN_GROUP_VERSION_MAX, jg_resp(), jg_resp_build,
         jg_resp_check);
}

Test(kafka_codec_group_flex, join_group_null_protocol_name_is_empty_before_v7)
{
    struct kafka_JoinGroupResponse m = *jg_resp();
    m.ErrorCode = 25;                               /* UNKNOWN_MEMBER_ID */
    m.ProtocolType = slice_null();
    m.ProtocolName = slice_null();
    m.MembersCnt = 0;
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_join_group_response_encode(&w, 6, &m), RC_OK);
    struct bb x = {.n = 0};
    bb_i32(&x, 1), bb_i16(&x, 25), bb_i32(&x, 4);
    cbb_str(&x, ""), cbb_str(&x, "m-1"), cbb_str(&x, "m-1"), cbb_count(&x, 0);
    tags(&x, false);
    expect_bytes(&w, &x);
    writer_reset(&w);
    cr_assert_eq(kafka_join_group_response_encode(&w, 7, &m), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 1), bb_i16(&y, 25), bb_i32(&y, 4);
    cbb_str(&y, NULL), cbb_str(&y, NULL), cbb_str(&y, "m-1"), cbb_str(&y, "m-1");
    cbb_count(&y, 0), tags(&y, false);
    expect_bytes(&w, &y);
    writer_free(&w);
}

/* --- Heartbeat, LeaveGroup ----------------------------------------------- */

static const struct kafka_HeartbeatRequest *hb_req(void)
{
    static struct kafka_HeartbeatRequest m;
    m = (struct kafka_HeartbeatRequest){S("cg"), 4, S("m-1"), S("inst-1")};
    return &m;
}

static void hb_req_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    cbb_str(x, "cg"), bb_i32(x, 4), cbb_str(x, "m-1"), cbb_str(x, "inst-1");
    tags(x, tagged);
}

static void hb_req_check(const void *got_, int16_t v)
{
    const struct kafka_HeartbeatRequest *got = got_;
    EXPECT_STR(got->GroupId, S("cg"));
    cr_expect_eq(got->GenerationId, 4);
    EXPECT_STR(got->MemberId, S("m-1"));
    EXPECT_STR(got->GroupInstanceId, S("inst-1"));
}

static const struct kafka_HeartbeatResponse *hb_resp(void)
{
    static struct kafka_HeartbeatResponse m;
    m = (struct kafka_HeartbeatResponse){3, 27};
    return &m;
}

static void hb_resp_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    bb_i32(x, 3), bb_i16(x, 27), tags(x, tagged);
}

static void hb_resp_check(const void *got_, int16_t v)
{
    (void)v;
    const struct kafka_HeartbeatResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 3);
    cr_expect_eq(got->ErrorCode, 27);
}

static struct kafka_MemberIdentity lg_members[2];

static const struct kafka_LeaveGroupRequest *lg_req(void)
{
    static struct kafka_LeaveGroupRequest m;
    lg_members[0] = (struct kafka_MemberIdentity){
        S("m-1"), S("inst-1"), S("the consumer is being closed")};
    lg_members[1] = (struct kafka_MemberIdentity){
        S("m-2"), slice_null(), slice_null()};
    m = (struct kafka_LeaveGroupRequest){
        .GroupId = S("cg"), .MemberId = S(""), .Members = lg_members,
        .MembersCnt = 2};
    return &m;
}

static void lg_req_build(struct bb *x, int16_t v, bool tagged)
{
    cbb_str(x, "cg"), cbb_count(x, 2);
    cbb_str(x, "m-1"), cbb_str(x, "inst-1");
    if (v >= 5) {
        cbb_str(x, "the consumer is being closed");
    }
    tags(x, tagged);
    cbb_str(x, "m-2"), cbb_str(x, NULL);
    if (v >= 5) {
        cbb_str(x, NULL);
    }
    tags(x, tagged);
    tags(x, tagged);
}

static void lg_req_check(const void *got_, int16_t v)
{
    const struct kafka_LeaveGroupRequest *got = got_;
    EXPECT_STR(got->GroupId, S("cg"));
    EXPECT_STR(got->MemberId, S(""));
    cr_assert_eq(got->MembersCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        EXPECT_STR(got->Members[i].MemberId, lg_members[i].MemberId);
        EXPECT_STR(got->Members[i].GroupInstanceId,
                   lg_members[i].GroupInstanceId);
        EXPECT_STR(got->Members[i].Reason,
                   since(v, 5, lg_members[i].Reason));
    }
}

static struct kafka_MemberResponse lg_results[1];

static const struct kafka_LeaveGroupResponse *lg_resp(void)
{
    static struct kafka_LeaveGroupResponse m;
    lg_results[0] = (struct kafka_MemberResponse){
        S("m-1"), S("inst-1"), 25};
    m = (struct kafka_LeaveGroupResponse){0, 0, lg_results, 1};
    return &m;
}

static void lg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    bb_i32(x, 0), bb_i16(x, 0), cbb_count(x, 1);
    cbb_str(x, "m-1"), cbb_str(x, "inst-1"), bb_i16(x, 25), tags(x, tagged);
    tags(x, tagged);
}

static void lg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_LeaveGroupResponse *got = got_;
    cr_expect_eq(got->ErrorCode, 0);
    cr_assert_eq(got->MembersCnt, 1);
    EXPECT_STR(got->Members[0].MemberId, S("m-1"));
    EXPECT_STR(got->Members[0].GroupInstanceId, S("inst-1"));
    cr_expect_eq(got->Members[0].ErrorCode, 25);
}

Test(kafka_codec_group_flex, heartbeat_v4_and_leave_group_v4_to_v5)
{
    FLEX("Heartbeat request", heartbeat_request, 4,
         KAFKA_HEARTBEAT_VERSION_MAX, hb_req(), hb_req_build, hb_req_check);
    FLEX("Heartbeat response", heartbeat_response, 4,
         KAFKA_HEARTBEAT_VERSION_MAX, hb_resp(), hb_resp_build,
         hb_resp_check);
    FLEX("LeaveGroup request", leave_group_request, 4,
         KAFKA_LEAVE_GROUP_VERSION_MAX, lg_req(), lg_req_build,
         lg_req_check);
    FLEX("LeaveGroup response", leave_group_response, 4,
         KAFKA_LEAVE_GROUP_VERSION_MAX, lg_resp(), lg_resp_build,
         lg_resp_check);
}

/* --- SyncGroup ----------------------------------------------------------- */

static struct kafka_SyncGroupRequestAssignment sg_assignments[2];

static const struct kafka_SyncGroupRequest *sg_req(void)
{
    static struct kafka_SyncGroupRequest m;
    sg_assignments[0] = (struct kafka_SyncGroupRequestAssignment){
        S("m-1"), B(assign_01)};
    sg_assignments[1] = (struct kafka_SyncGroupRequestAssignment){
        S("m-2"), S("")};
    m = (struct kafka_SyncGroupRequest){
        .GroupId = S("cg"), .GenerationId = 4, .MemberId = S("m-1"),
        .GroupInstanceId = slice_null(), .ProtocolType = S("consumer"),
        .ProtocolName = S("range"), .Assignments = sg_assignments,
        .AssignmentsCnt = 2};
    return &m;
}

static void sg_req_build(struct bb *x, int16_t v, bool tagged)
{
    cbb_str(x, "cg"), bb_i32(x, 4), cbb_str(x, "m-1"), cbb_str(x, NULL);
    if (v >= 5) {
        cbb_str(x, "consumer"), cbb_str(x, "range");
    }
    cbb_count(x, 2);
    cbb_str(x, "m-1"), cbb_bytes(x, assign_01, 2), tags(x, tagged);
    cbb_str(x, "m-2"), cbb_bytes(x, NULL, 0), tags(x, tagged);
    tags(x, tagged);
}

static void sg_req_check(const void *got_, int16_t v)
{
    const struct kafka_SyncGroupRequest *got = got_;
    EXPECT_STR(got->GroupId, S("cg"));
    cr_expect_eq(got->GenerationId, 4);
    EXPECT_STR(got->MemberId, S("m-1"));
    EXPECT_STR(got->GroupInstanceId, slice_null());
    EXPECT_STR(got->ProtocolType, since(v, 5, S("consumer")));
    EXPECT_STR(got->ProtocolName, since(v, 5, S("range")));
    cr_assert_eq(got->AssignmentsCnt, 2);
    EXPECT_STR(got->Assignments[0].MemberId, S("m-1"));
    EXPECT_STR(got->Assignments[0].Assignment, B(assign_01));
    EXPECT_STR(got->Assignments[1].MemberId, S("m-2"));
    EXPECT_STR(got->Assignments[1].Assignment, S(""));
}

static const struct kafka_SyncGroupResponse *sg_resp(void)
{
    static struct kafka_SyncGroupResponse m;
    m = (struct kafka_SyncGroupResponse){
        2, 0, S("consumer"), slice_null(), B(assign_01)};
    return &m;
}

static void sg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    bb_i32(x, 2), bb_i16(x, 0);
    if (v >= 5) {
        cbb_str(x, "consumer"), cbb_str(x, NULL);
    }
    cbb_bytes(x, assign_01, 2), tags(x, tagged);
}

static void sg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_SyncGroupResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 2);
    cr_expect_eq(got->ErrorCode, 0);
    EXPECT_STR(got->ProtocolType, since(v, 5, S("consumer")));
    EXPECT_STR(got->ProtocolName, slice_null());
    EXPECT_STR(got->Assignment, B(assign_01));
}

Test(kafka_codec_group_flex, sync_group_v4_to_v5)
{
    FLEX("SyncGroup request", sync_group_request, 4,
         KAFKA_SYNC_GROUP_VERSION_MAX, sg_req(), sg_req_build, sg_req_check);
    FLEX("SyncGroup response", sync_group_response, 4,
         KAFKA_SYNC_GROUP_VERSION_MAX, sg_resp(), sg_resp_build,
         sg_resp_check);
}

/* --- DescribeGroups, DeleteGroups ---------------------------------------- */

static struct slice group_names[2];

static const struct kafka_DescribeGroupsRequest *dg_req(void)
{
    static struct kafka_DescribeGroupsRequest m;
    group_names[0] = S("cg");
    group_names[1] = S("other");
    m = (struct kafka_DescribeGroupsRequest){group_names, 2, true};
    return &m;
}

static void dg_req_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    cbb_count(x, 2), cbb_str(x, "cg"), cbb_str(x, "other"), bb_u8(x, 1);
    tags(x, tagged);
}

static void dg_req_check(const void *got_, int16_t v)
{
    const struct kafka_DescribeGroupsRequest *got = got_;
    cr_assert_eq(got->GroupsCnt, 2);
    EXPECT_STR(got->Groups[0], S("cg"));
    EXPECT_STR(got->Groups[1], S("other"));
    cr_expect(got->IncludeAuthorizedOperations);
}

static struct kafka_DescribedGroupMember dg_members[1];
static struct kafka_DescribedGroup dg_groups[2];

static const struct kafka_DescribeGroupsResponse *dg_resp(void)
{
    static struct kafka_DescribeGroupsResponse m;
    dg_members[0] = (struct kafka_DescribedGroupMember){
        S("m-1"), S("inst-1"), S("client-1"), S("/127.0.0.1"), B(meta_012),
        B(assign_01)};
    dg_groups[0] = (struct kafka_DescribedGroup){
        0, S("cg"), S("Stable"), S("consumer"), S("range"), dg_members, 1,
        INT32_MIN};
    dg_groups[1] = (struct kafka_DescribedGroup){
        16, S("other"), S("Dead"), S(""), S(""), NULL, 0, INT32_MIN};
    m = (struct kafka_DescribeGroupsResponse){5, dg_groups, 2};
    return &m;
}

static void dg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    bb_i32(x, 5), cbb_count(x, 2);
    bb_i16(x, 0), cbb_str(x, "cg"), cbb_str(x, "Stable"), cbb_str(x, "consumer");
    cbb_str(x, "range"), cbb_count(x, 1);
    cbb_str(x, "m-1"), cbb_str(x, "inst-1"), cbb_str(x, "client-1");
    cbb_str(x, "/127.0.0.1"), cbb_bytes(x, meta_012, 3), cbb_bytes(x, assign_01, 2);
    tags(x, tagged);
    bb_i32(x, INT32_MIN), tags(x, tagged);
    bb_i16(x, 16), cbb_str(x, "other"), cbb_str(x, "Dead"), cbb_str(x, "");
    cbb_str(x, ""), cbb_count(x, 0), bb_i32(x, INT32_MIN), tags(x, tagged);
    tags(x, tagged);
}

static void dg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_DescribeGroupsResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 5);
    cr_assert_eq(got->GroupsCnt, 2);
    const struct kafka_DescribedGroup *g = &got->Groups[0];
    EXPECT_STR(g->GroupId, S("cg"));
    EXPECT_STR(g->GroupState, S("Stable"));
    EXPECT_STR(g->ProtocolData, S("range"));
    cr_assert_eq(g->MembersCnt, 1);
    EXPECT_STR(g->Members[0].GroupInstanceId, S("inst-1"));
    EXPECT_STR(g->Members[0].ClientHost, S("/127.0.0.1"));
    EXPECT_STR(g->Members[0].MemberAssignment, B(assign_01));
    cr_expect_eq(g->AuthorizedOperations, INT32_MIN);
    cr_expect_eq(got->Groups[1].ErrorCode, 16);
    EXPECT_STR(got->Groups[1].GroupState, S("Dead"));
    cr_expect_eq(got->Groups[1].MembersCnt, 0);
}

static const struct kafka_DeleteGroupsRequest *dlg_req(void)
{
    static struct kafka_DeleteGroupsRequest m;
    group_names[0] = S("cg");
    group_names[1] = S("other");
    m = (struct kafka_DeleteGroupsRequest){group_names, 2};
    return &m;
}

static void dlg_req_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    cbb_count(x, 2), cbb_str(x, "cg"), cbb_str(x, "other"), tags(x, tagged);
}

static void dlg_req_check(const void *got_, int16_t v)
{
    const struct kafka_DeleteGroupsRequest *got = got_;
    cr_assert_eq(got->GroupsNamesCnt, 2);
    EXPECT_STR(got->GroupsNames[0], S("cg"));
    EXPECT_STR(got->GroupsNames[1], S("other"));
}

static struct kafka_DeletableGroupResult dlg_results[2];

static const struct kafka_DeleteGroupsResponse *dlg_resp(void)
{
    static struct kafka_DeleteGroupsResponse m;
    dlg_results[0] = (struct kafka_DeletableGroupResult){S("cg"), 0};
    dlg_results[1] = (struct kafka_DeletableGroupResult){S("other"), 69};
    m = (struct kafka_DeleteGroupsResponse){0, dlg_results, 2};
    return &m;
}

static void dlg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    bb_i32(x, 0), cbb_count(x, 2);
    cbb_str(x, "cg"), bb_i16(x, 0), tags(x, tagged);
    cbb_str(x, "other"), bb_i16(x, 69), tags(x, tagged);
    tags(x, tagged);
}

static void dlg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_DeleteGroupsResponse *got = got_;
    cr_assert_eq(got->ResultsCnt, 2);
    EXPECT_STR(got->Results[1].GroupId, S("other"));
    cr_expect_eq(got->Results[1].ErrorCode, 69);
}

Test(kafka_codec_group_flex, describe_groups_v5_and_delete_groups_v2)
{
    FLEX("DescribeGroups request", describe_groups_request, 5,
         KAFKA_DESCRIBE_GROUPS_VERSION_MAX, dg_req(), dg_req_build,
         dg_req_check);
    FLEX("DescribeGroups response", describe_groups_response, 5,
         KAFKA_DESCRIBE_GROUPS_VERSION_MAX, dg_resp(), dg_resp_build,
         dg_resp_check);
    FLEX("DeleteGroups request", delete_groups_request, 2,
         KAFKA_DELETE_GROUPS_VERSION_MAX, dlg_req(), dlg_req_build,
         dlg_req_check);
    FLEX("DeleteGroups response", delete_groups_response, 2,
         KAFKA_DELETE_GROUPS_VERSION_MAX, dlg_resp(), dlg_resp_build,
         dlg_resp_check);
}

/* --- ListGroups ---------------------------------------------------------- */

static struct slice lsg_states[2];
static struct slice lsg_types[1];

static const struct kafka_ListGroupsRequest *lsg_req(void)
{
    static struct kafka_ListGroupsRequest m;
    lsg_states[0] = S("Stable");
    lsg_states[1] = S("empty");
    lsg_types[0] = S("classic");
    m = (struct kafka_ListGroupsRequest){lsg_states, 2, lsg_types, 1};
    return &m;
}

static void lsg_req_build(struct bb *x, int16_t v, bool tagged)
{
    if (v >= 4) {
        cbb_count(x, 2), cbb_str(x, "Stable"), cbb_str(x, "empty");
    }
    if (v >= 5) {
        cbb_count(x, 1), cbb_str(x, "classic");
    }
    tags(x, tagged);
}

static void lsg_req_check(const void *got_, int16_t v)
{
    const struct kafka_ListGroupsRequest *got = got_;
    cr_assert_eq(got->StatesFilterCnt, v >= 4 ? 2 : 0, "v%d", v);
    for (int32_t i = 0; i < got->StatesFilterCnt; i++) {
        EXPECT_STR(got->StatesFilter[i], lsg_states[i]);
    }
    cr_assert_eq(got->TypesFilterCnt, v >= 5 ? 1 : 0, "v%d", v);
    if (v >= 5) {
        EXPECT_STR(got->TypesFilter[0], S("classic"));
    }
}

static struct kafka_ListedGroup lsg_groups[2];

static const struct kafka_ListGroupsResponse *lsg_resp(void)
{
    static struct kafka_ListGroupsResponse m;
    lsg_groups[0] = (struct kafka_ListedGroup){
        S("cg"), S("consumer"), S("Stable"), S("classic")};
    lsg_groups[1] = (struct kafka_ListedGroup){
        S("offsets-only"), S(""), S("Empty"), S("classic")};
    m = (struct kafka_ListGroupsResponse){9, 0, lsg_groups, 2};
    return &m;
}

static void lsg_resp_build(struct bb *x, int16_t v, bool tagged)
{
    bb_i32(x, 9), bb_i16(x, 0), cbb_count(x, 2);
    for (int i = 0; i < 2; i++) {
        cbb_str(x, i == 0 ? "cg" : "offsets-only");
        cbb_str(x, i == 0 ? "consumer" : "");
        if (v >= 4) {
            cbb_str(x, i == 0 ? "Stable" : "Empty");
        }
        if (v >= 5) {
            cbb_str(x, "classic");
        }
        tags(x, tagged);
    }
    tags(x, tagged);
}

static void lsg_resp_check(const void *got_, int16_t v)
{
    const struct kafka_ListGroupsResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 9);
    cr_assert_eq(got->GroupsCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        const struct kafka_ListedGroup *g = &got->Groups[i];
        EXPECT_STR(g->GroupId, lsg_groups[i].GroupId);
        EXPECT_STR(g->ProtocolType, lsg_groups[i].ProtocolType);
        EXPECT_STR(g->GroupState, v >= 4 ? lsg_groups[i].GroupState : S(""));
        EXPECT_STR(g->GroupType, v >= 5 ? S("classic") : S(""));
    }
}

Test(kafka_codec_group_flex, list_groups_v3_to_v5)
{
    FLEX("ListGroups request", list_groups_request, 3,
         KAFKA_LIST_GROUPS_VERSION_MAX, lsg_req(), lsg_req_build,
         lsg_req_check);
    FLEX("ListGroups response", list_groups_response, 3,
         KAFKA_LIST_GROUPS_VERSION_MAX, lsg_resp(), lsg_resp_build,
         lsg_resp_check);
}

/* --- OffsetCommit -------------------------------------------------------- */

static struct kafka_OffsetCommitRequestPartition oc_parts[2];
static struct kafka_OffsetCommitRequestTopic oc_topics[1];

static const struct kafka_OffsetCommitRequest *oc_req(void)
{
    static struct kafka_OffsetCommitRequest m;
    oc_parts[0] = (struct kafka_OffsetCommitRequestPartition){
        0, 100, 3, -1, S("meta")};
    oc_parts[1] = (struct kafka_OffsetCommitRequestPartition){
        1, 200, -1, -1, slice_null()};
    oc_topics[0] = (struct kafka_OffsetCommitRequestTopic){
        S("orders"), oc_parts, 2};
    m = (struct kafka_OffsetCommitRequest){
        .GroupId = S("cg"), .GenerationIdOrMemberEpoch = 4,
        .MemberId = S("m-1"), .GroupInstanceId = slice_null(),
        .RetentionTimeMs = -1, .Topics = oc_topics, .TopicsCnt = 1};
    return &m;
}

static void oc_req_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;                                        /* v9 is v8 */
    cbb_str(x, "cg"), bb_i32(x, 4), cbb_str(x, "m-1"), cbb_str(x, NULL);
    cbb_count(x, 1), cbb_str(x, "orders"), cbb_count(x, 2);
    bb_i32(x, 0), bb_i64(x, 100), bb_i32(x, 3), cbb_str(x, "meta");
    tags(x, tagged);
    bb_i32(x, 1), bb_i64(x, 200), bb_i32(x, -1), cbb_str(x, NULL);
    tags(x, tagged);
    tags(x, tagged);                                /* topic */
    tags(x, tagged);
}

static void oc_req_check(const void *got_, int16_t v)
{
    const struct kafka_OffsetCommitRequest *got = got_;
    EXPECT_STR(got->GroupId, S("cg"));
    cr_expect_eq(got->GenerationIdOrMemberEpoch, 4);
    EXPECT_STR(got->MemberId, S("m-1"));
    EXPECT_STR(got->GroupInstanceId, slice_null());
    cr_expect_eq(got->RetentionTimeMs, -1);
    cr_assert_eq(got->TopicsCnt, 1);
    EXPECT_STR(got->Topics[0].Name, S("orders"));
    cr_assert_eq(got->Topics[0].PartitionsCnt, 2);
    for (int32_t i = 0; i < 2; i++) {
        const struct kafka_OffsetCommitRequestPartition *p =
            &got->Topics[0].Partitions[i];
        cr_expect_eq(p->PartitionIndex, oc_parts[i].PartitionIndex);
        cr_expect_eq(p->CommittedOffset, oc_parts[i].CommittedOffset);
        cr_expect_eq(p->CommittedLeaderEpoch,
                     oc_parts[i].CommittedLeaderEpoch);
        cr_expect_eq(p->CommitTimestamp, -1);
        EXPECT_STR(p->CommittedMetadata, oc_parts[i].CommittedMetadata);
    }
}

static struct kafka_OffsetCommitResponsePartition oc_results[2];
static struct kafka_OffsetCommitResponseTopic oc_result_topics[1];

static const struct kafka_OffsetCommitResponse *oc_resp(void)
{
    static struct kafka_OffsetCommitResponse m;
    oc_results[0] = (struct kafka_OffsetCommitResponsePartition){0, 0};
    oc_results[1] = (struct kafka_OffsetCommitResponsePartition){1, 22};
    oc_result_topics[0] = (struct kafka_OffsetCommitResponseTopic){
        S("orders"), oc_results, 2};
    m = (struct kafka_OffsetCommitResponse){6, oc_result_topics, 1};
    return &m;
}

static void oc_resp_build(struct bb *x, int16_t v, bool tagged)
{
    (void)v;
    bb_i32(x, 6), cbb_count(x, 1), cbb_str(x, "orders"), cbb_count(x, 2);
    bb_i32(x, 0), bb_i16(x, 0), tags(x, tagged);
    bb_i32(x, 1), bb_i16(x, 22), tags(x, tagged);
    tags(x, tagged);
    tags(x, tagged);
}

static void oc_resp_check(const void *got_, int16_t v)
{
    const struct kafka_OffsetCommitResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 6);
    cr_assert_eq(got->TopicsCnt, 1);
    cr_assert_eq(got->Topics[0].PartitionsCnt, 2);
    cr_expect_eq(got->Topics[0].Partitions[1].ErrorCode, 22, "v%d", v);
}

Test(kafka_codec_group_flex, offset_commit_v8_to_v9)
{
    FLEX("OffsetCommit request", offset_commit_request, 8,
         KAFKA_OFFSET_COMMIT_VERSION_MAX, oc_req(), oc_req_build,
         oc_req_check);
    FLEX("OffsetCommit response", offset_commit_response, 8,
         KAFKA_OFFSET_COMMIT_VERSION_MAX, oc_resp(), oc_resp_build,
         oc_resp_check);
}

/* --- OffsetFetch --------------------------------------------------------- */

static const int32_t of_ids[] = {0, 1};
static struct kafka_OffsetFetchRequestTopic of_topics[1];
static struct kafka_OffsetFetchRequestGroup of_groups[2];

static const struct kafka_OffsetFetchRequest *of_req(void)
{
    static struct kafka_OffsetFetchRequest m;
    of_topics[0] = (struct kafka_OffsetFetchRequestTopic){
        S("orders"), of_ids, 2};
    of_groups[0] = (struct kafka_OffsetFetchRequestGroup){
        S("cg-1"), slice_null(), -1, of_topics, 1};
    of_groups[1] = (struct kafka_OffsetFetchRequestGroup){
        S("cg-2"), S("m-1"), 5, NULL, -1};        /* all topics */
    m = (struct kafka_OffsetFetchRequest){
        .GroupId = S("cg"), .Topics = of_topics, .TopicsCnt = 1,
        .Groups = of_groups, .GroupsCnt = 2, .RequireStable = true};
    return &m;
}

static void of_topics_build(struct bb *x, bool tagged)
{
    cbb_count(x, 1), cbb_str(x, "orders"), cbb_count(x, 2), bb_i32(x, 0), bb_i32(x, 1);
    tags(x, tagged);
}

static void of_req_build(struct bb *x, int16_t v, bool tagged)
{
    if (v <= 7) {
        cbb_str(x, "cg"), of_topics_build(x, tagged);
    } else {
        cbb_count(x, 2);
        cbb_str(x, "cg-1");
        if (v >= 9) {
            cbb_str(x, NULL), bb_i32(x, -1);
        }
        of_topics_build(x, tagged), tags(x, tagged);
        cbb_str(x, "cg-2");
        if (v >= 9) {
            cbb_str(x, "m-1"), bb_i32(x, 5);
        }
        cbb_count(x, -1), tags(x, tagged);               /* null: all topics */
    }
    if (v >= 7) {
        bb_u8(x, 1);                                /* require stable */
    }
    tags(x, tagged);
}

static void of_req_check(const void *got_, int16_t v)
{
    const struct kafka_OffsetFetchRequest *got = got_;
    cr_expect_eq(got->RequireStable, v >= 7, "v%d", v);
    const struct kafka_OffsetFetchRequestTopic *ts = got->Topics;
    int32_t n = got->TopicsCnt;
    if (v <= 7) {
        EXPECT_STR(got->GroupId, S("cg"));
        cr_expect_eq(got->GroupsCnt, 0);
    } else {
        EXPECT_STR(got->GroupId, S(""));
        cr_expect_eq(got->TopicsCnt, 0);
        cr_assert_eq(got->GroupsCnt, 2);
        const struct kafka_OffsetFetchRequestGroup *g = got->Groups;
        EXPECT_STR(g[0].GroupId, S("cg-1"));
        EXPECT_STR(g[0].MemberId, slice_null());
        cr_expect_eq(g[0].MemberEpoch, -1);
        EXPECT_STR(g[1].GroupId, S("cg-2"));
        EXPECT_STR(g[1].MemberId, since(v, 9, S("m-1")));
        cr_expect_eq(g[1].MemberEpoch, v >= 9 ? 5 : -1, "v%d", v);
        cr_expect_eq(g[1].TopicsCnt, -1);
        cr_expect(g[1].Topics == NULL);
        ts = g[0].Topics;
        n = g[0].TopicsCnt;
    }
    cr_assert_eq(n, 1);
    EXPECT_STR(ts[0].Name, S("orders"));
    cr_assert_eq(ts[0].PartitionIndexesCnt, 2);
    cr_expect_eq(ts[0].PartitionIndexes[1], 1);
}

static struct kafka_OffsetFetchResponsePartition of_parts[2];
static struct kafka_OffsetFetchResponseTopic of_result_topics[1];
static struct kafka_OffsetFetchResponseGroup of_result_groups[2];

static const struct kafka_OffsetFetchResponse *of_resp(void)
{
    static struct kafka_OffsetFetchResponse m;
    of_parts[0] = (struct kafka_OffsetFetchResponsePartition){
        0, 100, 3, S("meta"), 0};
    of_parts[1] = (struct kafka_OffsetFetchResponsePartition){
        1, -1, -1, slice_null(), 0};
    of_result_topics[0] = (struct kafka_OffsetFetchResponseTopic){
        S("orders"), of_parts, 2};
    of_result_groups[0] = (struct kafka_OffsetFetchResponseGroup){
        S("cg-1"), of_result_topics, 1, 0};
    of_result_groups[1] = (struct kafka_OffsetFetchResponseGroup){
        S("cg-2"), NULL, 0, 16};
    m = (struct kafka_OffsetFetchResponse){
        .ThrottleTimeMs = 4, .Topics = of_result_topics, .TopicsCnt = 1,
        .ErrorCode = 14, .Groups = of_result_groups, .GroupsCnt = 2};
    return &m;
}

static void of_results_build(struct bb *x, bool tagged)
{
    cbb_count(x, 1), cbb_str(x, "orders"), cbb_count(x, 2);
    bb_i32(x, 0), bb_i64(x, 100), bb_i32(x, 3), cbb_str(x, "meta");
    bb_i16(x, 0), tags(x, tagged);
    bb_i32(x, 1), bb_i64(x, -1), bb_i32(x, -1), cbb_str(x, NULL);
    bb_i16(x, 0), tags(x, tagged);
    tags(x, tagged);
}

static void of_resp_build(struct bb *x, int16_t v, bool tagged)
{
    bb_i32(x, 4);
    if (v <= 7) {
        of_results_build(x, tagged), bb_i16(x, 14);
    } else {
        cbb_count(x, 2);
        cbb_str(x, "cg-1"), of_results_build(x, tagged), bb_i16(x, 0);
        tags(x, tagged);
        cbb_str(x, "cg-2"), cbb_count(x, 0), bb_i16(x, 16), tags(x, tagged);
    }
    tags(x, tagged);
}

static void of_resp_check(const void *got_, int16_t v)
{
    const struct kafka_OffsetFetchResponse *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, 4);
    const struct kafka_OffsetFetchResponseTopic *ts = got->Topics;
    int32_t n = got->TopicsCnt;
    if (v <= 7) {
        cr_expect_eq(got->ErrorCode, 14);
        cr_expect_eq(got->GroupsCnt, 0);
    } else {
        cr_expect_eq(got->ErrorCode, 0);
        cr_expect_eq(got->TopicsCnt, 0);
        cr_assert_eq(got->GroupsCnt, 2);
        EXPECT_STR(got->Groups[0].GroupId, S("cg-1"));
        cr_expect_eq(got->Groups[0].ErrorCode, 0);
        EXPECT_STR(got->Groups[1].GroupId, S("cg-2"));
        cr_expect_eq(got->Groups[1].TopicsCnt, 0);
        cr_expect_eq(got->Groups[1].ErrorCode, 16);
        ts = got->Groups[0].Topics;
        n = got->Groups[0].TopicsCnt;
    }
    cr_assert_eq(n, 1);
    cr_assert_eq(ts[0].PartitionsCnt, 2);
    cr_expect_eq(ts[0].Partitions[0].CommittedOffset, 100);
    cr_expect_eq(ts[0].Partitions[0].CommittedLeaderEpoch, 3);
    EXPECT_STR(ts[0].Partitions[0].Metadata, S("meta"));
    EXPECT_STR(ts[0].Partitions[1].Metadata, slice_null());
}

Test(kafka_codec_group_flex, offset_fetch_v6_to_v9)
{
    FLEX("OffsetFetch request", offset_fetch_request, 6,
         KAFKA_OFFSET_FETCH_VERSION_MAX, of_req(), of_req_build,
         of_req_check);
    FLEX("OffsetFetch response", offset_fetch_response, 6,
         KAFKA_OFFSET_FETCH_VERSION_MAX, of_resp(), of_resp_build,
         of_resp_check);
}

/* A group's null Topics is "all" in v8+ but a v8 request's Groups array
 * itself is never null. */
Test(kafka_codec_group_flex, offset_fetch_v8_null_groups_are_malformed)
{
    struct bb x = {.n = 0};
    cbb_count(&x, -1), bb_u8(&x, 0), tags(&x, false);
    struct fixture f;
    fixture_start(&f, x.b, x.n);
    struct kafka_OffsetFetchRequest got;
    cr_expect_eq(kafka_offset_fetch_request_decode(&f.r, 8, &f.a, &got),
                 RC_MALFORMED);
    fixture_done(&f);
}

/* librdkafka 2.0.2's ListGroups v4 request, byte for byte: an empty
 * StatesFilter, its own tagged-field section and the one its request
 * builder adds to every flexible request. Kafka reads the first two and
 * ignores the third; so does Cairn (it used to close the connection). */
Test(kafka_codec_group_flex, librdkafka_list_groups_v4_extra_tags_byte)
{
    static const uint8_t body[] = {0x01, 0x00, 0x00};
    struct fixture f;
    fixture_start(&f, body, sizeof body);
    struct kafka_ListGroupsRequest got;
    cr_expect_eq(kafka_list_groups_request_decode(&f.r, 4, &f.a, &got),
                 RC_OK);
    cr_expect_eq(got.StatesFilterCnt, 0);
    cr_expect_eq(f.r.pos, 2u, "the extra byte is left unread");
    fixture_done(&f);
}
