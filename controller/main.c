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
#include "common/daemon.h"
#include "common/event_ring.h"
#include "common/loop_watch.h"
#include "common/net/http_metrics.h"
#include "common/rc.h"
#include "controller/controller.h"
#include "controller/raft_transport.h"

static const struct config_def controller_defs[] = {
    {"node.id", CONFIG_INT, NULL, 1, 2147483647, "this controller's id"},
    {"process.roles", CONFIG_LIST, "controller", 0, 0, "must be controller"},
    {"listeners", CONFIG_LIST, NULL, 0, 0, "RPC listener NAME://host:port"},
    {"metrics.port", CONFIG_INT, "0", 0, 65535,
     "Prometheus text at http://<listener host>:<port>/metrics; 0: off"},
    {"controller.quorum.raft.voters", CONFIG_LIST, NULL, 0, 0,
     "id@host:port of every controller's Raft endpoint"},
    {"controller.quorum.raft.secret", CONFIG_STRING, NULL, 0, 0,
     "shared by the controllers: authenticates their Raft connections "
     "(16 to 256 characters)"},
    {"metadata.log.dir", CONFIG_STRING, NULL, 0, 0, "Raft log directory"},
    {"controller.quorum.election.timeout.ms", CONFIG_LONG, "1000", 50,
     60000, "Raft election timeout"},
    {"num.partitions", CONFIG_INT, "1", 1, META_PARTITIONS_MAX,
     "partitions of a topic created without a count"},
    {"default.replication.factor", CONFIG_INT, "1", 1, META_REPLICAS_MAX,
     "replicas of a topic created without a factor"},
    {"unclean.leader.election.enable", CONFIG_BOOL, "false", 0, 0,
     "let an out-of-sync replica lead when no ISR member is alive"},
    {"auto.leader.rebalance.enable", CONFIG_BOOL, "true", 0, 0,
     "give leadership back to preferred replicas when a broker's leader "
     "imbalance passes leader.imbalance.per.broker.percentage"},
    {"leader.imbalance.check.interval.seconds", CONFIG_LONG, "300", 1,
     86400, "how often the active controller checks leader imbalance"},
    {"leader.imbalance.per.broker.percentage", CONFIG_INT, "10", 0, 100,
     "share of a broker's preferred partitions led elsewhere it tolerates"},
    DAEMON_CONFIG_SHARED_DEFS,
};

#define PROG "cairn-controller"

static int build_config(const struct config *cfg,
                        struct controller_config *out)
{
    memset(out, 0, sizeof *out);
    out->node_id = config_int(cfg, "node.id");
    size_t n_rpc = 0;
    if (daemon_config_listener(cfg, PROG, "listeners", &out->listener) !=
            RC_OK ||
        daemon_config_voters(cfg, PROG, "controller.quorum.voters",
                             out->voters, CONTROLLER_VOTERS_MAX,
                             &n_rpc) != RC_OK ||
        daemon_config_voters(cfg, PROG, "controller.quorum.raft.voters",
                             out->raft_voters, CONTROLLER_VOTERS_MAX,
                             &out->n_voters) != RC_OK) {
        return RC_CONFIG;
    }
    if (n_rpc != out->n_voters) {
        fprintf(stderr, PROG ": controller.quorum.voters and "
                "controller.quorum.raft.voters name different "
                "controllers\n");
        return RC_CONFIG;
    }
    const char *secret = config_string(cfg, "controller.quorum.raft.secret");
    if (strlen(secret) < RAFT_TRANSPORT_SECRET_BYTES_MIN ||
        strlen(secret) > RAFT_TRANSPORT_SECRET_BYTES_MAX) {
        fprintf(stderr, PROG ": controller.quorum.raft.secret: %d to %d "
                "characters, the same on every controller\n",
                RAFT_TRANSPORT_SECRET_BYTES_MIN,
                RAFT_TRANSPORT_SECRET_BYTES_MAX);
        return RC_CONFIG;
    }
    strcpy(out->raft_secret, secret);
    const char *dir = config_string(cfg, "metadata.log.dir");
    if (strlen(dir) >= sizeof out->metadata_dir) {
        fprintf(stderr, PROG ": metadata.log.dir: path too long\n");
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
    out->auto_leader_rebalance =
        config_bool(cfg, "auto.leader.rebalance.enable");
    out->leader_imbalance_check_interval_ms =
        config_long(cfg, "leader.imbalance.check.interval.seconds") * 1000;
    out->leader_imbalance_percentage =
        config_int(cfg, "leader.imbalance.per.broker.percentage");
    return RC_OK;
}

static uv_signal_t sig_term;
static uv_signal_t sig_int;
static struct loop_watch loop_watch; /* the loop's stalls, logged */
static struct controller *controller;
static struct http_metrics *metrics;
static struct event_ring events; /* the tracer's event lines, /events */
static char events_source[24];

static void stopped_cb(void *arg)
{
    (void)arg;
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
    loop_watch_close(&loop_watch);
}

static void signal_cb(uv_signal_t *handle, int signum)
{
    (void)handle;
    if (controller != NULL) {
        fprintf(stderr, "cairn-controller: signal %d, stopping\n", signum);
        struct controller *c = controller;
        controller = NULL;
        http_metrics_close(metrics);
        metrics = NULL;
        controller_stop(c, stopped_cb, NULL);
    }
}

int main(int argc, char **argv)
{
    struct tracer tracer;
    trace_init_stderr(&tracer, TRACE_LEVEL_INFO, "controller");
    event_ring_init(&events);
    tracer.events = &events;
    struct config *cfg = NULL;
    int rv = daemon_config_load(&cfg, PROG, argc, argv, controller_defs,
                                ARRAY_LEN(controller_defs), &tracer);
    if (rv != RC_OK) {
        return rv == RC_INVALID ? 2 : 1;
    }
    struct controller_config cc;
    if (build_config(cfg, &cc) != RC_OK) {
        config_free(cfg);
        return 1;
    }
    int metrics_port = config_int(cfg, "metrics.port");
    config_free(cfg);
    daemon_events_persist(&events, cc.metadata_dir, &tracer);
    uv_loop_t *loop = uv_default_loop();
    signal(SIGPIPE, SIG_IGN);
    if (controller_start(&controller, loop, &cc, &tracer) != RC_OK) {
        return 1;
    }
    int bound = 0;
    if (metrics_port > 0 &&
        http_metrics_start(&metrics, loop, cc.listener.host, metrics_port,
                           controller_metrics_render, &controller, &tracer,
                           &bound) != RC_OK) {
        TRACE_WARN(&tracer, "metrics.port=%d: cannot listen; no metrics",
                   metrics_port); /* the quorum's work goes on */
    } else if (metrics != NULL) {
        snprintf(events_source, sizeof events_source, "controller-%d",
                 (int)cc.node_id);
        http_metrics_events(metrics, &events, events_source);
    }
    uv_signal_init(loop, &sig_term);
    uv_signal_init(loop, &sig_int);
    uv_signal_start(&sig_term, signal_cb, SIGTERM);
    uv_signal_start(&sig_int, signal_cb, SIGINT);
    loop_watch_start(&loop_watch, loop, LOOP_WATCH_WARN_MS, &tracer);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    tracer.events = NULL;
    event_ring_destroy(&events); /* the newest repeat count to its file */
    return 0;
}
