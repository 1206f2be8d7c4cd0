/* `cairn topics` (cli/cmd/topics/topics.h). */
#include "cli/cmd/topics/topics.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "cli/cmd/topics/topics_alter.h"
#include "cli/cmd/topics/topics_describe.h"
#include "cli/cmd/status/view.h"
#include "common/rc.h"

void topics_usage(FILE *out)
{
    fputs("  topics create NAME [--partitions N] [--replication-factor R]\n"
          "                [--config KEY=VALUE]...\n"
          "      Creates a topic; N and R default to the cluster's\n"
          "      num.partitions and default.replication.factor.\n"
          "  topics alter NAME --partitions N\n"
          "      Grows the topic to N partitions (CreatePartitions); keyed\n"
          "      records then hash over N, so a key may change partition.\n"
          "  topics delete NAME...\n"
          "  topics list\n"
          "      Topic names, one a line, sorted.\n"
          "  topics describe [--json] [NAME...]\n"
          "      The topics (all by default), the configs they set, and\n"
          "      their partitions.\n"
          "  topics delete-records NAME --partition P --before OFFSET\n"
          "      Deletes the partition's records below OFFSET (-1: its\n"
          "      high watermark): its log start offset moves there, and\n"
          "      consumers from the beginning start there (DeleteRecords).\n",
          out);
}

static const struct opts_cmd topics_cmd = {"topics", topics_usage};

static int config_option(struct topics_opts *o, const char *v)
{
    if (!opts_is_key_value(v)) {
        opts_usage_error(&topics_cmd,
                         "--config: expected KEY=VALUE, got "
                         "'%s'",
                         v);
        return -1;
    }
    if (o->n_configs == TOPICS_CONFIGS_MAX) {
        opts_usage_error(&topics_cmd, "--config: more than %u",
                         TOPICS_CONFIGS_MAX);
        return -1;
    }
    o->configs[o->n_configs++] = v;
    return 1;
}

static int int_option(const char *name, const char *v, int32_t *out)
{
    if (!cli_parse_int32(v, INT32_MIN, INT32_MAX, out)) {
        opts_usage_error(&topics_cmd, "%s: expected a number, got '%s'", name,
                         v);
        return -1;
    }
    return 1;
}

/* Options of create. 1: consumed argv[*i] (and its value); 0: not one
 * of them; -1: a usage error (printed). */
static int create_option(struct topics_opts *o, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--partitions",
                                        "--replication-factor", "--config"};
    for (size_t k = 0; k < ARRAY_LEN(names); k++) {
        const char *v = NULL;
        int r = cli_option(argc, argv, i, names[k], &v);
        if (r < 0) {
            opts_usage_error(&topics_cmd, "%s needs a value", names[k]);
            return -1;
        }
        if (r == 0) {
            continue;
        }
        switch (k) {
        case 0:
            return int_option(names[k], v, &o->partitions);
        case 1:
            return int_option(names[k], v, &o->replication_factor);
        default:
            return config_option(o, v);
        }
    }
    return 0;
}

static int parse_subcommand(const char *sub, enum topics_cmd *cmd)
{
    static const char *const subs[] = {"create",   "delete",         "list",
                                       "describe", "delete-records", "alter"};
    static const enum topics_cmd cmds[] = {
        TOPICS_CREATE,   TOPICS_DELETE,         TOPICS_LIST,
        TOPICS_DESCRIBE, TOPICS_DELETE_RECORDS, TOPICS_ALTER};
    for (size_t k = 0; k < ARRAY_LEN(subs); k++) {
        if (strcmp(sub, subs[k]) == 0) {
            *cmd = cmds[k];
            return -1;
        }
    }
    return opts_usage_error(&topics_cmd,
                            "unknown subcommand '%s' (create, "
                            "delete, list, describe, delete-records, alter)",
                            sub);
}

/* Options of delete-records, as create_option(). */
static int delete_records_option(struct topics_opts *o, int argc, char **argv,
                                 int *i)
{
    const char *v = NULL;
    int r = cli_option(argc, argv, i, "--partition", &v);
    if (r > 0) {
        if (!cli_parse_int32(v, 0, INT32_MAX, &o->partition)) {
            opts_usage_error(&topics_cmd,
                             "--partition: expected a "
                             "partition number, got '%s'",
                             v);
            return -1;
        }
        return 1;
    }
    if (r == 0) {
        r = cli_option(argc, argv, i, "--before", &v);
    }
    if (r > 0) {
        if (!cli_parse_int64(v, -1, INT64_MAX, &o->before)) {
            opts_usage_error(&topics_cmd,
                             "--before: expected an offset "
                             "(or -1 for the high watermark), got '%s'",
                             v);
            return -1;
        }
        return 1;
    }
    if (r < 0) {
        opts_usage_error(&topics_cmd, "%s needs a value", argv[*i]);
        return -1;
    }
    return 0;
}

/* Options of alter, as create_option(). */
static int alter_option(struct topics_opts *o, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int r = cli_option(argc, argv, i, "--partitions", &v);
    if (r < 0) {
        opts_usage_error(&topics_cmd, "%s needs a value", "--partitions");
        return -1;
    }
    return r == 0 ? 0 : int_option("--partitions", v, &o->partitions);
}

/* Options and names after the subcommand; names move to argv[2..]. */
static int parse_rest(int argc, char **argv, struct topics_opts *o)
{
    bool options_done = false;
    int n_pos = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool option = !options_done && a[0] == '-' && a[1] != '\0';
        if (option && strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (option && opts_is_help(a)) {
            return opts_help(&topics_cmd);
        }
        if (option && o->cmd == TOPICS_DESCRIBE && strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        int r = option && o->cmd == TOPICS_ALTER
                    ? alter_option(o, argc, argv, &i)
                : option && o->cmd == TOPICS_CREATE
                    ? create_option(o, argc, argv, &i)
                : option && o->cmd == TOPICS_DELETE_RECORDS
                    ? delete_records_option(o, argc, argv, &i)
                    : 0;
        if (r < 0) {
            return CLI_EXIT_USAGE;
        }
        if (r == 0 && option) {
            return opts_usage_error(&topics_cmd, "%s: unknown option '%s'",
                                    argv[1], a);
        }
        if (r == 0) {
            argv[2 + n_pos++] = argv[i]; /* n_pos + 2 <= i: no clobbering */
        }
    }
    o->names = argv + 2;
    o->n_names = (size_t)n_pos;
    return -1;
}

int topics_parse(int argc, char **argv, struct topics_opts *o)
{
    memset(o, 0, sizeof *o);
    o->partitions = -1;
    o->replication_factor = -1;
    o->partition = -1;
    o->before = INT64_MIN;
    if (argc < 2) {
        return opts_usage_error(&topics_cmd, "missing subcommand (%s)",
                                "create, delete, list, describe, alter");
    }
    if (opts_is_help(argv[1])) {
        return opts_help(&topics_cmd);
    }
    int rc = parse_subcommand(argv[1], &o->cmd);
    if (rc < 0) {
        rc = parse_rest(argc, argv, o);
    }
    if (rc >= 0) {
        return rc;
    }
    if (o->cmd == TOPICS_CREATE && o->n_names != 1) {
        return opts_usage_error(&topics_cmd,
                                "create: expected one topic "
                                "name, got %zu",
                                o->n_names);
    }
    if (o->cmd == TOPICS_ALTER && (o->n_names != 1 || o->partitions < 0)) {
        return opts_usage_error(&topics_cmd, "%s",
                                "alter: expected one "
                                "topic name and --partitions N");
    }
    if (o->cmd == TOPICS_DELETE && o->n_names == 0) {
        return opts_usage_error(&topics_cmd, "%s",
                                "delete: expected topic names");
    }
    if (o->cmd == TOPICS_DELETE_RECORDS &&
        (o->n_names != 1 || o->partition < 0 || o->before == INT64_MIN)) {
        return opts_usage_error(&topics_cmd, "%s",
                                "delete-records: "
                                "expected one topic name, --partition and "
                                "--before");
    }
    if (o->cmd == TOPICS_LIST && o->n_names != 0) {
        return opts_usage_error(&topics_cmd,
                                "list: unexpected argument "
                                "'%s'",
                                o->names[0]);
    }
    return -1;
}

/* --- Create and delete --------------------------------------------------- */

static int run_create(rd_kafka_t *rk, const struct topics_opts *o)
{
    const char *name = o->names[0];
    const struct kclient_topic t = {
        .name = name,
        .partitions = o->partitions,
        .replication_factor = o->replication_factor,
        .configs = o->configs,
        .n_configs = o->n_configs,
    };
    struct kclient_error e;
    char what[META_TOPIC_NAME_BYTES_MAX + 32];
    snprintf(what, sizeof what, "topics create %s", name);
    if (kclient_create_topic(rk, &t, &e) != RC_OK) {
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    printf("created topic %s\n", name);
    /* Done once the brokers serve it, so a script can go on using it. */
    if (kclient_wait_topic(rk, name, true /* exists */,
                           o->partitions > 0 ? o->partitions : 0,
                           KCLIENT_TIMEOUT_MS, &e) != RC_OK) {
        snprintf(what, sizeof what, "warning: topics create %s", name);
        kclient_error_print(what, &e);
    }
    return CLI_EXIT_OK;
}

/* Each topic's result of a DeleteTopics event, printed; each deleted
 * topic is waited for until the brokers stop listing it. */
static int report_delete_cb(rd_kafka_t *rk, rd_kafka_event_t *ev,
                            const void *arg)
{
    (void)arg;
    size_t n = 0;
    const rd_kafka_topic_result_t **rs = rd_kafka_DeleteTopics_result_topics(
        rd_kafka_event_DeleteTopics_result(ev), &n);
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        const char *name = rd_kafka_topic_result_name(rs[i]);
        rd_kafka_resp_err_t err = rd_kafka_topic_result_error(rs[i]);
        char what[META_TOPIC_NAME_BYTES_MAX + 32];
        struct kclient_error e;
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            printf("deleted topic %s\n", name);
            if (kclient_wait_topic(rk, name, false /* exists */, 0,
                                   KCLIENT_TIMEOUT_MS, &e) != RC_OK) {
                snprintf(what, sizeof what, "warning: topics delete %s",
                         name);
                kclient_error_print(what, &e);
            }
            continue;
        }
        snprintf(what, sizeof what, "topics delete %s", name);
        kclient_error_set(&e, err, rd_kafka_topic_result_error_string(rs[i]));
        kclient_error_print(what, &e);
        rc = CLI_EXIT_FAILED;
    }
    return rc;
}

/* DeleteTopics for every name (arg: the topics_opts). */
static int send_delete_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                          rd_kafka_queue_t *q, const void *arg,
                          struct kclient_error *e)
{
    const struct topics_opts *o = arg;
    rd_kafka_DeleteTopic_t **dts = calloc(o->n_names, sizeof *dts);
    if (dts == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    for (size_t i = 0; i < o->n_names; i++) {
        dts[i] = rd_kafka_DeleteTopic_new(o->names[i]);
    }
    rd_kafka_DeleteTopics(rk, dts, o->n_names, opts, q);
    rd_kafka_DeleteTopic_destroy_array(dts, o->n_names);
    free(dts);
    return RC_OK;
}

static int run_delete(rd_kafka_t *rk, const struct topics_opts *o)
{
    return kclient_admin_run(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS,
                             "topics delete", send_delete_cb,
                             report_delete_cb, o);
}

/* --- DeleteRecords ------------------------------------------------------- */

/* OFFSET_OUT_OF_RANGE: Kafka's answer to an offset past the high
 * watermark, said with the HW itself (ListOffsets), or with Kafka's
 * description when that query fails too. */
static void print_past_hw(rd_kafka_t *rk, const struct topics_opts *o,
                          const char *what, rd_kafka_resp_err_t err)
{
    int64_t low = -1;
    int64_t high = -1;
    rd_kafka_resp_err_t qerr = rd_kafka_query_watermark_offsets(
        rk, o->names[0], o->partition, &low, &high, KCLIENT_TIMEOUT_MS);
    if (qerr != RD_KAFKA_RESP_ERR_NO_ERROR || o->before <= high) {
        struct kclient_error e;
        kclient_error_set(&e, err, NULL);
        kclient_error_print(what, &e);
        return;
    }
    cli_error("%s: %s: offset %" PRId64 " is past partition %" PRId32
              "'s high watermark %" PRId64 " (--before %" PRId64
              " or -1 deletes every record it holds)",
              what, kclient_err_name(err), o->before, o->partition, high,
              high);
}

static int report_delete_records_cb(rd_kafka_t *rk, rd_kafka_event_t *ev,
                                    const void *arg)
{
    const struct topics_opts *o = arg;
    const rd_kafka_topic_partition_list_t *l =
        rd_kafka_DeleteRecords_result_offsets(
            rd_kafka_event_DeleteRecords_result(ev));
    if (l == NULL || l->cnt != 1) {
        cli_error("topics delete-records %s: no result", o->names[0]);
        return CLI_EXIT_FAILED;
    }
    const rd_kafka_topic_partition_t *p = &l->elems[0];
    if (p->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        char what[META_TOPIC_NAME_BYTES_MAX + 64];
        struct kclient_error e;
        snprintf(what, sizeof what, "topics delete-records %s-%d",
                 o->names[0], (int)o->partition);
        if (p->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
            print_past_hw(rk, o, what, p->err);
            return CLI_EXIT_FAILED;
        }
        kclient_error_set(&e, p->err, NULL);
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    printf("%s-%d starts at offset %" PRId64 "\n", o->names[0],
           (int)o->partition, p->offset);
    return CLI_EXIT_OK;
}

static int send_delete_records_cb(rd_kafka_t *rk,
                                  rd_kafka_AdminOptions_t *opts,
                                  rd_kafka_queue_t *q, const void *arg,
                                  struct kclient_error *e)
{
    const struct topics_opts *o = arg;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    if (l == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    rd_kafka_topic_partition_list_add(l, o->names[0], o->partition)->offset =
        o->before == -1 ? RD_KAFKA_OFFSET_END : o->before;
    rd_kafka_DeleteRecords_t *dr = rd_kafka_DeleteRecords_new(l);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_DeleteRecords(rk, &dr, 1, opts, q);
    rd_kafka_DeleteRecords_destroy(dr);
    return RC_OK;
}

static int run_delete_records(rd_kafka_t *rk, const struct topics_opts *o)
{
    return kclient_admin_run(rk, RD_KAFKA_ADMIN_OP_DELETERECORDS,
                             "topics delete-records", send_delete_records_cb,
                             report_delete_records_cb, o);
}

/* --- List ---------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int run_list(rd_kafka_t *rk)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1 /* all topics */, NULL,
                                                &md, KCLIENT_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        struct kclient_error e;
        kclient_error_set(&e, err, NULL);
        kclient_error_print("topics list", &e);
        return CLI_EXIT_FAILED;
    }
    size_t n = (size_t)md->topic_cnt;
    const char **names = calloc(n + 1, sizeof *names);
    if (names == NULL) {
        rd_kafka_metadata_destroy(md);
        cli_error("topics list: out of memory");
        return CLI_EXIT_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = md->topics[i].topic;
    }
    qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        char shown[META_TOPIC_NAME_BYTES_MAX + 1];
        cli_printable(names[i], shown, sizeof shown);
        printf("%s\n", shown);
    }
    free(names);
    rd_kafka_metadata_destroy(md);
    return CLI_EXIT_OK;
}

/* --- Run ----------------------------------------------------------------- */

int topics_run(const struct kclient_opts *k, const struct topics_opts *o)
{
    struct kclient_error e;
    rd_kafka_t *rk = kclient_admin_new(k, &e);
    if (rk == NULL) {
        kclient_error_print("topics", &e);
        return CLI_EXIT_FAILED;
    }
    int rc = CLI_EXIT_FAILED;
    switch (o->cmd) {
    case TOPICS_CREATE:
        rc = run_create(rk, o);
        break;
    case TOPICS_DELETE:
        rc = run_delete(rk, o);
        break;
    case TOPICS_LIST:
        rc = run_list(rk);
        break;
    case TOPICS_DESCRIBE:
        rc = topics_describe_run(rk, o);
        break;
    case TOPICS_DELETE_RECORDS:
        rc = run_delete_records(rk, o);
        break;
    case TOPICS_ALTER:
        rc = topics_alter_run(rk, o);
        break;
    }
    rd_kafka_destroy(rk);
    return rc;
}
