/* Test helper: a real Cairn cluster of cairn-controller and cairn-broker
 * processes on 127.0.0.1, on free ports, in a temporary directory. Tests
 * kill, stop, pause and restart nodes by pid, and read the metadata with
 * the controllers' own RPC (DescribeCluster). Every wait has a deadline.
 * Binaries come from the directory of the running test binary's parent
 * (build/<variant>/), or $CAIRN_BIN. */
#ifndef CAIRN_TESTS_CLUSTER_H
#define CAIRN_TESTS_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "common/meta/meta.h"
#include "common/net/rpc.h"
#include "rpc.pb-c.h"

#define CLUSTER_CONTROLLERS_MAX 3
#define CLUSTER_BROKERS_MAX 5

#define CLUSTER_RAFT_SECRET_RAW 16 /* random bytes, written as hex */

struct cluster_node {
    int32_t id;
    pid_t pid;          /* 0 when not running */
    int port;           /* RPC (controller) or Kafka listener (broker) */
    int raft_port;      /* controllers only */
    int metrics_port;   /* controllers only: /metrics */
    char config[4200];
    char log[4200];
};

struct cluster {
    char dir[4096];
    char bin[4096];
    struct cluster_node controllers[CLUSTER_CONTROLLERS_MAX];
    struct cluster_node brokers[CLUSTER_BROKERS_MAX];
    int n_controllers;
    int n_brokers;
    int64_t session_timeout_ms;
    int64_t heartbeat_interval_ms;
    int64_t election_timeout_ms;
    const char *broker_extra_config; /* appended to each broker's file */
    bool broker_ids_from_zero;  /* node.id 0, 1, ... instead of 1, 2, ... */
    char raft_secret[2 * CLUSTER_RAFT_SECRET_RAW + 1]; /* hex, per cluster */
    uv_loop_t loop;
    struct rpc_client *client;  /* one target per controller */
};

/* Writes configs for n_controllers and n_brokers and starts them all. */
void cluster_start(struct cluster *c, int n_controllers, int n_brokers);
/* SIGTERM to everything still running, then SIGKILL after a deadline;
 * removes the directory. */
void cluster_destroy(struct cluster *c);

void cluster_node_start(struct cluster *c, struct cluster_node *n);
/* Sends sig; with wait, waits (bounded) for the process to exit and
 * returns its wait status. */
int cluster_node_signal(struct cluster *c, struct cluster_node *n, int sig,
                        bool wait);

/* One request to controller index i; NULL on transport error/timeout.
 * Free with cairn__response__free_unpacked. */
Cairn__Response *cluster_call(struct cluster *c, int i,
                              const Cairn__Request *req, uint64_t timeout_ms);

/* Index of the controller that says it is active, or -1. */
int cluster_active(struct cluster *c);

/* The active controller's image into img (initialised by the caller);
 * false if no controller is active. */
bool cluster_image(struct cluster *c, struct meta_image *img);

/* Polls until every broker is registered and unfenced (and a controller
 * active); false at the deadline. */
bool cluster_wait_ready(struct cluster *c, uint64_t deadline_ms);

/* CreateTopics of one topic on controller index i; returns the Kafka
 * error (REQUEST_TIMED_OUT when no answer came within timeout_ms,
 * UNKNOWN_SERVER_ERROR for an answer without the topic's result). */
int16_t cluster_create_topic_on(struct cluster *c, int i, const char *name,
                                int32_t partitions, int32_t rf,
                                uint64_t timeout_ms);

/* CreateTopics on the active controller with one topic config
 * (config_name=config_value) within 10 s. */
int16_t cluster_create_topic_with(struct cluster *c, const char *name,
                                  int32_t partitions, int32_t rf,
                                  const char *config_name,
                                  const char *config_value);

/* The same on the active controller within 10 s (NOT_CONTROLLER when
 * none is active). */
int16_t cluster_create_topic(struct cluster *c, const char *name,
                             int32_t partitions, int32_t rf);

uint64_t cluster_now_ms(void);

/* Claims port for this process while it runs (a lock other test
 * processes see); false when another process holds it. The nodes'
 * ports are claimed so, and kept across their restarts. */
bool cluster_claim_port(int port);

/* The broker node with this node id, or NULL. */
struct cluster_node *cluster_broker(struct cluster *c, int32_t id);

/* Where broker n keeps its partition logs (its log.dirs); one directory
 * per partition inside, named <topic>-<partition>. */
void cluster_broker_log_dir(const struct cluster *c,
                            const struct cluster_node *n, char *out,
                            size_t cap);

/* Configures and starts one more broker (the next node id, a free port):
 * a broker added to a running cluster. */
struct cluster_node *cluster_add_broker(struct cluster *c);
/* bootstrap.servers for Kafka clients: every broker's listener. */
void cluster_bootstrap(const struct cluster *c, char *out, size_t cap);

/* The value of metric name in node n's /metrics (a plain GET, a 5 s
 * deadline), or -1 when it cannot be read. */
double cluster_metric(const struct cluster_node *n, const char *name);

/* True if the node's log file contains text. */
bool cluster_log_contains(const struct cluster_node *n, const char *text);
/* Lines of the node's log file that contain both texts. */
int cluster_log_count(const struct cluster_node *n, const char *text,
                      const char *also);

#endif
