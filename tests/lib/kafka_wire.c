/* Test helper over the blocking Kafka client (tests/lib/kafka_wire.h). */
#include "tests/lib/kafka_wire.h"

#include <stdlib.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"

bool kafka_wire_connect(struct kafka_client *kc, int port)
{
    return kafka_client_open(kc, "127.0.0.1", port, "test",
                             KAFKA_WIRE_TIMEOUT_MS) == RC_OK;
}

uint8_t *kafka_wire_roundtrip(struct kafka_client *kc, int16_t key,
                              int16_t version, const struct writer *body,
                              size_t *len)
{
    uint8_t *resp = NULL;
    kafka_client_set_timeout(kc, KAFKA_WIRE_TIMEOUT_MS);
    if (kafka_client_call(kc, key, version, body, &resp, len) != RC_OK) {
        return NULL;
    }
    /* An empty answer is still one: a byte to free, as before. */
    return resp != NULL ? resp : calloc(1, 1);
}

bool kafka_wire_produce_answer(struct kafka_client *kc, const char *topic,
                               int32_t partition, const uint8_t *batch,
                               size_t len, int16_t acks, int32_t timeout_ms,
                               struct kafka_PartitionProduceResponse *out)
{
    struct kafka_PartitionProduceData pd = {
        .PartitionIndex = partition, .Records = {.ptr = batch, .len = len}};
    struct kafka_TopicProduceData td = {.Name = slice_from_str(topic),
                                        .Partitions = &pd,
                                        .PartitionsCnt = 1};
    struct kafka_ProduceRequest rq = {.TransactionalId = slice_null(),
                                      .Acks = acks, .TimeoutMs = timeout_ms,
                                      .Topics = &td, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, len + (1u << 20));
    int rv = kafka_produce_request_encode(&w, 7, &rq);
    size_t resp_len = 0;
    uint8_t *resp = rv == RC_OK ? kafka_wire_roundtrip(kc, KAFKA_API_PRODUCE,
                                                       7, &w, &resp_len)
                                : NULL;
    writer_free(&w);
    if (resp == NULL) {
        return false;
    }
    struct reader r;
    reader_init(&r, resp, resp_len);
    struct arena a;
    arena_init(&a, 1u << 20);
    struct kafka_ProduceResponse pr;
    bool ok = kafka_produce_response_decode(&r, 7, &a, &pr) == RC_OK &&
              pr.ResponsesCnt == 1 && pr.Responses[0].PartitionsCnt == 1;
    if (ok) {
        *out = pr.Responses[0].Partitions[0];
        /* What points into the freed answer is not handed out (v7 has
         * neither field anyway). */
        out->RecordErrors = NULL;
        out->RecordErrorsCnt = 0;
        out->ErrorMessage = slice_null();
    }
    arena_free(&a);
    free(resp);
    return ok;
}

int16_t kafka_wire_produce(struct kafka_client *kc, const char *topic,
                           int32_t partition, const uint8_t *batch,
                           size_t len, int16_t acks)
{
    struct kafka_PartitionProduceResponse out;
    if (!kafka_wire_produce_answer(kc, topic, partition, batch, len, acks,
                                   10000, &out)) {
        return KAFKA_ERROR_REQUEST_TIMED_OUT;
    }
    return out.ErrorCode;
}

bool kafka_wire_call(int port, int16_t key, int16_t version,
                     const struct writer *body, struct kafka_wire_answer *ans)
{
    struct kafka_client kc;
    size_t len = 0;
    ans->bytes = NULL;
    if (kafka_wire_connect(&kc, port)) {
        ans->bytes = kafka_wire_roundtrip(&kc, key, version, body, &len);
    }
    kafka_client_close(&kc);
    if (ans->bytes == NULL) {
        return false;
    }
    reader_init(&ans->r, ans->bytes, len);
    arena_init(&ans->a, ARENA_BYTES_MAX);
    return true;
}

void kafka_wire_answer_free(struct kafka_wire_answer *ans)
{
    arena_free(&ans->a);
    free(ans->bytes);
}

int16_t kafka_wire_set_broker_config(int port, const char *broker,
                                     const char *name, const char *value)
{
    return kafka_wire_set_config(port, 4 /* broker */, broker, name, value);
}

int16_t kafka_wire_set_config(int port, int8_t type, const char *resource,
                              const char *name, const char *value)
{
    struct kafka_AlterableConfig cfg = {
        slice_from_str(name), value != NULL ? 0 : 1, /* SET, DELETE */
        value != NULL ? slice_from_str(value) : slice_null()};
    struct kafka_AlterConfigsResource res = {type, slice_from_str(resource),
                                             &cfg, 1};
    struct kafka_IncrementalAlterConfigsRequest rq = {&res, 1, false};
    struct writer w;
    writer_init(&w, 1024);
    struct kafka_wire_answer ans;
    bool answered =
        kafka_incremental_alter_configs_request_encode(&w, 0, &rq) == RC_OK &&
        kafka_wire_call(port, KAFKA_API_INCREMENTAL_ALTER_CONFIGS, 0, &w,
                        &ans);
    writer_free(&w);
    if (!answered) {
        return KAFKA_ERROR_REQUEST_TIMED_OUT;
    }
    struct kafka_AlterConfigsResponse ar;
    int16_t e = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    if (kafka_incremental_alter_configs_response_decode(&ans.r, 0, &ans.a,
                                                        &ar) == RC_OK &&
        ar.ResponsesCnt == 1) {
        e = ar.Responses[0].ErrorCode;
    }
    kafka_wire_answer_free(&ans);
    return e;
}

int16_t kafka_wire_reassign(int port, const char *topic, int32_t partition,
                            const int32_t *replicas, int32_t n)
{
    struct kafka_ReassignablePartition p = {partition, replicas,
                                            replicas != NULL ? n : -1};
    struct kafka_ReassignableTopic t = {slice_from_str(topic), &p, 1};
    struct kafka_AlterPartitionReassignmentsRequest rq = {30000, &t, 1};
    struct writer w;
    writer_init(&w, 1024);
    struct kafka_wire_answer ans;
    bool answered =
        kafka_alter_partition_reassignments_request_encode(&w, 0, &rq) ==
            RC_OK &&
        kafka_wire_call(port, KAFKA_API_ALTER_PARTITION_REASSIGNMENTS, 0, &w,
                        &ans);
    writer_free(&w);
    if (!answered) {
        return KAFKA_ERROR_REQUEST_TIMED_OUT;
    }
    struct kafka_AlterPartitionReassignmentsResponse ar;
    int16_t e = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    if (kafka_alter_partition_reassignments_response_decode(&ans.r, 0, &ans.a,
                                                            &ar) == RC_OK) {
        e = ar.ErrorCode;
        if (e == KAFKA_ERROR_NONE &&
            (ar.ResponsesCnt != 1 || ar.Responses[0].PartitionsCnt != 1)) {
            e = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        } else if (e == KAFKA_ERROR_NONE) {
            e = ar.Responses[0].Partitions[0].ErrorCode;
        }
    }
    kafka_wire_answer_free(&ans);
    return e;
}

int kafka_wire_typed_call(int port, int16_t key, int16_t v,
                          kafka_wire_encode_fn enc, const void *req,
                          kafka_wire_decode_fn dec, void *out,
                          struct kafka_wire_answer *ans)
{
    struct writer body;
    writer_init(&body, 1u << 20);
    if (enc(&body, v, req) != RC_OK) {
        writer_free(&body);
        return RC_INVALID;
    }
    bool answered = kafka_wire_call(port, key, v, &body, ans);
    writer_free(&body);
    if (!answered) {
        return RC_IO;
    }
    return dec(&ans->r, v, &ans->a, out) == RC_OK ? RC_OK : RC_MALFORMED;
}

int kafka_wire_enc_metadata(struct writer *w, int16_t v, const void *req)
{
    return kafka_metadata_request_encode(w, v, req);
}

int kafka_wire_dec_metadata(struct reader *r, int16_t v, struct arena *a,
                            void *out)
{
    return kafka_metadata_response_decode(r, v, a, out);
}

int kafka_wire_enc_create(struct writer *w, int16_t v, const void *req)
{
    return kafka_create_topics_request_encode(w, v, req);
}

int kafka_wire_dec_create(struct reader *r, int16_t v, struct arena *a,
                          void *out)
{
    return kafka_create_topics_response_decode(r, v, a, out);
}

uint8_t *kafka_wire_recv_frame(struct kafka_client *kc, size_t *len)
{
    uint8_t *frame = NULL;
    ASSERT(kafka_client_recv_frame(kc, &frame, len) == RC_OK);
    return frame;
}
