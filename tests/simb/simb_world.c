/* The world of the broker simulation (tests/simb/simb.h): events, the
 * network, the controller (the real planners on one image), the producer,
 * the faults and the checks. */
#include "tests/simb/simb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"

#define SIMB_TICK_MS 50

uint64_t simb_rand(struct simb_world *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

bool simb_chance(struct simb_world *w, int per_mille)
{
    return (int)(simb_rand(w) % 1000) < per_mille;
}

void simb_fail(struct simb_world *w, const char *fmt, ...)
{
    if (w->failed) {
        return;
    }
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(w->why, sizeof w->why, "t=%" PRId64 " ", w->now_ms);
    vsnprintf(w->why + n, sizeof w->why - (size_t)n, fmt, ap);
    va_end(ap);
}

void simb_trace(struct simb_world *w, const char *fmt, ...)
{
    if (!w->trace) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("t=%" PRId64 " ", w->now_ms);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* --- Events (a binary heap by time, then order of scheduling) ------------ */

static bool before(const struct simb_event *a, const struct simb_event *b)
{
    return a->at_ms != b->at_ms ? a->at_ms < b->at_ms : a->seq < b->seq;
}

void simb_schedule(struct simb_world *w, const struct simb_event *ev)
{
    if (w->n_heap == w->cap_heap) {
        w->cap_heap = w->cap_heap == 0 ? 256 : w->cap_heap * 2;
        w->heap = realloc(w->heap, w->cap_heap * sizeof *w->heap);
        if (w->heap == NULL) {
            abort();
        }
    }
    size_t i = w->n_heap++;
    w->heap[i] = *ev;
    w->heap[i].seq = w->seq++;
    while (i > 0 && before(&w->heap[i], &w->heap[(i - 1) / 2])) {
        struct simb_event t = w->heap[i];
        w->heap[i] = w->heap[(i - 1) / 2];
        w->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct simb_event pop(struct simb_world *w)
{
    struct simb_event top = w->heap[0];
    w->heap[0] = w->heap[--w->n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1;
        size_t m = i;
        if (l < w->n_heap && before(&w->heap[l], &w->heap[m])) {
            m = l;
        }
        if (l + 1 < w->n_heap && before(&w->heap[l + 1], &w->heap[m])) {
            m = l + 1;
        }
        if (m == i) {
            break;
        }
        struct simb_event t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
    return top;
}

/* --- The network ---------------------------------------------------------- */

static bool cut_off(const struct simb_world *w, int endpoint)
{
    return endpoint < SIMB_BROKERS && w->isolated[endpoint];
}

void simb_send(struct simb_world *w, const struct simb_msg *m)
{
    bool link_cut = m->from < SIMB_BROKERS && m->to < SIMB_BROKERS &&
                    w->cut[m->from][m->to];
    if (cut_off(w, m->from) || cut_off(w, m->to) || link_cut ||
        simb_chance(w, w->drop_per_mille)) {
        free(m->bytes);
        return;
    }
    int64_t delay = 1 + (int64_t)(simb_rand(w) % (uint64_t)w->delay_max_ms);
    simb_schedule(w, &(struct simb_event){.at_ms = w->now_ms + delay,
                                          .type = SIMB_EV_DELIVER,
                                          .msg = *m});
    if (simb_chance(w, w->dup_per_mille)) { /* a retransmission */
        struct simb_msg copy = *m;
        copy.bytes = NULL;
        if (m->len > 0) {
            copy.bytes = malloc(m->len);
            if (copy.bytes == NULL) {
                abort();
            }
            memcpy(copy.bytes, m->bytes, m->len);
        }
        delay = 1 + (int64_t)(simb_rand(w) % (uint64_t)w->delay_max_ms);
        simb_schedule(w, &(struct simb_event){.at_ms = w->now_ms + delay,
                                              .type = SIMB_EV_DELIVER,
                                              .msg = copy});
    }
}

/* --- The controller: the real planners on one image ------------------------ */

/* A registered broker fetches at once to catch up past its registration
 * (membership.c), and takes its roles then. */
static void fetch_metadata(struct simb_world *w, int broker)
{
    simb_send(w, &(struct simb_msg){.type = SIMB_METADATA,
                                    .from = SIMB_CONTROLLER,
                                    .to = broker});
}

static void publish(struct simb_world *w)
{
    for (int i = 0; i < SIMB_BROKERS; i++) {
        simb_send(w, &(struct simb_msg){.type = SIMB_METADATA,
                                        .from = SIMB_CONTROLLER, .to = i});
    }
}

/* The active controller's image: the quorum leader's, or, while there is
 * none, the last leader's. */
const struct meta_image *simb_ctl(struct simb_world *w)
{
    int l = meta_quorum_leader(&w->q);
    if (l >= 0) {
        w->ctl_idx = (unsigned)l;
    }
    return meta_quorum_image(&w->q, w->ctl_idx);
}

static bool can_propose(struct simb_world *w)
{
    return meta_quorum_leader(&w->q) >= 0 && !w->q.in_flight;
}

/* An AlterPartition's answer: the partition as img has it. */
static void answer_alter(struct simb_world *w, const struct simb_pending *p,
                         const struct meta_image *img, int16_t error)
{
    const struct meta_partition *mp = simb_meta_partition(img, p->partition);
    if (error == KAFKA_ERROR_NONE && mp->leader != p->broker + 1) {
        /* As controller/handlers.c: the change completed a reassignment
         * that moved the leader. */
        error = KAFKA_ERROR_NEW_LEADER_ELECTED;
    }
    simb_send(w, &(struct simb_msg){.type = SIMB_ALTER_RSP, .req = p->req,
                                    .from = SIMB_CONTROLLER, .to = p->broker,
                                    .incarnation = p->incarnation,
                                    .partition = p->partition,
                                    .error = error,
                                    .isr = mp->isr,
                                    .partition_epoch = mp->partition_epoch});
}

/* The proposal was applied (status 0) or lost: the request waiting for it
 * is answered, and the brokers hear of the change. */
static void applied_cb(void *arg, int status, unsigned proposer)
{
    struct simb_world *w = arg;
    if (w->closing) {
        return; /* the fixture fails what is in flight as it closes */
    }
    struct simb_pending p = w->pending;
    w->pending = (struct simb_pending){.kind = SIMB_PENDING_NONE};
    const struct meta_image *img = meta_quorum_image(&w->q, proposer);
    if (status == 0) {
        publish(w);
    }
    if (p.kind == SIMB_PENDING_REGISTER && status == 0) {
        struct simb_broker *b = &w->brokers[p.broker];
        const struct meta_broker *mb = meta_image_broker(img, b->id);
        if (b->up && b->incarnation == p.incarnation && mb != NULL &&
            memcmp(&mb->incarnation, &b->uuid, sizeof b->uuid) == 0) {
            b->epoch = mb->epoch;
            b->last_heartbeat_ms = w->now_ms;
            fetch_metadata(w, p.broker);
        }
    } else if (p.kind == SIMB_PENDING_ALTER) {
        answer_alter(w, &p, img,
                     status == 0 ? p.error : KAFKA_ERROR_NOT_CONTROLLER);
    } else if (p.kind == SIMB_PENDING_LEAVE && status == 0 &&
               p.error == KAFKA_ERROR_NONE) {
        /* As controller/handlers.c: the partition as it is now. */
        const struct meta_partition *mp =
            simb_meta_partition(img, p.partition);
        simb_send(w, &(struct simb_msg){.type = SIMB_LEAVE_RSP,
                                        .from = SIMB_CONTROLLER,
                                        .to = p.broker,
                                        .incarnation = p.incarnation,
                                        .partition = p.partition,
                                        .leader_epoch = mp->leader_epoch,
                                        .partition_epoch =
                                            mp->partition_epoch});
    }
}

/* Proposes what a planner wrote, answered through applied_cb(). */
static bool commit(struct simb_world *w, struct simb_pending pending)
{
    if (w->out.n == 0 ||
        !meta_quorum_propose(&w->q, &w->out, applied_cb, w)) {
        return false;
    }
    w->pending = pending;
    return true;
}

static void on_heartbeat(struct simb_world *w, const struct simb_msg *m)
{
    struct simb_broker *b = &w->brokers[m->from];
    if (!b->up || m->incarnation != b->incarnation ||
        meta_quorum_leader(&w->q) < 0) {
        return;
    }
    const struct meta_image *img = simb_ctl(w);
    plan_records_clear(&w->out);
    if (b->epoch < 0) {
        struct meta_rec_register_broker rq = {.broker_id = b->id,
                                              .incarnation = b->uuid,
                                              .port = 9092};
        int16_t error = 0;
        int64_t epoch = -1;
        /* As controller/sessions.c tells the handler: the registered
         * incarnation still has a live session (it heartbeated within
         * the session timeout), so a new one is refused until the old
         * one is fenced and its partitions are led by others. */
        const struct meta_broker *mb = meta_image_broker(img, b->id);
        bool other_alive = mb != NULL && !mb->fenced &&
                           memcmp(&mb->incarnation, &b->uuid,
                                  sizeof b->uuid) != 0 &&
                           w->now_ms - b->last_heartbeat_ms <=
                               SIMB_SESSION_MS;
        if (!can_propose(w) ||
            plan_register_broker(img, &rq, other_alive, &w->out, &error,
                                 &epoch) != RC_OK ||
            error != KAFKA_ERROR_NONE) {
            return;
        }
        if (w->out.n == 0) { /* a retry of what is registered */
            b->epoch = epoch;
            b->last_heartbeat_ms = w->now_ms;
            fetch_metadata(w, m->from);
            return;
        }
        (void)commit(w, (struct simb_pending){.kind = SIMB_PENDING_REGISTER,
                                              .broker = m->from,
                                              .incarnation = b->incarnation});
        return;
    }
    struct plan_heartbeat_req rq = {.broker_id = b->id,
                                    .broker_epoch = b->epoch,
                                    .current_metadata_offset = m->offset};
    struct plan_heartbeat_result res;
    if (plan_heartbeat(img, &rq, false, &w->out, &res) != RC_OK) {
        return;
    }
    if (res.error != KAFKA_ERROR_NONE) {
        b->epoch = -1;
        return;
    }
    b->last_heartbeat_ms = w->now_ms; /* the session lives, whatever else */
    if (can_propose(w)) {
        (void)commit(w, (struct simb_pending){0});
    }
}

static void on_alter(struct simb_world *w, const struct simb_msg *m)
{
    struct simb_broker *b = &w->brokers[m->from];
    struct simb_pending pending = {.kind = SIMB_PENDING_ALTER,
                                   .broker = m->from,
                                   .incarnation = m->incarnation,
                                   .partition = m->partition,
                                   .req = m->req};
    if (!can_propose(w)) {
        /* One change at a time: the leader asks again later. */
        answer_alter(w, &pending, simb_ctl(w), KAFKA_ERROR_NOT_CONTROLLER);
        return;
    }
    struct plan_alter_partition_req rq = {
        .broker_id = b->id,
        .broker_epoch = b->epoch,
        .topic_id = w->topic_id[simb_slots[m->partition].topic_idx],
        .partition = simb_slots[m->partition].id,
        .leader_epoch = m->leader_epoch,
        .partition_epoch = m->partition_epoch,
        .new_isr = m->isr.ids,
        .n_new_isr = (size_t)m->isr.n};
    plan_records_clear(&w->out);
    if (plan_alter_partition(simb_ctl(w), &rq, &w->out, &pending.error) !=
        RC_OK) {
        return;
    }
    if (!commit(w, pending)) { /* nothing to change, or an error */
        answer_alter(w, &pending, simb_ctl(w), pending.error);
    }
}

/* LeaveLeadership from a replica whose log is damaged (controller/
 * plan_repair.c). */
static void on_leave(struct simb_world *w, const struct simb_msg *m)
{
    struct simb_broker *b = &w->brokers[m->from];
    if (!can_propose(w)) {
        return; /* it asks again */
    }
    const struct simb_slot *slot = &simb_slots[m->partition];
    struct plan_leave_leadership_req rq = {
        .broker_id = b->id,
        .broker_epoch = b->epoch,
        .topic_id = w->topic_id[slot->topic_idx],
        .partition = slot->id,
        .leader_epoch = m->leader_epoch};
    struct simb_pending pending = {.kind = SIMB_PENDING_LEAVE,
                                   .broker = m->from,
                                   .incarnation = m->incarnation,
                                   .partition = m->partition};
    plan_records_clear(&w->out);
    if (plan_leave_leadership(simb_ctl(w), &rq, &w->out, &pending.error) ==
        RC_OK) {
        (void)commit(w, pending); /* refused: it asks again */
    }
}

/* Sessions that lapsed are fenced; leaderless partitions get a leader.
 * A new active controller gives every broker a fresh session. */
static void controller_tick(struct simb_world *w)
{
    int l = meta_quorum_leader(&w->q);
    for (int i = 0; l != w->last_leader && i < SIMB_BROKERS; i++) {
        w->brokers[i].last_heartbeat_ms = w->now_ms;
    }
    w->last_leader = l;
    if (!can_propose(w)) {
        return;
    }
    const struct meta_image *img = simb_ctl(w);
    for (int i = 0; i < SIMB_BROKERS; i++) {
        struct simb_broker *b = &w->brokers[i];
        const struct meta_broker *mb = meta_image_broker(img, b->id);
        if (mb != NULL && !mb->fenced &&
            w->now_ms - b->last_heartbeat_ms > SIMB_SESSION_MS) {
            plan_records_clear(&w->out);
            if (plan_fence_broker(img, b->id, false, &w->out) == RC_OK &&
                commit(w, (struct simb_pending){0})) {
                simb_trace(w, "fence broker %d", (int)b->id);
                return;
            }
        }
    }
    plan_records_clear(&w->out);
    if (plan_elect_leaderless(img, false, &w->out) == RC_OK) {
        (void)commit(w, (struct simb_pending){0});
    }
}

/* The next topic not yet created, one at a time: t (two partitions),
 * then u (one). */
static void create_topics(struct simb_world *w)
{
    int i = 0;
    while (i < SIMB_TOPICS &&
           meta_image_topic(simb_ctl(w), simb_topics[i]) != NULL) {
        i++;
    }
    if (i == SIMB_TOPICS || !can_propose(w)) {
        return;
    }
    int32_t n = 0;
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        n += simb_slots[k].topic_idx == i;
    }
    struct plan_topic_req rq = {.name = simb_topics[i],
                                .num_partitions = n,
                                .replication_factor = SIMB_RF};
    rq.id.b[0] = (uint8_t)(0x7 + i);
    w->topic_id[i] = rq.id;
    struct plan_topic_defaults defaults = {1, 3};
    struct plan_topic_result res;
    plan_records_clear(&w->out);
    if (plan_create_topics(simb_ctl(w), &rq, 1, &defaults, false, &w->out,
                           &res) != RC_OK ||
        res.error != KAFKA_ERROR_NONE) {
        return;
    }
    (void)commit(w, (struct simb_pending){0});
}

/* What a log holds below an offset: each batch's base offset, epoch and
 * CRC, in order. */
struct held {
    int64_t below;
    int64_t base[SIMB_ACKS_MAX];
    uint64_t sum[SIMB_ACKS_MAX];
    size_t n;
};

static void hold(void *arg, const uint8_t *batch,
                 const struct record_batch_header *h)
{
    struct held *hd = arg;
    (void)batch;
    if (h->base_offset < hd->below && hd->n < SIMB_ACKS_MAX) {
        hd->base[hd->n] = h->base_offset;
        hd->sum[hd->n++] = (uint64_t)h->crc << 32 |
                           (uint32_t)h->partition_leader_epoch;
    }
}

/* At the end: every ISR member holds the leader's batches below the
 * leader's high watermark. */
static void check_agreement(struct simb_world *w, int32_t k)
{
    const struct meta_partition *mp = simb_meta_partition(simb_ctl(w), k);
    const struct partition *lp = w->brokers[mp->leader - 1].parts[k].p;
    static struct held want;
    static struct held got;
    if (lp == NULL) {
        simb_fail(w, "%s is led by broker %d, which does not host it",
                  simb_slots[k].name, mp->leader);
        return;
    }
    want = (struct held){.below = lp->hw};
    if (simb_read_batches(lp->log, 0, hold, &want) != RC_OK) {
        simb_fail(w, "the leader of %s cannot read its log",
                  simb_slots[k].name);
        return;
    }
    for (int32_t r = 0; r < mp->isr.n; r++) {
        const struct partition *fp =
            w->brokers[mp->isr.ids[r] - 1].parts[k].p;
        if (fp == NULL || fp == lp) {
            continue;
        }
        got = (struct held){.below = lp->hw};
        if (simb_read_batches(fp->log, 0, hold, &got) != RC_OK ||
            got.n != want.n ||
            memcmp(got.base, want.base, want.n * sizeof want.base[0]) != 0 ||
            memcmp(got.sum, want.sum, want.n * sizeof want.sum[0]) != 0) {
            size_t at = 0;
            while (at < got.n && at < want.n &&
                   got.base[at] == want.base[at] &&
                   got.sum[at] == want.sum[at]) {
                at++;
            }
            simb_fail(w, "%s: replica %d differs from leader %d below "
                      "the high watermark %" PRId64 ": batch %zu of %zu/%zu"
                      " is at %" PRId64 " (crc, epoch %" PRIx64 ") there, "
                      "at %" PRId64 " (%" PRIx64 ") on the leader",
                      simb_slots[k].name,
                      mp->isr.ids[r], mp->leader, lp->hw, at, got.n, want.n,
                      at < got.n ? got.base[at] : -1,
                      at < got.n ? got.sum[at] : 0,
                      at < want.n ? want.base[at] : -1,
                      at < want.n ? want.sum[at] : 0);
            return;
        }
    }
}

/* --- Faults and the run -------------------------------------------------- */

static void crash(struct simb_world *w, struct simb_broker *b,
                  bool power_loss)
{
    if (!b->up) {
        return;
    }
    simb_trace(w, "broker %d %s", (int)b->id,
               power_loss ? "loses power" : "exits");
    simb_broker_crash(b, power_loss);
    w->n_crashes++;
    b->restart_ms = w->now_ms + 200 + (int64_t)(simb_rand(w) % 4000);
}

/* A controller killed or brought back (never two down), or a link
 * between two of them cut or mended. */
static void controller_faults(struct simb_world *w)
{
    unsigned i = (unsigned)(simb_rand(w) % META_QUORUM_N);
    unsigned j = (i + 1 + (unsigned)(simb_rand(w) % 2)) % META_QUORUM_N;
    struct raft_fixture *f = &w->q.raft;
    if (simb_chance(w, w->ctl_fault_per_mille)) {
        unsigned dead = 0;
        for (unsigned k = 0; k < META_QUORUM_N; k++) {
            dead += !raft_fixture_alive(f, k);
        }
        if (raft_fixture_alive(f, i) && dead == 0) {
            raft_fixture_kill(f, i);
            w->n_controller_kills++;
        } else if (!raft_fixture_alive(f, i)) {
            raft_fixture_revive(f, i);
        }
    }
    if (simb_chance(w, w->ctl_fault_per_mille)) {
        bool cut = raft_fixture_saturated(f, i, j);
        if (cut) {
            raft_fixture_desaturate(f, i, j);
            raft_fixture_desaturate(f, j, i);
        } else {
            raft_fixture_saturate(f, i, j);
            raft_fixture_saturate(f, j, i);
        }
    }
}

bool simb_healthy(struct simb_world *w)
{
    struct raft_fixture *f = &w->q.raft;
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        if (!raft_fixture_alive(f, i)) {
            return false;
        }
        for (unsigned j = 0; j < META_QUORUM_N; j++) {
            if (i != j && raft_fixture_saturated(f, i, j)) {
                return false;
            }
        }
    }
    if (meta_quorum_leader(&w->q) < 0) {
        return false;
    }
    for (int i = 0; i < SIMB_BROKERS; i++) {
        const struct meta_broker *mb =
            meta_image_broker(simb_ctl(w), w->brokers[i].id);
        if (!w->brokers[i].up || w->brokers[i].epoch < 0 || mb == NULL ||
            mb->fenced || w->isolated[i]) {
            return false;
        }
        for (int j = 0; j < SIMB_BROKERS; j++) {
            if (w->cut[i][j]) {
                return false;
            }
        }
    }
    return true;
}

static void heal_controllers(struct simb_world *w)
{
    struct raft_fixture *f = &w->q.raft;
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        if (!raft_fixture_alive(f, i)) {
            raft_fixture_revive(f, i);
        }
        for (unsigned j = 0; j < META_QUORUM_N; j++) {
            if (i != j && raft_fixture_saturated(f, i, j)) {
                raft_fixture_desaturate(f, i, j);
            }
        }
    }
}

/* AlterPartitionReassignments: a partition to SIMB_RF brokers picked at
 * random (its leader may be among those leaving). */
static void reassign(struct simb_world *w)
{
    int32_t k = (int32_t)(simb_rand(w) % SIMB_PARTITIONS);
    if (!can_propose(w) || simb_meta_partition(simb_ctl(w), k) == NULL) {
        return;
    }
    int32_t target[SIMB_BROKERS];
    int32_t skip = 1 + (int32_t)(simb_rand(w) % SIMB_BROKERS);
    size_t n = 0;
    for (int32_t id = 1; id <= SIMB_BROKERS && n < SIMB_RF; id++) {
        if (id != skip) {
            target[n++] = id;
        }
    }
    for (size_t i = n; i > 1; i--) { /* a random preferred order */
        size_t j = (size_t)(simb_rand(w) % i);
        int32_t x = target[i - 1];
        target[i - 1] = target[j];
        target[j] = x;
    }
    struct plan_reassignment rq = {
        .topic = simb_slots[k].topic,
        .partition = simb_slots[k].id,
        .replicas = target,
        .n_replicas = n};
    int16_t error = 0;
    plan_records_clear(&w->out);
    if (plan_alter_reassignments(simb_ctl(w), &rq, 1, &w->out, &error) ==
            RC_OK &&
        error == KAFKA_ERROR_NONE &&
        commit(w, (struct simb_pending){0})) {
        w->n_reassignments++;
        simb_trace(w, "reassign %s", simb_slots[k].name);
    }
}

static void faults(struct simb_world *w)
{
    if (!simb_no_rot(w)) {
        return; /* one fault at a time (simb_rot.c) */
    }
    controller_faults(w);
    simb_rot_tick(w);
    if (simb_chance(w, w->reassign_per_mille)) {
        reassign(w);
    }
    int i = (int)(simb_rand(w) % SIMB_BROKERS);
    struct simb_broker *b = &w->brokers[i];
    if (simb_chance(w, w->crash_per_mille)) {
        crash(w, b, true);
    }
    if (b->up && simb_chance(w, w->disk_per_mille)) {
        /* One call of this broker's disk fails: a sync (EIO, fsyncgate
         * semantics on the simulated disk) or a write (EIO or full). */
        struct io_fault f = {.kind = IO_FAULT_ERRNO, .times = 1};
        unsigned pick = (unsigned)(simb_rand(w) % 3);
        f.op = pick == 0 ? IO_OP_SYNC : IO_OP_WRITE;
        f.err = pick == 2 ? ENOSPC : EIO;
        snprintf(f.path, sizeof f.path, "/b%d/", (int)b->id);
        if (io_fault_add(&f) == RC_OK) {
            w->n_disk_faults++;
        }
    }
    if (simb_chance(w, w->isolate_per_mille)) {
        w->isolated[i] = !w->isolated[i];
    }
    if (simb_chance(w, w->cut_per_mille)) {
        int j = (i + 1 + (int)(simb_rand(w) % (SIMB_BROKERS - 1))) %
                SIMB_BROKERS;
        w->cut[i][j] = w->cut[j][i] = !w->cut[i][j];
        if (w->cut[i][j] && simb_chance(w, 500)) {
            /* The worst moment: one side of the cut lags while it is
             * still in the ISR, and the other dies (jepsen/'s
             * partition-then-kill). */
            simb_schedule(w, &(struct simb_event){
                                 .at_ms = w->now_ms + 500 +
                                          (int64_t)(simb_rand(w) % 4000),
                                 .type = SIMB_EV_CRASH,
                                 .broker = simb_chance(w, 500) ? i : j});
        }
    }
}

static void tick(struct simb_world *w, bool faulty)
{
    if (faulty) {
        faults(w);
    }
    for (int i = 0; i < SIMB_BROKERS; i++) {
        struct simb_broker *b = &w->brokers[i];
        if (!b->up && w->now_ms >= b->restart_ms) {
            simb_trace(w, "broker %d starts", (int)b->id);
            simb_broker_start(b);
            publish(w);
        }
        simb_broker_tick(b);
        if (b->up && b->img.offset < simb_ctl(w)->offset) {
            /* A broker behind the controller fetches the metadata again
             * (membership.c polls; a push can be lost). */
            simb_send(w, &(struct simb_msg){.type = SIMB_METADATA,
                                            .from = SIMB_CONTROLLER,
                                            .to = i});
        }
    }
    controller_tick(w);
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        simb_produce(w, k);
        simb_consume(w, k);
    }
}

static void deliver(struct simb_world *w, struct simb_msg *m)
{
    if (m->to == SIMB_CONTROLLER) {
        if (m->type == SIMB_HEARTBEAT) {
            on_heartbeat(w, m);
        } else if (m->type == SIMB_ALTER) {
            on_alter(w, m);
        } else if (m->type == SIMB_LEAVE) {
            on_leave(w, m);
        }
    } else if (m->to == SIMB_PRODUCER) {
        simb_on_produce_rsp(w, m);
    } else if (m->to == SIMB_CONSUMER) {
        simb_on_consume_rsp(w, m);
    } else {
        struct simb_broker *b = &w->brokers[m->to];
        if (b->up && (m->from == SIMB_CONTROLLER ||
                      m->from == SIMB_PRODUCER ||
                      m->from == SIMB_CONSUMER ||
                      m->type == SIMB_FETCH || m->type == SIMB_EPOCH ||
                      m->incarnation == b->incarnation)) {
            simb_broker_receive(b, m);
        }
        if (m->type == SIMB_PRODUCE && !b->up) {
            w->produce_out[m->partition] = false; /* no answer: retry */
        }
        if (m->type == SIMB_CONSUME && !b->up) {
            w->consume_out[m->partition] = false;
        }
    }
    free(m->bytes);
}

static void dispatch(struct simb_world *w, struct simb_event *ev)
{
    struct simb_broker *b = &w->brokers[ev->broker];
    switch (ev->type) {
    case SIMB_EV_DELIVER:
        deliver(w, &ev->msg);
        break;
    case SIMB_EV_SYNC:
        if (b->up && ev->incarnation == b->incarnation) {
            simb_broker_sync(b);
        }
        break;
    case SIMB_EV_FETCH:
        if (b->up && ev->incarnation == b->incarnation) {
            simb_broker_fetcher_tick(b, ev->partition);
        }
        break;
    case SIMB_EV_ALTER_TIMEOUT:
        if (b->up && ev->incarnation == b->incarnation) {
            simb_broker_alter_timeout(b, ev->partition, ev->msg.req);
        }
        break;
    case SIMB_EV_CRASH:
        if (ev->msg.req == 1) { /* its log dir failed: it exits */
            if (ev->incarnation == b->incarnation) {
                crash(w, b, false);
            }
        } else if (w->now_ms < SIMB_RUN_MS && simb_no_rot(w)) {
            crash(w, b, true); /* not while rot is out: one at a time */
        }
        break;
    case SIMB_EV_TICK:
        break;
    }
    for (int i = 0; i < SIMB_BROKERS; i++) {
        if (w->brokers[i].up) {
            uv_run(&w->brokers[i].loop, UV_RUN_NOWAIT);
        }
    }
}

/* Each controller's Raft state, for a trace that ends unsettled. */
static void trace_controllers(struct simb_world *w)
{
    for (unsigned i = 0; w->trace && i < META_QUORUM_N; i++) {
        struct raft *r = raft_fixture_get(&w->q.raft, i);
        simb_trace(w, "controller %u: state %d term %llu last %llu stored "
                   "%llu commit %llu applied %llu snapshot %llu",
                   i + 1, r->state, (unsigned long long)r->current_term,
                   (unsigned long long)raft_last_index(r),
                   (unsigned long long)r->last_stored,
                   (unsigned long long)r->commit_index,
                   (unsigned long long)r->last_applied,
                   (unsigned long long)r->log.snapshot.last_index);
        for (unsigned j = 0; r->state == RAFT_LEADER && j < META_QUORUM_N;
             j++) {
            struct raft_progress *pr = &r->leader_state.progress[j];
            simb_trace(w, "  progress of %u: state %u next %llu match %llu "
                       "snapshot %llu last_send %llu", j + 1, pr->state,
                       (unsigned long long)pr->next_index,
                       (unsigned long long)pr->match_index,
                       (unsigned long long)pr->snapshot_index,
                       (unsigned long long)pr->last_send);
        }
    }
}

/* Every partition led by a live broker with its whole replica set in the
 * ISR, and that leader holding every acknowledged record. */
static bool settled(struct simb_world *w, char *why, size_t cap)
{
    int stopped = meta_quorum_unavailable(&w->q);
    if (stopped >= 0) {
        snprintf(why, cap, "libraft stopped controller %d (RAFT_UNAVAILABLE)",
                 stopped);
        return false;
    }
    if (meta_quorum_leader(&w->q) < 0 || !meta_quorum_caught_up(&w->q)) {
        snprintf(why, cap, "the controllers have no leader or lag it");
        return false;
    }
    const struct meta_image *img = simb_ctl(w);
    for (int i = 0; i < SIMB_BROKERS; i++) {
        const struct meta_broker *mb = meta_image_broker(img, i + 1);
        if (w->brokers[i].up && w->brokers[i].img.offset != img->offset) {
            snprintf(why, cap, "broker %d has not the latest metadata",
                     i + 1);
            return false;
        }
        /* The registration in the image must be the running process's:
         * a broker restarted inside its session still finds its previous
         * life unfenced there, named leader of what it no longer holds. */
        if (!w->brokers[i].up || mb == NULL || mb->fenced ||
            mb->epoch != w->brokers[i].epoch) {
            snprintf(why, cap, "broker %d is %s (epoch %" PRId64 ")", i + 1,
                     !w->brokers[i].up ? "down"
                     : mb == NULL      ? "not registered"
                     : mb->fenced      ? "fenced"
                                       : "not yet registered again",
                     w->brokers[i].epoch);
            return false;
        }
    }
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        const struct meta_partition *mp = simb_meta_partition(img, k);
        if (mp == NULL) {
            snprintf(why, cap, "no topic %s", simb_slots[k].topic);
            return false;
        }
        if (!simb_rot_gone(w, k)) {
            snprintf(why, cap, "%s: broker %d has not repaired its "
                     "damaged copy", simb_slots[k].name,
                     w->rot_broker[k] + 1);
            return false;
        }
        if (mp->leader == META_NO_LEADER || mp->isr.n != mp->replicas.n ||
            mp->adding.n > 0 || mp->removing.n > 0) {
            snprintf(why, cap, "%s: leader %d, %d of %d in the ISR, %d "
                     "adding, %d removing", simb_slots[k].name, mp->leader,
                     mp->isr.n,
                     mp->replicas.n, mp->adding.n, mp->removing.n);
            return false;
        }
    }
    return true;
}

static void swarm(struct simb_world *w)
{
    w->delay_max_ms = 2 + (int)(simb_rand(w) % 30);
    w->drop_per_mille = (int)(simb_rand(w) % 30);
    w->crash_per_mille = (int)(simb_rand(w) % 25);
    w->isolate_per_mille = (int)(simb_rand(w) % 10);
    w->cut_per_mille = (int)(simb_rand(w) % 20);
    w->disk_per_mille = (int)(simb_rand(w) % 6);
    w->ctl_fault_per_mille = (int)(simb_rand(w) % 8);
    w->reassign_per_mille = (int)(simb_rand(w) % 10);
    w->dup_per_mille = (int)(simb_rand(w) % 20);
    w->acks0_per_mille = (int)(simb_rand(w) % 150);
    w->acks1_per_mille = (int)(simb_rand(w) % 300);
    w->rot_per_mille = (int)(simb_rand(w) % 20);
}

bool simb_run(struct simb_world *w, uint64_t seed, bool trace)
{
    memset(w, 0, sizeof *w);
    w->seed = seed;
    w->rng = seed * 0x9e3779b97f4a7c15ULL | 1;
    w->trace = trace;
    swarm(w);
    if (io_sim_new(&w->disk) != RC_OK) {
        abort();
    }
    io_sim_install(w->disk);
    /* A descriptor budget smaller than the logs the brokers hold: idle
     * logs close their files and open them again when used, between the
     * faults (broker/log/log_fds.c). */
    log_fds_set_max(SIMB_LOG_FDS_MAX);
    if (meta_quorum_init(&w->q, 64) != RC_OK) {
        abort();
    }
    w->last_leader = -1;
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        w->rot_broker[k] = -1;
    }
    plan_records_init(&w->out);
    for (int i = 0; i < SIMB_BROKERS; i++) {
        simb_broker_init(w, &w->brokers[i], i);
        simb_broker_start(&w->brokers[i]);
    }
    int64_t next_tick = 0;
    int64_t settle_from = -1;
    char unsettled[256] = "";
    while (!w->failed) {
        if (w->n_heap > 0 && w->heap[0].at_ms < next_tick) {
            struct simb_event ev = pop(w);
            w->now_ms = ev.at_ms;
            dispatch(w, &ev);
            simb_check_step(w);
            continue;
        }
        w->now_ms = next_tick;
        next_tick += SIMB_TICK_MS;
        /* The controllers' fixture keeps its own clock in step. */
        raft_fixture_step_until_elapsed(&w->q.raft, SIMB_TICK_MS);
        if (w->q.failed) {
            simb_fail(w, "%s", w->q.why);
        }
        bool faulty = w->now_ms < SIMB_RUN_MS;
        if (!faulty && settle_from < 0) {
            settle_from = w->now_ms;
            memset(w->isolated, 0, sizeof w->isolated);
            io_fault_clear();
            memset(w->cut, 0, sizeof w->cut);
            heal_controllers(w);
        }
        if (simb_ctl(w)->n_brokers == SIMB_BROKERS && w->now_ms > 1000) {
            create_topics(w); /* once every broker is unfenced */
        }
        tick(w, faulty);
        simb_check_step(w);
        if (settle_from >= 0 && settled(w, unsettled, sizeof unsettled)) {
            break;
        }
        if (settle_from >= 0 && w->now_ms - settle_from > SIMB_SETTLE_MS) {
            trace_controllers(w);
            simb_fail(w, "not settled %d ms after the faults stopped: %s",
                      SIMB_SETTLE_MS, unsettled);
        }
    }
    if (!w->failed && !meta_quorum_same_images(&w->q)) {
        simb_fail(w, "%s", w->q.why);
    }
    if (!w->failed) {
        simb_rot_check_end(w);
    }
    for (int32_t k = 0; !w->failed && k < SIMB_PARTITIONS; k++) {
        int32_t leader = simb_meta_partition(simb_ctl(w), k)->leader;
        simb_check_acked(w, &w->brokers[leader - 1], k);
        check_agreement(w, k);
    }
    w->closing = true;
    while (w->n_heap > 0) {
        struct simb_event ev = pop(w);
        free(ev.msg.bytes);
    }
    free(w->heap);
    for (int i = 0; i < SIMB_BROKERS; i++) {
        simb_broker_free(&w->brokers[i]);
    }
    meta_quorum_close(&w->q);
    plan_records_free(&w->out);
    io_fault_clear();
    io_sim_uninstall();
    io_sim_free(w->disk);
    return !w->failed;
}
