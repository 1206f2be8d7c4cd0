/* State of the controller process core, shared by controller/controller.c
 * (Raft, leadership, the request queue, lifecycle) and
 * controller/handlers.c (planning and answering each request type). Not
 * for use elsewhere. */
#ifndef CAIRN_CONTROLLER_INTERNAL_H
#define CAIRN_CONTROLLER_INTERNAL_H

#include <raft.h>
#include <raft/uv.h>

#include "common/net/rpc.h"
#include "controller/controller.h"
#include "controller/fsm.h"
#include "controller/plan.h"
#include "controller/plan_create_partitions.h"
#include "controller/plan_configs.h"
#include "controller/raft_io_guard.h"
#include "controller/raft_reply_clamp.h"
#include "controller/sessions.h"
#include "rpc.pb-c.h"

/* One queued request (or internal duty) that may write metadata. */
struct ctl_op {
    struct ctl_op *next;
    struct rpc_conn *conn;       /* NULL for internal duties; referenced */
    uint64_t correlation_id;
    Cairn__Request *req;         /* unpacked; NULL for internal duties */
    bool fence;                  /* internal: fence fence_broker */
    int32_t fence_broker;
    bool elect_leaderless;       /* internal: retry offline partitions */
    bool rebalance;              /* internal: restore preferred leaders */
    /* What the plan decided, for the answer after commit. */
    int16_t error;
    int64_t value;               /* epoch / first producer id */
    struct plan_heartbeat_result heartbeat;
    struct plan_topic_result *topic_results;
    struct meta_uuid *topic_ids;
    int16_t *errors;
    struct plan_partitions_result *partitions_results; /* CreatePartitions */
    struct plan_config_result *config_results; /* AlterConfigs */
    char *events; /* controller_events() of the proposal, logged once
                   * it commits */
    struct elect_answer *elect;  /* ElectLeaders' results (handlers_elect.c) */
    /* AlterPartition requests whose records ride in this one's proposal
     * (handlers.c), answered with it once it commits; freed with it. */
    struct ctl_op *riders;
};

/* How often the active controller elects what offline partitions it can. */
#define CONTROLLER__ELECTION_RETRY_MS 1000

struct controller {
    uv_loop_t *loop;
    struct controller_config cfg;
    struct tracer *tracer;
    struct raft raft;
    struct raft_io io;             /* raft_uv's */
    struct raft_io_guard guard;    /* around it */
    struct raft_reply_clamp clamp; /* around that: what raft is given */
    struct raft_uv_transport transport;
    char raft_address[META_HOST_BYTES_MAX + 8];
    struct meta_fsm fsm;
    struct rpc_server *server;
    struct sessions sessions;
    uv_timer_t tick;
    uv_idle_t kick;              /* runs the queue outside Raft callbacks */
    bool active;
    bool barrier_pending;
    struct raft_barrier barrier;
    struct ctl_op *queue_head;
    struct ctl_op *queue_tail;
    size_t queue_len;
    struct ctl_op *in_flight;    /* proposed, waiting for its commit */
    uint64_t n_proposals;        /* entries proposed while active */
    uint64_t n_alter_requests;   /* AlterPartition requests planned */
    uint64_t n_heartbeats_at_once; /* answered ahead of the queue */
    struct raft_apply apply_req;
    bool fence_queued;           /* a duty is queued or in flight */
    uint64_t next_election_ms;   /* periodic retry of offline partitions
                                  * (CONTROLLER__ELECTION_RETRY_MS) */
    uint64_t next_rebalance_ms;  /* leader.imbalance.check.interval */
    bool stopping;
    int handles_open;
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

uint64_t controller_now_ms(const struct controller *c);

/* Proposes recs (their records; their rules go into the events) for op;
 * the answer goes out after commit. */
MUST_CHECK int controller_propose(struct controller *c, struct ctl_op *op,
                                  const struct plan_records *recs);

/* Answers op with an error (NOT_CONTROLLER carries the leader's id). */
void controller_reply_error(struct controller *c, struct ctl_op *op,
                            int16_t error, const char *message);
/* Packs and sends resp as op's answer; a queued request's answer carries
 * the metadata offset it reflects (Response.metadata_offset). */
void controller_reply(struct controller *c, struct ctl_op *op,
                      Cairn__Response *resp);

/* Queues op again, last (a request that takes more than one entry goes
 * on after its last one committed); answered with an error and freed
 * when the queue is full. */
void controller_requeue(struct controller *c, struct ctl_op *op);

/* The next queued request if it is of body_case, taken off the queue;
 * else NULL. */
struct ctl_op *controller_take_next(struct controller *c, int body_case);

/* handlers.c: plans op against the image. Returns true when op was
 * proposed (answered after commit), false when it was answered now. */
bool handlers_run(struct controller *c, struct ctl_op *op);

/* Broker broker_id (at broker_epoch) was heard from now: its session is
 * renewed if that is its registered epoch. */
/* Answers a heartbeat that changes nothing at once (true); false when it
 * must wait its turn in the queue. */
bool handlers_heartbeat_at_once(struct controller *c, struct ctl_op *op);
void handlers_heard(struct controller *c, int32_t broker_id,
                    int64_t broker_epoch);
/* handlers.c: answers op once its records are committed and applied. */
void handlers_committed(struct controller *c, struct ctl_op *op,
                        const struct fsm_result *result);
/* handlers.c: the cause of the changes op's request makes, for the
 * events (controller/events.c); op->req is not NULL. */
void handlers_request_cause(const struct ctl_op *op, char *out, size_t cap);
/* handlers.c: requests any controller answers at once. */
void handlers_metadata_fetch(struct controller *c, struct rpc_conn *conn,
                             uint64_t correlation_id,
                             const Cairn__MetadataFetchRequest *req);
void handlers_describe_cluster(struct controller *c, struct rpc_conn *conn,
                               uint64_t correlation_id);

/* handlers.c: proposes recs (freed) for op; false, with op answered
 * NOT_CONTROLLER, when they cannot be proposed. */
bool handlers_propose(struct controller *c, struct ctl_op *op,
                      struct plan_records *recs);

/* handlers.c: a request's plan, rv and recs (freed), carried out: recs
 * proposed (true: the answer comes after commit); a failed plan answered
 * UNKNOWN_SERVER_ERROR; a plan that writes nothing (validate only, or
 * nothing to change) answered at once by reply. */
bool handlers_propose_plan(struct controller *c, struct ctl_op *op, int rv,
                           struct plan_records *recs,
                           void (*reply)(struct controller *c,
                                         struct ctl_op *op));

/* handlers_partitions.c: CreatePartitions, planned and answered. */
bool handlers_partitions_run(struct controller *c, struct ctl_op *op);
void handlers_partitions_reply(struct controller *c, struct ctl_op *op);
/* handlers_configs.c: unclean.leader.election.enable for topics that do
 * not set it: the cluster-wide dynamic default when set, else the
 * controller's own config. */
bool handlers_unclean_default(const struct controller *c);

/* handlers_configs.c: AlterConfigs (legacy and incremental). */
bool handlers_run_alter_configs(struct controller *c, struct ctl_op *op);
void handlers_reply_alter_configs(struct controller *c, struct ctl_op *op);
/* handlers_reassign.c: AlterReassignments planned and proposed (true) or
 * answered now (false); its answer; ListReassignments answered at once. */
bool handlers_run_alter_reassignments(struct controller *c,
                                      struct ctl_op *op);
void handlers_reply_alter_reassignments(struct controller *c,
                                        struct ctl_op *op);
bool handlers_run_unregister_broker(struct controller *c, struct ctl_op *op);
void handlers_reply_unregister_broker(struct controller *c,
                                      struct ctl_op *op);
void handlers_list_reassignments(struct controller *c, struct rpc_conn *conn,
                                 uint64_t correlation_id,
                                 const Cairn__ListReassignmentsRequest *req);

void ctl_op_free(struct ctl_op *op);

/* handlers_elect.c: ElectLeaders (plans every partition's election and
 * keeps the results in op->elect for the answer), its answer after
 * commit, the periodic preferred-leader rebalance duty, and freeing
 * op->elect. */
bool handlers_elect_leaders(struct controller *c, struct ctl_op *op);
void handlers_elect_leaders_reply(struct controller *c, struct ctl_op *op);
bool handlers_rebalance(struct controller *c, struct ctl_op *op);
void handlers_elect_free(struct elect_answer *a);

/* controller/events.c: the lines (malloc'd, "\n"-ended; NULL if none)
 * describing what recs change in the committed image, each with the
 * cause op stands for and the rule that picked a new leader; and their
 * logging. */
char *controller_events(const struct controller *c, const struct ctl_op *op,
                        const struct plan_records *recs);
void controller_events_log(struct controller *c, const char *events);

#endif
