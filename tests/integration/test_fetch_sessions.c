/* Incremental fetch sessions (KIP-227) against a real broker, byte by
 * byte: a full request (epoch 0) is given a session; an incremental one
 * that names nothing is answered with only the partitions that have news
 * (records, a moved high watermark); a forgotten partition is no longer
 * answered; a repeated epoch is INVALID_FETCH_SESSION_EPOCH, an unknown
 * session FETCH_SESSION_ID_NOT_FOUND; epoch -1 closes the session; a
 * parked incremental fetch is answered when records arrive. Sessions by
 * topic name (v11) and by topic id (v13). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/kafka/record_batch.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(fetch_sessions, .fini = teardown, .timeout = 120);

/* A partition a request names: (partition, fetch offset). */
struct named {
    int32_t partition;
    int64_t offset;
};

/* What the test sends in one request. */
struct ask {
    int16_t version;
    int32_t session_id;
    int32_t epoch;
    const struct named *named;
    int32_t n_named;
    const int32_t *forgotten;
    int32_t n_forgotten;
    int32_t max_wait_ms;
};

static struct kafka_uuid id_fs;

/* The body of a Fetch of topic "fs" as ask says, in w. */
static void fetch_body(const struct ask *q, struct writer *w)
{
    struct kafka_FetchPartition fp[4];
    cr_assert_leq(q->n_named, 4);
    for (int32_t i = 0; i < q->n_named; i++) {
        fp[i] = (struct kafka_FetchPartition){
            .PartitionIndex = q->named[i].partition,
            .CurrentLeaderEpoch = -1,
            .FetchOffset = q->named[i].offset,
            .LastFetchedEpoch = -1,
            .LogStartOffset = -1,
            .PartitionMaxBytes = 1 << 20};
    }
    bool ids = q->version >= 13;
    struct kafka_FetchableTopic ft = {
        .Name = ids ? slice_null() : slice_from_str("fs"),
        .TopicId = ids ? id_fs : (struct kafka_uuid){{0}},
        .Partitions = fp,
        .PartitionsCnt = q->n_named};
    struct kafka_ForgottenTopic gt = {
        .Name = ids ? slice_null() : slice_from_str("fs"),
        .TopicId = ids ? id_fs : (struct kafka_uuid){{0}},
        .ForgottenPartitionIndexes = q->forgotten,
        .ForgottenPartitionIndexesCnt = q->n_forgotten};
    struct kafka_FetchRequest rq = {
        .ReplicaId = -1, .ReplicaEpoch = -1, .MaxWaitMs = q->max_wait_ms,
        .MinBytes = 1, .MaxBytes = 1 << 20, .IsolationLevel = 0,
        .SessionId = q->session_id, .SessionEpoch = q->epoch,
        .Topics = &ft, .TopicsCnt = q->n_named > 0 ? 1 : 0,
        .ForgottenTopicsData = &gt,
        .ForgottenTopicsDataCnt = q->n_forgotten > 0 ? 1 : 0,
        .RackId = slice_from_str("")};
    writer_init(w, 1 << 20);
    cr_assert_eq(kafka_fetch_request_encode(w, q->version, &rq), RC_OK);
}

/* One Fetch of topic "fs" as ask says; the answer decoded into *out
 * (borrowing from *bytes, which the caller frees, and a). */
static void fetch(struct kafka_client *kc, const struct ask *q,
                  struct arena *a, struct kafka_FetchResponse *out,
                  uint8_t **bytes)
{
    struct writer w;
    fetch_body(q, &w);
    size_t len = 0;
    *bytes = kafka_wire_roundtrip(kc, KAFKA_API_FETCH, q->version, &w, &len);
    writer_free(&w);
    cr_assert_not_null(*bytes, "no answer to Fetch: %s", kc->error);
    struct reader r;
    reader_init(&r, *bytes, len);
    cr_assert_eq(kafka_fetch_response_decode(&r, q->version, a, out), RC_OK);
}

/* The answer's partition p of "fs", or NULL when it is not there. */
static const struct kafka_FetchablePartitionResponse *
answered(const struct kafka_FetchResponse *out, int32_t p)
{
    for (int32_t i = 0; i < out->ResponsesCnt; i++) {
        for (int32_t k = 0; k < out->Responses[i].PartitionsCnt; k++) {
            if (out->Responses[i].Partitions[k].PartitionIndex == p) {
                return &out->Responses[i].Partitions[k];
            }
        }
    }
    return NULL;
}

static int32_t n_answered(const struct kafka_FetchResponse *out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < out->ResponsesCnt; i++) {
        n += out->Responses[i].PartitionsCnt;
    }
    return n;
}

/* One broker leading "fs" (two partitions), each holding one batch of
 * three records; kc connected to it. */
static void start(struct kafka_client *kc, struct built_batch *b)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "fs", 2, 1), KAFKA_ERROR_NONE);
    cr_assert(kafka_wire_connect(kc, c.brokers[0].port), "%s", kc->error);
    *b = batch_build(3, 40, 1700000000000, 1);
    for (int32_t p = 0; p < 2; p++) {
        uint64_t deadline = cluster_now_ms() + 15000;
        while (kafka_wire_produce(kc, "fs", p, b->bytes, b->len, -1) !=
               KAFKA_ERROR_NONE) {
            cr_assert_lt(cluster_now_ms(), deadline, "the broker leads fs");
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL); /* until the broker learns the topic */
        }
    }
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    const struct meta_topic *t = meta_image_topic(&img, "fs");
    cr_assert_not_null(t);
    memcpy(id_fs.bytes, t->id.b, sizeof id_fs.bytes);
    meta_image_free(&img);
}

/* A full request of both partitions from 0: a session with both. */
static int32_t open_session(struct kafka_client *kc, int16_t v)
{
    struct named both[] = {{0, 0}, {1, 0}};
    struct ask q = {.version = v, .epoch = 0, .named = both, .n_named = 2,
                    .max_wait_ms = 0};
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *bytes = NULL;
    fetch(kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_neq(out.SessionId, 0, "epoch 0 makes a session");
    cr_assert_eq(n_answered(&out), 2, "a full answer names every one");
    cr_assert_eq(answered(&out, 0)->HighWatermark, 3);
    cr_assert_gt(answered(&out, 1)->Records.len, 0);
    int32_t id = out.SessionId;
    arena_free(&a);
    free(bytes);
    return id;
}

static void news_only(int16_t v)
{
    struct kafka_client kc;
    struct built_batch b;
    start(&kc, &b);
    int32_t s = open_session(&kc, v);
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *bytes = NULL;

    /* Both read to their ends: named at the new offsets, nothing new. */
    struct named ends[] = {{0, 3}, {1, 3}};
    struct ask q = {.version = v, .session_id = s, .epoch = 1,
                    .named = ends, .n_named = 2, .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(out.SessionId, s);
    cr_assert_eq(n_answered(&out), 0, "no news: no partition");
    free(bytes);

    /* Records for partition 1 only: an empty request gets just them. */
    cr_assert_eq(kafka_wire_produce(&kc, "fs", 1, b.bytes, b.len, -1),
                 KAFKA_ERROR_NONE);
    q = (struct ask){.version = v, .session_id = s, .epoch = 2,
                     .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(n_answered(&out), 1, "only the partition with news");
    const struct kafka_FetchablePartitionResponse *p1 = answered(&out, 1);
    cr_assert_not_null(p1);
    cr_assert_eq(p1->HighWatermark, 6);
    cr_assert_eq(p1->Records.len, b.len, "from the offset the session holds");
    struct record_batch_header h;
    cr_assert_eq(record_batch_parse(p1->Records.ptr, b.len, &h), RC_OK);
    cr_assert_eq(h.base_offset, 3);
    free(bytes);

    /* The same epoch again, and a session the broker never made. */
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH);
    cr_assert_eq(n_answered(&out), 0);
    free(bytes);
    q = (struct ask){.version = v, .session_id = s ^ 0x55, .epoch = 1,
                     .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);
    free(bytes);
    arena_free(&a);
    built_batch_free(&b);
    kafka_client_close(&kc);
}

Test(fetch_sessions, an_incremental_fetch_answers_only_news_by_name)
{
    news_only(11);
}

Test(fetch_sessions, an_incremental_fetch_answers_only_news_by_topic_id)
{
    news_only(13);
}

Test(fetch_sessions, forgotten_partitions_go_and_epoch_minus_one_closes)
{
    struct kafka_client kc;
    struct built_batch b;
    start(&kc, &b);
    int32_t s = open_session(&kc, 11);
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *bytes = NULL;

    static const int32_t zero[] = {0};
    struct named one_end[] = {{1, 3}};
    struct ask q = {.version = 11, .session_id = s, .epoch = 1,
                    .named = one_end, .n_named = 1, .forgotten = zero,
                    .n_forgotten = 1, .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    free(bytes);
    cr_assert_eq(kafka_wire_produce(&kc, "fs", 0, b.bytes, b.len, -1),
                 KAFKA_ERROR_NONE);
    q = (struct ask){.version = 11, .session_id = s, .epoch = 2,
                     .max_wait_ms = 200};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_null(answered(&out, 0), "partition 0 was forgotten");
    cr_assert_eq(n_answered(&out), 0);
    free(bytes);

    /* Epoch -1: a sessionless answer, and the session is gone. */
    q = (struct ask){.version = 11, .session_id = s, .epoch = -1,
                     .named = one_end, .n_named = 1, .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(out.SessionId, 0);
    cr_assert_eq(n_answered(&out), 1, "sessionless: what it names");
    free(bytes);
    q = (struct ask){.version = 11, .session_id = s, .epoch = 3,
                     .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    cr_assert_eq(out.ErrorCode, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);
    free(bytes);
    arena_free(&a);
    built_batch_free(&b);
    kafka_client_close(&kc);
}

Test(fetch_sessions, a_parked_incremental_fetch_ends_when_records_arrive)
{
    struct kafka_client kc;
    struct built_batch b;
    start(&kc, &b);
    int32_t s = open_session(&kc, 13);
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *bytes = NULL;
    struct named ends[] = {{0, 3}, {1, 3}};
    struct ask q = {.version = 13, .session_id = s, .epoch = 1,
                    .named = ends, .n_named = 2, .max_wait_ms = 0};
    fetch(&kc, &q, &a, &out, &bytes);
    free(bytes);

    /* The session's fetch, naming nothing, waits up to 60 s ... */
    q = (struct ask){.version = 13, .session_id = s, .epoch = 2,
                     .max_wait_ms = 60000};
    struct writer body, frame;
    fetch_body(&q, &body);
    writer_init(&frame, 1 << 20);
    size_t size_at = kafka_frame_request_begin(&frame, KAFKA_API_FETCH, 13,
                                               77, "test");
    writer_raw(&frame, body.data, body.len);
    cr_assert_eq(kafka_frame_end(&frame, size_at), RC_OK);
    uint64_t t0 = cluster_now_ms();
    cr_assert_eq(kafka_client_send(&kc, frame.data, frame.len), RC_OK);
    writer_free(&frame);
    writer_free(&body);
    /* ... until records for partition 0 arrive on another connection. */
    struct kafka_client producer;
    cr_assert(kafka_wire_connect(&producer, c.brokers[0].port));
    cr_assert_eq(kafka_wire_produce(&producer, "fs", 0, b.bytes, b.len, -1),
                 KAFKA_ERROR_NONE);
    size_t len = 0;
    bytes = kafka_wire_recv_frame(&kc, &len);
    cr_assert_lt(cluster_now_ms() - t0, 30000, "answered by the records");
    struct reader r;
    reader_init(&r, bytes, len);
    int32_t corr = 0;
    cr_assert_eq(kafka_frame_response_read(&r, 77, &corr), RC_OK);
    cr_assert_eq(kafka_frame_response_tags(&r, KAFKA_API_FETCH, 13), RC_OK);
    cr_assert_eq(kafka_fetch_response_decode(&r, 13, &a, &out), RC_OK);
    cr_assert_eq(out.SessionId, s);
    cr_assert_eq(n_answered(&out), 1, "partition 1 has no news");
    cr_assert_eq(answered(&out, 0)->Records.len, b.len);
    free(bytes);
    arena_free(&a);
    built_batch_free(&b);
    kafka_client_close(&producer);
    kafka_client_close(&kc);
}
