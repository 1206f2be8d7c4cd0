/* Test helper for the simulations: three controllers in canonical/raft's
 * own in-memory fixture (raft/fixture.h: simulated time and network, no
 * sockets, no disk), each applying the metadata log with the production
 * state machine (controller/fsm.c, hence meta_apply). Every entry a
 * controller applies is hashed by Raft index, and a difference between
 * two controllers at one index fails the quorum (the metadata log must be
 * identical on every controller). One proposal at a time, planned by the
 * caller against the leader's image, as controller/controller.c does. */
#ifndef CAIRN_TESTS_META_QUORUM_H
#define CAIRN_TESTS_META_QUORUM_H

#include <raft.h>
#include <raft/fixture.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/meta/meta.h"
#include "controller/fsm.h"
#include "controller/plan.h"
#include "controller/raft_reply_clamp.h"

#define META_QUORUM_N 3

struct meta_quorum;

struct meta_quorum_ctl {
    struct raft_fsm fsm;      /* handed to the fixture: wraps meta's */
    struct meta_fsm meta;
    struct meta_quorum *q;
    unsigned index;
    uint64_t *hash;           /* by Raft index; 0: not applied here */
    raft_index cap_hash;
    struct raft_reply_clamp clamp; /* as the controller has it */
};

/* Called when the proposal is applied (status 0) or lost. */
typedef void (*meta_quorum_cb)(void *arg, int status, unsigned proposer);

struct meta_quorum {
    struct raft_fixture raft;
    struct meta_quorum_ctl ctl[META_QUORUM_N];
    struct raft_apply apply;
    bool in_flight;
    /* A new leader plans only once a barrier of its term is applied (as
     * controller/controller.c waits for raft_barrier): before that its
     * image may lack entries committed in earlier terms. */
    struct raft_barrier barrier;
    bool barrier_out;
    unsigned barrier_leader;
    raft_term barrier_term;
    int ready;                /* the leader that may plan, or -1 */
    raft_term ready_term;     /* the term it was ready in */
    bool closing;
    unsigned proposer;
    meta_quorum_cb cb;
    void *cb_arg;
    int n_proposals;
    int n_lost;               /* proposals whose leader lost its place */
    bool failed;              /* the first difference stops it */
    char why[256];
};

/* Bootstraps and starts three voters; snapshots every snapshot_every
 * entries (0: libraft's default). RC_OK, or RC_NOMEM / RC_IO. */
int meta_quorum_init(struct meta_quorum *q, unsigned snapshot_every);
/* Fails a proposal still out (its callback runs) and frees it all. */
void meta_quorum_close(struct meta_quorum *q);

/* The leader, if it is alive (the fixture may still name a killed one)
 * and has applied a barrier of its term, else -1 (the first call for a
 * new leader sends the barrier). */
int meta_quorum_leader(struct meta_quorum *q);
const struct meta_image *meta_quorum_image(const struct meta_quorum *q,
                                           unsigned i);
/* Proposes out's records as one entry on the leader; false when there is
 * no leader, one is out already, there is nothing to propose, or libraft
 * refused. cb(arg, status, leader) runs once it is applied or lost. */
bool meta_quorum_propose(struct meta_quorum *q,
                         const struct plan_records *out, meta_quorum_cb cb,
                         void *arg);
/* A live controller libraft has stopped (RAFT_UNAVAILABLE: a handler
 * of its failed), or -1. Nothing brings it back. */
int meta_quorum_unavailable(struct meta_quorum *q);
/* Every controller has applied what the leader has. */
bool meta_quorum_caught_up(struct meta_quorum *q);
/* Controllers that applied the same index hold the same image, byte for
 * byte (their snapshots); false (q->why) when not. */
bool meta_quorum_same_images(struct meta_quorum *q);

#endif
