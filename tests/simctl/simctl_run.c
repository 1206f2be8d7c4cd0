/* One seed of the controller simulation (tests/simctl/simctl.h): the
 * brokers, the admin, the active controller's planning and the faults. */
#include "tests/simctl/simctl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_elect.h"

void simctl_check(struct simctl *s);

static uint64_t next_rand(struct simctl *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static bool chance(struct simctl *s, int per_mille)
{
    return (int)(next_rand(s) % 1000) < per_mille;
}

static int64_t now_ms(struct simctl *s)
{
    return (int64_t)raft_fixture_time(&s->q.raft);
}

static void trace(struct simctl *s, const char *what, int32_t id)
{
    if (s->trace) {
        printf("t=%" PRId64 " %s %d\n", now_ms(s), what, (int)id);
    }
}

static int leader(struct simctl *s)
{
    return meta_quorum_leader(&s->q);
}

/* What a broker last saw: the image of some live controller (maybe
 * behind). */
static const struct meta_image *view(struct simctl *s)
{
    unsigned i = (unsigned)(next_rand(s) % SIMCTL_CONTROLLERS);
    for (unsigned k = 0; k < SIMCTL_CONTROLLERS; k++) {
        unsigned j = (i + k) % SIMCTL_CONTROLLERS;
        if (raft_fixture_alive(&s->q.raft, j)) {
            return meta_quorum_image(&s->q, j);
        }
    }
    return meta_quorum_image(&s->q, 0);
}

/* --- Proposals ----------------------------------------------------------- */

static void applied_cb(void *arg, int status, unsigned proposer)
{
    struct simctl *s = arg;
    if (status == 0 && s->pending_register >= 0) {
        struct simctl_broker *b = &s->brokers[s->pending_register];
        const struct meta_broker *mb =
            meta_image_broker(meta_quorum_image(&s->q, proposer), b->id);
        if (mb != NULL &&
            memcmp(&mb->incarnation, &b->incarnation, sizeof mb->incarnation)
                == 0) {
            b->epoch = mb->epoch;
            b->last_heartbeat_ms = now_ms(s);
        }
    }
    s->pending_register = -1;
}

/* Proposes s->out's records on the leader; true when they went out. */
static bool propose(struct simctl *s, int register_broker)
{
    if (!meta_quorum_propose(&s->q, &s->out, applied_cb, s)) {
        return false;
    }
    if (s->trace) {
        printf("t=%" PRId64 " propose %zu records, the first of type %d\n",
               now_ms(s), s->out.n, (int)s->out.recs[0].type);
    }
    s->pending_register = register_broker;
    return true;
}

/* --- What the active controller is asked ------------------------------- */

static bool session_alive(struct simctl *s, const struct simctl_broker *b)
{
    return now_ms(s) - b->last_heartbeat_ms < SIMCTL_SESSION_MS;
}

static bool do_register(struct simctl *s, const struct meta_image *img, int i)
{
    struct simctl_broker *b = &s->brokers[i];
    struct meta_rec_register_broker rq = {.broker_id = b->id,
                                          .incarnation = b->incarnation,
                                          .port = 9092 + b->id};
    snprintf(rq.host, sizeof rq.host, "broker-%d", (int)b->id);
    const struct meta_broker *mb = meta_image_broker(img, b->id);
    bool other = mb != NULL && !mb->fenced &&
                 memcmp(&mb->incarnation, &b->incarnation,
                        sizeof b->incarnation) != 0 &&
                 session_alive(s, b);
    int16_t error = 0;
    int64_t epoch = -1;
    plan_records_clear(&s->out);
    if (plan_register_broker(img, &rq, other, &s->out, &error, &epoch) !=
            RC_OK ||
        error != KAFKA_ERROR_NONE) {
        return false;
    }
    if (s->out.n == 0) { /* a retry of what is registered */
        b->epoch = epoch;
        b->last_heartbeat_ms = now_ms(s);
        return false;
    }
    trace(s, "register", b->id);
    return propose(s, i);
}

static bool do_heartbeat(struct simctl *s, const struct meta_image *img,
                         struct simctl_broker *b)
{
    struct plan_heartbeat_req rq = {
        .broker_id = b->id,
        .broker_epoch = b->epoch,
        .current_metadata_offset = view(s)->offset};
    struct plan_heartbeat_result res;
    plan_records_clear(&s->out);
    if (plan_heartbeat(img, &rq, false, &s->out, &res) != RC_OK) {
        return false;
    }
    b->next_heartbeat_ms = now_ms(s) + SIMCTL_HEARTBEAT_MS;
    if (res.error != KAFKA_ERROR_NONE) {
        b->epoch = -1; /* registers again */
        return false;
    }
    b->last_heartbeat_ms = now_ms(s);
    return propose(s, -1);
}

/* A registered, unfenced broker whose session lapsed is fenced. */
static bool do_fence(struct simctl *s, const struct meta_image *img)
{
    for (int i = 0; i < SIMCTL_BROKERS; i++) {
        struct simctl_broker *b = &s->brokers[i];
        const struct meta_broker *mb = meta_image_broker(img, b->id);
        if (mb == NULL || mb->fenced || session_alive(s, b)) {
            continue;
        }
        plan_records_clear(&s->out);
        if (plan_fence_broker(img, b->id, false, &s->out) == RC_OK &&
            propose(s, -1)) {
            trace(s, "fence", b->id);
            return true;
        }
    }
    return false;
}

static bool do_create_topic(struct simctl *s, const struct meta_image *img)
{
    char name[16];
    snprintf(name, sizeof name, "t%d", s->n_topics);
    struct plan_topic_req rq = {
        .name = name,
        .num_partitions = (int32_t)(1 + next_rand(s) % 4),
        .replication_factor = 3};
    for (size_t k = 0; k < sizeof rq.id.b; k++) {
        rq.id.b[k] = (uint8_t)next_rand(s);
    }
    struct plan_topic_defaults defaults = {1, 3};
    struct plan_topic_result res;
    plan_records_clear(&s->out);
    if (plan_create_topics(img, &rq, 1, &defaults, false, &s->out, &res) !=
            RC_OK ||
        res.error != KAFKA_ERROR_NONE) {
        return false;
    }
    s->n_topics++;
    trace(s, "create topic", s->n_topics - 1);
    return propose(s, -1);
}

static bool do_elect(struct simctl *s, const struct meta_image *img)
{
    if (img->n_topics == 0) {
        return false;
    }
    const struct meta_topic *t = &img->topics[next_rand(s) % img->n_topics];
    int32_t p = (int32_t)(next_rand(s) % (uint64_t)t->n_partitions);
    int16_t error = 0;
    plan_records_clear(&s->out);
    if (plan_elect_partition(img, t->name, p, PLAN_ELECTION_PREFERRED,
                             &s->out, &error) != RC_OK ||
        error != KAFKA_ERROR_NONE) {
        return false;
    }
    s->n_elections++;
    return propose(s, -1);
}

/* The ISR partition p's leader would ask for: during faults without an
 * ISR member whose broker is down (it lags), always with every replica
 * whose broker is up (it would have caught up). False when that is the
 * ISR it has. */
static bool wanted_isr(struct simctl *s, const struct meta_partition *p,
                       bool faults, int32_t *isr, size_t *n)
{
    bool changed = false;
    *n = 0;
    for (int32_t k = 0; k < p->replicas.n; k++) {
        int32_t id = p->replicas.ids[k];
        bool in = meta_replica_set_contains(&p->isr, id);
        bool up = s->brokers[id - 1].up;
        if (in && !up && id != p->leader && faults) {
            changed = true; /* lagging: out */
        } else if (!in && up) {
            isr[(*n)++] = id; /* caught up: in */
            changed = true;
        } else if (in) {
            isr[(*n)++] = id;
        }
    }
    return changed;
}

/* A partition leader's AlterPartition, built from its own (maybe stale)
 * view and checked by the controller against the leader's image: the
 * first partition, from a random one on, whose live leader wants
 * another ISR. */
static bool do_alter(struct simctl *s, const struct meta_image *img,
                     bool faults)
{
    const struct meta_image *v = view(s);
    size_t total = 0;
    for (size_t ti = 0; ti < v->n_topics; ti++) {
        total += (size_t)v->topics[ti].n_partitions;
    }
    size_t from = total > 0 ? (size_t)(next_rand(s) % total) : 0;
    for (size_t k = 0; k < total; k++) {
        size_t flat = (from + k) % total;
        size_t ti = 0;
        while (flat >= (size_t)v->topics[ti].n_partitions) {
            flat -= (size_t)v->topics[ti++].n_partitions;
        }
        const struct meta_topic *t = &v->topics[ti];
        const struct meta_partition *p = &t->partitions[flat];
        int32_t isr[META_REPLICAS_MAX];
        size_t n = 0;
        if (p->leader == META_NO_LEADER ||
            !wanted_isr(s, p, faults, isr, &n)) {
            continue;
        }
        const struct simctl_broker *b = &s->brokers[p->leader - 1];
        if (!b->up || b->epoch < 0) {
            continue;
        }
        struct plan_alter_partition_req rq = {
            .broker_id = b->id,
            .broker_epoch = b->epoch,
            .topic_id = t->id,
            .partition = p->id,
            .leader_epoch = p->leader_epoch,
            .partition_epoch = p->partition_epoch,
            .new_isr = isr,
            .n_new_isr = n};
        int16_t error = 0;
        plan_records_clear(&s->out);
        if (plan_alter_partition(img, &rq, &s->out, &error) != RC_OK) {
            return false;
        }
        if (s->trace) {
            printf("t=%" PRId64 " alter %s-%d by %d: %zu in the ISR, error "
                   "%d\n", now_ms(s), t->name, p->id, (int)b->id, n,
                   (int)error);
        }
        s->n_alters++;
        return propose(s, -1);
    }
    return false;
}

/* The active controller takes one request with records, at most, per
 * step: one proposal in flight, as controller/controller.c runs them. */
static void controller_step(struct simctl *s, bool faults)
{
    int ctl = leader(s);
    if (ctl < 0 || s->q.in_flight) {
        return;
    }
    const struct meta_image *img = meta_quorum_image(&s->q, (unsigned)ctl);
    for (int i = 0; i < SIMCTL_BROKERS; i++) {
        struct simctl_broker *b = &s->brokers[i];
        if (!b->up) {
            continue;
        }
        if (b->epoch < 0 ? do_register(s, img, i)
                         : b->next_heartbeat_ms <= now_ms(s) &&
                               do_heartbeat(s, img, b)) {
            return;
        }
    }
    if (do_fence(s, img)) {
        return;
    }
    plan_records_clear(&s->out);
    if (chance(s, 50) && plan_elect_leaderless(img, false, &s->out) ==
                             RC_OK &&
        propose(s, -1)) {
        return;
    }
    if (s->n_topics < SIMCTL_TOPICS_MAX && chance(s, 20) &&
        do_create_topic(s, img)) {
        return;
    }
    if (faults && chance(s, s->elect_rate) && do_elect(s, img)) {
        return;
    }
    if (chance(s, faults ? s->alter_rate : 300)) {
        (void)do_alter(s, img, faults);
    }
}

/* --- Faults ---------------------------------------------------------------- */

static unsigned n_dead(struct simctl *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        n += !raft_fixture_alive(&s->q.raft, i);
    }
    return n;
}

static void faults_step(struct simctl *s)
{
    unsigned i = (unsigned)(next_rand(s) % SIMCTL_CONTROLLERS);
    unsigned j = (i + 1 + (unsigned)(next_rand(s) % 2)) % SIMCTL_CONTROLLERS;
    if (chance(s, s->kill_rate)) {
        if (raft_fixture_alive(&s->q.raft, i) && n_dead(s) == 0) {
            raft_fixture_kill(&s->q.raft, i);
            s->n_kills++;
        } else if (!raft_fixture_alive(&s->q.raft, i)) {
            raft_fixture_revive(&s->q.raft, i);
        }
    }
    if (chance(s, s->partition_rate)) {
        if (raft_fixture_saturated(&s->q.raft, i, j)) {
            raft_fixture_desaturate(&s->q.raft, i, j);
            raft_fixture_desaturate(&s->q.raft, j, i);
        } else {
            raft_fixture_saturate(&s->q.raft, i, j);
            raft_fixture_saturate(&s->q.raft, j, i);
            s->n_partitions_net++;
        }
    }
    int l = leader(s);
    if (chance(s, s->depose_rate) && l >= 0) {
        /* The leader cut off from both others (the partition toggles or
         * the heal join it again). */
        for (unsigned k = 0; k < SIMCTL_CONTROLLERS; k++) {
            if (k != (unsigned)l && !raft_fixture_saturated(&s->q.raft,
                                                           (unsigned)l, k)) {
                raft_fixture_saturate(&s->q.raft, (unsigned)l, k);
                raft_fixture_saturate(&s->q.raft, k, (unsigned)l);
            }
        }
        s->n_isolations++;
    }
    int k = (int)(next_rand(s) % SIMCTL_BROKERS);
    struct simctl_broker *b = &s->brokers[k];
    if (b->up && chance(s, s->broker_crash_rate)) {
        b->up = false;
        b->restart_ms = now_ms(s) + 1000 +
                        (int64_t)(next_rand(s) % (2 * SIMCTL_SESSION_MS));
        s->n_broker_crashes++;
        trace(s, "broker down", b->id);
    }
}

static void heal(struct simctl *s)
{
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        if (!raft_fixture_alive(&s->q.raft, i)) {
            raft_fixture_revive(&s->q.raft, i);
        }
        for (unsigned j = 0; j < SIMCTL_CONTROLLERS; j++) {
            if (i != j && raft_fixture_saturated(&s->q.raft, i, j)) {
                raft_fixture_desaturate(&s->q.raft, i, j);
            }
        }
    }
    for (int k = 0; k < SIMCTL_BROKERS; k++) {
        if (!s->brokers[k].up) {
            s->brokers[k].restart_ms = now_ms(s);
        }
    }
}

static void brokers_step(struct simctl *s, int *last_leader)
{
    int l = leader(s);
    for (int k = 0; k < SIMCTL_BROKERS; k++) {
        struct simctl_broker *b = &s->brokers[k];
        if (l != *last_leader) {
            /* A new active controller starts every session afresh. */
            b->last_heartbeat_ms = now_ms(s);
        }
        if (!b->up && now_ms(s) >= b->restart_ms) {
            b->up = true;
            b->epoch = -1;
            b->incarnation.b[0]++; /* a new process */
            b->incarnation.b[1] = (uint8_t)next_rand(s);
            trace(s, "broker up", b->id);
        }
    }
    *last_leader = l;
}

/* --- One seed ------------------------------------------------------------ */

/* Whether everything is led with a full ISR; else *why says what is not. */
static bool settled(struct simctl *s, char *why, size_t cap)
{
    int l = leader(s);
    int stopped = meta_quorum_unavailable(&s->q);
    if (stopped >= 0) {
        snprintf(why, cap, "libraft stopped controller %d (RAFT_UNAVAILABLE)",
                 stopped);
        return false;
    }
    if (l < 0 || s->q.in_flight) {
        snprintf(why, cap, l < 0 ? "no leader" : "a proposal is out");
        return false;
    }
    const struct meta_image *img = meta_quorum_image(&s->q, (unsigned)l);
    for (int k = 0; k < SIMCTL_BROKERS; k++) {
        const struct meta_broker *mb =
            meta_image_broker(img, s->brokers[k].id);
        if (mb == NULL || mb->fenced) {
            snprintf(why, cap, "broker %d is %s", (int)s->brokers[k].id,
                     mb == NULL ? "not registered" : "fenced");
            return false;
        }
    }
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *t = &img->topics[ti];
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct meta_partition *p = &t->partitions[pi];
            if (p->leader == META_NO_LEADER || p->isr.n != p->replicas.n) {
                snprintf(why, cap, "%s-%d has leader %d and %d of %d "
                         "replicas in its ISR", t->name, p->id, p->leader,
                         p->isr.n, p->replicas.n);
                return false;
            }
        }
    }
    if (!meta_quorum_caught_up(&s->q)) {
        snprintf(why, cap, "a controller has not applied all the leader "
                 "has");
        return false;
    }
    return true;
}

static void swarm(struct simctl *s)
{
    s->kill_rate = (int)(next_rand(s) % 8);
    s->partition_rate = (int)(next_rand(s) % 8);
    s->depose_rate = (int)(next_rand(s) % 6);
    s->broker_crash_rate = (int)(next_rand(s) % 10);
    s->alter_rate = 50 + (int)(next_rand(s) % 300);
    s->elect_rate = (int)(next_rand(s) % 50);
}

bool simctl_run(struct simctl *s, uint64_t seed, bool trace_on)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->rng = seed * 0x9e3779b97f4a7c15ULL | 1;
    s->trace = trace_on;
    swarm(s);
    plan_records_init(&s->out);
    s->pending_register = -1;
    for (int k = 0; k < SIMCTL_BROKERS; k++) {
        s->brokers[k] = (struct simctl_broker){.id = k + 1, .up = true,
                                               .epoch = -1};
        s->brokers[k].incarnation.b[15] = (uint8_t)(k + 1);
    }
    if (meta_quorum_init(&s->q, SIMCTL_SNAPSHOT_EVERY) != RC_OK) {
        snprintf(s->why, sizeof s->why, "the fixture did not start");
        s->failed = true;
    }
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        raft_fixture_set_network_latency(&s->q.raft, i,
                                         5 + (unsigned)(next_rand(s) % 40));
    }
    int last_leader = -1;
    int64_t settle_from = -1;
    char unsettled[512] = "";
    while (!s->failed) {
        raft_fixture_step_until_elapsed(&s->q.raft, SIMCTL_TICK_MS);
        bool faults = now_ms(s) < SIMCTL_RUN_MS;
        if (faults) {
            faults_step(s);
        } else if (settle_from < 0) {
            heal(s);
            settle_from = now_ms(s);
        }
        brokers_step(s, &last_leader);
        controller_step(s, faults);
        simctl_check(s);
        if (!faults && settled(s, unsettled, sizeof unsettled)) {
            if (!meta_quorum_same_images(&s->q)) {
                s->failed = true;
                snprintf(s->why, sizeof s->why, "%s", s->q.why);
            }
            break;
        }
        if (settle_from >= 0 && now_ms(s) - settle_from > SIMCTL_SETTLE_MS) {
            s->failed = true;
            snprintf(s->why, sizeof s->why, "not settled %d ms after the "
                     "faults stopped: %s", SIMCTL_SETTLE_MS, unsettled);
        }
    }
    meta_quorum_close(&s->q); /* fails a proposal still out */
    plan_records_free(&s->out);
    return !s->failed;
}
