/* The broker simulation's clients and the checks made after every step
 * (tests/simb/simb.h).
 *
 * The producer sends one record at a time per partition to the leader
 * the controller names, each request with acks=all, 1 or 0 in the
 * seed's mix; only acks=all answers are promises. The consumer reads
 * each partition from its leader up to the high watermark, over and
 * over, now and then from the start again.
 *
 * Checked:
 *   - every acknowledged (acks=all) record and every consumed record is
 *     in the log of every leader when it is elected and at the end, as
 *     it was produced or first read (records below the HW are
 *     committed: no election may lose them);
 *   - a record read again is the record read before;
 *   - after every step, on every broker: the HW never passes the log
 *     end; a leader's HW never goes back while it leads at one epoch; a
 *     leader is in its ISR, and its ISR (committed and pending) within
 *     the replicas; no two brokers lead a partition at the same epoch;
 *     and in the active controller's image each ISR is within the
 *     replicas and holds the leader. */
#include "tests/simb/simb.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"

/* --- Partitions -------------------------------------------------------------- */

const char *const simb_topics[SIMB_TOPICS] = {"t", "u"};

const struct simb_slot simb_slots[SIMB_PARTITIONS] = {
    {"t-0", "t", 0, 0},
    {"t-1", "t", 0, 1},
    {"u-0", "u", 1, 0},
};

int32_t simb_slot(const struct partition *p)
{
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        if (p->id == simb_slots[k].id &&
            strcmp(p->topic, simb_slots[k].topic) == 0) {
            return k;
        }
    }
    ASSERT_UNREACHABLE("a partition the simulation does not know");
    return -1;
}

const struct meta_partition *simb_meta_partition(const struct meta_image *img,
                                                 int32_t k)
{
    const struct meta_topic *t = meta_image_topic(img, simb_slots[k].topic);
    if (t == NULL || simb_slots[k].id >= t->n_partitions) {
        return NULL;
    }
    return &t->partitions[simb_slots[k].id];
}

/* --- The producer ---------------------------------------------------------- */

static int16_t pick_acks(struct simb_world *w)
{
    int64_t r = (int64_t)(simb_rand(w) % 1000);
    if (r < w->acks0_per_mille) {
        return 0;
    }
    return r < w->acks0_per_mille + w->acks1_per_mille ? 1 : -1;
}

void simb_produce(struct simb_world *w, int32_t partition)
{
    const struct meta_partition *mp = simb_meta_partition(simb_ctl(w),
                                                          partition);
    if (w->produce_out[partition] &&
        w->now_ms - w->produce_sent_ms[partition] > 1000) {
        w->produce_out[partition] = false; /* request.timeout.ms */
    }
    if (mp == NULL || w->produce_out[partition]) {
        return;
    }
    int32_t leader = mp->leader;
    if (leader == META_NO_LEADER) {
        return;
    }
    int16_t acks = pick_acks(w);
    w->produce_out[partition] = acks != 0; /* acks=0: nothing comes back */
    w->produce_sent_ms[partition] = w->now_ms;
    w->produce_req[partition] = ++w->next_req;
    w->n_produced++;
    simb_send(w, &(struct simb_msg){.type = SIMB_PRODUCE,
                                    .from = SIMB_PRODUCER,
                                    .to = leader - 1,
                                    .partition = partition,
                                    .acks = acks,
                                    .value = ++w->next_value,
                                    .req = w->produce_req[partition]});
}

void simb_on_produce_rsp(struct simb_world *w, const struct simb_msg *m)
{
    if (m->req == w->produce_req[m->partition]) {
        w->produce_out[m->partition] = false;
        if (w->now_ms < SIMB_RUN_MS) {
            simb_produce(w, m->partition); /* the next at once */
        }
    }
    if (m->error != KAFKA_ERROR_NONE) {
        w->n_refused++;
        return;
    }
    if (m->acks != -1) {
        w->n_acked_weak++;
        return; /* acks=1: no promise past the leader */
    }
    size_t *n = &w->n_acks[m->partition];
    if (*n < SIMB_ACKS_MAX) {
        w->acks[m->partition][(*n)++] =
            (struct simb_ack){m->offset, m->value};
    }
}

/* --- The consumer ---------------------------------------------------------- */

void simb_consume(struct simb_world *w, int32_t partition)
{
    const struct meta_partition *mp = simb_meta_partition(simb_ctl(w),
                                                          partition);
    if (w->consume_out[partition] &&
        w->now_ms - w->consume_sent_ms[partition] > 1000) {
        w->consume_out[partition] = false;
    }
    if (mp == NULL || w->consume_out[partition]) {
        return;
    }
    int32_t leader = mp->leader;
    if (leader == META_NO_LEADER) {
        return;
    }
    if (simb_chance(w, 5)) {
        w->consume_next[partition] = 0; /* a new consumer, from the start */
    }
    w->consume_out[partition] = true;
    w->consume_sent_ms[partition] = w->now_ms;
    simb_send(w, &(struct simb_msg){.type = SIMB_CONSUME,
                                    .from = SIMB_CONSUMER,
                                    .to = leader - 1,
                                    .partition = partition,
                                    .offset = w->consume_next[partition],
                                    .req = ++w->next_req});
}

/* What is remembered of a record: its CRC, flagged as seen. */
static uint64_t seen_key(const struct record_batch_header *h)
{
    return (uint64_t)1 << 32 | h->crc;
}

void simb_on_consume_rsp(struct simb_world *w, const struct simb_msg *m)
{
    int32_t k = m->partition;
    w->consume_out[k] = false;
    if (m->error != KAFKA_ERROR_NONE || m->offset != w->consume_next[k]) {
        return;
    }
    for (size_t pos = 0; pos < m->len;) {
        struct record_batch_header h;
        if (record_batch_parse(m->bytes + pos, m->len - pos, &h) != RC_OK ||
            (size_t)record_batch_size(&h) > m->len - pos ||
            !record_batch_crc_ok(m->bytes + pos, &h)) {
            simb_fail(w, "the consumer read a batch of %s at %" PRId64
                      " that does not check", simb_slots[k].name, m->offset);
            return;
        }
        if (h.base_offset >= m->hw) {
            simb_fail(w, "the consumer read %s offset %" PRId64 " at or "
                      "past the high watermark %" PRId64, simb_slots[k].name,
                      h.base_offset, m->hw);
            return;
        }
        if (h.base_offset >= 0 && h.base_offset < SIMB_OFFSETS_MAX) {
            uint64_t *was = &w->consumed[k][h.base_offset];
            if (*was != 0 && *was != seen_key(&h)) {
                simb_fail(w, "a consumed record changed: %s offset %"
                          PRId64 " read again from broker %d",
                          simb_slots[k].name,
                          h.base_offset, m->from + 1);
                return;
            }
            if (*was == 0) {
                w->n_consumed++;
            }
            *was = seen_key(&h);
        }
        pos += (size_t)record_batch_size(&h);
        w->consume_next[k] = record_batch_last_offset(&h) + 1;
    }
}

/* --- Acknowledged and consumed records in a leader's log ------------------ */

struct found {
    const struct simb_ack *acks;
    size_t n;
    size_t next;      /* the first ack not yet found */
    const uint64_t *consumed;
    uint8_t *held;    /* consumed offsets found, by offset */
    const char *bad;  /* why the log lost one, or NULL */
    int64_t at;
    int64_t damaged;  /* the first batch whose CRC fails, or -1 */
};

static void each_batch(void *arg, const uint8_t *batch,
                       const struct record_batch_header *h)
{
    struct found *f = arg;
    if (f->damaged >= 0) {
        return; /* past damage, even the offsets may lie */
    }
    if (!record_batch_crc_ok(batch, h)) {
        f->damaged = h->base_offset;
        return;
    }
    while (f->next < f->n && f->acks[f->next].offset < h->base_offset) {
        f->bad = f->bad != NULL ? f->bad : "an acknowledged record is gone";
        f->at = f->acks[f->next].offset;
        f->next++;
    }
    if (f->next < f->n && f->acks[f->next].offset == h->base_offset) {
        struct built_batch bb = batch_build(1, 8, 1000,
                                            f->acks[f->next].value);
        if (!batch_same_payload(batch, &bb) && f->bad == NULL) {
            f->bad = "an acknowledged record changed";
            f->at = h->base_offset;
        }
        built_batch_free(&bb);
        f->next++;
    }
    int64_t o = h->base_offset;
    if (o >= 0 && o < SIMB_OFFSETS_MAX && f->consumed[o] != 0) {
        f->held[o] = 1;
        if (f->consumed[o] != seen_key(h) && f->bad == NULL) {
            f->bad = "a consumed record changed";
            f->at = o;
        }
    }
}

static int by_offset(const void *a, const void *b)
{
    int64_t x = ((const struct simb_ack *)a)->offset;
    int64_t y = ((const struct simb_ack *)b)->offset;
    return (x > y) - (x < y);
}

/* The first consumed offset f's log does not hold, or -1. */
static int64_t consumed_missing(const struct found *f)
{
    for (int64_t o = 0; o < SIMB_OFFSETS_MAX; o++) {
        if (f->consumed[o] != 0 && !f->held[o]) {
            return o;
        }
    }
    return -1;
}

void simb_check_acked(struct simb_world *w, const struct simb_broker *b,
                      int32_t partition)
{
    const struct partition *p = b->parts[partition].p;
    /* Answers come back in any order (a request given up on may still be
     * answered): by offset. */
    qsort(w->acks[partition], w->n_acks[partition],
          sizeof w->acks[partition][0], by_offset);
    size_t n = 0; /* an answer delivered twice is one promise */
    for (size_t i = 0; i < w->n_acks[partition]; i++) {
        const struct simb_ack *a = &w->acks[partition][i];
        if (n == 0 || a->offset != w->acks[partition][n - 1].offset ||
            a->value != w->acks[partition][n - 1].value) {
            w->acks[partition][n++] = *a;
        }
    }
    w->n_acks[partition] = n;
    if (p == NULL) {
        return;
    }
    static uint8_t held[SIMB_OFFSETS_MAX];
    memset(held, 0, sizeof held);
    struct found f = {w->acks[partition], w->n_acks[partition], 0,
                      w->consumed[partition], held, NULL, -1, -1};
    if (simb_read_batches(p->log, 0, each_batch, &f) != RC_OK) {
        simb_fail(w, "broker %d cannot read t-%d back", (int)b->id,
                  (int)partition);
        return;
    }
    if (f.damaged >= 0) {
        /* A damaged copy is elected only while its damage is unfound
         * (it never serves it, and leaves once it knows); what lies past
         * the damage is not judged. Damage no injected rot explains is a
         * write that did not last. */
        if (f.bad == NULL && w->rot_broker[partition] != b->idx) {
            f.bad = "damage no injected fault explains";
            f.at = f.damaged;
        }
    } else {
        if (f.bad == NULL && f.next < f.n) {
            f.bad = "an acknowledged record is past its log end";
            f.at = f.acks[f.next].offset;
        }
        if (f.bad == NULL && (f.at = consumed_missing(&f)) >= 0) {
            f.bad = "a consumed record is gone";
        }
    }
    if (f.bad != NULL) {
        simb_fail(w, "%s: %s offset %" PRId64 ", leader %d at epoch %d "
                  "(log end %" PRId64 ")", f.bad, simb_slots[partition].name,
                  f.at,
                  (int)b->id, p->leader_epoch, log_end_offset(p->log));
    }
}

/* --- After every step ------------------------------------------------------- */

static void check_leader(struct simb_world *w, struct simb_broker *b,
                         struct simb_part *sp)
{
    const struct partition *p = sp->p;
    int32_t k = simb_slot(p);
    if (sp->hw_epoch == p->leader_epoch && p->hw < sp->hw_last) {
        simb_fail(w, "%s: the HW of leader %d went back from %" PRId64
                  " to %" PRId64 " at epoch %d", simb_slots[k].name,
                  (int)b->id,
                  sp->hw_last, p->hw, p->leader_epoch);
        return;
    }
    sp->hw_epoch = p->leader_epoch;
    sp->hw_last = p->hw;
    int32_t e = p->leader_epoch;
    if (e >= 0 && e < SIMB_EPOCHS_MAX) {
        int32_t *who = &w->leader_of[k][e];
        if (*who != 0 && *who != b->id) {
            simb_fail(w, "%s: brokers %d and %d both led at epoch %d",
                      simb_slots[k].name, *who, (int)b->id, e);
            return;
        }
        *who = b->id;
    }
    struct meta_replica_set max;
    isr_maximal_isr(&p->repl, &max);
    if (!meta_replica_set_contains(&p->isr, b->id) ||
        !meta_replica_set_within(&p->isr, &p->replicas) ||
        !meta_replica_set_within(&max, &p->replicas)) {
        char isr[META_REPLICAS_MAX * 12], mx[META_REPLICAS_MAX * 12];
        char reps[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->isr, isr, sizeof isr);
        meta_replica_set_format(&max, mx, sizeof mx);
        meta_replica_set_format(&p->replicas, reps, sizeof reps);
        simb_fail(w, "%s: leader %d's ISR %s (%s with the pending "
                  "change) is not within its replicas %s or lacks it",
                  simb_slots[k].name, (int)b->id, isr, mx, reps);
    }
}

static void check_image(struct simb_world *w)
{
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        const struct meta_partition *mp = simb_meta_partition(simb_ctl(w), k);
        if (mp == NULL) {
            continue;
        }
        bool led = mp->leader == META_NO_LEADER ||
                   meta_replica_set_contains(&mp->isr, mp->leader);
        if (!meta_replica_set_within(&mp->isr, &mp->replicas) ||
            mp->isr.n == 0 || !led) {
            char isr[META_REPLICAS_MAX * 12], reps[META_REPLICAS_MAX * 12];
            meta_replica_set_format(&mp->isr, isr, sizeof isr);
            meta_replica_set_format(&mp->replicas, reps, sizeof reps);
            simb_fail(w, "%s: the controller's ISR %s is not within the "
                      "replicas %s or lacks leader %d at epoch %d",
                      simb_slots[k].name, isr, reps, mp->leader,
                      mp->leader_epoch);
        }
    }
}

void simb_check_step(struct simb_world *w)
{
    for (int i = 0; i < SIMB_BROKERS && !w->failed; i++) {
        struct simb_broker *b = &w->brokers[i];
        for (int32_t k = 0; b->up && k < SIMB_PARTITIONS; k++) {
            struct simb_part *sp = &b->parts[k];
            if (sp->p == NULL) {
                continue;
            }
            if (sp->p->hw > log_end_offset(sp->p->log)) {
                simb_fail(w, "%s: broker %d's HW %" PRId64 " is past its "
                          "log end %" PRId64, simb_slots[k].name, (int)b->id,
                          sp->p->hw,
                          log_end_offset(sp->p->log));
                return;
            }
            if (partition_is_leader(sp->p)) {
                check_leader(w, b, sp);
            }
        }
    }
    if (!w->failed) {
        check_image(w);
    }
}
