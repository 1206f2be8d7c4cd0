/* Kafka codec (common/kafka/kafka_codec.h): the consumer-group membership and
 * group admin APIs, FindCoordinator v0..5, JoinGroup v0..9, Heartbeat
 * v0..4, LeaveGroup v0..5, SyncGroup v0..5, DescribeGroups v0..5,
 * ListGroups v0..5 and DeleteGroups v0..2 (OffsetCommit and OffsetFetch
 * are in kafka_codec_offsets.c). Field lists follow
 * shared/reference/kafka-protocol.md sections 4.6 to 4.10, 4.13 and 4.14,
 * checked against apache/kafka (3.8.0) <Name>Request.json and
 * <Name>Response.json for each API:
 * - FindCoordinator: v1 adds KeyType, and ThrottleTimeMs and ErrorMessage
 *   to the response; v3 is flexible; v4 replaces Key by CoordinatorKeys
 *   and the response's single answer by Coordinators; v5 is v4.
 * - JoinGroup: v1 adds RebalanceTimeoutMs, v2 ThrottleTimeMs, v5
 *   GroupInstanceId to the request and to the response members; v6 is
 *   flexible; v7 adds ProtocolType to the response (ProtocolName becomes
 *   nullable), v8 Reason to the request, v9 SkipAssignment.
 * - Heartbeat, SyncGroup: v1 adds ThrottleTimeMs, v3 GroupInstanceId, v4
 *   is flexible; SyncGroup v5 adds ProtocolType and ProtocolName to both.
 * - LeaveGroup: v1 adds ThrottleTimeMs; v3 replaces MemberId by a Members
 *   batch and adds Members to the response; v4 is flexible, v5 adds each
 *   member's Reason.
 * - DescribeGroups: v1 adds ThrottleTimeMs, v3 IncludeAuthorizedOperations
 *   and AuthorizedOperations, v4 the members' GroupInstanceId; v5 is
 *   flexible.
 * - ListGroups: v1 adds ThrottleTimeMs; the request body is empty up to
 *   v3, which is flexible; v4 adds StatesFilter and GroupState, v5
 *   TypesFilter and GroupType.
 * - DeleteGroups: v0 and v1 are the same, v2 is flexible.
 * Pure: no I/O, no clock, no globals; any thread. */
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
    if (!find_coordinator_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 3);
    out->Key = version <= 3 ? reader_string(r) : kafka_codec__empty_string();
    out->KeyType = version >= 1 ? reader_i8(r) : 0;
    out->CoordinatorKeys = NULL;
    out->CoordinatorKeysCnt = 0;
    if (version >= 4) {
        out->CoordinatorKeys = kafka_codec__read_strings(
            r, a, &out->CoordinatorKeysCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX,
            false);
    }
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_find_coordinator_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorRequest *req)
{
    kafka_codec__check_version(version, KAFKA_FIND_COORDINATOR_VERSION_MIN,
                               KAFKA_FIND_COORDINATOR_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 3);
    if (version <= 3) {
        writer_string_slice(w, req->Key);
    }
    if (version >= 1) {
        writer_i8(w, req->KeyType);
    }
    if (version >= 4) {
        kafka_codec__write_strings(w, req->CoordinatorKeys,
                                   req->CoordinatorKeysCnt, false);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_find_coordinator_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_FIND_COORDINATOR_VERSION_MIN,
                               KAFKA_FIND_COORDINATOR_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 3);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    if (version <= 3) {
        writer_i16(w, resp->ErrorCode);
        if (version >= 1) {
            writer_nullable_string_slice(w, resp->ErrorMessage);
        }
        writer_i32(w, resp->NodeId);
        writer_string_slice(w, resp->Host);
        writer_i32(w, resp->Port);
    } else {
        kafka_codec__write_count(w, resp->CoordinatorsCnt, resp->Coordinators,
                                 false);
        for (int32_t i = 0; i < resp->CoordinatorsCnt; i++) {
            const struct kafka_Coordinator *c = &resp->Coordinators[i];
            writer_string_slice(w, c->Key);
            writer_i32(w, c->NodeId);
            writer_string_slice(w, c->Host);
            writer_i32(w, c->Port);
            writer_i16(w, c->ErrorCode);
            writer_nullable_string_slice(w, c->ErrorMessage);
            kafka_codec__write_tags(w);
        }
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_find_coordinator_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorResponse *out)
{
    if (!find_coordinator_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 3);
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = 0;
    out->ErrorMessage = slice_null();
    out->NodeId = 0;
    out->Host = kafka_codec__empty_string();
    out->Port = 0;
    out->Coordinators = NULL;
    out->CoordinatorsCnt = 0;
    if (version <= 3) {
        out->ErrorCode = reader_i16(r);
        out->ErrorMessage =
            version >= 1 ? reader_nullable_string(r) : slice_null();
        out->NodeId = reader_i32(r);
        out->Host = reader_string(r);
        out->Port = reader_i32(r);
    } else {
        /* Compact only: key, node, host, port, error, message, tags. */
        struct kafka_Coordinator *cs = kafka_codec__array(
            r, a, &out->CoordinatorsCnt, sizeof(*cs), 14,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < out->CoordinatorsCnt; i++) {
            cs[i].Key = reader_string(r);
            cs[i].NodeId = reader_i32(r);
            cs[i].Host = reader_string(r);
            cs[i].Port = reader_i32(r);
            cs[i].ErrorCode = reader_i16(r);
            cs[i].ErrorMessage = reader_nullable_string(r);
            kafka_codec__tags(r);
        }
        out->Coordinators = cs;
    }
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 6);
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
        kafka_codec__tags(r);
    }
    out->Protocols = ps;
    out->Reason = version >= 8 ? reader_nullable_string(r) : slice_null();
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_join_group_request_encode(struct writer *w, int16_t version,
                                    const struct kafka_JoinGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_JOIN_GROUP_VERSION_MIN,
                               KAFKA_JOIN_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 6);
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
        kafka_codec__write_tags(w);
    }
    if (version >= 8) {
        writer_nullable_string_slice(w, req->Reason);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_join_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_JoinGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_JOIN_GROUP_VERSION_MIN,
                               KAFKA_JOIN_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 6);
    if (version >= 2) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    writer_i32(w, resp->GenerationId);
    if (version >= 7) {
        writer_nullable_string_slice(w, resp->ProtocolType);
        writer_nullable_string_slice(w, resp->ProtocolName);
    } else {
        writer_string_slice(w, slice_is_null(resp->ProtocolName)
                                   ? kafka_codec__empty_string()
                                   : resp->ProtocolName);
    }
    writer_string_slice(w, resp->Leader);
    if (version >= 9) {
        writer_bool(w, resp->SkipAssignment);
    }
    writer_string_slice(w, resp->MemberId);
    kafka_codec__write_count(w, resp->MembersCnt, resp->Members, false);
    for (int32_t i = 0; i < resp->MembersCnt; i++) {
        const struct kafka_JoinGroupResponseMember *m = &resp->Members[i];
        writer_string_slice(w, m->MemberId);
        if (version >= 5) {
            writer_nullable_string_slice(w, m->GroupInstanceId);
        }
        writer_bytes_slice(w, m->Metadata);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_join_group_response_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_JoinGroupResponse *out)
{
    if (!join_group_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 6);
    out->ThrottleTimeMs = version >= 2 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->GenerationId = reader_i32(r);
    out->ProtocolType =
        version >= 7 ? reader_nullable_string(r) : slice_null();
    out->ProtocolName =
        version >= 7 ? reader_nullable_string(r) : reader_string(r);
    out->Leader = reader_string(r);
    out->SkipAssignment = version >= 9 ? reader_bool(r) : false;
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
        kafka_codec__tags(r);
    }
    out->Members = ms;
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 4);
    out->GroupId = reader_string(r);
    out->GenerationId = reader_i32(r);
    out->MemberId = reader_string(r);
    out->GroupInstanceId =
        version >= 3 ? reader_nullable_string(r) : slice_null();
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_heartbeat_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_HeartbeatRequest *req)
{
    kafka_codec__check_version(version, KAFKA_HEARTBEAT_VERSION_MIN,
                               KAFKA_HEARTBEAT_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
    writer_string_slice(w, req->GroupId);
    writer_i32(w, req->GenerationId);
    writer_string_slice(w, req->MemberId);
    if (version >= 3) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_heartbeat_response_encode(struct writer *w, int16_t version,
                                    const struct kafka_HeartbeatResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_HEARTBEAT_VERSION_MIN,
                               KAFKA_HEARTBEAT_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_heartbeat_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_HeartbeatResponse *out)
{
    (void)a;
    if (!heartbeat_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 4);
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 4);
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
        ms[i].Reason =
            version >= 5 ? reader_nullable_string(r) : slice_null();
        kafka_codec__tags(r);
    }
    out->Members = ms;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_leave_group_request_encode(struct writer *w, int16_t version,
                                     const struct kafka_LeaveGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_LEAVE_GROUP_VERSION_MIN,
                               KAFKA_LEAVE_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
    writer_string_slice(w, req->GroupId);
    if (version <= 2) {
        writer_string_slice(w, req->MemberId);
        return kafka_codec__end(w);
    }
    kafka_codec__write_count(w, req->MembersCnt, req->Members, false);
    for (int32_t i = 0; i < req->MembersCnt; i++) {
        writer_string_slice(w, req->Members[i].MemberId);
        writer_nullable_string_slice(w, req->Members[i].GroupInstanceId);
        if (version >= 5) {
            writer_nullable_string_slice(w, req->Members[i].Reason);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_leave_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_LeaveGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_LEAVE_GROUP_VERSION_MIN,
                               KAFKA_LEAVE_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
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
            kafka_codec__write_tags(w);
        }
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_leave_group_response_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_LeaveGroupResponse *out)
{
    if (!leave_group_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 4);
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
            kafka_codec__tags(r);
        }
        out->Members = ms;
    }
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 4);
    out->GroupId = reader_string(r);
    out->GenerationId = reader_i32(r);
    out->MemberId = reader_string(r);
    out->GroupInstanceId =
        version >= 3 ? reader_nullable_string(r) : slice_null();
    out->ProtocolType =
        version >= 5 ? reader_nullable_string(r) : slice_null();
    out->ProtocolName =
        version >= 5 ? reader_nullable_string(r) : slice_null();
    /* member id, assignment: 6 bytes at least. */
    struct kafka_SyncGroupRequestAssignment *as = kafka_codec__array(
        r, a, &out->AssignmentsCnt, sizeof(*as), 6,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->AssignmentsCnt; i++) {
        as[i].MemberId = reader_string(r);
        as[i].Assignment = reader_bytes(r);
        kafka_codec__tags(r);
    }
    out->Assignments = as;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_sync_group_request_encode(struct writer *w, int16_t version,
                                    const struct kafka_SyncGroupRequest *req)
{
    kafka_codec__check_version(version, KAFKA_SYNC_GROUP_VERSION_MIN,
                               KAFKA_SYNC_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
    writer_string_slice(w, req->GroupId);
    writer_i32(w, req->GenerationId);
    writer_string_slice(w, req->MemberId);
    if (version >= 3) {
        writer_nullable_string_slice(w, req->GroupInstanceId);
    }
    if (version >= 5) {
        writer_nullable_string_slice(w, req->ProtocolType);
        writer_nullable_string_slice(w, req->ProtocolName);
    }
    kafka_codec__write_count(w, req->AssignmentsCnt, req->Assignments,
                             false);
    for (int32_t i = 0; i < req->AssignmentsCnt; i++) {
        writer_string_slice(w, req->Assignments[i].MemberId);
        writer_bytes_slice(w, req->Assignments[i].Assignment);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_sync_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_SyncGroupResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_SYNC_GROUP_VERSION_MIN,
                               KAFKA_SYNC_GROUP_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 4);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    if (version >= 5) {
        writer_nullable_string_slice(w, resp->ProtocolType);
        writer_nullable_string_slice(w, resp->ProtocolName);
    }
    writer_bytes_slice(w, resp->Assignment);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_sync_group_response_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_SyncGroupResponse *out)
{
    (void)a;
    if (!sync_group_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 4);
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    out->ProtocolType =
        version >= 5 ? reader_nullable_string(r) : slice_null();
    out->ProtocolName =
        version >= 5 ? reader_nullable_string(r) : slice_null();
    out->Assignment = reader_bytes(r);
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 5);
    out->Groups = kafka_codec__read_strings(
        r, a, &out->GroupsCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    out->IncludeAuthorizedOperations = version >= 3 ? reader_bool(r) : false;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_describe_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_GROUPS_VERSION_MIN,
                               KAFKA_DESCRIBE_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 5);
    kafka_codec__write_strings(w, req->Groups, req->GroupsCnt, false);
    if (version >= 3) {
        writer_bool(w, req->IncludeAuthorizedOperations);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
        kafka_codec__write_tags(w);
    }
    if (version >= 3) {
        writer_i32(w, g->AuthorizedOperations);
    }
    kafka_codec__write_tags(w);
}

int kafka_describe_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DESCRIBE_GROUPS_VERSION_MIN,
                               KAFKA_DESCRIBE_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 5);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    kafka_codec__write_count(w, resp->GroupsCnt, resp->Groups, false);
    for (int32_t i = 0; i < resp->GroupsCnt; i++) {
        described_group_encode(w, version, &resp->Groups[i]);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
        kafka_codec__tags(r);
    }
    g->Members = ms;
    g->AuthorizedOperations = version >= 3 ? reader_i32(r) : INT32_MIN;
    kafka_codec__tags(r);
}

int kafka_describe_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeGroupsResponse *out)
{
    if (!describe_groups_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 5);
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
    kafka_codec__tags(r);
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
    out->StatesFilter = NULL;
    out->StatesFilterCnt = 0;
    out->TypesFilter = NULL;
    out->TypesFilterCnt = 0;
    if (!list_groups_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 3); /* v0..2: an empty body */
    if (version >= 4) {
        out->StatesFilter = kafka_codec__read_strings(
            r, a, &out->StatesFilterCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX,
            false);
    }
    if (version >= 5) {
        out->TypesFilter = kafka_codec__read_strings(
            r, a, &out->TypesFilterCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX,
            false);
    }
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_list_groups_request_encode(struct writer *w, int16_t version,
                                     const struct kafka_ListGroupsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_LIST_GROUPS_VERSION_MIN,
                               KAFKA_LIST_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 3);
    if (version >= 4) {
        kafka_codec__write_strings(w, req->StatesFilter,
                                   req->StatesFilterCnt, false);
    }
    if (version >= 5) {
        kafka_codec__write_strings(w, req->TypesFilter, req->TypesFilterCnt,
                                   false);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_list_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_LIST_GROUPS_VERSION_MIN,
                               KAFKA_LIST_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 3);
    if (version >= 1) {
        writer_i32(w, resp->ThrottleTimeMs);
    }
    writer_i16(w, resp->ErrorCode);
    kafka_codec__write_count(w, resp->GroupsCnt, resp->Groups, false);
    for (int32_t i = 0; i < resp->GroupsCnt; i++) {
        const struct kafka_ListedGroup *g = &resp->Groups[i];
        writer_string_slice(w, g->GroupId);
        writer_string_slice(w, g->ProtocolType);
        if (version >= 4) {
            writer_string_slice(w, g->GroupState);
        }
        if (version >= 5) {
            writer_string_slice(w, g->GroupType);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_list_groups_response_decode(struct reader *r, int16_t version,
                                      struct arena *a,
                                      struct kafka_ListGroupsResponse *out)
{
    if (!list_groups_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 3);
    out->ThrottleTimeMs = version >= 1 ? reader_i32(r) : 0;
    out->ErrorCode = reader_i16(r);
    /* group id, protocol type: 4 bytes at least. */
    struct kafka_ListedGroup *gs = kafka_codec__array(
        r, a, &out->GroupsCnt, sizeof(*gs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->GroupsCnt; i++) {
        gs[i].GroupId = reader_string(r);
        gs[i].ProtocolType = reader_string(r);
        gs[i].GroupState = version >= 4 ? reader_string(r)
                                        : kafka_codec__empty_string();
        gs[i].GroupType = version >= 5 ? reader_string(r)
                                       : kafka_codec__empty_string();
        kafka_codec__tags(r);
    }
    out->Groups = gs;
    kafka_codec__tags(r);
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
    kafka_codec__flexible(r, version >= 2);
    out->GroupsNames = kafka_codec__read_strings(
        r, a, &out->GroupsNamesCnt, (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_delete_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsRequest *req)
{
    kafka_codec__check_version(version, KAFKA_DELETE_GROUPS_VERSION_MIN,
                               KAFKA_DELETE_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 2);
    kafka_codec__write_strings(w, req->GroupsNames, req->GroupsNamesCnt,
                               false);
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_DELETE_GROUPS_VERSION_MIN,
                               KAFKA_DELETE_GROUPS_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= 2);
    writer_i32(w, resp->ThrottleTimeMs);
    kafka_codec__write_count(w, resp->ResultsCnt, resp->Results, false);
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        writer_string_slice(w, resp->Results[i].GroupId);
        writer_i16(w, resp->Results[i].ErrorCode);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

int kafka_delete_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DeleteGroupsResponse *out)
{
    if (!delete_groups_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= 2);
    out->ThrottleTimeMs = reader_i32(r);
    /* group id, error code: 4 bytes at least. */
    struct kafka_DeletableGroupResult *rs = kafka_codec__array(
        r, a, &out->ResultsCnt, sizeof(*rs), 4,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
    for (int32_t i = 0; i < out->ResultsCnt; i++) {
        rs[i].GroupId = reader_string(r);
        rs[i].ErrorCode = reader_i16(r);
        kafka_codec__tags(r);
    }
    out->Results = rs;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
