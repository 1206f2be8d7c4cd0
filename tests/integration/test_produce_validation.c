/* Kafka's LogValidator on the leader (common/kafka/record_validate.h via
 * partition_append_client()), against a real broker over raw Produce v8
 * requests built with the codec: each batch a hostile producer can send
 * with a correct CRC (a count above or below its records, offset deltas
 * out of order, a null header key, trailing bytes, garbage in each codec,
 * a decompression bomb past RECORD_INFLATED_BYTES_MAX, a timestamp of
 * 2^62) gets Kafka's error with a message (and the record, when one is at
 * fault), nothing of it is stored (ListOffsets latest does not move), the
 * broker keeps serving, and an acks=all produce works after. A bad batch
 * beside a good one in the same request costs only its own partition.
 * Topic-level timestamp bounds and LogAppendTime are followed. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

#define PV_MESSAGE_BYTES 256

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(produce_validation, .fini = teardown, .timeout = 180);

static int64_t wall_now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* One partition's answer, copied out of the response. */
struct pv_answer {
    int16_t error;
    int64_t base_offset;
    int64_t log_append_time_ms;
    int32_t n_record_errors;
    int32_t batch_index;          /* of the first record error */
    char message[PV_MESSAGE_BYTES]; /* ErrorMessage, "" when null */
};

/* Produce v8, acks=all, one request carrying batches[i] for partition i
 * of topic; answers[i] per partition. False when no answer came. */
static bool produce_v8(struct kafka_client *kc, const char *topic,
                       const struct built_batch *batches, int32_t n,
                       struct pv_answer *answers)
{
    struct kafka_PartitionProduceData pd[4];
    cr_assert_leq(n, 4);
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        pd[i] = (struct kafka_PartitionProduceData){
            .PartitionIndex = i,
            .Records = {.ptr = batches[i].bytes, .len = batches[i].len}};
        total += batches[i].len;
    }
    struct kafka_TopicProduceData td = {.Name = slice_from_str(topic),
                                        .Partitions = pd,
                                        .PartitionsCnt = n};
    struct kafka_ProduceRequest rq = {.TransactionalId = slice_null(),
                                      .Acks = -1, .TimeoutMs = 10000,
                                      .Topics = &td, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, total + (1u << 20));
    cr_assert_eq(kafka_produce_request_encode(&w, 8, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_PRODUCE, 8, &w, &len);
    writer_free(&w);
    if (resp == NULL) {
        return false;
    }
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1u << 20);
    struct kafka_ProduceResponse pr;
    cr_assert_eq(kafka_produce_response_decode(&r, 8, &a, &pr), RC_OK);
    cr_assert_eq(pr.ResponsesCnt, 1);
    cr_assert_eq(pr.Responses[0].PartitionsCnt, n);
    for (int32_t i = 0; i < n; i++) {
        const struct kafka_PartitionProduceResponse *p =
            &pr.Responses[0].Partitions[i];
        struct pv_answer *out = &answers[p->PartitionIndex];
        *out = (struct pv_answer){
            .error = p->ErrorCode, .base_offset = p->BaseOffset,
            .log_append_time_ms = p->LogAppendTimeMs,
            .n_record_errors = p->RecordErrorsCnt, .batch_index = -1};
        if (p->RecordErrorsCnt > 0) {
            out->batch_index = p->RecordErrors[0].BatchIndex;
        }
        if (p->ErrorMessage.ptr != NULL) {
            size_t m = p->ErrorMessage.len < PV_MESSAGE_BYTES - 1
                           ? p->ErrorMessage.len
                           : PV_MESSAGE_BYTES - 1;
            memcpy(out->message, p->ErrorMessage.ptr, m);
            out->message[m] = '\0';
        }
    }
    arena_free(&a);
    free(resp);
    return true;
}

static struct pv_answer produce_one(struct kafka_client *kc,
                                    const char *topic,
                                    const struct built_batch *b)
{
    struct pv_answer ans;
    cr_assert(produce_v8(kc, topic, b, 1, &ans), "no answer to Produce");
    return ans;
}

static int64_t latest_offset(struct kafka_client *kc, const char *topic,
                             int32_t partition)
{
    struct kafka_ListOffsetsPartition lp = {.PartitionIndex = partition,
                                            .CurrentLeaderEpoch = -1,
                                            .Timestamp = -1};
    struct kafka_ListOffsetsTopic lt = {.Name = slice_from_str(topic),
                                        .Partitions = &lp,
                                        .PartitionsCnt = 1};
    struct kafka_ListOffsetsRequest rq = {.ReplicaId = -1, .Topics = &lt,
                                          .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 16);
    cr_assert_eq(kafka_list_offsets_request_encode(&w, 2, &rq), RC_OK);
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(kc, KAFKA_API_LIST_OFFSETS, 2, &w,
                                         &len);
    writer_free(&w);
    cr_assert_not_null(resp, "no answer to ListOffsets");
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_ListOffsetsResponse out;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, 2, &a, &out), RC_OK);
    cr_assert_eq(out.Topics[0].Partitions[0].ErrorCode, 0);
    int64_t off = out.Topics[0].Partitions[0].Offset;
    arena_free(&a);
    free(resp);
    return off;
}

/* --- Batches ------------------------------------------------------------ */

static struct batch_spec spec_of(int codec, int32_t count, int64_t ts)
{
    return (struct batch_spec){.codec = codec, .record_count = count,
                               .base_timestamp = ts,
                               .max_timestamp = ts + count - 1,
                               .producer_id = -1};
}

/* n records with keys and a header, timestamps ts, ts + 1, ...; record
 * offset deltas from deltas (NULL: 0..n-1). */
static void write_records(struct writer *w, int32_t n, const int32_t *deltas,
                          bool null_header_key)
{
    static const struct batch_header_kv good[] = {{"h", 1, "v", 1}};
    static const struct batch_header_kv bad[] = {{NULL, -1, "v", 1}};
    for (int32_t i = 0; i < n; i++) {
        char key[16];
        int key_len = snprintf(key, sizeof key, "k%d", i);
        struct batch_record r = {
            .offset_delta = deltas != NULL ? deltas[i] : i,
            .timestamp_delta = i, .key = key, .key_len = key_len,
            .value = "value", .value_len = 5,
            .headers = null_header_key && i == n - 1 ? bad : good,
            .n_headers = 1};
        batch_write_record(w, &r);
    }
}

/* n good records, with count in the header. */
static struct built_batch batch_of(int codec, int32_t n, int32_t count,
                                   int64_t ts)
{
    struct writer w;
    writer_init(&w, 1u << 20);
    write_records(&w, n, NULL, false);
    struct batch_spec spec = spec_of(codec, count, ts);
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    writer_free(&w);
    return b;
}

/* A batch of codec whose compressed records are garbage, correct CRC. */
static struct built_batch garbage_in(int codec)
{
    struct built_batch b = batch_of(codec, 4, 4, wall_now_ms());
    for (size_t i = BATCH_HEADER_BYTES; i < b.len; i++) {
        b.bytes[i] = (uint8_t)(i * 131 + 7);
    }
    batch_fix_crc(&b);
    return b;
}

/* One record of zeros inflating past RECORD_INFLATED_BYTES_MAX, zstd. */
static struct built_batch bomb(void)
{
    size_t n = RECORD_INFLATED_BYTES_MAX + 1024;
    uint8_t *zeros = calloc(1, n);
    cr_assert_not_null(zeros);
    struct writer w;
    writer_init(&w, n + 64);
    struct batch_record r = {.key_len = -1, .value = zeros,
                             .value_len = (int32_t)n};
    batch_write_record(&w, &r);
    free(zeros);
    struct batch_spec spec = spec_of(RECORD_CODEC_ZSTD, 1, wall_now_ms());
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    writer_free(&w);
    cr_assert_lt(b.len, 1048588, "a bomb fits in max.message.bytes");
    return b;
}

/* --- Set-up ------------------------------------------------------------- */

/* Starts a one-broker cluster, creates the topics and connects kc once
 * every partition of the first takes a produce. */
static void ready(struct kafka_client *kc)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic(&c, "checked", 2, 1),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(cluster_create_topic_with(&c, "soon", 1, 1,
                                           "message.timestamp.after.max.ms",
                                           "60000"),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(cluster_create_topic_with(&c, "recent", 1, 1,
                                           "message.timestamp.before.max.ms",
                                           "60000"),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(cluster_create_topic_with(&c, "stamped", 1, 1,
                                           "message.timestamp.type",
                                           "LogAppendTime"),
                 KAFKA_ERROR_NONE);
    static const char *const topics[] = {"checked", "soon", "recent",
                                         "stamped"};
    uint64_t deadline = cluster_now_ms() + 15000;
    for (size_t t = 0; t < ARRAY_LEN(topics); t++) {
        for (;;) {
            struct pv_answer ans = {.error = KAFKA_ERROR_REQUEST_TIMED_OUT};
            if (kc->fd >= 0 || kafka_wire_connect(kc, c.brokers[0].port)) {
                struct built_batch probe = batch_of(0, 1, 1, wall_now_ms());
                if (!produce_v8(kc, topics[t], &probe, 1, &ans)) {
                    kafka_client_close(kc);
                }
                built_batch_free(&probe);
            }
            if (ans.error == KAFKA_ERROR_NONE) {
                break;
            }
            cr_assert_lt(cluster_now_ms(), deadline, "%s never writable",
                         topics[t]);
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL); /* until the broker learns the topic */
        }
    }
}

/* --- Tests -------------------------------------------------------------- */

Test(produce_validation, each_refused_batch_gets_its_error_and_is_not_stored)
{
    struct kafka_client kc = {.fd = -1};
    ready(&kc);
    int64_t now = wall_now_ms();
    int32_t swapped[] = {0, 2, 1};
    struct writer w;
    writer_init(&w, 1u << 20);
    write_records(&w, 3, swapped, false);
    struct batch_spec three = spec_of(RECORD_CODEC_NONE, 3, now);
    struct built_batch out_of_order = batch_wrap(w.data, w.len, &three);
    writer_reset(&w);
    write_records(&w, 2, NULL, true);
    struct batch_spec two = spec_of(RECORD_CODEC_LZ4, 2, now);
    struct built_batch null_key = batch_wrap(w.data, w.len, &two);
    writer_reset(&w);
    write_records(&w, 2, NULL, false);
    writer_i8(&w, 0);
    two.codec = RECORD_CODEC_NONE;
    struct built_batch trailing = batch_wrap(w.data, w.len, &two);
    writer_free(&w);
    const struct {
        const char *name;
        struct built_batch b;
        int16_t error;
        int32_t record; /* the record named in RecordErrors, or -1 */
    } cases[] = {
        {"count 5 holding 1", batch_of(0, 1, 5, now),
         KAFKA_ERROR_INVALID_RECORD, -1},
        {"count 1 holding 3", batch_of(0, 3, 1, now),
         KAFKA_ERROR_INVALID_RECORD, -1},
        {"count 5 holding 1, gzip", batch_of(RECORD_CODEC_GZIP, 1, 5, now),
         KAFKA_ERROR_INVALID_RECORD, -1},
        {"offset deltas 0 2 1", out_of_order, KAFKA_ERROR_INVALID_RECORD, 1},
        {"null header key, lz4", null_key, KAFKA_ERROR_INVALID_RECORD, 1},
        {"a byte after the last record", trailing,
         KAFKA_ERROR_INVALID_RECORD, -1},
        {"garbage gzip", garbage_in(RECORD_CODEC_GZIP),
         KAFKA_ERROR_CORRUPT_MESSAGE, -1},
        {"garbage snappy", garbage_in(RECORD_CODEC_SNAPPY),
         KAFKA_ERROR_CORRUPT_MESSAGE, -1},
        {"garbage lz4", garbage_in(RECORD_CODEC_LZ4),
         KAFKA_ERROR_CORRUPT_MESSAGE, -1},
        {"garbage zstd", garbage_in(RECORD_CODEC_ZSTD),
         KAFKA_ERROR_CORRUPT_MESSAGE, -1},
        {"zstd bomb", bomb(), KAFKA_ERROR_CORRUPT_MESSAGE, -1},
        {"timestamp 2^62", batch_of(0, 2, 2, INT64_C(1) << 62),
         KAFKA_ERROR_INVALID_TIMESTAMP, 0},
    };
    int64_t start = latest_offset(&kc, "checked", 0);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct pv_answer ans = produce_one(&kc, "checked", &cases[i].b);
        cr_expect_eq(ans.error, cases[i].error, "%s: error %d, want %d",
                     cases[i].name, ans.error, cases[i].error);
        cr_expect_eq(ans.base_offset, -1, "%s", cases[i].name);
        cr_expect_neq(ans.message[0], '\0', "%s: an ErrorMessage",
                      cases[i].name);
        if (cases[i].record >= 0) {
            cr_expect_eq(ans.n_record_errors, 1, "%s", cases[i].name);
            cr_expect_eq(ans.batch_index, cases[i].record, "%s",
                         cases[i].name);
        } else {
            cr_expect_eq(ans.n_record_errors, 0, "%s", cases[i].name);
        }
        cr_expect_eq(latest_offset(&kc, "checked", 0), start,
                     "%s: nothing stored", cases[i].name);
    }
    /* The broker still serves: an acks=all produce is stored. */
    struct built_batch good = batch_of(RECORD_CODEC_LZ4, 3, 3, now);
    struct pv_answer ans = produce_one(&kc, "checked", &good);
    cr_expect_eq(ans.error, KAFKA_ERROR_NONE, "%s", ans.message);
    cr_expect_eq(ans.base_offset, start);
    cr_expect_eq(latest_offset(&kc, "checked", 0), start + 3);
    cr_expect(cluster_log_contains(&c.brokers[0], "produce refused"));
    built_batch_free(&good);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct built_batch b = cases[i].b;
        built_batch_free(&b);
    }
    kafka_client_close(&kc);
}

Test(produce_validation, a_bad_batch_costs_only_its_own_partition)
{
    struct kafka_client kc = {.fd = -1};
    ready(&kc);
    int64_t start0 = latest_offset(&kc, "checked", 0);
    int64_t start1 = latest_offset(&kc, "checked", 1);
    struct built_batch batches[2] = {
        batch_of(RECORD_CODEC_ZSTD, 4, 4, wall_now_ms()),
        batch_of(RECORD_CODEC_NONE, 1, 3, wall_now_ms())};
    struct pv_answer ans[2];
    cr_assert(produce_v8(&kc, "checked", batches, 2, ans));
    cr_expect_eq(ans[0].error, KAFKA_ERROR_NONE, "%s", ans[0].message);
    cr_expect_eq(ans[0].base_offset, start0);
    cr_expect_eq(ans[1].error, KAFKA_ERROR_INVALID_RECORD);
    cr_expect_eq(latest_offset(&kc, "checked", 0), start0 + 4);
    cr_expect_eq(latest_offset(&kc, "checked", 1), start1);
    built_batch_free(&batches[0]);
    built_batch_free(&batches[1]);
    kafka_client_close(&kc);
}

Test(produce_validation, topic_timestamp_settings_are_followed)
{
    struct kafka_client kc = {.fd = -1};
    ready(&kc);
    int64_t now = wall_now_ms();
    /* Two minutes ahead: inside the broker's default hour, outside the
     * minute "soon" sets. */
    struct built_batch ahead = batch_of(0, 1, 1, now + 120000);
    cr_expect_eq(produce_one(&kc, "soon", &ahead).error,
                 KAFKA_ERROR_INVALID_TIMESTAMP);
    cr_expect_eq(produce_one(&kc, "checked", &ahead).error,
                 KAFKA_ERROR_NONE);
    /* Ten minutes old: fine by default (unbounded), not in "recent". */
    struct built_batch old = batch_of(0, 1, 1, now - 600000);
    cr_expect_eq(produce_one(&kc, "recent", &old).error,
                 KAFKA_ERROR_INVALID_TIMESTAMP);
    cr_expect_eq(produce_one(&kc, "checked", &old).error, KAFKA_ERROR_NONE);
    /* LogAppendTime: any producer timestamp, the broker's time back. */
    struct built_batch far = batch_of(0, 2, 2, INT64_C(1) << 62);
    struct pv_answer ans = produce_one(&kc, "stamped", &far);
    cr_expect_eq(ans.error, KAFKA_ERROR_NONE, "%s", ans.message);
    cr_expect_geq(ans.log_append_time_ms, now - 1000);
    cr_expect_leq(ans.log_append_time_ms, wall_now_ms() + 1000);
    built_batch_free(&ahead);
    built_batch_free(&old);
    built_batch_free(&far);
    kafka_client_close(&kc);
}
