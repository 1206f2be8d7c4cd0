/* Kafka codec (common/kafka/kafka_codec.h): Fetch v4..16 (ListOffsets is
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

/* Fetch's versions (kafka_codec_fetch.h): flexible from v12, topic ids
 * from v13, ReplicaId tagged from v15. */
#define FETCH__FLEX_VERSION 12
#define FETCH__TOPIC_ID_VERSION 13
#define FETCH__REPLICA_STATE_VERSION 15
/* The request's ReplicaState tag and its body: ReplicaId, ReplicaEpoch
 * and an empty tagged-field section. */
#define FETCH__REPLICA_STATE_TAG 1
#define FETCH__REPLICA_STATE_BYTES (4 + 8 + 1)

/* --- Fetch: request ------------------------------------------------------ */

static void fetch_topic_decode(struct reader *r, int16_t version,
                               struct arena *a,
                               struct kafka_FetchableTopic *t)
{
    bool ids = version >= FETCH__TOPIC_ID_VERSION;
    t->Name = ids ? slice_null() : reader_string(r);
    t->TopicId = ids ? kafka_codec__read_uuid(r) : (struct kafka_uuid){{0}};
    /* index, fetch offset, max bytes: 16 bytes at least (v4). */
    struct kafka_FetchPartition *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 16,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        struct kafka_FetchPartition *p = &parts[i];
        p->PartitionIndex = reader_i32(r);
        p->CurrentLeaderEpoch = version >= 9 ? reader_i32(r) : -1;
        p->FetchOffset = reader_i64(r);
        p->LastFetchedEpoch =
            version >= FETCH__FLEX_VERSION ? reader_i32(r) : -1;
        p->LogStartOffset = version >= 5 ? reader_i64(r) : -1;
        p->PartitionMaxBytes = reader_i32(r);
        kafka_codec__tags(r);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

static void fetch_forgotten_decode(struct reader *r, int16_t version,
                                   struct arena *a,
                                   struct kafka_FetchRequest *out)
{
    bool ids = version >= FETCH__TOPIC_ID_VERSION;
    /* name, partitions count: 6 bytes at least. */
    struct kafka_ForgottenTopic *topics = kafka_codec__array(
        r, a, &out->ForgottenTopicsDataCnt, sizeof(*topics), 6,
        (int32_t)KAFKA_REQUEST_TOPICS_MAX, false);
    for (int32_t i = 0; i < out->ForgottenTopicsDataCnt; i++) {
        topics[i].Name = ids ? slice_null() : reader_string(r);
        topics[i].TopicId =
            ids ? kafka_codec__read_uuid(r) : (struct kafka_uuid){{0}};
        topics[i].ForgottenPartitionIndexes = kafka_codec__read_i32s(
            r, a, &topics[i].ForgottenPartitionIndexesCnt, false);
        kafka_codec__tags(r);
    }
    out->ForgottenTopicsData = topics;
}

/* ReplicaState's body (tag 1, v15+): ReplicaId, ReplicaEpoch, tags. */
static void fetch_replica_state_decode(struct reader *r, struct slice body,
                                       struct kafka_FetchRequest *out)
{
    struct reader sub;
    reader_init(&sub, body.ptr, body.len);
    kafka_codec__flexible(&sub, true);
    out->ReplicaId = reader_i32(&sub);
    out->ReplicaEpoch = reader_i64(&sub);
    kafka_codec__tags(&sub);
    if (kafka_codec__finish(&sub) != RC_OK || reader_remaining(&sub) != 0) {
        kafka_codec__fail(r, RC_MALFORMED); /* its size says otherwise */
    }
}

/* The request's tagged fields: ReplicaState (v15+) is read, ClusterId
 * (tag 0) and tags Cairn does not know are skipped. */
static void fetch_request_tags(struct reader *r, int16_t version,
                               struct kafka_FetchRequest *out)
{
    if (version < FETCH__REPLICA_STATE_VERSION) {
        kafka_codec__tags(r);
        return;
    }
    uint32_t count = reader_uvarint(r);
    /* Each field takes at least 2 bytes (tag, size): a count the bytes
     * left cannot hold is a cut body, as an array's is. */
    if (r->rc == RC_OK && count > reader_remaining(r) / 2) {
        kafka_codec__fail(r, RC_SHORT);
    }
    for (uint32_t i = 0; i < count && r->rc == RC_OK; i++) {
        uint32_t tag = reader_uvarint(r);
        uint32_t size = reader_uvarint(r);
        struct slice body = reader_raw(r, size);
        if (r->rc == RC_OK && tag == FETCH__REPLICA_STATE_TAG) {
            fetch_replica_state_decode(r, body, out);
        }
    }
}

int kafka_fetch_request_decode(struct reader *r, int16_t version,
                               struct arena *a, struct kafka_FetchRequest *out)
{
    if (!fetch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= FETCH__FLEX_VERSION);
    out->ReplicaId =
        version < FETCH__REPLICA_STATE_VERSION ? reader_i32(r) : -1;
    out->ReplicaEpoch = -1;
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
        fetch_forgotten_decode(r, version, a, out);
    }
    out->RackId = version >= 11 ? reader_string(r)
                                : kafka_codec__empty_string();
    fetch_request_tags(r, version, out);
    return kafka_codec__finish(r);
}

/* A topic's name (v0..12) or id (v13+). */
static void fetch_topic_key_encode(struct writer *w, int16_t version,
                                   struct slice name,
                                   const struct kafka_uuid *id)
{
    if (version >= FETCH__TOPIC_ID_VERSION) {
        kafka_codec__write_uuid(w, id);
    } else {
        writer_string_slice(w, name);
    }
}

static void fetch_topic_encode(struct writer *w, int16_t version,
                               const struct kafka_FetchableTopic *t)
{
    fetch_topic_key_encode(w, version, t->Name, &t->TopicId);
    kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
    for (int32_t i = 0; i < t->PartitionsCnt; i++) {
        const struct kafka_FetchPartition *p = &t->Partitions[i];
        writer_i32(w, p->PartitionIndex);
        if (version >= 9) {
            writer_i32(w, p->CurrentLeaderEpoch);
        }
        writer_i64(w, p->FetchOffset);
        if (version >= FETCH__FLEX_VERSION) {
            writer_i32(w, p->LastFetchedEpoch);
        }
        if (version >= 5) {
            writer_i64(w, p->LogStartOffset);
        }
        writer_i32(w, p->PartitionMaxBytes);
        kafka_codec__write_tags(w);
    }
    kafka_codec__write_tags(w);
}

/* The request's tagged fields: ReplicaState when it is not all defaults
 * (v15+), nothing else. */
static void fetch_request_tags_encode(struct writer *w, int16_t version,
                                      const struct kafka_FetchRequest *req)
{
    if (version < FETCH__REPLICA_STATE_VERSION ||
        (req->ReplicaId == -1 && req->ReplicaEpoch == -1)) {
        kafka_codec__write_tags(w);
        return;
    }
    writer_uvarint(w, 1);
    writer_uvarint(w, FETCH__REPLICA_STATE_TAG);
    writer_uvarint(w, FETCH__REPLICA_STATE_BYTES);
    writer_i32(w, req->ReplicaId);
    writer_i64(w, req->ReplicaEpoch);
    kafka_codec__write_tags(w);
}

int kafka_fetch_request_encode(struct writer *w, int16_t version,
                               const struct kafka_FetchRequest *req)
{
    kafka_codec__check_version(version, KAFKA_FETCH_VERSION_MIN,
                               KAFKA_FETCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= FETCH__FLEX_VERSION);
    if (version < FETCH__REPLICA_STATE_VERSION) {
        writer_i32(w, req->ReplicaId);
    }
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
            fetch_topic_key_encode(w, version, f->Name, &f->TopicId);
            kafka_codec__write_i32s(w, f->ForgottenPartitionIndexes,
                                    f->ForgottenPartitionIndexesCnt, false);
            kafka_codec__write_tags(w);
        }
    }
    if (version >= 11) {
        writer_string_slice(w, req->RackId);
    }
    fetch_request_tags_encode(w, version, req);
    return kafka_codec__end(w);
}

/* --- Fetch: response ----------------------------------------------------- */

/* Writes the records length and hands the position after it to the
 * callback; checks that the callback wrote all the bytes or none. The
 * length is an int32 (-1 null), or in a flexible version COMPACT_RECORDS'
 * uvarint RecordsBytes + 1 (0 null): known before the bytes are, so its
 * width is too and nothing is reserved or patched. */
static int
fetch_records_encode(struct writer *w,
                     const struct kafka_FetchablePartitionResponse *p,
                     kafka_fetch_records_cb records_cb, void *cb_arg)
{
    ASSERT(p->RecordsBytes >= -1);
    if (w->compact) {
        writer_uvarint(w, (uint32_t)p->RecordsBytes + 1u); /* -1: 0 */
    } else {
        writer_i32(w, p->RecordsBytes);
    }
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
        kafka_codec__write_tags(w);
    }
    if (version >= 11) {
        writer_i32(w, p->PreferredReadReplica);
    }
    int rc = fetch_records_encode(w, p, records_cb, cb_arg);
    /* After the records: DivergingEpoch, CurrentLeader and SnapshotId are
     * left out (kafka_codec_fetch.h). */
    kafka_codec__write_tags(w);
    return rc;
}

int kafka_fetch_response_encode(struct writer *w, int16_t version,
                                const struct kafka_FetchResponse *resp,
                                kafka_fetch_records_cb records_cb,
                                void *cb_arg)
{
    kafka_codec__check_version(version, KAFKA_FETCH_VERSION_MIN,
                               KAFKA_FETCH_VERSION_MAX);
    kafka_codec__flexible_write(w, version >= FETCH__FLEX_VERSION);
    writer_i32(w, resp->ThrottleTimeMs);
    if (version >= 7) {
        writer_i16(w, resp->ErrorCode);
        writer_i32(w, resp->SessionId);
    }
    kafka_codec__write_count(w, resp->ResponsesCnt, resp->Responses, false);
    for (int32_t i = 0; i < resp->ResponsesCnt; i++) {
        const struct kafka_FetchableTopicResponse *t = &resp->Responses[i];
        fetch_topic_key_encode(w, version, t->Topic, &t->TopicId);
        kafka_codec__write_count(w, t->PartitionsCnt, t->Partitions, false);
        for (int32_t j = 0; j < t->PartitionsCnt; j++) {
            int rc = fetch_partition_encode(w, version, &t->Partitions[j],
                                            records_cb, cb_arg);
            if (rc != RC_OK) {
                w->compact = false; /* as kafka_codec__end() leaves it */
                return rc;
            }
        }
        kafka_codec__write_tags(w);
    }
    /* NodeEndpoints (v16+) is left out (kafka_codec_fetch.h). */
    kafka_codec__write_tags(w);
    return kafka_codec__end(w);
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
        kafka_codec__tags(r);
    }
    p->AbortedTransactions = txns;
    p->PreferredReadReplica = version >= 11 ? reader_i32(r) : -1;
    p->Records = reader_nullable_bytes(r);
    p->RecordsBytes =
        slice_is_null(p->Records) ? -1 : (int32_t)p->Records.len;
    p->records_arg = NULL;
    kafka_codec__tags(r);
}

static void fetch_topic_response_decode(struct reader *r, int16_t version,
                                        struct arena *a,
                                        struct kafka_FetchableTopicResponse *t)
{
    bool ids = version >= FETCH__TOPIC_ID_VERSION;
    t->Topic = ids ? slice_null() : reader_string(r);
    t->TopicId = ids ? kafka_codec__read_uuid(r) : (struct kafka_uuid){{0}};
    /* index, error, hwm, lso, aborted count, records length: 30 bytes. */
    struct kafka_FetchablePartitionResponse *parts = kafka_codec__array(
        r, a, &t->PartitionsCnt, sizeof(*parts), 30,
        (int32_t)KAFKA_REQUEST_PARTITIONS_MAX, false);
    for (int32_t i = 0; i < t->PartitionsCnt && r->rc == RC_OK; i++) {
        fetch_partition_decode(r, version, a, &parts[i]);
    }
    t->Partitions = parts;
    kafka_codec__tags(r);
}

int kafka_fetch_response_decode(struct reader *r, int16_t version,
                                struct arena *a,
                                struct kafka_FetchResponse *out)
{
    if (!fetch_version_ok(version)) {
        return RC_INVALID;
    }
    kafka_codec__flexible(r, version >= FETCH__FLEX_VERSION);
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
    kafka_codec__tags(r);
    return kafka_codec__finish(r);
}
