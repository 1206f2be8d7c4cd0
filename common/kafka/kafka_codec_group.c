/* Kafka codec (common/kafka/kafka_codec.h): the consumer-group membership and
 * group admin APIs, FindCoordinator v0..2, JoinGroup v0..5, Heartbeat
 * v0..3, LeaveGroup v0..3, SyncGroup v0..3, DescribeGroups v0..4,
 * ListGroups v0..2 and DeleteGroups v0..1 (OffsetCommit and OffsetFetch
 * are in kafka_codec_offsets.c). Field lists follow
 * shared/reference/kafka-protocol.md sections 4.6 to 4.10, 4.13 and 4.14,
 * checked against apache/kafka (3.8.0) <Name>Request.json and
 * <Name>Response.json for each API:
 * - FindCoordinator: v1 adds KeyType, and ThrottleTimeMs and ErrorMessage
 *   to the response.
 * - JoinGroup: v1 adds RebalanceTimeoutMs, v2 ThrottleTimeMs, v5
 *   GroupInstanceId to the request and to the response members.
 * - Heartbeat, SyncGroup: v1 adds ThrottleTimeMs, v3 GroupInstanceId.
 * - LeaveGroup: v1 adds ThrottleTimeMs; v3 replaces MemberId by a Members
 *   batch and adds Members to the response.
 * - DescribeGroups: v1 adds ThrottleTimeMs, v3 IncludeAuthorizedOperations
 *   and AuthorizedOperations, v4 the members' GroupInstanceId.
 * - ListGroups: v1 adds ThrottleTimeMs; the request body is empty.
 * - DeleteGroups: v0 and v1 are the same.
 * Later versions are flexible and not handled. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool version_in(int16_t version, int16_t min, int16_t max)
{
    return version >= min && version <= max;
}

/* --- FindCoordinator ----------------------------------------------------- */

static bool find_coordinator_version_ok(int16_t version)
{
    return version_in(version, KAFKA_FIND_COORDINATOR_VERSION_MIN,
                      KAFKA_FIND_COORDINATOR_VERSION_MAX);
}

int kafka_find_coordinator_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorRequest *out)
{
    (void)a;
    if (!find_coordinator_version_ok(version)) {
        return RC_INVALID;
    }
    out->Key = reader_string(r);
    out->KeyType = version >= 1 ? reader_i8(r) : 0;
    return kafka_codec__finish(r);
}

int kafka_find_coordinator_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorRequest *req)
{
    kafka_codec__check_version(version, KAFKA_FIND_COORDINATOR_VERSION_MIN,
                               KAFKA_FIND_COORDINATOR_VERSION_MAX);
    writer_string_slice(w, req->Key);
    if (version >= 1) {
        writer_i8(w, req->KeyType);
    }
    return w->rc;
}

int kafka_find_coordinator_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_FIND_COORDINATOR_VERSION_MIN,
                               KAFKA_FIND_COORDINATOR_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    if (version >= 1) {
        writer_nullable_string_slice(w, resp->ErrorMessage);
    }
    writer_i32(w, resp->NodeId);
    writer_string_slice(w, resp->Host);
    writer_i32(w, resp->Port);
    return w->rc;
}

int kafka_find_coordinator_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorResponse *out)
{
    (void)a;
    if (!find_coordinator_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->ErrorMessage =
        version >= 1 ? reader_nullable_string(r) : slice_null();
    out->NodeId = reader_i32(r);
    out->Host = reader_string(r);
    out->Port = reader_i32(r);
    return kafka_codec__finish(r);
}

/* --- JoinGroup ----------------------------------------------------------- */

static bool join_group_version_ok(int16_t version)
{
    return version_in(version, KAFKA_JOIN_GROUP_VERSION_MIN,
                      KAFKA_JOIN_GROUP_VERSION_MAX);
}

int kafka_join_group_request_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_JoinGroupRequest *out)
{
    if (!join_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->GroupId = reader_string(r);
    out->SessionTimeoutMs = reader_i32(r);
    out->RebalanceTimeoutMs = version >= 1 ? reader_i32(r) : -1;
    out->MemberId = reader_string(r);
    out->GroupInstanceId =
        version >= 5 ? reader_nullable_string(r) : slice_null();
    out->ProtocolType = reader_string(r);
    /* name, metadata: 6 bytes at least. */
    struct kafka_JoinGroupRequestProtocol *ps = kafka_codec__array(
        r, a, &out->ProtocolsCnt, sizeof(*ps), 6,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->ProtocolsCnt; i++) {
        ps[i].Name = reader_string(r);
        ps[i].Metadata = reader_bytes(r);
    }
    out->Protocols = ps;
    return kafka_codec__finish(r);
}

int kafka_join_group_request_encode(struct writer *w, int16_t version,
                                    const struct kafka_JoinGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_JOIN_GROUP_VERSION_MIN,
                               KAFKA_JOIN_GROUP_VERSION_MAX);
    writer_string_slice(w, req->GroupId);
    writer_i32(w, req->SessionTimeoutMs);
    if (version >= 1) {
        writer_i32(w, req->RebalanceTimeoutMs);
    }
    writer_string_slice(w, req->MemberId);
    if (version >= 5) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    writer_string_slice(w, req->ProtocolType);
    kafka_codec__write_count(w, req->ProtocolsCnt, req->Protocols, false);
    for (int32_t i = 0; i < req->ProtocolsCnt; i++) {
        writer_string_slice(w, req->Protocols[i].Name);
        writer_bytes_slice(w, req->Protocols[i].Metadata);
    }
    return w->rc;
}

int kafka_join_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_JoinGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_JOIN_GROUP_VERSION_MIN,
                               KAFKA_JOIN_GROUP_VERSION_MAX);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    writer_i32(w, resp->GenerationId);
    writer_string_slice(w, resp->ProtocolName);
    writer_string_slice(w, resp->Leader);
    writer_string_slice(w, resp->MemberId);
    kafka_codec__write_count(w, resp->MembersCnt, resp->Members, false);
    for (int32_t i = 0; i < resp->MembersCnt; i++) {
        const struct kafka_JoinGroupResponseMember *m = &resp->Members[i];
        writer_string_slice(w, m->MemberId);
        if (version >= 5) {
            writer_nullable_string_slice(w, m->GroupInstanceId);
        }
        writer_bytes_slice(w, m->Metadata);
    }
    return w->rc;
}

int kafka_join_group_response_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_JoinGroupResponse *out)
{
    if (!join_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->GenerationId = reader_i32(r);
    out->ProtocolName = reader_string(r);
    out->Leader = reader_string(r);
    out->MemberId = reader_string(r);
    /* member id, (instance id,) metadata: 6 bytes, 8 from v5. */
    size_t member_bytes = version >= 5 ? 8 : 6;
    struct kafka_JoinGroupResponseMember *ms = kafka_codec__array(
        r, a, &out->MembersCnt, sizeof(*ms), member_bytes,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->MembersCnt; i++) {
        ms[i].MemberId = reader_string(r);
        ms[i].GroupInstanceId =
            version >= 5 ? reader_nullable_string(r) : slice_null();
        ms[i].Metadata = reader_bytes(r);
    }
    out->Members = ms;
    return kafka_codec__finish(r);
}

/* --- Heartbeat ----------------------------------------------------------- */

static bool heartbeat_version_ok(int16_t version)
{
    return version_in(version, KAFKA_HEARTBEAT_VERSION_MIN,
                      KAFKA_HEARTBEAT_VERSION_MAX);
}

int kafka_heartbeat_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_HeartbeatRequest *out)
{
    (void)a;
    if (!heartbeat_version_ok(version)) {
        return RC_INVALID;
    }
    out->GroupId = reader_string(r);
    out->GenerationId = reader_i32(r);
    out->MemberId = reader_string(r);
    out->GroupInstanceId =
        version >= 3 ? reader_nullable_string(r) : slice_null();
    return kafka_codec__finish(r);
}

int kafka_heartbeat_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_HeartbeatRequest *req)
{
    kafka_codec__check_version(version, KAFKA_HEARTBEAT_VERSION_MIN,
                               KAFKA_HEARTBEAT_VERSION_MAX);
    writer_string_slice(w, req->GroupId);
    writer_i32(w, req->GenerationId);
    writer_string_slice(w, req->MemberId);
    if (version >= 3) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    return w->rc;
}

int kafka_heartbeat_response_encode(struct writer *w, int16_t version,
                                    const struct kafka_HeartbeatResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_HEARTBEAT_VERSION_MIN,
                               KAFKA_HEARTBEAT_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    return w->rc;
}

int kafka_heartbeat_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_HeartbeatResponse *out)
{
    (void)a;
    if (!heartbeat_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    return kafka_codec__finish(r);
}

/* --- LeaveGroup ---------------------------------------------------------- */

static bool leave_group_version_ok(int16_t version)
{
    return version_in(version, KAFKA_LEAVE_GROUP_VERSION_MIN,
                      KAFKA_LEAVE_GROUP_VERSION_MAX);
}

int kafka_leave_group_request_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_LeaveGroupRequest *out)
{
    if (!leave_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->GroupId = reader_string(r);
    out->MemberId = kafka_codec__empty_string();
    out->Members = NULL;
    out->MembersCnt = 0;
    if (version <= 2) {
        out->MemberId = reader_string(r);
        return kafka_codec__finish(r);
    }
    /* member id, instance id: 4 bytes at least. */
    struct kafka_MemberIdentity *ms = kafka_codec__array(
        r, a, &out->MembersCnt, sizeof(*ms), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->MembersCnt; i++) {
        ms[i].MemberId = reader_string(r);
        ms[i].GroupInstanceId = reader_nullable_string(r);
    }
    out->Members = ms;
    return kafka_codec__finish(r);
}

int kafka_leave_group_request_encode(struct writer *w, int16_t version,
                                     const struct kafka_LeaveGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_LEAVE_GROUP_VERSION_MIN,
                               KAFKA_LEAVE_GROUP_VERSION_MAX);
    writer_string_slice(w, req->GroupId);
    if (version <= 2) {
        writer_string_slice(w, req->MemberId);
        return w->rc;
    }
    kafka_codec__write_count(w, req->MembersCnt, req->Members, false);
    for (int32_t i = 0; i < req->MembersCnt; i++) {
        writer_string_slice(w, req->Members[i].MemberId);
        writer_nullable_string_slice(w, req->Members[i].GroupInstanceId);
    }
    return w->rc;
}

int kafka_leave_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_LeaveGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_LEAVE_GROUP_VERSION_MIN,
                               KAFKA_LEAVE_GROUP_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    if (version >= 3) {
        kafka_codec__write_count(w, resp->MembersCnt, resp->Members, false);
        for (int32_t i = 0; i < resp->MembersCnt; i++) {
            const struct kafka_MemberResponse *m = &resp->Members[i];
            writer_string_slice(w, m->MemberId);
            writer_nullable_string_slice(w, m->GroupInstanceId);
            writer_i16(w, m->ErrorCode);
        }
    }
    return w->rc;
}

int kafka_leave_group_response_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_LeaveGroupResponse *out)
{
    if (!leave_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->Members = NULL;
    out->MembersCnt = 0;
    if (version >= 3) {
        /* member id, instance id, error code: 6 bytes at least. */
        struct kafka_MemberResponse *ms = kafka_codec__array(
            r, a, &out->MembersCnt, sizeof(*ms), 6,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < out->MembersCnt; i++) {
            ms[i].MemberId = reader_string(r);
            ms[i].GroupInstanceId = reader_nullable_string(r);
            ms[i].ErrorCode = reader_i16(r);
        }
        out->Members = ms;
    }
    return kafka_codec__finish(r);
}

/* --- SyncGroup ----------------------------------------------------------- */

static bool sync_group_version_ok(int16_t version)
{
    return version_in(version, KAFKA_SYNC_GROUP_VERSION_MIN,
                      KAFKA_SYNC_GROUP_VERSION_MAX);
}

int kafka_sync_group_request_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_SyncGroupRequest *out)
{
    if (!sync_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->GroupId = reader_string(r);
    out->GenerationId = reader_i32(r);
    out->MemberId = reader_string(r);
    out->GroupInstanceId =
        version >= 3 ? reader_nullable_string(r) : slice_null();
    /* member id, assignment: 6 bytes at least. */
    struct kafka_SyncGroupRequestAssignment *as = kafka_codec__array(
        r, a, &out->AssignmentsCnt, sizeof(*as), 6,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->AssignmentsCnt; i++) {
        as[i].MemberId = reader_string(r);
        as[i].Assignment = reader_bytes(r);
    }
    out->Assignments = as;
    return kafka_codec__finish(r);
}

int kafka_sync_group_request_encode(struct writer *w, int16_t version,
                                    const struct kafka_SyncGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_SYNC_GROUP_VERSION_MIN,
                               KAFKA_SYNC_GROUP_VERSION_MAX);
    writer_string_slice(w, req->GroupId);
    writer_i32(w, req->GenerationId);
    writer_string_slice(w, req->MemberId);
    if (version >= 3) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    kafka_codec__write_count(w, req->AssignmentsCnt, req->Assignments,
                             false);
    for (int32_t i = 0; i < req->AssignmentsCnt; i++) {
        writer_string_slice(w, req->Assignments[i].MemberId);
        writer_bytes_slice(w, req->Assignments[i].Assignment);
    }
    return w->rc;
}

int kafka_sync_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_SyncGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_SYNC_GROUP_VERSION_MIN,
                               KAFKA_SYNC_GROUP_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    writer_bytes_slice(w, resp->Assignment);
    return w->rc;
}

int kafka_sync_group_response_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_SyncGroupResponse *out)
{
    (void)a;
    if (!sync_group_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->Assignment = reader_bytes(r);
    return kafka_codec__finish(r);
}

/* --- DescribeGroups: request --------------------------------------------- */

static bool describe_groups_version_ok(int16_t version)
{
    return version_in(version, KAFKA_DESCRIBE_GROUPS_VERSION_MIN,
                      KAFKA_DESCRIBE_GROUPS_VERSION_MAX);
}

int kafka_describe_groups_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeGroupsRequest *out)
{
    if (!describe_groups_version_ok(version)) {
        return RC_INVALID;
    }
    out->Groups = kafka_codec__read_strings(
        r, a, &out->GroupsCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    out->IncludeAuthorizedOperations = version >= 3 ? reader_bool(r) : false;
    return kafka_codec__finish(r);
}

int kafka_describe_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_GROUPS_VERSION_MIN,
                               KAFKA_DESCRIBE_GROUPS_VERSION_MAX);
    kafka_codec__write_strings(w, req->Groups, req->GroupsCnt, false);
    if (version >= 3) {
        writer_bool(w, req->IncludeAuthorizedOperations);
    }
    return w->rc;
}

/* --- DescribeGroups: response -------------------------------------------- */

static void described_group_encode(struct writer *w, int16_t version,
                                   const struct kafka_DescribedGroup *g)
{
    writer_i16(w, g->ErrorCode);
    writer_string_slice(w, g->GroupId);
    writer_string_slice(w, g->GroupState);
    writer_string_slice(w, g->ProtocolType);
    writer_string_slice(w, g->ProtocolData);
    kafka_codec__write_count(w, g->MembersCnt, g->Members, false);
    for (int32_t i = 0; i < g->MembersCnt; i++) {
        const struct kafka_DescribedGroupMember *m = &g->Members[i];
        writer_string_slice(w, m->MemberId);
        if (version >= 4) {
            writer_nullable_string_slice(w, m->GroupInstanceId);
        }
        writer_string_slice(w, m->ClientId);
        writer_string_slice(w, m->ClientHost);
        writer_bytes_slice(w, m->MemberMetadata);
        writer_bytes_slice(w, m->MemberAssignment);
    }
    if (version >= 3) {
        writer_i32(w, g->AuthorizedOperations);
    }
}

int kafka_describe_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_GROUPS_VERSION_MIN,
                               KAFKA_DESCRIBE_GROUPS_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->GroupsCnt, resp->Groups, false);
    for (int32_t i = 0; i < resp->GroupsCnt; i++) {
        described_group_encode(w, version, &resp->Groups[i]);
    }
    return w->rc;
}

static void described_group_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DescribedGroup *g)
{
    g->ErrorCode = reader_i16(r);
    g->GroupId = reader_string(r);
    g->GroupState = reader_string(r);
    g->ProtocolType = reader_string(r);
    g->ProtocolData = reader_string(r);
    /* member id, (instance id,) client id, host, two bytes: 14 bytes, 16
     * from v4. */
    size_t member_bytes = version >= 4 ? 16 : 14;
    struct kafka_DescribedGroupMember *ms = kafka_codec__array(
        r, a, &g->MembersCnt, sizeof(*ms), member_bytes,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < g->MembersCnt; i++) {
        ms[i].MemberId = reader_string(r);
        ms[i].GroupInstanceId =
            version >= 4 ? reader_nullable_string(r) : slice_null();
        ms[i].ClientId = reader_string(r);
        ms[i].ClientHost = reader_string(r);
        ms[i].MemberMetadata = reader_bytes(r);
        ms[i].MemberAssignment = reader_bytes(r);
    }
    g->Members = ms;
    g->AuthorizedOperations = version >= 3 ? reader_i32(r) : INT32_MIN;
}

int kafka_describe_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeGroupsResponse *out)
{
    if (!describe_groups_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    /* error code, four strings, members count (, authorized operations):
     * 14 bytes, 18 from v3. */
    size_t group_bytes = version >= 3 ? 18 : 14;
    struct kafka_DescribedGroup *gs = kafka_codec__array(
        r, a, &out->GroupsCnt, sizeof(*gs), group_bytes,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->GroupsCnt && r->rc == RC_OK; i++) {
        described_group_decode(r, version, a, &gs[i]);
    }
    out->Groups = gs;
    return kafka_codec__finish(r);
}

/* --- ListGroups ---------------------------------------------------------- */

static bool list_groups_version_ok(int16_t version)
{
    return version_in(version, KAFKA_LIST_GROUPS_VERSION_MIN,
                      KAFKA_LIST_GROUPS_VERSION_MAX);
}

int kafka_list_groups_request_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_ListGroupsRequest *out)
{
    (void)a;
    out->StatesFilter = NULL;
    out->StatesFilterCnt = 0;
    out->TypesFilter = NULL;
    out->TypesFilterCnt = 0;
    if (!list_groups_version_ok(version)) {
        return RC_INVALID;
    }
    return kafka_codec__finish(r); /* v0..2: an empty body */
}

int kafka_list_groups_request_encode(struct writer *w, int16_t version,
                                     const struct kafka_ListGroupsRequest *req)
{
    (void)req;
    kafka_codec__check_version(version, KAFKA_LIST_GROUPS_VERSION_MIN,
                               KAFKA_LIST_GROUPS_VERSION_MAX);
    return w->rc;
}

int kafka_list_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_LIST_GROUPS_VERSION_MIN,
                               KAFKA_LIST_GROUPS_VERSION_MAX);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    kafka_codec__write_count(w, resp->GroupsCnt, resp->Groups, false);
    for (int32_t i = 0; i < resp->GroupsCnt; i++) {
        writer_string_slice(w, resp->Groups[i].GroupId);
        writer_string_slice(w, resp->Groups[i].ProtocolType);
    }
    return w->rc;
}

int kafka_list_groups_response_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_ListGroupsResponse *out)
{
    if (!list_groups_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    /* group id, protocol type: 4 bytes at least. */
    struct kafka_ListedGroup *gs = kafka_codec__array(
        r, a, &out->GroupsCnt, sizeof(*gs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->GroupsCnt; i++) {
        gs[i].GroupId = reader_string(r);
        gs[i].ProtocolType = reader_string(r);
    }
    out->Groups = gs;
    return kafka_codec__finish(r);
}

/* --- DeleteGroups -------------------------------------------------------- */

static bool delete_groups_version_ok(int16_t version)
{
    return version_in(version, KAFKA_DELETE_GROUPS_VERSION_MIN,
                      KAFKA_DELETE_GROUPS_VERSION_MAX);
}

int kafka_delete_groups_request_decode(struct reader *r, int16_t version,
                                       struct arena *a,
                                       struct kafka_DeleteGroupsRequest *out)
{
    if (!delete_groups_version_ok(version)) {
        return RC_INVALID;
    }
    out->GroupsNames = kafka_codec__read_strings(
        r, a, &out->GroupsNamesCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    return kafka_codec__finish(r);
}

int kafka_delete_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_GROUPS_VERSION_MIN,
                               KAFKA_DELETE_GROUPS_VERSION_MAX);
    kafka_codec__write_strings(w, req->GroupsNames, req->GroupsNamesCnt,
                               false);
    return w->rc;
}

int kafka_delete_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_GROUPS_VERSION_MIN,
                               KAFKA_DELETE_GROUPS_VERSION_MAX);
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->ResultsCnt, resp->Results, false);
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        writer_string_slice(w, resp->Results[i].GroupId);
        writer_i16(w, resp->Results[i].ErrorCode);
    }
    return w->rc;
}

int kafka_delete_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DeleteGroupsResponse *out)
{
    if (!delete_groups_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = reader_i32(r);
    /* group id, error code: 4 bytes at least. */
    struct kafka_DeletableGroupResult *rs = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*rs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt; i++) {
        rs[i].GroupId = reader_string(r);
        rs[i].ErrorCode = reader_i16(r);
    }
    out->Results = rs;
    return kafka_codec__finish(r);
}
