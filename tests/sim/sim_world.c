/* The simulated world (tests/sim/sim.h): PRNG, event queue, network,
 * controller, producer, fault injection and the safety checks run after
 * every step. One thread; nothing here reads a clock. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "common/rc.h"
#include "tests/sim/sim.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* --- PRNG (splitmix64) --------------------------------------------------- */

uint64_t sim_rand(struct sim_world *w)
{
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
int64_t sim_rand_range(struct sim_world *w, int64_t lo, int64_t hi)
{
    ASSERT(lo <= hi);
    return lo + (int64_t)(sim_rand(w) % (uint64_t)(hi - lo + 1));
}

bool sim_chance(struct sim_world *w, int per_mille)
{
    return sim_rand_range(w, 0, 999) < per_mille;
}

int64_t sim_new_req(struct sim_world *w)
{
    return ++w->next_req;
}

/* --- Reporting ----------------------------------------------------------- */

void sim_fail(struct sim_world *w, const char *fmt, ...)
{
    if (w->failed) {
        return;
    }
    w->failed = true;
    int k = snprintf(w->why, sizeof w->why, "step=%llu t=%lldms: ",
                     (unsigned long long)w->step, (long long)w->now_ms);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why + k, sizeof w->why - (size_t)k, fmt, ap);
    va_end(ap);
}

void sim_trace(struct sim_world *w, const char *fmt, ...)
{
    if (!w->opt.trace) {
        return;
    }
    printf("  [%6lld] ", (long long)w->now_ms);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* --- Event queue (binary heap on time, then insertion order) ------------- */

static bool ev_before(const struct sim_event *a, const struct sim_event *b)
{
    return a->at_ms != b->at_ms ? a->at_ms < b->at_ms : a->seq < b->seq;
}

void sim_schedule(struct sim_world *w, const struct sim_event *ev)
{
    if (w->n_heap == w->cap_heap) {
        w->cap_heap = w->cap_heap == 0 ? 256 : w->cap_heap * 2;
        w->heap = realloc(w->heap, w->cap_heap * sizeof *w->heap);
        ASSERT(w->heap != NULL);
    }
    ASSERT(ev->at_ms >= w->now_ms);
    size_t i = w->n_heap++;
    w->heap[i] = *ev;
    w->heap[i].seq = w->seq++;
    while (i > 0 && ev_before(&w->heap[i], &w->heap[(i - 1) / 2])) {
        struct sim_event t = w->heap[i];
        w->heap[i] = w->heap[(i - 1) / 2];
        w->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void heap_pop(struct sim_world *w, struct sim_event *out)
{
    ASSERT(w->n_heap > 0);
    *out = w->heap[0];
    w->heap[0] = w->heap[--w->n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        size_t r = l + 1;
        size_t m = i;
        if (l < w->n_heap && ev_before(&w->heap[l], &w->heap[m])) {
            m = l;
        }
        if (r < w->n_heap && ev_before(&w->heap[r], &w->heap[m])) {
            m = r;
        }
        if (m == i) {
            return;
        }
        struct sim_event t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
}

void sim_node_timer(struct sim_world *w, struct sim_node *n,
                    enum sim_timer t, int64_t token, int64_t after_ms)
{
    struct sim_event ev = {.type = SIM_EV_NODE_TIMER, .node = n->idx,
                           .incarnation = n->incarnation, .timer = t,
                           .token = token, .at_ms = w->now_ms + after_ms};
    sim_schedule(w, &ev);
}

static void at(struct sim_world *w, enum sim_ev_type type, int node,
               int64_t at_ms)
{
    struct sim_event ev = {.type = type, .node = node, .at_ms = at_ms};
    sim_schedule(w, &ev);
}

/* --- Network ------------------------------------------------------------- */

static bool cut_off(const struct sim_world *w, int endpoint)
{
    return endpoint < SIM_NODES && w->isolated[endpoint];
}

/* Each message on its own: dropped, or delivered after a delay drawn for
 * it alone (so messages overtake each other), sometimes a long one. */
void sim_send(struct sim_world *w, const struct sim_msg *m)
{
    if (cut_off(w, m->from) || cut_off(w, m->to) ||
        sim_chance(w, w->drop_per_mille)) {
        return;
    }
    int64_t delay = sim_rand_range(w, w->delay_min_ms, w->delay_max_ms);
    if (sim_chance(w, w->spike_per_mille)) {
        delay += sim_rand_range(w, 200, 3000);
    }
    struct sim_event ev = {.type = SIM_EV_DELIVER, .msg = *m,
                           .at_ms = w->now_ms + delay};
    ev.msg.sent_ms = w->now_ms;
    if (m->from < SIM_NODES) {
        ev.msg.incarnation_from = w->nodes[m->from].incarnation;
    }
    sim_schedule(w, &ev);
}

/* --- Controller ---------------------------------------------------------- */

static void broadcast(struct sim_world *w)
{
    for (int i = 0; i < SIM_NODES; i++) {
        struct sim_msg m = {.type = SIM_MSG_META, .from = SIM_CONTROLLER,
                            .to = i, .meta = w->ctl.meta};
        sim_send(w, &m);
    }
}

/* One committed metadata change (a PartitionChange or broker record). */
static void commit(struct sim_world *w, bool isr_changed, bool leader_changed)
{
    struct sim_controller *c = &w->ctl;
    c->meta.offset++;
    if (isr_changed || leader_changed) {
        c->meta.part.partition_epoch++;
    }
    if (leader_changed) {
        c->meta.part.leader_epoch++;
        c->n_leader_changes++;
        if (c->meta.part.leader != META_NO_LEADER) {
            c->offline_damaged = false;
        }
    }
    if (isr_changed) {
        c->last_isr_change_ms = w->now_ms;
        c->n_isr_changes++;
    }
    sim_trace(w, "controller: leader %d epoch %d isr %d pe %d",
              c->meta.part.leader, c->meta.part.leader_epoch,
              c->meta.part.isr.n, c->meta.part.partition_epoch);
    broadcast(w);
}

static bool acceptable(const struct sim_controller *c, int32_t id,
                       int32_t excluded)
{
    return id >= 1 && id != excluded && !c->meta.fenced[id - 1];
}

/* plan_elect_leader(): keep the leader if it may stay, else the first
 * acceptable ISR member in replica order, else none (no unclean). */
static int32_t elect(const struct sim_controller *c,
                     const struct meta_replica_set *isr, int32_t excluded)
{
    const struct meta_partition *p = &c->meta.part;
    if (meta_replica_set_contains(isr, p->leader) &&
        acceptable(c, p->leader, excluded)) {
        return p->leader;
    }
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t r = p->replicas.ids[i];
        if (meta_replica_set_contains(isr, r) && acceptable(c, r, excluded)) {
            return r;
        }
    }
    return META_NO_LEADER;
}

static bool same_members(const struct meta_replica_set *a,
                         const struct meta_replica_set *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (int32_t i = 0; i < a->n; i++) {
        if (!meta_replica_set_contains(b, a->ids[i])) {
            return false;
        }
    }
    return true;
}

/* plan_fence(): out of the ISR (never emptying it) and out of leadership,
 * then the fence record. */
static void fence(struct sim_world *w, int b)
{
    struct sim_controller *c = &w->ctl;
    struct meta_partition *p = &c->meta.part;
    int32_t id = b + 1;
    struct meta_replica_set target = {0};
    for (int32_t i = 0; i < p->isr.n; i++) {
        if (p->isr.ids[i] != id) {
            target.ids[target.n++] = p->isr.ids[i];
        }
    }
    if (target.n == 0) {
        target = p->isr;
    }
    int32_t leader = elect(c, &target, id);
    bool isr_changed = !same_members(&target, &p->isr);
    bool leader_changed = leader != p->leader;
    sim_trace(w, "controller fences broker %d", id);
    if (isr_changed || leader_changed) {
        p->isr = target;
        p->leader = leader;
        commit(w, isr_changed, leader_changed);
    }
    c->meta.fenced[b] = true;
    commit(w, false, false);
}

/* plan_unfence(): the broker record, then elections for a leaderless
 * partition. */
static void unfence(struct sim_world *w, int b)
{
    struct sim_controller *c = &w->ctl;
    struct meta_partition *p = &c->meta.part;
    c->meta.fenced[b] = false;
    sim_trace(w, "controller unfences broker %d", b + 1);
    commit(w, false, false);
    if (p->leader == META_NO_LEADER) {
        int32_t leader = elect(c, &p->isr, -1);
        if (leader != META_NO_LEADER) {
            p->leader = leader;
            commit(w, false, true);
        }
    }
}

static void on_heartbeat(struct sim_world *w, const struct sim_msg *m)
{
    struct sim_controller *c = &w->ctl;
    int b = m->from;
    if (m->broker_epoch != c->broker_epoch[b]) {
        return; /* STALE_BROKER_EPOCH */
    }
    if (m->offline_dir) {
        /* KIP-858: its only log dir is offline: fenced at once, out of
         * every ISR, its leaderships moved. */
        if (!c->meta.fenced[b]) {
            fence(w, b);
        }
        return;
    }
    c->last_heartbeat_ms[b] = w->now_ms;
    if (c->meta.fenced[b] && m->offset >= c->registered_at[b]) {
        unfence(w, b);
    }
}

/* plan_register_broker(): refused while the old incarnation's session is
 * alive (unfenced); a new registration is fenced until it catches up. */
static void on_register(struct sim_world *w, const struct sim_msg *m)
{
    struct sim_controller *c = &w->ctl;
    int b = m->from;
    struct sim_msg rsp = {.type = SIM_MSG_REGISTER_RSP, .from = SIM_CONTROLLER,
                          .to = b, .req = m->req,
                          .incarnation = m->incarnation};
    if (m->incarnation != c->incarnation[b]) {
        if (!c->meta.fenced[b]) {
            return; /* DUPLICATE_BROKER_REGISTRATION: it retries */
        }
        c->incarnation[b] = m->incarnation;
        c->broker_epoch[b] = c->next_broker_epoch++;
        c->last_heartbeat_ms[b] = w->now_ms;
        commit(w, false, false);
        c->registered_at[b] = c->meta.offset;
    }
    rsp.broker_epoch = c->broker_epoch[b];
    rsp.offset = c->registered_at[b];
    sim_send(w, &rsp);
}

/* plan_alter_partition(): sender, epochs, then the proposed ISR. */
static enum sim_err alter_check(const struct sim_controller *c,
                                const struct sim_msg *m)
{
    const struct meta_partition *p = &c->meta.part;
    int32_t id = m->from + 1;
    if (m->broker_epoch != c->broker_epoch[m->from] || p->leader != id ||
        m->epoch != p->leader_epoch ||
        m->partition_epoch != p->partition_epoch) {
        return SIM_REFUSED;
    }
    if (m->isr.n == 0 || !meta_replica_set_contains(&m->isr, id)) {
        return SIM_REFUSED;
    }
    for (int32_t i = 0; i < m->isr.n; i++) {
        int32_t r = m->isr.ids[i];
        if (!meta_replica_set_contains(&p->replicas, r)) {
            return SIM_REFUSED;
        }
        if (!meta_replica_set_contains(&p->isr, r) &&
            !acceptable(c, r, -1)) {
            return SIM_REFUSED; /* INELIGIBLE_REPLICA */
        }
    }
    return SIM_OK;
}

static void on_alter(struct sim_world *w, const struct sim_msg *m)
{
    struct sim_controller *c = &w->ctl;
    struct sim_msg rsp = {.type = SIM_MSG_ALTER_RSP, .from = SIM_CONTROLLER,
                          .to = m->from, .req = m->req, .epoch = m->epoch,
                          .err = alter_check(c, m)};
    if (rsp.err == SIM_OK && !same_members(&m->isr, &c->meta.part.isr)) {
        c->meta.part.isr = m->isr;
        commit(w, true, false);
    }
    rsp.isr = c->meta.part.isr;
    rsp.partition_epoch = c->meta.part.partition_epoch;
    sim_send(w, &rsp);
}

/* plan_leave_leadership(): a damaged replica leaves the ISR (a leader
 * hands the partition to another in-sync replica, or to none while they
 * are fenced); the last in-sync copy stays and the partition goes offline:
 * every in-sync copy is damaged. */
static void on_leave(struct sim_world *w, const struct sim_msg *m)
{
    struct sim_controller *c = &w->ctl;
    struct meta_partition *p = &c->meta.part;
    int32_t id = m->from + 1;
    if (m->broker_epoch != c->broker_epoch[m->from] ||
        m->epoch != p->leader_epoch ||
        !meta_replica_set_contains(&p->isr, id)) {
        return;
    }
    struct meta_replica_set isr = {0};
    for (int32_t i = 0; i < p->isr.n; i++) {
        if (p->isr.ids[i] != id) {
            isr.ids[isr.n++] = p->isr.ids[i];
        }
    }
    bool leads = p->leader == id;
    if (isr.n == 0) {
        if (p->leader == META_NO_LEADER) {
            return;
        }
        p->leader = META_NO_LEADER;
        c->offline_damaged = true;
        w->n_offline_damaged++;
        sim_trace(w, "controller: every in-sync copy is damaged, offline");
        commit(w, false, true);
        return;
    }
    p->isr = isr;
    if (leads) {
        p->leader = elect(c, &isr, id);
    }
    sim_trace(w, "controller: broker %d leaves the ISR for a damaged log",
              id);
    commit(w, true, leads);
}

void sim_controller_receive(struct sim_world *w, const struct sim_msg *m)
{
    switch (m->type) {
    case SIM_MSG_HEARTBEAT: on_heartbeat(w, m); break;
    case SIM_MSG_REGISTER: on_register(w, m); break;
    case SIM_MSG_ALTER: on_alter(w, m); break;
    case SIM_MSG_LEAVE: on_leave(w, m); break;
    default: ASSERT(!"unexpected message at the controller");
    }
}

/* Sessions expire; brokers re-read metadata. */
void sim_controller_tick(struct sim_world *w)
{
    struct sim_controller *c = &w->ctl;
    for (int b = 0; b < SIM_NODES; b++) {
        if (!c->meta.fenced[b] &&
            w->now_ms - c->last_heartbeat_ms[b] > SIM_SESSION_MS) {
            fence(w, b);
        }
    }
    if (w->now_ms % SIM_META_REFRESH_MS == 0) {
        broadcast(w);
    }
    at(w, SIM_EV_CONTROLLER_TICK, 0, w->now_ms + 50);
}

void sim_controller_init(struct sim_world *w)
{
    struct sim_controller *c = &w->ctl;
    memset(c, 0, sizeof *c);
    struct meta_partition *p = &c->meta.part;
    p->replicas.n = SIM_NODES;
    for (int i = 0; i < SIM_NODES; i++) {
        p->replicas.ids[i] = i + 1;
        c->broker_epoch[i] = i + 1;
    }
    p->isr = p->replicas;
    p->leader = 1;
    c->meta.offset = 1;
    c->next_broker_epoch = SIM_NODES + 1;
}

/* Moves leadership to another live ISR member (as a preferred-replica
 * election or a controlled shutdown would). */
static void move_leader(struct sim_world *w)
{
    struct sim_controller *c = &w->ctl;
    struct meta_partition *p = &c->meta.part;
    int32_t cand[SIM_NODES];
    int n = 0;
    for (int32_t i = 0; i < p->isr.n; i++) {
        int32_t r = p->isr.ids[i];
        if (r != p->leader && acceptable(c, r, -1)) {
            cand[n++] = r;
        }
    }
    if (n == 0) {
        return;
    }
    p->leader = cand[sim_rand_range(w, 0, n - 1)];
    w->n_elections++;
    commit(w, false, true);
}

/* --- Producer ------------------------------------------------------------ */

void sim_offsets_reserve(struct sim_world *w, int64_t n)
{
    if (n <= w->cap_offsets) {
        return;
    }
    int64_t cap = w->cap_offsets == 0 ? 1024 : w->cap_offsets;
    while (cap < n) {
        cap *= 2;
    }
    w->acked_at = realloc(w->acked_at, (size_t)cap * sizeof *w->acked_at);
    w->committed = realloc(w->committed, (size_t)cap * sizeof *w->committed);
    ASSERT(w->acked_at != NULL);
    ASSERT(w->committed != NULL);
    for (int64_t i = w->cap_offsets; i < cap; i++) {
        w->acked_at[i] = -1;
        w->committed[i] = -1;
    }
    w->cap_offsets = cap;
}

/* acks=all to the leader the controller names; each request carries a
 * value of its own (its request id) and is never retried. */
static void produce_tick(struct sim_world *w)
{
    int32_t leader = w->ctl.meta.part.leader;
    if (leader != META_NO_LEADER) {
        int64_t req = sim_new_req(w);
        struct sim_msg m = {.type = SIM_MSG_PRODUCE, .from = SIM_PRODUCER,
                            .to = leader - 1, .req = req, .value = req};
        w->n_produced++;
        sim_send(w, &m);
    }
    if (w->now_ms < w->end_ms - 1000) {
        at(w, SIM_EV_PRODUCE_TICK, 0, w->now_ms + sim_rand_range(w, 2, 30));
    }
}

static void acknowledged(struct sim_world *w, int64_t offset, int64_t value)
{
    sim_offsets_reserve(w, offset + 1);
    if (w->acked_at[offset] != -1 && w->acked_at[offset] != value) {
        sim_fail(w, "offset %lld acknowledged twice: value %lld, then %lld",
                 (long long)offset, (long long)w->acked_at[offset],
                 (long long)value);
        return;
    }
    if (w->committed[offset] != -1 && w->committed[offset] != value) {
        sim_fail(w, "acknowledged value %lld at offset %lld, but %lld was "
                 "committed there", (long long)value, (long long)offset,
                 (long long)w->committed[offset]);
        return;
    }
    w->acked_at[offset] = value;
    w->committed[offset] = value;
    if (offset > w->max_acked_offset) {
        w->max_acked_offset = offset;
    }
    w->n_acked++;
    for (int i = 0; i < SIM_NODES; i++) {
        w->nodes[i].acks_checked = min64(w->nodes[i].acks_checked, offset);
    }
}

void sim_producer_receive(struct sim_world *w, const struct sim_msg *m)
{
    ASSERT(m->type == SIM_MSG_PRODUCE_RSP);
    if (m->err == SIM_OK) {
        sim_trace(w, "producer: value %lld acknowledged at %lld",
                  (long long)m->req, (long long)m->offset);
        acknowledged(w, m->offset, m->req);
    } else {
        w->n_refused++;
    }
}

/* --- Consumer ------------------------------------------------------------ */

/* Reads the partition from the start to the HW of the leader the
 * controller names, then from the start again: every committed record,
 * old ones included, is read over and over while the disks fail. */
static void consume_tick(struct sim_world *w)
{
    int32_t leader = w->ctl.meta.part.leader;
    bool waiting = w->consumer_req != 0 &&
                   w->now_ms - w->consumer_sent_ms < SIM_REQUEST_TIMEOUT_MS;
    if (leader != META_NO_LEADER && !waiting) {
        w->consumer_req = sim_new_req(w);
        w->consumer_sent_ms = w->now_ms;
        struct sim_msg m = {.type = SIM_MSG_CONSUME, .from = SIM_CONSUMER,
                            .to = leader - 1, .req = w->consumer_req,
                            .offset = w->consumer_offset};
        sim_send(w, &m);
    }
    if (w->now_ms < w->end_ms - 100) {
        at(w, SIM_EV_CONSUME_TICK, 0, w->now_ms + 20);
    }
}

/* Every record a consumer gets is the one committed at its offset (the
 * acknowledged one, when it was acknowledged). */
void sim_consumer_receive(struct sim_world *w, const struct sim_msg *m)
{
    if (m->req != w->consumer_req) {
        return;
    }
    w->consumer_req = 0;
    if (m->err == SIM_OUT_OF_RANGE) {
        w->consumer_offset = 0;
        return;
    }
    if (m->err != SIM_OK) {
        return;
    }
    for (int i = 0; i < m->n_recs; i++) {
        int64_t o = m->offset + i;
        int64_t v = m->recs[i].value;
        sim_offsets_reserve(w, o + 1);
        if (w->committed[o] == -1) {
            w->committed[o] = v;
        } else if (w->committed[o] != v) {
            sim_fail(w, "consumer read value %lld at offset %lld, but %lld "
                     "was committed there%s", (long long)v, (long long)o,
                     (long long)w->committed[o],
                     w->acked_at[o] != -1 ? " (acknowledged)" : "");
            return;
        }
        w->n_consumed++;
    }
    w->consumer_offset = m->offset + m->n_recs;
    if (m->n_recs == 0 && w->consumer_offset >= m->hw) {
        w->consumer_offset = 0; /* caught up: read it all again */
    }
}

/* --- Faults -------------------------------------------------------------- */

static int n_down(const struct sim_world *w)
{
    int k = 0;
    for (int i = 0; i < SIM_NODES; i++) {
        k += !w->nodes[i].up;
    }
    return k;
}

void sim_crash(struct sim_world *w, int i)
{
    sim_node_crash(w, &w->nodes[i]);
    w->n_crashes++;
    at(w, SIM_EV_RESTART, i, w->now_ms + sim_rand_range(w, 100, 4000));
}

/* Mostly one broker down at a time; rarely a second one (a shared power
 * loss), and one cut off. */
static void fault_tick(struct sim_world *w)
{
    if (w->now_ms >= w->faults_end_ms) {
        memset(w->isolated, 0, sizeof w->isolated);
        w->drop_per_mille = 0;
        w->spike_per_mille = 0;
        return;
    }
    int down = n_down(w);
    if (down == 0 && sim_chance(w, w->crash_per_mille)) {
        sim_crash(w, (int)sim_rand_range(w, 0, SIM_NODES - 1));
    } else if (down == 1 && sim_chance(w, w->second_crash_per_mille)) {
        int i = (int)sim_rand_range(w, 0, SIM_NODES - 1);
        if (w->nodes[i].up) {
            sim_crash(w, i);
            w->n_double_crashes++;
        }
    }
    bool any = false;
    for (int i = 0; i < SIM_NODES; i++) {
        any = any || w->isolated[i];
    }
    if (!any && sim_chance(w, w->isolate_per_mille)) {
        int i = (int)sim_rand_range(w, 0, SIM_NODES - 1);
        w->isolated[i] = true;
        w->n_isolations++;
        sim_trace(w, "node %d cut off", i + 1);
        at(w, SIM_EV_HEAL, i, w->now_ms + sim_rand_range(w, 100, 5000));
    }
    sim_disk_fault_tick(w);
    if (sim_chance(w, w->elect_per_mille)) {
        move_leader(w);
        if (sim_chance(w, 300)) { /* before the new leader appends much */
            at(w, SIM_EV_ELECT, 0, w->now_ms + sim_rand_range(w, 0, 30));
        }
    }
    at(w, SIM_EV_FAULT, 0, w->now_ms + 100);
}

/* --- Checks -------------------------------------------------------------- */

/* Offsets below a replica's HW are committed: every replica that has one
 * holds the same record there, and it is the acknowledged one if any. */
static void check_committed(struct sim_world *w, struct sim_node *n)
{
    if (n->hw > n->n || n->durable > n->n) {
        sim_fail(w, "model: node %d hw %lld durable %lld past end %lld",
                 n->id, (long long)n->hw, (long long)n->durable,
                 (long long)n->n);
        return;
    }
    for (int64_t o = n->hw_checked; o < n->hw; o++) {
        int64_t v = n->log[o].value;
        if (w->committed[o] == -1) {
            w->committed[o] = v;
        } else if (w->committed[o] != v) {
            sim_fail(w, "replicas disagree below the HW: node %d has value "
                     "%lld at offset %lld (hw %lld), committed %lld%s",
                     n->id, (long long)v, (long long)o, (long long)n->hw,
                     (long long)w->committed[o],
                     w->acked_at[o] != -1 ? " (acknowledged)" : "");
            return;
        }
    }
    n->hw_checked = n->hw;
}

static void check_hw_monotonic(struct sim_world *w, struct sim_node *n)
{
    if (!n->leading) {
        return;
    }
    if (n->mono_epoch == n->isr.leader_epoch && n->hw < n->mono_hw) {
        sim_fail(w, "HW went back on leader %d in epoch %d: %lld -> %lld",
                 n->id, n->mono_epoch, (long long)n->mono_hw,
                 (long long)n->hw);
        return;
    }
    n->mono_epoch = n->isr.leader_epoch;
    n->mono_hw = n->hw;
}

/* The current leader (the one the controller names, once it acts on it)
 * holds every acknowledged record, unchanged. */
static void check_acked(struct sim_world *w)
{
    int32_t id = w->ctl.meta.part.leader;
    if (id == META_NO_LEADER || n_down(w) > 1) {
        return;
    }
    struct sim_node *l = &w->nodes[id - 1];
    if (!l->up || !l->leading || l->repair_until >= 0 ||
        l->isr.leader_epoch != w->ctl.meta.part.leader_epoch) {
        return; /* a repairing leader takes no writes and is leaving */
    }
    if (w->max_acked_offset >= l->n) {
        sim_fail(w, "acknowledged offset %lld lost: leader %d (epoch %d) "
                 "ends at %lld", (long long)w->max_acked_offset, l->id,
                 l->isr.leader_epoch, (long long)l->n);
        return;
    }
    for (int64_t o = l->acks_checked; o < l->n; o++) {
        if (w->acked_at[o] != -1 && w->acked_at[o] != l->log[o].value) {
            sim_fail(w, "acknowledged value %lld at offset %lld changed: "
                     "leader %d (epoch %d, hw %lld) has %lld",
                     (long long)w->acked_at[o], (long long)o, l->id,
                     l->isr.leader_epoch, (long long)l->hw,
                     (long long)l->log[o].value);
            return;
        }
    }
    l->acks_checked = l->n;
}

void sim_check(struct sim_world *w)
{
    for (int i = 0; i < SIM_NODES && !w->failed; i++) {
        struct sim_node *n = &w->nodes[i];
        if (n->up) {
            check_committed(w, n);
            check_hw_monotonic(w, n);
        }
    }
    if (!w->failed) {
        check_acked(w);
    }
}

/* After the quiet tail: the ISR has not changed during it and holds every
 * replica again, under a leader. */
void sim_check_end(struct sim_world *w)
{
    const struct sim_controller *c = &w->ctl;
    if (w->failed) {
        return;
    }
    if (c->meta.part.leader == META_NO_LEADER && c->offline_damaged) {
        return; /* every in-sync copy damaged: offline, as it must be */
    }
    if (c->meta.part.leader == META_NO_LEADER) {
        sim_fail(w, "no leader after the quiet tail");
    } else if (c->last_isr_change_ms >= w->quiet_from_ms) {
        sim_fail(w, "ISR changed during the quiet tail (at %lldms, %d "
                 "members)", (long long)c->last_isr_change_ms,
                 c->meta.part.isr.n);
    } else if (c->meta.part.isr.n != SIM_NODES) {
        sim_fail(w, "ISR has %d of %d replicas after the quiet tail",
                 c->meta.part.isr.n, SIM_NODES);
    }
    sim_disk_check_end(w);
}

/* --- The run ------------------------------------------------------------- */

/* Faults for this seed: how much the network misbehaves, how often
 * brokers crash, get cut off, or lose leadership. */
static void pick_profile(struct sim_world *w)
{
    w->delay_min_ms = 1;
    w->delay_max_ms = (int)sim_rand_range(w, 2, 60);
    w->drop_per_mille = (int)sim_rand_range(w, 0, 50);
    w->spike_per_mille = (int)sim_rand_range(w, 0, 20);
    w->crash_per_mille = (int)sim_rand_range(w, 0, 60);
    w->second_crash_per_mille =
        sim_chance(w, 200) ? (int)sim_rand_range(w, 1, 40) : 0;
    w->isolate_per_mille = (int)sim_rand_range(w, 0, 30);
    w->elect_per_mille = (int)sim_rand_range(w, 0, 30);
    w->disk_per_mille = (int)sim_rand_range(w, 0, 40);
    w->faults_end_ms = 20000;
    w->quiet_from_ms = 35000;
    w->end_ms = 45000;
}

void sim_world_init(struct sim_world *w, uint64_t seed,
                    const struct sim_options *opt)
{
    memset(w, 0, sizeof *w);
    w->seed = seed;
    w->rng = seed;
    w->opt = *opt;
    w->max_acked_offset = -1;
    for (int i = 0; i < SIM_NODES; i++) {
        w->damaged_from[i] = -1;
    }
    io_fault_clear();
    ASSERT(io_sim_new(&w->disk) == RC_OK);
    io_sim_install(w->disk);
    pick_profile(w);
    sim_controller_init(w);
    for (int i = 0; i < SIM_NODES; i++) {
        sim_node_init(w, &w->nodes[i], i);
    }
    for (int i = 0; i < SIM_NODES; i++) {
        struct sim_msg m = {.type = SIM_MSG_META, .from = SIM_CONTROLLER,
                            .to = i, .meta = w->ctl.meta};
        sim_node_receive(w, &w->nodes[i], &m);
    }
    at(w, SIM_EV_CONTROLLER_TICK, 0, 50);
    at(w, SIM_EV_PRODUCE_TICK, 0, 10);
    at(w, SIM_EV_CONSUME_TICK, 0, 15);
    at(w, SIM_EV_FAULT, 0, 1000);
}

void sim_world_free(struct sim_world *w)
{
    for (int i = 0; i < SIM_NODES; i++) {
        sim_node_free(&w->nodes[i]);
    }
    free(w->heap);
    free(w->acked_at);
    free(w->committed);
    io_fault_clear();
    io_sim_uninstall();
    io_sim_free(w->disk);
}

/* Messages to or from a broker that restarted since they were sent went
 * down with its connections. */
static void deliver(struct sim_world *w, const struct sim_msg *m)
{
    if (m->from < SIM_NODES) {
        const struct sim_node *s = &w->nodes[m->from];
        if (!s->up || s->incarnation != m->incarnation_from) {
            return;
        }
    }
    if (m->to < SIM_NODES) {
        if (m->sent_ms < w->nodes[m->to].started_ms) {
            return;
        }
        sim_node_receive(w, &w->nodes[m->to], m);
    } else if (m->to == SIM_CONTROLLER) {
        sim_controller_receive(w, m);
    } else if (m->to == SIM_CONSUMER) {
        sim_consumer_receive(w, m);
    } else {
        sim_producer_receive(w, m);
    }
}

static bool node_event_live(const struct sim_world *w,
                            const struct sim_event *ev)
{
    const struct sim_node *n = &w->nodes[ev->node];
    return n->up && n->incarnation == ev->incarnation;
}

static void dispatch(struct sim_world *w, const struct sim_event *ev)
{
    switch (ev->type) {
    case SIM_EV_DELIVER: deliver(w, &ev->msg); break;
    case SIM_EV_SYNC_DONE:
        if (node_event_live(w, ev)) {
            sim_node_sync_done(w, &w->nodes[ev->node]);
        }
        break;
    case SIM_EV_NODE_TIMER:
        if (node_event_live(w, ev)) {
            sim_node_on_timer(w, &w->nodes[ev->node], ev->timer, ev->token);
        }
        break;
    case SIM_EV_CONTROLLER_TICK: sim_controller_tick(w); break;
    case SIM_EV_PRODUCE_TICK: produce_tick(w); break;
    case SIM_EV_CONSUME_TICK: consume_tick(w); break;
    case SIM_EV_CRASH:
        if (w->nodes[ev->node].up) {
            sim_crash(w, ev->node);
        }
        break;
    case SIM_EV_FAULT: fault_tick(w); break;
    case SIM_EV_RESTART:
        if (!w->nodes[ev->node].up) {
            sim_node_restart(w, &w->nodes[ev->node]);
        }
        break;
    case SIM_EV_ELECT: move_leader(w); break;
    case SIM_EV_HEAL:
        w->isolated[ev->node] = false;
        sim_trace(w, "node %d reachable again", ev->node + 1);
        break;
    default: ASSERT(!"unknown event");
    }
}

/* One event, then every check. False when the run is over. */
bool sim_world_step(struct sim_world *w)
{
    if (w->failed || w->n_heap == 0 || w->heap[0].at_ms > w->end_ms) {
        return false;
    }
    struct sim_event ev;
    heap_pop(w, &ev);
    ASSERT(ev.at_ms >= w->now_ms);
    w->now_ms = ev.at_ms;
    w->step++;
    dispatch(w, &ev);
    sim_check(w);
    return true;
}
