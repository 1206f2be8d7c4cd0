/* CreatePartitions planning (controller/plan_create_partitions.h). Pure
 * and deterministic; loop thread of the active controller. */
#include "controller/plan_create_partitions.h"
#include "controller/plan_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

static const char *plan_partitions_name_cb(const void *arg, size_t i)
{
    const struct plan_partitions_req *topics = arg;
    return topics[i].name;
}

static int16_t fail(struct plan_partitions_result *res, int16_t error,
                    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int16_t fail(struct plan_partitions_result *res, int16_t error,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    res->error = error;
    return error;
}

static bool broker_active(const struct meta_image *img, int32_t id)
{
    const struct meta_broker *b = meta_image_broker(img, id);
    return b != NULL && !b->fenced && !b->in_controlled_shutdown;
}

/* Checks one given assignment (Kafka's validateManualPartitionAssignment)
 * and fills the new partition's replicas and ISR. */
static int16_t check_assignment(const struct meta_image *img,
                                const struct plan_assignment *a,
                                int32_t rf, int32_t partition,
                                struct meta_replica_set *replicas,
                                struct meta_replica_set *isr,
                                struct plan_partitions_result *res)
{
    int16_t bad = KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT;
    if (a->n == 0) {
        return fail(res, bad, "The manual partition assignment includes "
                    "an empty replica list.");
    }
    if (a->n > META_REPLICAS_MAX) {
        return fail(res, bad, "The manual partition assignment includes "
                    "a partition with %zu replica(s), but this is not "
                    "consistent with previous partitions, which have %d "
                    "replica(s).", a->n, rf);
    }
    replicas->n = 0;
    isr->n = 0;
    for (size_t i = 0; i < a->n; i++) {
        int32_t id = a->broker_ids[i];
        if (meta_image_broker(img, id) == NULL) {
            return fail(res, bad, "The manual partition assignment "
                        "includes broker %d, but no such broker is "
                        "registered.", id);
        }
        for (size_t j = 0; j < i; j++) {
            if (a->broker_ids[j] == id) {
                return fail(res, bad, "The manual partition assignment "
                            "includes the broker %d more than once.", id);
            }
        }
        replicas->ids[replicas->n++] = id;
        if (broker_active(img, id)) {
            isr->ids[isr->n++] = id;
        }
    }
    if ((int32_t)a->n != rf) {
        return fail(res, bad, "The manual partition assignment includes "
                    "a partition with %zu replica(s), but this is not "
                    "consistent with previous partitions, which have %d "
                    "replica(s).", a->n, rf);
    }
    if (isr->n == 0) {
        return fail(res, bad, "All brokers specified in the manual "
                    "partition assignment for partition %d are fenced or "
                    "in controlled shutdown.", partition);
    }
    return KAFKA_ERROR_NONE;
}

static int16_t check_topic(const struct meta_image *img,
                           const struct plan_partitions_req *t,
                           const struct meta_topic **topic_out,
                           struct plan_partitions_result *res)
{
    const struct meta_topic *mt =
        t->name != NULL ? meta_image_topic(img, t->name) : NULL;
    if (mt == NULL) {
        return fail(res, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                    "This server does not host this topic-partition.");
    }
    if (strcmp(mt->name, PLAN_OFFSETS_TOPIC) == 0) {
        return fail(res, KAFKA_ERROR_POLICY_VIOLATION,
                    "The partition count of %s is fixed: group ids map "
                    "to its partitions by hash.", PLAN_OFFSETS_TOPIC);
    }
    int32_t have = mt->n_partitions;
    if (t->count == have) {
        return fail(res, KAFKA_ERROR_INVALID_PARTITIONS,
                    "Topic already has %d partition(s).", have);
    }
    if (t->count < have) {
        return fail(res, KAFKA_ERROR_INVALID_PARTITIONS,
                    "The topic %s currently has %d partition(s); %d would "
                    "not be an increase.", mt->name, have, t->count);
    }
    if (t->count > META_PARTITIONS_MAX) {
        return fail(res, KAFKA_ERROR_INVALID_PARTITIONS,
                    "A topic has at most %d partitions.",
                    META_PARTITIONS_MAX);
    }
    int32_t additional = t->count - have;
    if (t->assignments != NULL && t->n_assignments != (size_t)additional) {
        return fail(res, KAFKA_ERROR_INVALID_REPLICA_ASSIGNMENT,
                    "Attempted to add %d additional partition(s), but only "
                    "%zu assignment(s) were specified.", additional,
                    t->n_assignments);
    }
    if (have == 0) {
        return fail(res, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                    "Invalid state: topic %s appears to have no "
                    "partitions.", mt->name);
    }
    *topic_out = mt;
    return KAFKA_ERROR_NONE;
}

/* Where partition 0's first replica sits among the eligible brokers (0
 * when it is not one of them). */
static size_t placement_start(const struct meta_topic *mt,
                              const int32_t *eligible, size_t n_eligible)
{
    int32_t first = mt->partitions[0].replicas.ids[0];
    for (size_t i = 0; i < n_eligible; i++) {
        if (eligible[i] == first) {
            return i;
        }
    }
    return 0;
}

/* Builds the new partitions' records in recs (room for count - current)
 * and checks them; *n_recs counts them. */
static int16_t plan_topic(const struct meta_image *img,
                          const struct plan_partitions_req *t,
                          const struct meta_topic *mt,
                          const int32_t *eligible, size_t n_eligible,
                          struct meta_record *recs, size_t *n_recs,
                          struct plan_partitions_result *res)
{
    int32_t rf = mt->partitions[0].replicas.n;
    size_t start = placement_start(mt, eligible, n_eligible);
    if (t->assignments == NULL && (size_t)rf > n_eligible) {
        return fail(res, KAFKA_ERROR_INVALID_REPLICATION_FACTOR,
                    "Unable to replicate the partition %d time(s): The "
                    "target replication factor of %d cannot be reached "
                    "because only %zu broker(s) are registered.", rf, rf,
                    n_eligible);
    }
    *n_recs = 0;
    for (int32_t p = mt->n_partitions; p < t->count; p++) {
        struct meta_record *rec = &recs[*n_recs];
        memset(rec, 0, sizeof *rec);
        rec->type = META_REC_PARTITION;
        struct meta_rec_partition *pr = &rec->u.partition;
        pr->topic_id = mt->id;
        pr->partition = p;
        if (t->assignments != NULL) {
            size_t i = (size_t)(p - mt->n_partitions);
            int16_t e = check_assignment(img, &t->assignments[i], rf, p,
                                         &pr->replicas, &pr->isr, res);
            if (e != KAFKA_ERROR_NONE) {
                return e;
            }
        } else {
            pr->replicas.n = rf;
            for (int32_t k = 0; k < rf; k++) {
                size_t at = (start + (size_t)p + (size_t)k) % n_eligible;
                pr->replicas.ids[k] = eligible[at];
            }
            pr->isr = pr->replicas;
        }
        pr->leader = pr->isr.ids[0];
        (*n_recs)++;
    }
    return KAFKA_ERROR_NONE;
}

int plan_create_partitions(const struct meta_image *img,
                           const struct plan_partitions_req *topics,
                           size_t n_topics, bool validate_only,
                           struct plan_records *out,
                           struct plan_partitions_result *results)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    bool *dup;
    int rv = plan_mark_duplicates(n_topics, topics, plan_partitions_name_cb,
                                  &dup);
    if (rv != RC_OK) {
        return rv;
    }
    struct meta_record *recs = NULL;
    int32_t eligible[META_BROKERS_MAX];
    size_t n_eligible = plan_eligible_brokers(img, eligible);
    size_t planned = out->n;
    size_t records_max = out->n + plan_room(out);
    for (size_t i = 0; rv == RC_OK && i < n_topics; i++) {
        const struct plan_partitions_req *t = &topics[i];
        struct plan_partitions_result *res = &results[i];
        *res = (struct plan_partitions_result){.error = KAFKA_ERROR_NONE};
        const struct meta_topic *mt = NULL;
        if (dup[i]) {
            (void)fail(res, KAFKA_ERROR_INVALID_REQUEST,
                       "Duplicate topic name.");
            continue;
        }
        if (check_topic(img, t, &mt, res) != KAFKA_ERROR_NONE) {
            continue;
        }
        size_t need = (size_t)(t->count - mt->n_partitions);
        if (records_max - planned < need) {
            (void)fail(res, KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED,
                       "Too many new partitions in one request; retry.");
            continue;
        }
        free(recs);
        recs = calloc(need, sizeof *recs);
        if (recs == NULL) {
            rv = RC_NOMEM;
            break;
        }
        size_t n_recs = 0;
        if (plan_topic(img, t, mt, eligible, n_eligible, recs, &n_recs,
                       res) != KAFKA_ERROR_NONE) {
            continue;
        }
        ASSERT(n_recs == need);
        planned += need;
        for (size_t k = 0; !validate_only && rv == RC_OK && k < n_recs;
             k++) {
            rv = plan_records_push(out, &recs[k]);
        }
    }
    free(recs);
    free(dup);
    return plan_undo_on_error(out, rv, n0, more0);
}
