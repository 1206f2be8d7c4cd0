/* Tests for broker/kafka_codec*.c over every API and every version in its
 * range, requests and responses alike, from one table of sample messages:
 * encode -> decode -> encode gives the same bytes; cutting the body at
 * every byte gives RC_SHORT; one trailing byte is left unread (Kafka
 * ignores what follows the last field); seeded
 * random bytes and seeded mutations of valid bodies never crash, and what
 * decodes re-encodes to something that decodes to the same bytes. Inputs
 * live in heap buffers of their exact length so that `make asan` catches
 * any read past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/unit/common/kafka/codec_expect.h"
#include "tests/unit/common/kafka/codec_samples.h"

#define MAX_16M (16u * 1024 * 1024)

/* Criterion reports every assertion, passed or not; in hot loops only a
 * failure should cost anything. */
#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            cr_assert_fail(__VA_ARGS__);                               \
        }                                                              \
    } while (0)

#define S(str) slice_from_str(str)

/* A topic id with every byte set, so a field list off by one shows. */
#define SAMPLE_UUID                                                    \
    {{0x3f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x49, 0x78, 0x87, 0x96, 0xa5,   \
      0xb4, 0xc3, 0xd2, 0xe1, 0xf0}}

union any_msg {
    struct kafka_ApiVersionsRequest api_versions_req;
    struct kafka_ApiVersionsResponse api_versions_resp;
    struct kafka_MetadataRequest metadata_req;
    struct kafka_MetadataResponse metadata_resp;
    struct kafka_ProduceRequest produce_req;
    struct kafka_ProduceResponse produce_resp;
    struct kafka_FetchRequest fetch_req;
    struct kafka_FetchResponse fetch_resp;
    struct kafka_ListOffsetsRequest list_offsets_req;
    struct kafka_ListOffsetsResponse list_offsets_resp;
    struct kafka_CreateTopicsRequest create_topics_req;
    struct kafka_CreateTopicsResponse create_topics_resp;
    struct kafka_DeleteTopicsRequest delete_topics_req;
    struct kafka_DeleteTopicsResponse delete_topics_resp;
    struct kafka_DeleteRecordsRequest delete_records_req;
    struct kafka_DeleteRecordsResponse delete_records_resp;
    struct kafka_DescribeConfigsRequest describe_configs_req;
    struct kafka_DescribeConfigsResponse describe_configs_resp;
    struct kafka_InitProducerIdRequest init_producer_id_req;
    struct kafka_InitProducerIdResponse init_producer_id_resp;
    struct kafka_OffsetForLeaderEpochRequest offset_for_leader_epoch_req;
    struct kafka_OffsetForLeaderEpochResponse offset_for_leader_epoch_resp;
    struct kafka_OffsetCommitRequest offset_commit_req;
    struct kafka_OffsetCommitResponse offset_commit_resp;
    struct kafka_OffsetFetchRequest offset_fetch_req;
    struct kafka_OffsetFetchResponse offset_fetch_resp;
    struct kafka_FindCoordinatorRequest find_coordinator_req;
    struct kafka_FindCoordinatorResponse find_coordinator_resp;
    struct kafka_JoinGroupRequest join_group_req;
    struct kafka_JoinGroupResponse join_group_resp;
    struct kafka_HeartbeatRequest heartbeat_req;
    struct kafka_HeartbeatResponse heartbeat_resp;
    struct kafka_LeaveGroupRequest leave_group_req;
    struct kafka_LeaveGroupResponse leave_group_resp;
    struct kafka_SyncGroupRequest sync_group_req;
    struct kafka_SyncGroupResponse sync_group_resp;
    struct kafka_DescribeGroupsRequest describe_groups_req;
    struct kafka_DescribeGroupsResponse describe_groups_resp;
    struct kafka_ListGroupsRequest list_groups_req;
    struct kafka_ListGroupsResponse list_groups_resp;
    struct kafka_AlterPartitionReassignmentsRequest apr_req;
    struct kafka_AlterPartitionReassignmentsResponse apr_resp;
    struct kafka_ListPartitionReassignmentsRequest lpr_req;
    struct kafka_ListPartitionReassignmentsResponse lpr_resp;
    struct kafka_UnregisterBrokerRequest unregister_broker_req;
    struct kafka_UnregisterBrokerResponse unregister_broker_resp;
    struct kafka_DeleteGroupsRequest delete_groups_req;
    struct kafka_DeleteGroupsResponse delete_groups_resp;
    struct kafka_CreatePartitionsRequest create_partitions_req;
    struct kafka_CreatePartitionsResponse create_partitions_resp;
    struct kafka_DescribeLogDirsRequest describe_log_dirs_req;
    struct kafka_DescribeLogDirsResponse describe_log_dirs_resp;
    struct kafka_DescribeClusterRequest describe_cluster_req;
    struct kafka_DescribeClusterResponse describe_cluster_resp;
    struct kafka_ElectLeadersRequest elect_leaders_req;
    struct kafka_ElectLeadersResponse elect_leaders_resp;
    struct kafka_AlterConfigsRequest alter_configs_req;
    struct kafka_AlterConfigsResponse alter_configs_resp;
    struct kafka_IncrementalAlterConfigsRequest incremental_alter_configs_req;
    struct kafka_AlterConfigsResponse incremental_alter_configs_resp;
};

typedef int (*decode_fn)(struct reader *r, int16_t v, struct arena *a,
                         union any_msg *m);
typedef int (*encode_fn)(struct writer *w, int16_t v, const union any_msg *m);

/* Adapters from the typed codec functions to the table's signatures. */
#define CODEC_ADAPT(fn, member)                                        \
    static int dec_##fn(struct reader *r, int16_t v, struct arena *a,  \
                        union any_msg *m)                              \
    {                                                                  \
        return kafka_##fn##_decode(r, v, a, &m->member);               \
    }
#define CODEC_ADAPT_ENC(fn, member)                                    \
    static int enc_##fn(struct writer *w, int16_t v,                   \
                        const union any_msg *m)                        \
    {                                                                  \
        return kafka_##fn##_encode(w, v, &m->member);                  \
    }

CODEC_ADAPT(api_versions_request, api_versions_req)
CODEC_ADAPT(api_versions_response, api_versions_resp)
CODEC_ADAPT(metadata_request, metadata_req)
CODEC_ADAPT(metadata_response, metadata_resp)
CODEC_ADAPT(produce_request, produce_req)
CODEC_ADAPT(produce_response, produce_resp)
CODEC_ADAPT(fetch_request, fetch_req)
CODEC_ADAPT(fetch_response, fetch_resp)
CODEC_ADAPT(list_offsets_request, list_offsets_req)
CODEC_ADAPT(list_offsets_response, list_offsets_resp)
CODEC_ADAPT(create_topics_request, create_topics_req)
CODEC_ADAPT(create_topics_response, create_topics_resp)
CODEC_ADAPT(delete_topics_request, delete_topics_req)
CODEC_ADAPT(delete_topics_response, delete_topics_resp)
CODEC_ADAPT(delete_records_request, delete_records_req)
CODEC_ADAPT(delete_records_response, delete_records_resp)
CODEC_ADAPT(describe_configs_request, describe_configs_req)
CODEC_ADAPT(describe_configs_response, describe_configs_resp)
CODEC_ADAPT(init_producer_id_request, init_producer_id_req)
CODEC_ADAPT(init_producer_id_response, init_producer_id_resp)
CODEC_ADAPT(offset_for_leader_epoch_request, offset_for_leader_epoch_req)
CODEC_ADAPT(offset_for_leader_epoch_response, offset_for_leader_epoch_resp)
CODEC_ADAPT(offset_commit_request, offset_commit_req)
CODEC_ADAPT(offset_commit_response, offset_commit_resp)
CODEC_ADAPT(offset_fetch_request, offset_fetch_req)
CODEC_ADAPT(offset_fetch_response, offset_fetch_resp)
CODEC_ADAPT(find_coordinator_request, find_coordinator_req)
CODEC_ADAPT(find_coordinator_response, find_coordinator_resp)
CODEC_ADAPT(alter_partition_reassignments_request, apr_req)
CODEC_ADAPT(alter_partition_reassignments_response, apr_resp)
CODEC_ADAPT(list_partition_reassignments_request, lpr_req)
CODEC_ADAPT(list_partition_reassignments_response, lpr_resp)
CODEC_ADAPT(unregister_broker_request, unregister_broker_req)
CODEC_ADAPT(unregister_broker_response, unregister_broker_resp)
CODEC_ADAPT(join_group_request, join_group_req)
CODEC_ADAPT(join_group_response, join_group_resp)
CODEC_ADAPT(heartbeat_request, heartbeat_req)
CODEC_ADAPT(heartbeat_response, heartbeat_resp)
CODEC_ADAPT(leave_group_request, leave_group_req)
CODEC_ADAPT(leave_group_response, leave_group_resp)
CODEC_ADAPT(sync_group_request, sync_group_req)
CODEC_ADAPT(sync_group_response, sync_group_resp)
CODEC_ADAPT(describe_groups_request, describe_groups_req)
CODEC_ADAPT(describe_groups_response, describe_groups_resp)
CODEC_ADAPT(list_groups_request, list_groups_req)
CODEC_ADAPT(list_groups_response, list_groups_resp)
CODEC_ADAPT(delete_groups_request, delete_groups_req)
CODEC_ADAPT(delete_groups_response, delete_groups_resp)
CODEC_ADAPT(create_partitions_request, create_partitions_req)
CODEC_ADAPT(create_partitions_response, create_partitions_resp)
CODEC_ADAPT(describe_log_dirs_request, describe_log_dirs_req)
CODEC_ADAPT(describe_log_dirs_response, describe_log_dirs_resp)
CODEC_ADAPT(describe_cluster_request, describe_cluster_req)
CODEC_ADAPT(describe_cluster_response, describe_cluster_resp)
CODEC_ADAPT(elect_leaders_request, elect_leaders_req)
CODEC_ADAPT(elect_leaders_response, elect_leaders_resp)
CODEC_ADAPT(alter_configs_request, alter_configs_req)
CODEC_ADAPT(alter_configs_response, alter_configs_resp)
CODEC_ADAPT(incremental_alter_configs_request, incremental_alter_configs_req)
CODEC_ADAPT(incremental_alter_configs_response,
            incremental_alter_configs_resp)

CODEC_ADAPT_ENC(api_versions_request, api_versions_req)
CODEC_ADAPT_ENC(api_versions_response, api_versions_resp)
CODEC_ADAPT_ENC(metadata_request, metadata_req)
CODEC_ADAPT_ENC(metadata_response, metadata_resp)
CODEC_ADAPT_ENC(produce_request, produce_req)
CODEC_ADAPT_ENC(produce_response, produce_resp)
CODEC_ADAPT_ENC(fetch_request, fetch_req)
CODEC_ADAPT_ENC(list_offsets_request, list_offsets_req)
CODEC_ADAPT_ENC(list_offsets_response, list_offsets_resp)
CODEC_ADAPT_ENC(create_topics_request, create_topics_req)
CODEC_ADAPT_ENC(create_topics_response, create_topics_resp)
CODEC_ADAPT_ENC(delete_topics_request, delete_topics_req)
CODEC_ADAPT_ENC(delete_topics_response, delete_topics_resp)
CODEC_ADAPT_ENC(delete_records_request, delete_records_req)
CODEC_ADAPT_ENC(delete_records_response, delete_records_resp)
CODEC_ADAPT_ENC(describe_configs_request, describe_configs_req)
CODEC_ADAPT_ENC(describe_configs_response, describe_configs_resp)
CODEC_ADAPT_ENC(init_producer_id_request, init_producer_id_req)
CODEC_ADAPT_ENC(init_producer_id_response, init_producer_id_resp)
CODEC_ADAPT_ENC(offset_for_leader_epoch_request, offset_for_leader_epoch_req)
CODEC_ADAPT_ENC(offset_for_leader_epoch_response,
                offset_for_leader_epoch_resp)
CODEC_ADAPT_ENC(offset_commit_request, offset_commit_req)
CODEC_ADAPT_ENC(offset_commit_response, offset_commit_resp)
CODEC_ADAPT_ENC(offset_fetch_request, offset_fetch_req)
CODEC_ADAPT_ENC(offset_fetch_response, offset_fetch_resp)
CODEC_ADAPT_ENC(find_coordinator_request, find_coordinator_req)
CODEC_ADAPT_ENC(find_coordinator_response, find_coordinator_resp)
CODEC_ADAPT_ENC(join_group_request, join_group_req)
CODEC_ADAPT_ENC(join_group_response, join_group_resp)
CODEC_ADAPT_ENC(heartbeat_request, heartbeat_req)
CODEC_ADAPT_ENC(heartbeat_response, heartbeat_resp)
CODEC_ADAPT_ENC(leave_group_request, leave_group_req)
CODEC_ADAPT_ENC(leave_group_response, leave_group_resp)
CODEC_ADAPT_ENC(sync_group_request, sync_group_req)
CODEC_ADAPT_ENC(sync_group_response, sync_group_resp)
CODEC_ADAPT_ENC(describe_groups_request, describe_groups_req)
CODEC_ADAPT_ENC(describe_groups_response, describe_groups_resp)
CODEC_ADAPT_ENC(list_groups_request, list_groups_req)
CODEC_ADAPT_ENC(list_groups_response, list_groups_resp)
CODEC_ADAPT_ENC(delete_groups_request, delete_groups_req)
CODEC_ADAPT_ENC(delete_groups_response, delete_groups_resp)
CODEC_ADAPT_ENC(create_partitions_request, create_partitions_req)
CODEC_ADAPT_ENC(create_partitions_response, create_partitions_resp)
CODEC_ADAPT_ENC(describe_log_dirs_request, describe_log_dirs_req)
CODEC_ADAPT_ENC(describe_log_dirs_response, describe_log_dirs_resp)
CODEC_ADAPT_ENC(describe_cluster_request, describe_cluster_req)
CODEC_ADAPT_ENC(describe_cluster_response, describe_cluster_resp)
CODEC_ADAPT_ENC(elect_leaders_request, elect_leaders_req)
CODEC_ADAPT_ENC(elect_leaders_response, elect_leaders_resp)
CODEC_ADAPT_ENC(alter_configs_request, alter_configs_req)
CODEC_ADAPT_ENC(alter_configs_response, alter_configs_resp)
CODEC_ADAPT_ENC(incremental_alter_configs_request,
                incremental_alter_configs_req)
CODEC_ADAPT_ENC(incremental_alter_configs_response,
                incremental_alter_configs_resp)
CODEC_ADAPT_ENC(alter_partition_reassignments_request, apr_req)
CODEC_ADAPT_ENC(alter_partition_reassignments_response, apr_resp)
CODEC_ADAPT_ENC(list_partition_reassignments_request, lpr_req)
CODEC_ADAPT_ENC(list_partition_reassignments_response, lpr_resp)
CODEC_ADAPT_ENC(unregister_broker_request, unregister_broker_req)
CODEC_ADAPT_ENC(unregister_broker_response, unregister_broker_resp)

/* Copy mode: the records go inline, as a decoded response carries them. */
static int inline_records_cb(void *arg, struct writer *w,
                             const struct kafka_FetchablePartitionResponse *p,
                             size_t at)
{
    (void)arg;
    (void)at;
    writer_raw(w, p->Records.ptr, p->Records.len);
    return RC_OK;
}

static int enc_fetch_response(struct writer *w, int16_t v,
                              const union any_msg *m)
{
    return kafka_fetch_response_encode(w, v, &m->fetch_resp,
                                       inline_records_cb, NULL);
}

/* --- Sample messages (every field set, whatever the version) ------------- */

static const uint8_t sample_batch[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

static void sample_api_versions_req(union any_msg *m)
{
    m->api_versions_req.ClientSoftwareName = slice_null();
    m->api_versions_req.ClientSoftwareVersion = slice_null();
}

static void sample_api_versions_resp(union any_msg *m)
{
    static const struct kafka_ApiVersion keys[] = {
        {0, 3, 8}, {1, 4, 11}, {18, 0, 2}};
    m->api_versions_resp = (struct kafka_ApiVersionsResponse){
        .ErrorCode = 0, .ApiKeys = keys, .ApiKeysCnt = 3,
        .ThrottleTimeMs = 7};
}

static void sample_metadata_req(union any_msg *m)
{
    static const struct kafka_MetadataRequestTopic topics[2] = {
        {{(const uint8_t *)"orders", 6}, SAMPLE_UUID},
        {{(const uint8_t *)"", 0}, {{0}}}};
    m->metadata_req = (struct kafka_MetadataRequest){
        .Topics = topics, .TopicsCnt = 2, .AllowAutoTopicCreation = true,
        .IncludeClusterAuthorizedOperations = true,
        .IncludeTopicAuthorizedOperations = true};
}

static void sample_metadata_resp(union any_msg *m)
{
    static const int32_t replicas[] = {1, 2, 3};
    static struct kafka_MetadataResponseBroker brokers[2];
    static struct kafka_MetadataResponsePartition parts[2];
    static struct kafka_MetadataResponseTopic topics[2];
    brokers[0] = (struct kafka_MetadataResponseBroker){
        1, S("host-1"), 9092, S("rack-a")};
    brokers[1] = (struct kafka_MetadataResponseBroker){
        2, S("host-2"), 9093, slice_null()};
    parts[0] = (struct kafka_MetadataResponsePartition){
        0, 0, 1, 5, replicas, 3, replicas, 2, NULL, 0};
    parts[1] = (struct kafka_MetadataResponsePartition){
        5, 1, -1, -1, replicas, 1, NULL, 0, replicas + 2, 1};
    topics[0] = (struct kafka_MetadataResponseTopic){
        0, S("orders"), false, parts, 2, 0x0ff8, SAMPLE_UUID};
    topics[1] = (struct kafka_MetadataResponseTopic){
        3, S("missing"), true, NULL, 0, INT32_MIN, {{0}}};
    m->metadata_resp = (struct kafka_MetadataResponse){
        .ThrottleTimeMs = 1, .Brokers = brokers, .BrokersCnt = 2,
        .ClusterId = S("cluster-x"), .ControllerId = 2, .Topics = topics,
        .TopicsCnt = 2, .ClusterAuthorizedOperations = INT32_MIN};
}

static void sample_produce_req(union any_msg *m)
{
    static struct kafka_PartitionProduceData parts[2];
    static struct kafka_TopicProduceData topics[1];
    parts[0] = (struct kafka_PartitionProduceData){
        0, {sample_batch, sizeof(sample_batch)}};
    parts[1] = (struct kafka_PartitionProduceData){3, slice_null()};
    topics[0] = (struct kafka_TopicProduceData){S("orders"), parts, 2};
    m->produce_req = (struct kafka_ProduceRequest){
        .TransactionalId = slice_null(), .Acks = -1, .TimeoutMs = 30000,
        .Topics = topics, .TopicsCnt = 1};
}

static void sample_produce_resp(union any_msg *m)
{
    static struct kafka_BatchIndexAndErrorMessage errs[2];
    static struct kafka_PartitionProduceResponse parts[2];
    static struct kafka_TopicProduceResponse topics[1];
    errs[0] = (struct kafka_BatchIndexAndErrorMessage){4, S("bad key")};
    errs[1] = (struct kafka_BatchIndexAndErrorMessage){5, slice_null()};
    parts[0] = (struct kafka_PartitionProduceResponse){
        0, 0, 100, -1, 0, NULL, 0, slice_null()};
    parts[1] = (struct kafka_PartitionProduceResponse){
        1, 87, -1, -1, -1, errs, 2, S("invalid record")};
    topics[0] = (struct kafka_TopicProduceResponse){S("orders"), parts, 2};
    m->produce_resp = (struct kafka_ProduceResponse){
        .Responses = topics, .ResponsesCnt = 1, .ThrottleTimeMs = 9};
}

static void sample_fetch_req(union any_msg *m)
{
    static const int32_t forgotten_parts[] = {4, 5};
    static struct kafka_FetchPartition parts[2];
    static struct kafka_FetchableTopic topics[2];
    static struct kafka_ForgottenTopic forgotten[1];
    parts[0] = (struct kafka_FetchPartition){0, 3, 42, 2, -1, 1 << 20};
    parts[1] = (struct kafka_FetchPartition){1, -1, 0, -1, 7, 1024};
    /* Names up to v12, ids from v13: the decoder leaves the other out. */
    topics[0] = (struct kafka_FetchableTopic){
        S("orders"), {{0x5e, [7] = 0x41, [15] = 0x01}}, parts, 2};
    topics[1] = (struct kafka_FetchableTopic){
        S("empty"), {{[0] = 0x80, [15] = 0xff}}, NULL, 0};
    forgotten[0] = (struct kafka_ForgottenTopic){
        S("old"), {{[3] = 0x07}}, forgotten_parts, 2};
    /* A follower's: from v15 in the tagged ReplicaState. */
    m->fetch_req = (struct kafka_FetchRequest){
        .ReplicaId = 2, .MaxWaitMs = 500, .MinBytes = 1,
        .MaxBytes = 52428800, .IsolationLevel = 1, .SessionId = 0,
        .SessionEpoch = -1, .Topics = topics, .TopicsCnt = 2,
        .ForgottenTopicsData = forgotten, .ForgottenTopicsDataCnt = 1,
        .RackId = S("rack-a"), .ReplicaEpoch = 9};
}

static void sample_fetch_resp(union any_msg *m)
{
    static const struct kafka_AbortedTransaction txns[] = {{7, 100}};
    static struct kafka_FetchablePartitionResponse parts[3];
    static struct kafka_FetchableTopicResponse topics[1];
    parts[0] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 0, .ErrorCode = 0, .HighWatermark = 10,
        .LastStableOffset = 10, .LogStartOffset = 0,
        .AbortedTransactions = txns, .AbortedTransactionsCnt = 1,
        .PreferredReadReplica = -1, .RecordsBytes = sizeof(sample_batch),
        .Records = {sample_batch, sizeof(sample_batch)}};
    parts[1] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 1, .ErrorCode = 1, .HighWatermark = -1,
        .LastStableOffset = -1, .LogStartOffset = -1,
        .AbortedTransactionsCnt = -1, .PreferredReadReplica = -1,
        .RecordsBytes = -1, .Records = slice_null()};
    parts[2] = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = 2, .HighWatermark = 5, .LastStableOffset = 5,
        .LogStartOffset = 5, .AbortedTransactionsCnt = 0,
        .PreferredReadReplica = -1, .RecordsBytes = 0,
        .Records = {sample_batch, 0}};
    topics[0] = (struct kafka_FetchableTopicResponse){
        S("orders"), {{0x5e, [7] = 0x41, [15] = 0x01}}, parts, 3};
    m->fetch_resp = (struct kafka_FetchResponse){
        .ThrottleTimeMs = 0, .ErrorCode = 0, .SessionId = 0,
        .Responses = topics, .ResponsesCnt = 1};
}

static void sample_list_offsets_req(union any_msg *m)
{
    static struct kafka_ListOffsetsPartition parts[2];
    static struct kafka_ListOffsetsTopic topics[1];
    parts[0] = (struct kafka_ListOffsetsPartition){0, 4, -1, 1};
    parts[1] = (struct kafka_ListOffsetsPartition){1, -1, 1700000000000, 3};
    topics[0] = (struct kafka_ListOffsetsTopic){S("orders"), parts, 2};
    m->list_offsets_req = (struct kafka_ListOffsetsRequest){
        .ReplicaId = -1, .IsolationLevel = 1, .Topics = topics,
        .TopicsCnt = 1};
}

static void sample_list_offsets_resp(union any_msg *m)
{
    static struct kafka_ListOffsetsPartitionResponse parts[2];
    static struct kafka_ListOffsetsTopicResponse topics[1];
    parts[0] = (struct kafka_ListOffsetsPartitionResponse){0, 0, -1, 42, 4};
    parts[1] = (struct kafka_ListOffsetsPartitionResponse){1, 6, -1, -1, -1};
    topics[0] = (struct kafka_ListOffsetsTopicResponse){
        S("orders"), parts, 2};
    m->list_offsets_resp = (struct kafka_ListOffsetsResponse){
        .ThrottleTimeMs = 3, .Topics = topics, .TopicsCnt = 1};
}

static void sample_create_topics_req(union any_msg *m)
{
    static const int32_t brokers[] = {1, 2};
    static struct kafka_CreatableReplicaAssignment as[1];
    static struct kafka_CreateableTopicConfig cs[2];
    static struct kafka_CreatableTopic topics[2];
    as[0] = (struct kafka_CreatableReplicaAssignment){0, brokers, 2};
    cs[0] = (struct kafka_CreateableTopicConfig){
        S("cleanup.policy"), S("compact")};
    cs[1] = (struct kafka_CreateableTopicConfig){
        S("retention.ms"), slice_null()};
    topics[0] = (struct kafka_CreatableTopic){
        S("orders"), 3, 2, NULL, 0, cs, 2};
    topics[1] = (struct kafka_CreatableTopic){S("manual"), -1, -1, as, 1,
                                              NULL, 0};
    m->create_topics_req = (struct kafka_CreateTopicsRequest){
        .Topics = topics, .TopicsCnt = 2, .TimeoutMs = 60000,
        .ValidateOnly = true};
}

static void sample_create_topics_resp(union any_msg *m)
{
    static struct kafka_CreatableTopicConfigs cs[2];
    static struct kafka_CreatableTopicResult topics[2];
    cs[0] = (struct kafka_CreatableTopicConfigs){
        S("cleanup.policy"), S("compact"), false, 1, false};
    cs[1] = (struct kafka_CreatableTopicConfigs){
        S("ssl.secret"), slice_null(), true, 5, true};
    topics[0] = (struct kafka_CreatableTopicResult){
        S("orders"), 0, slice_null(), SAMPLE_UUID, 29, 3, 2, cs, 2};
    topics[1] = (struct kafka_CreatableTopicResult){
        S("manual"), 36, S("Topic 'manual' already exists."), {{0}}, 0,
        -1, -1, NULL, -1};
    m->create_topics_resp = (struct kafka_CreateTopicsResponse){
        .ThrottleTimeMs = 0, .Topics = topics, .TopicsCnt = 2};
}

static void sample_delete_topics_req(union any_msg *m)
{
    static struct slice names[2];
    static struct kafka_DeleteTopicState topics[2];
    names[0] = S("orders");
    names[1] = S("old");
    topics[0] = (struct kafka_DeleteTopicState){S("orders"), {{0}}};
    topics[1] = (struct kafka_DeleteTopicState){slice_null(), SAMPLE_UUID};
    m->delete_topics_req = (struct kafka_DeleteTopicsRequest){
        .TopicNames = names, .TopicNamesCnt = 2, .TimeoutMs = 30000,
        .Topics = topics, .TopicsCnt = 2};
}

static void sample_delete_topics_resp(union any_msg *m)
{
    static struct kafka_DeletableTopicResult res[2];
    res[0] = (struct kafka_DeletableTopicResult){
        S("orders"), 0, slice_null(), SAMPLE_UUID};
    res[1] = (struct kafka_DeletableTopicResult){
        S("old"), 3, S("This server does not host this topic"), {{0}}};
    m->delete_topics_resp = (struct kafka_DeleteTopicsResponse){
        .ThrottleTimeMs = 2, .Responses = res, .ResponsesCnt = 2};
}

static void sample_delete_records_req(union any_msg *m)
{
    static struct kafka_DeleteRecordsPartition parts[2];
    static struct kafka_DeleteRecordsTopic topics[2];
    parts[0] = (struct kafka_DeleteRecordsPartition){0, 1200};
    parts[1] = (struct kafka_DeleteRecordsPartition){3, -1};
    topics[0] = (struct kafka_DeleteRecordsTopic){S("orders"), parts, 2};
    topics[1] = (struct kafka_DeleteRecordsTopic){S("empty"), NULL, 0};
    m->delete_records_req = (struct kafka_DeleteRecordsRequest){
        .Topics = topics, .TopicsCnt = 2, .TimeoutMs = 30000};
}

static void sample_delete_records_resp(union any_msg *m)
{
    static struct kafka_DeleteRecordsPartitionResult parts[2];
    static struct kafka_DeleteRecordsTopicResult topics[1];
    parts[0] = (struct kafka_DeleteRecordsPartitionResult){0, 1200, 0};
    parts[1] = (struct kafka_DeleteRecordsPartitionResult){3, -1, 1};
    topics[0] = (struct kafka_DeleteRecordsTopicResult){S("orders"), parts,
                                                        2};
    m->delete_records_resp = (struct kafka_DeleteRecordsResponse){
        .ThrottleTimeMs = 1, .Topics = topics, .TopicsCnt = 1};
}

static void sample_describe_configs_req(union any_msg *m)
{
    static struct slice keys[2];
    static struct kafka_DescribeConfigsResource res[2];
    keys[0] = S("retention.ms");
    keys[1] = S("cleanup.policy");
    res[0] = (struct kafka_DescribeConfigsResource){2, S("orders"), keys, 2};
    res[1] = (struct kafka_DescribeConfigsResource){4, S("1"), NULL, -1};
    m->describe_configs_req = (struct kafka_DescribeConfigsRequest){
        .Resources = res, .ResourcesCnt = 2, .IncludeSynonyms = true,
        .IncludeDocumentation = true};
}

static void sample_describe_configs_resp(union any_msg *m)
{
    static struct kafka_DescribeConfigsSynonym syn[1];
    static struct kafka_DescribeConfigsResourceResult cs[2];
    static struct kafka_DescribeConfigsResult res[1];
    syn[0] = (struct kafka_DescribeConfigsSynonym){
        S("log.retention.ms"), S("604800000"), 5};
    cs[0] = (struct kafka_DescribeConfigsResourceResult){
        S("retention.ms"), S("604800000"), false, true, 5, false, syn, 1, 5,
        S("How long to keep")};
    cs[1] = (struct kafka_DescribeConfigsResourceResult){
        S("secret"), slice_null(), true, false, 1, true, NULL, 0, 9,
        slice_null()};
    res[0] = (struct kafka_DescribeConfigsResult){
        0, slice_null(), 2, S("orders"), cs, 2};
    m->describe_configs_resp = (struct kafka_DescribeConfigsResponse){
        .ThrottleTimeMs = 0, .Results = res, .ResultsCnt = 1};
}

static void sample_init_producer_id_req(union any_msg *m)
{
    m->init_producer_id_req = (struct kafka_InitProducerIdRequest){
        slice_null(), 60000, 4000, 2};
}

static void sample_init_producer_id_resp(union any_msg *m)
{
    m->init_producer_id_resp = (struct kafka_InitProducerIdResponse){
        0, 0, 4000, 0};
}

static void sample_offset_for_leader_epoch_req(union any_msg *m)
{
    static const struct kafka_OffsetForLeaderPartition parts[] = {
        {0, 5, 4}, {3, -1, 2}};
    static const struct kafka_OffsetForLeaderTopic topics[] = {
        {{(const uint8_t *)"t", 1}, parts, 2}};
    m->offset_for_leader_epoch_req =
        (struct kafka_OffsetForLeaderEpochRequest){2, topics, 1};
}

static void sample_offset_for_leader_epoch_resp(union any_msg *m)
{
    static const struct kafka_EpochEndOffset parts[] = {
        {0, 0, 4, 1234}, {75, 3, -1, -1}};
    static const struct kafka_OffsetForLeaderTopicResult topics[] = {
        {{(const uint8_t *)"t", 1}, parts, 2}};
    m->offset_for_leader_epoch_resp =
        (struct kafka_OffsetForLeaderEpochResponse){0, topics, 1};
}

/* The consumer group APIs: every field of every version set, the flexible
 * versions' new ones included (FindCoordinator's CoordinatorKeys and
 * Coordinators, JoinGroup's Reason, ProtocolType and SkipAssignment,
 * LeaveGroup's Reason, SyncGroup's ProtocolType and ProtocolName,
 * ListGroups' filters, GroupState and GroupType, OffsetFetch's
 * RequireStable and Groups with MemberId and MemberEpoch). */

static const uint8_t sample_meta[] = {0, 1, 2};

static void sample_offset_commit_req(union any_msg *m)
{
    static struct kafka_OffsetCommitRequestPartition parts[2];
    static struct kafka_OffsetCommitRequestTopic topics[1];
    parts[0] = (struct kafka_OffsetCommitRequestPartition){
        0, 100, 3, 1700000000000, S("meta")};
    parts[1] = (struct kafka_OffsetCommitRequestPartition){
        1, 200, -1, -1, slice_null()};
    topics[0] = (struct kafka_OffsetCommitRequestTopic){S("orders"), parts,
                                                        2};
    m->offset_commit_req = (struct kafka_OffsetCommitRequest){
        .GroupId = S("cg"), .GenerationIdOrMemberEpoch = 4,
        .MemberId = S("m-1"), .GroupInstanceId = S("inst-1"),
        .RetentionTimeMs = 86400000, .Topics = topics, .TopicsCnt = 1};
}

static void sample_offset_commit_resp(union any_msg *m)
{
    static struct kafka_OffsetCommitResponsePartition parts[2];
    static struct kafka_OffsetCommitResponseTopic topics[1];
    parts[0] = (struct kafka_OffsetCommitResponsePartition){0, 0};
    parts[1] = (struct kafka_OffsetCommitResponsePartition){1, 22};
    topics[0] = (struct kafka_OffsetCommitResponseTopic){S("orders"), parts,
                                                         2};
    m->offset_commit_resp = (struct kafka_OffsetCommitResponse){
        .ThrottleTimeMs = 6, .Topics = topics, .TopicsCnt = 1};
}

static void sample_offset_fetch_req(union any_msg *m)
{
    static const int32_t ids[] = {0, 1};
    static struct kafka_OffsetFetchRequestTopic topics[1];
    static struct kafka_OffsetFetchRequestGroup groups[2];
    topics[0] = (struct kafka_OffsetFetchRequestTopic){S("orders"), ids, 2};
    groups[0] = (struct kafka_OffsetFetchRequestGroup){
        S("cg-1"), slice_null(), -1, topics, 1};
    groups[1] = (struct kafka_OffsetFetchRequestGroup){
        S("cg-2"), S("m-1"), 5, NULL, -1};
    m->offset_fetch_req = (struct kafka_OffsetFetchRequest){
        .GroupId = S("cg"), .Topics = topics, .TopicsCnt = 1,
        .Groups = groups, .GroupsCnt = 2, .RequireStable = true};
}

static void sample_offset_fetch_resp(union any_msg *m)
{
    static struct kafka_OffsetFetchResponsePartition parts[2];
    static struct kafka_OffsetFetchResponseTopic topics[1];
    static struct kafka_OffsetFetchResponseGroup groups[2];
    parts[0] = (struct kafka_OffsetFetchResponsePartition){
        0, 100, 3, S("meta"), 0};
    parts[1] = (struct kafka_OffsetFetchResponsePartition){
        1, -1, -1, slice_null(), 3};
    topics[0] = (struct kafka_OffsetFetchResponseTopic){S("orders"), parts,
                                                        2};
    groups[0] = (struct kafka_OffsetFetchResponseGroup){
        S("cg-1"), topics, 1, 0};
    groups[1] = (struct kafka_OffsetFetchResponseGroup){
        S("cg-2"), NULL, 0, 16};
    m->offset_fetch_resp = (struct kafka_OffsetFetchResponse){
        .ThrottleTimeMs = 4, .Topics = topics, .TopicsCnt = 1,
        .ErrorCode = 14, .Groups = groups, .GroupsCnt = 2};
}

static void sample_find_coordinator_req(union any_msg *m)
{
    static struct slice keys[2];
    keys[0] = S("cg-1");
    keys[1] = S("cg-2");
    m->find_coordinator_req = (struct kafka_FindCoordinatorRequest){
        .Key = S("cg"), .KeyType = 1, .CoordinatorKeys = keys,
        .CoordinatorKeysCnt = 2};
}

static void sample_find_coordinator_resp(union any_msg *m)
{
    static struct kafka_Coordinator cs[2];
    cs[0] = (struct kafka_Coordinator){
        S("cg-1"), 2, S("broker-2"), 9092, 0, slice_null()};
    cs[1] = (struct kafka_Coordinator){S("cg-2"), -1, S(""), -1, 15,
                                       S("creating __consumer_offsets")};
    m->find_coordinator_resp = (struct kafka_FindCoordinatorResponse){
        .ThrottleTimeMs = 7, .ErrorCode = 15, .ErrorMessage = S("loading"),
        .NodeId = 3, .Host = S("broker-3"), .Port = 9093, .Coordinators = cs,
        .CoordinatorsCnt = 2};
}

static void sample_join_group_req(union any_msg *m)
{
    static struct kafka_JoinGroupRequestProtocol ps[2];
    ps[0] = (struct kafka_JoinGroupRequestProtocol){
        S("range"), {sample_meta, sizeof(sample_meta)}};
    ps[1] = (struct kafka_JoinGroupRequestProtocol){S("roundrobin"), S("")};
    m->join_group_req = (struct kafka_JoinGroupRequest){
        .GroupId = S("cg"), .SessionTimeoutMs = 45000,
        .RebalanceTimeoutMs = 300000, .MemberId = S("m-1"),
        .GroupInstanceId = S("inst-1"), .ProtocolType = S("consumer"),
        .Protocols = ps, .ProtocolsCnt = 2, .Reason = S("rebalance")};
}

static void sample_join_group_resp(union any_msg *m)
{
    static struct kafka_JoinGroupResponseMember ms[2];
    ms[0] = (struct kafka_JoinGroupResponseMember){
        S("m-1"), S("inst-1"), {sample_meta, sizeof(sample_meta)}};
    ms[1] = (struct kafka_JoinGroupResponseMember){S("m-2"), slice_null(),
                                                   S("")};
    m->join_group_resp = (struct kafka_JoinGroupResponse){
        .ThrottleTimeMs = 1, .ErrorCode = 0, .GenerationId = 4,
        .ProtocolType = S("consumer"), .ProtocolName = S("range"),
        .Leader = S("m-1"), .SkipAssignment = true, .MemberId = S("m-1"),
        .Members = ms, .MembersCnt = 2};
}

static void sample_heartbeat_req(union any_msg *m)
{
    m->heartbeat_req = (struct kafka_HeartbeatRequest){
        S("cg"), 4, S("m-1"), S("inst-1")};
}

static void sample_heartbeat_resp(union any_msg *m)
{
    m->heartbeat_resp = (struct kafka_HeartbeatResponse){3, 27};
}

static void sample_leave_group_req(union any_msg *m)
{
    static struct kafka_MemberIdentity ms[2];
    ms[0] = (struct kafka_MemberIdentity){S("m-1"), S("inst-1"),
                                          S("closing")};
    ms[1] = (struct kafka_MemberIdentity){S("m-2"), slice_null(),
                                          slice_null()};
    m->leave_group_req = (struct kafka_LeaveGroupRequest){
        .GroupId = S("cg"), .MemberId = S("m-1"), .Members = ms,
        .MembersCnt = 2};
}

static void sample_leave_group_resp(union any_msg *m)
{
    static struct kafka_MemberResponse ms[1];
    ms[0] = (struct kafka_MemberResponse){S("m-1"), S("inst-1"), 25};
    m->leave_group_resp = (struct kafka_LeaveGroupResponse){1, 0, ms, 1};
}

static void sample_sync_group_req(union any_msg *m)
{
    static struct kafka_SyncGroupRequestAssignment as[2];
    as[0] = (struct kafka_SyncGroupRequestAssignment){
        S("m-1"), {sample_meta, sizeof(sample_meta)}};
    as[1] = (struct kafka_SyncGroupRequestAssignment){S("m-2"), S("")};
    m->sync_group_req = (struct kafka_SyncGroupRequest){
        .GroupId = S("cg"), .GenerationId = 4, .MemberId = S("m-1"),
        .GroupInstanceId = S("inst-1"), .ProtocolType = S("consumer"),
        .ProtocolName = S("range"), .Assignments = as, .AssignmentsCnt = 2};
}

static void sample_sync_group_resp(union any_msg *m)
{
    m->sync_group_resp = (struct kafka_SyncGroupResponse){
        2, 0, S("consumer"), S("range"), {sample_meta, sizeof(sample_meta)}};
}

static void sample_describe_groups_req(union any_msg *m)
{
    static struct slice ids[2];
    ids[0] = S("cg");
    ids[1] = S("other");
    m->describe_groups_req = (struct kafka_DescribeGroupsRequest){
        ids, 2, true};
}

static void sample_describe_groups_resp(union any_msg *m)
{
    static struct kafka_DescribedGroupMember ms[1];
    static struct kafka_DescribedGroup gs[2];
    ms[0] = (struct kafka_DescribedGroupMember){
        S("m-1"), S("inst-1"), S("client-1"), S("/127.0.0.1"),
        {sample_meta, sizeof(sample_meta)}, S("")};
    gs[0] = (struct kafka_DescribedGroup){
        0, S("cg"), S("Stable"), S("consumer"), S("range"), ms, 1, 0x0ff8};
    gs[1] = (struct kafka_DescribedGroup){
        16, S("other"), S("Dead"), S(""), S(""), NULL, 0, INT32_MIN};
    m->describe_groups_resp = (struct kafka_DescribeGroupsResponse){5, gs,
                                                                    2};
}

static void sample_list_groups_req(union any_msg *m)
{
    static struct slice states[2];
    static struct slice types[1];
    states[0] = S("Stable");
    states[1] = S("empty");
    types[0] = S("classic");
    m->list_groups_req = (struct kafka_ListGroupsRequest){
        states, 2, types, 1};
}

static void sample_list_groups_resp(union any_msg *m)
{
    static struct kafka_ListedGroup gs[2];
    gs[0] = (struct kafka_ListedGroup){S("cg"), S("consumer"), S("Stable"),
                                       S("classic")};
    gs[1] = (struct kafka_ListedGroup){S("offsets-only"), S(""), S("Empty"),
                                       S("classic")};
    m->list_groups_resp = (struct kafka_ListGroupsResponse){9, 0, gs, 2};
}

static void sample_delete_groups_req(union any_msg *m)
{
    static struct slice ids[2];
    ids[0] = S("cg");
    ids[1] = S("other");
    m->delete_groups_req = (struct kafka_DeleteGroupsRequest){ids, 2};
}

static void sample_delete_groups_resp(union any_msg *m)
{
    static struct kafka_DeletableGroupResult rs[2];
    rs[0] = (struct kafka_DeletableGroupResult){S("cg"), 0};
    rs[1] = (struct kafka_DeletableGroupResult){S("other"), 69};
    m->delete_groups_resp = (struct kafka_DeleteGroupsResponse){1, rs, 2};
}

/* One topic placed by the controller (null Assignments), one with two
 * new partitions assigned. */
static void sample_create_partitions_req(union any_msg *m)
{
    static const int32_t a0[] = {1, 2, 3};
    static const int32_t a1[] = {3, 1, 2};
    static struct kafka_CreatePartitionsAssignment as[2];
    static struct kafka_CreatePartitionsTopic ts[2];
    as[0] = (struct kafka_CreatePartitionsAssignment){a0, 3};
    as[1] = (struct kafka_CreatePartitionsAssignment){a1, 3};
    ts[0] = (struct kafka_CreatePartitionsTopic){S("grow"), 4, NULL, -1};
    ts[1] = (struct kafka_CreatePartitionsTopic){S("two"), 5, as, 2};
    m->create_partitions_req =
        (struct kafka_CreatePartitionsRequest){ts, 2, 30000, true};
}

static void sample_create_partitions_resp(union any_msg *m)
{
    static struct kafka_CreatePartitionsTopicResult rs[2];
    rs[0] = (struct kafka_CreatePartitionsTopicResult){S("grow"), 0,
                                                       slice_null()};
    rs[1] = (struct kafka_CreatePartitionsTopicResult){
        S("two"), 37, S("Topic already has 5 partition(s).")};
    m->create_partitions_resp =
        (struct kafka_CreatePartitionsResponse){7, rs, 2};
}

static void sample_describe_log_dirs_req(union any_msg *m)
{
    static const int32_t ps[] = {0, 2};
    static struct kafka_DescribableLogDirTopic ts[1];
    ts[0] = (struct kafka_DescribableLogDirTopic){S("orders"), ps, 2};
    m->describe_log_dirs_req = (struct kafka_DescribeLogDirsRequest){ts, 1};
}

static void sample_describe_log_dirs_resp(union any_msg *m)
{
    static struct kafka_DescribeLogDirsPartition ps[2];
    static struct kafka_DescribeLogDirsTopic ts[1];
    static struct kafka_DescribeLogDirsResult ds[1];
    ps[0] = (struct kafka_DescribeLogDirsPartition){0, 4096, 0, false};
    ps[1] = (struct kafka_DescribeLogDirsPartition){2, 1LL << 33, 17, true};
    ts[0] = (struct kafka_DescribeLogDirsTopic){S("orders"), ps, 2};
    ds[0] = (struct kafka_DescribeLogDirsResult){
        0, S("/var/lib/cairn/logs"), ts, 1, 1LL << 40, 1LL << 39};
    m->describe_log_dirs_resp =
        (struct kafka_DescribeLogDirsResponse){3, 0, ds, 1};
}

static void sample_describe_cluster_req(union any_msg *m)
{
    m->describe_cluster_req = (struct kafka_DescribeClusterRequest){true, 1};
}

static void sample_describe_cluster_resp(union any_msg *m)
{
    static struct kafka_DescribeClusterBroker bs[2];
    bs[0] = (struct kafka_DescribeClusterBroker){1, S("h1"), 9092,
                                                 slice_null()};
    bs[1] = (struct kafka_DescribeClusterBroker){2, S("h2"), 9093, S("r2")};
    m->describe_cluster_resp = (struct kafka_DescribeClusterResponse){
        4, 0, slice_null(), 1, S("cairn"), 1, bs, 2, 8096};
}

static void sample_elect_leaders_req(union any_msg *m)
{
    static const int32_t ids[2] = {0, 5};
    static struct kafka_ElectLeadersTopicPartitions tps[2];
    tps[0] = (struct kafka_ElectLeadersTopicPartitions){S("orders"), ids, 2};
    tps[1] = (struct kafka_ElectLeadersTopicPartitions){S("empty"), NULL, 0};
    m->elect_leaders_req = (struct kafka_ElectLeadersRequest){
        .ElectionType = 1, .TopicPartitions = tps, .TopicPartitionsCnt = 2,
        .TimeoutMs = 60000};
}

static void sample_elect_leaders_resp(union any_msg *m)
{
    static struct kafka_ElectLeadersPartitionResult ps[2];
    static struct kafka_ReplicaElectionResult ts[1];
    ps[0] = (struct kafka_ElectLeadersPartitionResult){0, 0, slice_null()};
    ps[1] = (struct kafka_ElectLeadersPartitionResult){
        5, 84, S("Leader election not needed for topic partition.")};
    ts[0] = (struct kafka_ReplicaElectionResult){S("orders"), ps, 2};
    m->elect_leaders_resp = (struct kafka_ElectLeadersResponse){
        .ThrottleTimeMs = 1, .ErrorCode = 0, .ReplicaElectionResults = ts,
        .ReplicaElectionResultsCnt = 1};
}

static void sample_alter_configs_req(union any_msg *m)
{
    static struct kafka_AlterableConfig cs[2];
    static struct kafka_AlterConfigsResource res[2];
    cs[0] = (struct kafka_AlterableConfig){S("retention.ms"), 0, S("1000")};
    cs[1] = (struct kafka_AlterableConfig){S("cleanup.policy"), 0,
                                           slice_null()};
    res[0] = (struct kafka_AlterConfigsResource){2, S("orders"), cs, 2};
    res[1] = (struct kafka_AlterConfigsResource){4, S(""), NULL, 0};
    m->alter_configs_req = (struct kafka_AlterConfigsRequest){res, 2, true};
}

static void sample_alter_configs_resp(union any_msg *m)
{
    static struct kafka_AlterConfigsResourceResponse rs[2];
    rs[0] = (struct kafka_AlterConfigsResourceResponse){0, slice_null(), 2,
                                                        S("orders")};
    rs[1] = (struct kafka_AlterConfigsResourceResponse){
        40, S("Unknown topic config name: x"), 2, S("other")};
    m->alter_configs_resp = (struct kafka_AlterConfigsResponse){7, rs, 2};
}

static void sample_incremental_alter_configs_req(union any_msg *m)
{
    static struct kafka_AlterableConfig cs[3];
    static struct kafka_AlterConfigsResource res[1];
    cs[0] = (struct kafka_AlterableConfig){S("retention.ms"), 0, S("1000")};
    cs[1] = (struct kafka_AlterableConfig){S("segment.ms"), 1, slice_null()};
    cs[2] = (struct kafka_AlterableConfig){S("cleanup.policy"), 2,
                                           S("compact")};
    res[0] = (struct kafka_AlterConfigsResource){2, S("orders"), cs, 3};
    m->incremental_alter_configs_req =
        (struct kafka_IncrementalAlterConfigsRequest){res, 1, false};
}

static void sample_incremental_alter_configs_resp(union any_msg *m)
{
    sample_alter_configs_resp(m);
    m->incremental_alter_configs_resp = m->alter_configs_resp;
}

static void sample_alter_partition_reassignments_req(union any_msg *m)
{
    static const int32_t target[3] = {4, 2, 3};
    static struct kafka_ReassignablePartition ps[2];
    static struct kafka_ReassignableTopic ts[1];
    ps[0] = (struct kafka_ReassignablePartition){0, target, 3};
    ps[1] = (struct kafka_ReassignablePartition){5, NULL, -1}; /* cancel */
    ts[0] = (struct kafka_ReassignableTopic){S("moves"), ps, 2};
    m->apr_req = (struct kafka_AlterPartitionReassignmentsRequest){
        60000, ts, 1};
}

static void sample_alter_partition_reassignments_resp(union any_msg *m)
{
    static struct kafka_ReassignablePartitionResponse ps[2];
    static struct kafka_ReassignableTopicResponse ts[1];
    ps[0] = (struct kafka_ReassignablePartitionResponse){0, 0, {NULL, 0}};
    ps[1] = (struct kafka_ReassignablePartitionResponse){
        5, 85, S("no reassignment")};
    ts[0] = (struct kafka_ReassignableTopicResponse){S("moves"), ps, 2};
    m->apr_resp = (struct kafka_AlterPartitionReassignmentsResponse){
        0, 0, {NULL, 0}, ts, 1};
}

static void sample_list_partition_reassignments_req(union any_msg *m)
{
    static const int32_t parts[2] = {0, 5};
    static struct kafka_ListPartitionReassignmentsTopics ts[1];
    ts[0] = (struct kafka_ListPartitionReassignmentsTopics){S("moves"),
                                                           parts, 2};
    m->lpr_req = (struct kafka_ListPartitionReassignmentsRequest){30000, ts,
                                                                  1};
}

static void sample_list_partition_reassignments_resp(union any_msg *m)
{
    static const int32_t replicas[4] = {4, 2, 3, 1};
    static const int32_t adding[1] = {4};
    static const int32_t removing[1] = {1};
    static struct kafka_OngoingPartitionReassignment ps[1];
    static struct kafka_OngoingTopicReassignment ts[1];
    ps[0] = (struct kafka_OngoingPartitionReassignment){
        0, replicas, 4, adding, 1, removing, 1};
    ts[0] = (struct kafka_OngoingTopicReassignment){S("moves"), ps, 1};
    m->lpr_resp = (struct kafka_ListPartitionReassignmentsResponse){
        0, 0, {NULL, 0}, ts, 1};
}

static void sample_unregister_broker_req(union any_msg *m)
{
    m->unregister_broker_req = (struct kafka_UnregisterBrokerRequest){4};
}

static void sample_unregister_broker_resp(union any_msg *m)
{
    m->unregister_broker_resp = (struct kafka_UnregisterBrokerResponse){
        0, 4, S("the broker still hosts replicas")};
}

/* --- The table ----------------------------------------------------------- */

struct codec_dir {
    decode_fn decode;
    encode_fn encode;
    void (*sample)(union any_msg *m);
};

struct codec_api {
    const char *name;
    int16_t key;
    struct codec_dir request;
    struct codec_dir response;
};

#define API(name, key)                                                 \
    {#name, key,                                                       \
     {dec_##name##_request, enc_##name##_request, sample_##name##_req}, \
     {dec_##name##_response, enc_##name##_response,                    \
      sample_##name##_resp}}

static const struct codec_api apis[] = {
    API(api_versions, KAFKA_API_API_VERSIONS),
    API(metadata, KAFKA_API_METADATA),
    API(produce, KAFKA_API_PRODUCE),
    API(fetch, KAFKA_API_FETCH),
    API(list_offsets, KAFKA_API_LIST_OFFSETS),
    API(create_topics, KAFKA_API_CREATE_TOPICS),
    API(delete_topics, KAFKA_API_DELETE_TOPICS),
    API(delete_records, KAFKA_API_DELETE_RECORDS),
    API(describe_configs, KAFKA_API_DESCRIBE_CONFIGS),
    API(init_producer_id, KAFKA_API_INIT_PRODUCER_ID),
    API(offset_for_leader_epoch, KAFKA_API_OFFSET_FOR_LEADER_EPOCH),
    API(offset_commit, KAFKA_API_OFFSET_COMMIT),
    API(offset_fetch, KAFKA_API_OFFSET_FETCH),
    API(find_coordinator, KAFKA_API_FIND_COORDINATOR),
    API(join_group, KAFKA_API_JOIN_GROUP),
    API(heartbeat, KAFKA_API_HEARTBEAT),
    API(leave_group, KAFKA_API_LEAVE_GROUP),
    API(sync_group, KAFKA_API_SYNC_GROUP),
    API(describe_groups, KAFKA_API_DESCRIBE_GROUPS),
    API(list_groups, KAFKA_API_LIST_GROUPS),
    API(delete_groups, KAFKA_API_DELETE_GROUPS),
    API(create_partitions, KAFKA_API_CREATE_PARTITIONS),
    API(describe_log_dirs, KAFKA_API_DESCRIBE_LOG_DIRS),
    API(describe_cluster, KAFKA_API_DESCRIBE_CLUSTER),
    API(elect_leaders, KAFKA_API_ELECT_LEADERS),
    API(alter_configs, KAFKA_API_ALTER_CONFIGS),
    API(incremental_alter_configs, KAFKA_API_INCREMENTAL_ALTER_CONFIGS),
    API(alter_partition_reassignments,
        KAFKA_API_ALTER_PARTITION_REASSIGNMENTS),
    API(list_partition_reassignments, KAFKA_API_LIST_PARTITION_REASSIGNMENTS),
    API(unregister_broker, KAFKA_API_UNREGISTER_BROKER),
};

static void version_range(const struct codec_api *api, int16_t *min,
                          int16_t *max)
{
    cr_assert(kafka_codec_version_range(api->key, min, max), "%s",
              api->name);
}

/* A heap copy of exactly n bytes of p (at least 1 allocated byte so that
 * malloc(0) cannot return NULL); the caller frees it. */
/* Encodes dir's sample at v into w (reset first). */
static void encode_sample(const struct codec_dir *dir, int16_t v,
                          struct writer *w)
{
    union any_msg m;
    memset(&m, 0, sizeof(m));
    dir->sample(&m);
    writer_reset(w);
    cr_assert_eq(dir->encode(w, v, &m), RC_OK);
}

/* Decodes len bytes at p (copied to an exact heap buffer) at v. */
/* Bytes the last decode_exact() left unread. */
static size_t decode_left;

static int decode_exact(const struct codec_dir *dir, int16_t v,
                        const uint8_t *p, size_t len, struct arena *a,
                        union any_msg *m)
{
    uint8_t *buf = exact_copy(p, len);
    struct reader r;
    reader_init(&r, buf, len);
    arena_reset(a);
    int rc = dir->decode(&r, v, a, m);
    decode_left = reader_remaining(&r);
    free(buf);
    return rc;
}

/* --- Round trips, truncation, trailing bytes ----------------------------- */

/* encode -> decode -> encode gives the same bytes. The decoded message
 * borrows from the buffer, so it is decoded from w's copy kept alive. */
static void check_round_trip(const struct codec_api *api,
                             const struct codec_dir *dir, int16_t v)
{
    struct writer w, w2;
    writer_init(&w, MAX_16M);
    writer_init(&w2, MAX_16M);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    encode_sample(dir, v, &w);
    struct reader r;
    reader_init(&r, w.data, w.len);
    union any_msg m;
    int rc = dir->decode(&r, v, &a, &m);
    cr_assert_eq(rc, RC_OK, "%s v%d: %s", api->name, v, rc_str(rc));
    cr_assert_eq(r.pos, w.len, "%s v%d: decoding stops at %zu of %zu",
                 api->name, v, r.pos, w.len);
    cr_assert_eq(dir->encode(&w2, v, &m), RC_OK);
    cr_assert_eq(w2.len, w.len, "%s v%d", api->name, v);
    cr_assert(w.len == 0 || memcmp(w.data, w2.data, w.len) == 0, "%s v%d",
              api->name, v);
    arena_free(&a);
    writer_free(&w);
    writer_free(&w2);
}

static void check_truncations(const struct codec_api *api,
                              const struct codec_dir *dir, int16_t v)
{
    struct writer w;
    writer_init(&w, MAX_16M);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    encode_sample(dir, v, &w);
    for (size_t len = 0; len < w.len; len++) {
        union any_msg m;
        int rc = decode_exact(dir, v, w.data, len, &a, &m);
        CHECK(rc == RC_SHORT, "%s v%d cut at %zu of %zu: %s", api->name, v,
              len, w.len, rc_str(rc));
    }
    /* One byte too many is left unread, as Kafka leaves it. */
    writer_i8(&w, 0);
    union any_msg m;
    int rc = decode_exact(dir, v, w.data, w.len, &a, &m);
    cr_assert_eq(rc, RC_OK, "%s v%d trailing byte: %s", api->name, v,
                 rc_str(rc));
    cr_assert_eq(decode_left, 1u, "%s v%d trailing byte: %zu left",
                 api->name, v, decode_left);
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_all, round_trips_every_request_at_every_version)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            check_round_trip(&apis[i], &apis[i].request, v);
        }
    }
}

Test(kafka_codec_all, round_trips_every_response_at_every_version)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            check_round_trip(&apis[i], &apis[i].response, v);
        }
    }
}

Test(kafka_codec_all, truncated_requests_are_short_and_extra_bytes_left_unread)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            check_truncations(&apis[i], &apis[i].request, v);
        }
    }
}

Test(kafka_codec_all, truncated_responses_are_short_and_extra_bytes_left_unread)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            check_truncations(&apis[i], &apis[i].response, v);
        }
    }
}

Test(kafka_codec_all, decoders_refuse_versions_outside_their_range)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        union any_msg m;
        int16_t below = (int16_t)(min - 1);
        cr_expect_eq(decode_exact(&apis[i].request, below, NULL, 0, &a, &m),
                     RC_INVALID, "%s v%d", apis[i].name, below);
        if (apis[i].key != KAFKA_API_API_VERSIONS) {
            int16_t above = (int16_t)(max + 1);
            cr_expect_eq(
                decode_exact(&apis[i].request, above, NULL, 0, &a, &m),
                RC_INVALID, "%s v%d", apis[i].name, above);
            cr_expect_eq(
                decode_exact(&apis[i].response, above, NULL, 0, &a, &m),
                RC_INVALID, "%s v%d", apis[i].name, above);
        }
        arena_free(&a);
    }
}

/* --- Garbage ------------------------------------------------------------- */

static uint64_t prng_next(uint64_t *s)
{
    /* xorshift64*: deterministic, good enough to shake a decoder. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Decodes len bytes at p; if that works, the re-encoding must decode too
 * and re-encode to the same bytes (decode o encode is stable). */
static void decode_garbage(const struct codec_api *api,
                           const struct codec_dir *dir, int16_t v,
                           const uint8_t *p, size_t len, struct arena *a)
{
    union any_msg m;
    uint8_t *buf = exact_copy(p, len);
    struct reader r;
    reader_init(&r, buf, len);
    arena_reset(a);
    int rc = dir->decode(&r, v, a, &m);
    if (rc == RC_OK) {
        struct writer w, w2;
        writer_init(&w, MAX_16M);
        writer_init(&w2, MAX_16M);
        CHECK(dir->encode(&w, v, &m) == RC_OK, "%s v%d", api->name, v);
        struct arena a2;
        arena_init(&a2, ARENA_BYTES_MAX);
        struct reader r2;
        reader_init(&r2, w.data, w.len);
        union any_msg m2;
        CHECK(dir->decode(&r2, v, &a2, &m2) == RC_OK, "%s v%d", api->name,
              v);
        CHECK(dir->encode(&w2, v, &m2) == RC_OK, "%s v%d", api->name, v);
        CHECK(w.len == w2.len &&
                  (w.len == 0 || memcmp(w.data, w2.data, w.len) == 0),
              "%s v%d: re-encoding is not stable", api->name, v);
        arena_free(&a2);
        writer_free(&w);
        writer_free(&w2);
    }
    free(buf);
}

static void shake_with_random_bytes(const struct codec_dir *dir_of_api,
                                    const struct codec_api *api, int16_t v,
                                    uint64_t *seed)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    uint8_t buf[96];
    for (int iter = 0; iter < 1000; iter++) {
        size_t len = (size_t)(prng_next(seed) % sizeof(buf));
        for (size_t k = 0; k < len; k++) {
            uint64_t x = prng_next(seed);
            /* Small counts and lengths are the interesting ones. */
            buf[k] = (uint8_t)((x >> 8) % 4 == 0 ? x : x % 3);
        }
        decode_garbage(api, dir_of_api, v, buf, len, &a);
    }
    arena_free(&a);
}

static void shake_with_mutations(const struct codec_dir *dir,
                                 const struct codec_api *api, int16_t v,
                                 uint64_t *seed)
{
    struct writer w;
    writer_init(&w, MAX_16M);
    encode_sample(dir, v, &w);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    uint8_t *buf = exact_copy(w.data, w.len);
    for (int iter = 0; iter < 1000 && w.len > 0; iter++) {
        memcpy(buf, w.data, w.len);
        int flips = 1 + (int)(prng_next(seed) % 3);
        for (int k = 0; k < flips; k++) {
            size_t at = (size_t)(prng_next(seed) % w.len);
            buf[at] = (uint8_t)prng_next(seed);
        }
        size_t len = w.len - (size_t)(prng_next(seed) % 2);
        decode_garbage(api, dir, v, buf, len, &a);
    }
    free(buf);
    arena_free(&a);
    writer_free(&w);
}

Test(kafka_codec_all, random_bytes_never_crash_any_decoder)
{
    uint64_t seed = 0x5eed0001u;
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            shake_with_random_bytes(&apis[i].request, &apis[i], v, &seed);
            shake_with_random_bytes(&apis[i].response, &apis[i], v, &seed);
        }
    }
}

Test(kafka_codec_all, mutated_valid_bodies_never_crash_any_decoder)
{
    uint64_t seed = 0x5eed0002u;
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        int16_t min, max;
        version_range(&apis[i], &min, &max);
        for (int16_t v = min; v <= max; v++) {
            shake_with_mutations(&apis[i].request, &apis[i], v, &seed);
            shake_with_mutations(&apis[i].response, &apis[i], v, &seed);
        }
    }
}

/* --- The samples, for other tests (codec_samples.h) ---------------------- */

bool codec_samples_encode(int16_t api_key, bool request, int16_t v,
                          struct writer *w)
{
    for (size_t i = 0; i < ARRAY_LEN(apis); i++) {
        if (apis[i].key == api_key) {
            encode_sample(request ? &apis[i].request : &apis[i].response, v,
                          w);
            return true;
        }
    }
    return false;
}
