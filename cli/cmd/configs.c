/* `cairn configs` (cli/cmd/configs.h). */
#include "cli/cmd/configs.h"

#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/limits.h"
#include "common/rc.h"

/* Non-flexible versions: the plain client writes request header v1. */
#define CONFIGS__DESCRIBE_VERSION 1
#define CONFIGS__ALTER_VERSION 0

void configs_usage(FILE *out)
{
    fputs("  configs get topic TOPIC | broker ID|default [--all]\n"
          "      The dynamic configs of a topic, of one broker or of the\n"
          "      cluster-wide broker default, one key=value a line with\n"
          "      its source; --all adds every other config and its value.\n"
          "  configs set topic TOPIC | broker ID|default [KEY=VALUE]...\n"
          "          [--delete KEY]...\n"
          "      Sets and deletes dynamic configs without a restart\n"
          "      (IncrementalAlterConfigs); a deleted key falls back to the\n"
          "      broker's, then Kafka's, default.\n",
          out);
}

static const struct opts_cmd configs_cmd = {"configs", configs_usage};

static int parse_resource(char **argv, struct configs_opts *o)
{
    if (strcmp(argv[0], "topic") == 0) {
        o->resource_type = 2;
        o->name = argv[1];
        return o->name[0] == '\0'
                   ? opts_usage_error(&configs_cmd, "empty topic name")
                   : -1;
    }
    if (strcmp(argv[0], "broker") != 0) {
        return opts_usage_error(&configs_cmd,
                                "expected topic or broker, "
                                "not '%s'",
                                argv[0]);
    }
    o->resource_type = 4;
    o->name = strcmp(argv[1], "default") == 0 ? "" : argv[1];
    if (o->name[0] != '\0' &&
        strspn(o->name, "0123456789") != strlen(o->name)) {
        return opts_usage_error(&configs_cmd,
                                "broker: expected an id or "
                                "'default', not '%s'",
                                argv[1]);
    }
    return -1;
}

int configs_parse(int argc, char **argv, struct configs_opts *o)
{
    memset(o, 0, sizeof *o);
    if (argc >= 2 && opts_is_help(argv[1])) {
        return opts_help(&configs_cmd);
    }
    if (argc < 2 ||
        (strcmp(argv[1], "get") != 0 && strcmp(argv[1], "set") != 0)) {
        return opts_usage_error(&configs_cmd, "expected get or set");
    }
    o->set = strcmp(argv[1], "set") == 0;
    const char *dels[CONFIGS_OPS_MAX];
    struct opts_list del = {dels, 0, CONFIGS_OPS_MAX};
    const struct opts_spec get_specs[] = {
        {"--all", OPTS_FLAG, &o->all, 0, 0}};
    const struct opts_spec set_specs[] = {
        {"--delete", OPTS_LIST, &del, 0, 0}};
    int n_pos = 0;
    int rc = opts_parse(&configs_cmd, argc, argv, 2,
                        o->set ? set_specs : get_specs, 1, &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos < 2) {
        return opts_usage_error(&configs_cmd, "expected topic TOPIC or "
                                              "broker ID|default");
    }
    rc = parse_resource(argv + 2, o);
    if (rc >= 0) {
        return rc;
    }
    if (!o->set && n_pos > 2) {
        return opts_usage_error(&configs_cmd, "get: unexpected '%s'",
                                argv[4]);
    }
    for (int i = 4; i < 2 + n_pos; i++) {
        if (!opts_is_key_value(argv[i]) || o->n_ops == CONFIGS_OPS_MAX) {
            return opts_usage_error(&configs_cmd,
                                    "expected KEY=VALUE, not "
                                    "'%s'",
                                    argv[i]);
        }
        o->ops[o->n_ops++] = argv[i];
    }
    memcpy(o->deletes, dels, del.n * sizeof *dels);
    o->n_deletes = del.n;
    if (o->set && o->n_ops + o->n_deletes == 0) {
        return opts_usage_error(&configs_cmd, "set: nothing to change");
    }
    return -1;
}

/* --- The broker to ask --------------------------------------------------- */

/* host:port of broker id (any broker when id is -1), from metadata. */
static int find_broker(const struct kclient_opts *k, int32_t id, char *host,
                       size_t cap, int32_t *port, struct kclient_error *e)
{
    rd_kafka_t *rk = kclient_admin_new(k, e);
    if (rk == NULL) {
        return RC_IO;
    }
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err =
        rd_kafka_metadata(rk, 0, NULL, &md, KCLIENT_TIMEOUT_MS);
    int rv = RC_NOT_FOUND;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        rv = RC_IO;
    }
    for (int i = 0; md != NULL && i < md->broker_cnt; i++) {
        if (id < 0 || md->brokers[i].id == id) {
            snprintf(host, cap, "%s", md->brokers[i].host);
            *port = md->brokers[i].port;
            rv = RC_OK;
            break;
        }
    }
    if (rv == RC_NOT_FOUND) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE,
                          "no such broker in the cluster's metadata");
    }
    if (md != NULL) {
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_destroy(rk);
    return rv;
}

/* One request to the broker that answers for o's resource. */
static int call(const struct kclient_opts *k, const struct configs_opts *o,
                int16_t api, int16_t version, const struct writer *w,
                uint8_t **body, size_t *len, struct kclient_error *e)
{
    char host[256];
    int32_t port = 0;
    int32_t id = o->resource_type == 4 && o->name[0] != '\0'
                     ? (int32_t)atoi(o->name)
                     : -1;
    int rv = find_broker(k, id, host, sizeof host, &port, e);
    if (rv != RC_OK) {
        return rv;
    }
    struct kafka_client kc;
    rv = kafka_client_open(&kc, host, port, CLI_KAFKA_CLIENT_ID,
                           KCLIENT_TIMEOUT_MS);
    if (rv == RC_OK) {
        rv = kafka_client_call(&kc, api, version, w, body, len);
    }
    if (rv != RC_OK) {
        char text[KCLIENT_ERROR_BYTES];
        snprintf(text, sizeof text, "%s:%d: %s", host, (int)port, kc.error);
        kclient_error_set(e, RD_KAFKA_RESP_ERR__TRANSPORT, text);
        rv = RC_IO;
    }
    kafka_client_close(&kc);
    return rv;
}

static const char *source_name(int8_t s)
{
    static const char *const names[] = {"UNKNOWN",
                                        "DYNAMIC_TOPIC_CONFIG",
                                        "DYNAMIC_BROKER_CONFIG",
                                        "DYNAMIC_DEFAULT_BROKER_CONFIG",
                                        "STATIC_BROKER_CONFIG",
                                        "DEFAULT_CONFIG"};
    return s >= 0 && s <= 5 ? names[s] : "UNKNOWN";
}

static void print_slice(struct slice s)
{
    if (slice_is_null(s)) {
        fputs("(null)", stdout);
    } else {
        fwrite(s.ptr, 1, s.len, stdout);
    }
}

/* --- get ----------------------------------------------------------------- */

static int print_described(const struct configs_opts *o, const uint8_t *body,
                           size_t len)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body, len);
    struct kafka_DescribeConfigsResponse resp;
    int rv = kafka_describe_configs_response_decode(
        &r, CONFIGS__DESCRIBE_VERSION, &a, &resp);
    int rc = CLI_EXIT_OK;
    if (rv != RC_OK || resp.ResultsCnt != 1) {
        cli_error("configs get: a malformed answer");
        rc = CLI_EXIT_FAILED;
    } else if (resp.Results[0].ErrorCode != 0) {
        cli_error("configs get: %s",
                  kafka_error_name(resp.Results[0].ErrorCode));
        rc = CLI_EXIT_FAILED;
    }
    for (int32_t i = 0; rc == CLI_EXIT_OK && i < resp.Results[0].ConfigsCnt;
         i++) {
        const struct kafka_DescribeConfigsResourceResult *c =
            &resp.Results[0].Configs[i];
        bool dynamic = c->ConfigSource >= 1 && c->ConfigSource <= 3;
        if (!o->all && !dynamic) {
            continue;
        }
        print_slice(c->Name);
        putchar('=');
        print_slice(c->Value);
        printf(" (%s)\n", source_name(c->ConfigSource));
    }
    arena_free(&a);
    return rc;
}

static int run_get(const struct kclient_opts *k, const struct configs_opts *o)
{
    const struct kafka_DescribeConfigsResource res = {
        o->resource_type, slice_from_str(o->name), NULL, -1};
    const struct kafka_DescribeConfigsRequest rq = {&res, 1, false, false};
    struct writer w;
    writer_init(&w, KAFKA_STRING_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    struct kclient_error e;
    int rc = CLI_EXIT_FAILED;
    if (kafka_describe_configs_request_encode(&w, CONFIGS__DESCRIBE_VERSION,
                                              &rq) != RC_OK) {
        cli_error("configs get: the name is too long");
    } else if (call(k, o, KAFKA_API_DESCRIBE_CONFIGS,
                    CONFIGS__DESCRIBE_VERSION, &w, &body, &len,
                    &e) != RC_OK) {
        kclient_error_print("configs get", &e);
    } else {
        rc = print_described(o, body, len);
    }
    free(body);
    writer_free(&w);
    return cli_finish_output(rc);
}

/* --- set ----------------------------------------------------------------- */

static int print_altered(const struct configs_opts *o, const uint8_t *body,
                         size_t len)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body, len);
    struct kafka_AlterConfigsResponse resp;
    int rv = kafka_incremental_alter_configs_response_decode(
        &r, CONFIGS__ALTER_VERSION, &a, &resp);
    int rc = CLI_EXIT_OK;
    if (rv != RC_OK || resp.ResponsesCnt != 1) {
        cli_error("configs set: a malformed answer");
        rc = CLI_EXIT_FAILED;
    } else if (resp.Responses[0].ErrorCode != 0) {
        struct slice m = resp.Responses[0].ErrorMessage;
        cli_error("configs set: %s: %.*s",
                  kafka_error_name(resp.Responses[0].ErrorCode),
                  slice_is_null(m) ? 0 : (int)m.len,
                  slice_is_null(m) ? "" : (const char *)m.ptr);
        rc = CLI_EXIT_FAILED;
    } else {
        printf("%s %s: %zu set, %zu deleted\n",
               o->resource_type == 2 ? "topic" : "broker",
               o->name[0] != '\0' ? o->name : "default", o->n_ops,
               o->n_deletes);
    }
    arena_free(&a);
    return rc;
}

static int run_set(const struct kclient_opts *k, const struct configs_opts *o)
{
    struct kafka_AlterableConfig cs[2 * CONFIGS_OPS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < o->n_ops; i++) {
        const char *eq = strchr(o->ops[i], '=');
        cs[n++] = (struct kafka_AlterableConfig){
            (struct slice){(const uint8_t *)o->ops[i],
                           (size_t)(eq - o->ops[i])},
            KAFKA_CONFIG_OP_SET, slice_from_str(eq + 1)};
    }
    for (size_t i = 0; i < o->n_deletes; i++) {
        cs[n++] = (struct kafka_AlterableConfig){
            slice_from_str(o->deletes[i]), KAFKA_CONFIG_OP_DELETE,
            slice_null()};
    }
    const struct kafka_AlterConfigsResource res = {
        o->resource_type, slice_from_str(o->name), cs, (int32_t)n};
    const struct kafka_IncrementalAlterConfigsRequest rq = {&res, 1, false};
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    struct kclient_error e;
    int rc = CLI_EXIT_FAILED;
    if (kafka_incremental_alter_configs_request_encode(
            &w, CONFIGS__ALTER_VERSION, &rq) != RC_OK) {
        cli_error("configs set: the request is too large");
    } else if (call(k, o, KAFKA_API_INCREMENTAL_ALTER_CONFIGS,
                    CONFIGS__ALTER_VERSION, &w, &body, &len, &e) != RC_OK) {
        kclient_error_print("configs set", &e);
    } else {
        rc = print_altered(o, body, len);
    }
    free(body);
    writer_free(&w);
    return cli_finish_output(rc);
}

int configs_run(const struct kclient_opts *k, const struct configs_opts *o)
{
    return o->set ? run_set(k, o) : run_get(k, o);
}
