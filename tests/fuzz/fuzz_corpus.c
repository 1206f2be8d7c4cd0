/* Seed corpus for tests/fuzz/fuzz_kafka_request.c, written by the codec's
 * own request encoders (common/kafka/kafka_codec.h), so the seeds follow the
 * codec when a field list or a version range changes. One file per API
 * and version in the codec's range, in the fuzz target's input format:
 * ApiKey (int16, big-endian), ApiVersion (int16, big-endian), then the
 * request body; plus librdkafka's flexible ApiVersions v3 body, which the
 * codec does not encode. Built and run by `make fuzz`:
 *     fuzz_corpus DIR
 * A command-line tool: one thread, exits non-zero on any failure. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/rc.h"
#include "common/writer.h"

#define FUZZ_CORPUS__BODY_BYTES_MAX (1u << 20)

#define S(str) slice_from_str(str)

/* Record bytes are opaque to the request codec; these look like the
 * start of a RecordBatch v2 header and are long enough to be one. */
static const uint8_t fuzz_corpus_records[61] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 2, 0x1c, 0x4f, 0x2b,
    0x99, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0, 0, 0,
    0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0};

/* Writes key, version and the body as DIR/NAME. */
static bool fuzz_corpus_write(const char *dir, const char *name,
                              int16_t api_key, int16_t version,
                              const struct writer *body)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "fuzz_corpus: path too long: %s/%s\n", dir, name);
        return false;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "fuzz_corpus: %s: %s\n", path, strerror(errno));
        return false;
    }
    uint8_t head[4] = {(uint8_t)((uint16_t)api_key >> 8), (uint8_t)api_key,
                       (uint8_t)((uint16_t)version >> 8), (uint8_t)version};
    bool ok = fwrite(head, 1, sizeof head, f) == sizeof head;
    if (body->len > 0) {
        ok = ok && fwrite(body->data, 1, body->len, f) == body->len;
    }
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "fuzz_corpus: %s: write failed\n", path);
    }
    return ok;
}

/* Two sample requests per API (variant 0 and 1: null versus set
 * nullable fields, one versus several entries, flags off versus on). */
static const struct kafka_MetadataRequestTopic fuzz_corpus_md_topics[] = {
    {.Name = {(const uint8_t *)"orders", 6}},
    {.Name = {(const uint8_t *)"payments", 8},
     .TopicId = {{0x41, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15,
                  16}}},
};
/* DeleteTopics v6: one topic by name, one by id. */
static const struct kafka_DeleteTopicState fuzz_corpus_dt[] = {
    {.Name = {(const uint8_t *)"orders", 6}},
    {.Name = {NULL, 0},
     .TopicId = {{0x41, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15,
                  16}}},
};
static const struct kafka_PartitionProduceData fuzz_corpus_pd[] = {
    {.PartitionIndex = 0,
     .Records = {fuzz_corpus_records, sizeof fuzz_corpus_records}},
    {.PartitionIndex = 1, .Records = {NULL, 0}},
};
static const struct kafka_FetchPartition fuzz_corpus_fp[] = {
    {.PartitionIndex = 0, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
     .LastFetchedEpoch = -1, .LogStartOffset = -1,
     .PartitionMaxBytes = 1048576},
    {.PartitionIndex = 1, .CurrentLeaderEpoch = 5, .FetchOffset = 42,
     .LastFetchedEpoch = 4, .LogStartOffset = 0, .PartitionMaxBytes = 65536},
};
static const int32_t fuzz_corpus_ids[] = {1, 2, 3};
static const struct kafka_ListOffsetsPartition fuzz_corpus_lp[] = {
    {.PartitionIndex = 0, .CurrentLeaderEpoch = -1, .Timestamp = -1},
    {.PartitionIndex = 1, .CurrentLeaderEpoch = 3, .Timestamp = -2},
    {.PartitionIndex = 2, .CurrentLeaderEpoch = -1,
     .Timestamp = 1700000000000},
};
static const struct kafka_CreatableReplicaAssignment fuzz_corpus_assign[] = {
    {.PartitionIndex = 0, .BrokerIds = fuzz_corpus_ids, .BrokerIdsCnt = 3},
    {.PartitionIndex = 1, .BrokerIds = fuzz_corpus_ids + 1,
     .BrokerIdsCnt = 2},
};
static const struct kafka_CreateableTopicConfig fuzz_corpus_configs[] = {
    {.Name = {(const uint8_t *)"cleanup.policy", 14},
     .Value = {(const uint8_t *)"compact", 7}},
    {.Name = {(const uint8_t *)"retention.ms", 12}, .Value = {NULL, 0}},
};
static const struct slice fuzz_corpus_names[] = {
    {(const uint8_t *)"a", 1},
    {(const uint8_t *)"orders", 6},
};

static int fuzz_corpus_encode_fetch(struct writer *w, int16_t version,
                                    int variant)
{
    const struct kafka_FetchableTopic ft = {
        .Name = S("orders"), .TopicId = {{0x5e, [15] = 0x01}},
        .Partitions = fuzz_corpus_fp, .PartitionsCnt = 2};
    const struct kafka_ForgottenTopic fg = {
        .Name = S("old"), .TopicId = {{0x07, [15] = 0x02}},
        .ForgottenPartitionIndexes = fuzz_corpus_ids,
        .ForgottenPartitionIndexesCnt = 2};
    /* variant 1 is a follower's (v15+: the tagged ReplicaState). */
    const struct kafka_FetchRequest m = {
        .ReplicaId = variant == 0 ? -1 : 2, .ReplicaEpoch = -1,
        .MaxWaitMs = 500, .MinBytes = 1,
        .MaxBytes = 52428800, .IsolationLevel = 1,
        .SessionId = variant, .SessionEpoch = variant == 0 ? -1 : 3,
        .Topics = &ft, .TopicsCnt = 1,
        .ForgottenTopicsData = variant == 0 ? NULL : &fg,
        .ForgottenTopicsDataCnt = variant == 0 ? 0 : 1,
        .RackId = S(variant == 0 ? "" : "rack-a")};
    return kafka_fetch_request_encode(w, version, &m);
}

static int fuzz_corpus_encode_admin(struct writer *w, int16_t api_key,
                                    int16_t version, int variant)
{
    const struct kafka_CreatableTopic ct[] = {
        {.Name = S("orders"), .NumPartitions = 3, .ReplicationFactor = 1,
         .Configs = fuzz_corpus_configs, .ConfigsCnt = 2},
        {.Name = S("placed"), .NumPartitions = -1, .ReplicationFactor = -1,
         .Assignments = fuzz_corpus_assign, .AssignmentsCnt = 2},
    };
    const struct kafka_DescribeConfigsResource dr[] = {
        {.ResourceType = 2, .ResourceName = S("orders"),
         .ConfigurationKeys = NULL, .ConfigurationKeysCnt = -1},
        {.ResourceType = 4, .ResourceName = S("1"),
         .ConfigurationKeys = fuzz_corpus_names, .ConfigurationKeysCnt = 2},
    };
    if (api_key == KAFKA_API_CREATE_TOPICS) {
        const struct kafka_CreateTopicsRequest m = {
            .Topics = ct, .TopicsCnt = variant == 0 ? 1 : 2,
            .TimeoutMs = 30000, .ValidateOnly = variant != 0};
        return kafka_create_topics_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_DELETE_TOPICS) {
        const struct kafka_DeleteTopicsRequest m = {
            .TopicNames = fuzz_corpus_names,
            .TopicNamesCnt = variant == 0 ? 1 : 2, .TimeoutMs = 30000,
            .Topics = fuzz_corpus_dt, .TopicsCnt = variant == 0 ? 1 : 2};
        return kafka_delete_topics_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_DESCRIBE_CONFIGS) {
        const struct kafka_DescribeConfigsRequest m = {
            .Resources = dr, .ResourcesCnt = variant == 0 ? 1 : 2,
            .IncludeSynonyms = variant != 0,
            .IncludeDocumentation = variant != 0};
        return kafka_describe_configs_request_encode(w, version, &m);
    }
    const struct kafka_InitProducerIdRequest m = {
        .TransactionalId = variant == 0 ? slice_null() : S("tx-1"),
        .TransactionTimeoutMs = variant == 0 ? -1 : 60000,
        .ProducerId = variant == 0 ? -1 : 4000,
        .ProducerEpoch = variant == 0 ? -1 : 2};
    return kafka_init_producer_id_request_encode(w, version, &m);
}

static const struct kafka_OffsetForLeaderPartition fuzz_corpus_ep[] = {
    {.Partition = 0, .CurrentLeaderEpoch = -1, .LeaderEpoch = 0},
    {.Partition = 1, .CurrentLeaderEpoch = 7, .LeaderEpoch = 5},
    {.Partition = 2, .CurrentLeaderEpoch = 7, .LeaderEpoch = 7},
};

static int fuzz_corpus_encode_delete_records(struct writer *w,
                                             int16_t version, int variant)
{
    const struct kafka_DeleteRecordsPartition parts[] = {{0, 120}, {2, -1}};
    const struct kafka_DeleteRecordsTopic t = {
        .Name = S("orders"), .Partitions = parts,
        .PartitionsCnt = variant == 0 ? 1 : 2};
    const struct kafka_DeleteRecordsRequest m = {
        .Topics = &t, .TopicsCnt = 1, .TimeoutMs = 30000};
    return kafka_delete_records_request_encode(w, version, &m);
}

/* ElectLeaders: variant 0 every partition (null list), 1 two named. */
static int fuzz_corpus_encode_elect(struct writer *w, int16_t version,
                                    int variant)
{
    static const int32_t ids[] = {0, 2};
    const struct kafka_ElectLeadersTopicPartitions t = {
        .Topic = S("orders"), .Partitions = ids, .PartitionsCnt = 2};
    const struct kafka_ElectLeadersRequest m = {
        .ElectionType = (int8_t)(version >= 1 ? variant : 0),
        .TopicPartitions = variant == 0 ? NULL : &t,
        .TopicPartitionsCnt = variant == 0 ? -1 : 1, .TimeoutMs = 60000};
    return kafka_elect_leaders_request_encode(w, version, &m);
}

static int fuzz_corpus_encode_epoch(struct writer *w, int16_t version,
                                    int variant)
{
    const struct kafka_OffsetForLeaderTopic et[] = {
        {.Topic = S("orders"), .Partitions = fuzz_corpus_ep,
         .PartitionsCnt = variant == 0 ? 1 : 3},
        {.Topic = S("payments"), .Partitions = fuzz_corpus_ep + 1,
         .PartitionsCnt = 2},
    };
    const struct kafka_OffsetForLeaderEpochRequest m = {
        .ReplicaId = variant == 0 ? -1 : 2, /* consumer, follower 2 */
        .Topics = et, .TopicsCnt = variant == 0 ? 1 : 2};
    return kafka_offset_for_leader_epoch_request_encode(w, version, &m);
}

/* Consumer groups: variant 0 is a first join or a simple commit (empty
 * member id, null instance id, null or empty arrays where allowed),
 * variant 1 a static member with several entries. */
static const uint8_t fuzz_corpus_member_meta[] = {
    0, 1, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 0};
static const struct kafka_JoinGroupRequestProtocol fuzz_corpus_protocols[] = {
    {.Name = {(const uint8_t *)"range", 5},
     .Metadata = {fuzz_corpus_member_meta, sizeof fuzz_corpus_member_meta}},
    {.Name = {(const uint8_t *)"roundrobin", 10},
     .Metadata = {fuzz_corpus_member_meta, sizeof fuzz_corpus_member_meta}},
};
static const struct kafka_SyncGroupRequestAssignment fuzz_corpus_assigns[] = {
    {.MemberId = {(const uint8_t *)"m-1", 3},
     .Assignment = {fuzz_corpus_member_meta, sizeof fuzz_corpus_member_meta}},
    {.MemberId = {(const uint8_t *)"m-2", 3},
     .Assignment = {fuzz_corpus_member_meta, 0}},
};
static const struct kafka_MemberIdentity fuzz_corpus_leavers[] = {
    {.MemberId = {(const uint8_t *)"m-1", 3},
     .GroupInstanceId = {(const uint8_t *)"inst-1", 6},
     .Reason = {(const uint8_t *)"shutdown", 8}},
    {.MemberId = {(const uint8_t *)"m-2", 3}, .GroupInstanceId = {NULL, 0},
     .Reason = {NULL, 0}},
};
static const struct kafka_OffsetCommitRequestPartition fuzz_corpus_commits[] = {
    {.PartitionIndex = 0, .CommittedOffset = 42, .CommittedLeaderEpoch = -1,
     .CommittedMetadata = {NULL, 0}},
    {.PartitionIndex = 1, .CommittedOffset = 7, .CommittedLeaderEpoch = 3,
     .CommittedMetadata = {(const uint8_t *)"m", 1}},
};

static int fuzz_corpus_encode_membership(struct writer *w, int16_t api_key,
                                         int16_t version, int variant)
{
    const struct slice member = S(variant == 0 ? "" : "m-1");
    const struct slice instance = variant == 0 ? slice_null() : S("inst-1");
    if (api_key == KAFKA_API_FIND_COORDINATOR) {
        const struct kafka_FindCoordinatorRequest m = {
            .Key = S(variant == 0 ? "cg" : "tx-1"),
            .KeyType = (int8_t)variant, .CoordinatorKeys = fuzz_corpus_names,
            .CoordinatorKeysCnt = variant == 0 ? 1 : 2};
        return kafka_find_coordinator_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_JOIN_GROUP) {
        const struct kafka_JoinGroupRequest m = {
            .GroupId = S("cg"), .SessionTimeoutMs = 45000,
            .RebalanceTimeoutMs = 300000, .MemberId = member,
            .GroupInstanceId = instance, .ProtocolType = S("consumer"),
            .Protocols = fuzz_corpus_protocols,
            .ProtocolsCnt = variant == 0 ? 1 : 2,
            .Reason = variant == 0 ? slice_null() : S("rebalance")};
        return kafka_join_group_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_HEARTBEAT) {
        const struct kafka_HeartbeatRequest m = {
            .GroupId = S("cg"), .GenerationId = variant + 1,
            .MemberId = S("m-1"), .GroupInstanceId = instance};
        return kafka_heartbeat_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_LEAVE_GROUP) {
        const struct kafka_LeaveGroupRequest m = {
            .GroupId = S("cg"), .MemberId = S("m-1"),
            .Members = fuzz_corpus_leavers,
            .MembersCnt = variant == 0 ? 1 : 2};
        return kafka_leave_group_request_encode(w, version, &m);
    }
    const struct kafka_SyncGroupRequest m = {
        .GroupId = S("cg"), .GenerationId = 1, .MemberId = S("m-1"),
        .GroupInstanceId = instance,
        .ProtocolType = variant == 0 ? slice_null() : S("consumer"),
        .ProtocolName = variant == 0 ? slice_null() : S("range"),
        .Assignments = fuzz_corpus_assigns,
        .AssignmentsCnt = variant == 0 ? 0 : 2}; /* follower, leader */
    return kafka_sync_group_request_encode(w, version, &m);
}

static int fuzz_corpus_encode_group_admin(struct writer *w, int16_t api_key,
                                          int16_t version, int variant)
{
    if (api_key == KAFKA_API_OFFSET_COMMIT) {
        const struct kafka_OffsetCommitRequestTopic t = {
            .Name = S("orders"), .Partitions = fuzz_corpus_commits,
            .PartitionsCnt = variant == 0 ? 1 : 2};
        const struct kafka_OffsetCommitRequest m = {
            .GroupId = S("cg"),
            .GenerationIdOrMemberEpoch = variant == 0 ? -1 : 3,
            .MemberId = S(variant == 0 ? "" : "m-1"),
            .GroupInstanceId = variant == 0 ? slice_null() : S("inst-1"),
            .RetentionTimeMs = -1, .Topics = &t, .TopicsCnt = 1};
        return kafka_offset_commit_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_OFFSET_FETCH) {
        const struct kafka_OffsetFetchRequestTopic t = {
            .Name = S("orders"), .PartitionIndexes = fuzz_corpus_ids,
            .PartitionIndexesCnt = 3};
        /* Null (all topics) exists from v2. */
        bool all = variant == 0 && version >= 2;
        /* v8+: two groups, one asking for all topics. */
        const struct kafka_OffsetFetchRequestGroup gs[2] = {
            {.GroupId = S("cg"), .MemberId = slice_null(), .MemberEpoch = -1,
             .Topics = &t, .TopicsCnt = 1},
            {.GroupId = S("cg-2"), .MemberId = S("m-1"), .MemberEpoch = 4,
             .Topics = NULL, .TopicsCnt = -1}};
        const struct kafka_OffsetFetchRequest m = {
            .GroupId = S("cg"), .Topics = all ? NULL : &t,
            .TopicsCnt = all ? -1 : 1, .Groups = gs,
            .GroupsCnt = variant == 0 ? 1 : 2, .RequireStable = variant != 0};
        return kafka_offset_fetch_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_DESCRIBE_GROUPS) {
        const struct kafka_DescribeGroupsRequest m = {
            .Groups = fuzz_corpus_names,
            .GroupsCnt = variant == 0 ? 1 : 2,
            .IncludeAuthorizedOperations = variant != 0};
        return kafka_describe_groups_request_encode(w, version, &m);
    }
    if (api_key == KAFKA_API_LIST_GROUPS) {
        const struct kafka_ListGroupsRequest m = {
            fuzz_corpus_names, variant, fuzz_corpus_names, variant};
        return kafka_list_groups_request_encode(w, version, &m);
    }
    const struct kafka_DeleteGroupsRequest m = {
        .GroupsNames = fuzz_corpus_names,
        .GroupsNamesCnt = variant == 0 ? 1 : 2};
    return kafka_delete_groups_request_encode(w, version, &m);
}

/* CreatePartitions: placed by the controller (variant 0) or assigned. */
static int fuzz_corpus_encode_create_partitions(struct writer *w,
                                                int16_t version, int variant)
{
    static const int32_t ids[] = {1, 2, 3};
    const struct kafka_CreatePartitionsAssignment as[] = {{ids, 3},
                                                          {ids, 2}};
    const struct kafka_CreatePartitionsTopic t = {
        .Name = S("orders"), .Count = 5,
        .Assignments = variant == 0 ? NULL : as,
        .AssignmentsCnt = variant == 0 ? -1 : 2};
    const struct kafka_CreatePartitionsRequest m = {
        .Topics = &t, .TopicsCnt = 1, .TimeoutMs = 30000,
        .ValidateOnly = variant != 0};
    return kafka_create_partitions_request_encode(w, version, &m);
}

/* DescribeLogDirs (every partition, or two named) and DescribeCluster. */
static int fuzz_corpus_encode_cluster(struct writer *w, int16_t api_key,
                                      int16_t version, int variant)
{
    if (api_key == KAFKA_API_DESCRIBE_CLUSTER) {
        const struct kafka_DescribeClusterRequest m = {
            .IncludeClusterAuthorizedOperations = variant != 0,
            .EndpointType = (int8_t)(variant == 0 ? 1 : 2)};
        return kafka_describe_cluster_request_encode(w, version, &m);
    }
    static const int32_t ps[] = {0, 1};
    const struct kafka_DescribableLogDirTopic t = {S("orders"), ps, 2};
    const struct kafka_DescribeLogDirsRequest m = {
        .Topics = variant == 0 ? NULL : &t,
        .TopicsCnt = variant == 0 ? -1 : 1};
    return kafka_describe_log_dirs_request_encode(w, version, &m);
}

/* AlterConfigs and IncrementalAlterConfigs: a topic's SET and DELETE
 * (variant 1 adds an APPEND and a broker resource). */
static int fuzz_corpus_encode_alter_configs(struct writer *w,
                                            int16_t api_key,
                                            int16_t version, int variant)
{
    const struct kafka_AlterableConfig cs[3] = {
        {S("retention.ms"), 0, S("1000")},
        {S("segment.ms"), 1, slice_null()},
        {S("cleanup.policy"), 2, S("compact")}};
    const struct kafka_AlterConfigsResource res[2] = {
        {2, S("orders"), cs, variant == 0 ? 2 : 3}, {4, S("1"), cs, 1}};
    if (api_key == KAFKA_API_ALTER_CONFIGS) {
        const struct kafka_AlterConfigsRequest m = {res, 1 + variant,
                                                    variant != 0};
        return kafka_alter_configs_request_encode(w, version, &m);
    }
    const struct kafka_IncrementalAlterConfigsRequest m = {
        res, 1 + variant, variant != 0};
    return kafka_incremental_alter_configs_request_encode(w, version, &m);
}

/* Reassignment requests: variant 0 a move and a cancel, 1 a list of all. */
static int fuzz_corpus_encode_reassign(struct writer *w, int16_t api_key,
                                       int16_t version, int variant)
{
    static const int32_t target[3] = {4, 2, 3};
    static const int32_t parts[2] = {0, 1};
    if (api_key == KAFKA_API_ALTER_PARTITION_REASSIGNMENTS) {
        const struct kafka_ReassignablePartition ps[2] = {
            {0, target, 3}, {1, NULL, -1}};
        const struct kafka_ReassignableTopic t = {S("orders"), ps,
                                                  variant == 0 ? 2 : 1};
        const struct kafka_AlterPartitionReassignmentsRequest m = {60000, &t,
                                                                   1};
        return kafka_alter_partition_reassignments_request_encode(w, version,
                                                                  &m);
    }
    if (api_key == KAFKA_API_UNREGISTER_BROKER) {
        const struct kafka_UnregisterBrokerRequest m = {variant == 0 ? 4 : -1};
        return kafka_unregister_broker_request_encode(w, version, &m);
    }
    const struct kafka_ListPartitionReassignmentsTopics t = {S("orders"),
                                                             parts, 2};
    const struct kafka_ListPartitionReassignmentsRequest m = {
        60000, variant == 0 ? &t : NULL, variant == 0 ? 1 : -1};
    return kafka_list_partition_reassignments_request_encode(w, version, &m);
}

/* Encodes sample `variant` of api_key's request at version into w. */
static int fuzz_corpus_encode(struct writer *w, int16_t api_key,
                              int16_t version, int variant)
{
    switch (api_key) {
    case KAFKA_API_API_VERSIONS: {
        const struct kafka_ApiVersionsRequest m = {
            slice_from_str("cairn-fuzz"), slice_from_str("1.0")};
        return kafka_api_versions_request_encode(w, version, &m);
    }
    case KAFKA_API_METADATA: {
        const struct kafka_MetadataRequest m = {
            .Topics = variant == 0 ? fuzz_corpus_md_topics : NULL,
            .TopicsCnt = variant == 0 ? 2 : -1,
            .AllowAutoTopicCreation = true,
            .IncludeClusterAuthorizedOperations = variant != 0,
            .IncludeTopicAuthorizedOperations = variant != 0};
        return kafka_metadata_request_encode(w, version, &m);
    }
    case KAFKA_API_PRODUCE: {
        const struct kafka_TopicProduceData td = {
            .Name = S("orders"), .Partitions = fuzz_corpus_pd,
            .PartitionsCnt = 2};
        const struct kafka_ProduceRequest m = {
            .TransactionalId = variant == 0 ? slice_null() : S("tx-1"),
            .Acks = (int16_t)(variant == 0 ? -1 : 1), .TimeoutMs = 30000,
            .Topics = &td, .TopicsCnt = 1};
        return kafka_produce_request_encode(w, version, &m);
    }
    case KAFKA_API_FETCH:
        return fuzz_corpus_encode_fetch(w, version, variant);
    case KAFKA_API_LIST_OFFSETS: {
        const struct kafka_ListOffsetsTopic lt = {
            .Name = S("orders"), .Partitions = fuzz_corpus_lp,
            .PartitionsCnt = 3};
        const struct kafka_ListOffsetsRequest m = {
            .ReplicaId = -1, .IsolationLevel = (int8_t)variant,
            .Topics = &lt, .TopicsCnt = 1};
        return kafka_list_offsets_request_encode(w, version, &m);
    }
    case KAFKA_API_CREATE_TOPICS:
    case KAFKA_API_DELETE_TOPICS:
    case KAFKA_API_DESCRIBE_CONFIGS:
    case KAFKA_API_INIT_PRODUCER_ID:
        return fuzz_corpus_encode_admin(w, api_key, version, variant);
    case KAFKA_API_OFFSET_FOR_LEADER_EPOCH:
        return fuzz_corpus_encode_epoch(w, version, variant);
    case KAFKA_API_DELETE_RECORDS:
        return fuzz_corpus_encode_delete_records(w, version, variant);
    case KAFKA_API_ELECT_LEADERS:
        return fuzz_corpus_encode_elect(w, version, variant);
    case KAFKA_API_FIND_COORDINATOR:
    case KAFKA_API_JOIN_GROUP:
    case KAFKA_API_HEARTBEAT:
    case KAFKA_API_LEAVE_GROUP:
    case KAFKA_API_SYNC_GROUP:
        return fuzz_corpus_encode_membership(w, api_key, version, variant);
    case KAFKA_API_OFFSET_COMMIT:
    case KAFKA_API_OFFSET_FETCH:
    case KAFKA_API_DESCRIBE_GROUPS:
    case KAFKA_API_LIST_GROUPS:
    case KAFKA_API_DELETE_GROUPS:
        return fuzz_corpus_encode_group_admin(w, api_key, version, variant);
    case KAFKA_API_CREATE_PARTITIONS:
        return fuzz_corpus_encode_create_partitions(w, version, variant);
    case KAFKA_API_DESCRIBE_LOG_DIRS:
    case KAFKA_API_DESCRIBE_CLUSTER:
        return fuzz_corpus_encode_cluster(w, api_key, version, variant);
    case KAFKA_API_ALTER_CONFIGS:
    case KAFKA_API_INCREMENTAL_ALTER_CONFIGS:
        return fuzz_corpus_encode_alter_configs(w, api_key, version, variant);
    case KAFKA_API_ALTER_PARTITION_REASSIGNMENTS:
    case KAFKA_API_LIST_PARTITION_REASSIGNMENTS:
    case KAFKA_API_UNREGISTER_BROKER:
        return fuzz_corpus_encode_reassign(w, api_key, version, variant);
    default:
        return RC_INVALID;
    }
}

/* The codec's range for api_key; false for an ApiKey it does not know. */
static bool fuzz_corpus_range(int16_t api_key, int16_t *min, int16_t *max)
{
    return kafka_codec_version_range(api_key, min, max);
}

/* librdkafka's ApiVersions v3 body (compact strings, tagged fields). */
static bool fuzz_corpus_api_versions_v3(const char *dir)
{
    struct writer w;
    writer_init(&w, FUZZ_CORPUS__BODY_BYTES_MAX);
    writer_compact_string(&w, "librdkafka", 10);
    writer_compact_string(&w, "2.0.2", 5);
    writer_empty_tagged_fields(&w);
    bool ok = w.rc == RC_OK &&
              fuzz_corpus_write(dir, "18-v3-librdkafka", KAFKA_API_API_VERSIONS,
                                3, &w);
    writer_free(&w);
    return ok;
}

int main(int argc, char **argv)
{
    static const int16_t keys[] = {
        KAFKA_API_PRODUCE,         KAFKA_API_FETCH,
        KAFKA_API_LIST_OFFSETS,    KAFKA_API_METADATA,
        KAFKA_API_API_VERSIONS,    KAFKA_API_CREATE_TOPICS,
        KAFKA_API_DELETE_TOPICS,   KAFKA_API_DELETE_RECORDS,
        KAFKA_API_INIT_PRODUCER_ID,
        KAFKA_API_DESCRIBE_CONFIGS, KAFKA_API_OFFSET_FOR_LEADER_EPOCH,
        KAFKA_API_FIND_COORDINATOR, KAFKA_API_JOIN_GROUP,
        KAFKA_API_HEARTBEAT,       KAFKA_API_LEAVE_GROUP,
        KAFKA_API_SYNC_GROUP,      KAFKA_API_OFFSET_COMMIT,
        KAFKA_API_OFFSET_FETCH,    KAFKA_API_DESCRIBE_GROUPS,
        KAFKA_API_LIST_GROUPS,     KAFKA_API_DELETE_GROUPS,
        KAFKA_API_CREATE_PARTITIONS, KAFKA_API_DESCRIBE_LOG_DIRS,
        KAFKA_API_DESCRIBE_CLUSTER, KAFKA_API_ELECT_LEADERS,
        KAFKA_API_ALTER_CONFIGS, KAFKA_API_INCREMENTAL_ALTER_CONFIGS,
        KAFKA_API_ALTER_PARTITION_REASSIGNMENTS,
        KAFKA_API_LIST_PARTITION_REASSIGNMENTS,
        KAFKA_API_UNREGISTER_BROKER};

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    struct writer w;
    writer_init(&w, FUZZ_CORPUS__BODY_BYTES_MAX);
    int n_files = 0;
    bool ok = true;
    for (size_t k = 0; ok && k < sizeof keys / sizeof keys[0]; k++) {
        int16_t min = 0;
        int16_t max = 0;
        if (!fuzz_corpus_range(keys[k], &min, &max)) {
            fprintf(stderr, "fuzz_corpus: codec lost ApiKey %d\n", keys[k]);
            ok = false;
            break;
        }
        for (int16_t v = min; ok && v <= max; v++) {
            for (int variant = 0; ok && variant < 2; variant++) {
                writer_reset(&w);
                int rc = fuzz_corpus_encode(&w, keys[k], v, variant);
                char name[64];
                snprintf(name, sizeof name, "%d-v%d-%d", keys[k], v, variant);
                ok = rc == RC_OK &&
                     fuzz_corpus_write(argv[1], name, keys[k], v, &w);
                if (rc != RC_OK) {
                    fprintf(stderr, "fuzz_corpus: encoding %s: %s\n", name,
                            rc_str(rc));
                }
                n_files++;
            }
        }
    }
    writer_free(&w);
    ok = ok && fuzz_corpus_api_versions_v3(argv[1]);
    if (!ok) {
        return 1;
    }
    printf("fuzz_corpus: %d seeds in %s\n", n_files + 1, argv[1]);
    return 0;
}
