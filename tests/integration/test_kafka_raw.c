/* The broker's Kafka listener over raw sockets, with real processes (three
 * controllers and one broker, tests/lib/cluster.h): ApiVersions answers
 * at v0..2 and at an unsupported v3 (shared/reference/kafka-protocol.md
 * section 3), and what bad bytes do: a truncated frame, a size prefix
 * over REQUEST_BYTES_MAX, an unknown ApiKey, unsupported versions and
 * random bytes each cost only their own connection. After each, a new
 * connection still gets a valid Metadata answer and the broker process is
 * alive; the last test checks that none of it reached the log.
 *
 * Requests are built with the codec's request encoders
 * (common/kafka/kafka_codec.h) and framed here (request header v1); answers are
 * read with its response decoders. Every socket read and write is bounded
 * by a timeout, every wait by a deadline. */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"

#define RAW_IO_TIMEOUT_S 10        /* any one send or recv */
#define RAW_CLOSE_WAIT_MS 10000    /* for the broker to close a connection */
#define RAW_METADATA_WAIT_MS 15000 /* for the broker to see the metadata */
#define RAW_POLL_MS 10             /* between metadata polls */
#define RAW_RESPONSE_BYTES_MAX (16u * 1024 * 1024)
#define RAW_CLIENT_ID "kafka-raw"

static struct cluster c;
static int32_t next_correlation_id = 1;


/* --- Sockets ------------------------------------------------------------ */

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_port = htons((uint16_t)c.brokers[0].port),
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0,
                 "connect to the broker: errno %d", errno);
    struct timeval tv = {RAW_IO_TIMEOUT_S, 0};
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    return fd;
}

static void raw_send(int fd, const void *bytes, size_t n)
{
    const uint8_t *p = bytes;
    while (n > 0) {
        ssize_t sent = send(fd, p, n, MSG_NOSIGNAL);
        cr_assert_gt(sent, 0, "send: errno %d", errno);
        p += sent;
        n -= (size_t)sent;
    }
}

/* True if exactly n bytes arrived before EOF, an error or the timeout. */
static bool raw_recv(int fd, void *bytes, size_t n)
{
    return n == 0 || recv(fd, bytes, n, MSG_WAITALL) == (ssize_t)n;
}

/* The broker closes fd without answering anything: EOF (or a reset, if
 * it closed with our bytes unread) and no byte before it. */
static void expect_closed_without_answer(int fd, const char *what)
{
    uint8_t buf[4096];
    size_t answered = 0;
    uint64_t deadline = cluster_now_ms() + RAW_CLOSE_WAIT_MS;
    ssize_t got;
    int err = 0;
    do {
        got = recv(fd, buf, sizeof buf, 0);
        err = got < 0 ? errno : 0;
        if (got > 0) {
            answered += (size_t)got;
        }
    } while (got > 0 && cluster_now_ms() < deadline);
    close(fd);
    cr_assert(got == 0 || err == ECONNRESET,
              "%s: connection still open (recv %zd, errno %d)", what, got,
              err);
    cr_assert_eq(answered, 0, "%s: %zu bytes answered before the close",
                 what, answered);
}

/* --- Requests and responses -------------------------------------------- */

/* Appends a size-prefixed request: header v1 (api_key, api_version,
 * correlation_id, client_id), then body. Returns the correlation id. */
static int32_t frame_request(struct writer *frame, int16_t api_key,
                             int16_t version, const struct writer *body)
{
    int32_t correlation_id = next_correlation_id++;
    size_t size_at = kafka_frame_request_begin(frame, api_key, version,
                                               correlation_id, RAW_CLIENT_ID);
    writer_raw(frame, body->data, body->len);
    cr_assert_eq(kafka_frame_end(frame, size_at), RC_OK);
    return correlation_id;
}

static int32_t send_request(int fd, int16_t api_key, int16_t version,
                            const struct writer *body)
{
    struct writer frame;
    writer_init(&frame, RAW_RESPONSE_BYTES_MAX);
    int32_t correlation_id = frame_request(&frame, api_key, version, body);
    raw_send(fd, frame.data, frame.len);
    writer_free(&frame);
    return correlation_id;
}

/* Reads one response frame; checks its correlation id (response header
 * v0) and returns the body (malloc'd) and its length. */
static uint8_t *read_response(int fd, int32_t correlation_id, size_t *len)
{
    uint8_t head[KAFKA_FRAME_SIZE_BYTES + KAFKA_FRAME_RESPONSE_HEADER_BYTES];
    cr_assert(raw_recv(fd, head, sizeof head), "no response (errno %d)",
              errno);
    struct reader r;
    reader_init(&r, head, sizeof head);
    size_t size = 0;
    cr_assert_eq(kafka_frame_size_read(&r, KAFKA_FRAME_RESPONSE_HEADER_BYTES,
                                       RAW_RESPONSE_BYTES_MAX, &size),
                 RC_OK, "response size %zu", size);
    int32_t got_id = 0;
    cr_assert_eq(kafka_frame_response_read(&r, correlation_id, &got_id),
                 RC_OK, "correlation id %d, expected %d", got_id,
                 correlation_id);
    *len = size - KAFKA_FRAME_RESPONSE_HEADER_BYTES;
    uint8_t *body = malloc(*len > 0 ? *len : 1);
    cr_assert_not_null(body);
    cr_assert(raw_recv(fd, body, *len), "short response (errno %d)", errno);
    return body;
}

/* One request (body freed) on a new connection and its answer's body,
 * malloc'd, *len bytes (after response header v1's tagged fields for a
 * flexible version). */
static uint8_t *roundtrip(int16_t api_key, int16_t version,
                          struct writer *body, size_t *len)
{
    int fd = raw_connect();
    int32_t id = send_request(fd, api_key, version, body);
    writer_free(body);
    uint8_t *bytes = read_response(fd, id, len);
    close(fd);
    struct reader r;
    reader_init(&r, bytes, *len);
    cr_assert_eq(kafka_frame_response_tags(&r, api_key, version), RC_OK,
                 "response header of api key %d v%d", api_key, version);
    memmove(bytes, bytes + r.pos, *len - r.pos);
    *len -= r.pos;
    return bytes;
}

/* One request's answer, ready to decode: its bytes, a reader over them
 * and an arena for what is decoded. answer_free() releases it. */
struct answer {
    uint8_t *bytes;
    struct reader r;
    struct arena a;
};

/* Sends body (freed) as api_key/version on a new connection; the answer
 * in *ans. */
static void call(struct answer *ans, int16_t api_key, int16_t version,
                 struct writer *body)
{
    size_t len = 0;
    ans->bytes = roundtrip(api_key, version, body, &len);
    reader_init(&ans->r, ans->bytes, len);
    arena_init(&ans->a, ARENA_BYTES_MAX);
}

static void answer_free(struct answer *ans)
{
    arena_free(&ans->a);
    free(ans->bytes);
}

/* --- Metadata: is the broker still serving? ----------------------------- */

/* What one Metadata answer said. */
struct raw_metadata {
    bool lists_broker; /* our broker, at its port */
    bool topic_led;    /* the topic's partition 0 is led by our broker */
};

/* Metadata v4 (librdkafka's) on a new connection, for topic (or all
 * topics if NULL); the answer must decode. */
static struct raw_metadata metadata(const char *topic)
{
    struct kafka_MetadataRequestTopic t = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest req = {
        .Topics = topic != NULL ? &t : NULL,
        .TopicsCnt = topic != NULL ? 1 : -1,
        .AllowAutoTopicCreation = false,
    };
    struct writer body;
    writer_init(&body, RAW_RESPONSE_BYTES_MAX);
    cr_assert_eq(kafka_metadata_request_encode(&body, 4, &req), RC_OK);
    size_t len = 0;
    uint8_t *bytes = roundtrip(KAFKA_API_METADATA, 4, &body, &len);

    struct reader r;
    reader_init(&r, bytes, len);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_MetadataResponse resp;
    cr_assert_eq(kafka_metadata_response_decode(&r, 4, &a, &resp), RC_OK,
                 "Metadata answer does not decode");
    struct raw_metadata out = {false, false};
    for (int32_t i = 0; i < resp.BrokersCnt; i++) {
        if (resp.Brokers[i].NodeId == c.brokers[0].id &&
            resp.Brokers[i].Port == c.brokers[0].port) {
            out.lists_broker = true;
        }
    }
    if (topic != NULL) {
        cr_assert_eq(resp.TopicsCnt, 1);
        const struct kafka_MetadataResponseTopic *mt = &resp.Topics[0];
        out.topic_led = mt->ErrorCode == KAFKA_ERROR_NONE &&
                        mt->PartitionsCnt >= 1 &&
                        mt->Partitions[0].ErrorCode == KAFKA_ERROR_NONE &&
                        mt->Partitions[0].LeaderId == c.brokers[0].id;
    }
    arena_free(&a);
    free(bytes);
    return out;
}

/* Polls Metadata until the broker lists itself and, if topic is not NULL,
 * leads the topic's partition 0; false at the deadline. The broker learns
 * the cluster from the controller a little after the controller knows it,
 * so a test waits for this before judging answers. */
static bool metadata_until(const char *topic, uint64_t budget_ms)
{
    uint64_t deadline = cluster_now_ms() + budget_ms;
    for (;;) {
        struct raw_metadata m = metadata(topic);
        if (m.lists_broker && (topic == NULL || m.topic_led)) {
            return true;
        }
        if (cluster_now_ms() > deadline) {
            return false;
        }
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* metadata poll interval, bounded above */
    }
}

static void implemented_from_codec(void);

static void setup(void)
{
    implemented_from_codec();
    memset(&c, 0, sizeof c);
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert(metadata_until(NULL, RAW_METADATA_WAIT_MS),
              "broker %d never lists itself in Metadata; log %s",
              c.brokers[0].id, c.brokers[0].log);
}

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_raw, .init = setup, .fini = teardown, .timeout = 120);

/* The broker process has not exited, and a new connection is served. */
static void assert_broker_serves(const char *after)
{
    int status = 0;
    pid_t pid = c.brokers[0].pid;
    cr_assert_gt(pid, 0);
    cr_assert_eq(waitpid(pid, &status, WNOHANG), 0,
                 "broker exited after %s (status %d); log %s", after, status,
                 c.brokers[0].log);
    cr_assert(metadata(NULL).lists_broker,
              "Metadata after %s does not list broker %d at port %d", after,
              c.brokers[0].id, c.brokers[0].port);
}

/* --- ApiVersions -------------------------------------------------------- */

/* What the broker implements, hence advertises: each key the codec knows
 * (kafka_codec_version_range()), once, with the codec's range. Filled by
 * setup() from the codec's own table, so the expectations are not a
 * second copy of it. */
#define RAW_API_KEY_END 100 /* above every ApiKey Kafka has defined */
static struct kafka_ApiVersion implemented[RAW_API_KEY_END];
static size_t n_implemented;

static void implemented_from_codec(void)
{
    n_implemented = 0;
    for (int16_t key = 0; key < RAW_API_KEY_END; key++) {
        struct kafka_ApiVersion *api = &implemented[n_implemented];
        if (kafka_codec_version_range(key, &api->MinVersion,
                                      &api->MaxVersion)) {
            api->ApiKey = key;
            n_implemented++;
        }
    }
    cr_assert_gt(n_implemented, 0);
}

static void expect_implemented(const struct kafka_ApiVersionsResponse *resp,
                               int16_t version)
{
    size_t n = n_implemented;
    cr_assert_eq(resp->ErrorCode, KAFKA_ERROR_NONE, "v%d", version);
    cr_assert_eq(resp->ApiKeysCnt, (int32_t)n, "v%d lists %d keys, not %zu",
                 version, resp->ApiKeysCnt, n);
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (int32_t k = 0; k < resp->ApiKeysCnt; k++) {
            const struct kafka_ApiVersion *got = &resp->ApiKeys[k];
            if (got->ApiKey != implemented[i].ApiKey) {
                continue;
            }
            found++;
            cr_assert_eq(got->MinVersion, implemented[i].MinVersion,
                         "v%d key %d", version, got->ApiKey);
            cr_assert_eq(got->MaxVersion, implemented[i].MaxVersion,
                         "v%d key %d", version, got->ApiKey);
        }
        cr_assert_eq(found, 1, "v%d: key %d listed %d times", version,
                     implemented[i].ApiKey, found);
    }
    if (version >= 1) {
        cr_assert_eq(resp->ThrottleTimeMs, 0);
    }
}

/* The ApiVersions answer at v, decoded into resp (arena a); its length
 * in *len. */
static void api_versions_at(int fd, int16_t v, struct arena *a,
                            struct kafka_ApiVersionsResponse *resp,
                            size_t *len)
{
    struct writer body;
    writer_init(&body, 64);
    struct kafka_ApiVersionsRequest req = {slice_from_str("cairn-test"),
                                           slice_from_str("1.0")};
    cr_assert_eq(kafka_api_versions_request_encode(&body, v, &req), RC_OK);
    int32_t id = send_request(fd, KAFKA_API_API_VERSIONS, v, &body);
    writer_free(&body);
    uint8_t *bytes = read_response(fd, id, len);
    struct reader r;
    reader_init(&r, bytes, *len);
    arena_init(a, ARENA_BYTES_MAX);
    cr_assert_eq(kafka_api_versions_response_decode(&r, v, a, resp), RC_OK,
                 "v%d answer does not decode", v);
    /* ApiVersions answers hold no slices: the bytes can go. */
    free(bytes);
}

Test(kafka_raw, api_versions_v0_to_v3_list_exactly_the_implemented_keys)
{
    int fd = raw_connect();
    for (int16_t v = 0; v <= 3; v++) {
        struct arena a;
        struct kafka_ApiVersionsResponse resp;
        size_t len = 0;
        api_versions_at(fd, v, &a, &resp, &len);
        /* v0 has no throttle field: 2 + 4 + 6 per key; v1+ adds 4; v3 is
         * flexible: a one-byte count, 7 per key (tags), 4, tags. */
        size_t n = n_implemented;
        size_t want = v <= 2 ? 6 + 6 * n + (v >= 1 ? 4 : 0)
                             : 2 + 1 + 7 * n + 4 + 1;
        cr_assert_eq(len, want, "v%d length %zu", v, len);
        expect_implemented(&resp, v);
        arena_free(&a);
    }
    close(fd);
    assert_broker_serves("ApiVersions v0..3");
}

/* librdkafka's first request on every connection: ApiVersions v3,
 * flexible (request header v2 with a tagged field, compact strings). */
static void write_api_versions_v3(struct writer *frame, int32_t id,
                                  int16_t version, const char *name)
{
    size_t size_at = writer_reserve(frame, 4);
    writer_i16(frame, KAFKA_API_API_VERSIONS);
    writer_i16(frame, version);
    writer_i32(frame, id);
    writer_nullable_string(frame, "rdkafka", 7);
    writer_uvarint(frame, 1); /* header tags: one, skipped */
    writer_uvarint(frame, 7);
    writer_uvarint(frame, 1);
    writer_i8(frame, 0);
    writer_compact_string(frame, name, strlen(name));
    writer_compact_string(frame, "2.0.2", 5);
    writer_empty_tagged_fields(frame);
    cr_assert_eq(frame->rc, RC_OK);
    writer_patch_i32(frame, size_at, (int32_t)(frame->len - size_at - 4));
}

static uint8_t *send_v3_frame(int fd, int16_t version, const char *name,
                              int32_t *id, size_t *len)
{
    struct writer frame;
    writer_init(&frame, 256);
    *id = next_correlation_id++;
    write_api_versions_v3(&frame, *id, version, name);
    raw_send(fd, frame.data, frame.len);
    writer_free(&frame);
    return read_response(fd, *id, len);
}

static void decode_v3(const uint8_t *bytes, size_t len, struct arena *a,
                      struct kafka_ApiVersionsResponse *resp)
{
    struct reader r;
    reader_init(&r, bytes, len);
    arena_init(a, ARENA_BYTES_MAX);
    cr_assert_eq(kafka_api_versions_response_decode(&r, 3, a, resp), RC_OK);
}

Test(kafka_raw, librdkafkas_api_versions_v3_is_answered_in_v3)
{
    int fd = raw_connect();
    int32_t id = 0;
    size_t len = 0;
    uint8_t *bytes = send_v3_frame(fd, 3, "librdkafka", &id, &len);
    struct arena a;
    struct kafka_ApiVersionsResponse resp;
    decode_v3(bytes, len, &a, &resp);
    expect_implemented(&resp, 3);
    arena_free(&a);
    free(bytes);
    close(fd);
    assert_broker_serves("ApiVersions v3");
}

Test(kafka_raw, api_versions_v3_with_a_bad_software_name_is_invalid_request)
{
    int fd = raw_connect();
    int32_t id = 0;
    size_t len = 0;
    /* Kafka's rule: letters, digits, and '-' or '.' inside. */
    uint8_t *bytes = send_v3_frame(fd, 3, "-rdkafka", &id, &len);
    struct arena a;
    struct kafka_ApiVersionsResponse resp;
    decode_v3(bytes, len, &a, &resp);
    cr_assert_eq(resp.ErrorCode, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(resp.ApiKeysCnt, 0);
    arena_free(&a);
    free(bytes);
    close(fd);
    assert_broker_serves("an invalid ApiVersions v3");
}

Test(kafka_raw, api_versions_v4_gets_unsupported_version_in_the_v0_layout)
{
    int fd = raw_connect();
    int32_t id = 0;
    size_t len = 0;
    /* Exactly: ErrorCode 35, [1] (18, 0, 3), and no throttle time; twice,
     * logged once for the connection. */
    static const uint8_t want[] = {0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3};
    for (int i = 0; i < 2; i++) {
        uint8_t *bytes = send_v3_frame(fd, 4, "librdkafka", &id, &len);
        cr_assert_eq(len, sizeof want, "answer has %zu bytes", len);
        cr_assert_arr_eq(bytes, want, sizeof want);
        free(bytes);
    }
    struct sockaddr_in self;
    socklen_t self_len = sizeof self;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&self, &self_len), 0);
    char peer[64];
    snprintf(peer, sizeof peer, "peer=127.0.0.1:%u ", ntohs(self.sin_port));
    const char *line = "ApiVersions v4 unsupported";
    uint64_t deadline = cluster_now_ms() + RAW_CLOSE_WAIT_MS;
    while (cluster_log_count(&c.brokers[0], peer, line) == 0 &&
           cluster_now_ms() < deadline) {
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* log poll interval, bounded above */
    }
    cr_assert_eq(cluster_log_count(&c.brokers[0], peer, line), 1,
                 "one log line for %s", peer);
    /* The connection stays open: the client retries a version we list. */
    struct arena a;
    struct kafka_ApiVersionsResponse resp;
    api_versions_at(fd, 0, &a, &resp, &len);
    expect_implemented(&resp, 0);
    arena_free(&a);
    close(fd);
    assert_broker_serves("ApiVersions v4");
}

/* --- Bad bytes ----------------------------------------------------------- */

/* A frame whose size prefix says 100 but only 10 bytes follow. */
static void send_truncated_frame(int fd)
{
    static const uint8_t partial[4 + 10] = {0, 0, 0, 100, 0, 3, 0, 4,
                                            0, 0, 0, 9,   0, 0};
    raw_send(fd, partial, sizeof partial);
}

Test(kafka_raw, truncated_frame_leaves_the_broker_serving)
{
    int fd = raw_connect();
    send_truncated_frame(fd);
    /* The half-read frame holds only its own connection up. */
    assert_broker_serves("a truncated frame, connection open");
    close(fd);
    assert_broker_serves("a truncated frame, connection closed");
}

/* Sends a 4-byte size prefix and expects the connection closed. */
static void expect_size_closes(int32_t size)
{
    uint8_t prefix[4] = {(uint8_t)((uint32_t)size >> 24),
                         (uint8_t)((uint32_t)size >> 16),
                         (uint8_t)((uint32_t)size >> 8), (uint8_t)size};
    int fd = raw_connect();
    raw_send(fd, prefix, sizeof prefix);
    char what[64];
    snprintf(what, sizeof what, "size prefix %d", size);
    expect_closed_without_answer(fd, what);
    assert_broker_serves(what);
}

Test(kafka_raw, size_prefix_over_the_request_bound_closes_the_connection)
{
    expect_size_closes((int32_t)REQUEST_BYTES_MAX + 1);
    expect_size_closes(INT32_MAX);
    expect_size_closes(-1);
    expect_size_closes(INT32_MIN);
    expect_size_closes(0);
}

/* A well-framed request (header v1, body) the broker must refuse by
 * closing the connection without an answer. */
static void expect_request_closes(int16_t api_key, int16_t version,
                                  const struct writer *body)
{
    int fd = raw_connect();
    (void)send_request(fd, api_key, version, body);
    char what[64];
    snprintf(what, sizeof what, "ApiKey %d v%d", api_key, version);
    expect_closed_without_answer(fd, what);
    assert_broker_serves(what);
}

Test(kafka_raw, unknown_api_key_closes_the_connection)
{
    struct writer body;
    writer_init(&body, 64);
    writer_i32(&body, 0);
    expect_request_closes(9999, 0, &body);
    expect_request_closes(-1, 0, &body);
    expect_request_closes(INT16_MAX, 0, &body);
    writer_free(&body);
}

/* A Produce v3 body carrying a real batch for topic partition 0. */
static void produce_body(struct writer *body, struct slice topic,
                         const struct built_batch *b, int16_t version)
{
    struct kafka_PartitionProduceData pd = {
        .PartitionIndex = 0,
        .Records = {b->bytes, b->len},
    };
    struct kafka_TopicProduceData td = {
        .Name = topic, .Partitions = &pd, .PartitionsCnt = 1};
    struct kafka_ProduceRequest req = {
        .TransactionalId = slice_null(),
        .Acks = -1,
        .TimeoutMs = 10000,
        .Topics = &td,
        .TopicsCnt = 1,
    };
    cr_assert_eq(kafka_produce_request_encode(body, version, &req), RC_OK);
}

/* A Fetch v11 body for topic partition 0 from offset. */
static void fetch_body(struct writer *body, const char *topic,
                       int64_t offset)
{
    struct kafka_FetchPartition fp = {
        .PartitionIndex = 0,
        .CurrentLeaderEpoch = -1,
        .FetchOffset = offset,
        .LogStartOffset = -1,
        .PartitionMaxBytes = 1024 * 1024,
    };
    struct kafka_FetchableTopic ft = {
        .Name = slice_from_str(topic), .Partitions = &fp, .PartitionsCnt = 1};
    struct kafka_FetchRequest req = {
        .ReplicaId = -1,
        .MaxWaitMs = 100,
        .MinBytes = 1,
        .MaxBytes = 1024 * 1024,
        .IsolationLevel = 1,
        .SessionId = 0,
        .SessionEpoch = -1,
        .Topics = &ft,
        .TopicsCnt = 1,
        .RackId = slice_from_str(""),
    };
    cr_assert_eq(kafka_fetch_request_encode(body, 11, &req), RC_OK);
}

/* Produce v2 and Fetch v12 are outside the advertised ranges (magic-2
 * batches start at Produce v3; Fetch v12 is flexible). The bodies are
 * valid at v3 and v11: the version alone must close the connection. */
static void expect_unsupported_versions_close(const char *topic)
{
    struct built_batch b = batch_build(3, 16, 1700000000000, 99);
    struct writer body;
    writer_init(&body, RAW_RESPONSE_BYTES_MAX);
    produce_body(&body, slice_from_str(topic), &b, 3);
    expect_request_closes(KAFKA_API_PRODUCE, KAFKA_PRODUCE_VERSION_MIN - 1,
                          &body);
    writer_reset(&body);
    fetch_body(&body, topic, 0);
    expect_request_closes(KAFKA_API_FETCH, KAFKA_FETCH_VERSION_MAX + 1,
                          &body);
    writer_free(&body);
    built_batch_free(&b);
}

Test(kafka_raw, unsupported_versions_close_the_connection)
{
    expect_unsupported_versions_close("nowhere");
}

/* xorshift32: random bytes the same on every run. */
static uint32_t raw_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/* A frame of random bytes after the size prefix. Keeps its ApiKey off
 * ApiVersions, which answers whatever version it is sent. */
static size_t random_frame(uint8_t *frame, size_t body_max, uint32_t *seed)
{
    size_t len = 10 + raw_random(seed) % (body_max - 10);
    for (size_t i = 0; i < len; i++) {
        frame[4 + i] = (uint8_t)raw_random(seed);
    }
    if (frame[4] == 0 && frame[5] == KAFKA_API_API_VERSIONS) {
        frame[4] = 0x40;
    }
    return len;
}

/* Whether the codec takes body as a request of api at version: a body
 * an API reads nothing of (ListGroups v0..v2) takes any bytes, which the
 * broker then answers, as Kafka does. */
static bool decodes(int16_t api_key, int16_t version,
                    const struct writer *body)
{
    const struct kafka_api *api = kafka_api_find(api_key);
    cr_assert_not_null(api);
    uint8_t msg[4096];
    cr_assert_leq(api->request_bytes, sizeof msg);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body->data, body->len);
    bool ok = api->decode(&r, version, &a, msg) == RC_OK;
    arena_free(&a);
    return ok;
}

/* A valid header for an implemented API other than ApiVersions (whose
 * body is not read), at a version it supports, then a random body the
 * API's decoder refuses (drawn again while it is taken): the bytes reach
 * that decoder and close the connection. */
static size_t random_body_frame(uint8_t *frame, size_t body_max,
                                uint32_t *seed)
{
    size_t n_apis = n_implemented;
    const struct kafka_ApiVersion *api;
    int16_t version;
    struct writer body;
    writer_init(&body, body_max);
    for (int tries = 0;; tries++) {
        cr_assert_lt(tries, 1000, "no refused random body in 1000 draws");
        do {
            api = &implemented[raw_random(seed) % n_apis];
        } while (api->ApiKey == KAFKA_API_API_VERSIONS);
        uint32_t span = (uint32_t)(api->MaxVersion - api->MinVersion + 1);
        version =
            (int16_t)(api->MinVersion + (int16_t)(raw_random(seed) % span));
        writer_reset(&body);
        size_t len = 1 + raw_random(seed) % (body_max / 2);
        for (size_t i = 0; i < len; i++) {
            writer_i8(&body, (int8_t)raw_random(seed));
        }
        if (!decodes(api->ApiKey, version, &body)) {
            break;
        }
    }
    struct writer w;
    writer_init(&w, 4 + body_max);
    (void)frame_request(&w, api->ApiKey, version, &body);
    cr_assert_leq(w.len, 4 + body_max);
    memcpy(frame, w.data, w.len);
    size_t len = w.len - 4;
    writer_free(&w);
    writer_free(&body);
    return len;
}

/* Random bytes, three ways: a blob whose size prefix is negative, frames
 * of a valid size holding random headers and bodies, and valid headers
 * with random bodies. Each must close its connection unanswered. */
static void expect_random_bytes_close(void)
{
    uint32_t seed = 0x5eed1234u;
    uint8_t junk[2048];
    for (size_t i = 0; i < sizeof junk; i++) {
        junk[i] = (uint8_t)raw_random(&seed);
    }
    junk[0] |= 0x80;
    int fd = raw_connect();
    raw_send(fd, junk, sizeof junk);
    expect_closed_without_answer(fd, "random bytes");
    assert_broker_serves("random bytes");

    for (int round = 0; round < 16; round++) {
        uint8_t frame[4 + 1024];
        size_t len = round % 2 == 0
                         ? random_frame(frame, sizeof frame - 4, &seed)
                         : random_body_frame(frame, sizeof frame - 4, &seed);
        frame[0] = 0;
        frame[1] = 0;
        frame[2] = (uint8_t)(len >> 8);
        frame[3] = (uint8_t)len;
        char what[96];
        snprintf(what, sizeof what, "random frame %d (ApiKey %d v%d)", round,
                 (int16_t)((frame[4] << 8) | frame[5]),
                 (int16_t)((frame[6] << 8) | frame[7]));
        fd = raw_connect();
        raw_send(fd, frame, 4 + len);
        expect_closed_without_answer(fd, what);
        assert_broker_serves(what);
    }
}

Test(kafka_raw, random_bytes_close_the_connection)
{
    expect_random_bytes_close();
}

/* --- The log is not touched by any of it -------------------------------- */

/* Produce v7 acks=-1 of b to topic partition 0 on a new connection;
 * returns the base offset. */
/* Produce v7 of b to partition 0 of the topic named by the bytes of
 * topic (which may hold a NUL): the partition's error, *base its offset. */
static int16_t produce_named(struct slice topic, const struct built_batch *b,
                             int64_t *base);

static int64_t produce(const char *topic, const struct built_batch *b)
{
    int64_t base = -1;
    int16_t err = produce_named(slice_from_str(topic), b, &base);
    cr_assert_eq(err, KAFKA_ERROR_NONE, "produce error %d", err);
    return base;
}

static int16_t produce_named(struct slice topic, const struct built_batch *b,
                             int64_t *base)
{
    struct writer body;
    writer_init(&body, RAW_RESPONSE_BYTES_MAX);
    produce_body(&body, topic, b, 7);
    struct answer ans;
    call(&ans, KAFKA_API_PRODUCE, 7, &body);
    struct kafka_ProduceResponse resp;
    cr_assert_eq(
        kafka_produce_response_decode(&ans.r, 7, &ans.a, &resp), RC_OK);
    cr_assert_eq(resp.ResponsesCnt, 1);
    cr_assert_eq(resp.Responses[0].PartitionsCnt, 1);
    const struct kafka_PartitionProduceResponse *p =
        &resp.Responses[0].Partitions[0];
    int16_t err = p->ErrorCode;
    *base = p->BaseOffset;
    answer_free(&ans);
    return err;
}

/* ListOffsets v2 (librdkafka's) for topic partition 0 at timestamp (-1
 * latest, -2 earliest). */
static int64_t list_offset(const char *topic, int64_t timestamp)
{
    struct kafka_ListOffsetsPartition lp = {
        .PartitionIndex = 0, .CurrentLeaderEpoch = -1, .Timestamp = timestamp};
    struct kafka_ListOffsetsTopic lt = {
        .Name = slice_from_str(topic), .Partitions = &lp, .PartitionsCnt = 1};
    struct kafka_ListOffsetsRequest req = {
        .ReplicaId = -1, .IsolationLevel = 1, .Topics = &lt, .TopicsCnt = 1};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_list_offsets_request_encode(&body, 2, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_LIST_OFFSETS, 2, &body);
    struct kafka_ListOffsetsResponse resp;
    cr_assert_eq(
        kafka_list_offsets_response_decode(&ans.r, 2, &ans.a, &resp), RC_OK);
    cr_assert_eq(resp.TopicsCnt, 1);
    cr_assert_eq(resp.Topics[0].PartitionsCnt, 1);
    cr_assert_eq(resp.Topics[0].Partitions[0].ErrorCode, KAFKA_ERROR_NONE);
    int64_t offset = resp.Topics[0].Partitions[0].Offset;
    answer_free(&ans);
    return offset;
}

/* Fetch v11 from offset 0: the first stored batch equals b (but for
 * baseOffset and leader epoch); returns the high watermark. */
static int64_t fetch_first_batch_is(const char *topic,
                                    const struct built_batch *b)
{
    struct writer body;
    writer_init(&body, 4096);
    fetch_body(&body, topic, 0);
    struct answer ans;
    call(&ans, KAFKA_API_FETCH, 11, &body);
    struct kafka_FetchResponse resp;
    cr_assert_eq(
        kafka_fetch_response_decode(&ans.r, 11, &ans.a, &resp), RC_OK);
    cr_assert_eq(resp.ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_eq(resp.ResponsesCnt, 1);
    const struct kafka_FetchablePartitionResponse *p =
        &resp.Responses[0].Partitions[0];
    cr_assert_eq(p->ErrorCode, KAFKA_ERROR_NONE);
    cr_assert_geq(p->Records.len, b->len);
    cr_assert(batch_same_payload(p->Records.ptr, b),
              "the first stored batch is not the one produced");
    int64_t hwm = p->HighWatermark;
    answer_free(&ans);
    return hwm;
}

Test(kafka_raw, bad_bytes_leave_the_log_untouched_and_produce_working)
{
    const char *topic = "raw";
    cr_assert_eq(cluster_create_topic(&c, topic, 1, 1), KAFKA_ERROR_NONE);
    cr_assert(metadata_until(topic, RAW_METADATA_WAIT_MS),
              "topic %s has no leader on broker %d", topic, c.brokers[0].id);

    struct built_batch first = batch_build(5, 32, 1700000000000, 1);
    cr_assert_eq(produce(topic, &first), 0);
    cr_assert_eq(list_offset(topic, -1), 5);

    /* Everything above, the Produce v2 carrying a batch for this topic. */
    int fd = raw_connect();
    send_truncated_frame(fd);
    close(fd);
    expect_size_closes((int32_t)REQUEST_BYTES_MAX + 1);
    struct writer body;
    writer_init(&body, 64);
    writer_i32(&body, 0);
    expect_request_closes(9999, 0, &body);
    writer_free(&body);
    expect_unsupported_versions_close(topic);
    expect_random_bytes_close();

    cr_assert_eq(list_offset(topic, -1), 5, "the log moved");
    cr_assert_eq(list_offset(topic, -2), 0);
    struct built_batch second = batch_build(3, 32, 1700000001000, 2);
    cr_assert_eq(produce(topic, &second), 5);
    cr_assert_eq(list_offset(topic, -1), 8);
    cr_assert_eq(fetch_first_batch_is(topic, &first), 8);
    built_batch_free(&first);
    built_batch_free(&second);
    assert_broker_serves("all of it");
}

/* --- Names are never cut at a NUL ------------------------------------------ */

/* One CreateTopics v4 of names (1 partition, rf 1): errors, in order. */
static void create_topics_named(const struct slice *names, int n,
                                int16_t *errors)
{
    struct kafka_CreatableTopic t[16];
    cr_assert_leq(n, 16);
    for (int i = 0; i < n; i++) {
        t[i] = (struct kafka_CreatableTopic){
            .Name = names[i], .NumPartitions = 1, .ReplicationFactor = 1};
    }
    struct kafka_CreateTopicsRequest req = {.Topics = t, .TopicsCnt = n,
                                            .TimeoutMs = 10000};
    struct writer body;
    writer_init(&body, 1 << 16);
    cr_assert_eq(kafka_create_topics_request_encode(&body, 4, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_CREATE_TOPICS, 4, &body);
    struct kafka_CreateTopicsResponse resp;
    cr_assert_eq(kafka_create_topics_response_decode(&ans.r, 4, &ans.a, &resp),
                 RC_OK);
    cr_assert_eq(resp.TopicsCnt, n);
    for (int i = 0; i < n; i++) {
        errors[i] = resp.Topics[i].ErrorCode;
    }
    answer_free(&ans);
}

static int16_t create_topic_named(struct slice name)
{
    int16_t err = -1;
    create_topics_named(&name, 1, &err);
    return err;
}

/* Metadata v4 for the topic named by the bytes of name, auto-creation
 * allowed: that topic's error. */
static int16_t metadata_named(struct slice name)
{
    struct kafka_MetadataRequestTopic t = {.Name = name};
    struct kafka_MetadataRequest req = {
        .Topics = &t, .TopicsCnt = 1, .AllowAutoTopicCreation = true};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_metadata_request_encode(&body, 4, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_METADATA, 4, &body);
    struct kafka_MetadataResponse resp;
    cr_assert_eq(
        kafka_metadata_response_decode(&ans.r, 4, &ans.a, &resp), RC_OK);
    cr_assert_eq(resp.TopicsCnt, 1);
    int16_t err = resp.Topics[0].ErrorCode;
    answer_free(&ans);
    return err;
}

static bool topic_exists(const char *name)
{
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    bool found = meta_image_topic(&img, name) != NULL;
    meta_image_free(&img);
    return found;
}

/* Produce to "nul\0evil" used to write to "nul"; CreateTopics of
 * "made\0tail" used to create "made"; auto-creation of an illegal name
 * answered LEADER_NOT_AVAILABLE forever. */
Test(kafka_raw, topic_names_with_a_nul_are_never_cut_short)
{
    cr_assert_eq(cluster_create_topic(&c, "nul", 1, 1), KAFKA_ERROR_NONE);
    cr_assert(metadata_until("nul", RAW_METADATA_WAIT_MS));
    struct built_batch b = batch_build(3, 10, 1000, 7);
    int64_t base = -1;
    static const char evil[] = "nul\0evil";
    cr_assert_eq(produce_named((struct slice){(const uint8_t *)evil,
                                              sizeof evil - 1},
                               &b, &base),
                 KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_eq(list_offset("nul", -1), 0, "written under \"nul\"");
    built_batch_free(&b);

    static const char made[] = "made\0tail";
    cr_assert_eq(create_topic_named((struct slice){(const uint8_t *)made,
                                                   sizeof made - 1}),
                 KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
    cr_assert_not(topic_exists("made"));

    static const char bad[] = "bad\0name";
    cr_assert_eq(metadata_named((struct slice){(const uint8_t *)bad,
                                               sizeof bad - 1}),
                 KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
    cr_assert_eq(metadata_named(slice_from_str("bad name")),
                 KAFKA_ERROR_INVALID_TOPIC_EXCEPTION);
    cr_assert_not(topic_exists("bad"));
    assert_broker_serves("names with a NUL");
}

/* Illegal names in one CreateTopics are each INVALID_TOPIC_EXCEPTION (17),
 * a legal one beside them is created (before: all refused names went to
 * the controller as "", duplicates of each other: INVALID_REQUEST). */
Test(kafka_raw, illegal_topic_names_are_each_invalid_topic)
{
    char long_name[251] = {0};
    memset(long_name, 'x', 250);
    struct slice names[] = {
        slice_from_str("legal-one"), slice_from_str(""), slice_from_str("."),
        slice_from_str(".."), slice_from_str("a/b"), slice_from_str(long_name),
        slice_from_str("a b"), slice_from_str("\xc3\xa9"),
        (struct slice){(const uint8_t *)"a\0b", 3}};
    int16_t errors[16];
    create_topics_named(names, 9, errors);
    cr_assert_eq(errors[0], KAFKA_ERROR_NONE, "legal: %d", errors[0]);
    for (int i = 1; i < 9; i++) {
        cr_assert_eq(errors[i], KAFKA_ERROR_INVALID_TOPIC_EXCEPTION,
                     "name %d: error %d", i, errors[i]);
    }
    assert_broker_serves("illegal names");
}

/* --- Auto-creation --------------------------------------------------------- */

#define RAW_AUTO_TOPICS 100 /* more than one request may create */

/* Metadata v4 naming auto-0..auto-(n-1), auto-creation allowed: how many
 * topics answered LEADER_NOT_AVAILABLE (being created). */
static int metadata_auto(int n)
{
    static char names[RAW_AUTO_TOPICS][16];
    struct kafka_MetadataRequestTopic ts[RAW_AUTO_TOPICS];
    cr_assert_leq(n, RAW_AUTO_TOPICS);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "auto-%d", i);
        ts[i] = (struct kafka_MetadataRequestTopic){
            .Name = slice_from_str(names[i])};
    }
    struct kafka_MetadataRequest req = {
        .Topics = ts, .TopicsCnt = n, .AllowAutoTopicCreation = true};
    struct writer body;
    writer_init(&body, 64 * 1024);
    cr_assert_eq(kafka_metadata_request_encode(&body, 4, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_METADATA, 4, &body);
    struct kafka_MetadataResponse resp;
    cr_assert_eq(
        kafka_metadata_response_decode(&ans.r, 4, &ans.a, &resp), RC_OK);
    int pending = 0;
    for (int32_t i = 0; i < resp.TopicsCnt; i++) {
        pending += resp.Topics[i].ErrorCode ==
                   KAFKA_ERROR_LEADER_NOT_AVAILABLE;
    }
    answer_free(&ans);
    return pending;
}

static int auto_topics_existing(void)
{
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    int n = 0;
    for (size_t i = 0; i < img.n_topics; i++) {
        n += strncmp(img.topics[i].name, "auto-", 5) == 0;
    }
    meta_image_free(&img);
    return n;
}

static int count_in_log(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        n += strstr(line, text) != NULL;
    }
    fclose(f);
    return n;
}

/* One Metadata request naming many new topics creates at most
 * KAFKA_AUTO_CREATE_PER_REQUEST_MAX of them, in one call to the
 * controller (it used to send one call per name); the client's next
 * requests create the rest. */
Test(kafka_raw, auto_creation_is_one_bounded_call_per_request)
{
    int before = count_in_log(c.brokers[0].log, "auto-created on first use");
    cr_assert_eq(metadata_auto(RAW_AUTO_TOPICS), RAW_AUTO_TOPICS);
    uint64_t deadline = cluster_now_ms() + RAW_METADATA_WAIT_MS;
    while (auto_topics_existing() < (int)KAFKA_AUTO_CREATE_PER_REQUEST_MAX &&
           cluster_now_ms() < deadline) {
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* metadata poll interval */
    }
    cr_assert_eq(auto_topics_existing(), (int)KAFKA_AUTO_CREATE_PER_REQUEST_MAX,
                 "one request created more than its bound, or too few");
    cr_assert_eq(count_in_log(c.brokers[0].log, "auto-created on first use"),
                 before + 1, "one call to the controller");
    /* The client asks again, as clients do: the rest follow. */
    deadline = cluster_now_ms() + RAW_METADATA_WAIT_MS;
    while (auto_topics_existing() < RAW_AUTO_TOPICS &&
           cluster_now_ms() < deadline) {
        (void)metadata_auto(RAW_AUTO_TOPICS);
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* metadata poll interval */
    }
    cr_assert_eq(auto_topics_existing(), RAW_AUTO_TOPICS);
    assert_broker_serves("auto-creating many topics");
}

/* --- Old offset APIs: OffsetCommit v0 and v1, OffsetFetch v0 -------------- */

#define RAW_COORDINATOR_WAIT_MS 30000 /* the offsets topic made and loaded */

/* OffsetCommit at version v of offset at for (topic, 0) in group: the
 * partition's error. v0 carries no generation (a commit outside any). */
static int16_t commit_at(int16_t v, const char *group, const char *topic,
                         int64_t at)
{
    struct kafka_OffsetCommitRequestPartition p = {
        .PartitionIndex = 0, .CommittedOffset = at,
        .CommittedLeaderEpoch = -1, .CommitTimestamp = -1,
        .CommittedMetadata = slice_from_str("m")};
    struct kafka_OffsetCommitRequestTopic t = {slice_from_str(topic), &p, 1};
    struct kafka_OffsetCommitRequest req = {
        .GroupId = slice_from_str(group), .GenerationIdOrMemberEpoch = -1,
        .MemberId = slice_from_str(""), .GroupInstanceId = slice_null(),
        .RetentionTimeMs = -1, .Topics = &t, .TopicsCnt = 1};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_offset_commit_request_encode(&body, v, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_OFFSET_COMMIT, v, &body);
    struct kafka_OffsetCommitResponse resp;
    cr_assert_eq(kafka_offset_commit_response_decode(&ans.r, v, &ans.a, &resp),
                 RC_OK);
    cr_assert_eq(resp.TopicsCnt, 1);
    cr_assert_eq(resp.Topics[0].PartitionsCnt, 1);
    int16_t err = resp.Topics[0].Partitions[0].ErrorCode;
    answer_free(&ans);
    return err;
}

/* OffsetFetch v0 of (topic, 0) in group: the committed offset. */
static int64_t fetch_committed_v0(const char *group, const char *topic)
{
    static const int32_t zero[] = {0};
    struct kafka_OffsetFetchRequestTopic t = {slice_from_str(topic), zero,
                                              1};
    struct kafka_OffsetFetchRequest req = {.GroupId = slice_from_str(group),
                                           .Topics = &t, .TopicsCnt = 1};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_offset_fetch_request_encode(&body, 0, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_OFFSET_FETCH, 0, &body);
    struct kafka_OffsetFetchResponse resp;
    cr_assert_eq(kafka_offset_fetch_response_decode(&ans.r, 0, &ans.a, &resp),
                 RC_OK);
    cr_assert_eq(resp.TopicsCnt, 1);
    cr_assert_eq(resp.Topics[0].Partitions[0].ErrorCode, KAFKA_ERROR_NONE);
    int64_t at = resp.Topics[0].Partitions[0].CommittedOffset;
    answer_free(&ans);
    return at;
}

/* The first commit waits for the offsets topic (made on first use) and
 * its load: retriable errors until then, within a deadline. */
static void commit_when_ready(int16_t v, const char *group,
                              const char *topic, int64_t at)
{
    uint64_t deadline = cluster_now_ms() + RAW_COORDINATOR_WAIT_MS;
    int16_t err;
    while ((err = commit_at(v, group, topic, at)) != KAFKA_ERROR_NONE) {
        cr_assert(err == KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE ||
                      err == KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS ||
                      err == KAFKA_ERROR_NOT_COORDINATOR,
                  "OffsetCommit v%d: error %d", v, err);
        cr_assert(cluster_now_ms() < deadline, "no coordinator in time");
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* retry interval, bounded above */
    }
}

/* kafka-python's and Sarama's old commits: v0 (no generation) and v1
 * (generation -1), read back with OffsetFetch v0, against one broker,
 * which coordinates every group. */
Test(kafka_raw, old_offset_commits_read_back_with_offset_fetch_v0)
{
    const char *topic = "old-commits";
    cr_assert_eq(cluster_create_topic(&c, topic, 1, 1), KAFKA_ERROR_NONE);
    cr_assert(metadata_until(topic, RAW_METADATA_WAIT_MS));
    /* FindCoordinator v0 makes the offsets topic. */
    struct kafka_FindCoordinatorRequest fc = {.Key = slice_from_str("g0")};
    struct writer body;
    writer_init(&body, 256);
    cr_assert_eq(kafka_find_coordinator_request_encode(&body, 0, &fc),
                 RC_OK);
    size_t len = 0;
    free(roundtrip(KAFKA_API_FIND_COORDINATOR, 0, &body, &len));
    commit_when_ready(0, "g0", topic, 17);
    cr_assert_eq(fetch_committed_v0("g0", topic), 17);
    commit_when_ready(1, "g1", topic, 23);
    cr_assert_eq(fetch_committed_v0("g1", topic), 23);
    cr_assert_eq(commit_at(0, "g0", topic, 18), KAFKA_ERROR_NONE);
    cr_assert_eq(fetch_committed_v0("g0", topic), 18, "the latest wins");
    assert_broker_serves("old offset commits");
}

/* --- Group APIs at their newest versions: FindCoordinator v4, OffsetFetch
 * v8 and v9 (batches), ListGroups v5 (filters), SyncGroup v5 --------------- */

/* FindCoordinator v4 (KIP-699) for two group keys on one connection: the
 * answers, in request order. Every key is answered by this one broker,
 * which leads every __consumer_offsets partition; until the offsets topic
 * exists a key gets COORDINATOR_NOT_AVAILABLE. Returns how many keys got
 * NONE. */
static int find_coordinators_v4(const char *k0, const char *k1)
{
    struct slice keys[2] = {slice_from_str(k0), slice_from_str(k1)};
    struct kafka_FindCoordinatorRequest req = {
        .KeyType = 0, .CoordinatorKeys = keys, .CoordinatorKeysCnt = 2};
    struct writer body;
    writer_init(&body, 256);
    cr_assert_eq(kafka_find_coordinator_request_encode(&body, 4, &req),
                 RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_FIND_COORDINATOR, 4, &body);
    struct kafka_FindCoordinatorResponse resp;
    cr_assert_eq(
        kafka_find_coordinator_response_decode(&ans.r, 4, &ans.a, &resp),
        RC_OK);
    cr_assert_eq(resp.CoordinatorsCnt, 2);
    int found = 0;
    for (int32_t i = 0; i < 2; i++) {
        const struct kafka_Coordinator *co = &resp.Coordinators[i];
        cr_assert(slice_eq(co->Key, keys[i]), "answer %d is not for %s", i,
                  i == 0 ? k0 : k1);
        if (co->ErrorCode != KAFKA_ERROR_NONE) {
            cr_assert_eq(co->ErrorCode, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
            cr_assert_eq(co->NodeId, -1);
            continue;
        }
        cr_assert_eq(co->NodeId, c.brokers[0].id);
        cr_assert(slice_eq(co->Host, slice_from_str("127.0.0.1")),
                  "host %.*s", (int)co->Host.len, (const char *)co->Host.ptr);
        cr_assert_eq(co->Port, c.brokers[0].port);
        cr_assert(slice_is_null(co->ErrorMessage));
        found++;
    }
    answer_free(&ans);
    return found;
}

/* The committed offset of partition 0 of topic in one group of an
 * OffsetFetch v8+ answer, which must name it and carry no error. */
static int64_t committed_in(const struct kafka_OffsetFetchResponseGroup *g,
                            const char *group, const char *topic)
{
    cr_assert(slice_eq(g->GroupId, slice_from_str(group)), "not %s", group);
    cr_assert_eq(g->ErrorCode, KAFKA_ERROR_NONE, "%s", group);
    cr_assert_eq(g->TopicsCnt, 1, "%s", group);
    cr_assert(slice_eq(g->Topics[0].Name, slice_from_str(topic)));
    cr_assert_eq(g->Topics[0].PartitionsCnt, 1, "%s", group);
    const struct kafka_OffsetFetchResponsePartition *p =
        &g->Topics[0].Partitions[0];
    cr_assert_eq(p->PartitionIndex, 0);
    cr_assert_eq(p->ErrorCode, KAFKA_ERROR_NONE);
    cr_assert(slice_eq(p->Metadata, slice_from_str("m")));
    return p->CommittedOffset;
}

/* Two groups in one OffsetFetch at v (8 or 9): the first names (topic, 0),
 * the second asks for all its topics (null Topics). */
static void fetch_two_groups(int16_t v, const char *topic)
{
    static const int32_t zero[] = {0};
    struct kafka_OffsetFetchRequestTopic t = {slice_from_str(topic), zero,
                                              1};
    /* v9's MemberId and MemberEpoch are the new protocol's: a classic
     * group ignores them. */
    struct kafka_OffsetFetchRequestGroup gs[2] = {
        {slice_from_str("batch-a"), slice_null(), -1, &t, 1},
        {slice_from_str("batch-b"), slice_null(), -1, NULL, -1}};
    struct kafka_OffsetFetchRequest req = {
        .GroupId = slice_from_str(""), .Groups = gs, .GroupsCnt = 2,
        .RequireStable = true};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_offset_fetch_request_encode(&body, v, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_OFFSET_FETCH, v, &body);
    struct kafka_OffsetFetchResponse resp;
    cr_assert_eq(kafka_offset_fetch_response_decode(&ans.r, v, &ans.a, &resp),
                 RC_OK);
    cr_assert_eq(resp.GroupsCnt, 2, "v%d", v);
    cr_assert_eq(committed_in(&resp.Groups[0], "batch-a", topic), 31);
    cr_assert_eq(committed_in(&resp.Groups[1], "batch-b", topic), 47);
    answer_free(&ans);
}

/* ListGroups v5 with the given filters (NULL: none): how many groups of
 * the two batch-* groups are listed; each must be Empty and classic. */
static int listed_batch_groups(const char *state, const char *type)
{
    struct slice states[1] = {slice_from_str(state != NULL ? state : "")};
    struct slice types[1] = {slice_from_str(type != NULL ? type : "")};
    struct kafka_ListGroupsRequest req = {
        .StatesFilter = states, .StatesFilterCnt = state != NULL ? 1 : 0,
        .TypesFilter = types, .TypesFilterCnt = type != NULL ? 1 : 0};
    struct writer body;
    writer_init(&body, 256);
    cr_assert_eq(kafka_list_groups_request_encode(&body, 5, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_LIST_GROUPS, 5, &body);
    struct kafka_ListGroupsResponse resp;
    cr_assert_eq(
        kafka_list_groups_response_decode(&ans.r, 5, &ans.a, &resp), RC_OK);
    cr_assert_eq(resp.ErrorCode, KAFKA_ERROR_NONE);
    int n = 0;
    for (int32_t i = 0; i < resp.GroupsCnt; i++) {
        const struct kafka_ListedGroup *g = &resp.Groups[i];
        if (!slice_eq(g->GroupId, slice_from_str("batch-a")) &&
            !slice_eq(g->GroupId, slice_from_str("batch-b"))) {
            continue;
        }
        cr_assert(slice_eq(g->GroupState, slice_from_str("Empty")));
        cr_assert(slice_eq(g->GroupType, slice_from_str("classic")));
        cr_assert(slice_eq(g->ProtocolType, slice_from_str("")));
        n++;
    }
    answer_free(&ans);
    return n;
}

/* SyncGroup v5 of member m-1 at generation 1 of group with the given
 * protocol type and name (NULL: null): the answer's error. */
static int16_t sync_v5(const char *group, const char *type, const char *name)
{
    struct kafka_SyncGroupRequest req = {
        .GroupId = slice_from_str(group), .GenerationId = 1,
        .MemberId = slice_from_str("m-1"), .GroupInstanceId = slice_null(),
        .ProtocolType = type != NULL ? slice_from_str(type) : slice_null(),
        .ProtocolName = name != NULL ? slice_from_str(name) : slice_null()};
    struct writer body;
    writer_init(&body, 256);
    cr_assert_eq(kafka_sync_group_request_encode(&body, 5, &req), RC_OK);
    struct answer ans;
    call(&ans, KAFKA_API_SYNC_GROUP, 5, &body);
    struct kafka_SyncGroupResponse resp;
    cr_assert_eq(
        kafka_sync_group_response_decode(&ans.r, 5, &ans.a, &resp), RC_OK);
    cr_assert(slice_is_null(resp.ProtocolType));
    cr_assert(slice_is_null(resp.ProtocolName));
    int16_t err = resp.ErrorCode;
    answer_free(&ans);
    return err;
}

Test(kafka_raw, find_coordinator_v4_and_offset_fetch_v8_batch_groups)
{
    const char *topic = "batch-commits";
    cr_assert_eq(cluster_create_topic(&c, topic, 1, 1), KAFKA_ERROR_NONE);
    cr_assert(metadata_until(topic, RAW_METADATA_WAIT_MS));
    /* The first ask makes the offsets topic; then both keys resolve. */
    uint64_t deadline = cluster_now_ms() + RAW_COORDINATOR_WAIT_MS;
    while (find_coordinators_v4("batch-a", "batch-b") != 2) {
        cr_assert(cluster_now_ms() < deadline, "no coordinators in time");
        struct timespec poll = {0, RAW_POLL_MS * 1000 * 1000};
        nanosleep(&poll, NULL); /* retry interval, bounded above */
    }
    commit_when_ready(8, "batch-a", topic, 31);   /* flexible commits */
    commit_when_ready(9, "batch-b", topic, 47);
    fetch_two_groups(8, topic);
    fetch_two_groups(9, topic);
    /* ListGroups v5: states match in any case, types too; Cairn's groups
     * are all classic. */
    cr_assert_eq(listed_batch_groups(NULL, NULL), 2);
    cr_assert_eq(listed_batch_groups("EMPTY", "Classic"), 2);
    cr_assert_eq(listed_batch_groups("Stable", NULL), 0);
    cr_assert_eq(listed_batch_groups(NULL, "consumer"), 0);
    /* SyncGroup v5 must name the protocol type and name (Kafka's
     * INCONSISTENT_GROUP_PROTOCOL otherwise); named, an unknown member of
     * the Empty group is UNKNOWN_MEMBER_ID. */
    cr_assert_eq(sync_v5("batch-a", NULL, "range"),
                 KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
    cr_assert_eq(sync_v5("batch-a", "consumer", NULL),
                 KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
    cr_assert_eq(sync_v5("batch-a", "consumer", "range"),
                 KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    assert_broker_serves("batched group lookups");
}
