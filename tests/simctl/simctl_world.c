/* The checks on the controllers' images (tests/simctl/simctl.h). */
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

static void check_partition(struct simctl *s, unsigned c, size_t slot,
                            const struct meta_topic *t,
                            const struct meta_partition *p)
{
    if (p->isr.n == 0) {
        fail(s, "controller %u: %s-%d has an empty ISR", c, t->name,
             p->id);
    }
    for (int32_t k = 0; k < p->isr.n; k++) {
        if (!meta_replica_set_contains(&p->replicas, p->isr.ids[k])) {
            fail(s, "controller %u: %s-%d ISR member %d is not a replica",
                 c, t->name, p->id, p->isr.ids[k]);
        }
    }
    if (p->leader != META_NO_LEADER &&
        !meta_replica_set_contains(&p->isr, p->leader)) {
        fail(s, "controller %u: %s-%d leader %d is outside its ISR",
             c, t->name, p->id, p->leader);
    }
    int32_t *leader_epoch = &s->leader_epoch[c][slot];
    int32_t *partition_epoch = &s->partition_epoch[c][slot];
    if (p->leader_epoch < *leader_epoch ||
        p->partition_epoch < *partition_epoch) {
        fail(s, "controller %u: %s-%d epochs went back: leader %d -> %d, "
             "partition %d -> %d", c, t->name, p->id,
             *leader_epoch, p->leader_epoch, *partition_epoch,
             p->partition_epoch);
    }
    *leader_epoch = p->leader_epoch;
    *partition_epoch = p->partition_epoch;
    check_leader_epoch(s, t, p);
}

void simctl_check(struct simctl *s)
{
    if (s->q.failed) {
        fail(s, "%s", s->q.why);
    }
    for (unsigned i = 0; i < SIMCTL_CONTROLLERS; i++) {
        const struct meta_image *img = meta_quorum_image(&s->q, i);
        for (size_t ti = 0; ti < img->n_topics && ti < SIMCTL_TOPICS_MAX;
             ti++) {
            const struct meta_topic *t = &img->topics[ti];
            for (int32_t pi = 0; pi < t->n_partitions && pi < 8; pi++) {
                check_partition(s, i, ti * 8 + (size_t)pi, t,
                                &t->partitions[pi]);
            }
        }
    }
}

