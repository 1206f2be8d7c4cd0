/* Leader election and fencing (controller/plan.h): which broker may lead
 * a partition (the first acceptable ISR member in replica order, or with
 * unclean election any live replica), taking a fenced or shutting-down
 * broker out of ISRs and leaderships (never leaving an ISR empty: the
 * last member stays and the partition goes offline), elections when a
 * broker is unfenced, and the periodic retry for leaderless partitions.
 * Pure and deterministic; loop thread of the active controller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/topic_config.h"
#include "controller/plan.h"
#include "controller/plan_internal.h"

/* --- Leader election ---------------------------------------------------- */

bool plan_broker_acceptable(const struct meta_image *img, int32_t id,
                            int32_t excluded, int32_t extra_acceptable)
{
    if (id < 0 || id == excluded) {
        return false;
    }
    const struct meta_broker *b = meta_image_broker(img, id);
    if (b == NULL || b->in_controlled_shutdown) {
        return false;
    }
    return !b->fenced || id == extra_acceptable;
}

struct plan_election plan_elect_leader(const struct meta_image *img,
                                       const struct meta_partition *p,
                                       const struct meta_replica_set *isr,
                                       int32_t excluded_broker,
                                       int32_t extra_acceptable_broker,
                                       bool unclean_allowed)
{
    int32_t ex = excluded_broker;
    int32_t extra = extra_acceptable_broker;
    bool ua = unclean_allowed;

    if (p->leader >= 0 && meta_replica_set_contains(isr, p->leader) &&
        plan_broker_acceptable(img, p->leader, ex, extra)) {
        return (struct plan_election){p->leader, false, PLAN_ELECT_KEPT, ua};
    }
    for (int32_t i = 0; i < p->replicas.n; i++) {
        int32_t r = p->replicas.ids[i];
        if (meta_replica_set_contains(isr, r) &&
            plan_broker_acceptable(img, r, ex, extra)) {
            return (struct plan_election){r, false, PLAN_ELECT_FIRST_ISR,
                                          ua};
        }
    }
    if (unclean_allowed) {
        for (int32_t i = 0; i < p->replicas.n; i++) {
            int32_t r = p->replicas.ids[i];
            if (plan_broker_acceptable(img, r, ex, extra)) {
                return (struct plan_election){r, true, PLAN_ELECT_UNCLEAN,
                                              ua};
            }
        }
    }
    return (struct plan_election){META_NO_LEADER, false, PLAN_ELECT_NONE,
                                  ua};
}

void plan_election_rule(const struct meta_partition *p,
                        const struct meta_replica_set *isr,
                        const struct plan_election *e, char *out, size_t cap)
{
    char replicas[META_REPLICAS_MAX * 12], in_sync[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->replicas, replicas, sizeof replicas);
    meta_replica_set_format(isr, in_sync, sizeof in_sync);
    switch (e->step) {
    case PLAN_ELECT_KEPT:
        snprintf(out, cap, "%s", "");
        break;
    case PLAN_ELECT_FIRST_ISR:
        snprintf(out, cap, "rule: first live ISR member of replicas %s, "
                 "chose %d", replicas, (int)e->leader);
        break;
    case PLAN_ELECT_UNCLEAN:
        snprintf(out, cap, "rule: no live ISR member (isr %s), and "
                 "unclean.leader.election.enable=true: first live replica "
                 "of replicas %s, chose %d", in_sync, replicas,
                 (int)e->leader);
        break;
    case PLAN_ELECT_NONE:
        snprintf(out, cap, "rule: no live ISR member (isr %s) of replicas "
                 "%s%s, chose none", in_sync, replicas,
                 e->unclean_allowed ? ", and no live replica to elect "
                                      "uncleanly"
                                    : ", and unclean.leader.election."
                                      "enable=false");
        break;
    }
}

/* Pushes rec, with the rule of election e (ISR isr) if it moves the
 * leader. */
static int push_elected(struct plan_records *out,
                        const struct meta_record *rec,
                        const struct meta_partition *p,
                        const struct meta_replica_set *isr,
                        const struct plan_election *e)
{
    int rv = plan_records_push(out, rec);
    if (rv == RC_OK && rec->u.partition_change.leader != META_LEADER_UNCHANGED) {
        plan_election_rule(p, isr, e, out->rules[out->n - 1],
                           PLAN_RULE_BYTES);
    }
    return rv;
}

bool plan_unclean_allowed(const struct meta_topic *t, bool unclean_default)
{
    const char *v = meta_topic_config(
        t, topic_config_name(TOPIC_CONFIG_UNCLEAN_LEADER_ELECTION_ENABLE));
    bool allowed = unclean_default;
    if (v != NULL && !config_value_bool(v, &allowed)) {
        return unclean_default; /* only an old log holds such a value */
    }
    return allowed;
}

/* --- Taking a broker out of ISRs and leaderships ------------------------ */

/* The PartitionChange that takes broker b out of p's ISR (unless it is the
 * last member) and elects another leader if b led; false when p needs no
 * change. */
static bool plan_evict_change(const struct meta_image *img,
                              const struct meta_topic *t,
                              const struct meta_partition *p, int32_t b,
                              bool unclean, struct meta_record *rec,
                              struct plan_election *e_out,
                              struct meta_replica_set *isr_out)
{
    if (!meta_replica_set_contains(&p->isr, b) && p->leader != b) {
        return false;
    }
    struct meta_replica_set target;
    plan_set_without(&p->isr, b, &target);
    if (target.n == 0) {
        target = p->isr; /* the last member stays: never an empty ISR */
    }
    struct plan_election e =
        plan_elect_leader(img, p, &target, b, PLAN_NO_BROKER, unclean);
    *e_out = e;
    *isr_out = target; /* the ISR it elected from */
    if (e.unclean) {
        plan_set_single(e.leader, &target);
    }
    bool isr_changed = !plan_set_same_members(&target, &p->isr);
    bool leader_changed = e.leader != p->leader;
    if (!isr_changed && !leader_changed) {
        return false;
    }
    plan_partition_change(rec, t, p, isr_changed ? &target : NULL,
                          leader_changed ? e.leader : META_LEADER_UNCHANGED);
    return true;
}

/* plan_evict_change() for every partition that b leads (leaders) or
 * every other one; *complete false when the batch filled first. */
static int evict_pass(const struct meta_image *img, int32_t b,
                      bool unclean_default, size_t reserve, bool leaders,
                      struct plan_records *out, size_t *n_changes,
                      bool *complete)
{
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *t = &img->topics[ti];
        bool unclean = plan_unclean_allowed(t, unclean_default);
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            struct meta_record rec;
            struct plan_election e;
            struct meta_replica_set from;
            const struct meta_partition *p = &t->partitions[pi];
            if ((p->leader == b) != leaders ||
                !plan_evict_change(img, t, p, b, unclean, &rec, &e, &from)) {
                continue;
            }
            if (plan_room(out) <= reserve) {
                out->more = true;
                *complete = false;
                return RC_OK;
            }
            int rv = push_elected(out, &rec, p, &from, &e);
            if (rv != RC_OK) {
                return rv;
            }
            (*n_changes)++;
        }
    }
    return RC_OK;
}

/* plan_evict_change() for every partition (controller/plan_internal.h):
 * b's leaderships first, then the ISRs it leaves. A broker in 100,000
 * ISRs takes ten batches to fence, and the partitions it led must not
 * wait for the last of them to be led again. */
int plan_evict(const struct meta_image *img, int32_t b,
               bool unclean_default, size_t reserve,
               struct plan_records *out, size_t *n_changes_out,
               bool *complete_out)
{
    *n_changes_out = 0;
    *complete_out = true;
    int rv = evict_pass(img, b, unclean_default, reserve, true, out,
                        n_changes_out, complete_out);
    if (rv == RC_OK && *complete_out) {
        rv = evict_pass(img, b, unclean_default, reserve, false, out,
                        n_changes_out, complete_out);
    }
    return rv;
}

/* Elections for leaderless partitions. With b != PLAN_NO_BROKER: only
 * those where b, about to be unfenced, is an acceptable leader. */
static int plan_elect_offline(const struct meta_image *img, int32_t b,
                              bool unclean_default, struct plan_records *out)
{
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *t = &img->topics[ti];
        bool unclean = plan_unclean_allowed(t, unclean_default);
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct meta_partition *p = &t->partitions[pi];
            if (p->leader != META_NO_LEADER) {
                continue;
            }
            if (b != PLAN_NO_BROKER &&
                (!meta_replica_set_contains(&p->replicas, b) ||
                 (!meta_replica_set_contains(&p->isr, b) && !unclean))) {
                continue;
            }
            struct plan_election e = plan_elect_leader(
                img, p, &p->isr, PLAN_NO_BROKER, b, unclean);
            if (e.leader == META_NO_LEADER) {
                continue;
            }
            if (plan_room(out) == 0) {
                out->more = true;
                return RC_OK;
            }
            struct meta_replica_set isr;
            plan_set_single(e.leader, &isr);
            struct meta_record rec;
            plan_partition_change(&rec, t, p, e.unclean ? &isr : NULL,
                                  e.leader);
            int rv = push_elected(out, &rec, p, &p->isr, &e);
            if (rv != RC_OK) {
                return rv;
            }
        }
    }
    return RC_OK;
}

/* --- Broker state changes ----------------------------------------------- */

/* Fencing of unfenced broker b; *fenced_out tells whether the fence record
 * made it into the batch. */
int plan_fence(const struct meta_image *img,
               const struct meta_broker *b, bool unclean_default,
               struct plan_records *out, bool *fenced_out)
{
    *fenced_out = false;
    if (plan_room(out) == 0) {
        out->more = true;
        return RC_OK;
    }
    size_t n_changes;
    bool complete;
    int rv = plan_evict(img, b->id, unclean_default, 1 /* reserve */, out,
                        &n_changes, &complete);
    if (rv != RC_OK || !complete) {
        return rv;
    }
    rv = plan_push_broker_change(out, b, 1 /* fenced */, 0);
    *fenced_out = rv == RC_OK;
    return rv;
}

/* Unfencing of fenced broker b; *unfenced_out as for plan_fence(). */
int plan_unfence(const struct meta_image *img,
                 const struct meta_broker *b, bool unclean_default,
                 struct plan_records *out, bool *unfenced_out)
{
    *unfenced_out = false;
    if (plan_room(out) == 0) {
        out->more = true;
        return RC_OK;
    }
    int rv = plan_push_broker_change(out, b, -1 /* unfenced */, 0);
    if (rv != RC_OK) {
        return rv;
    }
    *unfenced_out = true;
    return plan_elect_offline(img, b->id, unclean_default, out);
}

int plan_fence_broker(const struct meta_image *img, int32_t id,
                      bool unclean_default, struct plan_records *out)
{
    const struct meta_broker *b = meta_image_broker(img, id);
    ASSERT(b != NULL);
    if (b->fenced) {
        return RC_OK;
    }
    size_t n0 = out->n;
    bool more0 = out->more;
    bool fenced;
    int rv = plan_fence(img, b, unclean_default, out, &fenced);
    return plan_undo_on_error(out, rv, n0, more0);
}

int plan_elect_leaderless(const struct meta_image *img, bool unclean_default,
                          struct plan_records *out)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    int rv = plan_elect_offline(img, PLAN_NO_BROKER, unclean_default, out);
    return plan_undo_on_error(out, rv, n0, more0);
}
