/* `cairn consume` (cli/cmd/consume/consume.h). */
#include "cli/cmd/consume/consume.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/cmd/consume/consume_group.h"
#include "cli/util/opts.h"
#include "common/rc.h"

/* Set by SIGINT and SIGTERM; the loop stops at its next wake-up. */
static volatile sig_atomic_t consume_stop_requested;

void consume_usage(FILE *out)
{
    fputs("  consume TOPIC [--from-beginning | --offset N] [--partition N]\n"
          "                [--count N] [--exit-at-end] [--print-key]\n"
          "                [--separator SEP]\n"
          "                [--group G [--assignment-strategy S]]\n"
          "      Prints each record's value on a line (--print-key: key,\n"
          "      SEP (default a tab), value). Starts at the end of each\n"
          "      partition, at its beginning with --from-beginning, or at\n"
          "      offset N (N < 0: -N records before the end). Stops after\n"
          "      --count records, at the end of every partition with\n"
          "      --exit-at-end, or on SIGINT. Without --group, reads the\n"
          "      partitions directly (no group, no commits). With --group,\n"
          "      joins consumer group G and reads the partitions it is\n"
          "      given, from the group's committed offsets (where there\n"
          "      are none: the end, or the beginning with\n"
          "      --from-beginning); it commits the offsets of the records\n"
          "      it printed after each batch and before it leaves. S is\n"
          "      range (default), roundrobin or cooperative-sticky.\n",
          out);
}

static const struct opts_cmd consume_cmd = {"consume", consume_usage};

static int check_options(const struct consume_opts *o)
{
    if (o->from_beginning && o->offset != CONSUME_OFFSET_NONE) {
        return opts_usage_error(&consume_cmd, "--from-beginning and "
                                              "--offset exclude each other");
    }
    if (o->group != NULL &&
        (o->partition >= 0 || o->offset != CONSUME_OFFSET_NONE)) {
        return opts_usage_error(&consume_cmd,
                                "--group takes the "
                                "group's partitions and offsets; "
                                "--partition and --offset need no group");
    }
    if (o->group != NULL && o->group[0] == '\0') {
        return opts_usage_error(&consume_cmd, "--group is empty");
    }
    if (o->assignment_strategy != NULL && o->group == NULL) {
        return opts_usage_error(&consume_cmd, "--assignment-strategy "
                                              "needs --group");
    }
    if (o->assignment_strategy != NULL &&
        !consume_group_strategy_valid(o->assignment_strategy)) {
        return opts_usage_error(&consume_cmd,
                                "--assignment-strategy: "
                                "expected range, roundrobin or "
                                "cooperative-sticky, got '%s'",
                                o->assignment_strategy);
    }
    return -1;
}

int consume_parse(int argc, char **argv, struct consume_opts *o)
{
    memset(o, 0, sizeof *o);
    o->partition = -1;
    o->offset = CONSUME_OFFSET_NONE;
    o->count = -1;
    o->separator = "\t";
    const struct opts_spec specs[] = {
        {"--from-beginning", OPTS_FLAG, &o->from_beginning, 0, 0},
        {"--partition", OPTS_INT32, &o->partition, 0, INT32_MAX},
        {"--offset", OPTS_INT64, &o->offset, -INT32_MAX, INT64_MAX},
        {"--count", OPTS_INT64, &o->count, 0, INT64_MAX},
        {"--exit-at-end", OPTS_FLAG, &o->exit_at_end, 0, 0},
        {"--print-key", OPTS_FLAG, &o->print_key, 0, 0},
        {"--separator", OPTS_STRING, &o->separator, 0, 0},
        {"--group", OPTS_STRING, &o->group, 0, 0},
        {"--assignment-strategy", OPTS_STRING, &o->assignment_strategy, 0, 0},
    };
    int rc = opts_parse_topic(&consume_cmd, argc, argv, specs,
                              ARRAY_LEN(specs), &o->topic);
    if (rc >= 0) {
        return rc;
    }
    return check_options(o);
}

/* --- State --------------------------------------------------------------- */

struct consume_state {
    const struct consume_opts *o;
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt; /* simple consumer: the topic; else NULL */
    rd_kafka_queue_t *q;   /* where records arrive */
    int32_t n_partitions;
    int32_t first, last; /* the partitions read: [first, last] */
    int32_t n_started;   /* simple consumer: first .. first + n - 1 */
    bool *at_end;        /* by partition: read to its end */
    int32_t n_at_end;
    struct consume_group group; /* --group: the member's state */
    int64_t printed;
    bool done;
    bool failed;
    char what[META_TOPIC_NAME_BYTES_MAX + 16]; /* "consume TOPIC" */
};

static void stop_cb(int sig)
{
    (void)sig;
    consume_stop_requested = 1;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = stop_cb;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The consumer handle; with --group, also st->group (whose rebalance
 * callback the handle calls). */
static rd_kafka_t *make_consumer(const struct kclient_opts *k,
                                 struct consume_state *st,
                                 struct kclient_error *e)
{
    const struct consume_opts *o = st->o;
    rd_kafka_conf_t *conf = kclient_conf_new(k, e);
    bool ok = conf != NULL && kclient_conf_set(conf, "enable.partition.eof",
                                               "true", e) == RC_OK;
    if (ok && o->group != NULL) {
        ok = consume_group_init(&st->group, o->topic, e) == RC_OK &&
             consume_group_configure(&st->group, conf, o, e) == RC_OK;
    }
    if (!ok) {
        if (conf != NULL) {
            rd_kafka_conf_destroy(conf);
        }
        return NULL;
    }
    rd_kafka_t *rk = kclient_new(k, RD_KAFKA_CONSUMER, conf, e);
    st->group.rk = rk;
    return rk;
}

/* Partition count, the partitions to read and their end flags. */
static int plan_partitions(struct consume_state *st, struct kclient_error *e)
{
    const struct consume_opts *o = st->o;
    int rv = kclient_partition_count(st->rk, o->topic, KCLIENT_TOPIC_WAIT_MS,
                                     &st->n_partitions, e);
    if (rv != RC_OK) {
        return rv;
    }
    if (st->n_partitions <= 0 || st->n_partitions > CONSUME_PARTITIONS_MAX ||
        o->partition >= st->n_partitions) {
        char text[128];
        snprintf(text, sizeof text, "the topic has %" PRId32 " partitions",
                 st->n_partitions);
        kclient_error_set(e, RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, text);
        return RC_NOT_FOUND;
    }
    st->first = o->partition >= 0 ? o->partition : 0;
    st->last = o->partition >= 0 ? o->partition : st->n_partitions - 1;
    st->at_end = calloc((size_t)st->n_partitions, sizeof *st->at_end);
    if (st->at_end == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    return RC_OK;
}

/* --- Starting and stopping ----------------------------------------------- */

static int64_t start_offset(const struct consume_opts *o)
{
    if (o->offset >= 0) {
        return o->offset;
    }
    if (o->offset != CONSUME_OFFSET_NONE) {
        return RD_KAFKA_OFFSET_TAIL(-o->offset);
    }
    return o->from_beginning ? RD_KAFKA_OFFSET_BEGINNING
                             : RD_KAFKA_OFFSET_END;
}

/* The simple consumer: every partition read into one queue. */
static int start_simple(struct consume_state *st, struct kclient_error *e)
{
    st->rkt = rd_kafka_topic_new(st->rk, st->o->topic, NULL);
    st->q = rd_kafka_queue_new(st->rk);
    if (st->rkt == NULL || st->q == NULL) {
        kclient_error_set(e, rd_kafka_last_error(), NULL);
        return RC_IO;
    }
    int64_t offset = start_offset(st->o);
    for (int32_t p = st->first; p <= st->last; p++) {
        if (rd_kafka_consume_start_queue(st->rkt, p, offset, st->q) != 0) {
            kclient_error_set(e, rd_kafka_last_error(), NULL);
            return RC_IO;
        }
        st->n_started++;
    }
    return RC_OK;
}

/* A group member: subscribes and reads the consumer queue. */
static int start_group(struct consume_state *st, struct kclient_error *e)
{
    rd_kafka_poll_set_consumer(st->rk);
    rd_kafka_topic_partition_list_t *topics =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, st->o->topic,
                                      RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(st->rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        return RC_IO;
    }
    st->q = rd_kafka_queue_get_consumer(st->rk);
    ASSERT(st->q != NULL); /* a consumer with group.id has one */
    return RC_OK;
}

static void stop_consuming(struct consume_state *st)
{
    for (int32_t i = 0; i < st->n_started; i++) {
        rd_kafka_consume_stop(st->rkt, st->first + i);
    }
    if (st->q != NULL) {
        rd_kafka_queue_destroy(st->q);
    }
    if (st->rkt != NULL) {
        rd_kafka_topic_destroy(st->rkt);
    }
    if (st->o->group != NULL && st->rk != NULL) {
        rd_kafka_resp_err_t err = rd_kafka_consumer_close(st->rk);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            struct kclient_error e;
            kclient_error_set(&e, err, NULL);
            kclient_error_print(st->what, &e);
        }
    }
    if (st->rk != NULL) {
        rd_kafka_destroy(st->rk);
    }
    free(st->at_end);
    consume_group_free(&st->group);
}

/* --- Records ------------------------------------------------------------- */

static void print_record(const struct consume_opts *o,
                         const rd_kafka_message_t *m)
{
    if (o->print_key) {
        if (m->key != NULL) {
            fwrite(m->key, 1, m->key_len, stdout);
        }
        fputs(o->separator, stdout);
    }
    if (m->payload != NULL) {
        fwrite(m->payload, 1, m->len, stdout);
    }
    putc('\n', stdout);
}

/* Errors after which waiting cannot help. */
static bool is_fatal(rd_kafka_resp_err_t err)
{
    return err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
           err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
           err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
           err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
           err == RD_KAFKA_RESP_ERR__FATAL;
}

static void on_error(struct consume_state *st, const rd_kafka_message_t *m)
{
    if (m->rkt == NULL) { /* not about a partition */
        cli_error("%s: %s: %s", st->what, kclient_err_name(m->err),
                  rd_kafka_message_errstr(m));
    } else {
        cli_error("%s: partition %" PRId32 ": %s: %s", st->what, m->partition,
                  kclient_err_name(m->err), rd_kafka_message_errstr(m));
    }
    if (is_fatal(m->err)) {
        st->failed = true;
        st->done = true;
    }
}

/* Marks partition p read to its end (at_end) or not. */
static void set_at_end(struct consume_state *st, int32_t p, bool at_end)
{
    if (st->o->group != NULL) {
        bool all = consume_group_set_at_end(&st->group, p, at_end);
        st->done = st->done || (st->o->exit_at_end && all);
        return;
    }
    if (p < st->first || p > st->last || st->at_end[p] == at_end) {
        return;
    }
    st->at_end[p] = at_end;
    st->n_at_end += at_end ? 1 : -1;
    if (st->o->exit_at_end && st->n_at_end == st->last - st->first + 1) {
        st->done = true;
    }
}

static void on_message(struct consume_state *st, const rd_kafka_message_t *m)
{
    bool group = st->o->group != NULL;
    if (group && m->err != RD_KAFKA_RESP_ERR_NO_ERROR && m->rkt == NULL) {
        on_error(st, m); /* the group's, not a partition's */
        return;
    }
    if (group && !consume_group_owns(&st->group, m->partition)) {
        return; /* fetched before a rebalance took the partition away */
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        set_at_end(st, m->partition, true);
        return;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        on_error(st, m);
        return;
    }
    set_at_end(st, m->partition, false);
    print_record(st->o, m);
    st->printed++;
    if (group) {
        consume_group_processed(&st->group, m);
    }
    if (st->printed == st->o->count || ferror(stdout)) {
        st->done = true;
    }
}

/* Takes records from the queue until done, SIGINT or SIGTERM. */
static void consume_loop(struct consume_state *st)
{
    rd_kafka_message_t *batch[CONSUME_BATCH_MAX];
    st->done = st->o->count == 0;
    while (!st->done && consume_stop_requested == 0) {
        int64_t printed_before = st->printed;
        ssize_t n = rd_kafka_consume_batch_queue(st->q, CONSUME_POLL_MS,
                                                 batch, ARRAY_LEN(batch));
        if (n < 0) {
            cli_error("%s: %s", st->what,
                      rd_kafka_err2str(rd_kafka_last_error()));
            st->failed = true;
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (!st->done) {
                on_message(st, batch[i]); /* the rest are dropped */
            }
            rd_kafka_message_destroy(batch[i]);
        }
        if (st->o->group != NULL && st->printed > printed_before &&
            consume_group_commit(&st->group) != RC_OK) {
            /* Printed; the offsets stay pending for the next try. */
        }
        if (n == 0) {
            fflush(stdout); /* idle: show what came so far */
        }
        if (ferror(stdout)) {
            st->done = true; /* nobody reads on (cli_finish_output()) */
        }
    }
}

int consume_run(const struct kclient_opts *k, const struct consume_opts *o)
{
    struct consume_state st = {.o = o};
    snprintf(st.what, sizeof st.what, "consume %s", o->topic);
    struct kclient_error e;
    st.rk = make_consumer(k, &st, &e);
    int rv = st.rk != NULL ? plan_partitions(&st, &e) : RC_IO;
    if (rv == RC_OK) {
        rv = o->group != NULL ? start_group(&st, &e) : start_simple(&st, &e);
    }
    if (rv != RC_OK) {
        kclient_error_print(st.what, &e);
        stop_consuming(&st);
        return CLI_EXIT_FAILED;
    }
    catch_signals();
    consume_loop(&st);
    if (o->group != NULL && consume_group_commit(&st.group) != RC_OK) {
        st.failed = true; /* printed records the group does not know of */
    }
    stop_consuming(&st);
    return st.failed ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}
