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
 * Built and run by `make fuzz` (and `make test`), from the codec sources
 * alone (the Makefile's FUZZ_CODEC_SRC).
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
    struct kafka_DeleteRecordsRequest delete_records;
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
    struct kafka_AlterConfigsRequest alter_configs;
    struct kafka_IncrementalAlterConfigsRequest incremental_alter_configs;
};

/* Decodes with the codec's decoder for api_key (kafka_apis[]);
 * RC_INVALID for an unknown key. */
static int fuzz_decode(int16_t api_key, int16_t v, struct reader *r,
                       struct arena *a, union fuzz_request *m)
{
    const struct kafka_api *api = kafka_api_find(api_key);
    if (api == NULL) {
        return RC_INVALID;
    }
    ASSERT(api->request_bytes <= sizeof *m);
    return api->decode(r, v, a, m);
}

static int fuzz_encode(int16_t api_key, int16_t v, struct writer *w,
                       const union fuzz_request *m)
{
    const struct kafka_api *api = kafka_api_find(api_key);
    ASSERT(api != NULL);
    return api->encode(w, v, m);
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
