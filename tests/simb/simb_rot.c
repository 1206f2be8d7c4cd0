/* Bit rot in the broker simulation (tests/simb/simb.h): a flipped bit in
 * a durable batch of one replica, and what the real repair rules
 * (broker/replication/repair.c) make of it: a leader never serves the
 * batch (its reads are checked, as kafka_fetch.c checks them) and hands
 * leadership to an in-sync replica; a follower's scrub finds it; either
 * leaves the ISR (LeaveLeadership, the real planner), truncates before
 * the damage and fetches it again.
 *
 * One fault at a time, as in Ganesan et al. (FAST 2017): rot is injected
 * only into a healthy cluster (every controller and broker up and
 * connected) while every replica of the partition is in the ISR and no
 * copy is damaged, and no other fault is injected until it is repaired,
 * so an acknowledged record always has an intact in-sync copy. (With a
 * second fault, say the other replicas falling out of the ISR and the
 * damaged one losing power, recovery cuts the log at the damage, as
 * Kafka's does, and acknowledged records are lost: that is two faults.) Checked: a consumer never reads a damaged batch (its CRC is
 * checked on arrival), and after the quiet tail no live replica holds
 * damage. */
#include "tests/simb/simb.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "broker/log/log_segment.h"
#include "broker/log/log_verify.h"
#include "broker/replication/repair.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"

/* Bytes the scrub reads per broker tick (log.scrub.bytes.per.second,
 * scaled to the simulation's logs). */
#define SIMB_SCRUB_BYTES 8192

static uint8_t verify_buf[REPLICA_SCRUB_BUFFER_BYTES];

struct intact {
    int64_t bad; /* the first damaged batch's offset, or -1 */
};

static void check_crc(void *arg, const uint8_t *batch,
                      const struct record_batch_header *h)
{
    struct intact *in = arg;
    if (in->bad < 0 && !record_batch_crc_ok(batch, h)) {
        in->bad = h->base_offset;
    }
}

int64_t simb_log_damage(struct log *l)
{
    struct intact in = {-1};
    if (simb_read_batches(l, 0, check_crc, &in) != RC_OK) {
        return log_start_offset(l); /* framing broken: damaged too */
    }
    return in.bad;
}

int64_t simb_verify_read(struct simb_broker *b, struct partition *p,
                         struct log_span *span)
{
    if (span->bytes == 0) {
        return 0;
    }
    struct log_verify v;
    int64_t intact = repair_check_read(p, span, verify_buf,
                                       sizeof verify_buf, &v);
    if (v.rc != RC_OK) {
        b->w->n_corrupt_found++;
        simb_trace(b->w, "broker %d: %s batch at %" PRId64 " not served: "
                   "%s", (int)b->id, simb_slots[simb_slot(p)].name,
                   v.stop_offset, rc_str(v.rc));
    }
    return intact;
}

void simb_scrub(struct simb_broker *b)
{
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        struct partition *p = b->parts[k].p;
        if (p == NULL || log_failure(p->log) != RC_OK) {
            continue;
        }
        bool done = false;
        int read_rc = RC_OK;
        int64_t before = p->corrupt_offset;
        (void)repair_scrub_partition(p, verify_buf, sizeof verify_buf,
                                     SIMB_SCRUB_BYTES, &done, &read_rc);
        if (p->corrupt_offset != before) {
            b->w->n_corrupt_found++;
        }
    }
}

/* Whether the last rot injected into partition k is gone: its replica is
 * up and holds no damage (it repaired, or recovery cut it away). */
bool simb_rot_gone(struct simb_world *w, int32_t k)
{
    int i = w->rot_broker[k];
    if (i < 0) {
        return true;
    }
    const struct simb_broker *b = &w->brokers[i];
    const struct meta_partition *mp = simb_meta_partition(&b->img, k);
    bool moved = b->up && b->parts[k].p == NULL && mp != NULL &&
                 !meta_replica_set_contains(&mp->replicas, b->id);
    if (!moved && (!b->up || b->parts[k].p == NULL ||
                   simb_log_damage(b->parts[k].p->log) >= 0)) {
        return false; /* a reassignment that moved it took its files */
    }
    w->rot_broker[k] = -1;
    return true;
}

bool simb_no_rot(struct simb_world *w)
{
    for (int32_t k = 0; k < SIMB_PARTITIONS; k++) {
        if (!simb_rot_gone(w, k)) {
            return false;
        }
    }
    return true;
}

void simb_rot_tick(struct simb_world *w)
{
    if (!simb_chance(w, w->rot_per_mille)) {
        return;
    }
    int32_t k = (int32_t)(simb_rand(w) % SIMB_PARTITIONS);
    const struct meta_partition *mp = simb_meta_partition(simb_ctl(w), k);
    if (mp == NULL || !simb_rot_gone(w, k) || !simb_healthy(w)) {
        return;
    }
    if (mp->isr.n != mp->replicas.n || mp->adding.n > 0 ||
        mp->removing.n > 0) {
        return;
    }
    for (int i = 0; i < SIMB_BROKERS; i++) { /* every copy intact */
        const struct simb_broker *o = &w->brokers[i];
        if (meta_replica_set_contains(&mp->replicas, o->id) &&
            (!o->up || o->parts[k].p == NULL ||
             simb_log_damage(o->parts[k].p->log) >= 0)) {
            return;
        }
    }
    int32_t id = mp->replicas.ids[simb_rand(w) % (uint64_t)mp->replicas.n];
    struct simb_broker *b = &w->brokers[id - 1];
    struct log *l = b->parts[k].p->log;
    int64_t durable = log_durable_end_offset(l);
    int64_t start = log_start_offset(l);
    if (durable <= start) {
        return;
    }
    int64_t offset = start + (int64_t)(simb_rand(w) %
                                       (uint64_t)(durable - start));
    struct log_span span;
    if (log_read(l, offset, 1, INT64_MAX, &span) != RC_OK ||
        span.bytes <= RECORD_BATCH_OFF_ATTRIBUTES) {
        log_span_release(&span);
        return;
    }
    /* A byte the CRC covers, so the damage can be told. */
    int64_t covered = span.bytes - (RECORD_BATCH_OFF_ATTRIBUTES);
    int64_t pos = span.position + RECORD_BATCH_OFF_ATTRIBUTES +
                  (int64_t)(simb_rand(w) % (uint64_t)covered);
    char dir[64];
    char path[128];
    snprintf(dir, sizeof dir, "/b%d/%s", (int)b->id, simb_slots[k].name);
    int rv = log_segment_path(path, sizeof path, dir, span.seg->base_offset);
    log_span_release(&span);
    if (rv != RC_OK) {
        return;
    }
    uint8_t mask = (uint8_t)(1u << (simb_rand(w) % 8));
    if (io_sim_rot(w->disk, path, pos, mask) != RC_OK) {
        return;
    }
    w->rot_broker[k] = b->idx;
    w->n_rot++;
    simb_trace(w, "bit rot on broker %d: %s near offset %" PRId64,
               (int)b->id, simb_slots[k].name, offset);
}

void simb_rot_check_end(struct simb_world *w)
{
    for (int i = 0; i < SIMB_BROKERS && !w->failed; i++) {
        struct simb_broker *b = &w->brokers[i];
        for (int32_t k = 0; b->up && k < SIMB_PARTITIONS; k++) {
            int64_t bad = b->parts[k].p != NULL
                              ? simb_log_damage(b->parts[k].p->log)
                              : -1;
            if (bad >= 0) {
                simb_fail(w, "broker %d still holds damage in %s at "
                          "offset %" PRId64 " after the quiet tail",
                          (int)b->id, simb_slots[k].name, bad);
                return;
            }
        }
    }
}
