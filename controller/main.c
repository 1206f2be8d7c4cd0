/* cairn-controller: one voter of the metadata quorum.
 *     cairn-controller CONFIG [--override key=value ...]
 * Reads a properties file with Kafka's names, starts Raft and the RPC
 * server, and runs until SIGTERM or SIGINT (a clean Raft close). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/config.h"
#include "common/rc.h"
#include "controller/controller.h"

static const struct config_def controller_defs[] = {
    {"node.id", CONFIG_INT, NULL, 1, 2147483647, "this controller's id"},
    {"process.roles", CONFIG_LIST, "controller", 0, 0, "must be controller"},
    {"listeners", CONFIG_LIST, NULL, 0, 0, "RPC listener NAME://host:port"},
    {"controller.quorum.voters", CONFIG_LIST, NULL, 0, 0,
     "id@host:port of every controller's RPC listener"},
    {"controller.quorum.raft.voters", CONFIG_LIST, NULL, 0, 0,
     "id@host:port of every controller's Raft endpoint"},
    {"metadata.log.dir", CONFIG_STRING, NULL, 0, 0, "Raft log directory"},
    {"broker.heartbeat.interval.ms", CONFIG_LONG, "2000", 1, 3600000,
     "expected broker heartbeat interval"},
    {"broker.session.timeout.ms", CONFIG_LONG, "9000", 1, 3600000,
     "a broker silent this long is fenced"},
    {"controller.quorum.election.timeout.ms", CONFIG_LONG, "1000", 50,
     60000, "Raft election timeout"},
    {"num.partitions", CONFIG_INT, "1", 1, META_PARTITIONS_MAX,
     "partitions of a topic created without a count"},
    {"default.replication.factor", CONFIG_INT, "1", 1, META_REPLICAS_MAX,
     "replicas of a topic created without a factor"},
    {"unclean.leader.election.enable", CONFIG_BOOL, "false", 0, 0,
     "let an out-of-sync replica lead when no ISR member is alive"},
    {"log.level", CONFIG_STRING, "info", 0, 0, "debug, info, warn, error"},
};

static int voters_from(const struct config *cfg, const char *key,
                       struct addr_voter *out, size_t *n, char *err,
                       size_t err_len)
{
    int rv = addr_parse_voters(config_list(cfg, key), out,
                               CONTROLLER_VOTERS_MAX, n);
    if (rv != RC_OK) {
        snprintf(err, err_len, "%s: expected id@host:port,... with distinct "
                 "ids, got '%s'", key, config_list(cfg, key));
        return RC_CONFIG;
    }
    return RC_OK;
}

static int build_config(const struct config *cfg,
                        struct controller_config *out, char *err,
                        size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->node_id = config_int(cfg, "node.id");
    if (addr_parse_listener(config_list(cfg, "listeners"), &out->listener) !=
        RC_OK) {
        snprintf(err, err_len, "listeners: expected NAME://host:port, got "
                 "'%s'", config_list(cfg, "listeners"));
        return RC_CONFIG;
    }
    size_t n_rpc = 0;
    int rv = voters_from(cfg, "controller.quorum.voters", out->voters, &n_rpc,
                         err, err_len);
    if (rv == RC_OK) {
        rv = voters_from(cfg, "controller.quorum.raft.voters",
                         out->raft_voters, &out->n_voters, err, err_len);
    }
    if (rv != RC_OK) {
        return rv;
    }
    if (n_rpc != out->n_voters) {
        snprintf(err, err_len, "controller.quorum.voters and "
                 "controller.quorum.raft.voters name different controllers");
        return RC_CONFIG;
    }
    const char *dir = config_string(cfg, "metadata.log.dir");
    if (strlen(dir) >= sizeof out->metadata_dir) {
        snprintf(err, err_len, "metadata.log.dir: path too long");
        return RC_CONFIG;
    }
    strcpy(out->metadata_dir, dir);
    out->heartbeat_interval_ms = config_long(cfg,
                                             "broker.heartbeat.interval.ms");
    out->session_timeout_ms = config_long(cfg, "broker.session.timeout.ms");
    out->election_timeout_ms =
        config_long(cfg, "controller.quorum.election.timeout.ms");
    out->num_partitions = config_int(cfg, "num.partitions");
    out->default_replication_factor =
        config_int(cfg, "default.replication.factor");
    out->unclean_leader_election =
        config_bool(cfg, "unclean.leader.election.enable");
    return RC_OK;
}

static uv_signal_t sig_term;
static uv_signal_t sig_int;
static struct controller *controller;

static void stopped_cb(void *arg)
{
    (void)arg;
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
}

static void signal_cb(uv_signal_t *handle, int signum)
{
    (void)handle;
    if (controller != NULL) {
        fprintf(stderr, "cairn-controller: signal %d, stopping\n", signum);
        struct controller *c = controller;
        controller = NULL;
        controller_stop(c, stopped_cb, NULL);
    }
}

static int load(int argc, char **argv, struct config **cfg,
                struct tracer *tracer)
{
    char err[512];
    int rv = config_load_file(cfg, argv[1], controller_defs,
                              ARRAY_LEN(controller_defs), tracer, err,
                              sizeof err);
    for (int i = 2; rv == RC_OK && i + 1 < argc; i += 2) {
        char *eq = strcmp(argv[i], "--override") == 0 ? strchr(argv[i + 1],
                                                              '=')
                                                       : NULL;
        if (eq == NULL) {
            snprintf(err, sizeof err, "expected --override key=value");
            rv = RC_CONFIG;
            break;
        }
        *eq = '\0';
        rv = config_set(*cfg, argv[i + 1], eq + 1, err, sizeof err);
    }
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-controller: %s\n", err);
    }
    return rv;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc % 2 != 0) {
        fprintf(stderr, "usage: cairn-controller CONFIG "
                        "[--override key=value ...]\n");
        return 2;
    }
    struct tracer tracer;
    trace_init_stderr(&tracer, TRACE_LEVEL_INFO, "controller");
    struct config *cfg = NULL;
    if (load(argc, argv, &cfg, &tracer) != RC_OK) {
        return 1;
    }
    int level = trace_level_parse(config_string(cfg, "log.level"));
    tracer.level = level < 0 ? TRACE_LEVEL_INFO : (enum trace_level)level;
    struct controller_config cc;
    char err[512];
    if (build_config(cfg, &cc, err, sizeof err) != RC_OK) {
        fprintf(stderr, "cairn-controller: %s\n", err);
        config_free(cfg);
        return 1;
    }
    config_free(cfg);
    uv_loop_t *loop = uv_default_loop();
    signal(SIGPIPE, SIG_IGN);
    if (controller_start(&controller, loop, &cc, &tracer) != RC_OK) {
        return 1;
    }
    uv_signal_init(loop, &sig_term);
    uv_signal_init(loop, &sig_int);
    uv_signal_start(&sig_term, signal_cb, SIGTERM);
    uv_signal_start(&sig_int, signal_cb, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return 0;
}
