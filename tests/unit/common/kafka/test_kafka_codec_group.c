/* Tests for common/kafka/kafka_codec_group.c (FindCoordinator, JoinGroup,
 * Heartbeat, LeaveGroup, SyncGroup, DescribeGroups, ListGroups,
 * DeleteGroups); the offset APIs are in test_kafka_codec_offsets.c.
 *
 * The table below drives the shared tests of codec_group_cases.h (round
 * trips, minimal samples of many entries, truncation, a trailing byte,
 * versions outside the range, huge counts). Then exact bytes for the
 * JoinGroup v5 and SyncGroup v3 requests, written out field by field, and
 * the version shapes and counts particular to these APIs. */
#include "tests/unit/common/kafka/codec_group_cases.h"

static const uint8_t meta_012[] = {0, 1, 2};
static const uint8_t meta_98[] = {9, 8};
static const uint8_t assign_01[] = {0, 1};
static const uint8_t assign_0100[] = {0, 1, 0, 0};
static const uint8_t md_12[] = {1, 2};
static const uint8_t as_3[] = {3};

WRAP_GROUP_APIS()

/* --- FindCoordinator ----------------------------------------------------- */

static const void *fc_req_sample(int variant)
{
    static struct kafka_FindCoordinatorRequest m;
    m = variant == 0
            ? (struct kafka_FindCoordinatorRequest){S("cg-orders"), 1, NULL,
                                                    0}
            : (struct kafka_FindCoordinatorRequest){S(""), 0, NULL, 0};
    return &m;
}

static void fc_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg-orders");
    if (v >= 1) {
        bb_i8(x, 1);                        /* key type: transaction */
    }
}

static void fc_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_FindCoordinatorRequest *want = want_, *got = got_;
    expect_slice(got->Key, want->Key, "Key", v);
    cr_expect_eq(got->KeyType, v >= 1 ? want->KeyType : 0, "v%d", v);
}

static const void *fc_resp_sample(int variant)
{
    static struct kafka_FindCoordinatorResponse m;
    if (variant == 0) {
        m = (struct kafka_FindCoordinatorResponse){
            .ThrottleTimeMs = 7, .ErrorCode = 15,
            .ErrorMessage = S("loading"), .NodeId = 2,
            .Host = S("broker-2"), .Port = 9092};
    } else {
        m = (struct kafka_FindCoordinatorResponse){
            .ErrorMessage = slice_null(), .Host = S("")};
    }
    return &m;
}

static void fc_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 7);                       /* throttle */
    }
    bb_i16(x, 15);
    if (v >= 1) {
        bb_str(x, "loading");               /* error message */
    }
    bb_i32(x, 2), bb_str(x, "broker-2"), bb_i32(x, 9092);
}

static void fc_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_FindCoordinatorResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
    expect_slice(got->ErrorMessage, since(v, 1, want->ErrorMessage),
                 "ErrorMessage", v);
    cr_expect_eq(got->NodeId, want->NodeId);
    expect_slice(got->Host, want->Host, "Host", v);
    cr_expect_eq(got->Port, want->Port);
}

/* --- JoinGroup ----------------------------------------------------------- */

static const void *jg_req_sample(int variant)
{
    static struct kafka_JoinGroupRequestProtocol ps[MANY];
    static struct kafka_JoinGroupRequest m;
    if (variant == 0) {
        ps[0] = (struct kafka_JoinGroupRequestProtocol){S("range"),
                                                        B(meta_012)};
        ps[1] = (struct kafka_JoinGroupRequestProtocol){S("roundrobin"),
                                                        S("")};
        m = (struct kafka_JoinGroupRequest){
            .GroupId = S("cg"), .SessionTimeoutMs = 45000,
            .RebalanceTimeoutMs = 300000, .MemberId = S("m-1"),
            .GroupInstanceId = S("inst-1"), .ProtocolType = S("consumer"),
            .Protocols = ps, .ProtocolsCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ps[i] = (struct kafka_JoinGroupRequestProtocol){S(""), S("")};
    }
    m = (struct kafka_JoinGroupRequest){
        .GroupId = S(""), .MemberId = S(""), .ProtocolType = S(""),
        .GroupInstanceId = slice_null(), .Protocols = ps,
        .ProtocolsCnt = MANY};
    return &m;
}

static void jg_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg"), bb_i32(x, 45000);
    if (v >= 1) {
        bb_i32(x, 300000);                  /* rebalance timeout */
    }
    bb_str(x, "m-1");
    if (v >= 5) {
        bb_str(x, "inst-1");                /* group instance id */
    }
    bb_str(x, "consumer");
    bb_i32(x, 2);
    bb_str(x, "range"), bb_bytes(x, meta_012, 3);
    bb_str(x, "roundrobin"), bb_bytes(x, NULL, 0);
}

static void jg_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_JoinGroupRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_expect_eq(got->SessionTimeoutMs, want->SessionTimeoutMs);
    cr_expect_eq(got->RebalanceTimeoutMs,
                 v >= 1 ? want->RebalanceTimeoutMs : -1, "v%d", v);
    expect_slice(got->MemberId, want->MemberId, "MemberId", v);
    expect_slice(got->GroupInstanceId, since(v, 5, want->GroupInstanceId),
                 "GroupInstanceId", v);
    expect_slice(got->ProtocolType, want->ProtocolType, "ProtocolType", v);
    cr_assert_eq(got->ProtocolsCnt, want->ProtocolsCnt);
    for (int32_t i = 0; i < got->ProtocolsCnt; i++) {
        expect_slice(got->Protocols[i].Name, want->Protocols[i].Name,
                     "Name", v);
        expect_slice(got->Protocols[i].Metadata,
                     want->Protocols[i].Metadata, "Metadata", v);
    }
}

static const void *jg_resp_sample(int variant)
{
    static struct kafka_JoinGroupResponseMember ms[MANY];
    static struct kafka_JoinGroupResponse m;
    if (variant == 0) {
        ms[0] = (struct kafka_JoinGroupResponseMember){
            S("m-1"), S("inst-1"), B(meta_98)};
        ms[1] = (struct kafka_JoinGroupResponseMember){
            S("m-2"), slice_null(), S("")};
        m = (struct kafka_JoinGroupResponse){
            .ThrottleTimeMs = 3, .ErrorCode = 0, .GenerationId = 4,
            .ProtocolName = S("range"), .Leader = S("m-1"),
            .MemberId = S("m-2"), .Members = ms, .MembersCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ms[i] = (struct kafka_JoinGroupResponseMember){S(""), slice_null(),
                                                       S("")};
    }
    m = (struct kafka_JoinGroupResponse){
        .ProtocolName = S(""), .Leader = S(""), .MemberId = S(""),
        .Members = ms, .MembersCnt = MANY};
    return &m;
}

static void jg_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 2) {
        bb_i32(x, 3);                       /* throttle */
    }
    bb_i16(x, 0), bb_i32(x, 4);
    bb_str(x, "range"), bb_str(x, "m-1"), bb_str(x, "m-2");
    bb_i32(x, 2);
    bb_str(x, "m-1");
    if (v >= 5) {
        bb_str(x, "inst-1");
    }
    bb_bytes(x, meta_98, 2);
    bb_str(x, "m-2");
    if (v >= 5) {
        bb_str(x, NULL);
    }
    bb_bytes(x, NULL, 0);
}

static void jg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_JoinGroupResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 2 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
    cr_expect_eq(got->GenerationId, want->GenerationId);
    expect_slice(got->ProtocolName, want->ProtocolName, "ProtocolName", v);
    expect_slice(got->Leader, want->Leader, "Leader", v);
    expect_slice(got->MemberId, want->MemberId, "MemberId", v);
    cr_assert_eq(got->MembersCnt, want->MembersCnt);
    for (int32_t i = 0; i < got->MembersCnt; i++) {
        const struct kafka_JoinGroupResponseMember *g = &got->Members[i];
        const struct kafka_JoinGroupResponseMember *w = &want->Members[i];
        expect_slice(g->MemberId, w->MemberId, "MemberId", v);
        expect_slice(g->GroupInstanceId, since(v, 5, w->GroupInstanceId),
                     "GroupInstanceId", v);
        expect_slice(g->Metadata, w->Metadata, "Metadata", v);
    }
}

/* --- Heartbeat ----------------------------------------------------------- */

static const void *hb_req_sample(int variant)
{
    static struct kafka_HeartbeatRequest m;
    m = variant == 0 ? (struct kafka_HeartbeatRequest){S("cg"), 4, S("m-1"),
                                                       S("inst-1")}
                     : (struct kafka_HeartbeatRequest){S(""), 0, S(""),
                                                       slice_null()};
    return &m;
}

static void hb_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg"), bb_i32(x, 4), bb_str(x, "m-1");
    if (v >= 3) {
        bb_str(x, "inst-1");
    }
}

static void hb_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_HeartbeatRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_expect_eq(got->GenerationId, want->GenerationId);
    expect_slice(got->MemberId, want->MemberId, "MemberId", v);
    expect_slice(got->GroupInstanceId, since(v, 3, want->GroupInstanceId),
                 "GroupInstanceId", v);
}

static const void *hb_resp_sample(int variant)
{
    static struct kafka_HeartbeatResponse m;
    m = variant == 0 ? (struct kafka_HeartbeatResponse){2, 27}
                     : (struct kafka_HeartbeatResponse){0, 0};
    return &m;
}

static void hb_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 2);
    }
    bb_i16(x, 27);                          /* REBALANCE_IN_PROGRESS */
}

static void hb_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_HeartbeatResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
}

/* --- LeaveGroup ---------------------------------------------------------- */

static const void *lg_req_sample(int variant)
{
    static struct kafka_MemberIdentity ms[MANY];
    static struct kafka_LeaveGroupRequest m;
    if (variant == 0) {
        ms[0] = (struct kafka_MemberIdentity){S("m-1"), S("inst-1"),
                                              slice_null()};
        ms[1] = (struct kafka_MemberIdentity){S("m-2"), slice_null(),
                                              slice_null()};
        m = (struct kafka_LeaveGroupRequest){
            .GroupId = S("cg"), .MemberId = S("m-1"), .Members = ms,
            .MembersCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ms[i] = (struct kafka_MemberIdentity){S(""), slice_null(),
                                              slice_null()};
    }
    m = (struct kafka_LeaveGroupRequest){
        .GroupId = S(""), .MemberId = S(""), .Members = ms,
        .MembersCnt = MANY};
    return &m;
}

static void lg_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg");
    if (v <= 2) {
        bb_str(x, "m-1");                   /* one member id */
        return;
    }
    bb_i32(x, 2);                           /* members */
    bb_str(x, "m-1"), bb_str(x, "inst-1");
    bb_str(x, "m-2"), bb_str(x, NULL);
}

static void lg_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_LeaveGroupRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    if (v <= 2) {
        expect_slice(got->MemberId, want->MemberId, "MemberId", v);
        cr_expect_eq(got->MembersCnt, 0, "v%d: default empty", v);
        return;
    }
    expect_slice(got->MemberId, S(""), "MemberId (default \"\")", v);
    cr_assert_eq(got->MembersCnt, want->MembersCnt);
    for (int32_t i = 0; i < got->MembersCnt; i++) {
        expect_slice(got->Members[i].MemberId, want->Members[i].MemberId,
                     "MemberId", v);
        expect_slice(got->Members[i].GroupInstanceId,
                     want->Members[i].GroupInstanceId, "GroupInstanceId", v);
    }
}

static const void *lg_resp_sample(int variant)
{
    static struct kafka_MemberResponse ms[MANY];
    static struct kafka_LeaveGroupResponse m;
    if (variant == 0) {
        ms[0] = (struct kafka_MemberResponse){S("m-1"), S("inst-1"), 0};
        ms[1] = (struct kafka_MemberResponse){S("m-2"), slice_null(), 25};
        m = (struct kafka_LeaveGroupResponse){5, 0, ms, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ms[i] = (struct kafka_MemberResponse){S(""), slice_null(), 0};
    }
    m = (struct kafka_LeaveGroupResponse){0, 0, ms, MANY};
    return &m;
}

static void lg_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 5);
    }
    bb_i16(x, 0);
    if (v >= 3) {
        bb_i32(x, 2);
        bb_str(x, "m-1"), bb_str(x, "inst-1"), bb_i16(x, 0);
        bb_str(x, "m-2"), bb_str(x, NULL), bb_i16(x, 25);
    }
}

static void lg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_LeaveGroupResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
    if (v <= 2) {
        cr_expect_eq(got->MembersCnt, 0, "v%d: default empty", v);
        return;
    }
    cr_assert_eq(got->MembersCnt, want->MembersCnt);
    for (int32_t i = 0; i < got->MembersCnt; i++) {
        expect_slice(got->Members[i].MemberId, want->Members[i].MemberId,
                     "MemberId", v);
        expect_slice(got->Members[i].GroupInstanceId,
                     want->Members[i].GroupInstanceId, "GroupInstanceId", v);
        cr_expect_eq(got->Members[i].ErrorCode, want->Members[i].ErrorCode);
    }
}

/* --- SyncGroup ----------------------------------------------------------- */

static const void *sg_req_sample(int variant)
{
    static struct kafka_SyncGroupRequestAssignment as[MANY];
    static struct kafka_SyncGroupRequest m;
    if (variant == 0) {
        as[0] = (struct kafka_SyncGroupRequestAssignment){S("m-1"),
                                                          B(assign_01)};
        as[1] = (struct kafka_SyncGroupRequestAssignment){S("m-2"), S("")};
        m = (struct kafka_SyncGroupRequest){
            .GroupId = S("cg"), .GenerationId = 4, .MemberId = S("m-1"),
            .GroupInstanceId = S("inst-1"), .Assignments = as,
            .AssignmentsCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        as[i] = (struct kafka_SyncGroupRequestAssignment){S(""), S("")};
    }
    m = (struct kafka_SyncGroupRequest){
        .GroupId = S(""), .MemberId = S(""), .GroupInstanceId = slice_null(),
        .Assignments = as, .AssignmentsCnt = MANY};
    return &m;
}

static void sg_req_bb(struct bb *x, int16_t v)
{
    bb_str(x, "cg"), bb_i32(x, 4), bb_str(x, "m-1");
    if (v >= 3) {
        bb_str(x, "inst-1");
    }
    bb_i32(x, 2);
    bb_str(x, "m-1"), bb_bytes(x, assign_01, 2);
    bb_str(x, "m-2"), bb_bytes(x, NULL, 0);
}

static void sg_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_SyncGroupRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_expect_eq(got->GenerationId, want->GenerationId);
    expect_slice(got->MemberId, want->MemberId, "MemberId", v);
    expect_slice(got->GroupInstanceId, since(v, 3, want->GroupInstanceId),
                 "GroupInstanceId", v);
    cr_assert_eq(got->AssignmentsCnt, want->AssignmentsCnt);
    for (int32_t i = 0; i < got->AssignmentsCnt; i++) {
        expect_slice(got->Assignments[i].MemberId,
                     want->Assignments[i].MemberId, "MemberId", v);
        expect_slice(got->Assignments[i].Assignment,
                     want->Assignments[i].Assignment, "Assignment", v);
    }
}

static const void *sg_resp_sample(int variant)
{
    static struct kafka_SyncGroupResponse m;
    m = variant == 0
            ? (struct kafka_SyncGroupResponse){1, 0, slice_null(),
                                               slice_null(), B(assign_0100)}
            : (struct kafka_SyncGroupResponse){0, 0, slice_null(),
                                               slice_null(), S("")};
    return &m;
}

static void sg_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 1);
    }
    bb_i16(x, 0), bb_bytes(x, assign_0100, 4);
}

static void sg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_SyncGroupResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
    expect_slice(got->Assignment, want->Assignment, "Assignment", v);
}

/* --- DescribeGroups ------------------------------------------------------ */

static const void *dg_req_sample(int variant)
{
    static struct slice gs[MANY];
    static struct kafka_DescribeGroupsRequest m;
    if (variant == 0) {
        gs[0] = S("cg");
        gs[1] = S("other");
        m = (struct kafka_DescribeGroupsRequest){gs, 2, true};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        gs[i] = S("");
    }
    m = (struct kafka_DescribeGroupsRequest){gs, MANY, false};
    return &m;
}

static void dg_req_bb(struct bb *x, int16_t v)
{
    bb_i32(x, 2), bb_str(x, "cg"), bb_str(x, "other");
    if (v >= 3) {
        bb_u8(x, 1);                        /* include authorized ops */
    }
}

static void dg_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_DescribeGroupsRequest *want = want_, *got = got_;
    cr_assert_eq(got->GroupsCnt, want->GroupsCnt);
    for (int32_t i = 0; i < got->GroupsCnt; i++) {
        expect_slice(got->Groups[i], want->Groups[i], "Groups[i]", v);
    }
    cr_expect_eq(got->IncludeAuthorizedOperations,
                 v >= 3 ? want->IncludeAuthorizedOperations : false, "v%d",
                 v);
}

static const void *dg_resp_sample(int variant)
{
    static struct kafka_DescribedGroupMember ms[MANY];
    static struct kafka_DescribedGroup gs[MANY];
    static struct kafka_DescribeGroupsResponse m;
    if (variant == 0) {
        ms[0] = (struct kafka_DescribedGroupMember){
            S("m-1"), S("inst-1"), S("rdkafka"), S("/10.0.0.1"), B(md_12),
            B(as_3)};
        ms[1] = (struct kafka_DescribedGroupMember){
            S("m-2"), slice_null(), S("kafkajs"), S("/10.0.0.2"), S(""),
            S("")};
        gs[0] = (struct kafka_DescribedGroup){
            0, S("cg"), S("Stable"), S("consumer"), S("range"), ms, 2, 248};
        gs[1] = (struct kafka_DescribedGroup){
            0, S("other"), S("Dead"), S(""), S(""), NULL, 0, 8};
        m = (struct kafka_DescribeGroupsResponse){8, gs, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ms[i] = (struct kafka_DescribedGroupMember){
            S(""), slice_null(), S(""), S(""), S(""), S("")};
        gs[i] = (struct kafka_DescribedGroup){
            0, S(""), S(""), S(""), S(""), ms, INNER(variant), 0};
    }
    m = (struct kafka_DescribeGroupsResponse){0, gs, OUTER(variant)};
    return &m;
}

static void dg_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 8);                       /* throttle */
    }
    bb_i32(x, 2);
    bb_i16(x, 0), bb_str(x, "cg"), bb_str(x, "Stable");
    bb_str(x, "consumer"), bb_str(x, "range");
    bb_i32(x, 2);
    bb_str(x, "m-1");
    if (v >= 4) {
        bb_str(x, "inst-1");                /* group instance id */
    }
    bb_str(x, "rdkafka"), bb_str(x, "/10.0.0.1");
    bb_bytes(x, md_12, 2), bb_bytes(x, as_3, 1);
    bb_str(x, "m-2");
    if (v >= 4) {
        bb_str(x, NULL);
    }
    bb_str(x, "kafkajs"), bb_str(x, "/10.0.0.2");
    bb_bytes(x, NULL, 0), bb_bytes(x, NULL, 0);
    if (v >= 3) {
        bb_i32(x, 248);                     /* authorized operations */
    }
    bb_i16(x, 0), bb_str(x, "other"), bb_str(x, "Dead");
    bb_str(x, ""), bb_str(x, ""), bb_i32(x, 0);
    if (v >= 3) {
        bb_i32(x, 8);
    }
}

static void dg_member_check(const struct kafka_DescribedGroupMember *g,
                            const struct kafka_DescribedGroupMember *w,
                            int16_t v)
{
    expect_slice(g->MemberId, w->MemberId, "MemberId", v);
    expect_slice(g->GroupInstanceId, since(v, 4, w->GroupInstanceId),
                 "GroupInstanceId", v);
    expect_slice(g->ClientId, w->ClientId, "ClientId", v);
    expect_slice(g->ClientHost, w->ClientHost, "ClientHost", v);
    expect_slice(g->MemberMetadata, w->MemberMetadata, "MemberMetadata", v);
    expect_slice(g->MemberAssignment, w->MemberAssignment,
                 "MemberAssignment", v);
}

static void dg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_DescribeGroupsResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_assert_eq(got->GroupsCnt, want->GroupsCnt);
    for (int32_t i = 0; i < got->GroupsCnt; i++) {
        const struct kafka_DescribedGroup *g = &got->Groups[i];
        const struct kafka_DescribedGroup *w = &want->Groups[i];
        cr_expect_eq(g->ErrorCode, w->ErrorCode);
        expect_slice(g->GroupId, w->GroupId, "GroupId", v);
        expect_slice(g->GroupState, w->GroupState, "GroupState", v);
        expect_slice(g->ProtocolType, w->ProtocolType, "ProtocolType", v);
        expect_slice(g->ProtocolData, w->ProtocolData, "ProtocolData", v);
        cr_assert_eq(g->MembersCnt, w->MembersCnt);
        for (int32_t j = 0; j < g->MembersCnt; j++) {
            dg_member_check(&g->Members[j], &w->Members[j], v);
        }
        cr_expect_eq(g->AuthorizedOperations,
                     v >= 3 ? w->AuthorizedOperations : INT32_MIN, "v%d",
                     v);
    }
}

/* --- ListGroups ---------------------------------------------------------- */

static const void *lsg_req_sample(int variant)
{
    (void)variant;
    static struct kafka_ListGroupsRequest m;
    m = (struct kafka_ListGroupsRequest){NULL, 0, NULL, 0};
    return &m;
}

static void lsg_req_bb(struct bb *x, int16_t v)
{
    (void)x, (void)v;                       /* an empty body */
}

static void lsg_req_check(const void *want_, const void *got_, int16_t v)
{
    (void)want_;
    const struct kafka_ListGroupsRequest *got = got_;
    cr_expect_eq(got->StatesFilterCnt, 0, "v%d", v);
    cr_expect_eq(got->TypesFilterCnt, 0, "v%d", v);
}

static const void *lsg_resp_sample(int variant)
{
    static struct kafka_ListedGroup gs[MANY];
    static struct kafka_ListGroupsResponse m;
    if (variant == 0) {
        gs[0] = (struct kafka_ListedGroup){S("cg"), S("consumer"), S(""),
                                           S("")};
        gs[1] = (struct kafka_ListedGroup){S("connect-x"), S("connect"),
                                           S(""), S("")};
        m = (struct kafka_ListGroupsResponse){9, 0, gs, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        gs[i] = (struct kafka_ListedGroup){S(""), S(""), S(""), S("")};
    }
    m = (struct kafka_ListGroupsResponse){0, 0, gs, MANY};
    return &m;
}

static void lsg_resp_bb(struct bb *x, int16_t v)
{
    if (v >= 1) {
        bb_i32(x, 9);
    }
    bb_i16(x, 0), bb_i32(x, 2);
    bb_str(x, "cg"), bb_str(x, "consumer");
    bb_str(x, "connect-x"), bb_str(x, "connect");
}

static void lsg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_ListGroupsResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, v >= 1 ? want->ThrottleTimeMs : 0,
                 "v%d", v);
    cr_expect_eq(got->ErrorCode, want->ErrorCode);
    cr_assert_eq(got->GroupsCnt, want->GroupsCnt);
    for (int32_t i = 0; i < got->GroupsCnt; i++) {
        expect_slice(got->Groups[i].GroupId, want->Groups[i].GroupId,
                     "GroupId", v);
        expect_slice(got->Groups[i].ProtocolType,
                     want->Groups[i].ProtocolType, "ProtocolType", v);
    }
}

/* --- DeleteGroups -------------------------------------------------------- */

static const void *dlg_req_sample(int variant)
{
    static struct slice gs[MANY];
    static struct kafka_DeleteGroupsRequest m;
    if (variant == 0) {
        gs[0] = S("cg");
        gs[1] = S("old");
        m = (struct kafka_DeleteGroupsRequest){gs, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        gs[i] = S("");
    }
    m = (struct kafka_DeleteGroupsRequest){gs, MANY};
    return &m;
}

static void dlg_req_bb(struct bb *x, int16_t v)
{
    (void)v;                                /* v0 and v1 are the same */
    bb_i32(x, 2), bb_str(x, "cg"), bb_str(x, "old");
}

static void dlg_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_DeleteGroupsRequest *want = want_, *got = got_;
    cr_assert_eq(got->GroupsNamesCnt, want->GroupsNamesCnt);
    for (int32_t i = 0; i < got->GroupsNamesCnt; i++) {
        expect_slice(got->GroupsNames[i], want->GroupsNames[i],
                     "GroupsNames[i]", v);
    }
}

static const void *dlg_resp_sample(int variant)
{
    static struct kafka_DeletableGroupResult rs[MANY];
    static struct kafka_DeleteGroupsResponse m;
    if (variant == 0) {
        rs[0] = (struct kafka_DeletableGroupResult){S("cg"), 0};
        rs[1] = (struct kafka_DeletableGroupResult){S("old"), 69};
        m = (struct kafka_DeleteGroupsResponse){10, rs, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        rs[i] = (struct kafka_DeletableGroupResult){S(""), 0};
    }
    m = (struct kafka_DeleteGroupsResponse){0, rs, MANY};
    return &m;
}

static void dlg_resp_bb(struct bb *x, int16_t v)
{
    (void)v;
    bb_i32(x, 10);                          /* throttle, in v0 too */
    bb_i32(x, 2);
    bb_str(x, "cg"), bb_i16(x, 0);
    bb_str(x, "old"), bb_i16(x, 69);        /* GROUP_ID_NOT_FOUND */
}

static void dlg_resp_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_DeleteGroupsResponse *want = want_, *got = got_;
    cr_expect_eq(got->ThrottleTimeMs, want->ThrottleTimeMs, "v%d", v);
    cr_assert_eq(got->ResultsCnt, want->ResultsCnt);
    for (int32_t i = 0; i < got->ResultsCnt; i++) {
        expect_slice(got->Results[i].GroupId, want->Results[i].GroupId,
                     "GroupId", v);
        cr_expect_eq(got->Results[i].ErrorCode, want->Results[i].ErrorCode);
    }
}

/* --- The table ----------------------------------------------------------- */

enum { FC, JG, HB, LG, SG, DG, LSG, DLG, N_CASES };

static const struct api_case cases[N_CASES] = {
    [FC] = CASE(FindCoordinator, FIND_COORDINATOR, find_coordinator, fc, 2),
    [JG] = CASE(JoinGroup, JOIN_GROUP, join_group, jg, 5),
    [HB] = CASE(Heartbeat, HEARTBEAT, heartbeat, hb, 3),
    [LG] = CASE(LeaveGroup, LEAVE_GROUP, leave_group, lg, 3),
    [SG] = CASE(SyncGroup, SYNC_GROUP, sync_group, sg, 3),
    [DG] = CASE(DescribeGroups, DESCRIBE_GROUPS, describe_groups, dg, 4),
    [LSG] = CASE(ListGroups, LIST_GROUPS, list_groups, lsg, 2),
    [DLG] = CASE(DeleteGroups, DELETE_GROUPS, delete_groups, dlg, 1),
};

/* --- Table-driven tests -------------------------------------------------- */

CODEC_TABLE_TESTS(kafka_codec_group, cases)

/* --- Exact bytes, written out -------------------------------------------- */

Test(kafka_codec_group, join_group_v5_request_bytes)
{
    const struct kafka_JoinGroupRequest *req = jg_req_sample(0);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_join_group_request_encode(&w, 5, req), RC_OK);
    struct bb x = {.n = 0};
    bb_i16(&x, 2), bb_raw(&x, (const uint8_t *)"cg", 2);
    bb_i32(&x, 45000);                              /* session timeout */
    bb_i32(&x, 300000);                             /* rebalance timeout */
    bb_i16(&x, 3), bb_raw(&x, (const uint8_t *)"m-1", 3);
    bb_i16(&x, 6), bb_raw(&x, (const uint8_t *)"inst-1", 6);
    bb_i16(&x, 8), bb_raw(&x, (const uint8_t *)"consumer", 8);
    bb_i32(&x, 2);                                  /* protocols */
    bb_i16(&x, 5), bb_raw(&x, (const uint8_t *)"range", 5);
    bb_i32(&x, 3), bb_u8(&x, 0), bb_u8(&x, 1), bb_u8(&x, 2);
    bb_i16(&x, 10), bb_raw(&x, (const uint8_t *)"roundrobin", 10);
    bb_i32(&x, 0);                                  /* empty metadata */
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 4 + 5 + 8 + 10 + 4 + 7 + 7 + 12 + 4);
    writer_free(&w);
}

Test(kafka_codec_group, sync_group_v3_request_bytes)
{
    const struct kafka_SyncGroupRequest *req = sg_req_sample(0);
    struct writer w;
    writer_init(&w, MAX_16M);
    cr_assert_eq(kafka_sync_group_request_encode(&w, 3, req), RC_OK);
    struct bb x = {.n = 0};
    bb_i16(&x, 2), bb_raw(&x, (const uint8_t *)"cg", 2);
    bb_i32(&x, 4);                                  /* generation */
    bb_i16(&x, 3), bb_raw(&x, (const uint8_t *)"m-1", 3);
    bb_i16(&x, 6), bb_raw(&x, (const uint8_t *)"inst-1", 6);
    bb_i32(&x, 2);                                  /* assignments */
    bb_i16(&x, 3), bb_raw(&x, (const uint8_t *)"m-1", 3);
    bb_i32(&x, 2), bb_u8(&x, 0), bb_u8(&x, 1);
    bb_i16(&x, 3), bb_raw(&x, (const uint8_t *)"m-2", 3);
    bb_i32(&x, 0);
    expect_bytes(&w, &x);
    cr_expect_eq(x.n, 4 + 4 + 5 + 8 + 4 + 5 + 6 + 5 + 4);
    writer_free(&w);
}

/* --- Version shapes ------------------------------------------------------ */

Test(kafka_codec_group, leave_group_v0_to_v2_name_one_member_v3_a_batch)
{
    /* The same struct: v0..2 write MemberId and ignore Members, v3 the
     * reverse. */
    const struct kafka_LeaveGroupRequest *req = lg_req_sample(0);
    for (int16_t v = 0; v <= 3; v++) {
        struct writer w;
        writer_init(&w, MAX_16M);
        cr_assert_eq(kafka_leave_group_request_encode(&w, v, req), RC_OK);
        cr_expect_eq(w.len, v <= 2 ? 4u + 5u : 4u + 4u + 5u + 8u + 5u + 2u,
                     "v%d", v);
        writer_free(&w);
    }
}

Test(kafka_codec_group, null_arrays_elsewhere_are_malformed)
{
    struct bb y = {.n = 0};                         /* DescribeGroups */
    bb_i32(&y, -1);
    cr_expect_eq(decode_n(&cases[DG].req, 0, y.b, y.n, NULL), RC_MALFORMED);
    struct bb u = {.n = 0};                         /* JoinGroup */
    bb_str(&u, "cg"), bb_i32(&u, 1), bb_str(&u, ""), bb_str(&u, "c");
    bb_i32(&u, -1);
    cr_expect_eq(decode_n(&cases[JG].req, 0, u.b, u.n, NULL), RC_MALFORMED);
    struct bb s = {.n = 0};                         /* negative length */
    bb_i16(&s, -2), bb_i8(&s, 0);
    cr_expect_eq(decode_n(&cases[FC].req, 1, s.b, s.n, NULL), RC_MALFORMED);
    struct bb b = {.n = 0};                         /* null bytes */
    bb_i32(&b, 0), bb_i16(&b, 0), bb_i32(&b, -1);
    cr_expect_eq(decode_n(&cases[SG].resp, 3, b.b, b.n, NULL), RC_MALFORMED);
}

/* --- Counts beyond the input --------------------------------------------- */

static void huge_jg_req(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, 45000), bb_i32(x, 300000), bb_str(x, "m");
    bb_str(x, NULL), bb_str(x, "consumer");
    bb_i32(x, INT32_MAX);                           /* protocols */
    bb_str(x, "range"), bb_i32(x, 0);
}

static void huge_jg_resp(struct bb *x)
{
    bb_i32(x, 0), bb_i16(x, 0), bb_i32(x, 1);
    bb_str(x, "range"), bb_str(x, "m"), bb_str(x, "m");
    bb_i32(x, INT32_MAX);                           /* members */
    bb_str(x, "m"), bb_str(x, NULL), bb_i32(x, 0);
}

static void huge_lg_req(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, INT32_MAX), bb_str(x, "m"), bb_str(x, NULL);
}

static void huge_sg_req(struct bb *x)
{
    bb_str(x, "cg"), bb_i32(x, 1), bb_str(x, "m"), bb_str(x, NULL);
    bb_i32(x, INT32_MAX), bb_str(x, "m"), bb_i32(x, 0);
}

static void huge_dg_req(struct bb *x)
{
    bb_i32(x, INT32_MAX), bb_str(x, "cg"), bb_u8(x, 0);
}

static void huge_dg_resp_members(struct bb *x)
{
    bb_i32(x, 0), bb_i32(x, 1);
    bb_i16(x, 0), bb_str(x, "cg"), bb_str(x, "Stable");
    bb_str(x, "consumer"), bb_str(x, "range");
    bb_i32(x, INT32_MAX);                           /* members */
    bb_str(x, "m"), bb_str(x, NULL), bb_str(x, "c"), bb_str(x, "h");
    bb_i32(x, 0), bb_i32(x, 0), bb_i32(x, 0);
}

static void huge_dlg_req(struct bb *x)
{
    bb_i32(x, INT32_MAX), bb_str(x, "cg");
}

static const struct huge_case huges[] = {
    {"JoinGroup protocols", JG, 0, 5, false, huge_jg_req},
    {"JoinGroup members", JG, 1, 5, false, huge_jg_resp},
    {"LeaveGroup members", LG, 0, 3, false, huge_lg_req},
    {"SyncGroup assignments", SG, 0, 3, false, huge_sg_req},
    {"DescribeGroups groups", DG, 0, 4, false, huge_dg_req},
    {"DescribeGroups members", DG, 1, 4, true, huge_dg_resp_members},
    {"DeleteGroups names", DLG, 0, 1, false, huge_dlg_req},
};

Test(kafka_codec_group, huge_counts_fail_without_allocating)
{
    check_huges(cases, huges, ARRAY_LEN(huges));
}

Test(kafka_codec_group, count_one_past_what_the_bytes_hold_is_short)
{
    /* DescribeGroups v3+ groups take 18 bytes at least: a minimal group
     * decodes, and a count of 2 with the bytes of 1 (plus 17 spare) is
     * refused before allocating. */
    struct bb x = {.n = 0};
    bb_i32(&x, 0), bb_i32(&x, 1);
    bb_i16(&x, 0), bb_str(&x, ""), bb_str(&x, ""), bb_str(&x, "");
    bb_str(&x, ""), bb_i32(&x, 0), bb_i32(&x, INT32_MIN);
    cr_expect_eq(decode_n(&cases[DG].resp, 3, x.b, x.n, NULL), RC_OK);
    struct bb y = {.n = 0};
    bb_i32(&y, 0), bb_i32(&y, 2);
    bb_i16(&y, 0), bb_str(&y, ""), bb_str(&y, ""), bb_str(&y, "");
    bb_str(&y, ""), bb_i32(&y, 0), bb_i32(&y, INT32_MIN);
    for (int i = 0; i < 17; i++) {
        bb_u8(&y, 0);
    }
    size_t held = SIZE_MAX;
    cr_expect_eq(decode_n(&cases[DG].resp, 3, y.b, y.n, &held), RC_SHORT);
    cr_expect_eq(held, 0);
    /* At v0..2 a group takes 14 bytes: the same 35 bytes after the count
     * hold 2 groups (and 7 trailing bytes, left unread). */
    size_t pos = 0;
    cr_expect_eq(decode_at(&cases[DG].resp, 2, y.b, y.n, NULL, &pos), RC_OK);
    cr_expect_eq(pos, y.n - 7);
}
