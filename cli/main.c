/* cairn: the command-line client of a Cairn cluster.
 *     cairn [--bootstrap-servers HOST:PORT,...] [--controllers LIST]
 *           [-X KEY=VALUE]... COMMAND [ARGS]
 * Parses the global options, then hands the command its arguments.
 * `status` talks to the controllers through their own RPC (a blocking
 * client, cli/client/ctl_client.c), then asks the brokers for offsets over the
 * Kafka protocol (cli/client/health.c over common/kafka/kafka_client.c); the
 * Kafka commands (topics, groups, produce, consume, bench) talk to the
 * brokers with librdkafka (cli/client/kclient.h); `dump-log` reads a
 * broker's files offline and talks to nothing.
 * Exit status: 0 success, 1 the operation failed, 2 a usage error. One
 * thread of ours; librdkafka adds its own behind its handles. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd/bench.h"
#include "cli/client/bootstrap.h"
#include "cli/util/cli.h"
#include "cli/cmd/consume/consume.h"
#include "cli/cmd/dump_log/dump_log.h"
#include "cli/client/ctl_client.h"
#include "cli/cmd/elect.h"
#include "cli/cmd/events.h"
#include "cli/cmd/groups/groups.h"
#include "cli/client/kclient.h"
#include "cli/util/opts.h"
#include "cli/cmd/size/size.h"
#include "cli/cmd/produce.h"
#include "cli/cmd/reassign/reassign.h"
#include "cli/cmd/status/status.h"
#include "cli/cmd/topics/topics.h"
#include "cli/cmd/configs.h"
#include "cli/cmd/web/web.h"
#include "common/rc.h"
#include "common/trace.h"

/* The local cluster's controllers (deploy/cluster.sh). */
#define CLI__CONTROLLERS_DEFAULT                                             \
    "101@127.0.0.1:19101,102@127.0.0.1:19102,103@127.0.0.1:19103"

/* deploy/cluster.sh's ports from its base (CAIRN_BASE_PORT): brokers on
 * base+91..93, controller RPC on base+101..103. */
#define CLI__BASE_PORT_MAX (65535 - 106)

struct globals {
    char local_controllers[128]; /* the local cluster's, on its base */
    char local_bootstrap[128];
    char local_http[256]; /* the processes' metrics listeners */
    int local_web_port;   /* cairn web's */
    const char *controllers;
    bool controllers_named; /* by --controllers or $CAIRN_CONTROLLERS */
    const char *bootstrap;  /* --bootstrap-servers or $CAIRN_BOOTSTRAP */
    struct kclient_opts kafka;
};

/* The usage text after CLI_USAGE_LINE. */
static void commands_usage(FILE *out)
{
    fputs("\n"
          "Global options:\n"
          "  --bootstrap-servers LIST\n"
          "      Brokers to start from, host:port,... (Kafka commands).\n"
          "      Default: $CAIRN_BOOTSTRAP; else, when the controllers are\n"
          "      named, the brokers their metadata lists; else\n"
          "      " BOOTSTRAP_DEFAULT ".\n"
          "  --controllers LIST\n"
          "      The controller quorum, id@host:port of each controller's\n"
          "      RPC listener. Default: $CAIRN_CONTROLLERS, else\n"
          "      " CLI__CONTROLLERS_DEFAULT ".\n"
          "  -X KEY=VALUE\n"
          "      A librdkafka property for the Kafka commands; applied\n"
          "      last, so it overrides the command's own settings.\n"
          "  -h, --help\n"
          "      This text.\n"
          "\n"
          "Commands:\n",
          out);
    status_usage(out);
    topics_usage(out);
    configs_usage(out);
    groups_usage(out);
    produce_usage(out);
    consume_usage(out);
    bench_usage(out);
    size_usage(out);
    elect_usage(out);
    events_usage(out);
    web_usage(out);
    reassign_usage(out);
    brokers_usage(out);
    dump_log_usage(out);
    fputs("  help [COMMAND]\n"
          "      This text, or only COMMAND's.\n"
          "\n"
          "Environment: CAIRN_BOOTSTRAP, CAIRN_CONTROLLERS (see above);\n"
          "CAIRN_BASE_PORT=N, as deploy/cluster.sh takes it, makes the\n"
          "defaults the local cluster's on that base (brokers on N+91..93,\n"
          "controllers on N+101..103, metrics listeners on N+94..96 and\n"
          "N+104..106);\n"
          "CAIRN_LOG=debug|info|warn|error|off logs the RPC layer and\n"
          "librdkafka to stderr (librdkafka's errors by default).\n"
          "Exit status: 0 success, 1 the operation failed, 2 usage error.\n",
          out);
}

static const struct opts_cmd cairn_cmd = {NULL, commands_usage};

/* One global option at argv[*i]; -1 to go on, else the exit code. */
static int parse_global(int argc, char **argv, int *i, struct globals *g)
{
    const char *v = NULL;
    int r = cli_option(argc, argv, i, "--controllers", &g->controllers);
    if (r > 0) {
        g->controllers_named = true;
        return -1;
    }
    if (r == 0) {
        r = cli_option(argc, argv, i, "--bootstrap-servers", &g->bootstrap);
    }
    if (r == 0) {
        r = cli_option(argc, argv, i, "-X", &v);
        if (r > 0 && !opts_is_key_value(v)) {
            return opts_usage_error(&cairn_cmd,
                                    "-X: expected KEY=VALUE, "
                                    "got '%s'",
                                    v);
        }
        if (r > 0 && g->kafka.n_props == KCLIENT_PROPS_MAX) {
            return opts_usage_error(&cairn_cmd, "-X: more than %d",
                                    KCLIENT_PROPS_MAX);
        }
        if (r > 0) {
            g->kafka.props[g->kafka.n_props++] = v;
        }
    }
    if (r < 0) {
        return opts_usage_error(&cairn_cmd, "%s needs a value", argv[*i]);
    }
    if (r == 0) {
        return opts_usage_error(&cairn_cmd, "unknown option '%s'", argv[*i]);
    }
    return -1;
}

/* `cairn help [COMMAND]`: that command's usage only, else everything. */
static int help_for(const char *cmd)
{
    static const struct {
        const char *name;
        void (*usage)(FILE *out);
    } cmds[] = {{"status", status_usage},   {"topics", topics_usage},
                {"configs", configs_usage}, {"groups", groups_usage},
                {"produce", produce_usage}, {"consume", consume_usage},
                {"bench", bench_usage},     {"size", size_usage},
                {"events", events_usage},   {"elect", elect_usage},
                {"web", web_usage},         {"reassign", reassign_usage},
                {"brokers", brokers_usage}, {"dump-log", dump_log_usage}};
    for (size_t k = 0; cmd != NULL && k < ARRAY_LEN(cmds); k++) {
        if (strcmp(cmd, cmds[k].name) == 0) {
            struct opts_cmd one = {cmds[k].name, cmds[k].usage};
            return opts_help(&one);
        }
    }
    if (cmd != NULL) {
        return opts_usage_error(&cairn_cmd, "help: unknown command '%s'",
                                cmd);
    }
    return opts_help(&cairn_cmd);
}

/* Global options before the command; *i ends on the command. Returns -1
 * to go on, or the exit code. */
static int parse_globals(int argc, char **argv, int *i, struct globals *g)
{
    for (*i = 1; *i < argc && argv[*i][0] == '-'; (*i)++) {
        if (opts_is_help(argv[*i])) {
            return opts_help(&cairn_cmd);
        }
        int rc = parse_global(argc, argv, i, g);
        if (rc >= 0) {
            return rc;
        }
    }
    if (*i == argc) {
        return opts_usage_error(&cairn_cmd, "%s", "missing command");
    }
    if (opts_is_help(argv[*i])) {
        return help_for(*i + 1 < argc ? argv[*i + 1] : NULL);
    }
    return -1;
}

/* CAIRN_LOG=LEVEL shows the RPC layer's log lines; silent otherwise. */
static struct tracer *env_tracer(struct tracer *t)
{
    const char *name = getenv("CAIRN_LOG");
    if (name == NULL || name[0] == '\0') {
        return NULL;
    }
    int level = trace_level_parse(name);
    if (level < 0) {
        cli_error("CAIRN_LOG=%s: expected debug, info, warn, error or off; "
                  "ignored",
                  name);
        return NULL;
    }
    trace_init_stderr(t, (enum trace_level)level, "cairn");
    return t;
}

static int run_status(const char *controllers, const struct status_opts *st)
{
    struct tracer tracer;
    struct ctl_client cc;
    char err[CTL_CLIENT_ERROR_BYTES];
    int rv = ctl_client_init(&cc, controllers, env_tracer(&tracer), err,
                             sizeof err);
    if (rv == RC_INVALID) {
        cli_error("%s", err);
        fputs(CLI_USAGE_LINE "(cairn --help describes the commands)\n",
              stderr);
        return CLI_EXIT_USAGE;
    }
    if (rv != RC_OK) {
        cli_error("%s", err);
        return CLI_EXIT_FAILED;
    }
    int rc = status_run(&cc, st);
    ctl_client_close(&cc);
    return rc;
}

/* Sets g->kafka.bootstrap (see commands_usage()). -1 to go on, else the
 * exit code. */
static int resolve_bootstrap(struct globals *g)
{
    static char from_controllers[BOOTSTRAP_BYTES];
    const char *env = getenv("CAIRN_BOOTSTRAP");
    if (g->bootstrap == NULL && env != NULL && env[0] != '\0') {
        g->bootstrap = env;
    }
    if (g->bootstrap != NULL) {
        g->kafka.bootstrap = g->bootstrap;
        return -1;
    }
    if (!g->controllers_named) {
        g->kafka.bootstrap = g->local_bootstrap;
        return -1;
    }
    char err[CTL_CLIENT_ERROR_BYTES * 2];
    int rv =
        bootstrap_from_controllers(g->controllers, from_controllers,
                                   sizeof from_controllers, err, sizeof err);
    if (rv != RC_OK) {
        cli_error("finding the brokers: %s", err);
        return rv == RC_INVALID ? CLI_EXIT_USAGE : CLI_EXIT_FAILED;
    }
    g->kafka.bootstrap = from_controllers;
    return -1;
}

/* A Kafka command: parse its arguments, find the brokers, run it. */
static int run_kafka(int argc, char **argv, struct globals *g)
{
    static struct topics_opts topics; /* 8 KiB of --config pointers */
    static struct bench_opts bench;
    struct groups_opts groups;
    struct produce_opts produce;
    struct consume_opts consume;
    struct elect_opts elect;
    static struct configs_opts configs;
    const char *cmd = argv[0];
    if (strcmp(cmd, "elect") == 0) {
        int erc = elect_parse(argc, argv, &elect);
        if (erc < 0) {
            erc = resolve_bootstrap(g);
        }
        return erc >= 0 ? erc : elect_run(&g->kafka, &elect);
    }
    bool is_topics = strcmp(cmd, "topics") == 0;
    bool is_groups = strcmp(cmd, "groups") == 0;
    bool is_produce = strcmp(cmd, "produce") == 0;
    bool is_consume = strcmp(cmd, "consume") == 0;
    bool is_configs = strcmp(cmd, "configs") == 0;
    int rc = is_configs   ? configs_parse(argc, argv, &configs)
             : is_topics  ? topics_parse(argc, argv, &topics)
             : is_groups  ? groups_parse(argc, argv, &groups)
             : is_produce ? produce_parse(argc, argv, &produce)
             : is_consume ? consume_parse(argc, argv, &consume)
                          : bench_parse(argc, argv, &bench);
    bool needs_brokers = is_topics || is_groups || is_produce || is_consume ||
                         is_configs || !bench.mock;
    if (rc < 0 && needs_brokers) {
        rc = resolve_bootstrap(g);
    }
    if (rc >= 0) {
        return rc;
    }
    return is_configs   ? configs_run(&g->kafka, &configs)
           : is_topics  ? topics_run(&g->kafka, &topics)
           : is_groups  ? groups_run(&g->kafka, &groups)
           : is_produce ? produce_run(&g->kafka, &produce)
           : is_consume ? consume_run(&g->kafka, &consume)
                        : bench_run(&g->kafka, &bench);
}

static bool is_kafka_command(const char *cmd)
{
    static const char *const cmds[] = {"topics",  "groups", "produce",
                                       "consume", "bench",  "elect",
                                       "configs"};
    for (size_t i = 0; i < ARRAY_LEN(cmds); i++) {
        if (strcmp(cmd, cmds[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* deploy/cluster.sh's metrics listeners: brokers on base+94..96,
 * controllers on base+104..106; and the page of `cairn web` on base+90. */
static void local_http(struct globals *g, long base)
{
    g->local_web_port = (int)(base + 90);
    snprintf(g->local_http, sizeof g->local_http,
             "127.0.0.1:%ld,127.0.0.1:%ld,127.0.0.1:%ld,127.0.0.1:%ld,"
             "127.0.0.1:%ld,127.0.0.1:%ld",
             base + 104, base + 105, base + 106, base + 94, base + 95,
             base + 96);
}

/* The local cluster's addresses: deploy/cluster.sh's defaults, moved by
 * CAIRN_BASE_PORT as the script moves them. False (after saying why) for
 * a base that is not a port number. */
static bool local_defaults(struct globals *g)
{
    const char *env = getenv("CAIRN_BASE_PORT");
    if (env == NULL || env[0] == '\0') {
        snprintf(g->local_controllers, sizeof g->local_controllers, "%s",
                 CLI__CONTROLLERS_DEFAULT);
        snprintf(g->local_bootstrap, sizeof g->local_bootstrap, "%s",
                 BOOTSTRAP_DEFAULT);
        local_http(g, 19000);
        return true;
    }
    char *end = NULL;
    errno = 0;
    long base = strtol(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || base < 1 ||
        base > CLI__BASE_PORT_MAX) {
        cli_error("CAIRN_BASE_PORT=%s: expected a port number from 1 to %d",
                  env, CLI__BASE_PORT_MAX);
        return false;
    }
    snprintf(g->local_controllers, sizeof g->local_controllers,
             "101@127.0.0.1:%ld,102@127.0.0.1:%ld,103@127.0.0.1:%ld",
             base + 101, base + 102, base + 103);
    snprintf(g->local_bootstrap, sizeof g->local_bootstrap,
             "127.0.0.1:%ld,127.0.0.1:%ld,127.0.0.1:%ld", base + 91,
             base + 92, base + 93);
    local_http(g, base);
    return true;
}

int main(int argc, char **argv)
{
    /* A peer closing its socket mid-write must give EPIPE, not kill the
     * process; so does a closed stdout, reported on exit. */
    signal(SIGPIPE, SIG_IGN);
    struct globals g = {0};
    if (!local_defaults(&g)) {
        return 2;
    }
    g.controllers = getenv("CAIRN_CONTROLLERS");
    g.controllers_named = g.controllers != NULL && g.controllers[0] != '\0';
    if (!g.controllers_named) {
        g.controllers = g.local_controllers;
    }
    int i = 0;
    int rc = parse_globals(argc, argv, &i, &g);
    if (rc >= 0) {
        return cli_finish_output(rc);
    }
    if (strcmp(argv[i], "size") == 0) {
        return cli_finish_output(
            size_main(argc - i, argv + i, g.controllers));
    }
    if (strcmp(argv[i], "web") == 0) {
        const struct web_local local = {
            .controllers = g.controllers,
            .is_local = !g.controllers_named,
            .http_default = g.local_http,
            .base_port = g.local_web_port - 90,
            .port_default = g.local_web_port,
        };
        return cli_finish_output(web_main(argc - i, argv + i, &local));
    }
    if (strcmp(argv[i], "reassign") == 0) {
        return cli_finish_output(
            reassign_main(argc - i, argv + i, g.controllers));
    }
    if (strcmp(argv[i], "brokers") == 0) {
        return cli_finish_output(
            brokers_main(argc - i, argv + i, g.controllers));
    }
    if (strcmp(argv[i], "dump-log") == 0) {
        return cli_finish_output(dump_log_main(argc - i, argv + i));
    }
    if (strcmp(argv[i], "events") == 0) {
        return cli_finish_output(
            events_main(argc - i, argv + i, g.local_http));
    }
    if (strcmp(argv[i], "status") == 0) {
        struct status_opts status;
        rc = status_parse(argc - i, argv + i, &status);
        if (rc < 0) {
            status.w.http = g.local_http;
            rc = run_status(g.controllers, &status);
        }
    } else if (is_kafka_command(argv[i])) {
        rc = run_kafka(argc - i, argv + i, &g);
    } else {
        return opts_usage_error(&cairn_cmd, "unknown command '%s'", argv[i]);
    }
    return cli_finish_output(rc);
}
