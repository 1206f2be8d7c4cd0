/* Fetch against a real broker: a response's MaxBytes lets only the first
 * partition with data exceed it (by one whole batch, KIP-74); partitions
 * after the budget is spent return no records; a partition answered with
 * an error carries an empty record set, never a null one (librdkafka
 * refuses a negative MessageSetSize and drops the whole response). The
 * flexible versions on the wire: batches produced with Produce v9 and v11
 * come back from Fetch v13 and v16 by topic id, their bytes spliced after
 * COMPACT_RECORDS lengths; an unknown topic id is UNKNOWN_TOPIC_ID; a long
 * poll by topic id is answered when a produce moves the high watermark. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

TestSuite(kafka_fetch, .fini = teardown, .timeout = 120);

/* Produces one batch to partition p of "fb"; the Kafka error. */
static int16_t produce_one(struct kafka_client *kc, int32_t p,
                           struct built_batch *b)
{
    return kafka_wire_produce(kc, "fb", p, b->bytes, b->len, -1);
}

/* Fetch v11 of fp[0..n) of "fb" within max_bytes; the response decoded
 * into out (borrowing from the returned buffer, which the caller frees). */
static uint8_t *fetch(struct kafka_client *kc, struct kafka_FetchPartition *fp,
                      int32_t n, int32_t max_bytes, struct arena *a,
                      struct kafka_FetchResponse *out)
{
    struct kafka_FetchableTopic ft = {.Name = slice_from_str("fb"),
                                      .Partitions = fp, .PartitionsCnt = n};
    struct kafka_FetchRequest rq = {.ReplicaId = -1, .MaxWaitMs = 100,
                                    .MinBytes = 1, .MaxBytes = max_bytes,
                                    .IsolationLevel = 1, .SessionId = 0,
                                    .SessionEpoch = -1, .Topics = &ft,
                                    .TopicsCnt = 1,
                                    .RackId = slice_from_str("")};
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(kafka_fetch_request_encode(&w, 11, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_FETCH, 11, &w, &len);
    writer_free(&w);
    cr_assert_not_null(resp, "no answer to Fetch");
    struct reader r;
    reader_init(&r, resp, len);
    cr_assert_eq(kafka_fetch_response_decode(&r, 11, a, out), RC_OK);
    cr_assert_eq(out->ResponsesCnt, 1);
    cr_assert_eq(out->Responses[0].PartitionsCnt, n);
    return resp;
}

Test(kafka_fetch, max_bytes_lets_only_the_first_partition_exceed_it)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "fb", 2, 1), KAFKA_ERROR_NONE);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);
    struct built_batch b = batch_build(4, 200, 1000, 3);
    uint64_t deadline = cluster_now_ms() + 15000;
    for (int32_t p = 0; p < 2; p++) {
        while (produce_one(&kc, p, &b) != KAFKA_ERROR_NONE) {
            cr_assert_lt(cluster_now_ms(), deadline, "partition %d", p);
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL); /* until the broker learns the topic */
        }
    }
    struct kafka_FetchPartition fp[2] = {
        {.PartitionIndex = 0, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20},
        {.PartitionIndex = 1, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20}};
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *resp = fetch(&kc, fp, 2, 10, &a, &out);
    const struct kafka_FetchablePartitionResponse *ps =
        out.Responses[0].Partitions;
    cr_assert_eq(ps[0].ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(ps[0].Records.len, b.len,
                 "the first partition's first batch comes whole");
    cr_assert_eq(ps[1].ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(ps[1].HighWatermark, 4);
    cr_assert_eq(ps[1].Records.len, 0,
                 "the budget is spent: no records for the next partition");
    arena_free(&a);
    free(resp);
    built_batch_free(&b);
    kafka_client_close(&kc);
}

Test(kafka_fetch, an_error_partition_carries_empty_records_not_null)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "fb", 1, 1), KAFKA_ERROR_NONE);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port), "%s", kc.error);
    struct kafka_FetchPartition fp[1] = {
        {.PartitionIndex = 7, .CurrentLeaderEpoch = -1, .FetchOffset = 0,
         .LogStartOffset = -1, .PartitionMaxBytes = 1 << 20}};
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    uint8_t *resp = fetch(&kc, fp, 1, 1 << 20, &a, &out);
    const struct kafka_FetchablePartitionResponse *p =
        &out.Responses[0].Partitions[0];
    cr_assert_eq(p->ErrorCode, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(p->RecordsBytes, 0, "an empty record set, as Kafka sends");
    cr_assert_not(slice_is_null(p->Records));
    arena_free(&a);
    free(resp);
    kafka_client_close(&kc);
}

/* --- Flexible versions: Produce v9+, Fetch v13+ by topic id -------------- */

/* Produce at version v (9..11) of one batch to partition 0 of topic; the
 * partition's error, its base offset in *base. */
static int16_t produce_flex(struct kafka_client *kc, int16_t v,
                            const char *topic, const struct built_batch *b,
                            int64_t *base)
{
    struct kafka_PartitionProduceData pd = {
        .PartitionIndex = 0, .Records = {b->bytes, b->len}};
    struct kafka_TopicProduceData td = {.Name = slice_from_str(topic),
                                        .Partitions = &pd,
                                        .PartitionsCnt = 1};
    struct kafka_ProduceRequest rq = {.TransactionalId = slice_null(),
                                      .Acks = -1, .TimeoutMs = 10000,
                                      .Topics = &td, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(kafka_produce_request_encode(&w, v, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_PRODUCE, v, &w, &len);
    writer_free(&w);
    cr_assert_not_null(resp, "no answer to Produce v%d: %s", v, kc->error);
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_ProduceResponse pr;
    cr_assert_eq(kafka_produce_response_decode(&r, v, &a, &pr), RC_OK);
    cr_assert_eq(pr.ResponsesCnt, 1);
    cr_assert(slice_eq_str(pr.Responses[0].Name, topic));
    cr_assert_eq(pr.Responses[0].PartitionsCnt, 1);
    int16_t err = pr.Responses[0].Partitions[0].ErrorCode;
    *base = pr.Responses[0].Partitions[0].BaseOffset;
    arena_free(&a);
    free(resp);
    return err;
}

/* A Fetch v(13..16) body of partition 0 of topic id from offset. */
static void fetch_by_id_body(struct writer *w, int16_t v,
                             const struct kafka_uuid *id, int64_t offset,
                             int32_t max_wait_ms)
{
    struct kafka_FetchPartition fp = {
        .PartitionIndex = 0, .CurrentLeaderEpoch = -1, .FetchOffset = offset,
        .LastFetchedEpoch = -1, .LogStartOffset = -1,
        .PartitionMaxBytes = 1 << 20};
    struct kafka_FetchableTopic ft = {.Name = slice_null(), .TopicId = *id,
                                      .Partitions = &fp, .PartitionsCnt = 1};
    struct kafka_FetchRequest rq = {
        .ReplicaId = -1, .ReplicaEpoch = -1, .MaxWaitMs = max_wait_ms,
        .MinBytes = 1, .MaxBytes = 1 << 20, .IsolationLevel = 1,
        .SessionId = 0, .SessionEpoch = 0, .Topics = &ft, .TopicsCnt = 1,
        .RackId = slice_from_str("")};
    writer_init(w, 1 << 20);
    cr_assert_eq(kafka_fetch_request_encode(w, v, &rq), RC_OK);
}

/* Decodes a Fetch v answer of one topic and one partition into *out;
 * checks the topic id and that the full request (epoch 0) was given a
 * fetch session (KIP-227). */
static const struct kafka_FetchablePartitionResponse *
fetch_answer(const uint8_t *resp, size_t len, int16_t v,
             const struct kafka_uuid *id, struct arena *a,
             struct kafka_FetchResponse *out)
{
    struct reader r;
    reader_init(&r, resp, len);
    cr_assert_eq(kafka_fetch_response_decode(&r, v, a, out), RC_OK);
    cr_assert_eq(out->ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_neq(out->SessionId, 0, "epoch 0 asks for a session: made");
    cr_assert_eq(out->ResponsesCnt, 1);
    cr_assert_eq(memcmp(out->Responses[0].TopicId.bytes, id->bytes, 16), 0,
                 "the answer names the topic by the id asked");
    cr_assert_eq(out->Responses[0].PartitionsCnt, 1);
    return &out->Responses[0].Partitions[0];
}

static uint8_t *fetch_by_id(struct kafka_client *kc, int16_t v,
                            const struct kafka_uuid *id, int64_t offset,
                            struct arena *a, struct kafka_FetchResponse *out,
                            const struct kafka_FetchablePartitionResponse **p)
{
    struct writer w;
    fetch_by_id_body(&w, v, id, offset, 100);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_FETCH, v, &w, &len);
    writer_free(&w);
    cr_assert_not_null(resp, "no answer to Fetch v%d: %s", v, kc->error);
    *p = fetch_answer(resp, len, v, id, a, out);
    return resp;
}

/* Topic name's id from the active controller's image. */
static struct kafka_uuid topic_id(const char *name)
{
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    const struct meta_topic *t = meta_image_topic(&img, name);
    cr_assert_not_null(t, "%s in the image", name);
    struct kafka_uuid id;
    memcpy(id.bytes, t->id.b, sizeof id.bytes);
    meta_image_free(&img);
    return id;
}

/* Starts a cluster of one broker with topic name (one partition) that the
 * broker leads; kc connected to it. */
static void start_with_topic(const char *name, struct kafka_client *kc)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, name, 1, 1), KAFKA_ERROR_NONE);
    cr_assert(kafka_wire_connect(kc, c.brokers[0].port), "%s", kc->error);
}

Test(kafka_fetch, produce_v9_and_v11_then_fetch_v13_and_v16_by_topic_id)
{
    struct kafka_client kc;
    start_with_topic("fid", &kc);
    struct kafka_uuid id = topic_id("fid");
    /* Records long enough that their COMPACT_RECORDS length is a uvarint
     * of two bytes and more. */
    struct built_batch b1 = batch_build(3, 50, 1700000000000, 1);
    struct built_batch b2 = batch_build(2, 300, 1700000000100, 2);
    int64_t base1 = -1, base2 = -1;
    uint64_t deadline = cluster_now_ms() + 15000;
    while (produce_flex(&kc, 9, "fid", &b1, &base1) != KAFKA_ERROR_NONE) {
        cr_assert_lt(cluster_now_ms(), deadline, "the broker leads fid");
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* until the broker learns the topic */
    }
    cr_assert_eq(produce_flex(&kc, 11, "fid", &b2, &base2),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(base1, 0);
    cr_assert_eq(base2, 3);

    static const int16_t versions[] = {13, 16};
    for (size_t i = 0; i < ARRAY_LEN(versions); i++) {
        int16_t v = versions[i];
        struct arena a;
        arena_init(&a, 1 << 22);
        struct kafka_FetchResponse out;
        const struct kafka_FetchablePartitionResponse *p;
        uint8_t *resp = fetch_by_id(&kc, v, &id, 0, &a, &out, &p);
        cr_assert_eq(p->ErrorCode, KAFKA_ERROR_NONE, "v%d", v);
        cr_assert_eq(p->HighWatermark, 5);
        cr_assert_eq(p->LogStartOffset, 0);
        cr_assert_eq(p->Records.len, b1.len + b2.len, "v%d: both batches", v);
        struct record_batch_header h;
        cr_assert_eq(record_batch_parse(p->Records.ptr, b1.len, &h), RC_OK);
        cr_assert_eq(h.base_offset, 0);
        cr_assert(batch_same_payload(p->Records.ptr, &b1), "v%d", v);
        const uint8_t *second = p->Records.ptr + b1.len;
        cr_assert_eq(record_batch_parse(second, b2.len, &h), RC_OK);
        cr_assert_eq(h.base_offset, 3);
        cr_assert(batch_same_payload(second, &b2), "v%d", v);
        free(resp);

        /* From the second batch's offset, only it. */
        resp = fetch_by_id(&kc, v, &id, 3, &a, &out, &p);
        cr_assert_eq(p->ErrorCode, KAFKA_ERROR_NONE);
        cr_assert_eq(p->Records.len, b2.len);
        cr_assert(batch_same_payload(p->Records.ptr, &b2));
        free(resp);
        arena_free(&a);
    }
    built_batch_free(&b1);
    built_batch_free(&b2);
    kafka_client_close(&kc);
}

Test(kafka_fetch, an_unknown_topic_id_is_unknown_topic_id)
{
    struct kafka_client kc;
    start_with_topic("fid", &kc);
    struct kafka_uuid id = topic_id("fid");
    id.bytes[15] ^= 0xff; /* some other id */
    for (int16_t v = 13; v <= 16; v += 3) {
        struct arena a;
        arena_init(&a, 1 << 22);
        struct kafka_FetchResponse out;
        const struct kafka_FetchablePartitionResponse *p;
        uint8_t *resp = fetch_by_id(&kc, v, &id, 0, &a, &out, &p);
        cr_assert_eq(p->ErrorCode, KAFKA_ERROR_UNKNOWN_TOPIC_ID, "v%d", v);
        cr_assert_eq(p->HighWatermark, -1);
        cr_assert_eq(p->RecordsBytes, 0, "an empty record set");
        free(resp);
        arena_free(&a);
    }
    kafka_client_close(&kc);
}

Test(kafka_fetch, a_long_poll_by_topic_id_ends_when_records_arrive)
{
    struct kafka_client kc;
    start_with_topic("fid", &kc);
    struct kafka_uuid id = topic_id("fid");
    struct built_batch b = batch_build(2, 40, 1700000000000, 3);
    int64_t base = -1;
    uint64_t deadline = cluster_now_ms() + 15000;
    while (produce_flex(&kc, 9, "fid", &b, &base) != KAFKA_ERROR_NONE) {
        cr_assert_lt(cluster_now_ms(), deadline, "the broker leads fid");
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* until the broker learns the topic */
    }
    /* A Fetch v16 at the log end with a long MaxWaitMs is parked ... */
    struct kafka_client poller;
    cr_assert(kafka_wire_connect(&poller, c.brokers[0].port), "%s",
              poller.error);
    struct writer body, frame;
    fetch_by_id_body(&body, 16, &id, 2, 60000);
    writer_init(&frame, 1 << 20);
    size_t size_at = kafka_frame_request_begin(&frame, KAFKA_API_FETCH, 16,
                                               77, "test");
    writer_raw(&frame, body.data, body.len);
    cr_assert_eq(kafka_frame_end(&frame, size_at), RC_OK);
    uint64_t sent_ms = cluster_now_ms();
    cr_assert_eq(kafka_client_send(&poller, frame.data, frame.len), RC_OK);
    writer_free(&frame);
    writer_free(&body);
    /* ... until a produce to it moves the high watermark. */
    cr_assert_eq(produce_flex(&kc, 11, "fid", &b, &base), KAFKA_ERROR_NONE);
    cr_assert_eq(base, 2);
    size_t len = 0;
    uint8_t *resp = kafka_wire_recv_frame(&poller, &len);
    cr_assert_lt(cluster_now_ms() - sent_ms, 30000,
                 "answered by the produce, not by MaxWaitMs");
    struct reader r;
    reader_init(&r, resp, len);
    int32_t corr = 0;
    cr_assert_eq(kafka_frame_response_read(&r, 77, &corr), RC_OK);
    cr_assert_eq(kafka_frame_response_tags(&r, KAFKA_API_FETCH, 16), RC_OK);
    struct arena a;
    arena_init(&a, 1 << 22);
    struct kafka_FetchResponse out;
    const struct kafka_FetchablePartitionResponse *p = fetch_answer(
        resp + r.pos, len - r.pos, 16, &id, &a, &out);
    cr_assert_eq(p->ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(p->HighWatermark, 4);
    cr_assert_eq(p->Records.len, b.len);
    cr_assert(batch_same_payload(p->Records.ptr, &b));
    arena_free(&a);
    free(resp);
    built_batch_free(&b);
    kafka_client_close(&poller);
    kafka_client_close(&kc);
}
