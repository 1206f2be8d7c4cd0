/* ElectLeaders on the active controller (controller/controller_internal.h):
 * every named partition (or, for Kafka's null list, every partition) is
 * planned by plan_elect_partition() (controller/plan_elect.h) against the
 * image, the changes proposed as one entry, and the per-partition results
 * answered once it commits. More elections than one entry holds
 * (META_BATCH_RECORDS_MAX) go on in further entries, the request queued
 * again after each commit, and the answer goes out after the last: Kafka
 * elects them all too. Also the periodic preferred-leader rebalance of
 * auto.leader.rebalance.enable. Loop thread. */
#include "controller/controller_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_elect.h"

/* The answer, built while planning: protobuf structs over arrays owned
 * here. */
struct elect_answer {
    Cairn__ElectLeadersResponse resp;
    Cairn__ElectLeadersTopicResult *topics;
    Cairn__ElectLeadersTopicResult **topic_ptrs;
    Cairn__ElectLeadersPartitionResult *parts;
    Cairn__ElectLeadersPartitionResult **part_ptrs;
    size_t n_parts;
    bool no_memory; /* a topic name could not be copied */
    bool proposed;  /* the last pass proposed elections */
};

void handlers_elect_free(struct elect_answer *a)
{
    if (a == NULL) {
        return;
    }
    for (size_t i = 0; i < a->resp.n_topics; i++) {
        free(a->topics[i].topic);
    }
    free(a->topics);
    free(a->topic_ptrs);
    free(a->parts);
    free(a->part_ptrs);
    free(a);
}

static struct elect_answer *answer_new(size_t n_topics, size_t n_parts)
{
    struct elect_answer *a = calloc(1, sizeof *a);
    if (a == NULL) {
        return NULL;
    }
    a->topics = calloc(n_topics + 1, sizeof *a->topics);
    a->topic_ptrs = calloc(n_topics + 1, sizeof *a->topic_ptrs);
    a->parts = calloc(n_parts + 1, sizeof *a->parts);
    a->part_ptrs = calloc(n_parts + 1, sizeof *a->part_ptrs);
    if (a->topics == NULL || a->topic_ptrs == NULL || a->parts == NULL ||
        a->part_ptrs == NULL) {
        handlers_elect_free(a);
        return NULL;
    }
    cairn__elect_leaders_response__init(&a->resp);
    a->resp.topics = a->topic_ptrs;
    return a;
}

/* Opens the answer's next topic (its partitions follow). The name is
 * copied: the answer may outlive the image's topics array. */
static Cairn__ElectLeadersTopicResult *answer_topic(struct elect_answer *a,
                                                    const char *name)
{
    Cairn__ElectLeadersTopicResult *t = &a->topics[a->resp.n_topics];
    cairn__elect_leaders_topic_result__init(t);
    t->topic = strdup(name != NULL ? name : "");
    a->no_memory |= t->topic == NULL;
    t->partitions = &a->part_ptrs[a->n_parts];
    a->topic_ptrs[a->resp.n_topics++] = t;
    return t;
}

static void answer_partition(struct elect_answer *a,
                             Cairn__ElectLeadersTopicResult *t,
                             int32_t partition, int16_t error)
{
    Cairn__ElectLeadersPartitionResult *p = &a->parts[a->n_parts];
    cairn__elect_leaders_partition_result__init(p);
    p->has_partition = p->has_error_code = true;
    p->partition = partition;
    p->error_code = error;
    a->part_ptrs[a->n_parts++] = p;
    t->n_partitions++;
}

/* One request entry, (topic i, partition k), for the duplicate check. */
struct entry {
    const char *topic;
    int32_t partition;
    size_t i;
    size_t k;
};

static int entry_cmp(const void *x, const void *y)
{
    const struct entry *a = x;
    const struct entry *b = y;
    int c = strcmp(a->topic, b->topic);
    if (c != 0) {
        return c;
    }
    return (a->partition > b->partition) - (a->partition < b->partition);
}

/* dup[j] marks entries whose (topic, partition) the request names more
 * than once; j counts entries in request order. false on no memory. */
static bool find_duplicates(const Cairn__ElectLeadersRequest *r, bool *dup,
                            size_t n)
{
    struct entry *e = calloc(n + 1, sizeof *e);
    if (e == NULL) {
        return false;
    }
    size_t j = 0;
    for (size_t i = 0; i < r->n_topics; i++) {
        const Cairn__ElectLeadersTopic *t = r->topics[i];
        for (size_t k = 0; k < t->n_partitions; k++, j++) {
            e[j] = (struct entry){t->topic != NULL ? t->topic : "",
                                  t->partitions[k], i, j};
        }
    }
    qsort(e, n, sizeof *e, entry_cmp);
    for (size_t x = 0; x + 1 < n; x++) {
        if (entry_cmp(&e[x], &e[x + 1]) == 0) {
            dup[e[x].k] = dup[e[x + 1].k] = true;
        }
    }
    free(e);
    return true;
}

static int plan_listed(struct controller *c, const Cairn__ElectLeadersRequest *r,
                       int8_t type, struct elect_answer *a,
                       struct plan_records *recs, const bool *dup)
{
    size_t j = 0;
    for (size_t i = 0; i < r->n_topics; i++) {
        const Cairn__ElectLeadersTopic *rt = r->topics[i];
        Cairn__ElectLeadersTopicResult *t = answer_topic(a, rt->topic);
        for (size_t k = 0; k < rt->n_partitions; k++, j++) {
            int16_t error = KAFKA_ERROR_INVALID_REQUEST;
            if (!dup[j]) {
                int rv = plan_elect_partition(&c->fsm.image, rt->topic,
                                              rt->partitions[k], type, recs,
                                              &error);
                if (rv != RC_OK) {
                    return rv;
                }
            }
            answer_partition(a, t, rt->partitions[k], error);
        }
    }
    return RC_OK;
}

/* Kafka's null list: every partition, answering only those that needed
 * an election (ReplicationControlManager.electLeaders). */
static int plan_all(struct controller *c, int8_t type,
                    struct elect_answer *a, struct plan_records *recs)
{
    const struct meta_image *img = &c->fsm.image;
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct meta_topic *mt = &img->topics[ti];
        Cairn__ElectLeadersTopicResult *t = answer_topic(a, mt->name);
        for (int32_t p = 0; p < mt->n_partitions; p++) {
            int16_t error;
            int rv = plan_elect_partition(img, mt->name, p, type, recs,
                                          &error);
            if (rv != RC_OK) {
                return rv;
            }
            if (error != KAFKA_ERROR_ELECTION_NOT_NEEDED) {
                answer_partition(a, t, p, error);
            }
        }
    }
    return RC_OK;
}

/* The partitions the last entry had no room for, planned again (each
 * pass elects a full entry's worth, so passes end). */
static int plan_throttled(struct controller *c, int8_t type,
                          struct elect_answer *a, struct plan_records *recs)
{
    for (size_t i = 0; i < a->resp.n_topics; i++) {
        Cairn__ElectLeadersTopicResult *t = a->topic_ptrs[i];
        for (size_t k = 0; k < t->n_partitions; k++) {
            Cairn__ElectLeadersPartitionResult *p = t->partitions[k];
            if (p->error_code != KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED) {
                continue;
            }
            int16_t error;
            int rv = plan_elect_partition(&c->fsm.image, t->topic,
                                          p->partition, type, recs, &error);
            if (rv != RC_OK) {
                return rv;
            }
            p->error_code = error;
        }
    }
    return RC_OK;
}

static bool propose(struct controller *c, struct ctl_op *op, int rv,
                    struct plan_records *recs)
{
    if (rv == RC_OK && op->elect->no_memory) {
        plan_records_free(recs);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    op->elect->proposed = rv == RC_OK && recs->n > 0;
    return handlers_propose_plan(c, op, rv, recs,
                                 handlers_elect_leaders_reply);
}

bool handlers_elect_leaders(struct controller *c, struct ctl_op *op)
{
    const Cairn__ElectLeadersRequest *r = op->req->elect_leaders;
    int32_t type = r->election_type;
    if (op->elect != NULL) { /* queued again: the partitions left */
        struct plan_records recs;
        plan_records_init(&recs);
        int rv = plan_throttled(c, (int8_t)type, op->elect, &recs);
        return propose(c, op, rv, &recs);
    }
    if (type != PLAN_ELECTION_PREFERRED && type != PLAN_ELECTION_UNCLEAN) {
        controller_reply_error(c, op, KAFKA_ERROR_INVALID_REQUEST,
                               "unknown election type");
        return false;
    }
    const struct meta_image *img = &c->fsm.image;
    size_t n_topics = r->all_partitions ? img->n_topics : r->n_topics;
    size_t n_parts = 0;
    if (r->all_partitions) {
        for (size_t i = 0; i < img->n_topics; i++) {
            n_parts += (size_t)img->topics[i].n_partitions;
        }
    } else {
        for (size_t i = 0; i < r->n_topics; i++) {
            n_parts += r->topics[i]->n_partitions;
        }
    }
    bool *dup = calloc(n_parts + 1, sizeof *dup);
    op->elect = answer_new(n_topics, n_parts);
    if (dup == NULL || op->elect == NULL ||
        (!r->all_partitions && !find_duplicates(r, dup, n_parts))) {
        free(dup);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = r->all_partitions
                 ? plan_all(c, (int8_t)type, op->elect, &recs)
                 : plan_listed(c, r, (int8_t)type, op->elect, &recs, dup);
    free(dup);
    return propose(c, op, rv, &recs);
}

static bool any_throttled(const struct elect_answer *a)
{
    for (size_t i = 0; i < a->n_parts; i++) {
        if (a->parts[i].error_code == KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED) {
            return true;
        }
    }
    return false;
}

void handlers_elect_leaders_reply(struct controller *c, struct ctl_op *op)
{
    if (op->elect->proposed && any_throttled(op->elect)) {
        /* The entry committed; the request goes on with a new op (this
         * one is freed once the commit is handled), answered after its
         * last entry. */
        struct ctl_op *next = calloc(1, sizeof *next);
        if (next != NULL) {
            next->conn = op->conn;
            next->correlation_id = op->correlation_id;
            next->req = op->req;
            next->elect = op->elect;
            op->conn = NULL;
            op->req = NULL;
            op->elect = NULL;
            controller_requeue(c, next);
            return;
        }
    }
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_ELECT_LEADERS;
    resp.elect_leaders = &op->elect->resp;
    controller_reply(c, op, &resp);
}

bool handlers_rebalance(struct controller *c, struct ctl_op *op)
{
    struct plan_records recs;
    plan_records_init(&recs);
    size_t n = 0;
    int rv = plan_rebalance_leaders(&c->fsm.image,
                                    c->cfg.leader_imbalance_percentage,
                                    &recs, &n);
    if (rv != RC_OK || recs.n == 0) {
        plan_records_free(&recs);
        return false;
    }
    if (recs.more) {
        c->next_rebalance_ms = controller_now_ms(c); /* go on at once */
    }
    TRACE_INFO(c->tracer, "leader imbalance: restoring %zu preferred "
               "leaders", n);
    rv = controller_propose(c, op, &recs);
    plan_records_free(&recs);
    return rv == RC_OK;
}
