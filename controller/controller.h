/* The cairn-controller process core: one Raft voter (canonical/raft over
 * libuv TCP) whose state machine is the metadata image (controller/fsm.h),
 * an RPC server for brokers and the CLI (common/net/rpc.h), and, while this
 * node is the Raft leader and its first barrier has completed, the active
 * controller's duties: registration, heartbeats and fencing, topic
 * creation and deletion, AlterPartition, producer-id blocks.
 *
 * Requests that change metadata are handled one at a time, in arrival
 * order: each is planned against the current image (controller/plan.h),
 * its records proposed with raft_apply, and its answer sent once they are
 * committed and applied, so no answer ever describes uncommitted state and
 * no two plans race. Followers answer NOT_CONTROLLER with the leader's id.
 * One libuv loop thread. */
#ifndef CAIRN_CONTROLLER_CONTROLLER_H
#define CAIRN_CONTROLLER_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/net/addr.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/trace.h"

/* Exit status when libraft cannot write the metadata log (a full or
 * failing disk): the same as a broker's failed log dir. */
#define CONTROLLER_EXIT_METADATA_DIR_FAILED 3

struct controller_config {
    int32_t node_id;                 /* node.id */
    struct addr listener;            /* listeners (RPC) */
    struct addr_voter voters[CONTROLLER_VOTERS_MAX]; /* RPC endpoints */
    struct addr_voter raft_voters[CONTROLLER_VOTERS_MAX];
    size_t n_voters;
    char raft_secret[256 + 1];       /* controller.quorum.raft.secret */
    char metadata_dir[LOG_PATH_BYTES_MAX]; /* metadata.log.dir */
    int64_t heartbeat_interval_ms;   /* broker.heartbeat.interval.ms */
    int64_t session_timeout_ms;      /* broker.session.timeout.ms */
    int64_t election_timeout_ms;     /* controller.quorum.election.timeout.ms */
    int32_t num_partitions;          /* num.partitions */
    int32_t default_replication_factor; /* default.replication.factor */
    bool unclean_leader_election;    /* unclean.leader.election.enable */
    bool auto_leader_rebalance;      /* auto.leader.rebalance.enable */
    int64_t leader_imbalance_check_interval_ms; /* ...check.interval.seconds */
    int32_t leader_imbalance_percentage; /* ...per.broker.percentage */
};

struct controller;

MUST_CHECK int controller_start(struct controller **out, uv_loop_t *loop,
                                const struct controller_config *cfg,
                                struct tracer *tracer);

/* Stops serving, closes Raft and the server; cb runs once everything is
 * closed, after which the loop can end. */
void controller_stop(struct controller *c, void (*cb)(void *arg), void *arg);

/* The Prometheus text of *(struct controller **)arg (controller/metrics.c);
 * nothing once that pointer is NULL. */
struct writer;
void controller_metrics_render(void *arg, struct writer *w);

#endif
