/* `cairn produce` (cli/cmd/produce.h). */
#include "cli/cmd/produce.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd/produce_why.h"
#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "common/rc.h"

/* Delivery reports may come this long after message.timeout.ms. */
#define PRODUCE__FLUSH_MARGIN_MS 5000

/* Pause while librdkafka's queue is full (queue.buffering.max.*). */
#define PRODUCE__FULL_POLL_MS 100

void produce_usage(FILE *out)
{
    fputs("  produce TOPIC [--key K | --key-separator SEP] [--acks 0|1|all]\n"
          "                [--compression none|gzip|snappy|lz4|zstd]\n"
          "                [--partition N] [--timeout-ms MS]\n"
          "      Sends each line of stdin as a record value. --key gives\n"
          "      every record the key K; --key-separator splits each line\n"
          "      at its first SEP into key and value (no SEP: no key).\n"
          "      Keyed records go to Kafka's murmur2 partition of the key,\n"
          "      as from a Java producer; unkeyed ones to a random one.\n"
          "      --acks defaults to all; a record not delivered within\n"
          "      --timeout-ms (default 30000) fails, named with the\n"
          "      broker's last error for its partition (too few in-sync\n"
          "      replicas: with the ISR and min.insync.replicas). Exits 1\n"
          "      when any record failed.\n",
          out);
}

static const struct opts_cmd produce_cmd = {"produce", produce_usage};

int produce_parse(int argc, char **argv, struct produce_opts *o)
{
    memset(o, 0, sizeof *o);
    o->acks = "all";
    o->partition = -1;
    o->timeout_ms = PRODUCE_TIMEOUT_MS_DEFAULT;
    const struct opts_spec specs[] = {
        {"--key", OPTS_STRING, &o->key, 0, 0},
        {"--key-separator", OPTS_STRING, &o->key_separator, 0, 0},
        {"--acks", OPTS_STRING, &o->acks, 0, 0},
        {"--compression", OPTS_STRING, &o->compression, 0, 0},
        {"--partition", OPTS_INT32, &o->partition, 0, INT32_MAX},
        {"--timeout-ms", OPTS_INT64, &o->timeout_ms, 1, INT32_MAX},
    };
    int rc = opts_parse_topic(&produce_cmd, argc, argv, specs,
                              ARRAY_LEN(specs), &o->topic);
    if (rc >= 0) {
        return rc;
    }
    if (o->key != NULL && o->key_separator != NULL) {
        return opts_usage_error(&produce_cmd, "--key and --key-separator "
                                              "exclude each other");
    }
    if (o->key_separator != NULL && o->key_separator[0] == '\0') {
        return opts_usage_error(&produce_cmd, "--key-separator is empty");
    }
    if (strcmp(o->acks, "0") != 0 && strcmp(o->acks, "1") != 0 &&
        strcmp(o->acks, "all") != 0 && strcmp(o->acks, "-1") != 0) {
        return opts_usage_error(&produce_cmd,
                                "--acks: expected 0, 1 or "
                                "all, got '%s'",
                                o->acks);
    }
    return -1;
}

/* --- Delivery ------------------------------------------------------------ */

struct produce_state {
    const struct produce_opts *o;
    int64_t sent;      /* records handed to librdkafka */
    int64_t delivered; /* acknowledged as asked (--acks) */
    int64_t failed;
    struct produce_why why; /* the brokers' last errors */
};

/* Runs inside rd_kafka_poll() and rd_kafka_flush(), on our thread. A
 * record that timed out says what the broker last answered for its
 * partition. */
static void delivery_cb(rd_kafka_t *rk, const rd_kafka_message_t *m,
                        void *opaque)
{
    (void)rk;
    struct produce_state *st = opaque;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        st->delivered++;
        return;
    }
    st->failed++;
    struct produce_why_error last =
        produce_why_failed(&st->why, m->partition);
    if (st->failed > PRODUCE_ERRORS_SHOWN) {
        return;
    }
    if (last.err == RD_KAFKA_RESP_ERR_NO_ERROR || last.err == m->err) {
        cli_error("produce %s: line %" PRIuPTR ": %s: %s", st->o->topic,
                  (uintptr_t)m->_private, kclient_err_name(m->err),
                  rd_kafka_err2str(m->err));
        return;
    }
    cli_error("produce %s: line %" PRIuPTR ": %s: %s; partition %" PRId32
              "'s last error from broker %" PRId32 ": %s",
              st->o->topic, (uintptr_t)m->_private, kclient_err_name(m->err),
              rd_kafka_err2str(m->err), m->partition, last.broker_id,
              kclient_err_name(last.err));
}

/* Every librdkafka log line: the brokers' errors are noted, then the
 * line goes on to kclient's callback. librdkafka's threads. */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac,
                   const char *buf)
{
    struct produce_state *st = rd_kafka_opaque(rk);
    produce_why_note(&st->why, level, fac, buf);
    kclient_log(rk, level, fac, buf);
}

static rd_kafka_t *make_producer(const struct kclient_opts *k,
                                 const struct produce_opts *o,
                                 struct produce_state *st)
{
    struct kclient_error e;
    rd_kafka_conf_t *conf = kclient_conf_new(k, &e);
    char timeout[24];
    snprintf(timeout, sizeof timeout, "%" PRId64, o->timeout_ms);
    bool ok =
        conf != NULL &&
        kclient_conf_set(conf, "acks", o->acks, &e) == RC_OK &&
        kclient_conf_set(conf, "partitioner", "murmur2_random", &e) ==
            RC_OK &&
        kclient_conf_set(conf, "message.timeout.ms", timeout, &e) == RC_OK &&
        /* the debug line of each failed Produce (produce_why.h) */
        kclient_conf_set(conf, "debug", "msg", &e) == RC_OK &&
        (o->compression == NULL ||
         kclient_conf_set(conf, "compression.codec", o->compression, &e) ==
             RC_OK);
    if (!ok) {
        if (conf != NULL) {
            rd_kafka_conf_destroy(conf);
        }
        kclient_error_print("produce", &e);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, delivery_cb);
    rd_kafka_conf_set_log_cb(conf, log_cb);
    rd_kafka_conf_set_opaque(conf, st);
    rd_kafka_t *rk = kclient_new(k, RD_KAFKA_PRODUCER, conf, &e);
    if (rk == NULL) {
        kclient_error_print("produce", &e);
    }
    return rk;
}

/* --- Input --------------------------------------------------------------- */

/* One line of in without its '\n' into buf (cap bytes), its length in
 * *len. Returns 1 for a line, 0 at the end, RC_TOO_LARGE for a longer
 * line (the rest of it unread), RC_IO for a read error. */
static int read_line(FILE *in, char *buf, size_t cap, size_t *len)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(in)) != EOF) {
        if (c == '\n') {
            *len = n;
            return 1;
        }
        if (n == cap) {
            return RC_TOO_LARGE;
        }
        buf[n++] = (char)c;
    }
    if (ferror(in)) {
        return RC_IO;
    }
    *len = n;
    return n > 0 ? 1 : 0; /* a last line without '\n' still counts */
}

/* Hands one record to librdkafka, waiting while its queue is full. */
static rd_kafka_resp_err_t
send_record(rd_kafka_t *rk, const struct produce_opts *o, const char *key,
            size_t key_len, char *value, size_t len, uintptr_t line)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(o->topic),
            RD_KAFKA_V_PARTITION(o->partition >= 0 ? o->partition
                                                   : RD_KAFKA_PARTITION_UA),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, len),
            RD_KAFKA_V_OPAQUE((void *)line), RD_KAFKA_V_END);
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return err;
        }
        rd_kafka_poll(rk, PRODUCE__FULL_POLL_MS);
    }
}

/* Splits line per --key/--key-separator and sends it. */
static rd_kafka_resp_err_t send_line(rd_kafka_t *rk,
                                     const struct produce_opts *o, char *line,
                                     size_t len, uintptr_t no)
{
    if (o->key != NULL) {
        return send_record(rk, o, o->key, strlen(o->key), line, len, no);
    }
    if (o->key_separator != NULL) {
        size_t sep_len = strlen(o->key_separator);
        char *sep = memmem(line, len, o->key_separator, sep_len);
        if (sep != NULL) {
            size_t key_len = (size_t)(sep - line);
            return send_record(rk, o, line, key_len, sep + sep_len,
                               len - key_len - sep_len, no);
        }
    }
    return send_record(rk, o, NULL, 0, line, len, no);
}

/* Sends stdin line by line; CLI_EXIT_OK or the failure (printed). */
static int send_stdin(rd_kafka_t *rk, const struct produce_opts *o,
                      struct produce_state *st, char *buf)
{
    for (uintptr_t no = 1;; no++) {
        size_t len = 0;
        int r = read_line(stdin, buf, PRODUCE_LINE_BYTES_MAX, &len);
        if (r == 0) {
            return CLI_EXIT_OK;
        }
        if (r != 1) {
            cli_error("produce %s: line %" PRIuPTR ": %s", o->topic, no,
                      r == RC_TOO_LARGE ? "longer than 1 MiB"
                                        : "reading stdin failed");
            return CLI_EXIT_FAILED;
        }
        rd_kafka_resp_err_t err = send_line(rk, o, buf, len, no);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            cli_error("produce %s: line %" PRIuPTR ": %s: %s", o->topic, no,
                      kclient_err_name(err), rd_kafka_err2str(err));
            return CLI_EXIT_FAILED;
        }
        st->sent++;
        rd_kafka_poll(rk, 0); /* serve delivery reports as we go */
    }
}

/* Checks that the topic (and --partition) exist, so a typo fails now
 * rather than after --timeout-ms. */
static int check_topic(rd_kafka_t *rk, const struct produce_opts *o,
                       struct produce_why *why)
{
    struct kclient_error e;
    int32_t n = 0;
    char what[300];
    snprintf(what, sizeof what, "produce %s", o->topic);
    if (kclient_partition_count(rk, o->topic, KCLIENT_TOPIC_WAIT_MS, &n,
                                &e) != RC_OK) {
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    if (o->partition >= n) {
        cli_error("%s: --partition %" PRId32 ": the topic has %" PRId32
                  " partitions",
                  what, o->partition, n);
        return CLI_EXIT_FAILED;
    }
    if (produce_why_start(why, n) != RC_OK) {
        cli_error("%s: out of memory", what);
        return CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

/* Waits for every delivery report and sums up. */
static int finish(rd_kafka_t *rk, const struct produce_opts *o,
                  struct produce_state *st, int rc)
{
    int wait_ms = (int)o->timeout_ms + PRODUCE__FLUSH_MARGIN_MS;
    if (rd_kafka_flush(rk, wait_ms) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cli_error("produce %s: %d records still undelivered after %d ms",
                  o->topic, rd_kafka_outq_len(rk), wait_ms);
        rc = CLI_EXIT_FAILED;
    }
    if (st->failed > 0) {
        produce_why_explain(&st->why, rk);
        cli_error("produce %s: %" PRId64 " of %" PRId64 " records failed",
                  o->topic, st->failed, st->sent);
        rc = CLI_EXIT_FAILED;
    }
    return rc;
}

int produce_run(const struct kclient_opts *k, const struct produce_opts *o)
{
    struct produce_state st = {.o = o};
    char *buf = malloc(PRODUCE_LINE_BYTES_MAX);
    if (buf == NULL) {
        cli_error("produce: out of memory");
        return CLI_EXIT_FAILED;
    }
    produce_why_init(&st.why, o->topic);
    rd_kafka_t *rk = make_producer(k, o, &st);
    int rc = rk != NULL ? check_topic(rk, o, &st.why) : CLI_EXIT_FAILED;
    if (rc == CLI_EXIT_OK) {
        rc = send_stdin(rk, o, &st, buf);
    }
    if (rk != NULL) {
        rc = finish(rk, o, &st, rc);
        rd_kafka_destroy(rk);
    }
    produce_why_destroy(&st.why);
    free(buf);
    return rc;
}
