/* The Kafka codec's structs and functions for the consumer group APIs but offsets,
 * implemented in common/kafka/kafka_codec_group.c. Include
 * common/kafka/kafka_codec.h, which includes this and holds the
 * conventions every API follows. */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_GROUP_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/kafka/kafka_codec_records.h"
#include "common/kafka/kafka_error.h"
#include "common/reader.h"
#include "common/slice.h"
#include "common/writer.h"

/* Versions this codec parses and writes. */
#define KAFKA_FIND_COORDINATOR_VERSION_MIN 0
#define KAFKA_FIND_COORDINATOR_VERSION_MAX 5
#define KAFKA_JOIN_GROUP_VERSION_MIN 0
#define KAFKA_JOIN_GROUP_VERSION_MAX 9
#define KAFKA_HEARTBEAT_VERSION_MIN 0
#define KAFKA_HEARTBEAT_VERSION_MAX 4
#define KAFKA_LEAVE_GROUP_VERSION_MIN 0
#define KAFKA_LEAVE_GROUP_VERSION_MAX 5
#define KAFKA_SYNC_GROUP_VERSION_MIN 0
#define KAFKA_SYNC_GROUP_VERSION_MAX 5
#define KAFKA_DESCRIBE_GROUPS_VERSION_MIN 0
#define KAFKA_DESCRIBE_GROUPS_VERSION_MAX 5
#define KAFKA_LIST_GROUPS_VERSION_MIN 0
#define KAFKA_LIST_GROUPS_VERSION_MAX 5
#define KAFKA_DELETE_GROUPS_VERSION_MIN 0
#define KAFKA_DELETE_GROUPS_VERSION_MAX 2

/* --- Consumer groups: common notes ---------------------------------------- */

/* FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
 * DescribeGroups, ListGroups, DeleteGroups (kafka_codec_group.c) and
 * OffsetCommit, OffsetFetch (kafka_codec_offsets.c): field lists from
 * shared/reference/kafka-protocol.md sections 4.6 to 4.14, checked
 * against apache/kafka's JSON schemas (3.8.0).
 * - Protocol metadata and assignments are bytes the broker never parses
 *   (section 4.20): slices, like record bytes.
 * - Arrays of groups, members, protocols and assignments are bounded by
 *   KAFKA_ARRAY_COUNT_MAX (and the arena); topics and partitions by
 *   KAFKA_REQUEST_TOPICS_MAX and KAFKA_REQUEST_PARTITIONS_MAX as
 *   elsewhere.
 * - Flexible versions (KIP-482): FindCoordinator v3+, JoinGroup v6+,
 *   Heartbeat, LeaveGroup and SyncGroup v4+, DescribeGroups v5+,
 *   ListGroups v3+, DeleteGroups v2+, OffsetCommit v8+, OffsetFetch v6+.
 *   Kafka 3.8 defines no tagged field in any of these messages: every
 *   tagged field read is skipped, none is written. */

/* --- FindCoordinator (10) ------------------------------------------------ */

/* v0..3 ask for one Key; v4+ (KIP-699) for a batch of CoordinatorKeys,
 * all of one KeyType. */
struct kafka_FindCoordinatorRequest {
    struct slice Key; /* v0-3: a group id, or a transactional id; "" */
    int8_t KeyType;   /* v1+: 0 group, 1 transaction; default 0 */
    const struct slice *CoordinatorKeys; /* v4+; default empty */
    int32_t CoordinatorKeysCnt;
};

/* One answer of a v4+ response. */
struct kafka_Coordinator {
    struct slice Key;
    int32_t NodeId;
    struct slice Host;
    int32_t Port;
    int16_t ErrorCode;
    struct slice ErrorMessage; /* nullable */
};

/* v0 has only ErrorCode, NodeId, Host and Port; v4+ only ThrottleTimeMs
 * and Coordinators (the single answer's fields are v0-3 only). */
struct kafka_FindCoordinatorResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;         /* v0-3; default 0 */
    struct slice ErrorMessage; /* v1-3, nullable; default null */
    int32_t NodeId;            /* v0-3; default 0 */
    struct slice Host;         /* v0-3; default "" */
    int32_t Port;              /* v0-3; default 0 */
    const struct kafka_Coordinator *Coordinators; /* v4+; default empty */
    int32_t CoordinatorsCnt;
};

MUST_CHECK int kafka_find_coordinator_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorRequest *out);
MUST_CHECK int kafka_find_coordinator_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorResponse *resp);
MUST_CHECK int kafka_find_coordinator_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_FindCoordinatorRequest *req);
MUST_CHECK int kafka_find_coordinator_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_FindCoordinatorResponse *out);

/* --- JoinGroup (11) ------------------------------------------------------ */

struct kafka_JoinGroupRequestProtocol {
    struct slice Name;     /* an assignor: "range", "RoundRobinAssigner" */
    struct slice Metadata; /* bytes, opaque to the broker */
};

struct kafka_JoinGroupRequest {
    struct slice GroupId;
    int32_t SessionTimeoutMs;
    /* v1+; default -1, Kafka's placeholder: for v0 the coordinator uses
     * SessionTimeoutMs instead (kafka-protocol.md 4.7). */
    int32_t RebalanceTimeoutMs;
    struct slice MemberId;        /* "" on a first join */
    struct slice GroupInstanceId; /* v5+, nullable; default null */
    struct slice ProtocolType;    /* "consumer" */
    const struct kafka_JoinGroupRequestProtocol *Protocols;
    int32_t ProtocolsCnt;
    struct slice Reason; /* v8+ (KIP-800), nullable; default null */
};

struct kafka_JoinGroupResponseMember {
    struct slice MemberId;
    struct slice GroupInstanceId; /* v5+, nullable; default null */
    struct slice Metadata;        /* bytes */
};

struct kafka_JoinGroupResponse {
    int32_t ThrottleTimeMs; /* v2+; default 0 */
    int16_t ErrorCode;
    int32_t GenerationId;
    struct slice ProtocolType; /* v7+ (KIP-559), nullable; default null */
    /* Nullable from v7; null is written "" before v7, as Kafka does. */
    struct slice ProtocolName;
    struct slice Leader;
    bool SkipAssignment; /* v9+ (KIP-814); default false */
    struct slice MemberId;
    /* Filled only in the leader's response; empty for followers. */
    const struct kafka_JoinGroupResponseMember *Members;
    int32_t MembersCnt;
};

MUST_CHECK int
kafka_join_group_request_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_JoinGroupRequest *out);
MUST_CHECK int
kafka_join_group_response_encode(struct writer *w, int16_t version,
                                 const struct kafka_JoinGroupResponse *resp);
MUST_CHECK int
kafka_join_group_request_encode(struct writer *w, int16_t version,
                                const struct kafka_JoinGroupRequest *req);
MUST_CHECK int
kafka_join_group_response_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_JoinGroupResponse *out);

/* --- Heartbeat (12) ------------------------------------------------------ */

struct kafka_HeartbeatRequest {
    struct slice GroupId;
    int32_t GenerationId;
    struct slice MemberId;
    struct slice GroupInstanceId; /* v3+, nullable; default null */
};

struct kafka_HeartbeatResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
};

MUST_CHECK int kafka_heartbeat_request_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_HeartbeatRequest *out);
MUST_CHECK int
kafka_heartbeat_response_encode(struct writer *w, int16_t version,
                                const struct kafka_HeartbeatResponse *resp);
MUST_CHECK int
kafka_heartbeat_request_encode(struct writer *w, int16_t version,
                               const struct kafka_HeartbeatRequest *req);
MUST_CHECK int kafka_heartbeat_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_HeartbeatResponse *out);

/* --- LeaveGroup (13) ----------------------------------------------------- */

struct kafka_MemberIdentity {
    struct slice MemberId;
    struct slice GroupInstanceId; /* nullable */
    struct slice Reason; /* v5+ (KIP-800), nullable; default null */
};

/* v0..2 name one member in MemberId; v3 names a batch in Members. */
struct kafka_LeaveGroupRequest {
    struct slice GroupId;
    struct slice MemberId; /* v0-2 only; default "" */
    const struct kafka_MemberIdentity *Members; /* v3+; default empty */
    int32_t MembersCnt;
};

struct kafka_MemberResponse {
    struct slice MemberId;
    struct slice GroupInstanceId; /* nullable */
    int16_t ErrorCode;
};

struct kafka_LeaveGroupResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    const struct kafka_MemberResponse *Members; /* v3+; default empty */
    int32_t MembersCnt;
};

MUST_CHECK int
kafka_leave_group_request_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_LeaveGroupRequest *out);
MUST_CHECK int kafka_leave_group_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_LeaveGroupResponse *resp);
MUST_CHECK int
kafka_leave_group_request_encode(struct writer *w, int16_t version,
                                 const struct kafka_LeaveGroupRequest *req);
MUST_CHECK int
kafka_leave_group_response_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_LeaveGroupResponse *out);

/* --- SyncGroup (14) ------------------------------------------------------ */

struct kafka_SyncGroupRequestAssignment {
    struct slice MemberId;
    struct slice Assignment; /* bytes, opaque to the broker */
};

struct kafka_SyncGroupRequest {
    struct slice GroupId;
    int32_t GenerationId;
    struct slice MemberId;
    struct slice GroupInstanceId; /* v3+, nullable; default null */
    struct slice ProtocolType; /* v5+ (KIP-559), nullable; default null */
    struct slice ProtocolName; /* v5+, nullable; default null */
    /* The leader's assignments; followers send an empty array. */
    const struct kafka_SyncGroupRequestAssignment *Assignments;
    int32_t AssignmentsCnt;
};

struct kafka_SyncGroupResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    struct slice ProtocolType; /* v5+ (KIP-559), nullable; default null */
    struct slice ProtocolName; /* v5+, nullable; default null */
    struct slice Assignment; /* bytes: empty, not null, if none */
};

MUST_CHECK int
kafka_sync_group_request_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_SyncGroupRequest *out);
MUST_CHECK int
kafka_sync_group_response_encode(struct writer *w, int16_t version,
                                 const struct kafka_SyncGroupResponse *resp);
MUST_CHECK int
kafka_sync_group_request_encode(struct writer *w, int16_t version,
                                const struct kafka_SyncGroupRequest *req);
MUST_CHECK int
kafka_sync_group_response_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_SyncGroupResponse *out);

/* --- DescribeGroups (15) ------------------------------------------------- */

struct kafka_DescribeGroupsRequest {
    const struct slice *Groups; /* group ids */
    int32_t GroupsCnt;
    bool IncludeAuthorizedOperations; /* v3+; default false */
};

struct kafka_DescribedGroupMember {
    struct slice MemberId;
    struct slice GroupInstanceId; /* v4+, nullable; default null */
    struct slice ClientId;
    struct slice ClientHost;
    struct slice MemberMetadata;   /* bytes */
    struct slice MemberAssignment; /* bytes */
};

struct kafka_DescribedGroup {
    int16_t ErrorCode;
    struct slice GroupId;
    struct slice GroupState; /* "Empty", "Stable", "Dead", ... */
    struct slice ProtocolType;
    struct slice ProtocolData; /* the chosen assignor */
    const struct kafka_DescribedGroupMember *Members;
    int32_t MembersCnt;
    int32_t AuthorizedOperations; /* v3+; default INT32_MIN */
};

struct kafka_DescribeGroupsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    const struct kafka_DescribedGroup *Groups;
    int32_t GroupsCnt;
};

MUST_CHECK int
kafka_describe_groups_request_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_DescribeGroupsRequest *out);
MUST_CHECK int kafka_describe_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsResponse *resp);
MUST_CHECK int kafka_describe_groups_request_encode(
    struct writer *w, int16_t version,
    const struct kafka_DescribeGroupsRequest *req);
MUST_CHECK int kafka_describe_groups_response_decode(
    struct reader *r, int16_t version, struct arena *a,
    struct kafka_DescribeGroupsResponse *out);

/* --- ListGroups (16) ----------------------------------------------------- */

/* The body is empty in v0..2 (and only a tag section in v3). Empty
 * filters list every group. */
struct kafka_ListGroupsRequest {
    const struct slice *StatesFilter; /* v4+ (KIP-518); default empty */
    int32_t StatesFilterCnt;
    const struct slice *TypesFilter; /* v5+ (KIP-848); default empty */
    int32_t TypesFilterCnt;
};

struct kafka_ListedGroup {
    struct slice GroupId;
    struct slice ProtocolType;
    struct slice GroupState; /* v4+; default "" */
    struct slice GroupType;  /* v5+: "classic" or "consumer"; default "" */
};

struct kafka_ListGroupsResponse {
    int32_t ThrottleTimeMs; /* v1+; default 0 */
    int16_t ErrorCode;
    const struct kafka_ListedGroup *Groups;
    int32_t GroupsCnt;
};

MUST_CHECK int
kafka_list_groups_request_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_ListGroupsRequest *out);
MUST_CHECK int kafka_list_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_ListGroupsResponse *resp);
MUST_CHECK int
kafka_list_groups_request_encode(struct writer *w, int16_t version,
                                 const struct kafka_ListGroupsRequest *req);
MUST_CHECK int
kafka_list_groups_response_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_ListGroupsResponse *out);

/* --- DeleteGroups (42) --------------------------------------------------- */

/* Kafka's schema spells the field "GroupsNames". */
struct kafka_DeleteGroupsRequest {
    const struct slice *GroupsNames;
    int32_t GroupsNamesCnt;
};

struct kafka_DeletableGroupResult {
    struct slice GroupId;
    int16_t ErrorCode;
};

/* ThrottleTimeMs is in every version, v0 too. */
struct kafka_DeleteGroupsResponse {
    int32_t ThrottleTimeMs;
    const struct kafka_DeletableGroupResult *Results;
    int32_t ResultsCnt;
};

MUST_CHECK int
kafka_delete_groups_request_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_DeleteGroupsRequest *out);
MUST_CHECK int kafka_delete_groups_response_encode(
    struct writer *w, int16_t version,
    const struct kafka_DeleteGroupsResponse *resp);
MUST_CHECK int
kafka_delete_groups_request_encode(struct writer *w, int16_t version,
                                   const struct kafka_DeleteGroupsRequest *req);
MUST_CHECK int
kafka_delete_groups_response_decode(struct reader *r, int16_t version,
                                    struct arena *a,
                                    struct kafka_DeleteGroupsResponse *out);


#endif
