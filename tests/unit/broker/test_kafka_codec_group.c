/* Tests for broker/kafka_codec_group.c and broker/kafka_codec_offsets.c
 * (FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
 * OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups).
 *
 * One table lists every API with its version range (from the
 * KAFKA_*_VERSION_MIN/MAX macros: kafka_codec_version_range() does not list
 * these APIs until their handlers exist) and, for request and response,
 * a sample message, its expected bytes at each version built by hand, and
 * a check of a decoded message against the sample with the defaults of
 * the fields the version lacks. The table drives, at every version:
 * encode = hand-built bytes (so absent fields are not written), decode
 * gives the fields and defaults, re-encode gives the same bytes; minimal
 * samples of many entries (empty strings, null nullables) that must
 * decode, and must fail at the count, allocating nothing, with one entry
 * more, which pins each array's per-entry minimum exactly; truncation at
 * every length; a trailing byte; versions outside the range. Then exact
 * bytes for JoinGroup v5, SyncGroup v3 and OffsetCommit v7 requests and
 * the OffsetFetch v5 response, written out field by field, and huge
 * counts that must fail without allocating. Frames are decoded from exact
 * heap copies so that `make asan` catches reads past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/byte_builder.h"
#include "tests/unit/broker/codec_expect.h"

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

static const uint8_t meta_012[] = {0, 1, 2};
static const uint8_t meta_98[] = {9, 8};
static const uint8_t assign_01[] = {0, 1};
static const uint8_t assign_0100[] = {0, 1, 0, 0};
static const uint8_t md_12[] = {1, 2};
static const uint8_t as_3[] = {3};

/* A decoder's input and arena; the frame is an exact heap copy. */
struct fixture {
    uint8_t *frame;
    struct reader r;
    struct arena a;
};

static void fixture_start(struct fixture *f, const void *p, size_t n)
{
    f->frame = exact_copy(p, n);
    reader_init(&f->r, f->frame, n);
    arena_init(&f->a, ARENA_BYTES_MAX);
}

static void fixture_done(struct fixture *f)
{
    arena_free(&f->a);
    free(f->frame);
}

static void bb_bytes(struct bb *x, const uint8_t *p, size_t n)
{
    bb_i32(x, (int32_t)n);
    bb_raw(x, p, n);
}

static void expect_slice(struct slice got, struct slice want,
                         const char *what, int16_t v)
{
    cr_expect(slice_eq(got, want),
              "v%d %s: got %s len %zu, want %s len %zu", v, what,
              got.ptr == NULL ? "null" : "non-null", got.len,
              want.ptr == NULL ? "null" : "non-null", want.len);
}

/* A slice field present from version `from`, null before. */
static struct slice since(int16_t v, int16_t from, struct slice s)
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

WRAP(find_coordinator_request, kafka_FindCoordinatorRequest)
WRAP(find_coordinator_response, kafka_FindCoordinatorResponse)
WRAP(join_group_request, kafka_JoinGroupRequest)
WRAP(join_group_response, kafka_JoinGroupResponse)
WRAP(heartbeat_request, kafka_HeartbeatRequest)
WRAP(heartbeat_response, kafka_HeartbeatResponse)
WRAP(leave_group_request, kafka_LeaveGroupRequest)
WRAP(leave_group_response, kafka_LeaveGroupResponse)
WRAP(sync_group_request, kafka_SyncGroupRequest)
WRAP(sync_group_response, kafka_SyncGroupResponse)
WRAP(offset_commit_request, kafka_OffsetCommitRequest)
WRAP(offset_commit_response, kafka_OffsetCommitResponse)
WRAP(offset_fetch_request, kafka_OffsetFetchRequest)
WRAP(offset_fetch_response, kafka_OffsetFetchResponse)
WRAP(describe_groups_request, kafka_DescribeGroupsRequest)
WRAP(describe_groups_response, kafka_DescribeGroupsResponse)
WRAP(list_groups_request, kafka_ListGroupsRequest)
WRAP(list_groups_response, kafka_ListGroupsResponse)
WRAP(delete_groups_request, kafka_DeleteGroupsRequest)
WRAP(delete_groups_response, kafka_DeleteGroupsResponse)

/* --- FindCoordinator ----------------------------------------------------- */

static const void *fc_req_sample(int variant)
{
    static struct kafka_FindCoordinatorRequest m;
    m = variant == 0
            ? (struct kafka_FindCoordinatorRequest){S("cg-orders"), 1}
            : (struct kafka_FindCoordinatorRequest){S(""), 0};
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
        ms[0] = (struct kafka_MemberIdentity){S("m-1"), S("inst-1")};
        ms[1] = (struct kafka_MemberIdentity){S("m-2"), slice_null()};
        m = (struct kafka_LeaveGroupRequest){
            .GroupId = S("cg"), .MemberId = S("m-1"), .Members = ms,
            .MembersCnt = 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ms[i] = (struct kafka_MemberIdentity){S(""), slice_null()};
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
            ? (struct kafka_SyncGroupResponse){1, 0, B(assign_0100)}
            : (struct kafka_SyncGroupResponse){0, 0, S("")};
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

/* --- OffsetCommit -------------------------------------------------------- */

static const void *oc_req_sample(int variant)
{
    static struct kafka_OffsetCommitRequestPartition ps[MANY];
    static struct kafka_OffsetCommitRequestTopic ts[MANY];
    static struct kafka_OffsetCommitRequest m;
    if (variant == 0) {
        ps[0] = (struct kafka_OffsetCommitRequestPartition){
            0, 100, 3, S("meta")};
        ps[1] = (struct kafka_OffsetCommitRequestPartition){
            1, 200, 3, slice_null()};
        ps[2] = (struct kafka_OffsetCommitRequestPartition){
            2, 0x100000000, 5, S("")};
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
            0, 0, 0, slice_null()};
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
    bb_str(x, "cg"), bb_i32(x, 4), bb_str(x, "m-1");
    if (v >= 7) {
        bb_str(x, "inst-1");                /* group instance id */
    }
    if (v <= 4) {
        bb_i64(x, 86400000);                /* retention time */
    }
    bb_i32(x, 2);
    bb_str(x, "orders"), bb_i32(x, 2);
    bb_i32(x, 0), bb_i64(x, 100);
    if (v >= 6) {
        bb_i32(x, 3);                       /* committed leader epoch */
    }
    bb_str(x, "meta");
    bb_i32(x, 1), bb_i64(x, 200);
    if (v >= 6) {
        bb_i32(x, 3);
    }
    bb_str(x, NULL);
    bb_str(x, "t"), bb_i32(x, 1);
    bb_i32(x, 2), bb_i64(x, 0x100000000);
    if (v >= 6) {
        bb_i32(x, 5);
    }
    bb_str(x, "");
}

static void oc_req_check(const void *want_, const void *got_, int16_t v)
{
    const struct kafka_OffsetCommitRequest *want = want_, *got = got_;
    expect_slice(got->GroupId, want->GroupId, "GroupId", v);
    cr_expect_eq(got->GenerationIdOrMemberEpoch,
                 want->GenerationIdOrMemberEpoch);
    expect_slice(got->MemberId, want->MemberId, "MemberId", v);
    expect_slice(got->GroupInstanceId, since(v, 7, want->GroupInstanceId),
                 "GroupInstanceId", v);
    cr_expect_eq(got->RetentionTimeMs, v <= 4 ? want->RetentionTimeMs : -1,
                 "v%d", v);
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
        m = (struct kafka_OffsetFetchRequest){S("cg"), ts, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ts[i] = (struct kafka_OffsetFetchRequestTopic){S(""), ids,
                                                       INNER(variant)};
    }
    m = (struct kafka_OffsetFetchRequest){S(""), ts, OUTER(variant)};
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
        m = (struct kafka_OffsetFetchResponse){4, ts, 2, 14};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        ps[i] = (struct kafka_OffsetFetchResponsePartition){
            0, 0, 0, slice_null(), 0};
        ts[i] = (struct kafka_OffsetFetchResponseTopic){S(""), ps,
                                                       INNER(variant)};
    }
    m = (struct kafka_OffsetFetchResponse){0, ts, OUTER(variant), 0};
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
        gs[0] = (struct kafka_ListedGroup){S("cg"), S("consumer")};
        gs[1] = (struct kafka_ListedGroup){S("connect-x"), S("connect")};
        m = (struct kafka_ListGroupsResponse){9, 0, gs, 2};
        return &m;
    }
    for (int i = 0; i < MANY; i++) {
        gs[i] = (struct kafka_ListedGroup){S(""), S("")};
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
    struct side req;
    struct side resp;
};

#define SIDE(fn, p)                                                       \
    {fn##_dec, fn##_enc, p##_sample, p##_bb, p##_check}
#define CASE(name, KEY, fn, p)                                            \
    {#name, KAFKA_API_##KEY, KAFKA_##KEY##_VERSION_MIN,                   \
     KAFKA_##KEY##_VERSION_MAX, SIDE(fn##_request, p##_req),              \
     SIDE(fn##_response, p##_resp)}

enum { FC, JG, HB, LG, SG, OC, OF, DG, LSG, DLG, N_CASES };

static const struct api_case cases[N_CASES] = {
    [FC] = CASE(FindCoordinator, FIND_COORDINATOR, find_coordinator, fc),
    [JG] = CASE(JoinGroup, JOIN_GROUP, join_group, jg),
    [HB] = CASE(Heartbeat, HEARTBEAT, heartbeat, hb),
    [LG] = CASE(LeaveGroup, LEAVE_GROUP, leave_group, lg),
    [SG] = CASE(SyncGroup, SYNC_GROUP, sync_group, sg),
    [OC] = CASE(OffsetCommit, OFFSET_COMMIT, offset_commit, oc),
    [OF] = CASE(OffsetFetch, OFFSET_FETCH, offset_fetch, of),
    [DG] = CASE(DescribeGroups, DESCRIBE_GROUPS, describe_groups, dg),
    [LSG] = CASE(ListGroups, LIST_GROUPS, list_groups, lsg),
    [DLG] = CASE(DeleteGroups, DELETE_GROUPS, delete_groups, dlg),
};

static const struct side *side_of(const struct api_case *c, int response)
{
    return response ? &c->resp : &c->req;
}

static const char *side_name(int response)
{
    return response ? "response" : "request";
}

/* Decodes the first len bytes of p with s at v; *held_bytes (if not NULL)
 * gets what the arena held afterwards, *pos (if not NULL) where the
 * reader stopped (a failing read consumes nothing, so on failure: where
 * the failing value starts). */
static int decode_at(const struct side *s, int16_t v, const void *p,
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

static int decode_n(const struct side *s, int16_t v, const void *p,
                    size_t len, size_t *held_bytes)
{
    return decode_at(s, v, p, len, held_bytes, NULL);
}

/* Encode the sample (variant 0: the hand-built bytes), decode it into a
 * poisoned message (so a field the decoder forgets shows), check the
 * fields and defaults, re-encode to the same bytes. */
static void check_round_trip(const struct api_case *c, int response,
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

/* --- Table-driven tests -------------------------------------------------- */

Test(kafka_codec_group, round_trips_at_every_version)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        for (int16_t v = cases[i].min; v <= cases[i].max; v++) {
            check_round_trip(&cases[i], 0, v, 0);
            check_round_trip(&cases[i], 1, v, 0);
        }
    }
}

Test(kafka_codec_group, many_minimal_entries_round_trip_at_every_version)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        for (int16_t v = cases[i].min; v <= cases[i].max; v++) {
            for (int variant = 1; variant <= 2; variant++) {
                check_round_trip(&cases[i], 0, v, variant);
                check_round_trip(&cases[i], 1, v, variant);
            }
        }
    }
}

/* Where the minimal sample has an array of MANY entries (the first count
 * of MANY in its bytes: every other integer there is 0 or -1), a count of
 * MANY + 1 must fail at the count itself (the reader stops there), before
 * that array is allocated: this catches a per-entry minimum set too low.
 * Variant 1 (the outer array) must have allocated nothing at all. */
static void check_one_entry_too_many(const struct api_case *c, int response,
                                     int16_t v, int variant)
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

Test(kafka_codec_group, one_entry_more_than_the_bytes_hold_allocates_nothing)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        for (int16_t v = cases[i].min; v <= cases[i].max; v++) {
            for (int variant = 1; variant <= 2; variant++) {
                check_one_entry_too_many(&cases[i], 0, v, variant);
                check_one_entry_too_many(&cases[i], 1, v, variant);
            }
        }
    }
}

Test(kafka_codec_group, truncation_at_every_length_is_short)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct api_case *c = &cases[i];
        for (int16_t v = c->min; v <= c->max; v++) {
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

Test(kafka_codec_group, trailing_byte_is_malformed)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct api_case *c = &cases[i];
        for (int16_t v = c->min; v <= c->max; v++) {
            for (int response = 0; response <= 1; response++) {
                const struct side *s = side_of(c, response);
                struct bb x = {.n = 0};
                s->bb(&x, v);
                bb_u8(&x, 0);
                cr_expect_eq(decode_n(s, v, x.b, x.n, NULL), RC_MALFORMED,
                             "%s %s v%d", c->name, side_name(response), v);
            }
        }
    }
}

Test(kafka_codec_group, versions_outside_the_range_are_invalid)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct api_case *c = &cases[i];
        for (int response = 0; response <= 1; response++) {
            const struct side *s = side_of(c, response);
            struct bb x = {.n = 0};
            s->bb(&x, c->max);
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
Test(kafka_codec_group, range_table_agrees_with_the_macros)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int16_t min = -1, max = -1;
        cr_assert(kafka_codec_version_range(cases[i].key, &min, &max), "%s",
                  cases[i].name);
        cr_expect_eq(min, cases[i].min, "%s", cases[i].name);
        cr_expect_eq(max, cases[i].max, "%s", cases[i].name);
    }
}

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

Test(kafka_codec_group, offset_commit_v7_request_bytes)
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

Test(kafka_codec_group, offset_fetch_v5_response_bytes)
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

Test(kafka_codec_group, offset_fetch_null_topics_from_v2_only)
{
    struct bb x = {.n = 0};
    bb_str(&x, "cg"), bb_i32(&x, -1);               /* null: all topics */
    const struct side *s = &cases[OF].req;
    cr_expect_eq(decode_n(s, 1, x.b, x.n, NULL), RC_MALFORMED);
    for (int16_t v = 2; v <= KAFKA_OFFSET_FETCH_VERSION_MAX; v++) {
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

Test(kafka_codec_group, null_arrays_elsewhere_are_malformed)
{
    struct bb y = {.n = 0};                         /* DescribeGroups */
    bb_i32(&y, -1);
    cr_expect_eq(decode_n(&cases[DG].req, 0, y.b, y.n, NULL), RC_MALFORMED);
    struct bb z = {.n = 0};                         /* OffsetFetch resp */
    bb_i32(&z, 0), bb_i32(&z, -1), bb_i16(&z, 0);
    cr_expect_eq(decode_n(&cases[OF].resp, 5, z.b, z.n, NULL), RC_MALFORMED);
    struct bb u = {.n = 0};                         /* JoinGroup */
    bb_str(&u, "cg"), bb_i32(&u, 1), bb_str(&u, ""), bb_str(&u, "c");
    bb_i32(&u, -1);
    cr_expect_eq(decode_n(&cases[JG].req, 0, u.b, u.n, NULL), RC_MALFORMED);
    struct bb t = {.n = 0};                         /* negative count */
    bb_str(&t, "cg"), bb_i32(&t, 1), bb_str(&t, "t"), bb_i32(&t, -2);
    cr_expect_eq(decode_n(&cases[OF].req, 5, t.b, t.n, NULL), RC_MALFORMED);
    struct bb s = {.n = 0};                         /* negative length */
    bb_i16(&s, -2), bb_i8(&s, 0);
    cr_expect_eq(decode_n(&cases[FC].req, 1, s.b, s.n, NULL), RC_MALFORMED);
    struct bb b = {.n = 0};                         /* null bytes */
    bb_i32(&b, 0), bb_i16(&b, 0), bb_i32(&b, -1);
    cr_expect_eq(decode_n(&cases[SG].resp, 3, b.b, b.n, NULL), RC_MALFORMED);
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
    {"OffsetCommit topics", OC, 0, 7, false, huge_oc_req_topics},
    {"OffsetCommit partitions", OC, 0, 7, true, huge_oc_req_partitions},
    {"OffsetFetch topics", OF, 0, 5, false, huge_of_req_topics},
    {"OffsetFetch indexes", OF, 0, 5, true, huge_of_req_indexes},
    {"OffsetFetch partitions", OF, 1, 5, true, huge_of_resp_partitions},
    {"DescribeGroups groups", DG, 0, 4, false, huge_dg_req},
    {"DescribeGroups members", DG, 1, 4, true, huge_dg_resp_members},
    {"DeleteGroups names", DLG, 0, 1, false, huge_dlg_req},
};

Test(kafka_codec_group, huge_counts_fail_without_allocating)
{
    for (size_t i = 0; i < ARRAY_LEN(huges); i++) {
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
     * hold 2 groups (and 7 trailing bytes). */
    cr_expect_eq(decode_n(&cases[DG].resp, 2, y.b, y.n, NULL), RC_MALFORMED);
}

Test(kafka_codec_group, offset_commit_partitions_beyond_the_cap_too_large)
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
