/* libFuzzer target for the Kafka request decoders (common/kafka/kafka_codec.h).
 * Input: ApiKey (int16, big-endian), ApiVersion (int16, big-endian), then
 * the request body, which goes to the matching decoder exactly as the
 * broker would hand it over (a frame of exactly that many bytes). ApiKeys
 * the codec does not know, and versions outside a range, are decoded too:
 * the decoders must refuse them without reading.
 *
 * Oracles besides the sanitizers: a decode returns an RC_* code, never
 * anything else; a decode that succeeds re-encodes without error, and the
 * re-encoding decodes and re-encodes to the same bytes (decode o encode is
 * stable; bytes need not equal the input, since e.g. any non-zero bool
 * byte decodes as true and re-encodes as 01).
 *
 * Build (wiring into `make fuzz` is separate), from the repository root:
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -I. \
 *       -fsanitize=fuzzer,address,undefined tests/fuzz/fuzz_kafka_request.c \
 *       broker/kafka_codec*.c common/arena.c common/reader.c \
 *       common/writer.c common/rc.c common/assert.c -o fuzz_kafka_request
 * Pure apart from what libFuzzer does; one input at a time. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A response body is never larger than this here: decoded requests are
 * bounded by the input, which libFuzzer keeps small. */
#define FUZZ__WRITER_BYTES_MAX (64u * 1024 * 1024)

union fuzz_request {
    struct kafka_ApiVersionsRequest api_versions;
    struct kafka_MetadataRequest metadata;
    struct kafka_ProduceRequest produce;
    struct kafka_FetchRequest fetch;
    struct kafka_ListOffsetsRequest list_offsets;
    struct kafka_CreateTopicsRequest create_topics;
    struct kafka_DeleteTopicsRequest delete_topics;
    struct kafka_DescribeConfigsRequest describe_configs;
    struct kafka_InitProducerIdRequest init_producer_id;
    struct kafka_OffsetForLeaderEpochRequest offset_for_leader_epoch;
    struct kafka_FindCoordinatorRequest find_coordinator;
    struct kafka_JoinGroupRequest join_group;
    struct kafka_HeartbeatRequest heartbeat;
    struct kafka_LeaveGroupRequest leave_group;
    struct kafka_SyncGroupRequest sync_group;
    struct kafka_OffsetCommitRequest offset_commit;
    struct kafka_OffsetFetchRequest offset_fetch;
    struct kafka_DescribeGroupsRequest describe_groups;
    struct kafka_ListGroupsRequest list_groups;
    struct kafka_DeleteGroupsRequest delete_groups;
};

/* The consumer-group decoders (kafka_codec_group.c, _offsets.c). */
static int fuzz_decode_group(int16_t api_key, int16_t v, struct reader *r,
                             struct arena *a, union fuzz_request *m)
{
    switch (api_key) {
    case KAFKA_API_FIND_COORDINATOR:
        return kafka_find_coordinator_request_decode(r, v, a,
                                                     &m->find_coordinator);
    case KAFKA_API_JOIN_GROUP:
        return kafka_join_group_request_decode(r, v, a, &m->join_group);
    case KAFKA_API_HEARTBEAT:
        return kafka_heartbeat_request_decode(r, v, a, &m->heartbeat);
    case KAFKA_API_LEAVE_GROUP:
        return kafka_leave_group_request_decode(r, v, a, &m->leave_group);
    case KAFKA_API_SYNC_GROUP:
        return kafka_sync_group_request_decode(r, v, a, &m->sync_group);
    case KAFKA_API_OFFSET_COMMIT:
        return kafka_offset_commit_request_decode(r, v, a,
                                                  &m->offset_commit);
    case KAFKA_API_OFFSET_FETCH:
        return kafka_offset_fetch_request_decode(r, v, a, &m->offset_fetch);
    case KAFKA_API_DESCRIBE_GROUPS:
        return kafka_describe_groups_request_decode(r, v, a,
                                                    &m->describe_groups);
    case KAFKA_API_LIST_GROUPS:
        return kafka_list_groups_request_decode(r, v, a, &m->list_groups);
    case KAFKA_API_DELETE_GROUPS:
        return kafka_delete_groups_request_decode(r, v, a,
                                                  &m->delete_groups);
    default:
        return RC_INVALID;
    }
}

static int fuzz_encode_group(int16_t api_key, int16_t v, struct writer *w,
                             const union fuzz_request *m)
{
    switch (api_key) {
    case KAFKA_API_FIND_COORDINATOR:
        return kafka_find_coordinator_request_encode(w, v,
                                                     &m->find_coordinator);
    case KAFKA_API_JOIN_GROUP:
        return kafka_join_group_request_encode(w, v, &m->join_group);
    case KAFKA_API_HEARTBEAT:
        return kafka_heartbeat_request_encode(w, v, &m->heartbeat);
    case KAFKA_API_LEAVE_GROUP:
        return kafka_leave_group_request_encode(w, v, &m->leave_group);
    case KAFKA_API_SYNC_GROUP:
        return kafka_sync_group_request_encode(w, v, &m->sync_group);
    case KAFKA_API_OFFSET_COMMIT:
        return kafka_offset_commit_request_encode(w, v, &m->offset_commit);
    case KAFKA_API_OFFSET_FETCH:
        return kafka_offset_fetch_request_encode(w, v, &m->offset_fetch);
    case KAFKA_API_DESCRIBE_GROUPS:
        return kafka_describe_groups_request_encode(w, v,
                                                    &m->describe_groups);
    case KAFKA_API_LIST_GROUPS:
        return kafka_list_groups_request_encode(w, v, &m->list_groups);
    case KAFKA_API_DELETE_GROUPS:
        return kafka_delete_groups_request_encode(w, v, &m->delete_groups);
    default:
        ASSERT(false);
        return RC_INVALID;
    }
}

/* Decodes with the decoder for api_key; RC_INVALID for an unknown key. */
static int fuzz_decode(int16_t api_key, int16_t v, struct reader *r,
                       struct arena *a, union fuzz_request *m)
{
    switch (api_key) {
    case KAFKA_API_API_VERSIONS:
        return kafka_api_versions_request_decode(r, v, a, &m->api_versions);
    case KAFKA_API_METADATA:
        return kafka_metadata_request_decode(r, v, a, &m->metadata);
    case KAFKA_API_PRODUCE:
        return kafka_produce_request_decode(r, v, a, &m->produce);
    case KAFKA_API_FETCH:
        return kafka_fetch_request_decode(r, v, a, &m->fetch);
    case KAFKA_API_LIST_OFFSETS:
        return kafka_list_offsets_request_decode(r, v, a, &m->list_offsets);
    case KAFKA_API_CREATE_TOPICS:
        return kafka_create_topics_request_decode(r, v, a,
                                                  &m->create_topics);
    case KAFKA_API_DELETE_TOPICS:
        return kafka_delete_topics_request_decode(r, v, a,
                                                  &m->delete_topics);
    case KAFKA_API_DESCRIBE_CONFIGS:
        return kafka_describe_configs_request_decode(r, v, a,
                                                     &m->describe_configs);
    case KAFKA_API_INIT_PRODUCER_ID:
        return kafka_init_producer_id_request_decode(r, v, a,
                                                     &m->init_producer_id);
    case KAFKA_API_OFFSET_FOR_LEADER_EPOCH:
        return kafka_offset_for_leader_epoch_request_decode(
            r, v, a, &m->offset_for_leader_epoch);
    default:
        return fuzz_decode_group(api_key, v, r, a, m);
    }
}

static int fuzz_encode(int16_t api_key, int16_t v, struct writer *w,
                       const union fuzz_request *m)
{
    switch (api_key) {
    case KAFKA_API_API_VERSIONS:
        return kafka_api_versions_request_encode(w, v, &m->api_versions);
    case KAFKA_API_METADATA:
        return kafka_metadata_request_encode(w, v, &m->metadata);
    case KAFKA_API_PRODUCE:
        return kafka_produce_request_encode(w, v, &m->produce);
    case KAFKA_API_FETCH:
        return kafka_fetch_request_encode(w, v, &m->fetch);
    case KAFKA_API_LIST_OFFSETS:
        return kafka_list_offsets_request_encode(w, v, &m->list_offsets);
    case KAFKA_API_CREATE_TOPICS:
        return kafka_create_topics_request_encode(w, v, &m->create_topics);
    case KAFKA_API_DELETE_TOPICS:
        return kafka_delete_topics_request_encode(w, v, &m->delete_topics);
    case KAFKA_API_DESCRIBE_CONFIGS:
        return kafka_describe_configs_request_encode(w, v,
                                                     &m->describe_configs);
    case KAFKA_API_INIT_PRODUCER_ID:
        return kafka_init_producer_id_request_encode(w, v,
                                                     &m->init_producer_id);
    case KAFKA_API_OFFSET_FOR_LEADER_EPOCH:
        return kafka_offset_for_leader_epoch_request_encode(
            w, v, &m->offset_for_leader_epoch);
    default:
        return fuzz_encode_group(api_key, v, w, m);
    }
}

/* The highest version the codec parses for api_key, in *max; false for
 * an ApiKey it does not know. */
static bool fuzz_version_max(int16_t api_key, int16_t *max)
{
    return kafka_codec_version_range(api_key, NULL, max);
}

/* The decoded request re-encodes, and that encoding is a fixed point. */
static void fuzz_check_stable(int16_t api_key, int16_t v,
                              const union fuzz_request *m)
{
    struct writer w1, w2;
    writer_init(&w1, FUZZ__WRITER_BYTES_MAX);
    writer_init(&w2, FUZZ__WRITER_BYTES_MAX);
    ASSERT(fuzz_encode(api_key, v, &w1, m) == RC_OK);
    struct reader r;
    reader_init(&r, w1.data, w1.len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    union fuzz_request m2;
    ASSERT(fuzz_decode(api_key, v, &r, &a, &m2) == RC_OK);
    ASSERT(fuzz_encode(api_key, v, &w2, &m2) == RC_OK);
    ASSERT(w1.len == w2.len);
    ASSERT(w1.len == 0 || memcmp(w1.data, w2.data, w1.len) == 0);
    arena_free(&a);
    writer_free(&w1);
    writer_free(&w2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) {
        return 0;
    }
    int16_t api_key = (int16_t)(((unsigned)data[0] << 8) | data[1]);
    int16_t version = (int16_t)(((unsigned)data[2] << 8) | data[3]);
    /* An exact copy, so a read past the body is a sanitizer report. */
    size_t body_len = size - 4;
    uint8_t *body = malloc(body_len > 0 ? body_len : 1);
    ASSERT(body != NULL);
    if (body_len > 0) {
        memcpy(body, data + 4, body_len);
    }
    struct reader r;
    reader_init(&r, body, body_len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    union fuzz_request m;
    int rc = fuzz_decode(api_key, version, &r, &a, &m);
    ASSERT(rc >= RC_OK && rc < RC__COUNT);
    int16_t max = 0;
    bool known = fuzz_version_max(api_key, &max);
    /* ApiVersions above its range is answered unparsed: nothing to
     * re-encode. */
    if (rc == RC_OK && known && version <= max) {
        fuzz_check_stable(api_key, version, &m);
    }
    arena_free(&a);
    free(body);
    return 0;
}
