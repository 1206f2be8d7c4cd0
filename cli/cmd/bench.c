/* `cairn bench` (cli/cmd/bench.h). */
#include "cli/cmd/bench.h"

#include <inttypes.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util/cli.h"
#include "cli/cmd/consume/consume.h"
#include "cli/util/histogram.h"
#include "common/rc.h"

/* Records taken from the consumer's queue at once. */
#define BENCH__BATCH_MAX 4096

/* Sends between two looks at the consumer's queue (e2e). */
#define BENCH__DRAIN_EVERY 64

/* A record not delivered by then fails (message.timeout.ms). */
#define BENCH__MESSAGE_TIMEOUT_MS 60000

/* Reading gives up after this long without a record. */
#define BENCH__IDLE_MS 15000

/* One wait for records or delivery reports. */
#define BENCH__POLL_MS 100
/* consume: how long, and how often, to ask for the watermarks again
 * while fewer than --records are readable (start_consumer). */
#define BENCH__HW_WAIT_MS 5000
#define BENCH__HW_POLL_MS 250

struct bench {
    const struct bench_opts *o;
    struct kclient_opts k; /* bootstrap: the mock's with --mock */
    rd_kafka_t *mock_rk;   /* hosts the mock cluster */
    rd_kafka_mock_cluster_t *mock;
    char *payload;     /* record_bytes of random bytes */
    bool timed_values; /* e2e: send times in the values */
    /* The consumer's side (consume, e2e). */
    rd_kafka_topic_t *rkt;
    rd_kafka_queue_t *q;
    int32_t n_partitions;
    int32_t n_started;
    int64_t *high;  /* by partition: its end when reading began */
    int64_t *next;  /* by partition: the offset after the last read */
    int32_t n_done; /* consume: partitions read up to high */
    int64_t target; /* records to read */
    /* What was measured. */
    struct histogram lat; /* nanoseconds */
    int64_t sent, delivered, failed, received, bytes;
    rd_kafka_resp_err_t first_err;
    int64_t first_ns, last_ns;
};

static const char *const bench_modes[] = {"produce", "consume", "e2e"};

void bench_usage(FILE *out)
{
    fputs("  bench produce|consume|e2e [--mock] [--topic T] [--records N]\n"
          "                [--record-size B] [--acks 0|1|all]\n"
          "                [--batch-bytes N] [--batch-records N]\n"
          "                [--linger-ms MS] [--compression CODEC]\n"
          "                [--fetch-bytes N] [--rate N] [--fill]\n"
          "                [--partitions N] [--replication-factor R]\n"
          "                [--config KEY=VALUE]...\n"
          "      Measures records/s, MB/s and latency percentiles with\n"
          "      librdkafka and prints a RESULT line. produce: produce()\n"
          "      to delivery report; consume: the topic read from its\n"
          "      beginning (--fill writes --records first); e2e:\n"
          "      produce() to arrival at a consumer. --mock runs against\n"
          "      librdkafka's in-memory mock cluster instead. Defaults:\n"
          "      topic cairn-bench, 1000000 records of 100 bytes, acks 1,\n"
          "      created with 3 partitions and the cluster's\n"
          "      default.replication.factor (1 on --mock).\n",
          out);
}

static const struct opts_cmd bench_cmd = {"bench", bench_usage};

static int parse_mode(const char *s, enum bench_mode *mode)
{
    for (size_t i = 0; i < ARRAY_LEN(bench_modes); i++) {
        if (strcmp(s, bench_modes[i]) == 0) {
            *mode = (enum bench_mode)i;
            return -1;
        }
    }
    return opts_usage_error(&bench_cmd,
                            "unknown benchmark '%s' (produce, "
                            "consume, e2e)",
                            s);
}

static void bench_defaults(struct bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->topic = "cairn-bench";
    o->records = 1000000;
    o->record_bytes = 100;
    o->acks = "1";
    o->linger_ms = -1;
    o->partitions = 3;
    o->replication_factor = -1; /* the cluster's default */
    o->configs.items = o->config_items;
    o->configs.cap = BENCH_CONFIGS_MAX;
}

/* Checks relations between the options parsed. */
static int check_options(struct bench_opts *o)
{
    if (strcmp(o->acks, "0") != 0 && strcmp(o->acks, "1") != 0 &&
        strcmp(o->acks, "all") != 0 && strcmp(o->acks, "-1") != 0) {
        return opts_usage_error(&bench_cmd,
                                "--acks: expected 0, 1 or all, "
                                "got '%s'",
                                o->acks);
    }
    if (o->mode == BENCH_E2E &&
        o->record_bytes < BENCH_E2E_RECORD_BYTES_MIN) {
        return opts_usage_error(&bench_cmd,
                                "e2e: --record-size must be at "
                                "least %d",
                                BENCH_E2E_RECORD_BYTES_MIN);
    }
    for (size_t i = 0; i < o->configs.n; i++) {
        if (!opts_is_key_value(o->configs.items[i])) {
            return opts_usage_error(&bench_cmd,
                                    "--config: expected "
                                    "KEY=VALUE, got '%s'",
                                    o->configs.items[i]);
        }
    }
    o->fill = o->fill || (o->mock && o->mode == BENCH_CONSUME);
    return -1;
}

int bench_parse(int argc, char **argv, struct bench_opts *o)
{
    bench_defaults(o);
    const struct opts_spec specs[] = {
        {"--topic", OPTS_STRING, &o->topic, 0, 0},
        {"--records", OPTS_INT64, &o->records, 1, INT64_MAX / 2},
        {"--record-size", OPTS_INT32, &o->record_bytes, 1,
         BENCH_RECORD_BYTES_MAX},
        {"--acks", OPTS_STRING, &o->acks, 0, 0},
        {"--batch-bytes", OPTS_INT32, &o->batch_bytes, 1, INT32_MAX},
        {"--batch-records", OPTS_INT32, &o->batch_records, 1, 1000000},
        {"--linger-ms", OPTS_INT32, &o->linger_ms, 0, 900000},
        {"--fetch-bytes", OPTS_INT32, &o->fetch_bytes, 1, 1000000000},
        {"--compression", OPTS_STRING, &o->compression, 0, 0},
        {"--partitions", OPTS_INT32, &o->partitions, 1,
         CONSUME_PARTITIONS_MAX},
        {"--replication-factor", OPTS_INT32, &o->replication_factor, 1,
         META_REPLICAS_MAX},
        {"--config", OPTS_LIST, &o->configs, 0, 0},
        {"--rate", OPTS_INT64, &o->rate, 0, 1000000000},
        {"--fill", OPTS_FLAG, &o->fill, 0, 0},
        {"--mock", OPTS_FLAG, &o->mock, 0, 0},
    };
    int n_pos = 0;
    int rc = opts_parse(&bench_cmd, argc, argv, 1, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos != 1) {
        return opts_usage_error(&bench_cmd, "expected one of produce, "
                                            "consume, e2e");
    }
    rc = parse_mode(argv[1], &o->mode);
    return rc >= 0 ? rc : check_options(o);
}

/* --- The cluster: mock or real ------------------------------------------- */

/* A mock cluster in this process; b->k then points at it. */
static int start_mock(struct bench *b, struct kclient_error *e)
{
    char why[KCLIENT_ERROR_BYTES];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "log_level", "3", why, sizeof why) !=
        RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, why);
        return RC_INVALID;
    }
    b->mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
    if (b->mock_rk == NULL) {
        rd_kafka_conf_destroy(conf);
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, why);
        return RC_IO;
    }
    b->mock = rd_kafka_mock_cluster_new(b->mock_rk, BENCH_MOCK_BROKERS);
    if (b->mock == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR,
                          "rd_kafka_mock_cluster_new failed");
        return RC_IO;
    }
    b->k.bootstrap = rd_kafka_mock_cluster_bootstraps(b->mock);
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(
        b->mock, b->o->topic, b->o->partitions,
        b->o->replication_factor > 0 ? b->o->replication_factor : 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        return RC_IO;
    }
    return RC_OK;
}

/* Creates the topic unless it exists, then waits for its leaders. */
static int ensure_topic(struct bench *b, struct kclient_error *e)
{
    const struct bench_opts *o = b->o;
    rd_kafka_t *rk = kclient_admin_new(&b->k, e);
    if (rk == NULL) {
        return RC_IO;
    }
    int32_t n = 0;
    int rv = kclient_partition_count(rk, o->topic, 0, &n, e);
    if (rv == RC_NOT_FOUND) {
        const struct kclient_topic t = {
            .name = o->topic,
            .partitions = o->partitions,
            .replication_factor = o->replication_factor,
            .configs = o->configs.items,
            .n_configs = o->configs.n,
        };
        rv = kclient_create_topic(rk, &t, e);
        rv = rv == RC_EXISTS ? RC_OK : rv; /* created meanwhile */
    }
    if (rv == RC_OK) {
        rv = kclient_wait_topic(rk, o->topic, true /* exists */, 0,
                                KCLIENT_TIMEOUT_MS, e);
    }
    if (rv == RC_OK) {
        /* Brokers learn of a new topic a moment apart: the one asked may
         * not know it yet. */
        rv = kclient_partition_count(rk, o->topic, KCLIENT_TIMEOUT_MS,
                                     &b->n_partitions, e);
    }
    rd_kafka_destroy(rk);
    return rv;
}

/* --- Producing ----------------------------------------------------------- */

/* Runs inside rd_kafka_poll(), on our thread. */
static void delivery_cb(rd_kafka_t *rk, const rd_kafka_message_t *m,
                        void *opaque)
{
    (void)rk;
    struct bench *b = opaque;
    int64_t now = cli_clock_ns();
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (b->failed++ == 0) {
            b->first_err = m->err;
        }
        return;
    }
    b->delivered++;
    if (!b->timed_values) { /* e2e times arrivals instead */
        b->last_ns = now;
        histogram_add(&b->lat, now - (int64_t)(uintptr_t)m->_private);
    }
}

/* Sets name to the decimal v when v is at least min. */
static int set_int(rd_kafka_conf_t *conf, const char *name, int64_t v,
                   int64_t min, struct kclient_error *e)
{
    if (v < min) {
        return RC_OK;
    }
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    return kclient_conf_set(conf, name, text, e);
}

static rd_kafka_t *make_producer(struct bench *b, struct kclient_error *e)
{
    const struct bench_opts *o = b->o;
    rd_kafka_conf_t *conf = kclient_conf_new(&b->k, e);
    bool ok =
        conf != NULL && kclient_conf_set(conf, "acks", o->acks, e) == RC_OK &&
        kclient_conf_set(conf, "partitioner", "murmur2_random", e) == RC_OK &&
        set_int(conf, "message.timeout.ms", BENCH__MESSAGE_TIMEOUT_MS, 0,
                e) == RC_OK &&
        set_int(conf, "batch.size", o->batch_bytes, 1, e) == RC_OK &&
        set_int(conf, "batch.num.messages", o->batch_records, 1, e) ==
            RC_OK &&
        set_int(conf, "linger.ms", o->linger_ms, 0, e) == RC_OK &&
        (o->compression == NULL ||
         kclient_conf_set(conf, "compression.codec", o->compression, e) ==
             RC_OK);
    if (!ok) {
        if (conf != NULL) {
            rd_kafka_conf_destroy(conf);
        }
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, delivery_cb);
    rd_kafka_conf_set_opaque(conf, b);
    return kclient_new(&b->k, RD_KAFKA_PRODUCER, conf, e);
}

static void drain(struct bench *b, int timeout_ms);

/* Waits until record i is due (--rate), serving what arrives. */
static void pace(struct bench *b, rd_kafka_t *rk, int64_t i)
{
    if (b->o->rate <= 0) {
        return;
    }
    int64_t due =
        b->first_ns + (int64_t)((double)i * 1e9 / (double)b->o->rate);
    for (int64_t now = cli_clock_ns(); now < due; now = cli_clock_ns()) {
        rd_kafka_poll(rk, 0);
        drain(b, 0);
        int64_t wait_ns = due - now < 1000000 ? due - now : 1000000;
        struct timespec ts = {0, (long)wait_ns};
        nanosleep(&ts, NULL); /* waking early only checks again */
    }
}

/* Hands one record to librdkafka (partition: RD_KAFKA_PARTITION_UA for
 * the partitioner's choice), waiting while its queue is full. */
static rd_kafka_resp_err_t send_one(struct bench *b, rd_kafka_t *rk,
                                    int32_t partition)
{
    for (;;) {
        int64_t now = cli_clock_ns();
        if (b->timed_values) {
            memcpy(b->payload, &now, sizeof now);
        }
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(b->o->topic),
            RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_VALUE(b->payload, (size_t)b->o->record_bytes),
            RD_KAFKA_V_MSGFLAGS(b->timed_values ? RD_KAFKA_MSG_F_COPY : 0),
            RD_KAFKA_V_OPAQUE((void *)(uintptr_t)now), RD_KAFKA_V_END);
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return err;
        }
        rd_kafka_poll(rk, 1);
        drain(b, 0);
    }
}

/* Waits for every delivery report, serving the consumer meanwhile. */
static void flush_all(struct bench *b, rd_kafka_t *rk)
{
    int64_t deadline = cli_clock_ns() +
                       (int64_t)(BENCH__MESSAGE_TIMEOUT_MS + 5000) * 1000000;
    while (rd_kafka_outq_len(rk) > 0 && cli_clock_ns() < deadline) {
        rd_kafka_poll(rk, b->q != NULL ? 1 : BENCH__POLL_MS);
        drain(b, 0);
    }
}

/* Checks that every record sent was delivered. */
static int check_delivered(struct bench *b, rd_kafka_resp_err_t err,
                           struct kclient_error *e)
{
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && b->failed > 0) {
        err = b->first_err;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && b->delivered < b->sent) {
        err = RD_KAFKA_RESP_ERR__MSG_TIMED_OUT;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        return RC_OK;
    }
    char text[KCLIENT_ERROR_BYTES];
    snprintf(text, sizeof text,
             "%" PRId64 " of %" PRId64 " records not "
             "delivered (first: %s)",
             b->sent - b->delivered, b->sent, rd_kafka_err2str(err));
    kclient_error_set(e, err, text);
    return RC_IO;
}

/* Produces --records records with rk; RC_OK when every one was
 * delivered. */
static int produce_all(struct bench *b, rd_kafka_t *rk,
                       struct kclient_error *e)
{
    b->first_ns = cli_clock_ns();
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int64_t i = 0; i < b->o->records; i++) {
        pace(b, rk, i);
        err = send_one(b, rk, RD_KAFKA_PARTITION_UA);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            break;
        }
        b->sent++;
        rd_kafka_poll(rk, 0);
        if (b->q != NULL && i % BENCH__DRAIN_EVERY == 0) {
            drain(b, 0);
        }
    }
    flush_all(b, rk);
    return check_delivered(b, err, e);
}

static int run_produce(struct bench *b, struct kclient_error *e)
{
    rd_kafka_t *rk = make_producer(b, e);
    if (rk == NULL) {
        return RC_IO;
    }
    int rv = produce_all(b, rk, e);
    rd_kafka_destroy(rk);
    return rv;
}

/* --- Consuming ----------------------------------------------------------- */

static rd_kafka_t *make_consumer(struct bench *b, struct kclient_error *e)
{
    rd_kafka_conf_t *conf = kclient_conf_new(&b->k, e);
    bool ok = conf != NULL && set_int(conf, "fetch.message.max.bytes",
                                      b->o->fetch_bytes, 1, e) == RC_OK;
    if (!ok) {
        if (conf != NULL) {
            rd_kafka_conf_destroy(conf);
        }
        return NULL;
    }
    return kclient_new(&b->k, RD_KAFKA_CONSUMER, conf, e);
}

/* Partition p's watermarks into b->high and b->next: reading starts at
 * its beginning (consume) or at its end (e2e, so only this run's records
 * arrive). */
static int plan_partition(struct bench *b, rd_kafka_t *rk, int32_t p,
                          struct kclient_error *e)
{
    int64_t low = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk, b->o->topic, p, &low, &b->high[p], KCLIENT_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        return RC_IO;
    }
    b->next[p] = b->o->mode == BENCH_E2E ? b->high[p] : low;
    if (b->o->mode == BENCH_CONSUME) {
        b->target += b->high[p] - low;
        b->n_done += b->high[p] <= low ? 1 : 0;
    }
    return RC_OK;
}

/* Partition count and per-partition state. */
static int plan_partitions(struct bench *b, rd_kafka_t *rk,
                           struct kclient_error *e)
{
    int rv = kclient_partition_count(rk, b->o->topic, KCLIENT_TOPIC_WAIT_MS,
                                     &b->n_partitions, e);
    if (rv != RC_OK) {
        return rv;
    }
    if (b->n_partitions <= 0 || b->n_partitions > CONSUME_PARTITIONS_MAX) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, NULL);
        return RC_IO;
    }
    b->high = calloc((size_t)b->n_partitions, sizeof *b->high);
    b->next = calloc((size_t)b->n_partitions, sizeof *b->next);
    b->rkt = rd_kafka_topic_new(rk, b->o->topic, NULL);
    b->q = rd_kafka_queue_new(rk);
    if (b->high == NULL || b->next == NULL || b->rkt == NULL ||
        b->q == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    return RC_OK;
}

/* The watermarks of every partition (b->target: the records readable). */
static int plan_all(struct bench *b, rd_kafka_t *rk, struct kclient_error *e)
{
    b->target = 0;
    b->n_done = 0;
    int rv = RC_OK;
    for (int32_t p = 0; rv == RC_OK && p < b->n_partitions; p++) {
        rv = plan_partition(b, rk, p, e);
    }
    return rv;
}

/* Starts the simple consumer on every partition into one queue; for
 * consume, the clock starts here, once the watermarks are known. Right
 * after a produce with acks=1 the high watermarks trail the leaders' logs
 * by a follower fetch, so consume asks again, for up to
 * BENCH__HW_WAIT_MS, while fewer than --records are readable and the
 * count still grows. */
static int start_consumer(struct bench *b, rd_kafka_t *rk,
                          struct kclient_error *e)
{
    int rv = plan_partitions(b, rk, e);
    if (rv == RC_OK) {
        rv = plan_all(b, rk, e);
    }
    int64_t deadline = cli_clock_ns() + (int64_t)BENCH__HW_WAIT_MS * 1000000;
    int64_t seen = -1;
    while (rv == RC_OK && b->o->mode == BENCH_CONSUME &&
           b->target < b->o->records && b->target != seen &&
           cli_clock_ns() < deadline) {
        seen = b->target;
        struct timespec pause = {0, BENCH__HW_POLL_MS * 1000000L};
        nanosleep(&pause, NULL);
        rv = plan_all(b, rk, e);
    }
    if (b->o->mode == BENCH_CONSUME) {
        b->target = b->target < b->o->records ? b->target : b->o->records;
        b->first_ns = cli_clock_ns();
    }
    for (int32_t p = 0; rv == RC_OK && p < b->n_partitions; p++) {
        if (rd_kafka_consume_start_queue(b->rkt, p, b->next[p], b->q) != 0) {
            kclient_error_set(e, rd_kafka_last_error(), NULL);
            return RC_IO;
        }
        b->n_started++;
    }
    return rv;
}

static void stop_consumer(struct bench *b)
{
    for (int32_t p = 0; p < b->n_started; p++) {
        rd_kafka_consume_stop(b->rkt, p);
    }
    if (b->q != NULL) {
        rd_kafka_queue_destroy(b->q);
        b->q = NULL;
    }
    if (b->rkt != NULL) {
        rd_kafka_topic_destroy(b->rkt);
        b->rkt = NULL;
    }
    free(b->high);
    free(b->next);
    b->high = b->next = NULL;
    b->n_started = 0;
}

static void on_record(struct bench *b, const rd_kafka_message_t *m,
                      int64_t now)
{
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cli_error("bench: partition %" PRId32 ": %s: %s", m->partition,
                  kclient_err_name(m->err), rd_kafka_message_errstr(m));
        return;
    }
    int32_t p = m->partition;
    ASSERT(p >= 0 && p < b->n_partitions); /* only those were started */
    bool was_done = b->next[p] >= b->high[p];
    b->next[p] = m->offset + 1;
    if (!was_done && b->next[p] >= b->high[p]) {
        b->n_done++;
    }
    b->received++;
    b->bytes += (int64_t)m->len;
    b->last_ns = now;
    if (b->timed_values && m->len >= sizeof(int64_t)) {
        int64_t sent_ns = 0;
        memcpy(&sent_ns, m->payload, sizeof sent_ns);
        histogram_add(&b->lat, now - sent_ns);
    }
}

/* Takes what the consumer's queue holds, waiting up to timeout_ms. */
static void drain(struct bench *b, int timeout_ms)
{
    if (b->q == NULL) {
        return;
    }
    rd_kafka_message_t *batch[BENCH__BATCH_MAX];
    ssize_t n = rd_kafka_consume_batch_queue(b->q, timeout_ms, batch,
                                             ARRAY_LEN(batch));
    int64_t now = cli_clock_ns();
    for (ssize_t i = 0; i < n; i++) {
        on_record(b, batch[i], now);
        rd_kafka_message_destroy(batch[i]);
    }
}

/* Reads until b->target records arrived, every partition is read up to
 * its end (consume), or nothing came for BENCH__IDLE_MS. */
static int read_all(struct bench *b, struct kclient_error *e)
{
    int64_t idle_since = cli_clock_ns();
    int64_t seen = b->received;
    while (b->received < b->target) {
        if (b->o->mode == BENCH_CONSUME && b->n_done == b->n_partitions) {
            break;
        }
        drain(b, BENCH__POLL_MS);
        int64_t now = cli_clock_ns();
        if (b->received != seen) {
            seen = b->received;
            idle_since = now;
        } else if (now - idle_since > (int64_t)BENCH__IDLE_MS * 1000000) {
            break;
        }
    }
    if (b->received == 0 ||
        (b->o->mode == BENCH_E2E && b->received < b->target)) {
        char text[160];
        snprintf(text, sizeof text,
                 "%" PRId64 " of %" PRId64 " records "
                 "arrived%s",
                 b->received, b->target,
                 b->target == 0 ? " (the topic is empty: --fill)" : "");
        kclient_error_set(e, RD_KAFKA_RESP_ERR__TIMED_OUT, text);
        return RC_TIMEOUT;
    }
    return RC_OK;
}

/* --- Runs and results ---------------------------------------------------- */

static void reset_measurements(struct bench *b)
{
    histogram_init(&b->lat);
    b->sent = b->delivered = b->failed = b->received = b->bytes = 0;
    b->first_ns = b->last_ns = 0;
}

static void print_result(const struct bench *b)
{
    const struct bench_opts *o = b->o;
    bool consume = o->mode == BENCH_CONSUME;
    int64_t n = o->mode == BENCH_PRODUCE ? b->delivered : b->received;
    int64_t bytes = consume ? b->bytes : n * o->record_bytes;
    int64_t record_bytes = consume ? bytes / (n > 0 ? n : 1)
                                   : o->record_bytes; /* consume: mean */
    double s = (double)(b->last_ns - b->first_ns) / 1e9;
    s = s > 1e-9 ? s : 1e-9;
    printf("RESULT bench=%s records=%" PRId64 " record_bytes=%" PRId64
           " msgs_s=%.0f mb_s=%.1f",
           bench_modes[o->mode], n, record_bytes, (double)n / s,
           (double)bytes / s / 1e6);
    if (!consume) {
        printf(" p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f",
               (double)histogram_percentile(&b->lat, 50) / 1e6,
               (double)histogram_percentile(&b->lat, 99) / 1e6,
               (double)histogram_percentile(&b->lat, 99.9) / 1e6,
               (double)histogram_percentile(&b->lat, 100) / 1e6);
    }
    printf(" seconds=%.3f", s);
    if (!consume) {
        printf(" acks=%s", o->acks);
    }
    printf(" partitions=%" PRId32 " target=%s\n",
           b->n_partitions > 0 ? b->n_partitions : o->partitions,
           o->mock ? "mock" : "cairn");
}

/* consume: the topic from its beginning (written first with --fill). */
static int run_consume(struct bench *b, struct kclient_error *e)
{
    if (b->o->fill) {
        int rv = run_produce(b, e); /* untimed */
        if (rv != RC_OK) {
            return rv;
        }
        reset_measurements(b);
    }
    rd_kafka_t *rk = make_consumer(b, e);
    if (rk == NULL) {
        return RC_IO;
    }
    int rv = start_consumer(b, rk, e);
    if (rv == RC_OK) {
        rv = read_all(b, e);
    }
    stop_consumer(b);
    rd_kafka_destroy(rk);
    return rv;
}

/* One record to each partition, waited for at the consumer, so that every
 * fetch session is running before the clock starts. */
static int warm_up(struct bench *b, rd_kafka_t *prk, struct kclient_error *e)
{
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int32_t p = 0; p < b->n_partitions; p++) {
        err = send_one(b, prk, p);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            break;
        }
        b->sent++;
    }
    flush_all(b, prk);
    int rv = check_delivered(b, err, e);
    b->target = b->n_partitions;
    if (rv == RC_OK) {
        rv = read_all(b, e);
    }
    reset_measurements(b);
    return rv;
}

/* e2e: a producer and a consumer of the same partitions, interleaved. */
static int run_e2e(struct bench *b, struct kclient_error *e)
{
    b->timed_values = true;
    rd_kafka_t *crk = make_consumer(b, e);
    rd_kafka_t *prk = crk != NULL ? make_producer(b, e) : NULL;
    int rv = prk != NULL ? start_consumer(b, crk, e) : RC_IO;
    if (rv == RC_OK) {
        rv = warm_up(b, prk, e);
    }
    if (rv == RC_OK) {
        b->target = b->o->records;
        rv = produce_all(b, prk, e);
    }
    if (rv == RC_OK) {
        rv = read_all(b, e);
    }
    stop_consumer(b);
    if (prk != NULL) {
        rd_kafka_destroy(prk);
    }
    if (crk != NULL) {
        rd_kafka_destroy(crk);
    }
    return rv;
}

static int run(struct bench *b, struct kclient_error *e)
{
    int rv = b->o->mock ? start_mock(b, e) : ensure_topic(b, e);
    if (rv != RC_OK) {
        return rv;
    }
    switch (b->o->mode) {
    case BENCH_PRODUCE:
        return run_produce(b, e);
    case BENCH_CONSUME:
        return run_consume(b, e);
    case BENCH_E2E:
        return run_e2e(b, e);
    }
    ASSERT(false);
    return RC_INVALID;
}

/* Bytes that do not compress, so codecs cannot flatter the numbers. */
static void fill_random(char *p, size_t n)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (char)(x >> 56);
    }
}

int bench_run(const struct kclient_opts *k, const struct bench_opts *o)
{
    struct bench *b = calloc(1, sizeof *b);
    char *payload = malloc((size_t)o->record_bytes);
    if (b == NULL || payload == NULL) {
        free(b);
        free(payload);
        cli_error("bench: out of memory");
        return CLI_EXIT_FAILED;
    }
    b->o = o;
    b->k = *k;
    b->payload = payload;
    fill_random(payload, (size_t)o->record_bytes);
    reset_measurements(b);
    struct kclient_error e;
    int rv = run(b, &e);
    if (rv == RC_OK) {
        print_result(b);
    } else {
        char what[META_TOPIC_NAME_BYTES_MAX + 32];
        snprintf(what, sizeof what, "bench %s %s", bench_modes[o->mode],
                 o->topic);
        kclient_error_print(what, &e);
    }
    if (b->mock != NULL) {
        rd_kafka_mock_cluster_destroy(b->mock);
    }
    if (b->mock_rk != NULL) {
        rd_kafka_destroy(b->mock_rk);
    }
    free(payload);
    free(b);
    return rv == RC_OK ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
