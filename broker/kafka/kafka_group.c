/* Consumer-group APIs (broker/broker.h): FindCoordinator, JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups,
 * ListGroups and DeleteGroups, decoded here, routed by
 * broker/group/coordinator.h (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS)
 * and answered by the group core (broker/group/group.h). JoinGroup, SyncGroup
 * and OffsetCommit may be answered later, through the core's io callbacks. */
#include "broker/broker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/group/group_store.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

static struct coordinator *coord(struct broker *b)
{
    return &b->coordinator;
}

static int64_t now_ms(struct broker *b)
{
    return (int64_t)uv_now(b->loop);
}

/* A decoder's verdict: a malformed request closes the connection. */
static bool decoded(struct kafka_request *req, int rc, const char *what)
{
    if (rc != RC_OK) {
        char msg[96];
        snprintf(msg, sizeof msg, "malformed %s request", what);
        kafka_close_conn(req, msg);
        return false;
    }
    return true;
}

/* Kafka's clientHost: "/" and the address. */
static struct slice client_host(struct kafka_request *req, char *buf,
                                size_t cap)
{
    const char *peer = kafka_request_peer(req);
    const char *colon = strrchr(peer, ':');
    int n = colon != NULL ? (int)(colon - peer) : (int)strlen(peer);
    if (n > 1 && peer[0] == '[') { /* [ipv6]:port */
        peer++;
        n -= 2;
    }
    snprintf(buf, cap, "/%.*s", n, peer);
    return slice_from_str(buf);
}

/* --- FindCoordinator ----------------------------------------------------- */

static int enc_find(struct writer *w, int16_t v, const void *r)
{
    return kafka_find_coordinator_response_encode(w, v, r);
}

/* The coordinator of one key: the leader of its __consumer_offsets
 * partition, else COORDINATOR_NOT_AVAILABLE with node -1, host "", port
 * -1 (and why, in ErrorMessage). Transactions (KeyType 1) have none. */
static struct kafka_Coordinator find_one(struct broker *b, struct slice key,
                                         int8_t key_type)
{
    struct kafka_Coordinator c = {
        .Key = key, .NodeId = -1, .Host = slice_from_str(""), .Port = -1,
        .ErrorCode = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE,
        .ErrorMessage = slice_null()};
    const struct meta_image *img = membership_image(b->membership);
    int32_t n = coordinator_partitions(coord(b));
    if (key_type != 0) {
        c.ErrorMessage = slice_from_str("transactions are not supported");
    } else if (n == 0) {
        coordinator_ensure_topic(coord(b));
        c.ErrorMessage = slice_from_str("creating " GROUP_STORE_TOPIC);
    } else {
        const struct meta_topic *t = meta_image_topic(img, GROUP_STORE_TOPIC);
        int32_t id = group_store_partition_for(key.ptr, key.len, n);
        const struct meta_broker *leader =
            meta_image_broker(img, t->partitions[id].leader);
        if (leader != NULL && !leader->fenced) {
            c.ErrorCode = KAFKA_ERROR_NONE;
            c.NodeId = leader->id;
            c.Host = slice_from_str(leader->host);
            c.Port = leader->port;
        }
    }
    return c;
}

/* v0..3 answer the one Key; v4+ (KIP-699) each of CoordinatorKeys, in
 * order, as Kafka's handleFindCoordinatorRequestV4AndAbove. */
void kafka_handle_find_coordinator(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FindCoordinatorRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_find_coordinator_request_decode(&r, req->api_version, &a, &rq),
                 "FindCoordinator")) {
        arena_free(&a);
        return;
    }
    struct kafka_FindCoordinatorResponse resp = {
        .ErrorMessage = slice_null(), .Host = slice_from_str("")};
    if (req->api_version <= 3) {
        struct kafka_Coordinator c = find_one(b, rq.Key, rq.KeyType);
        resp.ErrorCode = c.ErrorCode;
        resp.ErrorMessage = c.ErrorMessage;
        resp.NodeId = c.NodeId;
        resp.Host = c.Host;
        resp.Port = c.Port;
    } else {
        struct kafka_Coordinator *cs = NULL;
        if (arena_alloc(&a, (size_t)rq.CoordinatorKeysCnt, sizeof *cs,
                        (void **)&cs) != RC_OK) {
            kafka_close_conn(req, "out of memory");
            arena_free(&a);
            return;
        }
        for (int32_t i = 0; i < rq.CoordinatorKeysCnt; i++) {
            cs[i] = find_one(b, rq.CoordinatorKeys[i], rq.KeyType);
        }
        resp.Coordinators = cs;
        resp.CoordinatorsCnt = rq.CoordinatorKeysCnt;
    }
    kafka_send(req, enc_find, &resp);
    arena_free(&a);
}

/* --- JoinGroup / SyncGroup ----------------------------------------------- */

static int enc_join(struct writer *w, int16_t v, const void *r)
{
    return kafka_join_group_response_encode(w, v, r);
}

static void answer_join(struct kafka_request *req, int16_t error,
                        struct slice member_id)
{
    /* Protocol type and name null: v0..6 write the name "". */
    struct kafka_JoinGroupResponse resp = {
        .ErrorCode = error, .GenerationId = -1,
        .ProtocolType = slice_null(), .ProtocolName = slice_null(),
        .Leader = slice_from_str(""),
        .MemberId = member_id.ptr != NULL ? member_id : slice_from_str("")};
    kafka_send(req, enc_join, &resp);
}

void kafka_group_join_done(struct group_io *io, void *arg,
                           const struct group_join_result *res)
{
    (void)io;
    struct kafka_request *req = arg;
    struct kafka_JoinGroupResponseMember *ms = NULL;
    if (res->n_members > 0) {
        ms = calloc(res->n_members, sizeof *ms);
        if (ms == NULL) {
            answer_join(req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE,
                        res->member_id);
            return;
        }
        for (size_t i = 0; i < res->n_members; i++) {
            ms[i] = (struct kafka_JoinGroupResponseMember){
                .MemberId = res->members[i].member_id,
                .GroupInstanceId = res->members[i].group_instance_id,
                .Metadata = res->members[i].metadata};
        }
    }
    /* SkipAssignment stays false in v9: a static leader that comes back
     * to a Stable group is told the old leader id, as before v9, and
     * syncs as a follower. */
    struct kafka_JoinGroupResponse resp = {
        .ErrorCode = res->error_code,
        .GenerationId = res->generation_id,
        .ProtocolType = res->protocol_type,
        .ProtocolName = res->protocol_name,
        .Leader = res->leader.ptr != NULL ? res->leader : slice_from_str(""),
        .MemberId = res->member_id.ptr != NULL ? res->member_id
                                               : slice_from_str(""),
        .Members = ms, .MembersCnt = (int32_t)res->n_members};
    kafka_send(req, enc_join, &resp);
    free(ms);
}

void kafka_handle_join_group(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_JoinGroupRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_join_group_request_decode(&r, req->api_version, &a, &rq),
                 "JoinGroup")) {
        arena_free(&a);
        return;
    }
    int16_t err = coordinator_route(coord(b), rq.GroupId);
    struct group_protocol *ps = NULL;
    if (err == KAFKA_ERROR_NONE && rq.ProtocolsCnt > 0 &&
        arena_alloc(&a, (size_t)rq.ProtocolsCnt, sizeof *ps, (void **)&ps) !=
            RC_OK) {
        err = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    if (err == KAFKA_ERROR_NONE && rq.ProtocolsCnt <= 0) {
        err = KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL;
    }
    if (err != KAFKA_ERROR_NONE) {
        answer_join(req, err, rq.MemberId);
        arena_free(&a);
        return;
    }
    for (int32_t i = 0; i < rq.ProtocolsCnt; i++) {
        ps[i] = (struct group_protocol){.name = rq.Protocols[i].Name,
                                        .metadata = rq.Protocols[i].Metadata};
    }
    char host[64];
    char software[2 * KAFKA_CONN_SOFTWARE_BYTES];
    snprintf(software, sizeof software, "%s%s%s",
             kafka_conn_software_name(req->conn),
             kafka_conn_software_name(req->conn)[0] != '\0' ? " " : "",
             kafka_conn_software_version(req->conn));
    struct group_join_request jr = {
        .group_id = rq.GroupId, .member_id = rq.MemberId,
        .group_instance_id = rq.GroupInstanceId,
        .client_id = req->client_id.ptr != NULL ? req->client_id
                                                : slice_from_str(""),
        .client_host = client_host(req, host, sizeof host),
        .client_software = slice_from_str(software),
        .protocol_type = rq.ProtocolType, .protocols = ps,
        .n_protocols = (size_t)rq.ProtocolsCnt,
        .reason = rq.Reason,
        .session_timeout_ms = rq.SessionTimeoutMs,
        .rebalance_timeout_ms = req->api_version == 0 ||
                                        rq.RebalanceTimeoutMs < 0
                                    ? rq.SessionTimeoutMs
                                    : rq.RebalanceTimeoutMs,
        .require_known_member_id = req->api_version >= 4};
    int64_t now = now_ms(b);
    if (group_join(&coord(b)->groups, req, &jr, now) != RC_OK) {
        answer_join(req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, rq.MemberId);
    }
    arena_free(&a);
    group_tick(&coord(b)->groups, now);
}

static int enc_sync(struct writer *w, int16_t v, const void *r)
{
    return kafka_sync_group_response_encode(w, v, r);
}

static void answer_sync(struct kafka_request *req,
                        const struct group_sync_result *res)
{
    struct kafka_SyncGroupResponse resp = {
        .ErrorCode = res->error_code,
        .ProtocolType = res->protocol_type,
        .ProtocolName = res->protocol_name,
        .Assignment = res->assignment.ptr != NULL ? res->assignment
                                                  : slice_from_str("")};
    kafka_send(req, enc_sync, &resp);
}

static void answer_sync_error(struct kafka_request *req, int16_t error)
{
    struct group_sync_result res = {
        .error_code = error, .protocol_type = slice_null(),
        .protocol_name = slice_null(), .assignment = slice_null()};
    answer_sync(req, &res);
}

void kafka_group_sync_done(struct group_io *io, void *arg,
                           const struct group_sync_result *res)
{
    (void)io;
    answer_sync(arg, res);
}

void kafka_handle_sync_group(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_SyncGroupRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_sync_group_request_decode(&r, req->api_version, &a, &rq),
                 "SyncGroup")) {
        arena_free(&a);
        return;
    }
    /* v5+ must name the protocol type and name (Kafka's
     * areMandatoryProtocolTypeAndNamePresent); the core then checks them
     * against the group's. */
    int16_t err = req->api_version >= 5 && (slice_is_null(rq.ProtocolType) ||
                                            slice_is_null(rq.ProtocolName))
                      ? KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL
                      : coordinator_route(coord(b), rq.GroupId);
    struct group_assignment *as = NULL;
    if (err == KAFKA_ERROR_NONE && rq.AssignmentsCnt > 0 &&
        arena_alloc(&a, (size_t)rq.AssignmentsCnt, sizeof *as,
                    (void **)&as) != RC_OK) {
        err = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    if (err != KAFKA_ERROR_NONE) {
        answer_sync_error(req, err);
        arena_free(&a);
        return;
    }
    for (int32_t i = 0; i < rq.AssignmentsCnt; i++) {
        as[i] = (struct group_assignment){
            .member_id = rq.Assignments[i].MemberId,
            .assignment = rq.Assignments[i].Assignment};
    }
    struct group_sync_request sr = {
        .group_id = rq.GroupId, .generation_id = rq.GenerationId,
        .member_id = rq.MemberId, .group_instance_id = rq.GroupInstanceId,
        .protocol_type = rq.ProtocolType, .protocol_name = rq.ProtocolName,
        .assignments = as,
        .n_assignments = rq.AssignmentsCnt > 0 ? (size_t)rq.AssignmentsCnt
                                               : 0};
    int64_t now = now_ms(b);
    if (group_sync(&coord(b)->groups, req, &sr, now) != RC_OK) {
        answer_sync_error(req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    }
    arena_free(&a);
    group_tick(&coord(b)->groups, now);
}

/* --- Heartbeat / LeaveGroup ---------------------------------------------- */

static int enc_heartbeat(struct writer *w, int16_t v, const void *r)
{
    return kafka_heartbeat_response_encode(w, v, r);
}

void kafka_handle_heartbeat(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_HeartbeatRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_heartbeat_request_decode(&r, req->api_version, &a, &rq),
                 "Heartbeat")) {
        arena_free(&a);
        return;
    }
    int64_t now = now_ms(b);
    struct kafka_HeartbeatResponse resp = {
        .ErrorCode = coordinator_route(coord(b), rq.GroupId)};
    if (resp.ErrorCode == KAFKA_ERROR_NONE) {
        resp.ErrorCode = group_heartbeat(&coord(b)->groups, rq.GroupId,
                                         rq.MemberId, rq.GroupInstanceId,
                                         rq.GenerationId, now);
    }
    kafka_send(req, enc_heartbeat, &resp);
    arena_free(&a);
    group_tick(&coord(b)->groups, now);
}

static int enc_leave(struct writer *w, int16_t v, const void *r)
{
    return kafka_leave_group_response_encode(w, v, r);
}

void kafka_handle_leave_group(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_LeaveGroupRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_leave_group_request_decode(&r, req->api_version, &a, &rq),
                 "LeaveGroup")) {
        arena_free(&a);
        return;
    }
    bool v3 = req->api_version >= 3;
    size_t n = v3 ? (size_t)(rq.MembersCnt > 0 ? rq.MembersCnt : 0) : 1;
    struct group_leave_member *ms = NULL;
    struct kafka_MemberResponse *out = NULL;
    struct kafka_LeaveGroupResponse resp = {
        .ErrorCode = coordinator_route(coord(b), rq.GroupId)};
    if (resp.ErrorCode == KAFKA_ERROR_NONE && n > 0 &&
        (arena_alloc(&a, n, sizeof *ms, (void **)&ms) != RC_OK ||
         arena_alloc(&a, n, sizeof *out, (void **)&out) != RC_OK)) {
        resp.ErrorCode = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    int64_t now = now_ms(b);
    if (resp.ErrorCode == KAFKA_ERROR_NONE) {
        for (size_t i = 0; i < n; i++) {
            ms[i] = v3 ? (struct group_leave_member){
                             .member_id = rq.Members[i].MemberId,
                             .group_instance_id =
                                 rq.Members[i].GroupInstanceId,
                             .reason = rq.Members[i].Reason}
                       : (struct group_leave_member){
                             .member_id = rq.MemberId,
                             .group_instance_id = slice_null(),
                             .reason = slice_null()};
        }
        resp.ErrorCode = group_leave(&coord(b)->groups, rq.GroupId, ms, n,
                                     now);
        if (!v3 && resp.ErrorCode == KAFKA_ERROR_NONE) {
            resp.ErrorCode = ms[0].error_code;
        }
        for (size_t i = 0; v3 && i < n; i++) {
            out[i] = (struct kafka_MemberResponse){
                .MemberId = ms[i].member_id,
                .GroupInstanceId = ms[i].group_instance_id,
                .ErrorCode = ms[i].error_code};
        }
        if (v3) {
            resp.Members = out;
            resp.MembersCnt = (int32_t)n;
        }
    }
    kafka_send(req, enc_leave, &resp);
    arena_free(&a);
    group_tick(&coord(b)->groups, now);
}

/* --- OffsetCommit -------------------------------------------------------- */

/* An OffsetCommit the core may answer later: the decoded request and its
 * arena stay until commit_done. */
struct commit_req {
    struct kafka_request *req;
    struct arena arena;
    struct kafka_OffsetCommitRequest rq;
};

static int enc_commit(struct writer *w, int16_t v, const void *r)
{
    return kafka_offset_commit_response_encode(w, v, r);
}

/* Answers every partition with errors[k] (in request order), or all with
 * one error when errors is NULL. Frees cr. */
static void answer_commit(struct commit_req *cr, const int16_t *errors,
                          int16_t error)
{
    struct kafka_OffsetCommitResponseTopic *ts = NULL;
    int rv = arena_alloc(&cr->arena, (size_t)cr->rq.TopicsCnt, sizeof *ts,
                         (void **)&ts);
    size_t k = 0;
    for (int32_t i = 0; rv == RC_OK && i < cr->rq.TopicsCnt; i++) {
        const struct kafka_OffsetCommitRequestTopic *t = &cr->rq.Topics[i];
        struct kafka_OffsetCommitResponsePartition *ps = NULL;
        rv = arena_alloc(&cr->arena, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t j = 0; rv == RC_OK && j < t->PartitionsCnt; j++, k++) {
            ps[j] = (struct kafka_OffsetCommitResponsePartition){
                .PartitionIndex = t->Partitions[j].PartitionIndex,
                .ErrorCode = errors != NULL ? errors[k] : error};
        }
        ts[i] = (struct kafka_OffsetCommitResponseTopic){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        kafka_close_conn(cr->req, "out of memory");
    } else {
        struct kafka_OffsetCommitResponse resp = {
            .Topics = ts, .TopicsCnt = cr->rq.TopicsCnt};
        kafka_send(cr->req, enc_commit, &resp);
    }
    arena_free(&cr->arena);
    free(cr);
}

void kafka_group_commit_done(struct group_io *io, void *arg,
                             const int16_t *errors, size_t n)
{
    (void)io;
    (void)n;
    answer_commit(arg, errors, KAFKA_ERROR_NONE);
}

void kafka_handle_offset_commit(struct broker *b, struct kafka_request *req)
{
    struct commit_req *cr = calloc(1, sizeof *cr);
    if (cr == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    cr->req = req;
    arena_init(&cr->arena, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_offset_commit_request_decode(&r, req->api_version, &cr->arena, &cr->rq),
                 "OffsetCommit")) {
        arena_free(&cr->arena);
        free(cr);
        return;
    }
    int16_t err = coordinator_route(coord(b), cr->rq.GroupId);
    size_t n = 0;
    for (int32_t i = 0; i < cr->rq.TopicsCnt; i++) {
        n += (size_t)cr->rq.Topics[i].PartitionsCnt;
    }
    struct group_commit_partition *ps = NULL;
    if (err == KAFKA_ERROR_NONE && n > 0 &&
        arena_alloc(&cr->arena, n, sizeof *ps, (void **)&ps) != RC_OK) {
        err = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
    if (err != KAFKA_ERROR_NONE) {
        answer_commit(cr, NULL, err);
        return;
    }
    size_t k = 0;
    for (int32_t i = 0; i < cr->rq.TopicsCnt; i++) {
        const struct kafka_OffsetCommitRequestTopic *t = &cr->rq.Topics[i];
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            const struct kafka_OffsetCommitRequestPartition *p =
                &t->Partitions[j];
            ps[k++] = (struct group_commit_partition){
                .topic = t->Name, .partition = p->PartitionIndex,
                .offset = p->CommittedOffset,
                .leader_epoch = p->CommittedLeaderEpoch,
                .metadata = p->CommittedMetadata};
        }
    }
    struct group_commit_request gr = {
        .group_id = cr->rq.GroupId,
        .generation_id = cr->rq.GenerationIdOrMemberEpoch,
        .member_id = cr->rq.MemberId,
        .group_instance_id = cr->rq.GroupInstanceId,
        .partitions = ps, .n_partitions = n};
    int64_t now = now_ms(b);
    if (group_offset_commit(&coord(b)->groups, cr, &gr, now) != RC_OK) {
        answer_commit(cr, NULL, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    }
    group_tick(&coord(b)->groups, now);
}

/* --- OffsetFetch --------------------------------------------------------- */

static int enc_fetch(struct writer *w, int16_t v, const void *r)
{
    return kafka_offset_fetch_response_encode(w, v, r);
}

static struct kafka_OffsetFetchResponsePartition
fetched(const struct group_offset *o, int32_t partition, int16_t error)
{
    return (struct kafka_OffsetFetchResponsePartition){
        .PartitionIndex = partition,
        .CommittedOffset = o != NULL ? o->offset : -1,
        .CommittedLeaderEpoch = o != NULL ? o->leader_epoch : -1,
        .Metadata = o != NULL ? o->metadata : slice_from_str(""),
        .ErrorCode = error};
}

/* Every committed offset of g, grouped by topic (g->offsets is sorted). */
static int fetch_all(const struct group *g, struct arena *a,
                     struct kafka_OffsetFetchResponse *resp)
{
    size_t n_topics = 0;
    for (size_t i = 0; g != NULL && i < g->n_offsets; i++) {
        n_topics += i == 0 || !slice_eq(g->offsets[i].topic,
                                        g->offsets[i - 1].topic);
    }
    struct kafka_OffsetFetchResponseTopic *ts = NULL;
    int rv = arena_alloc(a, n_topics, sizeof *ts, (void **)&ts);
    size_t t = 0;
    for (size_t i = 0; rv == RC_OK && g != NULL && i < g->n_offsets;) {
        size_t j = i;
        while (j < g->n_offsets &&
               slice_eq(g->offsets[j].topic, g->offsets[i].topic)) {
            j++;
        }
        struct kafka_OffsetFetchResponsePartition *ps = NULL;
        rv = arena_alloc(a, j - i, sizeof *ps, (void **)&ps);
        for (size_t k = i; rv == RC_OK && k < j; k++) {
            ps[k - i] = fetched(&g->offsets[k], g->offsets[k].partition,
                                KAFKA_ERROR_NONE);
        }
        ts[t++] = (struct kafka_OffsetFetchResponseTopic){
            .Name = g->offsets[i].topic, .Partitions = ps,
            .PartitionsCnt = (int32_t)(j - i)};
        i = j;
    }
    resp->Topics = ts;
    resp->TopicsCnt = (int32_t)n_topics;
    return rv;
}

/* The offsets of one group for topics (null: every committed one), and
 * the group's error: routing (NOT_COORDINATOR, ...) as each partition's
 * error too, as Kafka's v0..1 need it. */
static int fetch_group(struct broker *b, struct arena *a, struct slice group_id,
                       const struct kafka_OffsetFetchRequestTopic *topics,
                       int32_t n_topics, int16_t *error,
                       struct kafka_OffsetFetchResponse *out)
{
    int16_t err = coordinator_route(coord(b), group_id);
    *error = err;
    out->Topics = NULL;
    out->TopicsCnt = 0;
    if (n_topics < 0) {
        return err == KAFKA_ERROR_NONE
                   ? fetch_all(group_find(&coord(b)->groups, group_id), a,
                               out)
                   : RC_OK;
    }
    struct kafka_OffsetFetchResponseTopic *ts = NULL;
    int rv = arena_alloc(a, (size_t)n_topics, sizeof *ts, (void **)&ts);
    for (int32_t i = 0; rv == RC_OK && i < n_topics; i++) {
        const struct kafka_OffsetFetchRequestTopic *t = &topics[i];
        struct kafka_OffsetFetchResponsePartition *ps = NULL;
        rv = arena_alloc(a, (size_t)t->PartitionIndexesCnt, sizeof *ps,
                         (void **)&ps);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionIndexesCnt; k++) {
            int32_t id = t->PartitionIndexes[k];
            const struct group_offset *o =
                err == KAFKA_ERROR_NONE
                    ? group_offset_get(&coord(b)->groups, group_id, t->Name,
                                       id)
                    : NULL;
            ps[k] = fetched(o, id, err);
        }
        ts[i] = (struct kafka_OffsetFetchResponseTopic){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionIndexesCnt};
    }
    out->Topics = ts;
    out->TopicsCnt = n_topics;
    return rv;
}

/* v8+ (KIP-709): each group in order; a group that fails routing gets
 * its error and no topics, as Kafka. MemberId and MemberEpoch (v9) are
 * for the new consumer protocol: a classic group ignores them. */
static int fetch_groups(struct broker *b, struct arena *a,
                        const struct kafka_OffsetFetchRequest *rq,
                        struct kafka_OffsetFetchResponse *resp)
{
    struct kafka_OffsetFetchResponseGroup *gs = NULL;
    int rv = arena_alloc(a, (size_t)rq->GroupsCnt, sizeof *gs, (void **)&gs);
    for (int32_t i = 0; rv == RC_OK && i < rq->GroupsCnt; i++) {
        const struct kafka_OffsetFetchRequestGroup *g = &rq->Groups[i];
        struct kafka_OffsetFetchResponse one;
        int16_t err;
        rv = fetch_group(b, a, g->GroupId, g->Topics, g->TopicsCnt, &err,
                         &one);
        gs[i] = (struct kafka_OffsetFetchResponseGroup){
            .GroupId = g->GroupId, .ErrorCode = err,
            .Topics = err == KAFKA_ERROR_NONE ? one.Topics : NULL,
            .TopicsCnt = err == KAFKA_ERROR_NONE ? one.TopicsCnt : 0};
    }
    resp->Groups = gs;
    resp->GroupsCnt = rq->GroupsCnt;
    return rv;
}

/* RequireStable (v7+) changes nothing: without transactions no offset
 * is ever pending. */
void kafka_handle_offset_fetch(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_OffsetFetchRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_offset_fetch_request_decode(&r, req->api_version, &a, &rq),
                 "OffsetFetch")) {
        arena_free(&a);
        return;
    }
    struct kafka_OffsetFetchResponse resp = {.ErrorCode = KAFKA_ERROR_NONE};
    int rv;
    if (req->api_version >= 8) {
        rv = fetch_groups(b, &a, &rq, &resp);
    } else {
        int16_t err;
        rv = fetch_group(b, &a, rq.GroupId, rq.Topics, rq.TopicsCnt, &err,
                         &resp);
        resp.ErrorCode = req->api_version >= 2 ? err : KAFKA_ERROR_NONE;
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "out of memory");
    } else {
        kafka_send(req, enc_fetch, &resp);
    }
    arena_free(&a);
}

/* --- DescribeGroups / ListGroups / DeleteGroups -------------------------- */

static int enc_describe(struct writer *w, int16_t v, const void *r)
{
    return kafka_describe_groups_response_encode(w, v, r);
}

static int describe_one(struct broker *b, struct slice id, struct arena *a,
                        struct kafka_DescribedGroup *out)
{
    *out = (struct kafka_DescribedGroup){
        .GroupId = id, .GroupState = slice_from_str("Dead"),
        .ProtocolType = slice_from_str(""), .ProtocolData = slice_from_str(""),
        .AuthorizedOperations = INT32_MIN};
    out->ErrorCode = coordinator_route(coord(b), id);
    if (out->ErrorCode != KAFKA_ERROR_NONE) {
        return RC_OK;
    }
    const struct group *g = group_find(&coord(b)->groups, id);
    out->GroupState = slice_from_str(group_state_name(g));
    if (g == NULL) {
        return RC_OK;
    }
    out->ProtocolType = group_summary_protocol_type(g);
    out->ProtocolData = group_summary_protocol(g);
    struct kafka_DescribedGroupMember *ms = NULL;
    int rv = arena_alloc(a, g->n_members, sizeof *ms, (void **)&ms);
    for (size_t i = 0; rv == RC_OK && i < g->n_members; i++) {
        struct group_member_summary s;
        group_summary_member(g, i, &s);
        ms[i] = (struct kafka_DescribedGroupMember){
            .MemberId = s.member_id, .GroupInstanceId = s.group_instance_id,
            .ClientId = s.client_id, .ClientHost = s.client_host,
            .MemberMetadata = s.metadata, .MemberAssignment = s.assignment};
    }
    out->Members = ms;
    out->MembersCnt = (int32_t)g->n_members;
    return rv;
}

void kafka_handle_describe_groups(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_DescribeGroupsRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_describe_groups_request_decode(&r, req->api_version, &a, &rq),
                 "DescribeGroups")) {
        arena_free(&a);
        return;
    }
    struct kafka_DescribedGroup *gs = NULL;
    int rv = arena_alloc(&a, (size_t)rq.GroupsCnt, sizeof *gs, (void **)&gs);
    for (int32_t i = 0; rv == RC_OK && i < rq.GroupsCnt; i++) {
        rv = describe_one(b, rq.Groups[i], &a, &gs[i]);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "out of memory");
    } else {
        struct kafka_DescribeGroupsResponse resp = {
            .Groups = gs, .GroupsCnt = rq.GroupsCnt};
        kafka_send(req, enc_describe, &resp);
    }
    arena_free(&a);
}

static int enc_list(struct writer *w, int16_t v, const void *r)
{
    return kafka_list_groups_response_encode(w, v, r);
}

/* Whether name is among filter, ignoring ASCII case (Kafka lowercases
 * both sides); an empty filter takes everything. */
static bool listed_by(const struct slice *filter, int32_t n, const char *name)
{
    if (n <= 0) {
        return true;
    }
    size_t len = strlen(name);
    for (int32_t i = 0; i < n; i++) {
        if (filter[i].len == len &&
            strncasecmp((const char *)filter[i].ptr, name, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Only the groups this broker coordinates, as Kafka: clients ask every
 * broker and merge. StatesFilter (v4+) takes Kafka's state names in any
 * case; TypesFilter (v5+) lists Cairn's groups, all classic (Kafka's old
 * coordinator), for "classic" only. */
void kafka_handle_list_groups(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_ListGroupsRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_list_groups_request_decode(&r, req->api_version, &a, &rq),
                 "ListGroups")) {
        arena_free(&a);
        return;
    }
    const struct groups *gs = &coord(b)->groups;
    struct kafka_ListedGroup *ls = NULL;
    int rv = arena_alloc(&a, gs->n, sizeof *ls, (void **)&ls);
    size_t n = 0;
    for (size_t i = 0; rv == RC_OK && i < gs->n; i++) {
        const char *state = group_state_name(gs->v[i]);
        if (!listed_by(rq.StatesFilter, rq.StatesFilterCnt, state) ||
            !listed_by(rq.TypesFilter, rq.TypesFilterCnt, "classic")) {
            continue;
        }
        ls[n++] = (struct kafka_ListedGroup){
            .GroupId = gs->v[i]->id,
            .ProtocolType = group_summary_protocol_type(gs->v[i]),
            .GroupState = slice_from_str(state),
            .GroupType = slice_from_str("classic")};
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "out of memory");
    } else {
        struct kafka_ListGroupsResponse resp = {.Groups = ls,
                                                .GroupsCnt = (int32_t)n};
        kafka_send(req, enc_list, &resp);
    }
    arena_free(&a);
}

static int enc_delete(struct writer *w, int16_t v, const void *r)
{
    return kafka_delete_groups_response_encode(w, v, r);
}

void kafka_handle_delete_groups(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_DeleteGroupsRequest rq;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    if (!decoded(req, kafka_delete_groups_request_decode(&r, req->api_version, &a, &rq),
                 "DeleteGroups")) {
        arena_free(&a);
        return;
    }
    struct kafka_DeletableGroupResult *rs = NULL;
    int rv = arena_alloc(&a, (size_t)rq.GroupsNamesCnt, sizeof *rs,
                         (void **)&rs);
    for (int32_t i = 0; rv == RC_OK && i < rq.GroupsNamesCnt; i++) {
        struct slice id = rq.GroupsNames[i];
        int16_t err = coordinator_route(coord(b), id);
        if (err == KAFKA_ERROR_NONE) {
            err = group_delete(&coord(b)->groups, id);
        }
        rs[i] = (struct kafka_DeletableGroupResult){.GroupId = id,
                                                    .ErrorCode = err};
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "out of memory");
    } else {
        struct kafka_DeleteGroupsResponse resp = {
            .Results = rs, .ResultsCnt = rq.GroupsNamesCnt};
        kafka_send(req, enc_delete, &resp);
    }
    arena_free(&a);
}
