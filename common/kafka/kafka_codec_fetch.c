/* Kafka codec (common/kafka/kafka_codec.h): Fetch v4..11 (ListOffsets is
 * kafka_codec_list_offsets.c). Field lists follow
 * shared/reference/kafka-protocol.md section 4.4, checked against
 * apache/kafka FetchRequest.json and FetchResponse.json. A Fetch response's
 * records are written as a length only; the bytes are spliced in by the
 * caller through kafka_fetch_records_cb. Pure: no I/O, no clock, no
 * globals; any thread. */
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_codec_internal.h"

#include "common/limits.h"
#include "common/rc.h"

static bool fetch_version_ok(int16_t version)
{
    return version >= KAFKA_FETCH_VERSION_MIN &&
           version <= KAFKA_FETCH_VERSION_MAX;
}

/* --- Fetch: request ------------------------------------------------------ */

static void fetch_topic_decode(struct reader *r, int16_t version,
                               struct arena *a,
                               struct kafka_FetchableTopic *t)
{
    t->Name = reader_string(r);
    /* index, fetch offset, max bytes: 16 bytes at least (v4). */
    struct kafka_FetchPartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 16,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        struct kafka_FetchPartition *p = &parts[i];
        p->PartitionIndex = reader_i32(r);
        p->CurrentLeaderEpoch = version >= 9 ? reader_i32(r) : -1;
        p->FetchOffset = reader_i64(r);
        p->LogStartOffset = version >= 5 ? reader_i64(r) : -1;
        p->PartitionMaxBytes = reader_i32(r);
    }
    t->Partitions = parts;
}

static void fetch_forgotten_decode(struct reader *r, struct arena *a,
                                   struct kafka_FetchRequest *out)
{
    /* name, partitions count: 6 bytes at least. */
    struct kafka_ForgottenTopic *topics = kafka_codec__array(
        r, a, &out->ForgottenTopicsDataCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ForgottenTopicsDataCnt; i++) {
        topics[i].Name = reader_string(r);
        topics[i].ForgottenPartitionIndexes = kafka_codec__read_i32s(
            r, a, &topics[i].ForgottenPartitionIndexesCnt);
    }
    out->ForgottenTopicsData = topics;
}

int kafka_fetch_request_decode(struct reader *r, int16_t version,
                               struct arena *a, struct kafka_FetchRequest *out)
{
    if (!fetch_version_ok(version)) {
        return RC_INVALID;
    }
    out->ReplicaId = reader_i32(r);
    out->MaxWaitMs = reader_i32(r);
    out->MinBytes = reader_i32(r);
    out->MaxBytes = reader_i32(r);
    out->IsolationLevel = reader_i8(r);
    out->SessionId = version >= 7 ? reader_i32(r) : 0;
    out->SessionEpoch = version >= 7 ? reader_i32(r) : -1;
    /* name, partitions count: 6 bytes at least. */
    struct kafka_FetchableTopic *topics = kafka_codec__array(
        r, a, &out->TopicsCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->TopicsCnt && r->rc == RC_OK; i++) {
        fetch_topic_decode(r, version, a, &topics[i]);
    }
    out->Topics = topics;
    out->ForgottenTopicsData = NULL;
    out->ForgottenTopicsDataCnt = 0;
    if (version >= 7) {
        fetch_forgotten_decode(r, a, out);
    }
    out->RackId = version >= 11 ? reader_string(r)
                                : kafka_codec__empty_string();
    return kafka_codec__finish(r);
}

static void fetch_topic_encode(struct writer *w, int16_t version,
                               const struct kafka_FetchableTopic *t)
{
    writer_string_slice(w, t->Name);
    kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        const struct kafka_FetchPartition *p = &t->Partitions[i];
        writer_i32(w, p->PartitionIndex);
        if (version >= 9) {
            writer_i32(w, p->CurrentLeaderEpoch);
        }
        writer_i64(w, p->FetchOffset);
        if (version >= 5) {
            writer_i64(w, p->LogStartOffset);
        }
        writer_i32(w, p->PartitionMaxBytes);
    }
}

int kafka_fetch_request_encode(struct writer *w, int16_t version,
                               const struct kafka_FetchRequest *req)
{
    kafka_codec__check_version(version, KAFKA_FETCH_VERSION_MIN,
                               KAFKA_FETCH_VERSION_MAX);
    writer_i32(w, req->ReplicaId);
    writer_i32(w, req->MaxWaitMs);
    writer_i32(w, req->MinBytes);
    writer_i32(w, req->MaxBytes);
    writer_i8(w, req->IsolationLevel);
    if (version >= 7) {
        writer_i32(w, req->SessionId);
        writer_i32(w, req->SessionEpoch);
    }
    kafka_codec__write_count(w, req->TopicsCnt, req->Topics, false);
    for (int32_t i = 0; i < req->TopicsCnt; i++) {
        fetch_topic_encode(w, version, &req->Topics[i]);
    }
    if (version >= 7) {
        kafka_codec__write_count(w, req->ForgottenTopicsDataCnt,
                                 req->ForgottenTopicsData, false);
        for (int32_t i = 0; i < req->ForgottenTopicsDataCnt; i++) {
            const struct kafka_ForgottenTopic *f =
                &req->ForgottenTopicsData[i];
            writer_string_slice(w, f->Name);
            kafka_codec__write_i32s(w, f->ForgottenPartitionIndexes,
                                    f->ForgottenPartitionIndexesCnt);
        }
    }
    if (version >= 11) {
        writer_string_slice(w, req->RackId);
    }
    return w->rc;
}

/* --- Fetch: response ----------------------------------------------------- */

/* Writes the records length and hands the position after it to the
 * callback; checks that the callback wrote all the bytes or none. */
static int
fetch_records_encode(struct writer *w,
                     const struct kafka_FetchablePartitionResponse *p,
                     kafka_fetch_records_cb records_cb, void *cb_arg)
{
    ASSERT(p->RecordsBytes >= -1);
    writer_i32(w, p->RecordsBytes);
    if (p->RecordsBytes <= 0 || w->rc != RC_OK) {
        return RC_OK;
    }
    ASSERT(records_cb != NULL);
    size_t at = w->len;
    int rc = records_cb(cb_arg, w, p, at);
    if (rc != RC_OK || w->rc != RC_OK) {
        return rc;
    }
    ASSERT(w->len == at || w->len == at + (size_t)p->RecordsBytes);
    return RC_OK;
}

static int
fetch_partition_encode(struct writer *w, int16_t version,
                       const struct kafka_FetchablePartitionResponse *p,
                       kafka_fetch_records_cb records_cb, void *cb_arg)
{
    writer_i32(w, p->PartitionIndex);
    writer_i16(w, p->ErrorCode);
    writer_i64(w, p->HighWatermark);
    writer_i64(w, p->LastStableOffset);
    if (version >= 5) {
        writer_i64(w, p->LogStartOffset);
    }
    kafka_codec__write_count(w, p->AbortedTransactionsCnt,
                             p->AbortedTransactions, true);
    for (int32_t i = 0; i < p->AbortedTransactionsCnt; i++) {
        writer_i64(w, p->AbortedTransactions[i].ProducerId);
        writer_i64(w, p->AbortedTransactions[i].FirstOffset);
    }
    if (version >= 11) {
        writer_i32(w, p->PreferredReadReplica);
    }
    return fetch_records_encode(w, p, records_cb, cb_arg);
}

int kafka_fetch_response_encode(struct writer *w, int16_t version,
                                const struct kafka_FetchResponse *resp,
                                kafka_fetch_records_cb records_cb,
                                void *cb_arg)
{
    kafka_codec__check_version(version, KAFKA_FETCH_VERSION_MIN,
                               KAFKA_FETCH_VERSION_MAX);
    writer_i32(w, resp->ThrottleTimeMs);
    if (version >= 7) {
        writer_i16(w, resp->ErrorCode);
        writer_i32(w, resp->SessionId);
    }
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_FetchableTopicResponse *t = &resp->Responses[i];
        writer_string_slice(w, t->Topic);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            int rc = fetch_partition_encode(w, version, &t->Partitions[j],
                                            records_cb, cb_arg);
            if (rc != RC_OK) {
                return rc;
            }
        }
    }
    return w->rc;
}

static void
fetch_partition_decode(struct reader *r, int16_t version, struct arena *a,
                       struct kafka_FetchablePartitionResponse *p)
{
    p->PartitionIndex = reader_i32(r);
    p->ErrorCode = reader_i16(r);
    p->HighWatermark = reader_i64(r);
    p->LastStableOffset = reader_i64(r);
    p->LogStartOffset = version >= 5 ? reader_i64(r) : -1;
    struct kafka_AbortedTransaction *txns = kafka_codec__array(
        r, a, &p->AbortedTransactionsCnt, sizeof(*txns), 16,
        (int32_t)KAFKA_ARRAY_COUNT_MAX, true /* nullable */);
    for (int32_t i = 0; i < p->AbortedTransactionsCnt; i++) {
        txns[i].ProducerId = reader_i64(r);
        txns[i].FirstOffset = reader_i64(r);
    }
    p->AbortedTransactions = txns;
    p->PreferredReadReplica = version >= 11 ? reader_i32(r) : -1;
    p->Records = reader_nullable_bytes(r);
    p->RecordsBytes =
        slice_is_null(p->Records) ? -1 : (int32_t)p->Records.len;
    p->records_arg = NULL;
}

static void fetch_topic_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_FetchableTopicResponse *t)
{
    t->Topic = reader_string(r);
    /* index, error, hwm, lso, aborted count, records length: 30 bytes. */
    struct kafka_FetchablePartitionResponse *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 30,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        fetch_partition_decode(r, version, a, &parts[i]);
    }
    t->Partitions = parts;
}

int kafka_fetch_response_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_FetchResponse *out)
{
    if (!fetch_version_ok(version)) {
        return RC_INVALID;
    }
    out->ThrottleTimeMs = reader_i32(r);
    out->ErrorCode = version >= 7 ? reader_i16(r) : 0;
    out->SessionId = version >= 7 ? reader_i32(r) : 0;
    /* topic, partitions count: 6 bytes at least. */
    struct kafka_FetchableTopicResponse *topics = kafka_codec__array(
        r, a, &out->ResponsesCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ResponsesCnt && r->rc == RC_OK; i++) {
        fetch_topic_response_decode(r, version, a, &topics[i]);
    }
    out->Responses = topics;
    return kafka_codec__finish(r);
}
