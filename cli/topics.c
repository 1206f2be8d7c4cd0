/* `cairn topics` (cli/topics.h). */
#include "cli/topics.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cluster.h"
#include "cli/json.h"
#include "cli/view.h"
#include "common/kafka_error.h"
#include "common/rc.h"

void topics_usage(FILE *out)
{
    fputs("  topics create NAME [--partitions N] [--replication-factor R]\n"
          "                [--config KEY=VALUE]...\n"
          "      Creates a topic; N and R default to the controller's\n"
          "      num.partitions and default.replication.factor.\n"
          "  topics delete NAME...\n"
          "  topics list\n"
          "      Topic names, one a line, sorted.\n"
          "  topics describe [--json] [NAME...]\n"
          "      The topics (all by default) and their partitions.\n",
          out);
}

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("topics: %s", msg);
    fputs(CLI_USAGE_LINE, stderr);
    topics_usage(stderr);
    return CLI_EXIT_USAGE;
}

static int config_option(struct topics_opts *o, const char *v)
{
    if (v[0] == '=' || strchr(v, '=') == NULL) {
        usage_error("--config: expected KEY=VALUE, got '%s'", v);
        return -1;
    }
    if (o->n_configs == TOPICS_CONFIGS_MAX) {
        usage_error("--config: more than %u", TOPICS_CONFIGS_MAX);
        return -1;
    }
    o->configs[o->n_configs++] = v;
    return 1;
}

static int int_option(const char *name, const char *v, int32_t *out)
{
    if (!cli_parse_int32(v, INT32_MIN, INT32_MAX, out)) {
        usage_error("%s: expected a number, got '%s'", name, v);
        return -1;
    }
    return 1;
}

/* Options of create. 1: consumed argv[*i] (and its value); 0: not one
 * of them; -1: a usage error (printed). */
static int create_option(struct topics_opts *o, int argc, char **argv,
                         int *i)
{
    static const char *const names[] = {"--partitions",
                                        "--replication-factor", "--config"};
    for (size_t k = 0; k < ARRAY_LEN(names); k++) {
        const char *v = NULL;
        int r = cli_option(argc, argv, i, names[k], &v);
        if (r < 0) {
            usage_error("%s needs a value", names[k]);
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

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int parse_subcommand(const char *sub, enum topics_cmd *cmd)
{
    static const char *const subs[] = {"create", "delete", "list",
                                       "describe"};
    static const enum topics_cmd cmds[] = {TOPICS_CREATE, TOPICS_DELETE,
                                           TOPICS_LIST, TOPICS_DESCRIBE};
    for (size_t k = 0; k < ARRAY_LEN(subs); k++) {
        if (strcmp(sub, subs[k]) == 0) {
            *cmd = cmds[k];
            return -1;
        }
    }
    return usage_error("unknown subcommand '%s' (create, delete, list, "
                       "describe)", sub);
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
        if (option && is_help(a)) {
            fputs(CLI_USAGE_LINE, stdout);
            topics_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (option && o->cmd == TOPICS_DESCRIBE &&
            strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        int r = option && o->cmd == TOPICS_CREATE
                    ? create_option(o, argc, argv, &i)
                    : 0;
        if (r < 0) {
            return CLI_EXIT_USAGE;
        }
        if (r == 0 && option) {
            return usage_error("%s: unknown option '%s'", argv[1], a);
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
    if (argc < 2) {
        return usage_error("missing subcommand (%s)",
                           "create, delete, list, describe");
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        fputs(CLI_USAGE_LINE, stdout);
        topics_usage(stdout);
        return CLI_EXIT_OK;
    }
    int rc = parse_subcommand(argv[1], &o->cmd);
    if (rc < 0) {
        rc = parse_rest(argc, argv, o);
    }
    if (rc >= 0) {
        return rc;
    }
    if (o->cmd == TOPICS_CREATE && o->n_names != 1) {
        return usage_error("create: expected one topic name, got %zu",
                           o->n_names);
    }
    if (o->cmd == TOPICS_DELETE && o->n_names == 0) {
        return usage_error("%s", "delete: expected topic names");
    }
    if (o->cmd == TOPICS_LIST && o->n_names != 0) {
        return usage_error("list: unexpected argument '%s'", o->names[0]);
    }
    return -1;
}

/* --- Create and delete --------------------------------------------------- */

/* The response's own error, which applies to every topic. */
static bool response_failed(const Cairn__Response *resp, const char *what)
{
    if (!resp->has_error_code || resp->error_code == KAFKA_ERROR_NONE) {
        return false;
    }
    int16_t code = (int16_t)resp->error_code;
    cli_error("%s: %s: %s", what, kafka_error_name(code),
              cli_kafka_error_text(code, resp->error_message));
    return true;
}

static int report_create(const char *name, const Cairn__Response *resp)
{
    char what[META_TOPIC_NAME_BYTES_MAX + 64];
    snprintf(what, sizeof what, "topics create %s", name);
    if (response_failed(resp, what)) {
        return CLI_EXIT_FAILED;
    }
    if (resp->body_case != CAIRN__RESPONSE__BODY_CREATE_TOPICS ||
        resp->create_topics->n_results != 1) {
        cli_error("%s: unexpected answer from the controller", what);
        return CLI_EXIT_FAILED;
    }
    const Cairn__CreateTopicResult *r = resp->create_topics->results[0];
    if (r->has_error_code && r->error_code != KAFKA_ERROR_NONE) {
        int16_t code = (int16_t)r->error_code;
        cli_error("%s: %s: %s", what, kafka_error_name(code),
                  cli_kafka_error_text(code, r->error_message));
        return CLI_EXIT_FAILED;
    }
    char id[23] = "?";
    struct meta_uuid u;
    if (r->has_topic_id && r->topic_id.len == sizeof u.b) {
        memcpy(u.b, r->topic_id.data, sizeof u.b);
        meta_uuid_format(&u, id);
    }
    printf("created topic %s id=%s\n", name, id);
    return CLI_EXIT_OK;
}

/* Each --config "key=value" as a ConfigRecord; keys are split copies. */
static int build_configs(const struct topics_opts *o,
                         Cairn__ConfigRecord *recs,
                         Cairn__ConfigRecord **ptrs)
{
    for (size_t k = 0; k < o->n_configs; k++) {
        cairn__config_record__init(&recs[k]);
        ptrs[k] = &recs[k];
        char *copy = strdup(o->configs[k]);
        if (copy == NULL) {
            return RC_NOMEM;
        }
        char *eq = strchr(copy, '=');
        ASSERT(eq != NULL); /* checked by config_option */
        *eq = '\0';
        recs[k].name = copy;
        recs[k].value = eq + 1;
    }
    return RC_OK;
}

static int run_create(struct ctl_client *cc, const struct topics_opts *o)
{
    const char *name = o->names[0];
    Cairn__ConfigRecord *recs = calloc(o->n_configs + 1, sizeof *recs);
    Cairn__ConfigRecord **ptrs = calloc(o->n_configs + 1, sizeof *ptrs);
    int rv = recs != NULL && ptrs != NULL ? build_configs(o, recs, ptrs)
                                          : RC_NOMEM;
    Cairn__CreatableTopic topic = CAIRN__CREATABLE_TOPIC__INIT;
    topic.name = (char *)(uintptr_t)name;
    topic.has_num_partitions = topic.has_replication_factor = true;
    topic.num_partitions = o->partitions;
    topic.replication_factor = o->replication_factor;
    topic.n_configs = o->n_configs;
    topic.configs = ptrs;
    Cairn__CreatableTopic *topics[1] = {&topic};
    Cairn__CreateTopicsRequest ct = CAIRN__CREATE_TOPICS_REQUEST__INIT;
    ct.n_topics = 1;
    ct.topics = topics;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_CREATE_TOPICS;
    req.create_topics = &ct;
    Cairn__Response *resp = NULL;
    char err[CTL_CLIENT_ERROR_BYTES * 4] = "out of memory";
    if (rv == RC_OK) {
        rv = ctl_client_call_active(cc, &req, &resp, err, sizeof err);
    }
    for (size_t k = 0; recs != NULL && k < o->n_configs; k++) {
        free(recs[k].name); /* NULL past a failed strdup */
    }
    free(recs);
    free(ptrs);
    if (rv != RC_OK) {
        cli_error("topics create %s: %s", name, err);
        return CLI_EXIT_FAILED;
    }
    int rc = report_create(name, resp);
    cairn__response__free_unpacked(resp, NULL);
    return rc;
}

static int report_delete(const struct topics_opts *o,
                         const Cairn__Response *resp)
{
    if (response_failed(resp, "topics delete")) {
        return CLI_EXIT_FAILED;
    }
    if (resp->body_case != CAIRN__RESPONSE__BODY_DELETE_TOPICS ||
        resp->delete_topics->n_results != o->n_names) {
        cli_error("topics delete: unexpected answer from the controller");
        return CLI_EXIT_FAILED;
    }
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < o->n_names; i++) {
        const Cairn__DeleteTopicResult *r = resp->delete_topics->results[i];
        const char *name = r->name != NULL ? r->name : o->names[i];
        if (r->has_error_code && r->error_code != KAFKA_ERROR_NONE) {
            int16_t code = (int16_t)r->error_code;
            cli_error("topics delete %s: %s: %s", name,
                      kafka_error_name(code),
                      cli_kafka_error_text(code, NULL));
            rc = CLI_EXIT_FAILED;
        } else {
            printf("deleted topic %s\n", name);
        }
    }
    return rc;
}

static int run_delete(struct ctl_client *cc, const struct topics_opts *o)
{
    Cairn__DeleteTopicsRequest dt = CAIRN__DELETE_TOPICS_REQUEST__INIT;
    dt.n_names = o->n_names;
    dt.names = o->names;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_DELETE_TOPICS;
    req.delete_topics = &dt;
    Cairn__Response *resp = NULL;
    char err[CTL_CLIENT_ERROR_BYTES * 4];
    if (ctl_client_call_active(cc, &req, &resp, err, sizeof err) != RC_OK) {
        cli_error("topics delete: %s", err);
        return CLI_EXIT_FAILED;
    }
    int rc = report_delete(o, resp);
    cairn__response__free_unpacked(resp, NULL);
    return rc;
}

/* --- List and describe --------------------------------------------------- */

/* Fills v from the controllers (v is then the caller's to free). Returns
 * -1 on success, else the exit code (message printed). */
static int read_image(struct ctl_client *cc, struct cluster_view *v,
                      const char *what)
{
    int rv = cluster_describe(cc, v);
    if (rv == RC_NOT_FOUND) {
        cli_error("%s: no controller sent cluster metadata", what);
        for (size_t i = 0; i < v->n_ctls; i++) {
            fprintf(stderr, "  controller %" PRId32 " at %s: %s\n",
                    v->ctls[i].id, v->ctls[i].address, v->ctls[i].error);
        }
        return CLI_EXIT_FAILED;
    }
    if (rv != RC_OK) {
        cli_error("%s: %s", what, rc_str(rv));
        return CLI_EXIT_FAILED;
    }
    const struct cluster_controller *c = &v->ctls[v->source];
    if (!c->active) {
        cli_error("warning: no active controller answered; showing "
                  "controller %" PRId32 "'s metadata at offset %" PRId64,
                  c->id, v->image.offset);
    }
    return -1;
}

static int run_list(struct ctl_client *cc)
{
    struct cluster_view v;
    int rc = read_image(cc, &v, "topics list");
    const struct meta_topic **topics = NULL;
    size_t n = 0;
    if (rc < 0 && view_topics_sorted(&v.image, &topics, &n) != RC_OK) {
        cli_error("topics list: out of memory");
        rc = CLI_EXIT_FAILED;
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++) {
            char name[META_TOPIC_NAME_BYTES_MAX + 1];
            view_printable(topics[i]->name, name, sizeof name);
            printf("%s\n", name);
        }
        rc = CLI_EXIT_OK;
    }
    free(topics);
    cluster_view_free(&v);
    return rc;
}

/* The named topics in the order given (every topic, sorted, when no name
 * is given); names that do not exist are reported and set *missing. */
static int select_topics(const struct meta_image *img,
                         const struct topics_opts *o,
                         const struct meta_topic ***out, size_t *n,
                         bool *missing)
{
    *missing = false;
    if (o->n_names == 0) {
        return view_topics_sorted(img, out, n);
    }
    const struct meta_topic **ts = calloc(o->n_names, sizeof *ts);
    if (ts == NULL) {
        return RC_NOMEM;
    }
    *n = 0;
    for (size_t i = 0; i < o->n_names; i++) {
        const struct meta_topic *t = meta_image_topic(img, o->names[i]);
        if (t == NULL) {
            cli_error("topics describe %s: %s: %s", o->names[i],
                      kafka_error_name(KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION),
                      "no such topic");
            *missing = true;
        } else {
            ts[(*n)++] = t;
        }
    }
    *out = ts;
    return RC_OK;
}

static void describe_json(const struct cluster_view *v,
                          const struct meta_topic *const *topics, size_t n)
{
    struct json j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "metadata_offset");
    json_int(&j, v->image.offset);
    json_key(&j, "topics");
    view_topics_json(&j, topics, n);
    json_object_end(&j);
    json_finish(&j);
}

static int run_describe(struct ctl_client *cc, const struct topics_opts *o)
{
    struct cluster_view v;
    int rc = read_image(cc, &v, "topics describe");
    const struct meta_topic **topics = NULL;
    size_t n = 0;
    bool missing = false;
    if (rc < 0 && select_topics(&v.image, o, &topics, &n, &missing) !=
                      RC_OK) {
        cli_error("topics describe: out of memory");
        rc = CLI_EXIT_FAILED;
    }
    if (rc < 0 && o->json) {
        describe_json(&v, topics, n);
    } else if (rc < 0) {
        view_topics_text(stdout, topics, n);
        fputc('\n', stdout);
        view_partitions_text(stdout, topics, n);
    }
    if (rc < 0) {
        rc = missing ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    }
    free(topics);
    cluster_view_free(&v);
    return rc;
}

int topics_run(struct ctl_client *cc, const struct topics_opts *o)
{
    switch (o->cmd) {
    case TOPICS_CREATE:
        return run_create(cc, o);
    case TOPICS_DELETE:
        return run_delete(cc, o);
    case TOPICS_LIST:
        return run_list(cc);
    case TOPICS_DESCRIBE:
        return run_describe(cc, o);
    }
    ASSERT(false);
    return CLI_EXIT_FAILED;
}
