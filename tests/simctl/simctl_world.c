/* The controllers, their fixture and the checks (tests/simctl/simctl.h). */
#include "tests/simctl/simctl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"

static void fail(struct simctl *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct simctl *s, const char *fmt, ...)
{
    if (s->failed) {
        return;
    }
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

/* --- The wrapper around the real state machine --------------------------- */

static uint64_t fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h | 1; /* never 0: 0 means "not applied" */
}

static void note_applied(struct simctl_controller *c, raft_index index,
                         uint64_t h)
{
    struct simctl *s = c->sim;
    if (index >= c->cap_hash) {
        raft_index cap = c->cap_hash == 0 ? 1024 : c->cap_hash;
        while (cap <= index) {
            cap *= 2;
        }
        uint64_t *p = realloc(c->hash, cap * sizeof *p);
        if (p == NULL) {
            abort();
        }
        memset(p + c->cap_hash, 0, (cap - c->cap_hash) * sizeof *p);
        c->hash = p;
        c->cap_hash = cap;
    }
    if (c->hash[index] != 0) {
        fail(s, "controller %u applied index %llu twice", c->index,
             (unsigned long long)index);
    }
    c->hash[index] = h;
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        const struct simctl_controller *o = &s->ctl[i];
        if (o != c && index < o->cap_hash && o->hash[index] != 0 &&
            o->hash[index] != h) {
            fail(s, "the metadata log differs at index %llu between "
                 "controllers %u and %u", (unsigned long long)index,
                 c->index, i);
        }
    }
}

static int wrap_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                      void **result)
{
    struct simctl_controller *c = fsm->data;
    struct raft *r = raft_fixture_get(&c->sim->raft, c->index);
    note_applied(c, raft_last_applied(r) + 1, fnv(buf->base, buf->len));
    return c->meta.raft_fsm.apply(&c->meta.raft_fsm, buf, result);
}

static int wrap_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                         unsigned *n_bufs)
{
    struct simctl_controller *c = fsm->data;
    return c->meta.raft_fsm.snapshot(&c->meta.raft_fsm, bufs, n_bufs);
}

static int wrap_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    struct simctl_controller *c = fsm->data;
    return c->meta.raft_fsm.restore(&c->meta.raft_fsm, buf);
}

int simctl_controllers_init(struct simctl *s)
{
    if (raft_fixture_initialize(&s->raft) != 0) {
        return RC_NOMEM;
    }
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        struct simctl_controller *c = &s->ctl[i];
        c->sim = s;
        c->index = i;
        if (meta_fsm_init(&c->meta, NULL) != RC_OK) {
            return RC_NOMEM;
        }
        c->fsm = (struct raft_fsm){.version = c->meta.raft_fsm.version,
                                   .data = c,
                                   .apply = wrap_apply,
                                   .snapshot = wrap_snapshot,
                                   .restore = wrap_restore};
        if (raft_fixture_grow(&s->raft, &c->fsm) != 0) {
            return RC_NOMEM;
        }
    }
    struct raft_configuration conf;
    if (raft_fixture_configuration(&s->raft, SIMCTL_CONTROLLERS, &conf) !=
        0) {
        return RC_NOMEM;
    }
    int rv = raft_fixture_bootstrap(&s->raft, &conf);
    raft_configuration_close(&conf);
    for (unsigned i = 0; rv == 0 && i < SIMCTL_CONTROLLERS; i++) {
        /* Snapshots every 64 entries: a lagging controller catches up
         * by InstallSnapshot too. */
        raft_set_snapshot_threshold(raft_fixture_get(&s->raft, i), 1 << 20);
        raft_set_snapshot_trailing(raft_fixture_get(&s->raft, i), 16);
    }
    return rv == 0 && raft_fixture_start(&s->raft) == 0 ? RC_OK : RC_IO;
}

void simctl_controllers_close(struct simctl *s)
{
    raft_fixture_close(&s->raft);
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        meta_fsm_close(&s->ctl[i].meta);
        free(s->ctl[i].hash);
    }
}

/* --- The checks on every image ------------------------------------------ */

static void check_leader_epoch(struct simctl *s, const struct meta_topic *t,
                               const struct meta_partition *p)
{
    for (size_t i = 0; i < s->n_epochs; i++) {
        struct simctl_epoch *e = &s->epochs[i];
        if (e->partition == p->id && e->leader_epoch == p->leader_epoch &&
            memcmp(&e->topic, &t->id, sizeof t->id) == 0) {
            if (e->leader != p->leader) {
                fail(s, "%s-%d leader epoch %d has two leaders: %d and %d",
                     t->name, p->id, p->leader_epoch, e->leader, p->leader);
            }
            return;
        }
    }
    if (s->n_epochs == SIMCTL_EPOCHS_MAX) {
        fail(s, "more than %d leader epochs", SIMCTL_EPOCHS_MAX);
        return;
    }
    s->epochs[s->n_epochs++] = (struct simctl_epoch){
        t->id, p->id, p->leader_epoch, p->leader};
}

static void check_partition(struct simctl *s, struct simctl_controller *c,
                            size_t slot, const struct meta_topic *t,
                            const struct meta_partition *p)
{
    if (p->isr.n == 0) {
        fail(s, "controller %u: %s-%d has an empty ISR", c->index, t->name,
             p->id);
    }
    for (int32_t k = 0; k < p->isr.n; k++) {
        if (!meta_replica_set_contains(&p->replicas, p->isr.ids[k])) {
            fail(s, "controller %u: %s-%d ISR member %d is not a replica",
                 c->index, t->name, p->id, p->isr.ids[k]);
        }
    }
    if (p->leader != META_NO_LEADER &&
        !meta_replica_set_contains(&p->isr, p->leader)) {
        fail(s, "controller %u: %s-%d leader %d is outside its ISR",
             c->index, t->name, p->id, p->leader);
    }
    if (p->leader_epoch < c->leader_epoch[slot] ||
        p->partition_epoch < c->partition_epoch[slot]) {
        fail(s, "controller %u: %s-%d epochs went back: leader %d -> %d, "
             "partition %d -> %d", c->index, t->name, p->id,
             c->leader_epoch[slot], p->leader_epoch,
             c->partition_epoch[slot], p->partition_epoch);
    }
    c->leader_epoch[slot] = p->leader_epoch;
    c->partition_epoch[slot] = p->partition_epoch;
    check_leader_epoch(s, t, p);
}

void simctl_check(struct simctl *s)
{
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        struct simctl_controller *c = &s->ctl[i];
        const struct meta_image *img = &c->meta.image;
        for (size_t ti = 0; ti < img->n_topics && ti < SIMCTL_TOPICS_MAX;
             ti++) {
            const struct meta_topic *t = &img->topics[ti];
            for (int32_t pi = 0; pi < t->n_partitions && pi < 8; pi++) {
                check_partition(s, c, ti * 8 + (size_t)pi, t,
                                &t->partitions[pi]);
            }
        }
    }
}

/* At the end: controllers that applied the same index hold the same image,
 * byte for byte (their snapshots). */
void simctl_check_images(struct simctl *s)
{
    struct raft_buffer *first = NULL;
    unsigned n_first = 0;
    raft_index at = 0;
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        struct simctl_controller *c = &s->ctl[i];
        raft_index applied =
            raft_last_applied(raft_fixture_get(&s->raft, i));
        struct raft_buffer *bufs = NULL;
        unsigned n = 0;
        if (c->meta.raft_fsm.snapshot(&c->meta.raft_fsm, &bufs, &n) != 0) {
            fail(s, "controller %u: snapshot failed", i);
            return;
        }
        if (first == NULL) {
            first = bufs;
            n_first = n;
            at = applied;
            continue;
        }
        if (applied != at) {
            fail(s, "controller %u applied %llu, controller 0 %llu, after "
                 "the quiet tail", i, (unsigned long long)applied,
                 (unsigned long long)at);
        }
        bool same = n == n_first;
        for (unsigned k = 0; same && k < n; k++) {
            same = bufs[k].len == first[k].len &&
                   memcmp(bufs[k].base, first[k].base, bufs[k].len) == 0;
        }
        if (!same) {
            fail(s, "controllers 0 and %u applied index %llu but hold "
                 "different images", i, (unsigned long long)at);
        }
        for (unsigned k = 0; k < n; k++) {
            raft_free(bufs[k].base);
        }
        raft_free(bufs);
    }
    for (unsigned k = 0; k < n_first; k++) {
        raft_free(first[k].base);
    }
    raft_free(first);
}
