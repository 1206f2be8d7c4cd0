/* Kafka codec (common/kafka/kafka_codec.h): Produce v3..11. Field lists
 * follow shared/reference/kafka-protocol.md section 4.3, checked against
 * apache/kafka 3.8 ProduceRequest.json and ProduceResponse.json (v8 adds
 * RecordErrors and ErrorMessage per partition; ThrottleTimeMs is the
 * response's last field; v9 is flexible, its Records COMPACT_RECORDS; v10
 * adds only tagged fields to the response and v11 none). Record bytes are
 * carried as they are, never parsed here. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool produce_version_ok(int16_t version)
{
    return version >= KAFKA_PRODUCE_VERSION_MIN &&
           version <= KAFKA_PRODUCE_VERSION_MAX;
}

/* The first flexible version (KIP-482) of request and response. */
#define PRODUCE__FLEX_VERSION 9

/* --- Request ------------------------------------------------------------- */

static void produce_topic_decode(struct reader *r, struct arena *a,
                                 struct kafka_TopicProduceData *t)
{
    t->Name = reader_string(r);
    /* index, records length: 8 bytes at least. */
    struct kafka_PartitionProduceData *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 8,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        parts[i].PartitionIndex = reader_i32(r);
        parts[i].Records = reader_nullable_bytes(r);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_produce_request_decode(struct reader *r, int16_t version,
                                 struct arena *a,
                                 struct kafka_ProduceRequest *out)
{
    if (!produce_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= PRODUCE__FLEX_VERSION);
    out->TransactionalId = reader_nullable_string(r);
    out->Acks = reader_i16(r);
    out->TimeoutMs = reader_i32(r);
    /* name, partitions count: 6 bytes at least. */
    struct kafka_TopicProduceData *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        produce_topic_decode(r, a, &topics[i]);
    }
    out->Topics = topics;
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}

int kafka_produce_request_encode(struct writer *w, int16_t version,
                                 const struct kafka_ProduceRequest *req)
{
    kafka_codec__check_version(version, KAFKA_PRODUCE_VERSION_MIN,
                               KAFKA_PRODUCE_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= PRODUCE__FLEX_VERSION);
    writer_nullable_string_slice(w, req->TransactionalId);
    writer_i16(w, req->Acks);
    writer_i32(w, req->TimeoutMs);
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        const struct kafka_TopicProduceData *t = &req->Topics[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            writer_i32(w, t->Partitions[j].PartitionIndex);
            writer_nullable_bytes_slice(w, t->Partitions[j].Records);
            kafka_codec__write_tags(w);
        }
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

/* --- Response ------------------------------------------------------------ */

static void
produce_partition_encode(struct writer *w, int16_t version,
                         const struct kafka_PartitionProduceResponse *p)
{
    writer_i32(w, p->PartitionIndex);
    writer_i16(w, p->ErrorCode);
    writer_i64(w, p->BaseOffset);
    writer_i64(w, p->LogAppendTimeMs);
    if (version >= 5) {
        writer_i64(w, p->LogStartOffset);
    }
    if (version >= 8) {
        kafka_codec__write_count(w, p->RecordErrorsCnt, p->RecordErrors,
                                 false);
        for (int32_t i = 0; i < p->RecordErrorsCnt; i++) {
            const struct kafka_BatchIndexAndErrorMessage *e =
                &p->RecordErrors[i];
            writer_i32(w, e->BatchIndex);
            writer_nullable_string_slice(w, e->BatchIndexErrorMessage);
            kafka_codec__write_tags(w);
        }
        writer_nullable_string_slice(w, p->ErrorMessage);
    }
    /* v10+ CurrentLeader (tag 0) is left out: see the header. */
    kafka_codec__write_tags(w);
}

int kafka_produce_response_encode(struct writer *w, int16_t version,
                                  const struct kafka_ProduceResponse *resp)
{
    kafka_codec__check_version(version, KAFKA_PRODUCE_VERSION_MIN,
                               KAFKA_PRODUCE_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= PRODUCE__FLEX_VERSION);
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_TopicProduceResponse *t = &resp->Responses[i];
        writer_string_slice(w, t->Name);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            produce_partition_encode(w, version, &t->Partitions[j]);
        }
        kafka_codec__write_tags(w);
    }
    writer_i32(w, resp->ThrottleTimeMs);
    /* v10+ NodeEndpoints (tag 0) is left out: see the header. */
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
}

static void produce_partition_decode(struct reader *r, int16_t version,
                                     struct arena *a,
                                     struct kafka_PartitionProduceResponse *p)
{
    p->PartitionIndex = reader_i32(r);
    p->ErrorCode = reader_i16(r);
    p->BaseOffset = reader_i64(r);
    p->LogAppendTimeMs = reader_i64(r);
    p->LogStartOffset = version >= 5 ? reader_i64(r) : -1;
    p->RecordErrors = NULL;
    p->RecordErrorsCnt = 0;
    p->ErrorMessage = slice_null();
    if (version >= 8) {
        /* batch index, message length: 6 bytes at least. */
        struct kafka_BatchIndexAndErrorMessage *errs = kafka_codec__array(
            r, a, &p->RecordErrorsCnt, sizeof(*errs), 6,
            (int32_t)KAFKA_ARRAY_COUNT_MAX, false);
        for (int32_t i = 0; i < p->RecordErrorsCnt; i++) {
            errs[i].BatchIndex = reader_i32(r);
            errs[i].BatchIndexErrorMessage = reader_nullable_string(r);
            kafka_codec__tags(r);
        }
        p->RecordErrors = errs;
        p->ErrorMessage = reader_nullable_string(r);
    }
    kafka_codec__tags(r);
}

static void produce_topic_response_decode(struct reader *r, int16_t version,
                                          struct arena *a,
                                          struct kafka_TopicProduceResponse *t)
{
    t->Name = reader_string(r);
    /* index, error, base offset, log append time: 22 bytes at least. */
    struct kafka_PartitionProduceResponse *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 22,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        produce_partition_decode(r, version, a, &parts[i]);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_produce_response_decode(struct reader *r, int16_t version,
                                  struct arena *a,
                                  struct kafka_ProduceResponse *out)
{
    if (!produce_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= PRODUCE__FLEX_VERSION);
    /* name, partitions count: 6 bytes at least. */
    struct kafka_TopicProduceResponse *topics = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt && r->rc == RC_OK; i++) {
        produce_topic_response_decode(r, version, a, &topics[i]);
    }
    out->Responses = topics;
    out->ThrottleTimeMs = reader_i32(r);
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
