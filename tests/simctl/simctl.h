/* Deterministic simulation of the controller quorum over the production
 * code: three controllers in canonical/raft's own in-memory fixture
 * (raft/fixture.h, driven by the seed: network latency, partitions, a
 * leader cut off, crashes), each applying the metadata log with the real
 * state machine (controller/fsm.c, hence common/meta's meta_apply), and the
 * active controller planning every change with the real planners
 * (controller/plan*.c) against its own image, one proposal at a time, as
 * controller/controller.c does. Simulated brokers register, heartbeat,
 * crash, come back with a new incarnation, and as partition leaders ask
 * for ISR changes (AlterPartition) from the image they last saw; an admin
 * creates topics and moves leaders (ElectLeaders).
 *
 * Checked after every step:
 *   - the metadata log is identical on every controller (each applied
 *     entry's hash, by Raft index);
 *   - one leader per partition and leader epoch, over the whole run and
 *     every controller;
 *   - leader and partition epochs never go back on any controller;
 *   - every ISR is within its replicas, non-empty, and holds the leader.
 * At the end, with every fault healed: all controllers hold the same
 * image (their snapshots are equal byte for byte), and within a bounded
 * time every broker is unfenced and every partition is led with a full
 * ISR. */
#ifndef CAIRN_TESTS_SIMCTL_H
#define CAIRN_TESTS_SIMCTL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/meta/meta.h"
#include "controller/plan.h"
#include "tests/lib/meta_quorum.h"

#define SIMCTL_CONTROLLERS META_QUORUM_N
#define SIMCTL_BROKERS 4
#define SIMCTL_TOPICS_MAX 6
#define SIMCTL_SESSION_MS 3000   /* broker.session.timeout.ms */
#define SIMCTL_HEARTBEAT_MS 500  /* broker.heartbeat.interval.ms */
#define SIMCTL_TICK_MS 50        /* the driver's step */
#define SIMCTL_RUN_MS 60000      /* faults and traffic */
#ifndef SIMCTL_SNAPSHOT_EVERY
#define SIMCTL_SNAPSHOT_EVERY 64 /* entries between Raft snapshots */
#endif
#define SIMCTL_SETTLE_MS 60000   /* then, healed, until everything is led */
#define SIMCTL_EPOCHS_MAX 4096   /* (partition, leader epoch) seen */

struct simctl_broker {
    int32_t id;
    bool up;
    struct meta_uuid incarnation;
    int64_t epoch;            /* -1: not registered (as it knows) */
    int64_t next_heartbeat_ms;
    int64_t last_heartbeat_ms; /* as the controller saw it */
    int64_t restart_ms;       /* when down: comes back then */
};

struct simctl_epoch {
    struct meta_uuid topic;
    int32_t partition;
    int32_t leader_epoch;
    int32_t leader;
};

struct simctl {
    uint64_t seed;
    uint64_t rng;
    bool trace;
    struct meta_quorum q;     /* the controllers (tests/lib/meta_quorum.h) */
    /* Per controller and partition (topic slot * 8 + id): the highest
     * epochs its image has shown. */
    int32_t leader_epoch[SIMCTL_CONTROLLERS][SIMCTL_TOPICS_MAX * 8];
    int32_t partition_epoch[SIMCTL_CONTROLLERS][SIMCTL_TOPICS_MAX * 8];
    struct simctl_broker brokers[SIMCTL_BROKERS];
    struct plan_records out;
    int pending_register;     /* broker index whose registration is out */
    int n_topics;
    struct simctl_epoch epochs[SIMCTL_EPOCHS_MAX];
    size_t n_epochs;
    /* Swarm: this seed's fault rates, per mille per tick. */
    int kill_rate;
    int partition_rate;
    int depose_rate;
    int broker_crash_rate;
    int alter_rate;
    int elect_rate;
    /* What happened, for the summary line. */
    int n_kills;
    int n_partitions_net;
    int n_isolations;         /* the leader cut off from the others */
    int n_broker_crashes;
    int n_alters;
    int n_elections;
    /* The first violation stops the run. */
    bool failed;
    char why[1024];
};

/* Runs one seed; false when a check failed (s->why says which). */
bool simctl_run(struct simctl *s, uint64_t seed, bool trace);

#endif
