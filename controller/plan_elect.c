/* Elections on request (ElectLeaders) and preferred-leader rebalancing
 * (controller/plan_elect.h). Pure and deterministic; loop thread of the
 * active controller. */
#include "controller/plan_elect.h"

#include <stdio.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_internal.h"

/* A replica the controller may make leader: in the ISR and acceptable. */
static bool valid_leader(const struct meta_image *img,
                         const struct meta_partition *p, int32_t id)
{
    return id >= 0 && meta_replica_set_contains(&p->isr, id) &&
           plan_broker_acceptable(img, id, PLAN_NO_BROKER, PLAN_NO_BROKER);
}

/* Kafka's PREFERRED election (PartitionChangeBuilder.electPreferredLeader):
 * the new leader, or p->leader / META_NO_LEADER for no change. */
static int32_t elect_preferred(const struct meta_image *img,
                               const struct meta_partition *p)
{
    if (p->replicas.n == 0) {
        return META_NO_LEADER;
    }
    if (valid_leader(img, p, p->replicas.ids[0])) {
        return p->replicas.ids[0];
    }
    if (valid_leader(img, p, p->leader)) {
        return p->leader;
    }
    for (int32_t i = 1; i < p->replicas.n; i++) {
        if (valid_leader(img, p, p->replicas.ids[i])) {
            return p->replicas.ids[i];
        }
    }
    return META_NO_LEADER;
}

static int push_change(const struct meta_topic *t,
                       const struct meta_partition *p,
                       const struct meta_replica_set *isr, int32_t leader,
                       const char *rule, struct plan_records *out,
                       int16_t *error_out)
{
    if (plan_room(out) == 0) {
        out->more = true;
        *error_out = KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED;
        return RC_OK;
    }
    struct meta_record rec;
    plan_partition_change(&rec, t, p, isr, leader);
    int rv = plan_records_push(out, &rec);
    if (rv == RC_OK) {
        plan_records_rule(out, "%s", rule);
    }
    *error_out = rv == RC_OK ? KAFKA_ERROR_NONE
                             : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    return rv;
}

/* The rule of a preferred election that chose leader. */
static void preferred_rule(const struct meta_partition *p, int32_t leader,
                           char rule[PLAN_RULE_BYTES])
{
    char replicas[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->replicas, replicas, sizeof replicas);
    if (leader == p->replicas.ids[0]) {
        snprintf(rule, PLAN_RULE_BYTES, "rule: preferred leader, the first "
                 "of replicas %s, live and in the ISR, chose %d", replicas,
                 (int)leader);
    } else {
        snprintf(rule, PLAN_RULE_BYTES, "rule: preferred replica %d not live "
                 "or not in the ISR, so the first live ISR member of "
                 "replicas %s, chose %d", (int)p->replicas.ids[0], replicas,
                 (int)leader);
    }
}

int plan_elect_partition(const struct meta_image *img, const char *topic,
                         int32_t partition, int8_t type,
                         struct plan_records *out, int16_t *error_out)
{
    const struct meta_topic *t = topic != NULL ? meta_image_topic(img, topic)
                                               : NULL;
    if (t == NULL || partition < 0 || partition >= t->n_partitions) {
        *error_out = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        return RC_OK;
    }
    const struct meta_partition *p = &t->partitions[partition];
    if (type == PLAN_ELECTION_PREFERRED) {
        if (p->replicas.n > 0 && p->leader == p->replicas.ids[0]) {
            *error_out = KAFKA_ERROR_ELECTION_NOT_NEEDED;
            return RC_OK;
        }
        int32_t leader = elect_preferred(img, p);
        if (leader == META_NO_LEADER || leader == p->leader) {
            *error_out = KAFKA_ERROR_PREFERRED_LEADER_NOT_AVAILABLE;
            return RC_OK;
        }
        char rule[PLAN_RULE_BYTES];
        preferred_rule(p, leader, rule);
        return push_change(t, p, NULL, leader, rule, out, error_out);
    }
    if (p->leader != META_NO_LEADER) {
        *error_out = KAFKA_ERROR_ELECTION_NOT_NEEDED;
        return RC_OK;
    }
    struct plan_election e = plan_elect_leader(img, p, &p->isr,
                                               PLAN_NO_BROKER, PLAN_NO_BROKER,
                                               true /* unclean */);
    if (e.leader == META_NO_LEADER) {
        *error_out = KAFKA_ERROR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
        return RC_OK;
    }
    struct meta_replica_set isr;
    plan_set_single(e.leader, &isr);
    char rule[PLAN_RULE_BYTES];
    plan_election_rule(p, &p->isr, &e, rule, sizeof rule);
    return push_change(t, p, e.unclean ? &isr : NULL, e.leader, rule, out,
                       error_out);
}

/* --- Rebalancing ---------------------------------------------------------- */

static struct plan_imbalance *imbalance_slot(struct plan_imbalance *v,
                                             size_t cap, size_t *n,
                                             int32_t broker)
{
    size_t i = 0;
    while (i < *n && v[i].broker < broker) {
        i++;
    }
    if (i < *n && v[i].broker == broker) {
        return &v[i];
    }
    if (*n == cap) {
        return NULL;
    }
    memmove(&v[i + 1], &v[i], (*n - i) * sizeof *v);
    v[i] = (struct plan_imbalance){.broker = broker};
    (*n)++;
    return &v[i];
}

void plan_imbalance_compute(const struct meta_image *img,
                            struct plan_imbalance *out, size_t cap,
                            size_t *n)
{
    *n = 0;
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *t = &img->topics[ti];
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct meta_partition *p = &t->partitions[pi];
            if (p->replicas.n == 0) {
                continue;
            }
            struct plan_imbalance *im =
                imbalance_slot(out, cap, n, p->replicas.ids[0]);
            if (im == NULL) {
                continue;
            }
            im->preferred++;
            if (p->leader != p->replicas.ids[0]) {
                im->not_preferred++;
            }
        }
    }
}

bool plan_imbalance_exceeds(const struct plan_imbalance *im,
                            int32_t percentage)
{
    if (im->preferred == 0) {
        return false;
    }
    /* not_preferred / preferred > percentage / 100, in integers. */
    return (int64_t)im->not_preferred * 100 >
           (int64_t)percentage * im->preferred;
}

int plan_rebalance_leaders(const struct meta_image *img, int32_t percentage,
                           struct plan_records *out, size_t *n_out)
{
    struct plan_imbalance ims[META_BROKERS_MAX];
    size_t n_ims = 0;
    plan_imbalance_compute(img, ims, META_BROKERS_MAX, &n_ims);
    size_t n0 = out->n;
    bool more0 = out->more;
    *n_out = 0;
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *t = &img->topics[ti];
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct meta_partition *p = &t->partitions[pi];
            if (p->replicas.n == 0 || p->leader == p->replicas.ids[0] ||
                !valid_leader(img, p, p->replicas.ids[0])) {
                continue;
            }
            const struct plan_imbalance *im = NULL;
            for (size_t k = 0; k < n_ims; k++) {
                if (ims[k].broker == p->replicas.ids[0]) {
                    im = &ims[k];
                }
            }
            if (im == NULL || !plan_imbalance_exceeds(im, percentage)) {
                continue;
            }
            int16_t error;
            char rule[PLAN_RULE_BYTES];
            preferred_rule(p, p->replicas.ids[0], rule);
            size_t k = strlen(rule);
            snprintf(rule + k, sizeof rule - k, " (it led %d of the %d "
                     "partitions it prefers)",
                     (int)(im->preferred - im->not_preferred),
                     (int)im->preferred);
            int rv = push_change(t, p, NULL, p->replicas.ids[0], rule, out,
                                 &error);
            if (rv != RC_OK) {
                *n_out = 0;
                return plan_undo_on_error(out, rv, n0, more0);
            }
            if (error != KAFKA_ERROR_NONE) {
                return RC_OK; /* full: the next check goes on */
            }
            (*n_out)++;
        }
    }
    return RC_OK;
}
